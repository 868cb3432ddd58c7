/*
 * pt-compare: the PT round trip's verdict on one program.
 *
 *   pt-compare NAME COLLAPSED DECODED
 *
 * Reads the collapsed source trace and the decode of the synthesized PT
 * trace (any trace cgtrace can decode), and prints:
 *  - the instruction streams compared position by position (thread,
 *    address, length): the mismatches;
 *  - per instruction, the data reads and writes of each, and every
 *    difference put down to its cause, from the instruction's class:
 *      rep        a REP string instruction, one execution for all its
 *                 iterations: when it ran zero times it accessed nothing
 *      masked     masked or gathered accesses: the elements done are unknown
 *      vex-split  VEX makes several accesses of one (xsave, xrstor, fxsave,
 *                 fxrstor) or goes through memory where the instruction
 *                 does not (bt, bts, btr, btc on registers)
 *      vex-unused VEX dropped a load whose value it found unused
 *    anything else is "unexplained";
 *  - and last "pt round trip NAME: I instructions, M mismatches".
 * Exit status 0 when there are no mismatches and nothing unexplained.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

struct counts {
	uint64_t ip;
	uint32_t map_epoch;
	uint64_t execs[2], reads[2], writes[2];
};

static struct counts *counts_of(struct cgt_map *t, uint64_t ip)
{
	struct counts *c = cgt_map_get(t, ip);
	if (c == NULL) {
		if ((c = calloc(1, sizeof(*c))) == NULL || cgt_map_put(t, ip, c) < 0) {
			fprintf(stderr, "pt-compare: out of memory\n");
			exit(1);
		}
		c->ip = ip;
	}
	return c;
}

/* One instruction of a stream, with the accesses it made. */
struct step {
	uint32_t tid;
	uint64_t ip;
	uint32_t len, reads, writes, map_epoch;
};

/* The instructions of a trace, one at a time. */
struct stream {
	struct cgt_decoder *d;
	struct cgt_batch b;
	struct cgt_exec x;	/* the execution being walked (op < x.n_ops) */
	int in_batch;
	uint32_t op;
	uint32_t value;
	int done;
};

static int next_step(struct stream *s, struct step *out)
{
	struct cgt_error e;
	for (;;) {
		if (s->done)
			return 0;
		if (s->op >= s->x.n_ops) {
			int rc = s->in_batch ? cgt_batch_next(&s->b, &s->x, &e) : 0;
			if (rc == 0 && (rc = cgt_decoder_next(s->d, &s->b, &e)) > 0) {
				s->in_batch = 1;
				continue;
			}
			if (rc < 0) {
				fprintf(stderr, "pt-compare: %s\n", e.msg);
				exit(1);
			}
			if (rc == 0) {
				s->done = 1;
				return 0;
			}
			s->op = 0;
			s->value = 0;
			continue;
		}
		const struct cgt_exec *x = &s->x;
		const struct cgt_block *blk = x->block;
		/* At an INSN op: gather the instruction's ops. */
		const struct cgt_op *op = &blk->ops[s->op++];
		memset(out, 0, sizeof(*out));
		out->tid = x->tid;
		out->ip = blk->insns[op->insn].addr;
		out->len = blk->insns[op->insn].len;
		out->map_epoch = blk->map_epoch;
		while (s->op < x->n_ops && blk->ops[s->op].kind != CGT_OP_INSN) {
			unsigned kind = blk->ops[s->op].kind;
			uint64_t v = cgt_op_has_value(kind) ? x->values[s->value++] : 0;
			int done = v != CGT_NO_ACCESS;
			out->reads += done && (kind == CGT_OP_READ || kind == CGT_OP_MODIFY ||
					       kind == CGT_OP_READ_GUARDED);
			out->writes += done && (kind == CGT_OP_WRITE || kind == CGT_OP_WRITE_GUARDED);
			s->op++;
		}
		return 1;
	}
}

static const char *cause_of(const struct x86_insn *in, const struct counts *c)
{
	static const char *const split[] = { "xsave", "xsave64", "xsavec", "xsavec64", "xsaveopt",
					     "xsaveopt64", "xrstor", "xrstor64", "fxsave", "fxsave64",
					     "fxrstor", "fxrstor64", "bt", "bts", "btr", "btc", NULL };
	if (in->caveat & X86_REP)
		return "rep";
	if (in->caveat & X86_MASKED)
		return "masked";
	for (int i = 0; split[i]; i++)
		if (strcmp(in->mnemonic, split[i]) == 0)
			return "vex-split";
	if (c->reads[1] > c->reads[0] && c->writes[0] == c->writes[1])
		return "vex-unused";
	return "unexplained";
}

int main(int argc, char **argv)
{
	struct stream a = { 0 }, b = { 0 };
	struct cgt_error e;
	struct cgt_map t = { 0 };

	if (argc != 4) {
		fprintf(stderr, "usage: pt-compare NAME COLLAPSED DECODED\n");
		return 2;
	}
	const struct cgt_decoder_options talk = { .notes = stderr };
	if (cgt_decoder_open(&a.d, argv[2], &talk, &e) < 0 || cgt_decoder_open(&b.d, argv[3], &talk, &e) < 0) {
		fprintf(stderr, "pt-compare: %s\n", e.msg);
		return 1;
	}
	uint64_t insns = 0, mismatches = 0;
	struct step x, y;
	/* Thread numbers: the source's are Valgrind's, the decode's count in
	   order of appearance; they correspond one to one. */
	uint32_t thread_map[4096] = { 0 };
	int more_a = next_step(&a, &x), more_b = next_step(&b, &y);
	while (more_a || more_b) {
		if (more_a && more_b) {
			insns++;
			if (x.tid < 4096 && thread_map[x.tid] == 0)
				thread_map[x.tid] = y.tid;
			uint32_t tid = x.tid < 4096 ? thread_map[x.tid] : x.tid;
			mismatches += tid != y.tid || x.ip != y.ip || x.len != y.len;
		} else {
			mismatches++;
		}
		if (more_a) {
			struct counts *c = counts_of(&t, x.ip);
			c->map_epoch = x.map_epoch;
			c->execs[0]++;
			c->reads[0] += x.reads;
			c->writes[0] += x.writes;
			more_a = next_step(&a, &x);
		}
		if (more_b) {
			struct counts *c = counts_of(&t, y.ip);
			c->execs[1]++;
			c->reads[1] += y.reads;
			c->writes[1] += y.writes;
			more_b = next_step(&b, &y);
		}
	}

	static const char *const causes[] = { "rep", "masked", "vex-split", "vex-unused", "unexplained" };
	int64_t dr[5] = { 0 }, dw[5] = { 0 };
	uint64_t n[5] = { 0 };
	for (size_t i = 0; i < t.cap; i++) {
		const struct counts *c = t.slots[i].value;
		if (c == NULL || (c->reads[0] == c->reads[1] && c->writes[0] == c->writes[1]))
			continue;
		const char *cause = c->execs[0] == 0 ? "unexplained"
						     : cause_of(code_classify(a.d, c->map_epoch, c->ip), c);
		for (int k = 0; k < 5; k++) {
			if (strcmp(cause, causes[k]) != 0)
				continue;
			n[k]++;
			dr[k] += (int64_t)c->reads[1] - (int64_t)c->reads[0];
			dw[k] += (int64_t)c->writes[1] - (int64_t)c->writes[0];
			if (k == 4)
				printf("  unexplained: %#llx %s: reads %llu -> %llu, writes %llu -> %llu\n",
				       (unsigned long long)c->ip,
				       c->execs[0] ? code_classify(a.d, c->map_epoch, c->ip)->mnemonic : "?",
				       (unsigned long long)c->reads[0], (unsigned long long)c->reads[1],
				       (unsigned long long)c->writes[0], (unsigned long long)c->writes[1]);
		}
	}
	printf("%s: Dr and Dw, decoded minus source, by cause:\n", argv[1]);
	for (int k = 0; k < 5; k++)
		if (n[k] > 0 || k == 4)
			printf("  %-12s %5llu instructions  Dr %+lld  Dw %+lld\n", causes[k],
			       (unsigned long long)n[k], (long long)dr[k], (long long)dw[k]);
	printf("pt round trip %s: %llu instructions, %llu mismatches\n", argv[1],
	       (unsigned long long)insns, (unsigned long long)mismatches);
	cgt_decoder_close(a.d);
	cgt_decoder_close(b.d);
	for (size_t i = 0; i < t.cap; i++)
		free(t.slots[i].value);
	cgt_map_free(&t);
	return mismatches == 0 && n[4] == 0 ? 0 : 1;
}
