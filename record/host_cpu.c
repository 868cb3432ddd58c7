/*
 * The recording host's CPU identity and cache geometry, from CPUID.
 *
 * Caches come from the deterministic cache leaves: leaf 4 on Intel and
 * leaf 0x8000001D on AMD (with topology extensions).  These report the
 * true associativity; Valgrind reads AMD's legacy leaf 0x80000006 instead,
 * whose "see leaf 0x8000001D" code it takes for direct-mapped.
 */
#include "record.h"

#include <cpuid.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static void read_deterministic_leaf(unsigned leaf, struct cgt_trace_header *h)
{
	for (unsigned sub = 0; sub < 16 && h->n_caches < CGT_MAX_CACHES; sub++) {
		unsigned r[4];
		cpuid(leaf, sub, r);
		unsigned type = r[0] & 0x1f;
		if (type == 0)
			break;
		if (type > 3)
			continue;
		struct cgt_cache_geom *g = &h->caches[h->n_caches++];
		g->level = (r[0] >> 5) & 7;
		g->type = type == 1 ? CGT_CACHE_DATA : type == 2 ? CGT_CACHE_INSN : CGT_CACHE_UNIFIED;
		g->line = (r[1] & 0xfff) + 1;
		unsigned partitions = ((r[1] >> 12) & 0x3ff) + 1;
		unsigned sets = r[2] + 1;
		g->assoc = ((r[1] >> 22) & 0x3ff) + 1;
		g->size = (uint64_t)g->assoc * partitions * g->line * sets;
	}
}

/* AMD's legacy leaves, for CPUs without topology extensions. */
static void read_amd_legacy(struct cgt_trace_header *h)
{
	static const unsigned ways[16] = { 0, 1, 2, 0, 4, 0, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0 };
	unsigned r[4];

	cpuid(0x80000005, 0, r);
	struct cgt_cache_geom d1 = { 1, CGT_CACHE_DATA, (uint64_t)(r[2] >> 24) << 10,
				     (r[2] >> 16) & 0xff, r[2] & 0xff };
	struct cgt_cache_geom i1 = { 1, CGT_CACHE_INSN, (uint64_t)(r[3] >> 24) << 10,
				     (r[3] >> 16) & 0xff, r[3] & 0xff };
	cpuid(0x80000006, 0, r);
	struct cgt_cache_geom l2 = { 2, CGT_CACHE_UNIFIED, (uint64_t)(r[2] >> 16) << 10,
				     ways[(r[2] >> 12) & 0xf], r[2] & 0xff };
	struct cgt_cache_geom l3 = { 3, CGT_CACHE_UNIFIED, (uint64_t)(r[3] >> 18) << 19,
				     ways[(r[3] >> 12) & 0xf], r[3] & 0xff };
	const struct cgt_cache_geom *all[] = { &d1, &i1, &l2, &l3 };
	for (unsigned i = 0; i < 4; i++)
		if (all[i]->size > 0 && all[i]->line > 0 && all[i]->assoc > 0)
			h->caches[h->n_caches++] = *all[i];
}

void cgt_host_describe(struct cgt_trace_header *h)
{
	unsigned r[4], max_leaf, max_ext;
	char vendor[13], brand[49];

	cpuid(0, 0, r);
	max_leaf = r[0];
	memcpy(vendor, &r[1], 4);
	memcpy(vendor + 4, &r[3], 4);
	memcpy(vendor + 8, &r[2], 4);
	vendor[12] = '\0';
	h->cpu_vendor = strdup(vendor);

	cpuid(1, 0, r);
	unsigned family = (r[0] >> 8) & 0xf, model = (r[0] >> 4) & 0xf;
	if (family == 0xf)
		family += (r[0] >> 20) & 0xff;
	if (family >= 6)
		model |= ((r[0] >> 16) & 0xf) << 4;
	h->cpu_family = family;
	h->cpu_model = model;
	h->cpu_stepping = r[0] & 0xf;

	cpuid(0x80000000, 0, r);
	max_ext = r[0];
	brand[0] = '\0';
	if (max_ext >= 0x80000004) {
		for (unsigned i = 0; i < 3; i++) {
			cpuid(0x80000002 + i, 0, r);
			memcpy(brand + 16 * i, r, 16);
		}
		brand[48] = '\0';
	}
	char *b = brand;
	while (*b == ' ')
		b++;
	h->cpu_name = strdup(b);

	h->n_caches = 0;
	if (strcmp(vendor, "GenuineIntel") == 0 && max_leaf >= 4) {
		read_deterministic_leaf(4, h);
	} else if (strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0) {
		unsigned ext1[4] = { 0 };
		if (max_ext >= 0x80000001)
			cpuid(0x80000001, 0, ext1);
		if (max_ext >= 0x8000001D && (ext1[2] & (1u << 22)))
			read_deterministic_leaf(0x8000001D, h);
		else if (max_ext >= 0x80000006)
			read_amd_legacy(h);
	} else if (max_leaf >= 4) {
		read_deterministic_leaf(4, h);
	}
	long page = sysconf(_SC_PAGESIZE);
	h->page_size = page > 0 ? (uint32_t)page : 4096;
}
