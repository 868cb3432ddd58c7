/*
 * First in, first out replacement (level_loop.h's hooks): each way's age
 * since its line was put there (level_ages_*), so a fill makes the way the
 * newest, a hit changes nothing, and the oldest fill is the one a miss
 * replaces.  A cold set's ways are 0 .. assoc-1 in way order, as LRU's:
 * the same line 0 in every way, found in way 0.
 */
#include "level_loop.h"

static inline __attribute__((always_inline)) void fifo_touch(uint16_t *age, uint32_t assoc,
							     uint32_t way)
{
	(void)age;
	(void)assoc;
	(void)way;
}

static const struct level_hooks fifo_hooks = { fifo_touch, level_ages_renew, level_ages_oldest,
					       level_ages_newer, 1, 0 };

LEVEL_POLICY_LOOPS(fifo, fifo_hooks)

const struct level_policy level_policy_fifo = { &fifo_hooks, 65535, 0, 1, level_ages_first, LEVEL_POLICY_TAKES(fifo) };
