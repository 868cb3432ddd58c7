/*
 * The benchmark program of `make bench`: about 400 million instructions of
 * the kinds of work cache studies care about -- hash-table lookups, random
 * gathers, strided walks, qsort and libc string functions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE (1 << 16)

static uint32_t rng = 2463534242u;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

struct entry {
	uint32_t key, value;
	struct entry *next;
};

static long hash_lookups(int n)
{
	static struct entry *buckets[TABLE];
	struct entry *pool = calloc(TABLE * 2, sizeof(*pool));
	long found = 0;

	for (int i = 0; i < TABLE * 2; i++) {
		pool[i].key = next();
		pool[i].value = (uint32_t)i;
		uint32_t b = pool[i].key & (TABLE - 1);
		pool[i].next = buckets[b];
		buckets[b] = &pool[i];
	}
	for (int i = 0; i < n; i++) {
		uint32_t key = i & 1 ? pool[next() % (TABLE * 2)].key : next();
		for (struct entry *e = buckets[key & (TABLE - 1)]; e; e = e->next)
			if (e->key == key) {
				found += e->value;
				break;
			}
	}
	free(pool);
	return found;
}

static long gathers(int n)
{
	int size = 1 << 22;
	int *data = malloc(size * sizeof(*data));
	long sum = 0;

	for (int i = 0; i < size; i++)
		data[i] = i;
	for (int i = 0; i < n; i++)
		sum += data[next() & (size - 1)];
	free(data);
	return sum;
}

static long strided(int passes)
{
	int size = 1 << 22;
	char *data = calloc(size, 1);
	long sum = 0;

	for (int p = 0; p < passes; p++)
		for (int stride = 64; stride <= 4096; stride *= 4)
			for (int i = 0; i < size; i += stride)
				sum += data[i]++;
	free(data);
	return sum;
}

static int compare(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static long sorting(int n)
{
	uint32_t *v = malloc(n * sizeof(*v));
	for (int i = 0; i < n; i++)
		v[i] = next();
	qsort(v, n, sizeof(*v), compare);
	long r = v[n / 2];
	free(v);
	return r;
}

static long strings(int n)
{
	char a[512], b[512];
	long sum = 0;

	for (int i = 0; i < n; i++) {
		memset(a, 'a' + i % 26, sizeof(a) - 1);
		a[sizeof(a) - 1] = '\0';
		memcpy(b, a, sizeof(a));
		b[100 + i % 300] = 'z';
		sum += strlen(b) + (strcmp(a, b) < 0) + (strchr(b, 'z') - b);
	}
	return sum;
}

int main(void)
{
	long r = hash_lookups(1000000) + gathers(2700000) + strided(13) + sorting(500000) +
		 strings(40000);
	printf("%ld\n", r);
	return 0;
}
