/*
 * The EVENTS decoder's step (TRACE-FORMAT.md, "EVENTS"): one execution.
 * Inline, and reading the cursor through a pointer the consumer keeps in a
 * local, so that the consumer's loop keeps the cursor in registers and
 * nothing is stored between decoding an execution and using it.  Included
 * by trace.h.
 */
#ifndef CGTRACE_TRACE_EVENTS_NEXT_H
#define CGTRACE_TRACE_EVENTS_NEXT_H

#include <string.h>

#include "varint.h"

/* The failures, out of line (rec and n_slots passed by value: a pointer
   to the cursor would make the compiler keep it in memory). */
int cgt_events_fail_at(const struct cgt_record *rec, const uint8_t *at, const char *expected,
		       struct cgt_error *e);
int cgt_events_fail_block_id(const struct cgt_record *rec, const uint8_t *at, uint32_t n_slots,
			     struct cgt_error *e);

/* The high bits of the first n bytes of a little-endian word: all clear,
   n one-byte varints. */
static const uint64_t cgt_one_byte_mask[9] = {
	0, 0x80, 0x8080, 0x808080, 0x80808080, 0x8080808080, 0x808080808080, 0x80808080808080,
	0x8080808080808080,
};

/* The next execution: 1 (*x set; its values valid until the next call),
   0 at the payload's end, negative on error (e set). */
static inline __attribute__((always_inline)) int
cgt_events_next(struct cgt_events_cursor *c, struct cgt_exec *x, struct cgt_error *e)
{
	const uint8_t *p = c->p, *const end = c->end, *const start = p;
	uint64_t head, exit_ord;

	if (p >= end)
		return 0;
	/* Block ids from 32 up take two bytes, the usual length. */
	if (end - p >= 2 && p[0] >= 0x80 && p[1] < 0x80) {
		head = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
		p += 2;
	} else if (cgt_get_varint(&p, end, &head) < 0) {
		return cgt_events_fail_at(c->rec, start, "a block execution", e);
	}
	uint64_t id = head >> 2;
	if (id >= c->n_slots)
		return cgt_events_fail_block_id(c->rec, start, c->n_slots, e);
	struct cgt_events_slot *slot = &c->slots[id];
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
				return cgt_events_fail_at(c->rec, start, "an exit number", e);
			exit_ord += more;
		}
		if (exit_ord > blk->n_exits)
			return cgt_events_fail_at(c->rec, start,
						  "an exit number within the block's exits", e);
		n_values = blk->values_in_prefix[exit_ord];
		n_ops = blk->ops_in_prefix[exit_ord];
	}
	uint64_t *last = slot->last;
	if (__builtin_expect(slot->segment != c->segment, 0)) {
		/* and the stack pointer's state, after the values' */
		memset(last, 0, (blk->n_values + 1) * sizeof(uint64_t));
		slot->segment = c->segment;
	}

	/* Without guards the values are the delta state itself. */
	const uint64_t *values = last;
	size_t room = (size_t)(end - p);
	uint64_t word;
	const int unguarded = fast || blk->n_guarded == 0;
	if (n_values <= 8 && room >= 8 && unguarded &&
	    (memcpy(&word, p, 8), (word & cgt_one_byte_mask[n_values]) == 0)) {
		/* Every delta fits one byte. */
		for (uint32_t j = 0; j < n_values; j++, word >>= 8)
			last[j] += (uint64_t)cgt_unzigzag(word & 0xff);
		p += n_values;
	} else if (unguarded && room >= (size_t)n_values * CGT_VARINT_MAX) {
		for (uint32_t j = 0; j < n_values; j++)
			last[j] += (uint64_t)cgt_unzigzag(cgt_fast_uvarint(&p));
	} else {
		uint64_t *out = c->scratch;
		for (uint32_t j = 0; j < n_values; j++) {
			uint32_t k = blk->value_ops[j];
			const uint8_t *at = p;
			if (cgt_op_is_guarded(blk->ops[k].kind)) {
				if (p >= end || *p > 1)
					return cgt_events_fail_at(c->rec, at, "a guard byte (0 or 1)", e);
				if (*p++ == 0) {
					out[j] = CGT_NO_ACCESS;
					continue;
				}
			}
			int64_t delta;
			if (cgt_get_svarint(&p, end, &delta) < 0)
				return cgt_events_fail_at(c->rec, at, "an address or target", e);
			last[j] += (uint64_t)delta;
			out[j] = last[j];
		}
		values = out;
	}
	x->block = blk;
	x->n_ops = n_ops;
	x->n_values = n_values;
	x->exit = (uint32_t)exit_ord;
	x->tid = c->tid;
	x->block_id = (uint32_t)id;
	x->values = values;
	c->p = p;
	return 1;
}

/* The stack pointer at the entry of x, the execution just decoded, whose
   block has_sp (a stream of its own: consumers that do not need it never
   read it).  Call it for every such execution, in order, or never.  0, or
   negative on error (e set). */
static inline int cgt_events_sp(struct cgt_events_cursor *c, const struct cgt_exec *x, uint64_t *sp,
				struct cgt_error *e)
{
	const uint8_t *at = c->sp_p;
	int64_t delta;
	if (cgt_get_svarint(&c->sp_p, c->sp_end, &delta) < 0)
		return cgt_events_fail_at(c->rec, at, "a stack pointer", e);
	/* the change since the record's last one, from the change at the
	   block's last execution (kept after the block's values) */
	uint64_t *change = &c->slots[x->block_id].last[x->block->n_values];
	*change += (uint64_t)delta;
	c->last_sp += *change;
	*sp = c->last_sp;
	return 0;
}

#endif
