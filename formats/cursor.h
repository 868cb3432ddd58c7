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

static inline int cursor_u8(struct cursor *c, uint8_t *v, const char *what)
{
	if (c->p >= c->end)
		return cursor_fail(c, what);
	*v = *c->p++;
	return 0;
}

/* A length-prefixed string, copied and NUL-terminated. */
static inline int cursor_string(struct cursor *c, char **s, const char *what)
{
	uint64_t len;
	const uint8_t *at = c->p;

	if (cgt_get_varint(&c->p, c->end, &len) < 0 || len > (uint64_t)(c->end - c->p)) {
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

/* A keyed field (HEADER, PT_CONFIG): its key, and a cursor over its body;
   c moves past it. */
static inline int cursor_field(struct cursor *c, uint64_t *key, struct cursor *body)
{
	uint64_t len;
	int rc = cursor_varint(c, key, "a field key");
	if (rc == 0)
		rc = cursor_bounded(c, &len, (uint64_t)(c->end - c->p), "a field length");
	if (rc < 0)
		return rc;
	*body = *c;
	body->end = c->p + len;
	c->p += len;
	return 0;
}

#endif
