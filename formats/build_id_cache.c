/*
 * The build-id cache (trace.h): each executable module a trace names, kept
 * by its GNU build-id, so that its symbols and lines outlive a rebuild.
 *
 *   DIR/ab/cdef...0123/elf     the module file
 *   DIR/ab/cdef...0123/debug   its separate debug file, where the system
 *                              has one (/usr/lib/debug/.build-id/ab/cdef...debug)
 *
 * (the build-id in lower-case hex, its first byte a directory, as perf's
 * ~/.debug/.build-id and /usr/lib/debug/.build-id are laid out).  An entry
 * is made by a hard link where the file system allows, else by a copy
 * written beside it and renamed into place, so a reader never sees half a
 * file and two recorders never store one twice.  Nothing is trusted by
 * name: a file goes in only if its build-id is the recorded one, and a
 * reader checks it again (cgt_build_id_cache_find).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

char *cgt_build_id_dir_default(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir = NULL;
	/* The XDG base directory specification: a relative path is invalid,
	   and ignored. */
	if (xdg != NULL && xdg[0] == '/') {
		if (asprintf(&dir, "%s/cgtrace/build-id", xdg) < 0)
			dir = NULL;
	} else if (home != NULL && home[0] != '\0') {
		if (asprintf(&dir, "%s/.cache/cgtrace/build-id", home) < 0)
			dir = NULL;
	}
	return dir;
}

size_t cgt_build_id_hex(const uint8_t *id, size_t len, char *out, size_t cap)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 0;
	for (size_t i = 0; i < len && n + 2 < cap; i++) {
		out[n++] = digits[id[i] >> 4];
		out[n++] = digits[id[i] & 15];
	}
	if (cap > 0)
		out[n] = '\0';
	return n;
}

char *cgt_build_id_path(const char *dir, const uint8_t *id, size_t len, const char *kind)
{
	char hex[2 * 64 + 1];
	char *path;
	if (len < 2 || len > 64)
		return NULL;
	cgt_build_id_hex(id, len, hex, sizeof(hex));
	if (asprintf(&path, "%s/%.2s/%s/%s", dir, hex, hex + 2, kind) < 0)
		return NULL;
	return path;
}

/* Whether the ELF file open on fd has build-id id. */
static int fd_has_build_id(int fd, const uint8_t *id, size_t len)
{
	uint8_t got[64];
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL)
		return 0;
	size_t got_len = cgt_elf_build_id(elf, got, sizeof(got));
	elf_end(elf);
	return got_len == len && memcmp(got, id, len) == 0;
}

int cgt_file_has_build_id(const char *path, const uint8_t *id, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int ok = fd_has_build_id(fd, id, len);
	close(fd);
	return ok;
}

/* mkdir -p of path's parent directories and, with whole, of path. */
static int make_dirs(char *path, int whole, struct cgt_error *e)
{
	size_t n = strlen(path);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i] == '\0' && !whole)
			break;
		char c = path[i];
		path[i] = '\0';
		int rc = mkdir(path, 0755);
		int err = errno;
		path[i] = c;
		if (rc < 0 && err != EEXIST)
			return cgt_fail(e, cgt_err_io, "cannot create %.*s: %s", (int)i, path, strerror(err));
	}
	return 0;
}

/* Copies the file open on in to a new file beside dest, and renames it
   into place unless dest appeared meanwhile.  0, or negative. */
static int copy_into(int in, const char *dest, struct cgt_error *e)
{
	char *temp;
	if (asprintf(&temp, "%s.XXXXXX", dest) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	sigset_t was;
	cgt_temporaries_hold(&was);
	int out = mkstemp(temp);
	if (out >= 0)
		cgt_temporary_register(temp);
	cgt_temporaries_release(&was);
	if (out < 0) {
		int rc = cgt_fail(e, cgt_err_io, "cannot create %s: %s", temp, strerror(errno));
		free(temp);
		return rc;
	}
	static char buf[1 << 16];
	ssize_t n;
	int rc = 0;
	if (lseek(in, 0, SEEK_SET) < 0)
		rc = cgt_fail(e, cgt_err_io, "%s: %s", dest, strerror(errno));
	while (rc == 0 && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			rc = cgt_fail(e, cgt_err_io, "reading for %s: %s", dest, strerror(errno));
			break;
		}
		if (cgt_write_all(out, buf, (size_t)n) < 0)
			rc = cgt_fail(e, cgt_err_io, "%s: %s", temp, strerror(errno));
	}
	if (fchmod(out, 0644) < 0 && rc == 0)
		rc = cgt_fail(e, cgt_err_io, "%s: %s", temp, strerror(errno));
	if (close(out) < 0 && rc == 0)
		rc = cgt_fail(e, cgt_err_io, "%s: %s", temp, strerror(errno));
	if (rc == 0 && cgt_rename_noreplace(temp, dest) < 0 && errno != EEXIST)
		rc = cgt_fail(e, cgt_err_io, "cannot store %s: %s", dest, strerror(errno));
	unlink(temp);	/* renamed, or not wanted */
	cgt_temporary_unregister(temp);
	free(temp);
	return rc;
}

/* Stores the file at src as dir's entry `kind` for build-id id, if it has
   that build-id and the entry is not there yet, and counts it in *added.
   0 (stored, already there, or src not that file), or negative. */
static int store(const char *dir, const char *src, const uint8_t *id, size_t len, const char *kind,
		 struct cgt_build_id_added *added, struct cgt_error *e)
{
	char *dest = cgt_build_id_path(dir, id, len, kind);
	if (dest == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	struct stat st;
	int rc = 0;
	if (lstat(dest, &st) == 0)
		goto out;	/* never twice; a wrong one is the reader's to refuse */
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		goto out;	/* gone since it was mapped: nothing to keep */
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || !fd_has_build_id(in, id, len)) {
		close(in);
		goto out;
	}
	if ((rc = make_dirs(dest, 0, e)) == 0) {
		/* A link costs no space; a copy, the file's size. */
		int copied = 0;
		if (linkat(AT_FDCWD, src, AT_FDCWD, dest, AT_SYMLINK_FOLLOW) == 0) {
			/* src may have been replaced since it was checked */
			if (cgt_file_has_build_id(dest, id, len) != 1) {
				unlink(dest);
				rc = copy_into(in, dest, e);
				copied = 1;
			}
		} else if (errno == EEXIST) {
			goto closed;	/* another recorder's, just now */
		} else {
			rc = copy_into(in, dest, e);
			copied = 1;
		}
		if (rc == 0) {
			added->files++;
			added->bytes_copied += copied ? (uint64_t)st.st_size : 0;
		}
	}
closed:
	close(in);
out:
	free(dest);
	return rc;
}

int cgt_build_id_cache_store(const char *dir, const struct cgt_module *m,
			     struct cgt_build_id_added *added, struct cgt_error *e)
{
	if (m->build_id_len < 2 || m->path == NULL || m->path[0] != '/')
		return 0;	/* nothing to file it under, or no file */
	int rc = store(dir, m->path, m->build_id, m->build_id_len, "elf", added, e);
	char hex[2 * 64 + 1], *debug;
	cgt_build_id_hex(m->build_id, m->build_id_len, hex, sizeof(hex));
	if (rc == 0 && asprintf(&debug, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2) >= 0) {
		rc = store(dir, debug, m->build_id, m->build_id_len, "debug", added, e);
		free(debug);
	}
	return rc;
}

char *cgt_build_id_cache_find(const char *dir, const uint8_t *id, size_t len, const char *kind,
			      char **foreign)
{
	char *path = cgt_build_id_path(dir, id, len, kind);
	*foreign = NULL;
	if (path == NULL)
		return NULL;
	int ok = cgt_file_has_build_id(path, id, len);
	if (ok == 1)
		return path;
	if (ok == 0)
		*foreign = path;	/* there, but not that file */
	else
		free(path);
	return NULL;
}
