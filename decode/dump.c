/*
 * `cgtrace dump TRACE`: the decoded stream, one instruction a line:
 *
 *   T<tid> <address> <length>  [SP <sp>] [R|W|M <address>:<size>]... [Bc taken|not-taken]
 *       [Bi <target>] [-> <jump kind> [<destination>]]
 *
 * A guarded access whose guard was false shows as "R-" / "W-" with its size.
 * SP, where the trace has it, is the stack pointer at the block's entry;
 * the jump, where the trace has it, ends the block's last instruction: how
 * the execution left it (boring, call, return, syscall, client-request or
 * other) and where to, when the code says; or, for an execution a fault
 * cut short, "-> cut short by a fault at its last access" or, where the
 * recorder could not tell, "... somewhere after its entry".
 *
 * Between them, in stream order, a client request or a signal, as a line
 * of its own that starts with '#':
 *
 *   # T<tid> request <code> [<text>, control characters and \ as \xNN]
 *   # T<tid> signal <number> delivered [on the alternate stack] | returned
 */
#include <inttypes.h>
#include <unistd.h>

#include "decode.h"

static void print_mark(FILE *out, const struct cgt_mark *m)
{
	if (m->kind == CGT_MARK_REQUEST) {
		fprintf(out, "# T%u request %#x%s", m->tid, m->code, m->text[0] ? " " : "");
		/* the program's bytes: control characters escaped, one line */
		for (const unsigned char *c = (const unsigned char *)m->text; *c; c++)
			if (*c < 0x20 || *c == 0x7f || *c == '\\')
				fprintf(out, "\\x%02x", *c);
			else
				fputc(*c, out);
		fputc('\n', out);
	} else
		fprintf(out, "# T%u signal %u %s\n", m->tid, m->signo,
			m->kind == CGT_MARK_SIGNAL_RETURNED ? "returned"
			: m->alt_stack			    ? "delivered on the alternate stack"
							    : "delivered");
}

static void print_op(FILE *out, const struct cgt_exec *x, uint32_t k, uint64_t v)
{
	const struct cgt_op *op = &x->block->ops[k];

	switch (op->kind) {
	case CGT_OP_READ:
	case CGT_OP_WRITE:
	case CGT_OP_MODIFY:
	case CGT_OP_READ_GUARDED:
	case CGT_OP_WRITE_GUARDED: {
		static const char letter[] = " RWMRW";
		if (v == CGT_NO_ACCESS)
			fprintf(out, "  %c- :%u", letter[op->kind], op->size);
		else
			fprintf(out, "  %c %#" PRIx64 ":%u", letter[op->kind], v, op->size);
		break;
	}
	case CGT_OP_COND:
	case CGT_OP_COND_INV:
		fprintf(out, "  Bc %s", cgt_exec_branch_taken(x, k) ? "taken" : "not-taken");
		break;
	case CGT_OP_INDIRECT:
		fprintf(out, "  Bi %#" PRIx64, v);
		break;
	case CGT_OP_SP:
		fprintf(out, "  SP %#" PRIx64, v);
		break;
	default:
		break;
	}
}

int cgt_trace_dump(FILE *out, FILE *warn, const char *path, const struct cgt_decoder_options *o,
		   uint64_t limit, struct cgt_error *e)
{
	struct cgt_decoder *d;
	struct cgt_batch b;
	uint64_t printed = 0;
	int rc = cgt_decoder_open(&d, path, o, e);

	if (rc < 0)
		return rc;
	while ((limit == 0 || printed < limit) && (rc = cgt_decoder_next(d, &b, e)) > 0) {
		struct cgt_exec exec = { 0 };
		if (b.mark.kind != CGT_MARK_NONE)
			print_mark(out, &b.mark);
		while ((limit == 0 || printed < limit) && (rc = cgt_batch_next(&b, &exec, e)) > 0) {
			const struct cgt_exec *x = &exec;
			const struct cgt_block *blk = x->block;
			int open_line = 0;
			uint32_t j = 0;	/* value ordinal */
			uint64_t sp = 0;
			if (blk->has_sp && (rc = cgt_batch_sp(&b, x, &sp, e)) < 0)
				break;
			for (uint32_t k = 0; k < x->n_ops; k++) {
				const struct cgt_op *op = &blk->ops[k];
				if (op->kind == CGT_OP_INSN) {
					if (open_line)
						fputc('\n', out);
					if (limit != 0 && printed == limit) {
						open_line = 0;
						break;
					}
					const struct cgt_insn *in = &blk->insns[op->insn];
					fprintf(out, "T%u %#" PRIx64 " %u", x->tid, in->addr, in->len);
					open_line = 1;
					printed++;
				} else {
					print_op(out, x, k,
						 op->kind == CGT_OP_SP	     ? sp
						 : cgt_op_has_value(op->kind) ? x->values[j++]
									     : 0);
				}
			}
			if (open_line && blk->cut_from && x->exit == 0) {
				fprintf(out, "  -> cut short by a fault %s",
					blk->cut_kind == CGT_CUT_AT_ACCESS ? "at its last access" : "somewhere after its entry");
			} else if (open_line && blk->jumps != NULL) {
				static const char *const kinds[CGT_JUMP_KIND_COUNT] = {
					"boring", "call", "return", "syscall", "client-request", "other"
				};
				const struct cgt_jump *j = &blk->jumps[x->exit];
				fprintf(out, "  -> %s", kinds[j->kind]);
				if (j->dst_known)
					fprintf(out, " %#" PRIx64, j->dst);
			}
			if (open_line)
				fputc('\n', out);
		}
		if (rc < 0 && !cgt_decoder_lost(d, e))
			break;
	}
	if (rc >= 0)
		rc = cgt_decoder_warn_incomplete(d, limit == 0 || printed < limit, warn);
	cgt_decoder_close(d);
	return rc;
}
