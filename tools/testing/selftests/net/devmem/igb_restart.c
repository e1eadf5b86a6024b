// SPDX-License-Identifier: GPL-2.0
/*
 * igb RX queue restarts, and the counters of a header split queue.
 *
 * - bind-rx and unbind, 20 times each, on a queue that a TCP stream from
 *   the peer keeps busy: after every restart the queue's packet count
 *   (qstats rx-packets), its vector's interrupt count (/proc/interrupts)
 *   and the bytes the reader gets all go on rising. A restart that loses
 *   the vector's interrupt (the ring made live before NAPI is enabled, the
 *   vector never re-armed) stalls them where the NIC auto-masks vectors
 *   (EIAM) until a reset. QEMU's igb does not auto-mask: there the queue
 *   recovers with the next frame or the watchdog's interrupt, and only a
 *   stall of the whole wait fails this test.
 * - A queue that does not stop (fail_igb_queue_stop in debugfs: RXDCTL's
 *   enable bit read as never clearing): bind-rx fails with -ETIMEDOUT and
 *   says why, nothing of the running ring is freed and the queue goes on
 *   receiving, every byte intact, then restarts normally. An unbind whose
 *   restart cannot stop the queue, or a failed bind whose rollback cannot,
 *   leaves the queue on the dma-buf's page pool: the binding then stays,
 *   named by the queue, until it is tried again a second later and the
 *   queue leaves; never a live page pool of a dma-buf no queue names.
 * - qstats: a page pool that runs dry counts once in rx-alloc-fail, the
 *   same as ethtool's rx_queue_N_alloc_failed (pp_alloc_fail being a part
 *   of it); frames the header split path drops (here: headers longer than
 *   the header buffer, IPv6 with 304 bytes of destination options) count
 *   in rx_queue_N_hds_drops and not in rx-hw-drops, which stays the
 *   device's own drop count (rx_queue_N_drops).
 *
 * Run by igb_restart.sh in the server namespace of topology.sh: SRV_IF
 * names the server NIC, CLI_NS and CLI_IF the client's. The last RX queue
 * is the one restarted; RSS sends everything to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* The harness' own SIGALRM handler has an unused parameter (-Wextra). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../kselftest_harness.h"
#pragma GCC diagnostic pop
#include "devmem_lib.h"

#define EXTACK_LEN	256
#define PORT		5321
#define DMABUF_SIZE	(4UL << 20)
#define PATTERN_MOD	251
#define CHUNK		(64 << 10)
#define IOV_LEN		(256 << 10)
#define CMSG_BUF_LEN	(CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 1024)
#define RESTARTS	20
/* seconds a queue may take to show progress (times DEVMEM_TIME_SCALE) */
#define PROGRESS_WAIT	20
/* longer than igb's watchdog period (2 s), which refills an empty ring
 * and reads the device's drop counters
 */
#define SETTLE_SEC	3
#define TEST_TIMEOUT	900

#define FAULT_DIR	"/sys/kernel/debug/fail_igb_queue_stop"
#define STOP_EXTACK	"The RX queue did not stop; it runs on its old memory"

/* --- small helpers ------------------------------------------------------ */

static int write_file(const char *path, const char *val)
{
	int fd, ret = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The number in file @path, or -1. */
static long long read_number(const char *path)
{
	long long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* ethtool -S counter @name of @ifname, or -1. */
static long long ethtool_stat(const char *ifname, const char *name)
{
	char cmd[128], line[256], key[128];
	long long v, found = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ethtool -S %s", ifname);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %127[^:]: %lld", key, &v) == 2 &&
		    !strcmp(key, name))
			found = v;
	pclose(f);
	return found;
}

/* Per-queue ethtool -S counter rx_queue_@q_@what. */
static long long rxq_stat(const char *ifname, unsigned int q,
			  const char *what)
{
	char name[64];

	snprintf(name, sizeof(name), "rx_queue_%u_%s", q, what);
	return ethtool_stat(ifname, name);
}

/* Interrupts of the vector that serves RX queue @q of @ifname (named
 * IF-rx-Q, or IF-TxRx-Q when it serves a TX ring too), all CPUs; -1 if
 * there is no such vector.
 */
static long long irq_count(const char *ifname, unsigned int q)
{
	char rx[IFNAMSIZ + 16], txrx[IFNAMSIZ + 16];
	long long total = -1;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;

	snprintf(rx, sizeof(rx), "%s-rx-%u", ifname, q);
	snprintf(txrx, sizeof(txrx), "%s-TxRx-%u", ifname, q);
	f = fopen("/proc/interrupts", "r");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char *name, *p, *end;
		size_t len = strlen(line);

		while (len && (line[len - 1] == '\n' || line[len - 1] == ' '))
			line[--len] = '\0';
		name = strrchr(line, ' ');
		if (!name || (strcmp(name + 1, rx) && strcmp(name + 1, txrx)))
			continue;
		p = strchr(line, ':');
		if (!p)
			continue;
		total = 0;
		for (p++;; p = end) {
			unsigned long long n = strtoull(p, &end, 10);

			if (end == p)
				break;
			total += n;
		}
		break;
	}
	free(line);
	fclose(f);
	return total;
}

/* Binding id of RX queue @q (0 when not bound), or -errno. */
static int rxq_binding(struct nl_ctx *nl, int ifindex, unsigned int q)
{
	struct devmem_queue_info info;
	int err;

	err = devmem_queue_get(nl, ifindex, NETDEV_QUEUE_TYPE_RX, q, &info);
	if (err)
		return err;
	return info.has_dmabuf ? (int)info.dmabuf : 0;
}

/* qstats of one RX queue; a counter the driver does not give is ~0. */
struct rxq_qstats {
	unsigned int q;
	bool found;
	__u64 packets;
	__u64 alloc_fail;
	__u64 hw_drops;
};

static __u64 qstat_get(const struct nlattr *a)
{
	__u64 v;

	return nl_attr_get_uint(a, &v) ? ~0ULL : v;
}

static int qstats_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[NETDEV_A_QSTATS_MAX + 1];
	struct rxq_qstats *s = arg;
	__u32 type, id;
	const void *attrs;
	size_t len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, NETDEV_A_QSTATS_MAX, attrs, len);
	if (nl_attr_get_u32(tb[NETDEV_A_QSTATS_QUEUE_TYPE], &type) ||
	    nl_attr_get_u32(tb[NETDEV_A_QSTATS_QUEUE_ID], &id) ||
	    type != NETDEV_QUEUE_TYPE_RX || id != s->q)
		return 0;
	s->found = true;
	s->packets = qstat_get(tb[NETDEV_A_QSTATS_RX_PACKETS]);
	s->alloc_fail = qstat_get(tb[NETDEV_A_QSTATS_RX_ALLOC_FAIL]);
	s->hw_drops = qstat_get(tb[NETDEV_A_QSTATS_RX_HW_DROPS]);
	return 0;
}

/* qstats-get, scope queue, of RX queue @q of @ifindex. */
static int rxq_qstats(struct nl_ctx *nl, int ifindex, unsigned int q,
		      struct rxq_qstats *s)
{
	struct nl_msg m;
	int err;

	memset(s, 0, sizeof(*s));
	s->q = q;
	nl_msg_init_family(&m, nl, NETDEV_CMD_QSTATS_GET, NLM_F_DUMP);
	nl_put_u32(&m, NETDEV_A_QSTATS_IFINDEX, ifindex);
	nl_put_u32(&m, NETDEV_A_QSTATS_SCOPE, NETDEV_QSTATS_SCOPE_QUEUE);
	err = nl_request(nl, &m, qstats_cb, s, NULL, 0);
	if (!err && !s->found)
		err = -ENOENT;
	return err;
}

/* Page pools of @ifindex, not yet destroyed, that take buffers from
 * binding @dmabuf.
 */
struct pool_count {
	int ifindex;
	__u32 dmabuf;
	int live;
};

static int count_pool(const struct devmem_pool_info *p, void *arg)
{
	struct pool_count *c = arg;

	if (p->has_ifindex && (int)p->ifindex == c->ifindex &&
	    p->dmabuf == c->dmabuf && !p->detached)
		c->live++;
	return 0;
}

static int live_pools(struct nl_ctx *nl, int ifindex, __u32 dmabuf)
{
	struct pool_count c = { .ifindex = ifindex, .dmabuf = dmabuf };
	int err;

	err = devmem_page_pool_dump(nl, count_pool, &c);
	return err ? err : c.live;
}

/* Live page pools of @ifindex taking buffers from a dma-buf that no RX
 * queue names (queue-get's dmabuf): the NIC writing into a dma-buf whose
 * binding is gone. Their count, or -errno.
 */
struct orphan_count {
	struct nl_ctx *nl;
	int ifindex;
	int nqueues;
	int orphans;
};

static int count_orphan(const struct devmem_pool_info *p, void *arg)
{
	struct orphan_count *c = arg;
	int q;

	if (!p->has_ifindex || (int)p->ifindex != c->ifindex ||
	    !p->dmabuf || p->detached)
		return 0;
	for (q = 0; q < c->nqueues; q++)
		if (rxq_binding(c->nl, c->ifindex, q) == (int)p->dmabuf)
			return 0;
	c->orphans++;
	return 0;
}

static int orphan_pools(struct nl_ctx *nl, int ifindex, int nqueues)
{
	struct orphan_count c = {
		.nl = nl, .ifindex = ifindex, .nqueues = nqueues,
	};
	struct nl_ctx dump;
	int err;

	/* the dump's own socket: the callback asks on @nl meanwhile */
	err = devmem_nl_open(&dump);
	if (err)
		return err;
	err = devmem_page_pool_dump(&dump, count_orphan, &c);
	nl_close(&dump);
	return err ? err : c.orphans;
}

/* --- fault injection ---------------------------------------------------- */

/* Does debugfs show the kernel's own fault injection knobs? */
static bool fault_debugfs(void)
{
	return !access("/sys/kernel/debug/failslab", F_OK) ||
	       !access("/sys/kernel/debug/fail_page_alloc", F_OK);
}

/* 1 when igb's fail_igb_queue_stop is there, 0 when the kernel has no
 * fault injection in debugfs, -1 when it has but igb does not offer it.
 * ip netns exec mounts a sysfs of its own, without debugfs on it.
 */
static int fault_available(void)
{
	if (access(FAULT_DIR, F_OK) && !fault_debugfs())
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (!access(FAULT_DIR "/probability", W_OK))
		return 1;
	return fault_debugfs() ? -1 : 0;
}

/* After @skip queue stops that work, the next @times fail, whoever asks
 * (should_fail() lets calls through while "space" is larger than their
 * size, 1, taking 1 off it each time).
 */
static int fault_arm_after(int skip, int times)
{
	char buf[16], space[16];

	snprintf(buf, sizeof(buf), "%d", times);
	snprintf(space, sizeof(space), "%d", skip ? skip + 1 : 0);
	if (write_file(FAULT_DIR "/verbose", "1") ||
	    write_file(FAULT_DIR "/interval", "1") ||
	    write_file(FAULT_DIR "/space", space) ||
	    write_file(FAULT_DIR "/times", buf))
		return -1;
	return write_file(FAULT_DIR "/probability", "100");
}

/* The next @times queue stops fail, whoever asks. */
static int fault_arm(int times)
{
	return fault_arm_after(0, times);
}

static void fault_disarm(void)
{
	write_file(FAULT_DIR "/probability", "0");
}

/* --- the stream: the client sends a pattern, a thread here reads it ----- */

static unsigned char pattern_at(unsigned long long pos)
{
	return pos % PATTERN_MOD;
}

static int join_netns(const char *name)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ret = setns(fd, CLONE_NEWNET);
	close(fd);
	return ret;
}

static const char *cli_ns(void)
{
	const char *ns = getenv("CLI_NS");

	return ns ? ns : "devmem-cli";
}

/* Child process, in the client namespace: the pattern, until killed or
 * the connection ends.
 */
static void client_run(void)
{
	struct sockaddr_in6 s6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(PORT),
	};
	unsigned long long pos = 0;
	unsigned char *buf;
	int fd = -1, i;

	/* the dma-bufs and netlink sockets stay the server's alone */
	close_range(3, ~0U, 0);
	buf = malloc(CHUNK + PATTERN_MOD);
	if (!buf || join_netns(cli_ns()))
		_exit(2);
	for (i = 0; i < CHUNK + PATTERN_MOD; i++)
		buf[i] = pattern_at(i);
	inet_pton(AF_INET6, "2001:db8::1", &s6.sin6_addr);
	for (i = 0; i < 200; i++) {
		fd = socket(AF_INET6, SOCK_STREAM, 0);
		if (fd < 0)
			_exit(3);
		if (!connect(fd, (void *)&s6, sizeof(s6)))
			break;
		close(fd);
		fd = -1;
		usleep(50000);
	}
	if (fd < 0)
		_exit(3);
	for (;;) {
		ssize_t w = send(fd, buf + pos % PATTERN_MOD, CHUNK,
				 MSG_NOSIGNAL);

		if (w <= 0)
			_exit(0);
		pos += w;
	}
}

/* What the reader thread saw; the counters are read by the test. */
struct reader {
	int fd;
	atomic_bool stop;
	atomic_bool hold;		/* keep the tokens, do not give back */
	atomic_ullong bytes;		/* stream bytes received */
	atomic_ullong dmabuf_bytes;	/* of which in a dma-buf */
	atomic_ullong bad;		/* host memory bytes off the pattern */
	atomic_ullong held;		/* tokens kept */
	atomic_int err;			/* what ended the reading, -errno */
	/* the reader thread's own */
	__u32 *tokens;
	size_t ntokens, cap;
	unsigned long long pos;
};

static int reader_give_back(struct reader *rd)
{
	struct dmabuf_token r[128];
	size_t done = 0, used;
	int n;

	while (done < rd->ntokens) {
		n = devmem_tokens_pack(rd->tokens + done, rd->ntokens - done,
				       r, 128, 1024, &used);
		if (n <= 0 || !used)
			return -EPROTO;
		if (setsockopt(rd->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, r,
			       n * sizeof(r[0])) < 0)
			return -errno;
		done += used;
	}
	rd->ntokens = 0;
	atomic_store(&rd->held, 0);
	return 0;
}

static int reader_keep(struct reader *rd, __u32 token)
{
	if (rd->ntokens == rd->cap) {
		size_t cap = rd->cap ? rd->cap * 2 : 4096;
		__u32 *t = realloc(rd->tokens, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		rd->tokens = t;
		rd->cap = cap;
	}
	rd->tokens[rd->ntokens++] = token;
	atomic_store(&rd->held, rd->ntokens);
	return 0;
}

static void reader_check(struct reader *rd, const unsigned char *p, size_t n)
{
	unsigned long long bad = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pattern_at(rd->pos + i))
			bad++;
	rd->pos += n;
	if (bad)
		atomic_fetch_add(&rd->bad, bad);
}

/* The control messages of a receive of @ret bytes, in stream order. */
static int reader_walk(struct reader *rd, struct msghdr *msg, ssize_t ret,
		       const unsigned char *buf)
{
	const unsigned char *lin = buf;
	struct dmabuf_cmsg dc;
	struct cmsghdr *cm;
	size_t seen = 0;

	if (msg->msg_flags & MSG_CTRUNC)
		return -EMSGSIZE;
	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    (cm->cmsg_type != SCM_DEVMEM_LINEAR &&
		     cm->cmsg_type != SCM_DEVMEM_DMABUF))
			continue;
		if (devmem_cmsg_get(cm, &dc))
			return -EPROTO;
		if (cm->cmsg_type == SCM_DEVMEM_LINEAR) {
			reader_check(rd, lin, dc.frag_size);
			lin += dc.frag_size;
		} else {
			rd->pos += dc.frag_size;
			atomic_fetch_add(&rd->dmabuf_bytes, dc.frag_size);
			if (reader_keep(rd, dc.frag_token))
				return -ENOMEM;
		}
		seen += dc.frag_size;
	}
	if (!seen)
		reader_check(rd, buf, ret);	/* a readable skb */
	else if (seen != (size_t)ret)
		return -EPROTO;
	atomic_fetch_add(&rd->bytes, ret);
	return 0;
}

static void *reader_run(void *arg)
{
	struct reader *rd = arg;
	unsigned char *buf = malloc(IOV_LEN);
	char *ctrl = malloc(CMSG_BUF_LEN);
	int err = 0;

	if (!buf || !ctrl)
		err = -ENOMEM;
	while (!err && !atomic_load(&rd->stop)) {
		struct iovec iov = { .iov_base = buf, .iov_len = IOV_LEN };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl, .msg_controllen = CMSG_BUF_LEN,
		};
		ssize_t ret;

		if (!atomic_load(&rd->hold) && rd->ntokens) {
			err = reader_give_back(rd);
			if (err)
				break;
		}
		ret = recvmsg(rd->fd, &msg, MSG_SOCK_DEVMEM);
		if (ret < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (!ret)
			break;		/* the client is gone */
		err = ret < 0 ? -errno : reader_walk(rd, &msg, ret, buf);
	}
	if (rd->ntokens && !err)
		err = reader_give_back(rd);
	atomic_store(&rd->err, err);
	free(buf);
	free(ctrl);
	return NULL;
}

/* --- the fixture --------------------------------------------------------- */

FIXTURE(igb_restart) {
	char ifname[IFNAMSIZ];
	int ifindex;
	unsigned int q;		/* the queue restarted: the last one */
	int dmabuf;
	struct nl_ctx nl;	/* queries only */
	struct nl_ctx bnl;	/* binds: closing it unbinds */
	int lfd;
	pid_t client;
	bool reading;
	pthread_t reader_thread;
	struct reader rd;
	char extack[EXTACK_LEN];
};

#define igb_restart_data FIXTURE_DATA(igb_restart)

static int listen_on(void)
{
	struct sockaddr_in6 s6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(PORT),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int fd, one = 1;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (void *)&s6, sizeof(s6)) || listen(fd, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* RSS: every bucket to queue @q of @ifname. */
static int rss_to_queue(const char *ifname, unsigned int q)
{
	char cmd[256];
	int n;

	n = snprintf(cmd, sizeof(cmd), "ethtool -X %s weight", ifname);
	while (q--)
		n += snprintf(cmd + n, sizeof(cmd) - n, " 0");
	snprintf(cmd + n, sizeof(cmd) - n, " 1");
	return system(cmd);
}

/* Starts the client, accepts its connection and reads it in a thread. */
static int stream_start(igb_restart_data *self, bool hold)
{
	struct timeval tv = { .tv_usec = 200000 };
	struct pollfd pfd = { .fd = self->lfd, .events = POLLIN };
	int fd;

	self->client = fork();
	if (self->client < 0)
		return -errno;
	if (!self->client)
		client_run();
	if (poll(&pfd, 1, 60000 * devmem_time_scale()) != 1)
		return -ETIMEDOUT;
	fd = accept4(self->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&self->rd, 0, sizeof(self->rd));
	self->rd.fd = fd;
	atomic_store(&self->rd.hold, hold);
	if (pthread_create(&self->reader_thread, NULL, reader_run, &self->rd)) {
		close(fd);
		return -EAGAIN;
	}
	self->reading = true;
	return 0;
}

/* Ends the stream; the reader's error, 0 if none. */
static int stream_stop(igb_restart_data *self)
{
	int status, err = 0;

	if (self->client > 0) {
		kill(self->client, SIGKILL);
		waitpid(self->client, &status, 0);
		self->client = 0;
	}
	if (self->reading) {
		atomic_store(&self->rd.stop, true);
		pthread_join(self->reader_thread, NULL);
		self->reading = false;
		close(self->rd.fd);
		free(self->rd.tokens);
		self->rd.tokens = NULL;
		err = atomic_load(&self->rd.err);
	}
	return err;
}

/* What shows that RX queue q works. */
struct progress {
	__u64 packets;		/* qstats rx-packets */
	long long irqs;		/* interrupts of its vector */
	unsigned long long bytes;	/* stream bytes the reader got */
};

static int progress_read(igb_restart_data *self, struct progress *p)
{
	struct rxq_qstats s;
	int err;

	err = rxq_qstats(&self->nl, self->ifindex, self->q, &s);
	if (err)
		return err;
	p->packets = s.packets;
	p->irqs = irq_count(self->ifname, self->q);
	p->bytes = atomic_load(&self->rd.bytes);
	return 0;
}

/* Waits until all three grew past @p, then puts the new values in @p:
 * 0, or -ETIMEDOUT with what was last seen in @now.
 */
static int wait_progress(igb_restart_data *self, struct progress *p,
			 struct progress *now)
{
	double end = devmem_now_sec() + PROGRESS_WAIT * devmem_time_scale();

	do {
		if (progress_read(self, now))
			return -EIO;
		if (now->packets > p->packets && now->irqs > p->irqs &&
		    now->bytes > p->bytes) {
			*p = *now;
			return 0;
		}
		usleep(100000);
	} while (devmem_now_sec() < end);
	return -ETIMEDOUT;
}

/* How the counters moved, for a failure message. */
static const char *moved(const struct progress *p, const struct progress *now,
			 char *buf, size_t len)
{
	snprintf(buf, len,
		 "packets %llu -> %llu, interrupts %lld -> %lld, bytes %llu -> %llu",
		 (unsigned long long)p->packets,
		 (unsigned long long)now->packets, p->irqs, now->irqs,
		 p->bytes, now->bytes);
	return buf;
}

/* Waits (10 s at most) for RX queue q to show no binding. */
static int wait_unbound(igb_restart_data *self)
{
	int i, id = -1;

	for (i = 0; i < 100 * (int)devmem_time_scale(); i++) {
		id = rxq_binding(&self->nl, self->ifindex, self->q);
		if (id <= 0)
			break;
		usleep(100000);
	}
	return id;
}

FIXTURE_SETUP(igb_restart)
{
	const char *ifname = getenv("SRV_IF");
	int n;

	self->dmabuf = -1;
	self->lfd = -1;
	self->bnl.fd = -1;
	ASSERT_NE(NULL, ifname) TH_LOG("SRV_IF not set: run igb_restart.sh");
	snprintf(self->ifname, sizeof(self->ifname), "%s", ifname);
	self->ifindex = devmem_ifindex(ifname);
	ASSERT_LT(0, self->ifindex);
	n = devmem_rx_queue_count(ifname);
	/* the harness runs each test in a child: 255 reports a skip */
	if (n < 2)
		SKIP(_exit(255), "one RX queue: nothing to steer away from");
	self->q = n - 1;
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	ASSERT_EQ(0, ethtool_rings_for_devmem(self->ifindex, self->extack,
					      EXTACK_LEN))
		TH_LOG("tcp-data-split on, hds-thresh 0: %s", self->extack);
	ASSERT_EQ(0, rss_to_queue(ifname, self->q));
	self->dmabuf = udmabuf_create(DMABUF_SIZE, NULL);
	ASSERT_LE(0, self->dmabuf);
	self->lfd = listen_on();
	ASSERT_LE(0, self->lfd);
	if (fault_available() > 0)
		fault_disarm();
}

FIXTURE_TEARDOWN(igb_restart)
{
	char cmd[128];

	if (fault_available() > 0)
		fault_disarm();
	stream_stop(self);
	nl_close(&self->bnl);
	if (self->lfd >= 0)
		close(self->lfd);
	if (self->dmabuf >= 0)
		close(self->dmabuf);
	snprintf(cmd, sizeof(cmd), "ethtool -X %s default", self->ifname);
	system(cmd);
	/* rebuilds the rings: also takes a queue off a dma-buf it kept */
	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
	nl_close(&self->nl);
}

/* --- restarts under traffic ---------------------------------------------- */

TEST_F_TIMEOUT(igb_restart, bind_unbind_under_stream, TEST_TIMEOUT)
{
	long long frames = rxq_stat(self->ifname, self->q, "devmem_frames");
	struct progress p = {}, now;
	char msg[160];
	int i;

	ASSERT_LE(0, irq_count(self->ifname, self->q))
		TH_LOG("no interrupt named %s-rx-%u or %s-TxRx-%u",
		       self->ifname, self->q, self->ifname, self->q);
	ASSERT_EQ(0, stream_start(self, false));
	ASSERT_EQ(0, progress_read(self, &p));
	ASSERT_EQ(0, wait_progress(self, &p, &now))
		TH_LOG("the stream did not start on queue %u", self->q);

	for (i = 0; i < RESTARTS; i++) {
		ASSERT_EQ(0, devmem_nl_open(&self->bnl));
		ASSERT_EQ(0, devmem_bind_rx(&self->bnl, self->ifindex,
					    self->dmabuf, &self->q, 1, NULL,
					    self->extack, EXTACK_LEN))
			TH_LOG("bind %d: %s", i, self->extack);
		ASSERT_EQ(0, wait_progress(self, &p, &now))
			TH_LOG("bind %d: queue %u stalled: %s", i, self->q,
			       moved(&p, &now, msg, sizeof(msg)));
		nl_close(&self->bnl);
		ASSERT_EQ(0, wait_unbound(self));
		ASSERT_EQ(0, wait_progress(self, &p, &now))
			TH_LOG("unbind %d: queue %u stalled: %s", i, self->q,
			       moved(&p, &now, msg, sizeof(msg)));
	}
	TH_LOG("%d binds and unbinds: %llu packets, %lld interrupts",
	       RESTARTS, (unsigned long long)p.packets, p.irqs);
	TH_LOG("%llu bytes read, %llu of them from dma-bufs", p.bytes,
	       atomic_load(&self->rd.dmabuf_bytes));
	/* the binds took: payload went into the dma-buf meanwhile */
	EXPECT_LT(frames, rxq_stat(self->ifname, self->q, "devmem_frames"));
	EXPECT_LT(0ULL, atomic_load(&self->rd.dmabuf_bytes));
	EXPECT_EQ(0, stream_stop(self));
	EXPECT_EQ(0ULL, atomic_load(&self->rd.bad));
}

/* --- a queue that does not stop ------------------------------------------ */

TEST_F_TIMEOUT(igb_restart, bind_fails_when_queue_does_not_stop,
	       TEST_TIMEOUT)
{
	struct progress p = {}, now;
	long long frames;
	int avail, i;
	char msg[160];
	__u32 id;

	avail = fault_available();
	if (!avail)
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	ASSERT_LT(0, avail) TH_LOG("fault injection, but no %s", FAULT_DIR);
	ASSERT_EQ(0, stream_start(self, false));
	ASSERT_EQ(0, progress_read(self, &p));
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	frames = rxq_stat(self->ifname, self->q, "devmem_frames");

	ASSERT_EQ(0, fault_arm(1));
	ASSERT_EQ(0, devmem_nl_open(&self->bnl));
	EXPECT_EQ(-ETIMEDOUT, devmem_bind_rx(&self->bnl, self->ifindex,
					     self->dmabuf, &self->q, 1, &id,
					     self->extack, EXTACK_LEN));
	EXPECT_STREQ(STOP_EXTACK, self->extack);
	/* the stop that failed was this one */
	EXPECT_EQ(0, read_number(FAULT_DIR "/times"));
	fault_disarm();
	EXPECT_EQ(0, rxq_binding(&self->nl, self->ifindex, self->q));

	/* the ring it ran on goes on, in host memory, every byte right */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, wait_progress(self, &p, &now))
			TH_LOG("queue %u stalled after the failed bind: %s",
			       self->q, moved(&p, &now, msg, sizeof(msg)));
	EXPECT_EQ(frames, rxq_stat(self->ifname, self->q, "devmem_frames"));
	EXPECT_EQ(0ULL, atomic_load(&self->rd.dmabuf_bytes));
	EXPECT_EQ(0ULL, atomic_load(&self->rd.bad));

	/* and it restarts as usual */
	ASSERT_EQ(0, devmem_bind_rx(&self->bnl, self->ifindex, self->dmabuf,
				    &self->q, 1, &id, self->extack,
				    EXTACK_LEN))
		TH_LOG("bind after the failed one: %s", self->extack);
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	EXPECT_LT(frames, rxq_stat(self->ifname, self->q, "devmem_frames"));
	nl_close(&self->bnl);
	ASSERT_EQ(0, wait_unbound(self));
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	EXPECT_EQ(0, stream_stop(self));
	EXPECT_EQ(0ULL, atomic_load(&self->rd.bad));
}

TEST_F_TIMEOUT(igb_restart, unbind_keeps_queue_that_does_not_stop,
	       TEST_TIMEOUT)
{
	unsigned long long dmabuf_bytes;
	struct progress p = {}, now;
	int avail, dmabuf2, i;
	long long frames;
	char msg[160];
	__u32 id, id2;

	avail = fault_available();
	if (!avail)
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	ASSERT_LT(0, avail) TH_LOG("fault injection, but no %s", FAULT_DIR);
	ASSERT_EQ(0, stream_start(self, false));
	ASSERT_EQ(0, progress_read(self, &p));
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	ASSERT_EQ(0, devmem_nl_open(&self->bnl));
	ASSERT_EQ(0, devmem_bind_rx(&self->bnl, self->ifindex, self->dmabuf,
				    &self->q, 1, &id, self->extack,
				    EXTACK_LEN))
		TH_LOG("bind: %s", self->extack);
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	ASSERT_EQ(1, live_pools(&self->nl, self->ifindex, id));

	/* The unbind's restart cannot stop the queue: the queue still runs
	 * on the dma-buf's page pool, frames go on landing in the dma-buf,
	 * so the binding stays, named by the queue, until it leaves.
	 */
	ASSERT_EQ(0, fault_arm(1));
	nl_close(&self->bnl);
	EXPECT_EQ(0, read_number(FAULT_DIR "/times"));
	fault_disarm();
	EXPECT_EQ((int)id, rxq_binding(&self->nl, self->ifindex, self->q));
	EXPECT_EQ(1, live_pools(&self->nl, self->ifindex, id));
	EXPECT_EQ(0, orphan_pools(&self->nl, self->ifindex, self->q + 1));
	frames = rxq_stat(self->ifname, self->q, "devmem_frames");
	dmabuf_bytes = atomic_load(&self->rd.dmabuf_bytes);
	ASSERT_EQ(0, wait_progress(self, &p, &now))
		TH_LOG("queue %u stalled after the failed unbind: %s",
		       self->q, moved(&p, &now, msg, sizeof(msg)));
	/* tried again a second later, the queue leaves, and with it the id */
	EXPECT_EQ(0, wait_unbound(self));
	EXPECT_EQ(0, orphan_pools(&self->nl, self->ifindex, self->q + 1));
	for (i = 0; i < 100 && live_pools(&self->nl, self->ifindex, id); i++)
		usleep(100000);
	EXPECT_EQ(0, live_pools(&self->nl, self->ifindex, id));
	EXPECT_LE(frames, rxq_stat(self->ifname, self->q, "devmem_frames"));
	EXPECT_LE(dmabuf_bytes, atomic_load(&self->rd.dmabuf_bytes));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, wait_progress(self, &p, &now))
			TH_LOG("queue %u stalled after it left: %s",
			       self->q, moved(&p, &now, msg, sizeof(msg)));

	/* a new binding works as usual, and its unbind takes the queue off */
	dmabuf2 = udmabuf_create(DMABUF_SIZE, NULL);
	ASSERT_LE(0, dmabuf2);
	ASSERT_EQ(0, devmem_nl_open(&self->bnl));
	ASSERT_EQ(0, devmem_bind_rx(&self->bnl, self->ifindex, dmabuf2,
				    &self->q, 1, &id2, self->extack,
				    EXTACK_LEN))
		TH_LOG("bind after the failed unbind: %s", self->extack);
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	EXPECT_EQ(1, live_pools(&self->nl, self->ifindex, id2));
	nl_close(&self->bnl);
	ASSERT_EQ(0, wait_unbound(self));
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	/* host memory again */
	frames = rxq_stat(self->ifname, self->q, "devmem_frames");
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	EXPECT_EQ(frames, rxq_stat(self->ifname, self->q, "devmem_frames"));
	EXPECT_EQ(0, stream_stop(self));
	EXPECT_EQ(0ULL, atomic_load(&self->rd.bad));
	close(dmabuf2);
}

/*
 * bind-rx of two queues where the second does not stop, and neither does
 * the first when the failed bind takes it back: that queue keeps writing
 * into the dma-buf, so the binding must stay, named by the queue, until a
 * later try takes the queue off; never a live page pool of a dma-buf that
 * no queue names.
 */
TEST_F_TIMEOUT(igb_restart, bind_rollback_keeps_binding_until_queue_leaves,
	       TEST_TIMEOUT)
{
	unsigned int qs[2] = { self->q - 1, self->q };
	struct progress p = {}, now;
	int avail, id, i;

	avail = fault_available();
	if (!avail)
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	ASSERT_LT(0, avail) TH_LOG("fault injection, but no %s", FAULT_DIR);
	ASSERT_EQ(0, stream_start(self, false));
	ASSERT_EQ(0, progress_read(self, &p));
	ASSERT_EQ(0, wait_progress(self, &p, &now));

	/* the first queue's stop works, the second's fails, and so does the
	 * first one's again when the bind is rolled back
	 */
	ASSERT_EQ(0, fault_arm_after(1, 2));
	ASSERT_EQ(0, devmem_nl_open(&self->bnl));
	EXPECT_EQ(-ETIMEDOUT, devmem_bind_rx(&self->bnl, self->ifindex,
					     self->dmabuf, qs, 2, NULL,
					     self->extack, EXTACK_LEN));
	EXPECT_EQ(0, read_number(FAULT_DIR "/times"));
	fault_disarm();
	id = rxq_binding(&self->nl, self->ifindex, qs[0]);
	EXPECT_LT(0, id) TH_LOG("queue %u runs on the dma-buf, but names no binding",
				qs[0]);
	EXPECT_EQ(0, rxq_binding(&self->nl, self->ifindex, qs[1]));
	EXPECT_EQ(0, orphan_pools(&self->nl, self->ifindex, self->q + 1));

	/* a second later it is tried again and leaves */
	for (i = 0; i < 100 * (int)devmem_time_scale(); i++) {
		if (!rxq_binding(&self->nl, self->ifindex, qs[0]))
			break;
		usleep(100000);
	}
	EXPECT_EQ(0, rxq_binding(&self->nl, self->ifindex, qs[0]));
	EXPECT_EQ(0, orphan_pools(&self->nl, self->ifindex, self->q + 1));
	if (id > 0)
		EXPECT_EQ(0, live_pools(&self->nl, self->ifindex, id));
	nl_close(&self->bnl);
	ASSERT_EQ(0, wait_progress(self, &p, &now));
	EXPECT_EQ(0, stream_stop(self));
	EXPECT_EQ(0ULL, atomic_load(&self->rd.bad));
}

/* --- qstats -------------------------------------------------------------- */

/* Current RX ring size of @ifname (ethtool -g), or -1. */
static int rx_ring_size(const char *ifname)
{
	char cmd[128];
	int size = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "ethtool -g %s | awk '/^Current/ {c = 1} c && /^RX:/ {print $2; exit}'",
		 ifname);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &size) != 1)
		size = -1;
	pclose(f);
	return size;
}

/* The allocation failure counters of queue q. */
struct alloc_counts {
	__u64 qstats;		/* rx-alloc-fail */
	long long alloc_failed;	/* ethtool rx_queue_N_alloc_failed */
	long long pp_alloc_fail;	/* ethtool rx_queue_N_pp_alloc_fail */
};

static int alloc_counts_read(igb_restart_data *self, struct alloc_counts *c)
{
	struct rxq_qstats s;
	int err;

	err = rxq_qstats(&self->nl, self->ifindex, self->q, &s);
	if (err)
		return err;
	c->qstats = s.alloc_fail;
	c->alloc_failed = rxq_stat(self->ifname, self->q, "alloc_failed");
	c->pp_alloc_fail = rxq_stat(self->ifname, self->q, "pp_alloc_fail");
	return c->alloc_failed < 0 || c->pp_alloc_fail < 0 ? -ENOENT : 0;
}

/* The counters once they no longer move (two reads SETTLE_SEC apart). */
static int alloc_counts_settled(igb_restart_data *self, struct alloc_counts *c)
{
	struct alloc_counts next;
	int i;

	if (alloc_counts_read(self, c))
		return -EIO;
	for (i = 0; i < 10; i++) {
		sleep(SETTLE_SEC * devmem_time_scale());
		if (alloc_counts_read(self, &next))
			return -EIO;
		if (!memcmp(&next, c, sizeof(next)))
			return 0;
		*c = next;
	}
	return -ETIMEDOUT;
}

/* A binding just the ring's size, and a reader that keeps its tokens:
 * the page pool runs dry. Each failure counts once in rx-alloc-fail, as
 * in rx_queue_N_alloc_failed (which pp_alloc_fail is a part of).
 */
TEST_F_TIMEOUT(igb_restart, alloc_fail_counted_once, TEST_TIMEOUT)
{
	struct alloc_counts before, after;
	struct progress p = {}, now;
	long long d_qstats, d_failed, d_pp;
	int ring, small, i;

	ring = rx_ring_size(self->ifname);
	ASSERT_LT(0, ring);
	small = udmabuf_create((size_t)ring * getpagesize(), NULL);
	ASSERT_LE(0, small);
	ASSERT_EQ(0, devmem_nl_open(&self->bnl));
	ASSERT_EQ(0, devmem_bind_rx(&self->bnl, self->ifindex, small,
				    &self->q, 1, NULL, self->extack,
				    EXTACK_LEN))
		TH_LOG("bind of %d pages: %s", ring, self->extack);
	ASSERT_EQ(0, alloc_counts_settled(self, &before));
	ASSERT_NE(~0ULL, before.qstats) TH_LOG("no rx-alloc-fail in qstats");

	ASSERT_EQ(0, stream_start(self, true));
	for (i = 0; i < 600; i++) {
		if (alloc_counts_read(self, &after))
			break;
		if (after.pp_alloc_fail > before.pp_alloc_fail)
			break;
		usleep(100000 * devmem_time_scale());
	}
	TH_LOG("%llu tokens held when the page pool ran dry",
	       atomic_load(&self->rd.held));
	/* give back, let the stream go on a while, then end it */
	atomic_store(&self->rd.hold, false);
	ASSERT_EQ(0, progress_read(self, &p));
	EXPECT_EQ(0, wait_progress(self, &p, &now));
	EXPECT_EQ(0, stream_stop(self));
	ASSERT_EQ(0, alloc_counts_settled(self, &after));
	nl_close(&self->bnl);
	close(small);

	d_qstats = after.qstats - before.qstats;
	d_failed = after.alloc_failed - before.alloc_failed;
	d_pp = after.pp_alloc_fail - before.pp_alloc_fail;
	TH_LOG("rx-alloc-fail +%lld, alloc_failed +%lld, pp_alloc_fail +%lld",
	       d_qstats, d_failed, d_pp);
	ASSERT_LT(0, d_pp) TH_LOG("the page pool never ran dry");
	EXPECT_LE(d_pp, d_failed);
	EXPECT_EQ(d_failed, d_qstats);
}

/* Ethernet, IPv6, destination options, UDP: 14 + 40 + 304 + 8 bytes of
 * headers, more than the 256-byte header buffer (HBO): the NIC leaves the
 * frame whole in the payload buffer, in the dma-buf on a bound queue, and
 * the driver drops it.
 */
#define DSTOPT_LEN	304
#define HBO_DATA_LEN	64
#define HBO_FRAME_LEN	(14 + 40 + DSTOPT_LEN + 8 + HBO_DATA_LEN)

static size_t hbo_frame(unsigned char *f, const unsigned char *dst,
			const unsigned char *src, int i)
{
	unsigned char *ip6 = f + 14, *opt = ip6 + 40, *udp = opt + DSTOPT_LEN;
	size_t pad = DSTOPT_LEN - 2, n;
	unsigned char *o = opt + 2;

	memset(f, 0, HBO_FRAME_LEN);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip6[0] = 0x60;
	ip6[4] = (DSTOPT_LEN + 8 + HBO_DATA_LEN) >> 8;
	ip6[5] = (DSTOPT_LEN + 8 + HBO_DATA_LEN) & 0xff;
	ip6[6] = 60;			/* destination options */
	ip6[7] = 64;
	inet_pton(AF_INET6, "2001:db8::2", ip6 + 8);
	inet_pton(AF_INET6, "2001:db8::1", ip6 + 24);
	opt[0] = IPPROTO_UDP;
	opt[1] = DSTOPT_LEN / 8 - 1;
	while (pad) {			/* PadN options */
		n = pad - 2 > 255 ? 255 : pad - 2;
		if (pad - 2 - n == 1)	/* never leave a single byte */
			n--;
		o[0] = 1;
		o[1] = n;
		o += 2 + n;
		pad -= 2 + n;
	}
	udp[0] = (40000 + i) >> 8;
	udp[1] = (40000 + i) & 0xff;
	udp[3] = 9;			/* discard */
	udp[5] = 8 + HBO_DATA_LEN;
	memset(udp + 8, 0x5a, HBO_DATA_LEN);
	return HBO_FRAME_LEN;
}

static int hwaddr(int fd, const char *ifname, unsigned char *mac)
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		return -errno;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/* @count frames of hbo_frame() from the client NIC to @dst: 0 when all
 * were sent.
 */
static int send_hbo_frames(const unsigned char *dst, int count)
{
	const char *cli_if = getenv("CLI_IF");
	int status;
	pid_t pid;

	if (!cli_if)
		return -EINVAL;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		unsigned char frame[HBO_FRAME_LEN], src[6];
		struct sockaddr_ll ll = {
			.sll_family = AF_PACKET,
			.sll_protocol = htons(0x86dd),
			.sll_halen = 6,
		};
		int fd, i;

		if (join_netns(cli_ns()))
			_exit(2);
		fd = socket(AF_PACKET, SOCK_RAW, 0);
		ll.sll_ifindex = if_nametoindex(cli_if);
		if (fd < 0 || !ll.sll_ifindex || hwaddr(fd, cli_if, src))
			_exit(3);
		memcpy(ll.sll_addr, dst, 6);
		for (i = 0; i < count; i++) {
			size_t len = hbo_frame(frame, dst, src, i);

			if (sendto(fd, frame, len, 0, (void *)&ll,
				   sizeof(ll)) != (ssize_t)len)
				_exit(4);
			usleep(5000);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -ECHILD;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -EINTR;
}

#define HBO_FRAMES	20

/* Frames the header split path drops are not the device's drops. */
TEST_F_TIMEOUT(igb_restart, hds_drops_are_not_hw_drops, TEST_TIMEOUT)
{
	long long hds, drops, d_hds, d_drops, d_hw;
	struct rxq_qstats before, after;
	unsigned char srv_mac[6];
	int fd, i;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hwaddr(fd, self->ifname, srv_mac));
	close(fd);
	ASSERT_EQ(0, devmem_nl_open(&self->bnl));
	ASSERT_EQ(0, devmem_bind_rx(&self->bnl, self->ifindex, self->dmabuf,
				    &self->q, 1, NULL, self->extack,
				    EXTACK_LEN))
		TH_LOG("bind: %s", self->extack);
	sleep(SETTLE_SEC * devmem_time_scale());
	ASSERT_EQ(0, rxq_qstats(&self->nl, self->ifindex, self->q, &before));
	ASSERT_NE(~0ULL, before.hw_drops) TH_LOG("no rx-hw-drops in qstats");
	hds = rxq_stat(self->ifname, self->q, "hds_drops");
	drops = rxq_stat(self->ifname, self->q, "drops");
	ASSERT_LE(0, hds);
	ASSERT_LE(0, drops);

	ASSERT_EQ(0, send_hbo_frames(srv_mac, HBO_FRAMES));
	for (i = 0; i < 100 * (int)devmem_time_scale(); i++) {
		if (rxq_stat(self->ifname, self->q, "hds_drops") >=
		    hds + HBO_FRAMES)
			break;
		usleep(100000);
	}
	/* the watchdog reads the device's drop counters every 2 s */
	sleep(SETTLE_SEC * devmem_time_scale());
	ASSERT_EQ(0, rxq_qstats(&self->nl, self->ifindex, self->q, &after));
	d_hds = rxq_stat(self->ifname, self->q, "hds_drops") - hds;
	d_drops = rxq_stat(self->ifname, self->q, "drops") - drops;
	d_hw = after.hw_drops - before.hw_drops;
	nl_close(&self->bnl);
	TH_LOG("hds_drops +%lld, drops +%lld, rx-hw-drops +%lld", d_hds,
	       d_drops, d_hw);
	EXPECT_LE(HBO_FRAMES, d_hds)
		TH_LOG("the frames were not dropped by the header split path");
	EXPECT_EQ(d_drops, d_hw);
}

TEST_HARNESS_MAIN
