/*
 * The data-address estimator (pt_estimate.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pt_estimate.h"
#include "trace.h"

/* User-space addresses have 47 bits; thread numbers fit the rest. */
static uint64_t key_of(uint64_t ip, uint32_t thread)
{
	return ip | (uint64_t)thread << 48;
}

struct pt_insn_state *pt_estimator_find(const struct pt_estimator *est, uint64_t ip, uint32_t thread)
{
	return cgt_map_get(&est->states, key_of(ip, thread));
}

struct pt_insn_state *pt_estimator_state(struct pt_estimator *est, uint64_t ip, uint32_t thread,
					 const struct x86_insn *insn)
{
	struct pt_insn_state *st = pt_estimator_find(est, ip, thread);
	if (st != NULL)
		return st;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NULL;
	st->ip = ip;
	st->thread = thread;
	st->insn = insn;
	if (cgt_map_put(&est->states, key_of(ip, thread), st) < 0) {
		free(st);
		return NULL;
	}
	return st;
}

int pt_estimator_add(struct pt_estimator *est, struct pt_insn_state *st, unsigned k, uint64_t n,
		     uint64_t addr)
{
	unsigned na = st->insn->n_accesses;
	if (k >= na)
		return 0;
	if (st->samples == NULL) {
		st->samples = calloc(na, sizeof(*st->samples));
		st->n_samples = calloc(na, sizeof(size_t));
		st->cap_samples = calloc(na, sizeof(size_t));
		st->cursor = calloc(na, sizeof(size_t));
		if (!st->samples || !st->n_samples || !st->cap_samples || !st->cursor)
			return -1;
	}
	if (st->n_samples[k] == st->cap_samples[k] &&
	    cgt_array_grow(&st->samples[k], &st->cap_samples[k], st->n_samples[k], 1,
			   sizeof(*st->samples[k])) < 0)
		return -1;
	/* Samples arrive in time order, so executions in increasing order;
	   two on one execution (a load and a store sample): keep the first. */
	size_t c = st->n_samples[k];
	if (c > 0 && st->samples[k][c - 1].n >= n)
		return 0;
	st->samples[k][c] = (struct pt_sampled){ n, addr };
	st->n_samples[k]++;
	est->samples_placed++;
	return 0;
}

/* Samples this close, per execution, are taken for a sequential walk
   (at most a line per execution) and interpolated even without a whole
   stride: variable-sized records, string copies. */
#define DENSE 64

/* The address step per execution from sample i to i + 1, if whole. */
static int stride(const struct pt_sampled *s, size_t i, int64_t *out)
{
	int64_t span = (int64_t)(s[i + 1].addr - s[i].addr);
	int64_t gap = (int64_t)(s[i + 1].n - s[i].n);
	if (gap <= 0 || span % gap != 0)
		return 0;
	*out = span / gap;
	return 1;
}

/* Whether the accesses from sample c to c + 1 look strided: the same
   whole stride as the pair before or after. */
static int regular(const struct pt_sampled *s, size_t count, size_t c)
{
	int64_t mine, other;
	if (!stride(s, c, &mine))
		return 0;
	return (c > 0 && stride(s, c - 1, &other) && other == mine) ||
	       (c + 2 < count && stride(s, c + 1, &other) && other == mine);
}

uint64_t pt_estimator_address(struct pt_insn_state *st, unsigned k, uint64_t n, uint64_t fallback)
{
	if (st->samples == NULL || k >= st->insn->n_accesses || st->n_samples[k] == 0)
		return fallback;
	const struct pt_sampled *s = st->samples[k];
	size_t count = st->n_samples[k], c = st->cursor[k];
	while (c + 1 < count && s[c + 1].n <= n)
		c++;
	st->cursor[k] = c;
	if (n <= s[c].n || c + 1 == count)
		return s[c].addr;
	/* Between samples c and c + 1: a strided or dense walk is
	   interpolated; anything else repeats the nearer sample's address,
	   rather than invent lines between unrelated places. */
	uint64_t gap = s[c + 1].n - s[c].n;
	uint64_t dist = s[c + 1].addr > s[c].addr ? s[c + 1].addr - s[c].addr : s[c].addr - s[c + 1].addr;
	if (!regular(s, count, c) && dist / gap > DENSE)
		return n - s[c].n <= s[c + 1].n - n ? s[c].addr : s[c + 1].addr;
	__int128 span = (__int128)s[c + 1].addr - (__int128)s[c].addr;
	__int128 step = span * (__int128)(n - s[c].n) / (__int128)(s[c + 1].n - s[c].n);
	uint64_t addr = s[c].addr + (uint64_t)step;
	uint32_t size = st->insn->accesses[k].size;
	if (size != 0 && (size & (size - 1)) == 0 && (s[c].addr & (size - 1)) == 0)
		addr &= ~(uint64_t)(size - 1);
	return addr;
}

void pt_estimator_rewind(struct pt_estimator *est)
{
	for (size_t i = 0; i < est->states.cap; i++) {
		struct pt_insn_state *st = est->states.slots[i].value;
		if (st == NULL)
			continue;
		st->executions = 0;
		if (st->cursor != NULL)
			memset(st->cursor, 0, st->insn->n_accesses * sizeof(size_t));
	}
}

void pt_estimator_free(struct pt_estimator *est)
{
	for (size_t i = 0; i < est->states.cap; i++) {
		struct pt_insn_state *st = est->states.slots[i].value;
		if (st == NULL)
			continue;
		if (st->samples != NULL)
			for (unsigned k = 0; k < st->insn->n_accesses; k++)
				free(st->samples[k]);
		free(st->samples);
		free(st->n_samples);
		free(st->cap_samples);
		free(st->cursor);
		free(st);
	}
	cgt_map_free(&est->states);
	memset(est, 0, sizeof(*est));
}

static int sampled_at(const struct pt_insn_state *st, unsigned k, uint64_t n)
{
	return st->samples != NULL && st->n_samples[k] > 0 &&
	       st->samples[k][st->n_samples[k] - 1].n == n;
}

int pt_estimator_access_for(const struct pt_insn_state *st, uint64_t n, int store)
{
	const struct x86_insn *insn = st->insn;
	/* Loads sample reads and modifies, stores writes; a store sample of a
	   modify is the modify's. */
	for (int round = 0; round < 2; round++) {
		for (unsigned k = 0; k < insn->n_accesses; k++) {
			unsigned kind = insn->accesses[k].kind;
			int fits = round == 0 ? (store ? kind == CGT_OP_WRITE
						       : kind == CGT_OP_READ || kind == CGT_OP_MODIFY)
					      : store && kind == CGT_OP_MODIFY;
			if (fits && !sampled_at(st, k, n))
				return (int)k;
		}
	}
	return -1;
}
