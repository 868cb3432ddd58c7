/*
 * The call-graph replay's producer (callgraph_producer.h): decoding, and
 * the caches and predictors simulated as Callgrind simulates them.
 */
#include <stdlib.h>
#include <string.h>

#include "block_program.h"
#include "branch_model.h"
#include "callgraph_producer.h"
#include "specialise.h"

static void use_refs_init(struct use_refs *u)
{
	u->refs.size = sizeof(struct level_ref);
	u->missed.size = 1;
	u->reports.size = sizeof(struct level_report);
}

static void use_refs_free(struct use_refs *u)
{
	free(u->refs.v);
	free(u->missed.v);
	free(u->reports.v);
}

/* u empty, with room for n references. */
static int use_refs_empty(struct use_refs *u, size_t n)
{
	u->refs.n = u->missed.n = u->reports.n = 0;
	return vec_reserve(&u->refs, n) < 0 || vec_reserve(&u->missed, n) < 0 ||
			       vec_reserve(&u->reports, 2 * n) < 0
		       ? -1
		       : 0;
}

void callgraph_chunk_init(struct chunk *ch)
{
	ch->items.size = sizeof(struct handed);
	ch->charges.size = sizeof(uint32_t);
	ch->marks.size = sizeof(struct handed_mark);
	ch->texts.size = 1;
	ch->mappings.size = sizeof(struct cgt_mapping);
	ch->ll_refs.size = sizeof(struct level_ref);
	ch->ll_clears.size = sizeof(uint32_t);
	ch->fills.size = sizeof(struct use_fill);
	use_refs_init(&ch->use_data);
	ch->use_guarded.size = 1;
	ch->use_execs.size = sizeof(struct use_exec);
	ch->use_charges.size = sizeof(uint32_t);
}

void callgraph_chunk_free(struct chunk *ch)
{
	free(ch->items.v);
	free(ch->charges.v);
	free(ch->marks.v);
	free(ch->texts.v);
	free(ch->mappings.v);
	free(ch->ll_refs.v);
	free(ch->ll_clears.v);
	free(ch->fills.v);
	use_refs_free(&ch->use_data);
	free(ch->use_guarded.v);
	free(ch->use_execs.v);
	free(ch->use_charges.v);
}

enum { CACHE_I1, CACHE_D1 };

/* An L1 reference that goes on to LL, or a guarded access to charge. */
struct l1_ref {
	uint64_t addr;
	uint32_t op;
	uint8_t size;
	uint8_t missed;		/* L1 missed: LL is looked up */
	uint8_t write;		/* with write-back: a write, which LL takes even if L1 hit */
	uint8_t guarded;	/* charged even if L1 hit */
};

/* What the producer keeps of a trace block, from its first execution
   handed over. */
struct producer_block {
	struct block_program *program;	/* with cache or branch simulation */
	uint32_t max_charges;	/* an execution's at most: every reference and branch;
				   0 without a program */
	uint8_t seen;
};

/* The block program of a trace block.  Its branches' inversions are
   Callgrind's: only the block's last branch, when VEX inverted it, where
   Cachegrind's are those whose target is the next instruction. */
static struct block_program *compile(struct producer *p, const struct cgt_block *blk)
{
	if (blk->n_ops > UINT32_MAX >> 2)
		return NULL;	/* no room for its ops in a charge */
	const struct cache_model *I1 = &p->cache[CACHE_I1];
	struct block_program_options o = { p->o->cache_sim, p->o->branch_sim, I1->line_bits,
					   I1->way_bits, I1->sets_mask, p->min_line, p->fetch_steps };
	if (p->l1_levels) {
		/* the steps' set_at and line are for Cachegrind's I1 alone (the
		   test for its most recently used line); a level looks a fetch
		   up by its address */
		o.fetch_line_bits = p->L1[CACHE_I1].line_bits;
		o.fetch_way_bits = 0;
		o.fetch_sets_mask = 0;
	}
	struct block_program *bp = block_program_compile(blk, &o);
	if (bp == NULL)
		return NULL;
	const uint32_t last_exit_op = blk->n_exits ? blk->exit_ops[blk->n_exits - 1] : UINT32_MAX;
	const int inverted = last_branch_inverted(blk);
	for (uint32_t k = 0; k < bp->prefixes[0].n_conds; k++)
		bp->conds[k].inverted = inverted && bp->conds[k].op == last_exit_op;
	if ((bp->max_refs > p->cap_misses &&
	     cgt_array_grow(&p->misses, &p->cap_misses, 0, bp->max_refs, sizeof(*p->misses)) < 0) ||
	    (p->l1_levels && (vec_reserve(&p->l1_lookups, bp->max_refs) < 0 ||
			      vec_reserve(&p->l1_outcomes, bp->max_refs) < 0))) {
		free(bp);
		return NULL;
	}
	return bp;
}

/* The models, as the producer's hot loop keeps them: in locals, since
   through the producer the compiler would reload them after every store
   of a charge.  Not LL, whose wide lookups are out of line: a local
   whose address leaves the function is one every store may change, and
   the compiler would reload I1's and D1's fields beside it. */
struct models {
	struct cache_model I1, D1;
	struct ll_model *LL;
	struct producer *general;	/* with the general model's LL instead */
	struct producer *use;		/* with cache use instead */
	struct branch_model *predictor;
	uint64_t history;
	struct l1_ref *misses;	/* room for a program's max_refs */
	int cache_sim, branch_sim;
};

/* A reference's handle in a chunk's ll_refs: no charge waits for its
   outcome. */
#define NO_LL_CHARGE UINT32_MAX

/*
 * simulate_exec's cache references where a model is not Cachegrind's:
 * Callgrind's write-back or prefetch simulation (callgrind/sim.c,
 * cachesim_D1_Write, prefetch_*) or a replacement policy other than LRU.
 * The L1s are write-through: Cachegrind's LRU arrays, or levels of the
 * general model where an L1's policy is not LRU (l1_levels); LL is the
 * general model's level, which the replay runs later (replay_chunk).  LL's references go to the chunk in program order: the
 * L1 misses and, with write-back, every write (a write-through L1 passes
 * a hit on to dirty LL's line, its outcome unused); the prefetcher
 * observes the misses and, with write-back, every write.  An L1 miss's
 * charge is written with level 0, to be completed with what LL did; a
 * guarded access that hit L1 is charged at level 0.
 */
static __attribute__((noinline)) uint32_t
simulate_refs_general(struct models *md, const struct cgt_exec *x, const struct block_program *bp,
		      uint32_t *out)
{
	struct producer *p = md->general;
	struct chunk *ch = p->filling;
	const struct prefix_plan *plan = &bp->prefixes[x->exit];
	const uint64_t *v = x->values;
	const int write_back = p->o->model.write_back,
		  prefetch = p->o->model.prefetch[CGT_LEVEL_LL] != LEVEL_PREFETCH_NONE;
	struct l1_ref *m = md->misses;
	uint32_t n = 0, n_fetch;
	if (p->l1_levels) {
		/* each L1 takes the execution's references as a bunch -- but
		   those to the line their set touched last, while none waits,
		   hit at once */
		struct level_ref *look = p->l1_lookups.v;
		uint8_t *hit_or_miss = p->l1_outcomes.v;
		const struct level_hit_view I1 = level_hit_view_of(&p->L1[CACHE_I1]),
					    D1 = level_hit_view_of(&p->L1[CACHE_D1]);
		uint32_t n_look = 0;
		for (uint32_t f = 0; f < plan->n_fetches; f++) {
			const struct fetch_step *fs = &bp->fetches[f];
			if (n_look > 0 || !level_hit_again(&I1, fs->addr, fs->len))
				look[n_look++] = (struct level_ref){ fs->addr, fs->len, 0, 0, fs->op };
		}
		level_take(&p->L1[CACHE_I1], look, n_look, hit_or_miss, NULL);
		for (uint32_t k = 0; k < n_look; k++)
			if (hit_or_miss[k] != LEVEL_HIT)
				m[n++] = (struct l1_ref){ look[k].addr, look[k].handle, look[k].size, 1, 0, 0 };
		n_fetch = n;
		uint32_t n_data = 0;
		for (uint32_t j = 0; j < plan->n_data; j++) {
			if (v[j] == CGT_NO_ACCESS)
				continue;
			/* (one that must reach LL, or be charged, is taken) */
			if (n_data == 0 && !(write_back && bp->data_writes[j]) &&
			    !(bp->n_guarded && bp->data_guarded[j]) &&
			    level_hit_again(&D1, v[j], bp->data_sizes[j]))
				continue;
			look[n_data++] = (struct level_ref){ v[j], bp->data_sizes[j], 0, 0, j };
		}
		level_take(&p->L1[CACHE_D1], look, n_data, hit_or_miss, NULL);
		for (uint32_t k = 0; k < n_data; k++) {
			const uint32_t j = look[k].handle;
			int write = bp->data_writes[j];
			int guarded = bp->n_guarded && bp->data_guarded[j];
			int hit = hit_or_miss[k] == LEVEL_HIT;
			if (!hit || guarded || (write && write_back))
				m[n++] = (struct l1_ref){ v[j], bp->data_ops[j], bp->data_sizes[j],
							  (uint8_t)!hit, (uint8_t)write, (uint8_t)guarded };
		}
	} else {
		for (uint32_t f = 0; f < plan->n_fetches; f++) {
			const struct fetch_step *fs = &bp->fetches[f];
			if (md->I1.tags[fs->set_at] != fs->line &&
			    cache_ref_is_miss(&md->I1, fs->addr, fs->len))
				m[n++] = (struct l1_ref){ fs->addr, fs->op, fs->len, 1, 0, 0 };
		}
		n_fetch = n;
		for (uint32_t j = 0; j < plan->n_data; j++) {
			if (v[j] == CGT_NO_ACCESS)
				continue;
			int write = bp->data_writes[j];
			int guarded = bp->n_guarded && bp->data_guarded[j];
			int hit = !cache_ref_is_miss(&md->D1, v[j], bp->data_sizes[j]);
			if (!hit || guarded || (write && write_back))
				m[n++] = (struct l1_ref){ v[j], bp->data_ops[j], bp->data_sizes[j],
							  (uint8_t)!hit, (uint8_t)write, (uint8_t)guarded };
		}
	}
	/* in program order: the fetch misses and data merged (a charge's
	   place among the execution's does not matter) */
	const uint32_t charged_at = (uint32_t)ch->charges.n;
	if (vec_reserve(&ch->ll_refs, n) < 0) {
		p->chunk_failed = 1;	/* (hand_batch fails) */
		return 0;
	}
	struct level_ref *ll = &AT(ch->ll_refs, struct level_ref, ch->ll_refs.n);
	uint32_t n_ll = 0, n_out = 0;
	for (uint32_t i = 0, j = n_fetch; i < n_fetch || j < n;) {
		const struct l1_ref *ref = j == n || (i < n_fetch && m[i].op < m[j].op) ? &m[i++] : &m[j++];
		uint32_t handle = NO_LL_CHARGE;
		if (ref->missed || ref->guarded) {
			if (ref->missed)
				handle = charged_at + n_out;
			out[n_out++] = ref->op << 2;
		}
		if (ref->missed || (ref->write && write_back)) {
			int observed = prefetch && (ref->missed || write_back);
			ll[n_ll++] = (struct level_ref){
				ref->addr, ref->size,
				(uint8_t)((ref->write ? LEVEL_WRITE : 0) | (observed ? LEVEL_OBSERVED : 0)),
				0, handle };
		}
	}
	ch->ll_refs.n += n_ll;
	return n_out;
}

/* Room for n more data references in ch's use arrays, which grow
   together (use_data.refs's capacity stands for all): 0, or -1 if out of
   memory. */
static __attribute__((noinline)) int use_data_room(struct chunk *ch, size_t n)
{
	struct use_refs *u = &ch->use_data;
	size_t want = u->refs.n + n;
	want = want < 2 * u->refs.cap ? 2 * u->refs.cap : want;
	if (vec_reserve(&ch->use_guarded, want - ch->use_guarded.n) < 0 ||
	    vec_reserve(&u->missed, want - u->missed.n) < 0 ||
	    vec_reserve(&u->reports, 2 * want - u->reports.n) < 0 ||
	    vec_reserve(&u->refs, want - u->refs.n) < 0)
		return -1;
	u->refs.cap = want;	/* (what all have room for) */
	return 0;
}

/* n references of an execution to the cache-use L1 l1 (0 I1, 1 D1),
   after the end of s's (room made): taken, their misses and fills kept. */
static void take_side(struct use_caches *u, int l1, struct use_refs *s, uint32_t n)
{
	if (n == 0)
		return;
	struct level_report *reports = &AT(s->reports, struct level_report, s->reports.n);
	const uint32_t n_fills = use_caches_take_l1(u, l1, &AT(s->refs, struct level_ref, s->refs.n), n,
						    &AT(s->missed, uint8_t, s->refs.n), reports);
	for (uint32_t f = 0; f < n_fills; f++)
		reports[f].ref += (uint32_t)s->refs.n;	/* s's */
	s->reports.n += n_fills;
	s->refs.n += n;
	s->missed.n += n;
}

/*
 * simulate_exec's cache references with Callgrind's cache use (struct
 * chunk): the execution's data go to D1 now, its fetches later, in the
 * replay's I1 (the chunk holds its fetch steps).  Most data use the line
 * their set touched last, which D1 counts there at once
 * (level_use_again) -- until one goes to level_take, after which each
 * waits its turn there.  The data D1 took so go to the chunk with what it
 * made of them, for the replay's LL.
 */
static __attribute__((noinline)) void simulate_refs_use(struct models *md, const struct cgt_exec *x,
							 const struct block_program *bp, uint32_t exec)
{
	struct producer *p = md->use;
	struct chunk *ch = p->filling;
	const struct prefix_plan *plan = &bp->prefixes[x->exit];
	const uint64_t *v = x->values;
	const uint32_t base = p->use_base;
	struct vec *data_v = &ch->use_data.refs;
	if (__builtin_expect(data_v->n + plan->n_data > data_v->cap, 0) &&
	    use_data_room(ch, plan->n_data) < 0) {
		p->chunk_failed = 1;	/* (hand_batch fails) */
		return;
	}
	p->use_base += x->block->n_ops;
	struct level_ref *data = &AT(*data_v, struct level_ref, data_v->n);
	uint8_t *guarded = &AT(ch->use_guarded, uint8_t, ch->use_guarded.n);
	uint32_t n_data = 0;
	const struct level_use_view D1 = level_use_view_of(&p->use_caches.l1[1]);
	for (uint32_t j = 0; j < plan->n_data; j++) {
		if (v[j] == CGT_NO_ACCESS)
			continue;
		const uint8_t is_guarded = bp->n_guarded && bp->data_guarded[j];
		if (n_data == 0 && !is_guarded && level_use_again(&D1, v[j], bp->data_sizes[j], 1))
			continue;
		guarded[n_data] = is_guarded;
		data[n_data++] = (struct level_ref){ v[j], bp->data_sizes[j], 0, 0, base + bp->data_ops[j] };
	}
	if (plan->n_fetches + n_data == 0)
		return;
	ch->use_fetches += plan->n_fetches;
	take_side(&p->use_caches, 1, &ch->use_data, n_data);
	ch->use_guarded.n += n_data;
	AT(ch->use_execs, struct use_exec, ch->use_execs.n++) =
		(struct use_exec){ bp->fetches, plan->n_fetches, exec, base, { 0, (uint32_t)data_v->n }, 0 };
}

int callgraph_chunk_use(struct producer *p, struct chunk *ch)
{
	struct use_caches *u = &p->use_caches;
	const struct level_use_view I1 = level_use_view_of(&u->l1[0]);
	struct use_exec *execs = ch->use_execs.v;
	const size_t n_execs = ch->use_execs.n;
	/* I1 on each execution's fetches, as D1 took its data: at once where
	   they use the line their set touched last, the rest in a bunch */
	struct use_refs *fetch = &p->use_fetches, *data = &ch->use_data;
	struct vec *fetch_v = &fetch->refs;
	ch->fills.n = ch->use_charges.n = 0;
	if (use_refs_empty(fetch, ch->use_fetches) < 0)
		return -1;
	for (size_t e = 0; e < n_execs; e++) {
		struct level_ref *fetches = &AT(*fetch_v, struct level_ref, fetch_v->n);
		uint32_t n = 0;
		for (uint32_t f = 0; f < execs[e].n_fetches; f++) {
			const struct fetch_step *fs = &execs[e].fetches[f];
			if (n == 0 && level_use_again(&I1, fs->addr, fs->len, 1u + fs->more))
				continue;
			fetches[n++] = (struct level_ref){ fs->addr, fs->len, 0, fs->more,
							   execs[e].base + fs->op };
		}
		take_side(u, 0, fetch, n);
		execs[e].end[0] = (uint32_t)fetch_v->n;
	}
	/* LL on the lines both filled */
	const uint32_t n = (uint32_t)fetch_v->n;
	const struct level_ref *refs[2] = { fetch_v->v, data->refs.v };
	uint8_t *missed[2] = { fetch->missed.v, data->missed.v };
	const struct use_side side[2] = {
		{ refs[0], n, missed[0], fetch->reports.v, (uint32_t)fetch->reports.n },
		{ refs[1], (uint32_t)data->refs.n, missed[1], data->reports.v, (uint32_t)data->reports.n },
	};
	if (vec_reserve(&ch->fills, (size_t)side[0].n_fills + side[1].n_fills) < 0)
		return -1;
	struct use_fill *fills = ch->fills.v;
	const long n_fills = use_caches_merge(u, side, fills);
	if (n_fills < 0)
		return -1;
	ch->fills.n = (size_t)n_fills;
	if (ch->use_clear) {
		use_caches_clear(u, 0);
		use_caches_clear(u, 2);
	}
	/* Each fill's execution and op, from its handle: the fills are in
	   program order, as the executions are. */
	for (size_t f = 0, e = 0; f < (size_t)n_fills; f++) {
		while (e + 1 < n_execs && execs[e + 1].base <= fills[f].op)
			e++;
		fills[f].exec = execs[e].item;
		fills[f].op -= execs[e].base;
	}
	/* Each execution's charges: its misses, and its guarded accesses */
	if (vec_reserve(&ch->use_charges, n + data->refs.n) < 0)
		return -1;
	uint32_t *charges = ch->use_charges.v, n_charges = 0;
	const uint8_t *guarded = ch->use_guarded.v;
	for (size_t e = 0, from[2] = { 0, 0 }; e < n_execs; e++) {
		for (uint32_t k = (uint32_t)from[0]; k < execs[e].end[0]; k++)
			if (missed[0][k])
				charges[n_charges++] = (refs[0][k].handle - execs[e].base) << 2 | missed[0][k];
		for (uint32_t k = (uint32_t)from[1]; k < execs[e].end[1]; k++)
			if (missed[1][k] || guarded[k])
				charges[n_charges++] = (refs[1][k].handle - execs[e].base) << 2 | missed[1][k];
		from[0] = execs[e].end[0];
		from[1] = execs[e].end[1];
		execs[e].charges_end = n_charges;
	}
	ch->use_charges.n = n_charges;
	return 0;
}

/* The LL charge of a reference that missed L1: 1 if LL hit, 2 if it
   missed, 3 if that miss evicted a dirty line. */
static const uint8_t ll_charge_level[3] = { [LEVEL_HIT] = 1, [LEVEL_MISS] = 2,
					    [LEVEL_MISS_DIRTY] = 3 };

/* The general model's LL on ch's references (see struct chunk): their
   charges completed.  0, or -1 if out of memory. */
int callgraph_chunk_ll(struct producer *p, struct chunk *ch)
{
	const struct level_ref *refs = ch->ll_refs.v;
	const uint32_t n = (uint32_t)ch->ll_refs.n;
	if (n > p->cap_ll_outcomes &&
	    cgt_array_grow(&p->ll_outcomes, &p->cap_ll_outcomes, 0, n, 1) < 0)
		return -1;
	uint32_t from = 0;
	for (size_t c = 0; c <= ch->ll_clears.n; c++) {
		uint32_t to = c < ch->ll_clears.n ? AT(ch->ll_clears, uint32_t, c) : n;
		level_take(&p->LL_general, refs + from, to - from, p->ll_outcomes + from, NULL);
		if (c < ch->ll_clears.n)
			level_clear(&p->LL_general);
		from = to;
	}
	uint32_t *charges = ch->charges.v;
	for (uint32_t k = 0; k < n; k++)
		if (refs[k].handle != NO_LL_CHARGE)
			charges[refs[k].handle] |= ll_charge_level[p->ll_outcomes[k]];
	return 0;
}

/*
 * The execution's cache references and branches, simulated as Callgrind
 * does whether or not it collects: its misses, guarded accesses and
 * mispredictions written to out (room for the block's max_charges); their
 * number returned.  The block runs as a block program (block_program.h), as
 * Cachegrind's simulation runs it, its L1 misses going to LL in program
 * order.  (With cache use, its references' charges are written later, to
 * the chunk's use_charges: simulate_refs_use.)
 */
static inline __attribute__((always_inline)) uint32_t
simulate_exec(struct models *md, const struct cgt_exec *x, const struct block_program *bp,
	      uint32_t *out, uint32_t exec)
{
	const struct prefix_plan *plan = &bp->prefixes[x->exit];
	const uint64_t *v = x->values;
	uint32_t n_out = 0;
	if (__builtin_expect(md->general != NULL, 0)) {
		n_out = simulate_refs_general(md, x, bp, out);
	} else if (__builtin_expect(md->use != NULL, 0)) {
		simulate_refs_use(md, x, bp, exec);
	} else if (md->cache_sim) {
		struct l1_ref *m = md->misses;
		uint32_t n = 0;
		/* bounds in locals: stores of misses could alias them */
		for (uint32_t f = 0, n_fetches = plan->n_fetches; f < n_fetches; f++) {
			const struct fetch_step *fs = &bp->fetches[f];
			/* the usual case, a hit on the set's most recently used line */
			if (md->I1.tags[fs->set_at] != fs->line && cache_ref_is_miss(&md->I1, fs->addr, fs->len))
				m[n++] = (struct l1_ref){ fs->addr, fs->op, fs->len, 1, 0, 0 };
		}
		const uint32_t n_fetch = n;
		if (__builtin_expect(bp->n_guarded == 0, 1)) {
			const uint8_t *sizes = bp->data_sizes;
			for (uint32_t j = 0, n_data = plan->n_data; j < n_data; j++)
				if (__builtin_expect(cache_ref_is_miss(&md->D1, v[j], sizes[j]), 0))
					m[n++] = (struct l1_ref){ v[j], bp->data_ops[j], sizes[j], 1, 0, 0 };
		} else {
			for (uint32_t j = 0; j < plan->n_data; j++) {
				if (v[j] == CGT_NO_ACCESS)
					continue;
				int hit = !cache_ref_is_miss(&md->D1, v[j], bp->data_sizes[j]);
				if (!hit || bp->data_guarded[j])
					m[n++] = (struct l1_ref){ v[j], bp->data_ops[j], bp->data_sizes[j],
								  (uint8_t)!hit, 0, 1 };
			}
		}
		/* LL in program order: the fetch misses and data references merged */
		uint32_t i = 0, j = n_fetch;
		while (__builtin_expect(i < n_fetch || j < n, 0)) {
			const struct l1_ref *ref = j == n || (i < n_fetch && m[i].op < m[j].op) ? &m[i++] : &m[j++];
			unsigned level = !ref->missed ? 0
					 : 1 + (unsigned)ll_ref_is_miss(md->LL, ref->addr, ref->size);
			out[n_out++] = ref->op << 2 | level;
		}
	}
	if (md->branch_sim) {
		const struct cond_step *conds = bp->conds;
		const uint32_t n_conds = plan->n_conds, last_taken = plan->exit_is_last_cond;
		for (uint32_t k = 0; k < n_conds; k++) {
			/* exits before the last one were not taken */
			int taken = (int)(conds[k].inverted ^ (last_taken & (k + 1 == n_conds)));
			uint32_t counter;
			uint8_t was;
			if (cond_branch(md->predictor, &md->history, conds[k].pc, taken, &counter, &was) ==
			    BRANCH_MISPREDICTED)
				out[n_out++] = conds[k].op << 2 | 1;
		}
		if (plan->indirect) {
			uint32_t slot;
			if (indirect_branch(md->predictor, bp->indirect_pc, v[bp->indirect_value], &slot) ==
			    BRANCH_MISPREDICTED)
				out[n_out++] = bp->indirect_op << 2 | 1;
		}
	}
	return n_out;
}

/* The next item of ch, its other fields the caller's to set. */
static inline struct handed *hand(struct chunk *ch, enum handed_kind kind, uint32_t index)
{
	if (vec_reserve(&ch->items, 1) < 0)
		return NULL;
	struct handed *h = &AT(ch->items, struct handed, ch->items.n++);
	h->kind = (uint8_t)kind;
	h->index = index;
	return h;
}

static int producer_fail(struct producer *p)
{
	return cgt_fail(&p->e, cgt_err_nomem, "out of memory");
}

/* The caches of the configuration, cold; min_line, their smallest line.
   Not the general model's LL, which is made once (callgraph_producer_open) and made
   cold again by the replay. */
static int caches_init(struct producer *p)
{
	static const int level[3] = { CGT_LEVEL_I1, CGT_LEVEL_D1, CGT_LEVEL_LL };
	p->min_line = UINT32_MAX;
	for (int k = 0; k < 3; k++) {
		const struct cgt_cache_config *cc = &p->o->caches.level[level[k]];
		if ((uint32_t)cc->line < p->min_line)
			p->min_line = (uint32_t)cc->line;
		if (k < 2 && p->l1_levels) {
			struct level_config c = level_config_of(cc, &p->o->model, level[k]);
			if (level_init(&p->L1[k], &c) < 0)
				return -1;
		} else if (k < 2) {
			if (cache_model_init(&p->cache[k], (uint32_t)cc->size, (uint32_t)cc->assoc,
					     (uint32_t)cc->line) < 0)
				return -1;
		} else if (p->general) {
			continue;
		} else if (ll_model_init(&p->LL, (uint32_t)cc->size, (uint32_t)cc->assoc,
					 (uint32_t)cc->line) < 0) {
			return -1;
		}
	}
	return 0;
}

static void caches_free(struct producer *p)
{
	for (int k = 0; k < 2; k++) {
		cache_model_free(&p->cache[k]);
		level_free(&p->L1[k]);
	}
	ll_model_free(&p->LL);
}

/* The general model's LL, cold. */
static int general_ll_init(struct producer *p)
{
	struct level_config c = level_config_of(&p->o->caches.level[CGT_LEVEL_LL], &p->o->model,
						CGT_LEVEL_LL);
	return level_init(&p->LL_general, &c);
}

/* A mark handed over; CALLGRIND_START/STOP_INSTRUMENTATION seen to here
   too: Callgrind starts the caches cold again (not the predictors). */
static int hand_mark(struct producer *p, struct chunk *ch, const struct cgt_mark *m)
{
	size_t len = strlen(m->text) + 1;
	long k = vec_push(&ch->marks), text = vec_extend(&ch->texts, len);
	if (k < 0 || text < 0 || hand(ch, HANDED_MARK, (uint32_t)k) == NULL)
		return producer_fail(p);
	struct handed_mark *hm = &AT(ch->marks, struct handed_mark, k);
	hm->mark = *m;
	hm->text_at = (size_t)text;
	memcpy(&AT(ch->texts, char, text), m->text, len);
	if (m->kind == CGT_MARK_REQUEST &&
	    (m->code == REQ_START_INSTRUMENTATION || m->code == REQ_STOP_INSTRUMENTATION)) {
		int on = m->code == REQ_START_INSTRUMENTATION;
		if (p->instrumenting != on && p->o->cache_sim) {
			caches_free(p);
			if (caches_init(p) < 0)
				return producer_fail(p);
			if (p->cache_use) {
				use_caches_clear(&p->use_caches, 1);
				p->use_clear = 1;	/* I1's and LL's: the chunk ends here */
			}
			if (p->general) {
				long k = vec_push(&ch->ll_clears);
				if (k < 0)
					return producer_fail(p);
				AT(ch->ll_clears, uint32_t, k) = (uint32_t)ch->ll_refs.n;
			}
		}
		p->instrumenting = on;
	}
	return 0;
}

/* A block's first execution handed over: its program compiled. */
static struct producer_block *first_handed(struct producer *p, const struct cgt_block *blk)
{
	while (p->blocks.n <= blk->id)
		if (vec_push(&p->blocks) < 0)
			return NULL;
	struct producer_block *pb = &AT(p->blocks, struct producer_block, blk->id);
	if ((p->o->cache_sim || p->o->branch_sim) && (pb->program = compile(p, blk)) == NULL)
		return NULL;
	for (uint32_t k = 0; pb->program != NULL && k <= blk->n_exits; k++) {
		const struct prefix_plan *plan = &pb->program->prefixes[k];
		uint32_t most = plan->n_fetches + plan->n_data + plan->n_conds + plan->indirect;
		if (most > pb->max_charges)
			pb->max_charges = most;
	}
	pb->seen = 1;
	return pb;
}

/* The most a chunk's op base may be: a block has fewer than 2^30 ops
   (compile), so its references' handles fit 32 bits. */
#define USE_BASE_MAX (UINT32_C(1) << 31)

/* Reads the batch's executions into ch until either ends: 1 the batch
   ended, 0 the chunk is full, negative an error (p->e; *decoding: an
   error of the batch's, which may be a loss with damage).  ch has room for
   CHUNK_EXECS items (produce). */
static int hand_batch(struct producer *p, struct chunk *ch, int *decoding)
{
	/* The batch, the models and the chunk's ends in locals: the decoding's
	   cursor and the models stay in registers. */
	struct cgt_batch b = p->batch;
	struct cgt_exec x = { 0 };
	struct models md = { .cache_sim = p->o->cache_sim, .branch_sim = p->o->branch_sim };
	if (md.cache_sim) {
		md.I1 = p->cache[CACHE_I1];
		md.D1 = p->cache[CACHE_D1];
		md.LL = &p->LL;
		md.general = p->general ? p : NULL;
		md.use = p->cache_use ? p : NULL;
		p->filling = ch;
		md.misses = p->misses;
	}
	if (md.branch_sim) {
		md.predictor = p->predictor;
		md.history = p->predictor->history;
	}
	struct handed *items = ch->items.v;
	size_t n_items = ch->items.n;
	int rc = 1;
	*decoding = 0;
	while (n_items < CHUNK_EXECS && p->use_base <= USE_BASE_MAX) {
		if ((rc = cgt_batch_next(&b, &x, &p->e)) <= 0) {
			*decoding = rc < 0;
			break;
		}
		uint64_t sp = 0;
		if (!x.block->has_sp || x.block->jumps == NULL) {
			rc = cgt_fail(&p->e, cgt_err_invalid,
				      "block %u has no stack pointer or jumps: the trace lacks what a "
				      "call graph is made of",
				      x.block_id);
			break;
		}
		int err = cgt_batch_sp(&b, &x, &sp, &p->e);
		if (err < 0) {
			rc = err;
			break;
		}
		if (!p->instrumenting)
			continue;
		struct producer_block *pb = x.block_id < p->blocks.n
						    ? &AT(p->blocks, struct producer_block, x.block_id)
						    : NULL;
		if (__builtin_expect(pb == NULL || !pb->seen, 0)) {
			if ((pb = first_handed(p, x.block)) == NULL) {
				rc = producer_fail(p);
				break;
			}
			md.misses = p->misses;	/* may have grown */
		}
		uint32_t n_charges = 0;
		/* (none: a block with nothing to simulate, as with --branch-sim
		   alone one without branches) */
		if (pb->max_charges > 0) {
			if (vec_reserve(&ch->charges, pb->max_charges) < 0) {
				rc = producer_fail(p);
				break;
			}
			n_charges = simulate_exec(&md, &x, pb->program,
						  &AT(ch->charges, uint32_t, ch->charges.n), (uint32_t)n_items);
			ch->charges.n += n_charges;
		}
		items[n_items++] = (struct handed){ .block = x.block, .sp = sp, .exit = x.exit,
						    .tid = x.tid, .n_charges = n_charges,
						    .kind = HANDED_EXEC };
	}
	ch->items.n = n_items;
	if (p->chunk_failed)
		rc = producer_fail(p);
	if (md.cache_sim) {
		p->cache[CACHE_I1] = md.I1;
		p->cache[CACHE_D1] = md.D1;
	}
	if (md.branch_sim)
		p->predictor->history = md.history;
	p->batch = b;
	return rc < 0 ? rc : rc == 0;
}

/* Fills ch with what follows in the trace; its status says how it ended. */
void callgraph_produce(struct producer *p, struct chunk *ch)
{
	ch->items.n = ch->charges.n = ch->marks.n = ch->texts.n = ch->mappings.n = 0;
	ch->ll_refs.n = ch->ll_clears.n = ch->fills.n = 0;
	ch->use_data.refs.n = ch->use_data.missed.n = ch->use_data.reports.n = 0;
	ch->use_guarded.n = ch->use_execs.n = ch->use_fetches = 0;
	p->use_base = 0;
	/* room for hand_batch's executions */
	if (vec_reserve(&ch->items, CHUNK_EXECS) < 0 ||
	    (p->cache_use && vec_reserve(&ch->use_execs, CHUNK_EXECS) < 0)) {
		ch->status = producer_fail(p);
		return;
	}
	int rc = 1;
	while (ch->items.n < CHUNK_EXECS && p->use_base <= USE_BASE_MAX && !p->use_clear) {
		if (!p->in_batch) {
			rc = cgt_decoder_next(p->d, &p->batch, &p->e);
			uint32_t epoch = cgt_decoder_map_epoch(p->d);
			if (rc >= 0 && epoch != p->map_epoch) {
				if (hand(ch, HANDED_EPOCH, epoch) == NULL)
					rc = producer_fail(p);
				p->map_epoch = epoch;
			}
			if (rc <= 0)
				break;
			if (p->batch.mark.kind != CGT_MARK_NONE) {
				if ((rc = hand_mark(p, ch, &p->batch.mark)) < 0)
					break;
				rc = 1;	/* (a chunk may end after a mark: more follows) */
				continue;
			}
			p->in_batch = 1;
		}
		int decoding;
		rc = hand_batch(p, ch, &decoding);
		if (rc < 0) {
			if (!decoding)
				break;
			if (!cgt_decoder_lost(p->d, &p->e))
				break;
			/* Executions lost with damage: the replay starts each
			   thread again. */
			if (hand(ch, HANDED_LOST, 0) == NULL) {
				rc = producer_fail(p);
				break;
			}
			rc = 1;
		}
		if (rc == 1)
			p->in_batch = 0;
		rc = 1;
	}
	/* the module map as it is now, if it changed */
	uint32_t epoch = cgt_decoder_map_epoch(p->d);
	ch->has_mappings = epoch != p->mappings_epoch;
	if (ch->has_mappings) {
		const struct cgt_mapping *maps;
		size_t n = cgt_decoder_mappings(p->d, &maps);
		if (vec_reserve(&ch->mappings, n) < 0) {
			rc = producer_fail(p);
		} else {
			memcpy(ch->mappings.v, maps, n * sizeof(*maps));
			ch->mappings.n = n;
			p->mappings_epoch = epoch;
		}
	}
	ch->use_clear = p->use_clear;
	p->use_clear = 0;
	ch->status = rc;
}

int callgraph_producer_open(struct producer *p, const struct cgt_callgraph_options *o,
			    struct cgt_decoder *d, struct cgt_error *e)
{
	memset(p, 0, sizeof(*p));
	p->o = o;
	p->d = d;
	p->instrumenting = o->instr_atstart;
	p->map_epoch = 0;
	p->mappings_epoch = UINT32_MAX;	/* none handed over yet */
	p->blocks.size = sizeof(struct producer_block);
	use_refs_init(&p->use_fetches);
	struct specialisations may;
	specialisations_choose(&o->model, &may);
	p->cache_use = o->cache_sim && o->model.cache_use;
	p->fetch_steps = may.elide_mru_fetches ? FETCH_NEW_LINES : FETCH_RUNS;
	p->general = o->cache_sim && !may.plain_ll && !p->cache_use;
	p->l1_levels = p->general && !may.plain_l1s;
	p->l1_lookups.size = sizeof(struct level_ref);
	p->l1_outcomes.size = 1;
	if (o->cache_sim) {
		if (caches_init(p) < 0 || (p->general && general_ll_init(p) < 0) ||
		    (p->cache_use && use_caches_init(&p->use_caches, &o->caches, &o->model) < 0))
			return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	if (o->branch_sim) {
		p->predictor = malloc(sizeof(*p->predictor));
		if (p->predictor == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		branch_model_init(p->predictor, 1, 0);
	}
	return 0;
}

void callgraph_producer_close(struct producer *p)
{
	caches_free(p);
	level_free(&p->LL_general);
	use_caches_free(&p->use_caches);
	use_refs_free(&p->use_fetches);
	free(p->predictor);
	for (size_t i = 0; i < p->blocks.n; i++)
		free(AT(p->blocks, struct producer_block, i).program);
	free(p->blocks.v);
	free(p->misses);
	free(p->l1_lookups.v);
	free(p->l1_outcomes.v);
	free(p->ll_outcomes);
}

