/*
 * Shared by the fuzz targets (tests/fuzz/, one .c each): each is one
 * LLVMFuzzerTestOneInput, built twice -- with clang and libFuzzer for
 * `make fuzz` (build-fuzz/), and with the project's compiler and
 * replay_main.c for `make test`, which replays the committed inputs
 * (tests/fuzz/README.md).
 *
 * The readers take paths, so an input is handed over as a memfd, named
 * /proc/self/fd/N: no file system, nothing left behind.
 */
#ifndef CGTRACE_FUZZ_H
#define CGTRACE_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_file {
	int fd;
	char path[64];
};

/* The bytes as a file; aborts if that fails (the harness, not the input). */
static inline void fuzz_file_open(struct fuzz_file *f, const void *data, size_t size)
{
	const uint8_t *p = data;

	f->fd = memfd_create("cgtrace-fuzz", MFD_CLOEXEC);
	if (f->fd < 0)
		abort();
	while (size > 0) {
		ssize_t n = write(f->fd, p, size);
		if (n <= 0)
			abort();
		p += n;
		size -= (size_t)n;
	}
	snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
}

static inline void fuzz_file_close(struct fuzz_file *f)
{
	close(f->fd);
}

/* FUZZ_VERBOSE=1 in the environment: what the readers said, on stderr
   (to see how far an input gets). */
static inline void fuzz_say(const char *what, int rc, const struct cgt_error *e)
{
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (verbose)
		fprintf(stderr, "%s: %s\n", what, rc < 0 ? e->msg : "ok");
}

/* Where the readers' output goes: nowhere, but through stdio. */
static inline FILE *fuzz_devnull(void)
{
	static FILE *f;
	if (f == NULL && (f = fopen("/dev/null", "w")) == NULL)
		abort();
	return f;
}

/*
 * A decompressed trace stream -> the trace file holding it, as the writer
 * makes it: zstd frames with their sizes and checksums, so that the fuzzer
 * mutates records, not compressed bytes.  The input is cut into frames at
 * FUZZ_FRAME_SPLIT, and into segments at FUZZ_SEGMENT_SPLIT (a segment
 * marker before the next frame); the tokens are not part of the stream.
 * Returns the file's bytes (malloc'd) and their number in *len.
 */
#define FUZZ_FRAME_SPLIT "@@FRAME@"
#define FUZZ_SEGMENT_SPLIT "@@SEGMT@"
#define FUZZ_SPLIT_LEN 8

static inline uint8_t *fuzz_wrap_stream(const uint8_t *data, size_t size, size_t *len)
{
	static ZSTD_CCtx *cctx;
	static const uint8_t marker[16] = { 0x5C, 0x2A, 0x4D, 0x18, 8, 0, 0, 0,
					    'C', 'G', 'T', 'S', 'E', 'G', 'M', 'T' };
	size_t cap = 64, n = 0;
	uint8_t *out;

	if (cctx == NULL) {
		cctx = ZSTD_createCCtx();
		if (cctx == NULL)
			abort();
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	}
	/* Each piece takes at most its bound (the whole's, plus up to 64
	   bytes of a small piece's margin) and a marker. */
	cap += ZSTD_compressBound(size) + (size / FUZZ_SPLIT_LEN + 1) * (sizeof(marker) + 64);
	out = malloc(cap);
	if (out == NULL)
		abort();
	size_t start = 0;
	int segment = 0;
	for (;;) {
		size_t end = start;
		int next_segment = 0, last = 1;
		for (; end + FUZZ_SPLIT_LEN <= size; end++) {
			if (memcmp(data + end, FUZZ_FRAME_SPLIT, FUZZ_SPLIT_LEN) == 0 ||
			    (next_segment = memcmp(data + end, FUZZ_SEGMENT_SPLIT,
						   FUZZ_SPLIT_LEN) == 0)) {
				last = 0;
				break;
			}
		}
		if (last)
			end = size;
		if (segment) {
			memcpy(out + n, marker, sizeof(marker));
			n += sizeof(marker);
		}
		size_t z = ZSTD_compress2(cctx, out + n, cap - n, data + start, end - start);
		if (ZSTD_isError(z))
			abort();
		n += z;
		if (last)
			break;
		start = end + FUZZ_SPLIT_LEN;
		segment = next_segment;
	}
	*len = n;
	return out;
}

#endif
