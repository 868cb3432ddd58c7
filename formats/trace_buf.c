/* Growable byte buffer for the payload encoders. */
#include "trace.h"

#include <stdlib.h>

uint8_t *cgt_buf_grow(struct cgt_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;

	while (cap < b->len + n)
		cap *= 2;
	uint8_t *d = realloc(b->data, cap);
	if (d == NULL)
		return NULL;
	b->data = d;
	b->cap = cap;
	return b->data + b->len;
}

void cgt_buf_free(struct cgt_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
