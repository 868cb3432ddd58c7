/* The trace container: frames, records, truncation and corruption. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "trace.h"

static char dir[] = "/tmp/cgtrace-unit-XXXXXX";

/* Several calls may appear in one expression: rotate buffers. */
static char *path_of(const char *name)
{
	static char buf[4][128];
	static int next;
	char *p = buf[next++ % 4];
	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

/* Writes n records of type EVENTS whose payloads are i repeated (pseudo-
   random bytes, so that frames do not compress to nothing). */
static void write_trace(const char *path, int n, size_t payload)
{
	struct cgt_error e;
	struct cgt_writer *w;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	uint8_t *buf = malloc(payload);
	uint32_t x = 1;

	CHECK(cgt_writer_open(&w, fd, path, &e) == 0);
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; k < payload; k++) {
			x = x * 1103515245u + 12345u;
			buf[k] = (uint8_t)(x >> 24);
		}
		buf[0] = (uint8_t)i;
		CHECK(cgt_writer_put(w, CGT_REC_EVENTS, buf, payload, &e) == 0);
	}
	CHECK(cgt_writer_close(w, &e) == 0);
	close(fd);
	free(buf);
}

/* Reads every record; returns how many, or -1 on an error. */
static int count_records(const char *path, size_t payload, const char **trunc, char *msg)
{
	struct cgt_error e;
	struct cgt_reader *r;
	struct cgt_record rec;
	int n = 0, rc;

	if (cgt_reader_open(&r, path, &e) < 0) {
		strcpy(msg, e.msg);
		return -1;
	}
	while ((rc = cgt_reader_next(r, &rec, &e)) > 0) {
		CHECK_EQ(rec.type, CGT_REC_EVENTS);
		CHECK_EQ(rec.len, payload);
		CHECK_EQ(rec.payload[0], (uint8_t)n);
		n++;
	}
	if (rc < 0)
		strcpy(msg, e.msg);
	static char saved[1024];
	saved[0] = '\0';
	if (cgt_reader_truncation(r))
		strcpy(saved, cgt_reader_truncation(r));
	*trunc = saved[0] ? saved : NULL;
	cgt_reader_close(r);
	return rc < 0 ? -1 : n;
}

static void round_trip(void)
{
	const char *trunc;
	char msg[1024];
	write_trace(path_of("a.zst"), 100, 1000);
	CHECK_EQ(count_records(path_of("a.zst"), 1000, &trunc, msg), 100);
	CHECK(trunc == NULL);
	CHECK_EQ(cgt_file_is_trace(path_of("a.zst")), 1);
}

static void records_never_span_frames(void)
{
	/* 40 records of 300 KiB: about 3 frames of at most 4 MiB. */
	const char *trunc;
	char msg[1024];
	write_trace(path_of("b.zst"), 40, 300 * 1024);
	CHECK_EQ(count_records(path_of("b.zst"), 300 * 1024, &trunc, msg), 40);
}

static void truncated_file_uses_complete_frames(void)
{
	const char *trunc;
	char msg[1024], cmd[1024];
	write_trace(path_of("c.zst"), 40, 300 * 1024);
	snprintf(cmd, sizeof(cmd), "head -c 8000000 %s > %s", path_of("c.zst"), path_of("c-cut.zst"));
	CHECK(system(cmd) == 0);
	int n = count_records(path_of("c-cut.zst"), 300 * 1024, &trunc, msg);
	/* 13 records fit in a 4 MiB frame: the first frame survives whole. */
	CHECK(n > 0 && n < 40 && n % 13 == 0);
	CHECK(trunc != NULL && strstr(trunc, "truncated trace") != NULL);
	CHECK(trunc != NULL && strstr(trunc, "byte offset") != NULL);
}

static void every_cut_is_handled(void)
{
	/* Cut a small trace at every length: never a crash, always either the
	   complete frames with a truncation note, or "not a trace". */
	char cmd[1024], msg[1024];
	const char *trunc;
	write_trace(path_of("d.zst"), 3, 100);
	snprintf(cmd, sizeof(cmd), "stat -c %%s %s > %s", path_of("d.zst"), path_of("size"));
	CHECK(system(cmd) == 0);
	FILE *f = fopen(path_of("size"), "r");
	int size = 0;
	CHECK(fscanf(f, "%d", &size) == 1);
	fclose(f);
	for (int cut = 0; cut < size; cut++) {
		snprintf(cmd, sizeof(cmd), "head -c %d %s > %s", cut, path_of("d.zst"), path_of("d-cut.zst"));
		CHECK(system(cmd) == 0);
		int n = count_records(path_of("d-cut.zst"), 100, &trunc, msg);
		CHECK(n == -1);		/* one frame only: nothing complete */
		CHECK(strstr(msg, "not a cgtrace trace") != NULL);
	}
}

static void corrupt_bytes_give_errors(void)
{
	char msg[1024];
	const char *trunc;
	write_trace(path_of("e.zst"), 20, 2000);
	int fd = open(path_of("e.zst"), O_RDWR);
	off_t size = lseek(fd, 0, SEEK_END);
	for (off_t at = 20; at < size; at += size / 7) {
		write_trace(path_of("e.zst"), 20, 2000);
		fd = open(path_of("e.zst"), O_RDWR);
		uint8_t junk[4] = { 0xde, 0xad, 0xbe, 0xef };
		CHECK(pwrite(fd, junk, sizeof(junk), at) == sizeof(junk));
		close(fd);
		int n = count_records(path_of("e.zst"), 2000, &trunc, msg);
		CHECK(n == -1);
		CHECK(strstr(msg, "e.zst") != NULL);
	}
}

static void not_a_trace(void)
{
	char msg[1024];
	const char *trunc;
	int fd = open(path_of("f.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(write(fd, "hello world\n", 12) == 12);
	close(fd);
	CHECK_EQ(count_records(path_of("f.txt"), 0, &trunc, msg), (unsigned long long)-1);
	CHECK(strstr(msg, "not a cgtrace trace") != NULL);
	CHECK_EQ(cgt_file_is_trace(path_of("f.txt")), 0);
}

static void oversized_records_are_refused(void)
{
	struct cgt_error e;
	struct cgt_writer *w;
	int fd = open(path_of("g.zst"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	uint8_t *big = calloc(1, CGT_RECORD_MAX + 1);
	CHECK(cgt_writer_open(&w, fd, "g.zst", &e) == 0);
	CHECK(cgt_writer_put(w, CGT_REC_EVENTS, big, CGT_RECORD_MAX + 1, &e) < 0);
	CHECK(cgt_writer_close(w, &e) == 0);
	close(fd);
	free(big);
}

int main(void)
{
	PLAN(7);
	if (mkdtemp(dir) == NULL)
		return 1;
	RUN(round_trip);
	RUN(records_never_span_frames);
	RUN(truncated_file_uses_complete_frames);
	RUN(every_cut_is_handled);
	RUN(corrupt_bytes_give_errors);
	RUN(not_a_trace);
	RUN(oversized_records_are_refused);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return CHECK_DONE();
}
