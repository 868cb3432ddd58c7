/* The cache model, against hand-computed sequences. */
#include <string.h>

#include "cache_model.h"
#include "check.h"

/* Address of block `block` of a cache with 64-byte lines. */
#define LINE(block) ((uint64_t)(block) * 64)

static void lru_order(void)
{
	/* 1024 B, 2-way, 64 B lines: 8 sets; blocks 8 apart share a set.
	   A B A C A B: A, B miss; A hits (now MRU); C evicts B; A hits;
	   B misses again.  (Cachegrind, measured: the same 4 misses.) */
	struct cache_model c;
	uint64_t a = LINE(8), b = LINE(16), cc = LINE(24);
	CHECK(cache_model_init(&c, 1024, 2, 64) == 0);
	CHECK_EQ(cache_ref_is_miss(&c, a, 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, b, 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, a, 4), 0);
	CHECK_EQ(cache_ref_is_miss(&c, cc, 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, a, 4), 0);
	CHECK_EQ(cache_ref_is_miss(&c, b, 4), 1);
	cache_model_free(&c);
}

static void set_conflicts(void)
{
	/* Direct-mapped 1024 B: 16 sets; blocks 16 apart evict each other,
	   other sets are untouched. */
	struct cache_model c;
	CHECK(cache_model_init(&c, 1024, 1, 64) == 0);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(cache_ref_is_miss(&c, LINE(16), 8), 1);
		CHECK_EQ(cache_ref_is_miss(&c, LINE(32), 8), 1);
	}
	CHECK_EQ(cache_ref_is_miss(&c, LINE(17), 8), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(17) + 8, 8), 0);
	cache_model_free(&c);
}

static void straddles(void)
{
	struct cache_model c;
	CHECK(cache_model_init(&c, 4096, 4, 64) == 0);
	/* 8 bytes at offset 60 of block 5: blocks 5 and 6 both miss, one miss. */
	CHECK_EQ(cache_ref_is_miss(&c, LINE(5) + 60, 8), 1);
	/* both were brought in */
	CHECK_EQ(cache_ref_is_miss(&c, LINE(5), 4), 0);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(6), 4), 0);
	/* one side present, the other not: still one miss */
	CHECK_EQ(cache_ref_is_miss(&c, LINE(10) + 62, 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(20), 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(19) + 60, 8), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(19) + 60, 8), 0);
	cache_model_free(&c);
}

static void straddle_updates_lru_of_the_hit_line(void)
{
	/* 2 sets of 2 ways (256 B).  Blocks 2 and 4 in set 0; block 3 in set 1.
	   Load 2 then 4 (set 0: [4,2]); a straddle of 2|3 touches 2 again,
	   making it MRU, so loading 6 evicts 4, not 2. */
	struct cache_model c;
	CHECK(cache_model_init(&c, 256, 2, 64) == 0);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(2), 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(4), 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(2) + 62, 4), 1);	/* 3 misses */
	CHECK_EQ(cache_ref_is_miss(&c, LINE(6), 4), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(2), 4), 0);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(4), 4), 1);
	cache_model_free(&c);
}

static void block_zero_quirk(void)
{
	/* Tags start at 0, so block 0 is "present" in a cold cache (Cachegrind
	   does the same). */
	struct cache_model c;
	CHECK(cache_model_init(&c, 32768, 8, 64) == 0);
	CHECK_EQ(cache_ref_is_miss(&c, 0, 8), 0);
	CHECK_EQ(cache_ref_is_miss(&c, 63, 1), 0);
	CHECK_EQ(cache_ref_is_miss(&c, 64, 1), 1);
	cache_model_free(&c);
}

static void fully_associative(void)
{
	/* 4 lines, 4 ways, 1 set: a fifth line evicts the least recently used. */
	struct cache_model c;
	CHECK(cache_model_init(&c, 256, 4, 64) == 0);
	for (int b = 1; b <= 4; b++)
		CHECK_EQ(cache_ref_is_miss(&c, LINE(b), 1), 1);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(1), 1), 0);	/* order now 1 4 3 2 */
	CHECK_EQ(cache_ref_is_miss(&c, LINE(5), 1), 1);	/* evicts 2 */
	CHECK_EQ(cache_ref_is_miss(&c, LINE(3), 1), 0);
	CHECK_EQ(cache_ref_is_miss(&c, LINE(2), 1), 1);
	cache_model_free(&c);
}

/* A random run of references (some straddling lines), simulated whole from
   Cachegrind's start and in pieces from unknown states settled one after
   another: the same misses, the same final state. */
static void pieces_settle_to_the_whole(unsigned assoc)
{
	enum { N = 30000, PIECES = 6 };
	static uint64_t addrs[N];
	static uint8_t sizes[N];
	static uint8_t missed[4096];
	uint32_t x = 777;
	for (int i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		addrs[i] = (uint64_t)((x >> 8) % 6000) * 4;	/* 375 lines, 8 sets */
		sizes[i] = (x >> 4) % 4 == 0 ? 8 : 4;
	}
	struct cache_model whole, exact, piece;
	uint32_t events[2];
	uint64_t whole_misses = 0, piece_misses = 0;
	CHECK(cache_model_init(&whole, 64 * 8 * assoc, assoc, 64) == 0);
	CHECK(cache_model_init(&exact, 64 * 8 * assoc, assoc, 64) == 0);
	CHECK(cache_model_init(&piece, 64 * 8 * assoc, assoc, 64) == 0);
	for (int i = 0; i < N; i++)
		whole_misses += cache_ref_is_miss(&whole, addrs[i], sizes[i]);

	static uint32_t unknown_refs[N][2];
	for (int p = 0; p < PIECES; p++) {
		int n_unknown = 0;
		if (p > 0)
			cache_model_forget(&piece);
		for (int i = p * N / PIECES; i < (p + 1) * N / PIECES; i++) {
			enum ref_outcome r = cache_ref(p == 0 ? &exact : &piece, addrs[i], sizes[i], events);
			piece_misses += r == REF_MISS;
			if (r == REF_UNKNOWN) {
				unknown_refs[n_unknown][0] = events[0];
				unknown_refs[n_unknown++][1] = events[1];
			}
		}
		if (p == 0)
			continue;
		CHECK(n_unknown > 0);
		CHECK(cache_settle(&piece, exact.tags, missed) == 0);
		for (int k = 0; k < n_unknown; k++)
			piece_misses += (unknown_refs[k][0] != CACHE_NO_EVENT && missed[unknown_refs[k][0]]) ||
					(unknown_refs[k][1] != CACHE_NO_EVENT && missed[unknown_refs[k][1]]);
		memcpy(exact.tags, piece.tags, cache_model_slots(&piece) * sizeof(uint64_t));
	}
	CHECK(whole_misses > 1000);
	CHECK_EQ(piece_misses, whole_misses);
	for (uint64_t set = 0; set <= whole.sets_mask; set++)
		CHECK(memcmp(exact.tags + (set << whole.way_bits), whole.tags + (set << whole.way_bits),
			     assoc * sizeof(uint64_t)) == 0);
	cache_model_free(&whole);
	cache_model_free(&exact);
	cache_model_free(&piece);
}

static void pieces_settle_direct_mapped(void)
{
	pieces_settle_to_the_whole(1);
}

static void pieces_settle_4_way(void)
{
	pieces_settle_to_the_whole(4);
}

static void pieces_settle_16_way(void)
{
	pieces_settle_to_the_whole(16);
}

static void pieces_settle_12_way(void)
{
	pieces_settle_to_the_whole(12);	/* sets padded to 16 ways apart */
}

static void settling_by_hand(void)
{
	/* 2 ways, one set (128 B cache).  Before: A (MRU), B.  The segment,
	   from unknown: C (unknown; it misses and evicts B), B (unknown; it
	   was the second way before, but only one way is left below C: a
	   miss), A (not among B and C, no unknown way left: a sure miss). */
	struct cache_model c;
	uint8_t missed[2];
	uint32_t ev[2];
	uint64_t before[2] = { 1, 2 };	/* blocks 1 (A), 2 (B) */
	CHECK(cache_model_init(&c, 128, 2, 64) == 0);
	cache_model_forget(&c);
	CHECK_EQ(cache_ref(&c, 3 * 64, 4, ev), REF_UNKNOWN);
	CHECK_EQ(cache_ref(&c, 2 * 64, 4, ev), REF_UNKNOWN);
	CHECK_EQ(cache_ref(&c, 1 * 64, 4, ev), REF_MISS);
	CHECK(cache_settle(&c, before, missed) == 0);
	CHECK_EQ(missed[0], 1);
	CHECK_EQ(missed[1], 1);
	CHECK_EQ(c.tags[0], 1);
	CHECK_EQ(c.tags[1], 2);
	cache_model_free(&c);
}

int main(void)
{
	PLAN(11);
	RUN(lru_order);
	RUN(set_conflicts);
	RUN(straddles);
	RUN(straddle_updates_lru_of_the_hit_line);
	RUN(block_zero_quirk);
	RUN(fully_associative);
	RUN(settling_by_hand);
	RUN(pieces_settle_direct_mapped);
	RUN(pieces_settle_4_way);
	RUN(pieces_settle_16_way);
	RUN(pieces_settle_12_way);
	return CHECK_DONE();
}
