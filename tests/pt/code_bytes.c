/*
 * Instruction bytes from the module files of a Valgrind-backend trace,
 * classified by decode/pt/x86_insn.c: the synthesizer's and the
 * comparison's source of instruction classes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "synth.h"

struct mapped_file {
	char *path;
	const uint8_t *data;
	size_t size;
};

static struct mapped_file files[256];
static unsigned n_files;

static const struct mapped_file *file_of(const char *path)
{
	for (unsigned i = 0; i < n_files; i++)
		if (strcmp(files[i].path, path) == 0)
			return &files[i];
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || n_files == 256) {
		fprintf(stderr, "pt-synth: cannot read %s: %s\n", path, strerror(errno));
		exit(1);
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pt-synth: cannot map %s\n", path);
		exit(1);
	}
	files[n_files] = (struct mapped_file){ strdup(path), p, (size_t)st.st_size };
	return &files[n_files++];
}

/* Classified instructions by address (the code does not change). */
static struct cgt_map insns;

const struct x86_insn *code_classify(const struct cgt_decoder *d, uint32_t map_epoch, uint64_t ip)
{
	struct x86_insn *in = cgt_map_get(&insns, ip);
	if (in != NULL)
		return in;
	if ((in = malloc(sizeof(*in))) == NULL || cgt_map_put(&insns, ip, in) < 0) {
		fprintf(stderr, "pt-synth: out of memory\n");
		exit(1);
	}
	const struct cgt_mapping *m = cgt_decoder_find_mapping(d, ip, map_epoch);
	if (m == NULL) {
		fprintf(stderr, "pt-synth: no module maps the instruction at %#llx\n",
			(unsigned long long)ip);
		exit(1);
	}
	const struct mapped_file *f = file_of(m->module.path);
	uint64_t at = m->module.file_offset + (ip - m->module.start);
	if (at >= f->size || x86_insn_decode(f->data + at, f->size - at, ip, in) < 0) {
		fprintf(stderr, "pt-synth: cannot decode the instruction at %#llx (%s+%#llx)\n",
			(unsigned long long)ip, m->module.path, (unsigned long long)at);
		exit(1);
	}
	return in;
}
