/*
 * callgrind_annotate 3.19's source annotation (--auto=yes, and source
 * files named on its command line): each file's lines with costs and
 * those within --context of them, the calls made at each line, its
 * warnings for a source newer than the profile and for lines past the
 * end, and the events annotated.  Its line counting is kept (a range's
 * bounds may be fractions, with a fractional --context; reading stops at
 * a last line "0" without a newline, which Perl takes for false).  Files
 * go in name order, where callgrind_annotate's is its hash's.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "callgrind_annotate.h"

static const char fancy[] = "--------------------------------------------------------------------------------\n";
static const char at_line[] = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n";
static const char warning_line[] = "@@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@\n";

struct source {
	struct cga *a;
	const struct cgt_callgrind_file *file;	/* NULL: nothing collected for it */
	FILE *in;
	char *line;			/* the line read last */
	size_t cap;
	ssize_t len;
	double dot;			/* lines read: Perl's $. */
	unsigned widths[CGT_CALLGRIND_MAX_EVENTS];
	struct cgt_cost *printed;	/* the costs of the lines shown, summed */
};

/* Reads a line: 0 at the end of the file. */
static int read_line(struct source *s)
{
	s->len = getline(&s->line, &s->cap, s->in);
	if (s->len < 0)
		return 0;
	s->dot++;
	return 1;
}

static void add_to(struct cgt_cost *b, const struct cgt_cost *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (c->given >> i & 1) {
			b->count[i] += c->count[i];
			b->given |= 1ull << i;
		}
}

static const struct cgt_cost *arc_cost(const struct cgt_callgrind_profile *p, size_t caller,
				       size_t callee)
{
	for (size_t k = 0; k < p->n_calls; k++)
		if (p->calls[k].caller == caller && p->calls[k].callee == callee)
			return p->calls[k].cost;
	return NULL;
}

/* The calls made at line n: those of the first function that called from
   it, to each function called from it, ranked by that function's calls. */
static void print_line_calls(struct source *s, uint64_t n)
{
	const struct cgt_callgrind_file *f = s->file;
	const struct cgt_callgrind_profile *p = s->a->p;
	const struct cgt_callgrind_line_call *first = NULL;
	size_t shown[64], n_shown = 0;
	char count[CGT_COUNT_TEXT];

	for (size_t k = 0; k < f->n_calls; k++)
		if (f->calls[k].line == n && first == NULL)
			first = &f->calls[k];
	if (first == NULL)
		return;
	/* callees one at a time, each the best not yet shown */
	for (;;) {
		const struct cgt_callgrind_line_call *best = NULL;
		const struct cgt_cost *best_cost = NULL;
		for (size_t k = 0; k < f->n_calls; k++) {
			const struct cgt_callgrind_line_call *c = &f->calls[k];
			int done = c->line != n;
			for (size_t j = 0; j < n_shown && !done; j++)
				done = shown[j] == c->callee;
			if (done)
				continue;
			const struct cgt_cost *cost = arc_cost(p, first->caller, c->callee);
			int cmp = best ? cga_compare(s->a, cost, best_cost) : -1;
			if (cmp < 0 || (cmp == 0 && strcmp(p->fns[c->callee].name,
							   p->fns[best->callee].name) < 0)) {
				best = c;
				best_cost = cost;
			}
		}
		if (best == NULL || n_shown == sizeof(shown) / sizeof(shown[0]))
			return;
		shown[n_shown++] = best->callee;
		for (size_t k = 0; k < f->n_calls; k++) {
			const struct cgt_callgrind_line_call *c = &f->calls[k];
			if (c->line != n || c->caller != first->caller || c->callee != best->callee)
				continue;
			cga_print_cost(s->a, c->cost, s->widths);
			fprintf(s->a->out, " => %s (%sx)\n", p->fns[c->callee].name,
				cgt_format_count(c->count, count));
		}
	}
}

static void warn_newer(struct cga *a, const char *name)
{
	fprintf(a->out, "%s%s%s@ Source file '%s' is more recent than input file '%s'.\n"
		"@ Annotations may not be correct.\n%s\n",
		at_line, warning_line, at_line, name, a->o->input, at_line);
}

static void warn_past_end(struct cga *a, const char *name, int newer)
{
	size_t len = strlen(name);
	fprintf(a->out, "%s%s%s@@\n@@ Information recorded about lines past the end of '%s'.\n@@\n"
		"@@ Probable cause and solution:\n", at_line, warning_line, at_line, name);
	if (newer)
		fprintf(a->out, "@@ cause:    '%s' has changed since information was gathered.\n"
			"@@           If so, a warning will have already been issued about this.\n"
			"@@ solution: Recompile program and rerun under \"valgrind --cachesim=yes\" to \n"
			"@@           gather new information.\n", name);
	else if (len >= 2 && strcmp(name + len - 2, ".h") == 0)
		fputs("@@ cause:    bug in the Valgrind's debug info reader that screws up with .h\n"
		      "@@           files sometimes\n@@ solution: none, sorry\n", a->out);
	else
		fputs("@@ cause:    not sure, sorry\n", a->out);
	fprintf(a->out, "@@\n%s", at_line);
}

/* The lines of the file: ranges of context around the lines with costs;
   then the lines past its end. */
static int print_ranges(struct source *s, const char *name, int newer)
{
	const struct cgt_callgrind_file *f = s->file;
	struct cga *a = s->a;
	FILE *out = a->out;
	double ctx = strtod(a->o->context, NULL);
	size_t next = f->n_lines > 0 && f->lines[0].line == 0, np = 0;
	double *pairs = calloc(2 * f->n_lines + 2, sizeof(double));
	if (pairs == NULL)
		return cgt_fail(a->e, cgt_err_nomem, "out of memory");
	for (size_t i = next; i < f->n_lines; i++) {
		pairs[np++] = (double)f->lines[i].line - ctx;
		while (i + 1 < f->n_lines &&
		       (double)f->lines[i].line + 2 * ctx >= (double)f->lines[i + 1].line)
			i++;
		pairs[np++] = (double)f->lines[i].line + ctx;
	}
	/* no line: one range from line 1 with no end (Perl's undef), which reads nothing */
	int open_end = np == 0;
	np += open_end;
	if (pairs[0] < 1)
		pairs[0] = 1;
	for (size_t k = 0; k < np; k += 2) {
		double low = pairs[k], high = open_end ? 0 : pairs[k + 1];
		int printed = 0;	/* Perl's $src_line: the last line read, if true */
		while (s->dot < low - 1 && read_line(s))
			;
		if (low != 1)
			fprintf(out, "-- line %.15g ----------------------------------------\n", low);
		while (s->dot < high) {
			printed = read_line(s) && !(s->len == 1 && s->line[0] == '0');
			if (!printed)
				break;
			if (next < f->n_lines && s->dot == (double)f->lines[next].line) {
				cga_print_cost(a, f->lines[next].cost, s->widths);
				add_to(s->printed, f->lines[next].cost, a->p->n_events);
				next++;
			} else {
				cga_print_cost(a, NULL, s->widths);
			}
			fputc(' ', out);
			fwrite(s->line, 1, (size_t)s->len, out);
			print_line_calls(s, (uint64_t)s->dot);
		}
		if (!printed)
			break;
		fprintf(out, "-- line %.15g ----------------------------------------\n", high);
	}
	free(pairs);
	if (next < f->n_lines) {
		for (size_t i = next; i < f->n_lines; i++) {
			cga_print_cost(a, f->lines[i].cost, s->widths);
			fprintf(out, " <bogus line %llu>\n", (unsigned long long)f->lines[i].line);
		}
		fputc('\n', out);
		warn_past_end(a, name, newer);
	}
	fputc('\n', out);
	if (f->n_lines > 0 && f->lines[0].line == 0) {
		cga_print_cost(a, f->lines[0].cost, s->widths);
		fprintf(out, " <counts for unidentified lines in %s>\n\n", name);
	}
	return 0;
}

static const struct cgt_callgrind_file *file_named(const struct cgt_callgrind_profile *p,
						   const char *name)
{
	for (size_t i = 0; i < p->n_files; i++)
		if (strcmp(p->files[i].name, name) == 0)
			return &p->files[i];
	return NULL;
}

/* One file: 1 if annotated, 0 if not found (its name kept in unfound). */
static int annotate_file(struct source *s, const char *name, int user)
{
	struct cga *a = s->a;
	const struct cgt_callgrind_annotate_options *o = a->o;
	char *path = NULL;
	const char *dir = "";
	s->in = fopen(name, "r");
	for (unsigned i = 0; s->in == NULL && i < o->n_include_dirs; i++) {
		free(path);
		dir = o->include_dirs[i];
		if ((path = malloc(strlen(dir) + strlen(name) + 1)) == NULL)
			return cgt_fail(a->e, cgt_err_nomem, "out of memory");
		strcpy(stpcpy(path, dir), name);
		s->in = fopen(path, "r");
	}
	if (s->in == NULL) {
		free(path);
		if (!user)
			return 0;
		char dirs[2048] = "";
		for (unsigned i = 0; i < o->n_include_dirs; i++)
			snprintf(dirs + strlen(dirs), sizeof(dirs) - strlen(dirs), " %s", o->include_dirs[i]);
		return cgt_fail(a->e, cgt_err_io, "File %s not opened in any of: %s", name, dirs);
	}
	fprintf(a->out, "%s-- %s-annotated source: ", fancy, user ? "User" : "Auto");
	if (*dir)
		fprintf(a->out, "%s + %s\n%s", dir, name, fancy);
	else
		fprintf(a->out, "%s\n%s", name, fancy);
	s->file = file_named(a->p, name);
	s->dot = 0;
	int rc = 1;
	if (s->file == NULL) {
		fprintf(a->out, "  No information has been collected for %s\n\n", name);
		rc = 2;
	} else {
		struct stat src, input;
		int newer = stat(path ? path : name, &src) == 0 && stat(o->input, &input) == 0 &&
			    src.st_mtime > input.st_mtime;
		if (newer)
			warn_newer(a, name);
		const struct cgt_cost **costs = calloc(s->file->n_lines + 1, sizeof(*costs));
		if (costs == NULL)
			rc = cgt_fail(a->e, cgt_err_nomem, "out of memory");
		for (size_t i = 0; costs != NULL && i < s->file->n_lines; i++)
			costs[i] = s->file->lines[i].cost;
		if (costs != NULL) {
			cga_widths(a, costs, s->file->n_lines, s->widths);
			free(costs);
			cga_print_events(a, s->widths);
			fputs("\n\n", a->out);
			rc = print_ranges(s, name, newer);
			rc = rc < 0 ? rc : 1;
		}
	}
	fclose(s->in);
	free(path);
	return rc;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

int cga_annotate_sources(struct cga *a)
{
	const struct cgt_callgrind_annotate_options *o = a->o;
	size_t n_auto = o->auto_annotate ? a->n_threshold_files : 0, n = 0, n_unfound = 0;
	const char **files = calloc(o->n_user_files + n_auto + 1, sizeof(char *));
	const char **unfound = calloc(n_auto + 1, sizeof(char *));
	struct source s = { .a = a, .printed = cga_cost(a) };
	int rc = 0, did = 0;
	if (files == NULL || unfound == NULL || s.printed == NULL) {
		rc = cgt_fail(a->e, cgt_err_nomem, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < o->n_user_files; i++)
		files[n++] = o->user_files[i];
	for (size_t i = 0; i < n_auto; i++)
		files[n++] = a->threshold_files[i];
	qsort(files, n, sizeof(char *), by_name);
	for (size_t i = 0; i < n && rc >= 0; i++) {
		if (i > 0 && strcmp(files[i], files[i - 1]) == 0)
			continue;
		int user = 0;
		for (unsigned j = 0; j < o->n_user_files; j++)
			user |= strcmp(o->user_files[j], files[i]) == 0;
		rc = annotate_file(&s, files[i], user);
		if (rc == 0)
			unfound[n_unfound++] = files[i];
		did |= rc == 1;
	}
	if (rc < 0)
		goto out;
	rc = 0;
	if (n_unfound) {
		fprintf(a->out, "%sThe following files chosen for auto-annotation could not be found:\n%s",
			fancy, fancy);
		for (size_t i = 0; i < n_unfound; i++)
			fprintf(a->out, "  %s\n", unfound[i]);
		fputc('\n', a->out);
	}
	if (did) {
		for (unsigned i = 0; i < a->p->n_events; i++) {
			int summary_given = a->summary->given >> i & 1;
			if (!summary_given || a->summary->count[i] == 0 ||
			    s.printed->count[i] > a->summary->count[i]) {
				a->summary->count[i] = s.printed->count[i];
				a->summary->given = (a->summary->given & ~(1ull << i)) |
						    (s.printed->given & 1ull << i);
			}
		}
		const struct cgt_cost *printed = s.printed;
		cga_widths(a, &printed, 1, s.widths);
		fputs(fancy, a->out);
		cga_print_events(a, s.widths);
		fprintf(a->out, "\n%s", fancy);
		cga_print_cost(a, s.printed, s.widths);
		fputs(" events annotated\n\n", a->out);
	}
out:
	free(files);
	free(unfound);
	free(s.printed);
	free(s.line);
	return rc;
}
