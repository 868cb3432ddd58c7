/*
 * Callgrind's cache use: its caches and its charge sink (cache_use.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cache_use.h"
#include "callgraph_backdate.h"

/* ---- The caches -------------------------------------------------------- */

int use_caches_init(struct use_caches *u, const struct cgt_hierarchy *caches,
		    const struct cgt_cache_model *m)
{
	static const int level[3] = { CGT_LEVEL_I1, CGT_LEVEL_D1, CGT_LEVEL_LL };
	memset(u, 0, sizeof(*u));
	struct level *made[3] = { &u->l1[0], &u->l1[1], &u->ll };
	for (int k = 0; k < 3; k++) {
		struct level_config c = level_config_of(&caches->level[level[k]], m, level[k]);
		/* as Callgrind: no write-back nor prefetcher with cache use, and
		   its tags */
		c.prefetcher = LEVEL_PREFETCH_NONE;
		c.write_back = 0;
		c.callgrind_tags = 1;
		c.track_use = k < 2;
		c.report = k < 2 ? LEVEL_REPORT_FILLS : LEVEL_REPORT_LOOKUPS;
		if (level_init(made[k], &c) < 0) {
			use_caches_free(u);
			return -1;
		}
	}
	return 0;
}

void use_caches_free(struct use_caches *u)
{
	for (int k = 0; k < 2; k++)
		level_free(&u->l1[k]);
	level_free(&u->ll);
	free(u->ll_refs);	/* the one allocation merge's scratch is carved from */
	free(u->reports);
	memset(u, 0, sizeof(*u));
}

void use_caches_clear(struct use_caches *u, int level)
{
	level_clear(level < 2 ? &u->l1[level] : &u->ll);
}

/* Room for use_caches_merge's n fills, in one allocation (the 8-byte and
   4-byte members' arrays first, the bytes last, so each is aligned).  0,
   or -1 if out of memory. */
static int fill_room_for(struct use_caches *u, size_t n)
{
	if (n <= u->fill_room)
		return 0;
	free(u->ll_refs);
	u->ll_refs = NULL;
	u->fill_room = 0;
	size_t size = n * (sizeof(struct level_ref) + sizeof(struct level_report) + sizeof(uint32_t) + 1);
	char *at = malloc(size);
	if (at == NULL)
		return -1;
	u->ll_refs = (struct level_ref *)at;
	u->ll_reports = (struct level_report *)(u->ll_refs + n);
	u->fill_ref = (uint32_t *)(u->ll_reports + n);
	u->ll_outcomes = (uint8_t *)(u->fill_ref + n);
	u->fill_room = n;
	return 0;
}

long use_caches_merge(struct use_caches *u, const struct use_side side[2], struct use_fill *fills)
{
	const uint32_t n_fills = side[0].n_fills + side[1].n_fills;
	if (fill_room_for(u, n_fills) < 0)
		return -1;
	/* The fills in program order, the fetches' and the data's merged, and
	   LL's lookups in that order. */
	uint32_t n_ll = 0;
	for (uint32_t at[2] = { 0, 0 }, f = 0; f < n_fills; f++) {
		const struct level_report *fetch = &side[0].reports[at[0]], *data = &side[1].reports[at[1]];
		const int d = at[0] == side[0].n_fills ||
			      (at[1] < side[1].n_fills &&
			       side[1].refs[data->ref].handle < side[0].refs[fetch->ref].handle);
		const struct level_report *r = d ? data : fetch;
		at[d]++;
		const struct level_ref *ref = &side[d].refs[r->ref];
		const uint64_t line_mask = ((uint64_t)1 << u->l1[d].line_bits) - 1;
		const uint64_t line = (r->second ? ref->addr + ref->size - 1 : ref->addr) & ~line_mask;
		u->fill_ref[f] = (uint32_t)d << 31 | r->ref;
		fills[f] = (struct use_fill){ 0, ref->handle, r->slot, r->count, r->mask, NO_USE_LL,
					      (uint8_t)d, 0 };
		if (line != 0)
			u->ll_refs[n_ll++] = (struct level_ref){ line, 1, 0, 0, f };
	}
	level_take(&u->ll, u->ll_refs, n_ll, u->ll_outcomes, u->ll_reports);
	for (uint32_t k = 0; k < n_ll; k++) {
		/* a lookup of a single line: one report each */
		const uint32_t f = u->ll_refs[k].handle;
		struct use_fill *fill = &fills[f];
		fill->ll_slot = u->ll_reports[k].slot;
		fill->ll_filled = u->ll_reports[k].filled;
		if (fill->ll_filled)
			side[u->fill_ref[f] >> 31].missed[u->fill_ref[f] & 0x7fffffff] = 2;
	}
	return n_fills;
}

long use_caches_take(struct use_caches *u, const struct level_ref *refs, uint32_t n_fetch,
		     uint32_t n, uint8_t *missed, struct use_fill *fills)
{
	if (n > u->room) {
		free(u->reports);
		u->room = 0;
		if ((u->reports = malloc(4 * (size_t)n * sizeof(*u->reports))) == NULL)
			return -1;
		u->room = n;
	}
	struct level_report *reports[2] = { u->reports, u->reports + 2 * u->room };
	const uint32_t n_fetch_fills = use_caches_take_l1(u, 0, refs, n_fetch, missed, reports[0]);
	const uint32_t n_data_fills = use_caches_take_l1(u, 1, refs + n_fetch, n - n_fetch,
							 missed + n_fetch, reports[1]);
	const struct use_side side[2] = {
		{ refs, n_fetch, missed, reports[0], n_fetch_fills },
		{ refs + n_fetch, n - n_fetch, missed + n_fetch, reports[1], n_data_fills },
	};
	return use_caches_merge(u, side, fills);
}

/* ---- The charge sink ---------------------------------------------------- */

int use_sink_init(struct use_sink *s, const struct cgt_hierarchy *caches,
		  const int column[USE_COLUMNS], struct backdate *backdate)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->column, column, sizeof(s->column));
	s->backdate = backdate;
	for (int k = 0; k < 2; k++) {
		const struct cgt_cache_config *cc = &caches->level[CGT_LEVEL_I1 + k];
		s->slots[k] = (uint32_t)(cc->size / cc->line);
		s->line[k] = (uint32_t)cc->line;
		s->loader[k] = calloc(s->slots[k], sizeof(*s->loader[k]));
		s->node[k] = calloc(s->slots[k], sizeof(*s->node[k]));
		s->ll_of[k] = malloc(s->slots[k] * sizeof(*s->ll_of[k]));
	}
	const struct cgt_cache_config *ll = &caches->level[CGT_LEVEL_LL];
	s->ll_slots = (uint32_t)(ll->size / ll->line);
	s->ll_line = (uint32_t)ll->line;
	s->ll = calloc(s->ll_slots, sizeof(*s->ll));
	if (s->loader[0] == NULL || s->loader[1] == NULL || s->node[0] == NULL ||
	    s->node[1] == NULL || s->ll_of[0] == NULL || s->ll_of[1] == NULL || s->ll == NULL) {
		use_sink_free(s);
		return -1;
	}
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < s->slots[k]; i++)
			s->ll_of[k][i] = NO_USE_LL;
	return 0;
}

void use_sink_free(struct use_sink *s)
{
	for (int k = 0; k < 2; k++) {
		free(s->loader[k]);
		free(s->node[k]);
		free(s->ll_of[k]);
	}
	free(s->ll);
	memset(s, 0, sizeof(*s));
}

/* A line's activation node, replaced by node (a fill's: taken before the
   old one is let go, which may be the same). */
static void swap_node(struct use_sink *s, uint32_t *held, uint32_t node, uint64_t *costs)
{
	if (s->backdate == NULL)
		return;
	uint32_t old = *held;
	backdate_hold(s->backdate, node);
	*held = node;
	backdate_let_go(s->backdate, old, costs);
}

void use_sink_clear(struct use_sink *s, uint64_t *costs)
{
	for (int k = 0; k < 2; k++) {
		for (uint32_t i = 0; i < s->slots[k]; i++) {
			swap_node(s, &s->node[k][i], NO_NODE, costs);
			s->loader[k][i] = 0;
			s->ll_of[k][i] = NO_USE_LL;
		}
	}
	for (uint32_t i = 0; i < s->ll_slots; i++) {
		swap_node(s, &s->ll[i].node, NO_NODE, costs);
		s->ll[i] = (struct use_ll_line){ 0, NO_NODE, 0, 0 };
	}
}

/* A line's charge at its eviction (Callgrind's UPDATE_USE), to its loader
   and its activation: 1 if made. */
static int charge(struct use_sink *s, uint64_t *costs, uint32_t loader, uint32_t node,
		  uint32_t count, uint32_t mask, uint32_t line, int collect, int accost, int sploss)
{
	if (count == 0 || !collect || loader == 0)
		return 0;
	const uint64_t cost = 1000 / count,
		       loss = ((32u - (uint32_t)__builtin_popcount(mask)) * line) >> 5;
	costs[loader + (uint32_t)s->column[accost]] += cost;
	costs[loader + (uint32_t)s->column[sploss]] += loss;
	s->charged[accost] += cost;
	s->charged[sploss] += loss;
	if (s->backdate != NULL) {
		backdate_charge(s->backdate, node, accost, cost);
		backdate_charge(s->backdate, node, sploss, loss);
	}
	return 1;
}

/* An L1 line evicted from slot of L1 k, with its use: charged, and its use
   pushed into its LL slot's. */
static void l1_evicted(struct use_sink *s, int k, uint32_t slot, uint32_t count, uint32_t mask,
		       int collect, uint64_t *costs)
{
	if (!charge(s, costs, s->loader[k][slot], s->node[k][slot], count, mask, s->line[k], collect,
		    USE_ACCOST1, USE_SPLOSS1))
		return;
	uint32_t in = s->ll_of[k][slot];
	if (in != NO_USE_LL) {
		s->ll[in].count += count;
		s->ll[in].mask |= mask;
	}
}

void use_sink_fill(struct use_sink *s, const struct use_fill *f, uint32_t loader, uint32_t node,
		   int collect, uint64_t *costs)
{
	const int k = f->l1;
	l1_evicted(s, k, f->slot, f->count, f->mask, collect, costs);
	s->loader[k][f->slot] = loader;
	swap_node(s, &s->node[k][f->slot], node, costs);
	if (f->ll_slot == NO_USE_LL)
		return;
	s->ll_of[k][f->slot] = f->ll_slot;
	if (f->ll_filled) {
		struct use_ll_line *l = &s->ll[f->ll_slot];
		charge(s, costs, l->loader, l->node, l->count, l->mask, s->ll_line, collect, USE_ACCOST2,
		       USE_SPLOSS2);
		swap_node(s, &l->node, node, costs);
		l->loader = loader;
		l->count = l->mask = 0;
	}
}

void use_sink_finish(struct use_sink *s, const struct level_use *const l1_use[2], int collect,
		     uint64_t *costs)
{
	if (collect) {
		for (int k = 0; k < 2; k++)
			for (uint32_t i = 0; i < s->slots[k]; i++)
				if (s->loader[k][i] != 0)
					l1_evicted(s, k, i, l1_use[k][i].count, l1_use[k][i].mask, collect,
						   costs);
		for (uint32_t i = 0; i < s->ll_slots; i++) {
			struct use_ll_line *l = &s->ll[i];
			charge(s, costs, l->loader, l->node, l->count, l->mask, s->ll_line, collect,
			       USE_ACCOST2, USE_SPLOSS2);
		}
	}
	/* every line gone: the activations it held let go */
	use_sink_clear(s, costs);
}
