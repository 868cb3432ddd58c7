/*
 * The hierarchy engine (hier.h).
 *
 * One thread decodes the trace and gathers its references (gather) into a
 * ring of bunches, dropping those that could only hit every L1's most
 * recently used line.  A part is a share of the configurations, as a tree:
 * the L1 groups (one LRU stack per set count and line size) at the top,
 * their members (one per associativity) below, each member feeding its
 * misses to the groups of the next level that its configurations have.
 * Every part takes every bunch, in order, on whichever thread is free
 * (part_turn); L1 takes each reference as it comes; the misses wait in
 * their members' queues, numbered, and the levels below take them in
 * bunches (drain), merged back into program order: every cache sees its
 * references in the order Cachegrind's would.  Where a part's
 * configurations differ only in D1, its LL caches share their sets
 * instead (struct forest) and take each bunch's misses as it comes.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "block_program.h"
#include "cache_model.h"
#include "cache_use.h"
#include "hier.h"
#include "level.h"
#include "ring.h"
#include "specialise.h"

/* Misses per op, counted by slot (each op of each block compiled gets
   one): pages of counts, allocated where misses happen, so that a count
   costs two loads and memory grows with the code that misses. */
#define PAGE_BITS 9

struct miss_counts {
	uint64_t **pages;
	size_t n_pages;
};

/* Makes room for slot's count: 0, or -1 if out of memory. */
static __attribute__((noinline)) int grow_counts(struct miss_counts *m, uint64_t slot)
{
	uint64_t page = slot >> PAGE_BITS;
	if (page >= m->n_pages) {
		size_t n = m->n_pages;
		if (cgt_array_grow(&m->pages, &n, 0, page + 1, sizeof(*m->pages)) < 0)
			return -1;
		memset(m->pages + m->n_pages, 0, (n - m->n_pages) * sizeof(*m->pages));
		m->n_pages = n;
	}
	if (m->pages[page] == NULL && (m->pages[page] = calloc(1u << PAGE_BITS, sizeof(uint64_t))) == NULL)
		return -1;
	return 0;
}

static inline __attribute__((always_inline)) int count_miss(struct miss_counts *m, uint64_t slot)
{
	uint64_t page = slot >> PAGE_BITS;
	if (__builtin_expect(page >= m->n_pages || m->pages[page] == NULL, 0) &&
	    grow_counts(m, slot) < 0)
		return -1;
	m->pages[page][slot & ((1u << PAGE_BITS) - 1)]++;
	return 0;
}

static void miss_counts_free(struct miss_counts *m)
{
	for (size_t k = 0; k < m->n_pages; k++)
		free(m->pages[k]);
	free(m->pages);
}

struct group;

/* How many references L1 takes at a time, and how many misses a queue
   holds before the levels below take them: bunches large enough to
   prefetch for, small enough to stay in the host's caches. */
#define BUNCH 4096

/* A reference, and a miss waiting for the next level: seq orders the
   misses of an instruction fetch and of data, which two groups make;
   missed_in says which members of its group missed it (see struct
   group). */
struct pending {
	uint64_t addr, seq;
	uint32_t slot;
	uint8_t size;
	uint8_t write;		/* a write or read-modify-write (general parts read it) */
	uint16_t missed_in;
};

/* One cache of a group: its associativity, its place in its group and
   whether a level below takes its misses. */
struct member {
	uint32_t assoc;
	struct group *group;
	unsigned index;
	int feeds_below;
};

/* Caches of one level that see the same references and have the same set
   count and line size: one stack as deep as the deepest of them. */
struct group {
	enum cgt_level level;
	struct cgt_cache_config shape;	/* size / assoc = sets x line */
	const struct member *parents[2];	/* whose misses it takes; NULL at L1 */
	struct cache_model stack;
	/* Narrow: stack.tags holds 32-bit tags, a line's number above its set
	   bits, plus one (0: no line; set 0 starts with line 0, as a cold
	   cache_model), so that a set of 16 ways is one host line.  A group
	   is narrow if its lines fit (see map_stacks) until one does not
	   (widen). */
	int narrow;
	uint32_t set_bits;
	struct member **members;	/* by associativity, ascending */
	size_t cap_members;
	unsigned n_members;
	uint32_t min_assoc;		/* members[0]'s: found shallower, no member missed */
	/* By depth found at (0 ..stack.assoc): how many members missed, the
	   first so many.  A reference's misses are counted once, by op slot
	   and that number (misses: slot * n_members + missed - 1), and it
	   waits in queue, once, if a member that missed feeds a level below:
	   a member's misses are those its group's members from its own index
	   on missed. */
	uint16_t *missed_at;
	struct miss_counts misses;
	unsigned first_feeding;		/* the smallest index of a member that feeds below */
	/* With a forest (see struct forest): by how many members missed
	   (missed_at), the nodes below that see the reference. */
	struct marks *marks_at;
	uint32_t n_queue;
	struct pending *queue;
	size_t cap_queue;
	/* First of its chain in the array that holds it (sort_chains): the
	   groups with its parents and line size. */
	int chain_start;
};

/* A block's references, in program order, for the engine. */
struct ref_step {
	uint64_t addr;		/* a fetch's; data: CGT_NO_ACCESS, see value */
	uint32_t op;
	uint32_t value;		/* data: index in the execution's values */
	uint8_t size;
	uint8_t is_fetch;
	uint8_t write;		/* a write, or read-modify-write */
};

struct ref_program {
	uint32_t first_slot;	/* op k's misses are counted at first_slot + k */
	uint32_t *in_prefix;	/* [n_exits + 1]: steps executed by each prefix */
	struct ref_step steps[];
};

/* What a reference missed in L1 means for a forest: the nodes that see
   it, and the followers of those (sets of nodes, bit k for node k). */
struct marks {
	uint64_t sees, followers;
};

/* Where every configuration of a part has the same I1 and the same LL
   below its L1s, and differs only in D1, its LL caches are a forest (one
   node each) that share their sets.  A node (a D1 of sets x ways) follows
   a leader with at most as many of each, whose D1 holds a subset of its
   lines at any time (LRU: Mattson's inclusion for ways, Hill and Smith's
   for sets), so it misses every reference the node's D1 misses: the
   node's LL sees a subsequence of its leader's.  Mostly the same one, and
   so the two LL caches hold the same lines in the same order in most sets.
   A node's set is its leader's until the leader takes a reference the
   node does not see; then it keeps a copy of its own (diverged), until a
   lookup leaves it equal to its leader's again.  Only roots and diverged
   sets are looked up: an LL cache per configuration, for the work of a
   few.  (make bench's D1 curve: 45 LL caches, of which 5 to 6% of sets
   differ from their leader's at any time.)  A node whose D1 includes no
   other's follows the one before it all the same (cross): one root,
   whose LL's sets are mostly the others' too (the curve 4% faster than
   with a root for each), the node's set parting from its leader's
   whichever of the two sees a reference the other does not. */
#define FOREST_MAX 64

struct forest {
	struct group *node[FOREST_MAX];	/* the LL groups, each after its leader */
	uint8_t leader[FOREST_MAX];	/* a root's is itself */
	unsigned n;
	uint64_t roots;
	uint64_t cross;			/* followers whose leader's D1 is not included in theirs */
	uint64_t *diverged;		/* by LL set: the nodes with a set of their own */
	struct marks *marks[2];		/* by side: the bunch's references' */
	uint32_t *order;		/* those marked, in program order: side << 31 | index */
};

/* A configuration of a part whose models are not all Cachegrind's (see
   specialise.h): simulated alone, its L1s and LL levels of the general
   model (L1s write-through and without prefetcher, as Callgrind models
   them) -- or, with cache use, Callgrind's caches that keep it
   (cache_use.h), charging each line's use to the slot that loaded it.
   Its misses by slot, for L1 (the level it missed first), LL, and LL
   misses that evicted a dirty line. */
enum { GENERAL_L1, GENERAL_LL, GENERAL_LL_DIRTY, GENERAL_COUNTS };

struct general {
	unsigned config;
	struct level l1[2], LL;		/* I1, D1; LL */
	struct miss_counts misses[GENERAL_COUNTS];
	/* With cache use: its caches, its sink, and the sink's cost rows, a
	   slot's at (slot + 1) x USE_COLUMNS (row 0: no loader) */
	struct use_caches use;
	struct use_sink sink;
	uint64_t *use_costs;
	size_t cap_use_costs;
};

/* An LL reference's handle: L1 did not miss it (a write, with write-back). */
#define NOT_MISSED UINT32_MAX

struct part {
	struct hier *h;
	/* Not NULL: the part's configurations are general ones, and it has no
	   groups; with LL's bunch (the L1 misses, and the writes that reach
	   it, of a bunch of references), each's handle its slot if L1 missed,
	   else NOT_MISSED. */
	struct general *general;
	struct level_ref *ll_refs;
	uint8_t *ll_outcomes;
	/* a bunch's references to each L1, and their outcomes */
	struct level_ref *l1_refs[2];
	uint8_t *l1_outcomes[2];
	/* With cache use: a bunch's references' misses and slots (by handle,
	   their place in the bunch), and the lines their L1s fill */
	uint8_t *use_missed;
	uint32_t *use_slot;
	struct use_fill *use_fills;
	unsigned *configs;		/* the configurations it owns (global indices) */
	unsigned n_configs;
	size_t cap_configs;
	struct group **groups;		/* every group, for freeing */
	unsigned n_groups;
	size_t cap_groups;
	struct group **l1[2];		/* I1 and D1 groups */
	unsigned n_l1[2];
	size_t cap_l1[2];
	/* The levels below L1, simulated a bunch of misses at a time (see
	   drain): their groups by level, then chain_order. */
	struct group **lower;
	unsigned n_lower;
	size_t cap_lower;
	uint64_t addr_bits;		/* of every byte referenced up to its last bunch */
	struct pending *merged;		/* a chain's input */
	size_t cap_merged;
	uint32_t *live;			/* see run_chain */
	size_t cap_live;
	int must_drain;
	struct forest *forest;		/* NULL: the levels below are drained by chains */
	void *arena;			/* every group's stack.tags (map_stacks) */
	size_t arena_size;
};

/* References gathered for L1, by side (fetches, data), in program order:
   every part takes each bunch, in turn. */
struct bunch {
	struct pending *refs[2];
	uint32_t n[2];
	uint64_t addr_bits;		/* as of its last reference */
};

/* Bunches are gathered once, by the thread that decodes, and taken by
   every part, on whichever thread is free: enough of them that the
   decoding rarely waits for the slowest part, nor the parts for the
   decoding, whose speeds differ from phase to phase (32 against 16: the
   D1 curve of make bench 3.40-3.62 s against 3.47-3.67 s, best four of
   six interleaved runs; 64: no better; 6 MiB in all). */
#define RING 32

struct hier {
	struct cgt_hierarchy *configs;
	unsigned n_configs;
	struct cgt_cache_model model;
	struct specialisations may;
	struct general **general_of;	/* by configuration, with general parts */
	uint32_t min_line;
	int instrumenting;		/* Cachegrind's instrumentation is on (the decoding thread's) */
	struct part *parts;
	unsigned n_parts;
	int lanes;			/* the host has AVX-512: see enum set_kind */
	/* by configuration: its members, level by level */
	struct member *(*chain)[CGT_N_LEVELS];

	/* Gathering (the decoding thread's only). */
	struct ref_program **programs;	/* by block id */
	size_t n_programs;
	/* By slot: the block and op whose misses it counts. */
	struct slot_owner { uint32_t block, op; } *slots;
	uint32_t n_slots;
	size_t cap_slots;
	uint32_t fetch_line_bits;	/* the smallest I1 line's */
	uint64_t seq;			/* references so far */
	uint64_t addr_bits;		/* the bits of every byte referenced so far */
	/* By side (fetches, data), the line each set of its L1 caches with
	   the fewest sets took last, where all its caches have one line size
	   (NULL otherwise): that line is the most recently used of its set in
	   every L1 cache of the side, so a reference to it would only hit,
	   and is not gathered. */
	uint64_t *last_line[2], last_line_mask[2];
	uint32_t last_line_bits[2];

	/* The bunches, which the decoding thread fills and every part takes
	   (the ring's consumers are the parts); the one being filled,
	   bunches[ring_filling(&ring)], is the decoding thread's alone. */
	struct ring ring;
	int has_ring;
	struct bunch bunches[RING];
};

int hier_open(struct hier **out, const struct cgt_hierarchy *configs, unsigned n_configs,
	      uint32_t min_line, int instr_at_start, const struct cgt_cache_model *model,
	      struct cgt_error *e)
{
	struct hier *h = calloc(1, sizeof(*h));
	*out = NULL;
	if (h == NULL || (h->configs = malloc(n_configs * sizeof(*configs))) == NULL ||
	    (h->chain = calloc(n_configs, sizeof(*h->chain))) == NULL ||
	    (h->general_of = calloc(n_configs, sizeof(*h->general_of))) == NULL) {
		hier_close(h);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	memcpy(h->configs, configs, n_configs * sizeof(*configs));
	h->n_configs = n_configs;
	h->model = *model;
	specialisations_choose(model, &h->may);
	h->min_line = min_line;
	h->instrumenting = instr_at_start;
	h->lanes = __builtin_cpu_supports("avx512f");
	*out = h;
	return 0;
}

/* ---- Building a part's tree ------------------------------------------- */

static struct group *find_group(struct part *p, enum cgt_level level,
				const struct cgt_cache_config *c, const struct member *p0,
				const struct member *p1)
{
	for (unsigned k = 0; k < p->n_groups; k++) {
		struct group *g = p->groups[k];
		if (g->level == level && g->shape.line == c->line &&
		    g->shape.size / g->shape.assoc == c->size / c->assoc && g->parents[0] == p0 &&
		    g->parents[1] == p1)
			return g;
	}
	struct group *g = calloc(1, sizeof(*g));
	if (g == NULL || (p->n_groups == p->cap_groups &&
			  cgt_array_grow(&p->groups, &p->cap_groups, p->n_groups, 1, sizeof(*p->groups)) < 0)) {
		free(g);
		return NULL;
	}
	p->groups[p->n_groups++] = g;
	g->level = level;
	g->shape = *c;
	g->parents[0] = p0;
	g->parents[1] = p1;
	return g;
}

static struct member *find_member(struct group *g, uint32_t assoc)
{
	for (unsigned k = 0; k < g->n_members; k++)
		if (g->members[k]->assoc == assoc)
			return g->members[k];
	struct member *m = calloc(1, sizeof(*m));
	if (m == NULL || (g->n_members == g->cap_members &&
			  cgt_array_grow(&g->members, &g->cap_members, g->n_members, 1, sizeof(*g->members)) < 0)) {
		free(m);
		return NULL;
	}
	g->members[g->n_members++] = m;
	m->assoc = assoc;
	m->group = g;
	if ((uint32_t)g->shape.assoc < assoc)
		g->shape = (struct cgt_cache_config){ g->shape.size / g->shape.assoc * (int32_t)assoc,
						      (int32_t)assoc, g->shape.line };
	return m;
}

/* The members configuration c uses, level by level, made where missing. */
static int place(struct part *p, const struct cgt_hierarchy *c, struct member *chain[CGT_N_LEVELS])
{
	for (int l1 = CGT_LEVEL_I1; l1 <= CGT_LEVEL_D1; l1++) {
		struct group *g = find_group(p, (enum cgt_level)l1, &c->level[l1], NULL, NULL);
		if (g == NULL || (chain[l1] = find_member(g, (uint32_t)c->level[l1].assoc)) == NULL)
			return -1;
	}
	const struct member *parents[2] = { chain[CGT_LEVEL_I1], chain[CGT_LEVEL_D1] };
	for (int level = CGT_LEVEL_L2; level <= CGT_LEVEL_LL; level++) {
		if (c->level[level].size == 0)
			continue;
		struct group *g = find_group(p, (enum cgt_level)level, &c->level[level], parents[0],
					     parents[1]);
		if (g == NULL || (chain[level] = find_member(g, (uint32_t)c->level[level].assoc)) == NULL)
			return -1;
		for (int k = 0; k < 2; k++)
			if (parents[k] != NULL)
				((struct member *)parents[k])->feeds_below = 1;
		parents[0] = chain[level];
		parents[1] = NULL;
	}
	return 0;
}

static int by_assoc(const void *a, const void *b)
{
	const struct member *x = *(struct member *const *)a, *y = *(struct member *const *)b;
	return (x->assoc > y->assoc) - (x->assoc < y->assoc);
}

/* Groups with the same parents and line size see the same references;
   among them, by set count ascending (see run_chain). */
static int chain_order(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a, *y = *(struct group *const *)b;
	for (int k = 0; k < 2; k++)
		if (x->parents[k] != y->parents[k])
			return (uintptr_t)x->parents[k] < (uintptr_t)y->parents[k] ? -1 : 1;
	if (x->shape.line != y->shape.line)
		return x->shape.line < y->shape.line ? -1 : 1;
	int32_t xs = x->shape.size / x->shape.assoc, ys = y->shape.size / y->shape.assoc;
	return (xs > ys) - (xs < ys);
}

/* Sorts v (an L1 side by chain_order, the lower levels by
   level_then_chain) and marks where each chain starts. */
static void sort_chains(struct group **v, unsigned n, int (*order)(const void *, const void *))
{
	if (n == 0)
		return;	/* qsort takes no NULL array */
	qsort(v, n, sizeof(*v), order);
	for (unsigned k = 0; k < n; k++) {
		const struct group *prev = k ? v[k - 1] : NULL;
		v[k]->chain_start = prev == NULL || prev->parents[0] != v[k]->parents[0] ||
				    prev->parents[1] != v[k]->parents[1] ||
				    prev->shape.line != v[k]->shape.line;
	}
}

static int level_then_chain(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a, *y = *(struct group *const *)b;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return chain_order(a, b);
}

/* Makes room for n references in p->live (and p->merged if merged). */
static int reserve(struct part *p, uint32_t n, int merged)
{
	if (n > p->cap_live && cgt_array_grow(&p->live, &p->cap_live, 0, n, sizeof(*p->live)) < 0)
		return -1;
	if (merged && n > p->cap_merged &&
	    cgt_array_grow(&p->merged, &p->cap_merged, 0, n, sizeof(*p->merged)) < 0)
		return -1;
	return 0;
}

/* The narrowest stack worth having: lines of 64 bytes and 1024 sets take
   47-bit addresses (a user's on x86-64) to 31 bits above their set bits. */
#define NARROW_MIN_WAY_BITS 16

/* Puts every stack of the part in one mapping, each on the host's cache
   lines, in huge pages where the system gives them: with 4 KiB pages, 45
   stacks of 1 MiB take a TLB miss on nearly every reference, and the
   prefetches ahead wait for their page walks.  (calloc's large blocks
   start 16 bytes into a page, so an 8-way set of 64-bit tags took two
   host lines and a 16-way set three.) */
static int map_stacks(struct part *p)
{
	size_t total = 0;
	for (unsigned k = 0; k < p->n_groups; k++) {
		uint64_t bytes = cache_model_slots(&p->groups[k]->stack) * sizeof(uint64_t);
		if (bytes > SIZE_MAX / 2 - total)
			return -1;
		total += ((size_t)bytes + 63) & ~(size_t)63;
	}
	void *arena = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		return -1;
#ifdef MADV_HUGEPAGE
	madvise(arena, total, MADV_HUGEPAGE);	/* only a hint */
#endif
	p->arena = arena;
	p->arena_size = total;
	uint8_t *at = arena;
	for (unsigned k = 0; k < p->n_groups; k++) {
		struct cache_model *c = &p->groups[k]->stack;
		uint64_t bytes = cache_model_slots(c) * sizeof(uint64_t);
		free(c->tags);	/* zeroes, as the mapping's */
		c->tags = (uint64_t *)at;
		at += ((size_t)bytes + 63) & ~(size_t)63;
		struct group *g = p->groups[k];
		g->set_bits = (uint32_t)__builtin_popcountll(c->sets_mask);
		g->narrow = c->line_bits + g->set_bits >= NARROW_MIN_WAY_BITS;
		for (uint32_t w = 0; g->narrow && w < c->assoc; w++)
			((uint32_t *)c->tags)[w] = 1;	/* line 0 */
	}
	return 0;
}

/* A D1 member's geometry, for choosing leaders. */
static uint64_t sets_of(const struct member *m)
{
	return (uint64_t)m->group->shape.size / (uint64_t)m->group->shape.assoc /
	       (uint64_t)m->group->shape.line;
}

static uint64_t size_of(const struct member *m)
{
	return sets_of(m) * m->assoc;
}

static int by_d1_size(const void *a, const void *b)
{
	const struct member *x = (*(struct group *const *)a)->parents[1];
	const struct member *y = (*(struct group *const *)b)->parents[1];
	if (size_of(x) != size_of(y))
		return size_of(x) < size_of(y) ? -1 : 1;
	return (sets_of(x) > sets_of(y)) - (sets_of(x) < sets_of(y));
}

/* Whether D1 member a holds a subset of b's lines at any time. */
static int included(const struct member *a, const struct member *b)
{
	return a->group->shape.line == b->group->shape.line && sets_of(a) <= sets_of(b) &&
	       a->assoc <= b->assoc;
}

/* Makes the part's levels below L1 a forest where they can be one (see
   struct forest): 0, or -1 if out of memory. */
static int forest_build(struct part *p)
{
	if (p->n_l1[0] != 1 || p->l1[0][0]->n_members != 1 || p->n_lower == 0 ||
	    p->n_lower > FOREST_MAX)
		return 0;
	const struct member *i1 = p->l1[0][0]->members[0];
	const struct group *first = p->lower[0];
	for (unsigned k = 0; k < p->n_lower; k++) {
		const struct group *g = p->lower[k];
		if (g->level != CGT_LEVEL_LL || g->n_members != 1 || g->parents[0] != i1 ||
		    g->parents[1] == NULL || g->shape.size != first->shape.size ||
		    g->shape.assoc != first->shape.assoc || g->shape.line != first->shape.line)
			return 0;
	}
	struct forest *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -1;
	p->forest = f;
	f->n = p->n_lower;
	memcpy(f->node, p->lower, f->n * sizeof(*f->node));
	qsort(f->node, f->n, sizeof(*f->node), by_d1_size);
	/* Each node's leader: the largest D1 included in its own, with as many
	   sets if there are two. */
	for (unsigned k = 0; k < f->n; k++) {
		const struct member *d1 = f->node[k]->parents[1];
		unsigned best = k;
		for (unsigned j = 0; j < k; j++) {
			const struct member *c = f->node[j]->parents[1];
			if (!included(c, d1))
				continue;
			const struct member *b = f->node[best]->parents[1];
			if (best == k || size_of(c) > size_of(b) ||
			    (size_of(c) == size_of(b) && sets_of(c) == sets_of(d1)))
				best = j;
		}
		/* None: the nearest node before that has none either (one root;
		   their D1s are alike in size, their LL's sets mostly too). */
		if (best == k && k > 0) {
			while (!((f->roots | f->cross) >> --best & 1))
				;
			f->cross |= 1ull << k;
		}
		f->leader[k] = (uint8_t)best;
		if (best == k)
			f->roots |= 1ull << k;
	}
	if ((f->diverged = calloc(first->stack.sets_mask + 1, sizeof(*f->diverged))) == NULL ||
	    (f->marks[0] = calloc(BUNCH, sizeof(struct marks))) == NULL ||
	    (f->marks[1] = calloc(BUNCH, sizeof(struct marks))) == NULL ||
	    (f->order = malloc(2 * BUNCH * sizeof(*f->order))) == NULL)
		return -1;
	/* What each L1 group's misses mean for the forest, by how many of its
	   members missed (the first so many). */
	for (int side = 0; side < 2; side++)
		for (unsigned k = 0; k < p->n_l1[side]; k++) {
			struct group *g = p->l1[side][k];
			if ((g->marks_at = calloc(g->n_members + 1u, sizeof(*g->marks_at))) == NULL)
				return -1;
			for (unsigned missed = 1; missed <= g->n_members; missed++) {
				struct marks m = g->marks_at[missed - 1];
				const struct member *by = g->members[missed - 1];
				for (unsigned n = 0; n < f->n; n++) {
					if (f->node[n]->parents[side] != by)
						continue;
					m.sees |= 1ull << n;
					for (unsigned c = n + 1; c < f->n; c++)
						if (f->leader[c] == n && !(f->roots >> c & 1))
							m.followers |= 1ull << c;
				}
				g->marks_at[missed] = m;
			}
		}
	return 0;
}

/* A part of general configurations (struct general). */
static int general_build(struct part *p)
{
	struct hier *h = p->h;
	if ((p->general = calloc(p->n_configs, sizeof(*p->general))) == NULL ||
	    (p->ll_refs = malloc(2 * BUNCH * sizeof(*p->ll_refs))) == NULL ||
	    (p->ll_outcomes = malloc(2 * BUNCH)) == NULL)
		return -1;
	for (int side = 0; side < 2 && !h->model.cache_use; side++)
		if ((p->l1_refs[side] = malloc(BUNCH * sizeof(*p->l1_refs[side]))) == NULL ||
		    (p->l1_outcomes[side] = malloc(BUNCH)) == NULL)
			return -1;
	if (h->model.cache_use &&
	    ((p->use_missed = malloc(2 * BUNCH)) == NULL ||
	     (p->use_slot = malloc(2 * BUNCH * sizeof(*p->use_slot))) == NULL ||
	     (p->use_fills = malloc(4 * BUNCH * sizeof(*p->use_fills))) == NULL))
		return -1;
	for (unsigned k = 0; k < p->n_configs; k++) {
		struct general *g = &p->general[k];
		const struct cgt_hierarchy *c = &h->configs[p->configs[k]];
		g->config = p->configs[k];
		h->general_of[g->config] = g;
		if (h->model.cache_use) {
			static const int columns[USE_COLUMNS] = { USE_ACCOST1, USE_SPLOSS1, USE_ACCOST2,
								  USE_SPLOSS2 };
			if (use_caches_init(&g->use, c, &h->model) < 0 ||
			    use_sink_init(&g->sink, c, columns, NULL) < 0)
				return -1;
			continue;
		}
		for (int side = 0; side < 2; side++) {
			struct level_config lc = level_config_of(&c->level[CGT_LEVEL_I1 + side], &h->model,
								 CGT_LEVEL_I1 + side);
			if (level_init(&g->l1[side], &lc) < 0)
				return -1;
		}
		struct level_config lc = level_config_of(&c->level[CGT_LEVEL_LL], &h->model, CGT_LEVEL_LL);
		if (level_init(&g->LL, &lc) < 0)
			return -1;
	}
	return 0;
}

static int part_build(struct part *p)
{
	struct hier *h = p->h;
	if (!h->may.shared_stacks)
		return general_build(p);
	for (unsigned k = 0; k < p->n_configs; k++) {
		if (place(p, &h->configs[p->configs[k]], h->chain[p->configs[k]]) < 0)
			return -1;
	}
	for (unsigned k = 0; k < p->n_groups; k++) {
		struct group *g = p->groups[k];
		qsort(g->members, g->n_members, sizeof(*g->members), by_assoc);
		g->min_assoc = g->members[0]->assoc;
		g->first_feeding = g->n_members;
		for (unsigned m = g->n_members; m-- > 0;) {
			g->members[m]->index = m;
			if (g->members[m]->feeds_below)
				g->first_feeding = m;
		}
		if (cache_model_init(&g->stack, (uint32_t)g->shape.size, (uint32_t)g->shape.assoc,
				     (uint32_t)g->shape.line) < 0 ||
		    (g->missed_at = malloc(((size_t)g->stack.assoc + 1) * sizeof(*g->missed_at))) == NULL)
			return -1;
		for (uint32_t d = 0, m = 0; d <= g->stack.assoc; d++) {
			while (m < g->n_members && g->members[m]->assoc <= d)
				m++;
			g->missed_at[d] = (uint16_t)m;
		}
		if (g->level <= CGT_LEVEL_D1) {
			int side = g->level == CGT_LEVEL_D1;
			if (p->n_l1[side] == p->cap_l1[side] &&
			    cgt_array_grow(&p->l1[side], &p->cap_l1[side], p->n_l1[side], 1,
					   sizeof(*p->l1[side])) < 0)
				return -1;
			p->l1[side][p->n_l1[side]++] = g;
		}
	}
	for (unsigned k = 0; k < p->n_groups; k++) {
		if (p->groups[k]->level <= CGT_LEVEL_D1)
			continue;
		if (p->n_lower == p->cap_lower &&
		    cgt_array_grow(&p->lower, &p->cap_lower, p->n_lower, 1, sizeof(*p->lower)) < 0)
			return -1;
		p->lower[p->n_lower++] = p->groups[k];
	}
	sort_chains(p->lower, p->n_lower, level_then_chain);
	if (map_stacks(p) < 0 || (h->may.forest && forest_build(p) < 0))
		return -1;
	if (reserve(p, BUNCH, 0) < 0)
		return -1;
	for (int side = 0; side < 2; side++)
		sort_chains(p->l1[side], p->n_l1[side], chain_order);
	return 0;
}

/* The gathering's filters (struct hier's last_line) and the smallest I1
   line, from every configuration's L1s. */
static int gather_init(struct hier *h)
{
	h->fetch_line_bits = 63;
	for (int side = 0; side < 2; side++) {
		const struct cgt_cache_config *first = &h->configs[0].level[CGT_LEVEL_I1 + side];
		int32_t fewest = first->size / first->assoc / first->line;
		int one_line = 1;
		for (unsigned c = 0; c < h->n_configs; c++) {
			const struct cgt_cache_config *l1 = &h->configs[c].level[CGT_LEVEL_I1 + side];
			int32_t sets = l1->size / l1->assoc / l1->line;
			fewest = sets < fewest ? sets : fewest;
			one_line &= l1->line == first->line;
			uint32_t line_bits = (uint32_t)__builtin_ctz((uint32_t)l1->line);
			if (side == 0 && line_bits < h->fetch_line_bits)
				h->fetch_line_bits = line_bits;
		}
		if (!one_line || !h->may.elide_mru_reads)
			continue;
		h->last_line_mask[side] = (uint64_t)fewest - 1;
		h->last_line_bits[side] = (uint32_t)__builtin_ctz((uint32_t)first->line);
		/* Zeroes: line 0 in set 0, as a cold cache. */
		if ((h->last_line[side] = calloc((size_t)fewest, sizeof(uint64_t))) == NULL)
			return -1;
	}
	for (unsigned k = 0; k < RING; k++)
		for (int side = 0; side < 2; side++)
			if ((h->bunches[k].refs[side] = malloc(BUNCH * sizeof(struct pending))) == NULL)
				return -1;
	return 0;
}

/* ---- Replaying ------------------------------------------------------- */

/* How a group's sets are laid out and looked up, chosen once per group
   and bunch (run_chain): wide (64-bit tags) or narrow (32-bit), looked up
   way by way or, for narrow sets of 16 ways on a host with AVX-512, all
   ways at once (8% less time for the D1 curve of make bench, whose 45 LL
   stacks are such; the same for wide sets of 8 and 16 ways made no
   difference). */
enum set_kind { WIDE, NARROW, NARROW_LANES_16 };

static inline __attribute__((always_inline)) int is_narrow(enum set_kind kind)
{
	return kind == NARROW || kind == NARROW_LANES_16;
}

__attribute__((target("avx512f"))) static inline uint32_t stack_ref_narrow_lanes(uint32_t *set,
									       uint32_t key,
									       uint32_t assoc)
{
	__m512i k = _mm512_set1_epi32((int)key), v = _mm512_load_si512(set);
	unsigned found = _mm512_cmpeq_epi32_mask(v, k) & ((2u << (assoc - 1)) - 1);
	uint32_t depth = found ? (uint32_t)__builtin_ctz(found) : assoc;
	/* The ways up to the depth found move down one, the key goes on top. */
	unsigned take = (2u << (depth < assoc ? depth : assoc - 1)) - 1;
	_mm512_store_si512(set, _mm512_mask_blend_epi32((__mmask16)take, v, _mm512_alignr_epi32(v, k, 15)));
	return depth;
}

/* Looks block up in its set of g's stack and makes it the most recently
   used: the depth it was found at, or the stack's depth if it was not
   there. */
#define STACK_REF(type, set, key, assoc)                       \
	do {                                                   \
		if (set[0] == key)                             \
			return 0;                              \
		type carried = set[0];                         \
		set[0] = key;                                  \
		for (uint32_t i = 1; i < assoc; i++) {         \
			type was = set[i];                     \
			set[i] = carried;                      \
			if (was == key)                        \
				return i;                      \
			carried = was;                         \
		}                                              \
		return assoc;                                  \
	} while (0)

static inline __attribute__((always_inline)) uint32_t stack_ref(struct group *g, uint64_t block,
								enum set_kind kind)
{
	struct cache_model *c = &g->stack;
	uint64_t at = (block & c->sets_mask) << c->way_bits;
	if (is_narrow(kind)) {
		uint32_t *set = (uint32_t *)c->tags + at, key = (uint32_t)(block >> g->set_bits) + 1;
		if (kind == NARROW_LANES_16)
			return stack_ref_narrow_lanes(set, key, c->assoc);
		STACK_REF(uint32_t, set, key, c->assoc);
	}
	uint64_t *set = c->tags + at;
	STACK_REF(uint64_t, set, block, c->assoc);
}

/* Whether block is the most recently used line of its set in g. */
static inline __attribute__((always_inline)) int is_mru(const struct group *g, uint64_t block,
							int narrow)
{
	const struct cache_model *c = &g->stack;
	uint64_t at = (block & c->sets_mask) << c->way_bits;
	if (narrow)
		return ((const uint32_t *)c->tags)[at] == (uint32_t)(block >> g->set_bits) + 1;
	return c->tags[at] == block;
}

/* Makes a narrow group wide, in place (map_stacks leaves room for it):
   from the last tag down, each wide tag covers narrow ones already read. */
static void widen(struct group *g)
{
	struct cache_model *c = &g->stack;
	const uint32_t *narrow = (const uint32_t *)c->tags;
	for (uint64_t i = cache_model_slots(c); i-- > 0;) {
		uint32_t t = narrow[i];
		c->tags[i] = t == 0 ? 0 : (uint64_t)(t - 1) << g->set_bits | i >> c->way_bits;
	}
	g->narrow = 0;
}

/* How many references ahead a group's sets are prefetched: 16 took a
   45-configuration sweep 9% less time than 8 (one thread), 32 more. */
#define PREFETCH_AHEAD 16

static int enqueue(struct part *p, struct group *g, const struct pending *r, uint16_t missed)
{
	if (g->n_queue == g->cap_queue &&
	    cgt_array_grow(&g->queue, &g->cap_queue, g->n_queue, 1, sizeof(*g->queue)) < 0)
		return -1;
	struct pending *q = &g->queue[g->n_queue++];
	*q = *r;
	q->missed_in = missed;
	if (g->n_queue >= BUNCH)
		p->must_drain = 1;
	return 0;
}

/* One reference to a group (r, index in its input): counted once for the
   members it missed in, and kept for the next level if one of them has
   one (or, with a forest, marked for it).  A reference that straddles two
   lines is one access that misses where either line does. */
static inline __attribute__((always_inline)) int
group_ref(struct part *p, struct group *g, uint64_t first, uint64_t last, const struct pending *r,
	  uint32_t index, enum set_kind kind)
{
	uint32_t depth = stack_ref(g, first, kind);
	if (last != first) {
		uint32_t d2 = stack_ref(g, last, kind);
		depth = d2 > depth ? d2 : depth;
	}
	if (__builtin_expect(depth < g->min_assoc, 1))
		return 0;
	uint16_t missed = g->missed_at[depth];
	if (count_miss(&g->misses, (uint64_t)r->slot * g->n_members + missed - 1) < 0)
		return -1;
	if (g->marks_at != NULL) {
		struct marks *m = &p->forest->marks[g->level == CGT_LEVEL_D1][index];
		m->sees |= g->marks_at[missed].sees;
		m->followers |= g->marks_at[missed].followers;
		return 0;
	}
	return missed > g->first_feeding ? enqueue(p, g, r, missed) : 0;
}

/* Always inline: gcc 12 takes a function that only prefetches for one
   without effect and drops the calls before inlining it. */
static inline __attribute__((always_inline)) void prefetch_set(const struct group *g,
								 uint64_t addr, int narrow)
{
	const struct cache_model *c = &g->stack;
	uint64_t at = ((addr >> c->line_bits) & c->sets_mask) << c->way_bits;
	const char *set = narrow ? (const char *)((const uint32_t *)c->tags + at)
				 : (const char *)(c->tags + at);
	__builtin_prefetch(set);
	if (c->way_bits > (narrow ? 4u : 3u))
		__builtin_prefetch(set + 64);	/* the set's second host line */
}

/* The references in[0..n) (in program order) to each group of a chain
   (sorted by chain_order), a group at a time, so that a group's sets stay
   in the host's caches while it takes them, and are prefetched ahead.
   A line that is the most recently used of its set in a cache is so in
   every cache of more sets that saw the same references (their sets split
   its set): a reference that is such a hit in a group would only hit
   again, unchanged, in the rest of its chain, so it goes no further. */
static inline __attribute__((always_inline)) int
run_group(struct part *p, struct group *g, const struct pending *in, uint32_t *live, uint32_t n,
	  uint32_t *kept, enum set_kind kind)
{
	const int narrow = is_narrow(kind);
	const struct cache_model *c = &g->stack;
	for (uint32_t j = 0; j < n; j++) {
		if (j + PREFETCH_AHEAD < n)
			prefetch_set(g, in[live[j + PREFETCH_AHEAD]].addr, narrow);
		const struct pending *r = &in[live[j]];
		uint64_t first = r->addr >> c->line_bits;
		uint64_t last = (r->addr + r->size - 1) >> c->line_bits;
		if (is_mru(g, first, narrow) && is_mru(g, last, narrow))
			continue;
		live[(*kept)++] = live[j];
		if (group_ref(p, g, first, last, r, live[j], kind) < 0)
			return -1;
	}
	return 0;
}

/* run_group for narrow sets of 16 ways on a host with AVX-512: compiled
   for it, so that stack_ref_narrow_lanes is inlined. */
__attribute__((target("avx512f"), noinline)) static int
run_group_narrow_lanes(struct part *p, struct group *g, const struct pending *in, uint32_t *live,
		       uint32_t n, uint32_t *kept)
{
	return run_group(p, g, in, live, n, kept, NARROW_LANES_16);
}

/* Whether g's 32-bit tags no longer hold its lines: every line so far is
   at most p->addr_bits >> line_bits. */
static int outgrown(const struct part *p, const struct group *g)
{
	return g->narrow && (p->addr_bits >> g->stack.line_bits >> g->set_bits) >= UINT32_MAX;
}

/* How g's sets are looked up (once made wide where outgrown). */
static enum set_kind kind_of(const struct part *p, const struct group *g)
{
	if (!g->narrow)
		return WIDE;
	return p->h->lanes && g->stack.way_bits == 4 ? NARROW_LANES_16 : NARROW;
}

static int run_chain(struct part *p, struct group *const *chain, unsigned n_chain,
		     const struct pending *in, uint32_t n)
{
	uint32_t *live = p->live;	/* the references still going down */
	for (unsigned k = 0; k < n_chain && n > 0; k++) {
		struct group *g = chain[k];
		uint32_t kept = 0;
		if (outgrown(p, g))
			widen(g);
		int rc;
		switch (kind_of(p, g)) {
		case NARROW_LANES_16:
			rc = run_group_narrow_lanes(p, g, in, live, n, &kept);
			break;
		case NARROW:
			rc = run_group(p, g, in, live, n, &kept, NARROW);
			break;
		default:
			rc = run_group(p, g, in, live, n, &kept, WIDE);
			break;
		}
		if (rc < 0)
			return -1;
		n = kept;
	}
	return 0;
}

/* The end of the chain starting at groups[k]. */
static unsigned chain_end(struct group *const *groups, unsigned n, unsigned k)
{
	while (++k < n && !groups[k]->chain_start)
		;
	return k;
}

/* The input of the chain starting at g: its parents' misses in program
   order, as references *in[p->live[0 .. *n)].  0, or -1 if out of memory. */
static int chain_input(struct part *p, const struct group *g, const struct pending **in, uint32_t *n)
{
	const struct member *a = g->parents[0], *b = g->parents[1];
	const struct group *ga = a->group, *gb = b != NULL ? b->group : NULL;
	if (gb == NULL || gb->n_queue == 0 || ga->n_queue == 0) {
		const struct member *only = gb == NULL || gb->n_queue == 0 ? a : b;
		const struct pending *q = only->group->queue;
		uint32_t n_q = only->group->n_queue, kept = 0;
		if (reserve(p, n_q, 0) < 0)
			return -1;
		for (uint32_t i = 0; i < n_q; i++) {
			p->live[kept] = i;
			kept += q[i].missed_in > only->index;
		}
		*in = q;
		*n = kept;
		return 0;
	}
	if (reserve(p, ga->n_queue + gb->n_queue, 1) < 0)
		return -1;
	uint32_t i = 0, j = 0, k = 0;
	while (i < ga->n_queue || j < gb->n_queue) {
		const struct pending *r =
			j == gb->n_queue || (i < ga->n_queue && ga->queue[i].seq < gb->queue[j].seq)
				? &ga->queue[i++]
				: &gb->queue[j++];
		const struct member *from = r >= ga->queue && r < ga->queue + ga->n_queue ? a : b;
		if (r->missed_in > from->index) {
			p->merged[k] = *r;
			p->live[k] = k;
			k++;
		}
	}
	*in = p->merged;
	*n = k;
	return 0;
}

/* The levels below L1 take the misses kept for them, level by level,
   chain by chain. */
static int drain(struct part *p)
{
	for (unsigned k = 0, end; p->forest == NULL && k < p->n_lower; k = end) {
		end = chain_end(p->lower, p->n_lower, k);
		const struct pending *in;
		uint32_t n;
		if (chain_input(p, p->lower[k], &in, &n) < 0 ||
		    run_chain(p, p->lower + k, end - k, in, n) < 0)
			return -1;
	}
	/* Every level below has taken them: the queues are spent. */
	for (unsigned g = 0; g < p->n_groups; g++)
		p->groups[g]->n_queue = 0;
	p->must_drain = 0;
	return 0;
}

/* ---- The forest (struct forest) --------------------------------------- */

static inline __attribute__((always_inline)) void *set_of(const struct group *g, uint64_t set,
							   int narrow)
{
	uint64_t at = set << g->stack.way_bits;
	return narrow ? (void *)((uint32_t *)g->stack.tags + at) : (void *)(g->stack.tags + at);
}

/* The node whose stack holds node k's set, given the nodes diverged there:
   k's own, or its leader's. */
static inline __attribute__((always_inline)) unsigned holder(const struct forest *f, unsigned k,
							     uint64_t diverged)
{
	while (!((diverged | f->roots) >> k & 1))
		k = f->leader[k];
	return k;
}

/* One line of a reference to the forest: the nodes among m.sees that
   missed it. */
static inline __attribute__((always_inline)) uint64_t
forest_line(struct forest *f, uint64_t line, const struct marks *m, enum set_kind kind)
{
	const int narrow = is_narrow(kind);
	const struct cache_model *shape = &f->node[0]->stack;
	const uint64_t set = line & shape->sets_mask;
	const size_t set_bytes = (size_t)(narrow ? 4 : 8) << shape->way_bits;
	uint64_t diverged = f->diverged[set];

	/* Nodes whose set is about to differ from their leader's: those that
	   do not see the reference while their leader does, and those that
	   see it while their leader does not (only cross ones: a leader's D1
	   included in the node's misses what it misses). */
	uint64_t parting = m->followers & ~m->sees;
	for (uint64_t t = m->sees & f->cross; t; t &= t - 1) {
		unsigned k = (unsigned)__builtin_ctzll(t);
		if (!(m->sees >> f->leader[k] & 1))
			parting |= 1ull << k;
	}
	for (uint64_t t = parting & ~diverged; t; t &= t - 1) {
		unsigned k = (unsigned)__builtin_ctzll(t);
		const struct group *from = f->node[holder(f, f->leader[k], diverged)];
		if (is_mru(from, line, narrow))
			continue;	/* the lookup changes nothing */
		memcpy(set_of(f->node[k], set, narrow), set_of(from, set, narrow), set_bytes);
		diverged |= 1ull << k;
	}

	const uint64_t own = m->sees & (diverged | f->roots);
	uint64_t missed = 0;
	for (uint64_t t = own; t; t &= t - 1) {
		unsigned k = (unsigned)__builtin_ctzll(t);
		struct group *g = f->node[k];
		if (stack_ref(g, line, kind) >= g->min_assoc)
			missed |= 1ull << k;
	}
	/* A node that saw it in its leader's set: its leader's outcome (nodes
	   in ascending order: every leader before its followers), a hit if
	   the leader did not see it (the line was the most recently used). */
	if (missed != 0)
		for (uint64_t t = m->sees & ~own; t; t &= t - 1) {
			unsigned k = (unsigned)__builtin_ctzll(t);
			missed |= (missed >> f->leader[k] & 1) << k;
		}
	/* Sets that became their leader's again. */
	for (uint64_t t = own & diverged & ~f->roots; t; t &= t - 1) {
		unsigned k = (unsigned)__builtin_ctzll(t);
		const struct group *from = f->node[holder(f, f->leader[k], diverged)];
		if (memcmp(set_of(f->node[k], set, narrow), set_of(from, set, narrow), set_bytes) == 0)
			diverged &= ~(1ull << k);
	}
	f->diverged[set] = diverged;
	return missed;
}

/* The references of a bunch that missed in L1 (marked), fetches and data
   merged back into program order, into f->order: how many. */
static uint32_t forest_order(struct forest *f, const struct bunch *b)
{
	uint32_t at[2] = { 0, 0 }, n = 0;
	for (;;) {
		for (int side = 0; side < 2; side++)
			while (at[side] < b->n[side] && f->marks[side][at[side]].sees == 0)
				at[side]++;
		int side = at[0] == b->n[0] ||
			   (at[1] < b->n[1] && b->refs[1][at[1]].seq < b->refs[0][at[0]].seq);
		if (at[side] == b->n[side])
			return n;
		f->order[n++] = (uint32_t)side << 31 | at[side]++;
	}
}

/* The forest takes a bunch's L1 misses, in program order, prefetching
   ahead which nodes have a set of their own there, then those sets. */
static inline __attribute__((always_inline)) int forest_take(struct part *p, const struct bunch *b,
							     enum set_kind kind)
{
	struct forest *f = p->forest;
	const int narrow = is_narrow(kind);
	const uint32_t line_bits = f->node[0]->stack.line_bits;
	const uint64_t sets_mask = f->node[0]->stack.sets_mask;
	const uint32_t n = forest_order(f, b);
	for (uint32_t j = 0; j < n; j++) {
		if (j + 2 * PREFETCH_AHEAD < n) {
			uint32_t ahead = f->order[j + 2 * PREFETCH_AHEAD];
			uint64_t addr = b->refs[ahead >> 31][ahead & INT32_MAX].addr;
			__builtin_prefetch(&f->diverged[(addr >> line_bits) & sets_mask]);
		}
		if (j + PREFETCH_AHEAD < n) {
			uint32_t ahead = f->order[j + PREFETCH_AHEAD];
			const struct marks *m = &f->marks[ahead >> 31][ahead & INT32_MAX];
			uint64_t addr = b->refs[ahead >> 31][ahead & INT32_MAX].addr;
			uint64_t own = f->roots | f->diverged[(addr >> line_bits) & sets_mask];
			for (uint64_t t = m->sees & own; t; t &= t - 1)
				prefetch_set(f->node[__builtin_ctzll(t)], addr, narrow);
		}
		uint32_t side = f->order[j] >> 31, i = f->order[j] & INT32_MAX;
		const struct pending *r = &b->refs[side][i];
		struct marks *m = &f->marks[side][i];
		uint64_t first = r->addr >> line_bits, last = (r->addr + r->size - 1) >> line_bits;
		uint64_t missed = forest_line(f, first, m, kind);
		if (last != first)
			missed |= forest_line(f, last, m, kind);
		*m = (struct marks){ 0, 0 };
		for (; missed != 0; missed &= missed - 1)
			if (count_miss(&f->node[__builtin_ctzll(missed)]->misses, r->slot) < 0)
				return -1;
	}
	return 0;
}

__attribute__((target("avx512f"), noinline)) static int forest_take_lanes(struct part *p,
									  const struct bunch *b)
{
	return forest_take(p, b, NARROW_LANES_16);
}

static int forest_take_any(struct part *p, const struct bunch *b)
{
	struct forest *f = p->forest;
	/* One shape: made wide together, looked up alike. */
	if (outgrown(p, f->node[0]))
		for (unsigned k = 0; k < f->n; k++)
			widen(f->node[k]);
	switch (kind_of(p, f->node[0])) {
	case NARROW_LANES_16:
		return forest_take_lanes(p, b);
	case NARROW:
		return forest_take(p, b, NARROW);
	default:
		return forest_take(p, b, WIDE);
	}
}

/*
 * A general configuration takes a bunch, as Callgrind's simulation with
 * write-back and prefetch (callgrind/sim.c) takes references: the fetches
 * and data merged back into program order, each through its L1; LL's
 * bunch the L1 misses and, with write-back, every write (a write-through
 * L1 passes a hit on to dirty LL's line); the prefetcher observing the
 * misses and, with write-back, every write.  A read-modify-write is one
 * write (Cachegrind counts it as a read).
 */
static int general_take(struct part *p, struct general *g, const struct bunch *b)
{
	const struct hier *h = p->h;
	const int write_back = h->model.write_back,
		  prefetch = h->model.prefetch[CGT_LEVEL_LL] != LEVEL_PREFETCH_NONE;
	const struct pending *side_refs[2] = { b->refs[0], b->refs[1] };
	/* each L1 takes its side's references (writes as reads: write-through,
	   no dirty line) */
	for (int side = 0; side < 2; side++) {
		for (uint32_t k = 0; k < b->n[side]; k++)
			p->l1_refs[side][k] = (struct level_ref){ side_refs[side][k].addr,
								  side_refs[side][k].size, 0, 0, k };
		level_take(&g->l1[side], p->l1_refs[side], b->n[side], p->l1_outcomes[side], NULL);
	}
	uint32_t n_ll = 0;
	for (uint32_t i = 0, j = 0; i < b->n[0] || j < b->n[1];) {
		int side = i == b->n[0] || (j < b->n[1] && side_refs[1][j].seq < side_refs[0][i].seq);
		const uint32_t k = side ? j++ : i++;
		const struct pending *r = &side_refs[side][k];
		int write = r->write;
		int missed = p->l1_outcomes[side][k] != LEVEL_HIT;
		if (missed && count_miss(&g->misses[GENERAL_L1], r->slot) < 0)
			return -1;
		if (!missed && !(write && write_back))
			continue;
		int observed = prefetch && (missed || write_back);
		p->ll_refs[n_ll++] = (struct level_ref){
			r->addr, (uint8_t)r->size,
			(uint8_t)((write ? LEVEL_WRITE : 0) | (observed ? LEVEL_OBSERVED : 0)), 0,
			missed ? r->slot : NOT_MISSED };
	}
	level_take(&g->LL, p->ll_refs, n_ll, p->ll_outcomes, NULL);
	for (uint32_t k = 0; k < n_ll; k++) {
		uint32_t slot = p->ll_refs[k].handle;
		if (slot == NOT_MISSED || p->ll_outcomes[k] == LEVEL_HIT)
			continue;
		if (count_miss(&g->misses[GENERAL_LL], slot) < 0 ||
		    (p->ll_outcomes[k] == LEVEL_MISS_DIRTY &&
		     count_miss(&g->misses[GENERAL_LL_DIRTY], slot) < 0))
			return -1;
	}
	return 0;
}

/*
 * A general configuration with cache use takes a bunch: the fetches and
 * the data through Callgrind's caches that keep it (cache_use.h), the
 * misses counted at their slots, and each line an L1 fills handed to the
 * sink, which charges the line it evicted to the slot that loaded that.
 */
static int general_take_use(struct part *p, struct general *g, const struct bunch *b)
{
	const uint32_t n_fetch = b->n[0], n = b->n[0] + b->n[1];
	if (n == 0)
		return 0;
	uint64_t first = b->n[0] == 0 ? b->refs[1][0].seq
			 : b->n[1] == 0 || b->refs[0][0].seq < b->refs[1][0].seq ? b->refs[0][0].seq
										  : b->refs[1][0].seq;
	struct level_ref *refs = p->ll_refs;
	uint32_t last_slot = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct pending *r = k < n_fetch ? &b->refs[0][k] : &b->refs[1][k - n_fetch];
		/* (the handle: its place in the bunch, in program order; writes
		   are simulated as reads) */
		uint32_t handle = (uint32_t)(r->seq - first);
		refs[k] = (struct level_ref){ r->addr, r->size, 0, 0, handle };
		p->use_slot[handle] = r->slot;
		last_slot = r->slot > last_slot ? r->slot : last_slot;
	}
	size_t need = ((size_t)last_slot + 2) * USE_COLUMNS, had = g->cap_use_costs;
	if (need > had) {
		if (cgt_array_grow(&g->use_costs, &g->cap_use_costs, had, need - had,
				   sizeof(*g->use_costs)) < 0)
			return -1;
		memset(g->use_costs + had, 0, (g->cap_use_costs - had) * sizeof(*g->use_costs));
	}
	long n_fills = use_caches_take(&g->use, refs, n_fetch, n, p->use_missed, p->use_fills);
	if (n_fills < 0)
		return -1;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t slot = p->use_slot[refs[k].handle];
		if ((p->use_missed[k] >= 1 && count_miss(&g->misses[GENERAL_L1], slot) < 0) ||
		    (p->use_missed[k] == 2 && count_miss(&g->misses[GENERAL_LL], slot) < 0))
			return -1;
	}
	for (long f = 0; f < n_fills; f++) {
		const struct use_fill *fill = &p->use_fills[f];
		uint32_t loader = (p->use_slot[fill->op] + 1) * USE_COLUMNS;
		use_sink_fill(&g->sink, fill, loader, NO_NODE, 1, g->use_costs);
	}
	return 0;
}

/* The end of the run for a general configuration with cache use: every
   line resident evicted (Callgrind's cacheuse_finish). */
static void general_finish_use(struct general *g)
{
	const struct level_use *const l1_use[2] = { g->use.l1[0].use, g->use.l1[1].use };
	if (g->use_costs != NULL)
		use_sink_finish(&g->sink, l1_use, 1, g->use_costs);
}

/* L1 takes a bunch (the fetches and the data, each side in program
   order), then the forest or, if queues are full, the levels below. */
static int part_take(struct part *p, const struct bunch *b)
{
	if (p->general != NULL) {
		for (unsigned k = 0; k < p->n_configs; k++)
			if ((p->h->model.cache_use ? general_take_use(p, &p->general[k], b)
						   : general_take(p, &p->general[k], b)) < 0)
				return -1;
		return 0;
	}
	p->addr_bits = b->addr_bits;
	for (int side = 0; side < 2; side++)
		for (unsigned k = 0, end; k < p->n_l1[side]; k = end) {
			end = chain_end(p->l1[side], p->n_l1[side], k);
			for (uint32_t i = 0; i < b->n[side]; i++)
				p->live[i] = i;
			if (run_chain(p, p->l1[side] + k, end - k, b->refs[side], b->n[side]) < 0)
				return -1;
		}
	if (p->forest != NULL)
		return forest_take_any(p, b);
	return p->must_drain ? drain(p) : 0;
}

/* ---- Gathering -------------------------------------------------------- */

/* A block's references in program order: its block program's fetches
   and data (block_program.c decides which a block makes) merged by op. */
static struct ref_program *compile(struct hier *h, const struct cgt_block *blk)
{
	/* every I1's fetches: a step where the smallest I1 line starts a new
	   line (its sets are no one I1's: set_at is left 0) -- or each fetch,
	   where each is a use */
	const struct block_program_options o = {
		.cache_sim = 1, .fetch_line_bits = h->fetch_line_bits, .min_line = h->min_line,
		.fetches = h->may.elide_mru_fetches ? FETCH_NEW_LINES : FETCH_EACH
	};
	struct block_program *bp = block_program_compile(blk, &o);
	if (bp == NULL)
		return NULL;
	struct ref_program *rp = calloc(1, sizeof(*rp) + bp->max_refs * sizeof(struct ref_step) +
						   (blk->n_exits + 1) * sizeof(uint32_t));
	/* Slots are numbered in 32 bits. */
	if (rp == NULL ||
	    (h->n_slots + (uint64_t)blk->n_ops > h->cap_slots &&
	     (h->n_slots + (uint64_t)blk->n_ops > UINT32_MAX ||
	      cgt_array_grow(&h->slots, &h->cap_slots, h->n_slots, blk->n_ops, sizeof(*h->slots)) < 0))) {
		free(bp);
		free(rp);
		return NULL;
	}
	rp->in_prefix = (uint32_t *)(rp->steps + bp->max_refs);
	rp->first_slot = h->n_slots;
	for (uint32_t k = 0; k < blk->n_ops; k++)
		h->slots[h->n_slots++] = (struct slot_owner){ blk->id, k };
	const struct prefix_plan *whole = &bp->prefixes[0];
	for (uint32_t n = 0, f = 0, j = 0; f < whole->n_fetches || j < whole->n_data; n++) {
		if (j == whole->n_data || (f < whole->n_fetches && bp->fetches[f].op < bp->data_ops[j])) {
			const struct fetch_step *fs = &bp->fetches[f++];
			rp->steps[n] = (struct ref_step){ fs->addr, fs->op, 0, fs->len, 1, 0 };
			/* a fetch's bytes, once for every execution (gather); those
			   of one left out are in the line of the step before */
			h->addr_bits |= fs->addr | (fs->addr + fs->len - 1);
		} else {
			rp->steps[n] = (struct ref_step){ CGT_NO_ACCESS, bp->data_ops[j], j,
							  bp->data_sizes[j], 0, bp->data_writes[j] };
			j++;
		}
	}
	/* a prefix's fetches and data are the first of the block's */
	for (uint32_t k = 0; k <= blk->n_exits; k++)
		rp->in_prefix[k] = bp->prefixes[k].n_fetches + bp->prefixes[k].n_data;
	free(bp);
	return rp;
}

static struct ref_program *program_of(struct hier *h, const struct cgt_exec *x)
{
	uint32_t id = x->block_id;
	if (id >= h->n_programs) {
		size_t n = h->n_programs;
		if (cgt_array_grow(&h->programs, &n, 0, (size_t)id + 1, sizeof(*h->programs)) < 0)
			return NULL;
		memset(h->programs + h->n_programs, 0, (n - h->n_programs) * sizeof(*h->programs));
		h->n_programs = n;
	}
	if (h->programs[id] == NULL)
		h->programs[id] = compile(h, x->block);
	return h->programs[id];
}

/* ---- Taking turns ------------------------------------------------------ */

/* A part's turn (the ring's): its next bunch, or its last drain. */
static int part_turn(void *arg, unsigned part, unsigned slot, int last, struct cgt_error *e)
{
	struct hier *h = arg;
	struct part *p = &h->parts[part];
	int rc = last ? drain(p) : part_take(p, &h->bunches[slot]);
	for (unsigned k = 0; last && h->model.cache_use && p->general != NULL && k < p->n_configs; k++)
		general_finish_use(&p->general[k]);
	return rc < 0 ? cgt_fail(e, cgt_err_nomem, "out of memory for the simulated caches") : 0;
}

/* Publishes the bunch being filled, and waits for the next to be free,
   taking parts' turns meanwhile (on one thread, nobody else would). */
static int publish(struct hier *h, uint32_t n_fetches, uint32_t n_data, uint64_t bits)
{
	struct bunch *b = &h->bunches[ring_filling(&h->ring)];
	b->n[0] = n_fetches;
	b->n[1] = n_data;
	b->addr_bits = bits;
	if (ring_publish(&h->ring) < 0)
		return -1;
	struct bunch *next = &h->bunches[ring_filling(&h->ring)];
	next->n[0] = next->n[1] = 0;
	return 0;
}

/* The references of an execution, for every configuration. */
static inline __attribute__((always_inline)) int gather(struct hier *h, const struct cgt_exec *x,
							 struct cgt_error *e)
{
	struct ref_program *rp = program_of(h, x);
	if (rp == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");

	/* In locals, not through h: the stores into the bunch and the filters
	   could alias h's fields, which made every reference wait for the one
	   before. */
	struct bunch *into = &h->bunches[ring_filling(&h->ring)];
	struct pending *fetches = into->refs[0], *data = into->refs[1];
	uint32_t n_fetches = into->n[0], n_data = into->n[1];
	uint64_t seq = h->seq, bits = h->addr_bits;
	uint64_t *const filter[2] = { h->last_line[0], h->last_line[1] };
	const uint64_t mask[2] = { h->last_line_mask[0], h->last_line_mask[1] };
	const uint32_t line_bits[2] = { h->last_line_bits[0], h->last_line_bits[1] };
	const uint64_t *values = x->values;
	const uint32_t first_slot = rp->first_slot;
	const int elide_writes = h->may.elide_mru_writes;
	for (uint32_t k = 0, n = rp->in_prefix[x->exit]; k < n; k++) {
		const struct ref_step *s = &rp->steps[k];
		uint32_t slot = first_slot + s->op;
		int side = !s->is_fetch;
		uint64_t addr = s->addr;
		if (side) {
			addr = values[s->value];
			if (addr == CGT_NO_ACCESS)
				continue;	/* a guarded access not made */
			bits |= addr | (addr + s->size - 1);
		}
		uint64_t *last_line = filter[side];
		if (last_line != NULL) {
			uint64_t first = addr >> line_bits[side];
			uint64_t last = (addr + s->size - 1) >> line_bits[side];
			uint64_t *at_first = &last_line[first & mask[side]];
			uint64_t *at_last = &last_line[last & mask[side]];
			int hit = *at_first == first && *at_last == last;
			*at_first = first;
			*at_last = last;
			if (hit && (elide_writes || !s->write))
				continue;
		}
		if (side)
			data[n_data++] = (struct pending){ addr, seq++, slot, s->size, s->write, 0 };
		else
			fetches[n_fetches++] = (struct pending){ addr, seq++, slot, s->size, 0, 0 };
		if (n_fetches == BUNCH || n_data == BUNCH) {
			if (publish(h, n_fetches, n_data, bits) < 0) {
				*e = *ring_error(&h->ring);
				return -e->status;
			}
			into = &h->bunches[ring_filling(&h->ring)];
			fetches = into->refs[0];
			data = into->refs[1];
			n_fetches = n_data = 0;
		}
	}
	into->n[0] = n_fetches;
	into->n[1] = n_data;
	h->seq = seq;
	h->addr_bits = bits;
	return 0;
}

static int gather_batch(struct hier *h, struct cgt_batch *b, struct cgt_error *e)
{
	struct cgt_exec x = { 0 };
	int rc;
	if (b->mark.kind == CGT_MARK_REQUEST)
		h->instrumenting = cgt_cachegrind_instr_after(h->instrumenting ? CGT_CG_INSTR_START
										: CGT_CG_INSTR_STOP,
							      b->mark.code) == CGT_CG_INSTR_START;
	/* while Cachegrind's instrumentation is off: decoded, not simulated */
	while ((rc = cgt_batch_next(b, &x, e)) > 0)
		if (h->instrumenting && gather(h, &x, e) < 0)
			return -e->status;
	return rc;
}

struct thread_args {
	struct hier *h;
	struct cgt_decoder *d;		/* the decoding thread's; NULL for others */
	const struct cgt_sim_progress *progress;
};

/* The decoding thread: gathers every batch, taking parts' turns whenever
   the ring is full. */
static void decode_all(const struct thread_args *a)
{
	struct hier *h = a->h;
	struct cgt_batch b;
	struct cgt_error e;
	int rc;

	while ((rc = cgt_decoder_next(a->d, &b, &e)) > 0) {
		/* Damage the pass that counts executions reports: what it lost
		   is lost here too. */
		if (gather_batch(h, &b, &e) < 0 && !cgt_decoder_lost(a->d, &e)) {
			rc = -1;
			break;
		}
		if (a->progress != NULL)
			a->progress->update(a->progress->arg, cgt_decoder_file_offset(a->d),
					    cgt_decoder_file_size(a->d), 0);
	}
	if (rc == 0) {
		struct bunch *last = &h->bunches[ring_filling(&h->ring)];
		if ((last->n[0] > 0 || last->n[1] > 0) && publish(h, last->n[0], last->n[1], h->addr_bits) < 0)
			return;
	}
	if (rc < 0) {
		ring_fail(&h->ring, &e);
		return;
	}
	ring_produced_all(&h->ring);
}

/* Parts' turns until every part finished (or one failed). */
static void *take_turns(void *arg)
{
	const struct thread_args *a = arg;
	if (a->d != NULL)
		decode_all(a);
	ring_take_turns(&a->h->ring);
	return NULL;
}

/* ---- Sharing the configurations out among threads -------------------- */

/* Configurations with the same L1 stacks are best in one part: they share
   the most. */
static int same_l1(const struct cgt_hierarchy *a, const struct cgt_hierarchy *b)
{
	for (int l = CGT_LEVEL_I1; l <= CGT_LEVEL_D1; l++)
		if (a->level[l].line != b->level[l].line ||
		    a->level[l].size / a->level[l].assoc != b->level[l].size / b->level[l].assoc)
			return 0;
	return 1;
}

static int share_out(struct hier *h, unsigned threads)
{
	unsigned n_parts = threads < h->n_configs ? threads : h->n_configs;
	unsigned *cluster = malloc(h->n_configs * sizeof(*cluster));
	unsigned n_clusters = 0;

	h->parts = calloc(n_parts, sizeof(*h->parts));
	if (cluster == NULL || h->parts == NULL) {
		free(cluster);
		return -1;
	}
	h->n_parts = n_parts;
	for (unsigned c = 0; c < h->n_configs; c++) {
		cluster[c] = n_clusters;
		for (unsigned k = 0; k < c; k++)
			if (same_l1(&h->configs[k], &h->configs[c])) {
				cluster[c] = cluster[k];
				break;
			}
		if (cluster[c] == n_clusters)
			n_clusters++;
	}
	/* Clusters in turn to the parts, whole; fewer clusters than parts:
	   the configurations split evenly instead. */
	int rc = 0;
	for (unsigned c = 0; c < h->n_configs && rc == 0; c++) {
		unsigned owner = n_clusters < n_parts ? (unsigned)((uint64_t)c * n_parts / h->n_configs)
						      : cluster[c] % n_parts;
		struct part *p = &h->parts[owner];
		if (p->n_configs == p->cap_configs &&
		    cgt_array_grow(&p->configs, &p->cap_configs, p->n_configs, 1, sizeof(*p->configs)) < 0)
			rc = -1;
		else
			p->configs[p->n_configs++] = c;
	}
	free(cluster);
	return rc;
}

int hier_run(struct hier *h, const char *path, unsigned threads,
	     const struct cgt_sim_progress *progress, struct cgt_error *e)
{
	pthread_t ids[64];
	unsigned started = 0;
	struct cgt_decoder *d = NULL;

	if (threads < 1)
		threads = 1;
	if (threads > 64)
		threads = 64;
	if (share_out(h, threads) < 0 || gather_init(h) < 0 ||
	    ring_init(&h->ring, RING, h->n_parts, 1, part_turn, h) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	h->has_ring = 1;
	for (unsigned t = 0; t < h->n_parts; t++) {
		struct part *p = &h->parts[t];
		p->h = h;
		if (part_build(p) < 0)
			return cgt_fail(e, cgt_err_nomem, "out of memory for the simulated caches");
	}
	/* Silent: the pass that counts executions says what opening the
	   trace says. */
	if (cgt_decoder_open(&d, path, NULL, e) < 0)
		return -e->status;
	struct thread_args decoding = { h, d, progress }, taking = { h, NULL, NULL };
	/* Beside the decoding thread, one for each part at most. */
	if (threads > h->n_parts + 1)
		threads = h->n_parts + 1;
	for (unsigned t = 1; t < threads; t++) {
		if (cgt_thread_create(&ids[t], take_turns, &taking) != 0)
			break;
		started = t;
	}
	take_turns(&decoding);
	for (unsigned t = 1; t <= started; t++)
		pthread_join(ids[t], NULL);
	cgt_decoder_close(d);
	if (h->ring.failed) {
		*e = *ring_error(&h->ring);
		return -e->status;
	}
	return 0;
}

/* Calls add for every slot counted in c (at level). */
static void counts_out(const struct hier *h, const struct miss_counts *c, int level,
		       hier_miss_fn *add, void *arg)
{
	for (uint64_t page = 0; page < c->n_pages; page++)
		for (uint32_t i = 0; c->pages[page] != NULL && i < 1u << PAGE_BITS; i++) {
			uint64_t n = c->pages[page][i];
			if (n == 0)
				continue;
			const struct slot_owner *o = &h->slots[page << PAGE_BITS | i];
			add(arg, o->block, o->op, level, n);
		}
}

void hier_misses(const struct hier *h, unsigned config, hier_miss_fn *add, void *arg)
{
	const struct general *g = h->general_of[config];
	if (g != NULL) {
		/* the L1 an op goes to is the level it missed first: I1 for a
		   fetch, D1 for data (the caller tells them apart by the op) */
		counts_out(h, &g->misses[GENERAL_L1], HIER_L1, add, arg);
		counts_out(h, &g->misses[GENERAL_LL], CGT_LEVEL_LL, add, arg);
		counts_out(h, &g->misses[GENERAL_LL_DIRTY], CGT_EVENT_DIRTY_MISS, add, arg);
		/* cache use's charges, at the slots that loaded the lines */
		for (size_t slot = 0; (slot + 2) * USE_COLUMNS <= g->cap_use_costs; slot++)
			for (int c = 0; c < USE_COLUMNS; c++) {
				uint64_t n = g->use_costs[(slot + 1) * USE_COLUMNS + (size_t)c];
				if (n != 0)
					add(arg, h->slots[slot].block, h->slots[slot].op, HIER_USE + c, n);
			}
		return;
	}
	for (int level = 0; level < CGT_N_LEVELS; level++) {
		const struct member *m = h->chain[config][level];
		if (m == NULL)
			continue;
		/* Its misses at a slot: those counted there with more than
		   m->index members missing. */
		const struct miss_counts *c = &m->group->misses;
		uint64_t width = m->group->n_members;
		for (uint64_t page = 0; page < c->n_pages; page++)
			for (uint32_t i = 0; c->pages[page] != NULL && i < 1u << PAGE_BITS; i++) {
				uint64_t n = c->pages[page][i], at = page << PAGE_BITS | i;
				if (n == 0 || at % width < m->index)
					continue;
				const struct slot_owner *o = &h->slots[at / width];
				add(arg, o->block, o->op, level, n);
			}
	}
}

void hier_close(struct hier *h)
{
	if (h == NULL)
		return;
	for (unsigned t = 0; t < h->n_parts; t++) {
		struct part *p = &h->parts[t];
		for (unsigned k = 0; p->general != NULL && k < p->n_configs; k++) {
			struct general *g = &p->general[k];
			level_free(&g->l1[0]);
			level_free(&g->l1[1]);
			level_free(&g->LL);
			for (int c = 0; c < GENERAL_COUNTS; c++)
				miss_counts_free(&g->misses[c]);
			use_caches_free(&g->use);
			use_sink_free(&g->sink);
			free(g->use_costs);
		}
		free(p->general);
		free(p->ll_refs);
		free(p->ll_outcomes);
		for (int side = 0; side < 2; side++) {
			free(p->l1_refs[side]);
			free(p->l1_outcomes[side]);
		}
		free(p->use_missed);
		free(p->use_slot);
		free(p->use_fills);
		for (unsigned k = 0; k < p->n_groups; k++) {
			struct group *g = p->groups[k];
			for (unsigned m = 0; m < g->n_members; m++)
				free(g->members[m]);
			miss_counts_free(&g->misses);
			free(g->queue);
			free(g->missed_at);
			free(g->marks_at);
			if (p->arena != NULL)
				g->stack.tags = NULL;	/* in the arena */
			free(g->members);
			cache_model_free(&g->stack);
			free(g);
		}
		if (p->forest != NULL) {
			free(p->forest->diverged);
			free(p->forest->marks[0]);
			free(p->forest->marks[1]);
			free(p->forest->order);
			free(p->forest);
		}
		free(p->groups);
		free(p->lower);
		free(p->merged);
		free(p->live);
		free(p->l1[0]);
		free(p->l1[1]);
		free(p->configs);
		if (p->arena != NULL)
			munmap(p->arena, p->arena_size);
	}
	for (size_t b = 0; b < h->n_programs; b++)
		free(h->programs[b]);
	free(h->programs);
	free(h->slots);
	for (int side = 0; side < 2; side++) {
		free(h->last_line[side]);
		for (unsigned k = 0; k < RING; k++)
			free(h->bunches[k].refs[side]);
	}
	if (h->has_ring)
		ring_free(&h->ring);
	free(h->parts);
	free(h->configs);
	free(h->chain);
	free(h->general_of);
	free(h);
}
