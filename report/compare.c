/*
 * cgtrace report --compare: one event of several cachegrind.out files side
 * by side, to see which code gains from a bigger cache.  See report.h.
 *
 * Names follow cg_annotate's read_cgout_file (annotation.c, whose reading
 * merges the files, so it cannot keep them apart): counts after an fl=
 * line and before any fn= line belong to the function "<unspecified>";
 * counts before any fl= line belong to the file "" and, as in cg_annotate,
 * to no line, and before any fn= line also to no function.
 */
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "report.h"
#include "symbols.h"

/* One (file, function), with its counts and its lines' counts, each an
   array of one count per input file. */
struct fn_entry {
	const char *file, *fn;
	int64_t *counts;
	struct cgt_map lines;	/* line number -> int64_t[n_files] */
};

/* A row of a ranking: a function, or one of its lines (is_line). */
struct row {
	const struct fn_entry *fn;
	int64_t line;
	int is_line;
	const int64_t *counts;
	int64_t max;	/* the largest of counts: the ranking's key */
};

struct comparison {
	const struct cgt_compare_options *o;
	struct cgt_error *e;
	struct string_set names;
	const char **events;	/* the first file's, interned */
	unsigned n_events;
	int64_t *summaries;	/* [n_files][n_events]: the summary: lines */
	unsigned event;		/* the one compared */
	struct cgt_map fns;	/* interned "file\nfn" -> struct fn_entry */
	size_t n_line_entries;
};

static int oom(struct comparison *c)
{
	return cgt_fail(c->e, cgt_err_nomem, "out of memory");
}

/* ---- Reading ------------------------------------------------------------ */

/* The events line as the file has it, for messages. */
static void join_events(const char *const *events, unsigned n, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (unsigned k = 0; k < n && len < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? " " : "", events[k]);
}

static int check_events(struct comparison *c, unsigned file_index, const struct cgt_cgout_reader *r)
{
	const char *const *events = cgt_cgout_events(r);
	unsigned n = cgt_cgout_n_events(r);

	if (c->events == NULL) {
		c->n_events = n;
		c->events = calloc(n + 1, sizeof(*c->events));
		c->summaries = calloc((size_t)c->o->n_files * n + 1, sizeof(*c->summaries));
		if (c->events == NULL || c->summaries == NULL)
			return oom(c);
		for (unsigned k = 0; k < n; k++)
			if ((c->events[k] = string_set_intern(&c->names, events[k])) == NULL)
				return oom(c);
		return 0;
	}
	int same = n == c->n_events;
	for (unsigned k = 0; same && k < n; k++)
		same = strcmp(events[k], c->events[k]) == 0;
	if (same)
		return 0;
	char theirs[256], first[256];
	join_events(events, n, theirs, sizeof(theirs));
	join_events(c->events, c->n_events, first, sizeof(first));
	return cgt_fail(c->e, cgt_err_invalid,
			"%s: its events (%s) are not those of %s (%s): files compared must count the "
			"same events, as from simulations with the same --cache-sim and --branch-sim",
			c->o->files[file_index], theirs, c->o->files[0], first);
}

static int64_t *new_counts(struct comparison *c)
{
	return calloc(c->o->n_files, sizeof(int64_t));
}

static struct fn_entry *fn_entry(struct comparison *c, const char *file, const char *fn)
{
	size_t lf = strlen(file), ln = strlen(fn);
	char *key_text = malloc(lf + ln + 2);
	if (key_text == NULL)
		return NULL;
	/* No name holds a newline: the reader splits lines there. */
	memcpy(key_text, file, lf);
	key_text[lf] = '\n';
	memcpy(key_text + lf + 1, fn, ln + 1);
	const char *key = string_set_intern(&c->names, key_text);
	free(key_text);
	if (key == NULL)
		return NULL;
	struct fn_entry *f = cgt_map_get(&c->fns, (uint64_t)(uintptr_t)key);
	if (f != NULL)
		return f;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->file = file;
	f->fn = fn;
	if ((f->counts = new_counts(c)) == NULL ||
	    cgt_map_put(&c->fns, (uint64_t)(uintptr_t)key, f) < 0) {
		free(f->counts);
		free(f);
		return NULL;
	}
	return f;
}

static int64_t *line_counts(struct comparison *c, struct fn_entry *f, int64_t line)
{
	int64_t *counts = cgt_map_get(&f->lines, (uint64_t)line);
	if (counts != NULL)
		return counts;
	if ((counts = new_counts(c)) == NULL || cgt_map_put(&f->lines, (uint64_t)line, counts) < 0) {
		free(counts);
		return NULL;
	}
	c->n_line_entries++;
	return counts;
}

static int find_event(struct comparison *c, const char *name, unsigned *event)
{
	for (unsigned k = 0; k < c->n_events; k++)
		if (strcmp(c->events[k], name) == 0) {
			*event = k;
			return 0;
		}
	char list[256];
	join_events(c->events, c->n_events, list, sizeof(list));
	return cgt_fail(c->e, cgt_err_invalid, "--show: no event `%s` in %s: its events are %s", name,
			c->o->files[0], list);
}

/* Reads file_index's summary: lines and, when counting, its counts of the
   event per function and line.  The first file read names the events,
   and --show's among them. */
static int read_file(struct comparison *c, unsigned file_index, int counting)
{
	struct cgt_cgout_reader *r;
	struct cgt_cgout_item item;
	const char *file = NULL, *fn = NULL;
	struct fn_entry *entry = NULL;
	int64_t *summary;
	int rc;

	if (cgt_cgout_open(&r, c->o->files[file_index], c->e) < 0)
		return -1;
	rc = check_events(c, file_index, r);
	if (rc == 0 && file_index == 0 && c->o->event != NULL)
		rc = find_event(c, c->o->event, &c->event);
	summary = c->summaries + (size_t)file_index * c->n_events;
	while (rc == 0 && (rc = cgt_cgout_next(r, &item, c->e)) > 0) {
		rc = 0;
		switch (item.kind) {
		case CGT_CGOUT_FL:
		case CGT_CGOUT_FN:
			if (!counting)
				break;
			if (item.kind == CGT_CGOUT_FL) {
				file = string_set_intern(&c->names, item.name);
				fn = string_set_intern(&c->names, "<unspecified>");
			} else {
				fn = string_set_intern(&c->names, item.name);
			}
			entry = NULL;
			if (fn == NULL || (file == NULL && item.kind == CGT_CGOUT_FL))
				rc = oom(c);
			break;
		case CGT_CGOUT_COUNTS:
			if (!counting || fn == NULL)
				break;
			if (entry == NULL && (entry = fn_entry(c, file ? file : "", fn)) == NULL) {
				rc = oom(c);
				break;
			}
			entry->counts[file_index] += item.counts[c->event];
			if (file != NULL) {
				int64_t *line = line_counts(c, entry, item.line);
				if (line == NULL)
					rc = oom(c);
				else
					line[file_index] += item.counts[c->event];
			}
			break;
		case CGT_CGOUT_SUMMARY:
			/* Each summary: line is the sum of the counts before it
			   (the reader checks), so several of them can add up past
			   64 bits: wrapping, not undefined. */
			for (unsigned k = 0; k < c->n_events; k++)
				summary[k] = (int64_t)((uint64_t)summary[k] + (uint64_t)item.counts[k]);
			break;
		}
	}
	cgt_cgout_close(r);
	return rc < 0 ? -1 : 0;
}

/* ---- The event ---------------------------------------------------------- */

/* A cache miss ("D1mr", "LLmw") or a mispredict ("Bcm", "Bim"). */
static int is_miss_event(const char *name)
{
	size_t n = strlen(name);
	return (n >= 1 && name[n - 1] == 'm') ||
	       (n >= 2 && name[n - 2] == 'm' && (name[n - 1] == 'r' || name[n - 1] == 'w'));
}

/* The default: the miss event a sweep changed the most (relative to its
   largest total: a D1 sweep changes D1mr a lot and, through what reaches
   LL, LL's misses a little), else the first one counted at all.  Needs
   every file's summary. */
static unsigned default_event(const struct comparison *c)
{
	unsigned n_files = c->o->n_files, best = c->n_events, counted = c->n_events;
	long double best_spread = 0;
	for (unsigned k = 0; k < c->n_events; k++) {
		if (!is_miss_event(c->events[k]))
			continue;
		int64_t lo = c->summaries[k], hi = lo;
		for (unsigned f = 1; f < n_files; f++) {
			int64_t v = c->summaries[(size_t)f * c->n_events + k];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		if ((hi != 0 || lo != 0) && counted == c->n_events)
			counted = k;
		long double spread = hi > 0 ? ((long double)hi - (long double)lo) / (long double)hi : 0;
		if (spread > best_spread) {
			best_spread = spread;
			best = k;
		}
	}
	return best < c->n_events ? best : counted < c->n_events ? counted : 0;
}

/* ---- Ranking ------------------------------------------------------------ */

static int64_t max_of(const int64_t *counts, unsigned n)
{
	int64_t m = counts[0];
	for (unsigned i = 1; i < n; i++)
		if (counts[i] > m)
			m = counts[i];
	return m;
}

static int all_zero(const int64_t *counts, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (counts[i] != 0)
			return 0;
	return 1;
}

/* Descending by the largest count, then ascending by file, line, function. */
static int compare_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->max != b->max)
		return a->max < b->max ? 1 : -1;
	int d = strcmp(a->fn->file, b->fn->file);
	if (d != 0)
		return d;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return strcmp(a->fn->fn, b->fn->fn);
}

/* The rows of functions (lines = 0) or lines with a count not zero in some
   file, ranked; *n_all says how many, *n_shown how many of them to show. */
static struct row *rank(struct comparison *c, int lines, size_t *n_all, size_t *n_shown)
{
	unsigned n_files = c->o->n_files;
	struct row *rows = calloc((lines ? c->n_line_entries : c->fns.n) + 1, sizeof(*rows));
	size_t n = 0;

	if (rows == NULL)
		return NULL;
	for (size_t s = 0; s < c->fns.cap; s++) {
		const struct fn_entry *f = c->fns.slots[s].value;
		if (f == NULL)
			continue;
		if (!lines) {
			if (!all_zero(f->counts, n_files))
				rows[n++] = (struct row){ f, 0, 0, f->counts, max_of(f->counts, n_files) };
			continue;
		}
		for (size_t t = 0; t < f->lines.cap; t++) {
			const int64_t *counts = f->lines.slots[t].value;
			if (counts != NULL && !all_zero(counts, n_files))
				rows[n++] = (struct row){ f, (int64_t)f->lines.slots[t].key, 1, counts,
							  max_of(counts, n_files) };
		}
	}
	qsort(rows, n, sizeof(*rows), compare_rows);
	*n_all = n;
	*n_shown = n < c->o->top ? n : c->o->top;
	return rows;
}

/* ---- Short names -------------------------------------------------------- */

static int is_separator(char ch)
{
	return ch == '.' || ch == '/';
}

/* The column headers: each file name without the parts all of them share
   at its start and its end, cut at a '.' or a '/' (a sweep's names differ
   in one field of "cachegrind.out.PID.D1-S-A-L.LL-S-A-L"), never empty. */
static void short_names(const char *const *names, unsigned n, size_t *start, size_t *len)
{
	size_t prefix = strlen(names[0]), shortest = prefix;
	for (unsigned i = 1; i < n; i++) {
		size_t k = 0;
		while (k < prefix && names[i][k] == names[0][k])
			k++;
		prefix = k;
		if (strlen(names[i]) < shortest)
			shortest = strlen(names[i]);
	}
	while (prefix > 0 && (prefix >= shortest || !is_separator(names[0][prefix - 1])))
		prefix--;

	size_t suffix = shortest - prefix;
	for (unsigned i = 1; i < n; i++) {
		size_t li = strlen(names[i]), l0 = strlen(names[0]), k = 0;
		while (k < suffix && names[i][li - 1 - k] == names[0][l0 - 1 - k])
			k++;
		suffix = k;
	}
	/* The suffix begins at a separator, and leaves a character. */
	size_t l0 = strlen(names[0]);
	while (suffix > 0 && (prefix + suffix >= shortest || !is_separator(names[0][l0 - suffix])))
		suffix--;
	for (unsigned i = 0; i < n; i++) {
		start[i] = prefix;
		len[i] = strlen(names[i]) - prefix - suffix;
	}
}

/* ---- Text --------------------------------------------------------------- */

/* Room for a count with separators, its sign, and a percentage of 64-bit
   counts with one decimal. */
#define CELL_TEXT 96

static void count_text(int64_t v, char buf[CELL_TEXT])
{
	char digits[CGT_COUNT_TEXT];
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	snprintf(buf, CELL_TEXT, "%s%s", v < 0 ? "-" : "", cgt_format_count(mag, digits));
}

/* The last count minus the first, with the percentage of the first
   (none when the first is zero).  In unsigned arithmetic: the difference
   of two 64-bit counts can need 65 bits. */
static void change_text(const int64_t *counts, unsigned n, char buf[CELL_TEXT])
{
	int64_t first = counts[0], last = counts[n - 1];
	int up = last >= first;
	uint64_t mag = up ? (uint64_t)last - (uint64_t)first : (uint64_t)first - (uint64_t)last;
	char digits[CGT_COUNT_TEXT];
	const char *sign = mag == 0 ? "" : up ? "+" : "-";
	int len = snprintf(buf, CELL_TEXT, "%s%s", sign, cgt_format_count(mag, digits));
	if (first != 0) {
		long double first_mag = first < 0 ? -(long double)first : (long double)first;
		snprintf(buf + len, CELL_TEXT - (size_t)len, " (%s%.1Lf%%)", sign,
			 (long double)mag * 100 / first_mag);
	}
}

struct layout {
	const char *const *files;
	unsigned n_files;
	const size_t *start, *len;	/* of each column's short name */
	size_t *width;			/* per file, then the change column */
};

static void widen(struct layout *l, const int64_t *counts)
{
	char cell[CELL_TEXT];
	for (unsigned f = 0; f < l->n_files; f++) {
		count_text(counts[f], cell);
		if (strlen(cell) > l->width[f])
			l->width[f] = strlen(cell);
	}
	change_text(counts, l->n_files, cell);
	if (strlen(cell) > l->width[l->n_files])
		l->width[l->n_files] = strlen(cell);
}

static void print_counts(FILE *out, const struct layout *l, const int64_t *counts)
{
	char cell[CELL_TEXT];
	for (unsigned f = 0; f < l->n_files; f++) {
		count_text(counts[f], cell);
		fprintf(out, "%*s  ", (int)l->width[f], cell);
	}
	change_text(counts, l->n_files, cell);
	fprintf(out, "%*s  ", (int)l->width[l->n_files], cell);
}

static void print_header(FILE *out, const struct layout *l, const char *what)
{
	for (unsigned f = 0; f < l->n_files; f++)
		fprintf(out, "%*.*s  ", (int)l->width[f], (int)l->len[f], l->files[f] + l->start[f]);
	fprintf(out, "%*s%s%s\n", (int)l->width[l->n_files], "change", *what ? "  " : "", what);
}

static void print_rows(FILE *out, const struct layout *l, const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		print_counts(out, l, rows[i].counts);
		if (rows[i].is_line)
			fprintf(out, "%s:%lld %s\n", rows[i].fn->file, (long long)rows[i].line, rows[i].fn->fn);
		else
			fprintf(out, "%s:%s\n", rows[i].fn->file, rows[i].fn->fn);
	}
}

static int print_text(FILE *out, const struct comparison *c, const int64_t *totals,
		      const struct row *fns, size_t n_fns, size_t n_all_fns, const struct row *lines,
		      size_t n_lines, size_t n_all_lines, const size_t *start, const size_t *len)
{
	unsigned n_files = c->o->n_files;
	size_t *width = calloc(n_files + 1, sizeof(*width));
	struct layout l = { c->o->files, n_files, start, len, width };

	if (width == NULL)
		return cgt_fail(c->e, cgt_err_nomem, "out of memory");
	for (unsigned f = 0; f < n_files; f++)
		width[f] = len[f];
	width[n_files] = strlen("change");
	widen(&l, totals);
	for (size_t i = 0; i < n_fns; i++)
		widen(&l, fns[i].counts);
	for (size_t i = 0; i < n_lines; i++)
		widen(&l, lines[i].counts);

	fprintf(out, "Event:  %s\n", c->events[c->event]);
	size_t name_width = 0;
	for (unsigned f = 0; f < n_files; f++)
		name_width = len[f] > name_width ? len[f] : name_width;
	for (unsigned f = 0; f < n_files; f++)
		fprintf(out, "%s%-*.*s  %s\n", f ? "        " : "Files:  ", (int)name_width, (int)len[f],
			c->o->files[f] + start[f], c->o->files[f]);
	fprintf(out, "Change: the last file's count minus the first's (percent of the first's)\n");

	fprintf(out, "\n-- Program totals\n");
	print_header(out, &l, "");
	print_counts(out, &l, totals);
	fprintf(out, "PROGRAM TOTALS\n");
	fprintf(out, "\n-- Functions: the %zu of %zu with the most %s in any file\n", n_fns, n_all_fns,
		c->events[c->event]);
	print_header(out, &l, "file:function");
	print_rows(out, &l, fns, n_fns);
	fprintf(out, "\n-- Lines: the %zu of %zu with the most %s in any file\n", n_lines, n_all_lines,
		c->events[c->event]);
	print_header(out, &l, "file:line function");
	print_rows(out, &l, lines, n_lines);
	free(width);
	return 0;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_name(FILE *out, const char *s)
{
	report_json_string(out, s, strlen(s));
}

static void json_counts(FILE *out, const int64_t *counts, unsigned n)
{
	fputc('[', out);
	for (unsigned i = 0; i < n; i++)
		fprintf(out, "%s%lld", i ? ", " : "", (long long)counts[i]);
	fputc(']', out);
}

static void json_rows(FILE *out, const char *key, const struct row *rows, size_t n, unsigned n_files)
{
	fprintf(out, ",\n  \"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s\n    {\"file\": ", i ? "," : "");
		json_name(out, rows[i].fn->file);
		if (rows[i].is_line) {
			fprintf(out, ", \"line\": %lld, \"function\": ", (long long)rows[i].line);
			json_name(out, rows[i].fn->fn);
		} else {
			fputs(", \"name\": ", out);
			json_name(out, rows[i].fn->fn);
		}
		fputs(", \"counts\": ", out);
		json_counts(out, rows[i].counts, n_files);
		fputc('}', out);
	}
	fputs(n ? "\n  ]" : "]", out);
}

static void print_json(FILE *out, const struct comparison *c, const int64_t *totals,
		       const struct row *fns, size_t n_fns, const struct row *lines, size_t n_lines,
		       const size_t *start, const size_t *len)
{
	unsigned n_files = c->o->n_files;
	fputs("{\n  \"format\": \"cgtrace-compare\",\n  \"version\": 1,\n  \"event\": ", out);
	json_name(out, c->events[c->event]);
	fputs(",\n  \"files\": [", out);
	for (unsigned f = 0; f < n_files; f++) {
		fputs(f ? ", " : "", out);
		json_name(out, c->o->files[f]);
	}
	fputs("],\n  \"labels\": [", out);
	for (unsigned f = 0; f < n_files; f++) {
		fputs(f ? ", " : "", out);
		report_json_string(out, c->o->files[f] + start[f], len[f]);
	}
	fputs("],\n  \"totals\": ", out);
	json_counts(out, totals, n_files);
	json_rows(out, "functions", fns, n_fns, n_files);
	json_rows(out, "lines", lines, n_lines, n_files);
	fputs("\n}\n", out);
}

/* ---- Entry point -------------------------------------------------------- */

static void release(struct comparison *c)
{
	for (size_t s = 0; s < c->fns.cap; s++) {
		struct fn_entry *f = c->fns.slots[s].value;
		if (f == NULL)
			continue;
		for (size_t t = 0; t < f->lines.cap; t++)
			free(f->lines.slots[t].value);
		cgt_map_free(&f->lines);
		free(f->counts);
		free(f);
	}
	cgt_map_free(&c->fns);
	free(c->events);
	free(c->summaries);
	string_set_free(&c->names);
}

int cgt_compare(FILE *out, const struct cgt_compare_options *o, struct cgt_error *e)
{
	struct comparison c = { .o = o, .e = e };
	unsigned n_files = o->n_files;
	struct row *fns = NULL, *lines = NULL;
	size_t n_fns = 0, n_all_fns = 0, n_lines = 0, n_all_lines = 0;
	size_t *start = calloc(n_files + 1, sizeof(*start)), *len = calloc(n_files + 1, sizeof(*len));
	int64_t *totals = calloc(n_files + 1, sizeof(*totals));
	int rc = 0;

	if (n_files < 2)
		rc = cgt_fail(e, cgt_err_invalid, "--compare needs two or more files, %u given", n_files);
	else if (start == NULL || len == NULL || totals == NULL)
		rc = oom(&c);
	/* Without an event chosen, a first pass reads the totals it is
	   chosen by (and checks every file before any output). */
	for (unsigned f = 0; f < n_files && rc == 0 && o->event == NULL; f++)
		rc = read_file(&c, f, 0);
	if (rc == 0 && o->event == NULL) {
		c.event = default_event(&c);
		memset(c.summaries, 0, (size_t)n_files * c.n_events * sizeof(*c.summaries));
	}
	for (unsigned f = 0; f < n_files && rc == 0; f++)
		rc = read_file(&c, f, 1);
	if (rc == 0) {
		for (unsigned f = 0; f < n_files; f++)
			totals[f] = c.summaries[(size_t)f * c.n_events + c.event];
		fns = rank(&c, 0, &n_all_fns, &n_fns);
		lines = rank(&c, 1, &n_all_lines, &n_lines);
		if (fns == NULL || lines == NULL)
			rc = oom(&c);
	}
	if (rc == 0) {
		short_names(o->files, n_files, start, len);
		if (o->json)
			print_json(out, &c, totals, fns, n_fns, lines, n_lines, start, len);
		else
			rc = print_text(out, &c, totals, fns, n_fns, n_all_fns, lines, n_lines,
					n_all_lines, start, len);
		rc = cgt_report_written(out, rc, e);
	}
	free(fns);
	free(lines);
	free(start);
	free(len);
	free(totals);
	release(&c);
	return rc < 0 ? rc : 0;
}
