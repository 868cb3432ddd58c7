/*
 * Internal to report/: the callgrind.out reader's state, shared by its
 * line loop and header (callgrind_read.c) and its body lines
 * (callgrind_body.c).
 */
#ifndef CGTRACE_CALLGRIND_READER_H
#define CGTRACE_CALLGRIND_READER_H

#include <stdint.h>

#include "report.h"
#include "symbols.h"

/* Where a file's lines and the calls made at them are found. */
struct file_index {
	struct cgt_map line_at;		/* line -> index into lines + 1 */
	/* (line, caller, callee)'s hash -> index into calls + 1: a chain of
	   the calls of that hash, so that a line of many calls is no list */
	struct cgt_map first_call_at;
	size_t *next_call;		/* per call: the next one of its hash + 1, 0: none */
	size_t cap_lines, cap_calls, cap_next;
};

struct cgt_callgrind_store {
	struct string_set names;
	struct cgt_map fn_named;	/* interned "file:function" -> index + 1 */
	struct cgt_map call_of;		/* caller << 32 | callee -> index + 1 */
	struct cgt_map file_named;	/* interned name -> index + 1 */
	struct cgt_map compressed;	/* interned "<pool>(<id>" -> interned name */
	struct file_index *index;	/* per file */
	size_t cap_fns, cap_calls, cap_files, cap_index, cap_desc;
	char **blocks;			/* where costs are allocated */
	size_t n_blocks, cap_blocks, block_used;
	uint64_t cells, cell_limit;	/* counts allocated, and how many the file may make */
};

#define BLOCK_BYTES ((size_t)1 << 16)
/* A line of a few bytes makes a cost of every event: at most this many
   counts per byte of the file beyond the first 4M. */
#define CELLS_PER_BYTE 8
#define CELLS_FREE ((uint64_t)1 << 22)

struct reader {
	struct cgt_callgrind_profile *p;
	struct cgt_callgrind_store *s;
	const struct cgt_callgrind_read_options *o;
	const char *path;
	struct cgt_error *e;
	long long line_num;
	int64_t prev_line, curr_line;	/* callgrind_annotate's, for relative positions */
	const char *obj, *file;		/* current ob=, fl=/fi=/fe= (NULL: none yet) */
	const char *cfile;		/* cfi=/cfl= for the next cfn= (NULL: none) */
	size_t fn;			/* the current function + 1; 0: none */
	size_t callee;			/* cfn='s function + 1, since the last fn=/fi=/fe= */
	uint64_t pending_calls;		/* of a calls= line: the next cost line is theirs */
};

static inline int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "path:line: what", status corrupt; -status. */
int reader_fail(struct reader *r, const char *what);
int reader_nomem(struct reader *r);
/* A cost of the file's events, zero, counted against the file's limit. */
struct cgt_cost *reader_new_cost(struct reader *r);
/* A decimal number of up to 64 bits at *p, which moves past it: 0, or -1. */
int reader_parse_u64(const char **p, uint64_t *v);
/* A line's counts ("." for one not given) into c. */
int reader_parse_counts(struct reader *r, const char *p, struct cgt_cost *c);
const char *reader_intern(struct reader *r, const char *s);
/* A body line: 0, -2 if it is none of the body's own lines, else an error. */
int reader_body_line(struct reader *r, const char *text, int terminated);

#endif
