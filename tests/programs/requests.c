/* Callgrind's client requests and signal handlers, for the trace's marks
   and the call graph's replay: a toggled region, a named dump, a zeroing,
   a handler on the normal stack and one on an alternate stack. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>

static volatile long sink;

static __attribute__((noinline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

static void on_usr1(int sig)
{
	(void)sig;
	work(50);
}

static void on_usr2(int sig)
{
	(void)sig;
	work(70);
}

int main(void)
{
	static char alt[1 << 16];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction usr1 = { .sa_handler = on_usr1 }, usr2 = { .sa_handler = on_usr2,
								     .sa_flags = SA_ONSTACK };

	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &usr1, NULL) != 0 ||
	    sigaction(SIGUSR2, &usr2, NULL) != 0)
		return 1;
	CALLGRIND_TOGGLE_COLLECT;
	work(20);
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_DUMP_STATS_AT("after-region");
	work(30);
	CALLGRIND_ZERO_STATS;
	raise(SIGUSR1);
	raise(SIGUSR2);
	CALLGRIND_DUMP_STATS;
	printf("%ld\n", sink);
	return 0;
}
