/*
 * What the recording backends share: the trace header of a new recording,
 * opening the output without destroying a user's file, and the program's
 * exit status and signals while it runs.  Internal to record/.
 */
#ifndef CGTRACE_BACKEND_H
#define CGTRACE_BACKEND_H

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

/* cgtrace's exit status for the program's wait status: its own, or 128 +
   the signal that killed it. */
int record_exit_status(int wstatus);

/* While the program (pid) runs, cgtrace must outlive it to finish the
   trace: terminal signals reach the program directly (same process
   group), and termination requests sent to cgtrace alone are passed on.
   pid 0 restores the defaults. */
void record_shield_signals(pid_t pid);

#endif
