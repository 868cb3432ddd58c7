/*
 * simulate/callgraph_backdate.h: the back-dating tree on hand-computed
 * sequences.  A charge reaches every arc active when its line was loaded,
 * once the activation has returned and nothing holds it; not before, and
 * not the arcs active when it is charged.  And with the cache-use sink: a
 * line loaded under one call and evicted under another charges the first.
 */
#include "callgraph_backdate.h"
#include "cache_use.h"
#include "check.h"

static const int columns[USE_COLUMNS] = { 0, 1, 2, 3 };

/* Arcs 5 (cost row at 10) and 6 (row 20): main -> f -> g. */
static void pending_until_returned_and_let_go(void)
{
	struct backdate b;
	uint64_t costs[40] = { 0 };
	backdate_init(&b, columns);
	uint32_t f = backdate_node(&b, NO_NODE, 5, 10);
	uint32_t g = backdate_node(&b, f, 6, 20);
	CHECK(f != NO_NODE && g != NO_NODE && f != g);
	CHECK_EQ(b.live, 2);
	backdate_hold(&b, g);			/* a line loaded in g */
	backdate_charge(&b, g, 0, 100);
	backdate_returned(&b, g, costs);	/* g returns: the line still holds it */
	backdate_returned(&b, f, costs);
	CHECK_EQ(costs[20] + costs[10], 0);
	CHECK_EQ(b.live, 2);
	backdate_charge(&b, g, 1, 7);		/* the line evicted */
	backdate_let_go(&b, g, costs);
	CHECK_EQ(costs[20], 100);		/* f -> g */
	CHECK_EQ(costs[21], 7);
	CHECK_EQ(costs[10], 100);		/* main -> f: it was active too */
	CHECK_EQ(costs[11], 7);
	CHECK_EQ(b.live, 0);
	CHECK_EQ(b.peak, 2);
	CHECK_EQ(b.n_arcs, 2);
	CHECK_EQ(b.arcs[0], 6);
	CHECK_EQ(b.arcs[1], 5);

	/* A node freed is made again; one not returned keeps its costs. */
	uint32_t h = backdate_node(&b, NO_NODE, 7, 30);
	CHECK(h == f || h == g);
	backdate_hold(&b, h);
	backdate_charge(&b, h, 2, 50);
	backdate_let_go(&b, h, costs);
	CHECK_EQ(costs[32], 0);
	backdate_returned(&b, h, costs);
	CHECK_EQ(costs[32], 50);
	/* no arc (a skipped function's frame): its costs go to its caller's */
	uint32_t top = backdate_node(&b, NO_NODE, 8, 36);
	uint32_t skipped = backdate_node(&b, top, NO_ARC, 0);
	backdate_charge(&b, skipped, 3, 9);
	backdate_returned(&b, skipped, costs);
	backdate_returned(&b, top, costs);
	CHECK_EQ(costs[39], 9);
	backdate_free(&b);
}

/* One set of two ways in D1.  main -> toucher (arc 1, row 8) loads a line
   and returns; main -> evictor (arc 2, row 12) loads two more, evicting
   it: its charge goes to main -> toucher, none to main -> evictor. */
static void charged_to_the_loaders_calls(void)
{
	struct cgt_hierarchy h = { 0 };
	h.level[CGT_LEVEL_I1] = (struct cgt_cache_config){ 128, 2, 64 };
	h.level[CGT_LEVEL_D1] = (struct cgt_cache_config){ 128, 2, 64 };
	h.level[CGT_LEVEL_LL] = (struct cgt_cache_config){ 256, 2, 64 };
	struct backdate b;
	struct use_sink s;
	uint64_t costs[24] = { 0 };
	backdate_init(&b, columns);
	CHECK(use_sink_init(&s, &h, columns, &b) == 0);
	uint32_t toucher = backdate_node(&b, NO_NODE, 1, 8);
	struct use_fill f = { 0, 0, 1, 0, 0, 1, 1, 1 };
	use_sink_fill(&s, &f, 16, toucher, 1, costs);	/* its row: 16 */
	backdate_returned(&b, toucher, costs);
	uint32_t evictor = backdate_node(&b, NO_NODE, 2, 12);
	f = (struct use_fill){ 0, 0, 0, 0, 0, 2, 1, 1 };
	use_sink_fill(&s, &f, 20, evictor, 1, costs);
	f = (struct use_fill){ 0, 0, 1, 1, 0x1, 3, 1, 1 };	/* evicts toucher's: 1 use, 1 part */
	use_sink_fill(&s, &f, 20, evictor, 1, costs);
	CHECK_EQ(costs[16], 1000);		/* self */
	CHECK_EQ(costs[17], 62);
	CHECK_EQ(costs[8], 0);			/* LL still holds it */
	CHECK_EQ(costs[12] + costs[13], 0);
	backdate_returned(&b, evictor, costs);
	const struct level_use none[2] = { { 0, 0 }, { 0, 0 } };
	const struct level_use *const l1[2] = { none, none };
	use_sink_finish(&s, l1, 1, costs);	/* LL's lines: 1 use pushed up to toucher's */
	CHECK_EQ(costs[8], 1000);		/* main -> toucher: AcCost1 */
	CHECK_EQ(costs[9], 62);
	CHECK_EQ(costs[10], 1000);		/* and AcCost2 */
	CHECK_EQ(costs[12] + costs[13] + costs[14] + costs[15], 0);	/* main -> evictor */
	CHECK_EQ(s.charged[USE_ACCOST1], 1000);
	CHECK_EQ(b.live, 0);
	use_sink_free(&s);
	backdate_free(&b);
}

int main(void)
{
	PLAN(2);
	RUN(pending_until_returned_and_let_go);
	RUN(charged_to_the_loaders_calls);
	return CHECK_DONE();
}
