// SPDX-License-Identifier: GPL-2.0
/*
 * UNPACK delivery: NCCL's own kernel gathers the received fragments from
 * the RX region, the plugin only says where they are.
 *
 * With NCCL_NET_DEVICE_UNPACK (version 0x7), accept() hands NCCL a handle
 * {meta, bounce_buf, head}: `meta` is a queue of 16 slots, one per receive
 * in posting order, each a list of up to 2048 {src_off, len, dst_off}
 * (fragment at bounce_buf + src_off goes to the receive buffer + dst_off)
 * and a count.  A receive's slot is filled while its bytes arrive; test()
 * publishes the count (after a fence) and reports the receive done; NCCL's
 * kernel increments head, copies, and NCCL then calls irecvConsumed() for
 * the receive, in order, which gives the fragments' tokens back and frees
 * the slot.  Bytes that arrived in host memory (a flow that was not
 * steered, an skb's linear part, inline payloads) are written into the
 * receive buffer by the plugin itself and have no meta.
 *
 * NCCL_DEVMEM_UNPACK=1 is the mode for NCCL: it needs CUDA; the queue is
 * pinned host memory mapped for the GPU, the handle device memory (NCCL's
 * kernel writes head back into it), and only fragments in device memory
 * become metas (the GPU test mode's region, gpu.c; a udmabuf region's
 * fragments are copied by the plugin).  NCCL_DEVMEM_UNPACK=host is the
 * harness's test mode: queue and handle in host memory, the harness
 * playing NCCL's kernel on the udmabuf region.  NCCL also needs the SIMPLE
 * protocol only, no LL buffers for p2p, and no PAT or user-buffer
 * registration (LL/LL128 receives and registered buffers bypass the
 * unpack), which the plugin checks once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static pthread_once_t unpack_once = PTHREAD_ONCE_INIT;
static int unpack_on, unpack_gpu;

/* Each must be set to the value given, or NCCL would bypass the unpack. */
static const char *const unpack_env[][2] = {
	{ "NCCL_PROTO", "Simple" },
	{ "NCCL_PAT_ENABLE", "0" },
	{ "NCCL_LOCAL_REGISTER", "0" },
	{ "NCCL_GRAPH_REGISTER", "0" },
};

static void unpack_decide(void)
{
	const char *mode = getenv(DM_ENV_UNPACK);
	unsigned i;

	const char *why;

	if (!mode || !strcmp(mode, "0"))
		return;
	if (!strcmp(mode, "1")) {
		if (!dm_cuda_loaded(&why)) {
			DM_WARN("%s=1: UNPACK for NCCL's GPU kernel needs CUDA (%s): copy delivery",
				DM_ENV_UNPACK, why);
			return;
		}
		unpack_gpu = 1;
	} else if (strcmp(mode, "host")) {
		DM_WARN("%s=%s: not 0, 1 or \"host\" (the harness's test mode): copy delivery",
			DM_ENV_UNPACK, mode);
		return;
	}
	mode = getenv("NCCL_ALLOC_P2P_NET_LL_BUFFERS");
	if (mode && strcmp(mode, "0")) {
		DM_WARN("%s needs NCCL_ALLOC_P2P_NET_LL_BUFFERS unset or 0 (LL receives would take "
			"UNPACK slots): copy delivery", DM_ENV_UNPACK);
		return;
	}
	for (i = 0; i < sizeof(unpack_env) / sizeof(unpack_env[0]); i++) {
		const char *v = getenv(unpack_env[i][0]);

		if (!v || strcasecmp(v, unpack_env[i][1])) {
			DM_WARN("%s needs %s=%s (it is %s): copy delivery instead of UNPACK",
				DM_ENV_UNPACK, unpack_env[i][0], unpack_env[i][1], v ? v : "unset");
			return;
		}
	}
	DM_INFO(NCCL_INIT | NCCL_NET, "UNPACK delivery (netDeviceType UNPACK, version 0x%x), "
		"queue and handle in %s", NCCL_NET_DEVICE_UNPACK_VERSION,
		unpack_gpu ? "pinned and device memory" : "host memory (test mode)");
	unpack_on = 1;
}

int dm_unpack_enabled(void)
{
	pthread_once(&unpack_once, unpack_decide);
	return unpack_on;
}

int dm_unpack_gpu(void)
{
	pthread_once(&unpack_once, unpack_decide);
	return unpack_gpu;
}

struct dm_unpack *dm_unpack_create(void *bounce_buf, uint64_t allowance, void *stream)
{
	struct dm_unpack *u = calloc(1, sizeof(*u));
	void *meta_dev = NULL;
	int err;

	if (!u)
		return NULL;
	u->gpu = dm_unpack_gpu();
	if (u->gpu) {
		/* pinned, mapped: the GPU reads the metas where the plugin writes */
		err = dm_cuda_host_alloc((void **)&u->meta, &meta_dev, sizeof(*u->meta));
		if (!err)
			err = dm_cuda_alloc((void **)&u->dev_handle, sizeof(*u->dev_handle));
		if (err) {
			DM_WARN("UNPACK queue: %s", dm_cuda_error(err));
			dm_unpack_free(u);
			return NULL;
		}
	} else {
		u->meta = aligned_alloc(16, sizeof(*u->meta));
		if (!u->meta) {
			free(u);
			return NULL;
		}
		meta_dev = u->meta;
	}
	memset(u->meta, 0, sizeof(*u->meta));
	u->handle.meta = meta_dev;
	u->handle.bounce_buf = bounce_buf;
	u->handle.head = UINT64_MAX;	/* the kernel increments before each copy */
	u->allowance = allowance;
	if (u->gpu) {
		void *own = NULL;

		/* never the legacy stream: it waits for the application's */
		if (!stream) {
			err = dm_cuda_stream(&own);
			if (err) {
				DM_WARN("UNPACK handle: %s", dm_cuda_error(err));
				dm_unpack_free(u);
				return NULL;
			}
			stream = own;
		}
		err = dm_cuda_copy(u->dev_handle, &u->handle, sizeof(u->handle), stream);
		if (!err)
			err = dm_cuda_sync(stream);
		dm_cuda_stream_free(own);
		if (err) {
			DM_WARN("UNPACK handle: %s", dm_cuda_error(err));
			dm_unpack_free(u);
			return NULL;
		}
	}
	return u;
}

void dm_unpack_free(struct dm_unpack *u)
{
	if (!u)
		return;
	if (u->gpu) {
		dm_cuda_host_free(u->meta);
		dm_cuda_free(u->dev_handle);
	} else {
		free(u->meta);
	}
	free(u);
}

void dm_unpack_fill_handle(struct dm_unpack *u, ncclNetDeviceHandle_v8_t *h)
{
	h->netDeviceType = NCCL_NET_DEVICE_UNPACK;
	h->netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
	h->handle = u->gpu ? (void *)u->dev_handle : (void *)&u->handle;
	h->size = sizeof(u->handle);
	h->needsProxyProgress = 1;
}

/* Whether a fragment extends the meta {src, dst, len}: contiguous at both
 * ends, and the length still fits. */
static int extends(uint64_t src, uint64_t dst, uint64_t len, uint64_t off, uint64_t to,
		   uint32_t size)
{
	return src + len == off && dst + len == to && len + size <= UINT32_MAX;
}

int dm_unpack_take(void *arg, const struct dm_rx_frag *f, int n, const char **why)
{
	struct dm_unpack_sink *k = arg;
	struct dm_comm *c = k->comm;
	struct dm_unpack *u = c->unpack;
	unsigned s = k->slot;
	int i;

	/* all checked before any is taken: on failure the caller gives
	 * every token of the recvmsg back */
	for (i = 0; i < n; i++)
		if (f[i].off > UINT32_MAX) {
			*why = "fragment past the 4 GiB an UNPACK offset can name";
			return -1;
		}
	pthread_mutex_lock(&c->lock);
	if (u->ntok[s] + (unsigned)n > DM_UNPACK_MAX_TOKENS ||
	    u->nmeta[s] + (unsigned)n > DM_UNPACK_MAX_METAS) {
		int need = 0;
		unsigned nm = u->nmeta[s];
		const union dm_load_meta *last = nm ? &u->meta->mem[s][nm - 1] : NULL;
		uint64_t lsrc = last ? last->src_off : 0, ldst = last ? last->dst_off : 0;
		uint64_t llen = last ? last->len : 0;

		/* exactly: how many metas after merging */
		for (i = 0; i < n; i++) {
			uint64_t dst = k->dst_off + f[i].pos;

			if (nm + (unsigned)need && extends(lsrc, ldst, llen, f[i].off, dst, f[i].size)) {
				llen += f[i].size;
			} else {
				need++;
				lsrc = f[i].off;
				ldst = dst;
				llen = f[i].size;
			}
		}
		if (u->ntok[s] + (unsigned)n > DM_UNPACK_MAX_TOKENS ||
		    nm + (unsigned)need > DM_UNPACK_MAX_METAS) {
			pthread_mutex_unlock(&c->lock);
			*why = "more than 2048 fragments in one receive (the UNPACK queue's limit)";
			return -1;
		}
	}
	{
		union dm_load_meta *mem = u->meta->mem[s];
		union dm_load_meta *last = u->nmeta[s] ? &mem[u->nmeta[s] - 1] : NULL;
		uint32_t *tok = &u->tok[s][u->ntok[s]];
		uint8_t *tok_sock = &u->tok_sock[s][u->ntok[s]];
		unsigned nm = u->nmeta[s];
		uint64_t bytes = 0;

		for (i = 0; i < n; i++) {
			uint64_t dst = k->dst_off + f[i].pos;

			/* one copy for what is contiguous at both ends */
			if (last && extends(last->src_off, last->dst_off, last->len, f[i].off,
					    dst, f[i].size)) {
				last->len += f[i].size;
			} else {
				last = &mem[nm++];
				last->src_off = (uint32_t)f[i].off;
				last->len = f[i].size;
				last->dst_off = dst;
			}
			tok[i] = f[i].token;
			tok_sock[i] = (uint8_t)k->sock;
			bytes += f[i].size;
		}
		u->nmeta[s] = nm;
		u->ntok[s] += (unsigned)n;
		/* a fragment holds its page of the region until consumed */
		u->bytes[s] += (uint64_t)n * DM_RX_PAGE;
		u->held += (uint64_t)n * DM_RX_PAGE;
		u->frag_bytes += bytes;
		u->frags += (uint64_t)n;
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

uint64_t dm_unpack_room(struct dm_comm *c, const struct dm_req *q)
{
	struct dm_unpack *u = c->unpack;
	uint64_t first = c->posted - (u->tail - u->head);	/* oldest not consumed */
	uint64_t seq, need = 0, done_held = 0, per, room;

	/* no region, or a comm that was not steered: nothing held for long */
	if (!c->unpack_frags || !u->allowance)
		return UINT64_MAX;
	for (seq = first; seq < c->posted; seq++) {
		const struct dm_req *o = &c->reqs[seq % DM_MAX_REQS];

		if (o->state == DM_REQ_ACTIVE)
			break;
		done_held += u->bytes[o->slot];	/* done, NCCL will consume it */
	}
	/* in region pages: payload per fragment as seen so far (MTU 1500's
	 * 1448 until then) */
	per = u->frags ? u->frag_bytes / u->frags : 1448;
	if (!per)
		per = 1;
	if (q->seq == seq) {
		/* The oldest unfinished receive waits only for pages that done
		 * receives hold (NCCL consumes them on its own), never for
		 * pages of later ones: their consumption waits for it. */
		if (!done_held)
			return UINT64_MAX;
	} else if (seq < c->posted) {
		const struct dm_req *o = &c->reqs[seq % DM_MAX_REQS];
		/* its message's size once matched, else the posted size */
		uint64_t size = o->nmatched ? o->got[0] : o->cap[0];
		uint64_t got = __atomic_load_n(&o->rcvd, __ATOMIC_RELAXED);

		/* later receives leave the oldest what it still needs */
		need = size > got ? size - got : 0;
		need = (need + per - 1) / per * DM_RX_PAGE;
	}
	if (u->held + need + DM_RX_PAGE > u->allowance)
		return 0;
	room = (u->allowance - u->held - need) / DM_RX_PAGE * per;
	return room ? room : 1;
}

int dm_unpack_reserve(struct dm_comm *c, unsigned *slot)
{
	struct dm_unpack *u = c->unpack;

	if (u->tail - u->head >= DM_UNPACK_DEPTH)
		return -1;
	*slot = (unsigned)(u->tail++ % DM_UNPACK_DEPTH);
	u->nmeta[*slot] = 0;
	u->ntok[*slot] = 0;
	u->bytes[*slot] = 0;
	return 0;
}

void dm_unpack_publish(struct dm_comm *c, unsigned slot)
{
	struct dm_unpack *u = c->unpack;

	/* the metas before the count, for a reader on another processor */
	atomic_thread_fence(memory_order_seq_cst);
	((volatile uint64_t *)u->meta->cnt)[slot] = u->nmeta[slot];
	atomic_thread_fence(memory_order_seq_cst);
}

ncclResult_t dm_irecv_consumed(void *recv_comm, int n, void *request)
{
	struct dm_comm *c = dm_comm_check(recv_comm, 0);
	struct dm_req *q = request;
	struct dm_unpack *u;
	uint32_t toks[DM_UNPACK_MAX_TOKENS];
	unsigned slot;
	int k, i, nt, err, emul;

	if (!c) {
		DM_WARN("irecvConsumed: %p is not a recv comm of this plugin", recv_comm);
		return ncclInvalidArgument;
	}
	if (!q || q->magic != DM_REQ_MAGIC || q->comm != c) {
		DM_WARN("irecvConsumed: %p is not a request of recv comm %p", request, recv_comm);
		return ncclInvalidArgument;
	}
	u = c->unpack;
	if (!u)
		return ncclSuccess;	/* copy delivery: the tokens went back at once */
	pthread_mutex_lock(&c->lock);
	slot = (unsigned)(u->head % DM_UNPACK_DEPTH);
	if (q->state != DM_REQ_CONSUME || q->slot != slot || n != q->n) {
		pthread_mutex_unlock(&c->lock);
		DM_WARN("irecvConsumed: request %p (%d buffers) is not the oldest receive done and "
			"not yet consumed", request, n);
		return ncclInvalidArgument;
	}
	/* each socket's tokens to that socket; the test mode's pages to the
	 * comm's free list */
	err = 0;
	emul = c->gpu && dm_gpu_bounce(c->gpu) && !c->rx;
	if (emul)
		dm_gpu_pages_put(c, u->tok[slot], (int)u->ntok[slot]);
	for (k = 0; k < c->nsocks && !err && !emul; k++) {
		for (i = nt = 0; i < (int)u->ntok[slot]; i++)
			if (u->tok_sock[slot][i] == k)
				toks[nt++] = u->tok[slot][i];
		if (nt)
			err = dm_rx_tokens_return(c->socks[k].fd, toks, nt);
	}
	u->ntok[slot] = 0;
	u->nmeta[slot] = 0;
	u->held -= u->bytes[slot];
	u->bytes[slot] = 0;
	u->head++;
	q->state = DM_REQ_FREE;
	pthread_mutex_unlock(&c->lock);
	dm_comm_wake(c);	/* room for receives held back */
	if (err) {
		dm_comm_error(c, ncclSystemError, "SO_DEVMEM_DONTNEED: %s", strerror(-err));
		return ncclSystemError;
	}
	return ncclSuccess;
}
