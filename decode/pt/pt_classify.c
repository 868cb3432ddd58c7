/*
 * The classification cache (pt_classify.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pt_classify.h"

#define CHUNK 4096

static struct x86_insn *new_insn(struct pt_classifier *c)
{
	if (c->n % CHUNK == 0) {
		if (c->n_chunks == c->cap_chunks &&
		    cgt_array_grow(&c->chunks, &c->cap_chunks, c->n_chunks, 1,
				   sizeof(*c->chunks)) < 0)
			return NULL;
		if ((c->chunks[c->n_chunks] = malloc(CHUNK * sizeof(struct x86_insn))) == NULL)
			return NULL;
		c->n_chunks++;
	}
	return &c->chunks[c->n / CHUNK][c->n % CHUNK];
}

const struct x86_insn *pt_classified(const struct pt_classifier *c, uint64_t ip)
{
	return cgt_map_get(&c->by_ip, ip);
}

const struct x86_insn *pt_classify(struct pt_classifier *c, uint64_t ip, const uint8_t *bytes,
				   size_t avail, uint8_t len)
{
	struct x86_insn *in = cgt_map_get(&c->by_ip, ip);
	if (in != NULL)
		return in;
	if ((in = new_insn(c)) == NULL || cgt_map_put(&c->by_ip, ip, in) < 0)
		return NULL;
	c->n++;
	if (x86_insn_decode(bytes, avail, ip, in) < 0 || (len != 0 && in->len != len)) {
		memset(in, 0, sizeof(*in));
		in->len = len;
	}
	return in;
}

void pt_classifier_free(struct pt_classifier *c)
{
	for (size_t i = 0; i < c->n_chunks; i++)
		free(c->chunks[i]);
	free(c->chunks);
	cgt_map_free(&c->by_ip);
	memset(c, 0, sizeof(*c));
}
