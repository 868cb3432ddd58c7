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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "symbols.h"

struct cgt_locator {
	struct cgt_locator_options o;
	debuginfod_client *debuginfod;	/* NULL until asked */
	const char *debuginfod_problem;	/* why it is not asked again in this run */
	int64_t deadline_ns;		/* of the current debuginfod request (monotonic) */
	enum { GIVEN_UP_NOT, GIVEN_UP_TIME, GIVEN_UP_SIZE } given_up;	/* by debuginfod_progress */
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

/* A file as large as the largest debug files, yet no disk filled by a
   server that never ends one. */
static uint64_t max_bytes_of(const struct cgt_locator *l)
{
	return l->o.debuginfod_max_bytes > 0 ? l->o.debuginfod_max_bytes : (uint64_t)4 << 30;
}

static int64_t monotonic_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* Gives up on a request past its deadline, or on a file larger than the
   limit.  libdebuginfod calls this while it waits and while it receives
   (a file is coming once it knows the file's URL: done is then the bytes
   received, total the size announced or 0). */
static int debuginfod_progress(debuginfod_client *c, long done, long total)
{
	struct cgt_locator *l = debuginfod_get_user_data(c);
	uint64_t max = max_bytes_of(l);
	if ((debuginfod_get_url(c) != NULL && done > 0 && (uint64_t)done > max) ||
	    (total > 0 && (uint64_t)total > max))
		l->given_up = GIVEN_UP_SIZE;
	else if (monotonic_ns() >= l->deadline_ns)
		l->given_up = GIVEN_UP_TIME;
	return l->given_up != GIVEN_UP_NOT;
}

/* What a request failed with (libdebuginfod's negative errno) means. */
static const char *debuginfod_failure(int fd)
{
	switch (-fd) {
	case ECONNREFUSED:
		return "the connection was refused";
	case ECONNRESET:
		return "the connection broke, or the answer was malformed";
	case EHOSTUNREACH:
		return "the host was not found";
	case ETIME:
		return "too slow (DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME)";
	case EFBIG:
		return "the file is larger than DEBUGINFOD_MAXSIZE";
	case EMLINK:
		return "redirected too many times";
	case EACCES:
		return "access denied";
	case EINVAL:
		return "a malformed URL or build-id";
	}
	return strerror(-fd);
}

/* libdebuginfod (0.188) notes a request given up by the progress
   function, or failed after a file began to come, as a miss: an empty
   file where the file would be, believed for cache_miss_s.  The servers
   never said they had no such file, so that note is removed (the one made
   since the request started), and the next run asks them again. */
static void forget_miss(const struct cgt_locator *l, const char *hex, int debuginfo, time_t started)
{
	char *path;
	struct stat st;
	if (l->o.debuginfod_cache == NULL ||
	    asprintf(&path, "%s/%s/%s", l->o.debuginfod_cache, hex, debuginfo ? "debuginfo" : "executable") < 0)
		return;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 && st.st_mtime >= started)
		unlink(path);
	free(path);
}

/* What the file at path is, said of a file refused: "not an ELF file", or
   which build-id it has (in buf). */
static const char *what_file_is(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	uint8_t id[64];
	size_t id_len = 0;
	const char *what = "not an ELF file";
	if (elf != NULL && elf_kind(elf) == ELF_K_ELF) {
		what = "an ELF file with no build-id to be read (cut short?)";
		id_len = cgt_elf_build_id(elf, id, sizeof(id));
	}
	if (id_len > 0) {
		char hex[2 * 64 + 1];
		cgt_build_id_hex(id, id_len, hex, sizeof(hex));
		snprintf(buf, cap, "the file of build-id %s", hex);
		what = buf;
	}
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return what;
}

/* A server's failure, said once: debuginfod is not asked again in the
   run.  from: the URL a file came from, else NULL (the servers). */
static void debuginfod_fails(struct cgt_locator *l, const char *from, const char *hex, int debuginfo,
			     const char *problem)
{
	if (from != NULL)
		warn(l, "debuginfod: %s: %s; not asked again in this run", from, problem);
	else
		warn(l, "debuginfod: DEBUGINFOD_URLS=%s, asked for the %s of build-id %s: %s; "
			"not asked again in this run",
		     l->o.debuginfod_urls, debuginfo ? "debug file" : "module file", hex, problem);
	l->debuginfod_problem = "debuginfod failed in this run";
}

/* One request (see from_debuginfod): the path of a file with m's
   build-id, or NULL with *why set; *ask_again set when libdebuginfod's
   cache held a file that is not m's, now removed. */
static char *ask_debuginfod(struct cgt_locator *l, const struct cgt_module *m, int debuginfo,
			    const char **why, int *ask_again)
{
	char hex[2 * 64 + 1], problem[200], what_buf[160];
	cgt_build_id_hex(m->build_id, m->build_id_len, hex, sizeof(hex));
	char *path = NULL;
	time_t started = time(NULL);
	l->given_up = GIVEN_UP_NOT;
	l->deadline_ns = monotonic_ns() + (int64_t)timeout_of(l) * 1000000000;
	int fd = debuginfo ? debuginfod_find_debuginfo(l->debuginfod, m->build_id, (int)m->build_id_len, &path)
			   : debuginfod_find_executable(l->debuginfod, m->build_id, (int)m->build_id_len, &path);
	/* The URL a file came from in this request; NULL for a file from
	   libdebuginfod's cache, or none. */
	const char *from = debuginfod_get_url(l->debuginfod);
	*ask_again = 0;
	if (fd < 0) {
		free(path);
		*why = "the debuginfod servers do not have it";
		if (fd == -ENOENT && from == NULL && l->given_up == GIVEN_UP_NOT)
			return NULL;
		if (l->given_up == GIVEN_UP_SIZE)
			snprintf(problem, sizeof(problem), "more than %llu bytes (DEBUGINFOD_MAXSIZE)",
				 (unsigned long long)max_bytes_of(l));
		else if (l->given_up == GIVEN_UP_TIME)
			snprintf(problem, sizeof(problem), "%s %d s (DEBUGINFOD_TIMEOUT)",
				 from != NULL ? "still coming after" : "no answer within", timeout_of(l));
		else
			snprintf(problem, sizeof(problem), "%s",
				 fd == -ENOENT ? "broken off before the file's end" : debuginfod_failure(fd));
		forget_miss(l, hex, debuginfo, started);
		debuginfod_fails(l, from, hex, debuginfo, problem);
		*why = l->debuginfod_problem;
		return NULL;
	}
	close(fd);
	if (path == NULL) {
		*why = "out of memory";
		return NULL;
	}
	if (cgt_file_has_build_id(path, m->build_id, m->build_id_len) == 1)
		return path;
	/* Not m's file: removed from libdebuginfod's cache, so that it is
	   not given again instead of asking the servers. */
	const char *what = what_file_is(path, what_buf, sizeof(what_buf));
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		unlink(path);
	if (from != NULL) {
		snprintf(problem, sizeof(problem), "refused, %s", what);
		debuginfod_fails(l, from, hex, debuginfo, problem);
		*why = l->debuginfod_problem;
	} else {
		warn(l, "debuginfod: %s, in libdebuginfod's cache for build-id %s, is %s; removed", path, hex,
		     what);
		*ask_again = 1;
	}
	free(path);
	return NULL;
}

/* A file of build-id id from the servers of DEBUGINFOD_URLS (debuginfo:
   the debug file, else the module file); its path in libdebuginfod's own
   cache (malloc'd), or NULL with *why set. */
static char *from_debuginfod(struct cgt_locator *l, const struct cgt_module *m, int debuginfo,
			     const char **why)
{
	if (l->debuginfod_problem != NULL) {
		*why = l->debuginfod_problem;
		return NULL;
	}
	if (l->debuginfod == NULL) {
		l->debuginfod = debuginfod_begin();
		if (l->debuginfod == NULL) {
			l->debuginfod_problem = *why = "libdebuginfod could not start";
			return NULL;
		}
		debuginfod_set_user_data(l->debuginfod, l);
		debuginfod_set_progressfn(l->debuginfod, debuginfod_progress);
	}
	int ask_again;
	char *path = ask_debuginfod(l, m, debuginfo, why, &ask_again);
	if (ask_again)
		path = ask_debuginfod(l, m, debuginfo, why, &ask_again);
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
	if (f->debug == NULL && l->o.debuginfod_urls != NULL)
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
	if (l->o.debuginfod_urls != NULL) {
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
