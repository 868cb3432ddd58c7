/*
 * `cgtrace simulate`: options as Cachegrind's, then decode -> simulate ->
 * report, wired together.
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "decode.h"
#include "record.h"
#include "report.h"
#include "sim.h"

const char usage_simulate[] =
	"usage: cgtrace simulate [options] TRACE\n"
	"\n"
	"Replays a recorded trace through Cachegrind's cache and branch-prediction\n"
	"models and writes a cachegrind.out file; run it again with other caches\n"
	"without running the program again -- or give several caches, and every\n"
	"combination is simulated in one replay.\n"
	"\n"
	"options (Cachegrind's):\n"
	"  --tool=cachegrind|callgrind      the profile to make [cachegrind]; with\n"
	"                                   callgrind, see --tool=callgrind --help\n"
	"  --cache-sim=yes|no               collect cache stats? [yes]\n"
	"  --branch-sim=yes|no              collect branch prediction stats? [no]\n"
	"  --I1=<size>,<assoc>,<line_size>  set I1 cache manually\n"
	"  --D1=<size>,<assoc>,<line_size>  set D1 cache manually\n"
	"  --LL=<size>,<assoc>,<line_size>  set LL cache manually\n"
	"  --instr-at-start=yes|no          simulate from the start? [yes]; the\n"
	"                                   program's CACHEGRIND_START_INSTRUMENTATION\n"
	"                                   and _STOP_ requests (Valgrind 3.22's\n"
	"                                   cachegrind.h) start and stop it; while\n"
	"                                   stopped nothing is counted, and the\n"
	"                                   caches keep their state\n"
	"  --cachegrind-out-file=<file>     output file name [cachegrind.out.%p, or\n"
	"                                   .1, .2, ... after it if that exists]\n"
	"  -o <file>                        the same\n"
	"  -q, --quiet                      no summary or configuration on stderr\n"
	"  -h, --help                       this help\n"
	"\n"
	"options (cgtrace's):\n"
	"  --L2=<size>,<assoc>,<line_size>  add a unified level between the L1s and LL\n"
	"                                   (in Valgrind, --L2 is an old alias of --LL;\n"
	"                                   here it is the level every CPU now has)\n"
	"  --caches=host                    the recording host's L1s, L2 and last level\n"
	"  --simulate-wb=no|yes             Callgrind's write-back LL: count the LL misses\n"
	"                                   that evict a dirty line (ILdmr DLdmr DLdmw,\n"
	"                                   after Cachegrind's events) [no]\n"
	"  --simulate-hwpref=no|yes         Callgrind's LL stream prefetcher [no]\n"
	"                                   (both as Callgrind models them: write-through\n"
	"                                   L1s; not with --L2)\n"
	"  --cacheuse=no|yes                Callgrind's cache use: how well each line was\n"
	"                                   used, charged when it is evicted to the\n"
	"                                   instruction that loaded it (AcCost1 SpLoss1\n"
	"                                   AcCost2 SpLoss2, after the other events) [no];\n"
	"                                   its caches are Callgrind's (writes as reads,\n"
	"                                   LL sees the lines L1 missed); not with --L2\n"
	"  --<L>-replacement=lru|fifo|plru  level L's replacement policy, L one of I1, D1,\n"
	"                                   L2, LL [lru]; fifo: the line that came in\n"
	"                                   first goes first; plru: tree pseudo-LRU\n"
	"                                   (ways a power of two); L2's is lru so far\n"
	"  --<L>-prefetch=none|callgrind    level L's prefetcher [none]; callgrind is\n"
	"                                   --simulate-hwpref=yes, LL's alone\n"
	"  --threads=<n>                    simulate on n threads [the CPUs it may use];\n"
	"                                   the results do not depend on it (with several\n"
	"                                   configurations or an L2, and n > 1, one more\n"
	"                                   counts executions and branches beside them)\n"
	"  --sweep-summary=<file>           every configuration's totals, as CSV (.csv)\n"
	"                                   or JSON (.json)\n"
	"  --plot=<file.svg>                miss-ratio curves of the configurations\n"
	"  --build-id-dir=<dir>             the build-id cache to find modules in\n"
	"                                   [$XDG_CACHE_HOME/cgtrace/build-id]\n"
	"  --archive=<file>                 an archive to find modules in (made by\n"
	"                                   cgtrace archive) [TRACE.archive, if there]\n"
	"\n"
	"Sizes are in bytes; as an extension they may end in k (KiB) or M (MiB).\n"
	"Caches not given are the recording host's, chosen and adjusted by\n"
	"Cachegrind's rules (I1 and D1: the level-1 caches; LL: the last level;\n"
	"no L2 unless --L2 or --caches=host).  With an L2, a reference that misses\n"
	"its L1 is looked up at L2, and one that misses L2 at LL; L2 must be at\n"
	"least as large as each L1, LL as L2, and line sizes must not shrink going\n"
	"down.  Its events: Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw.\n"
	"\n"
	"Many configurations in one pass: any of --I1, --D1, --L2 and --LL may be\n"
	"given several times, and the size and associativity fields may be ranges\n"
	"lo..hi, every power of two from lo to hi (--D1=4k..1M,1..16,64).  Every\n"
	"combination is simulated (at most 1024), each into a file of its own,\n"
	"the same as a run with that configuration alone would write; the output\n"
	"name must then contain %c, the configuration's label (the levels given,\n"
	"e.g. D1-32768-8-64.LL-8388608-16-64) [cachegrind.out.%p.%c].  A table of\n"
	"their totals goes to stderr.  Configurations of one run must share their\n"
	"smallest line size.\n"
	"\n"
	"Symbols and lines: each module is read from its recorded path if the file\n"
	"there is still the one recorded, else from the build-id cache that\n"
	"cgtrace record fills, else from the archive, else from the servers of\n"
	"DEBUGINFOD_URLS (each request given up after DEBUGINFOD_TIMEOUT seconds\n"
	"[10] or DEBUGINFOD_MAXSIZE bytes [4 GiB]); a file is used only if its\n"
	"build-id is the recorded one.  A module found nowhere is shown as ???\n"
	"with one warning.  An archive named that is not one is an error; a\n"
	"damaged one is used for the members it holds whole.\n"
	"\n"
	"%p in the output name is the recorded program's pid, %q{VAR} the\n"
	"environment variable VAR, %% a %.\n"
	"\n"
	"Output: without -o, an existing file is never replaced: the results go\n"
	"to the first free name of cachegrind.out.<pid>.1, .2, ... (said on\n"
	"stderr unless -q).  With -o, a cachegrind.out or empty file is replaced\n"
	"once the new one is complete; a symlink is followed and what it points\n"
	"to is written by these rules (the link stays); a device or FIFO is\n"
	"written to.  Refused before simulating: the trace itself (also through\n"
	"links), any other cgtrace trace, any other non-empty file.  The summary\n"
	"and plot files may replace any file but a trace.  No two outputs of a\n"
	"run may be one file (also through links).\n"
	"\n"
	"exit status: 0 done; 1 error; 2 bad usage; 3 done, but the trace was\n"
	"incomplete (truncated, damaged or without an end record): only what it\n"
	"holds was simulated; or the archive was: only the modules it holds whole\n"
	"were read from it.\n";

enum { OPT_CACHE_SIM = 256, OPT_BRANCH_SIM, OPT_I1, OPT_D1, OPT_L2, OPT_LL, OPT_OUT, OPT_THREADS,
       OPT_CACHES, OPT_SWEEP_SUMMARY, OPT_PLOT, OPT_BUILD_ID_DIR, OPT_ARCHIVE, OPT_TOOL,
       OPT_INSTR_AT_START, OPT_SIMULATE_WB, OPT_SIMULATE_HWPREF, OPT_CACHEUSE, OPT_LEVEL_MODEL };

/* Cachegrind's handling of a bad --I1/--D1/--LL: its messages, status 1. */
static int bad_cache_option(const char *name, const char *value, int result,
			    const struct cgt_cache_config *c)
{
	if (result == CGT_CACHE_INVALID)
		fprintf(stderr, "cgtrace: %s\n", cgt_cache_check(c));
	fprintf(stderr, "cgtrace: Bad option: --%s=%s\n", name, value);
	if (result == CGT_CACHE_OVERFLOW)
		fprintf(stderr, "cgtrace: One of the cache parameters was too large and overflowed.\n");
	else
		fprintf(stderr, "cgtrace: Bad argument '%s'\n", value);
	fprintf(stderr, "cgtrace: Use --help for more information or consult the user manual.\n");
	return 1;
}

/* A "\r"-updated progress line, only on a terminal. */
struct progress {
	int on;
	struct timespec last;
};

static void progress_update(void *arg, uint64_t done, uint64_t total, uint64_t insns)
{
	struct progress *p = arg;
	struct timespec now;

	if (!p->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - p->last.tv_sec) * 1000000000L + (now.tv_nsec - p->last.tv_nsec) < 250000000L)
		return;
	p->last = now;
	fprintf(stderr, "\rcgtrace: simulating: %3.0f%%", total ? 100.0 * (double)done / (double)total : 0.0);
	/* The hierarchy engine, running beside the pass that counts them,
	   knows no instruction count. */
	if (insns != 0)
		fprintf(stderr, ", %llu M instructions ", (unsigned long long)(insns / 1000000));
}

static void progress_done(struct progress *p)
{
	if (p->on)
		fprintf(stderr, "\r%60s\r", "");
}

struct preload {
	struct cgt_symbolizer *sy;
	const struct cgt_decoder *d;
};

static void *preload_modules(void *arg)
{
	struct preload *p = arg;
	const struct cgt_module *m;
	size_t n = cgt_decoder_first_modules(p->d, &m);

	for (size_t i = 0; i < n; i++)
		cgt_symbolizer_preload(p->sy, &m[i]);
	return NULL;
}

uint64_t usable_cpus(void)
{
	cpu_set_t set;
	long n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
							       : sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (uint64_t)n;
}

/* The output name of configuration label: %c in tmpl replaced by it (%%
   left for cgt_expand_output_name), then the rest expanded.  NULL, with
   *why, if the name is bad. */
static char *output_name(const char *tmpl, const char *label, long pid, const char **why)
{
	size_t n = 1;
	for (const char *p = tmpl; *p; p++)
		n += p[0] == '%' && p[1] == 'c' ? strlen(label) : 1;
	char *with_label = malloc(n), *out = with_label;
	if (with_label == NULL) {
		*why = "out of memory";
		return NULL;
	}
	for (const char *p = tmpl; *p; p++) {
		if (p[0] == '%' && p[1] == '%') {
			*out++ = *p++;
			*out++ = *p;
		} else if (p[0] == '%' && p[1] == 'c') {
			out = stpcpy(out, label);
			p++;
		} else {
			*out++ = *p;
		}
	}
	*out = '\0';
	char *name = cgt_expand_output_name(with_label, pid, why);
	free(with_label);
	return name;
}

static int has_label(const char *tmpl)
{
	for (const char *p = tmpl; *p; p++) {
		if (p[0] == '%' && p[1] == '%')
			p++;
		else if (p[0] == '%' && p[1] == 'c')
			return 1;
	}
	return 0;
}

#define MAX_LINKS 40	/* as Linux follows */

/* The file a name stands for, to tell whether two names are one: its real
   path, or its directory's and its base name if it does not exist yet (as
   spelt if neither does); a link to a file not made yet stands for that
   file (after at most links_left links).  NULL if out of memory. */
static char *resolve_name(const char *name, int links_left)
{
	char *real = realpath(name, NULL);
	if (real != NULL)
		return real;
	char target[4096];
	ssize_t n = links_left > 0 ? readlink(name, target, sizeof(target) - 1) : -1;
	if (n > 0) {
		target[n] = 0;
		const char *slash = strrchr(name, '/');
		int dir_len = target[0] == '/' || slash == NULL ? 0 : (int)(slash - name) + 1;
		char *followed = malloc((size_t)dir_len + (size_t)n + 1);
		if (followed == NULL)
			return NULL;
		sprintf(followed, "%.*s%s", dir_len, name, target);
		char *r = resolve_name(followed, links_left - 1);
		free(followed);
		return r;
	}
	const char *slash = strrchr(name, '/');
	char *dir = slash == NULL ? strdup(".") : strndup(name, slash == name ? 1 : (size_t)(slash - name));
	char *real_dir = dir != NULL ? realpath(dir, NULL) : NULL;
	const char *base = slash == NULL ? name : slash + 1;
	char *joined = NULL;
	if (real_dir == NULL)
		joined = strdup(name);
	else if ((joined = malloc(strlen(real_dir) + strlen(base) + 2)) != NULL)
		sprintf(joined, "%s/%s", real_dir, base);
	free(dir);
	free(real_dir);
	return joined;
}

/* No output of the run may replace another: the summary, the plot and
   the cachegrind.out files name different files.  0, or -1 (said). */
static int outputs_apart(char *const *out_paths, int n_out, const char *summary, const char *plot)
{
	const char *named[2] = { summary, plot };
	const char *option[2] = { "--sweep-summary", "--plot" };
	int rc = 0;
	for (int k = 0; k < 2 && rc == 0; k++) {
		if (named[k] == NULL)
			continue;
		char *mine = resolve_name(named[k], MAX_LINKS);
		for (int j = -1; j < n_out && rc == 0; j++) {
			const char *other = j < 0 ? (k == 1 ? summary : NULL) : out_paths[j];
			if (other == NULL)
				continue;
			char *theirs = resolve_name(other, MAX_LINKS);
			if (mine == NULL || theirs == NULL) {
				fprintf(stderr, "cgtrace: out of memory\n");
				rc = -1;
			} else if (strcmp(mine, theirs) == 0) {
				fprintf(stderr, "cgtrace: %s '%s' names the same file as %s '%s': one would "
						"replace the other\n",
					option[k], named[k], j < 0 ? "--sweep-summary" : "the output file",
					other);
				rc = -1;
			}
			free(theirs);
		}
		free(mine);
	}
	return rc;
}

/* A sweep's summary file (write_output's data). */
struct summary {
	const struct cgt_sweep_table *table;
	int json;
};

static int write_summary(FILE *f, const void *data, struct cgt_error *e)
{
	const struct summary *s = data;
	return cgt_sweep_write_summary(f, s->json, s->table, e);
}

static int write_plot(FILE *f, const void *data, struct cgt_error *e)
{
	return cgt_sweep_write_plot(f, data, e);
}

/* The caches not given: the recording host's, by Cachegrind's rules (and
   with --caches=host its L2).  Messages and warnings printed; -1 if one
   that is needed cannot be simulated. */
static int host_caches(const struct cgt_trace_header *h, const struct cgt_cache_list lists[],
		       int host, int cache_sim, int quiet, struct cgt_hierarchy *out)
{
	struct cgt_cache_defaults defaults;
	int all_given = lists[CGT_LEVEL_I1].n && lists[CGT_LEVEL_D1].n && lists[CGT_LEVEL_LL].n;
	cgt_cache_defaults(h, lists[CGT_LEVEL_LL].n > 0, &defaults);
	if (!quiet && cache_sim && !all_given)
		for (unsigned i = 0; i < defaults.n_warnings; i++)
			fprintf(stderr, "cgtrace: %s\n", defaults.warnings[i]);
	memset(out, 0, sizeof(*out));
	out->level[CGT_LEVEL_I1] = defaults.I1;
	out->level[CGT_LEVEL_D1] = defaults.D1;
	out->level[CGT_LEVEL_LL] = defaults.LL;
	if (host && lists[CGT_LEVEL_L2].n == 0) {
		out->level[CGT_LEVEL_L2] = defaults.L2;
		if (!quiet)
			for (unsigned i = 0; i < defaults.n_l2_warnings; i++)
				fprintf(stderr, "cgtrace: %s\n", defaults.l2_warnings[i]);
	}
	for (int l = 0; l < CGT_N_LEVELS; l++) {
		const struct cgt_cache_config *c = &out->level[l];
		const char *why = cgt_cache_check(c);
		if (c->size == 0 && l == CGT_LEVEL_L2)
			continue;
		if (why != NULL && lists[l].n == 0 && cache_sim) {
			fprintf(stderr,
				"cgtrace: the recording host's %s cache is not one Cachegrind supports: %s\n"
				"cgtrace:   %s: %d B, %d-way, %d B lines\n"
				"cgtrace: give one with --%s=<size>,<assoc>,<line_size>\n",
				cgt_level_names[l], why, cgt_level_names[l], c->size, c->assoc, c->line,
				cgt_level_names[l]);
			return -1;
		}
	}
	return 0;
}

int cmd_simulate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cache-sim", required_argument, NULL, OPT_CACHE_SIM },
		{ "branch-sim", required_argument, NULL, OPT_BRANCH_SIM },
		{ "I1", required_argument, NULL, OPT_I1 },
		{ "D1", required_argument, NULL, OPT_D1 },
		{ "L2", required_argument, NULL, OPT_L2 },
		{ "LL", required_argument, NULL, OPT_LL },
		{ "caches", required_argument, NULL, OPT_CACHES },
		{ "cachegrind-out-file", required_argument, NULL, OPT_OUT },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "sweep-summary", required_argument, NULL, OPT_SWEEP_SUMMARY },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "build-id-dir", required_argument, NULL, OPT_BUILD_ID_DIR },
		{ "archive", required_argument, NULL, OPT_ARCHIVE },
		{ "tool", required_argument, NULL, OPT_TOOL },
		{ "instr-at-start", required_argument, NULL, OPT_INSTR_AT_START },
		{ "simulate-wb", required_argument, NULL, OPT_SIMULATE_WB },
		{ "simulate-hwpref", required_argument, NULL, OPT_SIMULATE_HWPREF },
		{ "cacheuse", required_argument, NULL, OPT_CACHEUSE },
		LEVEL_MODEL_LONGOPTS(OPT_LEVEL_MODEL),
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* --tool=callgrind is a command of its own, with Callgrind's options */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--tool=callgrind") == 0)
			return cmd_simulate_callgrind(argc, argv);
	struct cgt_sim_options so = { .cache_sim = 1, .branch_sim = 0, .instr_at_start = 1 };
	struct cgt_cache_list lists[CGT_N_LEVELS] = { { 0 } };
	const char *out_tmpl = NULL;	/* NULL: the default name, never replacing a file */
	const char *summary_path = NULL, *plot_path = NULL, *build_id_dir = NULL, *archive = NULL;
	struct cgt_archive *opened_archive = NULL;
	int archive_damaged = 0;
	uint64_t threads = usable_cpus();
	int quiet = 0, host = 0, c, status = 1;
	struct cgt_error e;

	int option_index = 0;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, &option_index)) != -1) {
		int level = -1;
		switch (c) {
		case OPT_CACHE_SIM:
		case OPT_BRANCH_SIM:
			if (parse_yes_no(optarg, c == OPT_CACHE_SIM ? &so.cache_sim : &so.branch_sim) < 0) {
				status = usage_error(usage_simulate, "bad --%s '%s' (expected yes or no)",
						     c == OPT_CACHE_SIM ? "cache-sim" : "branch-sim", optarg);
				goto free_lists;
			}
			break;
		case OPT_I1: level = CGT_LEVEL_I1; break;
		case OPT_D1: level = CGT_LEVEL_D1; break;
		case OPT_L2: level = CGT_LEVEL_L2; break;
		case OPT_LL: level = CGT_LEVEL_LL; break;
		case OPT_CACHES:
			if (strcmp(optarg, "host") != 0) {
				status = usage_error(usage_simulate, "bad --caches '%s' (expected host)", optarg);
				goto free_lists;
			}
			host = 1;
			break;
		case 'o':
		case OPT_OUT:
			out_tmpl = optarg;
			break;
		case OPT_SWEEP_SUMMARY:
			if (cgt_sweep_summary_format(optarg) < 0) {
				status = usage_error(usage_simulate,
						     "bad --sweep-summary '%s' (expected a name ending in .csv or .json)",
						     optarg);
				goto free_lists;
			}
			summary_path = optarg;
			break;
		case OPT_PLOT:
			plot_path = optarg;
			break;
		case OPT_BUILD_ID_DIR:
			build_id_dir = optarg;
			break;
		case OPT_ARCHIVE:
			archive = optarg;
			break;
		case OPT_THREADS:
			if (parse_number(optarg, 1, 64, 0, &threads) < 0) {
				status = usage_error(usage_simulate, "bad --threads '%s' (expected 1 to 64)",
						     optarg);
				goto free_lists;
			}
			break;
		case OPT_INSTR_AT_START:
			if (parse_yes_no(optarg, &so.instr_at_start) < 0) {
				status = usage_error(usage_simulate,
						     "bad --instr-at-start '%s' (expected yes or no)", optarg);
				goto free_lists;
			}
			break;
		case OPT_SIMULATE_WB:
		case OPT_SIMULATE_HWPREF:
		case OPT_CACHEUSE: {
			int yes;
			if (parse_yes_no(optarg, &yes) < 0) {
				status = usage_error(usage_simulate, "bad --%s '%s' (expected yes or no)",
						     longopts[option_index].name, optarg);
				goto free_lists;
			}
			if (c == OPT_SIMULATE_WB)
				so.model.write_back = yes;
			else if (c == OPT_CACHEUSE)
				so.model.cache_use = yes;
			else
				parse_level_model(usage_simulate, "LL-prefetch", yes ? "callgrind" : "none",
						  &so.model);
			break;
		}
		case OPT_LEVEL_MODEL:
			if ((status = parse_level_model(usage_simulate, longopts[option_index].name, optarg,
							&so.model)) != 0)
				goto free_lists;
			status = 1;
			break;
		case OPT_TOOL:
			if (strcmp(optarg, "cachegrind") != 0) {
				status = usage_error(usage_simulate,
						     "bad --tool '%s' (expected cachegrind or callgrind)", optarg);
				goto free_lists;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_simulate, stdout);
			status = 0;
			goto free_lists;
		default:
			fprintf(stderr, "\n%s", usage_simulate);
			status = 2;
			goto free_lists;
		}
		if (level >= 0) {
			struct cgt_cache_config parsed;
			int rc = cgt_cache_list_add(&lists[level], cgt_level_names[level], optarg, &parsed, &e);
			if (rc == CGT_CACHE_BAD_RANGE) {
				status = report_error(&e);
				goto free_lists;
			}
			if (rc != CGT_CACHE_OK) {
				status = bad_cache_option(cgt_level_names[level], optarg, rc, &parsed);
				goto free_lists;
			}
		}
	}
	const char *path;
	status = one_trace(argc, argv, usage_simulate, &path);
	if (status != 0)
		goto free_lists;
	status = 1;
	if ((archive_damaged = choose_archive(path, archive, &opened_archive)) < 0)
		goto free_lists;

	struct cgt_decoder *d = NULL;
	struct cgt_sim *sim = NULL;
	struct cgt_symbolizer *sy = NULL;
	struct cgt_profile_lines *lines = NULL;
	struct cgt_sweep_config *configs = NULL;
	struct cgt_hierarchy *hierarchies = NULL;
	char **out_paths = NULL;
	uint64_t *all_totals = NULL;
	struct cgt_profile profile = { 0 };
	int n_configs = 0;

	const struct cgt_decoder_options talk = decoder_options();
	if (cgt_decoder_open(&d, path, &talk, &e) < 0) {
		report_error(&e);
		goto free_lists;
	}
	const struct cgt_trace_header *h = cgt_decoder_header(d);

	struct cgt_hierarchy host_h;
	if (host_caches(h, lists, host, so.cache_sim, quiet, &host_h) < 0)
		goto out;
	n_configs = cgt_sweep_expand(lists, &host_h, &configs, &e);
	if (n_configs < 0) {
		report_error(&e);
		goto out;
	}
	if (so.model.cache_use && so.cache_sim)
		cache_use_model(&so.model, quiet);
	for (int k = 0; k < n_configs && so.cache_sim; k++)
		if (check_cache_model(&so.model, &configs[k].h) != 0) {
			status = 2;
			goto out;
		}
	int policy = 0;	/* a replacement policy other than lru (0) */
	for (int k = 0; k < CGT_N_LEVELS; k++)
		policy |= so.model.replacement[k] != 0;
	if (!so.cache_sim &&
	    (so.model.write_back || cgt_cache_model_prefetches(&so.model) || so.model.cache_use || policy)) {
		fprintf(stderr, "cgtrace: %s models caches: not with --cache-sim=no\n",
			so.model.cache_use    ? "--cacheuse=yes"
			: so.model.write_back ? "--simulate-wb=yes"
			: cgt_cache_model_prefetches(&so.model)
				? "a prefetcher (--simulate-hwpref=yes, --LL-prefetch)"
				: "a replacement policy other than lru");
		status = 2;
		goto out;
	}
	if (!so.cache_sim && n_configs > 1) {
		fprintf(stderr, "cgtrace: %d cache configurations given with --cache-sim=no: without "
				"cache simulation they would all count the same\n",
			n_configs);
		goto out;
	}
	if (!quiet && so.cache_sim && n_configs == 1) {
		char desc[CGT_N_LEVELS][128], line[600] = "";
		for (int l = 0; l < CGT_N_LEVELS; l++) {
			if (configs[0].h.level[l].size == 0)
				continue;
			cgt_cache_describe(&configs[0].h.level[l], desc[l], sizeof(desc[l]));
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s %s",
				 line[0] ? "; " : "", cgt_level_names[l], desc[l]);
		}
		fprintf(stderr, "cgtrace: %s\n", line);
	} else if (!quiet && so.cache_sim) {
		fprintf(stderr, "cgtrace: %d cache configurations, simulated in one replay\n", n_configs);
	}

	/* Every output name, checked before simulating: a trace, the input or
	   a user's file is never overwritten; without -o nothing is.  No two
	   are one: the labels that %c puts in are (cgt_sweep_expand). */
	const char *tmpl = out_tmpl ? out_tmpl : n_configs > 1 ? "cachegrind.out.%p.%c" : "cachegrind.out.%p";
	if (n_configs > 1 && !has_label(tmpl)) {
		fprintf(stderr,
			"cgtrace: %d configurations need %d output files: the output name '%s' must "
			"contain %%c, the configuration's label\n",
			n_configs, n_configs, tmpl);
		goto out;
	}
	out_paths = calloc((size_t)n_configs, sizeof(*out_paths));
	hierarchies = malloc((size_t)n_configs * sizeof(*hierarchies));
	if (out_paths == NULL || hierarchies == NULL) {
		fprintf(stderr, "cgtrace: out of memory\n");
		goto out;
	}
	const char *inputs[] = { path };
	for (int k = 0; k < n_configs; k++) {
		const char *why;
		hierarchies[k] = configs[k].h;
		out_paths[k] = output_name(tmpl, configs[k].label, (long)h->pid, &why);
		if (out_paths[k] == NULL) {
			fprintf(stderr, "cgtrace: bad output name '%s': %s\n", tmpl, why);
			goto out;
		}
		if (out_tmpl != NULL && cgt_output_check(out_paths[k], CGT_OUTPUT_CGOUT, inputs, 1, &e) < 0) {
			report_error(&e);
			goto out;
		}
	}
	for (int k = 0; k < 2; k++) {
		const char *named = k == 0 ? summary_path : plot_path;
		if (named != NULL && cgt_output_check(named, CGT_OUTPUT_NAMED, inputs, 1, &e) < 0) {
			report_error(&e);
			goto out;
		}
	}
	if (outputs_apart(out_paths, n_configs, summary_path, plot_path) < 0)
		goto out;
	so.configs = hierarchies;
	so.n_configs = (unsigned)n_configs;
	/* Another pass (sim.h) opens the decode of a pt trace itself. */
	so.trace_path = cgt_decoder_replayed(d) != NULL ? cgt_decoder_replayed(d) : path;
	if (cgt_sim_open(&sim, &so, h->max_access_size, &e) < 0) {
		report_error(&e);
		goto out;
	}

	/* The modules' symbols and line tables are read meanwhile. */
	struct preload preload = { NULL, d };
	pthread_t preloader;
	const struct cgt_locator_options where = locator_options(build_id_dir, opened_archive);
	int preloading = cgt_symbolizer_open(&preload.sy, &where, &e) == 0 &&
			 cgt_thread_create(&preloader, preload_modules, &preload) == 0;
	sy = preload.sy;
	struct progress progress = { isatty(STDERR_FILENO), { 0, 0 } };
	struct cgt_sim_progress tell = { progress_update, &progress };
	int rc = cgt_sim_trace(sim, d, (unsigned)threads, progress.on ? &tell : NULL, &e);
	if (preloading)
		pthread_join(preloader, NULL);
	progress_done(&progress);
	if (rc < 0) {
		report_error(&e);
		goto out;
	}

	if (sy == NULL && cgt_symbolizer_open(&sy, &where, &e) < 0) {
		report_error(&e);
		goto out;
	}
	const struct cgt_mapping *maps;
	size_t n_maps = cgt_decoder_mappings(d, &maps);
	cgt_symbolizer_use_mappings(sy, maps, n_maps);
	const struct cgt_block_table *blocks = cgt_decoder_blocks(d);
	if (cgt_profile_lines_open(&lines, blocks, sy, &e) < 0) {
		report_error(&e);
		goto out;
	}
	all_totals = calloc((size_t)n_configs, CGT_MAX_EVENTS * sizeof(*all_totals));
	if (all_totals == NULL) {
		fprintf(stderr, "cgtrace: out of memory\n");
		goto out;
	}
	/* A FIFO whose reader went away is an error to report, not a death. */
	signal(SIGPIPE, SIG_IGN);
	for (int k = 0; k < n_configs; k++) {
		struct output output = { 0 };
		if (cgt_sim_profile(sim, (unsigned)k, blocks, &profile, &e) < 0 ||
		    output_prepare(&output, out_paths[k], out_tmpl == NULL, &e) < 0 ||
		    cgt_write_cachegrind_out(output.file.write_path, &profile, lines, h, &e) < 0 ||
		    cgt_output_commit(&output.file, &e) < 0) {
			cgt_output_blame(&output.file, &e);
			report_error(&e);
			output_discard(&output);
			goto out;
		}
		if (!quiet && strcmp(output.file.written, output.file.path) != 0)
			fprintf(stderr, "cgtrace: %s exists: wrote %s\n", output.file.path,
				output.file.written);
		output_discard(&output);
		memcpy(all_totals + (size_t)k * CGT_MAX_EVENTS, profile.totals, sizeof(profile.totals));
		if (k + 1 < n_configs)
			cgt_profile_free(&profile);
	}
	if (n_configs == 1 && !quiet)
		cgt_print_summary(stderr, (long)h->pid, &profile.events, profile.totals);
	if (n_configs > 1 || summary_path != NULL || plot_path != NULL) {
		struct cgt_sweep_row *rows = calloc((size_t)n_configs, sizeof(*rows));
		if (rows == NULL) {
			fprintf(stderr, "cgtrace: out of memory\n");
			goto out;
		}
		for (int k = 0; k < n_configs; k++)
			rows[k] = (struct cgt_sweep_row){ configs[k].label, configs[k].h,
							  all_totals + (size_t)k * CGT_MAX_EVENTS };
		struct cgt_sweep_table table = { &profile.events, rows, (unsigned)n_configs };
		rc = quiet || n_configs == 1 ? 0 : cgt_sweep_print(stderr, &table, &e);
		if (rc == 0 && summary_path != NULL) {
			const struct summary s = { &table, cgt_sweep_summary_format(summary_path) };
			rc = write_output(summary_path, 1, CGT_OUTPUT_NAMED, path, quiet,
					  write_summary, &s, &e);
		}
		if (rc == 0 && plot_path != NULL)
			rc = write_output(plot_path, 1, CGT_OUTPUT_NAMED, path, quiet, write_plot,
					  &table, &e);
		free(rows);
		if (rc < 0) {
			report_error(&e);
			goto out;
		}
	}
	status = 0;
	const struct cgt_pt_decoded *pt = &h->decoded;
	if (pt->present && pt->overflows + pt->errors + pt->breaks != 0)
		fprintf(stderr, "cgtrace: warning: parts of the Intel PT trace were lost (overflows: %llu, "
				"decode errors: %llu, lost pieces: %llu): what ran there is not counted\n",
			(unsigned long long)pt->overflows, (unsigned long long)pt->errors,
			(unsigned long long)pt->breaks);
	if (cgt_decoder_warn_incomplete(d, 1, stderr)) {
		fprintf(stderr, "cgtrace: warning: simulated only what the trace holds\n");
		status = 3;
	}
	if (archive_damaged)
		status = 3;
out:
	cgt_profile_free(&profile);
	free(all_totals);
	for (int k = 0; out_paths != NULL && k < n_configs; k++)
		free(out_paths[k]);
	free(out_paths);
	free(hierarchies);
	free(configs);
	cgt_profile_lines_close(lines);
	cgt_symbolizer_close(sy);
	cgt_sim_close(sim);
	cgt_decoder_close(d);
free_lists:
	for (int l = 0; l < CGT_N_LEVELS; l++)
		cgt_cache_list_free(&lists[l]);
	cgt_archive_close(opened_archive);
	return status;
}
