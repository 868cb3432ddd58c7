/*
 * pt-synth: Valgrind-backend trace -> the trace `cgtrace record
 * --backend=pt` would have written for the same execution, plus the
 * collapsed source trace to check the PT decoder against (synth.h).
 *
 *   pt-synth [options] SOURCE PT-OUT COLLAPSED-OUT
 *     --mem-period=N     a memory sample every N loads and N stores [1000]
 *     --psb-period=N     a PSB every N bytes of packets [4096]
 *     --retcomp=yes|no   compress returns [yes]
 *     --tnt64            TNT-64 packets instead of TNT-8
 *     --tsc-every=N      a TSC before every Nth TNT/TIP packet, 0 none [1]
 *     --overflow-at=K    an internal overflow at instruction K: the next
 *                        1000 instructions are lost
 *     --truncate-aux-at=K  the AUX piece holding byte K is cut short and
 *                        marked truncated, as when the buffer fills
 *     --corrupt-at=K     64 bytes of packets from byte K are garbage
 *     --aux-chunk=N      bytes per AUX record [65536]
 *
 * The program's instructions come from the source trace in order; their
 * bytes from the module files, classified by decode/pt/x86_insn.c.  Time
 * is virtual: 3 TSC ticks per instruction, and perf time = TSC.  A thread
 * switch of the source (Valgrind runs one thread at a time) becomes an
 * asynchronous stop, context-switch records and a PSB+ before the next
 * thread's TIP.PGE, as per-task events show it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "pt/x86_insn.h"
#include "pt_packets.h"
#include "synth.h"

#define TSC_PER_INSN 3
#define TSC_BASE 1000000000ull
#define OVERFLOW_GAP 1000

struct options {
	uint64_t mem_period, psb_period, tsc_every, overflow_at, truncate_at, corrupt_at, aux_chunk;
	int retcomp, tnt64;
	const char *source, *pt_out, *collapsed_out;
};

/* ---- Pass 1: where each thread resumes after being switched out ------ */

struct resume {
	uint64_t *ip;		/* per switch, in order; 0: the thread never resumes */
	size_t n, cap;
};

static void scan_switches(struct cgt_decoder *d, struct resume *r)
{
	struct cgt_batch b;
	struct cgt_error e;
	size_t pending[1024];	/* per tid: the switch it is waiting to resume from, +1 */
	uint32_t last_tid = 0;
	int rc;

	memset(pending, 0, sizeof(pending));
	while ((rc = cgt_decoder_next(d, &b, &e)) > 0) {
		struct cgt_exec exec = { 0 };
		while ((rc = cgt_batch_next(&b, &exec, &e)) > 0) {
			const struct cgt_exec *x = &exec;
			if (x->tid >= 1024) {
				fprintf(stderr, "pt-synth: thread %u: too many threads\n", x->tid);
				exit(1);
			}
			if (pending[x->tid] != 0) {
				r->ip[pending[x->tid] - 1] = x->block->insns[0].addr;
				pending[x->tid] = 0;
			}
			if (last_tid != 0 && x->tid != last_tid) {
				if (r->n == r->cap) {
					r->cap = r->cap ? r->cap * 2 : 256;
					r->ip = realloc(r->ip, r->cap * sizeof(*r->ip));
				}
				r->ip[r->n++] = 0;
				pending[last_tid] = r->n;
			}
			last_tid = x->tid;
		}
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		fprintf(stderr, "pt-synth: %s\n", e.msg);
		exit(1);
	}
}

/* ---- Pass 2 ------------------------------------------------------------ */

struct synth {
	const struct options *o;
	const struct cgt_decoder *map;	/* pass 1's decoder: every mapping */
	struct pt_stream pt;
	struct sideband sb;
	struct collapsed *col;
	struct resume resume;
	size_t switches;
	uint64_t index;			/* instructions emitted */
	uint64_t loads, stores;		/* for the sampling period */
	uint64_t skip_until;		/* lost in an overflow up to this index */
	uint32_t tid;			/* running thread (source numbering) */
	uint32_t pid;
	int have_prev;
	struct insn_exec prev;
	const struct x86_insn *prev_insn;
};

static uint64_t tsc_now(const struct synth *s)
{
	return TSC_BASE + s->index * TSC_PER_INSN;
}

static uint32_t kernel_tid(const struct synth *s, uint32_t tid)
{
	return s->pid + tid - 1;
}

static void samples(struct synth *s, const struct insn_exec *x)
{
	for (uint32_t k = 0; k < x->n_ops; k++) {
		unsigned kind = x->ops[k].kind;
		int load = kind == CGT_OP_READ || kind == CGT_OP_MODIFY || kind == CGT_OP_READ_GUARDED;
		int store = kind == CGT_OP_WRITE || kind == CGT_OP_WRITE_GUARDED;
		if ((!load && !store) || x->values[k] == CGT_NO_ACCESS)
			continue;
		uint64_t *counter = load ? &s->loads : &s->stores;
		if (++*counter % s->o->mem_period == 0)
			sideband_sample(&s->sb, store, kernel_tid(s, x->tid), tsc_now(s), x->ip, x->values[k]);
	}
}

/* The successor an instruction would have had without an asynchronous
   event; 0 if any is possible. */
static uint64_t expected_next(const struct insn_exec *x, const struct x86_insn *in, uint64_t next)
{
	switch (in->branch) {
	case X86_NOT_BRANCH:
		return x->ip + x->len;
	case X86_COND:
		return next == in->target || next == x->ip + x->len ? next : x->ip + x->len;
	case X86_JUMP:
	case X86_CALL:
		return in->target;
	default:
		return 0;
	}
}

/* Emits instruction x, whose thread continues at next (0: not known);
   with stop, the thread is switched out (or ends) after it. */
static void emit(struct synth *s, struct insn_exec *x, const struct x86_insn *in, uint64_t next,
		 int stop)
{
	struct pt_stream *pt = &s->pt;
	int lost = s->index < s->skip_until;

	if (!lost) {
		pt->tsc = tsc_now(s);
		pt_stream_maybe_psb(pt, x->ip);
	}
	if (in->branch == X86_COND) {
		x->cond = 1;
		x->taken = next != 0 && next != x->ip + x->len;
	}
	if (in->branch == X86_INDIRECT_JUMP || in->branch == X86_INDIRECT_CALL) {
		x->indirect = 1;
		x->target = next;
	}
	collapsed_insn(s->col, x);
	samples(s, x);
	s->index++;
	if (lost)
		return;
	if (s->o->overflow_at != 0 && s->index == s->o->overflow_at) {
		s->skip_until = s->index + OVERFLOW_GAP;
		return;
	}
	switch (in->branch) {
	case X86_COND:
		pt_stream_cond(pt, x->taken);
		break;
	case X86_CALL:
		if (in->pushes_return)
			pt_stream_call(pt, x->ip + x->len);
		break;
	case X86_INDIRECT_CALL:
		pt_stream_tip(pt, next);
		pt_stream_call(pt, x->ip + x->len);
		break;
	case X86_INDIRECT_JUMP:
		pt_stream_tip(pt, next);
		break;
	case X86_RETURN:
		pt_stream_return(pt, next);
		break;
	case X86_SYSCALL:
	case X86_FAR:
		/* User-only tracing pauses in the kernel. */
		pt_stream_disable(pt);
		if (next != 0 && !stop) {
			pt->tsc = tsc_now(s);
			pt_stream_enable(pt, next);
		}
		return;
	default:
		break;
	}
	uint64_t expected = expected_next(x, in, next);
	if (stop) {
		pt_stream_disable_before(pt, next != 0 ? next : expected != 0 ? expected : x->ip + x->len);
	} else if (next != 0 && expected != 0 && expected != next) {
		/* A signal: the kernel took over before `expected`. */
		pt_stream_disable_before(pt, expected);
		pt->tsc = tsc_now(s);
		pt_stream_enable(pt, next);
	}
}

/* The instruction after a gap of lost ones: tracing resumes there. */
static void resume_after_overflow(struct synth *s, uint64_t ip)
{
	if (s->skip_until != 0 && s->index == s->skip_until) {
		s->pt.tsc = tsc_now(s);
		pt_stream_overflow(&s->pt, ip);
		s->skip_until = 0;
	}
}

/* A new instruction of the source arrives: the previous one can go. */
static void next_insn(struct synth *s, struct insn_exec *x, const struct x86_insn *in)
{
	if (s->have_prev && x->tid == s->prev.tid) {
		/* REP iterations: the first execution stands for them all. */
		if (s->prev_insn->caveat & X86_REP && x->ip == s->prev.ip)
			return;
		emit(s, &s->prev, s->prev_insn, x->ip, 0);
		resume_after_overflow(s, x->ip);
	} else if (s->have_prev) {
		/* A thread switch. */
		uint64_t resume = s->switches < s->resume.n ? s->resume.ip[s->switches] : 0;
		s->switches++;
		emit(s, &s->prev, s->prev_insn, resume, 1);
		uint64_t now = tsc_now(s);
		sideband_switch(&s->sb, kernel_tid(s, s->prev.tid), now, 1);
		sideband_switch(&s->sb, kernel_tid(s, x->tid), now, 0);
		s->pt.tsc = now;
		pt_stream_psb_disabled(&s->pt);
		pt_stream_enable(&s->pt, x->ip);
	} else {
		s->pt.tsc = tsc_now(s);
		pt_stream_enable(&s->pt, x->ip);
	}
	s->prev = *x;
	s->prev_insn = in;
	s->have_prev = 1;
}

static void walk(struct synth *s, struct cgt_decoder *d)
{
	struct cgt_batch b;
	struct cgt_error e;
	int rc;

	while ((rc = cgt_decoder_next(d, &b, &e)) > 0) {
		struct cgt_exec exec = { 0 };
		while ((rc = cgt_batch_next(&b, &exec, &e)) > 0) {
			const struct cgt_exec *ex = &exec;
			const struct cgt_block *blk = ex->block;
			struct insn_exec x = { 0 };
			const struct x86_insn *in = NULL;
			uint32_t j = 0;	/* value ordinal */
			int open = 0;
			for (uint32_t k = 0; k < ex->n_ops; k++) {
				const struct cgt_op *op = &blk->ops[k];
				uint64_t v = cgt_op_has_value(op->kind) ? ex->values[j++] : 0;
				if (op->kind == CGT_OP_INSN) {
					if (open)
						next_insn(s, &x, in);
					const struct cgt_insn *ins = &blk->insns[op->insn];
					memset(&x, 0, offsetof(struct insn_exec, ops));
					x.tid = ex->tid;
					x.ip = ins->addr;
					x.len = ins->len;
					in = code_classify(s->map, blk->map_epoch, ins->addr);
					open = 1;
				} else if (op->kind >= CGT_OP_READ && op->kind <= CGT_OP_WRITE_GUARDED &&
					   x.n_ops < 64) {
					x.ops[x.n_ops] = (struct cgt_op){ op->kind, 0, 0, op->size };
					x.values[x.n_ops++] = v;
				}
			}
			if (open)
				next_insn(s, &x, in);
		}
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		fprintf(stderr, "pt-synth: %s\n", e.msg);
		exit(1);
	}
}

/* ---- The PT trace's records ------------------------------------------- */

static void put_record(struct sideband *sb, unsigned type, struct cgt_buf *b)
{
	if (cgt_writer_put(sb->w, type, b->data, b->len, &sb->error) < 0) {
		fprintf(stderr, "pt-synth: %s\n", sb->error.msg);
		exit(1);
	}
	b->len = 0;
}

static void write_config(struct sideband *sb, const struct options *o)
{
	uint64_t trace_ids[2] = { SYNTH_ID_TRACE, SYNTH_ID_SIDEBAND }, load_id = SYNTH_ID_LOADS,
		 store_id = SYNTH_ID_STORES;
	struct cgt_pt_config c = { 0 };
	struct cgt_buf b = { 0 };

	/* perf time = TSC: time = zero + (tsc >> 10) * 1024 + ((tsc & 1023) * 1024 >> 10) */
	c.time_shift = 10;
	c.time_mult = 1024;
	c.time_zero = 0;
	c.cap_user_time_zero = 1;
	c.n_events = 3;
	c.events[0] = (struct cgt_pt_event){ CGT_PT_EVENT_TRACE, 8, 1u << 10, 0,
					     PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
						     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
					     1, 2, trace_ids };
	uint64_t mem_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_WEIGHT |
			    PERF_SAMPLE_DATA_SRC;
	c.events[1] = (struct cgt_pt_event){ CGT_PT_EVENT_MEM_LOADS, 4, 0x1cd, 3, mem_type,
					     o->mem_period, 1, &load_id };
	c.events[2] = (struct cgt_pt_event){ CGT_PT_EVENT_MEM_STORES, 4, 0x82d0, 0, mem_type,
					     o->mem_period, 1, &store_id };
	if (cgt_pt_config_encode(&b, &c) < 0)
		exit(1);
	put_record(sb, CGT_REC_PT_CONFIG, &b);
	cgt_buf_free(&b);
}

/* The packet stream as AUX records, with PERF_RECORD_AUX sideband for
   each piece (one cut short and marked truncated, if asked). */
static void write_aux(struct sideband *sb, const struct options *o, const uint8_t *data, size_t len,
		      uint64_t time)
{
	struct cgt_buf b = { 0 };
	uint64_t offset = 0;

	for (size_t done = 0; done < len;) {
		size_t n = len - done < o->aux_chunk ? len - done : o->aux_chunk;
		uint64_t flags = 0;
		size_t keep = n;
		if (o->truncate_at != 0 && o->truncate_at >= done && o->truncate_at < done + n) {
			keep = (size_t)(o->truncate_at - done);
			flags = PERF_AUX_FLAG_TRUNCATED;
		}
		if (keep > 0) {
			if (cgt_aux_encode(&b, 0, offset, data + done, keep) < 0)
				exit(1);
			put_record(sb, CGT_REC_AUX, &b);
		}
		sideband_aux(sb, time, offset, keep, flags);
		offset += keep;
		done += n;
	}
	cgt_buf_free(&b);
}

static int parse(int argc, char **argv, struct options *o)
{
	*o = (struct options){ 1000, 4096, 1, 0, 0, 0, 65536, 1, 0, NULL, NULL, NULL };
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		char *a = argv[i], *v = strchr(a, '=');
		uint64_t n = v ? strtoull(v + 1, NULL, 10) : 0;
		if (strncmp(a, "--mem-period=", 13) == 0 && n > 0)
			o->mem_period = n;
		else if (strncmp(a, "--psb-period=", 13) == 0)
			o->psb_period = n;
		else if (strcmp(a, "--retcomp=yes") == 0 || strcmp(a, "--retcomp=no") == 0)
			o->retcomp = a[10] == 'y';
		else if (strcmp(a, "--tnt64") == 0)
			o->tnt64 = 1;
		else if (strncmp(a, "--tsc-every=", 12) == 0)
			o->tsc_every = n;
		else if (strncmp(a, "--overflow-at=", 14) == 0)
			o->overflow_at = n;
		else if (strncmp(a, "--truncate-aux-at=", 18) == 0)
			o->truncate_at = n;
		else if (strncmp(a, "--corrupt-at=", 13) == 0)
			o->corrupt_at = n;
		else if (strncmp(a, "--aux-chunk=", 12) == 0 && n > 0)
			o->aux_chunk = n;
		else
			return -1;
	}
	if (argc - i != 3)
		return -1;
	o->source = argv[i];
	o->pt_out = argv[i + 1];
	o->collapsed_out = argv[i + 2];
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct cgt_decoder *d1, *d2;
	struct cgt_error e;
	static struct synth s;

	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: pt-synth [--mem-period=N] [--psb-period=N] [--retcomp=yes|no] "
				"[--tnt64] [--tsc-every=N]\n                [--overflow-at=K] "
				"[--truncate-aux-at=K] [--corrupt-at=K] [--aux-chunk=N]\n"
				"                SOURCE PT-OUT COLLAPSED-OUT\n");
		return 2;
	}
	const struct cgt_decoder_options talk = { .notes = stderr };
	if (cgt_decoder_open(&d1, o.source, &talk, &e) < 0 || cgt_decoder_open(&d2, o.source, &talk, &e) < 0) {
		fprintf(stderr, "pt-synth: %s\n", e.msg);
		return 1;
	}
	s.o = &o;
	s.map = d1;
	scan_switches(d1, &s.resume);

	const struct cgt_trace_header *h = cgt_decoder_header(d1);
	s.pid = (uint32_t)h->pid;
	s.col = collapsed_open(o.collapsed_out, h);
	int fd = open(o.pt_out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0 || cgt_writer_open(&s.sb.w, fd, o.pt_out, &e) < 0) {
		fprintf(stderr, "pt-synth: %s: %s\n", o.pt_out, fd < 0 ? strerror(errno) : e.msg);
		return 1;
	}
	s.sb.pid = s.pid;

	struct cgt_trace_header pth = *h;
	struct cgt_buf b = { 0 };
	pth.backend = "pt";
	pth.recorder = "pt-synth";
	if (cgt_header_encode(&b, &pth) < 0)
		return 1;
	put_record(&s.sb, CGT_REC_HEADER, &b);
	write_config(&s.sb, &o);

	/* The module map: MODULE records for the symboliser, MMAP2 records
	   as the kernel would send them. */
	const struct cgt_mapping *maps;
	size_t n_maps = cgt_decoder_mappings(d1, &maps);
	sideband_comm_exec(&s.sb, s.pid, TSC_BASE - 2, h->argv[0]);
	for (size_t i = 0; i < n_maps; i++) {
		const struct cgt_module *m = &maps[i].module;
		if (cgt_module_encode(&b, m) < 0)
			return 1;
		put_record(&s.sb, CGT_REC_MODULE, &b);
		collapsed_module(s.col, m);
		sideband_mmap2(&s.sb, s.pid, TSC_BASE - 1, m->start, m->size, m->file_offset, m->path);
	}
	sideband_itrace_start(&s.sb, s.pid, TSC_BASE - 1);

	s.pt.retcomp = o.retcomp;
	s.pt.tnt64 = o.tnt64;
	s.pt.psb_period = o.psb_period;
	s.pt.tsc_every = o.tsc_every;
	if (pt_stream_init(&s.pt) < 0)
		return 1;
	walk(&s, d2);
	if (s.have_prev)
		emit(&s, &s.prev, s.prev_insn, 0, 1);
	size_t len = pt_stream_flush(&s.pt);
	for (uint64_t i = o.corrupt_at; o.corrupt_at != 0 && i < o.corrupt_at + 64 && i < len; i++)
		s.pt.data[i] = (uint8_t)(i * 0x9d + 0x17);
	write_aux(&s.sb, &o, s.pt.data, len, tsc_now(&s));
	sideband_exit(&s.sb, s.pid, tsc_now(&s));

	const struct cgt_trace_end *end = cgt_decoder_end(d1);
	struct cgt_trace_end pend = { CGT_END_EXIT, 0, { 0 } };
	if (end != NULL) {
		pend.kind = end->kind;
		pend.code = end->code;
	}
	if (cgt_end_encode(&b, &pend) < 0)
		return 1;
	put_record(&s.sb, CGT_REC_END, &b);
	if (cgt_writer_close(s.sb.w, &e) < 0 || close(fd) < 0) {
		fprintf(stderr, "pt-synth: %s\n", e.msg);
		return 1;
	}
	collapsed_close(s.col, &pend);
	fprintf(stderr, "pt-synth: %llu instructions, %zu bytes of packets, %llu loads and %llu stores\n",
		(unsigned long long)s.index, len, (unsigned long long)s.loads,
		(unsigned long long)s.stores);
	cgt_buf_free(&b);
	pt_stream_free(&s.pt);
	cgt_decoder_close(d1);
	cgt_decoder_close(d2);
	return 0;
}
