/*
 * The pt backend's recording session (pt_record.h).
 *
 * perf's own workload flow: fork; the child waits on a pipe; the parent
 * opens the events for the child on every CPU (per-CPU events with
 * inherit, so that threads are followed), maps the buffers and lets the
 * child exec; the events enable themselves at that exec.  On each CPU the
 * sideband and memory events write into the ring of that CPU's leader (the
 * intel_pt event, or the sideband event when there is no trace), so one
 * ring per CPU holds every record in order.
 *
 * A reader thread polls the rings and writes each perf record as a
 * SIDEBAND record and each piece of packet stream as an AUX record; an
 * executable file mapping of the program also becomes a MODULE record, and
 * the vdso an IMAGE record, so that the decoder and the symboliser need
 * nothing from this host later.
 */
#include "pt_record.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "perf_ring.h"
#include "pt_access.h"
#include "pt_events.h"

/* perf's sizes: privileged (as allowed) and unprivileged (perf-intel-pt). */
#define AUX_BYTES_LARGE (4u << 20)
#define AUX_BYTES_SMALL (128u << 10)
#define DATA_PAGES 64
#define AUX_CHUNK (CGT_RECORD_MAX - 64)

struct pt_cpu {
	int fd[PT_EV_COUNT];
	int leader;		/* index into fd of the event that owns the ring */
	struct perf_ring ring;
	int truncated;		/* the trace event was disabled: buffer full */
};

struct pt_session {
	const struct cgt_record_options *o;
	int trace;
	struct pt_event_set events;
	unsigned n_cpus;
	struct pt_cpu *cpus;
	size_t aux_bytes;
	pid_t pid;

	char *path;
	int out_fd;
	struct cgt_writer *writer;
	struct cgt_buf buf;
	struct cgt_error error;
	int failed;

	pthread_t reader;
	int reader_started, stop;
	uint64_t aux_total, sideband_records, lost_records, truncations, modules;
	struct record_build_ids build_ids;
	int vdso_written;
};

static long perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

/* Writes one record; the first failure sticks (later writes are skipped). */
static void put(struct pt_session *s, unsigned type)
{
	if (!s->failed && cgt_writer_put(s->writer, type, s->buf.data, s->buf.len, &s->error) < 0)
		s->failed = 1;
	s->buf.len = 0;
}

static void encode_failed(struct pt_session *s)
{
	if (!s->failed)
		cgt_fail(&s->error, cgt_err_nomem, "out of memory");
	s->failed = 1;
	s->buf.len = 0;
}

/* This process's vdso: the same kernel maps the same bytes into the
   program, at an address of its own. */
static int own_vdso(const uint8_t **bytes, size_t *len)
{
	unsigned long start = getauxval(AT_SYSINFO_EHDR);
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	int rc = -1;

	if (start == 0 || maps == NULL) {
		if (maps)
			fclose(maps);
		return -1;
	}
	while (fgets(line, sizeof(line), maps) != NULL) {
		unsigned long lo, hi;
		if (strstr(line, "[vdso]") != NULL && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
		    lo == start) {
			*bytes = (const uint8_t *)lo;
			*len = hi - lo;
			rc = 0;
			break;
		}
	}
	fclose(maps);
	return rc;
}

/* An executable mapping of the program: a MODULE record for the
   symboliser, or for the vdso an IMAGE record with its bytes. */
static void note_mapping(struct pt_session *s, const struct cgt_perf_mmap2 *m)
{
	if (!(m->prot & PROT_EXEC) || m->pid != (uint32_t)s->pid)
		return;
	if (strcmp(m->filename, "[vdso]") == 0) {
		const uint8_t *bytes;
		size_t len;
		if (s->vdso_written || own_vdso(&bytes, &len) < 0)
			return;
		if (cgt_image_encode(&s->buf, m->addr, "[vdso]", bytes, len) < 0)
			return encode_failed(s);
		put(s, CGT_REC_IMAGE);
		s->vdso_written = 1;
		return;
	}
	if (m->filename[0] != '/')	/* [vsyscall], //anon: no file to read */
		return;
	struct cgt_module mod = { .start = m->addr, .size = m->len, .file_offset = m->pgoff,
				  .prot = 1 | 4, .path = (char *)m->filename };
	cgt_module_identify(&mod);
	record_keep_module(&s->build_ids, &mod);
	if (cgt_module_encode(&s->buf, &mod) < 0)
		return encode_failed(s);
	put(s, CGT_REC_MODULE);
	s->modules++;
}

static void handle_record(struct pt_session *s, unsigned cpu, const struct perf_event_header *h)
{
	const uint8_t *rec = (const uint8_t *)h;

	if (cgt_sideband_encode(&s->buf, cpu, rec, h->size) < 0)
		return encode_failed(s);
	put(s, CGT_REC_SIDEBAND);
	s->sideband_records++;
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		struct cgt_perf_mmap2 m;
		if (cgt_perf_mmap2_parse(rec, h->size, &m) == 0)
			note_mapping(s, &m);
		break;
	}
	case PERF_RECORD_AUX: {
		uint64_t flags;
		memcpy(&flags, rec + sizeof(*h) + 16, sizeof(flags));
		if (flags & PERF_AUX_FLAG_TRUNCATED) {
			s->truncations++;
			s->cpus[cpu].truncated = 1;
		}
		break;
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		s->lost_records++;
		break;
	default:
		break;
	}
}

static void drain_cpu(struct pt_session *s, unsigned cpu)
{
	struct pt_cpu *c = &s->cpus[cpu];
	const struct perf_event_header *h;

	while ((h = perf_ring_next(&c->ring)) != NULL)
		handle_record(s, cpu, h);
	perf_ring_release(&c->ring);
	if (c->ring.aux != NULL) {
		const uint8_t *piece[2];
		size_t len[2];
		uint64_t offset;
		perf_ring_aux_peek(&c->ring, &offset, piece, len);
		for (int i = 0; i < 2; i++) {
			for (size_t done = 0; done < len[i];) {
				size_t n = len[i] - done < AUX_CHUNK ? len[i] - done : AUX_CHUNK;
				if (cgt_aux_encode(&s->buf, cpu, offset, piece[i] + done, n) < 0)
					return encode_failed(s);
				put(s, CGT_REC_AUX);
				offset += n;
				done += n;
				s->aux_total += n;
			}
		}
		perf_ring_aux_release(&c->ring);
	}
	/* In full-trace mode a full buffer disables the event; once drained it
	   may run again.  The gap is in the trace's AUX records. */
	if (c->truncated) {
		c->truncated = 0;
		ioctl(c->fd[PT_EV_TRACE], PERF_EVENT_IOC_ENABLE, 0);
	}
}

static void *reader_main(void *arg)
{
	struct pt_session *s = arg;
	struct pollfd *fds = calloc(s->n_cpus, sizeof(*fds));

	for (unsigned i = 0; fds != NULL && i < s->n_cpus; i++)
		fds[i] = (struct pollfd){ .fd = s->cpus[i].fd[s->cpus[i].leader], .events = POLLIN };
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		if (fds != NULL)
			poll(fds, s->n_cpus, 50);
		else
			usleep(50000);
		for (unsigned i = 0; i < s->n_cpus; i++)
			drain_cpu(s, i);
	}
	/* The events stopped with the program: the kernel has published the
	   last of their data. */
	for (unsigned i = 0; i < s->n_cpus; i++)
		drain_cpu(s, i);
	free(fds);
	return NULL;
}

/* Opens event e on cpu for the program; the leader's ring receives the
   others' records.  0, or -errno. */
static int open_event(struct pt_session *s, unsigned cpu, int e, int group)
{
	struct pt_cpu *c = &s->cpus[cpu];
	long fd = perf_event_open(&s->events.attr[e], s->pid, (int)cpu, group, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	c->fd[e] = (int)fd;
	if (e != c->leader && ioctl(c->fd[e], PERF_EVENT_IOC_SET_OUTPUT, c->fd[c->leader]) < 0)
		return -errno;
	return 0;
}

static const char *event_name(int e)
{
	static const char *const names[PT_EV_COUNT] = { "intel_pt", "sideband (dummy)", "mem-loads-aux",
							 "mem-loads", "mem-stores" };
	return names[e];
}

static void close_events(struct pt_session *s, const int *which)
{
	for (unsigned i = 0; i < s->n_cpus; i++)
		for (int e = 0; e < PT_EV_COUNT; e++)
			if (which[e] && s->cpus[i].fd[e] >= 0) {
				close(s->cpus[i].fd[e]);
				s->cpus[i].fd[e] = -1;
			}
}

/* Every wanted event on every CPU, the rings mapped.  Memory events that
   cannot be opened are left out, with the reason in samples_missing.
   0, or a negative status with the message in e. */
static int open_events(struct pt_session *s, struct cgt_error *e)
{
	char why[512];
	int leader = s->trace ? PT_EV_TRACE : PT_EV_SIDEBAND;

	for (unsigned i = 0; i < s->n_cpus; i++) {
		struct pt_cpu *c = &s->cpus[i];
		c->leader = leader;
		int rc = open_event(s, i, leader, -1);
		if (rc == 0) {
			rc = perf_ring_map(&c->ring, c->fd[leader], DATA_PAGES,
					   s->trace ? s->aux_bytes : 0, why, sizeof(why));
			if (rc < 0)
				return cgt_fail(e, cgt_err_io, "CPU %u: %s%s", i, why,
						rc == -EPERM ? " (over the locked-memory limit: raise "
							       "'ulimit -l' or choose a smaller --pt-buffer)"
							     : "");
		}
		if (rc == 0)
			rc = open_event(s, i, PT_EV_SIDEBAND, -1);
		if (rc < 0) {
			int failed = c->fd[leader] < 0 ? leader : PT_EV_SIDEBAND;
			return cgt_fail(e, cgt_err_io, "cannot open the %s event on CPU %u: %s%s",
					event_name(failed), i, strerror(-rc),
					rc == -EACCES || rc == -EPERM
						? " (see kernel.perf_event_paranoid; CAP_PERFMON allows it)"
					: rc == -EBUSY ? " (another Intel PT or LBR user holds this CPU)"
						       : "");
		}
	}
	/* Memory sampling is best effort: the trace says what is missing. */
	static const int memory[PT_EV_COUNT] = { [PT_EV_LOADS_AUX] = 1, [PT_EV_LOADS] = 1,
						 [PT_EV_STORES] = 1 };
	for (int e = PT_EV_LOADS_AUX; e <= PT_EV_STORES && !s->events.samples_missing[0]; e++) {
		if (!s->events.wanted[e])
			continue;
		for (unsigned i = 0; i < s->n_cpus; i++) {
			struct pt_cpu *c = &s->cpus[i];
			int group = e == PT_EV_LOADS && c->fd[PT_EV_LOADS_AUX] >= 0 ? c->fd[PT_EV_LOADS_AUX] : -1;
			int rc = open_event(s, i, e, group);
			if (rc < 0) {
				snprintf(s->events.samples_missing, sizeof(s->events.samples_missing),
					 "the %s event could not be opened: %s", event_name(e), strerror(-rc));
				close_events(s, memory);
				break;
			}
		}
	}
	if (s->events.samples_missing[0])
		for (int e = PT_EV_LOADS_AUX; e <= PT_EV_STORES; e++)
			s->events.wanted[e] = 0;
	return 0;
}

static int kind_of(int e)
{
	return e == PT_EV_LOADS ? CGT_PT_EVENT_MEM_LOADS : e == PT_EV_STORES ? CGT_PT_EVENT_MEM_STORES
									     : CGT_PT_EVENT_TRACE;
}

/* PT_CONFIG: the events (with their ids) and the time conversion. */
static void write_config(struct pt_session *s)
{
	struct cgt_pt_config c = { 0 };
	uint64_t *ids = calloc((size_t)PT_EV_COUNT * s->n_cpus, sizeof(*ids));
	const struct perf_event_mmap_page *page = perf_ring_page(&s->cpus[0].ring);

	if (ids == NULL)
		return encode_failed(s);
	c.mtc_period = s->events.mtc_period;
	c.cpuid15_eax = s->events.cpuid15_eax;
	c.cpuid15_ebx = s->events.cpuid15_ebx;
	c.nom_freq = s->events.nom_freq;
	c.time_shift = page->time_shift;
	c.time_mult = page->time_mult;
	c.time_zero = page->time_zero;
	c.cap_user_time_zero = page->cap_user_time_zero;
	/* The trace event first (the format wants it so), then the others;
	   without a trace, the sideband event stands in its place. */
	static const int order[] = { PT_EV_TRACE, PT_EV_SIDEBAND, PT_EV_LOADS, PT_EV_STORES };
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		int e = order[k];
		if (!s->events.wanted[e] || (e == PT_EV_SIDEBAND && s->trace))
			continue;
		struct cgt_pt_event *ev = &c.events[c.n_events++];
		const struct perf_event_attr *a = &s->events.attr[e];
		*ev = (struct cgt_pt_event){ kind_of(e), a->type, a->config, a->config1, a->sample_type,
					     a->sample_period, 0, ids + (size_t)e * s->n_cpus };
		for (unsigned i = 0; i < s->n_cpus; i++) {
			uint64_t id;
			int fd = s->cpus[i].fd[e];
			if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0)
				ev->ids[ev->n_ids++] = id;
		}
	}
	/* The sideband event's records travel with the trace event's kind. */
	if (s->trace && s->events.wanted[PT_EV_SIDEBAND]) {
		struct cgt_pt_event *ev = &c.events[0];
		for (unsigned i = 0; i < s->n_cpus; i++) {
			uint64_t id;
			if (s->cpus[i].fd[PT_EV_SIDEBAND] >= 0 &&
			    ioctl(s->cpus[i].fd[PT_EV_SIDEBAND], PERF_EVENT_IOC_ID, &id) == 0)
				ev->ids[ev->n_ids++] = id;
		}
	}
	c.samples_missing = s->events.samples_missing[0] ? s->events.samples_missing : NULL;
	if (cgt_pt_config_encode(&s->buf, &c) < 0)
		encode_failed(s);
	else
		put(s, CGT_REC_PT_CONFIG);
	free(ids);
}

/* The child: waits until the parent has opened everything, then execs.
   Between fork and exec it says why the program cannot run on notes_fd,
   with a write of its own (record_child_note), and exits as a shell
   would. */
static void run_child(int go_r, int go_w, char *const *argv, int notes_fd)
{
	char go;

	close(go_w);
	if (read(go_r, &go, 1) != 1)
		_exit(127);	/* the parent gave up */
	close(go_r);
	record_give_back_sigchld();
	execvp(argv[0], argv);
	int err = errno;
	record_child_note(notes_fd, "cannot run '%s': %s", argv[0], strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* Buffer sizes that this user may lock; a negative status with the
   message in e if none. */
static int choose_buffers(struct pt_session *s, struct cgt_error *e)
{
	struct pt_access_facts f;
	char why[512];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t data = (uint64_t)(DATA_PAGES + 1) * page;

	pt_access_gather(&f);
	s->n_cpus = f.n_cpus;
	if (!s->trace) {
		s->aux_bytes = 0;
	} else if (s->o->pt.buffer_bytes != 0) {
		s->aux_bytes = s->o->pt.buffer_bytes;
		if (s->aux_bytes < 2 * page || (s->aux_bytes & (s->aux_bytes - 1)) != 0)
			return cgt_fail(e, cgt_err_invalid,
					"--pt-buffer must be a power of two of at least %zu bytes",
					2 * page);
	} else {
		s->aux_bytes = pt_access_problem(&f, AUX_BYTES_LARGE + data, why, sizeof(why)) == NULL
				       ? AUX_BYTES_LARGE : AUX_BYTES_SMALL;
	}
	const char *problem = pt_access_problem(&f, s->aux_bytes + data, why, sizeof(why));
	if (problem != NULL)
		return cgt_fail(e, cgt_err_io, "%s", problem);
	return 0;
}

static void report(const struct pt_session *s, FILE *notes)
{
	char n[CGT_COUNT_TEXT], modules[64] = "", cache[4200];
	if (!s->trace)
		snprintf(modules, sizeof(modules), " (sideband only: %llu modules)",
			 (unsigned long long)s->modules);
	const char *kept = record_build_ids_report(&s->build_ids, notes, cache, sizeof(cache));
	record_note(notes, "recorded %s bytes of Intel PT trace on %u CPUs into %s%s%s",
		    cgt_format_count(s->aux_total, n), s->n_cpus, s->path, modules, kept);
	if (s->truncations)
		record_note(notes, "the trace buffer overflowed %llu times: those stretches are "
				   "lost (a larger --pt-buffer helps)",
			    (unsigned long long)s->truncations);
	if (s->lost_records)
		record_note(notes, "%llu sideband records were lost", (unsigned long long)s->lost_records);
	if (s->events.samples_missing[0] && s->trace)
		record_note(notes, "no memory samples: %s; data-cache misses cannot be estimated",
			    s->events.samples_missing);
}

int pt_record(const struct cgt_record_options *o, int trace, struct cgt_error *e)
{
	const char *tmpl = o->output ? o->output : CGT_DEFAULT_TRACE_NAME;
	struct pt_session s = { .o = o, .trace = trace, .out_fd = -1 };
	s.build_ids.dir = o->build_id_dir;
	struct cgt_trace_header header = { 0 };
	int go[2] = { -1, -1 }, status, wstatus = 0;
	char why[512];
	const char *bad;

	if (o->trace_children)
		return cgt_fail(e, cgt_err_invalid,
				"--trace-children=yes is not supported by the pt backend; use "
				"--backend=valgrind");
	char *probe = cgt_expand_output_name(tmpl, 1, &bad);
	if (probe == NULL)
		return cgt_fail(e, cgt_err_invalid, "bad output name '%s': %s", tmpl, bad);
	free(probe);
	if (pt_events_build(&s.events, &o->pt, trace, why, sizeof(why)) < 0)
		return cgt_fail(e, cgt_err_invalid, "--backend=pt: %s", why);
	if ((status = choose_buffers(&s, e)) < 0)
		return status;
	s.cpus = calloc(s.n_cpus, sizeof(*s.cpus));
	if (s.cpus == NULL || pipe2(go, O_CLOEXEC) < 0) {
		status = cgt_fail(e, cgt_err_io, "%s", strerror(errno));
		free(s.cpus);
		return status;
	}
	for (unsigned i = 0; i < s.n_cpus; i++)
		for (int e = 0; e < PT_EV_COUNT; e++)
			s.cpus[i].fd[e] = -1;

	int notes_fd = o->notes ? fileno(o->notes) : -1;
	s.pid = fork();
	if (s.pid < 0) {
		status = cgt_fail(e, cgt_err_io, "fork: %s", strerror(errno));
		goto out;
	}
	if (s.pid == 0)
		run_child(go[0], go[1], o->argv, notes_fd);
	close(go[0]);
	go[0] = -1;

	s.path = cgt_expand_output_name(tmpl, s.pid, &bad);
	if ((status = open_events(&s, e)) < 0)
		goto abandon;
	if (s.path == NULL) {
		status = cgt_fail(e, cgt_err_nomem, "bad output name '%s': %s", tmpl, bad);
		goto abandon;
	}
	s.out_fd = record_open_output(s.path, &s.error);
	if (s.out_fd < 0 || record_header_init(&header, "pt", o->argv, s.pid) < 0 ||
	    cgt_writer_open(&s.writer, s.out_fd, s.path, &s.error) < 0) {
		if (s.out_fd < 0 || s.error.msg[0])
			status = cgt_fail(e, s.error.status, "%s", s.error.msg);
		else
			status = cgt_fail(e, cgt_err_nomem, "%s", strerror(ENOMEM));
		goto abandon;
	}
	struct utsname host;
	snprintf(why, sizeof(why), "linux-%s perf_event %s", uname(&host) == 0 ? host.release : "?",
		 trace ? "intel_pt" : "sideband");
	free(header.recorder);
	header.recorder = strdup(why);
	if (cgt_header_encode(&s.buf, &header) < 0)
		encode_failed(&s);
	else
		put(&s, CGT_REC_HEADER);
	write_config(&s);
	if (cgt_thread_create(&s.reader, reader_main, &s) != 0) {
		status = cgt_fail(e, cgt_err_io, "cannot start the reader thread");
		goto abandon;
	}
	s.reader_started = 1;

	record_shield_signals(s.pid);
	if (write(go[1], "g", 1) != 1)
		kill(s.pid, SIGKILL);
	close(go[1]);
	go[1] = -1;
	while (waitpid(s.pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	record_shield_signals(0);
	status = record_exit_status(wstatus);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(s.reader, NULL);

	struct cgt_trace_end end = { .kind = WIFSIGNALED(wstatus) ? CGT_END_SIGNAL : CGT_END_EXIT,
				     .code = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus) };
	if (cgt_end_encode(&s.buf, &end) < 0)
		encode_failed(&s);
	else
		put(&s, CGT_REC_END);
	if (cgt_writer_close(s.writer, s.failed ? NULL : &s.error) < 0)
		s.failed = 1;
	s.writer = NULL;
	if (close(s.out_fd) < 0 && !s.failed) {
		cgt_fail(&s.error, cgt_err_io, "%s: %s", s.path, strerror(errno));
		s.failed = 1;
	}
	s.out_fd = -1;
	if (s.failed) {
		record_note(o->notes, "%s", s.error.msg);
		if (status == 0)
			status = 1;
	} else if (!o->quiet) {
		report(&s, o->notes);
	}
	goto out;

abandon:	/* the program has not run: it exits without running anything */
	close(go[1]);
	go[1] = -1;
	waitpid(s.pid, NULL, 0);
	if (s.writer != NULL)
		cgt_writer_close(s.writer, NULL);
	if (s.out_fd >= 0) {
		close(s.out_fd);
		unlink(s.path);
	}
out:
	for (unsigned i = 0; s.cpus != NULL && i < s.n_cpus; i++) {
		perf_ring_unmap(&s.cpus[i].ring);
		for (int e = 0; e < PT_EV_COUNT; e++)
			if (s.cpus[i].fd[e] >= 0)
				close(s.cpus[i].fd[e]);
	}
	for (int i = 0; i < 2; i++)
		if (go[i] >= 0)
			close(go[i]);
	cgt_header_free(&header);
	cgt_buf_free(&s.buf);
	free(s.cpus);
	free(s.path);
	return status;
}
