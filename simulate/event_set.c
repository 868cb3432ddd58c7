/*
 * The event set of a run, as data (after Callgrind's events.h): each
 * event names what it counts -- executions of a kind of access, or its
 * misses at a level -- and everything else (the counting, the files'
 * "events:" lines, summaries, plots) follows from that.
 */
#include <stdio.h>
#include <string.h>

#include "sim.h"

const char *const cgt_level_names[CGT_N_LEVELS] = { "I1", "D1", "L2", "LL" };

static void add(struct cgt_event_set *es, const char *name, enum cgt_access access, int level)
{
	struct cgt_event_def *ev = &es->ev[es->n++];
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->access = (uint8_t)access;
	ev->level = (int8_t)level;
}

/* One kind of access's column group: its executions, then its misses at
   each level, nearest first (Cachegrind's letters: 1, 2, L). */
static void add_group(struct cgt_event_set *es, const char *prefix, const char *suffix,
		      enum cgt_access access, int first_level, int cache_sim, int has_L2)
{
	char name[8];
	add(es, strcmp(prefix, "I") == 0 ? "Ir" : suffix[0] == 'r' ? "Dr" : "Dw", access,
	    CGT_EVENT_EXECUTED);
	if (!cache_sim)
		return;
	snprintf(name, sizeof(name), "%s1m%s", prefix, suffix);
	add(es, name, access, first_level);
	if (has_L2) {
		snprintf(name, sizeof(name), "%s2m%s", prefix, suffix);
		add(es, name, access, CGT_LEVEL_L2);
	}
	snprintf(name, sizeof(name), "%sLm%s", prefix, suffix);
	add(es, name, access, CGT_LEVEL_LL);
}

/* Both tools' branch events, last. */
static void add_branches(struct cgt_event_set *es)
{
	add(es, "Bc", CGT_ACCESS_COND, CGT_EVENT_EXECUTED);
	add(es, "Bcm", CGT_ACCESS_COND, CGT_EVENT_MISPREDICT);
	add(es, "Bi", CGT_ACCESS_INDIRECT, CGT_EVENT_EXECUTED);
	add(es, "Bim", CGT_ACCESS_INDIRECT, CGT_EVENT_MISPREDICT);
}

/* Callgrind's dirty-miss events, in its order. */
static void add_dirty_misses(struct cgt_event_set *es)
{
	add(es, "ILdmr", CGT_ACCESS_FETCH, CGT_EVENT_DIRTY_MISS);
	add(es, "DLdmr", CGT_ACCESS_READ, CGT_EVENT_DIRTY_MISS);
	add(es, "DLdmw", CGT_ACCESS_WRITE, CGT_EVENT_DIRTY_MISS);
}

/* Callgrind's cache-use events, last. */
static void add_use(struct cgt_event_set *es)
{
	add(es, "AcCost1", CGT_ACCESS_USE_COST, CGT_LEVEL_D1);
	add(es, "SpLoss1", CGT_ACCESS_USE_LOSS, CGT_LEVEL_D1);
	add(es, "AcCost2", CGT_ACCESS_USE_COST, CGT_LEVEL_LL);
	add(es, "SpLoss2", CGT_ACCESS_USE_LOSS, CGT_LEVEL_LL);
}

void cgt_event_set_init(struct cgt_event_set *es, int cache_sim, int has_L2, int branch_sim,
			int write_back, int cache_use)
{
	memset(es, 0, sizeof(*es));
	add_group(es, "I", "r", CGT_ACCESS_FETCH, CGT_LEVEL_I1, cache_sim, has_L2);
	if (cache_sim) {
		add_group(es, "D", "r", CGT_ACCESS_READ, CGT_LEVEL_D1, cache_sim, has_L2);
		add_group(es, "D", "w", CGT_ACCESS_WRITE, CGT_LEVEL_D1, cache_sim, has_L2);
	}
	if (branch_sim)
		add_branches(es);
	if (cache_sim && write_back)
		add_dirty_misses(es);
	if (cache_sim && cache_use)
		add_use(es);
}

void cgt_event_set_init_callgrind(struct cgt_event_set *es, int cache_sim, int branch_sim,
				  int write_back, int cache_use)
{
	memset(es, 0, sizeof(*es));
	add(es, "Ir", CGT_ACCESS_FETCH, CGT_EVENT_EXECUTED);
	if (cache_sim) {
		add(es, "Dr", CGT_ACCESS_READ, CGT_EVENT_EXECUTED);
		add(es, "Dw", CGT_ACCESS_WRITE, CGT_EVENT_EXECUTED);
		add(es, "I1mr", CGT_ACCESS_FETCH, CGT_LEVEL_I1);
		add(es, "D1mr", CGT_ACCESS_READ, CGT_LEVEL_D1);
		add(es, "D1mw", CGT_ACCESS_WRITE, CGT_LEVEL_D1);
		add(es, "ILmr", CGT_ACCESS_FETCH, CGT_LEVEL_LL);
		add(es, "DLmr", CGT_ACCESS_READ, CGT_LEVEL_LL);
		add(es, "DLmw", CGT_ACCESS_WRITE, CGT_LEVEL_LL);
		if (write_back)
			add_dirty_misses(es);
	}
	if (branch_sim)
		add_branches(es);
	if (cache_use)
		add_use(es);
}

int cgt_event_set_find(const struct cgt_event_set *es, enum cgt_access access, int level)
{
	for (unsigned k = 0; k < es->n; k++)
		if (es->ev[k].access == access && es->ev[k].level == level)
			return (int)k;
	return -1;
}
