/* Output file name templates: %p, %q{VAR}, %%; where an output goes
   (cgt_output_*): what is refused, replaced atomically, written through,
   and never replaced. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "record.h"

static int expands_to(const char *tmpl, long pid, const char *expected)
{
	const char *why;
	char *s = cgt_expand_output_name(tmpl, pid, &why);
	int ok = s != NULL && strcmp(s, expected) == 0;
	free(s);
	return ok;
}

static void templates(void)
{
	setenv("CGT_TEST_VAR", "xyz", 1);
	CHECK(expands_to("cgtrace.%p.zst", 123, "cgtrace.123.zst"));
	CHECK(expands_to("a%%b", 1, "a%b"));
	CHECK(expands_to("t.%q{CGT_TEST_VAR}.%p", 9, "t.xyz.9"));
	CHECK(expands_to("plain", 9, "plain"));
}

static void bad_templates(void)
{
	const char *why;
	unsetenv("CGT_NO_SUCH_VAR");
	CHECK(cgt_expand_output_name("x%", 1, &why) == NULL);
	CHECK(cgt_expand_output_name("x%z", 1, &why) == NULL);
	CHECK(cgt_expand_output_name("%q{CGT_NO_SUCH_VAR}", 1, &why) == NULL);
	CHECK(cgt_expand_output_name("", 1, &why) == NULL);
}

/* The tests below work in a directory of their own (the current one). */
static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static int has(const char *path, const char *text)
{
	char buf[256] = { 0 };
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	return n == strlen(text) && memcmp(buf, text, n) == 0;
}

/* A file cgt_file_is_trace takes for a trace: a zstd frame that starts
   with the stream header's magic. */
static void put_trace(const char *path)
{
	char plain[32] = CGT_TRACE_MAGIC, packed[128];
	size_t n = ZSTD_compress(packed, sizeof(packed), plain, sizeof(plain), 1);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (!ZSTD_isError(n) && write(fd, packed, n) != (ssize_t)n)
			CHECK(!"writing the trace");
		close(fd);
	}
}

static int refused(const char *path, enum cgt_output_kind kind, const char *const *inputs,
		   size_t n, const char *because)
{
	struct cgt_error e = { 0 };
	return cgt_output_check(path, kind, inputs, n, &e) < 0 && strstr(e.msg, because) != NULL;
}

static void refusals(void)
{
	const char *inputs[] = { "in.zst" };
	put_trace("in.zst");
	CHECK(link("in.zst", "hard.zst") == 0);
	CHECK(symlink("in.zst", "soft.zst") == 0);
	put_trace("other.zst");
	put("notes.txt", "precious\n");
	put("empty", "");
	put("old.out", "desc: I1 cache: 1\ncmd: x\n");
	put("bare.out", "cmd: x\nevents: Ir\n");
	CHECK(mkdir("dir", 0755) == 0);

	CHECK(refused("in.zst", CGT_OUTPUT_CGOUT, inputs, 1, "it is the input 'in.zst'"));
	CHECK(refused("hard.zst", CGT_OUTPUT_CGOUT, inputs, 1, "it is the input 'in.zst'"));
	CHECK(refused("soft.zst", CGT_OUTPUT_CGOUT, inputs, 1, "it is the input 'in.zst'"));
	CHECK(refused("other.zst", CGT_OUTPUT_CGOUT, inputs, 1, "it is a cgtrace trace"));
	CHECK(refused("notes.txt", CGT_OUTPUT_CGOUT, inputs, 1, "not a cachegrind.out file"));
	CHECK(refused("dir", CGT_OUTPUT_CGOUT, inputs, 1, "it is a directory"));
	CHECK(refused("notes.txt", CGT_OUTPUT_TRACE, NULL, 0, "not a cgtrace trace"));
	/* An input is refused even as a trace output. */
	CHECK(refused("hard.zst", CGT_OUTPUT_TRACE, inputs, 1, "it is the input"));

	struct cgt_error e;
	CHECK(cgt_output_check("empty", CGT_OUTPUT_CGOUT, inputs, 1, &e) == 0);
	CHECK(cgt_output_check("old.out", CGT_OUTPUT_CGOUT, inputs, 1, &e) == 0);
	CHECK(cgt_output_check("bare.out", CGT_OUTPUT_CGOUT, inputs, 1, &e) == 0);
	CHECK(cgt_output_check("new.out", CGT_OUTPUT_CGOUT, inputs, 1, &e) == 0);
	CHECK(cgt_output_check("other.zst", CGT_OUTPUT_TRACE, inputs, 1, &e) == 0);
	CHECK(has("notes.txt", "precious\n"));
}

/* A regular file is replaced whole, through a temporary beside it; its
   permissions stay; a failed run leaves it alone. */
static void atomic_replacement(void)
{
	struct cgt_output o;
	struct cgt_error e;
	struct stat st;

	put("r.out", "desc: old\n");
	chmod("r.out", 0640);
	CHECK(cgt_output_prepare(&o, "r.out", 0, &e) == 0);
	CHECK(o.temporary != NULL && strcmp(o.write_path, o.temporary) == 0);
	CHECK(strncmp(o.write_path, ".cgtrace-out.", 13) == 0);
	put(o.write_path, "desc: new\n");
	CHECK(has("r.out", "desc: old\n"));
	CHECK(cgt_output_commit(&o, &e) == 0);
	CHECK(strcmp(o.written, "r.out") == 0);
	CHECK(has("r.out", "desc: new\n"));
	CHECK(stat("r.out", &st) == 0 && (st.st_mode & 07777) == 0640);
	cgt_output_discard(&o);

	/* A new one gets what the umask leaves of 0666, as Cachegrind's. */
	mode_t mask = umask(027);
	CHECK(cgt_output_prepare(&o, "new.out", 0, &e) == 0);
	put(o.write_path, "desc: new\n");
	CHECK(cgt_output_commit(&o, &e) == 0);
	CHECK(stat("new.out", &st) == 0 && (st.st_mode & 07777) == 0640);
	cgt_output_discard(&o);
	umask(mask);

	/* Not committed: the temporary goes, the file stays. */
	CHECK(cgt_output_prepare(&o, "r.out", 0, &e) == 0);
	char *temporary = strdup(o.write_path);
	put(o.write_path, "desc: half\n");
	cgt_output_discard(&o);
	CHECK(access(temporary, F_OK) != 0);
	CHECK(has("r.out", "desc: new\n"));
	free(temporary);

	/* In another directory: the temporary is beside the file. */
	CHECK(mkdir("sub", 0755) == 0);
	CHECK(cgt_output_prepare(&o, "sub/x.out", 0, &e) == 0);
	CHECK(strncmp(o.write_path, "sub/.cgtrace-out.", 17) == 0);
	cgt_output_discard(&o);
}

/* A symlink is followed: what it ends at is replaced, the link stays. */
static void symlinks(void)
{
	struct cgt_output o;
	struct cgt_error e;
	struct stat st;

	CHECK(mkdir("target", 0755) == 0);
	put("target/t.out", "desc: old\n");
	CHECK(symlink("target/t.out", "l1") == 0);
	CHECK(symlink("l1", "l2") == 0);
	CHECK(cgt_output_prepare(&o, "l2", 0, &e) == 0);
	CHECK(strncmp(o.write_path, "target/.cgtrace-out.", 20) == 0);
	put(o.write_path, "desc: new\n");
	CHECK(cgt_output_commit(&o, &e) == 0);
	cgt_output_discard(&o);
	CHECK(lstat("l2", &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(lstat("l1", &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(has("target/t.out", "desc: new\n"));

	/* A dangling link: its target is made. */
	CHECK(symlink("target/made.out", "dangling") == 0);
	CHECK(cgt_output_prepare(&o, "dangling", 0, &e) == 0);
	put(o.write_path, "desc: made\n");
	CHECK(cgt_output_commit(&o, &e) == 0);
	cgt_output_discard(&o);
	CHECK(lstat("dangling", &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(has("target/made.out", "desc: made\n"));

	/* A loop: an error naming the given path. */
	CHECK(symlink("loop2", "loop1") == 0);
	CHECK(symlink("loop1", "loop2") == 0);
	CHECK(cgt_output_prepare(&o, "loop1", 0, &e) < 0);
	CHECK(strstr(e.msg, "cannot write 'loop1'") != NULL);
}

/* A FIFO (as a device) is written through, directly or via a link. */
static void written_through(void)
{
	struct cgt_output o;
	struct cgt_error e;
	struct stat st;

	CHECK(mkfifo("fifo", 0644) == 0);
	CHECK(symlink("fifo", "to-fifo") == 0);
	CHECK(cgt_output_prepare(&o, "fifo", 0, &e) == 0);
	CHECK(o.temporary == NULL && strcmp(o.write_path, "fifo") == 0);
	CHECK(cgt_output_commit(&o, &e) == 0 && strcmp(o.written, "fifo") == 0);
	cgt_output_discard(&o);
	CHECK(cgt_output_prepare(&o, "to-fifo", 0, &e) == 0);
	CHECK(o.temporary == NULL && strcmp(o.write_path, "to-fifo") == 0);
	cgt_output_discard(&o);
	CHECK(lstat("fifo", &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(lstat("to-fifo", &st) == 0 && S_ISLNK(st.st_mode));
}

/* keep_existing: the first free name of path, path.1, path.2, ... */
static void never_replacing(void)
{
	static const char *const names[] = { "cachegrind.out.7", "cachegrind.out.7.1",
					     "cachegrind.out.7.2" };
	static const char *const texts[] = { "desc: a\n", "desc: b\n", "desc: c\n" };
	struct cgt_output o;
	struct cgt_error e;

	put("cachegrind.out.8.1", "desc: in the way\n");
	for (int i = 0; i < 3; i++) {
		CHECK(cgt_output_prepare(&o, "cachegrind.out.7", 1, &e) == 0);
		put(o.write_path, texts[i]);
		CHECK(cgt_output_commit(&o, &e) == 0);
		CHECK(o.written != NULL && strcmp(o.written, names[i]) == 0);
		cgt_output_discard(&o);
	}
	for (int i = 0; i < 3; i++)
		CHECK(has(names[i], texts[i]));
	/* Anything at the name counts as taken, a dangling symlink too. */
	CHECK(symlink("nowhere", "cachegrind.out.8") == 0);
	CHECK(cgt_output_prepare(&o, "cachegrind.out.8", 1, &e) == 0);
	put(o.write_path, "desc: d\n");
	CHECK(cgt_output_commit(&o, &e) == 0);
	CHECK(o.written != NULL && strcmp(o.written, "cachegrind.out.8.2") == 0);
	cgt_output_discard(&o);
	CHECK(has("cachegrind.out.8.1", "desc: in the way\n"));
	CHECK(access("nowhere", F_OK) != 0);
}

/* A message about the temporary file names the path given instead. */
static void blame(void)
{
	struct cgt_output o;
	struct cgt_error e;

	CHECK(cgt_output_prepare(&o, "b.out", 0, &e) == 0);
	cgt_fail(&e, cgt_err_io, "cannot write '%s': File too large", o.write_path);
	cgt_output_blame(&o, &e);
	CHECK(strcmp(e.msg, "cannot write 'b.out': File too large") == 0);
	cgt_output_discard(&o);
	CHECK(access("b.out", F_OK) != 0);
}

int main(void)
{
	char dir[] = "/tmp/cgt-output-test.XXXXXX";

	PLAN(8);
	RUN(templates);
	RUN(bad_templates);
	if (mkdtemp(dir) == NULL || chdir(dir) < 0) {
		perror(dir);
		return 1;
	}
	RUN(refusals);
	RUN(atomic_replacement);
	RUN(symlinks);
	RUN(written_through);
	RUN(never_replacing);
	RUN(blame);
	char *rm = NULL;
	if (chdir("/") == 0 && asprintf(&rm, "rm -rf '%s'", dir) > 0 && system(rm) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(rm);
	return CHECK_DONE();
}
