/*
 * Block table and the BLOCKS record codec (TRACE-FORMAT.md, "BLOCKS").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "trace.h"
#include "varint.h"

#define MAX_ACCESS_SIZE (1u << 20)

static int is_data_op(unsigned kind)
{
	return kind >= CGT_OP_READ && kind <= CGT_OP_WRITE_GUARDED;
}

void cgt_block_table_free(struct cgt_block_table *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->blocks[i]);
	free(t->blocks);
	cgt_buf_free(&t->sp_stream);
	memset(t, 0, sizeof(*t));
}

/* Returns NULL if the block is well formed, else what is wrong with it. */
static const char *check_block(const struct cgt_insn *insns, uint32_t n_insns,
			       const struct cgt_op *ops, uint32_t n_ops)
{
	_Static_assert(CGT_OP_KIND_COUNT == 11, "the message below");
	uint32_t next_insn = 0;

	_Static_assert(CGT_BLOCK_MAX_INSNS == 512 && CGT_BLOCK_MAX_OPS == 4096, "the messages");
	if (n_insns == 0 || n_insns > CGT_BLOCK_MAX_INSNS)
		return "1 to 512 instructions";
	if (n_ops < n_insns || n_ops > CGT_BLOCK_MAX_OPS)
		return "an op count from the instruction count up to 4096";
	for (uint32_t i = 0; i < n_insns; i++)
		if (insns[i].len == 0 || insns[i].len > 255)
			return "instruction lengths of 1 to 255 bytes";
	for (uint32_t k = 0; k < n_ops; k++) {
		const struct cgt_op *op = &ops[k];
		if (op->kind >= CGT_OP_KIND_COUNT)
			return "op kinds 0-10";
		if (op->kind == CGT_OP_INSN) {
			if (op->insn != next_insn)
				return "instruction ops in order";
			next_insn++;
		} else if (next_insn == 0 || op->insn != next_insn - 1) {
			return "every op after its instruction's op";
		}
		if (is_data_op(op->kind) && (op->size == 0 || op->size > MAX_ACCESS_SIZE))
			return "access sizes of 1 byte to 1 MiB";
		if (op->kind == CGT_OP_INDIRECT && k != n_ops - 1)
			return "an indirect branch only as the last op";
		if (op->kind == CGT_OP_SP && k != 1)
			return "the stack pointer only as the second op";
	}
	if (next_insn != n_insns)
		return "one instruction op per instruction";
	return NULL;
}

/* Whether a block's ops carry its entry stack pointer (op 1, if at all). */
static int has_sp_op(const struct cgt_op *ops, uint32_t n_ops)
{
	return n_ops > 1 && ops[1].kind == CGT_OP_SP;
}

/* The size of a block's one allocation (cgt_block_table_add). */
static size_t block_bytes(uint32_t n_insns, uint32_t n_ops, uint32_t n_exits, uint32_t n_values,
			  int jumps)
{
	return sizeof(struct cgt_block) + (n_values + n_exits + 1) * sizeof(uint64_t) +
	       (jumps ? (n_exits + 1) * sizeof(struct cgt_jump) + 8 : 0) +
	       n_insns * sizeof(struct cgt_insn) + (n_exits + 1) * sizeof(struct cgt_prefix_counts) +
	       n_ops * sizeof(struct cgt_op) + (3 * n_exits + 2 + n_values) * sizeof(uint32_t) + 8;
}

static void count_exits_values(const struct cgt_op *ops, uint32_t n_ops, uint32_t *n_exits,
			       uint32_t *n_values)
{
	*n_exits = *n_values = 0;
	for (uint32_t k = 0; k < n_ops; k++) {
		*n_exits += cgt_op_is_exit(ops[k].kind);
		*n_values += cgt_op_has_value(ops[k].kind);
	}
}

int cgt_block_table_add(struct cgt_block_table *t, const struct cgt_insn *insns, uint32_t n_insns,
			const struct cgt_op *ops, uint32_t n_ops, const struct cgt_jump *jumps,
			uint32_t map_epoch, const char **why)
{
	uint32_t n_exits = 0, n_values = 0;
	struct cgt_block *b;

	*why = check_block(insns, n_insns, ops, n_ops);
	if (*why != NULL)
		return -cgt_err_corrupt;
	count_exits_values(ops, n_ops, &n_exits, &n_values);
	for (uint32_t k = 0; jumps != NULL && k <= n_exits; k++)
		if (jumps[k].kind >= CGT_JUMP_KIND_COUNT || jumps[k].dst_known > 1) {
			*why = "jump kinds 0-5";
			return -cgt_err_corrupt;
		}
	if (t->n == t->cap && cgt_array_grow(&t->blocks, &t->cap, t->n, 1, sizeof(*t->blocks)) < 0)
		return -cgt_err_nomem;

	/* One allocation per block; the 8-byte members come first. */
	size_t size = block_bytes(n_insns, n_ops, n_exits, n_values, jumps != NULL);
	b = calloc(1, size);
	if (b == NULL)
		return -cgt_err_nomem;
	/* What decoding reads for every execution comes first. */
	b->last_value = (uint64_t *)(b + 1);
	b->cond_outcomes = b->last_value + n_values;
	b->value_ops = (uint32_t *)(b->cond_outcomes + n_exits + 1);
	b->values_in_prefix = b->value_ops + n_values;
	b->ops_in_prefix = b->values_in_prefix + n_exits + 1;
	b->exit_ops = b->ops_in_prefix + n_exits + 1;
	b->insns = (struct cgt_insn *)(((uintptr_t)(b->exit_ops + n_exits) + 7) & ~(uintptr_t)7);
	b->prefix_counts = (struct cgt_prefix_counts *)(b->insns + n_insns);
	b->ops = (struct cgt_op *)(b->prefix_counts + n_exits + 1);
	if (jumps != NULL) {
		b->jumps = (struct cgt_jump *)(((uintptr_t)(b->ops + n_ops) + 7) & ~(uintptr_t)7);
		memcpy(b->jumps, jumps, (n_exits + 1) * sizeof(*jumps));
	}
	memcpy(b->insns, insns, n_insns * sizeof(*insns));
	memcpy(b->ops, ops, n_ops * sizeof(*ops));

	struct cgt_prefix_counts run = { 0 };
	uint64_t not_taken = 0;	/* the conditional branches so far, exits not taken */
	for (uint32_t k = 0; k < n_ops; k++) {
		int cond = ops[k].kind == CGT_OP_COND || ops[k].kind == CGT_OP_COND_INV;
		int inverted = ops[k].kind == CGT_OP_COND_INV;
		switch (ops[k].kind) {
		case CGT_OP_INSN: run.insns++; break;
		case CGT_OP_READ: run.reads++; break;
		case CGT_OP_WRITE: run.writes++; break;
		case CGT_OP_MODIFY: run.modifies++; break;
		case CGT_OP_READ_GUARDED:
		case CGT_OP_WRITE_GUARDED: b->n_guarded++; break;
		case CGT_OP_COND:
		case CGT_OP_COND_INV: run.conds++; break;
		case CGT_OP_INDIRECT: run.indirects++; break;
		default: break;
		}
		if (cgt_op_has_value(ops[k].kind))
			b->value_ops[b->n_values++] = k;
		if (cgt_op_is_exit(ops[k].kind)) {
			b->exit_ops[b->n_exits++] = k;
			b->ops_in_prefix[b->n_exits] = k + 1;
			b->prefix_counts[b->n_exits] = run;
			b->values_in_prefix[b->n_exits] = b->n_values;
			/* Left by this exit: a branch here was taken, unless inverted. */
			b->cond_outcomes[b->n_exits] = cond ? not_taken << 1 | (uint64_t)!inverted : not_taken;
		}
		if (cond)
			not_taken = not_taken << 1 | (uint64_t)inverted;
	}
	b->cond_outcomes[0] = not_taken;
	b->prefix_counts[0] = run;
	b->values_in_prefix[0] = b->n_values;
	b->ops_in_prefix[0] = n_ops;
	b->id = t->n;
	b->has_sp = has_sp_op(ops, n_ops);
	b->n_insns = n_insns;
	b->n_ops = n_ops;
	b->map_epoch = map_epoch;
	t->blocks[t->n++] = b;
	t->bytes += size + sizeof(*t->blocks);
	return 0;
}

/* The address after the instruction exit k (0: the block's end) leaves
   from: a jump's destination is coded from it. */
static uint64_t exit_next(const struct cgt_insn *insns, uint32_t n_insns, const struct cgt_op *ops,
			  const uint32_t *exit_ops, uint32_t k)
{
	const struct cgt_insn *in = &insns[k == 0 ? n_insns - 1 : ops[exit_ops[k - 1]].insn];
	return in->addr + in->len;
}

int cgt_blocks_encode(struct cgt_buf *buf, const struct cgt_block *blk)
{
	size_t worst = 4 * CGT_VARINT_MAX + 1 + blk->n_insns * (CGT_VARINT_MAX + 1) +
		       blk->n_ops * (1 + CGT_VARINT_MAX) + 1 + (blk->n_exits + 1) * (1 + CGT_VARINT_MAX);
	uint8_t *p = cgt_buf_reserve(buf, worst);
	uint64_t expected = 0;

	if (p == NULL)
		return -cgt_err_nomem;
	p = cgt_put_varint(p, blk->id);
	p = cgt_put_varint(p, blk->n_insns);
	p = cgt_put_varint(p, blk->n_ops);
	for (uint32_t i = 0; i < blk->n_insns; i++) {
		const struct cgt_insn *in = &blk->insns[i];
		if (i == 0)
			p = cgt_put_varint(p, in->addr);
		else
			p = cgt_put_svarint(p, (int64_t)(in->addr - expected));
		*p++ = (uint8_t)in->len;
		expected = in->addr + in->len;
	}
	for (uint32_t k = 0; k < blk->n_ops; k++) {
		*p++ = blk->ops[k].kind;
		if (is_data_op(blk->ops[k].kind))
			p = cgt_put_varint(p, blk->ops[k].size);
	}
	*p++ = blk->jumps != NULL;
	for (uint32_t k = 0; blk->jumps != NULL && k <= blk->n_exits; k++) {
		const struct cgt_jump *j = &blk->jumps[k];
		*p++ = (uint8_t)(j->kind | j->dst_known << 7);
		if (j->dst_known)
			p = cgt_put_svarint(p, (int64_t)(j->dst - exit_next(blk->insns, blk->n_insns, blk->ops,
									       blk->exit_ops, k)));
	}
	p = cgt_put_varint(p, blk->cut_from ? blk->cut_from->id + 1u : 0);
	if (blk->cut_from)
		*p++ = blk->cut_kind;
	buf->len = (size_t)(p - buf->data);
	return 0;
}

/* A version 3 block's jumps (TRACE-FORMAT.md): 1 if it has them, 0 if
   not, negative on error. */
static int decode_jumps(struct cursor *c, const struct cgt_insn *insns, uint32_t n_insns,
			const struct cgt_op *ops, uint32_t n_ops, struct cgt_jump *jumps)
{
	uint32_t exit_ops[CGT_BLOCK_MAX_OPS], n_exits = 0;
	uint8_t has;
	int rc = cursor_u8(c, &has, "whether the block's jumps follow (0 or 1)");
	if (rc == 0 && has > 1)
		rc = cursor_fail(c, "whether the block's jumps follow (0 or 1)");
	if (rc < 0 || !has)
		return rc;
	for (uint32_t k = 0; k < n_ops; k++)
		if (cgt_op_is_exit(ops[k].kind))
			exit_ops[n_exits++] = k;
	for (uint32_t k = 0; k <= n_exits && rc == 0; k++) {
		uint8_t b;
		rc = cursor_u8(c, &b, "a jump kind");
		if (rc < 0)
			break;
		jumps[k] = (struct cgt_jump){ 0, b & 0x7f, b >> 7 };
		if (jumps[k].kind >= CGT_JUMP_KIND_COUNT)
			return cursor_fail(c, "a jump kind 0-5");
		if (jumps[k].dst_known) {
			int64_t delta = 0;
			rc = cursor_svarint(c, &delta, "a jump's destination");
			jumps[k].dst = exit_next(insns, n_insns, ops, exit_ops, k) + (uint64_t)delta;
		}
	}
	return rc < 0 ? rc : 1;
}

int cgt_blocks_decode(struct cgt_block_table *t, const struct cgt_record *rec, uint32_t version,
		      uint32_t map_epoch, struct cgt_error *e)
{
	struct cursor c;
	struct cgt_insn *insns = NULL;
	struct cgt_op *ops = NULL;
	struct cgt_jump *jumps = NULL;
	int rc = 0;

	cursor_init(&c, rec, e);
	if (!cursor_done(&c)) {
		insns = malloc(CGT_BLOCK_MAX_INSNS * sizeof(*insns));
		ops = malloc(CGT_BLOCK_MAX_OPS * sizeof(*ops));
		jumps = malloc((CGT_BLOCK_MAX_OPS + 1) * sizeof(*jumps));
		if (insns == NULL || ops == NULL || jumps == NULL)
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	while (!cursor_done(&c) && rc == 0) {
		const uint8_t *block_start = c.p;
		uint64_t id, n_insns, n_ops, expected = 0;

		rc = cursor_varint(&c, &id, "a block id");
		if (rc == 0 && id != t->n) {
			c.p = block_start;
			char what[64];
			snprintf(what, sizeof(what), "block id %u (ids are consecutive)", t->n);
			rc = cursor_fail(&c, what);
		}
		if (rc == 0)
			rc = cursor_bounded(&c, &n_insns, CGT_BLOCK_MAX_INSNS,
					    "an instruction count (at most 512)");
		if (rc == 0)
			rc = cursor_bounded(&c, &n_ops, CGT_BLOCK_MAX_OPS, "an op count (at most 4096)");
		/* An instruction takes 2 bytes or more, an op 1 or more. */
		if (rc == 0 && 2 * n_insns + n_ops > (uint64_t)(c.end - c.p))
			rc = cursor_fail(&c, "as many instructions and ops as the rest of the record "
					     "can hold");
		if (rc < 0)
			break;
		for (uint64_t i = 0; i < n_insns && rc == 0; i++) {
			uint8_t len = 0;
			if (i == 0) {
				rc = cursor_varint(&c, &insns[i].addr, "an instruction address");
			} else {
				int64_t delta = 0;
				rc = cursor_svarint(&c, &delta, "an instruction address delta");
				insns[i].addr = expected + (uint64_t)delta;
			}
			if (rc == 0)
				rc = cursor_u8(&c, &len, "an instruction length");
			insns[i].len = len;
			expected = insns[i].addr + len;
		}
		int32_t insn = -1;
		for (uint64_t k = 0; k < n_ops && rc == 0; k++) {
			uint8_t kind;
			rc = cursor_u8(&c, &kind, "an op kind");
			if (rc < 0)
				break;
			if (kind == CGT_OP_INSN)
				insn++;
			ops[k] = (struct cgt_op){ .kind = kind };	/* size 0 unless a data op */
			ops[k].insn = (uint16_t)(insn < 0 ? 0 : insn);
			if (insn < 0)
				ops[k].insn = UINT16_MAX;	/* rejected by the check below */
			if (is_data_op(kind)) {
				uint64_t size = 0;
				rc = cursor_bounded(&c, &size, MAX_ACCESS_SIZE, "an access size");
				ops[k].size = (uint32_t)size;
			}
		}
		/* Before the checks of cgt_block_table_add: the jumps are coded
		   from instruction addresses, which must exist. */
		const char *why = rc == 0 ? check_block(insns, (uint32_t)n_insns, ops, (uint32_t)n_ops) : NULL;
		if (why == NULL && rc == 0 && version < 3 && has_sp_op(ops, (uint32_t)n_ops))
			why = "op kinds 0-9 (the stack pointer came with version 3)";
		if (why != NULL) {
			c.p = block_start;
			char what[128];
			snprintf(what, sizeof(what), "a well-formed block (%s)", why);
			rc = cursor_fail(&c, what);
		}
		int has_jumps = 0;
		if (rc == 0 && version >= 3) {
			has_jumps = decode_jumps(&c, insns, (uint32_t)n_insns, ops, (uint32_t)n_ops, jumps);
			rc = has_jumps < 0 ? has_jumps : 0;
		}
		uint64_t cut_from = 0;
		uint8_t cut_kind = 0;
		if (rc == 0 && version >= 4) {
			rc = cursor_bounded(&c, &cut_from, t->n, "the block it is cut from (0: none; "
								 "else a block defined before it, plus 1)");
			if (rc == 0 && cut_from)
				rc = cursor_u8(&c, &cut_kind, "where the fault cut it (1 or 2)");
			if (rc == 0 && cut_from && cut_kind != CGT_CUT_AT_ACCESS && cut_kind != CGT_CUT_UNPLACED)
				rc = cursor_fail(&c, "where the fault cut it (1 or 2)");
		}
		if (rc < 0)
			break;
		uint32_t n_exits, n_values;
		count_exits_values(ops, (uint32_t)n_ops, &n_exits, &n_values);
		uint64_t need = t->bytes + block_bytes((uint32_t)n_insns, (uint32_t)n_ops, n_exits,
						       n_values, has_jumps) + sizeof(*t->blocks);
		if (need > cgt_memory_allowed(rec)) {
			c.p = block_start;
			char what[256];
			snprintf(what, sizeof(what),
				 "block definitions that fit the memory a trace of this size can need "
				 "(%llu bytes: %u MiB + %u per byte of the file up to this frame's "
				 "end), not %llu bytes",
				 (unsigned long long)cgt_memory_allowed(rec), CGT_MEMORY_BASE >> 20,
				 CGT_MEMORY_PER_BYTE, (unsigned long long)need);
			rc = cursor_fail(&c, what);
			break;
		}
		rc = cgt_block_table_add(t, insns, (uint32_t)n_insns, ops, (uint32_t)n_ops,
					 has_jumps ? jumps : NULL, map_epoch, &why);
		if (rc == -cgt_err_nomem) {
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		} else if (rc < 0) {
			c.p = block_start;
			char what[128];
			snprintf(what, sizeof(what), "a well-formed block (%s)", why);
			rc = cursor_fail(&c, what);
		} else if (cut_from && (why = cgt_block_mark_cut(t, t->n - 1, (uint32_t)cut_from - 1,
								 cut_kind)) != NULL) {
			c.p = block_start;
			char what[160];
			snprintf(what, sizeof(what), "a well-formed block (%s)", why);
			rc = cursor_fail(&c, what);
		}
	}
	free(insns);
	free(ops);
	free(jumps);
	return rc;
}

const char *cgt_block_mark_cut(struct cgt_block_table *t, uint32_t id, uint32_t from, unsigned kind)
{
	struct cgt_block *b = t->blocks[id];
	const struct cgt_block *of = t->blocks[from];
	if (from >= id || b->n_insns > of->n_insns || b->n_ops > of->n_ops)
		return "a cut block is a prefix of one defined before it";
	for (uint32_t i = 0; i < b->n_insns; i++)
		if (b->insns[i].addr != of->insns[i].addr || b->insns[i].len != of->insns[i].len)
			return "a cut block's instructions are those of the block it is cut from";
	for (uint32_t k = 0; k < b->n_ops; k++)
		if (b->ops[k].kind != of->ops[k].kind || b->ops[k].size != of->ops[k].size)
			return "a cut block's ops are those of the block it is cut from";
	if (kind == CGT_CUT_AT_ACCESS && !(b->ops[b->n_ops - 1].kind >= CGT_OP_READ &&
					   b->ops[b->n_ops - 1].kind <= CGT_OP_WRITE_GUARDED))
		return "a cut block that faulted at an access ends with it";
	if (kind == CGT_CUT_UNPLACED && b->n_ops != 1u + b->has_sp)
		return "a cut block whose fault is not placed holds only its entry";
	if (kind != CGT_CUT_AT_ACCESS && kind != CGT_CUT_UNPLACED)
		return "a cut block says where the fault cut it";
	b->cut_from = of;
	b->cut_kind = (uint8_t)kind;
	return NULL;
}

/* Cachegrind's and Callgrind's N_EVENTS. */
#define EVENT_QUEUE 16

uint32_t cgt_block_counted_ops(const struct cgt_block *blk, int ir, int data)
{
	if (!blk->cut_from)
		return blk->n_ops;
	uint32_t flushed = 0, queued = 0;
	for (uint32_t k = 0; k < blk->n_ops; k++) {
		int events = 0;
		switch (blk->ops[k].kind) {
		case CGT_OP_INSN: events = ir; break;
		case CGT_OP_READ:
		case CGT_OP_WRITE:
		case CGT_OP_MODIFY: events = data; break;
		case CGT_OP_READ_GUARDED:
		case CGT_OP_WRITE_GUARDED:
			if (data) {
				flushed = k + 1;
				queued = 0;
			}
			break;
		case CGT_OP_COND:
		case CGT_OP_COND_INV:
		case CGT_OP_EXIT:
			flushed = k + 1;
			queued = 0;
			break;
		}
		if (events) {
			if (queued == EVENT_QUEUE) {
				flushed = k;
				queued = 0;
			}
			queued++;
		}
	}
	return flushed;
}
