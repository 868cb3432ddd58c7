/*
 * The call-graph replay's two sides (callgraph.c): a producer
 * (callgraph_producer.c) decodes the trace and simulates its caches and
 * branches, and hands the replay chunks of executions with their misses
 * and mispredictions, the marks and the module map, in stream order.
 * What they share: the tables both keep, the chunk, and the producer.
 * Internal to simulate/.
 */
#ifndef CGTRACE_CALLGRAPH_PRODUCER_H
#define CGTRACE_CALLGRAPH_PRODUCER_H

#include <stdint.h>
#include <string.h>

#include "cache_model.h"
#include "cache_use.h"
#include "level.h"
#include "ll_model.h"
#include "sim.h"

/* Growable arrays addressed by index (the call graph's tables, the
   chunk's parts).  Elements are referred to by index, as pointers move when a table grows;
   a table keeps its element size, which the helpers below need. */
struct vec {
	void *v;
	size_t n, cap, size;
};

/* Room for n more elements, not counted yet (the hot paths write them
   whole): 0, or -1 if out of memory. */
static inline int vec_reserve(struct vec *a, size_t n)
{
	return a->n + n <= a->cap ? 0 : cgt_array_grow(&a->v, &a->cap, a->n, n, a->size);
}

/* n zeroed elements at the end: the index of the first, or -1 if out of
   memory. */
static inline long vec_extend(struct vec *a, size_t n)
{
	if (vec_reserve(a, n) < 0)
		return -1;
	memset((char *)a->v + a->n * a->size, 0, n * a->size);
	size_t at = a->n;
	a->n += n;
	return (long)at;
}

/* One zeroed element at the end: its index, or -1 if out of memory. */
static inline long vec_push(struct vec *a)
{
	return vec_extend(a, 1);
}

#define AT(vec, type, i) (((type *)(vec).v)[i])

/* VEX inverts a block's last branch when its side exit goes to the next
   instruction (main.c CLG_(collectBlockInfo)). */
static inline int last_branch_inverted(const struct cgt_block *blk)
{
	if (blk->n_exits == 0 || blk->jumps == NULL)
		return 0;
	uint32_t instr = blk->ops[blk->exit_ops[blk->n_exits - 1]].insn;
	const struct cgt_insn *in = &blk->insns[instr];
	return instr == blk->n_insns - 1 && blk->jumps[blk->n_exits].dst_known &&
	       blk->jumps[blk->n_exits].dst == in->addr + in->len;
}

/* Callgrind's client requests (callgrind.h), as marks carry them. */
enum {
	REQ_DUMP_STATS = 0x43540000,
	REQ_ZERO_STATS,
	REQ_TOGGLE_COLLECT,
	REQ_DUMP_STATS_AT,
	REQ_START_INSTRUMENTATION,
	REQ_STOP_INSTRUMENTATION,
};

/*
 * The trace is decoded, and its cache references and branches simulated,
 * by a producer that hands the replay what it needs in chunks, in stream
 * order.  The simulation depends on nothing the replay decides (it
 * simulates whether or not collecting, and Callgrind's inversion of a
 * block's last branch is the block's), so the two can run on two threads:
 * the producer a chunk or more ahead.  With one thread they run in turn.
 */

enum handed_kind {
	HANDED_EXEC,	/* block, sp, exit, tid, n_charges */
	HANDED_MARK,	/* marks[index] */
	HANDED_LOST,	/* executions lost with damage before the next */
	HANDED_EPOCH,	/* the module map's epoch is now index */
};

/* 32 bytes: the producer writes one per execution, the replay reads it. */
struct handed {
	const struct cgt_block *block;
	union {
		uint64_t sp;	/* at the block's entry */
		uint64_t index;	/* HANDED_MARK's in marks; HANDED_EPOCH's epoch */
	};
	uint32_t exit, tid;
	uint32_t n_charges;	/* its events, next in the chunk's charges */
	uint8_t kind;		/* enum handed_kind */
};

struct handed_mark {
	struct cgt_mark mark;	/* its text in the chunk's texts, at text_at */
	size_t text_at;
};

/* The references an L1 of the cache use took after those it counted at
   once (struct chunk), in program order, their misses (enum
   level_outcome, then 2 where LL missed too) and the L1's fills. */
struct use_refs {
	struct vec refs;	/* struct level_ref */
	struct vec missed;	/* uint8_t */
	struct vec reports;	/* struct level_report */
};

/* A chunk: owned by the producer while it fills it, then by the replay.
   On cache lines of its own, as the producer is: the two threads write
   next to each other otherwise, and each write would take the line from
   the other's core. */
struct chunk {
	_Alignas(64) struct vec items;	/* struct handed */
	struct vec charges;	/* uint32_t: CHARGE_OP << 2 | CHARGE_LEVEL */
	struct vec marks;	/* struct handed_mark */
	struct vec texts;	/* char */
	/* struct cgt_mapping: the decoder's module map when the chunk was
	   filled, if it changed since the chunk before (has_mappings).  It
	   answers for any earlier epoch too: mappings are only added or
	   ended, each at an epoch of its own. */
	struct vec mappings;
	int has_mappings;
	/* With the general model's LL (Callgrind's write-back or prefetch
	   simulation), which the replay simulates before it replays the
	   chunk (the producer, with the L1s and the predictor, is the busier
	   thread): the chunk's LL references in program order, each's handle
	   the index in charges of the charge its outcome completes (an L1
	   miss's) or NO_LL_CHARGE; and where LL starts cold again, before the
	   reference of each index (CALLGRIND_START/STOP_INSTRUMENTATION). */
	struct vec ll_refs;	/* struct level_ref */
	struct vec ll_clears;	/* uint32_t */
	/* With cache use (cache_use.h), the chunk's references in two
	   sides, as the two threads simulate them: the producer runs D1 on
	   each execution's data (its references to the line their set
	   touched last counted at once) and leaves the rest here, with their
	   misses and D1's fills; the replay, before it replays the chunk
	   (callgraph_chunk_use), runs I1 on the executions' fetches from
	   their programs (use_execs) likewise, then LL on the lines both
	   filled, and writes the fills, in program order, and each
	   execution's charges (a guarded access's even if it hit).  A
	   reference's handle is its execution's op base plus its op, so
	   handles increase in program order across both sides.  After the
	   chunk's references I1 and LL start cold again if use_clear
	   (CALLGRIND_START/STOP_INSTRUMENTATION, the chunk's last item; the
	   producer made D1 so). */
	struct use_refs use_data;	/* D1's */
	struct vec use_guarded;		/* uint8_t, by D1's reference */
	size_t use_fetches;		/* the executions' fetch steps */
	struct vec use_execs;		/* struct use_exec */
	struct vec use_charges;		/* uint32_t: CHARGE_OP << 2 | CHARGE_LEVEL */
	struct vec fills;		/* struct use_fill */
	int use_clear;
	int status;		/* 1: more chunks follow; 0: the trace's end; negative: the
				   producer's error */
};

struct fetch_step;

/* An execution with references to the cache-use caches: its fetch steps
   (its block program's, as far as its exit), its item in the chunk, its
   references' handles' base, where its references end on each side and
   its charges in use_charges.  The fetches are here rather than found from
   the item: the replay's I1 then reads no chunk items, which the producer
   has just written on its own core. */
struct use_exec {
	const struct fetch_step *fetches;
	uint32_t n_fetches;
	uint32_t item, base, end[2], charges_end;
};

/* Executions a chunk holds at most: chunks are reused, so memory stays
   what a few of them take. */
#define CHUNK_EXECS 16384

struct producer {
	_Alignas(64) const struct cgt_callgraph_options *o;
	struct cgt_decoder *d;
	struct cgt_batch batch;	/* the batch being read, when in_batch */
	int in_batch;
	int instrumenting;
	uint32_t map_epoch;	/* the last handed over */
	uint32_t mappings_epoch;	/* that of the module map last handed over */
	struct cache_model cache[2];	/* I1, D1 */
	/* Instead of them, where a model of the run is not Cachegrind's LRU
	   (specialise.h, plain_l1s): I1 and D1 as levels of the general model
	   (write-through, as Callgrind's), and an execution's lookups of each
	   and their outcomes. */
	int l1_levels;
	struct level L1[2];
	struct vec l1_lookups;	/* struct level_ref */
	struct vec l1_outcomes;	/* uint8_t */
	struct ll_model LL;
	/* Instead of LL, with Callgrind's write-back or prefetch simulation
	   (general): the general model's level, which the replay runs on each
	   chunk's LL references (replay_chunk), and their outcomes there. */
	int general;
	struct level LL_general;
	uint8_t *ll_outcomes;
	size_t cap_ll_outcomes;
	struct chunk *filling;	/* the chunk LL's references go to */
	int chunk_failed;	/* out of memory for the chunk's references or fills */
	/* With cache use, instead of the caches above: I1, D1 and LL as
	   Callgrind's --cacheuse=yes simulates them, the L1s keeping the use
	   of each line (D1 the producer's, I1 and LL the replay's: see struct
	   chunk); the op base of the next execution in the chunk filled; I1
	   and LL to start cold again after the chunk (which then ends). */
	int cache_use;
	uint8_t fetch_steps;	/* block programs' (enum fetch_steps) */
	struct use_caches use_caches;
	uint32_t use_base;
	int use_clear;
	struct branch_model *predictor;
	uint32_t min_line;
	struct vec blocks;	/* struct producer_block, by trace block id */
	struct l1_ref *misses;	/* room for a program's max_refs */
	size_t cap_misses;
	struct cgt_error e;
	/* The replay's, with cache use: I1's references of a chunk.  On cache
	   lines of its own (see struct chunk). */
	_Alignas(64) struct use_refs use_fetches;
};


void callgraph_chunk_init(struct chunk *ch);
void callgraph_chunk_free(struct chunk *ch);

/* A producer of o's simulation on d (the replay's options).  0, or an
   error's negative status (e). */
int callgraph_producer_open(struct producer *p, const struct cgt_callgraph_options *o,
			    struct cgt_decoder *d, struct cgt_error *e);
void callgraph_producer_close(struct producer *p);

/* Fills ch with what follows in the trace; its status says how it ended. */
void callgraph_produce(struct producer *p, struct chunk *ch);

/* The replay's part of the simulation, before it replays ch: the general
   model's LL on ch's references (see struct chunk), their charges
   completed.  0, or -1 if out of memory. */
int callgraph_chunk_ll(struct producer *p, struct chunk *ch);

/* The replay's part of the cache use, before it replays ch: I1 on its
   executions' fetches and LL on the lines the L1s filled, its fills and
   use charges written (see struct chunk).  0, or -1 if out of memory. */
int callgraph_chunk_use(struct producer *p, struct chunk *ch);

#endif
