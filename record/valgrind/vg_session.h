/*
 * One recording session of the Valgrind backend: a pipe from the tool, an
 * output file, the trace writer.  Used for the recorded program itself and,
 * with --trace-children=yes, for each child process.  Internal to
 * record/valgrind/.
 */
#ifndef CGTRACE_VG_SESSION_H
#define CGTRACE_VG_SESSION_H

#include <stdio.h>
#include <sys/types.h>

#include "record.h"
#include "trace.h"
#include "vg_stream.h"

/* Absolute path of the running cgtrace executable. */
char *vg_self_exe(void);
/* Path of the Valgrind tool binary installed beside cgtrace. */
char *vg_tool_path(void);

struct vg_session {
	const char *path;
	int out_fd;
	/* For the traces of the program's fork children (vg_session_run): */
	const char *tmpl;	/* the output name's template (%p: a pid) */
	FILE *notes;
	int quiet;
	struct cgt_writer *writer;
	struct cgt_trace_header header;
	struct vg_stream_result stream;
	struct cgt_error error;
	int failed;		/* error holds what went wrong */
	pid_t stop_pid;		/* stopped if the trace cannot go on; 0: none */
	int stopped;		/* ... and it was */
	/* In the sink of a fork child: its trace's first frame (its own
	   HEADER), then the parent's trace after its first frame up to the
	   fork (from, to: offsets in the parent's; at: in this one), copied
	   at the end or before a fork of its own, then its own stream. */
	int fork_child;
	int child_ready;	/* its trace is set up */
	struct cgt_error not_recorded;	/* else why not */
	struct cgt_output child_output;
	int parent_fd;
	uint64_t parent_from, parent_to, parent_at;
};

/* Converts the tool's stream until it ends.  On failure the stream is
   still drained, so the program never blocks on it, and stop_pid is
   stopped: SIGTERM, then SIGKILL if its stream has not ended within
   VG_STOP_GRACE_MS.
   At each fork of the program it forks a sink for the child, which
   writes the child's trace (named by tmpl with its pid), says so on notes
   and exits; vg_session_run returns in the parent's sink only, whose
   process must wait for its children before it exits. */
#define VG_STOP_GRACE_MS 3000
void vg_session_run(struct vg_session *s, struct vg_transport *t);
/* The END record for what the tool said at its end (the program's exit
   code, or a signal), in *end; NULL if the stream was cut short. */
const struct cgt_trace_end *vg_session_end_of_stream(const struct vg_session *s,
						     struct cgt_trace_end *end);

/* Writes the END record (none if end is NULL: the recording was cut
   short), closes the file.  Returns 0 or -1 (error set). */
int vg_session_finish(struct vg_session *s, const struct cgt_trace_end *end);

/* Closes the file and removes it, if its name still is this file's. */
void vg_session_drop(struct vg_session *s);
/* Says "cgtrace: recorded N instructions into FILE (...)" on notes, with
   what the build-id cache took. */
void vg_session_report(const struct vg_session *s, FILE *notes);

#endif
