/*
 * Least recently used replacement (level_loop.h's hooks): each way's age
 * since it was last touched (level_ages_*), so a hit or a fill makes the
 * way the newest and the least recently used is the one a miss replaces.
 * Cachegrind's and Callgrind's caches keep the same order by moving tags
 * (MRU first); a cold set's ways are 0 .. assoc-1 in way order, as their
 * tags 0 are.
 */
#include "level_loop.h"

static const struct level_hooks lru_hooks = { level_ages_renew, level_ages_renew, level_ages_oldest,
					      level_ages_newer, 1, 1 };

LEVEL_POLICY_LOOPS(lru, lru_hooks)

const struct level_policy level_policy_lru = { &lru_hooks, 65535, 0, 1, level_ages_first, LEVEL_POLICY_TAKES(lru) };
