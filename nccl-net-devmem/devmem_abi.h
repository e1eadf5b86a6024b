/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mainline's devmem TCP user ABI, declared here so that the plugin builds
 * against any libc headers (Debian 12's stop before devmem).  The numbers
 * are mainline's (include/uapi/linux/netdev.h, uio.h, asm-generic/socket.h,
 * linux/socket.h) and this series' alike.
 */
#ifndef DM_DEVMEM_ABI_H
#define DM_DEVMEM_ABI_H

#include <stdint.h>

/* generic netlink family "netdev", version 1 */
#define DM_NETDEV_FAMILY "netdev"
#define DM_NETDEV_VERSION 1
#define DM_NETDEV_CMD_BIND_RX 13
#define DM_NETDEV_CMD_BIND_TX 15
#define DM_NETDEV_A_DMABUF_IFINDEX 1
#define DM_NETDEV_A_DMABUF_QUEUES 2	/* nested, one per queue: */
#define DM_NETDEV_A_DMABUF_FD 3
#define DM_NETDEV_A_DMABUF_ID 4
#define DM_NETDEV_A_QUEUE_ID 1
#define DM_NETDEV_A_QUEUE_TYPE 3
#define DM_NETDEV_QUEUE_TYPE_RX 0

/* socket options and control messages (SOL_SOCKET) */
#define DM_SO_DEVMEM_LINEAR 78
#define DM_SO_DEVMEM_DMABUF 79
#define DM_SO_DEVMEM_DONTNEED 80
#define DM_MSG_SOCK_DEVMEM 0x2000000

/* the payload of SCM_DEVMEM_DMABUF and SCM_DEVMEM_LINEAR (24 bytes) */
struct dm_dmabuf_cmsg {
	uint64_t frag_offset;
	uint32_t frag_size;
	uint32_t frag_token;
	uint32_t dmabuf_id;
	uint32_t flags;
};

/* one range of SO_DEVMEM_DONTNEED */
struct dm_dmabuf_token {
	uint32_t token_start;
	uint32_t token_count;
};

/* SO_DEVMEM_DONTNEED takes at most this many ranges per call, and frees at
 * most DM_DONTNEED_MAX_FRAGS fragments per call (it returns how many). */
#define DM_DONTNEED_MAX_RANGES 128
#define DM_DONTNEED_MAX_FRAGS 1024

#endif
