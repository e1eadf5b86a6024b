/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device memory TCP: receiving payload that lives in a dma-buf, and
 * sending from one.
 *
 * recvmsg(MSG_SOCK_DEVMEM) reports each payload fragment of an unreadable
 * skb as a SCM_DEVMEM_DMABUF control message and keeps a reference on it
 * behind a per-socket token, until user space gives the token back with
 * setsockopt(SO_DEVMEM_DONTNEED) or closes the socket.
 *
 * sendmsg(MSG_ZEROCOPY) with a SCM_DEVMEM_DMABUF control message sends
 * ranges of a dma-buf bound for transmit.
 */
#ifndef _NET_TCP_DEVMEM_H
#define _NET_TCP_DEVMEM_H

#include <linux/skbuff.h>
#include <linux/sockptr.h>

struct msghdr;
struct net_devmem_dmabuf_binding;
struct sock;

/* At most this many struct dmabuf_token per SO_DEVMEM_DONTNEED call. */
#define TCP_DEVMEM_DONTNEED_MAX_RANGES	128
/* One SO_DEVMEM_DONTNEED call looks at no more tokens than this. */
#define TCP_DEVMEM_DONTNEED_MAX_TOKENS	1024

#if IS_ENABLED(CONFIG_NET_DEVMEM)
void tcp_devmem_init_sock(struct sock *sk);
void tcp_devmem_release_tokens(struct sock *sk);
void tcp_devmem_close(struct sock *sk);
int tcp_devmem_recv_skb(struct sock *sk, const struct sk_buff *skb,
			u32 offset, struct msghdr *msg, size_t len, int flags);
int tcp_devmem_dontneed(struct sock *sk, sockptr_t optval,
			unsigned int optlen);
struct net_devmem_dmabuf_binding *
tcp_devmem_tx_start(struct sock *sk, struct msghdr *msg, u32 dmabuf_id);
void tcp_devmem_tx_end(struct net_devmem_dmabuf_binding *binding);
#else
static inline void tcp_devmem_init_sock(struct sock *sk)
{
}

static inline void tcp_devmem_release_tokens(struct sock *sk)
{
}

static inline void tcp_devmem_close(struct sock *sk)
{
}

static inline int tcp_devmem_recv_skb(struct sock *sk,
				      const struct sk_buff *skb, u32 offset,
				      struct msghdr *msg, size_t len,
				      int flags)
{
	return -EFAULT;
}

static inline int tcp_devmem_dontneed(struct sock *sk, sockptr_t optval,
				      unsigned int optlen)
{
	return -EOPNOTSUPP;
}

static inline struct net_devmem_dmabuf_binding *
tcp_devmem_tx_start(struct sock *sk, struct msghdr *msg, u32 dmabuf_id)
{
	return ERR_PTR(-EINVAL);
}

static inline void
tcp_devmem_tx_end(struct net_devmem_dmabuf_binding *binding)
{
}
#endif

/**
 * tcp_devmem_can_append() - may this send add to the tail skb?
 * @skb: the last skb of the write queue
 * @devmem: the send is from device memory
 *
 * Host memory and device memory never share an skb: code that may read
 * a readable skb's payload (collapsing, MTU probing) must not meet a
 * net_iov in it.
 *
 * Return: true when @skb is empty or holds the same kind of memory.
 */
static inline bool tcp_devmem_can_append(const struct sk_buff *skb,
					 bool devmem)
{
	return !skb->len || skb_frags_readable(skb) != devmem;
}

/**
 * tcp_recv_unreadable() - receive from an skb whose payload is device memory
 * @sk: the TCP socket, locked
 * @skb: the skb at the socket's read position
 * @offset: where reading starts in @skb
 * @msg: the caller's message
 * @used: in: bytes the caller may take from @skb; out: bytes taken
 * @flags: recvmsg flags
 *
 * Without MSG_SOCK_DEVMEM device memory cannot be received: nothing is
 * copied and the caller fails with -EFAULT. Every failure of a devmem
 * receive is -EFAULT as well (full control buffer, MSG_PEEK, no token
 * left), as mainline reports it: programs written for mainline test for
 * that errno alone.
 *
 * Return: 0 with *@used updated, or -EFAULT.
 */
static inline int tcp_recv_unreadable(struct sock *sk,
				      const struct sk_buff *skb, u32 offset,
				      struct msghdr *msg, unsigned long *used,
				      int flags)
{
	int ret;

	if (!(flags & MSG_SOCK_DEVMEM))
		return -EFAULT;
	ret = tcp_devmem_recv_skb(sk, skb, offset, msg, *used, flags);
	if (ret < 0)
		return -EFAULT;
	*used = ret;
	return 0;
}

#endif /* _NET_TCP_DEVMEM_H */
