/*
 * Cachegrind's branch predictors (cg_branchpred.c), for x86-64:
 *
 *  - conditional: 16384 two-bit saturating counters, all starting at 0
 *    (strongly not-taken), indexed by 7 bits of global history
 *    concatenated with the low 7 bits of the branch address;
 *  - indirect: a 512-entry table of last targets, indexed by the low 9
 *    bits of the branch address, all starting at 0.
 *
 * Returns are not modelled.
 *
 * A predictor can also start from a state not known yet (a segment
 * simulated before the ones preceding it are done; the history is known, a
 * segment carries it).  Each counter is then kept as what it would be for
 * each value it could have started with: bits 2i..2i+1 hold its value had
 * it started at i, so a known counter holds its value four times.  A
 * prediction the four disagree on, and a target slot not yet written, are
 * "unknown": the caller notes them and settles them once the state before
 * is known.
 *
 * Inline: hot path.  Internal to simulate/.
 */
#ifndef CGTRACE_BRANCH_MODEL_H
#define CGTRACE_BRANCH_MODEL_H

#include <stdint.h>
#include <string.h>

#define HISTORY_BITS 7
#define ADDRESS_BITS 7
#define TARGET_BITS 9
#define N_COUNTERS (1u << (HISTORY_BITS + ADDRESS_BITS))
#define N_TARGETS (1u << TARGET_BITS)

enum branch_outcome { BRANCH_PREDICTED = 0, BRANCH_MISPREDICTED = 1, BRANCH_UNKNOWN = 2 };

#define COUNTER_STARTED_UNKNOWN 0xE4	/* 3, 2, 1, 0 for starts 3, 2, 1, 0 */

struct branch_model {
	uint64_t history;
	uint8_t counters[N_COUNTERS];
	uint64_t targets[N_TARGETS];
	uint8_t target_known[N_TARGETS];
	/* [taken][counter]: the counter after the branch */
	uint8_t after[2][256];
};

static inline unsigned counter_value(uint8_t counter, unsigned start)
{
	return (counter >> (2 * start)) & 3;
}

/* Cachegrind's starting state (known: all zero), or, with known == 0, a
   state to be settled; history: the branch history before. */
static inline void branch_model_init(struct branch_model *b, int known, uint64_t history)
{
	for (unsigned c = 0; c < 256; c++) {
		uint8_t up = 0, down = 0;
		for (unsigned start = 0; start < 4; start++) {
			unsigned v = counter_value((uint8_t)c, start);
			up |= (uint8_t)((v < 3 ? v + 1 : 3) << (2 * start));
			down |= (uint8_t)((v > 0 ? v - 1 : 0) << (2 * start));
		}
		b->after[1][c] = up;
		b->after[0][c] = down;
	}
	b->history = history;
	memset(b->counters, known ? 0 : COUNTER_STARTED_UNKNOWN, sizeof(b->counters));
	memset(b->targets, 0, sizeof(b->targets));
	memset(b->target_known, known, sizeof(b->target_known));
}

/* A conditional branch: predicted, mispredicted or unknown (then *counter
   and *state say which counter and what it held, for branch_settle_cond).
   *history: b's, which the caller may keep in a register meanwhile. */
static inline __attribute__((always_inline)) enum branch_outcome
cond_branch(struct branch_model *b, uint64_t *history, uint64_t pc, int taken, uint32_t *counter,
	    uint8_t *state)
{
	uint32_t index = (uint32_t)(*history & ((1u << HISTORY_BITS) - 1)) << ADDRESS_BITS |
			 (uint32_t)(pc & ((1u << ADDRESS_BITS) - 1));
	uint8_t c = b->counters[index];
	/* The high bit of each value: all set, predicted taken; none, not;
	   else unknown -- high from 1 to 0xA9, one compare.  No branch on the
	   prediction itself: the host would mispredict where the simulated
	   predictor changes its mind. */
	unsigned high = c & 0xAA;

	*history = *history << 1 | (uint64_t)taken;
	b->counters[index] = b->after[taken][c];
	if (__builtin_expect((uint8_t)(high - 1) < 0xA9, 0)) {
		*counter = index;
		*state = c;
		return BRANCH_UNKNOWN;
	}
	return (enum branch_outcome)((high != 0) != taken);
}

/* An indirect branch: predicted, mispredicted, or unknown (the slot's
   target before the segment decides: branch_settle_indirect). */
static inline __attribute__((always_inline)) enum branch_outcome
indirect_branch(struct branch_model *b, uint64_t pc, uint64_t target, uint32_t *slot)
{
	uint32_t i = (uint32_t)(pc & (N_TARGETS - 1));
	uint64_t last = b->targets[i];

	b->targets[i] = target;
	if (__builtin_expect(!b->target_known[i], 0)) {
		b->target_known[i] = 1;
		*slot = i;
		return BRANCH_UNKNOWN;
	}
	return last != target ? BRANCH_MISPREDICTED : BRANCH_PREDICTED;
}

/* Whether an unknown conditional prediction was a mispredict, the
   state before (known) being `before`. */
static inline int branch_settle_cond(const struct branch_model *before, uint32_t counter,
				     uint8_t state, int taken)
{
	unsigned start = counter_value(before->counters[counter], 0);
	return (counter_value(state, start) >= 2) != (unsigned)taken;
}

static inline int branch_settle_indirect(const struct branch_model *before, uint32_t slot,
					 uint64_t target)
{
	return before->targets[slot] != target;
}

/* b, simulated from an unknown state, becomes the exact state after its
   segment, the state before being `before` (known). */
static inline void branch_settle(struct branch_model *b, const struct branch_model *before)
{
	for (uint32_t i = 0; i < N_COUNTERS; i++) {
		unsigned v = counter_value(b->counters[i], counter_value(before->counters[i], 0));
		b->counters[i] = (uint8_t)(v * 0x55);
	}
	for (uint32_t i = 0; i < N_TARGETS; i++) {
		if (!b->target_known[i])
			b->targets[i] = before->targets[i];
		b->target_known[i] = 1;
	}
}

#endif
