/*
 * Recording: runs a program and captures its execution into a trace file.
 * Backends: "valgrind" (record/valgrind/, works on every x86-64 Linux host)
 * and "pt" (Intel Processor Trace; see record/pt/).
 */
#ifndef CGTRACE_RECORD_H
#define CGTRACE_RECORD_H

#include <stdio.h>

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
	/* The valgrind backend's translation: 0 (the default), Callgrind's
	   (--vex-guest-chase=no --vex-iropt-unroll-thresh=0), which counts what
	   the CPU executed and gives call graphs; 1, Cachegrind's default, for
	   comparing with plain Cachegrind runs. */
	int vex_guest_chase;
	int vex_guest_chase_given;	/* named: an error with the pt backend */
	int verbose;		/* show the backend's own messages */
	int quiet;		/* no closing summary line */
	const char *build_id_dir;	/* keep the modules in this build-id cache;
					   NULL: none */
	char *const *argv;	/* the program and its arguments */
	struct cgt_pt_options pt;
	/* Where the recorder says what it chose, what it recorded, and what
	   went wrong once the program has started: whole lines "cgtrace: ...",
	   as the user reads them (the CLI gives stderr); NULL: nowhere.  Its
	   descriptor is also written by forked processes: a child whose exec
	   fails, and the trace writers of child processes. */
	FILE *notes;
};

void cgt_pt_options_default(struct cgt_pt_options *pt);

#define CGT_DEFAULT_TRACE_NAME "cgtrace.%p.zst"

/*
 * Records argv[0] with its arguments.  The program's standard streams pass
 * through.
 *
 * When the recording cannot start, nothing runs: returns a negative
 * cgt_status with the message in e (cgt_err_not_found or
 * cgt_err_not_executable: argv[0] cannot be run).
 *
 * Once the program has started, returns the exit status of the run, and
 * says on o->notes what was recorded or what went wrong.  The status is
 * the program's own (128 + signal if it was killed; 127 or 126 if it could
 * not be executed after all, as from a shell), or 1 when its trace could
 * not be written (a full disk, the file size limit: the valgrind backend
 * stops the program; the pt backend passes a non-zero status of the
 * program's on) or when Valgrind exited 0 without starting the program.
 */
int cgt_record(const struct cgt_record_options *o, struct cgt_error *e);

/*
 * Valgrind runs cgtrace as its "launcher" (argv[1] is "--tool=cgtrace"):
 * on start-up, through Debian's valgrind wrapper, and for each child
 * process when --trace-children=yes.  Never returns on success; returns a
 * negative cgt_status with the message in e.  The trace writer it starts
 * for a child process says what it recorded, or why it could not, on
 * notes (NULL: nowhere).
 */
int cgt_record_launcher(int argc, char **argv, FILE *notes, struct cgt_error *e);

/* Fills the CPU and cache fields of a trace header from this host. */
void cgt_host_describe(struct cgt_trace_header *h);

/* 1 if this host offers Intel PT through perf_event (sysfs intel_pt PMU). */
int cgt_host_has_intel_pt(void);

/* The first executable called name on $PATH (malloc'd), or NULL. */
char *cgt_find_in_path(const char *name);

/* Expands %p (pid), %q{VAR} (environment) and %% in a file name template.
   Returns a malloc'd string, or NULL with *why set. */
char *cgt_expand_output_name(const char *tmpl, long pid, const char **why);

/* ---- Output files (output.c) ------------------------------------------ */

/* CGT_OUTPUT_NAMED: a file the user named for an output of its own kind
   (a sweep's summary or plot): any file but a trace may be replaced. */
enum cgt_output_kind { CGT_OUTPUT_TRACE, CGT_OUTPUT_CGOUT, CGT_OUTPUT_NAMED, CGT_OUTPUT_CALLGRIND };

/*
 * Whether path may be written as a kind of output: refuses (negative, with
 * the message) a directory, any of the inputs (the same file by device and
 * inode, so through symlinks and hard links too), and a non-empty regular
 * file that is not of the kind (a trace is written only over a trace; a
 * cachegrind.out only over a cachegrind.out, a callgrind.out over a
 * callgrind.out, never over a trace).
 * Devices and FIFOs pass, and are never opened here.
 */
int cgt_output_check(const char *path, enum cgt_output_kind kind, const char *const *inputs,
		     size_t n_inputs, struct cgt_error *e);

/*
 * An output written whole and then put in place.  A regular file (or a
 * new one) is written to a temporary file beside it and renamed over it
 * by cgt_output_commit, so a failed run never destroys an earlier result;
 * a symlink is followed, and what it ends at is written or replaced (the
 * link stays); a device or FIFO is written through (write_path is path).
 * keep_existing: never replace anything; commit links the result to
 * path, or to the first free path.1, path.2, ...
 */
struct cgt_output {
	char *path;		/* as given */
	const char *write_path;	/* what to open and write */
	const char *written;	/* after commit: the name the result has */
	char *final;		/* the file the temporary becomes */
	char *temporary;	/* NULL when writing through */
	int keep_existing;
};

int cgt_output_prepare(struct cgt_output *o, const char *path, int keep_existing,
		       struct cgt_error *e);
int cgt_output_commit(struct cgt_output *o, struct cgt_error *e);
/* A message naming the temporary file is made to name path instead. */
void cgt_output_blame(const struct cgt_output *o, struct cgt_error *e);
/* Removes the temporary file (if not committed) and frees o. */
void cgt_output_discard(struct cgt_output *o);

#endif
