/*
 * From a profile to a cachegrind.out file: every instruction of every
 * block is credited to its (file, function, line), as Cachegrind's LineCCs
 * are -- including instructions that were translated but never ran, which
 * Cachegrind lists with zero counts.
 *
 * The source positions are found once (cgt_profile_lines) and serve every
 * profile of the same block table: a sweep writes one file per
 * configuration.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct line_key {
	const char *file, *fn;
	int32_t line;
};

struct cgt_profile_lines {
	struct line_key *lines;		/* distinct positions, in first-seen order */
	size_t n_lines, cap_lines;
	uint32_t *line_of;		/* by profile row */
	size_t n_insns;
};

/* Open addressing on (file, fn, line) -- the symbolizer interns its
   strings, so pointers identify them -- to an index into lines + 1. */
struct line_index {
	uint32_t *slots;
	size_t cap;
};

static size_t hash(const struct line_key *k)
{
	uint64_t h = (uint64_t)(uintptr_t)k->file * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)(uintptr_t)k->fn * 0xC2B2AE3D27D4EB4Full;
	h ^= (uint64_t)(uint32_t)k->line * 0x165667B19E3779F9ull;
	return (size_t)(h ^ (h >> 29));
}

static int same(const struct line_key *a, const struct line_key *b)
{
	return a->file == b->file && a->fn == b->fn && a->line == b->line;
}

/* The index of position k, added if new; -1 if out of memory. */
static int64_t line_number(struct cgt_profile_lines *pl, struct line_index *ix,
			   const struct line_key *k)
{
	if (2 * (pl->n_lines + 1) > ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 4096;
		uint32_t *slots = calloc(cap, sizeof(*slots));
		if (slots == NULL)
			return -1;
		for (size_t i = 0; i < pl->n_lines; i++) {
			size_t j = hash(&pl->lines[i]) & (cap - 1);
			while (slots[j] != 0)
				j = (j + 1) & (cap - 1);
			slots[j] = (uint32_t)i + 1;
		}
		free(ix->slots);
		ix->slots = slots;
		ix->cap = cap;
	}
	size_t j = hash(k) & (ix->cap - 1);
	for (; ix->slots[j] != 0; j = (j + 1) & (ix->cap - 1))
		if (same(&pl->lines[ix->slots[j] - 1], k))
			return ix->slots[j] - 1;
	if (pl->n_lines == pl->cap_lines &&
	    cgt_array_grow(&pl->lines, &pl->cap_lines, pl->n_lines, 1, sizeof(*pl->lines)) < 0)
		return -1;
	pl->lines[pl->n_lines] = *k;
	ix->slots[j] = (uint32_t)++pl->n_lines;
	return (int64_t)pl->n_lines - 1;
}

int cgt_profile_lines_open(struct cgt_profile_lines **out, const struct cgt_block_table *t,
			   struct cgt_symbolizer *sy, struct cgt_error *e)
{
	struct cgt_profile_lines *pl = calloc(1, sizeof(*pl));
	struct line_index ix = { NULL, 0 };
	size_t n = 0;

	*out = NULL;
	for (uint32_t b = 0; b < t->n; b++)
		n += t->blocks[b]->n_insns;
	if (pl == NULL || (pl->line_of = malloc((n ? n : 1) * sizeof(*pl->line_of))) == NULL) {
		cgt_profile_lines_close(pl);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	pl->n_insns = n;
	size_t row = 0;
	for (uint32_t b = 0; b < t->n; b++) {
		const struct cgt_block *blk = t->blocks[b];
		for (uint32_t i = 0; i < blk->n_insns; i++) {
			struct cgt_location loc;
			cgt_symbolize(sy, blk->insns[i].addr, blk->map_epoch, &loc);
			struct line_key k = { loc.file, loc.fn, loc.line };
			int64_t at = line_number(pl, &ix, &k);
			if (at < 0) {
				free(ix.slots);
				cgt_profile_lines_close(pl);
				return cgt_fail(e, cgt_err_nomem, "out of memory");
			}
			pl->line_of[row++] = (uint32_t)at;
		}
	}
	free(ix.slots);
	*out = pl;
	return 0;
}

void cgt_profile_lines_close(struct cgt_profile_lines *pl)
{
	if (pl == NULL)
		return;
	free(pl->lines);
	free(pl->line_of);
	free(pl);
}

static char *command_line(const struct cgt_trace_header *h)
{
	size_t len = 1;
	for (uint32_t i = 0; i < h->argc; i++)
		len += strlen(h->argv[i]) + 1;
	char *cmd = malloc(len), *p = cmd;
	if (cmd == NULL)
		return NULL;
	for (uint32_t i = 0; i < h->argc; i++)
		p += sprintf(p, "%s%s", i ? " " : "", h->argv[i]);
	*p = '\0';
	return cmd;
}

/* What a trace decoded from Intel PT can and cannot say: desc: lines. */
static unsigned pt_desc(const struct cgt_pt_decoded *pt, char text[3][200], const char **ptrs)
{
	unsigned n = 0;
	if (!pt->present)
		return 0;
	snprintf(text[n], 200, "Trace:            Intel PT: Ir I1mr ILmr Bc Bcm Bi Bim exact, Dr Dw "
			       "decoded from the instructions, REP counted once");
	ptrs[n] = text[n];
	n++;
	if (pt->mem_period != 0)
		snprintf(text[n], 200, "Estimated:        D1mr DLmr D1mw DLmw, from memory samples "
				       "(one access in %llu)", (unsigned long long)pt->mem_period);
	else
		snprintf(text[n], 200, "Estimated:        nothing: no memory samples, so D1mr DLmr D1mw "
				       "DLmw count no misses");
	ptrs[n] = text[n];
	n++;
	if (pt->overflows + pt->errors + pt->breaks != 0) {
		snprintf(text[n], 200, "Trace lost:       %llu overflows, %llu decode errors, %llu lost "
				       "pieces: what ran there is missing",
			 (unsigned long long)pt->overflows, (unsigned long long)pt->errors,
			 (unsigned long long)pt->breaks);
		ptrs[n] = text[n];
		n++;
	}
	return n;
}

int cgt_write_cachegrind_out(const char *path, const struct cgt_profile *p,
			     const struct cgt_profile_lines *pl, const struct cgt_trace_header *h,
			     struct cgt_error *e)
{
	const unsigned n_events = p->events.n;
	if (pl->n_insns != p->n_insns)
		return cgt_fail(e, cgt_err_invalid, "the profile and its source positions differ");
	struct cgt_cgout_line *lines = calloc(pl->n_lines ? pl->n_lines : 1, sizeof(*lines));
	uint64_t *counts = calloc(pl->n_lines ? pl->n_lines * n_events : 1, sizeof(*counts));
	char *cmd = command_line(h);
	int rc = 0;

	if (lines == NULL || counts == NULL || cmd == NULL) {
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		goto out;
	}
	uint8_t *listed = calloc(pl->n_lines ? pl->n_lines : 1, 1);
	if (listed == NULL) {
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < p->n_insns; i++) {
		uint64_t *c = counts + (size_t)pl->line_of[i] * n_events;
		const uint64_t *row = p->costs + i * n_events;
		for (unsigned k = 0; k < n_events; k++)
			c[k] += row[k];
		listed[pl->line_of[i]] |= p->listed == NULL || p->listed[i];
	}
	/* a line no listed instruction is on is not Cachegrind's */
	size_t n_lines = 0;
	for (size_t i = 0; i < pl->n_lines; i++)
		if (listed[i])
			lines[n_lines++] = (struct cgt_cgout_line){ pl->lines[i].file, pl->lines[i].fn,
								    pl->lines[i].line, counts + i * n_events };
	free(listed);

	const char *names[CGT_MAX_EVENTS];
	for (unsigned k = 0; k < n_events; k++)
		names[k] = p->events.ev[k].name;
	/* One desc: line per level present (Cachegrind's spacing: the values
	   line up in cg_annotate), then what a PT trace can say. */
	char text[CGT_N_LEVELS + 3][200];
	const char *desc[CGT_N_LEVELS + 3];
	unsigned n_desc = 0;
	for (int l = 0; l < CGT_N_LEVELS; l++) {
		if (p->caches.level[l].size == 0)
			continue;
		char d[128];
		cgt_cache_describe(&p->caches.level[l], d, sizeof(d));
		snprintf(text[n_desc], sizeof(text[n_desc]), "%s cache:         %s", cgt_level_names[l], d);
		desc[n_desc] = text[n_desc];
		n_desc++;
	}
	n_desc += pt_desc(&h->decoded, text + n_desc, desc + n_desc);
	int branch_sim = 0;
	for (unsigned k = 0; k < n_events; k++)
		branch_sim |= p->events.ev[k].access == CGT_ACCESS_COND ||
			      p->events.ev[k].access == CGT_ACCESS_INDIRECT;
	struct cgt_cgout out = { desc, n_desc, cmd, names, n_events, p->cache_sim && !branch_sim };
	rc = cgt_cgout_write(path, &out, lines, n_lines, e);
out:
	free(lines);
	free(counts);
	free(cmd);
	return rc;
}
