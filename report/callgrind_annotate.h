/*
 * Internal to report/: a callgrind_annotate run over a read callgrind.out
 * file -- the function totals it ranks, its column and percentage
 * rules -- shared by its text (callgrind_text.c), its source annotation
 * (callgrind_source.c), the JSON (callgrind_json.c) and the call graph
 * (callgrind_dot.c).
 */
#ifndef CGTRACE_CALLGRIND_ANNOTATE_H
#define CGTRACE_CALLGRIND_ANNOTATE_H

#include <stdio.h>

#include "report.h"

struct cga {
	const struct cgt_callgrind_profile *p;
	const struct cgt_callgrind_annotate_options *o;
	FILE *out;
	struct cgt_error *e;
	unsigned show[CGT_CALLGRIND_MAX_EVENTS], n_show;
	unsigned sort[CGT_CALLGRIND_MAX_EVENTS], n_sort;
	const char *threshold_text[CGT_CALLGRIND_MAX_EVENTS];	/* per sort event */
	double thresholds[CGT_CALLGRIND_MAX_EVENTS], single_threshold;
	int summary_calculated;
	struct cgt_cost *summary;	/* callgrind_annotate's: a copy it may change */
	struct cgt_cost **total;	/* per function: its line in the list; NULL: not listed */
	struct cgt_cost *scratch;	/* room for sums */
	size_t *ranked, n_ranked;	/* listed functions, in their order */
	size_t n_printed;		/* those within the threshold */
	char **threshold_files;		/* the files of those, sorted, "???" not among them */
	size_t n_threshold_files;
};

/* A cost of the run's events, zero and none given (NULL if out of memory). */
struct cgt_cost *cga_cost(const struct cga *a);
/* callgrind_annotate's ordering of costs: by the sort events, larger first,
   an event not given below 0. */
int cga_compare(const struct cga *a, const struct cgt_cost *x, const struct cgt_cost *y);
/* Column widths (per event) for these costs. */
void cga_widths(const struct cga *a, const struct cgt_cost *const *costs, size_t n,
		unsigned *widths);
/* A cost's columns, each followed by a blank; NULL: every event ".". */
void cga_print_cost(const struct cga *a, const struct cgt_cost *c, const unsigned *widths);
void cga_print_events(const struct cga *a, const unsigned *widths);

/* The source annotation, after the function list. */
int cga_annotate_sources(struct cga *a);

/* The JSON of the run instead of the text. */
int cga_print_json(struct cga *a);
/* Its call graph for Graphviz instead (callgrind_dot.c). */
int cga_print_dot(struct cga *a);

#endif
