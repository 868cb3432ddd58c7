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

/* One CPU's packet stream.  breaks[] are positions in data where the
   stream does not continue the bytes before it (a lost or truncated
   piece): decoding starts afresh there. */
struct pt_cpu_stream {
	uint32_t cpu;
	uint8_t *data;
	size_t len, cap;
	uint64_t next_offset;		/* the recorder's offset after data */
	size_t *breaks;
	size_t n_breaks;
	uint64_t bytes_lost;
	/* Context switches on this CPU, in time order: the program's threads
	   and its child processes' (inherited events follow forks). */
	struct pt_switch { uint64_t tsc; uint32_t pid, tid; } *switches;
	size_t n_switches, cap_switches;
};

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
};

int pt_input_read(struct pt_input *in, const char *path, struct cgt_error *e);
void pt_input_free(struct pt_input *in);

/* The switch to the thread running on stream s at tsc, or NULL. */
const struct pt_switch *pt_input_switch_at(const struct pt_cpu_stream *s, uint64_t tsc);

#endif
