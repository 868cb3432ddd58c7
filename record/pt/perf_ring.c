/*
 * perf ring buffers (see perf_ring.h): kernel/events/ring_buffer.c is the
 * other side; tools/perf/util/mmap.c and auxtrace.c read them the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf_ring.h"

int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages, size_t aux_bytes, char *why,
		  size_t why_len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(r, 0, offsetof(struct perf_ring, bounce));
	r->fd = fd;
	r->map_size = (1 + data_pages) * page;
	r->data_size = data_pages * page;
	r->base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		int err = errno;
		r->base = NULL;
		snprintf(why, why_len, "cannot map the perf ring buffer (%zu KiB): %s", r->map_size / 1024,
			 strerror(err));
		return -err;
	}
	if (aux_bytes == 0)
		return 0;
	struct perf_event_mmap_page *pc = (struct perf_event_mmap_page *)r->base;
	pc->aux_offset = r->map_size;
	pc->aux_size = aux_bytes;
	/* Writable: full-trace mode, nothing unread is overwritten. */
	r->aux = mmap(NULL, aux_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)pc->aux_offset);
	if (r->aux == MAP_FAILED) {
		int err = errno;
		r->aux = NULL;
		perf_ring_unmap(r);
		snprintf(why, why_len, "cannot map the trace buffer (%zu KiB): %s", aux_bytes / 1024,
			 strerror(err));
		return -err;
	}
	r->aux_size = aux_bytes;
	return 0;
}

void perf_ring_unmap(struct perf_ring *r)
{
	if (r->aux != NULL)
		munmap(r->aux, r->aux_size);
	if (r->base != NULL)
		munmap(r->base, r->map_size);
	r->aux = r->base = NULL;
}

const struct perf_event_header *perf_ring_next(struct perf_ring *r)
{
	struct perf_event_mmap_page *pc = (struct perf_event_mmap_page *)r->base;

	if (r->data_tail == r->data_head)
		r->data_head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	if (r->data_head - r->data_tail < sizeof(struct perf_event_header))
		return NULL;
	const uint8_t *data = r->base + pc->data_offset;
	size_t mask = r->data_size - 1, at = (size_t)(r->data_tail & mask);
	struct perf_event_header h;
	for (size_t i = 0; i < sizeof(h); i++)
		((uint8_t *)&h)[i] = data[(at + i) & mask];
	if (h.size < sizeof(h) || h.size > r->data_head - r->data_tail)
		return NULL;	/* not written in full yet (or a broken ring) */
	r->data_tail += h.size;
	if (at + h.size <= r->data_size)
		return (const struct perf_event_header *)(data + at);
	size_t first = r->data_size - at;
	memcpy(r->bounce, data + at, first);
	memcpy(r->bounce + first, data, h.size - first);
	return (const struct perf_event_header *)r->bounce;
}

void perf_ring_release(struct perf_ring *r)
{
	struct perf_event_mmap_page *pc = (struct perf_event_mmap_page *)r->base;
	__atomic_store_n(&pc->data_tail, r->data_tail, __ATOMIC_RELEASE);
}

size_t perf_ring_aux_peek(struct perf_ring *r, uint64_t *offset, const uint8_t *piece[2],
			  size_t piece_len[2])
{
	struct perf_event_mmap_page *pc = (struct perf_event_mmap_page *)r->base;

	r->aux_head = __atomic_load_n(&pc->aux_head, __ATOMIC_ACQUIRE);
	size_t n = (size_t)(r->aux_head - r->aux_tail);
	size_t at = (size_t)(r->aux_tail & (r->aux_size - 1));
	size_t first = n < r->aux_size - at ? n : r->aux_size - at;
	*offset = r->aux_tail;
	piece[0] = r->aux + at;
	piece_len[0] = first;
	piece[1] = r->aux;
	piece_len[1] = n - first;
	return n;
}

void perf_ring_aux_release(struct perf_ring *r)
{
	struct perf_event_mmap_page *pc = (struct perf_event_mmap_page *)r->base;
	r->aux_tail = r->aux_head;
	__atomic_store_n(&pc->aux_tail, r->aux_tail, __ATOMIC_RELEASE);
}

const struct perf_event_mmap_page *perf_ring_page(const struct perf_ring *r)
{
	return (const struct perf_event_mmap_page *)r->base;
}
