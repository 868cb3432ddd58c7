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
	"without running the program again.\n"
	"\n"
	"options (Cachegrind's):\n"
	"  --cache-sim=yes|no               collect cache stats? [yes]\n"
	"  --branch-sim=yes|no              collect branch prediction stats? [no]\n"
	"  --I1=<size>,<assoc>,<line_size>  set I1 cache manually\n"
	"  --D1=<size>,<assoc>,<line_size>  set D1 cache manually\n"
	"  --LL=<size>,<assoc>,<line_size>  set LL cache manually (also --L2)\n"
	"  --cachegrind-out-file=<file>     output file name [cachegrind.out.%p, or\n"
	"                                   .1, .2, ... after it if that exists]\n"
	"  -o <file>                        the same\n"
	"  -q, --quiet                      no summary or configuration on stderr\n"
	"  -h, --help                       this help\n"
	"\n"
	"options (cgtrace's):\n"
	"  --threads=<n>                    simulate on n threads [the CPUs it may use];\n"
	"                                   the results do not depend on it\n"
	"\n"
	"Sizes are in bytes; as an extension they may end in k (KiB) or M (MiB).\n"
	"Caches not given are the recording host's, chosen and adjusted by\n"
	"Cachegrind's rules (I1 and D1: the level-1 caches; LL: the last level).\n"
	"%p in the output name is the recorded program's pid, %q{VAR} the\n"
	"environment variable VAR, %% a %.\n"
	"\n"
	"Output: without -o, an existing file is never replaced: the results go\n"
	"to the first free name of cachegrind.out.<pid>.1, .2, ... (said on\n"
	"stderr unless -q).  With -o, a cachegrind.out or empty file is replaced\n"
	"once the new one is complete; a symlink is followed and what it points\n"
	"to is written by these rules (the link stays); a device or FIFO is\n"
	"written to.  Refused before simulating: the trace itself (also through\n"
	"links), any other cgtrace trace, any other non-empty file.\n"
	"\n"
	"exit status: 0 done; 1 error; 2 bad usage; 3 done, but the trace was\n"
	"incomplete (truncated, damaged or without an end record): only what it\n"
	"holds was simulated.\n";

enum { OPT_CACHE_SIM = 256, OPT_BRANCH_SIM, OPT_I1, OPT_D1, OPT_LL, OPT_OUT, OPT_THREADS };

struct cache_option {
	struct cgt_cache_config config;
	int given;
};

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
	fprintf(stderr, "\rcgtrace: simulating: %3.0f%%, %llu M instructions ",
		total ? 100.0 * (double)done / (double)total : 0.0,
		(unsigned long long)(insns / 1000000));
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

/* The default --threads: the CPUs this process may run on (its affinity
   mask, as taskset or a container's cpuset sets it), at most 64. */
static uint64_t usable_cpus(void)
{
	cpu_set_t set;
	long n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
							       : sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (uint64_t)n;
}

int cmd_simulate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cache-sim", required_argument, NULL, OPT_CACHE_SIM },
		{ "branch-sim", required_argument, NULL, OPT_BRANCH_SIM },
		{ "I1", required_argument, NULL, OPT_I1 },
		{ "D1", required_argument, NULL, OPT_D1 },
		{ "LL", required_argument, NULL, OPT_LL },
		{ "L2", required_argument, NULL, OPT_LL },
		{ "cachegrind-out-file", required_argument, NULL, OPT_OUT },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cgt_sim_options so = { .cache_sim = 1, .branch_sim = 0 };
	struct cache_option I1 = { 0 }, D1 = { 0 }, LL = { 0 };
	const char *out_tmpl = NULL;	/* NULL: the default name, never replacing a file */
	uint64_t threads = usable_cpus();
	int quiet = 0, c;

	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		struct cache_option *cache = NULL;
		const char *name = NULL;
		switch (c) {
		case OPT_CACHE_SIM:
		case OPT_BRANCH_SIM:
			if (parse_yes_no(optarg, c == OPT_CACHE_SIM ? &so.cache_sim : &so.branch_sim) < 0)
				return usage_error(usage_simulate, "bad --%s '%s' (expected yes or no)",
						   c == OPT_CACHE_SIM ? "cache-sim" : "branch-sim", optarg);
			break;
		case OPT_I1: cache = &I1; name = "I1"; break;
		case OPT_D1: cache = &D1; name = "D1"; break;
		case OPT_LL: cache = &LL; name = "LL"; break;
		case 'o':
		case OPT_OUT:
			out_tmpl = optarg;
			break;
		case OPT_THREADS:
			if (parse_number(optarg, 1, 64, 0, &threads) < 0)
				return usage_error(usage_simulate, "bad --threads '%s' (expected 1 to 64)",
						   optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_simulate, stdout);
			return 0;
		default:
			fprintf(stderr, "\n%s", usage_simulate);
			return 2;
		}
		if (cache != NULL) {
			int rc = cgt_cache_parse(optarg, &cache->config);
			if (rc != CGT_CACHE_OK)
				return bad_cache_option(name, optarg, rc, &cache->config);
			cache->given = 1;
		}
	}
	const char *path;
	int rc = one_trace(argc, argv, usage_simulate, &path);
	if (rc != 0)
		return rc;

	struct cgt_error e;
	struct cgt_decoder *d = NULL;
	struct cgt_sim *sim = NULL;
	struct cgt_symbolizer *sy = NULL;
	struct cgt_output output = { 0 };
	char *out_path = NULL;
	int status = 1;

	if (cgt_decoder_open(&d, path, &e) < 0) {
		report_error(&e);
		return 1;
	}
	const struct cgt_trace_header *h = cgt_decoder_header(d);

	/* Caches: the recording host's by Cachegrind's rules, then the options. */
	struct cgt_cache_defaults defaults;
	cgt_cache_defaults(h, LL.given, &defaults);
	if (!quiet && so.cache_sim)
		for (unsigned i = 0; i < defaults.n_warnings; i++)
			if (!(I1.given && D1.given && LL.given))
				fprintf(stderr, "cgtrace: %s\n", defaults.warnings[i]);
	struct {
		const char *name;
		struct cache_option *given;
		struct cgt_cache_config *detected, *used;
	} caches[3] = { { "I1", &I1, &defaults.I1, &so.I1 },
			{ "D1", &D1, &defaults.D1, &so.D1 },
			{ "LL", &LL, &defaults.LL, &so.LL } };
	for (int i = 0; i < 3; i++) {
		const char *why = cgt_cache_check(caches[i].detected);
		if (why != NULL && !caches[i].given->given && so.cache_sim) {
			fprintf(stderr,
				"cgtrace: the recording host's %s cache is not one Cachegrind supports: %s\n"
				"cgtrace:   %s: %d B, %d-way, %d B lines\n"
				"cgtrace: give one with --%s=<size>,<assoc>,<line_size>\n",
				caches[i].name, why, caches[i].name, caches[i].detected->size,
				caches[i].detected->assoc, caches[i].detected->line, caches[i].name);
			goto out;
		}
		*caches[i].used = caches[i].given->given ? caches[i].given->config : *caches[i].detected;
	}
	if (!quiet && so.cache_sim) {
		char desc[3][128];
		for (int i = 0; i < 3; i++)
			cgt_cache_describe(caches[i].used, desc[i], sizeof(desc[i]));
		fprintf(stderr, "cgtrace: I1 %s; D1 %s; LL %s\n", desc[0], desc[1], desc[2]);
	}

	const char *why, *tmpl = out_tmpl ? out_tmpl : "cachegrind.out.%p";
	out_path = cgt_expand_output_name(tmpl, (long)h->pid, &why);
	if (out_path == NULL) {
		fprintf(stderr, "cgtrace: bad output name '%s': %s\n", tmpl, why);
		goto out;
	}
	/* Checked before simulating: a trace, the input or a user's file is
	   never overwritten; without -o nothing is (cgt_output_commit). */
	const char *inputs[] = { path };
	if ((out_tmpl != NULL && cgt_output_check(out_path, CGT_OUTPUT_CGOUT, inputs, 1, &e) < 0) ||
	    cgt_output_prepare(&output, out_path, out_tmpl == NULL, &e) < 0) {
		report_error(&e);
		goto out;
	}
	if (cgt_sim_open(&sim, &so, h->max_access_size, &e) < 0) {
		fprintf(stderr, "cgtrace: %s\n", e.msg);
		goto out;
	}

	/* The modules' symbols and line tables are read meanwhile. */
	struct preload preload = { NULL, d };
	pthread_t preloader;
	int preloading = cgt_symbolizer_open(&preload.sy, d, stderr, &e) == 0 &&
			 pthread_create(&preloader, NULL, preload_modules, &preload) == 0;
	sy = preload.sy;
	struct progress progress = { isatty(STDERR_FILENO), { 0, 0 } };
	struct cgt_sim_progress tell = { progress_update, &progress };
	rc = cgt_sim_trace(sim, d, (unsigned)threads, progress.on ? &tell : NULL, &e);
	if (preloading)
		pthread_join(preloader, NULL);
	progress_done(&progress);
	if (rc < 0) {
		report_error(&e);
		goto out;
	}

	struct cgt_profile profile = { so.cache_sim, so.branch_sim, so.I1, so.D1, so.LL, { 0 } };
	if (sy == NULL && cgt_symbolizer_open(&sy, d, stderr, &e) < 0) {
		report_error(&e);
		goto out;
	}
	/* A FIFO whose reader went away is an error to report, not a death. */
	signal(SIGPIPE, SIG_IGN);
	if (cgt_write_profile(output.write_path, d, sim, sy, &profile, &e) < 0 ||
	    cgt_output_commit(&output, &e) < 0) {
		cgt_output_blame(&output, &e);
		report_error(&e);
		goto out;
	}
	if (!quiet && strcmp(output.written, output.path) != 0)
		fprintf(stderr, "cgtrace: %s exists: wrote %s\n", output.path, output.written);
	if (!quiet)
		cgt_print_summary(stderr, (long)h->pid, profile.totals, so.cache_sim, so.branch_sim);

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
out:
	cgt_output_discard(&output);
	free(out_path);
	cgt_symbolizer_close(sy);
	cgt_sim_close(sim);
	cgt_decoder_close(d);
	return status;
}
