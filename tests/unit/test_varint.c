/* LEB128 encoding: round trips, boundaries, and rejection of bad input. */
#include <string.h>

#include "check.h"
#include "varint.h"

static void round_trips(void)
{
	static const uint64_t values[] = { 0, 1, 127, 128, 255, 300, 16383, 16384, 1ull << 32,
					   UINT64_MAX - 1, UINT64_MAX };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint8_t buf[CGT_VARINT_MAX];
		uint8_t *end = cgt_put_varint(buf, values[i]);
		const uint8_t *p = buf;
		uint64_t v = 0;
		CHECK(cgt_get_varint(&p, end, &v) == 0);
		CHECK_EQ(v, values[i]);
		CHECK(p == end);
	}
}

/* Round trips pass for any self-consistent code; these encodings are
   LEB128's by hand (low 7 bits first, the high bit says more follow). */
static void known_encodings(void)
{
	static const struct {
		uint64_t value;
		unsigned len;
		uint8_t bytes[CGT_VARINT_MAX];
	} known[] = {
		{ 0, 1, { 0x00 } },
		{ 127, 1, { 0x7f } },
		{ 128, 2, { 0x80, 0x01 } },
		{ 300, 2, { 0xac, 0x02 } },
		{ 16384, 3, { 0x80, 0x80, 0x01 } },
		{ 1ull << 32, 5, { 0x80, 0x80, 0x80, 0x80, 0x10 } },
		{ UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		uint8_t buf[CGT_VARINT_MAX + 1];
		memset(buf, 0xaa, sizeof(buf));
		CHECK_EQ(cgt_put_varint(buf, known[i].value) - buf, known[i].len);
		CHECK(memcmp(buf, known[i].bytes, known[i].len) == 0);
		/* both decoders, from the hand-written bytes */
		const uint8_t *p = known[i].bytes;
		uint64_t v = 12345;
		CHECK(cgt_get_varint(&p, known[i].bytes + known[i].len, &v) == 0);
		CHECK_EQ(v, known[i].value);
		CHECK(p == known[i].bytes + known[i].len);
		p = known[i].bytes;
		CHECK_EQ(cgt_fast_uvarint(&p), known[i].value);
		CHECK(p == known[i].bytes + known[i].len);
	}
	/* zigzag: 0, -1, 1, -2, 2 ... -> 0, 1, 2, 3, 4 ...; -64 -> 127, 64 -> 128 */
	CHECK_EQ(cgt_zigzag(0), 0);
	CHECK_EQ(cgt_zigzag(-2), 3);
	CHECK_EQ(cgt_zigzag(2), 4);
	CHECK_EQ(cgt_zigzag(-64), 127);
	CHECK_EQ(cgt_zigzag(64), 128);
	CHECK_EQ(cgt_zigzag(INT64_MIN), UINT64_MAX);
	uint8_t buf[CGT_VARINT_MAX];
	CHECK_EQ(cgt_put_svarint(buf, -65) - buf, 2);
	CHECK(buf[0] == 0x81 && buf[1] == 0x01);	/* zigzag 129 */
}

static void lengths(void)
{
	uint8_t buf[CGT_VARINT_MAX];
	CHECK_EQ(cgt_put_varint(buf, 127) - buf, 1);
	CHECK_EQ(cgt_put_varint(buf, 128) - buf, 2);
	CHECK_EQ(cgt_put_varint(buf, UINT64_MAX) - buf, 10);
}

static void signed_round_trips(void)
{
	static const int64_t values[] = { 0, 1, -1, 63, -64, 64, -65, INT64_MAX, INT64_MIN };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint8_t buf[CGT_VARINT_MAX];
		uint8_t *end = cgt_put_svarint(buf, values[i]);
		const uint8_t *p = buf;
		int64_t v = 0;
		CHECK(cgt_get_svarint(&p, end, &v) == 0);
		CHECK(v == values[i]);
		CHECK(p == end);
	}
	/* small magnitudes stay small */
	CHECK_EQ(cgt_zigzag(-1), 1);
	CHECK_EQ(cgt_zigzag(1), 2);
}

static void truncated_input_is_rejected(void)
{
	uint8_t buf[CGT_VARINT_MAX];
	uint8_t *end = cgt_put_varint(buf, 1ull << 40);
	CHECK_EQ(end - buf, 6);	/* else the loop below checks fewer cuts, or none */
	for (const uint8_t *cut = buf; cut < end; cut++) {
		const uint8_t *p = buf;
		uint64_t v;
		CHECK(cgt_get_varint(&p, cut, &v) == -1);
		CHECK(p == buf);
	}
}

static void overlong_input_is_rejected(void)
{
	/* Ten continuation bytes, then a terminator within the buffer: the
	   encoding ends, but past the 10 bytes any 64-bit value needs.  (All
	   continuation bytes to the end would be rejected as truncated even
	   without the length limit.) */
	uint8_t buf[11];
	memset(buf, 0x80, sizeof(buf));
	buf[10] = 0x01;
	const uint8_t *p = buf;
	uint64_t v;
	CHECK(cgt_get_varint(&p, buf + sizeof(buf), &v) == -1);
	CHECK(p == buf);
	/* ten bytes ending there are fine */
	buf[9] = 0x01;
	p = buf;
	CHECK(cgt_get_varint(&p, buf + sizeof(buf), &v) == 0);
	CHECK_EQ(v, 1ull << 63);
	CHECK(p == buf + 10);
}

int main(void)
{
	PLAN(6);
	RUN(round_trips);
	RUN(known_encodings);
	RUN(lengths);
	RUN(signed_round_trips);
	RUN(truncated_input_is_rejected);
	RUN(overlong_input_is_rejected);
	return CHECK_DONE();
}
