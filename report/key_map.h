/* Internal to report/: a hash map from 64-bit keys to non-NULL values. */
#ifndef CGTRACE_KEY_MAP_H
#define CGTRACE_KEY_MAP_H

#include <stddef.h>
#include <stdint.h>

struct key_map_slot {
	uint64_t key;
	void *value;	/* NULL: free slot */
};

struct key_map {
	struct key_map_slot *slots;
	size_t cap, n;
};

void *key_map_get(const struct key_map *m, uint64_t key);
/* Adds or replaces; 0, or -1 if out of memory. */
int key_map_put(struct key_map *m, uint64_t key, void *value);
void key_map_free(struct key_map *m);

/* Iterating: for (size_t i = 0; i < m.cap; i++) if (m.slots[i].value) ... */

#endif
