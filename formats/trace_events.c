/*
 * EVENTS record codec (TRACE-FORMAT.md, "EVENTS"): one thread's run of
 * block executions.  Each execution is its block id and the exit it left
 * by, then its values, each coded as the difference from the value the same
 * op had at its previous execution in the segment (so loops code to a byte
 * or two); and the SEGMENT record, where those differences restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "put.h"
#include "trace.h"
#include "varint.h"

static int is_guarded(unsigned kind)
{
	return kind == CGT_OP_READ_GUARDED || kind == CGT_OP_WRITE_GUARDED;
}

int cgt_events_begin(struct cgt_buf *b, uint32_t tid)
{
	return put_varint(b, tid);
}

int cgt_events_encode(struct cgt_buf *b, struct cgt_block_table *t, struct cgt_block *blk,
		      uint32_t exit_ord, const uint64_t *values)
{
	uint8_t *p = cgt_buf_reserve(b, 2 * CGT_VARINT_MAX + blk->n_values * (1 + CGT_VARINT_MAX));

	if (p == NULL)
		return -cgt_err_nomem;
	if (blk->segment != t->segment) {
		memset(blk->last_value, 0, blk->n_values * sizeof(uint64_t));
		blk->segment = t->segment;
	}
	uint32_t conds = blk->prefix_counts[exit_ord].conds;
	t->cond_history = conds >= 64 ? blk->cond_outcomes[exit_ord]
				      : t->cond_history << conds | blk->cond_outcomes[exit_ord];
	p = cgt_put_varint(p, (uint64_t)blk->id << 2 | (exit_ord < 3 ? exit_ord : 3));
	if (exit_ord >= 3)
		p = cgt_put_varint(p, exit_ord - 3);
	for (uint32_t j = 0; j < blk->values_in_prefix[exit_ord]; j++) {
		uint32_t k = blk->value_ops[j];
		uint64_t v = values[j];
		if (is_guarded(blk->ops[k].kind)) {
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

int cgt_events_open(struct cgt_events_cursor *c, const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor cur;
	uint64_t tid;

	cursor_init(&cur, rec, e);
	int rc = cursor_bounded(&cur, &tid, UINT32_MAX, "a thread id");
	if (rc < 0)
		return rc;
	c->p = cur.p;
	c->end = cur.end;
	c->rec = rec;
	c->tid = (uint32_t)tid;
	return 0;
}

static int events_fail(const struct cgt_record *rec, const uint8_t *at, const char *expected,
		       struct cgt_error *e)
{
	struct cursor cur;

	cursor_init(&cur, rec, e);
	cur.p = at;
	return cursor_fail(&cur, expected);
}

/* The high bits of the first n bytes of a little-endian word: all clear,
   n one-byte varints. */
static const uint64_t one_byte_mask[9] = {
	0, 0x80, 0x8080, 0x808080, 0x80808080, 0x8080808080, 0x808080808080, 0x80808080808080,
	0x8080808080808080,
};

/* The values of an execution whose every read stays within the record
   (checked by the caller): no bounds checks per byte. */
static inline uint64_t fast_uvarint(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;
	if (v >= 0x80) {
		v &= 0x7f;
		for (unsigned shift = 7;; shift += 7) {
			uint8_t b = *p++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (b < 0x80 || shift >= 63)
				break;
		}
	}
	*pp = p;
	return v;
}

int cgt_segment_encode(struct cgt_buf *b, uint64_t cond_history)
{
	return put_varint(b, cond_history);
}

int cgt_segment_decode(uint64_t *cond_history, const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;

	cursor_init(&c, rec, e);
	int rc = cursor_varint(&c, cond_history, "the branch history");
	if (rc == 0 && !cursor_done(&c))
		rc = cursor_fail(&c, "the end of the record");
	return rc;
}

int cgt_events_state_sync(struct cgt_events_state *s, const struct cgt_block_table *t)
{
	if (t->n > s->cap_slots) {
		uint32_t cap = s->cap_slots ? s->cap_slots : 1024;
		while (cap < t->n)
			cap *= 2;
		struct cgt_events_slot *slots = realloc(s->slots, cap * sizeof(*slots));
		if (slots == NULL)
			return -cgt_err_nomem;
		s->slots = slots;
		s->cap_slots = cap;
	}
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

/* What decoding an execution reads, in locals: through the cursor and
   state the compiler would load it again after every store. */
struct events_at {
	const uint8_t *end;
	struct cgt_events_slot *slots;
	uint32_t n_slots, segment, tid;
	const struct cgt_record *rec;
};

/* The next execution at *pp. */
static inline __attribute__((always_inline)) int events_next(const uint8_t **pp,
							      const struct events_at c,
							      struct cgt_exec *x, uint64_t *values,
							      struct cgt_error *e)
{
	const uint8_t *p = *pp, *const end = c.end, *const start = p;
	uint64_t head, exit_ord;

	if (p >= end)
		return 0;
	/* Block ids from 32 up take two bytes, the usual length. */
	if (end - p >= 2 && p[0] >= 0x80 && p[1] < 0x80) {
		head = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
		p += 2;
	} else if (cgt_get_varint(&p, end, &head) < 0) {
		return events_fail(c.rec, start, "a block execution", e);
	}
	uint64_t id = head >> 2;
	if (id >= c.n_slots) {
		char what[80];
		snprintf(what, sizeof(what), "a block id below %u (the blocks defined so far)",
			 c.n_slots);
		return events_fail(c.rec, start, what, e);
	}
	struct cgt_events_slot *slot = &c.slots[id];
	const struct cgt_block *blk = slot->blk;
	uint32_t n_values, n_ops;
	exit_ord = head & 3;
	const int fast = slot->values_in_prefix[exit_ord] != CGT_SLOW_EXIT;
	if (__builtin_expect(fast, 1)) {
		n_values = slot->values_in_prefix[exit_ord];
		n_ops = slot->ops_in_prefix[exit_ord];
	} else {
		if (exit_ord == 3) {
			uint64_t more;
			if (cgt_get_varint(&p, end, &more) < 0 || more > blk->n_exits)
				return events_fail(c.rec, start, "an exit number", e);
			exit_ord += more;
		}
		if (exit_ord > blk->n_exits)
			return events_fail(c.rec, start, "an exit number within the block's exits", e);
		n_values = blk->values_in_prefix[exit_ord];
		n_ops = blk->ops_in_prefix[exit_ord];
	}
	uint64_t *last = slot->last;
	if (__builtin_expect(slot->segment != c.segment, 0)) {
		memset(last, 0, blk->n_values * sizeof(uint64_t));
		slot->segment = c.segment;
	}

	size_t room = (size_t)(end - p);
	uint64_t word;
	const int unguarded = fast || blk->n_guarded == 0;
	if (n_values <= 8 && room >= 8 && unguarded &&
	    (memcpy(&word, p, 8), (word & one_byte_mask[n_values]) == 0)) {
		/* The common case: every delta fits one byte. */
		for (uint32_t j = 0; j < n_values; j++, word >>= 8) {
			last[j] += (uint64_t)cgt_unzigzag(word & 0xff);
			values[j] = last[j];
		}
		p += n_values;
	} else if (unguarded && room >= (size_t)n_values * CGT_VARINT_MAX) {
		for (uint32_t j = 0; j < n_values; j++) {
			last[j] += (uint64_t)cgt_unzigzag(fast_uvarint(&p));
			values[j] = last[j];
		}
	} else {
		for (uint32_t j = 0; j < n_values; j++) {
			uint32_t k = blk->value_ops[j];
			const uint8_t *at = p;
			if (is_guarded(blk->ops[k].kind)) {
				if (p >= end || *p > 1)
					return events_fail(c.rec, at, "a guard byte (0 or 1)", e);
				if (*p++ == 0) {
					values[j] = CGT_NO_ACCESS;
					continue;
				}
			}
			int64_t delta;
			if (cgt_get_svarint(&p, end, &delta) < 0)
				return events_fail(c.rec, at, "an address or target", e);
			last[j] += (uint64_t)delta;
			values[j] = last[j];
		}
	}
	x->block = blk;
	x->n_ops = n_ops;
	x->n_values = n_values;
	x->exit = (uint32_t)exit_ord;
	x->tid = c.tid;
	x->block_id = (uint32_t)id;
	x->values = values;
	*pp = p;
	return 1;
}

int cgt_events_fill(struct cgt_events_cursor *c, struct cgt_events_state *s, struct cgt_exec *execs,
		    size_t max_execs, uint64_t *values, size_t max_values, uint32_t max_block_values,
		    size_t *n_execs, size_t *n_values, struct cgt_error *e)
{
	size_t n = *n_execs, used = *n_values;
	const uint8_t *p = c->p;
	const struct events_at at = { c->end, s->slots, s->n_slots, s->segment, c->tid, c->rec };
	int rc = 1;

	while (n < max_execs && max_values - used >= max_block_values) {
		rc = events_next(&p, at, &execs[n], values + used, e);
		if (rc <= 0)
			break;
		used += execs[n].n_values;
		n++;
	}
	c->p = p;
	*n_execs = n;
	*n_values = used;
	return rc;
}

void cgt_counts_add_exec(struct cgt_trace_counts *n, const struct cgt_exec *x)
{
	const struct cgt_block *blk = x->block;
	const struct cgt_prefix_counts *c = &blk->prefix_counts[x->exit];

	n->block_execs++;
	n->insns += c->insns;
	n->reads += c->reads;
	n->writes += c->writes;
	n->modifies += c->modifies;
	n->conds += c->conds;
	n->indirects += c->indirects;
	for (uint32_t j = 0; blk->n_guarded && j < blk->values_in_prefix[x->exit]; j++) {
		uint32_t k = blk->value_ops[j];
		if (x->values[j] == CGT_NO_ACCESS)
			continue;
		n->reads += blk->ops[k].kind == CGT_OP_READ_GUARDED;
		n->writes += blk->ops[k].kind == CGT_OP_WRITE_GUARDED;
	}
}
