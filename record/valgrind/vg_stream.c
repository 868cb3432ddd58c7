/*
 * Turns the Valgrind tool's stream (vg_protocol.h) into trace records:
 * HEADER once the tool has said hello, BLOCKS for its block descriptions,
 * EVENTS for runs of one thread's executions, MODULE and UNMAP for the
 * mappings, in the order the tool produced them.
 */
#include "vg_stream.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vg_protocol.h"

_Static_assert(CGT_RAW_OP_INSN == CGT_OP_INSN && CGT_RAW_OP_READ == CGT_OP_READ &&
		       CGT_RAW_OP_WRITE == CGT_OP_WRITE && CGT_RAW_OP_MODIFY == CGT_OP_MODIFY &&
		       CGT_RAW_OP_READ_GUARDED == CGT_OP_READ_GUARDED &&
		       CGT_RAW_OP_WRITE_GUARDED == CGT_OP_WRITE_GUARDED &&
		       CGT_RAW_OP_EXIT == CGT_OP_EXIT && CGT_RAW_OP_COND == CGT_OP_COND &&
		       CGT_RAW_OP_COND_INV == CGT_OP_COND_INV &&
		       CGT_RAW_OP_INDIRECT == CGT_OP_INDIRECT && CGT_RAW_OP_SP == CGT_OP_SP,
	       "the tool's op kinds are the trace's op kinds");
_Static_assert(CGT_RAW_JUMP_BORING == CGT_JUMP_BORING && CGT_RAW_JUMP_CALL == CGT_JUMP_CALL &&
		       CGT_RAW_JUMP_RETURN == CGT_JUMP_RETURN && CGT_RAW_JUMP_SYSCALL == CGT_JUMP_SYSCALL &&
		       CGT_RAW_JUMP_CLIENT_REQ == CGT_JUMP_CLIENT_REQUEST &&
		       CGT_RAW_JUMP_OTHER == CGT_JUMP_OTHER,
	       "the tool's jump kinds are the trace's");
_Static_assert(CGT_RAW_REQUEST_TEXT_MAX == CGT_REQUEST_TEXT_MAX, "a request's text fits the trace's");

/* An EVENTS or BLOCKS record is written once it holds this much. */
#define RECORD_TARGET (256 * 1024)

/* What has arrived reaches the file at least this often, so that a
   recording killed mid-run leaves a trace of nearly all of it. */
#define FLUSH_INTERVAL_NS 1000000000ull

/* How one execution of a block is laid out in the tool's buffer: a slot
   per op that is not an instruction fetch. */
enum slot_type { SLOT_VALUE, SLOT_GUARDED, SLOT_EXIT, SLOT_SP };

static inline size_t slot_bytes(uint8_t type)
{
	return type == SLOT_EXIT ? 1 : type == SLOT_GUARDED ? 9 : 8;
}

struct raw_layout {
	uint32_t trace_id;	/* the tool's ids skip the trace's cut blocks */
	uint32_t n_slots;
	uint32_t max_bytes;	/* of an execution that runs to the end */
	uint8_t *type;
	uint32_t *op;
	/* [n_exits + 1]: executions left by each exit ([0] ran to the end),
	   summed into the counts at the end (add_counts): one increment per
	   execution instead of seven. */
	uint64_t *execs;
};

struct vg_stream {
	const struct vg_transport *t;
	const uint8_t *p, *end;	/* the buffer being parsed */
	const uint8_t *buf_start;
	uint64_t buf_offset;	/* raw stream offset of buf_start */
	uint32_t buf_index;	/* its number, to hand it back */
	int in_buffer;		/* stopped in it at a FORK item */
	int expect_magic;	/* the next buffer begins a stream */
	uint64_t exec_item_end;	/* raw stream offset after the last EXEC item */

	struct cgt_writer *w;
	struct cgt_trace_header *header;
	struct cgt_block_table blocks;
	struct raw_layout *layouts;	/* by the tool's block id */
	/* The cut blocks defined (cut_block): trace id + 1 by cut_key.  Kept
	   apart from the layouts, which every execution reads. */
	struct cgt_map cuts;
	uint32_t n_layouts;
	size_t cap_layouts;
	uint32_t map_epoch;
	uint64_t *values;
	size_t values_cap;

	struct cgt_buf pending;	/* payload of the record being built */
	unsigned pending_type;	/* 0, CGT_REC_EVENTS or CGT_REC_BLOCKS */
	uint32_t tid;
	uint64_t threads_seen[4];	/* bit per tid below 256 */

	uint64_t flushed_ns;	/* when everything converted last went to the writer */

	struct vg_stream_result *res;
	struct cgt_error *e;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);	/* x86-64 is little-endian */
	return v;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static int bad_item(struct vg_stream *c, const char *what)
{
	return cgt_fail(c->e, cgt_err_corrupt,
			"internal error: the Valgrind tool sent %s at raw stream offset %llu", what,
			(unsigned long long)(c->buf_offset + (uint64_t)(c->p - c->buf_start)));
}

static int nomem(struct vg_stream *c)
{
	return cgt_fail(c->e, cgt_err_nomem, "out of memory");
}

static int flush_pending(struct vg_stream *c)
{
	if (c->pending_type == 0)
		return 0;
	if (c->pending_type == CGT_REC_EVENTS && cgt_events_finish(&c->pending, &c->blocks) < 0)
		return nomem(c);
	int rc = cgt_writer_put(c->w, c->pending_type, c->pending.data, c->pending.len, c->e);
	c->pending.len = 0;
	c->pending_type = 0;
	/* Nothing encoded is left unwritten: a segment may begin here. */
	return rc < 0 ? rc : cgt_writer_segment_point(c->w, &c->blocks, c->e);
}

static int put_record(struct vg_stream *c, unsigned type, struct cgt_buf *payload)
{
	int rc = flush_pending(c);
	return rc < 0 ? rc : cgt_writer_put(c->w, type, payload->data, payload->len, c->e);
}

static int begin_pending(struct vg_stream *c, unsigned type)
{
	/* An EVENTS record's stack pointers are appended when it is put. */
	if (c->pending_type == type && c->pending.len + c->blocks.sp_stream.len < RECORD_TARGET)
		return 0;
	int rc = flush_pending(c);
	if (rc < 0)
		return rc;
	c->pending_type = type;
	if (type == CGT_REC_EVENTS && cgt_events_begin(&c->pending, &c->blocks, c->tid) < 0)
		return nomem(c);
	return 0;
}

static int on_hello(struct vg_stream *c, const uint8_t *p, uint32_t len)
{
	if (len < 20 || le32(p) != CGT_RAW_VERSION)
		return bad_item(c, "a hello of another protocol version");
	c->header->max_access_size = le32(p + 4);
	c->header->vex = (struct cgt_vex_translation){ 1, le32(p + 12), le32(p + 16), le32(p + 8) };
	free(c->header->recorder);
	if (asprintf(&c->header->recorder, "valgrind-%.*s", (int)(len - 20), (const char *)p + 20) < 0)
		return nomem(c);
	struct cgt_buf b = { 0 };
	int rc = cgt_header_encode(&b, c->header);
	if (rc == 0)
		rc = put_record(c, CGT_REC_HEADER, &b);
	/* A frame of its own: a fork child's trace has its own in its place
	   (vg_session.c). */
	if (rc == 0)
		rc = cgt_writer_flush(c->w, c->e);
	cgt_buf_free(&b);
	c->res->header_written = rc == 0;
	return rc;
}

static int add_layout(struct vg_stream *c, uint32_t id, const struct cgt_block *blk)
{
	if (id >= c->cap_layouts &&
	    cgt_array_grow(&c->layouts, &c->cap_layouts, 0, (size_t)id + 1, sizeof(*c->layouts)) < 0)
		return nomem(c);
	struct raw_layout *l = &c->layouts[id];
	memset(l, 0, sizeof(*l));
	l->trace_id = blk->id;
	c->n_layouts = id + 1;
	l->type = malloc(blk->n_ops + 1);
	l->op = malloc((blk->n_ops + 1) * sizeof(*l->op));
	l->execs = calloc(blk->n_exits + 1, sizeof(*l->execs));
	if (l->type == NULL || l->op == NULL || l->execs == NULL)
		return nomem(c);
	for (uint32_t k = 0; k < blk->n_ops; k++) {
		unsigned kind = blk->ops[k].kind;
		if (kind == CGT_OP_INSN)
			continue;
		uint8_t type = cgt_op_is_exit(kind)	 ? SLOT_EXIT
			       : cgt_op_is_guarded(kind) ? SLOT_GUARDED
			       : kind == CGT_OP_SP	 ? SLOT_SP
							 : SLOT_VALUE;
		l->type[l->n_slots] = type;
		l->op[l->n_slots++] = k;
		l->max_bytes += (uint32_t)slot_bytes(type);
	}
	return 0;
}

static int on_block(struct vg_stream *c, const uint8_t *p, uint32_t len)
{
	if (len < 12)
		return bad_item(c, "a short block description");
	uint32_t id = le32(p), n_insns = le32(p + 4), n_ops = le32(p + 8);
	uint64_t ops_end = 12 + (uint64_t)n_insns * 9 + (uint64_t)n_ops * 8;
	if (id != c->n_layouts || n_insns > 4096 || n_ops > 65536 || len < ops_end)
		return bad_item(c, "a malformed block description");
	uint32_t trace_id = c->blocks.n;

	struct cgt_insn *insns = malloc((n_insns + 1) * sizeof(*insns));
	struct cgt_op *ops = malloc((n_ops + 1) * sizeof(*ops));
	struct cgt_jump *jumps = malloc((n_ops + 1) * sizeof(*jumps));
	int rc = 0;
	if (insns == NULL || ops == NULL || jumps == NULL) {
		rc = nomem(c);
		goto out;
	}
	const uint8_t *q = p + 12;
	for (uint32_t i = 0; i < n_insns; i++, q += 9) {
		insns[i].addr = le64(q);
		insns[i].len = q[8];
	}
	uint32_t n_exits = 0;
	for (uint32_t k = 0; k < n_ops; k++, q += 8) {
		ops[k].kind = q[0];
		ops[k].reserved = 0;
		ops[k].insn = (uint16_t)(q[2] | q[3] << 8);
		ops[k].size = le32(q + 4);
		n_exits += cgt_op_is_exit(ops[k].kind);
	}
	if (len != ops_end + (n_exits + 1) * 10) {
		rc = bad_item(c, "a malformed block description");
		goto out;
	}
	for (uint32_t k = 0; k <= n_exits; k++, q += 10)
		jumps[k] = (struct cgt_jump){ le64(q + 2), q[0], q[1] };
	const char *why;
	rc = cgt_block_table_add(&c->blocks, insns, n_insns, ops, n_ops, jumps, c->map_epoch, &why);
	if (rc == -cgt_err_nomem) {
		rc = nomem(c);
		goto out;
	}
	if (rc < 0) {
		rc = bad_item(c, why);
		goto out;
	}
	rc = add_layout(c, id, c->blocks.blocks[trace_id]);
	if (rc == 0 && n_ops > c->values_cap &&
	    cgt_array_grow(&c->values, &c->values_cap, 0, n_ops, sizeof(*c->values)) < 0)
		rc = nomem(c);
	if (rc == 0)
		rc = begin_pending(c, CGT_REC_BLOCKS);
	if (rc == 0 && cgt_blocks_encode(&c->pending, c->blocks.blocks[trace_id]) < 0)
		rc = nomem(c);
	c->res->counts.blocks = c->blocks.n;
out:
	free(insns);
	free(ops);
	free(jumps);
	return rc;
}

static int on_map(struct vg_stream *c, const uint8_t *p, uint32_t len)
{
	if (len < 28 || len > 28 + 4096)
		return bad_item(c, "a malformed mapping");
	struct cgt_module m = { 0 };
	m.start = le64(p);
	m.size = le64(p + 8);
	m.file_offset = le64(p + 16);
	m.prot = le32(p + 24) & 7;
	m.path = strndup((const char *)p + 28, len - 28);
	if (m.path == NULL)
		return nomem(c);
	cgt_module_identify(&m);
	record_keep_module(&c->res->build_ids, &m);
	struct cgt_buf b = { 0 };
	int rc = cgt_module_encode(&b, &m);
	if (rc == 0)
		rc = put_record(c, CGT_REC_MODULE, &b);
	cgt_buf_free(&b);
	free(m.path);
	c->map_epoch++;
	return rc;
}

static int on_unmap(struct vg_stream *c, const uint8_t *p)
{
	struct cgt_buf b = { 0 };
	int rc = cgt_unmap_encode(&b, le64(p), le64(p + 8));
	if (rc == 0)
		rc = put_record(c, CGT_REC_UNMAP, &b);
	cgt_buf_free(&b);
	c->map_epoch++;
	return rc;
}

static int on_thread(struct vg_stream *c, uint32_t tid)
{
	if (tid < 256) {
		uint64_t bit = 1ull << (tid & 63);
		if (!(c->threads_seen[tid >> 6] & bit))
			c->res->counts.threads++;
		c->threads_seen[tid >> 6] |= bit;
	}
	if (tid == c->tid)
		return 0;
	c->tid = tid;
	return flush_pending(c);	/* an EVENTS record holds one thread */
}

/* A client request or a signal, between the executions before and after
   it. */
static int on_mark(struct vg_stream *c, const struct cgt_mark *m)
{
	struct cgt_buf b = { 0 };
	if (m->kind == CGT_MARK_REQUEST)
		c->blocks.cachegrind_instr = cgt_cachegrind_instr_after(c->blocks.cachegrind_instr, m->code);
	int rc = cgt_mark_encode(&b, m) < 0 ? nomem(c) : put_record(c, cgt_mark_record_type(m), &b);
	cgt_buf_free(&b);
	return rc;
}

static int on_request(struct vg_stream *c, const uint8_t *p, uint32_t len)
{
	if (len < 8 || len > 8 + CGT_REQUEST_TEXT_MAX)
		return bad_item(c, "a malformed client request");
	char *text = strndup((const char *)p + 8, len - 8);
	if (text == NULL)
		return nomem(c);
	struct cgt_mark m = { CGT_MARK_REQUEST, le32(p), le32(p + 4), 0, 0, text };
	int rc = on_mark(c, &m);
	free(text);
	return rc;
}

static int on_signal(struct vg_stream *c, const uint8_t *p)
{
	if (p[8] != 1 && p[8] != 2)
		return bad_item(c, "a malformed signal");
	struct cgt_mark m = { p[8] == 1 ? CGT_MARK_SIGNAL_DELIVERED : CGT_MARK_SIGNAL_RETURNED,
			      le32(p), 0, le32(p + 4), p[9], NULL };
	return on_mark(c, &m);
}

/* One execution of blk left by exit exit_ord, into the EVENTS record being
   built, and its guarded accesses into the counts (the rest are counted
   by exit). */
static int put_exec(struct vg_stream *c, struct cgt_block *blk, uint32_t exit_ord,
		    const uint64_t *values, uint64_t sp)
{
	int rc = begin_pending(c, CGT_REC_EVENTS);
	if (rc < 0)
		return rc;
	if (cgt_events_encode(&c->pending, &c->blocks, blk, exit_ord, values) < 0 ||
	    (blk->has_sp && cgt_events_encode_sp(&c->blocks, blk, sp) < 0))
		return nomem(c);
	if (blk->n_guarded)
		cgt_counts_add_guarded(&c->res->counts, blk, exit_ord, values);
	return 0;
}

/* One execution: the block id is read; its slots follow. */
static int on_exec(struct vg_stream *c, uint32_t id)
{
	if (id >= c->n_layouts)
		return bad_item(c, "an execution of an undefined block");
	const struct raw_layout *l = &c->layouts[id];
	struct cgt_block *blk = c->blocks.blocks[l->trace_id];
	const uint8_t *p = c->p;
	uint64_t *values = c->values;
	uint32_t exit_ord = 0, exits = 0, j = 0;
	uint64_t sp = 0;
	int checked = (size_t)(c->end - p) < l->max_bytes;

	for (uint32_t s = 0; s < l->n_slots; s++) {
		if (checked) {
			size_t need = slot_bytes(l->type[s]);
			if ((size_t)(c->end - p) < need)
				return bad_item(c, "a truncated execution record");
		}
		switch (l->type[s]) {
		case SLOT_VALUE:
			values[j++] = le64(p);
			p += 8;
			break;
		case SLOT_SP:
			sp = le64(p);
			p += 8;
			break;
		case SLOT_GUARDED:
			values[j++] = p[0] ? le64(p + 1) : CGT_NO_ACCESS;
			p += 9;
			break;
		default:
			exits++;
			if (*p++) {
				exit_ord = exits;
				goto done;
			}
			break;
		}
	}
done:
	c->p = p;
	int rc = put_exec(c, blk, exit_ord, values, sp);
	if (rc == 0)
		l->execs[exit_ord]++;
	return rc;
}

/* Which access of an execution cut short by a fault at address at
   faulted: the first, in op order, that covers the address and that the
   protection there (prot: 1 read, 2 write) forbids -- those before it
   completed, and slots after it hold what earlier executions wrote, so the
   first such is the one.  Without an access the protection forbids (a
   SIGBUS past a file's end), the first that covers the address.  The
   search stops at an exit the slots say was taken: the fault came before
   it.  UINT32_MAX if none. */
static uint32_t faulted_op(const struct cgt_block *blk, const struct raw_layout *l,
			   const uint64_t *values, const uint8_t *taken, uint64_t at, uint32_t prot)
{
	for (int any = 0; any <= 1; any++) {
		uint32_t j = 0;
		for (uint32_t s = 0; s < l->n_slots; s++) {
			const struct cgt_op *op = &blk->ops[l->op[s]];
			if (l->type[s] == SLOT_EXIT) {
				if (taken[s])
					break;
				continue;
			}
			if (l->type[s] == SLOT_SP)
				continue;
			uint64_t addr = values[j++];
			if (op->kind == CGT_OP_INDIRECT || addr == CGT_NO_ACCESS || at - addr >= op->size)
				continue;
			int reads = op->kind != CGT_OP_WRITE && op->kind != CGT_OP_WRITE_GUARDED;
			int writes = op->kind != CGT_OP_READ && op->kind != CGT_OP_READ_GUARDED;
			if (any || (reads && !(prot & 1)) || (writes && !(prot & 2)))
				return l->op[s];
		}
	}
	return UINT32_MAX;
}

/* The block cut from raw block id after its op n_ops - 1 (kind: enum
   cgt_cut_kind), defined the first time: NULL if out of memory or not
   valid (e set). */
static struct cgt_block *cut_block(struct vg_stream *c, uint32_t id, uint32_t n_ops, unsigned kind)
{
	/* n_ops is at most 65536, kind 1 or 2 */
	const uint64_t key = (uint64_t)id << 20 | (uint64_t)n_ops << 2 | kind;
	void *known = cgt_map_get(&c->cuts, key);
	if (known != NULL)
		return c->blocks.blocks[(uint32_t)(uintptr_t)known - 1];
	const struct raw_layout *l = &c->layouts[id];
	const struct cgt_block *of = c->blocks.blocks[l->trace_id];
	uint32_t n_exits = 0;
	for (uint32_t k = 0; k < n_ops; k++)
		n_exits += cgt_op_is_exit(of->ops[k].kind);
	struct cgt_jump *jumps = NULL;
	if (of->jumps != NULL) {
		jumps = malloc((n_exits + 1) * sizeof(*jumps));
		if (jumps == NULL) {
			nomem(c);
			return NULL;
		}
		/* Left at the fault: no jump of the code's. */
		jumps[0] = (struct cgt_jump){ 0, CGT_JUMP_OTHER, 0 };
		memcpy(jumps + 1, of->jumps + 1, n_exits * sizeof(*jumps));
	}
	uint32_t trace_id = c->blocks.n;
	const char *why;
	int rc = cgt_block_table_add(&c->blocks, of->insns, of->ops[n_ops - 1].insn + 1u, of->ops,
				     n_ops, jumps, of->map_epoch, &why);
	free(jumps);
	if (rc == 0 && (why = cgt_block_mark_cut(&c->blocks, trace_id, l->trace_id, kind)) != NULL)
		rc = -1;
	if (rc < 0) {
		if (rc == -cgt_err_nomem)
			nomem(c);
		else
			bad_item(c, why);
		return NULL;
	}
	if (cgt_map_put(&c->cuts, key, (void *)(uintptr_t)(trace_id + 1u)) < 0) {
		nomem(c);
		return NULL;
	}
	struct cgt_block *blk = c->blocks.blocks[trace_id];
	if (begin_pending(c, CGT_REC_BLOCKS) < 0)
		return NULL;
	if (cgt_blocks_encode(&c->pending, blk) < 0) {
		nomem(c);
		return NULL;
	}
	c->res->counts.blocks = c->blocks.n;
	return blk;
}

/* An execution cut short by a fault (vg_protocol.h, CGT_RAW_CUT): an
   execution of a cut block, up to the access that faulted where the fault
   can be placed -- a SIGSEGV or SIGBUS at an address one of its accesses
   covers.  Others (a division's SIGFPE) keep only the block's entry, and
   are counted in res->cuts_unplaced: the instruction that faulted is not
   known (Valgrind keeps the guest's instruction pointer exact only where
   the block may end: its side exits and its end). */
static int on_cut(struct vg_stream *c, const uint8_t *p, uint32_t len)
{
	if (len < 28)
		return bad_item(c, "a short cut execution");
	uint32_t tid = le32(p), signo = le32(p + 4), prot = le32(p + 12);
	int32_t si_code = (int32_t)le32(p + 8);
	uint64_t at = le64(p + 16);
	const uint8_t *rec = p + 24, *end = p + len;
	uint32_t id = le32(rec);
	if (id >= c->n_layouts)
		return bad_item(c, "a cut execution of an undefined block");
	if (tid != c->tid)
		return bad_item(c, "a cut execution of a thread not running");
	const struct raw_layout *l = &c->layouts[id];
	const struct cgt_block *of = c->blocks.blocks[l->trace_id];
	uint8_t *taken = malloc(l->n_slots + 1);
	if (taken == NULL)
		return nomem(c);
	uint64_t sp = 0;
	uint32_t j = 0;
	const uint8_t *q = rec + 4;
	int rc = 0;
	for (uint32_t s = 0; s < l->n_slots && rc == 0; s++) {
		size_t need = slot_bytes(l->type[s]);
		if ((size_t)(end - q) < need) {
			rc = bad_item(c, "a truncated cut execution");
			break;
		}
		taken[s] = 0;
		switch (l->type[s]) {
		case SLOT_VALUE: c->values[j++] = le64(q); break;
		case SLOT_SP: sp = le64(q); break;
		case SLOT_GUARDED: c->values[j++] = q[0] == 1 ? le64(q + 1) : CGT_NO_ACCESS; break;
		default: taken[s] = *q != 0; break;
		}
		q += need;
	}
	uint32_t k = UINT32_MAX;
	if (rc == 0 && (signo == SIGSEGV || signo == SIGBUS) && si_code > 0)
		k = faulted_op(of, l, c->values, taken, at, prot);
	free(taken);
	if (rc < 0)
		return rc;
	struct cgt_block *blk = k != UINT32_MAX ? cut_block(c, id, k + 1, CGT_CUT_AT_ACCESS)
						: cut_block(c, id, 1u + of->has_sp, CGT_CUT_UNPLACED);
	if (blk == NULL)
		return -c->e->status;
	if ((rc = put_exec(c, blk, 0, c->values, sp)) < 0)
		return rc;
	cgt_counts_add_exits(&c->res->counts, blk, 0, 1);
	cgt_counts_add_uncounted(&c->res->uncounted, blk, 1);
	c->res->cuts_unplaced += k == UINT32_MAX;
	return 0;
}

/* The executions counted by exit into res->counts (on_exec counts their
   guarded accesses). */
static void add_counts(struct vg_stream *c)
{
	for (uint32_t id = 0; id < c->n_layouts; id++) {
		const struct cgt_block *blk = c->blocks.blocks[c->layouts[id].trace_id];
		for (uint32_t k = 0; c->layouts[id].execs != NULL && k <= blk->n_exits; k++)
			cgt_counts_add_exits(&c->res->counts, blk, k, c->layouts[id].execs[k]);
	}
}

/* Parses one buffer of whole items. */
static int parse_buffer(struct vg_stream *c)
{
	int rc = 0;

	while (c->p < c->end && rc == 0) {
		size_t avail = (size_t)(c->end - c->p);
		if (avail < 4)
			return bad_item(c, "a truncated item");
		uint32_t code = le32(c->p);
		if (code < CGT_RAW_CONTROL) {
			if (!c->res->header_written)
				return bad_item(c, "an execution before its hello");
			c->p += 4;
			rc = on_exec(c, code);
		} else if (code == CGT_RAW_EXEC) {
			c->p += 4;
			c->exec_item_end = c->buf_offset + (uint64_t)(c->p - c->buf_start);
		} else if (code == CGT_RAW_FORK) {
			if (avail < 8)
				return bad_item(c, "a truncated item");
			c->res->fork_pid = le32(c->p + 4);
			c->p += 8;
			/* What came before is the child's too. */
			rc = flush_pending(c);
			return rc < 0 ? rc : VG_STREAM_FORK;
		} else if (code == CGT_RAW_THREAD || code == CGT_RAW_UNMAP || code == CGT_RAW_SIGNAL) {
			size_t n = code == CGT_RAW_THREAD ? 8 : code == CGT_RAW_UNMAP ? 20 : 14;
			if (avail < n)
				return bad_item(c, "a truncated item");
			rc = code == CGT_RAW_THREAD ? on_thread(c, le32(c->p + 4))
			     : code == CGT_RAW_UNMAP ? on_unmap(c, c->p + 4)
						     : on_signal(c, c->p + 4);
			c->p += n;
		} else {
			uint32_t len = avail >= 8 ? le32(c->p + 4) : 0;
			if (avail < 8 || len > avail - 8)
				return bad_item(c, "a truncated item");
			const uint8_t *payload = c->p + 8;
			switch (code) {
			case CGT_RAW_HELLO: rc = on_hello(c, payload, len); break;
			case CGT_RAW_BLOCK: rc = on_block(c, payload, len); break;
			case CGT_RAW_MAP: rc = on_map(c, payload, len); break;
			case CGT_RAW_REQUEST: rc = on_request(c, payload, len); break;
			case CGT_RAW_CUT: rc = on_cut(c, payload, len); break;
			case CGT_RAW_FINI:
				if (len != 8)
					return bad_item(c, "a malformed fini");
				c->res->fini_seen = 1;
				c->res->exit_called = le32(payload) != 0;
				c->res->exit_code = (int32_t)le32(payload + 4);
				break;
			default: return bad_item(c, "an unknown item");
			}
			c->p += 8 + (size_t)len;
		}
	}
	return rc;
}

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : (int)got;
		got += (size_t)r;
	}
	return (int)got;
}

/* The next buffer from the tool: 1, 0 at the end of the stream, or an
   error. */
static int next_buffer(struct vg_stream *c)
{
	uint32_t msg[2];
	int n = read_full(c->t->ready[0], msg, sizeof(msg));
	if (n < 0)
		return cgt_fail(c->e, cgt_err_io, "reading from the Valgrind tool: %s", strerror(errno));
	if (n == 0) {
		if (!c->res->header_written)
			return cgt_fail(c->e, cgt_err_io, "the Valgrind tool did not start");
		c->res->truncated = !c->res->fini_seen;
		c->res->exec_ended = c->exec_item_end != 0 && c->exec_item_end == c->buf_offset;
		return 0;
	}
	if (n != (int)sizeof(msg) || msg[0] >= CGT_RAW_BUFFERS || msg[1] > CGT_RAW_BUFFER_SIZE)
		return cgt_fail(c->e, cgt_err_corrupt,
				"internal error: the Valgrind tool sent a bad buffer notice");
	c->buf_index = msg[0];
	c->buf_start = c->t->buffers + (size_t)msg[0] * CGT_RAW_BUFFER_SIZE;
	c->p = c->buf_start;
	c->end = c->p + msg[1];
	if (c->expect_magic) {
		if (msg[1] < CGT_RAW_MAGIC_LEN || memcmp(c->p, CGT_RAW_MAGIC, CGT_RAW_MAGIC_LEN) != 0)
			return cgt_fail(c->e, cgt_err_io,
					"the Valgrind tool is not cgtrace's or of another version");
		c->p += CGT_RAW_MAGIC_LEN;
		c->expect_magic = 0;
	}
	c->in_buffer = 1;
	return 1;
}

int vg_stream_run(struct vg_stream *c, const struct vg_transport *t, struct cgt_writer *w)
{
	c->t = t;
	c->w = w;
	for (;;) {
		int rc = c->in_buffer ? 1 : next_buffer(c);
		if (rc <= 0)
			return rc == 0 ? flush_pending(c) : rc;
		if ((rc = parse_buffer(c)) != 0)
			return rc;	/* an error, or a fork: the rest of the buffer is for later */
		c->in_buffer = 0;
		size_t len = (size_t)(c->end - c->buf_start);
		c->buf_offset += len;
		c->res->raw_bytes += len;
		uint64_t now = now_ns();
		if (now - c->flushed_ns >= FLUSH_INTERVAL_NS) {
			c->flushed_ns = now;
			if ((rc = flush_pending(c)) < 0 || (rc = cgt_writer_flush(c->w, c->e)) < 0)
				return rc;
		}
		/* Hand the buffer back; the tool may be gone already. */
		if (write(c->t->freed[1], &c->buf_index, sizeof(c->buf_index)) < 0 && errno != EPIPE)
			return cgt_fail(c->e, cgt_err_io, "writing to the Valgrind tool: %s",
					strerror(errno));
	}
}

void vg_stream_follow_child(struct vg_stream *c)
{
	c->in_buffer = 0;	/* the rest of it is the parent's */
	c->expect_magic = 1;
	c->buf_offset = 0;
	c->exec_item_end = 0;
	c->res->fork_pid = 0;
}

int vg_stream_open(struct vg_stream **out, struct cgt_trace_header *header,
		   struct vg_stream_result *res, struct cgt_error *e)
{
	struct vg_stream *c = calloc(1, sizeof(*c));
	*out = c;
	if (c == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	const char *build_id_dir = res->build_ids.dir;	/* the caller's */
	memset(res, 0, sizeof(*res));
	res->build_ids.dir = build_id_dir;
	c->header = header;
	c->res = res;
	c->e = e;
	c->expect_magic = 1;
	c->flushed_ns = now_ns();
	return 0;
}

void vg_stream_close(struct vg_stream *c)
{
	if (c == NULL)
		return;
	add_counts(c);
	for (uint32_t i = 0; i < c->n_layouts; i++) {
		free(c->layouts[i].type);
		free(c->layouts[i].op);
		free(c->layouts[i].execs);
	}
	free(c->layouts);
	free(c->values);
	cgt_buf_free(&c->pending);
	cgt_block_table_free(&c->blocks);
	cgt_map_free(&c->cuts);
	free(c);
}
