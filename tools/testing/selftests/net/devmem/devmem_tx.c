// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory TCP transmit, socket side.
 *
 * Run by devmem_tx.sh inside the client namespace of topology.sh, with
 * CLI_IF naming the client NIC, SRV_IF the server NIC and SRV_NS / CLI_NS
 * the two namespaces. Each test binds a udmabuf for transmit on the client
 * NIC (bind-tx) and sends from it with sendmsg(MSG_ZEROCOPY) and a
 * SCM_DEVMEM_DMABUF control message, each iovec giving an offset into the
 * dma-buf and a length. A receiver, a child process in the server
 * namespace, reads the stream with plain recv() and checks every byte.
 *
 * The dma-buf holds byte j = j % 251 at offset j, and stream byte i must
 * be i % 251: a segment of the stream starting at position p is sent from
 * any offset congruent to p modulo 251. That lets the sender pick
 * unaligned offsets, segments crossing page boundaries and segments
 * ending at the very end of the buffer, while the receiver needs to know
 * nothing but the stream position.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <liburing.h>
#include <linux/dma-buf.h>
#include <linux/errqueue.h>
#include <linux/sockios.h>

/* The harness' own SIGALRM handler has an unused parameter (-Wextra). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../kselftest_harness.h"
#pragma GCC diagnostic pop
#include "devmem_lib.h"

#define EXTACK_LEN	256
#define TX_BUF_SIZE	(4UL << 20)	/* the TX dma-buf */
#define RX_BUF_SIZE	(4UL << 20)	/* dma-buf of the RX binding test */
#define PATTERN_MOD	251
#define PORT		5311		/* the receiver, in the server ns */
#define LO_PORT		5312		/* loopback listener, client ns */
#define UDP_PORT	5313
#define RX_CHUNK	(64 << 10)
#define MAX_CALLS	16384		/* devmem calls per socket */
#define MAX_IOV		64
#define NOBODY		65534
#define VETH		"dmtx-veth0"
#define VETH_PEER	"dmtx-veth1"
#define SRV_ADDR6	"2001:db8::1"
#define SRV_ADDR4	"192.0.2.1"
/* the veth pair of route_other_nic_enodev: client end, server end */
#define VETH_ADDR	"198.51.100.2"
#define VETH_PEER_ADDR	"198.51.100.1"
/* seconds a test may take: TCG and a debug kernel are slow */
#define FLOW_TIMEOUT	600
/* seconds to wait for the receiver or for completions */
#define WAIT_SEC	300

/* Segment lengths the sender cycles through: odd sizes on purpose. */
static const size_t seg_sizes[] = {
	1000, 4095, 4097, 65536 + 3, 1, 12289, 64 * PATTERN_MOD,
	131072 + 5, 333, 8191,
};

/* Enter the namespace named by environment variable @env (or @def). */
static int join_netns(const char *env, const char *def)
{
	const char *ns = getenv(env);
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/run/netns/%s", ns ? ns : def);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * In a child: keep @fd as fd 3 and close every other inherited descriptor
 * (an inherited netlink socket would keep a binding alive).
 */
static int child_keep_fd(int fd)
{
	if (fd != 3 && dup2(fd, 3) < 0)
		return -1;
	close_range(4, ~0U, 0);
	return 3;
}

/* Wait up to @ms for @events on @fd: 1, 0 on timeout, -errno. */
static int wait_fd(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* --- the receiver, a child in the server namespace ------------------------ */

struct rx_opts {
	bool ipv4;	/* listen for IPv4 instead of IPv6 */
	bool hold;	/* accept, then read only after rx_go() */
};

/* What the receiver saw, sent back through the control socket. */
struct rx_report {
	__u64 bytes;		/* stream bytes received */
	__u64 bad;		/* bytes that differ from the pattern */
	__u64 first_bad;	/* stream position of the first one */
	__s32 err;		/* errno of a failed recv(), 0 at EOF */
	__u32 pad;
};

static int rx_listen(bool ipv4)
{
	struct sockaddr_in6 s6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(PORT),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct sockaddr_in s4 = {
		.sin_family = AF_INET,
		.sin_port = htons(PORT),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int fd, one = 1, err;

	fd = socket(ipv4 ? AF_INET : AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ipv4)
		err = bind(fd, (void *)&s4, sizeof(s4));
	else
		err = bind(fd, (void *)&s6, sizeof(s6));
	if (err || listen(fd, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Child: listen, say 'R', accept one connection, (wait for 'G',) read to
 * EOF checking every byte, send the report.
 */
static void rx_child(int ctl, const struct rx_opts *o)
{
	struct rx_report rep = { .first_bad = ~0ULL };
	unsigned int expect = 0;
	unsigned char *buf;
	int lfd, fd;
	ssize_t n, i;
	char c;

	ctl = child_keep_fd(ctl);
	buf = malloc(RX_CHUNK);
	if (ctl < 0 || !buf || join_netns("SRV_NS", "devmem-srv"))
		_exit(2);
	lfd = rx_listen(o->ipv4);
	if (lfd < 0)
		_exit(3);
	c = 'R';
	if (write(ctl, &c, 1) != 1)
		_exit(4);
	if (wait_fd(lfd, POLLIN, WAIT_SEC * 1000) != 1)
		_exit(5);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		_exit(6);
	close(lfd);
	if (o->hold && read(ctl, &c, 1) != 1)
		_exit(7);

	for (;;) {
		n = recv(fd, buf, RX_CHUNK, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rep.err = errno;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (buf[i] != expect) {
				if (!rep.bad)
					rep.first_bad = rep.bytes + i;
				rep.bad++;
			}
			if (++expect == PATTERN_MOD)
				expect = 0;
		}
		rep.bytes += n;
	}
	close(fd);
	if (write(ctl, &rep, sizeof(rep)) != sizeof(rep))
		_exit(8);
	_exit(0);
}

/* --- the sender ----------------------------------------------------------- */

/* One TCP socket sending the stream, and its zerocopy completions. */
struct tx_state {
	int fd;
	__u32 id;		/* TX binding used by tx_devmem() */
	size_t pos;		/* stream bytes queued */
	unsigned int calls;	/* devmem calls that queued bytes: ids 0.. */
	unsigned int salt;	/* varies offsets and lengths */
	unsigned char *done;	/* per call id: its completion was seen */
	unsigned int completed;	/* ids completed */
	unsigned int copied;	/* notifications with ZEROCOPY_COPIED */
	unsigned int bogus;	/* repeated or unknown ids, foreign errors */
};

/* One segment: @len bytes at dma-buf offset @off. */
static ssize_t devmem_send_one(int fd, __u32 id, size_t off, size_t len,
			       int flags)
{
	struct iovec iov = {
		.iov_base = (void *)(uintptr_t)off,
		.iov_len = len,
	};

	return devmem_sendmsg(fd, id, &iov, 1, flags);
}

/* Bytes queued and not yet acknowledged (SIOCOUTQ), or -errno. */
static int tx_outq(int fd)
{
	int v;

	return ioctl(fd, SIOCOUTQ, &v) ? -errno : v;
}

/* tx_outq() once it is 0, or after @sec seconds (the ACK of a FIN). */
static int tx_outq_settled(int fd, int sec)
{
	double end = devmem_now_sec() + sec;
	int v;

	while ((v = tx_outq(fd)) > 0 && devmem_now_sec() < end)
		usleep(10000);
	return v;
}

/* Record one zerocopy notification: call ids [ee_info, ee_data]. */
static void zc_account(struct tx_state *t, const struct sock_extended_err *ee)
{
	__u32 id;

	if (ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee->ee_errno ||
	    ee->ee_data < ee->ee_info ||
	    ee->ee_data - ee->ee_info >= MAX_CALLS) {
		t->bogus++;
		return;
	}
	if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
		t->copied++;
	for (id = ee->ee_info; ; id++) {
		if (id >= t->calls || t->done[id]) {
			t->bogus++;
		} else {
			t->done[id] = 1;
			t->completed++;
		}
		if (id == ee->ee_data)
			break;
	}
}

/* Read every notification waiting on the error queue: count or -errno. */
static int zc_drain(struct tx_state *t)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) +
				    sizeof(struct sockaddr_in6))];
		struct cmsghdr align;
	} ctrl;
	struct sock_extended_err ee;
	struct cmsghdr *cm;
	int count = 0;

	for (;;) {
		struct msghdr msg = {
			.msg_control = ctrl.buf,
			.msg_controllen = sizeof(ctrl.buf),
		};

		if (recvmsg(t->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return errno == EAGAIN ? count : -errno;
		count++;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if ((cm->cmsg_level != SOL_IP ||
			     cm->cmsg_type != IP_RECVERR) &&
			    (cm->cmsg_level != SOL_IPV6 ||
			     cm->cmsg_type != IPV6_RECVERR))
				continue;
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			zc_account(t, &ee);
		}
	}
}

/* Wait up to @ms for a notification, then read what is there. */
static int zc_poll(struct tx_state *t, int ms)
{
	wait_fd(t->fd, POLLERR, ms);
	return zc_drain(t);
}

/* Wait up to @sec seconds until every call id has completed. */
static bool zc_wait_all(struct tx_state *t, int sec)
{
	double end = devmem_now_sec() + sec;

	zc_drain(t);
	while (t->completed < t->calls && devmem_now_sec() < end) {
		int n = zc_poll(t, 200);

		if (n < 0)
			break;
		/* a reset socket polls as ready at once */
		if (!n)
			usleep(10000);
	}
	return t->completed == t->calls;
}

/*
 * A dma-buf offset for @len stream bytes starting at stream position
 * @pos: congruent to @pos modulo 251 and ending inside the buffer. Odd
 * @salt: at most 250 bytes before a page boundary, so that every segment
 * longer than that crosses it; even @salt: spread over the whole buffer.
 */
static size_t tx_offset(size_t pos, size_t len, unsigned int salt)
{
	size_t base = pos % PATTERN_MOD, page = getpagesize();
	unsigned int r = salt * 2654435761U;
	size_t pages, b, span;

	if (salt & 1) {
		pages = (TX_BUF_SIZE - len) / page;
		b = (1 + r % (pages - 1)) * page;
		return b - 1 - (b - 1 - base) % PATTERN_MOD;
	}
	span = (TX_BUF_SIZE - len - base) / PATTERN_MOD;
	return base + (r % (span + 1)) * PATTERN_MOD;
}

/* Account for a devmem call that queued @r bytes. */
static void tx_sent(struct tx_state *t, size_t r)
{
	t->pos += r;
	t->calls++;
	zc_drain(t);
}

/*
 * Queue @bytes more stream bytes from the dma-buf, @min_iov to @max_iov
 * segments per call. Returns 0, -EAGAIN if @flags has MSG_DONTWAIT and the
 * socket is full (EAGAIN, or ENOBUFS: too many calls not completed; what
 * was queued is accounted for), or the -errno of a failed call. Without
 * MSG_DONTWAIT, ENOBUFS waits for completions and tries again.
 */
static int tx_devmem_iovs(struct tx_state *t, size_t bytes, int flags,
			  int min_iov, int max_iov)
{
	size_t end = t->pos + bytes;
	struct iovec iov[MAX_IOV];
	int enobufs = 0;

	while (t->pos < end) {
		size_t pos = t->pos, total = 0;
		int n, niov;
		ssize_t r;

		if (t->calls >= MAX_CALLS)
			return -E2BIG;
		niov = min_iov + t->calls % (max_iov - min_iov + 1);
		for (n = 0; n < niov && pos < end; n++) {
			size_t len = seg_sizes[t->salt % ARRAY_SIZE(seg_sizes)];

			if (len > end - pos)
				len = end - pos;
			iov[n].iov_base =
				(void *)(uintptr_t)tx_offset(pos, len, t->salt);
			iov[n].iov_len = len;
			t->salt++;
			pos += len;
			total += len;
		}
		r = devmem_sendmsg(t->fd, t->id, iov, n, MSG_ZEROCOPY | flags);
		/* a full socket: the completions come only once acked */
		if (r == -ENOBUFS && (flags & MSG_DONTWAIT))
			return -EAGAIN;
		if (r == -ENOBUFS && enobufs++ < 600) {
			zc_poll(t, 100);
			continue;
		}
		if (r < 0)
			return r;
		if (!r || (size_t)r > total)
			return -EPROTO;
		enobufs = 0;
		tx_sent(t, r);
	}
	return 0;
}

/* tx_devmem_iovs() with 3 to 5 segments per call. */
static int tx_devmem(struct tx_state *t, size_t bytes, int flags)
{
	return tx_devmem_iovs(t, bytes, flags, 3, 5);
}

/* Queue @bytes more stream bytes from host memory with plain send(). */
static int tx_plain(struct tx_state *t, size_t bytes)
{
	unsigned char buf[4096];
	size_t end = t->pos + bytes;

	while (t->pos < end) {
		size_t n = end - t->pos < sizeof(buf) ? end - t->pos :
			   sizeof(buf);
		ssize_t r;

		devmem_fill_pattern(buf, n, t->pos % PATTERN_MOD, PATTERN_MOD);
		r = send(t->fd, buf, n, MSG_NOSIGNAL);
		if (r <= 0)
			return r < 0 ? -errno : -EPROTO;
		t->pos += r;
	}
	return 0;
}

/* TcpRetransSegs of this namespace, or -1. */
static long tcp_retrans_segs(void)
{
	static const char *const keys[] = { "RetransSegs", NULL };
	unsigned long long val;

	if (devmem_read_counters("/proc/net/snmp", "Tcp: ", keys, &val) != 1)
		return -1;
	return val;
}

/* --- the fixture ---------------------------------------------------------- */

FIXTURE(devmem_tx) {
	struct nl_ctx nl;	/* owns the TX binding tx.id */
	struct nl_ctx nl2;	/* a second binding, when a test needs one */
	char ifname[IFNAMSIZ];
	int ifindex;
	int dmabuf;
	unsigned char *map;
	struct tx_state tx;
	pid_t rx_pid;
	int rx_ctl;
	bool netem;		/* netem qdisc on CLI_IF to delete */
	bool data_split;	/* tcp-data-split on CLI_IF to turn off */
	bool veth;		/* VETH to delete */
	bool rss;		/* RSS table of CLI_IF to reset */
	bool sg_off;		/* scatter-gather of CLI_IF to turn on */
	bool csum_off;		/* checksum offload of CLI_IF to turn on */
	struct tcp_md5sig md5;	/* TCP MD5 key of tx.fd to delete, if keylen */
	char extack[EXTACK_LEN];
};

/* The fixture's data, as a type the helpers below take. */
#define devmem_tx_data FIXTURE_DATA(devmem_tx)

FIXTURE_SETUP(devmem_tx)
{
	const char *ifname = getenv("CLI_IF");
	void *map;

	self->nl.fd = -1;
	self->nl2.fd = -1;
	self->dmabuf = -1;
	self->tx.fd = -1;
	self->rx_pid = -1;
	self->rx_ctl = -1;
	ASSERT_NE(NULL, ifname) TH_LOG("CLI_IF not set: run devmem_tx.sh");
	snprintf(self->ifname, sizeof(self->ifname), "%s", ifname);
	self->ifindex = devmem_ifindex(ifname);
	ASSERT_LT(0, self->ifindex);
	self->tx.done = calloc(MAX_CALLS, 1);
	ASSERT_NE(NULL, self->tx.done);

	self->dmabuf = udmabuf_create(TX_BUF_SIZE, NULL);
	ASSERT_LE(0, self->dmabuf)
		TH_LOG("udmabuf: %s", strerror(-self->dmabuf));
	ASSERT_EQ(0, udmabuf_map(self->dmabuf, TX_BUF_SIZE, &map));
	self->map = map;
	/* x86 is coherent: no DMA_BUF_IOCTL_SYNC, as in ncdevmem by default */
	devmem_fill_pattern(self->map, TX_BUF_SIZE, 0, PATTERN_MOD);

	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	ASSERT_EQ(0, devmem_bind_tx(&self->nl, self->ifindex, self->dmabuf,
				    &self->tx.id, self->extack, EXTACK_LEN))
		TH_LOG("bind-tx: %s", self->extack);
	ASSERT_LT(0U, self->tx.id);
}

/* Kill and reap the receiver, if any. */
static void rx_kill(devmem_tx_data *self)
{
	if (self->rx_pid > 0) {
		kill(self->rx_pid, SIGKILL);
		waitpid(self->rx_pid, NULL, 0);
	}
	self->rx_pid = -1;
	if (self->rx_ctl >= 0)
		close(self->rx_ctl);
	self->rx_ctl = -1;
}

FIXTURE_TEARDOWN(devmem_tx)
{
	/* A receiver without the key drops signed segments, the sender
	 * unsigned ones: with the key kept, both ends' FINs would go
	 * unanswered and each socket would linger as an orphan for about
	 * 100 s, holding its namespace and the NIC in it.
	 */
	if (self->md5.tcpm_keylen && self->tx.fd >= 0) {
		self->md5.tcpm_keylen = 0;
		EXPECT_EQ(0, setsockopt(self->tx.fd, IPPROTO_TCP, TCP_MD5SIG,
					&self->md5, sizeof(self->md5)));
	}
	rx_kill(self);
	if (self->tx.fd >= 0)
		close(self->tx.fd);
	nl_close(&self->nl2);
	nl_close(&self->nl);
	if (self->netem)
		devmem_shell("tc qdisc del dev %s root 2>/dev/null", self->ifname);
	if (self->veth)
		devmem_shell("ip link del %s 2>/dev/null", VETH);
	if (self->rss)
		devmem_shell("ethtool -X %s default", self->ifname);
	if (self->sg_off)
		devmem_shell("ethtool -K %s sg on", self->ifname);
	if (self->csum_off)
		devmem_shell("ethtool -K %s tx on sg on", self->ifname);
	if (self->data_split)
		EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false,
							NULL, 0));
	if (self->map)
		udmabuf_unmap(self->map, TX_BUF_SIZE);
	if (self->dmabuf >= 0)
		close(self->dmabuf);
	free(self->tx.done);
}

/* Start the receiver and wait until it listens: 0 or -errno. */
static int rx_start(devmem_tx_data *self, const struct rx_opts *o)
{
	int sp[2];
	char c;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return -errno;
	fflush(NULL);
	self->rx_pid = fork();
	if (!self->rx_pid)
		rx_child(sp[1], o);
	close(sp[1]);
	self->rx_ctl = sp[0];
	if (self->rx_pid < 0)
		return -ECHILD;
	if (wait_fd(sp[0], POLLIN, WAIT_SEC * 1000) != 1 ||
	    read(sp[0], &c, 1) != 1 || c != 'R')
		return -EIO;
	return 0;
}

/* Let a holding receiver read. */
static int rx_go(devmem_tx_data *self)
{
	char c = 'G';

	return write(self->rx_ctl, &c, 1) == 1 ? 0 : -EIO;
}

/* Wait for the receiver's report and reap it: 0 or -errno. */
static int rx_finish(devmem_tx_data *self, struct rx_report *rep)
{
	size_t got = 0;
	int status;
	ssize_t r;

	memset(rep, 0, sizeof(*rep));
	while (got < sizeof(*rep)) {
		if (wait_fd(self->rx_ctl, POLLIN, WAIT_SEC * 1000) != 1)
			return -ETIMEDOUT;
		r = read(self->rx_ctl, (char *)rep + got, sizeof(*rep) - got);
		if (r <= 0)
			return -EIO;
		got += r;
	}
	if (waitpid(self->rx_pid, &status, 0) != self->rx_pid)
		return -ECHILD;
	self->rx_pid = -1;
	close(self->rx_ctl);
	self->rx_ctl = -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
}

/* @addr:@port as a socket address: its length, or 0 if not an address. */
static socklen_t make_addr(struct sockaddr_storage *ss, const char *addr,
			   int port)
{
	if (devmem_parse_addr(addr, ss) < 0)
		return 0;
	devmem_set_port(ss, port);
	return devmem_addr_len(ss);
}

/*
 * Connect a TCP socket to the receiver at @addr, SO_ZEROCOPY on if
 * @zerocopy, and start counting calls from 0.
 */
static int tx_open(devmem_tx_data *self, const char *addr,
		   bool zerocopy)
{
	struct timeval tv = { .tv_sec = WAIT_SEC };
	struct tx_state *t = &self->tx;
	struct sockaddr_storage ss;
	int i, one = 1;
	socklen_t len;

	len = make_addr(&ss, addr, PORT);
	if (!len)
		return -EINVAL;
	t->pos = 0;
	t->calls = 0;
	t->completed = 0;
	t->copied = 0;
	t->bogus = 0;
	memset(t->done, 0, MAX_CALLS);
	for (i = 0; i < 100; i++) {
		t->fd = socket(ss.ss_family, SOCK_STREAM, 0);
		if (t->fd < 0)
			return -errno;
		if (!connect(t->fd, (void *)&ss, len))
			break;
		close(t->fd);
		t->fd = -1;
		usleep(100000);
	}
	if (t->fd < 0)
		return -ECONNREFUSED;
	if (setsockopt(t->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	if (zerocopy && setsockopt(t->fd, SOL_SOCKET, SO_ZEROCOPY, &one,
				   sizeof(one)))
		return -errno;
	return 0;
}

/* Every call's completion arrived, none marked as copied. */
static void check_completions(struct __test_metadata *_metadata,
			      struct tx_state *t)
{
	EXPECT_TRUE(zc_wait_all(t, WAIT_SEC))
		TH_LOG("%u of %u calls completed", t->completed, t->calls);
	EXPECT_EQ(t->calls, t->completed);
	EXPECT_EQ(0U, t->copied);
	EXPECT_EQ(0U, t->bogus);
}

/* The receiver got exactly the @bytes of the stream, all intact. */
static void check_report(struct __test_metadata *_metadata,
			 const struct rx_report *rep, size_t bytes)
{
	EXPECT_EQ((__u64)bytes, rep->bytes);
	EXPECT_EQ(0ULL, rep->bad)
		TH_LOG("first wrong byte at stream position %llu",
		       (unsigned long long)rep->first_bad);
	EXPECT_EQ(0, rep->err) TH_LOG("recv: %s", strerror(rep->err));
}

/* Finish a stream: EOF to the receiver, its report, the completions. */
static void finish_stream(struct __test_metadata *_metadata,
			  devmem_tx_data *self)
{
	struct rx_report rep;

	ASSERT_EQ(0, shutdown(self->tx.fd, SHUT_WR));
	ASSERT_EQ(0, rx_finish(self, &rep));
	check_report(_metadata, &rep, self->tx.pos);
	check_completions(_metadata, &self->tx);
	EXPECT_EQ(0, tx_outq_settled(self->tx.fd, 10));
}

static int count_bound(const struct devmem_queue_info *q, void *arg)
{
	if (q->has_dmabuf)
		(*(int *)arg)++;
	return 0;
}

/* --- bind-tx -------------------------------------------------------------- */

TEST_F_TIMEOUT(devmem_tx, bind_tx_errors, FLOW_TIMEOUT)
{
	struct nl_msg *m = malloc(sizeof(*m));
	int memfd, closed_fd, lo, veth, bound = 0;
	__u32 id2 = 0;

	ASSERT_NE(NULL, m);

	/* ifindex and fd are both required */
	nl_msg_init_family(m, &self->nl, NETDEV_CMD_BIND_TX, 0);
	nl_put_u32(m, NETDEV_A_DMABUF_FD, self->dmabuf);
	EXPECT_EQ(-EINVAL, devmem_bind_request(&self->nl, m, NULL,
					       self->extack, EXTACK_LEN));
	nl_msg_init_family(m, &self->nl, NETDEV_CMD_BIND_TX, 0);
	nl_put_u32(m, NETDEV_A_DMABUF_IFINDEX, self->ifindex);
	EXPECT_EQ(-EINVAL, devmem_bind_request(&self->nl, m, NULL,
					       self->extack, EXTACK_LEN));

	/* a queue list has no place in bind-tx */
	nl_msg_init_family(m, &self->nl, NETDEV_CMD_BIND_TX, 0);
	nl_put_u32(m, NETDEV_A_DMABUF_IFINDEX, self->ifindex);
	nl_put_u32(m, NETDEV_A_DMABUF_FD, self->dmabuf);
	devmem_msg_put_queue(m, 0, NETDEV_QUEUE_TYPE_RX);
	EXPECT_EQ(-EINVAL, devmem_bind_request(&self->nl, m, NULL,
					       self->extack, EXTACK_LEN));
	free(m);

	EXPECT_EQ(-ENODEV, devmem_bind_tx(&self->nl, 0x7ffffff0, self->dmabuf,
					  NULL, self->extack, EXTACK_LEN));

	/* devices without netmem TX */
	lo = devmem_ifindex("lo");
	ASSERT_LT(0, lo);
	EXPECT_EQ(-EOPNOTSUPP, devmem_bind_tx(&self->nl, lo, self->dmabuf,
					      NULL, self->extack, EXTACK_LEN));
	EXPECT_NE(0, self->extack[0]);
	TH_LOG("lo: \"%s\"", self->extack);

	ASSERT_EQ(0, devmem_shell("ip link add %s type veth peer name %s", VETH,
				  VETH_PEER));
	self->veth = true;
	ASSERT_EQ(0, devmem_shell("ip link set %s up", VETH));
	veth = devmem_ifindex(VETH);
	ASSERT_LT(0, veth);
	EXPECT_EQ(-EOPNOTSUPP, devmem_bind_tx(&self->nl, veth, self->dmabuf,
					      NULL, self->extack, EXTACK_LEN));
	EXPECT_NE(0, self->extack[0]);
	TH_LOG("veth: \"%s\"", self->extack);
	EXPECT_EQ(0, devmem_shell("ip link del %s", VETH));
	self->veth = false;

	/* not a dma-buf, no file at all */
	memfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, TX_BUF_SIZE));
	EXPECT_EQ(-EINVAL, devmem_bind_tx(&self->nl, self->ifindex, memfd,
					  NULL, self->extack, EXTACK_LEN));
	close(memfd);
	closed_fd = dup(self->dmabuf);
	ASSERT_LE(0, closed_fd);
	close(closed_fd);
	EXPECT_EQ(-EBADF, devmem_bind_tx(&self->nl, self->ifindex, closed_fd,
					 NULL, self->extack, EXTACK_LEN));

	/* the socket still works: a second binding of the same dma-buf */
	ASSERT_EQ(0, devmem_bind_tx(&self->nl, self->ifindex, self->dmabuf,
				    &id2, self->extack, EXTACK_LEN))
		TH_LOG("bind-tx: %s", self->extack);
	EXPECT_LT(0U, id2);
	EXPECT_NE(self->tx.id, id2);

	/* bind-tx needs no header split and touches no queue */
	EXPECT_NE(ETHTOOL_TCP_DATA_SPLIT_ENABLED,
		  ethtool_get_tcp_data_split(self->ifindex));
	EXPECT_EQ(0, devmem_queue_dump(&self->nl, self->ifindex, count_bound,
				       &bound));
	EXPECT_EQ(0, bound);
}

/* bind-tx needs no privilege; bind-rx does. */
TEST_F_TIMEOUT(devmem_tx, bind_tx_unprivileged, FLOW_TIMEOUT)
{
	struct {
		int tx, rx, tx_new;
		__u32 id;
	} res;
	int p[2], status;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned int q = 0;
		struct nl_ctx nl, nl_new;
		int out, buf;

		out = child_keep_fd(p[1]);
		res.tx = -ENOEXEC;
		res.rx = -ENOEXEC;
		res.tx_new = -ENOEXEC;
		res.id = 0;
		/* /dev/udmabuf is root's: make the buffer first */
		buf = udmabuf_create(TX_BUF_SIZE, NULL);
		if (out < 0 || buf < 0 || devmem_nl_open(&nl))
			_exit(2);
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(3);
		res.tx = devmem_bind_tx(&nl, self->ifindex, buf, &res.id,
					NULL, 0);
		res.rx = devmem_bind_rx(&nl, self->ifindex, buf, &q, 1, NULL,
					NULL, 0);
		/* a socket opened without privilege works as well */
		if (!devmem_nl_open(&nl_new)) {
			res.tx_new = devmem_bind_tx(&nl_new, self->ifindex,
						    buf, NULL, NULL, 0);
			nl_close(&nl_new);
		}
		nl_close(&nl);
		if (write(out, &res, sizeof(res)) != sizeof(res))
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	if (wait_fd(p[0], POLLIN, WAIT_SEC * 1000) != 1 ||
	    read(p[0], &res, sizeof(res)) != sizeof(res)) {
		kill(pid, SIGKILL);
		memset(&res, 0, sizeof(res));
		res.tx = -EIO;
	}
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, res.tx) TH_LOG("bind-tx as nobody: %s",
				    strerror(-res.tx));
	EXPECT_LT(0U, res.id);
	EXPECT_EQ(-EPERM, res.rx) TH_LOG("bind-rx as nobody: %s",
					 strerror(-res.rx));
	EXPECT_EQ(0, res.tx_new);
}

/* --- streams -------------------------------------------------------------- */

static void tx_stream(struct __test_metadata *_metadata,
		      devmem_tx_data *self, bool ipv4, size_t bytes)
{
	struct rx_opts o = { .ipv4 = ipv4 };
	double start;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, ipv4 ? SRV_ADDR4 : SRV_ADDR6, true));
	start = devmem_now_sec();
	ASSERT_EQ(0, tx_devmem(&self->tx, bytes, 0));
	/* more segments than an skb has frags, in one call */
	ASSERT_EQ(0, tx_devmem_iovs(&self->tx, 1 << 20, 0, MAX_IOV, MAX_IOV));
	finish_stream(_metadata, self);
	TH_LOG("%zu bytes in %u calls, %.1f s", self->tx.pos, self->tx.calls,
	       devmem_now_sec() - start);
}

TEST_F_TIMEOUT(devmem_tx, tx_stream_ipv6, FLOW_TIMEOUT)
{
	tx_stream(_metadata, self, false, 8 << 20);
}

TEST_F_TIMEOUT(devmem_tx, tx_stream_ipv4, FLOW_TIMEOUT)
{
	tx_stream(_metadata, self, true, 8 << 20);
}

/* Host memory and device memory on one socket, in turns. */
TEST_F_TIMEOUT(devmem_tx, tx_mixed_with_plain_send, FLOW_TIMEOUT)
{
	struct rx_opts o = {};
	int i;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	ASSERT_EQ(0, tx_plain(&self->tx, 100000));
	ASSERT_EQ(0, tx_devmem(&self->tx, 2 << 20, 0));
	ASSERT_EQ(0, tx_plain(&self->tx, 65537));
	ASSERT_EQ(0, tx_devmem(&self->tx, 1 << 20, 0));
	/* small writes that could be appended to the previous skb */
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, tx_plain(&self->tx, 1 + i * 37));
		ASSERT_EQ(0, tx_devmem(&self->tx, 1 + i * 53, 0));
	}
	ASSERT_EQ(0, tx_plain(&self->tx, 4096));
	finish_stream(_metadata, self);
}

/* --- sendmsg errors ------------------------------------------------------- */

TEST_F_TIMEOUT(devmem_tx, sendmsg_errors, FLOW_TIMEOUT)
{
	struct rx_opts o = {};
	struct tx_state *t = &self->tx;
	struct sockaddr_storage ss;
	size_t end_off, base;
	socklen_t len;
	struct iovec iov[3];
	char udp_buf[100];
	__u64 id64;
	__u16 id16;
	__u32 id;
	int fd, udp, udp_rx, one = 1;
	ssize_t r;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, false));
	fd = t->fd;
	id = t->id;

	/* MSG_ZEROCOPY without SO_ZEROCOPY */
	EXPECT_EQ(-EINVAL, devmem_send_one(fd, id, 0, 1000, MSG_ZEROCOPY));
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one,
				sizeof(one)));
	/* SO_ZEROCOPY without MSG_ZEROCOPY */
	EXPECT_EQ(-EINVAL, devmem_send_one(fd, id, 0, 1000, 0));

	/* the binding id must be exactly a __u32 */
	id16 = id;
	iov[0].iov_base = NULL;
	iov[0].iov_len = 1000;
	EXPECT_EQ(-EINVAL, devmem_sendmsg_cmsg(fd, &id16, sizeof(id16), iov, 1,
					       MSG_ZEROCOPY));
	id64 = id;
	EXPECT_EQ(-EINVAL, devmem_sendmsg_cmsg(fd, &id64, sizeof(id64), iov, 1,
					       MSG_ZEROCOPY));

	/* id 0 names no binding: as on mainline, the cmsg is then no devmem
	 * send at all, and the iovecs are user memory (here: address 0)
	 */
	EXPECT_EQ(-EFAULT, devmem_send_one(fd, 0, 0, 1000, MSG_ZEROCOPY));
	/* no such binding: never given, unbound */
	EXPECT_EQ(-EINVAL, devmem_send_one(fd, 0x7fffffff, 0, 1000,
					   MSG_ZEROCOPY));
	ASSERT_EQ(0, devmem_nl_open(&self->nl2));
	ASSERT_EQ(0, devmem_bind_tx(&self->nl2, self->ifindex, self->dmabuf,
				    &id, self->extack, EXTACK_LEN));
	nl_close(&self->nl2);
	EXPECT_EQ(-EINVAL, devmem_send_one(fd, id, 0, 1000, MSG_ZEROCOPY));
	id = t->id;

	/* segments past the end of the dma-buf, first or later ones */
	EXPECT_EQ(-EFAULT, devmem_send_one(fd, id, TX_BUF_SIZE - 100, 101,
					   MSG_ZEROCOPY));
	EXPECT_EQ(-EFAULT, devmem_send_one(fd, id, TX_BUF_SIZE, 1,
					   MSG_ZEROCOPY));
	EXPECT_EQ(-EFAULT, devmem_send_one(fd, id, TX_BUF_SIZE + 4096, 4096,
					   MSG_ZEROCOPY));
	EXPECT_EQ(-EFAULT, devmem_send_one(fd, id, UINTPTR_MAX - 100, 1000,
					   MSG_ZEROCOPY));
	iov[0].iov_base = NULL;
	iov[0].iov_len = 1000;
	iov[1].iov_base = (void *)(uintptr_t)(TX_BUF_SIZE - 50);
	iov[1].iov_len = 51;
	EXPECT_EQ(-EFAULT, devmem_sendmsg(fd, id, iov, 2, MSG_ZEROCOPY));
	iov[1].iov_base = (void *)(uintptr_t)1000;
	iov[1].iov_len = 65536;
	iov[2].iov_base = (void *)(uintptr_t)(TX_BUF_SIZE - 4096);
	iov[2].iov_len = 8192;
	EXPECT_EQ(-EFAULT, devmem_sendmsg(fd, id, iov, 3, MSG_ZEROCOPY));

	/* nothing was queued, nothing completed */
	EXPECT_EQ(0, tx_outq(fd));
	EXPECT_EQ(0, zc_drain(t));

	/* the control message on a UDP socket: as on mainline, only TCP
	 * sends from device memory and UDP ignores it; the datagram is sent
	 * from the (user memory) iovec
	 */
	len = make_addr(&ss, "::1", UDP_PORT);
	udp_rx = socket(AF_INET6, SOCK_DGRAM, 0);
	ASSERT_LE(0, udp_rx);
	ASSERT_EQ(0, bind(udp_rx, (void *)&ss, len));
	udp = socket(AF_INET6, SOCK_DGRAM, 0);
	ASSERT_LE(0, udp);
	setsockopt(udp, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one));
	ASSERT_EQ(0, connect(udp, (void *)&ss, len));
	memset(udp_buf, 0, sizeof(udp_buf));
	iov[0].iov_base = udp_buf;
	iov[0].iov_len = sizeof(udp_buf);
	EXPECT_EQ((ssize_t)sizeof(udp_buf),
		  devmem_sendmsg(udp, id, iov, 1, MSG_ZEROCOPY));
	EXPECT_EQ((ssize_t)sizeof(udp_buf), devmem_sendmsg(udp, id, iov, 1, 0));
	/* its length is checked all the same */
	EXPECT_EQ(-EINVAL, devmem_sendmsg_cmsg(udp, &id64, sizeof(id64), iov, 1,
					       0));
	/* the two datagrams arrived, from the user buffer */
	for (r = 0; r < 2; r++)
		EXPECT_EQ((ssize_t)sizeof(udp_buf),
			  recv(udp_rx, udp_buf, sizeof(udp_buf), MSG_DONTWAIT));
	close(udp);
	close(udp_rx);

	/*
	 * Now valid sends: from offset 0 (stream position 0), a segment
	 * ending exactly at the end of the dma-buf, one more.
	 */
	base = 1000 % PATTERN_MOD;
	end_off = TX_BUF_SIZE - 5000 -
		  (TX_BUF_SIZE - 5000 - base) % PATTERN_MOD;
	iov[0].iov_base = NULL;
	iov[0].iov_len = 1000;
	iov[1].iov_base = (void *)(uintptr_t)end_off;
	iov[1].iov_len = TX_BUF_SIZE - end_off;
	iov[2].iov_base = (void *)(uintptr_t)
		tx_offset(1000 + iov[1].iov_len, 4097, 7);
	iov[2].iov_len = 4097;
	r = devmem_sendmsg(fd, id, iov, 3, MSG_ZEROCOPY);
	ASSERT_EQ((ssize_t)(1000 + iov[1].iov_len + 4097), r)
		TH_LOG("valid sendmsg: %s", strerror(-r));
	tx_sent(t, r);
	ASSERT_EQ(0, tx_devmem(t, 200000, 0));
	finish_stream(_metadata, self);
}

/* --- whose binding -------------------------------------------------------- */

#define UID_A		1000
#define UID_B		1001

/* What a child that became another user does: @fn on the fixture. */
struct as_user_call {
	int (*fn)(devmem_tx_data *self, void *arg);
	devmem_tx_data *self;
	void *arg;
};

static int as_user_run(void *arg)
{
	struct as_user_call *c = arg;

	return c->fn(c->self, c->arg);
}

/* Run @fn in a child that became @uid: its result, or -ECHILD. */
static int as_user(devmem_tx_data *self, uid_t uid,
		   int (*fn)(devmem_tx_data *self, void *arg), void *arg)
{
	struct as_user_call c = { .fn = fn, .self = self, .arg = arg };

	return devmem_as_user(uid, as_user_run, &c, WAIT_SEC * 1000);
}

/* As a user: bind the fixture's dma-buf for TX through self->nl2, which
 * the parent opened and keeps (the binding outlives the child). Returns
 * the id or -errno.
 */
static int user_bind_tx(devmem_tx_data *self, void *arg)
{
	__u32 id = 0;
	int err;

	(void)arg;
	err = devmem_bind_tx(&self->nl2, self->ifindex, self->dmabuf, &id,
			     NULL, 0);
	return err ? err : (int)id;
}

/* As a user: connect to the receiver, send 64 KiB from binding *arg at
 * offset 0 (stream position 0), close. Returns sendmsg's result.
 */
static int user_send_64k(devmem_tx_data *self, void *arg)
{
	__u32 id = *(__u32 *)arg;
	ssize_t r;
	int err;

	err = tx_open(self, SRV_ADDR6, true);
	if (err)
		return err;
	r = devmem_send_one(self->tx.fd, id, 0, 64 << 10, MSG_ZEROCOPY);
	close(self->tx.fd);
	return r;
}

/*
 * User A binds a dma-buf for TX; user B, in the same namespace, sends
 * naming A's id: -EPERM, and not one byte of A's buffer reaches B's peer.
 * A itself sends from it, and so does root (CAP_NET_ADMIN).
 */
TEST_F_TIMEOUT(devmem_tx, binding_of_other_user_eperm, FLOW_TIMEOUT)
{
	struct rx_opts o = {};
	struct rx_report rep;
	__u32 a_id;
	int r;

	ASSERT_EQ(0, devmem_nl_open(&self->nl2));
	r = as_user(self, UID_A, user_bind_tx, NULL);
	ASSERT_LT(0, r) TH_LOG("bind-tx as uid %d: %s", UID_A, strerror(-r));
	a_id = r;

	/* B: refused, the peer gets nothing */
	ASSERT_EQ(0, rx_start(self, &o));
	r = as_user(self, UID_B, user_send_64k, &a_id);
	EXPECT_EQ(-EPERM, r) TH_LOG("uid %d sending from uid %d's binding: %d",
				    UID_B, UID_A, r);
	ASSERT_EQ(0, rx_finish(self, &rep));
	EXPECT_EQ(0ULL, rep.bytes);

	/* A: its own binding */
	ASSERT_EQ(0, rx_start(self, &o));
	r = as_user(self, UID_A, user_send_64k, &a_id);
	EXPECT_EQ(64 << 10, r) TH_LOG("uid %d: %s", UID_A, strerror(-r));
	ASSERT_EQ(0, rx_finish(self, &rep));
	check_report(_metadata, &rep, r > 0 ? r : 0);

	/* root administers the namespace */
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	self->tx.id = a_id;
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));
	finish_stream(_metadata, self);
}

/*
 * As nobody with RLIMIT_MEMLOCK at 8 MiB: sending 64 MiB from device
 * memory in one call works. No page is pinned, so nothing is charged to
 * locked_vm: a charge would fail the call with ENOBUFS at once.
 */
static int user_send_64m(devmem_tx_data *self, void *arg)
{
	struct iovec iov[MAX_IOV];
	size_t pos = 0, len = 1 << 20;
	__u32 id = 0;
	ssize_t r;
	int i, err;

	(void)arg;
	err = devmem_bind_tx(&self->nl2, self->ifindex, self->dmabuf, &id,
			     NULL, 0);
	if (err)
		return err;
	err = tx_open(self, SRV_ADDR6, true);
	if (err)
		return err;
	for (i = 0; i < MAX_IOV; i++) {
		iov[i].iov_base = (void *)(uintptr_t)tx_offset(pos, len, 2 * i);
		iov[i].iov_len = len;
		pos += len;
	}
	r = devmem_sendmsg(self->tx.fd, id, iov, MAX_IOV, MSG_ZEROCOPY);
	close(self->tx.fd);
	return r == (ssize_t)pos ? 0 : r < 0 ? r : -EPROTO;
}

TEST_F_TIMEOUT(devmem_tx, unprivileged_64m_not_memlocked, FLOW_TIMEOUT)
{
	struct rlimit lim = { 8 << 20, 8 << 20 };
	struct rx_opts o = {};
	struct rx_report rep;
	int r;

	ASSERT_EQ(0, devmem_nl_open(&self->nl2));
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &lim));
	r = as_user(self, NOBODY, user_send_64m, NULL);
	EXPECT_EQ(0, r) TH_LOG("64 MiB devmem send with 8 MiB memlock: %s",
			       strerror(-r));
	ASSERT_EQ(0, rx_finish(self, &rep));
	check_report(_metadata, &rep, r ? rep.bytes : 64ULL << 20);
}

/*
 * A netlink socket's port id is free again before the socket's release is
 * announced: a new socket that takes it at once keeps the bindings it
 * makes, and the old socket's bindings go. The closing runs in another
 * thread while this one takes the port id as soon as it can.
 */
static void *close_nl_thread(void *arg)
{
	close(*(int *)arg);
	return NULL;
}

TEST_F_TIMEOUT(devmem_tx, portid_reused_at_release, FLOW_TIMEOUT)
{
	struct nl_ctx old_nl, new_nl;
	__u32 old_id, new_id;
	struct rx_opts o = {};
	int i, err, tries;
	pthread_t th;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, devmem_nl_open(&old_nl));
		ASSERT_EQ(0, devmem_bind_tx(&old_nl, self->ifindex,
					    self->dmabuf, &old_id, NULL, 0));
		ASSERT_EQ(0, pthread_create(&th, NULL, close_nl_thread,
					    &old_nl.fd));
		err = -EADDRINUSE;
		for (tries = 0; err == -EADDRINUSE && tries < 100000; tries++)
			err = devmem_nl_open_portid(&new_nl, old_nl.portid);
		ASSERT_EQ(0, err) TH_LOG("port id %u: %s", old_nl.portid,
					 strerror(-err));
		err = devmem_bind_tx(&new_nl, self->ifindex, self->dmabuf,
				     &new_id, NULL, 0);
		pthread_join(th, NULL);
		old_nl.fd = -1;
		nl_close(&old_nl);
		ASSERT_EQ(0, err);
		/* a range past the end: -EFAULT from a live binding, -EINVAL
		 * when the id is gone; nothing is queued either way
		 */
		EXPECT_EQ(-EINVAL, devmem_send_one(self->tx.fd, old_id,
						   TX_BUF_SIZE, 1,
						   MSG_ZEROCOPY));
		EXPECT_EQ(-EFAULT, devmem_send_one(self->tx.fd, new_id,
						   TX_BUF_SIZE, 1,
						   MSG_ZEROCOPY))
			TH_LOG("round %d: the new socket lost its binding", i);
		nl_close(&new_nl);
		EXPECT_EQ(-EINVAL, devmem_send_one(self->tx.fd, new_id,
						   TX_BUF_SIZE, 1,
						   MSG_ZEROCOPY));
	}
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));
	finish_stream(_metadata, self);
}

/* --- sends that could not stay zerocopy ----------------------------------- */

/* A socket that signs its segments with TCP MD5 would read the payload. */
TEST_F_TIMEOUT(devmem_tx, md5_socket_refused, FLOW_TIMEOUT)
{
	struct tcp_md5sig md5 = { .tcpm_keylen = 8 };
	struct sockaddr_storage ss;
	struct rx_opts o = {};

	ASSERT_LT(0U, make_addr(&ss, SRV_ADDR6, PORT));
	memcpy(&md5.tcpm_addr, &ss, sizeof(struct sockaddr_in6));
	memcpy(md5.tcpm_key, "devmem-k", 8);
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	ASSERT_EQ(0, setsockopt(self->tx.fd, IPPROTO_TCP, TCP_MD5SIG, &md5,
				sizeof(md5)));
	self->md5 = md5;	/* the teardown deletes the key */
	EXPECT_EQ(-EOPNOTSUPP, devmem_send_one(self->tx.fd, self->tx.id, 0,
					       1000, MSG_ZEROCOPY));
	EXPECT_EQ(0, tx_outq(self->tx.fd));
	EXPECT_EQ(0, zc_drain(&self->tx));
}

/*
 * SO_MARK and SO_BINDTODEVICE drop the socket's cached route: the next
 * devmem send routes again, as any send does, rather than failing.
 */
static void send_after_route_reset(struct __test_metadata *_metadata,
				   devmem_tx_data *self, bool ipv4)
{
	struct rx_opts o = { .ipv4 = ipv4 };
	int mark = 1;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, ipv4 ? SRV_ADDR4 : SRV_ADDR6, true));
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));
	/* all acknowledged: no ACK can route the socket again meanwhile */
	ASSERT_EQ(0, tx_outq_settled(self->tx.fd, 10));
	ASSERT_EQ(0, setsockopt(self->tx.fd, SOL_SOCKET, SO_MARK, &mark,
				sizeof(mark)));
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));
	ASSERT_EQ(0, tx_outq_settled(self->tx.fd, 10));
	ASSERT_EQ(0, setsockopt(self->tx.fd, SOL_SOCKET, SO_BINDTODEVICE,
				self->ifname, strlen(self->ifname)));
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));
	finish_stream(_metadata, self);
}

TEST_F_TIMEOUT(devmem_tx, send_after_route_reset_ipv6, FLOW_TIMEOUT)
{
	send_after_route_reset(_metadata, self, false);
}

TEST_F_TIMEOUT(devmem_tx, send_after_route_reset_ipv4, FLOW_TIMEOUT)
{
	send_after_route_reset(_metadata, self, true);
}

/* --- io_uring ------------------------------------------------------------ */

/* One IORING_OP_SENDMSG_ZC carrying the devmem cmsg of binding @id. */
struct uring_send {
	struct msghdr msg;
	struct iovec iov[3];
	union {
		char buf[CMSG_SPACE(sizeof(__u32))];
		struct cmsghdr align;
	} ctrl;
};

static void uring_send_init(struct uring_send *u, __u32 id, int niov)
{
	struct cmsghdr *cm;

	memset(u, 0, sizeof(*u));
	u->msg.msg_iov = u->iov;
	u->msg.msg_iovlen = niov;
	u->msg.msg_control = u->ctrl.buf;
	u->msg.msg_controllen = sizeof(u->ctrl.buf);
	cm = CMSG_FIRSTHDR(&u->msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(sizeof(id));
	memcpy(CMSG_DATA(cm), &id, sizeof(id));
}

/*
 * Submit @u on @fd and wait for its result: bytes sent or -errno. A
 * notification ("the NIC is done with the bytes") follows every call
 * marked IORING_CQE_F_MORE; *@notifs counts those still to come, and the
 * ones that arrive meanwhile are taken off.
 */
static ssize_t uring_sendmsg_zc(struct io_uring *ring, int fd,
				struct uring_send *u, int *notifs)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	unsigned int flags;
	ssize_t res;

	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_sendmsg_zc(sqe, fd, &u->msg, 0);
	if (io_uring_submit(ring) != 1)
		return -EIO;
	for (;;) {
		if (io_uring_wait_cqe(ring, &cqe))
			return -EIO;
		flags = cqe->flags;
		res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		if (!(flags & IORING_CQE_F_NOTIF))
			break;
		(*notifs)--;
	}
	if (flags & IORING_CQE_F_MORE)
		(*notifs)++;
	return res;
}

/* Wait until every notification came, WAIT_SEC at most. */
static int uring_wait_notifs(struct io_uring *ring, int *notifs)
{
	struct __kernel_timespec ts = { .tv_sec = WAIT_SEC };
	struct io_uring_cqe *cqe;

	while (*notifs > 0) {
		if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
			return -ETIMEDOUT;
		if (cqe->flags & IORING_CQE_F_NOTIF)
			(*notifs)--;
		io_uring_cqe_seen(ring, cqe);
	}
	return 0;
}

/*
 * A devmem stream sent with io_uring's sendmsg_zc (no SO_ZEROCOPY needed:
 * io_uring's notifications are the completions): the receiver gets every
 * byte intact, every call is notified. A bad binding id and a range past
 * the dma-buf fail the call as sendmsg(2) does.
 */
TEST_F_TIMEOUT(devmem_tx, io_uring_sendmsg_zc, FLOW_TIMEOUT)
{
	struct tx_state *t = &self->tx;
	struct rx_opts o = {};
	struct rx_report rep;
	struct io_uring ring;
	struct uring_send u;
	int notifs = 0, n;
	size_t end;
	ssize_t r;

	ASSERT_EQ(0, io_uring_queue_init(16, &ring, 0));
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, false));

	uring_send_init(&u, 0x7fffffff, 1);
	u.iov[0].iov_len = 1000;
	EXPECT_EQ(-EINVAL, uring_sendmsg_zc(&ring, t->fd, &u, &notifs));
	uring_send_init(&u, t->id, 1);
	u.iov[0].iov_base = (void *)(uintptr_t)(TX_BUF_SIZE - 100);
	u.iov[0].iov_len = 101;
	EXPECT_EQ(-EFAULT, uring_sendmsg_zc(&ring, t->fd, &u, &notifs));
	EXPECT_EQ(0, tx_outq(t->fd));

	end = 4 << 20;
	while (t->pos < end) {
		size_t pos = t->pos, total = 0;

		uring_send_init(&u, t->id, 3);
		for (n = 0; n < 3; n++) {
			size_t len = seg_sizes[t->salt % ARRAY_SIZE(seg_sizes)];

			if (len > end - pos)
				len = end - pos;
			u.iov[n].iov_base =
				(void *)(uintptr_t)tx_offset(pos, len, t->salt);
			u.iov[n].iov_len = len;
			t->salt++;
			pos += len;
			total += len;
		}
		r = uring_sendmsg_zc(&ring, t->fd, &u, &notifs);
		/* a socket short of room sends part of it, as sendmsg(2) */
		ASSERT_LT(0, r) TH_LOG("sendmsg_zc: %s", strerror(-r));
		ASSERT_GE((ssize_t)total, r);
		t->pos += r;
	}
	ASSERT_EQ(0, shutdown(t->fd, SHUT_WR));
	ASSERT_EQ(0, rx_finish(self, &rep));
	check_report(_metadata, &rep, t->pos);
	EXPECT_EQ(0, uring_wait_notifs(&ring, &notifs));
	EXPECT_EQ(0, zc_drain(t));
	EXPECT_EQ(0, tx_outq_settled(t->fd, 10));
	io_uring_queue_exit(&ring);
}

/* --- the route's device --------------------------------------------------- */

/*
 * Bind @dmabuf for TX on the server NIC, from a netlink socket made in the
 * server namespace; come back to the current namespace.
 */
static int bind_tx_srv_nic(struct nl_ctx *nl, int dmabuf, __u32 *id,
			   char *extack)
{
	const char *ifname = getenv("SRV_IF");
	int home, err, ifindex;

	if (!ifname)
		return -ENOENT;
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		return -errno;
	err = join_netns("SRV_NS", "devmem-srv");
	if (!err) {
		ifindex = devmem_ifindex(ifname);
		err = ifindex < 0 ? ifindex : devmem_nl_open(nl);
		if (!err)
			err = devmem_bind_tx(nl, ifindex, dmabuf, id, extack,
					     EXTACK_LEN);
		if (setns(home, CLONE_NEWNET))
			err = -errno;
	}
	close(home);
	return err;
}

/*
 * The route leaves through another NIC than the bound one: a veth whose
 * other end is in the server namespace, with its own subnet.
 */
TEST_F_TIMEOUT(devmem_tx, route_other_nic_enodev, FLOW_TIMEOUT)
{
	const char *srv_ns = getenv("SRV_NS") ? : "devmem-srv";
	struct rx_opts o = { .ipv4 = true };

	ASSERT_EQ(0, devmem_shell("ip link add %s type veth peer name %s netns %s",
				  VETH, VETH_PEER, srv_ns));
	self->veth = true;
	ASSERT_EQ(0, devmem_shell("ip addr add %s/24 dev %s && ip link set %s up",
				  VETH_ADDR, VETH, VETH));
	ASSERT_EQ(0, devmem_shell("ip -n %s addr add %s/24 dev %s", srv_ns,
				  VETH_PEER_ADDR, VETH_PEER));
	ASSERT_EQ(0, devmem_shell("ip -n %s link set %s up", srv_ns, VETH_PEER));
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, VETH_PEER_ADDR, true));
	EXPECT_EQ(-ENODEV, devmem_send_one(self->tx.fd, self->tx.id, 0, 1000,
					   MSG_ZEROCOPY));
	EXPECT_EQ(-ENODEV, devmem_send_one(self->tx.fd, self->tx.id, 0, 1,
					   MSG_ZEROCOPY | MSG_DONTWAIT));
	EXPECT_EQ(0, tx_outq(self->tx.fd));
	EXPECT_EQ(0, zc_drain(&self->tx));
	/* the socket itself is fine: host memory goes through */
	ASSERT_EQ(0, tx_plain(&self->tx, 1000));
	finish_stream(_metadata, self);
	EXPECT_EQ(0, devmem_shell("ip link del %s", VETH));
	self->veth = false;
}

/*
 * A TX binding of the server NIC, made from the server namespace, used by
 * a socket of the client namespace whose route is the client NIC: refused
 * (the id belongs to another namespace, and to another device), nothing
 * queued; the client's own binding works on the same socket.
 */
TEST_F_TIMEOUT(devmem_tx, binding_of_other_netns_refused, FLOW_TIMEOUT)
{
	struct rx_opts o = {};
	__u32 srv_id = 0;
	ssize_t r;

	ASSERT_EQ(0, bind_tx_srv_nic(&self->nl2, self->dmabuf, &srv_id,
				     self->extack))
		TH_LOG("bind-tx on SRV_IF: %s", self->extack);
	EXPECT_NE(self->tx.id, srv_id);
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	r = devmem_send_one(self->tx.fd, srv_id, 0, 1000, MSG_ZEROCOPY);
	EXPECT_TRUE(r == -EINVAL || r == -ENODEV)
		TH_LOG("sendmsg: %zd (%s)", r, strerror(-r));
	TH_LOG("binding of the other namespace: %s", strerror(-r));
	EXPECT_EQ(0, tx_outq(self->tx.fd));
	EXPECT_EQ(0, zc_drain(&self->tx));
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));
	finish_stream(_metadata, self);
}

TEST_F_TIMEOUT(devmem_tx, loopback_enodev, FLOW_TIMEOUT)
{
	/* over lo, and to the client's own address (still over lo) */
	static const char * const addrs[] = {
		"::1", "2001:db8::2", "127.0.0.1", "192.0.2.2",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		struct sockaddr_storage ss;
		int lfd, fd, one = 1;
		socklen_t len;

		len = make_addr(&ss, addrs[i], LO_PORT);
		ASSERT_LT(0U, len);
		lfd = socket(ss.ss_family, SOCK_STREAM, 0);
		ASSERT_LE(0, lfd);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		ASSERT_EQ(0, bind(lfd, (void *)&ss, len));
		ASSERT_EQ(0, listen(lfd, 1));
		fd = socket(ss.ss_family, SOCK_STREAM, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one,
					sizeof(one)));
		ASSERT_EQ(0, connect(fd, (void *)&ss, len));
		EXPECT_EQ(-ENODEV, devmem_send_one(fd, self->tx.id, 0, 1000,
						   MSG_ZEROCOPY))
			TH_LOG("to %s", addrs[i]);
		EXPECT_EQ(0, tx_outq(fd));
		close(fd);
		close(lfd);
	}
}

/* --- paths that would read the iovecs as user memory ---------------------- */

/* sendmsg(MSG_FASTOPEN) from device memory: the SYN would carry a copy. */
static int devmem_fastopen(int fd, __u32 id, const char *addr)
{
	union {
		char buf[CMSG_SPACE(sizeof(__u32))];
		struct cmsghdr align;
	} ctrl = {};
	struct iovec iov = { .iov_base = NULL, .iov_len = 1000 };
	struct sockaddr_storage ss;
	struct msghdr msg = {
		.msg_name = &ss,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	msg.msg_namelen = make_addr(&ss, addr, PORT);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(sizeof(__u32));
	memcpy(CMSG_DATA(cm), &id, sizeof(id));
	return sendmsg(fd, &msg, MSG_FASTOPEN | MSG_ZEROCOPY) < 0 ? -errno : 0;
}

/*
 * Fast open, TCP repair and a route without scatter-gather would copy
 * from the iovecs as if they were user memory: refused, nothing queued.
 */
TEST_F_TIMEOUT(devmem_tx, refused_send_paths, FLOW_TIMEOUT)
{
	struct rx_opts o = {};
	struct rx_report rep;
	int fd, one = 1, off = 0;

	fd = socket(AF_INET6, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one,
				sizeof(one)));
	EXPECT_EQ(-EINVAL, devmem_fastopen(fd, self->tx.id, SRV_ADDR6));
	close(fd);

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	fd = self->tx.fd;

	ASSERT_EQ(0, setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &one,
				sizeof(one)));
	EXPECT_EQ(-EINVAL, devmem_send_one(fd, self->tx.id, 0, 1000,
					   MSG_ZEROCOPY));
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off,
				sizeof(off)));
	close(fd);
	self->tx.fd = -1;
	ASSERT_EQ(0, rx_finish(self, &rep));
	EXPECT_EQ(0ULL, rep.bytes);

	/* sg off: the route cannot carry fragments at all */
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, devmem_shell("ethtool -K %s sg off", self->ifname));
	self->sg_off = true;
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	EXPECT_EQ(-EOPNOTSUPP, devmem_send_one(self->tx.fd, self->tx.id, 0,
					       1000, MSG_ZEROCOPY));
	EXPECT_EQ(0, tx_outq(self->tx.fd));
	close(self->tx.fd);
	self->tx.fd = -1;
	EXPECT_EQ(0, devmem_shell("ethtool -K %s sg on", self->ifname));
	self->sg_off = false;
	ASSERT_EQ(0, rx_finish(self, &rep));
	EXPECT_EQ(0ULL, rep.bytes);
}

/*
 * Checksum offload turned off between sends: only the NIC can sum device
 * memory, so the devmem send is refused and nothing is queued, while host
 * memory still goes through; with the offload back devmem sends resume,
 * and the receiver gets every byte in order. Then the offload goes away
 * with device memory in flight.
 */
TEST_F_TIMEOUT(devmem_tx, csum_offload_off_refused, FLOW_TIMEOUT)
{
	struct rx_opts o = {};

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));
	/* what is queued was summed by the NIC: let it be acked first */
	ASSERT_EQ(0, tx_outq_settled(self->tx.fd, 10));
	ASSERT_EQ(0, devmem_shell("ethtool -K %s tx off", self->ifname));
	self->csum_off = true;
	EXPECT_EQ(-EOPNOTSUPP, devmem_send_one(self->tx.fd, self->tx.id, 0,
					       1000, MSG_ZEROCOPY));
	EXPECT_EQ(0, tx_outq(self->tx.fd));
	ASSERT_EQ(0, tx_plain(&self->tx, 10000));
	ASSERT_EQ(0, devmem_shell("ethtool -K %s tx on sg on", self->ifname));
	self->csum_off = false;
	ASSERT_EQ(0, tx_devmem(&self->tx, 100000, 0));

	/* Offload gone while device memory is in flight: what the stack
	 * (re)transmits meanwhile is dropped, never summed in software (the
	 * guest's runner fails the test on a splat); once it is back the
	 * retransmissions carry the stream on, intact.
	 */
	ASSERT_EQ(0, tx_devmem(&self->tx, 1 << 20, 0));
	ASSERT_EQ(0, devmem_shell("ethtool -K %s tx off", self->ifname));
	self->csum_off = true;
	sleep(1);
	ASSERT_EQ(0, devmem_shell("ethtool -K %s tx on sg on", self->ifname));
	self->csum_off = false;
	finish_stream(_metadata, self);
}

/* --- an RX binding's id --------------------------------------------------- */

TEST_F_TIMEOUT(devmem_tx, rx_binding_id_einval, FLOW_TIMEOUT)
{
	struct devmem_queue_info qi;
	struct rx_opts o = {};
	unsigned int q = 1;
	__u32 rx_id = 0;
	int rxbuf, err;

	ASSERT_EQ(0, ethtool_rings_for_devmem(self->ifindex, self->extack,
					      EXTACK_LEN))
		TH_LOG("tcp-data-split on, hds-thresh 0: %s", self->extack);
	self->data_split = true;
	/* queue 1 if there is one, RSS kept off it: the flow's ACKs stay
	 * on queue 0
	 */
	if (devmem_queue_get(&self->nl, self->ifindex, NETDEV_QUEUE_TYPE_RX,
			     q, &qi))
		q = 0;
	if (q) {
		ASSERT_EQ(0, devmem_shell("ethtool -X %s weight 1 0",
					  self->ifname));
		self->rss = true;
	}
	rxbuf = udmabuf_create(RX_BUF_SIZE, NULL);
	ASSERT_LE(0, rxbuf);
	ASSERT_EQ(0, devmem_nl_open(&self->nl2));
	err = devmem_bind_rx(&self->nl2, self->ifindex, rxbuf, &q, 1, &rx_id,
			     self->extack, EXTACK_LEN);
	close(rxbuf);
	ASSERT_EQ(0, err) TH_LOG("bind-rx queue %u: %s", q, self->extack);
	EXPECT_NE(self->tx.id, rx_id);

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	EXPECT_EQ(-EINVAL, devmem_send_one(self->tx.fd, rx_id, 0, 1000,
					   MSG_ZEROCOPY));
	EXPECT_EQ(0, tx_outq(self->tx.fd));
	/* the TX binding works next to an RX binding of the same NIC */
	ASSERT_EQ(0, tx_devmem(&self->tx, 1 << 20, 0));
	finish_stream(_metadata, self);

	nl_close(&self->nl2);
	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false,
						self->extack, EXTACK_LEN))
		TH_LOG("tcp-data-split off: %s", self->extack);
	self->data_split = false;
	if (self->rss)
		EXPECT_EQ(0, devmem_shell("ethtool -X %s default", self->ifname));
	self->rss = false;
}

/* --- lifetime ------------------------------------------------------------- */

/*
 * With the receiver not reading, queue as much as the socket takes (up to
 * @bytes) without blocking. Returns the bytes left unacknowledged.
 */
static int fill_unacked(struct __test_metadata *_metadata,
			devmem_tx_data *self, size_t bytes)
{
	int sndbuf = 16 << 20, r;

	/* room for several MiB of frags (best effort) */
	setsockopt(self->tx.fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
		   sizeof(sndbuf));
	r = tx_devmem(&self->tx, bytes, MSG_DONTWAIT);
	EXPECT_TRUE(!r || r == -EAGAIN) TH_LOG("sendmsg: %s", strerror(-r));
	r = tx_outq(self->tx.fd);
	TH_LOG("%zu bytes queued in %u calls, %d unacknowledged",
	       self->tx.pos, self->tx.calls, r);
	return r;
}

/*
 * Unbind (close the netlink socket) while the sends are in flight: they
 * still go out from the dma-buf intact, every completion arrives, and the
 * id is gone for new sends at once.
 */
TEST_F_TIMEOUT(devmem_tx, close_netlink_with_sends_in_flight, FLOW_TIMEOUT)
{
	struct rx_opts o = { .hold = true };
	struct rx_report rep;
	__u32 id = self->tx.id;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	ASSERT_LT(0, fill_unacked(_metadata, self, 6 << 20));
	nl_close(&self->nl);
	/* the binding lives on in the queued skbs, but its id is gone */
	EXPECT_EQ(-EINVAL, devmem_send_one(self->tx.fd, id, 0, 1000,
					   MSG_ZEROCOPY | MSG_DONTWAIT));

	ASSERT_EQ(0, rx_go(self));
	check_completions(_metadata, &self->tx);
	EXPECT_EQ(-EINVAL, devmem_send_one(self->tx.fd, id, 0, 1000,
					   MSG_ZEROCOPY));
	EXPECT_EQ(0, tx_outq(self->tx.fd));
	ASSERT_EQ(0, shutdown(self->tx.fd, SHUT_WR));
	ASSERT_EQ(0, rx_finish(self, &rep));
	check_report(_metadata, &rep, self->tx.pos);
}

/*
 * Close the TCP socket, the netlink socket and the dma-buf while the data
 * is unacknowledged: the orphaned socket still sends it all, from a buffer
 * nobody holds any more but the binding.
 */
TEST_F_TIMEOUT(devmem_tx, close_socket_with_unacked_devmem, FLOW_TIMEOUT)
{
	struct rx_opts o = { .hold = true };
	struct rx_report rep;
	size_t sent;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	ASSERT_LT(0, fill_unacked(_metadata, self, 4 << 20));
	sent = self->tx.pos;
	close(self->tx.fd);
	self->tx.fd = -1;
	nl_close(&self->nl);
	udmabuf_unmap(self->map, TX_BUF_SIZE);
	self->map = NULL;
	close(self->dmabuf);
	self->dmabuf = -1;

	ASSERT_EQ(0, rx_go(self));
	ASSERT_EQ(0, rx_finish(self, &rep));
	check_report(_metadata, &rep, sent);
}

/*
 * The peer resets the connection while devmem data is unacknowledged: the
 * write queue is purged and every completion still arrives.
 */
TEST_F_TIMEOUT(devmem_tx, peer_reset_with_unacked_devmem, FLOW_TIMEOUT)
{
	struct rx_opts o = { .hold = true };
	struct tcp_info ti;
	socklen_t len;
	int i;

	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	ASSERT_LT(0, fill_unacked(_metadata, self, 4 << 20));
	/* it dies with unread data: its socket sends a reset */
	rx_kill(self);
	check_completions(_metadata, &self->tx);
	for (i = 0; i < 100; i++) {
		len = sizeof(ti);
		ASSERT_EQ(0, getsockopt(self->tx.fd, IPPROTO_TCP, TCP_INFO,
					&ti, &len));
		if (ti.tcpi_state == TCP_CLOSE)
			break;
		usleep(100000);
	}
	EXPECT_EQ(TCP_CLOSE, ti.tcpi_state);
}

/* --- loss ----------------------------------------------------------------- */

TEST_F_TIMEOUT(devmem_tx, netem_loss_retransmits, FLOW_TIMEOUT)
{
	struct rx_opts o = {};
	long before, after;

	ASSERT_EQ(0, devmem_shell("tc qdisc add dev %s root netem loss 5%%",
				  self->ifname));
	self->netem = true;
	before = tcp_retrans_segs();
	ASSERT_LE(0, before);
	ASSERT_EQ(0, rx_start(self, &o));
	ASSERT_EQ(0, tx_open(self, SRV_ADDR6, true));
	ASSERT_EQ(0, tx_devmem(&self->tx, 4 << 20, 0));
	finish_stream(_metadata, self);
	after = tcp_retrans_segs();
	TH_LOG("%ld segments retransmitted", after - before);
	EXPECT_LT(before, after);
	EXPECT_EQ(0, devmem_shell("tc qdisc del dev %s root", self->ifname));
	self->netem = false;
}

TEST_HARNESS_MAIN
