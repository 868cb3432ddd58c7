/*
 * Where an ELF file's sections are for Valgrind 3.19's debug information:
 * the ranges m_debuginfo/readelf.c read_elf_debug_info sets (di->text_*,
 * data_*, sdata_*, bss_*, sbss_*, plt_*, got_*, gotplt_*, opd_*), which
 * Callgrind asks about through VG_(find_DebugInfo) (.text only) and
 * VG_(DebugInfo_sect_kind) (debuginfo.c).
 *
 * The file is taken as mapped the way ld.so and Valgrind's own loader map
 * it: each PT_LOAD by itself, with its own permissions, all at one bias.
 * On amd64 Valgrind records a mapping only as rx (r-x), rw (rw-) or ro
 * (r--), an rwx one not at all (debuginfo.c di_notify_mmap), and reads a
 * file once it has seen an rx and an rw mapping of it.  A PT_LOAD mapped
 * rx is an "rx" range of addresses, one mapped rw or ro an "rw" range;
 * each section is accepted or refused by the kind of range its address is
 * in.  A refusal ("Can't make sense of ... section mapping") ends the
 * reading, but Valgrind keeps the DebugInfo with the ranges set so far:
 * VG_(DebugInfo_sect_kind) still answers from them, while
 * VG_(find_DebugInfo), which wants a DebugInfo valid in the epoch, never
 * finds it.
 */
#include <string.h>

#include "symbols.h"

enum segment_kind { SEGMENT_NONE, SEGMENT_RX, SEGMENT_RW };

/* The kind of range a PT_LOAD of these flags is mapped as. */
static enum segment_kind segment_kind(Elf64_Word flags)
{
	switch (flags & (PF_R | PF_W | PF_X)) {
	case PF_R | PF_X:
		return SEGMENT_RX;
	case PF_R | PF_W:
	case PF_R:
		return SEGMENT_RW;
	default:
		return SEGMENT_NONE;
	}
}

/* The program-header pass: whether Valgrind reads the sections at all.
   It needs an rx and an rw mapping, PT_LOADs in ascending address order,
   and every PT_LOAD with memory in some mapping it recorded ("ELF
   section outside all mapped regions"). */
static int segments_usable(Elf *elf, size_t n_ph)
{
	uint64_t prev = 0;
	int rx = 0, rw = 0;

	for (size_t i = 0; i < n_ph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL)
			return 0;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < prev)
			return 0;
		prev = ph.p_vaddr;
		if (ph.p_memsz == 0)
			continue;
		enum segment_kind k = segment_kind(ph.p_flags);
		if (k == SEGMENT_NONE)
			return 0;
		rx |= k == SEGMENT_RX;
		rw |= k == SEGMENT_RW;
	}
	return rx && rw;
}

/* Whether svma is in a PT_LOAD mapped as kind (inrx, inrw). */
static int placed(Elf *elf, size_t n_ph, uint64_t svma, enum segment_kind kind)
{
	for (size_t i = 0; i < n_ph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) != NULL && ph.p_type == PT_LOAD &&
		    ph.p_memsz > 0 && segment_kind(ph.p_flags) == kind && svma >= ph.p_vaddr &&
		    svma - ph.p_vaddr < ph.p_memsz)
			return 1;
	}
	return 0;
}

/* Sets r to the section if Valgrind accepts it there: in the right kind
   of range and the first of its name.  0: refused. */
static int take(struct svma_range *r, int in_range, uint64_t svma, uint64_t size)
{
	if (!in_range || r->size != 0)
		return 0;
	r->lo = svma;
	r->size = size;
	return 1;
}

void elf_sections_read(Elf *elf, struct elf_sections *s)
{
	size_t n_ph, n_sh, shstrndx, file_size;
	int rodata = 0, exidx = 0, extab = 0, dynbss = 0, sdynbss = 0;
	unsigned n_ehframe = 0;

	memset(s, 0, sizeof(*s));
	if (elf_getphdrnum(elf, &n_ph) != 0 || elf_getshdrnum(elf, &n_sh) != 0 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0 || elf_rawfile(elf, &file_size) == NULL ||
	    !segments_usable(elf, n_ph))
		return;
	for (size_t i = 0; i < n_sh; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		if (scn == NULL || gelf_getshdr(scn, &sh) == NULL)
			return;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		uint64_t svma = sh.sh_addr, size = sh.sh_size;
		uint32_t align = (uint32_t)sh.sh_addralign;	/* Valgrind keeps it in a UInt */
		if (sh.sh_type != SHT_NOBITS && (sh.sh_offset >= file_size || sh.sh_offset + size > file_size))
			return;
		if ((align & (align - 1)) != 0)
			return;
		if (size == 0 || name == NULL)
			continue;
		int inrx = placed(elf, n_ph, svma, SEGMENT_RX), inrw = placed(elf, n_ph, svma, SEGMENT_RW);
		int ok = 1;
		if (strcmp(name, ".text") == 0) {
			ok = take(&s->text, inrx, svma, size);
		} else if (strcmp(name, ".data") == 0) {
			ok = take(&s->data, inrw, svma, size);
		} else if (strcmp(name, ".sdata") == 0) {
			ok = take(&s->sdata, inrw, svma, size);
		} else if (strcmp(name, ".rodata") == 0) {
			/* not a kind of its own, but a second one or one outside
			   the mappings is refused */
			ok = !rodata && (inrx || inrw);
			rodata = 1;
		} else if (strcmp(name, ".dynbss") == 0) {
			/* .bss continues it; never refused */
			if (inrw && s->bss.size == 0)
				dynbss = take(&s->bss, 1, svma, size);
		} else if (strcmp(name, ".bss") == 0) {
			if (inrw && dynbss) {
				s->bss.size += size;
				dynbss = 0;
			} else if (inrw) {
				ok = take(&s->bss, 1, svma, size);
			} else {
				/* mapped r-x only, or not at all: ignored */
				ok = s->bss.size == 0;
			}
		} else if (strcmp(name, ".sdynbss") == 0) {
			if (inrw && s->sbss.size == 0)
				sdynbss = take(&s->sbss, 1, svma, size);
		} else if (strcmp(name, ".sbss") == 0) {
			if (inrw && sdynbss) {
				s->sbss.size += size;
				sdynbss = 0;
			} else {
				ok = take(&s->sbss, inrw, svma, size);
			}
		} else if (strcmp(name, ".got") == 0) {
			ok = take(&s->got, inrw, svma, size);
		} else if (strcmp(name, ".got.plt") == 0) {
			ok = take(&s->gotplt, inrw, svma, size);
		} else if (strcmp(name, ".plt") == 0) {
			ok = take(&s->plt, inrx, svma, size);	/* amd64's rule: code */
		} else if (strcmp(name, ".opd") == 0) {
			ok = take(&s->opd, inrw, svma, size);
		} else if (strcmp(name, ".eh_frame") == 0) {
			ok = (inrx || inrw) && n_ehframe < 2;	/* N_EHFRAME_SECTS */
			n_ehframe++;
		} else if (strcmp(name, ".ARM.exidx") == 0) {
			ok = inrx && !exidx;
			exidx = 1;
		} else if (strcmp(name, ".ARM.extab") == 0) {
			ok = inrx && !extab;
			extab = 1;
		}
		if (!ok)
			return;
	}
	s->valid = 1;
}

static int in(const struct svma_range *r, uint64_t vaddr)
{
	return vaddr - r->lo < r->size;
}

/* VG_(DebugInfo_sect_kind)'s tests for one DebugInfo, in its order. */
enum cgt_sect_kind elf_sections_kind(const struct elf_sections *s, uint64_t vaddr)
{
	if (in(&s->text, vaddr))
		return CGT_SECT_TEXT;
	if (in(&s->data, vaddr) || in(&s->sdata, vaddr))
		return CGT_SECT_DATA;
	if (in(&s->bss, vaddr) || in(&s->sbss, vaddr))
		return CGT_SECT_BSS;
	if (in(&s->plt, vaddr))
		return CGT_SECT_PLT;
	if (in(&s->got, vaddr))
		return CGT_SECT_GOT;
	if (in(&s->gotplt, vaddr))
		return CGT_SECT_GOTPLT;
	if (in(&s->opd, vaddr))
		return CGT_SECT_OPD;
	return CGT_SECT_UNKNOWN;
}
