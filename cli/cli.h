/* Helpers shared by cgtrace's commands (cli/ only). */
#ifndef CGTRACE_CLI_H
#define CGTRACE_CLI_H

#include "decode.h"
#include "record.h"
#include "report.h"
#include "sim.h"
#include "trace.h"

/* Prints "cgtrace: <message>", a blank line and usage; returns 2. */
int usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "yes" -> 1, "no" -> 0; -1 for anything else. */
int parse_yes_no(const char *s, int *out);
/* A whole number within [min, max], with an optional k, M or G suffix
   when scaled: 0, or -1. */
int parse_number(const char *s, uint64_t min, uint64_t max, int scaled, uint64_t *out);
/* Each level's model options, in Valgrind's style: --I1-replacement=,
   --D1-prefetch= and so on, for I1, D1, L2 and LL; their long options,
   all with the code OPT. */
#define LEVEL_MODEL_LONGOPTS(OPT)                                                              \
	{ "I1-replacement", required_argument, NULL, OPT },                                    \
	{ "D1-replacement", required_argument, NULL, OPT },                                    \
	{ "L2-replacement", required_argument, NULL, OPT },                                    \
	{ "LL-replacement", required_argument, NULL, OPT },                                    \
	{ "I1-prefetch", required_argument, NULL, OPT },                                       \
	{ "D1-prefetch", required_argument, NULL, OPT },                                       \
	{ "L2-prefetch", required_argument, NULL, OPT },                                       \
	{ "LL-prefetch", required_argument, NULL, OPT }
/* The option name (one of LEVEL_MODEL_LONGOPTS') given value: set in m;
   0, or a usage error's status. */
int parse_level_model(const char *usage, const char *name, const char *value,
		      struct cgt_cache_model *m);
/* Callgrind's cache use (sim.c cachesim_post_clo_init, cacheuse_initcache):
   no write-back or prefetch simulation beside it, each turned off with its
   warning (unless quiet). */
void cache_use_model(struct cgt_cache_model *m, int quiet);
/* Whether the simulator models m with caches exactly: 0, or -1 with why
   not printed (cgt_cache_model_check). */
int check_cache_model(const struct cgt_cache_model *m, const struct cgt_hierarchy *caches);
/* The default --threads: the CPUs this process may run on (its affinity
   mask, as taskset or a container's cpuset sets it), at most 64. */
uint64_t usable_cpus(void);
/* The one TRACE argument left after the options (0), or a usage error. */
int one_trace(int argc, char **argv, const char *usage, const char **path);
/* `cgtrace report` of a callgrind.out file (report_callgrind.c): its
   exit status. */
int cmd_report_callgrind(int argc, char **argv);
/* Prints "cgtrace: <e->msg>"; returns 1. */
int report_error(const struct cgt_error *e);
/* A result file written through a temporary (record.h's cgt_output_*),
   whose name is registered (trace.h's cgt_temporary_register) so that a
   signal that ends the run removes it: output_prepare is
   cgt_output_prepare, with the fatal signals held until it is registered;
   file is then committed as cgt_output_commit says, and output_discard
   is cgt_output_discard. */
struct output {
	struct cgt_output file;
	char *temporary;	/* the registered copy of file.temporary's name */
};
int output_prepare(struct output *o, const char *path, int keep_existing, struct cgt_error *e);
void output_discard(struct output *o);
/* Writes a result file whole through a temporary, put in place when
   complete (record.h's cgt_output_*).  named: path was given by the user,
   so it is checked as kind against input and replaces what is there;
   else a taken name gives way to NAME.N, said on stderr unless quiet.
   fill writes the file (0, or negative with e set); a write failure it
   leaves unsaid is "cannot write 'path'".  0, or -1 with e set (naming
   path, not the temporary). */
int write_output(const char *path, int named, enum cgt_output_kind kind, const char *input,
		 int quiet, int (*fill)(FILE *f, const void *data, struct cgt_error *e),
		 const void *data, struct cgt_error *e);
/* How the commands open traces: notes on stderr, a progress line there
   if it is a terminal, a decode for this run only in $TMPDIR (else /tmp),
   and $CGTRACE_PT_WINDOW (for tests) as the PT window. */
struct cgt_decoder_options decoder_options(void);
/* Where the commands look for modules' files (report.h): the build-id
   cache build_id_dir (NULL: the default one), the archive (NULL: none),
   debuginfod if DEBUGINFOD_URLS is set (DEBUGINFOD_TIMEOUT: seconds a
   request may take [10], DEBUGINFOD_MAXSIZE: bytes a file may have
   [4 GiB]); warnings on stderr. */
struct cgt_locator_options locator_options(const char *build_id_dir, struct cgt_archive *archive);

/* Opens the archive at path (cgt_archive_open) as the commands do: its
   members unpacked as needed into $TMPDIR (else /tmp), within the
   default limits, or $CGTRACE_ARCHIVE_MAX_BYTES (for tests: a small
   limit, without making gigabytes).  A damaged archive is said with a
   warning (1); an error is the caller's to say (negative). */
int open_archive(const char *path, struct cgt_archive **archive, struct cgt_error *e);
/* The archive to find modules in (*archive, cgt_archive_close closes it):
   the one named, else TRACE.archive if it is there.  Read through first,
   so that what is wrong with it is said before any work: one named that
   is not an archive is an error (said; -1), one beside the trace is then
   not used; a damaged one is used for what it holds whole, said with a
   warning (1).  0: fine, or none (*archive NULL). */
int choose_archive(const char *trace, const char *named, struct cgt_archive **archive);

int cmd_simulate(int argc, char **argv);
extern const char usage_simulate[];
/* cmd_simulate's, for --tool=callgrind */
int cmd_simulate_callgrind(int argc, char **argv);
extern const char usage_callgrind[];
int cmd_report(int argc, char **argv);
extern const char usage_report[];
int cmd_archive(int argc, char **argv);
extern const char usage_archive[];

extern const char cgtrace_version[];

#endif
