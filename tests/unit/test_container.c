/* The trace container: frames, records, truncation and corruption. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

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

/* Reads every record, checking each payload against write_trace's bytes;
   returns how many, or -1 on an error (its message in msg, else msg is
   empty).  frames, if not NULL, gets each record's frame offset. */
static int count_records(const char *path, size_t payload, const char **trunc, char *msg,
			 uint64_t *frames)
{
	struct cgt_error e = { 0 };
	struct cgt_reader *r;
	struct cgt_record rec;
	int n = 0, rc;
	uint8_t *want = malloc(payload + 1);
	uint32_t x = 1;

	msg[0] = '\0';
	if (cgt_reader_open(&r, path, &e) < 0) {
		strcpy(msg, e.msg);
		free(want);
		return -1;
	}
	while ((rc = cgt_reader_next(r, &rec, &e)) > 0) {
		for (size_t k = 0; k < payload; k++) {
			x = x * 1103515245u + 12345u;
			want[k] = (uint8_t)(x >> 24);
		}
		want[0] = (uint8_t)n;
		CHECK_EQ(rec.type, CGT_REC_EVENTS);
		CHECK_EQ(rec.len, payload);
		CHECK(rec.len == payload && memcmp(rec.payload, want, payload) == 0);
		if (frames != NULL)
			frames[n] = rec.frame_offset;
		n++;
	}
	free(want);
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
	CHECK_EQ(count_records(path_of("a.zst"), 1000, &trunc, msg, NULL), 100);
	CHECK(trunc == NULL);
	CHECK_EQ(cgt_file_is_trace(path_of("a.zst")), 1);
}

static void records_never_span_frames(void)
{
	/* 40 records of 300 KiB: about 3 frames of at most 4 MiB. */
	const char *trunc;
	char msg[1024];
	uint64_t frames[40];
	write_trace(path_of("b.zst"), 40, 300 * 1024);
	CHECK_EQ(count_records(path_of("b.zst"), 300 * 1024, &trunc, msg, frames), 40);
	/* 13 records (3.9 MiB) fill a frame of at most 4 MiB: a new frame
	   begins at records 13, 26 and 39 and nowhere else */
	for (int i = 1; i < 40; i++)
		if ((frames[i] != frames[i - 1]) != (i % 13 == 0))
			printf("  record %d: frame at %llu, the record before in %llu\n", i,
			       (unsigned long long)frames[i], (unsigned long long)frames[i - 1]);
	for (int i = 1; i < 40; i++)
		CHECK((frames[i] != frames[i - 1]) == (i % 13 == 0));
	CHECK(frames[13] > frames[0] && frames[26] > frames[13] && frames[39] > frames[26]);
}

static void truncated_file_uses_complete_frames(void)
{
	const char *trunc;
	char msg[1024], cmd[1024];
	write_trace(path_of("c.zst"), 40, 300 * 1024);
	snprintf(cmd, sizeof(cmd), "head -c 8000000 %s > %s", path_of("c.zst"), path_of("c-cut.zst"));
	CHECK(system(cmd) == 0);
	int n = count_records(path_of("c-cut.zst"), 300 * 1024, &trunc, msg, NULL);
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
	CHECK(f != NULL);
	if (f == NULL)
		return;
	CHECK(fscanf(f, "%d", &size) == 1);
	fclose(f);
	CHECK(size > 0);
	for (int cut = 0; cut < size; cut++) {
		snprintf(cmd, sizeof(cmd), "head -c %d %s > %s", cut, path_of("d.zst"), path_of("d-cut.zst"));
		CHECK(system(cmd) == 0);
		msg[0] = '\0';
		int n = count_records(path_of("d-cut.zst"), 100, &trunc, msg, NULL);
		CHECK(n == -1);		/* one frame only: nothing complete */
		CHECK(strstr(msg, "not a cgtrace trace") != NULL);
	}
}

/* The number of file descriptors this process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		return -1;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static void corrupt_bytes_give_errors(void)
{
	char msg[1024];
	const char *trunc;
	int fds = open_fds();
	write_trace(path_of("e.zst"), 20, 2000);
	int fd = open(path_of("e.zst"), O_RDWR);
	CHECK(fd >= 0);
	off_t size = lseek(fd, 0, SEEK_END);
	close(fd);
	CHECK(size > 20);
	for (off_t at = 20; at < size; at += size / 7) {
		write_trace(path_of("e.zst"), 20, 2000);
		fd = open(path_of("e.zst"), O_RDWR);
		CHECK(fd >= 0);
		uint8_t junk[4] = { 0xde, 0xad, 0xbe, 0xef };
		CHECK(pwrite(fd, junk, sizeof(junk), at) == sizeof(junk));
		close(fd);
		msg[0] = '\0';
		int n = count_records(path_of("e.zst"), 2000, &trunc, msg, NULL);
		CHECK(n == -1);
		CHECK(strstr(msg, "e.zst") != NULL);
	}
	/* neither the test nor the reader left a file open */
	CHECK_EQ(open_fds(), fds);
}

static void not_a_trace(void)
{
	char msg[1024];
	const char *trunc;
	int fd = open(path_of("f.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(write(fd, "hello world\n", 12) == 12);
	close(fd);
	CHECK_EQ(count_records(path_of("f.txt"), 0, &trunc, msg, NULL), (unsigned long long)-1);
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

/* Each record names its frame: offset and compressed size, which tile
   the file with the segment markers between them. */
static void records_tell_their_frame(void)
{
	struct cgt_error e;
	struct cgt_reader *r;
	struct cgt_record rec;
	uint64_t frame = UINT64_MAX, covered = 0;
	int rc;

	write_trace(path_of("h.zst"), 40, 300 * 1024);
	CHECK(cgt_reader_open(&r, path_of("h.zst"), &e) == 0);
	while ((rc = cgt_reader_next(r, &rec, &e)) > 0) {
		CHECK(rec.frame_size > 0);
		if (rec.frame_offset != frame) {
			/* a segment marker (16 bytes) may come between frames */
			CHECK(rec.frame_offset == covered || rec.frame_offset == covered + 16);
			frame = rec.frame_offset;
			covered = rec.frame_offset + rec.frame_size;
		}
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(covered, cgt_reader_file_size(r));
	cgt_reader_close(r);
}

/* Writes the stream header as one zstd frame of the given window (log 2),
   its size undeclared; returns cgt_file_is_trace of it. */
static int is_trace_with_window(int window_log)
{
	uint8_t in[CGT_STREAM_HEADER_LEN] = "CGTRACE\n\2\0\0\0\0\0\0\0", out[256];
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	ZSTD_outBuffer ob = { out, sizeof(out), 0 };
	ZSTD_inBuffer ib = { in, sizeof(in), 0 };

	ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
	/* in two steps, so that zstd does not learn the size and keep the
	   window asked for */
	CHECK(!ZSTD_isError(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_continue)));
	CHECK(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end) == 0);
	ZSTD_freeCCtx(cctx);
	int fd = open(path_of("w.zst"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(write(fd, out, ob.pos) == (ssize_t)ob.pos);
	close(fd);
	return cgt_file_is_trace(path_of("w.zst"));
}

/* A frame whose window is larger than a frame can be (CGT_FRAME_MAX) is
   no trace: cgt_file_is_trace does not allocate its window. */
static void a_window_over_a_frame_is_not_a_trace(void)
{
	CHECK_EQ(is_trace_with_window(22), 1);
	CHECK_EQ(is_trace_with_window(27), 0);
}

int main(void)
{
	PLAN(9);
	if (mkdtemp(dir) == NULL)
		return 1;
	RUN(round_trip);
	RUN(records_never_span_frames);
	RUN(truncated_file_uses_complete_frames);
	RUN(every_cut_is_handled);
	RUN(corrupt_bytes_give_errors);
	RUN(not_a_trace);
	RUN(oversized_records_are_refused);
	RUN(records_tell_their_frame);
	RUN(a_window_over_a_frame_is_not_a_trace);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return CHECK_DONE();
}
