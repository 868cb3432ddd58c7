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

/* ---- Where a module's file is now (module_files.c) ------------------- */

/* Where to look for a module's file when the recorded path no longer
   holds it, each place used only for a file with the recorded build-id:
   the build-id cache, an archive (cgt_archive_open'd with a scratch
   directory, the caller's: the members asked for are unpacked there),
   with debuginfod_urls set (DEBUGINFOD_URLS, which libdebuginfod reads
   itself), its servers: each request given up after debuginfod_timeout
   seconds (0: 10) or debuginfod_max_bytes (0: 4 GiB), a request given up
   or a file refused taken out of libdebuginfod's cache (debuginfod_cache,
   NULL: unknown), and the servers not asked again in the run.  NULL / 0:
   not that place.
   warnings: where a file refused or a server's failure is said (NULL:
   nowhere). */
struct cgt_locator_options {
	const char *build_id_dir;
	struct cgt_archive *archive;
	const char *debuginfod_urls;
	const char *debuginfod_cache;
	int debuginfod_timeout;
	uint64_t debuginfod_max_bytes;
	FILE *warnings;
};

enum cgt_module_source {
	CGT_MODULE_NOWHERE,
	CGT_MODULE_RECORDED_PATH,
	CGT_MODULE_CACHE,
	CGT_MODULE_ARCHIVE,
	CGT_MODULE_DEBUGINFOD,
};

struct cgt_module_files {
	enum cgt_module_source source;
	char *elf;	/* the module's file */
	char *debug;	/* its separate debug file, where elf has no line tables
			   and Valgrind would find none beside it: from the
			   places after elf's (the cache, the archive,
			   debuginfod); NULL: as Valgrind finds it, if at all */
	char *why;	/* NOWHERE: what each place said */
};

struct cgt_locator;

int cgt_locator_open(struct cgt_locator **l, const struct cgt_locator_options *o,
		     struct cgt_error *e);
/* Fills f (cgt_module_files_free frees it).  0, or an error (out of
   memory). */
int cgt_locate_module(struct cgt_locator *l, const struct cgt_module *m,
		      struct cgt_module_files *f, struct cgt_error *e);
void cgt_module_files_free(struct cgt_module_files *f);
/* "the recorded path", "the build-id cache", ... */
const char *cgt_module_source_name(enum cgt_module_source s);
void cgt_locator_close(struct cgt_locator *l);

/* ---- What an archive of a trace holds (module_archive.c) -------------- */

struct cgt_archive_counts {
	unsigned modules;	/* archived */
	unsigned not_found;	/* found nowhere, or without a build-id */
	uint64_t files, bytes;	/* added, and their bytes before compression */
};

/*
 * Adds to w each distinct module of maps (cgt_decoder_mappings') that has
 * a build-id, from where l finds it: its file as build-id/ab/cdef.../elf,
 * the separate debug file the symbolizer would read as .../debug, and
 * with sources, the source files their line tables name that are regular
 * files here, as sources/PATH (cgt_archive_source_member).  A module
 * found nowhere, or a file that cannot be read: one warning each on
 * warnings (NULL: none), and the rest goes on.  0, or an error (the
 * archive cannot be written, out of memory).
 */
int cgt_archive_modules(struct cgt_archive_writer *w, struct cgt_locator *l,
			const struct cgt_mapping *maps, size_t n, int sources, FILE *warnings,
			struct cgt_archive_counts *counts, struct cgt_error *e);

/* ---- Source positions (symbolizer.c, elf_symbols.c, elf_sections.c,
        dwarf_lines.c) ----------------------------------------------------- */

/*
 * Where an instruction is, as Cachegrind names it: the file from the DWARF
 * line table ("dir/file"), the function as the ELF symbol containing the
 * address, the line; "???" (and line 0) where unknown.  A module's file
 * is found by cgt_locate_module; one that is nowhere gets one warning (on
 * the locator's warnings stream) that says where it was looked for, and
 * "???" positions, never wrong ones.
 */
struct cgt_location {
	const char *file;
	const char *fn;
	int32_t line;
};

struct cgt_symbolizer;

/* o: where modules' files are looked for (NULL: at their recorded paths
   only, silently). */
int cgt_symbolizer_open(struct cgt_symbolizer **sy, const struct cgt_locator_options *o,
			struct cgt_error *e);
/* The trace's module map (cgt_decoder_mappings', complete once the trace
   is read): what addresses are symbolized against, until the next call. */
void cgt_symbolizer_use_mappings(struct cgt_symbolizer *sy, const struct cgt_mapping *maps,
				 size_t n);
/* Reads m's symbols and line tables now rather than when an address of
   it is first symbolized: for a thread of its own while the trace is
   simulated. */
void cgt_symbolizer_preload(struct cgt_symbolizer *sy, const struct cgt_module *m);
/* The strings stay valid until the symbolizer is closed. */
void cgt_symbolize(struct cgt_symbolizer *sy, uint64_t addr, uint32_t map_epoch,
		   struct cgt_location *loc);
/* What Valgrind 3.19's debug information tells Callgrind of a code address
   (struct cgt_code_info, sim.h): the function, file and line cgt_symbolize
   gives (NULL and 0 for its "???"); the module whose .text section holds
   the address (code in .plt, .init, ... has none); the kind of section it
   is in among every module mapped at map_epoch; whether a function symbol
   starts exactly there.  The strings stay valid until the symbolizer is
   closed. */
void cgt_symbolize_code(struct cgt_symbolizer *sy, uint64_t addr, uint32_t map_epoch,
			struct cgt_code_info *ci);
void cgt_symbolizer_close(struct cgt_symbolizer *sy);

/* ---- cachegrind.out from a profile (profile.c) ------------------------ */

/* The source position of each instruction of a block table, found once
   for every profile of it (a sweep writes one file per configuration). */
struct cgt_profile_lines;

int cgt_profile_lines_open(struct cgt_profile_lines **pl, const struct cgt_block_table *t,
			   struct cgt_symbolizer *sy, struct cgt_error *e);
void cgt_profile_lines_close(struct cgt_profile_lines *pl);

/* Credits each (file, function, line) with the profile's costs and writes
   a cachegrind.out file at path; h: the trace's header (cmd:, and what a
   PT trace could not see). */
int cgt_write_cachegrind_out(const char *path, const struct cgt_profile *p,
			     const struct cgt_profile_lines *pl, const struct cgt_trace_header *h,
			     struct cgt_error *e);

/* ---- callgrind.out from a call-graph profile (callgrind_out.c) --------- */

struct cgt_callgrind_out_options {
	int dump_instr, dump_line;	/* positions: instr and/or line */
	int compress_strings, compress_pos;
	const char *cache_desc[3];	/* I1, D1, LL: "32768 B, 64 B, 8-way associative"; NULL: "" */
	const char *attribution;	/* a desc: line after them, how costs were attributed; NULL: none */
};

/* What a callgrind.out file has written so far: its compressed names,
   which the parts after a part in the same file use (--combine-dumps). */
struct cgt_callgrind_writer;

/* Positions come from sy (which holds the trace's module map); h: the
   trace's header (pid:, cmd:). */
int cgt_callgrind_writer_open(struct cgt_callgrind_writer **w, struct cgt_symbolizer *sy,
			      const struct cgt_trace_header *h, const struct cgt_callgrind_out_options *o,
			      struct cgt_error *e);
/* Writes p (a dump of cgt_callgraph_run) to f: first, a file of its own
   (its header, every name defined anew); else the next part of the file
   the parts before went to. */
int cgt_callgrind_writer_part(struct cgt_callgrind_writer *w, FILE *f, const struct cgt_cg_profile *p,
			      int first, struct cgt_error *e);
void cgt_callgrind_writer_close(struct cgt_callgrind_writer *w);

/* ---- Reading callgrind.out files (callgrind_read.c) -------------------
 *
 * A file as callgrind_annotate 3.19 reads it: a function is its
 * "file:name" (the file of the last fl=, fi= or fe=, without the
 * strip_prefix callgrind_annotate takes off, its working directory; a
 * callee's file, from cfi=/cfl=, keeps it), every part of the file summed
 * (--combine-dumps=yes), the last summary: and totals: lines kept, jump
 * lines read and passed over.  What Callgrind 3.19 and cgtrace write is
 * read; anything else is an error naming the file and line (never a
 * warning and a guess, as callgrind_annotate does).
 */

#define CGT_CALLGRIND_MAX_EVENTS 64

/* One count per event of the file; given says which ones a line gave
   (bit i: event i): callgrind_annotate prints "." for an event never given,
   0 for one given as 0. */
struct cgt_cost {
	uint64_t given;
	uint64_t count[];
};

struct cgt_callgrind_fn {
	const char *name;		/* "file:function", its identity */
	const char *file, *function;	/* the parts it was made of */
	const char *object;		/* ob= at its last fn= line; NULL: none */
	int listed;			/* it had a fn=, fi= or fe= line of its own */
	struct cgt_cost *self;		/* its cost lines */
	struct cgt_cost *calls;		/* the inclusive cost of the calls it made */
	struct cgt_cost *called;	/* of the calls made to it; NULL: never called */
};

/* The calls from one function to another, every call site summed. */
struct cgt_callgrind_call {
	size_t caller, callee;		/* indices into fns */
	uint64_t count;
	struct cgt_cost *cost;		/* inclusive */
};

/* A source line's self cost. */
struct cgt_callgrind_line {
	uint64_t line;
	struct cgt_cost *cost;
};

/* The calls from one function to another made at one line of a file. */
struct cgt_callgrind_line_call {
	uint64_t line;
	size_t caller, callee;
	uint64_t count;
	struct cgt_cost *cost;
};

struct cgt_callgrind_file {
	const char *name;
	struct cgt_callgrind_line *lines;	/* by line number */
	size_t n_lines;
	struct cgt_callgrind_line_call *calls;	/* in the order of the file */
	size_t n_calls;
};

struct cgt_callgrind_store;

struct cgt_callgrind_profile {
	/* the header's values; NULL where a line was absent */
	const char *creator, *pid, *part, *thread, *cmd;
	const char **desc;		/* every desc: line's value */
	unsigned n_desc;
	int has_line, has_addr;		/* positions: */
	const char **events;
	unsigned n_events;
	struct cgt_cost *summary, *totals;	/* the last such lines; NULL: none */
	struct cgt_callgrind_fn *fns;	/* in the order the file names them */
	size_t n_fns;
	struct cgt_callgrind_call *calls;	/* in the order of the file */
	size_t n_calls;
	struct cgt_callgrind_file *files;	/* fl=, fi=, fe= files, in order */
	size_t n_files;
	struct cgt_callgrind_store *store;
};

struct cgt_callgrind_read_options {
	const char *strip_prefix;	/* taken off the start of fl=/fi=/fe= names; NULL: none */
};

/* 1 if path's content starts as a callgrind.out file does (its first line
   "# callgrind format", or a header line that only Callgrind writes:
   version:, creator:, positions:, pid:, part:, thread:, before events:);
   0 if not, if it cannot be read, or if it is not a regular file (a pipe
   is not read twice). */
int cgt_callgrind_sniff(const char *path);
/* 0, or a negative cgt_status with "path:line: what was expected" in e. */
int cgt_callgrind_read(const char *path, const struct cgt_callgrind_read_options *o,
		       struct cgt_callgrind_profile **p, struct cgt_error *e);
void cgt_callgrind_free(struct cgt_callgrind_profile *p);

/* ---- callgrind_annotate (callgrind_text.c, callgrind_source.c,
        callgrind_json.c) ------------------------------------------------ */

/* callgrind_annotate 3.19's options, as given on its command line (its
   texts are printed as given). */
struct cgt_callgrind_annotate_options {
	const char *input;			/* the file's name as given */
	const char *const *show;		/* NULL: every event */
	unsigned n_show;
	const char *const *sort;		/* NULL: every event, in order */
	unsigned n_sort;
	const char *const *sort_thresholds;	/* per sort event, "N" of EVENT:N or NULL;
						   NULL: none had one */
	const char *threshold;			/* --threshold's number ("99") */
	const char *context;			/* --context's number ("8") */
	int show_percs, auto_annotate, inclusive, tree_caller, tree_calling;
	const char *const *include_dirs;	/* "DIR/" each, in order */
	unsigned n_include_dirs;
	const char *const *user_files;		/* source files to annotate */
	unsigned n_user_files;
	enum cgt_callgrind_format {
		CGT_CALLGRIND_TEXT,		/* callgrind_annotate's */
		CGT_CALLGRIND_JSON,		/* the same data as JSON (REPORT-JSON.md) */
		CGT_CALLGRIND_DOT,		/* the call graph for Graphviz (callgrind_dot.c) */
	} format;
	/* CGT_CALLGRIND_DOT: a function is drawn if its inclusive cost is at
	   least node_threshold percent of the total, a call between two drawn
	   ones if its cost is at least edge_threshold percent */
	double node_threshold, edge_threshold;
};

/* The end of a report that a writer returning rc wrote to out: rc, or,
   if that was 0 and out's writes failed (a full disk: its error flag, or
   the last flush), "cannot write the report" in e. */
int cgt_report_written(FILE *out, int rc, struct cgt_error *e);

/* Prints what callgrind_annotate 3.19 prints for p with these options,
   with ties in its order of equal costs (and of files) broken by name,
   where its own order is its Perl hashes' (which changes from run to
   run); or its JSON or call graph.  0, or a negative cgt_status with
   callgrind_annotate's message in e (an event not in the file, a user
   file not found), or with "cannot write the report" if out's writes
   failed. */
int cgt_callgrind_annotate(FILE *out, const struct cgt_callgrind_profile *p,
			   const struct cgt_callgrind_annotate_options *o, struct cgt_error *e);

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
	/* where a source file named by an absolute path that is not readable
	   there is read from: an archive holding it under
	   cgt_archive_source_member's name, unpacked when it is annotated;
	   NULL: nowhere.  warnings: where a member that cannot be unpacked is
	   said (NULL: nowhere). */
	struct cgt_archive *sources;
	FILE *warnings;
	int json;			/* the same data as JSON */
};

/* Prints to out what the newest cg_annotate prints for these options and
   files.  Returns 0, or a negative cgt_status with cg_annotate's message
   in e (what it prints after "cg_annotate: error: "); out is flushed
   either way, so what was printed before the error comes before it. */
int cgt_annotate(FILE *out, const struct cgt_annotate_options *o, struct cgt_error *e);

/* ---- Cachegrind's end-of-run summary (summary.c) --------------------- */

/* Each line prefixed "==pid== ", as Cachegrind's. */
void cgt_print_summary(FILE *f, long pid, const struct cgt_event_set *es, const uint64_t *totals);

/* ---- Sweep outputs (sweep_out.c) ---- */

/*
 * What a sweep (many configurations simulated in one pass) shows: a table
 * on stderr, a CSV or JSON summary, an SVG of miss-ratio curves.  A
 * level's misses per 1,000 instructions (mpki) is its miss events (by the
 * event set's data) summed, times 1000, over Ir, rounded half up exactly
 * (integers, no floating point), 0 when Ir is 0; a level a row does not
 * have (an absent L2) has no mpki ("-", an empty CSV field, JSON null).
 */
struct cgt_sweep_row {
	const char *label;		/* e.g. "D1-32768-8-64.LL-8388608-16-64" */
	struct cgt_hierarchy h;
	const uint64_t *totals;		/* [events->n], in the event set's order */
};

struct cgt_sweep_table {
	const struct cgt_event_set *events;
	const struct cgt_sweep_row *rows;	/* in the order the configurations were given */
	unsigned n;
};

/* A table of every configuration, one row each in the given order, for
   stderr: the label, each event's total with thousands separators, each
   level's mpki (2 decimals), aligned, under a header row. */
int cgt_sweep_print(FILE *f, const struct cgt_sweep_table *t, struct cgt_error *e);

/* The same data as CSV (header: label,I1_size,I1_assoc,I1_line,D1_...,
   L2_...,LL_...,<event names...>,<level>_mpki...; an absent L2 has empty
   fields) or, json != 0, JSON ({"events":[...],"configurations":[{"label",
   "caches":{"I1":{"size","assoc","line"},...},"totals":{...},"mpki":{...}}]});
   mpki with 4 decimals. */
int cgt_sweep_write_summary(FILE *f, int json, const struct cgt_sweep_table *t,
			    struct cgt_error *e);

/* The format a --sweep-summary file name asks for: 0 CSV (".csv"), 1 JSON
   (".json"), -1 neither. */
int cgt_sweep_summary_format(const char *path);

/* An SVG of miss-ratio curves: one chart (<g>) per level that takes more
   than one size, mpki against that level's size (log2); one <polyline>
   per series -- the configurations that differ only in that level's size
   -- with data-level, data-series (its legend text), data-sizes and
   data-mpki (4 decimals) for tests.  No level varies: a chart saying so. */
int cgt_sweep_write_plot(FILE *f, const struct cgt_sweep_table *t, struct cgt_error *e);

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
