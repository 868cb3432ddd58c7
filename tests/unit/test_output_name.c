/* Output file name templates: %p, %q{VAR}, %%. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record.h"

static int expands_to(const char *tmpl, long pid, const char *expected)
{
	const char *why;
	char *s = cgt_expand_output_name(tmpl, pid, &why);
	int ok = s != NULL && strcmp(s, expected) == 0;
	free(s);
	return ok;
}

static void templates(void)
{
	setenv("CGT_TEST_VAR", "xyz", 1);
	CHECK(expands_to("cgtrace.%p.zst", 123, "cgtrace.123.zst"));
	CHECK(expands_to("a%%b", 1, "a%b"));
	CHECK(expands_to("t.%q{CGT_TEST_VAR}.%p", 9, "t.xyz.9"));
	CHECK(expands_to("plain", 9, "plain"));
}

static void bad_templates(void)
{
	const char *why;
	unsetenv("CGT_NO_SUCH_VAR");
	CHECK(cgt_expand_output_name("x%", 1, &why) == NULL);
	CHECK(cgt_expand_output_name("x%z", 1, &why) == NULL);
	CHECK(cgt_expand_output_name("%q{CGT_NO_SUCH_VAR}", 1, &why) == NULL);
	CHECK(cgt_expand_output_name("", 1, &why) == NULL);
}

int main(void)
{
	PLAN(2);
	RUN(templates);
	RUN(bad_templates);
	return CHECK_DONE();
}
