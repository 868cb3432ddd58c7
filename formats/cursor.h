/*
 * Bounds-checked reading of a record payload.  Every failure produces a
 * message naming the file, the byte offset in the decompressed stream, the
 * frame's offset in the file, the record and what was expected.
 * Internal to formats/.
 */
#ifndef CGTRACE_CURSOR_H
#define CGTRACE_CURSOR_H

#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "varint.h"

struct cursor {
	const uint8_t *start, *p, *end;
	const struct cgt_record *rec;
	struct cgt_error *e;
};

static inline void cursor_init(struct cursor *c, const struct cgt_record *rec, struct cgt_error *e)
{
	c->start = c->p = rec->payload;
	c->end = rec->payload + rec->len;
	c->rec = rec;
	c->e = e;
}

/* Always -cgt_err_corrupt; written out so the compiler sees callers fail. */
static inline int cursor_fail(const struct cursor *c, const char *expected)
{
	cgt_fail(c->e, cgt_err_corrupt,
			"%s: stream offset %llu (frame at byte offset %llu): %s record: expected %s",
			c->rec->path,
			(unsigned long long)(c->rec->stream_offset + (uint64_t)(c->p - c->start)),
			(unsigned long long)c->rec->frame_offset, cgt_record_type_name(c->rec->type),
			expected);
	return -cgt_err_corrupt;
}

static inline int cursor_varint(struct cursor *c, uint64_t *v, const char *what)
{
	return cgt_get_varint(&c->p, c->end, v) < 0 ? cursor_fail(c, what) : 0;
}

static inline int cursor_svarint(struct cursor *c, int64_t *v, const char *what)
{
	return cgt_get_svarint(&c->p, c->end, v) < 0 ? cursor_fail(c, what) : 0;
}

/* A varint that must not exceed max. */
static inline int cursor_bounded(struct cursor *c, uint64_t *v, uint64_t max, const char *what)
{
	const uint8_t *at = c->p;
	if (cgt_get_varint(&c->p, c->end, v) < 0 || *v > max) {
		c->p = at;
		return cursor_fail(c, what);
	}
	return 0;
}

static inline int cursor_u32(struct cursor *c, uint32_t *v, const char *what)
{
	uint64_t x;
	int rc = cursor_bounded(c, &x, UINT32_MAX, what);
	if (rc == 0)
		*v = (uint32_t)x;
	return rc;
}

/* Four bytes, little-endian (TRACE-FORMAT.md's u32). */
static inline int cursor_u32le(struct cursor *c, uint32_t *v, const char *what)
{
	if (c->end - c->p < 4)
		return cursor_fail(c, what);
	*v = cgt_get_u32le(c->p);
	c->p += 4;
	return 0;
}

static inline int cursor_u8(struct cursor *c, uint8_t *v, const char *what)
{
	if (c->p >= c->end)
		return cursor_fail(c, what);
	*v = *c->p++;
	return 0;
}

/* A length-prefixed string of at most max bytes, copied and
   NUL-terminated. */
static inline int cursor_string(struct cursor *c, char **s, uint64_t max, const char *what)
{
	uint64_t len;
	const uint8_t *at = c->p;

	if (cgt_get_varint(&c->p, c->end, &len) < 0 || len > (uint64_t)(c->end - c->p) ||
	    len > max) {
		c->p = at;
		return cursor_fail(c, what);
	}
	*s = malloc(len + 1);
	if (*s == NULL)
		return cgt_fail(c->e, cgt_err_nomem, "out of memory");
	memcpy(*s, c->p, len);
	(*s)[len] = '\0';
	c->p += len;
	return 0;
}

static inline int cursor_done(const struct cursor *c)
{
	return c->p >= c->end;
}

/* The rest of c as a NUL-terminated copy in *s (replacing what it held):
   a string field's body is the string itself. */
static inline int cursor_rest_string(struct cursor *c, char **s)
{
	size_t len = (size_t)(c->end - c->p);

	free(*s);
	*s = malloc(len + 1);
	if (*s == NULL)
		return cgt_fail(c->e, cgt_err_nomem, "out of memory");
	memcpy(*s, c->p, len);
	(*s)[len] = '\0';
	c->p = c->end;
	return 0;
}

/* A payload of keyed fields (HEADER, PT_CONFIG), each `varint:key
   varint:length body`: field(obj, key, body) decodes each body, which it
   must consume whole (unknown keys: skip it). */
static inline int cursor_fields(struct cursor *c, void *obj,
				int (*field)(void *obj, unsigned key, struct cursor *body))
{
	int rc = 0;

	while (!cursor_done(c) && rc == 0) {
		uint64_t key, len;
		const uint8_t *at;
		rc = cursor_varint(c, &key, "a field key");
		at = c->p;
		if (rc == 0)
			rc = cursor_varint(c, &len, "a field length");
		/* The body must fit in what follows the length itself. */
		if (rc == 0 && len > (uint64_t)(c->end - c->p)) {
			c->p = at;
			rc = cursor_fail(c, "a field length within the record");
		}
		if (rc < 0)
			break;
		struct cursor body = *c;
		body.end = c->p + len;
		c->p += len;
		rc = field(obj, (unsigned)key, &body);
		if (rc == 0 && !cursor_done(&body))
			rc = cursor_fail(&body, "the end of the field");
	}
	return rc;
}

#endif
