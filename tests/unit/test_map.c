/* The hash map of 64-bit keys: lookups, replacement, growth, any key. */
#include <stdint.h>

#include "check.h"
#include "trace.h"

static void test_put_get_replace(void)
{
	struct cgt_map m = { 0 };
	int a, b;
	CHECK(cgt_map_get(&m, 1) == NULL);	/* empty, never allocated */
	CHECK_EQ(cgt_map_put(&m, 1, &a), 0);
	CHECK(cgt_map_get(&m, 1) == &a);
	CHECK_EQ(cgt_map_put(&m, 1, &b), 0);
	CHECK(cgt_map_get(&m, 1) == &b);
	CHECK_EQ(m.n, 1);
	CHECK(cgt_map_get(&m, 2) == NULL);
	cgt_map_free(&m);
}

static void test_every_key_kept_across_growth(void)
{
	struct cgt_map m = { 0 };
	static char values[10000];
	/* Keys 0, UINT64_MAX and strided ones that share low bits. */
	for (uint64_t i = 0; i < 10000; i++)
		CHECK_EQ(cgt_map_put(&m, i == 1 ? UINT64_MAX : i << 12, &values[i]), 0);
	CHECK_EQ(m.n, 10000);
	CHECK(2 * m.n <= m.cap);
	int all_found = 1;
	for (uint64_t i = 0; i < 10000; i++)
		all_found &= cgt_map_get(&m, i == 1 ? UINT64_MAX : i << 12) == &values[i];
	CHECK(all_found);
	CHECK(cgt_map_get(&m, 1) == NULL);
	size_t seen = 0;
	for (size_t i = 0; i < m.cap; i++)
		seen += m.slots[i].value != NULL;
	CHECK_EQ(seen, 10000);
	cgt_map_free(&m);
	CHECK_EQ(m.cap, 0);
}

int main(void)
{
	PLAN(2);
	RUN(test_put_get_replace);
	RUN(test_every_key_kept_across_growth);
	return CHECK_DONE();
}
