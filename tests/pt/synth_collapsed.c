/*
 * The collapsed source trace: a Valgrind-format trace with one block per
 * distinct (instruction, ops) and one execution per executed instruction,
 * so that the simulator sees exactly the source's accesses and branches in
 * order, REP iterations aside.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"

struct block_key {
	uint64_t ip;
	uint32_t len, n_ops, cond, indirect;
	uint64_t op_hash;
	uint32_t id;
};

struct collapsed {
	int fd;
	const char *path;
	struct cgt_writer *w;
	struct cgt_block_table table;
	struct block_key *keys;		/* open addressing, cap a power of two */
	size_t cap, n;
	struct cgt_buf blocks, events;
	uint32_t tid;			/* of the EVENTS record being filled */
	struct cgt_trace_counts counts;
	uint32_t max_tid;
	struct cgt_error error;
};

static void fail(struct collapsed *c)
{
	fprintf(stderr, "pt-synth: %s: %s\n", c->path, c->error.msg[0] ? c->error.msg : "out of memory");
	exit(1);
}

static void put(struct collapsed *c, unsigned type, struct cgt_buf *b)
{
	if (cgt_writer_put(c->w, type, b->data, b->len, &c->error) < 0)
		fail(c);
	b->len = 0;
}

struct collapsed *collapsed_open(const char *path, const struct cgt_trace_header *h)
{
	struct collapsed *c = calloc(1, sizeof(*c));
	struct cgt_buf b = { 0 };

	c->path = path;
	c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (c->fd < 0 || cgt_writer_open(&c->w, c->fd, path, &c->error) < 0)
		fail(c);
	c->cap = 1 << 16;
	c->keys = calloc(c->cap, sizeof(*c->keys));
	if (c->keys == NULL || cgt_header_encode(&b, h) < 0)
		fail(c);
	put(c, CGT_REC_HEADER, &b);
	cgt_buf_free(&b);
	return c;
}

void collapsed_module(struct collapsed *c, const struct cgt_module *m)
{
	struct cgt_buf b = { 0 };
	if (cgt_module_encode(&b, m) < 0)
		fail(c);
	put(c, CGT_REC_MODULE, &b);
	cgt_buf_free(&b);
}

static uint64_t ops_hash(const struct insn_exec *x)
{
	uint64_t h = 1469598103934665603ull;
	for (uint32_t k = 0; k < x->n_ops; k++)
		h = (h ^ ((uint64_t)x->ops[k].kind << 32 | x->ops[k].size)) * 1099511628211ull;
	return h;
}

/* The block of instruction x with its ops, defined on first use. */
static struct cgt_block *block_of(struct collapsed *c, const struct insn_exec *x)
{
	struct block_key key = { x->ip, x->len, x->n_ops, (uint32_t)x->cond, (uint32_t)x->indirect,
				 ops_hash(x), 0 };
	size_t i = (size_t)((key.ip * 0x9E3779B97F4A7C15ull ^ key.op_hash) >> 20) & (c->cap - 1);

	for (;; i = (i + 1) & (c->cap - 1)) {
		struct block_key *k = &c->keys[i];
		if (k->len == 0)
			break;
		if (k->ip == key.ip && k->len == key.len && k->n_ops == key.n_ops && k->cond == key.cond &&
		    k->indirect == key.indirect && k->op_hash == key.op_hash)
			return c->table.blocks[k->id];
	}
	if (2 * (c->n + 1) > c->cap) {
		fprintf(stderr, "pt-synth: too many distinct instructions\n");
		exit(1);
	}
	struct cgt_insn insn = { x->ip, x->len };
	struct cgt_op ops[67];
	uint32_t n = 0;
	ops[n++] = (struct cgt_op){ CGT_OP_INSN, 0, 0, 0 };
	for (uint32_t k = 0; k < x->n_ops; k++)
		ops[n++] = x->ops[k];
	if (x->cond)
		ops[n++] = (struct cgt_op){ CGT_OP_COND, 0, 0, 0 };
	if (x->indirect)
		ops[n++] = (struct cgt_op){ CGT_OP_INDIRECT, 0, 0, 0 };
	const char *why;
	if (cgt_block_table_add(&c->table, &insn, 1, ops, n, NULL, 0, &why) < 0) {
		fprintf(stderr, "pt-synth: a bad block at %#llx: %s\n", (unsigned long long)x->ip, why);
		exit(1);
	}
	struct cgt_block *blk = c->table.blocks[c->table.n - 1];
	key.id = blk->id;
	c->keys[i] = key;
	c->n++;
	if (cgt_blocks_encode(&c->blocks, blk) < 0)
		fail(c);
	return blk;
}

static void flush_events(struct collapsed *c)
{
	if (c->events.len == 0)
		return;
	/* Blocks are defined before the executions that use them. */
	if (c->blocks.len > 0)
		put(c, CGT_REC_BLOCKS, &c->blocks);
	if (cgt_events_finish(&c->events, &c->table) < 0)
		fail(c);
	put(c, CGT_REC_EVENTS, &c->events);
	/* Nothing encoded is left unwritten: a segment may begin here. */
	if (cgt_writer_segment_point(c->w, &c->table, &c->error) < 0)
		fail(c);
}

void collapsed_insn(struct collapsed *c, const struct insn_exec *x)
{
	if (c->events.len > (512u << 10) || (c->events.len > 0 && x->tid != c->tid))
		flush_events(c);
	if (c->events.len == 0) {
		c->tid = x->tid;
		if (cgt_events_begin(&c->events, &c->table, x->tid) < 0)
			fail(c);
	}
	struct cgt_block *blk = block_of(c, x);
	uint64_t values[66];
	uint32_t n = 0;
	for (uint32_t k = 0; k < x->n_ops; k++)
		if (cgt_op_has_value(x->ops[k].kind))
			values[n++] = x->values[k];
	if (x->indirect)
		values[n++] = x->target;
	/* Exit 1 is the COND op: the branch was taken. */
	uint32_t exit_ord = x->cond && x->taken ? 1 : 0;
	if (cgt_events_encode(&c->events, &c->table, blk, exit_ord, values) < 0)
		fail(c);
	struct cgt_exec e = { .block = blk, .n_ops = blk->ops_in_prefix[exit_ord],
			      .exit = exit_ord, .n_values = blk->values_in_prefix[exit_ord],
			      .tid = x->tid, .block_id = blk->id, .values = values };
	cgt_counts_add_exec(&c->counts, &e);
	if (x->tid > c->max_tid)
		c->max_tid = x->tid;
}

void collapsed_close(struct collapsed *c, const struct cgt_trace_end *end)
{
	struct cgt_buf b = { 0 };
	struct cgt_trace_end e = *end;

	flush_events(c);
	e.counts = c->counts;
	e.counts.blocks = c->table.n;
	e.counts.threads = c->max_tid;
	if (cgt_end_encode(&b, &e) < 0)
		fail(c);
	put(c, CGT_REC_END, &b);
	cgt_buf_free(&b);
	if (cgt_writer_close(c->w, &c->error) < 0 || close(c->fd) < 0)
		fail(c);
	cgt_buf_free(&c->blocks);
	cgt_buf_free(&c->events);
	cgt_block_table_free(&c->table);
	free(c->keys);
	free(c);
}
