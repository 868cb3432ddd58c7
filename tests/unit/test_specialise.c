/*
 * simulate/specialise.h: each fast path is taken only when every model
 * declares the property it relies on, and declined otherwise.
 */
#include "check.h"
#include "level.h"
#include "specialise.h"

/* Cachegrind's model, with write-back and Callgrind's LL prefetcher or
   not. */
static struct cgt_cache_model model(int write_back, int prefetch)
{
	struct cgt_cache_model m = { .write_back = write_back };
	m.prefetch[CGT_LEVEL_LL] = prefetch ? LEVEL_PREFETCH_CALLGRIND : LEVEL_PREFETCH_NONE;
	return m;
}

static struct specialisations choose(int write_back, int prefetch)
{
	struct cgt_cache_model m = model(write_back, prefetch);
	struct specialisations s;
	specialisations_choose(&m, &s);
	return s;
}

/* Cachegrind's model: every fast path. */
static void cachegrind_model_takes_all(void)
{
	struct specialisations s = choose(0, 0);
	CHECK(s.plain_ll && s.plain_l1s && s.segment_engine && s.shared_stacks && s.forest &&
	      s.elide_mru_writes && s.elide_mru_fetches);
}

/* Write-back: dirty state per cache, so no plain LL, no settled segments
   (their LL is plain), no shared stacks or forests; and writes that hit
   L1 reach LL, so they are not elided. */
static void write_back_declines(void)
{
	struct specialisations s = choose(1, 0);
	CHECK(!s.plain_ll && !s.segment_engine && !s.shared_stacks && !s.forest);
	CHECK(!s.elide_mru_writes);
	/* Callgrind's L1s are write-through: still LRU arrays */
	CHECK(s.plain_l1s);
}

/* A prefetcher: LL is no plain LRU array of what missed above it; a
   write that hits L1 is not observed without write-back, so it may be
   elided. */
static void prefetch_declines(void)
{
	struct specialisations s = choose(0, 1);
	CHECK(!s.plain_ll && !s.segment_engine && !s.shared_stacks && !s.forest);
	CHECK(s.elide_mru_writes);
	s = choose(1, 1);
	CHECK(!s.plain_ll && !s.segment_engine && !s.shared_stacks && !s.forest && !s.elide_mru_writes);
}

/* A replacement policy other than LRU, at any level: the plain LL, the
   settled segments (they reason in LRU) and the shared stacks and forests
   (LRU inclusion) are declined; a reference that can only hit L1's last
   line changes no state under FIFO either, so it is still elided. */
static void fifo_declines(void)
{
	for (int level = 0; level < CGT_N_LEVELS; level++) {
		struct cgt_cache_model m = model(0, 0);
		m.replacement[level] = LEVEL_FIFO;
		struct specialisations s;
		specialisations_choose(&m, &s);
		CHECK(!s.plain_ll && !s.segment_engine && !s.shared_stacks && !s.forest);
		CHECK(s.elide_mru_reads && s.elide_mru_writes && s.elide_mru_fetches);
		/* the L1s' arrays rely on the L1s' policies alone */
		CHECK_EQ(s.plain_l1s, level != CGT_LEVEL_I1 && level != CGT_LEVEL_D1);
	}
}

/* Cache use: every reference to a line is a use of it, so no fetch is
   elided; the plain LL and the engines built on LRU inclusion keep no
   use. */
static void cache_use_declines(void)
{
	struct cgt_cache_model m = model(0, 0);
	m.cache_use = 1;
	struct specialisations s;
	specialisations_choose(&m, &s);
	CHECK(!s.plain_ll && !s.plain_l1s && !s.segment_engine && !s.shared_stacks && !s.forest);
	/* every reference is a use of its line: none may be left out */
	CHECK(!s.elide_mru_fetches && !s.elide_mru_reads && !s.elide_mru_writes);
}

static void properties(void)
{
	struct cgt_cache_model plain = model(0, 0), wb = model(1, 0), pf = model(0, 1), use = model(0, 0);
	use.cache_use = 1;
	const unsigned all = MODEL_LRU | MODEL_NO_WRITE_BACK | MODEL_NO_PREFETCH | MODEL_NO_USE;
	CHECK_EQ(model_properties(&plain), all);
	CHECK_EQ(model_properties(&wb), all & ~MODEL_NO_WRITE_BACK);
	CHECK_EQ(model_properties(&pf), all & ~MODEL_NO_PREFETCH);
	CHECK_EQ(model_properties(&use), all & ~MODEL_NO_USE);
}

int main(void)
{
	PLAN(6);
	RUN(cachegrind_model_takes_all);
	RUN(write_back_declines);
	RUN(prefetch_declines);
	RUN(fifo_declines);
	RUN(cache_use_declines);
	RUN(properties);
	return CHECK_DONE();
}
