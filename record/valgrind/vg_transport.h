/*
 * The channel between the Valgrind tool and cgtrace: shared buffers in a
 * memfd, two pipes and a control socket (vg_protocol.h describes the
 * protocol).  Internal to record/valgrind/.
 */
#ifndef CGTRACE_VG_TRANSPORT_H
#define CGTRACE_VG_TRANSPORT_H

#include <stdint.h>
#include "vg_protocol.h"

/* The size of the shared buffers (a memfd: the file size limit applies). */
#define VG_TRANSPORT_BYTES ((uint64_t)CGT_RAW_BUFFERS * CGT_RAW_BUFFER_SIZE)

/* The tool's options naming its descriptors: --cgtrace-fd= (the ready
   pipe), --cgtrace-free-fd=, --cgtrace-shm-fd=, --cgtrace-ctl-fd=. */
#define VG_TRANSPORT_TOOL_OPTIONS 4
extern const char *const vg_transport_option_names[VG_TRANSPORT_TOOL_OPTIONS];

struct vg_transport {
	int shm_fd;		/* the shared buffers, for the tool */
	int ready[2];		/* tool -> cgtrace: {u32 buffer, u32 bytes} */
	int freed[2];		/* cgtrace -> tool: u32 buffer */
	int ctl[2];		/* [0] cgtrace's, [1] the tool's: a fork's descriptors */
	const uint8_t *buffers;	/* cgtrace's read-only mapping */
};

/* Creates everything close-on-exec.  Returns 0 or -1 (errno set). */
int vg_transport_open(struct vg_transport *t);
/* The transport of a child the program forked: cgtrace's ends, which came
   on t's control socket with the FORK item.  Returns 0 or -1 (errno set;
   EPROTO: no descriptors came). */
int vg_transport_receive_fork(const struct vg_transport *t, struct vg_transport *child);
/* In the process about to become the tool: keep its descriptors across
   exec. */
void vg_transport_pass_to_tool(struct vg_transport *t);
/* The tool's command-line options naming its descriptors (malloc'd). */
int vg_transport_tool_options(const struct vg_transport *t, char *opts[VG_TRANSPORT_TOOL_OPTIONS]);
/* Identifies this transport's ready pipe (for the launcher). */
unsigned long long vg_transport_id(const struct vg_transport *t);
/* In cgtrace, once the tool has its copies: close the tool's ends. */
void vg_transport_close_tool_ends(struct vg_transport *t);
void vg_transport_close(struct vg_transport *t);

#endif
