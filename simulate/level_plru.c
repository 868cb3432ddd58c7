/*
 * Tree pseudo-LRU replacement (level_loop.h's hooks), as the textbook
 * (and many L1s) keep it: a binary tree over the ways, a bit per inner
 * node pointing to the half whose line is to go next.  A hit or a fill
 * points every node on the way's path away from it; a miss follows the
 * bits from the root to the victim.  Ways are a power of two (level.c
 * checks it).
 *
 * State: node i's bit in state[i] (0: the lower half, 1: the upper), the
 * root node 0, node i's children 2i+1 and 2i+2; assoc - 1 nodes in the
 * assoc entries a set has.  A cold set is as if way 0 had been touched
 * last (level.c takes way 0 for the way a cold set touched last, and a
 * hit there is not touched again): its bits point away from way 0, so way
 * assoc/2 goes first.  Among twins (a cold set's tag 0 in every way) the
 * lowest way is the one found, as a hit moves no line.
 */
#include "level_loop.h"

static inline __attribute__((always_inline)) void plru_touch(uint16_t *bits, uint32_t assoc,
							     uint32_t way)
{
	/* from the root down: the node's half holding way, and away from it */
	uint32_t node = 0;
	for (uint32_t half = assoc >> 1; half != 0; half >>= 1) {
		const uint32_t upper = (way & half) != 0;
		bits[node] = (uint16_t)!upper;
		node = 2 * node + 1 + upper;
	}
}

static void plru_first(uint16_t *bits, uint32_t assoc)
{
	for (uint32_t i = 0; i < assoc; i++)
		bits[i] = 0;
	plru_touch(bits, assoc, 0);
}

static inline __attribute__((always_inline)) uint32_t plru_victim(const uint16_t *bits,
								   uint32_t assoc)
{
	uint32_t node = 0, way = 0;
	for (uint32_t half = assoc >> 1; half != 0; half >>= 1) {
		const uint32_t upper = bits[node];
		way |= upper ? half : 0;
		node = 2 * node + 1 + upper;
	}
	return way;
}

static inline __attribute__((always_inline)) int plru_lower(const uint16_t *bits, uint32_t a,
							     uint32_t b)
{
	(void)bits;
	return a < b;
}

/* a second touch of a way points its path where the first did */
static const struct level_hooks plru_hooks = { plru_touch, plru_touch, plru_victim, plru_lower, 1, 0 };

LEVEL_POLICY_LOOPS(plru, plru_hooks)

const struct level_policy level_policy_plru = { &plru_hooks, 65535, 1, 0, plru_first, LEVEL_POLICY_TAKES(plru) };
