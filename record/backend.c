/*
 * Shared by the recording backends (backend.h).
 */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

int record_header_init(struct cgt_trace_header *h, const char *backend, char *const *argv,
		       long pid)
{
	struct timespec now;
	char cwd[PATH_MAX];

	memset(h, 0, sizeof(*h));
	h->backend = strdup(backend);
	while (argv[h->argc] != NULL)
		h->argc++;
	h->argv = calloc(h->argc + 1, sizeof(char *));
	if (h->backend == NULL || h->argv == NULL)
		return -1;
	for (uint32_t i = 0; i < h->argc; i++)
		if ((h->argv[i] = strdup(argv[i])) == NULL)
			return -1;
	h->cwd = strdup(getcwd(cwd, sizeof(cwd)) ? cwd : "");
	h->pid = (uint64_t)pid;
	clock_gettime(CLOCK_REALTIME, &now);
	h->start_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	cgt_host_describe(h);
	return h->cwd && h->cpu_vendor && h->cpu_name ? 0 : -1;
}

int record_open_output(const char *path, struct cgt_error *e)
{
	if (cgt_output_check(path, CGT_OUTPUT_TRACE, NULL, 0, e) < 0)
		return -1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		cgt_fail(e, cgt_err_io, "cannot write the trace to '%s': %s", path, strerror(errno));
	return fd;
}

int record_open_output_temporary(struct cgt_output *o, const char *path, struct cgt_error *e)
{
	if (cgt_output_check(path, CGT_OUTPUT_TRACE, NULL, 0, e) < 0 ||
	    cgt_output_prepare(o, path, 0, e) < 0)
		return -1;
	int fd = open(o->write_path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		cgt_fail(e, cgt_err_io, "cannot write the trace to '%s': %s", path, strerror(errno));
	return fd;
}

int record_exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

/* SIGCHLD's disposition as cgtrace was started with (see backend.h). */
static void (*sigchld_given)(int) = SIG_DFL;

void record_take_sigchld(void)
{
	sigchld_given = signal(SIGCHLD, SIG_DFL);
	if (sigchld_given == SIG_ERR)
		sigchld_given = SIG_DFL;
}

void record_give_back_sigchld(void)
{
	signal(SIGCHLD, sigchld_given);
}

static pid_t shielded_pid;

static void forward_signal(int sig)
{
	if (shielded_pid > 0)
		kill(shielded_pid, sig);
}

void record_shield_signals(pid_t pid)
{
	int on = pid > 0;
	struct sigaction fwd = { .sa_handler = forward_signal };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	shielded_pid = pid;
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGINT, on ? &ign : &dfl, NULL);
	sigaction(SIGQUIT, on ? &ign : &dfl, NULL);
	sigaction(SIGTERM, on ? &fwd : &dfl, NULL);
	sigaction(SIGHUP, on ? &fwd : &dfl, NULL);
	/* Writing to a pipe whose reader has gone must fail quietly. */
	sigaction(SIGPIPE, on ? &ign : &dfl, NULL);
}

/* "cgtrace: MSG\n" in buf; its length (a long message is cut short, but
   still ends its line). */
static size_t format_note(char *buf, size_t size, const char *fmt, va_list ap)
{
	static const char prefix[] = "cgtrace: ";
	size_t len = sizeof(prefix) - 1;

	memcpy(buf, prefix, len);
	int n = vsnprintf(buf + len, size - len - 1, fmt, ap);
	len = n < 0 ? len : len + (size_t)n < size - 1 ? len + (size_t)n : size - 2;
	buf[len++] = '\n';
	return len;
}

#define NOTE_BYTES 8192	/* a message names a path or two */

void record_note(FILE *notes, const char *fmt, ...)
{
	char buf[NOTE_BYTES];
	va_list ap;

	if (notes == NULL)
		return;
	va_start(ap, fmt);
	size_t len = format_note(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fwrite(buf, 1, len, notes);
	fflush(notes);
}

void record_child_note(int fd, const char *fmt, ...)
{
	char buf[NOTE_BYTES];
	va_list ap;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	size_t len = format_note(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ssize_t written = write(fd, buf, len);
	(void)written;	/* if it fails, there is nowhere left to say so */
}

void record_keep_module(struct record_build_ids *b, const struct cgt_module *m)
{
	if (b->dir == NULL || b->failed)
		return;
	if (cgt_build_id_cache_store(b->dir, m, &b->added, &b->error) < 0)
		b->failed = 1;
}

const char *record_build_ids_report(const struct record_build_ids *b, FILE *notes, char *buf,
				    size_t cap)
{
	if (b->dir == NULL)
		return "";
	if (b->failed) {
		record_note(notes, "warning: the modules were not kept in the build-id cache: %s",
			    b->error.msg);
		return "";
	}
	snprintf(buf, cap, "; build-id cache %s: %llu new file%s, %.1f MB copied", b->dir,
		 (unsigned long long)b->added.files, b->added.files == 1 ? "" : "s",
		 (double)b->added.bytes_copied / 1e6);
	return buf;
}
