/* Reading PMUs from a fake sysfs tree: types, format bits, aliases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pt/perf_pmu.h"

static char root[] = "/tmp/cgtrace-test-sysfs.XXXXXX";

static void put(const char *file, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, file);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* Formats as an Ice Lake's intel_pt and cpu PMUs show them. */
static void make_tree(void)
{
	put("bus/event_source/devices/intel_pt/type", "9\n");
	put("bus/event_source/devices/intel_pt/format/pt", "config:0\n");
	put("bus/event_source/devices/intel_pt/format/cyc", "config:1\n");
	put("bus/event_source/devices/intel_pt/format/mtc", "config:9\n");
	put("bus/event_source/devices/intel_pt/format/tsc", "config:10\n");
	put("bus/event_source/devices/intel_pt/format/noretcomp", "config:11\n");
	put("bus/event_source/devices/intel_pt/format/branch", "config:13\n");
	put("bus/event_source/devices/intel_pt/format/mtc_period", "config:14-17\n");
	put("bus/event_source/devices/intel_pt/format/psb_period", "config:24-27\n");
	put("bus/event_source/devices/intel_pt/caps/psb_periods", "0x3f\n");
	put("bus/event_source/devices/intel_pt/max_nonturbo_ratio", "24\n");
	put("bus/event_source/devices/intel_pt/tsc_art_ratio", "2:188\n");
	put("bus/event_source/devices/cpu/type", "4\n");
	put("bus/event_source/devices/cpu/format/event", "config:0-7\n");
	put("bus/event_source/devices/cpu/format/umask", "config:8-15\n");
	put("bus/event_source/devices/cpu/format/ldlat", "config1:0-15\n");
	put("bus/event_source/devices/cpu/format/split", "config:32-33,40-41\n");
	put("bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("bus/event_source/devices/bad/type", "7\n");
	put("bus/event_source/devices/bad/format/x", "config:9-3\n");
}

static void types_and_format_bits(void)
{
	struct perf_pmu pt;
	char why[256];
	uint64_t config[3] = { 0 }, v;

	CHECK_EQ(perf_pmu_open(&pt, root, "intel_pt", why, sizeof(why)), 0);
	CHECK_EQ(pt.type, 9);
	CHECK_EQ(perf_pmu_set(&pt, "tsc", 1, config), 0);
	CHECK_EQ(perf_pmu_set(&pt, "mtc_period", 3, config), 0);
	CHECK_EQ(config[0], (1u << 10) | (3u << 14));
	CHECK_EQ(perf_pmu_set(&pt, "mtc_period", 16, config), -2);	/* 4 bits */
	CHECK_EQ(perf_pmu_set(&pt, "ptw", 1, config), -1);	/* not offered */
	CHECK_EQ(perf_pmu_read_number(&pt, "caps/psb_periods", &v), 0);
	CHECK_EQ(v, 0x3f);
	CHECK_EQ(perf_pmu_read_number(&pt, "max_nonturbo_ratio", &v), 0);
	CHECK_EQ(v, 24);
	CHECK_EQ(perf_pmu_read_number(&pt, "caps/ptwrite", &v), -1);
}

static void aliases_and_split_fields(void)
{
	struct perf_pmu cpu;
	char why[256], alias[128];
	uint64_t config[3] = { 0 };

	CHECK_EQ(perf_pmu_open(&cpu, root, "cpu", why, sizeof(why)), 0);
	CHECK_EQ(perf_pmu_read(&cpu, "events/mem-loads", alias, sizeof(alias)), 0);
	CHECK_EQ(perf_pmu_apply(&cpu, alias, config, why, sizeof(why)), 0);
	CHECK_EQ(config[0], 0x1cd);
	CHECK_EQ(config[1], 3);
	/* A field in two pieces: the value's low bits fill the first. */
	CHECK_EQ(perf_pmu_apply(&cpu, "split=0xf", config, why, sizeof(why)), 0);
	CHECK_EQ(config[0], 0x1cd | (3ull << 32) | (3ull << 40));
	CHECK_EQ(perf_pmu_apply(&cpu, "nosuch=1", config, why, sizeof(why)), -1);
	CHECK(strstr(why, "no format term 'nosuch'") != NULL);
	CHECK_EQ(perf_pmu_apply(&cpu, "event=x", config, why, sizeof(why)), -1);
}

static void missing_and_malformed(void)
{
	struct perf_pmu pmu;
	char why[256];

	CHECK_EQ(perf_pmu_open(&pmu, root, "ibs_op", why, sizeof(why)), -1);
	CHECK(strstr(why, "no ibs_op PMU") != NULL);
	CHECK_EQ(perf_pmu_open(&pmu, root, "bad", why, sizeof(why)), -2);
	CHECK(strstr(why, "format/x") != NULL);
}

int main(void)
{
	PLAN(3);
	if (mkdtemp(root) == NULL)
		return 1;
	make_tree();
	RUN(types_and_format_bits);
	RUN(aliases_and_split_fields);
	RUN(missing_and_malformed);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? CHECK_DONE() : 1;
}
