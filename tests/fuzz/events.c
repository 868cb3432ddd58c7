/*
 * Fuzz target: the BLOCKS and EVENTS codecs alone (trace_blocks.c,
 * trace_events.c, trace_events_next.h), below the container and the
 * decoder.  The input is records as in the stream (u8 type, varint
 * length, payload; a leading stream header is skipped, so `zstd -dc` of a
 * trace is a seed), split by the reader's own cgt_frame_next_record:
 * BLOCKS define blocks, SEGMENT restarts the deltas, EVENTS are decoded
 * execution by execution; other records are skipped.
 *
 * Every execution decoded is encoded again (cgt_events_encode, with the
 * blocks' encoder state) and the new payload decoded with a second delta
 * state: it must give the same executions, or the codec is not a round
 * trip and the target aborts (stack pointers included).  Both states
 * start each record from the
 * first decoder's.  One thing does not round-trip by design: a guarded
 * value whose address is CGT_NO_ACCESS (2^64 - 1) reads back as a false
 * guard, so the comparison stops at the first such execution.
 */
#include <limits.h>

#include "fuzz.h"

struct decoded {
	uint32_t block_id, exit, n_ops, n_values, tid;
	uint64_t *values;
	uint64_t sp;		/* where the block has_sp */
};

/* The executions compared: all, or up to the first ambiguous one. */
static long comparable;

static uint64_t *scratch_for(const struct cgt_block_table *t, uint64_t *old)
{
	uint32_t most = 1;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->blocks[i]->n_values > most)
			most = t->blocks[i]->n_values;
	free(old);
	uint64_t *s = malloc(most * sizeof(uint64_t));
	if (s == NULL)
		abort();
	return s;
}

/* The executions of rec, decoded with s: how many (into *out), or -1. */
static long decode_all(const struct cgt_record *rec, struct cgt_events_state *s,
		       const struct cgt_block_table *t, struct decoded **out)
{
	struct cgt_events_cursor c;
	struct cgt_error e;
	struct cgt_exec x = { 0 };
	struct cgt_trace_counts counts = { 0 };
	uint64_t *scratch = scratch_for(t, NULL);
	struct decoded *v = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*out = NULL;
	if (cgt_events_state_sync(s, t) < 0 || cgt_events_open(&c, rec, s, scratch, &e) < 0) {
		free(scratch);
		return -1;
	}
	while ((rc = cgt_events_next(&c, &x, &e)) > 0) {
		const struct cgt_block *blk = x.block;
		uint64_t sp = 0;
		if (blk->has_sp && (rc = cgt_events_sp(&c, &x, &sp, &e)) < 0)
			break;
		/* What a consumer relies on. */
		if (blk != t->blocks[x.block_id] || x.exit > blk->n_exits || x.n_ops > blk->n_ops ||
		    x.n_ops == 0 || x.n_values != blk->values_in_prefix[x.exit] ||
		    x.n_ops != blk->ops_in_prefix[x.exit] || x.tid != c.tid)
			abort();
		cgt_counts_add_exec(&counts, &x);
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = realloc(v, cap * sizeof(*v));
			if (v == NULL)
				abort();
		}
		v[n] = (struct decoded){ x.block_id, x.exit, x.n_ops, x.n_values, x.tid,
					 malloc((x.n_values + 1) * sizeof(uint64_t)), sp };
		if (v[n].values == NULL)
			abort();
		memcpy(v[n].values, x.values, x.n_values * sizeof(uint64_t));
		for (uint32_t j = 0; j < x.n_values; j++)
			if (x.values[j] == CGT_NO_ACCESS &&
			    c.slots[x.block_id].last[j] == CGT_NO_ACCESS && comparable > (long)n)
				comparable = (long)n + 1;
		n++;
	}
	free(scratch);
	*out = v;
	return rc < 0 ? -(long)n - 2 : (long)n;
}

static void free_decoded(struct decoded *v, long n)
{
	for (long i = 0; i < n; i++)
		free(v[i].values);
	free(v);
}

/* The encoder (the blocks' last_value) and the second decoder continue
   from the first decoder's state. */
static void resync(struct cgt_block_table *t, struct cgt_events_state *s,
		   struct cgt_events_state *again)
{
	if (cgt_events_state_sync(s, t) < 0 || cgt_events_state_sync(again, t) < 0)
		abort();
	for (uint32_t id = 0; id < t->n; id++) {
		struct cgt_block *blk = t->blocks[id];
		struct cgt_events_slot *from = &s->slots[id], *to = &again->slots[id];
		size_t bytes = blk->n_values * sizeof(uint64_t);
		if (from->segment == s->segment) {
			memcpy(blk->last_value, from->last, bytes);
			blk->last_sp_change = from->last[blk->n_values];
		} else {
			memset(blk->last_value, 0, bytes);
			blk->last_sp_change = 0;
		}
		memcpy(to->last, blk->last_value, bytes);
		to->last[blk->n_values] = blk->last_sp_change;
		to->segment = again->segment;
		blk->segment = t->segment;
	}
}

/* 0, or -1 if rec is malformed (then the delta state is not usable). */
static int round_trip(const struct cgt_record *rec, struct cgt_block_table *t,
		      struct cgt_events_state *s, struct cgt_events_state *again)
{
	struct decoded *v, *w;
	resync(t, s, again);
	comparable = LONG_MAX;
	long n = decode_all(rec, s, t, &v);
	if (n == -1)
		return -1;
	/* A payload that fails part way: its executions before the error
	   were decoded, and count. */
	long good = n < 0 ? -n - 2 : n;
	if (good == 0) {
		free_decoded(v, good);
		return n < 0 ? -1 : 0;
	}
	struct cgt_buf b = { 0 };
	if (cgt_events_begin(&b, t, v[0].tid) < 0)
		abort();
	for (long i = 0; i < good; i++) {
		struct cgt_block *blk = t->blocks[v[i].block_id];
		if (cgt_events_encode(&b, t, blk, v[i].exit, v[i].values) < 0 ||
		    (blk->has_sp && cgt_events_encode_sp(t, blk, v[i].sp) < 0))
			abort();
	}
	if (cgt_events_finish(&b, t) < 0)
		abort();
	struct cgt_record re = { CGT_REC_EVENTS, b.data, b.len, 0, 0, "re-encoded", 0 };
	long limit = comparable < good ? comparable : good;
	long m = decode_all(&re, again, t, &w);
	long m_good = m < 0 ? (m == -1 ? 0 : -m - 2) : m;
	if ((limit == good && m != good) || m_good < limit)
		abort();
	for (long i = 0; i < limit; i++)
		if (w[i].block_id != v[i].block_id || w[i].exit != v[i].exit ||
		    w[i].n_values != v[i].n_values || w[i].sp != v[i].sp ||
		    memcmp(w[i].values, v[i].values, v[i].n_values * sizeof(uint64_t)) != 0)
			abort();
	free_decoded(v, good);
	free_decoded(w, m_good);
	cgt_buf_free(&b);
	return n < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgt_block_table t = { 0 };
	struct cgt_events_state s = { .version = CGT_TRACE_VERSION },
				again = { .version = CGT_TRACE_VERSION };
	struct cgt_frame f = { 0 };
	struct cgt_record rec;
	struct cgt_error e;
	uint32_t epoch = 0;

	/* The stream header says how the input's records are laid out
	   (without one, the current version's); they are encoded again in
	   the current version's. */
	if (size >= CGT_STREAM_HEADER_LEN && memcmp(data, CGT_TRACE_MAGIC, CGT_TRACE_MAGIC_LEN) == 0) {
		s.version = cgt_get_u32le(data + 8);
		data += CGT_STREAM_HEADER_LEN;
		size -= CGT_STREAM_HEADER_LEN;
	}
	/* A copy of exactly the input's size, so that reading past it is
	   caught; the frame's index 1 has no stream header. */
	f.data = malloc(size ? size : 1);
	if (f.data == NULL)
		abort();
	memcpy(f.data, data, size);
	f.len = size;
	f.index = 1;
	f.path = "fuzz";
	while (cgt_frame_next_record(&f, &rec, &e) > 0) {
		struct cgt_segment_state history;
		if (rec.type == CGT_REC_BLOCKS) {
			if (cgt_blocks_decode(&t, &rec, s.version, epoch, &e) < 0)
				break;
		} else if (rec.type == CGT_REC_MODULE || rec.type == CGT_REC_UNMAP) {
			epoch++;
		} else if (rec.type == CGT_REC_SEGMENT) {
			if (cgt_segment_decode(&history, &rec, &e) < 0)
				break;
			cgt_events_state_reset(&s);
			cgt_events_state_reset(&again);
			t.segment++;
		} else if (rec.type == CGT_REC_EVENTS) {
			if (round_trip(&rec, &t, &s, &again) < 0)
				break;
		}
	}
	free(f.data);
	cgt_events_state_free(&s);
	cgt_events_state_free(&again);
	cgt_block_table_free(&t);
	return 0;
}
