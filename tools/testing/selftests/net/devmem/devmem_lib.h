/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small user-space helpers for the devmem TCP selftests.
 *
 * Raw generic netlink (no libmnl, no libynl), the "netdev" family commands
 * used by devmem TCP (bind-rx, bind-tx, queue-get), the two ethtool netlink
 * requests needed to switch tcp-data-split, and udmabuf creation; then what
 * else the devmem test programs share: devmem sendmsg, token ranges and cmsg
 * checks, the test pattern, command line parsing, the clock, and reading
 * /proc and sysfs.
 *
 * Error convention: every function returning int returns 0 (or a documented
 * non-negative value) on success and a negative errno on failure.  Errors
 * reported by the kernel in NLMSG_ERROR are returned as they are, so a test
 * can compare them with e.g. -EINVAL; the extack message that came with them
 * is copied into the caller's buffer when one is given.
 *
 * The headers of the devmem series (KHDR_INCLUDES) are used when the build
 * sees them; otherwise every constant and structure of the new ABI is
 * defined here, with the same values as mainline.
 */
#ifndef __DEVMEM_LIB_H
#define __DEVMEM_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>
#include <linux/ethtool_netlink.h>

/* The series' uAPI header, installed with the kernel headers
 * (KHDR_INCLUDES) the selftests are built against.
 */
#include <linux/netdev.h>

/*
 * Socket options, control messages and the recvmsg flag.
 *
 * struct dmabuf_cmsg and struct dmabuf_token live in the uAPI <linux/uio.h>,
 * but that header cannot be included next to glibc's <sys/socket.h> (both
 * define struct iovec), so this header does not include it and defines the
 * two structures itself.  The only exception: the includer already pulled
 * in a <linux/uio.h> that has them (recognised by its include guard together
 * with SO_DEVMEM_DMABUF from the same header set).  Define
 * DEVMEM_HAVE_UIO_DMABUF to 0 or 1 before including this file to override.
 */
#ifndef DEVMEM_HAVE_UIO_DMABUF
#if defined(__LINUX_UIO_H) && defined(SO_DEVMEM_DMABUF)
#define DEVMEM_HAVE_UIO_DMABUF	1
#else
#define DEVMEM_HAVE_UIO_DMABUF	0
#endif
#endif

#ifndef SO_DEVMEM_LINEAR
#define SO_DEVMEM_LINEAR	78
#endif
#ifndef SCM_DEVMEM_LINEAR
#define SCM_DEVMEM_LINEAR	SO_DEVMEM_LINEAR
#endif
#ifndef SO_DEVMEM_DMABUF
#define SO_DEVMEM_DMABUF	79
#endif
#ifndef SCM_DEVMEM_DMABUF
#define SCM_DEVMEM_DMABUF	SO_DEVMEM_DMABUF
#endif
#ifndef SO_DEVMEM_DONTNEED
#define SO_DEVMEM_DONTNEED	80
#endif
#ifndef MSG_SOCK_DEVMEM
#define MSG_SOCK_DEVMEM		0x2000000
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY		0x4000000
#endif
/* MSG_ZEROCOPY completions (linux/errqueue.h, asm/socket.h) */
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY		60
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY	5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED	1
#endif

#if !DEVMEM_HAVE_UIO_DMABUF
/* One SCM_DEVMEM_DMABUF (or SCM_DEVMEM_LINEAR) cmsg: 24 bytes. */
struct dmabuf_cmsg {
	__u64 frag_offset;	/* offset of the fragment in the dma-buf */
	__u32 frag_size;	/* length of the fragment */
	__u32 frag_token;	/* token to give back with SO_DEVMEM_DONTNEED */
	__u32 dmabuf_id;	/* id of the RX binding */
	__u32 flags;		/* reserved, zero */
};

/* A range of tokens for SO_DEVMEM_DONTNEED: 8 bytes. */
struct dmabuf_token {
	__u32 token_start;
	__u32 token_count;
};
#endif

/*
 * ethtool netlink.  The message and attribute numbers used here
 * (ETHTOOL_MSG_RINGS_GET/SET, ETHTOOL_A_RINGS_HEADER,
 * ETHTOOL_A_RINGS_TCP_DATA_SPLIT, ETHTOOL_A_HEADER_DEV_INDEX and enum
 * ethtool_tcp_data_split) are enumerators that 6.1's <linux/ethtool_netlink.h>
 * already has; only the macros can be guarded.
 */
#ifndef ETHTOOL_GENL_NAME
#define ETHTOOL_GENL_NAME	"ethtool"
#endif
#ifndef ETHTOOL_GENL_VERSION
#define ETHTOOL_GENL_VERSION	1
#endif

/* Size of an extack message buffer that never truncates in practice. */
#define NL_EXTACK_LEN		256

/* Largest request a struct nl_msg can hold. */
#define NL_MSG_SIZE		16384

/* Receive buffer of a struct nl_ctx: the largest message we accept. */
#define NL_RECV_SIZE		65536

/* Seconds a request waits for the kernel's answer before -ETIMEDOUT. */
#define NL_TIMEOUT_SEC		60

/**
 * struct nl_ctx - one generic netlink socket
 * @fd: the NETLINK_GENERIC socket, or -1 when closed
 * @portid: port id the kernel gave the socket
 * @seq: sequence number of the last request sent
 * @family_id: id of the family resolved by nl_open(), 0 if none
 * @version: genl version used by nl_msg_init_family()
 * @rbuf: receive buffer, NL_RECV_SIZE bytes
 * @miss_type: NLMSGERR_ATTR_MISS_TYPE of the last answer, -1 if absent
 * @bad_offs: NLMSGERR_ATTR_OFFS of the last answer (byte offset, from the
 *	start of the request, of the attribute the kernel rejected), -1 if absent
 *
 * Devmem bindings belong to the socket that created them: nl_close() (or
 * the process exiting) unbinds every binding made through this context.
 * Use one context per binding whose lifetime a test wants to control.
 */
struct nl_ctx {
	int fd;
	__u32 portid;
	__u32 seq;
	__u16 family_id;
	__u8 version;
	void *rbuf;
	int miss_type;
	long bad_offs;
};

/**
 * struct nl_msg - a request being built
 * @align: aligns @buf on 8 bytes, for u64 attributes
 * @buf: nlmsghdr, genlmsghdr and attributes
 * @len: bytes used in @buf
 * @err: first error met while building (-EMSGSIZE), sticky
 *
 * The builder functions stop writing after the first error and nl_request()
 * then returns it, so a request can be built without checking each step.
 */
struct nl_msg {
	union {
		__u64 align;	/* 8-byte aligned, for u64 attributes */
		unsigned char buf[NL_MSG_SIZE];
	};
	size_t len;
	int err;
};

/*
 * Callback for each reply message of a request (not called for NLMSG_ERROR,
 * NLMSG_DONE or NLMSG_NOOP).  Return 0 to go on; a negative errno is kept
 * as the result of the request (the rest of the answer is still read, so the
 * socket stays in step).
 */
typedef int (*nl_reply_cb)(const struct nlmsghdr *nlh, void *arg);

/* --- generic netlink socket ------------------------------------------- */

/*
 * Open a NETLINK_GENERIC socket (NETLINK_EXT_ACK, NETLINK_CAP_ACK, receive
 * timeout) and, if @family is not NULL, resolve it into nl->family_id and
 * nl->version (-ENOENT if the kernel lacks it).  On failure @nl holds
 * nothing and may still be passed to nl_close().
 */
int nl_open(struct nl_ctx *nl, const char *family);
int nl_open_portid(struct nl_ctx *nl, const char *family, __u32 portid);
/* Close the socket (unbinding its devmem bindings); idempotent. */
void nl_close(struct nl_ctx *nl);
/* CTRL_CMD_GETFAMILY: id of family @name, or -ENOENT. */
int genl_resolve_family(struct nl_ctx *nl, const char *name, __u16 *id_out);

/* --- request building -------------------------------------------------- */

/* Start a request: NLM_F_REQUEST | @flags (NLM_F_DUMP for a dump). */
void nl_msg_init(struct nl_msg *m, __u16 family_id, __u8 cmd, __u8 version,
		 __u16 flags);
/* nl_msg_init() for the family @nl was opened for. */
void nl_msg_init_family(struct nl_msg *m, const struct nl_ctx *nl, __u8 cmd,
			__u16 flags);
/* Append attributes (host byte order); 0 or -EMSGSIZE (sticky). */
int nl_put(struct nl_msg *m, __u16 type, const void *data, size_t len);
int nl_put_flag(struct nl_msg *m, __u16 type);
int nl_put_u8(struct nl_msg *m, __u16 type, __u8 val);
int nl_put_u16(struct nl_msg *m, __u16 type, __u16 val);
int nl_put_u32(struct nl_msg *m, __u16 type, __u32 val);
int nl_put_u64(struct nl_msg *m, __u16 type, __u64 val);
int nl_put_str(struct nl_msg *m, __u16 type, const char *str);
/* Open a nest (NLA_F_NESTED set); NULL if the message is full. */
struct nlattr *nl_nest_start(struct nl_msg *m, __u16 type);
/* Close a nest opened by nl_nest_start(). */
int nl_nest_end(struct nl_msg *m, struct nlattr *nest);

/* --- request / answer -------------------------------------------------- */

/*
 * Send @m (NLM_F_ACK is added unless it is a dump) and read the whole
 * answer, calling @cb (may be NULL) for each reply message.  Returns the
 * kernel's error (0 or -errno), else @cb's error, else a local -errno
 * (-ETIMEDOUT, -EMSGSIZE, ...).  The extack message is copied into
 * @extack (always NUL-terminated, "" if none; @extack may be NULL).
 */
int nl_request(struct nl_ctx *nl, struct nl_msg *m, nl_reply_cb cb, void *arg,
	       char *extack, size_t extack_len);

/* --- answer parsing ---------------------------------------------------- */

/* Attributes of a genl message and their length; NULL if too short. */
const void *nl_genl_attrs(const struct nlmsghdr *nlh, size_t *len);
/* Attribute @a fits in the @rem bytes starting at @a. */
bool nl_attr_ok(const struct nlattr *a, ptrdiff_t rem);
/* The attribute following @a. */
const struct nlattr *nl_attr_next(const struct nlattr *a);
/* Type of @a without NLA_F_NESTED / NLA_F_NET_BYTEORDER. */
int nl_attr_type(const struct nlattr *a);
/* Payload of @a and its length. */
const void *nl_attr_data(const struct nlattr *a);
size_t nl_attr_len(const struct nlattr *a);
/* tb[0..maxtype] = last attribute of each type in @data/@len, or NULL. */
void nl_attr_parse(const struct nlattr **tb, int maxtype, const void *data,
		   size_t len);
/* Read a fixed-size attribute: 0, or -EPROTO if @a is NULL or too short. */
int nl_attr_get_u8(const struct nlattr *a, __u8 *val);
int nl_attr_get_u16(const struct nlattr *a, __u16 *val);
int nl_attr_get_u32(const struct nlattr *a, __u32 *val);
int nl_attr_get_u64(const struct nlattr *a, __u64 *val);

/*
 * Is @a a whole attribute inside @data/@len?  Walks the attributes of a
 * message part (multi-attributes and nests):
 *	for (a = data; nl_attr_in(a, data, len); a = nl_attr_next(a))
 */
bool nl_attr_in(const struct nlattr *a, const void *data, size_t len);

/* --- netdev family: devmem --------------------------------------------- */

/**
 * struct devmem_queue_info - one answer of NETDEV_CMD_QUEUE_GET
 * @ifindex: NETDEV_A_QUEUE_IFINDEX
 * @id: NETDEV_A_QUEUE_ID
 * @type: NETDEV_A_QUEUE_TYPE (NETDEV_QUEUE_TYPE_RX or _TX)
 * @has_napi_id: NETDEV_A_QUEUE_NAPI_ID was present
 * @napi_id: its value, 0 if absent
 * @has_dmabuf: NETDEV_A_QUEUE_DMABUF was present (an RX queue is bound)
 * @dmabuf: the binding id, 0 if absent
 */
struct devmem_queue_info {
	__u32 ifindex;
	__u32 id;
	__u32 type;
	bool has_napi_id;
	__u32 napi_id;
	bool has_dmabuf;
	__u32 dmabuf;
};

/*
 * Called once per queue by devmem_queue_dump().  Return 0 to go on, a
 * positive value to stop (the dump then returns 0) or a negative errno to
 * stop and have devmem_queue_dump() return it.
 */
typedef int (*devmem_queue_cb)(const struct devmem_queue_info *q, void *arg);

/**
 * struct devmem_pool_info - one page pool, from page-pool-get or a
 *	page-pool notification
 * @cmd: the message's command (NETDEV_CMD_PAGE_POOL_*)
 * @id: NETDEV_A_PAGE_POOL_ID
 * @has_ifindex: NETDEV_A_PAGE_POOL_IFINDEX was present
 * @ifindex: its value
 * @napi_id: NETDEV_A_PAGE_POOL_NAPI_ID, 0 if absent
 * @inflight: NETDEV_A_PAGE_POOL_INFLIGHT
 * @inflight_mem: NETDEV_A_PAGE_POOL_INFLIGHT_MEM
 * @detached: NETDEV_A_PAGE_POOL_DETACH_TIME was present
 * @detach_time: its value
 * @dmabuf: NETDEV_A_PAGE_POOL_DMABUF, 0 if absent
 */
struct devmem_pool_info {
	__u8 cmd;
	__u64 id;
	bool has_ifindex;
	__u32 ifindex;
	__u64 napi_id;
	__u64 inflight;
	__u64 inflight_mem;
	bool detached;
	__u64 detach_time;
	__u32 dmabuf;
};

/* Called once per pool by devmem_page_pool_dump(), as devmem_queue_cb. */
typedef int (*devmem_pool_cb)(const struct devmem_pool_info *p, void *arg);

/* A "uint" attribute of the spec: 4 or 8 bytes; 0 or -EPROTO. */
int nl_attr_get_uint(const struct nlattr *a, __u64 *val);
/*
 * Join multicast group @group of family @family (resolved through
 * "nlctrl"); 0, -ENOENT without such a group, or another negative errno.
 */
int nl_join_group(struct nl_ctx *nl, const char *family, const char *group);
/*
 * Read notifications for up to @timeout_ms, calling @cb for each until it
 * returns non-zero; returns that value, or -ETIMEDOUT.
 */
int nl_wait_ntf(struct nl_ctx *nl, nl_reply_cb cb, void *arg, int timeout_ms);

/* nl_open() for the "netdev" family. */
int devmem_nl_open(struct nl_ctx *nl);
int devmem_nl_open_portid(struct nl_ctx *nl, __u32 portid);
/* Fill @p from a page-pool message; -EPROTO without an id. */
int devmem_pool_parse(const struct nlmsghdr *nlh, struct devmem_pool_info *p);
/* NETDEV_CMD_PAGE_POOL_GET (do) for pool @id. */
int devmem_page_pool_get(struct nl_ctx *nl, __u64 id,
			 struct devmem_pool_info *out);
/* NETDEV_CMD_PAGE_POOL_GET (dump); @cb as for devmem_queue_dump(). */
int devmem_page_pool_dump(struct nl_ctx *nl, devmem_pool_cb cb, void *arg);
/*
 * Append one NETDEV_A_DMABUF_QUEUES nest { NETDEV_A_QUEUE_ID = @id,
 * NETDEV_A_QUEUE_TYPE = @type }; a negative @id or @type leaves that
 * attribute out, for malformed requests.
 */
int devmem_msg_put_queue(struct nl_msg *m, long id, long type);
/*
 * Send a hand-built bind-rx/bind-tx request (nl_msg_init_family() +
 * nl_put_*() + devmem_msg_put_queue()) and return the NETDEV_A_DMABUF_ID
 * of the answer in *@id_out (may be NULL).  0 or -errno; -EPROTO if the
 * kernel accepted it without giving an id.
 */
int devmem_bind_request(struct nl_ctx *nl, struct nl_msg *m, __u32 *id_out,
			char *extack, size_t extack_len);
/*
 * NETDEV_CMD_BIND_RX: IFINDEX, FD and one RX queue nest per @queues entry
 * (@nqueues == 0 sends no queue at all).  The binding lasts until @nl is
 * closed.  0 with the id in *@id_out, or -errno with the extack message.
 */
int devmem_bind_rx(struct nl_ctx *nl, int ifindex, int dmabuf_fd,
		   const unsigned int *queues, int nqueues, __u32 *id_out,
		   char *extack, size_t extack_len);
/* NETDEV_CMD_BIND_TX: IFINDEX and FD; as devmem_bind_rx(). */
int devmem_bind_tx(struct nl_ctx *nl, int ifindex, int dmabuf_fd,
		   __u32 *id_out, char *extack, size_t extack_len);
/* NETDEV_CMD_QUEUE_GET (do) for queue @id of @type on @ifindex. */
int devmem_queue_get(struct nl_ctx *nl, int ifindex, int type, int id,
		     struct devmem_queue_info *out);
/* NETDEV_CMD_QUEUE_GET (dump) of @ifindex (all devices if <= 0). */
int devmem_queue_dump(struct nl_ctx *nl, int ifindex, devmem_queue_cb cb,
		      void *arg);

/* --- ethtool netlink ----------------------------------------------------- */

/* if_nametoindex() returning -errno (-ENODEV) on failure. */
int devmem_ifindex(const char *ifname);
/* First interface bound to @driver: its ifindex and name, or -ENODEV. */
int devmem_find_driver_iface(const char *driver, char *name, size_t len);
/*
 * "ethtool -G IF tcp-data-split on|off" through ETHTOOL_MSG_RINGS_SET
 * (opens and closes its own ethtool socket).  0 or -errno with extack.
 */
int ethtool_set_tcp_data_split(int ifindex, bool on, char *extack,
			       size_t extack_len);
/*
 * ETHTOOL_MSG_RINGS_GET: ETHTOOL_TCP_DATA_SPLIT_UNKNOWN (0, also when not
 * reported), _DISABLED (1), _ENABLED (2), or -errno.
 */
int ethtool_get_tcp_data_split(int ifindex);
/*
 * "ethtool -G IF hds-thresh N" through ETHTOOL_MSG_RINGS_SET: 0 or -errno
 * with extack. Device memory needs 0 (every frame split at its payload).
 */
int ethtool_set_hds_thresh(int ifindex, __u32 thresh, char *extack,
			   size_t extack_len);
/*
 * tcp-data-split on and hds-thresh 0 in one ETHTOOL_MSG_RINGS_SET, what
 * bind-rx needs (as mainline's ncdevmem does it). 0 or -errno with extack.
 */
int ethtool_rings_for_devmem(int ifindex, char *extack, size_t extack_len);
/* ETHTOOL_MSG_RINGS_GET: hds-thresh and its maximum; 0, -ENOENT or -errno. */
int ethtool_get_hds_thresh(int ifindex, __u32 *thresh, __u32 *thresh_max);

/* --- udmabuf ------------------------------------------------------------- */

/*
 * A dma-buf of @size bytes (page multiple) over a memfd sealed with
 * F_SEAL_SHRINK, via /dev/udmabuf (-ENOENT without it).  Returns the
 * dma-buf fd (O_CLOEXEC) or -errno; the memfd goes to *@memfd_out if not
 * NULL (caller closes it), else it is closed.
 */
int udmabuf_create(size_t size, int *memfd_out);
/* mmap a dma-buf shared and read-write: 0 and *@addr_out, or -errno. */
int udmabuf_map(int dmabuf_fd, size_t size, void **addr_out);
/* munmap what udmabuf_map() gave: 0 or -errno. */
int udmabuf_unmap(void *addr, size_t size);
/* DMA_BUF_IOCTL_SYNC, DMA_BUF_SYNC_START/END | _READ/_WRITE/_RW. */
int dmabuf_sync(int dmabuf_fd, __u64 flags);

/* --- devmem sockets ------------------------------------------------------ */

/*
 * sendmsg() of @iov (iov_base: offsets into the dma-buf) with one
 * SCM_DEVMEM_DMABUF cmsg naming TX binding @binding_id: bytes or -errno.
 */
ssize_t devmem_sendmsg(int fd, __u32 binding_id, const struct iovec *iov,
		       int niov, int flags);
/* devmem_sendmsg() with a cmsg payload of @len (<= 8) bytes at @data. */
ssize_t devmem_sendmsg_cmsg(int fd, const void *data, size_t len,
			    const struct iovec *iov, int niov, int flags);
/*
 * Copy the payload of a devmem RX cmsg (SOL_SOCKET, SCM_DEVMEM_LINEAR or
 * SCM_DEVMEM_DMABUF, exactly one struct dmabuf_cmsg): 0, or -EPROTO.
 */
int devmem_cmsg_get(const struct cmsghdr *cm, struct dmabuf_cmsg *dc);
/*
 * Ranges of one SO_DEVMEM_DONTNEED call for the first of @n @tokens:
 * consecutive numbers merged, at most @max_ranges ranges and @max_tokens
 * tokens.  Returns the ranges written to @r; *@used gets the tokens taken.
 */
int devmem_tokens_pack(const __u32 *tokens, size_t n, struct dmabuf_token *r,
		       int max_ranges, size_t max_tokens, size_t *used);
/* Byte (@phase + i) % @period at @p[i], @period <= 256. */
void devmem_fill_pattern(unsigned char *p, size_t len, unsigned int phase,
			 unsigned int period);

/* --- command line, clock ------------------------------------------------- */

/* A byte count with an optional K, M or G suffix: 0, or -EINVAL. */
int devmem_parse_size(const char *s, unsigned long long *out);
/*
 * An IPv4 or IPv6 literal into @ss, port 0; a v4-mapped IPv6 address
 * becomes the IPv4 one.  Returns AF_INET or AF_INET6, or -EINVAL.
 */
int devmem_parse_addr(const char *s, struct sockaddr_storage *ss);
/* Set the port of an AF_INET or AF_INET6 address. */
void devmem_set_port(struct sockaddr_storage *ss, unsigned int port);
/* The length of the AF_INET or AF_INET6 address in @ss. */
socklen_t devmem_addr_len(const struct sockaddr_storage *ss);
/* CLOCK_MONOTONIC in nanoseconds, and in seconds. */
unsigned long long devmem_now_ns(void);
double devmem_now_sec(void);
/* DEVMEM_TIME_SCALE: how much longer fixed waits may take here (>= 1). */
unsigned int devmem_time_scale(void);
/* @bytes in @secs as Mbit/s (0 if @secs is not positive). */
double devmem_mbps(unsigned long long bytes, double secs);

/* --- /proc, sysfs, commands ---------------------------------------------- */

/*
 * Counters @keys (NULL-terminated) of the @prefix group ("Tcp: ") of a
 * /proc/net/snmp style file into @vals: number found, or -errno.
 */
int devmem_read_counters(const char *path, const char *prefix,
			 const char *const *keys, unsigned long long *vals);
/* /proc/meminfo fields @keys (NULL-terminated) in KiB: number found. */
int devmem_read_meminfo(const char *const *keys, unsigned long long *kb);
/* Number of RX queues of @ifname (rx-N in sysfs), or -errno. */
int devmem_rx_queue_count(const char *ifname);
/* system() of the printf-formatted command: system()'s result. */
int devmem_shell(const char *fmt, ...);

int devmem_as_user(uid_t uid, int (*fn)(void *arg), void *arg,
		   int timeout_ms);

#endif /* __DEVMEM_LIB_H */
