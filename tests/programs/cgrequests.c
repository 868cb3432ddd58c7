/* Callgrind's client requests, for the replay of its parts: a region
   whose middle is not collected (TOGGLE_COLLECT), a named dump, a
   zeroing, a plain dump, and instrumentation stopped, then started again
   two calls deep (the returns past the start point are Callgrind's
   "underflow" calls). */
#include <stdio.h>
#include <valgrind/callgrind.h>

static volatile long sink;

static __attribute__((noinline)) void hwork(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

static __attribute__((noinline)) void region(void)
{
	hwork(10);
	CALLGRIND_TOGGLE_COLLECT;
	hwork(20);
	CALLGRIND_TOGGLE_COLLECT;
	hwork(30);
}

static __attribute__((noinline)) void inner(void)
{
	CALLGRIND_START_INSTRUMENTATION;
	hwork(80);
}

static __attribute__((noinline)) void outer(void)
{
	inner();
	hwork(90);
}

int main(void)
{
	region();
	CALLGRIND_DUMP_STATS_AT("after-region");
	hwork(40);
	CALLGRIND_ZERO_STATS;
	hwork(50);
	CALLGRIND_DUMP_STATS;
	hwork(60);
	CALLGRIND_STOP_INSTRUMENTATION;
	hwork(70);
	outer();
	hwork(100);
	printf("%ld\n", sink);
	return 0;
}
