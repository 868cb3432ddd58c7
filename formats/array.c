/* The one growth rule for every growable array. */
#include "trace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Where an array starts: a few elements, as most arrays stay short (a
   symbol's other names, a file's names); doubling soon catches up with
   the long ones. */
#define FIRST_BYTES 64

int cgt_array_grow(void *array, size_t *cap, size_t len, size_t n, size_t size)
{
	if (n > SIZE_MAX - len)
		return -1;
	size_t need = len + n;
	size_t c = *cap ? *cap : (size < FIRST_BYTES ? FIRST_BYTES / size : 1);
	while (c < need)
		c = c > SIZE_MAX / 2 ? need : 2 * c;
	if (c > SIZE_MAX / size)
		return -1;
	/* The caller's pointer is read and written as bytes: it may point to
	   any type. */
	void *data;
	memcpy(&data, array, sizeof(data));
	data = realloc(data, c * size);
	if (data == NULL)
		return -1;
	memcpy(array, &data, sizeof(data));
	*cap = c;
	return 0;
}

uint8_t *cgt_buf_grow(struct cgt_buf *b, size_t n)
{
	return cgt_array_grow(&b->data, &b->cap, b->len, n, 1) < 0 ? NULL : b->data + b->len;
}

void cgt_buf_free(struct cgt_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
