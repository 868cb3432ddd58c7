/*
 * The simulator: replays executions through the cache and branch models.
 *
 * Counting is split in two so that the hot loop only simulates:
 *  - per block, how many executions left by each exit (one increment per
 *    execution); at the end every op of an executed prefix is credited
 *    with those counts -- Ir, Dr, Dw, Bc and Bi follow from them;
 *  - per op, the rare events: misses, mispredicts, and the executions of
 *    guarded accesses whose guard held.
 */
#include <stdlib.h>
#include <string.h>

#include "branch_model.h"
#include "cache_model.h"
#include "sim.h"

enum { OP_DONE, OP_MISS1, OP_MISSLL };	/* per-op counters */

struct block_state {
	uint64_t *exit_counts;		/* [n_exits + 1]: [0] ran to the end */
	uint64_t (*op_counts)[3];	/* [n_ops] */
};

struct cgt_sim {
	struct cgt_sim_options o;
	uint32_t min_line;		/* smallest line size of the three */
	struct cache_model I1, D1, LL;
	struct branch_model branches;
	uint64_t last_fetch_line;	/* MRU line of the last instruction fetch */
	struct block_state *blocks;	/* by block id */
	uint32_t n_blocks;
};

int cgt_sim_open(struct cgt_sim **out, const struct cgt_sim_options *o, uint32_t max_access_size,
		 struct cgt_error *e)
{
	struct cgt_sim *s;

	*out = NULL;
	uint32_t min_line = (uint32_t)o->I1.line;
	if ((uint32_t)o->D1.line < min_line)
		min_line = (uint32_t)o->D1.line;
	if ((uint32_t)o->LL.line < min_line)
		min_line = (uint32_t)o->LL.line;
	if (o->cache_sim && min_line < max_access_size)
		return cgt_fail(e, cgt_err_invalid,
				"cannot continue: the minimum line size (%u)\n"
				"  must be equal to or larger than the maximum register size (%u)\n"
				"  but it is not.  Exiting now.",
				min_line, max_access_size);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	s->o = *o;
	s->min_line = min_line;
	s->last_fetch_line = UINT64_MAX;
	if (o->cache_sim &&
	    (cache_model_init(&s->I1, (uint32_t)o->I1.size, (uint32_t)o->I1.assoc, (uint32_t)o->I1.line) < 0 ||
	     cache_model_init(&s->D1, (uint32_t)o->D1.size, (uint32_t)o->D1.assoc, (uint32_t)o->D1.line) < 0 ||
	     cache_model_init(&s->LL, (uint32_t)o->LL.size, (uint32_t)o->LL.assoc, (uint32_t)o->LL.line) < 0)) {
		cgt_sim_close(s);
		return cgt_fail(e, cgt_err_nomem, "out of memory for the simulated caches");
	}
	*out = s;
	return 0;
}

static struct block_state *state_of(struct cgt_sim *s, const struct cgt_block *blk)
{
	if (blk->id >= s->n_blocks) {
		uint32_t n = s->n_blocks ? s->n_blocks : 1024;
		while (n <= blk->id)
			n *= 2;
		struct block_state *b = realloc(s->blocks, n * sizeof(*b));
		if (b == NULL)
			return NULL;
		memset(b + s->n_blocks, 0, (n - s->n_blocks) * sizeof(*b));
		s->blocks = b;
		s->n_blocks = n;
	}
	struct block_state *st = &s->blocks[blk->id];
	if (st->exit_counts == NULL) {
		st->exit_counts = calloc(blk->n_exits + 1 + 3 * (size_t)blk->n_ops, sizeof(uint64_t));
		if (st->exit_counts == NULL)
			return NULL;
		st->op_counts = (uint64_t(*)[3])(st->exit_counts + blk->n_exits + 1);
	}
	return st;
}

/* An instruction fetch.  A fetch from the line the previous fetch touched
   last is a hit that changes nothing (that line is its set's MRU, and only
   fetches touch I1), so it is not looked up. */
static inline void fetch(struct cgt_sim *s, uint64_t addr, uint32_t len, uint64_t *counts)
{
	uint64_t first = addr >> s->I1.line_bits, last = (addr + len - 1) >> s->I1.line_bits;

	if (first == last && first == s->last_fetch_line)
		return;
	s->last_fetch_line = last;
	if (cache_ref_is_miss(&s->I1, addr, len)) {
		counts[OP_MISS1]++;
		if (cache_ref_is_miss(&s->LL, addr, len))
			counts[OP_MISSLL]++;
	}
}

static inline void data_ref(struct cgt_sim *s, uint64_t addr, uint32_t size, uint64_t *counts)
{
	/* Cachegrind clamps large accesses (fxsave, xsave) to its smallest
	   line size and passes sizes as 8-bit values. */
	if (size > s->min_line)
		size = s->min_line;
	size &= 0xff;
	if (cache_ref_is_miss(&s->D1, addr, size)) {
		counts[OP_MISS1]++;
		if (cache_ref_is_miss(&s->LL, addr, size))
			counts[OP_MISSLL]++;
	}
}

int cgt_sim_run(struct cgt_sim *s, const struct cgt_batch *b, struct cgt_error *e)
{
	const int cache_sim = s->o.cache_sim, branch_sim = s->o.branch_sim;

	for (size_t i = 0; i < b->n; i++) {
		const struct cgt_exec *x = &b->execs[i];
		const struct cgt_block *blk = x->block;
		struct block_state *st = state_of(s, blk);
		if (st == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		st->exit_counts[x->exit]++;
		const struct cgt_op *ops = blk->ops;
		const uint64_t *v = x->values;
		uint64_t pc = 0;

		for (uint32_t k = 0; k < x->n_ops; k++) {
			uint64_t *counts = st->op_counts[k];
			switch (ops[k].kind) {
			case CGT_OP_INSN: {
				const struct cgt_insn *in = &blk->insns[ops[k].insn];
				pc = in->addr;
				if (cache_sim)
					fetch(s, in->addr, in->len, counts);
				break;
			}
			case CGT_OP_READ:
			case CGT_OP_WRITE:
			case CGT_OP_MODIFY:
				if (cache_sim)
					data_ref(s, v[k], ops[k].size, counts);
				break;
			case CGT_OP_READ_GUARDED:
			case CGT_OP_WRITE_GUARDED:
				if (v[k] == CGT_NO_ACCESS)
					break;
				counts[OP_DONE]++;
				if (cache_sim)
					data_ref(s, v[k], ops[k].size, counts);
				break;
			case CGT_OP_COND:
			case CGT_OP_COND_INV:
				if (branch_sim)
					counts[OP_MISS1] += (uint64_t)cond_branch_is_mispredict(
						&s->branches, pc, (int)v[k]);
				break;
			case CGT_OP_INDIRECT:
				if (branch_sim)
					counts[OP_MISS1] += (uint64_t)indirect_branch_is_mispredict(
						&s->branches, pc, v[k]);
				break;
			default:
				break;
			}
		}
	}
	return 0;
}

void cgt_sim_block_counts(const struct cgt_sim *s, const struct cgt_block *blk, uint64_t *rows)
{
	memset(rows, 0, (size_t)blk->n_insns * CGT_N_EVENTS * sizeof(*rows));
	if (blk->id >= s->n_blocks || s->blocks[blk->id].exit_counts == NULL)
		return;
	const struct block_state *st = &s->blocks[blk->id];

	/* Executions: every op of a prefix counts once per execution of it. */
	for (uint32_t exit = 0; exit <= blk->n_exits; exit++) {
		uint64_t n = st->exit_counts[exit];
		uint32_t cut = exit ? blk->exit_ops[exit - 1] + 1 : blk->n_ops;
		for (uint32_t k = 0; k < cut && n; k++) {
			uint64_t *row = rows + (size_t)blk->ops[k].insn * CGT_N_EVENTS;
			switch (blk->ops[k].kind) {
			case CGT_OP_INSN: row[CGT_Ir] += n; break;
			case CGT_OP_READ:
			case CGT_OP_MODIFY: row[CGT_Dr] += n; break;
			case CGT_OP_WRITE: row[CGT_Dw] += n; break;
			case CGT_OP_COND:
			case CGT_OP_COND_INV: row[CGT_Bc] += n; break;
			case CGT_OP_INDIRECT: row[CGT_Bi] += n; break;
			default: break;
			}
		}
	}
	/* Per-op counters: misses, mispredicts, guarded accesses made. */
	for (uint32_t k = 0; k < blk->n_ops; k++) {
		const uint64_t *c = st->op_counts[k];
		uint64_t *row = rows + (size_t)blk->ops[k].insn * CGT_N_EVENTS;
		switch (blk->ops[k].kind) {
		case CGT_OP_INSN:
			row[CGT_I1mr] += c[OP_MISS1];
			row[CGT_ILmr] += c[OP_MISSLL];
			break;
		case CGT_OP_READ_GUARDED:
			row[CGT_Dr] += c[OP_DONE];
			/* fall through */
		case CGT_OP_READ:
		case CGT_OP_MODIFY:
			row[CGT_D1mr] += c[OP_MISS1];
			row[CGT_DLmr] += c[OP_MISSLL];
			break;
		case CGT_OP_WRITE_GUARDED:
			row[CGT_Dw] += c[OP_DONE];
			/* fall through */
		case CGT_OP_WRITE:
			row[CGT_D1mw] += c[OP_MISS1];
			row[CGT_DLmw] += c[OP_MISSLL];
			break;
		case CGT_OP_COND:
		case CGT_OP_COND_INV:
			row[CGT_Bcm] += c[OP_MISS1];
			break;
		case CGT_OP_INDIRECT:
			row[CGT_Bim] += c[OP_MISS1];
			break;
		default:
			break;
		}
	}
	if (!s->o.cache_sim)
		for (uint32_t i = 0; i < blk->n_insns; i++)
			for (unsigned ev = CGT_I1mr; ev <= CGT_DLmw; ev++)
				rows[(size_t)i * CGT_N_EVENTS + ev] = 0;
}

void cgt_sim_close(struct cgt_sim *s)
{
	if (s == NULL)
		return;
	cache_model_free(&s->I1);
	cache_model_free(&s->D1);
	cache_model_free(&s->LL);
	for (uint32_t i = 0; i < s->n_blocks; i++)
		free(s->blocks[i].exit_counts);
	free(s->blocks);
	free(s);
}
