// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile client of nccl-devmem-helper (tests/helper.sh runs it as
 * nobody in the server's namespace, the helper started with -r 2 -c 4):
 *
 *   helper_hostile all SOCKET IFNAME QUEUE   every case below
 *   helper_hostile refused SOCKET IFNAME QUEUE   bind must get EPERM
 *   helper_hostile xdev SOCKET IFINDEX QUEUE   a socket of another netns
 *
 * Each case prints "ok" or "not ok" and a line; the exit status is the
 * number of failures.  It checks the helper's answers (errno and reason),
 * that a connection it drops is dropped, that rules come and go (the
 * NIC's rule count, the location), that a socket moved to another flow
 * leaves no rule behind, that the binding goes with the connection, and
 * that the helper still serves afterwards.
 *
 *   helper_hostile odd-fd SOCKET IFNAME QUEUE   a memfd sent: dropped,
 *                                                then refused (a minute)
 *   helper_hostile served SOCKET IFNAME QUEUE   a request answered
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/udmabuf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helper_proto.h"
#include "plugin.h"

static const char *sock_path, *ifname;
static int ifindex, failures;
static unsigned queue;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures += !ok;
}

static int conn(void)
{
	char why[200];
	int h = dm_helper_open(sock_path, why, sizeof(why));

	if (h < 0) {
		printf("# %s\n", why);
		exit(100);
	}
	return h;
}

/* Sends raw bytes with nfds copies of fd; returns the reply's err, or a
 * positive value when no reply came (EOF: 1). */
static int raw(int h, const void *buf, size_t len, int fd, int nfds, struct dm_helper_rep *r)
{
	union {
		char b[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd p = { .fd = h, .events = POLLIN };
	struct cmsghdr *c;
	int i;
	ssize_t n;

	if (nfds) {
		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.b;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		for (i = 0; i < nfds; i++)
			memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
	}
	/* a refusal comes at once, with the end of the connection */
	if (sendmsg(h, &m, MSG_NOSIGNAL) != (ssize_t)len && errno != EPIPE && errno != ECONNRESET)
		return 2;
	if (poll(&p, 1, 5000) != 1)
		return 3;
	n = recv(h, r, sizeof(*r), MSG_DONTWAIT);
	if (n < 0 && errno == ECONNRESET)	/* a refusal: the reset, then the reply */
		n = recv(h, r, sizeof(*r), MSG_DONTWAIT);
	if (n == 0)
		return 1;
	if (n != (ssize_t)sizeof(*r))
		return 4;
	r->why[sizeof(r->why) - 1] = 0;
	return r->err;
}

static int req(int h, uint16_t op, unsigned q, int loc, int fd, struct dm_helper_rep *r)
{
	struct dm_helper_req m;

	memset(&m, 0, sizeof(m));
	m.magic = DM_HELPER_MAGIC;
	m.version = DM_HELPER_VERSION;
	m.op = op;
	m.ifindex = ifindex;
	m.nqueues = 1;
	m.queues[0] = q;
	m.loc = loc;
	return raw(h, &m, sizeof(m), fd, fd >= 0, r);
}

/* 1 when the helper closed the connection (after its reply). */
static int closed(int h)
{
	struct pollfd p = { .fd = h, .events = POLLIN };
	char b[8];

	return poll(&p, 1, 2000) == 1 && recv(h, b, sizeof(b), MSG_DONTWAIT) == 0;
}

static int udmabuf(size_t size)
{
	struct udmabuf_create c = { 0 };
	int memfd, dev, fd;

	memfd = memfd_create("hostile", MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, (off_t)size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		return -1;
	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0)
		return -1;
	c.memfd = (uint32_t)memfd;
	c.size = size;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	close(dev);
	close(memfd);
	return fd;
}

/* A connected TCP pair over loopback: the client end; the other in *srv. */
static int tcp_pair(int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int ls, c;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &l))
		return -1;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	*srv = accept(ls, NULL, NULL);
	close(ls);
	return *srv < 0 ? -1 : c;
}

static int rule_count(void)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), r;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&cnt;
	r = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : (int)cnt.rule_cnt;
	close(fd);
	return r;
}

static void framing(void)
{
	struct dm_helper_req m;
	struct dm_helper_rep r;
	int h, pfd[2], e;

	h = conn();
	e = raw(h, "0123456789", 10, -1, 0, &r);
	check(e == -EINVAL && closed(h), "a 10-byte request: %d (%s), connection dropped", e,
	      e <= 0 ? r.why : "");
	close(h);

	h = conn();
	memset(&m, 0, sizeof(m));
	m.magic = 0x12345678;
	m.version = DM_HELPER_VERSION;
	e = raw(h, &m, sizeof(m), -1, 0, &r);
	check(e == -EPROTO && closed(h), "a wrong magic: %d, connection dropped", e);
	close(h);

	/* fds of a kind the helper takes (any other gets its sender refused) */
	pfd[0] = socket(AF_INET, SOCK_DGRAM, 0);
	pfd[1] = socket(AF_INET, SOCK_DGRAM, 0);
	h = conn();
	m.magic = DM_HELPER_MAGIC;
	m.op = DM_HELPER_BIND_RX;
	e = raw(h, &m, sizeof(m), pfd[0], 8, &r);
	check(e == -EINVAL && !closed(h), "8 fds with a request: %d (%s), connection kept", e,
	      e <= 0 ? r.why : "");
	close(h);

	h = conn();
	e = raw(h, &m, sizeof(m), pfd[0], 2, &r);
	check(e == -EINVAL && !closed(h), "2 fds: %d (%s), connection kept", e, r.why);
	m.op = 77;
	e = raw(h, &m, sizeof(m), -1, 0, &r);
	check(e == -EOPNOTSUPP, "operation 77: %d (%s)", e, r.why);
	m.op = DM_HELPER_UNSTEER;
	e = raw(h, &m, sizeof(m), pfd[0], 1, &r);
	check(e == -EINVAL, "unsteer with an fd: %d (%s)", e, r.why);
	close(h);
	close(pfd[0]);
	close(pfd[1]);
}

static void binds(int h, int dmabuf)
{
	struct dm_helper_rep r;
	int e, pfd[1], keep = ifindex;

	e = req(h, DM_HELPER_BIND_RX, queue, -1, -1, &r);
	check(e == -EBADF, "bind without a dma-buf: %d (%s)", e, r.why);
	pfd[0] = socket(AF_INET, SOCK_STREAM, 0);
	e = req(h, DM_HELPER_BIND_RX, queue, -1, pfd[0], &r);
	check(e == -EINVAL, "bind of a socket: %d (%s)", e, r.why);
	close(pfd[0]);
	ifindex = 99999;
	e = req(h, DM_HELPER_BIND_RX, queue, -1, dmabuf, &r);
	check(e == -ENODEV, "bind on ifindex 99999: %d (%s)", e, r.why);
	ifindex = 1;
	e = req(h, DM_HELPER_BIND_RX, queue, -1, dmabuf, &r);
	check(e == -EPERM, "bind on lo: %d (%s)", e, r.why);
	ifindex = keep;
	e = req(h, DM_HELPER_BIND_RX, 0, -1, dmabuf, &r);
	check(e == -EPERM, "bind of queue 0: %d (%s)", e, r.why);
}

static void steers(int h, int dmabuf)
{
	struct dm_helper_rep r;
	int e, fd;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	e = req(h, DM_HELPER_STEER, queue, -1, fd, &r);
	check(e == -EPROTONOSUPPORT, "steer a UDP socket: %d (%s)", e, r.why);
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	e = req(h, DM_HELPER_STEER, queue, -1, fd, &r);
	check(e == -EPROTONOSUPPORT, "steer a Unix socket: %d (%s)", e, r.why);
	close(fd);
	e = req(h, DM_HELPER_STEER, queue, -1, dmabuf, &r);
	check(e == -ENOTSOCK, "steer a dma-buf: %d (%s)", e, r.why);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	e = req(h, DM_HELPER_STEER, queue, -1, fd, &r);
	check(e == -ENOTCONN, "steer an unconnected TCP socket: %d (%s)", e, r.why);
	if (!listen(fd, 1)) {
		e = req(h, DM_HELPER_STEER, queue, -1, fd, &r);
		check(e == -ENOTCONN, "steer a listening TCP socket: %d (%s)", e, r.why);
	}
	close(fd);
	e = req(h, DM_HELPER_STEER, queue, -1, -1, &r);
	check(e == -EBADF, "steer without an fd: %d (%s)", e, r.why);
}

static void all(void)
{
	struct dm_helper_rep r;
	char why[300];
	int h, h2, dmabuf, e, s[3], peer[3], base, i, loc[3];
	uint32_t id;

	framing();
	dmabuf = udmabuf(16 << 20);
	if (dmabuf < 0) {
		check(0, "udmabuf: %s", strerror(errno));
		return;
	}
	h = conn();
	s[0] = tcp_pair(&peer[0]);
	e = req(h, DM_HELPER_STEER, queue, -1, s[0], &r);
	check(e == -EINVAL, "steer before bind: %d (%s)", e, r.why);
	binds(h, dmabuf);
	base = rule_count();
	e = dm_helper_bind_rx(h, ifindex, dmabuf, &queue, 1, &id, why, sizeof(why));
	check(!e, "bind of queue %u: %d, binding %u (%s)", queue, e, id, e ? why : "");
	if (e)
		return;
	e = req(h, DM_HELPER_BIND_RX, queue, -1, dmabuf, &r);
	check(e == -EBUSY, "a second bind on the connection: %d (%s)", e, r.why);
	steers(h, dmabuf);
	e = req(h, DM_HELPER_STEER, queue + 1, -1, s[0], &r);
	check(e == -EINVAL, "steer to a queue not bound: %d (%s)", e, r.why);
	for (i = 0; i < 3; i++) {
		if (i)
			s[i] = tcp_pair(&peer[i]);
		e = dm_helper_steer(h, s[i], queue, &loc[i], why, sizeof(why));
		if (i < 2)
			check(!e && loc[i] >= 0, "steer TCP socket %d: %d, rule %d (%s)", i, e,
			      loc[i], e ? why : "");
		else
			check(e == -ENOSPC, "a third rule, over the helper's -r 2: %d (%s)", e,
			      why);
	}
	check(rule_count() == base + 2, "%d rules on %s, %d expected", rule_count(), ifname,
	      base + 2);
	e = dm_helper_unsteer(h, 15);
	check(e == -ENOENT, "unsteer a location not the connection's: %d", e);
	e = dm_helper_unsteer(h, loc[1]);
	check(!e && rule_count() == base + 1, "unsteer rule %d: %d, %d rules", loc[1], e,
	      rule_count());
	e = dm_helper_unsteer(h, loc[1]);
	check(e == -ENOENT, "unsteer it again: %d", e);
	/* the steered socket reset by its peer: the sweep deletes its rule */
	{
		struct linger lg = { 1, 0 };

		setsockopt(peer[0], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(peer[0]);
		peer[0] = -1;
		for (i = 0; i < 30 && rule_count() != base; i++)
			usleep(100000);
		check(rule_count() == base, "the rule of a reset socket deleted: %d rules, %d "
		      "expected", rule_count(), base);
		e = dm_helper_unsteer(h, loc[0]);
		check(!e, "unsteer of that rule: %d", e);
	}
	/* the socket moved to another flow (connect AF_UNSPEC, then connect
	 * again): unsteer deletes the rule of the flow steered, not of the
	 * socket's new one; and the sweep deletes it unasked */
	for (i = 0; i < 2; i++) {
		struct sockaddr sa = { .sa_family = AF_UNSPEC };
		int p2, s2 = tcp_pair(&p2), was;
		struct sockaddr_in to;
		socklen_t tl = sizeof(to);

		e = dm_helper_steer(h, s[1], queue, &loc[1], why, sizeof(why));
		was = rule_count();
		getpeername(s2, (struct sockaddr *)&to, &tl);
		close(s2);
		close(p2);
		/* a listener at the old peer's address: s[1] connects there */
		s2 = socket(AF_INET, SOCK_STREAM, 0);
		to.sin_port = 0;
		bind(s2, (struct sockaddr *)&to, sizeof(to));
		listen(s2, 1);
		tl = sizeof(to);
		getsockname(s2, (struct sockaddr *)&to, &tl);
		if (e || connect(s[1], &sa, sizeof(sa)) ||
		    connect(s[1], (struct sockaddr *)&to, sizeof(to))) {
			check(0, "steer and reconnect: %d (%s) %s", e, why, strerror(errno));
			close(s2);
			continue;
		}
		if (i == 0) {
			e = dm_helper_unsteer(h, loc[1]);
			check(!e && rule_count() == was - 1, "unsteer of a socket moved to another "
			      "flow: %d, %d rules, %d expected", e, rule_count(), was - 1);
		} else {
			int k;

			for (k = 0; k < 30 && rule_count() != was - 1; k++)
				usleep(100000);
			check(rule_count() == was - 1, "the sweep deletes the rule of a socket "
			      "moved to another flow: %d rules, %d expected", rule_count(),
			      was - 1);
			e = dm_helper_unsteer(h, loc[1]);
			check(!e, "unsteer of that rule: %d", e);
		}
		p2 = accept(s2, NULL, NULL);
		close(s2);
		close(peer[1]);
		peer[1] = p2;
	}
	/* SO_BINDTODEVICE (any user may): such a socket does not keep its
	 * 4-tuple from others; refused, and swept when bound after steering */
	{
		int p3, s3 = tcp_pair(&p3), was, k;

		setsockopt(s3, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3);
		e = dm_helper_steer(h, s3, queue, &loc[0], why, sizeof(why));
		check(e == -EPERM, "steer a socket bound to a device: %d (%s)", e, why);
		close(s3);
		close(p3);
		s3 = tcp_pair(&p3);
		e = dm_helper_steer(h, s3, queue, &loc[0], why, sizeof(why));
		was = rule_count();
		if (e || setsockopt(s3, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3)) {
			check(0, "steer, then SO_BINDTODEVICE: %d (%s) %s", e, why, strerror(errno));
		} else {
			for (k = 0; k < 30 && rule_count() != was - 1; k++)
				usleep(100000);
			check(rule_count() == was - 1, "the sweep deletes the rule of a socket bound "
			      "to a device after: %d rules, %d expected", rule_count(), was - 1);
			e = dm_helper_unsteer(h, loc[0]);
			check(!e, "unsteer of that rule: %d", e);
		}
		close(s3);
		close(p3);
	}
	/* the connection closed with a rule: the helper deletes it, and lets
	 * go of the binding */
	e = dm_helper_steer(h, s[2], queue, &loc[2], why, sizeof(why));
	check(!e, "steer again: %d (%s)", e, e ? why : "");
	close(h);
	for (i = 0; i < 30 && rule_count() != base; i++)
		usleep(100000);
	check(rule_count() == base, "connection closed: %d rules, %d expected", rule_count(),
	      base);
	h2 = conn();
	for (i = 0; i < 50; i++) {
		e = dm_helper_bind_rx(h2, ifindex, dmabuf, &queue, 1, &id, why, sizeof(why));
		if (e != -EEXIST && e != -EBUSY)
			break;
		usleep(100000);
	}
	check(!e && i < 50, "the queue bound again once the connection closed: %d after %d "
	      "tries (%s)", e, i, e ? why : "");
	close(h2);
	/* connections per user: -c 4 */
	{
		int hs[5];

		for (i = 0; i < 5; i++)
			hs[i] = conn();
		e = req(hs[4], DM_HELPER_UNSTEER, queue, 3, -1, &r);
		check(e == -EUSERS, "a fifth connection, over -c 4: %d (%s)", e,
		      e <= 0 ? r.why : "");
		e = req(hs[3], DM_HELPER_UNSTEER, queue, 3, -1, &r);
		check(e == -ENOENT, "the fourth is served: %d", e);
		for (i = 0; i < 5; i++)
			close(hs[i]);
	}
	for (i = 0; i < 3; i++) {
		close(s[i]);
		if (peer[i] >= 0)
			close(peer[i]);
	}
	close(dmabuf);
}

int main(int argc, char **argv)
{
	struct dm_helper_rep r;
	char why[300];
	int h, e, dmabuf, loc0;
	uint32_t id;

	if (argc != 5)
		return 100;
	sock_path = argv[2];
	queue = (unsigned)atoi(argv[4]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "xdev")) {
		int s, peer;

		ifindex = atoi(argv[3]);
		dmabuf = udmabuf(16 << 20);
		h = conn();
		e = dm_helper_bind_rx(h, ifindex, dmabuf, &queue, 1, &id, why, sizeof(why));
		check(!e, "bind from another namespace, by ifindex %d: %d (%s)", ifindex, e,
		      e ? why : "");
		s = tcp_pair(&peer);
		e = req(h, DM_HELPER_STEER, queue, -1, s, &r);
		check(e == -EXDEV, "steer a socket of another network namespace: %d (%s)", e,
		      r.why);
		return failures;
	}
	ifname = argv[3];
	ifindex = (int)if_nametoindex(ifname);
	if (!strcmp(argv[1], "refused")) {
		dmabuf = udmabuf(16 << 20);
		h = conn();
		e = dm_helper_bind_rx(h, ifindex, dmabuf, &queue, 1, &id, why, sizeof(why));
		check(e == -EPERM, "a user outside the group: %d (%s)", e, why);
		return failures;
	}
	if (!strcmp(argv[1], "served")) {
		h = conn();
		e = dm_helper_unsteer(h, 3);
		check(e == -ENOENT, "served: unsteer of no rule: %d", e);
		return failures;
	}
	if (!strcmp(argv[1], "odd-fd")) {
		int mfd = memfd_create("odd", 0), p2, s2;

		h = conn();
		e = req(h, DM_HELPER_STEER, queue, -1, mfd, &r);
		check(e == -EPERM && closed(h), "a memfd sent: %d (%s), connection dropped", e,
		      e <= 0 ? r.why : "");
		close(h);
		h = conn();
		s2 = tcp_pair(&p2);
		e = dm_helper_steer(h, s2, queue, &loc0, why, sizeof(why));
		check(e == -EPERM && strstr(why, "refused for"), "then refused: %d (%s)", e, why);
		return failures;
	}
	all();
	return failures;
}
