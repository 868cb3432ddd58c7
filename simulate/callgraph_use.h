/*
 * Callgrind's cache use (--cacheuse=yes), the charging side: a charge
 * sink that takes a line's costs when the line is evicted, and gives them
 * to the instruction that loaded it (callgrind/sim.c: update_L1_use,
 * update_LL_use, cacheuse_finish).
 *
 * The producer's levels (level.h) keep each L1 line's use and report the
 * slots they fill (struct use_fill); the replay hands each fill here, in
 * program order, with the cost row of the loading instruction (in its
 * context, as Callgrind's use_base) and whether the evicting thread
 * collects.  Per slot the sink keeps the loader and, for an L1 line,
 * the LL slot its line was in when loaded (Callgrind's dep_use, a slot,
 * so a line LL evicted meanwhile credits its successor, as there); per
 * LL slot the use pushed up from the L1 copies evicted while collecting.
 *
 * Charges, at an eviction while collecting, of a line with a loader and a
 * use: AcCost += 1000 / uses, SpLoss += the bytes it never touched
 * ((32 - bits of its mask) x line / 32).  They go to the loader's row,
 * never to a thread's counter: so, as in Callgrind 3.19, no call's
 * inclusive cost holds them -- unless the sink is given a back-dating tree
 * (callgraph_backdate.h): then each line also holds the node of the
 * activation that loaded it, and its charges reach the calls that were
 * active then.
 *
 * Internal to simulate/.
 */
#ifndef CGTRACE_CALLGRAPH_USE_H
#define CGTRACE_CALLGRAPH_USE_H

#include <stdint.h>

#include "level.h"
#include "sim.h"

/* A line an L1 filled: what the sink needs to charge the line it evicted,
   and to keep who loaded the new one and where LL holds it. */
struct use_fill {
	uint32_t exec;		/* the execution's item in its chunk */
	uint32_t op;		/* the reference's */
	uint32_t slot;		/* the L1's */
	uint32_t count, mask;	/* the evicted line's use */
	uint32_t ll_slot;	/* where LL holds the line, or NO_USE_LL: not looked up
				   (Callgrind does not for line 0) */
	uint8_t l1;		/* 0: I1, 1: D1 */
	uint8_t ll_filled;	/* LL missed and filled the slot */
};

#define NO_USE_LL UINT32_MAX

/* The cost columns charged. */
enum { USE_ACCOST1, USE_SPLOSS1, USE_ACCOST2, USE_SPLOSS2, USE_COLUMNS };

struct backdate;

struct use_sink {
	/* I1's and D1's slots: the loader's cost row (an index in the costs
	   handed in; 0: none), its activation's node (with a back-dating
	   tree), the LL slot of its line (NO_USE_LL: none) */
	uint32_t *loader[2], *node[2], *ll_of[2];
	struct use_ll_line {
		uint32_t loader, node, count, mask;
	} *ll;
	uint32_t slots[2], ll_slots;
	uint32_t line[2], ll_line;
	int column[USE_COLUMNS];
	struct backdate *backdate;	/* NULL: self costs only */
	/* charged since the caller last zeroed it (a dump's summary, with a
	   back-dating tree) */
	uint64_t charged[USE_COLUMNS];
};

/* For caches' I1, D1 and LL, charging the columns column[], and with
   backdate (or NULL) the calls active at each line's load: 0, or -1 if out
   of memory. */
int use_sink_init(struct use_sink *s, const struct cgt_hierarchy *caches,
		  const int column[USE_COLUMNS], struct backdate *backdate);
void use_sink_free(struct use_sink *s);

/* Every line dropped uncharged (CALLGRIND_START/STOP_INSTRUMENTATION). */
void use_sink_clear(struct use_sink *s, uint64_t *costs);

/* A fill, by the instruction whose cost row is at costs[loader] (0:
   none) in the activation node (NO_NODE without a tree), while the thread
   collects or not. */
void use_sink_fill(struct use_sink *s, const struct use_fill *f, uint32_t loader, uint32_t node,
		   int collect, uint64_t *costs);

/* The end of the run: every line resident evicted, I1's, then D1's (each
   L1 slot's use in l1_use[0], [1]), then LL's. */
void use_sink_finish(struct use_sink *s, const struct level_use *const l1_use[2], int collect,
		     uint64_t *costs);

#endif
