// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory TCP receive, socket side.
 *
 * Run by devmem_rx.sh inside the server namespace of topology.sh, with
 * SRV_IF naming the server NIC and CLI_NS the client namespace. Each test
 * binds a udmabuf to RX queue(s) of the server NIC, points RSS at them, and
 * has a child process in the client namespace send a known pattern over
 * the emulated wire. The payload must arrive in the udmabuf (read back
 * through its mmap at the offsets the SCM_DEVMEM_DMABUF messages give),
 * and every error path of recvmsg(MSG_SOCK_DEVMEM) and SO_DEVMEM_DONTNEED
 * must fail cleanly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>
#include <linux/dma-buf.h>
#include <linux/tcp.h>

/* The harness' own SIGALRM handler has an unused parameter (-Wextra). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../kselftest_harness.h"
#pragma GCC diagnostic pop
#include "devmem_lib.h"

#define EXTACK_LEN	256
#define DMABUF_SIZE	(64UL << 20)
#define PATTERN_MOD	251
#define PORT		5301
#define CMSG_BUF_LEN	(CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 2048)
#define IOV_LEN		(256 << 10)
#define MAX_FLOWS	4
/* seconds a test may take: TCG and a debug kernel are slow */
#define FLOW_TIMEOUT	600

/* Byte @pos of every test stream. */
static unsigned char pattern_at(size_t pos)
{
	return pos % PATTERN_MOD;
}

/* --- client, in the client namespace ----------------------------------- */

struct client_opts {
	size_t bytes;		/* bytes to send */
	size_t chunk;		/* bytes per send() */
	bool nodelay;		/* TCP_NODELAY and a pause between sends */
	bool ipv4;		/* IPv4 instead of IPv6 */
};

static int join_client_netns(void)
{
	char path[128];
	const char *ns = getenv("CLI_NS");
	int fd, ret;

	snprintf(path, sizeof(path), "/run/netns/%s", ns ? ns : "devmem-cli");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ret = setns(fd, CLONE_NEWNET);
	close(fd);
	return ret;
}

static int client_connect(const struct client_opts *o)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *s6 = (void *)&ss;
	struct sockaddr_in *s4 = (void *)&ss;
	socklen_t sl;
	int fd, i, one = 1;

	if (o->ipv4) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(PORT);
		inet_pton(AF_INET, "192.0.2.1", &s4->sin_addr);
		sl = sizeof(*s4);
	} else {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(PORT);
		inet_pton(AF_INET6, "2001:db8::1", &s6->sin6_addr);
		sl = sizeof(*s6);
	}
	for (i = 0; i < 200; i++) {
		fd = socket(ss.ss_family, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		if (o->nodelay)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
		if (!connect(fd, (void *)&ss, sl))
			return fd;
		close(fd);
		usleep(50000);
	}
	return -1;
}

/* Child process: send the pattern, wait for the server to close. */
static void client_run(const struct client_opts *o)
{
	unsigned char *buf = malloc(o->chunk);
	size_t pos = 0, i;
	char c;
	int fd;

	/* the netlink socket and the dma-buf stay the server's alone: an
	 * inherited copy would keep the binding alive
	 */
	close_range(3, ~0U, 0);
	if (!buf || join_client_netns())
		_exit(2);
	fd = client_connect(o);
	if (fd < 0)
		_exit(3);
	while (pos < o->bytes) {
		size_t n = o->chunk < o->bytes - pos ? o->chunk : o->bytes - pos;
		ssize_t w;

		for (i = 0; i < n; i++)
			buf[i] = pattern_at(pos + i);
		w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w <= 0)
			_exit(pos ? 0 : 4);	/* the server may stop early */
		pos += w;
		if (o->nodelay)
			usleep(2000);
	}
	shutdown(fd, SHUT_WR);
	while (read(fd, &c, 1) > 0)
		;
	_exit(0);
}

static pid_t client_start(const struct client_opts *o)
{
	pid_t pid = fork();

	if (!pid)
		client_run(o);
	return pid;
}

static int client_wait(pid_t pid)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* --- server side helpers ------------------------------------------------- */

static int run(const char *fmt, const char *arg)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	return system(cmd);
}

static int listen_on(void)
{
	struct sockaddr_in6 s6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(PORT),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int fd, one = 1;

	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (void *)&s6, sizeof(s6)) || listen(fd, MAX_FLOWS)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What the receive loop saw. */
struct rx_state {
	size_t pos;		/* stream bytes received */
	size_t dmabuf_bytes;	/* of which in the dma-buf */
	size_t linear_bytes;	/* of which copied by the CPU */
	size_t host_bytes;	/* readable skbs (no devmem cmsg at all) */
	size_t frags;
	size_t bad;		/* bytes that differ from the pattern */
	__u32 *tokens;		/* tokens held, when kept */
	size_t ntokens;
	size_t tokens_cap;
	__u32 binding_id;	/* expected dmabuf_id, 0: any */
	bool bad_id;
	size_t map_size;	/* of the dma-buf, 0: DMABUF_SIZE */
};

static void check_bytes(struct rx_state *st, const unsigned char *p,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pattern_at(st->pos + i))
			st->bad++;
	st->pos += n;
}

static int keep_token(struct rx_state *st, __u32 token)
{
	if (st->ntokens == st->tokens_cap) {
		size_t cap = st->tokens_cap ? st->tokens_cap * 2 : 4096;
		__u32 *t = realloc(st->tokens, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		st->tokens = t;
		st->tokens_cap = cap;
	}
	st->tokens[st->ntokens++] = token;
	return 0;
}

/* Give back the kept tokens, one range per token, 128 per call. */
static long free_tokens(int fd, struct rx_state *st)
{
	struct dmabuf_token t[128];
	size_t done = 0;
	long freed = 0;

	while (done < st->ntokens) {
		size_t n = st->ntokens - done, i;
		int r;

		if (n > 128)
			n = 128;
		for (i = 0; i < n; i++) {
			t[i].token_start = st->tokens[done + i];
			t[i].token_count = 1;
		}
		r = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
			       n * sizeof(t[0]));
		if (r < 0)
			return -errno;
		freed += r;
		done += n;
	}
	st->ntokens = 0;
	return freed;
}

/*
 * One recvmsg(MSG_SOCK_DEVMEM): walk the control messages in stream order,
 * check every byte against the pattern (dma-buf bytes through @map), keep
 * the tokens. Returns recvmsg's result (-errno on failure).
 */
/* The control messages of one devmem receive that returned @ret bytes. */
static ssize_t devmem_recv_walk(struct msghdr *msg, ssize_t ret,
				const unsigned char *map, void *iov_buf,
				struct rx_state *st)
{
	const unsigned char *lin = iov_buf;
	size_t seen = 0;
	struct cmsghdr *cm;

	if (msg->msg_flags & MSG_CTRUNC)
		return -EMSGSIZE;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		struct dmabuf_cmsg *dc = (void *)CMSG_DATA(cm);

		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_DEVMEM_LINEAR) {
			check_bytes(st, lin, dc->frag_size);
			lin += dc->frag_size;
			st->linear_bytes += dc->frag_size;
		} else if (cm->cmsg_type == SCM_DEVMEM_DMABUF) {
			if (dc->frag_offset + dc->frag_size >
			    (st->map_size ? : DMABUF_SIZE))
				return -ERANGE;
			if (st->binding_id && dc->dmabuf_id != st->binding_id)
				st->bad_id = true;
			check_bytes(st, map + dc->frag_offset, dc->frag_size);
			st->dmabuf_bytes += dc->frag_size;
			st->frags++;
			/* tokens start at 1, as mainline's: 0 is never one */
			if (!dc->frag_token)
				return -EPROTO;
			if (keep_token(st, dc->frag_token))
				return -ENOMEM;
		} else {
			continue;
		}
		seen += dc->frag_size;
	}
	if (!seen) {
		/* a readable skb: plain bytes in the iovec */
		check_bytes(st, iov_buf, ret);
		st->host_bytes += ret;
	} else if (seen != (size_t)ret) {
		return -EPROTO;
	}
	return ret;
}

static ssize_t devmem_recv(int fd, const unsigned char *map, void *iov_buf,
			   struct rx_state *st, int flags)
{
	static char ctrl[CMSG_BUF_LEN];
	struct iovec iov = { .iov_base = iov_buf, .iov_len = IOV_LEN };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
	};
	ssize_t ret;

	ret = recvmsg(fd, &msg, MSG_SOCK_DEVMEM | flags);
	if (ret <= 0)
		return ret < 0 ? -errno : 0;
	return devmem_recv_walk(&msg, ret, map, iov_buf, st);
}

/* devmem_recv() through io_uring's IORING_OP_RECVMSG. */
static ssize_t devmem_recv_uring(struct io_uring *ring, int fd,
				 const unsigned char *map, void *iov_buf,
				 struct rx_state *st, int flags)
{
	static char ctrl[CMSG_BUF_LEN];
	struct iovec iov = { .iov_base = iov_buf, .iov_len = IOV_LEN };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
	};
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	ssize_t ret;

	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_recvmsg(sqe, fd, &msg, MSG_SOCK_DEVMEM | flags);
	if (io_uring_submit(ring) != 1)
		return -EIO;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (ret <= 0)
		return ret;
	return devmem_recv_walk(&msg, ret, map, iov_buf, st);
}

/* Receive until EOF (or @limit bytes), giving tokens back as we go. */
static int devmem_recv_all(int fd, const unsigned char *map,
			   struct rx_state *st, size_t limit, bool keep)
{
	void *buf = malloc(IOV_LEN);
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	while (st->pos < limit) {
		r = devmem_recv(fd, map, buf, st, 0);
		if (r <= 0) {
			free(buf);
			return r;
		}
		if (!keep && free_tokens(fd, st) < 0) {
			free(buf);
			return -EIO;
		}
	}
	free(buf);
	return 0;
}

/* --- the fixture ------------------------------------------------------- */

FIXTURE(devmem_rx) {
	struct nl_ctx nl;
	char ifname[IFNAMSIZ];
	int ifindex;
	int dmabuf;
	unsigned char *map;
	__u32 binding_id;
	int lfd;
	int fd;
	pid_t client;
	char extack[EXTACK_LEN];
};

/* The fixture's data, as a type the helpers below take. */
#define devmem_rx_data FIXTURE_DATA(devmem_rx)

FIXTURE_VARIANT(devmem_rx) {
	bool both_queues;	/* bind queues 0 and 1, default RSS */
};

/* One queue bound (the last one), RSS pointed at it. */
FIXTURE_VARIANT_ADD(devmem_rx, one_queue) {
	.both_queues = false,
};

/* Every queue bound, flows spread by the default RSS table. */
FIXTURE_VARIANT_ADD(devmem_rx, two_queues) {
	.both_queues = true,
};

/* Is @ifname (in namespace @netns, "" for this one) up, carrier included? */
static bool link_up(const char *netns, const char *ifname)
{
	return !devmem_shell("ip %s%s link show %s | grep -q LOWER_UP",
			     *netns ? "-n " : "", netns, ifname);
}

/* MTU @mtu on the server NIC (bound: its rings restart under the binding)
 * and on the client's, then both links up.
 */
static int set_mtus(devmem_rx_data *self, int mtu)
{
	const char *cli_ns = getenv("CLI_NS"), *cli_if = getenv("CLI_IF");
	int err, i;

	if (!cli_ns || !cli_if)
		return -1;
	err = devmem_shell("ip link set %s mtu %d && ip -n %s link set %s mtu %d",
			   self->ifname, mtu, cli_ns, cli_if, mtu);
	if (err)
		return err;
	/* both links up again, or 10 s gone */
	for (i = 0; i < 100; i++) {
		if (link_up("", self->ifname) && link_up(cli_ns, cli_if))
			break;
		usleep(100000);
	}
	return 0;
}

/*
 * DEVMEM_RX_VARIANT=one_queue or two_queues runs one variant only: make
 * check-kmsan runs one_queue, as both do not fit its time and the second
 * takes the same paths with another queue bound.
 */
static bool variant_left_out(bool both_queues)
{
	const char *only = getenv("DEVMEM_RX_VARIANT");

	if (!only || !*only)
		return false;
	return strcmp(only, both_queues ? "two_queues" : "one_queue");
}

FIXTURE_SETUP(devmem_rx)
{
	unsigned int q[2] = { 0, 1 };
	const char *ifname = getenv("SRV_IF");
	void *map;

	/* the harness runs each test in a child: 255 reports a skip */
	if (variant_left_out(variant->both_queues))
		SKIP(_exit(255), "DEVMEM_RX_VARIANT=%s",
		     getenv("DEVMEM_RX_VARIANT"));
	self->fd = -1;
	self->client = -1;
	ASSERT_NE(NULL, ifname) TH_LOG("SRV_IF not set: run devmem_rx.sh");
	snprintf(self->ifname, sizeof(self->ifname), "%s", ifname);
	self->ifindex = devmem_ifindex(ifname);
	ASSERT_LT(0, self->ifindex);

	ASSERT_EQ(0, ethtool_rings_for_devmem(self->ifindex, self->extack,
					      EXTACK_LEN))
		TH_LOG("tcp-data-split on, hds-thresh 0: %s", self->extack);
	self->dmabuf = udmabuf_create(DMABUF_SIZE, NULL);
	ASSERT_LE(0, self->dmabuf);
	ASSERT_EQ(0, udmabuf_map(self->dmabuf, DMABUF_SIZE, &map));
	self->map = map;
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	if (variant->both_queues) {
		ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex,
					    self->dmabuf, q, 2,
					    &self->binding_id, self->extack,
					    EXTACK_LEN))
			TH_LOG("bind-rx: %s", self->extack);
		ASSERT_EQ(0, run("ethtool -X %s default", ifname));
	} else {
		ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex,
					    self->dmabuf, &q[1], 1,
					    &self->binding_id, self->extack,
					    EXTACK_LEN))
			TH_LOG("bind-rx: %s", self->extack);
		ASSERT_EQ(0, run("ethtool -X %s weight 0 1", ifname));
	}
	self->lfd = listen_on();
	ASSERT_LE(0, self->lfd);
}

FIXTURE_TEARDOWN(devmem_rx)
{
	if (self->fd >= 0)
		close(self->fd);
	close(self->lfd);
	if (self->client > 0) {
		kill(self->client, SIGKILL);
		client_wait(self->client);
	}
	nl_close(&self->nl);
	if (self->map)
		udmabuf_unmap(self->map, DMABUF_SIZE);
	if (self->dmabuf >= 0)
		close(self->dmabuf);
	run("ethtool -X %s default", self->ifname);
	set_mtus(self, 1500);
	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
}

/* Start a client and accept its connection. */
static int start_flow(struct __test_metadata *_metadata,
		      devmem_rx_data *self,
		      const struct client_opts *o)
{
	(void)_metadata;
	self->client = client_start(o);
	if (self->client <= 0)
		return -1;
	self->fd = accept(self->lfd, NULL, NULL);
	return self->fd;
}

/* Close our end (the client waits for it) and reap the client. */
static int finish_flow(devmem_rx_data *self)
{
	int ret;

	close(self->fd);
	self->fd = -1;
	ret = client_wait(self->client);
	self->client = -1;
	return ret;
}

/* Wait until @fd has @bytes to read (or the peer is done). */
static void wait_readable(int fd, int bytes)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int i, avail;

	for (i = 0; i < 300; i++) {
		if (poll(&p, 1, 100) > 0 &&
		    !ioctl(fd, FIONREAD, &avail) && avail >= bytes)
			return;
	}
}

TEST_F_TIMEOUT(devmem_rx, stream_lands_in_dmabuf_ipv6, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 16 << 20, .chunk = 64 << 10 };
	struct rx_state st = { .binding_id = self->binding_id };

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
	EXPECT_FALSE(st.bad_id);
	/* hds-thresh 0: every payload byte went through the dma-buf */
	EXPECT_EQ(o.bytes, st.dmabuf_bytes);
	EXPECT_EQ(0U, st.linear_bytes + st.host_bytes);
	EXPECT_LT(0U, st.frags);
	TH_LOG("%zu bytes: %zu in the dma-buf (%zu frags), %zu linear, %zu host",
	       st.pos, st.dmabuf_bytes, st.frags, st.linear_bytes,
	       st.host_bytes);
	EXPECT_EQ(0, finish_flow(self));
	free(st.tokens);
}

/* One validated stream at the current MTU: every byte in the dma-buf. */
static void mtu_stream(struct __test_metadata *_metadata,
		       devmem_rx_data *self, bool ipv4, int mtu)
{
	struct client_opts o = { .bytes = 8 << 20, .chunk = 64 << 10,
				 .ipv4 = ipv4 };
	struct rx_state st = { .binding_id = self->binding_id };

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
	EXPECT_EQ(o.bytes, st.dmabuf_bytes);
	TH_LOG("MTU %d, IPv%c: %zu bytes, %zu in the dma-buf in %zu frags (%zu bytes each)",
	       mtu, ipv4 ? '4' : '6', st.pos, st.dmabuf_bytes, st.frags,
	       st.frags ? st.dmabuf_bytes / st.frags : 0);
	EXPECT_EQ(0, finish_flow(self));
	free(st.tokens);
}

TEST_F_TIMEOUT(devmem_rx, stream_lands_in_dmabuf_ipv4, FLOW_TIMEOUT)
{
	mtu_stream(_metadata, self, true, 1500);
}

/* Several flows at once on the bound queue(s), read round robin. */
TEST_F_TIMEOUT(devmem_rx, four_flows, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 4 << 20, .chunk = 32 << 10 };
	struct rx_state st[MAX_FLOWS] = {};
	int fds[MAX_FLOWS], done = 0, i;
	pid_t pids[MAX_FLOWS];
	void *buf = malloc(IOV_LEN);

	ASSERT_NE(NULL, buf);
	for (i = 0; i < MAX_FLOWS; i++) {
		pids[i] = client_start(&o);
		ASSERT_LT(0, pids[i]);
		fds[i] = accept(self->lfd, NULL, NULL);
		ASSERT_LE(0, fds[i]);
		st[i].binding_id = self->binding_id;
	}
	while (done < MAX_FLOWS) {
		for (i = 0; i < MAX_FLOWS; i++) {
			ssize_t r;

			if (fds[i] < 0)
				continue;
			r = devmem_recv(fds[i], self->map, buf, &st[i],
					MSG_DONTWAIT);
			if (r == -EAGAIN)
				continue;
			ASSERT_LE(0, r) TH_LOG("flow %d: %s", i, strerror(-r));
			ASSERT_LE(0, free_tokens(fds[i], &st[i]));
			if (!r) {
				close(fds[i]);
				fds[i] = -1;
				done++;
			}
		}
		usleep(500);
	}
	for (i = 0; i < MAX_FLOWS; i++) {
		EXPECT_EQ(o.bytes, st[i].pos);
		EXPECT_EQ(0U, st[i].bad);
		EXPECT_EQ(o.bytes, st[i].dmabuf_bytes);
		EXPECT_EQ(0, client_wait(pids[i]));
		free(st[i].tokens);
	}
	free(buf);
}

/* Small writes with TCP_NODELAY: with hds-thresh 0 even a one-byte
 * segment is split at its payload, which lands in the dma-buf (as on
 * mainline: its ncdevmem takes a byte in host memory for a steering
 * error), in order.
 */
TEST_F_TIMEOUT(devmem_rx, small_segments_in_dmabuf, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 200, .chunk = 1, .nodelay = true };
	struct rx_state st = {};

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
	EXPECT_EQ(o.bytes, st.dmabuf_bytes);
	EXPECT_EQ(0U, st.linear_bytes + st.host_bytes);
}

/* A flow that starts on queue 0 (host memory) and moves onto the bound
 * queue when the RSS table changes under it: a devmem reader gets the
 * first bytes as plain data (no cmsg) and the rest as dma-buf fragments,
 * never both from one call, all in order.
 */
TEST_F_TIMEOUT(devmem_rx, flow_moves_onto_bound_queue, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 24 << 20, .chunk = 64 << 10 };
	struct rx_state st = { .binding_id = self->binding_id };

	if (variant->both_queues)
		SKIP(return, "queue 0 is bound too");
	ASSERT_EQ(0, run("ethtool -X %s equal 1", self->ifname));
	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 1 << 20,
				     false));
	ASSERT_EQ(0, run("ethtool -X %s weight 0 1", self->ifname));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes,
				     false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
	EXPECT_LE((size_t)1 << 20, st.host_bytes);
	EXPECT_LT(0U, st.dmabuf_bytes);
	EXPECT_EQ(o.bytes, st.host_bytes + st.linear_bytes + st.dmabuf_bytes);
	TH_LOG("%zu bytes: %zu in host memory, %zu in the dma-buf",
	       st.pos, st.host_bytes + st.linear_bytes, st.dmabuf_bytes);
	EXPECT_EQ(0, finish_flow(self));
	free(st.tokens);
}

/* Jumbo frames, set while the queue is bound: a 4148-byte MTU carries
 * 4096-byte payloads (one payload buffer each), 9000 spreads each frame
 * over three descriptors. IPv6, then IPv4.
 */
TEST_F_TIMEOUT(devmem_rx, jumbo_mtu_4148, FLOW_TIMEOUT)
{
	ASSERT_EQ(0, set_mtus(self, 4148));
	mtu_stream(_metadata, self, false, 4148);
	mtu_stream(_metadata, self, true, 4148);
}

TEST_F_TIMEOUT(devmem_rx, jumbo_mtu_9000, FLOW_TIMEOUT)
{
	ASSERT_EQ(0, set_mtus(self, 9000));
	mtu_stream(_metadata, self, false, 9000);
	mtu_stream(_metadata, self, true, 9000);
}

/* The MTU goes from 1500 to 9000 on both sides while a stream runs into
 * the bound queue: the link restarts, TCP retransmits, every byte still
 * arrives intact in the dma-buf.
 */
TEST_F_TIMEOUT(devmem_rx, mtu_change_mid_stream, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 24 << 20, .chunk = 64 << 10 };
	struct rx_state st = { .binding_id = self->binding_id };

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 4 << 20,
				     false));
	ASSERT_EQ(0, set_mtus(self, 9000));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes,
				     false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
	EXPECT_EQ(o.bytes, st.dmabuf_bytes);
	EXPECT_EQ(0, finish_flow(self));
	free(st.tokens);
}

/* A socket that did not ask for device memory gets EFAULT, nothing lost. */
TEST_F_TIMEOUT(devmem_rx, plain_recv_gets_efault, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 1 << 20, .chunk = 64 << 10 };
	struct rx_state st = {};
	char buf[4096];

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	wait_readable(self->fd, 64 << 10);
	EXPECT_EQ(-1, recv(self->fd, buf, sizeof(buf), 0));
	EXPECT_EQ(EFAULT, errno);
	/* the bytes are still there for a devmem read */
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
}

/* A control buffer without room for one message: the call fails with
 * EFAULT (mainline's errno for every failed devmem receive), and nothing
 * is truncated or lost.
 */
TEST_F_TIMEOUT(devmem_rx, cmsg_buffer_too_small, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 1 << 20, .chunk = 64 << 10 };
	char buf[4096], ctrl[CMSG_SPACE(8)];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
	};
	struct rx_state st = {};

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	wait_readable(self->fd, 64 << 10);
	EXPECT_EQ(-1, recvmsg(self->fd, &msg, MSG_SOCK_DEVMEM));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_FALSE(msg.msg_flags & MSG_CTRUNC);
	msg.msg_control = NULL;
	msg.msg_controllen = 0;
	EXPECT_EQ(-1, recvmsg(self->fd, &msg, MSG_SOCK_DEVMEM));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, recv(self->fd, buf, sizeof(buf),
			   MSG_SOCK_DEVMEM | MSG_PEEK));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
}

/* Tokens a child that became another user names. */
struct foreign_tokens {
	const __u32 *tokens;
	size_t n;
};

/* SO_DEVMEM_DONTNEED on a TCP socket of its own naming every token:
 * what the calls freed in all.
 */
static int dontneed_foreign(void *arg)
{
	const struct foreign_tokens *f = arg;
	struct dmabuf_token t;
	int fd, r, freed = 0;
	size_t i;

	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	for (i = 0; i < f->n; i++) {
		t.token_start = f->tokens[i];
		t.token_count = 1;
		r = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t,
			       sizeof(t));
		freed += r < 0 ? 0 : r;
	}
	close(fd);
	return freed;
}

/* Another user's socket names @tokens: how many it freed, or -errno. */
static int other_user_dontneed(const __u32 *tokens, size_t n)
{
	struct foreign_tokens f = { .tokens = tokens, .n = n };

	return devmem_as_user(1001, dontneed_foreign, &f, 60000);
}

TEST_F_TIMEOUT(devmem_rx, dontneed_bad_input, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 1 << 20, .chunk = 64 << 10 };
	struct dmabuf_token t[129] = {};
	struct rx_state st = {};
	__u32 token;
	int udp, i;

	/* before any token was handed out: nothing to free */
	ASSERT_LE(0, start_flow(_metadata, self, &o));
	t[0].token_start = 0;
	t[0].token_count = 1024;
	EXPECT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				sizeof(t[0])));
	/* optlen 0 (as mainline), not a multiple of the range size, or too
	 * many ranges
	 */
	EXPECT_EQ(-1, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				 sizeof(t[0]) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				 sizeof(t)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED,
				 (void *)8, sizeof(t[0])));
	EXPECT_EQ(EFAULT, errno);
	/* not a TCP socket */
	udp = socket(AF_INET6, SOCK_DGRAM, 0);
	ASSERT_LE(0, udp);
	EXPECT_EQ(-1, setsockopt(udp, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				 sizeof(t[0])));
	EXPECT_EQ(EBADF, errno);
	close(udp);

	/* hold a few tokens, free one twice and one that does not exist */
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 64 << 10,
				     true));
	ASSERT_LT(0U, st.ntokens);
	/* tokens are the socket's: another user's TCP socket naming them
	 * frees nothing
	 */
	EXPECT_EQ(0, other_user_dontneed(st.tokens, st.ntokens));
	token = st.tokens[0];
	t[0].token_start = token;
	t[0].token_count = 1;
	EXPECT_EQ(1, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				sizeof(t[0])));
	EXPECT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				sizeof(t[0])));
	t[0].token_start = 1U << 30;
	EXPECT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				sizeof(t[0])));
	/* a huge count near the end of the token space returns at once */
	t[0].token_start = 0xfffffff0;
	t[0].token_count = 0xffffffff;
	EXPECT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				sizeof(t[0])));
	for (i = 1; i < (int)st.ntokens; i++)
		st.tokens[i - 1] = st.tokens[i];
	st.ntokens--;
	EXPECT_EQ((long)st.ntokens, free_tokens(self->fd, &st));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(0U, st.bad);
	free(st.tokens);
}

/* One call frees at most 1024 tokens, whatever the ranges say. */
TEST_F_TIMEOUT(devmem_rx, dontneed_stops_at_1024, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 16 << 20, .chunk = 64 << 10 };
	struct dmabuf_token t = { 1, 0xffffffff };
	struct rx_state st = {};
	long held, freed = 0;
	int r;

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 8 << 20, true));
	held = st.ntokens;
	ASSERT_LT(1024, held) TH_LOG("only %ld tokens", held);
	/* tokens count from 1, as mainline's: the first call sees 1..1024 */
	r = setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t, sizeof(t));
	EXPECT_EQ(1024, r);
	freed += r;
	while (freed < held) {
		t.token_start += 1024;
		r = setsockopt(self->fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t,
			       sizeof(t));
		ASSERT_LE(0, r);
		if (!r && t.token_start > (__u32)(held * 4))
			break;
		freed += r;
	}
	EXPECT_EQ(held, freed);
	st.ntokens = 0;
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(0U, st.bad);
	free(st.tokens);
}

/* Tokens still held at close are given back by the kernel. */
TEST_F_TIMEOUT(devmem_rx, close_with_tokens_held, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 4 << 20, .chunk = 64 << 10 };
	struct rx_state st = {};

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 2 << 20, true));
	EXPECT_LT(0U, st.ntokens);
	close(self->fd);
	self->fd = -1;
	free(st.tokens);
}

/* io_uring's recvmsg with MSG_SOCK_DEVMEM delivers the same cmsgs and
 * tokens as recvmsg(2); a peek is refused the same way.
 */
TEST_F_TIMEOUT(devmem_rx, io_uring_recvmsg, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 8 << 20, .chunk = 64 << 10 };
	struct rx_state st = { .binding_id = self->binding_id };
	struct io_uring ring;
	void *buf = malloc(IOV_LEN);
	ssize_t r;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	ASSERT_LE(0, start_flow(_metadata, self, &o));
	wait_readable(self->fd, 1);
	EXPECT_EQ(-EFAULT, devmem_recv_uring(&ring, self->fd, self->map, buf,
					     &st, MSG_PEEK));
	while (st.pos < o.bytes) {
		r = devmem_recv_uring(&ring, self->fd, self->map, buf, &st, 0);
		ASSERT_LT(0, r) TH_LOG("io_uring recvmsg: %s", strerror(-r));
		ASSERT_LE(0, free_tokens(self->fd, &st));
	}
	EXPECT_EQ(0U, st.bad);
	EXPECT_FALSE(st.bad_id);
	EXPECT_EQ(0U, st.host_bytes);
	EXPECT_LT(0U, st.frags);
	EXPECT_EQ(0, finish_flow(self));
	io_uring_queue_exit(&ring);
	free(buf);
	free(st.tokens);
}

/* The live pools taking buffers from the binding, as page-pool-get shows
 * them.
 */
struct binding_pools {
	__u32 binding;
	__u32 ifindex;
	int pools;
	int bad;		/* not under the device, or without a NAPI id */
	__u64 inflight;
};

static int add_binding_pool(const struct devmem_pool_info *p, void *arg)
{
	struct binding_pools *bp = arg;

	if (p->dmabuf != bp->binding || p->detached)
		return 0;
	bp->pools++;
	bp->bad += !p->has_ifindex || p->ifindex != bp->ifindex ||
		   !p->napi_id;
	bp->inflight += p->inflight;
	return 0;
}

static int binding_pools(devmem_rx_data *self,
			 struct binding_pools *bp)
{
	*bp = (struct binding_pools){
		.binding = self->binding_id,
		.ifindex = self->ifindex,
	};
	return devmem_page_pool_dump(&self->nl, add_binding_pool, bp);
}

/* page-pool-get shows where the dma-buf's buffers are: tokens held count
 * as in flight until they are given back.
 */
TEST_F_TIMEOUT(devmem_rx, page_pool_inflight_follows_tokens, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 8 << 20, .chunk = 64 << 10 };
	struct binding_pools idle, held, back;
	struct rx_state st = {};
	size_t ntokens;

	ASSERT_EQ(0, binding_pools(self, &idle));
	EXPECT_EQ(variant->both_queues ? 2 : 1, idle.pools);
	EXPECT_EQ(0, idle.bad);
	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 4 << 20, true));
	ntokens = st.ntokens;
	ASSERT_EQ(0, binding_pools(self, &held));
	EXPECT_LE(idle.inflight + ntokens / 2, held.inflight)
		TH_LOG("idle %llu in flight, %zu tokens held, then %llu",
		       idle.inflight, ntokens, held.inflight);
	EXPECT_EQ((long)ntokens, free_tokens(self->fd, &st));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes,
				     false));
	EXPECT_EQ(0U, st.bad);
	EXPECT_EQ(0, finish_flow(self));
	ASSERT_EQ(0, binding_pools(self, &back));
	EXPECT_LE(back.inflight + ntokens / 2, held.inflight)
		TH_LOG("%llu in flight with the tokens, %llu after",
		       held.inflight, back.inflight);
	free(st.tokens);
}

/* Unbind while the flow runs and tokens are held: the queue goes back to
 * host memory, the stream goes on intact, the held tokens still free.
 */
TEST_F_TIMEOUT(devmem_rx, unbind_while_flow_runs, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 16 << 20, .chunk = 64 << 10 };
	struct devmem_queue_info qi;
	struct rx_state st = {};
	long held;

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 2 << 20, true));
	held = st.ntokens;
	ASSERT_LT(0, held);
	nl_close(&self->nl);
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	ASSERT_EQ(0, devmem_queue_get(&self->nl, self->ifindex,
				      NETDEV_QUEUE_TYPE_RX, 1, &qi));
	EXPECT_FALSE(qi.has_dmabuf);
	/* the tokens outlive the binding's owner */
	EXPECT_EQ(held, free_tokens(self->fd, &st));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
	/* after the restart the payload is host memory again */
	EXPECT_LT(0U, st.host_bytes);
	TH_LOG("%zu bytes in the dma-buf, %zu in host memory after unbind",
	       st.dmabuf_bytes, st.host_bytes);
	free(st.tokens);
}

/* Unbind with tokens held, then close: the last token frees the binding. */
TEST_F_TIMEOUT(devmem_rx, unbind_then_close_with_tokens, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 4 << 20, .chunk = 64 << 10 };
	struct rx_state st = {};

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, 1 << 20, true));
	EXPECT_LT(0U, st.ntokens);
	nl_close(&self->nl);
	close(self->fd);
	self->fd = -1;
	free(st.tokens);
}

TEST_F_TIMEOUT(devmem_rx, splice_fails, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 1 << 20, .chunk = 64 << 10 };
	struct rx_state st = {};
	int p[2];

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, pipe(p));
	wait_readable(self->fd, 64 << 10);
	EXPECT_EQ(-1, splice(self->fd, NULL, p[1], NULL, 65536,
			     SPLICE_F_NONBLOCK));
	EXPECT_EQ(EFAULT, errno);
	close(p[0]);
	close(p[1]);
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(0U, st.bad);
}

TEST_F_TIMEOUT(devmem_rx, zerocopy_receive_maps_nothing, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 1 << 20, .chunk = 64 << 10 };
	struct tcp_zerocopy_receive zc = {};
	socklen_t zl = sizeof(zc);
	struct rx_state st = {};
	size_t len = 256 << 10;
	void *addr;
	int r;

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	addr = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, addr);
	wait_readable(self->fd, 256 << 10);
	zc.address = (__u64)(unsigned long)addr;
	zc.length = len;
	r = getsockopt(self->fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zl);
	TH_LOG("TCP_ZEROCOPY_RECEIVE: %d (%s), length %u, skip hint %u, err %d",
	       r, r ? strerror(errno) : "ok", zc.length, zc.recv_skip_hint,
	       zc.err);
	EXPECT_EQ(0U, r ? 0 : zc.length);
	munmap(addr, len);
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
}

/* Times the page pools of the NIC found their provider empty. */
static long pp_alloc_fails(const char *ifname)
{
	char cmd[128], line[256];
	long sum = 0, v;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ethtool -S %s", ifname);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " rx_queue_%*u_pp_alloc_fail: %ld", &v) == 1)
			sum += v;
	pclose(f);
	return sum;
}

/* Hold every token until the dma-buf runs out: the ring empties and the
 * flow stalls. Once the tokens are back the ring must fill again on its
 * own (no frame comes in to trigger it) and the stream end intact.
 */
TEST_F_TIMEOUT(devmem_rx, provider_runs_dry_and_recovers, FLOW_TIMEOUT)
{
	struct client_opts o = { .bytes = 48 << 20, .chunk = 64 << 10 };
	struct timeval stall = { .tv_sec = 5 * devmem_time_scale() };
	struct timeval wait = { .tv_sec = 60 * devmem_time_scale() };
	struct rx_state st = {};
	long fails, held;
	void *buf = malloc(IOV_LEN);
	ssize_t r;

	ASSERT_NE(NULL, buf);
	fails = pp_alloc_fails(self->ifname);
	ASSERT_LE(0, fails);
	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &stall,
				sizeof(stall)));
	do
		r = devmem_recv(self->fd, self->map, buf, &st, 0);
	while (r > 0);
	ASSERT_EQ(-EAGAIN, r) TH_LOG("recvmsg: %s", strerror(-r));
	held = st.ntokens;
	TH_LOG("stalled after %zu bytes, %ld tokens held", st.pos, held);
	/* the whole dma-buf is with us, but for the ring's share */
	EXPECT_LT((long)(DMABUF_SIZE / 4096 / 2), held);
	EXPECT_LT(fails, pp_alloc_fails(self->ifname));

	EXPECT_EQ(held, free_tokens(self->fd, &st));
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &wait,
				sizeof(wait)));
	ASSERT_EQ(0, devmem_recv_all(self->fd, self->map, &st, o.bytes, false));
	EXPECT_EQ(o.bytes, st.pos);
	EXPECT_EQ(0U, st.bad);
	EXPECT_EQ(0, finish_flow(self));
	free(st.tokens);
	free(buf);
}

/* 1 GiB, or DEVMEM_BIG_DMABUF_MB, at least 64 (make check-kmsan asks for
 * less: its guest receives at a few Mbit/s).
 */
static size_t big_dmabuf_size(void)
{
	const char *mb = getenv("DEVMEM_BIG_DMABUF_MB");

	if (!mb || atol(mb) <= 0)
		return 1024UL << 20;
	return (size_t)(atol(mb) < 64 ? 64 : atol(mb)) << 20;
}

/* Seconds of the monotonic clock. */
static double now_sec(void)
{
	return devmem_now_ns() / 1e9;
}

/* A 1 GiB dma-buf, every page of it held as a token but the ring's share
 * (the flow stalls once it runs dry), then close(): the kernel gives back
 * a quarter of a million tokens at once without stalling a CPU (the
 * guest's runner fails the test on a soft lockup or RCU stall report).
 */
TEST_F_TIMEOUT(devmem_rx, close_with_1g_of_tokens_held, FLOW_TIMEOUT)
{
	size_t big_size = big_dmabuf_size();
	struct client_opts o = { .bytes = big_size / 4 * 3, .chunk = 64 << 10 };
	struct rx_state st = { .map_size = big_size };
	struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };
	struct timeval stall = { .tv_sec = 5 * devmem_time_scale() };
	unsigned int q = 1;
	double start;
	void *map, *buf;
	int big;
	ssize_t r;

	if (variant->both_queues)
		SKIP(return, "one binding is enough");
	/* the fixture's 64 MiB binding goes, a 1 GiB one takes queue 1 */
	nl_close(&self->nl);
	ASSERT_EQ(0, run("echo 2048 > %s",
			 "/sys/module/udmabuf/parameters/size_limit_mb"));
	big = udmabuf_create(big_size, NULL);
	ASSERT_LE(0, big);
	ASSERT_EQ(0, udmabuf_map(big, big_size, &map));
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, big, &q, 1, NULL,
				    self->extack, EXTACK_LEN))
		TH_LOG("bind-rx of %zu MiB: %s", big_size >> 20,
		       self->extack);
	buf = malloc(IOV_LEN);
	ASSERT_NE(NULL, buf);

	ASSERT_LE(0, start_flow(_metadata, self, &o));
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &stall,
				sizeof(stall)));
	do
		r = devmem_recv(self->fd, map, buf, &st, 0);
	while (r > 0);
	EXPECT_EQ(-EAGAIN, r) TH_LOG("recvmsg: %s", strerror(-r));
	EXPECT_EQ(0U, st.bad);
	EXPECT_LT((size_t)(big_size / 4096 / 2), st.ntokens);

	/* an abortive close destroys the socket, tokens and all, right in
	 * close() rather than later from a timer
	 */
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_LINGER, &abort_close,
				sizeof(abort_close)));
	start = now_sec();
	close(self->fd);
	self->fd = -1;
	TH_LOG("%zu MiB dma-buf: %zu bytes in, %zu tokens held, freed by close() in %.2f s",
	       big_size >> 20, st.pos, st.ntokens, now_sec() - start);
	kill(self->client, SIGKILL);
	client_wait(self->client);
	self->client = -1;
	nl_close(&self->nl);
	udmabuf_unmap(map, big_size);
	close(big);
	free(st.tokens);
	free(buf);
}

/* --- closing a socket that holds a million tokens ------------------------- */

struct gap_probe {
	volatile int stop;
	unsigned long long max_ns;	/* longest gap between two wakeups */
};

/* Sleep 1 ms at a time, noting the longest time between two wakeups. */
static void *gap_probe_run(void *arg)
{
	struct gap_probe *g = arg;
	unsigned long long prev = devmem_now_ns(), now;
	struct timespec ms = { .tv_nsec = 1000000 };

	while (!g->stop) {
		nanosleep(&ms, NULL);
		now = devmem_now_ns();
		if (now - prev > g->max_ns)
			g->max_ns = now - prev;
		prev = now;
	}
	return NULL;
}

/*
 * Three million tokens, one per one-byte recvmsg(), then close(): giving
 * them back must not keep the CPU (with bottom halves off) for the whole
 * table. A thread on the same CPU sleeping 1 ms at a time must wake up
 * within LATENCY_MS all along. (Measured in the debug guest: a close that
 * freed a million tokens in one loop with bottom halves off kept such a
 * thread waiting 90 ms; freed in batches, 8 ms.)
 */
#define HELD_TOKENS	3000000
#define LATENCY_MS	100

TEST_F_TIMEOUT(devmem_rx, close_with_3m_tokens_stays_preemptible,
	       FLOW_TIMEOUT * 2)
{
	struct client_opts o = { .bytes = 4 << 20, .chunk = 64 << 10 };
	struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };
	char ctrl[CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 2];
	double recv_start = now_sec();
	struct gap_probe g = {};
	size_t tokens = 0, bytes = 0;
	unsigned char byte;
	cpu_set_t cpu0;
	pthread_t th;
	double start;

	if (variant->both_queues)
		SKIP(return, "one binding is enough");
	ASSERT_LE(0, start_flow(_metadata, self, &o));
	while (tokens < HELD_TOKENS) {
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
		};
		struct cmsghdr *cm;
		ssize_t r;

		r = recvmsg(self->fd, &msg, MSG_SOCK_DEVMEM);
		ASSERT_EQ(1, r) TH_LOG("recvmsg after %zu tokens: %s", tokens,
				       r < 0 ? strerror(errno) : "EOF");
		bytes++;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_DEVMEM_DMABUF)
				tokens++;
		ASSERT_GE(bytes, tokens);
		ASSERT_LT(bytes - tokens, 4096U) TH_LOG("bytes not in the dma-buf");
	}

	TH_LOG("%zu one-byte receives in %.1f s", tokens,
	       now_sec() - recv_start);
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));
	ASSERT_EQ(0, pthread_create(&th, NULL, gap_probe_run, &g));
	ASSERT_EQ(0, pthread_setaffinity_np(th, sizeof(cpu0), &cpu0));
	usleep(200000);
	g.max_ns = 0;
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_LINGER, &abort_close,
				sizeof(abort_close)));
	start = now_sec();
	close(self->fd);
	self->fd = -1;
	start = now_sec() - start;
	usleep(100000);
	g.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%zu tokens freed by close() in %.2f s, longest wait of a thread on the same CPU %.1f ms",
	       tokens, start, g.max_ns / 1e6);
	EXPECT_GT((unsigned long long)LATENCY_MS * 1000000 * devmem_time_scale(),
		  g.max_ns);
	kill(self->client, SIGKILL);
	client_wait(self->client);
	self->client = -1;
}

/* TEST_HARNESS_MAIN, with every test's time limit stretched by
 * DEVMEM_TIME_SCALE for slow guests. Like the harness' own, the last
 * constructor of the file tells in which order constructors ran.
 */
static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

/* A test DEVMEM_RX_TESTS leaves out. */
static void not_selected(struct __test_metadata *_metadata,
			 struct __fixture_variant_metadata *variant)
{
	(void)variant;
	SKIP(return, "not in DEVMEM_RX_TESTS");
}

/* DEVMEM_RX_TESTS="a,b": run only the tests of those names. */
static bool selected(const char *name)
{
	const char *only = getenv("DEVMEM_RX_TESTS"), *p;
	size_t len = strlen(name);

	if (!only || !*only)
		return true;
	for (p = only; (p = strstr(p, name)); p += len)
		if ((p == only || p[-1] == ',') && (!p[len] || p[len] == ','))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	unsigned int scale = devmem_time_scale();
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next) {
			t->timeout *= scale;
			if (!selected(t->name))
				t->fn = not_selected;
		}
	return test_harness_run(argc, argv);
}
