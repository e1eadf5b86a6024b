// SPDX-License-Identifier: GPL-2.0
/*
 * The netdev generic netlink family: just enough to bind a dma-buf to RX
 * queues (bind-rx) or for transmit (bind-tx).  A binding lives as long as
 * the netlink socket that made it, so the caller keeps the socket open
 * while the binding is used.
 *
 * Messages are built in a fixed buffer; every attribute of an answer is
 * bounds-checked before it is read.
 */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devmem_abi.h"
#include "plugin.h"

#define NL_BUF 8192
#define NL_TIMEOUT_MS 30000	/* a bind restarts queues: slow on some NICs */

struct nl_msg {
	uint8_t buf[1024];
	size_t len;
};

static int put_attr(struct nl_msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);
	size_t total = NLA_ALIGN(NLA_HDRLEN + len);

	if (m->len + total > sizeof(m->buf))
		return -EMSGSIZE;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	memset((uint8_t *)a + NLA_HDRLEN + len, 0, total - NLA_HDRLEN - len);
	m->len += total;
	return 0;
}

static int put_u32(struct nl_msg *m, uint16_t type, uint32_t v)
{
	return put_attr(m, type, &v, sizeof(v));
}

static size_t nest_start(struct nl_msg *m, uint16_t type)
{
	size_t off = m->len;

	if (put_attr(m, type | NLA_F_NESTED, NULL, 0))
		return 0;
	return off;
}

static void nest_end(struct nl_msg *m, size_t off)
{
	((struct nlattr *)(m->buf + off))->nla_len = (uint16_t)(m->len - off);
}

static void msg_init(struct nl_msg *m, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	h->nlmsg_type = family;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g->cmd = cmd;
	g->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/* The attribute of type `type` among the genl attributes of `h`; NULL if
 * absent or malformed. */
static const struct nlattr *find_attr(const struct nlmsghdr *h, uint16_t type)
{
	const uint8_t *p = (const uint8_t *)h + NLMSG_HDRLEN + GENL_HDRLEN;
	const uint8_t *end = (const uint8_t *)h + h->nlmsg_len;

	if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return NULL;
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* The extack message of an error answer, when there is one. */
static void extack_msg(const struct nlmsghdr *h, char *why, size_t n)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	const uint8_t *p, *end = (const uint8_t *)h + h->nlmsg_len;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    h->nlmsg_len < NLMSG_HDRLEN + sizeof(*e))
		return;
	p = (const uint8_t *)&e->msg;
	if (!(h->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(e->msg) ||
		    e->msg.nlmsg_len > (size_t)(end - p))
			return;
		p += NLMSG_ALIGN(e->msg.nlmsg_len);
	} else {
		p += NLMSG_HDRLEN;
	}
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			return;
		if (a->nla_type == NLMSGERR_ATTR_MSG && a->nla_len > NLA_HDRLEN) {
			size_t l = strnlen((const char *)a + NLA_HDRLEN, a->nla_len - NLA_HDRLEN);

			snprintf(why, n, "%.*s", (int)l, (const char *)a + NLA_HDRLEN);
			return;
		}
		p += NLA_ALIGN(a->nla_len);
	}
}

/* Sends m and reads answers until the ACK or error of its sequence number.
 * With `reply`, the first answer that is not an error is copied there.
 * 0 or -errno; `why` gets the kernel's extack message on an error. */
static int transact(int fd, struct nl_msg *m, uint32_t seq, uint8_t *reply, size_t reply_len,
		    char *why, size_t why_len)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;
	uint8_t buf[NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint64_t end = dm_now_ms() + NL_TIMEOUT_MS;
	struct sockaddr_nl from;
	socklen_t fl = sizeof(from);

	h->nlmsg_len = (uint32_t)m->len;
	h->nlmsg_seq = seq;
	if (reply)
		memset(reply, 0, NLMSG_HDRLEN);	/* stays empty unless an answer comes */
	if (send(fd, m->buf, m->len, 0) != (ssize_t)m->len)
		return -errno;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = dm_now_ms();
		ssize_t r;
		size_t off;

		if (now >= end)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(end - now)) <= 0)
			continue;
		r = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		fl = sizeof(from);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if (from.nl_pid)
			continue;	/* only the kernel answers */
		for (off = 0; off + NLMSG_HDRLEN <= (size_t)r;) {
			struct nlmsghdr *a = (struct nlmsghdr *)(buf + off);

			if (a->nlmsg_len < NLMSG_HDRLEN || off + a->nlmsg_len > (size_t)r)
				return -EBADMSG;
			if (a->nlmsg_seq == seq) {
				if (a->nlmsg_type == NLMSG_ERROR) {
					const struct nlmsgerr *e = NLMSG_DATA(a);

					if (a->nlmsg_len < NLMSG_HDRLEN + sizeof(e->error))
						return -EBADMSG;
					if (e->error)
						extack_msg(a, why, why_len);
					return e->error;
				}
				if (reply && a->nlmsg_len <= reply_len) {
					memcpy(reply, a, a->nlmsg_len);
					reply = NULL;
				}
			}
			off += NLMSG_ALIGN(a->nlmsg_len);
		}
	}
}

int dm_nl_open(struct dm_nl *nl, char *why, size_t why_len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint8_t reply[NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlattr *a;
	struct nl_msg m;
	int one = 1, err;

	why[0] = 0;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0) {
		snprintf(why, why_len, "netlink socket: %s", strerror(errno));
		return -errno;
	}
	nl->seq = 1;
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto fail;
	}
	msg_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	if (put_attr(&m, CTRL_ATTR_FAMILY_NAME, DM_NETDEV_FAMILY, sizeof(DM_NETDEV_FAMILY))) {
		err = -EMSGSIZE;
		goto fail;
	}
	err = transact(nl->fd, &m, nl->seq++, reply, sizeof(reply), why, why_len);
	if (err)
		goto fail;
	a = find_attr((struct nlmsghdr *)reply, CTRL_ATTR_FAMILY_ID);
	if (!a || a->nla_len != NLA_HDRLEN + 2) {
		err = -ENOENT;
		goto fail;
	}
	memcpy(&nl->family, (const uint8_t *)a + NLA_HDRLEN, 2);
	return 0;
fail:
	if (!why[0])
		snprintf(why, why_len, "the kernel has no netdev netlink family (%s)",
			 strerror(-err));
	close(nl->fd);
	nl->fd = -1;
	return err;
}

void dm_nl_close(struct dm_nl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

/* Sends a bind request and takes the binding id from the answer. */
static int bind_transact(struct dm_nl *nl, struct nl_msg *m, const char *cmd, uint32_t *id,
			 char *why, size_t why_len)
{
	uint8_t reply[NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlattr *a;
	int err;

	why[0] = 0;
	err = transact(nl->fd, m, nl->seq++, reply, sizeof(reply), why, why_len);
	if (err) {
		if (!why[0])
			snprintf(why, why_len, "%s", strerror(-err));
		return err;
	}
	a = find_attr((struct nlmsghdr *)reply, DM_NETDEV_A_DMABUF_ID);
	if (!a || a->nla_len != NLA_HDRLEN + 4) {
		snprintf(why, why_len, "%s answered without a binding id", cmd);
		return -EBADMSG;
	}
	memcpy(id, (const uint8_t *)a + NLA_HDRLEN, 4);
	return 0;
}

int dm_nl_bind_rx(struct dm_nl *nl, int ifindex, int dmabuf_fd, const unsigned *queues, int n,
		  uint32_t *id, char *why, size_t why_len)
{
	struct nl_msg m;
	int i;

	msg_init(&m, nl->family, DM_NETDEV_CMD_BIND_RX, DM_NETDEV_VERSION);
	if (put_u32(&m, DM_NETDEV_A_DMABUF_IFINDEX, (uint32_t)ifindex) ||
	    put_u32(&m, DM_NETDEV_A_DMABUF_FD, (uint32_t)dmabuf_fd))
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		size_t q = nest_start(&m, DM_NETDEV_A_DMABUF_QUEUES);

		if (!q || put_u32(&m, DM_NETDEV_A_QUEUE_ID, queues[i]) ||
		    put_u32(&m, DM_NETDEV_A_QUEUE_TYPE, DM_NETDEV_QUEUE_TYPE_RX))
			return -EMSGSIZE;
		nest_end(&m, q);
	}
	return bind_transact(nl, &m, "bind-rx", id, why, why_len);
}

int dm_nl_bind_tx(struct dm_nl *nl, int ifindex, int dmabuf_fd, uint32_t *id, char *why,
		  size_t why_len)
{
	struct nl_msg m;

	msg_init(&m, nl->family, DM_NETDEV_CMD_BIND_TX, DM_NETDEV_VERSION);
	if (put_u32(&m, DM_NETDEV_A_DMABUF_IFINDEX, (uint32_t)ifindex) ||
	    put_u32(&m, DM_NETDEV_A_DMABUF_FD, (uint32_t)dmabuf_fd))
		return -EMSGSIZE;
	return bind_transact(nl, &m, "bind-tx", id, why, why_len);
}
