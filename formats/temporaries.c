/*
 * The temporaries a signal removes (trace.h, cgt_temporary_*): a table of
 * atomic pointers, so that a signal handler takes paths out of it with
 * atomic exchanges alone, whatever another thread is doing to it, and
 * removes them with system calls alone -- no allocation, no stdio, no
 * lock: unlink, and for a directory open, getdents64, unlinkat, rmdir.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

static const char *_Atomic registered[CGT_TEMPORARIES_MAX];
static atomic_int removing;

/* The handler that began the removal ends the process. */
static void wait_to_die(void)
{
	for (;;)
		pause();
}

/* Removes the directory root with all in it, depth first, one directory
   open at a time (its files removed, then its first subdirectory
   entered), never through a symbolic link (one is removed as a file).  A
   directory that stays non-empty -- another thread putting files in it
   meanwhile, an entry that cannot be removed or is too deep for PATH_MAX
   -- is tried again while that removes something, then left. */
static void remove_tree(const char *root)
{
	char path[PATH_MAX];
	size_t root_len = strlen(root), len = root_len;
	unsigned fruitless = 0;

	if (root_len >= sizeof(path))
		return;
	memcpy(path, root, root_len + 1);
	while (fruitless < 100) {
		int removed = 0;
		size_t child = 0;	/* the length of path with a subdirectory to enter */
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			_Alignas(struct dirent64) char buf[4096];
			ssize_t n;
			while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
				for (ssize_t at = 0; at < n;) {
					const struct dirent64 *d = (const struct dirent64 *)(buf + at);
					size_t name_len = strlen(d->d_name);
					at += d->d_reclen;
					if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
						continue;
					if (unlinkat(fd, d->d_name, 0) == 0) {
						removed = 1;
					} else if (errno == EISDIR && child == 0 &&
						   len + 1 + name_len < sizeof(path)) {
						path[len] = '/';
						memcpy(path + len + 1, d->d_name, name_len + 1);
						child = len + 1 + name_len;
					}
				}
			}
			close(fd);
		}
		if (child != 0) {
			len = child;
			continue;
		}
		if (rmdir(path) == 0 || errno == ENOENT) {
			if (len == root_len)
				return;
			while (path[len - 1] != '/')
				len--;
			path[--len] = '\0';
			removed = 1;
		}
		fruitless = removed ? 0 : fruitless + 1;
	}
}

/* A file, or a directory with all in it. */
static void remove_path(const char *path)
{
	if (unlink(path) < 0 && errno == EISDIR)
		remove_tree(path);
}

void cgt_temporary_register(const char *path)
{
	for (size_t i = 0; i < CGT_TEMPORARIES_MAX; i++) {
		const char *free_slot = NULL;
		if (!atomic_compare_exchange_strong(&registered[i], &free_slot, path))
			continue;
		/* A removal that began before may have passed slot i. */
		if (atomic_load(&removing)) {
			if (atomic_exchange(&registered[i], NULL) == path)
				remove_path(path);
			wait_to_die();
		}
		return;
	}
}

void cgt_temporary_unregister(const char *path)
{
	for (size_t i = 0; i < CGT_TEMPORARIES_MAX; i++) {
		const char *mine = path;
		if (atomic_load(&registered[i]) == path &&
		    atomic_compare_exchange_strong(&registered[i], &mine, NULL))
			return;
	}
	/* Not there: a removal took it, and may still be reading path. */
	cgt_temporaries_wait_if_removing();
}

void cgt_temporaries_remove_all(void)
{
	if (atomic_exchange(&removing, 1))
		wait_to_die();
	for (size_t i = 0; i < CGT_TEMPORARIES_MAX; i++) {
		const char *path = atomic_exchange(&registered[i], NULL);
		if (path != NULL)
			remove_path(path);
	}
}

void cgt_temporaries_wait_if_removing(void)
{
	if (atomic_load(&removing))
		wait_to_die();
}

sigset_t cgt_temporaries_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	return set;
}

void cgt_temporaries_hold(sigset_t *was)
{
	sigset_t set = cgt_temporaries_signals();
	pthread_sigmask(SIG_BLOCK, &set, was);
}

void cgt_temporaries_release(const sigset_t *was)
{
	pthread_sigmask(SIG_SETMASK, was, NULL);
}

int cgt_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t was;
	cgt_temporaries_hold(&was);	/* the new thread starts with this mask */
	int rc = pthread_create(thread, NULL, fn, arg);
	cgt_temporaries_release(&was);
	return rc;
}
