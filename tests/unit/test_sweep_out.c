/* A sweep's outputs (report/sweep_out.c) on hand-made rows whose misses
   per 1,000 instructions were worked out by hand.  With SWEEP_OUT_DIR set,
   the SVG and CSV of the sweeps are left there for tests/tools/check_plot.py. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report.h"

enum { OUT_TABLE, OUT_CSV, OUT_JSON, OUT_PLOT };

static int write_out(FILE *f, int what, const struct cgt_sweep_table *t, struct cgt_error *e)
{
	switch (what) {
	case OUT_TABLE:
		return cgt_sweep_print(f, t, e);
	case OUT_PLOT:
		return cgt_sweep_write_plot(f, t, e);
	default:
		return cgt_sweep_write_summary(f, what == OUT_JSON, t, e);
	}
}

/* What the output is, or NULL when its function failed. */
static char *render(int what, const struct cgt_sweep_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	struct cgt_error e = { 0, "" };
	FILE *f = open_memstream(&buf, &len);
	int rc = write_out(f, what, t, &e);
	fclose(f);
	if (rc < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static unsigned count(const char *text, const char *what)
{
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

static int starts_with(const char *text, const char *prefix)
{
	return strncmp(text, prefix, strlen(prefix)) == 0;
}

static void keep(const char *name, int what, const struct cgt_sweep_table *t)
{
	const char *dir = getenv("SWEEP_OUT_DIR");
	if (dir == NULL)
		return;
	char path[4096];
	struct cgt_error e;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL || write_out(f, what, t, &e) < 0 || fclose(f) != 0)
		printf("  could not write %s\n", path);
}

static struct cgt_hierarchy hierarchy(int32_t d1_size, int32_t d1_assoc, int32_t d1_line,
				      int32_t l2_size, int32_t ll_size)
{
	struct cgt_hierarchy h = { { { 32768, 8, 64 }, { d1_size, d1_assoc, d1_line },
				     { l2_size, l2_size ? 8 : 0, l2_size ? 64 : 0 },
				     { ll_size, 16, 64 } } };
	return h;
}

/* Two rows, no L2 (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw):
   A: I1 1500/1e6 = 1.5, D1 (12345 + 2000)/1e6 = 14.345, LL (700 + 1000 + 5)/1e6 = 1.705
      per 1,000: halves round up, so 14.35 and 1.71 with 2 decimals;
   B: Ir 3: I1 1/3 -> 333.333..., D1 2/3 -> 666.666..., LL 0. */
static struct cgt_event_set plain_events;
static const uint64_t totals_a[] = { 1000000, 1500, 700, 300000, 12345, 1000, 100000, 2000, 5 };
static const uint64_t totals_b[] = { 3, 1, 0, 2, 2, 0, 0, 0, 0 };
static struct cgt_sweep_row two_rows[2];
static const struct cgt_sweep_table two = { &plain_events, two_rows, 2 };

static void set_up_two(void)
{
	cgt_event_set_init(&plain_events, 1, 0, 0, 0, 0);
	two_rows[0] = (struct cgt_sweep_row){ "D1-4096-2-64.LL-1048576-16-64",
					      hierarchy(4096, 2, 64, 0, 1 << 20), totals_a };
	two_rows[1] = (struct cgt_sweep_row){ "D1-8192-2-64.LL-1048576-16-64",
					      hierarchy(8192, 2, 64, 0, 1 << 20), totals_b };
}

static void table(void)
{
	static const char expected[] =
		"configuration                         Ir   I1mr  ILmr       Dr    D1mr   DLmr"
		"       Dw   D1mw  DLmw  I1 mpki  D1 mpki  LL mpki\n"
		"D1-4096-2-64.LL-1048576-16-64  1,000,000  1,500   700  300,000  12,345  1,000"
		"  100,000  2,000     5     1.50    14.35     1.71\n"
		"D1-8192-2-64.LL-1048576-16-64          3      1     0        2       2      0"
		"        0      0     0   333.33   666.67     0.00\n";
	char *out = render(OUT_TABLE, &two);
	CHECK(out != NULL && strcmp(out, expected) == 0);
	if (out && strcmp(out, expected) != 0)
		printf("  got:\n%s", out);
	free(out);
}

static void csv(void)
{
	static const char expected[] =
		"label,I1_size,I1_assoc,I1_line,D1_size,D1_assoc,D1_line,L2_size,L2_assoc,L2_line,"
		"LL_size,LL_assoc,LL_line,Ir,I1mr,ILmr,Dr,D1mr,DLmr,Dw,D1mw,DLmw,I1_mpki,D1_mpki,"
		"LL_mpki\n"
		"D1-4096-2-64.LL-1048576-16-64,32768,8,64,4096,2,64,,,,1048576,16,64,"
		"1000000,1500,700,300000,12345,1000,100000,2000,5,1.5000,14.3450,1.7050\n"
		"D1-8192-2-64.LL-1048576-16-64,32768,8,64,8192,2,64,,,,1048576,16,64,"
		"3,1,0,2,2,0,0,0,0,333.3333,666.6667,0.0000\n";
	char *out = render(OUT_CSV, &two);
	CHECK(out != NULL && strcmp(out, expected) == 0);
	if (out && strcmp(out, expected) != 0)
		printf("  got:\n%s", out);
	free(out);
}

static void json(void)
{
	char *out = render(OUT_JSON, &two);
	CHECK(out != NULL);
	if (out == NULL)
		return;
	CHECK(starts_with(out, "{\"events\":[\"Ir\",\"I1mr\",\"ILmr\",\"Dr\",\"D1mr\",\"DLmr\",\"Dw\","
			      "\"D1mw\",\"DLmw\"],\n\"configurations\":[\n{\"label\":"
			      "\"D1-4096-2-64.LL-1048576-16-64\",\"caches\":{\"I1\":{\"size\":32768,"
			      "\"assoc\":8,\"line\":64},\"D1\":{\"size\":4096,\"assoc\":2,\"line\":64},"
			      "\"L2\":null,\"LL\":{\"size\":1048576,\"assoc\":16,\"line\":64}},"));
	CHECK(strstr(out, "\"totals\":{\"Ir\":1000000,\"I1mr\":1500,\"ILmr\":700,\"Dr\":300000,"
			  "\"D1mr\":12345,\"DLmr\":1000,\"Dw\":100000,\"D1mw\":2000,\"DLmw\":5},"
			  "\"mpki\":{\"I1\":1.5000,\"D1\":14.3450,\"LL\":1.7050}}") != NULL);
	CHECK(strstr(out, "\"mpki\":{\"I1\":333.3333,\"D1\":666.6667,\"LL\":0.0000}}\n]}\n") != NULL);
	free(out);
}

/* Labels are the caller's: quoted as each format needs. */
static void labels_quoted(void)
{
	struct cgt_sweep_row row = { "a,\"b\"", hierarchy(4096, 2, 64, 0, 1 << 20), totals_a };
	struct cgt_sweep_table t = { &plain_events, &row, 1 };
	char *out = render(OUT_CSV, &t);
	CHECK(out != NULL && strstr(out, "\n\"a,\"\"b\"\"\",32768,") != NULL);
	free(out);
	out = render(OUT_JSON, &t);
	CHECK(out != NULL && strstr(out, "{\"label\":\"a,\\\"b\\\"\",") != NULL);
	free(out);
}

static void summary_format(void)
{
	CHECK_EQ(cgt_sweep_summary_format("s.csv"), 0);
	CHECK_EQ(cgt_sweep_summary_format("dir.json/s.json"), 1);
	CHECK_EQ(cgt_sweep_summary_format("s.csv.txt"), (unsigned long long)-1);
	CHECK_EQ(cgt_sweep_summary_format("json"), (unsigned long long)-1);
}

/* D1 4K..32K (given out of order) x 2-way/8-way x LL 1M/8M, Ir 1,000,000:
   D1 misses 40000 * 4K / size (2-way) or 30000 * 4K / size (8-way), plus
   7 writes, so D1 mpki 2-way 40.007, 20.007, 10.007, 5.007 and 8-way 30.007,
   15.007, 7.507, 3.757; LL misses 3000 (1M) or 1234 (8M): 3.0 and 1.234. */
static struct cgt_sweep_row grid_rows[16];
static uint64_t grid_totals[16][9];
static char grid_labels[16][64];
static const struct cgt_sweep_table grid = { &plain_events, grid_rows, 16 };

static void set_up_grid(void)
{
	static const int32_t sizes[] = { 16384, 4096, 32768, 8192 };
	unsigned r = 0;
	for (int ll = 0; ll < 2; ll++)
		for (int assoc = 2; assoc <= 8; assoc += 6)
			for (int s = 0; s < 4; s++, r++) {
				int32_t ll_size = ll ? 8 << 20 : 1 << 20;
				uint64_t *t = grid_totals[r];
				memset(t, 0, sizeof(grid_totals[r]));
				t[0] = 1000000;
				t[4] = (assoc == 2 ? 40000 : 30000) * 4096 / (uint64_t)sizes[s];
				t[7] = 7;
				t[5] = ll ? 1234 : 3000;
				snprintf(grid_labels[r], sizeof(grid_labels[r]), "D1-%d-%d-64.LL-%d-16-64",
					 sizes[s], assoc, ll_size);
				grid_rows[r] = (struct cgt_sweep_row){
					grid_labels[r], hierarchy(sizes[s], assoc, 64, 0, ll_size), t
				};
			}
}

static void plot_series(void)
{
	char *svg = render(OUT_PLOT, &grid);
	CHECK(svg != NULL);
	if (svg == NULL)
		return;
	CHECK(starts_with(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"860\" height=\""));
	CHECK(strstr(svg, "viewBox=\"0 0 860 ") != NULL);
	/* D1: 2 assocs x 2 LL; LL: one series per D1 cache */
	CHECK_EQ(count(svg, "<g class=\"chart\""), 2);
	CHECK_EQ(count(svg, "<polyline"), 12);
	CHECK_EQ(count(svg, "data-level=\"D1\" data-series"), 4);
	CHECK(strstr(svg, "<g class=\"chart\" data-level=\"D1\"") <
	      strstr(svg, "<g class=\"chart\" data-level=\"LL\""));
	CHECK(strstr(svg, "data-series=\"D1 2-way, LL 1M 16-way\" data-sizes=\"4096 8192 16384 32768\" "
			  "data-mpki=\"40.0070 20.0070 10.0070 5.0070\"") != NULL);
	CHECK(strstr(svg, "data-series=\"D1 8-way, LL 8M 16-way\" data-sizes=\"4096 8192 16384 32768\" "
			  "data-mpki=\"30.0070 15.0070 7.5070 3.7570\"") != NULL);
	CHECK(strstr(svg, "data-level=\"LL\" data-series=\"LL 16-way, D1 16K 8-way\" "
			  "data-sizes=\"1048576 8388608\" data-mpki=\"3.0000 1.2340\"") != NULL);
	CHECK(strstr(svg, ">cache size (bytes)</text>") != NULL &&
	      strstr(svg, ">misses per 1,000 instructions</text>") != NULL);
	CHECK(strstr(svg, ">4K</text>") != NULL && strstr(svg, ">32K</text>") != NULL &&
	      strstr(svg, ">1M</text>") != NULL && strstr(svg, ">8M</text>") != NULL);
	keep("plot.svg", OUT_PLOT, &grid);
	keep("summary.csv", OUT_CSV, &grid);
	keep("summary.json", OUT_JSON, &grid);
	free(svg);
}

/* The same configuration twice is one point; a level of one size, no chart. */
static void plot_nothing_varies(void)
{
	struct cgt_sweep_row rows[2] = { two_rows[0], two_rows[0] };
	struct cgt_sweep_table t = { &plain_events, rows, 2 };
	char *svg = render(OUT_PLOT, &t);
	CHECK(svg != NULL && count(svg, "<polyline") == 0 &&
	      strstr(svg, "No cache level takes more than one size") != NULL);
	free(svg);
	rows[1].h.level[CGT_LEVEL_D1].size = 8192;
	struct cgt_sweep_row three[3] = { rows[0], rows[1], rows[0] };
	t = (struct cgt_sweep_table){ &plain_events, three, 3 };
	svg = render(OUT_PLOT, &t);
	CHECK(svg != NULL && count(svg, "<polyline") == 1 &&
	      strstr(svg, "data-sizes=\"4096 8192\" data-mpki=\"14.3450 14.3450\"") != NULL);
	free(svg);
}

/* Ir 0: mpki 0, no division by zero (UBSan) and no NaN in the drawing. */
static void no_instructions(void)
{
	static const uint64_t zero[9];
	struct cgt_sweep_row rows[2] = { two_rows[0], two_rows[1] };
	rows[0].totals = zero;
	struct cgt_sweep_table t = { &plain_events, rows, 2 };
	char *csv = render(OUT_CSV, &t), *svg = render(OUT_PLOT, &t);
	CHECK(csv != NULL && strstr(csv, ",0,0,0,0,0,0,0,0,0,0.0000,0.0000,0.0000\n") != NULL);
	CHECK(svg != NULL && strstr(svg, "data-mpki=\"0.0000 666.6667\"") != NULL &&
	      strstr(svg, "nan") == NULL && strstr(svg, "inf") == NULL);
	free(csv);
	free(svg);
}

/* With L2 (Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw): L2's
   misses are I2mr + D2mr + D2mw, by the events' levels; a row without L2
   has empty fields.  Ir 2,000,000: I1 500 -> 0.25, D1 9000 + 700 -> 4.85,
   LL 50 + 400 + 30 -> 0.24, L2 100 + 2000 + 301 -> 1.2005 (1.20 with 2
   decimals: rounded once, from the exact value), or with 512K
   80 + 1000 + 250 -> 0.665. */
static void with_l2(void)
{
	struct cgt_event_set es;
	cgt_event_set_init(&es, 1, 1, 0, 0, 0);
	static const uint64_t t256[] = { 2000000, 500, 100, 50, 600000, 9000, 2000, 400,
					 200000, 700, 301, 30 };
	static const uint64_t t512[] = { 2000000, 500, 80, 50, 600000, 9000, 1000, 400,
					 200000, 700, 250, 30 };
	struct cgt_sweep_row rows[4] = {
		{ "a", hierarchy(32768, 8, 64, 256 << 10, 8 << 20), t256 },
		{ "b", hierarchy(32768, 8, 64, 512 << 10, 8 << 20), t512 },
		{ "c", hierarchy(32768, 8, 32, 256 << 10, 8 << 20), t256 },
		{ "d", hierarchy(32768, 8, 64, 0, 8 << 20), t512 },
	};
	struct cgt_sweep_table t = { &es, rows, 4 };
	char *csv = render(OUT_CSV, &t), *table = render(OUT_TABLE, &t), *svg = render(OUT_PLOT, &t);
	CHECK(csv != NULL && strstr(csv, ",Ir,I1mr,I2mr,ILmr,Dr,D1mr,D2mr,DLmr,Dw,D1mw,D2mw,DLmw,"
					 "I1_mpki,D1_mpki,L2_mpki,LL_mpki\n") != NULL);
	CHECK(csv != NULL && strstr(csv, "\na,32768,8,64,32768,8,64,262144,8,64,8388608,16,64,") &&
	      strstr(csv, ",0.2500,4.8500,1.2005,0.2400\n") != NULL);
	CHECK(csv != NULL && strstr(csv, "\nd,32768,8,64,32768,8,64,,,,8388608,16,64,") != NULL &&
	      strstr(csv, ",0.2500,4.8500,,0.2400\n") != NULL);
	CHECK(table != NULL && strstr(table, "L2 mpki") != NULL &&
	      strstr(table, "   0.25     4.85     1.20     0.24\n") != NULL &&
	      strstr(table, "   0.25     4.85        -     0.24\n") != NULL);
	/* D1's line varies: the L2 series say which */
	CHECK(svg != NULL && count(svg, "<polyline") == 2 &&
	      strstr(svg, "data-level=\"L2\" data-series=\"L2 8-way, D1 32K 8-way 64B lines\" "
			  "data-sizes=\"262144 524288\" data-mpki=\"1.2005 0.6650\"") != NULL);
	keep("plot-l2.svg", OUT_PLOT, &t);
	keep("summary-l2.csv", OUT_CSV, &t);
	free(csv);
	free(table);
	free(svg);
}

/* 1024 configurations, D1 8 sizes x 8 associativities x LL 16 sizes: a
   series for each D1 associativity and line and LL (8 x 16), and for each
   D1 and LL associativity (64 x 2). */
static void many_configurations(void)
{
	enum { N = 1024 };
	static struct cgt_sweep_row rows[N];
	static uint64_t totals[N][9];
	static char labels[N][64];
	unsigned r = 0;
	for (int ll = 0; ll < 16; ll++)
		for (int a = 0; a < 8; a++)
			for (int s = 0; s < 8; s++, r++) {
				int32_t d1_size = 4096 << s, assoc = 1 << (a % 4), ll_size = (1 << 20) << (ll % 8);
				totals[r][0] = 10000000 + r;
				totals[r][4] = 900000 / (uint64_t)(s + 1) + (uint64_t)a * 1000;
				totals[r][5] = 50000 / (uint64_t)(ll + 1);
				snprintf(labels[r], sizeof(labels[r]), "c%u", r);
				rows[r] = (struct cgt_sweep_row){ labels[r],
					hierarchy(d1_size, assoc, a < 4 ? 64 : 128, 0, ll_size), totals[r] };
				rows[r].h.level[CGT_LEVEL_LL].assoc = ll < 8 ? 16 : 8;
			}
	struct cgt_sweep_table t = { &plain_events, rows, N };
	char *svg = render(OUT_PLOT, &t), *csv = render(OUT_CSV, &t);
	CHECK(svg != NULL && count(svg, "data-level=\"D1\" data-series") == 128 &&
	      count(svg, "data-level=\"LL\" data-series") == 128);
	CHECK(svg != NULL && strstr(svg, "data-series=\"D1 2-way 128B lines, LL 2M 8-way\" data-sizes=\"4096 "
					 "8192 16384 32768 65536 131072 262144 524288\"") != NULL);
	CHECK(csv != NULL && count(csv, "\n") == N + 1);
	keep("plot-many.svg", OUT_PLOT, &t);
	keep("summary-many.csv", OUT_CSV, &t);
	free(svg);
	free(csv);
}

/* A full disk: each output fails with the reason, found at the flush. */
static void write_errors(void)
{
	for (int what = OUT_TABLE; what <= OUT_PLOT; what++) {
		FILE *f = fopen("/dev/full", "w");
		struct cgt_error e = { 0, "" };
		int rc = f ? write_out(f, what, &grid, &e) : 0;
		CHECK(rc < 0 && e.status == cgt_err_io && rc == -cgt_err_io && strstr(e.msg, "No space left on device") != NULL);
		if (f)
			fclose(f);
	}
}

int main(void)
{
	PLAN(11);
	set_up_two();
	set_up_grid();
	RUN(table);
	RUN(csv);
	RUN(json);
	RUN(labels_quoted);
	RUN(summary_format);
	RUN(plot_series);
	RUN(plot_nothing_varies);
	RUN(no_instructions);
	RUN(with_l2);
	RUN(many_configurations);
	RUN(write_errors);
	return CHECK_DONE();
}
