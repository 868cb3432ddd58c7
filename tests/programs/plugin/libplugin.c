/* The shared library tests/programs/dlopen.c loads at run time. */
static volatile long sink;

static __attribute__((noinline)) long plugin_step(long x)
{
	sink += x;
	return x * 7 % 1009;
}

long plugin_work(int n)
{
	long s = 1;
	for (int i = 0; i < n; i++)
		s = plugin_step(s + i);
	return s;
}
