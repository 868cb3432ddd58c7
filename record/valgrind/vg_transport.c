/* The shared-buffer channel between the Valgrind tool and cgtrace. */
#include "vg_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vg_protocol.h"

#define SHM_BYTES ((size_t)VG_TRANSPORT_BYTES)

const char *const vg_transport_option_names[VG_TRANSPORT_TOOL_OPTIONS] = {
	"--cgtrace-fd=", "--cgtrace-free-fd=", "--cgtrace-shm-fd=", "--cgtrace-ctl-fd="
};

static void init(struct vg_transport *t)
{
	t->shm_fd = -1;
	t->ready[0] = t->ready[1] = t->freed[0] = t->freed[1] = t->ctl[0] = t->ctl[1] = -1;
	t->buffers = NULL;
}

static int map_buffers(struct vg_transport *t, int shm_fd)
{
	void *m = mmap(NULL, SHM_BYTES, PROT_READ, MAP_SHARED, shm_fd, 0);
	if (m == MAP_FAILED)
		return -1;
	t->buffers = m;
	return 0;
}

int vg_transport_open(struct vg_transport *t)
{
	init(t);
	t->shm_fd = memfd_create("cgtrace-buffers", MFD_CLOEXEC);
	if (t->shm_fd < 0 || ftruncate(t->shm_fd, (off_t)SHM_BYTES) < 0 ||
	    pipe2(t->ready, O_CLOEXEC) < 0 || pipe2(t->freed, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, t->ctl) < 0 ||
	    map_buffers(t, t->shm_fd) < 0) {
		int err = errno;
		vg_transport_close(t);
		errno = err;
		return -1;
	}
	return 0;
}

int vg_transport_receive_fork(const struct vg_transport *t, struct vg_transport *child)
{
	int fds[CGT_RAW_FORK_FDS];
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(fds))];
	} control;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
			      .msg_controllen = sizeof(control.space) };

	init(child);
	/* The tool sent them before the buffer that holds the FORK item. */
	ssize_t n;
	while ((n = recvmsg(t->ctl[0], &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(fds)) || (msg.msg_flags & MSG_CTRUNC)) {
		/* Descriptors that came in a message of the wrong shape are
		   closed by the kernel only when truncated: close the rest. */
		if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
				close(((int *)CMSG_DATA(c))[i]);
		errno = n < 0 ? errno : EPROTO;
		return -1;
	}
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	child->ready[0] = fds[0];
	child->freed[1] = fds[1];
	child->ctl[0] = fds[3];
	int rc = map_buffers(child, fds[2]);
	int err = errno;
	close(fds[2]);
	if (rc < 0) {
		vg_transport_close(child);
		errno = err;
	}
	return rc;
}

void vg_transport_pass_to_tool(struct vg_transport *t)
{
	fcntl(t->shm_fd, F_SETFD, 0);
	fcntl(t->ready[1], F_SETFD, 0);
	fcntl(t->freed[0], F_SETFD, 0);
	fcntl(t->ctl[1], F_SETFD, 0);
}

int vg_transport_tool_options(const struct vg_transport *t, char *opts[VG_TRANSPORT_TOOL_OPTIONS])
{
	const int fds[VG_TRANSPORT_TOOL_OPTIONS] = { t->ready[1], t->freed[0], t->shm_fd, t->ctl[1] };
	for (int i = 0; i < VG_TRANSPORT_TOOL_OPTIONS; i++)
		if (asprintf(&opts[i], "%s%d", vg_transport_option_names[i], fds[i]) < 0) {
			opts[i] = NULL;
			return -1;
		}
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
	close_fd(&t->ctl[1]);
}

void vg_transport_close(struct vg_transport *t)
{
	vg_transport_close_tool_ends(t);
	close_fd(&t->ready[0]);
	close_fd(&t->freed[1]);
	close_fd(&t->ctl[0]);
	if (t->buffers != NULL)
		munmap((void *)t->buffers, SHM_BYTES);
	t->buffers = NULL;
}
