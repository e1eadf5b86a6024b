/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of the devmem net plugin.  Only glue.c exports
 * symbols (the ncclNetPlugin_v8 and ncclNetPlugin_v11 tables); everything
 * here is hidden by -fvisibility=hidden.
 *
 * Files:
 *   glue.c     exported tables, v8/v11 shims, init/devices/getProperties
 *   log.c      logging through NCCL's logger, environment, randomness
 *   devices.c  device discovery (interfaces, sysfs properties)
 *   conn.c     listen / connect / accept (non-blocking handshake)
 *   copy.c     copy-mode data path: isend / irecv / test, progress threads
 *   mr.c       memory registration
 *   rx.c       devmem RX: the RX region, reading into it, tokens
 *   tx.c       devmem TX: bind-tx, MSG_ZEROCOPY sends, completions
 *   unpack.c   UNPACK delivery: the meta queue, irecvConsumed
 *   cuda.c     the CUDA driver API, loaded with dlopen
 *   gpu.c      GPU memory on the data path, the GPU test mode
 *   nl.c       the netdev netlink family (bind-rx, bind-tx)
 *   steer.c    ethtool ntuple rules (flow steering)
 *   helper_client.c  asking the privileged helper (helper.c) to bind and steer
 *   proto.c    wire formats (shared with the harness)
 */
#ifndef DM_PLUGIN_H
#define DM_PLUGIN_H

#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_net_api.h"
#include "proto.h"

#define DM_PLUGIN_NAME "devmem"

/* ---- logging and environment (log.c) ---- */
void dm_set_logger(ncclDebugLogger_t fn);
void dm_log(ncclDebugLogLevel level, unsigned long flags, const char *where, int line,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
#define DM_WARN(...) dm_log(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define DM_INFO(flags, ...) dm_log(NCCL_LOG_INFO, (flags), __func__, __LINE__, __VA_ARGS__)

/* Integer from the environment, `def` when unset; out of [min, max] or not
 * a number: a WARN and `def`. */
int dm_env_int(const char *name, int def, int min, int max);
uint64_t dm_random64(void);
uint64_t dm_now_ms(void);
/* dm_now_ms() is the coarse clock: a span it measures may be up to a tick
 * (10 ms at HZ=100) longer than the real one */
#define DM_CLOCK_SLACK_MS 10

/* Environment and defaults. */
#define DM_ENV_NSOCKS "NCCL_DEVMEM_NSOCKS"
#define DM_ENV_NTHREADS "NCCL_DEVMEM_NTHREADS"
#define DM_ENV_IFNAME "NCCL_DEVMEM_IFNAME"
#define DM_ENV_CONNECT_TIMEOUT "NCCL_DEVMEM_CONNECT_TIMEOUT_MS"
#define DM_DEFAULT_NSOCKS 2
#define DM_DEFAULT_NTHREADS 2
#define DM_DEFAULT_STALL_WARN_S 60	/* NCCL_DEVMEM_STALL_WARN_S */
#define DM_MAX_THREADS DM_MAX_SOCKS
#define DM_DEFAULT_CONNECT_TIMEOUT_MS 30000
#define DM_ENV_RX "NCCL_DEVMEM_RX"			/* 0: copy mode only */
#define DM_ENV_RX_QUEUES "NCCL_DEVMEM_RX_QUEUES"	/* "N" or "A-B" */
#define DM_ENV_RX_REGION_MB "NCCL_DEVMEM_RX_REGION_MB"
#define DM_DEFAULT_RX_REGION_MB 64
#define DM_ENV_RX_SOCKBUF_KB "NCCL_DEVMEM_RX_SOCKBUF_KB"	/* SO_RCVBUF of steered sockets */
/* 0: autotuned (up to net.ipv4.tcp_rmem's maximum, reserved in the region);
 * where the region cannot hold that, this fixed SO_RCVBUF */
#define DM_DEFAULT_RX_SOCKBUF_KB 0
#define DM_FIXED_RX_SOCKBUF_KB 1024
#define DM_ENV_TX "NCCL_DEVMEM_TX"			/* 0: plain send only */
#define DM_ENV_UNPACK "NCCL_DEVMEM_UNPACK"		/* 1: UNPACK delivery */
#define DM_ENV_TEST_GPU "NCCL_DEVMEM_TEST_GPU"		/* 1: GPU test mode (gpu.c) */
#define DM_ENV_STALL_WARN "NCCL_DEVMEM_STALL_WARN_S"	/* log a comm's state after (s) */
#define DM_MAX_RECVS 8		/* maxRecvs: buffers of one multi-recv */

/* ---- devices (devices.c) ---- */
#define DM_MAX_DEVS 32
struct dm_dev {
	char name[IF_NAMESIZE];
	char *pci_path;		/* NULL: not a PCI device (virtual NIC) */
	int speed;		/* Mbps */
	int ifindex;
	int family;		/* 4 or 6 */
	uint8_t addr[16];
	uint32_t scope_id;
};
/* Discovers once per process (NCCL_DEVMEM_IFNAME is read then); thread safe. */
int dm_devices_init(void);
/* NULL when dev is out of range or discovery has not run. */
const struct dm_dev *dm_dev_get(int dev);

/* ---- per-communicator context (v11 init/finalize; NULL under v8) ---- */
#define DM_CTX_MAGIC 0x64637478u
struct dm_ctx {
	uint32_t magic;
	uint64_t comm_id;
	int traffic_class;
};

/* ---- connections (conn.c) ---- */
ncclResult_t dm_listen(struct dm_ctx *ctx, int dev, void *handle, void **listen_comm);
ncclResult_t dm_connect(struct dm_ctx *ctx, int dev, void *handle, void **send_comm);
/* dev_comm: NCCL's device handle to fill for UNPACK (NULL: none given). */
ncclResult_t dm_accept(void *listen_comm, void **recv_comm, ncclNetDeviceHandle_v8_t *dev_comm);
ncclResult_t dm_close_listen(void *listen_comm);

/* ---- netdev netlink (nl.c) ---- */
struct dm_nl {
	int fd;
	uint32_t seq;
	uint16_t family;
};
/* 0 or -errno; `why` says what failed. */
int dm_nl_open(struct dm_nl *nl, char *why, size_t why_len);
void dm_nl_close(struct dm_nl *nl);
/* Binds the dma-buf to the RX queues; the binding lives as long as nl. */
int dm_nl_bind_rx(struct dm_nl *nl, int ifindex, int dmabuf_fd, const unsigned *queues, int n,
		  uint32_t *id, char *why, size_t why_len);
/* Binds the dma-buf for transmit on the device; lives as long as nl. */
int dm_nl_bind_tx(struct dm_nl *nl, int ifindex, int dmabuf_fd, uint32_t *id, char *why,
		  size_t why_len);

/* ---- flow steering (steer.c) ---- */
/* RX queues of the device (channels), or -errno. */
int dm_ethtool_rx_queues(const char *ifname);
/* An ntuple rule sending the TCP flow of connected socket fd (as received)
 * to `queue`; its location in *loc.  0, or -errno with the reason in why. */
int dm_steer_add(const char *ifname, int fd, unsigned queue, int *loc, char *why,
		 size_t wl);
/* Deletes the rule at loc if it is still the one for fd's flow (fd < 0:
 * unchecked). 0 or -errno (-ESTALE: another rule took the location). */
int dm_steer_del(const char *ifname, int fd, int loc);
struct sockaddr_storage;
/* dm_steer_add for the flow local <- peer, as read from the socket once. */
int dm_steer_add_flow(const char *ifname, const struct sockaddr_storage *local,
		      const struct sockaddr_storage *peer, unsigned queue, int *loc, char *why,
		      size_t wl);
/* dm_steer_del for the flow local <- peer (both NULL: unchecked). */
int dm_steer_del_flow(const char *ifname, int loc, const struct sockaddr_storage *local,
		      const struct sockaddr_storage *peer);
/* How many ntuple rules send traffic to one of the queues, or -errno. */
int dm_ethtool_rules_to(const char *ifname, const unsigned *queues, int n);
/* RX ring size (descriptors), or -errno. */
int dm_ethtool_rx_ring(const char *ifname);
/* The device's driver name (ETHTOOL_GDRVINFO) into drv: 0 or -errno. */
int dm_ethtool_driver(const char *ifname, char *drv, size_t n);
/* 1 when the RSS table sends traffic to one of the queues, 0 if not. */
int dm_ethtool_rss_uses(const char *ifname, const unsigned *queues, int n);

/* ---- the privileged helper's client (helper_client.c) ---- */
/* Connects to the helper's socket at path: the fd, or -errno (why). */
int dm_helper_open(const char *path, char *why, size_t wl);
/* bind-rx through the helper, the binding's id in *id: the binding is the
 * helper's, for as long as connection h is open.  0 or -errno (why). */
int dm_helper_bind_rx(int h, int ifindex, int dmabuf_fd, const unsigned *queues, int n,
		      uint32_t *id, char *why, size_t wl);
/* An ntuple rule for connected socket fd to queue, by the helper. */
int dm_helper_steer(int h, int fd, unsigned queue, int *loc, char *why, size_t wl);
/* Deletes the helper's rule at loc (< 0: nothing); 0 or -errno. */
int dm_helper_unsteer(int h, int loc);

/* ---- devmem RX (rx.c) ---- */
#define DM_RX_MAX_QUEUES 16
/* fragments one recvmsg may report: the cmsg buffer's size */
#define DM_RX_MAX_FRAGS 256
struct dm_rx_count {
	atomic_ullong dmabuf, host;
	atomic_ullong retries;	/* devmem recvmsg failures retried (copy.c) */
};
struct dm_rx_region {
	int refs;		/* under the registry's lock */
	int dev, ifindex;
	char ifname[IF_NAMESIZE];
	struct dm_nl nl;	/* holds the binding */
	int dmabuf_fd, memfd;
	uint8_t *map;
	size_t size;
	uint32_t id;		/* binding id */
	unsigned queues[DM_RX_MAX_QUEUES];
	int nqueues;
	atomic_ullong bytes_dmabuf, bytes_host;
	atomic_ullong steer_failures;	/* connections served in copy mode */
	size_t budget;		/* region bytes steered sockets may still hold; rx lock */
	size_t budget0;		/* and all it had (read-only) */
	/* bound through the privileged helper (-1: by this process): its
	 * connection, which holds the binding (nl is then closed), one
	 * exchange at a time under helper_lock */
	int helper;
	pthread_mutex_t helper_lock;
};
/* The device's region with a reference, bound on first use; NULL: copy
 * mode (NCCL_DEVMEM_RX=0, or the bind failed: logged once). */
struct dm_rx_region *dm_rx_get(int dev);
void dm_rx_put(struct dm_rx_region *r);
/* The device's region with a reference if there is one now; never binds. */
struct dm_rx_region *dm_rx_peek(int dev);
/* Another reference to a region the caller holds one of. */
struct dm_rx_region *dm_rx_ref(struct dm_rx_region *r);
/* Steers the data sockets to the region's queues (locs[n] out); on failure
 * nothing stays installed. 0 with `why` naming the receive buffers chosen,
 * or -errno with `why`.  The reservation covers the sockets' buffers
 * (autotuned: tcp_rmem's maximum each; NCCL_DEVMEM_RX_SOCKBUF_KB, or where
 * the region cannot hold that: twice SO_RCVBUF), and as much again with
 * UNPACK delivery: fragments read but not yet consumed by NCCL (struct
 * dm_unpack's allowance). */
int dm_rx_steer(struct dm_rx_region *r, const int *fds, int n, int unpack, int *locs,
		size_t *reserved, char *why, size_t wl);
/* Deletes the rules (fds: the steered sockets, to check the rules are
 * still ours; NULL: unchecked) and gives the reservation back. */
void dm_rx_unsteer(struct dm_rx_region *r, const int *fds, int *locs, int n, size_t *reserved);
/* A fragment of one recvmsg: at `off` in the region, `pos` in dst. */
struct dm_rx_frag {
	uint64_t off, pos;
	uint32_t size, token;
};
/* Takes the fragments (and their tokens) instead of their being copied:
 * 0, or -1 with *why, having kept none. */
typedef int (*dm_rx_sink_fn)(void *arg, const struct dm_rx_frag *f, int n, const char **why);
/* recv() of up to len bytes into dst with MSG_SOCK_DEVMEM: bytes in host
 * memory placed in stream order; fragments copied and their tokens
 * returned, or handed to sink when there is one.  As recv(); -1 with *why
 * set on a devmem error (errno EPROTO). */
ssize_t dm_rx_recv(struct dm_rx_region *r, int fd, void *dst, size_t len, struct dm_rx_count *cnt,
		   dm_rx_sink_fn sink, void *sink_arg, const char **why);
/* Gives tokens back, consecutive ones as one range: 0 or -errno. */
int dm_rx_tokens_return(int fd, const uint32_t *tokens, int n);

/* ---- UNPACK delivery (unpack.c) ---- */
#define DM_RX_PAGE 4096		/* region held by one fragment (a NIC buffer) */
struct dm_comm;
struct dm_req;
#define DM_UNPACK_DEPTH 16		/* receives in the queue */
#define DM_UNPACK_MAX_METAS 2048	/* metas of one receive (NCCL's limit) */
#define DM_UNPACK_MAX_TOKENS (2 * DM_UNPACK_MAX_METAS)
/* NCCL's loadMeta and netUnpackMeta (version 0x7) */
union dm_load_meta {
	struct {
		uint32_t src_off;
		uint32_t len;
		uint64_t dst_off;
	};
	uint64_t r64[2];
} __attribute__((aligned(16)));
struct dm_unpack_meta {
	union dm_load_meta mem[DM_UNPACK_DEPTH][DM_UNPACK_MAX_METAS];
	uint64_t cnt[DM_UNPACK_DEPTH];
};
/* NCCL's unpackNetDeviceHandle */
struct dm_unpack_handle {
	struct dm_unpack_meta *meta;
	void *bounce_buf;
	uint64_t head;
};
/* A recv comm's queue: slots tail - head in use, in posting order; all
 * under the comm's lock. */
struct dm_unpack {
	struct dm_unpack_meta *meta;
	struct dm_unpack_handle handle;
	int gpu;			/* dm_unpack_gpu(): */
	struct dm_unpack_handle *dev_handle;	/* the handle in device memory */
	uint64_t head, tail;
	/* Region bytes held by fragments read and not consumed.  Later
	 * receives read only while these and what the oldest unfinished
	 * receive still needs fit the allowance, so that they cannot take
	 * the pages the oldest needs; the oldest always reads. */
	uint64_t held, allowance;	/* region bytes */
	uint64_t bytes[DM_UNPACK_DEPTH];	/* held by each slot */
	uint64_t frag_bytes, frags;	/* payload per fragment, to estimate */
	unsigned nmeta[DM_UNPACK_DEPTH], ntok[DM_UNPACK_DEPTH];
	/* a fragment read in two parts has two tokens (one page) */
	uint32_t tok[DM_UNPACK_DEPTH][DM_UNPACK_MAX_TOKENS];
	uint8_t tok_sock[DM_UNPACK_DEPTH][DM_UNPACK_MAX_TOKENS];
};
/* Where a data socket's fragments go: dm_unpack_take's argument. */
struct dm_unpack_sink {
	struct dm_comm *comm;
	unsigned slot;
	int sock;
	uint64_t dst_off;	/* of the recvmsg's dst in the receive buffer */
};
/* NCCL_DEVMEM_UNPACK=1 and NCCL set up for it (decided once, logged). */
int dm_unpack_enabled(void);
/* 1 when the queue goes to NCCL's GPU kernel (NCCL_DEVMEM_UNPACK=1): queue
 * in pinned host memory, handle in device memory; 0: host test mode. */
int dm_unpack_gpu(void);
/* bounce_buf: the region fragments are named in (device memory with
 * dm_unpack_gpu()); allowance: region bytes the comm's fragments may hold
 * (0: unthrottled); stream: a CUDA stream for the handle's copy. */
struct dm_unpack *dm_unpack_create(void *bounce_buf, uint64_t allowance, void *stream);
/* How many bytes a data socket may read now for request q (comm lock). */
uint64_t dm_unpack_room(struct dm_comm *c, const struct dm_req *q);
void dm_unpack_free(struct dm_unpack *u);
void dm_unpack_fill_handle(struct dm_unpack *u, ncclNetDeviceHandle_v8_t *h);
/* A slot for a new receive (comm lock): 0, or -1 when all 16 are in use. */
int dm_unpack_reserve(struct dm_comm *c, unsigned *slot);
/* Makes the slot's count visible (comm lock), before test() says done. */
void dm_unpack_publish(struct dm_comm *c, unsigned slot);
int dm_unpack_take(void *arg, const struct dm_rx_frag *f, int n, const char **why);
ncclResult_t dm_irecv_consumed(void *recv_comm, int n, void *request);

/* ---- data path (copy.c) ---- */
#define DM_SEND_MAGIC 0x64736e64u
#define DM_RECV_MAGIC 0x64726376u
#define DM_REQ_MAGIC 0x64726571u
#define DM_MAX_REQS NCCL_NET_MAX_REQUESTS
#define DM_MAX_MSGS (DM_MAX_REQS * DM_MAX_RECVS)

struct dm_comm;

/* A request: one isend, or one irecv of n <= DM_MAX_RECVS buffers. */
struct dm_req {
	uint32_t magic;
	struct dm_comm *comm;
	uint64_t seq;
	int state;		/* DM_REQ_FREE / ACTIVE / DONE */
	int n;
	/* send */
	char *data;
	uint64_t size;
	uint32_t tag;
	unsigned first_sock, nchunks, chunks_left;
	uint64_t chunk;
	int ctrl_done;
	int gpu;		/* data is GPU memory (NCCL_PTR_CUDA) */
	uint32_t tx_id;		/* devmem TX binding of data's memory, 0: none */
	uint64_t tx_off;	/* data's offset in that dma-buf */
	int64_t zc_left;	/* sendmsg calls of finished chunks not yet completed */
	/* recv */
	char *dst[DM_MAX_RECVS];
	unsigned gpu_mask;	/* buffers in GPU memory */
	uint64_t cap[DM_MAX_RECVS];
	uint32_t tags[DM_MAX_RECVS];
	uint64_t got[DM_MAX_RECVS];
	unsigned matched_mask;
	int nmatched;
	int msgs_left;
	unsigned slot;		/* UNPACK: the receive's queue slot */
	uint64_t rcvd;		/* UNPACK: its bytes read so far (atomic) */
	uint64_t posted_ms;	/* when isend/irecv posted it (stall report) */
};
/* CONSUME: UNPACK receive reported done, waiting for irecvConsumed */
enum { DM_REQ_FREE = 0, DM_REQ_ACTIVE, DM_REQ_DONE, DM_REQ_CONSUME };

/* A received message, from its SEND until its last byte is in place. */
struct dm_msg {
	uint64_t idx;
	int live;
	char *dst;
	int gpu;		/* dst is GPU memory */
	uint64_t size;
	uint64_t chunk;
	unsigned first_sock, nchunks, chunks_left;
	struct dm_req *req;
};

/*
 * MSG_ZEROCOPY sends of one data socket in flight (devmem TX, tx.c): the
 * kernel numbers a socket's zerocopy sendmsg calls 0, 1, 2, ... and reports
 * ranges of them done on the error queue, in any order.  Id i's request
 * is owner[i % DM_ZC_RING]; ids head to next - 1 are in flight or done
 * out of order.  Only the socket's worker thread touches it.
 */
#define DM_ZC_RING 256
struct dm_zc {
	int on;			/* SO_ZEROCOPY set on the socket */
	uint32_t head, next;
	int64_t chunk_ids;	/* ids of the current chunk so far */
	uint64_t owner[DM_ZC_RING];
	uint8_t done[DM_ZC_RING];
};

/* Progress of one data socket, owned by one worker thread. */
/* A devmem recvmsg failing (copy.c): since when, without a gap of more
 * than DM_RETRY_GAP_MS between failures; and the last failure. */
struct dm_retry {
	uint64_t since_ms, last_ms;
};

struct dm_sock {
	int fd;
	uint64_t cursor;	/* next request (send) or message (recv) to look at */
	int busy;		/* a chunk is in progress: */
	char *ptr;		/* its next byte */
	uint64_t left;		/* and how many remain */
	uint64_t owner;		/* seq/idx of the current chunk's request/message */
	uint32_t tx_id;		/* the chunk's TX binding (0: plain send) */
	uint64_t tx_off;	/* and the dma-buf offset of ptr */
	int gpu;		/* ptr is GPU memory: */
	uint64_t stg_off, stg_have;	/* send: its next bytes in the stage (gpu.c) */
	struct dm_retry retry;	/* recv: a devmem recvmsg failing (copy.c) */
	struct dm_zc zc;
};

struct dm_worker {
	struct dm_comm *comm;
	int idx;
	int efd;		/* eventfd: wake-up on new work and stop */
	pthread_t tid;
	int started;
	atomic_uint stall_seen;	/* the comm's stall_gen it last logged (written
				 * by its thread, read by test()) */
};

/* Control socket progress (worker 0 owns it). */
struct dm_ctrl {
	int fd;
	uint32_t seq;		/* next seq to send / expected */
	uint8_t buf[DM_HDR_LEN + DM_SEND_LEN + DM_INLINE_MAX];
	size_t off, len;
	/* send side */
	uint64_t cursor;
	/* recv side */
	int state;		/* DM_RX_* (copy.c) */
	struct dm_hdr hdr;
	struct dm_send_desc desc;
	char *inl_dst;
	int inl_gpu;
	uint64_t inl_left;
	struct dm_msg *inl_msg;
	struct dm_retry retry;	/* recv: a devmem recvmsg failing (copy.c) */
};

struct dm_comm {
	uint32_t magic;
	int dev;
	uint64_t comm_id;
	int nsocks, nthreads;
	/* nthreads 0: held by the test() caller moving the bytes (trylock
	 * only); it owns what a progress thread would (sockets, control) */
	pthread_mutex_t progress_lock;
	char peer[64];
	pthread_mutex_t lock;
	atomic_int error;	/* ncclResult_t, 0 while healthy */
	atomic_int stop;
	struct dm_ctrl ctrl;
	struct dm_sock socks[DM_MAX_SOCKS];
	struct dm_worker workers[DM_MAX_THREADS];
	struct dm_req reqs[DM_MAX_REQS];
	uint64_t posted;	/* requests posted so far */
	uint64_t chunk_cursor;	/* chunks of all earlier messages */
	/* recv side */
	struct dm_msg msgs[DM_MAX_MSGS];
	uint64_t nmsgs;		/* messages published to the data workers */
	uint64_t match_seq;	/* request the next SEND is matched to */
	int peer_closed;
	/* devmem RX (recv comms): the region (a reference) and the data
	 * sockets' ntuple rules; NULL: plain recv() */
	struct dm_rx_region *rx;
	int steer_locs[DM_MAX_SOCKS];
	size_t rx_reserved;
	struct dm_rx_count rxcnt;
	/* devmem TX (send comms): bytes of the data sockets sent from a
	 * dma-buf and by plain send; fallback: the errno that made this comm
	 * send plainly (0: none) */
	atomic_ullong tx_dmabuf, tx_plain;
	atomic_int tx_fallback;
	/* UNPACK delivery (recv comms; NULL: copy delivery); unpack_frags:
	 * fragments become metas (their region is readable by the
	 * unpacker), else the plugin copies them */
	struct dm_unpack *unpack;
	int unpack_frags;
	/* CUDA (NULL: libcuda not loaded) */
	struct dm_gpu_comm *gpu;
	/* Stall report (NCCL_DEVMEM_STALL_WARN_S, 0: off): a request in
	 * flight longer than stall_ms is logged by test() (under lock:
	 * stall_seq, the request reported, UINT64_MAX while none is), and
	 * stall_gen is bumped so that each progress thread logs the state it
	 * owns (its sockets; thread 0 the control stream); a thread that has
	 * not done so a second later is named (it is stuck inside a call).
	 * Once that request is done the report is re-armed, ages counted from
	 * then, so one stall is one report. */
	uint64_t stall_ms;
	uint64_t stall_seq;
	uint64_t stall_rearm_ms;	/* ages count from here after a report */
	uint64_t stall_told_ms;		/* when the last report was made */
	int stall_checked;		/* its threads' answers looked at */
	atomic_uint stall_gen;
};

/* Takes ownership of the fds, of the reference on rx and of the rules at
 * steer_locs[nsocks] (all let go on failure too).  `mode` is logged.
 * NULL on failure. */
struct dm_comm *dm_comm_create(int is_send, int dev, const struct dm_ctx *ctx, int ctrl_fd,
			       const int *data_fds, int nsocks, const char *peer,
			       struct dm_rx_region *rx, const int *steer_locs, size_t rx_reserved,
			       const char *mode);
/* Returns the comm when `p` is a live send (want 1), recv (0) or either (-1) comm. */
struct dm_comm *dm_comm_check(void *p, int want);
/* The first error of a comm wins: logged, the sockets shut down. */
void dm_comm_error(struct dm_comm *c, ncclResult_t err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A send request is done once its control message, its chunks and their
 * zerocopy completions are; under the comm's lock. */
void dm_send_maybe_done(struct dm_req *q);
/* Wakes the comm's progress threads. */
void dm_comm_wake(struct dm_comm *c);
ncclResult_t dm_isend(void *send_comm, void *data, uint64_t size, int tag, void *mh,
		      void **request);
ncclResult_t dm_irecv(void *recv_comm, int n, void **data, const uint64_t *sizes,
		      const int *tags, void **mhs, void **request);
ncclResult_t dm_test(void *request, int *done, int *sizes);
ncclResult_t dm_close_comm(void *comm, int want);

/* ---- memory registration (mr.c) ---- */
#define DM_MR_MAGIC 0x646d7272u
struct dm_mr {
	uint32_t magic;
	void *comm;
	char *base;
	size_t size;
	int type;
	/* regMrDmaBuf on a send comm: the TX binding (held by tx_nl) and
	 * base's offset in the dma-buf; tx_id 0: plain send */
	struct dm_nl tx_nl;
	uint32_t tx_id;
	uint64_t dmabuf_off;
};
ncclResult_t dm_reg_mr(void *comm, void *data, size_t size, int type, void **mh);
ncclResult_t dm_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
			      int fd, void **mh);
ncclResult_t dm_dereg_mr(void *comm, void *mh);
/* The memory handle when [data, data + size) lies in the region `mh`
 * registered on `comm`, else NULL. */
const struct dm_mr *dm_mr_covers(const void *comm, void *mh, const void *data, uint64_t size);

/* ---- devmem TX (tx.c) ---- */
/* Binds the dma-buf of a send comm's registration for transmit (mr->tx_id,
 * mr->tx_nl); refused: 0 with plain send, the reason logged once per
 * device.  -errno only for what makes the registration itself wrong. */
int dm_tx_bind(struct dm_mr *mr, int dev, int dmabuf_fd);
void dm_tx_unbind(struct dm_mr *mr);
/* Sends socket k's current chunk (devmem or plain); as data_send_step's
 * loop: 1 progress, 0 blocked (*ev), -1 error (set on the comm). */
int dm_tx_chunk(struct dm_comm *c, int k, short *ev, uint64_t *moved, uint64_t budget);
/* Reads socket k's zerocopy completions: how many reports, or -1 (error
 * set on the comm). */
int dm_tx_reap(struct dm_comm *c, int k);

/* ---- CUDA driver API (cuda.c); results are CUresult, 0: success ---- */
/* 1 when libcuda is loaded and initialised (tried once); else *why says. */
int dm_cuda_loaded(const char **why);
const char *dm_cuda_error(int r);
/* 1 when CUDA modules load eagerly (CUDA_MODULE_LOADING=EAGER) */
int dm_cuda_eager(void);
int dm_cuda_ctx(void **ctx);		/* the thread's current context */
int dm_cuda_set_ctx(void *ctx);
int dm_cuda_device(int *ord);		/* of the current context */
int dm_cuda_dmabuf_supported(int ord);
/* 1 when [p, p + size) begins and ends in device memory */
int dm_cuda_is_device(const void *p, size_t size);
int dm_cuda_alloc(void **p, size_t size);
void dm_cuda_free(void *p);
/* pinned, mapped host memory; its device address in *dev_alias if asked */
int dm_cuda_host_alloc(void **p, void **dev_alias, size_t size);
void dm_cuda_host_free(void *p);
int dm_cuda_dmabuf_fd(void *p, size_t size, int *fd);
int dm_cuda_copy(void *dst, const void *src, size_t n, void *stream);	/* any direction */
int dm_cuda_stream(void **stream);
void dm_cuda_stream_free(void *stream);
int dm_cuda_sync(void *stream);

/* ---- GPU memory on the data path (gpu.c) ---- */
#define DM_GPU_STAGE (512u << 10)	/* pinned stage per socket */
#define DM_GPU_CTRL DM_MAX_SOCKS	/* stage index of the control socket */
#define DM_GPU_POOL_PAGES 2048		/* test mode: a recv comm's region pages */
struct dm_gpu_region;
struct dm_gpu_comm {
	void *ctx;		/* CUcontext the comm was made in (NULL: none) */
	void *stage[DM_GPU_CTRL + 1];	/* per socket, used by its thread only */
	void *stream[DM_GPU_CTRL + 1];
	/* test mode, recv comms: the share of the GPU's RX region */
	struct dm_gpu_region *region;
	unsigned slot;
	uint64_t pool_off;
	uint32_t free[DM_GPU_POOL_PAGES];	/* free pages; comm lock */
	unsigned nfree;
	int starved;		/* a socket found none; comm lock */
};
/* NCCL_DEVMEM_TEST_GPU=1 with CUDA loaded (decided once, logged). */
int dm_gpu_test_mode(void);
/* For a comm made in this thread (its CUDA context; in the GPU test mode
 * its stages, streams and share of the region); appends what it chose to
 * mode.  NULL: out of memory. */
struct dm_gpu_comm *dm_gpu_comm_create(int is_recv, int dev, int nsocks, int has_rx, char *mode,
				       size_t ml);
void dm_gpu_comm_free(struct dm_gpu_comm *g);
/* The region fragments are named in for UNPACK, or NULL. */
void *dm_gpu_bounce(const struct dm_gpu_comm *g);
/* Bytes a data socket may read into the region now (UINT64_MAX: no limit). */
uint64_t dm_gpu_room(struct dm_comm *c);
/* Pages back to the comm's free list (comm lock); pages it did not hand
 * out are dropped with a WARN.  1: a socket waits for pages, wake the comm
 * (after unlocking). */
int dm_gpu_pages_put(struct dm_comm *c, const uint32_t *pages, int n);
/* Synchronous copy on socket k's stream: 0, or -1 with *why. */
int dm_gpu_copy(struct dm_comm *c, int k, void *dst, const void *src, size_t n,
		const char **why);
/* Plain send of socket k's current chunk of GPU memory, through its stage;
 * as send(). */
ssize_t dm_gpu_send(struct dm_comm *c, int k);
/* As dm_rx_recv() into GPU memory at dst, through socket k's stage; sink:
 * UNPACK's, used for fragments the unpacker can read.  -1 with errno
 * ENOBUFS: no free page now (the comm is woken when there is one). */
ssize_t dm_gpu_recv(struct dm_comm *c, int k, int fd, char *dst, size_t len,
		    struct dm_unpack_sink *sink, const char **why);

#endif
