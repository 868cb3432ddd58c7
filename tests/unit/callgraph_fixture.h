/*
 * What the call-graph replay's unit tests (test_callgraph_*.c) share: a
 * made-up program, whose functions are address ranges that a code lookup
 * of its own names, blocks of it made by hand, and a replay
 * (callgraph_replay.h) of their executions, handed over in a chunk as the
 * producer hands them.
 */
#ifndef CGTRACE_CALLGRAPH_FIXTURE_H
#define CGTRACE_CALLGRAPH_FIXTURE_H

#include <string.h>

#include "callgraph_replay.h"
#include "check.h"

/* A function of the made-up program: its code is [lo, hi), in .text. */
struct fake_fn {
	const char *name, *file, *obj;
	uint64_t lo, hi;
};

/* The code lookup over arg, an array of struct fake_fn ended by one
   without a name; code in none of them has no object or name ("???"). */
static inline void fake_find(void *arg, const struct cgt_mapping *maps, size_t n_maps, uint64_t addr,
			     uint32_t map_epoch, struct cgt_code_info *ci)
{
	(void)maps;
	(void)n_maps;
	(void)map_epoch;
	for (const struct fake_fn *f = arg; f->name != NULL; f++)
		if (addr >= f->lo && addr < f->hi) {
			ci->obj = f->obj;
			ci->fn = f->name;
			ci->file = f->file;
			ci->sect_kind = CGT_SECT_TEXT;
			ci->is_entry = addr == f->lo;
			return;
		}
}

/* Callgrind's defaults, code looked up in fns. */
static inline void fake_options(struct cgt_callgraph_options *o, const struct fake_fn *fns)
{
	cgt_callgraph_defaults(o);
	o->code.find = fake_find;
	o->code.arg = (void *)fns;
}

/* A block of n_insns instructions of 4 bytes from addr, without side
   exits, which ends with a jump of kind (enum cgt_jump_kind) to where the
   code does not say. */
struct fake_block {
	struct cgt_block blk;
	struct cgt_insn insns[8];
	struct cgt_jump end;
};

static inline void fake_block(struct fake_block *b, uint32_t id, uint64_t addr, uint32_t n_insns,
			      uint8_t kind)
{
	memset(b, 0, sizeof(*b));
	for (uint32_t k = 0; k < n_insns; k++)
		b->insns[k] = (struct cgt_insn){ addr + 4 * k, 4 };
	b->end.kind = kind;
	b->blk.id = id;
	b->blk.n_insns = n_insns;
	b->blk.insns = b->insns;
	b->blk.jumps = &b->end;
}

/* An execution of a block, with the stack pointer at its entry. */
struct fake_exec {
	const struct fake_block *block;
	uint64_t sp;
};

/* Replays execs[0 .. n) on thread 1 as a chunk: replay_chunk's status
   (1: more may follow). */
static inline int replay_execs(struct replay *r, const struct fake_exec *execs, size_t n)
{
	/* the replay reads of the producer only whether LL is the general
	   model's (it is not) and its error */
	static struct producer producer;
	struct chunk ch = { 0 };
	callgraph_chunk_init(&ch);
	for (size_t k = 0; k < n; k++) {
		long i = vec_push(&ch.items);
		CHECK(i >= 0);
		if (i < 0)
			break;
		struct handed *h = &AT(ch.items, struct handed, i);
		h->kind = HANDED_EXEC;
		h->block = &execs[k].block->blk;
		h->sp = execs[k].sp;
		h->tid = 1;
	}
	ch.status = 1;
	struct cgt_error e = { 0 };
	int rc = replay_chunk(r, &ch, &producer, &e);
	callgraph_chunk_free(&ch);
	return rc;
}

#endif
