/*
 * File and line of an address, exactly as Valgrind 3.19 gives them to
 * Cachegrind (m_debuginfo/readdwarf.c, storage.c, debuginfo.c).
 *
 * libdw finds the compilation units and their attributes, but its line
 * API cannot give Valgrind's strings: Valgrind joins a file's directory and
 * its name as written in the table (an absolute name gives "dir//abs"), it
 * prefixes relative directories with DW_AT_comp_dir, and its table of
 * address ranges has quirks a per-address libdw lookup cannot reproduce: a
 * range is merged into the previous one when the line numbers match (files
 * are not compared), ranges over 4095 bytes keep their first byte only, and
 * only addresses in .text are looked up.  So the line programs are decoded
 * here, with every read bounds-checked.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"

#define MAX_LOC_SIZE 4095	/* Valgrind's: larger ranges keep one byte */
#define MAX_LINE 0xFFFFF	/* Valgrind drops larger line numbers */
#define UNKNOWN "???"

struct loc {
	uint64_t addr;
	uint32_t size;
	int32_t line;
	const char *file;
};

struct dwarf_lines {
	struct loc *locs;
	size_t n, cap;
	uint64_t bias;
	uint64_t text_lo, text_hi;	/* .text, ELF addresses */
	uint64_t rx_lo[16], rx_hi[16];	/* executable segments, page-rounded */
	unsigned n_rx;
	struct string_set *names;
};

/* ---- Reading the sections ------------------------------------------- */

struct bytes {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t get_fixed(struct bytes *b, unsigned n)
{
	uint64_t v = 0;
	if ((size_t)(b->end - b->p) < n) {
		b->bad = 1;
		b->p = b->end;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)b->p[i] << (8 * i);
	b->p += n;
	return v;
}

static uint64_t get_uleb(struct bytes *b)
{
	uint64_t v = 0;
	for (unsigned shift = 0; b->p < b->end; shift += 7) {
		uint8_t byte = *b->p++;
		if (shift < 64)
			v |= (uint64_t)(byte & 0x7f) << shift;
		if (byte < 0x80)
			return v;
	}
	b->bad = 1;
	return 0;
}

static int64_t get_sleb(struct bytes *b)
{
	int64_t v = 0;
	unsigned shift = 0;
	for (; b->p < b->end; shift += 7) {
		uint8_t byte = *b->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(byte & 0x7f) << shift);
		if (byte < 0x80) {
			if (shift + 7 < 64 && (byte & 0x40))
				v |= -((int64_t)1 << (shift + 7));
			return v;
		}
	}
	b->bad = 1;
	return 0;
}

static const char *get_cstring(struct bytes *b)
{
	const uint8_t *nul = memchr(b->p, 0, (size_t)(b->end - b->p));
	if (nul == NULL) {
		b->bad = 1;
		b->p = b->end;
		return NULL;
	}
	const char *s = (const char *)b->p;
	b->p = nul + 1;
	return s;
}

struct sections {
	struct bytes line, line_str, str;
};

static struct bytes section(Elf *elf, const char *name)
{
	struct bytes b = { NULL, NULL, 0 };
	Elf_Scn *scn = elf_section(elf, name);
	GElf_Shdr sh;
	if (scn == NULL || gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS)
		return b;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return b;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (d != NULL && d->d_buf != NULL) {
		b.p = d->d_buf;
		b.end = b.p + d->d_size;
	}
	return b;
}

/* A string of a form used in line-table headers. */
static const char *get_form_string(struct bytes *b, unsigned form, int dw64,
				   const struct sections *s)
{
	const struct bytes *pool;
	switch (form) {
	case DW_FORM_string:
		return get_cstring(b);
	case DW_FORM_strp:
		pool = &s->str;
		break;
	case DW_FORM_line_strp:
		pool = &s->line_str;
		break;
	default:
		b->bad = 1;
		return NULL;
	}
	uint64_t off = get_fixed(b, dw64 ? 8 : 4);
	if (pool->p == NULL || off >= (uint64_t)(pool->end - pool->p)) {
		b->bad = 1;
		return NULL;
	}
	struct bytes at = { pool->p + off, pool->end, 0 };
	const char *str = get_cstring(&at);
	if (at.bad)
		b->bad = 1;
	return str;
}

static uint64_t get_form_number(struct bytes *b, unsigned form)
{
	switch (form) {
	case DW_FORM_data1: return get_fixed(b, 1);
	case DW_FORM_data2: return get_fixed(b, 2);
	case DW_FORM_data4: return get_fixed(b, 4);
	case DW_FORM_data8: return get_fixed(b, 8);
	case DW_FORM_udata: return get_uleb(b);
	default: b->bad = 1; return 0;
	}
}

static void skip_form(struct bytes *b, unsigned form, int dw64)
{
	switch (form) {
	case DW_FORM_block: {
		uint64_t n = get_uleb(b);
		if (n > (uint64_t)(b->end - b->p))
			b->bad = 1, b->p = b->end;
		else
			b->p += n;
		break;
	}
	case DW_FORM_data16: get_fixed(b, 8); get_fixed(b, 8); break;
	case DW_FORM_string: get_cstring(b); break;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset: get_fixed(b, dw64 ? 8 : 4); break;
	case DW_FORM_sdata: get_sleb(b); break;
	case DW_FORM_flag: get_fixed(b, 1); break;
	default: get_form_number(b, form); break;
	}
}

/* ---- Valgrind's range table ------------------------------------------ */

static int in_rx(const struct dwarf_lines *l, uint64_t lo, uint64_t size)
{
	for (unsigned i = 0; i < l->n_rx; i++)
		if (lo >= l->rx_lo[i] && lo + size - 1 < l->rx_hi[i])
			return 1;
	return 0;
}

/* ML_(addLineInfo) and addLoc. */
static void add_line_info(struct dwarf_lines *l, const char *file, uint64_t lo, uint64_t hi,
			  int64_t line)
{
	if (lo == hi)
		return;
	uint64_t size = hi - lo;
	if (lo > hi || size > MAX_LOC_SIZE)
		size = 1;
	if (!in_rx(l, lo, size) || line < 0 || line > MAX_LINE)
		return;
	if (l->n > 0) {
		struct loc *prev = &l->locs[l->n - 1];
		/* Valgrind's merge compares line numbers only, not files. */
		if (prev->line == line && prev->addr + prev->size == lo &&
		    prev->size + size <= MAX_LOC_SIZE) {
			prev->size += (uint32_t)size;
			return;
		}
	}
	if (l->n == l->cap && cgt_array_grow(&l->locs, &l->cap, l->n, 1, sizeof(*l->locs)) < 0)
		return;
	l->locs[l->n++] = (struct loc){ lo, (uint32_t)size, (int32_t)line, file };
}

/* "dir/name", or name when there is no directory, interned. */
static const char *join(struct dwarf_lines *l, const char *dir, const char *name)
{
	if (name == NULL)
		return NULL;
	if (dir == NULL || dir[0] == '\0')
		return string_set_intern(l->names, name);
	/* Joined by hand: asprintf was a tenth of the time of reading libc's
	   lines. */
	size_t n_dir = strlen(dir), n_name = strlen(name);
	char small[256];
	char *s = n_dir + n_name + 2 <= sizeof(small) ? small : malloc(n_dir + n_name + 2);
	if (s == NULL)
		return NULL;
	memcpy(s, dir, n_dir);
	s[n_dir] = '/';
	memcpy(s + n_dir + 1, name, n_name + 1);
	const char *interned = string_set_intern(l->names, s);
	if (s != small)
		free(s);
	return interned;
}

/* Valgrind stores a relative directory prefixed with the compilation
   directory, when there is a non-empty one. */
static const char *directory(struct dwarf_lines *l, const char *comp_dir, const char *d)
{
	if (d == NULL || d[0] == '/' || comp_dir == NULL || comp_dir[0] == '\0')
		return d ? string_set_intern(l->names, d) : NULL;
	return join(l, comp_dir, d);
}

struct table {
	const char **items;
	size_t n, cap;
};

static void table_push(struct table *t, const char *s)
{
	if (t->n == t->cap && cgt_array_grow(&t->items, &t->cap, t->n, 1, sizeof(*t->items)) < 0)
		return;
	t->items[t->n++] = s;
}

/* DWARF 5 directory or file entry formats: returns how many, and which
   index holds the path and the directory index. */
static unsigned entry_format(struct bytes *b, unsigned *forms, unsigned max, unsigned *path,
			     unsigned *dir_index)
{
	unsigned n = (unsigned)get_fixed(b, 1);
	*path = *dir_index = UINT_MAX;
	for (unsigned i = 0; i < n; i++) {
		uint64_t content = get_uleb(b), form = get_uleb(b);
		if (i < max)
			forms[i] = (unsigned)form;
		if (content == DW_LNCT_path)
			*path = i;
		else if (content == DW_LNCT_directory_index)
			*dir_index = i;
	}
	if (n > max)
		b->bad = 1;
	return n;
}

/* One line program (read_dwarf2_lineblock). */
static void read_line_program(struct dwarf_lines *l, const struct sections *s, uint64_t offset,
			      const char *comp_dir)
{
	struct bytes b = s->line;
	struct table dirs = { 0 }, files = { 0 };

	if (b.p == NULL || offset >= (uint64_t)(b.end - b.p))
		return;
	b.p += offset;
	int dw64 = 0;
	uint64_t unit_length = get_fixed(&b, 4);
	if (unit_length == 0xffffffff) {
		dw64 = 1;
		unit_length = get_fixed(&b, 8);
	}
	if (b.bad || unit_length > (uint64_t)(b.end - b.p))
		return;
	b.end = b.p + unit_length;
	unsigned version = (unsigned)get_fixed(&b, 2);
	if (version < 2 || version > 5)
		return;
	if (version >= 5)
		get_fixed(&b, 2);	/* address size, segment selector size */
	get_fixed(&b, dw64 ? 8 : 4);	/* header length: Valgrind does not use it */
	unsigned min_insn = (unsigned)get_fixed(&b, 1);
	if (version >= 4 && get_fixed(&b, 1) != 1)
		return;	/* VLIW */
	get_fixed(&b, 1);	/* default_is_stmt: ignored */
	int line_base = (int8_t)get_fixed(&b, 1);
	unsigned line_range = (unsigned)get_fixed(&b, 1);
	unsigned opcode_base = (unsigned)get_fixed(&b, 1);
	const uint8_t *std_lengths = b.p;
	if (b.bad || line_range == 0 || opcode_base == 0 ||
	    (size_t)(b.end - b.p) < opcode_base - 1)
		return;
	b.p += opcode_base - 1;

	if (version < 5) {
		table_push(&dirs, string_set_intern(l->names, comp_dir ? comp_dir : "."));
		table_push(&files, NULL);	/* file 0 does not exist */
		for (const char *d; (d = get_cstring(&b)) != NULL && d[0];)
			table_push(&dirs, directory(l, comp_dir, d));
		for (const char *n; (n = get_cstring(&b)) != NULL && n[0];) {
			uint64_t di = get_uleb(&b);
			get_uleb(&b);	/* mtime */
			get_uleb(&b);	/* length */
			table_push(&files, join(l, di < dirs.n ? dirs.items[di] : NULL, n));
		}
	} else {
		unsigned forms[64], path, di_at;
		unsigned nf = entry_format(&b, forms, 64, &path, &di_at);
		uint64_t count = get_uleb(&b);
		for (uint64_t i = 0; i < count && !b.bad; i++)
			for (unsigned f = 0; f < nf && !b.bad; f++) {
				if (f == path)
					table_push(&dirs, directory(l, comp_dir,
								    get_form_string(&b, forms[f], dw64, s)));
				else
					skip_form(&b, forms[f], dw64);
			}
		nf = entry_format(&b, forms, 64, &path, &di_at);
		count = get_uleb(&b);
		for (uint64_t i = 0; i < count && !b.bad; i++) {
			const char *name = NULL;
			uint64_t di = 0;
			for (unsigned f = 0; f < nf && !b.bad; f++) {
				if (f == path)
					name = get_form_string(&b, forms[f], dw64, s);
				else if (f == di_at)
					di = get_form_number(&b, forms[f]);
				else
					skip_form(&b, forms[f], dw64);
			}
			table_push(&files, join(l, di < dirs.n ? dirs.items[di] : NULL, name));
		}
	}

	/* The state machine: each row owns [its address, the next row's). */
	const char *unknown = string_set_intern(l->names, UNKNOWN);
	uint64_t address = 0, last_address = 0, file = 1, last_file = 1;
	int64_t line = 1, last_line = 1;
#define FILE_NAME(i) ((i) < files.n && files.items[i] ? files.items[i] : unknown)
#define ROW()                                                                                      \
	do {                                                                                       \
		if (last_address)                                                                  \
			add_line_info(l, FILE_NAME(last_file), last_address, address, last_line); \
		last_address = address;                                                            \
		last_file = file;                                                                  \
		last_line = line;                                                                  \
	} while (0)
	while (b.p < b.end && !b.bad) {
		unsigned op = *b.p++;
		if (op >= opcode_base) {
			op -= opcode_base;
			address += (uint64_t)(op / line_range) * min_insn;
			line += (int)(op % line_range) + line_base;
			ROW();
			continue;
		}
		switch (op) {
		case 0: {
			uint64_t len = get_uleb(&b);
			if (len == 0)
				break;
			const uint8_t *next = len <= (uint64_t)(b.end - b.p) ? b.p + len : b.end;
			unsigned ext = (unsigned)get_fixed(&b, 1);
			if (ext == DW_LNE_end_sequence) {
				if (last_address)
					add_line_info(l, FILE_NAME(last_file), last_address, address,
						      last_line);
				address = last_address = 0;
				file = last_file = 1;
				line = last_line = 1;
			} else if (ext == DW_LNE_set_address) {
				address = get_fixed(&b, (unsigned)(len - 1 <= 8 ? len - 1 : 8));
			} else if (ext == DW_LNE_define_file) {
				const char *n = get_cstring(&b);
				table_push(&files, n ? string_set_intern(l->names, n) : NULL);
			}
			b.p = next;
			break;
		}
		case DW_LNS_copy: ROW(); break;
		case DW_LNS_advance_pc: address += min_insn * get_uleb(&b); break;
		case DW_LNS_advance_line: line += get_sleb(&b); break;
		case DW_LNS_set_file: file = get_uleb(&b); break;
		case DW_LNS_const_add_pc:
			address += (uint64_t)((255 - opcode_base) / line_range) * min_insn;
			break;
		case DW_LNS_fixed_advance_pc: address += get_fixed(&b, 2); break;
		default:
			/* set_column, set_isa and unknown standard opcodes: skip
			   their operands; the flag opcodes have none. */
			for (unsigned j = std_lengths[op - 1]; j > 0; j--)
				get_uleb(&b);
			break;
		}
	}
#undef ROW
#undef FILE_NAME
	free(dirs.items);
	free(files.items);
}

/* The end of the ascending run that begins at i. */
static size_t run_end(const struct loc *a, size_t i, size_t n)
{
	while (i + 1 < n && a[i].addr <= a[i + 1].addr)
		i++;
	return i + 1;
}

/*
 * Sorts by address, stably (rows of equal address in table order, as
 * glibc's qsort, a merge sort, left them here before).  The rows
 * come as a few ascending runs -- libc's 137 k rows as about 180 -- so
 * adjacent runs are merged, pass after pass: O(n log runs), where qsort
 * took a third of the time of reading libc's lines.  -1 if out of memory.
 */
static int sort_locs(struct dwarf_lines *l)
{
	struct loc *a = l->locs, *b = NULL;
	size_t n = l->n;

	while (run_end(a, 0, n) < n) {
		if (b == NULL && (b = malloc(n * sizeof(*b))) == NULL)
			return -1;
		for (size_t i = 0, out = 0; i < n;) {
			size_t mid = run_end(a, i, n), end = mid < n ? run_end(a, mid, n) : n;
			size_t x = i, y = mid;
			while (x < mid && y < end)
				b[out++] = a[y].addr < a[x].addr ? a[y++] : a[x++];
			while (x < mid)
				b[out++] = a[x++];
			while (y < end)
				b[out++] = a[y++];
			i = end;
		}
		struct loc *t = a;
		a = b;
		b = t;
	}
	if (a != l->locs) {
		free(l->locs);
		l->locs = a;
		l->cap = n;
	} else {
		free(b);
	}
	return 0;
}

/* canonicaliseLoctab: sorted, each range cut where the next begins. */
static int canonicalise(struct dwarf_lines *l)
{
	size_t j = 0;
	if (sort_locs(l) < 0)
		return -1;
	for (size_t i = 0; i + 1 < l->n; i++)
		if (l->locs[i].addr + l->locs[i].size > l->locs[i + 1].addr)
			l->locs[i].size = (uint32_t)(l->locs[i + 1].addr - l->locs[i].addr);
	for (size_t i = 0; i < l->n; i++)
		if (l->locs[i].size > 0)
			l->locs[j++] = l->locs[i];
	l->n = j;
	return 0;
}

/* ---- Finding the debug information ---------------------------------- */

static int has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = elf_section(elf, name);
	GElf_Shdr sh;
	return scn != NULL && gelf_getshdr(scn, &sh) != NULL && sh.sh_type != SHT_NOBITS;
}

/* ---- Interface -------------------------------------------------------- */

static void read_all_units(struct dwarf_lines *l, Elf *elf)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw == NULL)
		return;
	/* After dwarf_begin_elf the sections are decompressed in elf. */
	struct sections s = { section(elf, ".debug_line"), section(elf, ".debug_line_str"),
			      section(elf, ".debug_str") };
	Dwarf_Off off = 0, next;
	size_t header_size;
	while (dwarf_next_unit(dw, off, &next, &header_size, NULL, NULL, NULL, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Attribute attr;
		Dwarf_Word stmt_list;
		if (dwarf_offdie(dw, off + header_size, &cu) != NULL &&
		    dwarf_tag(&cu) == DW_TAG_compile_unit &&
		    dwarf_attr(&cu, DW_AT_stmt_list, &attr) != NULL &&
		    dwarf_formudata(&attr, &stmt_list) == 0) {
			const char *comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
			read_line_program(l, &s, stmt_list, comp_dir);
		}
		off = next;
	}
	dwarf_end(dw);
}

struct dwarf_lines *dwarf_lines_open(const char *path, const char *found_debug, uint64_t bias,
				     struct string_set *names)
{
	struct dwarf_lines *l = calloc(1, sizeof(*l));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	if (l == NULL || elf == NULL)
		goto fail;
	l->bias = bias;
	l->names = names;
	size_t n_ph;
	if (elf_getphdrnum(elf, &n_ph) == 0)
		for (size_t i = 0; i < n_ph && l->n_rx < 16; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				l->rx_lo[l->n_rx] = ph.p_vaddr & ~0xfffull;
				l->rx_hi[l->n_rx++] = (ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull;
			}
		}
	Elf_Scn *text = elf_section(elf, ".text");
	GElf_Shdr sh;
	if (text != NULL && gelf_getshdr(text, &sh) != NULL) {
		l->text_lo = sh.sh_addr;
		l->text_hi = sh.sh_addr + sh.sh_size;
	}
	/* Valgrind looks for separate debug information only when the file
	   has no .debug_info of its own. */
	if (has_section(elf, ".debug_info")) {
		read_all_units(l, elf);
	} else {
		int dbg_fd;
		Elf *dbg = debug_file_open(elf, path, found_debug, &dbg_fd);
		if (dbg != NULL) {
			read_all_units(l, dbg);
			elf_end(dbg);
			close(dbg_fd);
		}
	}
	elf_end(elf);
	close(fd);
	if (l->n == 0) {
		dwarf_lines_close(l);
		return NULL;
	}
	if (canonicalise(l) < 0) {
		dwarf_lines_close(l);
		return NULL;
	}
	return l;
fail:
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(l);
	return NULL;
}

void dwarf_lines_find(struct dwarf_lines *l, uint64_t addr, const char **file, int32_t *line)
{
	uint64_t a = addr - l->bias;
	if (a < l->text_lo || a >= l->text_hi)
		return;
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct loc *m = &l->locs[mid];
		if (a < m->addr) {
			hi = mid;
		} else if (a >= m->addr + m->size) {
			lo = mid + 1;
		} else {
			*file = m->file;
			*line = m->line;
			return;
		}
	}
}

void dwarf_lines_close(struct dwarf_lines *l)
{
	if (l == NULL)
		return;
	free(l->locs);
	free(l);
}
