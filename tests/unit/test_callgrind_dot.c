/* cgtrace report --format=dot (callgrind_dot.c) on a small hand-written
   callgrind.out: nodes and their inclusive costs with direct and mutual
   recursion, their order, the thresholds, the event chosen, a cycle with
   the program's root in it, names DOT must escape, and a write that
   fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "report.h"

static char path[] = "/tmp/cgtrace-test-callgrind-dot.XXXXXX";

/* main calls f (whose levels below the first are f'2, calling itself),
   tiny, a function whose name has a quote, a backslash and a tab, and
   even, which calls odd, which calls even: 1000 Ir and 99 Dr in all,
   its summary: line aside (the graph's total is what its functions
   cost). */
static const char profile[] =
	"events: Ir Dr\n"
	"summary: 2000 200\n"
	"fl=a.c\n"
	"fn=main\n"
	"1 10 1\n"
	"cfn=f\n"
	"calls=1 2\n"
	"2 500 50\n"
	"cfn=tiny\n"
	"calls=3 3\n"
	"3 2 0\n"
	"cfn=say \"hi\" \\n\tnow\n"
	"calls=1 4\n"
	"4 88 8\n"
	"cfn=even\n"
	"calls=1 5\n"
	"5 400 40\n"
	"fn=f\n"
	"10 100 10\n"
	"cfn=f'2\n"
	"calls=1 11\n"
	"11 400 40\n"
	"fn=f'2\n"
	"12 400 40\n"
	"cfn=f'2\n"
	"calls=9 12\n"
	"12 360 36\n"
	"fn=tiny\n"
	"20 2 0\n"
	"fn=say \"hi\" \\n\tnow\n"
	"30 88 8\n"
	"fn=even\n"
	"40 200 20\n"
	"cfn=odd\n"
	"calls=2 50\n"
	"41 390 39\n"
	"fn=odd\n"
	"50 200 20\n"
	"cfn=even\n"
	"calls=2 40\n"
	"51 300 30\n";

static struct cgt_callgrind_profile *p;

/* text read as a callgrind.out file; NULL if it could not be. */
static struct cgt_callgrind_profile *read_profile(const char *text)
{
	struct cgt_error e;
	struct cgt_callgrind_profile *read = NULL;
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	int written = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	if (!written || cgt_callgrind_read(path, NULL, &read, &e) < 0)
		printf("  cannot read the profile: %s\n", written ? e.msg : "a write failed");
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
	return read;
}

/* The graph for these options (malloc'd), or NULL with e set. */
static char *graph(const char *const *sort, unsigned n_sort, double node_threshold,
		   double edge_threshold, struct cgt_error *e)
{
	struct cgt_callgrind_annotate_options o = {
		.input = "t.out", .sort = sort, .n_sort = n_sort, .threshold = "99",
		.context = "8", .format = CGT_CALLGRIND_DOT, .node_threshold = node_threshold,
		.edge_threshold = edge_threshold,
	};
	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);
	int rc = cgt_callgrind_annotate(out, p, &o, e);
	fclose(out);
	if (rc < 0) {
		free(text);
		return NULL;
	}
	return text;
}

static int has(const char *text, const char *needle)
{
	if (text == NULL || strstr(text, needle) == NULL) {
		printf("  not in the graph: %s\n", needle);
		return 0;
	}
	return 1;
}

static void nodes(void)
{
	struct cgt_error e;
	char *g = graph(NULL, 0, 0.5, 0.1, &e);
	CHECK(g != NULL);
	CHECK(has(g, "digraph callgrind {\n"));
	CHECK(has(g, "Ir: 1,000 in all; functions from 0.5% inclusive, calls from 0.1%"));
	/* largest first, ties by name (a.c:even before a.c:f'2) */
	CHECK(has(g, "\tn1 [label=\"main\\na.c\\ninclusive 100.00% (1,000)\\nself 1.00% (10)\""));
	CHECK(has(g, "\tn2 [label=\"f\\na.c\\ninclusive 50.00% (500)\\nself 10.00% (100)\""));
	CHECK(has(g, "\tn3 [label=\"even\\na.c\\ninclusive 40.00% (400)"));
	/* what f paid for it, not its calls' nested costs added (760) */
	CHECK(has(g, "\tn4 [label=\"f'2\\na.c\\ninclusive 40.00% (400)\\nself 40.00% (400)\""));
	/* called only from inside its cycle: what even paid for it */
	CHECK(has(g, "\tn5 [label=\"odd\\na.c\\ninclusive 39.00% (390)"));
	CHECK(has(g, "tooltip=\"a.c:main\""));
	/* 0.2% */
	CHECK(g == NULL || strstr(g, "tiny") == NULL);
	free(g);
}

static void escaping(void)
{
	struct cgt_error e;
	char *g = graph(NULL, 0, 0.5, 0.1, &e);
	CHECK(has(g, "\tn6 [label=\"say \\\"hi\\\" \\\\n\\\\x09now\\na.c\\ninclusive 8.80% (88)"));
	CHECK(has(g, "tooltip=\"a.c:say \\\"hi\\\" \\\\n\\\\x09now\""));
	free(g);
}

static void edges(void)
{
	struct cgt_error e;
	char *g = graph(NULL, 0, 0.5, 0.1, &e);
	CHECK(has(g, "\tn1 -> n2 [label=\"1 call\\n50.00% (500)\", penwidth="));
	CHECK(has(g, "\tn1 -> n6 [label=\"1 call\\n8.80% (88)\""));
	/* calls inside a cycle: their count only */
	CHECK(has(g, "\tn4 -> n4 [label=\"9 calls\", style=dashed"));
	CHECK(has(g, "\tn3 -> n5 [label=\"2 calls\", style=dashed"));
	CHECK(has(g, "\tn5 -> n3 [label=\"2 calls\", style=dashed"));
	/* costliest first */
	CHECK(g != NULL && strstr(g, "n1 -> n2") < strstr(g, "n1 -> n6"));
	free(g);
	/* a call below the edge threshold goes, its function stays */
	g = graph(NULL, 0, 0.5, 10, &e);
	CHECK(has(g, "\tn6 [label="));
	CHECK(g == NULL || strstr(g, "-> n6") == NULL);
	CHECK(has(g, "\tn1 -> n2 ["));
	free(g);
	/* and a function below the node threshold takes its calls along */
	g = graph(NULL, 0, 45, 0, &e);
	CHECK(has(g, "\tn2 [label=\"f\\n"));
	CHECK(g == NULL || (strstr(g, "\tn3 ") == NULL && strstr(g, "-> n3") == NULL));
	free(g);
}

static void event(void)
{
	struct cgt_error e;
	const char *dr[] = { "Dr" }, *none[] = { "Dw" };
	char *g = graph(dr, 1, 0.5, 0.1, &e);
	CHECK(has(g, "Dr: 99 in all"));
	CHECK(has(g, "\tn1 [label=\"main\\na.c\\ninclusive 100.00% (99)\\nself 1.01% (1)\""));
	free(g);
	CHECK(graph(none, 1, 0.5, 0.1, &e) == NULL);
	CHECK(strstr(e.msg, "--sort event `Dw' did not appear in input") != NULL);
}

/* root calls other, which calls root again: nothing outside the cycle
   calls it, so both cost the whole cycle (what other paid for root's
   nested call is not root's cost). */
static void root_cycle(void)
{
	struct cgt_error e;
	struct cgt_callgrind_profile *whole = p;
	p = read_profile("events: Ir\n"
			 "fn=root\n"
			 "1 10\n"
			 "cfn=other\n"
			 "calls=1 2\n"
			 "2 90\n"
			 "fn=other\n"
			 "3 80\n"
			 "cfn=root\n"
			 "calls=1 1\n"
			 "4 5\n");
	CHECK(p != NULL);
	if (p != NULL) {
		char *g = graph(NULL, 0, 0.5, 0.1, &e);
		CHECK(has(g, "[label=\"root\\ninclusive 100.00% (90)\\nself 11.11% (10)\""));
		CHECK(has(g, "[label=\"other\\ninclusive 100.00% (90)\\nself 88.89% (80)\""));
		free(g);
		cgt_callgrind_free(p);
	}
	p = whole;
}

static void write_error(void)
{
	struct cgt_error e;
	struct cgt_callgrind_annotate_options o = {
		.input = "t.out", .threshold = "99", .context = "8", .format = CGT_CALLGRIND_DOT,
	};
	FILE *full = fopen("/dev/full", "w");
	CHECK(full != NULL);
	if (full == NULL)
		return;
	CHECK(cgt_callgrind_annotate(full, p, &o, &e) < 0);
	CHECK_EQ(e.status, cgt_err_io);
	CHECK(strstr(e.msg, "cannot write the report") != NULL);
	fclose(full);
}

int main(void)
{
	if ((p = read_profile(profile)) == NULL)
		return 1;
	PLAN(6);
	RUN(nodes);
	RUN(escaping);
	RUN(edges);
	RUN(event);
	RUN(root_cycle);
	RUN(write_error);
	cgt_callgrind_free(p);
	return CHECK_DONE();
}
