/*
 * Instruction address -> (file, function, line), as Cachegrind names them;
 * for Callgrind also the object, the section kind and whether a function
 * starts there, as Valgrind's debug information answers it.
 *
 * Modules come from the trace's module map; each module's file is found
 * by the locator (module_files.c: the recorded path, the build-id cache,
 * an archive, debuginfod); one found nowhere gets one warning and "???"
 * positions.  Each address is
 * resolved once; the strings are interned, so equal names are equal
 * pointers (profile.c relies on that).
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "symbols.h"

#define UNKNOWN "???"

/* One ELF file loaded at one bias. */
struct module {
	char *path;
	uint64_t bias;		/* run-time address - ELF virtual address */
	int usable;
	struct elf_sections sections;
	struct elf_symbols *symbols;
	struct dwarf_lines *lines;
};

struct cached {
	uint64_t addr;
	const struct cgt_mapping *map;
	struct cgt_location loc;
};

struct cgt_symbolizer {
	const struct cgt_mapping *maps;	/* the module map */
	size_t n_maps;
	FILE *warnings;
	struct cgt_locator *locator;
	struct module *modules;
	size_t n_modules, cap_modules;
	size_t *module_of_mapping;	/* by mapping index; 0 unknown, else index+1 */
	size_t n_mappings;
	struct string_set strings;
	struct cached *cache;	/* open addressing on (addr, mapping) */
	size_t cache_cap, cache_n;
	const char *unknown;
};

/* The bias of a mapping: where the file's byte file_offset was mapped,
   minus the virtual address the ELF program headers give that byte. */
static int bias_of(Elf *elf, const struct cgt_module *m, uint64_t *bias)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		if (m->file_offset >= ph.p_offset && m->file_offset < ph.p_offset + ph.p_filesz) {
			*bias = m->start - (ph.p_vaddr + (m->file_offset - ph.p_offset));
			return 0;
		}
	}
	return -1;
}

/* Opens the module of a mapping: several mappings of one file at one bias
   (its text, its relocated parts) share one. */
static struct module *open_module(struct cgt_symbolizer *sy, const struct cgt_module *m)
{
	uint64_t bias = 0;
	int usable = 0;
	const char *why = NULL;
	int fd = -1;
	Elf *elf = NULL;
	struct cgt_module_files f;
	struct cgt_error e;

	if (cgt_locate_module(sy->locator, m, &f, &e) < 0)
		return NULL;
	if (f.source == CGT_MODULE_NOWHERE) {
		why = f.why != NULL ? f.why : "cannot be found";	/* warned below, once per path */
	} else if ((fd = open(f.elf, O_RDONLY | O_CLOEXEC)) < 0 ||
		   (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL || bias_of(elf, m, &bias) < 0) {
		why = "is not an ELF file cgtrace can read";
	} else {
		usable = 1;
	}
	for (size_t i = 0; i < sy->n_modules; i++)
		if (strcmp(sy->modules[i].path, m->path) == 0 && sy->modules[i].bias == bias &&
		    sy->modules[i].usable == usable) {
			if (elf != NULL)
				elf_end(elf);
			if (fd >= 0)
				close(fd);
			cgt_module_files_free(&f);
			return &sy->modules[i];
		}
	if (!usable) {
		int warned = 0;
		for (size_t i = 0; i < sy->n_modules; i++)
			warned |= strcmp(sy->modules[i].path, m->path) == 0;
		if (!warned && sy->warnings != NULL)
			fprintf(sy->warnings,
				"cgtrace: warning: %s %s: its instructions are shown as ???%s\n", m->path,
				why, f.source == CGT_MODULE_NOWHERE && m->build_id_len >= 2
					     ? " (record with the build-id cache, give --archive=FILE made "
					       "by `cgtrace archive`, or name a debuginfod server that has it in "
					       "DEBUGINFOD_URLS)"
					     : "");
	}
	if (sy->n_modules == sy->cap_modules &&
	    cgt_array_grow(&sy->modules, &sy->cap_modules, sy->n_modules, 1,
			   sizeof(*sy->modules)) < 0)
		goto fail;
	struct module *mod = &sy->modules[sy->n_modules];
	memset(mod, 0, sizeof(*mod));
	mod->path = strdup(m->path);
	if (mod->path == NULL)
		goto fail;
	mod->bias = bias;
	mod->usable = usable;
	if (usable) {
		elf_sections_read(elf, &mod->sections);
		mod->symbols = elf_symbols_load(elf, f.elf, f.debug, &sy->strings);
		mod->lines = dwarf_lines_open(f.elf, f.debug, bias, &sy->strings);
	}
	sy->n_modules++;
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	cgt_module_files_free(&f);
	return mod;
fail:
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	cgt_module_files_free(&f);
	return NULL;
}

int cgt_symbolizer_open(struct cgt_symbolizer **out, const struct cgt_locator_options *o,
			struct cgt_error *e)
{
	struct cgt_symbolizer *sy = calloc(1, sizeof(*sy));

	*out = NULL;
	elf_version(EV_CURRENT);
	if (sy == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	sy->warnings = o != NULL ? o->warnings : NULL;
	if (cgt_locator_open(&sy->locator, o, e) < 0) {
		free(sy);
		return -e->status;
	}
	sy->unknown = string_set_intern(&sy->strings, UNKNOWN);
	if (sy->unknown == NULL) {
		cgt_symbolizer_close(sy);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	*out = sy;
	return 0;
}

void cgt_symbolizer_use_mappings(struct cgt_symbolizer *sy, const struct cgt_mapping *maps,
				 size_t n)
{
	sy->maps = maps;
	sy->n_maps = n;
}

void cgt_symbolizer_preload(struct cgt_symbolizer *sy, const struct cgt_module *m)
{
	open_module(sy, m);
}

static size_t cache_hash(uint64_t addr, const struct cgt_mapping *map)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)map;
	return (size_t)(h ^ (h >> 31));
}

/* The module of a mapping of the module map, opened the first time;
   NULL if out of memory.  Valid until the next module is opened. */
static struct module *module_of(struct cgt_symbolizer *sy, const struct cgt_mapping *map)
{
	size_t n = sy->n_maps, k = (size_t)(map - sy->maps);
	if (n > sy->n_mappings) {
		size_t cap = sy->n_mappings;
		if (cgt_array_grow(&sy->module_of_mapping, &cap, 0, n,
				   sizeof(*sy->module_of_mapping)) < 0)
			return NULL;
		memset(sy->module_of_mapping + sy->n_mappings, 0,
		       (cap - sy->n_mappings) * sizeof(*sy->module_of_mapping));
		sy->n_mappings = cap;
	}
	if (sy->module_of_mapping[k] == 0) {
		struct module *opened = open_module(sy, &map->module);
		if (opened == NULL)
			return NULL;
		sy->module_of_mapping[k] = (size_t)(opened - sy->modules) + 1;
	}
	return &sy->modules[sy->module_of_mapping[k] - 1];
}

static void resolve(struct cgt_symbolizer *sy, uint64_t addr, const struct cgt_mapping *map,
		    struct cgt_location *loc)
{
	loc->file = loc->fn = sy->unknown;
	loc->line = 0;
	if (map == NULL)
		return;
	struct module *mod = module_of(sy, map);
	if (mod == NULL || !mod->usable)
		return;
	uint64_t vaddr = addr - mod->bias;
	const char *fn = elf_symbols_find(mod->symbols, vaddr);
	if (fn != NULL)
		loc->fn = fn;
	if (mod->lines != NULL)
		dwarf_lines_find(mod->lines, addr, &loc->file, &loc->line);
}

void cgt_symbolize(struct cgt_symbolizer *sy, uint64_t addr, uint32_t map_epoch,
		   struct cgt_location *loc)
{
	const struct cgt_mapping *map = cgt_mapping_find(sy->maps, sy->n_maps, addr, map_epoch);

	if (2 * (sy->cache_n + 1) > sy->cache_cap) {
		size_t cap = sy->cache_cap ? 2 * sy->cache_cap : 8192;
		struct cached *c = calloc(cap, sizeof(*c));
		if (c == NULL) {
			resolve(sy, addr, map, loc);
			return;
		}
		for (size_t i = 0; i < sy->cache_cap; i++) {
			if (sy->cache[i].loc.file == NULL)
				continue;
			size_t j = cache_hash(sy->cache[i].addr, sy->cache[i].map) & (cap - 1);
			while (c[j].loc.file != NULL)
				j = (j + 1) & (cap - 1);
			c[j] = sy->cache[i];
		}
		free(sy->cache);
		sy->cache = c;
		sy->cache_cap = cap;
	}
	size_t j = cache_hash(addr, map) & (sy->cache_cap - 1);
	for (;; j = (j + 1) & (sy->cache_cap - 1)) {
		struct cached *c = &sy->cache[j];
		if (c->loc.file == NULL) {
			resolve(sy, addr, map, &c->loc);
			c->addr = addr;
			c->map = map;
			sy->cache_n++;
			*loc = c->loc;
			return;
		}
		if (c->addr == addr && c->map == map) {
			*loc = c->loc;
			return;
		}
	}
}

/*
 * Callgrind's object is VG_(find_DebugInfo)'s: the first DebugInfo valid
 * now whose .text holds the address; the section kind is
 * VG_(DebugInfo_sect_kind)'s: the first DebugInfo, valid or not, with any
 * of its ranges holding it.  Both walk Valgrind's list, newest first (it
 * moves a DebugInfo found one step forward now and then, which matters
 * only where modules overlap, and live ones do not): here the modules of
 * the mappings of map_epoch, newest first, as cgt_mapping_find.  Not
 * cached: Callgrind asks once per block, and the walk compares ranges of
 * modules already open.  A module whose file cannot be read has no
 * ranges: no object is claimed for it.
 */
void cgt_symbolize_code(struct cgt_symbolizer *sy, uint64_t addr, uint32_t map_epoch,
			struct cgt_code_info *ci)
{
	struct cgt_location loc;

	cgt_symbolize(sy, addr, map_epoch, &loc);
	memset(ci, 0, sizeof(*ci));
	ci->fn = loc.fn != sy->unknown ? loc.fn : NULL;
	ci->file = loc.file != sy->unknown ? loc.file : NULL;
	ci->line = loc.line;
	const struct cgt_mapping *map = cgt_mapping_find(sy->maps, sy->n_maps, addr, map_epoch);
	struct module *mod = map != NULL ? module_of(sy, map) : NULL;
	if (mod != NULL && mod->usable)
		ci->is_entry = (uint8_t)elf_symbols_is_entry(mod->symbols, addr - mod->bias);
	for (size_t i = sy->n_maps; i-- > 0;) {
		map = &sy->maps[i];
		if (map_epoch < map->epoch_mapped || map_epoch >= map->epoch_unmapped ||
		    (mod = module_of(sy, map)) == NULL)
			continue;
		enum cgt_sect_kind kind = elf_sections_kind(&mod->sections, addr - mod->bias);
		if (ci->sect_kind == CGT_SECT_UNKNOWN)
			ci->sect_kind = (uint8_t)kind;
		if (kind == CGT_SECT_TEXT && mod->sections.valid) {
			ci->obj = mod->path;
			ci->text_bias = mod->bias;
			return;
		}
	}
}

void cgt_symbolizer_close(struct cgt_symbolizer *sy)
{
	if (sy == NULL)
		return;
	for (size_t i = 0; i < sy->n_modules; i++) {
		free(sy->modules[i].path);
		elf_symbols_free(sy->modules[i].symbols);
		dwarf_lines_close(sy->modules[i].lines);
	}
	free(sy->modules);
	cgt_locator_close(sy->locator);
	free(sy->module_of_mapping);
	free(sy->cache);
	string_set_free(&sy->strings);
	free(sy);
}
