/* Cache configuration syntax, checks and defaults: Cachegrind's rules and
   messages (the messages were taken from real Cachegrind 3.19 runs). */
#include <string.h>

#include "check.h"
#include "sim.h"

static int parses(const char *text, int expected_result, const char *expected_message)
{
	struct cgt_cache_config c;
	int rc = cgt_cache_parse(text, &c);
	if (rc != expected_result)
		return 0;
	if (expected_message == NULL)
		return 1;
	const char *msg = cgt_cache_check(&c);
	return msg != NULL && strcmp(msg, expected_message) == 0;
}

static void syntax_and_checks(void)
{
	CHECK(parses("65536,2,64", CGT_CACHE_OK, NULL));
	CHECK(parses(" 65536,2,64", CGT_CACHE_OK, NULL));
	CHECK(parses("49152,12,64", CGT_CACHE_OK, NULL));
	CHECK(parses("65536,3,64", CGT_CACHE_INVALID, "Cache set count is not a power of two."));
	CHECK(parses("65536,8,63", CGT_CACHE_INVALID, "Cache set count is not a power of two."));
	CHECK(parses("65536,8,8", CGT_CACHE_INVALID, "Cache line size is too small."));
	CHECK(parses("64,1,64", CGT_CACHE_INVALID, "Cache size <= line size."));
	CHECK(parses("4096,128,64", CGT_CACHE_INVALID, "Cache set count is not a power of two."));
	CHECK(parses("12582912,16,64", CGT_CACHE_INVALID, "Cache set count is not a power of two."));
	CHECK(parses("32768,0,64", CGT_CACHE_INVALID, "Cache associativity is zero."));
	CHECK(parses("32768,8,0", CGT_CACHE_INVALID, "Cache line size is zero."));
	CHECK(parses("99999999999,8,64", CGT_CACHE_OVERFLOW, NULL));
	CHECK(parses("65536,8,64,", CGT_CACHE_BAD_ARGUMENT, NULL));
	CHECK(parses("65536,8", CGT_CACHE_BAD_ARGUMENT, NULL));
	CHECK(parses("x,8,64", CGT_CACHE_BAD_ARGUMENT, NULL));
	/* what an accepted one holds */
	struct cgt_cache_config c = { 0, 0, 0 };
	CHECK_EQ(cgt_cache_parse(" 65536,2,64", &c), CGT_CACHE_OK);
	CHECK(c.size == 65536 && c.assoc == 2 && c.line == 64);
	CHECK_EQ(cgt_cache_parse("49152,12,64", &c), CGT_CACHE_OK);
	CHECK(c.size == 49152 && c.assoc == 12 && c.line == 64);
	CHECK(cgt_cache_check(&c) == NULL);
}

static void suffixes_are_an_extension(void)
{
	struct cgt_cache_config c;
	CHECK_EQ(cgt_cache_parse("32k,8,64", &c), CGT_CACHE_OK);
	CHECK_EQ(c.size, 32768);
	CHECK_EQ(cgt_cache_parse("8M,16,64", &c), CGT_CACHE_OK);
	CHECK_EQ(c.size, 8 << 20);
}

static void descriptions(void)
{
	char buf[128];
	struct cgt_cache_config a = { 32768, 8, 64 }, b = { 1024, 1, 64 };
	cgt_cache_describe(&a, buf, sizeof(buf));
	CHECK(strcmp(buf, "32768 B, 64 B, 8-way associative") == 0);
	cgt_cache_describe(&b, buf, sizeof(buf));
	CHECK(strcmp(buf, "1024 B, 64 B, direct-mapped") == 0);
}

static struct cgt_trace_header host(uint64_t ll_size, uint32_t ll_assoc)
{
	struct cgt_trace_header h = { 0 };
	h.n_caches = 4;
	h.caches[0] = (struct cgt_cache_geom){ 1, CGT_CACHE_DATA, 49152, 12, 64 };
	h.caches[1] = (struct cgt_cache_geom){ 1, CGT_CACHE_INSN, 32768, 8, 64 };
	h.caches[2] = (struct cgt_cache_geom){ 2, CGT_CACHE_UNIFIED, 1 << 20, 16, 64 };
	h.caches[3] = (struct cgt_cache_geom){ 3, CGT_CACHE_UNIFIED, ll_size, ll_assoc, 64 };
	return h;
}

static void defaults_and_ll_adjustment(void)
{
	struct cgt_cache_defaults d;
	struct cgt_trace_header h = host(32 << 20, 16);
	cgt_cache_defaults(&h, 0, &d);
	CHECK_EQ(d.D1.size, 49152);
	CHECK_EQ(d.D1.assoc, 12);
	CHECK_EQ(d.I1.size, 32768);
	CHECK_EQ(d.LL.size, 32 << 20);
	CHECK_EQ(d.n_warnings, 1);
	CHECK(strcmp(d.warnings[0], "warning: L3 cache found, using its data for the LL simulation.") == 0);

	/* Cachegrind's examples: 12 MiB 16-way has 12288 sets -> 8192, 24-way */
	h = host(12 << 20, 16);
	cgt_cache_defaults(&h, 0, &d);
	CHECK_EQ(d.LL.size, 12 << 20);
	CHECK_EQ(d.LL.assoc, 24);
	CHECK_EQ(d.n_warnings, 3);
	CHECK(strcmp(d.warnings[1], "warning: specified LL cache: line_size 64  assoc 16  total_size 12,582,912") == 0);
	CHECK(strcmp(d.warnings[2], "warning: simulated LL cache: line_size 64  assoc 24  total_size 12,582,912") == 0);
	/* 30 MiB 20-way -> 30-way */
	h = host(30 << 20, 20);
	cgt_cache_defaults(&h, 0, &d);
	CHECK_EQ(d.LL.assoc, 30);
	/* Measured on this VM: 320 MiB direct-mapped -> 268,435,456 B, 1-way */
	h = host(320ull << 20, 1);
	cgt_cache_defaults(&h, 0, &d);
	CHECK_EQ(d.LL.assoc, 1);
	CHECK_EQ(d.LL.size, 268435456);
	/* A given LL is neither adjusted nor warned about. */
	h = host(12 << 20, 16);
	cgt_cache_defaults(&h, 1, &d);
	CHECK_EQ(d.n_warnings, 0);
}

static struct cgt_trace_header host_with_l2(uint64_t l2_size, uint32_t l2_assoc)
{
	struct cgt_trace_header h = host(32 << 20, 16);
	h.caches[2] = (struct cgt_cache_geom){ 2, CGT_CACHE_UNIFIED, l2_size, l2_assoc, 64 };
	return h;
}

static void l2_defaults(void)
{
	struct cgt_cache_defaults d;
	struct cgt_trace_header h = host_with_l2(1 << 20, 16);
	cgt_cache_defaults(&h, 0, &d);
	CHECK(d.L2.size == 1 << 20 && d.L2.assoc == 16 && d.L2.line == 64);
	CHECK_EQ(d.n_l2_warnings, 0);
	CHECK_EQ(d.LL.size, 32 << 20);

	/* 1.25 MiB 16-way has 1280 sets -> 1024, 20-way; LL's warnings unchanged */
	h = host_with_l2(1280 << 10, 16);
	cgt_cache_defaults(&h, 0, &d);
	CHECK(d.L2.size == 1280 << 10 && d.L2.assoc == 20);
	CHECK_EQ(d.n_warnings, 1);
	CHECK_EQ(d.n_l2_warnings, 2);
	CHECK(strcmp(d.l2_warnings[0], "warning: specified L2 cache: line_size 64  assoc 16  total_size 1,310,720") == 0);
	CHECK(strcmp(d.l2_warnings[1], "warning: simulated L2 cache: line_size 64  assoc 20  total_size 1,310,720") == 0);
	/* a given LL leaves L2 to the host's rules */
	cgt_cache_defaults(&h, 1, &d);
	CHECK(d.L2.assoc == 20 && d.n_l2_warnings == 2 && d.n_warnings == 0);

	/* two levels: the host's L2 is its LL */
	h = host(32 << 20, 16);
	h.n_caches = 3;
	cgt_cache_defaults(&h, 0, &d);
	CHECK(d.L2.size == 0 && d.n_l2_warnings == 0 && d.LL.size == 1 << 20);
	/* three levels but no unified level 2 */
	h = host(32 << 20, 16);
	h.caches[2].type = CGT_CACHE_DATA;
	cgt_cache_defaults(&h, 0, &d);
	CHECK(d.L2.size == 0 && d.LL.size == 32 << 20);
}

static void no_caches_known(void)
{
	struct cgt_cache_defaults d;
	struct cgt_trace_header h = { 0 };
	cgt_cache_defaults(&h, 0, &d);
	CHECK_EQ(d.I1.size, 65536);
	CHECK_EQ(d.D1.assoc, 2);
	CHECK_EQ(d.LL.size, 262144);
	CHECK_EQ(d.LL.assoc, 8);
	CHECK_EQ(d.n_warnings, 1);
	CHECK(d.n_warnings >= 1 &&
	      strcmp(d.warnings[d.n_warnings - 1],
		     "Warning: Cannot auto-detect cache config, using defaults.") == 0);
	CHECK(d.L2.size == 0 && d.n_l2_warnings == 0);
}

int main(void)
{
	PLAN(6);
	RUN(syntax_and_checks);
	RUN(suffixes_are_an_extension);
	RUN(descriptions);
	RUN(defaults_and_ll_adjustment);
	RUN(l2_defaults);
	RUN(no_caches_known);
	return CHECK_DONE();
}
