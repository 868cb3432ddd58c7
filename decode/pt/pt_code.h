/*
 * The program's code as libipt sees it: a section cache and an image
 * built from the trace's module map, with the code that lives in no file
 * (the vdso) put in temporary files for the time of the decode.  Modules
 * whose file changed since recording are left out, with one warning each:
 * decoding then stops where they ran, instead of going wrong.  Internal
 * to decode/.
 */
#ifndef CGTRACE_PT_CODE_H
#define CGTRACE_PT_CODE_H

#include <stdio.h>

#include "pt_input.h"

struct pt_image;
struct pt_image_section_cache;

struct pt_code {
	struct pt_image_section_cache *iscache;
	struct pt_image *image;
	char **temp_files;
	size_t n_temp_files, cap_temp_files;
	unsigned modules_left_out;
};

/* warn: where to print a warning per module left out (NULL: nowhere);
   scratch_dir: where code bytes with no file of their own go (NULL: there
   must be none). */
int pt_code_build(struct pt_code *c, const struct pt_input *in, FILE *warn,
		  const char *scratch_dir, struct cgt_error *e);
void pt_code_free(struct pt_code *c);

#endif
