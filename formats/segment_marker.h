/*
 * The segment marker (TRACE-FORMAT.md, "Segments"): a skippable zstd frame
 * written just before each frame that begins a segment, so that a reader
 * finds segments by walking frame headers, without decompressing.
 * Internal to formats/.
 */
#ifndef CGTRACE_SEGMENT_MARKER_H
#define CGTRACE_SEGMENT_MARKER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CGT_SEGMENT_MARKER_LEN 16

/* magic 0x184D2A5C (little-endian), length 8, "CGTSEGMT" */
static const uint8_t cgt_segment_marker[CGT_SEGMENT_MARKER_LEN] = {
	0x5C, 0x2A, 0x4D, 0x18, 8, 0, 0, 0, 'C', 'G', 'T', 'S', 'E', 'G', 'M', 'T',
};

static inline int cgt_is_segment_marker(const uint8_t *p, size_t avail)
{
	return avail >= CGT_SEGMENT_MARKER_LEN &&
	       memcmp(p, cgt_segment_marker, CGT_SEGMENT_MARKER_LEN) == 0;
}

#endif
