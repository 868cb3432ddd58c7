/*
 * simulate/cache_use.h: the cache-use caches and charge sink on hand-computed
 * sequences, after callgrind/sim.c's update_L1_use, update_LL_use and
 * cacheuse_finish: an evicted line charged to its loader, its use pushed
 * into its LL slot and charged at that slot's eviction, nothing charged
 * or pushed while not collecting, the end of the run evicting every line.
 */
#include <string.h>

#include "callgraph_backdate.h"
#include "cache_use.h"
#include "check.h"

/* I1 and D1: one set of two 64-byte ways; LL: two sets of two. */
static struct use_sink sink(void)
{
	struct cgt_hierarchy h = { 0 };
	h.level[CGT_LEVEL_I1] = (struct cgt_cache_config){ 128, 2, 64 };
	h.level[CGT_LEVEL_D1] = (struct cgt_cache_config){ 128, 2, 64 };
	h.level[CGT_LEVEL_LL] = (struct cgt_cache_config){ 256, 2, 64 };
	static const int columns[USE_COLUMNS] = { 0, 1, 2, 3 };
	struct use_sink s;
	CHECK(use_sink_init(&s, &h, columns, NULL) == 0);
	return s;
}

static struct use_fill fill(int l1, uint32_t slot, uint32_t count, uint32_t mask, uint32_t ll_slot,
			    int ll_filled)
{
	return (struct use_fill){ 0, 0, slot, count, mask, ll_slot, (uint8_t)l1, (uint8_t)ll_filled };
}

/* Loaders' cost rows at 4, 8 and 12, of four columns each. */
static void charges_at_eviction(void)
{
	struct use_sink s = sink();
	uint64_t costs[16] = { 0 };
	struct use_fill f;

	f = fill(1, 1, 0, 0, 2, 1);	/* a cold way: nothing to charge */
	use_sink_fill(&s, &f, 8, NO_NODE, 1, costs);
	f = fill(1, 1, 4, 0xffff0000, 3, 1);	/* evicts 8's line: 4 uses, 16 of 32 parts */
	use_sink_fill(&s, &f, 12, NO_NODE, 1, costs);
	CHECK_EQ(costs[8], 250);	/* AcCost1: 1000 / 4 */
	CHECK_EQ(costs[9], 32);		/* SpLoss1: 16 x 64 / 32 unused bytes */
	CHECK_EQ(costs[10], 0);
	f = fill(0, 0, 0, 0, 2, 1);	/* an I1 line whose LL fill evicts 8's LL line */
	use_sink_fill(&s, &f, 4, NO_NODE, 1, costs);
	CHECK_EQ(costs[10], 250);	/* AcCost2: the 4 uses pushed up */
	CHECK_EQ(costs[11], 32);
	f = fill(1, 1, 2, 0x1, NO_USE_LL, 0);	/* not collecting: 12's line goes uncharged */
	use_sink_fill(&s, &f, 4, NO_NODE, 0, costs);
	CHECK_EQ(costs[12] + costs[13], 0);

	/* The end: I1's slot 0 (3 uses, 8 parts), D1's slot 1 (5 uses, all
	   parts; its LL slot still 12's line's, 3), then LL's slots. */
	const struct level_use i1[2] = { { 3, 0xff }, { 0, 0 } }, d1[2] = { { 9, 0x3 }, { 5, ~0u } };
	const struct level_use *const l1[2] = { i1, d1 };
	use_sink_finish(&s, l1, 1, costs);
	CHECK_EQ(costs[4], 333 + 200);
	CHECK_EQ(costs[5], 48);		/* 24 x 64 / 32 */
	CHECK_EQ(costs[6], 333);	/* LL slot 2: I1's 3 uses pushed at the end */
	CHECK_EQ(costs[7], 48);
	CHECK_EQ(costs[14], 200);	/* LL slot 3: D1's 5 uses, charged to 12 */
	CHECK_EQ(costs[15], 0);
	CHECK_EQ(costs[0] + costs[1] + costs[2] + costs[3], 0);	/* D1 slot 0: no loader */
	use_sink_free(&s);
}

/* Not collecting at the end, or after a clear: nothing charged. */
static void nothing_charged(void)
{
	struct use_sink s = sink();
	uint64_t costs[16] = { 0 };
	struct use_fill f = fill(1, 0, 0, 0, 1, 1);
	use_sink_fill(&s, &f, 8, NO_NODE, 1, costs);
	const struct level_use used[2] = { { 2, 0x1 }, { 0, 0 } };
	const struct level_use *const l1[2] = { used, used };
	use_sink_finish(&s, l1, 0, costs);
	for (int k = 0; k < 16; k++)
		CHECK_EQ(costs[k], 0);
	use_sink_clear(&s, costs);
	f = fill(1, 0, 7, 0x1, 1, 1);
	use_sink_fill(&s, &f, 12, NO_NODE, 1, costs);
	use_sink_finish(&s, l1, 1, costs);
	CHECK_EQ(costs[8] + costs[9] + costs[10] + costs[11], 0);
	CHECK_EQ(costs[12], 500);	/* its own line, at the end */
	use_sink_free(&s);
}

/* The caches: I1 and D1 one set of two 64-byte ways, LL two sets of two;
   fetches and data given apart, merged back by their handles. */
static void caches_take(void)
{
	struct cgt_hierarchy h = { 0 };
	h.level[CGT_LEVEL_I1] = (struct cgt_cache_config){ 128, 2, 64 };
	h.level[CGT_LEVEL_D1] = (struct cgt_cache_config){ 128, 2, 64 };
	h.level[CGT_LEVEL_LL] = (struct cgt_cache_config){ 256, 2, 64 };
	struct cgt_cache_model m = { 0 };
	struct use_caches u;
	CHECK(use_caches_init(&u, &h, &m) == 0);
	/* program order by handle: fetch 0x1000, read 0x2000 (4 bytes),
	   fetch 0x1010 (its line again), read 0x3000, 0x4000 (evicting
	   0x2000's line), 0x10 (line 0: evicting 0x3000's, LL not asked) */
	const struct level_ref refs[6] = {
		{ 0x1000, 4, 0, 0, 0 }, { 0x1010, 4, 0, 0, 2 },
		{ 0x2000, 4, 0, 0, 1 }, { 0x3000, 8, 0, 0, 3 }, { 0x4000, 8, 0, 0, 4 }, { 0x10, 8, 0, 0, 5 },
	};
	uint8_t missed[6];
	struct use_fill fills[12];
	CHECK_EQ(use_caches_take(&u, refs, 2, 6, missed, fills), 5);
	/* every line LL sees is in its set 0: all miss */
	const uint8_t want[6] = { 2, 0, 2, 2, 2, 1 };
	CHECK(memcmp(missed, want, sizeof(want)) == 0);
	const uint32_t ops[5] = { 0, 1, 3, 4, 5 };
	for (int f = 0; f < 5; f++) {
		CHECK_EQ(fills[f].op, ops[f]);
		CHECK_EQ(fills[f].l1, f > 0);
		CHECK_EQ(fills[f].ll_filled, f < 4);
	}
	CHECK_EQ(fills[4].ll_slot, NO_USE_LL);
	CHECK(fills[1].ll_slot != NO_USE_LL && fills[2].ll_slot != fills[1].ll_slot);
	/* 0x4000 takes 0x2000's way: that line used once, in its bytes 0-3
	   (two parts of 2 bytes); 0x10 takes 0x3000's, bytes 0-7 */
	CHECK_EQ(fills[3].slot, fills[1].slot);
	CHECK_EQ(fills[3].count, 1);
	CHECK_EQ(fills[3].mask, 0x3);
	CHECK_EQ(fills[4].slot, fills[2].slot);
	CHECK_EQ(fills[4].mask, 0xf);
	CHECK_EQ(fills[0].count + fills[1].count + fills[2].count, 0);	/* cold ways */
	/* I1's line: the fetch and the one after, two uses */
	CHECK_EQ(u.l1[0].use[fills[0].slot].count, 2);
	use_caches_free(&u);
}

int main(void)
{
	PLAN(3);
	RUN(caches_take);
	RUN(charges_at_eviction);
	RUN(nothing_charged);
	return CHECK_DONE();
}
