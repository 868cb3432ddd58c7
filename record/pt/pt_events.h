/*
 * The perf events of a PT recording, described from sysfs and the
 * options: the intel_pt event (the packet stream into the AUX area), a
 * software dummy event for the sideband (MMAP2, COMM, FORK/EXIT, context
 * switches), and the mem-loads / mem-stores sampling events where the CPU
 * offers them.  Every one follows the program from its exec
 * (enable_on_exec) into its threads (inherit), user space only.
 * Internal to record/pt/.
 */
#ifndef CGTRACE_PT_EVENTS_H
#define CGTRACE_PT_EVENTS_H

#include <linux/perf_event.h>
#include <stddef.h>

#include "record.h"

enum pt_event_index {
	PT_EV_TRACE,		/* intel_pt */
	PT_EV_SIDEBAND,		/* software dummy */
	PT_EV_LOADS_AUX,	/* the group leader some CPUs need for mem-loads */
	PT_EV_LOADS,
	PT_EV_STORES,
	PT_EV_COUNT
};

struct pt_event_set {
	struct perf_event_attr attr[PT_EV_COUNT];
	int wanted[PT_EV_COUNT];
	uint32_t mtc_period, nom_freq, cpuid15_eax, cpuid15_ebx;
	char samples_missing[256];	/* "" when sampling memory */
};

/* The events for recording with options o; with trace 0, the sideband
   event only (what can be tested on a host without Intel PT).  0, or -1
   with *why (Intel PT missing, an option the PMU does not support). */
int pt_events_build(struct pt_event_set *s, const struct cgt_pt_options *o, int trace, char *why,
		    size_t why_len);

/* The sample_type of the memory events: what a SAMPLE record holds. */
#define PT_MEM_SAMPLE_TYPE                                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |       \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)
/* And of the others, in the sample_id of every sideband record. */
#define PT_SIDEBAND_SAMPLE_TYPE                                                              \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

#endif
