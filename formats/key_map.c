/* A hash map from 64-bit keys -- interned names, line numbers,
   addresses -- to non-NULL values: open addressing, at most half full. */
#include <stdlib.h>

#include "trace.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	key *= 0x9E3779B97F4A7C15ull;
	return (size_t)(key ^ (key >> 29)) & (cap - 1);
}

void *cgt_map_get(const struct cgt_map *m, uint64_t key)
{
	if (m->cap == 0)
		return NULL;
	for (size_t j = slot_of(key, m->cap);; j = (j + 1) & (m->cap - 1)) {
		if (m->slots[j].value == NULL)
			return NULL;
		if (m->slots[j].key == key)
			return m->slots[j].value;
	}
}

int cgt_map_put(struct cgt_map *m, uint64_t key, void *value)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct cgt_map_slot *slots = calloc(cap, sizeof(*slots));
		if (slots == NULL)
			return -1;
		for (size_t i = 0; i < m->cap; i++) {
			if (m->slots[i].value == NULL)
				continue;
			size_t j = slot_of(m->slots[i].key, cap);
			while (slots[j].value != NULL)
				j = (j + 1) & (cap - 1);
			slots[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = slots;
		m->cap = cap;
	}
	size_t j = slot_of(key, m->cap);
	while (m->slots[j].value != NULL && m->slots[j].key != key)
		j = (j + 1) & (m->cap - 1);
	if (m->slots[j].value == NULL)
		m->n++;
	m->slots[j].key = key;
	m->slots[j].value = value;
	return 0;
}

void cgt_map_free(struct cgt_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
