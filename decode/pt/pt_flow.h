/*
 * The executed instructions of one CPU's packet stream, with libipt's
 * block decoder (a block: straight-line instructions, walked with their
 * lengths from pt_classify.h): an iterator that yields instructions, the points
 * where tracing starts (with the thread then running) and stops, timing
 * ticks, and losses.  After any decode error or overflow it resumes at the
 * next PSB (found with a packet-level index built first, since syncing
 * forward again can fail inside a damaged PSB+), and counts what it
 * skipped.
 *
 * The stream is decoded in windows of at most PT_FLOW_WINDOW bytes read
 * from the trace as they are needed (pt_aux_cursor), so memory does not
 * grow with the trace.  A segment longer than that is cut at a PSB: a
 * window ends just after the PSB+ of its last PSB (libipt stops exactly
 * where that PSB+ says the program was) and the next one starts at that
 * PSB, so the instructions are those of one decode of the whole segment.
 * Only a stretch of PT_FLOW_WINDOW bytes with no PSB in it is cut where
 * it is, and what follows up to the next PSB is lost (a decode error).
 * Internal to decode/.
 */
#ifndef CGTRACE_PT_FLOW_H
#define CGTRACE_PT_FLOW_H

#include "pt_classify.h"
#include "pt_code.h"
#include "pt_input.h"

struct pt_block_decoder;

#define PT_FLOW_WINDOW (16u << 20)
#define PT_FLOW_MIN_WINDOW 1024	/* a smaller window asked for: the default */
/* Blocks decoded without a packet read, at most: beyond, no progress. */
#define PT_FLOW_STALL (1u << 22)
#define PT_FLOW_SLACK 64	/* zeroed bytes after a window: libipt 2.0.5 may
				   read a byte past a PSB cut off at the end */

enum pt_flow_kind {
	PT_FLOW_INSN,		/* ip, insn */
	PT_FLOW_START,		/* tracing (re)starts at ip in thread tid (of the
				   program: child processes are skipped) */
	PT_FLOW_STOP,		/* tracing stops; the next instruction of the
				   thread would have been ip (0: not known) */
	PT_FLOW_LOSS,		/* trace lost here (overflow, decode error) */
	PT_FLOW_TICK,		/* the time is tsc at the last instruction */
};

struct pt_flow_item {
	unsigned kind;
	uint64_t ip;
	const struct x86_insn *insn;
	uint64_t tsc;
	uint32_t tid;
};

struct pt_flow_stats {
	uint64_t insns;
	uint64_t errors;	/* decode errors, each followed by a resync */
	uint64_t unknown;	/* instructions Zydis could not decode: the rest
				   of their block is lost */
	uint64_t bytes_skipped;	/* of packets, by resyncs */
	uint64_t overflows;	/* the CPU's own (OVF packets) */
	uint64_t segments;	/* pieces the stream broke into (lost AUX data) */
};

struct pt_flow {
	const struct pt_input *in;
	const struct pt_cpu_stream *s;
	struct pt_code *code;
	struct pt_classifier *classifier;
	struct pt_aux_cursor aux;
	size_t window_max;
	uint8_t *buffer;	/* window_max + PT_FLOW_SLACK bytes */
	size_t filled;		/* bytes of the stream in buffer */
	uint64_t buffer_start;	/* the stream position of buffer[0] */
	size_t win_len;		/* the window being decoded: buffer[0, win_len) */
	size_t next_start;	/* where in buffer the next window begins */
	uint8_t saved[PT_FLOW_SLACK];	/* what the slack after the window hides */
	int started, at_end;
	int after_cut;		/* the window starts where one was cut with no PSB */
	int skipping;		/* the window before ended skipping to its end */
	uint64_t *psbs;		/* PSB offsets in the window */
	size_t n_psbs, cap_psbs;
	struct pt_block_decoder *dec;
	int status;
	/* The block being walked. */
	uint64_t next_ip;
	unsigned left;
	int isid, last_truncated;
	uint8_t last_raw[16], last_size;
	uint32_t tid;
	int foreign;		/* another process runs: its trace is skipped */
	uint64_t stall_offset;	/* the decoder's offset, unchanged for */
	uint64_t stall_blocks;	/* this many blocks */
	struct pt_flow_stats stats;
};

/* window: the most bytes decoded at a time, PT_FLOW_MIN_WINDOW to
   PT_FLOW_WINDOW; any other, PT_FLOW_WINDOW. */
int pt_flow_open(struct pt_flow *f, const struct pt_input *in, const struct pt_cpu_stream *s,
		 struct pt_code *code, struct pt_classifier *classifier, size_t window,
		 struct cgt_error *e);
/* 1: *item filled; 0: the end of the stream; negative: out of memory, or
   the trace cannot be read again. */
int pt_flow_next(struct pt_flow *f, struct pt_flow_item *item, struct cgt_error *e);
/* How far into the stream decoding is, in bytes. */
uint64_t pt_flow_position(const struct pt_flow *f);
void pt_flow_close(struct pt_flow *f);

#endif
