/*
 * `cgtrace info TRACE`: what a trace holds, without simulating it.
 */
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "decode.h"

static void print_cache(FILE *out, const struct cgt_cache_geom *c)
{
	static const char *kind[] = { "", "d", "i", "" };
	uint64_t size = c->size;
	const char *unit = "B";

	if (size % (1024 * 1024) == 0) {
		size /= 1024 * 1024;
		unit = "MiB";
	} else if (size % 1024 == 0) {
		size /= 1024;
		unit = "KiB";
	}
	fprintf(out, "  L%u%-2s %6" PRIu64 " %-3s %3u-way, %u-byte lines\n", c->level,
		kind[c->type & 3], size, unit, c->assoc, c->line);
}

/* What decoding an Intel PT trace lost and estimated. */
static void print_pt(FILE *out, const struct cgt_pt_decoded *d)
{
	char a[CGT_COUNT_TEXT], b[CGT_COUNT_TEXT], c[CGT_COUNT_TEXT];

	fprintf(out, "intel pt:       %s instructions decoded\n", cgt_format_count(d->insns, a));
	if (d->overflows + d->errors + d->breaks == 0)
		fprintf(out, "  trace lost:   none\n");
	else
		fprintf(out, "  trace lost:   %s overflow%s, %s decode error%s (%s bytes of packets skipped), "
			     "%" PRIu64 " lost piece%s of trace\n",
			cgt_format_count(d->overflows, a), d->overflows == 1 ? "" : "s",
			cgt_format_count(d->errors, b), d->errors == 1 ? "" : "s",
			cgt_format_count(d->bytes_skipped, c), d->breaks, d->breaks == 1 ? "" : "s");
	if (d->modules_left_out)
		fprintf(out, "  not decoded:  %" PRIu64 " module%s changed since recording\n",
			d->modules_left_out, d->modules_left_out == 1 ? "" : "s");
	if (d->sideband_lost)
		fprintf(out, "  sideband:     %" PRIu64 " records lost by the kernel\n", d->sideband_lost);
	if (d->mem_period == 0)
		fprintf(out, "  memory:       no samples: D1 and LL misses cannot be estimated\n");
	else
		fprintf(out, "  memory:       %s samples (one access in %" PRIu64 "), %s placed; D1 and LL "
			     "misses are estimated from them\n",
			cgt_format_count(d->samples, a), d->mem_period, cgt_format_count(d->samples_placed, b));
}

static void print_header(FILE *out, const char *path, const struct cgt_decoder *d)
{
	const struct cgt_trace_header *h = cgt_decoder_header(d);
	uint64_t segments = cgt_decoder_segments(d);
	char when[64] = "?";
	time_t t = (time_t)(h->start_time_ns / 1000000000u);
	struct tm tm;

	if (gmtime_r(&t, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	const char *replayed = cgt_decoder_replayed(d);
	if (replayed != NULL) {
		/* A pt trace: its own size, then its decode's. */
		fprintf(out, "trace:          %s (%" PRIu64 " bytes of Intel PT packets and sideband)\n", path,
			h->decoded.source_size);
		fprintf(out, "decoded:        %s (%" PRIu64 " bytes, format version %u, %" PRIu64 " segment%s)\n",
			cgt_decoder_replay_kept(d) ? replayed : "for this run only", cgt_decoder_file_size(d),
			cgt_decoder_version(d), segments, segments == 1 ? "" : "s");
	} else {
		fprintf(out, "trace:          %s (%" PRIu64 " bytes, format version %u, %" PRIu64 " segment%s)\n",
			path, cgt_decoder_file_size(d), cgt_decoder_version(d), segments,
			segments == 1 ? "" : "s");
	}
	fprintf(out, "backend:        %s (%s)\n", h->backend, h->recorder);
	if (h->vex.present)
		fprintf(out, "translation:    %s (--vex-guest-chase=%s --vex-iropt-unroll-thresh=%u "
			     "--vex-guest-max-insns=%u)\n",
			h->vex.guest_chase ? "Cachegrind's default" : "Callgrind's",
			h->vex.guest_chase ? "yes" : "no", h->vex.unroll_thresh, h->vex.max_insns);
	else if (strcmp(h->backend, "valgrind") == 0)
		fprintf(out, "translation:    not recorded (a trace of an older cgtrace: Cachegrind's "
			     "default, --vex-guest-chase=yes)\n");
	fprintf(out, "command:       ");
	for (uint32_t i = 0; i < h->argc; i++)
		fprintf(out, " %s", h->argv[i]);
	fprintf(out, "\ndirectory:      %s\n", h->cwd);
	fprintf(out, "pid:            %" PRIu64, h->pid);
	if (h->forked_from != 0)
		fprintf(out, " (forked by %" PRIu64 "; the trace begins with its parent's run up to "
			     "the fork)", h->forked_from);
	fprintf(out, "\n");
	fprintf(out, "started:        %s\n", when);
	fprintf(out, "cpu:            %s family %u model %u stepping %u", h->cpu_vendor,
		h->cpu_family, h->cpu_model, h->cpu_stepping);
	if (h->cpu_name[0])
		fprintf(out, " (%s)", h->cpu_name);
	fprintf(out, "\npage size:      %u\nlargest access: %u bytes\ncaches:%s\n", h->page_size,
		h->max_access_size, h->n_caches ? "" : "         none reported by CPUID");
	for (uint32_t i = 0; i < h->n_caches; i++)
		print_cache(out, &h->caches[i]);
	if (h->decoded.present)
		print_pt(out, &h->decoded);
}

static void print_modules(FILE *out, const struct cgt_mapping *maps, size_t n,
			  const struct cgt_info_modules *where)
{
	fprintf(out, "modules:        %zu executable mapping%s\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const struct cgt_module *m = &maps[i].module;
		char id[2 * sizeof(m->build_id) + 1] = "none";
		for (uint32_t k = 0; k < m->build_id_len; k++)
			sprintf(id + 2 * k, "%02x", m->build_id[k]);
		fprintf(out, "  %016" PRIx64 "-%016" PRIx64 " %c%c%c off %#" PRIx64 " %s\n", m->start,
			m->start + m->size, m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
			m->prot & 4 ? 'x' : '-', m->file_offset, m->path);
		fprintf(out, "      build-id %s, %" PRIu64 " bytes%s\n", id, m->file_size,
			maps[i].epoch_unmapped != UINT32_MAX ? ", unmapped later" : "");
		if (where != NULL)
			where->describe(out, m, where->arg);
	}
}

/* n: what ran; u: what of it Cachegrind does not count (executions cut
   short by a fault, cgt_counts_add_uncounted). */
static void print_counts(FILE *out, const struct cgt_trace_counts *n, const struct cgt_trace_counts *u)
{
	char a[CGT_COUNT_TEXT], b[CGT_COUNT_TEXT], c[CGT_COUNT_TEXT], d[CGT_COUNT_TEXT];

	fprintf(out, "  instructions (Ir):       %s\n", cgt_format_count(n->insns - u->insns, a));
	fprintf(out, "  data reads (Dr):         %s (%s of them read-modify-write)\n",
		cgt_format_count(n->reads + n->modifies - u->reads - u->modifies, a),
		cgt_format_count(n->modifies - u->modifies, b));
	fprintf(out, "  data writes (Dw):        %s\n", cgt_format_count(n->writes - u->writes, a));
	fprintf(out, "  conditional branches:    %s\n", cgt_format_count(n->conds - u->conds, a));
	fprintf(out, "  indirect branches:       %s\n", cgt_format_count(n->indirects - u->indirects, a));
	fprintf(out, "  block executions:        %s\n", cgt_format_count(n->block_execs, a));
	fprintf(out, "  distinct blocks:         %s\n", cgt_format_count(n->blocks, a));
	if (n->threads)
		fprintf(out, "  threads:                 %s\n", cgt_format_count(n->threads, a));
	if (u->block_execs)
		fprintf(out, "  cut short by a fault:    %s execution%s, which up to the fault also ran "
			     "%s instructions, %s data reads and %s data writes (Cachegrind does not "
			     "count them, nor do the counts above)\n",
			cgt_format_count(u->block_execs, a), u->block_execs == 1 ? "" : "s",
			cgt_format_count(u->insns, b), cgt_format_count(u->reads + u->modifies, c),
			cgt_format_count(u->writes, d));
}

int cgt_trace_info(FILE *out, FILE *warn, const char *path, const struct cgt_decoder_options *o,
		   const struct cgt_info_modules *where, struct cgt_error *e)
{
	struct cgt_decoder *d;
	struct cgt_batch b;
	struct cgt_trace_counts counted = { 0 }, uncounted = { 0 };
	int rc = cgt_decoder_open(&d, path, o, e);

	if (rc < 0)
		return rc;
	/* The END record has the counts, but only a full decode validates the
	   whole file and gets the counts of a trace that has none. */
	while ((rc = cgt_decoder_next(d, &b, e)) > 0) {
		struct cgt_exec x = { 0 };
		uint64_t sp;
		while ((rc = cgt_batch_next(&b, &x, e)) > 0) {
			cgt_counts_add_exec(&counted, &x);
			cgt_counts_add_uncounted(&uncounted, x.block, 1);
			if (x.block->has_sp && (rc = cgt_batch_sp(&b, &x, &sp, e)) < 0)
				break;
		}
		if (rc < 0 && !cgt_decoder_lost(d, e))
			break;
	}
	if (rc < 0) {
		cgt_decoder_close(d);
		return rc;
	}

	const struct cgt_mapping *maps;
	size_t n_maps = cgt_decoder_mappings(d, &maps);
	const struct cgt_trace_end *end = cgt_decoder_end(d);
	print_header(out, path, d);
	print_modules(out, maps, n_maps, where);
	if (end == NULL)
		fprintf(out, "end:            none recorded: the recording was cut short (recorder or "
			     "Valgrind killed? disk full?); the trace holds what came before\n");
	else if (end->kind == CGT_END_EXIT)
		fprintf(out, "end:            exited with status %d\n", end->code);
	else if (end->kind == CGT_END_SIGNAL && end->code > 0)
		fprintf(out, "end:            killed by signal %d (%s)\n", end->code,
			strsignal(end->code));
	else if (end->kind == CGT_END_SIGNAL)
		fprintf(out, "end:            killed by a signal\n");
	else
		fprintf(out, "end:            the recorder lost the program's stream\n");
	fprintf(out, "counts (as Cachegrind and simulate count them by default):\n");
	counted.blocks = cgt_decoder_blocks(d)->n;
	if (end != NULL) {
		counted.blocks = end->counts.blocks;
		counted.threads = end->counts.threads;
	}
	print_counts(out, &counted, &uncounted);
	if (end != NULL && memcmp(&counted, &end->counts, sizeof(counted)) != 0)
		fprintf(out, "warning: the END record's counts differ from the decoded events\n");
	rc = cgt_decoder_warn_incomplete(d, 1, warn);
	cgt_decoder_close(d);
	return rc;
}
