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
	}
	/* small magnitudes stay small */
	CHECK_EQ(cgt_zigzag(-1), 1);
	CHECK_EQ(cgt_zigzag(1), 2);
}

static void truncated_input_is_rejected(void)
{
	uint8_t buf[CGT_VARINT_MAX];
	uint8_t *end = cgt_put_varint(buf, 1ull << 40);
	for (const uint8_t *cut = buf; cut < end; cut++) {
		const uint8_t *p = buf;
		uint64_t v;
		CHECK(cgt_get_varint(&p, cut, &v) == -1);
		CHECK(p == buf);
	}
}

static void overlong_input_is_rejected(void)
{
	uint8_t buf[16];
	memset(buf, 0x80, sizeof(buf));	/* continuation bits forever */
	const uint8_t *p = buf;
	uint64_t v;
	CHECK(cgt_get_varint(&p, buf + sizeof(buf), &v) == -1);
}

int main(void)
{
	PLAN(5);
	RUN(round_trips);
	RUN(lengths);
	RUN(signed_round_trips);
	RUN(truncated_input_is_rejected);
	RUN(overlong_input_is_rejected);
	return CHECK_DONE();
}
