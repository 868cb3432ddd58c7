/*
 * Recording: runs a program and captures its execution into a trace file.
 * Backends: "valgrind" (record/valgrind/, works on every x86-64 Linux host)
 * and "pt" (Intel Processor Trace; see record/pt/).
 */
#ifndef CGTRACE_RECORD_H
#define CGTRACE_RECORD_H

#include "trace.h"

enum cgt_backend {
	CGT_BACKEND_AUTO,
	CGT_BACKEND_VALGRIND,
	CGT_BACKEND_PT,
};

/* The pt backend's settings; cgt_pt_options_default() gives the defaults. */
struct cgt_pt_options {
	int mtc_period;		/* MTC packets every 2^N crystal ticks; -1: off */
	int cyc;		/* cycle-accurate CYC packets */
	int retcomp;		/* return compression */
	int psb_period;		/* PSB every ~2^(N+11) bytes; -1: the PMU's default */
	uint64_t mem_period;	/* one memory sample every N loads (and stores) */
	uint32_t mem_ldlat;	/* minimum load latency of a sampled load, cycles */
	uint64_t buffer_bytes;	/* trace buffer per CPU; 0: as many as allowed */
	const char *sysfs_root;	/* "/sys"; another for tests */
};

struct cgt_record_options {
	const char *output;	/* file name template (%p, %q{VAR}, %%); NULL: default */
	enum cgt_backend backend;
	int trace_children;
	int verbose;		/* show the backend's own messages */
	int quiet;		/* no closing summary line */
	char *const *argv;	/* the program and its arguments */
	struct cgt_pt_options pt;
};

void cgt_pt_options_default(struct cgt_pt_options *pt);

#define CGT_DEFAULT_TRACE_NAME "cgtrace.%p.zst"

/*
 * Records argv[0] with its arguments.  The program's standard streams pass
 * through.  Returns the exit status cgtrace should exit with: the
 * program's own (128 + signal if it was killed), 127 / 126 if it cannot be
 * run, 1 if recording failed: before it ran, or when the trace could not
 * be written (a full disk, the file size limit: the program is stopped).
 */
int cgt_record(const struct cgt_record_options *o);

/*
 * Valgrind runs cgtrace as its "launcher" (argv[1] is "--tool=cgtrace"):
 * on start-up, through Debian's valgrind wrapper, and for each child
 * process when --trace-children=yes.  Never returns on success.
 */
int cgt_record_launcher(int argc, char **argv);

/* Fills the CPU and cache fields of a trace header from this host. */
void cgt_host_describe(struct cgt_trace_header *h);

/* 1 if this host offers Intel PT through perf_event (sysfs intel_pt PMU). */
int cgt_host_has_intel_pt(void);

/* The first executable called name on $PATH (malloc'd), or NULL. */
char *cgt_find_in_path(const char *name);

/* Expands %p (pid), %q{VAR} (environment) and %% in a file name template.
   Returns a malloc'd string, or NULL with *why set. */
char *cgt_expand_output_name(const char *tmpl, long pid, const char **why);

#endif
