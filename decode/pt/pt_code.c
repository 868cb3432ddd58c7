/*
 * libipt's view of the program's code (pt_code.h).
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt_code.h"

static int add_section(struct pt_code *c, const char *path, uint64_t offset, uint64_t size,
		       uint64_t vaddr, struct cgt_error *e)
{
	int isid = pt_iscache_add_file(c->iscache, path, offset, size, vaddr);
	int rc = isid < 0 ? isid : pt_image_add_cached(c->image, c->iscache, isid, NULL);
	if (rc < 0)
		return cgt_fail(e, cgt_err_io, "%s: libipt cannot use it: %s", path,
				pt_errstr(pt_errcode(rc)));
	return 0;
}

/* Code bytes with no file of their own go into a temporary one. */
static int add_bytes(struct pt_code *c, const struct pt_image_bytes *im, const char *dir,
		     struct cgt_error *e)
{
	char *path;
	if (dir == NULL)
		return cgt_fail(e, cgt_err_io, "no directory was given for the %s code", im->name);
	if (asprintf(&path, "%s/cgtrace-code.XXXXXX", dir) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	sigset_t was;
	cgt_temporaries_hold(&was);
	int fd = mkstemp(path);
	if (fd >= 0)
		cgt_temporary_register(path);
	cgt_temporaries_release(&was);
	if (fd < 0 || write(fd, im->data, im->len) != (ssize_t)im->len) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
			cgt_temporary_unregister(path);
		}
		cgt_fail(e, cgt_err_io, "cannot write the %s code to %s", im->name, path);
		free(path);
		return -cgt_err_io;
	}
	close(fd);
	if (c->n_temp_files == c->cap_temp_files &&
	    cgt_array_grow(&c->temp_files, &c->cap_temp_files, c->n_temp_files, 1,
			   sizeof(*c->temp_files)) < 0) {
		unlink(path);
		cgt_temporary_unregister(path);
		free(path);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	c->temp_files[c->n_temp_files++] = path;
	return add_section(c, path, 0, im->len, im->start, e);
}

int pt_code_build(struct pt_code *c, const struct pt_input *in, FILE *warn,
		  const char *scratch_dir, struct cgt_error *e)
{
	memset(c, 0, sizeof(*c));
	c->iscache = pt_iscache_alloc(NULL);
	c->image = pt_image_alloc(NULL);
	if (c->iscache == NULL || c->image == NULL) {
		pt_code_free(c);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	/* In recording order: a later mapping of a range replaces an earlier
	   one, as libipt shrinks or splits the sections it overlaps. */
	for (size_t i = 0; i < in->n_modules; i++) {
		const struct cgt_module *m = &in->modules[i];
		const char *why;
		if (!cgt_module_matches_file(m, &why)) {
			c->modules_left_out++;
			if (warn != NULL)
				fprintf(warn, "cgtrace: warning: %s %s: its code is not decoded\n",
					m->path, why);
			continue;
		}
		/* A mapping libipt cannot take (an offset past the end of its
		   file) is left out like a changed file, not a reason to decode
		   nothing. */
		if (add_section(c, m->path, m->file_offset, m->size, m->start, e) < 0) {
			c->modules_left_out++;
			if (warn != NULL)
				fprintf(warn, "cgtrace: warning: %s: its mapping at %#llx cannot be decoded (%s)\n",
					m->path, (unsigned long long)m->start, e->msg);
		}
	}
	for (size_t i = 0; i < in->n_images; i++) {
		int rc = add_bytes(c, &in->images[i], scratch_dir, e);
		if (rc < 0) {
			pt_code_free(c);
			return rc;
		}
	}
	return 0;
}

void pt_code_free(struct pt_code *c)
{
	pt_image_free(c->image);
	pt_iscache_free(c->iscache);
	for (size_t i = 0; i < c->n_temp_files; i++) {
		unlink(c->temp_files[i]);
		cgt_temporary_unregister(c->temp_files[i]);
		free(c->temp_files[i]);
	}
	free(c->temp_files);
	memset(c, 0, sizeof(*c));
}
