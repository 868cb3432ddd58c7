/* Lists of one level's configurations: Cachegrind's values as they are,
   ranges of powers of two, their messages and the list's limit. */
#include <string.h>

#include "check.h"
#include "sim.h"

static struct cgt_error e;

/* Adds text to l as --D1's value; 1 if the result and e's message are the
   expected ones (NULL: e left alone). */
static int adds(struct cgt_cache_list *l, const char *text, int expected_rc, const char *expected_msg)
{
	struct cgt_cache_config c;
	strcpy(e.msg, "untouched");
	int rc = cgt_cache_list_add(l, "D1", text, &c, &e);
	if (rc != expected_rc || strcmp(e.msg, expected_msg ? expected_msg : "untouched") != 0) {
		printf("  %s: rc %d, message \"%s\"\n", text, rc, e.msg);
		return 0;
	}
	return 1;
}

static int holds(const struct cgt_cache_list *l, unsigned i, int32_t size, int32_t assoc, int32_t line)
{
	return i < l->n && l->v[i].size == size && l->v[i].assoc == assoc && l->v[i].line == line;
}

static void plain_values_are_cachegrinds(void)
{
	struct cgt_cache_list l = { 0 };
	struct cgt_cache_config c = { 0, 0, 0 };
	CHECK(adds(&l, "65536,3,64", CGT_CACHE_INVALID, NULL));
	CHECK_EQ(cgt_cache_list_add(&l, "D1", "65536,3,64", &c, &e), CGT_CACHE_INVALID);
	CHECK(c.size == 65536 && c.assoc == 3 && c.line == 64);
	CHECK(adds(&l, "99999999999,8,64", CGT_CACHE_OVERFLOW, NULL));
	CHECK(adds(&l, "65536,8", CGT_CACHE_BAD_ARGUMENT, NULL));
	CHECK(adds(&l, "4k.,8,64", CGT_CACHE_BAD_ARGUMENT, NULL));
	CHECK_EQ(l.n, 0);
	CHECK(adds(&l, " 32k,8,64", 0, NULL));
	CHECK(adds(&l, "49152,12,64", 0, NULL));
	CHECK_EQ(l.n, 2);
	CHECK(holds(&l, 0, 32768, 8, 64) && holds(&l, 1, 49152, 12, 64));
	cgt_cache_list_free(&l);
	CHECK(l.v == NULL && l.n == 0 && l.cap == 0);
}

static void ranges_expand_in_order(void)
{
	struct cgt_cache_list l = { 0 };
	CHECK(adds(&l, "8M,16,64", 0, NULL));
	CHECK(adds(&l, "4k..16k,1..4,64", 0, NULL));
	CHECK_EQ(l.n, 10);
	CHECK(holds(&l, 0, 8 << 20, 16, 64));
	static const int32_t expected[9][2] = {
		{ 4096, 1 }, { 4096, 2 }, { 4096, 4 },
		{ 8192, 1 }, { 8192, 2 }, { 8192, 4 },
		{ 16384, 1 }, { 16384, 2 }, { 16384, 4 },
	};
	int in_order = 1;
	for (unsigned i = 0; i < 9; i++)
		in_order &= holds(&l, 1 + i, expected[i][0], expected[i][1], 64);
	CHECK(in_order);
	/* one-sided ranges, a range of one, blanks before numbers, M */
	CHECK(adds(&l, "1M..2M,8,64", 0, NULL));
	CHECK(holds(&l, 10, 1 << 20, 8, 64) && holds(&l, 11, 2 << 20, 8, 64));
	CHECK(adds(&l, "32k,1..16,64", 0, NULL));
	CHECK_EQ(l.n, 17);
	CHECK(holds(&l, 12, 32768, 1, 64) && holds(&l, 16, 32768, 16, 64));
	CHECK(adds(&l, " 64K.. 64K, 4,\t128", 0, NULL));
	CHECK(holds(&l, 17, 65536, 4, 128));
	/* the largest power of two an int holds */
	CHECK(adds(&l, "1024M..1024M,1,64", 0, NULL));
	CHECK(holds(&l, 18, 1 << 30, 1, 64));
	cgt_cache_list_free(&l);
}

static void range_messages(void)
{
	struct cgt_cache_list l = { 0 };
	CHECK(adds(&l, "64k..4k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=64k..4k,8,64: empty range 64k..4k (expected lo..hi with lo <= hi)"));
	CHECK(adds(&l, "3k..64k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=3k..64k,8,64: 3k is not a power of two (a range's ends must be)"));
	CHECK(adds(&l, "4k..48k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..48k,8,64: 48k is not a power of two (a range's ends must be)"));
	CHECK(adds(&l, "32k,1..12,64", CGT_CACHE_BAD_RANGE,
		   "--D1=32k,1..12,64: 12 is not a power of two (a range's ends must be)"));
	CHECK(adds(&l, "32k,1.. 12,64", CGT_CACHE_BAD_RANGE,
		   "--D1=32k,1.. 12,64: 12 is not a power of two (a range's ends must be)"));
	CHECK(adds(&l, "0..4k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=0..4k,8,64: 0 is not a power of two (a range's ends must be)"));
	CHECK(adds(&l, "1k..64k,1..32,64", CGT_CACHE_BAD_RANGE,
		   "--D1=1k..64k,1..32,64: 1024 B, 32-way, 64 B lines: Cache set count is not a power of two."));
	CHECK(adds(&l, "4k..8k,2,63", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..8k,2,63: 4096 B, 2-way, 63 B lines: Cache set count is not a power of two."));
	CHECK(adds(&l, "..64k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=..64k,8,64: the range ..64k has no lower end (expected lo..hi, e.g. 4k..64k)"));
	CHECK(adds(&l, "4k..,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..,8,64: the range 4k.. has no upper end (expected lo..hi, e.g. 4k..64k)"));
	CHECK(adds(&l, "4k..4096M,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..4096M,8,64: 4096M is too large (at most 2147483647)"));
	CHECK(adds(&l, "4k..2048M,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..2048M,8,64: 2048M is too large (at most 2147483647)"));
	CHECK(adds(&l, "4k..99999999999999999999999,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..99999999999999999999999,8,64: 99999999999999999999999 is too large (at most 2147483647)"));
	/* 2^64 + 4096: no wrapping around to 4k */
	CHECK(adds(&l, "4k..18446744073709555712,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..18446744073709555712,8,64: 18446744073709555712 is too large (at most 2147483647)"));
	CHECK(adds(&l, "4k..8k,8,4294967360", CGT_CACHE_BAD_RANGE,
		   "--D1=4k..8k,8,4294967360: 4294967360 is too large (at most 2147483647)"));
	CHECK(adds(&l, "4x..8k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4x..8k,8,64: 4x is not a number (expected digits with an optional k or M suffix)"));
	CHECK(adds(&l, "4k ..8k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k ..8k,8,64: 4k  is not a number (expected digits with an optional k or M suffix)"));
	CHECK(adds(&l, "4k...8k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=4k...8k,8,64: .8k is not a number (expected digits with an optional k or M suffix)"));
	CHECK(adds(&l, "-4k..8k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=-4k..8k,8,64: -4k is not a number (expected digits with an optional k or M suffix)"));
	CHECK(adds(&l, "32k,8,32..64", CGT_CACHE_BAD_RANGE,
		   "--D1=32k,8,32..64: the line size cannot be a range (only size and assoc can)"));
	static const char *const malformed[] = { "4k..8k,8", "4k..8k,8,64,", "4k..8k,,64", "4k..8k" };
	for (unsigned i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		char msg[256];
		snprintf(msg, sizeof(msg), "--D1=%s: expected size,assoc,line, where size and assoc "
			 "may be ranges lo..hi of powers of two", malformed[i]);
		CHECK(adds(&l, malformed[i], CGT_CACHE_BAD_RANGE, msg));
	}
	CHECK_EQ(e.status, cgt_err_invalid);
	CHECK_EQ(l.n, 0);
	cgt_cache_list_free(&l);
}

static void at_most_1024_configurations(void)
{
	struct cgt_cache_list l = { 0 };
	int all_added = 1;
	/* 31 x 31 at most from one value */
	CHECK(adds(&l, "1..1024M,1..1024M,16", CGT_CACHE_BAD_RANGE,
		   "--D1=1..1024M,1..1024M,16: 1 B, 1-way, 16 B lines: Cache set count is not a power of two."));
	CHECK(adds(&l, "4k..32k,1..16,64", 0, NULL));	/* 4 x 5 */
	for (int i = 20; i < 1023; i++)
		all_added &= adds(&l, "32k,8,64", 0, NULL);
	CHECK(all_added);
	CHECK_EQ(l.n, 1023);
	CHECK(adds(&l, "64k..128k,8,64", CGT_CACHE_BAD_RANGE,
		   "--D1=64k..128k,8,64: more than 1024 configurations"));
	CHECK_EQ(l.n, 1023);
	CHECK(adds(&l, "64k..64k,8,64", 0, NULL));
	CHECK_EQ(l.n, 1024);
	CHECK(holds(&l, 1023, 65536, 8, 64));
	CHECK(adds(&l, "32k,8,64", CGT_CACHE_BAD_RANGE, "--D1=32k,8,64: more than 1024 configurations"));
	CHECK(adds(&l, "32k,8,63", CGT_CACHE_INVALID, NULL));
	CHECK_EQ(l.n, 1024);
	CHECK(l.cap <= CGT_MAX_CONFIGS);
	cgt_cache_list_free(&l);
}

int main(void)
{
	PLAN(4);
	RUN(plain_values_are_cachegrinds);
	RUN(ranges_expand_in_order);
	RUN(range_messages);
	RUN(at_most_1024_configurations);
	return CHECK_DONE();
}
