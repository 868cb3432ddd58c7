/*
 * The loop of a level (level.h), written once and compiled for each
 * replacement policy and prefetcher: a policy file includes this, defines
 * its hooks as static inline functions and a const struct level_hooks of
 * them, and instantiates LEVEL_POLICY_LOOPS (see level_lru.c).  The hooks
 * reach the loop through a constant, so the compiler calls none of them
 * through a pointer: each policy gets a loop of its own, as zstd compiles
 * a loop per strategy.
 *
 * A policy's hooks (after DynamoRIO's cache_replacement_policy_t), on the
 * state of one set ([assoc] uint16_t, the policy's to use):
 *   first(state, assoc)          the state of a cold set
 *   touch(state, assoc, way)     the way was looked up and found
 *   fill(state, assoc, way)      a line was put in the way
 *   victim(state, assoc)         the way a miss replaces
 *   prefer(state, a, b)          a line found in ways a and b: is a the
 *                                one the policy would find (only a cold
 *                                set, whose ways all hold tag 0, and
 *                                Callgrind's prefetch tags make twins;
 *                                elsewhere the first found is taken)
 *
 * Internal to simulate/.
 */
#ifndef CGTRACE_LEVEL_LOOP_H
#define CGTRACE_LEVEL_LOOP_H

#include "level.h"

struct level_hooks {
	void (*touch)(uint16_t *state, uint32_t assoc, uint32_t way);
	void (*fill)(uint16_t *state, uint32_t assoc, uint32_t way);
	uint32_t (*victim)(const uint16_t *state, uint32_t assoc);
	int (*prefer)(const uint16_t *state, uint32_t a, uint32_t b);
	/* touching the way touched or filled last changes nothing (LRU: it
	   is the youngest already; FIFO: a hit changes nothing), so a
	   reference to the line looked up last is a hit without a lookup
	   (see level_take_with) */
	int touch_again_unchanged;
	/* a touch makes the way the one a lookup finds first among twins
	   (LRU: the youngest; FIFO: a hit changes nothing) */
	int touch_reorders;
};

/* What level.c's table holds of a policy. */
struct level_policy {
	const struct level_hooks *hooks;	/* their flags (the loops have the hooks compiled in) */
	uint32_t max_assoc;
	int power_of_two_ways;	/* it orders only so many ways (a tree) */
	/* A hit of Callgrind's prefetcher in its write-back tag form
	   (level_prefetch) leaves the way the set touched last as it is: right
	   where the touch makes the way the one found first (LRU) or changes
	   nothing (FIFO); otherwise the pair is refused. */
	int callgrind_prefetch_tags;
	void (*first)(uint16_t *state, uint32_t assoc);
	level_take_fn *take[LEVEL_N_PREFETCHERS];
	level_take_fn *take_use;
};

/* Policy replacement (enum level_replacement) of level.c's table. */
const struct level_policy *level_policy_of(int replacement);

#define LEVEL_NO_WAY UINT32_MAX

/* Ages, a policy state that LRU and FIFO share: each way's age, 0 the
   newest, a permutation of 0 .. assoc-1 (a cold set's in way order, as
   its tags 0 are); the oldest is the victim, the newer of twins found. */
static inline void level_ages_first(uint16_t *age, uint32_t assoc)
{
	for (uint32_t w = 0; w < assoc; w++)
		age[w] = (uint16_t)w;
}

/* way becomes the newest; those newer than it was age by one */
static inline __attribute__((always_inline)) void level_ages_renew(uint16_t *age, uint32_t assoc,
								   uint32_t way)
{
	const uint16_t was = age[way];
	for (uint32_t w = 0; w < assoc; w++)
		age[w] += age[w] < was;
	age[way] = 0;
}

static inline __attribute__((always_inline)) uint32_t level_ages_oldest(const uint16_t *age,
									 uint32_t assoc)
{
	uint32_t w = 0;
	while (age[w] != assoc - 1)
		w++;
	return w;
}

static inline __attribute__((always_inline)) int level_ages_newer(const uint16_t *age, uint32_t a,
								   uint32_t b)
{
	return age[a] < age[b];
}

/* The way of set (words, state) whose tag is key (its flags aside, or
   with them if exact), the policy's choice among twins -- if there may be
   any (twins), else the first found. */
static inline __attribute__((always_inline)) uint32_t
level_find(const uint64_t *words, const uint16_t *state, uint32_t assoc, uint64_t key, int exact,
	   int twins, const struct level_hooks *h)
{
	const uint64_t mask = exact ? ~(uint64_t)0 : ~(uint64_t)LEVEL_DIRTY;
	uint32_t found = LEVEL_NO_WAY;
	if (!twins) {
		for (uint32_t w = 0; w < assoc; w++)
			if ((words[w] & mask) == key)
				return w;
		return LEVEL_NO_WAY;
	}
	for (uint32_t w = 0; w < assoc; w++)
		if ((words[w] & mask) == key && (found == LEVEL_NO_WAY || h->prefer(state, w, found)))
			found = w;
	return found;
}

/* Where a line's report goes (use: the loop reports or tracks use, else
   neither), and the part of the line the reference touches (track_use). */
struct level_line_use {
	struct level_report **to;
	uint32_t ref, mask, uses;
	uint8_t second;
};

/* The found or filled way's use and report (level_set_ref). */
static inline __attribute__((always_inline)) void
level_line_used(struct level *L, uint64_t set, uint32_t way, int filled,
		const struct level_line_use *u)
{
	const uint32_t slot = (uint32_t)set * L->assoc + way;
	struct level_report r = { u->ref, slot, 0, 0, (uint8_t)filled, u->second };
	if (L->config.track_use) {
		L->mru[set] = (struct level_mru){ level_words(L, set)[way] & ~(uint64_t)LEVEL_DIRTY, way };
		struct level_use *use = &L->use[slot];
		if (filled) {
			r.count = use->count;
			r.mask = use->mask;
			*use = (struct level_use){ u->uses, u->mask };
		} else {
			use->count += u->uses;
			use->mask |= u->mask;
		}
	}
	if (L->config.report == LEVEL_REPORT_LOOKUPS || (filled && L->config.report == LEVEL_REPORT_FILLS))
		*(*u->to)++ = r;
}

/* One line's lookup in its set: a fill on a miss (but a write's, without
   write-allocate).  u: NULL, or the line's use and report. */
static inline __attribute__((always_inline)) enum level_outcome
level_set_ref(struct level *L, uint64_t set, uint64_t key, int write, const struct level_hooks *h,
	      const struct level_line_use *u)
{
	const uint32_t assoc = L->assoc;
	uint64_t *words = level_words(L, set);
	uint16_t *state = level_state(L, set), *last_way = level_last_way(L, set);
	const int write_back = L->config.write_back;
	uint32_t way = *last_way;

	/* The way touched last holds the line: the policy would find it there
	   (LRU: the youngest of any twins), and touching it again changes
	   nothing. */
	if (h->touch_again_unchanged && (words[way] & ~(uint64_t)LEVEL_DIRTY) == key) {
		if (write && write_back)
			words[way] |= LEVEL_DIRTY;
		if (u != NULL)
			level_line_used(L, set, way, 0, u);
		return LEVEL_HIT;
	}
	/* Twins: tag 0, which every way of a cold set holds, or a line a
	   prefetch installed in Callgrind's form beside its demand twin. */
	way = level_find(words, state, assoc, key, 0,
			 key == 0 || L->config.prefetcher != LEVEL_PREFETCH_NONE, h);
	if (way != LEVEL_NO_WAY) {
		if (write && write_back)
			words[way] |= LEVEL_DIRTY;
		h->touch(state, assoc, way);
		*last_way = (uint16_t)way;
		if (u != NULL)
			level_line_used(L, set, way, 0, u);
		return LEVEL_HIT;
	}
	if (write && L->config.no_write_allocate)
		return LEVEL_MISS;
	way = h->victim(state, assoc);
	int evicted_dirty = write_back && (words[way] & LEVEL_DIRTY);
	words[way] = key | (write && write_back ? LEVEL_DIRTY : 0);
	h->fill(state, assoc, way);
	*last_way = (uint16_t)way;
	if (u != NULL)
		level_line_used(L, set, way, 1, u);
	return evicted_dirty ? LEVEL_MISS_DIRTY : LEVEL_MISS;
}

/* The set and key of addr's line, in the level's tag form. */
static inline __attribute__((always_inline)) void level_line(const struct level *L, uint64_t addr,
							     uint64_t *set, uint64_t *key)
{
	if (L->config.callgrind_tags) {
		*set = (addr >> L->line_bits) & L->sets_mask;
		*key = addr & L->callgrind_tag_mask;
	} else {
		uint64_t line = addr >> L->line_bits;
		*set = line & L->sets_mask;
		*key = line << 1;
	}
}

/* Whether a reference is two lookups: two lines, as the tag form tells
   them apart (Callgrind's write-back tags by set: in a cache of one set a
   straddle is one lookup there). */
static inline __attribute__((always_inline)) int level_straddles(const struct level *L,
								  uint64_t addr, uint32_t size)
{
	uint64_t first = addr >> L->line_bits, last = (addr + size - 1) >> L->line_bits;
	if (L->config.callgrind_tags)
		return (first & L->sets_mask) != (last & L->sets_mask);
	return first != last;
}

/* One reference: both lines of a straddling one.  use: the loop reports
   or tracks use (to: the reports; ref: the reference's index). */
static inline __attribute__((always_inline)) enum level_outcome
level_ref(struct level *L, uint64_t addr, uint32_t size, int write, const struct level_hooks *h,
	  const int use, struct level_report **to, uint32_t ref, uint32_t uses)
{
	uint64_t set1, key1, set2, key2;
	const uint64_t line_mask = ((uint64_t)1 << L->line_bits) - 1;
	const uint64_t last = addr + size - 1;
	struct level_line_use u1 = { to, ref, 0, uses, 0 }, u2 = { to, ref, 0, 1, 1 };
	level_line(L, addr, &set1, &key1);
	if (!level_straddles(L, addr, size)) {
		if (use)
			u1.mask = level_use_from(L->line_bits, addr & line_mask) & level_use_to(L->line_bits, last & line_mask);
		return level_set_ref(L, set1, key1, write, h, use ? &u1 : NULL);
	}
	level_line(L, last, &set2, &key2);
	if (use) {
		u1.mask = level_use_from(L->line_bits, addr & line_mask);
		u2.mask = level_use_to(L->line_bits, last & line_mask);
	}
	enum level_outcome r1 = level_set_ref(L, set1, key1, write, h, use ? &u1 : NULL);
	enum level_outcome r2 = level_set_ref(L, set2, key2, write, h, use ? &u2 : NULL);
	if (r1 == LEVEL_MISS_DIRTY || r2 == LEVEL_MISS_DIRTY)
		return LEVEL_MISS_DIRTY;
	return r1 | r2 ? LEVEL_MISS : LEVEL_HIT;
}

/* A prefetch of addr's line: looked up as a read, its outcome counted
   nowhere; with Callgrind's write-back tags, its line number installed
   and compared whole (see level.h). */
static inline __attribute__((always_inline)) void
level_prefetch(struct level *L, uint64_t addr, const struct level_hooks *h)
{
	if (!L->config.callgrind_tags) {
		level_ref(L, addr, 1, 0, h, 0, NULL, 0, 1);
		return;
	}
	const uint32_t assoc = L->assoc;
	uint64_t line = addr >> L->line_bits;
	uint64_t set = line & L->sets_mask;
	uint64_t *words = level_words(L, set);
	uint16_t *state = level_state(L, set);
	uint32_t way = level_find(words, state, assoc, line, 1, 1, h);
	if (way == LEVEL_NO_WAY) {
		way = h->victim(state, assoc);
		words[way] = line;
		h->fill(state, assoc, way);
	} else {
		h->touch(state, assoc, way);
		/* found exactly: a twin the policy would not find first, unless
		   the touch made it so (LRU: the youngest) */
		if (!h->touch_reorders)
			return;
	}
	*level_last_way(L, set) = (uint16_t)way;
}

/* Callgrind's stream prefetcher (sim.c, prefetch_LL_doref), in its
   types: a line number of 32 bits, 5 lines ahead or behind. */
static inline __attribute__((always_inline)) void
level_stream_observe(struct level *L, uint64_t addr, const struct level_hooks *h)
{
	struct level_stream_prefetcher *p = &L->stream;
	uint32_t stream = (uint32_t)(addr >> 12) % 8;
	uint32_t line = (uint32_t)(addr >> L->line_bits);
	uint32_t last = p->last_line[stream];
	int32_t *run = &p->run[stream];

	if (line == last)
		return;
	if (*run == 0) {
		if (last + 1 == line)
			(*run)++;
		else if (last - 1 == line)
			(*run)--;
	} else if (*run > 0) {
		if (last + 1 == line) {
			if (++*run >= 2) {
				L->prefetches_up++;
				level_prefetch(L, addr + 5 * ((uint64_t)1 << L->line_bits), h);
			}
		} else {
			*run = 0;
		}
	} else {
		if (last - 1 == line) {
			if (--*run <= -2) {
				L->prefetches_down++;
				level_prefetch(L, addr - 5 * ((uint64_t)1 << L->line_bits), h);
			}
		} else {
			*run = 0;
		}
	}
	p->last_line[stream] = line;
}

/* How many references ahead of its lookup a reference's set is asked of
   the host, and how many of the set's host lines at most. */
#define LEVEL_LOOK_AHEAD 16
#define LEVEL_FETCHED_LINES 4
/* The most bytes of sets taken to stay in the host's caches. */
#define LEVEL_HOST_CACHED (512 * 1024)

static inline __attribute__((always_inline)) void level_fetch_set(const struct level *L,
								   uint64_t addr)
{
	const char *set = (const char *)level_last_way(L, (addr >> L->line_bits) & L->sets_mask);
	for (size_t b = 0; b < L->set_bytes && b < 64 * LEVEL_FETCHED_LINES; b += 64)
		__builtin_prefetch(set + b);
}

/* The loop.  use: the level tracks use or reports lines (then without a
   prefetcher: Callgrind's cache use simulates none). */
static inline __attribute__((always_inline)) uint32_t
level_take_with(struct level *L, const struct level_ref *refs, uint32_t n, uint8_t *outcome,
		struct level_report *reports, const struct level_hooks *h,
		enum level_prefetcher prefetcher, const int use)
{
	struct level_report *reported = reports;
	/* The line looked up last (L->last), if the reference was one line and
	   left it in its set: then it is the set's youngest, dirty if clean, a
	   write it would make nothing, and the prefetcher saw it last if
	   observed.  (Its number too: Callgrind's write-back tags make lines
	   4 GiB apart one, which its prefetcher tells apart.)  Kept from bunch
	   to bunch: loops write one line execution after execution. */
	struct level_last_line last = L->last;
	const int write_back = L->config.write_back;
	/* The host fetches the sets of the references a few ahead meanwhile:
	   a large level's sets are far apart, and most of its lookups would
	   wait for memory.  (Not where use is kept: those are Callgrind's L1s,
	   and an LL that sees only their fills, a few at a time.) */
	const int look_ahead = !use && L->look_ahead;
	const struct level_use_view view = level_use_view_of(L);
	for (uint32_t k = 0; k < n && k < LEVEL_LOOK_AHEAD && look_ahead; k++)
		level_fetch_set(L, refs[k].addr);
	for (uint32_t k = 0; k < n; k++) {
		if (k + LEVEL_LOOK_AHEAD < n && look_ahead)
			level_fetch_set(L, refs[k + LEVEL_LOOK_AHEAD].addr);
		const uint64_t addr = refs[k].addr;
		const int write = refs[k].flags & LEVEL_WRITE;
		const int observed = prefetcher != LEVEL_PREFETCH_NONE && (refs[k].flags & LEVEL_OBSERVED);
		uint64_t set = UINT64_MAX, key = 0;
		/* (each reference to a line is a use of it: none is skipped, but
		   one to the line its set touched last is counted there) */
		if (h->touch_again_unchanged && use && L->config.track_use &&
		    L->config.report != LEVEL_REPORT_LOOKUPS && (!write || !write_back) &&
		    level_use_last(&view, addr, refs[k].size, 1u + refs[k].more)) {
			outcome[k] = LEVEL_HIT;
			continue;
		}
		if (h->touch_again_unchanged && !use && !level_straddles(L, addr, refs[k].size)) {
			level_line(L, addr, &set, &key);
			if (set == last.set && key == last.key && addr >> L->line_bits == last.line &&
			    (!write || last.written) && (!observed || last.observed)) {
				outcome[k] = LEVEL_HIT;
				continue;
			}
		}
		if (observed)
			level_stream_observe(L, addr, h);
		outcome[k] = (uint8_t)level_ref(L, addr, refs[k].size, write, h, use, &reported, k,
						1u + refs[k].more);
		if (use)
			continue;	/* (the last line is not looked at) */
		/* a write that missed without write-allocate left no line */
		int left = !(write && L->config.no_write_allocate && outcome[k] != LEVEL_HIT);
		last = (struct level_last_line){ left ? set : UINT64_MAX, key, addr >> L->line_bits,
						 !write_back || write, observed };
	}
	if (!use)
		L->last = last;
	return (uint32_t)(reported - reports);
}

/* Defines NAME_take_none and NAME_take_callgrind, the loops of policy
   NAME for each prefetcher, and NAME_take_use, its loop that tracks use
   or reports lines, from its hooks HOOKS (a const struct level_hooks). */
#define LEVEL_POLICY_LOOPS(NAME, HOOKS)                                                         \
	static uint32_t NAME##_take_none(struct level *L, const struct level_ref *refs, uint32_t n, \
					 uint8_t *outcome, struct level_report *reports)        \
	{                                                                                       \
		return level_take_with(L, refs, n, outcome, reports, &HOOKS, LEVEL_PREFETCH_NONE, 0); \
	}                                                                                       \
	static uint32_t NAME##_take_callgrind(struct level *L, const struct level_ref *refs,       \
					      uint32_t n, uint8_t *outcome,                     \
					      struct level_report *reports)                     \
	{                                                                                       \
		return level_take_with(L, refs, n, outcome, reports, &HOOKS,                    \
				       LEVEL_PREFETCH_CALLGRIND, 0);                            \
	}                                                                                       \
	static uint32_t NAME##_take_use(struct level *L, const struct level_ref *refs, uint32_t n,  \
					uint8_t *outcome, struct level_report *reports)         \
	{                                                                                       \
		return level_take_with(L, refs, n, outcome, reports, &HOOKS, LEVEL_PREFETCH_NONE, 1); \
	}

#define LEVEL_POLICY_TAKES(NAME) { NAME##_take_none, NAME##_take_callgrind }, NAME##_take_use

#endif
