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
	uint64_t raw_bytes;
	struct cgt_trace_counts counts;
	struct record_build_ids build_ids;	/* dir set by the caller */
};

/*
 * Reads the tool's stream from t until it ends, writing records to w.
 * header must hold everything but what the tool reports (recorder version,
 * largest access size); it is written when the tool says hello.
 */
int vg_stream_convert(const struct vg_transport *t, struct cgt_writer *w,
		      struct cgt_trace_header *header, struct vg_stream_result *res,
		      struct cgt_error *e);

#endif
