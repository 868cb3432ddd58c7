/*
 * Linked into every program of make test-asan's build, so that every
 * sanitizer finding leaves a file in one directory (SANITIZER_LOGS, fixed at
 * build time), which tests/run-tests.sh checks after every test: a test
 * that expects a command to fail cannot mistake a sanitizer's exit for the
 * expected one. The options are compiled in rather than taken from
 * ASAN_OPTIONS because the tests run cgtrace in a cleared environment too.
 *
 * ASan and LSan honour log_path. UBSan (GCC 12's) writes its report to
 * stderr whatever log_path says, so it aborts instead (abort_on_error), and
 * a SIGABRT handler leaves the file: "abort.PID", pointing at stderr.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__lsan_default_suppressions(void);
const char *__lsan_default_options(void);

const char *__asan_default_options(void)
{
	return "log_path=" SANITIZER_LOGS "/asan:detect_leaks=1:detect_stack_use_after_return=1";
}

/* Leaks that are not ours: in bookworm's glibc (2.36), dprintf's attach
   of its stream to the descriptor seeks, which allocates a buffer that
   __vdprintf_internal never frees; libdebuginfod's client calls dprintf
   when it gives a download up (tests/e2e/debuginfod_hostile.sh, endless
   and huge).  LSan's fast unwinder stops inside glibc, so the allocation
   is all the report names: a stream's buffer.  Only a stream nothing
   reaches can leak one -- glibc lists every open FILE -- such as
   vdprintf's, on its stack. */
const char *__lsan_default_suppressions(void)
{
	return "leak:_IO_file_doallocate\n";
}

/* A suppression used is no finding: no file for it in the logs. */
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

const char *__ubsan_default_options(void)
{
	return "print_stacktrace=1:abort_on_error=1";
}

/* Async-signal-safe: the path is built by hand. */
static void leave_abort_file(int sig)
{
	char path[sizeof(SANITIZER_LOGS) + 32] = SANITIZER_LOGS "/abort.", digits[16];
	static const char note[] = "aborted: a UBSan report (or another abort) went to this process's stderr\n";
	unsigned pid = (unsigned)getpid();
	int n = 0;

	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) != 0);
	size_t at = strlen(path);
	while (n > 0)
		path[at++] = digits[--n];
	path[at] = '\0';
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, note, sizeof(note) - 1) < 0) {
			/* Nothing more can be done inside a dying process. */
		}
		close(fd);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void report_aborts(void)
{
	signal(SIGABRT, leave_abort_file);
}
