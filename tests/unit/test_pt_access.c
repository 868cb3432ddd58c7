/* The up-front permission checks of the PT recorder. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "pt/pt_access.h"

static const struct pt_access_facts user = {
	.paranoid = 2, .mlock_kb = 516, .memlock_limit = 8u << 20, .n_cpus = 4,
};

static void paranoid_levels(void)
{
	struct pt_access_facts f = user;
	char buf[512];

	CHECK(pt_access_problem(&f, 128 << 10, buf, sizeof(buf)) == NULL);
	f.paranoid = 3;	/* Debian's default */
	const char *why = pt_access_problem(&f, 128 << 10, buf, sizeof(buf));
	CHECK(why != NULL && strstr(why, "kernel.perf_event_paranoid is 3") != NULL);
	CHECK(why != NULL && strstr(why, "CAP_PERFMON") != NULL);
	f.cap_perfmon = 1;
	CHECK(pt_access_problem(&f, 128 << 10, buf, sizeof(buf)) == NULL);
}

static void locked_memory(void)
{
	struct pt_access_facts f = user;
	char buf[512];

	/* 4 CPUs x 516 KiB free + 8 MiB: 10,256 KiB in all. */
	CHECK(pt_access_problem(&f, 2564u << 10, buf, sizeof(buf)) == NULL);
	const char *why = pt_access_problem(&f, 2565u << 10, buf, sizeof(buf));
	CHECK(why != NULL && strstr(why, "need 10260 KiB of locked memory (2565 KiB on each of 4 CPUs)"));
	CHECK(why != NULL && strstr(why, "only 10256 KiB are allowed"));
	f.cap_ipc_lock = 1;
	CHECK(pt_access_problem(&f, 1u << 30, buf, sizeof(buf)) == NULL);
	f = user;
	f.paranoid = -1;
	CHECK(pt_access_problem(&f, 1u << 30, buf, sizeof(buf)) == NULL);
	f = user;
	f.memlock_limit = UINT64_MAX;
	CHECK(pt_access_problem(&f, 1u << 30, buf, sizeof(buf)) == NULL);
}

/* A number from the start of a file, or fallback if there is none. */
static long first_number(const char *path, long fallback)
{
	char text[64] = "";
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return fallback;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	char *end;
	long v = strtol(text, &end, 10);
	return end == text ? fallback : v;
}

/* The CPUs in /sys/devices/system/cpu/online ("0-3,8"), 0 if unreadable. */
static unsigned online_cpus(void)
{
	char text[256] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (f == NULL)
		return 0;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	unsigned count = 0;
	for (char *p = text; *p >= '0' && *p <= '9';) {
		unsigned long lo = strtoul(p, &p, 10), hi = lo;
		if (*p == '-')
			hi = strtoul(p + 1, &p, 10);
		count += (unsigned)(hi - lo + 1);
		if (*p == ',')
			p++;
	}
	return count;
}

/* The effective capabilities from /proc/self/status's CapEff line. */
static int effective_caps(unsigned long long *caps)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = sscanf(line, "CapEff: %llx", caps) == 1;
	fclose(f);
	return found;
}

/* Against what the test reads itself (sysctls, sysfs, /proc/self/status)
   and a memlock limit it sets. */
static void gathered_facts_are_this_process(void)
{
	struct pt_access_facts f;
	struct rlimit saved, low;
	unsigned long long caps = 0;

	CHECK(getrlimit(RLIMIT_MEMLOCK, &saved) == 0);
	low = saved;
	low.rlim_cur = saved.rlim_max == RLIM_INFINITY || saved.rlim_max > 12345 * 4096
			       ? 12345 * 4096 : saved.rlim_max / 2;
	CHECK(setrlimit(RLIMIT_MEMLOCK, &low) == 0);
	memset(&f, 0xa5, sizeof(f));
	pt_access_gather(&f);
	CHECK(setrlimit(RLIMIT_MEMLOCK, &saved) == 0);

	CHECK_EQ(f.memlock_limit, low.rlim_cur);
	unsigned cpus = online_cpus();
	CHECK(cpus >= 1);
	CHECK_EQ(f.n_cpus, cpus);
	CHECK_EQ(f.paranoid, first_number("/proc/sys/kernel/perf_event_paranoid", 2));
	CHECK_EQ(f.mlock_kb, first_number("/proc/sys/kernel/perf_event_mlock_kb", 516));
	CHECK(effective_caps(&caps));
	CHECK_EQ(f.cap_perfmon, (caps >> 38) & 1);
	CHECK_EQ(f.cap_sys_admin, (caps >> 21) & 1);
	CHECK_EQ(f.cap_ipc_lock, (caps >> 14) & 1);
}

int main(void)
{
	PLAN(3);
	RUN(paranoid_levels);
	RUN(locked_memory);
	RUN(gathered_facts_are_this_process);
	return CHECK_DONE();
}
