// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory TCP transmit through the other NIC.
 *
 * Run by devmem_tx.sh in one network namespace holding both igb NICs,
 * named by TX_NIC (the one the dma-buf is bound to) and ROUTE_NIC (the one
 * the socket's route leaves through). A dma-buf bound for transmit on one
 * NIC must never be handed to the other: sendmsg() fails with -ENODEV
 * before anything is queued. The socket is a non-blocking connect into a
 * subnet of ROUTE_NIC, so it has a route but no peer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sockios.h>

/* The harness' own SIGALRM handler has an unused parameter (-Wextra). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../kselftest_harness.h"
#pragma GCC diagnostic pop
#include "devmem_lib.h"

#define DMABUF_SIZE	(1024 * 1024UL)
#define ROUTE_ADDR	"198.51.100.1/24"
#define PEER_ADDR	"198.51.100.2"
#define PEER_PORT	9

/* sendmsg(MSG_ZEROCOPY) of dma-buf bytes [0, 4096) of binding @id. */
static int devmem_send_page(int fd, __u32 id)
{
	struct iovec iov = { .iov_base = (void *)0, .iov_len = 4096 };
	ssize_t r;

	r = devmem_sendmsg(fd, id, &iov, 1, MSG_ZEROCOPY | MSG_DONTWAIT);
	return r < 0 ? r : 0;
}

/* A zerocopy TCP socket connecting (non-blocking) to PEER_ADDR. */
static int connect_via_route_nic(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(PEER_PORT),
	};
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	inet_pton(AF_INET, PEER_ADDR, &sin.sin_addr);
	if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) ||
	    (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) &&
	     errno != EINPROGRESS)) {
		close(fd);
		return -errno;
	}
	return fd;
}

FIXTURE(other_nic) {
	const char *tx_nic;
	const char *route_nic;
	struct nl_ctx nl;
	int dmabuf;
	int sock;
};

FIXTURE_SETUP(other_nic)
{
	self->tx_nic = getenv("TX_NIC");
	self->route_nic = getenv("ROUTE_NIC");
	self->sock = -1;
	self->dmabuf = -1;
	ASSERT_NE(NULL, self->tx_nic);
	ASSERT_NE(NULL, self->route_nic);
	ASSERT_EQ(0, devmem_shell("ip addr add " ROUTE_ADDR " dev %s",
				  self->route_nic));
	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->route_nic));
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	self->dmabuf = udmabuf_create(DMABUF_SIZE, NULL);
	ASSERT_LE(0, self->dmabuf);
	self->sock = connect_via_route_nic();
	ASSERT_LE(0, self->sock);
}

FIXTURE_TEARDOWN(other_nic)
{
	if (self->sock >= 0)
		close(self->sock);
	nl_close(&self->nl);
	if (self->dmabuf >= 0)
		close(self->dmabuf);
	devmem_shell("ip addr flush dev %s", self->route_nic);
	devmem_shell("ip link set %s down", self->route_nic);
}

/* Bound to TX_NIC, routed through ROUTE_NIC: -ENODEV, nothing queued. */
TEST_F(other_nic, route_through_other_nic_enodev)
{
	char extack[NL_EXTACK_LEN] = "";
	__u32 id = 0;
	int outq = -1;

	ASSERT_EQ(0, devmem_bind_tx(&self->nl, devmem_ifindex(self->tx_nic),
				    self->dmabuf, &id, extack, sizeof(extack)))
		TH_LOG("bind-tx %s: %s", self->tx_nic, extack);
	EXPECT_EQ(-ENODEV, devmem_send_page(self->sock, id));
	ASSERT_EQ(0, ioctl(self->sock, SIOCOUTQ, &outq));
	EXPECT_EQ(0, outq);
}

/*
 * The same socket with the dma-buf bound to ROUTE_NIC passes the device
 * check and only waits for the connection (-EAGAIN, non-blocking): the
 * -ENODEV above is about the device, not the socket.
 */
TEST_F(other_nic, route_through_bound_nic_passes)
{
	char extack[NL_EXTACK_LEN] = "";
	__u32 id = 0;

	ASSERT_EQ(0, devmem_bind_tx(&self->nl, devmem_ifindex(self->route_nic),
				    self->dmabuf, &id, extack, sizeof(extack)))
		TH_LOG("bind-tx %s: %s", self->route_nic, extack);
	EXPECT_EQ(-EAGAIN, devmem_send_page(self->sock, id));
}

TEST_HARNESS_MAIN
