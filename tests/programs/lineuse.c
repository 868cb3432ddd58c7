/*
 * Lines loaded under one call and evicted under another, for cache use's
 * inclusive attribution: toucher reads one byte of each of 64 lines and
 * returns; evictor then reads a megabyte, evicting them.  Each of
 * toucher's lines is used once, in 2 of its 64 bytes: its AcCost1 (1000)
 * and SpLoss1 (62 with 64-byte lines) belong to toucher, and inclusively
 * to main's call of toucher, not to main's call of evictor.
 */
static volatile char sink;
/* volatile: read, though nothing writes them */
static volatile char sparse[64 * 4096];
static volatile char stream[1 << 20];

static __attribute__((noinline)) void toucher(void)
{
	for (int i = 0; i < 64; i++)
		sink = sparse[i * 4096];
}

static __attribute__((noinline)) void evictor(void)
{
	for (unsigned i = 0; i < sizeof(stream); i += 64)
		sink = stream[i];
}

int main(void)
{
	toucher();
	evictor();
	return 0;
}
