/*
 * Internal to report/: the data of a cg_annotate run -- the merged
 * cachegrind.out files, ranked and classified as cg_annotate ranks and
 * classifies them -- shared by its two outputs, cg_annotate's text
 * (annotate_text.c) and JSON (annotate_json.c).
 *
 * Names follow cg_annotate's: an "ofl" is a file name as a cachegrind.out
 * file has it, an "mfl" the same after --mod-filename; "mfn" likewise for
 * functions.  A "CC" is one count per event; a "DCC" an outer CC with
 * inner CCs per name (per function of a file, or per file of a function).
 * All names are interned, so their pointers are their identities.
 */
#ifndef CGTRACE_ANNOTATION_H
#define CGTRACE_ANNOTATION_H

#include <stdio.h>

#include "report.h"
#include "symbols.h"

typedef int64_t count_t;

struct dcc {
	count_t *outer;
	struct cgt_map inner;	/* name -> count_t[] */
};

struct name_list {
	const char **names;
	unsigned n;
	size_t cap;
};

struct annotation {
	const struct cgt_annotate_options *o;
	FILE *out;
	struct cgt_error error;

	struct string_set names;
	const char **events;
	unsigned n_events;
	unsigned *show, n_show, *sort, n_sort;	/* indices into events */

	const char **descs, **cmds;	/* per input file */
	unsigned n_files;

	struct cgt_map mfl_dcc, mfn_dcc;	/* name -> struct dcc */
	struct cgt_map mfl_lines;		/* mfl -> struct cgt_map (line -> CC) */
	struct cgt_map mfl_ofls;		/* mfl -> struct name_list */
	struct cgt_map seen_ofls;		/* the ofls in those lists */
	count_t *summary;
	uint64_t magnitude;	/* of the files read so far: see cgt_cgout_magnitude() */

	void **allocs;	/* everything allocated for the run, freed at once */
	size_t n_allocs, cap_allocs;
};

/* A name and its CC; outer entries of a ranking have their inner ones. */
struct named_cc {
	const char *name;
	const count_t *cc;
	struct named_cc *inner;
	size_t n_inner;
};

/* The Annotation summary's categories, in its order. */
enum annotated_kind {
	KNOWN, UNKNOWN, NON_IDENTICAL, UNREADABLE, BELOW_THRESHOLD, FILES_UNKNOWN, N_ANNOTATED
};

enum source_status { SOURCE_READABLE, SOURCE_UNREADABLE, SOURCE_NON_IDENTICAL };

void *annotation_alloc(struct annotation *a, size_t size);
count_t *annotation_cc(struct annotation *a);
int annotation_oom(struct annotation *a);
void cc_add(count_t *to, const count_t *from, unsigned n);
/* len bytes of s as a JSON string (annotate_json.c). */
void report_json_string(FILE *out, const char *s, size_t len);
void cc_add_lines(const struct annotation *a, const struct cgt_map *lines, count_t *to);

/* The entries of a File:function or Function:file summary: outer names
   with the inner ones that meet the threshold, both ranked. */
int annotation_rank(struct annotation *a, const struct cgt_map *dccs, struct named_cc **list,
		    size_t *n);

/* The files to annotate, of a File:function ranking: sorted, "???" left
   out. */
int annotation_files(struct annotation *a, const struct named_cc *ranked, size_t n,
		     const char ***mfls, size_t *n_mfls);

/* Adds the lines of "???" to sums[FILES_UNKNOWN] and those of every other
   file not among the n mfls (those annotate_files() chose) to
   sums[BELOW_THRESHOLD]. */
int annotation_sum_unannotated(struct annotation *a, const char *const *mfls, size_t n,
			       count_t **sums);

/* Where each of names[0 .. n) is read from: itself, or where it is not
   readable and o->sources holds it, its copy unpacked from there
   (source_paths.c).
   NULL if out of memory. */
char **annotation_source_paths(const struct cgt_annotate_options *o, const char *const *names,
			       unsigned n);
void annotation_source_paths_free(char **paths, unsigned n);

/* Whether mfl's source can be annotated: its original names (sorted),
   and when readable, the first opened and the earliest mtime of all. */
enum source_status annotation_source(struct annotation *a, const char *mfl,
				     struct name_list **ofls, FILE **src, int64_t *min_mtime_ns);

/* The two outputs. */
int annotation_print_text(struct annotation *a);
int annotation_print_json(struct annotation *a);

#endif
