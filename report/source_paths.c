/*
 * Where `cgtrace report` reads a source file it annotates (annotation.h):
 * at the name the profile gives, else -- another machine, the source tree
 * gone -- from the sources an archive carried (`report --archive`),
 * filed under the same name (cgt_archive_source_member).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotation.h"

/* name's copy under the sources directory if there is one there, else
   name itself (malloc'd), NULL if out of memory. */
static char *source_path(const char *sources_dir, const char *name)
{
	char *member, *path = NULL;
	if (sources_dir == NULL || access(name, R_OK) == 0 ||
	    (member = cgt_archive_source_member(name)) == NULL)
		return strdup(name);
	/* member is "sources/PATH"; sources_dir is the unpacked sources/ */
	if (asprintf(&path, "%s/%s", sources_dir, member + strlen("sources/")) < 0)
		path = NULL;
	free(member);
	if (path != NULL && access(path, R_OK) != 0) {
		free(path);
		return strdup(name);
	}
	return path;
}

char **annotation_source_paths(const struct cgt_annotate_options *o, const char *const *names,
			       unsigned n)
{
	char **paths = calloc(n > 0 ? n : 1, sizeof(*paths));
	for (unsigned i = 0; paths != NULL && i < n; i++) {
		paths[i] = source_path(o->sources_dir, names[i]);
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
