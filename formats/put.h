/*
 * Appending to a record payload: the writing side of cursor.h.  Each
 * returns 0 or -cgt_err_nomem.  Internal to formats/.
 */
#ifndef CGTRACE_PUT_H
#define CGTRACE_PUT_H

#include <string.h>

#include "trace.h"
#include "varint.h"

static inline int put_varint(struct cgt_buf *b, uint64_t v)
{
	uint8_t *p = cgt_buf_reserve(b, CGT_VARINT_MAX);
	if (p == NULL)
		return -cgt_err_nomem;
	b->len = (size_t)(cgt_put_varint(p, v) - b->data);
	return 0;
}

static inline int put_bytes(struct cgt_buf *b, const void *data, size_t n)
{
	uint8_t *p = cgt_buf_reserve(b, CGT_VARINT_MAX + n);
	if (p == NULL)
		return -cgt_err_nomem;
	p = cgt_put_varint(p, n);
	memcpy(p, data, n);
	b->len = (size_t)(p - b->data) + n;
	return 0;
}

/* n bytes with no length before them: a record's last member. */
static inline int put_raw(struct cgt_buf *b, const void *data, size_t n)
{
	if (n == 0)
		return 0;	/* data may be NULL: memcpy must not see it */
	uint8_t *p = cgt_buf_reserve(b, n);
	if (p == NULL)
		return -cgt_err_nomem;
	memcpy(p, data, n);
	b->len += n;
	return 0;
}

static inline int put_string(struct cgt_buf *b, const char *s)
{
	return put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

/* A header field: key, then its body as a length-prefixed byte string. */
static inline int put_field(struct cgt_buf *b, unsigned key, const struct cgt_buf *body)
{
	int rc = put_varint(b, key);
	return rc < 0 ? rc : put_bytes(b, body->data ? body->data : (const uint8_t *)"", body->len);
}

static inline int put_string_field(struct cgt_buf *b, unsigned key, const char *s)
{
	int rc = put_varint(b, key);
	return rc < 0 ? rc : put_string(b, s);
}

static inline int put_varints_field(struct cgt_buf *b, unsigned key, const uint64_t *v, unsigned n)
{
	struct cgt_buf body = { 0 };
	int rc = 0;

	for (unsigned i = 0; i < n && rc == 0; i++)
		rc = put_varint(&body, v[i]);
	if (rc == 0)
		rc = put_field(b, key, &body);
	cgt_buf_free(&body);
	return rc;
}

#endif
