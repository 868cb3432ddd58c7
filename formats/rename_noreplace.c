/*
 * Putting a finished file in place without replacing anything
 * (cgt_rename_noreplace, trace.h): the stored PT decode and simulate's
 * default output name both use it.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int cgt_rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without RENAME_NOREPLACE: link() never replaces
	   either, where there are hard links at all. */
	if (link(from, to) < 0)
		return -1;
	unlink(from);
	return 0;
}
