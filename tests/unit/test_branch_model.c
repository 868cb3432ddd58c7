/* The branch predictors, against hand-computed sequences. */
#include <string.h>

#include "branch_model.h"
#include "check.h"

static struct branch_model b;

static void always_taken_warms_up(void)
{
	/* Counters start strongly not-taken and the history changes the index
	   until it is all ones: the first 7 branches each meet a fresh counter
	   (7 mispredicts), then the all-ones counter needs two more taken
	   outcomes (2 mispredicts) before it predicts taken. */
	int misses = 0;
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < 100; i++)
		misses += cond_branch_is_mispredict(&b, 0x401000, 1);
	CHECK_EQ(misses, 9);
}

static void never_taken_is_free(void)
{
	int misses = 0;
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < 100; i++)
		misses += cond_branch_is_mispredict(&b, 0x401000, 0);
	CHECK_EQ(misses, 0);
}

static void index_uses_low_address_bits(void)
{
	/* Two branches 128 bytes apart share counters (7 address bits); with the
	   same history they alias, one taken, one not: each flip mispredicts
	   once the counter has moved. */
	memset(&b, 0, sizeof(b));
	CHECK_EQ(cond_branch_is_mispredict(&b, 0x1000, 1), 1);	/* counter[0|0] 0->1 */
	b.history = 0;
	CHECK_EQ(cond_branch_is_mispredict(&b, 0x1080, 1), 0 + 1);	/* 1 -> predicts NT */
	b.history = 0;
	CHECK_EQ(cond_branch_is_mispredict(&b, 0x1000, 1), 0);	/* counter 2: taken */
	CHECK_EQ(b.counters[0], 3);
}

static void indirect_targets(void)
{
	memset(&b, 0, sizeof(b));
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5000, 0x6000), 1);
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5000, 0x6000), 0);
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5000, 0x7000), 1);
	/* 512 entries: 0x5000 + 512 aliases */
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5200, 0x7000), 0);
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5001, 0x7000), 1);
}

int main(void)
{
	RUN(always_taken_warms_up);
	RUN(never_taken_is_free);
	RUN(index_uses_low_address_bits);
	RUN(indirect_targets);
	return CHECK_DONE();
}
