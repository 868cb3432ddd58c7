/* Interned strings: one copy of each, compared by pointer. */
#include <stdlib.h>
#include <string.h>

#include "symbols.h"

static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return (size_t)h;
}

const char *string_set_intern(struct string_set *set, const char *s)
{
	if (2 * (set->n + 1) > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 1024;
		char **slots = calloc(cap, sizeof(*slots));
		if (slots == NULL)
			return NULL;
		for (size_t i = 0; i < set->cap; i++) {
			if (set->slots[i] == NULL)
				continue;
			size_t j = hash(set->slots[i]) & (cap - 1);
			while (slots[j] != NULL)
				j = (j + 1) & (cap - 1);
			slots[j] = set->slots[i];
		}
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	size_t j = hash(s) & (set->cap - 1);
	for (; set->slots[j] != NULL; j = (j + 1) & (set->cap - 1))
		if (strcmp(set->slots[j], s) == 0)
			return set->slots[j];
	set->slots[j] = strdup(s);
	if (set->slots[j] != NULL)
		set->n++;
	return set->slots[j];
}

void string_set_free(struct string_set *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
	memset(set, 0, sizeof(*set));
}
