/* Simulation in parallel: any number of threads gives the counts of one,
   on synthetic traces of many segments and caches small enough that most
   lookups start from an unknown state; and a trace with two bad segments
   fails with the first one's error, whatever the threads' timing. */
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
/* A block of 1-6 instructions, each with up to two data accesses, the
   last one a conditional branch or (one in four blocks) an indirect one;
   some instructions have a conditional side exit. */
static void add_block(struct cgt_block_table *t, uint64_t pc)
{
	struct cgt_insn insns[6];
	struct cgt_op ops[40];
	uint32_t n_insns = 1 + next() % 6, n = 0;
	const char *why;

	for (uint32_t i = 0; i < n_insns; i++) {
		insns[i] = (struct cgt_insn){ pc, 1 + next() % 15 };
		pc += insns[i].len;
		ops[n++] = (struct cgt_op){ CGT_OP_INSN, 0, (uint16_t)i, 0 };
		for (uint32_t k = next() % 3; k > 0; k--)
			ops[n++] = (struct cgt_op){ (uint8_t)(CGT_OP_READ + next() % 3), 0, (uint16_t)i,
						    1u << (next() % 6) };
		if (i + 1 < n_insns && next() % 4 == 0)
			ops[n++] = (struct cgt_op){ (uint8_t)(CGT_OP_COND + next() % 2), 0, (uint16_t)i, 0 };
	}
	ops[n++] = (struct cgt_op){ next() % 4 ? CGT_OP_COND : CGT_OP_INDIRECT, 0,
				    (uint16_t)(n_insns - 1), 0 };
	CHECK(cgt_block_table_add(t, insns, n_insns, ops, n, NULL, 0, &why) == 0);
}

/* Writes a trace of 200 EVENTS records, about 9 segments (one, spanning
   several frames, with segments 0: as version 1 traces are); bad1 and
   bad2: records whose first execution names a block that does not
   exist.  The same random content every time, bad records aside. */
static void write_trace(const char *path, unsigned bad1, unsigned bad2, int segments)
{
	struct synth_trace s;
	struct cgt_block_table t = { 0 };
	struct cgt_error e;
	uint64_t values[64];

	rng = 99;
	synth_open(&s, path, 32);
	for (uint32_t i = 0; i < N_BLOCKS; i++) {
		add_block(&t, 0x400000 + i * 200 + next() % 64);
		CHECK(cgt_blocks_encode(&s.b, t.blocks[i]) == 0);
	}
	put(s.w, CGT_REC_BLOCKS, &s.b);
	for (uint32_t record = 0; record < 200; record++) {
		CHECK(cgt_events_begin(&s.b, &t, 1) == 0);
		if (record == bad1 || record == bad2) {
			uint8_t *p = cgt_buf_reserve(&s.b, 2);
			p[0] = 0xff;	/* block 8191: not defined */
			p[1] = 0x7f;
			s.b.len += 2;
		}
		for (int k = 0; k < 20000; k++) {
			struct cgt_block *blk = t.blocks[next() % N_BLOCKS];
			uint32_t exit = next() % (blk->n_exits + 1);
			for (uint32_t j = 0; j < blk->values_in_prefix[exit]; j++) {
				uint32_t r = next();
				/* strided walks, a small hot region, random lines */
				values[j] = r % 3 == 0   ? 0x10000000 + (uint64_t)(record * 20000 + k) * 8
					    : r % 3 == 1 ? 0x20000000 + (r >> 8) % 4096
							 : 0x30000000 + (uint64_t)((r >> 4) % 100000) * 64;
			}
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

/* A run's options: up to three configurations. */
struct run {
	int cache_sim, branch_sim;
	unsigned n;
	struct cgt_hierarchy h[3];
};

#define LEVELS(...) { { __VA_ARGS__ } }
#define NO_L2 { 0, 0, 0 }

/* Simulates path on threads threads: the profiles of every configuration,
   in one array (NULL on an error, whose message goes to msg); *misses:
   their misses and mispredicts. */
static uint64_t *simulate(const char *path, const struct run *r, unsigned threads, size_t *n,
			  uint64_t *misses, char *msg)
{
	struct cgt_decoder *d;
	struct cgt_sim *s;
	struct cgt_error e;
	uint64_t *all = NULL;
	const struct cgt_sim_options o = { r->cache_sim, r->branch_sim, r->h, r->n, path, 1, { 0 } };

	CHECK(cgt_decoder_open(&d, path, NULL, &e) == 0);
	CHECK(cgt_sim_open(&s, &o, 32, &e) == 0);
	*misses = 0;
	if (cgt_sim_trace(s, d, threads, NULL, &e) < 0) {
		strcpy(msg, e.msg);
	} else {
		const struct cgt_block_table *t = cgt_decoder_blocks(d);
		*n = 0;
		for (unsigned k = 0; k < r->n; k++) {
			struct cgt_profile p;
			if (cgt_sim_profile(s, k, t, &p, &e) < 0)
				break;
			size_t len = p.n_insns * p.events.n;
			all = realloc(all, (*n + len) * sizeof(*all));
			memcpy(all + *n, p.costs, len * sizeof(*all));
			*n += len;
			for (unsigned ev = 0; ev < p.events.n; ev++)
				if (p.events.ev[ev].level != CGT_EVENT_EXECUTED)
					*misses += p.totals[ev];
			cgt_profile_free(&p);
		}
	}
	cgt_sim_close(s);
	cgt_decoder_close(d);
	return all;
}

static void any_number_of_threads(void)
{
	/* I1 512 B 2-way, D1 1 KiB direct-mapped or 12-way 1.5 KiB, LL 8 KiB
	   4-way or 16 KiB 16-way, 32- and 64-byte lines; then the hierarchy
	   engine: an L2, and several configurations at once. */
	const struct run runs[] = {
		{ 1, 1, 1, { LEVELS({ 512, 2, 32 }, { 1024, 1, 32 }, NO_L2, { 8192, 4, 32 }) } },
		{ 1, 1, 1, { LEVELS({ 1024, 4, 64 }, { 1536, 12, 32 }, NO_L2, { 16384, 16, 64 }) } },
		{ 0, 1, 1, { LEVELS({ 1024, 4, 64 }, { 1024, 4, 64 }, NO_L2, { 16384, 16, 64 }) } },
		{ 1, 0, 1, { LEVELS({ 1024, 4, 64 }, { 1024, 4, 64 }, NO_L2, { 16384, 16, 64 }) } },
		{ 1, 1, 1, { LEVELS({ 512, 2, 32 }, { 1024, 1, 32 }, { 2048, 2, 32 }, { 8192, 4, 32 }) } },
		{ 1, 1, 3, { LEVELS({ 512, 2, 32 }, { 1024, 1, 32 }, NO_L2, { 8192, 4, 32 }),
			     LEVELS({ 512, 2, 32 }, { 2048, 2, 32 }, { 4096, 4, 32 }, { 8192, 4, 32 }),
			     LEVELS({ 1024, 2, 32 }, { 1024, 2, 32 }, NO_L2, { 4096, 2, 32 }) } },
	};
	char path[128], msg[1024];
	snprintf(path, sizeof(path), "%s/t.zst", dir);
	write_trace(path, 999, 999, 1);
	uint64_t *cachegrind_shape = NULL;
	size_t n_cachegrind_shape = 0;
	for (size_t c = 0; c < sizeof(runs) / sizeof(runs[0]); c++) {
		size_t n1 = 0, n = 0;
		uint64_t misses, other;
		uint64_t *one = simulate(path, &runs[c], 1, &n1, &misses, msg);
		CHECK(one != NULL);
		/* The hierarchy engine counts the first run's configuration as
		   the Cachegrind-shaped engine does. */
		if (c == 0) {
			cachegrind_shape = malloc(n1 * sizeof(*one));
			memcpy(cachegrind_shape, one, n1 * sizeof(*one));
			n_cachegrind_shape = n1;
		}
		if (c + 1 == sizeof(runs) / sizeof(runs[0]))
			CHECK(n1 > n_cachegrind_shape &&
			      memcmp(one, cachegrind_shape, n_cachegrind_shape * sizeof(*one)) == 0);
		CHECK(misses > 10000);	/* a test of something */
		for (unsigned threads = 2; threads <= 8; threads *= 4) {
			uint64_t *many = simulate(path, &runs[c], threads, &n, &other, msg);
			CHECK(many != NULL && n == n1 && memcmp(one, many, n * sizeof(*one)) == 0);
			free(many);
		}
		free(one);
	}
	free(cachegrind_shape);
	unlink(path);
}

/* A trace with two bad records fails with the first one's message on 1
   to 8 threads: segments after it may finish first, and in a trace of one
   segment the others wait for the worker that has it, which gives up. */
static void first_error_wins(int segments)
{
	const struct run o = { 1, 1, 1, { LEVELS({ 1024, 4, 64 }, { 1024, 4, 64 }, NO_L2, { 16384, 16, 64 }) } };
	char path[128], first[1024] = "", msg[1024];
	size_t n;
	uint64_t misses;
	snprintf(path, sizeof(path), "%s/bad.zst", dir);
	write_trace(path, 70, 150, segments);
	for (unsigned threads = 1; threads <= 8; threads++) {
		msg[0] = '\0';
		CHECK(simulate(path, &o, threads, &n, &misses, msg) == NULL);
		CHECK(strstr(msg, "a block id below 40") != NULL);
		if (threads == 1)
			strcpy(first, msg);
		CHECK(strcmp(msg, first) == 0);
	}
	/* The second bad record's error is another message: the comparison
	   above could tell which one was reported. */
	write_trace(path, 150, 999, segments);
	msg[0] = '\0';
	CHECK(simulate(path, &o, 1, &n, &misses, msg) == NULL);
	CHECK(strstr(msg, "a block id below 40") != NULL);
	CHECK(strcmp(msg, first) != 0);
	unlink(path);
}

static void first_error_wins_among_segments(void)
{
	first_error_wins(1);
}

static void first_error_wins_in_one_segment(void)
{
	first_error_wins(0);
}

int main(void)
{
	PLAN(3);
	if (mkdtemp(dir) == NULL)
		return 1;
	alarm(300);	/* a hang is a failure, not a stuck test run */
	RUN(any_number_of_threads);
	RUN(first_error_wins_among_segments);
	RUN(first_error_wins_in_one_segment);
	rmdir(dir);
	return CHECK_DONE();
}
