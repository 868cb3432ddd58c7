/*
 * Hierarchies: which ones cgtrace simulates, their names, and the sweep of
 * every combination of the configurations given per level.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "level.h"
#include "sim.h"

const char *cgt_hierarchy_check(const struct cgt_hierarchy *h, char *buf, size_t n)
{
	for (int k = 0; k < CGT_N_LEVELS; k++) {
		const struct cgt_cache_config *c = &h->level[k];
		if (c->size == 0 && k == CGT_LEVEL_L2)
			continue;
		if (c->size == 0) {
			snprintf(buf, n, "%s is absent (only L2 may be)", cgt_level_names[k]);
			return buf;
		}
		const char *why = cgt_cache_check(c);
		if (why != NULL) {
			snprintf(buf, n, "%s (%d B, %d-way, %d B lines): %s", cgt_level_names[k],
				 c->size, c->assoc, c->line, why);
			return buf;
		}
	}
	if (h->level[CGT_LEVEL_L2].size == 0)
		return NULL;

	/* Each level against the one above it, on each path from the core;
	   data's first, as the level most often given. */
	static const int pairs[][2] = {
		{ CGT_LEVEL_D1, CGT_LEVEL_L2 },
		{ CGT_LEVEL_I1, CGT_LEVEL_L2 },
		{ CGT_LEVEL_L2, CGT_LEVEL_LL },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const struct cgt_cache_config *up = &h->level[pairs[i][0]], *down = &h->level[pairs[i][1]];
		const char *up_name = cgt_level_names[pairs[i][0]];
		const char *down_name = cgt_level_names[pairs[i][1]];
		if (down->size < up->size) {
			snprintf(buf, n, "%s (%d B) is smaller than %s (%d B): a level must be at least "
				 "as large as the one above it", down_name, down->size, up_name, up->size);
			return buf;
		}
		if (down->line < up->line) {
			snprintf(buf, n, "%s's lines (%d B) are shorter than %s's (%d B): line sizes "
				 "must not shrink going down", down_name, down->line, up_name, up->line);
			return buf;
		}
	}
	return NULL;
}

static const char *const *model_names(enum cgt_model_part part, int *n)
{
	*n = part == CGT_MODEL_REPLACEMENT ? LEVEL_N_REPLACEMENTS : LEVEL_N_PREFETCHERS;
	return part == CGT_MODEL_REPLACEMENT ? level_replacement_names : level_prefetcher_names;
}

int cgt_model_find(enum cgt_model_part part, const char *name)
{
	int n;
	const char *const *names = model_names(part, &n);
	for (int k = 0; k < n; k++)
		if (strcmp(names[k], name) == 0)
			return k;
	return -1;
}

const char *cgt_model_choices(enum cgt_model_part part, char *buf, size_t size)
{
	int n;
	const char *const *names = model_names(part, &n);
	size_t used = 0;
	buf[0] = 0;
	for (int k = 0; k < n && used < size; k++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s",
					 k == 0 ? "" : k + 1 == n ? " or " : ", ", names[k]);
	return buf;
}

int cgt_cache_model_prefetches(const struct cgt_cache_model *m)
{
	for (int k = 0; k < CGT_N_LEVELS; k++)
		if (m->prefetch[k] != LEVEL_PREFETCH_NONE)
			return 1;
	return 0;
}

const char *cgt_cache_model_check(const struct cgt_cache_model *m, const struct cgt_hierarchy *h,
				  char *buf, size_t n)
{
	/* Callgrind's prefetcher, the one there is so far, is LL's */
	static const char *const not_ll[CGT_N_LEVELS] = {
		[CGT_LEVEL_I1] = "--I1-prefetch=callgrind: Callgrind's stream prefetcher is LL's alone",
		[CGT_LEVEL_D1] = "--D1-prefetch=callgrind: Callgrind's stream prefetcher is LL's alone",
		[CGT_LEVEL_L2] = "--L2-prefetch=callgrind: Callgrind's stream prefetcher is LL's alone",
	};
	int policy = 0;
	for (int k = 0; k < CGT_N_LEVELS; k++) {
		if (k != CGT_LEVEL_LL && m->prefetch[k] != LEVEL_PREFETCH_NONE)
			return not_ll[k];
		policy |= m->replacement[k] != LEVEL_LRU;
	}
	/* A policy other than LRU goes where a cache is a level of the
	   general model (level.h): I1, D1 and LL, in hier.c's general parts
	   and the call graph; L2 is Cachegrind's cache alone. */
	if (m->replacement[CGT_LEVEL_L2] != LEVEL_LRU)
		return "--L2-replacement: L2 is LRU so far";
	static const int callgrinds[3] = { CGT_LEVEL_I1, CGT_LEVEL_D1, CGT_LEVEL_LL };
	/* a policy's own limits (a tree's ways), with or without cache use */
	for (int k = 0; k < 3; k++) {
		const int level = callgrinds[k];
		struct level_config c = level_config_of(&h->level[level], m, level);
		const char *why = level_check(&c);
		if (why != NULL && m->replacement[level] != LEVEL_LRU) {
			snprintf(buf, n, "--%s-replacement=%s: %s (%d ways): %s", cgt_level_names[level],
				 level_replacement_names[m->replacement[level]], cgt_level_names[level],
				 h->level[level].assoc, why);
			return buf;
		}
	}
	if (m->cache_use) {
		/* Callgrind's I1, D1 and LL, as the use caches keep them
		   (cache_use.c; the caller turned write-back and prefetching
		   off, as Callgrind does).  Callgrind's tags keep a way's slot in
		   the bits below line size x sets: no more ways than that
		   (sim.c cacheuse_initcache). */
		if (h->level[CGT_LEVEL_L2].size != 0)
			return "--cacheuse=yes models Callgrind's I1, D1 and LL: not with --L2";
		for (int k = 0; k < 3; k++) {
			const struct cgt_cache_config *cc = &h->level[callgrinds[k]];
			uint64_t slots = (uint64_t)cc->size / (uint64_t)cc->assoc;	/* line x sets */
			if (slots < (uint64_t)cc->assoc) {
				snprintf(buf, n, "--cacheuse=yes: error: Use associativity < %llu for cache use "
						 "statistics! (the %s cache, %d B, %d-way, %d B lines)",
					 (unsigned long long)slots, cgt_level_names[callgrinds[k]], cc->size,
					 cc->assoc, cc->line);
				return buf;
			}
		}
		return NULL;
	}
	const int prefetch = m->prefetch[CGT_LEVEL_LL] != LEVEL_PREFETCH_NONE;
	if (!m->write_back && !prefetch && !policy)
		return NULL;
	const char *what = m->write_back ? "--simulate-wb=yes"
			   : prefetch    ? "--simulate-hwpref=yes (--LL-prefetch=callgrind)"
					 : "a replacement policy other than lru";
	if (h->level[CGT_LEVEL_L2].size != 0) {
		snprintf(buf, n, "%s models %sI1, D1 and LL: not with --L2", what,
			 m->write_back || prefetch ? "Callgrind's " : "");
		return buf;
	}
	for (int k = 0; k < 3; k++) {
		struct level_config c = level_config_of(&h->level[callgrinds[k]], m, callgrinds[k]);
		const char *why = level_check(&c);
		if (why != NULL) {
			snprintf(buf, n, "%s: %s (%d ways): %s", what, cgt_level_names[callgrinds[k]],
				 h->level[callgrinds[k]].assoc, why);
			return buf;
		}
	}
	return NULL;
}

void cgt_hierarchy_label(const struct cgt_hierarchy *h, unsigned given, char *buf, size_t n)
{
	size_t used = 0;

	snprintf(buf, n, "default");
	for (int k = 0; k < CGT_N_LEVELS; k++) {
		const struct cgt_cache_config *c = &h->level[k];
		if (!(given & (1u << k)) || used >= n)
			continue;
		int len = snprintf(buf + used, n - used, "%s%s-%d-%d-%d", used ? "." : "",
				   cgt_level_names[k], c->size, c->assoc, c->line);
		used += len > 0 ? (size_t)len : 0;
	}
}

static int label_taken(const struct cgt_sweep_config *configs, int n, const char *label)
{
	for (int i = 0; i < n; i++)
		if (strcmp(configs[i].label, label) == 0)
			return 1;
	return 0;
}

int cgt_sweep_expand(const struct cgt_cache_list lists[CGT_N_LEVELS],
		     const struct cgt_hierarchy *defaults, struct cgt_sweep_config **out,
		     struct cgt_error *e)
{
	uint64_t total = 1;
	unsigned given = 0;

	*out = NULL;
	for (int k = 0; k < CGT_N_LEVELS; k++)
		if (lists[k].n > 0) {
			total *= lists[k].n;
			given |= 1u << k;
		}
	if (total > CGT_MAX_CONFIGS)
		return cgt_fail(e, cgt_err_invalid,
				"the options give %llu configurations; at most %d are simulated "
				"in one run", (unsigned long long)total, CGT_MAX_CONFIGS);

	struct cgt_sweep_config *configs = calloc(total, sizeof(*configs));
	if (configs == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	for (int i = 0; i < (int)total; i++) {
		struct cgt_sweep_config *s = &configs[i];
		/* i in mixed radix, LL's list the lowest digit */
		unsigned rest = (unsigned)i;
		for (int k = CGT_N_LEVELS - 1; k >= 0; k--) {
			unsigned n = lists[k].n;
			s->h.level[k] = n ? lists[k].v[rest % n] : defaults->level[k];
			rest = n ? rest / n : rest;
		}
		cgt_hierarchy_label(&s->h, given, s->label, sizeof(s->label));
		char why[256];
		int rc = 0;
		if (label_taken(configs, i, s->label))
			rc = cgt_fail(e, cgt_err_invalid, "two configurations would get one output "
				      "name, %s: a configuration given twice?", s->label);
		else if (cgt_hierarchy_check(&s->h, why, sizeof(why)) != NULL)
			rc = cgt_fail(e, cgt_err_invalid, "configuration %s: %s", s->label, why);
		if (rc != 0) {
			free(configs);
			return rc;
		}
	}
	*out = configs;
	return (int)total;
}
