/*
 * Archives (trace.h): a zstd-compressed POSIX ustar stream of regular
 * files, so that tar --zstd lists and extracts it as well as we do.
 *
 * The writer streams each file through the compressor a piece at a time
 * and remembers the names it stored (never one twice); a member begins a
 * new zstd frame once the frame holds FRAME_BYTES, so that a member can
 * be read without decompressing all that comes before it.
 *
 * The reader takes the decompressed stream 512 bytes at a time and each
 * member's data a piece at a time, so memory stays bounded whatever a
 * header claims: a size of 2^60 is never allocated.  Opening an archive
 * reads it through once and notes, per member it holds whole, its name's
 * hash, its size and where its headers are (the frame they are in, their
 * place in the tar stream): a few words each, whatever the names.  A
 * member is unpacked when asked for, by decompressing from its frame's
 * start (or reading on, when the stream is on the way to it already),
 * reading its headers again and checking its name.  What an archive may
 * hold is limited (cgt_archive_limits), so that the scan ends early on a
 * zstd bomb and what is unpacked never passes the limit.  A recording's
 * archive may be all that is left of its modules, so the reader keeps
 * every member it could read whole and says where it stopped.
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
/* A member's headers begin a new zstd frame once the frame holds this
   much: the reader unpacks a member by decompressing from the start of
   its frame, so it decompresses at most this much that it does not
   need; frames twice the window of COMPRESSION_LEVEL (2 MiB) lose little
   of the compression of one frame. */
#define FRAME_BYTES (4u << 20)

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
	uint64_t frame_bytes;		/* put into the current zstd frame */
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
		if (mode == ZSTD_e_end && left == 0) {
			w->frame_bytes = 0;
			return 0;
		}
		if (mode != ZSTD_e_end && in.pos == in.size) {
			w->frame_bytes += n;
			return 0;
		}
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
	int rc = w->frame_bytes >= FRAME_BYTES ? put(w, NULL, 0, ZSTD_e_end, e) : 0;
	if (rc == 0)
		rc = put_headers(w, member_name, size, (int64_t)st.st_mtim.tv_sec, e);
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

/* Where a zstd frame begins, so where decompression can start again. */
struct restart {
	uint64_t file_pos;	/* in the file */
	uint64_t tar_pos;	/* in the decompressed (tar) stream */
};

/* The archive's decompressed stream. */
struct unzstd {
	int fd;
	ZSTD_DCtx *dctx;
	uint8_t *in, *out;
	size_t in_cap, in_len, in_pos, out_cap, out_len, out_pos;
	uint64_t file_pos;	/* the file's offset after the bytes in `in` */
	uint64_t tar_pos;	/* decompressed bytes taken */
	struct restart out_frame;	/* the frame the bytes in `out` are from */
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

/* Where the frame of the next byte to be taken begins. */
static struct restart next_frame(const struct unzstd *z)
{
	if (z->out_pos == z->out_len && z->hint == 0)
		return (struct restart){ compressed_pos(z), z->tar_pos };	/* a new frame */
	return z->out_frame;
}

/* Decompresses from r on, as if the stream began there: 0, or -1 with
   errno if the file cannot be sought. */
static int unzstd_restart(struct unzstd *z, struct restart r)
{
	if (lseek(z->fd, (off_t)r.file_pos, SEEK_SET) < 0)
		return -1;
	ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
	z->in_len = z->in_pos = z->out_len = z->out_pos = 0;
	z->file_pos = r.file_pos;
	z->tar_pos = r.tar_pos;
	z->out_frame = r;
	z->hint = 1;	/* inside a frame: the file ending here is a truncation */
	z->out_full = 0;
	z->state = STREAM_OK;
	z->why = NULL;
	return 0;
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
			z->tar_pos += k;
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
		if (z->hint == 0)
			z->out_frame = next_frame(z);
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
	return got;
}

/* A regular member the archive holds whole: where to read it again. */
struct entry {
	uint64_t name_hash;
	uint64_t size;
	uint64_t header_pos;	/* its first header (a pax or GNU long-name
				   header, if it has one) in the tar stream */
	struct restart frame;	/* of that header */
};

/* A member's headers, with what pax and GNU long-name headers say. */
struct member {
	char name[CGT_ARCHIVE_NAME_MAX + 1];	/* made plain, unless problem */
	uint64_t size;
	int64_t mtime;
	const char *problem;	/* why it is not unpacked; NULL: it can be */
	int end;		/* the end-of-archive blocks, not a member */
};

struct cgt_archive {
	char *path;		/* the archive, for messages */
	char *scratch_dir;	/* where dir is made; NULL: not to be unpacked */
	char *dir;		/* where members are unpacked; NULL until the first */
	int dirfd;
	struct cgt_archive_limits limits;
	struct unzstd z;
	struct entry *entries;	/* by name hash, then header_pos */
	size_t n_entries, cap_entries;
	/* from a pax or GNU long-name header, for the next member */
	char next_name[CGT_ARCHIVE_NAME_MAX + 1];
	int has_next_name, has_next_size, has_next_mtime;
	uint64_t next_size;
	int64_t next_mtime;
	const char *next_problem;	/* why the next member cannot be unpacked */
	uint64_t header_pos;		/* of the header being read, in the tar stream */
	uint64_t members;		/* read so far, of any type */
	char last[CGT_ARCHIVE_NAME_MAX + 1];	/* the last member held whole */
	unsigned skipped;
	char first_skip[CGT_ARCHIVE_NAME_MAX + 256];
	struct member m;		/* the member being read */
	uint8_t chunk[CHUNK];
};

/* "after member NAME" or "before the first member", for messages. */
static const char *place(const struct cgt_archive *a, char *buf, size_t cap)
{
	if (a->last[0] == '\0')
		snprintf(buf, cap, "before the first member");
	else
		snprintf(buf, cap, "after member %s", a->last);
	return buf;
}

/* The stream stopped where a header (or the end) was expected: 1 if the
   archive is truncated or damaged there, negative on a read error. */
static int stopped_between(struct cgt_archive *a, struct cgt_error *e)
{
	char where[CGT_ARCHIVE_NAME_MAX + 32];
	place(a, where, sizeof(where));
	unsigned long long at = compressed_pos(&a->z);
	switch (a->z.state) {
	case STREAM_IO:
		return cgt_fail(e, cgt_err_io, "%s: %s", a->path, a->z.why);
	case STREAM_DAMAGED:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: damaged at byte offset %llu (compressed) %s: zstd: %s", a->path, at,
			 where, a->z.why);
		return 1;
	case STREAM_END:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed) %s: expected a tar header"
			 " or the end-of-archive blocks", a->path, at, where);
		return 1;
	default:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed) %s: the zstd frame is not"
			 " complete", a->path, at, where);
		return 1;
	}
}

/* The stream stopped inside a member's data (got of size bytes). */
static int stopped_inside(struct cgt_archive *a, const char *name, uint64_t got, uint64_t size,
			  struct cgt_error *e)
{
	unsigned long long at = compressed_pos(&a->z);
	switch (a->z.state) {
	case STREAM_IO:
		return cgt_fail(e, cgt_err_io, "%s: %s", a->path, a->z.why);
	case STREAM_DAMAGED:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: damaged at byte offset %llu (compressed) in member %s (%llu of %llu"
			 " bytes read): zstd: %s", a->path, at, name, (unsigned long long)got,
			 (unsigned long long)size, a->z.why);
		return 1;
	default:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed) in member %s (%llu of %llu"
			 " bytes)", a->path, at, name, (unsigned long long)got,
			 (unsigned long long)size);
		return 1;
	}
}

/* Whether size bytes of data from here take the tar stream past the
   limit: 1 with e saying so, else 0.  Every header's data is asked
   about, so that no stream is read much past the limit. */
static int past_limit(struct cgt_archive *a, const char *name, uint64_t size, struct cgt_error *e)
{
	uint64_t max = a->limits.max_bytes;
	if (a->z.tar_pos <= max && size <= max - a->z.tar_pos)
		return 0;
	cgt_fail(e, cgt_err_corrupt,
		 "%s: member %s (%llu bytes, at byte %llu of the tar stream) goes past the limit of"
		 " %llu bytes an archive may hold; it and the rest are not used", a->path, name,
		 (unsigned long long)size, (unsigned long long)a->z.tar_pos,
		 (unsigned long long)max);
	return 1;
}

/* A member not held: noted, and the archive read on. */
static void skip_member(struct cgt_archive *a, const char *name, const char *why)
{
	if (a->skipped++ == 0)
		snprintf(a->first_skip, sizeof(a->first_skip),
			 "member '%s' (header at byte %llu of the tar stream) not extracted: %s",
			 name, (unsigned long long)a->header_pos, why);
}

/* Reads and drops n bytes: 0, or where the stream stopped. */
static int skip_data(struct cgt_archive *a, const char *name, uint64_t n, struct cgt_error *e)
{
	for (uint64_t done = 0; done < n;) {
		size_t want = n - done < CHUNK ? (size_t)(n - done) : CHUNK;
		size_t got = unzstd_read(&a->z, a->chunk, want);
		done += got;
		if (got < want)
			return stopped_inside(a, name, done, n, e);
	}
	return 0;
}

/* The zeros after a member's data, to the next 512-byte boundary.  The
   stream stopping here loses nothing: the next header's read says so. */
static void skip_padding(struct cgt_archive *a, uint64_t size)
{
	uint8_t zeros[BLOCK];	/* not a->chunk: it may hold a header's records */
	unzstd_read(&a->z, zeros, (size_t)((BLOCK - size % BLOCK) % BLOCK));
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
static const char *parse_pax(struct cgt_archive *a, const char *p, size_t n)
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
			memcpy(a->next_name, value, vlen);
			a->next_name[vlen] = '\0';
			a->has_next_name = 1;
		} else if (klen == 4 && memcmp(key, "size", 4) == 0) {
			uint64_t v = 0;
			if (vlen == 0 || vlen > 19)
				return "a pax size out of range";
			for (size_t k = 0; k < vlen; k++) {
				if (value[k] < '0' || value[k] > '9')
					return "a pax size that is not a number";
				v = v * 10 + (uint64_t)(value[k] - '0');
			}
			a->next_size = v;
			a->has_next_size = 1;
		} else if (klen == 5 && memcmp(key, "mtime", 5) == 0) {
			/* seconds, maybe signed, maybe with a fraction */
			char num[32];
			snprintf(num, sizeof(num), "%.*s", (int)(vlen < 31 ? vlen : 31), value);
			char *stop;
			errno = 0;
			long long v = strtoll(num, &stop, 10);
			if (stop != num && errno == 0) {
				a->next_mtime = v;
				a->has_next_mtime = 1;
			}
		}
		p += len;
		n -= len;
	}
	return NULL;
}

/* Reads the content of a pax or GNU long-name header (size bytes). */
static int read_extension(struct cgt_archive *a, char type, uint64_t size, struct cgt_error *e)
{
	const char *name = type == 'L' ? "(a GNU long-name header)" : "(a pax header)";
	uint64_t cap = type == 'L' ? CGT_ARCHIVE_NAME_MAX + 1 : PAX_MAX;
	int rc = past_limit(a, name, size, e);
	if (rc != 0)
		return rc;
	if (size > cap) {
		a->next_problem = type == 'L' ? "its GNU long name is too long"
					      : "its pax header is longer than 64 KiB";
		rc = skip_data(a, name, size, e);
		skip_padding(a, size);
		return rc;
	}
	size_t got = unzstd_read(&a->z, a->chunk, (size_t)size);
	if (got < size)
		return stopped_inside(a, name, got, size, e);
	skip_padding(a, size);
	if (type == 'g')
		return 0;	/* global: nothing we use */
	if (type == 'L') {
		size_t len = strnlen((const char *)a->chunk, got);
		memcpy(a->next_name, a->chunk, len);
		a->next_name[len] = '\0';
		a->has_next_name = 1;
		return 0;
	}
	const char *why = parse_pax(a, (const char *)a->chunk, got);
	if (why != NULL)
		a->next_problem = why;
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

/* Reads the headers of the next member into a->m, up to its data (or the
   end-of-archive blocks: a->m.end).  0; 1 where the archive is damaged or
   stops, negative if it is no archive (at its first header) or cannot be
   read. */
static int read_headers(struct cgt_archive *a, struct cgt_error *e)
{
	struct member *m = &a->m;
	uint8_t h[BLOCK];
	char raw[CGT_ARCHIVE_NAME_MAX + 1];
	a->has_next_name = a->has_next_size = a->has_next_mtime = 0;
	a->next_problem = NULL;
	for (;;) {
		a->header_pos = a->z.tar_pos;
		size_t got = unzstd_read(&a->z, h, BLOCK);
		if (got < BLOCK && a->header_pos == 0 && a->z.state == STREAM_END)
			return cgt_fail(e, cgt_err_not_trace,
					"%s: not a cgtrace archive: its zstd data is %zu bytes, less"
					" than a tar header (512 bytes, ustar)", a->path, got);
		if (got < BLOCK)
			return stopped_between(a, e);
		int zero = 1;
		for (size_t i = 0; i < BLOCK && zero; i++)
			zero = h[i] == 0;
		m->end = zero;
		if (zero)
			return 0;
		const char *why = header_problem(h);
		if (why != NULL && a->header_pos == 0)
			return cgt_fail(e, cgt_err_not_trace,
					"%s: not a cgtrace archive: the zstd data does not begin with"
					" a tar (ustar) header: %s", a->path, why);
		if (why != NULL) {
			char where[CGT_ARCHIVE_NAME_MAX + 32];
			cgt_fail(e, cgt_err_corrupt,
				 "%s: damaged at byte %llu of the tar stream (about byte offset %llu"
				 " compressed) %s: expected a tar header, found one with %s", a->path,
				 (unsigned long long)a->header_pos,
				 (unsigned long long)compressed_pos(&a->z), place(a, where, sizeof(where)),
				 why);
			return 1;
		}
		uint64_t size, mtime_field;
		if (parse_number(h + H_SIZE, 12, &size) < 0 || parse_number(h + H_MTIME, 12, &mtime_field) < 0) {
			cgt_fail(e, cgt_err_corrupt,
				 "%s: damaged at byte %llu of the tar stream: a tar header whose size or"
				 " mtime is not a number", a->path, (unsigned long long)a->header_pos);
			return 1;
		}
		uint8_t type = h[H_TYPE];
		if (type == 'x' || type == 'g' || type == 'L') {
			int rc = read_extension(a, (char)type, size, e);
			if (rc != 0)
				return rc;
			continue;
		}
		m->size = a->has_next_size ? a->next_size : size;
		m->mtime = a->has_next_mtime ? a->next_mtime
					     : (int64_t)(mtime_field < OCTAL_LIMIT ? mtime_field : 0);
		if (a->has_next_name) {
			snprintf(raw, sizeof(raw), "%s", a->next_name);
		} else {
			size_t plen = strnlen((const char *)h + H_PREFIX, 155);
			size_t nlen = strnlen((const char *)h + H_NAME, 100);
			snprintf(raw, sizeof(raw), "%.*s%s%.*s", (int)plen, (const char *)h + H_PREFIX,
				 plen > 0 ? "/" : "", (int)nlen, (const char *)h + H_NAME);
		}
		m->problem = a->next_problem;
		if (m->problem == NULL && type != '0' && type != '\0')
			m->problem = type_name(type);
		if (m->problem == NULL)
			m->problem = name_problem(raw, strlen(raw), m->name);
		if (m->problem != NULL)
			memcpy(m->name, raw, sizeof(raw));
		return 0;
	}
}

/* After the end-of-archive blocks: the rest of the stream (a tar writer's
   padding) is read, so that the end of the zstd frame and its checksum of
   the members' bytes are checked. */
static int finish_stream(struct cgt_archive *a, struct cgt_error *e)
{
	while (a->z.tar_pos <= a->limits.max_bytes &&
	       unzstd_read(&a->z, a->chunk, CHUNK) == CHUNK)
		;
	unsigned long long at = compressed_pos(&a->z);
	switch (a->z.state) {
	case STREAM_END:
		return 0;
	case STREAM_IO:
		return cgt_fail(e, cgt_err_io, "%s: %s", a->path, a->z.why);
	case STREAM_DAMAGED:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: damaged at byte offset %llu (compressed), after the end-of-archive"
			 " blocks: zstd: %s; the members may be damaged", a->path, at, a->z.why);
		return 1;
	case STREAM_OK:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: more than the limit of %llu bytes an archive may hold, after the"
			 " end-of-archive blocks", a->path,
			 (unsigned long long)a->limits.max_bytes);
		return 1;
	default:
		cgt_fail(e, cgt_err_corrupt,
			 "%s: truncated at byte offset %llu (compressed), after the end-of-archive"
			 " blocks: the zstd frame's end and checksum are missing", a->path, at);
		return 1;
	}
}

/* Notes where the member in a->m is, read whole. */
static int add_entry(struct cgt_archive *a, uint64_t header_pos, struct restart frame,
		     struct cgt_error *e)
{
	if (a->n_entries == a->cap_entries &&
	    cgt_array_grow(&a->entries, &a->cap_entries, a->n_entries, 1, sizeof(*a->entries)) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	a->entries[a->n_entries++] =
		(struct entry){ name_hash(a->m.name), a->m.size, header_pos, frame };
	return 0;
}

static int by_hash_then_place(const void *x, const void *y)
{
	const struct entry *p = x, *q = y;
	if (p->name_hash != q->name_hash)
		return p->name_hash < q->name_hash ? -1 : 1;
	return (p->header_pos > q->header_pos) - (p->header_pos < q->header_pos);
}

/* Reads the archive through, member by member, noting where each one it
   holds whole is; returns as cgt_archive_open. */
static int scan(struct cgt_archive *a, struct cgt_error *e)
{
	struct member *m = &a->m;
	for (;;) {
		struct restart frame = next_frame(&a->z);
		uint64_t header_pos = a->z.tar_pos;
		int rc = read_headers(a, e);
		if (rc != 0)
			return rc;
		if (m->end)
			return finish_stream(a, e);
		if (a->members == a->limits.max_members) {
			cgt_fail(e, cgt_err_corrupt,
				 "%s: member %s (header at byte %llu of the tar stream) goes past the"
				 " limit of %lu members an archive may hold; it and the rest are not"
				 " used", a->path, m->name, (unsigned long long)a->header_pos,
				 (unsigned long)a->limits.max_members);
			return 1;
		}
		a->members++;
		if ((rc = past_limit(a, m->name, m->size, e)) != 0 ||
		    (rc = skip_data(a, m->name, m->size, e)) != 0)
			return rc;
		skip_padding(a, m->size);
		if (m->problem != NULL) {
			skip_member(a, m->name, m->problem);
			continue;
		}
		if ((rc = add_entry(a, header_pos, frame, e)) < 0)
			return rc;
		snprintf(a->last, sizeof(a->last), "%s", m->name);
	}
}

int cgt_archive_open(struct cgt_archive **ap, const char *path, const char *scratch_dir,
		     const struct cgt_archive_limits *limits, struct cgt_error *e)
{
	*ap = NULL;
	/* (O_NONBLOCK: a FIFO would wait here for a writer; it is refused
	   below, since members are read again where the scan found them) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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
	struct cgt_archive *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		close(fd);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	a->dirfd = -1;
	a->z.fd = fd;
	a->z.hint = 1;	/* no frame ended yet */
	a->z.dctx = ZSTD_createDCtx();
	a->z.in_cap = ZSTD_DStreamInSize();
	a->z.out_cap = ZSTD_DStreamOutSize();
	a->z.in = malloc(a->z.in_cap);
	a->z.out = malloc(a->z.out_cap);
	a->path = strdup(path);
	a->scratch_dir = scratch_dir != NULL ? strdup(scratch_dir) : NULL;
	if (limits != NULL)
		a->limits = *limits;
	if (a->limits.max_bytes == 0)
		a->limits.max_bytes = CGT_ARCHIVE_MAX_BYTES;
	if (a->limits.max_members == 0)
		a->limits.max_members = CGT_ARCHIVE_MAX_MEMBERS;
	int rc;
	if (a->z.dctx == NULL || a->z.in == NULL || a->z.out == NULL || a->path == NULL ||
	    (scratch_dir != NULL && a->scratch_dir == NULL)) {
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	} else {
		ZSTD_DCtx_setParameter(a->z.dctx, ZSTD_d_windowLogMax, WINDOW_LOG_MAX);
		rc = scan(a, e);
		/* looked up by binary search: no more memory than the entries
		   (none: no array, which qsort may not be given) */
		if (a->n_entries > 1)
			qsort(a->entries, a->n_entries, sizeof(*a->entries), by_hash_then_place);
	}
	if (rc >= 0 && a->skipped > 0) {
		/* the first skipped member is said too, after any damage */
		char more[64] = "";
		if (a->skipped > 1)
			snprintf(more, sizeof(more), " (and %u more skipped)", a->skipped - 1);
		if (rc == 1 && e != NULL) {
			size_t len = strlen(e->msg);
			snprintf(e->msg + len, sizeof(e->msg) - len, "; also %s%s", a->first_skip, more);
		} else {
			cgt_fail(e, cgt_err_corrupt, "%s: %s%s", path, a->first_skip, more);
		}
		rc = 1;
	}
	if (rc < 0)
		cgt_archive_close(a);
	else
		*ap = a;
	return rc;
}

/* Opens (making it) the directory part of name under a->dirfd, a
   component at a time and never through a symlink; *base is the rest. */
static int open_parent(struct cgt_archive *a, char *name, char **base)
{
	int fd = fcntl(a->dirfd, F_DUPFD_CLOEXEC, 0);
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

/* Makes the directory members are unpacked into, the first time. */
static int make_dir(struct cgt_archive *a, const char *name, struct cgt_error *e)
{
	if (a->dir != NULL)
		return 0;
	if (a->scratch_dir == NULL)
		return cgt_fail(e, cgt_err_invalid, "%s: cannot unpack member %s: opened only to be"
				" read through", a->path, name);
	char *made;
	if (asprintf(&made, "%s/cgtrace-archive.XXXXXX", a->scratch_dir) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	sigset_t was;
	cgt_temporaries_hold(&was);
	if (mkdtemp(made) == NULL) {
		cgt_temporaries_release(&was);
		int rc = cgt_fail(e, cgt_err_io, "cannot unpack member %s of %s: cannot create a"
				  " directory in %s: %s", name, a->path, a->scratch_dir, strerror(errno));
		free(made);
		return rc;
	}
	cgt_temporary_register(made);	/* with its members */
	cgt_temporaries_release(&was);
	a->dirfd = open(made, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->dirfd < 0) {
		int rc = cgt_fail(e, cgt_err_io, "%s: %s", made, strerror(errno));
		rmdir(made);
		cgt_temporary_unregister(made);
		free(made);
		return rc;
	}
	a->dir = made;
	return 0;
}

/* Writes the data of the member in a->m (read up to its data) as
   a->m.name under a->dir: under a temporary name, renamed into place when
   whole.  0, or an error. */
static int write_member(struct cgt_archive *a, struct cgt_error *e)
{
	struct member *m = &a->m;
	char *base, temp[64];
	int parent = open_parent(a, m->name, &base), out = -1;
	if (parent < 0)
		return cgt_fail(e, cgt_err_io, "%s: cannot unpack member %s: cannot make its"
				" directories: %s", a->path, m->name, strerror(errno));
	for (unsigned i = 0; out < 0 && i < 100; i++) {
		snprintf(temp, sizeof(temp), ".cgtrace-part.%d.%u", (int)getpid(), i);
		out = openat(parent, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (out < 0 && errno != EEXIST)
			break;
	}
	if (out < 0) {
		int rc = cgt_fail(e, cgt_err_io, "%s: cannot create a file for member %s: %s",
				  a->path, m->name, strerror(errno));
		close(parent);
		return rc;
	}
	int rc = 0;
	for (uint64_t done = 0; done < m->size && rc == 0;) {
		size_t want = m->size - done < CHUNK ? (size_t)(m->size - done) : CHUNK;
		size_t got = unzstd_read(&a->z, a->chunk, want);
		if (cgt_write_all(out, a->chunk, got) < 0)
			rc = cgt_fail(e, cgt_err_io, "%s: unpacking member %s: %s", a->path, m->name,
				      strerror(errno));
		done += got;
		if (rc == 0 && got < want) {
			/* the scan read it whole: the file has changed since */
			int stopped = stopped_inside(a, m->name, done, m->size, e);
			rc = stopped > 0 ? -cgt_err_corrupt : stopped;
		}
	}
	struct timespec times[2] = { { m->mtime, 0 }, { m->mtime, 0 } };
	if (rc == 0)
		futimens(out, times);
	if (close(out) < 0 && rc == 0)
		rc = cgt_fail(e, cgt_err_io, "%s: unpacking member %s: %s", a->path, m->name,
			      strerror(errno));
	if (rc == 0 && renameat(parent, temp, parent, base) < 0)
		rc = cgt_fail(e, cgt_err_io, "%s: cannot put member %s in place: %s", a->path,
			      m->name, strerror(errno));
	unlinkat(parent, temp, 0);	/* renamed, or not whole */
	close(parent);
	return rc;
}

/* Unpacks the member of entry en if it is name: 1 unpacked, 0 another
   member (whose name has the same hash), negative on an error. */
static int unpack_entry(struct cgt_archive *a, const struct entry *en, const char *name,
			struct cgt_error *e)
{
	/* On the way to it already, within its frame: read on from here. */
	int read_on = a->z.state == STREAM_OK && en->frame.tar_pos <= a->z.tar_pos &&
		      a->z.tar_pos <= en->header_pos;
	if (!read_on && unzstd_restart(&a->z, en->frame) < 0)
		return cgt_fail(e, cgt_err_io, "%s: %s", a->path, strerror(errno));
	struct cgt_error why;
	int rc = skip_data(a, name, en->header_pos - a->z.tar_pos, &why);
	if (rc == 0)
		rc = read_headers(a, &why);
	int same = rc == 0 && !a->m.end && a->m.problem == NULL && a->m.size == en->size &&
		   name_hash(a->m.name) == en->name_hash;
	if (same && strcmp(a->m.name, name) != 0)
		return 0;	/* another name of the same hash */
	if (rc == 0 && !same)
		snprintf(why.msg, sizeof(why.msg), "other headers there");
	if (!same)
		return cgt_fail(e, cgt_err_corrupt, "%s: cannot unpack member %s: the archive is no"
				" longer what it was when opened (%s)", a->path, name, why.msg);
	if ((rc = make_dir(a, name, e)) < 0 || (rc = write_member(a, e)) < 0)
		return rc;
	return 1;
}

int cgt_archive_unpack_member(struct cgt_archive *a, const char *name, char **path,
			      struct cgt_error *e)
{
	char norm[CGT_ARCHIVE_NAME_MAX + 1];
	size_t len = strlen(name);
	struct stat st;
	*path = NULL;
	if (len > CGT_ARCHIVE_NAME_MAX || name_problem(name, len, norm) != NULL)
		return 0;	/* no member has that name */
	/* Unpacked already (only whole members are ever there). */
	int there = a->dirfd >= 0 && fstatat(a->dirfd, norm, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode);
	int rc = there;
	uint64_t hash = name_hash(norm);
	/* past the entries of that hash: the newest of them comes before */
	size_t lo = 0, hi = a->n_entries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->entries[mid].name_hash <= hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; !there && i > 0 && a->entries[i - 1].name_hash == hash && rc == 0; i--)
		rc = unpack_entry(a, &a->entries[i - 1], norm, e);
	if (rc == 1 && asprintf(path, "%s/%s", a->dir, norm) < 0) {
		*path = NULL;
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
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

void cgt_archive_close(struct cgt_archive *a)
{
	if (a == NULL)
		return;
	/* Regular files and directories only: unpacking makes nothing else. */
	if (a->dir != NULL) {
		nftw(a->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		cgt_temporary_unregister(a->dir);
	}
	if (a->dirfd >= 0)
		close(a->dirfd);
	close(a->z.fd);
	ZSTD_freeDCtx(a->z.dctx);
	free(a->z.in);
	free(a->z.out);
	free(a->entries);
	free(a->path);
	free(a->scratch_dir);
	free(a->dir);
	free(a);
}
