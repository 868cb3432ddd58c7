/*
 * The PT recorder's perf_event code, run for real with the sideband
 * event alone (this host has no Intel PT): the module map it writes for a
 * traced program must be the program's own, as /proc/PID/maps shows it.
 * And the recorder's contract on messages (record.h): notes, also those
 * of the forked child, go to the caller's stream, errors before the start
 * to the caller's cgt_error; nothing to stderr.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pt/pt_record.h"
#include "trace.h"

static char dir[] = "/tmp/cgtrace-test-sideband.XXXXXX";
static char trace_path[256], maps_path[256];

struct module_list {
	char lines[64][600];
	unsigned n;
};

static void add(struct module_list *l, unsigned long start, unsigned long end, unsigned long off,
		const char *path)
{
	if (l->n < 64)
		snprintf(l->lines[l->n++], sizeof(l->lines[0]), "%lx-%lx %lx %s", start, end, off, path);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The executable file mappings /proc/PID/maps listed. */
static void maps_modules(struct module_list *l)
{
	FILE *f = fopen(maps_path, "r");
	char line[700], perms[8], path[600];
	unsigned long start, end, off;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %599s", &start, &end, perms, &off, path) >= 4 &&
		    perms[2] == 'x' && path[0] == '/')
			add(l, start, end, off, path);
	}
	if (f != NULL)
		fclose(f);
	qsort(l->lines, l->n, sizeof(l->lines[0]), by_text);
}

static struct module_list recorded;
static int saw_header, saw_config, saw_exit, saw_comm_exec, saw_end;

static void read_trace(void)
{
	struct cgt_reader *r;
	struct cgt_record rec;
	struct cgt_error e;

	if (cgt_reader_open(&r, trace_path, &e) < 0) {
		printf("  %s\n", e.msg);
		return;
	}
	while (cgt_reader_next(r, &rec, &e) > 0) {
		if (rec.type == CGT_REC_HEADER) {
			struct cgt_trace_header h;
			if (cgt_header_decode(&h, &rec, &e) == 0) {
				saw_header = strcmp(h.backend, "pt") == 0;
				cgt_header_free(&h);
			}
		} else if (rec.type == CGT_REC_PT_CONFIG) {
			struct cgt_pt_config c;
			if (cgt_pt_config_decode(&c, &rec, &e) == 0) {
				saw_config = c.n_events == 1 && c.events[0].n_ids > 0 && c.samples_missing;
				cgt_pt_config_free(&c);
			}
		} else if (rec.type == CGT_REC_MODULE) {
			struct cgt_module m;
			if (cgt_module_decode(&m, &rec, &e) == 0) {
				add(&recorded, m.start, m.start + m.size, m.file_offset, m.path);
				cgt_module_free(&m);
			}
		} else if (rec.type == CGT_REC_SIDEBAND) {
			uint32_t cpu;
			const uint8_t *p;
			size_t len;
			if (cgt_sideband_decode(&cpu, &p, &len, &rec, &e) == 0) {
				int type = cgt_perf_record_type(p, len);
				struct perf_event_header h;
				memcpy(&h, p, sizeof(h));
				saw_exit |= type == PERF_RECORD_EXIT;
				saw_comm_exec |= type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC);
			}
		} else if (rec.type == CGT_REC_END) {
			saw_end = 1;
		}
	}
	cgt_reader_close(r);
	qsort(recorded.lines, recorded.n, sizeof(recorded.lines[0]), by_text);
}

static void records_the_program_module_map(void)
{
	char script[400];
	snprintf(script, sizeof(script), "cat /proc/$$/maps > %s; :", maps_path);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct cgt_record_options o = { .output = trace_path, .quiet = 1, .argv = argv,
					.notes = stderr };
	struct cgt_error e;
	cgt_pt_options_default(&o.pt);

	int status = pt_record(&o, 0, &e);
	if (status < 0)
		printf("# %s\n", e.msg);
	CHECK_EQ(status, 0);
	read_trace();
	CHECK(saw_header);
	CHECK(saw_config);
	CHECK(saw_comm_exec);
	CHECK(saw_exit);
	CHECK(saw_end);

	struct module_list expected = { .n = 0 };
	maps_modules(&expected);
	CHECK(expected.n >= 2);	/* the shell and the dynamic loader at least */
	CHECK_EQ(recorded.n, expected.n);
	for (unsigned i = 0; i < expected.n && i < recorded.n; i++) {
		if (strcmp(expected.lines[i], recorded.lines[i]) != 0)
			printf("  expected %s\n  recorded %s\n", expected.lines[i], recorded.lines[i]);
		CHECK(strcmp(expected.lines[i], recorded.lines[i]) == 0);
	}
}

static void exit_status_passes_through(void)
{
	char *argv[] = { "/bin/sh", "-c", "exit 7", NULL };
	struct cgt_record_options o = { .output = trace_path, .quiet = 1, .argv = argv,
					.notes = stderr };
	struct cgt_error e;
	cgt_pt_options_default(&o.pt);
	int status = pt_record(&o, 0, &e);
	if (status < 0)
		printf("# %s\n", e.msg);
	CHECK_EQ(status, 7);
}

/* Runs pt_record(o, 0) with stderr sent to a file; what it wrote there
   goes to err_text. */
static int record_capturing_stderr(struct cgt_record_options *o, struct cgt_error *e,
				   char *err_text, size_t size)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/stderr", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), saved = dup(2);
	fflush(stderr);
	dup2(fd, 2);
	int status = pt_record(o, 0, e);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ssize_t n = pread(fd, err_text, size - 1, 0);
	err_text[n > 0 ? n : 0] = '\0';
	close(fd);
	return status;
}

static void notes_go_to_the_callers_stream(void)
{
	/* The child cannot exec it: it says so between fork and exec. */
	char *argv[] = { "./no-such-program-xyz", NULL };
	char notes_path[300], notes[2000], err[2000];
	snprintf(notes_path, sizeof(notes_path), "%s/notes", dir);
	FILE *f = fopen(notes_path, "w+");
	struct cgt_record_options o = { .output = trace_path, .argv = argv, .notes = f };
	struct cgt_error e;
	cgt_pt_options_default(&o.pt);

	int status = record_capturing_stderr(&o, &e, err, sizeof(err));
	CHECK_EQ(status, 127);
	CHECK_EQ(strlen(err), 0);
	rewind(f);
	notes[fread(notes, 1, sizeof(notes) - 1, f)] = '\0';
	fclose(f);
	const char *cannot_run =
		"cgtrace: cannot run './no-such-program-xyz': No such file or directory\n";
	const char *recorded = "cgtrace: recorded 0 bytes of Intel PT trace on ";
	CHECK(strncmp(notes, cannot_run, strlen(cannot_run)) == 0);
	const char *summary = notes + strlen(cannot_run);
	CHECK(strncmp(summary, recorded, strlen(recorded)) == 0);
	CHECK(strstr(summary, trace_path) != NULL);
	CHECK(strchr(summary, '\n') == summary + strlen(summary) - 1);
	if (check_failed)
		printf("  notes:\n%s  stderr:\n%s", notes, err);
}

static void errors_before_the_start_come_back(void)
{
	char *argv[] = { "/bin/true", NULL };
	char notes_path[300], err[2000];
	snprintf(notes_path, sizeof(notes_path), "%s/notes", dir);
	FILE *f = fopen(notes_path, "w+");
	struct cgt_record_options o = { .output = "bad%x", .argv = argv, .notes = f };
	struct cgt_error e = { 0 };
	cgt_pt_options_default(&o.pt);

	int status = record_capturing_stderr(&o, &e, err, sizeof(err));
	CHECK_EQ(status, -cgt_err_invalid);
	CHECK_EQ(e.status, cgt_err_invalid);
	CHECK(strcmp(e.msg, "bad output name 'bad%x': a % must be followed by p, q{VAR} or %") == 0);
	CHECK_EQ(strlen(err), 0);
	CHECK_EQ(ftell(f), 0);
	fclose(f);
}

int main(void)
{
	PLAN(4);
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(trace_path, sizeof(trace_path), "%s/trace.zst", dir);
	snprintf(maps_path, sizeof(maps_path), "%s/maps", dir);
	RUN(records_the_program_module_map);
	RUN(exit_status_passes_through);
	RUN(notes_go_to_the_callers_stream);
	RUN(errors_before_the_start_come_back);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? CHECK_DONE() : 1;
}
