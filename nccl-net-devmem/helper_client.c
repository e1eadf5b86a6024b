// SPDX-License-Identifier: GPL-2.0
/*
 * The plugin's side of the privileged helper (helper.c, helper_proto.h):
 * a job without CAP_NET_ADMIN whose bind-rx is refused with EPERM asks the
 * helper named by NCCL_DEVMEM_HELPER to bind its region and to steer its
 * data sockets.  One connection per RX region, owned by the region: the
 * helper undoes what the connection made when it closes, so the region
 * closes it after its last data socket, and a killed job leaves nothing.
 *
 * A request and its reply are one exchange under the region's helper lock
 * (rx.c).  A reply that does not come in time (DM_HELPER_BIND_MS for
 * bind-rx, a queue restart; DM_HELPER_TIMEOUT_MS for the rest), or one
 * that is malformed, ends the connection (shutdown): a late reply is never
 * taken for the next request's, and the helper undoes what the connection
 * made; the region's later connections go copy mode.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "helper_proto.h"
#include "plugin.h"

#define DM_HELPER_TIMEOUT_MS 5000
#define DM_HELPER_BIND_MS 35000

int dm_helper_open(const char *path, char *why, size_t wl)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, wl, "%s=%s: path too long", DM_ENV_HELPER, path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, wl, "the helper's socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		snprintf(why, wl, "the helper at %s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

/* Sends q (with fd_in when >= 0) and reads the reply into r, with the fd it
 * carries in *fd_out (when given; any other fd is closed).  0 or -errno
 * for the exchange itself; the helper's answer is r->err. */
static int exchange_once(int h, struct dm_helper_req *q, int fd_in, struct dm_helper_rep *r,
			 int *fd_out, int ms, char *why, size_t wl);

static int exchange(int h, struct dm_helper_req *q, int fd_in, struct dm_helper_rep *r,
		    int *fd_out, char *why, size_t wl)
{
	int ms = q->op == DM_HELPER_BIND_RX ? DM_HELPER_BIND_MS : DM_HELPER_TIMEOUT_MS;
	int err = exchange_once(h, q, fd_in, r, fd_out, ms, why, wl);

	if (err)
		shutdown(h, SHUT_RDWR);
	return err;
}

static int exchange_once(int h, struct dm_helper_req *q, int fd_in, struct dm_helper_rep *r,
			 int *fd_out, int ms, char *why, size_t wl)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { q, sizeof(*q) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	struct pollfd p = { .fd = h, .events = POLLIN };
	uint16_t op = q->op;
	ssize_t n;
	int got = -1, fd, err;

	if (fd_out)
		*fd_out = -1;
	q->magic = DM_HELPER_MAGIC;
	q->version = DM_HELPER_VERSION;
	if (fd_in >= 0) {
		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd_in, sizeof(int));
	}
	/* a refusal is sent at once and the connection closed: it is read
	 * even when the send finds the connection gone */
	if (sendmsg(h, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(*q) && errno != EPIPE &&
	    errno != ECONNRESET) {
		err = -errno;
		snprintf(why, wl, "the helper: send: %s", strerror(-err));
		return err;
	}
	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		snprintf(why, wl, "the helper did not answer in %d ms", ms);
		return -ETIMEDOUT;
	}
	memset(&m, 0, sizeof(m));
	iov.iov_base = r;
	iov.iov_len = sizeof(*r);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cm.buf;
	m.msg_controllen = sizeof(cm.buf);
	n = recvmsg(h, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	/* the helper closed a refused connection with our request unread:
	 * the reset is reported first, its reply after */
	if (n < 0 && errno == ECONNRESET)
		n = recvmsg(h, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	for (c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (got < 0 && fd_out)
				got = fd;
			else
				close(fd);
		}
	}
	if (n != (ssize_t)sizeof(*r) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    r->magic != DM_HELPER_MAGIC || r->version != DM_HELPER_VERSION ||
	    (r->op && r->op != op)) {
		if (got >= 0)
			close(got);
		if (n == 0)
			snprintf(why, wl, "the helper closed the connection");
		else if (n < 0)
			snprintf(why, wl, "the helper: %s", strerror(errno));
		else
			snprintf(why, wl, "the helper's reply is malformed (%zd bytes)", n);
		return n < 0 ? -errno : -EPROTO;
	}
	r->why[sizeof(r->why) - 1] = 0;
	if (r->err > 0 || r->err < -4095) {
		if (got >= 0)
			close(got);
		snprintf(why, wl, "the helper's reply is malformed (error %d)", r->err);
		return -EPROTO;
	}
	if (fd_out)
		*fd_out = got;
	else if (got >= 0)
		close(got);
	return 0;
}

int dm_helper_bind_rx(int h, int ifindex, int dmabuf_fd, const unsigned *queues, int n,
		      uint32_t *id, char *why, size_t wl)
{
	struct dm_helper_req q;
	struct dm_helper_rep r;
	int err, i;

	if (n <= 0 || n > DM_HELPER_MAX_QUEUES) {
		snprintf(why, wl, "%d queues", n);
		return -EINVAL;
	}
	memset(&q, 0, sizeof(q));
	q.op = DM_HELPER_BIND_RX;
	q.ifindex = ifindex;
	q.nqueues = (uint32_t)n;
	for (i = 0; i < n; i++)
		q.queues[i] = queues[i];
	err = exchange(h, &q, dmabuf_fd, &r, NULL, why, wl);
	if (err)
		return err;
	if (r.err) {
		snprintf(why, wl, "the helper: %s", r.why[0] ? r.why : strerror(-r.err));
		return r.err;
	}
	*id = r.id;
	return 0;
}

int dm_helper_steer(int h, int fd, unsigned queue, int *loc, char *why, size_t wl)
{
	struct dm_helper_req q;
	struct dm_helper_rep r;
	int err;

	*loc = -1;
	memset(&q, 0, sizeof(q));
	q.op = DM_HELPER_STEER;
	q.queues[0] = queue;
	err = exchange(h, &q, fd, &r, NULL, why, wl);
	if (err)
		return err;
	if (r.err) {
		snprintf(why, wl, "the helper: %s", r.why[0] ? r.why : strerror(-r.err));
		return r.err;
	}
	if (r.loc < 0) {
		snprintf(why, wl, "the helper steered it to no location");
		return -EPROTO;
	}
	*loc = r.loc;
	return 0;
}

int dm_helper_unsteer(int h, int loc)
{
	struct dm_helper_req q;
	struct dm_helper_rep r;
	char why[64];
	int err;

	if (loc < 0)
		return 0;
	memset(&q, 0, sizeof(q));
	q.op = DM_HELPER_UNSTEER;
	q.loc = loc;
	err = exchange(h, &q, -1, &r, NULL, why, sizeof(why));
	return err ? err : r.err;
}
