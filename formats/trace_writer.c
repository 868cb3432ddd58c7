/*
 * Trace writer: records go into a frame buffer; full buffers are
 * compressed into independent zstd frames and written by a thread of its
 * own, so that compression overlaps with whatever produces the records.
 * At the producer's segment points it begins segments: a new frame,
 * announced by a segment marker, that starts with a SEGMENT record.
 *
 * A failed write (a full disk, the file size limit) cuts the file back to
 * the end of the last frame written whole, so that what is left is a
 * trace without its end: every frame in it usable.
 */
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "segment_marker.h"
#include "varint.h"

/* Frames are handed over through a small ring: the producer fills one
   buffer while the thread compresses the others. */
#define RING 3
#define COMPRESSION_LEVEL 1

struct frame {
	uint8_t *data;
	size_t len;
	int starts_segment;	/* written after a segment marker */
};

struct cgt_writer {
	int fd;
	char *path;
	struct frame ring[RING];
	unsigned head, tail, queued;	/* producer fills ring[head]; thread takes ring[tail] */
	int closing;
	int failed_errno;
	uint64_t bytes_written;
	off_t file_end;		/* after the last frame written whole; -1: not a file */
	uint64_t segment_bytes;	/* of records put since the segment began */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
};

int cgt_write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *compressor_main(void *arg)
{
	struct cgt_writer *w = arg;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(CGT_FRAME_MAX);
	uint8_t *out = malloc(cap);

	if (cctx != NULL) {
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, COMPRESSION_LEVEL);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	}
	pthread_mutex_lock(&w->lock);
	if (cctx == NULL || out == NULL)
		w->failed_errno = ENOMEM;
	for (;;) {
		while (w->queued == 0 && !w->closing)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->queued == 0)
			break;
		struct frame *f = &w->ring[w->tail];
		int failed = w->failed_errno;
		pthread_mutex_unlock(&w->lock);

		int err = 0;
		if (!failed && f->starts_segment &&
		    cgt_write_all(w->fd, cgt_segment_marker, CGT_SEGMENT_MARKER_LEN) < 0)
			err = errno;
		if (!failed && !err) {
			size_t n = ZSTD_compress2(cctx, out, cap, f->data, f->len);
			if (ZSTD_isError(n)) {
				err = ENOMEM;
			} else if (cgt_write_all(w->fd, out, n) < 0) {
				err = errno;
			} else {
				__atomic_add_fetch(&w->bytes_written, n, __ATOMIC_RELAXED);
				if (w->file_end >= 0)
					w->file_end += (off_t)n +
						       (f->starts_segment ? CGT_SEGMENT_MARKER_LEN : 0);
			}
		}
		/* No piece of a frame may stay behind a failed write. */
		if (err && w->file_end >= 0 && ftruncate(w->fd, w->file_end) < 0)
			w->file_end = -1;

		pthread_mutex_lock(&w->lock);
		if (err && !w->failed_errno)
			w->failed_errno = err;
		f->len = 0;
		f->starts_segment = 0;
		w->tail = (w->tail + 1) % RING;
		w->queued--;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	ZSTD_freeCCtx(cctx);
	free(out);
	return NULL;
}

static int failure(struct cgt_writer *w, struct cgt_error *e)
{
	return cgt_fail(e, cgt_err_io, "cannot write '%s': %s", w->path,
			strerror(w->failed_errno));
}

/* Queues the frame being filled and waits for a free buffer. */
static int submit_frame(struct cgt_writer *w, struct cgt_error *e)
{
	pthread_mutex_lock(&w->lock);
	w->queued++;
	w->head = (w->head + 1) % RING;
	pthread_cond_broadcast(&w->cond);
	while (w->queued == RING)
		pthread_cond_wait(&w->cond, &w->lock);
	int failed = w->failed_errno;
	pthread_mutex_unlock(&w->lock);
	return failed ? failure(w, e) : 0;
}

int cgt_writer_open(struct cgt_writer **out, int fd, const char *path, struct cgt_error *e)
{
	struct cgt_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (w == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	w->fd = fd;
	w->file_end = lseek(fd, 0, SEEK_CUR);
	w->path = strdup(path);
	for (unsigned i = 0; i < RING; i++) {
		w->ring[i].data = malloc(CGT_FRAME_MAX);
		if (w->ring[i].data == NULL || w->path == NULL) {
			for (unsigned j = 0; j <= i; j++)
				free(w->ring[j].data);
			free(w->path);
			free(w);
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		}
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (cgt_thread_create(&w->thread, compressor_main, w) != 0) {
		for (unsigned i = 0; i < RING; i++)
			free(w->ring[i].data);
		free(w->path);
		free(w);
		return cgt_fail(e, cgt_err_nomem, "cannot start the compression thread");
	}

	struct frame *f = &w->ring[0];
	memcpy(f->data, CGT_TRACE_MAGIC, CGT_TRACE_MAGIC_LEN);
	uint32_t version = CGT_TRACE_VERSION, flags = 0;
	memcpy(f->data + 8, &version, 4);	/* little-endian hosts only (x86-64) */
	memcpy(f->data + 12, &flags, 4);
	f->len = CGT_STREAM_HEADER_LEN;
	*out = w;
	return 0;
}

int cgt_writer_put(struct cgt_writer *w, unsigned type, const uint8_t *payload, size_t len,
		   struct cgt_error *e)
{
	if (len > CGT_RECORD_MAX || type == 0 || type > 255)
		return cgt_fail(e, cgt_err_invalid, "%s: record of type %u and %zu bytes is too large",
				w->path, type, len);
	size_t need = 1 + CGT_VARINT_MAX + len;
	if (w->ring[w->head].len + need > CGT_FRAME_MAX) {
		int rc = submit_frame(w, e);
		if (rc < 0)
			return rc;
	}
	struct frame *f = &w->ring[w->head];
	uint8_t *start = f->data + f->len, *p = start;
	*p++ = (uint8_t)type;
	p = cgt_put_varint(p, len);
	memcpy(p, payload, len);
	f->len = (size_t)(p - f->data) + len;
	w->segment_bytes += (size_t)(p - start) + len;
	return 0;
}

int cgt_writer_segment_point(struct cgt_writer *w, struct cgt_block_table *t, struct cgt_error *e)
{
	struct cgt_buf b = { 0 };
	int rc;

	if (w->segment_bytes < CGT_SEGMENT_TARGET)
		return 0;
	if (w->ring[w->head].len > 0 && (rc = submit_frame(w, e)) < 0)
		return rc;
	w->ring[w->head].starts_segment = 1;
	w->segment_bytes = 0;
	t->segment++;
	struct cgt_segment_state state = { t->cond_history, t->cachegrind_instr };
	if (cgt_segment_encode(&b, &state) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	rc = cgt_writer_put(w, CGT_REC_SEGMENT, b.data, b.len, e);
	cgt_buf_free(&b);
	return rc;
}

int cgt_writer_flush(struct cgt_writer *w, struct cgt_error *e)
{
	return w->ring[w->head].len > 0 ? submit_frame(w, e) : 0;
}

int cgt_writer_sync(struct cgt_writer *w, int64_t *end, struct cgt_error *e)
{
	int rc = cgt_writer_flush(w, e);
	pthread_mutex_lock(&w->lock);
	while (w->queued > 0)
		pthread_cond_wait(&w->cond, &w->lock);
	int failed = w->failed_errno;
	*end = w->file_end;
	pthread_mutex_unlock(&w->lock);
	return rc < 0 ? rc : failed ? failure(w, e) : 0;
}

int cgt_writer_skip(struct cgt_writer *w, uint64_t n, struct cgt_error *e)
{
	off_t to = w->file_end + (off_t)n;
	if (w->file_end < 0 || lseek(w->fd, to, SEEK_SET) != to) {
		w->failed_errno = w->file_end < 0 ? ESPIPE : errno;
		return failure(w, e);
	}
	w->file_end = to;
	return 0;
}

void cgt_writer_forsake(struct cgt_writer *w)
{
	for (unsigned i = 0; i < RING; i++)
		free(w->ring[i].data);
	free(w->path);
	free(w);
}

uint64_t cgt_writer_bytes(const struct cgt_writer *w)
{
	return __atomic_load_n(&w->bytes_written, __ATOMIC_RELAXED);
}

int cgt_writer_close(struct cgt_writer *w, struct cgt_error *e)
{
	int rc = 0;

	if (w->ring[w->head].len > 0)
		rc = submit_frame(w, e);
	pthread_mutex_lock(&w->lock);
	w->closing = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	if (rc == 0 && w->failed_errno)
		rc = failure(w, e);
	for (unsigned i = 0; i < RING; i++)
		free(w->ring[i].data);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w->path);
	free(w);
	return rc;
}
