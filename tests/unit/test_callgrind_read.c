/* The callgrind.out reader on small hand-written files: name compression
   (a pool per kind, ids as text), relative positions (from the line
   before, with positions "instr line" too), calls and their costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "report.h"

static char path[] = "/tmp/cgtrace-test-callgrind.XXXXXX";

static struct cgt_callgrind_profile *read_text(const char *text, struct cgt_error *e)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	struct cgt_callgrind_profile *p = NULL;
	if (cgt_callgrind_read(path, NULL, &p, e) < 0)
		return NULL;
	return p;
}

static const struct cgt_callgrind_fn *fn_named(const struct cgt_callgrind_profile *p, const char *name)
{
	for (size_t i = 0; i < p->n_fns; i++)
		if (strcmp(p->fns[i].name, name) == 0)
			return &p->fns[i];
	return NULL;
}

static uint64_t line_cost(const struct cgt_callgrind_profile *p, const char *file, uint64_t line,
			  unsigned event)
{
	for (size_t i = 0; i < p->n_files; i++)
		for (size_t j = 0; strcmp(p->files[i].name, file) == 0 && j < p->files[i].n_lines; j++)
			if (p->files[i].lines[j].line == line)
				return p->files[i].lines[j].cost->count[event];
	return UINT64_MAX;
}

static void compression(void)
{
	struct cgt_error e;
	struct cgt_callgrind_profile *p = read_text(
		"events: Ir Dr\n"
		"ob=(1) /bin/prog\n"
		"fl=(1) a.c\n"
		"fn=(1) main\n"
		"1 5 1\n"
		"cfl=(2) b.c\n"
		"cfn=(01) helper\n"	/* id "01" is not id "1" */
		"calls=3 10\n"
		"2 30 3\n"
		"fl=(2)\n"		/* the file pool: b.c */
		"fn=(01)\n"		/* the function pool: helper */
		"10 30 .\n"
		"fn=(1)\n"
		"11 7\n"
		"totals: 42 4\n", &e);
	CHECK(p != NULL);
	if (p == NULL)
		return;
	const struct cgt_callgrind_fn *m = fn_named(p, "a.c:main"), *h = fn_named(p, "b.c:helper"),
				      *hm = fn_named(p, "b.c:main");
	CHECK(m != NULL && h != NULL && hm != NULL);
	if (m && h && hm) {
		CHECK_EQ(m->self->count[0], 5);
		CHECK_EQ(m->calls->count[0], 30);
		CHECK(strcmp(m->object, "/bin/prog") == 0);
		CHECK_EQ(h->self->count[0], 30);
		CHECK_EQ(h->self->given, 1);	/* Dr "." */
		CHECK(h->called != NULL && h->called->count[1] == 3);
		CHECK_EQ(hm->self->count[0], 7);
	}
	CHECK_EQ(p->n_calls, 1);
	if (p->n_calls == 1)
		CHECK_EQ(p->calls[0].count, 3);
	CHECK(p->totals != NULL && p->totals->count[0] == 42);
	cgt_callgrind_free(p);
}

static void relative_positions(void)
{
	struct cgt_error e;
	struct cgt_callgrind_profile *p = read_text(
		"positions: line\n"
		"events: Ir\n"
		"fl=a.c\n"
		"fn=f\n"
		"10 1\n"
		"+2 2\n"	/* 12 */
		"-5 3\n"	/* 7 */
		"* 4\n"		/* 7 */
		"fn=g\n"
		"+1 5\n", &e);	/* 8: positions carry over fn= */
	CHECK(p != NULL);
	if (p != NULL) {
		CHECK_EQ(line_cost(p, "a.c", 10, 0), 1);
		CHECK_EQ(line_cost(p, "a.c", 12, 0), 2);
		CHECK_EQ(line_cost(p, "a.c", 7, 0), 7);
		CHECK_EQ(line_cost(p, "a.c", 8, 0), 5);
		cgt_callgrind_free(p);
	}
	/* instr line: the relative line is from the line before; the address is passed over */
	p = read_text("positions: instr line\n"
		      "events: Ir\n"
		      "fl=a.c\n"
		      "fn=f\n"
		      "0x400000 20 1\n"
		      "+4 +1 2\n"	/* line 21 */
		      "+3 * 4\n"	/* line 21 */
		      "-7 -3 8\n", &e);	/* line 18 */
	CHECK(p != NULL);
	if (p != NULL) {
		CHECK_EQ(line_cost(p, "a.c", 20, 0), 1);
		CHECK_EQ(line_cost(p, "a.c", 21, 0), 6);
		CHECK_EQ(line_cost(p, "a.c", 18, 0), 8);
		cgt_callgrind_free(p);
	}
}

static void errors(void)
{
	struct cgt_error e;
	CHECK(read_text("events: Ir\nfl=a.c\nfn=f\n-1 5\n", &e) == NULL);
	CHECK(strstr(e.msg, ":4: a line number below 0") != NULL);
	CHECK(read_text("events: Ir\nfl=a.c\nfn=(3)\n", &e) == NULL);
	CHECK(strstr(e.msg, ":3: a compressed name used before its definition") != NULL);
	CHECK(read_text("events: Ir\nfl=a.c\n1 5\n", &e) == NULL);
	CHECK(strstr(e.msg, ":3: expected fn= before a cost line") != NULL);
	CHECK(read_text("version: 2\nevents: Ir\n", &e) == NULL);
	CHECK(strstr(e.msg, ":1: a format of major version 2") != NULL);
}

int main(void)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	PLAN(3);
	RUN(compression);
	RUN(relative_positions);
	RUN(errors);
	unlink(path);
	return CHECK_DONE();
}
