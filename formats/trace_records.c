/*
 * Codecs of the small records: HEADER, MODULE, UNMAP and END
 * (TRACE-FORMAT.md, "Records").
 */
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "put.h"
#include "trace.h"
#include "varint.h"

enum header_key {
	HK_BACKEND = 1,
	HK_ARGV = 2,
	HK_CWD = 3,
	HK_PID = 4,
	HK_CPU_VENDOR = 5,
	HK_CPU_NAME = 6,
	HK_CPU_SIGNATURE = 7,
	HK_CACHE = 8,
	HK_PAGE_SIZE = 9,
	HK_START_TIME = 10,
	HK_RECORDER = 11,
	HK_MAX_ACCESS = 12,
	HK_PT_DECODED = 13,
	HK_VEX = 14,
	HK_FORKED_FROM = 15,
};

const char *cgt_record_type_name(unsigned type)
{
	switch (type) {
	case CGT_REC_HEADER: return "HEADER";
	case CGT_REC_MODULE: return "MODULE";
	case CGT_REC_UNMAP: return "UNMAP";
	case CGT_REC_BLOCKS: return "BLOCKS";
	case CGT_REC_EVENTS: return "EVENTS";
	case CGT_REC_END: return "END";
	case CGT_REC_PT_CONFIG: return "PT_CONFIG";
	case CGT_REC_SIDEBAND: return "SIDEBAND";
	case CGT_REC_AUX: return "AUX";
	case CGT_REC_IMAGE: return "IMAGE";
	case CGT_REC_SEGMENT: return "SEGMENT";
	case CGT_REC_REQUEST: return "REQUEST";
	case CGT_REC_SIGNAL: return "SIGNAL";
	default: return "unknown";
	}
}

int cgt_header_encode(struct cgt_buf *b, const struct cgt_trace_header *h)
{
	struct cgt_buf argv = { 0 };
	int rc = put_varint(&argv, h->argc);

	for (uint32_t i = 0; i < h->argc && rc == 0; i++)
		rc = put_string(&argv, h->argv[i]);
	if (rc == 0)
		rc = put_string_field(b, HK_BACKEND, h->backend);
	if (rc == 0)
		rc = put_field(b, HK_ARGV, &argv);
	cgt_buf_free(&argv);
	if (rc == 0)
		rc = put_string_field(b, HK_CWD, h->cwd);
	if (rc == 0)
		rc = put_varints_field(b, HK_PID, &h->pid, 1);
	if (rc == 0)
		rc = put_string_field(b, HK_CPU_VENDOR, h->cpu_vendor);
	if (rc == 0)
		rc = put_string_field(b, HK_CPU_NAME, h->cpu_name);
	if (rc == 0) {
		uint64_t sig[3] = { h->cpu_family, h->cpu_model, h->cpu_stepping };
		rc = put_varints_field(b, HK_CPU_SIGNATURE, sig, 3);
	}
	for (uint32_t i = 0; i < h->n_caches && rc == 0; i++) {
		const struct cgt_cache_geom *c = &h->caches[i];
		uint64_t v[5] = { c->level, c->type, c->size, c->assoc, c->line };
		rc = put_varints_field(b, HK_CACHE, v, 5);
	}
	if (rc == 0) {
		uint64_t v = h->page_size;
		rc = put_varints_field(b, HK_PAGE_SIZE, &v, 1);
	}
	if (rc == 0)
		rc = put_varints_field(b, HK_START_TIME, &h->start_time_ns, 1);
	if (rc == 0)
		rc = put_string_field(b, HK_RECORDER, h->recorder);
	if (rc == 0) {
		uint64_t v = h->max_access_size;
		rc = put_varints_field(b, HK_MAX_ACCESS, &v, 1);
	}
	if (rc == 0 && h->decoded.present) {
		const struct cgt_pt_decoded *d = &h->decoded;
		uint64_t v[] = { d->decoder_version, d->source_size, cgt_zigzag(d->source_mtime_ns),
				 d->insns, d->errors, d->bytes_skipped, d->overflows, d->breaks,
				 d->modules_left_out, d->sideband_lost, d->mem_period, d->samples,
				 d->samples_placed };
		rc = put_varints_field(b, HK_PT_DECODED, v, sizeof(v) / sizeof(v[0]));
	}
	if (rc == 0 && h->vex.present) {
		uint64_t v[3] = { h->vex.guest_chase, h->vex.unroll_thresh, h->vex.max_insns };
		rc = put_varints_field(b, HK_VEX, v, 3);
	}
	if (rc == 0 && h->forked_from != 0)
		rc = put_varints_field(b, HK_FORKED_FROM, &h->forked_from, 1);
	return rc;
}

static int decode_header_field(void *obj, unsigned key, struct cursor *f)
{
	struct cgt_trace_header *h = obj;
	int rc = 0;

	switch (key) {
	case HK_BACKEND:
		rc = cursor_rest_string(f, &h->backend);
		break;
	case HK_ARGV: {
		uint64_t argc;
		if (h->argv != NULL)
			return cursor_fail(f, "one command line field");
		rc = cursor_bounded(f, &argc, (uint64_t)(f->end - f->p), "an argument count");
		if (rc < 0)
			return rc;
		h->argv = calloc(argc + 1, sizeof(char *));
		if (h->argv == NULL)
			return cgt_fail(f->e, cgt_err_nomem, "out of memory");
		for (uint64_t i = 0; i < argc && rc == 0; i++) {
			rc = cursor_string(f, &h->argv[i], CGT_ARG_MAX,
					   "a command-line argument (at most 128 KiB)");
			if (rc == 0)
				h->argc = (uint32_t)(i + 1);
		}
		break;
	}
	case HK_CWD:
		rc = cursor_rest_string(f, &h->cwd);
		break;
	case HK_PID:
		rc = cursor_varint(f, &h->pid, "the process id");
		break;
	case HK_CPU_VENDOR:
		rc = cursor_rest_string(f, &h->cpu_vendor);
		break;
	case HK_CPU_NAME:
		rc = cursor_rest_string(f, &h->cpu_name);
		break;
	case HK_CPU_SIGNATURE:
		rc = cursor_u32(f, &h->cpu_family, "the CPU family");
		if (rc == 0)
			rc = cursor_u32(f, &h->cpu_model, "the CPU model");
		if (rc == 0)
			rc = cursor_u32(f, &h->cpu_stepping, "the CPU stepping");
		break;
	case HK_CACHE: {
		struct cgt_cache_geom g;
		if (h->n_caches == CGT_MAX_CACHES)
			return cursor_fail(f, "at most 8 cache descriptions");
		rc = cursor_u32(f, &g.level, "a cache level");
		if (rc == 0)
			rc = cursor_u32(f, &g.type, "a cache type");
		if (rc == 0)
			rc = cursor_varint(f, &g.size, "a cache size");
		if (rc == 0)
			rc = cursor_u32(f, &g.assoc, "a cache associativity");
		if (rc == 0)
			rc = cursor_u32(f, &g.line, "a cache line size");
		if (rc == 0 && (g.type < CGT_CACHE_DATA || g.type > CGT_CACHE_UNIFIED))
			return cursor_fail(f, "a cache type 1-3");
		if (rc == 0)
			h->caches[h->n_caches++] = g;
		break;
	}
	case HK_PAGE_SIZE:
		rc = cursor_u32(f, &h->page_size, "the page size");
		break;
	case HK_START_TIME:
		rc = cursor_varint(f, &h->start_time_ns, "the start time");
		break;
	case HK_RECORDER:
		rc = cursor_rest_string(f, &h->recorder);
		break;
	case HK_MAX_ACCESS:
		rc = cursor_u32(f, &h->max_access_size, "the largest access size");
		break;
	case HK_PT_DECODED: {
		struct cgt_pt_decoded *d = &h->decoded;
		uint64_t mtime = 0;
		uint64_t *fields[] = { &d->source_size, &mtime, &d->insns, &d->errors, &d->bytes_skipped,
				       &d->overflows, &d->breaks, &d->modules_left_out, &d->sideband_lost,
				       &d->mem_period, &d->samples, &d->samples_placed };
		rc = cursor_u32(f, &d->decoder_version, "the PT decoder's version");
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && rc == 0; i++)
			rc = cursor_varint(f, fields[i], "a PT decoding figure");
		d->source_mtime_ns = cgt_unzigzag(mtime);
		d->present = rc == 0;
		break;
	}
	case HK_VEX:
		rc = cursor_u32(f, &h->vex.guest_chase, "VEX's chasing");
		if (rc == 0 && h->vex.guest_chase > 1)
			return cursor_fail(f, "VEX's chasing as 0 or 1");
		if (rc == 0)
			rc = cursor_u32(f, &h->vex.unroll_thresh, "VEX's unrolling threshold");
		if (rc == 0)
			rc = cursor_u32(f, &h->vex.max_insns, "VEX's largest block");
		h->vex.present = rc == 0;
		break;
	case HK_FORKED_FROM:
		rc = cursor_varint(f, &h->forked_from, "the parent's process id");
		break;
	default:
		/* A field added by a later writer of the same version: skip it. */
		f->p = f->end;
		break;
	}
	return rc;
}

static char *dup_or_empty(char *s)
{
	return s != NULL ? s : strdup("");
}

int cgt_header_decode(struct cgt_trace_header *h, const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;
	int rc = 0;

	memset(h, 0, sizeof(*h));
	cursor_init(&c, rec, e);
	rc = cursor_fields(&c, h, decode_header_field);
	if (rc == 0 && (h->backend == NULL || h->argv == NULL || h->argc == 0))
		rc = cursor_fail(&c, "the backend and the command line");
	if (rc < 0) {
		cgt_header_free(h);
		return rc;
	}
	h->cwd = dup_or_empty(h->cwd);
	h->cpu_vendor = dup_or_empty(h->cpu_vendor);
	h->cpu_name = dup_or_empty(h->cpu_name);
	h->recorder = dup_or_empty(h->recorder);
	if (h->cwd == NULL || h->cpu_vendor == NULL || h->cpu_name == NULL || h->recorder == NULL) {
		cgt_header_free(h);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	return 0;
}

void cgt_header_free(struct cgt_trace_header *h)
{
	free(h->backend);
	if (h->argv != NULL)
		for (uint32_t i = 0; i < h->argc; i++)
			free(h->argv[i]);
	free(h->argv);
	free(h->cwd);
	free(h->cpu_vendor);
	free(h->cpu_name);
	free(h->recorder);
	memset(h, 0, sizeof(*h));
}

int cgt_module_encode(struct cgt_buf *b, const struct cgt_module *m)
{
	int rc = put_varint(b, m->start);
	if (rc == 0)
		rc = put_varint(b, m->size);
	if (rc == 0)
		rc = put_varint(b, m->file_offset);
	if (rc == 0)
		rc = put_varint(b, m->prot);
	if (rc == 0)
		rc = put_string(b, m->path);
	if (rc == 0)
		rc = put_bytes(b, m->build_id, m->build_id_len);
	if (rc == 0)
		rc = put_varint(b, m->file_size);
	if (rc == 0)
		rc = put_varint(b, cgt_zigzag(m->mtime_ns));
	return rc;
}

int cgt_module_decode(struct cgt_module *m, const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;
	uint64_t v = 0, idlen = 0;
	int64_t mtime = 0;

	memset(m, 0, sizeof(*m));
	cursor_init(&c, rec, e);
	int rc = cursor_varint(&c, &m->start, "the module start address");
	if (rc == 0)
		rc = cursor_varint(&c, &m->size, "the module size");
	if (rc == 0 && m->start + m->size < m->start)
		rc = cursor_fail(&c, "a module range within the address space");
	if (rc == 0)
		rc = cursor_varint(&c, &m->file_offset, "the module file offset");
	if (rc == 0)
		rc = cursor_bounded(&c, &v, 7, "the module protection (0-7)");
	m->prot = (uint32_t)v;
	if (rc == 0)
		rc = cursor_string(&c, &m->path, CGT_PATH_MAX, "a module path of at most 4096 bytes");
	if (rc == 0)
		rc = cursor_bounded(&c, &idlen, sizeof(m->build_id), "a build-id of at most 64 bytes");
	if (rc == 0 && idlen > (uint64_t)(c.end - c.p))
		rc = cursor_fail(&c, "the build-id bytes");
	if (rc == 0) {
		memcpy(m->build_id, c.p, idlen);
		m->build_id_len = (uint32_t)idlen;
		c.p += idlen;
		rc = cursor_varint(&c, &m->file_size, "the module file size");
	}
	if (rc == 0)
		rc = cursor_svarint(&c, &mtime, "the module modification time");
	m->mtime_ns = mtime;
	if (rc == 0 && !cursor_done(&c))
		rc = cursor_fail(&c, "the end of the record");
	if (rc < 0)
		cgt_module_free(m);
	return rc;
}

void cgt_module_free(struct cgt_module *m)
{
	free(m->path);
	m->path = NULL;
}

int cgt_unmap_encode(struct cgt_buf *b, uint64_t start, uint64_t size)
{
	int rc = put_varint(b, start);
	return rc < 0 ? rc : put_varint(b, size);
}

int cgt_unmap_decode(uint64_t *start, uint64_t *size, const struct cgt_record *rec,
		     struct cgt_error *e)
{
	struct cursor c;

	cursor_init(&c, rec, e);
	int rc = cursor_varint(&c, start, "the unmapped start address");
	if (rc == 0)
		rc = cursor_varint(&c, size, "the unmapped size");
	if (rc == 0 && !cursor_done(&c))
		rc = cursor_fail(&c, "the end of the record");
	return rc;
}

int cgt_end_encode(struct cgt_buf *b, const struct cgt_trace_end *end)
{
	const struct cgt_trace_counts *n = &end->counts;
	uint64_t v[] = { end->kind,	   cgt_zigzag(end->code), n->insns,  n->reads,
			 n->writes,	   n->modifies,		  n->conds,  n->indirects,
			 n->block_execs, n->blocks,		  n->threads };
	int rc = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]) && rc == 0; i++)
		rc = put_varint(b, v[i]);
	return rc;
}

int cgt_end_decode(struct cgt_trace_end *end, const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;
	struct cgt_trace_counts *n = &end->counts;
	uint64_t kind = 0, code = 0;
	uint64_t *fields[] = { &n->insns,	 &n->reads,  &n->writes, &n->modifies,
			       &n->conds,	 &n->indirects, &n->block_execs, &n->blocks,
			       &n->threads };

	memset(end, 0, sizeof(*end));
	cursor_init(&c, rec, e);
	int rc = cursor_bounded(&c, &kind, CGT_END_LOST, "an end kind (1-3)");
	if (rc == 0 && kind == 0)
		rc = cursor_fail(&c, "an end kind (1-3)");
	if (rc == 0)
		rc = cursor_varint(&c, &code, "an exit code or signal");
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && rc == 0; i++)
		rc = cursor_varint(&c, fields[i], "an event count");
	if (rc == 0 && !cursor_done(&c))
		rc = cursor_fail(&c, "the end of the record");
	end->kind = (uint32_t)kind;
	end->code = (int32_t)cgt_unzigzag(code);
	return rc;
}

int cgt_mark_encode(struct cgt_buf *b, const struct cgt_mark *m)
{
	int rc = put_varint(b, m->tid);
	if (m->kind == CGT_MARK_REQUEST) {
		if (rc == 0)
			rc = put_varint(b, m->code);
		return rc < 0 ? rc : put_string(b, m->text);
	}
	if (rc == 0)
		rc = put_varint(b, m->signo);
	uint8_t tail[2] = { m->kind == CGT_MARK_SIGNAL_DELIVERED ? 1 : 2, (uint8_t)(m->alt_stack != 0) };
	return rc < 0 ? rc : put_raw(b, tail, 2);
}

int cgt_mark_decode(struct cgt_mark *m, const struct cgt_record *rec, struct cgt_error *e)
{
	struct cursor c;
	uint8_t what = 0, alt = 0;

	free(m->text);
	memset(m, 0, sizeof(*m));
	cursor_init(&c, rec, e);
	int rc = cursor_u32(&c, &m->tid, "a thread id");
	if (rec->type == CGT_REC_REQUEST) {
		m->kind = CGT_MARK_REQUEST;
		if (rc == 0)
			rc = cursor_u32(&c, &m->code, "a request code");
		if (rc == 0)
			rc = cursor_string(&c, &m->text, CGT_REQUEST_TEXT_MAX,
					   "a request's text (at most 4096 bytes)");
	} else {
		if (rc == 0)
			rc = cursor_u32(&c, &m->signo, "a signal number");
		if (rc == 0)
			rc = cursor_u8(&c, &what, "1 (delivered) or 2 (returned)");
		if (rc == 0 && what != 1 && what != 2) {
			c.p--;
			rc = cursor_fail(&c, "1 (delivered) or 2 (returned)");
		}
		if (rc == 0)
			rc = cursor_u8(&c, &alt, "whether on the alternate stack (0 or 1)");
		if (rc == 0 && alt > 1) {
			c.p--;
			rc = cursor_fail(&c, "whether on the alternate stack (0 or 1)");
		}
		m->kind = what == 1 ? CGT_MARK_SIGNAL_DELIVERED : CGT_MARK_SIGNAL_RETURNED;
		m->alt_stack = alt;
		if (rc == 0 && (m->text = strdup("")) == NULL)
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	if (rc == 0 && !cursor_done(&c))
		rc = cursor_fail(&c, "the end of the record");
	if (rc < 0)
		cgt_mark_free(m);
	return rc;
}

void cgt_mark_free(struct cgt_mark *m)
{
	free(m->text);
	memset(m, 0, sizeof(*m));
}
