/* Does some work, then dies of SIGTERM. */
#include <signal.h>
#include <stdio.h>

int main(void)
{
	volatile long sum = 0;

	for (int i = 0; i < 100000; i++)
		sum += i;
	printf("%ld\n", sum);
	fflush(stdout);
	raise(SIGTERM);
	return 0;
}
