/*
 * Starting the Valgrind tool with the environment Cachegrind would give the
 * program, and cgtrace's role as Valgrind's launcher.  Internal to
 * record/valgrind/.
 */
#ifndef CGTRACE_VG_LAUNCH_H
#define CGTRACE_VG_LAUNCH_H

#include "record.h"
#include "vg_transport.h"

struct vg_launch {
	char **argv;		/* what the child executes */
	char **envp;
	char *tmpdir;		/* private directory with the wrapper symlinks */
	/* What vg_launch_cleanup frees: argv[0 .. n_own_argv) are ours (the
	   program's own arguments after them are the caller's), and so are
	   the environment strings we made; the others are the process's. */
	size_t n_own_argv;
	char *own_env[2];
};

/* Prepares argv/envp to record o->argv through the tool writing to t;
   out_tmpl names the traces of child processes.  0, or a negative status
   with the message in e. */
int vg_launch_prepare(struct vg_launch *l, const char *tool, const struct cgt_record_options *o,
		      const char *out_tmpl, const struct vg_transport *t, struct cgt_error *e);
/* Removes the private directory and frees what prepare allocated; may be
   called again. */
void vg_launch_cleanup(struct vg_launch *l);

/*
 * The private directory lives only until Valgrind's wrapper has run
 * cgtrace as its launcher, which removes it.  vg_launch_own writes
 * cgtrace's pid into it; vg_launch_sweep_stale removes the directories
 * left by a cgtrace killed before that (its pid is dead).
 */
int vg_launch_own(const struct vg_launch *l, struct cgt_error *e);
void vg_launch_sweep_stale(void);

/* cgt_record_launcher (record.h). */
int vg_launcher(int argc, char **argv, FILE *notes, struct cgt_error *e);

#endif
