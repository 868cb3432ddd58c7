/*
 * From a simulation to a cachegrind.out file: every instruction of every
 * block is credited to its (file, function, line), as Cachegrind's LineCCs
 * are -- including instructions that were translated but never ran, which
 * Cachegrind lists with zero counts.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Open-addressing map from (file, fn, line) -- the symbolizer interns its
   strings, so pointers identify them -- to counts. */
struct line_cc {
	const char *file, *fn;
	int32_t line;
	uint64_t counts[CGT_N_EVENTS];
};

struct line_map {
	struct line_cc *slots;
	size_t cap, n;
};

static size_t hash(const char *file, const char *fn, int32_t line)
{
	uint64_t h = (uint64_t)(uintptr_t)file * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)(uintptr_t)fn * 0xC2B2AE3D27D4EB4Full;
	h ^= (uint64_t)(uint32_t)line * 0x165667B19E3779F9ull;
	return (size_t)(h ^ (h >> 29));
}

static struct line_cc *find_or_add(struct line_map *m, const struct cgt_location *loc)
{
	if (2 * (m->n + 1) > m->cap) {
		struct line_map bigger = { calloc(m->cap ? 2 * m->cap : 4096, sizeof(struct line_cc)),
					   m->cap ? 2 * m->cap : 4096, 0 };
		if (bigger.slots == NULL)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			struct line_cc *old = &m->slots[i];
			if (old->file == NULL)
				continue;
			size_t j = hash(old->file, old->fn, old->line) & (bigger.cap - 1);
			while (bigger.slots[j].file != NULL)
				j = (j + 1) & (bigger.cap - 1);
			bigger.slots[j] = *old;
			bigger.n++;
		}
		free(m->slots);
		*m = bigger;
	}
	size_t j = hash(loc->file, loc->fn, loc->line) & (m->cap - 1);
	for (;; j = (j + 1) & (m->cap - 1)) {
		struct line_cc *cc = &m->slots[j];
		if (cc->file == NULL) {
			cc->file = loc->file;
			cc->fn = loc->fn;
			cc->line = loc->line;
			m->n++;
			return cc;
		}
		if (cc->file == loc->file && cc->fn == loc->fn && cc->line == loc->line)
			return cc;
	}
}

/* The events a run writes, in Cachegrind's order and its "events:" line. */
static unsigned chosen_events(const struct cgt_profile *p, unsigned *events)
{
	unsigned n = 0;
	for (unsigned ev = 0; ev < CGT_N_EVENTS; ev++) {
		int cache = ev >= CGT_I1mr && ev <= CGT_DLmw, branch = ev >= CGT_Bc;
		if (ev == CGT_Ir || (cache && p->cache_sim) || (branch && p->branch_sim))
			events[n++] = ev;
	}
	return n;
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

int cgt_write_profile(const char *path, struct cgt_decoder *d, const struct cgt_sim *s,
		      struct cgt_symbolizer *sy, struct cgt_profile *p, struct cgt_error *e)
{
	const struct cgt_block_table *t = cgt_decoder_blocks(d);
	struct line_map map = { 0 };
	uint64_t *rows = NULL;
	uint32_t rows_cap = 0;
	int rc = 0;

	memset(p->totals, 0, sizeof(p->totals));
	for (uint32_t b = 0; b < t->n && rc == 0; b++) {
		const struct cgt_block *blk = t->blocks[b];
		if (blk->n_insns > rows_cap) {
			free(rows);
			rows_cap = blk->n_insns;
			rows = malloc((size_t)rows_cap * CGT_N_EVENTS * sizeof(*rows));
			if (rows == NULL) {
				rc = cgt_fail(e, cgt_err_nomem, "out of memory");
				break;
			}
		}
		cgt_sim_block_counts(s, blk, rows);
		for (uint32_t i = 0; i < blk->n_insns; i++) {
			struct cgt_location loc;
			cgt_symbolize(sy, blk->insns[i].addr, blk->map_epoch, &loc);
			struct line_cc *cc = find_or_add(&map, &loc);
			if (cc == NULL) {
				rc = cgt_fail(e, cgt_err_nomem, "out of memory");
				break;
			}
			const uint64_t *row = rows + (size_t)i * CGT_N_EVENTS;
			for (unsigned ev = 0; ev < CGT_N_EVENTS; ev++) {
				cc->counts[ev] += row[ev];
				p->totals[ev] += row[ev];
			}
		}
	}
	free(rows);

	unsigned events[CGT_N_EVENTS];
	unsigned n_events = chosen_events(p, events);
	const char *names[CGT_N_EVENTS];
	for (unsigned k = 0; k < n_events; k++)
		names[k] = cgt_event_names[events[k]];
	struct cgt_cgout_line *lines = calloc(map.n ? map.n : 1, sizeof(*lines));
	uint64_t *chosen = calloc(map.n ? map.n * n_events : 1, sizeof(*chosen));
	char *cmd = command_line(cgt_decoder_header(d));
	if (rc == 0 && (lines == NULL || chosen == NULL || cmd == NULL))
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	if (rc == 0) {
		size_t n = 0;
		for (size_t i = 0; i < map.cap; i++) {
			const struct line_cc *cc = &map.slots[i];
			if (cc->file == NULL)
				continue;
			uint64_t *c = chosen + n * n_events;
			for (unsigned k = 0; k < n_events; k++)
				c[k] = cc->counts[events[k]];
			lines[n++] = (struct cgt_cgout_line){ cc->file, cc->fn, cc->line, c };
		}
		char desc[3][128], text[6][200];
		const struct cgt_cache_config *caches[3] = { &p->I1, &p->D1, &p->LL };
		const char *names3[3] = { "I1", "D1", "LL" };
		const char *desc_ptrs[6];
		unsigned n_desc = 0;
		for (int i = 0; i < 3; i++) {
			cgt_cache_describe(caches[i], desc[i], sizeof(desc[i]));
			/* Cachegrind's spacing: the values line up in cg_annotate. */
			snprintf(text[i], sizeof(text[i]), "%s cache:         %s", names3[i], desc[i]);
			desc_ptrs[n_desc++] = text[i];
		}
		n_desc += pt_desc(&cgt_decoder_header(d)->decoded, text + 3, desc_ptrs + 3);
		struct cgt_cgout out = { desc_ptrs, n_desc, cmd, names, n_events,
					 p->cache_sim && !p->branch_sim };
		rc = cgt_cgout_write(path, &out, lines, n, e);
	}
	free(lines);
	free(chosen);
	free(cmd);
	free(map.slots);
	return rc;
}
