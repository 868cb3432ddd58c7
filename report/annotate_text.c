/*
 * cg_annotate's text: Metadata, Summary, File:function and Function:file
 * summaries, annotated source files, Annotation summary -- byte for byte
 * as the newest cg_annotate prints them (cg_annotate.in).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "annotation.h"

/* ---- Formatting -------------------------------------------------------- */

/* The text of one cell's count and percentages: a count of 64 bits with
   thousands separators, or a percentage below 2^63 * 100, with room. */
#define CELL_TEXT 48

/* f"{n:,d}" */
static void commify(count_t n, char buf[CELL_TEXT])
{
	char tmp[CGT_COUNT_TEXT];
	uint64_t mag = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
	snprintf(buf, CELL_TEXT, "%s%s", n < 0 ? "-" : "", cgt_format_count(mag, tmp));
}

/* n * 100 / s as Python computes it: exact integers, one rounding (exact
   below 2^53, which counts are in practice). */
static double percent(count_t n, count_t s)
{
	const count_t exact = (count_t)1 << 53;
	if (n > -exact / 100 && n < exact / 100 && s > -exact && s < exact)
		return (double)(n * 100) / (double)s;
	return (double)((long double)n * 100 / (long double)s);
}

/* Widths are those of texts from the input (event names), so size_t, and
   cells are printed straight to the output, never through a buffer. */
struct width {
	size_t count, perc1, perc2;
};

struct printer {
	struct annotation *a;
	const char *prefix;
	struct width *widths;	/* per event */
};

/* count_and_percs_strs: outer (two percentages) when cumul is given. */
static void cell_strings(const struct annotation *a, const count_t *cc, const count_t *cumul,
			 unsigned i, char count[CELL_TEXT], char perc1[CELL_TEXT], char perc2[CELL_TEXT])
{
	commify(cc[i], count);
	perc1[0] = perc2[0] = '\0';
	if (!a->o->show_percs)
		return;
	count_t s = a->summary[i];
	if (cumul == NULL) {
		if (cc[i] == 0)
			;
		else if (s == 0)
			snprintf(perc1, CELL_TEXT, " (n/a)");
		else
			snprintf(perc1, CELL_TEXT, " (%.1f%%)", percent(cc[i], s));
	} else if (s == 0) {
		snprintf(perc1, CELL_TEXT, " (n/a,");
		snprintf(perc2, CELL_TEXT, " n/a)");
	} else {
		snprintf(perc1, CELL_TEXT, " (%.1f%%,", percent(cc[i], s));
		snprintf(perc2, CELL_TEXT, " %.1f%%)", percent(cumul[i], s));
	}
}

static void update_extremes(const count_t *cc, count_t *min, count_t *max, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (cc[i] > max[i])
			max[i] = cc[i];
		else if (cc[i] < min[i])
			min[i] = cc[i];
	}
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

static void put_chars(FILE *out, int c, size_t n)
{
	char run[64];
	memset(run, c, sizeof(run));
	for (size_t k; n > 0; n -= k) {
		k = n < sizeof(run) ? n : sizeof(run);
		fwrite(run, 1, k, out);
	}
}

/* text right-justified in width */
static void put_right(FILE *out, const char *text, size_t width)
{
	size_t n = strlen(text);
	put_chars(out, ' ', width > n ? width - n : 0);
	fputs(text, out);
}

/* A cell: spaces up to the event name's width, then count + perc1 + perc2
   right-justified in theirs, a space. */
static void put_cell(const struct printer *p, unsigned i, const char *count, const char *perc1,
		     const char *perc2)
{
	const struct width *w = &p->widths[i];
	FILE *out = p->a->out;
	size_t name = strlen(p->a->events[i]), used = w->count + w->perc1 + w->perc2;
	put_chars(out, ' ', name > used ? name - used : 0);
	put_right(out, count, w->count);
	put_right(out, perc1, w->perc1);
	put_right(out, perc2, w->perc2);
	fputc(' ', out);
}

static int init_widths(struct printer *p, const count_t *min1, const count_t *max1,
		       const count_t *min2, const count_t *max2)
{
	struct annotation *a = p->a;
	char c[2][CELL_TEXT], q1[2][CELL_TEXT], q2[2][CELL_TEXT];

	p->widths = annotation_alloc(a, (a->n_events + 1) * sizeof(struct width));
	if (p->widths == NULL)
		return annotation_oom(a);
	for (unsigned i = 0; i < a->n_events; i++) {
		cell_strings(a, min1, min2, i, c[0], q1[0], q2[0]);
		cell_strings(a, max1, max2, i, c[1], q1[1], q2[1]);
		p->widths[i].count = max_size(strlen(c[0]), strlen(c[1]));
		p->widths[i].perc1 = max_size(strlen(q1[0]), strlen(q1[1]));
		p->widths[i].perc2 = max_size(strlen(q2[0]), strlen(q2[1]));
	}
	return 0;
}

/* A printer for plain CCs (init_ccs). */
static int init_plain(struct printer *p, struct annotation *a, count_t *const *ccs, size_t n)
{
	count_t *min = annotation_cc(a), *max = annotation_cc(a);
	p->a = a;
	p->prefix = "";
	if (min == NULL || max == NULL)
		return annotation_oom(a);
	for (size_t k = 0; k < n; k++)
		update_extremes(ccs[k], min, max, a->n_events);
	return init_widths(p, min, max, NULL, NULL);
}

static void print_events(const struct printer *p, const char *suffix)
{
	const struct annotation *a = p->a;
	fputs(p->prefix, a->out);
	for (unsigned s = 0; s < a->n_show; s++) {
		unsigned i = a->show[s];
		const struct width *w = &p->widths[i];
		size_t name = strlen(a->events[i]), used = w->count + w->perc1 + w->perc2;
		fputs(a->events[i], a->out);
		put_chars(a->out, '_', used > name ? used - name : 0);
		fputc(' ', a->out);
	}
	fprintf(a->out, "%s\n", suffix);
}

/* Counts shaded by their share of the total, when colour is on. */
static const char *shade(const struct annotation *a, count_t n, unsigned i)
{
	if (!a->o->color || a->summary[i] == 0 || n == 0)
		return NULL;
	double share = fabs((double)n / (double)a->summary[i]);
	return share >= 0.10 ? "\033[1;31m" : share >= 0.01 ? "\033[33m" : NULL;
}

/* print_cc: the cells, then " " and the suffix. */
static void print_cc(const struct printer *p, const count_t *cc, const count_t *cumul,
		     const char *suffix)
{
	const struct annotation *a = p->a;
	char count[CELL_TEXT], perc1[CELL_TEXT], perc2[CELL_TEXT];
	for (unsigned s = 0; s < a->n_show; s++) {
		unsigned i = a->show[s];
		cell_strings(a, cc, cumul, i, count, perc1, perc2);
		const char *colour = shade(a, cc[i], i);
		if (colour != NULL)
			fputs(colour, a->out);
		put_cell(p, i, count, perc1, perc2);
		if (colour != NULL)
			fputs("\033[0m", a->out);
	}
	fprintf(a->out, " %s\n", suffix);
}

/* The cells of a line without counts: "." in each. */
static void print_missing_cc(const struct printer *p, const char *suffix)
{
	for (unsigned s = 0; s < p->a->n_show; s++)
		put_cell(p, p->a->show[s], ".", "", "");
	fprintf(p->a->out, " %s\n", suffix);
}

/* A title between two lines of dashes: prefix and name, both as long as
   they are. */
static void print_fancy(FILE *out, const char *prefix, const char *name)
{
	static const char dashes[] =
		"--------------------------------------------------------------------------------";
	fprintf(out, "%s\n-- %s%s\n%s\n", dashes, prefix, name, dashes);
}

/* Python's str() of a float: the shortest text that reads back the same,
   with ".0" for whole numbers and an exponent outside 1e-4..1e16. */
static void python_float(double v, char *buf, size_t n)
{
	char tmp[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	/* tmp is d.ddde[+-]XX: shortest digits and the exponent */
	char digits[32];
	int nd = 0, exp;
	const char *p = tmp;
	int neg = *p == '-';
	if (neg)
		p++;
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	digits[nd] = '\0';
	exp = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = '\0';
	if (exp < -4 || exp >= 16) {
		snprintf(buf, n, "%s%c%s%se%c%02d", neg ? "-" : "", digits[0], nd > 1 ? "." : "",
			 digits + 1, exp < 0 ? '-' : '+', abs(exp));
	} else if (exp < 0) {
		snprintf(buf, n, "%s0.%0*d%s", neg ? "-" : "", -exp - 1, 0, digits);
		if (-exp - 1 == 0)
			snprintf(buf, n, "%s0.%s", neg ? "-" : "", digits);
	} else if (nd <= exp + 1) {
		snprintf(buf, n, "%s%s%0*d.0", neg ? "-" : "", digits, exp + 1 - nd, 0);
		if (exp + 1 - nd == 0)
			snprintf(buf, n, "%s%s.0", neg ? "-" : "", digits);
	} else {
		snprintf(buf, n, "%s%.*s.%s", neg ? "-" : "", exp + 1, digits, digits + exp + 1);
	}
}

/* ---- Sections ---------------------------------------------------------- */

static void print_metadata(struct annotation *a)
{
	const struct cgt_annotate_options *o = a->o;
	FILE *out = a->out;
	int same = 1;

	print_fancy(out, "Metadata", "");
	fprintf(out, "Invocation:       %s\n", o->invocation);
	for (unsigned f = 1; f < a->n_files; f++)
		same &= a->descs[f] == a->descs[0];
	if (same)
		fputs(a->descs[0], out);
	else
		for (unsigned f = 0; f < a->n_files; f++)
			fprintf(out, "Description %u:\n%s", f + 1, a->descs[f]);
	if (a->n_files == 1)
		fprintf(out, "Command:          %s\n", a->cmds[0]);
	else
		for (unsigned f = 0; f < a->n_files; f++) {
			if (f > 0 && a->cmds[f] == a->cmds[f - 1])
				fprintf(out, "Command %u:        (same as Command %u)\n", f + 1, f);
			else
				fprintf(out, "Command %u:        %s\n", f + 1, a->cmds[f]);
		}
	fputs("Events recorded: ", out);
	for (unsigned i = 0; i < a->n_events; i++)
		fprintf(out, " %s", a->events[i]);
	fputs("\nEvents shown:    ", out);
	for (unsigned s = 0; s < a->n_show; s++)
		fprintf(out, " %s", a->events[a->show[s]]);
	fputs("\nEvent sort order:", out);
	for (unsigned s = 0; s < a->n_sort; s++)
		fprintf(out, " %s", a->events[a->sort[s]]);
	char threshold[64];
	python_float(o->threshold, threshold, sizeof(threshold));
	fprintf(out, "\nThreshold:        %s%%\nAnnotation:       %s\n\n", threshold,
		o->annotate ? "on" : "off");
}

static int print_summary(struct annotation *a)
{
	struct printer p;
	if (init_plain(&p, a, &a->summary, 1) < 0)
		return -1;
	print_fancy(a->out, "Summary", "");
	print_events(&p, "");
	fputc('\n', a->out);
	print_cc(&p, a->summary, NULL, "PROGRAM TOTALS");
	fputc('\n', a->out);
	return 0;
}

/* print_mname_summary.  The ranking is returned (for File:function: the
   files to annotate). */
static int print_mname_summary(struct annotation *a, const char *kind, const char *indent,
			       const struct cgt_map *dccs, struct named_cc **ranked, size_t *n_ranked)
{
	struct named_cc *list;
	size_t n;

	if (annotation_rank(a, dccs, &list, &n) < 0)
		return -1;
	*ranked = list;
	*n_ranked = n;

	/* Widths: counts and first percentages over outer and shown inner CCs,
	   second percentages over the running totals. */
	struct printer p = { a, "  ", NULL };
	count_t *min = annotation_cc(a), *max = annotation_cc(a), *min_cumul = annotation_cc(a),
		*max_cumul = annotation_cc(a), *cumul = annotation_cc(a);
	if (min == NULL || max == NULL || min_cumul == NULL || max_cumul == NULL || cumul == NULL)
		return annotation_oom(a);
	for (size_t k = 0; k < n; k++) {
		update_extremes(list[k].cc, min, max, a->n_events);
		for (size_t j = 0; j < list[k].n_inner; j++)
			update_extremes(list[k].inner[j].cc, min, max, a->n_events);
		cc_add(cumul, list[k].cc, a->n_events);
		update_extremes(cumul, min_cumul, max_cumul, a->n_events);
	}
	if (init_widths(&p, min, max, min_cumul, max_cumul) < 0)
		return -1;

	/* kind is ours: "File:function" or "Function:file" */
	char suffix[32];
	snprintf(suffix, sizeof(suffix), " %s", kind);
	for (char *c = suffix; *c; c++)
		*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
	print_fancy(a->out, kind, " summary");
	print_events(&p, suffix);
	fputc('\n', a->out);

	memset(cumul, 0, a->n_events * sizeof(count_t));
	for (size_t k = 0; k < n; k++) {
		const struct named_cc *e = &list[k];
		cc_add(cumul, e->cc, a->n_events);
		fputs(indent, a->out);
		char *label = malloc(strlen(e->name) + 2 + strlen(e->inner[0].name) + 1);
		if (label == NULL)
			return annotation_oom(a);
		if (e->n_inner == 1 && memcmp(e->cc, e->inner[0].cc, a->n_events * sizeof(count_t)) == 0) {
			sprintf(label, "%s:%s", e->name, e->inner[0].name);
			print_cc(&p, e->cc, cumul, label);
		} else {
			sprintf(label, "%s:", e->name);
			print_cc(&p, e->cc, cumul, label);
			for (size_t j = 0; j < e->n_inner; j++) {
				char *inner = malloc(strlen(e->inner[j].name) + 3);
				if (inner == NULL) {
					free(label);
					return annotation_oom(a);
				}
				sprintf(inner, "  %s", e->inner[j].name);
				fputs("  ", a->out);
				print_cc(&p, e->inner[j].cc, NULL, inner);
				free(inner);
			}
		}
		free(label);
		fputc('\n', a->out);
	}
	return 0;
}

/* ---- Annotated source files ------------------------------------------- */

static const char *const annotated_labels[N_ANNOTATED] = {
	"  annotated: files known & above threshold & readable, line numbers known",
	"  annotated: files known & above threshold & readable, line numbers unknown",
	"unannotated: files known & above threshold & two or more non-identical",
	"unannotated: files known & above threshold & unreadable ",
	"unannotated: files known & below threshold",
	"unannotated: files unknown",
};

/* Line numbers and --context are any 64-bit values; Python's integers do
   not overflow, and beyond 2^63 - 1 no source file has lines to print, so
   saturating is exact. */
static int64_t saturating_add(int64_t x, int64_t y)
{
	int64_t sum;
	if (__builtin_add_overflow(x, y, &sum))
		return y > 0 ? INT64_MAX : INT64_MIN;
	return sum;
}

static int64_t saturating_neg(int64_t x)
{
	return x == INT64_MIN ? INT64_MAX : -x;
}

static int compare_lines(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* A source file read line by line in universal-newlines mode. */
struct source {
	FILE *f;
	char *line;
	size_t cap;
};

/* The next line less its last character (its line end, or a real last
   character on an unterminated last line): src_line[:-1].  NULL at EOF. */
static const char *source_line(struct source *s)
{
	size_t n = 0;
	int c, ended = 0;
	while ((c = getc(s->f)) != EOF) {
		if (c == '\r') {
			int d = getc(s->f);
			if (d != '\n' && d != EOF)
				ungetc(d, s->f);
			ended = 1;
			break;
		}
		if (c == '\n') {
			ended = 1;
			break;
		}
		if (n + 2 > s->cap && cgt_array_grow(&s->line, &s->cap, n, 2, 1) < 0)
			return NULL;
		s->line[n++] = (char)c;
	}
	if (n == 0 && !ended)
		return NULL;
	if (!ended)
		n--;
	if (s->line == NULL) {
		s->line = malloc(1);
		s->cap = 1;
		if (s->line == NULL)
			return NULL;
	}
	s->line[n] = '\0';
	return s->line;
}

/* A warning's frame: its text, however long (it names files), is printed
   between the two. */
static const char warning_ats[] =
	"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";

static void warning_begin(FILE *out)
{
	fprintf(out, "%s\n@@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@\n"
		     "%s\n", warning_ats, warning_ats);
}

static void warning_end(FILE *out)
{
	fprintf(out, "%s\n", warning_ats);
}

static int print_annotated_file(struct annotation *a, struct cgt_map *lines, FILE *src,
				const char *src_name, count_t **sums)
{
	struct printer p;
	count_t **ccs = annotation_alloc(a, (lines->n + 1) * sizeof(count_t *));
	int64_t *line_nums = annotation_alloc(a, (lines->n + 1) * sizeof(int64_t));
	size_t n_ccs = 0, n = 0;

	if (ccs == NULL || line_nums == NULL)
		return annotation_oom(a);
	for (size_t s = 0; s < lines->cap; s++)
		if (lines->slots[s].value != NULL) {
			ccs[n_ccs++] = lines->slots[s].value;
			if ((int64_t)lines->slots[s].key != 0)
				line_nums[n++] = (int64_t)lines->slots[s].key;
		}
	if (init_plain(&p, a, ccs, n_ccs) < 0)
		return -1;
	print_events(&p, "");
	fputc('\n', a->out);

	const count_t *line0 = cgt_map_get(lines, 0);
	if (line0 != NULL && a->n_events > 0) {
		print_cc(&p, line0, NULL, "<unknown (line 0)>");
		cc_add(sums[UNKNOWN], line0, a->n_events);
		fputc('\n', a->out);
	}

	/* Ranges: every counted line with its context, merged. */
	qsort(line_nums, n, sizeof(*line_nums), compare_lines);
	int64_t context = a->o->context;
	int64_t(*ranges)[2] = annotation_alloc(a, (n + 1) * sizeof(*ranges));
	size_t n_ranges = 0;
	if (ranges == NULL)
		return annotation_oom(a);
	for (size_t i = 0; i < n; i++) {
		int64_t lo = saturating_add(line_nums[i], saturating_neg(context));
		if (lo < 1)
			lo = 1;
		while (i + 1 < n &&
		       saturating_add(saturating_add(line_nums[i], context), context) >= line_nums[i + 1])
			i++;
		ranges[n_ranges][0] = lo;
		ranges[n_ranges++][1] = saturating_add(line_nums[i], context);
	}

	struct source s = { src, NULL, 0 };
	size_t next = 0;	/* first counted line not yet printed */
	int64_t line_num = 0;
	int eof = 0;
	for (size_t r = 0; r < n_ranges && !eof; r++) {
		int64_t lo = ranges[r][0], hi = ranges[r][1];
		while (line_num < lo - 1 && !eof) {
			eof = source_line(&s) == NULL;
			line_num++;
		}
		if (eof)
			break;
		if (lo != 1)
			fprintf(a->out, "-- line %lld ----------------------------------------\n",
				(long long)lo);
		while (line_num < hi) {
			const char *text = source_line(&s);
			line_num++;
			if (text == NULL) {
				eof = 1;
				break;
			}
			if (next < n && line_num == line_nums[next]) {
				const count_t *cc = cgt_map_get(lines, (uint64_t)line_num);
				print_cc(&p, cc, NULL, text);
				cc_add(sums[KNOWN], cc, a->n_events);
				next++;
			} else {
				print_missing_cc(&p, text);
			}
		}
		if (!eof)
			fprintf(a->out, "-- line %lld ----------------------------------------\n",
				(long long)hi);
	}
	free(s.line);
	if (n_ranges > 0) {
		if (next < n) {
			fputc('\n', a->out);
			for (; next < n; next++) {
				char label[48];
				const count_t *cc = cgt_map_get(lines, (uint64_t)line_nums[next]);
				snprintf(label, sizeof(label), "<bogus line %lld>", (long long)line_nums[next]);
				print_cc(&p, cc, NULL, label);
				cc_add(sums[KNOWN], cc, a->n_events);
			}
			fputc('\n', a->out);
			warning_begin(a->out);
			fprintf(a->out, "@@ Information recorded about lines past the end of '%s'.\n",
				src_name);
			warning_end(a->out);
		}
		fputc('\n', a->out);
	}
	return 0;
}

static void print_unannotated(struct annotation *a, const char *mfl, const char *why,
			      const char **ofls, unsigned n)
{
	print_fancy(a->out, "Annotated source file: ", mfl);
	fprintf(a->out, "Unannotated because %s:", why);
	for (unsigned k = 0; k < n; k++)
		fprintf(a->out, "\n- %s", ofls[k]);
	fputs("\n\n", a->out);
}

static int annotate_files(struct annotation *a, const struct named_cc *ranked, size_t n_ranked,
			  count_t **sums)
{
	const char **mfls;
	size_t n;
	int rc = annotation_files(a, ranked, n_ranked, &mfls, &n);

	for (size_t k = 0; k < n && rc == 0; k++) {
		const char *mfl = mfls[k];
		struct cgt_map *lines = cgt_map_get(&a->mfl_lines, (uint64_t)(uintptr_t)mfl);
		struct name_list *ofls;
		FILE *src;
		int64_t min_mtime;
		switch (annotation_source(a, mfl, &ofls, &src, &min_mtime)) {
		case SOURCE_UNREADABLE:
			cc_add_lines(a, lines, sums[UNREADABLE]);
			print_unannotated(a, mfl, "one or more of these original files are unreadable",
					  ofls->names, ofls->n);
			break;
		case SOURCE_NON_IDENTICAL:
			cc_add_lines(a, lines, sums[NON_IDENTICAL]);
			print_unannotated(a, mfl, "two or more of these original files are not identical",
					  ofls->names, ofls->n);
			break;
		case SOURCE_READABLE: {
			print_fancy(a->out, "Annotated source file: ", mfl);
			for (unsigned f = 0; f < a->n_files && rc == 0; f++) {
				struct stat st;
				if (stat(a->o->files[f], &st) < 0 ||
				    min_mtime <= (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)
					continue;
				warning_begin(a->out);
				fprintf(a->out, "@ Original source files are all newer than data file '%s':\n",
					a->o->files[f]);
				for (unsigned i = 0; i < ofls->n; i++)
					fprintf(a->out, "@ - %s\n", ofls->names[i]);
				fputs("@ Annotations may not be correct.\n", a->out);
				warning_end(a->out);
				fputc('\n', a->out);
			}
			if (rc == 0)
				rc = print_annotated_file(a, lines, src, ofls->names[0], sums);
			fclose(src);
			break;
		}
		}
	}
	return rc < 0 ? rc : annotation_sum_unannotated(a, mfls, n, sums);
}

static int print_annotation_summary(struct annotation *a, count_t **sums)
{
	struct printer p;
	if (init_plain(&p, a, sums, N_ANNOTATED) < 0)
		return -1;
	print_fancy(a->out, "Annotation summary", "");
	print_events(&p, "");
	fputc('\n', a->out);
	count_t *total = annotation_cc(a);
	if (total == NULL)
		return annotation_oom(a);
	for (int k = 0; k < N_ANNOTATED; k++) {
		print_cc(&p, sums[k], NULL, annotated_labels[k]);
		cc_add(total, sums[k], a->n_events);
	}
	fputc('\n', a->out);
	if (a->n_events > 0 && memcmp(total, a->summary, a->n_events * sizeof(count_t)) != 0) {
		char x[3000], y[3000];
		cgt_format_int_list(a->summary, a->n_events, x, sizeof(x));
		cgt_format_int_list(total, a->n_events, y, sizeof(y));
		return cgt_fail(&a->error, cgt_err_invalid,
				"`summary:` line doesn't match computed annotated counts\n"
				"- summary:   %s\n- annotated: %s", x, y);
	}
	return 0;
}

int annotation_print_text(struct annotation *a)
{
	struct named_cc *files, *functions;
	size_t n_files, n_functions;
	int rc;

	print_metadata(a);
	rc = print_summary(a);
	if (rc == 0)
		rc = print_mname_summary(a, "File:function", "< ", &a->mfl_dcc, &files, &n_files);
	if (rc == 0)
		rc = print_mname_summary(a, "Function:file", "> ", &a->mfn_dcc, &functions, &n_functions);
	if (rc == 0 && a->o->annotate) {
		count_t *sums[N_ANNOTATED];
		for (int k = 0; k < N_ANNOTATED && rc == 0; k++)
			if ((sums[k] = annotation_cc(a)) == NULL)
				rc = annotation_oom(a);
		if (rc == 0)
			rc = annotate_files(a, files, n_files, sums);
		if (rc == 0)
			rc = print_annotation_summary(a, sums);
	}
	return rc;
}
