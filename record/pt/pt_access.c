/*
 * perf_event_open's permission rules (kernel/events/core.c: perf_mmap's
 * locked-memory accounting, perf_event_paranoid), applied before any
 * event is opened.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pt_access.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static long read_sysctl(const char *path, long fallback)
{
	FILE *f = fopen(path, "r");
	long v;
	if (f == NULL)
		return fallback;
	if (fscanf(f, "%ld", &v) != 1)
		v = fallback;
	fclose(f);
	return v;
}

static int has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return (data[cap / 32].effective >> (cap % 32)) & 1;
}

void pt_access_gather(struct pt_access_facts *f)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
	struct rlimit rl;

	f->paranoid = (int)read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2);
	f->mlock_kb = (uint64_t)read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", 516);
	if (syscall(SYS_capget, &hdr, data) < 0)
		data[0].effective = data[1].effective = 0;
	f->cap_perfmon = has_cap(data, CAP_PERFMON);
	f->cap_sys_admin = has_cap(data, CAP_SYS_ADMIN);
	f->cap_ipc_lock = has_cap(data, CAP_IPC_LOCK);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		f->memlock_limit = 0;
	else
		f->memlock_limit = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	f->n_cpus = cpus > 0 ? (unsigned)cpus : 1;
}

const char *pt_access_problem(const struct pt_access_facts *f, uint64_t bytes_per_cpu, char *buf,
			      size_t len)
{
	int privileged = f->cap_perfmon || f->cap_sys_admin;

	/* Debian's level 3 (Ubuntu's 4) refuses every unprivileged use;
	   at 2 and below a user may trace their own processes. */
	if (f->paranoid > 2 && !privileged) {
		snprintf(buf, len,
			 "kernel.perf_event_paranoid is %d, which forbids perf_event_open to "
			 "unprivileged users.\nAllow it with 'sudo sysctl kernel.perf_event_paranoid=2', "
			 "or give cgtrace CAP_PERFMON\n('sudo setcap cap_perfmon+ep cgtrace').",
			 f->paranoid);
		return buf;
	}
	/* The first perf_event_mlock_kb per CPU is free; beyond it counts
	   against RLIMIT_MEMLOCK unless the user may lock memory at will. */
	if (f->cap_ipc_lock || f->paranoid < 0 || f->memlock_limit == UINT64_MAX)
		return NULL;
	uint64_t needed = bytes_per_cpu * f->n_cpus;
	uint64_t allowed = f->mlock_kb * 1024 * f->n_cpus + f->memlock_limit;
	if (needed <= allowed)
		return NULL;
	snprintf(buf, len,
		 "the trace buffers need %llu KiB of locked memory (%llu KiB on each of %u CPUs), "
		 "but only %llu KiB are allowed\n(kernel.perf_event_mlock_kb per CPU plus 'ulimit -l'). "
		 "Raise 'ulimit -l', choose a smaller --pt-buffer,\nor run cgtrace with CAP_IPC_LOCK.",
		 (unsigned long long)(needed / 1024), (unsigned long long)(bytes_per_cpu / 1024),
		 f->n_cpus, (unsigned long long)(allowed / 1024));
	return buf;
}
