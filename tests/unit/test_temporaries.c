/* The temporaries a signal removes (cgt_temporary_*): what is registered
   goes -- a file, a directory with all in it, never what a symbolic link
   in it points to -- and not what was unregistered; a path registered
   once the removal has begun is removed by the thread that registers it;
   a tree too deep for PATH_MAX is removed as far as it can be, in bounded
   time.  cgt_temporaries_remove_all is
   final for a process, so each test calls it in a child. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "trace.h"

static void put(const char *path)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs("x\n", f);
		fclose(f);
	}
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Waits for child up to seconds (then kills it): 1 if it exited 0. */
static int exited_well(pid_t child, int seconds)
{
	int status;
	for (int waited = 0; waited < seconds * 100; waited++) {
		pid_t got = waitpid(child, &status, WNOHANG);
		if (got == child)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return 0;
}

static void removes_what_is_registered(void)
{
	CHECK(mkdir("outside", 0755) == 0);
	put("outside/keep");
	CHECK(mkdir("tree", 0755) == 0);
	CHECK(mkdir("tree/a", 0755) == 0);
	CHECK(mkdir("tree/a/b", 0755) == 0);
	CHECK(mkdir("tree/a/b/c", 0755) == 0);
	CHECK(mkdir("tree/empty", 0755) == 0);
	CHECK(mkdir("tree/many", 0755) == 0);
	put("tree/a/b/c/deep");
	put("tree/a/shallow");
	put("tree/top");
	/* more than one read of the directory holds */
	for (int i = 0; i < 500; i++) {
		char name[64];
		snprintf(name, sizeof(name), "tree/many/member-%d", i);
		put(name);
	}
	CHECK(symlink("../outside", "tree/dirlink") == 0);
	CHECK(symlink("../outside/keep", "tree/filelink") == 0);
	put("single");
	put("kept");

	pid_t child = fork();
	if (child == 0) {
		cgt_temporary_register("tree");
		cgt_temporary_register("single");
		cgt_temporary_register("kept");
		cgt_temporary_unregister("kept");
		cgt_temporaries_remove_all();
		_exit(0);
	}
	CHECK(exited_well(child, 60));
	CHECK(!exists("tree"));
	CHECK(!exists("single"));
	CHECK(exists("kept"));
	CHECK(exists("outside/keep"));
}

/* Registered after the removal began (on another thread, in the CLI):
   the registering thread removes it, then waits for the end. */
static void registered_too_late(void)
{
	put("late");
	pid_t child = fork();
	if (child == 0) {
		cgt_temporaries_remove_all();
		cgt_temporary_register("late");
		_exit(1);	/* not reached */
	}
	int gone = 0;
	for (int waited = 0; waited < 6000 && !gone; waited++) {
		gone = !exists("late");
		if (!gone)
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	CHECK(gone);
	int status;
	CHECK(waitpid(child, &status, WNOHANG) == 0);	/* still waiting */
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

/* Deeper than PATH_MAX: what can be reached goes, and the removal ends
   (what cannot be reached is left, and the directories that hold it). */
static void too_deep(void)
{
	char name[256];
	memset(name, 'd', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	CHECK(mkdir("deep", 0755) == 0);
	int fd = open("deep", O_RDONLY | O_DIRECTORY);
	for (int i = 0; fd >= 0 && i < 20; i++) {
		int next = -1;
		if (mkdirat(fd, name, 0755) == 0)
			next = openat(fd, name, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = next;
	}
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	put("deep/reachable");
	pid_t child = fork();
	if (child == 0) {
		cgt_temporary_register("deep");
		cgt_temporaries_remove_all();
		_exit(0);
	}
	CHECK(exited_well(child, 60));
	CHECK(!exists("deep/reachable"));
}

int main(void)
{
	char dir[] = "/tmp/cgt-temporaries-test.XXXXXX";

	PLAN(3);
	if (mkdtemp(dir) == NULL || chdir(dir) < 0) {
		perror(dir);
		return 1;
	}
	RUN(removes_what_is_registered);
	RUN(registered_too_late);
	RUN(too_deep);
	char *rm = NULL;
	if (chdir("/") == 0 && asprintf(&rm, "rm -rf '%s'", dir) > 0 && system(rm) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(rm);
	return CHECK_DONE();
}
