/* libc string functions, and REP string instructions written out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char src[1 << 16], dst[1 << 16];

static void rep_movsb(void *d, const void *s, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static void rep_stosq(void *d, unsigned long v, size_t n)
{
	__asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 20;
	unsigned long total = 0;
	char buf[256];

	for (int r = 0; r < reps; r++) {
		memset(src, 'a' + r % 26, sizeof(src) - 1);
		memcpy(dst, src, sizeof(src));
		total += strlen(dst);
		src[1000 + r] = 'Z';
		total += (unsigned long)(strchr(src, 'Z') - src);
		total += strcmp(src, dst) != 0;
		memmove(dst + 1, dst, 4096);
		snprintf(buf, sizeof(buf), "%d:%s", r, "formatted output with %s");
		total += strlen(buf);
		rep_movsb(dst, src + 3, 1000 + r);
		rep_stosq(dst, 0x0101010101010101ul, 64);
		total += (unsigned char)dst[100] + (unsigned char)dst[600];
		src[1000 + r] = 'a';
	}
	printf("%lu\n", total);
	return 0;
}
