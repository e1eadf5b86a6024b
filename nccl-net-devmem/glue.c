// SPDX-License-Identifier: GPL-2.0
/*
 * API glue: the two exported tables, ncclNetPlugin_v8 (NCCL 2.20 to 2.30)
 * and ncclNetPlugin_v11 (NCCL 2.28 and later), and the shims between their
 * signatures and the plugin's one implementation.  Nothing else in the
 * library is exported (-fvisibility=hidden).
 *
 * v8: init() is called once per process; there is no per-communicator
 * context and no finalize.  v11: init() is called once per communicator
 * and returns a context (struct dm_ctx) that listen/connect take and
 * finalize frees.  Either way all state lives in the listen/send/recv comm
 * objects; what is process-wide (the device table, the logger, connect
 * attempts in progress) is behind a mutex or atomic.
 *
 * Properties and optional entry points:
 *   - ptrSupport is NCCL_PTR_HOST, plus CUDA|DMABUF in the GPU test mode
 *     (gpu.c); a devmem NIC with a GPU region is future work;
 *   - netDeviceType is UNPACK (version 0x7) with NCCL_DEVMEM_UNPACK=1 (for
 *     NCCL, with CUDA) or =host (the harness's test mode), else HOST;
 *     irecvConsumed gives an UNPACK receive's tokens back (a no-op with
 *     copy delivery); getDeviceMr is NULL (NCCL checks before calling);
 *   - regMrDmaBuf binds the dma-buf for devmem TX (tx.c); NCCL calls it
 *     for GPU memory when ptrSupport has DMABUF, the harness with udmabufs;
 *   - iflush has nothing to flush: host memory, and GPU memory the plugin
 *     wrote with copies it waited for: *request = NULL;
 *   - makeVDevice and setNetAttr are NULL (optional in v11).
 */
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define DM_EXPORT __attribute__((visibility("default")))
#define DM_MAX_COMMS 65536

static ncclResult_t get_props(int dev, ncclNetProperties_v11_t *p)
{
	const struct dm_dev *d = dm_dev_get(dev);

	if (!p)
		return ncclInvalidArgument;
	if (!d) {
		DM_WARN("getProperties: no device %d", dev);
		return ncclInvalidArgument;
	}
	memset(p, 0, sizeof(*p));
	p->name = (char *)d->name;
	p->pciPath = d->pci_path;
	p->guid = (uint64_t)dev;
	p->ptrSupport = NCCL_PTR_HOST;
	if (dm_gpu_test_mode())
		p->ptrSupport |= NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
	p->regIsGlobal = 0;
	p->forceFlush = 0;
	p->speed = d->speed;
	p->port = 0;
	p->latency = 0;
	p->maxComms = DM_MAX_COMMS;
	/* One buffer per receive: NCCL issues the sends of a multi-recv's
	 * tags independently, so a sender could run a group ahead of the
	 * receiver's grouping; grouping needs a receiver-to-sender "posted"
	 * message first (the comm itself handles up to DM_MAX_RECVS).
	 */
	p->maxRecvs = 1;
	if (dm_unpack_enabled()) {
		p->netDeviceType = NCCL_NET_DEVICE_UNPACK;
		p->netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
	} else {
		p->netDeviceType = NCCL_NET_DEVICE_HOST;
		p->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
	}
	p->vProps.ndevs = 1;
	p->vProps.devs[0] = dev;
	p->maxP2pBytes = DM_MAX_MSG_SIZE;
	p->maxCollBytes = DM_MAX_MSG_SIZE;
	p->maxMultiRequestSize = 1;
	return ncclSuccess;
}

static ncclResult_t init_common(ncclDebugLogger_t log)
{
	const char *why;

	dm_set_logger(log);
	if (!dm_cuda_loaded(&why))
		DM_INFO(NCCL_INIT | NCCL_NET, "host memory only: %s", why);
	if (dm_devices_init() > 0)
		return ncclSuccess;
	DM_INFO(NCCL_INIT | NCCL_NET, "no usable interface: plugin not used");
	return ncclInternalError;
}

static ncclResult_t devices(int *ndev)
{
	if (!ndev)
		return ncclInvalidArgument;
	*ndev = dm_devices_init();
	return ncclSuccess;
}

static ncclResult_t iflush(void *recv_comm, int n, void **data, int *sizes, void **mhs,
			   void **request)
{
	(void)n;
	(void)data;
	(void)sizes;
	(void)mhs;
	if (!request || !dm_comm_check(recv_comm, 0))
		return ncclInvalidArgument;
	*request = NULL;	/* host memory: nothing to flush */
	return ncclSuccess;
}

static ncclResult_t close_send(void *send_comm)
{
	return dm_close_comm(send_comm, 1);
}

static ncclResult_t close_recv(void *recv_comm)
{
	return dm_close_comm(recv_comm, 0);
}

/* ---------- v8 ---------- */

static ncclResult_t init_v8(ncclDebugLogger_t log)
{
	return init_common(log);
}

static ncclResult_t get_props_v8(int dev, ncclNetProperties_v8_t *p8)
{
	ncclNetProperties_v11_t p;
	ncclResult_t r;

	if (!p8)
		return ncclInvalidArgument;
	r = get_props(dev, &p);
	if (r != ncclSuccess)
		return r;
	memset(p8, 0, sizeof(*p8));
	p8->name = p.name;
	p8->pciPath = p.pciPath;
	p8->guid = p.guid;
	p8->ptrSupport = p.ptrSupport;
	p8->regIsGlobal = p.regIsGlobal;
	p8->speed = p.speed;
	p8->port = p.port;
	p8->latency = p.latency;
	p8->maxComms = p.maxComms;
	p8->maxRecvs = p.maxRecvs;
	p8->netDeviceType = p.netDeviceType;
	p8->netDeviceVersion = p.netDeviceVersion;
	return ncclSuccess;
}

static ncclResult_t listen_v8(int dev, void *handle, void **listen_comm)
{
	return dm_listen(NULL, dev, handle, listen_comm);
}

static ncclResult_t connect_v8(int dev, void *handle, void **send_comm,
			       ncclNetDeviceHandle_v8_t **dev_comm)
{
	(void)dev_comm;		/* no device offload on the send side */
	return dm_connect(NULL, dev, handle, send_comm);
}

static ncclResult_t accept_v8(void *listen_comm, void **recv_comm,
			      ncclNetDeviceHandle_v8_t **dev_comm)
{
	/* NCCL allocates one only for netDeviceType UNPACK */
	return dm_accept(listen_comm, recv_comm, dev_comm ? *dev_comm : NULL);
}

static ncclResult_t isend_v8(void *send_comm, void *data, int size, int tag, void *mh,
			     void **request)
{
	if (request)
		*request = NULL;
	if (size < 0) {
		DM_WARN("isend: negative size %d", size);
		return ncclInvalidArgument;
	}
	return dm_isend(send_comm, data, (uint64_t)size, tag, mh, request);
}

static ncclResult_t irecv_v8(void *recv_comm, int n, void **data, int *sizes, int *tags,
			     void **mhs, void **request)
{
	uint64_t sz[DM_MAX_RECVS];
	int i;

	if (request)
		*request = NULL;
	if (n < 1 || n > DM_MAX_RECVS || !sizes) {
		DM_WARN("irecv: %d buffers (1 to %d supported)", n, DM_MAX_RECVS);
		return ncclInvalidArgument;
	}
	for (i = 0; i < n; i++) {
		if (sizes[i] < 0) {
			DM_WARN("irecv: negative size %d", sizes[i]);
			return ncclInvalidArgument;
		}
		sz[i] = (uint64_t)sizes[i];
	}
	return dm_irecv(recv_comm, n, data, sz, tags, mhs, request);
}

DM_EXPORT ncclNet_v8_t ncclNetPlugin_v8 = {
	.name = DM_PLUGIN_NAME,
	.init = init_v8,
	.devices = devices,
	.getProperties = get_props_v8,
	.listen = listen_v8,
	.connect = connect_v8,
	.accept = accept_v8,
	.regMr = dm_reg_mr,
	.regMrDmaBuf = dm_reg_mr_dmabuf,
	.deregMr = dm_dereg_mr,
	.isend = isend_v8,
	.irecv = irecv_v8,
	.iflush = iflush,
	.test = dm_test,
	.closeSend = close_send,
	.closeRecv = close_recv,
	.closeListen = dm_close_listen,
	.getDeviceMr = NULL,
	.irecvConsumed = dm_irecv_consumed,
};

/* ---------- v11 ---------- */

static struct dm_ctx *ctx_check(void *ctx)
{
	struct dm_ctx *c = ctx;

	if (c && c->magic != DM_CTX_MAGIC)
		return NULL;
	return c;
}

static ncclResult_t init_v11(void **ctx, uint64_t comm_id, ncclNetCommConfig_v11_t *config,
			     ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
	struct dm_ctx *c;
	ncclResult_t r;

	(void)prof;		/* no profiler events yet */
	if (!ctx)
		return ncclInvalidArgument;
	*ctx = NULL;
	r = init_common(log);
	if (r != ncclSuccess)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	c->magic = DM_CTX_MAGIC;
	c->comm_id = comm_id;
	c->traffic_class = config ? config->trafficClass : -1;
	*ctx = c;
	return ncclSuccess;
}

static ncclResult_t finalize_v11(void *ctx)
{
	struct dm_ctx *c = ctx;

	if (!c || c->magic != DM_CTX_MAGIC) {
		DM_WARN("finalize: %p is not a context of this plugin", ctx);
		return ncclInvalidArgument;
	}
	c->magic = 0;
	free(c);
	return ncclSuccess;
}

static ncclResult_t listen_v11(void *ctx, int dev, void *handle, void **listen_comm)
{
	struct dm_ctx *c = ctx_check(ctx);

	if (ctx && !c) {
		DM_WARN("listen: %p is not a context of this plugin", ctx);
		return ncclInvalidArgument;
	}
	return dm_listen(c, dev, handle, listen_comm);
}

static ncclResult_t connect_v11(void *ctx, int dev, void *handle, void **send_comm,
				ncclNetDeviceHandle_v11_t **dev_comm)
{
	struct dm_ctx *c = ctx_check(ctx);

	(void)dev_comm;
	if (ctx && !c) {
		DM_WARN("connect: %p is not a context of this plugin", ctx);
		return ncclInvalidArgument;
	}
	return dm_connect(c, dev, handle, send_comm);
}

static ncclResult_t isend_v11(void *send_comm, void *data, size_t size, int tag, void *mh,
			      void *phandle, void **request)
{
	(void)phandle;		/* profiler handle: unused */
	return dm_isend(send_comm, data, (uint64_t)size, tag, mh, request);
}

static ncclResult_t irecv_v11(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			      void **mhs, void **phandles, void **request)
{
	uint64_t sz[DM_MAX_RECVS];
	int i;

	(void)phandles;
	if (request)
		*request = NULL;
	if (n < 1 || n > DM_MAX_RECVS || !sizes) {
		DM_WARN("irecv: %d buffers (1 to %d supported)", n, DM_MAX_RECVS);
		return ncclInvalidArgument;
	}
	for (i = 0; i < n; i++)
		sz[i] = (uint64_t)sizes[i];
	return dm_irecv(recv_comm, n, data, sz, tags, mhs, request);
}

DM_EXPORT ncclNet_v11_t ncclNetPlugin_v11 = {
	.name = DM_PLUGIN_NAME,
	.init = init_v11,
	.devices = devices,
	.getProperties = get_props,
	.listen = listen_v11,
	.connect = connect_v11,
	.accept = accept_v8,
	.regMr = dm_reg_mr,
	.regMrDmaBuf = dm_reg_mr_dmabuf,
	.deregMr = dm_dereg_mr,
	.isend = isend_v11,
	.irecv = irecv_v11,
	.iflush = iflush,
	.test = dm_test,
	.closeSend = close_send,
	.closeRecv = close_recv,
	.closeListen = dm_close_listen,
	.getDeviceMr = NULL,
	.irecvConsumed = dm_irecv_consumed,
	.makeVDevice = NULL,
	.finalize = finalize_v11,
	.setNetAttr = NULL,
};
