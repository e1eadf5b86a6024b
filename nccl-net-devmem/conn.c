// SPDX-License-Identifier: GPL-2.0
/*
 * listen / connect / accept.  None of them blocks: connect() and accept()
 * do what can be done now and return a NULL comm until the connection is
 * complete; NCCL calls them again.
 *
 * The sending side opens 1 control socket and N data sockets (N from
 * NCCL_DEVMEM_NSOCKS, default DM_DEFAULT_NSOCKS) to the listener and sends a
 * HELLO on each {nonce from the handle, random connection id, socket index,
 * N}.  The listener sorts accepted sockets by connection id and, once it
 * holds all N + 1 of one connection, answers ACCEPT on its control socket
 * and returns the recv comm.  connect() returns the send comm when it has
 * read that ACCEPT.  A HELLO with the wrong nonce (a stale or forged handle)
 * gets a REJECT, anything malformed is closed.
 *
 * connect() keeps its state between calls in a process-wide registry
 * (mutex-protected); the handle's state area holds only the registry id,
 * never a pointer, so a corrupt handle is an error, never a wild access.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin.h"

#define DM_LISTEN_MAGIC 0x646c736eu
#define DM_MAX_PENDING 64
#define DM_MAX_GROUPS 16
#define DM_HELLO_TIMEOUT_MS 10000	/* an accepted socket must say HELLO by then */
#define DM_GROUP_TIMEOUT_MS 30000	/* all sockets of a connection must arrive by then */
#define DM_HELLO_WIRE (DM_HDR_LEN + DM_HELLO_LEN)

struct dm_pending {
	int fd;
	uint64_t since;
	size_t off;
	uint8_t buf[DM_HELLO_WIRE];
};

struct dm_group {
	int used;
	uint64_t conn_id;
	uint64_t since;
	int nsocks, have;
	int fds[1 + DM_MAX_SOCKS];
};

struct dm_listen {
	uint32_t magic;
	int dev;
	int fd;
	uint64_t nonce;
	uint64_t comm_id;
	struct dm_pending pend[DM_MAX_PENDING];
	struct dm_group groups[DM_MAX_GROUPS];
	int complained;
	struct dm_rx_region *rx;	/* devmem RX region (a reference), NULL: copy mode */
	struct dm_rx_count rxcnt;	/* HELLO bytes read through it */
};

struct dm_connecting {
	struct dm_connecting *next;
	uint64_t id;
	int dev;
	struct dm_ctx ctx;
	int has_ctx;
	int nsocks;
	uint64_t conn_id, nonce, deadline;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	char peer_str[64];
	int fds[1 + DM_MAX_SOCKS];
	int connected[1 + DM_MAX_SOCKS];
	size_t sent[1 + DM_MAX_SOCKS];
	uint8_t rbuf[DM_HDR_LEN + DM_HELLO_LEN];
	size_t roff;
	uint32_t accept_flags;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dm_connecting *reg_head;
static uint64_t reg_next;

/* ---------- small socket helpers ---------- */

static void addr_to_sockaddr(int family, const uint8_t *addr, uint32_t scope, uint16_t port,
			     struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (family == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, addr, 4);
		*len = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, addr, 16);
		s6->sin6_scope_id = scope;
		*len = sizeof(*s6);
	}
}

static void sockaddr_str(const struct sockaddr_storage *ss, char *out, size_t n)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		port = ntohs(s4->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		port = ntohs(s6->sin6_port);
	}
	snprintf(out, n, "%s<%u>", a, port);
}

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Writes a few bytes on a fresh socket, waiting at most timeout_ms. */
static int send_small(int fd, const uint8_t *buf, size_t len, int timeout_ms)
{
	uint64_t end = dm_now_ms() + (uint64_t)timeout_ms;
	size_t off = 0;

	while (off < len) {
		ssize_t r = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r > 0) {
			off += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			uint64_t now = dm_now_ms();

			if (now >= end)
				return -1;
			poll(&p, 1, (int)(end - now));
			continue;
		}
		return -1;
	}
	return 0;
}

static void send_reject(int fd, uint32_t reason)
{
	uint8_t m[DM_HDR_LEN + DM_REJECT_LEN];

	dm_hdr_encode(m, DM_MSG_REJECT, DM_REJECT_LEN, 0);
	dm_put32(m + DM_HDR_LEN, reason);
	send_small(fd, m, sizeof(m), 100);
}

static int env_nsocks(void)
{
	return dm_env_int(DM_ENV_NSOCKS, DM_DEFAULT_NSOCKS, 1, DM_MAX_SOCKS);
}

/* ---------- listen ---------- */

ncclResult_t dm_listen(struct dm_ctx *ctx, int dev, void *handle, void **listen_comm)
{
	const struct dm_dev *d = dm_dev_get(dev);
	struct sockaddr_storage ss;
	socklen_t len;
	struct dm_listen *l;
	struct dm_handle h;
	int one = 1, i, j;

	if (!handle || !listen_comm)
		return ncclInvalidArgument;
	*listen_comm = NULL;
	if (!d) {
		DM_WARN("listen: no device %d", dev);
		return ncclInvalidArgument;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return ncclSystemError;
	l->dev = dev;
	l->comm_id = ctx ? ctx->comm_id : 0;
	for (i = 0; i < DM_MAX_PENDING; i++)
		l->pend[i].fd = -1;
	for (i = 0; i < DM_MAX_GROUPS; i++)
		for (j = 0; j <= DM_MAX_SOCKS; j++)
			l->groups[i].fds[j] = -1;
	l->fd = socket(d->family == 4 ? AF_INET : AF_INET6,
		       SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		DM_WARN("listen: socket: %m");
		free(l);
		return ncclSystemError;
	}
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr_to_sockaddr(d->family, d->addr, d->scope_id, 0, &ss, &len);
	if (bind(l->fd, (struct sockaddr *)&ss, len) || listen(l->fd, SOMAXCONN) ||
	    getsockname(l->fd, (struct sockaddr *)&ss, &len)) {
		DM_WARN("listen on %s: %m", d->name);
		close(l->fd);
		free(l);
		return ncclSystemError;
	}
	memset(&h, 0, sizeof(h));
	h.family = d->family;
	h.port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
						 ((struct sockaddr_in6 *)&ss)->sin6_port);
	h.dev = (uint16_t)dev;
	h.scope_id = d->scope_id;
	memcpy(h.addr, d->addr, 16);
	h.nonce = l->nonce = dm_random64();
	dm_handle_encode(handle, &h);
	/* bound once per device and process: a later listen only takes a reference */
	l->rx = dm_rx_get(dev);
	l->magic = DM_LISTEN_MAGIC;
	*listen_comm = l;
	DM_INFO(NCCL_NET, "listening on %s port %u (dev %d, comm 0x%llx)", d->name, h.port, dev,
		(unsigned long long)l->comm_id);
	return ncclSuccess;
}

/* ---------- connect ---------- */

static void connecting_free(struct dm_connecting *c)
{
	int i;

	for (i = 0; i <= c->nsocks; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	free(c);
}

static void reg_put(struct dm_connecting *c)
{
	pthread_mutex_lock(&reg_lock);
	c->next = reg_head;
	reg_head = c;
	pthread_mutex_unlock(&reg_lock);
}

/* Removes and returns the attempt with this id, NULL when there is none. */
static struct dm_connecting *reg_take(uint64_t id)
{
	struct dm_connecting **pp, *c = NULL;

	pthread_mutex_lock(&reg_lock);
	for (pp = &reg_head; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			c = *pp;
			*pp = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return c;
}

static ncclResult_t connecting_start(struct dm_ctx *ctx, int dev, const uint8_t *handle,
				     struct dm_connecting **out)
{
	struct dm_connecting *c;
	struct dm_handle h;
	const char *why;
	int i;

	why = dm_handle_decode(handle, &h);
	if (why) {
		DM_WARN("connect: invalid handle: %s", why);
		return ncclInvalidArgument;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	for (i = 0; i <= DM_MAX_SOCKS; i++)
		c->fds[i] = -1;
	c->dev = dev;
	if (ctx) {
		c->ctx = *ctx;
		c->has_ctx = 1;
	}
	c->nsocks = env_nsocks();
	c->nonce = h.nonce;
	c->conn_id = dm_random64();
	c->deadline = dm_now_ms() + (uint64_t)dm_env_int(DM_ENV_CONNECT_TIMEOUT,
							 DM_DEFAULT_CONNECT_TIMEOUT_MS, 1, 3600000);
	addr_to_sockaddr(h.family, h.addr, h.scope_id, h.port, &c->peer, &c->peerlen);
	sockaddr_str(&c->peer, c->peer_str, sizeof(c->peer_str));
	for (i = 0; i <= c->nsocks; i++) {
		c->fds[i] = socket(c->peer.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fds[i] < 0) {
			DM_WARN("connect: socket: %m");
			connecting_free(c);
			return ncclSystemError;
		}
		set_nodelay(c->fds[i]);
		if (connect(c->fds[i], (struct sockaddr *)&c->peer, c->peerlen) == 0) {
			c->connected[i] = 1;
		} else if (errno != EINPROGRESS) {
			DM_WARN("connect to %s: %m", c->peer_str);
			connecting_free(c);
			return ncclSystemError;
		}
	}
	pthread_mutex_lock(&reg_lock);
	c->id = ++reg_next ^ (dm_random64() << 20);
	pthread_mutex_unlock(&reg_lock);
	*out = c;
	return ncclSuccess;
}

/* 1: accepted, 0: not yet, < 0: -ncclResult_t. */
static int connecting_progress(struct dm_connecting *c)
{
	struct dm_rx_count cnt = { 0 };
	struct dm_rx_region *rx;
	const char *rx_why = NULL;
	struct dm_hdr hdr;
	const char *why;
	size_t want;
	int i, all = 1;

	/* bounded as a whole: TCP setup, the HELLOs and the ACCEPT alike */
	if (dm_now_ms() > c->deadline) {
		DM_WARN("connect to %s: timed out", c->peer_str);
		return -ncclSystemError;
	}
	for (i = 0; i <= c->nsocks; i++) {
		if (!c->connected[i]) {
			struct pollfd p = { .fd = c->fds[i], .events = POLLOUT };
			int err = 0;
			socklen_t el = sizeof(err);

			if (poll(&p, 1, 0) <= 0) {
				if (dm_now_ms() > c->deadline) {
					DM_WARN("connect to %s: timed out", c->peer_str);
					return -ncclSystemError;
				}
				all = 0;
				continue;
			}
			if (getsockopt(c->fds[i], SOL_SOCKET, SO_ERROR, &err, &el) || err) {
				DM_WARN("connect to %s: %s", c->peer_str, strerror(err ? err : errno));
				return -ncclSystemError;
			}
			c->connected[i] = 1;
		}
		if (c->sent[i] < DM_HELLO_WIRE) {
			uint8_t m[DM_HELLO_WIRE];
			struct dm_hello hl = {
				.nonce = c->nonce, .conn_id = c->conn_id,
				.index = (uint16_t)i, .nsocks = (uint16_t)c->nsocks,
			};
			ssize_t r;

			dm_hdr_encode(m, DM_MSG_HELLO, DM_HELLO_LEN, 0);
			dm_hello_encode(m + DM_HDR_LEN, &hl);
			r = send(c->fds[i], m + c->sent[i], DM_HELLO_WIRE - c->sent[i],
				 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (r > 0)
				c->sent[i] += (size_t)r;
			else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				DM_WARN("connect to %s: sending HELLO: %m", c->peer_str);
				return -ncclRemoteError;
			}
			if (c->sent[i] < DM_HELLO_WIRE)
				all = 0;
		}
	}
	if (!all)
		return 0;

	/* Everything sent: read the answer on the control socket. */
	want = DM_HDR_LEN;
	for (;;) {
		ssize_t r;

		if (c->roff >= DM_HDR_LEN) {
			why = dm_hdr_decode(c->rbuf, &hdr);
			if (!why && hdr.type != DM_MSG_ACCEPT && hdr.type != DM_MSG_REJECT)
				why = "unexpected message type";
			if (!why && hdr.seq != 0)
				why = "bad sequence number";
			if (why) {
				DM_WARN("connect to %s: bad answer from the listener: %s", c->peer_str,
					why);
				return -ncclRemoteError;
			}
			want = DM_HDR_LEN + hdr.len;
		}
		if (c->roff == want)
			break;
		/* on NICs that steer by RSS bucket, the answer may share a bucket
		 * with a flow steered to this device's region */
		rx = dm_rx_peek(c->dev);
		r = rx ? dm_rx_recv(rx, c->fds[0], c->rbuf + c->roff, want - c->roff, &cnt, NULL, NULL,
				    &rx_why) :
			 recv(c->fds[0], c->rbuf + c->roff, want - c->roff, MSG_DONTWAIT);
		dm_rx_put(rx);
		if (rx_why) {
			DM_WARN("connect to %s: reading the answer: %s", c->peer_str, rx_why);
			return -ncclSystemError;
		}
		if (r > 0) {
			c->roff += (size_t)r;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		DM_WARN("connect to %s: listener closed the connection (%s)", c->peer_str,
			r ? strerror(errno) : "EOF");
		return -ncclRemoteError;
	}
	if (hdr.type == DM_MSG_REJECT) {
		uint32_t reason = dm_get32(c->rbuf + DM_HDR_LEN);

		DM_WARN("connect to %s: rejected by the listener (%s)", c->peer_str,
			reason == DM_REJECT_NONCE ? "handle not from this listener" :
			reason == DM_REJECT_FULL ? "too many pending connections" : "bad HELLO");
		return -ncclRemoteError;
	}
	if (dm_get64(c->rbuf + DM_HDR_LEN) != c->conn_id ||
	    dm_get16(c->rbuf + DM_HDR_LEN + 8) != c->nsocks ||
	    dm_get16(c->rbuf + DM_HDR_LEN + 10) ||
	    (dm_get32(c->rbuf + DM_HDR_LEN + 12) & ~DM_ACCEPT_FLAGS_KNOWN)) {
		DM_WARN("connect to %s: ACCEPT does not match this connection", c->peer_str);
		return -ncclRemoteError;
	}
	c->accept_flags = dm_get32(c->rbuf + DM_HDR_LEN + 12);
	return 1;
}

static void state_clear(uint8_t *handle)
{
	memset(handle + DM_HANDLE_STATE_OFF, 0, 16);
}

ncclResult_t dm_connect(struct dm_ctx *ctx, int dev, void *handle, void **send_comm)
{
	uint8_t *hb = handle;
	struct dm_connecting *c = NULL;
	struct dm_comm *comm;
	uint8_t zero[16] = { 0 };
	ncclResult_t ret;
	int r;

	if (!handle || !send_comm)
		return ncclInvalidArgument;
	*send_comm = NULL;
	if (!memcmp(hb + DM_HANDLE_STATE_OFF, zero, 16)) {
		if (!dm_dev_get(dev)) {
			DM_WARN("connect: no device %d", dev);
			return ncclInvalidArgument;
		}
		ret = connecting_start(ctx, dev, hb, &c);
		if (ret != ncclSuccess)
			return ret;
		dm_put32(hb + DM_HANDLE_STATE_OFF, DM_HANDLE_STATE_MAGIC);
		dm_put64(hb + DM_HANDLE_STATE_OFF + 8, c->id);
	} else {
		if (dm_get32(hb + DM_HANDLE_STATE_OFF) == DM_HANDLE_STATE_MAGIC &&
		    !dm_get32(hb + DM_HANDLE_STATE_OFF + 4))
			c = reg_take(dm_get64(hb + DM_HANDLE_STATE_OFF + 8));
		if (!c) {
			DM_WARN("connect: handle state is not a connection attempt of this process");
			return ncclInvalidArgument;
		}
	}
	r = connecting_progress(c);
	if (r == 0) {
		reg_put(c);
		return ncclSuccess;
	}
	state_clear(hb);
	if (r < 0) {
		connecting_free(c);
		return (ncclResult_t)-r;
	}
	comm = dm_comm_create(1, c->dev, c->has_ctx ? &c->ctx : NULL, c->fds[0], c->fds + 1,
			      c->nsocks, c->peer_str, NULL, NULL, 0,
			      c->accept_flags & DM_ACCEPT_DEVMEM_RX ? "peer receives with devmem RX" :
								      "peer receives in copy mode");
	memset(c->fds, -1, sizeof(c->fds));	/* owned by the comm now */
	connecting_free(c);
	if (!comm)
		return ncclSystemError;
	*send_comm = comm;
	return ncclSuccess;
}

/* ---------- accept ---------- */

static void pending_drop(struct dm_pending *p)
{
	close(p->fd);
	p->fd = -1;
	p->off = 0;
}

static void group_drop(struct dm_group *g)
{
	int i;

	for (i = 0; i <= DM_MAX_SOCKS; i++) {
		if (g->fds[i] >= 0)
			close(g->fds[i]);
		g->fds[i] = -1;
	}
	g->used = 0;
	g->have = 0;
}

/* A connector sends nothing after its HELLOs until it has read ACCEPT: EOF
 * or bytes on a socket of an incomplete connection mean it is gone or lying. */
static int group_broken(const struct dm_group *g)
{
	int i;

	for (i = 0; i <= g->nsocks; i++) {
		char b;
		ssize_t r;

		if (g->fds[i] < 0)
			continue;
		r = recv(g->fds[i], &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return 1;
	}
	return 0;
}

static void listen_accept_new(struct dm_listen *l)
{
	int i;

	for (i = 0; i < DM_MAX_PENDING; i++) {
		int fd;

		if (l->pend[i].fd >= 0)
			continue;
		/* Only accept into a free slot: a full table leaves sockets in the backlog. */
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED) {
				i--;
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK && !l->complained) {
				DM_WARN("accept: %m");
				l->complained = 1;
			}
			return;
		}
		set_nodelay(fd);
		l->pend[i].fd = fd;
		l->pend[i].off = 0;
		l->pend[i].since = dm_now_ms();
	}
}

/* Validates a complete HELLO and files the socket under its connection. */
static void pending_file(struct dm_listen *l, struct dm_pending *p)
{
	struct dm_hello h;
	struct dm_group *g = NULL, *free_g = NULL;
	int i;

	dm_hello_decode(p->buf + DM_HDR_LEN, &h);
	if (h.nonce != l->nonce) {
		DM_INFO(NCCL_NET, "accept: HELLO with a wrong nonce (stale or forged handle): rejected");
		send_reject(p->fd, DM_REJECT_NONCE);
		pending_drop(p);
		return;
	}
	if (h.nsocks < 1 || h.nsocks > DM_MAX_SOCKS || h.index > h.nsocks || h.flags) {
		DM_WARN("accept: malformed HELLO (socket %u of %u, flags 0x%x): rejected", h.index,
			h.nsocks, h.flags);
		send_reject(p->fd, DM_REJECT_BAD);
		pending_drop(p);
		return;
	}
	for (i = 0; i < DM_MAX_GROUPS; i++) {
		if (l->groups[i].used && l->groups[i].conn_id == h.conn_id)
			g = &l->groups[i];
		else if (!l->groups[i].used && !free_g)
			free_g = &l->groups[i];
	}
	if (!g) {
		if (!free_g) {
			DM_WARN("accept: more than %d connections pending: rejected", DM_MAX_GROUPS);
			send_reject(p->fd, DM_REJECT_FULL);
			pending_drop(p);
			return;
		}
		g = free_g;
		g->used = 1;
		g->conn_id = h.conn_id;
		g->nsocks = h.nsocks;
		g->have = 0;
		g->since = dm_now_ms();
	}
	if (g->nsocks != h.nsocks || g->fds[h.index] >= 0) {
		DM_WARN("accept: connection 0x%llx: inconsistent HELLO (socket %u of %u): dropped",
			(unsigned long long)h.conn_id, h.index, h.nsocks);
		send_reject(p->fd, DM_REJECT_BAD);
		pending_drop(p);
		if (g->fds[0] >= 0)
			send_reject(g->fds[0], DM_REJECT_BAD);
		group_drop(g);
		return;
	}
	g->fds[h.index] = p->fd;
	g->have++;
	p->fd = -1;
	p->off = 0;
}

static void pending_progress(struct dm_listen *l)
{
	uint64_t now = dm_now_ms();
	int i;

	for (i = 0; i < DM_MAX_PENDING; i++) {
		struct dm_pending *p = &l->pend[i];

		while (p->fd >= 0) {
			size_t want = p->off < DM_HDR_LEN ? DM_HDR_LEN : DM_HELLO_WIRE;
			const char *rx_why = NULL;
			/* a HELLO too may share an RSS bucket with a steered flow */
			ssize_t r = l->rx ? dm_rx_recv(l->rx, p->fd, p->buf + p->off, want - p->off,
						       &l->rxcnt, NULL, NULL, &rx_why) :
					    recv(p->fd, p->buf + p->off, want - p->off, MSG_DONTWAIT);

			if (rx_why)
				DM_WARN("accept: HELLO: %s: dropped", rx_why);

			if (r > 0) {
				p->off += (size_t)r;
				if (p->off == DM_HDR_LEN) {
					struct dm_hdr h;
					const char *why = dm_hdr_decode(p->buf, &h);

					if (!why && (h.type != DM_MSG_HELLO || h.seq))
						why = "not a HELLO";
					if (why) {
						DM_WARN("accept: bad first message: %s: closed", why);
						send_reject(p->fd, DM_REJECT_BAD);
						pending_drop(p);
					}
				} else if (p->off == DM_HELLO_WIRE) {
					pending_file(l, p);
				}
				continue;
			}
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				if (now - p->since > DM_HELLO_TIMEOUT_MS) {
					DM_INFO(NCCL_NET, "accept: no HELLO within %d ms: closed",
						DM_HELLO_TIMEOUT_MS);
					pending_drop(p);
				}
				break;
			}
			if (r < 0 && errno == EINTR)
				continue;
			pending_drop(p);	/* EOF or error before a full HELLO */
		}
	}
}

ncclResult_t dm_accept(void *listen_comm, void **recv_comm, ncclNetDeviceHandle_v8_t *dev_comm)
{
	struct dm_listen *l = listen_comm;
	uint64_t now;
	int i;

	if (!recv_comm)
		return ncclInvalidArgument;
	*recv_comm = NULL;
	if (!l || l->magic != DM_LISTEN_MAGIC) {
		DM_WARN("accept: %p is not a listen comm of this plugin", listen_comm);
		return ncclInvalidArgument;
	}
	listen_accept_new(l);
	pending_progress(l);
	now = dm_now_ms();
	for (i = 0; i < DM_MAX_GROUPS; i++) {
		struct dm_group *g = &l->groups[i];
		uint8_t m[DM_HDR_LEN + DM_ACCEPT_LEN];
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct dm_ctx ctx = { .comm_id = l->comm_id };
		struct dm_rx_region *rx = NULL;
		int locs[DM_MAX_SOCKS];
		size_t reserved = 0;
		char mode[360] = "copy mode";
		uint32_t flags = 0;
		struct dm_comm *comm;
		char peer[64] = "?";

		if (!g->used)
			continue;
		if (group_broken(g)) {
			DM_INFO(NCCL_NET, "accept: connection 0x%llx closed or spoke out of turn "
				"before ACCEPT: dropped", (unsigned long long)g->conn_id);
			group_drop(g);
			continue;
		}
		if (g->have < g->nsocks + 1) {
			if (now - g->since > DM_GROUP_TIMEOUT_MS) {
				DM_WARN("accept: connection 0x%llx incomplete after %d ms: dropped",
					(unsigned long long)g->conn_id, DM_GROUP_TIMEOUT_MS);
				group_drop(g);
			}
			continue;
		}
		/* steered before ACCEPT: no payload can come before */
		if (l->rx) {
			char why[300];

			/* copy mode too reads through the region: on NICs that
			 * steer by RSS bucket, its flows may share one with a
			 * steered flow and land in the dma-buf */
			rx = dm_rx_ref(l->rx);
			if (!dm_rx_steer(rx, g->fds + 1, g->nsocks, dm_unpack_enabled(), locs, &reserved, why,
					 sizeof(why))) {
				snprintf(mode, sizeof(mode), "devmem RX (binding %u, %s)", rx->id, why);
				flags = DM_ACCEPT_DEVMEM_RX;
			} else {
				atomic_fetch_add(&rx->steer_failures, 1);
				snprintf(mode, sizeof(mode), "copy mode: %s", why);
			}
		}
		dm_hdr_encode(m, DM_MSG_ACCEPT, DM_ACCEPT_LEN, 0);
		dm_put64(m + DM_HDR_LEN, g->conn_id);
		dm_put16(m + DM_HDR_LEN + 8, (uint16_t)g->nsocks);
		dm_put16(m + DM_HDR_LEN + 10, 0);
		dm_put32(m + DM_HDR_LEN + 12, flags);
		if (send_small(g->fds[0], m, sizeof(m), 1000)) {
			DM_WARN("accept: connection 0x%llx: peer gone before ACCEPT: dropped",
				(unsigned long long)g->conn_id);
			if (rx) {
				dm_rx_unsteer(rx, g->fds + 1, locs, g->nsocks, &reserved);
				dm_rx_put(rx);
			}
			group_drop(g);
			continue;
		}
		if (!getpeername(g->fds[0], (struct sockaddr *)&ss, &sl))
			sockaddr_str(&ss, peer, sizeof(peer));
		comm = dm_comm_create(0, l->dev, &ctx, g->fds[0], g->fds + 1, g->nsocks, peer, rx,
				      locs, reserved, mode);
		memset(g->fds, -1, sizeof(g->fds));	/* owned (or closed) by dm_comm_create */
		g->used = 0;
		g->have = 0;
		if (!comm)
			return ncclSystemError;
		if (comm->unpack && dev_comm)
			dm_unpack_fill_handle(comm->unpack, dev_comm);
		*recv_comm = comm;
		return ncclSuccess;
	}
	return ncclSuccess;
}

ncclResult_t dm_close_listen(void *listen_comm)
{
	struct dm_listen *l = listen_comm;
	int i;

	if (!l || l->magic != DM_LISTEN_MAGIC) {
		DM_WARN("closeListen: %p is not a listen comm of this plugin", listen_comm);
		return ncclInvalidArgument;
	}
	for (i = 0; i < DM_MAX_PENDING; i++)
		if (l->pend[i].fd >= 0)
			pending_drop(&l->pend[i]);
	for (i = 0; i < DM_MAX_GROUPS; i++)
		group_drop(&l->groups[i]);
	close(l->fd);
	dm_rx_put(l->rx);
	l->magic = 0;
	free(l);
	return ncclSuccess;
}
