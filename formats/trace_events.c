/*
 * EVENTS record codec (TRACE-FORMAT.md, "EVENTS"): one thread's run of
 * block executions.  Each execution is its block id and the exit it left
 * by, then its values, each coded as the difference from the value the same
 * op had at its previous execution in the segment (so loops code to a byte
 * or two); and the SEGMENT record, where those differences restart.
 * Decoding an execution is inline: trace_events_next.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "put.h"
#include "trace.h"
#include "varint.h"

int cgt_events_begin(struct cgt_buf *b, struct cgt_block_table *t, uint32_t tid)
{
	t->last_sp = 0;
	t->sp_stream.len = 0;
	int rc = put_varint(b, tid);
	t->exec_bytes_at = b->len;
	return rc < 0 ? rc : put_raw(b, "\0\0\0\0", 4);	/* the executions' length, later */
}

int cgt_events_finish(struct cgt_buf *b, struct cgt_block_table *t)
{
	cgt_put_u32le(b->data + t->exec_bytes_at, (uint32_t)(b->len - t->exec_bytes_at - 4));
	int rc = put_raw(b, t->sp_stream.data, t->sp_stream.len);
	t->sp_stream.len = 0;
	return rc;
}

int cgt_events_encode(struct cgt_buf *b, struct cgt_block_table *t, struct cgt_block *blk,
		      uint32_t exit_ord, const uint64_t *values)
{
	uint8_t *p = cgt_buf_reserve(b, 2 * CGT_VARINT_MAX + blk->n_values * (1 + CGT_VARINT_MAX));

	if (p == NULL)
		return -cgt_err_nomem;
	if (blk->segment != t->segment) {
		memset(blk->last_value, 0, blk->n_values * sizeof(uint64_t));
		blk->last_sp_change = 0;
		blk->segment = t->segment;
	}
	uint32_t conds = blk->prefix_counts[exit_ord].conds;
	t->cond_history = conds >= 64 ? blk->cond_outcomes[exit_ord]
				      : t->cond_history << conds | blk->cond_outcomes[exit_ord];
	p = cgt_put_varint(p, (uint64_t)blk->id << 2 | (exit_ord < 3 ? exit_ord : 3));
	if (exit_ord >= 3)
		p = cgt_put_varint(p, exit_ord - 3);
	const uint32_t n = blk->values_in_prefix[exit_ord];
	uint64_t *last = blk->last_value;
	if (blk->n_guarded == 0) {	/* the usual block: no op kind to look at */
		for (uint32_t j = 0; j < n; j++) {
			p = cgt_put_svarint(p, (int64_t)(values[j] - last[j]));
			last[j] = values[j];
		}
		b->len = (size_t)(p - b->data);
		return 0;
	}
	for (uint32_t j = 0; j < n; j++) {
		uint32_t k = blk->value_ops[j];
		uint64_t v = values[j];
		if (cgt_op_is_guarded(blk->ops[k].kind)) {
			*p++ = v != CGT_NO_ACCESS;
			if (v == CGT_NO_ACCESS)
				continue;
		}
		p = cgt_put_svarint(p, (int64_t)(v - blk->last_value[j]));
		blk->last_value[j] = v;
	}
	b->len = (size_t)(p - b->data);
	return 0;
}

int cgt_events_open(struct cgt_events_cursor *c, const struct cgt_record *rec,
		    struct cgt_events_state *s, uint64_t *scratch, struct cgt_error *e)
{
	struct cursor cur;
	uint64_t tid;

	cursor_init(&cur, rec, e);
	int rc = cursor_bounded(&cur, &tid, UINT32_MAX, "a thread id");
	uint32_t exec_bytes = (uint32_t)(cur.end - cur.p);
	if (rc == 0 && s->version >= 3) {
		rc = cursor_u32le(&cur, &exec_bytes, "the length of the executions");
		if (rc == 0 && exec_bytes > (size_t)(cur.end - cur.p)) {
			cur.p -= 4;
			rc = cursor_fail(&cur, "the length of the executions, within the record");
		}
	}
	if (rc < 0)
		return rc;
	c->p = cur.p;
	c->end = cur.p + exec_bytes;
	c->sp_p = c->end;	/* version 3: the stack pointers follow */
	c->sp_end = cur.end;
	c->slots = s->slots;
	c->n_slots = s->n_slots;
	c->segment = s->segment;
	c->tid = (uint32_t)tid;
	c->last_sp = 0;
	c->scratch = scratch;
	c->rec = rec;
	return 0;
}

int cgt_events_fail_at(const struct cgt_record *rec, const uint8_t *at, const char *expected,
		       struct cgt_error *e)
{
	struct cursor cur;

	cursor_init(&cur, rec, e);
	cur.p = at;
	return cursor_fail(&cur, expected);
}

int cgt_events_fail_block_id(const struct cgt_record *rec, const uint8_t *at, uint32_t n_slots,
			     struct cgt_error *e)
{
	char what[80];

	snprintf(what, sizeof(what), "a block id below %u (the blocks defined so far)", n_slots);
	return cgt_events_fail_at(rec, at, what, e);
}

int cgt_segment_encode(struct cgt_buf *b, const struct cgt_segment_state *s)
{
	/* the request byte only once there was one: older readers' records */
	if (put_varint(b, s->cond_history) < 0)
		return -1;
	return s->cachegrind_instr == CGT_CG_INSTR_NONE ? 0 : put_varint(b, s->cachegrind_instr);
}

int cgt_segment_decode(struct cgt_segment_state *s, const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;
	uint64_t instr = CGT_CG_INSTR_NONE;

	cursor_init(&c, rec, e);
	int rc = cursor_varint(&c, &s->cond_history, "the branch history");
	if (rc == 0 && !cursor_done(&c))
		rc = cursor_varint(&c, &instr, "the last Cachegrind instrumentation request");
	if (rc == 0 && instr > CGT_CG_INSTR_STOP)
		rc = cursor_fail(&c, "a Cachegrind instrumentation request of 0, 1 or 2");
	if (rc == 0 && !cursor_done(&c))
		rc = cursor_fail(&c, "the end of the record");
	s->cachegrind_instr = (uint8_t)instr;
	return rc;
}

int cgt_events_state_sync(struct cgt_events_state *s, const struct cgt_block_table *t)
{
	if (t->n > s->cap_slots &&
	    cgt_array_grow(&s->slots, &s->cap_slots, 0, t->n, sizeof(*s->slots)) < 0)
		return -cgt_err_nomem;
	for (uint32_t id = s->n_slots; id < t->n; id++) {
		uint64_t *last = calloc(t->blocks[id]->n_values + 1, sizeof(uint64_t));
		if (last == NULL)
			return -cgt_err_nomem;
		const struct cgt_block *blk = t->blocks[id];
		struct cgt_events_slot *slot = &s->slots[id];
		*slot = (struct cgt_events_slot){ last, blk, 0, { 0 }, { 0 } };
		int small = blk->n_guarded == 0 && blk->n_ops < CGT_SLOW_EXIT;
		for (uint32_t k = 0; k < 4; k++) {
			int fast = small && k < 3 && k <= blk->n_exits;
			slot->values_in_prefix[k] = fast ? (uint8_t)blk->values_in_prefix[k] : CGT_SLOW_EXIT;
			slot->ops_in_prefix[k] = fast ? (uint8_t)blk->ops_in_prefix[k] : CGT_SLOW_EXIT;
		}
		s->n_slots = id + 1;
	}
	return 0;
}

void cgt_events_state_free(struct cgt_events_state *s)
{
	for (uint32_t id = 0; id < s->n_slots; id++)
		free(s->slots[id].last);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

void cgt_counts_add_exits(struct cgt_trace_counts *n, const struct cgt_block *blk, uint32_t exit,
			  uint64_t times)
{
	const struct cgt_prefix_counts *c = &blk->prefix_counts[exit];

	n->block_execs += times;
	n->insns += times * c->insns;
	n->reads += times * c->reads;
	n->writes += times * c->writes;
	n->modifies += times * c->modifies;
	n->conds += times * c->conds;
	n->indirects += times * c->indirects;
}

void cgt_counts_add_guarded(struct cgt_trace_counts *n, const struct cgt_block *blk, uint32_t exit,
			    const uint64_t *values)
{
	for (uint32_t j = 0; blk->n_guarded && j < blk->values_in_prefix[exit]; j++) {
		uint32_t k = blk->value_ops[j];
		if (values[j] == CGT_NO_ACCESS)
			continue;
		n->reads += blk->ops[k].kind == CGT_OP_READ_GUARDED;
		n->writes += blk->ops[k].kind == CGT_OP_WRITE_GUARDED;
	}
}

void cgt_counts_add_uncounted(struct cgt_trace_counts *u, const struct cgt_block *blk,
			      uint64_t times)
{
	if (blk->cut_from == NULL)
		return;
	u->block_execs += times;
	for (uint32_t k = cgt_block_counted_ops(blk, 1, 1); k < blk->n_ops; k++) {
		/* Guarded accesses and branches are handed on at once: none is
		   past the counted ops. */
		switch (blk->ops[k].kind) {
		case CGT_OP_INSN: u->insns += times; break;
		case CGT_OP_READ: u->reads += times; break;
		case CGT_OP_WRITE: u->writes += times; break;
		case CGT_OP_MODIFY: u->modifies += times; break;
		default: break;
		}
	}
}

void cgt_counts_add_exec(struct cgt_trace_counts *n, const struct cgt_exec *x)
{
	cgt_counts_add_exits(n, x->block, x->exit, 1);
	cgt_counts_add_guarded(n, x->block, x->exit, x->values);
}
