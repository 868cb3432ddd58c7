/* The branch predictors, against hand-computed sequences. */
#include <string.h>

#include "branch_model.h"
#include "check.h"

static struct branch_model b;

/* 1 if mispredicted (the state being known). */
static int cond_branch_is_mispredict(struct branch_model *m, uint64_t pc, int taken)
{
	uint32_t counter;
	uint8_t state;
	return cond_branch(m, &m->history, pc, taken, &counter, &state) == BRANCH_MISPREDICTED;
}

static int indirect_branch_is_mispredict(struct branch_model *m, uint64_t pc, uint64_t target)
{
	uint32_t slot;
	return indirect_branch(m, pc, target, &slot) == BRANCH_MISPREDICTED;
}

static void always_taken_warms_up(void)
{
	/* Counters start strongly not-taken and the history changes the index
	   until it is all ones: the first 7 branches each meet a fresh counter
	   (7 mispredicts), then the all-ones counter needs two more taken
	   outcomes (2 mispredicts) before it predicts taken. */
	int misses = 0;
	branch_model_init(&b, 1, 0);
	for (int i = 0; i < 100; i++)
		misses += cond_branch_is_mispredict(&b, 0x401000, 1);
	CHECK_EQ(misses, 9);
}

static void never_taken_is_free(void)
{
	int misses = 0;
	branch_model_init(&b, 1, 0);
	for (int i = 0; i < 100; i++)
		misses += cond_branch_is_mispredict(&b, 0x401000, 0);
	CHECK_EQ(misses, 0);
}

static void index_uses_low_address_bits(void)
{
	/* Two branches 128 bytes apart share counters (7 address bits); with the
	   same history they alias, one taken, one not: each flip mispredicts
	   once the counter has moved. */
	branch_model_init(&b, 1, 0);
	CHECK_EQ(cond_branch_is_mispredict(&b, 0x1000, 1), 1);	/* counter[0|0] 0->1 */
	b.history = 0;
	CHECK_EQ(cond_branch_is_mispredict(&b, 0x1080, 1), 0 + 1);	/* 1 -> predicts NT */
	b.history = 0;
	CHECK_EQ(cond_branch_is_mispredict(&b, 0x1000, 1), 0);	/* counter 2: taken */
	CHECK_EQ(counter_value(b.counters[0], 0), 3);
}

static void indirect_targets(void)
{
	branch_model_init(&b, 1, 0);
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5000, 0x6000), 1);
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5000, 0x6000), 0);
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5000, 0x7000), 1);
	/* 512 entries: 0x5000 + 512 aliases */
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5200, 0x7000), 0);
	CHECK_EQ(indirect_branch_is_mispredict(&b, 0x5001, 0x7000), 1);
}

static void unknown_start_learns_what_it_can(void)
{
	/* A counter that could have started anywhere: after one taken branch
	   it is 1, 2, 3 or 3 -- no prediction yet; after two, at least 2:
	   taken, whatever it started at. */
	uint32_t counter = 99;
	uint8_t state = 0;
	branch_model_init(&b, 0, 0);
	CHECK_EQ(cond_branch(&b, &b.history, 0x1000, 1, &counter, &state), BRANCH_UNKNOWN);
	CHECK_EQ(counter, 0);
	CHECK_EQ(state, COUNTER_STARTED_UNKNOWN);
	b.history = 0;
	CHECK_EQ(cond_branch(&b, &b.history, 0x1000, 1, &counter, &state), BRANCH_UNKNOWN);
	b.history = 0;
	CHECK_EQ(cond_branch(&b, &b.history, 0x1000, 1, &counter, &state), BRANCH_PREDICTED);
	/* started at 1 (weakly not taken), the first was mispredicted */
	struct branch_model before;
	branch_model_init(&before, 1, 0);
	before.counters[0] = 1 * 0x55;
	CHECK_EQ(branch_settle_cond(&before, 0, COUNTER_STARTED_UNKNOWN, 1), 1);
	before.counters[0] = 2 * 0x55;
	CHECK_EQ(branch_settle_cond(&before, 0, COUNTER_STARTED_UNKNOWN, 1), 0);
}

/* A random run of branches, simulated whole from the start and in pieces
   from unknown states settled one after another: the same mispredicts and
   the same final state. */
static void pieces_settle_to_the_whole(void)
{
	enum { N = 20000, PIECES = 5 };
	static uint64_t pcs[N], targets[N];
	static uint8_t taken[N], indirect[N];
	uint32_t x = 12345;
	for (int i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		pcs[i] = 0x400000 + ((x >> 8) % 300) * 3;
		indirect[i] = (x >> 4) % 8 == 0;
		taken[i] = ((x >> 12) % 4) != 0;
		targets[i] = 0x500000 + ((x >> 16) % 4) * 64;
	}
	struct branch_model whole, exact, piece;
	uint64_t whole_misses = 0, piece_misses = 0;
	uint32_t at;
	uint8_t state;
	branch_model_init(&whole, 1, 0);
	for (int i = 0; i < N; i++)
		whole_misses += indirect[i] ? indirect_branch(&whole, pcs[i], targets[i], &at) == BRANCH_MISPREDICTED
					    : cond_branch(&whole, &whole.history, pcs[i], taken[i], &at, &state) == BRANCH_MISPREDICTED;

	branch_model_init(&exact, 1, 0);
	for (int p = 0; p < PIECES; p++) {
		branch_model_init(&piece, p == 0, exact.history);
		for (int i = p * N / PIECES; i < (p + 1) * N / PIECES; i++) {
			enum branch_outcome o;
			if (indirect[i]) {
				o = indirect_branch(&piece, pcs[i], targets[i], &at);
				if (o == BRANCH_UNKNOWN)
					o = branch_settle_indirect(&exact, at, targets[i]);
			} else {
				o = cond_branch(&piece, &piece.history, pcs[i], taken[i], &at, &state);
				if (o == BRANCH_UNKNOWN)
					o = branch_settle_cond(&exact, at, state, taken[i]);
			}
			piece_misses += o == BRANCH_MISPREDICTED;
		}
		if (p > 0)
			branch_settle(&piece, &exact);
		exact = piece;
	}
	CHECK(whole_misses > 1000);
	CHECK_EQ(piece_misses, whole_misses);
	CHECK(memcmp(exact.counters, whole.counters, sizeof(whole.counters)) == 0);
	CHECK(memcmp(exact.targets, whole.targets, sizeof(whole.targets)) == 0);
}

int main(void)
{
	PLAN(6);
	RUN(always_taken_warms_up);
	RUN(never_taken_is_free);
	RUN(index_uses_low_address_bits);
	RUN(indirect_targets);
	RUN(unknown_start_learns_what_it_can);
	RUN(pieces_settle_to_the_whole);
	return CHECK_DONE();
}
