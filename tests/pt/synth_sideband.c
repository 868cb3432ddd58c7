/*
 * Perf records for the synthesized trace, laid out as the kernel lays
 * them out (include/uapi/linux/perf_event.h), each followed by the
 * sample_id of PT_SIDEBAND_SAMPLE_TYPE: {pid, tid}, time, {cpu, res}, id.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static void put(struct cgt_buf *b, const void *data, size_t n)
{
	uint8_t *p = cgt_buf_reserve(b, n);
	if (p == NULL) {
		fprintf(stderr, "pt-synth: out of memory\n");
		exit(1);
	}
	memcpy(p, data, n);
	b->len += n;
}

static void put_u32(struct cgt_buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_u64(struct cgt_buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void begin(struct sideband *s, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };
	s->rec.len = 0;
	put(&s->rec, &h, sizeof(h));
}

static void put_name(struct cgt_buf *b, const char *name)
{
	size_t n = strlen(name) + 1, padded = (n + 7) & ~(size_t)7;
	put(b, name, n);
	static const uint8_t zeros[8];
	put(b, zeros, padded - n);
}

/* Sets the record's size and writes it as a SIDEBAND record of CPU 0. */
static void emit(struct sideband *s)
{
	uint16_t size = (uint16_t)s->rec.len;
	memcpy(s->rec.data + 6, &size, 2);
	s->out.len = 0;
	if (cgt_sideband_encode(&s->out, 0, s->rec.data, s->rec.len) < 0 ||
	    cgt_writer_put(s->w, CGT_REC_SIDEBAND, s->out.data, s->out.len, &s->error) < 0) {
		fprintf(stderr, "pt-synth: %s\n", s->error.msg);
		exit(1);
	}
}

/* The sample_id, then the record goes out. */
static void finish(struct sideband *s, uint32_t tid, uint64_t time, uint64_t id)
{
	put_u32(&s->rec, s->pid);
	put_u32(&s->rec, tid);
	put_u64(&s->rec, time);
	put_u32(&s->rec, 0);	/* cpu */
	put_u32(&s->rec, 0);
	put_u64(&s->rec, id);
	emit(s);
}

void sideband_mmap2(struct sideband *s, uint32_t tid, uint64_t time, uint64_t addr, uint64_t len,
		    uint64_t pgoff, const char *path)
{
	begin(s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put_u32(&s->rec, s->pid);
	put_u32(&s->rec, tid);
	put_u64(&s->rec, addr);
	put_u64(&s->rec, len);
	put_u64(&s->rec, pgoff);
	put_u32(&s->rec, 8);	/* maj */
	put_u32(&s->rec, 1);	/* min */
	put_u64(&s->rec, 0);	/* ino */
	put_u64(&s->rec, 0);	/* ino_generation */
	put_u32(&s->rec, 5);	/* PROT_READ | PROT_EXEC */
	put_u32(&s->rec, 2);	/* MAP_PRIVATE */
	put_name(&s->rec, path);
	finish(s, tid, time, SYNTH_ID_SIDEBAND);
}

void sideband_comm_exec(struct sideband *s, uint32_t tid, uint64_t time, const char *comm)
{
	begin(s, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put_u32(&s->rec, s->pid);
	put_u32(&s->rec, tid);
	put_name(&s->rec, comm);
	finish(s, tid, time, SYNTH_ID_SIDEBAND);
}

void sideband_itrace_start(struct sideband *s, uint32_t tid, uint64_t time)
{
	begin(s, PERF_RECORD_ITRACE_START, 0);
	put_u32(&s->rec, s->pid);
	put_u32(&s->rec, tid);
	finish(s, tid, time, SYNTH_ID_TRACE);
}

void sideband_switch(struct sideband *s, uint32_t tid, uint64_t time, int out)
{
	begin(s, PERF_RECORD_SWITCH, out ? PERF_RECORD_MISC_SWITCH_OUT : 0);
	finish(s, tid, time, SYNTH_ID_SIDEBAND);
}

void sideband_aux(struct sideband *s, uint64_t time, uint64_t offset, uint64_t size, uint64_t flags)
{
	begin(s, PERF_RECORD_AUX, 0);
	put_u64(&s->rec, offset);
	put_u64(&s->rec, size);
	put_u64(&s->rec, flags);
	finish(s, s->pid, time, SYNTH_ID_TRACE);
}

void sideband_exit(struct sideband *s, uint32_t tid, uint64_t time)
{
	begin(s, PERF_RECORD_EXIT, 0);
	put_u32(&s->rec, s->pid);
	put_u32(&s->rec, s->pid);	/* ppid: not known, and not used */
	put_u32(&s->rec, tid);
	put_u32(&s->rec, tid);
	put_u64(&s->rec, time);
	finish(s, tid, time, SYNTH_ID_SIDEBAND);
}

void sideband_sample(struct sideband *s, int store, uint32_t tid, uint64_t time, uint64_t ip,
		     uint64_t addr)
{
	/* data_src: mem_op load (2) or store (4); the level is unknown. */
	uint64_t data_src = store ? PERF_MEM_OP_STORE : PERF_MEM_OP_LOAD;
	begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP);
	put_u64(&s->rec, store ? SYNTH_ID_STORES : SYNTH_ID_LOADS);
	put_u64(&s->rec, ip);
	put_u32(&s->rec, s->pid);
	put_u32(&s->rec, tid);
	put_u64(&s->rec, time);
	put_u64(&s->rec, addr);
	put_u32(&s->rec, 0);	/* cpu */
	put_u32(&s->rec, 0);
	put_u64(&s->rec, 4);	/* weight: a cache hit's latency */
	put_u64(&s->rec, data_src);
	emit(s);
}
