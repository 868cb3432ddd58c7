/*
 * Trace reader: finds the zstd frames of a trace file and hands them out in
 * file order, compressed, to whoever reads them -- several threads may --
 * with what they need to decompress and read each one on its own: its
 * place in the stream and whether it begins a segment.  Everything read
 * from the file is validated before use; memory stays bounded by
 * CGT_FRAME_MAX and one compressed frame per frame in use, whatever the
 * file says.
 *
 * Opened to skip damage (cgt_reader_open_skipping), a stretch where no frame
 * can be found -- a damaged frame header, a frame whose end runs off the
 * file before its end -- is passed over to the next segment marker and noted
 * (cgt_reader_damage): the segments after it decode on their own.  A
 * stretch too short to hold a frame, with a zstd frame after it, is passed
 * over to that frame only.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "segment_marker.h"
#include "varint.h"

#define ZSTD_MAGIC 0xFD2FB528u
#define SKIPPABLE_MASK 0xFFFFFFF0u
#define SKIPPABLE_MAGIC 0x184D2A50u

struct cgt_reader {
	int fd;
	char *path;
	uint64_t file_size;
	uint32_t version;
	pthread_mutex_t lock;	/* cgt_reader_take_frame's */

	uint8_t *in;		/* compressed bytes [in_pos, in_len) not yet used */
	size_t in_len, in_pos, in_cap;
	uint64_t in_file_offset;	/* file offset of in[0] */
	int eof;

	uint64_t stream_offset;	/* of the next frame's content */
	uint64_t frames_taken;
	int marker_seen;	/* a segment marker since the last frame */
	char *truncation;
	int at_end;
	int skip_damage;	/* opened by cgt_reader_open_skipping */
	struct cgt_damage *damage;	/* the stretches passed over, in file order */
	size_t n_damage, cap_damage;
	size_t n_may_hold_frames;	/* of them, those long enough to hold a frame */
	int lookahead_status;	/* an error looking past the last frame taken: */
	struct cgt_error lookahead_error;	/* the next take reports it */

	struct cgt_frame first;	/* frame 0, read by open, handed out first */
	int first_pending;
	struct cgt_frame sequential;	/* cgt_reader_next's */
	int sequential_loaded;
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

static int io_error(struct cgt_reader *r, struct cgt_error *e)
{
	return cgt_fail(e, cgt_err_io, "%s: read error: %s", r->path, strerror(errno));
}

static void note_truncation(struct cgt_reader *r, uint64_t offset)
{
	char buf[512];

	if (r->truncation != NULL)
		return;
	snprintf(buf, sizeof(buf),
		 "%s: truncated trace: the file ends inside a zstd frame at byte offset %llu "
		 "(file size %llu); using the %llu complete frame%s before it",
		 r->path, (unsigned long long)offset, (unsigned long long)r->file_size,
		 (unsigned long long)r->frames_taken, r->frames_taken == 1 ? "" : "s");
	r->truncation = strdup(buf);
}

/* Notes the stretch [start, end) passed over: 0, or -1 out of memory. */
static int note_damage(struct cgt_reader *r, uint64_t start, uint64_t end,
		       const struct cgt_error *why, int frame_follows)
{
	if (r->n_damage == r->cap_damage &&
	    cgt_array_grow(&r->damage, &r->cap_damage, r->n_damage, 1, sizeof(*r->damage)) < 0)
		return -1;
	struct cgt_damage *d = &r->damage[r->n_damage++];
	*d = (struct cgt_damage){ start, end, 0, UINT64_MAX, 0, "", frame_follows };
	r->n_may_hold_frames += !frame_follows;
	memcpy(d->why, why->msg, sizeof(d->why));
	return 0;
}

/* 1 if a segment marker ends at file offset at, 0 if not, -1 on a read
   error (errno). */
static int marker_ends_at(struct cgt_reader *r, uint64_t at)
{
	uint8_t buf[CGT_SEGMENT_MARKER_LEN];
	size_t got = 0;

	if (at < CGT_SEGMENT_MARKER_LEN)
		return 0;
	while (got < sizeof(buf)) {
		ssize_t n = pread(r->fd, buf + got, sizeof(buf) - got,
				  (off_t)(at - CGT_SEGMENT_MARKER_LEN + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		got += (size_t)n;
	}
	return cgt_is_segment_marker(buf, got);
}

/* Fewer bytes than the smallest frame of any kind (a skippable frame takes
   8, a zstd frame 9) between a whole frame and the zstd frame after them --
   what a frame's checksum flag cleared leaves, its 4 checksum bytes -- hide
   no executions: skipping damage, they are noted and the reader reads on at
   that frame, in the same segment.  1 if so, 0 if not, negative: error. */
static int pass_gap(struct cgt_reader *r, const uint8_t *p, size_t avail, const struct cgt_error *why,
		    struct cgt_error *e)
{
	uint64_t offset = r->in_file_offset + r->in_pos;

	if (!r->skip_damage)
		return 0;
	for (size_t gap = 1; gap < 8 && gap + 4 <= avail; gap++) {
		if (cgt_get_u32le(p + gap) != ZSTD_MAGIC)
			continue;
		/* The frame before may have run into the segment marker after
		   it (a block's size damaged) and left its tail: the frame
		   found then begins a segment, as after any marker. */
		int marker = marker_ends_at(r, offset + gap);
		if (marker < 0)
			return io_error(r, e);
		if (note_damage(r, offset, offset + gap, why, 1) < 0)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		r->marker_seen |= marker;
		r->in_pos += gap;
		return 1;
	}
	return 0;
}

/* Something that is no frame, or a frame that cannot be whole, starts at
   offset (why says what).  Skipping damage, the next segment marker after it
   is looked for: 1 and the stretch up to it noted (the marker is next), or 0
   and the rest of the file noted (the end is next).  Not skipping, or when
   the stretch may be a cut (cut: the file ends inside the thing at offset)
   and no marker follows: 0 with a truncation note if cut, else the error. */
static int pass_damage(struct cgt_reader *r, uint64_t offset, int cut, struct cgt_error *why,
		       struct cgt_error *e)
{
	uint8_t buf[65536];
	uint64_t at = offset + 1, marker = UINT64_MAX;

	if (!r->skip_damage) {
		if (cut) {
			note_truncation(r, offset);
			return 0;
		}
		*e = *why;
		return -why->status;
	}
	while (marker == UINT64_MAX && at < r->file_size) {
		ssize_t n = pread(r->fd, buf, sizeof(buf), (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return io_error(r, e);
		if (n < CGT_SEGMENT_MARKER_LEN)
			break;
		const uint8_t *m = memmem(buf, (size_t)n, cgt_segment_marker, CGT_SEGMENT_MARKER_LEN);
		if (m != NULL)
			marker = at + (uint64_t)(m - buf);
		else
			at += (uint64_t)n - (CGT_SEGMENT_MARKER_LEN - 1);
	}
	if (marker == UINT64_MAX && cut) {
		note_truncation(r, offset);
		return 0;
	}
	if (note_damage(r, offset, marker == UINT64_MAX ? r->file_size : marker, why, 0) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	/* Read on from the marker (or from the end). */
	uint64_t next = marker == UINT64_MAX ? r->file_size : marker;
	if (lseek(r->fd, (off_t)next, SEEK_SET) < 0)
		return io_error(r, e);
	r->in_file_offset = next;
	r->in_len = r->in_pos = 0;
	r->eof = marker == UINT64_MAX;
	return marker != UINT64_MAX;
}

/* Moves past skippable frames (noting segment markers) to the next zstd
   frame.  1: one starts at in_pos; 0: the file ends (cut short: noted);
   negative: error. */
static int skip_to_frame(struct cgt_reader *r, struct cgt_error *e)
{
	struct cgt_error why;

	for (;;) {
		ssize_t avail = fill(r, 16);
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
		uint32_t magic = cgt_get_u32le(p);
		if (magic == ZSTD_MAGIC)
			return 1;
		if ((magic & SKIPPABLE_MASK) != SKIPPABLE_MAGIC) {
			if (offset == 0)
				return cgt_fail(e, cgt_err_not_trace, "%s: not a cgtrace trace", r->path);
			cgt_fail(&why, cgt_err_corrupt,
				 "%s: byte offset %llu: expected a zstd frame (magic 28 b5 2f fd), "
				 "found %02x %02x %02x %02x",
				 r->path, (unsigned long long)offset, p[0], p[1], p[2], p[3]);
			int rc = pass_gap(r, p, (size_t)avail, &why, e);
			if (rc == 0)
				rc = pass_damage(r, offset, 0, &why, e);
			if (rc <= 0)
				return rc;
			continue;
		}
		if (avail < 8) {
			note_truncation(r, offset);
			return 0;
		}
		uint64_t skip = 8 + (uint64_t)cgt_get_u32le(p + 4);
		if (offset + skip > r->file_size) {
			cgt_fail(&why, cgt_err_corrupt,
				 "%s: byte offset %llu: a skippable frame of %llu bytes runs past the end "
				 "of the file",
				 r->path, (unsigned long long)offset, (unsigned long long)skip);
			int rc = pass_damage(r, offset, 1, &why, e);
			if (rc <= 0)
				return rc;
			continue;
		}
		if (cgt_is_segment_marker(p, (size_t)avail))
			r->marker_seen = 1;
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
	}
}

/* Buffers the whole zstd frame at in_pos: 1 with its size and declared
   content size; 0 if the file ends inside it (noted) or it is damaged and
   nothing follows; 2 if it is damaged and passed over; negative: error. */
static int buffer_frame(struct cgt_reader *r, size_t *size, size_t *content, struct cgt_error *e)
{
	uint64_t offset = r->in_file_offset + r->in_pos;
	size_t want = 4096;
	const uint8_t *p;
	struct cgt_error why;
	int rc;

	for (;;) {
		ssize_t avail = fill(r, want);
		if (avail < 0)
			return io_error(r, e);
		p = r->in + r->in_pos;
		*size = ZSTD_findFrameCompressedSize(p, (size_t)avail);
		if (!ZSTD_isError(*size))
			break;
		if (r->eof) {
			cgt_fail(&why, cgt_err_corrupt,
				 "%s: byte offset %llu: corrupt zstd frame (%s before the end of the "
				 "file)",
				 r->path, (unsigned long long)offset, ZSTD_getErrorName(*size));
			rc = pass_damage(r, offset, 1, &why, e);
			return rc > 0 ? 2 : rc;
		}
		if ((size_t)avail >= max_compressed_frame()) {
			cgt_fail(&why, cgt_err_corrupt,
				 "%s: byte offset %llu: corrupt zstd frame (no frame end within %zu bytes)",
				 r->path, (unsigned long long)offset, max_compressed_frame());
			rc = pass_damage(r, offset, 0, &why, e);
			return rc > 0 ? 2 : rc;
		}
		want = (size_t)avail * 2;
	}
	unsigned long long declared = ZSTD_getFrameContentSize(p, *size);
	if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN ||
	    declared > CGT_FRAME_MAX) {
		cgt_fail(&why, cgt_err_corrupt,
			 "%s: byte offset %llu: zstd frame %s (expected a declared size of at "
			 "most %u bytes)",
			 r->path, (unsigned long long)offset,
			 declared == ZSTD_CONTENTSIZE_UNKNOWN ? "does not declare its size"
							      : "declares a bad size",
			 CGT_FRAME_MAX);
		rc = pass_damage(r, offset, 0, &why, e);
		return rc > 0 ? 2 : rc;
	}
	*content = (size_t)declared;
	return 1;
}

static int take_frame_locked(struct cgt_reader *r, struct cgt_frame *f, struct cgt_error *e)
{
	size_t size = 0, content = 0;
	int rc;

	if (r->at_end)
		return 0;
	if (r->lookahead_status < 0) {
		*e = r->lookahead_error;
		return r->lookahead_status;
	}
	do {
		rc = skip_to_frame(r, e);
		if (rc > 0)
			rc = buffer_frame(r, &size, &content, e);
	} while (rc == 2);
	if (rc <= 0) {
		r->at_end = rc == 0;
		return rc;
	}
	if (f->compressed_cap < size) {
		uint8_t *c = realloc(f->compressed, size);
		if (c == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		f->compressed = c;
		f->compressed_cap = size;
	}
	memcpy(f->compressed, r->in + r->in_pos, size);
	f->compressed_len = size;
	f->index = r->frames_taken++;
	f->file_offset = r->in_file_offset + r->in_pos;
	f->stream_offset = r->stream_offset;
	f->starts_segment = f->index == 0 || r->marker_seen;
	f->len = f->pos = 0;
	f->decompressed = 0;
	f->path = r->path;
	f->damage_before = r->n_may_hold_frames;
	r->stream_offset += content;
	r->in_pos += size;
	r->marker_seen = 0;
	/* Whether the next frame continues this segment: a zstd frame with no
	   marker before it.  This frame has its index now, and every index
	   taken must be handed out (workers wait for each in turn), so an error
	   looking further is the next take's to report. */
	rc = skip_to_frame(r, &r->lookahead_error);
	if (rc < 0) {
		r->lookahead_status = rc;
		rc = 0;
	}
	f->segment_continues = rc > 0 && !r->marker_seen;
	return 1;
}

const struct cgt_frame *cgt_reader_first_frame(const struct cgt_reader *r)
{
	return r->first_pending ? &r->first : NULL;
}

int cgt_reader_take_frame(struct cgt_reader *r, struct cgt_frame *f, struct cgt_error *e)
{
	pthread_mutex_lock(&r->lock);
	int rc = 1;
	if (r->first_pending) {
		struct cgt_frame mine = *f;
		*f = r->first;
		r->first = mine;
		r->first_pending = 0;
	} else {
		rc = take_frame_locked(r, f, e);
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

static size_t first_record_pos(const struct cgt_frame *f)
{
	return f->index == 0 ? CGT_STREAM_HEADER_LEN : 0;
}

void cgt_frame_rewind(struct cgt_frame *f)
{
	f->pos = first_record_pos(f) < f->len ? first_record_pos(f) : f->len;
}

int cgt_frame_decompress(struct cgt_frame *f, struct cgt_error *e)
{
	if (f->data == NULL)
		f->data = malloc(CGT_FRAME_MAX);
	if (f->dctx == NULL)
		f->dctx = ZSTD_createDCtx();
	if (f->data == NULL || f->dctx == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	unsigned long long declared = ZSTD_getFrameContentSize(f->compressed, f->compressed_len);
	size_t n = ZSTD_decompressDCtx(f->dctx, f->data, CGT_FRAME_MAX, f->compressed,
				       f->compressed_len);
	if (ZSTD_isError(n) || n != declared)
		return cgt_fail(e, cgt_err_corrupt, "%s: byte offset %llu: corrupt zstd frame: %s",
				f->path, (unsigned long long)f->file_offset,
				ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
	f->len = n;
	f->decompressed = 1;
	cgt_frame_rewind(f);
	return 0;
}

int cgt_frame_next_record(struct cgt_frame *f, struct cgt_record *rec, struct cgt_error *e)
{
	if (f->pos >= f->len)
		return 0;
	const uint8_t *start = f->data + f->pos;
	const uint8_t *p = start;
	const uint8_t *end = f->data + f->len;
	uint64_t at = f->stream_offset + f->pos;
	unsigned type = *p++;
	uint64_t len;

	_Static_assert(CGT_REC_SIGNAL == 13, "the message below");
	if (type < CGT_REC_HEADER || type > CGT_REC_SIGNAL)
		return cgt_fail(e, cgt_err_corrupt,
				"%s: stream offset %llu (frame at byte offset %llu): expected a record "
				"type 1-13, found %u",
				f->path, (unsigned long long)at, (unsigned long long)f->file_offset, type);
	if (cgt_get_varint(&p, end, &len) < 0 || len > CGT_RECORD_MAX ||
	    len > (uint64_t)(end - p))
		return cgt_fail(e, cgt_err_corrupt,
				"%s: stream offset %llu (frame at byte offset %llu): %s record length "
				"runs past the end of its frame",
				f->path, (unsigned long long)at, (unsigned long long)f->file_offset,
				cgt_record_type_name(type));
	rec->type = type;
	rec->payload = p;
	rec->len = (size_t)len;
	rec->stream_offset = at + (uint64_t)(p - start);
	rec->frame_offset = f->file_offset;
	rec->frame_size = f->compressed_len;
	rec->path = f->path;
	f->pos += (size_t)(p - start) + (size_t)len;
	return 1;
}

void cgt_frame_free(struct cgt_frame *f)
{
	free(f->compressed);
	free(f->data);
	ZSTD_freeDCtx(f->dctx);
	memset(f, 0, sizeof(*f));
}

static int reader_open(struct cgt_reader **out, const char *path, int skip_damage,
		       struct cgt_error *e)
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
	pthread_mutex_init(&r->lock, NULL);
	r->fd = fd;
	r->skip_damage = skip_damage;
	r->file_size = (uint64_t)st.st_size;
	r->path = strdup(path);
	r->in_cap = max_compressed_frame();
	r->in = malloc(r->in_cap);
	if (r->path == NULL || r->in == NULL) {
		cgt_reader_close(r);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}

	int rc = take_frame_locked(r, &r->first, e);
	if (rc >= 0 && r->n_damage > 0 && (rc == 0 || r->damage[0].start < r->first.file_offset)) {
		/* The first frame (the stream header's) is the damaged one. */
		rc = cgt_fail(e, cgt_err_corrupt, "%s", r->damage[0].why);
	}
	if (rc > 0)
		rc = cgt_frame_decompress(&r->first, e) == 0 ? 1 : -1;
	if (rc < 0) {
		cgt_reader_close(r);
		return -e->status;
	}
	if (rc == 0 || r->first.len < CGT_STREAM_HEADER_LEN ||
	    memcmp(r->first.data, CGT_TRACE_MAGIC, CGT_TRACE_MAGIC_LEN) != 0) {
		rc = cgt_fail(e, cgt_err_not_trace, "%s: not a cgtrace trace%s", path,
			      rc == 0 && r->truncation ? " (or truncated before its first frame ended)"
						       : "");
		cgt_reader_close(r);
		return rc;
	}
	r->version = cgt_get_u32le(r->first.data + 8);
	if (r->version < 1 || r->version > CGT_TRACE_VERSION) {
		rc = cgt_fail(e, cgt_err_version,
			      "%s: trace format version %u is not supported: this cgtrace reads versions "
			      "1 to %u",
			      path, r->version, CGT_TRACE_VERSION);
		cgt_reader_close(r);
		return rc;
	}
	r->first_pending = 1;
	*out = r;
	return 0;
}

int cgt_reader_open(struct cgt_reader **out, const char *path, struct cgt_error *e)
{
	return reader_open(out, path, 0, e);
}

int cgt_reader_open_skipping(struct cgt_reader **out, const char *path, struct cgt_error *e)
{
	return reader_open(out, path, 1, e);
}

uint32_t cgt_reader_version(const struct cgt_reader *r)
{
	return r->version;
}

int cgt_reader_next(struct cgt_reader *r, struct cgt_record *rec, struct cgt_error *e)
{
	struct cgt_frame *f = &r->sequential;

	for (;;) {
		if (r->sequential_loaded) {
			int rc = cgt_frame_next_record(f, rec, e);
			if (rc != 0)
				return rc;
		}
		int rc = cgt_reader_take_frame(r, f, e);
		if (rc <= 0)
			return rc;
		r->sequential_loaded = 0;
		if (!f->decompressed && cgt_frame_decompress(f, e) < 0)
			return -e->status;
		r->sequential_loaded = 1;
	}
}

const char *cgt_reader_truncation(const struct cgt_reader *r)
{
	return r->truncation;
}

size_t cgt_reader_damage(const struct cgt_reader *r, const struct cgt_damage **d)
{
	*d = r->damage;
	return r->n_damage;
}

uint64_t cgt_reader_file_size(const struct cgt_reader *r)
{
	return r->file_size;
}

uint64_t cgt_reader_file_offset(const struct cgt_reader *r)
{
	return __atomic_load_n(&r->in_file_offset, __ATOMIC_RELAXED) +
	       __atomic_load_n(&r->in_pos, __ATOMIC_RELAXED);
}

void cgt_reader_close(struct cgt_reader *r)
{
	if (r == NULL)
		return;
	if (r->fd >= 0)
		close(r->fd);
	cgt_frame_free(&r->first);
	cgt_frame_free(&r->sequential);
	pthread_mutex_destroy(&r->lock);
	free(r->in);
	free(r->path);
	free(r->truncation);
	free(r->damage);
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
		if (total == 0 && (n < 4 || cgt_get_u32le(in) != ZSTD_MAGIC)) {
			result = 0;
			break;
		}
		/* A window no larger than a frame: a header asking for more
		   does not get it. */
		_Static_assert(1u << 22 == CGT_FRAME_MAX, "windowLogMax 22 is CGT_FRAME_MAX");
		if (ds == NULL && ((ds = ZSTD_createDStream()) == NULL ||
				   ZSTD_isError(ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, 22))))
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
