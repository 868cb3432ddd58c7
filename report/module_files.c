/*
 * Where a recorded module's file is now (report.h, cgt_locate_module):
 * the recorded path, the build-id cache, an archive, debuginfod -- in that
 * order, each taken only if its file has the recorded build-id.
 *
 * Of an archive, only the members of the modules looked up are unpacked
 * (build-id/ab/cdef.../elf and debug, cgt_archive_unpack_member), when
 * they are looked up.
 */
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "symbols.h"

struct cgt_locator {
	struct cgt_locator_options o;
	debuginfod_client *debuginfod;	/* NULL until asked */
	int debuginfod_failed;
	time_t deadline;		/* of the current debuginfod request */
};

static void __attribute__((format(printf, 2, 3))) warn(const struct cgt_locator *l, const char *fmt, ...)
{
	if (l->o.warnings == NULL)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("cgtrace: warning: ", l->o.warnings);
	vfprintf(l->o.warnings, fmt, ap);
	fputc('\n', l->o.warnings);
	va_end(ap);
}

int cgt_locator_open(struct cgt_locator **out, const struct cgt_locator_options *o,
		     struct cgt_error *e)
{
	struct cgt_locator *l = calloc(1, sizeof(*l));
	*out = NULL;
	if (l == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	if (o != NULL)
		l->o = *o;
	*out = l;
	return 0;
}

void cgt_locator_close(struct cgt_locator *l)
{
	if (l == NULL)
		return;
	if (l->debuginfod != NULL)
		debuginfod_end(l->debuginfod);
	free(l);
}

const char *cgt_module_source_name(enum cgt_module_source s)
{
	switch (s) {
	case CGT_MODULE_RECORDED_PATH:
		return "the recorded path";
	case CGT_MODULE_CACHE:
		return "the build-id cache";
	case CGT_MODULE_ARCHIVE:
		return "the archive";
	case CGT_MODULE_DEBUGINFOD:
		return "debuginfod";
	case CGT_MODULE_NOWHERE:
		break;
	}
	return "nowhere";
}

void cgt_module_files_free(struct cgt_module_files *f)
{
	free(f->elf);
	free(f->debug);
	free(f->why);
	memset(f, 0, sizeof(*f));
}

/* m's file of kind ("elf", "debug") in the cache-laid-out dir, or NULL;
   a file there that is not the one is said and left. */
static char *find_in(const struct cgt_locator *l, const char *dir, const struct cgt_module *m,
		     const char *kind)
{
	char *foreign;
	char *found = cgt_build_id_cache_find(dir, m->build_id, m->build_id_len, kind, &foreign);
	if (foreign != NULL) {
		warn(l, "%s is not the file of build-id it is filed under; ignored", foreign);
		free(foreign);
	}
	return found;
}

/* The elf (and debug, if there) of m in the cache-laid-out dir.  1 found,
   0 not. */
static int from_cache_dir(const struct cgt_locator *l, const char *dir, const struct cgt_module *m,
			  struct cgt_module_files *f)
{
	if ((f->elf = find_in(l, dir, m, "elf")) == NULL)
		return 0;
	f->debug = find_in(l, dir, m, "debug");
	return 1;
}

/* m's file of kind ("elf", "debug") from the archive, unpacked, or NULL;
   one that cannot be unpacked or is not the one is said and left. */
static char *from_archive(const struct cgt_locator *l, const struct cgt_module *m,
			  const char *kind)
{
	char *member = cgt_build_id_path("build-id", m->build_id, m->build_id_len, kind), *path;
	struct cgt_error e;
	int rc = member != NULL ? cgt_archive_unpack_member(l->o.archive, member, &path, &e) : 0;
	free(member);
	if (rc < 0)
		warn(l, "%s", e.msg);
	if (rc <= 0)
		return NULL;
	int has = cgt_file_has_build_id(path, m->build_id, m->build_id_len);
	if (has == 0)
		warn(l, "%s is not the file of build-id it is filed under; ignored", path);
	if (has != 1) {
		free(path);
		return NULL;
	}
	return path;
}

static int timeout_of(const struct cgt_locator *l)
{
	return l->o.debuginfod_timeout > 0 ? l->o.debuginfod_timeout : 10;
}

/* Gives up on a request past its deadline (libdebuginfod calls this while
   it waits, also for a server that does not answer). */
static int debuginfod_progress(debuginfod_client *c, long done, long total)
{
	(void)done;
	(void)total;
	const struct cgt_locator *l = debuginfod_get_user_data(c);
	return time(NULL) > l->deadline;
}

/* A file of build-id id from the servers of DEBUGINFOD_URLS (debuginfo:
   the debug file, else the executable); its path in libdebuginfod's own
   cache (malloc'd), or NULL. */
static char *from_debuginfod(struct cgt_locator *l, const struct cgt_module *m, int debuginfo,
			     const char **why)
{
	if (l->debuginfod_failed) {
		*why = "debuginfod did not answer";
		return NULL;
	}
	if (l->debuginfod == NULL) {
		l->debuginfod = debuginfod_begin();
		if (l->debuginfod == NULL) {
			*why = "libdebuginfod could not start";
			l->debuginfod_failed = 1;
			return NULL;
		}
		debuginfod_set_user_data(l->debuginfod, l);
		debuginfod_set_progressfn(l->debuginfod, debuginfod_progress);
	}
	char *path = NULL;
	l->deadline = time(NULL) + timeout_of(l);
	int fd = debuginfo ? debuginfod_find_debuginfo(l->debuginfod, m->build_id, (int)m->build_id_len, &path)
			   : debuginfod_find_executable(l->debuginfod, m->build_id, (int)m->build_id_len, &path);
	if (fd < 0) {
		*why = "the debuginfod servers do not have it";
		/* Given up by debuginfod_progress, it says -ENOENT too. */
		if (fd != -ENOENT || time(NULL) > l->deadline) {
			/* unreachable or too slow: not asked again this run */
			*why = "debuginfod did not answer in time";
			l->debuginfod_failed = 1;
			warn(l, "the debuginfod servers (DEBUGINFOD_URLS) did not answer within %d s "
				"(DEBUGINFOD_TIMEOUT); not asked again",
			     timeout_of(l));
		}
		free(path);
		return NULL;
	}
	close(fd);
	if (path != NULL && cgt_file_has_build_id(path, m->build_id, m->build_id_len) != 1) {
		warn(l, "%s, from debuginfod, does not have the build-id asked for; ignored", path);
		free(path);
		*why = "debuginfod sent another file";
		return NULL;
	}
	return path;
}

/* Whether the module file at path has no line tables of its own and no
   separate debug file where Valgrind looks (beside it, /usr/lib/debug). */
static int lacks_debug_info(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), dbg_fd;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	int lacks = 0;
	if (elf != NULL && elf_section(elf, ".debug_info") == NULL) {
		Elf *dbg = debug_file_open(elf, path, NULL, &dbg_fd);
		lacks = dbg == NULL;
		if (dbg != NULL) {
			elf_end(dbg);
			close(dbg_fd);
		}
	}
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return lacks;
}

/* A module file found without its debug file, which it needs: the debug
   file from the places after the one the file came from. */
static void find_debug(struct cgt_locator *l, const struct cgt_module *m, struct cgt_module_files *f)
{
	if (f->debug != NULL || m->build_id_len < 2 || !lacks_debug_info(f->elf))
		return;
	if (f->source < CGT_MODULE_CACHE && l->o.build_id_dir != NULL)
		f->debug = find_in(l, l->o.build_id_dir, m, "debug");
	if (f->debug == NULL && f->source < CGT_MODULE_ARCHIVE && l->o.archive != NULL)
		f->debug = from_archive(l, m, "debug");
	const char *why;
	if (f->debug == NULL && l->o.debuginfod)
		f->debug = from_debuginfod(l, m, 1, &why);
}

static int locate(struct cgt_locator *l, const struct cgt_module *m, struct cgt_module_files *f,
		  struct cgt_error *e);

int cgt_locate_module(struct cgt_locator *l, const struct cgt_module *m, struct cgt_module_files *f,
		      struct cgt_error *e)
{
	int rc = locate(l, m, f, e);
	if (rc == 0 && f->source != CGT_MODULE_NOWHERE)
		find_debug(l, m, f);
	return rc;
}

static int locate(struct cgt_locator *l, const struct cgt_module *m, struct cgt_module_files *f,
		  struct cgt_error *e)
{
	const char *why_path = NULL;
	memset(f, 0, sizeof(*f));
	if (cgt_module_matches_file(m, &why_path)) {
		f->source = CGT_MODULE_RECORDED_PATH;
		if ((f->elf = strdup(m->path)) == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		return 0;
	}
	if (m->build_id_len < 2) {
		/* Nothing to look it up by elsewhere. */
		if (asprintf(&f->why, "%s and has no build-id to find it by", why_path) < 0)
			f->why = NULL;
		return 0;
	}
	const char *why_cache = "no build-id cache";
	if (l->o.build_id_dir != NULL) {
		if (from_cache_dir(l, l->o.build_id_dir, m, f)) {
			f->source = CGT_MODULE_CACHE;
			return 0;
		}
		why_cache = "not in the build-id cache";
	}
	const char *why_archive = "no archive";
	if (l->o.archive != NULL) {
		if ((f->elf = from_archive(l, m, "elf")) != NULL) {
			f->debug = from_archive(l, m, "debug");
			f->source = CGT_MODULE_ARCHIVE;
			return 0;
		}
		why_archive = "not in the archive";
	}
	const char *why_debuginfod = NULL;
	if (l->o.debuginfod) {
		f->elf = from_debuginfod(l, m, 0, &why_debuginfod);
		if (f->elf != NULL) {
			f->source = CGT_MODULE_DEBUGINFOD;
			return 0;
		}
	} else {
		why_debuginfod = "no debuginfod server is named (DEBUGINFOD_URLS)";
	}
	char hex[2 * 64 + 1];
	cgt_build_id_hex(m->build_id, m->build_id_len, hex, sizeof(hex));
	if (asprintf(&f->why, "%s; its build-id %s: %s, %s, and %s", why_path, hex, why_cache,
		     why_archive, why_debuginfod) < 0)
		f->why = NULL;
	return 0;
}
