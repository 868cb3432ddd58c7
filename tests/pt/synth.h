/*
 * The PT synthesizer (test-only): turns an exact Valgrind-backend trace of
 * a program into the trace the pt recorder would have written for the same
 * execution, and into the "collapsed source" trace -- the same execution
 * with each REP instruction's iterations as one execution, as Intel PT
 * reports them -- to compare the PT decoder's results with.
 */
#ifndef CGTRACE_SYNTH_H
#define CGTRACE_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "pt/x86_insn.h"
#include "trace.h"

/* ---- Instruction classes from the module files (code_bytes.c) ------- */

/* The instruction at ip, whose block was defined at map_epoch; d must
   have read the whole trace (so that it knows every mapping). */
const struct x86_insn *code_classify(const struct cgt_decoder *d, uint32_t map_epoch, uint64_t ip);

/* ---- Sideband: perf records as the kernel writes them (synth_sideband.c) */

/* The ids the synthesized events carry (PT_CONFIG lists them). */
#define SYNTH_ID_TRACE 100
#define SYNTH_ID_SIDEBAND 101
#define SYNTH_ID_LOADS 102
#define SYNTH_ID_STORES 103

struct sideband {
	struct cgt_writer *w;
	struct cgt_buf rec, out;
	uint32_t pid;
	struct cgt_error error;
};

void sideband_mmap2(struct sideband *s, uint32_t tid, uint64_t time, uint64_t addr, uint64_t len,
		    uint64_t pgoff, const char *path);
void sideband_comm_exec(struct sideband *s, uint32_t tid, uint64_t time, const char *comm);
void sideband_itrace_start(struct sideband *s, uint32_t tid, uint64_t time);
void sideband_switch(struct sideband *s, uint32_t tid, uint64_t time, int out);
void sideband_aux(struct sideband *s, uint64_t time, uint64_t offset, uint64_t size, uint64_t flags);
void sideband_exit(struct sideband *s, uint32_t tid, uint64_t time);
/* A memory sample of the loads (or stores) event. */
void sideband_sample(struct sideband *s, int store, uint32_t tid, uint64_t time, uint64_t ip,
		     uint64_t addr);

/* ---- The collapsed source trace (synth_collapsed.c) ----------------- */

struct collapsed;

/* One executed instruction: its ops as the Valgrind trace had them (data
   ops with their values; no exits), whether it is a conditional branch
   (and was taken) or an indirect one (and its target). */
struct insn_exec {
	uint32_t tid;
	uint64_t ip;
	uint32_t len;
	uint32_t n_ops;
	struct cgt_op ops[64];		/* op.insn is 0 */
	uint64_t values[64];		/* per op (data ops only) */
	int cond, taken;
	int indirect;
	uint64_t target;
};

struct collapsed *collapsed_open(const char *path, const struct cgt_trace_header *h);
void collapsed_module(struct collapsed *c, const struct cgt_module *m);
void collapsed_insn(struct collapsed *c, const struct insn_exec *x);
void collapsed_close(struct collapsed *c, const struct cgt_trace_end *end);

#endif
