/*
 * Levels of the general model (level.h): the table of replacement
 * policies and prefetchers, and what every level does alike.  Adding a
 * policy is a file like level_lru.c, a row in each table here and a
 * name in enum level_replacement (level.h).
 */
#include <stdlib.h>
#include <string.h>

#include "level_loop.h"
#include "sim.h"

extern const struct level_policy level_policy_lru, level_policy_fifo, level_policy_plru;

static const struct level_policy *const policies[LEVEL_N_REPLACEMENTS] = {
	[LEVEL_LRU] = &level_policy_lru,
	[LEVEL_FIFO] = &level_policy_fifo,
	[LEVEL_PLRU] = &level_policy_plru,
};

const char *const level_replacement_names[LEVEL_N_REPLACEMENTS] = {
	[LEVEL_LRU] = "lru",
	[LEVEL_FIFO] = "fifo",
	[LEVEL_PLRU] = "plru",
};
const char *const level_prefetcher_names[LEVEL_N_PREFETCHERS] = {
	[LEVEL_PREFETCH_NONE] = "none",
	[LEVEL_PREFETCH_CALLGRIND] = "callgrind",
};

const struct level_policy *level_policy_of(int replacement)
{
	return policies[replacement];
}

static int power_of_two(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

struct level_config level_config_of(const struct cgt_cache_config *cc,
				    const struct cgt_cache_model *m, int level)
{
	return (struct level_config){ .size = (uint32_t)cc->size,
				      .assoc = (uint32_t)cc->assoc,
				      .line = (uint32_t)cc->line,
				      .replacement = m->replacement[level],
				      .prefetcher = m->prefetch[level],
				      /* the L1s write-through, as Callgrind's: its
					 write-back is LL's */
				      .write_back = (uint8_t)(m->write_back && level == CGT_LEVEL_LL),
				      .callgrind_tags = (uint8_t)(m->write_back && level == CGT_LEVEL_LL) };
}

const char *level_check(const struct level_config *c)
{
	if (c->replacement >= LEVEL_N_REPLACEMENTS || c->prefetcher >= LEVEL_N_PREFETCHERS)
		return "no such replacement policy or prefetcher";
	if ((c->track_use || c->report != LEVEL_REPORT_NONE) && c->prefetcher != LEVEL_PREFETCH_NONE)
		return "a prefetcher where lines' use is kept";
	if (c->assoc == 0 || c->assoc > policies[c->replacement]->max_assoc)
		return "more ways than its replacement policy can order";
	if (policies[c->replacement]->power_of_two_ways && !power_of_two(c->assoc))
		return "a number of ways that is not a power of two, which its replacement policy needs";
	if (c->callgrind_tags && c->prefetcher == LEVEL_PREFETCH_CALLGRIND &&
	    !policies[c->replacement]->callgrind_prefetch_tags)
		return "Callgrind's prefetcher with its write-back tags goes with lru or fifo only";
	if (!power_of_two(c->line) || c->line < 16)
		return "a line size that is not a power of two of 16 bytes or more";
	if ((uint64_t)c->line * c->assoc > c->size || c->size % ((uint64_t)c->line * c->assoc) != 0 ||
	    !power_of_two(c->size / c->line / c->assoc))
		return "a set count that is not a power of two";
	return NULL;
}

int level_init(struct level *L, const struct level_config *c)
{
	memset(L, 0, sizeof(*L));
	if (level_check(c) != NULL)
		return -1;
	uint64_t sets = (uint64_t)c->size / c->line / c->assoc;
	L->config = *c;
	L->assoc = c->assoc;
	L->sets_mask = sets - 1;
	L->line_bits = (uint32_t)__builtin_ctz(c->line);
	/* sets x line fits 31 bits: the shift is under 32 */
	uint32_t tag_shift = L->line_bits + (uint32_t)__builtin_ctzll(sets);
	L->callgrind_tag_mask = (uint32_t)~((1u << tag_shift) - 1);
	const struct level_policy *policy = policies[c->replacement];
	L->take = c->track_use || c->report != LEVEL_REPORT_NONE ? policy->take_use
								 : policy->take[c->prefetcher];
	L->again_unchanged = policy->hooks->touch_again_unchanged;
	L->set_bytes = (8 + (size_t)c->assoc * (sizeof(uint64_t) + sizeof(uint16_t)) + 63) & ~(size_t)63;
	/* (an L1's sets, a few KiB to a few hundred, stay there) */
	L->look_ahead = sets * L->set_bytes > LEVEL_HOST_CACHED;
	L->sets = aligned_alloc(64, sets * L->set_bytes);
	if (c->track_use) {
		L->use = malloc(sets * c->assoc * sizeof(*L->use));
		L->mru = malloc(sets * sizeof(*L->mru));
	}
	if (L->sets == NULL || (c->track_use && (L->use == NULL || L->mru == NULL))) {
		level_free(L);
		return -1;
	}
	level_clear(L);
	return 0;
}

void level_clear(struct level *L)
{
	uint64_t sets = L->sets_mask + 1;
	memset(L->sets, 0, sets * L->set_bytes);	/* tags 0; way 0 touched last, a guess */
	for (uint64_t s = 0; s < sets; s++)
		policies[L->config.replacement]->first(level_state(L, s), L->assoc);
	if (L->use != NULL) {
		memset(L->use, 0, sets * L->assoc * sizeof(*L->use));
		memset(L->mru, 0, sets * sizeof(*L->mru));	/* (as the sets) */
	}
	memset(&L->stream, 0, sizeof(L->stream));
	L->last = (struct level_last_line){ UINT64_MAX, 0, 0, 0, 0 };
}

void level_free(struct level *L)
{
	free(L->sets);
	free(L->use);
	free(L->mru);
	L->sets = NULL;
	L->use = NULL;
	L->mru = NULL;
}
