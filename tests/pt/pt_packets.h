/*
 * Writing an Intel PT packet stream for a known instruction sequence,
 * with libipt's encoder, following the rules of
 * ../shared/docs/intel-pt.md section 8: PSB+ with the shadow return stack
 * cleared, TNT bits flushed before any other flow packet, IP compression
 * against the last IP, compressed returns only when the shadow stack
 * agrees.  Test-only.
 */
#ifndef CGTRACE_PT_PACKETS_H
#define CGTRACE_PT_PACKETS_H

#include <stddef.h>
#include <stdint.h>

struct pt_encoder;

struct pt_stream {
	uint8_t *data;		/* the stream so far */
	size_t len, cap;
	struct pt_encoder *enc;
	uint8_t scratch[4096];

	int retcomp;		/* compress returns */
	int tnt64;		/* TNT-64 packets (47 bits) instead of TNT-8 (6) */
	uint64_t psb_period;	/* bytes between PSBs; 0: only where needed */
	uint64_t tsc_every;	/* a TSC before every Nth TNT/TIP; 0: none */

	uint64_t last_ip;
	int last_ip_valid;
	uint64_t tnt_bits;
	unsigned tnt_count;
	uint64_t retstack[64];
	unsigned ret_top, ret_n;
	uint64_t since_psb;	/* bytes since the last PSB */
	uint64_t flow_packets;
	int enabled;		/* tracing on (between PGE and PGD) */
	uint64_t tsc;		/* the time to stamp packets with */
	uint64_t tnt_first_tsc;	/* the time of the oldest pending TNT bit */
};

int pt_stream_init(struct pt_stream *s);
void pt_stream_free(struct pt_stream *s);

/* Bytes written so far (the encoder's pending ones included). */
size_t pt_stream_flush(struct pt_stream *s);

/* Tracing starts (or resumes) at ip: a PSB+ if none yet, then
   MODE.exec and TIP.PGE. */
void pt_stream_enable(struct pt_stream *s, uint64_t ip);
/* Tracing stops after a syscall (suppressed TIP.PGD)... */
void pt_stream_disable(struct pt_stream *s);
/* ...or asynchronously before the instruction at ip (FUP, TIP.PGD). */
void pt_stream_disable_before(struct pt_stream *s, uint64_t ip);

/* A PSB+ before the instruction at ip when psb_period bytes have passed. */
void pt_stream_maybe_psb(struct pt_stream *s, uint64_t ip);
/* A PSB+ with tracing off (before a PGE). */
void pt_stream_psb_disabled(struct pt_stream *s);

void pt_stream_cond(struct pt_stream *s, int taken);
void pt_stream_tip(struct pt_stream *s, uint64_t target);
void pt_stream_call(struct pt_stream *s, uint64_t return_ip);
/* A return to target: a taken TNT bit if compressible, else a TIP. */
void pt_stream_return(struct pt_stream *s, uint64_t target);

/* Trace lost from here: OVF, then FUP(resume_ip). */
void pt_stream_overflow(struct pt_stream *s, uint64_t resume_ip);

#endif
