/*
 * simulate/level.h: hand-computed sequences (FIFO's order, a PLRU tree, dirty evictions, a prefetch
 * that serves a later reference, a prefetch that evicts a dirty line,
 * Callgrind's write-back tags, straddles, no write-allocate), and random
 * sequences against an independent model of Callgrind 3.19's LL as its
 * sim.c describes it: a set is an array, most recently used first, of
 * tag words; plain lookups (cachesim_ref, and prefetches) compare line
 * numbers, write-back ones (cachesim_ref_wb) the address masked by a
 * 32-bit tag_mask with the dirty bit cleared.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "level.h"
#include "level_loop.h"

static struct level make(uint32_t size, uint32_t assoc, uint32_t line, int write_back,
			 int prefetcher, int callgrind_write_back)
{
	struct level L;
	struct level_config c = { .size = size, .assoc = assoc, .line = line,
				  .replacement = LEVEL_LRU, .prefetcher = (uint8_t)prefetcher,
				  .write_back = (uint8_t)write_back,
				  .callgrind_tags = (uint8_t)callgrind_write_back };
	CHECK(level_init(&L, &c) == 0);
	return L;
}

static int one(struct level *L, uint64_t addr, uint8_t size, unsigned flags)
{
	struct level_ref r = { addr, size, (uint8_t)flags, 0, 0 };
	uint8_t out = 0xff;
	level_take(L, &r, 1, &out, NULL);
	return out;
}

#define R(a) one(&L, (a), 4, 0)
#define W(a) one(&L, (a), 4, LEVEL_WRITE)
#define OBS(a) one(&L, (a), 4, LEVEL_OBSERVED)

/* One set of two ways, write-back: a dirty line's eviction is told, a
   clean one's is not; a write hit dirties. */
static void dirty_evictions(void)
{
	struct level L = make(128, 2, 64, 1, LEVEL_PREFETCH_NONE, 0);
	CHECK_EQ(W(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x3000), LEVEL_MISS_DIRTY);	/* evicts 0x1000, written */
	CHECK_EQ(R(0x4000), LEVEL_MISS);	/* evicts 0x2000, clean */
	CHECK_EQ(W(0x3004), LEVEL_HIT);		/* 0x3000 dirty now */
	CHECK_EQ(R(0x4000), LEVEL_HIT);
	CHECK_EQ(R(0x5000), LEVEL_MISS_DIRTY);	/* evicts 0x3000 */
	CHECK_EQ(R(0x6000), LEVEL_MISS);	/* evicts 0x4000 */
	level_free(&L);

	/* Without write-back nothing is dirty. */
	L = make(128, 2, 64, 0, LEVEL_PREFETCH_NONE, 0);
	CHECK_EQ(W(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x3000), LEVEL_MISS);
	level_free(&L);
}

/* Two sets of 16-byte lines: a reference across a line boundary looks
   both lines up, a dirty miss if either evicts a dirty line.  In a cache
   of one set, Callgrind looks a straddle up once. */
static void straddles(void)
{
	struct level L = make(64, 2, 16, 1, LEVEL_PREFETCH_NONE, 0);
	/* lines 0x1000 (set 0) and 0x1010 (set 1), both written */
	CHECK_EQ(one(&L, 0x100c, 8, LEVEL_WRITE), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	CHECK_EQ(R(0x1010), LEVEL_HIT);
	CHECK_EQ(R(0x200c), LEVEL_MISS);	/* set 0 only, whose cold way it takes */
	/* set 0 evicts 0x1000 (dirty), set 1 a cold way */
	CHECK_EQ(one(&L, 0x300c, 8, 0), LEVEL_MISS_DIRTY);
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x1010), LEVEL_HIT);
	level_free(&L);

	L = make(64, 4, 16, 0, LEVEL_PREFETCH_NONE, 0);
	CHECK_EQ(one(&L, 0x100c, 8, 0), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	CHECK_EQ(R(0x1010), LEVEL_HIT);
	level_free(&L);
	L = make(64, 4, 16, 1, LEVEL_PREFETCH_NONE, 1);
	CHECK_EQ(one(&L, 0x100c, 8, 0), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	CHECK_EQ(R(0x1010), LEVEL_MISS);	/* one set: only 0x1000 was looked up */
	level_free(&L);
}

static void no_write_allocate(void)
{
	struct level L;
	struct level_config c = { .size = 128, .assoc = 2, .line = 64, .write_back = 1,
				  .no_write_allocate = 1 };
	CHECK(level_init(&L, &c) == 0);
	CHECK_EQ(W(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_MISS);	/* the write did not fill */
	CHECK_EQ(W(0x1000), LEVEL_HIT);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x3000), LEVEL_MISS_DIRTY);
	level_free(&L);
}

/* One set of three 64-byte ways.  Three lines up one page: the third
   prefetches the line 5 ahead (0x101c0), taking the least recently used
   way, a dirty line, whose eviction nobody counts; the demand miss after
   it evicts a clean one; the prefetched line then hits. */
static void prefetch_hits_and_evicts_dirty(void)
{
	struct level L = make(192, 3, 64, 1, LEVEL_PREFETCH_CALLGRIND, 0);
	CHECK_EQ(W(0x20000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10040), LEVEL_MISS);
	CHECK_EQ(L.prefetches_up, 0);
	CHECK_EQ(OBS(0x10080), LEVEL_MISS);	/* not dirty: the prefetch took 0x20000 */
	CHECK_EQ(L.prefetches_up, 1);
	CHECK_EQ(R(0x101c0), LEVEL_HIT);
	CHECK_EQ(R(0x20000), LEVEL_MISS);	/* gone, and clean */
	level_free(&L);

	/* Down a page: the same, 5 lines behind. */
	L = make(192, 3, 64, 0, LEVEL_PREFETCH_CALLGRIND, 0);
	CHECK_EQ(OBS(0x10f00), LEVEL_MISS);
	CHECK_EQ(OBS(0x10ec0), LEVEL_MISS);
	CHECK_EQ(OBS(0x10e80), LEVEL_MISS);
	CHECK_EQ(L.prefetches_down, 1);
	CHECK_EQ(R(0x10e80 - 5 * 64), LEVEL_HIT);
	/* A break in the run starts it again. */
	CHECK_EQ(OBS(0x10000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10040), LEVEL_MISS);
	CHECK_EQ(L.prefetches_up, 0);
	/* Not observed: no prefetch. */
	CHECK_EQ(R(0x10080), LEVEL_MISS);
	CHECK_EQ(L.prefetches_up, 0);
	level_free(&L);
}

/* Callgrind's write-back tags: the prefetched line (its number, 0x101c0 >>
   6 = 0x407) does not serve the demand reference, and its low bit reads
   as dirty when a demand miss evicts it.  Lines 4 GiB apart are one. */
static void callgrind_write_back_tags(void)
{
	struct level L = make(192, 3, 64, 1, LEVEL_PREFETCH_CALLGRIND, 1);
	CHECK_EQ(W(0x20000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10040), LEVEL_MISS);
	CHECK_EQ(OBS(0x10080), LEVEL_MISS);
	CHECK_EQ(R(0x101c0), LEVEL_MISS);	/* evicts 0x10040 */
	CHECK_EQ(R(0x30000), LEVEL_MISS_DIRTY);	/* evicts the word 0x407 */
	CHECK_EQ(R(0x100030000), LEVEL_HIT);
	level_free(&L);
	/* and at the start, every set's ways are tag 0 */
	L = make(1024, 2, 64, 1, LEVEL_PREFETCH_NONE, 1);
	CHECK_EQ(R(0x100000100), LEVEL_HIT);
	level_free(&L);
	L = make(1024, 2, 64, 1, LEVEL_PREFETCH_NONE, 0);
	CHECK_EQ(R(0x100000100), LEVEL_MISS);
	CHECK_EQ(R(0), LEVEL_HIT);
	level_free(&L);
}

/* level_clear: cold again, streams forgotten. */
static void clear(void)
{
	struct level L = make(128, 2, 64, 1, LEVEL_PREFETCH_CALLGRIND, 0);
	CHECK_EQ(W(0x1000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10000), LEVEL_MISS);
	level_clear(&L);
	CHECK_EQ(R(0), LEVEL_HIT);		/* tag 0 of a cold set */
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x3000), LEVEL_MISS);	/* 0x1000 is gone clean */
	CHECK_EQ(OBS(0x10040), LEVEL_MISS);	/* last line 0: no run */
	CHECK_EQ(OBS(0x10080), LEVEL_MISS);
	CHECK_EQ(L.prefetches_up, 0);
	level_free(&L);
}

/* ---- the independent model ------------------------------------------ */

struct ref_cache {
	uint64_t *tags;		/* [sets][assoc], MRU first */
	uint32_t sets, assoc, line_bits, tag_shift;	/* tag_shift: line and set bits */
	int write_back, prefetch;
	uint32_t last[8];
	int32_t seq[8];
};

/* One set's lookup: plain (cachesim_setref: the whole word) or
   write-back (cachesim_setref_wb: the word without its dirty bit). */
static int ref_set(struct ref_cache *c, uint32_t set, uint64_t tag, int masked, int write)
{
	uint64_t *s = c->tags + (uint64_t)set * c->assoc;
	for (uint32_t i = 0; i < c->assoc; i++) {
		int match = masked ? (s[i] & ~(uint64_t)1) == tag : s[i] == tag;
		if (!match)
			continue;
		uint64_t t = s[i] | (masked && write ? 1 : 0);
		memmove(s + 1, s, i * sizeof(*s));
		s[0] = t;
		return 0;
	}
	uint64_t evicted = s[c->assoc - 1];
	memmove(s + 1, s, (c->assoc - 1) * sizeof(*s));
	s[0] = tag | (masked && write ? 1 : 0);
	return masked && (evicted & 1) ? 2 : 1;
}

/* cachesim_ref (masked 0: line numbers, lines told apart) or
   cachesim_ref_wb (masked 1: a 32-bit mask, sets told apart). */
static int ref_access(struct ref_cache *c, uint64_t a, uint32_t size, int masked, int write)
{
	uint64_t b = a + size - 1;
	if (!masked) {
		uint64_t l1 = a >> c->line_bits, l2 = b >> c->line_bits;
		if (l1 == l2)
			return ref_set(c, (uint32_t)(l1 & (c->sets - 1)), l1, 0, 0);
		int r1 = ref_set(c, (uint32_t)(l1 & (c->sets - 1)), l1, 0, 0);
		int r2 = ref_set(c, (uint32_t)(l2 & (c->sets - 1)), l2, 0, 0);
		return r1 || r2;
	}
	uint64_t mask = (uint32_t)~((1u << c->tag_shift) - 1);
	uint32_t set1 = (uint32_t)(a >> c->line_bits) & (c->sets - 1);
	uint32_t set2 = (uint32_t)(b >> c->line_bits) & (c->sets - 1);
	if (set1 == set2)
		return ref_set(c, set1, a & mask, 1, write);
	int r1 = ref_set(c, set1, a & mask, 1, write), r2 = ref_set(c, set2, b & mask, 1, write);
	return r1 == 2 || r2 == 2 ? 2 : r1 || r2;
}

static void ref_observe(struct ref_cache *c, uint64_t a)
{
	uint32_t st = (uint32_t)(a >> 12) % 8, block = (uint32_t)(a >> c->line_bits);
	uint64_t line = 1ull << c->line_bits;
	if (block == c->last[st])
		return;
	if (c->seq[st] == 0) {
		if (c->last[st] + 1 == block)
			c->seq[st]++;
		else if (c->last[st] - 1 == block)
			c->seq[st]--;
	} else if (c->seq[st] > 0) {
		if (c->last[st] + 1 == block) {
			if (++c->seq[st] >= 2)
				ref_access(c, a + 5 * line, 1, 0, 0);
		} else {
			c->seq[st] = 0;
		}
	} else {
		if (c->last[st] - 1 == block) {
			if (--c->seq[st] <= -2)
				ref_access(c, a - 5 * line, 1, 0, 0);
		} else {
			c->seq[st] = 0;
		}
	}
	c->last[st] = block;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Random references (runs up and down pages, repeats, writes, straddles,
   lines 4 GiB apart), in bunches, to caches of 1 to 8 sets and 1 to 8 ways, every
   combination of write-back (with Callgrind's tags) and prefetch: every
   outcome equals the independent model's. */
static void random_against_callgrind_model(void)
{
	unsigned mismatches = 0, dirty_seen = 0;
	for (int round = 0; round < 400; round++) {
		uint32_t sets = 1u << (next_random() % 4), assoc = 1 + (uint32_t)(next_random() % 8);
		uint32_t line = 16u << (next_random() % 3);
		int wb = (int)(next_random() & 1), pf = (int)(next_random() & 1);
		struct level L = make(sets * assoc * line, assoc, line, wb,
				      pf ? LEVEL_PREFETCH_CALLGRIND : LEVEL_PREFETCH_NONE, wb);
		struct ref_cache c = { calloc((size_t)sets * assoc, sizeof(uint64_t)), sets, assoc,
				       (uint32_t)__builtin_ctz(line), 0, wb, pf, { 0 }, { 0 } };
		c.tag_shift = c.line_bits + (uint32_t)__builtin_ctz(sets);
		uint64_t a = 0x40000 + (next_random() % 64) * line;
		/* in bunches of 1 to 64, as drivers hand them */
		struct level_ref bunch[64];
		uint8_t expected[64], got[64];
		for (int k = 0; k < 2000;) {
			uint32_t n = 1 + (uint32_t)(next_random() % 64);
			for (uint32_t i = 0; i < n; i++, k++) {
				uint64_t r = next_random();
				if (r % 8 == 0)	/* now and then 4 GiB up: one line to Callgrind's wb */
					a = (next_random() % 2) << 32 |
					    (0x40000 + (next_random() % 256) * line + (next_random() % line));
				else if (r % 8 < 4)
					a += line;
				else if (r % 8 < 6)
					a -= line;
				uint8_t size = (uint8_t)(1u << (next_random() % 4));
				int write = (int)(next_random() % 3 == 0), observed = (int)(next_random() % 4 != 0);
				bunch[i] = (struct level_ref){ a, size, (uint8_t)((write ? LEVEL_WRITE : 0) |
										  (observed ? LEVEL_OBSERVED : 0)),
							       0, (uint32_t)i };
				if (pf && observed)
					ref_observe(&c, a);
				expected[i] = (uint8_t)ref_access(&c, a, size, wb, write);
			}
			level_take(&L, bunch, n, got, NULL);
			for (uint32_t i = 0; i < n; i++) {
				mismatches += got[i] != expected[i];
				dirty_seen += expected[i] == 2;
			}
		}
		free(c.tags);
		level_free(&L);
	}
	CHECK_EQ(mismatches, 0);
	CHECK(dirty_seen > 0);
}

/* Callgrind's write-back tags can make twins: the word a prefetch of
   0x40000 installs (its line, 0x40000 >> 6 = 0x1000) is the tag a demand
   reference to 0x1000 compares with, beside the dirty 0x1001 a write left.  A
   lookup takes the most recently used twin, as Callgrind's search, most
   recently used first, does; which one it takes decides when the dirty
   line is evicted. */
struct twin_ref {
	uint64_t addr;
	unsigned flags;
};

/* The n references of seq through a one-set, 8-way level of Callgrind's
   write-back tags and prefetcher, and through the reference model: the same
   outcomes, with one dirty eviction. */
static void check_twins(const struct twin_ref *seq, size_t n)
{
	struct level L = make(8 * 64, 8, 64, 1, LEVEL_PREFETCH_CALLGRIND, 1);
	struct ref_cache c = { calloc(8, sizeof(uint64_t)), 1, 8, 6, 6, 1, 1, { 0 }, { 0 } };
	unsigned mismatches = 0, dirty = 0;
	for (size_t k = 0; k < n; k++) {
		if (seq[k].flags & LEVEL_OBSERVED)
			ref_observe(&c, seq[k].addr);
		int expected = ref_access(&c, seq[k].addr, 4, 1, seq[k].flags & LEVEL_WRITE);
		mismatches += one(&L, seq[k].addr, 4, seq[k].flags) != expected;
		dirty += expected == 2;
	}
	CHECK_EQ(mismatches, 0);
	CHECK_EQ(dirty, 1);
	free(c.tags);
	level_free(&L);
}

static void twins(void)
{
	static const struct twin_ref seq[] = {
		{ 0x1000, LEVEL_WRITE }, { 0x3fe40, LEVEL_OBSERVED }, { 0x3fe80, LEVEL_OBSERVED },
		{ 0x3fec0, LEVEL_OBSERVED }, { 0x1000, 0 }, { 0x5000, 0 }, { 0x6000, 0 },
		{ 0x7000, 0 }, { 0x8000, 0 }, { 0x9000, 0 }, { 0xa000, 0 }, { 0xb000, 0 },
		{ 0xc000, 0 }, { 0xd000, 0 },
	};
	check_twins(seq, sizeof(seq) / sizeof(seq[0]));

	/* Again with the dirty twin in way 0, filled eighth: the way a search
	   in way order finds first, where the younger twin is the prefetched
	   one in a higher way.  Taking the first found would touch the dirty
	   line, and evict it later than Callgrind does. */
	static const struct twin_ref dirty_in_way_0[] = {
		{ 0x2000, 0 }, { 0x3000, 0 }, { 0x4000, 0 }, { 0x5000, 0 }, { 0x6000, 0 },
		{ 0x7000, 0 }, { 0x8000, 0 }, { 0x1000, LEVEL_WRITE }, { 0x3fe40, LEVEL_OBSERVED },
		{ 0x3fe80, LEVEL_OBSERVED }, { 0x3fec0, LEVEL_OBSERVED }, { 0x1000, 0 },
		{ 0x9000, 0 }, { 0xa000, 0 }, { 0xb000, 0 }, { 0xc000, 0 }, { 0xd000, 0 },
		{ 0xe000, 0 }, { 0xf000, 0 }, { 0x10000, 0 },
	};
	check_twins(dirty_in_way_0, sizeof(dirty_in_way_0) / sizeof(dirty_in_way_0[0]));
}

/* Lines' use, as Callgrind's --cacheuse=yes keeps it (callgrind/sim.c
   cacheuse_*): a level of Callgrind's tags that tracks use and reports its
   fills, one reference at a time. */
static struct level use_level(uint32_t size, uint32_t assoc, uint32_t line, int report)
{
	struct level L;
	struct level_config c = { .size = size, .assoc = assoc, .line = line, .callgrind_tags = 1,
				  .track_use = report != LEVEL_REPORT_LOOKUPS, .report = (uint8_t)report };
	CHECK(level_init(&L, &c) == 0);
	return L;
}

static struct level_report reported[2];
static uint32_t n_reported;

static int used(struct level *L, uint64_t addr, uint8_t size)
{
	struct level_ref r = { addr, size, 0, 0, 0 };
	uint8_t out = 0xff;
	n_reported = level_take(L, &r, 1, &out, reported);
	return out;
}

#define U(a, size) used(&L, (a), (size))
#define REPORTED(k, slot_, count_, mask_, filled_)                                            \
	do {                                                                                  \
		CHECK_EQ(reported[k].slot, slot_);                                            \
		CHECK_EQ(reported[k].count, count_);                                          \
		CHECK_EQ(reported[k].mask, mask_);                                            \
		CHECK_EQ(reported[k].filled, filled_);                                        \
	} while (0)

static void use_counts_and_masks(void)
{
	/* One set of two 64-byte ways: a bit per 2 bytes. */
	struct level L = use_level(128, 2, 64, LEVEL_REPORT_FILLS);
	CHECK_EQ(U(0x1000, 4), LEVEL_MISS);	/* bytes 0-3: bits 0-1 */
	CHECK_EQ(n_reported, 1);
	REPORTED(0, 1, 0, 0, 1);		/* the oldest way, never used */
	CHECK_EQ(U(0x1008, 4), LEVEL_HIT);	/* bytes 8-11: bits 4-5 */
	CHECK_EQ(n_reported, 0);		/* hits are not reported */
	/* One set: a reference across two lines is one lookup of the first,
	   with the first's mask from byte 62 and the second's to byte 1: none */
	CHECK_EQ(U(0x103e, 4), LEVEL_HIT);
	CHECK_EQ(U(0x2000, 1), LEVEL_MISS);
	REPORTED(0, 0, 0, 0, 1);
	CHECK_EQ(U(0x3000, 2), LEVEL_MISS);	/* evicts 0x1000: three uses */
	CHECK_EQ(n_reported, 1);
	REPORTED(0, 1, 3, 0x33, 1);
	CHECK_EQ(L.use[1].count, 1);
	CHECK_EQ(L.use[1].mask, 0x1);
	/* lines 4 GiB apart are one */
	CHECK_EQ(U(0x100003010, 8), LEVEL_HIT);
	CHECK_EQ(L.use[1].count, 2);
	CHECK_EQ(L.use[1].mask, 0xf01);	/* bytes 16-23: bits 8-11 */
	level_clear(&L);
	CHECK_EQ(L.use[1].count, 0);
	/* a cold way holds tag 0: an address under line x sets hits it */
	CHECK_EQ(U(0x10, 4), LEVEL_HIT);
	CHECK_EQ(L.use[0].count, 1);
	CHECK_EQ(L.use[0].mask, 0x300);
	level_free(&L);

	/* Two sets: a straddle is two lines, each with its part. */
	L = use_level(256, 2, 64, LEVEL_REPORT_FILLS);
	CHECK_EQ(U(0x103e, 4), LEVEL_MISS);
	CHECK_EQ(n_reported, 2);
	REPORTED(0, 1, 0, 0, 1);
	REPORTED(1, 3, 0, 0, 1);
	CHECK_EQ(reported[0].second, 0);
	CHECK_EQ(reported[1].second, 1);
	CHECK_EQ(L.use[1].mask, 0x80000000);	/* bytes 62-63 */
	CHECK_EQ(L.use[3].mask, 0x1);		/* bytes 0-1 */
	level_free(&L);

	/* 16-byte lines: two bits a byte; 128-byte lines: a bit per 4 bytes. */
	L = use_level(64, 2, 16, LEVEL_REPORT_FILLS);
	CHECK_EQ(U(0x1003, 2), LEVEL_MISS);
	CHECK_EQ(L.use[reported[0].slot].mask, 0x3c0);
	level_free(&L);
	L = use_level(512, 2, 128, LEVEL_REPORT_FILLS);
	CHECK_EQ(U(0x1005, 4), LEVEL_MISS);
	CHECK_EQ(L.use[reported[0].slot].mask, 0x6);
	level_free(&L);

	/* A reference standing for a run of uses of one line (fetches). */
	L = use_level(256, 2, 64, LEVEL_REPORT_FILLS);
	struct level_ref run = { 0x1000, 12, 0, 3, 0 };
	uint8_t out;
	CHECK_EQ(level_take(&L, &run, 1, &out, reported), 1);
	CHECK_EQ(L.use[reported[0].slot].count, 4);
	run.more = 1;
	CHECK_EQ(level_take(&L, &run, 1, &out, reported), 0);
	CHECK_EQ(L.use[reported[0].slot].count, 6);
	CHECK_EQ(L.use[reported[0].slot].mask, 0x3f);	/* bytes 0-11 */
	level_free(&L);

	/* Every lookup reported: a hit tells where the line is. */
	L = use_level(256, 2, 64, LEVEL_REPORT_LOOKUPS);
	CHECK_EQ(U(0x1000, 1), LEVEL_MISS);
	REPORTED(0, 1, 0, 0, 1);
	CHECK_EQ(U(0x2000, 1), LEVEL_MISS);
	REPORTED(0, 0, 0, 0, 1);
	CHECK_EQ(U(0x1000, 1), LEVEL_HIT);
	CHECK_EQ(n_reported, 1);
	REPORTED(0, 1, 0, 0, 0);
	level_free(&L);
}

/* level_use_again: a reference to the line its set touched last is
   counted there without a lookup; any other is left to level_take. */
static void use_again(void)
{
	/* Two sets of two 64-byte ways. */
	struct level L = use_level(256, 2, 64, LEVEL_REPORT_FILLS);
	struct level_use_view v = level_use_view_of(&L);
	/* a cold set's last way is way 0, tag 0 */
	CHECK_EQ(level_use_again(&v, 0x10, 4, 1), 1);
	CHECK_EQ(L.use[0].count, 1);
	CHECK_EQ(L.use[0].mask, 0x300);
	CHECK_EQ(U(0x1000, 4), LEVEL_MISS);	/* set 0, way 1 */
	CHECK_EQ(level_use_again(&v, 0x1004, 4, 2), 1);
	CHECK_EQ(L.use[1].count, 3);
	CHECK_EQ(L.use[1].mask, 0xf);
	/* another line of the set, and a straddle: nothing done */
	CHECK_EQ(level_use_again(&v, 0x2000, 1, 1), 0);
	CHECK_EQ(level_use_again(&v, 0x103e, 4, 1), 0);
	CHECK_EQ(L.use[1].count, 3);
	CHECK_EQ(L.use[0].count, 1);
	/* a line resident but not touched last is not: after a hit it is */
	CHECK_EQ(U(0x2000, 1), LEVEL_MISS);	/* way 0 */
	CHECK_EQ(level_use_again(&v, 0x1000, 1, 1), 0);
	CHECK_EQ(U(0x1000, 1), LEVEL_HIT);
	CHECK_EQ(level_use_again(&v, 0x1000, 1, 1), 1);
	CHECK_EQ(L.use[1].count, 5);
	/* a clear makes way 0 the last again */
	level_clear(&L);
	CHECK_EQ(level_use_again(&v, 0x1000, 1, 1), 0);
	CHECK_EQ(level_use_again(&v, 0x20, 1, 1), 1);
	level_free(&L);

	/* Random references, with the shortcut before level_take and without
	   it anywhere (B reports every lookup, which turns it off in its loop
	   too): the same outcomes, fills, uses and lines. */
	for (int replacement = 0; replacement < LEVEL_N_REPLACEMENTS; replacement++) {
		struct level A, B;
		struct level_config c = { .size = 1024, .assoc = 4, .line = 32, .callgrind_tags = 1,
					  .track_use = 1, .report = LEVEL_REPORT_FILLS,
					  .replacement = (uint8_t)replacement };
		CHECK(level_init(&A, &c) == 0);
		c.report = LEVEL_REPORT_LOOKUPS;
		CHECK(level_init(&B, &c) == 0);
		struct level_use_view va = level_use_view_of(&A);
		struct level_report ra[2], rb[2];
		int same = 1;
		srand(7);
		for (int k = 0; k < 20000; k++) {
			struct level_ref r = { (uint64_t)(rand() % 48) * 24 + (uint64_t)(rand() % 4) * 4096,
					       (uint8_t)(1 + rand() % 16), 0, (uint16_t)(rand() % 3), 0 };
			uint8_t oa = LEVEL_HIT, ob;
			uint32_t na = 0, nb = level_take(&B, &r, 1, &ob, rb), filled = 0;
			for (uint32_t f = 0; f < nb; f++)
				if (rb[f].filled)
					rb[filled++] = rb[f];
			if (!level_use_again(&va, r.addr, r.size, 1u + r.more))
				na = level_take(&A, &r, 1, &oa, ra);
			same &= oa == ob && na == filled && memcmp(ra, rb, na * sizeof(*ra)) == 0;
		}
		CHECK(same);
		CHECK(memcmp(A.use, B.use, 32 * sizeof(*A.use)) == 0);
		CHECK(memcmp(A.sets, B.sets, 8 * A.set_bytes) == 0);
		level_free(&A);
		level_free(&B);
	}
}

/* FIFO: one set of two ways; a hit changes nothing, so the line that
   came first goes first even when it was used last (LRU keeps it). */
static void fifo_order(void)
{
	struct level L;
	struct level_config c = { .size = 128, .assoc = 2, .line = 64, .replacement = LEVEL_FIFO };
	CHECK(level_init(&L, &c) == 0);
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	CHECK_EQ(R(0x3000), LEVEL_MISS);	/* evicts 0x1000, the first in */
	CHECK_EQ(R(0x2000), LEVEL_HIT);
	CHECK_EQ(R(0x1000), LEVEL_MISS);	/* evicts 0x2000 */
	CHECK_EQ(R(0x3000), LEVEL_HIT);
	CHECK_EQ(R(0x2000), LEVEL_MISS);	/* evicts 0x3000 */
	level_free(&L);

	/* A prefetch fills as a miss does: one set of three ways, 0x20000
	   first in and hit since; the run 0x10000, 0x10040, 0x10080
	   prefetches 0x101c0, which replaces 0x20000 (LRU would replace
	   0x10000), and the demand miss then 0x10000. */
	c = (struct level_config){ .size = 192, .assoc = 3, .line = 64, .replacement = LEVEL_FIFO,
				   .prefetcher = LEVEL_PREFETCH_CALLGRIND };
	CHECK(level_init(&L, &c) == 0);
	CHECK_EQ(R(0x20000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10040), LEVEL_MISS);
	CHECK_EQ(R(0x20000), LEVEL_HIT);
	CHECK_EQ(OBS(0x10080), LEVEL_MISS);
	CHECK_EQ(L.prefetches_up, 1);
	CHECK_EQ(R(0x101c0), LEVEL_HIT);
	CHECK_EQ(R(0x10040), LEVEL_HIT);
	CHECK_EQ(R(0x20000), LEVEL_MISS);	/* replaced by the prefetch */
	level_free(&L);
	/* With Callgrind's write-back tags a prefetch installs its line
	   number (level_prefetch's own path): a fill all the same, which the
	   demand miss after it does not replace. */
	c.write_back = c.callgrind_tags = 1;
	CHECK(level_init(&L, &c) == 0);
	CHECK_EQ(R(0x20000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10000), LEVEL_MISS);
	CHECK_EQ(OBS(0x10040), LEVEL_MISS);
	CHECK_EQ(R(0x20000), LEVEL_HIT);
	CHECK_EQ(OBS(0x10080), LEVEL_MISS);	/* the prefetch replaced 0x20000, this 0x10000 */
	CHECK_EQ(R(0x10040), LEVEL_HIT);
	CHECK_EQ(R(0x10000), LEVEL_MISS);
	level_free(&L);

	/* the same sequence under LRU: 0x1000, used last, stays */
	L = make(128, 2, 64, 0, LEVEL_PREFETCH_NONE, 0);
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	CHECK_EQ(R(0x3000), LEVEL_MISS);	/* evicts 0x2000 */
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	level_free(&L);
}

/* Tree PLRU: one set of four ways, cold (as if way 0 was touched last:
   root -> upper half, node of ways 0-1 -> way 1, node of ways 2-3 -> way
   2).  0x1000 fills way 2 (root -> lower, ways 2-3 -> way 3), 0x2000 way 1
   (root -> upper, ways 0-1 -> way 0), 0x3000 way 3 (root -> lower, ways
   2-3 -> way 2); the hit on 0x2000 points the root upper again, so 0x4000
   replaces way 2's 0x1000 -- though way 0 still holds a cold line, which
   LRU would replace. */
static void plru_tree(void)
{
	struct level L;
	struct level_config c = { .size = 256, .assoc = 4, .line = 64, .replacement = LEVEL_PLRU };
	CHECK(level_init(&L, &c) == 0);
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x3000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_HIT);
	CHECK_EQ(R(0x4000), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_MISS);	/* replaced: LRU would hit */
	/* 0x4000 pointed the root lower, where the node of ways 0-1 points
	   at way 0: 0x1000 is back in the cold way, beside the others */
	CHECK_EQ(R(0x2000), LEVEL_HIT);
	CHECK_EQ(R(0x3000), LEVEL_HIT);
	CHECK_EQ(R(0x4000), LEVEL_HIT);
	level_free(&L);

	/* line 0, which every way of the cold set holds: found in way 0, the
	   way the set touched last, and its tree as it was; 0x1000 fills way
	   2, 0 is found in way 0 again (the lowest), 0x2000 fills way 3, 0x3000
	   way 1 (a copy of line 0): 0x1000 stays */
	CHECK(level_init(&L, &c) == 0);
	CHECK_EQ(R(0x0), LEVEL_HIT);
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x0), LEVEL_HIT);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x3000), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	CHECK_EQ(R(0x0), LEVEL_HIT);
	level_free(&L);

	/* the same under LRU: 0x1000 stays */
	L = make(256, 4, 64, 0, LEVEL_PREFETCH_NONE, 0);
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(R(0x3000), LEVEL_MISS);
	CHECK_EQ(R(0x2000), LEVEL_HIT);
	CHECK_EQ(R(0x4000), LEVEL_MISS);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	level_free(&L);

	/* a tree needs a power of two ways */
	c.assoc = 3;
	c.size = 192;
	CHECK(level_check(&c) != NULL);
	c.replacement = LEVEL_LRU;
	CHECK(level_check(&c) == NULL);
}

/* The elisions specialise.c chooses and the loops' shortcuts (a
   reference to the way its set touched last -- a cold set's way 0 among
   them -- counted without touching it again) assume that every policy
   leaves a set as it is when that way is touched again: from a cold set
   and after random touches and fills, at 1 to 64 ways. */
static void every_policy_touches_again_unchanged(void)
{
	uint64_t seed = 1;
	for (int r = 0; r < LEVEL_N_REPLACEMENTS; r++) {
		const struct level_policy *p = level_policy_of(r);
		CHECK(p->hooks->touch_again_unchanged);
		for (uint32_t assoc = 1; assoc <= 64; assoc *= 2) {
			uint16_t state[64], again[64];
			p->first(state, assoc);
			uint32_t way = 0;	/* a cold set's, as level.c takes it */
			int unchanged = 1;
			for (int k = 0; k < 200 && unchanged; k++) {
				memcpy(again, state, assoc * sizeof(*state));
				p->hooks->touch(again, assoc, way);
				unchanged = memcmp(again, state, assoc * sizeof(*state)) == 0;
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				way = (uint32_t)(seed >> 33) % assoc;
				((seed >> 20) & 1 ? p->hooks->fill : p->hooks->touch)(state, assoc, way);
			}
			CHECK(unchanged);
		}
	}
}

/* level_hit_again: the line in its set's way touched last, one line,
   in a level that allows it; nothing else. */
static void hit_again(void)
{
	struct level L = make(128, 2, 64, 0, LEVEL_PREFETCH_NONE, 0);	/* one set */
	struct level_hit_view v = level_hit_view_of(&L);
	CHECK(v.shortcut);
	CHECK_EQ(R(0x1000), LEVEL_MISS);
	CHECK_EQ(level_hit_again(&v, 0x1008, 8), 1);
	CHECK_EQ(level_hit_again(&v, 0x103c, 8), 0);	/* straddles into 0x1040 */
	CHECK_EQ(R(0x2000), LEVEL_MISS);
	CHECK_EQ(level_hit_again(&v, 0x1000, 4), 0);	/* there, but not touched last */
	CHECK_EQ(level_hit_again(&v, 0x2000, 4), 1);
	CHECK_EQ(R(0x1000), LEVEL_HIT);
	CHECK_EQ(level_hit_again(&v, 0x1000, 4), 1);
	level_free(&L);
	/* write-back (a write would dirty the line) and a prefetcher (it
	   observes) decline it */
	L = make(128, 2, 64, 1, LEVEL_PREFETCH_NONE, 0);
	CHECK(!level_hit_view_of(&L).shortcut);
	level_free(&L);
	L = make(128, 2, 64, 0, LEVEL_PREFETCH_CALLGRIND, 0);
	CHECK(!level_hit_view_of(&L).shortcut);
	level_free(&L);
}

static void checks(void)
{
	struct level_config c = { .size = 4096, .assoc = 4, .line = 64 };
	CHECK(level_check(&c) == NULL);
	c.track_use = 1;
	c.prefetcher = LEVEL_PREFETCH_CALLGRIND;
	CHECK(level_check(&c) != NULL);	/* Callgrind's cache use has no prefetcher */
	c.track_use = 0;
	c.report = LEVEL_REPORT_FILLS;
	CHECK(level_check(&c) != NULL);
	c.report = LEVEL_REPORT_NONE;
	c.prefetcher = LEVEL_PREFETCH_NONE;
	c.size = 4096 * 3;
	CHECK(level_check(&c) != NULL);	/* 48 sets */
	c.size = 4096;
	c.line = 8;
	CHECK(level_check(&c) != NULL);
	c.line = 64;
	c.assoc = 70000;
	CHECK(level_check(&c) != NULL);
	c.assoc = 4;
	c.replacement = LEVEL_N_REPLACEMENTS;
	CHECK(level_check(&c) != NULL);
}

int main(void)
{
	PLAN(15);
	RUN(dirty_evictions);
	RUN(straddles);
	RUN(no_write_allocate);
	RUN(prefetch_hits_and_evicts_dirty);
	RUN(callgrind_write_back_tags);
	RUN(clear);
	RUN(random_against_callgrind_model);
	RUN(twins);
	RUN(use_counts_and_masks);
	RUN(use_again);
	RUN(fifo_order);
	RUN(plru_tree);
	RUN(every_policy_touches_again_unchanged);
	RUN(hit_again);
	RUN(checks);
	return CHECK_DONE();
}
