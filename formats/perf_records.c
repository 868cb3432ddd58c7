/*
 * Parsing the perf records that SIDEBAND records carry
 * (include/uapi/linux/perf_event.h documents their layouts).  Every read
 * is bounds-checked: a record comes from a file.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "trace.h"

struct reader {
	const uint8_t *p, *end;
};

static int get(struct reader *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return -1;
	memcpy(out, r->p, n);
	r->p += n;
	return 0;
}

static int get_u64(struct reader *r, uint64_t *v)
{
	return get(r, v, 8);
}

int cgt_perf_record_type(const uint8_t *rec, size_t len)
{
	struct perf_event_header h;
	if (len < sizeof(h))
		return -1;
	memcpy(&h, rec, sizeof(h));
	return h.size == len ? (int)h.type : -1;
}

static size_t sample_id_size(uint64_t sample_type)
{
	size_t n = 0;
	n += sample_type & PERF_SAMPLE_TID ? 8 : 0;
	n += sample_type & PERF_SAMPLE_TIME ? 8 : 0;
	n += sample_type & PERF_SAMPLE_ID ? 8 : 0;
	n += sample_type & PERF_SAMPLE_STREAM_ID ? 8 : 0;
	n += sample_type & PERF_SAMPLE_CPU ? 8 : 0;
	n += sample_type & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	return n;
}

int cgt_perf_sample_id_parse(const uint8_t *rec, size_t len, uint64_t sample_type,
			     struct cgt_perf_sample_id *out)
{
	size_t n = sample_id_size(sample_type);
	struct reader r = { rec + len - n, rec + len };
	uint64_t skip;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(struct perf_event_header) + n)
		return -1;
	if (sample_type & PERF_SAMPLE_TID) {
		get(&r, &out->pid, 4);
		get(&r, &out->tid, 4);
	}
	if (sample_type & PERF_SAMPLE_TIME)
		get_u64(&r, &out->time);
	if (sample_type & PERF_SAMPLE_ID)
		get_u64(&r, &out->id);
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		get_u64(&r, &skip);
	if (sample_type & PERF_SAMPLE_CPU) {
		get(&r, &out->cpu, 4);
		get(&r, &skip, 4);
	}
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		get_u64(&r, &out->id);
	return 0;
}

int cgt_perf_record_id(const uint8_t *rec, size_t len, uint64_t *id)
{
	int type = cgt_perf_record_type(rec, len);
	size_t hdr = sizeof(struct perf_event_header);

	if (type < 0 || len < hdr + 8)
		return -1;
	/* IDENTIFIER comes first in a sample and last in a sample_id. */
	memcpy(id, type == PERF_RECORD_SAMPLE ? rec + hdr : rec + len - 8, 8);
	return 0;
}

int cgt_perf_mmap2_parse(const uint8_t *rec, size_t len, struct cgt_perf_mmap2 *out)
{
	struct reader r = { rec + sizeof(struct perf_event_header), rec + len };
	struct perf_event_header h;
	uint8_t ids[24];

	memset(out, 0, sizeof(*out));
	if (cgt_perf_record_type(rec, len) != PERF_RECORD_MMAP2)
		return -1;
	memcpy(&h, rec, sizeof(h));
	if (get(&r, &out->pid, 4) < 0 || get(&r, &out->tid, 4) < 0 || get_u64(&r, &out->addr) < 0 ||
	    get_u64(&r, &out->len) < 0 || get_u64(&r, &out->pgoff) < 0 || get(&r, ids, 24) < 0 ||
	    get(&r, &out->prot, 4) < 0 || get(&r, &out->flags, 4) < 0)
		return -1;
	if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		out->build_id_len = ids[0] <= 20 ? ids[0] : 20;
		memcpy(out->build_id, ids + 4, out->build_id_len);
	}
	/* The name is NUL-terminated and padded to 8 bytes. */
	const uint8_t *nul = memchr(r.p, '\0', (size_t)(r.end - r.p));
	if (nul == NULL)
		return -1;
	out->filename = (const char *)r.p;
	return 0;
}

int cgt_perf_sample_parse(const uint8_t *rec, size_t len, uint64_t sample_type,
			  struct cgt_perf_sample *out)
{
	struct reader r = { rec + sizeof(struct perf_event_header), rec + len };
	uint64_t skip;
	const uint64_t known = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (cgt_perf_record_type(rec, len) != PERF_RECORD_SAMPLE || (sample_type & ~known) != 0)
		return -1;
	/* In the kernel's order (perf_output_sample). */
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		rc |= get_u64(&r, &out->id);
	if (sample_type & PERF_SAMPLE_IP)
		rc |= get_u64(&r, &out->ip);
	if (sample_type & PERF_SAMPLE_TID) {
		rc |= get(&r, &out->pid, 4);
		rc |= get(&r, &out->tid, 4);
	}
	if (sample_type & PERF_SAMPLE_TIME)
		rc |= get_u64(&r, &out->time);
	if (sample_type & PERF_SAMPLE_ADDR)
		rc |= get_u64(&r, &out->addr);
	if (sample_type & PERF_SAMPLE_CPU) {
		rc |= get(&r, &out->cpu, 4);
		rc |= get(&r, &skip, 4);
	}
	if (sample_type & PERF_SAMPLE_WEIGHT)
		rc |= get_u64(&r, &out->weight);
	if (sample_type & PERF_SAMPLE_DATA_SRC)
		rc |= get_u64(&r, &out->data_src);
	return rc == 0 && r.p == r.end ? 0 : -1;
}
