/*
 * The function containing an address, named as Valgrind 3.19 names it for
 * Cachegrind (m_debuginfo/readelf.c get_elf_symbol_info, storage.c
 * canonicaliseSymtab and preferName, debuginfo.c get_sym_name):
 *
 *  - symbols from .symtab (the file's own or, when it has neither .symtab
 *    nor .debug_info, its separate debug file's) then .dynsym, in table
 *    order, filtered as Valgrind filters them;
 *  - sorted by address with the Bentley-McIlroy quicksort, whose order of
 *    equal addresses decides which name survives; identical ranges merged,
 *    overlaps truncated, the display name chosen by Valgrind's preferences
 *    (except for the last symbol, as in 3.19);
 *  - names Z-demangled and C++/Rust-demangled (libiberty, as Valgrind), and
 *    the functions below main renamed "(below main)".
 */
#include <ctype.h>
#include <fcntl.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"

struct sym {
	uint64_t addr, size;
	const char *name;	/* primary */
	const char **more;	/* other names of the same range */
	size_t cap_more;
	uint32_t n_more;
	int is_text;
};

struct elf_symbols {
	struct sym *syms;
	size_t n;
};

struct range {
	uint64_t lo, hi;	/* [lo, hi) */
};

/* What get_elf_symbol_info needs to know about the main file. */
struct layout {
	struct range text, got, plt;
	struct range data[5];
	unsigned n_data;
	struct range rx[16];	/* page-rounded R-X (not W) segments */
	unsigned n_rx;
};

static int in(const struct range *r, uint64_t a)
{
	return r->hi > r->lo && a >= r->lo && a < r->hi;
}

static void read_layout(Elf *elf, struct layout *lay)
{
	static const char *const data_sections[] = { ".data", ".sdata", ".rodata", ".bss", ".sbss" };
	size_t shstrndx, n_ph;

	memset(lay, 0, sizeof(*lay));
	if (elf_getphdrnum(elf, &n_ph) == 0)
		for (size_t i = 0; i < n_ph && lay->n_rx < 16; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD ||
			    (ph.p_flags & (PF_R | PF_X | PF_W)) != (PF_R | PF_X))
				continue;
			lay->rx[lay->n_rx].lo = ph.p_vaddr & ~0xfffull;
			lay->rx[lay->n_rx++].hi = (ph.p_vaddr + ph.p_filesz + 0xfff) & ~0xfffull;
		}
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (n == NULL || sh.sh_size == 0)
			continue;
		struct range r = { sh.sh_addr, sh.sh_addr + sh.sh_size };
		if (strcmp(n, ".text") == 0)
			lay->text = r;
		else if (strcmp(n, ".got") == 0)
			lay->got = r;
		else if (strcmp(n, ".plt") == 0)
			lay->plt = r;
		for (unsigned i = 0; i < 5; i++)
			if (strcmp(n, data_sections[i]) == 0 && lay->n_data < 5)
				lay->data[lay->n_data++] = r;
	}
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = elf_section(elf, name);
	GElf_Shdr sh;
	return scn != NULL && gelf_getshdr(scn, &sh) != NULL && sh.sh_type == type ? scn : NULL;
}

static int add_sym(struct elf_symbols *s, size_t *cap, const struct sym *sym)
{
	if (s->n == *cap && cgt_array_grow(&s->syms, cap, s->n, 1, sizeof(*s->syms)) < 0)
		return -1;
	s->syms[s->n++] = *sym;
	return 0;
}

/* get_elf_symbol_info: which symbols count, and whether they are text. */
static void read_table(Elf *elf, Elf_Scn *scn, const struct layout *lay, struct elf_symbols *s,
		       size_t *cap, struct string_set *names)
{
	GElf_Shdr sh;
	Elf_Data *data = elf_getdata(scn, NULL);
	if (data == NULL || gelf_getshdr(scn, &sh) == NULL || sh.sh_entsize == 0)
		return;
	size_t count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < count; i++) {	/* entry 0 is the null symbol */
		GElf_Sym st;
		if (gelf_getsym(data, (int)i, &st) == NULL)
			break;
		unsigned bind = GELF_ST_BIND(st.st_info), type = GELF_ST_TYPE(st.st_info);
		int64_t ssize = (int64_t)st.st_size;
		uint64_t size = ssize < 0 ? 1 : (uint64_t)ssize > 0x7fffffff ? 0x7fffffff : (uint64_t)ssize;
		uint64_t value = st.st_value;
		if (bind != STB_LOCAL && bind != STB_GLOBAL && bind != STB_WEAK)
			continue;
		if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC)
			continue;
		int is_text = 1;	/* anything not in a data section is assumed text */
		if (!in(&lay->text, value))
			for (unsigned d = 0; d < lay->n_data; d++)
				if (in(&lay->data[d], value))
					is_text = 0;
		const char *name = elf_strptr(elf, sh.sh_link, st.st_name);
		if (name == NULL || name[0] == '\0' || size == 0 || (uint32_t)value == 0 ||
		    in(&lay->got, value) || in(&lay->plt, value))
			continue;
		int ok = 0;
		if (is_text) {
			for (unsigned r = 0; r < lay->n_rx; r++)
				ok |= value >= lay->rx[r].lo && value + size - 1 < lay->rx[r].hi;
		} else {
			for (unsigned d = 0; d < lay->n_data; d++)
				ok |= value < lay->data[d].hi && value + size > lay->data[d].lo;
		}
		if (!ok)
			continue;
		struct sym sym = { .addr = value, .size = size,
				   .name = string_set_intern(names, name), .is_text = is_text };
		if (sym.name == NULL || add_sym(s, cap, &sym) < 0)
			return;
	}
}

/* ---- Valgrind's sort: Bentley & McIlroy, "Engineering a Sort Function"
   (1993), by address.  It is not stable; which of two symbols at one
   address ends up first decides names, so the algorithm is followed
   step by step (pivot moved to the front, as for records). */

static int cmp_addr(const struct sym *a, const struct sym *b)
{
	return (a->addr > b->addr) - (a->addr < b->addr);
}

static void swap_syms(struct sym *a, struct sym *b)
{
	struct sym t = *a;
	*a = *b;
	*b = t;
}

static void swap_runs(struct sym *a, struct sym *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		swap_syms(a + i, b + i);
}

static struct sym *median_of_3(struct sym *a, struct sym *b, struct sym *c)
{
	return cmp_addr(a, b) < 0 ? (cmp_addr(b, c) < 0 ? b : cmp_addr(a, c) < 0 ? c : a)
				  : (cmp_addr(b, c) > 0 ? b : cmp_addr(a, c) > 0 ? c : a);
}

static void bm_sort(struct sym *a, size_t n)
{
	while (n >= 7) {
		struct sym *pm = a + n / 2;
		if (n > 7) {
			struct sym *pl = a, *pn = a + n - 1;
			if (n > 40) {
				size_t s = n / 8;
				pl = median_of_3(pl, pl + s, pl + 2 * s);
				pm = median_of_3(pm - s, pm, pm + s);
				pn = median_of_3(pn - 2 * s, pn - s, pn);
			}
			pm = median_of_3(pl, pm, pn);
		}
		swap_syms(a, pm);	/* the pivot */
		struct sym *pa = a, *pb = a, *pc = a + n - 1, *pd = a + n - 1;
		for (;;) {
			int r;
			while (pb <= pc && (r = cmp_addr(pb, a)) <= 0) {
				if (r == 0)
					swap_syms(pa++, pb);
				pb++;
			}
			while (pc >= pb && (r = cmp_addr(pc, a)) >= 0) {
				if (r == 0)
					swap_syms(pc, pd--);
				pc--;
			}
			if (pb > pc)
				break;
			swap_syms(pb++, pc--);
		}
		struct sym *end = a + n;
		size_t s = (size_t)(pa - a) < (size_t)(pb - pa) ? (size_t)(pa - a) : (size_t)(pb - pa);
		swap_runs(a, pb - s, s);
		size_t t = (size_t)(pd - pc) < (size_t)(end - pd - 1) ? (size_t)(pd - pc)
								     : (size_t)(end - pd - 1);
		swap_runs(pb, end - t, t);
		size_t left = (size_t)(pb - pa), right = (size_t)(pd - pc);
		/* The two partitions are independent: the order they are sorted
		   in does not matter; recurse on the smaller one. */
		if (left < right) {
			if (left > 1)
				bm_sort(a, left);
			a = end - right;
			n = right;
		} else {
			if (right > 1)
				bm_sort(end - right, right);
			n = left;
		}
		if (n <= 1)
			return;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp_addr(&a[j - 1], &a[j]) > 0; j--)
			swap_syms(&a[j], &a[j - 1]);
}

/* ---- canonicaliseSymtab --------------------------------------------- */

static int add_names(struct sym *to, const struct sym *from)
{
	if (to->n_more + 1 + (size_t)from->n_more > to->cap_more &&
	    cgt_array_grow(&to->more, &to->cap_more, to->n_more, 1 + (size_t)from->n_more,
			   sizeof(*to->more)) < 0)
		return -1;
	to->more[to->n_more++] = from->name;
	for (uint32_t i = 0; i < from->n_more; i++)
		to->more[to->n_more++] = from->more[i];
	return 0;
}

/* Merges from into to (names only when they add something) and empties
   from. */
static void merge_into(struct sym *to, struct sym *from)
{
	if (from->n_more > 0 || from->name != to->name)
		add_names(to, from);
	free(from->more);
	memset(from, 0, sizeof(*from));
}

static void squeeze(struct elf_symbols *s)
{
	size_t w = 0;
	for (size_t r = 0; r < s->n; r++)
		if (s->syms[r].name != NULL)
			s->syms[w++] = s->syms[r];
	s->n = w;
}

static void merge_identical_ranges(struct elf_symbols *s)
{
	for (;;) {
		size_t merged = 0, w = 0;
		for (size_t r = 1; r < s->n; r++) {
			struct sym *a = &s->syms[w], *b = &s->syms[r];
			if (a->addr == b->addr && a->size == b->size && a->is_text == b->is_text) {
				merge_into(a, b);
				merged++;
			} else {
				w = r;
			}
		}
		/* Same range, one text and one data: the text one stays. */
		for (size_t r = 1; r < s->n; r++) {
			struct sym *a = &s->syms[r - 1], *b = &s->syms[r];
			if (a->name == NULL || b->name == NULL || a->addr != b->addr || a->size != b->size)
				continue;
			if (a->is_text)
				merge_into(a, b);
			else
				merge_into(b, a);
			merged++;
		}
		if (merged == 0)
			return;
		squeeze(s);
	}
}

/* Returns how many overlaps were truncated. */
static size_t truncate_overlaps(struct elf_symbols *s)
{
	size_t truncated = 0;
	for (size_t i = 0; i + 1 < s->n; i++) {
		struct sym *a = &s->syms[i], *b = &s->syms[i + 1];
		if (a->addr + a->size <= b->addr)
			continue;
		uint64_t end1 = a->addr + a->size - 1, end2 = b->addr + b->size - 1;
		if (a->addr < b->addr) {
			a->size = b->addr - a->addr;	/* a's tail past b is lost */
		} else if (end1 > end2) {
			/* Same start: the shorter keeps it, the longer what follows. */
			swap_syms(a, b);
			b->addr = end2 + 1;
			b->size = end1 - end2;
		} else if (end1 < end2) {
			b->addr = end1 + 1;
			b->size = end2 - end1;
		}
		for (size_t j = i + 1; j + 1 < s->n && s->syms[j].addr > s->syms[j + 1].addr; j++)
			swap_syms(&s->syms[j], &s->syms[j + 1]);
		truncated++;
	}
	return truncated;
}

/* preferName: 1 if a is the better display name. */
static int prefer_name(const char *a, const char *b)
{
	const char *va = strchr(a, '@'), *vb = strchr(b, '@');
	size_t la = va ? (size_t)(va - a) : strlen(a), lb = vb ? (size_t)(vb - b) : strlen(b);

	if (strncmp(a, "MPI_", 4) == 0 && strncmp(b, "PMPI_", 5) == 0 && strcmp(a, b + 1) == 0)
		return 0;
	if (strncmp(b, "MPI_", 4) == 0 && strncmp(a, "PMPI_", 5) == 0 && strcmp(b, a + 1) == 0)
		return 1;
	if (la && !lb)
		return 1;
	if (lb && !la)
		return 0;
	int blank_a = 1, blank_b = 1;
	for (const char *p = a; *p && blank_a; p++)
		blank_a = isspace((unsigned char)*p) != 0;
	for (const char *p = b; *p && blank_b; p++)
		blank_b = isspace((unsigned char)*p) != 0;
	if (!blank_a && blank_b)
		return 1;
	if (!blank_b && blank_a)
		return 0;
	if (la != lb)
		return la < lb;
	if (va && !vb)
		return 1;
	if (vb && !va)
		return 0;
	return strcmp(a, b) <= 0;	/* unsigned bytes, as VG_(strcmp) */
}

/* ---- Display names ---------------------------------------------------- */

/* Valgrind's Z-encoding of function names in its preloads:
   _vg[rw]DDDDDZ[ZU]_soname_fn; the fn part, decoded when Z-encoded. */
static int z_demangle(const char *sym, char *out, size_t n)
{
	if (strncmp(sym, "_vg", 3) != 0 || (sym[3] != 'r' && sym[3] != 'w'))
		return 0;
	for (int i = 4; i < 8; i++)
		if (!isdigit((unsigned char)sym[i]))
			return 0;
	if (sym[8] != 'Z' || (sym[9] != 'Z' && sym[9] != 'U') || sym[10] != '_' ||
	    (strncmp(sym + 4, "0000", 4) == 0 && sym[8] == '0'))
		return 0;
	int z_encoded = sym[9] == 'Z';
	const char *p = strchr(sym + 11, '_');	/* end of the soname */
	if (p == NULL)
		return 0;
	static const char codes[] = "a*c:d.h-p+s u_A@D$L(P%R)S/ZZ";
	size_t o = 0;
	for (p++; *p && o + 1 < n; p++) {
		if (!z_encoded || *p != 'Z') {
			out[o++] = *p;
			continue;
		}
		p++;
		const char *c = *p ? strchr(codes, *p) : NULL;
		if (c == NULL || (c - codes) % 2 != 0)
			return 0;
		out[o++] = c[1];
	}
	out[o] = '\0';
	return o > 0;
}

static const char *display_name(const char *raw, struct string_set *names)
{
	char z[512];
	const char *name = z_demangle(raw, z, sizeof(z)) ? z : raw;
	char *demangled = NULL;

	if (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
		demangled = cplus_demangle(name, DMGL_ANSI | DMGL_PARAMS);
	if (demangled != NULL)
		name = demangled;
	static const char *const below_main[] = { "__libc_start_main", "__libc_start_call_main",
						  "generic_start_main", "_start" };
	for (unsigned i = 0; i < 4; i++)
		if (strcmp(name, below_main[i]) == 0)
			name = "(below main)";
	if (strncmp(name, "__libc_start_main.", 18) == 0 || strncmp(name, "generic_start_main.", 19) == 0)
		name = "(below main)";
	const char *interned = string_set_intern(names, name);
	free(demangled);
	return interned;
}

/* ---- Interface -------------------------------------------------------- */

struct elf_symbols *elf_symbols_load(Elf *elf, const char *path, const char *found_debug,
				     struct string_set *names)
{
	struct elf_symbols *s = calloc(1, sizeof(*s));
	struct layout lay;
	size_t cap = 0;
	int debug_fd = -1;
	Elf *debug = NULL;

	if (s == NULL)
		return NULL;
	read_layout(elf, &lay);
	Elf_Scn *symtab = find_section(elf, SHT_SYMTAB, ".symtab");
	Elf *symtab_elf = elf;
	if (symtab == NULL && find_section(elf, SHT_PROGBITS, ".debug_info") == NULL) {
		debug = debug_file_open(elf, path, found_debug, &debug_fd);
		if (debug != NULL) {
			symtab = find_section(debug, SHT_SYMTAB, ".symtab");
			symtab_elf = debug;
		}
	}
	if (symtab != NULL)
		read_table(symtab_elf, symtab, &lay, s, &cap, names);
	Elf_Scn *dynsym = find_section(elf, SHT_DYNSYM, ".dynsym");
	if (dynsym != NULL)
		read_table(elf, dynsym, &lay, s, &cap, names);
	if (debug != NULL) {
		elf_end(debug);
		close(debug_fd);
	}

	bm_sort(s->syms, s->n);
	do
		merge_identical_ranges(s);
	while (truncate_overlaps(s) > 0);
	/* 3.19 chooses among the names of every symbol but the last. */
	for (size_t i = 0; i + 1 < s->n; i++) {
		struct sym *sym = &s->syms[i];
		for (uint32_t j = 0; j < sym->n_more; j++)
			if (!prefer_name(sym->name, sym->more[j])) {
				const char *t = sym->name;
				sym->name = sym->more[j];
				sym->more[j] = t;
			}
	}
	for (size_t i = 0; i < s->n; i++) {
		free(s->syms[i].more);
		s->syms[i].more = NULL;
		s->syms[i].n_more = 0;
		s->syms[i].cap_more = 0;
		s->syms[i].name = display_name(s->syms[i].name, names);
	}
	if (s->n == 0) {
		elf_symbols_free(s);
		return NULL;
	}
	return s;
}

/* ML_(search_one_symtab): the text symbol whose range holds vaddr, or
   NULL (also when that range is a data symbol's). */
static const struct sym *text_sym(const struct elf_symbols *s, uint64_t vaddr)
{
	if (s == NULL || vaddr == 0)
		return NULL;
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sym *m = &s->syms[mid];
		if (vaddr < m->addr)
			hi = mid;
		else if (vaddr > m->addr + m->size - 1)
			lo = mid + 1;
		else
			return m->is_text ? m : NULL;
	}
	return NULL;
}

const char *elf_symbols_find(const struct elf_symbols *s, uint64_t vaddr)
{
	const struct sym *m = text_sym(s, vaddr);
	return m != NULL ? m->name : NULL;
}

/* The start after canonicalisation: a symbol truncated by an overlap
   starts where its kept part does. */
int elf_symbols_is_entry(const struct elf_symbols *s, uint64_t vaddr)
{
	const struct sym *m = text_sym(s, vaddr);
	return m != NULL && m->addr == vaddr;
}

void elf_symbols_free(struct elf_symbols *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->syms[i].more);
	free(s->syms);
	free(s);
}
