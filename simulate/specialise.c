/*
 * The one place that decides which fast paths a run takes (specialise.h).
 */
#include "specialise.h"
#include "level.h"

unsigned model_properties(const struct cgt_cache_model *m)
{
	unsigned lru = MODEL_LRU;
	for (int k = 0; k < CGT_N_LEVELS; k++)
		if (m->replacement[k] != LEVEL_LRU)
			lru = 0;
	return lru | (m->write_back ? 0 : MODEL_NO_WRITE_BACK) |
	       (cgt_cache_model_prefetches(m) ? 0 : MODEL_NO_PREFETCH) |
	       (m->cache_use ? 0 : MODEL_NO_USE);
}

void specialisations_choose(const struct cgt_cache_model *m, struct specialisations *s)
{
	const unsigned p = model_properties(m),
		       all = MODEL_LRU | MODEL_NO_WRITE_BACK | MODEL_NO_PREFETCH | MODEL_NO_USE;
	s->plain_ll = p == all;
	s->plain_l1s = m->replacement[CGT_LEVEL_I1] == LEVEL_LRU &&
		       m->replacement[CGT_LEVEL_D1] == LEVEL_LRU && (p & MODEL_NO_USE);
	s->segment_engine = p == all;
	s->shared_stacks = p == all;
	s->forest = p == all;
	s->elide_mru_reads = (p & MODEL_NO_USE) != 0;
	s->elide_mru_writes = (p & (MODEL_NO_WRITE_BACK | MODEL_NO_USE)) ==
			      (MODEL_NO_WRITE_BACK | MODEL_NO_USE);
	s->elide_mru_fetches = (p & MODEL_NO_USE) != 0;
}
