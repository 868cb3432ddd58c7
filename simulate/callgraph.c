/*
 * Callgrind's call graph, replayed from a trace in stream order: the
 * entry points (cgt_callgraph_run), the client requests and signals that
 * chunks carry as marks, and the producer on a thread of its own.
 *
 * Two parts, on two threads when there are (see the pipeline below for
 * who owns what): a producer (callgraph_producer.c) decodes the trace and simulates its
 * caches and branches (with cache use, D1: the replay runs I1 and LL on
 * each chunk first), and hands chunks of executions with their misses
 * and mispredictions, and the module map, to the replay, which applies
 * Callgrind's rules (callgraph_replay.h: the rules, and which file holds
 * which of them).
 *
 * The replay's files are one translation unit: this file includes its
 * parts, the .c files of simulate/callgraph/, which are never compiled
 * alone.  The build has no LTO, and gcc optimizes the replay's loop well
 * only with the functions it calls in the same unit and static (inlined
 * where called once): compiled as separate objects, the same code
 * replayed more slowly on two threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph_replay.h"
#include "ring.h"

/* What the parts share beyond callgraph_replay.h. */

/* A BBCC of bb in context cxt at recursion level rec (from 0), with room
   for its costs; NONE (r->failed) if out of memory. */
static uint32_t new_bbcc(struct replay *r, uint32_t bb, uint32_t cxt, uint32_t rec);
/* The arc from BBCC from's exit jmp to BBCC to, made (a call) if new;
   NONE (r->failed) if out of memory. */
static uint32_t get_jcc(struct replay *r, uint32_t from, uint32_t jmp, uint32_t to);
/* A signal handler starts (signo), or returns, on thread t. */
static void pre_signal(struct replay *r, struct thread *t, uint32_t signo);
static void post_signal(struct replay *r, struct thread *t, struct cgt_error *e);
/* Frames, handlers and context gone, as at an instrumentation switch and
   at the end (main.c unwind_thread). */
static void unwind_thread(struct replay *r, struct thread *t, struct cgt_error *e);
/* A return past the first frame (bbcc.c handleUnderflow), to bb. */
static void handle_underflow(struct replay *r, struct thread *t, uint32_t bb, struct cgt_error *e);
/* Callgrind's ZERO_STATS and --zero-before (main.c zero_thread_cost). */
static void zero_all_cost(struct replay *r, struct thread *t);
/* A mark (a client request, a signal delivered or returned): 0, or a
   negative status (e set). */
static int on_mark(struct replay *r, const struct cgt_mark *m, struct cgt_error *e);
/* get_thread's failure for tid: its error's negative status (e set). */
static int no_thread(uint32_t tid, struct cgt_error *e);

#include "callgraph/bb.c"
#include "callgraph/context.c"
#include "callgraph/bbcc.c"
#include "callgraph/callstack.c"
#include "callgraph/exec.c"
#include "callgraph/dump.c"

/* ---- Client requests (main.c CLG_(handle_client_request)) ---------------------- */

static void set_instrument_state(struct replay *r, int on, struct cgt_error *e)
{
	if (r->instrumenting == on)
		return;
	r->instrumenting = on;
	for (uint32_t tid = 0; tid < r->n_threads; tid++)
		if (r->threads[tid] != NULL)
			unwind_thread(r, r->threads[tid], e);
	for (uint32_t tid = 0; tid < r->n_threads; tid++)
		if (r->threads[tid] != NULL)
			memset(state(r->threads[tid])->cost, 0, sizeof(state(r->threads[tid])->cost));
	/* Callgrind discards every translation (bb.c delete_bb): code run from
	   now on makes BBs, and BBCCs, of its own.  The old BBCCs keep what
	   is charged to them later (a line's use at its eviction), written
	   only in a dump after they ran, which they no longer do. */
	memset(r->block_bb.v, 0, r->block_bb.n * r->block_bb.size);
	cgt_map_free(&r->bb_index);
	/* (the producer starts the caches cold again) */
	if (r->cache_use)
		use_sink_clear(&r->use, r->u64s.v);
}

static int no_thread(uint32_t tid, struct cgt_error *e)
{
	if (tid >= MAX_TID)
		return cgt_fail(e, cgt_err_corrupt,
				"thread %u: Valgrind's thread ids are below %u (a damaged trace?)", tid, MAX_TID);
	return cgt_fail(e, cgt_err_nomem, "out of memory");
}

static int on_mark(struct replay *r, const struct cgt_mark *m, struct cgt_error *e)
{
	struct thread *t = get_thread(r, m->tid);
	if (t == NULL)
		return no_thread(m->tid, e);
	switch (m->kind) {
	case CGT_MARK_SIGNAL_DELIVERED:
		pre_signal(r, t, m->signo ? m->signo : 1);
		return 0;
	case CGT_MARK_SIGNAL_RETURNED:
		post_signal(r, t, e);
		return 0;
	case CGT_MARK_REQUEST:
		break;
	default:
		return 0;
	}
	switch (m->code) {
	case REQ_DUMP_STATS:
		return dump_profile(r, "Client Request", e);
	case REQ_DUMP_STATS_AT: {
		size_t n = strlen(m->text) + 32;
		char *trigger = malloc(n);
		if (trigger == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		snprintf(trigger, n, "Client Request: %s", m->text);
		int rc = dump_profile(r, trigger, e);
		free(trigger);
		return rc;
	}
	case REQ_ZERO_STATS:
		zero_all_cost(r, t);
		return 0;
	case REQ_TOGGLE_COLLECT:
		state(t)->collect = !state(t)->collect;
		return 0;
	case REQ_START_INSTRUMENTATION:
	case REQ_STOP_INSTRUMENTATION:
		set_instrument_state(r, m->code == REQ_START_INSTRUMENTATION, e);
		return 0;
	default:
		return 0;	/* Cachegrind's, and codes Callgrind does not know */
	}
}

/* ---- The producer (callgraph_producer.c) on a thread of its own, or not ------- */

/* The producer and the replay, and the chunks between them, in a ring
   (ring.h).  The producer owns the decoder, the replay the call graph and
   whatever is behind the options' code lookup and dump (the symbolizer,
   the output), and a chunk belongs to one of them at a time.  Sixteen
   with two threads (about 10 MB): the two sides are as fast as each other
   over the whole trace but not over each part of it, and with four the
   faster one waited in every phase; 32 and 64 gained little more.  One on
   one thread: each chunk replayed as soon as it is made. */
#define N_CHUNKS 16

struct pipeline {
	struct ring ring;
	struct chunk chunks[N_CHUNKS];
	struct producer *producer;
	struct replay *replay;
};

/* The replay's turn: a chunk (the ring's one consumer). */
static int replay_turn(void *arg, unsigned consumer, unsigned slot, int last, struct cgt_error *e)
{
	struct pipeline *pl = arg;
	(void)consumer;
	if (last)
		return 0;
	int rc = replay_chunk(pl->replay, &pl->chunks[slot], pl->producer, e);
	return rc < 0 ? rc : 0;
}

/* The producer's part: chunks until the trace's end (or a failure). */
static void *produce_all(void *arg)
{
	struct pipeline *pl = arg;
	int status;
	do {
		struct chunk *ch = &pl->chunks[ring_filling(&pl->ring)];
		callgraph_produce(pl->producer, ch);
		status = ch->status;
	} while (ring_publish(&pl->ring) == 0 && status > 0);
	ring_produced_all(&pl->ring);
	return NULL;
}

/* The producer on a thread of its own with more than one thread, the
   replay always on the caller's (the options' code lookup and dump are
   called there: cgt_callgraph_options). */
static int replay_chunks(struct replay *r, struct producer *p, unsigned threads,
			 struct cgt_error *e)
{
	/* (its chunks on cache lines of their own) */
	struct pipeline *pl = aligned_alloc(_Alignof(struct pipeline), sizeof(*pl));
	const unsigned n_chunks = threads > 1 ? N_CHUNKS : 1;
	if (pl != NULL)
		memset(pl, 0, sizeof(*pl));
	if (pl == NULL || ring_init(&pl->ring, n_chunks, 1, threads == 1, replay_turn, pl) < 0) {
		free(pl);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	for (unsigned k = 0; k < n_chunks; k++)
		callgraph_chunk_init(&pl->chunks[k]);
	pl->producer = p;
	pl->replay = r;
	pthread_t thread;
	int rc = 0;
	if (threads > 1) {
		if (cgt_thread_create(&thread, produce_all, pl) != 0) {
			rc = cgt_fail(e, cgt_err_nomem, "cannot start a thread");
			goto out;
		}
		ring_take_turns(&pl->ring);
		pthread_join(thread, NULL);
	} else {
		produce_all(pl);
		ring_take_turns(&pl->ring);	/* (the replay's last turn) */
	}
	if (pl->ring.failed) {
		*e = *ring_error(&pl->ring);
		rc = -e->status;
	}
out:
	for (unsigned k = 0; k < n_chunks; k++)
		callgraph_chunk_free(&pl->chunks[k]);
	ring_free(&pl->ring);
	free(pl);
	return rc;
}

/* ---- The replay ------------------------------------------------------------------ */

void cgt_callgraph_defaults(struct cgt_callgraph_options *o)
{
	memset(o, 0, sizeof(*o));
	o->separate_recs = 2;
	o->skip_plt = 1;
	o->collect_atstart = 1;
	o->instr_atstart = 1;
	o->threads = 1;
	o->cache_use_inclusive = 1;
}

void replay_free(struct replay *r)
{
	use_sink_free(&r->use);
	backdate_free(&r->backdate);
	for (size_t i = 0; i < r->owned.n; i++)
		free(AT(r->owned, char *, i));
	free(r->owned.v);
	free(r->obj_bias.v);
	free(r->objs.v);
	free(r->files.v);
	free(r->fn_names.v);
	free(r->fns.v);
	free(r->contexts.v);
	free(r->context_fns.v);
	free(r->bbs.v);
	free(r->bb_jmps.v);
	free(r->bbccs.v);
	free(r->arcs.v);
	free(r->u64s.v);
	free(r->u32s.v);
	free(r->block_bb.v);
	cgt_map_free(&r->name_index);
	cgt_map_free(&r->context_index);
	cgt_map_free(&r->bb_index);
	free(r->mappings.v);
	for (uint32_t i = 0; i < r->n_threads; i++) {
		struct thread *t = r->threads[i];
		if (t == NULL)
			continue;
		free(t->states.v);
		free(t->calls.v);
		free(t->fns.v);
		free(t->active.v);
		free(t);
	}
	free(r->threads);
}

static int check_trace(struct cgt_decoder *d, struct cgt_error *e)
{
	const struct cgt_trace_header *h = cgt_decoder_header(d);
	const char *how = "record it again with this cgtrace (`cgtrace record -- PROGRAM`)";
	if (strcmp(h->backend, "valgrind") != 0)
		return cgt_fail(e, cgt_err_invalid,
				"--tool=callgrind needs a trace of the valgrind backend: this one (%s) "
				"has no calls, returns or stack pointers",
				h->backend);
	if (cgt_decoder_version(d) < 3 || !h->vex.present)
		return cgt_fail(e, cgt_err_invalid,
				"--tool=callgrind needs the calls, returns and stack pointers that traces "
				"of format 3 carry; this one is of format %u: %s",
				cgt_decoder_version(d), how);
	if (h->vex.guest_chase)
		return cgt_fail(e, cgt_err_invalid,
				"--tool=callgrind needs Callgrind's translation, but this trace was "
				"recorded with --vex-guest-chase=yes (Cachegrind's): record it without "
				"that option");
	return 0;
}

int replay_init(struct replay *r, const struct cgt_callgraph_options *o)
{
	*r = (struct replay){
		.o = o,
		.n_ev = 1,
		.objs.size = sizeof(struct name_node),
		.files.size = sizeof(struct name_node),
		.fn_names.size = sizeof(struct name_node),
		.fns.size = sizeof(struct fn_node),
		.contexts.size = sizeof(struct context),
		.context_fns.size = sizeof(uint32_t),
		.bbs.size = sizeof(struct bb),
		.bb_jmps.size = sizeof(struct bb_jmp),
		.bbccs.size = sizeof(struct bbcc),
		.arcs.size = sizeof(struct arc),
		.u64s.size = sizeof(uint64_t),
		.u32s.size = sizeof(uint32_t),
		.block_bb.size = sizeof(uint32_t),
		.owned.size = sizeof(char *),
		.obj_bias.size = sizeof(uint64_t),
		.mappings.size = sizeof(struct cgt_mapping),
		.instrumenting = o->instr_atstart,
	};
	cgt_event_set_init_callgrind(&r->events, o->cache_sim, o->branch_sim,
				     o->cache_sim && o->model.write_back, o->model.cache_use);
	r->n_ev = r->events.n;
	r->charged = o->cache_sim || o->branch_sim;
	r->ev_dr = cgt_event_set_find(&r->events, CGT_ACCESS_READ, CGT_EVENT_EXECUTED);
	r->ev_dw = cgt_event_set_find(&r->events, CGT_ACCESS_WRITE, CGT_EVENT_EXECUTED);
	r->ev_i1mr = cgt_event_set_find(&r->events, CGT_ACCESS_FETCH, CGT_LEVEL_I1);
	r->ev_d1mr = cgt_event_set_find(&r->events, CGT_ACCESS_READ, CGT_LEVEL_D1);
	r->ev_d1mw = cgt_event_set_find(&r->events, CGT_ACCESS_WRITE, CGT_LEVEL_D1);
	r->ev_ilmr = cgt_event_set_find(&r->events, CGT_ACCESS_FETCH, CGT_LEVEL_LL);
	r->ev_dlmr = cgt_event_set_find(&r->events, CGT_ACCESS_READ, CGT_LEVEL_LL);
	r->ev_dlmw = cgt_event_set_find(&r->events, CGT_ACCESS_WRITE, CGT_LEVEL_LL);
	r->ev_bc = cgt_event_set_find(&r->events, CGT_ACCESS_COND, CGT_EVENT_EXECUTED);
	r->ev_bcm = cgt_event_set_find(&r->events, CGT_ACCESS_COND, CGT_EVENT_MISPREDICT);
	r->ev_bi = cgt_event_set_find(&r->events, CGT_ACCESS_INDIRECT, CGT_EVENT_EXECUTED);
	r->ev_bim = cgt_event_set_find(&r->events, CGT_ACCESS_INDIRECT, CGT_EVENT_MISPREDICT);
	r->ev_ildmr = cgt_event_set_find(&r->events, CGT_ACCESS_FETCH, CGT_EVENT_DIRTY_MISS);
	r->ev_dldmr = cgt_event_set_find(&r->events, CGT_ACCESS_READ, CGT_EVENT_DIRTY_MISS);
	r->ev_dldmw = cgt_event_set_find(&r->events, CGT_ACCESS_WRITE, CGT_EVENT_DIRTY_MISS);
	r->cache_use = o->cache_sim && o->model.cache_use;
	if (r->cache_use) {
		const int use_columns[USE_COLUMNS] = {
			[USE_ACCOST1] = cgt_event_set_find(&r->events, CGT_ACCESS_USE_COST, CGT_LEVEL_D1),
			[USE_SPLOSS1] = cgt_event_set_find(&r->events, CGT_ACCESS_USE_LOSS, CGT_LEVEL_D1),
			[USE_ACCOST2] = cgt_event_set_find(&r->events, CGT_ACCESS_USE_COST, CGT_LEVEL_LL),
			[USE_SPLOSS2] = cgt_event_set_find(&r->events, CGT_ACCESS_USE_LOSS, CGT_LEVEL_LL),
		};
		backdate_init(&r->backdate, use_columns);
		if (use_sink_init(&r->use, &o->caches, use_columns,
				  o->cache_use_inclusive ? &r->backdate : NULL) < 0)
			return -1;
	}
	/* offset 0 of the pools means "none" */
	return vec_extend(&r->u64s, 1) < 0 || vec_extend(&r->u32s, 1) < 0 ? -1 : 0;
}

int cgt_callgraph_run(const struct cgt_callgraph_options *o, struct cgt_decoder *d,
		      struct cgt_error *e)
{
	if (check_trace(d, e) < 0)
		return -e->status;
	struct replay r = { 0 };
	struct producer p;
	int rc;
	e->status = 0;
	/* The producer's state first, then the replay's: the order the
	   replay's speed on two threads was measured with (where the two
	   sides' allocations fall next to each other may matter). */
	if ((rc = callgraph_producer_open(&p, o, d, e)) < 0)
		goto out;
	if (replay_init(&r, o) < 0) {
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		goto out;
	}
	rc = replay_chunks(&r, &p, o->threads, e);
	if (rc < 0)
		goto out;
	/* Callgrind's cacheuse_finish: every line resident evicted, if the
	   thread that ran last collects */
	if (r.cache_use && r.cur != NULL) {
		const struct level_use *const l1_use[2] = { p.use_caches.l1[0].use, p.use_caches.l1[1].use };
		use_sink_finish(&r.use, l1_use, state(r.cur)->collect, r.u64s.v);
	}
	for (uint32_t tid = 0; tid < r.n_threads; tid++)
		if (r.threads[tid] != NULL)
			unwind_thread(&r, r.threads[tid], e);
	rc = dump_profile(&r, NULL, e);
	if (o->stats != NULL)
		*o->stats = (struct cgt_callgraph_stats){ r.backdate.made, r.backdate.peak };
out:
	callgraph_producer_close(&p);
	replay_free(&r);
	return rc < 0 ? rc : 0;
}
