/* The last-level cache's lanes, against cache_model.h: the same outcome for
   every reference. */
#include "check.h"
#include "ll_model.h"

#define LINE(block) ((uint64_t)(block) * 64)

static uint32_t next_random(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* A random run of references -- few lines per set so that sets fill and
   evict, some straddling, some to block 0 -- through both models; from
   `wide_at` on, some addresses too high for 32-bit tags. */
static void same_as_cache_model(uint32_t sets, uint32_t assoc, int wide_at)
{
	enum { N = 40000 };
	struct cache_model ref;
	struct ll_model ll;
	uint32_t x = 12345 + sets * 31 + assoc, size = sets * assoc * 64;
	int differ = 0;

	CHECK(cache_model_init(&ref, size, assoc, 64) == 0);
	CHECK(ll_model_init(&ll, size, assoc, 64) == 0);
	for (int i = 0; i < N; i++) {
		uint64_t block = next_random(&x) % (sets * (assoc + 3));
		if (next_random(&x) % 50 == 0)
			block = 0;
		if (i >= wide_at && next_random(&x) % 4 == 0)
			block += 0x7ffc000000000000ull >> 6;
		uint64_t addr = LINE(block) + next_random(&x) % 64;
		uint32_t bytes = 1 + next_random(&x) % 8;
		differ += ll_ref_is_miss(&ll, addr, bytes) != cache_ref_is_miss(&ref, addr, bytes);
	}
	CHECK_EQ(differ, 0);
	CHECK_EQ(ll.wide, wide_at < N || assoc > LL_LANES);
	ll_model_free(&ll);
	cache_model_free(&ref);
}

static void lanes_as_cache_model(void)
{
	static const uint32_t assocs[] = { 1, 2, 3, 4, 8, 12, 16 };
	for (unsigned k = 0; k < sizeof(assocs) / sizeof(*assocs); k++) {
		same_as_cache_model(1, assocs[k], 1 << 30);
		same_as_cache_model(16, assocs[k], 1 << 30);
	}
}

static void widened_mid_run_as_cache_model(void)
{
	same_as_cache_model(1, 4, 20000);
	same_as_cache_model(16, 16, 20000);
	same_as_cache_model(4, 8, 0);
}

static void more_than_16_ways(void)
{
	same_as_cache_model(2, 24, 1 << 30);
}

static void block_zero_quirk(void)
{
	/* As cache_model: block 0 "hits" in a cold cache, and its copies
	   are evicted first only once they are the oldest. */
	struct ll_model c;
	CHECK(ll_model_init(&c, 2 * 2 * 64, 2, 64) == 0);	/* 2 sets of 2 ways */
	CHECK_EQ(ll_ref_is_miss(&c, 0, 8), 0);
	CHECK_EQ(ll_ref_is_miss(&c, LINE(2), 8), 1);	/* set 0: [2, 0] */
	CHECK_EQ(ll_ref_is_miss(&c, 0, 8), 0);	/* [0, 2] */
	CHECK_EQ(ll_ref_is_miss(&c, LINE(4), 8), 1);	/* [4, 0]: 2 out */
	CHECK_EQ(ll_ref_is_miss(&c, LINE(2), 8), 1);
	CHECK_EQ(ll_ref_is_miss(&c, LINE(1), 8), 1);	/* set 1 held only "block 0" */
	ll_model_free(&c);
}

int main(void)
{
	PLAN(4);
	RUN(lanes_as_cache_model);
	RUN(widened_mid_run_as_cache_model);
	RUN(more_than_16_ways);
	RUN(block_zero_quirk);
	return CHECK_DONE();
}
