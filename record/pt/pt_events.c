/*
 * Building a PT recording's perf_event_attr set (pt_events.h).  Every
 * config bit comes from the PMUs' sysfs format files, and every optional
 * feature is checked against caps/ first, so that a refusal names the
 * option instead of ending in EINVAL.
 */
#include <stdio.h>
#include <string.h>

#include "perf_pmu.h"
#include "pt_events.h"

void cgt_pt_options_default(struct cgt_pt_options *pt)
{
	pt->mtc_period = 3;	/* perf's default */
	pt->cyc = 0;
	pt->retcomp = 1;
	pt->psb_period = -1;
	pt->mem_period = 1000;
	pt->mem_ldlat = 3;
	pt->buffer_bytes = 0;
	pt->sysfs_root = "/sys";
}

static void common(struct perf_event_attr *a, uint64_t sample_type)
{
	a->size = sizeof(*a);
	a->disabled = 1;
	a->enable_on_exec = 1;
	a->inherit = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->sample_id_all = 1;
	a->sample_type = sample_type;
}

/* 1 if bit value of a caps/ bitmap file is set (an absent file: no). */
static int cap_bit(const struct perf_pmu *pmu, const char *file, unsigned value)
{
	uint64_t bits;
	return perf_pmu_read_number(pmu, file, &bits) == 0 && value < 64 && (bits >> value & 1);
}

static int cap_flag(const struct perf_pmu *pmu, const char *file)
{
	uint64_t v;
	return perf_pmu_read_number(pmu, file, &v) == 0 && v != 0;
}

static int build_trace(struct pt_event_set *s, const struct cgt_pt_options *o, char *why,
		       size_t why_len)
{
	struct perf_pmu pt;
	uint64_t config[3] = { 0 };
	char text[64];

	if (perf_pmu_open(&pt, o->sysfs_root, "intel_pt", why, why_len) < 0)
		return -1;
	/* Timestamps place memory samples and thread switches in the trace. */
	if (perf_pmu_set(&pt, "tsc", 1, config) < 0) {
		snprintf(why, why_len, "the intel_pt PMU has no 'tsc' format term");
		return -1;
	}
	if (o->mtc_period >= 0 && cap_flag(&pt, "caps/mtc")) {
		if (!cap_bit(&pt, "caps/mtc_periods", (unsigned)o->mtc_period)) {
			snprintf(why, why_len, "this CPU offers no MTC period %d (caps/mtc_periods)",
				 o->mtc_period);
			return -1;
		}
		perf_pmu_set(&pt, "mtc", 1, config);
		perf_pmu_set(&pt, "mtc_period", (uint64_t)o->mtc_period, config);
		s->mtc_period = (uint32_t)o->mtc_period;
	}
	if (o->cyc) {
		if (!cap_flag(&pt, "caps/psb_cyc") || perf_pmu_set(&pt, "cyc", 1, config) < 0) {
			snprintf(why, why_len, "this CPU has no cycle-accurate mode (caps/psb_cyc)");
			return -1;
		}
	}
	if (!o->retcomp && perf_pmu_set(&pt, "noretcomp", 1, config) < 0) {
		snprintf(why, why_len, "the intel_pt PMU cannot disable return compression");
		return -1;
	}
	if (o->psb_period >= 0) {
		if (!cap_bit(&pt, "caps/psb_periods", (unsigned)o->psb_period) ||
		    perf_pmu_set(&pt, "psb_period", (uint64_t)o->psb_period, config) < 0) {
			snprintf(why, why_len, "this CPU offers no PSB period %d (caps/psb_periods)",
				 o->psb_period);
			return -1;
		}
	}
	uint64_t v;
	if (perf_pmu_read_number(&pt, "max_nonturbo_ratio", &v) == 0)
		s->nom_freq = (uint32_t)v;
	if (perf_pmu_read(&pt, "tsc_art_ratio", text, sizeof(text)) == 0 &&
	    sscanf(text, "%u:%u", &s->cpuid15_ebx, &s->cpuid15_eax) != 2)
		s->cpuid15_ebx = s->cpuid15_eax = 0;

	struct perf_event_attr *a = &s->attr[PT_EV_TRACE];
	common(a, PT_SIDEBAND_SAMPLE_TYPE);
	a->type = pt.type;
	a->config = config[0];
	a->sample_period = 1;
	s->wanted[PT_EV_TRACE] = 1;
	return 0;
}

/* The mem-loads and mem-stores events of the core PMU ("cpu", or
   "cpu_core" on hybrid CPUs); where one is missing, samples_missing says
   so and recording goes on without it. */
static void build_memory(struct pt_event_set *s, const struct cgt_pt_options *o)
{
	struct perf_pmu cpu;
	char why[256], alias[256];

	if (perf_pmu_open(&cpu, o->sysfs_root, "cpu_core", why, sizeof(why)) < 0 &&
	    perf_pmu_open(&cpu, o->sysfs_root, "cpu", why, sizeof(why)) < 0) {
		snprintf(s->samples_missing, sizeof(s->samples_missing), "%s", why);
		return;
	}
	static const struct { int index; const char *alias; } events[] = {
		{ PT_EV_LOADS_AUX, "mem-loads-aux" },
		{ PT_EV_LOADS, "mem-loads" },
		{ PT_EV_STORES, "mem-stores" },
	};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		char file[64];
		uint64_t config[3] = { 0 };
		snprintf(file, sizeof(file), "events/%s", events[i].alias);
		if (perf_pmu_read(&cpu, file, alias, sizeof(alias)) < 0)
			continue;
		if (perf_pmu_apply(&cpu, alias, config, why, sizeof(why)) < 0) {
			snprintf(s->samples_missing, sizeof(s->samples_missing), "%s: %.180s", file, why);
			return;
		}
		if (events[i].index == PT_EV_LOADS)
			perf_pmu_set(&cpu, "ldlat", o->mem_ldlat, config);
		struct perf_event_attr *a = &s->attr[events[i].index];
		common(a, PT_MEM_SAMPLE_TYPE);
		a->type = cpu.type;
		a->config = config[0];
		a->config1 = config[1];
		a->config2 = config[2];
		if (events[i].index != PT_EV_LOADS_AUX) {
			a->sample_period = o->mem_period;
			a->precise_ip = 2;	/* 3 is refused on some cores */
		}
		s->wanted[events[i].index] = 1;
	}
	if (!s->wanted[PT_EV_LOADS] && !s->wanted[PT_EV_STORES])
		snprintf(s->samples_missing, sizeof(s->samples_missing),
			 "this CPU's PMU offers no mem-loads or mem-stores event");
	else if (!s->wanted[PT_EV_LOADS])
		s->wanted[PT_EV_LOADS_AUX] = 0;
}

int pt_events_build(struct pt_event_set *s, const struct cgt_pt_options *o, int trace, char *why,
		    size_t why_len)
{
	memset(s, 0, sizeof(*s));
	if (trace) {
		if (build_trace(s, o, why, why_len) < 0)
			return -1;
		build_memory(s, o);
	} else {
		snprintf(s->samples_missing, sizeof(s->samples_missing), "sideband only");
	}
	struct perf_event_attr *a = &s->attr[PT_EV_SIDEBAND];
	common(a, PT_SIDEBAND_SAMPLE_TYPE);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = 1;
	s->wanted[PT_EV_SIDEBAND] = 1;
	return 0;
}
