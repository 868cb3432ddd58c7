/*
 * Fuzz target: what `cgtrace simulate` makes of its cache options -- each
 * line of the input an option, "I1=", "D1=", "L2=" or "LL=" and its value
 * (simulate/cache_list.c: Cachegrind's syntax, lo..hi ranges), then the
 * cross product, its checks and labels (simulate/hierarchy.c), then a
 * sweep's outputs of made-up totals (report/sweep_out.c: table, CSV,
 * JSON, SVG), as long as there are few configurations.
 * Seeds: tests/fuzz/corpus/cache_options/.
 */
#include "fuzz.h"
#include "report.h"
#include "sim.h"

/* The outputs of a sweep of n configurations whose totals are made from
   their sizes: every path of the writers, no simulation. */
static void outputs(const struct cgt_sweep_config *configs, unsigned n, int has_L2)
{
	struct cgt_event_set es;
	struct cgt_sweep_row rows[64];
	uint64_t totals[64][CGT_MAX_EVENTS];
	struct cgt_error e;

	cgt_event_set_init(&es, 1, has_L2, 1, 0, 0);
	for (unsigned k = 0; k < n; k++) {
		for (unsigned ev = 0; ev < es.n; ev++)
			totals[k][ev] = (uint64_t)configs[k].h.level[ev % CGT_N_LEVELS].size * (ev + 1) +
					(uint64_t)configs[k].h.level[CGT_LEVEL_D1].assoc;
		rows[k] = (struct cgt_sweep_row){ configs[k].label, configs[k].h, totals[k] };
	}
	struct cgt_sweep_table t = { &es, rows, n };
	FILE *out = fuzz_devnull();
	fuzz_say("table", cgt_sweep_print(out, &t, &e), &e);
	fuzz_say("csv", cgt_sweep_write_summary(out, 0, &t, &e), &e);
	fuzz_say("json", cgt_sweep_write_summary(out, 1, &t, &e), &e);
	fuzz_say("plot", cgt_sweep_write_plot(out, &t, &e), &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[CGT_N_LEVELS] = { "I1", "D1", "L2", "LL" };
	struct cgt_cache_list lists[CGT_N_LEVELS] = { { 0 } };
	const struct cgt_hierarchy defaults = {
		{ { 32768, 8, 64 }, { 32768, 8, 64 }, { 0, 0, 0 }, { 8388608, 16, 64 } }
	};
	struct cgt_error e;
	char *text = malloc(size + 1);

	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *line = text, *next; line != NULL; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		for (int l = 0; l < CGT_N_LEVELS; l++) {
			if (strncmp(line, names[l], 2) != 0 || line[2] != '=')
				continue;
			struct cgt_cache_config parsed;
			int rc = cgt_cache_list_add(&lists[l], names[l], line + 3, &parsed, &e);
			fuzz_say(names[l], rc == CGT_CACHE_BAD_RANGE ? -1 : 0, &e);
			if (rc == CGT_CACHE_INVALID && cgt_cache_check(&parsed) == NULL)
				abort();	/* refused with no reason to give */
		}
	}
	struct cgt_sweep_config *configs = NULL;
	int n = cgt_sweep_expand(lists, &defaults, &configs, &e);
	fuzz_say("expand", n, &e);
	if (n > CGT_MAX_CONFIGS)
		abort();
	for (int k = 0; k < n; k++) {
		char why[256];
		if (cgt_hierarchy_check(&configs[k].h, why, sizeof(why)) != NULL)
			abort();	/* expand let through what the check refuses */
		for (int j = 0; j < k && n <= 64; j++)
			if (strcmp(configs[j].label, configs[k].label) == 0)
				abort();	/* two configurations, one name */
	}
	if (n > 0 && n <= 64)
		outputs(configs, (unsigned)n, lists[CGT_LEVEL_L2].n > 0);
	free(configs);
	for (int l = 0; l < CGT_N_LEVELS; l++)
		cgt_cache_list_free(&lists[l]);
	free(text);
	return 0;
}
