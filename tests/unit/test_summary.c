/* The end-of-run summary, against Cachegrind 3.19's own output for
   /bin/true (cache and branch simulation, as quoted in the reference). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report.h"

static const char expected[] =
	"==PID== I   refs:      128,758\n"
	"==PID== I1  misses:      1,091\n"
	"==PID== LLi misses:      1,072\n"
	"==PID== I1  miss rate:    0.85%\n"
	"==PID== LLi miss rate:    0.83%\n"
	"==PID== \n"
	"==PID== D   refs:       39,863  (29,598 rd   + 10,265 wr)\n"
	"==PID== D1  misses:      1,573  ( 1,229 rd   +    344 wr)\n"
	"==PID== LLd misses:      1,329  ( 1,018 rd   +    311 wr)\n"
	"==PID== D1  miss rate:     3.9% (   4.2%     +    3.4%  )\n"
	"==PID== LLd miss rate:     3.3% (   3.4%     +    3.0%  )\n"
	"==PID== \n"
	"==PID== LL refs:         2,664  ( 2,320 rd   +    344 wr)\n"
	"==PID== LL misses:       2,401  ( 2,090 rd   +    311 wr)\n"
	"==PID== LL miss rate:      1.4% (   1.3%     +    3.0%  )\n"
	"==PID== \n"
	"==PID== Branches:       25,913  (25,634 cond +    279 ind)\n"
	"==PID== Mispredicts:     3,335  ( 3,185 cond +    150 ind)\n"
	"==PID== Mispred rate:     12.9% (  12.4%     +   53.8%   )\n";

static char *printed(const uint64_t *t, int cache, int branch)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct cgt_event_set es;
	cgt_event_set_init(&es, cache, cache > 1, branch, 0, 0);
	cgt_print_summary(f, 0, &es, t);
	fclose(f);
	/* "==0== " -> "==PID== " */
	char *out = malloc(len * 2 + 1), *o = out;
	for (char *p = buf; *p;) {
		if (strncmp(p, "==0== ", 6) == 0) {
			o += sprintf(o, "==PID== ");
			p += 6;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	free(buf);
	return out;
}

static void cache_and_branch(void)
{
	const uint64_t t[CGT_MAX_EVENTS] = { 128758, 1091, 1072, 29598, 1229, 1018, 10265,
					   344,	   311,	 25634, 3185, 279,  150 };
	char *out = printed(t, 1, 1);
	CHECK(strcmp(out, expected) == 0);
	if (strcmp(out, expected) != 0)
		printf("%s", out);
	free(out);
}

static void instructions_only(void)
{
	const uint64_t t[CGT_MAX_EVENTS] = { 1234567 };
	char *out = printed(t, 0, 0);
	CHECK(strcmp(out, "==PID== I   refs:      1,234,567\n") == 0);
	free(out);
}

static void zero_branch_totals_show_as_one(void)
{
	/* Cachegrind sets a zero Bc or Bi to 1 before printing. */
	const uint64_t t[CGT_MAX_EVENTS] = { 10 };
	char *out = printed(t, 0, 1);
	CHECK(strstr(out, "Branches:       2  (1 cond + 1 ind)") != NULL);
	free(out);
}

/* With an L2 (cache == 2 above): its own misses and rates between the L1s'
   and LL's, and L2's refs and misses as LL's are shown (the L1 misses
   reach L2, L2's misses reach LL). */
static void with_an_l2(void)
{
	/* Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw */
	const uint64_t t[CGT_MAX_EVENTS] = { 1000, 100, 50, 10, 400, 40, 20, 4, 200, 30, 15, 3 };
	char *out = printed(t, 2, 0);
	static const char *const lines[] = {
		"==PID== I1  misses:      100\n==PID== I2  misses:       50\n==PID== LLi misses:       10\n",
		"==PID== I2  miss rate:  5.00%\n",
		"==PID== D2  misses:       35  ( 20 rd   +  15 wr)\n",
		"==PID== D2  miss rate:   5.8% (5.0%     + 7.5%  )\n",
		"==PID== L2 refs:         170  (140 rd   +  30 wr)\n",
		"==PID== L2 misses:        85  ( 70 rd   +  15 wr)\n",
		"==PID== LL refs:          85  ( 70 rd   +  15 wr)\n",
		"==PID== LL misses:        17  ( 14 rd   +   3 wr)\n",
	};
	for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++)
		if (strstr(out, lines[k]) == NULL) {
			printf("# missing: %s", lines[k]);
			CHECK(0);
		}
	free(out);
}

int main(void)
{
	PLAN(4);
	RUN(cache_and_branch);
	RUN(instructions_only);
	RUN(zero_branch_totals_show_as_one);
	RUN(with_an_l2);
	return CHECK_DONE();
}
