/*
 * How cgtrace starts its Valgrind tool (see vg_record.c for why it is done
 * this way), and cgtrace's role as Valgrind's launcher.
 *
 * Valgrind's core runs "the launcher" (the path in VALGRIND_LAUNCHER) to
 * start every traced child process.  cgtrace is that launcher: for the
 * recorded program it only adds VALGRIND_LAUNCHER and executes the tool;
 * for a child process it first starts a trace writer of the child's own
 * (a "sink" process), since the parent's pipe is not inherited.
 */
#include "vg_launch.h"

#include "backend.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vg_session.h"

extern char **environ;

#define OPT_PIPE "--cgtrace-pipe="
#define OPT_OUT "--cgtrace-out="
#define OPT_QUIET "--cgtrace-quiet="
#define OPT_BUILD_IDS "--cgtrace-build-id-dir="	/* empty: none */

/* Is this valgrind a wrapper script that ends in `exec $0.bin "$@"`? */
static int is_exec_bin_wrapper(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 2)
		return 0;
	buf[n] = '\0';
	return buf[0] == '#' && buf[1] == '!' && strstr(buf, "$0.bin") != NULL;
}

static char **env_with(char **env, const char *extra)
{
	size_t n = 0;
	while (env[n] != NULL)
		n++;
	char **out = calloc(n + 2, sizeof(char *));
	if (out == NULL)
		return NULL;
	memcpy(out, env, n * sizeof(char *));
	out[n] = (char *)extra;
	return out;
}

/*
 * A shell sets "_" to the command it runs: "_=./cgtrace" here, where
 * Cachegrind's program would see "_=/usr/bin/valgrind".  Give the program
 * the latter, as its length moves the stack.  The string made for it, if
 * any, goes to *made.
 */
static char **env_for_program(const char *self, const char *valgrind, char **made)
{
	char **env = env_with(environ, NULL);

	*made = NULL;
	for (size_t i = 0; env && env[i] != NULL && valgrind != NULL; i++) {
		if (strncmp(env[i], "_=", 2) != 0)
			continue;
		char *underscore = realpath(env[i] + 2, NULL);
		if (underscore != NULL && strcmp(underscore, self) == 0) {
			if (*made == NULL && asprintf(made, "_=%s", valgrind) < 0) {
				free(underscore);
				free(env);
				*made = NULL;
				return NULL;
			}
			env[i] = *made;
		}
		free(underscore);
	}
	return env;
}

/* asprintf, but NULL when it fails (its pointer is undefined then). */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	return rc < 0 ? NULL : s;
}

/* Appends a string of ours to l->argv: 0, or -1 if it is NULL (out of
   memory). */
static int own_arg(struct vg_launch *l, char *arg)
{
	if (arg == NULL)
		return -1;
	l->argv[l->n_own_argv++] = arg;
	return 0;
}

int vg_launch_prepare(struct vg_launch *l, const char *tool, const struct cgt_record_options *o,
		      const char *out_tmpl, const struct vg_transport *t, struct cgt_error *e)
{
	char *self = vg_self_exe();
	char *valgrind = cgt_find_in_path("valgrind");
	size_t argc = 0;
	int rc = 1;	/* failed, and nothing said yet; then a status, or 0 */

	memset(l, 0, sizeof(*l));
	if (self == NULL)
		goto out;
	while (o->argv[argc] != NULL)
		argc++;
	l->argv = calloc(argc + 16, sizeof(char *));
	if (l->argv == NULL)
		goto out;

	if (valgrind != NULL && is_exec_bin_wrapper(valgrind)) {
		char *tmp = getenv("TMPDIR");
		l->tmpdir = format("%s/cgtrace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (l->tmpdir == NULL || mkdtemp(l->tmpdir) == NULL) {
			const char *why = strerror(errno);
			rc = cgt_fail(e, cgt_err_io,
				      "cannot create a temporary directory: %s\n"
				      "cgtrace: cannot prepare the Valgrind command line: %s", why, why);
			free(l->tmpdir);
			l->tmpdir = NULL;
			goto out;
		}
		char *link_vg = format("%s/valgrind", l->tmpdir);
		char *link_bin = format("%s/valgrind.bin", l->tmpdir);
		if (link_vg == NULL || link_bin == NULL) {
			free(link_vg);
			free(link_bin);
			goto out;
		}
		if (symlink(valgrind, link_vg) < 0 || symlink(self, link_bin) < 0) {
			rc = cgt_fail(e, cgt_err_io, "%s: %s", l->tmpdir, strerror(errno));
			free(link_vg);
			free(link_bin);
			goto out;
		}
		free(link_bin);
		own_arg(l, link_vg);
		l->envp = env_for_program(self, valgrind, &l->own_env[0]);
	} else {
		if (own_arg(l, strdup(tool)) < 0 ||
		    (l->own_env[1] = format("VALGRIND_LAUNCHER=%s", self)) == NULL)
			goto out;
		char **env = env_for_program(self, valgrind, &l->own_env[0]);
		l->envp = env ? env_with(env, l->own_env[1]) : NULL;
		free(env);
	}
	if (l->envp == NULL || own_arg(l, strdup("--tool=cgtrace")) < 0 ||
	    (!o->verbose && own_arg(l, strdup("-q")) < 0) ||
	    own_arg(l, strdup(o->trace_children ? "--trace-children=yes" : "--trace-children=no")) < 0)
		goto out;
	/* Callgrind's translation, as Callgrind forces it; or Cachegrind's
	   default chasing, named so that VALGRIND_OPTS cannot change it. */
	if (own_arg(l, strdup(o->vex_guest_chase ? "--vex-guest-chase=yes" : "--vex-guest-chase=no")) < 0 ||
	    (!o->vex_guest_chase && own_arg(l, strdup("--vex-iropt-unroll-thresh=0")) < 0))
		goto out;
	char *tool_opts[VG_TRANSPORT_TOOL_OPTIONS] = { NULL };
	int tool_rc = vg_transport_tool_options(t, tool_opts);
	for (int i = 0; i < VG_TRANSPORT_TOOL_OPTIONS; i++)
		if (tool_opts[i] != NULL)
			own_arg(l, tool_opts[i]);
	if (tool_rc < 0 ||
	    own_arg(l, format(OPT_PIPE "%llu", vg_transport_id(t))) < 0 ||
	    own_arg(l, format(OPT_OUT "%s", out_tmpl)) < 0 ||
	    own_arg(l, format(OPT_QUIET "%s", o->quiet ? "yes" : "no")) < 0 ||
	    own_arg(l, format(OPT_BUILD_IDS "%s", o->build_id_dir ? o->build_id_dir : "")) < 0)
		goto out;
	for (size_t i = 0; i < argc; i++)
		l->argv[l->n_own_argv + i] = o->argv[i];
	l->argv[l->n_own_argv + argc] = NULL;
	rc = 0;
out:
	if (rc > 0)
		rc = cgt_fail(e, cgt_err_io, "cannot prepare the Valgrind command line: %s",
			      strerror(errno ? errno : ENOMEM));
	free(self);
	free(valgrind);
	return rc;
}

#define TMPDIR_PREFIX "cgtrace-"
#define TMPDIR_RANDOM 6	/* mkdtemp's XXXXXX */

static const char *tmp_parent(void)
{
	const char *tmp = getenv("TMPDIR");
	return tmp && *tmp ? tmp : "/tmp";
}

/* Removes a private directory: only the names cgtrace puts there, so
   that rmdir fails on anything else. */
static void remove_private_dir(const char *dir)
{
	static const char *const names[] = { "valgrind", "valgrind.bin", "pid" };
	char *p;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (asprintf(&p, "%s/%s", dir, names[i]) >= 0) {
			unlink(p);
			free(p);
		}
	rmdir(dir);
}

void vg_launch_cleanup(struct vg_launch *l)
{
	if (l->tmpdir != NULL) {
		remove_private_dir(l->tmpdir);
		free(l->tmpdir);
		l->tmpdir = NULL;
	}
	for (size_t i = 0; l->argv != NULL && i < l->n_own_argv; i++)
		free(l->argv[i]);
	free(l->argv);
	free(l->envp);
	for (int i = 0; i < 2; i++)
		free(l->own_env[i]);
	memset(l, 0, sizeof(*l));
}

int vg_launch_own(const struct vg_launch *l, struct cgt_error *e)
{
	char *p;
	FILE *f;
	int rc = -1;

	if (l->tmpdir == NULL)
		return 0;
	if (asprintf(&p, "%s/pid", l->tmpdir) < 0)
		return cgt_fail(e, cgt_err_nomem, "cannot write %s/pid: %s", l->tmpdir, strerror(ENOMEM));
	if ((f = fopen(p, "wx")) != NULL) {
		rc = fprintf(f, "%ld\n", (long)getpid()) > 0 ? 0 : -1;
		if (fclose(f) != 0)
			rc = -1;
	}
	if (rc < 0)
		rc = cgt_fail(e, cgt_err_io, "cannot write %s: %s", p, strerror(errno));
	free(p);
	return rc;
}

void vg_launch_sweep_stale(void)
{
	const char *parent = tmp_parent();
	DIR *d = opendir(parent);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, TMPDIR_PREFIX, strlen(TMPDIR_PREFIX)) != 0 ||
		    strlen(de->d_name) != strlen(TMPDIR_PREFIX) + TMPDIR_RANDOM)
			continue;
		char *dir, *pidfile;
		if (asprintf(&dir, "%s/%s", parent, de->d_name) < 0)
			break;
		struct stat st;
		long pid = 0;
		if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    asprintf(&pidfile, "%s/pid", dir) >= 0) {
			FILE *f = fopen(pidfile, "r");
			if (f != NULL) {
				if (fscanf(f, "%ld", &pid) != 1)
					pid = 0;
				fclose(f);
			}
			free(pidfile);
			if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
				remove_private_dir(dir);
		}
		free(dir);
	}
	closedir(d);
}

/* ---- Launcher ---------------------------------------------------------- */

/* The sink of a traced child process: writes its trace, says so on notes,
   then exits.  A forked process of its own (no exec follows, and the
   launcher has no other thread), so it may use stdio. */
static void run_sink(struct vg_transport *t, const char *tmpl, long pid, char **client_argv,
		     int quiet, const char *build_id_dir, FILE *notes)
{
	struct vg_session s = { .out_fd = -1, .tmpl = tmpl, .quiet = quiet };
	s.stream.build_ids.dir = build_id_dir;
	const char *why;
	int devnull = open("/dev/null", O_RDWR);
	/* The notes' descriptor, moved clear of those set up below. */
	int notes_fd = notes ? fcntl(fileno(notes), F_DUPFD_CLOEXEC, 6) : -1;

	/* Hold none of the program's descriptors but the notes': a pipe it
	   shares with others must close when it does. */
	vg_transport_close_tool_ends(t);
	int *ends[3] = { &t->ready[0], &t->freed[1], &t->ctl[0] };
	for (int i = 0; i < 3; i++)	/* first clear of 3-5, which they may hold */
		*ends[i] = fcntl(*ends[i], F_DUPFD_CLOEXEC, 7);
	for (int i = 0; i < 3; i++) {
		dup2(*ends[i], 3 + i);
		*ends[i] = 3 + i;
	}
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
	}
	if (notes_fd > 6)
		close_range(6, (unsigned)notes_fd - 1, 0);
	close_range(notes_fd >= 6 ? (unsigned)notes_fd + 1 : 6, ~0u, 0);
	notes = notes_fd >= 0 ? fdopen(notes_fd, "w") : NULL;
	s.notes = notes;
	signal(SIGPIPE, SIG_IGN);

	/* Written through a temporary, named at the end: a program that
	   calls execve goes on, with its pid, as a new one with a sink of its
	   own, whose trace takes the name (Valgrind's tools write nothing for
	   a process that execs). */
	char *path = cgt_expand_output_name(tmpl, pid, &why);
	struct cgt_output out = { 0 };
	s.path = path;
	if (path == NULL)
		cgt_fail(&s.error, cgt_err_invalid, "%s", why);
	else
		s.out_fd = record_open_output_temporary(&out, path, &s.error);
	if (s.out_fd < 0 || record_header_init(&s.header, "valgrind", client_argv, pid) < 0) {
		record_note(notes, "child %ld: %s", pid, s.error.msg);
		s.failed = 1;
	}
	vg_session_run(&s, t);

	struct cgt_trace_end end;
	const struct cgt_trace_end *has_end = vg_session_end_of_stream(&s, &end);
	int status = 0;
	if (!s.stream.header_written || s.stream.exec_ended) {
		vg_session_finish(&s, NULL);
		status = !s.stream.header_written;
	} else {
		int rc = vg_session_finish(&s, has_end);
		if (cgt_output_commit(&out, &s.error) < 0 || rc < 0)
			record_note(notes, "child %ld: %s", pid, s.error.msg);
		else if (!quiet)
			vg_session_report(&s, notes);
	}
	cgt_output_discard(&out);
	record_children_wait(NULL);	/* the sinks of its fork children */
	_exit(status);
}

/* Starts the sink, detached (it must not be a child of the program, which
   might wait for all its children).  Fills t with the tool's ends. */
static int start_sink(struct vg_transport *t, const char *tmpl, char **client_argv, int quiet,
		      const char *build_id_dir, FILE *notes)
{
	long pid = (long)getpid();

	if (vg_transport_open(t) < 0)
		return -1;
	pid_t a = fork();
	if (a < 0)
		return -1;
	if (a == 0) {
		if (fork() == 0)
			run_sink(t, tmpl, pid, client_argv, quiet, build_id_dir, notes);
		_exit(0);
	}
	waitpid(a, NULL, 0);
	return 0;
}

int vg_launcher(int argc, char **argv, FILE *notes, struct cgt_error *e)
{
	const char *tmpl = NULL, *build_id_dir = NULL;
	long fd = -1;
	unsigned long long id = 0;
	int quiet = 0, pipe_arg = -1, client = argc;
	int fd_args[VG_TRANSPORT_TOOL_OPTIONS];	/* where the transport's options are */

	for (int k = 0; k < VG_TRANSPORT_TOOL_OPTIONS; k++)
		fd_args[k] = -1;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-') {
			client = i;
			break;
		}
		int k = 0;
		while (k < VG_TRANSPORT_TOOL_OPTIONS &&
		       strncmp(argv[i], vg_transport_option_names[k], strlen(vg_transport_option_names[k])) != 0)
			k++;
		if (k < VG_TRANSPORT_TOOL_OPTIONS) {
			fd_args[k] = i;
			if (k == 0)	/* the ready pipe's */
				fd = strtol(argv[i] + strlen(vg_transport_option_names[0]), NULL, 10);
		} else if (strncmp(argv[i], OPT_PIPE, strlen(OPT_PIPE)) == 0) {
			id = strtoull(argv[i] + strlen(OPT_PIPE), NULL, 10);
			pipe_arg = i;
		} else if (strncmp(argv[i], OPT_OUT, strlen(OPT_OUT)) == 0) {
			tmpl = argv[i] + strlen(OPT_OUT);
		} else if (strcmp(argv[i], OPT_QUIET "yes") == 0) {
			quiet = 1;
		} else if (strncmp(argv[i], OPT_BUILD_IDS, strlen(OPT_BUILD_IDS)) == 0 &&
			   argv[i][strlen(OPT_BUILD_IDS)] != '\0') {
			build_id_dir = argv[i] + strlen(OPT_BUILD_IDS);
		}
	}
	char *self = vg_self_exe(), *tool = vg_tool_path(), *launcher = NULL;
	char **env = NULL, **tool_argv = NULL;
	int rc;
	int all_fds = 1;
	for (int k = 0; k < VG_TRANSPORT_TOOL_OPTIONS; k++)
		all_fds &= fd_args[k] >= 0;
	if (self == NULL || tool == NULL || !all_fds || pipe_arg < 0 || tmpl == NULL || client >= argc) {
		rc = cgt_fail(e, cgt_err_invalid,
			      "started as Valgrind's launcher with an unexpected command line");
		goto fail;
	}

	/* The recorded program's own transport arrives open; a child process
	   of it (started by Valgrind with --trace-children=yes) finds the
	   descriptor closed or reused and needs a transport of its own. */
	struct stat st;
	int ours = fd >= 0 && fstat((int)fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
		   (unsigned long long)st.st_ino == id;
	if (!ours) {
		struct vg_transport t;
		if (start_sink(&t, tmpl, argv + client, quiet, build_id_dir, notes) < 0) {
			rc = cgt_fail(e, cgt_err_io, "cannot trace child %s: %s", argv[client],
				      strerror(errno));
			goto fail;
		}
		/* Replaced in argv for the execve: these live as long as the
		   process (until the execve, or the error exit below). */
		char *opts[VG_TRANSPORT_TOOL_OPTIONS] = { NULL }, *pipe = NULL;
		if (vg_transport_tool_options(&t, opts) < 0 ||
		    (pipe = format(OPT_PIPE "%llu", vg_transport_id(&t))) == NULL) {
			for (int i = 0; i < VG_TRANSPORT_TOOL_OPTIONS; i++)
				free(opts[i]);
			rc = cgt_fail(e, cgt_err_nomem, "cannot trace child %s: %s", argv[client],
				      strerror(ENOMEM));
			goto fail;
		}
		argv[pipe_arg] = pipe;
		for (int k = 0; k < VG_TRANSPORT_TOOL_OPTIONS; k++)
			argv[fd_args[k]] = opts[k];
		vg_transport_pass_to_tool(&t);
	}
	/* Started through Valgrind's wrapper from the private directory
	   (argv[0] is its valgrind.bin): nothing needs it any more. */
	if (ours) {
		char *dir = strdup(argv[0]), *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash != NULL && strcmp(slash, "/valgrind.bin") == 0) {
			*slash = '\0';
			char *base = strrchr(dir, '/');
			base = base ? base + 1 : dir;
			if (strncmp(base, TMPDIR_PREFIX, strlen(TMPDIR_PREFIX)) == 0 &&
			    strlen(base) == strlen(TMPDIR_PREFIX) + TMPDIR_RANDOM)
				remove_private_dir(dir);
		}
		free(dir);
	}
	launcher = format("VALGRIND_LAUNCHER=%s", self);
	env = launcher ? env_with(environ, launcher) : NULL;
	tool_argv = ours ? calloc((size_t)argc + 2, sizeof(char *)) : argv;
	if (env == NULL || tool_argv == NULL) {
		rc = cgt_fail(e, cgt_err_nomem, "cannot start the Valgrind tool %s: %s", tool,
			      strerror(ENOMEM));
		goto fail;
	}
	/* Without gdbserver, Valgrind makes no FIFOs in $TMPDIR, which a
	   process killed by SIGKILL would leave behind.  (Children of the
	   program inherit the option with the rest of Valgrind's.) */
	if (ours) {	/* after --tool=cgtrace, which Valgrind's children's launcher needs first */
		tool_argv[0] = argv[0];
		tool_argv[1] = argv[1];
		tool_argv[2] = "--vgdb=no";
		memcpy(tool_argv + 3, argv + 2, (size_t)(argc - 1) * sizeof(char *));
	}
	execve(tool, tool_argv, env);
	rc = cgt_fail(e, cgt_err_io, "cannot start the Valgrind tool %s: %s", tool, strerror(errno));
fail:
	if (tool_argv != argv)
		free(tool_argv);
	free(env);
	free(launcher);
	free(tool);
	free(self);
	return rc;
}
