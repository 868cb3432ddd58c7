/* Hierarchies: the checks of the ones with an L2, their labels, and the
   sweep of every combination of the configurations given. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sim.h"

static const struct cgt_hierarchy cachegrinds = { {
	[CGT_LEVEL_I1] = { 32768, 8, 64 },
	[CGT_LEVEL_D1] = { 32768, 8, 64 },
	[CGT_LEVEL_LL] = { 8 << 20, 16, 64 },
} };

static int check_says(const struct cgt_hierarchy *h, const char *expected)
{
	char buf[256];
	const char *why = cgt_hierarchy_check(h, buf, sizeof(buf));
	if (why == NULL ? expected == NULL : expected != NULL && strcmp(why, expected) == 0)
		return 1;
	printf("  check says \"%s\"\n", why ? why : "(nothing)");
	return 0;
}

static void checks(void)
{
	struct cgt_hierarchy h = cachegrinds;
	CHECK(check_says(&h, NULL));
	/* without L2, any sizes (as Cachegrind) */
	h.level[CGT_LEVEL_LL] = (struct cgt_cache_config){ 4096, 1, 32 };
	CHECK(check_says(&h, NULL));
	h.level[CGT_LEVEL_L2] = (struct cgt_cache_config){ 16384, 8, 64 };
	h.level[CGT_LEVEL_LL] = cachegrinds.level[CGT_LEVEL_LL];
	h.level[CGT_LEVEL_I1].size = 16384;
	CHECK(check_says(&h, "L2 (16384 B) is smaller than D1 (32768 B): a level must be at least "
			     "as large as the one above it"));
	h.level[CGT_LEVEL_I1] = (struct cgt_cache_config){ 65536, 8, 64 };
	h.level[CGT_LEVEL_D1].size = 16384;
	CHECK(check_says(&h, "L2 (16384 B) is smaller than I1 (65536 B): a level must be at least "
			     "as large as the one above it"));
	h = cachegrinds;
	h.level[CGT_LEVEL_L2] = (struct cgt_cache_config){ 32768, 8, 64 };	/* equal is fine */
	CHECK(check_says(&h, NULL));
	h.level[CGT_LEVEL_L2] = (struct cgt_cache_config){ 16 << 20, 16, 64 };
	CHECK(check_says(&h, "LL (8388608 B) is smaller than L2 (16777216 B): a level must be at "
			     "least as large as the one above it"));
	h.level[CGT_LEVEL_L2] = (struct cgt_cache_config){ 1 << 20, 16, 32 };
	CHECK(check_says(&h, "L2's lines (32 B) are shorter than D1's (64 B): line sizes must not "
			     "shrink going down"));
	h.level[CGT_LEVEL_D1].line = 32;
	CHECK(check_says(&h, "L2's lines (32 B) are shorter than I1's (64 B): line sizes must not "
			     "shrink going down"));
	h.level[CGT_LEVEL_L2].line = 128;
	CHECK(check_says(&h, "LL's lines (64 B) are shorter than L2's (128 B): line sizes must not "
			     "shrink going down"));
	h.level[CGT_LEVEL_LL].line = 128;
	CHECK(check_says(&h, NULL));
	/* every level present is checked as Cachegrind checks one */
	h.level[CGT_LEVEL_L2].assoc = 3;
	CHECK(check_says(&h, "L2 (1048576 B, 3-way, 128 B lines): Cache set count is not a power of two."));
	h = cachegrinds;
	h.level[CGT_LEVEL_LL].line = 8;
	CHECK(check_says(&h, "LL (8388608 B, 16-way, 8 B lines): Cache line size is too small."));
	h = cachegrinds;
	h.level[CGT_LEVEL_D1].size = 0;
	CHECK(check_says(&h, "D1 is absent (only L2 may be)"));
}

static void labels(void)
{
	char buf[160];
	struct cgt_hierarchy h = cachegrinds;
	cgt_hierarchy_label(&h, 0, buf, sizeof(buf));
	CHECK(strcmp(buf, "default") == 0);
	cgt_hierarchy_label(&h, 1u << CGT_LEVEL_D1 | 1u << CGT_LEVEL_LL, buf, sizeof(buf));
	CHECK(strcmp(buf, "D1-32768-8-64.LL-8388608-16-64") == 0);
	h.level[CGT_LEVEL_L2] = (struct cgt_cache_config){ 1 << 20, 16, 64 };
	cgt_hierarchy_label(&h, 0xf, buf, sizeof(buf));
	CHECK(strcmp(buf, "I1-32768-8-64.D1-32768-8-64.L2-1048576-16-64.LL-8388608-16-64") == 0);
	cgt_hierarchy_label(&h, 1u << CGT_LEVEL_L2, buf, sizeof(buf));
	CHECK(strcmp(buf, "L2-1048576-16-64") == 0);
	/* the longest there can be fits a sweep configuration's label */
	const struct cgt_cache_config widest = { INT32_MAX, INT32_MAX, INT32_MAX };
	struct cgt_hierarchy w = { { widest, widest, widest, widest } };
	struct cgt_sweep_config s;
	cgt_hierarchy_label(&w, 0xf, s.label, sizeof(s.label));
	CHECK_EQ(strlen(s.label), 4 * 35 + 3);
	/* cut short, and nothing written past the end */
	memset(buf, 'x', sizeof(buf));
	cgt_hierarchy_label(&h, 0xf, buf, 12);
	CHECK(strcmp(buf, "I1-32768-8-") == 0);
	CHECK(memchr(buf + 12, 0, sizeof(buf) - 12) == NULL && buf[12] == 'x' &&
	      buf[sizeof(buf) - 1] == 'x');
}

static void add_all(struct cgt_cache_list *l, const char *option, const char *text)
{
	struct cgt_cache_config c;
	struct cgt_error e;
	CHECK_EQ(cgt_cache_list_add(l, option, text, &c, &e), 0);
}

static void free_lists(struct cgt_cache_list *lists)
{
	for (int k = 0; k < CGT_N_LEVELS; k++)
		cgt_cache_list_free(&lists[k]);
}

static void expansion(void)
{
	struct cgt_cache_list lists[CGT_N_LEVELS] = { { 0 } };
	struct cgt_sweep_config *s = NULL;
	struct cgt_error e;

	/* nothing given: the defaults, once */
	CHECK_EQ(cgt_sweep_expand(lists, &cachegrinds, &s, &e), 1);
	CHECK(s != NULL && strcmp(s[0].label, "default") == 0 &&
	      memcmp(&s[0].h, &cachegrinds, sizeof(cachegrinds)) == 0);
	free(s);

	add_all(&lists[CGT_LEVEL_I1], "I1", "16k..32k,8,64");
	add_all(&lists[CGT_LEVEL_D1], "D1", "32k,4..8,64");
	add_all(&lists[CGT_LEVEL_LL], "LL", "4M,16,64");
	add_all(&lists[CGT_LEVEL_LL], "LL", "2M,16,64");
	CHECK_EQ(cgt_sweep_expand(lists, &cachegrinds, &s, &e), 8);
	static const char *const expected[8] = {
		"I1-16384-8-64.D1-32768-4-64.LL-4194304-16-64",
		"I1-16384-8-64.D1-32768-4-64.LL-2097152-16-64",
		"I1-16384-8-64.D1-32768-8-64.LL-4194304-16-64",
		"I1-16384-8-64.D1-32768-8-64.LL-2097152-16-64",
		"I1-32768-8-64.D1-32768-4-64.LL-4194304-16-64",
		"I1-32768-8-64.D1-32768-4-64.LL-2097152-16-64",
		"I1-32768-8-64.D1-32768-8-64.LL-4194304-16-64",
		"I1-32768-8-64.D1-32768-8-64.LL-2097152-16-64",
	};
	int labelled = s != NULL;
	for (int i = 0; labelled && i < 8; i++)
		labelled &= strcmp(s[i].label, expected[i]) == 0;
	CHECK(labelled);
	CHECK(s != NULL && s[5].h.level[CGT_LEVEL_I1].size == 32768 &&
	      s[5].h.level[CGT_LEVEL_D1].assoc == 4 && s[5].h.level[CGT_LEVEL_L2].size == 0 &&
	      s[5].h.level[CGT_LEVEL_LL].size == 2 << 20);
	free(s);
	free_lists(lists);

	/* a level not given is the defaults', L2 included */
	struct cgt_hierarchy with_l2 = cachegrinds;
	with_l2.level[CGT_LEVEL_L2] = (struct cgt_cache_config){ 1 << 20, 16, 64 };
	add_all(&lists[CGT_LEVEL_D1], "D1", "64k,8,64");
	CHECK_EQ(cgt_sweep_expand(lists, &with_l2, &s, &e), 1);
	CHECK(s != NULL && strcmp(s[0].label, "D1-65536-8-64") == 0 &&
	      s[0].h.level[CGT_LEVEL_L2].size == 1 << 20 && s[0].h.level[CGT_LEVEL_I1].size == 32768);
	free(s);
	free_lists(lists);
}

static int refused(const struct cgt_cache_list *lists, const char *expected)
{
	struct cgt_sweep_config *s = (struct cgt_sweep_config *)&s;
	struct cgt_error e = { 0 };
	int rc = cgt_sweep_expand(lists, &cachegrinds, &s, &e);
	if (rc == -cgt_err_invalid && s == NULL && strcmp(e.msg, expected) == 0)
		return 1;
	printf("  rc %d, message \"%s\"\n", rc, e.msg);
	return 0;
}

static void refusals(void)
{
	struct cgt_cache_list lists[CGT_N_LEVELS] = { { 0 } };

	add_all(&lists[CGT_LEVEL_D1], "D1", "32k,8,64");
	add_all(&lists[CGT_LEVEL_D1], "D1", "16k,4,64");
	add_all(&lists[CGT_LEVEL_D1], "D1", "32k,8,64");
	CHECK(refused(lists, "two configurations would get one output name, D1-32768-8-64: "
			     "a configuration given twice?"));
	free_lists(lists);

	add_all(&lists[CGT_LEVEL_L2], "L2", "16k,8,64");
	CHECK(refused(lists, "configuration L2-16384-8-64: L2 (16384 B) is smaller than D1 (32768 B): "
			     "a level must be at least as large as the one above it"));
	free_lists(lists);
}

/* n distinct valid configurations (up to 256) in l, whatever the sizes:
   without L2 any combination is simulated. */
static void distinct(struct cgt_cache_list *l, const char *option, unsigned n)
{
	static const char *const values[4] = { "4k..128M,1..8,16", "4k..128M,1..8,32",
					       "4k..128M,1..8,64", "4k..128M,1..8,128" };
	for (int i = 0; i < 4; i++)
		add_all(l, option, values[i]);
	CHECK_EQ(l->n, 4 * 16 * 4);
	l->n = n;
}

static void at_most_1024_configurations(void)
{
	struct cgt_cache_list lists[CGT_N_LEVELS] = { { 0 } };
	struct cgt_sweep_config *s = NULL;
	struct cgt_error e;

	distinct(&lists[CGT_LEVEL_D1], "D1", 4);
	distinct(&lists[CGT_LEVEL_LL], "LL", 256);
	CHECK_EQ(cgt_sweep_expand(lists, &cachegrinds, &s, &e), 1024);
	CHECK(s != NULL && strcmp(s[1023].label, "D1-4096-8-16.LL-134217728-8-128") == 0);
	free(s);

	lists[CGT_LEVEL_D1].n = 5;
	lists[CGT_LEVEL_LL].n = 205;
	CHECK(refused(lists, "the options give 1025 configurations; at most 1024 are simulated in one run"));
	lists[CGT_LEVEL_D1].n = 8;
	lists[CGT_LEVEL_LL].n = 256;
	CHECK(refused(lists, "the options give 2048 configurations; at most 1024 are simulated in one run"));
	/* a product beyond 32 bits is not wrapped into an accepted one */
	distinct(&lists[CGT_LEVEL_I1], "I1", 256);
	distinct(&lists[CGT_LEVEL_L2], "L2", 256);
	lists[CGT_LEVEL_D1].n = 256;
	CHECK(refused(lists, "the options give 4294967296 configurations; at most 1024 are simulated in one run"));
	free_lists(lists);
}

int main(void)
{
	PLAN(5);
	RUN(checks);
	RUN(labels);
	RUN(expansion);
	RUN(refusals);
	RUN(at_most_1024_configurations);
	return CHECK_DONE();
}
