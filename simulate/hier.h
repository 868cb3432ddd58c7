/*
 * The hierarchy engine: the cache misses of many configurations -- any
 * levels of enum cgt_level, L2 included -- in one replay of the trace.
 *
 * Configurations share what they can.  Caches of one level that see the
 * same references and differ only in associativity are one LRU stack of
 * the deepest (Mattson et al., 1970): a reference found at depth d hits in
 * every member of more than d ways.  The members' misses feed the level
 * below, so configurations with the same L1s share their L1 simulation,
 * and so on down.  LL caches whose configurations differ only in D1 share
 * their sets where they are equal (hier.c's struct forest).
 *
 * Its caches are never started from an unknown state: the trace is decoded
 * once, in stream order, its references gathered in bunches, and every
 * part (a share of the configurations) takes every bunch in turn, on
 * whichever thread is free, so the counts are exact for any number of
 * threads.  Executions and branches are counted elsewhere (sim.c, in a
 * pass beside this one); this engine counts only misses.
 *
 * Internal to simulate/.
 */
#ifndef CGTRACE_HIER_H
#define CGTRACE_HIER_H

#include "sim.h"

struct hier;

/* configs: checked; min_line: their common smallest line size, to which
   data references are clamped as Cachegrind does.  instr_at_start and
   model: cgt_sim_options'.  Where the model declines the shared stacks
   (specialise.h), each configuration is simulated alone, through the
   general model. */
int hier_open(struct hier **h, const struct cgt_hierarchy *configs, unsigned n_configs,
	      uint32_t min_line, int instr_at_start, const struct cgt_cache_model *model,
	      struct cgt_error *e);

/* Replays the trace at path, decoded once, on up to `threads` threads
   (the caller's among them). */
int hier_run(struct hier *h, const char *path, unsigned threads,
	     const struct cgt_sim_progress *progress, struct cgt_error *e);

/* Calls add for each op of each block that missed at a level in
   configuration `config`: n misses.  level: enum cgt_level; HIER_L1, the
   L1 the op goes to (I1 for a fetch, D1 for data); or
   CGT_EVENT_DIRTY_MISS, LL misses that evicted a dirty line; or, with
   cache use, HIER_USE + a column of cache_use.h's (USE_ACCOST1 ...
   USE_SPLOSS2): the charges for the lines the op loaded. */
#define HIER_L1 (-4)
#define HIER_USE (-16)
typedef void hier_miss_fn(void *arg, uint32_t block_id, uint32_t op, int level, uint64_t n);
void hier_misses(const struct hier *h, unsigned config, hier_miss_fn *add, void *arg);

void hier_close(struct hier *h);

#endif
