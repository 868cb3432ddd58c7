/*
 * Reading a perf PMU's description from sysfs (see perf_pmu.h).  Format
 * files look like "config:0", "config:14-17", "config1:0-15" or
 * "config:0-7,32-35"; alias files like "event=0xcd,umask=0x1,ldlat=3".
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_pmu.h"

int perf_pmu_read(const struct perf_pmu *pmu, const char *file, char *buf, size_t len)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", pmu->dir, file);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return 0;
}

int perf_pmu_read_number(const struct perf_pmu *pmu, const char *file, uint64_t *value)
{
	char buf[64], *end;
	if (perf_pmu_read(pmu, file, buf, sizeof(buf)) < 0 || buf[0] == '\0')
		return -1;
	errno = 0;
	*value = strtoull(buf, &end, 0);
	return errno == 0 && *end == '\0' ? 0 : -1;
}

/* "config1:0-15" -> term; 0, or -1 if malformed. */
static int parse_format(const char *text, struct perf_pmu_term *t)
{
	const char *colon = strchr(text, ':');
	if (colon == NULL)
		return -1;
	size_t n = (size_t)(colon - text);
	if (n == 6 && strncmp(text, "config", 6) == 0)
		t->field = 0;
	else if (n == 7 && strncmp(text, "config1", 7) == 0)
		t->field = 1;
	else if (n == 7 && strncmp(text, "config2", 7) == 0)
		t->field = 2;
	else
		return -1;
	t->n_ranges = 0;
	for (const char *p = colon + 1; *p;) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p)
			return -1;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				return -1;
		}
		if (lo > hi || hi > 63 || t->n_ranges == PERF_PMU_MAX_RANGES)
			return -1;
		t->ranges[t->n_ranges].lo = (unsigned)lo;
		t->ranges[t->n_ranges].hi = (unsigned)hi;
		t->n_ranges++;
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return -1;
		p = end;
	}
	return t->n_ranges > 0 ? 0 : -1;
}

int perf_pmu_open(struct perf_pmu *pmu, const char *sysfs_root, const char *name, char *why,
		  size_t why_len)
{
	uint64_t type;

	memset(pmu, 0, sizeof(*pmu));
	snprintf(pmu->dir, sizeof(pmu->dir), "%s/bus/event_source/devices/%s", sysfs_root, name);
	if (perf_pmu_read_number(pmu, "type", &type) < 0) {
		snprintf(why, why_len, "no %s PMU (%s/type is missing)", name, pmu->dir);
		return -1;
	}
	pmu->type = (uint32_t)type;

	char format_dir[600];
	snprintf(format_dir, sizeof(format_dir), "%s/format", pmu->dir);
	DIR *d = opendir(format_dir);
	if (d == NULL) {
		snprintf(why, why_len, "%s has no format directory", pmu->dir);
		return -2;
	}
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d)) != NULL && rc == 0) {
		if (de->d_name[0] == '.')
			continue;
		char file[300], text[128];
		struct perf_pmu_term *t = &pmu->terms[pmu->n_terms];
		snprintf(file, sizeof(file), "format/%s", de->d_name);
		if (pmu->n_terms == PERF_PMU_MAX_TERMS || strlen(de->d_name) >= sizeof(t->name) ||
		    perf_pmu_read(pmu, file, text, sizeof(text)) < 0 || parse_format(text, t) < 0) {
			snprintf(why, why_len, "%s/%s: expected a format like config:0-7", pmu->dir, file);
			rc = -2;
			break;
		}
		strcpy(t->name, de->d_name);
		pmu->n_terms++;
	}
	closedir(d);
	return rc;
}

static const struct perf_pmu_term *find_term(const struct perf_pmu *pmu, const char *name,
					     size_t len)
{
	for (unsigned i = 0; i < pmu->n_terms; i++)
		if (strlen(pmu->terms[i].name) == len && strncmp(pmu->terms[i].name, name, len) == 0)
			return &pmu->terms[i];
	return NULL;
}

static int set_term(const struct perf_pmu_term *t, uint64_t value, uint64_t config[3])
{
	unsigned shift = 0;
	for (unsigned r = 0; r < t->n_ranges; r++) {
		unsigned width = t->ranges[r].hi - t->ranges[r].lo + 1;
		uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
		uint64_t part = shift < 64 ? (value >> shift) & mask : 0;
		config[t->field] = (config[t->field] & ~(mask << t->ranges[r].lo)) | part << t->ranges[r].lo;
		shift += width;
	}
	return shift >= 64 || value >> shift == 0 ? 0 : -2;
}

int perf_pmu_set(const struct perf_pmu *pmu, const char *term, uint64_t value, uint64_t config[3])
{
	const struct perf_pmu_term *t = find_term(pmu, term, strlen(term));
	return t == NULL ? -1 : set_term(t, value, config);
}

int perf_pmu_apply(const struct perf_pmu *pmu, const char *terms, uint64_t config[3], char *why,
		   size_t why_len)
{
	for (const char *p = terms; *p;) {
		size_t len = strcspn(p, ",=");
		const struct perf_pmu_term *t = find_term(pmu, p, len);
		uint64_t value = 1;
		if (t == NULL) {
			snprintf(why, why_len, "%s has no format term '%.*s'", pmu->dir, (int)len, p);
			return -1;
		}
		p += len;
		if (*p == '=') {
			char *end;
			errno = 0;
			value = strtoull(p + 1, &end, 0);
			if (errno != 0 || end == p + 1 || (*end != ',' && *end != '\0')) {
				snprintf(why, why_len, "term %s: expected a number after '='", t->name);
				return -1;
			}
			p = end;
		}
		if (set_term(t, value, config) < 0) {
			snprintf(why, why_len, "term %s: %llu does not fit its bits", t->name,
				 (unsigned long long)value);
			return -1;
		}
		if (*p == ',')
			p++;
	}
	return 0;
}
