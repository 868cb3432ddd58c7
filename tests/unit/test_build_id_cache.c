/*
 * The build-id cache (formats/build_id_cache.c) and the locator that reads
 * it (report/module_files.c), on real ELF files: /bin/sh and /bin/true
 * (two files with build-ids of their own).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "report.h"
#include "trace.h"

static char root[] = "/tmp/cgtrace-unit-buildid-XXXXXX";

/* A module as recorded from path (identified now). */
static struct cgt_module module_of(const char *path)
{
	struct cgt_module m = { 0 };
	m.path = (char *)path;
	cgt_module_identify(&m);
	return m;
}

/* The number of regular files under dir (recursively). */
static int files_under(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *ent;
	while (d != NULL && (ent = readdir(d)) != NULL) {
		if (ent->d_name[0] == '.')
			continue;
		char sub[4096];
		snprintf(sub, sizeof(sub), "%s/%s", dir, ent->d_name);
		struct stat st;
		if (lstat(sub, &st) == 0)
			n += S_ISDIR(st.st_mode) ? files_under(sub) : 1;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

static void copy_file(const char *from, const char *to)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	CHECK(system(cmd) == 0);
}

static void hex_and_paths(void)
{
	const uint8_t id[] = { 0xab, 0xcd, 0x01, 0xff };
	char hex[9];
	CHECK_EQ(cgt_build_id_hex(id, 4, hex, sizeof(hex)), 8);
	CHECK(strcmp(hex, "abcd01ff") == 0);
	char *p = cgt_build_id_path("/c", id, 4, "elf");
	CHECK(p != NULL && strcmp(p, "/c/ab/cd01ff/elf") == 0);
	free(p);
	CHECK(cgt_build_id_path("/c", id, 1, "elf") == NULL);	/* too short to file */
}

static void store_once_and_find(void)
{
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s/cache", root);
	struct cgt_module sh = module_of("/bin/sh");
	struct cgt_error e;
	struct cgt_build_id_added added = { 0 };
	CHECK(sh.build_id_len == 20);
	CHECK(cgt_build_id_cache_store(dir, &sh, &added, &e) == 0);
	int after_first = files_under(dir);
	CHECK(after_first >= 1);	/* the elf; its debug file too where the system has one */
	CHECK_EQ(added.files, after_first);
	CHECK_EQ(cgt_build_id_cache_store(dir, &sh, &added, &e), 0);
	CHECK_EQ(files_under(dir), after_first);	/* never twice */
	CHECK_EQ(added.files, after_first);

	char *foreign;
	char *found = cgt_build_id_cache_find(dir, sh.build_id, sh.build_id_len, "elf", &foreign);
	CHECK(found != NULL && foreign == NULL);
	CHECK(found != NULL && cgt_file_has_build_id(found, sh.build_id, sh.build_id_len) == 1);
	free(found);

	/* A file whose build-id is not the recorded one is never stored. */
	struct cgt_module liar = sh;
	liar.build_id[0] ^= 0xff;
	CHECK(cgt_build_id_cache_store(dir, &liar, &added, &e) == 0);
	CHECK_EQ(files_under(dir), after_first);
	found = cgt_build_id_cache_find(dir, liar.build_id, liar.build_id_len, "elf", &foreign);
	CHECK(found == NULL && foreign == NULL);
}

static void foreign_file_refused(void)
{
	char dir[4200], entry[4400];
	snprintf(dir, sizeof(dir), "%s/foreign", root);
	struct cgt_module sh = module_of("/bin/sh");
	char *path = cgt_build_id_path(dir, sh.build_id, sh.build_id_len, "elf");
	CHECK(path != NULL);
	if (path == NULL)
		return;
	/* /bin/true filed under /bin/sh's build-id */
	snprintf(entry, sizeof(entry), "mkdir -p \"$(dirname '%s')\"", path);
	CHECK(system(entry) == 0);
	copy_file("/bin/true", path);
	char *foreign;
	char *found = cgt_build_id_cache_find(dir, sh.build_id, sh.build_id_len, "elf", &foreign);
	CHECK(found == NULL);
	CHECK(foreign != NULL && strcmp(foreign, path) == 0);
	free(foreign);
	free(path);
}

/* The locator: a module whose recorded path is gone is found in the cache;
   one in no cache is nowhere, with the reason. */
static void locator_order(void)
{
	char dir[4200], prog[4200];
	snprintf(dir, sizeof(dir), "%s/cache2", root);
	snprintf(prog, sizeof(prog), "%s/prog", root);
	copy_file("/bin/sh", prog);
	struct cgt_module m = module_of(prog);
	struct cgt_error e;
	struct cgt_locator *l;
	struct cgt_module_files f;
	struct cgt_build_id_added added = { 0 };
	FILE *warnings = tmpfile();
	const struct cgt_locator_options o = { .build_id_dir = dir, .warnings = warnings };

	CHECK(cgt_locator_open(&l, &o, &e) == 0);
	CHECK(cgt_locate_module(l, &m, &f, &e) == 0);
	CHECK(f.source == CGT_MODULE_RECORDED_PATH && strcmp(f.elf, prog) == 0);
	cgt_module_files_free(&f);

	CHECK(cgt_build_id_cache_store(dir, &m, &added, &e) == 0);
	unlink(prog);
	CHECK(cgt_locate_module(l, &m, &f, &e) == 0);
	CHECK(f.source == CGT_MODULE_CACHE);
	CHECK(f.elf != NULL && strncmp(f.elf, dir, strlen(dir)) == 0);
	cgt_module_files_free(&f);

	/* rebuilt: another file at the path, and the cache still answers */
	copy_file("/bin/true", prog);
	CHECK(cgt_locate_module(l, &m, &f, &e) == 0);
	CHECK(f.source == CGT_MODULE_CACHE);
	cgt_module_files_free(&f);
	cgt_locator_close(l);

	/* no cache: nowhere, and why */
	const struct cgt_locator_options none = { .warnings = warnings };
	CHECK(cgt_locator_open(&l, &none, &e) == 0);
	CHECK(cgt_locate_module(l, &m, &f, &e) == 0);
	CHECK(f.source == CGT_MODULE_NOWHERE && f.elf == NULL);
	CHECK(f.why != NULL && strstr(f.why, "has changed size since recording") != NULL);
	CHECK(f.why != NULL && strstr(f.why, "no build-id cache,") != NULL);
	CHECK(f.why != NULL && strstr(f.why, "DEBUGINFOD_URLS") != NULL);
	cgt_module_files_free(&f);
	cgt_locator_close(l);
	fclose(warnings);
}

int main(void)
{
	PLAN(4);
	if (mkdtemp(root) == NULL)
		return 1;
	RUN(hex_and_paths);
	RUN(store_once_and_find);
	RUN(foreign_file_refused);
	RUN(locator_order);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return CHECK_DONE();
}
