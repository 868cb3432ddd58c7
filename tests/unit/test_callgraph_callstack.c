/*
 * The call-graph replay's call stack (callgraph/callstack.c): each call
 * pushes a frame with the stack pointer at the callee's entry, its return
 * address and the thread's cost then; unwinding to a stack pointer pops
 * the frames below it (and at it, as many as asked), and each popped
 * frame's arc gets the cost since its call, the caller's context back.
 */
#include "callgraph_fixture.h"

static const struct fake_fn program[] = {
	{ "main", "main.c", "/bin/prog", 0x1000, 0x1100 },
	{ "f", "f.c", "/bin/prog", 0x2000, 0x2100 },
	{ "g", "g.c", "/bin/prog", 0x3000, 0x3100 },
	{ "h", "h.c", "/bin/prog", 0x4000, 0x4100 },
	{ 0 },
};

static struct fake_block M, F, G, H;
static struct replay r;
static struct cgt_callgraph_options o;
static struct thread *t;
static struct cgt_error e;
static uint32_t bb_main, bb_f, bb_g, bb_h;

static void start(void)
{
	fake_block(&M, 0, 0x1000, 2, CGT_JUMP_CALL);
	fake_block(&F, 1, 0x2000, 2, CGT_JUMP_CALL);
	fake_block(&G, 2, 0x3000, 3, CGT_JUMP_CALL);
	fake_block(&H, 3, 0x4000, 1, CGT_JUMP_RETURN);
	fake_options(&o, program);
	CHECK(replay_init(&r, &o) == 0);
	bb_main = get_bb(&r, &M.blk);
	bb_f = get_bb(&r, &F.blk);
	bb_g = get_bb(&r, &G.blk);
	bb_h = get_bb(&r, &H.blk);
	t = get_thread(&r, 1);
	CHECK(t != NULL && bb_h != NONE);
}

/* The BBCC of bb called from BBCC from's end at stack pointer sp, as
   setup_bbcc calls: the callee's context first, its BBCC there (found,
   or made), then the frame. */
static uint32_t call(uint32_t from, uint32_t bb, uint64_t sp)
{
	push_cxt(&r, t, BB(&r, bb).fn);
	uint32_t c = lookup_bbcc(&r, bb, state(t)->cxt);
	if (c == NONE)
		c = new_rec0_bbcc(&r, bb, state(t)->cxt, 1);
	push_call_stack(&r, t, from, 0, c, sp, 0, &e);
	CHECK(!r.failed);
	return c;
}

/* The arc from BBCC from's end to BBCC to. */
static struct arc *arc(uint32_t from, uint32_t to)
{
	for (uint32_t a = *U32(&r, BBCC(&r, from).jcc_heads); a != NONE; a = ARC(&r, a).next_from)
		if (ARC(&r, a).to == to)
			return &ARC(&r, a);
	CHECK(!"no such arc");
	return &ARC(&r, 0);
}

static void push_then_unwind(void)
{
	start();
	push_cxt(&r, t, BB(&r, bb_main).fn);
	uint32_t cxt_main = state(t)->cxt;
	uint32_t c_main = new_rec0_bbcc(&r, bb_main, cxt_main, 1);

	/* main calls f calls g calls h, the thread's cost 10, 25, 32 then */
	state(t)->cost[0] = 10;
	uint32_t c_f = call(c_main, bb_f, 1000);
	uint32_t cxt_f = state(t)->cxt;
	state(t)->cost[0] = 25;
	uint32_t c_g = call(c_f, bb_g, 900);
	uint32_t cxt_g = state(t)->cxt;
	state(t)->cost[0] = 32;
	uint32_t c_h = call(c_g, bb_h, 800);
	state(t)->cost[0] = 40;
	CHECK_EQ(t->sp, 3);
	CHECK_EQ(entry(t, 0)->sp, 1000);
	CHECK_EQ(entry(t, 0)->ret_addr, 0x1008);	/* after main's second instruction */
	CHECK_EQ(entry(t, 1)->ret_addr, 0x2008);
	CHECK_EQ(entry(t, 2)->ret_addr, 0x300c);
	CHECK_EQ(entry(t, 2)->enter_cost[0], 32);
	CHECK_EQ(*active(&r, t, BB(&r, bb_g).fn), 1);
	CHECK_EQ(arc(c_g, c_h)->call_counter, 1);

	/* to 850: h's frame (800) goes, g's (900) stays */
	CHECK_EQ(unwind_call_stack(&r, t, 850, 0, &e), 1);
	CHECK_EQ(t->sp, 2);
	CHECK_EQ(U64(&r, arc(c_g, c_h)->cost)[0], 40 - 32);
	CHECK_EQ(state(t)->cxt, cxt_g);
	CHECK_EQ(*active(&r, t, BB(&r, bb_h).fn), 0);
	/* to 900: g's frame is at it, and stays unless a pop is asked for */
	CHECK_EQ(unwind_call_stack(&r, t, 900, 0, &e), 0);
	CHECK_EQ(t->sp, 2);
	CHECK_EQ(unwind_call_stack(&r, t, 900, 1, &e), 1);
	CHECK_EQ(t->sp, 1);
	CHECK_EQ(U64(&r, arc(c_f, c_g)->cost)[0], 40 - 25);
	CHECK_EQ(state(t)->cxt, cxt_f);
	CHECK_EQ(BBCC(&r, c_f).ret_counter, 1);

	/* f calls g calls h again, then to 1000: both frames below it go,
	   f's at it stays */
	state(t)->cost[0] = 50;
	CHECK_EQ(call(c_f, bb_g, 900), c_g);
	state(t)->cost[0] = 53;
	CHECK_EQ(call(c_g, bb_h, 800), c_h);
	state(t)->cost[0] = 60;
	CHECK_EQ(t->sp, 3);
	CHECK_EQ(unwind_call_stack(&r, t, 1000, 0, &e), 2);
	CHECK_EQ(t->sp, 1);
	CHECK_EQ(arc(c_f, c_g)->call_counter, 2);
	CHECK_EQ(U64(&r, arc(c_f, c_g)->cost)[0], (40 - 25) + (60 - 50));
	CHECK_EQ(U64(&r, arc(c_g, c_h)->cost)[0], (40 - 32) + (60 - 53));

	/* past it: back in main, the stack empty */
	CHECK_EQ(unwind_call_stack(&r, t, 2000, 0, &e), 1);
	CHECK_EQ(t->sp, 0);
	CHECK_EQ(U64(&r, arc(c_main, c_f)->cost)[0], 60 - 10);
	CHECK_EQ(state(t)->cxt, cxt_main);
	CHECK_EQ(t->fn_top, 1);
	CHECK_EQ(*active(&r, t, BB(&r, bb_f).fn), 0);
	CHECK_EQ(unwind_call_stack(&r, t, 3000, 5, &e), 0);
	replay_free(&r);
}

int main(void)
{
	PLAN(1);
	RUN(push_then_unwind);
	return CHECK_DONE();
}
