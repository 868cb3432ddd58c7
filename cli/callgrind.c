/*
 * `cgtrace simulate --tool=callgrind`: Callgrind's options, then decode ->
 * the call-graph replay -> callgrind.out files, one per dump.
 */
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "decode.h"
#include "record.h"
#include "report.h"
#include "sim.h"

const char usage_callgrind[] =
	"usage: cgtrace simulate --tool=callgrind [options] TRACE\n"
	"\n"
	"Replays a recorded trace as Callgrind would have profiled the run: calls,\n"
	"returns, inclusive costs, recursion levels, PLT stubs, signal handlers,\n"
	"threads and the callgrind.h client requests the program made, into\n"
	"callgrind.out files for callgrind_annotate and KCachegrind.\n"
	"\n"
	"options (Callgrind's, with its defaults):\n"
	"  --callgrind-out-file=<f>   output file name [callgrind.out.%p, or -2,\n"
	"                             -3, ... added where taken]; a dump before\n"
	"                             the end goes to <f>.1, <f>.2, ...\n"
	"  --dump-line=no|yes         line positions [yes]\n"
	"  --dump-instr=no|yes        instruction positions [no]\n"
	"  --compress-strings=no|yes  name compression [yes]\n"
	"  --compress-pos=no|yes      relative positions [yes]\n"
	"  --combine-dumps=no|yes     every dump into one file [no]\n"
	"  --collect-jumps=no|yes     (conditional) jumps [no]\n"
	"  --collect-atstart=no|yes   collect from the start [yes]\n"
	"  --instr-atstart=no|yes     instrument from the start [yes]\n"
	"  --toggle-collect=<fn>      toggle collection on entry and exit of fn\n"
	"  --dump-before=<fn>         dump on entering fn\n"
	"  --dump-after=<fn>          dump on leaving fn\n"
	"  --zero-before=<fn>         zero on entering fn\n"
	"  --fn-skip=<fn>             charge fn's cost to its caller\n"
	"  --separate-recs=<n>        recursion levels told apart [2]\n"
	"  --separate-callers=<n>     callers in a function's context [0]\n"
	"  --skip-plt=no|yes          charge PLT stubs to their callers [yes]\n"
	"  --skip-direct-rec=no|yes   direct recursion is no call [no]\n"
	"  (<fn> patterns may use * and ?; each option may be given several times.)\n"
	"  --cache-sim=no|yes         simulate I1, D1 and LL [no]\n"
	"  --branch-sim=no|yes        simulate branch prediction [no]\n"
	"  --simulate-wb=no|yes       count LL misses that evict a dirty line\n"
	"                             (ILdmr DLdmr DLdmw): LL is write-back [no]\n"
	"  --simulate-hwpref=no|yes   simulate Callgrind's LL stream prefetcher [no]\n"
	"  --cacheuse=no|yes          how well cache lines were used, charged to the\n"
	"                             instruction that loaded each line when it is\n"
	"                             evicted (AcCost1 SpLoss1 AcCost2 SpLoss2) [no];\n"
	"                             as in Callgrind, it sets --dump-instr=yes and\n"
	"                             turns --simulate-wb and --simulate-hwpref off\n"
	"                             (each of these turns cache simulation on, as in\n"
	"                             Callgrind)\n"
	"  --cacheuse-inclusive=no|yes  charge them also to the calls that were\n"
	"                             active when the line was loaded (calls= lines,\n"
	"                             summary:) [yes]; no: self costs only, Callgrind's\n"
	"                             file\n"
	"  --<L>-replacement=lru|fifo|plru  level L's replacement policy, L one of\n"
	"                             I1, D1, LL [lru] (each turns cache simulation on);\n"
	"                             plru: tree pseudo-LRU, ways a power of two\n"
	"  --<L>-prefetch=none|callgrind  level L's prefetcher [none]; callgrind is\n"
	"                             --simulate-hwpref=yes, LL's alone (each turns\n"
	"                             cache simulation on)\n"
	"  --I1=<size>,<assoc>,<line_size>  set I1 cache manually (and --cache-sim=yes)\n"
	"  --D1=<size>,<assoc>,<line_size>  set D1 cache manually (and --cache-sim=yes)\n"
	"  --LL=<size>,<assoc>,<line_size>  set LL cache manually (and --cache-sim=yes)\n"
	"                             caches not given are the recording host's\n"
	"\n"
	"options (cgtrace's):\n"
	"  -q, --quiet                nothing on stderr but errors\n"
	"  -v, --verbose              what the run took (with --cacheuse=yes: the\n"
	"                             back-dating tree's nodes)\n"
	"  --threads=<n>              from 2 on, the trace is decoded and simulated on\n"
	"                             a thread of its own [the CPUs it may use]; the\n"
	"                             files do not depend on it\n"
	"  --build-id-dir=<dir>, --archive=<file>   where modules are found (as for\n"
	"                             cgtrace simulate)\n"
	"\n"
	"Where cgtrace differs: threaded programs differ as two Callgrind runs of\n"
	"them differ (where the scheduler switched threads).  A child made by\n"
	"fork() has a trace of its own (cgtrace record -o NAME.%p.zst), which\n"
	"replays into the child's file.\n"
	"\n"
	"The trace must be recorded with Callgrind's translation (cgtrace record's\n"
	"default, not --vex-guest-chase=yes) by the valgrind backend.\n"
	"\n"
	"%p in the output name is the recorded program's pid, %q{VAR} the\n"
	"environment variable VAR, %% a %.  Without --callgrind-out-file an\n"
	"existing file is never replaced (NAME-2, NAME-3, ... is used, the first\n"
	"free with its dumps' names); with it, a callgrind.out or empty file is.\n"
	"\n"
	"exit status: 0 done; 1 error; 2 bad usage; 3 done, but the trace was\n"
	"incomplete.\n";

enum {
	OPT_TOOL = 256, OPT_OUT, OPT_DUMP_LINE, OPT_DUMP_INSTR, OPT_COMPRESS_STRINGS, OPT_COMPRESS_POS,
	OPT_COMBINE_DUMPS, OPT_COLLECT_JUMPS, OPT_COLLECT_ATSTART, OPT_INSTR_ATSTART, OPT_TOGGLE_COLLECT,
	OPT_DUMP_BEFORE, OPT_DUMP_AFTER, OPT_ZERO_BEFORE, OPT_FN_SKIP, OPT_SEPARATE_RECS,
	OPT_SEPARATE_CALLERS, OPT_SKIP_PLT, OPT_SKIP_DIRECT_REC, OPT_CACHE_SIM, OPT_BRANCH_SIM,
	OPT_CACHE, OPT_BUILD_ID_DIR, OPT_ARCHIVE, OPT_THREADS, OPT_SIMULATE_WB, OPT_SIMULATE_HWPREF,
	OPT_LEVEL_MODEL, OPT_CACHEUSE, OPT_CACHEUSE_INCLUSIVE,
};

/* A list of patterns, NULL-ended. */
struct patterns {
	const char **v;
	size_t n, cap;
};

static int add_pattern(struct patterns *p, const char *s)
{
	if (p->n + 2 > p->cap && cgt_array_grow(&p->v, &p->cap, p->n, 2, sizeof(*p->v)) < 0)
		return -1;
	p->v[p->n++] = s;
	p->v[p->n] = NULL;
	return 0;
}

/* Where the dumps go. */
struct dumps {
	const struct cgt_trace_header *h;
	struct cgt_symbolizer *sy;
	struct cgt_callgrind_writer *writer;
	struct cgt_callgrind_out_options wo;
	const char *base;	/* the expanded output name */
	int named;		/* given by the user: may replace a callgrind.out */
	int combine;
	const char *trace;
	int quiet;
	char *combined;		/* --combine-dumps: the parts so far */
	size_t combined_len, combined_cap;
};

struct text {
	const char *bytes;
	size_t len;
};

static int write_text(FILE *f, const void *data, struct cgt_error *e)
{
	const struct text *t = data;
	(void)e;	/* a failed fwrite is write_output's to say */
	fwrite(t->bytes, 1, t->len, f);
	return 0;
}

/* Writes text to path by the output rules. */
static int put_file(struct dumps *ds, const char *path, const char *text, size_t len, struct cgt_error *e)
{
	const struct text t = { text, len };
	return write_output(path, ds->named, CGT_OUTPUT_CALLGRIND, ds->trace, ds->quiet, write_text, &t,
			    e);
}

/* 1 if the directory listing d holds name, or name.N (a dump part). */
static int name_taken(DIR *d, const char *name)
{
	size_t n = strlen(name);
	struct dirent *ent;
	rewinddir(d);
	while ((ent = readdir(d)) != NULL) {
		const char *s = ent->d_name;
		if (strncmp(s, name, n) != 0 || (s[n] != '\0' && s[n] != '.'))
			continue;
		if (s[n] == '\0')
			return 1;
		s += n + 1;
		while (*s >= '0' && *s <= '9')
			s++;
		if (*s == '\0' && s != ent->d_name + n + 1)
			return 1;
	}
	return 0;
}

/* The default name never replaces an earlier result.  A run's dumps are
   named NAME.1, NAME.2, ...: where NAME (or a part of it) is taken, the
   run takes NAME-2, NAME-3, ..., the first free with its parts' names, so
   that no file of one run is taken for a part of another's (as NAME.1
   would be).  Returns a malloc'd name, or NULL. */
static char *free_default_name(const char *name, int quiet)
{
	const char *slash = strrchr(name, '/');
	char *dir = slash ? strndup(name, (size_t)(slash - name + 1)) : strdup(".");
	DIR *d = dir ? opendir(dir) : NULL;
	const char *file = slash ? slash + 1 : name;
	char *chosen = NULL;
	free(dir);
	if (d == NULL || !name_taken(d, file)) {
		if (d != NULL)
			closedir(d);
		return strdup(name);
	}
	char *candidate = malloc(strlen(file) + 16);
	for (unsigned k = 2; candidate != NULL && chosen == NULL && k < 10000; k++) {
		sprintf(candidate, "%s-%u", file, k);
		if (!name_taken(d, candidate) &&
		    asprintf(&chosen, "%.*s%s", slash ? (int)(slash - name + 1) : 0, name, candidate) < 0)
			chosen = NULL;
	}
	free(candidate);
	closedir(d);
	if (chosen != NULL && !quiet)
		fprintf(stderr, "cgtrace: %s exists: writing %s\n", name, chosen);
	return chosen != NULL ? chosen : strdup(name);
}

static int on_dump(void *arg, const struct cgt_cg_profile *p, struct cgt_error *e)
{
	struct dumps *ds = arg;
	char *text = NULL;
	size_t len = 0;
	/* positions are looked up in the module map of the dump */
	cgt_symbolizer_use_mappings(ds->sy, p->mappings, p->n_mappings);
	FILE *f = open_memstream(&text, &len);
	if (f == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	int rc = cgt_callgrind_writer_part(ds->writer, f, p, !ds->combine || ds->combined_len == 0, e);
	if (fclose(f) != 0 && rc == 0)
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	if (rc == 0 && ds->combine) {
		if (ds->combined_len + len + 1 > ds->combined_cap &&
		    cgt_array_grow(&ds->combined, &ds->combined_cap, ds->combined_len, len + 1,
				   1) < 0) {
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		} else {
			memcpy(ds->combined + ds->combined_len, text, len + 1);
			ds->combined_len += len;
			if (p->final)
				rc = put_file(ds, ds->base, ds->combined, ds->combined_len, e);
		}
	} else if (rc == 0) {
		char *path = malloc(strlen(ds->base) + 16);
		if (path == NULL) {
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		} else {
			if (p->final)
				strcpy(path, ds->base);
			else
				sprintf(path, "%s.%u", ds->base, p->part);
			rc = put_file(ds, path, text, len, e);
			free(path);
		}
	}
	free(text);
	return rc;
}

/* The module map grows as the trace is read: the replay's, each time. */
static void find_code(void *arg, const struct cgt_mapping *maps, size_t n_maps, uint64_t addr,
		      uint32_t map_epoch, struct cgt_code_info *ci)
{
	struct cgt_symbolizer *sy = arg;
	cgt_symbolizer_use_mappings(sy, maps, n_maps);
	cgt_symbolize_code(sy, addr, map_epoch, ci);
}

int cmd_simulate_callgrind(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tool", required_argument, NULL, OPT_TOOL },
		{ "callgrind-out-file", required_argument, NULL, OPT_OUT },
		{ "dump-line", required_argument, NULL, OPT_DUMP_LINE },
		{ "dump-instr", required_argument, NULL, OPT_DUMP_INSTR },
		{ "compress-strings", required_argument, NULL, OPT_COMPRESS_STRINGS },
		{ "compress-pos", required_argument, NULL, OPT_COMPRESS_POS },
		{ "combine-dumps", required_argument, NULL, OPT_COMBINE_DUMPS },
		{ "collect-jumps", required_argument, NULL, OPT_COLLECT_JUMPS },
		{ "collect-atstart", required_argument, NULL, OPT_COLLECT_ATSTART },
		{ "instr-atstart", required_argument, NULL, OPT_INSTR_ATSTART },
		{ "toggle-collect", required_argument, NULL, OPT_TOGGLE_COLLECT },
		{ "dump-before", required_argument, NULL, OPT_DUMP_BEFORE },
		{ "dump-after", required_argument, NULL, OPT_DUMP_AFTER },
		{ "zero-before", required_argument, NULL, OPT_ZERO_BEFORE },
		{ "fn-skip", required_argument, NULL, OPT_FN_SKIP },
		{ "separate-recs", required_argument, NULL, OPT_SEPARATE_RECS },
		{ "separate-callers", required_argument, NULL, OPT_SEPARATE_CALLERS },
		{ "skip-plt", required_argument, NULL, OPT_SKIP_PLT },
		{ "skip-direct-rec", required_argument, NULL, OPT_SKIP_DIRECT_REC },
		{ "cache-sim", required_argument, NULL, OPT_CACHE_SIM },
		{ "simulate-wb", required_argument, NULL, OPT_SIMULATE_WB },
		{ "simulate-hwpref", required_argument, NULL, OPT_SIMULATE_HWPREF },
		{ "cacheuse", required_argument, NULL, OPT_CACHEUSE },
		{ "cacheuse-inclusive", required_argument, NULL, OPT_CACHEUSE_INCLUSIVE },
		LEVEL_MODEL_LONGOPTS(OPT_LEVEL_MODEL),
		{ "branch-sim", required_argument, NULL, OPT_BRANCH_SIM },
		{ "I1", required_argument, NULL, OPT_CACHE },
		{ "D1", required_argument, NULL, OPT_CACHE },
		{ "LL", required_argument, NULL, OPT_CACHE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "build-id-dir", required_argument, NULL, OPT_BUILD_ID_DIR },
		{ "archive", required_argument, NULL, OPT_ARCHIVE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cgt_callgraph_options o;
	struct patterns toggle = { 0 }, before = { 0 }, after = { 0 }, zero = { 0 }, skip = { 0 };
	struct dumps ds = { .wo = { .dump_line = 1, .compress_strings = 1, .compress_pos = 1 } };
	const char *out_tmpl = NULL, *build_id_dir = NULL, *archive = NULL;
	char *base = NULL;
	struct cgt_archive *opened_archive = NULL;
	int status = 1, c, cache_sim = 0, branch_sim = 0, archive_damaged = 0, hwpref = 0, verbose = 0;
	struct cgt_callgraph_stats stats = { 0 };
	uint64_t number;
	struct cgt_error e;
	struct cgt_decoder *d = NULL;

	cgt_callgraph_defaults(&o);
	o.threads = (unsigned)usable_cpus();
	optind = 1;
	int option_index = 0;
	struct cgt_cache_config given[CGT_N_LEVELS] = { { 0, 0, 0 } };
	while ((c = getopt_long(argc, argv, "qvh", longopts, &option_index)) != -1) {
		int *flag = NULL;
		struct patterns *list = NULL;
		switch (c) {
		case OPT_TOOL:
			break;	/* cmd_simulate chose this command by it */
		case OPT_OUT:
			out_tmpl = optarg;
			break;
		case OPT_DUMP_LINE: flag = &ds.wo.dump_line; break;
		case OPT_DUMP_INSTR: flag = &ds.wo.dump_instr; break;
		case OPT_COMPRESS_STRINGS: flag = &ds.wo.compress_strings; break;
		case OPT_COMPRESS_POS: flag = &ds.wo.compress_pos; break;
		case OPT_COMBINE_DUMPS: flag = &ds.combine; break;
		case OPT_COLLECT_JUMPS: flag = &o.collect_jumps; break;
		case OPT_COLLECT_ATSTART: flag = &o.collect_atstart; break;
		case OPT_INSTR_ATSTART: flag = &o.instr_atstart; break;
		case OPT_SKIP_PLT: flag = &o.skip_plt; break;
		case OPT_SKIP_DIRECT_REC: flag = &o.skip_direct_rec; break;
		case OPT_CACHE_SIM: flag = &cache_sim; break;
		case OPT_BRANCH_SIM: flag = &branch_sim; break;
		/* Callgrind: any cache simulator option turns cache simulation on */
		case OPT_SIMULATE_WB: flag = &o.model.write_back; cache_sim = 1; break;
		case OPT_SIMULATE_HWPREF: flag = &hwpref; cache_sim = 1; break;
		case OPT_CACHEUSE: flag = &o.model.cache_use; cache_sim = 1; break;
		case OPT_CACHEUSE_INCLUSIVE: flag = &o.cache_use_inclusive; break;
		case OPT_LEVEL_MODEL:
			if ((status = parse_level_model(usage_callgrind, longopts[option_index].name, optarg,
							&o.model)) != 0)
				goto out;
			status = 1;
			cache_sim = 1;
			break;
		case OPT_TOGGLE_COLLECT:
			/* Callgrind: it turns collection off at the start, as it is
			   parsed (a later --collect-atstart wins) */
			o.collect_atstart = 0;
			list = &toggle;
			break;
		case OPT_DUMP_BEFORE: list = &before; break;
		case OPT_DUMP_AFTER: list = &after; break;
		case OPT_ZERO_BEFORE: list = &zero; break;
		case OPT_FN_SKIP: list = &skip; break;
		case OPT_SEPARATE_RECS:
		case OPT_SEPARATE_CALLERS:
			if (parse_number(optarg, c == OPT_SEPARATE_RECS ? 1 : 0, 100, 0, &number) < 0) {
				status = usage_error(usage_callgrind, "bad --%s '%s' (expected %s to 100)",
						     c == OPT_SEPARATE_RECS ? "separate-recs" : "separate-callers",
						     optarg, c == OPT_SEPARATE_RECS ? "1" : "0");
				goto out;
			}
			*(c == OPT_SEPARATE_RECS ? &o.separate_recs : &o.separate_callers) = (int)number;
			break;
		case OPT_CACHE: {
			/* Callgrind: any cache option turns cache simulation on */
			const char *name = longopts[option_index].name;
			int level = strcmp(name, "I1") == 0 ? CGT_LEVEL_I1 : strcmp(name, "D1") == 0 ? CGT_LEVEL_D1 : CGT_LEVEL_LL;
			int rc = cgt_cache_parse(optarg, &given[level]);
			if (rc != CGT_CACHE_OK) {
				if (rc == CGT_CACHE_INVALID)
					fprintf(stderr, "cgtrace: %s\n", cgt_cache_check(&given[level]));
				fprintf(stderr, "cgtrace: Bad option: --%s=%s\n", name, optarg);
				goto out;
			}
			cache_sim = 1;
			break;
		}
		case OPT_THREADS:
			if (parse_number(optarg, 1, 64, 0, &number) < 0) {
				status = usage_error(usage_callgrind, "bad --threads '%s' (expected 1 to 64)", optarg);
				goto out;
			}
			o.threads = (unsigned)number;
			break;
		case OPT_BUILD_ID_DIR:
			build_id_dir = optarg;
			break;
		case OPT_ARCHIVE:
			archive = optarg;
			break;
		case 'q':
			ds.quiet = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			fputs(usage_callgrind, stdout);
			status = 0;
			goto out;
		default:
			fprintf(stderr, "\n%s", usage_callgrind);
			status = 2;
			goto out;
		}
		if (flag != NULL && parse_yes_no(optarg, flag) < 0) {
			status = usage_error(usage_callgrind, "bad --%s '%s' (expected yes or no)",
					     longopts[option_index].name, optarg);
			goto out;
		}
		/* Callgrind: use counts make sense only per instruction (a later
		   --dump-instr=no wins) */
		if (c == OPT_CACHEUSE && o.model.cache_use)
			ds.wo.dump_instr = 1;
		if (c == OPT_SIMULATE_HWPREF)	/* as the last of these options says */
			parse_level_model(usage_callgrind, "LL-prefetch", hwpref ? "callgrind" : "none",
					  &o.model);
		if (list != NULL && add_pattern(list, optarg) < 0) {
			fprintf(stderr, "cgtrace: out of memory\n");
			goto out;
		}
	}
	/* Callgrind: positions are at least lines */
	if (!ds.wo.dump_line && !ds.wo.dump_instr)
		ds.wo.dump_line = 1;
	o.toggle_collect = toggle.v;
	o.dump_before = before.v;
	o.dump_after = after.v;
	o.zero_before = zero.v;
	o.fn_skip = skip.v;

	const char *path;
	status = one_trace(argc, argv, usage_callgrind, &path);
	if (status != 0)
		goto out;
	status = 1;
	if ((archive_damaged = choose_archive(path, archive, &opened_archive)) < 0)
		goto out;
	const struct cgt_decoder_options talk = decoder_options();
	if (cgt_decoder_open(&d, path, &talk, &e) < 0) {
		report_error(&e);
		goto out;
	}
	ds.h = cgt_decoder_header(d);
	const char *why;
	base = cgt_expand_output_name(out_tmpl ? out_tmpl : "callgrind.out.%p", (long)ds.h->pid, &why);
	if (base == NULL) {
		fprintf(stderr, "cgtrace: bad output name '%s': %s\n", out_tmpl, why);
		goto out;
	}
	if (out_tmpl == NULL) {
		char *free_name = free_default_name(base, ds.quiet);
		if (free_name == NULL) {
			fprintf(stderr, "cgtrace: out of memory\n");
			goto out;
		}
		free(base);
		base = free_name;
	}
	ds.base = base;
	o.cache_sim = cache_sim;
	o.branch_sim = branch_sim;
	char desc[3][128];
	if (cache_sim) {
		/* caches not given: the recording host's, by Cachegrind's rules,
		   which Callgrind shares (cg_arch.c) */
		struct cgt_cache_defaults host;
		cgt_cache_defaults(ds.h, given[CGT_LEVEL_LL].size != 0, &host);
		int all_given = given[CGT_LEVEL_I1].size && given[CGT_LEVEL_D1].size && given[CGT_LEVEL_LL].size;
		if (!ds.quiet && !all_given)
			for (unsigned i = 0; i < host.n_warnings; i++)
				fprintf(stderr, "cgtrace: %s\n", host.warnings[i]);
		o.caches.level[CGT_LEVEL_I1] = given[CGT_LEVEL_I1].size ? given[CGT_LEVEL_I1] : host.I1;
		o.caches.level[CGT_LEVEL_D1] = given[CGT_LEVEL_D1].size ? given[CGT_LEVEL_D1] : host.D1;
		o.caches.level[CGT_LEVEL_LL] = given[CGT_LEVEL_LL].size ? given[CGT_LEVEL_LL] : host.LL;
		static const int levels[3] = { CGT_LEVEL_I1, CGT_LEVEL_D1, CGT_LEVEL_LL };
		for (int k = 0; k < 3; k++) {
			const struct cgt_cache_config *cc = &o.caches.level[levels[k]];
			const char *bad = cgt_cache_check(cc);
			if (bad != NULL) {
				fprintf(stderr, "cgtrace: the %s cache (%d B, %d-way, %d B lines) cannot be "
						"simulated: %s\n",
					cgt_level_names[levels[k]], cc->size, cc->assoc, cc->line, bad);
				goto out;
			}
			cgt_cache_describe(cc, desc[k], sizeof(desc[k]));
			ds.wo.cache_desc[k] = desc[k];
		}
		if (o.model.cache_use)
			cache_use_model(&o.model, ds.quiet);
		if (o.model.cache_use && o.cache_use_inclusive)
			ds.wo.attribution = "Attribution: AcCost1 SpLoss1 AcCost2 SpLoss2 to the instruction "
					    "that loaded the line and to the calls active then (inclusive)";
		if (check_cache_model(&o.model, &o.caches) != 0) {
			status = 2;
			goto out;
		}
	}
	ds.named = out_tmpl != NULL;
	ds.trace = path;
	const char *inputs[] = { path };
	if (ds.named && cgt_output_check(base, CGT_OUTPUT_CALLGRIND, inputs, 1, &e) < 0) {
		report_error(&e);
		goto out;
	}

	/* Function identity is needed as the replay goes: the symbolizer sees
	   the module map grow with it. */
	const struct cgt_locator_options where = locator_options(build_id_dir, opened_archive);
	if (cgt_symbolizer_open(&ds.sy, &where, &e) < 0) {
		report_error(&e);
		goto out;
	}
	if (cgt_callgrind_writer_open(&ds.writer, ds.sy, ds.h, &ds.wo, &e) < 0) {
		report_error(&e);
		goto out;
	}
	o.code = (struct cgt_code_lookup){ find_code, ds.sy };
	o.dump = on_dump;
	o.dump_arg = &ds;
	signal(SIGPIPE, SIG_IGN);
	o.stats = &stats;
	if (cgt_callgraph_run(&o, d, &e) < 0) {
		report_error(&e);
		goto out;
	}
	if (verbose && o.model.cache_use && o.cache_use_inclusive)
		fprintf(stderr,
			"cgtrace: cache use, inclusive: %llu activations given a node in the back-dating "
			"tree, at most %llu alive at once\n",
			(unsigned long long)stats.use_nodes, (unsigned long long)stats.use_nodes_peak);
	status = 0;
	if (cgt_decoder_warn_incomplete(d, 1, stderr)) {
		fprintf(stderr, "cgtrace: warning: simulated only what the trace holds\n");
		status = 3;
	}
	if (archive_damaged)
		status = 3;
out:
	cgt_callgrind_writer_close(ds.writer);
	cgt_symbolizer_close(ds.sy);
	cgt_decoder_close(d);
	free(ds.combined);
	free(base);
	cgt_archive_close(opened_archive);
	free(toggle.v);
	free(before.v);
	free(after.v);
	free(zero.v);
	free(skip.v);
	return status;
}
