/*
 * Decoder of traces whose EVENTS records carry the executions themselves
 * (the Valgrind backend, and the stored decode of a pt trace).
 *
 * Frames are taken from the reader in file order by workers; each worker
 * decompresses its frame, then, in frame order under the decoder's lock,
 * applies the frame's blocks, module mappings and END (so those are known
 * in stream order), then decodes the frame's EVENTS on its own with its own
 * delta state.  A segment that goes on in the next frame (a version 1
 * trace is one segment) stays with its worker, frame after frame.
 *
 * Damage (TRACE-FORMAT.md, "Damage"): a frame that does not decompress is
 * lost, and with it the executions of the rest of its segment, whose
 * deltas build on it; the segment's later frames are still applied (their
 * blocks, mappings and END are whole).  After a loss that may have taken
 * block definitions with it -- a lost frame or a stretch the reader passed
 * over -- a frame that cannot be applied or decoded is lost the same way
 * rather than an error.  What is lost is noted per segment, by the worker
 * that has it, and depends on the file only: the same on any thread count.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"

struct cgt_decoder {
	struct cgt_reader *reader;
	struct cgt_trace_header header;
	struct cgt_module *first_modules;	/* the first frame's MODULE records */
	size_t n_first_modules, cap_first_modules;

	pthread_mutex_t lock;		/* everything below */
	pthread_cond_t cond;
	struct cgt_block_table blocks;
	uint32_t map_epoch;
	struct cgt_mapping *maps;
	size_t n_maps, cap_maps;
	uint64_t map_bytes;		/* the memory of maps and first_modules */
	uint64_t unmap_steps;		/* mappings UNMAP records have looked at */
	struct cgt_trace_end end;
	int have_end;
	uint64_t segments_taken;
	uint64_t next_commit;		/* index of the next frame to apply */
	struct cgt_decode_worker *continuing;	/* its segment goes on in the next frame */
	int failed;			/* a frame could not be applied */
	struct cgt_error error;
	uint64_t holes;			/* frames lost so far, in frame order */
	struct cgt_damage *losses;	/* per segment, in the order noted */
	size_t n_losses, cap_losses;

	struct cgt_decode_worker *sequential;	/* cgt_decoder_next's */
	int sequential_in_segment;
	char *replayed;			/* cgt_decoder_replayed */
	int replay_kept;		/* else replayed is removed on closing */
};

struct cgt_decode_worker {
	struct cgt_decoder *d;
	struct cgt_frame frame;
	struct cgt_events_state state;
	uint32_t max_block_values;
	struct cgt_record rec;
	int in_segment;
	uint64_t *scratch;	/* the values of a batch's slow executions */
	size_t scratch_cap;
	uint64_t segment;	/* the index of the segment it has */
	int used;		/* executions of the segment were handed out */
	int after_hole;		/* the frame follows a loss of definitions */
	int skipping;		/* the rest of the segment's executions are lost */
	struct cgt_damage loss;	/* what of it, while skipping */
	struct cgt_mark mark;	/* the last handed out (its text) */
};

/* The executions of w's segment from its current frame on are lost (why):
   noted in w->loss, to be handed to the decoder when the segment ends. */
static void lose_from_here(struct cgt_decode_worker *w, const char *why)
{
	const struct cgt_frame *f = &w->frame;

	if (w->skipping) {
		w->loss.frames++;
		w->loss.end = f->file_offset + f->compressed_len;
		return;
	}
	w->skipping = 1;
	w->loss = (struct cgt_damage){ f->file_offset, f->file_offset + f->compressed_len, 1,
				       w->segment, !w->used, "", 0 };
	snprintf(w->loss.why, sizeof(w->loss.why), "%s", why);
}

/* The segment ends (or the skipping does, at a SEGMENT record). */
static int end_loss(struct cgt_decode_worker *w, struct cgt_error *e)
{
	struct cgt_decoder *d = w->d;

	if (!w->skipping)
		return 0;
	w->skipping = 0;
	pthread_mutex_lock(&d->lock);
	int room = d->n_losses < d->cap_losses ||
		   cgt_array_grow(&d->losses, &d->cap_losses, d->n_losses, 1,
				  sizeof(*d->losses)) == 0;
	if (room)
		d->losses[d->n_losses++] = w->loss;
	pthread_mutex_unlock(&d->lock);
	return room ? 0 : cgt_fail(e, cgt_err_nomem, "out of memory");
}

/* Counts bytes more of memory for module mappings: 0, or an error if the
   trace up to rec's frame cannot need that much (CGT_MEMORY_PER_BYTE). */
static int charge_maps(struct cgt_decoder *d, uint64_t bytes, const struct cgt_record *rec,
		       struct cgt_error *e)
{
	d->map_bytes += bytes;
	if (d->map_bytes <= cgt_memory_allowed(rec))
		return 0;
	return cgt_fail(e, cgt_err_corrupt,
			"%s: stream offset %llu (frame at byte offset %llu): %s record: expected module "
			"mappings that fit the memory a trace of this size can need (%llu bytes: %u MiB "
			"+ %u per byte of the file up to this frame's end), not %llu bytes",
			rec->path, (unsigned long long)rec->stream_offset,
			(unsigned long long)rec->frame_offset, cgt_record_type_name(rec->type),
			(unsigned long long)cgt_memory_allowed(rec), CGT_MEMORY_BASE >> 20,
			CGT_MEMORY_PER_BYTE, (unsigned long long)d->map_bytes);
}

static int add_mapping(struct cgt_decoder *d, const struct cgt_module *m, uint32_t epoch,
		       const struct cgt_record *rec, struct cgt_error *e)
{
	if (charge_maps(d, sizeof(struct cgt_mapping) + strlen(m->path) + 1, rec, e) < 0)
		return -e->status;
	if (d->n_maps == d->cap_maps &&
	    cgt_array_grow(&d->maps, &d->cap_maps, d->n_maps, 1, sizeof(*d->maps)) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	struct cgt_mapping *map = &d->maps[d->n_maps++];
	map->module = *m;
	map->epoch_mapped = epoch;
	map->epoch_unmapped = UINT32_MAX;
	return 0;
}

/* Ends the mappings that overlap [start, start+size); the parts outside
   it live on as new mappings. */
static int unmap(struct cgt_decoder *d, uint64_t start, uint64_t size, uint32_t epoch,
		 const struct cgt_record *rec, struct cgt_error *e)
{
	uint64_t end = start + size;
	size_t n = d->n_maps;

	/* Each UNMAP looks at every mapping so far: a real recording has some
	   hundreds, and a trace that makes this quadratic is refused before it
	   takes longer than its size can justify. */
	d->unmap_steps += n;
	if (d->unmap_steps > cgt_memory_allowed(rec))
		return cgt_fail(e, cgt_err_corrupt,
				"%s: stream offset %llu (frame at byte offset %llu): UNMAP record: "
				"expected no more mapping changes than a trace of this size can make "
				"(its UNMAPs have looked at %llu mappings, at most %llu)",
				rec->path, (unsigned long long)rec->stream_offset,
				(unsigned long long)rec->frame_offset,
				(unsigned long long)d->unmap_steps,
				(unsigned long long)cgt_memory_allowed(rec));
	for (size_t i = 0; i < n; i++) {
		struct cgt_mapping *map = &d->maps[i];
		uint64_t ms = map->module.start, me = ms + map->module.size;
		if (map->epoch_unmapped != UINT32_MAX || me <= start || ms >= end)
			continue;
		map->epoch_unmapped = epoch;
		struct cgt_module piece = map->module;
		for (int side = 0; side < 2; side++) {
			uint64_t ps = side == 0 ? ms : end, pe = side == 0 ? start : me;
			if (ps >= pe || ps < ms || pe > me)
				continue;
			struct cgt_module m = piece;
			m.start = ps;
			m.size = pe - ps;
			m.file_offset = piece.file_offset + (ps - ms);
			m.path = strdup(piece.path);
			if (m.path == NULL)
				return cgt_fail(e, cgt_err_nomem, "out of memory");
			if (add_mapping(d, &m, epoch, rec, e) < 0) {
				free(m.path);
				return -e->status;
			}
			map = &d->maps[i];	/* add_mapping may move the array */
		}
	}
	return 0;
}

uint32_t cgt_decoder_map_epoch(const struct cgt_decoder *d)
{
	return d->map_epoch;
}

const struct cgt_mapping *cgt_decoder_find_mapping(const struct cgt_decoder *d, uint64_t addr,
						   uint32_t map_epoch)
{
	return cgt_mapping_find(d->maps, d->n_maps, addr, map_epoch);
}

const struct cgt_mapping *cgt_mapping_find(const struct cgt_mapping *maps, size_t n, uint64_t addr,
					   uint32_t map_epoch)
{
	/* Newest first: a later mapping of the same range wins. */
	for (size_t i = n; i-- > 0;) {
		const struct cgt_mapping *map = &maps[i];
		if (addr - map->module.start < map->module.size && map->epoch_mapped <= map_epoch &&
		    map_epoch < map->epoch_unmapped)
			return map;
	}
	return NULL;
}

/* Applies a record that is not EVENTS (under the lock, in stream order). */
static int apply_record(struct cgt_decoder *d, const struct cgt_record *rec, struct cgt_error *e)
{
	int rc;

	switch (rec->type) {
	case CGT_REC_HEADER:
		return cgt_fail(e, cgt_err_corrupt,
				"%s: stream offset %llu: a second HEADER record (expected one only)",
				rec->path, (unsigned long long)rec->stream_offset);
	case CGT_REC_MODULE: {
		struct cgt_module m;
		rc = cgt_module_decode(&m, rec, e);
		if (rc == 0) {
			rc = add_mapping(d, &m, ++d->map_epoch, rec, e);
			if (rc < 0)
				cgt_module_free(&m);
		}
		return rc;
	}
	case CGT_REC_UNMAP: {
		uint64_t start, size;
		rc = cgt_unmap_decode(&start, &size, rec, e);
		return rc < 0 ? rc : unmap(d, start, size, ++d->map_epoch, rec, e);
	}
	case CGT_REC_BLOCKS:
		return cgt_blocks_decode(&d->blocks, rec, cgt_reader_version(d->reader), d->map_epoch, e);
	case CGT_REC_SEGMENT: {
		struct cgt_segment_state state;
		return cgt_segment_decode(&state, rec, e);
	}
	case CGT_REC_REQUEST:
	case CGT_REC_SIGNAL:
		if (cgt_reader_version(d->reader) < 3)
			return cgt_fail(e, cgt_err_corrupt,
					"%s: stream offset %llu: a %s record in a trace of version %u "
					"(they came with version 3)",
					rec->path, (unsigned long long)rec->stream_offset,
					cgt_record_type_name(rec->type), cgt_reader_version(d->reader));
		return 0;	/* the segment's, in order (next_events) */
	case CGT_REC_EVENTS:
		return 0;
	case CGT_REC_END:
		if (d->have_end)
			return cgt_fail(e, cgt_err_corrupt,
					"%s: stream offset %llu: a second END record (expected one only)",
					rec->path, (unsigned long long)rec->stream_offset);
		rc = cgt_end_decode(&d->end, rec, e);
		d->have_end = rc == 0;
		return rc;
	default:
		return cgt_fail(e, cgt_err_corrupt, "%s: stream offset %llu: unexpected record type %u",
				rec->path, (unsigned long long)rec->stream_offset, rec->type);
	}
}

/* Every record of the worker's frame but EVENTS, applied in frame order. */
static int apply_frame(struct cgt_decode_worker *w, struct cgt_error *e)
{
	struct cgt_decoder *d = w->d;
	struct cgt_frame *f = &w->frame;
	struct cgt_record rec;
	int rc;

	if (d->failed) {
		*e = d->error;
		return -e->status;
	}
	for (int first = 1; (rc = cgt_frame_next_record(f, &rec, e)) > 0; first = 0) {
		if (first && f->index == 0) {
			if (rec.type != CGT_REC_HEADER)
				return cgt_fail(e, cgt_err_corrupt,
						"%s: stream offset %llu: expected a HEADER record first, "
						"found %s",
						rec.path, (unsigned long long)rec.stream_offset,
						cgt_record_type_name(rec.type));
			continue;	/* read by cgt_decoder_open */
		}
		if (first && f->starts_segment && rec.type != CGT_REC_SEGMENT)
			return cgt_fail(e, cgt_err_corrupt,
					"%s: stream offset %llu: expected a SEGMENT record first in the "
					"frame after a segment marker, found %s",
					rec.path, (unsigned long long)rec.stream_offset,
					cgt_record_type_name(rec.type));
		rc = apply_record(d, &rec, e);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	uint32_t known = w->state.n_slots;
	if (cgt_events_state_sync(&w->state, &d->blocks) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	for (uint32_t id = known; id < w->state.n_slots; id++)
		if (w->state.slots[id].blk->n_values > w->max_block_values)
			w->max_block_values = w->state.slots[id].blk->n_values;
	cgt_frame_rewind(f);
	return 0;
}

/* Decompresses the frame just taken and applies it (in turn): 0; 1 if
   its executions are lost (w->skipping: a damaged frame, one that cannot be
   applied after a loss, or one of a segment that lost an earlier frame);
   negative on error. */
static int prepare_frame(struct cgt_decode_worker *w, struct cgt_error *e)
{
	struct cgt_decoder *d = w->d;
	struct cgt_error why;
	int rc = w->frame.decompressed ? 0 : cgt_frame_decompress(&w->frame, &why);
	int damaged = rc < 0 && why.status == cgt_err_corrupt;

	if (rc < 0 && !damaged)
		*e = why;
	pthread_mutex_lock(&d->lock);
	while (d->next_commit != w->frame.index)
		pthread_cond_wait(&d->cond, &d->lock);
	w->after_hole = w->frame.damage_before > 0 || d->holes > 0;
	if (rc == 0) {
		rc = apply_frame(w, &why);
		/* Blocks defined in a lost frame: a consequence of the loss. */
		damaged = rc < 0 && w->after_hole && why.status == cgt_err_corrupt && !d->failed;
		if (rc < 0 && !damaged)
			*e = why;
	}
	if (damaged) {
		d->holes++;
		rc = 0;
	}
	if (rc < 0 && !d->failed) {
		d->failed = 1;
		d->error = *e;
	}
	d->next_commit++;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	if (rc < 0)
		return rc;
	/* Room for the values of every block applied so far, even in a frame
	   being skipped: a SEGMENT record in it ends the skipping, and its
	   EVENTS after that are decoded. */
	if (w->scratch_cap < w->max_block_values &&
	    cgt_array_grow(&w->scratch, &w->scratch_cap, 0, w->max_block_values,
			   sizeof(*w->scratch)) < 0)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	if (damaged) {
		w->frame.pos = w->frame.len = 0;
		lose_from_here(w, why.msg);
		return 1;
	}
	if (w->skipping) {
		lose_from_here(w, NULL);
		return 1;
	}
	return 0;
}

/* Takes the next frame from the reader (under the lock): 1, 0, negative. */
static int take_frame(struct cgt_decode_worker *w, struct cgt_error *e)
{
	struct cgt_decoder *d = w->d;

	int rc = cgt_reader_take_frame(d->reader, &w->frame, e);
	if (rc <= 0)
		return rc;
	d->continuing = w->frame.segment_continues ? w : NULL;
	pthread_cond_broadcast(&d->cond);
	return 1;
}

int cgt_decode_worker_open(struct cgt_decoder *d, struct cgt_decode_worker **out,
			   struct cgt_error *e)
{
	struct cgt_decode_worker *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (w == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	w->d = d;
	w->state.version = cgt_reader_version(d->reader);
	*out = w;
	return 0;
}

int cgt_decode_worker_take(struct cgt_decode_worker *w, struct cgt_segment_info *info,
			   struct cgt_error *e)
{
	struct cgt_decoder *d = w->d;
	struct cgt_record rec;

	pthread_mutex_lock(&d->lock);
	/* A segment that goes on in the next frame: wait until its worker
	   took the rest of it (or gave up on it: cgt_decode_worker_close). */
	while (d->continuing != NULL && d->continuing != w && !d->failed)
		pthread_cond_wait(&d->cond, &d->lock);
	int rc = d->failed ? (*e = d->error, -d->error.status) : take_frame(w, e);
	if (rc > 0)
		info->index = d->segments_taken++;
	pthread_mutex_unlock(&d->lock);
	w->in_segment = rc > 0;
	if (rc <= 0)
		return rc;
	w->segment = info->index;
	w->used = 0;
	w->skipping = 0;
	/* Applied in any case: later frames wait for it. */
	rc = prepare_frame(w, e);
	if (rc < 0)
		return rc;
	if (!w->frame.starts_segment)
		return cgt_fail(e, cgt_err_corrupt,
				"%s: byte offset %llu: a frame that continues a segment taken alone",
				w->frame.path, (unsigned long long)w->frame.file_offset);
	cgt_events_state_reset(&w->state);
	info->first = w->frame.index == 0;
	info->cond_history = 0;
	info->cachegrind_instr = CGT_CG_INSTR_NONE;
	/* The SEGMENT record that begins it (checked by apply_frame). */
	struct cgt_segment_state state;
	if (!info->first && cgt_frame_next_record(&w->frame, &rec, e) > 0) {
		if (cgt_segment_decode(&state, &rec, e) < 0)
			return -e->status;
		info->cond_history = state.cond_history;
		info->cachegrind_instr = state.cachegrind_instr;
	}
	return 1;
}

/* The next record of the segment with executions, or a mark: 1 (*b set),
   0 at the end of the segment, negative on error. */
static int next_events(struct cgt_decode_worker *w, struct cgt_batch *b, struct cgt_error *e)
{
	struct cgt_decoder *d = w->d;

	for (;;) {
		int rc = cgt_frame_next_record(&w->frame, &w->rec, e);
		if (rc < 0)
			return rc;
		if (rc > 0 && w->rec.type == CGT_REC_SEGMENT) {
			/* The deltas restart: a segment whose marker was lost. */
			cgt_events_state_reset(&w->state);
			if (end_loss(w, e) < 0)
				return -e->status;
		}
		if (rc > 0 && w->rec.type == CGT_REC_EVENTS && !w->skipping) {
			if (cgt_events_open(&b->events, &w->rec, &w->state, w->scratch, e) == 0) {
				w->used = 1;
				b->mark = (struct cgt_mark){ 0 };
				return 1;
			}
			if (!cgt_decode_worker_lost(w, e))
				return -e->status;
		}
		if (rc > 0 && (w->rec.type == CGT_REC_REQUEST || w->rec.type == CGT_REC_SIGNAL) &&
		    !w->skipping) {
			if (cgt_mark_decode(&w->mark, &w->rec, e) == 0) {
				b->events = (struct cgt_events_cursor){ 0 };	/* no executions */
				b->mark = w->mark;
				return 1;
			}
			if (!cgt_decode_worker_lost(w, e))
				return -e->status;
		}
		if (rc > 0)
			continue;
		if (w->frame.segment_continues) {
			pthread_mutex_lock(&d->lock);
			rc = take_frame(w, e);
			pthread_mutex_unlock(&d->lock);
			if (rc > 0 && (rc = prepare_frame(w, e)) >= 0)
				continue;	/* its records, executions lost or not */
			if (rc < 0)
				return rc;
			/* the file ended after all (cut short) */
		}
		return end_loss(w, e) < 0 ? -e->status : 0;
	}
}

int cgt_decode_worker_lost(struct cgt_decode_worker *w, const struct cgt_error *e)
{
	if (!w->after_hole || e->status != cgt_err_corrupt)
		return 0;
	lose_from_here(w, e->msg);
	return 1;
}

int cgt_decode_worker_next(struct cgt_decode_worker *w, struct cgt_batch *b, struct cgt_error *e)
{
	if (!w->in_segment)
		return 0;
	int rc = next_events(w, b, e);
	w->in_segment = rc == 1;
	return rc;
}

void cgt_decode_worker_close(struct cgt_decode_worker *w)
{
	if (w == NULL)
		return;
	/* Giving up on a segment that goes on: others may take frames again
	   (the rest of it then fails as frames taken alone, after this
	   worker's own error). */
	pthread_mutex_lock(&w->d->lock);
	if (w->d->continuing == w) {
		w->d->continuing = NULL;
		pthread_cond_broadcast(&w->d->cond);
	}
	pthread_mutex_unlock(&w->d->lock);
	cgt_frame_free(&w->frame);
	cgt_events_state_free(&w->state);
	cgt_mark_free(&w->mark);
	free(w->scratch);
	free(w);
}

/* Where the decode of the pt trace at path is stored: foo.zst ->
   foo.decoded.zst. */
static char *decoded_path_of(const char *path)
{
	size_t n = strlen(path);
	char *out = NULL;
	if (n > 4 && strcmp(path + n - 4, ".zst") == 0)
		n -= 4;
	return asprintf(&out, "%.*s.decoded.zst", (int)n, path) < 0 ? NULL : out;
}

static int same_string(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Whether two headers are of one recording: a decode copies its trace's
   header, adding only the decoding figures. */
static int same_recording(const struct cgt_trace_header *a, const struct cgt_trace_header *b)
{
	if (!same_string(a->backend, b->backend) || a->argc != b->argc || !same_string(a->cwd, b->cwd) ||
	    a->pid != b->pid || !same_string(a->cpu_vendor, b->cpu_vendor) ||
	    !same_string(a->cpu_name, b->cpu_name) || a->cpu_family != b->cpu_family ||
	    a->cpu_model != b->cpu_model || a->cpu_stepping != b->cpu_stepping ||
	    a->n_caches != b->n_caches || a->page_size != b->page_size ||
	    a->start_time_ns != b->start_time_ns || !same_string(a->recorder, b->recorder) ||
	    a->max_access_size != b->max_access_size)
		return 0;
	for (uint32_t i = 0; i < a->argc; i++)
		if (!same_string(a->argv[i], b->argv[i]))
			return 0;
	return memcmp(a->caches, b->caches, a->n_caches * sizeof(a->caches[0])) == 0;
}

enum stored_decode {
	DECODE_ABSENT,		/* nothing there */
	DECODE_CURRENT,		/* a decode of the trace as it is now */
	DECODE_STALE,		/* a decode of this recording, out of date */
	DECODE_FOREIGN,		/* anything else: never replaced */
};

/* What is at decoded, for the pt trace at path (its header h, the file
   st): with a reason in *why unless absent or current. */
static enum stored_decode examine_decode(const char *decoded, const struct cgt_trace_header *h,
					 const struct stat *st, const char **why)
{
	struct stat ds;
	struct cgt_reader *r;
	struct cgt_record rec;
	struct cgt_error e;
	struct cgt_trace_header dh;
	enum stored_decode verdict = DECODE_FOREIGN;

	*why = NULL;
	if (lstat(decoded, &ds) < 0)
		return errno == ENOENT ? DECODE_ABSENT : (*why = "it cannot be read", DECODE_FOREIGN);
	if (!S_ISREG(ds.st_mode)) {
		/* Not even opened: a FIFO would block, a device answer anything. */
		*why = S_ISLNK(ds.st_mode) ? "it is a symbolic link" : "it is not a regular file";
		return DECODE_FOREIGN;
	}
	if (cgt_reader_open(&r, decoded, &e) < 0) {
		*why = e.status == cgt_err_not_trace ? "it is not a cgtrace trace" : "it cannot be read";
		return DECODE_FOREIGN;
	}
	memset(&dh, 0, sizeof(dh));
	if (cgt_reader_next(r, &rec, &e) <= 0 || rec.type != CGT_REC_HEADER || cgt_header_decode(&dh, &rec, &e) < 0)
		*why = "it cannot be read";
	else if (!same_string(dh.backend, "pt") || !dh.decoded.present)
		*why = "it is not a decoded Intel PT trace";
	else if (!same_recording(&dh, h))
		*why = "it is the decode of another recording";
	else if (dh.decoded.source_size != (uint64_t)st->st_size ||
		 dh.decoded.source_mtime_ns != (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec)
		*why = "the trace has changed since it was decoded", verdict = DECODE_STALE;
	else if (dh.decoded.decoder_version != CGT_PT_DECODER_VERSION)
		*why = "this cgtrace decodes differently", verdict = DECODE_STALE;
	else
		verdict = DECODE_CURRENT;
	cgt_header_free(&dh);
	cgt_reader_close(r);
	return verdict;
}

/* A new file beside decoded, made exclusively (never an existing name,
   never through a symbolic link): its descriptor, or -1 with errno. */
static int create_beside(const char *decoded, char **temp)
{
	static unsigned counter;
	for (int tries = 0; tries < 100; tries++) {
		free(*temp);
		*temp = NULL;
		if (asprintf(temp, "%s.%ld.%u.part", decoded, (long)getpid(),
			     __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED)) < 0) {
			*temp = NULL;
			errno = ENOMEM;
			return -1;
		}
		int fd = open(*temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* Puts the finished decode at temp in place at decoded: over a stale
   decode of the same recording, else only where nothing is. */
static int install_decode(const char *temp, const char *decoded, enum stored_decode was)
{
	if (was == DECODE_STALE)
		return rename(temp, decoded);
	return cgt_rename_noreplace(temp, decoded);
}

/* A line on the caller's notes stream, if it gave one. */
static void __attribute__((format(printf, 2, 3)))
note(const struct cgt_decoder_options *o, const char *fmt, ...)
{
	va_list ap;
	if (o == NULL || o->notes == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(o->notes, fmt, ap);
	va_end(ap);
}

/* A pt trace (header h): decoded once into FOO.decoded.zst beside it,
   which later runs replay.  That name is only ever created exclusively or
   replaced when it holds a stale decode of the same recording; where it
   holds anything else, or nothing can be written beside the trace, the
   decode goes into a file in the caller's scratch directory for this run
   only. */
static int open_pt(struct cgt_decoder **out, const char *path, const struct cgt_trace_header *h,
		   const struct cgt_decoder_options *o,
		   struct cgt_error *e)
{
	char *decoded = decoded_path_of(path), *temp = NULL;
	const char *why;
	struct stat st;
	int rc, stored = 1, fd = -1;

	if (decoded == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	if (stat(path, &st) < 0) {
		free(decoded);
		return cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(errno));
	}
	enum stored_decode was = examine_decode(decoded, h, &st, &why);
	if (was == DECODE_CURRENT) {
		rc = cgt_decoder_open(out, decoded, NULL, e);
		if (rc == 0 && ((*out)->replayed = strdup(decoded)) == NULL) {
			cgt_decoder_close(*out);
			*out = NULL;
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		}
		if (rc == 0)
			(*out)->replay_kept = 1;
		free(decoded);
		return rc;
	}
	if (was == DECODE_STALE) {
		note(o, "cgtrace: %s is out of date (%s): decoding again\n", decoded, why);
	} else if (was == DECODE_FOREIGN) {
		note(o, "cgtrace: %s is not a decode of %s (%s): leaving it alone and decoding for "
			"this run only (remove it to store the decode there)\n", decoded, path, why);
		stored = 0;
	}
	/* held from making the temporary to registering it */
	sigset_t held;
	cgt_temporaries_hold(&held);
	if (stored) {
		fd = create_beside(decoded, &temp);
		if (fd < 0) {
			note(o, "cgtrace: cannot store the decoded trace beside %s (%s): decoding it for "
				"this run only\n", path, strerror(errno));
			stored = 0;
		}
	}
	if (!stored) {
		const char *dir = o != NULL ? o->scratch_dir : NULL;
		free(temp);
		temp = NULL;
		if (dir == NULL) {
			cgt_temporaries_release(&held);
			free(decoded);
			return cgt_fail(e, cgt_err_io, "%s: the decoded Intel PT trace cannot be stored "
					"beside it, and no other directory was given", path);
		}
		if (asprintf(&temp, "%s/cgtrace-decoded.XXXXXX", dir) >= 0)
			fd = mkstemp(temp);
		else
			temp = NULL;
		if (fd < 0) {
			cgt_temporaries_release(&held);
			rc = cgt_fail(e, cgt_err_io, "cannot write a file for the decoded Intel PT trace in %s: %s",
				      dir, strerror(errno));
			free(temp);
			free(decoded);
			return rc;
		}
	}
	cgt_temporary_register(temp);
	cgt_temporaries_release(&held);
	rc = cgt_pt_decode(path, fd, temp, o, e);
	if (close(fd) < 0 && rc == 0)
		rc = cgt_fail(e, cgt_err_io, "%s: %s", temp, strerror(errno));
	if (rc == 0 && stored && install_decode(temp, decoded, was) == 0) {
		note(o, "cgtrace: decoded the Intel PT trace into %s; later runs replay it\n", decoded);
		rc = cgt_decoder_open(out, decoded, NULL, e);
	} else if (rc == 0) {
		if (stored)
			note(o, "cgtrace: cannot put the decoded trace at %s (%s): using it for this run "
				"only\n", decoded, strerror(errno));
		stored = 0;
		rc = cgt_decoder_open(out, temp, NULL, e);
	}
	if (rc == 0 && ((*out)->replayed = strdup(stored ? decoded : temp)) == NULL) {
		cgt_decoder_close(*out);
		*out = NULL;
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	if (rc == 0 && !stored)
		cgt_temporary_register((*out)->replayed);	/* removed when it is closed */
	if (rc == 0)
		(*out)->replay_kept = stored;
	else
		unlink(temp);
	cgt_temporary_unregister(temp);
	free(temp);
	free(decoded);
	return rc;
}

int cgt_decoder_open(struct cgt_decoder **out, const char *path, const struct cgt_decoder_options *o,
		     struct cgt_error *e)
{
	struct cgt_decoder *d = calloc(1, sizeof(*d));
	struct cgt_record rec;
	int rc;

	*out = NULL;
	if (d == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	rc = cgt_reader_open_skipping(&d->reader, path, e);
	if (rc == 0) {
		/* A look at the first frame, which the first worker takes later. */
		struct cgt_frame first = *cgt_reader_first_frame(d->reader);
		cgt_frame_rewind(&first);
		rc = cgt_frame_next_record(&first, &rec, e);
		if (rc == 0)
			rc = cgt_fail(e, cgt_err_corrupt, "%s: the trace has no records (expected a HEADER)",
				      path);
		else if (rc > 0 && rec.type != CGT_REC_HEADER)
			rc = cgt_fail(e, cgt_err_corrupt,
				      "%s: stream offset %llu: expected a HEADER record first, found %s",
				      path, (unsigned long long)rec.stream_offset,
				      cgt_record_type_name(rec.type));
		else if (rc > 0)
			rc = cgt_header_decode(&d->header, &rec, e);
		while (rc == 0) {
			rc = cgt_frame_next_record(&first, &rec, e);
			if (rc <= 0)
				break;
			rc = 0;
			if (rec.type != CGT_REC_MODULE)
				continue;
			if (d->n_first_modules == d->cap_first_modules &&
			    cgt_array_grow(&d->first_modules, &d->cap_first_modules,
					   d->n_first_modules, 1, sizeof(*d->first_modules)) < 0) {
				rc = cgt_fail(e, cgt_err_nomem, "out of memory");
				break;
			}
			struct cgt_module *m = &d->first_modules[d->n_first_modules];
			rc = cgt_module_decode(m, &rec, e);
			d->n_first_modules += rc == 0;
			if (rc == 0)
				rc = charge_maps(d, sizeof(*m) + strlen(m->path) + 1, &rec, e);
		}
	}
	if (rc == 0 && strcmp(d->header.backend, "pt") == 0 && !d->header.decoded.present) {
		/* Packets, not executions: replay their stored decode. */
		rc = open_pt(out, path, &d->header, o, e);
		cgt_decoder_close(d);
		return rc;
	}
	if (rc == 0 && strcmp(d->header.backend, "valgrind") != 0 && strcmp(d->header.backend, "pt") != 0)
		rc = cgt_fail(e, cgt_err_version,
			      "%s: traces of the '%s' backend cannot be decoded by this build", path,
			      d->header.backend);
	if (rc < 0) {
		cgt_decoder_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

const struct cgt_trace_header *cgt_decoder_header(const struct cgt_decoder *d)
{
	return &d->header;
}

int cgt_decoder_next(struct cgt_decoder *d, struct cgt_batch *b, struct cgt_error *e)
{
	struct cgt_segment_info info;
	int rc;

	if (d->sequential == NULL && cgt_decode_worker_open(d, &d->sequential, e) < 0)
		return -e->status;
	for (;;) {
		if (!d->sequential_in_segment) {
			rc = cgt_decode_worker_take(d->sequential, &info, e);
			if (rc <= 0)
				return rc;
			d->sequential_in_segment = 1;
		}
		rc = cgt_decode_worker_next(d->sequential, b, e);
		if (rc != 0)
			return rc;
		d->sequential_in_segment = 0;
	}
}

uint32_t cgt_decoder_version(const struct cgt_decoder *d)
{
	return cgt_reader_version(d->reader);
}

uint64_t cgt_decoder_segments(const struct cgt_decoder *d)
{
	return d->segments_taken;
}

size_t cgt_decoder_first_modules(const struct cgt_decoder *d, const struct cgt_module **m)
{
	*m = d->first_modules;
	return d->n_first_modules;
}

const struct cgt_block_table *cgt_decoder_blocks(const struct cgt_decoder *d)
{
	return &d->blocks;
}

size_t cgt_decoder_mappings(const struct cgt_decoder *d, const struct cgt_mapping **m)
{
	*m = d->maps;
	return d->n_maps;
}

const struct cgt_trace_end *cgt_decoder_end(const struct cgt_decoder *d)
{
	return d->have_end ? &d->end : NULL;
}

int cgt_decoder_lost(struct cgt_decoder *d, const struct cgt_error *e)
{
	return d->sequential != NULL && cgt_decode_worker_lost(d->sequential, e);
}

static int by_offset(const void *a, const void *b)
{
	const struct cgt_damage *x = a, *y = b;
	return x->start != y->start ? (x->start < y->start ? -1 : 1)
				    : (x->end != y->end ? (x->end < y->end ? -1 : 1) : 0);
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

int cgt_decoder_warn_incomplete(const struct cgt_decoder *d, int read_all, FILE *warn)
{
	const struct cgt_damage *passed;
	size_t n_passed = cgt_reader_damage(d->reader, &passed), n = n_passed + d->n_losses;
	const char *trunc = cgt_reader_truncation(d->reader);
	struct cgt_damage *all = n ? malloc(n * sizeof(*all)) : NULL;
	uint64_t bytes = 0, whole = 0, cut = 0, frames = 0;
	uint64_t segments = d->segments_taken;

	if (n > 0 && all == NULL) {
		fprintf(warn, "cgtrace: warning: damaged trace (out of memory for the details)\n");
	} else if (n > 0) {
		if (n_passed > 0)
			memcpy(all, passed, n_passed * sizeof(*all));
		if (d->n_losses > 0)
			memcpy(all + n_passed, d->losses, d->n_losses * sizeof(*all));
		qsort(all, n, sizeof(*all), by_offset);
	}
	uint64_t counted_to = 0;	/* (a stretch may lie in a loss: counted once) */
	for (size_t i = 0; all != NULL && i < n; i++) {
		const struct cgt_damage *x = &all[i];
		if (x->end > counted_to) {
			bytes += x->end - (x->start > counted_to ? x->start : counted_to);
			counted_to = x->end;
		}
		if (x->why[0] != '\0')
			fprintf(warn, "cgtrace: warning: damaged trace: %s\n", x->why);
		if (x->segment == UINT64_MAX) {
			fprintf(warn,
				"cgtrace: warning:   lost: bytes %llu-%llu, where no frame could be read%s\n",
				(unsigned long long)x->start, (unsigned long long)x->end,
				x->frame_follows ? "; too few to hold one, read on at the frame after them"
				: x->end < cgt_reader_file_size(d->reader)
					? "; read on at the segment marker after them"
					: ", to the end of the file");
			continue;
		}
		frames += x->frames;
		whole += x->whole_segment;
		cut += !x->whole_segment;
		fprintf(warn,
			"cgtrace: warning:   lost: the executions in bytes %llu-%llu (%llu frame%s): "
			"%s segment %llu of %llu\n",
			(unsigned long long)x->start, (unsigned long long)x->end,
			(unsigned long long)x->frames, plural(x->frames),
			x->whole_segment ? "all of" : "the rest of", (unsigned long long)x->segment + 1,
			(unsigned long long)segments);
	}
	char unread[64] = "";
	if (n_passed > 0)
		snprintf(unread, sizeof(unread), "; %zu stretch%s where no frame could be read", n_passed,
			 n_passed == 1 ? "" : "es");
	if (n > 0)
		fprintf(warn,
			"cgtrace: warning: damaged trace: in all, %llu of %llu bytes in %zu place%s: "
			"the executions of %llu frame%s; of %llu segment%s, %llu lost and %llu cut "
			"short%s\n",
			(unsigned long long)bytes, (unsigned long long)cgt_reader_file_size(d->reader), n,
			plural(n), (unsigned long long)frames, plural(frames), (unsigned long long)segments,
			plural(segments), (unsigned long long)whole, (unsigned long long)cut, unread);
	free(all);
	if (trunc != NULL)
		fprintf(warn, "cgtrace: warning: %s\n", trunc);
	int no_end = read_all && !d->have_end;
	if (no_end && trunc == NULL)
		fprintf(warn, "cgtrace: warning: the trace has no end record (%s)\n",
			n > 0 ? "it may be in the damage, or the recording was cut short"
			      : "the recording was cut short");
	return n > 0 || trunc != NULL || no_end;
}

const char *cgt_decoder_replayed(const struct cgt_decoder *d)
{
	return d->replayed;
}

int cgt_decoder_replay_kept(const struct cgt_decoder *d)
{
	return d->replay_kept;
}

uint64_t cgt_decoder_file_size(const struct cgt_decoder *d)
{
	return cgt_reader_file_size(d->reader);
}

uint64_t cgt_decoder_file_offset(const struct cgt_decoder *d)
{
	return cgt_reader_file_offset(d->reader);
}

void cgt_decoder_close(struct cgt_decoder *d)
{
	if (d == NULL)
		return;
	cgt_decode_worker_close(d->sequential);
	for (size_t i = 0; i < d->n_first_modules; i++)
		cgt_module_free(&d->first_modules[i]);
	free(d->first_modules);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	cgt_reader_close(d->reader);
	cgt_header_free(&d->header);
	cgt_block_table_free(&d->blocks);
	for (size_t i = 0; i < d->n_maps; i++)
		cgt_module_free(&d->maps[i].module);
	free(d->maps);
	if (d->replayed != NULL && !d->replay_kept) {
		unlink(d->replayed);	/* a decode for this run only */
		cgt_temporary_unregister(d->replayed);
	}
	free(d->replayed);
	free(d->losses);
	free(d);
}
