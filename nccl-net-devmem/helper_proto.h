/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The privileged helper's protocol (nccl-devmem-helper, helper.c; the
 * plugin's side in helper_client.c).
 *
 * A SOCK_SEQPACKET Unix socket, one request and one reply per message,
 * in the host's byte order (both ends are on one host).  The file
 * descriptors a request carries go as SCM_RIGHTS with it:
 *
 *   BIND_RX  the dma-buf; the binding is the helper's, for as long as the
 *            connection is open (the reply carries its id, no fd)
 *   STEER    the connected TCP socket whose flow goes to queues[0]; the
 *            helper keeps it open until the rule is deleted, so that no
 *            other socket can take its 4-tuple while the rule stands
 *   UNSTEER  none: deletes the rule at loc and closes the helper's socket
 *
 * Closing the connection deletes every rule it made, then lets go of the
 * binding: a job killed leaves nothing behind.  A refused caller gets one
 * reply (op 0) and the end of the connection.
 */
#ifndef DM_HELPER_PROTO_H
#define DM_HELPER_PROTO_H

#include <stdint.h>

#define DM_ENV_HELPER "NCCL_DEVMEM_HELPER"	/* the helper's socket path */
#define DM_HELPER_MAGIC 0x50484d44u		/* "DMHP" */
#define DM_HELPER_VERSION 1
#define DM_HELPER_MAX_QUEUES 16
#define DM_HELPER_WHY 200

enum {
	DM_HELPER_BIND_RX = 1,
	DM_HELPER_STEER = 2,
	DM_HELPER_UNSTEER = 3,
};

struct dm_helper_req {
	uint32_t magic;
	uint16_t version;
	uint16_t op;
	int32_t ifindex;	/* BIND_RX */
	uint32_t nqueues;	/* BIND_RX: queues[0..nqueues) */
	uint32_t queues[DM_HELPER_MAX_QUEUES];	/* STEER: queues[0] */
	int32_t loc;		/* UNSTEER */
	uint32_t reserved;	/* 0 */
};

struct dm_helper_rep {
	uint32_t magic;
	uint16_t version;
	uint16_t op;		/* the request's */
	int32_t err;		/* 0 or -errno */
	uint32_t id;		/* BIND_RX: the binding's id */
	int32_t loc;		/* STEER: the rule's location */
	char why[DM_HELPER_WHY];	/* err: the reason, NUL-terminated */
};

#endif
