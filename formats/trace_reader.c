/*
 * Trace reader: finds zstd frames in the file, decompresses one frame at a
 * time into a bounded buffer and hands out its records.  Everything read
 * from the file is validated before use; memory stays bounded by
 * CGT_FRAME_MAX plus one compressed frame, whatever the file says.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "varint.h"

#define ZSTD_MAGIC 0xFD2FB528u
#define SKIPPABLE_MASK 0xFFFFFFF0u
#define SKIPPABLE_MAGIC 0x184D2A50u

struct cgt_reader {
	int fd;
	char *path;
	uint64_t file_size;

	uint8_t *in;		/* compressed bytes [in_pos, in_len) not yet used */
	size_t in_len, in_pos, in_cap;
	uint64_t in_file_offset;	/* file offset of in[0] */
	int eof;

	uint8_t *frame;		/* decompressed current frame */
	size_t frame_len, frame_pos;
	uint64_t frame_file_offset;
	uint64_t frame_stream_offset;	/* stream offset of frame[0] */
	uint64_t frames_done;

	ZSTD_DCtx *dctx;
	char *truncation;
	int at_end;
};

/* Largest compressed frame we accept: what zstd can produce from a
   maximal frame, plus room for the frame header. */
static size_t max_compressed_frame(void)
{
	return ZSTD_compressBound(CGT_FRAME_MAX) + 1024;
}

/* Ensures at least want bytes are buffered after in_pos, unless the file
   ends first.  Returns the number available or -1 on a read error. */
static ssize_t fill(struct cgt_reader *r, size_t want)
{
	if (r->in_len - r->in_pos >= want || r->eof)
		return (ssize_t)(r->in_len - r->in_pos);
	if (r->in_pos > 0) {
		memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
		r->in_len -= r->in_pos;
		r->in_file_offset += r->in_pos;
		r->in_pos = 0;
	}
	while (r->in_len < want && r->in_len < r->in_cap) {
		ssize_t n = read(r->fd, r->in + r->in_len, r->in_cap - r->in_len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			r->eof = 1;
			break;
		}
		r->in_len += (size_t)n;
	}
	return (ssize_t)(r->in_len - r->in_pos);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int io_error(struct cgt_reader *r, struct cgt_error *e)
{
	return cgt_fail(e, cgt_err_io, "%s: read error: %s", r->path, strerror(errno));
}

static void note_truncation(struct cgt_reader *r, uint64_t offset)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "%s: truncated trace: the file ends inside a zstd frame at byte offset %llu "
		 "(file size %llu); using the %llu complete frame%s before it",
		 r->path, (unsigned long long)offset, (unsigned long long)r->file_size,
		 (unsigned long long)r->frames_done, r->frames_done == 1 ? "" : "s");
	free(r->truncation);
	r->truncation = strdup(buf);
}

/* Loads the next frame into r->frame.  1: loaded; 0: end of file. */
static int load_frame(struct cgt_reader *r, struct cgt_error *e)
{
	for (;;) {
		ssize_t avail = fill(r, 8);
		if (avail < 0)
			return io_error(r, e);
		uint64_t offset = r->in_file_offset + r->in_pos;
		if (avail == 0)
			return 0;
		if (avail < 4) {
			note_truncation(r, offset);
			return 0;
		}
		const uint8_t *p = r->in + r->in_pos;
		uint32_t magic = le32(p);
		if ((magic & SKIPPABLE_MASK) == SKIPPABLE_MAGIC) {
			if (avail < 8) {
				note_truncation(r, offset);
				return 0;
			}
			uint64_t skip = 8 + (uint64_t)le32(p + 4);
			while (skip > 0) {
				avail = fill(r, 1);
				if (avail < 0)
					return io_error(r, e);
				if (avail == 0) {
					note_truncation(r, offset);
					return 0;
				}
				size_t n = skip < (uint64_t)avail ? (size_t)skip : (size_t)avail;
				r->in_pos += n;
				skip -= n;
			}
			continue;
		}
		if (magic != ZSTD_MAGIC) {
			if (offset == 0)
				return cgt_fail(e, cgt_err_not_trace, "%s: not a cgtrace trace", r->path);
			return cgt_fail(e, cgt_err_corrupt,
					"%s: byte offset %llu: expected a zstd frame (magic 28 b5 2f fd), "
					"found %02x %02x %02x %02x",
					r->path, (unsigned long long)offset, p[0], p[1], p[2], p[3]);
		}

		/* Read until the whole frame is buffered. */
		size_t frame_size;
		size_t want = 4096;
		for (;;) {
			avail = fill(r, want);
			if (avail < 0)
				return io_error(r, e);
			p = r->in + r->in_pos;
			frame_size = ZSTD_findFrameCompressedSize(p, (size_t)avail);
			if (!ZSTD_isError(frame_size))
				break;
			if (r->eof) {
				note_truncation(r, offset);
				return 0;
			}
			if ((size_t)avail >= max_compressed_frame())
				return cgt_fail(e, cgt_err_corrupt,
						"%s: byte offset %llu: corrupt zstd frame (no frame end within "
						"%zu bytes)",
						r->path, (unsigned long long)offset, max_compressed_frame());
			want = (size_t)avail * 2;
		}

		unsigned long long content = ZSTD_getFrameContentSize(p, frame_size);
		if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ||
		    content > CGT_FRAME_MAX)
			return cgt_fail(e, cgt_err_corrupt,
					"%s: byte offset %llu: zstd frame %s (expected a declared size of at "
					"most %u bytes)",
					r->path, (unsigned long long)offset,
					content == ZSTD_CONTENTSIZE_UNKNOWN ? "does not declare its size"
									    : "declares a bad size",
					CGT_FRAME_MAX);
		size_t n = ZSTD_decompressDCtx(r->dctx, r->frame, CGT_FRAME_MAX, p, frame_size);
		if (ZSTD_isError(n) || n != content)
			return cgt_fail(e, cgt_err_corrupt, "%s: byte offset %llu: corrupt zstd frame: %s",
					r->path, (unsigned long long)offset,
					ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
		r->in_pos += frame_size;
		r->frame_stream_offset += r->frame_len;
		r->frame_len = n;
		r->frame_pos = 0;
		r->frame_file_offset = offset;
		r->frames_done++;
		if (n == 0)
			continue;
		return 1;
	}
}

int cgt_reader_open(struct cgt_reader **out, const char *path, struct cgt_error *e)
{
	struct cgt_reader *r;
	struct stat st;

	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
		close(fd);
		return cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(err));
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		close(fd);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	r->fd = fd;
	r->file_size = (uint64_t)st.st_size;
	r->path = strdup(path);
	r->in_cap = max_compressed_frame();
	r->in = malloc(r->in_cap);
	r->frame = malloc(CGT_FRAME_MAX);
	r->dctx = ZSTD_createDCtx();
	if (r->path == NULL || r->in == NULL || r->frame == NULL || r->dctx == NULL) {
		cgt_reader_close(r);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}

	int rc = load_frame(r, e);
	if (rc < 0) {
		cgt_reader_close(r);
		return rc;
	}
	if (rc == 0 || r->frame_len < CGT_STREAM_HEADER_LEN ||
	    memcmp(r->frame, CGT_TRACE_MAGIC, CGT_TRACE_MAGIC_LEN) != 0) {
		rc = cgt_fail(e, cgt_err_not_trace, "%s: not a cgtrace trace%s", path,
			      rc == 0 && r->truncation ? " (or truncated before its first frame ended)"
						       : "");
		cgt_reader_close(r);
		return rc;
	}
	uint32_t version = le32(r->frame + 8);
	if (version != CGT_TRACE_VERSION) {
		rc = cgt_fail(e, cgt_err_version,
			      "%s: trace format version %u is not supported: this cgtrace reads version "
			      "%u",
			      path, version, CGT_TRACE_VERSION);
		cgt_reader_close(r);
		return rc;
	}
	r->frame_pos = CGT_STREAM_HEADER_LEN;
	*out = r;
	return 0;
}

int cgt_reader_next(struct cgt_reader *r, struct cgt_record *rec, struct cgt_error *e)
{
	if (r->at_end)
		return 0;
	while (r->frame_pos == r->frame_len) {
		int rc = load_frame(r, e);
		if (rc <= 0) {
			if (rc == 0)
				r->at_end = 1;
			return rc;
		}
	}
	const uint8_t *start = r->frame + r->frame_pos;
	const uint8_t *p = start;
	const uint8_t *end = r->frame + r->frame_len;
	uint64_t at = r->frame_stream_offset + r->frame_pos;
	unsigned type = *p++;
	uint64_t len;

	if (type < CGT_REC_HEADER || type > CGT_REC_IMAGE)
		return cgt_fail(e, cgt_err_corrupt,
				"%s: stream offset %llu (frame at byte offset %llu): expected a record "
				"type 1-10, found %u",
				r->path, (unsigned long long)at, (unsigned long long)r->frame_file_offset,
				type);
	if (cgt_get_varint(&p, end, &len) < 0 || len > CGT_RECORD_MAX ||
	    len > (uint64_t)(end - p))
		return cgt_fail(e, cgt_err_corrupt,
				"%s: stream offset %llu (frame at byte offset %llu): %s record length "
				"runs past the end of its frame",
				r->path, (unsigned long long)at, (unsigned long long)r->frame_file_offset,
				cgt_record_type_name(type));
	rec->type = type;
	rec->payload = p;
	rec->len = (size_t)len;
	rec->stream_offset = at + (uint64_t)(p - start);
	rec->frame_offset = r->frame_file_offset;
	rec->path = r->path;
	r->frame_pos += (size_t)(p - start) + (size_t)len;
	return 1;
}

const char *cgt_reader_truncation(const struct cgt_reader *r)
{
	return r->truncation;
}

uint64_t cgt_reader_file_size(const struct cgt_reader *r)
{
	return r->file_size;
}

uint64_t cgt_reader_file_offset(const struct cgt_reader *r)
{
	return r->in_file_offset + r->in_pos;
}

void cgt_reader_close(struct cgt_reader *r)
{
	if (r == NULL)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->in);
	free(r->frame);
	free(r->path);
	free(r->truncation);
	free(r);
}

int cgt_file_is_trace(const char *path)
{
	uint8_t in[65536], out[CGT_STREAM_HEADER_LEN];
	ZSTD_outBuffer ob = { out, sizeof(out), 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), result = -1;
	ZSTD_DStream *ds = NULL;
	ssize_t n;

	if (fd < 0)
		return -1;
	/* The stream header is the first thing in the first frame; its first
	   block may need most of a compressed block's bytes. */
	for (size_t total = 0; ob.pos < ob.size && total < 1024 * 1024; total += (size_t)n) {
		n = read(fd, in, sizeof(in));
		if (n <= 0)
			break;
		if (total == 0 && (n < 4 || le32(in) != ZSTD_MAGIC)) {
			result = 0;
			break;
		}
		if (ds == NULL && (ds = ZSTD_createDStream()) == NULL)
			break;
		ZSTD_inBuffer ib = { in, (size_t)n, 0 };
		while (ob.pos < ob.size && ib.pos < ib.size) {
			size_t rc = ZSTD_decompressStream(ds, &ob, &ib);
			if (ZSTD_isError(rc) || rc == 0)
				break;
		}
	}
	if (result < 0 && ob.pos > 0)
		result = ob.pos >= CGT_TRACE_MAGIC_LEN &&
			 memcmp(out, CGT_TRACE_MAGIC, CGT_TRACE_MAGIC_LEN) == 0;
	else if (result < 0 && ob.pos == 0)
		result = 0;
	ZSTD_freeDStream(ds);
	close(fd);
	return result;
}
