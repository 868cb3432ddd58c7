/*
 * The simulator: replays executions through the cache and branch models.
 *
 * Counting is split in two so that the hot loop only simulates:
 *  - per block, how many executions left by each exit (one increment per
 *    execution); at the end every op of an executed prefix is credited
 *    with those counts -- Ir, Dr, Dw, Bc and Bi follow from them;
 *  - per op, the rare events: misses, mispredicts, and the executions of
 *    guarded accesses whose guard held.
 *
 * And each block is compiled, at its first execution, into a program of
 * only the steps that can change simulated state: an instruction fetch
 * from the line the previous instruction of the block ended in is a hit on
 * that set's most recently used line and changes nothing, so it is left
 * out (most fetches are); exits are left out, and branches when branch
 * simulation is off.
 */
#include <stdlib.h>
#include <string.h>

#include "branch_model.h"
#include "cache_model.h"
#include "sim.h"

enum { OP_DONE, OP_MISS1, OP_MISSLL };	/* per-op counters */

enum step_kind { STEP_FETCH, STEP_DATA, STEP_GUARDED, STEP_COND, STEP_INDIRECT };

struct step {
	uint8_t kind;		/* enum step_kind */
	uint8_t size;		/* fetch: length; data: size as Cachegrind passes it;
				   conditional branch: 1 if COND_INV */
	uint16_t value;		/* ordinal of the op's value */
	uint32_t op;		/* index of the op: its counters */
	uint64_t addr;		/* fetch: the instruction; branches: the branch's */
};

struct block_state {
	uint64_t *exit_counts;		/* [n_exits + 1]: [0] ran to the end */
	uint64_t (*op_counts)[3];	/* [n_ops] */
	struct step *steps;
	uint32_t *steps_before_exit;	/* [n_exits + 1]: steps of each prefix */
};

struct cgt_sim {
	struct cgt_sim_options o;
	uint32_t min_line;		/* smallest line size of the three */
	struct cache_model I1, D1, LL;
	struct branch_model branches;
	uint64_t last_fetch_line;	/* MRU line of the last instruction fetch */
	uint64_t last_data_line;	/* MRU line of the last data reference */
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
	s->last_fetch_line = s->last_data_line = UINT64_MAX;
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

static uint32_t access_size(const struct cgt_sim *s, uint32_t size)
{
	/* Cachegrind clamps large accesses (fxsave, xsave) to its smallest
	   line size and passes sizes as 8-bit values. */
	return (size > s->min_line ? s->min_line : size) & 0xff;
}

/* Builds blk's program (see the top of the file). */
static int compile(struct cgt_sim *s, const struct cgt_block *blk, struct block_state *st)
{
	uint32_t n = 0, exits = 0, values = 0;
	uint64_t prev_last_line = UINT64_MAX;
	const unsigned bits = s->o.cache_sim ? s->I1.line_bits : 0;

	st->steps = malloc((blk->n_ops + 1) * sizeof(*st->steps));
	st->steps_before_exit = malloc((blk->n_exits + 1) * sizeof(uint32_t));
	if (st->steps == NULL || st->steps_before_exit == NULL)
		return -1;
	for (uint32_t k = 0; k < blk->n_ops; k++) {
		const struct cgt_op *op = &blk->ops[k];
		const struct cgt_insn *in = &blk->insns[op->insn];
		struct step step = { 0, 0, (uint16_t)values, k, in->addr };
		values += cgt_op_has_value(op->kind);
		switch (op->kind) {
		case CGT_OP_INSN: {
			if (!s->o.cache_sim)
				continue;
			uint64_t first = in->addr >> bits, last = (in->addr + in->len - 1) >> bits;
			int same = first == last && first == prev_last_line;
			prev_last_line = last;
			if (same)
				continue;
			step.kind = STEP_FETCH;
			step.size = (uint8_t)in->len;
			break;
		}
		case CGT_OP_READ:
		case CGT_OP_WRITE:
		case CGT_OP_MODIFY:
			if (!s->o.cache_sim)
				continue;
			step.kind = STEP_DATA;
			step.size = (uint8_t)access_size(s, op->size);
			break;
		case CGT_OP_READ_GUARDED:
		case CGT_OP_WRITE_GUARDED:
			step.kind = STEP_GUARDED;
			step.size = (uint8_t)access_size(s, op->size);
			break;
		case CGT_OP_COND:
		case CGT_OP_COND_INV:
			st->steps_before_exit[++exits] = n + (uint32_t)s->o.branch_sim;
			if (!s->o.branch_sim)
				continue;
			step.kind = STEP_COND;
			step.size = op->kind == CGT_OP_COND_INV;
			break;
		case CGT_OP_EXIT:
			st->steps_before_exit[++exits] = n;
			continue;
		case CGT_OP_INDIRECT:
			if (!s->o.branch_sim)
				continue;
			step.kind = STEP_INDIRECT;
			break;
		default:
			continue;
		}
		st->steps[n++] = step;
	}
	st->steps_before_exit[0] = n;
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
		if (compile(s, blk, st) < 0)
			return NULL;
	}
	return st;
}

/* The hot loop keeps the models' parameters in locals: through pointers
   into *s the compiler would reload them after every counter update. */
struct models {
	struct cache_model I1, D1, LL;
	uint64_t last_fetch_line;	/* MRU line of the last instruction fetch */
	uint64_t last_data_line;	/* likewise for data references */
};

/* An instruction fetch.  A fetch from the line the previous fetch touched
   last is a hit that changes nothing (that line is its set's MRU, and only
   fetches touch I1), so it is not looked up. */
static inline __attribute__((always_inline)) int fetch_misses(struct models *m, uint64_t addr,
							      uint32_t len, int *ll_miss)
{
	uint64_t first = addr >> m->I1.line_bits, last = (addr + len - 1) >> m->I1.line_bits;

	if (first == last && first == m->last_fetch_line)
		return 0;
	m->last_fetch_line = last;
	if (!cache_ref_is_miss(&m->I1, addr, len))
		return 0;
	*ll_miss = cache_ref_is_miss(&m->LL, addr, len);
	return 1;
}

/* A data reference; the same shortcut as for fetches: only data
   references touch D1. */
static inline __attribute__((always_inline)) int data_misses(struct models *m, uint64_t addr,
							     uint32_t size, int *ll_miss)
{
	uint64_t first = addr >> m->D1.line_bits, last = (addr + size - 1) >> m->D1.line_bits;

	if (first == last && first == m->last_data_line)
		return 0;
	m->last_data_line = last;
	if (!cache_ref_is_miss(&m->D1, addr, size))
		return 0;
	*ll_miss = cache_ref_is_miss(&m->LL, addr, size);
	return 1;
}

int cgt_sim_run(struct cgt_sim *s, const struct cgt_batch *b, struct cgt_error *e)
{
	const int cache_sim = s->o.cache_sim;
	struct models m = { s->I1, s->D1, s->LL, s->last_fetch_line, s->last_data_line };

	for (size_t i = 0; i < b->n; i++) {
		const struct cgt_exec *x = &b->execs[i];
		const struct cgt_block *blk = x->block;
		struct block_state *st = blk->id < s->n_blocks ? &s->blocks[blk->id] : NULL;
		if (st == NULL || st->steps == NULL) {
			st = state_of(s, blk);
			if (st == NULL)
				return cgt_fail(e, cgt_err_nomem, "out of memory");
		}
		st->exit_counts[x->exit]++;
		const struct step *step = st->steps, *end = step + st->steps_before_exit[x->exit];
		const uint64_t *v = x->values;
		int miss, ll_miss;
		/* Threaded dispatch: each step kind jumps to the next step's code
		   on its own, which the host's branch predictor learns far
		   better than one shared switch. */
		static const void *const code[] = { &&fetch, &&data, &&guarded, &&cond, &&indirect };
#define NEXT()                                                                                     \
	do {                                                                                       \
		if (__builtin_expect(miss, 0)) {                                                   \
			st->op_counts[step->op][OP_MISS1]++;                                       \
			st->op_counts[step->op][OP_MISSLL] += (uint64_t)ll_miss;                   \
		}                                                                                  \
		if (++step == end)                                                                 \
			goto done;                                                                 \
		miss = ll_miss = 0;                                                                \
		goto *code[step->kind];                                                            \
	} while (0)

		if (step == end)
			continue;
		miss = ll_miss = 0;
		goto *code[step->kind];
fetch:
		miss = fetch_misses(&m, step->addr, step->size, &ll_miss);
		NEXT();
data:
		miss = data_misses(&m, v[step->value], step->size, &ll_miss);
		NEXT();
guarded:
		if (v[step->value] != CGT_NO_ACCESS) {
			st->op_counts[step->op][OP_DONE]++;
			if (cache_sim)
				miss = data_misses(&m, v[step->value], step->size, &ll_miss);
		}
		NEXT();
cond:
		/* cgt_exec_branch_taken, with the inversion from the step */
		miss = cond_branch_is_mispredict(&s->branches, step->addr,
						 (step + 1 == end && x->exit != 0) ^ step->size);
		NEXT();
indirect:
		miss = indirect_branch_is_mispredict(&s->branches, step->addr, v[step->value]);
		NEXT();
done:;
#undef NEXT
	}
	s->last_fetch_line = m.last_fetch_line;
	s->last_data_line = m.last_data_line;
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
	for (uint32_t i = 0; i < s->n_blocks; i++) {
		free(s->blocks[i].exit_counts);
		free(s->blocks[i].steps);
		free(s->blocks[i].steps_before_exit);
	}
	free(s->blocks);
	free(s);
}
