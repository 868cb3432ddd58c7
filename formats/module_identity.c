/*
 * What identifies a module's file: its GNU build-id, size and modification
 * time.  The recorder stores them in MODULE records; readers compare them
 * with the file on disk to tell whether it changed since recording.
 */
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

size_t cgt_elf_build_id(Elf *elf, uint8_t *id, size_t cap)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (data != NULL && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0) {
				if (nh.n_descsz > cap)
					return 0;
				memcpy(id, (const char *)data->d_buf + desc_off, nh.n_descsz);
				return nh.n_descsz;
			}
	}
	return 0;
}

static void read_build_id(int fd, struct cgt_module *m)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL)
		return;
	m->build_id_len = (uint32_t)cgt_elf_build_id(elf, m->build_id, sizeof(m->build_id));
	elf_end(elf);
}

void cgt_module_identify(struct cgt_module *m)
{
	struct stat st;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);

	m->build_id_len = 0;
	m->file_size = 0;
	m->mtime_ns = 0;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		m->file_size = (uint64_t)st.st_size;
		m->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		read_build_id(fd, m);
	}
	close(fd);
}

int cgt_module_matches_file(const struct cgt_module *m, const char **why)
{
	struct cgt_module now = *m;

	cgt_module_identify(&now);
	if (now.file_size == 0 && m->file_size != 0)
		*why = "is missing or unreadable";
	else if (now.file_size != m->file_size)
		*why = "has changed size since recording";
	else if (now.build_id_len != m->build_id_len ||
		 memcmp(now.build_id, m->build_id, m->build_id_len) != 0)
		*why = "has a different build-id than when recorded";
	else if (m->build_id_len == 0 && now.mtime_ns != m->mtime_ns)
		*why = "has been modified since recording";
	else
		return 1;
	return 0;
}
