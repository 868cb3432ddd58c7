/*
 * Simulation: replays decoded executions through Cachegrind's cache model
 * (I1, D1, LL) and branch predictors, and counts Cachegrind's events per
 * instruction.
 *
 * The counting follows Cachegrind exactly: every executed instruction is
 * an Ir (and, with cache simulation, one I1 fetch of its bytes); READ and
 * MODIFY ops are Dr, WRITE ops Dw; LL is looked up only on an L1 miss, with
 * the same address and size; COND ops are Bc, INDIRECT ops Bi.
 */
#ifndef CGTRACE_SIM_H
#define CGTRACE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"

/* ---- Cache configuration (cache_config.c) ------------------------------ */

/* Cachegrind keeps these in 32-bit ints; so do we, for the same checks. */
struct cgt_cache_config {
	int32_t size, assoc, line;
};

/* Cachegrind's check of a configuration: NULL if it is fine, else its
   message, e.g. "Cache set count is not a power of two." */
const char *cgt_cache_check(const struct cgt_cache_config *c);

enum cgt_cache_parse_result {
	CGT_CACHE_OK = 0,
	CGT_CACHE_BAD_ARGUMENT = -1,	/* not "size,assoc,line" */
	CGT_CACHE_OVERFLOW = -2,	/* a value does not fit an int */
	CGT_CACHE_INVALID = -3,		/* cgt_cache_check's message applies */
};

/* Parses "size,assoc,line" (decimal, as Cachegrind; k/K/M suffixes on
   any field as an extension) and checks it. */
int cgt_cache_parse(const char *text, struct cgt_cache_config *c);

/* "32768 B, 64 B, 8-way associative" or "... direct-mapped". */
void cgt_cache_describe(const struct cgt_cache_config *c, char *buf, size_t n);

struct cgt_cache_defaults {
	struct cgt_cache_config I1, D1, LL;
	unsigned n_warnings;
	char warnings[4][160];	/* Cachegrind's, in its words */
	/* The host's level-2 unified cache when it has more than two levels,
	   else size 0 (its L2 is then its LL).  Adjusted as LL is; the
	   warnings of that are apart, to be printed only when L2 is used. */
	struct cgt_cache_config L2;
	unsigned n_l2_warnings;
	char l2_warnings[2][160];
};

/* The caches Cachegrind's rules give for the recording host: I1 and D1 the
   level-1 caches, LL the unified cache at the highest level (adjusted to a
   power-of-two set count as Cachegrind does), or Cachegrind's defaults
   when the trace describes no such caches.  ll_given: the caller overrides
   LL (then its adjustment and warnings do not apply).  The results are not
   checked: a detected cache can still fail cgt_cache_check. */
void cgt_cache_defaults(const struct cgt_trace_header *h, int ll_given,
			struct cgt_cache_defaults *d);

/* ---- Hierarchies ------------------------------------------------------- */

/* The levels a hierarchy may have, nearest the core first.  Instruction
   fetches go to I1, data references to D1; a miss at one level is looked
   up, with the same address and size, at the next level present. */
enum cgt_level { CGT_LEVEL_I1, CGT_LEVEL_D1, CGT_LEVEL_L2, CGT_LEVEL_LL, CGT_N_LEVELS };

extern const char *const cgt_level_names[CGT_N_LEVELS];	/* "I1" "D1" "L2" "LL" */

/* One configuration: a level whose size is 0 is absent (only L2 may be). */
struct cgt_hierarchy {
	struct cgt_cache_config level[CGT_N_LEVELS];
};

/* ---- Events, as data ----------------------------------------------------- */

/* What an event counts: executions of one kind of access, or its misses
   at one level (mispredicts, for the branch kinds). */
enum cgt_access { CGT_ACCESS_FETCH, CGT_ACCESS_READ, CGT_ACCESS_WRITE, CGT_ACCESS_COND,
		  CGT_ACCESS_INDIRECT,
		  /* not accesses: how well the lines of a level were used
		     (Callgrind's cache use; level CGT_LEVEL_D1 is I1's and D1's
		     lines): 1000 / the uses of each line evicted (AcCost), the
		     bytes of it never touched (SpLoss) */
		  CGT_ACCESS_USE_COST, CGT_ACCESS_USE_LOSS };

#define CGT_MAX_EVENTS 20
#define CGT_EVENT_EXECUTED (-1)	/* level of an event counting executions */
#define CGT_EVENT_MISPREDICT (-2)	/* level of a branch event counting mispredicts */
/* level of an event counting the LL misses whose fill evicted a dirty line
   (write-back, Callgrind's ILdmr DLdmr DLdmw) */
#define CGT_EVENT_DIRTY_MISS (-3)

struct cgt_event_def {
	char name[8];		/* "Ir", "D2mw", ... */
	uint8_t access;		/* enum cgt_access */
	int8_t level;		/* enum cgt_level, or CGT_EVENT_EXECUTED / _MISPREDICT */
};

/* The events of a run, in the order of its files' "events:" line. */
struct cgt_event_set {
	unsigned n;
	struct cgt_event_def ev[CGT_MAX_EVENTS];
};

/* Cachegrind's events for these settings (Ir I1mr ILmr Dr D1mr DLmr Dw
   D1mw DLmw, then Bc Bcm Bi Bim), with I2mr, D2mr and D2mw after the
   level-1 ones when has_L2; with write_back, Callgrind's ILdmr DLdmr
   DLdmw appended; with cache_use, Callgrind's AcCost1 SpLoss1 AcCost2
   SpLoss2 last. */
void cgt_event_set_init(struct cgt_event_set *es, int cache_sim, int has_L2, int branch_sim,
			int write_back, int cache_use);

/* Callgrind's (sim.c CLG_(init_eventsets), in its dump order): Ir, then
   with cache simulation Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw, and with
   write_back ILdmr DLdmr DLdmw, then with branch simulation Bc Bcm Bi
   Bim, then with cache_use AcCost1 SpLoss1 AcCost2 SpLoss2 (even without
   cache simulation, as in Callgrind). */
void cgt_event_set_init_callgrind(struct cgt_event_set *es, int cache_sim, int branch_sim,
				  int write_back, int cache_use);

/* The index of the event that counts this (level: enum cgt_level,
   CGT_EVENT_EXECUTED or CGT_EVENT_MISPREDICT), or -1 if the set has none. */
int cgt_event_set_find(const struct cgt_event_set *es, enum cgt_access access, int level);

/* ---- What Callgrind knows of code (given by the caller) ---------------- */

/* The section kinds Valgrind tells apart (pub_tool_debuginfo.h VgSectKind),
   in its order. */
enum cgt_sect_kind {
	CGT_SECT_UNKNOWN,
	CGT_SECT_TEXT,
	CGT_SECT_DATA,
	CGT_SECT_BSS,
	CGT_SECT_GOT,
	CGT_SECT_PLT,
	CGT_SECT_GOTPLT,
	CGT_SECT_OPD,
};

/* What Valgrind's debug information says of a code address, as Callgrind
   asks it (bb.c new_bb / obj_of_address, fn.c get_fn_node): the strings
   stay valid as long as whoever answers (report/'s symbolizer) is open. */
struct cgt_code_info {
	/* The module whose .text section holds the address (its path as
	   mapped); NULL: none -- code in .plt, .init, a JIT, ... (Callgrind's
	   object "???"). */
	const char *obj;
	uint64_t text_bias;	/* obj's: run-time address - ELF address; 0 without obj */
	const char *fn;		/* the function containing it, named as for Cachegrind;
				   NULL: none */
	const char *file;	/* "dir/file" of its line; NULL: none */
	int32_t line;		/* 0: none */
	uint8_t sect_kind;	/* enum cgt_sect_kind, over every module mapped then */
	uint8_t is_entry;	/* a function symbol starts exactly there */
};

struct cgt_code_lookup {
	/* Fills ci for addr, in the module map maps[0 .. n_maps) of a block
	   defined at map_epoch. */
	void (*find)(void *arg, const struct cgt_mapping *maps, size_t n_maps, uint64_t addr,
		     uint32_t map_epoch, struct cgt_code_info *ci);
	void *arg;
};

/* ---- Cache models ------------------------------------------------------ */

/* What the caches do beyond their geometry; zero is Cachegrind's model.
   Callgrind's options (callgrind/sim.c) ask for two things: L1s
   write-through and LL write-back (--simulate-wb=yes: a miss whose fill
   evicts a dirty line is counted apart, ILdmr DLdmr DLdmw), and its
   stream prefetcher into LL (--simulate-hwpref=yes, the same as
   --LL-prefetch=callgrind).  Each level's replacement policy and
   prefetcher are indices of cgt_model_find's names. */
struct cgt_cache_model {
	int write_back;
	/* Callgrind's --cacheuse=yes: how well each line was used, charged to
	   the instruction that loaded it when it is evicted (AcCost1 SpLoss1
	   AcCost2 SpLoss2).  As in Callgrind: I1, D1 and LL keep its tags
	   (level.h), writes are simulated as reads, LL is looked up only for
	   the lines that missed L1; not with write_back or a prefetcher. */
	int cache_use;
	uint8_t replacement[CGT_N_LEVELS];	/* 0: "lru" */
	uint8_t prefetch[CGT_N_LEVELS];		/* 0: "none" */
};

enum cgt_model_part { CGT_MODEL_REPLACEMENT, CGT_MODEL_PREFETCH };

/* The index of the replacement policy ("lru") or prefetcher ("none",
   "callgrind") called name, or -1 if there is none. */
int cgt_model_find(enum cgt_model_part part, const char *name);

/* The names cgt_model_find knows, as a message lists them ("none or
   callgrind"): buf. */
const char *cgt_model_choices(enum cgt_model_part part, char *buf, size_t n);

/* Whether m has a prefetcher at any level. */
int cgt_cache_model_prefetches(const struct cgt_cache_model *m);

/* NULL if the simulator (either tool) does model m with hierarchy h
   exactly, else why not, naming the option: write-back, prefetching,
   cache use and replacement policies other than LRU for I1, D1 and LL
   only (not with --L2), the prefetcher LL's, cache use's ways within
   Callgrind's limit.  The message may be written in buf (n bytes). */
const char *cgt_cache_model_check(const struct cgt_cache_model *m, const struct cgt_hierarchy *h,
				  char *buf, size_t n);

/* ---- Simulator (sim.c, hier.c) ----------------------------------------- */

struct cgt_sim_options {
	int cache_sim;
	int branch_sim;
	/* The configurations to simulate, in one replay: each checked
	   (cgt_cache_check, cgt_hierarchy_check), all with one smallest line
	   size.  Without cache simulation they only describe the caches. */
	const struct cgt_hierarchy *configs;
	unsigned n_configs;
	/* The trace, read once more per thread when there are several
	   configurations or an L2 (the first read counts executions and
	   branches). */
	const char *trace_path;
	/* Cachegrind 3.22's --instr-at-start: simulate from the start, until
	   a CACHEGRIND_STOP_INSTRUMENTATION request; without, from a
	   CACHEGRIND_START_INSTRUMENTATION on.  While off, nothing is
	   simulated or counted (the caches keep their state). */
	int instr_at_start;
	struct cgt_cache_model model;	/* every configuration's */
};

struct cgt_sim;

/* max_access_size: the trace's largest guest register (header). */
int cgt_sim_open(struct cgt_sim **s, const struct cgt_sim_options *o, uint32_t max_access_size,
		 struct cgt_error *e);

/* Now and then, from some thread: how far the simulation got. */
struct cgt_sim_progress {
	void (*update)(void *arg, uint64_t bytes_done, uint64_t bytes_total, uint64_t insns);
	void *arg;
};

/* Simulates every execution d decodes, on `threads` threads (the caller's
   among them); the counts are the same for any number.  progress: NULL,
   or whom to tell. */
int cgt_sim_trace(struct cgt_sim *s, struct cgt_decoder *d, unsigned threads,
		  const struct cgt_sim_progress *progress, struct cgt_error *e);

void cgt_sim_close(struct cgt_sim *s);

/* ---- Profiles -------------------------------------------------------- */

/* What one configuration of a simulation counted: a row of costs for each
   instruction of each block of the trace's block table, block by block in
   id order (zeros for instructions that never ran, which Cachegrind lists
   too), one cost per event of the set. */
struct cgt_profile {
	struct cgt_event_set events;
	int cache_sim;
	struct cgt_hierarchy caches;	/* the configuration, if one was given */
	size_t n_insns;
	uint64_t *costs;		/* [n_insns][events.n] */
	/* NULL: every row is listed; else per row 0 for an instruction of a
	   block that ran only while instrumentation was off, which Cachegrind
	   never instrumented and does not list. */
	uint8_t *listed;
	uint64_t totals[CGT_MAX_EVENTS];
};

/* The profile of configuration `config` (an index into the options'
   configurations) over block table t. */
int cgt_sim_profile(const struct cgt_sim *s, unsigned config, const struct cgt_block_table *t,
		    struct cgt_profile *p, struct cgt_error *e);
void cgt_profile_free(struct cgt_profile *p);

/* ---- Configuration lists and sweeps (cache_list.c, hierarchy.c) ---- */

#define CGT_MAX_CONFIGS 1024
enum { CGT_CACHE_BAD_RANGE = -4 };	/* with cgt_cache_parse_result's values */

/* One level's configurations, in the order given. */
struct cgt_cache_list {
	struct cgt_cache_config *v;
	unsigned n, cap;
};

/* Parses one --I1/--D1/--L2/--LL value and appends its configurations to l.
   A value without ".." is exactly cgt_cache_parse's: on failure returns its
   result (CGT_CACHE_BAD_ARGUMENT / OVERFLOW / INVALID, *c_out set to the
   parsed values so the caller can print Cachegrind's messages) and leaves e
   alone.  A value whose size and/or assoc field is a range "lo..hi" (each
   end a number with optional k/K/M suffix) stands for every power of two
   from lo to hi inclusive; sizes outer, assocs inner, ascending.  The line
   field is never a range.  Errors of a range value, and more than
   CGT_MAX_CONFIGS configurations in l, return CGT_CACHE_BAD_RANGE with e's
   message naming the option and the value; l is then unchanged.  Returns
   0 on success (-cgt_err_nomem if memory ran out).  option is the option's
   name without dashes ("D1"). */
int cgt_cache_list_add(struct cgt_cache_list *l, const char *option, const char *text,
		       struct cgt_cache_config *c_out, struct cgt_error *e);
void cgt_cache_list_free(struct cgt_cache_list *l);

/* NULL if h is a hierarchy cgtrace simulates, else why not (written to
   buf).  Every level present must pass cgt_cache_check; only hierarchies
   with an L2 get checks beyond it (without L2, Cachegrind accepts any
   sizes and so do we): L2 at least as large as I1 and as D1, LL at least
   as large as L2, and line sizes not shrinking going down. */
const char *cgt_hierarchy_check(const struct cgt_hierarchy *h, char *buf, size_t n);

/* "NAME-size-assoc-line" of each level in `given` (a bit per enum
   cgt_level) joined by ".", in level order, e.g.
   "D1-32768-8-64.LL-8388608-16-64"; "default" if given is 0. */
void cgt_hierarchy_label(const struct cgt_hierarchy *h, unsigned given, char *buf, size_t n);

struct cgt_sweep_config {
	struct cgt_hierarchy h;
	char label[160];
};

/* The cross product of the lists: lists[k].n == 0 means level k was not
   given and defaults->level[k] is used (L2 absent when defaults' L2 size
   is 0).  Order: I1 outermost, then D1, L2, LL innermost, each list in its
   order; labels by cgt_hierarchy_label of the given levels.  Returns the
   number of configurations (*out malloc'd) or a negative status with e's
   message: more than CGT_MAX_CONFIGS, two configurations with one label,
   or a configuration failing cgt_hierarchy_check. */
int cgt_sweep_expand(const struct cgt_cache_list lists[CGT_N_LEVELS],
		     const struct cgt_hierarchy *defaults, struct cgt_sweep_config **out,
		     struct cgt_error *e);

/* ---- Call graphs: Callgrind's replay (callgraph*.c) ------------------- */

/*
 * The trace replayed as Callgrind 3.19 builds its profile
 * (callgrind/bbcc.c setup_bbcc, callstack.c, context.c, threads.c,
 * dump.c; ../shared/docs/callgrind-callgraph.md): calls and returns from
 * the blocks' jump kinds and the stack pointer, contexts (the function
 * entered by the last call pays), recursion levels, PLT skipping, threads,
 * signal handlers, client requests.  It runs in stream order: the trace
 * decoded and its caches and branches simulated a little ahead, on a
 * thread of their own with options.threads of 2 or more, the call graph
 * on the caller's.  Each dump -- a client request's, a function's, the
 * end's -- hands a profile to the caller.
 */

enum cgt_cg_arc_kind { CGT_CG_CALL, CGT_CG_JUMP, CGT_CG_COND_JUMP };

/* An object, file or function of the profile.  Objects and files are
   numbered apart from functions, as Callgrind numbers them (from 1, in
   the order first seen); parent: a file's object, a function's file. */
struct cgt_cg_name {
	const char *name;
	uint32_t parent;
};

/* A call or jump from one cost centre; inclusive cost for calls. */
struct cgt_cg_arc {
	uint32_t insn;		/* the instruction of the caller's block it leaves from */
	uint8_t kind;		/* enum cgt_cg_arc_kind */
	uint8_t at_end;		/* leaves by the block's last exit (written after its costs) */
	uint32_t to_context, to_rec;	/* the callee's context and recursion index */
	uint32_t to_obj;	/* the object of the code it goes to */
	uint64_t to_addr;	/* that code's first instruction (the target position) */
	uint64_t to_offset;	/* to_addr in its object (Callgrind's instr positions) */
	uint32_t to_map_epoch;
	uint64_t count;		/* calls, or jumps taken */
	uint64_t executed;	/* conditional jumps: times the jump was reached */
	const uint64_t *cost;	/* calls: [events.n] inclusive; jumps: NULL */
};

/* Callgrind's BBCC: one block's costs in one context and recursion level. */
struct cgt_cg_centre {
	uint32_t context, rec;	/* rec 0: fn, 1: fn'2, ... */
	uint64_t addr;		/* the block's */
	uint64_t offset;	/* addr in its object: instr positions are offsets */
	uint32_t obj;		/* its object */
	uint32_t map_epoch;
	uint32_t n_insns;	/* 0: a call Callgrind never saw (a return past the first frame) */
	const struct cgt_insn *insns;
	const uint64_t *cost;	/* [n_insns][events.n], self */
	const uint64_t *skipped;	/* NULL, or [events.n]: skipped (PLT) code it called,
					   charged at its last instruction */
	uint32_t first_arc, n_arcs;	/* arcs[first_arc ..], in Callgrind's order */
};

/* A context: functions[first .. first + n), the function itself first,
   then its callers (--separate-callers). */
struct cgt_cg_context {
	uint32_t first, n;
};

struct cgt_cg_profile {
	struct cgt_event_set events;
	const struct cgt_cg_name *objs, *files, *fns;	/* [0] unused */
	/* by object: where it is mapped now (its text bias; 0 for "???"):
	   a position is looked up at offset + this, as Callgrind does */
	const uint64_t *obj_bias;
	uint32_t n_objs, n_files, n_fns;
	const struct cgt_cg_context *contexts;
	const uint32_t *context_fns;
	const struct cgt_cg_centre *centres;	/* grouped by function, in dump order */
	size_t n_centres;
	const struct cgt_cg_arc *arcs;
	uint64_t summary[CGT_MAX_EVENTS];
	unsigned part;		/* 1, 2, ... */
	int final;		/* the dump at the end ("Program termination") */
	const char *trigger;	/* "Client Request: ...", NULL for the end's */
	uint64_t blocks_from, blocks_to;	/* "Timerange: Basic block a - b" */
	/* The module map's epoch at the dump: Callgrind looks positions up
	   when it dumps, so code unmapped by then has no lines.  The map
	   itself (it may know later epochs too). */
	uint32_t map_epoch;
	const struct cgt_mapping *mappings;
	size_t n_mappings;
};

/* Callgrind's options, with its defaults given by cgt_callgraph_defaults. */
struct cgt_callgraph_options {
	int cache_sim, branch_sim;	/* 0, 0 */
	struct cgt_hierarchy caches;	/* I1, D1, LL (no L2), with cache_sim */
	struct cgt_cache_model model;	/* Cachegrind's, with cache_sim */
	/* With model.cache_use: its charges also to the inclusive cost of the
	   calls active when each line was loaded, and to the summary (the
	   back-dating tree); 0: self costs only, as Callgrind 3.19 */
	int cache_use_inclusive;	/* 1 */
	int separate_recs;	/* 2 */
	int separate_callers;	/* 0 */
	int skip_plt;		/* 1 */
	int skip_direct_rec;	/* 0 (its help says yes; its code says no) */
	int collect_jumps;	/* 0 */
	int collect_atstart;	/* 1 */
	int instr_atstart;	/* 1 */
	/* 1: everything on the caller's thread; more: the trace decoded and
	   its caches and branches simulated on a thread of their own, a
	   little ahead of the call graph (with cache use, I1 and LL are the
	   call graph's; the profile is the same) */
	unsigned threads;	/* 1 */
	/* Function name patterns (* and ? wildcards), each list NULL-ended or NULL. */
	const char *const *toggle_collect, *const *dump_before, *const *dump_after,
		*const *zero_before, *const *fn_skip;
	/* Asked, and dump called, on the caller's thread (the decoding
	   thread, if any, touches neither). */
	struct cgt_code_lookup code;
	/* Each dump, in order: the profile is valid during the call only.
	   Returns 0, or a negative status with e set (the run stops). */
	int (*dump)(void *arg, const struct cgt_cg_profile *p, struct cgt_error *e);
	void *dump_arg;
	/* If not NULL, what the run took, filled when it ends */
	struct cgt_callgraph_stats {
		/* inclusive cache use's back-dating tree: activations given a
		   node, and the most alive at once */
		uint64_t use_nodes, use_nodes_peak;
	} *stats;
};

void cgt_callgraph_defaults(struct cgt_callgraph_options *o);

/* Replays every execution d decodes, dumping as Callgrind would.  The
   trace must carry the call facts (format 3, the valgrind backend,
   Callgrind's translation): checked first, with a message saying how to
   record one. */
int cgt_callgraph_run(const struct cgt_callgraph_options *o, struct cgt_decoder *d,
		      struct cgt_error *e);

#endif
