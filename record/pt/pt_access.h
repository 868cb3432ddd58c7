/*
 * Whether this user may record with perf_event_open: the sysctls, the
 * capabilities and the locked-memory limit, checked up front so that each
 * refusal comes with what to do about it.  Internal to record/pt/.
 */
#ifndef CGTRACE_PT_ACCESS_H
#define CGTRACE_PT_ACCESS_H

#include <stddef.h>
#include <stdint.h>

struct pt_access_facts {
	int paranoid;		/* kernel.perf_event_paranoid */
	int cap_perfmon, cap_sys_admin, cap_ipc_lock;	/* effective */
	uint64_t mlock_kb;	/* kernel.perf_event_mlock_kb: free per CPU */
	uint64_t memlock_limit;	/* RLIMIT_MEMLOCK in bytes; UINT64_MAX: unlimited */
	unsigned n_cpus;	/* online */
};

/* This process's facts. */
void pt_access_gather(struct pt_access_facts *f);

/* NULL if recording with buffers of bytes_per_cpu on every CPU is allowed,
   else buf with the reason and the remedy. */
const char *pt_access_problem(const struct pt_access_facts *f, uint64_t bytes_per_cpu, char *buf,
			      size_t len);

#endif
