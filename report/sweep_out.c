/*
 * A sweep's outputs: the table on stderr, the CSV or JSON summary, the SVG
 * of miss-ratio curves.  What is a miss of which level comes from the
 * event set's data (an event's level), never from event names, so an L2
 * or any other event set needs nothing here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* ---- The table's meaning ------------------------------------------------ */

struct sweep {
	const struct cgt_sweep_table *t;
	unsigned ir;			/* Ir's index in the event set */
	unsigned n_levels;		/* levels with miss events: they have an mpki */
	enum cgt_level levels[CGT_N_LEVELS];
};

static int sweep_open(struct sweep *s, const struct cgt_sweep_table *t, struct cgt_error *e)
{
	const struct cgt_event_set *es = t->events;
	if (es == NULL || es->n > CGT_MAX_EVENTS || (t->n > 0 && t->rows == NULL))
		return cgt_fail(e, cgt_err_invalid, "sweep table: expected an event set and rows");
	s->t = t;
	int ir = cgt_event_set_find(es, CGT_ACCESS_FETCH, CGT_EVENT_EXECUTED);
	if (ir < 0)
		return cgt_fail(e, cgt_err_invalid, "sweep table: the event set has no Ir event");
	s->ir = (unsigned)ir;
	s->n_levels = 0;
	for (int l = 0; l < CGT_N_LEVELS; l++)
		for (unsigned i = 0; i < es->n; i++)
			if (es->ev[i].level == l) {
				s->levels[s->n_levels++] = (enum cgt_level)l;
				break;
			}
	return 0;
}

static int present(const struct cgt_sweep_row *r, int level)
{
	return r->h.level[level].size > 0;
}

static uint64_t level_misses(const struct sweep *s, const struct cgt_sweep_row *r, int level)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < s->t->events->n; i++)
		if (s->t->events->ev[i].level == level)
			sum += r->totals[i];
	return sum;
}

/* misses * 1000 / ir with `decimals` digits, rounded half up, in exact
   integers so that every output (and a checker) gets the same digits. */
static const char *format_mpki(uint64_t misses, uint64_t ir, int decimals, char buf[48])
{
	unsigned __int128 unit = 1;
	for (int i = 0; i < decimals; i++)
		unit *= 10;
	unsigned __int128 q = 0;
	if (ir > 0)
		q = ((unsigned __int128)misses * 1000 * unit * 2 + ir) / ((unsigned __int128)ir * 2);
	/* printed digit by digit: made-up totals can take it past 2^64 */
	char digits[48];
	int n = 0;
	unsigned __int128 whole = q / unit;
	do {
		digits[n++] = (char)('0' + (int)(whole % 10));
		whole /= 10;
	} while (whole > 0);
	int o = 0;
	while (n > 0)
		buf[o++] = digits[--n];
	if (decimals > 0) {
		buf[o++] = '.';
		unsigned __int128 frac = q % unit;
		for (int i = decimals - 1; i >= 0; i--, frac /= 10)
			buf[o + i] = (char)('0' + (int)(frac % 10));
		o += decimals;
	}
	buf[o] = '\0';
	return buf;
}

static const char *row_mpki(const struct sweep *s, const struct cgt_sweep_row *r, int level,
			    int decimals, char buf[48])
{
	return format_mpki(level_misses(s, r, level), r->totals[s->ir], decimals, buf);
}

static int finish(FILE *f, const char *what, struct cgt_error *e)
{
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		return cgt_fail(e, cgt_err_io, "cannot write the %s: %s", what,
				errno ? strerror(errno) : "write error");
	return 0;
}

/* ---- Table ---------------------------------------------------------------- */

enum { TABLE_MAX_COLUMNS = 1 + CGT_MAX_EVENTS + CGT_N_LEVELS };

/* Column c of row r (the header when r is NULL): the label, the events'
   totals, the levels' mpki. */
static const char *table_cell(const struct sweep *s, const struct cgt_sweep_row *r, unsigned c,
			      char buf[48])
{
	unsigned n_events = s->t->events->n;
	if (c == 0)
		return r ? r->label : "configuration";
	if (c <= n_events)
		return r ? cgt_format_count(r->totals[c - 1], buf) : s->t->events->ev[c - 1].name;
	enum cgt_level l = s->levels[c - 1 - n_events];
	if (r == NULL) {
		snprintf(buf, 48, "%s mpki", cgt_level_names[l]);
		return buf;
	}
	return present(r, l) ? row_mpki(s, r, l, 2, buf) : "-";
}

int cgt_sweep_print(FILE *f, const struct cgt_sweep_table *t, struct cgt_error *e)
{
	struct sweep s;
	int rc = sweep_open(&s, t, e);
	if (rc < 0)
		return rc;
	unsigned n_columns = 1 + t->events->n + s.n_levels;
	size_t width[TABLE_MAX_COLUMNS] = { 0 };
	char buf[48];
	for (unsigned r = 0; r <= t->n; r++)
		for (unsigned c = 0; c < n_columns; c++) {
			size_t len = strlen(table_cell(&s, r ? &t->rows[r - 1] : NULL, c, buf));
			if (len > width[c])
				width[c] = len;
		}
	for (unsigned r = 0; r <= t->n; r++) {
		const struct cgt_sweep_row *row = r ? &t->rows[r - 1] : NULL;
		fprintf(f, "%-*s", (int)width[0], table_cell(&s, row, 0, buf));
		for (unsigned c = 1; c < n_columns; c++)
			fprintf(f, "  %*s", (int)width[c], table_cell(&s, row, c, buf));
		fputc('\n', f);
	}
	return finish(f, "sweep table", e);
}

/* ---- Summary: CSV or JSON ------------------------------------------------- */

static void csv_field(FILE *f, const char *text)
{
	if (strpbrk(text, ",\"\r\n") == NULL) {
		fputs(text, f);
		return;
	}
	fputc('"', f);
	for (const char *p = text; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

static void write_csv(FILE *f, const struct sweep *s)
{
	const struct cgt_event_set *es = s->t->events;
	char buf[48];
	fputs("label", f);
	for (int l = 0; l < CGT_N_LEVELS; l++)
		fprintf(f, ",%s_size,%s_assoc,%s_line", cgt_level_names[l], cgt_level_names[l],
			cgt_level_names[l]);
	for (unsigned i = 0; i < es->n; i++)
		fprintf(f, ",%s", es->ev[i].name);
	for (unsigned i = 0; i < s->n_levels; i++)
		fprintf(f, ",%s_mpki", cgt_level_names[s->levels[i]]);
	fputc('\n', f);
	for (unsigned r = 0; r < s->t->n; r++) {
		const struct cgt_sweep_row *row = &s->t->rows[r];
		csv_field(f, row->label);
		for (int l = 0; l < CGT_N_LEVELS; l++) {
			const struct cgt_cache_config *c = &row->h.level[l];
			if (present(row, l))
				fprintf(f, ",%" PRId32 ",%" PRId32 ",%" PRId32, c->size, c->assoc, c->line);
			else
				fputs(",,,", f);
		}
		for (unsigned i = 0; i < es->n; i++)
			fprintf(f, ",%" PRIu64, row->totals[i]);
		for (unsigned i = 0; i < s->n_levels; i++)
			fprintf(f, ",%s", present(row, s->levels[i]) ? row_mpki(s, row, s->levels[i], 4, buf) : "");
		fputc('\n', f);
	}
}

static void json_string(FILE *f, const char *text)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void write_json(FILE *f, const struct sweep *s)
{
	const struct cgt_event_set *es = s->t->events;
	char buf[48];
	fputs("{\"events\":[", f);
	for (unsigned i = 0; i < es->n; i++) {
		fputs(i ? "," : "", f);
		json_string(f, es->ev[i].name);
	}
	fputs("],\n\"configurations\":[", f);
	for (unsigned r = 0; r < s->t->n; r++) {
		const struct cgt_sweep_row *row = &s->t->rows[r];
		fputs(r ? ",\n{\"label\":" : "\n{\"label\":", f);
		json_string(f, row->label);
		fputs(",\"caches\":{", f);
		for (int l = 0; l < CGT_N_LEVELS; l++) {
			const struct cgt_cache_config *c = &row->h.level[l];
			fprintf(f, "%s\"%s\":", l ? "," : "", cgt_level_names[l]);
			if (present(row, l))
				fprintf(f, "{\"size\":%" PRId32 ",\"assoc\":%" PRId32 ",\"line\":%" PRId32 "}",
					c->size, c->assoc, c->line);
			else
				fputs("null", f);
		}
		fputs("},\"totals\":{", f);
		for (unsigned i = 0; i < es->n; i++) {
			fputs(i ? "," : "", f);
			json_string(f, es->ev[i].name);
			fprintf(f, ":%" PRIu64, row->totals[i]);
		}
		fputs("},\"mpki\":{", f);
		for (unsigned i = 0; i < s->n_levels; i++) {
			enum cgt_level l = s->levels[i];
			fprintf(f, "%s\"%s\":%s", i ? "," : "", cgt_level_names[l],
				present(row, l) ? row_mpki(s, row, l, 4, buf) : "null");
		}
		fputs("}}", f);
	}
	fputs("\n]}\n", f);
}

int cgt_sweep_write_summary(FILE *f, int json, const struct cgt_sweep_table *t,
			    struct cgt_error *e)
{
	struct sweep s;
	int rc = sweep_open(&s, t, e);
	if (rc < 0)
		return rc;
	if (json)
		write_json(f, &s);
	else
		write_csv(f, &s);
	return finish(f, "sweep summary", e);
}

int cgt_sweep_summary_format(const char *path)
{
	size_t len = strlen(path);
	if (len >= 4 && strcmp(path + len - 4, ".csv") == 0)
		return 0;
	if (len >= 5 && strcmp(path + len - 5, ".json") == 0)
		return 1;
	return -1;
}

/* ---- Plot: miss-ratio curves ---------------------------------------------- */

/* Layout, in pixels. */
enum {
	SVG_WIDTH = 860,
	PLOT_LEFT = 80,
	PLOT_WIDTH = 740,
	PLOT_PAD = 20,		/* keeps the smallest and largest sizes off the axes */
	CHART_TITLE = 50,	/* above the plot */
	PLOT_HEIGHT = 320,
	X_AXIS = 60,		/* under the plot: tick labels, the axis title */
	LEGEND_LINE = 18,
	CHART_GAP = 30,
	EMPTY_CHART = 100,
};

/* One level's series: series k is rows order[start[k] .. start[k + 1]),
   sorted by the level's size. */
struct level_series {
	int varies;
	unsigned n_series;
	unsigned *order, *start;
};

/* Both absent, or the same cache. */
static int same_cache(const struct cgt_cache_config *a, const struct cgt_cache_config *b)
{
	if (a->size == 0 || b->size == 0)
		return a->size == b->size;
	return a->size == b->size && a->assoc == b->assoc && a->line == b->line;
}

static int same_series(const struct cgt_sweep_row *a, const struct cgt_sweep_row *b, int level)
{
	for (int l = 0; l < CGT_N_LEVELS; l++) {
		const struct cgt_cache_config *x = &a->h.level[l], *y = &b->h.level[l];
		if (l == level ? x->assoc != y->assoc || x->line != y->line : !same_cache(x, y))
			return 0;
	}
	return 1;
}

static int size_varies(const struct cgt_sweep_table *t, int level)
{
	int32_t seen = 0;
	for (unsigned r = 0; r < t->n; r++) {
		int32_t size = t->rows[r].h.level[level].size;
		if (size > 0 && seen > 0 && size != seen)
			return 1;
		if (size > 0)
			seen = size;
	}
	return 0;
}

static int cache_varies(const struct cgt_sweep_table *t, int level)
{
	for (unsigned r = 1; r < t->n; r++)
		if (!same_cache(&t->rows[r].h.level[level], &t->rows[0].h.level[level]))
			return 1;
	return 0;
}

static int line_varies(const struct cgt_sweep_table *t, int level)
{
	int32_t seen = 0;
	for (unsigned r = 0; r < t->n; r++) {
		const struct cgt_cache_config *c = &t->rows[r].h.level[level];
		if (c->size > 0 && seen > 0 && c->line != seen)
			return 1;
		if (c->size > 0)
			seen = c->line;
	}
	return 0;
}

/* Series in the order their first configuration was given; a repeated
   configuration (the same counts) is plotted once. */
static void find_series(const struct cgt_sweep_table *t, int level, struct level_series *ls,
			char *taken)
{
	unsigned m = 0;
	memset(taken, 0, t->n);
	ls->n_series = 0;
	for (unsigned i = 0; i < t->n; i++) {
		if (taken[i] || !present(&t->rows[i], level))
			continue;
		unsigned first = m;
		ls->start[ls->n_series++] = first;
		for (unsigned j = i; j < t->n; j++) {
			if (taken[j] || !present(&t->rows[j], level) ||
			    !same_series(&t->rows[i], &t->rows[j], level))
				continue;
			taken[j] = 1;
			int32_t size = t->rows[j].h.level[level].size;
			unsigned p = m;
			while (p > first && t->rows[ls->order[p - 1]].h.level[level].size > size)
				p--;
			if (p > first && t->rows[ls->order[p - 1]].h.level[level].size == size)
				continue;
			memmove(&ls->order[p + 1], &ls->order[p], (m - p) * sizeof(ls->order[0]));
			ls->order[p] = j;
			m++;
		}
	}
	ls->start[ls->n_series] = m;
}

/* "4K", "64K", "1M", "32M"; bytes when not a whole number of KiB. */
static const char *size_text(uint64_t v, char buf[32])
{
	static const char units[] = "GMK";
	for (int i = 0; i < 3; i++) {
		uint64_t unit = (uint64_t)1 << (10 * (3 - i));
		if (v % unit == 0) {
			snprintf(buf, 32, "%" PRIu64 "%c", v / unit, units[i]);
			return buf;
		}
	}
	snprintf(buf, 32, "%" PRIu64, v);
	return buf;
}

/* The legend: the level's associativity (and line, when lines vary), then
   each other level that varies in the sweep, e.g. "D1 8-way, LL 8M 16-way". */
static void series_name(const struct cgt_sweep_table *t, int level, const struct cgt_sweep_row *r,
			char *buf, size_t cap)
{
	char size[32];
	const struct cgt_cache_config *c = &r->h.level[level];
	snprintf(buf, cap, "%s %" PRId32 "-way", cgt_level_names[level], c->assoc);
	if (line_varies(t, level))
		snprintf(buf + strlen(buf), cap - strlen(buf), " %" PRId32 "B lines", c->line);
	for (int l = 0; l < CGT_N_LEVELS; l++) {
		if (l == level || !cache_varies(t, l))
			continue;
		c = &r->h.level[l];
		if (!present(r, l)) {
			snprintf(buf + strlen(buf), cap - strlen(buf), ", no %s", cgt_level_names[l]);
			continue;
		}
		snprintf(buf + strlen(buf), cap - strlen(buf), ", %s %s %" PRId32 "-way",
			 cgt_level_names[l], size_text((uint64_t)c->size, size), c->assoc);
		if (line_varies(t, l))
			snprintf(buf + strlen(buf), cap - strlen(buf), " %" PRId32 "B lines", c->line);
	}
}

/* log2(v), v > 0, without libm: the exponent, then the fraction's binary
   digits (squaring a number in [1, 2) doubles its logarithm). */
static double log2_of(uint64_t v)
{
	int exponent = 63 - __builtin_clzll(v);
	double r = (double)v / (double)((uint64_t)1 << exponent), fraction = 0, bit = 0.5;
	for (int i = 0; i < 24; i++, bit /= 2) {
		r *= r;
		if (r >= 2) {
			r /= 2;
			fraction += bit;
		}
	}
	return exponent + fraction;
}

/* Series k's colour: hues a golden angle apart never repeat, so any
   number of series get distinct colours. */
static void series_colour(unsigned k, char buf[8])
{
	double hue = (double)((k * 1375u) % 3600u) / 600.0;	/* sextant of the colour wheel */
	double chroma = 0.75 * 0.85, lightness = 0.42;		/* 75% saturation */
	int sextant = (int)hue;
	double f = hue - sextant, x = chroma * (sextant % 2 ? 1 - f : f), m = lightness - chroma / 2;
	double rgb[6][3] = { { chroma, x, 0 }, { x, chroma, 0 }, { 0, chroma, x },
			     { 0, x, chroma }, { x, 0, chroma }, { chroma, 0, x } };
	snprintf(buf, 8, "#%02x%02x%02x", (unsigned)((rgb[sextant][0] + m) * 255 + 0.5),
		 (unsigned)((rgb[sextant][1] + m) * 255 + 0.5),
		 (unsigned)((rgb[sextant][2] + m) * 255 + 0.5));
}

/* A tick step of 1, 2 or 5 times a power of ten giving about 5 ticks. */
static double tick_step(double max)
{
	double raw = max / 5, mag = 1;
	if (raw <= 0)
		return 0.2;
	while (mag * 10 <= raw)
		mag *= 10;
	while (mag > raw)
		mag /= 10;
	return raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
}

static double mpki_value(const struct sweep *s, const struct cgt_sweep_row *r, int level)
{
	uint64_t ir = r->totals[s->ir];
	return ir ? (double)level_misses(s, r, level) * 1000.0 / (double)ir : 0;
}

static unsigned chart_height(const struct level_series *ls)
{
	return CHART_TITLE + PLOT_HEIGHT + X_AXIS + ls->n_series * LEGEND_LINE + CHART_GAP;
}

/* Where a row is drawn: x linear in log2 of the size from 2^lo, y linear
   in mpki from plot_bottom. */
struct axes {
	int lo;
	double x_scale, y_scale, plot_bottom;
};

static void place(const struct sweep *s, const struct axes *a, int level,
		  const struct cgt_sweep_row *r, double *x, double *y)
{
	*x = PLOT_LEFT + PLOT_PAD + (log2_of((uint64_t)r->h.level[level].size) - a->lo) * a->x_scale;
	*y = a->plot_bottom - mpki_value(s, r, level) * a->y_scale;
}

static void write_chart(FILE *f, const struct sweep *s, int level, const struct level_series *ls,
			unsigned top)
{
	const struct cgt_sweep_row *rows = s->t->rows;
	const char *name = cgt_level_names[level];
	unsigned plot_top = top + CHART_TITLE, plot_bottom = plot_top + PLOT_HEIGHT;
	uint64_t smallest = UINT64_MAX, largest = 0;
	double highest = 0;
	for (unsigned i = 0; i < ls->start[ls->n_series]; i++) {
		const struct cgt_sweep_row *r = &rows[ls->order[i]];
		uint64_t size = (uint64_t)r->h.level[level].size;
		smallest = size < smallest ? size : smallest;
		largest = size > largest ? size : largest;
		highest = mpki_value(s, r, level) > highest ? mpki_value(s, r, level) : highest;
	}
	/* x from the power of two at or below the smallest size to the one at
	   or above the largest: ticks at both ends whatever the sizes */
	int lo = 63 - __builtin_clzll(smallest);
	int hi = 63 - __builtin_clzll(largest) + ((largest & (largest - 1)) != 0);
	double x_scale = (double)(PLOT_WIDTH - 2 * PLOT_PAD) / (hi - lo);
	double step = tick_step(highest);
	unsigned y_ticks = (unsigned)(highest / step);
	if (y_ticks * step < highest || y_ticks == 0)
		y_ticks++;
	double y_scale = PLOT_HEIGHT / (y_ticks * step);
	struct axes axes = { lo, x_scale, y_scale, plot_bottom };
	double x, y;
	char text[48], legend[256], colour[8];

	fprintf(f, "<g class=\"chart\" data-level=\"%s\">\n", name);
	fprintf(f, "<text x=\"%d\" y=\"%u\" text-anchor=\"middle\" font-size=\"16\" "
		"font-weight=\"bold\">%s misses per 1,000 instructions by %s size</text>\n",
		SVG_WIDTH / 2, top + 28, name, name);
	for (unsigned i = 0; i <= y_ticks; i++) {
		y = plot_bottom - i * step * y_scale;
		fprintf(f, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>"
			"<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n", PLOT_LEFT, y,
			PLOT_LEFT + PLOT_WIDTH, y, PLOT_LEFT - 6, y + 4, i * step);
	}
	int every = (hi - lo + 11) / 12;	/* at most 13 labels */
	for (int k = lo; k <= hi; k += every) {
		x = PLOT_LEFT + PLOT_PAD + (k - lo) * x_scale;
		fprintf(f, "<line x1=\"%.2f\" y1=\"%u\" x2=\"%.2f\" y2=\"%u\" stroke=\"#e0e0e0\"/>"
			"<text x=\"%.2f\" y=\"%u\" text-anchor=\"middle\">%s</text>\n", x, plot_top, x,
			plot_bottom + 5, x, plot_bottom + 18, size_text((uint64_t)1 << k, text));
	}
	fprintf(f, "<rect class=\"plot-area\" x=\"%d\" y=\"%u\" width=\"%d\" height=\"%d\" "
		"fill=\"none\" stroke=\"#808080\"/>\n", PLOT_LEFT, plot_top, PLOT_WIDTH, PLOT_HEIGHT);
	fprintf(f, "<text class=\"axis-title\" x=\"%d\" y=\"%u\" text-anchor=\"middle\">"
		"cache size (bytes)</text>\n", PLOT_LEFT + PLOT_WIDTH / 2, plot_bottom + 40);
	fprintf(f, "<text class=\"axis-title\" x=\"20\" y=\"%u\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 20 %u)\">misses per 1,000 instructions</text>\n",
		plot_top + PLOT_HEIGHT / 2, plot_top + PLOT_HEIGHT / 2);

	for (unsigned k = 0; k < ls->n_series; k++) {
		const unsigned *row = &ls->order[ls->start[k]];
		unsigned n = ls->start[k + 1] - ls->start[k];
		series_name(s->t, level, &rows[row[0]], legend, sizeof(legend));
		series_colour(k, colour);
		fprintf(f, "<polyline class=\"series\" data-level=\"%s\" data-series=\"%s\" data-sizes=\"",
			name, legend);
		for (unsigned i = 0; i < n; i++)
			fprintf(f, "%s%" PRId32, i ? " " : "", rows[row[i]].h.level[level].size);
		fputs("\" data-mpki=\"", f);
		for (unsigned i = 0; i < n; i++)
			fprintf(f, "%s%s", i ? " " : "", row_mpki(s, &rows[row[i]], level, 4, text));
		fputs("\" points=\"", f);
		for (unsigned i = 0; i < n; i++) {
			place(s, &axes, level, &rows[row[i]], &x, &y);
			fprintf(f, "%s%.2f,%.2f", i ? " " : "", x, y);
		}
		fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"><title>%s</title></polyline>\n",
			colour, legend);
		/* markers: a series of one size is a point, not a line */
		for (unsigned i = 0; i < n; i++) {
			place(s, &axes, level, &rows[row[i]], &x, &y);
			fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", x, y, colour);
		}
		unsigned y = plot_bottom + X_AXIS + k * LEGEND_LINE;
		fprintf(f, "<line x1=\"%d\" y1=\"%u\" x2=\"%d\" y2=\"%u\" stroke=\"%s\" stroke-width=\"3\"/>"
			"<text x=\"%d\" y=\"%u\">%s</text>\n", PLOT_LEFT, y + 8, PLOT_LEFT + 24, y + 8,
			colour, PLOT_LEFT + 32, y + 12, legend);
	}
	fputs("</g>\n", f);
}

int cgt_sweep_write_plot(FILE *f, const struct cgt_sweep_table *t, struct cgt_error *e)
{
	struct sweep s;
	int rc = sweep_open(&s, t, e);
	if (rc < 0)
		return rc;
	struct level_series ls[CGT_N_LEVELS];
	unsigned *space = malloc(CGT_N_LEVELS * (2 * (size_t)t->n + 1) * sizeof(*space));
	char *taken = malloc(t->n + 1);
	if (space == NULL || taken == NULL) {
		free(space);
		free(taken);
		return cgt_fail(e, cgt_err_nomem, "out of memory for the plot of %u configurations",
				t->n);
	}
	unsigned height = 0;
	for (int l = 0; l < CGT_N_LEVELS; l++) {
		ls[l].order = space + l * (2 * (size_t)t->n + 1);
		ls[l].start = ls[l].order + t->n;
		ls[l].varies = size_varies(t, l);
		if (ls[l].varies) {
			find_series(t, l, &ls[l], taken);
			height += chart_height(&ls[l]);
		}
	}
	int empty = height == 0;
	if (empty)
		height = EMPTY_CHART;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" "
		"viewBox=\"0 0 %d %u\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<title>Miss-ratio curves of a cgtrace sweep</title>\n"
		"<rect width=\"%d\" height=\"%u\" fill=\"white\"/>\n",
		SVG_WIDTH, height, SVG_WIDTH, height, SVG_WIDTH, height);
	if (empty)
		fprintf(f, "<g class=\"chart\"><text x=\"%d\" y=\"50\" text-anchor=\"middle\" "
			"font-size=\"14\">No cache level takes more than one size in this sweep: "
			"no miss-ratio curve to draw.</text></g>\n", SVG_WIDTH / 2);
	unsigned top = 0;
	for (int l = 0; l < CGT_N_LEVELS; l++)
		if (ls[l].varies) {
			write_chart(f, &s, l, &ls[l], top);
			top += chart_height(&ls[l]);
		}
	fputs("</svg>\n", f);
	free(space);
	free(taken);
	return finish(f, "plot", e);
}
