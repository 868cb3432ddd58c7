/*
 * A perf PMU as sysfs describes it (/sys/bus/event_source/devices/NAME):
 * its dynamic type, the bit fields of its format/ directory, its
 * capabilities and event aliases.  Nothing is hard-coded: every config bit
 * comes from format/.  The sysfs root is a parameter so that tests can use
 * a fake tree.  Internal to record/pt/.
 */
#ifndef CGTRACE_PERF_PMU_H
#define CGTRACE_PERF_PMU_H

#include <stddef.h>
#include <stdint.h>

#define PERF_PMU_MAX_TERMS 48
#define PERF_PMU_MAX_RANGES 4

/* One format term: which attr field (0 config, 1 config1, 2 config2) and
   which bits, lowest first; a value's bits fill the ranges in order. */
struct perf_pmu_term {
	char name[32];
	unsigned field;
	unsigned n_ranges;
	struct { unsigned lo, hi; } ranges[PERF_PMU_MAX_RANGES];
};

struct perf_pmu {
	char dir[512];		/* <root>/bus/event_source/devices/<name> */
	uint32_t type;
	unsigned n_terms;
	struct perf_pmu_term terms[PERF_PMU_MAX_TERMS];
};

/* Reads the PMU called name under sysfs_root (normally "/sys").  Returns
   0, -1 if the PMU does not exist, -2 if it is malformed; *why says what. */
int perf_pmu_open(struct perf_pmu *pmu, const char *sysfs_root, const char *name, char *why,
		  size_t why_len);

/* Sets term to value in config[3] (config, config1, config2).  -1 if the
   PMU has no such term, -2 if value does not fit its bits. */
int perf_pmu_set(const struct perf_pmu *pmu, const char *term, uint64_t value, uint64_t config[3]);

/* Applies "term=value,term,..." (an events/ alias, or a user's string; a
   bare term means 1).  -1 with *why on an unknown term or a bad value. */
int perf_pmu_apply(const struct perf_pmu *pmu, const char *terms, uint64_t config[3], char *why,
		   size_t why_len);

/* The contents of file (relative to the PMU's directory), trailing
   whitespace removed, in buf.  -1 if it cannot be read. */
int perf_pmu_read(const struct perf_pmu *pmu, const char *file, char *buf, size_t len);

/* A numeric file (decimal or 0x hex), e.g. caps/psb_cyc.  -1 if missing or
   not a number. */
int perf_pmu_read_number(const struct perf_pmu *pmu, const char *file, uint64_t *value);

#endif
