/*
 * Fuzz target: archives (formats/archive.c, cgt_archive_extract), what
 * `cgtrace simulate --archive` and `report --archive` read.  An input
 * that begins with zstd's magic is the archive; any other is its tar
 * stream, put into a zstd frame by fuzz_wrap_stream (so that the fuzzer
 * mutates headers, not compressed bytes; "@@FRAME@" starts another
 * frame).  It is extracted into a directory of its own, removed
 * afterwards; aborts if a partial member is left there, or the result is
 * neither 0, 1 nor a negative status.  Seeds: an archive made by
 * cgt_archive_add, and its tar stream.
 */
#include <errno.h>
#include <ftw.h>

#include "fuzz.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (strstr(path + ftw->base, ".cgtrace-part") == path + ftw->base)
		abort();	/* a member not whole left behind */
	return remove(path) < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	struct fuzz_file f;
	struct cgt_error e = { 0 };
	const char *tmp = getenv("TMPDIR");
	char dir[96];

	snprintf(dir, sizeof(dir), "%s/cgt-fuzz-archive.XXXXXX",
		 tmp != NULL && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	if (size >= 4 && memcmp(data, magic, 4) == 0) {
		fuzz_file_open(&f, data, size);
	} else {
		size_t len;
		uint8_t *z = fuzz_wrap_stream(data, size, &len);
		fuzz_file_open(&f, z, len);
		free(z);
	}
	int rc = cgt_archive_extract(f.path, dir, &e);
	fuzz_say("cgt_archive_extract", rc, &e);
	if (rc > 1 || (rc < 0 && -rc != e.status))
		abort();
	if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		abort();
	fuzz_file_close(&f);
	return 0;
}
