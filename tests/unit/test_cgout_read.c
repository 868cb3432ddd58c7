/* The cachegrind.out reader: what it yields and the messages of
   cg_annotate it fails with. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "trace.h"

static char path[] = "/tmp/cgtrace-test-cgout.XXXXXX";

static void put(const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	fwrite(text, 1, len, f);
	fclose(f);
}

/* Reads a file of len bytes of text; the items as text ("fl a.c|fn f|3: 1 2|..."), or
   "error: MESSAGE" with the path replaced by "F". */
static const char *read_all(const char *text, size_t len)
{
	static char out[2048];
	struct cgt_cgout_reader *r;
	struct cgt_cgout_item item;
	struct cgt_error e = { 0 };
	size_t o = 0;
	int rc;

	put(text, len);
	out[0] = '\0';
	if (cgt_cgout_open(&r, path, &e) < 0)
		goto error;
	o += (size_t)snprintf(out + o, sizeof(out) - o, "%u events", cgt_cgout_n_events(r));
	while ((rc = cgt_cgout_next(r, &item, &e)) > 0) {
		if (item.kind == CGT_CGOUT_COUNTS) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "|%lld:", (long long)item.line);
			for (unsigned k = 0; k < cgt_cgout_n_events(r); k++)
				o += (size_t)snprintf(out + o, sizeof(out) - o, " %lld", (long long)item.counts[k]);
		} else if (item.kind != CGT_CGOUT_SUMMARY) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "|%s %s",
					      item.kind == CGT_CGOUT_FL ? "fl" : "fn", item.name);
		}
	}
	cgt_cgout_close(r);
	if (rc == 0)
		return out;
error:;
	const char *m = strstr(e.msg, path);
	snprintf(out, sizeof(out), "error: %.*sF%s", m ? (int)(m - e.msg) : 0, e.msg,
		 m ? m + strlen(path) : e.msg);
	return out;
}

/* text: a string literal, which may hold NULs. */
#define CHECK_READ(text, expected)                                                \
	do {                                                                      \
		const char *got = read_all(text, sizeof(text) - 1);               \
		if (strcmp(got, expected) != 0)                                   \
			printf("  got:      %s\n  expected: %s\n", got, expected); \
		CHECK(strcmp(got, expected) == 0);                                \
	} while (0)

static void test_items_in_order(void)
{
	CHECK_READ("desc: I1 cache: x\ncmd: p\nevents: Ir Dr\nfl=a.c\nfn=f\n3 1 2\n4 5\nsummary: 6 2\n",
		   "2 events|fl a.c|fn f|3: 1 2|4: 5 0");
}

static void test_line_ends_and_numbers_as_python_reads_them(void)
{
	CHECK_READ("cmd: p\r\nevents: Ir\rfl=a.c\r\nfn=f\n1 1_000\n2 -3\n3 +4\nsummary: 1001",
		   "1 events|fl a.c|fn f|1: 1000|2: -3|3: 4");
}

static void test_header_errors(void)
{
	CHECK_READ("", "error: F:1: missing a `command:` line");
	CHECK_READ("desc: x\nevents: Ir\n", "error: F:2: missing a `command:` line");
	CHECK_READ("cmd: p\nfl=a.c\n", "error: F:2: missing an `events:` line");
	CHECK_READ("cmd: p\nevents: Ir\nfl=a.c\n", "error: F:4: missing `summary:` line, aborting");
}

static void test_count_errors(void)
{
	CHECK_READ("cmd: p\nevents: Ir\n1 2 3\nsummary: 2\n",
		   "error: F:3: malformed or too many event counts");
	CHECK_READ("cmd: p\nevents: Ir\n1 x\nsummary: 2\n",
		   "error: F:3: malformed or too many event counts");
	CHECK_READ("cmd: p\nevents: Ir\n1 2__0\nsummary: 2\n",
		   "error: F:3: malformed or too many event counts");
	CHECK_READ("cmd: p\nevents: Ir\nfn=f\n  3 4\n", "error: F:4: malformed line:   3 4");
	CHECK_READ("cmd: p\nevents: Ir\n1 2\nsummary: 3\n",
		   "error: F:4: `summary:` line doesn't match computed total\n"
		   "- summary:  [3]\n- computed: [2]");
}

static void test_limits(void)
{
	CHECK_READ("cmd: p\nevents: Ir\n1 9223372036854775807\nsummary: 9223372036854775807\n",
		   "1 events|1: 9223372036854775807");
	CHECK_READ("cmd: p\nevents: Ir\n1 9223372036854775808\nsummary: 0\n",
		   "error: F:3: a number beyond 64 bits (at most 9223372036854775807)");
	CHECK_READ("cmd: p\nevents: Ir\n1 9223372036854775807\n2 -1\nsummary: 9223372036854775806\n",
		   "error: F:4: event counts too large: their absolute values sum past 2^63 - 1");
	CHECK_READ("cmd: p\nevents: Ir\nfn=f\0g\n", "error: F:3: a NUL byte, at offset 22: not a text file");
}

int main(void)
{
	PLAN(5);
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	RUN(test_items_in_order);
	RUN(test_line_ends_and_numbers_as_python_reads_them);
	RUN(test_header_errors);
	RUN(test_count_errors);
	RUN(test_limits);
	unlink(path);
	return CHECK_DONE();
}
