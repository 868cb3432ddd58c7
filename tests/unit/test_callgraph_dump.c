/*
 * The call-graph replay's dumps (callgraph/dump.c): the cost centres that
 * ran, in Callgrind's order -- by object, file and function as first
 * seen, then by offset, whatever order they ran in -- each instruction's
 * cost (without cache simulation, the executions that reached it), each
 * call's count and inclusive cost, the summary; and a dump takes what it
 * writes, so a dump right after it has nothing.
 */
#include "callgraph_fixture.h"

/* main and b in the program, a in a library: seen main, a, b. */
static const struct fake_fn program[] = {
	{ "main", "main.c", "/bin/prog", 0x1000, 0x1100 },
	{ "b", "b.c", "/bin/prog", 0x3000, 0x3100 },
	{ "a", "a.c", "/lib/liba.so", 0x7000, 0x7100 },
	{ 0 },
};

/* main: M1 calls a, M2 calls b, M3 ends; a: A1 returns; b: B1 jumps to
   B3, which jumps to B2, which returns. */
static struct fake_block M1, M2, M3, A1, B1, B2, B3;

static const struct fake_exec run[] = {
	{ &M1, 1000 }, { &A1, 992 }, { &M2, 1000 }, { &B1, 992 }, { &B3, 992 }, { &B2, 992 },
	{ &M3, 1000 },
};

/* What a dump held, copied while the profile is valid. */
#define MAX_CENTRES 8
static struct dumped {
	size_t n_centres;
	struct {
		const char *fn;
		uint64_t offset;
		uint32_t n_insns;
		uint64_t ir[4];
		uint32_t n_arcs;
		uint64_t arc_count, arc_ir, arc_to_offset;
	} centre[MAX_CENTRES];
	uint64_t summary;
} dumped;

static int take_dump(void *arg, const struct cgt_cg_profile *p, struct cgt_error *e)
{
	(void)arg;
	(void)e;
	memset(&dumped, 0, sizeof(dumped));
	dumped.n_centres = p->n_centres;
	dumped.summary = p->summary[0];
	for (size_t i = 0; i < p->n_centres && i < MAX_CENTRES; i++) {
		const struct cgt_cg_centre *c = &p->centres[i];
		dumped.centre[i].fn = p->fns[p->context_fns[p->contexts[c->context].first]].name;
		dumped.centre[i].offset = c->offset;
		dumped.centre[i].n_insns = c->n_insns;
		for (uint32_t k = 0; k < c->n_insns && k < 4; k++)
			dumped.centre[i].ir[k] = c->cost[(size_t)k * p->events.n];
		dumped.centre[i].n_arcs = c->n_arcs;
		if (c->n_arcs > 0) {
			const struct cgt_cg_arc *a = &p->arcs[c->first_arc];
			dumped.centre[i].arc_count = a->count;
			dumped.centre[i].arc_ir = a->cost[0];
			dumped.centre[i].arc_to_offset = a->to_offset;
		}
	}
	return 0;
}

static void check_centre(size_t i, const char *fn, uint64_t offset, uint32_t n_insns)
{
	CHECK(i < dumped.n_centres && strcmp(dumped.centre[i].fn, fn) == 0);
	CHECK_EQ(dumped.centre[i].offset, offset);
	CHECK_EQ(dumped.centre[i].n_insns, n_insns);
	for (uint32_t k = 0; k < n_insns; k++)
		CHECK_EQ(dumped.centre[i].ir[k], 1);	/* each ran once */
}

static void order_and_costs(void)
{
	fake_block(&M1, 0, 0x1000, 2, CGT_JUMP_CALL);
	fake_block(&M2, 1, 0x1008, 1, CGT_JUMP_CALL);
	fake_block(&M3, 2, 0x100c, 1, CGT_JUMP_BORING);
	fake_block(&A1, 3, 0x7000, 3, CGT_JUMP_RETURN);
	fake_block(&B1, 4, 0x3000, 2, CGT_JUMP_BORING);
	fake_block(&B2, 5, 0x3010, 1, CGT_JUMP_RETURN);
	fake_block(&B3, 6, 0x3020, 1, CGT_JUMP_BORING);
	struct cgt_callgraph_options o;
	fake_options(&o, program);
	o.dump = take_dump;
	struct replay r;
	CHECK(replay_init(&r, &o) == 0);
	CHECK_EQ(replay_execs(&r, run, sizeof(run) / sizeof(run[0])), 1);
	struct cgt_error e = { 0 };
	CHECK_EQ(dump_profile(&r, NULL, &e), 0);

	/* M3 has not been counted: nothing started after it */
	CHECK_EQ(dumped.n_centres, 6);
	check_centre(0, "main", 0x1000, 2);
	check_centre(1, "main", 0x1008, 1);
	check_centre(2, "b", 0x3000, 2);
	check_centre(3, "b", 0x3010, 1);
	check_centre(4, "b", 0x3020, 1);
	check_centre(5, "a", 0x7000, 3);
	/* main's calls: a's 3 instructions, b's 2 + 1 + 1 */
	CHECK_EQ(dumped.centre[0].n_arcs, 1);
	CHECK_EQ(dumped.centre[0].arc_count, 1);
	CHECK_EQ(dumped.centre[0].arc_ir, 3);
	CHECK_EQ(dumped.centre[0].arc_to_offset, 0x7000);
	CHECK_EQ(dumped.centre[1].n_arcs, 1);
	CHECK_EQ(dumped.centre[1].arc_count, 1);
	CHECK_EQ(dumped.centre[1].arc_ir, 4);
	CHECK_EQ(dumped.centre[1].arc_to_offset, 0x3000);
	CHECK_EQ(dumped.centre[2].n_arcs, 0);
	CHECK_EQ(dumped.summary, 2 + 3 + 1 + 2 + 1 + 1);

	/* what it wrote is gone */
	CHECK_EQ(dump_profile(&r, "again", &e), 0);
	CHECK_EQ(dumped.n_centres, 0);
	CHECK_EQ(dumped.summary, 0);
	replay_free(&r);
}

int main(void)
{
	PLAN(1);
	RUN(order_and_costs);
	return CHECK_DONE();
}
