/* The cache model, against hand-computed sequences. */
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

int main(void)
{
	RUN(lru_order);
	RUN(set_conflicts);
	RUN(straddles);
	RUN(straddle_updates_lru_of_the_hit_line);
	RUN(block_zero_quirk);
	RUN(fully_associative);
	return CHECK_DONE();
}
