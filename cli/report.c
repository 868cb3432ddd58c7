/*
 * `cgtrace report`: cg_annotate's command line, parsed as its Python
 * argparse parser does -- long options abbreviated to any unique prefix,
 * "--opt value" or "--opt=value", --show-percs=yes|no and --auto=yes|no
 * as options of their own -- with its messages and exit statuses (2 for
 * usage errors, 1 for the rest).
 */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

#define PROG "cgtrace report"

const char usage_report[] =
	"usage: " PROG " [-h] [--version] [--diff] [--mod-filename REGEX] [--mod-funcname REGEX]\n"
	"                      [--show A,B,C] [--sort A,B,C] [--threshold N:[0,20]]\n"
	"                      [--show-percs | --no-show-percs] [--show-percs=yes] [--show-percs=no]\n"
	"                      [--annotate | --no-annotate] [--auto=yes] [--auto=no] [--context N]\n"
	"                      [--color=auto|always|never] [--format=text|json]\n"
	"                      [--archive FILE] [cachegrind-out-file ...]\n"
	"       " PROG " --compare [--show EVENT] [--top N] [--format=text|json]\n"
	"                      cachegrind-out-file cachegrind-out-file ...\n";

static const char help_report[] =
	"\n"
	"Process one or more Cachegrind output files, printing what the newest\n"
	"cg_annotate prints.  With no file, the newest cachegrind.out.* here.\n"
	"\n"
	"positional arguments:\n"
	"  cachegrind-out-file   file produced by Cachegrind or cgtrace simulate\n"
	"\n"
	"options:\n"
	"  -h, --help            show this help message and exit\n"
	"  --version             show program's version number and exit\n"
	"  --diff                perform a diff between two Cachegrind output files\n"
	"  --mod-filename REGEX  a search-and-replace regex applied to filenames, e.g.\n"
	"                        `s/prog[0-9]/progN/` (a POSIX extended regex: no \\d,\n"
	"                        \\w, non-greedy or look-around, unlike Python's)\n"
	"  --mod-funcname REGEX  like --mod-filename, but for function names\n"
	"  --show A,B,C          only show figures for events A,B,C (default: all events)\n"
	"  --sort A,B,C          sort functions by events A,B,C (default: event column\n"
	"                        order)\n"
	"  --threshold N:[0,20]  only show file:function/function:file pairs with more\n"
	"                        than N% of primary sort event counts (default: 0.1)\n"
	"  --show-percs, --no-show-percs\n"
	"                        show a percentage for each non-zero count (default: True)\n"
	"  --show-percs=yes      (deprecated) same as --show-percs\n"
	"  --show-percs=no       (deprecated) same as --no-show-percs\n"
	"  --annotate, --no-annotate\n"
	"                        annotate all source files containing functions that\n"
	"                        reached the event count threshold (default: True)\n"
	"  --auto=yes            (deprecated) same as --annotate\n"
	"  --auto=no             (deprecated) same as --no-annotate\n"
	"  --context N           print N lines of context before and after annotated\n"
	"                        lines (default: 8)\n"
	"  --color=WHEN          shade counts by their share of the total: auto (on a\n"
	"                        terminal), always or never (default: auto)\n"
	"  --format=FORMAT       text (cg_annotate's layout) or json (the same data,\n"
	"                        described in report/REPORT-JSON.md) (default: text)\n"
	"  --archive FILE        a source file not readable here is read from the\n"
	"                        sources FILE holds (cgtrace archive --sources), if\n"
	"                        there; exit status 3 if FILE is damaged (what it holds\n"
	"                        whole is used)\n"
	"\n"
	"comparing configurations (cgtrace's own):\n"
	"  --compare             show one event of two or more files side by side (a\n"
	"                        sweep's, one file per cache configuration): the program\n"
	"                        totals, then the functions (file:function) and the\n"
	"                        lines (file:line function) with the largest count in\n"
	"                        any file, each file's count in a column headed by the\n"
	"                        part of its name the others do not share, and the\n"
	"                        change from the first file to the last.  The files\n"
	"                        must have the same events: line.  Only --show, --top\n"
	"                        and --format apply; --format=json is described in\n"
	"                        report/REPORT-JSON.md\n"
	"  --show EVENT          with --compare, the event compared (default: the miss\n"
	"                        event, such as D1mr or Bcm, whose totals differ the most\n"
	"                        between the files, relative to the largest; if none\n"
	"                        differ, the first miss event counted; else the first)\n"
	"  --top N               with --compare, show N functions and N lines (default: 20)\n"
	"\n"
	"callgrind.out files (callgrind_annotate of Valgrind 3.19):\n"
	"  When the first argument not starting with '-' names a callgrind.out file\n"
	"  (its first line \"# callgrind format\", or a header line only Callgrind\n"
	"  writes: version:, creator:, positions:, pid:, part:, thread:), the command\n"
	"  line is callgrind_annotate's: options --opt=value only (--inclusive=yes|no,\n"
	"  --tree=none|caller|calling|both, --threshold=N, --show=A,B, --sort=A:N,B,\n"
	"  --show-percs=yes|no, --auto=yes|no, --context=N, -I=DIR/--include=DIR, and\n"
	"  cgtrace's --format=text|json|dot, --node-threshold=N, --edge-threshold=N),\n"
	"  the arguments after the file source files to annotate, and the output\n"
	"  callgrind_annotate's (or its JSON, or the call graph for Graphviz).  Its\n"
	"  help: cgtrace report --help FILE.\n";

enum opt {
	OPT_HELP, OPT_VERSION, OPT_DIFF, OPT_MOD_FILENAME, OPT_MOD_FUNCNAME, OPT_SHOW, OPT_SORT,
	OPT_THRESHOLD, OPT_SHOW_PERCS, OPT_NO_SHOW_PERCS, OPT_SHOW_PERCS_YES, OPT_SHOW_PERCS_NO,
	OPT_ANNOTATE, OPT_NO_ANNOTATE, OPT_AUTO_YES, OPT_AUTO_NO, OPT_CONTEXT, OPT_COLOR,
	OPT_FORMAT, OPT_COMPARE, OPT_TOP, OPT_ARCHIVE,
};

static const struct {
	const char *name;
	enum opt opt;
	int takes_value;
	const char *display;	/* how argparse names the action in messages */
} options[] = {
	{ "--help", OPT_HELP, 0, "-h/--help" },
	{ "--version", OPT_VERSION, 0, "--version" },
	{ "--diff", OPT_DIFF, 0, "--diff" },
	{ "--mod-filename", OPT_MOD_FILENAME, 1, "--mod-filename" },
	{ "--mod-funcname", OPT_MOD_FUNCNAME, 1, "--mod-funcname" },
	{ "--show", OPT_SHOW, 1, "--show" },
	{ "--sort", OPT_SORT, 1, "--sort" },
	{ "--threshold", OPT_THRESHOLD, 1, "--threshold" },
	{ "--show-percs", OPT_SHOW_PERCS, 0, "--show-percs/--no-show-percs" },
	{ "--no-show-percs", OPT_NO_SHOW_PERCS, 0, "--show-percs/--no-show-percs" },
	{ "--show-percs=yes", OPT_SHOW_PERCS_YES, 0, "--show-percs=yes" },
	{ "--show-percs=no", OPT_SHOW_PERCS_NO, 0, "--show-percs=no" },
	{ "--annotate", OPT_ANNOTATE, 0, "--annotate/--no-annotate" },
	{ "--no-annotate", OPT_NO_ANNOTATE, 0, "--annotate/--no-annotate" },
	{ "--auto=yes", OPT_AUTO_YES, 0, "--auto=yes" },
	{ "--auto=no", OPT_AUTO_NO, 0, "--auto=no" },
	{ "--context", OPT_CONTEXT, 1, "--context" },
	{ "--color", OPT_COLOR, 1, "--color" },
	{ "--format", OPT_FORMAT, 1, "--format" },
	{ "--compare", OPT_COMPARE, 0, "--compare" },
	{ "--top", OPT_TOP, 1, "--top" },
	{ "--archive", OPT_ARCHIVE, 1, "--archive" },
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

/* argparse's usage error: usage, then "PROG: error: ...", status 2. */
static int arg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int arg_error(const char *fmt, ...)
{
	va_list ap;
	fputs(usage_report, stderr);
	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* Finds the option an argument names: exactly (the whole argument, or the
   part before "="), else by unique prefix.  -1: none; -2: ambiguous
   (reported). */
static int find_option(const char *arg, const char **value)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);

	*value = NULL;
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strcmp(options[i].name, arg) == 0)
			return (int)i;
	if (eq != NULL)
		for (size_t i = 0; i < N_OPTIONS; i++)
			if (strlen(options[i].name) == len && strncmp(options[i].name, arg, len) == 0) {
				*value = eq + 1;
				return (int)i;
			}
	int found = -1, n = 0;
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strncmp(options[i].name, arg, len) == 0) {
			found = (int)i;
			n++;
		}
	if (n > 1) {
		char list[1024] = "";
		for (size_t i = 0; i < N_OPTIONS; i++)
			if (strncmp(options[i].name, arg, len) == 0)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 list[0] ? ", " : "", options[i].name);
		arg_error("ambiguous option: %.*s could match %s", (int)len, arg, list);
		return -2;
	}
	if (n == 1 && eq != NULL)
		*value = eq + 1;
	return found;
}

/* Python's float(): blanks around, an optional sign, digits with single
   underscores between them, a fraction, an exponent; inf and nan.  Of any
   length, as Python's: the copy without underscores is as long as s. */
static int python_float(const char *s, double *out)
{
	char *buf = malloc(strlen(s) + 1);
	size_t n = 0;
	if (buf == NULL)
		return -1;
	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	for (; *s; s++) {
		if (*s == '_') {
			if (n == 0 || buf[n - 1] < '0' || buf[n - 1] > '9' || s[1] < '0' || s[1] > '9') {
				free(buf);
				return -1;
			}
			continue;
		}
		buf[n++] = *s;
	}
	while (n > 0 && (buf[n - 1] == ' ' || (buf[n - 1] >= '\t' && buf[n - 1] <= '\r')))
		n--;
	buf[n] = '\0';
	int rc = -1;
	if (n > 0 && !strpbrk(buf, "xXpP")) {
		char *end;
		*out = strtod(buf, &end);
		rc = *end == '\0' ? 0 : -1;
	}
	free(buf);
	return rc;
}

/* Python's int() in base 10, of any length: beyond 64 bits, the nearest
   64-bit value (for --context, the same output: no file has 2^63 lines). */
static int python_int(const char *s, long *out)
{
	int neg = 0, digits = 0;
	unsigned long v = 0, limit;
	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	limit = neg ? (unsigned long)LONG_MAX + 1 : (unsigned long)LONG_MAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		v = v > (limit - d) / 10 ? limit : v * 10 + d;
		digits++;
		if (s[1] == '_' && s[2] >= '0' && s[2] <= '9')
			s++;
	}
	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	if (digits == 0 || *s != '\0')
		return -1;
	*out = neg ? (v == limit ? LONG_MIN : -(long)v) : (long)v;
	return 0;
}

/* value.split(","), in a copy. */
static char **split_commas(const char *value, unsigned *n)
{
	unsigned count = 1;
	for (const char *p = value; *p; p++)
		count += *p == ',';
	char **items = calloc(count + 1, sizeof(char *));
	char *copy = strdup(value);
	if (items == NULL || copy == NULL) {
		free(items);
		free(copy);
		return NULL;
	}
	*n = 0;
	for (char *p = copy, *next; p != NULL; p = next) {
		next = strchr(p, ',');
		if (next != NULL)
			*next++ = '\0';
		items[(*n)++] = p;
	}
	return items;
}

/* The newest cachegrind.out.* in the current directory (malloc'd). */
static char *newest_cgout(void)
{
	DIR *dir = opendir(".");
	struct dirent *d;
	char *best = NULL;
	struct timespec best_time = { 0, 0 };

	if (dir == NULL)
		return NULL;
	while ((d = readdir(dir)) != NULL) {
		struct stat st;
		if (strncmp(d->d_name, "cachegrind.out.", 15) != 0 || stat(d->d_name, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (best == NULL || st.st_mtim.tv_sec > best_time.tv_sec ||
		    (st.st_mtim.tv_sec == best_time.tv_sec && st.st_mtim.tv_nsec > best_time.tv_nsec)) {
			free(best);
			best = strdup(d->d_name);
			best_time = st.st_mtim;
		}
	}
	closedir(dir);
	return best;
}

/* --compare: the options that apply checked, the rest refused. */
static int compare_files(const char *const *files, unsigned n_files,
			 const struct cgt_annotate_options *o, unsigned top, unsigned long given)
{
	const unsigned long applies = 1ul << OPT_COMPARE | 1ul << OPT_SHOW | 1ul << OPT_TOP |
				      1ul << OPT_FORMAT;
	struct cgt_error e = { 0 };

	for (size_t i = 0; i < N_OPTIONS; i++)
		if (given & ~applies & (1ul << options[i].opt))
			return arg_error("argument --compare: not allowed with argument %s",
					 options[i].display);
	if (n_files < 2)
		return arg_error("argument --compare: two or more cachegrind-out-files to compare, "
				 "not %u", n_files);
	if (o->show != NULL && o->n_show != 1)
		return arg_error("argument --show: with --compare, one event, not a list of %u",
				 o->n_show);
	const struct cgt_compare_options co = { files, n_files, o->show ? o->show[0] : NULL, top,
						o->json };
	if (cgt_compare(stdout, &co, &e) < 0) {
		fflush(stdout);
		return report_error(&e);
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct cgt_annotate_options o = { .threshold = 0.1, .show_percs = 1, .annotate = 1,
					  .context = 8 };
	struct cgt_mod *mod_filename = NULL, *mod_funcname = NULL;
	const char **files = calloc((size_t)argc + 1, sizeof(char *));
	unsigned n_files = 0;
	int color = -1, options_done = 0, status = 2, compare = 0;
	unsigned long given = 0;	/* 1 << enum opt, of the options given */
	unsigned top = 20;
	char *newest = NULL, *invocation = NULL;
	const char *archive = NULL;
	struct cgt_archive *sources = NULL;

	if (files == NULL)
		return 1;
	/* A callgrind.out file takes callgrind_annotate's command line, whose
	   first argument not starting with '-' is the file. */
	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-') {
			if (cgt_callgrind_sniff(argv[i])) {
				free(files);
				return cmd_report_callgrind(argc, argv);
			}
			break;
		}
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value;
		if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
			files[n_files++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			options_done = 1;
			continue;
		}
		if (strcmp(arg, "-h") == 0) {
			printf("%s%s", usage_report, help_report);
			status = 0;
			goto out;
		}
		int k = arg[1] == '-' ? find_option(arg, &value) : -1;
		if (k == -2)
			goto out;
		if (k < 0) {
			arg_error("unrecognized arguments: %s", arg);
			goto out;
		}
		if (options[k].takes_value && value == NULL) {
			if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] != '\0' &&
					      !(argv[i + 1][1] >= '0' && argv[i + 1][1] <= '9'))) {
				arg_error("argument %s: expected one argument", options[k].display);
				goto out;
			}
			value = argv[++i];
		} else if (!options[k].takes_value && value != NULL) {
			arg_error("argument %s: ignored explicit argument '%s'", options[k].display, value);
			goto out;
		}
		given |= 1ul << options[k].opt;
		switch (options[k].opt) {
		case OPT_HELP:
			printf("%s%s", usage_report, help_report);
			status = 0;
			goto out;
		case OPT_VERSION:
			printf(PROG " %s (cg_annotate of Valgrind 3.22 and later)\n", cgtrace_version);
			status = 0;
			goto out;
		case OPT_DIFF: o.diff = 1; break;
		case OPT_MOD_FILENAME:
		case OPT_MOD_FUNCNAME: {
			struct cgt_mod *m = cgt_mod_parse(value);
			if (m == NULL) {
				arg_error("argument %s: invalid search_and_replace value: '%s'",
					  options[k].display, value);
				goto out;
			}
			struct cgt_mod **slot = options[k].opt == OPT_MOD_FILENAME ? &mod_filename : &mod_funcname;
			cgt_mod_free(*slot);
			*slot = m;
			break;
		}
		case OPT_SHOW:
		case OPT_SORT: {
			unsigned n;
			char **items = split_commas(value, &n);
			if (items == NULL)
				goto out;
			if (options[k].opt == OPT_SHOW) {
				if (o.show)
					free(o.show[0]), free(o.show);
				o.show = items;
				o.n_show = n;
			} else {
				if (o.sort)
					free(o.sort[0]), free(o.sort);
				o.sort = items;
				o.n_sort = n;
			}
			break;
		}
		case OPT_THRESHOLD: {
			double t;
			if (python_float(value, &t) < 0 || !(t >= 0 && t <= 20)) {
				arg_error("argument --threshold: invalid threshold value: '%s'", value);
				goto out;
			}
			o.threshold = t;
			break;
		}
		case OPT_SHOW_PERCS:
		case OPT_SHOW_PERCS_YES: o.show_percs = 1; break;
		case OPT_NO_SHOW_PERCS:
		case OPT_SHOW_PERCS_NO: o.show_percs = 0; break;
		case OPT_ANNOTATE:
		case OPT_AUTO_YES: o.annotate = 1; break;
		case OPT_NO_ANNOTATE:
		case OPT_AUTO_NO: o.annotate = 0; break;
		case OPT_CONTEXT:
			if (python_int(value, &o.context) < 0) {
				arg_error("argument --context: invalid int value: '%s'", value);
				goto out;
			}
			break;
		case OPT_COLOR:
			color = !strcmp(value, "always") ? 1 : !strcmp(value, "never") ? 0
			      : !strcmp(value, "auto") ? -1 : -2;
			if (color == -2) {
				arg_error("argument --color: invalid choice: '%s' (choose from 'auto', "
					  "'always', 'never')", value);
				goto out;
			}
			break;
		case OPT_FORMAT:
			if (strcmp(value, "text") != 0 && strcmp(value, "json") != 0) {
				arg_error("argument --format: invalid choice: '%s' (choose from 'text', "
					  "'json')", value);
				goto out;
			}
			o.json = strcmp(value, "json") == 0;
			break;
		case OPT_COMPARE: compare = 1; break;
		case OPT_ARCHIVE: archive = value; break;
		case OPT_TOP: {
			uint64_t n;
			if (parse_number(value, 1, UINT_MAX, 0, &n) < 0) {
				arg_error("argument --top: invalid value: '%s' (a whole number, 1 or more)", value);
				goto out;
			}
			top = (unsigned)n;
			break;
		}
		}
	}
	if (compare) {
		status = compare_files(files, n_files, &o, top, given);
		goto out;
	}
	if (given & (1ul << OPT_TOP)) {
		arg_error("argument --top: only with --compare");
		goto out;
	}
	if (n_files == 0) {
		newest = newest_cgout();
		if (newest == NULL) {
			arg_error("no cachegrind-out-file given, and no cachegrind.out.* file here");
			goto out;
		}
		files[n_files++] = newest;
	}
	if (o.diff && n_files != 2) {
		fputs(usage_report, stderr);
		fprintf(stderr, "cg_annotate: error: argument --diff: requires exactly two Cachegrind "
				"output files\n");
		status = 1;
		goto out;
	}
	/* The Invocation line: how the user ran us. */
	size_t len = strlen(PROG) + 1;
	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	invocation = malloc(len);
	if (invocation == NULL)
		goto out;
	/* Appended at its end (strcat from the start would be quadratic). */
	char *end = stpcpy(invocation, PROG);
	for (int i = 1; i < argc; i++)
		end = stpcpy(stpcpy(end, " "), argv[i]);

	o.files = files;
	o.n_files = n_files;
	o.mod_filename = mod_filename;
	o.mod_funcname = mod_funcname;
	o.invocation = invocation;
	o.color = color == -1 ? isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL : color;
	struct cgt_error e;
	int archive_damaged = 0;
	if (archive != NULL) {
		/* the sources annotated are unpacked as they are read */
		archive_damaged = open_archive(archive, &sources, &e);
		if (archive_damaged < 0) {
			status = report_error(&e);
			goto out;
		}
		o.sources = sources;
		o.warnings = stderr;
	}
	status = archive_damaged ? 3 : 0;
	if (cgt_annotate(stdout, &o, &e) < 0) {
		fprintf(stderr, "cg_annotate: error: %s\n", e.msg);
		status = 1;
	}
out:
	cgt_archive_close(sources);
	if (o.show)
		free(o.show[0]), free(o.show);
	if (o.sort)
		free(o.sort[0]), free(o.sort);
	cgt_mod_free(mod_filename);
	cgt_mod_free(mod_funcname);
	free(newest);
	free(invocation);
	free(files);
	return status;
}
