/*
 * The call-graph replay's BBs (callgraph/bb.c): a trace block's BB is
 * made on its first execution; another translation of the same code is
 * the same BB, other code at the same address a BB of its own; code
 * without a name is a function named by its offset; a function's
 * settings come from the patterns of Callgrind's options; the end's jump
 * kind is Callgrind's.  And a BB's exits as Callgrind numbers them
 * (jmps_passed), the inverted last branch's two swapped.
 */
#include "callgraph_fixture.h"

static const struct fake_fn program[] = {
	{ "main", "main.c", "/bin/prog", 0x1000, 0x1100 },
	{ "helper", "main.c", "/bin/prog", 0x2000, 0x2100 },
	{ 0 },
};

static const char *fn_of(struct replay *r, uint32_t bb)
{
	return AT(r->fn_names, struct name_node, BB(r, bb).fn).name;
}

static uint8_t end_kind(struct replay *r, uint32_t bb)
{
	return AT(r->bb_jmps, struct bb_jmp, BB(r, bb).jmp + BB(r, bb).cjmp_count).kind;
}

static void blocks_and_bbs(void)
{
	static const char *const skip[] = { "m?i*", NULL };
	struct cgt_callgraph_options o;
	fake_options(&o, program);
	o.fn_skip = skip;
	struct replay r;
	CHECK(replay_init(&r, &o) == 0);
	static struct fake_block first, again, changed, other, unnamed;
	fake_block(&first, 0, 0x1000, 2, CGT_JUMP_CALL);
	fake_block(&again, 1, 0x1000, 2, CGT_JUMP_CALL);	/* translated again */
	fake_block(&changed, 2, 0x1000, 3, CGT_JUMP_RETURN);	/* new code there */
	fake_block(&other, 3, 0x2004, 1, CGT_JUMP_BORING);
	fake_block(&unnamed, 4, 0x9000, 1, CGT_JUMP_BORING);
	other.end.dst_known = 1;
	other.end.dst = 0x2008;	/* the next instruction: a fall-through */

	uint32_t bb = get_bb(&r, &first.blk);
	CHECK_EQ(bb, 0);
	CHECK_EQ(get_bb(&r, &first.blk), 0);
	CHECK_EQ(get_bb(&r, &again.blk), 0);
	CHECK_EQ(get_bb(&r, &changed.blk), 1);
	CHECK_EQ(get_bb(&r, &other.blk), 2);
	CHECK_EQ(get_bb(&r, &unnamed.blk), 3);
	CHECK_EQ(r.bbs.n, 4);

	CHECK(strcmp(fn_of(&r, 0), "main") == 0);
	CHECK_EQ(BB(&r, 1).fn, BB(&r, 0).fn);
	CHECK(strcmp(fn_of(&r, 2), "helper") == 0);
	CHECK(strcmp(fn_of(&r, 3), "0x0000000000009000") == 0);
	CHECK_EQ(BB(&r, 0).is_entry, 1);
	CHECK_EQ(BB(&r, 2).is_entry, 0);
	CHECK_EQ(BB(&r, 2).offset, 0x2004);
	CHECK_EQ(BB(&r, 3).obj, 2);	/* "???", after /bin/prog */
	CHECK_EQ(FN(&r, BB(&r, 0).fn).skip, 1);
	CHECK_EQ(FN(&r, BB(&r, 2).fn).skip, 0);
	CHECK_EQ(FN(&r, BB(&r, 0).fn).separate_recs, 2);

	CHECK_EQ(end_kind(&r, 0), JK_CALL);
	CHECK_EQ(end_kind(&r, 1), JK_RETURN);
	CHECK_EQ(end_kind(&r, 2), JK_NONE);
	CHECK_EQ(end_kind(&r, 3), JK_JUMP);
	replay_free(&r);
}

/* Two side exits and the end: the trace numbers them 1, 2 and 0,
   Callgrind 0, 1 and 2 -- or, with the last branch inverted, 0, 2 and 1. */
static void exits(void)
{
	struct bb bb = { .cjmp_count = 2 };
	CHECK_EQ(passed_of(&bb, 1), 0);
	CHECK_EQ(passed_of(&bb, 2), 1);
	CHECK_EQ(passed_of(&bb, 0), 2);
	bb.inverted = 1;
	CHECK_EQ(passed_of(&bb, 1), 0);
	CHECK_EQ(passed_of(&bb, 2), 2);
	CHECK_EQ(passed_of(&bb, 0), 1);
	for (int inverted = 0; inverted <= 1; inverted++) {
		bb.inverted = (uint8_t)inverted;
		for (uint32_t exit = 0; exit <= 2; exit++)
			CHECK_EQ(trace_exit_of(&bb, passed_of(&bb, exit)), exit);
	}
}

int main(void)
{
	PLAN(2);
	RUN(blocks_and_bbs);
	RUN(exits);
	return CHECK_DONE();
}
