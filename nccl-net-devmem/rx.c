// SPDX-License-Identifier: GPL-2.0
/*
 * devmem RX: the RX region and reading a socket whose payload lands in it.
 *
 * Region.  One per device and process: a udmabuf (memfd pages, mapped
 * here for the copy into NCCL's buffers), bound with bind-rx to the
 * device's devmem RX queues (NCCL_DEVMEM_RX_QUEUES, default the last RX
 * queue).  The binding lives as long as the netlink socket that made it:
 * the region keeps that socket open until its last user (listen and recv
 * comms, each holding a reference) lets go, and closes it last, after the
 * data sockets that may hold its tokens.  A device whose bind fails (no
 * header split, no privilege, a kernel without devmem, a queue in use) is
 * remembered, said once in the log, and served in copy mode.
 *
 * Reading.  dm_rx_recv() reads with MSG_SOCK_DEVMEM straight into the
 * destination: bytes the kernel copies (the linear part of an skb, or a
 * whole skb that arrived in host memory) land packed at its start, each
 * fragment in the dma-buf comes as a cmsg; the linear runs are then moved
 * to their places in the stream (last first: a run never moves backwards),
 * the fragments copied from the region, and the fragments' tokens given
 * back at once with SO_DEVMEM_DONTNEED.
 *
 * The registry is process-wide, under rx_lock; a region's fields are
 * read-only once it is published, its counters atomic.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devmem_abi.h"
#include "helper_proto.h"
#include "plugin.h"

#define DM_RX_CMSG_SPACE (DM_RX_MAX_FRAGS * CMSG_SPACE(sizeof(struct dm_dmabuf_cmsg)))

static pthread_mutex_t rx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dm_rx_region *regions[DM_MAX_DEVS];
static char failed[DM_MAX_DEVS];	/* the bind failed once: copy mode */
static uint64_t released_ms[DM_MAX_DEVS];	/* when this process last unbound it */
/* a queue of ours may still be leaving that long after the unbind */
#define DM_RX_RELEASE_GRACE_MS 10000

/* "N" or "A-B" into queues[]; the number of queues or -1. */
static int parse_queues(const char *s, int nq, unsigned *queues)
{
	char *end;
	long a, b;
	int n = 0;

	a = strtol(s, &end, 10);
	b = a;
	if (end == s)
		return -1;
	if (*end == '-') {
		s = end + 1;
		b = strtol(s, &end, 10);
		if (end == s)
			return -1;
	}
	if (*end || a < 0 || b < a || b >= nq || b - a + 1 > DM_RX_MAX_QUEUES)
		return -1;
	for (; a <= b; a++)
		queues[n++] = (unsigned)a;
	return n;
}

static int udmabuf_region(size_t size, int *memfd_out, char *why, size_t wl)
{
	struct udmabuf_create create = { 0 };
	int memfd, dev, fd;

	memfd = memfd_create("nccl-devmem-rx", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0) {
		snprintf(why, wl, "memfd_create: %s", strerror(errno));
		return -1;
	}
	if (ftruncate(memfd, (off_t)size) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		snprintf(why, wl, "memfd of %zu bytes: %s", size, strerror(errno));
		close(memfd);
		return -1;
	}
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		snprintf(why, wl, "/dev/udmabuf: %s", strerror(errno));
		close(memfd);
		return -1;
	}
	create.memfd = (uint32_t)memfd;
	create.flags = UDMABUF_FLAGS_CLOEXEC;
	create.size = size;
	fd = ioctl(dev, UDMABUF_CREATE, &create);
	if (fd < 0)
		snprintf(why, wl, "udmabuf of %zu MiB: %s (udmabuf.size_limit_mb?)", size >> 20,
			 strerror(errno));
	close(dev);
	if (fd < 0) {
		close(memfd);
		return -1;
	}
	*memfd_out = memfd;
	return fd;
}

static void region_free(struct dm_rx_region *r)
{
	/* the binding goes with the netlink socket, or with the helper's
	 * connection (the helper deletes its rules first): after every data
	 * socket */
	dm_nl_close(&r->nl);
	if (r->helper >= 0)
		close(r->helper);
	pthread_mutex_destroy(&r->helper_lock);
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->size);
	if (r->dmabuf_fd >= 0)
		close(r->dmabuf_fd);
	if (r->memfd >= 0)
		close(r->memfd);
	free(r);
}

/* bind-rx refused for want of CAP_NET_ADMIN: the administrator's helper
 * (NCCL_DEVMEM_HELPER) binds it, for as long as the region keeps its
 * connection to the helper open; -EPERM with the reason when there is
 * none, or what the helper said. */
static int bind_by_helper(struct dm_rx_region *r, char *why, size_t wl)
{
	const char *path = getenv(DM_ENV_HELPER);
	int err;

	if (!path || !*path) {
		snprintf(why, wl, "no CAP_NET_ADMIN, and no helper (%s)", DM_ENV_HELPER);
		return -EPERM;
	}
	err = dm_helper_open(path, why, wl);
	if (err < 0)
		return err;
	r->helper = err;
	err = dm_helper_bind_rx(r->helper, r->ifindex, r->dmabuf_fd, r->queues, r->nqueues,
				&r->id, why, wl);
	if (!err)
		dm_nl_close(&r->nl);	/* the binding is the helper connection's */
	return err;
}

/* Builds and binds the region of `dev`; NULL with the reason in why. */
static struct dm_rx_region *region_create(int dev, int *transient, char *why, size_t wl)
{
	const struct dm_dev *d = dm_dev_get(dev);
	const char *qs = getenv(DM_ENV_RX_QUEUES);
	struct dm_rx_region *r;
	size_t reserve;
	int nq, err;

	*transient = 0;
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(why, wl, "out of memory");
		return NULL;
	}
	r->nl.fd = r->dmabuf_fd = r->memfd = r->helper = -1;
	pthread_mutex_init(&r->helper_lock, NULL);
	r->dev = dev;
	r->ifindex = d->ifindex;
	snprintf(r->ifname, sizeof(r->ifname), "%s", d->name);
	nq = dm_ethtool_rx_queues(d->name);
	if (nq < 0) {
		snprintf(why, wl, "cannot read its channels: %s", strerror(-nq));
		goto fail;
	}
	if (qs && *qs) {
		r->nqueues = parse_queues(qs, nq, r->queues);
		if (r->nqueues < 0) {
			snprintf(why, wl, "%s=%s is not N or A-B within its %d RX queues",
				 DM_ENV_RX_QUEUES, qs, nq);
			goto fail;
		}
	} else {
		if (nq < 2) {
			snprintf(why, wl, "it has %d RX queue; devmem needs one besides the "
				 "queues of host traffic", nq);
			goto fail;
		}
		r->queues[0] = (unsigned)(nq - 1);
		r->nqueues = 1;
	}
	err = dm_ethtool_rss_uses(d->name, r->queues, r->nqueues);
	if (err) {
		if (err > 0)
			snprintf(why, wl, "its RSS table spreads host traffic onto queue %u%s, whose "
				 "plain sockets would get EFAULT (keep it off: ethtool -X %s equal "
				 "%d)", r->queues[0], r->nqueues > 1 ? "..." : "", d->name,
				 (int)r->queues[0]);
		else
			snprintf(why, wl, "cannot read its RSS table: %s", strerror(-err));
		goto fail;
	}
	r->size = (size_t)dm_env_int(DM_ENV_RX_REGION_MB, DM_DEFAULT_RX_REGION_MB, 1, 4096) << 20;
	/* the NIC's rings (and their page pools' caches) come first */
	err = dm_ethtool_rx_ring(d->name);
	reserve = (size_t)r->nqueues * (size_t)((err > 0 ? err : 4096) + 128) * 4096;
	if (reserve >= r->size) {
		snprintf(why, wl, "a region of %zu MiB does not hold the RX rings of %d queue(s) "
			 "(%s)", r->size >> 20, r->nqueues, DM_ENV_RX_REGION_MB);
		goto fail;
	}
	r->budget = r->size - reserve;
	r->budget0 = r->budget;
	r->dmabuf_fd = udmabuf_region(r->size, &r->memfd, why, wl);
	if (r->dmabuf_fd < 0)
		goto fail;
	r->map = mmap(NULL, r->size, PROT_READ, MAP_SHARED, r->dmabuf_fd, 0);
	if (r->map == MAP_FAILED) {
		snprintf(why, wl, "mmap of the udmabuf: %s", strerror(errno));
		goto fail;
	}
	if (dm_nl_open(&r->nl, why, wl))
		goto fail;
	err = dm_nl_bind_rx(&r->nl, r->ifindex, r->dmabuf_fd, r->queues, r->nqueues, &r->id, why,
			    wl);
	if (err == -EPERM)
		err = bind_by_helper(r, why, wl);
	if (err) {
		char msg[200];

		/* memory, time; or the queue still ours, just released (another
		 * process' binding, EEXIST too, stays: several ranks on one NIC) */
		*transient = err == -ENOMEM || err == -ETIMEDOUT || err == -EAGAIN ||
			     (err == -EEXIST && released_ms[dev] &&
			      dm_now_ms() - released_ms[dev] < DM_RX_RELEASE_GRACE_MS);
		snprintf(msg, sizeof(msg), "%.*s", (int)sizeof(msg) - 1, why);
		snprintf(why, wl, "bind-rx of queue %u%s refused: %s (%s)", r->queues[0],
			 r->nqueues > 1 ? "..." : "", msg, strerror(-err));
		goto fail;
	}
	return r;
fail:
	region_free(r);
	return NULL;
}

struct dm_rx_region *dm_rx_get(int dev)
{
	struct dm_rx_region *r = NULL;
	char why[320] = "";
	int transient;

	if (dev < 0 || dev >= DM_MAX_DEVS || !dm_dev_get(dev) ||
	    !dm_env_int(DM_ENV_RX, 1, 0, 1))
		return NULL;
	pthread_mutex_lock(&rx_lock);
	if (regions[dev]) {
		r = regions[dev];
		r->refs++;
	} else if (!failed[dev]) {
		r = region_create(dev, &transient, why, sizeof(why));
		if (r) {
			r->refs = 1;
			regions[dev] = r;
			DM_INFO(NCCL_INIT | NCCL_NET, "NET/devmem : dev %d (%s): devmem RX on queue "
				"%u%s, %zu MiB udmabuf region, binding %u%s", dev, r->ifname,
				r->queues[0], r->nqueues > 1 ? " and more" : "", r->size >> 20,
				r->id, r->helper >= 0 ? ", by the helper" : "");
		} else {
			/* said once; tried again later only when it may pass */
			failed[dev] = !transient;
			DM_INFO(NCCL_INIT | NCCL_NET, "NET/devmem : dev %d (%s): no devmem RX, copy "
				"mode%s: %s", dev, dm_dev_get(dev)->name,
				transient ? " for now" : "", why);
		}
	}
	pthread_mutex_unlock(&rx_lock);
	return r;
}

struct dm_rx_region *dm_rx_peek(int dev)
{
	struct dm_rx_region *r = NULL;

	if (dev < 0 || dev >= DM_MAX_DEVS)
		return NULL;
	pthread_mutex_lock(&rx_lock);
	if (regions[dev]) {
		r = regions[dev];
		r->refs++;
	}
	pthread_mutex_unlock(&rx_lock);
	return r;
}

struct dm_rx_region *dm_rx_ref(struct dm_rx_region *r)
{
	pthread_mutex_lock(&rx_lock);
	r->refs++;
	pthread_mutex_unlock(&rx_lock);
	return r;
}

void dm_rx_put(struct dm_rx_region *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&rx_lock);
	if (--r->refs == 0) {
		regions[r->dev] = NULL;
		DM_INFO(NCCL_NET, "NET/devmem : dev %d (%s): binding %u released: %llu bytes "
			"received into the dma-buf, %llu in host memory, %llu connection(s) "
			"in copy mode", r->dev, r->ifname, r->id,
			(unsigned long long)atomic_load(&r->bytes_dmabuf),
			(unsigned long long)atomic_load(&r->bytes_host),
			(unsigned long long)atomic_load(&r->steer_failures));
		released_ms[r->dev] = dm_now_ms();
		/* under the lock: a new listen binds only once this binding is gone */
		region_free(r);
	}
	pthread_mutex_unlock(&rx_lock);
}

/* What an autotuned receive buffer may grow to in this thread's network
 * namespace: the larger of net.ipv4.tcp_rmem's default and maximum (at
 * least 64 KiB); 0 where that cannot be read or autotuning is off
 * (net.ipv4.tcp_moderate_rcvbuf 0). */
static size_t autotune_max(void)
{
	unsigned long lo, def, max;
	int moderate = 1, got;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_moderate_rcvbuf", "re");

	if (f) {
		if (fscanf(f, "%d", &moderate) != 1)
			moderate = 1;
		fclose(f);
	}
	if (!moderate)
		return 0;
	f = fopen("/proc/sys/net/ipv4/tcp_rmem", "re");
	if (!f)
		return 0;
	got = fscanf(f, "%lu %lu %lu", &lo, &def, &max);
	fclose(f);
	if (got != 3)
		return 0;
	if (def > max)
		max = def;
	if (max > (1ul << 31))
		return 0;
	return max < (64ul << 10) ? 64ul << 10 : (size_t)max;
}

int dm_rx_steer(struct dm_rx_region *r, const int *fds, int n, int unpack, int *locs,
		size_t *reserved, char *why, size_t wl)
{
	static atomic_int small_said;
	int kb = dm_env_int(DM_ENV_RX_SOCKBUF_KB, DM_DEFAULT_RX_SOCKBUF_KB, 0, 1 << 20);
	/* with UNPACK as much again for fragments read and not consumed */
	size_t mult = (size_t)n * (unpack ? 2 : 1), per, need, auto_per, auto_need, fixed_need;
	char note[160] = "";
	int i, err, val, got_min = 0;

	if (kb > 0 && kb < 64) {
		if (!atomic_exchange(&small_said, 1))
			DM_WARN("%s=%d is under the 64 KiB minimum; using the default (autotuned)",
				DM_ENV_RX_SOCKBUF_KB, kb);
		kb = 0;
	}
	*reserved = 0;
	for (i = 0; i < n; i++)
		locs[i] = -1;
	/* Unread bytes of a steered socket hold region memory: the sockets
	 * together may hold no more than the region less what the NIC's ring
	 * needs, or one slow reader starves every flow of the queue.  A
	 * socket may hold its receive buffer: autotuned, up to tcp_rmem's
	 * maximum (as read now: raised later, the buffers may outgrow their
	 * reservation); with SO_RCVBUF, twice that (the kernel doubles it for
	 * skb overhead).  Autotuning is the default: a fixed buffer that the
	 * reader keeps empty makes TCP acknowledge nearly every burst, which
	 * costs both ends more than the payload (nccl-net-devmem/README.md).
	 * A connection's buffers are autotuned only where the budget left
	 * after them still holds a connection of fixed ones, so that a later
	 * connection keeps devmem RX. */
	auto_per = kb ? 0 : autotune_max();
	auto_need = auto_per * mult;
	fixed_need = ((size_t)DM_FIXED_RX_SOCKBUF_KB << 11) * mult;
	pthread_mutex_lock(&rx_lock);
	if (auto_per && r->budget >= auto_need && r->budget - auto_need >= fixed_need) {
		per = auto_per;
		need = auto_need;
		kb = 0;
	} else {
		if (!kb && !auto_per)
			snprintf(note, sizeof(note), " (not autotuned: tcp_moderate_rcvbuf 0, or "
				 "tcp_rmem unreadable or over 2 GiB)");
		else if (!kb)
			snprintf(note, sizeof(note), " (autotuned buffers would reserve %zu MiB, "
				 "leaving %zu of the region's %zu MiB: under %zu for one more)",
				 auto_need >> 20,
				 r->budget >= auto_need ? (r->budget - auto_need) >> 20 : 0,
				 r->budget0 >> 20, fixed_need >> 20);
		if (!kb)
			kb = DM_FIXED_RX_SOCKBUF_KB;
		per = (size_t)kb << 11;
		need = per * mult;
	}
	if (r->budget < need) {
		pthread_mutex_unlock(&rx_lock);
		snprintf(why, wl, "the RX region is spoken for (%zu of %zu MiB left, %d sockets "
			 "of %d KiB%s need %zu MiB)", r->budget >> 20, r->size >> 20, n, kb * 2,
			 unpack ? ", twice with UNPACK," : "", need >> 20);
		return -ENOSPC;
	}
	r->budget -= need;
	pthread_mutex_unlock(&rx_lock);
	*reserved = need;
	val = kb << 10;
	for (i = 0; i < n; i++) {
		char swhy[320];

		unsigned q = r->queues[(unsigned)i % (unsigned)r->nqueues];

		if (r->helper >= 0) {
			pthread_mutex_lock(&r->helper_lock);
			err = dm_helper_steer(r->helper, fds[i], q, &locs[i], swhy, sizeof(swhy));
			pthread_mutex_unlock(&r->helper_lock);
		} else {
			err = dm_steer_add(r->ifname, fds[i], q, &locs[i], swhy, sizeof(swhy));
		}
		if (err) {
			snprintf(why, wl, "ntuple rule for data socket %d on %s: %s", i, r->ifname,
				 swhy);
			dm_rx_unsteer(r, fds, locs, n, reserved);
			return err;
		}
	}
	/* steered: now the buffers the budget counted (FORCE: past rmem_max,
	 * with CAP_NET_ADMIN; through the helper, up to rmem_max) */
	for (i = 0; i < n; i++) {
		int got = 0;
		socklen_t gl = sizeof(got);

		if (kb && setsockopt(fds[i], SOL_SOCKET, SO_RCVBUFFORCE, &val, sizeof(val)) &&
		    setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &val, sizeof(val))) {
			err = -errno;
			snprintf(why, wl, "SO_RCVBUF on data socket %d: %s", i, strerror(-err));
			dm_rx_unsteer(r, fds, locs, n, reserved);
			return err;
		}
		if (!getsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &got, &gl) && (size_t)got > per) {
			snprintf(why, wl, "data socket %d holds %d bytes, over its %zu", i, got, per);
			dm_rx_unsteer(r, fds, locs, n, reserved);
			return -EINVAL;
		}
		if (!i || got < got_min)
			got_min = got;
	}
	/* what the kernel granted: through the helper, rmem_max caps it */
	if (kb)
		snprintf(why, wl, "SO_RCVBUF %d KiB%s", got_min > 0 ? got_min / 2048 : kb, note);
	else
		snprintf(why, wl, "receive buffers autotuned up to %zu KiB", per >> 10);
	return 0;
}

void dm_rx_unsteer(struct dm_rx_region *r, const int *fds, int *locs, int n, size_t *reserved)
{
	int i;

	pthread_mutex_lock(&rx_lock);
	r->budget += *reserved;
	pthread_mutex_unlock(&rx_lock);
	*reserved = 0;
	for (i = 0; i < n; i++) {
		int err;

		if (r->helper >= 0) {
			pthread_mutex_lock(&r->helper_lock);
			err = dm_helper_unsteer(r->helper, locs[i]);
			pthread_mutex_unlock(&r->helper_lock);
		} else {
			err = dm_steer_del(r->ifname, fds ? fds[i] : -1, locs[i]);
		}

		if (err)
			DM_WARN("NET/devmem : %s: ntuple rule %d not deleted: %s", r->ifname,
				locs[i], err == -ESTALE ? "another rule took its place" :
				strerror(-err));
		locs[i] = -1;
	}
}

int dm_rx_tokens_return(int fd, const uint32_t *tokens, int n)
{
	struct dm_dmabuf_token ranges[DM_DONTNEED_MAX_RANGES];
	int i = 0;

	while (i < n) {
		int nr = 0, count = 0;
		int r;

		while (i < n && nr < DM_DONTNEED_MAX_RANGES && count < DM_DONTNEED_MAX_FRAGS) {
			if (nr && ranges[nr - 1].token_start + ranges[nr - 1].token_count ==
				  tokens[i]) {
				ranges[nr - 1].token_count++;
			} else {
				ranges[nr].token_start = tokens[i];
				ranges[nr].token_count = 1;
				nr++;
			}
			count++;
			i++;
		}
		r = setsockopt(fd, SOL_SOCKET, DM_SO_DEVMEM_DONTNEED, ranges,
			       (socklen_t)(nr * sizeof(ranges[0])));
		if (r < 0)
			return -errno;
		if (r != count)
			return -EINVAL;
	}
	return 0;
}

/* CPU reads of the region are bracketed by DMA_BUF_IOCTL_SYNC where caches
 * are not coherent with DMA.  On x86 they are, and there the ioctl only
 * costs: 6.1's udmabuf maps the whole buffer for its own misc device on
 * the first call (the DMA-API debug code warns: segments over 64 KiB)
 * and walks every page on each later one.
 */
static void dmabuf_sync(int fd, uint64_t flags)
{
#if defined(__x86_64__) || defined(__i386__)
	(void)fd;
	(void)flags;
#else
	struct dma_buf_sync s = { .flags = flags };

	while (ioctl(fd, DMA_BUF_IOCTL_SYNC, &s) && errno == EINTR)
		;
#endif
}

/* A run of bytes the kernel copied: where recvmsg packed it in dst, and
 * where it belongs in the stream. */
struct dm_lin {
	uint64_t packed, pos;
	uint32_t size;
};

/* The next cmsg of a control buffer of len bytes, or NULL: as CMSG_NXTHDR,
 * without its call per fragment. */
static struct cmsghdr *cmsg_next(char *ctl, size_t len, struct cmsghdr *cm)
{
	size_t at = (size_t)((char *)cm - ctl) + CMSG_ALIGN(cm->cmsg_len);

	if (cm->cmsg_len < sizeof(*cm) || at + sizeof(*cm) > len)
		return NULL;
	cm = (struct cmsghdr *)(ctl + at);
	if (cm->cmsg_len < sizeof(*cm) || cm->cmsg_len > len - at)
		return NULL;
	return cm;
}

ssize_t dm_rx_recv(struct dm_rx_region *r, int fd, void *dst, size_t len, struct dm_rx_count *cnt,
		   dm_rx_sink_fn sink, void *sink_arg, const char **why)
{
	union {
		char buf[DM_RX_CMSG_SPACE];
		struct cmsghdr align;
	} ctl;
	struct dm_rx_frag frags[DM_RX_MAX_FRAGS];
	struct dm_lin lins[DM_RX_MAX_FRAGS];
	uint32_t tokens[DM_RX_MAX_FRAGS];
	struct iovec iov = { .iov_base = dst, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint64_t pos = 0, lin = 0, frag_bytes = 0;
	struct cmsghdr *cm;
	int nf = 0, nl = 0, i, err;
	ssize_t n;

	*why = NULL;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	n = recvmsg(fd, &msg, DM_MSG_SOCK_DEVMEM | MSG_DONTWAIT);
	if (n <= 0)
		return n;
	/* One pass: each fragment's place in the stream, and each run the
	 * kernel copied (they sit packed at dst, in stream order). */
	cm = msg.msg_controllen >= sizeof(*cm) ? (struct cmsghdr *)ctl.buf : NULL;
	if (cm && (cm->cmsg_len < sizeof(*cm) || cm->cmsg_len > msg.msg_controllen)) {
		*why = msg.msg_flags & MSG_CTRUNC ? "devmem cmsgs truncated" :
			"malformed devmem cmsg";
		goto fail;
	}
	for (; cm; cm = cmsg_next(ctl.buf, msg.msg_controllen, cm)) {
		struct dm_dmabuf_cmsg dc;

		if (cm->cmsg_level != SOL_SOCKET ||
		    (cm->cmsg_type != DM_SO_DEVMEM_DMABUF && cm->cmsg_type != DM_SO_DEVMEM_LINEAR))
			continue;
		if (cm->cmsg_len != CMSG_LEN(sizeof(dc)) || nf + nl == DM_RX_MAX_FRAGS) {
			*why = msg.msg_flags & MSG_CTRUNC ? "devmem cmsgs truncated" :
				"malformed devmem cmsg";
			goto fail;
		}
		memcpy(&dc, CMSG_DATA(cm), sizeof(dc));
		if (cm->cmsg_type == DM_SO_DEVMEM_LINEAR) {
			lins[nl].packed = lin;
			lins[nl].pos = pos;
			lins[nl++].size = dc.frag_size;
			lin += dc.frag_size;
		} else {
			tokens[nf] = dc.frag_token;
			if (dc.dmabuf_id != r->id) {
				nf++;
				*why = "payload landed in another binding's dma-buf";
				goto fail;
			}
			if (dc.frag_offset > r->size || dc.frag_size > r->size - dc.frag_offset) {
				nf++;
				*why = "fragment outside the RX region";
				goto fail;
			}
			frags[nf].off = dc.frag_offset;
			frags[nf].pos = pos;
			frags[nf].size = dc.frag_size;
			frags[nf].token = dc.frag_token;
			nf++;
			frag_bytes += dc.frag_size;
		}
		pos += dc.frag_size;
	}
	if (msg.msg_flags & MSG_CTRUNC) {
		*why = "devmem cmsgs truncated";
		goto fail;
	}
	if (!nf && !nl) {
		/* an skb in host memory: copied in place, plainly */
		atomic_fetch_add(&r->bytes_host, (uint64_t)n);
		atomic_fetch_add(&cnt->host, (uint64_t)n);
		return n;
	}
	if (pos != (uint64_t)n || lin + frag_bytes != (uint64_t)n) {
		*why = "devmem cmsgs do not add up to the bytes received";
		goto fail;
	}
	/* the copied runs to their places, last first: none moves backwards */
	for (i = nl - 1; i >= 0; i--)
		if (lins[i].pos != lins[i].packed)
			memmove((char *)dst + lins[i].pos, (char *)dst + lins[i].packed,
				lins[i].size);
	if (sink) {
		if (nf && sink(sink_arg, frags, nf, why))
			goto fail;
		goto counted;
	}
	if (frag_bytes)
		dmabuf_sync(r->dmabuf_fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	for (i = 0; i < nf; i++)
		memcpy((char *)dst + frags[i].pos, r->map + frags[i].off, frags[i].size);
	if (frag_bytes)
		dmabuf_sync(r->dmabuf_fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	err = dm_rx_tokens_return(fd, tokens, nf);
	if (err) {
		*why = "SO_DEVMEM_DONTNEED failed";
		errno = -err;
		return -1;
	}
counted:
	atomic_fetch_add(&r->bytes_dmabuf, frag_bytes);
	atomic_fetch_add(&r->bytes_host, (uint64_t)n - frag_bytes);
	atomic_fetch_add(&cnt->dmabuf, frag_bytes);
	atomic_fetch_add(&cnt->host, (uint64_t)n - frag_bytes);
	return n;
fail:
	/* what was reported is lost: give the tokens back, fail the comm */
	dm_rx_tokens_return(fd, tokens, nf);
	errno = EPROTO;
	return -1;
}
