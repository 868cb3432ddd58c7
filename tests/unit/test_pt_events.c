/* The PT recording's events, built from a fake sysfs tree and the
   options: every bit from format/, every option checked against caps/. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "pt/pt_events.h"

static char root[] = "/tmp/cgtrace-test-events.XXXXXX";

static void put(const char *file, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", root, file);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void make_pt(void)
{
	put("intel_pt/type", "8\n");
	put("intel_pt/format/cyc", "config:1\n");
	put("intel_pt/format/mtc", "config:9\n");
	put("intel_pt/format/tsc", "config:10\n");
	put("intel_pt/format/noretcomp", "config:11\n");
	put("intel_pt/format/mtc_period", "config:14-17\n");
	put("intel_pt/format/psb_period", "config:24-27\n");
	put("intel_pt/caps/mtc", "1\n");
	put("intel_pt/caps/mtc_periods", "249\n");	/* 0, 3-7 */
	put("intel_pt/caps/psb_periods", "0x3f\n");
	put("intel_pt/max_nonturbo_ratio", "33\n");
	put("intel_pt/tsc_art_ratio", "2:222\n");
}

static void trace_event_from_formats(void)
{
	struct cgt_pt_options o;
	struct pt_event_set s;
	char why[256];

	cgt_pt_options_default(&o);
	o.sysfs_root = root;
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), 0);
	CHECK(s.wanted[PT_EV_TRACE] && s.wanted[PT_EV_SIDEBAND]);
	CHECK_EQ(s.attr[PT_EV_TRACE].type, 8);
	CHECK_EQ(s.attr[PT_EV_TRACE].config, (1u << 10) | (1u << 9) | (3u << 14));
	CHECK(s.attr[PT_EV_TRACE].exclude_kernel && s.attr[PT_EV_TRACE].enable_on_exec &&
	      s.attr[PT_EV_TRACE].inherit);
	CHECK_EQ(s.mtc_period, 3);
	CHECK_EQ(s.nom_freq, 33);
	CHECK_EQ(s.cpuid15_ebx, 2);
	CHECK_EQ(s.cpuid15_eax, 222);
	/* The sideband event: a software dummy with the records we need. */
	CHECK_EQ(s.attr[PT_EV_SIDEBAND].type, PERF_TYPE_SOFTWARE);
	CHECK(s.attr[PT_EV_SIDEBAND].mmap2 && s.attr[PT_EV_SIDEBAND].context_switch);

	o.retcomp = 0;
	o.psb_period = 2;
	o.mtc_period = -1;
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), 0);
	CHECK_EQ(s.attr[PT_EV_TRACE].config, (1u << 10) | (1u << 11) | (2u << 24));
}

static void unsupported_options_refused(void)
{
	struct cgt_pt_options o;
	struct pt_event_set s;
	char why[256];

	cgt_pt_options_default(&o);
	o.sysfs_root = root;
	o.mtc_period = 1;	/* not in caps/mtc_periods */
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), -1);
	CHECK(strstr(why, "no MTC period 1") != NULL);
	cgt_pt_options_default(&o);
	o.sysfs_root = root;
	o.cyc = 1;	/* no caps/psb_cyc */
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), -1);
	CHECK(strstr(why, "cycle-accurate") != NULL);
}

static void memory_events_where_offered(void)
{
	struct cgt_pt_options o;
	struct pt_event_set s;
	char why[256];

	cgt_pt_options_default(&o);
	o.sysfs_root = root;
	o.mem_period = 500;
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), 0);
	CHECK(strstr(s.samples_missing, "no cpu") != NULL);	/* no cpu PMU yet */
	put("cpu/type", "4\n");
	put("cpu/format/event", "config:0-7\n");
	put("cpu/format/umask", "config:8-15\n");
	put("cpu/format/ldlat", "config1:0-15\n");
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), 0);
	CHECK(strstr(s.samples_missing, "no mem-loads or mem-stores") != NULL);
	put("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("cpu/events/mem-stores", "event=0xd0,umask=0x82\n");
	o.mem_ldlat = 30;
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), 0);
	CHECK_EQ(s.samples_missing[0], '\0');
	CHECK(s.wanted[PT_EV_LOADS] && s.wanted[PT_EV_STORES] && !s.wanted[PT_EV_LOADS_AUX]);
	CHECK_EQ(s.attr[PT_EV_LOADS].config, 0x1cd);
	CHECK_EQ(s.attr[PT_EV_LOADS].config1, 30);	/* --mem-ldlat over the alias */
	CHECK_EQ(s.attr[PT_EV_LOADS].sample_period, 500);
	CHECK_EQ(s.attr[PT_EV_STORES].config, 0x82d0);
	CHECK(s.attr[PT_EV_LOADS].sample_type & PERF_SAMPLE_ADDR);
}

static void no_intel_pt(void)
{
	struct cgt_pt_options o;
	struct pt_event_set s;
	char why[256];

	cgt_pt_options_default(&o);
	o.sysfs_root = "/nonexistent";
	CHECK_EQ(pt_events_build(&s, &o, 1, why, sizeof(why)), -1);
	CHECK(strstr(why, "no intel_pt PMU") != NULL);
	/* Without a trace, only the sideband: what the tests can run here. */
	CHECK_EQ(pt_events_build(&s, &o, 0, why, sizeof(why)), 0);
	CHECK(!s.wanted[PT_EV_TRACE] && s.wanted[PT_EV_SIDEBAND]);
}

int main(void)
{
	PLAN(4);
	if (mkdtemp(root) == NULL)
		return 1;
	make_pt();
	RUN(trace_event_from_formats);
	RUN(unsupported_options_refused);
	RUN(memory_events_where_offered);
	RUN(no_intel_pt);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? CHECK_DONE() : 1;
}
