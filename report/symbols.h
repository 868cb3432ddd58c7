/*
 * Internal to report/: the pieces of the symbolizer.
 *  - string_set: interning, so equal names are equal pointers;
 *  - elf_symbols: the function containing an address, by Valgrind's rules;
 *  - elf_sections: the section ranges Valgrind's debug information has;
 *  - dwarf_lines: the file and line of an address, by Valgrind's rules.
 */
#ifndef CGTRACE_SYMBOLS_H
#define CGTRACE_SYMBOLS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "sim.h"

struct string_set {
	char **slots;
	size_t cap, n;
};

/* The interned copy of s (NULL if out of memory). */
const char *string_set_intern(struct string_set *set, const char *s);
void string_set_free(struct string_set *set);

/* The section of elf called name, or NULL (elf_files.c). */
Elf_Scn *elf_section(Elf *elf, const char *name);

/* The separate debug file of elf (at path): found_debug if it is given
   and has elf's build-id (a file found with it: cgt_locate_module), else
   as Valgrind finds it; or NULL.  The caller closes *fd after elf_end. */
Elf *debug_file_open(Elf *elf, const char *path, const char *found_debug, int *fd);
/* The path of that file (malloc'd), or NULL. */
char *debug_file_path(Elf *elf, const char *path, const char *found_debug);

struct elf_symbols;

/* The function symbols of an ELF file (and of its separate debug file, if
   any: see debug_file_open), by ELF virtual address.  NULL if it has
   none. */
struct elf_symbols *elf_symbols_load(Elf *elf, const char *path, const char *found_debug,
				     struct string_set *names);
/* The name of the function containing vaddr, or NULL. */
const char *elf_symbols_find(const struct elf_symbols *s, uint64_t vaddr);
/* 1 if that function starts exactly at vaddr (VG_(get_fnname_if_entry)). */
int elf_symbols_is_entry(const struct elf_symbols *s, uint64_t vaddr);
void elf_symbols_free(struct elf_symbols *s);

/* ELF virtual addresses [lo, lo + size); size 0: absent. */
struct svma_range {
	uint64_t lo, size;
};

/* The sections of an ELF file that Valgrind's debug information places
   (elf_sections.c). */
struct elf_sections {
	int valid;	/* Valgrind read the file: VG_(find_DebugInfo) finds its .text */
	struct svma_range text, data, sdata, bss, sbss, plt, got, gotplt, opd;
};

void elf_sections_read(Elf *elf, struct elf_sections *s);
/* What VG_(DebugInfo_sect_kind) says of vaddr in this file alone. */
enum cgt_sect_kind elf_sections_kind(const struct elf_sections *s, uint64_t vaddr);

struct dwarf_lines;

/* The line tables of an ELF file loaded at bias (or of its separate debug
   file: see debug_file_open).  NULL if it has none. */
struct dwarf_lines *dwarf_lines_open(const char *path, const char *found_debug, uint64_t bias,
				     struct string_set *names);
/* Sets *file and *line for the run-time address addr, if known. */
void dwarf_lines_find(struct dwarf_lines *l, uint64_t addr, const char **file, int32_t *line);
void dwarf_lines_close(struct dwarf_lines *l);

#endif
