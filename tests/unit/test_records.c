/* HEADER, MODULE, UNMAP and END codecs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace.h"

static struct cgt_record record_of(const struct cgt_buf *b, unsigned type)
{
	struct cgt_record rec = { type, b->data, b->len, 0, 0, "test", 0 };
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
		struct cgt_record r = { CGT_REC_HEADER, b.data, cut, 0, 0, "test", 0 };
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
		struct cgt_record r = { CGT_REC_MODULE, b.data, cut, 0, 0, "test", 0 };
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

/* A string of n bytes of 'a'. */
static char *string_of(size_t n)
{
	char *s = malloc(n + 1);
	memset(s, 'a', n);
	s[n] = '\0';
	return s;
}

/* Paths of at most 4096 bytes (PATH_MAX), arguments of at most 128 KiB
   (MAX_ARG_STRLEN): what the producers can write. */
static void strings_are_at_most_what_producers_write(void)
{
	struct cgt_module m = { 0x400000, 0x1000, 0, 5, NULL, { 0 }, 0, 0, 0 }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	for (size_t n = 4096; n <= 4097; n++) {
		m.path = string_of(n);
		b.len = 0;
		CHECK(cgt_module_encode(&b, &m) == 0);
		struct cgt_record rec = record_of(&b, CGT_REC_MODULE);
		int rc = cgt_module_decode(&d, &rec, &e);
		CHECK(n == 4096 ? rc == 0 : rc < 0);
		if (rc == 0)
			cgt_module_free(&d);
		else
			CHECK(strstr(e.msg, "MODULE record: expected a module path of at most 4096 "
					    "bytes") != NULL);
		free(m.path);
	}

	for (size_t n = 4096; n <= 4097; n++) {
		char *name = string_of(n), *got;
		const uint8_t *code;
		size_t len;
		uint64_t start;
		b.len = 0;
		CHECK(cgt_image_encode(&b, 0x7fff0000, name, "\xc3", 1) == 0);
		struct cgt_record rec = record_of(&b, CGT_REC_IMAGE);
		int rc = cgt_image_decode(&start, &got, &code, &len, &rec, &e);
		CHECK(n == 4096 ? rc == 0 : rc < 0);
		if (rc < 0)
			CHECK(strstr(e.msg, "expected the image's name (at most 4096 bytes)") != NULL);
		free(got);
		free(name);
	}

	for (size_t n = 128 * 1024; n <= 128 * 1024 + 1; n++) {
		char *argv[] = { string_of(n), NULL };
		struct cgt_trace_header h = { 0 }, got;
		h.backend = "valgrind";
		h.argc = 1;
		h.argv = argv;
		b.len = 0;
		CHECK(cgt_header_encode(&b, &h) == 0);
		struct cgt_record rec = record_of(&b, CGT_REC_HEADER);
		int rc = cgt_header_decode(&got, &rec, &e);
		CHECK(n == 128 * 1024 ? rc == 0 : rc < 0);
		if (rc == 0)
			cgt_header_free(&got);
		else
			CHECK(strstr(e.msg, "expected a command-line argument (at most 128 KiB)") != NULL);
		free(argv[0]);
	}
	cgt_buf_free(&b);
}

/* A PT_CONFIG event claiming more ids than its field holds is refused
   before they are allocated. */
static void pt_event_ids_beyond_the_field_are_refused(void)
{
	struct cgt_pt_config c;
	struct cgt_error e;
	/* field 5 (event), 8 bytes: kind 1, type 9, config, config1,
	   sample_type, period 0, then 4096 ids (80 20) and none of them */
	uint8_t claim[] = { 5, 8, 1, 9, 0, 0, 0, 0, 0x80, 0x20 };
	struct cgt_record rec = { CGT_REC_PT_CONFIG, claim, sizeof(claim), 0, 0, "t.zst", 0 };

	CHECK(cgt_pt_config_decode(&c, &rec, &e) < 0);
	CHECK(strstr(e.msg, "PT_CONFIG record: expected as many event ids as the rest of the "
			    "field can hold") != NULL);
}

int main(void)
{
	PLAN(7);
	RUN(header_round_trip);
	RUN(unknown_header_fields_are_skipped);
	RUN(module_round_trip);
	RUN(end_round_trip);
	RUN(module_identity_of_a_real_file);
	RUN(strings_are_at_most_what_producers_write);
	RUN(pt_event_ids_beyond_the_field_are_refused);
	return CHECK_DONE();
}
