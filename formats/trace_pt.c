/*
 * Codecs of the pt backend's records: PT_CONFIG, SIDEBAND, AUX and IMAGE
 * (TRACE-FORMAT.md, section 9).
 */
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "put.h"
#include "trace.h"

enum pt_config_key {
	PK_MTC_PERIOD = 1,
	PK_TSC_ART_RATIO = 2,
	PK_NOM_FREQ = 3,
	PK_TIME_CONV = 4,
	PK_EVENT = 5,
	PK_SAMPLES_MISSING = 6,
};

/* The smallest perf record: struct perf_event_header. */
#define PERF_HEADER_SIZE 8

static int put_event(struct cgt_buf *b, const struct cgt_pt_event *ev)
{
	struct cgt_buf body = { 0 };
	uint64_t v[] = { ev->kind, ev->perf_type, ev->config, ev->config1, ev->sample_type, ev->period,
			 ev->n_ids };
	int rc = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]) && rc == 0; i++)
		rc = put_varint(&body, v[i]);
	for (uint32_t i = 0; i < ev->n_ids && rc == 0; i++)
		rc = put_varint(&body, ev->ids[i]);
	if (rc == 0)
		rc = put_field(b, PK_EVENT, &body);
	cgt_buf_free(&body);
	return rc;
}

int cgt_pt_config_encode(struct cgt_buf *b, const struct cgt_pt_config *c)
{
	uint64_t ratio[2] = { c->cpuid15_eax, c->cpuid15_ebx };
	uint64_t conv[4] = { c->time_shift, c->time_mult, c->time_zero, c->cap_user_time_zero };
	uint64_t mtc = c->mtc_period, nom = c->nom_freq;
	int rc = put_varints_field(b, PK_MTC_PERIOD, &mtc, 1);

	if (rc == 0)
		rc = put_varints_field(b, PK_TSC_ART_RATIO, ratio, 2);
	if (rc == 0)
		rc = put_varints_field(b, PK_NOM_FREQ, &nom, 1);
	if (rc == 0)
		rc = put_varints_field(b, PK_TIME_CONV, conv, 4);
	for (uint32_t i = 0; i < c->n_events && rc == 0; i++)
		rc = put_event(b, &c->events[i]);
	if (rc == 0 && c->samples_missing != NULL)
		rc = put_string_field(b, PK_SAMPLES_MISSING, c->samples_missing);
	return rc;
}

static int decode_event(struct cgt_pt_config *c, struct cursor *f)
{
	if (c->n_events == CGT_PT_MAX_EVENTS)
		return cursor_fail(f, "at most 8 events");
	struct cgt_pt_event *ev = &c->events[c->n_events];
	int rc = cursor_u32(f, &ev->kind, "an event kind");
	if (rc == 0 && (ev->kind < CGT_PT_EVENT_TRACE || ev->kind > CGT_PT_EVENT_MEM_STORES))
		rc = cursor_fail(f, "an event kind (1-3)");
	if (rc == 0)
		rc = cursor_u32(f, &ev->perf_type, "a perf event type");
	if (rc == 0)
		rc = cursor_varint(f, &ev->config, "an event config");
	if (rc == 0)
		rc = cursor_varint(f, &ev->config1, "an event config1");
	if (rc == 0)
		rc = cursor_varint(f, &ev->sample_type, "a sample type");
	if (rc == 0)
		rc = cursor_varint(f, &ev->period, "a sample period");
	if (rc == 0)
		rc = cursor_u32(f, &ev->n_ids, "the number of event ids");
	if (rc == 0 && ev->n_ids > CGT_PT_MAX_IDS)
		rc = cursor_fail(f, "at most 4096 event ids");
	/* An id takes a byte or more. */
	if (rc == 0 && ev->n_ids > (uint64_t)(f->end - f->p))
		rc = cursor_fail(f, "as many event ids as the rest of the field can hold");
	if (rc < 0)
		return rc;
	ev->ids = calloc(ev->n_ids ? ev->n_ids : 1, sizeof(*ev->ids));
	if (ev->ids == NULL)
		return cgt_fail(f->e, cgt_err_nomem, "out of memory");
	c->n_events++;	/* owned by c from here, for cgt_pt_config_free */
	for (uint32_t i = 0; i < ev->n_ids && rc == 0; i++)
		rc = cursor_varint(f, &ev->ids[i], "an event id");
	return rc;
}

static int decode_config_field(void *obj, unsigned key, struct cursor *f)
{
	struct cgt_pt_config *c = obj;
	uint64_t v = 0;
	int rc = 0;

	switch (key) {
	case PK_MTC_PERIOD:
		return cursor_u32(f, &c->mtc_period, "the MTC period");
	case PK_TSC_ART_RATIO:
		rc = cursor_u32(f, &c->cpuid15_eax, "the TSC/ART ratio's denominator");
		return rc < 0 ? rc : cursor_u32(f, &c->cpuid15_ebx, "the TSC/ART ratio's numerator");
	case PK_NOM_FREQ:
		return cursor_u32(f, &c->nom_freq, "the nominal frequency ratio");
	case PK_TIME_CONV:
		rc = cursor_bounded(f, &v, 63, "the time shift (0-63)");
		c->time_shift = (uint32_t)v;
		if (rc == 0)
			rc = cursor_u32(f, &c->time_mult, "the time multiplier");
		if (rc == 0)
			rc = cursor_varint(f, &c->time_zero, "the time zero");
		if (rc == 0)
			rc = cursor_u32(f, &c->cap_user_time_zero, "the time-zero flag");
		return rc;
	case PK_EVENT:
		return decode_event(c, f);
	case PK_SAMPLES_MISSING:
		return cursor_rest_string(f, &c->samples_missing);
	default:	/* a later writer's field */
		f->p = f->end;
		return 0;
	}
}

int cgt_pt_config_decode(struct cgt_pt_config *c, const struct cgt_record *rec,
			 struct cgt_error *e)
{
	struct cursor cur;

	memset(c, 0, sizeof(*c));
	cursor_init(&cur, rec, e);
	int rc = cursor_fields(&cur, c, decode_config_field);
	if (rc == 0 && (c->n_events == 0 || c->events[0].kind != CGT_PT_EVENT_TRACE))
		rc = cursor_fail(&cur, "the intel_pt event first");
	if (rc < 0)
		cgt_pt_config_free(c);
	return rc;
}

void cgt_pt_config_free(struct cgt_pt_config *c)
{
	for (uint32_t i = 0; i < c->n_events; i++)
		free(c->events[i].ids);
	free(c->samples_missing);
	memset(c, 0, sizeof(*c));
}

int cgt_sideband_encode(struct cgt_buf *b, uint32_t cpu, const void *perf_record, size_t len)
{
	int rc = put_varint(b, cpu);
	return rc < 0 ? rc : put_raw(b, perf_record, len);
}

int cgt_sideband_decode(uint32_t *cpu, const uint8_t **perf_record, size_t *len,
			const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;
	uint16_t size;

	cursor_init(&c, rec, e);
	int rc = cursor_u32(&c, cpu, "a CPU number");
	if (rc < 0)
		return rc;
	if ((size_t)(c.end - c.p) < PERF_HEADER_SIZE)
		return cursor_fail(&c, "a perf record header (8 bytes)");
	memcpy(&size, c.p + 6, sizeof(size));
	if (size < PERF_HEADER_SIZE || size != (size_t)(c.end - c.p))
		return cursor_fail(&c, "a perf record whose size is the rest of the record");
	*perf_record = c.p;
	*len = size;
	return 0;
}

int cgt_aux_encode(struct cgt_buf *b, uint32_t cpu, uint64_t offset, const void *data, size_t len)
{
	int rc = put_varint(b, cpu);
	if (rc == 0)
		rc = put_varint(b, offset);
	return rc < 0 ? rc : put_raw(b, data, len);
}

int cgt_aux_decode(uint32_t *cpu, uint64_t *offset, const uint8_t **data, size_t *len,
		   const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;

	cursor_init(&c, rec, e);
	int rc = cursor_u32(&c, cpu, "a CPU number");
	if (rc == 0)
		rc = cursor_varint(&c, offset, "an offset in the CPU's trace");
	if (rc == 0 && *offset + (uint64_t)(c.end - c.p) < *offset)
		rc = cursor_fail(&c, "an offset and length within 64 bits");
	if (rc < 0)
		return rc;
	*data = c.p;
	*len = (size_t)(c.end - c.p);
	return 0;
}

int cgt_image_encode(struct cgt_buf *b, uint64_t start, const char *name, const void *data,
		     size_t len)
{
	int rc = put_varint(b, start);
	if (rc == 0)
		rc = put_string(b, name);
	return rc < 0 ? rc : put_raw(b, data, len);
}

int cgt_image_decode(uint64_t *start, char **name, const uint8_t **data, size_t *len,
		     const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;

	*name = NULL;
	cursor_init(&c, rec, e);
	int rc = cursor_varint(&c, start, "the image's address");
	if (rc == 0)
		rc = cursor_string(&c, name, CGT_PATH_MAX, "the image's name (at most 4096 bytes)");
	if (rc == 0 && (c.p == c.end || *start + (uint64_t)(c.end - c.p) < *start))
		rc = cursor_fail(&c, "code bytes within the address space");
	if (rc < 0) {
		free(*name);
		*name = NULL;
		return rc;
	}
	*data = c.p;
	*len = (size_t)(c.end - c.p);
	return 0;
}
