/*
 * Writing cachegrind.out files, byte for byte as Cachegrind 3.19 does
 * (cg_main.c, fprint_CC_table_and_calc_totals).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

static int compare_lines(const void *a, const void *b)
{
	const struct cgt_cgout_line *x = a, *y = b;
	int c = strcmp(x->file, y->file);	/* byte order, as strcmp */
	if (c == 0)
		c = strcmp(x->fn, y->fn);
	if (c == 0)
		c = (x->line > y->line) - (x->line < y->line);
	return c;
}

int cgt_cgout_write(const char *path, const struct cgt_cgout *out, struct cgt_cgout_line *lines,
		    size_t n_lines, struct cgt_error *e)
{
	uint64_t *sum = calloc(out->n_events ? out->n_events : 1, sizeof(*sum));
	FILE *f = fopen(path, "w");

	if (f == NULL || sum == NULL) {
		int err = errno;
		free(sum);
		if (f != NULL)
			fclose(f);
		return cgt_fail(e, cgt_err_io, "cannot write '%s': %s", path, strerror(err));
	}
	qsort(lines, n_lines, sizeof(*lines), compare_lines);
	for (unsigned i = 0; i < out->n_desc; i++)
		fprintf(f, "desc: %s\n", out->desc[i]);
	fprintf(f, "cmd: %s\nevents:", out->cmd);
	for (unsigned i = 0; i < out->n_events; i++)
		fprintf(f, " %s", out->events[i]);
	fputs(out->events_trailing_space ? " \n" : "\n", f);

	const char *file = NULL, *fn = NULL;
	for (size_t i = 0; i < n_lines; i++) {
		const struct cgt_cgout_line *l = &lines[i];
		int new_file = file == NULL || strcmp(l->file, file) != 0;
		if (new_file)
			fprintf(f, "fl=%s\n", l->file);
		if (new_file || strcmp(l->fn, fn) != 0)
			fprintf(f, "fn=%s\n", l->fn);
		file = l->file;
		fn = l->fn;
		fprintf(f, "%" PRId32, l->line);
		for (unsigned k = 0; k < out->n_events; k++) {
			fprintf(f, " %" PRIu64, l->counts[k]);
			sum[k] += l->counts[k];
		}
		fputc('\n', f);
	}
	fputs("summary:", f);
	for (unsigned k = 0; k < out->n_events; k++)
		fprintf(f, " %" PRIu64, sum[k]);
	fputc('\n', f);
	free(sum);
	if (ferror(f) | (fclose(f) != 0))
		return cgt_fail(e, cgt_err_io, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}
