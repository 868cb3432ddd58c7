/* A division by zero whose SIGFPE handler jumps out: a fault at no data
   access, which the recorder cannot place in its block. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static sigjmp_buf env;

static void on_fpe(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
	(void)argv;
	signal(SIGFPE, on_fpe);
	volatile int zero = argc - 1, r = 0;
	if (sigsetjmp(env, 1) == 0)
		r = 10 / zero;
	printf("%d\n", r);
	return 0;
}
