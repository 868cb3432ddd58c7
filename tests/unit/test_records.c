/* HEADER, MODULE, UNMAP and END codecs. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "trace.h"

static struct cgt_record record_of(const struct cgt_buf *b, unsigned type)
{
	struct cgt_record rec = { type, b->data, b->len, 0, 0, "test", 0 };
	return rec;
}

/* The keys of the fields that end at or before byte cut of an encoded
   HEADER: 1 at seen[key] for each (a count for the cache key, 8), walking
   the `varint:key varint:length body` layout of TRACE-FORMAT.md §4.
   Returns 1 if cut is a field boundary, 0 if it falls inside a field. */
static int header_fields_before(const uint8_t *p, size_t len, size_t cut, unsigned seen[16])
{
	size_t at = 0;

	memset(seen, 0, 16 * sizeof(seen[0]));
	while (at < cut) {
		uint64_t key = 0, flen = 0;
		unsigned shift = 0;
		do
			key |= (uint64_t)(p[at] & 0x7f) << shift, shift += 7;
		while (p[at++] & 0x80);
		shift = 0;
		do
			flen |= (uint64_t)(p[at] & 0x7f) << shift, shift += 7;
		while (p[at++] & 0x80);
		at += flen;
		if (at > len)
			return -1;	/* not this test's encoding */
		if (at > cut)
			return 0;
		if (key < 16)
			seen[key]++;
	}
	return 1;
}

/* d holds h's fields of the keys in seen, and defaults (empty strings,
   zeros) for the others. */
static void check_header_fields(const struct cgt_trace_header *d, const struct cgt_trace_header *h,
				const unsigned seen[16])
{
	CHECK(strcmp(d->backend, seen[1] ? h->backend : "") == 0);
	CHECK_EQ(d->argc, seen[2] ? h->argc : 0);
	for (uint32_t i = 0; seen[2] && i < h->argc && i < d->argc; i++)
		CHECK(strcmp(d->argv[i], h->argv[i]) == 0);
	CHECK(strcmp(d->cwd, seen[3] ? h->cwd : "") == 0);
	CHECK_EQ(d->pid, seen[4] ? h->pid : 0);
	CHECK(strcmp(d->cpu_vendor, seen[5] ? h->cpu_vendor : "") == 0);
	CHECK(strcmp(d->cpu_name, seen[6] ? h->cpu_name : "") == 0);
	CHECK_EQ(d->cpu_family, seen[7] ? h->cpu_family : 0);
	CHECK_EQ(d->cpu_model, seen[7] ? h->cpu_model : 0);
	CHECK_EQ(d->cpu_stepping, seen[7] ? h->cpu_stepping : 0);
	CHECK_EQ(d->n_caches, seen[8]);
	for (uint32_t i = 0; i < seen[8] && i < d->n_caches; i++) {
		CHECK_EQ(d->caches[i].level, h->caches[i].level);
		CHECK_EQ(d->caches[i].type, h->caches[i].type);
		CHECK_EQ(d->caches[i].size, h->caches[i].size);
		CHECK_EQ(d->caches[i].assoc, h->caches[i].assoc);
		CHECK_EQ(d->caches[i].line, h->caches[i].line);
	}
	CHECK_EQ(d->page_size, seen[9] ? h->page_size : 0);
	CHECK_EQ(d->start_time_ns, seen[10] ? h->start_time_ns : 0);
	CHECK(strcmp(d->recorder, seen[11] ? h->recorder : "") == 0);
	CHECK_EQ(d->max_access_size, seen[12] ? h->max_access_size : 0);
	CHECK_EQ(d->decoded.present, seen[13] ? 1 : 0);
	if (seen[13])
		CHECK(memcmp(&d->decoded, &h->decoded, sizeof(d->decoded)) == 0);
}

static void header_round_trip(void)
{
	char *argv[] = { "prog", "--flag", "", "arg with spaces", NULL };
	struct cgt_trace_header h = { 0 }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;
	unsigned seen[16];

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
	h.caches[1] = (struct cgt_cache_geom){ 3, CGT_CACHE_UNIFIED, 33554432, 16, 128 };
	h.page_size = 4096;
	h.start_time_ns = 1700000000123456789ull;
	h.recorder = "valgrind-3.19.0";
	h.max_access_size = 32;
	CHECK(cgt_header_encode(&b, &h) == 0);
	struct cgt_record rec = record_of(&b, CGT_REC_HEADER);
	CHECK(cgt_header_decode(&d, &rec, &e) == 0);
	CHECK(strcmp(d.backend, "valgrind") == 0);
	CHECK_EQ(d.argc, 4);
	CHECK(d.argc == 4 && strcmp(d.argv[0], "prog") == 0 && strcmp(d.argv[1], "--flag") == 0 &&
	      d.argv[2][0] == '\0' && strcmp(d.argv[3], "arg with spaces") == 0);
	CHECK(strcmp(d.cwd, "/home/u") == 0);
	CHECK_EQ(d.pid, 4242);
	CHECK(strcmp(d.cpu_vendor, "GenuineIntel") == 0);
	CHECK(strcmp(d.cpu_name, "Some CPU") == 0);
	CHECK_EQ(d.cpu_family, 6);
	CHECK_EQ(d.cpu_model, 85);
	CHECK_EQ(d.cpu_stepping, 7);
	CHECK_EQ(d.n_caches, 2);
	CHECK(memcmp(d.caches, h.caches, 2 * sizeof(h.caches[0])) == 0);
	CHECK_EQ(d.page_size, 4096);
	CHECK_EQ(d.start_time_ns, 1700000000123456789ull);
	CHECK(strcmp(d.recorder, "valgrind-3.19.0") == 0);
	CHECK_EQ(d.max_access_size, 32);
	CHECK_EQ(d.decoded.present, 0);
	CHECK_EQ(header_fields_before(b.data, b.len, b.len, seen), 1);
	check_header_fields(&d, &h, seen);
	cgt_header_free(&d);

	/* Every truncation of it either fails, or -- cut at a field boundary
	   after the two required fields (backend, argv) -- decodes the fields
	   before the cut as they were and leaves the others empty.  A cut
	   inside a field fails. */
	int boundaries = 0;
	for (size_t cut = 0; cut < b.len; cut++) {
		struct cgt_record r = { CGT_REC_HEADER, b.data, cut, 0, 0, "test", 0 };
		int at_boundary = header_fields_before(b.data, b.len, cut, seen);
		int rc = cgt_header_decode(&d, &r, &e);
		CHECK(at_boundary >= 0);
		if (at_boundary == 1 && seen[1] && seen[2]) {
			boundaries++;
			CHECK_EQ(rc, 0);
			if (rc == 0)
				check_header_fields(&d, &h, seen);
		} else {
			if (rc == 0)
				printf("  cut at %zu of %zu bytes, inside a field, decoded\n", cut, b.len);
			CHECK(rc < 0);
		}
		if (rc == 0)
			cgt_header_free(&d);
	}
	/* before each of the 11 fields after backend and argv (cwd, pid,
	   vendor, name, signature, 2 caches, page size, start time, recorder,
	   max access), the last not being a cut */
	CHECK_EQ(boundaries, 11);
	struct cgt_record r = { CGT_REC_HEADER, b.data, 0, 0, 0, "test", 0 };
	CHECK(cgt_header_decode(&d, &r, &e) < 0);
	CHECK(strstr(e.msg, "expected the backend and the command line") != NULL);
	r.len = b.len - 1;
	CHECK(cgt_header_decode(&d, &r, &e) < 0);
	cgt_buf_free(&b);
}

static void unknown_header_fields_are_skipped(void)
{
	char *argv[] = { "p", NULL };
	struct cgt_trace_header h = { .backend = "valgrind", .argc = 1, .argv = argv }, d;
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	CHECK(cgt_header_encode(&b, &h) == 0);
	/* key 99 of 2 bytes, then a known field after it: pid (key 4) 1234 */
	uint8_t *p = cgt_buf_reserve(&b, 8);
	memcpy(p, "\x63\x02zz\x04\x02\xd2\x09", 8);
	b.len += 8;
	struct cgt_record rec = record_of(&b, CGT_REC_HEADER);
	CHECK(cgt_header_decode(&d, &rec, &e) == 0);
	CHECK(d.backend != NULL && strcmp(d.backend, "valgrind") == 0);
	CHECK_EQ(d.argc, 1);
	CHECK(d.argc == 1 && strcmp(d.argv[0], "p") == 0);
	CHECK_EQ(d.pid, 1234);
	/* the unknown field's bytes went nowhere */
	CHECK(d.cwd != NULL && d.cwd[0] == '\0');
	CHECK(d.cpu_vendor != NULL && d.cpu_vendor[0] == '\0');
	CHECK(d.cpu_name != NULL && d.cpu_name[0] == '\0');
	CHECK(d.recorder != NULL && d.recorder[0] == '\0');
	CHECK_EQ(d.n_caches, 0);
	CHECK_EQ(d.decoded.present, 0);
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
	CHECK_EQ(d.size, 0x1000);
	CHECK_EQ(d.file_offset, 0x2000);
	CHECK_EQ(d.prot, 5);
	CHECK(d.path != NULL && strcmp(d.path, "/usr/bin/x") == 0);
	CHECK_EQ(d.build_id_len, 3);
	CHECK(memcmp(d.build_id, m.build_id, sizeof(m.build_id)) == 0);
	CHECK_EQ(d.file_size, 12345);
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
	struct stat st;
	const char *why;
	m.path = "/bin/sh";
	CHECK(stat(m.path, &st) == 0);
	cgt_module_identify(&m);
	CHECK_EQ(m.file_size, st.st_size);
	CHECK(m.mtime_ns == (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	CHECK(m.build_id_len == 20);
	CHECK(cgt_module_matches_file(&m, &why) == 1);
	m.build_id[0] ^= 1;
	CHECK(cgt_module_matches_file(&m, &why) == 0);
	CHECK(strstr(why, "build-id") != NULL);
	m.path = "/no/such/file";
	CHECK(cgt_module_matches_file(&m, &why) == 0);

	/* a file of known size and modification time (with nanoseconds) */
	char path[] = "/tmp/cgtrace-unit-module-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	static const char bytes[1234];
	CHECK(write(fd, bytes, sizeof(bytes)) == (ssize_t)sizeof(bytes));
	struct timespec times[2] = { { 1000000000, 123456789 }, { 1000000000, 123456789 } };
	CHECK(futimens(fd, times) == 0);
	close(fd);
	memset(&m, 0, sizeof(m));
	m.path = path;
	cgt_module_identify(&m);
	CHECK_EQ(m.file_size, 1234);
	CHECK(m.mtime_ns == 1000000000123456789ll);
	CHECK_EQ(m.build_id_len, 0);
	unlink(path);
}

/* Each codec against bytes written by hand from formats/TRACE-FORMAT.md
   (not by the encoder): decoded field by field, and the encoder, given the
   same values, writes exactly these bytes.  Fields in key order. */
static const uint8_t header_bytes[] = {
	0x01, 0x02, 'p', 't',				/* backend "pt" */
	0x02, 0x05, 0x02, 0x02, 'a', 'b', 0x00,		/* argv: 2, "ab", "" */
	0x03, 0x01, '/',				/* cwd "/" */
	0x04, 0x02, 0xac, 0x02,				/* pid 300 */
	0x05, 0x03, 'A', 'M', 'D',			/* cpu_vendor */
	0x06, 0x01, 'X',				/* cpu_name */
	0x07, 0x03, 0x19, 0x21, 0x02,			/* family 25, model 33, stepping 2 */
	0x08, 0x07, 0x01, 0x01, 0x80, 0x80, 0x02, 0x08, 0x40, /* L1 data 32 KiB 8-way 64 B */
	0x08, 0x07, 0x02, 0x03, 0x80, 0x80, 0x20, 0x10, 0x40, /* L2 unified 512 KiB 16-way */
	0x09, 0x02, 0x80, 0x20,				/* page_size 4096 */
	0x0a, 0x01, 0x01,				/* start_time 1 ns */
	0x0b, 0x01, 'v',				/* recorder "v" */
	0x0c, 0x01, 0x20,				/* max_access_size 32 */
	0x0d, 0x0e, 0x01, 0x02, 0x05, 0x04, 0x05, 0x06, 0x07, /* pt_decoded (14 bytes): 1, */
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0xc8, 0x01,	/* size 2, mtime -3, 4..12, 200 */
};

static void header_from_the_spec(void)
{
	struct cgt_trace_header d, h = { 0 };
	struct cgt_record rec = { CGT_REC_HEADER, header_bytes, sizeof(header_bytes), 0, 0, "test", 0 };
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	CHECK(cgt_header_decode(&d, &rec, &e) == 0);
	CHECK(d.backend != NULL && strcmp(d.backend, "pt") == 0);
	CHECK_EQ(d.argc, 2);
	CHECK(d.argc == 2 && strcmp(d.argv[0], "ab") == 0 && strcmp(d.argv[1], "") == 0);
	CHECK(d.cwd != NULL && strcmp(d.cwd, "/") == 0);
	CHECK_EQ(d.pid, 300);
	CHECK(d.cpu_vendor != NULL && strcmp(d.cpu_vendor, "AMD") == 0);
	CHECK(d.cpu_name != NULL && strcmp(d.cpu_name, "X") == 0);
	CHECK_EQ(d.cpu_family, 25);
	CHECK_EQ(d.cpu_model, 33);
	CHECK_EQ(d.cpu_stepping, 2);
	CHECK_EQ(d.n_caches, 2);
	CHECK_EQ(d.caches[0].level, 1);
	CHECK_EQ(d.caches[0].type, CGT_CACHE_DATA);
	CHECK_EQ(d.caches[0].size, 32768);
	CHECK_EQ(d.caches[0].assoc, 8);
	CHECK_EQ(d.caches[0].line, 64);
	CHECK_EQ(d.caches[1].level, 2);
	CHECK_EQ(d.caches[1].type, CGT_CACHE_UNIFIED);
	CHECK_EQ(d.caches[1].size, 524288);
	CHECK_EQ(d.caches[1].assoc, 16);
	CHECK_EQ(d.caches[1].line, 64);
	CHECK_EQ(d.page_size, 4096);
	CHECK_EQ(d.start_time_ns, 1);
	CHECK(d.recorder != NULL && strcmp(d.recorder, "v") == 0);
	CHECK_EQ(d.max_access_size, 32);
	CHECK_EQ(d.decoded.present, 1);
	CHECK_EQ(d.decoded.decoder_version, 1);
	CHECK_EQ(d.decoded.source_size, 2);
	CHECK(d.decoded.source_mtime_ns == -3);
	CHECK_EQ(d.decoded.insns, 4);
	CHECK_EQ(d.decoded.errors, 5);
	CHECK_EQ(d.decoded.bytes_skipped, 6);
	CHECK_EQ(d.decoded.overflows, 7);
	CHECK_EQ(d.decoded.breaks, 8);
	CHECK_EQ(d.decoded.modules_left_out, 9);
	CHECK_EQ(d.decoded.sideband_lost, 10);
	CHECK_EQ(d.decoded.mem_period, 11);
	CHECK_EQ(d.decoded.samples, 12);
	CHECK_EQ(d.decoded.samples_placed, 200);
	cgt_header_free(&d);

	char *argv[] = { "ab", "", NULL };
	h.backend = "pt";
	h.argc = 2;
	h.argv = argv;
	h.cwd = "/";
	h.pid = 300;
	h.cpu_vendor = "AMD";
	h.cpu_name = "X";
	h.cpu_family = 25;
	h.cpu_model = 33;
	h.cpu_stepping = 2;
	h.n_caches = 2;
	h.caches[0] = (struct cgt_cache_geom){ 1, CGT_CACHE_DATA, 32768, 8, 64 };
	h.caches[1] = (struct cgt_cache_geom){ 2, CGT_CACHE_UNIFIED, 524288, 16, 64 };
	h.page_size = 4096;
	h.start_time_ns = 1;
	h.recorder = "v";
	h.max_access_size = 32;
	h.decoded = (struct cgt_pt_decoded){ 1, 1, 2, -3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 200 };
	CHECK(cgt_header_encode(&b, &h) == 0);
	CHECK_EQ(b.len, sizeof(header_bytes));
	CHECK(b.len == sizeof(header_bytes) && memcmp(b.data, header_bytes, b.len) == 0);
	cgt_buf_free(&b);
}

static void module_from_the_spec(void)
{
	static const uint8_t bytes[] = {
		0x80, 0x80, 0x80, 0x02,	/* start 0x400000 */
		0x80, 0x20,		/* size 0x1000 */
		0x81, 0x01,		/* file_offset 129 */
		0x05,			/* prot r-x */
		0x02, '/', 'x',		/* path "/x" */
		0x02, 0xab, 0xcd,	/* build_id ab cd */
		0x64,			/* file_size 100 */
		0x81, 0x01,		/* mtime_ns -65 (zigzag 129) */
	};
	struct cgt_module d, m = { 0x400000, 0x1000, 129, 5, "/x", { 0xab, 0xcd }, 2, 100, -65 };
	struct cgt_record rec = { CGT_REC_MODULE, bytes, sizeof(bytes), 0, 0, "test", 0 };
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	CHECK(cgt_module_decode(&d, &rec, &e) == 0);
	CHECK_EQ(d.start, 0x400000);
	CHECK_EQ(d.size, 0x1000);
	CHECK_EQ(d.file_offset, 129);
	CHECK_EQ(d.prot, 5);
	CHECK(d.path != NULL && strcmp(d.path, "/x") == 0);
	CHECK_EQ(d.build_id_len, 2);
	CHECK_EQ(d.build_id[0], 0xab);
	CHECK_EQ(d.build_id[1], 0xcd);
	CHECK_EQ(d.file_size, 100);
	CHECK(d.mtime_ns == -65);
	cgt_module_free(&d);
	CHECK(cgt_module_encode(&b, &m) == 0);
	CHECK_EQ(b.len, sizeof(bytes));
	CHECK(b.len == sizeof(bytes) && memcmp(b.data, bytes, b.len) == 0);
	cgt_buf_free(&b);
}

static void unmap_from_the_spec(void)
{
	static const uint8_t bytes[] = {
		0x80, 0xfe, 0x01,	/* start 0x7f00 */
		0x80, 0x01,		/* size 128 */
	};
	struct cgt_record rec = { CGT_REC_UNMAP, bytes, sizeof(bytes), 0, 0, "test", 0 };
	struct cgt_buf b = { 0 };
	struct cgt_error e;
	uint64_t start = 0, size = 0;

	CHECK(cgt_unmap_decode(&start, &size, &rec, &e) == 0);
	CHECK_EQ(start, 0x7f00);
	CHECK_EQ(size, 128);
	CHECK(cgt_unmap_encode(&b, 0x7f00, 128) == 0);
	CHECK_EQ(b.len, sizeof(bytes));
	CHECK(b.len == sizeof(bytes) && memcmp(b.data, bytes, b.len) == 0);
	cgt_buf_free(&b);
}

static void end_from_the_spec(void)
{
	static const uint8_t bytes[] = {
		0x02,			/* kind 2: killed by a signal */
		0x15,			/* code -11 (zigzag 21) */
		0xe8, 0x07,		/* insns 1000 */
		0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* reads ... blocks */
		0x09,			/* threads */
	};
	struct cgt_trace_end d, end = { CGT_END_SIGNAL, -11, { 1000, 2, 3, 4, 5, 6, 7, 8, 9 } };
	struct cgt_record rec = { CGT_REC_END, bytes, sizeof(bytes), 0, 0, "test", 0 };
	struct cgt_buf b = { 0 };
	struct cgt_error e;

	CHECK(cgt_end_decode(&d, &rec, &e) == 0);
	CHECK_EQ(d.kind, CGT_END_SIGNAL);
	CHECK(d.code == -11);
	CHECK_EQ(d.counts.insns, 1000);
	CHECK_EQ(d.counts.reads, 2);
	CHECK_EQ(d.counts.writes, 3);
	CHECK_EQ(d.counts.modifies, 4);
	CHECK_EQ(d.counts.conds, 5);
	CHECK_EQ(d.counts.indirects, 6);
	CHECK_EQ(d.counts.block_execs, 7);
	CHECK_EQ(d.counts.blocks, 8);
	CHECK_EQ(d.counts.threads, 9);
	CHECK(cgt_end_encode(&b, &end) == 0);
	CHECK_EQ(b.len, sizeof(bytes));
	CHECK(b.len == sizeof(bytes) && memcmp(b.data, bytes, b.len) == 0);
	cgt_buf_free(&b);
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
	PLAN(11);
	RUN(header_round_trip);
	RUN(unknown_header_fields_are_skipped);
	RUN(module_round_trip);
	RUN(end_round_trip);
	RUN(module_identity_of_a_real_file);
	RUN(strings_are_at_most_what_producers_write);
	RUN(pt_event_ids_beyond_the_field_are_refused);
	RUN(header_from_the_spec);
	RUN(module_from_the_spec);
	RUN(unmap_from_the_spec);
	RUN(end_from_the_spec);
	return CHECK_DONE();
}
