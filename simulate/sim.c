/*
 * The simulator: replays executions through the cache and branch models.
 *
 * Counting is split in two so that the hot loop only simulates:
 *  - per block, how many executions left by each exit (one increment per
 *    execution); at the end every op of an executed prefix is credited
 *    with those counts -- Ir, Dr, Dw, Bc and Bi follow from them;
 *  - per op, the rare events: misses, mispredicts, and the executions of
 *    guarded accesses whose guard held.
 *
 * Each block is compiled at its first execution (block_program.h), and an
 * execution is then simulated model by model: its instruction fetches
 * through I1, its data references through D1, its branches through the
 * predictors.  Only LL sees both fetches and data, so the L1 misses of an
 * execution are collected and sent to LL afterwards, in program order.
 *
 * Segments of the trace (decode.h) are simulated by workers on threads of
 * their own.  A segment whose predecessors are all done starts from their
 * exact state and is simulated exactly.  Any other starts from a state not
 * known yet (cache_model.h, branch_model.h): what depends on that state is
 * noted, and its L1 misses wait for LL.  The join then takes the segments
 * in order: it settles what was unknown against the exact state before the
 * segment, runs the segment's L1 misses through LL, and so carries the
 * exact state forward.  The counts are Cachegrind's, whatever the number of
 * threads.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "block_program.h"
#include "branch_model.h"
#include "cache_model.h"
#include "cache_use.h"
#include "hier.h"
#include "ll_model.h"
#include "sim.h"
#include "specialise.h"

enum { I1_CACHE, D1_CACHE };

/* An L1 miss of the execution being simulated, waiting for LL. */
struct l1_miss {
	uint64_t addr;
	uint32_t op;
	uint8_t size;
	uint8_t cache;
	uint8_t unknown;	/* it may have hit: events say which lookups decide */
	uint32_t events[2];
};

/* The same, of a segment simulated from an unknown state, for the join. */
struct ll_ref {
	uint64_t addr;
	uint64_t *row;		/* the op's counters */
	uint32_t events[2];
	uint8_t size;
	uint8_t cache;
	uint8_t unknown;
};

struct cond_unknown {
	uint64_t *row;
	uint32_t counter;
	uint8_t state, taken;
};

struct target_unknown {
	uint64_t *row;
	uint64_t target;
	uint32_t slot;
};

#define VECTOR(type) struct { type *v; size_t n, cap; }

/* A segment being simulated or waiting for the join. */
struct segment {
	uint64_t index;
	int exact;		/* started from the exact state before it */
	int ready;		/* simulated: the join may take it */
	int instrumenting;	/* Cachegrind's instrumentation is on */
	struct cache_model I1, D1;
	struct branch_model branches;
	VECTOR(struct ll_ref) ll;
	VECTOR(struct cond_unknown) conds;
	VECTOR(struct target_unknown) targets;
	uint64_t insns;		/* for progress */
};

/* One thread's: its blocks' programs (and counters). */
struct worker {
	struct cgt_sim *s;
	struct block_program **programs;	/* by block id; NULL: not run yet */
	size_t n_programs;
	struct l1_miss *misses;		/* room for one execution's */
	size_t misses_cap;
};

#define MAX_WORKERS 64

/* What this engine simulates: Cachegrind's three caches or none. */
struct engine_options {
	int cache_sim, branch_sim;
	struct cgt_cache_config I1, D1, LL;
};

struct cgt_sim {
	struct engine_options o;
	/* Any other configuration, or several: this engine counts executions
	   and branches, and the hierarchy engine the misses. */
	struct hier *hier;
	unsigned n_configs;
	struct cgt_hierarchy *configs;
	int cache_sim;			/* asked for (o.cache_sim: by this engine) */
	int instr_at_start;		/* cgt_sim_options' */
	struct cgt_cache_model model;	/* cgt_sim_options' */
	/* Cachegrind's instrumentation was off at some time (atomic): blocks
	   that ran only then are not listed */
	int instr_off_seen;
	const char *trace_path;
	struct block_program_options compile;

	/* The exact state after the segments joined so far. */
	struct cache_model I1, D1;
	struct ll_model LL;
	struct branch_model branches;
	uint8_t *missed[2];		/* cache_settle's outcomes, I1 and D1 */

	struct worker workers[MAX_WORKERS];
	unsigned n_workers;

	pthread_mutex_t lock;		/* everything below */
	pthread_cond_t cond;
	struct segment **window;	/* by index % window_size: taken, not joined */
	unsigned window_size;
	struct segment **spare;
	unsigned n_spare;
	uint64_t next_join;
	unsigned in_flight;		/* taken, or being taken, and not joined */
	int hierarchy_done;		/* count_beside_hierarchy's */
	int joining;
	int failed;
	uint64_t failed_index;		/* read without the lock: atomic */
	struct cgt_error error;
	uint64_t insns_joined;
};

#define PUSH(vec, item)                                                                            \
	((vec).n < (vec).cap ||                                                                    \
		 cgt_array_grow(&(vec).v, &(vec).cap, (vec).n, 1, sizeof(*(vec).v)) == 0           \
		 ? ((vec).v[(vec).n++] = (item), 0)                                                \
		 : -1)

static int caches_init(const struct engine_options *o, struct cache_model *I1,
		       struct cache_model *D1)
{
	return cache_model_init(I1, (uint32_t)o->I1.size, (uint32_t)o->I1.assoc, (uint32_t)o->I1.line) < 0 ||
			       cache_model_init(D1, (uint32_t)o->D1.size, (uint32_t)o->D1.assoc,
						(uint32_t)o->D1.line) < 0
		       ? -1
		       : 0;
}

/* The smallest line size of a configuration's levels. */
static uint32_t min_line_of(const struct cgt_hierarchy *h)
{
	uint32_t min = UINT32_MAX;
	for (int l = 0; l < CGT_N_LEVELS; l++)
		if (h->level[l].size != 0 && (uint32_t)h->level[l].line < min)
			min = (uint32_t)h->level[l].line;
	return min;
}

int cgt_sim_open(struct cgt_sim **out, const struct cgt_sim_options *o, uint32_t max_access_size,
		 struct cgt_error *e)
{
	struct cgt_sim *s;

	*out = NULL;
	const int cache_sim = o->cache_sim && o->n_configs > 0;
	uint32_t min_line = cache_sim ? min_line_of(&o->configs[0]) : 64;
	for (unsigned c = 1; cache_sim && c < o->n_configs; c++)
		if (min_line_of(&o->configs[c]) != min_line)
			return cgt_fail(e, cgt_err_invalid,
					"the configurations' smallest line sizes differ (%u and %u B): "
					"Cachegrind cuts large accesses to that size, so one run "
					"needs one",
					min_line, min_line_of(&o->configs[c]));
	if (cache_sim && min_line < max_access_size)
		return cgt_fail(e, cgt_err_invalid,
				"cannot continue: the minimum line size (%u)\n"
				"  must be equal to or larger than the maximum register size (%u)\n"
				"  but it is not.  Exiting now.",
				min_line, max_access_size);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	s->failed_index = UINT64_MAX;
	s->instr_at_start = o->instr_at_start;
	s->model = o->model;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	branch_model_init(&s->branches, 1, 0);
	s->cache_sim = cache_sim;
	s->trace_path = o->trace_path;
	s->n_configs = o->n_configs;
	s->o.branch_sim = o->branch_sim;
	/* Kept without cache simulation too: the files describe the caches. */
	if (o->n_configs > 0) {
		s->configs = malloc(o->n_configs * sizeof(*s->configs));
		if (s->configs == NULL) {
			cgt_sim_close(s);
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		}
		memcpy(s->configs, o->configs, o->n_configs * sizeof(*s->configs));
	}
	struct specialisations may;
	specialisations_choose(&o->model, &may);
	if (cache_sim && o->n_configs == 1 && o->configs[0].level[CGT_LEVEL_L2].size == 0 &&
	    may.segment_engine) {
		const struct cgt_hierarchy *only = &o->configs[0];
		/* Cachegrind's shape: this engine alone, its own caches. */
		s->o.cache_sim = 1;
		s->o.I1 = only->level[CGT_LEVEL_I1];
		s->o.D1 = only->level[CGT_LEVEL_D1];
		s->o.LL = only->level[CGT_LEVEL_LL];
		if (caches_init(&s->o, &s->I1, &s->D1) < 0 ||
		    ll_model_init(&s->LL, (uint32_t)s->o.LL.size, (uint32_t)s->o.LL.assoc,
				  (uint32_t)s->o.LL.line) < 0 ||
		    (s->missed[I1_CACHE] = malloc(cache_model_slots(&s->I1))) == NULL ||
		    (s->missed[D1_CACHE] = malloc(cache_model_slots(&s->D1))) == NULL) {
			cgt_sim_close(s);
			return cgt_fail(e, cgt_err_nomem, "out of memory for the simulated caches");
		}
	} else if (cache_sim) {
		if (o->trace_path == NULL) {
			cgt_sim_close(s);
			return cgt_fail(e, cgt_err_invalid, "no trace path for a run of several configurations");
		}
		if (hier_open(&s->hier, o->configs, o->n_configs, min_line, o->instr_at_start, &o->model,
			      e) < 0) {
			cgt_sim_close(s);
			return -e->status;
		}
	}
	/* Guarded data references are counted (Dr, Dw) even without caches. */
	s->compile = (struct block_program_options){ s->o.cache_sim, s->o.branch_sim, s->I1.line_bits,
						     s->I1.way_bits, s->I1.sets_mask, min_line,
						     may.elide_mru_fetches ? FETCH_NEW_LINES : FETCH_RUNS };
	*out = s;
	return 0;
}

/* The program of blk, compiled now: NULL if out of memory. */
static struct block_program *first_run(struct worker *w, const struct cgt_block *blk)
{
	if (blk->id >= w->n_programs) {
		size_t n = w->n_programs;
		if (cgt_array_grow(&w->programs, &n, 0, (size_t)blk->id + 1, sizeof(*w->programs)) < 0)
			return NULL;
		memset(w->programs + w->n_programs, 0, (n - w->n_programs) * sizeof(*w->programs));
		w->n_programs = n;
	}
	struct block_program *bp = block_program_compile(blk, &w->s->compile);
	if (bp == NULL)
		return NULL;
	if (bp->max_refs > w->misses_cap &&
	    cgt_array_grow(&w->misses, &w->misses_cap, 0, bp->max_refs, sizeof(*w->misses)) < 0) {
		free(bp);
		return NULL;
	}
	return w->programs[blk->id] = bp;
}

/* Sends an execution's L1 misses on in program order: m[0 .. n_fetch) are
   the fetch misses, m[n_fetch .. n) the data misses, each in op order.
   LL: the exact LL, or NULL to leave them for the join. */
static int settle_misses(struct segment *seg, struct ll_model *LL, struct block_program *bp,
			 const struct l1_miss *m, uint32_t n_fetch, uint32_t n)
{
	uint32_t i = 0, j = n_fetch;

	while (i < n_fetch || j < n) {
		const struct l1_miss *next = j == n || (i < n_fetch && m[i].op < m[j].op) ? &m[i++] : &m[j++];
		uint64_t *row = bp->op_counts[next->op];
		row[OP_MISS1] += !next->unknown;
		if (LL != NULL) {
			row[OP_MISSLL] += (uint64_t)ll_ref_is_miss(LL, next->addr, next->size);
			continue;
		}
		struct ll_ref ref = { next->addr, row, { next->events[0], next->events[1] }, next->size,
				      next->cache, next->unknown };
		if (PUSH(seg->ll, ref) < 0)
			return -1;
	}
	return 0;
}

/* Simulates a batch of the segment.  LL: as for settle_misses.  count_insns:
   add the instructions simulated to seg->insns (for progress).  0, or
   negative on error (e set). */
static int run_batch(struct worker *w, struct segment *seg, struct ll_model *LL,
		     const struct cgt_batch *batch, int count_insns, struct cgt_error *e)
{
	/* The batch in a local: the decoding's cursor stays in registers. */
	struct cgt_batch b = *batch;
	struct cgt_exec exec = { 0 };
	/* Models and plans in locals: through pointers the compiler would
	   reload them after every store. */
	struct cache_model I1 = seg->I1, D1 = seg->D1;
	struct branch_model *branches = &seg->branches;
	uint64_t history = branches->history;
	const int cache_sim = w->s->o.cache_sim;
	struct l1_miss *misses = w->misses;
	int rc, out_of_memory = 0;

	while (!out_of_memory && (rc = cgt_batch_next(&b, &exec, e)) > 0) {
		const struct cgt_exec *x = &exec;
		const uint32_t id = x->block_id;
		struct block_program *bp = id < w->n_programs ? w->programs[id] : NULL;
		if (__builtin_expect(bp == NULL, 0)) {
			bp = first_run(w, x->block);
			if (bp == NULL) {
				out_of_memory = 1;
				break;
			}
			misses = w->misses;
		}
		if (count_insns)
			seg->insns += x->block->prefix_counts[x->exit].insns;
		/* The plan read where used: a copy would be kept on the stack. */
		struct prefix_plan *plan = &bp->prefixes[x->exit];
		const uint64_t *v = x->values;
		uint32_t n_miss = 0, events[2];
		enum ref_outcome r;

		plan->executions++;
		for (uint32_t f = 0, n = plan->n_fetches; f < n; f++) {
			const struct fetch_step *fs = &bp->fetches[f];
			/* the usual case, a hit on the set's MRU line, found at once */
			if (I1.tags[fs->set_at] == fs->line)
				continue;
			r = cache_ref(&I1, fs->addr, fs->len, events);
			if (__builtin_expect(r != REF_HIT, 0))
				misses[n_miss++] = (struct l1_miss){ fs->addr, fs->op, (uint8_t)fs->len, I1_CACHE,
								     r == REF_UNKNOWN, { events[0], events[1] } };
		}
		const uint32_t n_fetch_misses = n_miss;
		if (__builtin_expect(bp->n_guarded == 0, 1)) {
			const uint8_t *sizes = bp->data_sizes;
			for (uint32_t j = 0, n = plan->n_data; j < n; j++) {
				r = cache_ref(&D1, v[j], sizes[j], events);
				if (__builtin_expect(r != REF_HIT, 0))
					misses[n_miss++] = (struct l1_miss){ v[j], bp->data_ops[j], sizes[j],
									     D1_CACHE, r == REF_UNKNOWN,
									     { events[0], events[1] } };
			}
		} else {
			for (uint32_t j = 0, n = plan->n_data; j < n; j++) {
				if (v[j] == CGT_NO_ACCESS)
					continue;
				if (bp->data_guarded[j])
					bp->op_counts[bp->data_ops[j]][OP_DONE]++;
				if (!cache_sim)
					continue;
				r = cache_ref(&D1, v[j], bp->data_sizes[j], events);
				if (r != REF_HIT)
					misses[n_miss++] = (struct l1_miss){ v[j], bp->data_ops[j],
									     bp->data_sizes[j], D1_CACHE,
									     r == REF_UNKNOWN,
									     { events[0], events[1] } };
			}
		}
		if (__builtin_expect(n_miss != 0, 0) &&
		    settle_misses(seg, LL, bp, misses, n_fetch_misses, n_miss) < 0)
			out_of_memory = 1;

		const struct cond_step *conds = bp->conds;
		const uint32_t n_conds = plan->n_conds, last_taken = plan->exit_is_last_cond;
		for (uint32_t c = 0; c < n_conds; c++) {
			/* exits before the last one were not taken */
			int taken = (int)(conds[c].inverted ^ (last_taken & (c + 1 == n_conds)));
			uint32_t counter;
			uint8_t state;
			enum branch_outcome o = cond_branch(branches, &history, conds[c].pc, taken, &counter,
							    &state);
			/* Counted without a branch: the simulated predictor's
			   mispredicts would be the host's. */
			if (__builtin_expect(o != BRANCH_UNKNOWN, 1)) {
				bp->op_counts[conds[c].op][OP_MISS1] += o == BRANCH_MISPREDICTED;
			} else {
				struct cond_unknown u = { bp->op_counts[conds[c].op], counter, state,
							  (uint8_t)taken };
				if (PUSH(seg->conds, u) < 0)
					out_of_memory = 1;
			}
		}
		if (plan->indirect) {
			uint32_t slot;
			uint64_t target = v[bp->indirect_value];
			enum branch_outcome o = indirect_branch(branches, bp->indirect_pc, target, &slot);
			if (o == BRANCH_MISPREDICTED) {
				bp->op_counts[bp->indirect_op][OP_MISS1]++;
			} else if (__builtin_expect(o == BRANCH_UNKNOWN, 0)) {
				struct target_unknown u = { bp->op_counts[bp->indirect_op], target, slot };
				if (PUSH(seg->targets, u) < 0)
					out_of_memory = 1;
			}
		}
	}
	seg->I1 = I1;
	seg->D1 = D1;
	branches->history = history;
	return out_of_memory ? cgt_fail(e, cgt_err_nomem, "out of memory") : rc;
}

/* ---- The join ---------------------------------------------------------- */

static void copy_state(struct cache_model *to, const struct cache_model *from)
{
	memcpy(to->tags, from->tags, cache_model_slots(from) * sizeof(*to->tags));
}

#define JOIN_PREFETCH 16

/* Takes seg, the next segment in order, into the exact state. */
static int join(struct cgt_sim *s, struct segment *seg)
{
	if (seg->exact) {
		if (s->o.cache_sim) {
			copy_state(&s->I1, &seg->I1);
			copy_state(&s->D1, &seg->D1);
		}
		s->branches = seg->branches;
		return 0;
	}
	if (s->o.cache_sim) {
		if (cache_settle(&seg->I1, s->I1.tags, s->missed[I1_CACHE]) < 0 ||
		    cache_settle(&seg->D1, s->D1.tags, s->missed[D1_CACHE]) < 0)
			return -1;
		for (size_t k = 0; k < seg->ll.n; k++) {
			const struct ll_ref *ref = &seg->ll.v[k];
			/* LL's sets are far apart in memory and the references
			   are all known: fetch the sets of later ones meanwhile. */
			if (k + JOIN_PREFETCH < seg->ll.n)
				ll_prefetch_set(&s->LL, seg->ll.v[k + JOIN_PREFETCH].addr);
			if (ref->unknown) {
				const uint8_t *missed = s->missed[ref->cache];
				int miss = (ref->events[0] != CACHE_NO_EVENT && missed[ref->events[0]]) ||
					   (ref->events[1] != CACHE_NO_EVENT && missed[ref->events[1]]);
				if (!miss)
					continue;
				ref->row[OP_SETTLED]++;
			}
			/* the rows are the workers': written only when counting */
			if (ll_ref_is_miss(&s->LL, ref->addr, ref->size))
				ref->row[OP_MISSLL]++;
		}
		copy_state(&s->I1, &seg->I1);
		copy_state(&s->D1, &seg->D1);
	}
	for (size_t k = 0; k < seg->conds.n; k++) {
		const struct cond_unknown *u = &seg->conds.v[k];
		u->row[OP_SETTLED] += (uint64_t)branch_settle_cond(&s->branches, u->counter, u->state, u->taken);
	}
	for (size_t k = 0; k < seg->targets.n; k++) {
		const struct target_unknown *u = &seg->targets.v[k];
		u->row[OP_SETTLED] += (uint64_t)branch_settle_indirect(&s->branches, u->slot, u->target);
	}
	branch_settle(&seg->branches, &s->branches);
	s->branches = seg->branches;
	return 0;
}

/* Joins every ready segment in order, unless another thread is at it.
   Called with the lock held. */
static void join_ready(struct cgt_sim *s)
{
	if (s->joining)
		return;
	s->joining = 1;
	for (;;) {
		struct segment *seg = s->window[s->next_join % s->window_size];
		if (seg == NULL || !seg->ready || seg->index != s->next_join || s->failed)
			break;
		pthread_mutex_unlock(&s->lock);
		int rc = join(s, seg);
		pthread_mutex_lock(&s->lock);
		if (rc < 0 && !s->failed) {
			s->failed = 1;
			__atomic_store_n(&s->failed_index, seg->index, __ATOMIC_RELAXED);
			cgt_fail(&s->error, cgt_err_nomem, "out of memory");
		}
		s->insns_joined += seg->insns;
		s->window[s->next_join % s->window_size] = NULL;
		s->spare[s->n_spare++] = seg;
		s->next_join++;
		s->in_flight--;
		pthread_cond_broadcast(&s->cond);
	}
	s->joining = 0;
}

/* ---- Workers ------------------------------------------------------------ */

static void segment_free(struct segment *seg)
{
	if (seg == NULL)
		return;
	cache_model_free(&seg->I1);
	cache_model_free(&seg->D1);
	free(seg->ll.v);
	free(seg->conds.v);
	free(seg->targets.v);
	free(seg);
}

/* A segment to simulate, from the spare ones or new.  Lock held. */
static struct segment *segment_get(struct cgt_sim *s)
{
	if (s->n_spare > 0)
		return s->spare[--s->n_spare];
	struct segment *seg = calloc(1, sizeof(*seg));
	if (seg != NULL && s->o.cache_sim && caches_init(&s->o, &seg->I1, &seg->D1) < 0) {
		segment_free(seg);
		return NULL;
	}
	return seg;
}

struct thread_args {
	struct cgt_sim *s;
	struct worker *w;
	struct cgt_decoder *d;
	const struct cgt_sim_progress *progress;
	int retires;		/* takes no segment once the hierarchy is done */
};

static void fail_at(struct cgt_sim *s, uint64_t index, const struct cgt_error *e)
{
	pthread_mutex_lock(&s->lock);
	if (!s->failed || index < s->failed_index) {
		s->failed = 1;
		__atomic_store_n(&s->failed_index, index, __ATOMIC_RELAXED);
		s->error = *e;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Simulates the segment taken as seg (its index set). */
static int simulate_segment(struct cgt_sim *s, struct worker *w, struct cgt_decode_worker *dw,
			    const struct cgt_segment_info *info, struct segment *seg,
			    const struct cgt_sim_progress *progress, struct cgt_error *e)
{
	struct cgt_batch b;
	int rc;

	seg->ll.n = seg->conds.n = seg->targets.n = 0;
	seg->insns = 0;
	/* All before it joined: start from the exact state, LL included. */
	pthread_mutex_lock(&s->lock);
	seg->exact = s->next_join == info->index;
	pthread_mutex_unlock(&s->lock);
	if (seg->exact) {
		if (s->o.cache_sim) {
			copy_state(&seg->I1, &s->I1);
			copy_state(&seg->D1, &s->D1);
			seg->I1.n_unknowns = seg->D1.n_unknowns = 0;
		}
		seg->branches = s->branches;
		seg->branches.history = info->cond_history;
	} else {
		if (s->o.cache_sim) {
			cache_model_forget(&seg->I1);
			cache_model_forget(&seg->D1);
		}
		branch_model_init(&seg->branches, 0, info->cond_history);
	}
	struct ll_model *LL = seg->exact && s->o.cache_sim ? &s->LL : NULL;
	/* Cachegrind's instrumentation: the segment knows the last request
	   before it (a fact of the trace, not of the segments simulated) */
	seg->instrumenting = info->cachegrind_instr == CGT_CG_INSTR_NONE ? s->instr_at_start
			     : info->cachegrind_instr == CGT_CG_INSTR_START;
	while ((rc = cgt_decode_worker_next(dw, &b, e)) > 0) {
		if (b.mark.kind == CGT_MARK_REQUEST)
			seg->instrumenting = cgt_cachegrind_instr_after(seg->instrumenting ? CGT_CG_INSTR_START
											   : CGT_CG_INSTR_STOP,
								       b.mark.code) == CGT_CG_INSTR_START;
		if (!seg->instrumenting) {
			/* decoded, not simulated nor counted: Cachegrind 3.22 with
			   its instrumentation off */
			__atomic_store_n(&s->instr_off_seen, 1, __ATOMIC_RELAXED);
			struct cgt_exec x;
			while ((rc = cgt_batch_next(&b, &x, e)) > 0)
				;
			if (rc < 0 && !cgt_decode_worker_lost(dw, e))
				return -e->status;
			continue;
		}
		/* A block lost with damage before: the rest of the segment is. */
		if (run_batch(w, seg, LL, &b, progress != NULL, e) < 0 && !cgt_decode_worker_lost(dw, e))
			return -e->status;
		/* A segment before this one failed: this one does not count.  (One
		   after it does not stop it: the first error in the trace is the
		   one reported, whatever the threads' timing.) */
		if (__atomic_load_n(&s->failed_index, __ATOMIC_RELAXED) < info->index)
			return 0;
	}
	return rc;
}

static void *worker_main(void *arg)
{
	struct thread_args *a = arg;
	struct cgt_sim *s = a->s;
	struct cgt_decode_worker *dw = NULL;
	struct cgt_segment_info info;
	struct cgt_error e;

	if (cgt_decode_worker_open(a->d, &dw, &e) < 0) {
		fail_at(s, 0, &e);
		return NULL;
	}
	for (;;) {
		/* Keep within the window: memory stays bounded. */
		pthread_mutex_lock(&s->lock);
		int stop;
		while (!(stop = s->failed || (a->retires && s->hierarchy_done)) &&
		       s->in_flight == s->window_size)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!stop)
			s->in_flight++;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;

		info.index = UINT64_MAX;
		int rc = cgt_decode_worker_take(dw, &info, &e);
		if (rc <= 0) {
			if (rc < 0)
				fail_at(s, info.index, &e);
			pthread_mutex_lock(&s->lock);
			s->in_flight--;
			pthread_cond_broadcast(&s->cond);
			pthread_mutex_unlock(&s->lock);
			break;
		}
		pthread_mutex_lock(&s->lock);
		struct segment *seg = segment_get(s);
		pthread_mutex_unlock(&s->lock);
		if (seg == NULL) {
			cgt_fail(&e, cgt_err_nomem, "out of memory");
			fail_at(s, info.index, &e);
			break;
		}
		seg->index = info.index;
		seg->ready = 0;
		pthread_mutex_lock(&s->lock);
		s->window[info.index % s->window_size] = seg;
		pthread_mutex_unlock(&s->lock);

		rc = simulate_segment(s, a->w, dw, &info, seg, a->progress, &e);
		if (rc < 0) {
			fail_at(s, info.index, &e);
			break;
		}
		pthread_mutex_lock(&s->lock);
		seg->ready = 1;
		join_ready(s);
		if (a->progress != NULL)
			a->progress->update(a->progress->arg, cgt_decoder_file_offset(a->d),
					    cgt_decoder_file_size(a->d), s->insns_joined);
		pthread_mutex_unlock(&s->lock);
	}
	cgt_decode_worker_close(dw);
	return NULL;
}

/* The progress of one of two passes over the trace, shown as one: the
   first takes the first half of the bar, the second the rest, and tells
   the instructions the first counted. */
struct pass_progress {
	struct cgt_sim_progress as_seen;	/* what the pass is given */
	const struct cgt_sim_progress *outer;
	int second;
	uint64_t insns;
};

static void pass_update(void *arg, uint64_t done, uint64_t total, uint64_t insns)
{
	struct pass_progress *p = arg;
	if (p->second)
		p->outer->update(p->outer->arg, total + done, 2 * total, p->insns);
	else
		p->outer->update(p->outer->arg, done, 2 * total, insns);
}

/* Runs n workers until the trace is simulated: one on this thread, the
   others on threads of their own. */
static void run_workers(struct cgt_sim *s, unsigned n, struct cgt_decoder *d,
			const struct cgt_sim_progress *progress)
{
	pthread_t ids[MAX_WORKERS];
	struct thread_args args[MAX_WORKERS];
	unsigned started = 0;
	for (unsigned t = 0; t < n && s->n_workers < MAX_WORKERS; t++) {
		struct worker *w = &s->workers[s->n_workers++];
		w->s = s;
		args[t] = (struct thread_args){ s, w, d, progress, 0 };
		/* The first runs on this thread. */
		if (t > 0 && cgt_thread_create(&ids[t], worker_main, &args[t]) != 0) {
			s->n_workers--;
			break;
		}
		started = t + 1;
	}
	worker_main(&args[0]);
	for (unsigned t = 1; t < started; t++)
		pthread_join(ids[t], NULL);
}

/* A worker at the lowest priority: it takes only what the others leave
   of the CPUs.  (Linux: a thread's nice value is its own.) */
static void *idle_worker_main(void *arg)
{
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	return worker_main(arg);
}

/*
 * Executions and branches counted beside the hierarchy engine, which runs
 * on `threads` threads of its own (this one first).  The counting starts
 * on one more thread at the lowest priority, so that it uses what the
 * hierarchy leaves of the CPUs: the hierarchy's decoding thread is often
 * its longest, and parts wait for it meanwhile (the sweep of 16
 * configurations: 2.29-2.61 s against 2.82-3.24 at an equal priority).
 * Once the hierarchy is done, what is left of the counting takes `threads`
 * threads (the D1 curve, where the parts are longest: else its last 1.5 s
 * on one thread).  Segments taken after the first start from states not
 * known: they are settled as with any number of threads.
 */
static int count_beside_hierarchy(struct cgt_sim *s, struct cgt_decoder *d, unsigned threads,
				  const struct cgt_sim_progress *progress, struct cgt_error *e)
{
	struct thread_args idle = { s, &s->workers[s->n_workers++], d, NULL, 1 };
	idle.w->s = s;
	pthread_t idle_id;
	int idle_started = cgt_thread_create(&idle_id, idle_worker_main, &idle) == 0;
	int rc = hier_run(s->hier, s->trace_path, threads, progress, e);
	if (rc < 0)
		fail_at(s, 0, e);	/* the counting stops */
	/* The rest of the counting on every thread (if the idle one could not
	   start, all of it); the idle one finishes its segment and stops, as
	   it would get little of the CPUs and the others would wait for it. */
	pthread_mutex_lock(&s->lock);
	s->hierarchy_done = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (!idle_started)
		s->n_workers--;
	run_workers(s, threads, d, NULL);
	if (idle_started)
		pthread_join(idle_id, NULL);
	return rc;
}

int cgt_sim_trace(struct cgt_sim *s, struct cgt_decoder *d, unsigned threads,
		  const struct cgt_sim_progress *progress, struct cgt_error *e)
{
	struct pass_progress passes = { { pass_update, &passes }, progress, 0, 0 };
	const int beside = s->hier != NULL && threads > 1;

	if (threads < 1)
		threads = 1;
	if (threads > MAX_WORKERS - 1)
		threads = MAX_WORKERS - 1;	/* room for the idle worker */
	/* One thread: the counting, then the hierarchy, one progress bar. */
	if (s->hier != NULL && !beside && progress != NULL)
		progress = &passes.as_seen;
	const unsigned workers = threads + (unsigned)beside;
	s->window_size = 2 * workers + 2;
	s->window = calloc(s->window_size, sizeof(*s->window));
	s->spare = calloc(s->window_size + workers, sizeof(*s->spare));
	if (s->window == NULL || s->spare == NULL) {
		free(s->window);
		free(s->spare);
		s->window = s->spare = NULL;
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	int rc = 0;
	if (beside) {
		rc = count_beside_hierarchy(s, d, threads, progress, e);
	} else {
		run_workers(s, threads, d, progress);
	}

	for (unsigned k = 0; k < s->window_size; k++)
		segment_free(s->window[k]);
	for (unsigned k = 0; k < s->n_spare; k++)
		segment_free(s->spare[k]);
	free(s->window);
	free(s->spare);
	s->window = s->spare = NULL;
	s->n_spare = 0;
	if (rc < 0)
		return rc;	/* the hierarchy's error */
	if (s->failed) {
		*e = s->error;
		return -e->status;
	}
	if (s->hier == NULL || beside)
		return 0;
	passes.second = 1;
	passes.insns = s->insns_joined;
	return hier_run(s->hier, s->trace_path, threads, progress, e);
}

/* Where each (kind of access, what is counted) goes among a profile's
   events: -1 where the event set has no such column. */
struct columns {
	int executed[CGT_ACCESS_INDIRECT + 1];
	int mispredicted[CGT_ACCESS_INDIRECT + 1];
	int missed[CGT_ACCESS_INDIRECT + 1][CGT_N_LEVELS];
	int dirty[CGT_ACCESS_INDIRECT + 1];	/* LL misses that evicted a dirty line */
	int use[USE_COLUMNS];			/* cache use's (cache_use.h) */
};

static void columns_init(struct columns *c, const struct cgt_event_set *es)
{
	for (int a = CGT_ACCESS_FETCH; a <= CGT_ACCESS_INDIRECT; a++) {
		c->executed[a] = cgt_event_set_find(es, (enum cgt_access)a, CGT_EVENT_EXECUTED);
		c->mispredicted[a] = cgt_event_set_find(es, (enum cgt_access)a, CGT_EVENT_MISPREDICT);
		for (int l = 0; l < CGT_N_LEVELS; l++)
			c->missed[a][l] = cgt_event_set_find(es, (enum cgt_access)a, l);
		c->dirty[a] = cgt_event_set_find(es, (enum cgt_access)a, CGT_EVENT_DIRTY_MISS);
	}
	c->use[USE_ACCOST1] = cgt_event_set_find(es, CGT_ACCESS_USE_COST, CGT_LEVEL_D1);
	c->use[USE_SPLOSS1] = cgt_event_set_find(es, CGT_ACCESS_USE_LOSS, CGT_LEVEL_D1);
	c->use[USE_ACCOST2] = cgt_event_set_find(es, CGT_ACCESS_USE_COST, CGT_LEVEL_LL);
	c->use[USE_SPLOSS2] = cgt_event_set_find(es, CGT_ACCESS_USE_LOSS, CGT_LEVEL_LL);
}

/* The access an op makes; -1 for ops that make none. */
static int access_of(uint8_t kind)
{
	switch (kind) {
	case CGT_OP_INSN: return CGT_ACCESS_FETCH;
	case CGT_OP_READ:
	case CGT_OP_MODIFY:
	case CGT_OP_READ_GUARDED: return CGT_ACCESS_READ;
	case CGT_OP_WRITE:
	case CGT_OP_WRITE_GUARDED: return CGT_ACCESS_WRITE;
	case CGT_OP_COND:
	case CGT_OP_COND_INV: return CGT_ACCESS_COND;
	case CGT_OP_INDIRECT: return CGT_ACCESS_INDIRECT;
	default: return -1;
	}
}

static void add(uint64_t *row, int column, uint64_t n)
{
	if (column >= 0)
		row[column] += n;
}

/* This engine's counts of blk into its rows (n_insns of them). */
static void engine_counts(const struct cgt_sim *s, const struct cgt_block *blk,
			  const struct columns *col, unsigned n_events, uint64_t *rows)
{
	for (unsigned wi = 0; wi < s->n_workers; wi++) {
		const struct worker *w = &s->workers[wi];
		if (blk->id >= w->n_programs || w->programs[blk->id] == NULL)
			continue;
		const struct block_program *st = w->programs[blk->id];

		/* Executions: every op of a prefix counts once per execution
		   of it, but guarded accesses count only when made. */
		for (uint32_t exit = 0; exit <= blk->n_exits; exit++) {
			uint64_t n = st->prefixes[exit].executions;
			uint32_t cut = exit == 0 ? st->whole_ops : blk->ops_in_prefix[exit];
			for (uint32_t k = 0; k < cut && n; k++) {
				int access = access_of(blk->ops[k].kind);
				if (access >= 0 && blk->ops[k].kind != CGT_OP_READ_GUARDED &&
				    blk->ops[k].kind != CGT_OP_WRITE_GUARDED)
					add(rows + (size_t)blk->ops[k].insn * n_events,
					    col->executed[access], n);
			}
		}
		/* Per-op counters: misses, mispredicts, guarded accesses made. */
		for (uint32_t k = 0; k < blk->n_ops; k++) {
			int access = access_of(blk->ops[k].kind);
			if (access < 0)
				continue;
			const uint64_t *c = st->op_counts[k];
			uint64_t *row = rows + (size_t)blk->ops[k].insn * n_events;
			uint64_t first = c[OP_MISS1] + c[OP_SETTLED];
			if (blk->ops[k].kind == CGT_OP_READ_GUARDED || blk->ops[k].kind == CGT_OP_WRITE_GUARDED)
				add(row, col->executed[access], c[OP_DONE]);
			if (access >= CGT_ACCESS_COND) {
				add(row, col->mispredicted[access], first);
			} else if (s->o.cache_sim) {
				add(row, col->missed[access][access == CGT_ACCESS_FETCH ? CGT_LEVEL_I1
											: CGT_LEVEL_D1],
				    first);
				add(row, col->missed[access][CGT_LEVEL_LL], c[OP_MISSLL]);
			}
		}
	}
}

struct hier_rows {
	const struct cgt_block_table *t;
	const size_t *first_row;
	const struct columns *col;
	unsigned n_events;
	uint64_t *costs;
};

static void add_hier_misses(void *arg, uint32_t block_id, uint32_t op, int level, uint64_t n)
{
	struct hier_rows *r = arg;
	if (block_id >= r->t->n || op >= r->t->blocks[block_id]->n_ops)
		return;	/* a block the first pass did not see: none */
	const struct cgt_op *o = &r->t->blocks[block_id]->ops[op];
	int access = access_of(o->kind);
	if (access < 0 || access >= CGT_ACCESS_COND)
		return;
	int column = level >= HIER_USE && level < HIER_USE + USE_COLUMNS ? r->col->use[level - HIER_USE]
		     : level == CGT_EVENT_DIRTY_MISS ? r->col->dirty[access]
		     : level == HIER_L1 ? r->col->missed[access][access == CGT_ACCESS_FETCH ? CGT_LEVEL_I1
										  : CGT_LEVEL_D1]
					: r->col->missed[access][level];
	add(r->costs + (r->first_row[block_id] + o->insn) * r->n_events, column, n);
}

int cgt_sim_profile(const struct cgt_sim *s, unsigned config, const struct cgt_block_table *t,
		    struct cgt_profile *p, struct cgt_error *e)
{
	memset(p, 0, sizeof(*p));
	p->cache_sim = s->cache_sim;
	if (config < s->n_configs)
		p->caches = s->configs[config];
	cgt_event_set_init(&p->events, s->cache_sim, p->caches.level[CGT_LEVEL_L2].size != 0,
			   s->o.branch_sim, s->model.write_back, s->model.cache_use);
	struct columns col;
	columns_init(&col, &p->events);
	const unsigned n_events = p->events.n;

	size_t *first_row = malloc(((size_t)t->n + 1) * sizeof(*first_row));
	if (first_row == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	first_row[0] = 0;
	for (uint32_t b = 0; b < t->n; b++)
		first_row[b + 1] = first_row[b] + t->blocks[b]->n_insns;
	p->n_insns = first_row[t->n];
	p->costs = calloc(p->n_insns ? p->n_insns * n_events : 1, sizeof(*p->costs));
	if (p->costs == NULL) {
		free(first_row);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	for (uint32_t b = 0; b < t->n; b++)
		engine_counts(s, t->blocks[b], &col, n_events, p->costs + first_row[b] * n_events);
	/* Cachegrind lists what it instrumented: the blocks that ran while
	   its instrumentation was on (a program of a worker's) */
	if (__atomic_load_n(&s->instr_off_seen, __ATOMIC_RELAXED)) {
		p->listed = calloc(p->n_insns ? p->n_insns : 1, 1);
		if (p->listed == NULL) {
			free(first_row);
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		}
		for (uint32_t b = 0; b < t->n; b++)
			for (unsigned wi = 0; wi < s->n_workers; wi++) {
				const struct worker *w = &s->workers[wi];
				if (b < w->n_programs && w->programs[b] != NULL)
					memset(p->listed + first_row[b], 1, t->blocks[b]->n_insns);
			}
	}
	if (s->hier != NULL) {
		struct hier_rows r = { t, first_row, &col, n_events, p->costs };
		hier_misses(s->hier, config, add_hier_misses, &r);
	}
	free(first_row);
	for (size_t i = 0; i < p->n_insns; i++)
		for (unsigned k = 0; k < n_events; k++)
			p->totals[k] += p->costs[i * n_events + k];
	return 0;
}

void cgt_profile_free(struct cgt_profile *p)
{
	free(p->costs);
	free(p->listed);
	p->costs = NULL;
	p->listed = NULL;
}

void cgt_sim_close(struct cgt_sim *s)
{
	if (s == NULL)
		return;
	cache_model_free(&s->I1);
	cache_model_free(&s->D1);
	ll_model_free(&s->LL);
	free(s->missed[I1_CACHE]);
	free(s->missed[D1_CACHE]);
	for (unsigned wi = 0; wi < s->n_workers; wi++) {
		struct worker *w = &s->workers[wi];
		for (size_t i = 0; i < w->n_programs; i++)
			free(w->programs[i]);
		free(w->programs);
		free(w->misses);
	}
	hier_close(s->hier);
	free(s->configs);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
