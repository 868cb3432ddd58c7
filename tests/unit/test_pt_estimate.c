/* The data-address estimator: interpolation between sampled executions,
   and which access a sample belongs to. */
#include <string.h>

#include "check.h"
#include "pt/pt_estimate.h"
#include "trace.h"

static struct x86_insn insn_with(unsigned n, const unsigned *kinds, uint32_t size)
{
	struct x86_insn in;
	memset(&in, 0, sizeof(in));
	in.len = 4;
	in.n_accesses = n;
	for (unsigned k = 0; k < n; k++)
		in.accesses[k] = (struct x86_access){ (uint8_t)kinds[k], size };
	return in;
}

static void interpolates_between_samples(void)
{
	static const unsigned kinds[] = { CGT_OP_READ };
	struct x86_insn in = insn_with(1, kinds, 8);
	struct pt_estimator est = { 0 };
	struct pt_insn_state *st = pt_estimator_state(&est, 0x1000, 1, &in);

	CHECK(st != NULL);
	CHECK_EQ(pt_estimator_address(st, 0, 0, 77), 77);	/* no samples: the fallback */
	CHECK_EQ(pt_estimator_add(&est, st, 0, 2, 0x8010), 0);
	CHECK_EQ(pt_estimator_add(&est, st, 0, 12, 0x8060), 0);
	CHECK_EQ(est.samples_placed, 2);
	CHECK_EQ(pt_estimator_address(st, 0, 0, 77), 0x8010);	/* before the first */
	CHECK_EQ(pt_estimator_address(st, 0, 2, 77), 0x8010);
	CHECK_EQ(pt_estimator_address(st, 0, 7, 77), 0x8038);	/* halfway */
	CHECK_EQ(pt_estimator_address(st, 0, 8, 77), 0x8040);	/* rounded to 8 bytes */
	CHECK_EQ(pt_estimator_address(st, 0, 12, 77), 0x8060);
	CHECK_EQ(pt_estimator_address(st, 0, 20, 77), 0x8060);	/* after the last */
	/* A second pass starts over. */
	pt_estimator_rewind(&est);
	CHECK_EQ(st->executions, 0);
	CHECK_EQ(pt_estimator_address(st, 0, 3, 77), 0x8018);
	/* Going down is interpolated too. */
	CHECK_EQ(pt_estimator_add(&est, st, 0, 22, 0x8000), 0);
	CHECK_EQ(pt_estimator_address(st, 0, 17, 77), 0x8030);
	pt_estimator_free(&est);
}

static void walks_are_interpolated_jumps_are_not(void)
{
	static const unsigned kinds[] = { CGT_OP_READ };
	struct x86_insn in = insn_with(1, kinds, 8);
	struct pt_estimator est = { 0 };
	struct pt_insn_state *far = pt_estimator_state(&est, 0x1000, 1, &in);
	struct pt_insn_state *strided = pt_estimator_state(&est, 0x1004, 1, &in);

	/* Stack, then heap: no walk from one to the other. */
	pt_estimator_add(&est, far, 0, 0, 0x7ffff000);
	pt_estimator_add(&est, far, 0, 10, 0x555555000);
	CHECK_EQ(pt_estimator_address(far, 0, 3, 77), 0x7ffff000);
	CHECK_EQ(pt_estimator_address(far, 0, 8, 77), 0x555555000);
	/* A page per execution, twice over: a stride, interpolated. */
	pt_estimator_add(&est, strided, 0, 0, 0x100000);
	pt_estimator_add(&est, strided, 0, 10, 0x10a000);
	pt_estimator_add(&est, strided, 0, 20, 0x114000);
	CHECK_EQ(pt_estimator_address(strided, 0, 5, 77), 0x105000);
	CHECK_EQ(pt_estimator_address(strided, 0, 15, 77), 0x10f000);
	pt_estimator_free(&est);
}

static void samples_find_their_access(void)
{
	static const unsigned kinds[] = { CGT_OP_READ, CGT_OP_READ, CGT_OP_WRITE };
	struct x86_insn in = insn_with(3, kinds, 1);
	struct pt_estimator est = { 0 };
	struct pt_insn_state *st = pt_estimator_state(&est, 0x2000, 1, &in);

	CHECK_EQ(pt_estimator_access_for(st, 5, 0), 0);
	CHECK_EQ(pt_estimator_add(&est, st, 0, 5, 0x100), 0);
	/* A second load sample of execution 5: the second read. */
	CHECK_EQ(pt_estimator_access_for(st, 5, 0), 1);
	CHECK_EQ(pt_estimator_access_for(st, 5, 1), 2);
	CHECK_EQ(pt_estimator_access_for(st, 6, 0), 0);
	/* One state per instruction and thread. */
	CHECK(pt_estimator_state(&est, 0x2000, 2, &in) != st);
	CHECK(pt_estimator_state(&est, 0x2000, 1, &in) == st);
	static const unsigned none[] = { 0 };
	struct x86_insn plain = insn_with(0, none, 0);
	struct pt_insn_state *st2 = pt_estimator_state(&est, 0x3000, 1, &plain);
	CHECK_EQ(pt_estimator_access_for(st2, 0, 0), -1);
	pt_estimator_free(&est);
}

int main(void)
{
	PLAN(3);
	RUN(interpolates_between_samples);
	RUN(walks_are_interpolated_jumps_are_not);
	RUN(samples_find_their_access);
	return CHECK_DONE();
}
