/*
 * What the recording backends share: the trace header of a new recording,
 * opening the output without destroying a user's file, and the program's
 * exit status and signals while it runs.  Internal to record/.
 */
#ifndef CGTRACE_BACKEND_H
#define CGTRACE_BACKEND_H

#include <stdio.h>
#include <sys/types.h>

#include "trace.h"

/* Command line, working directory, time and host; backend name and the
   program's pid. */
int record_header_init(struct cgt_trace_header *h, const char *backend, char *const *argv,
		       long pid);

/*
 * Opens path for writing a trace.  Refuses (with a message) a path that
 * holds something other than a cgtrace trace, so a mistyped -o never
 * destroys a user's file.  Returns the fd or -1.
 */
int record_open_output(const char *path, struct cgt_error *e);
struct cgt_output;	/* record.h */
/* The same through a temporary beside it (a device or FIFO is written
   through), which cgt_output_commit(o) names path: for a trace whose name
   another process may take meanwhile.  Returns the fd or -1. */
int record_open_output_temporary(struct cgt_output *o, const char *path, struct cgt_error *e);

/* cgtrace's exit status for the program's wait status: its own, or 128 +
   the signal that killed it. */
int record_exit_status(int wstatus);

/* An ignored SIGCHLD (a shell may start cgtrace so) has the kernel reap
   children unasked, and the program's exit status is lost: the recorder
   takes the default, and the program's child process gives the program
   the disposition cgtrace was given, between fork and exec. */
void record_take_sigchld(void);
void record_give_back_sigchld(void);

/* While the program (pid) runs, cgtrace must outlive it to finish the
   trace: terminal signals reach the program directly (same process
   group), and termination requests sent to cgtrace alone are passed on.
   pid 0 restores the defaults. */
void record_shield_signals(pid_t pid);

/* The children a recording waits for: all but those this process was
   given when it started (children.c). */
struct record_children {
	pid_t *given;		/* children it had before it started any */
	size_t n_given, cap;
};

/* Notes the children this process has now, before it starts any:
   0, or a status with e set. */
int record_children_init(struct record_children *c, struct cgt_error *e);
/* Waits until no child of this process is left but the given ones: those
   it started, and those that reached it as a subreaper.  c NULL: a
   process cgtrace forked, all of whose children are its own. */
void record_children_wait(const struct record_children *c);
void record_children_free(struct record_children *c);

/* Says "cgtrace: MSG" on a line of notes (the caller's stream, NULL for
   none), in one write, flushed: forked processes write there too. */
void record_note(FILE *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same for a forked child between fork and exec, which must not use
   stdio (it has a copy of the parent's buffers, and of locks that a thread
   which did not come along may hold): one write(2) to fd, the notes
   stream's descriptor taken before the fork (-1: none). */
void record_child_note(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The modules of a recording kept in the build-id cache (trace.h) as they
   are mapped.  A cache that cannot be written is given up for the rest of
   the recording, which goes on; record_build_ids_report says so. */
struct record_build_ids {
	const char *dir;	/* NULL: none kept */
	struct cgt_build_id_added added;
	int failed;
	struct cgt_error error;
};

void record_keep_module(struct record_build_ids *b, const struct cgt_module *m);
/* What the summary line adds: "; build-id cache DIR: N new files, M MB
   copied" (or "" if no cache); after a warning on notes if the cache
   failed. */
const char *record_build_ids_report(const struct record_build_ids *b, FILE *notes, char *buf,
				    size_t cap);

#endif
