/*
 * Callgrind's call graph, replayed from a trace in stream order: what the
 * replay's files share.  Internal to simulate/.
 *
 * This follows Valgrind 3.19's callgrind/ (bbcc.c setup_bbcc,
 * callstack.c, context.c, threads.c, dump.c, jumps.c), whose rules
 * ../shared/docs/callgrind-callgraph.md states: each executed block is a
 * BB (code at one object offset); before it runs, the previous block's
 * exit decides whether this is a call, a return, a jump, or a call
 * emulated (a jump to a function's first instruction, into another object
 * or section kind); the stack pointer at the block's entry pops frames.
 * Costs go to a BBCC, the block in the context of the function entered by
 * the last call, at a recursion level; a call arc's inclusive cost is the
 * thread's counter at the return minus at the call.  Names differ from
 * Callgrind's where the two would only differ in memory addresses (its
 * dump order compares pointers): we number nodes in the order first seen.
 *
 * Callgrind's nodes are tables addressed by index (struct replay).  The
 * replay's concerns are a file each, compiled as one translation unit:
 * callgraph.c includes its parts from simulate/callgraph/ (it says why):
 *   callgraph/bb.c         names (objects, files, functions), BBs and their
 *                          functions
 *   callgraph/context.c    contexts: a function and its callers
 *   callgraph/bbcc.c       BBCCs (a BB in a context at a recursion level),
 *                          arcs
 *   callgraph/callstack.c  call stacks, signal handlers, threads
 *   callgraph/exec.c       each execution: its BBCC (setup_bbcc), its
 *                          events; a chunk's replay (the hot loop)
 *   callgraph/dump.c       dumps (a struct cgt_cg_profile), zeroing
 *   callgraph.c            client requests, the producer's thread, the
 *                          replay's entry points
 * The functions declared here are those the parts share with the unit
 * tests (tests/unit/test_callgraph_*.c); those only the parts share are
 * static, declared in callgraph.c.
 */
#ifndef CGTRACE_CALLGRAPH_REPLAY_H
#define CGTRACE_CALLGRAPH_REPLAY_H

#include <stdint.h>

#include "callgraph_backdate.h"
#include "callgraph_producer.h"
#include "sim.h"

#define NONE UINT32_MAX

/* Callgrind's jump kinds of a block's exits (global.h ClgJumpKind). */
enum { JK_NONE, JK_JUMP, JK_CALL, JK_RETURN };

/* ---- Nodes: objects, files, functions, contexts, BBs ------------------ */

struct name_node {
	const char *name;
	uint32_t parent;	/* a file's object, a function's file */
	uint32_t next;		/* same hash */
};

struct fn_node {
	uint8_t skip, pop_on_jump, toggle_collect, dump_before, dump_after, zero_before;
	int separate_recs, separate_callers;
};

struct context {
	uint32_t first, n;	/* in context_fns */
	uint64_t hash;
	uint32_t next;		/* same hash */
};

struct bb {
	uint64_t addr, offset;	/* offset: in its object (addr - the object's bias) */
	uint32_t obj, fn, map_epoch;
	uint32_t n_insns, cjmp_count;	/* cjmp_count + 1 exits */
	const struct cgt_insn *insns;
	const struct cgt_block *blk;	/* the trace block it was made from */
	uint32_t jmp;		/* in bb_jmps: [cjmp_count + 1] of {instr, kind} */
	uint8_t sect_kind, is_entry, inverted;
	uint32_t bbcc_list;	/* its first BBCC (rec 0 ones, newest first) */
	uint32_t last_bbcc;
	uint32_t next;		/* same address */
};

struct bb_jmp {
	uint32_t instr;
	uint8_t kind;
};

struct bbcc {
	uint32_t bb, cxt, rec;
	uint32_t rec_array;	/* in u32s: [separate_recs] BBCCs, NONE where none */
	uint32_t next_bbcc;	/* the BB's next rec 0 BBCC */
	uint32_t lru_next;	/* the BBCC executed after it last time */
	uint64_t ecounter_sum, ret_counter;
	uint32_t exits;		/* in u64s: [cjmp_count + 1] executions left by each exit */
	uint32_t jcc_heads;	/* in u32s: [cjmp_count + 1] first arc of each exit */
	uint32_t skipped;	/* in u64s: [n_ev], 0: none yet */
	uint32_t cost;		/* in u64s: [n_insns][n_ev], events charged as they
				   happen (cache and branch simulation): misses,
				   guarded accesses; 0: none */
	uint32_t charged;	/* in u64s: [cjmp_count + 1] executions charged by
				   exit, whose other events are counted at the dump */
	uint32_t order;
	uint8_t listed;		/* taken into the dump being built */
};

struct arc {
	uint32_t from, jmp, to;
	uint8_t kind;		/* enum cgt_cg_arc_kind */
	uint32_t next_from;
	uint64_t call_counter;
	uint32_t cost;		/* in u64s: [n_ev] */
};

/* ---- Threads ----------------------------------------------------------- */

struct exec_state {
	uint64_t cost[CGT_MAX_EVENTS];
	int collect;
	uint32_t cxt, bbcc, passed, nonskipped;
	uint32_t sig;
	uint32_t call_stack_bottom;
};

struct call_entry {
	uint32_t arc;		/* NONE: a skipped function's frame */
	uint64_t sp, ret_addr;
	uint64_t enter_cost[CGT_MAX_EVENTS];
	uint32_t nonskipped;
	/* what push_cxt saved here: the context before, the function stack's depth */
	uint32_t cxt, fn_sp;
	uint32_t node;		/* the activation's in the back-dating tree, or NO_NODE */
};

struct thread {
	uint32_t tid;
	struct vec states;	/* struct exec_state; the last is current */
	struct exec_state *current;	/* that last one: looked at by every execution */
	struct vec calls;	/* struct call_entry: [sp] is the next frame's */
	uint32_t sp;
	struct vec fns;		/* uint32_t function stack: [0] = 0, 0 marks a handler */
	uint32_t fn_top;
	struct vec active;	/* uint32_t per function: activations */
	uint64_t lastdump_cost[CGT_MAX_EVENTS], sighandler_cost[CGT_MAX_EVENTS];
};

enum failure { FAIL_NOMEM = 1, FAIL_DUMP, FAIL_STATE };

struct replay {
	const struct cgt_callgraph_options *o;
	struct cgt_event_set events;
	unsigned n_ev;
	/* the events' columns (-1: not counted) */
	int ev_dr, ev_dw, ev_i1mr, ev_d1mr, ev_d1mw, ev_ilmr, ev_dlmr, ev_dlmw, ev_bc, ev_bcm, ev_bi, ev_bim;
	int ev_ildmr, ev_dldmr, ev_dldmw;	/* with write-back */
	int charged;		/* events are charged as they happen (cache or branch simulation) */
	struct vec mappings;	/* struct cgt_mapping: the module map, as handed over */
	uint32_t map_epoch;	/* the module map's, at the point of the stream replayed */
	struct vec objs, files, fn_names;	/* struct name_node */
	struct vec fns;		/* struct fn_node, by function number */
	struct vec contexts;	/* struct context */
	struct vec context_fns;	/* uint32_t */
	struct vec bbs;		/* struct bb */
	struct vec bb_jmps;	/* struct bb_jmp */
	struct vec bbccs;	/* struct bbcc */
	struct vec arcs;	/* struct arc */
	struct vec u64s, u32s;
	struct vec owned;	/* char *: names we made */
	struct vec obj_bias;	/* uint64_t by object: where it is mapped now */
	struct cgt_map name_index, context_index, bb_index;
	struct vec block_bb;	/* uint32_t: trace block id -> BB + 1 */
	struct thread **threads;	/* by tid */
	size_t n_threads;
	struct thread *cur;	/* the thread of the execution replayed last */
	int instrumenting;
	/* With Callgrind's cache use: who loaded each line, charged when the
	   producer's levels evict it (cache_use.h) */
	int cache_use;
	struct use_sink use;
	/* and with inclusive attribution, the calls active at each line's
	   load (callgraph_backdate.h) */
	struct backdate backdate;
	uint32_t exit_fn;	/* the first function named _exit (the freeres hack) */
	uint64_t bb_executions, bbs_done;
	unsigned dumps;
	int failed;		/* enum failure, inside a rule: reported at the next step */
};

#define BB(r, i) AT((r)->bbs, struct bb, i)
#define BBCC(r, i) AT((r)->bbccs, struct bbcc, i)
#define ARC(r, i) AT((r)->arcs, struct arc, i)
#define FN(r, i) AT((r)->fns, struct fn_node, i)
#define CXT(r, i) AT((r)->contexts, struct context, i)
#define U64(r, i) (&AT((r)->u64s, uint64_t, i))
#define U32(r, i) (&AT((r)->u32s, uint32_t, i))

static inline struct exec_state *state(struct thread *t)
{
	return t->current;
}

static inline struct call_entry *entry(struct thread *t, uint32_t i)
{
	return &AT(t->calls, struct call_entry, i);
}

/* active()'s way when fn is past t's activations (callgraph/callstack.c):
   them grown to hold it. */
uint32_t *grow_active(struct replay *r, struct thread *t, uint32_t fn);

/* The activations of fn in t's stacks (callgrind's fn_active array). */
static inline uint32_t *active(struct replay *r, struct thread *t, uint32_t fn)
{
	if (__builtin_expect(fn < t->active.n, 1))
		return &AT(t->active, uint32_t, fn);
	return grow_active(r, t, fn);
}

/* Room for frames [0, n) in t's call stack: 0, or -1 (r->failed). */
static inline int ensure_calls(struct replay *r, struct thread *t, uint32_t n)
{
	while (t->calls.n < n)
		if (vec_push(&t->calls) < 0) {
			r->failed = 1;
			return -1;
		}
	return 0;
}

/* to += now - before; before = now (events.c add_diff_cost_lz).  1 if
   anything was added.  (Three arrays apart and a difference ORed in: a
   loop gcc vectorizes, at every return.) */
static inline int add_diff(uint64_t *restrict to, uint64_t *restrict before,
			   const uint64_t *restrict now, unsigned n)
{
	uint64_t any = 0;
	for (unsigned k = 0; k < n; k++) {
		uint64_t added = now[k] - before[k];
		to[k] += added;
		before[k] = now[k];
		any |= added;
	}
	return any != 0;
}

/* ---- Names and BBs (callgraph/bb.c) ----------------------------------- */

/* The BB of a trace block, made on its first execution, as Callgrind
   makes it on its first translation. */
uint32_t make_bb(struct replay *r, const struct cgt_block *blk);

static inline uint32_t get_bb(struct replay *r, const struct cgt_block *blk)
{
	if (__builtin_expect(blk->id < r->block_bb.n, 1)) {
		uint32_t known = AT(r->block_bb, uint32_t, blk->id);
		if (known != 0)
			return known - 1;
	}
	return make_bb(r, blk);
}

/* ---- A BB's exits and the events counted by exit ------------------------ */

/* The exit Callgrind says an execution passed (jmps_passed): side exits
   by their order, the end after them, the inverted last branch's two
   swapped. */
static inline uint32_t passed_of(const struct bb *bb, uint32_t exit)
{
	uint32_t cj = bb->cjmp_count;
	uint32_t p = exit == 0 ? cj : exit - 1;
	if (p > cj)
		p = cj;
	if (bb->inverted && p + 1 >= cj)
		p = p == cj ? cj - 1 : cj;
	return p;
}

/* The trace exit (0: the end, k: exit k) of the BB's exit p, Callgrind's
   jmps_passed: passed_of's inverse. */
static inline uint32_t trace_exit_of(const struct bb *bb, uint32_t p)
{
	uint32_t cj = bb->cjmp_count;
	if (bb->inverted && p + 1 >= cj)
		return p == cj ? cj : 0;
	return p == cj ? 0 : p + 1;
}

/* The exit Callgrind takes an execution cut short by a fault to have left
   by (jmps_passed when the fault struck): each side exit stores its number
   before it is tested, so the last one passed, not taken -- exit 0 if none
   was -- or, for the inverted last branch, the end. */
static inline uint32_t cut_passed(const struct bb *bb, const struct cgt_block *cut)
{
	uint32_t exits = cut->n_exits;
	if (exits == 0)
		return 0;
	return bb->inverted && exits == bb->cjmp_count ? bb->cjmp_count : exits - 1;
}

/* The column of the event an op counts once per execution, as Callgrind
   counts it (a read-modify-write is a write; Ir so only with cache
   simulation, else setup_bbcc counts it), or -1: none (or counted where
   the producer's charges are, a guarded access). */
static inline int event_column(const struct replay *r, uint8_t kind)
{
	switch (kind) {
	case CGT_OP_INSN: return r->o->cache_sim ? 0 : -1;
	case CGT_OP_READ: return r->ev_dr;
	case CGT_OP_WRITE:
	case CGT_OP_MODIFY: return r->ev_dw;
	case CGT_OP_COND:
	case CGT_OP_COND_INV: return r->ev_bc;
	case CGT_OP_INDIRECT: return r->ev_bi;
	default: return -1;
	}
}

/* ---- Contexts (callgraph/context.c) ----------------------------------- */

/* The function of context cxt. */
static inline uint32_t cxt_fn(struct replay *r, uint32_t cxt)
{
	return AT(r->context_fns, uint32_t, CXT(r, cxt).first);
}

/* Enters fn's context (0: a signal handler's marker), saving the one
   before in the next frame's entry. */
void push_cxt(struct replay *r, struct thread *t, uint32_t fn);

/* ---- BBCCs and arcs (callgraph/bbcc.c) -------------------------------- */

/* A rec 0 BBCC of bb in context cxt, with room for its recursion levels. */
uint32_t new_rec0_bbcc(struct replay *r, uint32_t bb, uint32_t cxt, int recs);

/* The rec 0 BBCC of bb in context cxt, or NONE: the last one of bb
   first. */
static inline uint32_t lookup_bbcc(struct replay *r, uint32_t bb, uint32_t cxt)
{
	uint32_t last = BB(r, bb).last_bbcc;
	if (last != NONE && BBCC(r, last).cxt == cxt)
		return last;
	for (uint32_t c = BB(r, bb).bbcc_list; c != NONE; c = BBCC(r, c).next_bbcc)
		if (BBCC(r, c).cxt == cxt)
			return c;
	return NONE;
}

/* ---- Call stacks, signal handlers, threads (callgraph/callstack.c) ----- */

/* A call from BBCC from's exit jmp to BBCC to, at stack pointer sp: a
   frame, and unless skip (a skipped function's frame) the arc's count and
   the thread's cost at the call. */
void push_call_stack(struct replay *r, struct thread *t, uint32_t from, uint32_t jmp,
		     uint32_t to, uint64_t sp, int skip, struct cgt_error *e);
/* Returns from the top frame: the arc gets the cost since the call. */
void pop_call_stack(struct replay *r, struct thread *t, struct cgt_error *e);

/* Pops the frames below stack pointer sp, and at sp the first minpops
   of them: how many it popped. */
static inline int unwind_call_stack(struct replay *r, struct thread *t, uint64_t sp,
				    int minpops, struct cgt_error *e)
{
	int count = 0;
	while (t->sp > 0) {
		struct call_entry *c = entry(t, t->sp - 1);
		if (c->sp < sp || (c->sp == sp && minpops > 0)) {
			minpops--;
			count++;
			pop_call_stack(r, t, e);
			continue;
		}
		break;
	}
	return count;
}

/* Valgrind's thread ids are small (VG_N_THREADS, 500 by default); a
   larger one is a damaged trace's. */
#define MAX_TID 65536

/* Thread tid's state, made on first sight: NULL if tid is MAX_TID or
   above, or out of memory. */
struct thread *get_thread(struct replay *r, uint32_t tid);

/* ---- Dumps (callgraph/dump.c) ------------------------------------------ */

/* Builds a dump and hands it to the options' dump callback (trigger: why,
   NULL at the end): 0, or a negative status (e set). */
int dump_profile(struct replay *r, const char *trigger, struct cgt_error *e);

/* ---- Executions (callgraph/exec.c) ------------------------------------- */

/* Replays a chunk, after the general model's LL, if any, has completed
   its charges: 1 to go on, 0 at the trace's end, negative on error (e set;
   the producer's copied). */
int replay_chunk(struct replay *r, struct chunk *ch, struct producer *p, struct cgt_error *e);

/* ---- The replay (callgraph.c) ------------------------------------------ */

/* A replay of o's options, with nothing replayed yet: 0, or -1 if out of
   memory (replay_free it either way). */
int replay_init(struct replay *r, const struct cgt_callgraph_options *o);
void replay_free(struct replay *r);

#endif
