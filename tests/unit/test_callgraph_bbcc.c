/*
 * The call-graph replay's BBCCs by recursion level (setup_bbcc in
 * callgraph/exec.c, callgraph/bbcc.c): a BB executed in a function that
 * is active n times is the BBCC of level n, up to --separate-recs, the
 * levels past it the last one's; calls go to the callee's level.  Traced
 * through executions handed over as the producer hands them: f calls
 * itself twice, then returns three times.
 */
#include "callgraph_fixture.h"

static const struct fake_fn program[] = {
	{ "main", "main.c", "/bin/prog", 0x1000, 0x1100 },
	{ "f", "f.c", "/bin/prog", 0x2000, 0x2100 },
	{ 0 },
};

/* main: M calls f; f: F1 jumps to F2, which calls f, or to F3, which
   returns; F4, after F2's call, returns; M2 is main after its call. */
static struct fake_block M, F1, F2, F3, F4, M2;

static const struct fake_exec run[] = {
	{ &M, 1000 },
	{ &F1, 992 }, { &F2, 992 },	/* f, level 1 */
	{ &F1, 984 }, { &F2, 984 },	/* level 2 */
	{ &F1, 976 }, { &F3, 976 },	/* level 3 */
	{ &F4, 984 },			/* back in level 2 */
	{ &F4, 992 },			/* back in level 1 */
	{ &M2, 1000 },
};

static void replay(struct replay *r, struct cgt_callgraph_options *o, int separate_recs)
{
	fake_block(&M, 0, 0x1000, 2, CGT_JUMP_CALL);
	fake_block(&F1, 1, 0x2000, 1, CGT_JUMP_BORING);
	fake_block(&F2, 2, 0x2004, 1, CGT_JUMP_CALL);
	fake_block(&F3, 3, 0x2010, 1, CGT_JUMP_RETURN);
	fake_block(&F4, 4, 0x2008, 1, CGT_JUMP_RETURN);
	fake_block(&M2, 5, 0x1008, 1, CGT_JUMP_BORING);
	fake_options(o, program);
	o->separate_recs = separate_recs;
	CHECK(replay_init(r, o) == 0);
	CHECK_EQ(replay_execs(r, run, sizeof(run) / sizeof(run[0])), 1);
	CHECK(!r->failed);
}

/* The BBCC of block b at recursion level rec + 1 (its only context's),
   NONE if there is none. */
static uint32_t bbcc(struct replay *r, const struct fake_block *b, uint32_t rec)
{
	uint32_t bb = AT(r->block_bb, uint32_t, b->blk.id) - 1;
	uint32_t c = BB(r, bb).bbcc_list;
	CHECK(c != NONE && BBCC(r, c).next_bbcc == NONE);
	uint32_t at = *U32(r, BBCC(r, c).rec_array + rec);
	CHECK(at == NONE || BBCC(r, at).rec == rec);
	return at;
}

/* Executions counted for block b's level rec + 1 (an execution is
   counted when the next one starts: M2 is not). */
static uint64_t executed(struct replay *r, const struct fake_block *b, uint32_t rec)
{
	uint32_t c = bbcc(r, b, rec);
	return c == NONE ? 0 : BBCC(r, c).ecounter_sum;
}

/* The arc from BBCC from's end to BBCC to: its calls, and its inclusive
   cost in *ir. */
static uint64_t calls(struct replay *r, uint32_t from, uint32_t to, uint64_t *ir)
{
	for (uint32_t a = *U32(r, BBCC(r, from).jcc_heads); a != NONE; a = ARC(r, a).next_from)
		if (ARC(r, a).to == to) {
			*ir = U64(r, ARC(r, a).cost)[0];
			return ARC(r, a).call_counter;
		}
	*ir = 0;
	return 0;
}

/* Callgrind's default, --separate-recs=2: levels 2 and 3 share f'2. */
static void two_levels(void)
{
	struct replay r;
	struct cgt_callgraph_options o;
	replay(&r, &o, 2);
	CHECK_EQ(executed(&r, &M, 0), 1);
	CHECK_EQ(executed(&r, &F1, 0), 1);
	CHECK_EQ(executed(&r, &F1, 1), 2);
	CHECK_EQ(executed(&r, &F2, 0), 1);
	CHECK_EQ(executed(&r, &F2, 1), 1);
	CHECK_EQ(executed(&r, &F3, 0), 0);	/* made with level 2's, never run */
	CHECK_EQ(executed(&r, &F3, 1), 1);
	CHECK_EQ(executed(&r, &F4, 0), 1);
	CHECK_EQ(executed(&r, &F4, 1), 1);
	CHECK_EQ(r.bbccs.n, 10);	/* those 9 and M2's */

	/* the calls, each to its level; the thread's Ir from each call to
	   its return: every block of f below it */
	uint64_t ir;
	CHECK_EQ(calls(&r, bbcc(&r, &M, 0), bbcc(&r, &F1, 0), &ir), 1);
	CHECK_EQ(ir, 8);
	CHECK_EQ(calls(&r, bbcc(&r, &F2, 0), bbcc(&r, &F1, 1), &ir), 1);
	CHECK_EQ(ir, 5);	/* F1 F2 F1 F3 F4 */
	CHECK_EQ(calls(&r, bbcc(&r, &F2, 1), bbcc(&r, &F1, 1), &ir), 1);
	CHECK_EQ(ir, 2);	/* F1 F3 */
	replay_free(&r);
}

/* --separate-recs=1: one BBCC per BB. */
static void one_level(void)
{
	struct replay r;
	struct cgt_callgraph_options o;
	replay(&r, &o, 1);
	CHECK_EQ(executed(&r, &F1, 0), 3);
	CHECK_EQ(executed(&r, &F2, 0), 2);
	CHECK_EQ(executed(&r, &F4, 0), 2);
	CHECK_EQ(r.bbccs.n, 6);
	uint64_t ir;
	CHECK_EQ(calls(&r, bbcc(&r, &F2, 0), bbcc(&r, &F1, 0), &ir), 2);
	CHECK_EQ(ir, 5 + 2);
	replay_free(&r);
}

/* --separate-recs=5: every level apart; a BB first run at level 3 has
   level 1's BBCC (made first) and level 3's. */
static void every_level(void)
{
	struct replay r;
	struct cgt_callgraph_options o;
	replay(&r, &o, 5);
	CHECK_EQ(executed(&r, &F1, 0), 1);
	CHECK_EQ(executed(&r, &F1, 1), 1);
	CHECK_EQ(executed(&r, &F1, 2), 1);
	CHECK_EQ(bbcc(&r, &F2, 2), NONE);
	CHECK_EQ(executed(&r, &F3, 0), 0);
	CHECK_EQ(bbcc(&r, &F3, 1), NONE);
	CHECK_EQ(executed(&r, &F3, 2), 1);
	CHECK_EQ(r.bbccs.n, 11);
	replay_free(&r);
}

int main(void)
{
	PLAN(3);
	RUN(two_levels);
	RUN(one_level);
	RUN(every_level);
	return CHECK_DONE();
}
