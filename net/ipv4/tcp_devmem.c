// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device memory TCP: receive into a dma-buf.
 *
 * The payload of an unreadable skb sits in net_iovs, pages of a dma-buf
 * bound to the RX queue (net/core/devmem.c). recvmsg(MSG_SOCK_DEVMEM)
 * copies only the bytes of the skb's linear part (reported by one
 * SCM_DEVMEM_LINEAR control message) and describes every payload fragment
 * with a SCM_DEVMEM_DMABUF control message: where it is in the dma-buf,
 * its size, and a token. The token holds a reference on the net_iov, so
 * the NIC does not reuse the memory while user space reads it; user space
 * gives tokens back with setsockopt(SO_DEVMEM_DONTNEED), and whatever is
 * left is given back when the socket is destroyed.
 *
 * Tokens live in the socket's token table (struct tcp_devmem_tokens, at
 * struct tcp_sock): token N is slot N - 1 of a flat array, and the free
 * slots form a stack threaded through the array, so that handing out a
 * token and taking one back are O(1) and ids stay small. The table is
 * under the socket lock: recvmsg() and SO_DEVMEM_DONTNEED own the socket,
 * and when the socket is destroyed nothing else can reach it.
 *
 * Transmit: sendmsg(MSG_ZEROCOPY) with a SCM_DEVMEM_DMABUF cmsg naming a
 * TX binding sends from the dma-buf. Its iovecs are {offset, length}
 * ranges of the dma-buf; the skbs get fragments pointing at the binding's
 * net_iovs (net_devmem_zerocopy_fill()) and the driver hands their DMA
 * addresses to the NIC. tcp_devmem_tx_start() checks the call first.
 */

#include <linux/bits.h>
#include <linux/if_ether.h>
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <net/dst.h>
#include <net/inet_connection_sock.h>
#include <net/inet_sock.h>
#include <net/netmem.h>
#include <net/page_pool.h>
#include <net/sock.h>
#include <net/tcp_devmem.h>

#include "../core/devmem.h"

/* Tokens one socket may hold at once: 2^26, a 512 MiB table. Mainline's
 * ids stay below 2^31; a table that large would be one allocation above
 * kvmalloc()'s limit, and copying it on growth would hold the socket lock
 * for seconds.
 */
#define TCP_DEVMEM_TOKEN_MAX		BIT(26)
/* Slots of a table's first array; it doubles when full. */
#define TCP_DEVMEM_TOKENS_MIN		64
/* net_iovs given back to their page pools together (net_iov_put_bulk()) */
#define TCP_DEVMEM_PUT_BATCH		32
/* Token slots tcp_devmem_close() walks between two cond_resched() */
#define TCP_DEVMEM_RELEASE_BATCH	1024

/**
 * struct tcp_devmem_put_batch - net_iovs whose token went, to put together
 * @niovs: the net_iovs
 * @count: entries in @niovs
 */
struct tcp_devmem_put_batch {
	struct net_iov *niovs[TCP_DEVMEM_PUT_BATCH];
	unsigned int count;
};

static void tcp_devmem_put_flush(struct tcp_devmem_put_batch *batch)
{
	net_iov_put_bulk(batch->niovs, batch->count);
	batch->count = 0;
}

static void tcp_devmem_put_add(struct tcp_devmem_put_batch *batch,
			       struct net_iov *niov)
{
	batch->niovs[batch->count++] = niov;
	if (batch->count == TCP_DEVMEM_PUT_BATCH)
		tcp_devmem_put_flush(batch);
}

/* A free slot holds the index + 1 of the next free one, tagged in bit 0
 * (a net_iov pointer is aligned, so its bit 0 is clear).
 */
static bool tcp_devmem_slot_free(unsigned long slot)
{
	return slot & 1;
}

static unsigned long tcp_devmem_slot_link(u32 next_free)
{
	return ((unsigned long)next_free << 1) | 1;
}

/**
 * tcp_devmem_init_sock() - start a socket with an empty token table
 * @sk: a TCP socket being created, or a child socket just cloned from its
 *	listener (the clone copied the listener's table head: forget it)
 */
void tcp_devmem_init_sock(struct sock *sk)
{
	memset(&tcp_sk(sk)->devmem_tokens, 0,
	       sizeof(tcp_sk(sk)->devmem_tokens));
}

/* One pass over the slots, ending at the last token held: a socket may
 * hold every page of a large binding, and a page many times. With
 * @can_sleep, the CPU is offered to others every TCP_DEVMEM_RELEASE_BATCH
 * slots.
 */
static void tcp_devmem_release_slots(struct sock *sk, bool can_sleep)
{
	struct tcp_devmem_tokens *tokens = &tcp_sk(sk)->devmem_tokens;
	struct tcp_devmem_put_batch batch = {};
	u32 left = tokens->held;
	u32 i;

	for (i = 0; i < tokens->used && left; i++) {
		if (can_sleep && i && !(i % TCP_DEVMEM_RELEASE_BATCH)) {
			tcp_devmem_put_flush(&batch);
			cond_resched();
		}
		if (tcp_devmem_slot_free(tokens->slots[i]))
			continue;
		tcp_devmem_put_add(&batch, (struct net_iov *)tokens->slots[i]);
		left--;
	}
	tcp_devmem_put_flush(&batch);
	kvfree(tokens->slots);
	tcp_devmem_init_sock(sk);
}

/**
 * tcp_devmem_close() - give back every token of a socket being closed
 * @sk: the TCP socket, owned by the caller (tcp_close()), which may sleep
 *
 * close() gives the tokens back here, in process context with bottom
 * halves on, a batch of slots at a time with a chance to reschedule in
 * between: a table may hold TCP_DEVMEM_TOKEN_MAX tokens. The socket is
 * being closed by its last user, so no recvmsg() can hand out new ones.
 */
void tcp_devmem_close(struct sock *sk)
{
	sock_owned_by_me(sk);
	might_sleep();
	if (tcp_sk(sk)->devmem_tokens.slots)
		tcp_devmem_release_slots(sk, true);
}

/**
 * tcp_devmem_release_tokens() - give back every token of a socket
 * @sk: the TCP socket being destroyed
 *
 * No recvmsg or setsockopt can run any more, so the table has no other
 * user. Runs with bottom halves disabled or in softirq (an orphaned
 * socket), so it cannot sleep. A socket that user space closed gave its
 * tokens back in tcp_devmem_close() already; this takes what a socket
 * destroyed without close() (never accepted, say) could hold.
 */
void tcp_devmem_release_tokens(struct sock *sk)
{
	tcp_devmem_release_slots(sk, false);
}

/* Double the table's array, or start it. */
static int tcp_devmem_tokens_grow(struct tcp_devmem_tokens *tokens)
{
	u32 size = max_t(u32, tokens->size * 2, TCP_DEVMEM_TOKENS_MIN);
	unsigned long *slots;

	if (tokens->size >= TCP_DEVMEM_TOKEN_MAX)
		return -ENOBUFS;
	size = min_t(u32, size, TCP_DEVMEM_TOKEN_MAX);
	slots = kvmalloc_array(size, sizeof(*slots),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!slots)
		return -ENOMEM;
	if (tokens->used)
		memcpy(slots, tokens->slots, tokens->used * sizeof(*slots));
	kvfree(tokens->slots);
	tokens->slots = slots;
	tokens->size = size;
	return 0;
}

/* Hand out a token for @niov (whose reference the table now holds). */
static int tcp_devmem_token_get(struct tcp_devmem_tokens *tokens,
				struct net_iov *niov, u32 *token)
{
	u32 idx;
	int err;

	if (tokens->free) {
		idx = tokens->free - 1;
		tokens->free = tokens->slots[idx] >> 1;
	} else {
		if (tokens->used == tokens->size) {
			err = tcp_devmem_tokens_grow(tokens);
			if (err)
				return err;
		}
		idx = tokens->used++;
	}
	tokens->slots[idx] = (unsigned long)niov;
	tokens->held++;
	*token = idx + 1;
	return 0;
}

/* Take @token back; returns the net_iov whose reference it held, or NULL
 * when it is not a token the table holds.
 */
static struct net_iov *tcp_devmem_token_put(struct tcp_devmem_tokens *tokens,
					    u64 token)
{
	unsigned long slot;
	u64 idx = token - 1;

	if (!token || idx >= tokens->used)
		return NULL;
	slot = tokens->slots[idx];
	if (tcp_devmem_slot_free(slot))
		return NULL;
	tokens->held--;
	if (!tokens->held) {
		/* empty again: the next token is 1 */
		tokens->used = 0;
		tokens->free = 0;
	} else {
		tokens->slots[idx] = tcp_devmem_slot_link(tokens->free);
		tokens->free = idx + 1;
	}
	return (struct net_iov *)slot;
}

/* Is there room in the control buffer for one more devmem cmsg? Checked
 * first because put_cmsg() would truncate it silently, and a truncated
 * token is a reference lost for good.
 */
static bool tcp_devmem_cmsg_fits(const struct msghdr *msg)
{
	return msg->msg_control && !(msg->msg_flags & MSG_CTRUNC) &&
	       msg->msg_controllen >= CMSG_LEN(sizeof(struct dmabuf_cmsg));
}

static int tcp_devmem_put_cmsg(struct msghdr *msg, int type,
			       struct dmabuf_cmsg *dc)
{
	return put_cmsg(msg, SOL_SOCKET, type, sizeof(*dc), dc);
}

/* Copy @len bytes of the linear part and report them. */
static int tcp_devmem_recv_linear(const struct sk_buff *skb, u32 offset,
				  struct msghdr *msg, u32 len)
{
	struct dmabuf_cmsg dc = { .frag_size = len };
	int err;

	if (!tcp_devmem_cmsg_fits(msg))
		return -ENOSPC;
	err = skb_copy_datagram_msg(skb, offset, msg, len);
	if (err)
		return err;
	return tcp_devmem_put_cmsg(msg, SCM_DEVMEM_LINEAR, &dc);
}

/* Report @len bytes at @off of fragment @frag and hand out a token. */
static int tcp_devmem_recv_frag(struct sock *sk, const skb_frag_t *frag,
				u32 off, u32 len, struct msghdr *msg)
{
	struct tcp_devmem_tokens *tokens = &tcp_sk(sk)->devmem_tokens;
	struct net_iov *niov = skb_frag_net_iov(frag);
	struct dmabuf_cmsg dc = {};
	u32 token;
	int err;

	/* An unreadable skb carries dma-buf fragments only. */
	if (!niov)
		return -EFAULT;
	dc.dmabuf_id = net_devmem_iov_binding_id(niov);
	if (!dc.dmabuf_id)
		return -EFAULT;
	if (!tcp_devmem_cmsg_fits(msg))
		return -ENOSPC;

	err = tcp_devmem_token_get(tokens, niov, &token);
	if (err)
		return err;
	net_iov_get(niov);

	dc.frag_offset = net_iov_virtual_addr(niov) + skb_frag_off(frag) + off;
	dc.frag_size = len;
	dc.frag_token = token;
	err = tcp_devmem_put_cmsg(msg, SCM_DEVMEM_DMABUF, &dc);
	if (err)
		net_iov_put(tcp_devmem_token_put(tokens, token));
	return err;
}

/**
 * tcp_devmem_recv_skb() - receive from an unreadable skb as tokens
 * @sk: the TCP socket, locked by the caller
 * @skb: the skb at the read position; its payload is device memory
 * @offset: first byte of @skb to receive
 * @msg: the caller's message: linear bytes go to its iovec, one control
 *	message per piece of data to its control buffer
 * @len: bytes to receive at most
 * @flags: recvmsg flags (MSG_SOCK_DEVMEM is set)
 *
 * Stops early when the control buffer has no room for the next control
 * message, so that no token is ever truncated away.
 *
 * Return: bytes received (> 0), or a negative errno when nothing was:
 * -ENOSPC (control buffer full), -EINVAL (MSG_PEEK), -EFAULT (bad user
 * buffer, or data that is neither linear nor a dma-buf fragment),
 * -ENOBUFS / -ENOMEM (no token left).
 */
int tcp_devmem_recv_skb(struct sock *sk, const struct sk_buff *skb,
			u32 offset, struct msghdr *msg, size_t len, int flags)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	u32 start = skb_headlen(skb);
	size_t done = 0;
	int i, err = 0;

	/* A peek would hand out a second token for the same bytes. */
	if (flags & MSG_PEEK)
		return -EINVAL;

	if (offset < start) {
		u32 n = min_t(size_t, start - offset, len);

		err = tcp_devmem_recv_linear(skb, offset, msg, n);
		if (err)
			return err;
		done = n;
	}

	for (i = 0; i < shinfo->nr_frags && done < len; i++) {
		const skb_frag_t *frag = &shinfo->frags[i];
		u32 end = start + skb_frag_size(frag);
		u32 pos = offset + done;
		u32 n;

		if (pos < end) {
			n = min_t(size_t, end - pos, len - done);
			err = tcp_devmem_recv_frag(sk, frag, pos - start, n,
						   msg);
			if (err)
				break;
			done += n;
		}
		start = end;
	}

	/* Data past the fragments (a frag_list) is never built for device
	 * memory; refuse it rather than guess.
	 */
	if (!err && done < len)
		err = -EFAULT;

	return done ? done : err;
}

/* Free the tokens of @ranges, looking at no more than the per-call limit
 * of tokens whatever the counts say; returns how many were freed. The
 * caller owns the socket.
 */
static int tcp_devmem_put_ranges(struct sock *sk,
				 const struct dmabuf_token *ranges,
				 unsigned int nranges)
{
	struct tcp_devmem_tokens *tokens = &tcp_sk(sk)->devmem_tokens;
	unsigned int budget = TCP_DEVMEM_DONTNEED_MAX_TOKENS;
	struct tcp_devmem_put_batch batch = {};
	unsigned int i, freed = 0;
	struct net_iov *niov;

	for (i = 0; i < nranges && budget; i++) {
		u64 token = ranges[i].token_start;
		u64 end = token + ranges[i].token_count;

		/* no token above the slots in use: the rest is empty */
		end = min_t(u64, end, (u64)tokens->used + 1);
		for (; token < end && budget; token++, budget--) {
			niov = tcp_devmem_token_put(tokens, token);
			if (niov) {
				tcp_devmem_put_add(&batch, niov);
				freed++;
			}
		}
	}
	tcp_devmem_put_flush(&batch);
	return freed;
}

/* Ranges a SO_DEVMEM_DONTNEED call may pass without a kmalloc(). */
#define TCP_DEVMEM_DONTNEED_STACK_RANGES	8

/**
 * tcp_devmem_dontneed() - setsockopt(SO_DEVMEM_DONTNEED)
 * @sk: the socket
 * @optval: an array of struct dmabuf_token
 * @optlen: its size in bytes
 *
 * Tokens that are unknown, or already given back, are skipped. One call
 * takes at most TCP_DEVMEM_DONTNEED_MAX_RANGES ranges and looks at no more
 * than TCP_DEVMEM_DONTNEED_MAX_TOKENS tokens, so a huge count cannot keep
 * the CPU.
 *
 * Return: the number of tokens freed, -EBADF for a socket that is not TCP,
 * -EINVAL for a bad @optlen (0 included, as mainline), -EFAULT or -ENOMEM.
 */
int tcp_devmem_dontneed(struct sock *sk, sockptr_t optval,
			unsigned int optlen)
{
	struct dmabuf_token on_stack[TCP_DEVMEM_DONTNEED_STACK_RANGES];
	struct dmabuf_token *ranges = on_stack;
	unsigned int nranges;
	int freed;

	if (!sk_fullsock(sk) || sk->sk_type != SOCK_STREAM ||
	    sk->sk_protocol != IPPROTO_TCP)
		return -EBADF;
	if (!optlen || optlen % sizeof(*ranges) ||
	    optlen > TCP_DEVMEM_DONTNEED_MAX_RANGES * sizeof(*ranges))
		return -EINVAL;
	nranges = optlen / sizeof(*ranges);

	if (nranges > ARRAY_SIZE(on_stack)) {
		ranges = kmalloc_array(nranges, sizeof(*ranges), GFP_KERNEL);
		if (!ranges)
			return -ENOMEM;
	}
	if (copy_from_sockptr(ranges, optval, optlen)) {
		freed = -EFAULT;
		goto out;
	}

	lock_sock(sk);
	freed = tcp_devmem_put_ranges(sk, ranges, nranges);
	release_sock(sk);
out:
	if (ranges != on_stack)
		kfree(ranges);
	return freed;
}

/* Can the route's device send device memory as it is? TCP route caps
 * always claim SG (software GSO): the device itself must have it, or it
 * would linearize, i.e. drop, every skb; only the NIC can sum device
 * memory, for the route's protocol; and an IPsec bundle would encrypt,
 * i.e. read, the payload.
 */
static bool tcp_devmem_tx_dst_ok(const struct dst_entry *dst)
{
	netdev_features_t features = READ_ONCE(dst->dev->features);
	__be16 proto = dst->ops->family == AF_INET6 ? htons(ETH_P_IPV6) :
						      htons(ETH_P_IP);

	return !dst_xfrm(dst) && (features & NETIF_F_SG) &&
	       can_checksum_protocol(features, proto);
}

/* The route a connected socket's next segment takes. Its cached route may
 * be gone (SO_MARK or SO_BINDTODEVICE drop it) or obsolete (the routes
 * changed): check it and route again if need be, as the transmit path
 * would, so that the device compared is the one that will send. A socket
 * that is not connected keeps what it has.
 */
static struct dst_entry *tcp_devmem_tx_dst(struct sock *sk)
{
	struct dst_entry *dst;

	if (!((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)))
		return __sk_dst_get(sk) ?: ERR_PTR(-ENODEV);
	if (inet_csk(sk)->icsk_af_ops->rebuild_header(sk))
		return ERR_PTR(-EHOSTUNREACH);
	dst = __sk_dst_get(sk);
	return dst ?: ERR_PTR(-EHOSTUNREACH);
}

/* Can the socket send device memory without reading it? Only as zerocopy
 * fragments: a socket whose route caps lack scatter-gather would copy
 * from the iovecs, i.e. from user addresses equal to dma-buf offsets;
 * and TCP MD5 signs every segment by reading its payload.
 */
static bool tcp_devmem_tx_sock_ok(const struct sock *sk)
{
	if (!(sk->sk_route_caps & NETIF_F_SG))
		return false;
#ifdef CONFIG_TCP_MD5SIG
	if (rcu_access_pointer(tcp_sk(sk)->md5sig_info))
		return false;
#endif
	return true;
}

/**
 * tcp_devmem_tx_start() - check a sendmsg() from device memory
 * @sk: the TCP socket, locked
 * @msg: the message; its iovecs are {offset, length} ranges of the dma-buf
 * @dmabuf_id: the binding id of the SCM_DEVMEM_DMABUF cmsg
 *
 * Device memory is only sent as MSG_ZEROCOPY, with completions that tell
 * user space when the NIC is done with the bytes: the socket's (SO_ZEROCOPY,
 * on its error queue) or the caller's own (io_uring's sendmsg_zc, whose
 * notifications come as completion queue entries). Only from a TX binding,
 * only within the dma-buf, and only through the device the binding was
 * made for.
 *
 * Return: the binding, held until tcp_devmem_tx_end(); or an ERR_PTR:
 * -EINVAL for a call that is not a zerocopy send or an id that names no
 * TX binding, -EPERM for another user's binding (without CAP_NET_ADMIN),
 * -EFAULT for a range outside the dma-buf, -EHOSTUNREACH when the socket
 * has no route, -ENODEV when the socket's route leaves through another
 * device, -EOPNOTSUPP when that device has scatter-gather or checksum
 * offload (for the route's protocol) turned off, the route is an IPsec
 * bundle, the socket's route caps lack scatter-gather or the socket signs
 * its segments with TCP MD5.
 */
struct net_devmem_dmabuf_binding *
tcp_devmem_tx_start(struct sock *sk, struct msghdr *msg, u32 dmabuf_id)
{
	struct net_devmem_dmabuf_binding *binding;
	struct dst_entry *dst;
	int err;

	if (!(msg->msg_flags & MSG_ZEROCOPY) ||
	    (!msg->msg_ubuf && !sock_flag(sk, SOCK_ZEROCOPY)))
		return ERR_PTR(-EINVAL);
	/* these paths copy from the iovecs as if they were user memory */
	if (tcp_sk(sk)->repair || (msg->msg_flags & MSG_FASTOPEN) ||
	    inet_sk(sk)->defer_connect)
		return ERR_PTR(-EINVAL);

	binding = net_devmem_get_tx_binding(sock_net(sk), dmabuf_id);
	if (IS_ERR(binding))
		return binding;

	err = net_devmem_tx_check_iter(binding, &msg->msg_iter);
	if (err)
		goto err_put;

	dst = tcp_devmem_tx_dst(sk);
	if (IS_ERR(dst)) {
		err = PTR_ERR(dst);
		goto err_put;
	}
	if (dst->dev != READ_ONCE(binding->dev)) {
		err = -ENODEV;
		goto err_put;
	}
	if (!tcp_devmem_tx_dst_ok(dst) || !tcp_devmem_tx_sock_ok(sk)) {
		err = -EOPNOTSUPP;
		goto err_put;
	}
	return binding;

err_put:
	net_devmem_dmabuf_binding_put(binding);
	return ERR_PTR(err);
}

/**
 * tcp_devmem_tx_end() - end a sendmsg() from device memory
 * @binding: what tcp_devmem_tx_start() returned, or NULL
 *
 * The skbs queued keep their own references on the binding.
 */
void tcp_devmem_tx_end(struct net_devmem_dmabuf_binding *binding)
{
	if (binding)
		net_devmem_dmabuf_binding_put(binding);
}
