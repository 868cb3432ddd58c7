/*
 * The PT packet writer of the synthesizer (pt_packets.h).  The encoder
 * writes into a small scratch buffer that is moved to the growing stream
 * after each packet.
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_packets.h"

static void die(const char *what, int rc)
{
	fprintf(stderr, "pt-synth: %s: %s\n", what, pt_errstr(pt_errcode(rc)));
	exit(1);
}

int pt_stream_init(struct pt_stream *s)
{
	struct pt_config c;

	pt_config_init(&c);
	c.begin = s->scratch;
	c.end = s->scratch + sizeof(s->scratch);
	s->enc = pt_alloc_encoder(&c);
	return s->enc != NULL ? 0 : -1;
}

void pt_stream_free(struct pt_stream *s)
{
	pt_free_encoder(s->enc);
	free(s->data);
}

size_t pt_stream_flush(struct pt_stream *s)
{
	uint64_t n;
	pt_enc_get_offset(s->enc, &n);
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2 + 65536;
		s->data = realloc(s->data, s->cap);
		if (s->data == NULL)
			die("out of memory", -pte_nomem);
	}
	memcpy(s->data + s->len, s->scratch, n);
	s->len += n;
	pt_enc_sync_set(s->enc, 0);
	return s->len;
}

static void emit(struct pt_stream *s, struct pt_packet *p)
{
	int rc = pt_enc_next(s->enc, p);
	if (rc < 0)
		die("encoding a packet", rc);
	s->since_psb += (uint64_t)rc;
	uint64_t used;
	pt_enc_get_offset(s->enc, &used);
	if (used > sizeof(s->scratch) - 64)
		pt_stream_flush(s);
}

static void simple(struct pt_stream *s, enum pt_packet_type type)
{
	struct pt_packet p = { .type = type };
	emit(s, &p);
}

static void tsc(struct pt_stream *s)
{
	struct pt_packet p = { .type = ppt_tsc };
	p.payload.tsc.tsc = s->tsc;
	emit(s, &p);
}

static void mode_exec(struct pt_stream *s)
{
	struct pt_packet p = { .type = ppt_mode };
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	emit(s, &p);
}

/* An IP packet, compressed against the last IP as the hardware would. */
static void ip_packet(struct pt_stream *s, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p = { .type = type };
	enum pt_ip_compression ipc = pt_ipc_sext_48;
	if (s->last_ip_valid && ip >> 16 == s->last_ip >> 16)
		ipc = pt_ipc_update_16;
	else if (s->last_ip_valid && ip >> 32 == s->last_ip >> 32)
		ipc = pt_ipc_update_32;
	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = ip;
	emit(s, &p);
	s->last_ip = ip;
	s->last_ip_valid = 1;
}

static void suppressed(struct pt_stream *s, enum pt_packet_type type)
{
	struct pt_packet p = { .type = type };
	p.payload.ip.ipc = pt_ipc_suppressed;
	emit(s, &p);
}

/* Timing before a flow packet, every tsc_every of them. */
static void timing(struct pt_stream *s)
{
	if (s->tsc_every != 0 && s->flow_packets++ % s->tsc_every == 0)
		tsc(s);
}

static void flush_tnt(struct pt_stream *s)
{
	if (s->tnt_count == 0)
		return;
	/* The decoder takes the time when it reaches the packet: at the
	   oldest branch in it. */
	uint64_t now = s->tsc;
	s->tsc = s->tnt_first_tsc;
	timing(s);
	s->tsc = now;
	struct pt_packet p = { .type = s->tnt64 ? ppt_tnt_64 : ppt_tnt_8 };
	p.payload.tnt.bit_size = (uint8_t)s->tnt_count;
	p.payload.tnt.payload = s->tnt_bits;
	emit(s, &p);
	s->tnt_bits = 0;
	s->tnt_count = 0;
}

static void tnt_bit(struct pt_stream *s, int taken)
{
	/* The oldest branch is the most significant bit. */
	if (s->tnt_count == 0)
		s->tnt_first_tsc = s->tsc;
	s->tnt_bits = s->tnt_bits << 1 | (uint64_t)(taken != 0);
	if (++s->tnt_count == (s->tnt64 ? 47u : 6u))
		flush_tnt(s);
}

static void clear_retstack(struct pt_stream *s)
{
	s->ret_n = 0;
}

static void psb(struct pt_stream *s, int with_fup, uint64_t ip)
{
	flush_tnt(s);
	simple(s, ppt_psb);
	s->since_psb = 16;
	s->last_ip_valid = 0;
	tsc(s);
	mode_exec(s);
	if (with_fup)
		ip_packet(s, ppt_fup, ip);
	simple(s, ppt_psbend);
	/* Only returns of calls seen since the last PSB may be compressed. */
	clear_retstack(s);
}

void pt_stream_psb_disabled(struct pt_stream *s)
{
	psb(s, 0, 0);
}

void pt_stream_maybe_psb(struct pt_stream *s, uint64_t ip)
{
	if (s->enabled && s->psb_period != 0 && s->since_psb >= s->psb_period)
		psb(s, 1, ip);
}

void pt_stream_enable(struct pt_stream *s, uint64_t ip)
{
	if (s->len == 0) {
		uint64_t used;
		pt_enc_get_offset(s->enc, &used);
		if (used == 0)
			psb(s, 0, 0);
	}
	tsc(s);
	mode_exec(s);
	ip_packet(s, ppt_tip_pge, ip);
	s->enabled = 1;
}

void pt_stream_disable(struct pt_stream *s)
{
	flush_tnt(s);
	timing(s);
	suppressed(s, ppt_tip_pgd);
	s->enabled = 0;
}

void pt_stream_disable_before(struct pt_stream *s, uint64_t ip)
{
	flush_tnt(s);
	timing(s);
	ip_packet(s, ppt_fup, ip);
	suppressed(s, ppt_tip_pgd);
	s->enabled = 0;
}

void pt_stream_cond(struct pt_stream *s, int taken)
{
	tnt_bit(s, taken);
}

void pt_stream_tip(struct pt_stream *s, uint64_t target)
{
	flush_tnt(s);
	timing(s);
	ip_packet(s, ppt_tip, target);
}

void pt_stream_call(struct pt_stream *s, uint64_t return_ip)
{
	s->retstack[s->ret_top] = return_ip;
	s->ret_top = (s->ret_top + 1) % 64;
	if (s->ret_n < 64)
		s->ret_n++;
}

void pt_stream_return(struct pt_stream *s, uint64_t target)
{
	if (s->retcomp && s->ret_n > 0 && s->retstack[(s->ret_top + 63) % 64] == target) {
		s->ret_top = (s->ret_top + 63) % 64;
		s->ret_n--;
		tnt_bit(s, 1);
		return;
	}
	pt_stream_tip(s, target);
}

void pt_stream_overflow(struct pt_stream *s, uint64_t resume_ip)
{
	/* Pending branches are lost with the rest. */
	s->tnt_bits = 0;
	s->tnt_count = 0;
	simple(s, ppt_ovf);
	s->last_ip_valid = 0;
	ip_packet(s, ppt_fup, resume_ip);
	clear_retstack(s);
}
