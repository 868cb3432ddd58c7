/*
 * A recording session: pipe -> converter -> trace writer -> file.
 */
#include "vg_session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "record.h"

#define TOOL_NAME "cgtrace-amd64-linux"

char *vg_self_exe(void)
{
	return realpath("/proc/self/exe", NULL);
}

char *vg_tool_path(void)
{
	char *exe = vg_self_exe(), *path = NULL;

	if (exe == NULL)
		return NULL;
	char *slash = strrchr(exe, '/');
	*slash = '\0';
	if (asprintf(&path, "%s/lib/cgtrace/%s", exe, TOOL_NAME) < 0)
		path = NULL;
	free(exe);
	return path;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Hands every buffer straight back until the tool is done.  A program to
   stop gets SIGTERM at once and SIGKILL once the grace time is over. */
static void drain(const struct vg_transport *t, pid_t stop_pid)
{
	long long kill_at = now_ms() + VG_STOP_GRACE_MS;
	uint32_t msg[2];
	ssize_t n;

	if (stop_pid > 0)
		kill(stop_pid, SIGTERM);
	for (;;) {
		if (stop_pid > 0) {
			long long left = kill_at - now_ms();
			struct pollfd p = { .fd = t->ready[0], .events = POLLIN };
			if (left <= 0) {
				kill(stop_pid, SIGKILL);
				stop_pid = 0;
			} else if (poll(&p, 1, (int)left) <= 0) {
				continue;	/* time out, or a signal: look at the clock again */
			}
		}
		if ((n = read(t->ready[0], msg, sizeof(msg))) == 0)
			break;
		if (n < 0 && errno != EINTR)
			break;
		if (n == (ssize_t)sizeof(msg) && write(t->freed[1], &msg[0], sizeof(msg[0])) < 0)
			break;
	}
}

void vg_session_run(struct vg_session *s, const struct vg_transport *t)
{
	if (!s->failed && cgt_writer_open(&s->writer, s->out_fd, s->path, &s->error) == 0 &&
	    vg_stream_convert(t, s->writer, &s->header, &s->stream, &s->error) == 0)
		return;
	s->failed = 1;
	s->stopped = s->stop_pid > 0 && s->stream.header_written;
	drain(t, s->stop_pid);
}

int vg_session_finish(struct vg_session *s, const struct cgt_trace_end *end)
{
	struct cgt_buf b = { 0 };
	int rc = 0;

	if (s->writer != NULL) {
		if (end != NULL && !s->failed && s->stream.header_written) {
			rc = cgt_end_encode(&b, end);
			if (rc == 0)
				rc = cgt_writer_put(s->writer, CGT_REC_END, b.data, b.len, &s->error);
		}
		if (cgt_writer_close(s->writer, rc < 0 || s->failed ? NULL : &s->error) < 0)
			rc = -1;
		s->writer = NULL;
	}
	if (s->out_fd >= 0 && close(s->out_fd) < 0 && rc == 0)
		rc = cgt_fail(&s->error, cgt_err_io, "%s: %s", s->path, strerror(errno));
	s->out_fd = -1;
	cgt_buf_free(&b);
	cgt_header_free(&s->header);
	if (rc < 0)
		s->failed = 1;
	return s->failed ? -1 : 0;
}

void vg_session_report(const struct vg_session *s, FILE *notes)
{
	struct stat st;
	char n[CGT_COUNT_TEXT];
	uint64_t insns = s->stream.counts.insns;
	double bytes = stat(s->path, &st) == 0 ? (double)st.st_size : 0;

	char cache[4200];
	const char *kept = record_build_ids_report(&s->stream.build_ids, notes, cache, sizeof(cache));
	record_note(notes, "recorded %s instructions into %s (%.1f MB, %.3f bytes per instruction%s)",
		    cgt_format_count(insns, n), s->path, bytes / 1e6, insns ? bytes / (double)insns : 0.0,
		    kept);
}
