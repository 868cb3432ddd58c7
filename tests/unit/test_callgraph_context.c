/*
 * The call-graph replay's contexts (callgraph/context.c): a context is a
 * function and up to --separate-callers of its callers, read from the
 * thread's function stack but not past a signal handler's marker; the
 * same functions give the same context, others a new one, numbered in
 * the order first seen.  Returns are what the call stack does to the
 * function stack: its top and the context go back.
 */
#include "callgraph_fixture.h"

/* A replay whose functions 1 to 6 keep callers callers in their
   contexts, and its thread 1. */
static struct thread *start(struct replay *r, struct cgt_callgraph_options *o, int callers)
{
	cgt_callgraph_defaults(o);
	o->separate_callers = callers;
	CHECK(replay_init(r, o) == 0);
	CHECK(vec_extend(&r->fns, 7) == 0);
	for (uint32_t fn = 1; fn <= 6; fn++)
		FN(r, fn).separate_callers = callers;
	struct thread *t = get_thread(r, 1);
	CHECK(t != NULL);
	return t;
}

/* Enters fn's context: the thread's context after. */
static uint32_t enter(struct replay *r, struct thread *t, uint32_t fn)
{
	push_cxt(r, t, fn);
	CHECK(!r->failed);
	return state(t)->cxt;
}

/* Back to a function stack of depth fn_top, in context cxt, as a return
   goes back. */
static void back_to(struct thread *t, uint32_t fn_top, uint32_t cxt)
{
	t->fn_top = fn_top;
	state(t)->cxt = cxt;
}

/* A context's functions as decimal digits, the function first, then its
   callers: 321 is 3 called by 2 called by 1. */
static uint32_t fns_of(struct replay *r, uint32_t cxt)
{
	uint32_t digits = 0;
	for (uint32_t k = 0; k < CXT(r, cxt).n; k++)
		digits = digits * 10 + AT(r->context_fns, uint32_t, CXT(r, cxt).first + k);
	return digits;
}

/* --separate-callers=2: a function and two callers. */
static void two_callers(void)
{
	struct replay r;
	struct cgt_callgraph_options o;
	struct thread *t = start(&r, &o, 2);

	CHECK_EQ(enter(&r, t, 1), 0);
	CHECK_EQ(fns_of(&r, 0), 1);
	CHECK_EQ(*active(&r, t, 1), 1);	/* the stack's first function */
	CHECK_EQ(enter(&r, t, 2), 1);
	CHECK_EQ(fns_of(&r, 1), 21);
	CHECK_EQ(enter(&r, t, 3), 2);
	CHECK_EQ(fns_of(&r, 2), 321);
	CHECK_EQ(enter(&r, t, 4), 3);
	CHECK_EQ(fns_of(&r, 3), 432);	/* 1 is a third caller */

	/* back in 2: the same stack again, the same contexts */
	back_to(t, 2, 1);
	CHECK_EQ(enter(&r, t, 3), 2);
	CHECK_EQ(enter(&r, t, 4), 3);
	CHECK_EQ(r.contexts.n, 4);

	/* back in 1: 3 called from 1 is another context, and so is 4 in it */
	back_to(t, 1, 0);
	CHECK_EQ(enter(&r, t, 3), 4);
	CHECK_EQ(fns_of(&r, 4), 31);
	CHECK_EQ(enter(&r, t, 4), 5);
	CHECK_EQ(fns_of(&r, 5), 431);

	/* direct recursion: 4 again on top is no new stack entry */
	uint32_t depth = t->fn_top;
	CHECK_EQ(enter(&r, t, 4), 5);
	CHECK_EQ(t->fn_top, depth);

	/* a signal handler: no context at its marker, and its functions'
	   contexts stop there */
	CHECK_EQ(enter(&r, t, 0), NONE);
	CHECK_EQ(enter(&r, t, 5), 6);
	CHECK_EQ(fns_of(&r, 6), 5);
	CHECK_EQ(*active(&r, t, 5), 1);	/* the handler stack's first function */
	CHECK_EQ(enter(&r, t, 6), 7);
	CHECK_EQ(fns_of(&r, 7), 65);
	CHECK_EQ(r.contexts.n, 8);
	replay_free(&r);
}

/* Without callers (the default): a function's context whoever calls it. */
static void no_callers(void)
{
	struct replay r;
	struct cgt_callgraph_options o;
	struct thread *t = start(&r, &o, 0);

	CHECK_EQ(enter(&r, t, 1), 0);
	CHECK_EQ(enter(&r, t, 2), 1);
	CHECK_EQ(enter(&r, t, 3), 2);
	CHECK_EQ(fns_of(&r, 2), 3);
	back_to(t, 1, 0);
	CHECK_EQ(enter(&r, t, 3), 2);
	CHECK_EQ(enter(&r, t, 2), 1);
	CHECK_EQ(r.contexts.n, 3);
	replay_free(&r);
}

int main(void)
{
	PLAN(2);
	RUN(two_callers);
	RUN(no_callers);
	return CHECK_DONE();
}
