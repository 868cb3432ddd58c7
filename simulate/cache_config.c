/*
 * Cache configurations: Cachegrind's syntax, checks, descriptions and
 * default-selection rules (cg_arch.c), applied to the recording host's
 * caches from the trace header.
 */
#include <stdio.h>
#include <string.h>

#include "sim.h"

/* Cachegrind's minimum line size: below it one instruction could touch
   three lines. */
#define MIN_LINE_SIZE 16

static int is_power_of_two(uint32_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

const char *cgt_cache_check(const struct cgt_cache_config *c)
{
	/* The zero checks come first (newest Cachegrind; 3.19 divides by
	   zero), then 3.19's checks in its order. */
	if (c->line == 0)
		return "Cache line size is zero.";
	if (c->assoc == 0)
		return "Cache associativity is zero.";
	int64_t set_bytes = (int64_t)c->line * c->assoc;
	if ((int64_t)c->size % set_bytes != 0 ||
	    !is_power_of_two((uint32_t)(c->size / c->line / c->assoc)))
		return "Cache set count is not a power of two.";
	if (!is_power_of_two((uint32_t)c->line))
		return "Cache line size is not a power of two.";
	if (c->line < MIN_LINE_SIZE)
		return "Cache line size is too small.";
	if (c->size <= c->line)
		return "Cache size <= line size.";
	if (c->assoc > c->size / c->line)
		return "Cache associativity > (size / line size).";
	return NULL;
}

/* Cachegrind's VG_(strtoll10): optional blanks and sign, then decimal
   digits; *end is left at the first character not used.  Plus our
   extension: a k/K (KiB) or M (MiB) suffix. */
static int64_t parse_number(const char *s, const char **end)
{
	const char *start = s;
	uint64_t n = 0;
	int neg = 0, digits = 0;

	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	for (; *s >= '0' && *s <= '9'; s++, digits++)
		n = n * 10 + (uint64_t)(*s - '0');
	if (digits == 0) {
		*end = start;
		return 0;
	}
	if (*s == 'k' || *s == 'K') {
		n *= 1024;
		s++;
	} else if (*s == 'M') {
		n *= 1024 * 1024;
		s++;
	}
	*end = s;
	return neg ? -(int64_t)n : (int64_t)n;
}

int cgt_cache_parse(const char *text, struct cgt_cache_config *c)
{
	int64_t v[3];
	const char *p = text, *end;

	for (int i = 0; i < 3; i++) {
		v[i] = parse_number(p, &end);
		if (*end != (i < 2 ? ',' : '\0'))
			return CGT_CACHE_BAD_ARGUMENT;
		p = end + 1;
	}
	c->size = (int32_t)v[0];
	c->assoc = (int32_t)v[1];
	c->line = (int32_t)v[2];
	if (c->size != v[0] || c->assoc != v[1] || c->line != v[2])
		return CGT_CACHE_OVERFLOW;
	return cgt_cache_check(c) ? CGT_CACHE_INVALID : CGT_CACHE_OK;
}

void cgt_cache_describe(const struct cgt_cache_config *c, char *buf, size_t n)
{
	if (c->assoc == 1)
		snprintf(buf, n, "%d B, %d B, direct-mapped", c->size, c->line);
	else
		snprintf(buf, n, "%d B, %d B, %d-way associative", c->size, c->line, c->assoc);
}

static void add_warning(char (*list)[160], unsigned *n, unsigned cap, const char *text)
{
	if (*n < cap)
		snprintf(list[(*n)++], sizeof(list[0]), "%s", text);
}

static void warn(struct cgt_cache_defaults *d, const char *text)
{
	add_warning(d->warnings, &d->n_warnings, sizeof(d->warnings) / sizeof(d->warnings[0]), text);
}

/* maybe_tweak_LLc, for the level `name` (LL or L2): a set count that is
   not a power of two is rounded down to one, the associativity scaled up
   to keep the size. */
static void adjust_set_count(struct cgt_cache_config *c, const char *name, char (*warnings)[160],
			     unsigned *n_warnings, unsigned cap)
{
	uint32_t size = (uint32_t)c->size, assoc = (uint32_t)c->assoc, line = (uint32_t)c->line;

	if (size == 0 || assoc == 0 || line == 0)
		return;
	uint32_t sets = size / (assoc * line);
	if (sets == 0)
		return;
	uint32_t new_assoc = assoc, new_size;
	if (is_power_of_two(sets)) {
		new_size = line * assoc * sets;
	} else {
		uint32_t new_sets = 1u << (31 - __builtin_clz(sets));
		new_assoc = (uint32_t)(0.5 + ((double)sets / (double)new_sets) * (double)assoc);
		new_size = line * new_assoc * new_sets;
	}
	if (new_size == size && new_assoc == assoc)
		return;
	char a[CGT_COUNT_TEXT], b[CGT_COUNT_TEXT], msg[160];
	snprintf(msg, sizeof(msg), "warning: specified %s cache: line_size %u  assoc %u  total_size %s",
		 name, line, assoc, cgt_format_count(size, a));
	add_warning(warnings, n_warnings, cap, msg);
	snprintf(msg, sizeof(msg), "warning: simulated %s cache: line_size %u  assoc %u  total_size %s",
		 name, line, new_assoc, cgt_format_count(new_size, b));
	add_warning(warnings, n_warnings, cap, msg);
	c->size = (int32_t)new_size;
	c->assoc = (int32_t)new_assoc;
}

static const struct cgt_cache_geom *find(const struct cgt_trace_header *h, uint32_t type,
					 uint32_t level)
{
	for (uint32_t i = 0; i < h->n_caches; i++)
		if (h->caches[i].type == type && h->caches[i].level == level)
			return &h->caches[i];
	return NULL;
}

static struct cgt_cache_config config_of(const struct cgt_cache_geom *g)
{
	struct cgt_cache_config c = { (int32_t)g->size, (int32_t)g->assoc, (int32_t)g->line };
	return c;
}

void cgt_cache_defaults(const struct cgt_trace_header *h, int ll_given, struct cgt_cache_defaults *d)
{
	uint32_t levels = 0;

	memset(d, 0, sizeof(*d));
	for (uint32_t i = 0; i < h->n_caches; i++)
		if (h->caches[i].level > levels)
			levels = h->caches[i].level;
	const struct cgt_cache_geom *i1 = find(h, CGT_CACHE_INSN, 1);
	const struct cgt_cache_geom *d1 = find(h, CGT_CACHE_DATA, 1);
	const struct cgt_cache_geom *ll = find(h, CGT_CACHE_UNIFIED, levels);

	if (!ll_given && h->n_caches > 0 && ll == NULL)
		warn(d, "warning: L2 cache not installed, ignore LL results.");
	if (!ll_given && ll != NULL && levels > 2) {
		char msg[96];
		snprintf(msg, sizeof(msg),
			 "warning: L%u cache found, using its data for the LL simulation.", levels);
		warn(d, msg);
	}
	const struct cgt_cache_geom *l2 = levels > 2 ? find(h, CGT_CACHE_UNIFIED, 2) : NULL;
	if (i1 && d1 && ll) {
		d->I1 = config_of(i1);
		d->D1 = config_of(d1);
		d->LL = config_of(ll);
		if (l2 != NULL)
			d->L2 = config_of(l2);
	} else {
		d->I1 = (struct cgt_cache_config){ 65536, 2, 64 };
		d->D1 = (struct cgt_cache_config){ 65536, 2, 64 };
		d->LL = (struct cgt_cache_config){ 262144, 8, 64 };
		warn(d, "Warning: Cannot auto-detect cache config, using defaults.");
	}
	if (!ll_given)
		adjust_set_count(&d->LL, "LL", d->warnings, &d->n_warnings,
				 sizeof(d->warnings) / sizeof(d->warnings[0]));
	adjust_set_count(&d->L2, "L2", d->l2_warnings, &d->n_l2_warnings,
			 sizeof(d->l2_warnings) / sizeof(d->l2_warnings[0]));
}
