/* Reading pt traces (decode/pt/pt_input.c) built record by record: how
   AUX pieces join (gaps, overlaps, pieces out of order, zero-size ones,
   truncation breaks from sideband), the packets read back in bounded
   pieces, and the limits on what a hostile file may claim. */
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pt/pt_code.h"
#include "pt/pt_flow.h"
#include "pt/pt_input.h"
#include "trace.h"

static char path[] = "/tmp/test_pt_input.XXXXXX";
static struct cgt_writer *w;
static struct cgt_buf b;
static uint64_t trace_ids[1] = { 77 };

static void put(unsigned type)
{
	struct cgt_error e;
	if (cgt_writer_put(w, type, b.data, b.len, &e) < 0)
		printf("  put: %s\n", e.msg);
	b.len = 0;
}

/* A new trace: HEADER and PT_CONFIG (one intel_pt event, id 77, sample_id
   = IDENTIFIER only). */
static void begin(void)
{
	struct cgt_error e;
	char *argv[] = { "prog", NULL };
	struct cgt_trace_header h = { .backend = "pt", .argc = 1, .argv = argv, .cwd = "/", .pid = 1,
				      .cpu_vendor = "GenuineIntel", .cpu_name = "", .recorder = "test" };
	struct cgt_pt_config c = { 0 };
	int fd;

	strcpy(path, "/tmp/test_pt_input.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || cgt_writer_open(&w, fd, path, &e) < 0)
		printf("  cannot write %s\n", path);
	cgt_header_encode(&b, &h);
	put(CGT_REC_HEADER);
	c.n_events = 1;
	c.events[0] = (struct cgt_pt_event){ CGT_PT_EVENT_TRACE, 8, 0, 0, PERF_SAMPLE_IDENTIFIER, 1, 1, trace_ids };
	cgt_pt_config_encode(&b, &c);
	put(CGT_REC_PT_CONFIG);
}

static void aux(uint32_t cpu, uint64_t offset, const char *bytes)
{
	cgt_aux_encode(&b, cpu, offset, bytes, strlen(bytes));
	put(CGT_REC_AUX);
}

/* PERF_RECORD_AUX: [offset, offset + size) written, flags. */
static void aux_record(uint32_t cpu, uint64_t offset, uint64_t size, uint64_t flags)
{
	struct {
		struct perf_event_header h;
		uint64_t offset, size, flags, id;
	} r = { { PERF_RECORD_AUX, 0, sizeof(r) }, offset, size, flags, 77 };
	cgt_sideband_encode(&b, cpu, &r, sizeof(r));
	put(CGT_REC_SIDEBAND);
}

static void end(void)
{
	struct cgt_error e;
	if (cgt_writer_close(w, &e) < 0)
		printf("  close: %s\n", e.msg);
	w = NULL;
}

/* Every byte of stream s, with '|' where a break is. */
static void read_back(const struct pt_input *in, const struct pt_cpu_stream *s, char *out, size_t max)
{
	struct pt_aux_cursor c;
	struct cgt_error e;
	const uint8_t *p;
	size_t n, len = 0;
	int at_break, rc;

	pt_aux_open(&c, in, s);
	while ((rc = pt_aux_peek(&c, &p, &n, &at_break, &e)) > 0 && len + n + 2 < max) {
		if (at_break) {
			out[len++] = '|';
			pt_aux_pass_break(&c);
			continue;
		}
		memcpy(out + len, p, n);
		len += n;
		pt_aux_skip(&c, n);
	}
	if (rc < 0)
		printf("  read back: %s\n", e.msg);
	out[len] = '\0';
	pt_aux_close(&c);
}

static void pieces_join(void)
{
	struct pt_input in;
	struct cgt_error e;
	char got[256];

	begin();
	aux(0, 0, "abcd");
	aux(0, 4, "efgh");		/* continues */
	aux(0, 20, "ijkl");		/* a gap of 8: a break */
	aux(0, 24, "");			/* zero-size: nothing */
	aux(1, 100, "ABCD");
	aux(0, 22, "mn");		/* back, overlapping: a break */
	aux_record(0, 0, 6, PERF_AUX_FLAG_TRUNCATED);	/* a break at offset 6: "ef|gh" */
	aux_record(0, 1000, 6, PERF_AUX_FLAG_TRUNCATED);	/* in no piece: none */
	aux_record(1, 100, 4, PERF_AUX_FLAG_TRUNCATED);	/* at the end: none */
	aux_record(7, 0, 4, PERF_AUX_FLAG_TRUNCATED);	/* a CPU without packets: none */
	end();
	CHECK(pt_input_read(&in, path, &e) == 0);
	CHECK_EQ(in.n_cpus, 2);
	CHECK_EQ(in.cpus[0].len, 14);
	CHECK_EQ(in.cpus[0].n_breaks, 3);
	CHECK_EQ(in.cpus[0].bytes_lost, 12);
	CHECK_EQ(in.cpus[1].n_breaks, 0);
	read_back(&in, &in.cpus[0], got, sizeof(got));
	CHECK(strcmp(got, "abcdef|gh|ijkl|mn") == 0);
	read_back(&in, &in.cpus[1], got, sizeof(got));
	CHECK(strcmp(got, "ABCD") == 0);
	pt_input_free(&in);
	unlink(path);
}

/* The same break twice, and one that a gap makes already: one break. */
static void breaks_once(void)
{
	struct pt_input in;
	struct cgt_error e;
	char got[64];

	begin();
	aux(0, 0, "abcd");
	aux(0, 10, "efgh");
	aux_record(0, 0, 4, PERF_AUX_FLAG_PARTIAL);	/* offset 4: in no piece */
	aux_record(0, 8, 4, PERF_AUX_FLAG_TRUNCATED);	/* offset 12: "ef|gh" */
	aux_record(0, 8, 4, PERF_AUX_FLAG_TRUNCATED);
	aux_record(0, 6, 4, PERF_AUX_FLAG_TRUNCATED);	/* offset 10, where the gap is */
	aux_record(0, UINT64_MAX - 2, 4, PERF_AUX_FLAG_TRUNCATED);	/* wraps: ignored */
	end();
	CHECK(pt_input_read(&in, path, &e) == 0);
	CHECK_EQ(in.cpus[0].n_breaks, 2);
	read_back(&in, &in.cpus[0], got, sizeof(got));
	CHECK(strcmp(got, "abcd|ef|gh") == 0);
	pt_input_free(&in);
	unlink(path);
}

/* Many CPUs: 4096 are read, one more is an error naming file and offset. */
static void too_many_cpus(void)
{
	struct pt_input in;
	struct cgt_error e;

	begin();
	for (uint32_t cpu = 0; cpu < PT_MAX_CPUS; cpu++)
		aux(cpu * 3, 0, "x");
	end();
	CHECK(pt_input_read(&in, path, &e) == 0);
	CHECK_EQ(in.n_cpus, PT_MAX_CPUS);
	pt_input_free(&in);
	unlink(path);

	begin();
	for (uint32_t cpu = 0; cpu <= PT_MAX_CPUS; cpu++)
		aux(cpu * 3, 0, "x");
	end();
	CHECK(pt_input_read(&in, path, &e) < 0);
	CHECK(strstr(e.msg, path) != NULL);
	CHECK(strstr(e.msg, "stream offset") != NULL);
	CHECK(strstr(e.msg, "more than 4096 CPUs") != NULL);
	unlink(path);
}

/* An event that claims more ids than its field holds: refused before
   anything is allocated for them. */
static void config_id_count_bounded(void)
{
	struct cgt_error e;
	struct cgt_pt_config c;
	/* key 5 (event), length 9: kind 1, type 8, config 0, config1 0,
	   sample_type 0, period 1, n_ids 4096 (2 bytes), one id. */
	uint8_t field[] = { 5, 9, 1, 8, 0, 0, 0, 1, 0x80, 0x20, 7 };
	struct cgt_record rec = { CGT_REC_PT_CONFIG, field, sizeof(field), 0, 0, "test", 0 };

	CHECK(cgt_pt_config_decode(&c, &rec, &e) < 0);
	CHECK(strstr(e.msg, "as many event ids as the rest of the field can hold") != NULL);
	/* One id, as claimed: read. */
	uint8_t one[] = { 5, 8, 1, 8, 0, 0, 0, 1, 1, 0x20 };
	rec.payload = one;
	rec.len = sizeof(one);
	CHECK(cgt_pt_config_decode(&c, &rec, &e) == 0);
	CHECK_EQ(c.n_events, 1);
	CHECK_EQ(c.events[0].n_ids, 1);
	CHECK_EQ(c.events[0].ids[0], 0x20);
	cgt_pt_config_free(&c);
}

/* A mapping libipt cannot take (an offset past the end of its file) is
   left out with a warning; the others are decoded. */
static void bad_mappings_left_out(void)
{
	struct cgt_module m = { .start = 0x400000, .size = 0x1000, .prot = 5, .path = "/bin/sh" };
	struct pt_input in;
	struct pt_code code;
	struct cgt_error e;

	cgt_module_identify(&m);
	begin();
	cgt_module_encode(&b, &m);	/* a good one */
	put(CGT_REC_MODULE);
	m.file_offset = 1ull << 40;	/* past the end of the file */
	cgt_module_encode(&b, &m);
	put(CGT_REC_MODULE);
	end();
	CHECK(pt_input_read(&in, path, &e) == 0);
	CHECK_EQ(in.n_modules, 2);
	FILE *warn = tmpfile();
	CHECK(pt_code_build(&code, &in, warn, "/tmp", &e) == 0);
	CHECK_EQ(code.modules_left_out, 1);
	char text[1024] = "";
	rewind(warn);
	size_t n = fread(text, 1, sizeof(text) - 1, warn);
	text[n] = '\0';
	CHECK(strstr(text, "/bin/sh: its mapping at 0x400000 cannot be decoded") != NULL);
	fclose(warn);
	pt_code_free(&code);
	pt_input_free(&in);
	unlink(path);
}

static void enc(struct pt_encoder *en, struct pt_packet p)
{
	if (pt_enc_next(en, &p) < 0)
		printf("  cannot encode packet %d\n", p.type);
}

/* Code that needs no trace to go on -- a jump to itself, where the
   packets say the program went on (an image that is not what ran) --
   is a decode error after PT_FLOW_STALL blocks, not an endless walk. */
static void endless_code_is_a_decode_error(void)
{
	char code_path[] = "/tmp/test_pt_code.XXXXXX";
	uint8_t code[4096] = { 0xeb, 0xfe };	/* jmp . */
	int fd = mkstemp(code_path);
	if (fd < 0 || write(fd, code, sizeof(code)) != (ssize_t)sizeof(code))
		printf("  cannot write %s\n", code_path);
	close(fd);
	struct cgt_module m = { .start = 0x400000, .size = 0x1000, .prot = 5, .path = code_path };
	cgt_module_identify(&m);

	uint8_t stream[256] = { 0 };
	struct pt_config pc;
	pt_config_init(&pc);
	pc.begin = stream;
	pc.end = stream + sizeof(stream) - 64;
	struct pt_encoder *en = pt_alloc_encoder(&pc);
	struct pt_packet p = { .type = ppt_psb };
	enc(en, p);
	p = (struct pt_packet){ .type = ppt_mode };
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	enc(en, p);
	enc(en, (struct pt_packet){ .type = ppt_psbend });
	p = (struct pt_packet){ .type = ppt_tip_pge };
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = 0x400000;
	enc(en, p);
	p = (struct pt_packet){ .type = ppt_tnt_8 };	/* never reached */
	p.payload.tnt.bit_size = 1;
	p.payload.tnt.payload = 1;
	enc(en, p);
	uint64_t used = 0;
	pt_enc_get_offset(en, &used);
	pt_free_encoder(en);

	begin();
	cgt_module_encode(&b, &m);
	put(CGT_REC_MODULE);
	cgt_aux_encode(&b, 0, 0, stream, (size_t)used);
	put(CGT_REC_AUX);
	end();

	struct pt_input in;
	struct pt_code codes;
	struct pt_classifier cls = { 0 };
	struct pt_flow f;
	struct pt_flow_item item;
	struct cgt_error e;
	uint64_t insns = 0, losses = 0;
	int rc;
	CHECK(pt_input_read(&in, path, &e) == 0);
	CHECK(pt_code_build(&codes, &in, NULL, "/tmp", &e) == 0);
	CHECK_EQ(codes.modules_left_out, 0);
	CHECK(pt_flow_open(&f, &in, &in.cpus[0], &codes, &cls, 0, &e) == 0);
	while ((rc = pt_flow_next(&f, &item, &e)) > 0 && insns <= 4 * (uint64_t)PT_FLOW_STALL) {
		insns += item.kind == PT_FLOW_INSN;
		losses += item.kind == PT_FLOW_LOSS;
	}
	printf("# %llu instructions, %llu losses\n", (unsigned long long)insns, (unsigned long long)losses);
	CHECK_EQ(rc, 0);		/* the end, not the cap above */
	CHECK(insns >= PT_FLOW_STALL && insns <= PT_FLOW_STALL + 2);
	CHECK_EQ(f.stats.errors, 1);
	CHECK_EQ(losses, 1);
	pt_flow_close(&f);
	pt_classifier_free(&cls);
	pt_code_free(&codes);
	pt_input_free(&in);
	unlink(path);
	unlink(code_path);
}

int main(void)
{
	PLAN(6);
	RUN(pieces_join);
	RUN(breaks_once);
	RUN(too_many_cpus);
	RUN(config_id_count_bounded);
	RUN(bad_mappings_left_out);
	RUN(endless_code_is_a_decode_error);
	return CHECK_DONE();
}
