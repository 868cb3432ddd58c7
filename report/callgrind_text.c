/*
 * callgrind_annotate 3.19's text (report.h): its options block, the
 * program totals, the functions ranked down to the threshold with their
 * callers and callees (--tree), then the annotated sources
 * (callgrind_source.c).  Its rules, read in its print_* functions: a
 * column is as wide as its widest count (with commas, and a percentage's
 * nine characters), a percentage is of the summary, functions are ranked
 * by the sort events and then by name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind_annotate.h"

static const char fancy[] = "--------------------------------------------------------------------------------\n";

struct cgt_cost *cga_cost(const struct cga *a)
{
	return calloc(1, sizeof(struct cgt_cost) + a->p->n_events * sizeof(uint64_t));
}

static int given(const struct cgt_cost *c, unsigned i)
{
	return c != NULL && (c->given >> i & 1);
}

int cga_compare(const struct cga *a, const struct cgt_cost *x, const struct cgt_cost *y)
{
	for (unsigned k = 0; k < a->n_sort; k++) {
		unsigned i = a->sort[k];
		int gx = given(x, i), gy = given(y, i);
		if (gx != gy)
			return gx ? -1 : 1;
		if (gx && x->count[i] != y->count[i])
			return x->count[i] > y->count[i] ? -1 : 1;
	}
	return 0;
}

static unsigned digits(uint64_t v)
{
	unsigned n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

void cga_widths(const struct cga *a, const struct cgt_cost *const *costs, size_t n,
		unsigned *widths)
{
	for (unsigned i = 0; i < a->p->n_events; i++)
		widths[i] = (unsigned)strlen(a->p->events[i]);
	for (size_t k = 0; k < n; k++)
		for (unsigned i = 0; costs[k] != NULL && i < a->p->n_events; i++) {
			if (!given(costs[k], i))
				continue;
			unsigned len = digits(costs[k]->count[i]);
			unsigned w = len + (len - 1) / 3 + (a->o->show_percs ? 9 : 0);
			if (w > widths[i])
				widths[i] = w;
		}
}

/* v * 100 / total as Perl computes it: the product exact when it fits in
   64 bits, in doubles when not. */
static double percent(uint64_t v, const struct cgt_cost *summary, unsigned i)
{
	if (!given(summary, i) || summary->count[i] == 0)
		return 0;
	double product = v <= UINT64_MAX / 100 ? (double)(v * 100) : (double)v * 100.0;
	return product / (double)summary->count[i];
}

void cga_print_cost(const struct cga *a, const struct cgt_cost *c, const unsigned *widths)
{
	for (unsigned k = 0; k < a->n_show; k++) {
		unsigned i = a->show[k];
		char text[CGT_COUNT_TEXT + 32];
		size_t len;
		if (given(c, i))
			cgt_format_count(c->count[i], text);
		else
			strcpy(text, ".");
		len = strlen(text);
		if (a->o->show_percs) {
			if (given(c, i) && c->count[i] != 0) {
				double perc = percent(c->count[i], a->summary, i);
				snprintf(text + len, sizeof(text) - len,
					 -9.995 < perc && perc < 99.995 ? " (%5.2f%%)" : " (%5.1f%%)", perc);
			} else {
				strcpy(text + len, "         ");
			}
			len = strlen(text);
		}
		fprintf(a->out, "%*s%s ", widths[i] > len ? (int)(widths[i] - len) : 0, "", text);
	}
}

void cga_print_events(const struct cga *a, const unsigned *widths)
{
	for (unsigned k = 0; k < a->n_show; k++) {
		unsigned i = a->show[k];
		const char *name = a->p->events[i];
		fprintf(a->out, "%s%*s ", name, (int)(widths[i] - strlen(name)), "");
	}
}

/* The index of event name, the last of that name (as callgrind_annotate's
   hash of them); -1 if none. */
static int event_index(const struct cgt_callgrind_profile *p, const char *name)
{
	for (unsigned i = p->n_events; i-- > 0;)
		if (strcmp(p->events[i], name) == 0)
			return (int)i;
	return -1;
}

static int resolve_events(struct cga *a)
{
	const struct cgt_callgrind_annotate_options *o = a->o;
	const struct cgt_callgrind_profile *p = a->p;
	a->n_show = o->n_show ? o->n_show : p->n_events;
	a->n_sort = o->n_sort ? o->n_sort : p->n_events;
	if (a->n_show > CGT_CALLGRIND_MAX_EVENTS || a->n_sort > CGT_CALLGRIND_MAX_EVENTS)
		return cgt_fail(a->e, cgt_err_invalid, "at most %d events to show or sort by",
				CGT_CALLGRIND_MAX_EVENTS);
	for (unsigned k = 0; k < a->n_show; k++) {
		int i = o->n_show ? event_index(p, o->show[k]) : (int)k;
		if (i < 0)
			return cgt_fail(a->e, cgt_err_invalid, "--show event `%s' did not appear in input",
					o->show[k]);
		a->show[k] = (unsigned)i;
	}
	int per_event = o->n_sort && o->sort_thresholds != NULL;
	for (unsigned k = 0; k < a->n_sort; k++) {
		int i = o->n_sort ? event_index(p, o->sort[k]) : (int)k;
		if (i < 0)
			return cgt_fail(a->e, cgt_err_invalid, "--sort event `%s' did not appear in input",
					o->sort[k]);
		a->sort[k] = (unsigned)i;
		a->threshold_text[k] = per_event ? (o->sort_thresholds[k] ? o->sort_thresholds[k] : "0")
				     : k == 0 ? o->threshold : "0";
		a->thresholds[k] = strtod(a->threshold_text[k], NULL);
	}
	/* per-event thresholds: the single one is not used */
	a->single_threshold = per_event ? 0 : strtod(o->threshold, NULL);
	return 0;
}

static int add_to(struct cgt_cost *b, const struct cgt_cost *c, unsigned n)
{
	for (unsigned i = 0; c != NULL && i < n; i++)
		if (given(c, i)) {
			if (b->count[i] > UINT64_MAX - c->count[i])
				return -1;
			b->count[i] += c->count[i];
			b->given |= 1ull << i;
		}
	return 0;
}

static int is_zero(const struct cgt_cost *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (given(c, i) && c->count[i] > 0)
			return 0;
	return 1;
}

static const struct cga *sorting;

static int by_rank(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int c = cga_compare(sorting, sorting->total[i], sorting->total[j]);
	return c ? c : strcmp(sorting->p->fns[i].name, sorting->p->fns[j].name);
}

/* The function totals (inclusive ones replace the called functions'),
   the summary (the file's, else computed from them), the ranking. */
static int compute_totals(struct cga *a)
{
	const struct cgt_callgrind_profile *p = a->p;
	unsigned n = p->n_events;
	if ((a->total = calloc(p->n_fns + 1, sizeof(*a->total))) == NULL ||
	    (a->ranked = calloc(p->n_fns + 1, sizeof(size_t))) == NULL ||
	    (a->summary = cga_cost(a)) == NULL || (a->scratch = cga_cost(a)) == NULL)
		return cgt_fail(a->e, cgt_err_nomem, "out of memory");
	for (size_t f = 0; f < p->n_fns; f++) {
		const struct cgt_callgrind_fn *fn = &p->fns[f];
		const struct cgt_cost *in = a->o->inclusive ? fn->called : NULL;
		if (!fn->listed && in == NULL)
			continue;
		if ((a->total[f] = cga_cost(a)) == NULL)
			return cgt_fail(a->e, cgt_err_nomem, "out of memory");
		if ((in != NULL && add_to(a->total[f], in, n) < 0) ||
		    (in == NULL && (add_to(a->total[f], fn->self, n) < 0 ||
				    (a->o->inclusive && add_to(a->total[f], fn->calls, n) < 0))))
			return cgt_fail(a->e, cgt_err_corrupt, "%s: a sum of counts past 2^64", a->o->input);
		a->ranked[a->n_ranked++] = f;
	}
	const struct cgt_cost *from = p->summary && !is_zero(p->summary, n) ? p->summary : p->totals;
	if (from != NULL && !is_zero(from, n)) {
		memcpy(a->summary, from, sizeof(struct cgt_cost) + n * sizeof(uint64_t));
	} else {
		a->summary_calculated = 1;
		for (size_t k = 0; k < a->n_ranked; k++)
			if (add_to(a->summary, a->total[a->ranked[k]], n) < 0)
				return cgt_fail(a->e, cgt_err_corrupt, "%s: a sum of counts past 2^64",
						a->o->input);
	}
	sorting = a;
	qsort(a->ranked, a->n_ranked, sizeof(size_t), by_rank);
	return 0;
}

/* callgrind_annotate stops before a function once the functions before it
   reach every threshold (a share of the summary in percent; with
   --inclusive, the summary less the last function's cost). */
static void rank_to_threshold(struct cga *a)
{
	__int128 curr[CGT_CALLGRIND_MAX_EVENTS] = { 0 };
	a->n_printed = 0;
	for (size_t k = 0; k < a->n_ranked; k++) {
		if (a->single_threshold < 100) {
			int reached = 1;
			for (unsigned t = 0; t < a->n_sort; t++) {
				unsigned i = a->sort[t];
				__int128 product = curr[t] * 100;
				double prop = product >= INT64_MIN && product <= (__int128)UINT64_MAX
					      ? (double)product : (double)curr[t] * 100.0;
				if (given(a->summary, i) && a->summary->count[i] > 0)
					prop /= (double)a->summary->count[i];
				reached &= prop >= a->thresholds[t];
			}
			if (reached)
				break;
		}
		const struct cgt_cost *c = a->total[a->ranked[k]];
		for (unsigned t = 0; t < a->n_sort; t++) {
			unsigned i = a->sort[t];
			if (!given(c, i))
				continue;
			if (a->o->inclusive)
				curr[t] = (__int128)(given(a->summary, i) ? a->summary->count[i] : 0) -
					  c->count[i];
			else
				curr[t] += c->count[i];
		}
		a->n_printed++;
	}
}

static void print_options(struct cga *a)
{
	const struct cgt_callgrind_profile *p = a->p;
	const struct cgt_callgrind_annotate_options *o = a->o;
	FILE *out = a->out;
	fputs(fancy, out);
	fprintf(out, "Profile data file '%s'", o->input);
	if (p->creator && *p->creator)
		fprintf(out, " (creator: %s)", p->creator);
	fprintf(out, "\n%s", fancy);
	for (unsigned i = 0; i < p->n_desc; i++)
		if (strncmp(p->desc[i], "Option:", 7) != 0)
			fprintf(out, "%s\n", p->desc[i]);
	fprintf(out, "Profiled target:  %s", p->cmd && *p->cmd ? p->cmd : "(unknown)");
	if (p->pid && *p->pid) {
		fprintf(out, " (PID %s", p->pid);
		if (p->part && *p->part)
			fprintf(out, ", part %s", p->part);
		if (p->thread && *p->thread)
			fprintf(out, ", thread %s", p->thread);
		fputc(')', out);
	}
	fputs("\nEvents recorded: ", out);
	for (unsigned i = 0; i < p->n_events; i++)
		fprintf(out, " %s", p->events[i]);
	fputs("\nEvents shown:    ", out);
	for (unsigned k = 0; k < a->n_show; k++)
		fprintf(out, " %s", p->events[a->show[k]]);
	fputs("\nEvent sort order:", out);
	for (unsigned k = 0; k < a->n_sort; k++)
		fprintf(out, " %s", o->n_sort ? o->sort[k] : p->events[k]);
	fputs("\nThresholds:      ", out);
	for (unsigned k = 0; k < a->n_sort; k++)
		fprintf(out, " %s", a->threshold_text[k]);
	fprintf(out, "\nInclude dirs:     %s\n", o->n_include_dirs ? o->include_dirs[0] : "");
	for (unsigned i = 1; i < o->n_include_dirs; i++)
		fprintf(out, "                  %s\n", o->include_dirs[i]);
	/* the user's files in name order (callgrind_annotate's is its hash's) */
	char **files = calloc(o->n_user_files + 1, sizeof(char *));
	unsigned n = 0;
	for (unsigned i = 0; files != NULL && i < o->n_user_files; i++) {
		unsigned j = 0;
		while (j < n && strcmp(files[j], o->user_files[i]) < 0)
			j++;
		if (j < n && strcmp(files[j], o->user_files[i]) == 0)
			continue;
		memmove(files + j + 1, files + j, (n - j) * sizeof(char *));
		files[j] = (char *)o->user_files[i];
		n++;
	}
	fprintf(out, "User annotated:   %s\n", n ? files[0] : "");
	for (unsigned i = 1; i < n; i++)
		fprintf(out, "                  %s\n", files[i]);
	free(files);
	fprintf(out, "Auto-annotation:  %s\n\n", o->auto_annotate ? "on" : "off");
}

static const struct cgt_callgrind_call **arc_list;

static int by_caller_cost(const void *x, const void *y)
{
	const struct cgt_callgrind_call *c = *(const struct cgt_callgrind_call *const *)x,
					*d = *(const struct cgt_callgrind_call *const *)y;
	int r = cga_compare(sorting, c->cost, d->cost);
	return r ? r : strcmp(sorting->p->fns[c->caller].name, sorting->p->fns[d->caller].name);
}

static int by_callee_cost(const void *x, const void *y)
{
	const struct cgt_callgrind_call *c = *(const struct cgt_callgrind_call *const *)x,
					*d = *(const struct cgt_callgrind_call *const *)y;
	int r = cga_compare(sorting, c->cost, d->cost);
	return r ? r : strcmp(sorting->p->fns[c->callee].name, sorting->p->fns[d->callee].name);
}

/* The calls to (callers) or from f, ranked: their count. */
static size_t arcs_of(const struct cga *a, size_t f, int callers)
{
	size_t n = 0;
	for (size_t k = 0; k < a->p->n_calls; k++)
		if ((callers ? a->p->calls[k].callee : a->p->calls[k].caller) == f)
			arc_list[n++] = &a->p->calls[k];
	qsort(arc_list, n, sizeof(*arc_list), callers ? by_caller_cost : by_callee_cost);
	return n;
}

static void print_arcs(struct cga *a, size_t f, int callers, const unsigned *widths)
{
	char count[CGT_COUNT_TEXT];
	size_t n = arcs_of(a, f, callers);
	for (size_t k = 0; k < n; k++) {
		const struct cgt_callgrind_fn *other = &a->p->fns[callers ? arc_list[k]->caller
									 : arc_list[k]->callee];
		cga_print_cost(a, arc_list[k]->cost, widths);
		fprintf(a->out, " %s %s (%sx)", callers ? "<" : ">  ", other->name,
			cgt_format_count(arc_list[k]->count, count));
		if (other->object != NULL)
			fprintf(a->out, " [%s]", other->object);
		fputc('\n', a->out);
	}
}

/* The file part of a function's name: up to its first ':' that has
   something after it (callgrind_annotate's s/:.+$//). */
static char *file_of(const char *name)
{
	const char *colon = strchr(name, ':');
	return colon && colon[1] ? strndup(name, (size_t)(colon - name)) : strdup(name);
}

static int add_threshold_file(struct cga *a, const char *name)
{
	char *file = file_of(name);
	if (file == NULL)
		return -1;
	size_t j = 0;
	while (j < a->n_threshold_files && strcmp(a->threshold_files[j], file) < 0)
		j++;
	if (strcmp(file, "???") == 0 ||
	    (j < a->n_threshold_files && strcmp(a->threshold_files[j], file) == 0)) {
		free(file);
		return 0;
	}
	memmove(a->threshold_files + j + 1, a->threshold_files + j,
		(a->n_threshold_files - j) * sizeof(char *));
	a->threshold_files[j] = file;
	a->n_threshold_files++;
	return 0;
}

static int print_functions(struct cga *a)
{
	const struct cgt_callgrind_profile *p = a->p;
	FILE *out = a->out;
	unsigned sw[CGT_CALLGRIND_MAX_EVENTS], fw[CGT_CALLGRIND_MAX_EVENTS];
	const struct cgt_cost *summary = a->summary;
	int tree = a->o->tree_caller || a->o->tree_calling;

	cga_widths(a, &summary, 1, sw);
	cga_widths(a, (const struct cgt_cost *const *)a->total, p->n_fns, fw);
	fputs(fancy, out);
	cga_print_events(a, sw);
	fprintf(out, "\n%s", fancy);
	cga_print_cost(a, a->summary, sw);
	fprintf(out, " PROGRAM TOTALS%s\n\n%s", a->summary_calculated ? " (calculated)" : "", fancy);
	cga_print_events(a, fw);
	fprintf(out, " file:function\n%s", fancy);

	if ((arc_list = calloc(p->n_calls + 1, sizeof(*arc_list))) == NULL ||
	    (a->threshold_files = calloc(a->n_printed + 1, sizeof(char *))) == NULL)
		return cgt_fail(a->e, cgt_err_nomem, "out of memory");
	for (size_t k = 0; k < a->n_printed; k++) {
		size_t f = a->ranked[k];
		const struct cgt_callgrind_fn *fn = &p->fns[f];
		int skip_tree = strcmp(fn->name, "???:???") == 0;
		if (tree)
			fputc('\n', out);
		if (a->o->tree_caller && !skip_tree)
			print_arcs(a, f, 1, fw);
		cga_print_cost(a, a->total[f], fw);
		fprintf(out, "%s %s", tree ? " * " : "", fn->name);
		if (fn->object != NULL && *fn->object)
			fprintf(out, " [%s]", fn->object);
		fputc('\n', out);
		if (a->o->tree_calling && !skip_tree)
			print_arcs(a, f, 0, fw);
		if (add_threshold_file(a, fn->name) < 0)
			return cgt_fail(a->e, cgt_err_nomem, "out of memory");
	}
	fputc('\n', out);
	free(arc_list);
	arc_list = NULL;
	return 0;
}

int cgt_callgrind_annotate(FILE *out, const struct cgt_callgrind_profile *p,
			   const struct cgt_callgrind_annotate_options *o, struct cgt_error *e)
{
	struct cga a = { .p = p, .o = o, .out = out, .e = e };
	int rc = resolve_events(&a);
	if (rc == 0 && o->format == CGT_CALLGRIND_DOT) {
		/* the graph has totals of its own */
		rc = cga_print_dot(&a);
	} else if (rc == 0 && (rc = compute_totals(&a)) == 0) {
		rank_to_threshold(&a);
		if (o->format == CGT_CALLGRIND_JSON) {
			rc = cga_print_json(&a);
		} else {
			print_options(&a);
			rc = print_functions(&a);
			if (rc == 0)
				rc = cga_annotate_sources(&a);
		}
	}
	rc = cgt_report_written(out, rc, e);
	for (size_t f = 0; a.total != NULL && f < p->n_fns; f++)
		free(a.total[f]);
	for (size_t i = 0; i < a.n_threshold_files; i++)
		free(a.threshold_files[i]);
	free(a.threshold_files);
	free(a.total);
	free(a.ranked);
	free(a.summary);
	free(a.scratch);
	return rc;
}

int cgt_report_written(FILE *out, int rc, struct cgt_error *e)
{
	/* a write that failed (a full disk) leaves the error flag set */
	int flushed = fflush(out) == 0;
	if ((!flushed || ferror(out)) && rc == 0)
		rc = cgt_fail(e, cgt_err_io, "cannot write the report%s%s", flushed ? "" : ": ",
			      flushed ? "" : strerror(errno));
	return rc;
}
