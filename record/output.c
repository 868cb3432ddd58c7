/*
 * Where an output file goes (record.h, cgt_output_*): the checks that keep
 * a mistyped -o from destroying a trace, an input or a user's file, and
 * the choice between writing through (devices, FIFOs) and replacing a
 * regular file atomically.
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file a chain of symlinks ends at (malloc'd; it may not exist), or
   NULL with errno set (ELOOP, ENOMEM, or readlink's). */
static char *resolve_links(const char *path)
{
	char *p = strdup(path);

	for (int hops = 0; p != NULL; hops++) {
		struct stat st;
		char target[PATH_MAX];
		if (lstat(p, &st) < 0 || !S_ISLNK(st.st_mode))
			return p;
		if (hops == 40) {
			free(p);
			errno = ELOOP;
			return NULL;
		}
		ssize_t n = readlink(p, target, sizeof(target) - 1);
		if (n < 0) {
			free(p);
			return NULL;
		}
		target[n] = '\0';
		char *next = NULL, *slash = strrchr(p, '/');
		if (target[0] == '/' || slash == NULL)
			next = strdup(target);
		else if (asprintf(&next, "%.*s/%s", (int)(slash - p), p, target) < 0)
			next = NULL;
		free(p);
		p = next;
	}
	errno = ENOMEM;
	return NULL;
}

/* 1 if the regular file at path begins with one of two lines' starts:
   a cachegrind.out's (desc: lines, then cmd:; cg_annotate's order), or a
   callgrind.out's (its marker, or the version line it may open with). */
static int looks_like(const char *path, const char *start, const char *other)
{
	char head[32] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return 0;
	ssize_t n = read(fd, head, sizeof(head) - 1);
	close(fd);
	return n > 0 && (strncmp(head, start, strlen(start)) == 0 || strncmp(head, other, strlen(other)) == 0);
}

/* what_to_do: "remove it or " or ""; then "choose another" and the
   output's option. */
static int refuse(struct cgt_error *e, const char *path, const char *why, const char *what_to_do,
		  enum cgt_output_kind kind)
{
	return cgt_fail(e, cgt_err_io, "refusing to overwrite '%s': %s (%schoose another %s)", path,
			why, what_to_do, kind == CGT_OUTPUT_CALLGRIND ? "--callgrind-out-file" : "-o");
}

int cgt_output_check(const char *path, enum cgt_output_kind kind, const char *const *inputs,
		     size_t n_inputs, struct cgt_error *e)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;	/* nothing there (or unreachable: opening says why) */
	if (S_ISDIR(st.st_mode))
		return cgt_fail(e, cgt_err_io, "cannot write '%s': it is a directory", path);
	for (size_t i = 0; i < n_inputs; i++) {
		struct stat in;
		if (stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			char why[PATH_MAX + 64];
			snprintf(why, sizeof(why), "it is the input '%s'", inputs[i]);
			return refuse(e, path, why, "", kind);
		}
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	int trace = cgt_file_is_trace(path) == 1;
	if (kind == CGT_OUTPUT_TRACE && !trace)
		return refuse(e, path, "it is not a cgtrace trace", "remove it or ", kind);
	if (kind != CGT_OUTPUT_TRACE && trace)
		return refuse(e, path, "it is a cgtrace trace", "", kind);
	if (kind == CGT_OUTPUT_CGOUT && !looks_like(path, "desc:", "cmd:"))
		return refuse(e, path, "it is not a cachegrind.out file", "remove it or ", kind);
	if (kind == CGT_OUTPUT_CALLGRIND && !looks_like(path, "# callgrind format", "version:"))
		return refuse(e, path, "it is not a callgrind.out file", "remove it or ", kind);
	return 0;
}

static int cannot_write(struct cgt_error *e, const char *path, int err)
{
	return cgt_fail(e, cgt_err_io, "cannot write '%s': %s", path, strerror(err));
}

int cgt_output_prepare(struct cgt_output *o, const char *path, int keep_existing,
		       struct cgt_error *e)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->keep_existing = keep_existing;
	o->path = strdup(path);
	if (o->path == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	/* A symlink is followed to the file it ends at, which is what is
	   written or replaced; the link itself stays. */
	o->final = keep_existing ? strdup(path) : resolve_links(path);
	if (o->final == NULL) {
		int err = errno;
		cgt_output_discard(o);
		return cannot_write(e, path, err);
	}
	if (!keep_existing && stat(o->final, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device or FIFO is written through, as Cachegrind does:
		   renaming over it would replace it. */
		o->write_path = o->path;
		return 0;
	}
	/* A regular file (or none yet) is replaced only when the new one is
	   complete: a failed run never destroys an earlier result. */
	const char *slash = strrchr(o->final, '/');
	int fd = -1;
	if (asprintf(&o->temporary, "%.*s.cgtrace-out.XXXXXXXX", slash ? (int)(slash - o->final + 1) : 0,
		     o->final) < 0) {
		o->temporary = NULL;
		cgt_output_discard(o);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	/* Not mkstemp, whose file is private: a new result gets the
	   permissions the umask gives, as Cachegrind's does. */
	char *random_part = o->temporary + strlen(o->temporary) - 8;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)getpid() * 2654435761u + (uint32_t)tries;
		snprintf(random_part, 9, "%08x", r);
		fd = open(o->temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int err = errno;
		free(o->temporary);
		o->temporary = NULL;
		cgt_output_discard(o);
		return cannot_write(e, path, err);
	}
	/* Replacing a file keeps its permissions, as writing into it would. */
	if (!keep_existing && stat(o->final, &st) == 0)
		fchmod(fd, st.st_mode & 07777);
	close(fd);
	o->write_path = o->temporary;
	return 0;
}

int cgt_output_commit(struct cgt_output *o, struct cgt_error *e)
{
	if (o->temporary == NULL) {
		o->written = o->path;
		return 0;
	}
	if (!o->keep_existing) {
		if (rename(o->temporary, o->final) < 0)
			return cannot_write(e, o->path, errno);
		free(o->temporary);
		o->temporary = NULL;
		o->written = o->path;
		return 0;
	}
	/* Never replaces anything: the first free name is claimed
	   atomically, even against another run doing the same. */
	for (unsigned n = 0; n < 10000; n++) {
		char *name = NULL;
		if (n == 0)
			name = strdup(o->path);
		else if (asprintf(&name, "%s.%u", o->path, n) < 0)
			name = NULL;
		if (name == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		if (cgt_rename_noreplace(o->temporary, name) == 0) {
			free(o->temporary);
			o->temporary = NULL;
			free(o->final);
			o->final = name;
			o->written = name;
			return 0;
		}
		int err = errno;
		free(name);
		if (err != EEXIST)
			return cannot_write(e, o->path, err);
	}
	return cgt_fail(e, cgt_err_io, "cannot write '%s': it and %s.1 to %s.9999 all exist", o->path,
			o->path, o->path);
}

void cgt_output_blame(const struct cgt_output *o, struct cgt_error *e)
{
	if (o->temporary == NULL)
		return;
	char *at = strstr(e->msg, o->temporary);
	if (at == NULL)
		return;
	char rest[sizeof(e->msg)];
	snprintf(rest, sizeof(rest), "%s", at + strlen(o->temporary));
	snprintf(at, sizeof(e->msg) - (size_t)(at - e->msg), "%s%s", o->path, rest);
}

void cgt_output_discard(struct cgt_output *o)
{
	if (o->temporary != NULL)
		unlink(o->temporary);
	free(o->temporary);
	free(o->final);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
