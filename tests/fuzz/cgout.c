/*
 * Fuzz target: cachegrind.out files -- the reader (formats/cgout_read.c,
 * cg_annotate's parsing rules) item by item, then `cgtrace report` on the
 * file (report/annotation.c: merging, ranking, the text and JSON
 * outputs): once as cg_annotate's text with percentages and a low
 * threshold, once as JSON of the file against itself (--diff).  Source
 * annotation is off: it would read whatever files the fl= lines name.
 * Seeds: the .cgout files of tests/report/.
 */
#include "fuzz.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_file f;
	struct cgt_cgout_reader *r;
	struct cgt_cgout_item item;
	struct cgt_error e;

	fuzz_file_open(&f, data, size);
	if (cgt_cgout_open(&r, f.path, &e) == 0) {
		cgt_cgout_desc(r);
		cgt_cgout_cmd(r);
		unsigned n_events = cgt_cgout_n_events(r);
		const char *const *events = cgt_cgout_events(r);
		for (unsigned k = 0; k < n_events; k++)
			if (strlen(events[k]) > size)
				abort();
		while (cgt_cgout_next(r, &item, &e) > 0) {
			int64_t sum = 0;
			if (item.kind == CGT_CGOUT_FL || item.kind == CGT_CGOUT_FN)
				sum = (int64_t)strlen(item.name);
			else
				for (unsigned k = 0; k < n_events; k++)
					sum ^= item.counts[k];
			(void)sum;
		}
		cgt_cgout_magnitude(r);
		cgt_cgout_close(r);
	}

	const char *files[2] = { f.path, f.path };
	struct cgt_annotate_options text = {
		.files = files, .n_files = 1, .threshold = 0.1, .show_percs = 1,
		.context = 8, .invocation = "cgtrace report fuzz",
	};
	cgt_annotate(fuzz_devnull(), &text, &e);
	struct cgt_annotate_options json = {
		.files = files, .n_files = 2, .diff = 1, .threshold = 1.0,
		.context = 8, .invocation = "cgtrace report --diff fuzz fuzz", .json = 1,
	};
	cgt_annotate(fuzz_devnull(), &json, &e);
	fuzz_file_close(&f);
	return 0;
}
