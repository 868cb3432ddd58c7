/*
 * What `cgtrace archive` puts into an archive (report.h): each module of
 * a trace by its build-id, from wherever cgt_locate_module finds it now,
 * with the separate debug file the symbolizer would read beside it, and
 * (asked for) the source files its line tables name, so that another
 * machine symbolizes and annotates the trace as this one does.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "symbols.h"

struct archiving {
	struct cgt_archive_writer *w;
	FILE *warnings;
	struct cgt_archive_counts *counts;
};

static void __attribute__((format(printf, 2, 3))) warn(const struct archiving *a, const char *fmt, ...)
{
	if (a->warnings == NULL)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("cgtrace: warning: ", a->warnings);
	vfprintf(a->warnings, fmt, ap);
	fputc('\n', a->warnings);
	va_end(ap);
}

/* Adds the file at path as member: a file that cannot be read is a
   warning; negative only when the archive cannot be written. */
static int add(struct archiving *a, const char *member, const char *path, struct cgt_error *e)
{
	uint64_t before = cgt_archive_data_bytes(a->w);
	int rc = cgt_archive_add(a->w, member, path, e);
	if (rc < 0 && cgt_archive_broken(a->w))
		return rc;
	if (rc < 0)
		warn(a, "%s; not archived", e->msg);
	if (rc == 1) {
		a->counts->files++;
		a->counts->bytes += cgt_archive_data_bytes(a->w) - before;
	}
	return 0;
}

/* The source files the line tables of the ELF file at path name, those
   that are regular files here, as sources/PATH. */
static int add_sources(struct archiving *a, const char *path, struct cgt_error *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	int rc = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	while (dw != NULL && rc == 0 && dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0) {
		Dwarf_Files *files;
		Dwarf_Attribute attr;
		size_t n;
		if (dwarf_getsrcfiles(&cudie, &files, &n) != 0)
			continue;
		const char *comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr));
		for (size_t i = 0; i < n && rc == 0; i++) {
			const char *name = dwarf_filesrc(files, i, NULL, NULL);
			char *path = NULL;
			struct stat st;
			/* a relative name is the compilation's directory's, as the
			   symbolizer (and Valgrind) names it */
			if (name != NULL && name[0] != '/' && comp_dir != NULL && comp_dir[0] == '/' &&
			    asprintf(&path, "%s/%s", comp_dir, name) < 0)
				path = NULL;
			if (name != NULL && name[0] == '/')
				path = strdup(name);
			if (path == NULL || stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
				free(path);
				continue;	/* "<built-in>", or not here */
			}
			char *member = cgt_archive_source_member(path);
			if (member != NULL)
				rc = add(a, member, path, e);
			free(member);
			free(path);
		}
	}
	if (dw != NULL)
		dwarf_end(dw);
	close(fd);
	return rc;
}

/* Adds m (found at f) and its debug file, and their sources if asked. */
static int add_module(struct archiving *a, const struct cgt_module *m,
		      const struct cgt_module_files *f, int sources, struct cgt_error *e)
{
	char *elf_member = cgt_build_id_path("build-id", m->build_id, m->build_id_len, "elf");
	char *debug_member = cgt_build_id_path("build-id", m->build_id, m->build_id_len, "debug");
	char *debug = NULL;
	int rc = elf_member == NULL || debug_member == NULL
			 ? cgt_fail(e, cgt_err_nomem, "out of memory")
			 : add(a, elf_member, f->elf, e);
	int fd = rc == 0 ? open(f->elf, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf != NULL) {
			debug = debug_file_path(elf, f->elf, f->debug);
			elf_end(elf);
		}
		close(fd);
	}
	if (rc == 0 && debug != NULL)
		rc = add(a, debug_member, debug, e);
	if (rc == 0 && sources)
		rc = add_sources(a, debug != NULL ? debug : f->elf, e);
	if (rc == 0)
		a->counts->modules++;
	free(debug);
	free(elf_member);
	free(debug_member);
	return rc;
}

/* Whether maps[i] is the module of an earlier mapping (mapped twice, or
   again after an unmap): the same build-id, or without one the same path. */
static int seen_before(const struct cgt_mapping *maps, size_t i)
{
	const struct cgt_module *m = &maps[i].module;
	for (size_t k = 0; k < i; k++) {
		const struct cgt_module *o = &maps[k].module;
		if (m->build_id_len < 2 ? o->build_id_len < 2 && strcmp(o->path, m->path) == 0
					: o->build_id_len == m->build_id_len &&
						  memcmp(o->build_id, m->build_id, m->build_id_len) == 0)
			return 1;
	}
	return 0;
}

int cgt_archive_modules(struct cgt_archive_writer *w, struct cgt_locator *l,
			const struct cgt_mapping *maps, size_t n, int sources, FILE *warnings,
			struct cgt_archive_counts *counts, struct cgt_error *e)
{
	struct archiving a = { w, warnings, counts };
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < n; i++) {
		const struct cgt_module *m = &maps[i].module;
		if (seen_before(maps, i))
			continue;
		if (m->build_id_len < 2) {
			warn(&a, "%s has no build-id to file it under; not archived", m->path);
			counts->not_found++;
			continue;
		}
		struct cgt_module_files f;
		if (cgt_locate_module(l, m, &f, e) < 0)
			return -e->status;
		int rc = 0;
		if (f.source == CGT_MODULE_NOWHERE) {
			warn(&a, "%s: not found (%s); not archived", m->path, f.why != NULL ? f.why : "");
			counts->not_found++;
		} else {
			rc = add_module(&a, m, &f, sources, e);
		}
		cgt_module_files_free(&f);
		if (rc < 0)
			return rc;
	}
	return 0;
}
