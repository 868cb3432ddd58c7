/* Archives (formats/archive.c): round trips, members unpacked one at a
   time as asked, what the real tar makes of ours and we of its, input that
   is truncated, damaged, not an archive, unsafe to unpack or past the
   limits, and an archive that changes while open. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "trace.h"

/* The tests work in a directory of their own (the current one). */

static uint32_t lcg = 12345;
static uint8_t noise(void)
{
	lcg = lcg * 1103515245u + 12345u;
	return (uint8_t)(lcg >> 16);
}

static void make_dirs_for(const char *path)
{
	char *copy = strdup(path);
	for (char *p = strchr(copy + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		mkdir(copy, 0755);
		*p = '/';
	}
	free(copy);
}

static void put_bytes(const char *path, const void *data, size_t n)
{
	make_dirs_for(path);
	FILE *f = fopen(path, "wb");
	if (f != NULL) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

static void put_noise(const char *path, size_t n)
{
	uint8_t *buf = malloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = noise();
	put_bytes(path, buf, n);
	free(buf);
}

static uint8_t *get_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	for (size_t got; (got = fread(buf + len, 1, cap - len, f)) > 0;) {
		len += got;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	*n = len;
	return buf;
}

static int same_file(const char *a, const char *b)
{
	size_t na, nb;
	uint8_t *pa = get_bytes(a, &na), *pb = get_bytes(b, &nb);
	int same = pa != NULL && pb != NULL && na == nb && memcmp(pa, pb, na) == 0;
	free(pa);
	free(pb);
	return same;
}

static int has(const char *path, const char *text)
{
	size_t n;
	uint8_t *p = get_bytes(path, &n);
	int same = p != NULL && n == strlen(text) && memcmp(p, text, n) == 0;
	free(p);
	return same;
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* The first line of a shell command's output, or its whole output. */
static char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	if (p == NULL)
		return strdup("");
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);
	for (size_t got; (got = fread(out + len, 1, cap - 1 - len, p)) > 0;) {
		len += got;
		if (len == cap - 1)
			out = realloc(out, cap *= 2);
	}
	out[len] = '\0';
	pclose(p);
	return out;
}

static int archive(const char *path, const char *const *members, const char *const *srcs,
		   size_t n)
{
	struct cgt_archive_writer *w;
	struct cgt_error e = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc = -1;
	if (fd >= 0 && cgt_archive_create(&w, fd, path, &e) == 0) {
		rc = 0;
		for (size_t i = 0; i < n && rc >= 0; i++)
			rc = cgt_archive_add(w, members[i], srcs[i], &e);
		if (rc >= 0)
			rc = cgt_archive_finish(w, &e);
		cgt_archive_free(w);
	}
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		printf("  %s\n", e.msg);
	return rc;
}

/* ---- Writing tar streams by hand (for what our writer never makes) ---- */

struct tar {
	uint8_t *p;
	size_t n, cap;
};

static void tar_put(struct tar *t, const void *data, size_t n)
{
	while (t->n + n > t->cap)
		t->p = realloc(t->p, t->cap = t->cap ? 2 * t->cap : 1 << 16);
	memcpy(t->p + t->n, data, n);
	t->n += n;
}

/* A ustar header and the data (len bytes of it; size is what the header
   says).  Returns the header's offset. */
static size_t tar_member(struct tar *t, const char *name, char type, const void *data, size_t len,
			 const char *size_field)
{
	uint8_t h[512] = { 0 };
	size_t at = t->n;
	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	if (size_field != NULL)
		memcpy(h + 124, size_field, 12);
	else
		snprintf((char *)h + 124, 12, "%011o", (unsigned)len);
	memcpy(h + 136, "00000000000", 12);
	h[156] = (uint8_t)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	unsigned sum = 0;
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	tar_put(t, h, 512);
	tar_put(t, data, len);
	static const uint8_t zeros[512];
	tar_put(t, zeros, (512 - len % 512) % 512);
	return at;
}

static void tar_end(struct tar *t)
{
	static const uint8_t zeros[1024];
	tar_put(t, zeros, sizeof(zeros));
}

static void put_zstd(const char *path, const void *data, size_t n)
{
	size_t cap = ZSTD_compressBound(n);
	void *z = malloc(cap);
	size_t zn = ZSTD_compress(z, cap, data, n, 3);
	put_bytes(path, z, zn);
	free(z);
}

/* ---- Reading: open, unpack on demand ----------------------------------- */

/* Unpacks name from a and says whether it is the file expected (NULL:
   that a holds no such member). */
static int unpacks_as(struct cgt_archive *a, const char *name, const char *expected)
{
	struct cgt_error e = { 0 };
	char *path;
	int rc = cgt_archive_unpack_member(a, name, &path, &e);
	int same = expected == NULL ? rc == 0 && path == NULL
				    : rc == 1 && same_file(path, expected);
	if (!same)
		printf("  %s: %d %s\n", name, rc, rc < 0 ? e.msg : "");
	free(path);
	return same;
}

/* Unpacks name and says whether it holds text. */
static int unpacks_text(struct cgt_archive *a, const char *name, const char *text)
{
	struct cgt_error e = { 0 };
	char *path;
	int rc = cgt_archive_unpack_member(a, name, &path, &e);
	int same = rc == 1 && has(path, text);
	if (!same)
		printf("  %s: %d %s\n", name, rc, rc < 0 ? e.msg : "");
	free(path);
	return same;
}

/* The directory members of a are unpacked into (after one was). */
static char *unpack_dir(struct cgt_archive *a, const char *member)
{
	struct cgt_error e = { 0 };
	char *path;
	if (cgt_archive_unpack_member(a, member, &path, &e) != 1)
		return strdup("?");
	*strstr(path, member) = '\0';
	return path;
}

static int files_under(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "find '%s' -type f | wc -l", dir);
	char *count = run(cmd);
	int n = atoi(count);
	free(count);
	return n;
}

/* The number of zstd frames in the file at path, as zstd -l counts them. */
static int zstd_frames(const char *path)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "zstd -l '%s' | awk 'NR == 2 { print $1 }'", path);
	char *count = run(cmd);
	int n = atoi(count);
	free(count);
	return n;
}

/* ---- Tests --------------------------------------------------------------- */

static void round_trip(void)
{
	char long_dir[200];
	memset(long_dir, 'd', 150);
	long_dir[150] = '\0';
	char long_src[256], long_member[300];
	snprintf(long_src, sizeof(long_src), "rt/src/%s/file.c", long_dir);
	snprintf(long_member, sizeof(long_member), "sources/home/u/%s/file.c", long_dir);
	put_bytes("rt/src/hello.c", "hello\n", 6);
	put_bytes("rt/src/empty", "", 0);
	put_noise("rt/src/big", 300000);
	put_bytes(long_src, "int x;\n", 7);
	/* more decompressed bytes than a read of the file gives at once, and
	   enough to put what follows into a zstd frame of its own */
	uint8_t *pattern = malloc(5 << 20);
	for (size_t i = 0; i < 5 << 20; i++)
		pattern[i] = (uint8_t)"pattern"[i % 7];
	put_bytes("rt/src/pattern", pattern, 5 << 20);
	free(pattern);
	struct timeval tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	utimes("rt/src/big", tv);

	const char *members[] = { "sources/home/u/hello.c", "empty/e", "p", "build-id/ab/cdef0123/elf",
				  long_member, "sources/home/u/hello.c" };
	const char *srcs[] = { "rt/src/hello.c", "rt/src/empty", "rt/src/pattern", "rt/src/big",
			       long_src, "rt/src/big" };
	struct cgt_archive_writer *w;
	struct cgt_error e = { 0 };
	int fd = open("rt/a.archive", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(cgt_archive_create(&w, fd, "rt/a.archive", &e) == 0);
	for (int i = 0; i < 5; i++)
		CHECK(cgt_archive_add(w, members[i], srcs[i], &e) == 1);
	/* the same name again, from another file: a no-op */
	CHECK(cgt_archive_add(w, members[5], srcs[5], &e) == 0);
	CHECK_EQ(cgt_archive_data_bytes(w), 6 + 300000 + 7 + (5 << 20));
	/* not a member name, not a regular file */
	CHECK(cgt_archive_add(w, "/abs", "rt/src/hello.c", &e) == -cgt_err_invalid);
	CHECK(cgt_archive_add(w, "a/../b", "rt/src/hello.c", &e) == -cgt_err_invalid);
	CHECK(cgt_archive_add(w, "dir", "rt/src", &e) == -cgt_err_invalid);
	CHECK(mkfifo("rt/fifo", 0644) == 0);
	CHECK(cgt_archive_add(w, "fifo", "rt/fifo", &e) == -cgt_err_invalid);	/* no wait */
	CHECK(cgt_archive_add(w, "gone", "rt/src/missing", &e) == -cgt_err_io);
	CHECK(cgt_archive_finish(w, &e) == 0);
	cgt_archive_free(w);
	close(fd);
	/* the members after the 5 MiB one begin a frame of their own */
	CHECK_EQ(zstd_frames("rt/a.archive"), 2);

	struct cgt_archive *a;
	CHECK(cgt_archive_open(&a, "rt/a.archive", NULL, NULL, &e) == 0);	/* read through only */
	char *path;
	CHECK(cgt_archive_unpack_member(a, "p", &path, &e) == -cgt_err_invalid && path == NULL);
	cgt_archive_close(a);

	mkdir("rt/scratch", 0755);
	CHECK(cgt_archive_open(&a, "rt/a.archive", "rt/scratch", NULL, &e) == 0);
	CHECK(files_under("rt/scratch") == 0);	/* nothing unpacked before it is asked for */
	/* from the end backwards: each from its frame's start */
	CHECK(unpacks_as(a, long_member, long_src));
	char *dir = unpack_dir(a, "build-id/ab/cdef0123/elf");
	CHECK(strncmp(dir, "rt/scratch/cgtrace-archive.", 27) == 0);
	CHECK(files_under(dir) == 2);	/* only what was asked for */
	CHECK(unpacks_as(a, "p", "rt/src/pattern"));
	CHECK(unpacks_as(a, "sources/home/u/hello.c", "rt/src/hello.c"));
	CHECK(unpacks_as(a, "empty/e", "rt/src/empty"));
	/* again: the same file; in order: reading on */
	CHECK(unpacks_as(a, "p", "rt/src/pattern"));
	CHECK(unpacks_as(a, "./build-id//ab/cdef0123/elf", "rt/src/big"));
	CHECK(files_under(dir) == 5);
	/* what it does not hold */
	CHECK(unpacks_as(a, "sources/home/u/other.c", NULL));
	CHECK(unpacks_as(a, "../p", NULL));
	CHECK(unpacks_as(a, "empty", NULL));	/* a directory of the unpacked */
	char path_there[512];
	snprintf(path_there, sizeof(path_there), "%sbuild-id/ab/cdef0123/elf", dir);
	struct stat st;
	CHECK(stat(path_there, &st) == 0 && st.st_mtime == 1000000000 &&
	      (st.st_mode & 07777) == 0644);
	cgt_archive_close(a);
	CHECK(!exists(dir) && files_under("rt/scratch") == 0);	/* removed */
	free(dir);

	/* the real tar lists and extracts it */
	char expected[1024];
	snprintf(expected, sizeof(expected), "%s\n%s\n%s\n%s\n%s\n", members[0], members[1],
		 members[2], members[3], long_member);
	char *listing = run("tar --zstd -tf rt/a.archive 2>&1");
	CHECK(strcmp(listing, expected) == 0);
	if (strcmp(listing, expected) != 0)
		printf("  tar lists:\n%s", listing);
	free(listing);
	char *verbose = run("tar --zstd -tvf rt/a.archive 2>&1 | sed -n 4p");
	CHECK(strncmp(verbose, "-rw-r--r--", 10) == 0 && strstr(verbose, " 300000 2001-09-") != NULL);
	free(verbose);
	mkdir("rt/tar", 0755);
	char *status = run("tar --zstd -xf rt/a.archive -C rt/tar 2>&1; echo $?");
	CHECK(strcmp(status, "0\n") == 0);
	free(status);
	CHECK(same_file("rt/tar/sources/home/u/hello.c", "rt/src/hello.c"));
	CHECK(same_file("rt/tar/build-id/ab/cdef0123/elf", "rt/src/big"));
	char path_tar[512];
	snprintf(path_tar, sizeof(path_tar), "rt/tar/%s", long_member);
	CHECK(same_file(path_tar, long_src));
	CHECK(exists("rt/tar/empty/e"));
	CHECK(same_file("rt/tar/p", "rt/src/pattern"));
}

/* What the real tar makes (GNU's long names, pax headers) we unpack. */
static void tar_made_archives(void)
{
	char long_name[200];
	memset(long_name, 'n', 140);
	strcpy(long_name + 140, ".c");
	char path[300];
	snprintf(path, sizeof(path), "tm/src/%s", long_name);
	put_bytes(path, "long\n", 5);
	put_noise("tm/src/sub/data", 100000);
	char long_dir[200], in_dir[300];
	memset(long_dir, 'p', 120);
	strcpy(long_dir + 120, "/short.c");
	snprintf(in_dir, sizeof(in_dir), "tm/src/%s", long_dir);
	put_bytes(in_dir, "in a long directory\n", 20);
	const char *formats[] = { "gnu", "posix", "ustar" };
	for (int i = 0; i < 3; i++) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd),
			 "cd tm/src && tar --format=%s --zstd -cf ../%s.tar.zst %s sub/data %s 2>&1;"
			 " echo $?", formats[i], formats[i], i == 2 ? "" : long_name, long_dir);
		char *status = run(cmd);
		CHECK(strcmp(status, "0\n") == 0);
		free(status);
		struct cgt_error e = { 0 };
		char archive_path[64];
		snprintf(archive_path, sizeof(archive_path), "tm/%s.tar.zst", formats[i]);
		struct cgt_archive *a;
		int rc = cgt_archive_open(&a, archive_path, "tm", NULL, &e);
		CHECK(rc == 0);
		if (rc != 0)
			printf("  %s: %s\n", formats[i], e.msg);
		CHECK(unpacks_as(a, "sub/data", "tm/src/sub/data"));
		if (i < 2)
			CHECK(unpacks_as(a, long_name, path));
		CHECK(unpacks_as(a, long_dir, in_dir));
		cgt_archive_close(a);
	}
}

static void truncated(void)
{
	put_bytes("tr/one", "one\n", 4);
	put_bytes("tr/two", "two\n", 4);
	put_noise("tr/big", 300000);
	const char *members[] = { "m/one", "m/two", "m/big" };
	const char *srcs[] = { "tr/one", "tr/two", "tr/big" };
	CHECK(archive("tr/a.archive", members, srcs, 3) == 0);
	size_t n;
	uint8_t *whole = get_bytes("tr/a.archive", &n);
	CHECK(whole != NULL && n > 300000);

	put_bytes("tr/half.archive", whole, n / 2);
	struct cgt_error e = { 0 };
	struct cgt_archive *a;
	CHECK(cgt_archive_open(&a, "tr/half.archive", "tr", NULL, &e) == 1);
	char expected[128];
	snprintf(expected, sizeof(expected), "tr/half.archive: truncated at byte offset %zu (compressed) in member m/big (",
		 n / 2);
	CHECK(strncmp(e.msg, expected, strlen(expected)) == 0);
	if (strncmp(e.msg, expected, strlen(expected)) != 0)
		printf("  %s\n", e.msg);
	CHECK(unpacks_as(a, "m/one", "tr/one") && unpacks_as(a, "m/two", "tr/two"));
	CHECK(unpacks_as(a, "m/big", NULL));
	cgt_archive_close(a);

	/* every cut: never a crash, never success, never half a member */
	int all_fail = 1, wrong_status = 0, wrong_member = 0;
	for (size_t cut = 0; cut < n; cut += cut < 600 ? 1 : 997) {
		put_bytes("tr/cut.archive", whole, cut);
		int rc = cgt_archive_open(&a, "tr/cut.archive", "tr", NULL, &e);
		all_fail &= rc != 0;
		wrong_status |= cut < 4 ? rc != -cgt_err_not_trace : rc != 1;
		for (int i = 0; rc == 1 && i < 3; i++) {
			char *path;
			int got = cgt_archive_unpack_member(a, members[i], &path, &e);
			wrong_member |= got < 0 || (got == 1 && !same_file(path, srcs[i]));
			free(path);
		}
		cgt_archive_close(a);
	}
	/* the last bytes: the zstd frame's checksum; the members are whole */
	for (size_t cut = n - 4; cut < n; cut++) {
		put_bytes("tr/cut.archive", whole, cut);
		wrong_status |= cgt_archive_open(&a, "tr/cut.archive", "tr", NULL, &e) != 1;
		wrong_member |= !unpacks_as(a, "m/big", "tr/big");
		cgt_archive_close(a);
	}
	CHECK(strstr(e.msg, "after the end-of-archive blocks") != NULL);
	CHECK(all_fail);
	CHECK(!wrong_status);
	CHECK(!wrong_member);
	CHECK(files_under("tr") == 6);	/* the sources and archives: nothing left */
	/* a flipped bit inside the big member's compressed bytes */
	whole[n / 2] ^= 0x10;
	put_bytes("tr/flip.archive", whole, n);
	CHECK(cgt_archive_open(&a, "tr/flip.archive", "tr", NULL, &e) == 1);
	CHECK(strstr(e.msg, "damaged at byte offset") != NULL);
	CHECK(unpacks_as(a, "m/one", "tr/one"));
	CHECK(unpacks_as(a, "m/big", NULL));
	cgt_archive_close(a);
	free(whole);
}

static void not_archives(void)
{
	struct cgt_error e = { 0 };
	struct cgt_archive *a = (struct cgt_archive *)&e;
	put_bytes("na/empty", "", 0);
	CHECK(cgt_archive_open(&a, "na/empty", "na", NULL, &e) == -cgt_err_not_trace && a == NULL);
	CHECK(strstr(e.msg, "na/empty: not a cgtrace archive: it is empty, expected a zstd frame") == e.msg);
	put_noise("na/garbage", 1000);
	CHECK(cgt_archive_open(&a, "na/garbage", "na", NULL, &e) == -cgt_err_not_trace);
	CHECK(strstr(e.msg, "expected a zstd frame (bytes 28 b5 2f fd) at byte offset 0") != NULL);
	char text[4000];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = "not a tar file\n"[i % 15];
	put_zstd("na/text.zst", text, sizeof(text));
	CHECK(cgt_archive_open(&a, "na/text.zst", "na", NULL, &e) == -cgt_err_not_trace);
	CHECK(cgt_archive_open(&a, "na/text.zst", NULL, NULL, &e) == -cgt_err_not_trace);
	CHECK(strstr(e.msg, "does not begin with a tar (ustar) header: no ustar magic") != NULL);
	put_zstd("na/short.zst", text, 100);
	CHECK(cgt_archive_open(&a, "na/short.zst", "na", NULL, &e) == -cgt_err_not_trace);
	CHECK(strstr(e.msg, "its zstd data is 100 bytes, less than a tar header") != NULL);
	CHECK(cgt_archive_open(&a, "na/missing", "na", NULL, &e) == -cgt_err_io);
	/* a FIFO: refused, never waited on */
	CHECK(mkfifo("na/fifo", 0644) == 0);
	CHECK(cgt_archive_open(&a, "na/fifo", "na", NULL, &e) == -cgt_err_io);
	CHECK(files_under("na") == 4);
}

static void bad_checksum(void)
{
	struct tar t = { 0 };
	tar_member(&t, "a/ok", '0', "fine\n", 5, NULL);
	size_t bad = tar_member(&t, "a/bad", '0', "bad\n", 4, NULL);
	tar_member(&t, "a/after", '0', "after\n", 6, NULL);
	tar_end(&t);
	t.p[bad + 1] ^= 1;	/* "a/bad" -> "`/bad", checksum unchanged */
	put_zstd("bc/a.archive", t.p, t.n);
	struct cgt_error e = { 0 };
	struct cgt_archive *a;
	CHECK(cgt_archive_open(&a, "bc/a.archive", "bc", NULL, &e) == 1);
	CHECK(strstr(e.msg, "damaged at byte 1024 of the tar stream") != NULL &&
	      strstr(e.msg, "after member a/ok: expected a tar header, found one with its checksum does not match") != NULL);
	CHECK(unpacks_text(a, "a/ok", "fine\n"));
	CHECK(unpacks_as(a, "a/bad", NULL) && unpacks_as(a, "`/bad", NULL) &&
	      unpacks_as(a, "a/after", NULL));
	cgt_archive_close(a);
	/* the first header: then it is no archive */
	t.p[bad + 1] ^= 1;
	t.p[1] ^= 1;
	put_zstd("bc/b.archive", t.p, t.n);
	CHECK(cgt_archive_open(&a, "bc/b.archive", "bc", NULL, &e) == -cgt_err_not_trace);
	CHECK(strstr(e.msg, "its checksum does not match its bytes") != NULL);
	free(t.p);
}

static void unsafe_names(void)
{
	struct tar t = { 0 };
	tar_member(&t, "../x", '0', "up\n", 3, NULL);
	tar_member(&t, "/tmp/cgt-archive-test-absolute", '0', "abs\n", 4, NULL);
	tar_member(&t, "a/../../y", '0', "up\n", 3, NULL);
	tar_member(&t, "lnk", '2', "", 0, NULL);
	tar_member(&t, "d/", '5', "", 0, NULL);
	tar_member(&t, "dev", '3', "", 0, NULL);
	tar_member(&t, "./good//file", '0', "good\n", 5, NULL);
	tar_member(&t, "other", '0', "other\n", 6, NULL);
	tar_end(&t);
	put_zstd("un/a.archive", t.p, t.n);
	free(t.p);
	mkdir("un/victim", 0755);
	struct cgt_error e = { 0 };
	struct cgt_archive *a;
	CHECK(cgt_archive_open(&a, "un/a.archive", "un", NULL, &e) == 1);
	CHECK(strstr(e.msg, "un/a.archive: member '../x' (header at byte 0 of the tar stream) not"
			    " extracted: a name with a '..' component (and 5 more skipped)") == e.msg);
	const char *unsafe[] = { "../x", "x", "/tmp/cgt-archive-test-absolute",
				 "tmp/cgt-archive-test-absolute", "y", "lnk", "d", "dev" };
	for (size_t i = 0; i < sizeof(unsafe) / sizeof(*unsafe); i++)
		CHECK(unpacks_as(a, unsafe[i], NULL));
	CHECK(unpacks_text(a, "good/file", "good\n"));
	CHECK(!exists("un/x") && !exists("x") && !exists("/tmp/cgt-archive-test-absolute"));

	/* a symlink put into the directory is never followed */
	char *dir = unpack_dir(a, "other"), link[512];
	snprintf(link, sizeof(link), "%sgood", dir);
	char *rm = NULL;
	CHECK(asprintf(&rm, "rm -r '%s'", link) > 0 && system(rm) == 0);
	free(rm);
	CHECK(symlink("../../victim", link) == 0);
	char *path;
	CHECK(cgt_archive_unpack_member(a, "good/file", &path, &e) < 0);
	CHECK(strstr(e.msg, "un/a.archive: cannot unpack member good/file: cannot make its"
			    " directories: ") == e.msg);
	CHECK(!exists("un/victim/file"));
	cgt_archive_close(a);
	CHECK(files_under("un") == 1);	/* the archive */
	free(dir);
}

/* A size of 2^60 is never allocated, never read: past the limit. */
static void huge_sizes(void)
{
	struct tar t = { 0 };
	uint8_t data[5000];
	memset(data, 'h', sizeof(data));
	tar_member(&t, "small", '0', "s\n", 2, NULL);
	const char pax[] = "28 size=1152921504606846976\n";
	tar_member(&t, "././@PaxHeader", 'x', pax, strlen(pax), NULL);
	tar_member(&t, "huge", '0', data, sizeof(data), NULL);
	put_zstd("hs/pax.archive", t.p, t.n);
	struct cgt_error e = { 0 };
	struct cgt_archive *a;
	CHECK(cgt_archive_open(&a, "hs/pax.archive", "hs", NULL, &e) == 1);
	CHECK(strcmp(e.msg, "hs/pax.archive: member huge (1152921504606846976 bytes, at byte 2560"
			    " of the tar stream) goes past the limit of 8589934592 bytes an"
			    " archive may hold; it and the rest are not used") == 0);
	CHECK(unpacks_text(a, "small", "s\n") && unpacks_as(a, "huge", NULL));
	cgt_archive_close(a);

	/* GNU's base-256 size field, on a pax header itself */
	t.n = 0;
	const char base256[12] = { (char)0x80, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0 };
	tar_member(&t, "././@PaxHeader", 'x', data, sizeof(data), base256);
	put_zstd("hs/b256.archive", t.p, t.n);
	CHECK(cgt_archive_open(&a, "hs/b256.archive", "hs", NULL, &e) == 1);
	CHECK(strstr(e.msg, "member (a pax header) (1152921504606846976 bytes, at byte 512 of the"
			    " tar stream) goes past the limit") != NULL);
	cgt_archive_close(a);
	free(t.p);
}

/* What an archive may hold: the members before a limit are used, none
   after it, and nothing past it is ever unpacked. */
static void limits(void)
{
	put_noise("li/a", 1000);
	put_noise("li/b", 100000);
	put_noise("li/c", 10);
	const char *members[] = { "a", "b", "c" }, *srcs[] = { "li/a", "li/b", "li/c" };
	CHECK(archive("li/three.archive", members, srcs, 3) == 0);
	struct cgt_error e = { 0 };
	struct cgt_archive *a;
	/* a's header and data take 512 + 1024 bytes, b's header 512 more */
	const struct cgt_archive_limits bytes = { 2048 + 100000 - 1, 0 };
	CHECK(cgt_archive_open(&a, "li/three.archive", "li", &bytes, &e) == 1);
	CHECK(strcmp(e.msg, "li/three.archive: member b (100000 bytes, at byte 2048 of the tar"
			    " stream) goes past the limit of 102047 bytes an archive may hold; it"
			    " and the rest are not used") == 0);
	CHECK(unpacks_as(a, "a", "li/a") && unpacks_as(a, "b", NULL) && unpacks_as(a, "c", NULL));
	cgt_archive_close(a);
	const struct cgt_archive_limits enough = { 2048 + 100000 + 512 + 512 + 1024, 0 };
	CHECK(cgt_archive_open(&a, "li/three.archive", "li", &enough, &e) == 0);
	CHECK(unpacks_as(a, "c", "li/c"));
	cgt_archive_close(a);

	const struct cgt_archive_limits two = { 0, 2 };
	CHECK(cgt_archive_open(&a, "li/three.archive", "li", &two, &e) == 1);
	CHECK(strstr(e.msg, "li/three.archive: member c (header at byte 102400 of the tar stream)"
			    " goes past the limit of 2 members an archive may hold") == e.msg);
	CHECK(unpacks_as(a, "a", "li/a") && unpacks_as(a, "b", "li/b") && unpacks_as(a, "c", NULL));
	cgt_archive_close(a);

	/* a bomb after the end-of-archive blocks: read up to the limit only */
	struct tar t = { 0 };
	tar_member(&t, "a", '0', "a\n", 2, NULL);
	tar_end(&t);
	size_t end = t.n;
	uint8_t *zeros = calloc(1, 4 << 20);
	tar_put(&t, zeros, 4 << 20);
	free(zeros);
	put_zstd("li/bomb.archive", t.p, t.n);
	const struct cgt_archive_limits mib = { 1 << 20, 0 };
	CHECK(cgt_archive_open(&a, "li/bomb.archive", "li", &mib, &e) == 1);
	CHECK(strcmp(e.msg, "li/bomb.archive: more than the limit of 1048576 bytes an archive may"
			    " hold, after the end-of-archive blocks") == 0);
	CHECK(unpacks_text(a, "a", "a\n"));
	cgt_archive_close(a);
	put_zstd("li/ended.archive", t.p, end + 8192);
	CHECK(cgt_archive_open(&a, "li/ended.archive", "li", &mib, &e) == 0);
	cgt_archive_close(a);
	free(t.p);
	CHECK(files_under("li") == 6);	/* nothing unpacked left */
}

/* The last of two members of one name; an archive changed after it was
   opened is said, never unpacked from. */
static void rereading(void)
{
	struct tar t = { 0 };
	tar_member(&t, "dup", '0', "first\n", 6, NULL);
	tar_member(&t, "x", '0', "x\n", 2, NULL);
	tar_member(&t, "dup", '0', "second\n", 7, NULL);
	tar_end(&t);
	put_zstd("rr/a.archive", t.p, t.n);
	struct cgt_error e = { 0 };
	struct cgt_archive *a;
	CHECK(cgt_archive_open(&a, "rr/a.archive", "rr", NULL, &e) == 0);
	CHECK(unpacks_text(a, "dup", "second\n"));
	/* the same file, rewritten in place: another member of x's size
	   where x was */
	t.n = 0;
	tar_member(&t, "dup", '0', "third\n", 6, NULL);
	tar_member(&t, "y", '0', "y\n", 2, NULL);
	tar_end(&t);
	put_zstd("rr/a.archive", t.p, t.n);
	char *path;
	CHECK(cgt_archive_unpack_member(a, "x", &path, &e) == -cgt_err_corrupt && path == NULL);
	CHECK(strcmp(e.msg, "rr/a.archive: cannot unpack member x: the archive is no longer what it"
			    " was when opened (other headers there)") == 0);
	CHECK(unpacks_text(a, "dup", "second\n"));	/* unpacked before */
	cgt_archive_close(a);
	free(t.p);
}

static int source_member_is(const char *path, const char *expected)
{
	char *got = cgt_archive_source_member(path);
	int same = got == NULL ? expected == NULL : expected != NULL && strcmp(got, expected) == 0;
	if (!same)
		printf("  %s -> %s, not %s\n", path, got ? got : "NULL", expected ? expected : "NULL");
	free(got);
	return same;
}

static void source_members(void)
{
	CHECK(source_member_is("/home/u/a.c", "sources/home/u/a.c"));
	CHECK(source_member_is("/home//u/./a.c", "sources/home/u/a.c"));
	CHECK(source_member_is("/usr/include/../lib/gcc/x.h", "sources/usr/lib/gcc/x.h"));
	CHECK(source_member_is("/a/../../etc/passwd", NULL));
	CHECK(source_member_is("relative.c", NULL));
	CHECK(source_member_is("/", NULL));
	CHECK(source_member_is("/..", NULL));
	char *long_path = malloc(CGT_ARCHIVE_NAME_MAX + 2);
	memset(long_path, 'x', CGT_ARCHIVE_NAME_MAX + 1);
	long_path[0] = '/';
	long_path[CGT_ARCHIVE_NAME_MAX + 1] = '\0';
	CHECK(source_member_is(long_path, NULL));
	free(long_path);
}

int main(void)
{
	char dir[] = "/tmp/cgt-archive-test.XXXXXX";

	PLAN(10);
	if (mkdtemp(dir) == NULL || chdir(dir) < 0) {
		perror(dir);
		return 1;
	}
	RUN(round_trip);
	RUN(tar_made_archives);
	RUN(truncated);
	RUN(not_archives);
	RUN(bad_checksum);
	RUN(unsafe_names);
	RUN(huge_sizes);
	RUN(limits);
	RUN(rereading);
	RUN(source_members);
	char *rm = NULL;
	if (chdir("/") == 0 && asprintf(&rm, "rm -rf '%s'", dir) > 0 && system(rm) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(rm);
	return CHECK_DONE();
}
