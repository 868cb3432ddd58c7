/* The level chain of the hierarchy engine (simulate/hier.c) against
   sequences computed by hand: a one-instruction block that reads 8 bytes,
   run on addresses chosen to hit and miss at each level. */
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "sim.h"
#include "synth_trace.h"

static char dir[] = "/tmp/cgtrace-unit-XXXXXX";

/* Lines (64 bytes) read, in order: A B A C A B D A, then 8 bytes
   straddling lines 8 and 9. */
#define A 1
#define B 3
#define C 5
#define D 7
static const uint64_t reads[] = { A * 64, B * 64, A * 64, C * 64, A * 64,
				  B * 64, D * 64, A * 64, 9 * 64 - 4 };
#define N_READS (sizeof(reads) / sizeof(reads[0]))

static void write_trace(const char *path, const uint64_t *addrs, size_t n_reads)
{
	struct synth_trace s;
	struct cgt_block_table t = { 0 };
	const struct cgt_insn insn = { 0x400000, 4 };
	const struct cgt_op ops[] = { { CGT_OP_INSN, 0, 0, 0 }, { CGT_OP_READ, 0, 0, 8 } };
	const char *why;

	synth_open(&s, path, 8);
	CHECK(cgt_block_table_add(&t, &insn, 1, ops, 2, NULL, 0, &why) == 0);
	CHECK(cgt_blocks_encode(&s.b, t.blocks[0]) == 0);
	put(s.w, CGT_REC_BLOCKS, &s.b);
	CHECK(cgt_events_begin(&s.b, &t, 1) == 0);
	for (size_t k = 0; k < n_reads; k++)
		CHECK(cgt_events_encode(&s.b, &t, t.blocks[0], 0, &addrs[k]) == 0);
	CHECK(cgt_events_finish(&s.b, &t) == 0);
	put(s.w, CGT_REC_EVENTS, &s.b);
	synth_close(&s);
	cgt_block_table_free(&t);
}

/* The totals of each configuration, by event name. */
static uint64_t total(const struct cgt_profile *p, const char *name)
{
	for (unsigned k = 0; k < p->events.n; k++)
		if (strcmp(p->events.ev[k].name, name) == 0)
			return p->totals[k];
	return UINT64_MAX;
}

/* The profiles of n_configs configurations, simulated together on
   threads threads over a trace (dir/name) of one block reading
   addrs[0 .. n) in turn. */
static void profiles_of(const char *name, const struct cgt_hierarchy *configs, unsigned n_configs,
			const uint64_t *addrs, size_t n, unsigned threads, struct cgt_profile *p)
{
	char path[128];
	struct cgt_decoder *d;
	struct cgt_sim *s;
	struct cgt_error e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_trace(path, addrs, n);
	const struct cgt_sim_options o = { 1, 0, configs, n_configs, path, 1, { 0 } };
	CHECK(cgt_decoder_open(&d, path, NULL, &e) == 0);
	CHECK(cgt_sim_open(&s, &o, 8, &e) == 0);
	CHECK(cgt_sim_trace(s, d, threads, NULL, &e) == 0);
	for (unsigned k = 0; k < n_configs; k++)
		CHECK(cgt_sim_profile(s, k, cgt_decoder_blocks(d), &p[k], &e) == 0);
	cgt_sim_close(s);
	cgt_decoder_close(d);
	unlink(path);
}

static void profiles(const char *name, const struct cgt_hierarchy configs[2], const uint64_t *addrs,
		     size_t n, unsigned threads, struct cgt_profile p[2])
{
	profiles_of(name, configs, 2, addrs, n, threads, p);
}

static void chain(unsigned threads)
{
	/* I1 8 sets x 2; D1 2 sets x 1; L2 2 sets x 2; LL 4 sets x 2. */
	const struct cgt_hierarchy configs[] = {
		{ { { 1024, 2, 64 }, { 128, 1, 64 }, { 256, 2, 64 }, { 512, 2, 64 } } },
		{ { { 1024, 2, 64 }, { 128, 1, 64 }, { 0, 0, 0 }, { 512, 2, 64 } } },
	};
	struct cgt_profile p[2];

	profiles("t.zst", configs, reads, N_READS, threads, p);
	const struct cgt_profile with_l2 = p[0], without = p[1];

	/* The one fetch line misses everywhere once (I1's set 0, L2's and
	   LL's set 0), then hits I1. */
	CHECK(total(&with_l2, "Ir") == N_READS);
	CHECK(total(&with_l2, "I1mr") == 1 && total(&with_l2, "I2mr") == 1 &&
	      total(&with_l2, "ILmr") == 1);
	/* D1 (one way per set) misses every read: each line differs from the
	   one before in its set, and the straddle misses line 8 in set 0. */
	CHECK(total(&with_l2, "Dr") == N_READS && total(&with_l2, "D1mr") == N_READS);
	/* L2's set 1, two ways: A miss [A 0], B miss [B A], A hit [A B],
	   C miss [C A], A hit [A C], B miss [B A], D miss [D B], A miss [A D];
	   the straddle misses line 8 (set 0: [fetch 0]) and 9: one access. */
	CHECK(total(&with_l2, "D2mr") == 7);
	/* LL takes L2's misses A B C B D A, then 8 and 9: set 1 [A 0],
	   set 3 [B 0], set 1 [C A], set 3 hit [B 0], set 3 [D B], set 1 hit
	   [A C], then 8 misses set 0 and 9 set 1: A C B D and the straddle. */
	CHECK(total(&with_l2, "DLmr") == 5);
	/* Without L2, LL takes every D1 miss: set 1 A miss, A hit, C miss,
	   A hit, A hit; set 3 B miss, B hit, D miss; the straddle misses. */
	CHECK(total(&without, "DLmr") == 5 && total(&without, "ILmr") == 1);
	CHECK(total(&without, "D2mr") == UINT64_MAX);	/* no such event */

	cgt_profile_free(&p[0]);
	cgt_profile_free(&p[1]);
}

static void chain_on_one_thread(void)
{
	chain(1);
}

static void chain_on_two_threads(void)
{
	chain(2);
}

/* A trace that runs nothing: no cache sees a reference (a PT trace whose
   code could not be decoded is one).  Every count is 0, and no error. */
static void no_references(void)
{
	const struct cgt_hierarchy configs[] = {
		{ { { 1024, 2, 64 }, { 128, 1, 64 }, { 256, 2, 64 }, { 512, 2, 64 } } },
		{ { { 1024, 2, 64 }, { 256, 2, 64 }, { 256, 2, 64 }, { 512, 2, 64 } } },
	};
	struct cgt_profile p[2];

	profiles("empty.zst", configs, reads, 0, 2, p);
	CHECK(total(&p[1], "Ir") == 0 && total(&p[1], "DLmr") == 0);
	cgt_profile_free(&p[0]);
	cgt_profile_free(&p[1]);
}

/* A stack of 32-bit tags (one of 1024 sets of 64-byte lines) made wide
   by a line too high for them, after a drain: its state carries over.
   LL set 1 takes A and B in turn 9000 times (D1, one line, misses every
   read; two bunches of references, drained before H), then H, B, A: the
   2-way LL misses A, B, H and A; the 4-way A, B, H. */
static void narrow_then_wide(void)
{
	const struct cgt_hierarchy configs[] = {
		{ { { 1024, 2, 64 }, { 64, 1, 64 }, { 0, 0, 0 }, { 131072, 2, 64 } } },
		{ { { 1024, 2, 64 }, { 64, 1, 64 }, { 0, 0, 0 }, { 262144, 4, 64 } } },
	};
	enum { PAIRS = 4500, N = 2 * PAIRS + 3 };
	static uint64_t addrs[N];
	struct cgt_profile p[2];

	for (size_t k = 0; k < 2 * PAIRS; k++)
		addrs[k] = (k % 2 ? 2049 : 1025) * 64;
	addrs[N - 3] = 0xffff000000000040;	/* LL set 1, above 2^32 lines of it */
	addrs[N - 2] = 2049 * 64;
	addrs[N - 1] = 1025 * 64;
	profiles("wide.zst", configs, addrs, N, 1, p);
	CHECK(total(&p[0], "D1mr") == N);
	CHECK(total(&p[0], "DLmr") == 4);	/* two ways */
	CHECK(total(&p[1], "DLmr") == 3);	/* four */
	cgt_profile_free(&p[0]);
	cgt_profile_free(&p[1]);
}

/* Sixteen ways of 32-bit tags, looked up all at once where the host has
   AVX-512 (hier.c's enum set_kind), with an 8-way member of the same
   stack: lines L0 .. L16 of LL set 1 (1024 sets), each missing the D1 of
   one line, read L0 .. L15 twice, then L16, L0, L1.  16 ways: 16 misses,
   16 hits at depth 15, then L16 evicts L0, L0 evicts L1, L1 evicts L2: 19.
   8 ways: every read misses, 35. */
static void sixteen_ways(void)
{
	const struct cgt_hierarchy configs[] = {
		{ { { 1024, 2, 64 }, { 64, 1, 64 }, { 0, 0, 0 }, { 1048576, 16, 64 } } },
		{ { { 1024, 2, 64 }, { 64, 1, 64 }, { 0, 0, 0 }, { 524288, 8, 64 } } },
	};
	enum { N = 35 };
	uint64_t addrs[N];
	struct cgt_profile p[2];

	for (unsigned k = 0; k < 32; k++)
		addrs[k] = (1 + 1024 * (uint64_t)(k % 16)) * 64;
	addrs[32] = (1 + 1024 * 16) * 64;
	addrs[33] = addrs[0];
	addrs[34] = addrs[1];
	profiles("sixteen.zst", configs, addrs, N, 2, p);
	CHECK(total(&p[0], "D1mr") == N);
	CHECK(total(&p[0], "DLmr") == 19);	/* sixteen ways */
	CHECK(total(&p[1], "DLmr") == 35);	/* eight */
	cgt_profile_free(&p[0]);
	cgt_profile_free(&p[1]);
}

/* LL caches under D1s that differ only in D1 share their sets (hier.c's
   struct forest): D1 2 sets x 2 ways (the root), 4 x 1 (not included in
   it: following it all the same), 4 x 2 and 8 x 1 (following 4 x 1), over
   one 16-way LL set of 32-bit tags.  Reads of 48 lines of that set in a
   random order make the D1s miss differently and the LL caches part and
   rejoin; reads straddling two lines, over several bunches, then lines
   above 2^32 of the set among them, which make every LL stack wide (and
   the lines below must still be found).  Each
   configuration's misses are those of a run of it alone (sim.c's engine,
   Cachegrind's rules), on one thread and on three. */
static void forest(void)
{
	enum { N_CONFIGS = 4, N = 9000 };
	const struct cgt_cache_config i1 = { 1024, 2, 64 }, ll = { 1048576, 16, 64 };
	const struct cgt_hierarchy configs[N_CONFIGS] = {
		{ { i1, { 256, 2, 64 }, { 0, 0, 0 }, ll } },
		{ { i1, { 256, 1, 64 }, { 0, 0, 0 }, ll } },
		{ { i1, { 512, 2, 64 }, { 0, 0, 0 }, ll } },
		{ { i1, { 512, 1, 64 }, { 0, 0, 0 }, ll } },
	};
	static uint64_t addrs[N];
	uint32_t rng = 12345;

	for (size_t k = 0; k < N; k++) {
		rng = rng * 1103515245u + 12345u;
		uint64_t line = 3 + 1024 * (uint64_t)(rng >> 16) % (48 * 1024) / 1024 * 1024;
		addrs[k] = line * 64;
		if (k % 7 == 0)
			addrs[k] -= 4;	/* straddles the line before */
		if (k >= N - 2000 && k % 8 == 0)
			addrs[k] += 0xffff000000000000;
	}
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		struct cgt_profile together[N_CONFIGS];
		profiles_of("forest.zst", configs, N_CONFIGS, addrs, N, threads, together);
		for (unsigned c = 0; c < N_CONFIGS; c++) {
			struct cgt_profile alone;
			profiles_of("alone.zst", &configs[c], 1, addrs, N, 1, &alone);
			CHECK(total(&alone, "D1mr") > N / 2);
			CHECK_EQ(total(&together[c], "D1mr"), total(&alone, "D1mr"));
			CHECK(total(&alone, "DLmr") > 48);
			CHECK_EQ(total(&together[c], "DLmr"), total(&alone, "DLmr"));
			CHECK_EQ(total(&together[c], "ILmr"), total(&alone, "ILmr"));
			cgt_profile_free(&alone);
			cgt_profile_free(&together[c]);
		}
	}
}

int main(void)
{
	PLAN(6);
	if (mkdtemp(dir) == NULL)
		return 1;
	RUN(chain_on_one_thread);
	RUN(chain_on_two_threads);
	RUN(no_references);
	RUN(narrow_then_wide);
	RUN(sixteen_ways);
	RUN(forest);
	rmdir(dir);
	return CHECK_DONE();
}
