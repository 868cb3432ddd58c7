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

static int check_valgrind(const char *tool)
{
	const char *libdir = getenv("VALGRIND_LIB");
	char preload[4096];

	snprintf(preload, sizeof(preload), "%s/%s", libdir ? libdir : VALGRIND_LIBDIR,
		 VALGRIND_PRELOAD);
	if (access(preload, R_OK) != 0) {
		fprintf(stderr,
			"cgtrace: Valgrind is not installed (%s is missing).\n"
			"cgtrace: install it with 'sudo apt-get install valgrind' (or run "
			"scripts/install-deps.sh), or use --backend=pt on an Intel host\n",
			preload);
		return -1;
	}
	if (tool == NULL || access(tool, X_OK) != 0) {
		fprintf(stderr,
			"cgtrace: the Valgrind tool %s is missing: it is built by 'make' from "
			"record/valgrind/ and needs Valgrind's tool headers and libraries "
			"('sudo apt-get install valgrind', or scripts/install-deps.sh)\n",
			tool ? tool : "lib/cgtrace/cgtrace-amd64-linux");
		return -1;
	}
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
   Valgrind.  Never returns. */
static void run_child(int go_fd, int go_w, struct vg_transport *t, char **vg_argv, char **envp)
{
	char go;

	close(go_w);	/* else the read below never sees the parent give up */
	/* Set before the read: a parent killed earlier closes the pipe. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go_fd, &go, 1) != 1)
		_exit(127);	/* the parent gave up (or died): nothing may run */
	close(go_fd);
	signal(SIGXFSZ, xfsz_given);	/* the program's, as the shell gave it */
	vg_transport_pass_to_tool(t);	/* the only descriptors the tool inherits */
	execve(vg_argv[0], vg_argv, envp);
	fprintf(stderr, "cgtrace: cannot start Valgrind (%s): %s\n", vg_argv[0], strerror(errno));
	_exit(127);
}

int vg_record(const struct cgt_record_options *o)
{
	pid_t child_pid;
	const char *tmpl = o->output ? o->output : CGT_DEFAULT_TRACE_NAME;
	struct vg_session s = { .out_fd = -1 };
	struct vg_launch launch = { 0 };
	struct vg_transport tr = { .shm_fd = -1, .ready = { -1, -1 }, .freed = { -1, -1 } };
	int go[2] = { -1, -1 };
	int status = 1;
	char *tool = NULL, *out_path = NULL, *abs_tmpl = NULL;
	const char *why;

	xfsz_given = signal(SIGXFSZ, SIG_IGN);
	if (xfsz_given == SIG_ERR)
		xfsz_given = SIG_DFL;
	tool = vg_tool_path();
	if (check_valgrind(tool) < 0)
		goto out;
	if (o->trace_children && strstr(tmpl, "%p") == NULL) {
		fprintf(stderr, "cgtrace: with --trace-children=yes the output name needs %%p, so that "
				"each process gets a trace of its own (e.g. -o trace.%%p.zst)\n");
		goto out;
	}
	/* Refuse a bad template before anything runs. */
	char *probe = cgt_expand_output_name(tmpl, 1, &why);
	if (probe == NULL) {
		fprintf(stderr, "cgtrace: bad output name '%s': %s\n", tmpl, why);
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
			fprintf(stderr, "cgtrace: cannot create the %u MiB of buffers shared with Valgrind: "
					"%s (the file size limit, ulimit -f, must be at least that)\n",
				(unsigned)(VG_TRANSPORT_BYTES >> 20), strerror(errno));
		else
			fprintf(stderr, "cgtrace: %s\n", strerror(errno));
		goto out;
	}
	vg_launch_sweep_stale();
	if (vg_launch_prepare(&launch, tool, o, abs_tmpl, &tr) < 0 || vg_launch_own(&launch) < 0)
		goto out;
	if (o->trace_children)
		prctl(PR_SET_CHILD_SUBREAPER, 1);

	child_pid = fork();
	if (child_pid < 0) {
		fprintf(stderr, "cgtrace: fork: %s\n", strerror(errno));
		goto out;
	}
	if (child_pid == 0)
		run_child(go[0], go[1], &tr, launch.argv, launch.envp);
	close(go[0]);
	go[0] = -1;
	vg_transport_close_tool_ends(&tr);

	/* The name may contain the program's pid, which is the child's. */
	out_path = cgt_expand_output_name(tmpl, child_pid, &why);
	s.path = out_path;
	s.out_fd = out_path ? record_open_output(out_path, &s.error) : -1;
	if (s.out_fd < 0 || record_header_init(&s.header, "valgrind", o->argv, child_pid) < 0) {
		fprintf(stderr, "cgtrace: %s\n", s.out_fd < 0 ? s.error.msg : strerror(ENOMEM));
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
		fprintf(stderr, "cgtrace: Valgrind did not start the program (exit status %d); no "
				"trace written\n",
			status);
		if (status == 0)
			status = 1;
		goto wait_children;
	}
	struct cgt_trace_end end;
	end_from_status(&end, &s, wstatus);
	/* No FINI: the program died where its tool could not finish (SIGKILL),
	   and the tool's last buffer is lost; an END would claim a whole run. */
	int cut_short = s.stream.truncated;
	if (vg_session_finish(&s, cut_short ? NULL : &end) < 0) {
		fprintf(stderr, "cgtrace: %s\n", s.error.msg);
		struct stat st;
		int empty = stat(out_path, &st) == 0 && st.st_size == 0;
		if (empty)
			unlink(out_path);
		if (s.stopped && empty)
			fprintf(stderr, "cgtrace: stopped the program, since its trace could not go on; "
					"no trace written\n");
		else if (s.stopped)
			fprintf(stderr, "cgtrace: stopped the program, since its trace could not go on; "
					"%s holds the trace up to there, without an end record\n",
				out_path);
		status = 1;
	} else {
		if (cut_short)
			fprintf(stderr, "cgtrace: the program's stream ended early (killed by signal %d, "
					"which Valgrind cannot see coming?); the trace holds what arrived, "
					"without an end record\n",
				WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
		if (!o->quiet)
			vg_session_report(&s);
	}

wait_children:
	if (o->trace_children)	/* traces of child processes still being written */
		while (wait(NULL) > 0 || errno == EINTR)
			;
out:
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

int cgt_record_launcher(int argc, char **argv)
{
	return vg_launcher(argc, argv);
}
