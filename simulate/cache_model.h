/*
 * One cache level, simulated exactly as Cachegrind's cg_sim.c does:
 * true LRU per set, bit-selection set index, the full block number as tag,
 * all tags starting at 0 (so block 0 "hits" in a cold cache), write-allocate,
 * and a reference that straddles two lines counting as one access that
 * misses if either line misses (both lines are always looked up).
 *
 * Inline because it is the simulator's hot path.  Internal to simulate/.
 */
#ifndef CGTRACE_CACHE_MODEL_H
#define CGTRACE_CACHE_MODEL_H

#include <stdint.h>
#include <stdlib.h>

struct cache_model {
	uint64_t sets_mask;
	uint32_t assoc;
	uint32_t line_bits;
	uint64_t *tags;		/* sets x assoc, each set MRU first */
};

/* size, line: powers of two; sets = size / line / assoc (checked by the
   caller).  Returns 0, or -1 if out of memory. */
static inline int cache_model_init(struct cache_model *c, uint32_t size, uint32_t assoc,
				   uint32_t line)
{
	uint64_t sets = (uint64_t)size / line / assoc;

	c->sets_mask = sets - 1;
	c->assoc = assoc;
	c->line_bits = (uint32_t)__builtin_ctz(line);
	c->tags = calloc(sets * assoc, sizeof(*c->tags));
	return c->tags != NULL ? 0 : -1;
}

static inline void cache_model_free(struct cache_model *c)
{
	free(c->tags);
	c->tags = NULL;
}

/* Looks tag up in one set and makes it the set's most recently used. */
static inline __attribute__((always_inline)) int cache_set_is_miss(struct cache_model *c, uint64_t set_no, uint64_t tag)
{
	uint64_t *set = c->tags + set_no * c->assoc;
	uint32_t i;

	if (set[0] == tag)
		return 0;
	for (i = 1; i < c->assoc; i++) {
		if (set[i] == tag) {
			for (uint32_t j = i; j > 0; j--)
				set[j] = set[j - 1];
			set[0] = tag;
			return 0;
		}
	}
	for (uint32_t j = c->assoc - 1; j > 0; j--)
		set[j] = set[j - 1];
	set[0] = tag;
	return 1;
}

/* One reference of size bytes (1-255, at most one line) at addr. */
static inline __attribute__((always_inline)) int cache_ref_is_miss(struct cache_model *c, uint64_t addr, uint32_t size)
{
	uint64_t block1 = addr >> c->line_bits;
	uint64_t block2 = (addr + size - 1) >> c->line_bits;

	if (block1 == block2)
		return cache_set_is_miss(c, block1 & c->sets_mask, block1);
	/* Straddling: both lines are looked up, for their LRU updates. */
	int miss1 = cache_set_is_miss(c, block1 & c->sets_mask, block1);
	int miss2 = cache_set_is_miss(c, block2 & c->sets_mask, block2);
	return miss1 | miss2;
}

#endif
