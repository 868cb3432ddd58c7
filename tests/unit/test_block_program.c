/*
 * simulate/block_program.h: which fetches a block program keeps.  Without
 * use counting, an instruction fetched from the line the one before it
 * ended in is left out; with it, it is merged into that step (a run: len
 * to its end, more one higher), a run ending at an exit so that each
 * prefix holds its own, and never growing a straddling step; for an
 * engine that takes no runs, a step each.
 */
#include <stdlib.h>

#include "block_program.h"
#include "check.h"

/* 64-byte lines.  Instructions: 0x1000 (4 bytes), 0x1004 (4), 0x1008 (6,
   a conditional branch: exit 1), 0x100e (4), 0x103e (4, straddling into
   0x1040), 0x1042 (2), 0x1080 (2). */
static struct cgt_insn insns[] = {
	{ 0x1000, 4 }, { 0x1004, 4 }, { 0x1008, 6 }, { 0x100e, 4 },
	{ 0x103e, 4 }, { 0x1042, 2 }, { 0x1080, 2 },
};
static struct cgt_op ops[] = {
	{ CGT_OP_INSN, 0, 0, 0 }, { CGT_OP_INSN, 0, 1, 0 }, { CGT_OP_INSN, 0, 2, 0 },
	{ CGT_OP_COND, 0, 2, 0 }, { CGT_OP_INSN, 0, 3, 0 }, { CGT_OP_INSN, 0, 4, 0 },
	{ CGT_OP_INSN, 0, 5, 0 }, { CGT_OP_INSN, 0, 6, 0 },
};
static uint32_t exit_ops[] = { 3 };

static struct block_program *compile(enum fetch_steps fetches)
{
	struct cgt_block blk = { .n_insns = 7, .n_ops = 8, .n_exits = 1, .insns = insns, .ops = ops,
				 .exit_ops = exit_ops };
	struct block_program_options o = { .cache_sim = 1, .fetch_line_bits = 6,
					   .fetch_sets_mask = 63, .min_line = 64,
					   .fetches = (uint8_t)fetches };
	struct block_program *bp = block_program_compile(&blk, &o);
	CHECK(bp != NULL);
	return bp;
}

static void elided(void)
{
	struct block_program *bp = compile(FETCH_NEW_LINES);
	/* 0x1000; 0x103e (straddles); 0x1080.  0x1004-0x100e and 0x1042 hit. */
	CHECK_EQ(bp->prefixes[0].n_fetches, 3);
	CHECK_EQ(bp->prefixes[1].n_fetches, 1);	/* left by the branch */
	CHECK_EQ(bp->fetches[0].addr, 0x1000);
	CHECK_EQ(bp->fetches[1].addr, 0x103e);
	CHECK_EQ(bp->fetches[1].line, FETCH_STRADDLES);
	CHECK_EQ(bp->fetches[2].addr, 0x1080);
	for (uint32_t k = 0; k < 3; k++)
		CHECK_EQ(bp->fetches[k].more, 0);
	free(bp);
}

static void runs(void)
{
	struct block_program *bp = compile(FETCH_RUNS);
	/* 0x1000-0x100d (3 fetches, up to the exit); 0x100e; 0x103e; 0x1042
	   (after a straddle, a step of its own); 0x1080 */
	CHECK_EQ(bp->prefixes[1].n_fetches, 1);
	CHECK_EQ(bp->prefixes[0].n_fetches, 5);
	CHECK_EQ(bp->fetches[0].addr, 0x1000);
	CHECK_EQ(bp->fetches[0].len, 14);
	CHECK_EQ(bp->fetches[0].more, 2);
	CHECK_EQ(bp->fetches[1].addr, 0x100e);
	CHECK_EQ(bp->fetches[1].more, 0);
	CHECK_EQ(bp->fetches[2].addr, 0x103e);
	CHECK_EQ(bp->fetches[2].more, 0);
	CHECK_EQ(bp->fetches[3].addr, 0x1042);
	CHECK_EQ(bp->fetches[3].more, 0);
	CHECK_EQ(bp->fetches[4].addr, 0x1080);
	CHECK_EQ(bp->fetches[4].op, 7);
	free(bp);
}

static void each(void)
{
	struct block_program *bp = compile(FETCH_EACH);
	CHECK_EQ(bp->prefixes[1].n_fetches, 3);
	CHECK_EQ(bp->prefixes[0].n_fetches, 7);
	for (uint32_t k = 0; k < 7; k++) {
		CHECK_EQ(bp->fetches[k].addr, insns[k].addr);
		CHECK_EQ(bp->fetches[k].len, insns[k].len);
		CHECK_EQ(bp->fetches[k].more, 0);
	}
	CHECK_EQ(bp->fetches[3].op, 4);	/* after the branch */
	free(bp);
}

int main(void)
{
	PLAN(3);
	RUN(elided);
	RUN(runs);
	RUN(each);
	return CHECK_DONE();
}
