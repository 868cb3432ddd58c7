/*
 * One cache level of the general model: the seam that replacement
 * policies, write policies and prefetchers plug into.  Internal to
 * simulate/.
 *
 * A level is a geometry (sets of ways, bit-selection set index), a word
 * per way holding its line's tag and flags, a replacement policy's state
 * per way, a write policy and an optional prefetcher.  Ways never move: a
 * policy keeps its order in its state (LRU: each way's age), so whatever
 * is kept per line beside the word (the cache-use issue's use masks and
 * loader) stays where its line is.
 *
 * A hierarchy's driver hands a level its references a bunch at a time
 * (level_take), in program order.  The level runs them through the loop
 * compiled for its policy and prefetcher, chosen once when it is made
 * (level.c's table): no function pointer is called per reference.
 *
 * A way's word is its line's tag shifted left by one, its dirty flag in
 * bit 0: the tag is the line's number (Cachegrind's: every way starts as
 * line 0, which only set 0 can hold).  A reference that straddles two
 * lines looks both up and counts as one: a dirty miss if either line's
 * was, else a miss if either missed.
 *
 * Callgrind 3.19's write-back and cache-use models keep tags otherwise,
 * and a level that is to count as they do takes their form
 * (callgrind_tags):
 * the address's low 32 bits with the set and offset bits cleared (its
 * tag_mask is an unsigned int), so lines 4 GiB apart are one line to it,
 * every way starts as tag 0 (in every set), two lines are told apart for
 * straddling by their sets, and a prefetch installs the bare line number
 * (cachesim_ref's tag), compared whole (so, as there, a prefetched line
 * seldom serves a demand reference, and bit 0 of its number reads as
 * dirty when one evicts it).
 */
#ifndef CGTRACE_LEVEL_H
#define CGTRACE_LEVEL_H

#include <stddef.h>
#include <stdint.h>

/* A line's flag, bit 0 of its word. */
#define LEVEL_DIRTY 1u

/* A reference: read or write, and whether the level's prefetcher sees it
   before it is looked up (the driver decides which references a
   prefetcher observes: Callgrind's, the L1 misses, and with write-back
   every write). */
#define LEVEL_WRITE 1u
#define LEVEL_OBSERVED 2u

struct level_ref {
	uint64_t addr;
	uint8_t size;		/* 1-255 bytes, at most two lines */
	uint8_t flags;		/* LEVEL_WRITE, LEVEL_OBSERVED */
	/* With use kept: further uses of its line this reference stands for
	   (a run of fetches from one line, which no other reference of the
	   level comes between); one line then */
	uint16_t more;
	uint32_t handle;	/* the driver's (what the outcome is charged to); the
				   level passes it by */
};

enum level_outcome {
	LEVEL_HIT = 0,
	LEVEL_MISS = 1,
	LEVEL_MISS_DIRTY = 2,	/* a miss whose fill evicted a dirty line (write-back) */
};

/* The replacement policies, by level.c's table. */
enum level_replacement { LEVEL_LRU, LEVEL_FIFO, LEVEL_PLRU, LEVEL_N_REPLACEMENTS };

/* The prefetchers.  LEVEL_PREFETCH_CALLGRIND is Callgrind 3.19's
   --simulate-hwpref=yes (sim.c, prefetch_LL_doref): 8 streams, one per
   4 KiB page modulo 8; after two sequential lines up (down) in a stream,
   each further one prefetches the line 5 lines ahead (behind). */
enum level_prefetcher { LEVEL_PREFETCH_NONE, LEVEL_PREFETCH_CALLGRIND, LEVEL_N_PREFETCHERS };

/* What a level is: its model. */
struct level_config {
	uint32_t size, assoc, line;	/* powers of two but assoc; sets = size / line / assoc */
	uint8_t replacement;		/* enum level_replacement */
	uint8_t prefetcher;		/* enum level_prefetcher */
	uint8_t write_back;		/* a write makes its line dirty; evicting one is a dirty miss */
	uint8_t no_write_allocate;	/* a write that misses does not fill */
	/* Callgrind 3.19's tags (see above), to count as its write-back and
	   cache-use models do */
	uint8_t callgrind_tags;
	/* Each line's use, as Callgrind's --cacheuse=yes keeps it: the
	   references to it since its fill (that one included) and a 32-bit
	   mask of the parts of it they touched (a bit per line/32 bytes, two
	   per byte of a 16-byte line), told in the report of the fill that
	   evicts it. */
	uint8_t track_use;
	uint8_t report;		/* enum level_report_kind */
};

/* What a level tells of each line it looks up, for a consumer that keeps
   something per line (a loader to charge at its eviction): the slot
   (set * assoc + way) the line is in, which stays its own while it is
   resident. */
enum level_report_kind {
	LEVEL_REPORT_NONE,
	LEVEL_REPORT_FILLS,	/* the lines filled */
	LEVEL_REPORT_LOOKUPS,	/* every line looked up */
};

struct level_report {
	uint32_t ref;		/* the reference's index in the bunch */
	uint32_t slot;
	uint32_t count, mask;	/* filled, with track_use: the use of the line evicted */
	uint8_t filled;
	uint8_t second;		/* the second line of a straddling reference */
};

/* A line's use (track_use), by slot. */
struct level_use {
	uint32_t count, mask;
};

struct level_stream_prefetcher {
	uint32_t last_line[8];
	int32_t run[8];		/* lines in sequence: > 0 up, < 0 down */
};

struct level;
typedef uint32_t level_take_fn(struct level *L, const struct level_ref *refs, uint32_t n,
			       uint8_t *outcome, struct level_report *reports);

struct level {
	struct level_config config;
	/* Set s, at sets + s * set_bytes (on host cache lines of its own):
	   the way touched last (uint16_t, then padding to 8 bytes), with
	   policies that a second touch leaves as they are (LRU: the youngest),
	   so that a hit there needs no search; the words, [assoc] uint64_t:
	   tag | flags; the policy's state, [assoc] uint16_t (LRU: ages, 0 the
	   youngest).  Together, so that a lookup takes few host lines. */
	uint8_t *sets;
	size_t set_bytes;
	uint64_t sets_mask;
	uint64_t callgrind_tag_mask;	/* Callgrind's tag_mask, 32 bits */
	uint32_t assoc, line_bits;
	level_take_fn *take;	/* the loop for the policy and prefetcher */
	/* Touching the way a set touched last changes nothing (the policy's
	   touch_again_unchanged: every policy so far): see level_use_view,
	   level_hit_view. */
	int again_unchanged;
	/* Its sets are too many to stay in the host's caches: the loop asks
	   for them ahead (level_take_with). */
	int look_ahead;
	struct level_use *use;	/* [sets * assoc], with track_use */
	/* With track_use, each set's line touched last again (its word
	   without flags, and its way), in a few KiB that stay in the host's
	   nearest cache where the sets do not: most references use that
	   line, and the loop counts them there (level_take_with). */
	struct level_mru {
		uint64_t key;
		uint32_t way;
	} *mru;
	/* The line the last reference looked up, if it was one line and left
	   it in its set (level_take_with): set UINT64_MAX if none. */
	struct level_last_line {
		uint64_t set, key, line;
		int written, observed;
	} last;
	struct level_stream_prefetcher stream;
	uint64_t prefetches_up, prefetches_down;	/* issued, for -v */
};

/* Set s's parts (see struct level). */
static inline uint16_t *level_last_way(const struct level *L, uint64_t s)
{
	return (uint16_t *)(L->sets + s * L->set_bytes);
}

static inline uint64_t *level_words(const struct level *L, uint64_t s)
{
	return (uint64_t *)(L->sets + s * L->set_bytes + 8);
}

static inline uint16_t *level_state(const struct level *L, uint64_t s)
{
	return (uint16_t *)(level_words(L, s) + L->assoc);
}

/* The use masks (track_use) of the parts of a line from byte off on, and
   up to byte off, in a level of lines of 2^line_bits bytes: Callgrind's
   line_start_mask and line_end_mask, a bit per line/32 bytes. */
static inline uint32_t level_use_from(uint32_t line_bits, uint64_t off)
{
	return ~0u << ((off << 5) >> line_bits);
}

static inline uint32_t level_use_to(uint32_t line_bits, uint64_t off)
{
	uint64_t last = ((off << 5) + 31) >> line_bits;
	return last >= 31 ? ~0u : (2u << last) - 1;
}

/* What level_use_last reads of a level that keeps use, as a caller's
   local: through the level, each store of a use would make the compiler
   read its fields again. */
struct level_use_view {
	struct level_mru *mru;
	struct level_use *use;
	uint64_t sets_mask, tag_mask;
	uint32_t line_bits, assoc;
	int callgrind_tags;
	/* level_use_last's answer is the level's: it keeps use, reports no
	   lookups, has no write-back, and its policy leaves a set as it is
	   when its last way is touched again */
	int shortcut;
};

static inline struct level_use_view level_use_view_of(const struct level *L)
{
	return (struct level_use_view){ L->mru, L->use, L->sets_mask, L->callgrind_tag_mask,
					L->line_bits, L->assoc, L->config.callgrind_tags,
					L->again_unchanged && L->config.track_use &&
						L->config.report != LEVEL_REPORT_LOOKUPS &&
						!L->config.write_back };
}

/* A one-line reference to the line its set touched last, in a level that
   keeps use (track_use) and reports no lookups, whose policy a second
   touch leaves as it is: a hit that changes nothing but the line's use,
   level_take's answer without a lookup.  1 if it was that (its use
   counted), else 0 (nothing done).  A read, or anything without
   write-back (level_use_again asks all this of the level). */
static inline __attribute__((always_inline)) int
level_use_last(const struct level_use_view *v, uint64_t addr, uint32_t size, uint32_t uses)
{
	const uint64_t last_byte = addr + size - 1;
	const uint64_t line = addr >> v->line_bits, last_line = last_byte >> v->line_bits;
	const uint64_t set = line & v->sets_mask;
	uint64_t key;
	/* (two lines as the tag form tells them apart: see level_straddles) */
	if (v->callgrind_tags) {
		if ((last_line & v->sets_mask) != set)
			return 0;
		key = addr & v->tag_mask;
	} else {
		if (last_line != line)
			return 0;
		key = line << 1;
	}
	const struct level_mru *mru = &v->mru[set];
	if (mru->key != key)
		return 0;
	const uint64_t line_mask = ((uint64_t)1 << v->line_bits) - 1;
	struct level_use *use = &v->use[set * v->assoc + mru->way];
	use->count += uses;
	use->mask |= level_use_from(v->line_bits, addr & line_mask) &
		     level_use_to(v->line_bits, last_byte & line_mask);
	return 1;
}

/* level_use_last where the level allows it (a caller's shortcut before
   it hands the reference to level_take): 1 if it counted the reference. */
static inline __attribute__((always_inline)) int
level_use_again(const struct level_use_view *v, uint64_t addr, uint32_t size, uint32_t uses)
{
	return v->shortcut && level_use_last(v, addr, size, uses);
}

/* What level_hit_again reads of a level, as a caller's local (see
   struct level_use_view). */
struct level_hit_view {
	const uint8_t *sets;
	size_t set_bytes;
	uint64_t sets_mask;
	uint32_t line_bits;
	/* level_hit_again's answer is the level's: its tags are plain, its
	   policy leaves a set as it is when its last way is touched again,
	   and it has no write-back, prefetcher, use or reports */
	int shortcut;
};

static inline struct level_hit_view level_hit_view_of(const struct level *L)
{
	const struct level_config *c = &L->config;
	return (struct level_hit_view){ L->sets, L->set_bytes, L->sets_mask, L->line_bits,
					L->again_unchanged && !c->callgrind_tags && !c->write_back &&
						c->prefetcher == LEVEL_PREFETCH_NONE && !c->track_use &&
						c->report == LEVEL_REPORT_NONE };
}

/* A one-line reference to the line in its set's way touched last, where
   the view allows it (shortcut): a hit that changes nothing, level_take's
   answer without a call.  A caller asks it only while it has no
   reference waiting for level_take (the state is then the one the
   reference would find).  1 if it was that, else 0. */
static inline __attribute__((always_inline)) int
level_hit_again(const struct level_hit_view *v, uint64_t addr, uint32_t size)
{
	const uint64_t line = addr >> v->line_bits;
	if (!v->shortcut || (addr + size - 1) >> v->line_bits != line)
		return 0;
	const uint8_t *set = v->sets + (line & v->sets_mask) * v->set_bytes;
	const uint16_t way = *(const uint16_t *)set;	/* (level_last_way) */
	return (((const uint64_t *)(set + 8))[way] & ~(uint64_t)LEVEL_DIRTY) == line << 1;
}

struct cgt_cache_config;
struct cgt_cache_model;

/* The level model m gives cache level (enum cgt_level) of geometry cc:
   its replacement policy, prefetcher and write policy (with write-back,
   LL's, with Callgrind's tags, to count dirty misses as it does; the L1s
   are write-through, as Callgrind's); no use kept, no
   reports.  The one place a run's options become a level. */
struct level_config level_config_of(const struct cgt_cache_config *cc,
				    const struct cgt_cache_model *m, int level);

/* Why config cannot be a level (NULL: it can): a set count or line that is
   not a power of two, more ways than a policy can order or ways that are
   not a power of two where it needs them, a line under 16 bytes,
   Callgrind's prefetcher and write-back tags with a policy they do not
   go with. */
const char *level_check(const struct level_config *config);

/* A cold level (as level_clear leaves it).  0, or -1 if out of memory. */
int level_init(struct level *L, const struct level_config *config);
void level_free(struct level *L);

/* Every way back to tag 0, clean, unused, in the policy's first order;
   the prefetcher's streams forgotten (Callgrind's cachesim_clear, at
   CALLGRIND_START/STOP_INSTRUMENTATION). */
void level_clear(struct level *L);

/* Looks refs[0 .. n) up in order, each after its prefetches if it is
   observed: outcome[k] is refs[k]'s enum level_outcome.  With a report
   kind, the lines' reports go to reports (room for 2 n), in order: their
   number is returned. */
static inline uint32_t level_take(struct level *L, const struct level_ref *refs, uint32_t n,
				  uint8_t *outcome, struct level_report *reports)
{
	return L->take(L, refs, n, outcome, reports);
}

/* The policies' names ("lru"), and the prefetchers' ("none",
   "callgrind"), for options and messages. */
extern const char *const level_replacement_names[LEVEL_N_REPLACEMENTS];
extern const char *const level_prefetcher_names[LEVEL_N_PREFETCHERS];

#endif
