/* The cachegrind.out reader: what it yields and the messages of
   cg_annotate it fails with. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static char out[2048];
static size_t out_len;

/* Appends to out, cut at its size. */
static void append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void append(const char *fmt, ...)
{
	va_list ap;
	if (out_len >= sizeof(out) - 1)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(out + out_len, sizeof(out) - out_len, fmt, ap);
	va_end(ap);
	out_len = n < 0 ? out_len : out_len + (size_t)n > sizeof(out) - 1 ? sizeof(out) - 1 : out_len + (size_t)n;
}

/* Reads a file of len bytes of text; the items as text ("fl a.c|fn f|3: 1 2|..."), or
   "error: MESSAGE" with the path replaced by "F" (either cut at 2047 characters). */
static const char *read_all(const char *text, size_t len)
{
	struct cgt_cgout_reader *r;
	struct cgt_cgout_item item;
	struct cgt_error e = { 0 };
	int rc;

	put(text, len);
	out[0] = '\0';
	out_len = 0;
	if (cgt_cgout_open(&r, path, &e) < 0)
		goto error;
	append("%u events", cgt_cgout_n_events(r));
	while ((rc = cgt_cgout_next(r, &item, &e)) > 0) {
		if (item.kind == CGT_CGOUT_COUNTS) {
			append("|%lld:", (long long)item.line);
			for (unsigned k = 0; k < cgt_cgout_n_events(r); k++)
				append(" %lld", (long long)item.counts[k]);
		} else if (item.kind != CGT_CGOUT_SUMMARY) {
			append("|%s %s", item.kind == CGT_CGOUT_FL ? "fl" : "fn", item.name);
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

static void test_no_events(void)
{
	CHECK_READ("cmd: p\nevents: \nfl=a.c\n1\nsummary: \n",
		   "error: F:2: no events in the `events:` line");
	CHECK_READ("cmd: p\nevents:\n", "error: F:2: no events in the `events:` line");
}

static void test_line_number_beyond_64_bits(void)
{
	CHECK_READ("cmd: p\nevents: Ir\n9223372036854775807 1\nsummary: 1\n",
		   "1 events|9223372036854775807: 1");
	CHECK_READ("cmd: p\nevents: Ir\n9223372036854775808 1\nsummary: 1\n",
		   "error: F:3: a number beyond 64 bits (at most 9223372036854775807)");
	CHECK_READ("cmd: p\nevents: Ir\n1 2\n184467440737095516160 1\nsummary: 3\n",
		   "error: F:4: a number beyond 64 bits (at most 9223372036854775807)");
}

/* Counts a line leaves out are zero, whatever the lines before gave (the
   reader zeroes only what the line before gave, not every event). */
static void test_missing_counts_after_longer_lines(void)
{
	CHECK_READ("cmd: p\nevents: A B C\n1 1 2 3\n2 4\n3\n4 0 5\n5 6 7 8\n6 9\n"
		   "summary: 20 14 11\n",
		   "3 events|1: 1 2 3|2: 4 0 0|3: 0 0 0|4: 0 5 0|5: 6 7 8|6: 9 0 0");
}

/* A pipe's size is 0: the reader reads to the end whatever fstat says. */
static void test_reads_a_pipe(void)
{
	static const char text[] = "cmd: p\nevents: Ir\nfl=a.c\nfn=f\n1 5\nsummary: 5\n";
	char fifo[64] = "/tmp/cgtrace-test-cgout-fifo.XXXXXX";	/* room for "/f" */
	CHECK(mkdtemp(fifo) != NULL);
	strcat(fifo, "/f");
	CHECK(mkfifo(fifo, 0600) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		FILE *f = fopen(fifo, "wb");
		fwrite(text, 1, sizeof(text) - 1, f);
		fclose(f);
		_exit(0);
	}
	struct cgt_cgout_reader *r;
	struct cgt_cgout_item item;
	struct cgt_error e = { 0 };
	int items = 0, rc = cgt_cgout_open(&r, fifo, &e);
	CHECK(rc == 0);
	if (rc == 0) {
		while ((rc = cgt_cgout_next(r, &item, &e)) > 0)
			items++;
		CHECK_EQ(rc, 0);
		CHECK_EQ(items, 4);
		cgt_cgout_close(r);
	}
	if (rc < 0)
		printf("  %s\n", e.msg);
	waitpid(pid, NULL, 0);
	unlink(fifo);
	*strrchr(fifo, '/') = '\0';
	rmdir(fifo);
}

/* Text of n_events events and n_lines count lines, each with its counts
   ("N 1": the rest are zero) or with all of them ("N 1 0 0 ...). */
static char *many_events(unsigned n_events, unsigned n_lines, int all_counts, size_t *len)
{
	size_t cap = 64 + (size_t)n_events * 8 + (size_t)n_lines * (24 + (all_counts ? 2 * n_events : 0));
	char *t = malloc(cap), *p = t;
	p += sprintf(p, "cmd: p\nevents:");
	for (unsigned k = 0; k < n_events; k++)
		p += sprintf(p, " e%u", k);
	p += sprintf(p, "\nfl=a.c\nfn=f\n");
	for (unsigned i = 1; i <= n_lines; i++) {
		p += sprintf(p, "%u 1", i);
		for (unsigned k = 1; all_counts && k < n_events; k++)
			p += sprintf(p, " 0");
		*p++ = '\n';
	}
	p += sprintf(p, "summary: %u\n", n_lines);
	*len = (size_t)(p - t);
	return t;
}

/* Every line stands for a count per event, which the report adds up and
   keeps: lines that leave out most of a hundred thousand events make the
   work quadratic in the file's size, and are refused. */
static void test_lines_of_many_missing_counts(void)
{
	size_t len;
	char *t = many_events(100000, 400, 0, &len);
	const char *got = read_all(t, len);
	if (strstr(got, "too many lines for 100000 events") == NULL)
		printf("  got: %.300s\n", got);
	CHECK(strncmp(got, "error: F:", 9) == 0 && strstr(got, "too many lines for 100000 events"));
	free(t);
	t = many_events(100000, 40, 1, &len);	/* every count written: read */
	got = read_all(t, len);
	if (strncmp(got, "100000 events|fl a.c|fn f|1: 1 0 0", 34) != 0)
		printf("  got: %.300s\n", got);
	CHECK(strncmp(got, "100000 events|fl a.c|fn f|1: 1 0 0", 34) == 0);
	free(t);
}

int main(void)
{
	PLAN(10);
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	RUN(test_items_in_order);
	RUN(test_line_ends_and_numbers_as_python_reads_them);
	RUN(test_header_errors);
	RUN(test_count_errors);
	RUN(test_limits);
	RUN(test_no_events);
	RUN(test_line_number_beyond_64_bits);
	RUN(test_missing_counts_after_longer_lines);
	RUN(test_reads_a_pipe);
	RUN(test_lines_of_many_missing_counts);
	unlink(path);
	return CHECK_DONE();
}
