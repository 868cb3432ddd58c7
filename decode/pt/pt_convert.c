/*
 * A pt trace -> a trace of blocks and executions, the form the simulator
 * replays (TRACE-FORMAT.md): decoded once, stored, replayed at will.
 *
 * Two passes over the packet streams.  The first places the memory samples
 * on instruction executions (pt_estimate.h); the second builds the blocks
 * -- straight runs of instructions up to a branch, with the accesses and
 * branch of each instruction from its bytes (x86_insn.h) -- and writes
 * each execution with its estimated addresses, its branch outcome (from
 * where the thread went next) and its indirect target.
 *
 * A thread's instructions are taken CPU by CPU: a thread that moved
 * between CPUs keeps its counts, but its pieces are simulated in CPU order
 * rather than in time order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "pt_classify.h"
#include "pt_code.h"
#include "pt_estimate.h"
#include "pt_flow.h"
#include "pt_input.h"

#define MAX_INSNS 64		/* per block: keeps pending state small */
#define WINDOW (1u << 16)	/* instructions kept per thread for placing samples */
#define SEARCH 4096		/* how far from its time a sample's instruction may be */

/* ---- Threads ----------------------------------------------------------------- */

struct timed {
	uint64_t ip, n, tsc;
	struct pt_insn_state *st;
};

struct pending {
	uint32_t n;
	uint64_t ips[MAX_INSNS];
	const struct x86_insn *insns[MAX_INSNS];
	uint64_t values[MAX_INSNS * X86_MAX_ACCESSES + 1];
	uint32_t n_values;
	int waiting;		/* ends in a branch whose outcome comes next */
};

struct thread {
	uint32_t tid, number;
	/* pass 1: placing samples */
	struct timed *window;		/* ring of window_cap (up to WINDOW) */
	size_t window_cap;
	uint64_t pushed, timed;		/* entries pushed, entries given a time */
	uint64_t tick_index, tick_tsc, prev_tick_tsc;
	int tick_valid;
	size_t sample_next, sample_end;	/* its samples in the input */
	/* pass 2: blocks */
	struct pending pending;
	uint64_t last_addr;		/* for accesses with no estimate */
	struct pt_insn_state *last;	/* the instruction it ran last */
};

struct converter {
	const struct pt_input *in;
	struct pt_code code;
	struct pt_classifier classifier;
	struct pt_estimator est;
	struct thread **threads;
	size_t n_threads, cap_threads;
	struct cgt_map thread_by_tid;	/* tid + 1 -> thread */
	uint32_t max_number;
	int pass;
	FILE *progress;
	size_t window;			/* cgt_pt_decode's */
	uint64_t total_bytes, done_bytes;
	struct cgt_error *e;

	/* pass 2: the decoded trace */
	struct cgt_writer *w;
	struct cgt_block_table table;
	struct cgt_map blocks;		/* (first ip, length) -> block id + 1 */
	struct cgt_buf blocks_buf, events_buf;
	uint32_t events_tid;
	struct cgt_trace_counts counts;
	uint32_t max_access;
	struct pt_flow_stats flow;
};

static int oom(struct converter *c)
{
	return cgt_fail(c->e, cgt_err_nomem, "out of memory");
}

static struct thread *thread_of(struct converter *c, uint32_t tid)
{
	struct thread *known = cgt_map_get(&c->thread_by_tid, (uint64_t)tid + 1);
	if (known != NULL)
		return known;
	if (c->n_threads == 65535) {	/* numbers go into 16 bits (pt_estimate.h) */
		cgt_fail(c->e, cgt_err_invalid, "%s: more than 65535 threads", c->in->path);
		return NULL;
	}
	struct thread *t = calloc(1, sizeof(*t));
	if (t == NULL || (c->n_threads == c->cap_threads &&
			  cgt_array_grow(&c->threads, &c->cap_threads, c->n_threads, 1,
					 sizeof(*c->threads)) < 0)) {
		free(t);
		oom(c);
		return NULL;
	}
	if (cgt_map_put(&c->thread_by_tid, (uint64_t)tid + 1, t) < 0) {
		free(t);
		oom(c);
		return NULL;
	}
	c->threads[c->n_threads++] = t;
	t->tid = tid;
	/* The main thread is 1, the others count on in order of appearance. */
	t->number = tid == c->in->header.pid ? 1 : 0;
	if (t->number == 0)
		t->number = c->max_number + 1 > 1 ? c->max_number + 1 : 2;
	if (t->number > c->max_number)
		c->max_number = t->number;
	/* Its samples: those of tid, a run of the sorted array. */
	size_t lo = 0, hi = c->in->n_samples;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->in->samples[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	t->sample_next = t->sample_end = lo;
	while (t->sample_end < c->in->n_samples && c->in->samples[t->sample_end].tid == tid)
		t->sample_end++;
	return t;
}

/* ---- Pass 1: placing samples ------------------------------------------------ */

static struct timed *entry(struct thread *t, uint64_t i)
{
	return &t->window[i & (t->window_cap - 1)];
}

/* The sample's execution: among the instructions near its time, the
   nearest one at its address. */
static int place(struct converter *c, struct thread *t, const struct pt_sample *s)
{
	uint64_t first = t->pushed > WINDOW ? t->pushed - WINDOW : 0;
	if (t->timed <= first)
		return 0;
	uint64_t lo = first, hi = t->timed;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (entry(t, mid)->tsc < s->tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct timed *best = NULL;
	uint64_t best_distance = UINT64_MAX;
	for (uint64_t d = 0; d < SEARCH; d++) {
		uint64_t cand[2] = { lo + d, lo - 1 - d };
		int any = 0;
		for (int k = 0; k < 2; k++) {
			if (cand[k] < first || cand[k] >= t->timed || (k == 1 && lo < d + 1))
				continue;
			any = 1;
			const struct timed *x = entry(t, cand[k]);
			if (x->ip != s->ip)
				continue;
			uint64_t dist = x->tsc > s->tsc ? x->tsc - s->tsc : s->tsc - x->tsc;
			if (dist < best_distance) {
				best = x;
				best_distance = dist;
			}
		}
		if (!any || best != NULL)
			break;
	}
	if (best == NULL)
		return 0;
	int k = pt_estimator_access_for(best->st, best->n, s->store);
	return k < 0 ? 0 : pt_estimator_add(&c->est, best->st, (unsigned)k, best->n, s->addr);
}

/* Places the thread's samples up to time `until`. */
static int place_until(struct converter *c, struct thread *t, uint64_t until)
{
	while (t->sample_next < t->sample_end && c->in->samples[t->sample_next].tsc <= until) {
		if (place(c, t, &c->in->samples[t->sample_next]) < 0)
			return oom(c);
		t->sample_next++;
	}
	return 0;
}

/* The time is tsc just after the last instruction pushed (or, with
   before_next, just before the next one): the instructions since the
   last tick get times by instruction count. */
static int tick(struct converter *c, struct thread *t, uint64_t tsc, int before_next)
{
	if (t->pushed == 0 && !before_next)
		return 0;
	uint64_t at = before_next ? t->pushed : t->pushed - 1;
	for (uint64_t i = t->timed; i < t->pushed && i <= at; i++) {
		uint64_t time = tsc;
		if (t->tick_valid && at > t->tick_index && tsc >= t->tick_tsc)
			time = t->tick_tsc + (uint64_t)((__int128)(tsc - t->tick_tsc) *
							 (__int128)(i - t->tick_index) / (at - t->tick_index));
		entry(t, i)->tsc = time;
		t->timed = i + 1;
	}
	t->tick_index = at;
	t->prev_tick_tsc = t->tick_valid ? t->tick_tsc : tsc;
	t->tick_tsc = tsc;
	t->tick_valid = 1;
	/* A tick of lookahead: the nearest execution may follow the sample. */
	return place_until(c, t, t->prev_tick_tsc);
}

static int pass1_insn(struct converter *c, struct thread *t, struct pt_insn_state *st)
{
	uint64_t ip = st->ip;
	if (t->sample_next == t->sample_end) {
		/* No sample left to place: no window needed. */
		st->executions++;
		free(t->window);
		t->window = NULL;
		t->window_cap = 0;
		t->timed = t->pushed;	/* nothing in it waits for a time */
		return 0;
	}
	if (t->pushed == t->window_cap && t->window_cap < WINDOW) {
		/* Grown before it wraps, entries stay where they are: a thread
		   that runs little takes little. */
		size_t cap = t->window_cap ? t->window_cap * 2 : 1024;
		struct timed *w = realloc(t->window, cap * sizeof(*w));
		if (w == NULL)
			return oom(c);
		t->window = w;
		t->window_cap = cap;
	}
	/* The oldest entry leaves the window: it must have a time first. */
	if (t->pushed - t->timed >= WINDOW / 2) {
		t->tick_valid = 0;
		int rc = tick(c, t, t->tick_tsc, 0);
		if (rc < 0)
			return rc;
	}
	*entry(t, t->pushed++) = (struct timed){ ip, st->executions++, 0, st };
	return 0;
}

/* The end of the trace: what has no time yet gets the last one. */
static int pass1_finish(struct converter *c)
{
	for (size_t i = 0; i < c->n_threads; i++) {
		struct thread *t = c->threads[i];
		if (t->pushed > 0) {
			t->tick_valid = 0;
			int rc = tick(c, t, t->tick_tsc, 0);
			if (rc < 0)
				return rc;
		}
		int rc = place_until(c, t, UINT64_MAX);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- Pass 2: blocks and executions -------------------------------------------- */

static int put(struct converter *c, unsigned type, struct cgt_buf *b)
{
	int rc = cgt_writer_put(c->w, type, b->data, b->len, c->e);
	b->len = 0;
	return rc;
}

static int flush_events(struct converter *c)
{
	int rc = 0;
	if (c->events_buf.len == 0)
		return 0;
	if (c->blocks_buf.len > 0)
		rc = put(c, CGT_REC_BLOCKS, &c->blocks_buf);
	if (rc == 0 && cgt_events_finish(&c->events_buf, &c->table) < 0)
		rc = oom(c);
	if (rc == 0)
		rc = put(c, CGT_REC_EVENTS, &c->events_buf);
	/* Nothing encoded is left unwritten: a segment may begin here. */
	return rc < 0 ? rc : cgt_writer_segment_point(c->w, &c->table, c->e);
}

static int ends_in_cond(const struct pending *p)
{
	return p->insns[p->n - 1]->branch == X86_COND;
}

static int ends_in_indirect(const struct pending *p)
{
	unsigned b = p->insns[p->n - 1]->branch;
	return b == X86_INDIRECT_JUMP || b == X86_INDIRECT_CALL;
}

/* The block of the pending instructions, defined on first use: a
   straight run is known by its first address and its length. */
static struct cgt_block *block_for(struct converter *c, const struct pending *p)
{
	uint64_t key = p->ips[0] | (uint64_t)p->n << 48;
	uintptr_t id = (uintptr_t)cgt_map_get(&c->blocks, key);
	if (id != 0)
		return c->table.blocks[id - 1];

	struct cgt_insn insns[MAX_INSNS];
	struct cgt_op ops[MAX_INSNS * (X86_MAX_ACCESSES + 1) + 1];
	uint32_t n_ops = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct x86_insn *in = p->insns[i];
		insns[i] = (struct cgt_insn){ p->ips[i], in->len };
		ops[n_ops++] = (struct cgt_op){ CGT_OP_INSN, 0, (uint16_t)i, 0 };
		for (unsigned k = 0; k < in->n_accesses; k++)
			ops[n_ops++] = (struct cgt_op){ in->accesses[k].kind, 0, (uint16_t)i, in->accesses[k].size };
	}
	if (ends_in_cond(p))
		ops[n_ops++] = (struct cgt_op){ CGT_OP_COND, 0, (uint16_t)(p->n - 1), 0 };
	else if (ends_in_indirect(p))
		ops[n_ops++] = (struct cgt_op){ CGT_OP_INDIRECT, 0, (uint16_t)(p->n - 1), 0 };
	const char *why;
	if (cgt_block_table_add(&c->table, insns, p->n, ops, n_ops, NULL, 0, &why) < 0)
		return NULL;
	struct cgt_block *blk = c->table.blocks[c->table.n - 1];
	if (cgt_map_put(&c->blocks, key, (void *)(uintptr_t)(blk->id + 1)) < 0)
		return NULL;
	return cgt_blocks_encode(&c->blocks_buf, blk) < 0 ? NULL : blk;
}

/* The pending block ran; its thread went on at next (0: not known). */
static int finish_block(struct converter *c, struct thread *t, uint64_t next)
{
	struct pending *p = &t->pending;
	if (p->n == 0)
		return 0;
	struct cgt_block *blk = block_for(c, p);
	if (blk == NULL)
		return oom(c);
	uint64_t last_end = p->ips[p->n - 1] + p->insns[p->n - 1]->len;
	uint32_t exit = ends_in_cond(p) && next != 0 && next != last_end ? 1 : 0;
	if (ends_in_indirect(p))
		p->values[p->n_values++] = next;
	if (c->events_buf.len > 0 && (c->events_tid != t->number || c->events_buf.len > (1u << 19))) {
		int rc = flush_events(c);
		if (rc < 0)
			return rc;
	}
	if (c->events_buf.len == 0) {
		c->events_tid = t->number;
		if (cgt_events_begin(&c->events_buf, &c->table, t->number) < 0)
			return oom(c);
	}
	if (cgt_events_encode(&c->events_buf, &c->table, blk, exit, p->values) < 0)
		return oom(c);
	struct cgt_exec x = { .block = blk, .n_ops = blk->ops_in_prefix[exit],
			      .exit = exit, .n_values = blk->values_in_prefix[exit], .tid = t->number,
			      .block_id = blk->id, .values = p->values };
	cgt_counts_add_exec(&c->counts, &x);
	p->n = 0;
	p->n_values = 0;
	p->waiting = 0;
	return 0;
}

static int pass2_insn(struct converter *c, struct thread *t, struct pt_insn_state *st)
{
	struct pending *p = &t->pending;
	const struct x86_insn *in = st->insn;
	uint64_t ip = st->ip;
	int rc = 0;

	if (p->waiting)
		rc = finish_block(c, t, ip);
	if (rc < 0)
		return rc;
	uint64_t n = st->executions++;
	p->ips[p->n] = ip;
	p->insns[p->n] = in;
	p->n++;
	for (unsigned k = 0; k < in->n_accesses; k++) {
		uint64_t addr = pt_estimator_address(st, k, n, t->last_addr);
		t->last_addr = addr;
		p->values[p->n_values++] = addr;
		uint32_t size = in->accesses[k].size;
		if (size > c->max_access && size <= 64)
			c->max_access = size;
	}
	if (in->branch == X86_COND || in->branch == X86_INDIRECT_JUMP || in->branch == X86_INDIRECT_CALL)
		p->waiting = 1;
	else if (in->branch != X86_NOT_BRANCH || p->n == MAX_INSNS)
		rc = finish_block(c, t, 0);
	return rc;
}

/* ---- Both passes ---------------------------------------------------------------- */

static void show_progress(struct converter *c, const struct pt_flow *f)
{
	static uint64_t shown = UINT64_MAX;
	if (c->progress == NULL || c->total_bytes == 0)
		return;
	uint64_t done = c->done_bytes + pt_flow_position(f);
	unsigned pct = (unsigned)(done * 100 / c->total_bytes);
	if (pct != shown) {
		fprintf(c->progress, "\rcgtrace: decoding the Intel PT trace: pass %d of 2, %u%%", c->pass, pct);
		fflush(c->progress);
		shown = pct;
	}
}

static int run_pass(struct converter *c)
{
	struct pt_flow_item item;
	c->done_bytes = 0;
	for (size_t s = 0; s < c->in->n_cpus; s++) {
		struct pt_flow f = { 0 };
		struct thread *t = thread_of(c, (uint32_t)c->in->header.pid);
		int rc = t == NULL ? -1 : pt_flow_open(&f, c->in, &c->in->cpus[s], &c->code, &c->classifier,
							   c->window, c->e);
		uint64_t count = 0;
		while (rc >= 0 && (rc = pt_flow_next(&f, &item, c->e)) > 0) {
			if (item.kind == PT_FLOW_INSN) {
				/* The instruction's state in this thread knows its class:
				   one lookup per instruction, mostly. */
				struct pt_insn_state *st = t->last && t->last->next && t->last->next->ip == item.ip
								   ? t->last->next
								   : pt_estimator_find(&c->est, item.ip, t->number);
				if (st == NULL)
					st = pt_estimator_state(&c->est, item.ip, t->number, item.insn);
				if (st == NULL) {
					rc = oom(c);
				} else {
					if (t->last != NULL)
						t->last->next = st;
					t->last = st;
					rc = c->pass == 1 ? pass1_insn(c, t, st) : pass2_insn(c, t, st);
				}
				if ((++count & 0xfffff) == 0)
					show_progress(c, &f);
				continue;
			}
			switch (item.kind) {
			case PT_FLOW_START:
				if ((t = thread_of(c, item.tid)) == NULL)
					rc = -1;
				else if (c->pass == 1 && item.tsc != 0)
					rc = tick(c, t, item.tsc, 1);
				break;
			case PT_FLOW_TICK:
				if (c->pass == 1)
					rc = tick(c, t, item.tsc, 0);
				break;
			case PT_FLOW_STOP:
			case PT_FLOW_LOSS:
				if (c->pass == 2)
					rc = finish_block(c, t, item.ip);
				else if (item.kind == PT_FLOW_LOSS)
					t->tick_valid = 0;
				break;
			}
		}
		if (c->pass == 1) {
			c->flow.insns += f.stats.insns;
			c->flow.errors += f.stats.errors + f.stats.unknown;
			c->flow.bytes_skipped += f.stats.bytes_skipped;
			c->flow.overflows += f.stats.overflows;
			c->flow.segments += f.stats.segments;
		}
		pt_flow_close(&f);
		c->done_bytes += c->in->cpus[s].len;
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; c->pass == 2 && i < c->n_threads; i++) {
		int rc = finish_block(c, c->threads[i], 0);
		if (rc < 0)
			return rc;
	}
	return c->pass == 1 ? pass1_finish(c) : 0;
}

static int write_start(struct converter *c, int fd, const char *out_path)
{
	struct cgt_trace_header h = c->in->header;
	struct cgt_pt_decoded *d = &h.decoded;
	struct cgt_buf b = { 0 };
	int rc = cgt_writer_open(&c->w, fd, out_path, c->e);

	if (rc < 0)
		return rc;
	/* The decode's figures: pass 1 has them all. */
	d->present = 1;
	d->decoder_version = CGT_PT_DECODER_VERSION;
	d->source_size = c->in->file_size;
	d->source_mtime_ns = c->in->file_mtime_ns;
	d->insns = c->flow.insns;
	d->errors = c->flow.errors;
	d->bytes_skipped = c->flow.bytes_skipped;
	d->overflows = c->flow.overflows;
	d->breaks = c->flow.segments > c->in->n_cpus ? c->flow.segments - c->in->n_cpus : 0;
	d->modules_left_out = c->code.modules_left_out;
	d->sideband_lost = c->in->sideband_lost;
	d->mem_period = 0;
	for (uint32_t i = 0; i < c->in->config.n_events && !c->in->config.samples_missing; i++)
		if (c->in->config.events[i].kind != CGT_PT_EVENT_TRACE)
			d->mem_period = c->in->config.events[i].period;
	d->samples = c->in->n_samples;
	d->samples_placed = c->est.samples_placed;
	rc = cgt_header_encode(&b, &h);
	if (rc == 0)
		rc = put(c, CGT_REC_HEADER, &b);
	for (size_t i = 0; i < c->in->n_modules && rc == 0; i++) {
		rc = cgt_module_encode(&b, &c->in->modules[i]);
		if (rc == 0)
			rc = put(c, CGT_REC_MODULE, &b);
	}
	cgt_buf_free(&b);
	return rc < 0 ? (c->e->msg[0] ? rc : oom(c)) : 0;
}

static int write_end(struct converter *c)
{
	struct cgt_buf b = { 0 };
	struct cgt_trace_end end = c->in->end;
	int rc = flush_events(c);

	/* A recording cut short has no END record; nor has its decode, so
	   that every run says so. */
	if (rc < 0 || !c->in->have_end)
		return rc;
	end.counts = c->counts;
	end.counts.blocks = c->table.n;
	end.counts.threads = c->n_threads;
	if (rc == 0)
		rc = cgt_end_encode(&b, &end);
	if (rc == 0)
		rc = put(c, CGT_REC_END, &b);
	cgt_buf_free(&b);
	return rc;
}

int cgt_pt_decode(const char *path, int fd, const char *out_path,
		  const struct cgt_decoder_options *o, struct cgt_error *e)
{
	static const struct cgt_decoder_options silent;
	if (o == NULL)
		o = &silent;
	FILE *warnings = o->notes;
	struct pt_input in;
	struct converter c = { .e = e, .progress = o->progress, .window = o->pt_window };
	int rc = pt_input_read(&in, path, e);

	if (rc < 0)
		return rc;
	c.in = &in;
	if (in.truncation != NULL && warnings != NULL)
		fprintf(warnings, "cgtrace: warning: %s\n", in.truncation);
	rc = pt_code_build(&c.code, &in, warnings, o->scratch_dir, e);
	for (size_t i = 0; i < in.n_cpus; i++)
		c.total_bytes += in.cpus[i].len;
	if (rc == 0) {
		c.pass = 1;
		rc = run_pass(&c);
	}
	if (rc == 0)
		rc = write_start(&c, fd, out_path);
	if (rc == 0) {
		pt_estimator_rewind(&c.est);
		c.pass = 2;
		rc = run_pass(&c);
	}
	if (rc == 0)
		rc = write_end(&c);
	if (c.w != NULL && cgt_writer_close(c.w, rc < 0 ? NULL : e) < 0 && rc == 0)
		rc = -cgt_err_io;
	if (rc == 0 && fsync(fd) < 0 && errno != EINVAL)
		rc = cgt_fail(e, cgt_err_io, "%s: %s", out_path, strerror(errno));
	if (c.progress != NULL && c.total_bytes > 0)
		fprintf(c.progress, "\r%*s\r", 60, "");
	for (size_t i = 0; i < c.n_threads; i++) {
		free(c.threads[i]->window);
		free(c.threads[i]);
	}
	free(c.threads);
	cgt_map_free(&c.thread_by_tid);
	cgt_map_free(&c.blocks);
	cgt_buf_free(&c.blocks_buf);
	cgt_buf_free(&c.events_buf);
	cgt_block_table_free(&c.table);
	pt_estimator_free(&c.est);	/* before the instructions its states point to */
	pt_classifier_free(&c.classifier);
	pt_code_free(&c.code);
	pt_input_free(&in);
	return rc;
}
