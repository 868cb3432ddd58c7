/*
 * `cgtrace record` with the Valgrind backend.
 *
 * The program runs under cgtrace's Valgrind tool, started the way the
 * `valgrind` command starts Cachegrind, so the program sees the same
 * environment (and so the same stack addresses and counts):
 *
 *  - Debian's /usr/bin/valgrind is a shell wrapper that exports a few
 *    variables and then runs "$0.bin".  We run that very wrapper through a
 *    symlink in a private directory whose "valgrind.bin" is cgtrace itself;
 *    cgtrace, as Valgrind's launcher (vg_launch.c), then starts our tool.
 *    Where valgrind is no wrapper, cgtrace acts as the launcher directly.
 *  - The launcher gives the core VALGRIND_LAUNCHER, which the core hides
 *    from the program, and never VALGRIND_LIB, which it would not.
 *
 * The tool writes its stream to a pipe; this process converts it into
 * trace records (vg_stream.c) while a writer thread compresses them.
 *
 * Faults (README, "When recording fails"): Valgrind cannot detach from
 * the program, so a program whose trace cannot go on (a full disk, the
 * file size limit) is stopped, not left to run on untraced; and the
 * program dies with cgtrace (PR_SET_PDEATHSIG), so that a killed cgtrace
 * never leaves it running orphaned.  SIGXFSZ is ignored here, so that the
 * file size limit is an error with a message (EFBIG), not a silent death.
 */
#include "vg_record.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "vg_launch.h"
#include "vg_session.h"
#include "vg_transport.h"

/* Valgrind's core looks for its files where its package put them, or in
   $VALGRIND_LIB. */
#define VALGRIND_LIBDIR "/usr/libexec/valgrind"
#define VALGRIND_PRELOAD "vgpreload_core-amd64-linux.so"

static int check_valgrind(const char *tool, struct cgt_error *e)
{
	const char *libdir = getenv("VALGRIND_LIB");
	char preload[4096];

	snprintf(preload, sizeof(preload), "%s/%s", libdir ? libdir : VALGRIND_LIBDIR,
		 VALGRIND_PRELOAD);
	/* Two lines, the second as cgtrace's too. */
	if (access(preload, R_OK) != 0)
		return cgt_fail(e, cgt_err_io,
				"Valgrind is not installed (%s is missing).\n"
				"cgtrace: install it with 'sudo apt-get install valgrind' (or run "
				"scripts/install-deps.sh), or use --backend=pt on an Intel host",
				preload);
	if (tool == NULL || access(tool, X_OK) != 0)
		return cgt_fail(e, cgt_err_io,
				"the Valgrind tool %s is missing: it is built by 'make' from "
				"record/valgrind/ and needs Valgrind's tool headers and libraries "
				"('sudo apt-get install valgrind', or scripts/install-deps.sh)",
				tool ? tool : "lib/cgtrace/cgtrace-amd64-linux");
	return 0;
}

static void end_from_status(struct cgt_trace_end *end, const struct vg_session *s, int wstatus)
{
	memset(end, 0, sizeof(*end));
	end->counts = s->stream.counts;
	if (WIFSIGNALED(wstatus)) {
		end->kind = CGT_END_SIGNAL;
		end->code = WTERMSIG(wstatus);
	} else {
		end->kind = CGT_END_EXIT;
		end->code = WEXITSTATUS(wstatus);
	}
}

/* SIGXFSZ's disposition as cgtrace was started with: cgtrace ignores it
   (a file size limit is a message, EFBIG), the program gets it back. */
static void (*xfsz_given)(int) = SIG_DFL;

/* The child: waits until the parent has opened the output, then starts
   Valgrind.  Never returns.  Between fork and exec it says why it could
   not start on notes_fd, with a write of its own (record_child_note). */
static void run_child(int go_fd, int go_w, struct vg_transport *t, char **vg_argv, char **envp,
		      int notes_fd)
{
	char go;

	close(go_w);	/* else the read below never sees the parent give up */
	/* Set before the read: a parent killed earlier closes the pipe. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go_fd, &go, 1) != 1)
		_exit(127);	/* the parent gave up (or died): nothing may run */
	close(go_fd);
	signal(SIGXFSZ, xfsz_given);	/* the program's, as the shell gave it */
	record_give_back_sigchld();
	vg_transport_pass_to_tool(t);	/* the only descriptors the tool inherits */
	execve(vg_argv[0], vg_argv, envp);
	record_child_note(notes_fd, "cannot start Valgrind (%s): %s", vg_argv[0], strerror(errno));
	_exit(127);
}

int vg_record(const struct cgt_record_options *o, struct cgt_error *e)
{
	pid_t child_pid;
	const char *tmpl = o->output ? o->output : CGT_DEFAULT_TRACE_NAME;
	struct vg_session s = { .out_fd = -1, .tmpl = tmpl, .notes = o->notes, .quiet = o->quiet };
	s.stream.build_ids.dir = o->build_id_dir;
	struct vg_launch launch = { 0 };
	struct record_children children = { 0 };
	struct vg_transport tr = { .shm_fd = -1, .ready = { -1, -1 }, .freed = { -1, -1 },
				.ctl = { -1, -1 } };
	int go[2] = { -1, -1 };
	int status = -1;	/* until the program starts: a cgt_status in e */
	char *tool = NULL, *out_path = NULL, *abs_tmpl = NULL;
	const char *why;

	xfsz_given = signal(SIGXFSZ, SIG_IGN);
	if (xfsz_given == SIG_ERR)
		xfsz_given = SIG_DFL;
	tool = vg_tool_path();
	if ((status = check_valgrind(tool, e)) < 0 ||
	    (status = record_children_init(&children, e)) < 0)
		goto out;
	if (o->trace_children && strstr(tmpl, "%p") == NULL) {
		status = cgt_fail(e, cgt_err_invalid,
				  "with --trace-children=yes the output name needs %%p, so that "
				  "each process gets a trace of its own (e.g. -o trace.%%p.zst)");
		goto out;
	}
	/* Refuse a bad template before anything runs. */
	char *probe = cgt_expand_output_name(tmpl, 1, &why);
	if (probe == NULL) {
		status = cgt_fail(e, cgt_err_invalid, "bad output name '%s': %s", tmpl, why);
		goto out;
	}
	free(probe);
	if (tmpl[0] == '/') {
		abs_tmpl = strdup(tmpl);
	} else {
		char *cwd = getcwd(NULL, 0);
		if (cwd == NULL || asprintf(&abs_tmpl, "%s/%s", cwd, tmpl) < 0)
			abs_tmpl = NULL;
		free(cwd);
	}
	if (abs_tmpl == NULL || vg_transport_open(&tr) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		if (errno == EFBIG)
			status = cgt_fail(e, cgt_err_io,
					  "cannot create the %u MiB of buffers shared with Valgrind: "
					  "%s (the file size limit, ulimit -f, must be at least that)",
					  (unsigned)(VG_TRANSPORT_BYTES >> 20), strerror(errno));
		else
			status = cgt_fail(e, cgt_err_io, "%s", strerror(errno));
		goto out;
	}
	vg_launch_sweep_stale();
	if ((status = vg_launch_prepare(&launch, tool, o, abs_tmpl, &tr, e)) < 0 ||
	    (status = vg_launch_own(&launch, e)) < 0)
		goto out;
	if (o->trace_children)
		prctl(PR_SET_CHILD_SUBREAPER, 1);

	int notes_fd = o->notes ? fileno(o->notes) : -1;
	child_pid = fork();
	if (child_pid < 0) {
		status = cgt_fail(e, cgt_err_io, "fork: %s", strerror(errno));
		goto out;
	}
	if (child_pid == 0)
		run_child(go[0], go[1], &tr, launch.argv, launch.envp, notes_fd);
	close(go[0]);
	go[0] = -1;
	vg_transport_close_tool_ends(&tr);

	/* The name may contain the program's pid, which is the child's. */
	out_path = cgt_expand_output_name(tmpl, child_pid, &why);
	s.path = out_path;
	s.out_fd = out_path ? record_open_output(out_path, &s.error)
			    : cgt_fail(&s.error, cgt_err_nomem, "bad output name '%s': %s", tmpl, why);
	if (s.out_fd < 0 || record_header_init(&s.header, "valgrind", o->argv, child_pid) < 0) {
		if (s.out_fd < 0)
			status = cgt_fail(e, s.error.status, "%s", s.error.msg);
		else
			status = cgt_fail(e, cgt_err_nomem, "%s", strerror(ENOMEM));
		close(go[1]);	/* the child exits without running anything */
		go[1] = -1;
		waitpid(child_pid, NULL, 0);
		if (s.out_fd >= 0) {
			close(s.out_fd);
			unlink(out_path);
		}
		cgt_header_free(&s.header);
		goto out;
	}

	s.stop_pid = child_pid;
	record_shield_signals(child_pid);
	if (write(go[1], "g", 1) != 1)
		kill(child_pid, SIGKILL);
	close(go[1]);
	go[1] = -1;
	vg_session_run(&s, &tr);
	int wstatus = 0;
	while (waitpid(child_pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	record_shield_signals(0);
	vg_launch_cleanup(&launch);
	status = record_exit_status(wstatus);

	if (!s.stream.header_written && !s.failed) {
		/* Valgrind stopped before our tool started: it said why. */
		vg_session_finish(&s, NULL);
		unlink(out_path);
		record_note(o->notes, "Valgrind did not start the program (exit status %d); no "
				      "trace written",
			    status);
		if (status == 0)
			status = 1;
		goto wait_children;
	}
	if (s.stream.exec_ended && o->trace_children) {
		/* Valgrind went on into the program it called execve on, whose
		   trace (the same pid) takes the name, as Valgrind's tools write
		   nothing for a process that execs. */
		vg_session_drop(&s);
		goto wait_children;
	}
	struct cgt_trace_end end;
	end_from_status(&end, &s, wstatus);
	/* No FINI: the program died where its tool could not finish (SIGKILL),
	   and the tool's last buffer is lost; an END would claim a whole run. */
	int cut_short = s.stream.truncated;
	if (vg_session_finish(&s, cut_short ? NULL : &end) < 0) {
		record_note(o->notes, "%s", s.error.msg);
		struct stat st;
		int empty = stat(out_path, &st) == 0 && st.st_size == 0;
		if (empty)
			unlink(out_path);
		if (s.stopped && empty)
			record_note(o->notes, "stopped the program, since its trace could not go on; "
					      "no trace written");
		else if (s.stopped)
			record_note(o->notes, "stopped the program, since its trace could not go on; "
					      "%s holds the trace up to there, without an end record",
				    out_path);
		status = 1;
	} else {
		if (cut_short && s.stream.exec_ended)
			record_note(o->notes, "the program called execve: Valgrind runs the new program "
					      "without recording it (--trace-children=yes records it); "
					      "the trace holds the run up to there, without an end record");
		else if (cut_short)
			record_note(o->notes, "the program's stream ended early (killed by signal %d, "
					      "which Valgrind cannot see coming?); the trace holds what "
					      "arrived, without an end record",
				    WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
		if (!o->quiet)
			vg_session_report(&s, o->notes);
	}

wait_children:
	/* Traces of child processes still being written: of fork children
	   (whose sinks are ours), and with --trace-children=yes of every
	   process (we are their subreaper). */
	record_children_wait(&children);
out:
	record_children_free(&children);
	signal(SIGXFSZ, xfsz_given);
	vg_launch_cleanup(&launch);
	vg_transport_close(&tr);
	for (int i = 0; i < 2; i++)
		if (go[i] >= 0)
			close(go[i]);
	free(tool);
	free(out_path);
	free(abs_tmpl);
	return status;
}

int cgt_record_launcher(int argc, char **argv, FILE *notes, struct cgt_error *e)
{
	return vg_launcher(argc, argv, notes, e);
}
