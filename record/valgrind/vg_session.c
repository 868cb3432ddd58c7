/*
 * A recording session: pipe -> converter -> trace writer -> file; and, at
 * each fork of the program, a session forked for the child.
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
#include <sys/wait.h>
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

/* Hands every buffer straight back until the tool is done, and closes the
   transports of the children it forks, whose tools then stop recording.
   A program to stop gets SIGTERM at once and SIGKILL once the grace time
   is over. */
static void drain(const struct vg_transport *t, pid_t stop_pid)
{
	long long kill_at = now_ms() + VG_STOP_GRACE_MS;
	uint32_t msg[2];
	ssize_t n;

	int ctl = t->ctl[0];	/* -1 once the tool has closed it */

	if (stop_pid > 0)
		kill(stop_pid, SIGTERM);
	for (;;) {
		long long left = kill_at - now_ms();
		struct pollfd p[2] = { { .fd = t->ready[0], .events = POLLIN },
				       { .fd = ctl, .events = POLLIN } };
		if (stop_pid > 0 && left <= 0) {
			kill(stop_pid, SIGKILL);
			stop_pid = 0;
		}
		if (poll(p, 2, stop_pid > 0 ? (int)left : -1) <= 0)
			continue;	/* time out, or a signal: look at the clock again */
		if (p[1].revents) {
			struct vg_transport child;
			if (vg_transport_receive_fork(t, &child) == 0)
				vg_transport_close(&child);
			else if (errno != EAGAIN && errno != EINTR)
				ctl = -1;
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if ((n = read(t->ready[0], msg, sizeof(msg))) == 0)
			break;
		if (n < 0 && errno != EINTR)
			break;
		if (n == (ssize_t)sizeof(msg) && write(t->freed[1], &msg[0], sizeof(msg[0])) < 0)
			break;
	}
}

/* In a fork child's sink: sets up its trace (a first frame with its own
   HEADER, room for the parent's trace up to the fork) and the session to
   write it.  parent_end: the parent's trace's size at the fork. */
static int child_begin(struct vg_session *s, long pid, int64_t parent_end)
{
	const char *why;
	char *path = cgt_expand_output_name(s->tmpl, pid, &why);
	char proc[64];
	struct cgt_reader *r = NULL;
	struct cgt_frame first = { 0 };
	struct cgt_record rec;
	struct cgt_buf b = { 0 };
	int64_t end;
	int rc = -1;

	s->fork_child = 1;
	s->parent_fd = -1;
	/* Its summary line says what it adds to the build-id cache itself. */
	memset(&s->stream.build_ids.added, 0, sizeof(s->stream.build_ids.added));
	s->header.forked_from = s->header.pid;
	s->header.pid = (uint64_t)pid;
	if (path == NULL) {
		cgt_fail(&s->error, cgt_err_nomem, "%s", why);
		goto out;
	}
	if (strcmp(path, s->path) == 0) {
		cgt_fail(&s->error, cgt_err_invalid,
			 "its trace would replace its parent's: the output name has no %%p (e.g. "
			 "-o trace.%%p.zst names each process's trace by its pid)");
		goto out;
	}
	if (parent_end < 0) {
		cgt_fail(&s->error, cgt_err_io,
			 "its trace begins with its parent's, which goes to %s, not a file it can be "
			 "read back from", s->path);
		goto out;
	}
	/* The parent's trace, read back at the end: by descriptor, whatever
	   happens to its name. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s->out_fd);
	s->parent_fd = open(proc, O_RDONLY | O_CLOEXEC);
	if (s->parent_fd < 0) {
		cgt_fail(&s->error, cgt_err_io, "cannot read back its parent's trace %s: %s", s->path,
			 strerror(errno));
		goto out;
	}
	close(s->out_fd);
	s->out_fd = -1;
	/* Its first frame holds the stream header and the HEADER alone
	   (vg_stream.c flushes after it): the child's replaces it. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", s->parent_fd);
	if (cgt_reader_open(&r, proc, &s->error) < 0 ||
	    cgt_reader_take_frame(r, &first, &s->error) < 0 || cgt_frame_decompress(&first, &s->error) < 0 ||
	    cgt_frame_next_record(&first, &rec, &s->error) < 0)
		goto out;
	if (rec.type != CGT_REC_HEADER || cgt_frame_next_record(&first, &rec, &s->error) != 0 ||
	    first.compressed_len > (uint64_t)parent_end) {
		cgt_fail(&s->error, cgt_err_corrupt, "%s: its first frame holds more than its header",
			 s->path);
		goto out;
	}
	s->parent_from = first.compressed_len;
	s->parent_to = (uint64_t)parent_end;

	s->out_fd = record_open_output_temporary(&s->child_output, path, &s->error);
	if (s->out_fd < 0)
		goto out;
	if (s->child_output.temporary == NULL) {
		cgt_fail(&s->error, cgt_err_io,
			 "%s is not a regular file, and its trace is written in an order only a file "
			 "allows", path);
		goto out;
	}
	s->path = s->child_output.path;
	if (cgt_writer_open(&s->writer, s->out_fd, s->path, &s->error) < 0)
		goto out;
	if (cgt_header_encode(&b, &s->header) < 0) {
		cgt_fail(&s->error, cgt_err_nomem, "out of memory");
		goto out;
	}
	if (cgt_writer_put(s->writer, CGT_REC_HEADER, b.data, b.len, &s->error) < 0 ||
	    cgt_writer_sync(s->writer, &end, &s->error) < 0 ||
	    cgt_writer_skip(s->writer, s->parent_to - s->parent_from, &s->error) < 0)
		goto out;
	s->parent_at = (uint64_t)end;
	s->child_ready = 1;
	rc = 0;
out:
	cgt_buf_free(&b);
	cgt_frame_free(&first);
	if (r != NULL)
		cgt_reader_close(r);
	free(path);
	return rc;
}

static int copy_range(int from_fd, uint64_t from, uint64_t to, int to_fd, uint64_t at)
{
	static uint8_t buf[1 << 20];
	while (from < to) {
		size_t want = to - from < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t n = pread(from_fd, buf, want, (off_t)from);
		if (n == 0)
			errno = EIO;	/* the parent's trace was cut back */
		if (n <= 0)
			return -1;
		for (ssize_t done = 0, w; done < n; done += w)
			if ((w = pwrite(to_fd, buf + done, (size_t)(n - done), (off_t)at + done)) < 0)
				return -1;
		from += (uint64_t)n;
		at += (uint64_t)n;
	}
	return 0;
}

/* Fills a fork child's trace with its parent's (once). */
static int copy_parent(struct vg_session *s)
{
	if (s->parent_from < s->parent_to &&
	    copy_range(s->parent_fd, s->parent_from, s->parent_to, s->out_fd, s->parent_at) < 0)
		return cgt_fail(&s->error, cgt_err_io, "cannot copy its parent's trace into %s: %s",
				s->path, strerror(errno));
	s->parent_from = s->parent_to;
	return 0;
}

/* A fork child whose trace cannot be written: its stream is converted all
   the same, into nothing, since only its end says whether it is a process
   Valgrind's tools profile (one that calls execve is not), and so whether
   to say why it is not recorded. */
static void convert_to_nothing(struct vg_session *s)
{
	s->not_recorded = s->error;
	if (s->writer != NULL)
		cgt_writer_close(s->writer, NULL);
	s->writer = NULL;
	if (s->out_fd >= 0)
		close(s->out_fd);
	cgt_output_discard(&s->child_output);
	s->out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (s->out_fd < 0 || cgt_writer_open(&s->writer, s->out_fd, "/dev/null", &s->error) < 0)
		s->failed = 1;
}

/* The program forked: a sink for the child, forked from this one at this
   point of the stream, so that it has the conversion's state and the
   parent's trace up to here.  Returns 1 in the child's sink (*child is its
   transport), 0 in this one. */
static int fork_sink(struct vg_session *s, struct vg_stream *c, struct vg_transport *t,
		     struct vg_transport *child)
{
	long pid = (long)s->stream.fork_pid;
	int64_t end;

	if (vg_transport_receive_fork(t, child) < 0) {
		record_note(s->notes, "child %ld: not recorded: no transport came with its fork (%s)",
			    pid, strerror(errno));
		return 0;
	}
	/* A grandchild's trace begins with ours, which must be whole. */
	if (s->fork_child && copy_parent(s) < 0) {
		record_note(s->notes, "child %ld: not recorded: %s", pid, s->error.msg);
		vg_transport_close(child);
		return 0;
	}
	/* What the child's trace shares with ours, in the file; and nothing
	   buffered that both processes would write. */
	if (cgt_writer_sync(s->writer, &end, &s->error) < 0) {
		vg_transport_close(child);
		return 0;	/* our own trace's failure: the conversion meets it next */
	}
	fflush(NULL);
	pid_t sink = fork();
	if (sink != 0) {
		if (sink < 0)
			record_note(s->notes, "child %ld: not recorded: fork: %s", pid, strerror(errno));
		vg_transport_close(child);
		return 0;
	}
	vg_transport_close(t);
	cgt_writer_forsake(s->writer);	/* its thread stayed in the parent's sink */
	s->writer = NULL;
	vg_stream_follow_child(c);
	s->stop_pid = 0;
	if (child_begin(s, pid, end) < 0)
		convert_to_nothing(s);
	else
		s->stop_pid = (pid_t)pid;
	return 1;
}

/* The end of a fork child's sink: its trace completed and named, or
   dropped. */
static void child_finish(struct vg_session *s)
{
	struct cgt_trace_end end;
	const struct cgt_trace_end *has_end = vg_session_end_of_stream(s, &end);
	unsigned long long pid = s->header.pid, parent = s->header.forked_from;
	/* A child that called execve is not profiled by Valgrind's tools
	   (the new program, if followed, has a trace of its own). */
	int keep = s->child_ready && !s->stream.exec_ended;

	if (keep && copy_parent(s) < 0) {
		s->not_recorded = s->error;
		s->child_ready = keep = 0;
	}
	if (s->parent_fd >= 0)
		close(s->parent_fd);
	int rc = vg_session_finish(s, keep ? has_end : NULL);
	if (!keep) {
		if (!s->child_ready && !s->stream.exec_ended)
			record_note(s->notes, "child %llu (forked by %llu): not recorded: %s", pid,
				    parent, s->not_recorded.msg);
	} else if (cgt_output_commit(&s->child_output, &s->error) < 0) {
		record_note(s->notes, "child %llu: %s", pid, s->error.msg);
	} else {
		s->path = s->child_output.written;
		if (rc < 0)
			record_note(s->notes, "child %llu: %s; %s holds its trace up to there, without "
					      "an end record", pid, s->error.msg, s->path);
		else if (has_end == NULL)
			record_note(s->notes, "the stream of child %llu ended early (killed by a signal "
					      "Valgrind cannot see coming?); %s holds what arrived, "
					      "without an end record", pid, s->path);
		if (rc == 0 && !s->quiet)
			vg_session_report(s, s->notes);
	}
	cgt_output_discard(&s->child_output);
	record_children_wait(NULL);	/* the sinks of its own children */
	_exit(0);
}

void vg_session_run(struct vg_session *s, struct vg_transport *t)
{
	struct vg_stream *c = NULL;
	struct vg_transport child, forked;	/* a fork child's sink's own; the next's */
	int rc = -1;

	if (!s->failed && cgt_writer_open(&s->writer, s->out_fd, s->path, &s->error) == 0 &&
	    vg_stream_open(&c, &s->header, &s->stream, &s->error) == 0) {
		while (!s->failed && (rc = vg_stream_run(c, t, s->writer)) == VG_STREAM_FORK) {
			if (fork_sink(s, c, t, &forked) == 1) {
				child = forked;
				t = &child;
			}
		}
	}
	vg_stream_close(c);
	if (s->failed || rc < 0) {
		s->failed = 1;
		s->stopped = s->stop_pid > 0 && s->stream.header_written;
		drain(t, s->stop_pid);
	}
	if (s->fork_child)
		child_finish(s);
}

void vg_session_drop(struct vg_session *s)
{
	struct stat mine, named;
	if (s->out_fd >= 0 && fstat(s->out_fd, &mine) == 0 && stat(s->path, &named) == 0 &&
	    mine.st_dev == named.st_dev && mine.st_ino == named.st_ino)
		unlink(s->path);
	vg_session_finish(s, NULL);
}

const struct cgt_trace_end *vg_session_end_of_stream(const struct vg_session *s,
						     struct cgt_trace_end *end)
{
	memset(end, 0, sizeof(*end));
	end->counts = s->stream.counts;
	if (!s->stream.fini_seen)
		return NULL;
	if (s->stream.exit_called) {
		end->kind = CGT_END_EXIT;
		end->code = s->stream.exit_code;
	} else {
		/* Valgrind tells its tool no more: a fatal signal. */
		end->kind = CGT_END_SIGNAL;
	}
	return end;
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
	/* as simulate counts them (what executions cut by a fault ran up to
	   it is in the trace; info says how much) */
	uint64_t insns = s->stream.counts.insns - s->stream.uncounted.insns;
	double bytes = stat(s->path, &st) == 0 ? (double)st.st_size : 0;

	char cache[4200];
	const char *kept = record_build_ids_report(&s->stream.build_ids, notes, cache, sizeof(cache));
	record_note(notes, "recorded %s instructions into %s (%.1f MB, %.3f bytes per instruction%s)",
		    cgt_format_count(insns, n), s->path, bytes / 1e6, insns ? bytes / (double)insns : 0.0,
		    kept);
	if (s->stream.cuts_unplaced)
		record_note(notes, "warning: %s execution%s cut short by a fault at no data access "
			    "(a division's SIGFPE): where %s stopped is not known, and only %s start "
			    "is in the trace",
			    cgt_format_count(s->stream.cuts_unplaced, n),
			    s->stream.cuts_unplaced == 1 ? "" : "s",
			    s->stream.cuts_unplaced == 1 ? "it" : "they",
			    s->stream.cuts_unplaced == 1 ? "its" : "their");
}
