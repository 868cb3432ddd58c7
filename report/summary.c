/*
 * Cachegrind's end-of-run summary (cg_main.c, cg_fini), same layout and
 * same numbers: Valgrind's own printf, including its rounding of %f.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

/* Valgrind's "%,*llu": thousands separators, right-aligned in width. */
static void print_count(FILE *f, uint64_t v, int width)
{
	char buf[CGT_COUNT_TEXT];
	fprintf(f, "%*s", width, cgt_format_count(v, buf));
}

/* "<label> <all>  (<rd> rd   + <wr> wr)", columns of widths l1, l2, l3. */
static void print_split(FILE *f, const char *pfx, const char *label, uint64_t all, uint64_t rd,
			uint64_t wr, const int *widths)
{
	fprintf(f, "%s%s ", pfx, label);
	print_count(f, all, widths[0]);
	fputs("  (", f);
	print_count(f, rd, widths[1]);
	fputs(" rd   + ", f);
	print_count(f, wr, widths[2]);
	fputs(" wr)\n", f);
}

/* Valgrind's "%*.Nf" (m_debuglog.c): the fraction is truncated, then
   rounded up only when what was cut off exceeds one half. */
static void print_fixed(FILE *f, double val, int width, int precision)
{
	char buf[64];
	int negative = val < 0;

	if (negative)
		val = -val;
	uint64_t ip = (uint64_t)val, factor = 1;
	double frac = val - (double)ip;
	for (int i = 0; i < precision; i++)
		factor *= 10;
	uint64_t fr = (uint64_t)(frac * (double)factor);
	if (frac * (double)factor - (double)fr > 0.5)
		fr++;
	if (fr == factor)
		ip++;
	fr %= factor;
	snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%0*" PRIu64, negative ? "-" : "", ip, precision, fr);
	fprintf(f, "%*s", width, buf);
}

/* ULong_width: digits plus commas. */
static int count_width(uint64_t n)
{
	int w = 0;
	while (n > 0) {
		n /= 10;
		w++;
	}
	if (w == 0)
		w = 1;
	return w + (w - 1) / 3;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a >= b ? a : b;
}

static double ratio(uint64_t part, uint64_t whole)
{
	return (double)part * 100.0 / (double)whole;
}

/* A total of the set, by what it counts; 0 where the set has none. */
static uint64_t total_of(const struct cgt_event_set *es, const uint64_t *totals,
			 enum cgt_access access, int level)
{
	int k = cgt_event_set_find(es, access, level);
	return k < 0 ? 0 : totals[k];
}

/* One level's lines of the fetch and data groups: misses, then rates. */
struct level_totals {
	const char *name;	/* "1", "2", "L" */
	uint64_t i, r, w;	/* misses of fetches, reads, writes */
};

void cgt_print_summary(FILE *f, long pid, const struct cgt_event_set *es, const uint64_t *totals)
{
	char pfx[32];
	const int cache_sim = cgt_event_set_find(es, CGT_ACCESS_FETCH, CGT_LEVEL_I1) >= 0;
	const int branch_sim = cgt_event_set_find(es, CGT_ACCESS_COND, CGT_EVENT_EXECUTED) >= 0;
	const int has_L2 = cgt_event_set_find(es, CGT_ACCESS_FETCH, CGT_LEVEL_L2) >= 0;
	const uint64_t Ir = total_of(es, totals, CGT_ACCESS_FETCH, CGT_EVENT_EXECUTED);
	const uint64_t Dr = total_of(es, totals, CGT_ACCESS_READ, CGT_EVENT_EXECUTED);
	const uint64_t Dw = total_of(es, totals, CGT_ACCESS_WRITE, CGT_EVENT_EXECUTED);
	const uint64_t Bc = total_of(es, totals, CGT_ACCESS_COND, CGT_EVENT_EXECUTED);
	const uint64_t Bi = total_of(es, totals, CGT_ACCESS_INDIRECT, CGT_EVENT_EXECUTED);
	const uint64_t Bcm = total_of(es, totals, CGT_ACCESS_COND, CGT_EVENT_MISPREDICT);
	const uint64_t Bim = total_of(es, totals, CGT_ACCESS_INDIRECT, CGT_EVENT_MISPREDICT);
	/* The fetches' and the data's levels, nearest first. */
	static const int fetch_level[3] = { CGT_LEVEL_I1, CGT_LEVEL_L2, CGT_LEVEL_LL };
	static const int data_level[3] = { CGT_LEVEL_D1, CGT_LEVEL_L2, CGT_LEVEL_LL };
	static const char *const level_names[3] = { "1", "2", "L" };
	struct level_totals levels[3];
	unsigned n_levels = 0;
	for (int k = 0; k < 3; k++) {
		if (fetch_level[k] == CGT_LEVEL_L2 && !has_L2)
			continue;
		levels[n_levels++] = (struct level_totals){
			level_names[k], total_of(es, totals, CGT_ACCESS_FETCH, fetch_level[k]),
			total_of(es, totals, CGT_ACCESS_READ, data_level[k]),
			total_of(es, totals, CGT_ACCESS_WRITE, data_level[k])
		};
	}

	snprintf(pfx, sizeof(pfx), "==%ld== ", pid);
	int l1 = count_width(Ir);
	int l2 = count_width(max_u64(Dr, Bc));
	int l3 = count_width(max_u64(Dw, Bi));
	const int widths[3] = { l1, l2, l3 };
	char label[32];

	fprintf(f, "%sI   refs:      ", pfx);
	print_count(f, Ir, l1);
	fputc('\n', f);
	if (cache_sim) {
		uint64_t ir = Ir ? Ir : 1;
		for (unsigned k = 0; k < n_levels; k++) {
			snprintf(label, sizeof(label), k + 1 == n_levels ? "LLi misses:    " : "I%s  misses:    ",
				 levels[k].name);
			fprintf(f, "%s%s", pfx, label);
			print_count(f, levels[k].i, l1);
			fputc('\n', f);
		}
		for (unsigned k = 0; k < n_levels; k++) {
			snprintf(label, sizeof(label), k + 1 == n_levels ? "LLi miss rate: " : "I%s  miss rate: ",
				 levels[k].name);
			fprintf(f, "%s%s", pfx, label);
			print_fixed(f, ratio(levels[k].i, ir), l1, 2);
			fputs("%\n", f);
		}
		fprintf(f, "%s\n", pfx);

		uint64_t d = Dr + Dw;
		print_split(f, pfx, "D   refs:     ", d, Dr, Dw, widths);
		for (unsigned k = 0; k < n_levels; k++) {
			snprintf(label, sizeof(label), k + 1 == n_levels ? "LLd misses:   " : "D%s  misses:   ",
				 levels[k].name);
			print_split(f, pfx, label, levels[k].r + levels[k].w, levels[k].r, levels[k].w, widths);
		}
		uint64_t dd = d ? d : 1, dr = Dr ? Dr : 1, dw = Dw ? Dw : 1;
		for (unsigned k = 0; k < n_levels; k++) {
			snprintf(label, sizeof(label), k + 1 == n_levels ? "LLd miss rate: " : "D%s  miss rate: ",
				 levels[k].name);
			fprintf(f, "%s%s", pfx, label);
			print_fixed(f, ratio(levels[k].r + levels[k].w, dd), l1, 1);
			fputs("% (", f);
			print_fixed(f, ratio(levels[k].r, dr), l2, 1);
			fputs("%     + ", f);
			print_fixed(f, ratio(levels[k].w, dw), l3, 1);
			fputs("%  )\n", f);
		}
		fprintf(f, "%s\n", pfx);

		/* Each level below L1: what reached it (the misses of the level
		   above) and what missed it, as Cachegrind's LL lines. */
		for (unsigned k = 1; k < n_levels; k++) {
			const struct level_totals *above = &levels[k - 1], *at = &levels[k];
			const char *name = k + 1 == n_levels ? "LL" : "L2";
			uint64_t refs = above->i + above->r + above->w, refs_r = above->i + above->r;
			uint64_t miss = at->i + at->r + at->w, miss_r = at->i + at->r;
			snprintf(label, sizeof(label), "%s refs:      ", name);
			print_split(f, pfx, label, refs, refs_r, above->w, widths);
			snprintf(label, sizeof(label), "%s misses:    ", name);
			print_split(f, pfx, label, miss, miss_r, at->w, widths);
			/* Cachegrind had already replaced zero totals by 1 here. */
			fprintf(f, "%s%s miss rate:  ", pfx, name);
			print_fixed(f, ratio(miss, ir + dd), l1, 1);
			fputs("% (", f);
			print_fixed(f, ratio(miss_r, ir + dr), l2, 1);
			fputs("%     + ", f);
			print_fixed(f, ratio(at->w, dw), l3, 1);
			fputs("%  )\n", f);
			if (k + 1 < n_levels)
				fprintf(f, "%s\n", pfx);
		}
	}
	if (branch_sim) {
		uint64_t bc = Bc ? Bc : 1, bi = Bi ? Bi : 1;
		uint64_t b = bc + bi, bm = Bcm + Bim;
		fprintf(f, "%s\n%sBranches:      ", pfx, pfx);
		print_count(f, b, l1);
		fputs("  (", f);
		print_count(f, bc, l2);
		fputs(" cond + ", f);
		print_count(f, bi, l3);
		fprintf(f, " ind)\n%sMispredicts:   ", pfx);
		print_count(f, bm, l1);
		fputs("  (", f);
		print_count(f, Bcm, l2);
		fputs(" cond + ", f);
		print_count(f, Bim, l3);
		fprintf(f, " ind)\n%sMispred rate:  ", pfx);
		print_fixed(f, ratio(bm, b), l1, 1);
		fputs("% (", f);
		print_fixed(f, ratio(Bcm, bc), l2, 1);
		fputs("%     + ", f);
		print_fixed(f, ratio(Bim, bi), l3, 1);
		fputs("%   )\n", f);
	}
}
