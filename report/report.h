/*
 * Reporting: source positions for instruction addresses, cachegrind.out
 * files from a simulation, Cachegrind's end-of-run summary; later the
 * cg_annotate-style annotator.
 */
#ifndef CGTRACE_REPORT_H
#define CGTRACE_REPORT_H

#include <stdio.h>

#include "decode.h"
#include "sim.h"

/* ---- Source positions (symbolizer.c, elf_symbols.c, dwarf_lines.c) ---- */

/*
 * Where an instruction is, as Cachegrind names it: the file from the DWARF
 * line table ("dir/file"), the function as the ELF symbol containing the
 * address, the line; "???" (and line 0) where unknown.  A module whose
 * file is missing or has changed since recording gets one warning (on the
 * stream given) and "???" positions, never wrong ones.
 */
struct cgt_location {
	const char *file;
	const char *fn;
	int32_t line;
};

struct cgt_symbolizer;

int cgt_symbolizer_open(struct cgt_symbolizer **sy, const struct cgt_decoder *d, FILE *warnings,
			struct cgt_error *e);
/* Reads m's symbols and line tables now rather than when an address of
   it is first symbolized: for a thread of its own while the trace is
   simulated. */
void cgt_symbolizer_preload(struct cgt_symbolizer *sy, const struct cgt_module *m);
/* The strings stay valid until the symbolizer is closed. */
void cgt_symbolize(struct cgt_symbolizer *sy, uint64_t addr, uint32_t map_epoch,
		   struct cgt_location *loc);
void cgt_symbolizer_close(struct cgt_symbolizer *sy);

/* ---- cachegrind.out from a simulation (profile.c) -------------------- */

struct cgt_profile {
	int cache_sim, branch_sim;
	struct cgt_cache_config I1, D1, LL;
	uint64_t totals[CGT_N_EVENTS];	/* filled by cgt_write_profile */
};

/* Symbolises every instruction of every block the decoder has seen,
   credits each (file, function, line) with the simulation's counts and
   writes a cachegrind.out file at path. */
int cgt_write_profile(const char *path, struct cgt_decoder *d, const struct cgt_sim *s,
		      struct cgt_symbolizer *sy, struct cgt_profile *p, struct cgt_error *e);

/* ---- cg_annotate (annotation.c, annotate_text.c, annotate_json.c,
        mod_regex.c) ----------------------------------------------------- */

/* A --mod-filename / --mod-funcname expression: s/old/new/flags. */
struct cgt_mod;
/* NULL if expr is not of the form, or its regex does not compile. */
struct cgt_mod *cgt_mod_parse(const char *expr);
/* The name after the substitution (malloc'd), or NULL if out of memory. */
char *cgt_mod_apply(const struct cgt_mod *m, const char *name);
void cgt_mod_free(struct cgt_mod *m);

struct cgt_annotate_options {
	const char *const *files;	/* cachegrind.out files, merged by adding */
	unsigned n_files;
	int diff;			/* two files: the second minus the first */
	const struct cgt_mod *mod_filename, *mod_funcname;	/* NULL: none */
	char **show;			/* events to show, in order; NULL: all */
	unsigned n_show;
	char **sort;			/* sort events; NULL: all, in order */
	unsigned n_sort;
	double threshold;		/* percent, 0-20 */
	int show_percs, annotate;
	long context;
	const char *invocation;		/* for the Metadata section */
	int color;			/* shade counts by their share of the total */
	int json;			/* the same data as JSON */
};

/* Prints what the newest cg_annotate prints for these options and files;
   errors go to err as cg_annotate's.  Returns the exit status (0 or 1). */
int cgt_annotate(FILE *out, FILE *err, const struct cgt_annotate_options *o);

/* ---- Cachegrind's end-of-run summary (summary.c) --------------------- */

/* Each line prefixed "==pid== ", as Cachegrind's. */
void cgt_print_summary(FILE *f, long pid, const uint64_t totals[CGT_N_EVENTS], int cache_sim,
		       int branch_sim);

/* ---- Comparing configurations (compare.c) ---- */

/*
 * cgtrace report --compare: one event of several cachegrind.out files (a
 * sweep's, one per cache configuration) side by side -- the totals, then
 * the costliest functions (file:function) and lines (file:line function),
 * named and merged as cg_annotate names and merges them.
 */
struct cgt_compare_options {
	const char *const *files;	/* two or more, with the same events: line */
	unsigned n_files;
	/* NULL: the miss event (a name ending in "mr", "mw" or "m") whose
	   totals differ the most between the files, relative to the largest;
	   if none differ, the first miss event counted in some file; else
	   the first event. */
	const char *event;
	unsigned top;			/* functions shown, and lines shown: at most this many each */
	int json;			/* the same data as JSON (report/REPORT-JSON.md) */
};

/* Writes the comparison to out, or nothing if a file cannot be read, the
   events: lines differ or the event is not among them (e says which). */
int cgt_compare(FILE *out, const struct cgt_compare_options *o, struct cgt_error *e);

#endif
