/*
 * A block compiled for the simulator: for each executed prefix (one per
 * exit), how many of the block's instruction fetches, data references and
 * conditional branches it holds, so that an execution is simulated with
 * three short loops over flat arrays and no decision per op.
 *
 * Only what can change simulated state is kept.  An instruction that lies
 * within the line the previous instruction of the block ended in is left
 * out: its fetch is a hit on that set's most recently used line (only
 * fetches touch I1).  Where each use of a line counts, it is not left
 * out but merged into that step (its more), which then stands for a run
 * of fetches from one line; a run ends at an exit, so that each prefix
 * has its own -- or, for an engine that takes no runs, a step of its own
 * (enum fetch_steps).  Exits are left out, and branches when branch
 * simulation is off, and fetches and data references when cache
 * simulation is off (but guarded references stay: Dr and Dw count those
 * whose guard held).
 *
 * The one compiler of blocks: sim.c and the call graph's producer run
 * its programs, hier.c merges a program's fetches and data back into
 * program order (its ref programs).
 *
 * Internal to simulate/.
 */
#ifndef CGTRACE_BLOCK_PROGRAM_H
#define CGTRACE_BLOCK_PROGRAM_H

#include <stdint.h>

#include "trace.h"

/* Per-op counters, beside the per-exit execution counts.  The join
   (sim.c) counts what it settles in a column of its own, so that it never
   writes a counter the worker may be writing; LL misses it counts only
   while no segment runs from the exact state, the one time a worker
   counts them itself. */
enum { OP_DONE, OP_MISS1, OP_MISSLL, OP_SETTLED, OP_COUNTERS };

/* Steps are small: what a block's executions read should stay in the
   host's caches. */
struct fetch_step {
	uint64_t addr;
	/* The usual fetch is a hit on its set's most recently used line:
	   I1's tags[set_at] == line.  A fetch that straddles into the next
	   line is never that usual one: its line is FETCH_STRADDLES. */
	uint64_t line;
	uint32_t set_at;	/* where the first byte's set starts in I1's tags */
	uint8_t len;		/* with a run, from the first's start to the last's end */
	uint16_t more;		/* counting uses: the fetches of the run after the first */
	uint32_t op;		/* index of the INSN op: its counters */
};

/* No block number (addresses shifted by a line size) nor CACHE_UNKNOWN. */
#define FETCH_STRADDLES (UINT64_MAX - 1)

struct cond_step {
	uint32_t op;
	uint16_t pc;		/* the low bits of the branch's address */
	uint16_t inverted;	/* COND_INV: taken when the exit is not */
};

struct prefix_plan {
	uint64_t executions;	/* left by this exit: the counter */
	uint32_t n_fetches;	/* fetches[0 .. n_fetches) */
	uint32_t n_data;	/* data references: values[0 .. n_data) */
	uint32_t n_conds;	/* conds[0 .. n_conds) */
	/* The execution left by the last of those conditional branches
	   (its exit was taken). */
	uint8_t exit_is_last_cond;
	uint8_t indirect;	/* values[n_values - 1] is the indirect target */
};

/* What an execution reads comes first, then the plans, then the steps,
   then what only misses and the final counts read. */
struct block_program {
	struct fetch_step *fetches;
	uint8_t *data_sizes;	/* as Cachegrind passes them: clamped, 8 bits */
	struct cond_step *conds;
	uint32_t n_guarded;	/* guarded references among the data (slow path) */
	uint32_t indirect_value;	/* index of the target among the values */
	uint64_t indirect_pc;
	uint32_t indirect_op;
	uint32_t max_refs;	/* fetches + data of the longest prefix */
	uint32_t whole_ops;	/* ops counted when run to the end (cgt_block_counted_ops) */
	uint8_t *data_guarded;	/* only when n_guarded */
	uint8_t *data_writes;	/* a write or read-modify-write (a write-through L1 passes it on) */
	uint32_t *data_ops;
	uint64_t (*op_counts)[OP_COUNTERS];	/* [n_ops] */
	struct prefix_plan prefixes[];	/* [n_exits + 1]: [0] ran to the end */
};

/* Which instruction fetches become steps. */
enum fetch_steps {
	FETCH_NEW_LINES,	/* those not within the line the one before ended in */
	FETCH_RUNS,		/* every one, a run from one line merged into a step
				   (a level counts each use of a line) */
	FETCH_EACH,		/* every one, a step each */
};

struct block_program_options {
	int cache_sim, branch_sim;
	uint32_t fetch_line_bits;	/* I1's geometry */
	uint32_t fetch_way_bits;
	uint64_t fetch_sets_mask;
	uint32_t min_line;		/* accesses are clamped to it */
	uint8_t fetches;		/* enum fetch_steps */
};

/* The size a data reference is simulated with: Cachegrind clamps large
   accesses (fxsave, xsave) to its smallest line size and passes sizes as
   8-bit values. */
static inline uint8_t cachegrind_access_size(uint32_t size, uint32_t min_line)
{
	return (uint8_t)(size > min_line ? min_line : size);
}

/* One allocation, free()d with the returned pointer; NULL if out of
   memory.  Counters start at zero. */
struct block_program *block_program_compile(const struct cgt_block *blk,
					    const struct block_program_options *o);

#endif
