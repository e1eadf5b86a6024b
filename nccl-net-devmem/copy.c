// SPDX-License-Identifier: GPL-2.0
/*
 * Copy-mode data path: isend / irecv / test over plain TCP into host
 * buffers.
 *
 * Each comm owns its sockets and T progress threads (NCCL_DEVMEM_NTHREADS,
 * default DM_DEFAULT_NTHREADS, without libcuda no more than the CPUs the
 * creating thread may run on, and on one CPU none for a recv comm; at most
 * the number of data sockets).  Thread w serves data sockets w, w + T,
 * ...; thread 0 also serves the control socket.  isend/irecv only queue a
 * request (up to NCCL_NET_MAX_REQUESTS per comm; *request = NULL when all
 * slots are taken) and wake the threads; test() only looks.  With T = 0
 * test() of a request in flight does the threads' work itself
 * (progress_inline(): one caller at a time, under progress_lock, which
 * then owns what a thread would, and which close waits for).  All shared
 * state of a comm is under its mutex; the threads hold it only to pick up
 * or account for work, never across I/O.
 *
 * A message of size S goes as one SEND on the control socket (payload
 * inline when S <= DM_INLINE_MAX) plus its chunks on the data sockets as
 * dm_plan() cuts it.  Both ends walk the messages in the same order, so
 * each data socket's byte stream is the concatenation of its chunks, with
 * no framing.  The receiver reads a chunk only once the SEND announcing it
 * has been matched to a posted receive and validated: a message larger
 * than that receive, an unknown tag in a multi-recv, a malformed or out of
 * sequence header or a peer that goes away is an error on that comm (test()
 * returns it), never a write outside the posted buffer.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin.h"

enum { DM_RX_HDR = 0, DM_RX_MATCH, DM_RX_INLINE, DM_RX_CLOSED };

#define DM_IO_BUDGET (8u << 20)	/* bytes per socket before looking around again */
#define DM_INLINE_PASSES 16	/* without progress threads: passes per test() at most */
#define DM_POLL_MS 1000
#define DM_TOKEN_RETRY_MS 10000	/* a devmem recvmsg failing is tried again this long */
#define DM_RETRY_GAP_MS 100	/* a failure this long after the last one starts afresh */

static const char *kind(const struct dm_comm *c)
{
	return c->magic == DM_SEND_MAGIC ? "send" : "recv";
}

void dm_comm_error(struct dm_comm *c, ncclResult_t err, const char *fmt, ...)
{
	int expect = 0, i;
	char msg[256];
	va_list ap;

	if (!atomic_compare_exchange_strong(&c->error, &expect, (int)err))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	DM_WARN("%s comm %p (dev %d, peer %s): %s", kind(c), (void *)c, c->dev, c->peer, msg);
	/* The peer must learn it too, or it waits for ever on a stream
	 * nobody reads. shutdown(), not close(): the fds stay valid for the
	 * other workers until the comm is destroyed.
	 */
	shutdown(c->ctrl.fd, SHUT_RDWR);
	for (i = 0; i < c->nsocks; i++)
		shutdown(c->socks[i].fd, SHUT_RDWR);
}

static void wake(struct dm_comm *c, int from)
{
	uint64_t one = 1;
	int i;

	for (i = from; i < c->nthreads; i++)
		if (write(c->workers[i].efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			break;
}

void dm_comm_wake(struct dm_comm *c)
{
	wake(c, 0);
}

static int would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

/* ---------- send side ---------- */

void dm_send_maybe_done(struct dm_req *q)
{
	if (q->ctrl_done && !q->chunks_left && !q->zc_left)
		q->state = DM_REQ_DONE;
}

/* 1: progress, 0: nothing to do or blocked (*ev says on what), -1: error. */
static int ctrl_send_step(struct dm_comm *c, short *ev)
{
	struct dm_ctrl *x = &c->ctrl;
	struct dm_req *q;

	if (!x->len) {
		pthread_mutex_lock(&c->lock);
		if (x->cursor < c->posted) {
			struct dm_send_desc d;
			uint32_t inl;

			q = &c->reqs[x->cursor % DM_MAX_REQS];
			inl = q->size <= DM_INLINE_MAX ? (uint32_t)q->size : 0;
			d.size = q->size;
			d.tag = q->tag;
			d.flags = 0;
			dm_hdr_encode(x->buf, DM_MSG_SEND, DM_SEND_LEN + inl, x->seq);
			dm_send_encode(x->buf + DM_HDR_LEN, &d);
			if (inl && !q->gpu)
				memcpy(x->buf + DM_HDR_LEN + DM_SEND_LEN, q->data, inl);
			x->len = DM_HDR_LEN + DM_SEND_LEN + inl;
			x->off = 0;
		}
		pthread_mutex_unlock(&c->lock);
		if (!x->len)
			return 0;
		q = &c->reqs[x->cursor % DM_MAX_REQS];
		if (q->gpu && x->len > DM_HDR_LEN + DM_SEND_LEN) {
			const char *why;

			/* the request stays ours until its control message is sent */
			if (dm_gpu_copy(c, DM_GPU_CTRL, x->buf + DM_HDR_LEN + DM_SEND_LEN, q->data,
					x->len - DM_HDR_LEN - DM_SEND_LEN, &why)) {
				dm_comm_error(c, ncclSystemError, "inline payload from GPU memory "
					      "%p: %s", (void *)q->data, why);
				return -1;
			}
		}
	}
	while (x->off < x->len) {
		ssize_t r = send(x->fd, x->buf + x->off, x->len - x->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r > 0) {
			x->off += (size_t)r;
		} else if (r < 0 && would_block()) {
			*ev = POLLOUT;
			return 0;
		} else if (!(r < 0 && errno == EINTR)) {
			dm_comm_error(c, ncclRemoteError, "control socket: %s",
				  r ? strerror(errno) : "closed");
			return -1;
		}
	}
	pthread_mutex_lock(&c->lock);
	q = &c->reqs[x->cursor % DM_MAX_REQS];
	q->ctrl_done = 1;
	dm_send_maybe_done(q);
	x->cursor++;
	x->seq++;
	pthread_mutex_unlock(&c->lock);
	x->len = 0;
	return 1;
}

static int data_send_step(struct dm_comm *c, int k, short *ev)
{
	struct dm_sock *s = &c->socks[k];
	uint64_t moved = 0;
	int r;

	if (s->zc.head != s->zc.next && dm_tx_reap(c, k) < 0)
		return -1;
	if (!s->busy) {
		pthread_mutex_lock(&c->lock);
		for (; s->cursor < c->posted; s->cursor++) {
			struct dm_req *q = &c->reqs[s->cursor % DM_MAX_REQS];
			unsigned j;

			if (q->seq != s->cursor || q->state != DM_REQ_ACTIVE || !q->nchunks)
				continue;
			j = ((unsigned)k + (unsigned)c->nsocks - q->first_sock) % (unsigned)c->nsocks;
			if (j >= q->nchunks)
				continue;
			s->ptr = q->data + j * q->chunk;
			s->left = q->size - j * q->chunk;
			if (s->left > q->chunk)
				s->left = q->chunk;
			s->tx_id = q->tx_id;
			s->tx_off = q->tx_off + j * q->chunk;
			s->gpu = q->gpu;
			s->stg_have = 0;
			s->zc.chunk_ids = 0;
			s->owner = s->cursor;
			s->busy = 1;
			break;
		}
		pthread_mutex_unlock(&c->lock);
		if (!s->busy) {
			if (s->zc.head != s->zc.next)
				*ev = POLLERR;	/* completions to come */
			return 0;
		}
	}
	r = dm_tx_chunk(c, k, ev, &moved, DM_IO_BUDGET);
	if (r <= 0 || s->left)
		return r;
	pthread_mutex_lock(&c->lock);
	{
		struct dm_req *q = &c->reqs[s->owner % DM_MAX_REQS];

		q->chunks_left--;
		q->zc_left += s->zc.chunk_ids;
		dm_send_maybe_done(q);
	}
	pthread_mutex_unlock(&c->lock);
	s->busy = 0;
	s->cursor = s->owner + 1;
	return 1;
}

/* ---------- receive side ---------- */

/* recv() on socket k (DM_GPU_CTRL: the control socket) of a recv comm:
 * with devmem RX, through the region (any of the comm's flows may have
 * landed in it); into GPU memory through the socket's stage.  On a devmem
 * or CUDA error -1 with *why set. */
static ssize_t comm_recv(struct dm_comm *c, int k, int fd, void *buf, size_t len, int gpu,
			 struct dm_unpack_sink *sink, const char **why)
{
	*why = NULL;
	if (gpu)
		return dm_gpu_recv(c, k, fd, buf, len, sink, why);
	if (c->rx)
		return dm_rx_recv(c->rx, fd, buf, len, &c->rxcnt, sink ? dm_unpack_take : NULL,
				  sink, why);
	return recv(fd, buf, len, MSG_DONTWAIT);
}

static void msg_complete(struct dm_msg *m)
{
	struct dm_req *q = m->req;

	m->live = 0;
	if (--q->msgs_left)
		return;
	q->state = DM_REQ_DONE;
	if (q->comm->unpack)
		wake(q->comm, 0);	/* another receive may be the oldest now */
}

/* Fails a waiting receive once the peer has closed; called with the lock. */
static int closed_check(struct dm_comm *c)
{
	if (c->match_seq < c->posted) {
		dm_comm_error(c, ncclRemoteError, "peer closed the connection with a receive posted");
		return -1;
	}
	return 0;
}

/* Matches the SEND in c->ctrl to the oldest posted receive; with the lock.
 * 1: the message has chunks for the data sockets, 0: it has none, -1: error. */
static int match_send(struct dm_comm *c)
{
	struct dm_ctrl *x = &c->ctrl;
	struct dm_req *q = &c->reqs[c->match_seq % DM_MAX_REQS];
	struct dm_msg *m = &c->msgs[c->nmsgs % DM_MAX_MSGS];
	int i = -1, j;

	if (q->n == 1) {
		i = 0;
	} else {
		for (j = 0; j < q->n && i < 0; j++)
			if (!(q->matched_mask & (1u << j)) && q->tags[j] == x->desc.tag)
				i = j;
		if (i < 0) {
			dm_comm_error(c, ncclRemoteError,
				  "message with tag %u matches no buffer of the posted %d-buffer receive",
				  x->desc.tag, q->n);
			return -1;
		}
	}
	if (x->desc.size > q->cap[i]) {
		dm_comm_error(c, ncclRemoteError,
			  "message of %llu bytes is larger than the posted receive (%llu bytes)",
			  (unsigned long long)x->desc.size, (unsigned long long)q->cap[i]);
		return -1;
	}
	if (m->live) {
		dm_comm_error(c, ncclInternalError, "message table overrun");
		return -1;
	}
	m->idx = c->nmsgs;
	m->live = 1;
	m->dst = q->dst[i];
	m->gpu = (q->gpu_mask >> i) & 1;
	m->size = x->desc.size;
	m->req = q;
	dm_plan(m->size, (unsigned)c->nsocks, &m->chunk, &m->nchunks);
	m->first_sock = (unsigned)(c->chunk_cursor % (uint64_t)c->nsocks);
	m->chunks_left = m->nchunks;
	c->chunk_cursor += m->nchunks;
	c->nmsgs++;
	q->got[i] = m->size;
	q->matched_mask |= 1u << i;
	if (++q->nmatched == q->n)
		c->match_seq++;
	x->seq++;
	if (m->size && !m->nchunks) {
		x->inl_dst = m->dst;
		x->inl_gpu = m->gpu;
		x->inl_left = m->size;
		x->inl_msg = m;
		x->state = DM_RX_INLINE;
	} else {
		if (!m->nchunks)
			msg_complete(m);
		x->state = DM_RX_HDR;
	}
	x->off = 0;
	return m->nchunks > 0;
}

/*
 * May a failed receive on a devmem socket pass?  A devmem recvmsg that
 * cannot hand out a token (its socket's token table cannot grow: memory,
 * or a memory cgroup at its limit) takes nothing off the socket and fails
 * with EFAULT, the errno mainline gives every failed devmem receive (a bad
 * buffer, data the kernel cannot report, too: those do not pass and fail
 * the comm once the retries are over); a kernel that says ENOMEM or
 * ENOBUFS means a token too.
 */
static int recv_may_pass(const struct dm_comm *c, ssize_t r, const char *why)
{
	return r < 0 && c->rx && !why && (errno == EFAULT || errno == ENOMEM || errno == ENOBUFS);
}

/*
 * Such a receive is tried again every millisecond (tokens given back and
 * memory freed meanwhile make room) while it has failed for less than
 * DM_TOKEN_RETRY_MS without a gap of DM_RETRY_GAP_MS, then the comm fails
 * with the reason.  @k: the data socket, or -1 for the control socket;
 * @rt: its retry state.  1: try again now, -1: given up.
 */
static int recv_retry(struct dm_comm *c, int k, struct dm_retry *rt)
{
	int err = errno;
	uint64_t now = dm_now_ms();
	char name[32];

	if (k < 0)
		snprintf(name, sizeof(name), "control socket");
	else
		snprintf(name, sizeof(name), "data socket %d", k);
	if (atomic_fetch_add(&c->rxcnt.retries, 1) == 0)
		DM_WARN("recv comm %p: %s: devmem recvmsg: %s (no token could be handed out, or "
			"a bad buffer); retrying for up to %d s", (void *)c, name, strerror(err),
			DM_TOKEN_RETRY_MS / 1000);
	/* Without threads the failures come only as often as test() is
	 * called: only a successful read starts afresh. */
	if (!rt->since_ms || (c->nthreads && now - rt->last_ms > DM_RETRY_GAP_MS))
		rt->since_ms = now;
	rt->last_ms = now;
	if (now - rt->since_ms >= DM_TOKEN_RETRY_MS) {
		dm_comm_error(c, ncclSystemError, "%s: devmem recvmsg failed for %d s: %s (no "
			      "token could be handed out, or a bad buffer)", name,
			      DM_TOKEN_RETRY_MS / 1000, strerror(err));
		return -1;
	}
	if (!c->nthreads)
		return 0;	/* test()'s caller tries again at its next call */
	usleep(1000);
	return 1;
}

/* Reads and checks one control message header and SEND descriptor. */
static int ctrl_read_hdr(struct dm_comm *c, short *ev)
{
	struct dm_ctrl *x = &c->ctrl;
	const char *why;

	for (;;) {
		size_t want = x->off < DM_HDR_LEN ? DM_HDR_LEN : DM_HDR_LEN + DM_SEND_LEN;
		ssize_t r = comm_recv(c, DM_GPU_CTRL, x->fd, x->buf + x->off, want - x->off, 0,
				      NULL, &why);

		if (r == 0) {
			dm_comm_error(c, ncclRemoteError, "peer closed the control socket%s",
				  x->off ? " in the middle of a message" : "");
			return -1;
		}
		if (r < 0) {
			if (would_block()) {
				*ev = POLLIN;
				return 0;
			}
			if (errno == EINTR)
				continue;
			if (recv_may_pass(c, r, why))
				return recv_retry(c, -1, &x->retry);
			dm_comm_error(c, why ? ncclSystemError : ncclRemoteError, "control socket: %s",
				  why ? why : strerror(errno));
			return -1;
		}
		x->retry.since_ms = 0;
		x->off += (size_t)r;
		if (x->off == DM_HDR_LEN) {
			why = dm_hdr_decode(x->buf, &x->hdr);
			if (!why && x->hdr.seq != x->seq)
				why = "message out of sequence";
			if (!why && x->hdr.type != DM_MSG_SEND && x->hdr.type != DM_MSG_CLOSE)
				why = "unexpected message type";
			if (why) {
				dm_comm_error(c, ncclRemoteError, "bad control message: %s", why);
				return -1;
			}
			if (x->hdr.type == DM_MSG_CLOSE) {
				DM_INFO(NCCL_NET, "recv comm %p: peer %s closed the connection",
					(void *)c, c->peer);
				pthread_mutex_lock(&c->lock);
				c->peer_closed = 1;
				x->state = DM_RX_CLOSED;
				r = closed_check(c);
				pthread_mutex_unlock(&c->lock);
				return r < 0 ? -1 : 1;
			}
		} else if (x->off == DM_HDR_LEN + DM_SEND_LEN) {
			struct dm_send_desc *d = &x->desc;

			dm_send_decode(x->buf + DM_HDR_LEN, d);
			why = NULL;
			if (d->flags)
				why = "unknown SEND flags";
			else if (d->size > DM_MAX_MSG_SIZE)
				why = "size over the 1 GiB maximum";
			else if (x->hdr.len != DM_SEND_LEN + (d->size <= DM_INLINE_MAX ? d->size : 0))
				why = "length does not match size";
			if (why) {
				dm_comm_error(c, ncclRemoteError, "bad SEND (%llu bytes, tag %u): %s",
					  (unsigned long long)d->size, d->tag, why);
				return -1;
			}
			x->state = DM_RX_MATCH;
			return 1;
		}
	}
}

static int ctrl_recv_step(struct dm_comm *c, short *ev)
{
	struct dm_ctrl *x = &c->ctrl;
	const char *why;
	int r;

	switch (x->state) {
	case DM_RX_HDR:
		return ctrl_read_hdr(c, ev);
	case DM_RX_MATCH:
		pthread_mutex_lock(&c->lock);
		if (c->match_seq >= c->posted) {
			pthread_mutex_unlock(&c->lock);
			return 0;	/* woken by the next irecv */
		}
		r = match_send(c);
		pthread_mutex_unlock(&c->lock);
		if (r < 0)
			return -1;
		if (r)
			wake(c, 1);
		return 1;
	case DM_RX_INLINE:
		while (x->inl_left) {
			ssize_t n = comm_recv(c, DM_GPU_CTRL, x->fd, x->inl_dst, x->inl_left,
					      x->inl_gpu, NULL, &why);

			if (n > 0) {
				x->retry.since_ms = 0;
				x->inl_dst += n;
				x->inl_left -= (uint64_t)n;
			} else if (n < 0 && would_block()) {
				*ev = POLLIN;
				return 0;
			} else if (recv_may_pass(c, n, why)) {
				return recv_retry(c, -1, &x->retry);
			} else if (!(n < 0 && errno == EINTR)) {
				dm_comm_error(c, why ? ncclSystemError : ncclRemoteError,
					  "control socket: %s", why ? why : n ? strerror(errno) :
					  "closed in the middle of a message");
				return -1;
			}
		}
		pthread_mutex_lock(&c->lock);
		msg_complete(x->inl_msg);
		pthread_mutex_unlock(&c->lock);
		x->state = DM_RX_HDR;
		return 1;
	default:	/* DM_RX_CLOSED */
		pthread_mutex_lock(&c->lock);
		r = closed_check(c);
		pthread_mutex_unlock(&c->lock);
		return r;
	}
}

static int data_recv_step(struct dm_comm *c, int k, short *ev)
{
	struct dm_sock *s = &c->socks[k];
	uint64_t moved = 0;
	const char *why;

	if (!s->busy) {
		pthread_mutex_lock(&c->lock);
		for (; s->cursor < c->nmsgs; s->cursor++) {
			struct dm_msg *m = &c->msgs[s->cursor % DM_MAX_MSGS];
			unsigned j;

			if (m->idx != s->cursor || !m->live || !m->nchunks)
				continue;
			j = ((unsigned)k + (unsigned)c->nsocks - m->first_sock) % (unsigned)c->nsocks;
			if (j >= m->nchunks)
				continue;
			s->ptr = m->dst + j * m->chunk;
			s->left = m->size - j * m->chunk;
			if (s->left > m->chunk)
				s->left = m->chunk;
			s->owner = s->cursor;
			s->gpu = m->gpu;
			s->busy = 1;
			break;
		}
		pthread_mutex_unlock(&c->lock);
		if (!s->busy)
			return 0;
	}
	while (s->left) {
		struct dm_unpack_sink sink, *sk = NULL;
		uint64_t len = s->left;
		ssize_t r;

		if (c->unpack) {
			/* the message's fields stay while it has chunks left */
			const struct dm_msg *m = &c->msgs[s->owner % DM_MAX_MSGS];
			uint64_t room;

			pthread_mutex_lock(&c->lock);
			room = dm_unpack_room(c, m->req);
			if (s->gpu && room > dm_gpu_room(c)) {
				/* the oldest receive holds every page itself:
				 * none comes back before it is done */
				if (room == UINT64_MAX && !dm_gpu_room(c)) {
					pthread_mutex_unlock(&c->lock);
					dm_comm_error(c, ncclSystemError, "a receive needs more than "
						      "the comm's %u RX region pages (test mode)",
						      DM_GPU_POOL_PAGES);
					return -1;
				}
				room = dm_gpu_room(c);
			}
			pthread_mutex_unlock(&c->lock);
			if (!room)
				return 0;	/* woken by irecvConsumed or a receive done */
			if (len > room)
				len = room;
			sink.comm = c;
			sink.slot = m->req->slot;
			sink.sock = k;
			sink.dst_off = (uint64_t)(s->ptr - m->dst);
			if (c->unpack_frags)
				sk = &sink;
		}
		r = comm_recv(c, k, s->fd, s->ptr, len, s->gpu, sk, &why);
		if (sk && r > 0)
			__atomic_fetch_add(&c->msgs[s->owner % DM_MAX_MSGS].req->rcvd,
					   (uint64_t)r, __ATOMIC_RELAXED);

		if (r > 0 && (uint64_t)r > len) {
			dm_comm_error(c, ncclInternalError, "data socket %d: read %zd bytes of %llu",
				      k, r, (unsigned long long)len);
			return -1;
		}
		if (r > 0) {
			s->retry.since_ms = 0;
			s->ptr += r;
			s->left -= (uint64_t)r;
			moved += (uint64_t)r;
			if (s->left && moved >= DM_IO_BUDGET)
				return 1;
		} else if (r < 0 && would_block()) {
			*ev = POLLIN;
			return 0;
		} else if (r < 0 && errno == ENOBUFS && s->gpu) {
			return 0;	/* woken when pages come back */
		} else if (recv_may_pass(c, r, why)) {
			return recv_retry(c, k, &s->retry);
		} else if (!(r < 0 && errno == EINTR)) {
			dm_comm_error(c, why ? ncclSystemError : ncclRemoteError, "data socket %d: %s", k,
				  why ? why : r ? strerror(errno) :
				  "peer closed it in the middle of a message");
			return -1;
		}
	}
	pthread_mutex_lock(&c->lock);
	{
		struct dm_msg *m = &c->msgs[s->owner % DM_MAX_MSGS];

		if (--m->chunks_left == 0)
			msg_complete(m);
	}
	pthread_mutex_unlock(&c->lock);
	s->busy = 0;
	s->cursor = s->owner + 1;
	return 1;
}

/* ---------- progress threads ---------- */

/* Stall report, the progress half: the state that progress thread idx
 * (stride threads in all) owns, or with stride 1 and no threads, what
 * test() moves. */
static void progress_report(struct dm_comm *c, int idx, int stride)
{
	static const char *const rx_state[] = {
		"reading a header", "matching a message", "reading an inline payload",
		"closed by the peer",
	};
	char buf[768];
	size_t o = 0;
	int k;

#define ADD(...) do { \
		if (o < sizeof(buf)) \
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, __VA_ARGS__); \
	} while (0)
	if (idx == 0) {
		const struct dm_ctrl *x = &c->ctrl;

		if (c->magic == DM_SEND_MAGIC && x->len)
			ADD("control: %zu of %zu bytes out, next request #%llu", x->off, x->len,
			    (unsigned long long)x->cursor);
		else if (c->magic == DM_SEND_MAGIC)
			ADD("control: idle, next request #%llu", (unsigned long long)x->cursor);
		else
			ADD("control: %s", rx_state[x->state & 3]);
	}
	for (k = idx; k < c->nsocks; k += stride) {
		const struct dm_sock *s = &c->socks[k];

		ADD("%ssocket %d: ", o ? "; " : "", k);
		if (s->busy)
			ADD("%llu bytes of #%llu left", (unsigned long long)s->left,
			    (unsigned long long)s->owner);
		else
			ADD("idle, next #%llu", (unsigned long long)s->cursor);
		if (s->stg_have)
			ADD(", %llu bytes staged", (unsigned long long)s->stg_have);
	}
#undef ADD
	if (o >= sizeof(buf))
		memcpy(buf + sizeof(buf) - 4, "...", 4);
	if (c->nthreads)
		DM_WARN("%s comm %p thread %d: %s", kind(c), (void *)c, idx, buf);
	else
		DM_WARN("%s comm %p (no progress threads, test() moves the bytes): %s", kind(c),
			(void *)c, buf);
}

/* One pass of the steps a progress thread owns: the control socket (for
 * idx 0) and the data sockets idx, idx + stride, ...  Returns whether any
 * made progress; the fds to wait on (and for what) go to pfd[*n...]. */
static int progress_pass(struct dm_comm *c, int idx, int stride, struct pollfd *pfd, int *n)
{
	int is_send = c->magic == DM_SEND_MAGIC;
	int progress = 0, k, r;
	short ev;

	if (atomic_load(&c->error))
		return 0;
	if (idx == 0) {
		ev = 0;
		r = is_send ? ctrl_send_step(c, &ev) : ctrl_recv_step(c, &ev);
		progress |= r > 0;
		if (ev && pfd) {
			pfd[*n].fd = c->ctrl.fd;
			pfd[(*n)++].events = ev;
		}
	}
	for (k = idx; k < c->nsocks; k += stride) {
		ev = 0;
		r = is_send ? data_send_step(c, k, &ev) : data_recv_step(c, k, &ev);
		progress |= r > 0;
		if (ev && pfd) {
			pfd[*n].fd = c->socks[k].fd;
			pfd[(*n)++].events = ev;
		}
	}
	return progress;
}

/* Without progress threads (nthreads 0): test()'s caller (NCCL's proxy
 * thread) moves the bytes itself, one caller at a time, as long as there
 * is progress, for DM_INLINE_PASSES passes at most (each bounded by the
 * receives and sends posted).  A caller finding another at it leaves:
 * that one moves them. */
static void progress_inline(struct dm_comm *c)
{
	void *was = NULL;
	int rounds = 0, swap = 0;

	if (pthread_mutex_trylock(&c->progress_lock))
		return;
	/* CUDA work in the context the comm was made in, as a thread's */
	if (c->gpu && c->gpu->ctx && !dm_cuda_ctx(&was) && was != c->gpu->ctx) {
		if (dm_cuda_set_ctx(c->gpu->ctx)) {
			pthread_mutex_unlock(&c->progress_lock);
			dm_comm_error(c, ncclUnhandledCudaError, "test(): cannot make the comm's "
				      "CUDA context current");
			return;
		}
		swap = 1;
	}
	while (rounds++ < DM_INLINE_PASSES && progress_pass(c, 0, 1, NULL, NULL))
		;
	if (swap)
		dm_cuda_set_ctx(was);
	pthread_mutex_unlock(&c->progress_lock);
}

static void *worker_main(void *arg)
{
	struct dm_worker *w = arg;
	struct dm_comm *c = w->comm;
	int is_send = c->magic == DM_SEND_MAGIC;
	struct pollfd pfd[2 + DM_MAX_SOCKS];
	char name[16];

	snprintf(name, sizeof(name), "dm-%s%d", is_send ? "tx" : "rx", w->idx);
	pthread_setname_np(pthread_self(), name);
	if (c->gpu && c->gpu->ctx)
		dm_cuda_set_ctx(c->gpu->ctx);	/* the context the comm was made in */
	while (!atomic_load(&c->stop)) {
		unsigned gen = atomic_load(&c->stall_gen);
		int n = 1;

		if (gen != atomic_load(&w->stall_seen)) {
			progress_report(c, w->idx, c->nthreads);
			atomic_store(&w->stall_seen, gen);
		}

		pfd[0].fd = w->efd;
		pfd[0].events = POLLIN;
		if (progress_pass(c, w->idx, c->nthreads, pfd, &n))
			continue;
		if (poll(pfd, (nfds_t)n, DM_POLL_MS) > 0 && (pfd[0].revents & POLLIN)) {
			uint64_t v;

			if (read(w->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		}
	}
	return NULL;
}

static void comm_destroy(struct dm_comm *c)
{
	int i;

	atomic_store(&c->stop, 1);
	wake(c, 0);
	for (i = 0; i < c->nthreads; i++)
		if (c->workers[i].started)
			pthread_join(c->workers[i].tid, NULL);
	for (i = 0; i < c->nthreads; i++)
		if (c->workers[i].efd >= 0)
			close(c->workers[i].efd);
	/* the rules first, checked against the sockets' flows */
	if (c->rx) {
		int fds[DM_MAX_SOCKS], n = c->nsocks;

		for (i = 0; i < n; i++)
			fds[i] = c->socks[i].fd;
		dm_rx_unsteer(c->rx, fds, c->steer_locs, n, &c->rx_reserved);
	}
	for (i = 0; i < c->nsocks; i++)
		if (c->socks[i].fd >= 0)
			close(c->socks[i].fd);
	if (c->ctrl.fd >= 0)
		close(c->ctrl.fd);
	/* after the sockets, which held the region's tokens */
	dm_rx_put(c->rx);
	if (c->gpu && c->gpu->ctx) {
		void *was = NULL;

		/* the CUDA memory in the context it was made in */
		dm_cuda_ctx(&was);
		dm_cuda_set_ctx(c->gpu->ctx);
		dm_unpack_free(c->unpack);
		dm_gpu_comm_free(c->gpu);
		dm_cuda_set_ctx(was);
	} else {
		dm_unpack_free(c->unpack);
		dm_gpu_comm_free(c->gpu);
	}
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->progress_lock);
	c->magic = 0;
	free(c);
}

struct dm_comm *dm_comm_create(int is_send, int dev, const struct dm_ctx *ctx, int ctrl_fd,
			       const int *data_fds, int nsocks, const char *peer,
			       struct dm_rx_region *rx, const int *steer_locs, size_t rx_reserved,
			       const char *mode)
{
	struct dm_comm *c = calloc(1, sizeof(*c));
	char how[480];
	int i;

	if (!c) {
		close(ctrl_fd);
		for (i = 0; i < nsocks; i++)
			close(data_fds[i]);
		if (rx) {
			int locs[DM_MAX_SOCKS];

			memcpy(locs, steer_locs, sizeof(int) * (size_t)nsocks);
			dm_rx_unsteer(rx, NULL, locs, nsocks, &rx_reserved);
			dm_rx_put(rx);
		}
		return NULL;
	}
	c->rx = rx;
	c->rx_reserved = rx_reserved;
	for (i = 0; i < DM_MAX_SOCKS; i++)
		c->steer_locs[i] = rx && i < nsocks ? steer_locs[i] : -1;
	c->magic = is_send ? DM_SEND_MAGIC : DM_RECV_MAGIC;
	c->dev = dev;
	c->comm_id = ctx ? ctx->comm_id : 0;
	c->nsocks = nsocks;
	c->nthreads = dm_env_int(DM_ENV_NTHREADS, DM_DEFAULT_NTHREADS, 0, DM_MAX_THREADS);
	if ((!getenv(DM_ENV_NTHREADS) || !*getenv(DM_ENV_NTHREADS)) && !dm_cuda_loaded(NULL)) {
		/* By default, for host memory (no libcuda: no thread waits in
		 * a CUDA call while another could read), no more threads than
		 * CPUs they may run on (they inherit this thread's affinity):
		 * more only take turns, each wake-up draining its sockets a
		 * little.  On one CPU a recv comm starts none: NCCL's proxy
		 * thread, which tests its receives anyway, reads the bytes,
		 * with no hand-over and no wake-up per batch (the guest's
		 * bench: 12% fewer receiver instructions per GiB than one
		 * thread).  A send comm keeps one, which sleeps until its
		 * sockets have room, where test() would try again at every
		 * call (the bench: 5% more throughput than none). */
		cpu_set_t set;

		if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0 &&
		    c->nthreads >= CPU_COUNT(&set))
			c->nthreads = CPU_COUNT(&set) > 1 ? CPU_COUNT(&set) : is_send ? 1 : 0;
	}
	c->stall_ms = (uint64_t)dm_env_int(DM_ENV_STALL_WARN, DM_DEFAULT_STALL_WARN_S, 0,
					   86400) * 1000;
	c->stall_seq = UINT64_MAX;
	if (c->nthreads > nsocks)
		c->nthreads = nsocks;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->progress_lock, NULL);
	c->ctrl.fd = ctrl_fd;
	c->ctrl.seq = 1;	/* HELLO was 0 */
	for (i = 0; i < nsocks; i++)
		c->socks[i].fd = data_fds[i];
	for (i = 0; i < DM_MAX_REQS; i++) {
		c->reqs[i].magic = DM_REQ_MAGIC;
		c->reqs[i].comm = c;
		c->reqs[i].seq = UINT64_MAX;
	}
	for (i = 0; i < DM_MAX_MSGS; i++)
		c->msgs[i].idx = UINT64_MAX;
	for (i = 0; i < c->nthreads; i++) {
		c->workers[i].efd = -1;
		c->workers[i].comm = c;
		c->workers[i].idx = i;
	}
	snprintf(how, sizeof(how), "%s", mode);
	if (dm_cuda_loaded(NULL)) {
		c->gpu = dm_gpu_comm_create(!is_send, dev, nsocks, rx != NULL, how, sizeof(how));
		if (!c->gpu)
			goto fail;
	}
	if (!is_send && dm_unpack_enabled()) {
		void *bounce = NULL;
		uint64_t allowance = 0;

		if (dm_gpu_bounce(c->gpu) && !rx) {
			/* GPU test mode: the emulated pages are the region */
			bounce = dm_gpu_bounce(c->gpu);
			allowance = (uint64_t)DM_GPU_POOL_PAGES * DM_RX_PAGE;
		} else if (rx && !dm_unpack_gpu()) {
			/* half the reservation: the fragments read ahead (dm_rx_steer) */
			bounce = rx->map;
			allowance = rx_reserved / 2;
		}
		/* else the plugin places every byte itself (a udmabuf region is
		 * not readable by NCCL's kernel) */
		c->unpack_frags = bounce != NULL;
		c->unpack = dm_unpack_create(bounce, allowance,
					     c->gpu ? c->gpu->stream[DM_GPU_CTRL] : NULL);
		if (!c->unpack) {
			DM_WARN("recv comm: cannot make the UNPACK queue");
			goto fail;
		}
	}
	for (i = 0; i < c->nthreads; i++) {
		c->workers[i].efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (c->workers[i].efd < 0) {
			DM_WARN("eventfd: %m");
			goto fail;
		}
	}
	for (i = 0; i < c->nthreads; i++) {
		if (pthread_create(&c->workers[i].tid, NULL, worker_main, &c->workers[i])) {
			DM_WARN("cannot start progress thread %d", i);
			goto fail;
		}
		c->workers[i].started = 1;
	}
	DM_INFO(NCCL_INIT | NCCL_NET,
		"%s comm %p dev %d peer %s (comm 0x%llx): %d data sockets, %d threads, %s",
		kind(c), (void *)c, dev, c->peer, (unsigned long long)c->comm_id, nsocks,
		c->nthreads, how);
	return c;
fail:
	comm_destroy(c);
	return NULL;
}

struct dm_comm *dm_comm_check(void *p, int want)
{
	struct dm_comm *c = p;

	if (!c)
		return NULL;
	if (c->magic == DM_SEND_MAGIC && want != 0)
		return c;
	if (c->magic == DM_RECV_MAGIC && want != 1)
		return c;
	return NULL;
}

/* ---------- API ---------- */

ncclResult_t dm_isend(void *send_comm, void *data, uint64_t size, int tag, void *mh,
		      void **request)
{
	struct dm_comm *c = dm_comm_check(send_comm, 1);
	const struct dm_mr *mr;
	struct dm_req *q;
	int err;

	if (!request)
		return ncclInvalidArgument;
	*request = NULL;
	if (!c) {
		DM_WARN("isend: %p is not a send comm of this plugin", send_comm);
		return ncclInvalidArgument;
	}
	err = atomic_load(&c->error);
	if (err)
		return (ncclResult_t)err;
	if (size > DM_MAX_MSG_SIZE) {
		DM_WARN("isend: %llu bytes is over the 1 GiB maximum", (unsigned long long)size);
		return ncclInvalidArgument;
	}
	mr = dm_mr_covers(c, mh, data, size);
	if (!mr) {
		DM_WARN("isend: %p + %llu is not in memory registered on this comm (mhandle %p)",
			data, (unsigned long long)size, mh);
		return ncclInvalidArgument;
	}
	pthread_mutex_lock(&c->lock);
	q = &c->reqs[c->posted % DM_MAX_REQS];
	if (q->state != DM_REQ_FREE) {
		pthread_mutex_unlock(&c->lock);
		return ncclSuccess;	/* all slots in flight: NCCL retries */
	}
	q->seq = c->posted;
	q->n = 1;
	q->data = data;
	q->size = size;
	q->tag = (uint32_t)tag;
	dm_plan(size, (unsigned)c->nsocks, &q->chunk, &q->nchunks);
	q->first_sock = (unsigned)(c->chunk_cursor % (uint64_t)c->nsocks);
	q->chunks_left = q->nchunks;
	c->chunk_cursor += q->nchunks;
	q->ctrl_done = 0;
	q->gpu = mr->type == NCCL_PTR_CUDA;
	q->tx_id = mr->tx_id;
	q->tx_off = mr->dmabuf_off + (uint64_t)((char *)data - mr->base);
	q->zc_left = 0;
	q->posted_ms = c->stall_ms ? dm_now_ms() : 0;
	q->state = DM_REQ_ACTIVE;
	c->posted++;
	pthread_mutex_unlock(&c->lock);
	if (q->seq < 3)
		DM_INFO(NCCL_NET, "send comm %p: isend #%llu of %llu bytes at %p (%s memory)",
			(void *)c, (unsigned long long)q->seq, (unsigned long long)size, data,
			q->gpu ? "GPU" : "host");
	wake(c, 0);
	*request = q;
	return ncclSuccess;
}

ncclResult_t dm_irecv(void *recv_comm, int n, void **data, const uint64_t *sizes,
		      const int *tags, void **mhs, void **request)
{
	struct dm_comm *c = dm_comm_check(recv_comm, 0);
	unsigned gpu_mask = 0;
	struct dm_req *q;
	int i, err;

	if (!request)
		return ncclInvalidArgument;
	*request = NULL;
	if (!c) {
		DM_WARN("irecv: %p is not a recv comm of this plugin", recv_comm);
		return ncclInvalidArgument;
	}
	err = atomic_load(&c->error);
	if (err)
		return (ncclResult_t)err;
	if (n < 1 || n > DM_MAX_RECVS || !data || !sizes || !tags || !mhs) {
		DM_WARN("irecv: %d buffers (1 to %d supported)", n, DM_MAX_RECVS);
		return ncclInvalidArgument;
	}
	if (c->unpack && n != 1) {
		DM_WARN("irecv: %d buffers with UNPACK delivery (1 supported)", n);
		return ncclInvalidArgument;
	}
	for (i = 0; i < n; i++) {
		const struct dm_mr *mr = sizes[i] > DM_MAX_MSG_SIZE ? NULL :
					 dm_mr_covers(c, mhs[i], data[i], sizes[i]);

		if (!mr) {
			DM_WARN("irecv: buffer %d (%p + %llu) is not in memory registered on this "
				"comm (mhandle %p)", i, data[i], (unsigned long long)sizes[i],
				mhs[i]);
			return ncclInvalidArgument;
		}
		gpu_mask |= (unsigned)(mr->type == NCCL_PTR_CUDA) << i;
	}
	pthread_mutex_lock(&c->lock);
	q = &c->reqs[c->posted % DM_MAX_REQS];
	if (q->state != DM_REQ_FREE) {
		pthread_mutex_unlock(&c->lock);
		return ncclSuccess;
	}
	if (c->peer_closed) {
		pthread_mutex_unlock(&c->lock);
		dm_comm_error(c, ncclRemoteError, "irecv after the peer closed the connection");
		return ncclRemoteError;
	}
	if (c->unpack && dm_unpack_reserve(c, &q->slot)) {
		pthread_mutex_unlock(&c->lock);
		return ncclSuccess;	/* 16 receives not consumed yet: NCCL retries */
	}
	q->seq = c->posted;
	q->n = n;
	for (i = 0; i < n; i++) {
		q->dst[i] = data[i];
		q->cap[i] = sizes[i];
		q->tags[i] = (uint32_t)tags[i];
		q->got[i] = 0;
	}
	q->gpu_mask = gpu_mask;
	q->matched_mask = 0;
	q->nmatched = 0;
	q->msgs_left = n;
	q->rcvd = 0;
	q->posted_ms = c->stall_ms ? dm_now_ms() : 0;
	q->state = DM_REQ_ACTIVE;
	c->posted++;
	pthread_mutex_unlock(&c->lock);
	if (q->seq < 3)
		DM_INFO(NCCL_NET, "recv comm %p: irecv #%llu of up to %llu bytes at %p (%s memory)",
			(void *)c, (unsigned long long)q->seq, (unsigned long long)sizes[0],
			data[0], gpu_mask & 1 ? "GPU" : "host");
	wake(c, 0);
	*request = q;
	return ncclSuccess;
}

/*
 * Stall report, test()'s half: the request in flight for longer than
 * NCCL_DEVMEM_STALL_WARN_S and what the comm knows under its lock.  The
 * progress threads add what they own (progress_report).
 */
static void stall_report(struct dm_comm *c, const struct dm_req *q, uint64_t age_ms, char *buf,
			 size_t bl)
{
	uint64_t got = 0;
	int i;

	if (c->magic == DM_SEND_MAGIC) {
		snprintf(buf, bl, "a request in flight for %llu s: send request #%llu of %llu bytes: "
			 "control %s, %u of %u chunks left, %lld zerocopy completions to come; "
			 "%llu requests posted", (unsigned long long)(age_ms / 1000),
			 (unsigned long long)q->seq, (unsigned long long)q->size,
			 q->ctrl_done ? "sent" : "not sent", q->chunks_left, q->nchunks,
			 (long long)q->zc_left, (unsigned long long)c->posted);
		return;
	}
	for (i = 0; i < q->n; i++)
		got += q->got[i];
	snprintf(buf, bl, "a request in flight for %llu s: recv request #%llu of %d buffer(s) "
		 "(the first up to %llu bytes): %d of %d messages matched, %llu bytes announced; "
		 "%llu requests posted, %llu messages announced, next match #%llu, peer %s%s",
		 (unsigned long long)(age_ms / 1000), (unsigned long long)q->seq, q->n,
		 (unsigned long long)q->cap[0], q->nmatched, q->n, (unsigned long long)got,
		 (unsigned long long)c->posted, (unsigned long long)c->nmsgs,
		 (unsigned long long)c->match_seq, c->peer_closed ? "closed" : "open",
		 c->gpu && dm_gpu_room(c) != UINT64_MAX ? "; GPU RX region pages free: " : "");
	if (c->gpu && dm_gpu_room(c) != UINT64_MAX) {
		size_t o = strlen(buf);

		snprintf(buf + o, bl - o, "%llu", (unsigned long long)(dm_gpu_room(c) / DM_RX_PAGE));
	}
}

/* The threads that have not logged their half of the report a second
 * after it: stuck inside a call (a CUDA copy waiting on the GPU, say). */
static void silent_threads(struct dm_comm *c, char *buf, size_t bl)
{
	unsigned gen = atomic_load(&c->stall_gen);
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < c->nthreads && o < bl; i++)
		if (atomic_load(&c->workers[i].stall_seen) != gen)
			o += (size_t)snprintf(buf + o, bl - o, "%s%d", o ? ", " : "thread(s) ", i);
	if (o && o < bl)
		snprintf(buf + o, bl - o, " did not answer the stall report within 1 s: stuck "
			 "inside a call (a CUDA copy waiting for the GPU, a blocking syscall)");
}

ncclResult_t dm_test(void *request, int *done, int *sizes)
{
	char report[640];
	uint64_t age = 0;
	int stalled = 0, rearmed = 0;
	struct dm_req *q = request;
	struct dm_comm *c;
	int i, err;

	if (!q || !done || q->magic != DM_REQ_MAGIC) {
		DM_WARN("test: %p is not a request of this plugin", request);
		return ncclInvalidArgument;
	}
	*done = 0;
	c = q->comm;
	pthread_mutex_lock(&c->lock);
	if (!c->nthreads && q->state == DM_REQ_ACTIVE) {
		/* no progress threads: this call moves the bytes */
		pthread_mutex_unlock(&c->lock);
		progress_inline(c);
		pthread_mutex_lock(&c->lock);
	}
	if (q->state == DM_REQ_DONE) {
		if (sizes) {
			if (c->magic == DM_SEND_MAGIC)
				sizes[0] = (int)q->size;
			else
				for (i = 0; i < q->n; i++)
					sizes[i] = (int)q->got[i];
		}
		if (q->seq == c->stall_seq) {
			c->stall_seq = UINT64_MAX;	/* re-armed */
			c->stall_rearm_ms = dm_now_ms();
			age = c->stall_rearm_ms - q->posted_ms;
			rearmed = 1;
		}
		if (c->unpack) {
			/* the slot stays until irecvConsumed */
			dm_unpack_publish(c, q->slot);
			q->state = DM_REQ_CONSUME;
		} else {
			q->state = DM_REQ_FREE;
		}
		pthread_mutex_unlock(&c->lock);
		if (rearmed)
			DM_WARN("%s comm %p: request #%llu, reported stalled, done after %llu ms",
				kind(c), (void *)c, (unsigned long long)q->seq,
				(unsigned long long)age);
		else if (q->seq < 3)
			DM_INFO(NCCL_NET, "%s comm %p: request #%llu done", kind(c), (void *)c,
				(unsigned long long)q->seq);
		*done = 1;
		return ncclSuccess;
	}
	if (q->state != DM_REQ_ACTIVE) {
		pthread_mutex_unlock(&c->lock);
		DM_WARN("test: request %p is not in flight", request);
		return ncclInvalidArgument;
	}
	if (c->stall_ms && c->stall_seq == UINT64_MAX) {
		uint64_t now = dm_now_ms();

		/* after a report, a request's age counts from its end: one stall,
		 * one report, whatever else was in flight meanwhile */
		age = now - (q->posted_ms > c->stall_rearm_ms ? q->posted_ms : c->stall_rearm_ms);
		/* the coarse clock may count a tick more than has passed */
		if (age >= c->stall_ms + DM_CLOCK_SLACK_MS) {
			c->stall_seq = q->seq;
			c->stall_told_ms = now;
			c->stall_checked = 0;
			stalled = 1;
			stall_report(c, q, age, report, sizeof(report));
		}
	} else if (c->stall_ms && !c->stall_checked && dm_now_ms() - c->stall_told_ms >= 1000) {
		c->stall_checked = 1;
		stalled = 2;
		silent_threads(c, report, sizeof(report));
	}
	pthread_mutex_unlock(&c->lock);
	if (stalled == 1) {
		DM_WARN("%s comm %p (peer %s): %s", kind(c), (void *)c, c->peer, report);
		atomic_fetch_add(&c->stall_gen, 1);	/* the threads add theirs */
		wake(c, 0);
		if (!c->nthreads && !pthread_mutex_trylock(&c->progress_lock)) {
			/* no threads: the progress state is the caller's */
			progress_report(c, 0, 1);
			pthread_mutex_unlock(&c->progress_lock);
		} else if (!c->nthreads) {
			DM_WARN("%s comm %p: the progress state is busy (another test() is "
				"moving the bytes)", kind(c), (void *)c);
		}
	} else if (stalled == 2 && report[0]) {
		DM_WARN("%s comm %p: %s", kind(c), (void *)c, report);
	}
	err = atomic_load(&c->error);
	return (ncclResult_t)err;
}

ncclResult_t dm_close_comm(void *comm, int want)
{
	struct dm_comm *c = dm_comm_check(comm, want);
	int i, clean;

	if (!c) {
		DM_WARN("close%s: %p is not a %s comm of this plugin", want ? "Send" : "Recv", comm,
			want ? "send" : "recv");
		return ncclInvalidArgument;
	}
	atomic_store(&c->stop, 1);
	wake(c, 0);
	if (!c->nthreads) {
		/* a test() still moving bytes (NCCL never closes meanwhile) */
		pthread_mutex_lock(&c->progress_lock);
		pthread_mutex_unlock(&c->progress_lock);
	}
	for (i = 0; i < c->nthreads; i++) {
		if (c->workers[i].started)
			pthread_join(c->workers[i].tid, NULL);
		c->workers[i].started = 0;
	}
	clean = !atomic_load(&c->error);
	for (i = 0; i < DM_MAX_REQS; i++)
		if (c->reqs[i].state == DM_REQ_ACTIVE)
			clean = 0;
	if (c->magic == DM_SEND_MAGIC && clean && !c->ctrl.len) {
		uint8_t m[DM_HDR_LEN];

		/* Best effort: tells the receiver this was a clean close. */
		dm_hdr_encode(m, DM_MSG_CLOSE, 0, c->ctrl.seq);
		if (send(c->ctrl.fd, m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			DM_INFO(NCCL_NET, "send comm %p: CLOSE not sent: %m", (void *)c);
	}
	if (c->magic == DM_SEND_MAGIC)
		DM_INFO(NCCL_NET, "send comm %p closed%s: %llu bytes sent from a dma-buf, %llu by "
			"plain send", comm, clean ? "" : " with requests in flight or after an error",
			(unsigned long long)atomic_load(&c->tx_dmabuf),
			(unsigned long long)atomic_load(&c->tx_plain));
	else if (c->rx || dm_gpu_bounce(c->gpu))
		DM_INFO(NCCL_NET, "%s comm %p closed%s: %llu bytes received into the dma-buf%s, "
			"%llu in host memory, %llu devmem recvmsg retries", kind(c), comm,
			clean ? "" : " with requests in flight or after an error",
			(unsigned long long)atomic_load(&c->rxcnt.dmabuf),
			c->rx ? "" : " (test mode's GPU region)",
			(unsigned long long)atomic_load(&c->rxcnt.host),
			(unsigned long long)atomic_load(&c->rxcnt.retries));
	else
		DM_INFO(NCCL_NET, "%s comm %p closed%s", kind(c), comm,
			clean ? "" : " with requests in flight or after an error");
	for (i = 0; i < DM_MAX_REQS; i++)
		c->reqs[i].magic = 0;
	comm_destroy(c);
	return ncclSuccess;
}
