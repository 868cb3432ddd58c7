/*
 * Least recently used replacement (level_loop.h's hooks): each way's age,
 * 0 the most recently used; a way touched becomes 0 and those younger
 * than it were age by one, so the ages stay a permutation of 0 .. assoc-1
 * and the oldest way is the one a miss replaces.  Cachegrind's and
 * Callgrind's caches keep the same order by moving tags (MRU first); a
 * cold set's ways are 0 .. assoc-1 in way order, as their tags 0 are.
 */
#include "level_loop.h"

static void lru_first(uint16_t *age, uint32_t assoc)
{
	for (uint32_t w = 0; w < assoc; w++)
		age[w] = (uint16_t)w;
}

static inline __attribute__((always_inline)) void lru_touch(uint16_t *age, uint32_t assoc,
							    uint32_t way)
{
	const uint16_t was = age[way];
	for (uint32_t w = 0; w < assoc; w++)
		age[w] += age[w] < was;
	age[way] = 0;
}

static inline __attribute__((always_inline)) uint32_t lru_victim(const uint16_t *age,
								 uint32_t assoc)
{
	uint32_t w = 0;
	while (age[w] != assoc - 1)
		w++;
	return w;
}

static inline __attribute__((always_inline)) int lru_prefer(const uint16_t *age, uint32_t a,
							    uint32_t b)
{
	return age[a] < age[b];
}

static const struct level_hooks lru_hooks = { lru_touch, lru_touch, lru_victim, lru_prefer, 1, 1 };

LEVEL_POLICY_LOOPS(lru, lru_hooks)

const struct level_policy level_policy_lru = { 65535, lru_first, LEVEL_POLICY_TAKES(lru) };
