/* A library (argv[1]: libplugin.so) loaded, used, unloaded, its place
   taken, and loaded again elsewhere, where it stays: the code of its
   first load has the lines of where it is at the end (Callgrind looks
   positions up then, at the object's new place). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

static long use(const char *path, uintptr_t *lo, uintptr_t *hi)
{
	void *lib = dlopen(path, RTLD_NOW);
	long (*work)(int) = lib ? (long (*)(int))dlsym(lib, "plugin_work") : NULL;
	if (work == NULL)
		return -1;
	long r = work(100);
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	while (lo != NULL && maps != NULL && fgets(line, sizeof(line), maps) != NULL)
		if (strstr(line, "libplugin") != NULL) {
			unsigned long a, b;
			if (sscanf(line, "%lx-%lx", &a, &b) == 2) {
				if (*lo == 0)
					*lo = a;
				*hi = b;
			}
		}
	if (maps != NULL)
		fclose(maps);
	/* the first load is unloaded; the second stays, to the end */
	if (lo != NULL)
		dlclose(lib);
	return r;
}

int main(int argc, char **argv)
{
	uintptr_t lo = 0, hi = 0;
	if (argc < 2)
		return 2;
	long t = use(argv[1], &lo, &hi);
	/* the old place taken: the next load goes elsewhere */
	if (lo == 0 || mmap((void *)lo, hi - lo, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0) == MAP_FAILED)
		return 1;
	t += use(argv[1], NULL, NULL);
	printf("%ld\n", t);
	return 0;
}
