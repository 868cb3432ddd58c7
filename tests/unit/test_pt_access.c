/* The up-front permission checks of the PT recorder. */
#include <string.h>

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

static void gathered_facts_are_sane(void)
{
	struct pt_access_facts f;
	pt_access_gather(&f);
	CHECK(f.n_cpus >= 1);
	CHECK(f.paranoid >= -1 && f.paranoid <= 4);
}

int main(void)
{
	PLAN(3);
	RUN(paranoid_levels);
	RUN(locked_memory);
	RUN(gathered_facts_are_sane);
	return CHECK_DONE();
}
