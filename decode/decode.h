/*
 * Decoding: a trace file -> the executed instruction stream, in program
 * order, in batches of block executions.
 *
 * A batch is read one execution at a time with cgt_batch_next, inline, so
 * that the consumer's loop and the decoding compile into one; keep the
 * batch in a local of that loop.
 *
 * Each execution (struct cgt_exec, trace.h) names a block -- its
 * instructions and, in order, the ops they perform: instruction fetches,
 * data accesses with their sizes, conditional exits, the indirect branch --
 * and carries the executed prefix's values: data addresses
 * (CGT_NO_ACCESS for a guarded access whose guard was false), branch
 * outcomes (1 taken, 0 not) and indirect targets.  A consumer walks
 * block->ops[0 .. n_ops) and reads values[k] for op k; no call per
 * instruction.
 *
 * Instruction addresses are resolved with the module map: the mapping that
 * covered an address when the block was defined is the one whose
 * epoch_mapped <= block->map_epoch < epoch_unmapped.
 */
#ifndef CGTRACE_DECODE_H
#define CGTRACE_DECODE_H

#include <stdio.h>

#include "trace.h"

struct cgt_decoder;

/* Executions in stream order (one EVENTS record's), or a mark: a client
   request or a signal, between the executions before and after it (then
   mark.kind is not CGT_MARK_NONE and the batch has no executions; its
   text is valid until the next batch). */
struct cgt_batch {
	struct cgt_events_cursor events;
	struct cgt_mark mark;
};

/* The batch's next execution: 1 (*x set, its values valid until the next
   call), 0 at the batch's end, negative on error (e set). */
static inline __attribute__((always_inline)) int cgt_batch_next(struct cgt_batch *b,
								 struct cgt_exec *x,
								 struct cgt_error *e)
{
	return cgt_events_next(&b->events, x, e);
}

/* The stack pointer at the entry of x, the batch's execution just read,
   whose block has_sp (cgt_events_sp): for every such execution, in order,
   or never. */
static inline int cgt_batch_sp(struct cgt_batch *b, const struct cgt_exec *x, uint64_t *sp,
			       struct cgt_error *e)
{
	return cgt_events_sp(&b->events, x, sp, e);
}

struct cgt_mapping {
	struct cgt_module module;
	uint32_t epoch_mapped;
	uint32_t epoch_unmapped;	/* UINT32_MAX while mapped */
};

/* How opening a trace goes.  A pt trace is decoded first, into
   FOO.decoded.zst beside it for later runs to replay; where that cannot
   be, into a file in scratch_dir for this run only (NULL: then it fails).
   It says so, with its warnings, on notes, and shows a progress line on
   progress (NULL streams: silence).  pt_window: the most bytes of PT
   decoded at a time, 0 for the default (tests make it small, to cut
   segments often).  No options: all of these NULL or 0. */
struct cgt_decoder_options {
	FILE *notes;
	FILE *progress;
	const char *scratch_dir;
	size_t pt_window;
};

int cgt_decoder_open(struct cgt_decoder **d, const char *path, const struct cgt_decoder_options *o,
		     struct cgt_error *e);
const struct cgt_trace_header *cgt_decoder_header(const struct cgt_decoder *d);
uint32_t cgt_decoder_version(const struct cgt_decoder *d);	/* of the trace format */
/* Opened on a pt trace: the decode it replays, a trace of its own that
   another pass can open: FOO.decoded.zst, or the file made for this run
   only, removed when d is closed.  NULL for any other trace. */
const char *cgt_decoder_replayed(const struct cgt_decoder *d);
/* Whether that decode is kept for later runs (FOO.decoded.zst). */
int cgt_decoder_replay_kept(const struct cgt_decoder *d);
/* Segments taken so far (all of them once the end is reached). */
uint64_t cgt_decoder_segments(const struct cgt_decoder *d);

/* 1: *b holds the next executions (valid until the next call); 0: end of
   the trace; negative: error.  An error inside the batch comes from
   cgt_batch_next. */
int cgt_decoder_next(struct cgt_decoder *d, struct cgt_batch *b, struct cgt_error *e);

/*
 * Decoding in parallel.  A trace is cut into segments (TRACE-FORMAT.md,
 * "Segments") that decode on their own: workers, each on a thread of its
 * own, take segments in stream order and decode them, while the blocks and
 * module mappings that segments define become known in stream order.
 * cgt_decoder_next is one worker taking every segment in turn; use one or
 * the other.  A trace of version 1 is one segment.
 */
struct cgt_decode_worker;

struct cgt_segment_info {
	uint64_t index;		/* 0, 1, ... in stream order */
	int first;		/* begins the trace: nothing ran before it */
	/* the outcomes of the last 64 conditional branches before it, the
	   last in bit 0 */
	uint64_t cond_history;
	/* the last CACHEGRIND_START/STOP request before it (enum
	   cgt_cachegrind_instr) */
	uint8_t cachegrind_instr;
};

int cgt_decode_worker_open(struct cgt_decoder *d, struct cgt_decode_worker **w,
			   struct cgt_error *e);
/* Takes the next segment: 1 (*info set), 0 when none is left, negative on
   error (an earlier segment's, when one failed).  Thread-safe. */
int cgt_decode_worker_take(struct cgt_decode_worker *w, struct cgt_segment_info *info,
			   struct cgt_error *e);
/* The next executions of the segment taken: 1, 0 at its end, negative on
   error (and cgt_batch_next's). */
int cgt_decode_worker_next(struct cgt_decode_worker *w, struct cgt_batch *b, struct cgt_error *e);
/* After an error e of the segment's (cgt_batch_next's or the worker's):
   1 if it is a consequence of damage earlier in the trace -- a block
   defined in a lost frame -- and the rest of the segment is lost with it
   (noted; carry on with cgt_decode_worker_next, which skips it), 0 if it
   is an error. */
int cgt_decode_worker_lost(struct cgt_decode_worker *w, const struct cgt_error *e);
void cgt_decode_worker_close(struct cgt_decode_worker *w);

/* Every block defined so far (all of them once the end is reached; while
   workers run, only after they stopped). */
const struct cgt_block_table *cgt_decoder_blocks(const struct cgt_decoder *d);

/* The module map's epoch now: a block defined now gets it (a worker's
   frames are applied whole, so later records of the frame being read
   count too). */
uint32_t cgt_decoder_map_epoch(const struct cgt_decoder *d);

/* The mappings of the trace's first frame (those of the program's start):
   known from the open on, for work that can begin while it is decoded. */
size_t cgt_decoder_first_modules(const struct cgt_decoder *d, const struct cgt_module **m);

/* Every mapping seen so far (all of them once the end is reached). */
size_t cgt_decoder_mappings(const struct cgt_decoder *d, const struct cgt_mapping **m);
/* The mapping covering addr for a block defined at map_epoch, or NULL. */
const struct cgt_mapping *cgt_decoder_find_mapping(const struct cgt_decoder *d, uint64_t addr,
						   uint32_t map_epoch);
/* The same among maps[0 .. n) (cgt_decoder_mappings'). */
const struct cgt_mapping *cgt_mapping_find(const struct cgt_mapping *maps, size_t n, uint64_t addr,
					   uint32_t map_epoch);

/* After the end: the END record, or NULL if the trace has none (the
   recorder was killed or the file is truncated). */
const struct cgt_trace_end *cgt_decoder_end(const struct cgt_decoder *d);
/* cgt_decode_worker_lost for cgt_decoder_next's batches. */
int cgt_decoder_lost(struct cgt_decoder *d, const struct cgt_error *e);
/* After the end (read_all: the whole trace was read): prints to warn, one
   "cgtrace: warning: " line each, what made the trace incomplete -- each
   stretch of damage with the bytes, frames and segments whose executions
   were lost (TRACE-FORMAT.md, "Damage"), a truncation, a missing END --
   and returns 1; 0 if it is complete. */
int cgt_decoder_warn_incomplete(const struct cgt_decoder *d, int read_all, FILE *warn);
uint64_t cgt_decoder_file_size(const struct cgt_decoder *d);
/* Bytes of the file decoded so far (for progress). */
uint64_t cgt_decoder_file_offset(const struct cgt_decoder *d);

void cgt_decoder_close(struct cgt_decoder *d);

/* A trace of the pt backend is decoded (with libipt) into a trace of
   blocks and executions, which cgt_decoder_open() then reads: data
   addresses estimated from the memory samples (decode/pt/pt_estimate.h).
   o: as for cgt_decoder_open (notes: what could not be decoded;
   scratch_dir: for code bytes that have no file of their own).  The
   decode is written to fd (out_path names it in messages), which the
   caller made, and closes or removes. */
int cgt_pt_decode(const char *path, int fd, const char *out_path,
		  const struct cgt_decoder_options *o, struct cgt_error *e);

/* Stored decodes of another version are decoded again. */
#define CGT_PT_DECODER_VERSION 1

/* What `cgtrace info` adds to each module: describe prints lines of its
   own after the module's (where its symbols would be read from now). */
struct cgt_info_modules {
	void (*describe)(FILE *out, const struct cgt_module *m, void *arg);
	void *arg;
};

/* `cgtrace info`: header, module map (where: NULL, or what to add to each
   module), end and counts.  Returns 0, 1 if the trace is incomplete
   (warnings printed to warn), or an error (message in e). */
int cgt_trace_info(FILE *out, FILE *warn, const char *path, const struct cgt_decoder_options *o,
		   const struct cgt_info_modules *where, struct cgt_error *e);
/* `cgtrace dump`: one instruction a line with its accesses and branch
   facts; limit 0 means all.  Returns as cgt_trace_info. */
int cgt_trace_dump(FILE *out, FILE *warn, const char *path, const struct cgt_decoder_options *o,
		   uint64_t limit, struct cgt_error *e);

#endif
