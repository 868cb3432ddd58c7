/*
 * Inclusive attribution of costs known only later (cache use, charged
 * when a line is evicted): the back-dating tree of Weidendorfer and
 * Breitbart, "Inclusive Cost Attribution for Cache Use Profiling" (ICCS
 * 2016; ../shared/docs/callgrind-format.md §12), in its O(1) form.
 *
 * A node is a call's activation: its call arc and the node of its caller's
 * activation (none at a thread's or a signal handler's first frame, which
 * have no arc).  A line loaded in an activation holds its node; a charge
 * at the line's eviction goes to the node's pending costs.  Once the
 * activation has returned and nothing holds its node (no line, no callee's
 * node), its pending costs go to its arc's inclusive cost and to its
 * caller's node, and it is freed: so every charge reaches every arc that
 * was active when its line was loaded, not those active at its eviction.
 * Live nodes are at most the lines resident plus the frames on the stacks.
 *
 * Nodes are created only for activations that load lines, with their
 * callers' (callgraph/exec.c asks when a line is loaded).  Internal to
 * simulate/; independent of the replay's tables but for the arcs' cost
 * rows, which it is handed.
 */
#ifndef CGTRACE_CALLGRAPH_BACKDATE_H
#define CGTRACE_CALLGRAPH_BACKDATE_H

#include <stdint.h>

#include "cache_use.h"

struct backdate_node {
	uint32_t parent;	/* NO_NODE: a root */
	uint32_t arc;		/* the replay's, NO_ARC for none */
	uint32_t arc_cost;	/* its cost row in the costs handed in; 0: none */
	uint32_t holders;	/* lines and callees' nodes */
	uint8_t returned;
	uint64_t pending[USE_COLUMNS];
};

#define NO_ARC UINT32_MAX

struct backdate {
	struct backdate_node *nodes;	/* [0] unused */
	size_t n, cap;
	uint32_t free;			/* a freed node, its parent the next; NO_NODE: none */
	uint64_t live, peak, made;
	int column[USE_COLUMNS];	/* the use columns in a cost row */
	/* The arcs charged since taken (backdate_take_arcs): a dump writes the
	   BBCCs they leave from, whose arcs would otherwise wait for the BBCC
	   to run again. */
	uint32_t *arcs;
	size_t n_arcs, cap_arcs;
	int failed;			/* out of memory: a node not made, an arc not noted */
};

void backdate_init(struct backdate *b, const int column[USE_COLUMNS]);
void backdate_free(struct backdate *b);

/* A new activation's node under parent (NO_NODE: a root), for arc (NO_ARC:
   none) whose cost row is at arc_cost; held by its caller's until freed.
   NO_NODE if out of memory (b->failed). */
uint32_t backdate_node(struct backdate *b, uint32_t parent, uint32_t arc, uint32_t arc_cost);

/* A line loaded in the activation takes hold of it; evicted or dropped,
   lets go.  Letting go of the last hold on a returned activation passes its
   costs on (into costs, the replay's pool of cost rows). */
void backdate_hold(struct backdate *b, uint32_t node);
void backdate_let_go(struct backdate *b, uint32_t node, uint64_t *costs);

/* A charge to a line loaded in the activation. */
static inline void backdate_charge(struct backdate *b, uint32_t node, int column, uint64_t value)
{
	if (node != NO_NODE)
		b->nodes[node].pending[column] += value;
}

/* The activation returned (or was unwound). */
void backdate_returned(struct backdate *b, uint32_t node, uint64_t *costs);

/* Every charge so far passed on to the arcs of its activation and all its
   callers', living nodes or not (a dump: its calls then hold what its
   instructions do). */
void backdate_settle(struct backdate *b, uint64_t *costs);

#endif
