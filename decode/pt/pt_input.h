/*
 * A pt-backend trace read into memory (TRACE-FORMAT.md section 9): the
 * header and configuration, the module map and code images, each CPU's
 * packet stream reassembled from its AUX records (with the places where it
 * breaks), thread switches and memory samples with their times converted
 * to the TSC.  Internal to decode/.
 */
#ifndef CGTRACE_PT_INPUT_H
#define CGTRACE_PT_INPUT_H

#include "trace.h"

struct pt_image_bytes {
	uint64_t start;
	char *name;
	uint8_t *data;
	size_t len;
};

/* A zstd frame of the trace that holds AUX records. */
struct pt_frame_ref {
	uint64_t file_offset, stream_offset;
	size_t compressed_len;
	int first;		/* the file's first frame (it holds the stream header) */
};

/* One CPU's packet stream: not held in memory, but read again from the
   trace's frames when it is decoded (pt_aux_cursor).  breaks[] are
   positions in the stream where it does not continue the bytes before it
   (a lost or truncated piece): decoding starts afresh there. */
struct pt_cpu_stream {
	uint32_t cpu;
	uint64_t len;			/* bytes of packets in all */
	uint64_t next_offset;		/* the recorder's offset after the last piece */
	size_t *frames;			/* indexes in pt_input.frames, in file order */
	size_t n_frames, cap_frames;
	uint64_t *breaks;		/* sorted, distinct, each in (0, len) */
	size_t n_breaks, cap_breaks;
	uint64_t bytes_lost;
	/* Context switches on this CPU, in time order: the program's threads
	   and its child processes' (inherited events follow forks). */
	struct pt_switch { uint64_t tsc; uint32_t pid, tid; } *switches;
	size_t n_switches, cap_switches;
	/* While reading: runs of pieces that continue one another. */
	struct pt_run { uint64_t offset, pos, len; } *runs;
	size_t n_runs, cap_runs;
};

/* The most CPUs a trace's AUX and sideband records may name (as many as
   the intel_pt event may have ids). */
#define PT_MAX_CPUS CGT_PT_MAX_IDS

struct pt_sample {
	uint64_t tsc, ip, addr;
	uint32_t tid;
	uint8_t store;
};

struct pt_input {
	const char *path;
	struct cgt_trace_header header;
	struct cgt_pt_config config;
	int have_config;
	struct cgt_module *modules;
	size_t n_modules;
	struct pt_image_bytes *images;
	size_t n_images;
	struct pt_cpu_stream *cpus;
	size_t n_cpus;
	struct pt_sample *samples;	/* sorted by thread, then time */
	size_t n_samples, cap_samples;
	struct cgt_trace_end end;
	int have_end;
	uint64_t sideband_lost;		/* records the kernel dropped */
	char *truncation;		/* the file itself ended early */
	uint64_t file_size;
	int64_t file_mtime_ns;
	int fd;				/* the trace, open while in is */
	struct pt_frame_ref *frames;
	size_t n_frames, cap_frames;
};

int pt_input_read(struct pt_input *in, const char *path, struct cgt_error *e);
void pt_input_free(struct pt_input *in);

/* Reading one CPU's packets in order, piece by piece, without holding
   more than a frame of the trace. */
struct pt_aux_cursor {
	const struct pt_input *in;
	const struct pt_cpu_stream *s;
	struct cgt_frame frame;
	size_t next_frame;		/* in s->frames */
	int frame_loaded;
	const uint8_t *data;		/* the rest of the current piece */
	size_t len;
	uint64_t pos;			/* the stream position of data */
	size_t next_break;		/* in s->breaks */
};

void pt_aux_open(struct pt_aux_cursor *c, const struct pt_input *in, const struct pt_cpu_stream *s);
/* The bytes from the cursor on, up to the end of a piece or the next
   break: 1 (*p, *n set, *n > 0), 0 at the end of the stream, negative on
   error.  *at_break: a break is at the cursor (bytes before it are of
   another segment). */
int pt_aux_peek(struct pt_aux_cursor *c, const uint8_t **p, size_t *n, int *at_break,
		struct cgt_error *e);
/* Moves on n bytes of what pt_aux_peek showed. */
void pt_aux_skip(struct pt_aux_cursor *c, size_t n);
/* Moves past the break at the cursor. */
void pt_aux_pass_break(struct pt_aux_cursor *c);
void pt_aux_close(struct pt_aux_cursor *c);

/* The switch to the thread running on stream s at tsc, or NULL. */
const struct pt_switch *pt_input_switch_at(const struct pt_cpu_stream *s, uint64_t tsc);

#endif
