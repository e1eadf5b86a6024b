// SPDX-License-Identifier: GPL-2.0
/*
 * bind-rx on igb with header split: binding, what queue-get shows while
 * bound and after, the binding's lifetime (socket close, owner killed),
 * errors that only a supporting driver reaches, repeated bind/unbind and
 * a 1 GiB dma-buf.
 *
 * No traffic reaches the bound queues here: the peer NIC stays down.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The harness' own SIGALRM handler has an unused parameter (-Wextra). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../kselftest_harness.h"
#pragma GCC diagnostic pop
#include "devmem_lib.h"

#define EXTACK_LEN	256
#define SIZE_64M	(64UL << 20)
/* Tests that bind several times, reset the device or reload its driver: a
 * bind and its unbind take about 600 ms on the debug kernel under TCG.
 */
#define RECONFIG_TIMEOUT	300

static int find_igb(char *name, size_t len)
{
	return devmem_find_driver_iface("igb", name, len);
}

static int set_link(const char *ifname, bool up)
{
	struct ifreq ifr = {};
	int fd, ret;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (!ret) {
		if (up)
			ifr.ifr_flags |= IFF_UP;
		else
			ifr.ifr_flags &= ~IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

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

/* Binding id of RX queue @q (0 when not bound), or -errno. */
static int rxq_binding(int ifindex, int q)
{
	struct devmem_queue_info info;
	struct nl_ctx nl;
	int err;

	err = devmem_nl_open(&nl);
	if (err)
		return err;
	err = devmem_queue_get(&nl, ifindex, NETDEV_QUEUE_TYPE_RX, q, &info);
	nl_close(&nl);
	if (err)
		return err;
	return info.has_dmabuf ? (int)info.dmabuf : 0;
}

/* MemAvailable of /proc/meminfo in kB, or -1. */
static long mem_available_kb(void)
{
	static const char *const keys[] = { "MemAvailable", NULL };
	unsigned long long kb;

	return devmem_read_meminfo(keys, &kb) == 1 ? (long)kb : -1;
}

/* Milliseconds of the monotonic clock. */
static double now_ms(void)
{
	return devmem_now_ns() / 1e6;
}

FIXTURE(bind_rx) {
	struct nl_ctx nl;
	int ifindex;
	char ifname[IFNAMSIZ];
	int dmabuf;
	int memfd;
	char extack[EXTACK_LEN];
};

FIXTURE_SETUP(bind_rx)
{
	char peer[IFNAMSIZ];

	self->ifindex = find_igb(self->ifname, sizeof(self->ifname));
	ASSERT_LT(0, self->ifindex) TH_LOG("no igb interface");
	/* the second igb NIC is the peer: down, so nothing arrives */
	snprintf(peer, sizeof(peer), "%s", self->ifname);
	peer[strlen(peer) - 1] ^= 1;
	set_link(peer, false);
	ASSERT_EQ(0, set_link(self->ifname, true));
	ASSERT_EQ(0, ethtool_rings_for_devmem(self->ifindex, self->extack,
					      EXTACK_LEN))
		TH_LOG("tcp-data-split on, hds-thresh 0: %s", self->extack);
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	self->dmabuf = udmabuf_create(SIZE_64M, &self->memfd);
	ASSERT_LE(0, self->dmabuf) TH_LOG("udmabuf: %s", strerror(-self->dmabuf));
}

FIXTURE_TEARDOWN(bind_rx)
{
	char path[PATH_MAX];

	/* what a test that stopped half way may have left */
	write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "Y");
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/sriov_numvfs",
		 self->ifname);
	write_file(path, "0");
	nl_close(&self->nl);
	close(self->dmabuf);
	close(self->memfd);
	EXPECT_EQ(0, rxq_binding(self->ifindex, 0));
	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
}

TEST_F(bind_rx, bind_shows_in_queue_get_until_close)
{
	unsigned int q = 0;
	__u32 id = 0;

	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, &id, self->extack, EXTACK_LEN))
		TH_LOG("bind-rx: %s", self->extack);
	EXPECT_LT(0U, id);
	EXPECT_EQ((int)id, rxq_binding(self->ifindex, 0));
	if (rxq_binding(self->ifindex, 1) >= 0)
		EXPECT_EQ(0, rxq_binding(self->ifindex, 1));

	/* while bound, tcp-data-split cannot be turned off (mainline's EINVAL) */
	EXPECT_EQ(-EINVAL, ethtool_set_tcp_data_split(self->ifindex, false,
						      self->extack, EXTACK_LEN));

	nl_close(&self->nl);
	EXPECT_EQ(0, rxq_binding(self->ifindex, 0));
}

TEST_F(bind_rx, bind_two_queues)
{
	unsigned int q[2] = { 0, 1 };
	__u32 id;

	if (rxq_binding(self->ifindex, 1) < 0)
		SKIP(return, "one RX queue only");
	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    q, 2, &id, self->extack, EXTACK_LEN))
		TH_LOG("bind-rx: %s", self->extack);
	EXPECT_EQ((int)id, rxq_binding(self->ifindex, 0));
	EXPECT_EQ((int)id, rxq_binding(self->ifindex, 1));
}

TEST_F(bind_rx, queue_already_bound)
{
	unsigned int q = 0;
	struct nl_ctx other;
	__u32 id;

	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, &id, NULL, 0));
	ASSERT_EQ(0, devmem_nl_open(&other));
	EXPECT_EQ(-EEXIST, devmem_bind_rx(&other, self->ifindex, self->dmabuf,
					  &q, 1, NULL, self->extack,
					  EXTACK_LEN));
	EXPECT_STREQ("The RX queue already has a memory provider", self->extack);
	/* the other socket closing does not unbind ours */
	nl_close(&other);
	EXPECT_EQ((int)id, rxq_binding(self->ifindex, 0));
}

TEST_F(bind_rx, queue_listed_twice)
{
	unsigned int q[2] = { 0, 0 };

	EXPECT_EQ(-EINVAL, devmem_bind_rx(&self->nl, self->ifindex,
					  self->dmabuf, q, 2, NULL,
					  self->extack, EXTACK_LEN));
	EXPECT_STREQ("An RX queue is listed twice", self->extack);
	EXPECT_EQ(0, rxq_binding(self->ifindex, 0));
}

TEST_F(bind_rx, fd_not_a_dmabuf)
{
	unsigned int q = 0;

	EXPECT_EQ(-EINVAL, devmem_bind_rx(&self->nl, self->ifindex,
					  self->memfd, &q, 1, NULL,
					  self->extack, EXTACK_LEN));
	EXPECT_STREQ("The file descriptor is not a dma-buf", self->extack);
	EXPECT_EQ(-EBADF, devmem_bind_rx(&self->nl, self->ifindex, 100000,
					 &q, 1, NULL, NULL, 0));
	EXPECT_EQ(0, rxq_binding(self->ifindex, 0));
}

TEST_F(bind_rx, dmabuf_too_small_for_ring)
{
	unsigned int q = 0;
	int small, memfd;

	/* 64 pages, and the default igb RX ring has 256 descriptors */
	small = udmabuf_create(64 * getpagesize(), &memfd);
	ASSERT_LE(0, small);
	EXPECT_EQ(-E2BIG, devmem_bind_rx(&self->nl, self->ifindex, small, &q,
					 1, NULL, self->extack, EXTACK_LEN));
	EXPECT_STREQ("The dma-buf is too small for the RX rings of the queues",
		     self->extack);
	close(small);
	close(memfd);
}

TEST_F(bind_rx, device_down)
{
	unsigned int q = 0;

	ASSERT_EQ(0, set_link(self->ifname, false));
	EXPECT_EQ(-ENETDOWN, devmem_bind_rx(&self->nl, self->ifindex,
					    self->dmabuf, &q, 1, NULL,
					    self->extack, EXTACK_LEN));
	EXPECT_STREQ("The device is down", self->extack);
	ASSERT_EQ(0, set_link(self->ifname, true));
}

TEST_F(bind_rx, owner_killed)
{
	int pipefd[2], status, tries;
	unsigned int q = 0;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct nl_ctx nl;

		if (devmem_nl_open(&nl) ||
		    devmem_bind_rx(&nl, self->ifindex, self->dmabuf, &q, 1,
				   NULL, NULL, 0))
			_exit(1);
		c = 1;
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_LT(0, rxq_binding(self->ifindex, 0));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* the socket is released with the process */
	for (tries = 0; tries < 50 && rxq_binding(self->ifindex, 0); tries++)
		usleep(100000);
	EXPECT_EQ(0, rxq_binding(self->ifindex, 0));
	close(pipefd[0]);
	close(pipefd[1]);
}

/* A dma-buf of 4 MiB: the ring's pages and some spare, and each cycle
 * maps, splits and frees 1024 pages instead of the fixture's 16384.
 */
#define CYCLES_DMABUF_SIZE	(4UL << 20)

TEST_F_TIMEOUT(bind_rx, bind_unbind_1000_cycles, 1800)
{
	long before, after;
	unsigned int q = 0;
	struct nl_ctx nl;
	int i, err = 0;
	double start;
	int dmabuf;

	dmabuf = udmabuf_create(CYCLES_DMABUF_SIZE, NULL);
	ASSERT_LE(0, dmabuf) TH_LOG("udmabuf: %s", strerror(-dmabuf));
	before = mem_available_kb();
	start = now_ms();
	for (i = 0; i < 1000 && !err; i++) {
		err = devmem_nl_open(&nl);
		if (!err)
			err = devmem_bind_rx(&nl, self->ifindex, dmabuf,
					     &q, 1, NULL, NULL, 0);
		nl_close(&nl);
	}
	close(dmabuf);
	ASSERT_EQ(0, err) TH_LOG("cycle %d", i);
	after = mem_available_kb();
	TH_LOG("1000 bind/unbind cycles in %.0f ms, MemAvailable %ld -> %ld kB",
	       now_ms() - start, before, after);
	EXPECT_EQ(0, rxq_binding(self->ifindex, 0));
	/* nothing per cycle may stay behind; kmemleak checks the rest */
	EXPECT_GT(16L << 10, before - after);
}

/* A 1 GiB udmabuf (above udmabuf's default size limit), or -errno. */
static int udmabuf_1g(int *memfd)
{
	int err;

	err = write_file("/sys/module/udmabuf/parameters/size_limit_mb", "2048");
	if (err)
		return err;
	return udmabuf_create(1UL << 30, memfd);
}

TEST_F_TIMEOUT(bind_rx, bind_1g_dmabuf, RECONFIG_TIMEOUT)
{
	unsigned int q = 0;
	int big, memfd;
	long before;
	double start;
	__u32 id;

	big = udmabuf_1g(&memfd);
	ASSERT_LE(0, big) TH_LOG("udmabuf 1G: %s", strerror(-big));
	before = mem_available_kb();
	start = now_ms();
	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, big, &q, 1, &id,
				    self->extack, EXTACK_LEN))
		TH_LOG("bind-rx: %s", self->extack);
	TH_LOG("bound 1 GiB in %.1f ms; kernel memory %ld bytes per page",
	       now_ms() - start,
	       (before - mem_available_kb()) * 1024 / (1L << 18));
	EXPECT_EQ((int)id, rxq_binding(self->ifindex, 0));
	nl_close(&self->nl);
	close(big);
	close(memfd);
}

#define MEMCG_DIR	"/sys/fs/cgroup/devmem-memcg"
#define MEMCG_BINDS_MAX	40

/* A cgroup v2 child limited to @max, with the memory controller on. */
static int memcg_create(const char *max)
{
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) &&
	    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return -errno;
	if (write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory"))
		return -EOPNOTSUPP;
	if (mkdir(MEMCG_DIR, 0755) && errno != EEXIST)
		return -errno;
	return write_file(MEMCG_DIR "/memory.max", max);
}

/* In the child: bind-tx @dmabuf again and again. Exit status: how many
 * binds worked before ENOMEM, or 255 when ENOMEM never came.
 */
static void bind_tx_until_enomem(int ifindex, int dmabuf)
{
	struct nl_ctx nl;
	char pid[16];
	int n, err;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file(MEMCG_DIR "/cgroup.procs", pid) || devmem_nl_open(&nl))
		_exit(254);
	for (n = 0; n < MEMCG_BINDS_MAX; n++) {
		err = devmem_bind_tx(&nl, ifindex, dmabuf, NULL, NULL, 0);
		if (err == -ENOMEM)
			_exit(n);
		if (err)
			_exit(253);
	}
	_exit(255);
}

/* Every allocation of a binding is charged to the caller's memory cgroup:
 * bind-tx of a 1 GiB dma-buf in a loop, in a cgroup of 256 MiB (the
 * dma-buf's own pages are charged to the parent), ends in ENOMEM, and
 * the bindings go away with the socket.
 */
/* Sixteen or so 1 GiB bindings are made and freed: minutes on a debug
 * kernel under TCG.
 */
#define MEMCG_TIMEOUT	600

TEST_F_TIMEOUT(bind_rx, bind_tx_charged_to_memcg, MEMCG_TIMEOUT)
{
	int big, memfd, status, err;
	long before;
	pid_t pid;

	big = udmabuf_1g(&memfd);
	ASSERT_LE(0, big) TH_LOG("udmabuf 1G: %s", strerror(-big));
	err = memcg_create("256M");
	ASSERT_EQ(0, err) TH_LOG("memory cgroup: %s", strerror(-err));
	before = mem_available_kb();

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		bind_tx_until_enomem(self->ifindex, big);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WTERMSIG(status));
	TH_LOG("%d bind-tx of 1 GiB before ENOMEM", WEXITSTATUS(status));
	EXPECT_LT(0, WEXITSTATUS(status));
	EXPECT_GT(MEMCG_BINDS_MAX, WEXITSTATUS(status));
	EXPECT_EQ(0, rmdir(MEMCG_DIR));
	close(big);
	close(memfd);
	/* the bindings are freed (from a work item) with the child's socket */
	for (err = 0; err < 50 && before - mem_available_kb() > 64L << 10; err++)
		usleep(100000);
	EXPECT_GT(64L << 10, before - mem_available_kb());
}

/* Ring resize and channel changes are refused while bound; link down and
 * up keeps the binding (the new page pools take the provider again).
 */
TEST_F_TIMEOUT(bind_rx, reconfigure_while_bound, RECONFIG_TIMEOUT)
{
	unsigned int q = 0;
	char cmd[128];
	__u32 id;

	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, &id, self->extack, EXTACK_LEN));
	snprintf(cmd, sizeof(cmd), "ethtool -G %s rx 512 2>/dev/null",
		 self->ifname);
	EXPECT_NE(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "ethtool -L %s combined 1 2>/dev/null",
		 self->ifname);
	EXPECT_NE(0, system(cmd));

	ASSERT_EQ(0, set_link(self->ifname, false));
	ASSERT_EQ(0, set_link(self->ifname, true));
	EXPECT_EQ((int)id, rxq_binding(self->ifindex, 0));
	nl_close(&self->nl);
	EXPECT_EQ(0, rxq_binding(self->ifindex, 0));
}

/* The device goes away (driver unbound, as on module unload) while a
 * queue is bound: the binding lets go of it first, and closing the owner
 * socket afterwards is harmless.
 */
/* Does the link of @ifname come up within ten seconds? */
static bool wait_oper_up(const char *ifname)
{
	char path[PATH_MAX], state[16];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", ifname);
	for (i = 0; i < 100; i++) {
		state[0] = '\0';
		f = fopen(path, "r");
		if (f) {
			if (!fgets(state, sizeof(state), f))
				state[0] = '\0';
			fclose(f);
		}
		if (!strncmp(state, "up", 2))
			return true;
		usleep(100000);
	}
	return false;
}

/* With header split on and nothing bound, the channel count can go up and
 * back down, and the link stays up; a queue made real by the raise can be
 * bound. While bound, "ethtool -L" is refused with EBUSY.
 */
TEST_F_TIMEOUT(bind_rx, channels_change_with_data_split, RECONFIG_TIMEOUT)
{
	int before, raised, err;
	bool was_up;
	unsigned int q;
	__u32 id;

	before = devmem_rx_queue_count(self->ifname);
	ASSERT_LT(0, before);
	was_up = wait_oper_up(self->ifname);
	raised = before < 8 ? before + 1 : before - 1;
	EXPECT_EQ(0, devmem_shell("ethtool -L %s combined %d", self->ifname,
				  raised));
	EXPECT_EQ(raised, devmem_rx_queue_count(self->ifname));
	if (was_up)
		EXPECT_TRUE(wait_oper_up(self->ifname))
			TH_LOG("link down after ethtool -L");
	q = raised - 1;
	err = devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf, &q, 1,
			     &id, self->extack, EXTACK_LEN);
	EXPECT_EQ(0, err) TH_LOG("bind-rx queue %u: %s", q, self->extack);
	EXPECT_NE(0, devmem_shell("ethtool -L %s combined %d 2>/dev/null",
				  self->ifname, before));
	nl_close(&self->nl);
	EXPECT_EQ(0, devmem_shell("ethtool -L %s combined %d", self->ifname,
				  before));
	EXPECT_EQ(before, devmem_rx_queue_count(self->ifname));
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
}

/* PCI address of @ifname's device, in @pci; 0 or -errno. */
static int iface_pci_addr(const char *ifname, char *pci, size_t len)
{
	char link[PATH_MAX], path[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifname);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	snprintf(pci, len, "%s", strrchr(link, '/') + 1);
	return 0;
}

/* Binds the igb driver to @pci again after it was unbound, as loading the
 * module would, and brings the new interface up with header split. Returns
 * its ifindex (its name in @ifname) or -errno.
 */
static int igb_driver_rebind(const char *pci, char *ifname, size_t len)
{
	int tries, ifindex = -ENODEV, err;

	err = write_file("/sys/bus/pci/drivers/igb/bind", pci);
	if (err)
		return err;
	for (tries = 0; tries < 100; tries++) {
		ifindex = find_igb(ifname, len);
		if (ifindex > 0 && !set_link(ifname, true))
			break;
		usleep(100000);
	}
	if (ifindex <= 0)
		return ifindex;
	err = ethtool_rings_for_devmem(ifindex, NULL, 0);
	return err ? err : ifindex;
}

TEST_F_TIMEOUT(bind_rx, device_unregistered_while_bound, RECONFIG_TIMEOUT)
{
	unsigned int q = 0;
	char pci[64];

	ASSERT_EQ(0, iface_pci_addr(self->ifname, pci, sizeof(pci)));
	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, NULL, self->extack, EXTACK_LEN));
	ASSERT_EQ(0, write_file("/sys/bus/pci/drivers/igb/unbind", pci));
	EXPECT_EQ(-ENODEV, rxq_binding(self->ifindex, 0));
	nl_close(&self->nl);

	self->ifindex = igb_driver_rebind(pci, self->ifname,
					  sizeof(self->ifname));
	ASSERT_LT(0, self->ifindex);
}

/* One bind-rx racing the close of its own socket from another thread. */
struct bind_race {
	struct nl_ctx nl;
	int ifindex;
	int dmabuf;
	int err;
	char extack[EXTACK_LEN];
};

static void *bind_race_thread(void *arg)
{
	struct bind_race *race = arg;
	unsigned int q = 0;

	race->err = devmem_bind_rx(&race->nl, race->ifindex, race->dmabuf,
				   &q, 1, NULL, race->extack, EXTACK_LEN);
	return NULL;
}

/* The owner socket is closed by another thread while its bind-rx runs:
 * whichever comes first, no binding outlives the socket. The closes are
 * spread from before the request to after its reply, in steps of a tenth
 * of the time one bind took here.
 */
TEST_F_TIMEOUT(bind_rx, close_while_binding, RECONFIG_TIMEOUT)
{
	struct bind_race race = {
		.ifindex = self->ifindex,
		.dmabuf = self->dmabuf,
	};
	unsigned int round, bound = 0, step_us;
	pthread_t thread;
	double start;
	int fd;

	ASSERT_EQ(0, devmem_nl_open(&race.nl));
	start = now_ms();
	bind_race_thread(&race);
	ASSERT_EQ(0, race.err) TH_LOG("bind-rx: %s", race.extack);
	step_us = (now_ms() - start) * 100;
	nl_close(&race.nl);

	for (round = 0; round < 30; round++) {
		ASSERT_EQ(0, devmem_nl_open(&race.nl));
		fd = race.nl.fd;
		ASSERT_EQ(0, pthread_create(&thread, NULL, bind_race_thread,
					    &race));
		usleep((round % 12) * step_us);
		close(fd);
		pthread_join(thread, NULL);
		EXPECT_TRUE(!race.err || race.err == -EBADF)
			TH_LOG("round %u: bind-rx: %s", round,
			       strerror(-race.err));
		if (!race.err)
			bound++;
		race.nl.fd = -1;
		nl_close(&race.nl);
		ASSERT_EQ(0, rxq_binding(self->ifindex, 0))
			TH_LOG("round %u: a binding outlived its socket", round);
	}
	TH_LOG("%u of %u binds answered before the close (a bind: %u ms)",
	       bound, round, step_us / 100);
}

/* Enabling or disabling VFs reshapes the PF's queues: refused with EBUSY
 * while a queue is bound, allowed again once it is not.
 */
TEST_F_TIMEOUT(bind_rx, sriov_refused_while_bound, RECONFIG_TIMEOUT)
{
	char path[PATH_MAX];
	unsigned int q = 0;
	int queues, err;

	snprintf(path, sizeof(path), "/sys/class/net/%s/device/sriov_numvfs",
		 self->ifname);
	ASSERT_EQ(0, access(path, W_OK))
		TH_LOG("no SR-IOV on %s (CONFIG_PCI_IOV)", self->ifname);
	queues = devmem_rx_queue_count(self->ifname);
	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, NULL, self->extack, EXTACK_LEN));
	EXPECT_EQ(-EBUSY, write_file(path, "1"));
	EXPECT_LT(0, rxq_binding(self->ifindex, 0));
	EXPECT_EQ(queues, devmem_rx_queue_count(self->ifname));
	nl_close(&self->nl);

	/* unbound, the refusal is gone: VFs come and go (where the platform
	 * can place them), and the PF keeps working
	 */
	err = write_file(path, "1");
	EXPECT_NE(-EBUSY, err);
	if (err)
		TH_LOG("no VF could be enabled here: %s", strerror(-err));
	if (!err) {
		ASSERT_EQ(0, devmem_nl_open(&self->nl));
		EXPECT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex,
					    self->dmabuf, &q, 1, NULL,
					    self->extack, EXTACK_LEN))
			TH_LOG("bind-rx with a VF: %s", self->extack);
		EXPECT_EQ(-EBUSY, write_file(path, "0"));
		nl_close(&self->nl);
		EXPECT_EQ(0, write_file(path, "0"));
	}
	EXPECT_EQ(queues, devmem_rx_queue_count(self->ifname));
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	EXPECT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, NULL, self->extack, EXTACK_LEN))
		TH_LOG("bind-rx after SR-IOV: %s", self->extack);
}

/* Fault injection (fail-nth): make the Nth slab allocation of a bind fail,
 * for N from 1 up, every N while N is small and then at growing steps (a
 * bind makes a few allocations per page of the dma-buf, so a small one is
 * used). Each failure is a clean error, the queue stays unbound, and once no
 * allocation is left to fail the bind succeeds.
 */
static int fail_nth_set(unsigned int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", n);
	return write_file("/proc/thread-self/fail-nth", buf);
}

static int fail_nth_pending(void)
{
	char buf[16] = "";
	int fd, n;

	fd = open("/proc/thread-self/fail-nth", O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -EIO;
}

/* Slab allocations, GFP_KERNEL ones too, fail in turn under fail-nth; the
 * page allocator keeps its defaults (no order-0 failures), so that the
 * warning of every failed page allocation does not flood the console.
 * The fixture's teardown puts ignore-gfp-wait back.
 */
static int failslab_arm(void)
{
	if (access("/sys/kernel/debug/failslab", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	write_file("/sys/kernel/debug/failslab/verbose", "0");
	return write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "N");
}

#define FAULT_DMABUF_SIZE	(2UL << 20)

TEST_F_TIMEOUT(bind_rx, bind_fails_cleanly_at_every_allocation, 1800)
{
	unsigned int q = 0, n, failures = 0;
	int ret = -1, pending = 0, dmabuf;
	__u32 id;

	if (access("/proc/thread-self/fail-nth", W_OK))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, failslab_arm());
	dmabuf = udmabuf_create(FAULT_DMABUF_SIZE, NULL);
	ASSERT_LE(0, dmabuf);

	for (n = 1; n < 1000000; n += 1 + n / 32) {
		ASSERT_EQ(0, fail_nth_set(n));
		ret = devmem_bind_rx(&self->nl, self->ifindex, dmabuf, &q, 1,
				     &id, self->extack, EXTACK_LEN);
		pending = fail_nth_pending();
		fail_nth_set(0);
		if (pending > 0)
			break;	/* nothing failed: the bind went through */
		failures++;
		/* the reply may be what failed: closing the socket must
		 * undo whatever the bind left
		 */
		nl_close(&self->nl);
		ASSERT_EQ(0, rxq_binding(self->ifindex, 0))
			TH_LOG("allocation %u failed (%d): queue still bound", n,
			       ret);
		ASSERT_EQ(0, devmem_nl_open(&self->nl));
	}
	write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "Y");
	TH_LOG("%u binds failed at allocations 1..%u, each cleanly", failures,
	       n);
	EXPECT_LT(0, pending);
	EXPECT_EQ(0, ret) TH_LOG("bind without failure: %s", self->extack);
	EXPECT_LT(0U, failures);
	EXPECT_LT(0, rxq_binding(self->ifindex, 0));
	nl_close(&self->nl);
	close(dmabuf);
}

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

/* Is @ifname administratively up? */
static bool link_is_up(const char *ifname)
{
	struct ifreq ifr = {};
	bool up = false;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr))
		up = ifr.ifr_flags & IFF_UP;
	close(fd);
	return up;
}

/* Devices attached to the udmabuf @fd (debugfs bufinfo), or -errno. */
static int dmabuf_attachments(int fd)
{
	char line[256], key[64];
	bool ours = false;
	struct stat st;
	int n = -ENOENT;
	FILE *f;

	if (fstat(fd, &st))
		return -errno;
	snprintf(key, sizeof(key), "udmabuf\t%08lu\t", (unsigned long)st.st_ino);
	f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!ours) {
			ours = strstr(line, key);
			continue;
		}
		if (sscanf(line, "Total %d devices attached", &n) == 1)
			break;
	}
	fclose(f);
	return n;
}

/* dmabuf_attachments() once it is 0, or after two seconds. */
static int dmabuf_attachments_settled(int fd)
{
	int n, tries;

	for (tries = 0; tries < 20; tries++) {
		n = dmabuf_attachments(fd);
		if (n <= 0)
			break;
		usleep(100000);
	}
	return n;
}

/* Fault injection again, on the way out: the Nth allocation after the
 * owner socket starts to close fails, for N from 1 until the close needs
 * no more. When the failure is the restart that takes the queue back to
 * host memory, the queue goes on running on the dma-buf's page pool, which
 * keeps the dma-buf attached; the device stays up. Whatever failed, the
 * queue ends unbound, and the device still goes down and up (which lets
 * the dma-buf go), changes its ring size and, at the end, lets its driver
 * go and come back (as on module unload and load).
 */
TEST_F_TIMEOUT(bind_rx, unbind_survives_allocation_failures, 1800)
{
	unsigned int q = 0, n, failures = 0, kept = 0;
	int pending = 0, dmabuf, ring, attached;
	char pci[64];

	if (access("/proc/thread-self/fail-nth", W_OK))
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, failslab_arm());
	dmabuf = udmabuf_create(FAULT_DMABUF_SIZE, NULL);
	ASSERT_LE(0, dmabuf);
	ASSERT_EQ(0, dmabuf_attachments(dmabuf));
	ring = rx_ring_size(self->ifname);
	ASSERT_LT(0, ring);

	for (n = 1; n < 100000; n++) {
		int id, i;

		ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, dmabuf,
					    &q, 1, NULL, self->extack,
					    EXTACK_LEN))
			TH_LOG("bind-rx before failure %u: %s", n,
			       self->extack);
		ASSERT_EQ(1, dmabuf_attachments(dmabuf));
		ASSERT_EQ(0, fail_nth_set(n));
		nl_close(&self->nl);
		pending = fail_nth_pending();
		fail_nth_set(0);
		ASSERT_EQ(0, devmem_nl_open(&self->nl));
		id = rxq_binding(self->ifindex, 0);
		ASSERT_LE(0, id);
		ASSERT_TRUE(link_is_up(self->ifname))
			TH_LOG("allocation %u failed: the device went down", n);
		if (pending > 0) {
			/* nothing failed: the close went through */
			ASSERT_EQ(0, id);
			break;
		}
		failures++;
		attached = dmabuf_attachments(dmabuf);
		ASSERT_LE(0, attached);
		/* a queue that still runs on the dma-buf names its binding,
		 * and only such a queue: never a dma-buf written into whose
		 * id is gone
		 */
		ASSERT_EQ(!!attached, !!id)
			TH_LOG("allocation %u failed: %d attachment(s), queue names binding %d",
			       n, attached, id);
		if (!attached)
			continue;	/* the queue left: the next bind checks it */
		kept++;
		/* tried again a second later (nothing fails there), it leaves */
		for (i = 0; i < 100 && rxq_binding(self->ifindex, 0); i++)
			usleep(100000);
		ASSERT_EQ(0, rxq_binding(self->ifindex, 0))
			TH_LOG("allocation %u failed: the queue never left binding %d",
			       n, id);
		ASSERT_EQ(0, dmabuf_attachments_settled(dmabuf))
			TH_LOG("allocation %u failed: the dma-buf stays attached after the queue left",
			       n);
		/* and the device works as before */
		ASSERT_EQ(0, set_link(self->ifname, false));
		ASSERT_EQ(0, set_link(self->ifname, true));
		ASSERT_EQ(0, devmem_shell("ethtool -G %s rx %d", self->ifname,
					  ring * 2));
		ASSERT_EQ(0, devmem_shell("ethtool -G %s rx %d", self->ifname,
					  ring));
	}
	write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "Y");
	TH_LOG("%u closes failed at allocations 1..%u; %u kept the binding until the queue left",
	       failures, n, kept);
	EXPECT_LT(0, pending);
	EXPECT_LT(0U, failures);
	EXPECT_LT(0U, kept);
	EXPECT_EQ(0, dmabuf_attachments(dmabuf));
	close(dmabuf);

	ASSERT_EQ(0, iface_pci_addr(self->ifname, pci, sizeof(pci)));
	ASSERT_EQ(0, write_file("/sys/bus/pci/drivers/igb/unbind", pci));
	self->ifindex = igb_driver_rebind(pci, self->ifname,
					  sizeof(self->ifname));
	ASSERT_LT(0, self->ifindex);
}

TEST_HARNESS_MAIN
