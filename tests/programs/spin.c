/*
 * Runs until it is killed, so that a test can kill a recording mid-run.
 * First it writes its pid to the file argv[1] (under Valgrind: the
 * Valgrind process's), then, by argv[2]:
 *   fast      works flat out (the default);
 *   slow      works a little every 10 ms: a trace that grows slowly;
 *   selfkill  works a little, then kills itself with SIGKILL.
 * Like many servers it ignores SIGPIPE (so a broken pipe to a recorder
 * does not kill it).  It gives up after 60 seconds, so that a failed test
 * leaves nothing running.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink[1 << 12];

static void work(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink[(i * 2654435761u) & ((1 << 12) - 1)] += i;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "fast";
	time_t start = time(NULL);
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		fprintf(stderr, "usage: spin PIDFILE [fast|slow|selfkill]\n");
		return 2;
	}
	if ((f = fopen(argv[1], "w")) == NULL || fprintf(f, "%ld\n", (long)getpid()) < 0 ||
	    fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	if (strcmp(mode, "selfkill") == 0) {
		work(1 << 20);
		raise(SIGKILL);
	}
	while (time(NULL) - start < 60) {
		if (strcmp(mode, "slow") == 0) {
			work(1 << 10);
			usleep(10000);
		} else {
			work(1 << 16);
		}
	}
	return 0;
}
