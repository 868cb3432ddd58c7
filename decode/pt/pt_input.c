/*
 * Reading a pt-backend trace (pt_input.h).  Everything but the packets is
 * read into memory in one pass; of the packets (AUX records) only where
 * they are (the frames that hold each CPU's) and how they join is kept:
 * pt_aux_cursor reads them again, a frame at a time, when they are
 * decoded.  So memory does not grow with the packets, however many there
 * are.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pt_input.h"

/* A break requested at a recorder offset of a CPU's stream, turned into a
   position once every piece has arrived. */
struct pending_break {
	uint32_t cpu;
	uint64_t offset;
};

struct reading {
	struct pt_input *in;
	struct pending_break *breaks;
	size_t n_breaks, cap_breaks;
	struct cgt_map cpu_index;	/* cpu + 1 -> index in in->cpus + 1 */
	struct cgt_map id_event;	/* perf id -> event + 1 (the first with that id) */
	size_t frame_ref;		/* in->frames index of the frame being read, or SIZE_MAX */
	const struct cgt_frame *frame;
	size_t cap_cpus, cap_images, cap_modules;
	uint64_t image_bytes;
	struct cgt_error *e;
};

/* What libipt is given as code: it checks each section against every
   other (quadratic), and the IMAGE records' bytes are held in memory. */
#define PT_MAX_MODULES 16384
#define PT_MAX_IMAGES 256
#define PT_MAX_IMAGE_BYTES (16u << 20)

static int oom(struct reading *r)
{
	return cgt_fail(r->e, cgt_err_nomem, "out of memory");
}

static int oom_at(struct reading *r, const struct cgt_record *rec)
{
	return cgt_fail(r->e, cgt_err_nomem, "%s: stream offset %llu: out of memory", rec->path,
			(unsigned long long)rec->stream_offset);
}

/* The stream of cpu, made on first use; NULL with r->e set (out of
   memory, or more CPUs than any machine has). */
static struct pt_cpu_stream *stream_of(struct reading *r, uint32_t cpu, const struct cgt_record *rec)
{
	struct pt_input *in = r->in;
	uintptr_t i = (uintptr_t)cgt_map_get(&r->cpu_index, (uint64_t)cpu + 1);
	if (i != 0)
		return &in->cpus[i - 1];
	if (in->n_cpus == PT_MAX_CPUS) {
		cgt_fail(r->e, cgt_err_corrupt, "%s: stream offset %llu: CPU %u: more than %u CPUs",
			 rec->path, (unsigned long long)rec->stream_offset, cpu, PT_MAX_CPUS);
		return NULL;
	}
	if (in->n_cpus == r->cap_cpus &&
	    cgt_array_grow(&in->cpus, &r->cap_cpus, in->n_cpus, 1, sizeof(*in->cpus)) < 0) {
		oom_at(r, rec);
		return NULL;
	}
	if (cgt_map_put(&r->cpu_index, (uint64_t)cpu + 1, (void *)(uintptr_t)(in->n_cpus + 1)) < 0) {
		oom_at(r, rec);
		return NULL;
	}
	struct pt_cpu_stream *s = &in->cpus[in->n_cpus++];
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

/* The events by id, for event_of: a look-up per sideband record. */
static int index_events(struct reading *r)
{
	const struct cgt_pt_config *c = &r->in->config;
	for (uint32_t i = 0; i < c->n_events; i++)
		for (uint32_t k = 0; k < c->events[i].n_ids; k++)
			if (cgt_map_get(&r->id_event, c->events[i].ids[k]) == NULL &&
			    cgt_map_put(&r->id_event, c->events[i].ids[k], (void *)(uintptr_t)(i + 1)) < 0)
				return oom(r);
	return 0;
}

static const struct cgt_pt_event *event_of(const struct reading *r, uint64_t id)
{
	uintptr_t i = (uintptr_t)cgt_map_get(&r->id_event, id);
	return i == 0 ? NULL : &r->in->config.events[i - 1];
}

static int add_break(struct reading *r, uint32_t cpu, uint64_t offset, const struct cgt_record *rec)
{
	if (r->n_breaks == r->cap_breaks &&
	    cgt_array_grow(&r->breaks, &r->cap_breaks, r->n_breaks, 1, sizeof(*r->breaks)) < 0)
		return oom_at(r, rec);
	r->breaks[r->n_breaks++] = (struct pending_break){ cpu, offset };
	return 0;
}

static int push_position(struct pt_cpu_stream *s, uint64_t pos)
{
	if (s->n_breaks == s->cap_breaks &&
	    cgt_array_grow(&s->breaks, &s->cap_breaks, s->n_breaks, 1, sizeof(*s->breaks)) < 0)
		return -1;
	s->breaks[s->n_breaks++] = pos;
	return 0;
}

/* An AUX record: where it is and how it joins the pieces before it; its
   bytes are read again when they are decoded. */
static int take_aux(struct reading *r, const struct cgt_record *rec)
{
	struct pt_input *in = r->in;
	uint32_t cpu;
	uint64_t offset;
	const uint8_t *data;
	size_t len;
	int rc = cgt_aux_decode(&cpu, &offset, &data, &len, rec, r->e);
	if (rc < 0)
		return rc;
	if (len == 0)
		return 0;	/* nothing to decode, nothing lost */
	struct pt_cpu_stream *s = stream_of(r, cpu, rec);
	if (s == NULL)
		return -r->e->status;
	if (s->len > 0 && offset != s->next_offset) {
		/* Bytes the recorder never received, or (out of order)
		   received twice: start afresh here. */
		if (offset > s->next_offset)
			s->bytes_lost += offset - s->next_offset;
		if (push_position(s, s->len) < 0)
			return oom_at(r, rec);
	}
	if (s->n_runs > 0 && offset == s->next_offset && s->runs[s->n_runs - 1].pos + s->runs[s->n_runs - 1].len == s->len) {
		s->runs[s->n_runs - 1].len += len;
	} else {
		if (s->n_runs == s->cap_runs &&
		    cgt_array_grow(&s->runs, &s->cap_runs, s->n_runs, 1, sizeof(*s->runs)) < 0)
			return oom_at(r, rec);
		s->runs[s->n_runs++] = (struct pt_run){ offset, s->len, len };
	}
	/* The frame, once per frame and once per CPU's list. */
	if (r->frame_ref == SIZE_MAX) {
		if (in->n_frames == in->cap_frames &&
		    cgt_array_grow(&in->frames, &in->cap_frames, in->n_frames, 1,
				   sizeof(*in->frames)) < 0)
			return oom_at(r, rec);
		in->frames[in->n_frames] = (struct pt_frame_ref){ r->frame->file_offset, r->frame->stream_offset,
								   r->frame->compressed_len, r->frame->index == 0 };
		r->frame_ref = in->n_frames++;
	}
	if (s->n_frames == 0 || s->frames[s->n_frames - 1] != r->frame_ref) {
		if (s->n_frames == s->cap_frames &&
		    cgt_array_grow(&s->frames, &s->cap_frames, s->n_frames, 1,
				   sizeof(*s->frames)) < 0)
			return oom_at(r, rec);
		s->frames[s->n_frames++] = r->frame_ref;
	}
	s->len += len;
	s->next_offset = offset + len;
	return 0;
}

static int take_sample(struct reading *r, const struct cgt_record *rec, const uint8_t *p, size_t len,
		       const struct cgt_pt_event *ev)
{
	struct cgt_perf_sample sm;
	struct pt_input *in = r->in;

	if (cgt_perf_sample_parse(p, len, ev->sample_type, &sm) < 0)
		return 0;	/* not a layout we asked for: ignored */
	if (sm.pid != in->header.pid)
		return 0;	/* a child process's */
	if (in->n_samples == in->cap_samples &&
	    cgt_array_grow(&in->samples, &in->cap_samples, in->n_samples, 1,
			   sizeof(*in->samples)) < 0)
		return oom_at(r, rec);
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
	const struct cgt_pt_event *ev = cgt_perf_record_id(p, len, &id) == 0 ? event_of(r, id) : NULL;
	if (ev == NULL)
		return 0;	/* an event we do not know: nothing to learn from it */
	int type = cgt_perf_record_type(p, len);
	if (type == PERF_RECORD_SAMPLE)
		return take_sample(r, rec, p, len, ev);

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
			return aux[0] + aux[1] < aux[0] ? 0 : add_break(r, cpu, aux[0] + aux[1], rec);
		return 0;
	}
	case PERF_RECORD_SWITCH:
		if (!(h.misc & PERF_RECORD_MISC_SWITCH_OUT)) {
			struct pt_cpu_stream *s = stream_of(r, cpu, rec);
			if (s == NULL)
				return -r->e->status;
			if (s->n_switches == s->cap_switches &&
			    cgt_array_grow(&s->switches, &s->cap_switches, s->n_switches, 1,
					   sizeof(*s->switches)) < 0)
				return oom_at(r, rec);
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
	if (in->n_images == PT_MAX_IMAGES || len > PT_MAX_IMAGE_BYTES - r->image_bytes) {
		free(name);
		return cgt_fail(r->e, cgt_err_corrupt,
				"%s: stream offset %llu: more than %u IMAGE records or %u MiB of code in them",
				rec->path, (unsigned long long)rec->stream_offset, PT_MAX_IMAGES,
				PT_MAX_IMAGE_BYTES >> 20);
	}
	uint8_t *copy = malloc(len);
	if (copy == NULL || (in->n_images == r->cap_images &&
			     cgt_array_grow(&in->images, &r->cap_images, in->n_images, 1,
					    sizeof(*in->images)) < 0)) {
		free(name);
		free(copy);
		return oom_at(r, rec);
	}
	r->image_bytes += len;
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
		return rc < 0 ? rc : index_events(r);
	case CGT_REC_MODULE: {
		if (in->n_modules == PT_MAX_MODULES)
			return cgt_fail(r->e, cgt_err_corrupt, "%s: stream offset %llu: more than %u MODULE records",
					rec->path, (unsigned long long)rec->stream_offset, PT_MAX_MODULES);
		if (in->n_modules == r->cap_modules &&
		    cgt_array_grow(&in->modules, &r->cap_modules, in->n_modules, 1,
				   sizeof(*in->modules)) < 0)
			return oom_at(r, rec);
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

static int by_time(const void *a, const void *b)
{
	const struct pt_switch *x = a, *y = b;
	return (x->tsc > y->tsc) - (x->tsc < y->tsc);
}

static int by_position(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int by_offset(const void *a, const void *b)
{
	const struct pt_run *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The position of the recorder's offset in stream s (runs sorted by
   offset), or 0 if no piece holds it. */
static uint64_t position_of(const struct pt_cpu_stream *s, uint64_t offset)
{
	size_t lo = 0, hi = s->n_runs;
	while (lo < hi) {	/* the first run after offset */
		size_t mid = lo + (hi - lo) / 2;
		if (s->runs[mid].offset <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	const struct pt_run *run = &s->runs[lo - 1];
	return offset - run->offset < run->len ? run->pos + (offset - run->offset) : 0;
}

/* Turns the recorder offsets of breaks into positions in the streams:
   sorted, once each, none at either end. */
static int place_breaks(struct reading *r)
{
	struct pt_input *in = r->in;
	for (size_t i = 0; i < in->n_cpus; i++) {
		struct pt_cpu_stream *s = &in->cpus[i];
		if (s->n_runs > 1)
			qsort(s->runs, s->n_runs, sizeof(*s->runs), by_offset);
	}
	for (size_t i = 0; i < r->n_breaks; i++) {
		const struct pending_break *b = &r->breaks[i];
		uintptr_t k = (uintptr_t)cgt_map_get(&r->cpu_index, (uint64_t)b->cpu + 1);
		if (k == 0)
			continue;	/* a CPU without packets */
		struct pt_cpu_stream *s = &in->cpus[k - 1];
		uint64_t pos = position_of(s, b->offset);
		if (pos == 0 || pos >= s->len)
			continue;	/* nothing to break */
		if (push_position(s, pos) < 0)
			return oom(r);
	}
	for (size_t i = 0; i < in->n_cpus; i++) {
		struct pt_cpu_stream *s = &in->cpus[i];
		free(s->runs);
		s->runs = NULL;
		s->n_runs = s->cap_runs = 0;
		if (s->n_breaks > 1)
			qsort(s->breaks, s->n_breaks, sizeof(*s->breaks), by_position);
		size_t n = 0;
		for (size_t k = 0; k < s->n_breaks; k++)
			if (s->breaks[k] > 0 && s->breaks[k] < s->len && (n == 0 || s->breaks[k] != s->breaks[n - 1]))
				s->breaks[n++] = s->breaks[k];
		s->n_breaks = n;
	}
	return 0;
}

/* Every record of the trace, frame by frame (the AUX records' frames are
   noted for pt_aux_cursor). */
static int read_records(struct reading *r, struct cgt_reader *reader, const char *path)
{
	struct pt_input *in = r->in;
	struct cgt_frame frame = { 0 };
	struct cgt_record rec;
	int rc, first = 1;

	while ((rc = cgt_reader_take_frame(reader, &frame, r->e)) > 0) {
		if (!frame.decompressed && (rc = cgt_frame_decompress(&frame, r->e)) < 0)
			break;
		r->frame_ref = SIZE_MAX;
		r->frame = &frame;
		while ((rc = cgt_frame_next_record(&frame, &rec, r->e)) > 0) {
			if (first) {
				first = 0;
				rc = rec.type == CGT_REC_HEADER
					     ? cgt_header_decode(&in->header, &rec, r->e)
					     : cgt_fail(r->e, cgt_err_corrupt, "%s: expected a HEADER record first",
							path);
				/* The decode copies the header: anything but a
				   recording of the pt backend would not read back. */
				if (rc == 0 && (strcmp(in->header.backend, "pt") != 0 ||
						in->header.decoded.present))
					rc = cgt_fail(r->e, cgt_err_corrupt,
						      "%s: expected a trace of the pt backend, not %s'%s'",
						      path, in->header.decoded.present ? "a decode of one, " : "",
						      in->header.backend);
			} else {
				rc = take(r, &rec);
			}
			if (rc < 0)
				break;
		}
		if (rc < 0)
			break;
	}
	cgt_frame_free(&frame);
	if (rc == 0 && first)
		rc = cgt_fail(r->e, cgt_err_corrupt, "%s: the trace has no records (expected a HEADER)", path);
	return rc;
}

int pt_input_read(struct pt_input *in, const char *path, struct cgt_error *e)
{
	struct reading r = { .in = in, .e = e };
	struct cgt_reader *reader = NULL;
	struct stat st;
	int rc;

	memset(in, 0, sizeof(*in));
	in->path = path;
	in->fd = -1;
	/* The packets are read again from this descriptor: from the file
	   whose size and time the decode records, whatever happens to the
	   name meanwhile. */
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0)
		return cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(errno));
	if (fstat(in->fd, &st) < 0) {
		rc = cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(errno));
		pt_input_free(in);
		return rc;
	}
	in->file_size = (uint64_t)st.st_size;
	in->file_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	rc = cgt_reader_open(&reader, path, e);
	if (rc == 0)
		rc = read_records(&r, reader, path);
	if (rc == 0 && !in->have_config)
		rc = cgt_fail(e, cgt_err_corrupt, "%s: a pt trace without its PT_CONFIG record", path);
	if (rc == 0)
		rc = place_breaks(&r);
	if (rc == 0 && cgt_reader_truncation(reader) != NULL &&
	    (in->truncation = strdup(cgt_reader_truncation(reader))) == NULL)
		rc = oom(&r);
	cgt_reader_close(reader);
	free(r.breaks);
	cgt_map_free(&r.cpu_index);
	cgt_map_free(&r.id_event);
	if (rc < 0) {
		pt_input_free(in);
		return rc;
	}
	if (in->n_samples > 1)
		qsort(in->samples, in->n_samples, sizeof(*in->samples), by_thread_then_time);
	for (size_t i = 0; i < in->n_cpus; i++) {
		/* Time order, which pt_input_switch_at searches by: the kernel's,
		   unless the file is damaged. */
		struct pt_cpu_stream *s = &in->cpus[i];
		for (size_t k = 1; k < s->n_switches; k++)
			if (s->switches[k].tsc < s->switches[k - 1].tsc) {
				qsort(s->switches, s->n_switches, sizeof(*s->switches), by_time);
				break;
			}
	}
	return 0;
}

/* ---- Reading the packets again ------------------------------------------- */

void pt_aux_open(struct pt_aux_cursor *c, const struct pt_input *in, const struct pt_cpu_stream *s)
{
	memset(c, 0, sizeof(*c));
	c->in = in;
	c->s = s;
}

static int changed(const struct pt_aux_cursor *c, uint64_t offset, struct cgt_error *e)
{
	return cgt_fail(e, cgt_err_io, "%s: byte offset %llu: the trace changed while it was being decoded",
			c->in->path, (unsigned long long)offset);
}

/* The next frame with packets of the stream: 1, or 0 after the last. */
static int load_frame(struct pt_aux_cursor *c, struct cgt_error *e)
{
	if (c->next_frame == c->s->n_frames)
		return 0;
	const struct pt_frame_ref *ref = &c->in->frames[c->s->frames[c->next_frame++]];
	struct cgt_frame *f = &c->frame;
	if (f->compressed_cap < ref->compressed_len) {
		uint8_t *p = realloc(f->compressed, ref->compressed_len);
		if (p == NULL)
			return cgt_fail(e, cgt_err_nomem, "%s: byte offset %llu: out of memory", c->in->path,
					(unsigned long long)ref->file_offset);
		f->compressed = p;
		f->compressed_cap = ref->compressed_len;
	}
	size_t done = 0;
	while (done < ref->compressed_len) {
		ssize_t n = pread(c->in->fd, f->compressed + done, ref->compressed_len - done,
				  (off_t)(ref->file_offset + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cgt_fail(e, cgt_err_io, "%s: %s", c->in->path, strerror(errno));
		if (n == 0)
			return changed(c, ref->file_offset, e);
		done += (size_t)n;
	}
	f->compressed_len = ref->compressed_len;
	f->index = ref->first ? 0 : 1;
	f->file_offset = ref->file_offset;
	f->stream_offset = ref->stream_offset;
	f->path = c->in->path;
	f->decompressed = 0;
	return cgt_frame_decompress(f, e) < 0 ? -e->status : 1;
}

int pt_aux_peek(struct pt_aux_cursor *c, const uint8_t **p, size_t *n, int *at_break, struct cgt_error *e)
{
	const struct pt_cpu_stream *s = c->s;
	while (c->len == 0) {
		struct cgt_record rec;
		int rc = 0;
		if (c->frame_loaded)
			rc = cgt_frame_next_record(&c->frame, &rec, e);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			c->frame_loaded = 0;
			rc = load_frame(c, e);
			if (rc < 0)
				return rc;
			if (rc == 0)
				return c->pos == s->len ? 0 : changed(c, c->frame.file_offset, e);
			c->frame_loaded = 1;
			continue;
		}
		uint32_t cpu;
		uint64_t offset;
		const uint8_t *data;
		size_t len;
		if (rec.type != CGT_REC_AUX)
			continue;
		if (cgt_aux_decode(&cpu, &offset, &data, &len, &rec, e) < 0)
			return -e->status;
		if (cpu != s->cpu || len == 0)
			continue;
		if (len > s->len - c->pos)
			return changed(c, c->frame.file_offset, e);
		c->data = data;
		c->len = len;
	}
	size_t limit = c->len;
	*at_break = 0;
	if (c->next_break < s->n_breaks) {
		uint64_t b = s->breaks[c->next_break];
		if (b <= c->pos)
			*at_break = 1;
		else if (b - c->pos < limit)
			limit = (size_t)(b - c->pos);
	}
	*p = c->data;
	*n = limit;
	return 1;
}

void pt_aux_skip(struct pt_aux_cursor *c, size_t n)
{
	c->data += n;
	c->len -= n;
	c->pos += n;
}

void pt_aux_pass_break(struct pt_aux_cursor *c)
{
	if (c->next_break < c->s->n_breaks)
		c->next_break++;
}

void pt_aux_close(struct pt_aux_cursor *c)
{
	cgt_frame_free(&c->frame);
	memset(c, 0, sizeof(*c));
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
		free(in->cpus[i].frames);
		free(in->cpus[i].breaks);
		free(in->cpus[i].switches);
		free(in->cpus[i].runs);
	}
	free(in->cpus);
	free(in->frames);
	if (in->fd >= 0)
		close(in->fd);
	free(in->samples);
	free(in->truncation);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}
