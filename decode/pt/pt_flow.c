/*
 * Decoding one CPU's packet stream with libipt (pt_flow.h), following
 * libipt's howto and ptxed: drain pending events before each block, a
 * block is valid whenever it has instructions (even if the call failed),
 * and resynchronise at the next indexed PSB after an error.  The block
 * decoder beats the instruction decoder by far: it follows straight-line
 * code from its own cache, without a call per instruction.
 */
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "pt_flow.h"

#define SLACK PT_FLOW_SLACK

static void config_for(const struct pt_flow *f, struct pt_config *c, uint8_t *begin, size_t len)
{
	const struct cgt_trace_header *h = &f->in->header;

	pt_config_init(c);
	c->begin = begin;
	c->end = begin + len;
	c->flags.variant.block.enable_tick_events = 1;
	/* Blocks end at direct jumps and calls too, so that their
	   instructions lie one after another. */
	c->flags.variant.block.end_on_call = 1;
	c->flags.variant.block.end_on_jump = 1;
	if (strcmp(h->cpu_vendor, "GenuineIntel") == 0) {
		c->cpu.vendor = pcv_intel;
		c->cpu.family = (uint16_t)h->cpu_family;
		c->cpu.model = (uint8_t)h->cpu_model;
		c->cpu.stepping = (uint8_t)h->cpu_stepping;
		/* Unknown models get no errata: -pte_bad_cpu is no reason to stop. */
		pt_cpu_errata(&c->errata, &c->cpu);
	}
	c->mtc_freq = (uint8_t)f->in->config.mtc_period;
	c->nom_freq = (uint8_t)f->in->config.nom_freq;
	c->cpuid_0x15_eax = f->in->config.cpuid15_eax;
	c->cpuid_0x15_ebx = f->in->config.cpuid15_ebx;
}

static int nomem(const struct pt_flow *f, struct cgt_error *e)
{
	return cgt_fail(e, cgt_err_nomem, "%s: CPU %u, packet offset %llu: out of memory", f->in->path,
			f->s->cpu, (unsigned long long)f->buffer_start);
}

/* Every PSB of buffer[0, len), with the packet decoder. */
static int index_psbs(struct pt_flow *f, const struct pt_config *c, struct cgt_error *e)
{
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(c);

	f->n_psbs = 0;
	if (pd == NULL)
		return nomem(f, e);
	while (pt_pkt_sync_forward(pd) >= 0) {
		uint64_t offset;
		struct pt_packet p;
		pt_pkt_get_sync_offset(pd, &offset);
		if (f->n_psbs == f->cap_psbs &&
		    cgt_array_grow(&f->psbs, &f->cap_psbs, f->n_psbs, 1, sizeof(*f->psbs)) < 0) {
			pt_pkt_free_decoder(pd);
			return nomem(f, e);
		}
		f->psbs[f->n_psbs++] = offset;
		if (pt_pkt_next(pd, &p, sizeof(p)) < 0)	/* step past it */
			break;
	}
	pt_pkt_free_decoder(pd);
	return 0;
}

/* Where the PSB+ at offset q ends (after its PSBEND), if it is whole in
   the buffer; 0 if not. */
static uint64_t psb_plus_end(struct pt_packet_decoder *pd, uint64_t q)
{
	struct pt_packet p;
	uint64_t end;
	if (pt_pkt_sync_set(pd, q) < 0)
		return 0;
	for (int i = 0; i < 256; i++) {		/* a PSB+ is a few packets */
		if (pt_pkt_next(pd, &p, sizeof(p)) < 0)
			return 0;
		if (p.type == ppt_psbend)
			return pt_pkt_get_offset(pd, &end) < 0 ? 0 : end;
		if (p.type == ppt_ovf || (i > 0 && p.type == ppt_psb))
			return 0;
	}
	return 0;
}

/* Chooses the window in a full buffer whose stream goes on: up to the end
   of the last whole PSB+ after the first byte, the next window starting
   at that PSB; with none, all of it. */
static int cut_window(struct pt_flow *f, const struct pt_config *c, struct cgt_error *e)
{
	f->win_len = f->next_start = f->filled;
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(c);
	if (pd == NULL)
		return nomem(f, e);
	for (size_t i = f->n_psbs, tried = 0; i > 0 && tried < 8; i--, tried++) {
		uint64_t q = f->psbs[i - 1], end;
		if (q == 0)
			break;
		if ((end = psb_plus_end(pd, q)) != 0) {
			f->win_len = (size_t)end;
			f->next_start = (size_t)q;
			break;
		}
	}
	pt_pkt_free_decoder(pd);
	return 0;
}

/* Opens the decoder for the next window; 0 if there is none. */
static int open_window(struct pt_flow *f, struct cgt_error *e)
{
	if (f->started) {
		/* Drop the window decoded, keep what the next one begins with. */
		memcpy(f->buffer + f->win_len, f->saved, SLACK);
		memmove(f->buffer, f->buffer + f->next_start, f->filled - f->next_start);
		f->buffer_start += f->next_start;
		f->filled -= f->next_start;
	} else {
		f->started = 1;
		f->stats.segments++;
	}
	int whole = 0;		/* the buffer ends where its segment does */
	while (!whole) {
		const uint8_t *p;
		size_t n;
		int at_break, rc = pt_aux_peek(&f->aux, &p, &n, &at_break, e);
		if (rc < 0)
			return rc;
		if (rc == 0 || (at_break && f->filled > 0)) {
			whole = 1;
			break;
		}
		if (at_break) {
			pt_aux_pass_break(&f->aux);
			f->stats.segments++;
			continue;
		}
		if (f->filled == f->window_max)
			break;
		size_t take = n < f->window_max - f->filled ? n : f->window_max - f->filled;
		memcpy(f->buffer + f->filled, p, take);
		pt_aux_skip(&f->aux, take);
		f->filled += take;
	}
	if (f->filled == 0)
		return 0;

	/* libipt may read past a PSB cut off at the end: zeros, not
	   whatever the buffer held before. */
	memset(f->buffer + f->filled, 0, SLACK);
	struct pt_config c;
	config_for(f, &c, f->buffer, f->filled);
	int rc = index_psbs(f, &c, e);
	if (rc == 0 && !whole)
		rc = cut_window(f, &c, e);
	else
		f->win_len = f->next_start = f->filled;
	if (rc < 0)
		return rc;
	while (f->n_psbs > 0 && f->psbs[f->n_psbs - 1] >= f->win_len)
		f->n_psbs--;
	memcpy(f->saved, f->buffer + f->win_len, SLACK);
	memset(f->buffer + f->win_len, 0, SLACK);

	config_for(f, &c, f->buffer, f->win_len);
	f->dec = pt_blk_alloc_decoder(&c);
	if (f->dec == NULL)
		return nomem(f, e);
	pt_blk_set_image(f->dec, f->code->image);
	f->status = pt_blk_sync_forward(f->dec);
	f->left = 0;
	int after_cut = f->after_cut, skipping = f->skipping;
	f->after_cut = !whole && f->next_start == f->filled;
	f->skipping = 0;
	if (after_cut) {
		/* The bytes before the first PSB continue a packet stream cut
		   where it had no PSB: lost, unless they were being skipped
		   already. */
		f->stats.bytes_skipped += f->n_psbs > 0 ? f->psbs[0] : f->win_len;
		f->skipping = f->n_psbs == 0;	/* all of it */
		if (!skipping) {
			f->stats.errors++;
			return 2;
		}
	}
	return 1;
}

static void close_window(struct pt_flow *f)
{
	pt_blk_free_decoder(f->dec);
	f->dec = NULL;
	f->left = 0;
}

int pt_flow_open(struct pt_flow *f, const struct pt_input *in, const struct pt_cpu_stream *s,
		 struct pt_code *code, struct pt_classifier *classifier, size_t window,
		 struct cgt_error *e)
{
	memset(f, 0, sizeof(*f));
	f->in = in;
	f->s = s;
	f->code = code;
	f->classifier = classifier;
	f->tid = (uint32_t)in->header.pid;
	f->window_max = window >= PT_FLOW_MIN_WINDOW && window <= PT_FLOW_WINDOW ? window
									   : PT_FLOW_WINDOW;
	f->buffer = malloc(f->window_max + SLACK);
	if (f->buffer == NULL)
		return cgt_fail(e, cgt_err_nomem, "%s: CPU %u: out of memory", in->path, s->cpu);
	pt_aux_open(&f->aux, in, s);
	return 0;
}

/* After an error: the next PSB past the decoder's position, or the end of
   the segment.  Returns 1 if decoding goes on. */
static int resync(struct pt_flow *f)
{
	uint64_t at = 0;
	pt_blk_get_offset(f->dec, &at);
	f->stats.errors++;
	size_t lo = 0, hi = f->n_psbs;
	while (lo < hi) {	/* the first PSB after at */
		size_t mid = lo + (hi - lo) / 2;
		if (f->psbs[mid] <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < f->n_psbs) {
		f->stats.bytes_skipped += f->psbs[lo] - at;
		f->status = pt_blk_sync_set(f->dec, f->psbs[lo]);
		return 1;
	}
	f->stats.bytes_skipped += at < f->win_len ? f->win_len - at : 0;
	f->skipping = 1;
	return 0;
}

/* Who runs from tsc on, from the context switches: a thread of the
   program, or (foreign) one of another process; with no switches known,
   the thread that ran before. */
static void thread_at(struct pt_flow *f, uint64_t tsc)
{
	const struct pt_switch *sw = pt_input_switch_at(f->s, tsc);
	if (sw == NULL)
		return;
	f->foreign = sw->pid != f->in->header.pid;
	if (!f->foreign)
		f->tid = sw->tid;
}

/* An event as an item; 0 if it makes none. */
static int from_event(struct pt_flow *f, const struct pt_event *ev, struct pt_flow_item *item)
{
	memset(item, 0, sizeof(*item));
	switch (ev->type) {
	case ptev_enabled:
		if (ev->has_tsc)
			thread_at(f, ev->tsc);
		if (f->foreign)
			return 0;
		item->kind = PT_FLOW_START;
		item->ip = ev->variant.enabled.ip;
		item->tid = f->tid;
		item->tsc = ev->tsc;
		return 1;
	case ptev_disabled:
		item->kind = PT_FLOW_STOP;
		return 1;
	case ptev_async_disabled:
		item->kind = PT_FLOW_STOP;
		item->ip = ev->ip_suppressed ? 0 : ev->variant.async_disabled.at;
		return 1;
	case ptev_overflow:
		f->stats.overflows++;
		item->kind = PT_FLOW_LOSS;
		return 1;
	case ptev_tick:
		item->kind = PT_FLOW_TICK;
		item->ip = ev->variant.tick.ip;
		item->tsc = ev->tsc;
		return ev->has_tsc;
	default:
		return 0;
	}
}

/* The next instruction of the block being walked: its class from the
   cache, or from its bytes in the image the first time. */
static int walk_block(struct pt_flow *f, struct pt_flow_item *item, struct cgt_error *e)
{
	uint64_t ip = f->next_ip;
	const struct x86_insn *in = pt_classified(f->classifier, ip);
	if (in == NULL) {
		uint8_t bytes[16];
		int n;
		if (f->left == 1 && f->last_truncated) {
			memcpy(bytes, f->last_raw, f->last_size);
			n = f->last_size;
		} else {
			n = pt_iscache_read(f->code->iscache, bytes, sizeof(bytes), f->isid, ip);
		}
		in = pt_classify(f->classifier, ip, bytes, n > 0 ? (size_t)n : 0, 0);
		if (in == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	if (in->len == 0) {
		/* No length: the rest of the block cannot be walked. */
		f->stats.unknown++;
		f->left = 0;
		memset(item, 0, sizeof(*item));
		item->kind = PT_FLOW_LOSS;
		return 1;
	}
	f->next_ip += in->len;
	f->left--;
	if (f->foreign)
		return 0;	/* a child process's */
	f->stats.insns++;
	memset(item, 0, sizeof(*item));
	item->kind = PT_FLOW_INSN;
	item->ip = ip;
	item->insn = in;
	item->tid = f->tid;
	return 1;
}

int pt_flow_next(struct pt_flow *f, struct pt_flow_item *item, struct cgt_error *e)
{
	for (;;) {
		if (f->left > 0) {
			int rc = walk_block(f, item, e);
			if (rc != 0)
				return rc;
			continue;
		}
		if (f->dec == NULL) {
			int rc = open_window(f, e);
			if (rc <= 0)
				return rc;
			if (rc == 2) {
				memset(item, 0, sizeof(*item));
				item->kind = PT_FLOW_LOSS;
				return 1;
			}
			continue;
		}
		if (f->status >= 0 && (f->status & pts_event_pending)) {
			struct pt_event ev;
			f->status = pt_blk_event(f->dec, &ev, sizeof(ev));
			if (f->status >= 0 && from_event(f, &ev, item) && !f->foreign)
				return 1;
			continue;
		}
		if (f->status < 0 || (f->status & pts_eos)) {
			if (f->status >= 0 || f->status == -pte_eos) {
				close_window(f);
				continue;
			}
			/* A decode error: what follows up to the next PSB is lost. */
			int more = resync(f);
			if (!more)
				close_window(f);
			memset(item, 0, sizeof(*item));
			item->kind = PT_FLOW_LOSS;
			return 1;
		}
		struct pt_block block = { .ninsn = 0 };
		f->status = pt_blk_next(f->dec, &block, sizeof(block));
		/* Code that needs no trace to go on (a jump to itself, in an
		   image that is not what ran) would be walked for ever: so many
		   blocks without a packet read is a decode error. */
		uint64_t at = 0;
		pt_blk_get_offset(f->dec, &at);
		if (at != f->stall_offset || (f->status >= 0 && (f->status & pts_event_pending))) {
			f->stall_offset = at;
			f->stall_blocks = 0;
		} else if (++f->stall_blocks > PT_FLOW_STALL && f->status >= 0) {
			f->stall_blocks = 0;
			f->status = -pte_nosync;
			continue;
		}
		if (block.ninsn == 0)
			continue;
		f->next_ip = block.ip;
		f->left = block.ninsn;
		f->isid = block.isid;
		f->last_truncated = block.truncated;
		if (block.truncated) {
			memcpy(f->last_raw, block.raw, block.size);
			f->last_size = block.size;
		}
	}
}

uint64_t pt_flow_position(const struct pt_flow *f)
{
	uint64_t at = 0;
	if (f->dec != NULL)
		pt_blk_get_offset(f->dec, &at);
	return f->buffer_start + at;
}

void pt_flow_close(struct pt_flow *f)
{
	if (f->dec != NULL)
		close_window(f);
	free(f->buffer);
	free(f->psbs);
	pt_aux_close(&f->aux);
	memset(f, 0, sizeof(*f));
}
