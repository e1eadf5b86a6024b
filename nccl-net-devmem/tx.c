// SPDX-License-Identifier: GPL-2.0
/*
 * devmem TX: sending from a dma-buf.
 *
 * regMrDmaBuf on a send comm binds the dma-buf for transmit on the comm's
 * device (bind-tx, inside the call: NCCL closes the fd right after it; the
 * binding holds its own reference to the dma-buf and lives as long as the
 * registration's netlink socket).  A chunk from such memory goes out with
 * sendmsg(MSG_ZEROCOPY) and a SCM_DEVMEM_DMABUF control message naming the
 * binding, its iovec giving offsets into the dma-buf: the NIC reads the
 * payload from the dma-buf itself.  The kernel keeps referring to those
 * bytes until it reports the sendmsg call done on the socket's error
 * queue, so a send request completes only when every call that carried its
 * bytes is reported (struct dm_zc).
 *
 * A NIC without devmem TX (bind-tx refused: the reason logged once per
 * device) or NCCL_DEVMEM_TX=0 gives plain registrations: plain send from
 * the memory's mapping.  A devmem sendmsg the kernel refuses (a route onto
 * another device, a binding gone) makes that comm send plainly from then
 * on, logged with the reason; the bytes already queued are not affected.
 * Plain send of GPU memory goes through a pinned host stage (gpu.c).
 */
#include <errno.h>
#include <time.h>		/* before linux/errqueue.h, which needs timespec */
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devmem_abi.h"
#include "plugin.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif

/* bind-tx refusals said, one bit per device (atomic: any comm may say it) */
static atomic_uint tx_refusal_said[DM_MAX_DEVS];

int dm_tx_bind(struct dm_mr *mr, int dev, int dmabuf_fd)
{
	const struct dm_dev *d = dm_dev_get(dev);
	char why[256], reason[300];
	int err;

	mr->tx_nl.fd = -1;
	mr->tx_id = 0;
	if (!d)
		return -ENODEV;
	if (!dm_env_int(DM_ENV_TX, 1, 0, 1)) {
		snprintf(reason, sizeof(reason), "%s=0", DM_ENV_TX);
		goto plain;
	}
	err = dm_nl_open(&mr->tx_nl, why, sizeof(why));
	if (err) {
		snprintf(reason, sizeof(reason), "%s", why);
		goto plain;
	}
	err = dm_nl_bind_tx(&mr->tx_nl, d->ifindex, dmabuf_fd, &mr->tx_id, why, sizeof(why));
	if (!err && !mr->tx_id)
		snprintf(why, sizeof(why), "answered binding id 0");
	if (err || !mr->tx_id) {
		snprintf(reason, sizeof(reason), "bind-tx: %s", why);
		dm_tx_unbind(mr);
		goto plain;
	}
	DM_INFO(NCCL_NET, "regMrDmaBuf: comm %p: %zu bytes at dma-buf offset %llu "
		"bound for devmem TX on %s (binding %u)", mr->comm, mr->size,
		(unsigned long long)mr->dmabuf_off, d->name, mr->tx_id);
	return 0;
plain:
	/* a refusal is news once per device; NCCL_DEVMEM_TX=0 was asked for */
	if (strcmp(reason, DM_ENV_TX "=0") && !atomic_exchange(&tx_refusal_said[dev], 1))
		DM_WARN("no devmem TX on %s (%s): dma-buf memory goes by plain send",
			d->name, reason);
	DM_INFO(NCCL_NET, "regMrDmaBuf: comm %p: %zu bytes, plain send (%s)",
		mr->comm, mr->size, reason);
	return 0;
}

void dm_tx_unbind(struct dm_mr *mr)
{
	dm_nl_close(&mr->tx_nl);
	mr->tx_id = 0;
}

static ssize_t devmem_sendmsg(int fd, uint32_t id, uint64_t off, uint64_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)off, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	memset(ctl.buf, 0, sizeof(ctl.buf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = DM_SO_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	memcpy(CMSG_DATA(cm), &id, sizeof(id));
	return sendmsg(fd, &msg, MSG_ZEROCOPY | MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The comm sends plainly from now on; said once per comm. */
static void fall_back(struct dm_comm *c, int k, int err, const char *what)
{
	int expect = 0;

	if (atomic_compare_exchange_strong(&c->tx_fallback, &expect, err))
		DM_WARN("send comm %p (dev %d, peer %s): %s on data socket %d: %s; plain send "
			"from now on", (void *)c, c->dev, c->peer, what, k, strerror(err));
}

/* Errors of a devmem sendmsg that plain send does not have. */
static int devmem_only_error(int err)
{
	switch (err) {
	case EINVAL:		/* unknown binding, no SO_ZEROCOPY */
	case ENODEV:		/* the route leaves by another device */
	case EOPNOTSUPP:	/* a socket devmem cannot serve (TCP MD5) */
	case EPERM:		/* another user's binding */
	case EFAULT:		/* offsets past the dma-buf */
	case EHOSTUNREACH:	/* no route to check the device with */
	case ENOBUFS:		/* no zerocopy notification could be allocated */
	case ENOMEM:
		return 1;
	}
	return 0;
}

/* Ids lo..hi of socket k are done. 0, or -1 when they were not in flight. */
static int complete(struct dm_comm *c, struct dm_sock *s, uint32_t lo, uint32_t hi)
{
	struct dm_zc *z = &s->zc;
	uint32_t inflight = z->next - z->head, id;

	if (lo - z->head >= inflight || hi - z->head >= inflight || hi - z->head < lo - z->head)
		return -1;
	pthread_mutex_lock(&c->lock);
	for (id = lo;; id++) {
		unsigned i = id % DM_ZC_RING;
		struct dm_req *q = &c->reqs[z->owner[i] % DM_MAX_REQS];

		if (z->done[i] || q->seq != z->owner[i]) {
			pthread_mutex_unlock(&c->lock);
			return -1;
		}
		z->done[i] = 1;
		q->zc_left--;
		dm_send_maybe_done(q);
		if (id == hi)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	while (z->head != z->next && z->done[z->head % DM_ZC_RING]) {
		z->done[z->head % DM_ZC_RING] = 0;
		z->head++;
	}
	return 0;
}

int dm_tx_reap(struct dm_comm *c, int k)
{
	struct dm_sock *s = &c->socks[k];
	int got = 0;

	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(struct sock_extended_err) +
					    sizeof(struct sockaddr_in6))];
			struct cmsghdr align;
		} ctl;
		struct msghdr msg = { .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		struct cmsghdr *cm;
		ssize_t r = recvmsg(s->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				dm_comm_error(c, ncclSystemError, "data socket %d: error queue: %s",
					      k, strerror(errno));
				return -1;
			}
			break;
		}
		if (msg.msg_flags & MSG_CTRUNC) {
			dm_comm_error(c, ncclSystemError, "data socket %d: error queue message "
				      "truncated", k);
			return -1;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err ee;

			if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)))
				continue;
			if (cm->cmsg_len < CMSG_LEN(sizeof(ee))) {
				dm_comm_error(c, ncclSystemError, "data socket %d: short "
					      "completion (%zu bytes)", k, (size_t)cm->cmsg_len);
				return -1;
			}
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee.ee_errno) {
				dm_comm_error(c, ncclSystemError, "data socket %d: error queue: "
					      "origin %u, errno %u", k, ee.ee_origin, ee.ee_errno);
				return -1;
			}
			if (complete(c, s, ee.ee_info, ee.ee_data)) {
				dm_comm_error(c, ncclSystemError, "data socket %d: completion of "
					      "sends %u-%u, which are not in flight (%u from %u are)",
					      k, ee.ee_info, ee.ee_data, s->zc.next - s->zc.head,
					      s->zc.head);
				return -1;
			}
			got++;
		}
	}
	if (!got && s->zc.head != s->zc.next) {
		int err = 0;
		socklen_t len = sizeof(err);

		/* POLLERR without completions: the connection failed */
		if (!getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) && err) {
			dm_comm_error(c, ncclRemoteError, "data socket %d: %s", k, strerror(err));
			return -1;
		}
	}
	return got;
}

int dm_tx_chunk(struct dm_comm *c, int k, short *ev, uint64_t *moved, uint64_t budget)
{
	struct dm_sock *s = &c->socks[k];
	struct dm_zc *z = &s->zc;

	while (s->left) {
		int devmem = s->tx_id && !atomic_load(&c->tx_fallback);
		ssize_t r;

		if (devmem && z->next - z->head >= DM_ZC_RING) {
			if (dm_tx_reap(c, k) < 0)
				return -1;
			if (z->next - z->head >= DM_ZC_RING) {
				*ev = POLLERR;	/* wait for completions */
				return 0;
			}
		}
		if (devmem && !z->on) {
			int one = 1;

			if (setsockopt(s->fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
				fall_back(c, k, errno, "SO_ZEROCOPY");
				continue;
			}
			z->on = 1;
		}
		if (devmem)
			r = devmem_sendmsg(s->fd, s->tx_id, s->tx_off, s->left);
		else if (s->gpu)
			r = dm_gpu_send(c, k);	/* through a host stage */
		else
			r = send(s->fd, s->ptr, s->left, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r > 0) {
			if (devmem) {
				z->owner[z->next % DM_ZC_RING] = s->owner;
				z->done[z->next % DM_ZC_RING] = 0;
				z->next++;
				z->chunk_ids++;
				atomic_fetch_add(&c->tx_dmabuf, (unsigned long long)r);
			} else {
				atomic_fetch_add(&c->tx_plain, (unsigned long long)r);
			}
			s->ptr += r;
			s->tx_off += (uint64_t)r;
			s->left -= (uint64_t)r;
			*moved += (uint64_t)r;
			if (s->left && *moved >= budget)
				return 1;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*ev = POLLOUT;
			return 0;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && devmem && errno == ENOBUFS && z->head != z->next) {
			/* notifications not read yet hold the socket's option memory */
			int got = dm_tx_reap(c, k);

			if (got < 0)
				return -1;
			if (!got) {
				*ev = POLLERR;
				return 0;
			}
			continue;
		}
		if (r < 0 && devmem && devmem_only_error(errno)) {
			fall_back(c, k, errno, "devmem sendmsg");
			continue;
		}
		dm_comm_error(c, ncclRemoteError, "data socket %d: %s", k,
			      r ? strerror(errno) : "closed");
		return -1;
	}
	return 1;
}
