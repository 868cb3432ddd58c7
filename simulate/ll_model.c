/*
 * The last-level cache's set-up, and its way out to cache_model.h
 * (ll_model.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ll_model.h"

int ll_model_init(struct ll_model *c, uint32_t size, uint32_t assoc, uint32_t line)
{
	uint64_t sets = (uint64_t)size / line / assoc;

	memset(c, 0, sizeof(*c));
	c->sets_mask = sets - 1;
	c->set_bits = (uint32_t)__builtin_ctzll(sets);
	c->line_bits = (uint32_t)__builtin_ctz(line);
	c->assoc = assoc;
	/* The wide model is made now, so that changing to it cannot fail
	   (its memory is not touched until then). */
	if (cache_model_init(&c->model, size, assoc, line) < 0)
		return -1;
	if (assoc > LL_LANES) {
		c->wide = 1;
		return 0;
	}
	c->tags = aligned_alloc(64, sets * LL_LANES * sizeof(*c->tags));
	/* aligned_alloc wants a multiple of the alignment: 1 or 2 sets of
	   ages are less than one */
	c->ages = aligned_alloc(64, (sets * LL_LANES + 63) & ~(uint64_t)63);
	if (c->tags == NULL || c->ages == NULL)
		return -1;
	for (uint64_t s = 0; s < sets; s++)
		for (uint32_t k = 0; k < LL_LANES; k++) {
			/* block 0, in MRU order; unused lanes too old to age */
			c->tags[s * LL_LANES + k] = s == 0 && k < assoc ? 0 : LL_NO_TAG;
			c->ages[s * LL_LANES + k] = k < assoc ? (uint8_t)k : INT8_MAX;
		}
	return 0;
}

void ll_model_free(struct ll_model *c)
{
	free(c->tags);
	free(c->ages);
	c->tags = NULL;
	c->ages = NULL;
	cache_model_free(&c->model);
}

/* The lanes' state into c->model: each set's blocks by age. */
static void widen(struct ll_model *c)
{
	struct cache_model *m = &c->model;
	uint64_t sets = c->sets_mask + 1;

	for (uint64_t s = 0; s < sets; s++)
		for (uint32_t k = 0; k < LL_LANES; k++) {
			uint8_t age = c->ages[s * LL_LANES + k];
			uint32_t tag = c->tags[s * LL_LANES + k];
			if (age < c->assoc)
				m->tags[(s << m->way_bits) + age] =
					tag == LL_NO_TAG ? 0 : (uint64_t)tag << c->set_bits | s;
		}
	free(c->tags);
	free(c->ages);
	c->tags = NULL;
	c->ages = NULL;
	c->wide = 1;
}

int ll_ref_is_miss_wide(struct ll_model *c, uint64_t addr, uint32_t size)
{
	if (!c->wide)
		widen(c);
	return cache_ref_is_miss(&c->model, addr, size);
}
