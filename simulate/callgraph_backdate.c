/*
 * The back-dating tree (callgraph_backdate.h).
 */
#include <stdlib.h>
#include <string.h>

#include "callgraph_backdate.h"
#include "sim.h"

void backdate_init(struct backdate *b, const int column[USE_COLUMNS])
{
	memset(b, 0, sizeof(*b));
	memcpy(b->column, column, sizeof(b->column));
}

void backdate_free(struct backdate *b)
{
	free(b->nodes);
	free(b->arcs);
	memset(b, 0, sizeof(*b));
}

uint32_t backdate_node(struct backdate *b, uint32_t parent, uint32_t arc, uint32_t arc_cost)
{
	uint32_t n = b->free;
	if (n != NO_NODE) {
		b->free = b->nodes[n].parent;
	} else {
		if (b->n == 0)
			b->n = 1;	/* node 0 is NO_NODE */
		if (b->n == UINT32_MAX ||
		    (b->n >= b->cap &&
		     cgt_array_grow(&b->nodes, &b->cap, b->n, 1, sizeof(*b->nodes)) < 0)) {
			b->failed = 1;
			return NO_NODE;
		}
		n = (uint32_t)b->n++;
	}
	b->nodes[n] = (struct backdate_node){ parent, arc, arc_cost, 0, 0, { 0 } };
	if (parent != NO_NODE)
		b->nodes[parent].holders++;
	b->made++;
	if (++b->live > b->peak)
		b->peak = b->live;
	return n;
}

void backdate_hold(struct backdate *b, uint32_t node)
{
	if (node != NO_NODE)
		b->nodes[node].holders++;
}

static void note_arc(struct backdate *b, uint32_t arc)
{
	if (b->n_arcs == b->cap_arcs &&
	    cgt_array_grow(&b->arcs, &b->cap_arcs, b->n_arcs, 1, sizeof(*b->arcs)) < 0) {
		b->failed = 1;
		return;
	}
	b->arcs[b->n_arcs++] = arc;
}

#define FREED 2	/* (returned) */

/* Frees node and, up the tree, each caller it was the last hold on that has
   returned, passing their costs on. */
static void pass_on(struct backdate *b, uint32_t node, uint64_t *costs)
{
	while (node != NO_NODE) {
		struct backdate_node *n = &b->nodes[node];
		if (!n->returned || n->holders > 0)
			return;
		uint32_t parent = n->parent;
		int charged = 0;
		for (int c = 0; c < USE_COLUMNS; c++) {
			if (n->pending[c] == 0)
				continue;
			charged = 1;
			if (n->arc_cost != 0)
				costs[n->arc_cost + (uint32_t)b->column[c]] += n->pending[c];
			if (parent != NO_NODE)
				b->nodes[parent].pending[c] += n->pending[c];
		}
		if (charged && n->arc != NO_ARC)
			note_arc(b, n->arc);
		n->parent = b->free;
		n->returned = FREED;
		b->free = node;
		b->live--;
		if (parent != NO_NODE)
			b->nodes[parent].holders--;
		node = parent;
	}
}

void backdate_let_go(struct backdate *b, uint32_t node, uint64_t *costs)
{
	if (node == NO_NODE)
		return;
	b->nodes[node].holders--;
	pass_on(b, node, costs);
}

void backdate_returned(struct backdate *b, uint32_t node, uint64_t *costs)
{
	if (node == NO_NODE)
		return;
	b->nodes[node].returned = 1;
	pass_on(b, node, costs);
}

void backdate_settle(struct backdate *b, uint64_t *costs)
{
	for (size_t i = 1; i < b->n; i++) {
		struct backdate_node *n = &b->nodes[i];
		int any = 0;
		for (int c = 0; c < USE_COLUMNS; c++)
			any |= n->pending[c] != 0;
		if (n->returned == FREED || !any)
			continue;
		for (uint32_t a = (uint32_t)i; a != NO_NODE; a = b->nodes[a].parent) {
			const struct backdate_node *up = &b->nodes[a];
			if (up->arc_cost == 0)
				continue;
			for (int c = 0; c < USE_COLUMNS; c++)
				costs[up->arc_cost + (uint32_t)b->column[c]] += n->pending[c];
			note_arc(b, up->arc);
		}
		memset(n->pending, 0, sizeof(n->pending));
	}
}
