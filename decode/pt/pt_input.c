/*
 * Reading a pt-backend trace into memory (pt_input.h).
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pt_input.h"

/* A break requested at a recorder offset of a CPU's stream, turned into a
   position once every piece has arrived. */
struct pending_break {
	uint32_t cpu;
	uint64_t offset;
};

/* Where a piece of a CPU's stream landed. */
struct piece {
	uint32_t cpu;
	uint64_t offset;
	size_t pos, len;
};

struct reading {
	struct pt_input *in;
	struct pending_break *breaks;
	size_t n_breaks, cap_breaks;
	struct piece *pieces;
	size_t n_pieces, cap_pieces;
	struct cgt_error *e;
};

static int oom(struct reading *r)
{
	return cgt_fail(r->e, cgt_err_nomem, "out of memory");
}

/* Grows *array (of size elements) to hold n + 1. */
static int grow(void *array, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *p = realloc(*(void **)array, c * size);
	if (p == NULL)
		return -1;
	*(void **)array = p;
	*cap = c;
	return 0;
}

static struct pt_cpu_stream *stream_of(struct pt_input *in, uint32_t cpu)
{
	for (size_t i = 0; i < in->n_cpus; i++)
		if (in->cpus[i].cpu == cpu)
			return &in->cpus[i];
	struct pt_cpu_stream *s = realloc(in->cpus, (in->n_cpus + 1) * sizeof(*s));
	if (s == NULL)
		return NULL;
	in->cpus = s;
	s = &in->cpus[in->n_cpus++];
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	return s;
}

/* perf time (ns) -> TSC, the inverse of the kernel's conversion
   (perf_event_mmap_page, cap_user_time_zero). */
static uint64_t tsc_of(const struct cgt_pt_config *c, uint64_t time)
{
	if (!c->cap_user_time_zero || c->time_mult == 0)
		return time;
	uint64_t t = time - c->time_zero;
	uint64_t quot = t / c->time_mult, rem = t % c->time_mult;
	return (quot << c->time_shift) + (rem << c->time_shift) / c->time_mult;
}

static const struct cgt_pt_event *event_of(const struct cgt_pt_config *c, uint64_t id)
{
	for (uint32_t i = 0; i < c->n_events; i++)
		for (uint32_t k = 0; k < c->events[i].n_ids; k++)
			if (c->events[i].ids[k] == id)
				return &c->events[i];
	return NULL;
}

static int add_break(struct reading *r, uint32_t cpu, uint64_t offset)
{
	if (grow(&r->breaks, &r->cap_breaks, r->n_breaks, sizeof(*r->breaks)) < 0)
		return oom(r);
	r->breaks[r->n_breaks++] = (struct pending_break){ cpu, offset };
	return 0;
}

static int take_aux(struct reading *r, const struct cgt_record *rec)
{
	uint32_t cpu;
	uint64_t offset;
	const uint8_t *data;
	size_t len;
	int rc = cgt_aux_decode(&cpu, &offset, &data, &len, rec, r->e);
	if (rc < 0)
		return rc;
	struct pt_cpu_stream *s = stream_of(r->in, cpu);
	if (s == NULL)
		return oom(r);
	if (s->len > 0 && offset != s->next_offset) {
		/* Bytes the recorder never received: start afresh here. */
		if (offset > s->next_offset)
			s->bytes_lost += offset - s->next_offset;
		rc = add_break(r, cpu, offset);
		if (rc < 0)
			return rc;
	}
	if (s->len + len > s->cap) {
		size_t cap = (s->len + len) * 2;
		uint8_t *p = realloc(s->data, cap);
		if (p == NULL)
			return oom(r);
		s->data = p;
		s->cap = cap;
	}
	if (grow(&r->pieces, &r->cap_pieces, r->n_pieces, sizeof(*r->pieces)) < 0)
		return oom(r);
	r->pieces[r->n_pieces++] = (struct piece){ cpu, offset, s->len, len };
	memcpy(s->data + s->len, data, len);
	s->len += len;
	s->next_offset = offset + len;
	return 0;
}

static int take_sample(struct reading *r, const uint8_t *p, size_t len, const struct cgt_pt_event *ev)
{
	struct cgt_perf_sample sm;
	struct pt_input *in = r->in;

	if (cgt_perf_sample_parse(p, len, ev->sample_type, &sm) < 0)
		return 0;	/* not a layout we asked for: ignored */
	if (sm.pid != in->header.pid)
		return 0;	/* a child process's */
	if (grow(&in->samples, &in->cap_samples, in->n_samples, sizeof(*in->samples)) < 0)
		return oom(r);
	in->samples[in->n_samples++] = (struct pt_sample){ tsc_of(&in->config, sm.time), sm.ip, sm.addr,
							   sm.tid, ev->kind == CGT_PT_EVENT_MEM_STORES };
	return 0;
}

static int take_sideband(struct reading *r, const struct cgt_record *rec)
{
	struct pt_input *in = r->in;
	uint32_t cpu;
	const uint8_t *p;
	size_t len;
	uint64_t id;
	int rc = cgt_sideband_decode(&cpu, &p, &len, rec, r->e);

	if (rc < 0)
		return rc;
	if (!in->have_config)
		return cgt_fail(r->e, cgt_err_corrupt,
				"%s: stream offset %llu: a SIDEBAND record before the PT_CONFIG record",
				rec->path, (unsigned long long)rec->stream_offset);
	const struct cgt_pt_event *ev = cgt_perf_record_id(p, len, &id) == 0 ? event_of(&in->config, id) : NULL;
	if (ev == NULL)
		return 0;	/* an event we do not know: nothing to learn from it */
	int type = cgt_perf_record_type(p, len);
	if (type == PERF_RECORD_SAMPLE)
		return take_sample(r, p, len, ev);

	struct cgt_perf_sample_id sid;
	struct perf_event_header h;
	memcpy(&h, p, sizeof(h));
	if (cgt_perf_sample_id_parse(p, len, ev->sample_type, &sid) < 0)
		return 0;
	switch (type) {
	case PERF_RECORD_AUX: {
		uint64_t aux[3];
		if (len < sizeof(h) + sizeof(aux))
			return 0;
		memcpy(aux, p + sizeof(h), sizeof(aux));
		if (aux[2] & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL))
			return add_break(r, cpu, aux[0] + aux[1]);
		return 0;
	}
	case PERF_RECORD_SWITCH:
		if (!(h.misc & PERF_RECORD_MISC_SWITCH_OUT)) {
			struct pt_cpu_stream *s = stream_of(in, cpu);
			if (s == NULL || grow(&s->switches, &s->cap_switches, s->n_switches,
					       sizeof(*s->switches)) < 0)
				return oom(r);
			s->switches[s->n_switches++] =
				(struct pt_switch){ tsc_of(&in->config, sid.time), sid.pid, sid.tid };
		}
		return 0;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		in->sideband_lost++;
		return 0;
	default:
		return 0;
	}
}

static int take_image(struct reading *r, const struct cgt_record *rec)
{
	struct pt_input *in = r->in;
	const uint8_t *data;
	size_t len;
	uint64_t start;
	char *name;
	int rc = cgt_image_decode(&start, &name, &data, &len, rec, r->e);

	if (rc < 0)
		return rc;
	struct pt_image_bytes *im = realloc(in->images, (in->n_images + 1) * sizeof(*im));
	uint8_t *copy = malloc(len);
	if (im == NULL || copy == NULL) {
		free(name);
		free(copy);
		if (im != NULL)
			in->images = im;
		return oom(r);
	}
	in->images = im;
	memcpy(copy, data, len);
	in->images[in->n_images++] = (struct pt_image_bytes){ start, name, copy, len };
	return 0;
}

static int take(struct reading *r, const struct cgt_record *rec)
{
	struct pt_input *in = r->in;
	int rc;

	switch (rec->type) {
	case CGT_REC_PT_CONFIG:
		if (in->have_config)
			return cgt_fail(r->e, cgt_err_corrupt, "%s: stream offset %llu: a second PT_CONFIG record",
					rec->path, (unsigned long long)rec->stream_offset);
		rc = cgt_pt_config_decode(&in->config, rec, r->e);
		in->have_config = rc == 0;
		return rc;
	case CGT_REC_MODULE: {
		struct cgt_module *m = realloc(in->modules, (in->n_modules + 1) * sizeof(*m));
		if (m == NULL)
			return oom(r);
		in->modules = m;
		rc = cgt_module_decode(&in->modules[in->n_modules], rec, r->e);
		in->n_modules += rc == 0;
		return rc;
	}
	case CGT_REC_IMAGE:
		return take_image(r, rec);
	case CGT_REC_SIDEBAND:
		return take_sideband(r, rec);
	case CGT_REC_AUX:
		return take_aux(r, rec);
	case CGT_REC_END:
		rc = cgt_end_decode(&in->end, rec, r->e);
		in->have_end = rc == 0;
		return rc;
	case CGT_REC_UNMAP:
		return 0;	/* the image is the module map of the whole run */
	default:
		return cgt_fail(r->e, cgt_err_corrupt,
				"%s: stream offset %llu: a %s record in a trace of the pt backend",
				rec->path, (unsigned long long)rec->stream_offset,
				cgt_record_type_name(rec->type));
	}
}

static int by_thread_then_time(const void *a, const void *b)
{
	const struct pt_sample *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->tsc > y->tsc) - (x->tsc < y->tsc);
}

static int by_position(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* Turns the recorder offsets of breaks into positions in the streams. */
static int place_breaks(struct reading *r)
{
	for (size_t i = 0; i < r->n_breaks; i++) {
		const struct pending_break *b = &r->breaks[i];
		struct pt_cpu_stream *s = stream_of(r->in, b->cpu);
		if (s == NULL)
			return oom(r);
		size_t pos = s->len;	/* after every piece: nothing to break */
		for (size_t k = 0; k < r->n_pieces; k++) {
			const struct piece *p = &r->pieces[k];
			if (p->cpu == b->cpu && b->offset >= p->offset && b->offset < p->offset + p->len) {
				pos = p->pos + (size_t)(b->offset - p->offset);
				break;
			}
		}
		if (pos == 0 || pos >= s->len)
			continue;
		size_t *br = realloc(s->breaks, (s->n_breaks + 1) * sizeof(*br));
		if (br == NULL)
			return oom(r);
		s->breaks = br;
		s->breaks[s->n_breaks++] = pos;
	}
	for (size_t i = 0; i < r->in->n_cpus; i++) {
		struct pt_cpu_stream *s = &r->in->cpus[i];
		qsort(s->breaks, s->n_breaks, sizeof(*s->breaks), by_position);
	}
	return 0;
}

int pt_input_read(struct pt_input *in, const char *path, struct cgt_error *e)
{
	struct reading r = { .in = in, .e = e };
	struct cgt_reader *reader;
	struct cgt_record rec;
	struct stat st;
	int rc;

	memset(in, 0, sizeof(*in));
	in->path = path;
	if (stat(path, &st) == 0) {
		in->file_size = (uint64_t)st.st_size;
		in->file_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	}
	rc = cgt_reader_open(&reader, path, e);
	if (rc < 0)
		return rc;
	rc = cgt_reader_next(reader, &rec, e);
	if (rc == 0)
		rc = cgt_fail(e, cgt_err_corrupt, "%s: the trace has no records (expected a HEADER)", path);
	else if (rc > 0)
		rc = rec.type == CGT_REC_HEADER ? cgt_header_decode(&in->header, &rec, e)
						: cgt_fail(e, cgt_err_corrupt,
							   "%s: expected a HEADER record first", path);
	while (rc == 0 && (rc = cgt_reader_next(reader, &rec, e)) > 0)
		rc = take(&r, &rec);
	if (rc == 0 && !in->have_config)
		rc = cgt_fail(e, cgt_err_corrupt, "%s: a pt trace without its PT_CONFIG record", path);
	if (rc == 0)
		rc = place_breaks(&r);
	if (rc == 0 && cgt_reader_truncation(reader) != NULL &&
	    (in->truncation = strdup(cgt_reader_truncation(reader))) == NULL)
		rc = oom(&r);
	cgt_reader_close(reader);
	free(r.breaks);
	free(r.pieces);
	if (rc < 0) {
		pt_input_free(in);
		return rc;
	}
	qsort(in->samples, in->n_samples, sizeof(*in->samples), by_thread_then_time);
	return 0;
}

const struct pt_switch *pt_input_switch_at(const struct pt_cpu_stream *s, uint64_t tsc)
{
	/* The last switch at or before tsc (switches are in time order). */
	size_t lo = 0, hi = s->n_switches;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->switches[mid].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? &s->switches[lo - 1] : NULL;
}

void pt_input_free(struct pt_input *in)
{
	cgt_header_free(&in->header);
	cgt_pt_config_free(&in->config);
	for (size_t i = 0; i < in->n_modules; i++)
		cgt_module_free(&in->modules[i]);
	free(in->modules);
	for (size_t i = 0; i < in->n_images; i++) {
		free(in->images[i].name);
		free(in->images[i].data);
	}
	free(in->images);
	for (size_t i = 0; i < in->n_cpus; i++) {
		free(in->cpus[i].data);
		free(in->cpus[i].breaks);
		free(in->cpus[i].switches);
	}
	free(in->cpus);
	free(in->samples);
	free(in->truncation);
	memset(in, 0, sizeof(*in));
}
