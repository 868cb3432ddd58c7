/* The Valgrind recording backend (see record.h for the contract). */
#ifndef CGTRACE_VG_RECORD_H
#define CGTRACE_VG_RECORD_H

#include "record.h"

int vg_record(const struct cgt_record_options *o, struct cgt_error *e);

#endif
