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

void cgt_print_summary(FILE *f, long pid, const uint64_t totals[CGT_N_EVENTS], int cache_sim,
		       int branch_sim)
{
	char pfx[32];
	uint64_t t[CGT_N_EVENTS];

	memcpy(t, totals, sizeof(t));
	snprintf(pfx, sizeof(pfx), "==%ld== ", pid);
	int l1 = count_width(t[CGT_Ir]);
	int l2 = count_width(max_u64(t[CGT_Dr], t[CGT_Bc]));
	int l3 = count_width(max_u64(t[CGT_Dw], t[CGT_Bi]));
	const int widths[3] = { l1, l2, l3 };

	fprintf(f, "%sI   refs:      ", pfx);
	print_count(f, t[CGT_Ir], l1);
	fputc('\n', f);
	if (cache_sim) {
		fprintf(f, "%sI1  misses:    ", pfx);
		print_count(f, t[CGT_I1mr], l1);
		fprintf(f, "\n%sLLi misses:    ", pfx);
		print_count(f, t[CGT_ILmr], l1);
		uint64_t ir = t[CGT_Ir] ? t[CGT_Ir] : 1;
		fprintf(f, "\n%sI1  miss rate: ", pfx);
		print_fixed(f, ratio(t[CGT_I1mr], ir), l1, 2);
		fprintf(f, "%%\n%sLLi miss rate: ", pfx);
		print_fixed(f, ratio(t[CGT_ILmr], ir), l1, 2);
		fprintf(f, "%%\n%s\n", pfx);

		uint64_t d = t[CGT_Dr] + t[CGT_Dw], d1 = t[CGT_D1mr] + t[CGT_D1mw],
			 dl = t[CGT_DLmr] + t[CGT_DLmw];
		print_split(f, pfx, "D   refs:     ", d, t[CGT_Dr], t[CGT_Dw], widths);
		print_split(f, pfx, "D1  misses:   ", d1, t[CGT_D1mr], t[CGT_D1mw], widths);
		print_split(f, pfx, "LLd misses:   ", dl, t[CGT_DLmr], t[CGT_DLmw], widths);
		uint64_t dd = d ? d : 1, dr = t[CGT_Dr] ? t[CGT_Dr] : 1, dw = t[CGT_Dw] ? t[CGT_Dw] : 1;
		const struct {
			const char *label;
			double all, rd, wr;
		} rates[] = {
			{ "D1  miss rate: ", ratio(d1, dd), ratio(t[CGT_D1mr], dr), ratio(t[CGT_D1mw], dw) },
			{ "LLd miss rate: ", ratio(dl, dd), ratio(t[CGT_DLmr], dr), ratio(t[CGT_DLmw], dw) },
		};
		for (int i = 0; i < 2; i++) {
			fprintf(f, "%s%s", pfx, rates[i].label);
			print_fixed(f, rates[i].all, l1, 1);
			fputs("% (", f);
			print_fixed(f, rates[i].rd, l2, 1);
			fputs("%     + ", f);
			print_fixed(f, rates[i].wr, l3, 1);
			fputs("%  )\n", f);
		}
		fprintf(f, "%s\n", pfx);

		uint64_t ll = t[CGT_D1mr] + t[CGT_D1mw] + t[CGT_I1mr], ll_r = t[CGT_D1mr] + t[CGT_I1mr];
		uint64_t llm = t[CGT_DLmr] + t[CGT_DLmw] + t[CGT_ILmr], llm_r = t[CGT_DLmr] + t[CGT_ILmr];
		print_split(f, pfx, "LL refs:      ", ll, ll_r, t[CGT_D1mw], widths);
		print_split(f, pfx, "LL misses:    ", llm, llm_r, t[CGT_DLmw], widths);
		/* Cachegrind had already replaced zero totals by 1 here. */
		fprintf(f, "%sLL miss rate:  ", pfx);
		print_fixed(f, ratio(llm, ir + dd), l1, 1);
		fputs("% (", f);
		print_fixed(f, ratio(llm_r, ir + dr), l2, 1);
		fputs("%     + ", f);
		print_fixed(f, ratio(t[CGT_DLmw], dw), l3, 1);
		fputs("%  )\n", f);
	}
	if (branch_sim) {
		uint64_t bc = t[CGT_Bc] ? t[CGT_Bc] : 1, bi = t[CGT_Bi] ? t[CGT_Bi] : 1;
		uint64_t b = bc + bi, bm = t[CGT_Bcm] + t[CGT_Bim];
		fprintf(f, "%s\n%sBranches:      ", pfx, pfx);
		print_count(f, b, l1);
		fputs("  (", f);
		print_count(f, bc, l2);
		fputs(" cond + ", f);
		print_count(f, bi, l3);
		fprintf(f, " ind)\n%sMispredicts:   ", pfx);
		print_count(f, bm, l1);
		fputs("  (", f);
		print_count(f, t[CGT_Bcm], l2);
		fputs(" cond + ", f);
		print_count(f, t[CGT_Bim], l3);
		fprintf(f, " ind)\n%sMispred rate:  ", pfx);
		print_fixed(f, ratio(bm, b), l1, 1);
		fputs("% (", f);
		print_fixed(f, ratio(t[CGT_Bcm], bc), l2, 1);
		fputs("%     + ", f);
		print_fixed(f, ratio(t[CGT_Bim], bi), l3, 1);
		fputs("%   )\n", f);
	}
}
