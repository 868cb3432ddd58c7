/* cgt_compare on small hand-written cachegrind.out files: cg_annotate's
   naming and merging, the ranking and its ties, the column labels, the
   default event, the refusals. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "report.h"

static char dir[] = "/tmp/test_compare.XXXXXX";

/* Writes text to dir/name; returns the path (static storage, one per slot). */
static const char *file(unsigned slot, const char *name, const char *text)
{
	static char paths[4][256];
	snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", dir, name);
	FILE *f = fopen(paths[slot], "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return paths[slot];
}

/* The output (malloc'd) of cgt_compare, or the error message in e. */
static char *compare(const char *const *files, unsigned n, const char *event, unsigned top,
		     int json, struct cgt_error *e)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	const struct cgt_compare_options o = { files, n, event, top, json };
	int rc = cgt_compare(out, &o, e);
	fclose(out);
	if (rc < 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Only the lines of a JSON output from "totals" on: the files' paths
   hold the temporary directory. */
static int json_is(char *text, const char *expected)
{
	const char *from = text ? strstr(text, "  \"totals\"") : NULL;
	int same = from != NULL && strcmp(from, expected) == 0;
	if (!same)
		printf("  got:\n%s\n  expected:\n%s", from ? from : "(nothing)", expected);
	free(text);
	return same;
}

static void naming_and_merging(void)
{
	/* Counts before any fl= line: no line, and before any fn= line no
	   function either; after an fl= line and before fn=, "<unspecified>";
	   the same (file, fn, line) twice, even across fl= lines, merged;
	   functions and lines with no count of the event, left out. */
	const char *files[2] = {
		file(0, "cachegrind.out.1.a", "cmd: prog\nevents: Ir D1mr\n"
			"5 1 1\n" "fn=early\n" "6 2 2\n"
			"fl=a.c\n" "7 3 4\n" "fn=f\n" "3 10 5\n" "3 1 1\n"
			"fl=b.c\n" "fn=f\n" "3 1 1\n"
			"fl=a.c\n" "fn=f\n" "3 1 1\n" "4 1 0\n"
			"fn=nothing\n" "9 1 0\n"
			"summary: 21 15\n"),
		file(1, "cachegrind.out.1.b", "cmd: prog\nevents: Ir D1mr\n"
			"fl=a.c\n" "fn=f\n" "3 10 9\n"
			"summary: 10 9\n"),
	};
	struct cgt_error e = { 0 };
	CHECK(json_is(compare(files, 2, "D1mr", 20, 1, &e),
		      "  \"totals\": [15, 9],\n"
		      "  \"functions\": [\n"
		      "    {\"file\": \"a.c\", \"name\": \"f\", \"counts\": [7, 9]},\n"
		      "    {\"file\": \"a.c\", \"name\": \"<unspecified>\", \"counts\": [4, 0]},\n"
		      "    {\"file\": \"\", \"name\": \"early\", \"counts\": [2, 0]},\n"
		      "    {\"file\": \"b.c\", \"name\": \"f\", \"counts\": [1, 0]}\n"
		      "  ],\n"
		      "  \"lines\": [\n"
		      "    {\"file\": \"a.c\", \"line\": 3, \"function\": \"f\", \"counts\": [7, 9]},\n"
		      "    {\"file\": \"a.c\", \"line\": 7, \"function\": \"<unspecified>\", \"counts\": [4, 0]},\n"
		      "    {\"file\": \"b.c\", \"line\": 3, \"function\": \"f\", \"counts\": [1, 0]}\n"
		      "  ]\n}\n"));
}

static void ranking_ties_and_top(void)
{
	/* Ties by file, then function; a row zero in every file left out;
	   --top cuts functions and lines alike. */
	const char *files[2] = {
		file(0, "x.1", "cmd: prog\nevents: Ir\n" "fl=b.c\n" "fn=g\n" "1 5\n" "fn=a\n" "2 5\n"
			"fl=a.c\n" "fn=z\n" "1 5\n" "fn=zero\n" "9 0\n" "summary: 15\n"),
		file(1, "x.2", "cmd: prog\nevents: Ir\n" "fl=a.c\n" "fn=y\n" "1 6\n" "summary: 6\n"),
	};
	struct cgt_error e = { 0 };
	CHECK(json_is(compare(files, 2, NULL, 3, 1, &e),
		      "  \"totals\": [15, 6],\n"
		      "  \"functions\": [\n"
		      "    {\"file\": \"a.c\", \"name\": \"y\", \"counts\": [0, 6]},\n"
		      "    {\"file\": \"a.c\", \"name\": \"z\", \"counts\": [5, 0]},\n"
		      "    {\"file\": \"b.c\", \"name\": \"a\", \"counts\": [5, 0]}\n"
		      "  ],\n"
		      "  \"lines\": [\n"
		      "    {\"file\": \"a.c\", \"line\": 1, \"function\": \"y\", \"counts\": [0, 6]},\n"
		      "    {\"file\": \"a.c\", \"line\": 1, \"function\": \"z\", \"counts\": [5, 0]},\n"
		      "    {\"file\": \"b.c\", \"line\": 1, \"function\": \"g\", \"counts\": [5, 0]}\n"
		      "  ]\n}\n"));
}

/* The labels line of the JSON of files named a and b. */
static int labels_are(const char *a, const char *b, const char *expected)
{
	const char *files[2] = { file(0, a, "cmd: prog\nevents: Ir\nsummary: 0\n"),
				 file(1, b, "cmd: prog\nevents: Ir\nsummary: 0\n") };
	struct cgt_error e = { 0 };
	char *text = compare(files, 2, NULL, 20, 1, &e);
	char *labels = text ? strstr(text, "\"labels\": ") : NULL;
	int same = labels != NULL && strncmp(labels, expected, strlen(expected)) == 0 &&
		   labels[strlen(expected)] == '\n';
	if (!same)
		printf("  labels of %s, %s: %.60s\n", a, b, labels ? labels : "(none)");
	free(text);
	return same;
}

static void labels(void)
{
	CHECK(labels_are("cgout.7.D1-4096-8-64.LL-8-16-64", "cgout.7.D1-40960-8-64.LL-8-16-64",
			 "\"labels\": [\"D1-4096-8-64\", \"D1-40960-8-64\"],"));
	/* One name the start of the other: neither label empty. */
	CHECK(labels_are("cgout.7", "cgout.7.1", "\"labels\": [\"7\", \"7.1\"],"));
	CHECK(labels_are("same.out", "same.out", "\"labels\": [\"out\", \"out\"],"));
	CHECK(labels_are("p", "q", "\"labels\": [\"p\", \"q\"],"));
}

/* The event cgt_compare picks for these two files' summary: lines. */
static int default_is(const char *events, const char *sum1, const char *sum2, const char *event)
{
	char t1[128], t2[128];
	snprintf(t1, sizeof(t1), "cmd: prog\nevents: %s\nfl=a.c\nfn=f\n1 %s\nsummary: %s\n", events, sum1, sum1);
	snprintf(t2, sizeof(t2), "cmd: prog\nevents: %s\nfl=a.c\nfn=f\n1 %s\nsummary: %s\n", events, sum2, sum2);
	const char *files[2] = { file(0, "d.1", t1), file(1, "d.2", t2) };
	struct cgt_error e = { 0 };
	char *text = compare(files, 2, NULL, 20, 0, &e), expected[64];
	snprintf(expected, sizeof(expected), "Event:  %s\n", event);
	int same = text != NULL && strncmp(text, expected, strlen(expected)) == 0;
	if (!same)
		printf("  %s | %s | %s: %.30s\n", events, sum1, sum2, text ? text : e.msg);
	free(text);
	return same;
}

static void default_event(void)
{
	const char *ev = "Ir I1mr Dr D1mr DLmr Bc Bcm";
	/* The most changed, relative to its largest total. */
	CHECK(default_is(ev, "100 5 50 40 10 9 1", "100 5 50 20 9 9 1", "D1mr"));
	CHECK(default_is(ev, "100 5 50 40 10 9 1", "100 5 50 39 5 9 1", "DLmr"));
	CHECK(default_is(ev, "100 5 50 40 10 9 2", "100 5 50 40 10 9 1", "Bcm"));
	/* None changed: the first counted; none counted: the first event. */
	CHECK(default_is(ev, "100 0 50 40 10 9 1", "100 0 50 40 10 9 1", "D1mr"));
	CHECK(default_is(ev, "100 0 50 0 0 9 0", "100 0 50 0 0 9 0", "Ir"));
}

static void refusals(void)
{
	struct cgt_error e = { 0 };
	const char *files[2] = { file(0, "r.1", "cmd: prog\nevents: Ir D1mr\nfl=a\nfn=f\n1 1 1\nsummary: 1 1\n"),
				 file(1, "r.2", "cmd: prog\nevents: Ir D1mw\nfl=a\nfn=f\n1 1 1\nsummary: 1 1\n") };
	CHECK(compare(files, 1, NULL, 20, 0, &e) == NULL &&
	      strstr(e.msg, "two or more files") != NULL);
	CHECK(compare(files, 2, NULL, 20, 0, &e) == NULL && strstr(e.msg, "r.2: its events (Ir D1mw) are "
								      "not those of ") != NULL);
	files[1] = file(1, "r.2", "cmd: prog\nevents: Ir D1mr\nfl=a\nfn=f\n1 1 1\nsummary: 1 1\n");
	CHECK(compare(files, 2, "D1mw", 20, 0, &e) == NULL &&
	      strstr(e.msg, "no event `D1mw` in ") != NULL && strstr(e.msg, "its events are Ir D1mr"));
	files[1] = file(1, "r.2", "cmd: prog\nevents: Ir D1mr\n1 1\n");
	CHECK(compare(files, 2, "D1mr", 20, 0, &e) == NULL && strstr(e.msg, "r.2") != NULL);
}

int main(void)
{
	PLAN(5);
	if (mkdtemp(dir) == NULL)
		return 1;
	RUN(naming_and_merging);
	RUN(ranking_ties_and_top);
	RUN(labels);
	RUN(default_event);
	RUN(refusals);
	char cmd[sizeof(dir) + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return CHECK_DONE();
}
