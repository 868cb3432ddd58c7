/*
 * `cgtrace archive`: one file that carries what a trace's symbols and
 * lines need to another machine -- its modules and their debug files by
 * build-id, and with --sources the source files their line tables name.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "decode.h"
#include "record.h"
#include "report.h"

const char usage_archive[] =
	"usage: cgtrace archive [options] TRACE\n"
	"\n"
	"Writes one file with everything the trace's symbols and lines need: each\n"
	"module it ran (found as `cgtrace simulate` finds it: see its help) and its\n"
	"separate debug file, by build-id, and with --sources the source files\n"
	"their line tables name.  On another machine, `cgtrace simulate` takes it\n"
	"from beside the trace (TRACE.archive) or from --archive=FILE, and\n"
	"`cgtrace report --archive=FILE` annotates the sources it holds.\n"
	"\n"
	"It is a zstd-compressed tar file: tar --zstd -tf FILE lists it, with\n"
	"members build-id/ab/cdef.../elf, build-id/ab/cdef.../debug and\n"
	"sources/PATH.\n"
	"\n"
	"options:\n"
	"  -o, --output=FILE       the archive [TRACE.archive]\n"
	"      --sources           also the source files (those readable here)\n"
	"      --build-id-dir=DIR  the build-id cache to find modules in\n"
	"                          [$XDG_CACHE_HOME/cgtrace/build-id]\n"
	"  -q, --quiet             no summary line at the end\n"
	"  -h, --help              this help\n"
	"\n"
	"A module found nowhere gets a warning, and the rest is archived.\n"
	"Output: without -o, an existing file is never replaced: the archive goes\n"
	"to the first free name of TRACE.archive.1, .2, ... (said on stderr).\n"
	"With -o, an archive or empty file is replaced once the new one is\n"
	"complete; a device or FIFO is written to; the trace and any other file\n"
	"are refused.\n"
	"\n"
	"exit status: 0 done; 1 error; 2 bad usage; 3 done, but the trace was\n"
	"incomplete (truncated, damaged or without an end record): the modules it\n"
	"names before the damage were archived.\n";

/* With -o: what may be replaced is an archive (or, by cgt_output_check,
   an empty file, a device, a FIFO), never a module or source file. */
static int check_output(const char *path, const char *trace, struct cgt_error *e)
{
	const char *inputs[] = { trace };
	struct stat st;
	if (cgt_output_check(path, CGT_OUTPUT_NAMED, inputs, 1, e) < 0)
		return -1;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	struct cgt_error ignored;
	struct cgt_archive *old;
	int rc = cgt_archive_open(&old, path, NULL, NULL, &ignored);
	cgt_archive_close(old);
	if (rc == -cgt_err_not_trace)
		return cgt_fail(e, cgt_err_invalid,
				"refusing to overwrite '%s': it is not a cgtrace archive (remove it or "
				"choose another -o)", path);
	return 0;
}

/* Reads the trace to its end, for every module it maps: 0, 1 if it is
   incomplete (said on stderr), or negative. */
static int read_modules(struct cgt_decoder *d, struct cgt_error *e)
{
	struct cgt_batch b;
	int rc;
	while ((rc = cgt_decoder_next(d, &b, e)) > 0)
		;
	if (rc < 0) {
		fprintf(stderr, "cgtrace: warning: %s: archiving the modules mapped before\n",
			e->msg);
		return 1;
	}
	return cgt_decoder_warn_incomplete(d, 1, stderr) ? 1 : 0;
}

static void print_summary(const struct cgt_archive_counts *c, const char *path)
{
	struct stat st;
	char files[CGT_COUNT_TEXT], bytes[CGT_COUNT_TEXT], size[CGT_COUNT_TEXT];
	cgt_format_count(c->files, files);
	cgt_format_count(c->bytes, bytes);
	cgt_format_count(stat(path, &st) == 0 ? (uint64_t)st.st_size : 0, size);
	fprintf(stderr, "cgtrace: archived %u module%s (%s file%s, %s bytes) in %s (%s bytes)",
		c->modules, c->modules == 1 ? "" : "s", files, c->files == 1 ? "" : "s", bytes, path,
		size);
	if (c->not_found > 0)
		fprintf(stderr, "; %u not found", c->not_found);
	fputc('\n', stderr);
}

int cmd_archive(int argc, char **argv)
{
	enum { OPT_SOURCES = 256, OPT_BUILD_ID_DIR };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "sources", no_argument, NULL, OPT_SOURCES },
		{ "build-id-dir", required_argument, NULL, OPT_BUILD_ID_DIR },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out_path = NULL, *build_id_dir = NULL, *trace;
	int sources = 0, quiet = 0, c;
	struct cgt_error e;

	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out_path = optarg; break;
		case OPT_SOURCES: sources = 1; break;
		case OPT_BUILD_ID_DIR: build_id_dir = optarg; break;
		case 'q': quiet = 1; break;
		case 'h':
			fputs(usage_archive, stdout);
			return 0;
		default:
			fprintf(stderr, "\n%s", usage_archive);
			return 2;
		}
	}
	int status = one_trace(argc, argv, usage_archive, &trace);
	if (status != 0)
		return status;
	char *default_path = NULL;
	if (out_path == NULL) {
		if (asprintf(&default_path, "%s.archive", trace) < 0) {
			fprintf(stderr, "cgtrace: out of memory\n");
			return 1;
		}
	}
	const char *path = out_path != NULL ? out_path : default_path;
	struct cgt_decoder *d = NULL;
	struct cgt_locator *locator = NULL;
	struct cgt_archive_writer *w = NULL;
	struct output output = { 0 };
	int fd = -1, incomplete = 0;
	status = 1;
	if (check_output(path, trace, &e) < 0) {
		report_error(&e);
		goto out;
	}

	const struct cgt_decoder_options talk = decoder_options();
	if (cgt_decoder_open(&d, trace, &talk, &e) < 0) {
		report_error(&e);
		goto out;
	}
	incomplete = read_modules(d, &e);
	const struct cgt_mapping *maps;
	size_t n_maps = cgt_decoder_mappings(d, &maps);

	const struct cgt_locator_options where = locator_options(build_id_dir, NULL);
	struct cgt_archive_counts counts = { 0 };
	if (cgt_locator_open(&locator, &where, &e) < 0 ||
	    output_prepare(&output, path, out_path == NULL, &e) < 0) {
		report_error(&e);
		goto out;
	}
	fd = open(output.file.write_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		cgt_fail(&e, cgt_err_io, "cannot write '%s': %s", output.file.write_path, strerror(errno));
	} else if (cgt_archive_create(&w, fd, path, &e) == 0 &&
		   cgt_archive_modules(w, locator, maps, n_maps, sources, stderr, &counts, &e) == 0 &&
		   cgt_archive_finish(w, &e) == 0) {
		/* (a device or FIFO cannot be synced: EINVAL) */
		int failed = fsync(fd) < 0 && errno != EINVAL;
		failed |= close(fd) < 0;
		fd = -1;
		if (failed)
			cgt_fail(&e, cgt_err_io, "cannot write '%s': %s", path, strerror(errno));
		else if (cgt_output_commit(&output.file, &e) == 0)
			status = incomplete ? 3 : 0;
	}
	if (status == 1) {
		cgt_output_blame(&output.file, &e);
		report_error(&e);
		goto out;
	}
	if (!quiet && strcmp(output.file.written, output.file.path) != 0)
		fprintf(stderr, "cgtrace: %s exists: wrote %s (simulate finds only %s beside the "
				"trace: give it --archive=%s)\n", output.file.path, output.file.written,
			output.file.path, output.file.written);
	if (!quiet)
		print_summary(&counts, output.file.written);
out:
	if (fd >= 0)
		close(fd);
	cgt_archive_free(w);
	output_discard(&output);
	cgt_locator_close(locator);
	cgt_decoder_close(d);
	free(default_path);
	return status;
}
