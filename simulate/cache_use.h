/*
 * Callgrind's cache use (--cacheuse=yes, callgrind/sim.c cacheuse_*,
 * update_L1_use, update_LL_use, cacheuse_finish): how well each cache line
 * was used, known when it is evicted and charged to the instruction that
 * loaded it.  Two sides, for any consumer (the call graph's replay,
 * cachegrind.out's lines):
 *
 * The caches (struct use_caches): I1 and D1 keep each line's use (level.h
 * track_use) and report the slots they fill; LL is looked up for each line
 * they fill, unless it is line 0 (Callgrind's update_L1_use), and reports
 * where it holds it.  Writes are simulated as reads, LL sees only the
 * lines L1 missed (so its misses can differ from Cachegrind's, which looks
 * both lines of a straddling reference up when either missed).
 *
 * The charge sink (struct use_sink): each fill, in program order, with the
 * cost row of the loading instruction and whether the evicting thread
 * collects.  Per slot the sink keeps the loader and, for an L1 line, the LL
 * slot its line was in when loaded (Callgrind's dep_use, a slot, so a line
 * LL evicted meanwhile credits its successor, as there); per LL slot the
 * use pushed up from the L1 copies evicted while collecting.
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
#ifndef CGTRACE_CACHE_USE_H
#define CGTRACE_CACHE_USE_H

#include <stdint.h>

#include "level.h"
#include "sim.h"

/* A line an L1 filled: what the sink needs to charge the line it evicted,
   and to keep who loaded the new one and where LL holds it. */
struct use_fill {
	uint32_t exec;		/* the call graph's: the execution's item in its chunk */
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

/* ---- The caches -------------------------------------------------------- */

struct use_caches {
	struct level l1[2], ll;		/* I1, D1; LL */
	/* scratch: use_caches_merge's, [fill_room], carved from one
	   allocation, ll_refs's; use_caches_take's reports, [2 room] each
	   L1's, an allocation of its own */
	struct level_ref *ll_refs;
	struct level_report *ll_reports;
	uint32_t *fill_ref;		/* a fill's side << 31 | its reference */
	uint8_t *ll_outcomes;
	size_t fill_room;
	struct level_report *reports;
	size_t room;
};

/* Cold caches of caches' I1, D1 and LL geometry and m's replacement
   policies: 0, or -1 if out of memory. */
int use_caches_init(struct use_caches *u, const struct cgt_hierarchy *caches,
		    const struct cgt_cache_model *m);
void use_caches_free(struct use_caches *u);
/* Cold again (CALLGRIND_START/STOP_INSTRUMENTATION): the L1 l1 (0 I1, 1
   D1), or LL (2). */
void use_caches_clear(struct use_caches *u, int level);

/*
 * A bunch in two steps, which may run on two threads (the D1 side on one,
 * the rest on the other: what each touches is its own): each L1 takes its
 * side, then LL the lines they filled, in program order.
 */

/* L1 l1 (0 I1, 1 D1) takes its side of a bunch, refs[0, n) in program
   order: missed[k] is 1 if refs[k] missed, else 0; reports (room for 2 n)
   get the lines filled, in order: their number. */
static inline uint32_t use_caches_take_l1(struct use_caches *u, int l1, const struct level_ref *refs,
					  uint32_t n, uint8_t *missed, struct level_report *reports)
{
	return level_take(&u->l1[l1], refs, n, missed, reports);
}

/* A side of a bunch, as its L1 took it. */
struct use_side {
	const struct level_ref *refs;
	uint32_t n;
	uint8_t *missed;
	const struct level_report *reports;
	uint32_t n_fills;
};

/* LL takes the lines the two sides filled, in program order (their
   handles increase in program order across both), each looked up unless
   it is line 0; a reference whose line LL missed then has missed 2.  fills
   (room for both sides' n_fills) gets each line filled, in program order
   (op: the reference's handle; exec 0).  The number of fills, or -1 if
   out of memory. */
long use_caches_merge(struct use_caches *u, const struct use_side side[2], struct use_fill *fills);

/* Both steps on one thread: refs[0, n_fetch) the fetches, [n_fetch, n)
   the data, each side in program order, their handles increasing in
   program order across both.  missed[k] is refs[k]'s deepest miss: 0
   none, 1 L1, 2 LL too; fills (room for 2 n) as use_caches_merge's.  The
   number of fills, or -1 if out of memory. */
long use_caches_take(struct use_caches *u, const struct level_ref *refs, uint32_t n_fetch,
		     uint32_t n, uint8_t *missed, struct use_fill *fills);

/* ---- The charge sink ---------------------------------------------------- */

struct backdate;

/* A back-dating tree's nodes are numbered from 1: 0 is none (and the node
   of every fill without a tree). */
#define NO_NODE 0

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
