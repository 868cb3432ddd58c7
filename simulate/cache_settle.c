/*
 * Settling a cache simulated from an unknown state (cache_model.h).
 *
 * Within a set, while unknown ways remain, every line that entered the set
 * did so through an unknown lookup (a hit moves a known line, and a miss
 * that is sure needs a set without unknown ways).  So before the k-th
 * unknown lookup of a set, its known ways are the k lines of the earlier
 * ones, and below them, in their order, lie the lines of the state before
 * that are not among those k, cut to assoc - k ways.  The lookup hits
 * exactly when its line is among them.
 */
#include <string.h>

#include "cache_model.h"

/* Removes tag from list[0 .. *n) if there; returns its position or -1. */
static int64_t take_out(uint64_t *list, uint32_t *n, uint64_t tag)
{
	for (uint32_t i = 0; i < *n; i++) {
		if (list[i] == tag) {
			memmove(list + i, list + i + 1, (*n - i - 1) * sizeof(*list));
			(*n)--;
			return i;
		}
	}
	return -1;
}

int cache_settle(struct cache_model *c, const uint64_t *before, uint8_t *missed)
{
	const uint64_t sets = c->sets_mask + 1;
	const uint32_t assoc = c->assoc;
	uint32_t *first = calloc(sets + 1, sizeof(*first));
	uint32_t *order = malloc((c->n_unknowns + 1) * sizeof(*order));
	uint64_t *rest = malloc(assoc * sizeof(*rest));

	if (first == NULL || order == NULL || rest == NULL) {
		free(first);
		free(order);
		free(rest);
		return -1;
	}
	/* The unknown lookups by set, each set's in order (a counting sort). */
	for (uint32_t k = 0; k < c->n_unknowns; k++)
		first[c->unknowns[k].set + 1]++;
	for (uint64_t s = 0; s < sets; s++)
		first[s + 1] += first[s];
	for (uint32_t k = 0; k < c->n_unknowns; k++)
		order[first[c->unknowns[k].set]++] = k;
	/* first[s] is now where set s + 1's lookups begin. */

	uint32_t at = 0;
	for (uint64_t s = 0; s < sets; s++) {
		uint64_t *set = c->tags + (s << c->way_bits);
		if (set[assoc - 1] != CACHE_UNKNOWN && at == first[s])
			continue;	/* known throughout: nothing to settle */
		uint32_t n_rest = assoc;
		memcpy(rest, before + (s << c->way_bits), assoc * sizeof(*rest));
		for (uint32_t k = 0; at < first[s]; at++, k++) {
			uint32_t u = order[at];
			int64_t pos = take_out(rest, &n_rest, c->unknowns[u].tag);
			missed[u] = pos < 0 || pos >= (int64_t)(assoc - k);
		}
		/* The unknown ways are the rest of the state before, in order. */
		for (uint32_t w = 0, r = 0; w < assoc; w++)
			if (set[w] == CACHE_UNKNOWN)
				set[w] = rest[r++];
	}
	c->n_unknowns = 0;
	free(first);
	free(order);
	free(rest);
	return 0;
}
