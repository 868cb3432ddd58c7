/*
 * Compiling a block for the simulator (block_program.h).
 */
#include <stdlib.h>

#include "block_program.h"

/* Carves n bytes, aligned to 8, out of *p. */
static void *carve(char **p, size_t n)
{
	void *at = *p;
	*p += (n + 7) & ~(size_t)7;
	return at;
}

struct block_program *block_program_compile(const struct cgt_block *blk,
					    const struct block_program_options *o)
{
	const uint32_t n_ops = blk->n_ops, n_exits = blk->n_exits, n_values = blk->n_values;
	size_t size = sizeof(struct block_program) + 8 * 10 +
		      (n_exits + 1) * sizeof(struct prefix_plan) +
		      blk->n_insns * sizeof(struct fetch_step) + n_values * (3 + sizeof(uint32_t)) +
		      n_exits * sizeof(struct cond_step) + n_ops * sizeof(uint64_t[OP_COUNTERS]);
	char *p = calloc(1, size);
	if (p == NULL)
		return NULL;
	struct block_program *bp = carve(&p, sizeof(*bp) + (n_exits + 1) * sizeof(*bp->prefixes));
	bp->n_guarded = blk->n_guarded;
	bp->fetches = carve(&p, blk->n_insns * sizeof(*bp->fetches));
	bp->conds = carve(&p, n_exits * sizeof(*bp->conds));
	bp->data_sizes = carve(&p, n_values);
	bp->data_ops = carve(&p, n_values * sizeof(uint32_t));
	bp->data_guarded = carve(&p, n_values);
	bp->data_writes = carve(&p, n_values);
	bp->op_counts = carve(&p, n_ops * sizeof(uint64_t[OP_COUNTERS]));

	const int keep_data = o->cache_sim || blk->n_guarded;
	uint32_t fetches = 0, data = 0, conds = 0, exits = 0, values = 0;
	uint64_t prev_last_line = UINT64_MAX;
	/* counting fetches: the line of the last step, if one line, and no
	   exit since (else UINT64_MAX) */
	uint64_t run_line = UINT64_MAX;
	bp->whole_ops = cgt_block_counted_ops(blk, 1, o->cache_sim);
	for (uint32_t k = 0; k < bp->whole_ops; k++) {
		const struct cgt_op *op = &blk->ops[k];
		const struct cgt_insn *in = &blk->insns[op->insn];
		switch (op->kind) {
		case CGT_OP_INSN: {
			uint64_t first = in->addr >> o->fetch_line_bits;
			uint64_t last = (in->addr + in->len - 1) >> o->fetch_line_bits;
			int same = first == last && first == prev_last_line;
			prev_last_line = last;
			if (!o->cache_sim)
				break;
			/* (a run's len and more stay within their types) */
			if (o->fetches == FETCH_RUNS && first == last && first == run_line &&
			    in->addr + in->len - bp->fetches[fetches - 1].addr <= UINT8_MAX &&
			    bp->fetches[fetches - 1].more < UINT16_MAX) {
				struct fetch_step *run = &bp->fetches[fetches - 1];
				run->len = (uint8_t)(in->addr + in->len - run->addr);
				run->more++;
			} else if (o->fetches != FETCH_NEW_LINES || !same) {
				bp->fetches[fetches++] = (struct fetch_step){
					in->addr, first == last ? first : FETCH_STRADDLES,
					(uint32_t)((first & o->fetch_sets_mask) << o->fetch_way_bits),
					(uint8_t)in->len, 0, k
				};
				run_line = first == last ? first : UINT64_MAX;
			}
			break;
		}
		case CGT_OP_READ:
		case CGT_OP_WRITE:
		case CGT_OP_MODIFY:
		case CGT_OP_READ_GUARDED:
		case CGT_OP_WRITE_GUARDED: {
			if (keep_data) {
				bp->data_sizes[data] = cachegrind_access_size(op->size, o->min_line);
				bp->data_guarded[data] = op->kind >= CGT_OP_READ_GUARDED;
				bp->data_writes[data] = op->kind == CGT_OP_WRITE || op->kind == CGT_OP_MODIFY ||
							op->kind == CGT_OP_WRITE_GUARDED;
				bp->data_ops[data++] = k;
			}
			values++;
			break;
		}
		case CGT_OP_COND:
		case CGT_OP_COND_INV:
			if (o->branch_sim)
				bp->conds[conds++] = (struct cond_step){ k, (uint16_t)in->addr,
									 op->kind == CGT_OP_COND_INV };
			/* fall through */
		case CGT_OP_EXIT: {
			run_line = UINT64_MAX;
			struct prefix_plan *plan = &bp->prefixes[++exits];
			*plan = (struct prefix_plan){ 0, fetches, data, conds, 0, 0 };
			plan->exit_is_last_cond = o->branch_sim && op->kind != CGT_OP_EXIT;
			break;
		}
		case CGT_OP_INDIRECT:
			if (o->branch_sim) {
				bp->prefixes[0].indirect = 1;
				bp->indirect_pc = in->addr;
				bp->indirect_op = k;
				bp->indirect_value = values;
			}
			values++;
			break;
		}
	}
	struct prefix_plan *whole = &bp->prefixes[0];
	whole->n_fetches = fetches;
	whole->n_data = data;
	whole->n_conds = conds;
	bp->max_refs = fetches + data;
	return bp;
}
