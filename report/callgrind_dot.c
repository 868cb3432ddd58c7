/*
 * cgtrace report --format=dot of a callgrind.out file: its call graph
 * for Graphviz, drawn as gprof2dot and KCachegrind's call graph draw one.
 * One event: the first --sort event, else the first --show event, else
 * the file's first (callgrind_annotate's primary sort event, unless only
 * --show narrows the events).  Percentages are of the total of every
 * function's self cost (every part's, as the functions' costs are): the
 * cost the graph is made of.  (The text's PROGRAM TOTALS is the last
 * summary: line, a part's only, which can differ from the totals: line:
 * Callgrind's does for a program whose signal handler ran.)  A node per
 * function whose inclusive cost is at least node_threshold percent of the
 * total, labelled with its name, its file and object, its inclusive and
 * self cost (percent and count), its font sized and its colour ramped
 * from blue through green to red by its inclusive share; an edge per
 * call from one drawn function to another that costs at least
 * edge_threshold percent, labelled with the calls and their cost, its pen
 * as wide and coloured as its share.  Nodes go largest first, edges
 * costliest first, ties by name: the same file gives the same graph.
 *
 * Recursion: Callgrind's call costs nest there (fib'2 calling fib'2 pays
 * again for the calls inside), so the sum of what a function's callers
 * paid for it counts its levels over and over (callgrind_annotate's
 * --inclusive=yes shows such a function above 100%).  Here a function's
 * inclusive cost is what the callers outside its cycle (its strongly
 * connected component of the call graph) paid for it: exact for direct
 * recursion, and for a cycle through several functions entered at one.
 * One that only its cycle's members call, in a cycle entered at others,
 * costs what they paid for it, or its whole cycle if that is less (its
 * members' self costs and the calls leaving it).  A function nothing
 * calls, or one of a cycle nothing outside calls (which holds a root),
 * costs its whole cycle: whichever member the root is, it is not hidden.
 * Calls inside a cycle cost nothing of their own to show: they are drawn
 * dashed and grey, with their count, whenever both their functions are
 * drawn.
 */
#include <stdlib.h>
#include <string.h>

#include "callgrind_annotate.h"

struct dot {
	const struct cga *a;
	unsigned event;
	uint64_t total;			/* every function's self cost added up */
	size_t *component;		/* per function: its cycle's number */
	uint64_t *inclusive;		/* per function */
	size_t *nodes, n_nodes;		/* the functions drawn, in their order */
	size_t *node_id;		/* per function: its place in nodes + 1; 0: not drawn */
	size_t *edges, n_edges;		/* the calls drawn (indices into calls), in order */
};

static double share(const struct dot *d, uint64_t v)
{
	return d->total ? (double)v * 100.0 / (double)d->total : 0;
}

/* The ramp's position for a percentage: its share of the whole, square
   rooted so that the few percent most functions have are told apart
   (by Newton's steps: cgtrace links no libm). */
static double ramp(double percent)
{
	double x = percent < 0 ? 0 : percent > 100 ? 1 : percent / 100, r = 1;
	if (x == 0)
		return 0;
	for (int i = 0; i < 40; i++)
		r = (r + x / r) / 2;
	return r;
}

static int add_count(uint64_t *sum, uint64_t v)
{
	if (*sum > UINT64_MAX - v)
		return -1;
	*sum += v;
	return 0;
}

static int recursive(const struct dot *d, const struct cgt_callgrind_call *c)
{
	return d->component[c->caller] == d->component[c->callee];
}

/* Each function's strongly connected component of the call graph:
   Tarjan's algorithm with a stack of its own instead of recursion, since
   a chain of calls is as long as a file makes it. */
static int find_components(struct dot *d)
{
	const struct cgt_callgrind_profile *p = d->a->p;
	size_t n = p->n_fns, counter = 0, n_components = 0, depth = 0, n_open = 0;
	size_t *first = calloc(n + 1, sizeof(size_t)), *callees = calloc(p->n_calls + 1, sizeof(size_t));
	size_t *fill = calloc(n + 1, sizeof(size_t)), *order = calloc(n + 1, sizeof(size_t));
	size_t *low = calloc(n + 1, sizeof(size_t)), *next = calloc(n + 1, sizeof(size_t));
	size_t *path = calloc(n + 1, sizeof(size_t)), *open = calloc(n + 1, sizeof(size_t));
	char *is_open = calloc(n + 1, 1);
	int rc = 0;
	if (!first || !callees || !fill || !order || !low || !next || !path || !open || !is_open) {
		rc = cgt_fail(d->a->e, cgt_err_nomem, "out of memory");
		goto out;
	}
	/* the callees of function f: callees[first[f] .. first[f + 1]) */
	for (size_t k = 0; k < p->n_calls; k++)
		first[p->calls[k].caller + 1]++;
	for (size_t f = 0; f < n; f++)
		first[f + 1] += first[f];
	memcpy(fill, first, n * sizeof(size_t));
	for (size_t k = 0; k < p->n_calls; k++)
		callees[fill[p->calls[k].caller]++] = p->calls[k].callee;

	/* order[f]: 0 not reached yet, else when it was (from 1) */
	for (size_t root = 0; root < n; root++) {
		if (order[root])
			continue;
		path[depth++] = root;
		order[root] = low[root] = ++counter;
		next[root] = first[root];
		open[n_open++] = root;
		is_open[root] = 1;
		while (depth > 0) {
			size_t v = path[depth - 1];
			if (next[v] < first[v + 1]) {
				size_t w = callees[next[v]++];
				if (!order[w]) {
					order[w] = low[w] = ++counter;
					next[w] = first[w];
					open[n_open++] = w;
					is_open[w] = 1;
					path[depth++] = w;
				} else if (is_open[w] && order[w] < low[v]) {
					low[v] = order[w];
				}
				continue;
			}
			if (--depth > 0 && low[v] < low[path[depth - 1]])
				low[path[depth - 1]] = low[v];
			if (low[v] == order[v]) {
				size_t w;
				do {
					w = open[--n_open];
					is_open[w] = 0;
					d->component[w] = n_components;
				} while (w != v);
				n_components++;
			}
		}
	}
out:
	free(first);
	free(callees);
	free(fill);
	free(order);
	free(low);
	free(next);
	free(path);
	free(open);
	free(is_open);
	return rc;
}

/* Each function's inclusive cost (the head comment's rules), and the
   total. */
static int find_inclusive(struct dot *d)
{
	const struct cgt_callgrind_profile *p = d->a->p;
	size_t n = p->n_fns;
	unsigned ev = d->event;
	/* per function: what callers outside its cycle paid for it (no more
	   than what all paid, a sum the reader made), whether any did; per
	   cycle: its whole cost, whether a caller outside it calls a member */
	uint64_t *entering = calloc(n + 1, sizeof(uint64_t)), *cycle = calloc(n + 1, sizeof(uint64_t));
	char *outside_caller = calloc(n + 1, 1), *entered = calloc(n + 1, 1);
	int rc = 0;
	if (!entering || !cycle || !outside_caller || !entered) {
		rc = cgt_fail(d->a->e, cgt_err_nomem, "out of memory");
		goto out;
	}
	for (size_t f = 0; f < n; f++) {
		if (add_count(&cycle[d->component[f]], p->fns[f].self->count[ev]) < 0 ||
		    add_count(&d->total, p->fns[f].self->count[ev]) < 0)
			goto overflow;
	}
	for (size_t k = 0; k < p->n_calls; k++) {
		const struct cgt_callgrind_call *c = &p->calls[k];
		if (recursive(d, c))
			continue;
		outside_caller[c->callee] = entered[d->component[c->callee]] = 1;
		entering[c->callee] += c->cost->count[ev];
		if (add_count(&cycle[d->component[c->caller]], c->cost->count[ev]) < 0)
			goto overflow;
	}
	for (size_t f = 0; f < n; f++) {
		const struct cgt_cost *called = p->fns[f].called;
		uint64_t whole = cycle[d->component[f]];
		if (outside_caller[f])
			d->inclusive[f] = entering[f];
		else if (entered[d->component[f]] && called->count[ev] < whole)
			d->inclusive[f] = called->count[ev];
		else
			d->inclusive[f] = whole;
	}
	goto out;
overflow:
	rc = cgt_fail(d->a->e, cgt_err_corrupt, "%s: a sum of counts past 2^64", d->a->o->input);
out:
	free(entering);
	free(cycle);
	free(outside_caller);
	free(entered);
	return rc;
}

static const struct dot *sorting;

static int by_inclusive(const void *x, const void *y)
{
	size_t f = *(const size_t *)x, g = *(const size_t *)y;
	uint64_t a = sorting->inclusive[f], b = sorting->inclusive[g];
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(sorting->a->p->fns[f].name, sorting->a->p->fns[g].name);
}

static int by_cost(const void *x, const void *y)
{
	const struct cgt_callgrind_profile *p = sorting->a->p;
	const struct cgt_callgrind_call *c = &p->calls[*(const size_t *)x],
					*e = &p->calls[*(const size_t *)y];
	uint64_t a = c->cost->count[sorting->event], b = e->cost->count[sorting->event];
	if (a != b)
		return a > b ? -1 : 1;
	int r = strcmp(p->fns[c->caller].name, p->fns[e->caller].name);
	return r ? r : strcmp(p->fns[c->callee].name, p->fns[e->callee].name);
}

/* What is drawn, in order. */
static void choose(struct dot *d)
{
	const struct cgt_callgrind_profile *p = d->a->p;
	const struct cgt_callgrind_annotate_options *o = d->a->o;
	for (size_t f = 0; f < p->n_fns; f++)
		if (share(d, d->inclusive[f]) >= o->node_threshold)
			d->nodes[d->n_nodes++] = f;
	sorting = d;
	qsort(d->nodes, d->n_nodes, sizeof(size_t), by_inclusive);
	for (size_t k = 0; k < d->n_nodes; k++)
		d->node_id[d->nodes[k]] = k + 1;
	for (size_t k = 0; k < p->n_calls; k++) {
		const struct cgt_callgrind_call *c = &p->calls[k];
		if (d->node_id[c->caller] && d->node_id[c->callee] &&
		    (recursive(d, c) || share(d, c->cost->count[d->event]) >= o->edge_threshold))
			d->edges[d->n_edges++] = k;
	}
	qsort(d->edges, d->n_edges, sizeof(size_t), by_cost);
}

/* s inside a DOT string: a quote and a backslash escaped (so that no
   name makes one of Graphviz's \N, \l... escapes), a control character
   as the text \xNN. */
static void dot_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\\\x%02x", c);
		else
			fputc(c, out);
	}
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* "12.34% (1,234)" */
static void dot_cost(FILE *out, const struct dot *d, uint64_t v)
{
	char count[CGT_COUNT_TEXT];
	fprintf(out, "%.2f%% (%s)", share(d, v), cgt_format_count(v, count));
}

/* A colour of the ramp, blue (none of the total), green, red (all of
   it), of this saturation and value, as RGB. */
static void dot_colour(FILE *out, double percent, double saturation, double value)
{
	double hue = (1 - ramp(percent)) * 4;	/* sixths of the circle: 4 blue, 2 green, 0 red */
	int sector = (int)hue;
	double f = hue - sector;
	double m = value * (1 - saturation), rising = value * (1 - saturation * (1 - f)),
	       falling = value * (1 - saturation * f);
	const double rgb[5][3] = {
		{ value, rising, m }, { falling, value, m }, { m, value, rising },
		{ m, falling, value }, { rising, m, value },
	};
	fprintf(out, "\"#%02x%02x%02x\"", (unsigned)(rgb[sector][0] * 255 + 0.5),
		(unsigned)(rgb[sector][1] * 255 + 0.5), (unsigned)(rgb[sector][2] * 255 + 0.5));
}

static void print_graph(const struct dot *d)
{
	const struct cgt_callgrind_profile *p = d->a->p;
	const struct cgt_callgrind_annotate_options *o = d->a->o;
	FILE *out = d->a->out;
	char count[CGT_COUNT_TEXT];

	fputs("digraph callgrind {\n\tgraph [label=\"", out);
	dot_text(out, o->input);
	fputs("\\l", out);
	if (p->cmd && *p->cmd) {
		dot_text(out, p->cmd);
		if (p->pid && *p->pid) {
			fputs(" (PID ", out);
			dot_text(out, p->pid);
			if (p->part && *p->part) {
				fputs(", part ", out);
				dot_text(out, p->part);
			}
			if (p->thread && *p->thread) {
				fputs(", thread ", out);
				dot_text(out, p->thread);
			}
			fputc(')', out);
		}
		fputs("\\l", out);
	}
	dot_text(out, p->events[d->event]);
	fprintf(out, ": %s in all; functions from %g%% inclusive, calls from %g%%\\l\", "
		"labelloc=t, labeljust=l, fontname=\"Helvetica\", ranksep=0.25, nodesep=0.25];\n"
		"\tnode [shape=box, style=\"filled,rounded\", fontname=\"Helvetica\"];\n"
		"\tedge [fontname=\"Helvetica\", fontsize=9];\n",
		cgt_format_count(d->total, count), o->node_threshold, o->edge_threshold);

	for (size_t k = 0; k < d->n_nodes; k++) {
		const struct cgt_callgrind_fn *fn = &p->fns[d->nodes[k]];
		double incl = share(d, d->inclusive[d->nodes[k]]);
		int has_file = fn->file && *fn->file && strcmp(fn->file, "???") != 0;
		int has_object = fn->object && *fn->object;
		fprintf(out, "\tn%zu [label=\"", k + 1);
		dot_text(out, fn->function);
		if (has_file || has_object) {
			fputs("\\n", out);
			if (has_file)
				dot_text(out, base_name(fn->file));
			if (has_object) {
				fputs(has_file ? " [" : "[", out);
				dot_text(out, base_name(fn->object));
				fputc(']', out);
			}
		}
		fputs("\\ninclusive ", out);
		dot_cost(out, d, d->inclusive[d->nodes[k]]);
		fputs("\\nself ", out);
		dot_cost(out, d, fn->self->count[d->event]);
		fputs("\", tooltip=\"", out);
		dot_text(out, fn->name);
		if (has_object) {
			fputs(" [", out);
			dot_text(out, fn->object);
			fputc(']', out);
		}
		fprintf(out, "\", fontsize=%.1f, fillcolor=", 9 + 13 * ramp(incl));
		dot_colour(out, incl, 0.45, 0.97);
		fputs("];\n", out);
	}

	for (size_t k = 0; k < d->n_edges; k++) {
		const struct cgt_callgrind_call *c = &p->calls[d->edges[k]];
		fprintf(out, "\tn%zu -> n%zu [label=\"%s call%s", d->node_id[c->caller],
			d->node_id[c->callee], cgt_format_count(c->count, count), c->count == 1 ? "" : "s");
		if (recursive(d, c)) {
			fputs("\", style=dashed, color=\"#808080\"];\n", out);
			continue;
		}
		double s = share(d, c->cost->count[d->event]), t = ramp(s);
		fputs("\\n", out);
		dot_cost(out, d, c->cost->count[d->event]);
		fprintf(out, "\", penwidth=%.2f, arrowsize=%.2f, color=", 0.5 + 4.5 * t, 0.5 + 0.5 * t);
		dot_colour(out, s, 0.9, 0.7);
		fputs("];\n", out);
	}
	fputs("}\n", out);
}

int cga_print_dot(struct cga *a)
{
	const struct cgt_callgrind_profile *p = a->p;
	size_t n = p->n_fns;
	struct dot d = { .a = a };
	/* the first --sort event, else the first --show event, else the file's first */
	d.event = a->o->n_sort ? a->sort[0] : a->o->n_show ? a->show[0] : 0;
	int rc;
	if ((d.component = calloc(n + 1, sizeof(size_t))) == NULL ||
	    (d.inclusive = calloc(n + 1, sizeof(uint64_t))) == NULL ||
	    (d.nodes = calloc(n + 1, sizeof(size_t))) == NULL ||
	    (d.node_id = calloc(n + 1, sizeof(size_t))) == NULL ||
	    (d.edges = calloc(p->n_calls + 1, sizeof(size_t))) == NULL)
		rc = cgt_fail(a->e, cgt_err_nomem, "out of memory");
	else if ((rc = find_components(&d)) == 0 && (rc = find_inclusive(&d)) == 0) {
		choose(&d);
		print_graph(&d);
	}
	free(d.component);
	free(d.inclusive);
	free(d.nodes);
	free(d.node_id);
	free(d.edges);
	return rc;
}
