/*
 * Which fast paths a run may take (specialise.c): each relies on a
 * property of the models -- LRU replacement, no write-back, no prefetcher,
 * no use counted -- and is taken only when every model of the run has it.  Decided here
 * and nowhere else; anything declined runs through the general model
 * (level.h), exact for any number of threads.  Internal to simulate/.
 */
#ifndef CGTRACE_SPECIALISE_H
#define CGTRACE_SPECIALISE_H

#include "sim.h"

/* What the run's models declare. */
enum model_property {
	MODEL_LRU = 1,			/* every level replaces its least recently used line */
	MODEL_NO_WRITE_BACK = 2,	/* no level keeps dirty lines */
	MODEL_NO_PREFETCH = 4,		/* no prefetcher */
	MODEL_NO_USE = 8,		/* no level counts the uses of its lines */
};

unsigned model_properties(const struct cgt_cache_model *m);

struct specialisations {
	/* LL as Cachegrind's plain LRU array (ll_model.h); else the general
	   model's level (callgraph_producer.c, hier.c's general parts). */
	int plain_ll;
	/* The call graph's I1 and D1 as Cachegrind's LRU arrays
	   (cache_model.h); else levels of the general model.  They rely on
	   the L1s' own models alone: LRU, no use counted (an L1 is
	   write-through and has no prefetcher in every model there is). */
	int plain_l1s;
	/* sim.c's engine for Cachegrind's shape: segments simulated from
	   unknown states and settled, LL at the join -- its LL is plain. */
	int segment_engine;
	/* hier.c: caches of a level sharing one Mattson stack (their misses
	   depend on depth alone: LRU, no dirty state) and LL forests (LRU
	   inclusion of D1s, no dirty state, no prefetches). */
	int shared_stacks, forest;
	/* A reference that can only hit L1's most recently used line need not
	   be gathered: true of reads and fetches unless a level counts the
	   uses of its lines; of writes, besides, only without write-back (a
	   write-through L1 passes every write on to dirty the LL's line). */
	int elide_mru_reads, elide_mru_writes;
	/* An instruction fetched from the line the one before it in its block
	   ended in need not be looked up (block_program.h): true unless a
	   level counts the uses of its lines. */
	int elide_mru_fetches;
};

void specialisations_choose(const struct cgt_cache_model *m, struct specialisations *s);

#endif
