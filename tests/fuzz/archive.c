/*
 * Fuzz target: archives (formats/archive.c), what `cgtrace simulate
 * --archive` and `report --archive` read.  An input that begins with
 * zstd's magic is the archive; any other is its tar stream, put into a
 * zstd frame by fuzz_wrap_stream (so that the fuzzer mutates headers, not
 * compressed bytes; "@@FRAME@" starts another frame, so that members are
 * read again from frames other than the first).  It is opened
 * (cgt_archive_open, within small limits so that a bomb stays quick) with
 * a scratch directory of its own, then every member name the input may
 * hold is asked for (cgt_archive_unpack_member): the name field of each
 * 512-byte block of its tar stream and each pax path.  Aborts if a result
 * is neither what the contract says nor a status, if an unpacked member
 * is not a regular file in the archive's directory, if what is unpacked
 * passes the byte limit or a partial member is there, or if anything is
 * left in the scratch directory once the archive is closed.  Seeds: an
 * archive made by cgt_archive_add, and its tar stream.
 */
#include <errno.h>
#include <ftw.h>

#include "fuzz.h"

#define MAX_BYTES (1u << 20)
#define MAX_NAMES 64
#define TAR_SEEN (1u << 20)	/* of the tar stream, looked through for names */

static uint64_t unpacked_bytes;

static int count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	if (strstr(path + ftw->base, ".cgtrace-part") == path + ftw->base)
		abort();	/* a member not whole left behind */
	if (S_ISREG(st->st_mode))
		unpacked_bytes += (uint64_t)st->st_size;
	return 0;
}

/* The first bytes of the tar stream of the archive (data) into out, as
   far as zstd goes. */
static size_t tar_stream(const uint8_t *data, size_t size, uint8_t *out)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (d == NULL)
		abort();
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 27);
	ZSTD_inBuffer in = { data, size, 0 };
	ZSTD_outBuffer o = { out, TAR_SEEN, 0 };
	while (in.pos < in.size && o.pos < o.size) {
		size_t before_in = in.pos, before_out = o.pos;
		if (ZSTD_isError(ZSTD_decompressStream(d, &o, &in)) ||
		    (in.pos == before_in && o.pos == before_out))
			break;
	}
	ZSTD_freeDCtx(d);
	return o.pos;
}

/* The names the tar stream may hold: "prefix/name" of each block with
   ustar's magic, and each pax "path=" value. */
static size_t names_in(const uint8_t *tar, size_t n, char names[][CGT_ARCHIVE_NAME_MAX + 1])
{
	size_t k = 0;
	for (size_t at = 0; at + 512 <= n && k < MAX_NAMES; at += 512) {
		const char *h = (const char *)tar + at;
		if (memcmp(h + 257, "ustar", 5) != 0)
			continue;
		size_t plen = strnlen(h + 345, 155), nlen = strnlen(h, 100);
		snprintf(names[k++], CGT_ARCHIVE_NAME_MAX + 1, "%.*s%s%.*s", (int)plen, h + 345,
			 plen > 0 ? "/" : "", (int)nlen, h);
	}
	for (const uint8_t *p = tar; k < MAX_NAMES && (p = memmem(p, n - (size_t)(p - tar), "path=", 5));) {
		p += 5;
		const uint8_t *end = memchr(p, '\n', n - (size_t)(p - tar));
		size_t len = end != NULL ? (size_t)(end - p) : n - (size_t)(p - tar);
		snprintf(names[k++], CGT_ARCHIVE_NAME_MAX + 1, "%.*s",
			 (int)(len < CGT_ARCHIVE_NAME_MAX ? len : CGT_ARCHIVE_NAME_MAX), (const char *)p);
	}
	return k;
}

/* Unpacks name, and checks what cgt_archive_unpack_member says of it. */
static void unpack(struct cgt_archive *a, const char *name, const char *scratch)
{
	struct cgt_error e = { 0 };
	char *path = (char *)&e;
	struct stat st;
	int rc = cgt_archive_unpack_member(a, name, &path, &e);
	fuzz_say("cgt_archive_unpack_member", rc, &e);
	if (rc > 1 || (rc < 0 && -rc != e.status) || (rc != 1) != (path == NULL))
		abort();
	if (rc == 1 && (strncmp(path, scratch, strlen(scratch)) != 0 ||
			lstat(path, &st) < 0 || !S_ISREG(st.st_mode)))
		abort();
	free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	static uint8_t tar[TAR_SEEN];
	static char names[MAX_NAMES][CGT_ARCHIVE_NAME_MAX + 1];
	struct fuzz_file f;
	struct cgt_error e = { 0 };
	const char *tmp = getenv("TMPDIR");
	char scratch[96];

	snprintf(scratch, sizeof(scratch), "%s/cgt-fuzz-archive.XXXXXX",
		 tmp != NULL && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(scratch) == NULL)
		abort();
	uint8_t *wrapped = NULL;
	if (size < 4 || memcmp(data, magic, 4) != 0) {
		data = wrapped = fuzz_wrap_stream(data, size, &size);
	}
	fuzz_file_open(&f, data, size);
	const struct cgt_archive_limits limits = { MAX_BYTES, 256 };
	struct cgt_archive *a = (struct cgt_archive *)&e;
	int rc = cgt_archive_open(&a, f.path, scratch, &limits, &e);
	fuzz_say("cgt_archive_open", rc, &e);
	if (rc > 1 || (rc < 0 && (-rc != e.status || a != NULL)) || (rc >= 0 && a == NULL))
		abort();
	if (a != NULL) {
		size_t n = names_in(tar, tar_stream(data, size, tar), names);
		for (size_t i = 0; i < n; i++)
			unpack(a, names[i], scratch);
		if (n > 0)
			unpack(a, names[0], scratch);	/* again: unpacked already */
		unpacked_bytes = 0;
		if (nftw(scratch, count_entry, 16, FTW_PHYS) < 0 || unpacked_bytes > MAX_BYTES)
			abort();	/* past the limit */
	}
	cgt_archive_close(a);
	if (rmdir(scratch) < 0)
		abort();	/* something left behind */
	fuzz_file_close(&f);
	free(wrapped);
	return 0;
}
