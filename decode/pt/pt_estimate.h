/*
 * Data addresses for a PT trace, estimated from memory samples.
 *
 * Intel PT says which instructions ran, not which addresses they touched;
 * the memory samples say that for one load (or store) in N.  Each sample
 * is placed on one execution of its instruction: the one, in its thread,
 * whose time -- interpolated by instruction count between the trace's
 * timing ticks -- is nearest the sample's.  Then every execution of an
 * access gets an address:
 *  - a sampled execution, the sampled address;
 *  - between two sampled executions of the same access (instruction,
 *    operand, thread) that look like a walk -- the stride of a
 *    neighbouring pair of samples again, or at most a line per execution
 *    -- the address interpolated linearly by execution count, rounded
 *    down to the access size: exact for strided loops;
 *  - between two that look unrelated, the nearer one's address
 *    (interpolating would invent lines the program never touched; so
 *    irregular accesses' misses are undercounted);
 *  - before the first or after the last sample, the nearest sample's;
 *  - an access never sampled touches the line its thread touched last:
 *    a hit that changes nothing in the caches.
 * So with every access sampled (N = 1) the addresses are exact, and the
 * error grows with N and with how irregular the accesses are.
 * Internal to decode/.
 */
#ifndef CGTRACE_PT_ESTIMATE_H
#define CGTRACE_PT_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"
#include "x86_insn.h"

struct pt_sampled {
	uint64_t n, addr;	/* execution number, address */
};

/* Everything known about one instruction in one thread. */
struct pt_insn_state {
	uint64_t ip;
	uint32_t thread;
	uint64_t executions;	/* so far, in this pass */
	const struct x86_insn *insn;
	struct pt_insn_state *next;	/* what followed it last: a guess that
					   saves a lookup */
	struct pt_sampled **samples;	/* per access: sorted by n, or NULL */
	size_t *n_samples, *cap_samples, *cursor;
};

struct pt_estimator {
	struct cgt_map states;	/* by (ip, thread): pt_insn_state */
	uint64_t samples_placed;
};

/* The state of ip (a user-space address) in thread number thread (below
   65536), made on first use (NULL: out of memory). */
struct pt_insn_state *pt_estimator_state(struct pt_estimator *est, uint64_t ip, uint32_t thread,
					 const struct x86_insn *insn);
/* The state of ip in thread, or NULL if it has none yet. */
struct pt_insn_state *pt_estimator_find(const struct pt_estimator *est, uint64_t ip, uint32_t thread);
/* A sample of execution n of access k. */
int pt_estimator_add(struct pt_estimator *est, struct pt_insn_state *st, unsigned k, uint64_t n,
		     uint64_t addr);
/* Execution n of access k's address; fallback if it has no samples.
   Executions must come in increasing n (a second pass). */
uint64_t pt_estimator_address(struct pt_insn_state *st, unsigned k, uint64_t n, uint64_t fallback);
/* Before the second pass: execution counts back to 0. */
void pt_estimator_rewind(struct pt_estimator *est);
void pt_estimator_free(struct pt_estimator *est);

/* The access of execution n of st that a sample of a load (or store)
   refers to: the first of that kind not sampled at n yet; -1 if none. */
int pt_estimator_access_for(const struct pt_insn_state *st, uint64_t n, int store);

#endif
