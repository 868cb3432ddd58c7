/* Error reporting shared by every stage: a status and a message. */
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>

int cgt_fail(struct cgt_error *e, int status, const char *fmt, ...)
{
	if (e != NULL) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
		e->status = status;
	}
	return -status;
}
