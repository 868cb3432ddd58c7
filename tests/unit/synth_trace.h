/*
 * Synthetic traces for the unit tests that decode and simulate in
 * parallel (test_sim_parallel.c, test_frame_damage.c): a repeatable
 * pseudo-random source, and a trace file opened with its HEADER and closed
 * with its END, records put in between.
 */
#ifndef CGTRACE_SYNTH_TRACE_H
#define CGTRACE_SYNTH_TRACE_H

#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "trace.h"

static uint32_t rng;

/* xorshift32: the same content on every run from the same seed. */
static inline uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* Writes b as one record of type and empties it. */
static void put(struct cgt_writer *w, unsigned type, struct cgt_buf *b)
{
	struct cgt_error e;
	CHECK(cgt_writer_put(w, type, b->data, b->len, &e) == 0);
	b->len = 0;
}

struct synth_trace {
	int fd;
	struct cgt_writer *w;
	struct cgt_buf b;	/* the record being built */
};

/* Creates path and writes its HEADER (a valgrind trace of "synthetic"). */
static void synth_open(struct synth_trace *s, const char *path, uint32_t max_access_size)
{
	char *argv[] = { "synthetic" };
	struct cgt_trace_header h = { .backend = "valgrind", .argc = 1, .argv = argv,
				      .max_access_size = max_access_size };
	struct cgt_error e;

	s->b = (struct cgt_buf){ 0 };
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(s->fd >= 0);
	CHECK(cgt_writer_open(&s->w, s->fd, path, &e) == 0);
	CHECK(cgt_header_encode(&s->b, &h) == 0);
	put(s->w, CGT_REC_HEADER, &s->b);
}

/* Writes the END of a program that exited, and closes the file. */
static void synth_close(struct synth_trace *s)
{
	struct cgt_trace_end end = { .kind = CGT_END_EXIT };
	struct cgt_error e;

	CHECK(cgt_end_encode(&s->b, &end) == 0);
	put(s->w, CGT_REC_END, &s->b);
	CHECK(cgt_writer_close(s->w, &e) == 0);
	close(s->fd);
	cgt_buf_free(&s->b);
}

#endif
