/* Conversion of the Valgrind tool's pipe stream into trace records. */
#ifndef CGTRACE_VG_STREAM_H
#define CGTRACE_VG_STREAM_H

#include <stdint.h>

#include "backend.h"
#include "trace.h"
#include "vg_transport.h"

struct vg_stream_result {
	int header_written;	/* the tool started and the HEADER record is out */
	int fini_seen;		/* the tool reached its end-of-run hook */
	int exit_called;	/* ... after the program called exit (else a signal) */
	int32_t exit_code;
	int truncated;		/* the stream stopped in the middle of an item */
	int exec_ended;		/* ... right after the program called execve */
	uint32_t fork_pid;	/* vg_stream_run stopped at a fork: the child's pid */
	uint64_t raw_bytes;
	/* executions cut short by a fault not at an access (a SIGFPE): only
	   their entries are recorded */
	uint64_t cuts_unplaced;
	struct cgt_trace_counts counts;
	/* what of counts Cachegrind does not count (cgt_counts_add_uncounted) */
	struct cgt_trace_counts uncounted;
	struct record_build_ids build_ids;	/* dir set by the caller */
};

/* A conversion.  header must hold everything but what the tool reports
   (recorder version, largest access size); it is written when the tool
   says hello.  res and e live as long as the conversion. */
struct vg_stream;
int vg_stream_open(struct vg_stream **c, struct cgt_trace_header *header,
		   struct vg_stream_result *res, struct cgt_error *e);

/* Reads the tool's stream from t, writing records to w, until it ends (0)
   or the program forks (VG_STREAM_FORK: res->fork_pid is the child, and
   everything before the fork is in w).  Then call it again to go on: in
   the parent's sink with the same t and w, in a sink forked for the child
   after vg_stream_follow_child, with the child's. */
#define VG_STREAM_FORK 1
int vg_stream_run(struct vg_stream *c, const struct vg_transport *t, struct cgt_writer *w);
void vg_stream_follow_child(struct vg_stream *c);

/* Adds the counts up into res and frees c. */
void vg_stream_close(struct vg_stream *c);

#endif
