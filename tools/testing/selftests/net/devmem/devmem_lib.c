// SPDX-License-Identifier: GPL-2.0
/*
 * Raw generic netlink, netdev devmem commands, ethtool
 * tcp-data-split and udmabuf helpers for the devmem TCP selftests, and the
 * other helpers their programs share.
 *
 * See devmem_lib.h for the conventions (negative errno returns, extack).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>

#include "devmem_lib.h"

#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING	0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS		1033
#endif
#ifndef F_SEAL_SHRINK
#define F_SEAL_SHRINK		0x0002
#endif
#ifndef SOL_NETLINK
#define SOL_NETLINK		270
#endif

/* ---------------------------------------------------------------------- */
/* Request building                                                         */
/* ---------------------------------------------------------------------- */

/**
 * nl_msg_init - start a generic netlink request
 * @m: the request to build
 * @family_id: generic netlink family id (nlmsg_type)
 * @cmd: genlmsghdr command
 * @version: genlmsghdr version
 * @flags: NLM_F_* flags besides NLM_F_REQUEST (NLM_F_DUMP for a dump)
 *
 * Writes the nlmsghdr and the genlmsghdr and clears the sticky error.
 * The sequence number and the length are filled in by nl_request().
 */
void nl_msg_init(struct nl_msg *m, __u16 family_id, __u8 cmd, __u8 version,
		 __u16 flags)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *genl;

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_type = family_id;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	genl = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	genl->cmd = cmd;
	genl->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->err = 0;
}

/**
 * nl_msg_init_family - start a request for the family @nl was opened for
 * @m: the request to build
 * @nl: context whose family_id and version are used
 * @cmd: genlmsghdr command
 * @flags: NLM_F_* flags besides NLM_F_REQUEST
 *
 * nl_msg_init() with the family id and the version the kernel reported
 * when nl_open() resolved the family.
 */
void nl_msg_init_family(struct nl_msg *m, const struct nl_ctx *nl, __u8 cmd,
			__u16 flags)
{
	nl_msg_init(m, nl->family_id, cmd, nl->version, flags);
}

/**
 * nl_put - append an attribute
 * @m: the request
 * @type: attribute type (NLA_F_* flags allowed)
 * @data: payload, may be NULL when @len is 0
 * @len: payload length
 *
 * The padding up to the next attribute is zeroed.  After a first error
 * nothing more is written.
 *
 * Return: 0, or -EMSGSIZE (also kept in m->err) when it does not fit.
 */
int nl_put(struct nl_msg *m, __u16 type, const void *data, size_t len)
{
	size_t total = NLA_HDRLEN + len;
	struct nlattr *a;

	if (m->err)
		return m->err;
	if (len > UINT16_MAX - NLA_HDRLEN ||
	    NLA_ALIGN(total) > sizeof(m->buf) - m->len) {
		m->err = -EMSGSIZE;
		return m->err;
	}
	a = (struct nlattr *)(m->buf + m->len);
	a->nla_type = type;
	a->nla_len = total;
	if (len)
		memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	memset(m->buf + m->len + total, 0, NLA_ALIGN(total) - total);
	m->len += NLA_ALIGN(total);
	return 0;
}

/**
 * nl_put_flag - append a zero-length (NLA_FLAG) attribute
 * @m: the request
 * @type: attribute type
 *
 * Return: 0 or -EMSGSIZE, as nl_put().
 */
int nl_put_flag(struct nl_msg *m, __u16 type)
{
	return nl_put(m, type, NULL, 0);
}

/**
 * nl_put_u8 - append a u8 attribute
 * @m: the request
 * @type: attribute type
 * @val: value
 *
 * Return: 0 or -EMSGSIZE, as nl_put().
 */
int nl_put_u8(struct nl_msg *m, __u16 type, __u8 val)
{
	return nl_put(m, type, &val, sizeof(val));
}

/**
 * nl_put_u16 - append a u16 attribute in host byte order
 * @m: the request
 * @type: attribute type
 * @val: value
 *
 * Return: 0 or -EMSGSIZE, as nl_put().
 */
int nl_put_u16(struct nl_msg *m, __u16 type, __u16 val)
{
	return nl_put(m, type, &val, sizeof(val));
}

/**
 * nl_put_u32 - append a u32 attribute in host byte order
 * @m: the request
 * @type: attribute type
 * @val: value
 *
 * Return: 0 or -EMSGSIZE, as nl_put().
 */
int nl_put_u32(struct nl_msg *m, __u16 type, __u32 val)
{
	return nl_put(m, type, &val, sizeof(val));
}

/**
 * nl_put_u64 - append a u64 attribute in host byte order
 * @m: the request
 * @type: attribute type
 * @val: value
 *
 * Return: 0 or -EMSGSIZE, as nl_put().
 */
int nl_put_u64(struct nl_msg *m, __u16 type, __u64 val)
{
	return nl_put(m, type, &val, sizeof(val));
}

/**
 * nl_put_str - append a NUL-terminated string attribute
 * @m: the request
 * @type: attribute type
 * @str: the string, sent with its NUL
 *
 * Return: 0 or -EMSGSIZE, as nl_put().
 */
int nl_put_str(struct nl_msg *m, __u16 type, const char *str)
{
	return nl_put(m, type, str, strlen(str) + 1);
}

/**
 * nl_nest_start - open a nested attribute
 * @m: the request
 * @type: attribute type; NLA_F_NESTED is added, as strict validation wants
 *
 * Return: the nest to pass to nl_nest_end(), or NULL when the message is
 * full (m->err is then set).
 */
struct nlattr *nl_nest_start(struct nl_msg *m, __u16 type)
{
	size_t off = m->len;

	if (nl_put(m, type | NLA_F_NESTED, NULL, 0))
		return NULL;
	return (struct nlattr *)(m->buf + off);
}

/**
 * nl_nest_end - close a nested attribute
 * @m: the request
 * @nest: what nl_nest_start() returned
 *
 * The nest's length then covers everything appended since it was opened.
 *
 * Return: 0, the sticky error of @m, -EINVAL for a NULL @nest, or
 * -EMSGSIZE when the nest grew beyond 64 KiB.
 */
int nl_nest_end(struct nl_msg *m, struct nlattr *nest)
{
	size_t len;

	if (m->err)
		return m->err;
	if (!nest)
		return -EINVAL;
	len = m->buf + m->len - (unsigned char *)nest;
	if (len > UINT16_MAX) {
		m->err = -EMSGSIZE;
		return m->err;
	}
	nest->nla_len = len;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Answer parsing                                                           */
/* ---------------------------------------------------------------------- */

/**
 * nl_genl_attrs - the attributes of a generic netlink message
 * @nlh: the message
 * @len: set to the length of the attributes (0 on failure)
 *
 * Return: the first attribute, or NULL if @nlh is too short to hold a
 * genlmsghdr.
 */
const void *nl_genl_attrs(const struct nlmsghdr *nlh, size_t *len)
{
	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
		*len = 0;
		return NULL;
	}
	*len = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	return (const char *)nlh + NLMSG_HDRLEN + GENL_HDRLEN;
}

/**
 * nl_attr_ok - check that a whole attribute is there
 * @a: the attribute
 * @rem: bytes left from @a to the end of the buffer
 *
 * Return: true if the header of @a and its whole payload fit in @rem.
 */
bool nl_attr_ok(const struct nlattr *a, ptrdiff_t rem)
{
	return rem >= (ptrdiff_t)sizeof(*a) && a->nla_len >= sizeof(*a) &&
	       a->nla_len <= rem;
}

/**
 * nl_attr_in - is @a a whole attribute inside @data/@len?
 * @a: an attribute pointer inside or just past @data
 * @data: the first attribute of a message part (payload or nest)
 * @len: the length of that part
 *
 * Return: true when the whole attribute at @a lies within the part.
 */
bool nl_attr_in(const struct nlattr *a, const void *data, size_t len)
{
	return nl_attr_ok(a, (const char *)data + len - (const char *)a);
}

/**
 * nl_attr_next - the attribute after @a
 * @a: an attribute that passed nl_attr_ok()
 *
 * Return: the next attribute, to be checked with nl_attr_ok().
 */
const struct nlattr *nl_attr_next(const struct nlattr *a)
{
	return (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
}

/**
 * nl_attr_type - type of an attribute
 * @a: the attribute
 *
 * Return: the type without the NLA_F_NESTED / NLA_F_NET_BYTEORDER flags.
 */
int nl_attr_type(const struct nlattr *a)
{
	return a->nla_type & NLA_TYPE_MASK;
}

/**
 * nl_attr_data - payload of an attribute
 * @a: the attribute
 *
 * Return: the first byte after the attribute header.
 */
const void *nl_attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

/**
 * nl_attr_len - payload length of an attribute
 * @a: the attribute
 *
 * Return: nla_len without the header.
 */
size_t nl_attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/**
 * nl_attr_parse - index attributes by type
 * @tb: the index, @maxtype + 1 entries
 * @maxtype: largest type to keep
 * @data: first attribute
 * @len: length of the attributes
 *
 * tb[type] points at the last attribute of each type up to @maxtype, NULL
 * if there is none.  Malformed trailing bytes are ignored.
 */
void nl_attr_parse(const struct nlattr **tb, int maxtype, const void *data,
		   size_t len)
{
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * (maxtype + 1));
	for (a = data; nl_attr_in(a, data, len); a = nl_attr_next(a)) {
		if (nl_attr_type(a) <= maxtype)
			tb[nl_attr_type(a)] = a;
	}
}

/* nl_attr_get - copy a fixed-size payload; -EPROTO if it is too short. */
static int nl_attr_get(const struct nlattr *a, void *val, size_t size)
{
	if (!a || nl_attr_len(a) < size)
		return -EPROTO;
	memcpy(val, nl_attr_data(a), size);
	return 0;
}

/**
 * nl_attr_get_u8 - read a u8 attribute
 * @a: the attribute, may be NULL
 * @val: where the value goes
 *
 * Return: 0, or -EPROTO if @a is NULL or too short.
 */
int nl_attr_get_u8(const struct nlattr *a, __u8 *val)
{
	return nl_attr_get(a, val, sizeof(*val));
}

/**
 * nl_attr_get_u16 - read a u16 attribute in host byte order
 * @a: the attribute, may be NULL
 * @val: where the value goes
 *
 * Return: 0, or -EPROTO if @a is NULL or too short.
 */
int nl_attr_get_u16(const struct nlattr *a, __u16 *val)
{
	return nl_attr_get(a, val, sizeof(*val));
}

/**
 * nl_attr_get_u32 - read a u32 attribute in host byte order
 * @a: the attribute, may be NULL
 * @val: where the value goes
 *
 * Return: 0, or -EPROTO if @a is NULL or too short.
 */
int nl_attr_get_u32(const struct nlattr *a, __u32 *val)
{
	return nl_attr_get(a, val, sizeof(*val));
}

/**
 * nl_attr_get_u64 - read a u64 attribute in host byte order
 * @a: the attribute, may be NULL
 * @val: where the value goes
 *
 * Return: 0, or -EPROTO if @a is NULL or too short.
 */
int nl_attr_get_u64(const struct nlattr *a, __u64 *val)
{
	return nl_attr_get(a, val, sizeof(*val));
}

/**
 * nl_attr_get_uint - read an attribute of the spec's "uint" type
 * @a: the attribute, or NULL
 * @val: where its value goes
 *
 * Return: 0, or -EPROTO when @a is absent or neither 4 nor 8 bytes long.
 */
int nl_attr_get_uint(const struct nlattr *a, __u64 *val)
{
	__u32 v32;

	if (!a)
		return -EPROTO;
	if (nl_attr_len(a) == sizeof(v32)) {
		memcpy(&v32, nl_attr_data(a), sizeof(v32));
		*val = v32;
		return 0;
	}
	if (nl_attr_len(a) == sizeof(*val)) {
		memcpy(val, nl_attr_data(a), sizeof(*val));
		return 0;
	}
	return -EPROTO;
}

/* ---------------------------------------------------------------------- */
/* Socket, request and answer                                               */
/* ---------------------------------------------------------------------- */

/*
 * nl_parse_ext_tlvs - pick the extended ACK attributes we use out of an
 * NLMSG_ERROR or NLMSG_DONE: the message (copied, NUL-terminated and
 * possibly truncated, into @extack), the offending attribute's offset and
 * the type of a missing attribute.
 */
static void nl_parse_ext_tlvs(struct nl_ctx *nl, const void *data, size_t len,
			      char *extack, size_t extack_len)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	__u32 val;

	nl_attr_parse(tb, NLMSGERR_ATTR_MAX, data, len);
	if (tb[NLMSGERR_ATTR_MSG] && extack && extack_len) {
		size_t n = strnlen(nl_attr_data(tb[NLMSGERR_ATTR_MSG]),
				   nl_attr_len(tb[NLMSGERR_ATTR_MSG]));

		if (n >= extack_len)
			n = extack_len - 1;
		memcpy(extack, nl_attr_data(tb[NLMSGERR_ATTR_MSG]), n);
		extack[n] = '\0';
	}
	if (!nl_attr_get_u32(tb[NLMSGERR_ATTR_OFFS], &val))
		nl->bad_offs = val;
	if (!nl_attr_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE], &val))
		nl->miss_type = val;
}

/*
 * nl_parse_error - an NLMSG_ERROR answer: returns its error (0 for an ACK)
 * after reading the extended ACK attributes, or -EPROTO if truncated.
 */
static int nl_parse_error(struct nl_ctx *nl, const struct nlmsghdr *nlh,
			  char *extack, size_t extack_len)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	size_t plen = nlh->nlmsg_len - NLMSG_HDRLEN;
	size_t off = sizeof(*e);

	if (plen < sizeof(*e))
		return -EPROTO;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		/* Without NLM_F_CAPPED the whole request is echoed first. */
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
		    e->msg.nlmsg_len > sizeof(e->msg))
			off += e->msg.nlmsg_len - sizeof(e->msg);
		off = NLMSG_ALIGN(off);
		if (off < plen)
			nl_parse_ext_tlvs(nl, (const char *)e + off, plen - off,
					  extack, extack_len);
	}
	return e->error;
}

/*
 * nl_parse_done - the NLMSG_DONE that ends a dump: returns the error the
 * dump ended with (0 normally), reading extended ACK attributes if any.
 */
static int nl_parse_done(struct nl_ctx *nl, const struct nlmsghdr *nlh,
			 char *extack, size_t extack_len)
{
	size_t plen = nlh->nlmsg_len - NLMSG_HDRLEN;
	size_t off = NLMSG_ALIGN(sizeof(int));
	int err;

	if (plen < sizeof(int))
		return 0;
	memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && off < plen)
		nl_parse_ext_tlvs(nl, (const char *)NLMSG_DATA(nlh) + off,
				  plen - off, extack, extack_len);
	return err;
}

/*
 * nl_recv - receive one datagram from the kernel into nl->rbuf.  Returns
 * its length, -ETIMEDOUT after NL_TIMEOUT_SEC without an answer, -EMSGSIZE
 * if it did not fit, or another negative errno.
 */
static ssize_t nl_recv(struct nl_ctx *nl)
{
	struct sockaddr_nl sa;
	struct iovec iov = {
		.iov_base = nl->rbuf,
		.iov_len = NL_RECV_SIZE,
	};
	struct msghdr msg = {
		.msg_name = &sa,
		.msg_namelen = sizeof(sa),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	ssize_t n;

	for (;;) {
		msg.msg_namelen = sizeof(sa);
		n = recvmsg(nl->fd, &msg, 0);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -ETIMEDOUT;
		return -errno;
	}
	if (msg.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	if (sa.nl_pid != 0)	/* not from the kernel */
		return 0;
	return n;
}

/*
 * nl_msg_ok - true if a whole netlink message starts at @off in the @len
 * bytes received at @buf.
 */
static bool nl_msg_ok(const void *buf, size_t off, size_t len)
{
	const struct nlmsghdr *nlh;

	if (off >= len || len - off < sizeof(*nlh))
		return false;
	nlh = (const struct nlmsghdr *)((const char *)buf + off);
	return nlh->nlmsg_len >= sizeof(*nlh) && nlh->nlmsg_len <= len - off;
}

/**
 * nl_request - send a request and read the whole answer
 * @nl: the socket
 * @m: the request; NLM_F_ACK is added unless it is a dump
 * @cb: called for each message of the answer other than NLMSG_ERROR,
 *	NLMSG_DONE and NLMSG_NOOP; may be NULL
 * @arg: passed to @cb
 * @extack: where the extack message goes (cleared first); may be NULL
 * @extack_len: size of @extack
 *
 * A request without NLM_F_DUMP ends at the kernel's NLMSG_ERROR; a dump
 * ends at NLMSG_DONE (or an NLMSG_ERROR).  nl->miss_type and nl->bad_offs
 * are updated from the extended ACK.
 *
 * Return: the kernel's error (0 on success), else @cb's error, else a
 * local error (-ETIMEDOUT, -EMSGSIZE, ...).
 */
int nl_request(struct nl_ctx *nl, struct nl_msg *m, nl_reply_cb cb, void *arg,
	       char *extack, size_t extack_len)
{
	struct nlmsghdr *req = (struct nlmsghdr *)m->buf;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int cb_err = 0;
	bool dump;
	ssize_t n;

	if (extack && extack_len)
		extack[0] = '\0';
	nl->miss_type = -1;
	nl->bad_offs = -1;
	if (nl->fd < 0)
		return -EBADF;
	if (m->err)
		return m->err;

	dump = (req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	if (!dump)
		req->nlmsg_flags |= NLM_F_ACK;
	req->nlmsg_len = m->len;
	req->nlmsg_seq = ++nl->seq;
	req->nlmsg_pid = nl->portid;

	do {
		n = sendto(nl->fd, m->buf, m->len, 0,
			   (struct sockaddr *)&kernel, sizeof(kernel));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != m->len)
		return -EIO;

	for (;;) {
		const struct nlmsghdr *nlh;
		size_t off;

		n = nl_recv(nl);
		if (n < 0)
			return n;
		for (off = 0; nl_msg_ok(nl->rbuf, off, n);
		     off += NLMSG_ALIGN(nlh->nlmsg_len)) {
			int err;

			nlh = (const struct nlmsghdr *)((char *)nl->rbuf + off);

			/* Skip leftovers of an earlier, abandoned request. */
			if (nlh->nlmsg_seq != req->nlmsg_seq)
				continue;
			switch (nlh->nlmsg_type) {
			case NLMSG_NOOP:
				continue;
			case NLMSG_ERROR:
				err = nl_parse_error(nl, nlh, extack,
						     extack_len);
				return err ? err : cb_err;
			case NLMSG_DONE:
				err = nl_parse_done(nl, nlh, extack,
						    extack_len);
				return err ? err : cb_err;
			case NLMSG_OVERRUN:
				return -EOVERFLOW;
			default:
				if (cb && !cb_err)
					cb_err = cb(nlh, arg);
				break;
			}
		}
	}
}

/* Answer of CTRL_CMD_GETFAMILY: the family id and version. */
struct genl_family_reply {
	bool found;
	__u16 id;
	__u32 version;
};

/* genl_family_cb - read CTRL_ATTR_FAMILY_ID and CTRL_ATTR_VERSION. */
static int genl_family_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct genl_family_reply *r = arg;
	const void *attrs;
	size_t len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, CTRL_ATTR_MAX, attrs, len);
	if (nl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID], &r->id))
		return -EPROTO;
	if (nl_attr_get_u32(tb[CTRL_ATTR_VERSION], &r->version))
		r->version = 1;
	r->found = true;
	return 0;
}

/* genl_lookup - CTRL_CMD_GETFAMILY for @name: id and version. */
static int genl_lookup(struct nl_ctx *nl, const char *name, __u16 *id,
		       __u8 *version)
{
	struct genl_family_reply r = { 0 };
	struct nl_msg *m;
	int err;

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init(m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	nl_put_str(m, CTRL_ATTR_FAMILY_NAME, name);
	err = nl_request(nl, m, genl_family_cb, &r, NULL, 0);
	free(m);
	if (err)
		return err;
	if (!r.found)
		return -EPROTO;
	*id = r.id;
	if (version)
		*version = r.version;
	return 0;
}

/**
 * genl_resolve_family - id of a generic netlink family
 * @nl: an open socket
 * @name: family name
 * @id_out: where the id goes
 *
 * Asks the "nlctrl" family (CTRL_CMD_GETFAMILY).
 *
 * Return: 0, -ENOENT if the kernel has no such family, or another
 * negative errno.
 */
int genl_resolve_family(struct nl_ctx *nl, const char *name, __u16 *id_out)
{
	return genl_lookup(nl, name, id_out, NULL);
}

/* Answer of CTRL_CMD_GETFAMILY, looking for one multicast group. */
struct genl_group_reply {
	const char *name;
	bool found;
	__u32 id;
};

/* genl_group_cb - find r->name in CTRL_ATTR_MCAST_GROUPS. */
static int genl_group_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct genl_group_reply *r = arg;
	const void *attrs, *groups;
	const struct nlattr *grp;
	size_t len, groups_len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, CTRL_ATTR_MAX, attrs, len);
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return 0;
	groups = nl_attr_data(tb[CTRL_ATTR_MCAST_GROUPS]);
	groups_len = nl_attr_len(tb[CTRL_ATTR_MCAST_GROUPS]);
	for (grp = groups; nl_attr_in(grp, groups, groups_len);
	     grp = nl_attr_next(grp)) {
		const struct nlattr *gb[CTRL_ATTR_MCAST_GRP_MAX + 1];
		const char *name;

		nl_attr_parse(gb, CTRL_ATTR_MCAST_GRP_MAX, nl_attr_data(grp),
			      nl_attr_len(grp));
		if (!gb[CTRL_ATTR_MCAST_GRP_NAME])
			continue;
		name = nl_attr_data(gb[CTRL_ATTR_MCAST_GRP_NAME]);
		if (strncmp(name, r->name,
			    nl_attr_len(gb[CTRL_ATTR_MCAST_GRP_NAME])))
			continue;
		if (nl_attr_get_u32(gb[CTRL_ATTR_MCAST_GRP_ID], &r->id))
			return -EPROTO;
		r->found = true;
	}
	return 0;
}

/**
 * nl_join_group - join a multicast group of a generic netlink family
 * @nl: an open socket
 * @family: the family's name
 * @group: the group's name
 *
 * Return: 0, -ENOENT when the family has no such group, or another
 * negative errno.
 */
int nl_join_group(struct nl_ctx *nl, const char *family, const char *group)
{
	struct genl_group_reply r = { .name = group };
	struct nl_msg *m;
	int err;

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init(m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	nl_put_str(m, CTRL_ATTR_FAMILY_NAME, family);
	err = nl_request(nl, m, genl_group_cb, &r, NULL, 0);
	free(m);
	if (err)
		return err;
	if (!r.found)
		return -ENOENT;
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &r.id,
		       sizeof(r.id)))
		return -errno;
	return 0;
}

/**
 * nl_wait_ntf - read notifications until one is the awaited one
 * @nl: a socket that joined a group
 * @cb: called for each notification; non-zero ends the wait
 * @arg: passed to @cb
 * @timeout_ms: how long to wait in all
 *
 * Return: what @cb returned, or -ETIMEDOUT.
 */
int nl_wait_ntf(struct nl_ctx *nl, nl_reply_cb cb, void *arg, int timeout_ms)
{
	unsigned long long end = devmem_now_ns() +
				 (unsigned long long)timeout_ms * 1000000ULL;

	while (devmem_now_ns() < end) {
		int left = (end - devmem_now_ns()) / 1000000ULL + 1;
		struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };
		ssize_t n;
		size_t off;

		if (poll(&pfd, 1, left) <= 0)
			continue;
		n = nl_recv(nl);
		if (n < 0 && n != -ETIMEDOUT)
			return n;
		for (off = 0; n > 0 && nl_msg_ok(nl->rbuf, off, n);
		     off += NLMSG_ALIGN(((const struct nlmsghdr *)
					 ((char *)nl->rbuf + off))->nlmsg_len)) {
			const struct nlmsghdr *nlh =
				(const void *)((char *)nl->rbuf + off);
			int ret;

			if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
				continue;
			ret = cb(nlh, arg);
			if (ret)
				return ret;
		}
	}
	return -ETIMEDOUT;
}

/**
 * nl_open - open a generic netlink socket
 * @nl: the context to fill
 * @family: family to resolve into nl->family_id / nl->version, or NULL
 *
 * The socket gets extended and capped ACKs and a receive timeout of
 * NL_TIMEOUT_SEC.  On failure nothing is left open and @nl is safe to pass
 * to nl_close().
 *
 * Return: 0, -ENOENT if the kernel lacks @family, or another negative
 * errno.
 */
int nl_open(struct nl_ctx *nl, const char *family)
{
	return nl_open_portid(nl, family, 0);
}

/**
 * nl_open_portid - nl_open() with a port id of the caller's choice
 * @nl: the context to fill
 * @family: as for nl_open()
 * @portid: the port id to bind, 0 for one the kernel picks
 *
 * Return: as nl_open(); -EADDRINUSE while another socket holds @portid.
 */
int nl_open_portid(struct nl_ctx *nl, const char *family, __u32 portid)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_pid = portid };
	struct timeval tv = { .tv_sec = NL_TIMEOUT_SEC };
	socklen_t salen = sizeof(sa);
	int one = 1;
	int err;

	memset(nl, 0, sizeof(*nl));
	nl->fd = -1;
	nl->miss_type = -1;
	nl->bad_offs = -1;
	nl->version = 1;

	nl->rbuf = malloc(NL_RECV_SIZE);
	if (!nl->rbuf)
		return -ENOMEM;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		goto err_errno;
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one,
		       sizeof(one)) ||
	    setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one,
		       sizeof(one)) ||
	    setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		goto err_errno;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(nl->fd, (struct sockaddr *)&sa, &salen))
		goto err_errno;
	nl->portid = sa.nl_pid;
	nl->seq = time(NULL);

	if (family) {
		err = genl_lookup(nl, family, &nl->family_id, &nl->version);
		if (err)
			goto err_close;
	}
	return 0;

err_errno:
	err = -errno;
err_close:
	nl_close(nl);
	return err;
}

/**
 * nl_close - close a generic netlink socket
 * @nl: the context
 *
 * Closing the socket drops every devmem binding made through it.  The
 * receive buffer is freed.  Safe to call twice.
 */
void nl_close(struct nl_ctx *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
	free(nl->rbuf);
	nl->rbuf = NULL;
	nl->family_id = 0;
}

/* ---------------------------------------------------------------------- */
/* netdev family: devmem bindings and queues                                */
/* ---------------------------------------------------------------------- */

/**
 * devmem_nl_open - open a socket for the "netdev" family
 * @nl: the context to fill
 *
 * Return: 0 or a negative errno, as nl_open().
 */
int devmem_nl_open(struct nl_ctx *nl)
{
	return nl_open(nl, NETDEV_FAMILY_NAME);
}

/**
 * devmem_nl_open_portid - devmem_nl_open() bound to port id @portid
 * @nl: the context to fill
 * @portid: the port id
 *
 * Return: as nl_open_portid().
 */
int devmem_nl_open_portid(struct nl_ctx *nl, __u32 portid)
{
	return nl_open_portid(nl, NETDEV_FAMILY_NAME, portid);
}

/**
 * devmem_msg_put_queue - append one NETDEV_A_DMABUF_QUEUES nest
 * @m: a bind-rx request
 * @id: NETDEV_A_QUEUE_ID, left out if negative
 * @type: NETDEV_A_QUEUE_TYPE, left out if negative
 *
 * Leaving attributes out builds malformed requests on purpose.
 *
 * Return: 0 or a negative errno, as nl_nest_end().
 */
int devmem_msg_put_queue(struct nl_msg *m, long id, long type)
{
	struct nlattr *nest;

	nest = nl_nest_start(m, NETDEV_A_DMABUF_QUEUES);
	if (id >= 0)
		nl_put_u32(m, NETDEV_A_QUEUE_ID, id);
	if (type >= 0)
		nl_put_u32(m, NETDEV_A_QUEUE_TYPE, type);
	return nl_nest_end(m, nest);
}

/* Answer of a bind request: the binding id. */
struct devmem_bind_reply {
	bool found;
	__u32 id;
};

/* devmem_bind_cb - read NETDEV_A_DMABUF_ID from a bind answer. */
static int devmem_bind_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[NETDEV_A_DMABUF_ID + 1];
	struct devmem_bind_reply *r = arg;
	const void *attrs;
	size_t len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, NETDEV_A_DMABUF_ID, attrs, len);
	if (nl_attr_get_u32(tb[NETDEV_A_DMABUF_ID], &r->id))
		return -EPROTO;
	r->found = true;
	return 0;
}

/**
 * devmem_bind_request - send a bind-rx or bind-tx request built by the caller
 * @nl: a "netdev" socket; the binding lasts as long as it
 * @m: the request (nl_msg_init_family() and attributes, possibly
 *	malformed on purpose)
 * @id_out: where the binding id goes, may be NULL
 * @extack: where the extack message goes, may be NULL
 * @extack_len: size of @extack
 *
 * Return: 0, the kernel's negative errno (with its extack message in
 * @extack), or -EPROTO if the kernel said yes without an id.
 */
int devmem_bind_request(struct nl_ctx *nl, struct nl_msg *m, __u32 *id_out,
			char *extack, size_t extack_len)
{
	struct devmem_bind_reply r = { 0 };
	int err;

	err = nl_request(nl, m, devmem_bind_cb, &r, extack, extack_len);
	if (err)
		return err;
	if (!r.found)
		return -EPROTO;
	if (id_out)
		*id_out = r.id;
	return 0;
}

/**
 * devmem_bind_rx - bind a dma-buf to RX queues (NETDEV_CMD_BIND_RX)
 * @nl: a "netdev" socket; the binding lasts as long as it
 * @ifindex: the device
 * @dmabuf_fd: the dma-buf
 * @queues: RX queue ids
 * @nqueues: number of @queues; 0 sends an empty queue list
 * @id_out: where the binding id goes, may be NULL
 * @extack: where the extack message goes, may be NULL
 * @extack_len: size of @extack
 *
 * Return: 0 or a negative errno.
 */
int devmem_bind_rx(struct nl_ctx *nl, int ifindex, int dmabuf_fd,
		   const unsigned int *queues, int nqueues, __u32 *id_out,
		   char *extack, size_t extack_len)
{
	struct nl_msg *m;
	int err, i;

	if (nqueues < 0 || (nqueues && !queues))
		return -EINVAL;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init_family(m, nl, NETDEV_CMD_BIND_RX, 0);
	nl_put_u32(m, NETDEV_A_DMABUF_IFINDEX, ifindex);
	nl_put_u32(m, NETDEV_A_DMABUF_FD, dmabuf_fd);
	for (i = 0; i < nqueues; i++)
		devmem_msg_put_queue(m, queues[i], NETDEV_QUEUE_TYPE_RX);
	err = devmem_bind_request(nl, m, id_out, extack, extack_len);
	free(m);
	return err;
}

/**
 * devmem_bind_tx - bind a dma-buf for transmit (NETDEV_CMD_BIND_TX)
 * @nl: a "netdev" socket; the binding lasts as long as it
 * @ifindex: the device
 * @dmabuf_fd: the dma-buf
 * @id_out: where the binding id goes, may be NULL
 * @extack: where the extack message goes, may be NULL
 * @extack_len: size of @extack
 *
 * Return: 0 or a negative errno.
 */
int devmem_bind_tx(struct nl_ctx *nl, int ifindex, int dmabuf_fd,
		   __u32 *id_out, char *extack, size_t extack_len)
{
	struct nl_msg *m;
	int err;

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init_family(m, nl, NETDEV_CMD_BIND_TX, 0);
	nl_put_u32(m, NETDEV_A_DMABUF_IFINDEX, ifindex);
	nl_put_u32(m, NETDEV_A_DMABUF_FD, dmabuf_fd);
	err = devmem_bind_request(nl, m, id_out, extack, extack_len);
	free(m);
	return err;
}

/*
 * devmem_queue_parse - fill @q from a queue-get answer.  ID, IFINDEX and
 * TYPE are mandatory (-EPROTO without them); NAPI_ID and DMABUF optional.
 */
static int devmem_queue_parse(const struct nlmsghdr *nlh,
			      struct devmem_queue_info *q)
{
	const struct nlattr *tb[NETDEV_A_QUEUE_DMABUF + 1];
	const void *attrs;
	size_t len;

	memset(q, 0, sizeof(*q));
	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, NETDEV_A_QUEUE_DMABUF, attrs, len);
	if (nl_attr_get_u32(tb[NETDEV_A_QUEUE_ID], &q->id) ||
	    nl_attr_get_u32(tb[NETDEV_A_QUEUE_IFINDEX], &q->ifindex) ||
	    nl_attr_get_u32(tb[NETDEV_A_QUEUE_TYPE], &q->type))
		return -EPROTO;
	q->has_napi_id = !nl_attr_get_u32(tb[NETDEV_A_QUEUE_NAPI_ID],
					  &q->napi_id);
	q->has_dmabuf = !nl_attr_get_u32(tb[NETDEV_A_QUEUE_DMABUF],
					 &q->dmabuf);
	return 0;
}

/* State of devmem_queue_get(): the one answer. */
struct devmem_queue_get_state {
	struct devmem_queue_info *out;
	bool found;
};

/* devmem_queue_get_cb - parse the answer of a queue-get do request. */
static int devmem_queue_get_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct devmem_queue_get_state *s = arg;
	int err;

	err = devmem_queue_parse(nlh, s->out);
	if (!err)
		s->found = true;
	return err;
}

/**
 * devmem_queue_get - NETDEV_CMD_QUEUE_GET (do) for one queue
 * @nl: a "netdev" socket
 * @ifindex: the device
 * @type: NETDEV_QUEUE_TYPE_RX or NETDEV_QUEUE_TYPE_TX
 * @id: queue id
 * @out: the answer
 *
 * Return: 0 with *@out filled, or a negative errno.
 */
int devmem_queue_get(struct nl_ctx *nl, int ifindex, int type, int id,
		     struct devmem_queue_info *out)
{
	struct devmem_queue_get_state s = { .out = out };
	struct nl_msg *m;
	int err;

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init_family(m, nl, NETDEV_CMD_QUEUE_GET, 0);
	nl_put_u32(m, NETDEV_A_QUEUE_IFINDEX, ifindex);
	nl_put_u32(m, NETDEV_A_QUEUE_TYPE, type);
	nl_put_u32(m, NETDEV_A_QUEUE_ID, id);
	err = nl_request(nl, m, devmem_queue_get_cb, &s, NULL, 0);
	free(m);
	if (err)
		return err;
	return s.found ? 0 : -EPROTO;
}

/* State of devmem_queue_dump(): the user's callback and whether it quit. */
struct devmem_queue_dump_state {
	devmem_queue_cb cb;
	void *arg;
	bool stopped;
};

/* devmem_queue_dump_cb - parse one dumped queue and hand it on. */
static int devmem_queue_dump_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct devmem_queue_dump_state *s = arg;
	struct devmem_queue_info q;
	int ret;

	if (s->stopped)
		return 0;
	ret = devmem_queue_parse(nlh, &q);
	if (ret)
		return ret;
	ret = s->cb(&q, s->arg);
	if (ret > 0) {
		s->stopped = true;
		ret = 0;
	}
	return ret;
}

/**
 * devmem_queue_dump - NETDEV_CMD_QUEUE_GET (dump)
 * @nl: a "netdev" socket
 * @ifindex: the device, or every device if <= 0
 * @cb: called for each queue (see devmem_queue_cb)
 * @arg: passed to @cb
 *
 * Return: 0, @cb's negative return, or the kernel's negative errno.
 */
int devmem_queue_dump(struct nl_ctx *nl, int ifindex, devmem_queue_cb cb,
		      void *arg)
{
	struct devmem_queue_dump_state s = { .cb = cb, .arg = arg };
	struct nl_msg *m;
	int err;

	if (!cb)
		return -EINVAL;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init_family(m, nl, NETDEV_CMD_QUEUE_GET, NLM_F_DUMP);
	if (ifindex > 0)
		nl_put_u32(m, NETDEV_A_QUEUE_IFINDEX, ifindex);
	err = nl_request(nl, m, devmem_queue_dump_cb, &s, NULL, 0);
	free(m);
	return err;
}

/**
 * devmem_pool_parse - fill @p from a page-pool-get answer or notification
 * @nlh: the message
 * @p: where the pool goes
 *
 * Return: 0, or -EPROTO without a pool id.
 */
int devmem_pool_parse(const struct nlmsghdr *nlh, struct devmem_pool_info *p)
{
	const struct nlattr *tb[NETDEV_A_PAGE_POOL_MAX + 1];
	const struct genlmsghdr *gh = NLMSG_DATA(nlh);
	const void *attrs;
	size_t len;

	memset(p, 0, sizeof(*p));
	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	p->cmd = gh->cmd;
	nl_attr_parse(tb, NETDEV_A_PAGE_POOL_MAX, attrs, len);
	if (nl_attr_get_uint(tb[NETDEV_A_PAGE_POOL_ID], &p->id))
		return -EPROTO;
	p->has_ifindex = !nl_attr_get_u32(tb[NETDEV_A_PAGE_POOL_IFINDEX],
					  &p->ifindex);
	nl_attr_get_uint(tb[NETDEV_A_PAGE_POOL_NAPI_ID], &p->napi_id);
	nl_attr_get_uint(tb[NETDEV_A_PAGE_POOL_INFLIGHT], &p->inflight);
	nl_attr_get_uint(tb[NETDEV_A_PAGE_POOL_INFLIGHT_MEM],
			 &p->inflight_mem);
	p->detached = !nl_attr_get_uint(tb[NETDEV_A_PAGE_POOL_DETACH_TIME],
					&p->detach_time);
	nl_attr_get_u32(tb[NETDEV_A_PAGE_POOL_DMABUF], &p->dmabuf);
	return 0;
}

/* State of a page-pool-get request: the user's callback or the answer. */
struct devmem_pool_req {
	devmem_pool_cb cb;
	void *arg;
	bool stopped;
	struct devmem_pool_info *out;
	bool found;
};

/* devmem_pool_req_cb - parse one pool; keep it or hand it on. */
static int devmem_pool_req_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct devmem_pool_req *r = arg;
	struct devmem_pool_info p;
	int ret;

	if (r->stopped)
		return 0;
	ret = devmem_pool_parse(nlh, &p);
	if (ret)
		return ret;
	if (r->out) {
		*r->out = p;
		r->found = true;
		return 0;
	}
	ret = r->cb(&p, r->arg);
	if (ret > 0)
		r->stopped = true;
	return ret < 0 ? ret : 0;
}

/**
 * devmem_page_pool_get - NETDEV_CMD_PAGE_POOL_GET (do) for one pool
 * @nl: a "netdev" socket
 * @id: the pool's id
 * @out: the answer
 *
 * Return: 0 with *@out filled, or a negative errno.
 */
int devmem_page_pool_get(struct nl_ctx *nl, __u64 id,
			 struct devmem_pool_info *out)
{
	struct devmem_pool_req r = { .out = out };
	struct nl_msg *m;
	int err;

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init_family(m, nl, NETDEV_CMD_PAGE_POOL_GET, 0);
	nl_put_u32(m, NETDEV_A_PAGE_POOL_ID, id);
	err = nl_request(nl, m, devmem_pool_req_cb, &r, NULL, 0);
	free(m);
	if (err)
		return err;
	return r.found ? 0 : -EPROTO;
}

/**
 * devmem_page_pool_dump - NETDEV_CMD_PAGE_POOL_GET (dump)
 * @nl: a "netdev" socket
 * @cb: called once per pool
 * @arg: passed to @cb
 *
 * Return: 0, @cb's negative errno, or the request's.
 */
int devmem_page_pool_dump(struct nl_ctx *nl, devmem_pool_cb cb, void *arg)
{
	struct devmem_pool_req r = { .cb = cb, .arg = arg };
	struct nl_msg *m;
	int err;

	if (!cb)
		return -EINVAL;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	nl_msg_init_family(m, nl, NETDEV_CMD_PAGE_POOL_GET, NLM_F_DUMP);
	err = nl_request(nl, m, devmem_pool_req_cb, &r, NULL, 0);
	free(m);
	return err;
}

/* ---------------------------------------------------------------------- */
/* ethtool netlink: tcp-data-split                                          */
/* ---------------------------------------------------------------------- */

/**
 * devmem_ifindex - ifindex of an interface
 * @ifname: interface name
 *
 * Return: the ifindex, or the negative errno of a failed if_nametoindex()
 * (-ENODEV if it left errno alone).
 */
int devmem_ifindex(const char *ifname)
{
	unsigned int idx;

	errno = 0;
	idx = if_nametoindex(ifname);
	if (!idx)
		return errno ? -errno : -ENODEV;
	return idx;
}

/* ethtool_rings_msg - start an ethtool rings request for @ifindex. */
static void ethtool_rings_msg(struct nl_msg *m, const struct nl_ctx *nl,
			      __u8 cmd, int ifindex)
{
	struct nlattr *hdr;

	nl_msg_init_family(m, nl, cmd, 0);
	hdr = nl_nest_start(m, ETHTOOL_A_RINGS_HEADER);
	nl_put_u32(m, ETHTOOL_A_HEADER_DEV_INDEX, ifindex);
	nl_nest_end(m, hdr);
}

/* ethtool_rings_request - one ETHTOOL_MSG_RINGS_@cmd through an ethtool
 * socket of its own: with TCP_DATA_SPLIT @tds and HDS_THRESH @thresh
 * unless they are negative, its reply to @cb with @arg.
 * Return: 0 or a negative errno, with extack.
 */
static int ethtool_rings_request(int ifindex, __u8 cmd, int tds,
				 long long thresh, nl_reply_cb cb, void *arg,
				 char *extack, size_t extack_len)
{
	struct nl_ctx nl;
	struct nl_msg *m;
	int err;

	if (extack && extack_len)
		extack[0] = '\0';
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = nl_open(&nl, ETHTOOL_GENL_NAME);
	if (err)
		goto out_free;
	ethtool_rings_msg(m, &nl, cmd, ifindex);
	if (tds >= 0)
		nl_put_u8(m, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, tds);
	if (thresh >= 0)
		nl_put_u32(m, ETHTOOL_A_RINGS_HDS_THRESH, thresh);
	err = nl_request(&nl, m, cb, arg, extack, extack_len);
	nl_close(&nl);
out_free:
	free(m);
	return err;
}

static int ethtool_rings_set(int ifindex, int tds, long long thresh,
			     char *extack, size_t extack_len)
{
	return ethtool_rings_request(ifindex, ETHTOOL_MSG_RINGS_SET, tds, thresh,
				     NULL, NULL, extack, extack_len);
}

static int ethtool_rings_get(int ifindex, nl_reply_cb cb, void *arg)
{
	return ethtool_rings_request(ifindex, ETHTOOL_MSG_RINGS_GET, -1, -1,
				     cb, arg, NULL, 0);
}

/**
 * ethtool_set_tcp_data_split - switch header split (tcp-data-split)
 * @ifindex: the device
 * @on: ETHTOOL_TCP_DATA_SPLIT_ENABLED if true, else _DISABLED
 * @extack: where the extack message goes, may be NULL
 * @extack_len: size of @extack
 *
 * ETHTOOL_MSG_RINGS_SET, like "ethtool -G IF tcp-data-split on|off",
 * through an ethtool socket of its own.
 *
 * Return: 0 or a negative errno.
 */
int ethtool_set_tcp_data_split(int ifindex, bool on, char *extack,
			       size_t extack_len)
{
	return ethtool_rings_set(ifindex,
				 on ? ETHTOOL_TCP_DATA_SPLIT_ENABLED :
				      ETHTOOL_TCP_DATA_SPLIT_DISABLED,
				 -1, extack, extack_len);
}

/* ethtool_tds_cb - read ETHTOOL_A_RINGS_TCP_DATA_SPLIT (absent: UNKNOWN). */
static int ethtool_tds_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[ETHTOOL_A_RINGS_TCP_DATA_SPLIT + 1];
	int *val = arg;
	const void *attrs;
	size_t len;
	__u8 v;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, attrs, len);
	if (nl_attr_get_u8(tb[ETHTOOL_A_RINGS_TCP_DATA_SPLIT], &v))
		v = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
	*val = v;
	return 0;
}

/**
 * ethtool_get_tcp_data_split - read header split (tcp-data-split)
 * @ifindex: the device
 *
 * ETHTOOL_MSG_RINGS_GET, through an ethtool socket of its own.
 *
 * Return: ETHTOOL_TCP_DATA_SPLIT_UNKNOWN (0, also when the driver does not
 * report it), _DISABLED (1) or _ENABLED (2), or a negative errno.
 */
int ethtool_get_tcp_data_split(int ifindex)
{
	int val = -EPROTO;
	int err;

	err = ethtool_rings_get(ifindex, ethtool_tds_cb, &val);
	return err ? err : val;
}

/**
 * ethtool_set_hds_thresh - set hds-thresh
 * @ifindex: the device
 * @thresh: frames of up to this many bytes may stay whole in host memory;
 *	0 splits every frame at its payload (what device memory needs)
 * @extack: where the extack message goes, may be NULL
 * @extack_len: size of @extack
 *
 * ETHTOOL_MSG_RINGS_SET with ETHTOOL_A_RINGS_HDS_THRESH, like
 * "ethtool -G IF hds-thresh N" of newer ethtools.
 *
 * Return: 0 or a negative errno.
 */
int ethtool_set_hds_thresh(int ifindex, __u32 thresh, char *extack,
			   size_t extack_len)
{
	return ethtool_rings_set(ifindex, -1, thresh, extack, extack_len);
}

/**
 * ethtool_rings_for_devmem - ready the RX rings of a device for bind-rx
 * @ifindex: the device
 * @extack: where the extack message goes, may be NULL
 * @extack_len: size of @extack
 *
 * tcp-data-split on and hds-thresh 0 in one ETHTOOL_MSG_RINGS_SET, as
 * mainline's ncdevmem asks before it binds: headers in host memory, every
 * payload byte in the buffers a memory provider gives.
 *
 * Return: 0 or a negative errno.
 */
int ethtool_rings_for_devmem(int ifindex, char *extack, size_t extack_len)
{
	return ethtool_rings_set(ifindex, ETHTOOL_TCP_DATA_SPLIT_ENABLED, 0,
				 extack, extack_len);
}

/* ethtool_hds_cb - read HDS_THRESH and HDS_THRESH_MAX (absent: -ENOENT). */
static int ethtool_hds_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[ETHTOOL_A_RINGS_HDS_THRESH_MAX + 1];
	__u32 *val = arg;
	const void *attrs;
	size_t len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, ETHTOOL_A_RINGS_HDS_THRESH_MAX, attrs, len);
	if (nl_attr_get_u32(tb[ETHTOOL_A_RINGS_HDS_THRESH], &val[0]) ||
	    nl_attr_get_u32(tb[ETHTOOL_A_RINGS_HDS_THRESH_MAX], &val[1]))
		return -ENOENT;
	return 0;
}

/**
 * ethtool_get_hds_thresh - read hds-thresh and hds-thresh-max
 * @ifindex: the device
 * @thresh: where hds-thresh goes
 * @thresh_max: where hds-thresh-max goes, may be NULL
 *
 * Return: 0, -ENOENT when the device does not report them, or another
 * negative errno.
 */
int ethtool_get_hds_thresh(int ifindex, __u32 *thresh, __u32 *thresh_max)
{
	__u32 val[2] = {};
	int err;

	err = ethtool_rings_get(ifindex, ethtool_hds_cb, val);
	if (err)
		return err;
	*thresh = val[0];
	if (thresh_max)
		*thresh_max = val[1];
	return 0;
}

/* ---------------------------------------------------------------------- */
/* udmabuf                                                                  */
/* ---------------------------------------------------------------------- */

/**
 * udmabuf_create - a dma-buf over a sealed memfd
 * @size: bytes, a multiple of the page size
 * @memfd_out: where the memfd goes (the caller closes it); if NULL it is
 *	closed here, the dma-buf keeps its pages either way
 *
 * The memfd is sealed with F_SEAL_SHRINK and turned into a dma-buf by
 * /dev/udmabuf.
 *
 * Return: the dma-buf fd (close-on-exec), -ENOENT without /dev/udmabuf,
 * or another negative errno.
 */
int udmabuf_create(size_t size, int *memfd_out)
{
	struct udmabuf_create create = { 0 };
	int memfd, devfd, buf, err;

	memfd = memfd_create("devmem-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		err = -errno;
		goto err_memfd;
	}
	devfd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (devfd < 0) {
		err = -errno;
		goto err_memfd;
	}
	create.memfd = memfd;
	create.flags = UDMABUF_FLAGS_CLOEXEC;
	create.offset = 0;
	create.size = size;
	buf = ioctl(devfd, UDMABUF_CREATE, &create);
	err = -errno;
	close(devfd);
	if (buf < 0)
		goto err_memfd;
	if (memfd_out)
		*memfd_out = memfd;
	else
		close(memfd);
	return buf;

err_memfd:
	close(memfd);
	return err;
}

/**
 * udmabuf_map - map a dma-buf shared and read-write
 * @dmabuf_fd: the dma-buf
 * @size: bytes to map
 * @addr_out: where the address goes
 *
 * Bracket CPU access with dmabuf_sync().
 *
 * Return: 0 or a negative errno.
 */
int udmabuf_map(int dmabuf_fd, size_t size, void **addr_out)
{
	void *addr;

	addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    dmabuf_fd, 0);
	if (addr == MAP_FAILED)
		return -errno;
	*addr_out = addr;
	return 0;
}

/**
 * udmabuf_unmap - undo udmabuf_map()
 * @addr: the address udmabuf_map() gave
 * @size: the size it was given
 *
 * Return: 0 or a negative errno.
 */
int udmabuf_unmap(void *addr, size_t size)
{
	return munmap(addr, size) ? -errno : 0;
}

/**
 * dmabuf_sync - DMA_BUF_IOCTL_SYNC
 * @dmabuf_fd: the dma-buf
 * @flags: DMA_BUF_SYNC_START or _END combined with _READ, _WRITE or _RW
 *
 * Retried on EINTR and EAGAIN.
 *
 * Return: 0 or a negative errno.
 */
int dmabuf_sync(int dmabuf_fd, __u64 flags)
{
	struct dma_buf_sync sync = { .flags = flags };
	int ret;

	do {
		ret = ioctl(dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	return ret < 0 ? -errno : 0;
}

/**
 * devmem_find_driver_iface - first interface bound to a driver
 * @driver: driver name, e.g. "igb"
 * @name: where the interface name goes
 * @len: size of @name
 *
 * Looks at /sys/class/net/<if>/device/driver of the current namespace.
 *
 * Return: the ifindex, or a negative errno (-ENODEV if there is none).
 */
int devmem_find_driver_iface(const char *driver, char *name, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct dirent *de;
	int ifindex = -ENODEV;
	DIR *dir;
	ssize_t n;

	dir = opendir("/sys/class/net");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/device/driver",
			 de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strcmp(strrchr(target, '/') + 1, driver))
			continue;
		ifindex = devmem_ifindex(de->d_name);
		snprintf(name, len, "%.*s", (int)len - 1, de->d_name);
		break;
	}
	closedir(dir);
	return ifindex;
}

/* ---------------------------------------------------------------------- */
/* devmem sockets                                                           */
/* ---------------------------------------------------------------------- */

/**
 * devmem_sendmsg_cmsg - sendmsg() with one SCM_DEVMEM_DMABUF cmsg
 * @fd: a connected TCP socket, usually with SO_ZEROCOPY on
 * @data: payload of the cmsg: the binding id, or anything else to see the
 *	kernel refuse it
 * @len: bytes of @data, at most 8
 * @iov: the iovecs; their iov_base are byte offsets into the dma-buf
 * @niov: number of @iov
 * @flags: sendmsg() flags (MSG_ZEROCOPY for devmem TX)
 *
 * Return: the bytes sendmsg() queued, -EMSGSIZE if @len is too large, or
 * the negative errno of sendmsg() (errno is left as it set it).
 */
ssize_t devmem_sendmsg_cmsg(int fd, const void *data, size_t len,
			    const struct iovec *iov, int niov, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(__u64))];
		struct cmsghdr align;
	} ctrl;
	struct msghdr msg = {
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = niov,
		.msg_control = ctrl.buf,
		.msg_controllen = CMSG_SPACE(len),
	};
	struct cmsghdr *cm;
	ssize_t ret;

	if (len > sizeof(__u64))
		return -EMSGSIZE;
	memset(&ctrl, 0, sizeof(ctrl));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(cm), data, len);
	ret = sendmsg(fd, &msg, flags);
	return ret < 0 ? -errno : ret;
}

/**
 * devmem_sendmsg - send from a TX binding
 * @fd: a connected TCP socket, usually with SO_ZEROCOPY on
 * @binding_id: the id bind-tx gave
 * @iov: the iovecs; their iov_base are byte offsets into the dma-buf
 * @niov: number of @iov
 * @flags: sendmsg() flags (MSG_ZEROCOPY for devmem TX)
 *
 * Return: the bytes sendmsg() queued, or its negative errno (errno is
 * left as it set it).
 */
ssize_t devmem_sendmsg(int fd, __u32 binding_id, const struct iovec *iov,
		       int niov, int flags)
{
	return devmem_sendmsg_cmsg(fd, &binding_id, sizeof(binding_id), iov,
				   niov, flags);
}

/**
 * devmem_cmsg_get - read one cmsg of a recvmsg(MSG_SOCK_DEVMEM)
 * @cm: the cmsg
 * @dc: where its payload goes
 *
 * A devmem cmsg is at SOL_SOCKET, of type SCM_DEVMEM_LINEAR or
 * SCM_DEVMEM_DMABUF, and holds exactly one struct dmabuf_cmsg.
 *
 * Return: 0 with *@dc filled, or -EPROTO for any other cmsg.
 */
int devmem_cmsg_get(const struct cmsghdr *cm, struct dmabuf_cmsg *dc)
{
	if (cm->cmsg_level != SOL_SOCKET ||
	    (cm->cmsg_type != SCM_DEVMEM_LINEAR &&
	     cm->cmsg_type != SCM_DEVMEM_DMABUF) ||
	    cm->cmsg_len != CMSG_LEN(sizeof(*dc)))
		return -EPROTO;
	memcpy(dc, CMSG_DATA(cm), sizeof(*dc));
	return 0;
}

/**
 * devmem_tokens_pack - the ranges of one SO_DEVMEM_DONTNEED call
 * @tokens: tokens to give back, in order
 * @n: number of @tokens
 * @r: the ranges, room for @max_ranges
 * @max_ranges: most ranges one call may carry
 * @max_tokens: most tokens one call may free
 * @used: set to the number of leading @tokens that @r covers
 *
 * Consecutive token numbers merge into one range.  Packing stops before
 * the token that would need one range more than @max_ranges, or be one
 * token more than @max_tokens; the caller sends the call and packs the
 * rest (@tokens + *@used) for the next.
 *
 * Return: the number of ranges written to @r.
 */
int devmem_tokens_pack(const __u32 *tokens, size_t n, struct dmabuf_token *r,
		       int max_ranges, size_t max_tokens, size_t *used)
{
	size_t i;
	int nr = 0;

	for (i = 0; i < n && i < max_tokens; i++) {
		if (nr &&
		    tokens[i] == r[nr - 1].token_start + r[nr - 1].token_count) {
			r[nr - 1].token_count++;
			continue;
		}
		if (nr == max_ranges)
			break;
		r[nr].token_start = tokens[i];
		r[nr].token_count = 1;
		nr++;
	}
	*used = i;
	return nr;
}

/**
 * devmem_fill_pattern - write the test pattern
 * @p: where it goes
 * @len: bytes to write
 * @phase: value of the first byte, below @period
 * @period: the pattern repeats every @period bytes, at most 256
 *
 * Byte i gets (@phase + i) % @period.  In a test stream whose byte at
 * position pos is pos % @period, bytes from position pos on are written
 * with @phase = pos % @period.
 */
void devmem_fill_pattern(unsigned char *p, size_t len, unsigned int phase,
			 unsigned int period)
{
	unsigned int k = phase;
	size_t i;

	for (i = 0; i < len; i++) {
		p[i] = k & 0xff;
		if (++k == period)
			k = 0;
	}
}

/* ---------------------------------------------------------------------- */
/* Command line, clock                                                      */
/* ---------------------------------------------------------------------- */

/**
 * devmem_parse_size - parse a byte count
 * @s: decimal digits with an optional K, M or G suffix (powers of 1024)
 * @out: where the count goes
 *
 * Return: 0, or -EINVAL if @s is not such a count or it overflows.
 */
int devmem_parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (shift && end[1])
		return -EINVAL;
	if (v > (ULLONG_MAX >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/**
 * devmem_parse_addr - parse an IP address literal
 * @s: an IPv4 or IPv6 address, no port
 * @ss: where the address goes, with port 0
 *
 * A v4-mapped IPv6 address (::ffff:a.b.c.d) becomes the plain IPv4 one.
 *
 * Return: the family, AF_INET or AF_INET6, or -EINVAL.
 */
int devmem_parse_addr(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct in6_addr a6;
	struct in_addr a4;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_addr = a4;
		return AF_INET;
	}
	if (inet_pton(AF_INET6, s, &a6) != 1)
		return -EINVAL;
	if (IN6_IS_ADDR_V4MAPPED(&a6)) {
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, &a6.s6_addr[12], 4);
		return AF_INET;
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr = a6;
	return AF_INET6;
}

/**
 * devmem_set_port - set the port of an address
 * @ss: an AF_INET6 address, else taken as AF_INET
 * @port: the port, host byte order
 */
void devmem_set_port(struct sockaddr_storage *ss, unsigned int port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

/**
 * devmem_addr_len - length of an address
 * @ss: an AF_INET6 address, else taken as AF_INET
 *
 * Return: the size of struct sockaddr_in6 or of struct sockaddr_in, for
 * bind() and connect().
 */
socklen_t devmem_addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

/**
 * devmem_now_ns - the monotonic clock
 *
 * Return: CLOCK_MONOTONIC in nanoseconds.
 */
unsigned long long devmem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/**
 * devmem_time_scale - how much longer than usual waits may take here
 *
 * DEVMEM_TIME_SCALE (an integer, make check-kmsan sets it) stretches the
 * fixed windows of the tests for guests slower than the debug kernel's.
 *
 * Return: the factor, at least 1.
 */
unsigned int devmem_time_scale(void)
{
	const char *scale = getenv("DEVMEM_TIME_SCALE");

	if (!scale || atoi(scale) < 1)
		return 1;
	return atoi(scale);
}

/**
 * devmem_now_sec - the monotonic clock in seconds
 *
 * Return: CLOCK_MONOTONIC in seconds, with its nanoseconds.
 */
double devmem_now_sec(void)
{
	return devmem_now_ns() / 1e9;
}

/**
 * devmem_mbps - throughput
 * @bytes: bytes transferred
 * @secs: in that many seconds
 *
 * Return: megabits (10^6 bits) per second, 0 if @secs is not positive.
 */
double devmem_mbps(unsigned long long bytes, double secs)
{
	return secs > 0 ? bytes * 8 / 1e6 / secs : 0;
}

/* ---------------------------------------------------------------------- */
/* /proc, sysfs, commands                                                   */
/* ---------------------------------------------------------------------- */

/**
 * devmem_read_counters - read counters of a /proc/net/snmp style file
 * @path: e.g. "/proc/net/snmp" or "/proc/net/netstat"
 * @prefix: the group's line prefix with its space, e.g. "Tcp: " or
 *	"TcpExt: "
 * @keys: counter names, NULL-terminated
 * @vals: one value per key; those of keys not found are left alone
 *
 * Such a file holds pairs of lines: the counter names of a group, then
 * their values, both starting with the group's prefix.
 *
 * Return: the number of keys found, or a negative errno if @path cannot
 * be opened.
 */
int devmem_read_counters(const char *path, const char *prefix,
			 const char *const *keys, unsigned long long *vals)
{
	char names[4096], values[4096], *n, *v, *sn, *sv;
	size_t plen = strlen(prefix);
	int k, found = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(names, sizeof(names), f) &&
	       fgets(values, sizeof(values), f)) {
		if (strncmp(names, prefix, plen) ||
		    strncmp(values, prefix, plen))
			continue;
		n = strtok_r(names + plen, "\n ", &sn);
		v = strtok_r(values + plen, "\n ", &sv);
		while (n && v) {
			for (k = 0; keys[k]; k++) {
				if (strcmp(n, keys[k]))
					continue;
				vals[k] = strtoull(v, NULL, 10);
				found++;
			}
			n = strtok_r(NULL, "\n ", &sn);
			v = strtok_r(NULL, "\n ", &sv);
		}
	}
	fclose(f);
	return found;
}

/**
 * devmem_read_meminfo - read fields of /proc/meminfo
 * @keys: field names without the colon ("MemFree"), NULL-terminated
 * @kb: one value per key, in KiB; those of keys not found are left alone
 *
 * Return: the number of keys found, or a negative errno if /proc/meminfo
 * cannot be opened.
 */
int devmem_read_meminfo(const char *const *keys, unsigned long long *kb)
{
	unsigned long long v;
	char line[256], key[64];
	int k, found = 0;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %llu", key, &v) != 2)
			continue;
		for (k = 0; keys[k]; k++) {
			if (strcmp(key, keys[k]))
				continue;
			kb[k] = v;
			found++;
		}
	}
	fclose(f);
	return found;
}

/**
 * devmem_rx_queue_count - number of RX queues of an interface
 * @ifname: the interface, in the current namespace
 *
 * Counts the rx-N entries of /sys/class/net/@ifname/queues.
 *
 * Return: the count, or a negative errno.
 */
int devmem_rx_queue_count(const char *ifname)
{
	char path[PATH_MAX];
	struct dirent *de;
	unsigned int q;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)))
		if (sscanf(de->d_name, "rx-%u", &q) == 1)
			n++;
	closedir(dir);
	return n;
}

/**
 * devmem_shell - run a shell command
 * @fmt: printf format of the command line
 *
 * The command line is cut at 511 bytes.
 *
 * Return: what system() returned: 0 if the command ran and exited with
 * status 0, else its wait status or -1.
 */
int devmem_shell(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/**
 * devmem_as_user - run a function in a child that became another user
 * @uid: the uid (and gid) the child takes, with no supplementary groups
 * @fn: what the child runs; its int result is passed back
 * @arg: @fn's argument
 * @timeout_ms: how long to wait for the result
 *
 * Return: @fn's result, -ECHILD when the child could not become @uid or
 * did not answer in time (it is killed), or another negative errno.
 */
int devmem_as_user(uid_t uid, int (*fn)(void *arg), void *arg,
		   int timeout_ms)
{
	struct pollfd pfd = { .events = POLLIN };
	int p[2], ret = -ECHILD, status;
	pid_t pid;

	if (pipe(p))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!pid) {
		close(p[0]);
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid))
			_exit(2);
		ret = fn(arg);
		if (write(p[1], &ret, sizeof(ret)) != sizeof(ret))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	pfd.fd = p[0];
	if (poll(&pfd, 1, timeout_ms) != 1 ||
	    read(p[0], &ret, sizeof(ret)) != sizeof(ret)) {
		kill(pid, SIGKILL);
		ret = -ECHILD;
	}
	close(p[0]);
	waitpid(pid, &status, 0);
	return ret;
}
