/* Damaged traces decoded in parallel: a lost frame that defined blocks
   later segments execute cuts those segments short, a lost frame in the
   middle of a segment of many frames loses the rest of it; on any number
   of threads the same counts and the same report, never a hang. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "decode.h"
#include "sim.h"
#include "synth_trace.h"

#define N_BLOCKS 40

static char dir[] = "/tmp/cgtrace-unit-XXXXXX";
static void add_block(struct cgt_block_table *t, uint64_t pc)
{
	struct cgt_insn insns[4];
	struct cgt_op ops[16];
	uint32_t n_insns = 1 + next() % 4, n = 0;
	const char *why;

	for (uint32_t i = 0; i < n_insns; i++) {
		insns[i] = (struct cgt_insn){ pc, 1 + next() % 15 };
		pc += insns[i].len;
		ops[n++] = (struct cgt_op){ CGT_OP_INSN, 0, (uint16_t)i, 0 };
		if (next() % 2)
			ops[n++] = (struct cgt_op){ CGT_OP_READ, 0, (uint16_t)i, 8 };
	}
	ops[n++] = (struct cgt_op){ CGT_OP_COND, 0, (uint16_t)(n_insns - 1), 0 };
	CHECK(cgt_block_table_add(t, insns, n_insns, ops, n, NULL, 0, &why) == 0);
}

/* 120 EVENTS records; blocks 20-39 are defined before record 50 and
   executed from then on.  segments: a segment point after every record
   (else one segment of many frames). */
static void write_trace(const char *path, int segments)
{
	struct synth_trace s;
	struct cgt_block_table t = { 0 };
	struct cgt_error e;
	uint64_t values[16];

	rng = 7;
	synth_open(&s, path, 8);
	for (uint32_t record = 0; record < 120; record++) {
		uint32_t known = record < 50 ? N_BLOCKS / 2 : N_BLOCKS;
		for (uint32_t i = t.n; i < known; i++) {
			add_block(&t, 0x400000 + i * 100);
			CHECK(cgt_blocks_encode(&s.b, t.blocks[i]) == 0);
		}
		if (s.b.len > 0)
			put(s.w, CGT_REC_BLOCKS, &s.b);
		CHECK(cgt_events_begin(&s.b, &t, 1) == 0);
		for (int k = 0; k < 60000; k++) {
			struct cgt_block *blk = t.blocks[next() % known];
			uint32_t exit = next() % (blk->n_exits + 1);
			for (uint32_t j = 0; j < blk->values_in_prefix[exit]; j++)
				values[j] = 0x10000000 + (uint64_t)(next() % 50000) * 8;
			CHECK(cgt_events_encode(&s.b, &t, blk, exit, values) == 0);
		}
		CHECK(cgt_events_finish(&s.b, &t) == 0);
		put(s.w, CGT_REC_EVENTS, &s.b);
		if (segments)
			CHECK(cgt_writer_segment_point(s.w, &t, &e) == 0);
	}
	synth_close(&s);
	cgt_block_table_free(&t);
}

/* The file offsets of the trace's zstd frames (not the skippable ones). */
static size_t frame_offsets(const char *path, long *at, size_t max)
{
	FILE *f = fopen(path, "rb");
	uint8_t h[8];
	size_t n = 0;
	long p = 0;

	while (n < max && fseek(f, p, SEEK_SET) == 0 && fread(h, 1, 8, f) == 8) {
		uint32_t magic = h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24;
		if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
			p += 8 + (long)(h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24);
			continue;
		}
		at[n++] = p;
		/* the next frame: look for its magic (frames here are far apart) */
		long q = p + 1;
		int c, state = 0;
		fseek(f, q, SEEK_SET);
		while ((c = fgetc(f)) != EOF) {
			static const uint8_t zstd[4] = { 0x28, 0xb5, 0x2f, 0xfd }, skip[4] = { 0x5c, 0x2a, 0x4d, 0x18 };
			q++;
			if (c == zstd[state] || c == skip[state])
				state++;
			else
				state = c == 0x28 || c == 0x5c;
			if (state == 4)
				break;
		}
		if (c == EOF)
			break;
		p = q - 4;
	}
	fclose(f);
	return n;
}

static void flip(const char *path, long at)
{
	int fd = open(path, O_RDWR);
	uint8_t c;
	CHECK(pread(fd, &c, 1, at) == 1);
	c ^= 0x5a;
	CHECK(pwrite(fd, &c, 1, at) == 1);
	close(fd);
}

/* Simulates path on threads threads: every block's counts (NULL on an
   error), the report of what was lost in report. */
static uint64_t *simulate(const char *path, unsigned threads, size_t *n, char *report, size_t len)
{
	const struct cgt_hierarchy h = { { { 1024, 2, 64 }, { 1024, 2, 64 }, { 0, 0, 0 }, { 8192, 4, 64 } } };
	const struct cgt_sim_options o = { 1, 1, &h, 1, path, 1, { 0 } };
	struct cgt_decoder *d;
	struct cgt_sim *s;
	struct cgt_error e;
	uint64_t *all = NULL;

	report[0] = '\0';
	if (cgt_decoder_open(&d, path, NULL, &e) < 0) {
		snprintf(report, len, "error: %s", e.msg);
		return NULL;
	}
	CHECK(cgt_sim_open(&s, &o, 8, &e) == 0);
	if (cgt_sim_trace(s, d, threads, NULL, &e) < 0) {
		snprintf(report, len, "error: %s", e.msg);
	} else {
		FILE *f = fmemopen(report, len, "w");
		CHECK(cgt_decoder_warn_incomplete(d, 1, f) == 1);
		fclose(f);
		const struct cgt_block_table *t = cgt_decoder_blocks(d);
		struct cgt_profile p;
		*n = 0;
		if (cgt_sim_profile(s, 0, t, &p, &e) == 0) {
			*n = p.n_insns * p.events.n;
			all = p.costs;
		}
	}
	cgt_sim_close(s);
	cgt_decoder_close(d);
	return all;
}

/* Damages the middle of the frame that holds the record-th record (of 120); simulates on 1, 2, 3 and 8
   threads: all alike, and the report contains expect. */
static void damaged(int segments, size_t record, const char *expect)
{
	char path[128], one_report[4096], report[4096];
	long at[200];
	size_t n1 = 0, n = 0;

	snprintf(path, sizeof(path), "%s/t.zst", dir);
	write_trace(path, segments);
	size_t frames = frame_offsets(path, at, 200);
	size_t frame = record * frames / 120;
	CHECK(frame > 0 && frames > frame + 1);
	flip(path, (at[frame] + at[frame + 1]) / 2);

	uint64_t *one = simulate(path, 1, &n1, one_report, sizeof(one_report));
	CHECK(one != NULL);
	CHECK(strstr(one_report, expect) != NULL);
	if (one == NULL || strstr(one_report, expect) == NULL)
		printf("  report: %s\n", one_report);
	for (unsigned threads = 2; threads <= 8; threads = threads == 3 ? 8 : threads + 1) {
		uint64_t *many = simulate(path, threads, &n, report, sizeof(report));
		CHECK(many != NULL && n == n1 && memcmp(one, many, n * sizeof(*one)) == 0);
		CHECK(strcmp(report, one_report) == 0);
		free(many);
	}
	free(one);
	unlink(path);
}

/* The frame that defines blocks 20-39 lost: each later segment is cut
   short at its first execution of one of them. */
static void lost_blocks_cut_later_segments_short(void)
{
	damaged(1, 50, "of 11 segments, 1 lost and 6 cut short");
}

/* One segment of many frames: the rest of it is lost. */
static void lost_frame_loses_the_rest_of_its_segment(void)
{
	damaged(0, 40, "the rest of segment 1 of 1");
}

int main(void)
{
	PLAN(2);
	if (mkdtemp(dir) == NULL)
		return 1;
	alarm(300);	/* a hang is a failure, not a stuck test run */
	RUN(lost_blocks_cut_later_segments_short);
	RUN(lost_frame_loses_the_rest_of_its_segment);
	rmdir(dir);
	return CHECK_DONE();
}
