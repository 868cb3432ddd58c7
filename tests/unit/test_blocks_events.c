/* Block table, BLOCKS and EVENTS codecs: round trips and validation. */
#include <string.h>

#include "check.h"
#include "trace.h"

static struct cgt_record record_of(const struct cgt_buf *b, unsigned type)
{
	struct cgt_record rec = { type, b->data, b->len, 0, 0, "test", 0 };
	return rec;
}

/* insn 0: read, cond; insn 1: modify, guarded write, exit; insn 2: indirect */
static const struct cgt_insn insns[] = { { 0x1000, 4 }, { 0x1004, 3 }, { 0x2000, 2 } };
static const struct cgt_op ops[] = {
	{ CGT_OP_INSN, 0, 0, 0 },	   { CGT_OP_READ, 0, 0, 8 },
	{ CGT_OP_COND_INV, 0, 0, 0 },	   { CGT_OP_INSN, 0, 1, 0 },
	{ CGT_OP_MODIFY, 0, 1, 4 },	   { CGT_OP_WRITE_GUARDED, 0, 1, 32 },
	{ CGT_OP_EXIT, 0, 1, 0 },	   { CGT_OP_INSN, 0, 2, 0 },
	{ CGT_OP_INDIRECT, 0, 2, 0 },
};

static void table_derives_exits_values_and_counts(void)
{
	struct cgt_block_table t = { 0 };
	const char *why;
	CHECK(cgt_block_table_add(&t, insns, 3, ops, 9, NULL, 5, &why) == 0);
	const struct cgt_block *b = t.blocks[0];
	CHECK_EQ(b->n_exits, 2);
	CHECK_EQ(b->exit_ops[0], 2);
	CHECK_EQ(b->exit_ops[1], 6);
	CHECK_EQ(b->n_values, 4);
	CHECK_EQ(b->n_guarded, 1);
	CHECK_EQ(b->map_epoch, 5);
	/* left by the first exit: one instruction, one read, one branch */
	CHECK_EQ(b->prefix_counts[1].insns, 1);
	CHECK_EQ(b->prefix_counts[1].reads, 1);
	CHECK_EQ(b->prefix_counts[1].conds, 1);
	CHECK_EQ(b->prefix_counts[1].modifies, 0);
	/* ran to the end */
	CHECK_EQ(b->prefix_counts[0].insns, 3);
	CHECK_EQ(b->prefix_counts[0].modifies, 1);
	CHECK_EQ(b->prefix_counts[0].indirects, 1);
	cgt_block_table_free(&t);
}

static void malformed_blocks_are_refused(void)
{
	struct cgt_block_table t = { 0 };
	const char *why;
	struct cgt_op bad[9];

	memcpy(bad, ops, sizeof(ops));
	bad[1].insn = 1;	/* refers to an instruction not begun */
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, NULL, 0, &why) < 0);
	memcpy(bad, ops, sizeof(ops));
	bad[1].size = 0;
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, NULL, 0, &why) < 0);
	memcpy(bad, ops, sizeof(ops));
	bad[4].kind = CGT_OP_INDIRECT;	/* not last */
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, NULL, 0, &why) < 0);
	memcpy(bad, ops, sizeof(ops));
	bad[3].kind = 42;
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, NULL, 0, &why) < 0);
	CHECK(cgt_block_table_add(&t, insns, 3, ops, 2, NULL, 0, &why) < 0);	/* too few ops */
	CHECK_EQ(t.n, 0);
	cgt_block_table_free(&t);
}

static void blocks_round_trip(void)
{
	struct cgt_block_table a = { 0 }, b = { 0 };
	struct cgt_buf buf = { 0 };
	struct cgt_error e;
	const char *why;

	CHECK(cgt_block_table_add(&a, insns, 3, ops, 9, NULL, 0, &why) == 0);
	CHECK(cgt_block_table_add(&a, insns, 2, ops, 7, NULL, 0, &why) == 0);
	CHECK(cgt_blocks_encode(&buf, a.blocks[0]) == 0);
	CHECK(cgt_blocks_encode(&buf, a.blocks[1]) == 0);
	struct cgt_record rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&b, &rec, CGT_TRACE_VERSION, 7, &e) == 0);
	CHECK_EQ(b.n, 2);
	for (uint32_t i = 0; i < 2 && b.n == 2; i++) {
		CHECK_EQ(b.blocks[i]->n_insns, a.blocks[i]->n_insns);
		CHECK_EQ(b.blocks[i]->n_ops, a.blocks[i]->n_ops);
		/* Field by field: memcmp would compare the structs' padding. */
		for (uint32_t k = 0; k < a.blocks[i]->n_insns && k < b.blocks[i]->n_insns; k++) {
			CHECK_EQ(b.blocks[i]->insns[k].addr, a.blocks[i]->insns[k].addr);
			CHECK_EQ(b.blocks[i]->insns[k].len, a.blocks[i]->insns[k].len);
		}
		for (uint32_t k = 0; k < a.blocks[i]->n_ops && k < b.blocks[i]->n_ops; k++) {
			CHECK_EQ(b.blocks[i]->ops[k].kind, a.blocks[i]->ops[k].kind);
			CHECK_EQ(b.blocks[i]->ops[k].insn, a.blocks[i]->ops[k].insn);
			CHECK_EQ(b.blocks[i]->ops[k].size, a.blocks[i]->ops[k].size);
		}
		CHECK_EQ(b.blocks[i]->map_epoch, 7);
	}
	/* decoding the same ids again is refused: ids are consecutive */
	CHECK(cgt_blocks_decode(&b, &rec, CGT_TRACE_VERSION, 7, &e) < 0);
	CHECK(strstr(e.msg, "block id 2") != NULL);
	cgt_buf_free(&buf);
	cgt_block_table_free(&a);
	cgt_block_table_free(&b);
}

/* A block cut short by a fault (version 4) names the block it is cut
   from and where the fault cut it, and is a prefix of that block. */
static void cut_blocks_round_trip(void)
{
	struct cgt_block_table a = { 0 }, b = { 0 };
	struct cgt_buf buf = { 0 };
	struct cgt_error e;
	const char *why;

	CHECK(cgt_block_table_add(&a, insns, 3, ops, 9, NULL, 0, &why) == 0);
	/* ops 0-5: up to the second instruction's read-modify-write */
	CHECK(cgt_block_table_add(&a, insns, 2, ops, 6, NULL, 0, &why) == 0);
	CHECK(cgt_block_mark_cut(&a, 1, 0, CGT_CUT_AT_ACCESS) == NULL);
	CHECK(cgt_blocks_encode(&buf, a.blocks[0]) == 0);
	CHECK(cgt_blocks_encode(&buf, a.blocks[1]) == 0);
	struct cgt_record rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&b, &rec, CGT_TRACE_VERSION, 0, &e) == 0);
	CHECK_EQ(b.n, 2);
	if (b.n == 2) {
		CHECK(b.blocks[0]->cut_from == NULL);
		CHECK(b.blocks[1]->cut_from == b.blocks[0]);
		CHECK_EQ(b.blocks[1]->cut_kind, CGT_CUT_AT_ACCESS);
	}
	cgt_block_table_free(&b);

	/* not a prefix of the block it names; faulted at an access without
	   one; not placed, with more than the entry; a kind of no meaning */
	struct cgt_op other[9];
	memcpy(other, ops, sizeof(ops));
	other[1].size = 4;
	CHECK(cgt_block_table_add(&a, insns, 2, other, 6, NULL, 0, &why) == 0);
	CHECK(strstr(cgt_block_mark_cut(&a, 2, 0, CGT_CUT_AT_ACCESS), "ops are those") != NULL);
	CHECK(cgt_block_table_add(&a, insns, 2, ops, 4, NULL, 0, &why) == 0);
	CHECK(strstr(cgt_block_mark_cut(&a, 3, 0, CGT_CUT_AT_ACCESS), "ends with it") != NULL);
	CHECK(strstr(cgt_block_mark_cut(&a, 3, 0, CGT_CUT_UNPLACED), "only its entry") != NULL);
	CHECK(strstr(cgt_block_mark_cut(&a, 3, 0, 0), "says where") != NULL);
	CHECK(cgt_block_table_add(&a, insns, 1, ops, 1, NULL, 0, &why) == 0);
	CHECK(cgt_block_mark_cut(&a, 4, 0, CGT_CUT_UNPLACED) == NULL);
	/* and in a record: a block cut from itself or one not yet defined */
	buf.len = 0;
	CHECK(cgt_blocks_encode(&buf, a.blocks[0]) == 0);
	a.blocks[1]->cut_from = a.blocks[1];
	CHECK(cgt_blocks_encode(&buf, a.blocks[1]) == 0);
	rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&b, &rec, CGT_TRACE_VERSION, 0, &e) < 0);
	CHECK(strstr(e.msg, "expected the block it is cut from") != NULL);
	cgt_buf_free(&buf);
	cgt_block_table_free(&a);
	cgt_block_table_free(&b);
}

/* Jumps (version 3): the block's end and each exit, destinations coded
   from the address after the exit's instruction, and back; a version 2
   record has none; a bad kind is refused with where it is. */
static void jumps_round_trip(void)
{
	/* the end: a return; exit 1 (insn 0): a branch back; exit 2 (insn 1):
	   a call far ahead */
	const struct cgt_jump jumps[3] = { { 0, CGT_JUMP_RETURN, 0 },
					   { 0xf00, CGT_JUMP_BORING, 1 },
					   { 0x7fff00001000, CGT_JUMP_CALL, 1 } };
	struct cgt_block_table a = { 0 }, b = { 0 }, old = { 0 };
	struct cgt_buf buf = { 0 }, plain = { 0 };
	struct cgt_error e;
	const char *why;

	CHECK(cgt_block_table_add(&a, insns, 3, ops, 9, jumps, 0, &why) == 0);
	CHECK(cgt_block_table_add(&a, insns, 3, ops, 9, NULL, 0, &why) == 0);
	CHECK(cgt_blocks_encode(&buf, a.blocks[0]) == 0);
	CHECK(cgt_blocks_encode(&buf, a.blocks[1]) == 0);
	struct cgt_record rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&b, &rec, CGT_TRACE_VERSION, 0, &e) == 0);
	CHECK_EQ(b.n, 2);
	for (uint32_t k = 0; b.n == 2 && b.blocks[0]->jumps != NULL && k < 3; k++) {
		CHECK_EQ(b.blocks[0]->jumps[k].kind, jumps[k].kind);
		CHECK_EQ(b.blocks[0]->jumps[k].dst_known, jumps[k].dst_known);
		CHECK_EQ(b.blocks[0]->jumps[k].dst, jumps[k].dst);
	}
	CHECK(b.n == 2 && b.blocks[0]->jumps != NULL && b.blocks[1]->jumps == NULL);

	/* version 2: no has_jumps byte (nor version 4's cut field) */
	CHECK(cgt_block_table_add(&old, insns, 3, ops, 9, NULL, 0, &why) == 0);
	CHECK(cgt_blocks_encode(&plain, old.blocks[0]) == 0);
	cgt_block_table_free(&old);
	plain.len -= 2;
	rec = record_of(&plain, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&old, &rec, 2, 0, &e) == 0);
	CHECK(old.n == 1 && old.blocks[0]->jumps == NULL);
	cgt_block_table_free(&old);
	CHECK(cgt_blocks_decode(&old, &rec, 3, 0, &e) < 0);	/* read as 3: cut short */

	/* a kind beyond 5, in a table and in a record (the byte after
	   has_jumps: the end's kind) */
	struct cgt_jump bad[3];
	memcpy(bad, jumps, sizeof(bad));
	bad[1].kind = CGT_JUMP_KIND_COUNT;
	CHECK(cgt_block_table_add(&a, insns, 3, ops, 9, bad, 0, &why) < 0);
	buf.len = 0;
	CHECK(cgt_blocks_encode(&buf, a.blocks[0]) == 0);
	CHECK_EQ(buf.data[plain.len], 1);
	buf.data[plain.len + 1] = 6;
	cgt_block_table_free(&b);
	rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&b, &rec, 3, 0, &e) < 0);
	CHECK(strstr(e.msg, "BLOCKS record: expected a jump kind 0-5") != NULL);
	cgt_buf_free(&buf);
	cgt_buf_free(&plain);
	cgt_block_table_free(&a);
	cgt_block_table_free(&b);
	cgt_block_table_free(&old);
}

/* Stack pointers (version 3): a stream after the executions, read only
   by who asks, in order; the executions decode the same either way. */
static void stack_pointers_round_trip(void)
{
	const struct cgt_insn two[] = { { 0x1000, 4 }, { 0x1004, 3 } };
	const struct cgt_op with_sp[] = { { CGT_OP_INSN, 0, 0, 0 }, { CGT_OP_SP, 0, 0, 0 },
					  { CGT_OP_READ, 0, 0, 8 }, { CGT_OP_INSN, 0, 1, 0 } };
	/* a call depth that goes down and back up, and a value each time */
	const uint64_t sps[] = { 0x7ff0, 0x7fe8, 0x7fe0, 0x7fe8, 0x7ff0, 0x7ff0, 0x1000 };
	const unsigned n = sizeof(sps) / sizeof(sps[0]);
	struct cgt_block_table enc = { 0 }, dec = { 0 };
	struct cgt_events_state state = { .version = CGT_TRACE_VERSION };
	struct cgt_buf buf = { 0 };
	struct cgt_events_cursor c;
	struct cgt_exec x = { 0 };
	struct cgt_error e;
	uint64_t scratch[2], sp = 0;
	const char *why;

	CHECK(cgt_block_table_add(&enc, two, 2, with_sp, 4, NULL, 0, &why) == 0);
	CHECK(cgt_block_table_add(&dec, two, 2, with_sp, 4, NULL, 0, &why) == 0);
	CHECK(enc.n == 1 && enc.blocks[0]->has_sp && enc.blocks[0]->n_values == 1);
	CHECK(cgt_events_state_sync(&state, &dec) == 0);
	cgt_events_state_reset(&state);
	CHECK(cgt_events_begin(&buf, &enc, 1) == 0);
	for (unsigned k = 0; k < n; k++) {
		uint64_t addr = 0x9000 + 8 * k;
		CHECK(cgt_events_encode(&buf, &enc, enc.blocks[0], 0, &addr) == 0);
		CHECK(cgt_events_encode_sp(&enc, enc.blocks[0], sps[k]) == 0);
	}
	CHECK(cgt_events_finish(&buf, &enc) == 0);
	struct cgt_record rec = record_of(&buf, CGT_REC_EVENTS);
	for (int read_sp = 1; read_sp >= 0; read_sp--) {
		cgt_events_state_reset(&state);
		CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
		for (unsigned k = 0; k < n; k++) {
			CHECK(cgt_events_next(&c, &x, &e) == 1);
			CHECK_EQ(x.values[0], 0x9000 + 8 * k);
			if (read_sp) {
				CHECK(cgt_events_sp(&c, &x, &sp, &e) == 0);
				CHECK_EQ(sp, sps[k]);
			}
		}
		CHECK(cgt_events_next(&c, &x, &e) == 0);
	}
	/* the stream cut short */
	rec.len--;
	cgt_events_state_reset(&state);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	for (unsigned k = 0; k < n && cgt_events_next(&c, &x, &e) == 1; k++)
		if (cgt_events_sp(&c, &x, &sp, &e) < 0)
			break;
	CHECK(strstr(e.msg, "EVENTS record: expected a stack pointer") != NULL);
	/* an executions' length beyond the record */
	buf.data[1] = 0xff;
	rec.len++;
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) < 0);
	CHECK(strstr(e.msg, "expected the length of the executions, within the record") != NULL);
	/* a block with the SP op in a version 2 trace: refused */
	struct cgt_block_table old = { 0 };
	buf.len = 0;
	CHECK(cgt_blocks_encode(&buf, enc.blocks[0]) == 0);
	buf.len--;	/* version 2: no has_jumps byte (nor version 4's cut field) */
	rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&old, &rec, 2, 0, &e) < 0);
	CHECK(strstr(e.msg, "the stack pointer came with version 3") != NULL);
	cgt_block_table_free(&old);
	cgt_buf_free(&buf);
	cgt_block_table_free(&enc);
	cgt_block_table_free(&dec);
	cgt_events_state_free(&state);
}

/* REQUEST and SIGNAL records: round trip, and a bad byte refused. */
static void marks_round_trip(void)
{
	struct cgt_mark req = { CGT_MARK_REQUEST, 3, 0x43540003, 0, 0, "after-region" };
	struct cgt_mark sig = { CGT_MARK_SIGNAL_DELIVERED, 1, 0, 12, 1, NULL };
	struct cgt_mark m = { 0 };
	struct cgt_buf a = { 0 }, b = { 0 };
	struct cgt_error e;

	CHECK(cgt_mark_encode(&a, &req) == 0);
	struct cgt_record rec = record_of(&a, CGT_REC_REQUEST);
	CHECK(cgt_mark_decode(&m, &rec, &e) == 0);
	CHECK(m.kind == CGT_MARK_REQUEST && m.tid == 3 && m.code == 0x43540003);
	CHECK(m.text != NULL && strcmp(m.text, "after-region") == 0);
	CHECK(cgt_mark_encode(&b, &sig) == 0);
	rec = record_of(&b, CGT_REC_SIGNAL);
	CHECK(cgt_mark_decode(&m, &rec, &e) == 0);
	CHECK(m.kind == CGT_MARK_SIGNAL_DELIVERED && m.tid == 1 && m.signo == 12 && m.alt_stack == 1);
	b.data[b.len - 2] = 3;	/* neither delivered nor returned */
	CHECK(cgt_mark_decode(&m, &rec, &e) < 0);
	CHECK(strstr(e.msg, "SIGNAL record: expected 1 (delivered) or 2 (returned)") != NULL);
	cgt_mark_free(&m);
	cgt_buf_free(&a);
	cgt_buf_free(&b);
}

/* One execution, its values copied to out: 1, 0 at the end, negative. */
static int next_exec(struct cgt_events_cursor *c, struct cgt_exec *x, uint64_t *out,
		     struct cgt_error *e)
{
	int rc = cgt_events_next(c, x, e);
	if (rc == 1)
		memcpy(out, x->values, x->n_values * sizeof(*out));
	return rc;
}

static void events_round_trip(void)
{
	struct cgt_block_table enc = { 0 }, dec = { 0 };
	struct cgt_buf buf = { 0 };
	struct cgt_error e;
	const char *why;
	uint64_t in[9], out[9], scratch[9];

	struct cgt_events_state state = { .version = CGT_TRACE_VERSION };
	CHECK(cgt_block_table_add(&enc, insns, 3, ops, 9, NULL, 0, &why) == 0);
	CHECK(cgt_block_table_add(&dec, insns, 3, ops, 9, NULL, 0, &why) == 0);
	CHECK(cgt_events_state_sync(&state, &dec) == 0);
	cgt_events_state_reset(&state);
	CHECK(cgt_events_begin(&buf, &enc, 3) == 0);
	/* values by ordinal: read, modify, guarded write, indirect target */
	/* 1: ran to the end, guard true */
	in[0] = 0x7000; in[1] = 0x8000; in[2] = 0x9000; in[3] = 0x2000;
	CHECK(cgt_events_encode(&buf, &enc, enc.blocks[0], 0, in) == 0);
	/* 2: left by exit 2, guard false */
	in[0] = 0x7008; in[1] = 0x8004; in[2] = CGT_NO_ACCESS;
	CHECK(cgt_events_encode(&buf, &enc, enc.blocks[0], 2, in) == 0);
	/* 3: left by exit 1 */
	in[0] = 0x6000;
	CHECK(cgt_events_encode(&buf, &enc, enc.blocks[0], 1, in) == 0);

	CHECK(cgt_events_finish(&buf, &enc) == 0);
	struct cgt_record rec = record_of(&buf, CGT_REC_EVENTS);
	struct cgt_events_cursor c;
	struct cgt_exec x = { 0 };
	struct cgt_trace_counts n = { 0 };
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	CHECK_EQ(x.tid, 3);
	CHECK_EQ(x.n_ops, 9);
	CHECK_EQ(x.exit, 0);
	CHECK_EQ(out[0], 0x7000);
	CHECK_EQ(out[1], 0x8000);
	CHECK_EQ(cgt_exec_branch_taken(&x, 2), 1);	/* COND_INV, not left: taken */
	CHECK_EQ(out[2], 0x9000);
	CHECK_EQ(out[3], 0x2000);
	cgt_counts_add_exec(&n, &x);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	CHECK_EQ(x.n_ops, 7);
	CHECK_EQ(x.exit, 2);
	CHECK_EQ(out[0], 0x7008);
	CHECK_EQ(out[1], 0x8004);
	CHECK(out[2] == CGT_NO_ACCESS);
	/* the EXIT op was where it left: the last op executed */
	CHECK(x.n_ops > 0 && x.block->ops[x.n_ops - 1].kind == CGT_OP_EXIT);
	cgt_counts_add_exec(&n, &x);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	CHECK_EQ(x.n_ops, 3);
	CHECK_EQ(x.exit, 1);
	CHECK(x.n_ops > 0 && x.block->ops[x.n_ops - 1].kind == CGT_OP_COND_INV);
	CHECK_EQ(out[0], 0x6000);
	CHECK_EQ(cgt_exec_branch_taken(&x, 2), 0);	/* COND_INV left: not taken */
	cgt_counts_add_exec(&n, &x);
	CHECK(next_exec(&c, &x, out, &e) == 0);

	CHECK_EQ(n.block_execs, 3);
	CHECK_EQ(n.insns, 3 + 2 + 1);
	CHECK_EQ(n.reads, 3);
	CHECK_EQ(n.modifies, 2);
	CHECK_EQ(n.writes, 1);	/* the guarded write whose guard held */
	CHECK_EQ(n.conds, 3);
	CHECK_EQ(n.indirects, 1);
	cgt_buf_free(&buf);
	cgt_block_table_free(&enc);
	cgt_block_table_free(&dec);
	cgt_events_state_free(&state);
}

static void segments_restart_deltas_and_carry_history(void)
{
	struct cgt_block_table enc = { 0 }, dec = { 0 };
	struct cgt_buf first = { 0 }, second = { 0 };
	struct cgt_events_state state = { .version = CGT_TRACE_VERSION };
	struct cgt_error e;
	const char *why;
	uint64_t in[9] = { 0x7000, 0x8000, 0x9000, 0x2000 }, out[9], scratch[9];
	struct cgt_events_cursor c;
	struct cgt_exec x = { 0 };

	CHECK(cgt_block_table_add(&enc, insns, 3, ops, 9, NULL, 0, &why) == 0);
	CHECK(cgt_block_table_add(&dec, insns, 3, ops, 9, NULL, 0, &why) == 0);
	/* the conditional branches of each prefix, the last in bit 0: exit 1
	   is the COND_INV (not taken when left by it); ran to the end, it was
	   taken (inverted, exit not taken) */
	CHECK_EQ(enc.blocks[0]->cond_outcomes[1], 0);
	CHECK_EQ(enc.blocks[0]->cond_outcomes[0], 1);
	CHECK(cgt_events_begin(&first, &enc, 1) == 0);
	CHECK(cgt_events_encode(&first, &enc, enc.blocks[0], 0, in) == 0);
	CHECK(cgt_events_encode(&first, &enc, enc.blocks[0], 1, in) == 0);
	CHECK_EQ(enc.cond_history, 2);	/* taken, then not taken */
	CHECK(cgt_events_finish(&first, &enc) == 0);
	/* a new segment: the same values code as if never seen */
	enc.segment++;
	CHECK(cgt_events_begin(&second, &enc, 1) == 0);
	CHECK(cgt_events_encode(&second, &enc, enc.blocks[0], 0, in) == 0);
	CHECK(cgt_events_finish(&second, &enc) == 0);
	CHECK_EQ(second.len, first.len - 2);	/* the second execution's deltas: 2 bytes */

	/* A decoder that starts at the second segment reads it alone. */
	CHECK(cgt_events_state_sync(&state, &dec) == 0);
	cgt_events_state_reset(&state);
	struct cgt_record rec = record_of(&second, CGT_REC_EVENTS);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	CHECK_EQ(out[0], 0x7000);
	CHECK_EQ(out[3], 0x2000);
	/* ... and one that read the first segment resets at the second */
	rec = record_of(&first, CGT_REC_EVENTS);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	cgt_events_state_reset(&state);
	rec = record_of(&second, CGT_REC_EVENTS);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	CHECK_EQ(out[1], 0x8000);

	/* SEGMENT: the branch history, and the last Cachegrind instrumentation
	   request once there was one (absent before: the record of format 2) */
	struct cgt_buf seg = { 0 };
	struct cgt_segment_state st = { 0x8000000000000001ull, CGT_CG_INSTR_NONE }, got;
	CHECK(cgt_segment_encode(&seg, &st) == 0);
	CHECK_EQ(seg.len, 10);
	rec = record_of(&seg, CGT_REC_SEGMENT);
	CHECK(cgt_segment_decode(&got, &rec, &e) == 0);
	CHECK(got.cond_history == 0x8000000000000001ull && got.cachegrind_instr == CGT_CG_INSTR_NONE);
	seg.len = 0;
	st.cachegrind_instr = CGT_CG_INSTR_STOP;
	CHECK(cgt_segment_encode(&seg, &st) == 0);
	rec = record_of(&seg, CGT_REC_SEGMENT);
	CHECK(cgt_segment_decode(&got, &rec, &e) == 0);
	CHECK(got.cachegrind_instr == CGT_CG_INSTR_STOP);
	seg.data[seg.len - 1] = 3;	/* no such request */
	CHECK(cgt_segment_decode(&got, &rec, &e) < 0);
	cgt_buf_free(&seg);
	cgt_buf_free(&first);
	cgt_buf_free(&second);
	cgt_block_table_free(&enc);
	cgt_block_table_free(&dec);
	cgt_events_state_free(&state);
}

/* A block without guards decodes by one of three paths: every delta one
   byte, longer deltas, or (near the payload's end) bounds-checked. */
static void unguarded_values_by_every_path(void)
{
	static const struct cgt_op plain[] = {
		{ CGT_OP_INSN, 0, 0, 0 }, { CGT_OP_READ, 0, 0, 8 },   { CGT_OP_INSN, 0, 1, 0 },
		{ CGT_OP_WRITE, 0, 1, 8 }, { CGT_OP_INSN, 0, 2, 0 }, { CGT_OP_INDIRECT, 0, 2, 0 },
	};
	static const uint64_t in[][3] = {
		{ 0x10, 0x20, 0x30 },			 /* one byte each */
		{ 0x123456789, 0x20, 0x7fff00000000 },	 /* longer */
		{ 0x10, 0x7fff00000000, 0x30 },
		{ 0x123456789, 0x20, 0x7fff00000000 },	 /* near the end */
		{ 0x123456790, 0x28, 0x7fff00000008 },
	};
	const unsigned n = sizeof(in) / sizeof(in[0]);
	struct cgt_block_table enc = { 0 }, dec = { 0 };
	struct cgt_events_state state = { .version = CGT_TRACE_VERSION };
	struct cgt_buf buf = { 0 };
	struct cgt_events_cursor c;
	struct cgt_exec x = { 0 };
	struct cgt_error e;
	uint64_t scratch[3];
	const char *why;

	CHECK(cgt_block_table_add(&enc, insns, 3, plain, 6, NULL, 0, &why) == 0);
	CHECK(cgt_block_table_add(&dec, insns, 3, plain, 6, NULL, 0, &why) == 0);
	CHECK(cgt_events_state_sync(&state, &dec) == 0);
	cgt_events_state_reset(&state);
	CHECK(cgt_events_begin(&buf, &enc, 1) == 0);
	for (unsigned k = 0; k < n; k++)
		CHECK(cgt_events_encode(&buf, &enc, enc.blocks[0], 0, in[k]) == 0);
	CHECK(cgt_events_finish(&buf, &enc) == 0);
	struct cgt_record rec = record_of(&buf, CGT_REC_EVENTS);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	for (unsigned k = 0; k < n; k++) {
		CHECK(cgt_events_next(&c, &x, &e) == 1);
		CHECK_EQ(x.n_values, 3);
		for (unsigned j = 0; j < 3; j++)
			CHECK_EQ(x.values[j], in[k][j]);
	}
	CHECK(cgt_events_next(&c, &x, &e) == 0);
	cgt_buf_free(&buf);
	cgt_block_table_free(&enc);
	cgt_block_table_free(&dec);
	cgt_events_state_free(&state);
}

static void bad_events_are_refused(void)
{
	struct cgt_block_table t = { 0 };
	struct cgt_error e;
	const char *why;
	uint64_t out[9], scratch[9];
	struct cgt_events_cursor c;
	struct cgt_exec x = { 0 };
	struct cgt_events_state state = { .version = 2 };	/* hand-made payloads: version 2's layout */

	CHECK(cgt_block_table_add(&t, insns, 3, ops, 9, NULL, 0, &why) == 0);
	CHECK(cgt_events_state_sync(&state, &t) == 0);
	/* tid 0, then block 5 (undefined) */
	uint8_t undefined[] = { 0, 5 << 2 };
	struct cgt_record rec = { CGT_REC_EVENTS, undefined, sizeof(undefined), 100, 0, "t.zst", 0 };
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) < 0);
	CHECK(strstr(e.msg, "t.zst: stream offset 101") != NULL);
	/* exit 3 of a block that has 2 */
	uint8_t bad_exit[] = { 0, 3, 0 };
	rec.payload = bad_exit;
	rec.len = sizeof(bad_exit);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) < 0);
	CHECK(strstr(e.msg, "t.zst: stream offset 101 (frame at byte offset 0): EVENTS record: "
			    "expected an exit number within the block's exits") != NULL);
	/* values cut short */
	uint8_t short_values[] = { 0, 0 << 2 | 0, 0x80 };
	rec.payload = short_values;
	rec.len = sizeof(short_values);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) < 0);
	CHECK(strstr(e.msg, "t.zst: stream offset 102 (frame at byte offset 0): EVENTS record: "
			    "expected an address or target") != NULL);
	cgt_block_table_free(&t);
	cgt_events_state_free(&state);
}

/* Appends a block of one instruction and n_exits exits to a BLOCKS
   payload. */
static void put_exit_block(struct cgt_buf *b, uint32_t id, uint32_t n_exits)
{
	uint8_t *p = cgt_buf_reserve(b, 4 * CGT_VARINT_MAX + 4 + n_exits);
	p = cgt_put_varint(p, id);
	p = cgt_put_varint(p, 1);
	p = cgt_put_varint(p, 1 + n_exits);
	p = cgt_put_varint(p, 0x1000);
	*p++ = 4;
	*p++ = CGT_OP_INSN;
	memset(p, CGT_OP_EXIT, n_exits);
	p[n_exits] = 0;	/* no jumps */
	p[n_exits + 1] = 0;	/* not cut from another */
	b->len = (size_t)(p + n_exits + 2 - b->data);
}

/* 512 instructions and 4096 ops a block, the most the producers write. */
static void blocks_are_at_most_what_producers_write(void)
{
	static struct cgt_insn many[513];
	static struct cgt_op many_ops[4097];
	struct cgt_block_table t = { 0 };
	struct cgt_buf buf = { 0 };
	struct cgt_error e;
	const char *why;

	for (uint32_t i = 0; i < 513; i++) {
		many[i] = (struct cgt_insn){ 0x1000 + i, 1 };
		many_ops[i] = (struct cgt_op){ CGT_OP_INSN, 0, (uint16_t)i, 0 };
	}
	CHECK(cgt_block_table_add(&t, many, 512, many_ops, 512, NULL, 0, &why) == 0);
	CHECK(cgt_block_table_add(&t, many, 513, many_ops, 513, NULL, 0, &why) < 0);
	for (uint32_t k = 1; k < 4097; k++)
		many_ops[k] = (struct cgt_op){ CGT_OP_EXIT, 0, 0, 0 };
	CHECK(cgt_block_table_add(&t, many, 1, many_ops, 4096, NULL, 0, &why) == 0);
	CHECK(cgt_block_table_add(&t, many, 1, many_ops, 4097, NULL, 0, &why) < 0);
	CHECK_EQ(t.n, 2);
	cgt_block_table_free(&t);

	/* in a BLOCKS record: 4095 exits pass, 4096 do not */
	put_exit_block(&buf, 0, 4095);
	struct cgt_record rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&t, &rec, CGT_TRACE_VERSION, 0, &e) == 0);
	buf.len = 0;
	put_exit_block(&buf, 1, 4096);
	rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&t, &rec, CGT_TRACE_VERSION, 0, &e) < 0);
	CHECK(strstr(e.msg, "test: stream offset 2 (frame at byte offset 0): BLOCKS record: "
			    "expected an op count (at most 4096)") != NULL);
	CHECK_EQ(t.n, 1);
	cgt_buf_free(&buf);
	cgt_block_table_free(&t);
}

/* A count the rest of the record cannot hold is refused before anything
   is allocated for it. */
static void counts_beyond_the_record_are_refused(void)
{
	struct cgt_block_table t = { 0 };
	struct cgt_error e;
	/* block 0: 1 instruction, 4000 ops (a0 1f), then 4 bytes */
	uint8_t claim[] = { 0, 1, 0xa0, 0x1f, 0x80, 0x20, 4, CGT_OP_INSN };
	struct cgt_record rec = { CGT_REC_BLOCKS, claim, sizeof(claim), 50, 7, "t.zst", 100 };

	CHECK(cgt_blocks_decode(&t, &rec, CGT_TRACE_VERSION, 0, &e) < 0);
	CHECK(strstr(e.msg, "t.zst: stream offset 54 (frame at byte offset 7): BLOCKS record: "
			    "expected as many instructions and ops as the rest of the record can "
			    "hold") != NULL);
	CHECK_EQ(t.n, 0);
	cgt_block_table_free(&t);
}

/* The block table takes at most CGT_MEMORY_BASE + CGT_MEMORY_PER_BYTE per
   byte of the file up to the frame being read. */
static void block_memory_is_what_the_file_justifies(void)
{
	struct cgt_block_table t = { 0 };
	struct cgt_buf buf = { 0 };
	struct cgt_error e;

	/* 200 blocks of 4095 exits: 0.8 MiB of record, 42 MiB of table */
	for (uint32_t i = 0; i < 200; i++)
		put_exit_block(&buf, i, 4095);
	struct cgt_record rec = record_of(&buf, CGT_REC_BLOCKS);
	rec.frame_offset = 1000;
	rec.frame_size = 200;	/* a file of 1200 bytes so far */
	CHECK(cgt_blocks_decode(&t, &rec, CGT_TRACE_VERSION, 0, &e) < 0);
	CHECK(strstr(e.msg, "BLOCKS record: expected block definitions that fit the memory a "
			    "trace of this size can need (17084416 bytes: 16 MiB + 256 per byte "
			    "of the file up to this frame's end)") != NULL);
	CHECK(t.n > 0 && t.n < 200);
	CHECK(t.bytes <= CGT_MEMORY_BASE + 256 * 1200);
	cgt_block_table_free(&t);

	/* the same from a file of 1 MiB: 272 MiB allowed */
	rec.frame_size = (1 << 20) - 1000;
	CHECK(cgt_blocks_decode(&t, &rec, CGT_TRACE_VERSION, 0, &e) == 0);
	CHECK_EQ(t.n, 200);
	cgt_buf_free(&buf);
	cgt_block_table_free(&t);
}

int main(void)
{
	PLAN(14);
	RUN(table_derives_exits_values_and_counts);
	RUN(malformed_blocks_are_refused);
	RUN(blocks_round_trip);
	RUN(cut_blocks_round_trip);
	RUN(jumps_round_trip);
	RUN(marks_round_trip);
	RUN(stack_pointers_round_trip);
	RUN(events_round_trip);
	RUN(segments_restart_deltas_and_carry_history);
	RUN(unguarded_values_by_every_path);
	RUN(bad_events_are_refused);
	RUN(blocks_are_at_most_what_producers_write);
	RUN(counts_beyond_the_record_are_refused);
	RUN(block_memory_is_what_the_file_justifies);
	return CHECK_DONE();
}
