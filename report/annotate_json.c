/*
 * cgtrace report --format=json: the data of cg_annotate's text, as one
 * JSON object (report/REPORT-JSON.md describes it).  The same ranking,
 * threshold and file classification as the text; counts of every event.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "annotation.h"

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no
   overlongs, surrogates or code points past U+10FFFF), or 0. */
static int utf8_length(const unsigned char *p)
{
	int n;
	unsigned lo = 0x80, hi = 0xbf;
	if (*p < 0xc2 || *p > 0xf4)
		return 0;
	n = *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : 4;
	if (*p == 0xe0)
		lo = 0xa0;
	else if (*p == 0xed)
		hi = 0x9f;
	else if (*p == 0xf0)
		lo = 0x90;
	else if (*p == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Names are bytes; JSON text is Unicode, so a byte that is not part of
   well-formed UTF-8 becomes U+FFFD.  len bytes of s (compare.c shows parts
   of names). */
void report_json_string(FILE *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	fputc('"', out);
	for (; p < end; p++) {
		if (*p >= 0x80) {
			int n = utf8_length(p);
			if (n == 0 || p + n > end) {
				fputs("\\ufffd", out);
			} else {
				fwrite(p, 1, (size_t)n, out);
				p += n - 1;
			}
		} else if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void json_string(FILE *out, const char *s)
{
	report_json_string(out, s, strlen(s));
}

static void json_counts(FILE *out, const count_t *cc, unsigned n)
{
	fputc('[', out);
	for (unsigned i = 0; i < n; i++)
		fprintf(out, "%s%lld", i ? ", " : "", (long long)cc[i]);
	fputc(']', out);
}

static void json_names(FILE *out, const char *const *names, const unsigned *index, unsigned n)
{
	fputc('[', out);
	for (unsigned i = 0; i < n; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, names[index ? index[i] : i]);
	}
	fputc(']', out);
}

/* A File:function or Function:file ranking: outer entries with their
   inner ones. */
static void json_ranking(struct annotation *a, const char *inner_key, const struct named_cc *list,
			 size_t n)
{
	FILE *out = a->out;
	fputc('[', out);
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "%s\n    {\"name\": ", k ? "," : "");
		json_string(out, list[k].name);
		fputs(", \"counts\": ", out);
		json_counts(out, list[k].cc, a->n_events);
		fprintf(out, ", \"%s\": [", inner_key);
		for (size_t j = 0; j < list[k].n_inner; j++) {
			fprintf(out, "%s\n      {\"name\": ", j ? "," : "");
			json_string(out, list[k].inner[j].name);
			fputs(", \"counts\": ", out);
			json_counts(out, list[k].inner[j].cc, a->n_events);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fprintf(out, "%s]", n ? "\n  " : "");
}

static int compare_line_keys(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* One annotated (or unannotatable) file: its lines and their counts. */
static int json_annotation(struct annotation *a, const char *mfl, count_t **sums, int first)
{
	FILE *out = a->out;
	struct cgt_map *lines = cgt_map_get(&a->mfl_lines, (uint64_t)(uintptr_t)mfl);
	struct name_list *ofls;
	FILE *src;
	int64_t min_mtime;
	enum source_status status = annotation_source(a, mfl, &ofls, &src, &min_mtime);
	static const char *const names[] = { "annotated", "unreadable", "non-identical" };

	fprintf(out, "%s\n    {\"file\": ", first ? "" : ",");
	json_string(out, mfl);
	fputs(", \"originals\": ", out);
	json_names(out, ofls->names, NULL, ofls->n);
	fprintf(out, ", \"status\": \"%s\"", names[status]);
	if (status == SOURCE_READABLE) {
		fclose(src);
		fputs(", \"sources_newer_than\": [", out);
		int any = 0;
		for (unsigned f = 0; f < a->n_files; f++) {
			struct stat st;
			if (stat(a->o->files[f], &st) == 0 &&
			    min_mtime > (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec) {
				fputs(any++ ? ", " : "", out);
				json_string(out, a->o->files[f]);
			}
		}
		fputc(']', out);
	}
	int64_t *keys = annotation_alloc(a, (lines->n + 1) * sizeof(int64_t));
	size_t n = 0;
	if (keys == NULL)
		return annotation_oom(a);
	for (size_t s = 0; s < lines->cap; s++)
		if (lines->slots[s].value != NULL)
			keys[n++] = (int64_t)lines->slots[s].key;
	qsort(keys, n, sizeof(*keys), compare_line_keys);
	fputs(", \"lines\": [", out);
	for (size_t k = 0; k < n; k++) {
		const count_t *cc = cgt_map_get(lines, (uint64_t)keys[k]);
		fprintf(out, "%s\n      [%lld, ", k ? "," : "", (long long)keys[k]);
		json_counts(out, cc, a->n_events);
		fputc(']', out);
		int kind = status == SOURCE_UNREADABLE ? UNREADABLE
			   : status == SOURCE_NON_IDENTICAL ? NON_IDENTICAL
			   : keys[k] == 0 ? UNKNOWN : KNOWN;
		cc_add(sums[kind], cc, a->n_events);
	}
	fputs("]}", out);
	return 0;
}

int annotation_print_json(struct annotation *a)
{
	FILE *out = a->out;
	struct named_cc *files, *functions;
	size_t n_files, n_functions;

	if (annotation_rank(a, &a->mfl_dcc, &files, &n_files) < 0 ||
	    annotation_rank(a, &a->mfn_dcc, &functions, &n_functions) < 0)
		return -1;
	fputs("{\n  \"format\": \"cgtrace-report\",\n  \"version\": 1,\n  \"invocation\": ", out);
	json_string(out, a->o->invocation);
	fputs(",\n  \"descriptions\": ", out);
	json_names(out, a->descs, NULL, a->n_files);
	fputs(",\n  \"commands\": ", out);
	json_names(out, a->cmds, NULL, a->n_files);
	fputs(",\n  \"events\": ", out);
	json_names(out, a->events, NULL, a->n_events);
	fputs(",\n  \"events_shown\": ", out);
	json_names(out, a->events, a->show, a->n_show);
	fputs(",\n  \"sort_order\": ", out);
	json_names(out, a->events, a->sort, a->n_sort);
	fprintf(out, ",\n  \"threshold\": %.17g,\n  \"summary\": ", a->o->threshold);
	json_counts(out, a->summary, a->n_events);
	fputs(",\n  \"files\": ", out);
	json_ranking(a, "functions", files, n_files);
	fputs(",\n  \"functions\": ", out);
	json_ranking(a, "files", functions, n_functions);
	if (a->o->annotate) {
		count_t *sums[N_ANNOTATED];
		for (int k = 0; k < N_ANNOTATED; k++)
			if ((sums[k] = annotation_cc(a)) == NULL)
				return annotation_oom(a);
		const char **mfls;
		size_t n;
		if (annotation_files(a, files, n_files, &mfls, &n) < 0)
			return -1;
		fputs(",\n  \"annotations\": [", out);
		for (size_t k = 0; k < n; k++)
			if (json_annotation(a, mfls[k], sums, k == 0) < 0)
				return -1;
		fprintf(out, "%s]", n ? "\n  " : "");
		if (annotation_sum_unannotated(a, mfls, n, sums) < 0)
			return -1;
		static const char *const keys[N_ANNOTATED] = {
			"annotated_line_known", "annotated_line_unknown", "unannotated_non_identical",
			"unannotated_unreadable", "unannotated_below_threshold", "unannotated_file_unknown",
		};
		fputs(",\n  \"annotation_summary\": {", out);
		for (int k = 0; k < N_ANNOTATED; k++) {
			fprintf(out, "%s\n    \"%s\": ", k ? "," : "", keys[k]);
			json_counts(out, sums[k], a->n_events);
		}
		fputs("\n  }", out);
	}
	fputs("\n}\n", out);
	return 0;
}
