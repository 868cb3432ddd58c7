/* Loads a shared library at run time (the path of libplugin.so is
   argv[1]), calls into it and unloads it: code whose object appears in
   the middle of the run. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: dlopen PATH-OF-libplugin.so\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (lib == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	long (*work)(int) = (long (*)(int))dlsym(lib, "plugin_work");
	if (work == NULL) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	long total = 0;
	for (int i = 0; i < 3; i++)
		total += work(100 + i);
	dlclose(lib);
	printf("%ld\n", total);
	return 0;
}
