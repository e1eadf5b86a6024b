/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wire protocol of the devmem net plugin: the connect handle and the
 * messages on a connection's sockets.  Everything is encoded byte by byte
 * in network order (no struct is ever sent as is), and everything received
 * is validated before use.
 *
 * Connection = 1 control socket + N data sockets (1 <= N <= DM_MAX_SOCKS),
 * all opened by the sending side (connect) to the receiving side's listen
 * socket.  Each socket first carries a HELLO; the acceptor answers on the
 * control socket with ACCEPT (or REJECT) once it holds all N + 1 sockets.
 * After that the sender writes one SEND per isend() on the control socket
 * (with the payload inline when it is at most DM_INLINE_MAX bytes), and the
 * payload itself as raw bytes on the data sockets, split as dm_plan() says.
 * A CLOSE on the control socket says the sender closed cleanly.
 *
 * Message = 16-byte header + len bytes of payload:
 *   u32 magic "DMN1" | u8 version | u8 type | u16 flags (0) | u32 len | u32 seq
 * seq counts messages per socket and direction from 0 (HELLO is 0, so the
 * sender's first SEND has seq 1).
 */
#ifndef DM_PROTO_H
#define DM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define DM_WIRE_MAGIC 0x444d4e31u	/* "DMN1" */
#define DM_WIRE_VERSION 1
#define DM_HDR_LEN 16

enum dm_msg_type {
	DM_MSG_HELLO = 1,	/* connector -> acceptor, first message on every socket */
	DM_MSG_ACCEPT = 2,	/* acceptor -> connector, control socket */
	DM_MSG_REJECT = 3,	/* acceptor -> connector, control socket */
	DM_MSG_SEND = 4,	/* sender -> receiver, one per isend */
	DM_MSG_CLOSE = 5,	/* sender -> receiver, clean close */
};

/* Payload lengths. */
#define DM_HELLO_LEN 24		/* u64 nonce | u64 conn_id | u16 index | u16 nsocks | u32 flags */
#define DM_ACCEPT_LEN 16	/* u64 conn_id | u16 nsocks | u16 0 | u32 flags */
/* ACCEPT flags: the receiver steered every data socket to its devmem RX
 * queues before answering (no payload came before); informational, the
 * sender sends the same bytes either way. */
#define DM_ACCEPT_DEVMEM_RX 0x1u
#define DM_ACCEPT_FLAGS_KNOWN DM_ACCEPT_DEVMEM_RX
#define DM_REJECT_LEN 4		/* u32 reason */
#define DM_SEND_LEN 16		/* u64 size | u32 tag | u32 flags, + inline payload */

#define DM_INLINE_MAX 128	/* payloads up to this size travel on the control socket */
#define DM_MAX_MSG_SIZE (1ULL << 30)	/* 1 GiB: the largest isend/irecv */
#define DM_MAX_SOCKS 16		/* data sockets per connection */
#define DM_MIN_CHUNK (64u << 10)	/* no data socket gets less than this of a message */
#define DM_CHUNK_ALIGN 4096u

enum dm_reject_reason {
	DM_REJECT_NONCE = 1,	/* handle not from this listener (stale or forged) */
	DM_REJECT_BAD = 2,	/* malformed HELLO */
	DM_REJECT_FULL = 3,	/* too many pending connections */
};

struct dm_hdr {
	uint8_t type;
	uint16_t flags;
	uint32_t len;
	uint32_t seq;
};

struct dm_hello {
	uint64_t nonce;
	uint64_t conn_id;
	uint16_t index;		/* 0 = control, 1..nsocks = data */
	uint16_t nsocks;	/* data sockets of this connection */
	uint32_t flags;
};

struct dm_send_desc {
	uint64_t size;
	uint32_t tag;
	uint32_t flags;
};

/* Byte order helpers. */
void dm_put16(uint8_t *p, uint16_t v);
void dm_put32(uint8_t *p, uint32_t v);
void dm_put64(uint8_t *p, uint64_t v);
uint16_t dm_get16(const uint8_t *p);
uint32_t dm_get32(const uint8_t *p);
uint64_t dm_get64(const uint8_t *p);

void dm_hdr_encode(uint8_t out[DM_HDR_LEN], uint8_t type, uint32_t len, uint32_t seq);
/* NULL when the header is well formed (magic, version, flags, known type,
 * len within that type's bounds), else why not. */
const char *dm_hdr_decode(const uint8_t in[DM_HDR_LEN], struct dm_hdr *h);

void dm_hello_encode(uint8_t out[DM_HELLO_LEN], const struct dm_hello *h);
void dm_hello_decode(const uint8_t in[DM_HELLO_LEN], struct dm_hello *h);
void dm_send_encode(uint8_t out[DM_SEND_LEN], const struct dm_send_desc *d);
void dm_send_decode(const uint8_t in[DM_SEND_LEN], struct dm_send_desc *d);

/*
 * How a message of `size` bytes is cut over `nsocks` data sockets: nchunks
 * chunks of `chunk` bytes (the last may be shorter), chunk j on data socket
 * (first + j) % nsocks, where `first` is the running count of chunks of all
 * earlier messages of the connection modulo nsocks.  Inline messages have
 * no chunk.  Both ends compute this; it is never sent.
 */
void dm_plan(uint64_t size, unsigned nsocks, uint64_t *chunk, unsigned *nchunks);

/*
 * Connect handle (NCCL_NET_HANDLE_MAXSIZE = 128 bytes), made by listen():
 *   0 u32 magic "DMH1" | 4 u16 version | 6 u16 family (4 or 6) | 8 u16 port
 *  10 u16 listener dev | 12 u32 IPv6 scope id | 16 u8 addr[16] | 32 u64 nonce
 *  40 u32 checksum (FNV-1a of bytes 0..39) | 44..63 zero
 *  64..79 connector-local state (zero as listen() writes it; connect()
 *         keeps the id of its connection attempt there between calls:
 *         u32 "DMCS" | u32 0 | u64 id) | 80..127 zero
 */
#define DM_HANDLE_MAGIC 0x444d4831u	/* "DMH1" */
#define DM_HANDLE_VERSION 1
#define DM_HANDLE_SIZE 128
#define DM_HANDLE_STATE_OFF 64
#define DM_HANDLE_STATE_MAGIC 0x444d4353u	/* "DMCS" */

struct dm_handle {
	int family;		/* 4 or 6 */
	uint16_t port;
	uint16_t dev;
	uint32_t scope_id;
	uint8_t addr[16];	/* IPv4 in the first 4 bytes */
	uint64_t nonce;
};

uint32_t dm_fnv1a(const uint8_t *p, size_t n);
void dm_handle_encode(uint8_t out[DM_HANDLE_SIZE], const struct dm_handle *h);
/* NULL when valid (magic, version, family, port, checksum, zero padding). */
const char *dm_handle_decode(const uint8_t in[DM_HANDLE_SIZE], struct dm_handle *h);

#endif
