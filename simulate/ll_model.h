/*
 * The last-level cache: the same cache as cache_model.h (Cachegrind's LRU,
 * bit-selection sets, the block number as tag, tags starting at block 0),
 * laid out for a cache whose state is always known -- LL is simulated only
 * in order -- so that a look-up takes no branch on where the line is.
 *
 * A set is 16 lanes: 32-bit tags (the block number without the set's bits:
 * one host cache line) and, beside them, ages (0: most recently used, the
 * order cache_model.h keeps by moving ways).  SSE2 compares the tags of all
 * lanes at once; a look-up then ages the lanes younger than the one used by
 * one, in a vector add.  Lanes from assoc up never match and never age.
 *
 * Set s starts with assoc copies of block 0, which only set 0 can hold:
 * elsewhere they are NO_TAG, a tag no block has.  In set 0 they start in
 * lane order, youngest first, and keep that order (they age together; a
 * look-up takes the first), so the first lane holding block 0 is the
 * youngest, the one cache_model.h finds.
 *
 * A cache of more than 16 ways, or a block whose tag does not fit 32 bits
 * (an address from 2^(32 + set bits + line bits) up), is simulated by
 * cache_model.h instead; the state carries over exactly ("wide").
 *
 * Internal to simulate/.
 */
#ifndef CGTRACE_LL_MODEL_H
#define CGTRACE_LL_MODEL_H

#include <emmintrin.h>
#include <stdint.h>

#include "cache_model.h"

#define LL_LANES 16
#define LL_NO_TAG UINT32_MAX

struct ll_model {
	uint32_t *tags;		/* [sets][LL_LANES], 64-byte aligned */
	uint8_t *ages;		/* [sets][LL_LANES] */
	uint64_t sets_mask;
	uint32_t set_bits, line_bits, assoc;
	int wide;		/* simulated by `model` instead */
	struct cache_model model;
};

/* As cache_model_init.  0, or -1 if out of memory. */
int ll_model_init(struct ll_model *c, uint32_t size, uint32_t assoc, uint32_t line);
void ll_model_free(struct ll_model *c);

/* A reference the lanes cannot take (ll_ref_is_miss): out of line. */
int ll_ref_is_miss_wide(struct ll_model *c, uint64_t addr, uint32_t size);

/* Looks block up in its set and makes it the most recently used: 1 if it
   missed. */
static inline __attribute__((always_inline)) int ll_set_ref_is_miss(struct ll_model *c,
								    uint64_t block)
{
	const uint64_t set = block & c->sets_mask;
	uint32_t *tags = c->tags + set * LL_LANES;
	uint8_t *ages = c->ages + set * LL_LANES;
	const uint32_t tag = (uint32_t)(block >> c->set_bits);
	const __m128i t = _mm_set1_epi32((int)tag);
	const __m128i *lanes = (const __m128i *)tags;

	__m128i eq01 = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(lanes), t),
				       _mm_cmpeq_epi32(_mm_load_si128(lanes + 1), t));
	__m128i eq23 = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(lanes + 2), t),
				       _mm_cmpeq_epi32(_mm_load_si128(lanes + 3), t));
	unsigned found = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(eq01, eq23));
	__m128i age = _mm_load_si128((const __m128i *)ages);
	unsigned lane;

	if (__builtin_expect(found != 0, 1)) {
		lane = (unsigned)__builtin_ctz(found);
	} else {
		/* the least recently used lane takes it */
		__m128i oldest = _mm_cmpeq_epi8(age, _mm_set1_epi8((char)(c->assoc - 1)));
		lane = (unsigned)__builtin_ctz((unsigned)_mm_movemask_epi8(oldest));
		tags[lane] = tag;
	}
	/* lanes younger than the one used age by one; it becomes the youngest */
	__m128i younger = _mm_cmplt_epi8(age, _mm_set1_epi8((char)ages[lane]));
	_mm_store_si128((__m128i *)ages, _mm_sub_epi8(age, younger));
	ages[lane] = 0;
	return found == 0;
}

/* One reference of size bytes (1-255, at most one line) at addr, as
   cache_ref_is_miss: 1 if a line of it missed. */
static inline __attribute__((always_inline)) int ll_ref_is_miss(struct ll_model *c, uint64_t addr,
								uint32_t size)
{
	uint64_t block1 = addr >> c->line_bits;
	uint64_t block2 = (addr + size - 1) >> c->line_bits;

	if (__builtin_expect(c->wide || block2 >> c->set_bits >= LL_NO_TAG, 0))
		return ll_ref_is_miss_wide(c, addr, size);
	if (block1 == block2)
		return ll_set_ref_is_miss(c, block1);
	/* Straddling: both lines are looked up, for their LRU updates. */
	int miss1 = ll_set_ref_is_miss(c, block1);
	int miss2 = ll_set_ref_is_miss(c, block2);
	return miss1 | miss2;
}

/* Asks the host to bring in the set of addr's line. */
static inline void ll_prefetch_set(const struct ll_model *c, uint64_t addr)
{
	if (c->wide)
		return;	/* no sets of its own: tags and ages are NULL */
	uint64_t set = (addr >> c->line_bits) & c->sets_mask;
	__builtin_prefetch(c->tags + set * LL_LANES);
	__builtin_prefetch(c->ages + set * LL_LANES);
}

#endif
