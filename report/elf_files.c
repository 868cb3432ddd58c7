/*
 * Finding things in ELF files: sections by name, and a module's separate
 * debug information as Valgrind finds it (m_debuginfo/readelf.c
 * find_debug_file): the build-id path under
 * /usr/lib/debug, then the .gnu_debuglink name, checked by CRC, beside the
 * file, in its .debug directory and under /usr/lib/debug (each also with
 * the directory's part up to "usr" removed, for merged-/usr systems).
 * A debug file found elsewhere (the build-id cache, an archive,
 * debuginfod: module_files.c) comes first.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"
#include "trace.h"

Elf_Scn *elf_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (n != NULL && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

static uint32_t crc32_of_file(int fd, int *ok)
{
	static uint32_t table[256];
	if (table[1] == 0)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	uint32_t crc = 0xFFFFFFFFu;
	uint8_t buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
	*ok = n == 0;
	return crc ^ 0xFFFFFFFFu;
}

/* Opens path as the debug file if its build-id (or CRC) matches. */
static Elf *try_debug_file(const char *path, const uint8_t *id, size_t id_len, int use_crc,
			   uint32_t crc, int *out_fd)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int ok = 1;
	if (use_crc) {
		int read_ok;
		ok = crc32_of_file(fd, &read_ok) == crc && read_ok;
	}
	Elf *elf = ok ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (elf != NULL && !use_crc) {
		uint8_t got[64];
		size_t got_len = cgt_elf_build_id(elf, got, sizeof(got));
		ok = got_len > 0 && got_len == id_len && memcmp(got, id, id_len) == 0;
	}
	if (elf == NULL || !ok) {
		if (elf != NULL)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	*out_fd = fd;
	return elf;
}

/* debug_file_open's search; *chosen (if not NULL) is the file's path. */
static Elf *find_debug_file(Elf *elf, const char *path, const char *found_debug, int *fd,
			    char **chosen);

Elf *debug_file_open(Elf *elf, const char *path, const char *found_debug, int *fd)
{
	return find_debug_file(elf, path, found_debug, fd, NULL);
}

char *debug_file_path(Elf *elf, const char *path, const char *found_debug)
{
	int fd;
	char *chosen = NULL;
	Elf *dbg = find_debug_file(elf, path, found_debug, &fd, &chosen);
	if (dbg != NULL) {
		elf_end(dbg);
		close(fd);
	}
	return chosen;
}

/* dbg, noting where it was found. */
static Elf *found(Elf *dbg, const char *where, char **chosen)
{
	if (dbg != NULL && chosen != NULL)
		*chosen = strdup(where);
	return dbg;
}

static Elf *find_debug_file(Elf *elf, const char *path, const char *found_debug, int *fd,
			    char **chosen)
{
	uint8_t id[64];
	size_t id_len = cgt_elf_build_id(elf, id, sizeof(id));
	char candidate[PATH_MAX + 64];

	if (found_debug != NULL && id_len > 1) {
		Elf *dbg = try_debug_file(found_debug, id, id_len, 0, 0, fd);
		if (dbg != NULL)
			return found(dbg, found_debug, chosen);
	}
	if (id_len > 1) {
		int o = snprintf(candidate, sizeof(candidate), "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (size_t i = 1; i < id_len && o < (int)sizeof(candidate) - 8; i++)
			o += snprintf(candidate + o, sizeof(candidate) - (size_t)o, "%02x", id[i]);
		snprintf(candidate + o, sizeof(candidate) - (size_t)o, ".debug");
		Elf *dbg = try_debug_file(candidate, id, id_len, 0, 0, fd);
		if (dbg != NULL)
			return found(dbg, candidate, chosen);
	}
	/* .gnu_debuglink: a file name, padded to 4 bytes, then its CRC32. */
	Elf_Scn *link_scn = elf_section(elf, ".gnu_debuglink");
	Elf_Data *link = link_scn ? elf_getdata(link_scn, NULL) : NULL;
	if (link == NULL || link->d_buf == NULL)
		return NULL;
	const char *name = link->d_buf;
	size_t name_len = strnlen(name, link->d_size);
	size_t crc_at = (name_len + 4) & ~(size_t)3;
	if (name_len == link->d_size || crc_at + 4 > link->d_size)
		return NULL;
	uint32_t crc;
	memcpy(&crc, (const char *)link->d_buf + crc_at, 4);

	char objdir[PATH_MAX];
	snprintf(objdir, sizeof(objdir), "%s", path);
	char *slash = strrchr(objdir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		snprintf(objdir, sizeof(objdir), ".");
	const char *usr = strstr(objdir, "usr");
	const char *dirs[2] = { objdir, usr ? usr + 3 : NULL };
	Elf *dbg;
	if (name[0] == '/' && (dbg = try_debug_file(name, NULL, 0, 1, crc, fd)) != NULL)
		return found(dbg, name, chosen);
	for (int d = 0; d < 2; d++) {
		if (dirs[d] == NULL)
			continue;
		const char *formats[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
		for (int f = 0; f < 3; f++) {
			snprintf(candidate, sizeof(candidate), formats[f], dirs[d], name);
			if ((dbg = try_debug_file(candidate, NULL, 0, 1, crc, fd)) != NULL)
				return found(dbg, candidate, chosen);
		}
	}
	return NULL;
}
