/*
 * A perf event's mmap'ed ring buffer and, optionally, its AUX area (where
 * Intel PT writes its packets), read with the kernel's protocol: load the
 * head with acquire semantics, consume up to it, publish the tail with
 * release semantics.  Full-trace mode: the AUX area is mapped writable, so
 * the kernel never overwrites what has not been consumed.  Internal to
 * record/pt/.
 */
#ifndef CGTRACE_PERF_RING_H
#define CGTRACE_PERF_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct perf_ring {
	int fd;
	uint8_t *base;		/* page 0: struct perf_event_mmap_page */
	size_t map_size, data_size;
	uint64_t data_head, data_tail;	/* a snapshot of head, our tail */
	uint8_t *aux;
	size_t aux_size;
	uint64_t aux_head, aux_tail;
	uint8_t bounce[65536];	/* a record that wraps around the end */
};

/* Maps fd's ring of data_pages pages (a power of two) and, if aux_bytes is
   not 0, an AUX area of that size (a power-of-two number of pages).
   0, or -errno with *why. */
int perf_ring_map(struct perf_ring *r, int fd, size_t data_pages, size_t aux_bytes, char *why,
		  size_t why_len);
void perf_ring_unmap(struct perf_ring *r);

/* The next record, or NULL when the ring is empty.  Records stay valid
   until perf_ring_release(), which hands their space back to the kernel. */
const struct perf_event_header *perf_ring_next(struct perf_ring *r);
void perf_ring_release(struct perf_ring *r);

/* The AUX bytes written since the last call, as at most two pieces (the
   area wraps): *offset is the first byte's position in the whole stream.
   Returns the number of bytes; hand them back with perf_ring_aux_release. */
size_t perf_ring_aux_peek(struct perf_ring *r, uint64_t *offset, const uint8_t *piece[2],
			  size_t piece_len[2]);
void perf_ring_aux_release(struct perf_ring *r);

/* The time conversion the kernel published (valid after the first record). */
const struct perf_event_mmap_page *perf_ring_page(const struct perf_ring *r);

#endif
