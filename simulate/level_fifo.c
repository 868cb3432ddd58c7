/*
 * First in, first out replacement (level_loop.h's hooks): each way's age
 * since its line was put there, 0 the newest; a fill makes its way 0 and
 * ages those newer than it was by one, so the ages stay a permutation of
 * 0 .. assoc-1 and the oldest fill is the one a miss replaces.  A hit
 * changes nothing.  A cold set's ways are 0 .. assoc-1 in way order, as
 * LRU's: the same line 0 in every way, found in way 0.
 */
#include "level_loop.h"

static void fifo_first(uint16_t *age, uint32_t assoc)
{
	for (uint32_t w = 0; w < assoc; w++)
		age[w] = (uint16_t)w;
}

static inline __attribute__((always_inline)) void fifo_touch(uint16_t *age, uint32_t assoc,
							     uint32_t way)
{
	(void)age;
	(void)assoc;
	(void)way;
}

static inline __attribute__((always_inline)) void fifo_fill(uint16_t *age, uint32_t assoc,
							    uint32_t way)
{
	const uint16_t was = age[way];
	for (uint32_t w = 0; w < assoc; w++)
		age[w] += age[w] < was;
	age[way] = 0;
}

static inline __attribute__((always_inline)) uint32_t fifo_victim(const uint16_t *age,
								  uint32_t assoc)
{
	uint32_t w = 0;
	while (age[w] != assoc - 1)
		w++;
	return w;
}

static inline __attribute__((always_inline)) int fifo_prefer(const uint16_t *age, uint32_t a,
							     uint32_t b)
{
	return age[a] < age[b];
}

static const struct level_hooks fifo_hooks = { fifo_touch, fifo_fill, fifo_victim, fifo_prefer,
					       1, 0 };

LEVEL_POLICY_LOOPS(fifo, fifo_hooks)

const struct level_policy level_policy_fifo = { 65535, fifo_first, LEVEL_POLICY_TAKES(fifo) };
