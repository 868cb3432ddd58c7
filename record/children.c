/*
 * Which of this process's children are its own to wait for (backend.h).
 *
 * A process inherits the children of the program it replaced: a shell
 * that makes a process substitution, or a background job, and then execs
 * cgtrace hands cgtrace children it never started.  Waiting for those
 * hangs (a `cat` reading cgtrace's stderr waits for cgtrace to close it),
 * so cgtrace notes them before it starts anything and leaves them alone.
 * Every other child is its own: one it forked, or, as subreaper under
 * --trace-children=yes, one that reached it as an orphan (the sink of a
 * traced child process, a process of the program whose parent ended).
 * The kernel keeps no list of a process's children that every kernel
 * shows (/proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN), so
 * they are found from /proc/PID/stat's parent field.
 */
#include "backend.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The parent of process pid, from /proc/PID/stat ("pid (comm) state
   ppid ...", where comm may hold anything, ')' included): 0 if it has
   gone or cannot be read. */
static pid_t parent_of(const char *pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *after_comm = strrchr(buf, ')');
	long ppid;
	if (after_comm == NULL || sscanf(after_comm + 1, " %*c %ld", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

static int is_given(const struct record_children *c, pid_t pid)
{
	for (size_t i = 0; i < c->n_given; i++)
		if (c->given[i] == pid)
			return 1;
	return 0;
}

/* Appends to *pids (n, cap) this process's children that c does not
   name as given (c NULL: every child).  0, or -1 with errno. */
static int list_children(const struct record_children *c, pid_t **pids, size_t *n, size_t *cap)
{
	pid_t self = getpid();
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]) || parent_of(de->d_name) != self)
			continue;
		pid_t pid = (pid_t)atol(de->d_name);
		if (c != NULL && is_given(c, pid))
			continue;
		if (*n == *cap && cgt_array_grow(pids, cap, *n, 1, sizeof(**pids)) < 0) {
			closedir(d);
			errno = ENOMEM;
			return -1;
		}
		(*pids)[(*n)++] = pid;
	}
	closedir(d);
	return 0;
}

int record_children_init(struct record_children *c, struct cgt_error *e)
{
	memset(c, 0, sizeof(*c));
	if (list_children(NULL, &c->given, &c->n_given, &c->cap) < 0) {
		int err = errno;
		record_children_free(c);
		return cgt_fail(e, cgt_err_io, "cannot list this process's children in /proc: %s",
				strerror(err));
	}
	return 0;
}

void record_children_wait(const struct record_children *c)
{
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;

	/* A child that ends may leave orphans, which reach this process (a
	   subreaper) before it can be waited for: look again after each round
	   until no child of its own is left. */
	for (int waited = 1; waited && list_children(c, &pids, &n, &cap) == 0 && n > 0; n = 0) {
		/* A round that can wait for none of them (already reaped, say)
		   would find them again: it ends the wait. */
		waited = 0;
		for (size_t i = 0; i < n; i++) {
			pid_t got;
			while ((got = waitpid(pids[i], NULL, __WALL)) < 0 && errno == EINTR)
				;
			waited |= got == pids[i];
		}
	}
	free(pids);
}

void record_children_free(struct record_children *c)
{
	free(c->given);
	memset(c, 0, sizeof(*c));
}
