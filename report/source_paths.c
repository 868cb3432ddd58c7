/*
 * Where `cgtrace report` reads a source file it annotates (annotation.h):
 * at the name the profile gives, else -- another machine, the source tree
 * gone -- from the sources an archive carried (`report --archive`),
 * filed under the same name (cgt_archive_source_member), unpacked only
 * when a file is annotated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotation.h"

/* name's copy unpacked from the sources archive if it holds one, else
   name itself (malloc'd), NULL if out of memory. */
static char *source_path(const struct cgt_annotate_options *o, const char *name)
{
	char *member, *path = NULL;
	if (o->sources == NULL || access(name, R_OK) == 0 ||
	    (member = cgt_archive_source_member(name)) == NULL)
		return strdup(name);
	struct cgt_error e;
	int rc = cgt_archive_unpack_member(o->sources, member, &path, &e);
	free(member);
	if (rc < 0 && o->warnings != NULL)
		fprintf(o->warnings, "cgtrace: warning: %s\n", e.msg);
	return rc > 0 ? path : strdup(name);
}

char **annotation_source_paths(const struct cgt_annotate_options *o, const char *const *names,
			       unsigned n)
{
	char **paths = calloc(n > 0 ? n : 1, sizeof(*paths));
	for (unsigned i = 0; paths != NULL && i < n; i++) {
		paths[i] = source_path(o, names[i]);
		if (paths[i] == NULL) {
			annotation_source_paths_free(paths, i);
			paths = NULL;
		}
	}
	return paths;
}

void annotation_source_paths_free(char **paths, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}
