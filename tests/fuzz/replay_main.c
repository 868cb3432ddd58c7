/*
 * The replay driver: a fuzz target without libFuzzer, for `make test`.
 *
 *   build/tests/fuzz/TARGET FILE-OR-DIRECTORY...
 *
 * Runs the target on each file (a directory: on each file in it, in name
 * order), each in a child process with a time limit, and prints TAP:
 * "1..N", then "ok N - FILE" when the child returned, or "not ok N -
 * FILE" with what happened (a signal, an exit status, the time limit).
 * Exits 1 if any failed.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TIME_LIMIT 20			/* seconds per input */
#define MEMORY_LIMIT (2048ul << 20)	/* address space, as make fuzz's -rss_limit_mb */

static char **files;
static size_t n_files, cap_files;

static void add(const char *path)
{
	if (n_files == cap_files) {
		cap_files = cap_files ? 2 * cap_files : 64;
		files = realloc(files, cap_files * sizeof(*files));
		if (files == NULL) {
			perror("replay");
			exit(2);
		}
	}
	files[n_files++] = strdup(path);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_arg(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		add(path);	/* a missing file fails in its child */
		return;
	}
	DIR *d = opendir(path);
	struct dirent *ent;
	size_t first = n_files;
	while (d != NULL && (ent = readdir(d)) != NULL) {
		char *p;
		if (ent->d_name[0] == '.' || asprintf(&p, "%s/%s", path, ent->d_name) < 0)
			continue;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			add(p);
		free(p);
	}
	if (d != NULL)
		closedir(d);
	qsort(files + first, n_files - first, sizeof(*files), by_name);
}

static int run_one(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *data = malloc(cap);
	while (data != NULL && (got = fread(data + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			data = realloc(data, cap *= 2);
	}
	fclose(f);
	if (data == NULL)
		return 1;
	/* An exact copy, as libFuzzer hands it over. */
	uint8_t *input = malloc(n ? n : 1);
	memcpy(input, data, n);
	free(data);
	LLVMFuzzerTestOneInput(input, n);
	free(input);
	return 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	for (int i = 1; i < argc; i++)
		add_arg(argv[i]);
	printf("1..%zu\n", n_files);
	fflush(stdout);
	for (size_t i = 0; i < n_files; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("replay: fork");
			return 2;
		}
		if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__)
			struct rlimit lim = { MEMORY_LIMIT, MEMORY_LIMIT };
			setrlimit(RLIMIT_AS, &lim);
#endif
			alarm(TIME_LIMIT);
			_exit(run_one(files[i]));
		}
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %zu - %s\n", i + 1, files[i]);
		} else {
			failed = 1;
			if (WIFSIGNALED(status))
				printf("not ok %zu - %s\n  %s\n", i + 1, files[i],
				       WTERMSIG(status) == SIGALRM ? "ran longer than the time limit"
								   : strsignal(WTERMSIG(status)));
			else
				printf("not ok %zu - %s\n  exit status %d\n", i + 1, files[i],
				       WEXITSTATUS(status));
		}
		fflush(stdout);
	}
	return failed;
}
