/*
 * `cgtrace record --backend=pt`: the program runs natively while Intel PT
 * writes its control flow, and memory-access samples its data addresses,
 * through perf_event_open; a reader thread drains every CPU's buffers into
 * the trace (TRACE-FORMAT.md, section 9).  Internal to record/.
 */
#ifndef CGTRACE_PT_RECORD_H
#define CGTRACE_PT_RECORD_H

#include "record.h"

/* Records o->argv.  With trace 0 only the sideband is recorded (module
   map, threads: what a host without Intel PT can do, for tests).  Returns
   as cgt_record(). */
int pt_record(const struct cgt_record_options *o, int trace, struct cgt_error *e);

#endif
