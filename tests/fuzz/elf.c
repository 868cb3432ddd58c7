/*
 * Fuzz target: the ELF and DWARF files `cgtrace simulate` reads to name
 * functions and lines (report/elf_symbols.c, report/dwarf_lines.c, with
 * elfutils' libelf and libdw below them): the input is the module's file;
 * its symbols and line tables are loaded and looked up at addresses
 * spread over its executable segments and sections.  Seeds: the test
 * programs of build/tests/programs/ (stripped of most of their DWARF by
 * the seed script, to stay small).
 */
#include <gelf.h>

#include "fuzz.h"
#include "symbols.h"

/* Addresses to look up: spread over the executable segments and the
   allocated sections, both ends included. */
static size_t addresses(Elf *elf, uint64_t *out, size_t cap)
{
	size_t n = 0, phnum = 0;
	GElf_Phdr ph;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getphdrnum(elf, &phnum) == 0)
		for (size_t i = 0; i < phnum && i < 16; i++)
			if (gelf_getphdr(elf, (int)i, &ph) != NULL && ph.p_type == PT_LOAD)
				for (uint64_t k = 0; k <= 16 && n < cap; k++)
					out[n++] = ph.p_vaddr + ph.p_memsz / 16 * k;
	for (int i = 0; i < 64 && (scn = elf_nextscn(elf, scn)) != NULL; i++)
		if (gelf_getshdr(scn, &sh) != NULL && (sh.sh_flags & SHF_ALLOC))
			for (uint64_t k = 0; k <= 4 && n < cap; k++)
				out[n++] = sh.sh_addr + sh.sh_size / 4 * k;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_file f;
	struct string_set names = { 0 };
	uint64_t at[512];
	size_t n = 0;

	elf_version(EV_CURRENT);
	fuzz_file_open(&f, data, size);
	Elf *elf = elf_begin(f.fd, ELF_C_READ_MMAP, NULL);
	if (elf != NULL) {
		n = addresses(elf, at, sizeof(at) / sizeof(at[0]));
		struct elf_symbols *s = elf_symbols_load(elf, f.path, NULL, &names);
		for (size_t i = 0; s != NULL && i < n; i++) {
			elf_symbols_find(s, at[i]);
			elf_symbols_find(s, at[i] + 1);
		}
		elf_symbols_free(s);
		elf_end(elf);
	}
	struct dwarf_lines *l = dwarf_lines_open(f.path, NULL, 0, &names);
	for (size_t i = 0; l != NULL && i < n; i++) {
		const char *file = NULL;
		int32_t line = 0;
		dwarf_lines_find(l, at[i], &file, &line);
	}
	dwarf_lines_close(l);
	string_set_free(&names);
	fuzz_file_close(&f);
	return 0;
}
