/* The pt backend's records: PT_CONFIG, SIDEBAND, AUX, IMAGE. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace.h"

static struct cgt_record record_of(const struct cgt_buf *b, unsigned type)
{
	struct cgt_record rec = { type, b->data, b->len, 0, 0, "test" };
	return rec;
}

static void config_round_trip(void)
{
	uint64_t pt_ids[2] = { 17, 18 }, load_ids[2] = { 19, 20 };
	struct cgt_pt_config c = { 0 }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	c.mtc_period = 3;
	c.cpuid15_eax = 2;
	c.cpuid15_ebx = 188;
	c.nom_freq = 24;
	c.time_shift = 31;
	c.time_mult = 1234567;
	c.time_zero = 0xfffffffffff00000ull;
	c.cap_user_time_zero = 1;
	c.n_events = 2;
	c.events[0] = (struct cgt_pt_event){ CGT_PT_EVENT_TRACE, 9, 1u << 10, 0, 0x10086, 1, 2, pt_ids };
	c.events[1] = (struct cgt_pt_event){ CGT_PT_EVENT_MEM_LOADS, 4, 0x1cd, 3, 0x1c1a7, 1000, 2,
					     load_ids };
	CHECK(cgt_pt_config_encode(&b, &c) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_PT_CONFIG);
	CHECK(cgt_pt_config_decode(&d, &rec, &e) == 0);
	CHECK_EQ(d.mtc_period, 3);
	CHECK_EQ(d.cpuid15_ebx, 188);
	CHECK_EQ(d.nom_freq, 24);
	CHECK_EQ(d.time_zero, c.time_zero);
	CHECK_EQ(d.n_events, 2);
	CHECK_EQ(d.events[1].kind, CGT_PT_EVENT_MEM_LOADS);
	CHECK_EQ(d.events[1].config1, 3);
	CHECK_EQ(d.events[1].period, 1000);
	CHECK_EQ(d.events[1].ids[1], 20);
	CHECK(d.samples_missing == NULL);
	cgt_pt_config_free(&d);

	c.n_events = 1;
	c.samples_missing = "no mem-loads event on this CPU";
	b.len = 0;
	CHECK(cgt_pt_config_encode(&b, &c) == 0);
	rec = record_of(&b, CGT_REC_PT_CONFIG);
	CHECK(cgt_pt_config_decode(&d, &rec, &e) == 0);
	CHECK(d.samples_missing && strcmp(d.samples_missing, c.samples_missing) == 0);
	cgt_pt_config_free(&d);
	cgt_buf_free(&b);
}

static void config_needs_the_trace_event(void)
{
	struct cgt_pt_config c = { 0 }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	c.n_events = 1;
	c.events[0] = (struct cgt_pt_event){ CGT_PT_EVENT_MEM_STORES, 4, 0, 0, 0, 1, 0, NULL };
	CHECK(cgt_pt_config_encode(&b, &c) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_PT_CONFIG);
	CHECK(cgt_pt_config_decode(&d, &rec, &e) < 0);
	CHECK(strstr(e.msg, "the intel_pt event first") != NULL);
	/* A truncated field: a message, no crash, nothing leaked. */
	b.len -= 1;
	rec = record_of(&b, CGT_REC_PT_CONFIG);
	CHECK(cgt_pt_config_decode(&d, &rec, &e) < 0);
	cgt_buf_free(&b);
}

static void sideband_round_trip_and_size_check(void)
{
	/* A PERF_RECORD_EXIT-sized record: type 4, size 8 + 24. */
	uint8_t perf[32] = { 4, 0, 0, 0, 0, 0, 32, 0 };
	struct cgt_buf b = { 0 };
	struct cgt_error e;
	const uint8_t *got;
	size_t len;
	uint32_t cpu;

	CHECK(cgt_sideband_encode(&b, 3, perf, sizeof(perf)) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_SIDEBAND);
	CHECK(cgt_sideband_decode(&cpu, &got, &len, &rec, &e) == 0);
	CHECK_EQ(cpu, 3);
	CHECK_EQ(len, 32);
	CHECK(memcmp(got, perf, 32) == 0);
	rec.len -= 1;	/* the header's size no longer matches */
	CHECK(cgt_sideband_decode(&cpu, &got, &len, &rec, &e) < 0);
	CHECK(strstr(e.msg, "a perf record whose size is the rest of the record") != NULL);
	cgt_buf_free(&b);
}

static void aux_and_image_round_trip(void)
{
	uint8_t bytes[5] = { 0x02, 0x82, 0x02, 0x82, 0x99 };
	struct cgt_buf b = { 0 };
	struct cgt_error e;
	const uint8_t *got;
	size_t len;
	uint32_t cpu;
	uint64_t offset, start;
	char *name;

	CHECK(cgt_aux_encode(&b, 1, 1u << 20, bytes, sizeof(bytes)) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_AUX);
	CHECK(cgt_aux_decode(&cpu, &offset, &got, &len, &rec, &e) == 0);
	CHECK_EQ(cpu, 1);
	CHECK_EQ(offset, 1u << 20);
	CHECK_EQ(len, 5);
	CHECK(memcmp(got, bytes, 5) == 0);

	b.len = 0;
	CHECK(cgt_image_encode(&b, 0x7fff0000, "[vdso]", bytes, sizeof(bytes)) == 0);
	rec = record_of(&b, CGT_REC_IMAGE);
	CHECK(cgt_image_decode(&start, &name, &got, &len, &rec, &e) == 0);
	CHECK_EQ(start, 0x7fff0000);
	CHECK(strcmp(name, "[vdso]") == 0);
	CHECK_EQ(len, 5);
	free(name);
	/* An image without bytes is refused. */
	b.len = 0;
	CHECK(cgt_image_encode(&b, 0x1000, "empty", bytes, 0) == 0);
	rec = record_of(&b, CGT_REC_IMAGE);
	CHECK(cgt_image_decode(&start, &name, &got, &len, &rec, &e) < 0);
	CHECK(name == NULL);
	cgt_buf_free(&b);
}

int main(void)
{
	PLAN(4);
	RUN(config_round_trip);
	RUN(config_needs_the_trace_event);
	RUN(sideband_round_trip_and_size_check);
	RUN(aux_and_image_round_trip);
	return CHECK_DONE();
}
