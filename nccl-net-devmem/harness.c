// SPDX-License-Identifier: GPL-2.0
/*
 * nccl_harness: drives libnccl-net-devmem.so through the ncclNet API the
 * way NCCL does, with no NCCL and no GPU.
 *
 * It dlopen()s the plugin, dlsym()s ncclNetPlugin_v8 and ncclNetPlugin_v11
 * and follows NCCL's rules: init, devices, getProperties, listen, connect
 * and accept retried until they return a comm (they never block), regMr,
 * isend/irecv retried while *request is NULL with up to 8 requests in
 * flight, test() polling, multi-recv up to maxRecvs, closes with requests
 * in flight.  Sender and receiver are two processes (fork) over 127.0.0.1
 * ("lo", named in NCCL_DEVMEM_IFNAME); every byte received is checked, and
 * so are the bytes around each receive buffer.
 *
 * Every case runs in its own process group with a time limit and prints a
 * TAP line; the run ends with "N passed, N failed" and exits non-zero on
 * any failure.
 *
 * usage: nccl_harness [-v] [path/to/libnccl-net-devmem.so] [case-name...]
 * HARNESS_TIME_SCALE=N multiplies the time limits (valgrind);
 * HARNESS_SKIP=name,... leaves out the cases whose names contain one.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_net_api.h"
#include "proto.h"

#define MIB (1ul << 20)
#define GUARD 64
#define GUARD_BYTE 0xa5
#define POISON 0xee
#define MAX_DEPTH 8
#define MAX_N 8

static char plugin_path[4096];
static double time_scale = 1.0;
static int verbose;
static atomic_int warns;

/* HARNESS_WIRE=SRV_NS,SRV_IF,CLI_NS,CLI_IF: the "wire-" cases, between two
 * network namespaces over real NICs; the receiving side runs in SRV_NS on
 * SRV_IF, the peer (the sender) in CLI_NS on CLI_IF. */
static struct {
	int on;
	char srv_ns[64], srv_if[IF_NAMESIZE], cli_ns[64], cli_if[IF_NAMESIZE];
} wire;
static int in_peer;		/* this process is a forked peer (the sender) */
/* with HARNESS_WIRE: become nobody once in the namespace (a job without
 * CAP_NET_ADMIN, the helper's client) */
static int wire_nobody;
/* <grp.h>'s, not included: its struct group is not the plan's */
extern int setgroups(size_t size, const gid_t *list);
static const char *dev_name = "lo";	/* the device net_up() looks for */

/* What the plugin logged in this process, for the cases that check it. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[1 << 16];
static size_t log_len;

/* ---------------------------------------------------------------- utils */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int scaled(int ms)
{
	return (int)(ms * time_scale);
}

/* One write() per line, so lines of concurrent processes do not mix. */
static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "# [%d] ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, (size_t)n) < 0)
		return;
}

#define FAIL(...) do { diag(__VA_ARGS__); return -1; } while (0)

static void hlog(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		 const char *fmt, ...)
{
	char buf[768];
	va_list ap;

	(void)flags;
	if (level == NCCL_LOG_WARN)
		atomic_fetch_add(&warns, 1);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (log_len + strlen(buf) + 2 < sizeof(log_text)) {
		memcpy(log_text + log_len, buf, strlen(buf));
		log_len += strlen(buf);
		log_text[log_len++] = '\n';
		log_text[log_len] = 0;
	}
	pthread_mutex_unlock(&log_lock);
	if (!verbose)
		return;
	diag("%s %s:%d %s", level == NCCL_LOG_WARN ? "WARN" : "INFO", file, line, buf);
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix(r->s);
}

static uint64_t rnd_below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static void pat_fill(uint8_t *b, size_t n, uint64_t seed)
{
	size_t i;
	uint64_t v;

	for (i = 0; i + 8 <= n; i += 8) {
		v = mix(seed ^ (i * 0x100000001b3ull));
		memcpy(b + i, &v, 8);
	}
	if (i < n) {
		v = mix(seed ^ (i * 0x100000001b3ull));
		memcpy(b + i, &v, n - i);
	}
}

/* -1 when b holds the pattern, else the first wrong offset. */
static long pat_check(const uint8_t *b, size_t n, uint64_t seed)
{
	size_t i, j;
	uint64_t v;

	for (i = 0; i < n; i += 8) {
		size_t k = n - i < 8 ? n - i : 8;

		v = mix(seed ^ (i * 0x100000001b3ull));
		if (memcmp(b + i, &v, k)) {
			for (j = 0; j < k; j++)
				if (b[i + j] != ((uint8_t *)&v)[j])
					return (long)(i + j);
		}
	}
	return -1;
}

static long bytes_check(const uint8_t *b, size_t n, uint8_t val)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != val)
			return (long)i;
	return -1;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		diag("out of memory (%zu bytes)", n);
		_exit(3);
	}
	return p;
}

static int write_full(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int read_full(int fd, void *buf, size_t n, int ms)
{
	uint8_t *p = buf;
	uint64_t end = now_ms() + (uint64_t)ms;

	while (n) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		uint64_t t = now_ms();
		ssize_t r;

		if (t >= end || poll(&pf, 1, (int)(end - t)) <= 0)
			return -1;
		r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------ the plugin */

struct net {
	int ver;
	void *dl;
	ncclNet_v8_t *v8;
	ncclNet_v11_t *v11;
	void *ctx;
	int unpack;		/* the device says netDeviceType UNPACK */
};

/* NCCL's UNPACK layout (version 0x7), as its kernel reads it. */
#define UNPACK_DEPTH 16
#define UNPACK_METAS 2048
struct unpack_meta {
	struct {
		uint32_t src_off, len;
		uint64_t dst_off;
	} __attribute__((aligned(16))) mem[UNPACK_DEPTH][UNPACK_METAS];
	uint64_t cnt[UNPACK_DEPTH];
};
struct unpack_handle {
	struct unpack_meta *meta;
	void *bounce_buf;
	uint64_t head;
};

/* The device handles accept() filled, by recv comm, as NCCL keeps them. */
#define MAX_DEVHS 16
static struct {
	void *rc;
	ncclNetDeviceHandle_v8_t h;
} devhs[MAX_DEVHS];
static pthread_mutex_t devhs_lock = PTHREAD_MUTEX_INITIALIZER;

static ncclNetDeviceHandle_v8_t *devh_of(void *rc)
{
	ncclNetDeviceHandle_v8_t *h = NULL;
	int i;

	pthread_mutex_lock(&devhs_lock);
	for (i = 0; i < MAX_DEVHS && !h; i++)
		if (devhs[i].rc == rc)
			h = &devhs[i].h;
	pthread_mutex_unlock(&devhs_lock);
	return h;
}

static int net_open(struct net *n, int ver)
{
	memset(n, 0, sizeof(*n));
	n->ver = ver;
	n->dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl)
		FAIL("dlopen %s: %s", plugin_path, dlerror());
	n->v8 = dlsym(n->dl, "ncclNetPlugin_v8");
	n->v11 = dlsym(n->dl, "ncclNetPlugin_v11");
	if (!n->v8 || !n->v11)
		FAIL("dlsym ncclNetPlugin_v8 %p / v11 %p", (void *)n->v8, (void *)n->v11);
	return 0;
}

static ncclResult_t net_init(struct net *n, uint64_t comm_id)
{
	ncclNetCommConfig_v11_t cfg = { .trafficClass = -1 };

	if (n->ver == 8)
		return n->v8->init(hlog);
	return n->v11->init(&n->ctx, comm_id, &cfg, hlog, NULL);
}

/* The line of this process' plugin log that holds `what`, or NULL. */
static const char *log_find(const char *what)
{
	const char *p;

	pthread_mutex_lock(&log_lock);
	p = strstr(log_text, what);
	pthread_mutex_unlock(&log_lock);
	return p;
}

/* With HARNESS_WIRE: moves this process into its side's namespace, with
 * that namespace's /sys (as "ip netns exec" does), and names its NIC. */
static int wire_enter(void)
{
	const char *ns = in_peer ? wire.cli_ns : wire.srv_ns;
	char path[128];
	int fd;

	if (!wire.on || strcmp(dev_name, "lo"))
		return 0;
	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		FAIL("%s: %m", path);
	if (setns(fd, CLONE_NEWNET))
		FAIL("setns %s: %m", ns);
	close(fd);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) ||
	    umount2("/sys", MNT_DETACH) || mount("sysfs", "/sys", "sysfs", 0, NULL))
		FAIL("a /sys of netns %s: %m", ns);
	dev_name = in_peer ? wire.cli_if : wire.srv_if;
	setenv("NCCL_DEVMEM_IFNAME", dev_name, 1);
	if (wire_nobody) {
		pid_t parent = getppid();

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			FAIL("becoming nobody: %m");
		/* new credentials clear the parent-death signal: again, and
		 * the parent may have gone meanwhile */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			FAIL("the harness is gone");
	}
	return 0;
}

/* net_open + net_init + the device named dev_name ("lo", or the side's NIC). */
static int net_up(struct net *n, int ver, int *dev)
{
	int ndev = 0, i;

	if (wire_enter() || net_open(n, ver))
		return -1;
	if (net_init(n, 0x1234 + (uint64_t)getpid()) != ncclSuccess)
		FAIL("v%d init failed", ver);
	if (n->v8->devices(&ndev) != ncclSuccess || ndev < 1)
		FAIL("devices: %d", ndev);
	for (i = 0; i < ndev; i++) {
		ncclNetProperties_v8_t p;

		if (n->v8->getProperties(i, &p) == ncclSuccess && !strcmp(p.name, dev_name)) {
			*dev = i;
			n->unpack = p.netDeviceType == NCCL_NET_DEVICE_UNPACK;
			return 0;
		}
	}
	FAIL("no device \"%s\" among %d", dev_name, ndev);
}

static void net_down(struct net *n)
{
	if (n->ver == 11 && n->ctx)
		n->v11->finalize(n->ctx);
	n->ctx = NULL;
}

static ncclResult_t n_listen(struct net *n, int dev, void *h, void **lc)
{
	return n->ver == 8 ? n->v8->listen(dev, h, lc) : n->v11->listen(n->ctx, dev, h, lc);
}

static ncclResult_t n_connect(struct net *n, int dev, void *h, void **sc)
{
	ncclNetDeviceHandle_v8_t *dc = NULL;

	return n->ver == 8 ? n->v8->connect(dev, h, sc, &dc) :
			     n->v11->connect(n->ctx, dev, h, sc, &dc);
}

/* As NCCL: a device handle for the plugin to fill when it said UNPACK. */
static ncclResult_t n_accept(struct net *n, void *lc, void **rc)
{
	ncclNetDeviceHandle_v8_t h, *dc = n->unpack ? &h : NULL;
	ncclResult_t r;
	int i;

	memset(&h, 0, sizeof(h));
	r = n->ver == 8 ? n->v8->accept(lc, rc, &dc) : n->v11->accept(lc, rc, &dc);
	if (r || !*rc || !n->unpack)
		return r;
	pthread_mutex_lock(&devhs_lock);
	for (i = 0; i < MAX_DEVHS; i++)
		if (!devhs[i].rc) {
			devhs[i].rc = *rc;
			devhs[i].h = h;
			break;
		}
	pthread_mutex_unlock(&devhs_lock);
	return r;
}

static ncclResult_t n_regmr(struct net *n, void *c, void *d, size_t sz, int type, void **mh)
{
	return n->ver == 8 ? n->v8->regMr(c, d, sz, type, mh) : n->v11->regMr(c, d, sz, type, mh);
}

static ncclResult_t n_regmr_dmabuf(struct net *n, void *c, void *d, size_t sz, int type,
				   uint64_t off, int fd, void **mh)
{
	return n->ver == 8 ? n->v8->regMrDmaBuf(c, d, sz, type, off, fd, mh) :
			     n->v11->regMrDmaBuf(c, d, sz, type, off, fd, mh);
}

static ncclResult_t n_deregmr(struct net *n, void *c, void *mh)
{
	return n->ver == 8 ? n->v8->deregMr(c, mh) : n->v11->deregMr(c, mh);
}

static ncclResult_t n_isend(struct net *n, void *sc, void *d, size_t sz, int tag, void *mh,
			    void **req)
{
	if (n->ver == 8)
		return n->v8->isend(sc, d, (int)sz, tag, mh, req);
	return n->v11->isend(sc, d, sz, tag, mh, NULL, req);
}

static ncclResult_t n_irecv(struct net *n, void *rc, int cnt, void **d, const size_t *sz,
			    int *tags, void **mhs, void **req)
{
	int isz[MAX_N + 1];
	size_t ssz[MAX_N + 1];
	void *ph[MAX_N + 1] = { NULL };
	int i;

	for (i = 0; i < cnt && i <= MAX_N; i++) {
		isz[i] = (int)sz[i];
		ssz[i] = sz[i];
	}
	if (n->ver == 8)
		return n->v8->irecv(rc, cnt, d, isz, tags, mhs, req);
	return n->v11->irecv(rc, cnt, d, ssz, tags, mhs, ph, req);
}

static ncclResult_t n_test(struct net *n, void *req, int *done, int *sizes)
{
	return n->ver == 8 ? n->v8->test(req, done, sizes) : n->v11->test(req, done, sizes);
}

static ncclResult_t n_close_send(struct net *n, void *c)
{
	return n->ver == 8 ? n->v8->closeSend(c) : n->v11->closeSend(c);
}

static ncclResult_t n_close_recv(struct net *n, void *c)
{
	int i;

	pthread_mutex_lock(&devhs_lock);
	for (i = 0; i < MAX_DEVHS; i++)
		if (devhs[i].rc == c)
			devhs[i].rc = NULL;
	pthread_mutex_unlock(&devhs_lock);
	return n->ver == 8 ? n->v8->closeRecv(c) : n->v11->closeRecv(c);
}

static ncclResult_t n_close_listen(struct net *n, void *c)
{
	return n->ver == 8 ? n->v8->closeListen(c) : n->v11->closeListen(c);
}

/* connect() until it returns a comm: 0, an ncclResult_t, or -1 on timeout. */
static int connect_loop(struct net *n, int dev, void *h, void **sc, int ms)
{
	uint64_t end = now_ms() + (uint64_t)scaled(ms);
	ncclResult_t r;

	*sc = NULL;
	do {
		r = n_connect(n, dev, h, sc);
		if (r != ncclSuccess)
			return (int)r;
		if (*sc)
			return 0;
		usleep(200);
	} while (now_ms() < end);
	return -1;
}

static int accept_loop(struct net *n, void *lc, void **rc, int ms)
{
	uint64_t end = now_ms() + (uint64_t)scaled(ms);
	ncclResult_t r;

	*rc = NULL;
	do {
		r = n_accept(n, lc, rc);
		if (r != ncclSuccess)
			return (int)r;
		if (*rc)
			return 0;
		usleep(200);
	} while (now_ms() < end);
	return -1;
}

/* ------------------------------------------------------------- processes */

struct peer {
	pid_t pid;
	int rfd, wfd;		/* read from / write to the peer */
	void *arg;
};

typedef int (*peer_fn)(struct peer *self);

/* Forks fn as the peer; in the child, rfd/wfd talk to the parent. */
static int peer_spawn(struct peer *p, peer_fn fn, void *arg)
{
	int a[2], b[2];

	if (pipe(a) || pipe(b))
		FAIL("pipe: %m");
	fflush(stdout);
	p->pid = fork();
	if (p->pid < 0)
		FAIL("fork: %m");
	if (p->pid == 0) {
		struct peer self = { .pid = getppid(), .rfd = a[0], .wfd = b[1], .arg = arg };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(a[1]);
		close(b[0]);
		in_peer = 1;
		_exit(fn(&self) ? 1 : 0);
	}
	close(a[0]);
	close(b[1]);
	p->rfd = b[0];
	p->wfd = a[1];
	p->arg = arg;
	return 0;
}

/* 0 when the peer exited with 0 within ms; kills it otherwise. */
static int peer_wait(struct peer *p, int ms)
{
	uint64_t end = now_ms() + (uint64_t)scaled(ms);
	int st;

	for (;;) {
		pid_t r = waitpid(p->pid, &st, WNOHANG);

		if (r == p->pid)
			break;
		if (r < 0)
			FAIL("waitpid: %m");
		if (now_ms() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			close(p->rfd);
			close(p->wfd);
			FAIL("peer %d did not finish within %d ms", (int)p->pid, scaled(ms));
		}
		msleep(2);
	}
	close(p->rfd);
	close(p->wfd);
	if (WIFSIGNALED(st))
		FAIL("peer %d killed by signal %d", (int)p->pid, WTERMSIG(st));
	if (WEXITSTATUS(st))
		FAIL("peer %d failed (exit %d)", (int)p->pid, WEXITSTATUS(st));
	return 0;
}

/* The receiving side of a case: spawns the sender `fn`, listens (plugin
 * version `ver`), hands the sender the handle and accepts its connection. */
static int recv_side_up(struct peer *peer, peer_fn fn, void *arg, struct net *n, int ver,
			void **lc, void **rc)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	int dev;

	if (peer_spawn(peer, fn, arg))
		return -1;
	if (net_up(n, ver, &dev) || n_listen(n, dev, handle, lc))
		FAIL("setup failed");
	write_full(peer->wfd, handle, sizeof(handle));
	if (accept_loop(n, *lc, rc, 5000))
		FAIL("accept failed");
	return 0;
}

/* ----------------------------------------------------------------- plans */

/* One receive of n buffers and the n sends that fill it. */
struct group {
	int n;
	size_t size[MAX_N];	/* message for buffer i */
	size_t cap[MAX_N];	/* posted size of buffer i */
	int tag[MAX_N];
	uint64_t seed[MAX_N];
	int order[MAX_N];	/* the sender sends buffer order[0]'s message first */
};

struct plan {
	int ngroups;
	struct group *g;
	int depth;
	int random_test;	/* test() in-flight requests in random order */
	size_t maxsize, maxcap;
	int maxn;		/* most buffers in one receive */
	int total;		/* messages */
	int send_mem;		/* the sender's buffers: SEND_MEM_* */
	int send_drop_euid;	/* the sender becomes nobody after registering */
	int hold_first_ms;	/* receive #0 consumed only this long after it is done */
};

/* With hold_first_ms: how many of the other receives in flight were done
 * when the hold ended (-1: no hold). */
static int held_done = -1;

enum {
	SEND_MEM_MALLOC = 0,	/* malloc, regMr */
	SEND_MEM_MEMFD,		/* a mapped memfd (not a dma-buf), regMrDmaBuf */
	SEND_MEM_UDMABUF,	/* a mapped udmabuf, regMrDmaBuf */
};

static void plan_finish(struct plan *p)
{
	int i, j;

	p->maxsize = p->maxcap = 0;
	p->total = 0;
	p->maxn = 1;
	for (i = 0; i < p->ngroups; i++) {
		if (p->g[i].n > p->maxn)
			p->maxn = p->g[i].n;
		for (j = 0; j < p->g[i].n; j++) {
			if (p->g[i].size[j] > p->maxsize)
				p->maxsize = p->g[i].size[j];
			if (p->g[i].cap[j] > p->maxcap)
				p->maxcap = p->g[i].cap[j];
		}
		p->total += p->g[i].n;
	}
}

static void plan_sizes(struct plan *p, const size_t *sizes, int count, int depth, uint64_t seed)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->ngroups = count;
	p->g = calloc((size_t)count, sizeof(*p->g));
	p->depth = depth;
	for (i = 0; i < count; i++) {
		p->g[i].n = 1;
		p->g[i].size[0] = sizes[i];
		p->g[i].cap[0] = sizes[i];
		p->g[i].tag[0] = i;
		p->g[i].seed[0] = mix(seed + (uint64_t)i);
	}
	plan_finish(p);
}

/* count receives of 1..maxn buffers (every `full`th one of maxn when full > 0),
 * sizes in [0, maxsize], caps >= sizes. */
static void plan_random_full(struct plan *p, int count, size_t maxsize, int maxn, int full,
			     int depth, uint64_t seed)
{
	struct rng r = { seed };
	int i, j;

	memset(p, 0, sizeof(*p));
	p->ngroups = count;
	p->g = calloc((size_t)count, sizeof(*p->g));
	p->depth = depth;
	p->random_test = 1;
	for (i = 0; i < count; i++) {
		struct group *g = &p->g[i];
		int base = (int)rnd_below(&r, 1000);

		g->n = 1 + (int)rnd_below(&r, (uint64_t)maxn);
		if (full > 0 && i % full == 0)
			g->n = maxn;
		for (j = 0; j < g->n; j++) {
			uint64_t k = rnd_below(&r, 8);

			/* Mostly small and inline sizes, some up to maxsize. */
			if (k < 2)
				g->size[j] = rnd_below(&r, DM_INLINE_MAX + 2);
			else if (k < 5)
				g->size[j] = rnd_below(&r, 70000);
			else
				g->size[j] = rnd_below(&r, maxsize + 1);
			g->cap[j] = g->size[j] + (rnd_below(&r, 2) ? rnd_below(&r, 5000) : 0);
			g->tag[j] = base + 3 * j;	/* distinct within the receive */
			g->seed[j] = rnd(&r);
			g->order[j] = j;
		}
		for (j = g->n - 1; j > 0; j--) {
			int k = (int)rnd_below(&r, (uint64_t)j + 1), t = g->order[j];

			g->order[j] = g->order[k];
			g->order[k] = t;
		}
	}
	plan_finish(p);
}

static void plan_random(struct plan *p, int count, size_t maxsize, int maxn, int depth,
			uint64_t seed)
{
	plan_random_full(p, count, maxsize, maxn, 0, depth, seed);
}

static void plan_free(struct plan *p)
{
	free(p->g);
	p->g = NULL;
}

/* --------------------------------------------------------------- drivers */

/* Memory for a sender's buffers: malloc'd, or memfd pages (mapped here)
 * behind a udmabuf or not, registered with regMrDmaBuf at dma-buf offset
 * DMABUF_OFF with the fd closed right after the call, as NCCL does. */
#define DMABUF_OFF 4096
struct send_mem {
	uint8_t *slab;
	void *map;
	size_t maplen;
};

static int send_mem_get(struct net *n, void *sc, int mode, size_t len, struct send_mem *m,
			void **mh)
{
	struct udmabuf_create create = { 0 };
	int memfd, fd, dev, rc;

	memset(m, 0, sizeof(*m));
	if (mode == SEND_MEM_MALLOC) {
		m->slab = xmalloc(len);
		return (int)n_regmr(n, sc, m->slab, len, NCCL_PTR_HOST, mh);
	}
	m->maplen = (DMABUF_OFF + len + 4095) & ~(size_t)4095;
	memfd = memfd_create("harness-send", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)m->maplen) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		FAIL("memfd of %zu bytes: %m", m->maplen);
	m->map = mmap(NULL, m->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		FAIL("mmap of the memfd: %m");
	}
	m->slab = (uint8_t *)m->map + DMABUF_OFF;
	fd = memfd;
	if (mode == SEND_MEM_UDMABUF) {
		dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		if (dev < 0)
			FAIL("/dev/udmabuf: %m");
		create.memfd = (uint32_t)memfd;
		create.flags = UDMABUF_FLAGS_CLOEXEC;
		create.size = m->maplen;
		fd = ioctl(dev, UDMABUF_CREATE, &create);
		close(dev);
		close(memfd);
		if (fd < 0)
			FAIL("UDMABUF_CREATE of %zu bytes: %m", m->maplen);
	}
	rc = (int)n_regmr_dmabuf(n, sc, m->slab, len, NCCL_PTR_HOST, DMABUF_OFF, fd, mh);
	close(fd);
	return rc;
}

static void send_mem_put(struct send_mem *m)
{
	if (m->map)
		munmap(m->map, m->maplen);
	else
		free(m->slab);
}

/*
 * Each returns 0 when every message went through and checked, else an
 * ncclResult_t from the plugin or -1 (timeout, wrong data), with the reason
 * in diag output unless quiet.
 */
static int run_send(struct net *n, void *sc, const struct plan *p, int ms, int quiet)
{
	size_t slot = p->maxsize ? p->maxsize : 1;
	struct send_mem mem;
	uint8_t *slab;
	struct {
		void *req;
		size_t size;
	} s[MAX_DEPTH];
	uint64_t end = now_ms() + (uint64_t)scaled(ms);
	int gi = 0, k = 0, posted = 0, done = 0, filled = -1, filled_slot = 0, i, rc = 0;
	struct rng r = { 77 };
	void *mh = NULL;

	memset(s, 0, sizeof(s));
	rc = send_mem_get(n, sc, p->send_mem, slot * (size_t)p->depth, &mem, &mh);
	slab = mem.slab;
	if (rc) {
		if (!quiet)
			diag("send: %s: %d", p->send_mem ? "regMrDmaBuf" : "regMr", rc);
		goto out;
	}
	/* every thread of the process (glibc): the kernel then refuses the
	 * TX binding root made to the plugin's progress threads */
	if (p->send_drop_euid && seteuid(65534)) {
		if (!quiet)
			diag("send: seteuid: %m");
		rc = -1;
		goto out;
	}
	while (done < p->total) {
		if (now_ms() > end) {
			if (!quiet)
				diag("send: timeout, %d of %d done", done, p->total);
			rc = -1;
			goto out;
		}
		while (posted < p->total) {
			const struct group *g = &p->g[gi];
			int b = g->order[k], free_slot = -1;
			void *req = NULL;

			if (filled == posted) {
				free_slot = filled_slot;	/* filled already, isend said "later" */
			} else {
				for (i = 0; i < p->depth; i++)
					if (!s[i].req) {
						free_slot = i;
						break;
					}
				if (free_slot < 0)
					break;
				pat_fill(slab + (size_t)free_slot * slot, g->size[b], g->seed[b]);
				filled = posted;
				filled_slot = free_slot;
			}
			rc = (int)n_isend(n, sc, slab + (size_t)free_slot * slot, g->size[b], g->tag[b],
					  mh, &req);
			if (rc) {
				if (!quiet)
					diag("send: isend #%d: %d", posted, rc);
				goto out;
			}
			if (!req)
				break;	/* would block: retry later, as NCCL does */
			s[free_slot].req = req;
			s[free_slot].size = g->size[b];
			posted++;
			if (++k == g->n) {
				k = 0;
				gi++;
			}
		}
		for (i = 0; i < p->depth; i++) {
			int j = p->random_test ? (int)rnd_below(&r, (uint64_t)p->depth) : i;
			int d = 0, size = -1;

			if (!s[j].req)
				continue;
			rc = (int)n_test(n, s[j].req, &d, &size);
			if (rc) {
				if (!quiet)
					diag("send: test: %d", rc);
				goto out;
			}
			if (!d)
				continue;
			if ((size_t)size != s[j].size) {
				if (!quiet)
					diag("send: test reports %d bytes, sent %zu", size, s[j].size);
				rc = -1;
				goto out;
			}
			s[j].req = NULL;
			done++;
		}
	}
out:
	if (mh)
		n_deregmr(n, sc, mh);
	send_mem_put(&mem);
	return rc;
}

static int check_buf(const struct group *g, int b, const uint8_t *buf, int got, int gi)
{
	long bad;

	if ((size_t)got != g->size[b])
		FAIL("recv #%d buffer %d: test reports %d bytes, sent %zu", gi, b, got, g->size[b]);
	bad = pat_check(buf, g->size[b], g->seed[b]);
	if (bad >= 0)
		FAIL("recv #%d buffer %d: wrong byte at %ld of %zu", gi, b, bad, g->size[b]);
	bad = bytes_check(buf + g->size[b], g->cap[b] - g->size[b], POISON);
	if (bad >= 0)
		FAIL("recv #%d buffer %d: byte %zu written past the message (%zu bytes, cap %zu)",
		     gi, b, g->size[b] + (size_t)bad, g->size[b], g->cap[b]);
	bad = bytes_check(buf + g->cap[b], GUARD, GUARD_BYTE);
	if (bad >= 0)
		FAIL("recv #%d buffer %d: guard byte %ld after the buffer overwritten", gi, b, bad);
	return 0;
}

/* Bytes the harness gathered as NCCL's UNPACK kernel would, this process. */
static uint64_t unpack_gathered;

/* What NCCL's kernel does for the next receive of an UNPACK comm: head
 * first, then each meta of that slot from the RX region into buf. */
static int unpack_gather(struct unpack_handle *uh, uint8_t *buf, size_t cap)
{
	struct unpack_meta *m = uh->meta;
	uint64_t cnt, i;
	unsigned slot;

	uh->head++;
	slot = (unsigned)(uh->head % UNPACK_DEPTH);
	cnt = __atomic_load_n(&m->cnt[slot], __ATOMIC_ACQUIRE);
	if (cnt > UNPACK_METAS)
		FAIL("UNPACK slot %u has %llu metas", slot, (unsigned long long)cnt);
	if (cnt && !uh->bounce_buf)
		FAIL("UNPACK metas without a bounce buffer");
	for (i = 0; i < cnt; i++) {
		uint64_t d = m->mem[slot][i].dst_off, l = m->mem[slot][i].len;

		if (d > cap || l > cap - d)
			FAIL("UNPACK meta %llu: %llu bytes at %llu, outside a %zu-byte receive",
			     (unsigned long long)i, (unsigned long long)l, (unsigned long long)d,
			     cap);
		memcpy(buf + d, (uint8_t *)uh->bounce_buf + m->mem[slot][i].src_off, l);
		unpack_gathered += l;
	}
	return 0;
}

static int run_recv(struct net *n, void *rc_, const struct plan *p, int ms, int quiet)
{
	size_t slot = p->maxcap + GUARD;
	size_t total = slot * (size_t)p->maxn * (size_t)p->depth;
	uint8_t *slab = xmalloc(total);
	struct {
		void *req;
		int g;
		int done;
		int sizes[MAX_N];
	} s[MAX_DEPTH];
	uint64_t end = now_ms() + (uint64_t)scaled(ms);
	int posted = 0, done = 0, i, b, rc = 0;
	struct rng r = { 99 };
	void *mh = NULL;
	ncclNetDeviceHandle_v8_t *dh = devh_of(rc_);
	struct unpack_handle *uh = NULL;

	memset(s, 0, sizeof(s));
	if (dh) {
		uh = dh->handle;
		if (dh->netDeviceType != NCCL_NET_DEVICE_UNPACK ||
		    dh->netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION || !uh ||
		    dh->needsProxyProgress != 1 || uh->head != UINT64_MAX || !uh->meta) {
			if (!quiet)
				diag("recv: accept filled the device handle wrong");
			rc = -1;
			goto out;
		}
	}
	rc = (int)n_regmr(n, rc_, slab, total, NCCL_PTR_HOST, &mh);
	if (rc) {
		if (!quiet)
			diag("recv: regMr: %d", rc);
		goto out;
	}
	while (done < p->ngroups) {
		if (now_ms() > end) {
			if (!quiet)
				diag("recv: timeout, %d of %d receives done", done, p->ngroups);
			rc = -1;
			goto out;
		}
		while (posted < p->ngroups) {
			const struct group *g = &p->g[posted];
			void *data[MAX_N], *mhs[MAX_N], *req = NULL;
			int tags[MAX_N], free_slot = -1;

			for (i = 0; i < p->depth; i++)
				if (!s[i].req) {
					free_slot = i;
					break;
				}
			if (free_slot < 0)
				break;
			for (b = 0; b < g->n; b++) {
				uint8_t *buf = slab + ((size_t)free_slot * (size_t)p->maxn + (size_t)b) * slot;

				memset(buf, POISON, g->cap[b]);
				memset(buf + g->cap[b], GUARD_BYTE, GUARD);
				data[b] = buf;
				mhs[b] = mh;
				tags[b] = g->tag[b];
			}
			rc = (int)n_irecv(n, rc_, g->n, data, g->cap, tags, mhs, &req);
			if (rc) {
				if (!quiet)
					diag("recv: irecv #%d: %d", posted, rc);
				goto out;
			}
			if (!req)
				break;
			s[free_slot].req = req;
			s[free_slot].g = posted++;
		}
		for (i = 0; i < p->depth; i++) {
			int j = p->random_test ? (int)rnd_below(&r, (uint64_t)p->depth) : i;
			int d = 0, sizes[MAX_N];

			if (!s[j].req || s[j].done)
				continue;
			for (b = 0; b < MAX_N; b++)
				sizes[b] = -1;
			rc = (int)n_test(n, s[j].req, &d, sizes);
			if (rc) {
				if (!quiet)
					diag("recv: test: %d", rc);
				goto out;
			}
			if (!d)
				continue;
			s[j].done = 1;
			memcpy(s[j].sizes, sizes, sizeof(sizes));
		}
		/* in posting order: UNPACK gathers, checks, irecvConsumed */
		for (;;) {
			const struct group *g;
			int j;

			for (j = 0; j < p->depth; j++)
				if (s[j].req && s[j].done && s[j].g == done)
					break;
			if (j == p->depth)
				break;
			g = &p->g[s[j].g];
			if (p->hold_first_ms && done == 0) {
				/* receive #0's pages held: what else gets done? */
				int k;

				usleep((useconds_t)scaled(p->hold_first_ms) * 1000);
				held_done = 0;
				for (k = 0; k < p->depth; k++) {
					int d = 0, sizes[MAX_N];

					if (k == j || !s[k].req)
						continue;
					if (!s[k].done) {
						for (b = 0; b < MAX_N; b++)
							sizes[b] = -1;
						rc = (int)n_test(n, s[k].req, &d, sizes);
						if (rc)
							goto out;
						if (d) {
							s[k].done = 1;
							memcpy(s[k].sizes, sizes, sizeof(sizes));
						}
					}
					held_done += s[k].done;
				}
			}
			for (b = 0; b < g->n; b++) {
				uint8_t *buf = slab + ((size_t)j * (size_t)p->maxn + (size_t)b) * slot;

				if (uh && unpack_gather(uh, buf, g->cap[b])) {
					rc = -1;
					goto out;
				}
				if (check_buf(g, b, buf, s[j].sizes[b], s[j].g)) {
					rc = -1;
					goto out;
				}
			}
			/* as NCCL: for every receive, also with copy delivery */
			{
				rc = (int)n->v8->irecvConsumed(rc_, g->n, s[j].req);
				if (rc) {
					if (!quiet)
						diag("recv: irecvConsumed #%d: %d", done, rc);
					goto out;
				}
			}
			s[j].req = NULL;
			s[j].done = 0;
			done++;
		}
	}
out:
	if (mh)
		n_deregmr(n, rc_, mh);
	free(slab);
	return rc;
}

/* A sender peer's start: the plugin (API v11), the receiver's handle from
 * the pipe, a connected send comm. */
static int peer_connect(struct peer *self, struct net *n, void **sc)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	int dev;

	if (net_up(n, 11, &dev))
		return -1;
	if (read_full(self->rfd, handle, sizeof(handle), scaled(5000)))
		return -1;
	if (connect_loop(n, dev, handle, sc, 5000))
		FAIL("connect failed");
	return 0;
}

/* A 8-byte message, for identifying connections. */
static int send_word(struct net *n, void *sc, uint64_t v)
{
	uint64_t buf = v;
	void *mh = NULL, *req = NULL;
	uint64_t end = now_ms() + (uint64_t)scaled(5000);
	int d = 0, rc;

	if (n_regmr(n, sc, &buf, sizeof(buf), NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	while (!req && now_ms() < end)
		if ((rc = n_isend(n, sc, &buf, sizeof(buf), 0, mh, &req)))
			FAIL("isend: %d", rc);
	while (req && !d && now_ms() < end)
		if ((rc = n_test(n, req, &d, NULL)))
			FAIL("test: %d", rc);
	n_deregmr(n, sc, mh);
	return d ? 0 : -1;
}

static int recv_word(struct net *n, void *rc_, uint64_t *v)
{
	uint64_t buf = 0;
	size_t sz = sizeof(buf);
	void *mh = NULL, *req = NULL, *data = &buf;
	uint64_t end = now_ms() + (uint64_t)scaled(5000);
	int d = 0, tag = 0, rc, got = 0;

	if (n_regmr(n, rc_, &buf, sizeof(buf), NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	while (!req && now_ms() < end)
		if ((rc = n_irecv(n, rc_, 1, &data, &sz, &tag, &mh, &req)))
			FAIL("irecv: %d", rc);
	while (req && !d && now_ms() < end)
		if ((rc = n_test(n, req, &d, &got)))
			FAIL("test: %d", rc);
	n_deregmr(n, rc_, mh);
	if (!d || got != (int)sizeof(buf))
		FAIL("recv_word: done %d, %d bytes", d, got);
	*v = buf;
	return 0;
}

/* ------------------------------------------------- a sender/receiver pair */

/* Payload bytes of a plan that travel on data sockets (not inline). */
static uint64_t plan_data_bytes(const struct plan *p)
{
	uint64_t sum = 0;
	int i, j;

	for (i = 0; i < p->ngroups; i++)
		for (j = 0; j < p->g[i].n; j++)
			if (p->g[i].size[j] > DM_INLINE_MAX)
				sum += p->g[i].size[j];
	return sum;
}

/* a case's result: passes as TAP "ok ... # SKIP" */
#define HARNESS_SKIPPED 77

/* The number the plugin logged just before `what`, or -1. */
/* The number just before the nth (from 0) `what` in the log, or -1. */
static long long logged_number_nth(const char *what, int nth)
{
	const char *p = log_find(what), *q;

	while (p && nth-- > 0)
		p = strstr(p + 1, what);
	if (!p)
		return -1;
	q = p;
	while (q > log_text && q[-1] >= '0' && q[-1] <= '9')
		q--;
	return q < p ? strtoll(q, NULL, 10) : -1;
}

static long long logged_number(const char *what)
{
	return logged_number_nth(what, 0);
}


struct pair_cfg {
	int send_ver, recv_ver;
	const char *send_env[4], *recv_env[4];	/* "NAME=value" */
	struct plan *plan;
	int ms;
	int send_tx;		/* SEND_TX_*: what the sender's log must say */
	const char *send_expect;	/* and a line it must have (NULL: none) */
	int (*after_accept)(void);	/* run by the receiver (NULL: none) */
	int recv_nobody;	/* the receiver becomes nobody (wire_nobody) */
	int conns;		/* connections, one after the other (0: 1) */
};

#define PAIR_MAX_CONNS 4

enum {
	SEND_TX_ANY = 0,
	SEND_TX_DEVMEM,		/* every data-socket byte sent from the dma-buf */
	SEND_TX_PLAIN,		/* none */
};

/* After closeSend: checks the sender's log against cfg. */
static int sender_expect(const struct pair_cfg *cfg)
{
	uint64_t want = plan_data_bytes(cfg->plan);
	long long got;

	if (cfg->send_expect && !log_find(cfg->send_expect))
		FAIL("sender: no \"%s\" in the plugin's log", cfg->send_expect);
	if (cfg->send_tx == SEND_TX_ANY)
		return 0;
	got = logged_number(" bytes sent from a dma-buf");
	if (got < 0)
		FAIL("sender: the send comm did not log its bytes");
	if (cfg->send_tx == SEND_TX_DEVMEM && (uint64_t)got != want)
		FAIL("sender: %lld of %llu data-socket bytes sent from the dma-buf", got,
		     (unsigned long long)want);
	if (cfg->send_tx == SEND_TX_PLAIN && got)
		FAIL("sender: %lld bytes sent from a dma-buf, plain send expected", got);
	diag("sender: %lld of %llu data-socket bytes sent from the dma-buf", got,
	     (unsigned long long)want);
	return 0;
}

static void apply_env(const char *const *env)
{
	int i;

	for (i = 0; i < 4 && env[i]; i++)
		putenv((char *)env[i]);
}

static int pair_sender(struct peer *self)
{
	struct pair_cfg *cfg = self->arg;
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	int i, conns = cfg->conns ? cfg->conns : 1;
	void *sc[PAIR_MAX_CONNS] = { NULL };
	struct net n;
	int dev, rc = 0;

	apply_env(cfg->send_env);
	if (net_up(&n, cfg->send_ver, &dev))
		return -1;
	if (read_full(self->rfd, handle, sizeof(handle), scaled(5000)))
		FAIL("sender: no handle");
	for (i = 0; i < conns; i++) {
		rc = connect_loop(&n, dev, handle, &sc[i], 5000);
		if (rc)
			FAIL("sender: connect %d: %d", i, rc);
	}
	/* the plan over each in turn, all of them open until the end */
	for (i = 0; i < conns && !rc; i++)
		rc = run_send(&n, sc[i], cfg->plan, cfg->ms, 0);
	for (i = 0; i < conns; i++)
		if (n_close_send(&n, sc[i]))
			FAIL("sender: closeSend %d failed", i);
	net_down(&n);
	if (!rc)
		rc = sender_expect(cfg);
	return rc ? -1 : 0;
}

/* Runs cfg->plan from a forked sender to this process. */
static int run_pair(struct pair_cfg *cfg)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	int i, conns = cfg->conns ? cfg->conns : 1;
	void *lc, *rcs[PAIR_MAX_CONNS] = { NULL };
	struct peer peer;
	struct net n;
	int dev, rc = 0, prc;

	if (conns > PAIR_MAX_CONNS)
		FAIL("%d connections, at most %d", conns, PAIR_MAX_CONNS);
	if (peer_spawn(&peer, pair_sender, cfg))
		return -1;
	wire_nobody = cfg->recv_nobody;
	apply_env(cfg->recv_env);
	if (net_up(&n, cfg->recv_ver, &dev))
		return -1;
	memset(handle, 0, sizeof(handle));
	if (n_listen(&n, dev, handle, &lc))
		FAIL("listen failed");
	write_full(peer.wfd, handle, sizeof(handle));
	for (i = 0; i < conns; i++) {
		rc = accept_loop(&n, lc, &rcs[i], 5000);
		if (rc)
			FAIL("accept %d: %d", i, rc);
	}
	if (cfg->after_accept && cfg->after_accept()) {
		/* the comms closed first: the sender fails at once */
		for (i = 0; i < conns; i++)
			n_close_recv(&n, rcs[i]);
		n_close_listen(&n, lc);
		peer_wait(&peer, cfg->ms + 5000);
		net_down(&n);
		return -1;
	}
	for (i = 0; i < conns && !rc; i++)
		rc = run_recv(&n, rcs[i], cfg->plan, cfg->ms, 0);
	prc = peer_wait(&peer, cfg->ms + 5000);
	for (i = 0; i < conns; i++)
		if (n_close_recv(&n, rcs[i]))
			FAIL("close %d failed", i);
	if (n_close_listen(&n, lc))
		FAIL("close failed");
	net_down(&n);
	return rc || prc ? -1 : 0;
}

/* ------------------------------------------------------------------ cases */

struct dev_expect {
	const char *ifname;	/* NULL: unset */
	int want_lo;		/* 1: exactly "lo", 0: no "lo", -1: init must fail */
};

static int devices_child(struct peer *self)
{
	const struct dev_expect *e = self->arg;
	struct net n;
	int ndev = -1, i;
	ncclResult_t r;

	if (e->ifname)
		setenv("NCCL_DEVMEM_IFNAME", e->ifname, 1);
	else
		unsetenv("NCCL_DEVMEM_IFNAME");
	if (net_open(&n, 8))
		return -1;
	r = net_init(&n, 0);
	n.v8->devices(&ndev);
	if (e->want_lo < 0) {
		if (r == ncclSuccess || ndev != 0)
			FAIL("IFNAME=%s: init %d, %d devices; expected failure", e->ifname, r, ndev);
		return 0;
	}
	if (r != ncclSuccess) {
		if (e->want_lo == 0 && ndev == 0) {
			diag("no interface but lo is up here: init fails as it should");
			return 0;
		}
		FAIL("init failed (%d)", r);
	}
	for (i = 0; i < ndev; i++) {
		ncclNetProperties_v8_t p8;
		ncclNetProperties_v11_t p11;

		if (n.v8->getProperties(i, &p8) || n.v11->getProperties(i, &p11))
			FAIL("getProperties(%d) failed", i);
		if (!strcmp(p8.name, "lo") != (e->want_lo == 1))
			FAIL("IFNAME=%s: device %d is %s", e->ifname ? e->ifname : "(unset)", i,
			     p8.name);
		if (strcmp(p8.name, p11.name) || p8.ptrSupport != NCCL_PTR_HOST ||
		    p11.ptrSupport != NCCL_PTR_HOST || p8.speed <= 0 || p8.speed != p11.speed ||
		    p8.maxRecvs != 1 || p11.maxRecvs != 1 || p8.maxComms <= 0 ||
		    p8.netDeviceType != NCCL_NET_DEVICE_HOST || p8.regIsGlobal)
			FAIL("device %d: unexpected v8 properties", i);
		if (p11.maxP2pBytes != (1ul << 30) || p11.maxCollBytes != (1ul << 30) ||
		    p11.vProps.ndevs != 1 || p11.vProps.devs[0] != i || p11.forceFlush ||
		    p11.maxMultiRequestSize != 1)
			FAIL("device %d: unexpected v11 properties", i);
		if (verbose)
			diag("dev %d: %s pci %s speed %d", i, p8.name, p8.pciPath ? p8.pciPath : "-",
			     p8.speed);
	}
	if (e->want_lo == 1 && ndev != 1)
		FAIL("IFNAME=%s: %d devices, expected 1", e->ifname, ndev);
	{
		ncclNetProperties_v8_t p8;
		ncclNetProperties_v11_t p11;

		if (n.v8->getProperties(ndev, &p8) == ncclSuccess ||
		    n.v11->getProperties(-1, &p11) == ncclSuccess)
			FAIL("getProperties of a device out of range succeeded");
	}
	return 0;
}

static int case_devices(void)
{
	static const struct dev_expect ex[] = {
		{ "lo", 1 }, { "=lo", 1 }, { NULL, 0 }, { "^lo", 0 }, { "^eth,lo", 0 },
		{ "=nonexistent0", -1 },
	};
	struct net n;
	void *ctx1 = NULL, *ctx2 = NULL, *dl;
	ncclNetCommConfig_v11_t cfg = { 0 };
	size_t i;
	uint64_t junk[4] = { 0 };

	for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		struct peer p;

		if (peer_spawn(&p, devices_child, (void *)&ex[i]) || peer_wait(&p, 5000))
			FAIL("devices with NCCL_DEVMEM_IFNAME=%s", ex[i].ifname ? ex[i].ifname : "(unset)");
	}
	/* The tables, and nothing else, are exported. */
	if (net_open(&n, 11))
		return -1;
	dl = n.dl;
	if (strcmp(n.v8->name, "devmem") || strcmp(n.v11->name, "devmem"))
		FAIL("plugin names %s / %s", n.v8->name, n.v11->name);
	if (dlsym(dl, "dm_isend") || dlsym(dl, "dm_listen") || dlsym(dl, "dm_log") ||
	    dlsym(dl, "dm_plan"))
		FAIL("internal symbols are exported");
	if (!n.v11->finalize || !n.v11->init || !n.v8->iflush || !n.v8->irecvConsumed ||
	    !n.v11->irecvConsumed || n.v8->getDeviceMr || !n.v8->regMrDmaBuf ||
	    !n.v11->regMrDmaBuf)
		FAIL("unexpected table entries");
	setenv("NCCL_DEVMEM_IFNAME", "lo", 1);
	/* v11: one context per communicator, independent. */
	if (n.v11->init(&ctx1, 1, &cfg, hlog, NULL) || n.v11->init(&ctx2, 2, NULL, hlog, NULL) ||
	    !ctx1 || !ctx2 || ctx1 == ctx2)
		FAIL("v11 init: contexts %p %p", ctx1, ctx2);
	if (n.v11->finalize(ctx1) || n.v11->finalize(ctx2))
		FAIL("finalize failed");
	if (n.v11->finalize(junk) == ncclSuccess)
		FAIL("finalize of a foreign pointer succeeded");
	return 0;
}

static const size_t size_list[] = {
	0, 1, 2, 3, 7, 127, 128, 129, 1000, 4095, 4096, 4097, 65535, 65536, 65537, 131071,
	262147, MIB, MIB + 13, 3 * MIB + 1, 64 * MIB,
};
#define NSIZES ((int)(sizeof(size_list) / sizeof(size_list[0])))

static int sizes_case(int ver)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = ver, .recv_ver = ver, .plan = &p, .ms = 20000 };
	int rc;

	plan_sizes(&p, size_list, NSIZES, 2, 1000 + (uint64_t)ver);
	rc = run_pair(&cfg);
	plan_free(&p);
	return rc;
}

static int case_sizes_v8(void)
{
	return sizes_case(8);
}

static int case_sizes_v11(void)
{
	return sizes_case(11);
}

/* The largest message the plugin takes (maxP2pBytes): 1 GiB, and 1 GiB - 1. */
static int case_max_size(void)
{
	static const size_t sizes[] = { 1ul << 30, (1ul << 30) - 1 };
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 40000 };
	int rc;

	plan_sizes(&p, sizes, 2, 1, 3000);
	rc = run_pair(&cfg);
	plan_free(&p);
	return rc;
}

static int case_outstanding(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 8, .recv_ver = 11, .plan = &p, .ms = 20000 };
	int rc;

	/* 400 messages, 8 in flight each way, tested in random order; v8 -> v11. */
	plan_random(&p, 400, 600000, 1, 8, 4242);
	rc = run_pair(&cfg);
	plan_free(&p);
	if (rc)
		return rc;
	cfg.send_ver = 11;
	cfg.recv_ver = 8;
	plan_random(&p, 200, 2 * MIB, 1, 8, 4343);
	rc = run_pair(&cfg);
	plan_free(&p);
	return rc;
}

static int case_multirecv(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 20000 };
	int rc;

	/* Receives of 1 to 8 buffers; the sender sends each group in shuffled order. */
	plan_random_full(&p, 200, 300000, 8, 10, 8, 777);
	rc = run_pair(&cfg);
	plan_free(&p);
	if (rc)
		return rc;
	cfg.send_ver = cfg.recv_ver = 8;
	plan_random(&p, 100, 100000, 8, 4, 778);
	rc = run_pair(&cfg);
	plan_free(&p);
	return rc;
}

/* ---- several connections at once ---- */

#define NCONN 4

struct conn_job {
	struct net *n;
	void *comm;
	int id;
	int rc;
};

static void conn_plan(struct plan *p, int id)
{
	plan_random(p, 60, 3 * MIB, id % 2 ? 4 : 1, 4, 5000 + (uint64_t)id);
}

static void *send_job(void *arg)
{
	struct conn_job *j = arg;
	struct plan p;

	conn_plan(&p, j->id);
	j->rc = send_word(j->n, j->comm, (uint64_t)j->id) || run_send(j->n, j->comm, &p, 20000, 0);
	plan_free(&p);
	return NULL;
}

static void *recv_job(void *arg)
{
	struct conn_job *j = arg;
	struct plan p;
	uint64_t id;

	j->rc = recv_word(j->n, j->comm, &id);
	if (j->rc)
		return NULL;
	if (id >= NCONN) {
		diag("connection says it is %llu", (unsigned long long)id);
		j->rc = -1;
		return NULL;
	}
	j->id = (int)id;
	conn_plan(&p, j->id);
	j->rc = run_recv(j->n, j->comm, &p, 20000, 0);
	plan_free(&p);
	return NULL;
}

static int multiconn_sender(struct peer *self)
{
	uint8_t handles[2][NCCL_NET_HANDLE_MAXSIZE], h[NCONN][NCCL_NET_HANDLE_MAXSIZE];
	struct net n;
	void *sc[NCONN] = { NULL };
	struct conn_job jobs[NCONN];
	pthread_t th[NCONN];
	uint64_t end;
	int dev, i, left = NCONN, rc = 0;

	if (net_up(&n, 11, &dev))
		return -1;
	if (read_full(self->rfd, handles, sizeof(handles), scaled(5000)))
		FAIL("no handles");
	/* Two connections to each listener, each with its own copy of the handle,
	 * all connecting at the same time. */
	for (i = 0; i < NCONN; i++)
		memcpy(h[i], handles[i % 2], NCCL_NET_HANDLE_MAXSIZE);
	end = now_ms() + (uint64_t)scaled(5000);
	while (left && now_ms() < end) {
		for (i = 0; i < NCONN; i++) {
			if (sc[i])
				continue;
			if (n_connect(&n, dev, h[i], &sc[i]))
				FAIL("connect %d failed", i);
			if (sc[i])
				left--;
		}
	}
	if (left)
		FAIL("%d connections not established", left);
	for (i = 0; i < NCONN; i++) {
		jobs[i] = (struct conn_job){ .n = &n, .comm = sc[i], .id = i };
		pthread_create(&th[i], NULL, send_job, &jobs[i]);
	}
	for (i = 0; i < NCONN; i++) {
		pthread_join(th[i], NULL);
		rc |= jobs[i].rc;
		if (n_close_send(&n, sc[i]))
			rc = -1;
	}
	net_down(&n);
	return rc;
}

static int case_multiconn(void)
{
	uint8_t handles[2][NCCL_NET_HANDLE_MAXSIZE];
	struct net n[2];
	void *lc[2], *rcs[NCONN] = { NULL };
	struct conn_job jobs[NCONN];
	pthread_t th[NCONN];
	struct peer peer;
	uint64_t end;
	int dev, i, got = 0, rc = 0, seen = 0;

	if (peer_spawn(&peer, multiconn_sender, NULL))
		return -1;
	/* Two communicators (v11 contexts) in this process, one listener each. */
	if (net_up(&n[0], 11, &dev))
		return -1;
	n[1] = n[0];
	if (net_init(&n[1], 99))
		FAIL("second v11 init failed");
	for (i = 0; i < 2; i++)
		if (n_listen(&n[i], dev, handles[i], &lc[i]))
			FAIL("listen %d failed", i);
	write_full(peer.wfd, handles, sizeof(handles));
	end = now_ms() + (uint64_t)scaled(5000);
	while (got < NCONN && now_ms() < end) {
		for (i = 0; i < 2 && got < NCONN; i++) {
			if (n_accept(&n[i], lc[i], &rcs[got]))
				FAIL("accept failed");
			if (rcs[got]) {
				jobs[got] = (struct conn_job){ .n = &n[i], .comm = rcs[got] };
				got++;
			}
		}
	}
	if (got < NCONN)
		FAIL("accepted %d of %d connections", got, NCONN);
	for (i = 0; i < NCONN; i++)
		pthread_create(&th[i], NULL, recv_job, &jobs[i]);
	for (i = 0; i < NCONN; i++) {
		pthread_join(th[i], NULL);
		rc |= jobs[i].rc;
		seen |= 1 << jobs[i].id;
	}
	if (!rc && seen != (1 << NCONN) - 1)
		FAIL("connections seen: 0x%x", seen);
	if (peer_wait(&peer, 25000))
		rc = -1;
	for (i = 0; i < NCONN; i++)
		if (n_close_recv(jobs[i].n, rcs[i]))
			rc = -1;
	for (i = 0; i < 2; i++) {
		n_close_listen(&n[i], lc[i]);
		net_down(&n[i]);
	}
	return rc;
}

static int case_env(void)
{
	static const struct {
		const char *send[4], *recv[4];
	} cfgs[] = {
		{ { "NCCL_DEVMEM_NSOCKS=1", "NCCL_DEVMEM_NTHREADS=1" }, { "NCCL_DEVMEM_NTHREADS=1" } },
		{ { "NCCL_DEVMEM_NSOCKS=16", "NCCL_DEVMEM_NTHREADS=3" },
		  { "NCCL_DEVMEM_NSOCKS=2", "NCCL_DEVMEM_NTHREADS=16" } },
		{ { "NCCL_DEVMEM_NSOCKS=7", "NCCL_DEVMEM_NTHREADS=7" }, { "NCCL_DEVMEM_NTHREADS=2" } },
		/* Invalid values: a WARN and the defaults. */
		{ { "NCCL_DEVMEM_NSOCKS=abc", "NCCL_DEVMEM_NTHREADS=-1" },
		  { "NCCL_DEVMEM_NTHREADS=99999" } },
	};
	size_t i;

	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct plan p;
		struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 8, .plan = &p, .ms = 15000 };
		pid_t pid;
		int st, rc;

		memcpy(cfg.send_env, cfgs[i].send, sizeof(cfg.send_env));
		memcpy(cfg.recv_env, cfgs[i].recv, sizeof(cfg.recv_env));
		plan_random(&p, 60, 4 * MIB, 2, 8, 900 + i);
		/* A process per configuration: the receiver's env must not leak. */
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			_exit(run_pair(&cfg) ? 1 : 0);
		}
		waitpid(pid, &st, 0);
		rc = !WIFEXITED(st) || WEXITSTATUS(st);
		plan_free(&p);
		if (rc)
			FAIL("configuration %zu (%s %s / %s) failed", i, cfgs[i].send[0],
			     cfgs[i].send[1], cfgs[i].recv[0]);
	}
	return 0;
}

/* By default, without libcuda, a comm starts no more progress threads than
 * the CPUs it may run on; NCCL_DEVMEM_NTHREADS set says how many all the
 * same, and so does libcuda (a thread may wait in a CUDA call). */
static int case_threads_affinity(void)
{
	static const struct {
		int pin;		/* both sides on one CPU */
		const char *env, *want;	/* the receiver's env, its comm's log */
		const char *want_send;	/* the sender's comm's log */
	} cfgs[] = {
		{ 1, NULL, "2 data sockets, 0 threads", "2 data sockets, 1 threads" },
		{ 1, "NCCL_DEVMEM_NTHREADS=2", "2 data sockets, 2 threads",
		  "2 data sockets, 1 threads" },
		{ 0, NULL, "2 data sockets, 2 threads", "2 data sockets, 2 threads" },
		{ 0, "NCCL_DEVMEM_NTHREADS=0", "2 data sockets, 0 threads",
		  "2 data sockets, 2 threads" },
	};
	const char *two = "2 data sockets, 2 threads";
	cpu_set_t mine, one;
	int first = -1, c, cuda;
	void *lib;
	size_t i;

	if (sched_getaffinity(0, sizeof(mine), &mine))
		FAIL("sched_getaffinity: %m");
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	cuda = lib != NULL;
	if (lib)
		dlclose(lib);
	for (c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &mine))
			first = c;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct plan p;
		struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 15000 };
		const char *want = cfgs[i].want;
		pid_t pid;
		int st, rc;

		if (!cfgs[i].pin && CPU_COUNT(&mine) < 2) {
			diag("one CPU allowed: the unpinned configuration is left out");
			continue;
		}
		cfg.recv_env[0] = cfgs[i].env;
		/* with libcuda the default stands on either side */
		cfg.send_expect = cuda ? NULL : cfgs[i].want_send;
		plan_random(&p, 20, MIB, 1, 4, 950 + i);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			unsetenv("NCCL_DEVMEM_NTHREADS");	/* the sender's: the default */
			if (cfgs[i].pin && sched_setaffinity(0, sizeof(one), &one))
				_exit(2);
			if (run_pair(&cfg))
				_exit(1);
			if (!cfgs[i].env && log_find("CUDA driver API"))
				want = two;	/* libcuda loaded: the default stands */
			_exit(log_find(want) ? 0 : 3);
		}
		waitpid(pid, &st, 0);
		rc = !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
		plan_free(&p);
		if (rc)
			FAIL("configuration %zu (%s, %s): %s", i, cfgs[i].pin ? "one CPU" : "all CPUs",
			     cfgs[i].env ? cfgs[i].env : "no NCCL_DEVMEM_NTHREADS",
			     rc == 3 ? "the log does not say the threads expected" :
			     rc == 2 ? "cannot pin" :
			     "the transfer failed, or the sender's log does not say the threads "
			     "expected");
	}
	return 0;
}

/* ---- receive smaller than the send, tag that matches nothing ---- */

struct lie_cfg {
	int nrecv;		/* buffers in the receive */
	size_t cap;
	int rtags[2];
	size_t send_size;
	int send_tag;
};

static int small_sender(struct peer *self)
{
	struct lie_cfg *c = self->arg;
	struct net n;
	struct plan p;
	void *sc;
	int rc;

	if (peer_connect(self, &n, &sc))
		return -1;
	plan_sizes(&p, &c->send_size, 1, 1, 5);
	p.g[0].tag[0] = c->send_tag;
	/* The send may complete (its bytes are in the socket) or fail: no hang either way. */
	rc = run_send(&n, sc, &p, 5000, 1);
	if (rc == -1)
		FAIL("send neither completed nor failed");
	n_close_send(&n, sc);
	net_down(&n);
	plan_free(&p);
	return 0;
}

static int lie_case(struct lie_cfg *c)
{
	struct peer peer;
	struct net n;
	void *lc, *rc_, *mh, *req = NULL, *data[2], *mhs[2];
	size_t sizes[2] = { c->cap, c->cap };
	size_t bufsz = 2 * (c->cap + GUARD);
	uint8_t *buf = xmalloc(bufsz);
	uint64_t t0, end;
	int d = 0, rc = 0, i, szs[2];

	if (recv_side_up(&peer, small_sender, c, &n, 8, &lc, &rc_))
		return -1;
	memset(buf, GUARD_BYTE, bufsz);
	if (n_regmr(&n, rc_, buf, bufsz, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	for (i = 0; i < c->nrecv; i++) {
		data[i] = buf + (size_t)i * (c->cap + GUARD);
		mhs[i] = mh;
	}
	t0 = now_ms();
	end = t0 + (uint64_t)scaled(5000);
	while (!req && !rc && now_ms() < end)
		rc = (int)n_irecv(&n, rc_, c->nrecv, data, sizes, c->rtags, mhs, &req);
	while (req && !rc && !d && now_ms() < end)
		rc = (int)n_test(&n, req, &d, szs);
	if (d)
		FAIL("receive completed (%d bytes) although %zu bytes were sent to a %zu-byte buffer",
		     szs[0], c->send_size, c->cap);
	if (!rc)
		FAIL("no error within %d ms", scaled(5000));
	/* Nothing may be written at all: the checks come before any byte. */
	if (bytes_check(buf, bufsz, GUARD_BYTE) >= 0)
		FAIL("the receive buffer was written to");
	if (verbose)
		diag("error %d after %llu ms", rc, (unsigned long long)(now_ms() - t0));
	n_deregmr(&n, rc_, mh);
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	net_down(&n);
	free(buf);
	return peer_wait(&peer, 10000);
}

static int case_recv_smaller(void)
{
	struct lie_cfg c1 = { .nrecv = 1, .cap = 1000, .send_size = 5000 };
	struct lie_cfg c2 = { .nrecv = 1, .cap = 50, .send_size = 100 };		/* inline */
	struct lie_cfg c3 = { .nrecv = 1, .cap = 4 * MIB, .send_size = 4 * MIB + 1 };
	struct lie_cfg c4 = { .nrecv = 2, .cap = 1000, .rtags = { 1, 2 }, .send_size = 10,
			      .send_tag = 3 };

	return lie_case(&c1) || lie_case(&c2) || lie_case(&c3) || lie_case(&c4);
}

/* ---- API misuse on a live connection ---- */

static int misuse_sender(struct peer *self)
{
	uint8_t *buf = xmalloc(4096);
	struct net n;
	void *sc, *mh, *mh2, *req;

	memset(buf, 0, 4096);	/* also serves as a fake comm below */
	int dev;

	if (peer_connect(self, &n, &sc))
		return -1;
	if (n_regmr(&n, sc, buf, 4096, NCCL_PTR_CUDA, &mh) == ncclSuccess)
		FAIL("regMr(NCCL_PTR_CUDA) of host memory succeeded");
	/* without libcuda: "GPU memory, but no libcuda"; with: "is not GPU memory" */
	if (!log_find("GPU memory"))
		FAIL("regMr(NCCL_PTR_CUDA) of host memory refused without a reason");
	if (n_regmr(&n, sc, buf, 4096, NCCL_PTR_DMABUF, &mh) == ncclSuccess)
		FAIL("regMr(NCCL_PTR_DMABUF) succeeded");
	{
		int mfd = memfd_create("misuse", MFD_CLOEXEC);

		if (mfd < 0 || ftruncate(mfd, 8192))
			FAIL("memfd: %m");
		if (n_regmr_dmabuf(&n, sc, buf, 4096, NCCL_PTR_HOST, 0, -1, &mh) == ncclSuccess)
			FAIL("regMrDmaBuf of fd -1 succeeded");
		if (n_regmr_dmabuf(&n, sc, buf, 4096, NCCL_PTR_CUDA, 0, mfd, &mh) == ncclSuccess)
			FAIL("regMrDmaBuf(NCCL_PTR_CUDA) succeeded without CUDA");
		if (n_regmr_dmabuf(&n, sc, buf, 4096, NCCL_PTR_HOST, 4097, mfd, &mh) ==
		    ncclSuccess)
			FAIL("regMrDmaBuf past the end of its buffer succeeded");
		if (n_regmr_dmabuf(&n, sc, buf, 4096, NCCL_PTR_HOST, UINT64_MAX - 100, mfd, &mh) ==
		    ncclSuccess)
			FAIL("regMrDmaBuf at offset 2^64 - 101 succeeded");
		if (n_regmr_dmabuf(&n, buf, buf, 4096, NCCL_PTR_HOST, 0, mfd, &mh) == ncclSuccess)
			FAIL("regMrDmaBuf on a non-comm succeeded");
		/* not a dma-buf: bind-tx refuses it, plain send */
		if (n_regmr_dmabuf(&n, sc, buf, 4096, NCCL_PTR_HOST, 4096, mfd, &mh2) ||
		    n_deregmr(&n, sc, mh2))
			FAIL("regMrDmaBuf of a memfd (plain send) failed");
		close(mfd);
	}
	if (n_regmr(&n, buf, buf, 4096, NCCL_PTR_HOST, &mh) == ncclSuccess)
		FAIL("regMr on a non-comm succeeded");
	if (n_regmr(&n, sc, buf, 2048, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	if (n_isend(&n, sc, buf, 16, 0, NULL, &req) == ncclSuccess)
		FAIL("isend without a memory handle succeeded");
	if (n_isend(&n, sc, buf + 2000, 100, 0, mh, &req) == ncclSuccess)
		FAIL("isend past the registered range succeeded");
	if (n_isend(&n, sc, buf - 1, 10, 0, mh, &req) == ncclSuccess)
		FAIL("isend before the registered range succeeded");
	if (n.v11->isend(sc, buf, (1ul << 30) + 1, 0, mh, NULL, &req) == ncclSuccess)
		FAIL("isend of 1 GiB + 1 succeeded");
	if (n.v8->isend(sc, buf, -1, 0, mh, &req) == ncclSuccess)
		FAIL("v8 isend of -1 bytes succeeded");
	if (n_regmr(&n, sc, buf + 2048, 2048, NCCL_PTR_HOST, &mh2) || n_deregmr(&n, sc, mh2))
		FAIL("second regMr/deregMr failed");
	if (n.v8->test(NULL, &dev, NULL) == ncclSuccess)
		FAIL("test(NULL) succeeded");
	/* Still usable: one real message. */
	if (send_word(&n, sc, 0x5555aaaa5555aaaaull))
		FAIL("the comm does not work after the rejected calls");
	n_deregmr(&n, sc, mh);
	n_close_send(&n, sc);
	net_down(&n);
	free(buf);
	return 0;
}

static int case_misuse(void)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE], buf[64];
	struct peer peer;
	struct net n;
	void *lc, *rc_, *mh, *req = NULL, *data[9], *mhs[9];
	size_t sizes[9];
	int tags[9] = { 0 }, isz[9], i, dev;
	uint64_t v = 0;

	memset(buf, 0, sizeof(buf));	/* also serves as a fake handle below */
	if (peer_spawn(&peer, misuse_sender, NULL))
		return -1;
	if (net_up(&n, 8, &dev) || n_listen(&n, dev, handle, &lc))
		FAIL("setup failed");
	{
		uint8_t h2[NCCL_NET_HANDLE_MAXSIZE];
		void *lc2;

		if (n.v8->listen(5, h2, &lc2) == ncclSuccess)
			FAIL("listen on a device out of range succeeded");
	}
	write_full(peer.wfd, handle, sizeof(handle));
	if (accept_loop(&n, lc, &rc_, 5000))
		FAIL("accept failed");
	if (n_regmr(&n, rc_, buf, sizeof(buf), NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	for (i = 0; i < 9; i++) {
		data[i] = buf;
		mhs[i] = mh;
		sizes[i] = 4;
		isz[i] = 4;
	}
	if (n_irecv(&n, rc_, 0, data, sizes, tags, mhs, &req) == ncclSuccess ||
	    n_irecv(&n, rc_, 9, data, sizes, tags, mhs, &req) == ncclSuccess)
		FAIL("irecv of 0 or 9 buffers succeeded");
	isz[1] = -5;
	if (n.v8->irecv(rc_, 2, data, isz, tags, mhs, &req) == ncclSuccess)
		FAIL("v8 irecv of a negative size succeeded");
	sizes[0] = 65;
	if (n_irecv(&n, rc_, 1, data, sizes, tags, mhs, &req) == ncclSuccess)
		FAIL("irecv past the registered range succeeded");
	req = (void *)1;
	if (n.v8->iflush(rc_, 1, data, isz, mhs, &req) || req)
		FAIL("iflush did not complete at once (*request %p)", req);
	if (recv_word(&n, rc_, &v) || v != 0x5555aaaa5555aaaaull)
		FAIL("the comm does not work after the rejected calls");
	if (n_deregmr(&n, rc_, mh))
		FAIL("deregMr failed");
	if (n_deregmr(&n, lc, buf) == ncclSuccess)
		FAIL("deregMr of a foreign handle succeeded");
	if (peer_wait(&peer, 10000))
		return -1;
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	return 0;
}

/* ---- a request that does not move is reported ---- */

/* Tests req until the log has every string of want[] (the report), which
 * must not come before 1 s after t0 (taken before the request was posted,
 * on the plugin's clock); the request must stay in flight. */
static int stall_wait(struct net *n, void *req, const char *const *want, int nwant, uint64_t t0)
{
	uint64_t end = t0 + 1000 + (uint64_t)scaled(5000);
	int d = 0, got = 0, i, have = 0;

	while (have < nwant && now_ms() < end) {
		if (n_test(n, req, &d, &got) || d)
			FAIL("a request with no peer ended (done %d)", d);
		for (i = 0, have = 0; i < nwant; i++)
			have += log_find(want[i]) != NULL;
		usleep(1000);
	}
	if (have < nwant)
		for (i = 0; i < nwant; i++)
			if (!log_find(want[i]))
				FAIL("the stall report does not say \"%s\"", want[i]);
	if (now_ms() - t0 < 1000)
		FAIL("reported after %llu ms, before NCCL_DEVMEM_STALL_WARN_S=1",
		     (unsigned long long)(now_ms() - t0));
	return 0;
}

static int stall_recv(struct net *n, void *rc_, void *mh, uint64_t *buf, void **req)
{
	size_t sz = sizeof(*buf);
	void *data = buf;
	int tag = 0;

	*req = NULL;
	while (!*req)
		if (n_irecv(n, rc_, 1, &data, &sz, &tag, &mh, req))
			FAIL("irecv failed");
	return 0;
}

static int stall_done(struct net *n, void *req, const uint64_t *buf, uint64_t want)
{
	uint64_t end = now_ms() + (uint64_t)scaled(5000);
	int d = 0, got = 0;

	while (!d && now_ms() < end)
		if (n_test(n, req, &d, &got))
			FAIL("test failed after the report");
	if (!d || got != 8 || *buf != want)
		FAIL("the receive after the report: done %d, %d bytes, 0x%llx", d, got,
		     (unsigned long long)*buf);
	return 0;
}

#define STALL_SEND (64u << 20)
static int stall_send(struct net *n, void *sc)
{
	static const char *const want[] = {
		": send request #3 of 67108864 bytes: control sent, ",
		"thread 0: control: idle, next request #4; socket 0: ",
		"thread 1: socket 1: ",
		" bytes of #3 left",
	};
	char *buf = xmalloc(STALL_SEND);
	void *mh, *req = NULL;
	uint64_t t0;
	int rc;

	memset(buf, 0x5a, STALL_SEND);
	if (n_regmr(n, sc, buf, STALL_SEND, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	t0 = now_ms();
	while (!req)
		if (n_isend(n, sc, buf, STALL_SEND, 0, mh, &req))
			FAIL("isend failed");
	rc = stall_wait(n, req, want, 4, t0);
	n_deregmr(n, sc, mh);
	free(buf);
	return rc;
}

static int stall_sender(struct peer *self)
{
	struct net n;
	void *sc;
	char go;
	int i;

	if (peer_connect(self, &n, &sc))
		return -1;
	/* each message waits for the receiver's word */
	for (i = 0; i < 3; i++) {
		if (read_full(self->rfd, &go, 1, scaled(10000)))
			return -1;
		if (send_word(&n, sc, 0x0123456789abcdefull + (uint64_t)i))
			return -1;
	}
	/* a send the receiver never takes: the send side's report */
	if (read_full(self->rfd, &go, 1, scaled(10000)) || stall_send(&n, sc))
		return -1;
	n_close_send(&n, sc);	/* with the send in flight */
	net_down(&n);
	return 0;
}

/* The stall cases' pair: a report after 1 s, 2 data sockets, the
 * receiver's comm with `nthreads` progress threads; stall_sender's part. */
static int stall_setup(const char *nthreads, struct peer *peer, struct net *n, void **lc,
		       void **rc_)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	int dev;

	setenv("NCCL_DEVMEM_STALL_WARN_S", "1", 1);
	setenv("NCCL_DEVMEM_NSOCKS", "2", 1);
	setenv("NCCL_DEVMEM_NTHREADS", nthreads, 1);
	if (peer_spawn(peer, stall_sender, NULL))
		return -1;
	if (net_up(n, 11, &dev) || n_listen(n, dev, handle, lc))
		FAIL("setup failed");
	write_full(peer->wfd, handle, sizeof(handle));
	if (accept_loop(n, *lc, rc_, 5000))
		FAIL("accept failed");
	return 0;
}

static int case_stall_report(void)
{
	static const char *const first[] = {
		"a request in flight for ",
		": recv request #0 of 1 buffer(s) (the first up to 8 bytes): 0 of 1 messages matched",
		"thread 0: control: reading a header; socket 0: idle, next #0",
		"thread 1: socket 1: idle, next #0",
	};
	static const char *const second[] = { ": recv request #1 of 1 buffer(s)" };
	uint64_t buf = 0, buf2 = 0, t0, end;
	void *lc, *rc_, *mh, *mh2, *req, *req2;
	const char *at;
	struct peer peer;
	struct net n;
	char go = 'g';
	int d = 0, got = 0;

	if (stall_setup("2", &peer, &n, &lc, &rc_))
		return -1;
	if (n_regmr(&n, rc_, &buf, sizeof(buf), NCCL_PTR_HOST, &mh) ||
	    n_regmr(&n, rc_, &buf2, sizeof(buf2), NCCL_PTR_HOST, &mh2))
		FAIL("regMr failed");
	/* NCCL tests a request until it is done: nothing comes */
	t0 = now_ms();
	if (stall_recv(&n, rc_, mh, &buf, &req) || stall_wait(&n, req, first, 4, t0))
		return -1;
	/* still stalled a while longer: no second report of it */
	end = now_ms() + (uint64_t)scaled(1500);
	while (now_ms() < end) {
		if (n_test(&n, req, &d, &got) || d)
			FAIL("a receive with no sender ended (done %d)", d);
		usleep(1000);
	}
	at = log_find(first[0]);
	if (strstr(at + 1, first[0]))
		FAIL("the stalled receive was reported more than once");
	write_full(peer.wfd, &go, 1);
	if (stall_done(&n, req, &buf, 0x0123456789abcdefull))
		return -1;
	if (!log_find("request #0, reported stalled, done after "))
		FAIL("the end of the reported stall is not logged");
	/* re-armed: the next receive that stalls is reported too, but not the
	 * one posted behind it, which waited as long (one stall, one report) */
	t0 = now_ms();
	if (stall_recv(&n, rc_, mh, &buf, &req) || stall_recv(&n, rc_, mh2, &buf2, &req2) ||
	    stall_wait(&n, req, second, 1, t0))
		return -1;
	write_full(peer.wfd, &go, 1);
	if (stall_done(&n, req, &buf, 0x0123456789abcdf0ull))
		return -1;
	end = now_ms() + 300;
	while (now_ms() < end) {
		if (n_test(&n, req2, &d, &got) || d)
			FAIL("the receive behind the stalled one ended early (done %d)", d);
		usleep(1000);
	}
	if (log_find(": recv request #2 of"))
		FAIL("a receive posted behind the stalled one was reported too");
	write_full(peer.wfd, &go, 1);
	if (stall_done(&n, req2, &buf2, 0x0123456789abcdf1ull))
		return -1;
	/* the sender's turn: 64 MiB that nobody receives */
	write_full(peer.wfd, &go, 1);
	n_deregmr(&n, rc_, mh);
	n_deregmr(&n, rc_, mh2);
	if (peer_wait(&peer, 10000))
		return -1;
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	net_down(&n);
	return 0;
}

/* Without progress threads (NCCL_DEVMEM_NTHREADS=0, test() moves the
 * bytes): the stall report gives the state test() owns, in one line. */
static int case_stall_report_inline(void)
{
	static const char *const want[] = {
		": recv request #0 of 1 buffer(s) (the first up to 8 bytes): 0 of 1 messages matched",
		"(no progress threads, test() moves the bytes): control: reading a header; "
		"socket 0: idle, next #0; socket 1: idle, next #0",
	};
	uint64_t buf = 0, t0;
	void *lc, *rc_, *mh, *req;
	struct peer peer;
	struct net n;
	char go = 'g';
	int st;

	if (stall_setup("0", &peer, &n, &lc, &rc_))
		return -1;
	if (!log_find("2 data sockets, 0 threads"))
		FAIL("NCCL_DEVMEM_NTHREADS=0 did not give a comm without progress threads");
	if (n_regmr(&n, rc_, &buf, sizeof(buf), NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	t0 = now_ms();
	if (stall_recv(&n, rc_, mh, &buf, &req) || stall_wait(&n, req, want, 2, t0))
		return -1;
	write_full(peer.wfd, &go, 1);
	if (stall_done(&n, req, &buf, 0x0123456789abcdefull))
		return -1;
	/* the rest of the sender's script is not for this case */
	kill(peer.pid, SIGKILL);
	waitpid(peer.pid, &st, 0);
	n_deregmr(&n, rc_, mh);
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	net_down(&n);
	return 0;
}

/* ---- corrupt connect handles ---- */

static int badhandle_sender(struct peer *self)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE], h[NCCL_NET_HANDLE_MAXSIZE];
	struct dm_handle dh;
	struct net n;
	void *sc;
	int dev, i, rc, closed_port;
	char ok = 'k';

	if (net_up(&n, 8, &dev))
		return -1;
	if (read_full(self->rfd, handle, sizeof(handle), scaled(5000)))
		return -1;
	/* Any one byte changed anywhere in the handle: rejected at once. */
	for (i = 0; i < NCCL_NET_HANDLE_MAXSIZE; i++) {
		memcpy(h, handle, sizeof(h));
		h[i] ^= (uint8_t)(1u << (i % 8));
		rc = connect_loop(&n, dev, h, &sc, 2000);
		if (rc <= 0)
			FAIL("handle with byte %d flipped: connect %s", i, rc ? "timed out" : "succeeded");
	}
	if (dm_handle_decode(handle, &dh))
		FAIL("the harness cannot decode the handle");
	/* Well formed (valid checksum) but with another nonce: the listener rejects it. */
	dh.nonce ^= 0x10;
	dm_handle_encode(h, &dh);
	rc = connect_loop(&n, dev, h, &sc, 3000);
	if (rc != ncclRemoteError)
		FAIL("handle with a wrong nonce: connect returned %d, not ncclRemoteError", rc);
	/* Well formed, pointing at a port nobody listens on. */
	{
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in sa = { .sin_family = AF_INET };
		socklen_t sl = sizeof(sa);

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    getsockname(fd, (struct sockaddr *)&sa, &sl))
			FAIL("bind: %m");
		closed_port = ntohs(sa.sin_port);
		close(fd);
	}
	dh.nonce ^= 0x10;
	dh.port = (uint16_t)closed_port;
	dm_handle_encode(h, &dh);
	rc = connect_loop(&n, dev, h, &sc, 3000);
	if (rc <= 0)
		FAIL("handle with a closed port: connect %s", rc ? "timed out" : "succeeded");
	/* Garbage state from a previous attempt. */
	memcpy(h, handle, sizeof(h));
	dm_put32(h + DM_HANDLE_STATE_OFF, DM_HANDLE_STATE_MAGIC);
	dm_put64(h + DM_HANDLE_STATE_OFF + 8, 0xdeadbeefcafeull);
	if (connect_loop(&n, dev, h, &sc, 2000) <= 0)
		FAIL("handle with forged connect state accepted");
	if (write_full(self->wfd, &ok, 1))
		return -1;
	/* The real handle still works. */
	if (connect_loop(&n, dev, handle, &sc, 5000))
		FAIL("the valid handle does not connect");
	if (send_word(&n, sc, 0x1122334455667788ull))
		return -1;
	n_close_send(&n, sc);
	net_down(&n);
	return 0;
}

static int case_badhandle(void)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	struct peer peer;
	struct net n;
	void *lc, *rc_ = NULL;
	uint64_t v = 0, end;
	int dev;
	char c;

	if (peer_spawn(&peer, badhandle_sender, NULL))
		return -1;
	if (net_up(&n, 11, &dev) || n_listen(&n, dev, handle, &lc))
		FAIL("setup failed");
	write_full(peer.wfd, handle, sizeof(handle));
	/* Until the sender is done with its bad handles, accept must give nothing. */
	end = now_ms() + (uint64_t)scaled(15000);
	for (;;) {
		struct pollfd pf = { .fd = peer.rfd, .events = POLLIN };

		if (n_accept(&n, lc, &rc_))
			FAIL("accept failed");
		if (rc_)
			FAIL("accept returned a comm for a bad handle");
		if (poll(&pf, 1, 1) > 0)
			break;
		if (now_ms() > end)
			FAIL("sender never finished its bad handles");
	}
	if (read_full(peer.rfd, &c, 1, 1000))
		FAIL("sender failed during the bad handles");
	if (accept_loop(&n, lc, &rc_, 5000))
		FAIL("accept of the valid connection failed");
	if (recv_word(&n, rc_, &v) || v != 0x1122334455667788ull)
		FAIL("wrong first message");
	if (peer_wait(&peer, 5000))
		return -1;
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	net_down(&n);
	return 0;
}

/* ---- a peer killed in the middle of a transfer ---- */

/*
 * The stream carries a 1 MiB message, received in full, then a 256 MiB one
 * that cannot fit in the socket buffers: the peer is killed while it is
 * stuck in the middle of the second one.
 */
#define KILL_FIRST MIB
#define KILL_SIZE (256 * MIB)

/* Posts both sends; 's' once they are posted; runs until killed. */
static int victim_sender(struct peer *self)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	uint8_t *buf = xmalloc(KILL_FIRST + KILL_SIZE);
	struct net n;
	void *sc, *mh, *r1 = NULL, *r2 = NULL;
	int dev, d = 0;
	char c = 's';

	if (net_up(&n, 8, &dev))
		return -1;
	if (read_full(self->rfd, handle, sizeof(handle), scaled(5000)))
		return -1;
	if (connect_loop(&n, dev, handle, &sc, 5000))
		return -1;
	memset(buf, 0x3c, KILL_FIRST + KILL_SIZE);
	if (n_regmr(&n, sc, buf, KILL_FIRST + KILL_SIZE, NCCL_PTR_HOST, &mh))
		return -1;
	while (!r1)
		if (n_isend(&n, sc, buf, KILL_FIRST, 0, mh, &r1))
			return -1;
	while (!r2)
		if (n_isend(&n, sc, buf + KILL_FIRST, KILL_SIZE, 0, mh, &r2))
			return -1;
	write_full(self->wfd, &c, 1);
	for (;;) {	/* until killed */
		if (n_test(&n, r2, &d, NULL) || d)
			break;
		usleep(1000);
	}
	return -1;
}

static int wait_req(struct net *n, void *req, int ms, int *rc)
{
	uint64_t end = now_ms() + (uint64_t)scaled(ms);
	int d = 0;

	*rc = 0;
	while (!*rc && !d && now_ms() < end)
		*rc = (int)n_test(n, req, &d, NULL);
	return d;
}

static int case_kill_sender(void)
{
	uint8_t *buf = xmalloc(KILL_SIZE);
	struct peer peer;
	struct net n;
	void *lc, *rc_, *mh, *req = NULL, *data = buf;
	size_t size = KILL_FIRST;
	uint64_t t0;
	int rc = 0, tag = 0, st;
	char c;

	if (recv_side_up(&peer, victim_sender, NULL, &n, 11, &lc, &rc_))
		return -1;
	if (n_regmr(&n, rc_, buf, KILL_SIZE, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	while (!req && !rc)
		rc = (int)n_irecv(&n, rc_, 1, &data, &size, &tag, &mh, &req);
	if (!wait_req(&n, req, 5000, &rc))
		FAIL("first message not received (%d)", rc);
	if (read_full(peer.rfd, &c, 1, scaled(5000)))
		FAIL("sender did not start");
	msleep(50);	/* the sender fills the socket buffers and waits */
	kill(peer.pid, SIGKILL);
	waitpid(peer.pid, &st, 0);
	t0 = now_ms();
	req = NULL;
	size = KILL_SIZE;
	rc = 0;
	while (!req && !rc)
		rc = (int)n_irecv(&n, rc_, 1, &data, &size, &tag, &mh, &req);
	if (req && wait_req(&n, req, 5000, &rc))
		FAIL("receive of a killed sender's 256 MiB completed");
	if (!rc)
		FAIL("no error %d ms after the sender was killed", scaled(5000));
	if (verbose)
		diag("error %d %llu ms after the kill", rc, (unsigned long long)(now_ms() - t0));
	/* A later receive fails at once. */
	req = NULL;
	rc = (int)n_irecv(&n, rc_, 1, &data, &size, &tag, &mh, &req);
	if (!rc && req && (wait_req(&n, req, 2000, &rc) || !rc))
		FAIL("receive after the failure did not fail");
	n_deregmr(&n, rc_, mh);
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	net_down(&n);
	close(peer.rfd);
	close(peer.wfd);
	free(buf);
	return 0;
}

/* Receives the first message, says 'r', then waits to be killed. */
static int victim_receiver(struct peer *self)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	uint8_t *buf = xmalloc(KILL_FIRST);
	struct net n;
	void *lc, *rc_, *mh, *req = NULL, *data = buf;
	size_t size = KILL_FIRST;
	int dev, tag = 0, rc;
	char c = 'r';

	if (net_up(&n, 8, &dev) || n_listen(&n, dev, handle, &lc))
		return -1;
	write_full(self->wfd, handle, sizeof(handle));
	if (accept_loop(&n, lc, &rc_, 5000))
		return -1;
	if (n_regmr(&n, rc_, buf, KILL_FIRST, NCCL_PTR_HOST, &mh))
		return -1;
	while (!req)
		if (n_irecv(&n, rc_, 1, &data, &size, &tag, &mh, &req))
			return -1;
	if (!wait_req(&n, req, 5000, &rc))
		return -1;
	write_full(self->wfd, &c, 1);
	for (;;)
		pause();
}

/* The sender's memory in case_kill_receiver (the wire case sends from a
 * udmabuf). */
static int kill_send_mem = SEND_MEM_MALLOC;

static int case_kill_receiver(void)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	struct send_mem mem;
	uint8_t *buf;
	struct peer peer;
	struct net n;
	void *sc, *mh, *r1 = NULL, *r2 = NULL;
	uint64_t t0;
	int dev, rc = 0, st;
	char c;

	if (peer_spawn(&peer, victim_receiver, NULL))
		return -1;
	if (net_up(&n, 11, &dev))
		FAIL("setup failed");
	if (read_full(peer.rfd, handle, sizeof(handle), scaled(5000)))
		FAIL("no handle");
	if (connect_loop(&n, dev, handle, &sc, 5000))
		FAIL("connect failed");
	if (send_mem_get(&n, sc, kill_send_mem, KILL_FIRST + KILL_SIZE, &mem, &mh))
		FAIL("memory registration failed");
	buf = mem.slab;
	memset(buf, 0x5a, KILL_FIRST + KILL_SIZE);
	while (!r1 && !rc)
		rc = (int)n_isend(&n, sc, buf, KILL_FIRST, 0, mh, &r1);
	while (!r2 && !rc)
		rc = (int)n_isend(&n, sc, buf + KILL_FIRST, KILL_SIZE, 0, mh, &r2);
	if (rc)
		FAIL("isend failed");
	/* testing the sends meanwhile, as NCCL would (without progress
	 * threads, test() moves the bytes) */
	t0 = now_ms() + (uint64_t)scaled(5000);
	for (;;) {
		struct pollfd pf = { .fd = peer.rfd, .events = POLLIN };
		int d = 0, size = 0;

		if (r1 && n_test(&n, r1, &d, &size))
			FAIL("test of the first send failed");
		if (d)
			r1 = NULL;
		if (!r1 && n_test(&n, r2, &d, &size))
			FAIL("test of the second send failed");
		if (poll(&pf, 1, 1) > 0 || now_ms() > t0)
			break;
	}
	if (read_full(peer.rfd, &c, 1, scaled(100)))
		FAIL("receiver did not get the first message");
	for (t0 = now_ms() + 50; now_ms() < t0; msleep(1)) {
		int d = 0, size = 0;

		if (n_test(&n, r2, &d, &size))
			FAIL("test of the second send failed");
	}
	kill(peer.pid, SIGKILL);
	waitpid(peer.pid, &st, 0);
	t0 = now_ms();
	if (wait_req(&n, r2, 5000, &rc))
		FAIL("send of 256 MiB to a killed receiver completed");
	if (!rc)
		FAIL("no error %d ms after the receiver was killed", scaled(5000));
	if (verbose)
		diag("error %d %llu ms after the kill", rc, (unsigned long long)(now_ms() - t0));
	n_deregmr(&n, sc, mh);
	n_close_send(&n, sc);
	net_down(&n);
	close(peer.rfd);
	close(peer.wfd);
	send_mem_put(&mem);
	return 0;
}

/* ---- closes with requests in flight ---- */

static int inflight_sender(struct peer *self)
{
	size_t slot = 4 * MIB;
	uint8_t *buf = xmalloc(8 * slot);
	struct net n;
	void *sc, *mh, *req[8] = { NULL };
	uint64_t t0, end;
	int i, d, done = 0, failed = 0, mode = *(int *)self->arg;

	if (peer_connect(self, &n, &sc))
		return -1;
	memset(buf, 0x11, 8 * slot);
	if (n_regmr(&n, sc, buf, 8 * slot, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	for (i = 0; i < 8 && !failed; i++) {
		while (!req[i]) {
			if (n_isend(&n, sc, buf + (size_t)i * slot, slot, i, mh, &req[i])) {
				/* Only once the receiver has closed (mode 0). */
				if (mode == 1)
					FAIL("isend failed");
				failed = 8 - i;
				break;
			}
		}
	}
	if (mode == 1) {
		/* Close at once with 8 sends in flight. */
		n_deregmr(&n, sc, mh);
		t0 = now_ms();
		if (n_close_send(&n, sc))
			FAIL("closeSend failed");
		if (now_ms() - t0 > 2000)
			FAIL("closeSend took %llu ms", (unsigned long long)(now_ms() - t0));
		net_down(&n);
		free(buf);
		return 0;
	}
	/* The receiver closes with receives in flight: every send completes or fails. */
	end = now_ms() + (uint64_t)scaled(8000);
	while (done + failed < 8 && now_ms() < end) {
		for (i = 0; i < 8; i++) {
			if (!req[i])
				continue;
			d = 0;
			if (n_test(&n, req[i], &d, NULL)) {
				failed = 8 - done;
				break;
			}
			if (d) {
				req[i] = NULL;
				done++;
			}
		}
	}
	if (done + failed < 8)
		FAIL("sends neither completed nor failed after the receiver closed");
	n_deregmr(&n, sc, mh);
	t0 = now_ms();
	n_close_send(&n, sc);
	if (now_ms() - t0 > 2000)
		FAIL("closeSend took %llu ms", (unsigned long long)(now_ms() - t0));
	net_down(&n);
	free(buf);
	return 0;
}

static int inflight_case(int mode)
{
	size_t slot = 4 * MIB, sizes = slot;
	uint8_t *buf = xmalloc(8 * slot);
	struct peer peer;
	struct net n;
	void *lc, *rc_, *mh, *req[8] = { NULL }, *data;
	uint64_t t0, end;
	int i, d = 0, tag, rc = 0, first = 0;

	if (recv_side_up(&peer, inflight_sender, &mode, &n, 8, &lc, &rc_))
		return -1;
	if (n_regmr(&n, rc_, buf, 8 * slot, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	for (i = 0; i < 8; i++) {
		data = buf + (size_t)i * slot;
		tag = i;
		while (!req[i])
			if (n_irecv(&n, rc_, 1, &data, &sizes, &tag, &mh, &req[i]))
				FAIL("irecv failed");
	}
	end = now_ms() + (uint64_t)scaled(8000);
	if (mode == 1) {
		/* The sender closed with its sends in flight: every receive completes or
		 * fails, none hangs. */
		int left = 8;

		while (left && now_ms() < end) {
			for (i = 0; i < 8; i++) {
				if (!req[i])
					continue;
				d = 0;
				rc = (int)n_test(&n, req[i], &d, NULL);
				if (rc || d) {
					req[i] = NULL;
					left--;
				}
			}
		}
		if (left)
			FAIL("%d receives hang after the sender closed", left);
	} else {
		/* Close as soon as the first receive is done, 7 still in flight. */
		while (!first && !rc && now_ms() < end)
			rc = (int)n_test(&n, req[0], &first, NULL);
		if (!first)
			FAIL("first receive did not complete (%d)", rc);
	}
	n_deregmr(&n, rc_, mh);
	t0 = now_ms();
	if (n_close_recv(&n, rc_))
		FAIL("closeRecv failed");
	if (now_ms() - t0 > 2000)
		FAIL("closeRecv took %llu ms", (unsigned long long)(now_ms() - t0));
	n_close_listen(&n, lc);
	net_down(&n);
	free(buf);
	return peer_wait(&peer, 10000);
}

static int raw_connect(const struct dm_handle *h);

static int case_inflight(void)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE], hello[DM_HDR_LEN + 8];
	struct dm_handle dh;
	struct net n;
	void *lc, *rc_ = NULL;
	uint64_t t0;
	int dev, fd1, fd2, i;

	if (inflight_case(0) || inflight_case(1))
		return -1;
	/* closeListen with half-made connections: one silent, one with half a HELLO. */
	if (net_up(&n, 8, &dev) || n_listen(&n, dev, handle, &lc))
		FAIL("setup failed");
	dm_handle_decode(handle, &dh);
	fd1 = raw_connect(&dh);
	fd2 = raw_connect(&dh);
	if (fd1 < 0 || fd2 < 0)
		FAIL("raw connect failed");
	dm_hdr_encode(hello, DM_MSG_HELLO, DM_HELLO_LEN, 0);
	memset(hello + DM_HDR_LEN, 0, 8);
	write_full(fd2, hello, sizeof(hello));
	for (i = 0; i < 20; i++) {
		if (n_accept(&n, lc, &rc_) || rc_)
			FAIL("accept of half-made connections: comm %p", rc_);
		msleep(1);
	}
	t0 = now_ms();
	if (n_close_listen(&n, lc) || now_ms() - t0 > 1000)
		FAIL("closeListen failed or slow");
	close(fd1);
	close(fd2);
	return 0;
}

/* ---- fuzzing the control protocol with a fake peer ---- */

static int raw_connect(const struct dm_handle *h)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(h->port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (h->family != 4 || fd < 0)
		return -1;
	memcpy(&sa.sin_addr, h->addr, 4);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void put_hdr(uint8_t *m, uint32_t magic, uint8_t ver, uint8_t type, uint16_t flags,
		    uint32_t len, uint32_t seq)
{
	dm_put32(m, magic);
	m[4] = ver;
	m[5] = type;
	dm_put16(m + 6, flags);
	dm_put32(m + 8, len);
	dm_put32(m + 12, seq);
}

static void put_hello(uint8_t *m, uint64_t nonce, uint64_t id, int index, int nsocks)
{
	struct dm_hello h = { .nonce = nonce, .conn_id = id, .index = (uint16_t)index,
			      .nsocks = (uint16_t)nsocks };

	put_hdr(m, DM_WIRE_MAGIC, DM_WIRE_VERSION, DM_MSG_HELLO, 0, DM_HELLO_LEN, 0);
	dm_hello_encode(m + DM_HDR_LEN, &h);
}

/* Fake connector: opens nsocks + 1 sockets with valid HELLOs, reads ACCEPT. */
static int fake_handshake(const struct dm_handle *h, int nsocks, int *fds)
{
	uint8_t m[DM_HDR_LEN + DM_HELLO_LEN], a[DM_HDR_LEN + DM_ACCEPT_LEN];
	uint64_t id = mix(now_ms() ^ (uint64_t)getpid());
	int i;

	for (i = 0; i <= nsocks; i++) {
		fds[i] = raw_connect(h);
		if (fds[i] < 0)
			return -1;
		put_hello(m, h->nonce, id, i, nsocks);
		if (write_full(fds[i], m, sizeof(m)))
			return -1;
	}
	if (read_full(fds[0], a, sizeof(a), scaled(3000)))
		return -1;
	if (dm_get32(a) != DM_WIRE_MAGIC || a[5] != DM_MSG_ACCEPT || dm_get64(a + 16) != id)
		return -1;
	return 0;
}

enum { LIE_HDR = 0, LIE_EOF = 1, LIE_NONE = 2 };	/* how the plugin must notice */

/* Writes lie number k on an established connection; returns how it must end.
 * Each lie breaks one rule only, so each check of the receiver is needed. */
static int write_lie(int k, int *fds, int nsocks, size_t cap, struct rng *r)
{
	uint8_t m[512];
	uint8_t data[8192];
	size_t len = 0;
	int how = LIE_HDR, i;

	memset(m, 0, sizeof(m));
	switch (k) {
	case 0:		/* bad magic */
		put_hdr(m, 0x12345678, 1, DM_MSG_SEND, 0, 16, 1);
		len = 32;
		break;
	case 1:		/* version 2 */
		put_hdr(m, DM_WIRE_MAGIC, 2, DM_MSG_SEND, 0, 16, 1);
		len = 32;
		break;
	case 2:		/* unknown type */
		put_hdr(m, DM_WIRE_MAGIC, 1, 99, 0, 16, 1);
		len = 32;
		break;
	case 3:		/* HELLO on an established connection */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_HELLO, 0, DM_HELLO_LEN, 1);
		len = DM_HDR_LEN + DM_HELLO_LEN;
		break;
	case 4:		/* ACCEPT from the sender */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_ACCEPT, 0, DM_ACCEPT_LEN, 1);
		len = DM_HDR_LEN + DM_ACCEPT_LEN;
		break;
	case 5:		/* header flags */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0x8000, 16, 1);
		len = 32;
		break;
	case 6:		/* len 4 GiB - 1 */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 0xffffffffu, 1);
		dm_put64(m + 16, 100);
		len = 32 + 100;
		break;
	case 7:		/* inline longer than the inline maximum */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16 + 300, 1);
		dm_put64(m + 16, 300);
		len = 32 + 300;
		break;
	case 8:		/* larger than the posted receive */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		dm_put64(m + 16, cap + 1);
		len = 32;
		break;
	case 9:		/* 2^63 bytes */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		dm_put64(m + 16, 1ull << 63);
		len = 32;
		break;
	case 10:	/* inline size but no inline bytes announced */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		dm_put64(m + 16, 100);
		len = 32;
		break;
	case 11:	/* large size with inline bytes announced */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16 + 64, 1);
		dm_put64(m + 16, 3000);
		len = 32 + 64;
		break;
	case 12:	/* out of sequence (an empty message otherwise valid) */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, (uint32_t)(2 + rnd_below(r, 5)));
		len = 32;
		break;
	case 13:	/* SEND flags */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		dm_put32(m + 28, 1);
		len = 32;
		break;
	case 14:	/* CLOSE with a receive posted */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_CLOSE, 0, 0, 1);
		len = 16;
		break;
	case 15:	/* CLOSE with a length */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_CLOSE, 0, 8, 1);
		len = 24;
		break;
	case 16:	/* announced 3000 bytes, 1000 sent, then EOF */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		dm_put64(m + 16, 3000);
		len = 32;
		how = LIE_EOF;
		break;
	case 17:	/* inline 100 bytes announced, 50 sent, EOF */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16 + 100, 1);
		dm_put64(m + 16, 100);
		len = 32 + 50;
		how = LIE_EOF;
		break;
	case 18:	/* half a header, EOF */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		len = 8;
		how = LIE_EOF;
		break;
	case 19:	/* random bytes, EOF */
		len = 1 + rnd_below(r, 200);
		for (i = 0; i < (int)len; i++)
			m[i] = (uint8_t)rnd(r);
		how = LIE_EOF;
		break;
	case 20:	/* tag that is in no buffer (multi-recv of 2, tags 10 and 11) */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		dm_put64(m + 16, 3000);
		dm_put32(m + 24, 12);
		len = 32;
		break;
	case 21:	/* honest: 3000 bytes on the data sockets */
	case 22:	/* honest: exactly the posted size */
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_SEND, 0, 16, 1);
		dm_put64(m + 16, k == 21 ? 3000 : cap);
		dm_put32(m + 24, 10);
		len = 32;
		how = LIE_NONE;
		break;
	}
	if (k != 19 && k != 20 && len >= 32 && m[5] == DM_MSG_SEND && dm_get32(m) == DM_WIRE_MAGIC)
		dm_put32(m + 24, 10);	/* a tag the receive has */
	if (write_full(fds[0], m, len))
		return how;
	if (k == 16 || k == 21 || k == 22) {
		uint64_t size = k == 16 ? 3000 : k == 21 ? 3000 : cap, chunk;
		unsigned nchunks, j;

		pat_fill(data, sizeof(data), 4711);
		dm_plan(size, (unsigned)nsocks, &chunk, &nchunks);
		if (k == 16)
			size = 1000;
		for (j = 0; j < nchunks; j++) {
			uint64_t off = j * chunk, l = off < size ? size - off : 0;

			if (l > chunk)
				l = chunk;
			if (l && write_full(fds[1 + j], data + off, l))
				return how;
		}
	}
	return how;
}

#define NLIES 23

struct fuzz_arg {
	struct dm_handle h;
	int k, nsocks, hold;
	uint64_t seed;
};

/* Fake sender: valid handshake, then lie k; holds its sockets open until
 * the parent says so when the lie is visible in the header. */
static int fake_sender(struct peer *self)
{
	struct fuzz_arg *a = self->arg;
	struct rng r = { a->seed };
	int fds[1 + DM_MAX_SOCKS], how;
	char c;

	if (fake_handshake(&a->h, a->nsocks, fds))
		FAIL("fake handshake failed");
	how = write_lie(a->k, fds, a->nsocks, 4096, &r);
	if (how != LIE_EOF)
		read_full(self->rfd, &c, 1, scaled(10000));
	return 0;
}

static int fuzz_established(struct net *n, void *lc, const struct dm_handle *h, int k,
			    int nsocks, uint64_t seed)
{
	struct fuzz_arg a = { .h = *h, .k = k, .nsocks = nsocks, .seed = seed };
	uint8_t buf[2 * (4096 + GUARD)];
	size_t sizes[2] = { 4096, 4096 };
	int tags[2] = { 10, 11 }, d = 0, rc = 0, got[2];
	/* Lie 20 needs a multi-recv, honest messages a single one; the rest either. */
	int cnt = k == 20 ? 2 : k >= 21 ? 1 : 1 + (int)(seed & 1);
	void *rc_, *mh, *req = NULL, *data[2] = { buf, buf + 4096 + GUARD }, *mhs[2];
	struct peer peer;
	uint64_t end;
	char go = 'g';

	if (peer_spawn(&peer, fake_sender, &a))
		return -1;
	if (accept_loop(n, lc, &rc_, 3000))
		FAIL("lie %d: accept of the fake peer failed", k);
	memset(buf, GUARD_BYTE, sizeof(buf));
	if (n_regmr(n, rc_, buf, sizeof(buf), NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	mhs[0] = mhs[1] = mh;
	end = now_ms() + (uint64_t)scaled(3000);
	while (!req && !rc && now_ms() < end)
		rc = (int)n_irecv(n, rc_, cnt, data, sizes, tags, mhs, &req);
	while (req && !rc && !d && now_ms() < end)
		rc = (int)n_test(n, req, &d, got);
	write_full(peer.wfd, &go, 1);
	if (k >= 21) {
		size_t want = k == 21 ? 3000 : 4096;

		if (!d || rc || (size_t)got[0] != want || pat_check(buf, want, 4711) >= 0)
			FAIL("honest message %d (n %d, %d sockets): done %d rc %d size %d", k, cnt,
			     nsocks, d, rc, got[0]);
	} else {
		if (d)
			FAIL("lie %d (n %d, %d sockets) was received as a message", k, cnt, nsocks);
		if (!rc)
			FAIL("lie %d (n %d, %d sockets): no error within %d ms", k, cnt, nsocks,
			     scaled(3000));
	}
	if (bytes_check(buf + 4096, GUARD, GUARD_BYTE) >= 0 ||
	    bytes_check(buf + 2 * 4096 + GUARD, GUARD, GUARD_BYTE) >= 0)
		FAIL("lie %d: guard bytes overwritten", k);
	if (k == 8 || k == 9) {
		if (bytes_check(buf, sizeof(buf), GUARD_BYTE) >= 0)
			FAIL("lie %d: the buffer was written to", k);
	}
	n_deregmr(n, rc_, mh);
	if (n_close_recv(n, rc_))
		FAIL("closeRecv failed");
	return peer_wait(&peer, 5000);
}

/* Fake HELLOs at the listener: it must give no comm and keep working. */
static int fuzz_hello(struct net *n, void *lc, const struct dm_handle *h, int k, struct rng *r)
{
	uint8_t m[4][DM_HDR_LEN + DM_HELLO_LEN];
	int fds[4] = { -1, -1, -1, -1 }, nfd = 1, i, j;
	uint64_t id = rnd(r);
	size_t len = sizeof(m[0]);
	void *rc_ = NULL;

	memset(m, 0, sizeof(m));
	put_hello(m[0], h->nonce, id, 0, 1);
	switch (k) {
	case 0:
		for (i = 0; i < (int)len; i++)
			m[0][i] = (uint8_t)rnd(r);
		break;
	case 1:
		dm_put32(m[0], 0x44444444);
		break;
	case 2:
		put_hello(m[0], h->nonce ^ 1, id, 0, 1);
		break;
	case 3:
		put_hello(m[0], h->nonce, id, 0, 0);
		break;
	case 4:
		put_hello(m[0], h->nonce, id, 0, 1000);
		break;
	case 5:
		put_hello(m[0], h->nonce, id, 3, 2);
		break;
	case 6:
		m[0][5] = DM_MSG_ACCEPT;
		break;
	case 7:
		dm_put32(m[0] + 12, 3);
		break;
	case 8:		/* control socket twice, then a data socket */
		nfd = 3;
		put_hello(m[1], h->nonce, id, 0, 1);
		put_hello(m[2], h->nonce, id, 1, 1);
		break;
	case 9:		/* sockets that disagree on nsocks */
		nfd = 3;
		put_hello(m[0], h->nonce, id, 0, 2);
		put_hello(m[1], h->nonce, id, 1, 3);
		put_hello(m[2], h->nonce, id, 2, 2);
		break;
	case 10:	/* control only, never the data sockets */
		put_hello(m[0], h->nonce, id, 0, 2);
		break;
	case 11:	/* nothing at all */
		len = 0;
		break;
	case 12:	/* half a HELLO */
		len = 20;
		break;
	case 13:
		dm_put32(m[0] + 8, 0xffffffffu);
		break;
	case 14:	/* HELLO flags */
		dm_put32(m[0] + DM_HDR_LEN + 20, 4);
		break;
	}
	for (i = 0; i < nfd; i++) {
		fds[i] = raw_connect(h);
		if (fds[i] < 0)
			FAIL("raw connect failed");
		if (len && write_full(fds[i], m[i], len))
			break;
	}
	for (j = 0; j < 10; j++) {
		if (n_accept(n, lc, &rc_))
			FAIL("hello lie %d: accept failed", k);
		if (rc_)
			FAIL("hello lie %d: accept returned a comm", k);
		usleep(500);
	}
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	return 0;
}

/* A fake listener answers the plugin's connect with lie k. */
static int fuzz_accept_answer(struct net *n, int dev, int k, struct rng *r)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE], m[64];
	uint8_t hello[1 + DM_MAX_SOCKS][DM_HDR_LEN + DM_HELLO_LEN];
	size_t got[1 + DM_MAX_SOCKS];
	struct dm_handle h = { .family = 4 };
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), fds[1 + DM_MAX_SOCKS];
	int nfd = 0, i, rc = 0, sent = 0, nsocks = -1, ctrl = -1;
	uint64_t end, id = 0;
	size_t len = 32;
	void *sc = NULL;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl))
		FAIL("fake listener: %m");
	h.port = ntohs(sa.sin_port);
	memcpy(h.addr, &sa.sin_addr, 4);
	h.nonce = rnd(r);
	dm_handle_encode(handle, &h);
	end = now_ms() + (uint64_t)scaled(3000);
	while (!rc && now_ms() < end) {
		rc = (int)n_connect(n, dev, handle, &sc);
		if (sc)
			FAIL("connect to a lying listener returned a comm (lie %d)", k);
		if (sent) {
			usleep(200);
			continue;
		}
		while (nfd <= DM_MAX_SOCKS) {
			int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);

			if (fd < 0)
				break;
			got[nfd] = 0;
			fds[nfd++] = fd;
		}
		for (i = 0; i < nfd; i++) {
			ssize_t g;

			if (got[i] == sizeof(hello[i]))
				continue;
			g = recv(fds[i], hello[i] + got[i], sizeof(hello[i]) - got[i], MSG_DONTWAIT);
			if (g > 0)
				got[i] += (size_t)g;
			if (got[i] < sizeof(hello[i]))
				continue;
			nsocks = dm_get16(hello[i] + DM_HDR_LEN + 18);
			if (dm_get16(hello[i] + DM_HDR_LEN + 16) == 0) {
				ctrl = fds[i];
				id = dm_get64(hello[i] + DM_HDR_LEN + 8);
			}
		}
		for (i = 0; i < nfd && got[i] == sizeof(hello[i]); i++)
			;
		if (ctrl < 0 || i < nfd || nfd != nsocks + 1) {
			usleep(200);
			continue;
		}
		memset(m, 0, sizeof(m));
		put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_ACCEPT, 0, DM_ACCEPT_LEN, 0);
		dm_put64(m + 16, id);
		dm_put16(m + 24, (uint16_t)nsocks);
		switch (k) {
		case 0:
			len = 0;	/* close */
			break;
		case 1:
			for (i = 0; i < 32; i++)
				m[i] = (uint8_t)rnd(r);
			break;
		case 2:
			dm_put64(m + 16, id ^ 1);
			break;
		case 3:
			dm_put16(m + 24, (uint16_t)(nsocks + 1));
			break;
		case 4:
			dm_put32(m + 12, 1);
			break;
		case 5:
			dm_put32(m + 8, 1000);
			break;
		case 6:
			put_hdr(m, DM_WIRE_MAGIC, 1, DM_MSG_REJECT, 0, 4, 0);
			len = 20;
			break;
		case 7:
			m[5] = DM_MSG_SEND;
			break;
		case 8:		/* an ACCEPT flag this version does not know */
			dm_put32(m + 28, DM_ACCEPT_DEVMEM_RX << 1);
			break;
		case 9:
			len = 8;	/* then close */
			break;
		}
		if (len)
			write_full(ctrl, m, len);
		if (k == 0 || k == 9)
			for (i = 0; i < nfd; i++)
				shutdown(fds[i], SHUT_RDWR);
		sent = 1;
	}
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	close(lfd);
	if (!sent)
		FAIL("lie %d: the plugin's HELLOs never all arrived (%d sockets)", k, nfd);
	if (!rc)
		FAIL("connect to a listener answering lie %d: no error within %d ms", k, scaled(3000));
	return 0;
}

static int case_fuzz(void)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	struct dm_handle h;
	struct rng r = { 20261126 };
	struct net n;
	void *lc, *rc_;
	int dev, k, i, rounds = 0;

	if (net_up(&n, 11, &dev) || n_listen(&n, dev, handle, &lc))
		FAIL("setup failed");
	if (dm_handle_decode(handle, &h))
		FAIL("cannot decode the handle");
	/* Lies at the listener, before any connection exists. */
	for (i = 0; i < 2; i++)
		for (k = 0; k < 15; k++, rounds++)
			if (fuzz_hello(&n, lc, &h, k, &r))
				return -1;
	/* Lies on an established connection, with 1 to 4 data sockets. */
	for (i = 0; i < 2; i++) {
		for (k = 0; k < NLIES; k++, rounds++) {
			int nsocks = 1 + (int)rnd_below(&r, 4);

			if (fuzz_established(&n, lc, &h, k, nsocks, rnd(&r)))
				return -1;
		}
	}
	/* Lies from a fake listener to the plugin's connect. */
	for (k = 0; k < 10; k++, rounds++)
		if (fuzz_accept_answer(&n, dev, k, &r))
			return -1;
	/* Random bytes after a valid handshake. */
	for (i = 0; i < 20; i++, rounds++)
		if (fuzz_established(&n, lc, &h, 19, 1 + (int)rnd_below(&r, 3), rnd(&r)))
			return -1;
	/* The listener still serves an honest sender. */
	{
		struct plan p;
		struct pair_cfg cfg = { .send_ver = 8, .recv_ver = 11, .plan = &p, .ms = 10000 };
		struct peer peer;

		plan_random(&p, 20, 500000, 2, 4, 31337);
		if (peer_spawn(&peer, pair_sender, &cfg))
			return -1;
		write_full(peer.wfd, handle, sizeof(handle));
		if (accept_loop(&n, lc, &rc_, 5000))
			FAIL("the listener no longer accepts after the fuzzing");
		if (run_recv(&n, rc_, &p, 10000, 0) || peer_wait(&peer, 10000))
			FAIL("honest transfer after the fuzzing failed");
		n_close_recv(&n, rc_);
		plan_free(&p);
	}
	n_close_listen(&n, lc);
	net_down(&n);
	if (verbose)
		diag("%d fuzz rounds, %d WARNs", rounds, atomic_load(&warns));
	return 0;
}

/* -------------------------------------------------------------- the runner */

/* ------------------------------------------- over the wire (HARNESS_WIRE) */

/* The plugin's reason for copy mode, as logged ("no devmem RX" or "copy
 * mode" and what follows), or a note that it gave none. */
static const char *copy_reason(void)
{
	const char *r = log_find("no devmem RX");

	if (!r)
		r = log_find("copy mode");
	return r ? r : "(no reason logged)";
}

/* Checks how the receiver took the plan: `expect` NULL = devmem RX, with
 * at least 90% of the data sockets' bytes through the dma-buf; else copy
 * mode, with `expect` in the log (the reason). */
static int wire_expect(const struct plan *p, const char *expect)
{
	uint64_t want = plan_data_bytes(p);
	long long got;

	if (!expect) {
		if (!log_find("devmem RX (binding"))
			FAIL("the recv comm did not use devmem RX: %.300s", copy_reason());
		got = logged_number(" bytes received into the dma-buf");
		if (got < 0 || (uint64_t)got * 10 < want * 9)
			FAIL("%lld of %llu bytes came through the dma-buf", got,
			     (unsigned long long)want);
		diag("%lld of %llu data-socket bytes came through the dma-buf", got,
		     (unsigned long long)want);
		return 0;
	}
	if (log_find("devmem RX (binding"))
		FAIL("devmem RX used, copy mode expected (%s)", expect);
	if (!log_find(expect))
		FAIL("copy mode without \"%s\" in the log: %.300s", expect, copy_reason());
	diag("copy mode: %s", log_find(expect));
	return 0;
}

static const size_t wire_sizes[] = {
	0, 1, 127, 128, 129, 1000, 4095, 4096, 4097, 65535, 65537, 131071, 262147, MIB,
	MIB + 13, 3 * MIB + 1, 16 * MIB,
};

static int wire_sizes_env(const char *env0, const char *env1, const char *expect)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000 };
	int rc;

	cfg.recv_env[0] = env0;
	cfg.recv_env[1] = env1;
	plan_sizes(&p, wire_sizes, (int)(sizeof(wire_sizes) / sizeof(wire_sizes[0])), 2, 77);
	rc = run_pair(&cfg) || wire_expect(&p, expect);
	plan_free(&p);
	return rc ? -1 : 0;
}

static int wire_sizes_case(const char *recv_env, const char *expect)
{
	return wire_sizes_env(recv_env, NULL, expect);
}

/* By default the data sockets' receive buffers are autotuned, reserved in
 * the region at tcp_rmem's maximum each (the log names the mode). */
static int case_wire_devmem_sizes(void)
{
	if (wire_sizes_case(NULL, NULL))
		return -1;
	if (!log_find("receive buffers autotuned up to"))
		FAIL("the data sockets' receive buffers are not autotuned: %.300s",
		     log_find("devmem RX (binding") ? log_find("devmem RX (binding") : "");
	return 0;
}

/* A region that holds fixed receive buffers but not autotuned ones: devmem
 * RX all the same, with SO_RCVBUF at the fallback size. */
static int case_wire_fixed_buffers(void)
{
	if (wire_sizes_env("NCCL_DEVMEM_RX_REGION_MB=8", NULL, NULL))
		return -1;
	if (!log_find("SO_RCVBUF 1024 KiB") || log_find("receive buffers autotuned"))
		FAIL("a region of 8 MiB did not give fixed 1024 KiB receive buffers: %.300s",
		     log_find("devmem RX (binding") ? log_find("devmem RX (binding") : "");
	return 0;
}

/* tcp_rmem's reservation per steered socket, as the plugin takes it (rx.c
 * autotune_max()): the larger of its default and maximum, at least 64 KiB;
 * 0 when unreadable. */
static unsigned long rmem_reservation(void)
{
	char text[128] = "";
	unsigned long v[3];
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_rmem", "r");
	size_t got = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

	if (f)
		fclose(f);
	if (!got || sscanf(text, "%lu %lu %lu", &v[0], &v[1], &v[2]) != 3)
		return 0;
	v[0] = v[1] > v[2] ? v[1] : v[2];
	return v[0] < (64ul << 10) ? 64ul << 10 : v[0];
}

/* Two connections of one comm context, the first held open.  The region
 * (4 sockets of tcp_rmem's maximum, 2 MiB, and 2 MiB for igb's default
 * ring of 256 with its pool's 128 cached pages: wire.sh leaves both
 * alone, and a namespace starts with the initial one's tcp_rmem) leaves a
 * budget that holds two connections of autotuned buffers (2 sockets each,
 * copy delivery) and half a connection of fixed ones (2 sockets of
 * SO_RCVBUF 1024 KiB, doubled) more: the first gets
 * autotuned buffers; the second would fit autotuned, but then no later
 * connection would keep devmem RX, so it gets SO_RCVBUF 1024 KiB; both
 * devmem RX.  (Taking autotuned buffers first come, the second got them.) */
static int case_wire_later_connection_fixed(void)
{
	unsigned long a = rmem_reservation(), mb;
	char region[64];
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000,
				.conns = 2 };
	const char *auto_line, *fixed_line, *first;
	long long got;
	int rc, ordered;

	if (!a)
		FAIL("/proc/sys/net/ipv4/tcp_rmem unreadable");
	mb = (4 * a + 2 * MIB) / MIB + 2;
	snprintf(region, sizeof(region), "NCCL_DEVMEM_RX_REGION_MB=%lu", mb);
	cfg.recv_env[0] = region;
	cfg.recv_env[1] = "NCCL_DEVMEM_NSOCKS=2";
	plan_sizes(&p, wire_sizes, (int)(sizeof(wire_sizes) / sizeof(wire_sizes[0])), 2, 78);
	rc = run_pair(&cfg) || wire_expect(&p, NULL);
	/* wire_expect() read the first comm's count: the second's too */
	got = logged_number_nth(" bytes received into the dma-buf", 1);
	if (!rc && (got < 0 || (uint64_t)got * 10 < plan_data_bytes(&p) * 9))
		FAIL("the second connection took %lld of %llu bytes through the dma-buf", got,
		     (unsigned long long)plan_data_bytes(&p));
	plan_free(&p);
	if (rc)
		return -1;
	first = log_find("devmem RX (binding");
	auto_line = log_find("receive buffers autotuned up to");
	fixed_line = log_find("SO_RCVBUF 1024 KiB (autotuned buffers would reserve");
	if (!first || !strstr(first + 1, "devmem RX (binding"))
		FAIL("not both connections of a %lu MiB region used devmem RX: %.300s", mb,
		     first ? first : copy_reason());
	ordered = auto_line && fixed_line && auto_line < fixed_line;
	if (!auto_line)
		auto_line = "(no autotuned one)";
	if (!fixed_line)
		fixed_line = "(no fixed one)";
	if (!ordered)
		FAIL("a %lu MiB region (tcp_rmem reserving %lu KiB a socket) did not give the "
		     "first connection autotuned buffers and the second fixed ones: \"%.*s\", "
		     "then \"%.*s\"", mb, a >> 10, (int)strcspn(auto_line, "\n"), auto_line,
		     (int)strcspn(fixed_line, "\n"), fixed_line);
	diag("%lu MiB region: \"%.*s\", then \"%.*s\"", mb, (int)strcspn(auto_line, "\n"),
	     auto_line, (int)strcspn(fixed_line, "\n"), fixed_line);
	return 0;
}

/* 22 MB through a 4 MiB region: its buffers must come back (tokens). */
static int case_wire_small_region(void)
{
	return wire_sizes_env("NCCL_DEVMEM_RX_REGION_MB=4", "NCCL_DEVMEM_RX_SOCKBUF_KB=128", NULL);
}

/* A region that cannot take the sockets' buffers: copy mode, said why. */
static int case_wire_spoken_for(void)
{
	return wire_sizes_env("NCCL_DEVMEM_RX_REGION_MB=4", "NCCL_DEVMEM_RX_SOCKBUF_KB=1024",
			      "the RX region is spoken for");
}

/* 8 receives in flight, multi-recv of up to 4 buffers, v8 to v11. */
static int case_wire_devmem_outstanding(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 8, .recv_ver = 11, .plan = &p, .ms = 60000 };
	int rc;

	plan_random(&p, 200, 2 * MIB, 4, 8, 99);
	rc = run_pair(&cfg) || wire_expect(&p, NULL);
	plan_free(&p);
	return rc ? -1 : 0;
}

static int case_wire_copy_env(void)
{
	return wire_sizes_case("NCCL_DEVMEM_RX=0", "copy mode");
}

/* Run with tcp-data-split off on the receiver's NIC (tests/wire.sh). */
static int case_wire_bind_refused(void)
{
	return wire_sizes_case(NULL, "no devmem RX, copy mode: bind-rx of queue");
}

/* The /proc/self/task/TID/ directory of the receiving comm's second
 * progress thread (dm-rx1), which owns data socket 1 and not the control
 * socket; it names itself once running, so it is looked for up to 1 s. */
static int find_rx1(char *dir, size_t len)
{
	uint64_t end = now_ms() + (uint64_t)scaled(1000);
	int found;

	do {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		if (!d)
			FAIL("/proc/self/task: %m");
		found = 0;
		while ((e = readdir(d))) {
			char path[300], comm[32] = "";
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
			if (!strcmp(comm, "dm-rx1\n")) {
				snprintf(dir, len, "/proc/self/task/%s", e->d_name);
				found++;
			}
		}
		closedir(d);
		if (found == 1)
			return 0;
		msleep(5);
	} while (now_ms() < end);
	FAIL("%d threads named dm-rx1", found);
}

static int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(val, f) < 0 || fclose(f))
		FAIL("%s: %m", path);
	return 0;
}

#define TOKEN_WARN "data socket 1: devmem recvmsg: Bad address (no token could be handed out, " \
	"or a bad buffer); retrying"

static char rx1_fail_nth[320];

/* fail-nth counts every fault-injectable call of the thread: one that is
 * not the token table's (an ACK's skb, from the socket's backlog) takes
 * it silently.  Armed again whenever it is spent and the token table has
 * not failed yet, until it has (20 s at most). */
static void *rearm_fail_nth(void *arg)
{
	uint64_t end = now_ms() + (uint64_t)scaled(20000);

	(void)arg;
	while (!log_find(TOKEN_WARN) && now_ms() < end) {
		char v[16] = "";
		FILE *f = fopen(rx1_fail_nth, "r");

		if (!f)
			break;	/* the thread is gone */
		if (!fgets(v, sizeof(v), f))
			v[0] = 0;
		fclose(f);
		if (atoi(v) == 0 && !log_find(TOKEN_WARN))
			write_file(rx1_fail_nth, "1");
		msleep(1);
	}
	return NULL;
}

/* fail-nth on dm-rx1: its next fault-injectable allocation fails, the
 * token table's on its first devmem recvmsg (re-armed as above). */
static int arm_fail_nth(void)
{
	char dir[300];
	pthread_t t;

	if (find_rx1(dir, sizeof(dir)))
		return -1;
	snprintf(rx1_fail_nth, sizeof(rx1_fail_nth), "%s/fail-nth", dir);
	if (write_file(rx1_fail_nth, "1"))
		return -1;
	if (pthread_create(&t, NULL, rearm_fail_nth, NULL))
		FAIL("pthread_create: %m");
	pthread_detach(t);
	return 0;
}

static uint64_t armed_ms;

/* make-it-fail: with failslab's task filter on and probability 100
 * (tests/wire.sh), every slab allocation of dm-rx1 fails from now on. */
static int arm_make_it_fail(void)
{
	char dir[300], path[320];

	if (find_rx1(dir, sizeof(dir)))
		return -1;
	snprintf(path, sizeof(path), "%s/make-it-fail", dir);
	armed_ms = now_ms();
	return write_file(path, "1");
}

static int case_wire_token_enomem(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000,
				.after_accept = arm_fail_nth };
	long long retries;
	int rc;

	if (access("/proc/self/fail-nth", W_OK)) {
		diag("no fail-nth here (CONFIG_FAULT_INJECTION): skipped");
		return HARNESS_SKIPPED;
	}
	cfg.recv_env[0] = "NCCL_DEVMEM_NTHREADS=2";
	cfg.send_env[0] = "NCCL_DEVMEM_NSOCKS=2";
	plan_sizes(&p, wire_sizes, (int)(sizeof(wire_sizes) / sizeof(wire_sizes[0])), 2, 79);
	rc = run_pair(&cfg) || wire_expect(&p, NULL);
	plan_free(&p);
	if (rc)
		return -1;
	if (!log_find(TOKEN_WARN))
		FAIL("no devmem recvmsg of data socket 1 failed: the injected fault went elsewhere");
	retries = logged_number(" devmem recvmsg retries");
	diag("%lld recvmsg retries, every byte right", retries);
	return retries > 0 ? 0 : -1;
}

/* Run with failslab failing every allocation of the tasks that ask
 * (tests/wire.sh): data socket 1 can never get a token, the comm fails
 * after the 10 s of retries, with the reason, and nothing hangs. */
static int case_wire_token_gives_up(void)
{
	static const size_t sizes[] = { 4u << 20 };
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 30000,
				.after_accept = arm_make_it_fail };
	uint64_t took;
	int rc;

	if (access("/proc/self/make-it-fail", W_OK)) {
		diag("no make-it-fail here (CONFIG_FAULT_INJECTION): skipped");
		return HARNESS_SKIPPED;
	}
	cfg.recv_env[0] = "NCCL_DEVMEM_NTHREADS=2";
	cfg.send_env[0] = "NCCL_DEVMEM_NSOCKS=2";
	plan_sizes(&p, sizes, 1, 1, 83);
	armed_ms = 0;
	rc = run_pair(&cfg);
	plan_free(&p);
	took = now_ms() - armed_ms;
	if (!armed_ms)
		FAIL("make-it-fail was not armed");
	if (!rc)
		FAIL("the transfer passed: no allocation of data socket 1's thread failed");
	if (!log_find("data socket 1: devmem recvmsg failed for 10 s: Bad address (no token "
		      "could be handed out, or a bad buffer)"))
		FAIL("the comm did not fail for its devmem recvmsg");
	if (took < 10000)
		FAIL("gave up after %llu ms, before the 10 s of retries", (unsigned long long)took);
	diag("gave up after %llu ms with the reason", (unsigned long long)took);
	return 0;
}

/* Run with all but one of the receiver NIC's rule locations taken
 * (tests/wire.sh): the first data socket's rule is added, the second's
 * refused, and the first undone.  On igb a rule is also refused when its
 * flow's RSS bucket holds one of the 15 rules already there (which use
 * queue 0): then data socket 0's is, and nothing is left to undo; either
 * way the connection is served in copy mode and the table keeps its 15. */
static int case_wire_steer_refused(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000 };
	int rc;

	cfg.send_env[0] = "NCCL_DEVMEM_NSOCKS=2";	/* the connecting side's count */
	plan_sizes(&p, wire_sizes, (int)(sizeof(wire_sizes) / sizeof(wire_sizes[0])), 2, 77);
	rc = run_pair(&cfg) || wire_expect(&p, "copy mode: ntuple rule for data socket ");
	plan_free(&p);
	return rc ? -1 : 0;
}

/* Run with the interface's steering lock file opened up to every user, or
 * its directory writable by every user (tests/wire.sh): the plugin does
 * not take a lock that anyone could hold, and says so (a WARN too). */
static int case_wire_steer_lock_open_to_all(void)
{
	if (wire_sizes_case(NULL, "any user could hold it"))
		return -1;
	if (!log_find("devmem RX steering refused"))
		FAIL("no warning that the steering lock is refused");
	return 0;
}

/* A job without CAP_NET_ADMIN (the receiver becomes nobody): with the
 * helper tests/wire.sh started (NCCL_DEVMEM_HELPER), devmem RX; with
 * NCCL_DEVMEM_HELPER empty, copy mode with the reason; with a helper that
 * refuses igb's shared RSS buckets (NCCL_DEVMEM_HELPER set by wire.sh to
 * such a helper), copy mode with its reason. */
static int wire_nobody_case_with(const char *env, const char *expect, int (*after_accept)(void))
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000,
				.recv_nobody = 1, .after_accept = after_accept };
	int rc;

	cfg.recv_env[0] = env;
	plan_sizes(&p, wire_sizes, (int)(sizeof(wire_sizes) / sizeof(wire_sizes[0])), 2, 80);
	rc = run_pair(&cfg) || wire_expect(&p, expect);
	plan_free(&p);
	if (!rc && !expect && !log_find("udmabuf region, binding "))
		FAIL("no binding logged");
	if (!rc && !expect && !log_find(", by the helper"))
		FAIL("devmem RX, but not by the helper");
	return rc ? -1 : 0;
}

static int wire_nobody_case(const char *env, const char *expect)
{
	return wire_nobody_case_with(env, expect, NULL);
}

static int case_wire_helper_rx(void)
{
	return wire_nobody_case(NULL, NULL);
}

/* The receiver holds its steered connection 30 s (x time scale) before it
 * reads: tests/wire.sh kills such a job while its rules are surely in. */
static int hold_after_accept(void)
{
	struct timespec t = { scaled(30000) / 1000, (long)(scaled(30000) % 1000) * 1000000L };

	diag("steered: holding for %d ms", scaled(30000));
	while (nanosleep(&t, &t) && errno == EINTR)
		;
	return 0;
}

static int case_wire_helper_rx_held(void)
{
	return wire_nobody_case_with(NULL, NULL, hold_after_accept);
}

static int case_wire_no_helper(void)
{
	return wire_nobody_case("NCCL_DEVMEM_HELPER=", "no CAP_NET_ADMIN, and no helper");
}

static int case_wire_helper_refuses_buckets(void)
{
	return wire_nobody_case(NULL, "steers by RSS bucket: other users' flows would land");
}

/* Run with RSS spreading host traffic onto the last queue (tests/wire.sh). */
static int case_wire_rss_refused(void)
{
	return wire_sizes_case(NULL, "its RSS table spreads host traffic onto queue");
}

static int case_wire_kill_sender(void)
{
	if (case_kill_sender())
		return -1;
	if (!log_find("devmem RX (binding"))
		FAIL("the recv comm did not use devmem RX");
	return 0;
}

/* ---- UNPACK delivery ---- */

static const char *const unpack_env[] = {
	"NCCL_DEVMEM_UNPACK=host", "NCCL_PROTO=Simple", "NCCL_PAT_ENABLE=0", "NCCL_LOCAL_REGISTER=0",
	"NCCL_GRAPH_REGISTER=0",
};

static void unpack_env_set(void)
{
	unsigned i;

	for (i = 0; i < sizeof(unpack_env) / sizeof(unpack_env[0]); i++)
		putenv((char *)unpack_env[i]);
}

#define UC_MSGS 20

/* The UNPACK rules from NCCL's side: 16 receives at most before the first
 * is consumed, one buffer per receive, irecvConsumed in order, once. */
static int case_unpack_contract(void)
{
	size_t sizes[UC_MSGS];
	struct pair_cfg cfg = { .send_ver = 11 };
	struct plan p;
	struct peer peer;
	struct net n;
	uint8_t *slab;
	void *lc, *rc_, *mh, *req[UC_MSGS] = { NULL }, *data[2], *mhs[2];
	ncclNetDeviceHandle_v8_t *dh;
	struct unpack_handle *uh;
	size_t sz2[2] = { 8, 8 }, slot = 8192 + GUARD;
	int tags[2] = { 0, 1 }, i, d, got, rc;

	for (i = 0; i < UC_MSGS; i++)
		sizes[i] = i % 2 ? 10 : 5000 + (size_t)i;
	plan_sizes(&p, sizes, UC_MSGS, 1, 5);
	cfg.plan = &p;
	cfg.ms = 20000;
	slab = xmalloc(slot * UC_MSGS);
	unpack_env_set();
	if (recv_side_up(&peer, pair_sender, &cfg, &n, 8, &lc, &rc_))
		return -1;
	if (!n.unpack || !log_find("UNPACK delivery"))
		FAIL("netDeviceType is not UNPACK with the environment set");
	dh = devh_of(rc_);
	if (!dh || dh->netDeviceType != NCCL_NET_DEVICE_UNPACK ||
	    dh->netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION || dh->needsProxyProgress != 1)
		FAIL("accept did not fill the device handle");
	uh = dh->handle;
	if (!uh || !uh->meta || uh->head != UINT64_MAX || dh->size != sizeof(*uh))
		FAIL("the UNPACK handle: %p, meta %p, head %llu, size %zu", (void *)uh,
		     uh ? (void *)uh->meta : NULL, uh ? (unsigned long long)uh->head : 0ull,
		     dh->size);
	if (n_regmr(&n, rc_, slab, slot * UC_MSGS, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	data[0] = slab;
	data[1] = slab + 16;
	mhs[0] = mhs[1] = mh;
	if (n.v8->irecv(rc_, 2, data, (int[]){ 8, 8 }, tags, mhs, &req[0]) == ncclSuccess ||
	    n_irecv(&n, rc_, 2, data, sz2, tags, mhs, &req[0]) == ncclSuccess)
		FAIL("a 2-buffer receive was taken with UNPACK delivery");
	req[0] = NULL;
	for (i = 0; i <= 16; i++) {
		void *q = NULL;

		data[0] = slab + (size_t)i * slot;
		memset(data[0], POISON, p.g[i].cap[0]);
		memset((uint8_t *)data[0] + p.g[i].cap[0], GUARD_BYTE, GUARD);
		if ((rc = (int)n_irecv(&n, rc_, 1, data, &p.g[i].cap[0], &p.g[i].tag[0], mhs, &q)))
			FAIL("irecv #%d: %d", i, rc);
		if (i < 16 && !q)
			FAIL("irecv #%d not taken with %d receives in the queue", i, i);
		if (i == 16 && q)
			FAIL("a 17th receive was taken before the first was consumed");
		req[i] = q;
		if (!i && n.v8->irecvConsumed(rc_, 1, q) == ncclSuccess)
			FAIL("irecvConsumed of a receive not reported done");
	}
	/* each receive in order: test, NCCL's gather (nothing on loopback),
	 * the bytes, irecvConsumed; consuming #1 before #0, #0 twice, a
	 * foreign request are refused; the 17th receive is taken once #0 is
	 * consumed */
	for (i = 0; i < UC_MSGS; i++) {
		uint8_t *buf = slab + (size_t)i * slot;
		uint64_t end = now_ms() + (uint64_t)scaled(10000);

		if (i >= 16 && !req[i]) {
			data[0] = buf;
			memset(buf, POISON, p.g[i].cap[0]);
			memset(buf + p.g[i].cap[0], GUARD_BYTE, GUARD);
			if ((rc = (int)n_irecv(&n, rc_, 1, data, &p.g[i].cap[0], &p.g[i].tag[0], mhs,
					       &req[i])) || !req[i])
				FAIL("irecv #%d after a consume: %d", i, rc);
		}
		d = 0;
		got = -1;
		while (!d && !(rc = (int)n_test(&n, req[i], &d, &got)) && now_ms() < end)
			;
		if (rc || !d)
			FAIL("receive #%d: done %d, %d", i, d, rc);
		if (!i) {
			void *q = NULL;

			/* done, not consumed: still no 17th receive */
			data[0] = slab + 16 * slot;
			if (n_irecv(&n, rc_, 1, data, &p.g[16].cap[0], &p.g[16].tag[0], mhs, &q) ||
			    q)
				FAIL("a 17th receive was taken before the first was consumed");
		}
		if (i == 1 && n.v8->irecvConsumed(rc_, 1, req[1]) == ncclSuccess)
			FAIL("irecvConsumed of receive #1 before #0");
		if (unpack_gather(uh, buf, p.g[i].cap[0]) || check_buf(&p.g[i], 0, buf, got, i))
			return -1;
		if (i == 1 && n.v8->irecvConsumed(rc_, 1, req[0]))
			FAIL("irecvConsumed of receive #0 failed");
		if (i == 1 && (n.v8->irecvConsumed(rc_, 1, req[0]) == ncclSuccess ||
			       n.v8->irecvConsumed(rc_, 1, slab) == ncclSuccess ||
			       n.v8->irecvConsumed(lc, 1, req[1]) == ncclSuccess))
			FAIL("irecvConsumed twice, of a foreign request or on a foreign comm");
		if (i && n.v8->irecvConsumed(rc_, 1, req[i]))
			FAIL("irecvConsumed #%d failed", i);
	}
	if (peer_wait(&peer, 20000))
		return -1;
	n_deregmr(&n, rc_, mh);
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	net_down(&n);
	plan_free(&p);
	free(slab);
	return 0;
}

static int have_cuda(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (h)
		dlclose(h);
	return h != NULL;
}

/* 0 when the child forked last exited with 0. */
static int peer_exit_status(void)
{
	int st;

	if (wait(&st) < 0)
		FAIL("wait: %m");
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* Without the NCCL settings UNPACK needs, or asked for the GPU kernel's
 * UNPACK (not there yet), copy delivery, said why. */
static int unpack_refused(const char *mode, const char *env, const char *want)
{
	struct net n;
	int dev;

	if (!fork()) {
		unpack_env_set();
		setenv("NCCL_DEVMEM_UNPACK", mode, 1);
		if (env)
			putenv((char *)env);
		if (net_up(&n, 11, &dev))
			_exit(1);
		if (n.unpack || !log_find(want)) {
			diag("NCCL_DEVMEM_UNPACK=%s %s: netDeviceType %s, \"%s\" %sin the log", mode,
			     env ? env : "", n.unpack ? "UNPACK" : "HOST", want,
			     log_find(want) ? "" : "not ");
			_exit(1);
		}
		net_down(&n);
		_exit(0);
	}
	return peer_exit_status();
}

static int case_unpack_needs_simple(void)
{
	return unpack_refused("host", "NCCL_PROTO=LL,Simple", "needs NCCL_PROTO=Simple") ||
	       unpack_refused("host", "NCCL_ALLOC_P2P_NET_LL_BUFFERS=1",
			      "needs NCCL_ALLOC_P2P_NET_LL_BUFFERS unset or 0") ||
	       (!have_cuda() && unpack_refused("1", NULL, "needs CUDA (")) ||
	       unpack_refused("2", NULL, "not 0, 1 or \"host\"") ? -1 : 0;
}

/* The GPU test mode asked for where there is no CUDA: host memory only,
 * said why; GPU registrations refused with the reason. */
static int case_gpu_test_mode_without_cuda(void)
{
	struct net n;
	int dev;

	if (have_cuda()) {
		diag("libcuda is here: the GPU test mode runs in gpu-test.sh instead");
		return HARNESS_SKIPPED;
	}
	if (!fork()) {
		ncclNetProperties_v8_t p;

		setenv("NCCL_DEVMEM_TEST_GPU", "1", 1);
		if (net_up(&n, 11, &dev) || n.v8->getProperties(dev, &p))
			_exit(1);
		if (p.ptrSupport != NCCL_PTR_HOST) {
			diag("ptrSupport 0x%x without CUDA", p.ptrSupport);
			_exit(1);
		}
		if (!log_find("NCCL_DEVMEM_TEST_GPU=1 needs CUDA")) {
			diag("the log does not say why there is no GPU test mode");
			_exit(1);
		}
		net_down(&n);
		_exit(0);
	}
	return peer_exit_status();
}

/* ---- devmem TX ---- */

/* The sizes from a sender's memory `mem` (SEND_MEM_*), the receiver as
 * recv_env makes it (expect: as wire_expect). */
static int tx_sizes(int mem, const char *send_env, const char *recv_env, int send_tx,
		    const char *send_expect, const char *expect, int drop_euid)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 8, .plan = &p, .ms = 60000,
				.send_tx = send_tx, .send_expect = send_expect };
	int rc;

	cfg.send_env[0] = send_env;
	cfg.recv_env[0] = recv_env;
	plan_sizes(&p, wire_sizes, (int)(sizeof(wire_sizes) / sizeof(wire_sizes[0])), 2, 78);
	p.send_mem = mem;
	p.send_drop_euid = drop_euid;
	rc = run_pair(&cfg) || (wire.on && wire_expect(&p, expect));
	plan_free(&p);
	return rc ? -1 : 0;
}

/* A dma-buf registration the kernel cannot bind (a memfd; on the host's
 * loopback no device can): plain send, said why. */
static int case_dmabuf_plain(void)
{
	return tx_sizes(SEND_MEM_MEMFD, NULL, NULL, SEND_TX_PLAIN, "no devmem TX on ", NULL, 0);
}

/* devmem TX alone: the receiver in copy mode. */
static int case_wire_tx_sizes(void)
{
	return tx_sizes(SEND_MEM_UDMABUF, NULL, "NCCL_DEVMEM_RX=0", SEND_TX_DEVMEM,
			"bound for devmem TX on", "copy mode", 0);
}

static int case_wire_tx_not_dmabuf(void)
{
	return tx_sizes(SEND_MEM_MEMFD, NULL, "NCCL_DEVMEM_RX=0", SEND_TX_PLAIN,
			"no devmem TX on ", "copy mode", 0);
}

static int case_wire_tx_env_off(void)
{
	return tx_sizes(SEND_MEM_UDMABUF, "NCCL_DEVMEM_TX=0", "NCCL_DEVMEM_RX=0", SEND_TX_PLAIN,
			"NCCL_DEVMEM_TX=0", "copy mode", 0);
}

/* Bound by root, sent by nobody: this series refuses the sendmsg (another
 * user's binding); the comm goes on with plain send. */
static int case_wire_tx_refused_at_send(void)
{
	return tx_sizes(SEND_MEM_UDMABUF, NULL, "NCCL_DEVMEM_RX=0", SEND_TX_PLAIN,
			"Operation not permitted; plain send from now on", "copy mode", 1);
}

/* devmem TX and devmem RX together: 200 multi-recvs, 8 in flight. */
static int case_wire_tx_rx(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000,
				.send_tx = SEND_TX_DEVMEM };
	int rc;

	plan_random(&p, 200, 2 * MIB, 4, 8, 101);
	p.send_mem = SEND_MEM_UDMABUF;
	rc = run_pair(&cfg) || wire_expect(&p, NULL);
	plan_free(&p);
	return rc ? -1 : 0;
}

/* The receiver killed while 256 MiB from a udmabuf are in flight: the
 * send fails, nothing hangs (completions of the purged data). */
static int case_wire_tx_kill_receiver(void)
{
	kill_send_mem = SEND_MEM_UDMABUF;
	if (case_kill_receiver())
		return -1;
	if (!log_find("bound for devmem TX on"))
		FAIL("the sender did not bind its udmabuf for TX");
	if (logged_number(" bytes sent from a dma-buf") < (long long)KILL_FIRST)
		FAIL("%lld bytes sent from the dma-buf, at least %lu expected",
		     logged_number(" bytes sent from a dma-buf"), KILL_FIRST);
	return 0;
}

/* A devmem send is done only once the peer has acknowledged its bytes (the
 * kernel reports the zerocopy sendmsg done): with the receiver's link
 * down, 32 KiB that fit in the socket buffers stay in flight; with the
 * link back they arrive, retransmitted from the dma-buf, intact. */
#define ACKED_SIZE (32 * 1024 + 7)
#define ACKED_SEED 4242

static int acked_sender(struct peer *self)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE];
	struct send_mem mem;
	struct net n;
	void *sc, *mh, *req = NULL;
	uint64_t end;
	int dev, rc, d = 0;
	char c;

	if (net_up(&n, 11, &dev))
		return -1;
	if (read_full(self->rfd, handle, sizeof(handle), scaled(5000)))
		FAIL("sender: no handle");
	if (connect_loop(&n, dev, handle, &sc, 5000))
		FAIL("sender: connect failed");
	if (send_mem_get(&n, sc, SEND_MEM_UDMABUF, ACKED_SIZE, &mem, &mh))
		FAIL("sender: regMrDmaBuf failed");
	pat_fill(mem.slab, ACKED_SIZE, ACKED_SEED);
	write_full(self->wfd, "c", 1);	/* connected: the receiver may cut the link */
	if (read_full(self->rfd, &c, 1, scaled(10000)))
		FAIL("sender: the receiver did not take its link down");
	while (!req)
		if ((rc = (int)n_isend(&n, sc, mem.slab, ACKED_SIZE, 1, mh, &req)))
			FAIL("sender: isend: %d", rc);
	end = now_ms() + (uint64_t)scaled(1500);
	while (now_ms() < end) {
		if ((rc = (int)n_test(&n, req, &d, NULL)))
			FAIL("sender: test: %d", rc);
		if (d)
			FAIL("sender: a send from the dma-buf was done while the receiver's link "
			     "was down");
		msleep(10);
	}
	write_full(self->wfd, "w", 1);
	if (!wait_req(&n, req, 30000, &rc) || rc)
		FAIL("sender: not done 30 s after the link came back (%d)", rc);
	n_deregmr(&n, sc, mh);
	send_mem_put(&mem);
	if (n_close_send(&n, sc))
		FAIL("sender: closeSend failed");
	net_down(&n);
	if (logged_number(" bytes sent from a dma-buf") != ACKED_SIZE)
		FAIL("sender: %lld bytes sent from the dma-buf, %d expected",
		     logged_number(" bytes sent from a dma-buf"), ACKED_SIZE);
	return 0;
}

static int link_set(const char *state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip link set dev %s %s", dev_name, state);
	if (system(cmd))
		FAIL("%s failed", cmd);
	return 0;
}

static int case_wire_tx_done_when_acked(void)
{
	uint8_t *buf = xmalloc(ACKED_SIZE);
	struct peer peer;
	struct net n;
	void *lc, *rc_, *mh, *req = NULL, *data = buf;
	size_t size = ACKED_SIZE;
	int tag = 1, rc, got = 0, d = 0, went;
	long bad;
	char c;

	putenv("NCCL_DEVMEM_RX=0");
	if (recv_side_up(&peer, acked_sender, NULL, &n, 8, &lc, &rc_))
		return -1;
	if (n_regmr(&n, rc_, buf, ACKED_SIZE, NCCL_PTR_HOST, &mh))
		FAIL("regMr failed");
	if (read_full(peer.rfd, &c, 1, scaled(10000)))
		FAIL("the sender did not connect");
	if (link_set("down"))
		return -1;
	write_full(peer.wfd, "g", 1);
	went = read_full(peer.rfd, &c, 1, scaled(15000));
	if (link_set("up"))
		return -1;
	if (went) {
		peer_wait(&peer, 1000);
		FAIL("the sender stopped while the link was down");
	}
	while (!req)
		if ((rc = (int)n_irecv(&n, rc_, 1, &data, &size, &tag, &mh, &req)))
			FAIL("irecv: %d", rc);
	rc = 0;
	{
		uint64_t end = now_ms() + (uint64_t)scaled(30000);

		while (!rc && !d && now_ms() < end)
			rc = (int)n_test(&n, req, &d, &got);
	}
	if (!d || rc || got != ACKED_SIZE)
		FAIL("receive: done %d, error %d, %d bytes", d, rc, got);
	bad = pat_check(buf, ACKED_SIZE, ACKED_SEED);
	if (bad >= 0)
		FAIL("byte %ld differs after the retransmission", bad);
	if (peer_wait(&peer, 30000))
		return -1;
	n_deregmr(&n, rc_, mh);
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	net_down(&n);
	free(buf);
	return 0;
}

/* ---- UNPACK over the wire ---- */

/* Every data-socket byte that came through the dma-buf reached its buffer
 * by a meta.  The control socket's bytes may come through it too (igb
 * carries a rule out through its RSS bucket, and the control flow can
 * share the bucket): those the plugin places itself, at most a header, a
 * SEND and an inline payload per message (and the HELLO and CLOSE). */
static int unpack_expect(const struct plan *p)
{
	long long dmabuf, ctrl_max = 2 * (DM_HDR_LEN + DM_SEND_LEN + DM_INLINE_MAX);
	int i;

	if (wire_expect(p, NULL))
		return -1;
	for (i = 0; i < p->ngroups; i++)
		ctrl_max += (long long)p->g[i].n * (DM_HDR_LEN + DM_SEND_LEN + DM_INLINE_MAX);
	dmabuf = logged_number(" bytes received into the dma-buf");
	if (!log_find("UNPACK delivery") || (long long)unpack_gathered > dmabuf ||
	    dmabuf - (long long)unpack_gathered > ctrl_max)
		FAIL("%llu bytes gathered by UNPACK metas, %lld came through the dma-buf",
		     (unsigned long long)unpack_gathered, dmabuf);
	diag("%llu bytes gathered from the RX region by UNPACK metas",
	     (unsigned long long)unpack_gathered);
	return 0;
}

static const size_t unpack_sizes[] = {
	0, 1, 127, 128, 129, 1000, 4095, 4096, 4097, 65535, 65537, 131071, 262147, MIB, MIB + 13,
	2 * MIB,
};

static int case_wire_unpack_sizes(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 8, .plan = &p, .ms = 60000 };
	int rc;

	unpack_env_set();
	plan_sizes(&p, unpack_sizes, (int)(sizeof(unpack_sizes) / sizeof(unpack_sizes[0])), 2,
		   31);
	rc = run_pair(&cfg) || unpack_expect(&p);
	plan_free(&p);
	return rc ? -1 : 0;
}

/* No progress threads on either side (NCCL_DEVMEM_NTHREADS=0, both logs
 * checked): test() moves the bytes, devmem RX all the same.  With UNPACK
 * delivery, through an 8 MiB region, where receives read ahead wait for
 * pages that only irecvConsumed gives back (no thread to wake; that a
 * wait happened is not checked). */
static int wire_no_threads(int unpack)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000 };
	int rc;

	cfg.recv_env[0] = "NCCL_DEVMEM_NTHREADS=0";
	cfg.send_env[0] = "NCCL_DEVMEM_NTHREADS=0";
	cfg.send_expect = "data sockets, 0 threads";
	if (unpack) {
		unpack_env_set();
		cfg.recv_env[1] = "NCCL_DEVMEM_RX_REGION_MB=8";
		cfg.recv_env[2] = "NCCL_DEVMEM_RX_SOCKBUF_KB=128";
		plan_random(&p, 60, MIB / 2, 1, 8, 43);
	} else {
		plan_random(&p, 200, 2 * MIB, 4, 8, 1234);
	}
	rc = run_pair(&cfg) || (unpack ? unpack_expect(&p) : wire_expect(&p, NULL));
	plan_free(&p);
	if (rc)
		return -1;
	if (!log_find("data sockets, 0 threads"))
		FAIL("the recv comm started progress threads");
	return 0;
}

static int case_wire_no_threads(void)
{
	return wire_no_threads(0);
}

static int case_wire_unpack_no_threads(void)
{
	return wire_no_threads(1);
}

/* Receives to 512 KiB (NCCL's SIMPLE step), 8 in flight, through an
 * 8 MiB region: at MTU 1500 a fragment of about 1448 bytes holds a 4 KiB
 * page, so the pages go round several times: irecvConsumed must give the
 * tokens back, and receives read ahead must leave the oldest the pages it
 * needs. */
static int case_wire_unpack_small_region(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 60000 };
	int rc;

	unpack_env_set();
	cfg.recv_env[0] = "NCCL_DEVMEM_RX_REGION_MB=8";
	cfg.recv_env[1] = "NCCL_DEVMEM_RX_SOCKBUF_KB=128";
	plan_random(&p, 60, MIB / 2, 1, 8, 41);
	rc = run_pair(&cfg) || unpack_expect(&p);
	plan_free(&p);
	return rc ? -1 : 0;
}

/* Region pages held by a receive NCCL has not consumed: 24 receives of
 * 2 MiB, 8 in flight, UNPACK through an 8 MiB region, and receive #0's
 * pages (about 1450 fragments, a page each) held for 2 s after it is done
 * before irecvConsumed.  The 7 receives behind it must not all be done
 * meanwhile (the plugin's read-ahead stops behind it, before the region
 * itself is full; the sockets fill and the sender stalls); then every
 * byte arrives and is checked.  A plugin that reads ahead without that
 * bound deadlocks here. */
static int case_wire_unpack_region_held(void)
{
	static size_t sizes[24];
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 90000 };
	int rc, i;

	for (i = 0; i < 24; i++)
		sizes[i] = 2 * MIB;
	unpack_env_set();
	cfg.recv_env[0] = "NCCL_DEVMEM_RX_REGION_MB=8";
	cfg.recv_env[1] = "NCCL_DEVMEM_RX_SOCKBUF_KB=128";
	plan_sizes(&p, sizes, 24, 8, 45);
	p.hold_first_ms = 2000;
	rc = run_pair(&cfg) || unpack_expect(&p);
	plan_free(&p);
	if (rc)
		return -1;
	diag("%d of the 7 receives behind #0 were done while it held its pages", held_done);
	if (held_done < 0 || held_done >= 7)
		FAIL("%d of the 7 receives behind #0 done while it held its pages: the region "
		     "was never full", held_done);
	return 0;
}

/* The whole devmem path: udmabuf -> devmem TX -> devmem RX -> UNPACK. */
static int case_wire_unpack_tx(void)
{
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 8, .recv_ver = 11, .plan = &p, .ms = 60000,
				.send_tx = SEND_TX_DEVMEM };
	int rc;

	unpack_env_set();
	plan_random(&p, 200, MIB, 1, 8, 37);
	p.send_mem = SEND_MEM_UDMABUF;
	rc = run_pair(&cfg) || unpack_expect(&p);
	plan_free(&p);
	return rc ? -1 : 0;
}

/* 4 MiB at MTU 1500 is about 2900 fragments, over the 2048 one UNPACK
 * receive can name: that comm fails, said why, nothing hangs. */
static int case_wire_unpack_too_many(void)
{
	const size_t size = 4 * MIB;
	struct plan p;
	struct pair_cfg cfg = { .send_ver = 11, .recv_ver = 11, .plan = &p, .ms = 10000 };

	unpack_env_set();
	plan_sizes(&p, &size, 1, 1, 3);
	if (!run_pair(&cfg))
		FAIL("a receive of more than 2048 fragments succeeded");
	if (!log_find("more than 2048 fragments in one receive"))
		FAIL("no error naming the fragment limit");
	plan_free(&p);
	return 0;
}

struct tcase {
	const char *name;
	int (*fn)(void);
	int limit_s;
};

static const struct tcase cases[] = {
	{ "devices-and-symbols", case_devices, 10 },
	{ "sizes-0-to-64MiB-v8", case_sizes_v8, 30 },
	{ "sizes-0-to-64MiB-v11", case_sizes_v11, 30 },
	{ "size-1GiB", case_max_size, 45 },
	{ "8-outstanding-v8-v11", case_outstanding, 30 },
	{ "multi-recv", case_multirecv, 30 },
	{ "several-connections", case_multiconn, 30 },
	{ "nsocks-nthreads-env", case_env, 30 },
	{ "threads-follow-affinity", case_threads_affinity, 30 },
	{ "recv-smaller-than-send", case_recv_smaller, 20 },
	{ "api-misuse", case_misuse, 15 },
	{ "stall-report", case_stall_report, 30 },
	{ "stall-report-no-threads", case_stall_report_inline, 30 },
	{ "corrupt-handle", case_badhandle, 20 },
	{ "sender-killed", case_kill_sender, 20 },
	{ "receiver-killed", case_kill_receiver, 20 },
	{ "close-in-flight", case_inflight, 20 },
	{ "fuzz-control-protocol", case_fuzz, 40 },
	{ "dmabuf-not-bound-plain-send", case_dmabuf_plain, 30 },
	{ "unpack-contract", case_unpack_contract, 30 },
	{ "unpack-needs-simple", case_unpack_needs_simple, 10 },
	{ "gpu-test-mode-without-cuda", case_gpu_test_mode_without_cuda, 10 },
	/* with HARNESS_WIRE only */
	{ "wire-devmem-rx-sizes", case_wire_devmem_sizes, 120 },
	{ "wire-devmem-rx-8-outstanding", case_wire_devmem_outstanding, 120 },
	{ "wire-copy-mode-env", case_wire_copy_env, 120 },
	{ "wire-bind-refused", case_wire_bind_refused, 120 },
	{ "wire-steering-refused", case_wire_steer_refused, 120 },
	{ "wire-steer-lock-open-to-all", case_wire_steer_lock_open_to_all, 120 },
	{ "wire-token-table-enomem", case_wire_token_enomem, 120 },
	{ "wire-token-table-gives-up", case_wire_token_gives_up, 120 },
	{ "wire-rss-onto-devmem-queue", case_wire_rss_refused, 120 },
	{ "wire-helper-rx", case_wire_helper_rx, 120 },
	{ "wire-held-helper-job", case_wire_helper_rx_held, 240 },
	{ "wire-no-helper", case_wire_no_helper, 120 },
	{ "wire-helper-refuses-buckets", case_wire_helper_refuses_buckets, 120 },
	{ "wire-sender-killed", case_wire_kill_sender, 60 },
	{ "wire-small-region", case_wire_small_region, 120 },
	{ "wire-region-spoken-for", case_wire_spoken_for, 120 },
	{ "wire-fixed-buffers-small-region", case_wire_fixed_buffers, 120 },
	{ "wire-later-connection-fixed", case_wire_later_connection_fixed, 180 },
	{ "wire-devmem-tx-sizes", case_wire_tx_sizes, 120 },
	{ "wire-devmem-tx-and-rx", case_wire_tx_rx, 120 },
	{ "wire-tx-not-a-dmabuf", case_wire_tx_not_dmabuf, 120 },
	{ "wire-tx-env-off", case_wire_tx_env_off, 120 },
	{ "wire-tx-refused-at-send", case_wire_tx_refused_at_send, 120 },
	{ "wire-tx-receiver-killed", case_wire_tx_kill_receiver, 60 },
	{ "wire-tx-done-when-acked", case_wire_tx_done_when_acked, 120 },
	{ "wire-unpack-sizes", case_wire_unpack_sizes, 120 },
	{ "wire-unpack-tx-8-outstanding", case_wire_unpack_tx, 120 },
	{ "wire-unpack-too-many-fragments", case_wire_unpack_too_many, 60 },
	{ "wire-unpack-small-region", case_wire_unpack_small_region, 120 },
	{ "wire-unpack-region-held", case_wire_unpack_region_held, 150 },
	{ "wire-no-progress-threads", case_wire_no_threads, 120 },
	{ "wire-unpack-no-progress-threads", case_wire_unpack_no_threads, 120 },
};

static int run_case(int num, const struct tcase *t)
{
	uint64_t t0 = now_ms(), end = t0 + (uint64_t)(t->limit_s * 1000 * time_scale);
	pid_t pid;
	int st, ok;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int r = t->fn();

		_exit(r == HARNESS_SKIPPED ? HARNESS_SKIPPED : r ? 1 : 0);
	}
	setpgid(pid, pid);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (now_ms() > end) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			printf("not ok %d - %s # timed out after %d s\n", num, t->name,
			       (int)(t->limit_s * time_scale));
			return 0;
		}
		msleep(5);
	}
	kill(-pid, SIGKILL);	/* leftovers of the case */
	ok = WIFEXITED(st) && (!WEXITSTATUS(st) || WEXITSTATUS(st) == HARNESS_SKIPPED);
	if (WIFEXITED(st) && WEXITSTATUS(st) == HARNESS_SKIPPED)
		printf("ok %d - %s # SKIP (see the line above)\n", num, t->name);
	else if (WIFSIGNALED(st))
		printf("not ok %d - %s # killed by signal %d\n", num, t->name, WTERMSIG(st));
	else
		printf("%s %d - %s # %.1f s\n", ok ? "ok" : "not ok", num, t->name,
		       (double)(now_ms() - t0) / 1000);
	return ok;
}

/* ---------------------------------------------------- bench mode (make bench) */

/*
 * [HARNESS_WIRE=...] nccl_harness [LIB] --bench MODE MIB [ID]: one measured
 * transfer of MIB MiB between the namespaces (without HARNESS_WIRE over
 * loopback, in copy mode: a smoke test), as NCCL moves data: 512 KiB
 * messages (NCCL's SIMPLE step over a network), 8 receives in flight, each
 * given back with irecvConsumed once done; the plugin's defaults (2 data
 * sockets; progress threads by the CPUs each side may use) unless
 * NCCL_DEVMEM_NSOCKS / _NTHREADS say otherwise (both are printed).  MODE: "unpack" (devmem RX, the UNPACK
 * metas taken as NCCL's kernel would take them, minus the gather, which is
 * GPU work in production) or "copy" (devmem RX, the plugin copies the
 * bytes into the receive buffers).  The receiver runs pinned to CPU 1 (its
 * progress threads inherit it), the sender to CPU 0, as vm/bench-guest.sh
 * lays out the NICs' interrupts.  Each side tests only its oldest request
 * in flight, and the next once that one is done, as NCCL's proxy tests a
 * connection's steps in order.  A side whose pass found none done sleeps
 * (timer slack 1 ns): the receiver 20 us (HARNESS_BENCH_NAP_US), the
 * sender, which only keeps 8 messages posted, 200 us
 * (HARNESS_BENCH_SEND_NAP_US): NCCL's proxy thread spins there instead,
 * on a core of its own, which is the driver's cost, not the plugin's; the
 * naps and the receiving driver's own CPU time are printed.  Over the wire
 * a run fails unless at least 90% of the bytes came through the dma-buf
 * (and, with UNPACK, through metas): a fallback is never measured as
 * devmem.
 *
 * Prints "key: value" lines as devmem_bench does (mk/bench-report.py reads
 * them): the receiver's CPU 1 accounting from /proc/stat, and, with ID,
 * markers for vm/insn-count.c: the receiver calls the marker page at
 * 2 * ID (begin) and 2 * ID + 1 (end), the sender at 2 * ID + 2 and + 3;
 * last, the receiver's executable mappings ("map:" lines), with which
 * mk/bench-profile.py names the user-space functions of a profile.
 */
#define BENCH_MSG (512u << 10)
#define BENCH_DEPTH 8
#define BENCH_MARKER_BASE 0x7e5700000000UL
#define BENCH_MARKER_SIZE (64UL << 10)
#define BENCH_LIMIT_MS 600000

struct bench {
	int unpack;
	uint64_t bytes;
	long id;		/* -1: no markers */
	int cpus;		/* online CPUs: fewer than 2, nothing pinned */
};

static unsigned char *bench_markers;

static int bench_pin(const struct bench *b, int cpu)
{
	cpu_set_t set;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (b->cpus < 2)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		FAIL("pinning to CPU %d: %m", cpu);
	return 0;
}

static int bench_markers_map(long id)
{
	void *p;

	if (id < 0 || bench_markers)	/* the sender inherits the receiver's */
		return 0;
	p = mmap((void *)BENCH_MARKER_BASE, BENCH_MARKER_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != (void *)BENCH_MARKER_BASE)
		FAIL("mapping the markers: %m");
	memset(p, 0xc3, BENCH_MARKER_SIZE);	/* ret */
	if (mprotect(p, BENCH_MARKER_SIZE, PROT_READ | PROT_EXEC))
		FAIL("mprotect markers: %m");
	bench_markers = p;
	return 0;
}

/* Calls marker @off of the page (nothing without markers). */
static void bench_mark(long off)
{
	void (*fn)(void);

	if (!bench_markers || off < 0 || (unsigned long)off >= BENCH_MARKER_SIZE)
		return;
	fn = (void (*)(void))(uintptr_t)(bench_markers + off);
	fn();
	__asm__ __volatile__("" ::: "memory");
}

/* CPU @cpu's line of /proc/stat: user nice system idle iowait irq softirq steal. */
static int bench_cpu_ticks(int cpu, unsigned long long t[8])
{
	char line[512], name[16];
	FILE *f = fopen("/proc/stat", "r");
	int found = 0;

	if (!f)
		FAIL("/proc/stat: %m");
	snprintf(name, sizeof(name), "cpu%d ", cpu);
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name))) {
			memset(t, 0, 8 * sizeof(*t));
			found = sscanf(line + strlen(name), "%llu %llu %llu %llu %llu %llu %llu %llu",
				       &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]) >= 7;
		}
	fclose(f);
	if (!found)
		FAIL("no %sline in /proc/stat", name);
	return 0;
}

static uint64_t bench_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A driver's nap: the receiver's 20 us, or HARNESS_BENCH_NAP_US; the
 * sender's 200 us, or HARNESS_BENCH_SEND_NAP_US (1 to 100000 each). */
static void bench_nap(int sender)
{
	static long us[2];
	struct timespec nap;

	if (!us[sender]) {
		const char *e = getenv(sender ? "HARNESS_BENCH_SEND_NAP_US" : "HARNESS_BENCH_NAP_US");
		char *end = NULL;
		long v = e ? strtol(e, &end, 10) : 0;

		us[sender] = e && *e && !*end && v >= 1 && v <= 100000 ? v : sender ? 200 : 20;
	}
	nap.tv_sec = us[sender] / 1000000;
	nap.tv_nsec = (us[sender] % 1000000) * 1000;
	nanosleep(&nap, NULL);
}

/* The bench loops' clock for their 600 s limit: the coarse one, which the
 * vDSO reads without a system call whatever the clocksource (a guest's
 * HPET would cost each pass a syscall and an emulated MMIO read). */
static uint64_t bench_now_ms(void)
{
	return bench_ns(CLOCK_MONOTONIC_COARSE) / 1000000;
}

static int bench_sender(struct peer *self)
{
	const struct bench *b = self->arg;
	uint8_t *buf = NULL;
	void *sc = NULL, *mh = NULL, *req[BENCH_DEPTH] = { NULL };
	uint64_t posted = 0, done = 0, nmsg = b->bytes / BENCH_MSG, end;
	struct net n;
	char go;
	int i, rc = -1;

	if (bench_pin(b, 0) || bench_markers_map(b->id) || peer_connect(self, &n, &sc))
		return -1;
	buf = xmalloc((size_t)BENCH_MSG * BENCH_DEPTH);
	memset(buf, 0x5a, (size_t)BENCH_MSG * BENCH_DEPTH);
	if (n_regmr(&n, sc, buf, (size_t)BENCH_MSG * BENCH_DEPTH, NCCL_PTR_HOST, &mh)) {
		diag("bench sender: regMr failed");
		goto out;
	}
	if (read_full(self->rfd, &go, 1, scaled(30000))) {
		diag("bench sender: no start from the receiver");
		goto out;
	}
	bench_mark(2 * b->id + 2);
	end = bench_now_ms() + BENCH_LIMIT_MS;
	while (done < nmsg) {
		int progress = 0, d = 1;

		if (bench_now_ms() > end) {
			diag("bench sender: %llu of %llu messages done after %d s",
			     (unsigned long long)done, (unsigned long long)nmsg,
			     BENCH_LIMIT_MS / 1000);
			goto out;
		}
		while (posted < nmsg && posted - done < BENCH_DEPTH) {
			i = (int)(posted % BENCH_DEPTH);
			if (n_isend(&n, sc, buf + (size_t)i * BENCH_MSG, BENCH_MSG, 7, mh, &req[i])) {
				diag("bench sender: isend #%llu failed", (unsigned long long)posted);
				goto out;
			}
			if (!req[i])
				break;
			posted++;
		}
		/* the oldest first, in order */
		while (done < posted && d) {
			int size = 0;

			i = (int)(done % BENCH_DEPTH);
			d = 0;
			if (n_test(&n, req[i], &d, &size)) {
				diag("bench sender: test failed");
				goto out;
			}
			if (d) {
				req[i] = NULL;
				done++;
				progress = 1;
			}
		}
		if (!progress)
			bench_nap(1);
	}
	bench_mark(2 * b->id + 3);
	rc = 0;
out:
	if (mh)
		n_deregmr(&n, sc, mh);
	n_close_send(&n, sc);
	net_down(&n);
	free(buf);
	return rc;
}

/* What NCCL's UNPACK kernel takes for the next receive, minus the gather:
 * the bytes its metas cover, or -1. */
static long long bench_unpack_take(struct unpack_handle *uh)
{
	struct unpack_meta *m = uh->meta;
	unsigned slot;
	uint64_t cnt, i;
	long long sum = 0;

	uh->head++;
	slot = (unsigned)(uh->head % UNPACK_DEPTH);
	cnt = __atomic_load_n(&m->cnt[slot], __ATOMIC_ACQUIRE);
	if (cnt > UNPACK_METAS)
		FAIL("UNPACK slot %u has %llu metas", slot, (unsigned long long)cnt);
	for (i = 0; i < cnt; i++)
		sum += (long long)m->mem[slot][i].len;
	return sum;
}

/* The receiving loop: 0 when all nmsg came and were consumed. */
static int bench_receive(struct net *n, void *rc_, struct unpack_handle *uh, uint8_t *slab,
			 void *mh, uint64_t nmsg, uint64_t *region, uint64_t *naps)
{
	void *req[BENCH_DEPTH] = { NULL };
	int ready[BENCH_DEPTH] = { 0 };
	uint64_t posted = 0, done = 0, head = 0, tail = 0, end = bench_now_ms() + BENCH_LIMIT_MS;
	long long got;

	while (done < nmsg) {
		int progress = 0;
		uint64_t i;

		if (bench_now_ms() > end)
			FAIL("bench: %llu of %llu messages after %d s", (unsigned long long)done,
			     (unsigned long long)nmsg, BENCH_LIMIT_MS / 1000);
		while (posted < nmsg && head - tail < BENCH_DEPTH) {
			unsigned k = (unsigned)(head % BENCH_DEPTH);
			void *data = slab + (size_t)k * BENCH_MSG, *q = NULL;
			size_t size = BENCH_MSG;
			int tag = 7;

			if (n_irecv(n, rc_, 1, &data, &size, &tag, &mh, &q))
				FAIL("bench: irecv #%llu failed", (unsigned long long)posted);
			if (!q)
				break;
			req[k] = q;
			ready[k] = 0;
			head++;
			posted++;
		}
		/* the oldest not yet done first, in order */
		for (i = tail; i < head; i++) {
			unsigned k = (unsigned)(i % BENCH_DEPTH);
			int dn = 0, size = -1;

			if (ready[k])
				continue;
			if (n_test(n, req[k], &dn, &size))
				FAIL("bench: test failed");
			if (dn && size != (int)BENCH_MSG)
				FAIL("bench: a receive of %d bytes, %u sent", size, BENCH_MSG);
			ready[k] = dn;
			if (!dn)
				break;
		}
		/* in posting order, as NCCL's kernel and proxy */
		while (tail < head && ready[tail % BENCH_DEPTH]) {
			unsigned k = (unsigned)(tail % BENCH_DEPTH);

			if (uh) {
				got = bench_unpack_take(uh);
				if (got < 0)
					return -1;
				*region += (uint64_t)got;
			}
			if (n->v8->irecvConsumed(rc_, 1, req[k]))
				FAIL("bench: irecvConsumed failed");
			req[k] = NULL;
			tail++;
			done++;
			progress = 1;
		}
		if (!progress) {
			bench_nap(0);
			(*naps)++;
		}
	}
	return 0;
}

/* The executable mappings ("map: " and the line of /proc/self/maps), so that
 * mk/bench-profile.py can name the user-space functions of a profile. */
static void bench_print_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 256];	/* PATH_MAX and the fields before it */

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " r-xp ") && strchr(line, '/'))
			printf("map: %s", line);
	fclose(f);
}

static int bench_main(int argc, char **argv)
{
	const char *mode = argc > 0 ? argv[0] : "", *mib = argc > 1 ? argv[1] : "0";
	const char *id = argc > 2 ? argv[2] : NULL;
	struct bench b = { .id = -1 };
	unsigned long long t0[8] = { 0 }, t1[8] = { 0 }, d[8];
	uint64_t nmsg, ns0 = 0, ns1 = 0, th0 = 0, th1 = 0, region = 0, naps = 0;
	void *lc = NULL, *rc_ = NULL, *mh = NULL;
	struct unpack_handle *uh = NULL;
	double hz = (double)sysconf(_SC_CLK_TCK), secs;
	long long dmabuf, host, nsocks, nthreads;
	struct peer peer;
	struct net n;
	uint8_t *slab = NULL;
	char *endp = NULL;
	long mibs = strtol(mib, &endp, 10);
	int i, rc = -1;

	if (id)
		b.id = strtol(id, &endp, 10);
	if ((strcmp(mode, "unpack") && strcmp(mode, "copy")) || mibs < 1 || mibs > 65536 ||
	    argc > 3 || (id && (!*id || *endp || b.id < 0 || b.id > 8000))) {
		printf("usage: [HARNESS_WIRE=...] nccl_harness [LIB] --bench unpack|copy MIB [ID]\n");
		return 2;
	}
	b.unpack = !strcmp(mode, "unpack");
	b.bytes = (uint64_t)mibs << 20;
	b.cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	nmsg = b.bytes / BENCH_MSG;
	if (b.unpack)
		unpack_env_set();
	if (bench_pin(&b, 1) || bench_markers_map(b.id) ||
	    recv_side_up(&peer, bench_sender, &b, &n, 11, &lc, &rc_))
		return 1;
	if (b.unpack) {
		ncclNetDeviceHandle_v8_t *dh = devh_of(rc_);

		uh = dh ? dh->handle : NULL;
		if (!uh || !uh->meta) {
			diag("bench: no UNPACK device handle (is the plugin in UNPACK mode?)");
			goto out;
		}
	}
	slab = xmalloc((size_t)BENCH_MSG * BENCH_DEPTH);
	if (n_regmr(&n, rc_, slab, (size_t)BENCH_MSG * BENCH_DEPTH, NCCL_PTR_HOST, &mh)) {
		diag("bench: regMr failed");
		goto out;
	}
	if (bench_cpu_ticks(b.cpus < 2 ? 0 : 1, t0))
		goto out;
	ns0 = bench_ns(CLOCK_MONOTONIC);
	th0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	bench_mark(2 * b.id);
	write_full(peer.wfd, "g", 1);
	if (bench_receive(&n, rc_, uh, slab, mh, nmsg, &region, &naps))
		goto out;
	ns1 = bench_ns(CLOCK_MONOTONIC);
	th1 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	bench_mark(2 * b.id + 1);
	if (bench_cpu_ticks(b.cpus < 2 ? 0 : 1, t1))
		goto out;
	rc = 0;
out:
	/* the comms first: on a failure the sender's requests fail at once */
	if (mh)
		n_deregmr(&n, rc_, mh);
	n_close_recv(&n, rc_);
	n_close_listen(&n, lc);
	if (peer_wait(&peer, 60000))
		rc = -1;
	net_down(&n);
	free(slab);
	if (rc) {
		diag("bench: failed");
		return 1;
	}
	dmabuf = logged_number(" bytes received into the dma-buf");
	host = logged_number(" in host memory");
	nsocks = logged_number(" data sockets");
	nthreads = logged_number(" threads, ");
	if (wire.on && (dmabuf < 0 || (uint64_t)dmabuf * 10 < b.bytes * 9 ||
			(b.unpack && region * 10 < b.bytes * 9))) {
		diag("bench: %lld of %llu bytes through the dma-buf, %llu through UNPACK metas: "
		     "not devmem RX (a fallback), not measured", dmabuf,
		     (unsigned long long)b.bytes, (unsigned long long)region);
		return 1;
	}
	for (i = 0; i < 8; i++)
		d[i] = t1[i] - t0[i];
	secs = (double)(ns1 - ns0) / 1e9;
	printf("role: rx\nmode: nccl-%s\nconnections: 1\ndata_sockets: %lld\n", mode, nsocks);
	printf("progress_threads: %lld\n", nthreads);
	printf("msg_size: %u\ndepth: %d\n", BENCH_MSG, BENCH_DEPTH);
	printf("bytes: %llu\n", (unsigned long long)b.bytes);
	printf("throughput_mbps: %.2f\n", (double)b.bytes * 8 / secs / 1e6);
	/* copy delivery copies every byte once (the plugin from the dma-buf,
	 * the kernel what came in host memory); UNPACK only the latter */
	printf("bytes_copied: %llu\n", b.unpack ? (unsigned long long)(host > 0 ? host : 0) :
	       (unsigned long long)b.bytes);
	printf("copy_per_byte: %.4f\n", b.unpack ? (double)(host > 0 ? host : 0) / (double)b.bytes :
	       1.0);
	printf("bytes_in_region_metas: %llu\n", (unsigned long long)region);
	printf("plugin_dmabuf_bytes: %lld\nplugin_host_bytes: %lld\n", dmabuf, host);
	printf("driver_naps: %llu\ndriver_cpu_s: %.3f\n", (unsigned long long)naps,
	       (double)(th1 - th0) / 1e9);
	printf("cpu: %d\nclk_tck: %.0f\nseconds: %.6f\n", b.cpus < 2 ? 0 : 1, hz, secs);
	printf("cpu_user_s: %.3f\n", (double)(d[0] + d[1]) / hz);
	printf("cpu_system_s: %.3f\n", (double)d[2] / hz);
	printf("cpu_irq_s: %.3f\n", (double)d[5] / hz);
	printf("cpu_softirq_s: %.3f\n", (double)d[6] / hz);
	printf("cpu_kernel_s: %.3f\n", (double)(d[2] + d[5] + d[6] + d[7]) / hz);
	printf("cpu_idle_s: %.3f\n", (double)(d[3] + d[4]) / hz);
	if (b.id >= 0)
		printf("marker_begin: %ld\nmarker_end: %ld\n", 2 * b.id, 2 * b.id + 1);
	bench_print_maps();
	return 0;
}

static int wanted(const char *name, const char **only, int nonly)
{
	const char *skip = getenv("HARNESS_SKIP");
	int want = !nonly, j;

	/* the wire cases need HARNESS_WIRE, and with it only they run */
	if (!strncmp(name, "wire-", 5) != !!wire.on)
		return 0;

	for (j = 0; j < nonly; j++)
		if (strstr(name, only[j]))
			want = 1;
	while (want && skip && *skip) {
		size_t len = strcspn(skip, ",");

		if (len && memmem(name, strlen(name), skip, len))
			want = 0;
		skip += len + (skip[len] == ',');
	}
	return want;
}

int main(int argc, char **argv)
{
	const int ncases = (int)(sizeof(cases) / sizeof(cases[0]));
	const char *only[64];
	int nonly = 0, i, passed = 0, failed = 0, num = 0, nbench = 0;
	char **bench = NULL;
	const char *ts = getenv("HARNESS_TIME_SCALE");

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	plugin_path[0] = 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--bench")) {
			bench = argv + i + 1;	/* the rest is the bench's */
			nbench = argc - i - 1;
			break;
		}
		else if (strstr(argv[i], ".so"))
			snprintf(plugin_path, sizeof(plugin_path), "%s", argv[i]);
		else if (nonly < 64)
			only[nonly++] = argv[i];
	}
	if (!plugin_path[0]) {
		char self[4000];
		ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *slash;

		if (l < 0)
			l = 0;
		self[l] = 0;
		slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		snprintf(plugin_path, sizeof(plugin_path), "%s/libnccl-net-devmem.so",
			 slash ? self : ".");
	}
	if (ts && atof(ts) > 0)
		time_scale = atof(ts);
	if (getenv("HARNESS_WIRE")) {
		if (sscanf(getenv("HARNESS_WIRE"), "%63[^,],%15[^,],%63[^,],%15s", wire.srv_ns,
			   wire.srv_if, wire.cli_ns, wire.cli_if) != 4) {
			printf("HARNESS_WIRE=%s: not SRV_NS,SRV_IF,CLI_NS,CLI_IF\n",
			       getenv("HARNESS_WIRE"));
			return 2;
		}
		wire.on = 1;
	}
	/* All cases run over loopback. */
	setenv("NCCL_DEVMEM_IFNAME", "lo", 1);
	if (bench)
		return bench_main(nbench, bench);
	unsetenv("NCCL_DEVMEM_NSOCKS");
	unsetenv("NCCL_DEVMEM_NTHREADS");
	/* HARNESS_NTHREADS: NCCL_DEVMEM_NTHREADS for the cases that do not
	 * set their own (make check runs them all again with 0) */
	if (getenv("HARNESS_NTHREADS") && *getenv("HARNESS_NTHREADS"))
		setenv("NCCL_DEVMEM_NTHREADS", getenv("HARNESS_NTHREADS"), 1);
	for (i = 0; i < ncases; i++)
		num += wanted(cases[i].name, only, nonly);
	printf("TAP version 13\n1..%d\n# plugin %s\n", num, plugin_path);
	num = 0;
	for (i = 0; i < ncases; i++) {
		if (!wanted(cases[i].name, only, nonly))
			continue;
		if (run_case(++num, &cases[i]))
			passed++;
		else
			failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
