/*
 * Decoder of traces whose EVENTS records carry the executions themselves
 * (the Valgrind backend): replays the block table and the module map and
 * hands out executions in batches.
 *
 * Decoding runs ahead on a thread of its own, filling a small ring of
 * batches while the consumer (the simulator) works on the previous ones.
 * Only that thread touches the reader, the block table's codec state and
 * the module map until the end of the trace; blocks, once made, never
 * move or change in what consumers read.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <immintrin.h>

#include "decode.h"

/* A batch ends when either array is full. */
/* Small enough for a batch to stay in the host's caches. */
#define BATCH_EXECS 8192
#define BATCH_VALUES (1u << 17)
#define SLOTS 3

struct slot {
	struct cgt_exec *execs;
	uint64_t *values;
	size_t n;
};

struct cgt_decoder {
	struct cgt_reader *reader;
	struct cgt_trace_header header;
	struct cgt_block_table blocks;
	uint32_t max_block_values;
	uint32_t map_epoch;

	struct cgt_mapping *maps;
	size_t n_maps, cap_maps;

	struct cgt_record rec;
	struct cgt_events_cursor events;	/* valid when in_events */
	int in_events;

	struct cgt_trace_end end;
	int have_end, at_end;

	/* The ring: the thread fills slots[filled % SLOTS], the consumer reads
	   slots[taken % SLOTS]; the consumer holds a slot until its next call.
	   filled and taken are also read without the lock, to spin briefly
	   before sleeping: both sides are usually busy, and a sleep and wake-up
	   per batch costs more than the batch. */
	struct slot slots[SLOTS];
	uint64_t filled, taken;
	int holding;
	int finished;		/* the thread has stopped: end or error */
	int stopping;		/* the consumer wants it to stop */
	struct cgt_error error;
	int status;		/* of the thread: 0 or negative */
	int thread_started;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static int add_mapping(struct cgt_decoder *d, const struct cgt_module *m, uint32_t epoch,
		       struct cgt_error *e)
{
	if (d->n_maps == d->cap_maps) {
		size_t cap = d->cap_maps ? d->cap_maps * 2 : 64;
		struct cgt_mapping *maps = realloc(d->maps, cap * sizeof(*maps));
		if (maps == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		d->maps = maps;
		d->cap_maps = cap;
	}
	struct cgt_mapping *map = &d->maps[d->n_maps++];
	map->module = *m;
	map->epoch_mapped = epoch;
	map->epoch_unmapped = UINT32_MAX;
	return 0;
}

/* Ends the mappings that overlap [start, start+size); the parts outside
   it live on as new mappings. */
static int unmap(struct cgt_decoder *d, uint64_t start, uint64_t size, uint32_t epoch,
		 struct cgt_error *e)
{
	uint64_t end = start + size;
	size_t n = d->n_maps;

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
			if (m.path == NULL || add_mapping(d, &m, epoch, e) < 0) {
				free(m.path);
				return cgt_fail(e, cgt_err_nomem, "out of memory");
			}
			map = &d->maps[i];	/* add_mapping may move the array */
		}
	}
	return 0;
}

const struct cgt_mapping *cgt_decoder_find_mapping(const struct cgt_decoder *d, uint64_t addr,
						   uint32_t map_epoch)
{
	/* Newest first: a later mapping of the same range wins. */
	for (size_t i = d->n_maps; i-- > 0;) {
		const struct cgt_mapping *map = &d->maps[i];
		if (addr - map->module.start < map->module.size && map->epoch_mapped <= map_epoch &&
		    map_epoch < map->epoch_unmapped)
			return map;
	}
	return NULL;
}

/* Handles every record that is not EVENTS.  Returns 1 if rec is EVENTS. */
static int take_record(struct cgt_decoder *d, struct cgt_error *e)
{
	const struct cgt_record *rec = &d->rec;
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
			rc = add_mapping(d, &m, ++d->map_epoch, e);
			if (rc < 0)
				cgt_module_free(&m);
		}
		return rc;
	}
	case CGT_REC_UNMAP: {
		uint64_t start, size;
		rc = cgt_unmap_decode(&start, &size, rec, e);
		return rc < 0 ? rc : unmap(d, start, size, ++d->map_epoch, e);
	}
	case CGT_REC_BLOCKS: {
		uint32_t before = d->blocks.n;
		rc = cgt_blocks_decode(&d->blocks, rec, d->map_epoch, e);
		for (uint32_t i = before; i < d->blocks.n; i++)
			if (d->blocks.blocks[i]->n_values > d->max_block_values)
				d->max_block_values = d->blocks.blocks[i]->n_values;
		return rc;
	}
	case CGT_REC_EVENTS:
		rc = cgt_events_open(&d->events, rec, e);
		return rc < 0 ? rc : 1;
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

/* Fills one slot; returns its count (0 at the end) or a negative error. */
static int fill_slot(struct cgt_decoder *d, struct slot *slot, struct cgt_error *e)
{
	size_t n = 0, used = 0;
	int rc;

	while (!d->at_end && n < BATCH_EXECS && BATCH_VALUES - used >= d->max_block_values) {
		if (!d->in_events) {
			rc = cgt_reader_next(d->reader, &d->rec, e);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				d->at_end = 1;
				break;
			}
			rc = take_record(d, e);
			if (rc < 0)
				return rc;
			d->in_events = rc == 1;
			continue;
		}
		rc = cgt_events_fill(&d->events, &d->blocks, slot->execs, BATCH_EXECS, slot->values,
				     BATCH_VALUES, d->max_block_values, &n, &used, e);
		if (rc < 0)
			return rc;
		if (rc == 0)
			d->in_events = 0;
	}
	slot->n = n;
	return (int)(n > 0);
}

/* Waits up to about 50 microseconds for *counter to differ from value. */
static void spin_until_changed(const uint64_t *counter, uint64_t value)
{
	for (int i = 0; i < 2000 && __atomic_load_n(counter, __ATOMIC_ACQUIRE) == value; i++)
		_mm_pause();
}

static void *decode_ahead(void *arg)
{
	struct cgt_decoder *d = arg;
	struct cgt_error e;

	for (;;) {
		if (__atomic_load_n(&d->filled, __ATOMIC_RELAXED) -
			    __atomic_load_n(&d->taken, __ATOMIC_ACQUIRE) == SLOTS)
			spin_until_changed(&d->taken, d->filled - SLOTS);
		pthread_mutex_lock(&d->lock);
		while (d->filled - d->taken == SLOTS && !d->stopping)
			pthread_cond_wait(&d->cond, &d->lock);
		int stop = d->stopping;
		struct slot *slot = &d->slots[d->filled % SLOTS];
		pthread_mutex_unlock(&d->lock);
		if (stop)
			break;

		int rc = fill_slot(d, slot, &e);

		pthread_mutex_lock(&d->lock);
		if (rc > 0) {
			__atomic_store_n(&d->filled, d->filled + 1, __ATOMIC_RELEASE);
		} else {
			d->status = rc;
			if (rc < 0)
				d->error = e;
			d->finished = 1;
		}
		pthread_cond_broadcast(&d->cond);
		pthread_mutex_unlock(&d->lock);
		if (rc <= 0)
			break;
	}
	return NULL;
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

/* Opens the stored decode at decoded if it is of the pt trace at path, as
   it is now, by this decoder: 1 (*out open), else 0 with *why (NULL if
   there is none). */
static int open_current_decode(struct cgt_decoder **out, const char *path, const char *decoded,
			       const char **why)
{
	struct cgt_decoder *d;
	struct cgt_error e;
	struct stat st;

	*why = NULL;
	if (access(decoded, F_OK) != 0)
		return 0;
	if (stat(path, &st) < 0 || cgt_decoder_open(&d, decoded, &e) < 0) {
		*why = "it cannot be read";
		return 0;
	}
	const struct cgt_pt_decoded *x = &cgt_decoder_header(d)->decoded;
	int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (!x->present)
		*why = "it is not a decoded Intel PT trace";
	else if (x->source_size != (uint64_t)st.st_size || x->source_mtime_ns != mtime)
		*why = "the trace has changed since it was decoded";
	else if (x->decoder_version != CGT_PT_DECODER_VERSION)
		*why = "this cgtrace decodes differently";
	if (*why != NULL) {
		cgt_decoder_close(d);
		return 0;
	}
	*out = d;
	return 1;
}

/* A pt trace: decoded once into FOO.decoded.zst beside it, which later
   runs replay; where nothing can be written beside it, into a temporary
   file for this run only. */
static int open_pt(struct cgt_decoder **out, const char *path, struct cgt_error *e)
{
	char *decoded = decoded_path_of(path), *temp = NULL;
	const char *why;
	int rc, stored = 1;

	if (decoded == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	if (open_current_decode(out, path, decoded, &why)) {
		free(decoded);
		return 0;
	}
	if (why != NULL)
		fprintf(stderr, "cgtrace: %s is out of date (%s): decoding again\n", decoded, why);
	int fd = -1;
	if (asprintf(&temp, "%s.part", decoded) >= 0)
		fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		fprintf(stderr, "cgtrace: cannot store the decoded trace beside %s: decoding it for this "
				"run only\n", path);
		free(temp);
		temp = NULL;
		stored = 0;
		if (asprintf(&temp, "%s/cgtrace-decoded.XXXXXX", dir) >= 0)
			fd = mkstemp(temp);
	}
	if (fd < 0) {
		free(temp);
		free(decoded);
		return cgt_fail(e, cgt_err_io, "cannot write a file for the decoded Intel PT trace");
	}
	close(fd);
	rc = cgt_pt_decode(path, temp, isatty(STDERR_FILENO) ? stderr : NULL, e);
	if (rc == 0 && stored && rename(temp, decoded) == 0) {
		fprintf(stderr, "cgtrace: decoded the Intel PT trace into %s; later runs replay it\n",
			decoded);
		rc = cgt_decoder_open(out, decoded, e);
	} else if (rc == 0) {
		rc = cgt_decoder_open(out, temp, e);
	}
	unlink(temp);	/* renamed, or kept open by the reader until the end */
	free(temp);
	free(decoded);
	return rc;
}

int cgt_decoder_open(struct cgt_decoder **out, const char *path, struct cgt_error *e)
{
	struct cgt_decoder *d = calloc(1, sizeof(*d));
	int rc;

	*out = NULL;
	if (d == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	for (int i = 0; i < SLOTS; i++) {
		d->slots[i].execs = malloc(BATCH_EXECS * sizeof(struct cgt_exec));
		d->slots[i].values = malloc(BATCH_VALUES * sizeof(uint64_t));
		if (d->slots[i].execs == NULL || d->slots[i].values == NULL) {
			cgt_decoder_close(d);
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		}
	}
	rc = cgt_reader_open(&d->reader, path, e);
	if (rc == 0) {
		rc = cgt_reader_next(d->reader, &d->rec, e);
		if (rc == 0)
			rc = cgt_fail(e, cgt_err_corrupt, "%s: the trace has no records (expected a HEADER)",
				      path);
		else if (rc > 0 && d->rec.type != CGT_REC_HEADER)
			rc = cgt_fail(e, cgt_err_corrupt,
				      "%s: stream offset %llu: expected a HEADER record first, found %s",
				      path, (unsigned long long)d->rec.stream_offset,
				      cgt_record_type_name(d->rec.type));
		else if (rc > 0)
			rc = cgt_header_decode(&d->header, &d->rec, e);
	}
	if (rc == 0 && strcmp(d->header.backend, "pt") == 0 && !d->header.decoded.present) {
		/* Packets, not executions: replay their stored decode. */
		cgt_decoder_close(d);
		return open_pt(out, path, e);
	}
	if (rc == 0 && strcmp(d->header.backend, "valgrind") != 0 && strcmp(d->header.backend, "pt") != 0)
		rc = cgt_fail(e, cgt_err_version,
			      "%s: traces of the '%s' backend cannot be decoded by this build", path,
			      d->header.backend);
	if (rc == 0 && pthread_create(&d->thread, NULL, decode_ahead, d) != 0)
		rc = cgt_fail(e, cgt_err_nomem, "cannot start the decoding thread");
	if (rc < 0) {
		cgt_decoder_close(d);
		return rc;
	}
	d->thread_started = 1;
	*out = d;
	return 0;
}

const struct cgt_trace_header *cgt_decoder_header(const struct cgt_decoder *d)
{
	return &d->header;
}

int cgt_decoder_next(struct cgt_decoder *d, struct cgt_batch *b, struct cgt_error *e)
{
	if (d->holding) {	/* give back the slot handed out last time */
		__atomic_store_n(&d->taken, d->taken + 1, __ATOMIC_RELEASE);
		d->holding = 0;
		pthread_mutex_lock(&d->lock);
		pthread_cond_broadcast(&d->cond);
		pthread_mutex_unlock(&d->lock);
	}
	spin_until_changed(&d->filled, d->taken);
	pthread_mutex_lock(&d->lock);
	while (d->filled == d->taken && !d->finished)
		pthread_cond_wait(&d->cond, &d->lock);
	int rc = 1;
	if (d->filled > d->taken) {
		struct slot *slot = &d->slots[d->taken % SLOTS];
		b->execs = slot->execs;
		b->n = slot->n;
		d->holding = 1;
	} else {
		b->execs = NULL;
		b->n = 0;
		rc = d->status;
		if (rc < 0 && e != NULL)
			*e = d->error;
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
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

const char *cgt_decoder_truncation(const struct cgt_decoder *d)
{
	return cgt_reader_truncation(d->reader);
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
	if (d->thread_started) {
		pthread_mutex_lock(&d->lock);
		d->stopping = 1;
		pthread_cond_broadcast(&d->cond);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	for (int i = 0; i < SLOTS; i++) {
		free(d->slots[i].execs);
		free(d->slots[i].values);
	}
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	cgt_reader_close(d->reader);
	cgt_header_free(&d->header);
	cgt_block_table_free(&d->blocks);
	for (size_t i = 0; i < d->n_maps; i++)
		cgt_module_free(&d->maps[i].module);
	free(d->maps);
	free(d);
}
