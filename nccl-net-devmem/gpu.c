// SPDX-License-Identifier: GPL-2.0
/*
 * GPU memory on the data path: what NCCL registers as NCCL_PTR_CUDA.
 *
 * Sending.  A chunk of GPU memory bound for devmem TX goes out as any
 * dma-buf chunk does (tx.c: the NIC reads the GPU memory itself).  Without
 * a TX binding (bind-tx refused, a NIC without devmem) the chunk is staged:
 * copied to a pinned host buffer of its socket, then sent plainly.
 *
 * Receiving.  The bytes of a recvmsg land in the socket's pinned host
 * stage; what is in the RX region (fragments) stays there.  Copy delivery
 * then copies both into the receive buffer (host to device, region to
 * device) on the socket's stream and gives the fragments back once the
 * copies are done; UNPACK delivery leaves the fragments to NCCL's kernel
 * (unpack.c) and copies only the stage's bytes.
 *
 * GPU test mode (NCCL_DEVMEM_TEST_GPU=1): no machine here has both a GPU
 * and a devmem NIC.  In this mode the plugin advertises CUDA|DMABUF on any
 * NIC, so NCCL hands it GPU buffers and GPU dma-bufs; and each GPU gets an
 * RX region of device memory (exported as a dma-buf and offered to
 * bind-rx, which the NIC refuses) whose pages stand in for the NIC's: the
 * bytes a data socket receives are placed at scattered 4 KiB pages of the
 * comm's share of the region, one fragment per page, and from there take
 * exactly the path devmem fragments take, tokens (page numbers) given back
 * in irecvConsumed with UNPACK.  It proves the GPU half of devmem on a
 * machine without a devmem NIC; it is slower than plain staging and off by
 * default.
 *
 * Locking: a comm's stages and streams belong to the one thread that
 * serves the socket (index DM_GPU_CTRL: the control socket, worker 0); its
 * free pages are under the comm's lock; the regions' registry under
 * gpu_lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin.h"

#define DM_GPU_MAX_DEVS 64
#define DM_GPU_SLOT_BYTES ((uint64_t)DM_GPU_POOL_PAGES * DM_RX_PAGE)
#define DM_GPU_DEFAULT_REGION_MB 256
#define DM_GPU_MAX_SLOTS 64

struct dm_gpu_region {
	int refs;		/* gpu_lock */
	int ord;		/* CUDA device */
	char *base;		/* device memory */
	size_t size;
	unsigned nslots;
	uint64_t used;		/* slots given to comms; gpu_lock */
};

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dm_gpu_region *gpu_regions[DM_GPU_MAX_DEVS];

static pthread_once_t test_once = PTHREAD_ONCE_INIT;
static int test_on;

static void test_decide(void)
{
	const char *why;

	if (!dm_env_int(DM_ENV_TEST_GPU, 0, 0, 1))
		return;
	if (!dm_cuda_loaded(&why)) {
		DM_WARN("%s=1 needs CUDA: %s; host memory only", DM_ENV_TEST_GPU, why);
		return;
	}
	/* A thread's first launch of a kernel not loaded yet waits, holding
	 * the context's lock, for the GPU to drain; NCCL's kernel waits for
	 * the plugin's copy, which waits for that lock: a deadlock (seen on
	 * H200 with NCCL 2.28 and PyTorch: the first collective never ends). */
	if (!dm_cuda_eager()) {
		DM_WARN("%s=1 needs CUDA_MODULE_LOADING=EAGER: with lazy loading the plugin's "
			"copies to and from GPU memory can wait for NCCL's running kernel, which "
			"waits for them; host memory only", DM_ENV_TEST_GPU);
		return;
	}
	DM_INFO(NCCL_INIT | NCCL_NET, "%s=1: GPU test mode: CUDA|DMABUF advertised on every NIC, "
		"RX fragments emulated in a GPU region", DM_ENV_TEST_GPU);
	test_on = 1;
}

int dm_gpu_test_mode(void)
{
	pthread_once(&test_once, test_decide);
	return test_on;
}

/* Says what bind-rx makes of the region's dma-buf on device dev: the
 * real NIC half of the path this mode emulates. */
static void region_try_bind(struct dm_gpu_region *r, int dev)
{
	const struct dm_dev *d = dm_dev_get(dev);
	char why[256] = "";
	struct dm_nl nl = { .fd = -1 };
	unsigned queue = 0;
	uint32_t id = 0;
	int fd = -1, err, nq;

	if (!d)
		return;
	if (!dm_cuda_dmabuf_supported(r->ord)) {
		snprintf(why, sizeof(why), "GPU %d cannot export dma-bufs", r->ord);
		goto say;
	}
	err = dm_cuda_dmabuf_fd(r->base, r->size, &fd);
	if (err) {
		snprintf(why, sizeof(why), "cuMemGetHandleForAddressRange: %s", dm_cuda_error(err));
		goto say;
	}
	nq = dm_ethtool_rx_queues(d->name);
	if (nq > 1)
		queue = (unsigned)nq - 1;
	if (dm_nl_open(&nl, why, sizeof(why)))
		goto say;
	err = dm_nl_bind_rx(&nl, d->ifindex, fd, &queue, 1, &id, why, sizeof(why));
	if (!err)
		snprintf(why, sizeof(why), "bind-rx of queue %u accepted (binding %u), released: "
			 "this mode emulates the NIC all the same", queue, id);
	else
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " (%s)", strerror(-err));
	dm_nl_close(&nl);
say:
	if (fd >= 0)
		close(fd);
	DM_INFO(NCCL_INIT | NCCL_NET, "NET/devmem : GPU %d test-mode RX region: %zu MiB of device "
		"memory at %p, dma-buf on %s: %s", r->ord, r->size >> 20, (void *)r->base, d->name,
		why);
}

/* A share of the GPU's region for a recv comm: 0 and *r, *slot; or -1. */
static int region_get(int ord, int dev, struct dm_gpu_region **out, unsigned *slot, char *why,
		      size_t wl)
{
	struct dm_gpu_region *r;
	unsigned i;
	int err;

	if (ord < 0 || ord >= DM_GPU_MAX_DEVS) {
		snprintf(why, wl, "CUDA device %d out of range", ord);
		return -1;
	}
	pthread_mutex_lock(&gpu_lock);
	r = gpu_regions[ord];
	if (!r) {
		size_t mb = (size_t)dm_env_int(DM_ENV_RX_REGION_MB, DM_GPU_DEFAULT_REGION_MB, 8,
					       DM_GPU_MAX_SLOTS * DM_GPU_SLOT_BYTES >> 20);

		r = calloc(1, sizeof(*r));
		if (!r) {
			pthread_mutex_unlock(&gpu_lock);
			snprintf(why, wl, "out of memory");
			return -1;
		}
		r->ord = ord;
		r->nslots = (unsigned)((mb << 20) / DM_GPU_SLOT_BYTES);
		r->size = r->nslots * DM_GPU_SLOT_BYTES;
		err = dm_cuda_alloc((void **)&r->base, r->size);
		if (err) {
			pthread_mutex_unlock(&gpu_lock);
			snprintf(why, wl, "cuMemAlloc of %zu MiB: %s", r->size >> 20,
				 dm_cuda_error(err));
			free(r);
			return -1;
		}
		region_try_bind(r, dev);
		gpu_regions[ord] = r;
	}
	for (i = 0; i < r->nslots; i++)
		if (!(r->used & (1ull << i)))
			break;
	if (i == r->nslots) {
		pthread_mutex_unlock(&gpu_lock);
		snprintf(why, wl, "the GPU's %zu MiB RX region is spoken for (%s)", r->size >> 20,
			 DM_ENV_RX_REGION_MB);
		return -1;
	}
	r->used |= 1ull << i;
	r->refs++;
	pthread_mutex_unlock(&gpu_lock);
	*out = r;
	*slot = i;
	return 0;
}

static void region_put(struct dm_gpu_region *r, unsigned slot)
{
	pthread_mutex_lock(&gpu_lock);
	r->used &= ~(1ull << slot);
	if (--r->refs == 0) {
		gpu_regions[r->ord] = NULL;
		dm_cuda_free(r->base);
		free(r);
	}
	pthread_mutex_unlock(&gpu_lock);
}

/* Stages and streams of the sockets, made now: a pinned allocation while
 * NCCL's kernel runs would wait for that kernel, which waits for the
 * bytes. */
static int gpu_res_make(struct dm_gpu_comm *g, int nsocks, char *why, size_t wl)
{
	int i, err = 0;

	for (i = 0; i <= DM_GPU_CTRL && !err; i++) {
		if (i >= nsocks && i != DM_GPU_CTRL)
			continue;
		err = dm_cuda_stream(&g->stream[i]);
		if (!err)
			err = dm_cuda_host_alloc(&g->stage[i], NULL, DM_GPU_STAGE);
	}
	if (err)
		snprintf(why, wl, "stages of the sockets: %s", dm_cuda_error(err));
	return err ? -1 : 0;
}

struct dm_gpu_comm *dm_gpu_comm_create(int is_recv, int dev, int nsocks, int has_rx, char *mode,
				       size_t ml)
{
	struct dm_gpu_comm *g = calloc(1, sizeof(*g));
	char why[200];
	unsigned i, slot;
	int ord = -1;

	if (!g)
		return NULL;
	if (dm_cuda_ctx(&g->ctx) || !g->ctx)
		return g;	/* no context in this thread: host memory only */
	if (!dm_gpu_test_mode())
		return g;	/* NCCL gives host memory only */
	if (gpu_res_make(g, nsocks, why, sizeof(why))) {
		DM_WARN("%s comm: %s", is_recv ? "recv" : "send", why);
		dm_gpu_comm_free(g);
		return NULL;
	}
	if (!is_recv || has_rx)
		return g;	/* a bound region gives real fragments */
	if (dm_cuda_device(&ord) || region_get(ord, dev, &g->region, &slot, why, sizeof(why))) {
		if (ord < 0)
			snprintf(why, sizeof(why), "no CUDA device in this thread");
		snprintf(mode + strlen(mode), ml - strlen(mode), "; GPU test mode: no RX region "
			 "(%s), GPU buffers filled from host memory", why);
		return g;
	}
	g->slot = slot;
	g->pool_off = slot * DM_GPU_SLOT_BYTES;
	/* scattered: consecutive fragments rarely land on neighbouring pages */
	for (i = 0; i < DM_GPU_POOL_PAGES; i++)
		g->free[i] = (uint32_t)((i * 1031u) % DM_GPU_POOL_PAGES);
	g->nfree = DM_GPU_POOL_PAGES;
	snprintf(mode + strlen(mode), ml - strlen(mode), "; GPU test mode: fragments emulated in "
		 "%u KiB of GPU %d's RX region", (unsigned)(DM_GPU_SLOT_BYTES >> 10), ord);
	return g;
}

void dm_gpu_comm_free(struct dm_gpu_comm *g)
{
	int i;

	if (!g)
		return;
	/* in g->ctx: the caller's doing (dm_comm_create's thread has it) */
	for (i = 0; i <= DM_GPU_CTRL; i++) {
		dm_cuda_stream_free(g->stream[i]);
		dm_cuda_host_free(g->stage[i]);
	}
	if (g->region)
		region_put(g->region, g->slot);
	free(g);
}

void *dm_gpu_bounce(const struct dm_gpu_comm *g)
{
	return g && g->region ? g->region->base : NULL;
}

/* The stage and stream of socket k. */
static int gpu_res(struct dm_gpu_comm *g, int k, char **stage, void **stream, const char **why)
{
	if (!g || !g->stage[k]) {
		*why = "GPU memory on a comm made without a CUDA context or the GPU test mode";
		return -1;
	}
	*stage = g->stage[k];
	*stream = g->stream[k];
	return 0;
}

int dm_gpu_copy(struct dm_comm *c, int k, void *dst, const void *src, size_t n,
		const char **why)
{
	char *stage;
	void *st;
	int err;

	if (gpu_res(c->gpu, k, &stage, &st, why))
		return -1;
	err = dm_cuda_copy(dst, src, n, st);
	if (!err)
		err = dm_cuda_sync(st);
	if (err) {
		*why = dm_cuda_error(err);
		return -1;
	}
	return 0;
}

ssize_t dm_gpu_send(struct dm_comm *c, int k)
{
	struct dm_sock *s = &c->socks[k];
	const char *why = NULL;
	ssize_t r;

	if (!s->stg_have) {
		size_t n = s->left < DM_GPU_STAGE ? s->left : DM_GPU_STAGE;
		char *stage;
		void *st;
		int err = 0;

		if (gpu_res(c->gpu, k, &stage, &st, &why) ||
		    (err = dm_cuda_copy(stage, s->ptr, n, st)) || (err = dm_cuda_sync(st))) {
			dm_comm_error(c, ncclSystemError, "data socket %d: staging %zu bytes of GPU "
				      "memory at %p: %s", k, n, (void *)s->ptr,
				      err ? dm_cuda_error(err) : why);
			errno = EFAULT;
			return -1;
		}
		s->stg_off = 0;
		s->stg_have = n;
	}
	r = send(s->fd, (char *)c->gpu->stage[k] + s->stg_off, s->stg_have,
		 MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r > 0) {
		s->stg_off += (uint64_t)r;
		s->stg_have -= (uint64_t)r;
	}
	return r;
}

uint64_t dm_gpu_room(struct dm_comm *c)
{
	struct dm_gpu_comm *g = c->gpu;

	if (!g || !g->region)
		return UINT64_MAX;
	return (uint64_t)g->nfree * DM_RX_PAGE;
}

int dm_gpu_pages_put(struct dm_comm *c, const uint32_t *pages, int n)
{
	struct dm_gpu_comm *g = c->gpu;
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (pages[i] >= DM_GPU_POOL_PAGES || g->nfree == DM_GPU_POOL_PAGES)
			bad++;	/* never taken from this comm: dropped */
		else
			g->free[g->nfree++] = pages[i];
	}
	if (n && g->starved) {
		g->starved = 0;
		i = 1;
	} else {
		i = 0;
	}
	if (bad)
		DM_WARN("comm %p: %d page(s) given back that the comm did not hand out", (void *)c,
			bad);
	return i;	/* 1: a socket waits for pages */
}

struct frags {
	struct dm_rx_frag f[DM_RX_MAX_FRAGS];
	int n;
};

static int collect(void *arg, const struct dm_rx_frag *f, int n, const char **why)
{
	struct frags *col = arg;

	if (n > DM_RX_MAX_FRAGS) {
		*why = "too many fragments in one recvmsg";
		return -1;
	}
	memcpy(col->f, f, sizeof(*f) * (size_t)n);
	col->n = n;
	return 0;
}

/* Takes up to len bytes' worth of free pages of the comm's share of the
 * region for the next recvmsg (the test mode's stand-in for the NIC's
 * buffers): how many bytes they hold. */
static size_t pages_take(struct dm_comm *c, size_t len, struct frags *col)
{
	struct dm_gpu_comm *g = c->gpu;
	unsigned want = (unsigned)((len + DM_RX_PAGE - 1) / DM_RX_PAGE);

	pthread_mutex_lock(&c->lock);
	if (want > g->nfree)
		want = g->nfree;
	if (!want)
		g->starved = 1;	/* woken when pages come back */
	for (col->n = 0; col->n < (int)want; col->n++)
		col->f[col->n].token = g->free[--g->nfree];
	pthread_mutex_unlock(&c->lock);
	return (size_t)want * DM_RX_PAGE;
}

/* Places n received bytes on the pages taken, one fragment per page, and
 * gives back the pages left over. */
static int emulate(struct dm_comm *c, const char *stage, size_t n, void *st, struct frags *col,
		   const char **why)
{
	struct dm_gpu_comm *g = c->gpu;
	int i, used = (int)((n + DM_RX_PAGE - 1) / DM_RX_PAGE), err;
	uint32_t spare[DM_RX_MAX_FRAGS];
	int wake = 0;

	for (i = used; i < col->n; i++)
		spare[i - used] = col->f[i].token;
	if (col->n > used) {
		pthread_mutex_lock(&c->lock);
		wake = dm_gpu_pages_put(c, spare, col->n - used);
		pthread_mutex_unlock(&c->lock);
		col->n = used;
		if (wake)
			dm_comm_wake(c);
	}
	for (i = 0; i < col->n; i++) {
		struct dm_rx_frag *f = &col->f[i];

		f->off = g->pool_off + (uint64_t)f->token * DM_RX_PAGE;
		f->pos = (uint64_t)i * DM_RX_PAGE;
		f->size = (uint32_t)(n - f->pos < DM_RX_PAGE ? n - f->pos : DM_RX_PAGE);
		err = dm_cuda_copy(g->region->base + f->off, stage + f->pos, f->size, st);
		if (err) {
			*why = dm_cuda_error(err);
			return -1;
		}
	}
	return 0;
}

/* The fragments' pages back to the comm (emulated), or their tokens to
 * the socket (devmem). */
static void frags_release(struct dm_comm *c, int fd, const struct frags *col, int emul)
{
	uint32_t tok[DM_RX_MAX_FRAGS];
	int i, wake;

	for (i = 0; i < col->n; i++)
		tok[i] = col->f[i].token;
	if (emul) {
		pthread_mutex_lock(&c->lock);
		wake = dm_gpu_pages_put(c, tok, col->n);
		pthread_mutex_unlock(&c->lock);
		if (wake)
			dm_comm_wake(c);
	} else if (col->n) {
		int err = dm_rx_tokens_return(fd, tok, col->n);

		if (err)
			dm_comm_error(c, ncclSystemError, "SO_DEVMEM_DONTNEED: %s", strerror(-err));
	}
}

ssize_t dm_gpu_recv(struct dm_comm *c, int k, int fd, char *dst, size_t len,
		    struct dm_unpack_sink *sink, const char **why)
{
	struct dm_gpu_comm *g = c->gpu;
	struct frags col = { .n = 0 };
	const char *src;
	uint64_t pos, fb = 0;
	char *stage;
	void *st;
	ssize_t n;
	int i, err = 0, emul = g && g->region && !c->rx && k != DM_GPU_CTRL;

	*why = NULL;
	if (gpu_res(g, k, &stage, &st, why)) {
		errno = EFAULT;
		return -1;
	}
	if (len > DM_GPU_STAGE)
		len = DM_GPU_STAGE;
	if (emul) {
		size_t got = pages_take(c, len, &col);

		if (!got) {
			errno = ENOBUFS;	/* another socket took the last pages */
			return -1;
		}
		if (got < len)
			len = got;	/* whole pages, never past the chunk */
	}
	if (c->rx)
		n = dm_rx_recv(c->rx, fd, stage, len, &c->rxcnt, collect, &col, why);
	else
		n = recv(fd, stage, len, MSG_DONTWAIT);
	if (n <= 0) {
		if (emul) {
			int e = errno;

			frags_release(c, fd, &col, 1);
			errno = e;
		}
		return n;
	}
	if (emul && emulate(c, stage, (size_t)n, st, &col, why))
		goto fail;
	src = emul ? g->region->base : c->rx ? (const char *)c->rx->map : NULL;
	/* the stage's own bytes: the runs between fragments */
	for (i = 0, pos = 0; i <= col.n; i++) {
		uint64_t end = i < col.n ? col.f[i].pos : (uint64_t)n;

		if (end > pos && (err = dm_cuda_copy(dst + pos, stage + pos, end - pos, st)))
			goto cuda_fail;
		if (i < col.n) {
			pos = col.f[i].pos + col.f[i].size;
			fb += col.f[i].size;
		}
	}
	if (sink && emul) {
		/* in place before NCCL's kernel can look */
		err = dm_cuda_sync(st);
		if (err)
			goto cuda_fail;
		if (col.n && dm_unpack_take(sink, col.f, col.n, why))
			goto fail;
	} else {
		for (i = 0; i < col.n; i++) {
			err = dm_cuda_copy(dst + col.f[i].pos, src + col.f[i].off, col.f[i].size, st);
			if (err)
				goto cuda_fail;
		}
		err = dm_cuda_sync(st);
		if (err)
			goto cuda_fail;
		frags_release(c, fd, &col, emul);
	}
	if (emul) {
		atomic_fetch_add(&c->rxcnt.dmabuf, fb);
	} else if (!c->rx) {
		atomic_fetch_add(&c->rxcnt.host, (uint64_t)n);
	}
	return n;
cuda_fail:
	*why = dm_cuda_error(err);
fail:
	dm_cuda_sync(st);
	frags_release(c, fd, &col, emul);
	errno = EPROTO;
	return -1;
}
