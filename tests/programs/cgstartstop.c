/* Cachegrind's instrumentation requests, CACHEGRIND_STOP_INSTRUMENTATION
   and _START_ (Valgrind 3.22's cachegrind.h; Debian's 3.19 has neither
   the header nor the requests, so their codes are written out here): the
   work done while stopped is long enough to span trace segments. */
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/valgrind.h>

#define CG_START_INSTRUMENTATION VG_USERREQ_TOOL_BASE('C', 'G')
#define CG_STOP_INSTRUMENTATION (CG_START_INSTRUMENTATION + 1)

static volatile long sink;

static __attribute__((noinline)) void counted(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

static __attribute__((noinline)) void hidden(int n)
{
	for (int i = 0; i < n; i++)
		sink ^= i;
}

static __attribute__((noinline)) void counted_after(int n)
{
	for (int i = 0; i < n; i++)
		sink -= i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 6000000;
	counted(1000);
	VALGRIND_DO_CLIENT_REQUEST_STMT(CG_STOP_INSTRUMENTATION, 0, 0, 0, 0, 0);
	hidden(n);
	VALGRIND_DO_CLIENT_REQUEST_STMT(CG_START_INSTRUMENTATION, 0, 0, 0, 0, 0);
	counted_after(1000);
	printf("%ld\n", sink);
	return 0;
}
