/* Processes made by fork(), for tests/e2e/record_fork.sh.  The argument
   says which:
     tree    20 children, each doing work of its own; the fourth forks a
             grandchild, and works on long after it ended (so that the
             grandchild's trace is finished first);
     system  system("true") three times: children that call execve;
     kill    a child that runs until its parent kills it (SIGKILL);
     noexec  a child whose execve fails, and which goes on;
     orphan  a child that works on for a second after its parent has
             exited (the recorder must wait for its trace). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

static __attribute__((noinline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

static int tree(void)
{
	for (int k = 0; k < 20; k++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			work(100 * k);
			if (k == 3) {
				pid_t g = fork();
				if (g == 0) {
					work(7);
					_exit(0);
				}
				waitpid(g, NULL, 0);
				work(2000000);
			}
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "tree") == 0)
		return tree();
	if (strcmp(what, "system") == 0) {
		for (int k = 0; k < 3; k++)
			if (system("true") != 0)
				return 1;
		return 0;
	}
	if (strcmp(what, "kill") == 0) {
		pid_t p = fork();
		if (p == 0)
			for (;;)
				work(1000);
		usleep(300000);
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		return 0;
	}
	if (strcmp(what, "noexec") == 0) {
		int status;
		pid_t p = fork();
		if (p == 0) {
			execl("/nonexistent/program", "program", (char *)NULL);
			work(50);
			_exit(3);
		}
		waitpid(p, &status, 0);
		return WIFEXITED(status) && WEXITSTATUS(status) == 3 ? 0 : 1;
	}
	if (strcmp(what, "orphan") == 0) {
		pid_t p = fork();
		if (p == 0) {
			sleep(1);
			work(1000);
			_exit(0);
		}
		return p < 0;
	}
	return 2;
}
