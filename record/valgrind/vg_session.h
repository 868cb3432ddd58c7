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

#include "trace.h"
#include "vg_stream.h"

/* Absolute path of the running cgtrace executable. */
char *vg_self_exe(void);
/* Path of the Valgrind tool binary installed beside cgtrace. */
char *vg_tool_path(void);

struct vg_session {
	const char *path;
	int out_fd;
	struct cgt_writer *writer;
	struct cgt_trace_header header;
	struct vg_stream_result stream;
	struct cgt_error error;
	int failed;		/* error holds what went wrong */
	pid_t stop_pid;		/* stopped if the trace cannot go on; 0: none */
	int stopped;		/* ... and it was */
};

/* Converts the tool's stream until it ends.  On failure the stream is
   still drained, so the program never blocks on it, and stop_pid is
   stopped: SIGTERM, then SIGKILL if its stream has not ended within
   VG_STOP_GRACE_MS. */
#define VG_STOP_GRACE_MS 3000
void vg_session_run(struct vg_session *s, const struct vg_transport *t);

/* Writes the END record (none if end is NULL: the recording was cut
   short), closes the file.  Returns 0 or -1 (error set). */
int vg_session_finish(struct vg_session *s, const struct cgt_trace_end *end);

/* Says "cgtrace: recorded N instructions into FILE (...)" on notes, with
   what the build-id cache took. */
void vg_session_report(const struct vg_session *s, FILE *notes);

#endif
