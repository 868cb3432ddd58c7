/* HEADER, MODULE, UNMAP and END codecs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace.h"

static struct cgt_record record_of(const struct cgt_buf *b, unsigned type)
{
	struct cgt_record rec = { type, b->data, b->len, 0, 0, "test" };
	return rec;
}

static void header_round_trip(void)
{
	char *argv[] = { "prog", "--flag", "", "arg with spaces", NULL };
	struct cgt_trace_header h = { 0 }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	h.backend = "valgrind";
	h.argc = 4;
	h.argv = argv;
	h.cwd = "/home/u";
	h.pid = 4242;
	h.cpu_vendor = "GenuineIntel";
	h.cpu_name = "Some CPU";
	h.cpu_family = 6;
	h.cpu_model = 85;
	h.cpu_stepping = 7;
	h.n_caches = 2;
	h.caches[0] = (struct cgt_cache_geom){ 1, CGT_CACHE_DATA, 49152, 12, 64 };
	h.caches[1] = (struct cgt_cache_geom){ 3, CGT_CACHE_UNIFIED, 33554432, 16, 64 };
	h.page_size = 4096;
	h.start_time_ns = 1700000000123456789ull;
	h.recorder = "valgrind-3.19.0";
	h.max_access_size = 32;
	CHECK(cgt_header_encode(&b, &h) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_HEADER);
	CHECK(cgt_header_decode(&d, &rec, &e) == 0);
	CHECK(strcmp(d.backend, "valgrind") == 0);
	CHECK_EQ(d.argc, 4);
	CHECK(strcmp(d.argv[3], "arg with spaces") == 0 && d.argv[2][0] == '\0');
	CHECK(strcmp(d.cwd, "/home/u") == 0);
	CHECK_EQ(d.pid, 4242);
	CHECK(strcmp(d.cpu_vendor, "GenuineIntel") == 0);
	CHECK_EQ(d.cpu_model, 85);
	CHECK_EQ(d.n_caches, 2);
	CHECK_EQ(d.caches[1].size, 33554432);
	CHECK_EQ(d.caches[0].assoc, 12);
	CHECK_EQ(d.start_time_ns, 1700000000123456789ull);
	CHECK(strcmp(d.recorder, "valgrind-3.19.0") == 0);
	CHECK_EQ(d.max_access_size, 32);
	cgt_header_free(&d);

	/* Every truncation of it fails cleanly. */
	for (size_t cut = 0; cut < b.len; cut++) {
		struct cgt_record r = { CGT_REC_HEADER, b.data, cut, 0, 0, "test" };
		if (cgt_header_decode(&d, &r, &e) == 0)
			cgt_header_free(&d);
	}
	cgt_buf_free(&b);
}

static void unknown_header_fields_are_skipped(void)
{
	char *argv[] = { "p", NULL };
	struct cgt_trace_header h = { .backend = "valgrind", .argc = 1, .argv = argv }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	CHECK(cgt_header_encode(&b, &h) == 0);
	uint8_t *p = cgt_buf_reserve(&b, 4);
	memcpy(p, "\x63\x02zz", 4);	/* key 99, 2 bytes */
	b.len += 4;
	struct cgt_record rec = record_of(&b, CGT_REC_HEADER);
	CHECK(cgt_header_decode(&d, &rec, &e) == 0);
	cgt_header_free(&d);
	cgt_buf_free(&b);
}

static void module_round_trip(void)
{
	struct cgt_module m = { 0x400000, 0x1000, 0x2000, 5, "/usr/bin/x", { 1, 2, 3 }, 3, 12345, -7 };
	struct cgt_module d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	CHECK(cgt_module_encode(&b, &m) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_MODULE);
	CHECK(cgt_module_decode(&d, &rec, &e) == 0);
	CHECK_EQ(d.start, 0x400000);
	CHECK_EQ(d.file_offset, 0x2000);
	CHECK(strcmp(d.path, "/usr/bin/x") == 0);
	CHECK_EQ(d.build_id_len, 3);
	CHECK_EQ(d.build_id[2], 3);
	CHECK(d.mtime_ns == -7);
	cgt_module_free(&d);
	for (size_t cut = 0; cut < b.len; cut++) {
		struct cgt_record r = { CGT_REC_MODULE, b.data, cut, 0, 0, "test" };
		CHECK(cgt_module_decode(&d, &r, &e) < 0);
	}
	cgt_buf_free(&b);
}

static void end_round_trip(void)
{
	struct cgt_trace_end end = { CGT_END_SIGNAL, 11, { 1, 2, 3, 4, 5, 6, 7, 8, 9 } }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	CHECK(cgt_end_encode(&b, &end) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_END);
	CHECK(cgt_end_decode(&d, &rec, &e) == 0);
	CHECK(memcmp(&d, &end, sizeof(d)) == 0);
	b.data[0] = 9;	/* no such end kind */
	CHECK(cgt_end_decode(&d, &rec, &e) < 0);
	cgt_buf_free(&b);
}

static void module_identity_of_a_real_file(void)
{
	struct cgt_module m = { 0 };
	const char *why;
	m.path = "/bin/sh";
	cgt_module_identify(&m);
	CHECK(m.file_size > 0);
	CHECK(m.build_id_len == 20);
	CHECK(cgt_module_matches_file(&m, &why) == 1);
	m.build_id[0] ^= 1;
	CHECK(cgt_module_matches_file(&m, &why) == 0);
	CHECK(strstr(why, "build-id") != NULL);
	m.path = "/no/such/file";
	CHECK(cgt_module_matches_file(&m, &why) == 0);
}

int main(void)
{
	PLAN(5);
	RUN(header_round_trip);
	RUN(unknown_header_fields_are_skipped);
	RUN(module_round_trip);
	RUN(end_round_trip);
	RUN(module_identity_of_a_real_file);
	return CHECK_DONE();
}
