/* fork() without exec: the child does work of its own and exits, the
   parent waits for it.  Under Callgrind each process writes its own file
   (%p in the name), the child's with the parent's costs before the fork. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

static __attribute__((noinline)) void hwork(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

static __attribute__((noinline)) void child(void)
{
	hwork(300);
	exit(0);
}

int main(void)
{
	int status;

	hwork(100);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		child();
	hwork(200);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("%ld\n", sink);
	return 0;
}
