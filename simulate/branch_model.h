/*
 * Cachegrind's branch predictors (cg_branchpred.c), for x86-64:
 *
 *  - conditional: 16384 two-bit saturating counters, all starting at 0
 *    (strongly not-taken), indexed by 7 bits of global history
 *    concatenated with the low 7 bits of the branch address;
 *  - indirect: a 512-entry table of last targets, indexed by the low 9
 *    bits of the branch address, all starting at 0.
 *
 * Returns are not modelled.  Inline: hot path.  Internal to simulate/.
 */
#ifndef CGTRACE_BRANCH_MODEL_H
#define CGTRACE_BRANCH_MODEL_H

#include <stdint.h>

#define HISTORY_BITS 7
#define ADDRESS_BITS 7
#define TARGET_BITS 9

struct branch_model {
	uint64_t history;
	uint8_t counters[1 << (HISTORY_BITS + ADDRESS_BITS)];
	uint64_t targets[1 << TARGET_BITS];
};

static inline int cond_branch_is_mispredict(struct branch_model *b, uint64_t pc, int taken)
{
	uint32_t index = (uint32_t)(b->history & ((1u << HISTORY_BITS) - 1)) << ADDRESS_BITS |
			 (uint32_t)(pc & ((1u << ADDRESS_BITS) - 1));
	uint8_t *counter = &b->counters[index];
	int mispredict = (*counter >= 2) != taken;

	b->history = b->history << 1 | (uint64_t)taken;
	if (taken) {
		if (*counter < 3)
			(*counter)++;
	} else if (*counter > 0) {
		(*counter)--;
	}
	return mispredict;
}

static inline int indirect_branch_is_mispredict(struct branch_model *b, uint64_t pc,
						uint64_t target)
{
	uint64_t *slot = &b->targets[pc & ((1u << TARGET_BITS) - 1)];
	int mispredict = *slot != target;

	*slot = target;
	return mispredict;
}

#endif
