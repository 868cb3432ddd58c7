/*
 * cgtrace's command line: parses options and wires the stages together.
 * Nothing here records, decodes, simulates or reports by itself.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "decode.h"
#include "record.h"

const char cgtrace_version[] = "0.1.0";

static const char usage_main[] =
	"usage: cgtrace <command> [options] [arguments]\n"
	"\n"
	"Trace-driven cache and branch simulation with Cachegrind-compatible output.\n"
	"\n"
	"commands:\n"
	"  record [options] -- PROG [ARGS]   run PROG once and capture its execution trace\n"
	"  simulate [options] TRACE          replay it through caches and branch predictors\n"
	"                                    into a cachegrind.out file\n"
	"  report [options] [FILE...]        annotate cachegrind.out files, as cg_annotate\n"
	"  archive [options] TRACE           one file of the modules (and sources) its\n"
	"                                    symbols and lines need, for another machine\n"
	"  info TRACE                        show a trace's header, modules and counts\n"
	"  dump TRACE [--limit N]            print the decoded instruction stream\n"
	"  help [COMMAND]                    show help for a command\n"
	"\n"
	"Run 'cgtrace help COMMAND' for a command's options.\n";

static const char usage_record[] =
	"usage: cgtrace record [options] [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG with ARGS and writes its execution trace (instructions, data\n"
	"addresses, branch outcomes) to a zstd-compressed trace file.  PROG's\n"
	"standard streams pass through; cgtrace exits with PROG's exit status\n"
	"(128+N if a signal N killed it).\n"
	"\n"
	"options:\n"
	"  -o, --output=FILE         trace file [" CGT_DEFAULT_TRACE_NAME "]; %p is the\n"
	"                            program's pid, %q{VAR} an environment variable\n"
	"      --backend=NAME        auto, valgrind or pt [auto: pt where the host has\n"
	"                            Intel PT, else valgrind]\n"
	"      --trace-children=yes|no\n"
	"                            also trace programs PROG executes, each into a\n"
	"                            trace of its own (FILE must contain %p) [no].\n"
	"                            A child made by fork() gets a trace of its own\n"
	"                            whenever FILE contains %p\n"
	"      --vex-guest-chase=no|yes\n"
	"                            no: Callgrind's translation (also\n"
	"                            --vex-iropt-unroll-thresh=0), which counts what\n"
	"                            the CPU executed and gives call graphs: simulate\n"
	"                            equals 'valgrind --tool=cachegrind\n"
	"                            --vex-guest-chase=no'; yes: Cachegrind's default,\n"
	"                            equal to plain Cachegrind, whose chasing may count\n"
	"                            code that did not run (valgrind backend) [no]\n"
	"  -v, --verbose             show the backend's (Valgrind's) own messages\n"
	"  -q, --quiet               no summary line at the end\n"
	"      --build-id-dir=DIR    keep each module the program maps (and its\n"
	"                            separate debug file) in this build-id cache, so\n"
	"                            that its symbols outlive a rebuild\n"
	"                            [$XDG_CACHE_HOME/cgtrace/build-id, else\n"
	"                            ~/.cache/cgtrace/build-id]\n"
	"      --no-build-id-cache   keep none\n"
	"  -h, --help                this help\n"
	"\n"
	"pt backend (Intel Processor Trace and memory samples through perf_event):\n"
	"      --pt-mtc=N|no         MTC timing packets every 2^N crystal-clock ticks [3]\n"
	"      --pt-cyc=yes|no       cycle-accurate timing packets [no]\n"
	"      --pt-retcomp=yes|no   return compression (smaller traces) [yes]\n"
	"      --pt-psb-period=N     a PSB every ~2^(N+11) bytes [the CPU's default]\n"
	"      --pt-buffer=SIZE      trace buffer per CPU, a power of two (k, M) [4M, or\n"
	"                            128k when the locked-memory limit allows no more]\n"
	"      --mem-period=N        sample one load (and one store) in N [1000]\n"
	"      --mem-ldlat=N         sample loads of at least N cycles' latency [3]\n"
	"\n"
	"An existing FILE is overwritten only if it is a cgtrace trace.  Modules\n"
	"are kept by hard link where the file system allows, else copied, each\n"
	"build-id once; the summary line says how much the cache grew.\n";

static const char usage_info[] =
	"usage: cgtrace info [--build-id-dir=DIR] [--archive=FILE] TRACE\n"
	"\n"
	"Prints the trace's header (command, host CPU and caches), its module map\n"
	"with where each module's symbols and lines would be read from now (as\n"
	"`cgtrace simulate` looks for them: see its help), how the program ended\n"
	"and the event counts (Ir, Dr, Dw, branches).\n"
	"\n"
	"  --build-id-dir=DIR  the build-id cache [$XDG_CACHE_HOME/cgtrace/build-id]\n"
	"  --archive=FILE      an archive made by cgtrace archive [TRACE.archive, if\n"
	"                      there]\n"
	"\n"
	"exit status: 0 done; 1 error; 2 bad usage; 3 done, but the trace was\n"
	"incomplete (truncated, damaged or without an end record): the counts are\n"
	"of what it holds; or the archive was.\n";

static const char usage_dump[] =
	"usage: cgtrace dump [--limit N] TRACE\n"
	"\n"
	"Prints the decoded stream, one executed instruction a line:\n"
	"  T<thread> <address> <length> then its data accesses (R, W or M for\n"
	"  read-modify-write, address:size; R-/W- for a guarded access not made),\n"
	"  Bc taken|not-taken for a conditional branch, Bi <target> for an\n"
	"  indirect one.\n"
	"\n"
	"options:\n"
	"  -n, --limit=N   stop after N instructions\n"
	"\n"
	"exit status: 0 done; 1 error; 2 bad usage; 3 done, but the trace was\n"
	"incomplete (truncated, damaged or without an end record): only what it\n"
	"holds was printed.\n";

int usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cgtrace: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n\n%s", usage);
	return 2;
}

int parse_yes_no(const char *s, int *out)
{
	if (strcmp(s, "yes") == 0)
		*out = 1;
	else if (strcmp(s, "no") == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

int parse_level_model(const char *usage, const char *name, const char *value,
		      struct cgt_cache_model *m)
{
	int level;
	for (level = 0; level < CGT_N_LEVELS - 1; level++)
		if (strncmp(name, cgt_level_names[level], 2) == 0)
			break;
	const enum cgt_model_part part =
		strcmp(name + 3, "replacement") == 0 ? CGT_MODEL_REPLACEMENT : CGT_MODEL_PREFETCH;
	int k = cgt_model_find(part, value);
	if (k < 0) {
		char choices[256];
		return usage_error(usage, "bad --%s '%s' (expected %s)", name, value,
				   cgt_model_choices(part, choices, sizeof(choices)));
	}
	*(part == CGT_MODEL_REPLACEMENT ? &m->replacement[level] : &m->prefetch[level]) = (uint8_t)k;
	return 0;
}

void cache_use_model(struct cgt_cache_model *m, int quiet)
{
	if (cgt_cache_model_prefetches(m)) {
		if (!quiet)
			fprintf(stderr, "cgtrace: warning: prefetch simulation can not be used with "
					"cache usage\n");
		memset(m->prefetch, 0, sizeof(m->prefetch));
	}
	if (m->write_back) {
		if (!quiet)
			fprintf(stderr, "cgtrace: warning: write-back simulation can not be used with "
					"cache usage\n");
		m->write_back = 0;
	}
}

int check_cache_model(const struct cgt_cache_model *m, const struct cgt_hierarchy *caches)
{
	char buf[256];
	const char *why = cgt_cache_model_check(m, caches, buf, sizeof(buf));
	if (why == NULL)
		return 0;
	fprintf(stderr, "cgtrace: %s\n", why);
	return -1;
}

int parse_number(const char *s, uint64_t min, uint64_t max, int scaled, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *s == '-')
		return -1;
	unsigned shift = 0;
	if (scaled && *end != '\0' && end[1] == '\0') {
		shift = *end == 'k' || *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 64;
		end++;
	}
	if (*end != '\0' || shift == 64 || v > (max >> shift) || (v << shift) < min)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	enum { PT_MTC = 256, PT_CYC, PT_RETCOMP, PT_PSB, PT_BUFFER, MEM_PERIOD, MEM_LDLAT,
	       BUILD_ID_DIR, NO_BUILD_ID_CACHE, VEX_GUEST_CHASE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, 'b' },
		{ "trace-children", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "pt-mtc", required_argument, NULL, PT_MTC },
		{ "pt-cyc", required_argument, NULL, PT_CYC },
		{ "pt-retcomp", required_argument, NULL, PT_RETCOMP },
		{ "pt-psb-period", required_argument, NULL, PT_PSB },
		{ "pt-buffer", required_argument, NULL, PT_BUFFER },
		{ "mem-period", required_argument, NULL, MEM_PERIOD },
		{ "mem-ldlat", required_argument, NULL, MEM_LDLAT },
		{ "build-id-dir", required_argument, NULL, BUILD_ID_DIR },
		{ "no-build-id-cache", no_argument, NULL, NO_BUILD_ID_CACHE },
		{ "vex-guest-chase", required_argument, NULL, VEX_GUEST_CHASE },
		{ NULL, 0, NULL, 0 },
	};
	struct cgt_record_options o = { .backend = CGT_BACKEND_AUTO };
	uint64_t n;
	int c, keep_modules = 1;
	char *default_dir = NULL;

	cgt_pt_options_default(&o.pt);

	while ((c = getopt_long(argc, argv, "+o:vqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "auto") == 0)
				o.backend = CGT_BACKEND_AUTO;
			else if (strcmp(optarg, "valgrind") == 0)
				o.backend = CGT_BACKEND_VALGRIND;
			else if (strcmp(optarg, "pt") == 0)
				o.backend = CGT_BACKEND_PT;
			else
				return usage_error(usage_record,
						   "bad --backend '%s' (expected auto, valgrind or pt)",
						   optarg);
			break;
		case 'c':
			if (parse_yes_no(optarg, &o.trace_children) < 0)
				return usage_error(usage_record,
						   "bad --trace-children '%s' (expected yes or no)",
						   optarg);
			break;
		case PT_MTC:
			if (strcmp(optarg, "no") == 0)
				o.pt.mtc_period = -1;
			else if (parse_number(optarg, 0, 15, 0, &n) == 0)
				o.pt.mtc_period = (int)n;
			else
				return usage_error(usage_record, "bad --pt-mtc '%s' (expected 0-15 or no)", optarg);
			break;
		case PT_CYC:
		case PT_RETCOMP:
			if (parse_yes_no(optarg, c == PT_CYC ? &o.pt.cyc : &o.pt.retcomp) < 0)
				return usage_error(usage_record, "bad --%s '%s' (expected yes or no)",
						   c == PT_CYC ? "pt-cyc" : "pt-retcomp", optarg);
			break;
		case PT_PSB:
			if (parse_number(optarg, 0, 15, 0, &n) < 0)
				return usage_error(usage_record, "bad --pt-psb-period '%s' (expected 0-15)", optarg);
			o.pt.psb_period = (int)n;
			break;
		case PT_BUFFER:
			if (parse_number(optarg, 1, 1ull << 40, 1, &n) < 0 || (n & (n - 1)) != 0)
				return usage_error(usage_record,
						   "bad --pt-buffer '%s' (expected a power of two, e.g. 4M)", optarg);
			o.pt.buffer_bytes = n;
			break;
		case MEM_PERIOD:
			if (parse_number(optarg, 1, UINT32_MAX, 0, &n) < 0)
				return usage_error(usage_record, "bad --mem-period '%s' (expected a count of at least 1)",
						   optarg);
			o.pt.mem_period = n;
			break;
		case MEM_LDLAT:
			if (parse_number(optarg, 1, 65535, 0, &n) < 0)
				return usage_error(usage_record, "bad --mem-ldlat '%s' (expected 1-65535 cycles)", optarg);
			o.pt.mem_ldlat = (uint32_t)n;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case BUILD_ID_DIR:
			o.build_id_dir = optarg;
			break;
		case NO_BUILD_ID_CACHE:
			keep_modules = 0;
			break;
		case VEX_GUEST_CHASE:
			if (parse_yes_no(optarg, &o.vex_guest_chase) < 0)
				return usage_error(usage_record,
						   "bad --vex-guest-chase '%s' (expected yes or no)", optarg);
			o.vex_guest_chase_given = 1;
			break;
		case 'h':
			fputs(usage_record, stdout);
			return 0;
		default:
			fprintf(stderr, "\n%s", usage_record);
			return 2;
		}
	}
	if (optind >= argc)
		return usage_error(usage_record, "no program to record");
	o.argv = argv + optind;
	o.notes = stderr;
	if (!keep_modules)
		o.build_id_dir = NULL;
	else if (o.build_id_dir == NULL && (o.build_id_dir = default_dir = cgt_build_id_dir_default()) == NULL)
		fprintf(stderr, "cgtrace: warning: neither XDG_CACHE_HOME nor HOME is set: the modules "
				"are not kept in a build-id cache (give --build-id-dir=DIR)\n");
	struct cgt_error e;
	int status = cgt_record(&o, &e);
	free(default_dir);
	if (status >= 0)
		return status;	/* the program's run's */
	/* It never ran: as a shell, 127 when it is not there, 126 when it
	   cannot be executed. */
	report_error(&e);
	return e.status == cgt_err_not_found ? 127 : e.status == cgt_err_not_executable ? 126 : 1;
}

/* Commands that take exactly one trace file. */
int one_trace(int argc, char **argv, const char *usage, const char **path)
{
	if (optind >= argc)
		return usage_error(usage, "no trace file given");
	if (optind + 1 < argc)
		return usage_error(usage, "unexpected argument '%s'", argv[optind + 1]);
	*path = argv[optind];
	return 0;
}

struct cgt_decoder_options decoder_options(void)
{
	const char *tmp = getenv("TMPDIR"), *window = getenv("CGTRACE_PT_WINDOW");
	uint64_t bytes = 0;
	if (window != NULL && parse_number(window, 0, SIZE_MAX, 0, &bytes) < 0)
		bytes = 0;
	return (struct cgt_decoder_options){ stderr, isatty(STDERR_FILENO) ? stderr : NULL,
					     tmp != NULL && *tmp ? tmp : "/tmp", (size_t)bytes };
}

/* libdebuginfod's cache directory, by its rules
   (debuginfod-client-config(7)), or NULL. */
static char *debuginfod_cache_dir(void)
{
	const char *set = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME") != NULL ? getenv("HOME") : "/";
	char *dir;
	struct stat st;
	if (set != NULL && *set)
		return strdup(set);
	/* the deprecated one, used where it is */
	if (asprintf(&dir, "%s/.debuginfod_client_cache", home) < 0)
		return NULL;
	if (stat(dir, &st) == 0)
		return dir;
	free(dir);
	if (xdg != NULL && *xdg ? asprintf(&dir, "%s/debuginfod_client", xdg) < 0
				: asprintf(&dir, "%s/.cache/debuginfod_client", home) < 0)
		return NULL;
	return dir;
}

struct cgt_locator_options locator_options(const char *build_id_dir, struct cgt_archive *archive)
{
	static char *default_dir, *debuginfod_cache;	/* kept for the run */
	const char *urls = getenv("DEBUGINFOD_URLS");
	const char *timeout = getenv("DEBUGINFOD_TIMEOUT"), *max_size = getenv("DEBUGINFOD_MAXSIZE");
	uint64_t seconds = 0, max_bytes = 0;
	if (timeout != NULL && parse_number(timeout, 1, 3600, 0, &seconds) < 0)
		seconds = 0;
	if (max_size != NULL && parse_number(max_size, 1, UINT64_MAX, 0, &max_bytes) < 0)
		max_bytes = 0;
	if (build_id_dir == NULL && default_dir == NULL)
		default_dir = cgt_build_id_dir_default();
	if (urls != NULL && *urls && debuginfod_cache == NULL)
		debuginfod_cache = debuginfod_cache_dir();
	return (struct cgt_locator_options){
		.build_id_dir = build_id_dir != NULL ? build_id_dir : default_dir,
		.archive = archive,
		.debuginfod_urls = urls != NULL && *urls ? urls : NULL,
		.debuginfod_cache = debuginfod_cache,
		.debuginfod_timeout = (int)seconds,
		.debuginfod_max_bytes = max_bytes,
		.warnings = stderr,
	};
}

/* (cli.h) */
int open_archive(const char *path, struct cgt_archive **archive, struct cgt_error *e)
{
	const char *tmp = getenv("TMPDIR"), *max = getenv("CGTRACE_ARCHIVE_MAX_BYTES");
	struct cgt_archive_limits limits = { 0 };
	if (max != NULL && parse_number(max, 1, UINT64_MAX, 1, &limits.max_bytes) < 0)
		limits.max_bytes = 0;
	int rc = cgt_archive_open(archive, path, tmp != NULL && *tmp ? tmp : "/tmp", &limits, e);
	if (rc > 0)
		fprintf(stderr, "cgtrace: warning: %s; what it holds whole is used\n", e->msg);
	return rc;
}

/* (cli.h) */
int choose_archive(const char *trace, const char *named, struct cgt_archive **archive)
{
	struct cgt_error e;
	struct stat st;
	char *beside = NULL;
	*archive = NULL;
	if (named == NULL) {
		if (asprintf(&beside, "%s.archive", trace) < 0)
			return 0;
		if (stat(beside, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(beside);
			return 0;
		}
	}
	int rc = open_archive(named != NULL ? named : beside, archive, &e);
	free(beside);
	if (rc < 0 && named != NULL)
		return report_error(&e), -1;
	if (rc < 0) {
		fprintf(stderr, "cgtrace: warning: %s; not used\n", e.msg);
		return 0;
	}
	return rc;
}

int report_error(const struct cgt_error *e)
{
	fprintf(stderr, "cgtrace: %s\n", e->msg);
	return 1;
}

/* Removes the run's temporaries, then dies of the signal, as it would
   have without this handler (a shell says 128+N).  Async-signal-safe. */
static void remove_temporaries_and_die(int sig)
{
	cgt_temporaries_remove_all();
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/* Every fatal signal not ignored removes the temporaries first.  One
   ignored stays ignored: a shell's background job ignores SIGINT, nohup
   SIGHUP, and a parent that ignores SIGPIPE asks for EPIPE instead. */
static void remove_temporaries_on_signals(void)
{
	struct sigaction handler = { .sa_handler = remove_temporaries_and_die };
	handler.sa_mask = cgt_temporaries_signals();	/* one removal at a time per thread */
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction was;
		if (sigismember(&handler.sa_mask, sig) == 1 && sigaction(sig, NULL, &was) == 0 &&
		    was.sa_handler != SIG_IGN)
			sigaction(sig, &handler, NULL);
	}
}

int output_prepare(struct output *o, const char *path, int keep_existing, struct cgt_error *e)
{
	/* Held from making the temporary until it is registered: a signal
	   between the two would leave it. */
	sigset_t was;
	cgt_temporaries_hold(&was);
	int rc = cgt_output_prepare(&o->file, path, keep_existing, e);
	o->temporary = NULL;
	if (rc == 0 && o->file.temporary != NULL) {
		o->temporary = strdup(o->file.temporary);
		if (o->temporary == NULL) {
			cgt_output_discard(&o->file);
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		} else {
			cgt_temporary_register(o->temporary);
		}
	}
	cgt_temporaries_release(&was);
	return rc;
}

void output_discard(struct output *o)
{
	cgt_output_discard(&o->file);	/* removes the temporary unless it was committed */
	if (o->temporary != NULL)
		cgt_temporary_unregister(o->temporary);
	free(o->temporary);
	o->temporary = NULL;
}

int write_output(const char *path, int named, enum cgt_output_kind kind, const char *input,
		 int quiet, int (*fill)(FILE *f, const void *data, struct cgt_error *e),
		 const void *data, struct cgt_error *e)
{
	struct output out = { 0 };
	const char *inputs[] = { input };
	int rc = -1;
	if ((named && cgt_output_check(path, kind, inputs, 1, e) < 0) ||
	    output_prepare(&out, path, !named, e) < 0)
		goto out;
	FILE *f = fopen(out.file.write_path, "w");
	if (f == NULL) {
		cgt_fail(e, cgt_err_io, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	rc = fill(f, data, e);
	int failed = ferror(f);
	/* fclose writes what is still buffered: its failure is a write's */
	if ((fclose(f) != 0 || failed) && rc == 0)
		rc = cgt_fail(e, cgt_err_io, "cannot write '%s': %s", path, strerror(errno));
	if (rc == 0)
		rc = cgt_output_commit(&out.file, e);
	if (rc == 0 && !quiet && strcmp(out.file.written, out.file.path) != 0)
		fprintf(stderr, "cgtrace: %s exists: wrote %s\n", out.file.path, out.file.written);
out:
	if (rc < 0)
		cgt_output_blame(&out.file, e);
	output_discard(&out);
	return rc < 0 ? -1 : 0;
}

/* Where a module's symbols would be read from now (cgtrace info). */
static void describe_module(FILE *out, const struct cgt_module *m, void *arg)
{
	struct cgt_module_files f;
	struct cgt_error e;
	if (cgt_locate_module(arg, m, &f, &e) < 0) {
		fprintf(out, "      symbols: cannot be looked for: %s\n", e.msg);
		return;
	}
	if (f.source == CGT_MODULE_NOWHERE)
		fprintf(out, "      symbols: none found: %s\n", f.why != NULL ? f.why : "");
	else if (f.source == CGT_MODULE_RECORDED_PATH)
		fprintf(out, "      symbols: from the recorded path%s%s\n",
			f.debug != NULL ? ", with the debug file " : "", f.debug != NULL ? f.debug : "");
	else
		fprintf(out, "      symbols: from %s, %s%s%s\n", cgt_module_source_name(f.source), f.elf,
			f.debug != NULL ? ", with the debug file " : "", f.debug != NULL ? f.debug : "");
	cgt_module_files_free(&f);
}

static int cmd_info(int argc, char **argv)
{
	enum { OPT_BUILD_ID_DIR = 256, OPT_ARCHIVE };
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' },
						  { "build-id-dir", required_argument, NULL, OPT_BUILD_ID_DIR },
						  { "archive", required_argument, NULL, OPT_ARCHIVE },
						  { NULL, 0, NULL, 0 } };
	struct cgt_error e;
	const char *path, *build_id_dir = NULL, *archive = NULL;
	struct cgt_archive *opened = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_info, stdout);
			return 0;
		}
		if (c == OPT_BUILD_ID_DIR) {
			build_id_dir = optarg;
			continue;
		}
		if (c == OPT_ARCHIVE) {
			archive = optarg;
			continue;
		}
		fprintf(stderr, "\n%s", usage_info);
		return 2;
	}
	int rc = one_trace(argc, argv, usage_info, &path);
	if (rc != 0)
		return rc;
	int archive_damaged = choose_archive(path, archive, &opened);
	if (archive_damaged < 0)
		return 1;
	const struct cgt_decoder_options o = decoder_options();
	const struct cgt_locator_options where = locator_options(build_id_dir, opened);
	struct cgt_locator *locator;
	if (cgt_locator_open(&locator, &where, &e) < 0) {
		cgt_archive_close(opened);
		return report_error(&e);
	}
	const struct cgt_info_modules describe = { describe_module, locator };
	rc = cgt_trace_info(stdout, stderr, path, &o, &describe, &e);
	cgt_locator_close(locator);
	cgt_archive_close(opened);
	return rc < 0 ? report_error(&e) : rc > 0 || archive_damaged ? 3 : 0;
}

static int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = { { "limit", required_argument, NULL, 'n' },
						  { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	struct cgt_error e;
	uint64_t limit = 0;
	const char *path;
	int c;

	while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_number(optarg, 0, UINT64_MAX, 0, &limit) < 0)
				return usage_error(usage_dump, "bad --limit '%s' (expected a count)",
						   optarg);
			break;
		case 'h':
			fputs(usage_dump, stdout);
			return 0;
		default:
			fprintf(stderr, "\n%s", usage_dump);
			return 2;
		}
	}
	int rc = one_trace(argc, argv, usage_dump, &path);
	if (rc != 0)
		return rc;
	const struct cgt_decoder_options o = decoder_options();
	rc = cgt_trace_dump(stdout, stderr, path, &o, limit, &e);
	if (fflush(stdout) != 0 && errno == EPIPE)
		return 0;
	return rc < 0 ? report_error(&e) : rc > 0 ? 3 : 0;
}

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

static const struct command commands[] = {
	{ "record", cmd_record, usage_record },
	{ "simulate", cmd_simulate, usage_simulate },
	{ "report", cmd_report, usage_report },
	{ "archive", cmd_archive, usage_archive },
	{ "info", cmd_info, usage_info },
	{ "dump", cmd_dump, usage_dump },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	/* Valgrind starts its launcher -- cgtrace -- with the tool option first. */
	if (argc > 1 && strcmp(argv[1], "--tool=cgtrace") == 0) {
		struct cgt_error e;
		cgt_record_launcher(argc, argv, stderr, &e);	/* returns only if it failed */
		return report_error(&e);
	}

	if (argc < 2) {
		fputs(usage_main, stderr);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (strcmp(name, "--version") == 0) {
		printf("cgtrace %s\n", cgtrace_version);
		return 0;
	}
	if (strcmp(name, "help") == 0) {
		const struct command *cmd = argc > 2 ? find_command(argv[2]) : NULL;
		if (argc > 2 && cmd == NULL)
			return usage_error(usage_main, "unknown command '%s'", argv[2]);
		fputs(cmd ? cmd->usage : usage_main, stdout);
		return 0;
	}
	const struct command *cmd = find_command(name);
	if (cmd == NULL)
		return usage_error(usage_main, "unknown command '%s'", name);
	/* record handles signals itself: it passes them on to its program. */
	if (cmd->run != cmd_record)
		remove_temporaries_on_signals();
	optind = 1;
	int status = cmd->run(argc - 1, argv + 1);
	cgt_temporaries_wait_if_removing();
	return status;
}
