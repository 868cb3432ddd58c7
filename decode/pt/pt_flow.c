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

/* libipt 2.0.5 may read a byte past a PSB cut off at the end. */
#define SLACK 64

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

/* Every PSB of the segment, with the packet decoder. */
static int index_psbs(struct pt_flow *f, const struct pt_config *c, struct cgt_error *e)
{
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(c);

	f->n_psbs = 0;
	if (pd == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	while (pt_pkt_sync_forward(pd) >= 0) {
		uint64_t offset;
		struct pt_packet p;
		pt_pkt_get_sync_offset(pd, &offset);
		if (f->n_psbs == f->cap_psbs) {
			size_t cap = f->cap_psbs ? f->cap_psbs * 2 : 256;
			uint64_t *psbs = realloc(f->psbs, cap * sizeof(*psbs));
			if (psbs == NULL) {
				pt_pkt_free_decoder(pd);
				return cgt_fail(e, cgt_err_nomem, "out of memory");
			}
			f->psbs = psbs;
			f->cap_psbs = cap;
		}
		f->psbs[f->n_psbs++] = offset;
		if (pt_pkt_next(pd, &p, sizeof(p)) < 0)	/* step past it */
			break;
	}
	pt_pkt_free_decoder(pd);
	return 0;
}

/* Opens the decoder for the next segment; 0 if there is none. */
static int open_segment(struct pt_flow *f, struct cgt_error *e)
{
	const struct pt_cpu_stream *s = f->s;

	if (f->segment > s->n_breaks)
		return 0;
	f->seg_start = f->segment == 0 ? 0 : s->breaks[f->segment - 1];
	f->seg_end = f->segment < s->n_breaks ? s->breaks[f->segment] : s->len;
	f->segment++;
	f->stats.segments++;
	size_t len = f->seg_end - f->seg_start;
	if (len + SLACK > f->buffer_cap) {
		uint8_t *b = realloc(f->buffer, len + SLACK);
		if (b == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		f->buffer = b;
		f->buffer_cap = len + SLACK;
	}
	memcpy(f->buffer, s->data + f->seg_start, len);
	memset(f->buffer + len, 0, SLACK);

	struct pt_config c;
	config_for(f, &c, f->buffer, len);
	int rc = index_psbs(f, &c, e);
	if (rc < 0)
		return rc;
	f->dec = pt_blk_alloc_decoder(&c);
	if (f->dec == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	pt_blk_set_image(f->dec, f->code->image);
	f->status = pt_blk_sync_forward(f->dec);
	f->left = 0;
	return 1;
}

static void close_segment(struct pt_flow *f)
{
	pt_blk_free_decoder(f->dec);
	f->dec = NULL;
	f->left = 0;
}

int pt_flow_open(struct pt_flow *f, const struct pt_input *in, const struct pt_cpu_stream *s,
		 struct pt_code *code, struct pt_classifier *classifier, struct cgt_error *e)
{
	(void)e;
	memset(f, 0, sizeof(*f));
	f->in = in;
	f->s = s;
	f->code = code;
	f->classifier = classifier;
	f->tid = (uint32_t)in->header.pid;
	return 0;
}

/* After an error: the next PSB past the decoder's position, or the end of
   the segment.  Returns 1 if decoding goes on. */
static int resync(struct pt_flow *f)
{
	uint64_t at = 0;
	pt_blk_get_offset(f->dec, &at);
	f->stats.errors++;
	for (size_t i = 0; i < f->n_psbs; i++) {
		if (f->psbs[i] > at) {
			f->stats.bytes_skipped += f->psbs[i] - at;
			f->status = pt_blk_sync_set(f->dec, f->psbs[i]);
			return 1;
		}
	}
	f->stats.bytes_skipped += (f->seg_end - f->seg_start) - at;
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
			int rc = open_segment(f, e);
			if (rc <= 0)
				return rc;
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
				close_segment(f);
				continue;
			}
			/* A decode error: what follows up to the next PSB is lost. */
			int more = resync(f);
			if (!more)
				close_segment(f);
			memset(item, 0, sizeof(*item));
			item->kind = PT_FLOW_LOSS;
			return 1;
		}
		struct pt_block block = { .ninsn = 0 };
		f->status = pt_blk_next(f->dec, &block, sizeof(block));
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
	return f->seg_start + at;
}

void pt_flow_close(struct pt_flow *f)
{
	if (f->dec != NULL)
		close_segment(f);
	free(f->buffer);
	free(f->psbs);
	memset(f, 0, sizeof(*f));
}
