/*
 * cgt_symbolize_code answers what Valgrind 3.19's debug information tells
 * Callgrind, here for a built test program (a PIE) loaded where Valgrind
 * loads one (0x108000), every address taken from the ELF file itself.
 * What a real `valgrind --tool=callgrind --skip-plt=no` run says of the
 * same program: code in .text is in the program's object, named; code in
 * .plt is in object "???" and named "0x... [PLT]"; code in .plt.got, .init
 * and .fini is in object "???" with no section suffix.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "report.h"

#define BIAS 0x108000ull

static char program[4096];
static struct cgt_mapping map;
static struct cgt_symbolizer *sy;
static struct {
	GElf_Shdr text, plt, plt_got, plt_sec, init, data, bss, got, got_plt;
	uint64_t main_addr, init_addr, init_size;
} elf;

/* The program's section headers and symbols, and its r-x PT_LOAD as one
   mapping of a module map. */
static int read_program(void)
{
	int fd = open(program, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx, n_ph;
	if (e == NULL || elf_getshdrstrndx(e, &shstrndx) != 0 || elf_getphdrnum(e, &n_ph) != 0)
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		struct {
			const char *name;
			GElf_Shdr *to;
		} wanted[] = { { ".text", &elf.text }, { ".plt", &elf.plt }, { ".plt.got", &elf.plt_got },
			       { ".plt.sec", &elf.plt_sec }, { ".init", &elf.init }, { ".data", &elf.data },
			       { ".bss", &elf.bss }, { ".got", &elf.got }, { ".got.plt", &elf.got_plt } };
		for (unsigned i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
			if (strcmp(n, wanted[i].name) == 0)
				*wanted[i].to = sh;
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym st;
			gelf_getsym(d, (int)i, &st);
			const char *sn = elf_strptr(e, sh.sh_link, st.st_name);
			if (strcmp(sn, "main") == 0)
				elf.main_addr = st.st_value;
			else if (strcmp(sn, "_init") == 0) {
				elf.init_addr = st.st_value;
				elf.init_size = st.st_size;
			}
		}
	}
	for (size_t i = 0; i < n_ph; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type != PT_LOAD || (ph.p_flags & (PF_X | PF_W)) != PF_X)
			continue;
		map.module.start = BIAS + (ph.p_vaddr & ~0xfffull);
		map.module.file_offset = ph.p_offset & ~0xfffull;
		map.module.size = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull) - (ph.p_vaddr & ~0xfffull);
	}
	elf_end(e);
	close(fd);
	map.module.prot = 5;
	map.module.path = program;
	cgt_module_identify(&map.module);
	map.epoch_mapped = 1;
	map.epoch_unmapped = UINT32_MAX;
	return elf.text.sh_size && elf.plt.sh_size > 16 && elf.init.sh_size && elf.data.sh_size &&
			       elf.bss.sh_size && elf.main_addr && elf.init_addr && map.module.size
		       ? 0
		       : -1;
}

static struct cgt_code_info code(uint64_t vaddr, uint32_t epoch)
{
	struct cgt_code_info ci;
	memset(&ci, 0xa5, sizeof(ci));
	cgt_symbolize_code(sy, BIAS + vaddr, epoch, &ci);
	return ci;
}

static void test_function_entry(void)
{
	struct cgt_code_info ci = code(elf.main_addr, 1);
	CHECK(ci.obj != NULL && strcmp(ci.obj, program) == 0);
	CHECK_EQ(ci.text_bias, BIAS);
	CHECK(ci.fn != NULL && strcmp(ci.fn, "main") == 0);
	CHECK(ci.file != NULL && strstr(ci.file, "recursion.c") != NULL);
	CHECK(ci.line > 0);
	CHECK_EQ(ci.sect_kind, CGT_SECT_TEXT);
	CHECK_EQ(ci.is_entry, 1);

	/* The same as cgt_symbolize, which is unchanged by the question. */
	struct cgt_location loc;
	cgt_symbolize(sy, BIAS + elf.main_addr, 1, &loc);
	CHECK(loc.fn == ci.fn && loc.file == ci.file && loc.line == ci.line);
}

static void test_inside_function(void)
{
	struct cgt_code_info ci = code(elf.main_addr + 1, 1);
	CHECK(ci.obj != NULL && strcmp(ci.obj, program) == 0);
	CHECK_EQ(ci.text_bias, BIAS);
	CHECK(ci.fn != NULL && strcmp(ci.fn, "main") == 0);
	CHECK_EQ(ci.sect_kind, CGT_SECT_TEXT);
	CHECK_EQ(ci.is_entry, 0);
}

/* Valgrind places .plt; .plt.got and .plt.sec it does not know. */
static void test_plt(void)
{
	struct cgt_code_info ci = code(elf.plt.sh_addr + 16, 1);	/* the first entry after PLT0 */
	CHECK(ci.obj == NULL);
	CHECK_EQ(ci.text_bias, 0);
	CHECK(ci.fn == NULL);
	CHECK_EQ(ci.sect_kind, CGT_SECT_PLT);
	CHECK_EQ(ci.is_entry, 0);
	const GElf_Shdr *other[] = { &elf.plt_got, &elf.plt_sec };
	for (unsigned i = 0; i < 2; i++) {
		if (other[i]->sh_size == 0)
			continue;
		ci = code(other[i]->sh_addr, 1);
		CHECK(ci.obj == NULL);
		CHECK_EQ(ci.sect_kind, CGT_SECT_UNKNOWN);
	}
}

/* _init is in .init, which is not .text: no object, but a function name
   if its symbol has a size (crti.o's has none: Valgrind drops it). */
static void test_init(void)
{
	CHECK(elf.init_addr >= elf.init.sh_addr && elf.init_addr < elf.init.sh_addr + elf.init.sh_size);
	struct cgt_code_info ci = code(elf.init_addr, 1);
	CHECK(ci.obj == NULL);
	CHECK_EQ(ci.text_bias, 0);
	if (elf.init_size == 0) {
		CHECK(ci.fn == NULL);
		CHECK_EQ(ci.is_entry, 0);
	} else {
		CHECK(ci.fn != NULL && strcmp(ci.fn, "_init") == 0);
		CHECK_EQ(ci.is_entry, 1);
	}
	CHECK_EQ(ci.sect_kind, CGT_SECT_UNKNOWN);
}

/* Data sections: from the section headers, though the module map holds
   only the executable mapping. */
static void test_data(void)
{
	struct {
		const GElf_Shdr *sh;
		enum cgt_sect_kind kind;
	} cases[] = { { &elf.data, CGT_SECT_DATA },
		      { &elf.bss, CGT_SECT_BSS },
		      { &elf.got, CGT_SECT_GOT },
		      { &elf.got_plt, CGT_SECT_GOTPLT } };
	for (unsigned i = 0; i < 4; i++) {
		if (cases[i].sh->sh_size == 0)
			continue;
		struct cgt_code_info first = code(cases[i].sh->sh_addr, 1),
				     last = code(cases[i].sh->sh_addr + cases[i].sh->sh_size - 1, 1);
		CHECK(first.obj == NULL && last.obj == NULL);
		CHECK_EQ(first.sect_kind, cases[i].kind);
		CHECK_EQ(last.sect_kind, cases[i].kind);
	}
	/* .bss is the last thing placed. */
	CHECK_EQ(code(elf.bss.sh_addr + elf.bss.sh_size, 1).sect_kind, CGT_SECT_UNKNOWN);
}

/* Before the module is mapped, nothing is known of its addresses. */
static void test_other_epoch(void)
{
	struct cgt_code_info ci = code(elf.main_addr, 0);
	CHECK(ci.obj == NULL && ci.fn == NULL && ci.file == NULL);
	CHECK_EQ(ci.line, 0);
	CHECK_EQ(ci.sect_kind, CGT_SECT_UNKNOWN);
	CHECK_EQ(ci.is_entry, 0);
	CHECK_EQ(code(elf.data.sh_addr, 0).sect_kind, CGT_SECT_UNKNOWN);
}

int main(void)
{
	const char *build = getenv("BUILD");
	struct cgt_error e;

	PLAN(6);
	snprintf(program, sizeof(program), "%s/tests/programs/recursion", build ? build : "build");
	elf_version(EV_CURRENT);
	if (read_program() < 0 || cgt_symbolizer_open(&sy, NULL, &e) < 0) {
		printf("  cannot read %s\n", program);
		return 1;
	}
	cgt_symbolizer_use_mappings(sy, &map, 1);
	RUN(test_function_entry);
	RUN(test_inside_function);
	RUN(test_plt);
	RUN(test_init);
	RUN(test_data);
	RUN(test_other_epoch);
	cgt_symbolizer_close(sy);
	return CHECK_DONE();
}
