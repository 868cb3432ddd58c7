/*
 * The channel between the Valgrind tool and cgtrace: shared buffers in a
 * memfd and two pipes (vg_protocol.h describes the protocol).  Internal to
 * record/valgrind/.
 */
#ifndef CGTRACE_VG_TRANSPORT_H
#define CGTRACE_VG_TRANSPORT_H

#include <stdint.h>

#include "vg_protocol.h"

/* The size of the shared buffers (a memfd: the file size limit applies). */
#define VG_TRANSPORT_BYTES ((uint64_t)CGT_RAW_BUFFERS * CGT_RAW_BUFFER_SIZE)

struct vg_transport {
	int shm_fd;		/* the shared buffers, for the tool */
	int ready[2];		/* tool -> cgtrace: {u32 buffer, u32 bytes} */
	int freed[2];		/* cgtrace -> tool: u32 buffer */
	const uint8_t *buffers;	/* cgtrace's read-only mapping */
};

/* Creates everything close-on-exec.  Returns 0 or -1 (errno set). */
int vg_transport_open(struct vg_transport *t);

/* In the process about to become the tool: keep its three descriptors
   across exec. */
void vg_transport_pass_to_tool(struct vg_transport *t);

/* The tool's command-line options naming its three descriptors.  Writes
   three malloc'd strings. */
int vg_transport_tool_options(const struct vg_transport *t, char *opts[3]);

/* Identifies this transport's ready pipe (for the launcher). */
unsigned long long vg_transport_id(const struct vg_transport *t);

/* In cgtrace, once the tool has its copies: close the tool's ends. */
void vg_transport_close_tool_ends(struct vg_transport *t);

void vg_transport_close(struct vg_transport *t);

#endif
