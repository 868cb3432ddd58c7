/* Unaligned accesses, many of them straddling two 64-byte cache lines. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Alignas(64) unsigned char buf[64 * 1024];

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));	/* an unaligned 8-byte load */
	return v;
}

static void store32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 50;
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)i;
	for (int r = 0; r < reps; r++) {
		for (size_t line = 0; line + 1 < sizeof(buf) / 64; line++) {
			sum += load64(buf + line * 64 + 60);		/* crosses the line end */
			store32(buf + line * 64 + 62, (uint32_t)(sum + r));	/* crosses too */
			sum += load64(buf + line * 64 + 3);		/* unaligned, inside */
		}
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
