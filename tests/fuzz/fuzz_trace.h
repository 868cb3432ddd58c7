/*
 * What `cgtrace info` and `cgtrace simulate` do with a trace file, less
 * the symbols (module paths in a fuzzed trace name any file, a pipe
 * among them; tests/fuzz/elf.c reads ELF files): the whole decode and
 * its summary, then a simulation on two threads, the segment workers'
 * way, with small caches (the header's are parsed and checked, as
 * simulate does, but a fuzzed 1 GiB LL would only measure the allocator).
 */
#ifndef CGTRACE_FUZZ_TRACE_H
#define CGTRACE_FUZZ_TRACE_H

#include "decode.h"
#include "fuzz.h"
#include "sim.h"

static inline void fuzz_read_trace(const char *path)
{
	struct cgt_error e;
	struct cgt_decoder *d;
	struct cgt_sim *sim;
	struct cgt_cache_defaults defaults;
	const struct cgt_hierarchy caches = {
		{ { 32768, 8, 64 }, { 32768, 8, 64 }, { 0, 0, 0 }, { 262144, 8, 64 } }
	};
	struct cgt_sim_options so = { .cache_sim = 1, .branch_sim = 1, .configs = &caches,
				      .n_configs = 1, .trace_path = path };

	fuzz_say("info", cgt_trace_info(fuzz_devnull(), fuzz_devnull(), path, NULL, NULL, &e), &e);

	int rc = cgt_decoder_open(&d, path, NULL, &e);
	fuzz_say("decoder open", rc, &e);
	if (rc < 0)
		return;
	const struct cgt_trace_header *h = cgt_decoder_header(d);
	cgt_cache_defaults(h, 0, &defaults);
	cgt_cache_check(&defaults.I1);
	cgt_cache_check(&defaults.D1);
	cgt_cache_check(&defaults.LL);
	if (cgt_sim_open(&sim, &so, h->max_access_size, &e) == 0) {
		rc = cgt_sim_trace(sim, d, 2, NULL, &e);
		fuzz_say("simulate", rc, &e);
		if (rc == 0) {
			/* What the profile reads of each block. */
			const struct cgt_block_table *t = cgt_decoder_blocks(d);
			struct cgt_profile p;
			if (cgt_sim_profile(sim, 0, t, &p, &e) == 0)
				cgt_profile_free(&p);
			for (uint32_t i = 0; i < t->n; i++) {
				const struct cgt_block *blk = t->blocks[i];
				for (uint32_t k = 0; k < blk->n_insns; k++)
					cgt_decoder_find_mapping(d, blk->insns[k].addr, blk->map_epoch);
			}
			cgt_decoder_end(d);
			cgt_decoder_warn_incomplete(d, 1, fuzz_devnull());
		}
		cgt_sim_close(sim);
	}
	cgt_decoder_close(d);
}

#endif
