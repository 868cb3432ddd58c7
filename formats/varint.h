/*
 * LEB128 variable-length integers, as used throughout the trace format, and
 * its fixed-size u32 (TRACE-FORMAT.md, "Encodings").  Header-only because both the recorder's
 * encoder and the decoder's hot loop use them.
 */
#ifndef CGTRACE_VARINT_H
#define CGTRACE_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* Longest encoding of a 64-bit value. */
#define CGT_VARINT_MAX 10

/* The format's u32: four bytes, little-endian. */
static inline uint32_t cgt_get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void cgt_put_u32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint8_t *cgt_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t cgt_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t cgt_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *cgt_put_svarint(uint8_t *p, int64_t v)
{
	return cgt_put_varint(p, cgt_zigzag(v));
}

/*
 * Reads a varint from [*pp, end).  Returns 0 and advances *pp, or -1 if
 * the encoding runs past end or is longer than 10 bytes.
 */
static inline int cgt_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;

	if (p < end && *p < 0x80) {	/* the common one-byte case */
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	while (p < end && shift < 64) {
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*out = v;
			*pp = p;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

/* A varint whose every byte is known to be readable (checked by the
   caller): no bounds check per byte. */
static inline uint64_t cgt_fast_uvarint(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;
	if (v >= 0x80) {
		v &= 0x7f;
		for (unsigned shift = 7;; shift += 7) {
			uint8_t b = *p++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (b < 0x80 || shift >= 63)
				break;
		}
	}
	*pp = p;
	return v;
}

static inline int cgt_get_svarint(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
	uint64_t v;

	if (cgt_get_varint(pp, end, &v) < 0)
		return -1;
	*out = cgt_unzigzag(v);
	return 0;
}

#endif
