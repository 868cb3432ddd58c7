/* Block table, BLOCKS and EVENTS codecs: round trips and validation. */
#include <string.h>

#include "check.h"
#include "trace.h"

static struct cgt_record record_of(const struct cgt_buf *b, unsigned type)
{
	struct cgt_record rec = { type, b->data, b->len, 0, 0, "test" };
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
	CHECK(cgt_block_table_add(&t, insns, 3, ops, 9, 5, &why) == 0);
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
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, 0, &why) < 0);
	memcpy(bad, ops, sizeof(ops));
	bad[1].size = 0;
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, 0, &why) < 0);
	memcpy(bad, ops, sizeof(ops));
	bad[4].kind = CGT_OP_INDIRECT;	/* not last */
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, 0, &why) < 0);
	memcpy(bad, ops, sizeof(ops));
	bad[3].kind = 42;
	CHECK(cgt_block_table_add(&t, insns, 3, bad, 9, 0, &why) < 0);
	CHECK(cgt_block_table_add(&t, insns, 3, ops, 2, 0, &why) < 0);	/* too few ops */
	CHECK_EQ(t.n, 0);
	cgt_block_table_free(&t);
}

static void blocks_round_trip(void)
{
	struct cgt_block_table a = { 0 }, b = { 0 };
	struct cgt_buf buf = { 0 };
	struct cgt_error e;
	const char *why;

	CHECK(cgt_block_table_add(&a, insns, 3, ops, 9, 0, &why) == 0);
	CHECK(cgt_block_table_add(&a, insns, 2, ops, 7, 0, &why) == 0);
	CHECK(cgt_blocks_encode(&buf, a.blocks[0]) == 0);
	CHECK(cgt_blocks_encode(&buf, a.blocks[1]) == 0);
	struct cgt_record rec = record_of(&buf, CGT_REC_BLOCKS);
	CHECK(cgt_blocks_decode(&b, &rec, 7, &e) == 0);
	CHECK_EQ(b.n, 2);
	for (uint32_t i = 0; i < 2 && b.n == 2; i++) {
		CHECK_EQ(b.blocks[i]->n_insns, a.blocks[i]->n_insns);
		CHECK_EQ(b.blocks[i]->n_ops, a.blocks[i]->n_ops);
		CHECK(memcmp(b.blocks[i]->insns, a.blocks[i]->insns,
			     a.blocks[i]->n_insns * sizeof(struct cgt_insn)) == 0);
		CHECK(memcmp(b.blocks[i]->ops, a.blocks[i]->ops,
			     a.blocks[i]->n_ops * sizeof(struct cgt_op)) == 0);
		CHECK_EQ(b.blocks[i]->map_epoch, 7);
	}
	/* decoding the same ids again is refused: ids are consecutive */
	CHECK(cgt_blocks_decode(&b, &rec, 7, &e) < 0);
	CHECK(strstr(e.msg, "block id 2") != NULL);
	cgt_buf_free(&buf);
	cgt_block_table_free(&a);
	cgt_block_table_free(&b);
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

	struct cgt_events_state state = { 0 };
	CHECK(cgt_block_table_add(&enc, insns, 3, ops, 9, 0, &why) == 0);
	CHECK(cgt_block_table_add(&dec, insns, 3, ops, 9, 0, &why) == 0);
	CHECK(cgt_events_state_sync(&state, &dec) == 0);
	cgt_events_state_reset(&state);
	CHECK(cgt_events_begin(&buf, 3) == 0);
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
	CHECK_EQ(x.exit, 2);	/* the EXIT op was where it left */
	cgt_counts_add_exec(&n, &x);
	CHECK(next_exec(&c, &x, out, &e) == 1);
	CHECK_EQ(x.n_ops, 3);
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
	struct cgt_events_state state = { 0 };
	struct cgt_error e;
	const char *why;
	uint64_t in[9] = { 0x7000, 0x8000, 0x9000, 0x2000 }, out[9], scratch[9];
	struct cgt_events_cursor c;
	struct cgt_exec x = { 0 };

	CHECK(cgt_block_table_add(&enc, insns, 3, ops, 9, 0, &why) == 0);
	CHECK(cgt_block_table_add(&dec, insns, 3, ops, 9, 0, &why) == 0);
	/* the conditional branches of each prefix, the last in bit 0: exit 1
	   is the COND_INV (not taken when left by it); ran to the end, it was
	   taken (inverted, exit not taken) */
	CHECK_EQ(enc.blocks[0]->cond_outcomes[1], 0);
	CHECK_EQ(enc.blocks[0]->cond_outcomes[0], 1);
	CHECK(cgt_events_begin(&first, 1) == 0);
	CHECK(cgt_events_encode(&first, &enc, enc.blocks[0], 0, in) == 0);
	CHECK(cgt_events_encode(&first, &enc, enc.blocks[0], 1, in) == 0);
	CHECK_EQ(enc.cond_history, 2);	/* taken, then not taken */
	/* a new segment: the same values code as if never seen */
	enc.segment++;
	CHECK(cgt_events_begin(&second, 1) == 0);
	CHECK(cgt_events_encode(&second, &enc, enc.blocks[0], 0, in) == 0);
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

	struct cgt_buf seg = { 0 };
	uint64_t history = 0;
	CHECK(cgt_segment_encode(&seg, 0x8000000000000001ull) == 0);
	rec = record_of(&seg, CGT_REC_SEGMENT);
	CHECK(cgt_segment_decode(&history, &rec, &e) == 0);
	CHECK(history == 0x8000000000000001ull);
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
	struct cgt_events_state state = { 0 };
	struct cgt_buf buf = { 0 };
	struct cgt_events_cursor c;
	struct cgt_exec x = { 0 };
	struct cgt_error e;
	uint64_t scratch[3];
	const char *why;

	CHECK(cgt_block_table_add(&enc, insns, 3, plain, 6, 0, &why) == 0);
	CHECK(cgt_block_table_add(&dec, insns, 3, plain, 6, 0, &why) == 0);
	CHECK(cgt_events_state_sync(&state, &dec) == 0);
	cgt_events_state_reset(&state);
	CHECK(cgt_events_begin(&buf, 1) == 0);
	for (unsigned k = 0; k < n; k++)
		CHECK(cgt_events_encode(&buf, &enc, enc.blocks[0], 0, in[k]) == 0);
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
	struct cgt_events_state state = { 0 };

	CHECK(cgt_block_table_add(&t, insns, 3, ops, 9, 0, &why) == 0);
	CHECK(cgt_events_state_sync(&state, &t) == 0);
	/* tid 0, then block 5 (undefined) */
	uint8_t undefined[] = { 0, 5 << 2 };
	struct cgt_record rec = { CGT_REC_EVENTS, undefined, sizeof(undefined), 100, 0, "t.zst" };
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) < 0);
	CHECK(strstr(e.msg, "t.zst: stream offset 101") != NULL);
	/* exit 3 of a block that has 2 */
	uint8_t bad_exit[] = { 0, 3, 0 };
	rec.payload = bad_exit;
	rec.len = sizeof(bad_exit);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) < 0);
	/* values cut short */
	uint8_t short_values[] = { 0, 0 << 2 | 0, 0x80 };
	rec.payload = short_values;
	rec.len = sizeof(short_values);
	CHECK(cgt_events_open(&c, &rec, &state, scratch, &e) == 0);
	CHECK(next_exec(&c, &x, out, &e) < 0);
	cgt_block_table_free(&t);
	cgt_events_state_free(&state);
}

int main(void)
{
	PLAN(7);
	RUN(table_derives_exits_values_and_counts);
	RUN(malformed_blocks_are_refused);
	RUN(blocks_round_trip);
	RUN(events_round_trip);
	RUN(segments_restart_deltas_and_carry_history);
	RUN(unguarded_values_by_every_path);
	RUN(bad_events_are_refused);
	return CHECK_DONE();
}
