/*
 * `cgtrace report` of a callgrind.out file: callgrind_annotate 3.19's
 * command line (process_cmd_line): options only of the form --opt=value,
 * every argument starting with '-' an option, the first other argument
 * the profile and the rest source files to annotate, each readable in the
 * include directories given before it.  A bad option prints its usage and
 * exits 255, as its die() does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

static const char usage_annotate[] =
	"usage: cgtrace report [options] [callgrind-out-file [source-files...]]\n"
	"\n"
	"  options for the user, with defaults in [ ], are:\n"
	"    -h --help             show this message\n"
	"    --version             show version\n"
	"    --show=A,B,C          only show figures for events A,B,C [all]\n"
	"    --threshold=<0--100>  percentage of counts (of primary sort event) we\n"
	"                          are interested in [99%]\n"
	"    --sort=A,B,C          sort columns by events A,B,C [event column order]\n"
	"                          Each event can optionally be followed by a :\n"
	"                          and a threshold percentage. If some event specific\n"
	"                          threshold are given, --threshold value is ignored.\n"
	"    --show-percs=yes|no   show a percentage for each non-zero count [yes]\n"
	"    --auto=yes|no         annotate all source files containing functions\n"
	"                          that helped reach the event count threshold [yes]\n"
	"    --context=N           print N lines of context before and after\n"
	"                          annotated lines [8]\n"
	"    --inclusive=yes|no    add subroutine costs to functions calls [no]\n"
	"    --tree=none|caller|   print for each function their callers,\n"
	"           calling|both   the called functions or both [none]\n"
	"    -I --include=<dir>    add <dir> to list of directories to search for \n"
	"                          source files\n"
	"\n";

static const char help_callgrind[] =
	"cgtrace's own:\n"
	"    --format=text|json|dot  callgrind_annotate's text, the same data as JSON\n"
	"                          (report/REPORT-JSON.md), or the call graph for\n"
	"                          Graphviz (cgtrace report --format=dot FILE | dot -Tsvg)\n"
	"                          of one event: --sort's first, else --show's first,\n"
	"                          else the file's first [text]\n"
	"    --node-threshold=<0--100>  with --format=dot: draw the functions whose\n"
	"                          inclusive cost is at least this percentage of the\n"
	"                          total (every function's self cost added up) [0.5]\n"
	"    --edge-threshold=<0--100>  with --format=dot: draw the calls between them\n"
	"                          that cost at least this percentage [0.1]\n"
	"\n"
	"This command line is callgrind_annotate's because the first argument not\n"
	"starting with '-' is a callgrind.out file (see cgtrace report --help).\n";

/* Perl's split(/,/, s): empty trailing fields dropped. */
static unsigned split_commas(char *s, const char **items)
{
	unsigned n = 0;
	for (char *p = s, *next; p != NULL; p = next) {
		next = strchr(p, ',');
		if (next != NULL)
			*next++ = '\0';
		items[n++] = p;
	}
	while (n > 0 && *items[n - 1] == '\0')
		n--;
	return n;
}

/* [\d.]+ */
static int is_number(const char *s, size_t len)
{
	if (len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '.' || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

/* "N" or "N%" with N of [\d.]+: N's length, 0 if not. */
static size_t percent_number(const char *s)
{
	size_t len = strlen(s);
	if (len > 0 && s[len - 1] == '%')
		len--;
	return is_number(s, len) ? len : 0;
}

static int bad_option(void)
{
	fputs(usage_annotate, stderr);
	return 255;
}

/* Perl's working directory as `pwd` gives it: $PWD if it is this
   directory, else the physical one; with "/" after it. */
static char *working_directory(void)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;
	char *dir = pwd && pwd[0] == '/' && stat(pwd, &a) == 0 && stat(".", &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino ? strdup(pwd) : getcwd(NULL, 0);
	char *slash = dir ? malloc(strlen(dir) + 2) : NULL;
	if (slash != NULL)
		strcpy(stpcpy(slash, dir), "/");
	free(dir);
	return slash;
}

int cmd_report_callgrind(int argc, char **argv)
{
	struct cgt_callgrind_annotate_options o = { .threshold = "99", .context = "8",
						    .show_percs = 1, .auto_annotate = 1,
						    .node_threshold = 0.5, .edge_threshold = 0.1 };
	const char **show = calloc((size_t)argc + 1, sizeof(char *));
	const char **sort = calloc((size_t)argc + 1, sizeof(char *));
	const char **thresholds = calloc((size_t)argc + 1, sizeof(char *));
	const char **include = calloc((size_t)argc + 1, sizeof(char *));
	const char **user = calloc((size_t)argc + 1, sizeof(char *));
	char **copies = calloc(2 * (size_t)argc + 1, sizeof(char *));
	unsigned n_copies = 0;
	int status = 1;
	struct cgt_callgrind_profile *p = NULL;
	char *cwd = NULL;

	if (!show || !sort || !thresholds || !include || !user || !copies)
		goto out;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		if (arg[0] != '-') {
			if (o.input == NULL) {
				o.input = arg;
				continue;
			}
			int readable = access(arg, R_OK) == 0, last_errno = errno;
			for (unsigned d = 0; !readable && d < o.n_include_dirs; d++) {
				char *path = malloc(strlen(include[d]) + strlen(arg) + 1);
				if (path == NULL)
					goto out;
				strcpy(stpcpy(path, include[d]), arg);
				readable = access(path, R_OK) == 0;
				last_errno = readable ? last_errno : errno;
				free(path);
			}
			if (!readable) {
				fprintf(stderr, "File %s not found in any of: ", arg);
				for (unsigned d = 0; d < o.n_include_dirs; d++)
					fprintf(stderr, " %s", include[d]);
				fputc('\n', stderr);
				status = last_errno ? last_errno : 255;
				goto out;
			}
			user[o.n_user_files++] = arg;
			continue;
		}
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			printf("%s%s", usage_annotate, help_callgrind);
			status = 0;
			goto out;
		}
		if (!strcmp(arg, "--version")) {
			printf("cgtrace report %s (callgrind_annotate of Valgrind 3.19)\n", cgtrace_version);
			status = 0;
			goto out;
		}
		char *copy = strdup(arg);
		if (copy == NULL)
			goto out;
		copies[n_copies++] = copy;
		if (!strncmp(arg, "--show=", 7)) {
			o.n_show = split_commas(copy + 7, show);
		} else if (!strncmp(arg, "--sort=", 7)) {
			int any = 0;
			o.n_sort = split_commas(copy + 7, sort);
			for (unsigned k = 0; k < o.n_sort; k++) {
				/* EVENT:N or EVENT:N% (the last colon); the name ends at the first */
				char *colon = strrchr(sort[k], ':');
				size_t len = colon ? percent_number(colon + 1) : 0;
				thresholds[k] = NULL;
				if (len == 0)
					continue;
				colon[1 + len] = '\0';
				if (strtod(colon + 1, NULL) > 100) {
					status = bad_option();
					goto out;
				}
				thresholds[k] = colon + 1;
				*strchr(sort[k], ':') = '\0';
				any = 1;
			}
			o.sort_thresholds = any ? thresholds : NULL;
		} else if (!strncmp(arg, "--threshold=", 12) && percent_number(copy + 12)) {
			copy[12 + percent_number(copy + 12)] = '\0';
			if (strtod(copy + 12, NULL) > 100) {
				status = bad_option();
				goto out;
			}
			o.threshold = copy + 12;
		} else if (!strcmp(arg, "--show-percs=yes") || !strcmp(arg, "--show-percs=no")) {
			o.show_percs = arg[13] == 'y';
		} else if (!strcmp(arg, "--auto=yes") || !strcmp(arg, "--auto=no")) {
			o.auto_annotate = arg[7] == 'y';
		} else if (!strncmp(arg, "--context=", 10) && is_number(arg + 10, strlen(arg + 10))) {
			o.context = arg + 10;
		} else if (!strcmp(arg, "--inclusive=yes") || !strcmp(arg, "--inclusive=no")) {
			o.inclusive = arg[12] == 'y';
		} else if (!strncmp(arg, "--tree=", 7) &&
			   (!strcmp(arg + 7, "none") || !strcmp(arg + 7, "caller") ||
			    !strcmp(arg + 7, "calling") || !strcmp(arg + 7, "both"))) {
			/* each --tree adds; none takes nothing away */
			o.tree_caller |= !strcmp(arg + 7, "caller") || !strcmp(arg + 7, "both");
			o.tree_calling |= !strcmp(arg + 7, "calling") || !strcmp(arg + 7, "both");
		} else if (!strncmp(arg, "-I=", 3) || !strncmp(arg, "--include=", 10)) {
			v = strchr(arg, '=') + 1;
			size_t len = strlen(v);
			char *dir = malloc(len + 2);
			if (dir == NULL)
				goto out;
			memcpy(dir, v, len);
			if (len > 0 && dir[len - 1] == '/')
				len--;
			strcpy(dir + len, "/");
			copies[n_copies++] = dir;
			include[o.n_include_dirs++] = dir;
		} else if (!strcmp(arg, "--format=text")) {
			o.format = CGT_CALLGRIND_TEXT;
		} else if (!strcmp(arg, "--format=json")) {
			o.format = CGT_CALLGRIND_JSON;
		} else if (!strcmp(arg, "--format=dot")) {
			o.format = CGT_CALLGRIND_DOT;
		} else if (!strncmp(arg, "--node-threshold=", 17) || !strncmp(arg, "--edge-threshold=", 17)) {
			/* a percentage as --threshold's, N or N%, but one number */
			size_t len = percent_number(copy + 17);
			char *end;
			double v = strtod(copy + 17, &end);
			if (len == 0 || end != copy + 17 + len || v > 100) {
				status = bad_option();
				goto out;
			}
			*(arg[2] == 'n' ? &o.node_threshold : &o.edge_threshold) = v;
		} else {
			status = bad_option();
			goto out;
		}
	}
	o.show = o.n_show ? show : NULL;
	o.sort = o.n_sort ? sort : NULL;
	if (!o.n_sort)
		o.sort_thresholds = NULL;
	o.include_dirs = include;
	o.user_files = user;

	struct cgt_error e;
	cwd = working_directory();
	const struct cgt_callgrind_read_options ro = { cwd };
	if (cgt_callgrind_read(o.input, &ro, &p, &e) < 0 ||
	    cgt_callgrind_annotate(stdout, p, &o, &e) < 0) {
		fflush(stdout);
		status = report_error(&e);
		goto out;
	}
	status = 0;
out:
	cgt_callgrind_free(p);
	free(cwd);
	for (unsigned i = 0; copies && i < n_copies; i++)
		free(copies[i]);
	free(copies);
	free(show);
	free(sort);
	free(thresholds);
	free(include);
	free(user);
	return status;
}
