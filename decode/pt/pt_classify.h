/*
 * Executed instructions classified once per address (x86_insn.h): the
 * decoder meets the same few thousand instructions millions of times.
 * Entries never move, so others may keep pointers to them.  Internal to
 * decode/.
 */
#ifndef CGTRACE_PT_CLASSIFY_H
#define CGTRACE_PT_CLASSIFY_H

#include "trace.h"
#include "x86_insn.h"

struct pt_classifier {
	struct cgt_map by_ip;		/* ip -> x86_insn */
	struct x86_insn **chunks;
	size_t n, n_chunks, cap_chunks;
};

/* The instruction at ip, classified from its bytes (at most avail) the
   first time; NULL if out of memory.  Bytes Zydis cannot decode give an
   instruction of len bytes (0: unknown) that touches nothing. */
const struct x86_insn *pt_classify(struct pt_classifier *c, uint64_t ip, const uint8_t *bytes,
				   size_t avail, uint8_t len);
/* The instruction at ip if it has been classified, else NULL. */
const struct x86_insn *pt_classified(const struct pt_classifier *c, uint64_t ip);
void pt_classifier_free(struct pt_classifier *c);

#endif
