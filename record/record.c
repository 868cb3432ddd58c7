/*
 * Backend choice and output naming, shared by the recording backends.
 */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "pt/pt_record.h"
#include "valgrind/vg_record.h"

int cgt_host_has_intel_pt(void)
{
	return access("/sys/bus/event_source/devices/intel_pt/type", R_OK) == 0;
}

char *cgt_expand_output_name(const char *tmpl, long pid, const char **why)
{
	size_t cap = strlen(tmpl) + 64, len = 0;
	char *out = malloc(cap);

	if (out == NULL) {
		*why = "out of memory";
		return NULL;
	}
	for (const char *s = tmpl; *s; s++) {
		char piece[32];
		const char *add = piece;
		size_t n;
		if (s[0] != '%') {
			piece[0] = *s;
			n = 1;
		} else if (s[1] == '%') {
			piece[0] = '%';
			n = 1;
			s++;
		} else if (s[1] == 'p') {
			n = (size_t)snprintf(piece, sizeof(piece), "%ld", pid);
			s++;
		} else if (s[1] == 'q' && s[2] == '{' && strchr(s + 3, '}') != NULL) {
			const char *close = strchr(s + 3, '}');
			char name[256];
			size_t nl = (size_t)(close - (s + 3));
			if (nl == 0 || nl >= sizeof(name)) {
				*why = "%q{VAR} needs a variable name";
				free(out);
				return NULL;
			}
			memcpy(name, s + 3, nl);
			name[nl] = '\0';
			add = getenv(name);
			if (add == NULL) {
				*why = "%q{VAR} names an unset environment variable";
				free(out);
				return NULL;
			}
			n = strlen(add);
			s = close;
		} else {
			*why = "a % must be followed by p, q{VAR} or %";
			free(out);
			return NULL;
		}
		if (len + n + 1 > cap && cgt_array_grow(&out, &cap, len, n + 1, 1) < 0) {
			*why = "out of memory";
			free(out);
			return NULL;
		}
		memcpy(out + len, add, n);
		len += n;
	}
	out[len] = '\0';
	if (len == 0) {
		*why = "the file name is empty";
		free(out);
		return NULL;
	}
	return out;
}

char *cgt_find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	copy = strdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL && found == NULL;
	     dir = strtok_r(NULL, ":", &save)) {
		char *candidate;
		struct stat st;
		if (asprintf(&candidate, "%s/%s", *dir ? dir : ".", name) < 0)
			break;
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
			found = candidate;
		else
			free(candidate);
	}
	free(copy);
	return found;
}

/* Finds prog like execvp would.  0, or a negative status with why it
   cannot be run. */
static int check_program(const char *prog, struct cgt_error *e)
{
	int err = ENOENT;

	if (strchr(prog, '/') != NULL) {
		struct stat st;
		if (stat(prog, &st) == 0)
			err = S_ISDIR(st.st_mode) ? EACCES : access(prog, X_OK) == 0 ? 0 : errno;
		else
			err = errno;
	} else {
		char *path = cgt_find_in_path(prog);
		if (path != NULL) {
			err = 0;
			free(path);
		}
	}
	if (err == 0)
		return 0;
	return cgt_fail(e, err == ENOENT || err == ENOTDIR ? cgt_err_not_found : cgt_err_not_executable,
			"cannot run '%s': %s", prog, strerror(err));
}

int cgt_record(const struct cgt_record_options *o, struct cgt_error *e)
{
	int rc = check_program(o->argv[0], e);

	if (rc < 0)
		return rc;
	record_take_sigchld();
	int pt = o->backend == CGT_BACKEND_PT || (o->backend == CGT_BACKEND_AUTO && cgt_host_has_intel_pt());
	if (pt && o->vex_guest_chase_given)
		return cgt_fail(e, cgt_err_invalid,
				"--vex-guest-chase is for the valgrind backend%s",
				o->backend == CGT_BACKEND_AUTO ? " (give --backend=valgrind: this host has "
								 "Intel PT, so pt was chosen)"
							       : "");
	switch (o->backend) {
	case CGT_BACKEND_PT:
		if (!cgt_host_has_intel_pt())
			return cgt_fail(e, cgt_err_invalid,
					"--backend=pt needs Intel Processor Trace, which this host does "
					"not have\n(no intel_pt PMU in /sys/bus/event_source/devices); use "
					"--backend=valgrind");
		return pt_record(o, 1, e);
	case CGT_BACKEND_AUTO:
		if (cgt_host_has_intel_pt()) {
			if (!o->quiet)
				record_note(o->notes, "recording with the pt backend (Intel PT)");
			return pt_record(o, 1, e);
		}
		if (!o->quiet)
			record_note(o->notes, "recording with the valgrind backend (this host has "
					      "no Intel PT)");
		return vg_record(o, e);
	case CGT_BACKEND_VALGRIND:
	default:
		return vg_record(o, e);
	}
}
