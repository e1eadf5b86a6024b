// SPDX-License-Identifier: GPL-2.0
/*
 * The netdev generic netlink family: dev-get, queue-get, page-pool-get,
 * page-pool-stats-get, the notifications, and every way bind-rx can be
 * refused. A refused bind leaves no binding behind.
 *
 * Runs in the devmem guest: needs an igb device in the current namespace
 * (the topology's NICs outside of their namespaces). Binding that succeeds
 * is tested by bind_rx.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/capability.h>

/* The harness' own SIGALRM handler has an unused parameter (-Wextra). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../kselftest_harness.h"
#pragma GCC diagnostic pop
#include "devmem_lib.h"

#define EXTACK_LEN	256

/* ifindex of the first igb interface, or -1. */
static int find_igb(char *name, size_t len)
{
	return devmem_find_driver_iface("igb", name, len);
}

struct queue_count {
	int rx, tx, bound;
};

static int count_queue(const struct devmem_queue_info *q, void *arg)
{
	struct queue_count *c = arg;

	if (q->type == NETDEV_QUEUE_TYPE_RX)
		c->rx++;
	else
		c->tx++;
	c->bound += q->has_dmabuf;
	return 0;
}

struct dev_seen {
	int ifindex;
	bool seen;
	int count;
};

static int saw_dev(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[NETDEV_A_DEV_IFINDEX + 1];
	struct dev_seen *d = arg;
	const void *attrs;
	size_t len;
	__u32 ifindex;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, NETDEV_A_DEV_IFINDEX, attrs, len);
	if (nl_attr_get_u32(tb[NETDEV_A_DEV_IFINDEX], &ifindex))
		return -EPROTO;
	d->count++;
	if ((int)ifindex == d->ifindex)
		d->seen = true;
	return 0;
}

FIXTURE(netdev_nl) {
	struct nl_ctx nl;
	int ifindex;
	char ifname[IFNAMSIZ];
	int rx_queues;
	int dmabuf;
	int memfd;
	char extack[EXTACK_LEN];
};

FIXTURE_SETUP(netdev_nl)
{
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	self->ifindex = find_igb(self->ifname, sizeof(self->ifname));
	ASSERT_LT(0, self->ifindex) TH_LOG("no igb interface");
	self->rx_queues = devmem_rx_queue_count(self->ifname);
	ASSERT_LT(0, self->rx_queues);
	self->dmabuf = udmabuf_create(4 << 20, &self->memfd);
	ASSERT_LE(0, self->dmabuf) TH_LOG("udmabuf: %s", strerror(-self->dmabuf));
}

FIXTURE_TEARDOWN(netdev_nl)
{
	struct queue_count c = {};
	struct nl_ctx nl;

	/* Whatever a test did, no queue may be left bound. */
	nl_close(&self->nl);
	ethtool_set_hds_thresh(self->ifindex, 256, NULL, 0);
	close(self->dmabuf);
	close(self->memfd);
	if (devmem_nl_open(&nl))
		return;
	EXPECT_EQ(0, devmem_queue_dump(&nl, self->ifindex, count_queue, &c));
	EXPECT_EQ(0, c.bound);
	nl_close(&nl);
}

TEST_F(netdev_nl, dev_get_do)
{
	struct dev_seen d = { .ifindex = self->ifindex };
	struct nl_msg m;

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_DEV_GET, 0);
	nl_put_u32(&m, NETDEV_A_DEV_IFINDEX, self->ifindex);
	ASSERT_EQ(0, nl_request(&self->nl, &m, saw_dev, &d, NULL, 0));
	EXPECT_TRUE(d.seen);
	EXPECT_EQ(1, d.count);
}

TEST_F(netdev_nl, dev_get_errors)
{
	struct nl_msg m;

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_DEV_GET, 0);
	nl_put_u32(&m, NETDEV_A_DEV_IFINDEX, 1000000);
	EXPECT_EQ(-ENODEV, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_DEV_GET, 0);
	EXPECT_EQ(-EINVAL, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));
	EXPECT_EQ(NETDEV_A_DEV_IFINDEX, self->nl.miss_type);

	/* ifindex 0 is below the policy's minimum */
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_DEV_GET, 0);
	nl_put_u32(&m, NETDEV_A_DEV_IFINDEX, 0);
	EXPECT_EQ(-ERANGE, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));
}

TEST_F(netdev_nl, dev_get_dump)
{
	struct dev_seen d = { .ifindex = self->ifindex };
	struct nl_msg m;

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_DEV_GET, NLM_F_DUMP);
	ASSERT_EQ(0, nl_request(&self->nl, &m, saw_dev, &d, NULL, 0));
	EXPECT_TRUE(d.seen);
	EXPECT_LE(3, d.count); /* lo and two igb */
}

TEST_F(netdev_nl, queue_get)
{
	struct devmem_queue_info q;

	ASSERT_EQ(0, devmem_queue_get(&self->nl, self->ifindex,
				      NETDEV_QUEUE_TYPE_RX, 0, &q));
	EXPECT_EQ(self->ifindex, (int)q.ifindex);
	EXPECT_EQ(0U, q.id);
	EXPECT_EQ((__u32)NETDEV_QUEUE_TYPE_RX, q.type);
	EXPECT_FALSE(q.has_dmabuf);

	ASSERT_EQ(0, devmem_queue_get(&self->nl, self->ifindex,
				      NETDEV_QUEUE_TYPE_TX, 0, &q));
	EXPECT_EQ((__u32)NETDEV_QUEUE_TYPE_TX, q.type);

	EXPECT_EQ(-EINVAL, devmem_queue_get(&self->nl, self->ifindex,
					    NETDEV_QUEUE_TYPE_RX,
					    self->rx_queues, &q));
	/* no queue type 2: out of the policy's range */
	EXPECT_EQ(-ERANGE, devmem_queue_get(&self->nl, self->ifindex, 2, 0, &q));
	EXPECT_EQ(-ENODEV, devmem_queue_get(&self->nl, 1000000,
					    NETDEV_QUEUE_TYPE_RX, 0, &q));
}

TEST_F(netdev_nl, queue_dump)
{
	struct queue_count c = {};

	ASSERT_EQ(0, devmem_queue_dump(&self->nl, self->ifindex, count_queue, &c));
	EXPECT_EQ(self->rx_queues, c.rx);
	EXPECT_LT(0, c.tx);
	EXPECT_EQ(0, c.bound);

	memset(&c, 0, sizeof(c));
	ASSERT_EQ(0, devmem_queue_dump(&self->nl, 0, count_queue, &c));
	EXPECT_LE(2 * self->rx_queues, c.rx);
}

/* The number a shell command prints, or -1. */
static long shell_number(const char *cmd)
{
	long n = -1;
	FILE *f;

	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

#define DUMP_PAIRS	40
#define VETH_PAIR_CMD	"ip link add dmp%d index %d type veth peer name dmq%d index %d"

TEST_F(netdev_nl, unimplemented_command)
{
	struct nl_msg m;

	/* napi-set keeps its number: 6.1 has no per-NAPI settings to set */
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_NAPI_SET, 0);
	EXPECT_EQ(-EOPNOTSUPP, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));
}

/* The pools of one device that a dump or notifications showed. */
struct pools_seen {
	int ifindex;
	int live;		/* not detached */
	int with_napi;		/* live, with a NAPI id */
	int with_dmabuf;	/* live, with a binding id */
	__u64 last_id;		/* of a live pool */
};

static int saw_pool(const struct devmem_pool_info *p, void *arg)
{
	struct pools_seen *ps = arg;

	if (!p->has_ifindex || p->ifindex != (__u32)ps->ifindex ||
	    p->detached)
		return 0;
	ps->live++;
	ps->with_napi += p->napi_id != 0;
	ps->with_dmabuf += p->dmabuf != 0;
	ps->last_id = p->id;
	return 0;
}

/* The counters a page-pool-stats-get answer carried. */
struct pool_stats_seen {
	__u64 id;
	int messages;
	int counters;
};

static int saw_pool_stats(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[NETDEV_A_PAGE_POOL_STATS_MAX + 1];
	const struct nlattr *info[NETDEV_A_PAGE_POOL_MAX + 1];
	struct pool_stats_seen *ss = arg;
	const void *attrs;
	size_t len;
	__u64 v;
	int i;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, NETDEV_A_PAGE_POOL_STATS_MAX, attrs, len);
	if (!tb[NETDEV_A_PAGE_POOL_STATS_INFO])
		return -EPROTO;
	nl_attr_parse(info, NETDEV_A_PAGE_POOL_MAX,
		      nl_attr_data(tb[NETDEV_A_PAGE_POOL_STATS_INFO]),
		      nl_attr_len(tb[NETDEV_A_PAGE_POOL_STATS_INFO]));
	if (nl_attr_get_uint(info[NETDEV_A_PAGE_POOL_ID], &ss->id))
		return -EPROTO;
	ss->messages++;
	for (i = NETDEV_A_PAGE_POOL_STATS_ALLOC_FAST;
	     i <= NETDEV_A_PAGE_POOL_STATS_RECYCLE_RELEASED_REFCNT; i++)
		ss->counters += !nl_attr_get_uint(tb[i], &v);
	return 0;
}

/* page-pool-get and page-pool-stats-get: igb's header split rings each
 * have a pool, listed under the device with the ring's NAPI id; and every
 * way a request can be wrong.
 */
TEST_F(netdev_nl, page_pool_get)
{
	struct pools_seen ps = { .ifindex = self->ifindex };
	struct pool_stats_seen ss = {};
	struct devmem_pool_info p;
	struct nlattr *nest;
	struct nl_msg m;

	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->ifname));
	ASSERT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, true, NULL, 0));
	/* a device never opened still shows every queue it was made with */
	self->rx_queues = devmem_rx_queue_count(self->ifname);
	ASSERT_EQ(0, devmem_page_pool_dump(&self->nl, saw_pool, &ps));
	EXPECT_EQ(self->rx_queues, ps.live);
	EXPECT_EQ(ps.live, ps.with_napi);
	EXPECT_EQ(0, ps.with_dmabuf);

	ASSERT_EQ(0, devmem_page_pool_get(&self->nl, ps.last_id, &p));
	EXPECT_EQ(ps.last_id, p.id);
	EXPECT_EQ((__u32)self->ifindex, p.ifindex);
	EXPECT_FALSE(p.detached);
	EXPECT_EQ(p.inflight * 4096, p.inflight_mem);

	/* no id, a short id, an id no pool has */
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_GET, 0);
	EXPECT_EQ(-EINVAL, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_GET, 0);
	nl_put_u16(&m, NETDEV_A_PAGE_POOL_ID, 1);
	EXPECT_EQ(-EINVAL, nl_request(&self->nl, &m, NULL, NULL, self->extack,
				      EXTACK_LEN));
	EXPECT_STREQ("An unsigned integer of 4 or 8 bytes is expected",
		     self->extack);
	EXPECT_EQ(-ENOENT, devmem_page_pool_get(&self->nl, 0xfffffff0, &p));
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_GET, 0);
	nl_put_u64(&m, NETDEV_A_PAGE_POOL_ID, ps.last_id);
	EXPECT_EQ(0, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));
	/* ids run from 1 to U32_MAX (the spec's checks): 0 and an id of 64
	 * bits whose low half names a pool are out of range
	 */
	EXPECT_EQ(-ERANGE, devmem_page_pool_get(&self->nl, 0, &p));
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_GET, 0);
	nl_put_u64(&m, NETDEV_A_PAGE_POOL_ID, (1ULL << 32) | ps.last_id);
	EXPECT_EQ(-ERANGE, nl_request(&self->nl, &m, NULL, NULL, self->extack,
				      EXTACK_LEN));
	EXPECT_STREQ("An id from 1 to 4294967295 is expected", self->extack);

	/* statistics of one pool, of all, and the wrong ways to ask */
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_STATS_GET, 0);
	nest = nl_nest_start(&m, NETDEV_A_PAGE_POOL_STATS_INFO);
	nl_put_u32(&m, NETDEV_A_PAGE_POOL_ID, ps.last_id);
	nl_nest_end(&m, nest);
	ASSERT_EQ(0, nl_request(&self->nl, &m, saw_pool_stats, &ss, NULL, 0));
	EXPECT_EQ(1, ss.messages);
	EXPECT_EQ(ps.last_id, ss.id);
	EXPECT_EQ(11, ss.counters);

	ss.messages = 0;
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_STATS_GET,
			   NLM_F_DUMP);
	EXPECT_EQ(0, nl_request(&self->nl, &m, saw_pool_stats, &ss, NULL, 0));
	EXPECT_LE(ps.live, ss.messages);

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_STATS_GET, 0);
	EXPECT_EQ(-EINVAL, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_PAGE_POOL_STATS_GET, 0);
	nest = nl_nest_start(&m, NETDEV_A_PAGE_POOL_STATS_INFO);
	nl_put_u32(&m, NETDEV_A_PAGE_POOL_IFINDEX, self->ifindex);
	nl_nest_end(&m, nest);
	EXPECT_EQ(-EINVAL, nl_request(&self->nl, &m, NULL, NULL, self->extack,
				      EXTACK_LEN));
	EXPECT_STREQ("Name the pool by its id only", self->extack);

	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
	devmem_shell("ip link set %s down", self->ifname);
}

/* NAPI instances of one device, as napi-get answered. */
struct napis_seen {
	int count;
	int with_irq;
	int with_pid;
	__u32 ifindex;
	__u32 last_id;
	bool bad;		/* an answer without ifindex or id */
};

static int saw_napi(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[NETDEV_A_NAPI_MAX + 1];
	struct napis_seen *ns = arg;
	const void *attrs;
	__u32 v;
	size_t len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, NETDEV_A_NAPI_MAX, attrs, len);
	if (nl_attr_get_u32(tb[NETDEV_A_NAPI_IFINDEX], &ns->ifindex) ||
	    nl_attr_get_u32(tb[NETDEV_A_NAPI_ID], &ns->last_id) ||
	    !ns->last_id)
		ns->bad = true;
	ns->count++;
	ns->with_irq += !nl_attr_get_u32(tb[NETDEV_A_NAPI_IRQ], &v);
	ns->with_pid += !nl_attr_get_u32(tb[NETDEV_A_NAPI_PID], &v) && v;
	return 0;
}

static int napi_dump(struct nl_ctx *nl, int ifindex, struct napis_seen *ns)
{
	struct nl_msg m;

	memset(ns, 0, sizeof(*ns));
	nl_msg_init_family(&m, nl, NETDEV_CMD_NAPI_GET, NLM_F_DUMP);
	if (ifindex)
		nl_put_u32(&m, NETDEV_A_NAPI_IFINDEX, ifindex);
	return nl_request(nl, &m, saw_napi, ns, NULL, 0);
}

/* napi-get: igb's NAPI instances with their interrupts (and their kernel
 * threads once threaded), and each queue's napi-id naming one of them.
 */
TEST_F(netdev_nl, napi_get)
{
	struct devmem_queue_info q;
	struct napis_seen ns, one;
	struct nl_msg m;

	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->ifname));
	self->rx_queues = devmem_rx_queue_count(self->ifname);
	ASSERT_EQ(0, napi_dump(&self->nl, self->ifindex, &ns));
	EXPECT_FALSE(ns.bad);
	EXPECT_LE(self->rx_queues, ns.count);
	EXPECT_EQ(ns.count, ns.with_irq);
	EXPECT_EQ(0, ns.with_pid);

	ASSERT_EQ(0, devmem_queue_get(&self->nl, self->ifindex,
				      NETDEV_QUEUE_TYPE_RX, 0, &q));
	ASSERT_TRUE(q.has_napi_id);
	memset(&one, 0, sizeof(one));
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_NAPI_GET, 0);
	nl_put_u32(&m, NETDEV_A_NAPI_ID, q.napi_id);
	ASSERT_EQ(0, nl_request(&self->nl, &m, saw_napi, &one, NULL, 0));
	EXPECT_EQ(1, one.count);
	EXPECT_EQ((__u32)self->ifindex, one.ifindex);
	EXPECT_EQ(q.napi_id, one.last_id);
	EXPECT_EQ(0, devmem_queue_get(&self->nl, self->ifindex,
				      NETDEV_QUEUE_TYPE_TX, 0, &q));
	EXPECT_TRUE(q.has_napi_id);

	ASSERT_EQ(0, devmem_shell("echo 1 > /sys/class/net/%s/threaded",
				  self->ifname));
	ASSERT_EQ(0, napi_dump(&self->nl, self->ifindex, &ns));
	EXPECT_EQ(ns.count, ns.with_pid);
	devmem_shell("echo 0 > /sys/class/net/%s/threaded", self->ifname);

	/* no id, an id no NAPI instance has */
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_NAPI_GET, 0);
	EXPECT_EQ(-EINVAL, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_NAPI_GET, 0);
	nl_put_u32(&m, NETDEV_A_NAPI_ID, 0x7ffffff0);
	EXPECT_EQ(-ENOENT, nl_request(&self->nl, &m, NULL, NULL, NULL, 0));

	/* down: no interrupts */
	ASSERT_EQ(0, devmem_shell("ip link set %s down", self->ifname));
	ASSERT_EQ(0, napi_dump(&self->nl, self->ifindex, &ns));
	EXPECT_EQ(0, ns.with_irq);
}

/* The counters qstats-get answered. */
struct qstats_seen {
	int answers;
	int rx_queues, tx_queues;
	bool bad;		/* an answer without ifindex or a counter */
	__u64 rx_packets;
	__u64 tx_packets;
};

static int saw_qstats(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[NETDEV_A_QSTATS_MAX + 1];
	struct qstats_seen *qs = arg;
	__u64 rx = 0, tx = 0, v;
	bool has_rx, has_tx;
	const void *attrs;
	__u32 type;
	size_t len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EPROTO;
	nl_attr_parse(tb, NETDEV_A_QSTATS_MAX, attrs, len);
	qs->answers++;
	if (nl_attr_get_u32(tb[NETDEV_A_QSTATS_IFINDEX], &type))
		qs->bad = true;
	/* a device answer has both directions, a queue's only its own */
	has_rx = true;
	has_tx = true;
	if (!nl_attr_get_u32(tb[NETDEV_A_QSTATS_QUEUE_TYPE], &type)) {
		has_rx = type == NETDEV_QUEUE_TYPE_RX;
		has_tx = !has_rx;
		if (has_rx)
			qs->rx_queues++;
		else
			qs->tx_queues++;
	}
	if (has_rx &&
	    (nl_attr_get_uint(tb[NETDEV_A_QSTATS_RX_PACKETS], &rx) ||
	     nl_attr_get_uint(tb[NETDEV_A_QSTATS_RX_HW_DROPS], &v) ||
	     nl_attr_get_uint(tb[NETDEV_A_QSTATS_RX_ALLOC_FAIL], &v)))
		qs->bad = true;
	if (has_tx && nl_attr_get_uint(tb[NETDEV_A_QSTATS_TX_PACKETS], &tx))
		qs->bad = true;
	/* and nothing of the other direction */
	if (!has_tx && tb[NETDEV_A_QSTATS_TX_PACKETS])
		qs->bad = true;
	if (!has_rx && tb[NETDEV_A_QSTATS_RX_PACKETS])
		qs->bad = true;
	qs->rx_packets += rx;
	qs->tx_packets += tx;
	return 0;
}

static int qstats_dump(struct nl_ctx *nl, int ifindex, int scope,
		       struct qstats_seen *qs, char *extack)
{
	struct nl_msg m;

	memset(qs, 0, sizeof(*qs));
	nl_msg_init_family(&m, nl, NETDEV_CMD_QSTATS_GET, NLM_F_DUMP);
	if (ifindex)
		nl_put_u32(&m, NETDEV_A_QSTATS_IFINDEX, ifindex);
	if (scope >= 0)
		nl_put_u32(&m, NETDEV_A_QSTATS_SCOPE, scope);
	return nl_request(nl, &m, saw_qstats, qs, extack, EXTACK_LEN);
}

/* 6.1 lists a namespace's devices in the order they were created, not by
 * ifindex, and a dump resumes by ifindex: devices created later with a
 * lower ifindex must not be skipped when a dump takes several messages.
 */
TEST_F_TIMEOUT(netdev_nl, dumps_see_every_device, 900)
{
	struct dev_seen d = { .ifindex = self->ifindex };
	struct queue_count c = {};
	struct napis_seen mine, all;
	struct qstats_seen qall;
	long devs, rxqs;
	struct nl_msg m;
	int i;

	/* high indexes first, then low ones */
	for (i = 0; i < 2 * DUMP_PAIRS; i++) {
		int base = i < DUMP_PAIRS ? 5000 : 1000;

		ASSERT_EQ(0, devmem_shell(VETH_PAIR_CMD, i, base + i, i,
					  base + 2000 + i));
	}
	devs = shell_number("ls /sys/class/net | wc -l");
	rxqs = shell_number("ls -d /sys/class/net/*/queues/rx-* | wc -l");

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_DEV_GET, NLM_F_DUMP);
	EXPECT_EQ(0, nl_request(&self->nl, &m, saw_dev, &d, NULL, 0));
	EXPECT_EQ(devs, d.count);
	EXPECT_EQ(0, devmem_queue_dump(&self->nl, 0, count_queue, &c));
	EXPECT_EQ(rxqs, c.rx);
	/* dumps that write nothing for most devices walk all of them too
	 * (in batches of devices), and still find the NIC's entries
	 */
	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->ifname));
	ASSERT_EQ(0, napi_dump(&self->nl, self->ifindex, &mine));
	ASSERT_EQ(0, napi_dump(&self->nl, 0, &all));
	EXPECT_FALSE(all.bad);
	EXPECT_LE(mine.count, all.count);
	ASSERT_EQ(0, qstats_dump(&self->nl, 0, NETDEV_QSTATS_SCOPE_QUEUE,
				 &qall, NULL));
	EXPECT_FALSE(qall.bad);
	EXPECT_LE(devmem_rx_queue_count(self->ifname), qall.rx_queues);

	for (i = 0; i < 2 * DUMP_PAIRS; i++)
		devmem_shell("ip link del dmp%d", i);
}

/* qstats-get: a device's totals are the sum of its queues; per queue,
 * one answer for each RX and TX queue.
 */
TEST_F(netdev_nl, qstats_get)
{
	struct qstats_seen dev, queues;

	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->ifname));
	self->rx_queues = devmem_rx_queue_count(self->ifname);
	ASSERT_EQ(0, qstats_dump(&self->nl, self->ifindex, -1, &dev, NULL));
	EXPECT_EQ(1, dev.answers);
	EXPECT_FALSE(dev.bad);
	ASSERT_EQ(0, qstats_dump(&self->nl, self->ifindex,
				 NETDEV_QSTATS_SCOPE_QUEUE, &queues, NULL));
	EXPECT_FALSE(queues.bad);
	EXPECT_EQ(self->rx_queues, queues.rx_queues);
	EXPECT_LT(0, queues.tx_queues);
	EXPECT_EQ(queues.rx_queues + queues.tx_queues, queues.answers);
	/* counters only grow: the queues, read later, hold at least the
	 * totals
	 */
	EXPECT_LE(dev.rx_packets, queues.rx_packets);
	EXPECT_LE(dev.tx_packets, queues.tx_packets);

	/* every device of the namespace with per-queue counters */
	ASSERT_EQ(0, qstats_dump(&self->nl, 0, -1, &dev, NULL));
	EXPECT_LE(1, dev.answers);

	/* loopback keeps none; an unknown scope */
	EXPECT_EQ(-EOPNOTSUPP, qstats_dump(&self->nl, 1, -1, &dev,
					   self->extack));
	EXPECT_STREQ("The device keeps no per-queue counters", self->extack);
	EXPECT_EQ(-EINVAL, qstats_dump(&self->nl, self->ifindex, 2, &dev,
				       self->extack));
	EXPECT_STREQ("Unknown scope", self->extack);
	devmem_shell("ip link set %s down", self->ifname);
}

/* What a test waits for on a notification socket. */
struct ntf_wait {
	__u8 cmd;
	__u64 id;		/* a pool id, or an ifindex; 0: any */
	__u32 dmabuf;		/* page-pool: the binding; 0: any */
	struct devmem_pool_info pool;
};

static int await_pool(const struct nlmsghdr *nlh, void *arg)
{
	struct ntf_wait *w = arg;
	struct devmem_pool_info p;

	if (devmem_pool_parse(nlh, &p) || p.cmd != w->cmd)
		return 0;
	if ((w->id && p.id != w->id) || (w->dmabuf && p.dmabuf != w->dmabuf))
		return 0;
	w->pool = p;
	return 1;
}

static int await_dev(const struct nlmsghdr *nlh, void *arg)
{
	const struct genlmsghdr *gh = NLMSG_DATA(nlh);
	const struct nlattr *tb[NETDEV_A_DEV_MAX + 1];
	struct ntf_wait *w = arg;
	const void *attrs;
	__u32 ifindex;
	size_t len;

	attrs = nl_genl_attrs(nlh, &len);
	if (!attrs || gh->cmd != w->cmd)
		return 0;
	nl_attr_parse(tb, NETDEV_A_DEV_MAX, attrs, len);
	if (nl_attr_get_u32(tb[NETDEV_A_DEV_IFINDEX], &ifindex) ||
	    ifindex != w->id)
		return 0;
	return 1;
}

/* The "page-pool" group sees a bind create a pool on the binding and an
 * unbind detach and free it; the "mgmt" group sees devices come and go.
 */
TEST_F_TIMEOUT(netdev_nl, notifications, 120)
{
	struct ntf_wait w = {};
	struct nl_ctx ntf;
	unsigned int q = 0;
	__u32 binding;
	__u64 pool_id;

	ASSERT_EQ(0, devmem_nl_open(&ntf));
	ASSERT_EQ(0, nl_join_group(&ntf, NETDEV_FAMILY_NAME,
				   NETDEV_MCGRP_PAGE_POOL));
	ASSERT_EQ(0, nl_join_group(&ntf, NETDEV_FAMILY_NAME,
				   NETDEV_MCGRP_MGMT));
	EXPECT_EQ(-ENOENT, nl_join_group(&ntf, NETDEV_FAMILY_NAME, "nope"));

	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->ifname));
	ASSERT_EQ(0, ethtool_rings_for_devmem(self->ifindex, NULL, 0));
	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, &binding, self->extack, EXTACK_LEN))
		TH_LOG("bind-rx: %s", self->extack);

	w.cmd = NETDEV_CMD_PAGE_POOL_ADD_NTF;
	w.dmabuf = binding;
	ASSERT_EQ(1, nl_wait_ntf(&ntf, await_pool, &w, 10000));
	EXPECT_EQ((__u32)self->ifindex, w.pool.ifindex);
	EXPECT_FALSE(w.pool.detached);
	EXPECT_NE(0ULL, w.pool.napi_id);
	pool_id = w.pool.id;

	/* unbind: the queue leaves the pool, which goes once it is empty */
	nl_close(&self->nl);
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	w = (struct ntf_wait){ .cmd = NETDEV_CMD_PAGE_POOL_CHANGE_NTF,
			       .id = pool_id };
	ASSERT_EQ(1, nl_wait_ntf(&ntf, await_pool, &w, 10000));
	EXPECT_TRUE(w.pool.detached);
	w = (struct ntf_wait){ .cmd = NETDEV_CMD_PAGE_POOL_DEL_NTF,
			       .id = pool_id };
	ASSERT_EQ(1, nl_wait_ntf(&ntf, await_pool, &w, 30000));

	ASSERT_EQ(0, devmem_shell("ip link add ntf0 index 3999 type veth %s",
				  "peer name ntf1 index 3998"));
	w = (struct ntf_wait){ .cmd = NETDEV_CMD_DEV_ADD_NTF, .id = 3999 };
	EXPECT_EQ(1, nl_wait_ntf(&ntf, await_dev, &w, 10000));
	ASSERT_EQ(0, devmem_shell("ip link del ntf0"));
	w = (struct ntf_wait){ .cmd = NETDEV_CMD_DEV_DEL_NTF, .id = 3998 };
	EXPECT_EQ(1, nl_wait_ntf(&ntf, await_dev, &w, 10000));

	nl_close(&ntf);
	EXPECT_EQ(0, ethtool_set_hds_thresh(self->ifindex, 256, NULL, 0));
	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
	devmem_shell("ip link set %s down", self->ifname);
}

TEST_F(netdev_nl, bind_rx_missing_attrs)
{
	struct nl_msg m;

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_BIND_RX, 0);
	nl_put_u32(&m, NETDEV_A_DMABUF_FD, self->dmabuf);
	devmem_msg_put_queue(&m, 0, NETDEV_QUEUE_TYPE_RX);
	EXPECT_EQ(-EINVAL, devmem_bind_request(&self->nl, &m, NULL, NULL, 0));
	EXPECT_EQ(NETDEV_A_DMABUF_IFINDEX, self->nl.miss_type);

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_BIND_RX, 0);
	nl_put_u32(&m, NETDEV_A_DMABUF_IFINDEX, self->ifindex);
	devmem_msg_put_queue(&m, 0, NETDEV_QUEUE_TYPE_RX);
	EXPECT_EQ(-EINVAL, devmem_bind_request(&self->nl, &m, NULL, NULL, 0));
	EXPECT_EQ(NETDEV_A_DMABUF_FD, self->nl.miss_type);

	/* an empty queue list */
	EXPECT_EQ(-EINVAL, devmem_bind_rx(&self->nl, self->ifindex,
					  self->dmabuf, NULL, 0, NULL,
					  self->extack, EXTACK_LEN));
	EXPECT_EQ(NETDEV_A_DMABUF_QUEUES, self->nl.miss_type);
}

TEST_F(netdev_nl, bind_rx_bad_queues)
{
	unsigned int q = self->rx_queues;
	struct nl_msg m;

	EXPECT_EQ(-EINVAL, devmem_bind_rx(&self->nl, self->ifindex,
					  self->dmabuf, &q, 1, NULL,
					  self->extack, EXTACK_LEN));
	EXPECT_STREQ("RX queue index out of range", self->extack);

	q = UINT_MAX;
	EXPECT_EQ(-EINVAL, devmem_bind_rx(&self->nl, self->ifindex,
					  self->dmabuf, &q, 1, NULL,
					  self->extack, EXTACK_LEN));

	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_BIND_RX, 0);
	nl_put_u32(&m, NETDEV_A_DMABUF_IFINDEX, self->ifindex);
	nl_put_u32(&m, NETDEV_A_DMABUF_FD, self->dmabuf);
	devmem_msg_put_queue(&m, 0, NETDEV_QUEUE_TYPE_TX);
	EXPECT_EQ(-EINVAL, devmem_bind_request(&self->nl, &m, NULL,
					       self->extack, EXTACK_LEN));
	EXPECT_STREQ("Only RX queues can be bound to a dma-buf", self->extack);

	/* a queue without a type */
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_BIND_RX, 0);
	nl_put_u32(&m, NETDEV_A_DMABUF_IFINDEX, self->ifindex);
	nl_put_u32(&m, NETDEV_A_DMABUF_FD, self->dmabuf);
	devmem_msg_put_queue(&m, 0, -1);
	EXPECT_EQ(-EINVAL, devmem_bind_request(&self->nl, &m, NULL, NULL, 0));
	EXPECT_EQ(NETDEV_A_QUEUE_TYPE, self->nl.miss_type);

	/* an unknown queue type */
	nl_msg_init_family(&m, &self->nl, NETDEV_CMD_BIND_RX, 0);
	nl_put_u32(&m, NETDEV_A_DMABUF_IFINDEX, self->ifindex);
	nl_put_u32(&m, NETDEV_A_DMABUF_FD, self->dmabuf);
	devmem_msg_put_queue(&m, 0, 7);
	EXPECT_EQ(-ERANGE, devmem_bind_request(&self->nl, &m, NULL, NULL, 0));
}

TEST_F(netdev_nl, bind_rx_bad_device)
{
	unsigned int q = 0;

	EXPECT_EQ(-ENODEV, devmem_bind_rx(&self->nl, 1000000, self->dmabuf,
					  &q, 1, NULL, self->extack,
					  EXTACK_LEN));
	/* lo has no queue management: refused by the driver check */
	EXPECT_EQ(-EOPNOTSUPP, devmem_bind_rx(&self->nl, 1, self->dmabuf,
					      &q, 1, NULL, self->extack,
					      EXTACK_LEN));
}

/* The fixture leaves tcp-data-split off: bind-rx is refused. */
TEST_F(netdev_nl, bind_rx_data_split_off)
{
	unsigned int q = 0;

	ASSERT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
	EXPECT_EQ(-EINVAL, devmem_bind_rx(&self->nl, self->ifindex,
					  self->dmabuf, &q, 1, NULL,
					  self->extack, EXTACK_LEN));
	EXPECT_STREQ("tcp-data-split is not enabled on the device",
		     self->extack);
}

/* tcp-data-split through ethtool netlink: igb takes it, lo refuses it. */
TEST_F(netdev_nl, tcp_data_split_set)
{
	ASSERT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, true,
						self->extack, EXTACK_LEN));
	EXPECT_EQ(ETHTOOL_TCP_DATA_SPLIT_ENABLED,
		  ethtool_get_tcp_data_split(self->ifindex));
	ASSERT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false,
						self->extack, EXTACK_LEN));
	EXPECT_EQ(ETHTOOL_TCP_DATA_SPLIT_DISABLED,
		  ethtool_get_tcp_data_split(self->ifindex));
	EXPECT_EQ(-EOPNOTSUPP, ethtool_set_tcp_data_split(1, true, NULL, 0));
}

/* RINGS_SET of attribute @type = @val, a u8 when @is_u8 else a u32, as
 * a newer ethtool would send it.
 */
static int rings_set(int ifindex, __u16 type, __u32 val, bool is_u8)
{
	struct nl_msg *m = malloc(sizeof(*m));
	struct nlattr *hdr;
	struct nl_ctx nl;
	int err;

	if (!m)
		return -ENOMEM;
	err = nl_open(&nl, ETHTOOL_GENL_NAME);
	if (err)
		goto out;
	nl_msg_init_family(m, &nl, ETHTOOL_MSG_RINGS_SET, 0);
	hdr = nl_nest_start(m, ETHTOOL_A_RINGS_HEADER);
	nl_put_u32(m, ETHTOOL_A_HEADER_DEV_INDEX, ifindex);
	nl_nest_end(m, hdr);
	if (is_u8)
		nl_put_u8(m, type, val);
	else
		nl_put_u32(m, type, val);
	err = nl_request(&nl, m, NULL, NULL, NULL, 0);
	nl_close(&nl);
out:
	free(m);
	return err;
}

/* hds-thresh (mainline's ethtool attributes 17 and 18): igb takes 0
 * ("header split") and 256 ("header split always" with its 256-byte
 * header buffer) and refuses other values with EINVAL, more than 256 in
 * the ethtool core (as mainline does); the attributes mainline numbers in
 * between are refused; lo has no hds-thresh.
 */
TEST_F(netdev_nl, hds_thresh_set)
{
	__u32 thresh = 1, max = 0;

	EXPECT_EQ(17, ETHTOOL_A_RINGS_HDS_THRESH);
	EXPECT_EQ(18, ETHTOOL_A_RINGS_HDS_THRESH_MAX);
	ASSERT_EQ(0, ethtool_set_hds_thresh(self->ifindex, 0, self->extack,
					    EXTACK_LEN)) TH_LOG("%s", self->extack);
	ASSERT_EQ(0, ethtool_get_hds_thresh(self->ifindex, &thresh, &max));
	EXPECT_EQ(0U, thresh);
	EXPECT_EQ(256U, max);
	EXPECT_EQ(-EINVAL, ethtool_set_hds_thresh(self->ifindex, 100,
						  self->extack, EXTACK_LEN));
	EXPECT_STREQ("igb: hds-thresh must be 0 or 256", self->extack);
	ASSERT_EQ(0, ethtool_get_hds_thresh(self->ifindex, &thresh, NULL));
	EXPECT_EQ(0U, thresh);
	ASSERT_EQ(0, ethtool_set_hds_thresh(self->ifindex, 256, NULL, 0));
	ASSERT_EQ(0, ethtool_get_hds_thresh(self->ifindex, &thresh, NULL));
	EXPECT_EQ(256U, thresh);
	EXPECT_EQ(-EINVAL, ethtool_set_hds_thresh(self->ifindex, 257,
						  self->extack, EXTACK_LEN));
	EXPECT_STREQ("hds-thresh exceeds hds-thresh-max", self->extack);
	EXPECT_EQ(-EINVAL, ethtool_set_hds_thresh(self->ifindex, ~0U, NULL, 0));
	ASSERT_EQ(0, ethtool_get_hds_thresh(self->ifindex, &thresh, NULL));
	EXPECT_EQ(256U, thresh);

	/* RX_PUSH, TX_PUSH_BUF_LEN(_MAX): reserved, not taken */
	EXPECT_EQ(-EINVAL, rings_set(self->ifindex,
				     ETHTOOL_A_RINGS_TX_PUSH_BUF_LEN, 64, false));
	EXPECT_EQ(-EINVAL, rings_set(self->ifindex,
				     ETHTOOL_A_RINGS_HDS_THRESH_MAX, 64, false));

	/* lo has no ring parameters at all */
	EXPECT_EQ(-EOPNOTSUPP, ethtool_set_hds_thresh(1, 0, NULL, 0));
	EXPECT_EQ(-EOPNOTSUPP, ethtool_get_hds_thresh(1, &thresh, NULL));
}

/* bind-rx needs every frame split at its payload: refused with hds-thresh
 * above 0 (EINVAL, as mainline), and hds-thresh and tcp-data-split stay
 * as they are while the queue is bound.
 */
TEST_F(netdev_nl, bind_rx_needs_hds_thresh_0)
{
	unsigned int q = 0;
	__u32 thresh;

	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->ifname));
	ASSERT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, true, NULL, 0));
	ASSERT_EQ(0, ethtool_set_hds_thresh(self->ifindex, 256, NULL, 0));
	EXPECT_EQ(-EINVAL, devmem_bind_rx(&self->nl, self->ifindex,
					  self->dmabuf, &q, 1, NULL,
					  self->extack, EXTACK_LEN));
	EXPECT_STREQ("hds-thresh is not 0 on the device", self->extack);

	ASSERT_EQ(0, ethtool_set_hds_thresh(self->ifindex, 0, NULL, 0));
	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, NULL, self->extack, EXTACK_LEN))
		TH_LOG("bind-rx: %s", self->extack);
	EXPECT_EQ(-EINVAL, ethtool_set_hds_thresh(self->ifindex, 256,
						  self->extack, EXTACK_LEN));
	EXPECT_STREQ("hds-thresh must stay 0 while an RX queue has a memory provider",
		     self->extack);
	EXPECT_EQ(-EINVAL, ethtool_set_tcp_data_split(self->ifindex, false,
						      self->extack,
						      EXTACK_LEN));
	EXPECT_STREQ("tcp-data-split cannot be disabled while an RX queue has a memory provider",
		     self->extack);
	/* "unknown" (0) is not "enabled" either */
	EXPECT_EQ(-EINVAL, rings_set(self->ifindex,
				     ETHTOOL_A_RINGS_TCP_DATA_SPLIT,
				     ETHTOOL_TCP_DATA_SPLIT_UNKNOWN, true));
	ASSERT_EQ(0, ethtool_get_hds_thresh(self->ifindex, &thresh, NULL));
	EXPECT_EQ(0U, thresh);

	/* unbound with the netlink socket: both can change again */
	nl_close(&self->nl);
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	EXPECT_EQ(0, ethtool_set_hds_thresh(self->ifindex, 256, NULL, 0));
	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
	devmem_shell("ip link set %s down", self->ifname);
}

/* Runs @fn in a child; returns what it exited with. */
static int in_child(int (*fn)(int ifindex, int dmabuf), int ifindex,
		    int dmabuf)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(fn(ifindex, dmabuf));
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int bind_rx_errno(int ifindex, int dmabuf)
{
	unsigned int q = 0;
	struct nl_ctx nl;
	int err;

	if (devmem_nl_open(&nl))
		return 100;
	err = devmem_bind_rx(&nl, ifindex, dmabuf, &q, 1, NULL, NULL, 0);
	nl_close(&nl);
	return -err;
}

static int bind_rx_without_cap_net_admin(int ifindex, int dmabuf)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 101;
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &= ~CAP_TO_MASK(CAP_NET_ADMIN);
	if (syscall(SYS_capset, &hdr, data))
		return 102;
	return bind_rx_errno(ifindex, dmabuf);
}

static int bind_rx_from_other_netns(int ifindex, int dmabuf)
{
	if (unshare(CLONE_NEWNET))
		return 103;
	return bind_rx_errno(ifindex, dmabuf);
}

TEST_F(netdev_nl, bind_rx_permission)
{
	EXPECT_EQ(EPERM, in_child(bind_rx_without_cap_net_admin, self->ifindex,
				  self->dmabuf));
}

/* The igb's ifindex names no device in a new namespace. A fallback
 * tunnel device (sit0) created there would take the first free index,
 * which can be the igb's: keep those to the initial namespace meanwhile.
 */
TEST_F(netdev_nl, bind_rx_device_in_other_netns)
{
	long fb = shell_number("sysctl -n net.core.fb_tunnels_only_for_init_net");

	ASSERT_EQ(0, devmem_shell("sysctl -qw net.core.fb_tunnels_only_for_init_net=1"));
	EXPECT_EQ(ENODEV, in_child(bind_rx_from_other_netns, self->ifindex,
				   self->dmabuf));
	devmem_shell("sysctl -qw net.core.fb_tunnels_only_for_init_net=%ld",
		     fb < 0 ? 0 : fb);
}

/* The root of a new user namespace, its own network namespace holding the
 * igb (moved there by the initial namespace's root), may not bind it:
 * CAP_NET_ADMIN in the initial user namespace, as mainline asks.
 */
struct userns_child {
	pid_t pid;
	int ready, moved;	/* pipes' ends: child to parent, parent to child */
};

static int userns_child_start(struct userns_child *uc, const char *ifname,
			      int dmabuf)
{
	int to_parent[2], to_child[2];
	unsigned int q = 0;
	struct nl_ctx nl;
	unsigned char c = 0;
	int err;

	if (pipe(to_parent))
		return -errno;
	if (pipe(to_child)) {
		close(to_parent[0]);
		close(to_parent[1]);
		return -errno;
	}
	uc->pid = fork();
	if (uc->pid < 0) {
		err = -errno;
		close(to_parent[0]);
		close(to_parent[1]);
		close(to_child[0]);
		close(to_child[1]);
		return err;
	}
	if (uc->pid) {
		close(to_parent[1]);
		close(to_child[0]);
		uc->ready = to_parent[0];
		uc->moved = to_child[1];
		return 0;
	}
	/* tells the parent unshare()'s errno, 0 when it worked */
	c = unshare(CLONE_NEWUSER | CLONE_NEWNET) ? errno : 0;
	if (write(to_parent[1], &c, 1) != 1 || c ||
	    read(to_child[0], &c, 1) != 1)
		_exit(104);
	if (devmem_nl_open(&nl))
		_exit(100);
	err = devmem_bind_rx(&nl, if_nametoindex(ifname), dmabuf, &q, 1, NULL,
			     NULL, 0);
	nl_close(&nl);
	_exit(-err);
}

static bool iface_is_up(const char *ifname)
{
	char path[64];
	unsigned int flags = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/flags", ifname);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%x", &flags) != 1)
		flags = 0;
	fclose(f);
	return flags & IFF_UP;
}

static bool wait_iface_back(const char *ifname)
{
	int tries;

	for (tries = 0; tries < 100 * (int)devmem_time_scale(); tries++) {
		if (if_nametoindex(ifname))
			return true;
		usleep(100000);
	}
	return false;
}

TEST_F(netdev_nl, bind_rx_refused_to_user_namespace_root)
{
	long fb = shell_number("sysctl -n net.core.fb_tunnels_only_for_init_net");
	bool was_up = iface_is_up(self->ifname);
	struct userns_child uc;
	int status = -1, unshare_err;
	bool back = false;
	unsigned char c = 0;

	ASSERT_EQ(0, devmem_shell("sysctl -qw net.core.fb_tunnels_only_for_init_net=1"));
	ASSERT_EQ(0, userns_child_start(&uc, self->ifname, self->dmabuf));
	ASSERT_EQ(1, read(uc.ready, &c, 1));
	unshare_err = c;
	if (!unshare_err) {
		EXPECT_EQ(0, devmem_shell("ip link set dev %s netns %d",
					  self->ifname, uc.pid));
		EXPECT_EQ(1, write(uc.moved, &c, 1));
	}
	waitpid(uc.pid, &status, 0);
	close(uc.ready);
	close(uc.moved);
	if (!unshare_err) {
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(EPERM, WEXITSTATUS(status));
		/* the namespace dies with the child and gives the igb
		 * back, down
		 */
		back = wait_iface_back(self->ifname);
	}
	devmem_shell("sysctl -qw net.core.fb_tunnels_only_for_init_net=%ld",
		     fb < 0 ? 0 : fb);
	/* without CONFIG_USER_NS unshare() says EINVAL; anything else
	 * (EPERM in a chroot, for one) is a failure here
	 */
	if (unshare_err == EINVAL)
		SKIP(return, "no user namespaces (CONFIG_USER_NS)");
	ASSERT_EQ(0, unshare_err)
		TH_LOG("unshare: %s", strerror(unshare_err));
	ASSERT_TRUE(back) TH_LOG("%s did not come back", self->ifname);
	EXPECT_EQ(self->ifindex, (int)if_nametoindex(self->ifname));
	if (was_up)
		EXPECT_EQ(0, devmem_shell("ip link set dev %s up",
					  self->ifname));
}

TEST_HARNESS_MAIN
