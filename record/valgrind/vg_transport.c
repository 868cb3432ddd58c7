/* The shared-buffer channel between the Valgrind tool and cgtrace. */
#include "vg_transport.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vg_protocol.h"

#define SHM_BYTES ((size_t)VG_TRANSPORT_BYTES)

int vg_transport_open(struct vg_transport *t)
{
	t->shm_fd = -1;
	t->ready[0] = t->ready[1] = t->freed[0] = t->freed[1] = -1;
	t->buffers = NULL;
	t->shm_fd = memfd_create("cgtrace-buffers", MFD_CLOEXEC);
	if (t->shm_fd < 0 || ftruncate(t->shm_fd, (off_t)SHM_BYTES) < 0 ||
	    pipe2(t->ready, O_CLOEXEC) < 0 || pipe2(t->freed, O_CLOEXEC) < 0)
		goto fail;
	void *m = mmap(NULL, SHM_BYTES, PROT_READ, MAP_SHARED, t->shm_fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	t->buffers = m;
	return 0;
fail:
	vg_transport_close(t);
	return -1;
}

void vg_transport_pass_to_tool(struct vg_transport *t)
{
	fcntl(t->shm_fd, F_SETFD, 0);
	fcntl(t->ready[1], F_SETFD, 0);
	fcntl(t->freed[0], F_SETFD, 0);
}

int vg_transport_tool_options(const struct vg_transport *t, char *opts[3])
{
	if (asprintf(&opts[0], "--cgtrace-fd=%d", t->ready[1]) < 0)
		return -1;
	if (asprintf(&opts[1], "--cgtrace-free-fd=%d", t->freed[0]) < 0)
		return -1;
	if (asprintf(&opts[2], "--cgtrace-shm-fd=%d", t->shm_fd) < 0)
		return -1;
	return 0;
}

unsigned long long vg_transport_id(const struct vg_transport *t)
{
	struct stat st;
	return fstat(t->ready[1], &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void vg_transport_close_tool_ends(struct vg_transport *t)
{
	close_fd(&t->shm_fd);
	close_fd(&t->ready[1]);
	close_fd(&t->freed[0]);
}

void vg_transport_close(struct vg_transport *t)
{
	vg_transport_close_tool_ends(t);
	close_fd(&t->ready[0]);
	close_fd(&t->freed[1]);
	if (t->buffers != NULL)
		munmap((void *)t->buffers, SHM_BYTES);
	t->buffers = NULL;
}
