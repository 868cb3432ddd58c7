/*
 * One cache level, simulated exactly as Cachegrind's cg_sim.c does:
 * true LRU per set, bit-selection set index, the full block number as tag,
 * all tags starting at 0 (so block 0 "hits" in a cold cache), write-allocate,
 * and a reference that straddles two lines counting as one access that
 * misses if either line misses (both lines are always looked up).
 *
 * A cache can also start from a state not known yet (a segment simulated
 * before the ones preceding it are done): its ways hold CACHE_UNKNOWN.  A
 * line not found in a set that still has unknown ways may have been in one
 * of them: that lookup is "unknown" and noted, in order, for
 * cache_settle() to decide once the state before is known.  The set's state
 * stays exact either way: the line becomes its most recently used and an
 * unknown way (the least recently used) drops out.
 *
 * Inline because it is the simulator's hot path.  Internal to simulate/.
 */
#ifndef CGTRACE_CACHE_MODEL_H
#define CGTRACE_CACHE_MODEL_H

#include <stdint.h>
#include <stdlib.h>

#define CACHE_UNKNOWN UINT64_MAX	/* no block number is this large */
#define CACHE_NO_EVENT UINT32_MAX

enum ref_outcome { REF_HIT = 0, REF_MISS = 1, REF_UNKNOWN = 2 };

/* A lookup whose outcome depends on the state before: the set and line. */
struct cache_unknown {
	uint64_t set;
	uint64_t tag;
};

struct cache_model {
	uint64_t sets_mask;
	uint32_t assoc;
	uint32_t line_bits;
	/* Set s is tags[s << way_bits ...], MRU first: sets are a power of two
	   apart, so that finding one takes a shift, not a multiply. */
	uint32_t way_bits;
	uint64_t *tags;
	/* This segment's unknown lookups: at most assoc per set. */
	struct cache_unknown *unknowns;
	uint32_t n_unknowns;
};

/* size, line: powers of two; sets = size / line / assoc (checked by the
   caller).  Starts as Cachegrind does.  Returns 0, or -1 if out of memory. */
static inline int cache_model_init(struct cache_model *c, uint32_t size, uint32_t assoc,
				   uint32_t line)
{
	uint64_t sets = (uint64_t)size / line / assoc;

	c->sets_mask = sets - 1;
	c->assoc = assoc;
	c->line_bits = (uint32_t)__builtin_ctz(line);
	c->way_bits = 0;
	while ((1u << c->way_bits) < assoc)
		c->way_bits++;
	c->n_unknowns = 0;
	c->tags = calloc(sets << c->way_bits, sizeof(*c->tags));
	c->unknowns = malloc(sets * assoc * sizeof(*c->unknowns));
	return c->tags != NULL && c->unknowns != NULL ? 0 : -1;
}

/* The length of tags (ways, and the padding between sets). */
static inline uint64_t cache_model_slots(const struct cache_model *c)
{
	return (c->sets_mask + 1) << c->way_bits;
}

/* Forgets the state: every way unknown. */
static inline void cache_model_forget(struct cache_model *c)
{
	for (uint64_t i = 0; i < cache_model_slots(c); i++)
		c->tags[i] = CACHE_UNKNOWN;
	c->n_unknowns = 0;
}

static inline void cache_model_free(struct cache_model *c)
{
	free(c->tags);
	free(c->unknowns);
	c->tags = NULL;
	c->unknowns = NULL;
}

/* Looks tag up in one set and makes it the set's most recently used.
   An unknown outcome's event number goes to *event. */
static inline __attribute__((always_inline)) enum ref_outcome
cache_set_ref(struct cache_model *c, uint64_t set_no, uint64_t tag, uint32_t *event)
{
	uint64_t *set = c->tags + (set_no << c->way_bits);

	if (set[0] == tag)
		return REF_HIT;
	/* Searching and moving the ways down in one pass, until the line is
	   found or the least recently used drops out.  (Separate loops made
	   gcc call memmove for the move.) */
	uint64_t carried = set[0];
	set[0] = tag;
	for (uint32_t i = 1; i < c->assoc; i++) {
		uint64_t was = set[i];
		set[i] = carried;
		if (was == tag)
			return REF_HIT;
		carried = was;
	}
	if (__builtin_expect(carried != CACHE_UNKNOWN, 1))
		return REF_MISS;
	*event = c->n_unknowns;
	c->unknowns[c->n_unknowns++] = (struct cache_unknown){ set_no, tag };
	return REF_UNKNOWN;
}

/* One reference of size bytes (1-255, at most one line) at addr: a miss if
   a line of it missed, else unknown if a line's outcome is (events[0] and
   events[1] then say which; CACHE_NO_EVENT for none), else a hit. */
static inline __attribute__((always_inline)) enum ref_outcome
cache_ref(struct cache_model *c, uint64_t addr, uint32_t size, uint32_t events[2])
{
	uint64_t block1 = addr >> c->line_bits;
	uint64_t block2 = (addr + size - 1) >> c->line_bits;

	events[0] = events[1] = CACHE_NO_EVENT;
	if (block1 == block2)
		return cache_set_ref(c, block1 & c->sets_mask, block1, &events[0]);
	/* Straddling: both lines are looked up, for their LRU updates. */
	enum ref_outcome r1 = cache_set_ref(c, block1 & c->sets_mask, block1, &events[0]);
	enum ref_outcome r2 = cache_set_ref(c, block2 & c->sets_mask, block2, &events[1]);
	if (r1 == REF_MISS || r2 == REF_MISS)
		return REF_MISS;
	if (r1 == REF_HIT)
		events[0] = CACHE_NO_EVENT;
	if (r2 == REF_HIT)
		events[1] = CACHE_NO_EVENT;
	return r1 | r2 ? REF_UNKNOWN : REF_HIT;
}

/* A reference to a cache whose state is known: 1 if it missed. */
static inline __attribute__((always_inline)) int cache_ref_is_miss(struct cache_model *c,
								   uint64_t addr, uint32_t size)
{
	uint32_t events[2];
	return cache_ref(c, addr, size, events) != REF_HIT;
}

/*
 * Once the state before a segment is known (before: tags as c's),
 * decides the outcome of each of c's unknown lookups (missed[k] for
 * c->unknowns[k]) and turns c's state into the exact state after the
 * segment (cache_settle.c).  0, or -1 if out of memory.
 */
int cache_settle(struct cache_model *c, const uint64_t *before, uint8_t *missed);

#endif
