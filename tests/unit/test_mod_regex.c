/* --mod-filename / --mod-funcname expressions: splitting as cg_annotate
   splits them, and substitutions as Python's re.sub makes them (the
   expected strings are re.sub's own results). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report.h"

/* The substitution's result, or "(invalid)". */
static int applies(const char *expr, const char *name, const char *expected)
{
	struct cgt_mod *m = cgt_mod_parse(expr);
	char *got = m ? cgt_mod_apply(m, name) : strdup("(invalid)");
	int same = got != NULL && strcmp(got, expected) == 0;
	if (!same)
		printf("  %s on '%s': '%s', expected '%s'\n", expr, name, got ? got : "(null)", expected);
	free(got);
	cgt_mod_free(m);
	return same;
}

static void test_first_match_only_without_g(void)
{
	CHECK(applies("s/a/-/", "aaa", "-aa"));
	CHECK(applies("s/a/-/g", "aaa", "---"));
	CHECK(applies("s/z/-/g", "aaa", "aaa"));
}

static void test_anchor_holds_only_at_the_start(void)
{
	CHECK(applies("s/^a/-/g", "aaa", "-aa"));
	CHECK(applies("s/a$/-/g", "aaa", "aa-"));
}

static void test_empty_matches_as_re_sub(void)
{
	/* re.sub('x*', '-', 'abxd') */
	CHECK(applies("s/x*/-/g", "abxd", "-a-b--d-"));
	CHECK(applies("s/x*/-/", "abxd", "-abxd"));
}

static void test_groups_and_escapes(void)
{
	CHECK(applies("s/(S)QUARE/\\1Q/i", "square", "sQ"));
	CHECK(applies("s/(a)(b)/\\g<2>\\1\\\\x/g", "abab", "ba\\xba\\x"));
	/* A slash after a backslash does not end the replacement, as in cg_annotate. */
	CHECK(cgt_mod_parse("s/a/\\\\/") == NULL);
	CHECK(applies("s/o/\\n/g", "foo", "f\n\n"));
	CHECK(applies("s/(a)|(b)/[\\2]/g", "ab", "[][b]"));	/* unmatched group: empty */
}

static void test_slashes_split_at_the_last_unescaped(void)
{
	/* The greedy split: the pattern is "a/b", the replacement "c". */
	CHECK(applies("s/a/b/c/", "a/b", "c"));
	CHECK(applies("s/a\\/b/c/", "a/b", "c"));
	CHECK(applies("s/\\/usr\\/src\\///", "/usr/src/x.c", "x.c"));
}

static void test_malformed_expressions_refused(void)
{
	CHECK(cgt_mod_parse("foo") == NULL);
	CHECK(cgt_mod_parse("s/a/b") == NULL);
	CHECK(cgt_mod_parse("s/a/b/x") == NULL);	/* unknown flag */
	CHECK(cgt_mod_parse("s/(/b/") == NULL);		/* does not compile */
	CHECK(cgt_mod_parse("s/a\n/b/") == NULL);
	CHECK(applies("s/a/b/gi", "AA", "bb"));
	CHECK(applies("s/a/b/ig", "AA", "bb"));
}

int main(void)
{
	PLAN(6);
	RUN(test_first_match_only_without_g);
	RUN(test_anchor_holds_only_at_the_start);
	RUN(test_empty_matches_as_re_sub);
	RUN(test_groups_and_escapes);
	RUN(test_slashes_split_at_the_last_unescaped);
	RUN(test_malformed_expressions_refused);
	return CHECK_DONE();
}
