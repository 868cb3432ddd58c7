/*
 * Archives (trace.h): a zstd-compressed POSIX ustar stream of regular
 * files, so that tar --zstd lists and extracts it as well as we do.
 *
 * The writer streams each file through the compressor a piece at a time
 * and remembers the names it stored (never one twice).  The reader takes
 * the decompressed stream 512 bytes at a time and each member's data a
 * piece at a time, so memory stays bounded whatever a header claims: a
 * size of 2^60 is read until the stream stops, never allocated.  A
 * recording's archive may be all that is left of its modules, so the
 * reader keeps every member it could read whole and says where it
 * stopped.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define BLOCK 512
#define CHUNK (64u << 10)
/* Debug files are most of an archive and compress well; an archive is
   made once and read many times. */
#define COMPRESSION_LEVEL 6
/* ustar's numeric fields: 11 octal digits. */
#define OCTAL_LIMIT (1ull << 33)
/* A pax header's records (a path, a size, an mtime ... ) fit easily. */
#define PAX_MAX (64u << 10)
/* Frames made by others may ask for a window up to 2^27 bytes (zstd's
   default limit), which bounds the decompressor's memory. */
#define WINDOW_LOG_MAX 27

static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

/* ustar header fields: offsets and widths. */
enum {
	H_NAME = 0, H_MODE = 100, H_UID = 108, H_GID = 116, H_SIZE = 124, H_MTIME = 136,
	H_CHKSUM = 148, H_TYPE = 156, H_LINKNAME = 157, H_MAGIC = 257, H_VERSION = 263,
	H_UNAME = 265, H_GNAME = 297, H_DEVMAJOR = 329, H_DEVMINOR = 337, H_PREFIX = 345,
};

/*
 * Why name is not a member name (a relative path of plain components, at
 * most CGT_ARCHIVE_NAME_MAX bytes), or NULL if it is.  norm (at least
 * len + 1 bytes) receives it without "." components, repeated or trailing
 * slashes, which tar writers leave in names ("./a", "a//b").
 */
static const char *name_problem(const char *name, size_t len, char *norm)
{
	size_t n = 0;
	if (len == 0)
		return "an empty name";
	if (len > CGT_ARCHIVE_NAME_MAX)
		return "a name too long";
	if (memchr(name, '\0', len) != NULL)
		return "a name with a NUL byte";
	if (name[0] == '/')
		return "an absolute name";
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && name[j] != '/')
			j++;
		size_t clen = j - i;
		if (clen == 2 && name[i] == '.' && name[i + 1] == '.')
			return "a name with a '..' component";
		if (clen > 0 && !(clen == 1 && name[i] == '.')) {
			if (n > 0)
				norm[n++] = '/';
			memcpy(norm + n, name + i, clen);
			n += clen;
		}
		i = j + 1;
	}
	norm[n] = '\0';
	if (n == 0)
		return "a name with no file in it";
	if (name[len - 1] == '/')
		return "a directory's name";
	return NULL;
}

/* ---- Writer ------------------------------------------------------------ */

struct stored_name {
	struct stored_name *next;	/* with the same hash */
	char name[];
};

struct cgt_archive_writer {
	int fd;
	char *path;
	ZSTD_CCtx *cctx;
	uint8_t *out;
	size_t out_cap;
	struct cgt_map names;		/* FNV-1a hash -> struct stored_name list */
	uint64_t data_bytes;
	int failed;			/* a write failed: the archive is unusable */
	uint8_t chunk[CHUNK];
};

static uint64_t name_hash(const char *s)
{
	/* never 0, so a key_map slot key is never confused */
	return cgt_hash_text(s, 0xcbf29ce484222325ull) | 1;
}

static int writer_failed(struct cgt_archive_writer *w, struct cgt_error *e)
{
	return cgt_fail(e, cgt_err_io, "%s: an earlier write failed; the archive is incomplete",
			w->path);
}

/* Compresses n bytes into the archive, with mode ZSTD_e_continue or
   ZSTD_e_end (then p may be NULL). */
static int put(struct cgt_archive_writer *w, const void *p, size_t n, ZSTD_EndDirective mode,
	       struct cgt_error *e)
{
	ZSTD_inBuffer in = { p, n, 0 };
	for (;;) {
		ZSTD_outBuffer out = { w->out, w->out_cap, 0 };
		size_t left = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		if (ZSTD_isError(left)) {
			w->failed = 1;
			return cgt_fail(e, cgt_err_io, "%s: compressing: %s", w->path,
					ZSTD_getErrorName(left));
		}
		if (cgt_write_all(w->fd, w->out, out.pos) < 0) {
			w->failed = 1;
			return cgt_fail(e, cgt_err_io, "%s: %s", w->path, strerror(errno));
		}
		if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
			return 0;
	}
}

int cgt_archive_create(struct cgt_archive_writer **wp, int fd, const char *path_for_messages,
		       struct cgt_error *e)
{
	struct cgt_archive_writer *w = calloc(1, sizeof(*w));
	*wp = NULL;
	if (w == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	w->fd = fd;
	w->path = strdup(path_for_messages);
	w->cctx = ZSTD_createCCtx();
	w->out_cap = ZSTD_CStreamOutSize();
	w->out = malloc(w->out_cap);
	if (w->path == NULL || w->cctx == NULL || w->out == NULL) {
		cgt_archive_free(w);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, COMPRESSION_LEVEL);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	*wp = w;
	return 0;
}

/* v in octal, zero-padded, in a field of width bytes ending in a NUL. */
static void put_octal(uint8_t *field, size_t width, uint64_t v)
{
	field[width - 1] = '\0';
	for (size_t i = width - 1; i-- > 0; v >>= 3)
		field[i] = (uint8_t)('0' + (v & 7));
}

static unsigned header_sum(const uint8_t *h)
{
	unsigned sum = 0;
	for (size_t i = 0; i < BLOCK; i++)
		sum += (i >= H_CHKSUM && i < H_CHKSUM + 8) ? ' ' : h[i];
	return sum;
}

/* A ustar header: name (its first 100 bytes), size and mtime already
   within their fields' range. */
static void make_header(uint8_t h[BLOCK], const char *name, uint64_t size, uint64_t mtime, char type)
{
	memset(h, 0, BLOCK);
	size_t len = strlen(name);
	memcpy(h + H_NAME, name, len < 100 ? len : 100);
	put_octal(h + H_MODE, 8, 0644);
	put_octal(h + H_UID, 8, 0);
	put_octal(h + H_GID, 8, 0);
	put_octal(h + H_SIZE, 12, size);
	put_octal(h + H_MTIME, 12, mtime);
	h[H_TYPE] = (uint8_t)type;
	memcpy(h + H_MAGIC, "ustar", 6);
	memcpy(h + H_VERSION, "00", 2);
	put_octal(h + H_DEVMAJOR, 8, 0);
	put_octal(h + H_DEVMINOR, 8, 0);
	put_octal(h + H_CHKSUM, 7, header_sum(h));
	h[H_CHKSUM + 7] = ' ';
}

/* Appends the pax record "LEN key=value\n" to buf at *n (cap bytes). */
static void pax_record(char *buf, size_t *n, size_t cap, const char *key, const char *value)
{
	size_t body = 1 + strlen(key) + 1 + strlen(value) + 1;	/* " key=value\n" */
	size_t len = body + 1;
	/* LEN counts its own digits */
	while ((size_t)snprintf(NULL, 0, "%zu", len) + body != len)
		len++;
	if (*n + len < cap)
		*n += (size_t)snprintf(buf + *n, cap - *n, "%zu %s=%s\n", len, key, value);
}

static int put_padding(struct cgt_archive_writer *w, uint64_t size, struct cgt_error *e)
{
	static const uint8_t zeros[BLOCK];
	size_t pad = (size_t)((BLOCK - size % BLOCK) % BLOCK);
	return pad > 0 ? put(w, zeros, pad, ZSTD_e_continue, e) : 0;
}

/* The headers of a member: a pax header first if ustar cannot say it. */
static int put_headers(struct cgt_archive_writer *w, const char *name, uint64_t size,
		       int64_t mtime, struct cgt_error *e)
{
	uint8_t h[BLOCK];
	int need_pax = strlen(name) > 100 || size >= OCTAL_LIMIT || mtime < 0 ||
		       (uint64_t)mtime >= OCTAL_LIMIT;
	if (need_pax) {
		/* the records fit the chunk buffer, which holds no data yet */
		_Static_assert(CGT_ARCHIVE_NAME_MAX + 128 < CHUNK, "a pax header fits the chunk");
		char *pax = (char *)w->chunk, num[32];
		size_t cap = CHUNK, n = 0;
		pax_record(pax, &n, cap, "path", name);
		snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
		pax_record(pax, &n, cap, "size", num);
		snprintf(num, sizeof(num), "%lld", (long long)mtime);
		pax_record(pax, &n, cap, "mtime", num);
		make_header(h, "././@PaxHeader", n, 0, 'x');
		int rc = put(w, h, BLOCK, ZSTD_e_continue, e);
		if (rc == 0)
			rc = put(w, pax, n, ZSTD_e_continue, e);
		if (rc == 0)
			rc = put_padding(w, n, e);
		if (rc < 0)
			return rc;
	}
	make_header(h, name, size < OCTAL_LIMIT ? size : 0,
		    mtime >= 0 && (uint64_t)mtime < OCTAL_LIMIT ? (uint64_t)mtime : 0, '0');
	return put(w, h, BLOCK, ZSTD_e_continue, e);
}

/* Streams size bytes of in into the archive.  A file that shrank while
   being read is padded with zeros (the archive stays well formed) and
   is an error. */
static int put_data(struct cgt_archive_writer *w, int in, const char *src, const char *member,
		    uint64_t size, struct cgt_error *e)
{
	uint64_t done = 0;
	int read_errno = 0;
	while (done < size) {
		size_t want = size - done < CHUNK ? (size_t)(size - done) : CHUNK;
		ssize_t n = read_errno ? 0 : read(in, w->chunk, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			read_errno = n < 0 ? errno : 0;
			n = (ssize_t)want;
			memset(w->chunk, 0, want);
			if (read_errno == 0)
				read_errno = -1;	/* shrank */
		}
		int rc = put(w, w->chunk, (size_t)n, ZSTD_e_continue, e);
		if (rc < 0)
			return rc;
		done += (uint64_t)n;
	}
	int rc = put_padding(w, size, e);
	if (rc < 0)
		return rc;
	if (read_errno > 0)
		return cgt_fail(e, cgt_err_io, "%s: %s (member %s of %s is filled with zeros)", src,
				strerror(read_errno), member, w->path);
	if (read_errno < 0)
		return cgt_fail(e, cgt_err_io,
				"%s: shrank while being read (member %s of %s is filled with zeros)",
				src, member, w->path);
	return 0;
}

int cgt_archive_add(struct cgt_archive_writer *w, const char *member_name, const char *src_path,
		    struct cgt_error *e)
{
	if (w->failed)
		return writer_failed(w, e);
	size_t len = strlen(member_name);
	char *norm = malloc(len + 1);
	if (norm == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	const char *why = name_problem(member_name, len, norm);
	int plain = why == NULL && strcmp(norm, member_name) == 0;
	free(norm);
	if (!plain)
		return cgt_fail(e, cgt_err_invalid, "%s: cannot add member '%s': %s", w->path,
				member_name, why ? why : "not a plain relative path");

	uint64_t hash = name_hash(member_name);
	struct stored_name *first = cgt_map_get(&w->names, hash);
	for (struct stored_name *s = first; s != NULL; s = s->next)
		if (strcmp(s->name, member_name) == 0)
			return 0;

	/* (O_NONBLOCK: a FIFO would wait here for a writer) */
	int in = open(src_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return cgt_fail(e, cgt_err_io, "%s: %s", src_path, strerror(errno));
	struct stat st;
	if (fstat(in, &st) < 0) {
		int rc = cgt_fail(e, cgt_err_io, "%s: %s", src_path, strerror(errno));
		close(in);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(in);
		return cgt_fail(e, cgt_err_invalid, "%s: not a regular file", src_path);
	}
	struct stored_name *s = malloc(sizeof(*s) + len + 1);
	if (s == NULL || cgt_map_put(&w->names, hash, s) < 0) {
		free(s);
		close(in);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	memcpy(s->name, member_name, len + 1);
	s->next = first;

	uint64_t size = (uint64_t)st.st_size;
	int rc = put_headers(w, member_name, size, (int64_t)st.st_mtim.tv_sec, e);
	if (rc == 0)
		rc = put_data(w, in, src_path, member_name, size, e);
	close(in);
	w->data_bytes += size;
	return rc < 0 ? rc : 1;
}

int cgt_archive_broken(const struct cgt_archive_writer *w)
{
	return w->failed;
}

char *cgt_archive_source_member(const char *path)
{
	static const char prefix[] = "sources";
	size_t len = strlen(path);
	if (path[0] != '/' || len > CGT_ARCHIVE_NAME_MAX - sizeof(prefix))
		return NULL;
	char *out = malloc(sizeof(prefix) + len + 1);
	if (out == NULL)
		return NULL;
	size_t n = sizeof(prefix) - 1, root = n;
	memcpy(out, prefix, n);
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && path[j] != '/')
			j++;
		size_t clen = j - i;
		if (clen == 2 && path[i] == '.' && path[i + 1] == '.') {
			if (n == root) {
				free(out);
				return NULL;
			}
			while (out[--n] != '/')
				;
		} else if (clen > 0 && !(clen == 1 && path[i] == '.')) {
			out[n++] = '/';
			memcpy(out + n, path + i, clen);
			n += clen;
		}
		i = j + 1;
	}
	out[n] = '\0';
	if (n == root) {
		free(out);
		return NULL;
	}
	return out;
}

uint64_t cgt_archive_data_bytes(const struct cgt_archive_writer *w)
{
	return w->data_bytes;
}

int cgt_archive_finish(struct cgt_archive_writer *w, struct cgt_error *e)
{
	static const uint8_t end[2 * BLOCK];
	if (w->failed)
		return writer_failed(w, e);
	int rc = put(w, end, sizeof(end), ZSTD_e_continue, e);
	if (rc == 0)
		rc = put(w, NULL, 0, ZSTD_e_end, e);
	return rc;
}

void cgt_archive_free(struct cgt_archive_writer *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->names.cap; i++) {
		struct stored_name *s = w->names.slots[i].value;
		while (s != NULL) {
			struct stored_name *next = s->next;
			free(s);
			s = next;
		}
	}
	cgt_map_free(&w->names);
	ZSTD_freeCCtx(w->cctx);
	free(w->out);
	free(w->path);
	free(w);
}

/* ---- Reader ------------------------------------------------------------ */

enum stream_state {
	STREAM_OK,
	STREAM_END,		/* the file ends after a whole zstd frame */
	STREAM_TRUNCATED,	/* the file ends inside a frame */
	STREAM_DAMAGED,		/* zstd cannot decode the frame */
	STREAM_IO,		/* the file cannot be read */
};

/* The archive's decompressed stream. */
struct unzstd {
	int fd;
	ZSTD_DCtx *dctx;
	uint8_t *in, *out;
	size_t in_cap, in_len, in_pos, out_cap, out_len, out_pos;
	uint64_t file_pos;	/* bytes read from the file */
	uint64_t tar_pos;	/* decompressed bytes taken */
	size_t hint;		/* ZSTD_decompressStream's last return: 0 at a frame's end */
	int out_full;		/* its last call filled the output buffer */
	enum stream_state state;
	const char *why;	/* STREAM_DAMAGED, STREAM_IO: what went wrong */
};

/* The compressed bytes the decompressor has taken. */
static uint64_t compressed_pos(const struct unzstd *z)
{
	return z->file_pos - (z->in_len - z->in_pos);
}

/* Up to n bytes of the stream into buf: fewer only where it stops, and
   z->state says why. */
static size_t unzstd_read(struct unzstd *z, uint8_t *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		if (z->out_pos < z->out_len) {
			size_t k = z->out_len - z->out_pos;
			k = k < n - got ? k : n - got;
			memcpy(buf + got, z->out + z->out_pos, k);
			z->out_pos += k;
			got += k;
			continue;
		}
		if (z->state != STREAM_OK)
			break;
		/* a call that filled the output may have more to give without input */
		if (z->in_pos == z->in_len && !z->out_full) {
			ssize_t r = read(z->fd, z->in, z->in_cap);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				z->state = STREAM_IO;
				z->why = strerror(errno);
				break;
			}
			if (r == 0) {
				z->state = z->hint == 0 ? STREAM_END : STREAM_TRUNCATED;
				break;
			}
			z->in_len = (size_t)r;
			z->in_pos = 0;
			z->file_pos += (uint64_t)r;
		}
		ZSTD_inBuffer in = { z->in, z->in_len, z->in_pos };
		ZSTD_outBuffer out = { z->out, z->out_cap, 0 };
		size_t rc = ZSTD_decompressStream(z->dctx, &out, &in);
		z->in_pos = in.pos;
		if (ZSTD_isError(rc)) {
			z->state = STREAM_DAMAGED;
			z->why = ZSTD_getErrorName(rc);
			break;
		}
		z->hint = rc;
		z->out_full = out.pos == out.size;
		z->out_len = out.pos;
		z->out_pos = 0;
	}
	z->tar_pos += got;
	return got;
}

struct extract {
	const char *path;	/* the archive, for messages */
	int dirfd;
	struct unzstd z;
	/* from a pax or GNU long-name header, for the next member */
	char next_name[CGT_ARCHIVE_NAME_MAX + 1];
	int has_next_name, has_next_size, has_next_mtime;
	uint64_t next_size;
	int64_t next_mtime;
	const char *next_problem;	/* why the next member cannot be extracted */
	uint64_t header_pos;		/* of the header being read, in the tar stream */
	char last[CGT_ARCHIVE_NAME_MAX + 1];	/* the last member read whole */
	unsigned members, skipped;
	char first_skip[CGT_ARCHIVE_NAME_MAX + 256];
	uint8_t chunk[CHUNK];
};

/* "after member NAME" or "before the first member", for messages. */
static const char *place(const struct extract *x, char *buf, size_t cap)
{
	if (x->members == 0 && x->last[0] == '\0')
		snprintf(buf, cap, "before the first member");
	else
		snprintf(buf, cap, "after member %s", x->last);
	return buf;
}

/* The stream stopped where a header (or the end) was expected: 1 if the
   archive is truncated or damaged there, negative on a read error. */
static int stopped_between(struct extract *x, struct cgt_error *e)
{
	char where[CGT_ARCHIVE_NAME_MAX + 32];
	place(x, where, sizeof(where));
	unsigned long long at = compressed_pos(&x->z);
	switch (x->z.state) {
	case STREAM_IO:
		return cgt_fail(e, cgt_err_io, "%s: %s", x->path, x->z.why);
	case STREAM_DAMAGED:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: damaged at byte offset %llu (compressed) %s: zstd: %s", x->path, at,
			 where, x->z.why);
		return 1;
	case STREAM_END:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed) %s: expected a tar header"
			 " or the end-of-archive blocks", x->path, at, where);
		return 1;
	default:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed) %s: the zstd frame is not"
			 " complete", x->path, at, where);
		return 1;
	}
}

/* The stream stopped inside a member's data (got of size bytes). */
static int stopped_inside(struct extract *x, const char *name, uint64_t got, uint64_t size,
			  struct cgt_error *e)
{
	unsigned long long at = compressed_pos(&x->z);
	switch (x->z.state) {
	case STREAM_IO:
		return cgt_fail(e, cgt_err_io, "%s: %s", x->path, x->z.why);
	case STREAM_DAMAGED:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: damaged at byte offset %llu (compressed) in member %s (%llu of %llu"
			 " bytes read): zstd: %s", x->path, at, name, (unsigned long long)got,
			 (unsigned long long)size, x->z.why);
		return 1;
	default:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed) in member %s (%llu of %llu"
			 " bytes)", x->path, at, name, (unsigned long long)got,
			 (unsigned long long)size);
		return 1;
	}
}

/* A member not extracted: noted, and the archive read on. */
static void skip_member(struct extract *x, const char *name, const char *why)
{
	if (x->skipped++ == 0)
		snprintf(x->first_skip, sizeof(x->first_skip),
			 "member '%s' (header at byte %llu of the tar stream) not extracted: %s",
			 name, (unsigned long long)x->header_pos, why);
}

/* Reads and drops n bytes: 0, or where the stream stopped. */
static int skip_data(struct extract *x, const char *name, uint64_t n, struct cgt_error *e)
{
	for (uint64_t done = 0; done < n;) {
		size_t want = n - done < CHUNK ? (size_t)(n - done) : CHUNK;
		size_t got = unzstd_read(&x->z, x->chunk, want);
		done += got;
		if (got < want)
			return stopped_inside(x, name, done, n, e);
	}
	return 0;
}

/* The zeros after a member's data, to the next 512-byte boundary.  The
   stream stopping here loses nothing: the next header's read says so. */
static void skip_padding(struct extract *x, uint64_t size)
{
	uint8_t zeros[BLOCK];	/* not x->chunk: it may hold a header's records */
	unzstd_read(&x->z, zeros, (size_t)((BLOCK - size % BLOCK) % BLOCK));
}

/* A ustar numeric field: octal digits between optional leading spaces and
   a NUL or spaces (none at all: 0), or GNU's base-256 for a positive
   number (first byte 0x80).  0, or -1 if it is neither. */
static int parse_number(const uint8_t *f, size_t width, uint64_t *v)
{
	*v = 0;
	if (f[0] == 0x80) {
		for (size_t i = 1; i < width; i++) {
			if (*v >> 56)
				return -1;
			*v = *v << 8 | f[i];
		}
		return 0;
	}
	size_t i = 0;
	while (i < width && f[i] == ' ')
		i++;
	for (; i < width && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v >> 61)
			return -1;
		*v = *v << 3 | (uint64_t)(f[i] - '0');
	}
	for (; i < width; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return -1;
	return 0;
}

/* Why h is not a ustar header, or NULL. */
static const char *header_problem(const uint8_t h[BLOCK])
{
	uint64_t stored;
	if (memcmp(h + H_MAGIC, "ustar", 5) != 0 || (h[H_MAGIC + 5] != '\0' && h[H_MAGIC + 5] != ' '))
		return "no ustar magic at its byte 257";
	if (parse_number(h + H_CHKSUM, 8, &stored) < 0)
		return "its checksum field is not an octal number";
	unsigned sum = header_sum(h);
	int signed_sum = 0;
	for (size_t i = 0; i < BLOCK; i++)
		signed_sum += (i >= H_CHKSUM && i < H_CHKSUM + 8) ? ' ' : (signed char)h[i];
	if (stored != sum && (int64_t)stored != signed_sum)
		return "its checksum does not match its bytes";
	return NULL;
}

/* Takes the records of a pax extended header ("LEN key=value\n" ...) that
   say the next member's name, size and mtime. */
static const char *parse_pax(struct extract *x, const char *p, size_t n)
{
	while (n > 0) {
		size_t len = 0, i = 0;
		while (i < n && p[i] >= '0' && p[i] <= '9' && len <= n)
			len = len * 10 + (size_t)(p[i++] - '0');
		if (i == 0 || i >= n || p[i] != ' ' || len <= i + 1 || len > n || p[len - 1] != '\n')
			return "a malformed pax record";
		const char *key = p + i + 1, *end = p + len - 1;
		const char *eq = memchr(key, '=', (size_t)(end - key));
		if (eq == NULL)
			return "a pax record with no '='";
		const char *value = eq + 1;
		size_t klen = (size_t)(eq - key), vlen = (size_t)(end - value);
		if (klen == 4 && memcmp(key, "path", 4) == 0) {
			if (vlen > CGT_ARCHIVE_NAME_MAX)
				return "a pax path too long";
			memcpy(x->next_name, value, vlen);
			x->next_name[vlen] = '\0';
			x->has_next_name = 1;
		} else if (klen == 4 && memcmp(key, "size", 4) == 0) {
			uint64_t v = 0;
			if (vlen == 0 || vlen > 19)
				return "a pax size out of range";
			for (size_t k = 0; k < vlen; k++) {
				if (value[k] < '0' || value[k] > '9')
					return "a pax size that is not a number";
				v = v * 10 + (uint64_t)(value[k] - '0');
			}
			x->next_size = v;
			x->has_next_size = 1;
		} else if (klen == 5 && memcmp(key, "mtime", 5) == 0) {
			/* seconds, maybe signed, maybe with a fraction */
			char num[32];
			snprintf(num, sizeof(num), "%.*s", (int)(vlen < 31 ? vlen : 31), value);
			char *stop;
			errno = 0;
			long long v = strtoll(num, &stop, 10);
			if (stop != num && errno == 0) {
				x->next_mtime = v;
				x->has_next_mtime = 1;
			}
		}
		p += len;
		n -= len;
	}
	return NULL;
}

/* Opens (making it) the directory part of name under x->dirfd, a
   component at a time and never through a symlink; *base is the rest. */
static int open_parent(struct extract *x, char *name, char **base)
{
	int fd = fcntl(x->dirfd, F_DUPFD_CLOEXEC, 0);
	char *p = name;
	for (char *slash; fd >= 0 && (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		*slash = '\0';
		int next = -1;
		if (mkdirat(fd, p, 0755) == 0 || errno == EEXIST)
			next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;
		*slash = '/';
		close(fd);
		fd = next;
		errno = err;
	}
	*base = p;
	return fd;
}

/* Whether errno says something about this member's place (a file where a
   directory should be ...), rather than about the disk. */
static int member_conflict(int err)
{
	return err == ENOTDIR || err == ELOOP || err == EISDIR || err == EEXIST ||
	       err == ENAMETOOLONG || err == ENOTEMPTY;
}

/* Extracts a regular member's data: 0 (extracted or skipped), 1 where the
   stream stopped, negative on an I/O error. */
static int extract_member(struct extract *x, char *name, uint64_t size, int64_t mtime,
			  struct cgt_error *e)
{
	char *base, temp[64];
	int parent = open_parent(x, name, &base), out = -1;
	if (parent < 0) {
		if (!member_conflict(errno))
			return cgt_fail(e, cgt_err_io, "%s: cannot make the directories of %s: %s",
					x->path, name, strerror(errno));
		skip_member(x, name, strerror(errno));
		int rc = skip_data(x, name, size, e);
		if (rc == 0)
			skip_padding(x, size);
		return rc;
	}
	for (unsigned i = 0; out < 0 && i < 100; i++) {
		snprintf(temp, sizeof(temp), ".cgtrace-part.%d.%u", (int)getpid(), i);
		out = openat(parent, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (out < 0 && errno != EEXIST)
			break;
	}
	if (out < 0) {
		int rc = cgt_fail(e, cgt_err_io, "%s: cannot create a file for member %s: %s",
				  x->path, name, strerror(errno));
		close(parent);
		return rc;
	}
	int rc = 0;
	for (uint64_t done = 0; done < size && rc == 0;) {
		size_t want = size - done < CHUNK ? (size_t)(size - done) : CHUNK;
		size_t got = unzstd_read(&x->z, x->chunk, want);
		if (cgt_write_all(out, x->chunk, got) < 0)
			rc = cgt_fail(e, cgt_err_io, "%s: writing member %s: %s", x->path, name,
				      strerror(errno));
		done += got;
		if (rc == 0 && got < want)
			rc = stopped_inside(x, name, done, size, e);
	}
	struct timespec times[2] = { { mtime, 0 }, { mtime, 0 } };
	if (rc == 0)
		futimens(out, times);
	if (close(out) < 0 && rc == 0)
		rc = cgt_fail(e, cgt_err_io, "%s: writing member %s: %s", x->path, name,
			      strerror(errno));
	if (rc == 0 && renameat(parent, temp, parent, base) < 0) {
		if (member_conflict(errno))
			skip_member(x, name, strerror(errno));
		else
			rc = cgt_fail(e, cgt_err_io, "%s: cannot put member %s in place: %s",
				      x->path, name, strerror(errno));
	} else if (rc == 0) {
		x->members++;
	}
	unlinkat(parent, temp, 0);	/* renamed, or not whole */
	close(parent);
	if (rc == 0) {
		snprintf(x->last, sizeof(x->last), "%s", name);
		skip_padding(x, size);
	}
	return rc;
}

/* Reads the content of a pax or GNU long-name header (size bytes). */
static int read_extension(struct extract *x, char type, uint64_t size, struct cgt_error *e)
{
	const char *name = type == 'L' ? "(a GNU long-name header)" : "(a pax header)";
	uint64_t cap = type == 'L' ? CGT_ARCHIVE_NAME_MAX + 1 : PAX_MAX;
	if (size > cap) {
		x->next_problem = type == 'L' ? "its GNU long name is too long"
					      : "its pax header is longer than 64 KiB";
		int rc = skip_data(x, name, size, e);
		skip_padding(x, size);
		return rc;
	}
	size_t got = unzstd_read(&x->z, x->chunk, (size_t)size);
	if (got < size)
		return stopped_inside(x, name, got, size, e);
	skip_padding(x, size);
	if (type == 'g')
		return 0;	/* global: nothing we use */
	if (type == 'L') {
		size_t len = strnlen((const char *)x->chunk, got);
		memcpy(x->next_name, x->chunk, len);
		x->next_name[len] = '\0';
		x->has_next_name = 1;
		return 0;
	}
	const char *why = parse_pax(x, (const char *)x->chunk, got);
	if (why != NULL)
		x->next_problem = why;
	return 0;
}

static const char *type_name(uint8_t type)
{
	switch (type) {
	case '1': return "a hard link";
	case '2': return "a symbolic link";
	case '3': return "a character device";
	case '4': return "a block device";
	case '5': return "a directory";
	case '6': return "a FIFO";
	case '7': return "a contiguous file";
	default: return "of an unknown type";
	}
}

/* After the end-of-archive blocks: the rest of the stream (a tar writer's
   padding) is read, so that the end of the zstd frame and its checksum of
   the members' bytes are checked. */
static int finish_stream(struct extract *x, struct cgt_error *e)
{
	while (unzstd_read(&x->z, x->chunk, CHUNK) == CHUNK)
		;
	unsigned long long at = compressed_pos(&x->z);
	switch (x->z.state) {
	case STREAM_END:
		return 0;
	case STREAM_IO:
		return cgt_fail(e, cgt_err_io, "%s: %s", x->path, x->z.why);
	case STREAM_DAMAGED:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: damaged at byte offset %llu (compressed), after the end-of-archive"
			 " blocks: zstd: %s; the members may be damaged", x->path, at, x->z.why);
		return 1;
	default:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed), after the end-of-archive"
			 " blocks: the zstd frame's end and checksum are missing", x->path, at);
		return 1;
	}
}

/* Reads the archive member by member; returns as cgt_archive_extract. */
static int extract_all(struct extract *x, struct cgt_error *e)
{
	uint8_t h[BLOCK];
	char name[CGT_ARCHIVE_NAME_MAX + 1], norm[CGT_ARCHIVE_NAME_MAX + 1];
	for (unsigned headers = 0;; headers++) {
		x->header_pos = x->z.tar_pos;
		size_t got = unzstd_read(&x->z, h, BLOCK);
		if (got < BLOCK && headers == 0 && x->z.state == STREAM_END)
			return cgt_fail(e, cgt_err_not_trace,
					"%s: not a cgtrace archive: its zstd data is %zu bytes, less"
					" than a tar header (512 bytes, ustar)", x->path, got);
		if (got < BLOCK)
			return stopped_between(x, e);
		int zero = 1;
		for (size_t i = 0; i < BLOCK && zero; i++)
			zero = h[i] == 0;
		if (zero)
			return finish_stream(x, e);
		const char *why = header_problem(h);
		if (why != NULL && headers == 0)
			return cgt_fail(e, cgt_err_not_trace,
					"%s: not a cgtrace archive: the zstd data does not begin with"
					" a tar (ustar) header: %s", x->path, why);
		if (why != NULL) {
			char where[CGT_ARCHIVE_NAME_MAX + 32];
			cgt_fail(e, cgt_err_corrupt,
				 "%s: damaged at byte %llu of the tar stream (about byte offset %llu"
				 " compressed) %s: expected a tar header, found one with %s", x->path,
				 (unsigned long long)x->header_pos,
				 (unsigned long long)compressed_pos(&x->z), place(x, where, sizeof(where)),
				 why);
			return 1;
		}
		uint64_t size, mtime_field;
		if (parse_number(h + H_SIZE, 12, &size) < 0 || parse_number(h + H_MTIME, 12, &mtime_field) < 0) {
			cgt_fail(e, cgt_err_corrupt,
				 "%s: damaged at byte %llu of the tar stream: a tar header whose size or"
				 " mtime is not a number", x->path, (unsigned long long)x->header_pos);
			return 1;
		}
		uint8_t type = h[H_TYPE];
		int rc;
		if (type == 'x' || type == 'g' || type == 'L') {
			if ((rc = read_extension(x, (char)type, size, e)) != 0)
				return rc;
			continue;
		}
		if (x->has_next_size)
			size = x->next_size;
		int64_t mtime = x->has_next_mtime ? x->next_mtime
						  : (int64_t)(mtime_field < OCTAL_LIMIT ? mtime_field : 0);
		if (x->has_next_name) {
			snprintf(name, sizeof(name), "%s", x->next_name);
		} else {
			size_t plen = strnlen((const char *)h + H_PREFIX, 155);
			size_t nlen = strnlen((const char *)h + H_NAME, 100);
			snprintf(name, sizeof(name), "%.*s%s%.*s", (int)plen, (const char *)h + H_PREFIX,
				 plen > 0 ? "/" : "", (int)nlen, (const char *)h + H_NAME);
		}
		const char *problem = x->next_problem;
		x->has_next_name = x->has_next_size = x->has_next_mtime = 0;
		x->next_problem = NULL;
		if (problem == NULL && type != '0' && type != '\0')
			problem = type_name(type);
		if (problem == NULL)
			problem = name_problem(name, strlen(name), norm);
		if (problem != NULL) {
			skip_member(x, name, problem);
			if ((rc = skip_data(x, name, size, e)) != 0)
				return rc;
			skip_padding(x, size);
			continue;
		}
		if (x->dirfd < 0) {
			/* only checking: the member is read through */
			if ((rc = skip_data(x, norm, size, e)) != 0)
				return rc;
			skip_padding(x, size);
			x->members++;
			snprintf(x->last, sizeof(x->last), "%s", norm);
		} else if ((rc = extract_member(x, norm, size, mtime, e)) != 0) {
			return rc;
		}
	}
}

int cgt_archive_extract(const char *path, const char *dir, struct cgt_error *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(errno));
	uint8_t magic[4];
	ssize_t n = pread(fd, magic, sizeof(magic), 0);
	if (n < 0) {
		int rc = cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	if (n < (ssize_t)sizeof(magic) || memcmp(magic, zstd_magic, sizeof(magic)) != 0) {
		close(fd);
		return cgt_fail(e, cgt_err_not_trace,
				"%s: not a cgtrace archive: %s, expected a zstd frame (bytes 28 b5 2f fd)"
				" at byte offset 0", path, n == 0 ? "it is empty" : "no zstd magic");
	}
	if (dir != NULL && mkdir(dir, 0755) < 0 && errno != EEXIST) {
		int rc = cgt_fail(e, cgt_err_io, "cannot create %s: %s", dir, strerror(errno));
		close(fd);
		return rc;
	}
	struct extract *x = calloc(1, sizeof(*x));
	if (x == NULL) {
		close(fd);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	x->path = path;
	x->z.fd = fd;
	x->z.hint = 1;	/* no frame ended yet */
	x->z.dctx = ZSTD_createDCtx();
	x->z.in_cap = ZSTD_DStreamInSize();
	x->z.out_cap = ZSTD_DStreamOutSize();
	x->z.in = malloc(x->z.in_cap);
	x->z.out = malloc(x->z.out_cap);
	x->dirfd = dir != NULL ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int rc;
	if (dir != NULL && x->dirfd < 0)
		rc = cgt_fail(e, cgt_err_io, "%s: %s", dir, strerror(errno));
	else if (x->z.dctx == NULL || x->z.in == NULL || x->z.out == NULL)
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	else {
		ZSTD_DCtx_setParameter(x->z.dctx, ZSTD_d_windowLogMax, WINDOW_LOG_MAX);
		rc = extract_all(x, e);
	}
	if (rc >= 0 && x->skipped > 0) {
		/* the first skipped member is said too, after any damage */
		char more[64] = "";
		if (x->skipped > 1)
			snprintf(more, sizeof(more), " (and %u more skipped)", x->skipped - 1);
		if (rc == 1 && e != NULL) {
			size_t len = strlen(e->msg);
			snprintf(e->msg + len, sizeof(e->msg) - len, "; also %s%s", x->first_skip, more);
		} else {
			cgt_fail(e, cgt_err_corrupt, "%s: %s%s", path, x->first_skip, more);
		}
		rc = 1;
	}
	if (x->dirfd >= 0)
		close(x->dirfd);
	ZSTD_freeDCtx(x->z.dctx);
	free(x->z.in);
	free(x->z.out);
	free(x);
	close(fd);
	return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void cgt_archive_unpacked_free(char *dir)
{
	/* Regular files and directories only: extraction makes nothing else. */
	if (dir != NULL) {
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		cgt_temporary_unregister(dir);
	}
	free(dir);
}

int cgt_archive_unpack(const char *path, const char *scratch_dir, char **dir, struct cgt_error *e)
{
	*dir = NULL;
	char *made;
	if (asprintf(&made, "%s/cgtrace-archive.XXXXXX", scratch_dir) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	if (mkdtemp(made) == NULL) {
		int rc = cgt_fail(e, cgt_err_io, "cannot unpack %s: cannot create a directory in %s: %s",
				  path, scratch_dir, strerror(errno));
		free(made);
		return rc;
	}
	cgt_temporary_register(made);	/* with its members */
	int rc = cgt_archive_extract(path, made, e);
	if (rc < 0)
		cgt_archive_unpacked_free(made);
	else
		*dir = made;
	return rc;
}
