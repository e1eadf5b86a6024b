// SPDX-License-Identifier: GPL-2.0
/*
 * XDP and a bound RX queue exclude each other, as in mainline: bind-rx on
 * a device with an XDP program fails with EEXIST, and attaching XDP to a
 * device with a bound queue fails with EBUSY, native and generic alike,
 * each with mainline's extack message. The program is a BPF object built
 * with clang and loaded with libbpf.
 *
 * No traffic reaches the bound queue here: the peer NIC stays down.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../kselftest_harness.h"
#pragma GCC diagnostic pop
#include "devmem_bpf.h"
#include "devmem_lib.h"

#define EXTACK_LEN	256
#define SIZE_64M	(64UL << 20)
#define MSG_BIND_XDP	"unable to bind dmabuf to device with XDP program attached"
#define MSG_XDP_MP	"unable to install XDP to device using memory provider"

/* The last kernel error message libbpf reported, for the checks below. */
static char libbpf_kernel_msg[EXTACK_LEN];

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	static const char key[] = "Kernel error message: ";
	char line[512];
	char *msg;

	(void)level;
	vsnprintf(line, sizeof(line), fmt, ap);
	msg = strstr(line, key);
	if (msg) {
		snprintf(libbpf_kernel_msg, sizeof(libbpf_kernel_msg), "%s",
			 msg + strlen(key));
		libbpf_kernel_msg[strcspn(libbpf_kernel_msg, "\n")] = '\0';
	}
	return 0;
}

/* The object sits next to this program. */

FIXTURE(devmem_xdp) {
	struct nl_ctx nl;
	struct bpf_object *obj;
	int prog_fd;
	int ifindex;
	char ifname[IFNAMSIZ];
	int dmabuf;
	int memfd;
	char extack[EXTACK_LEN];
};

FIXTURE_SETUP(devmem_xdp)
{
	struct bpf_program *prog;
	char peer[IFNAMSIZ];

	libbpf_set_print(libbpf_log);
	self->ifindex = devmem_find_driver_iface("igb", self->ifname,
						 sizeof(self->ifname));
	ASSERT_LT(0, self->ifindex) TH_LOG("no igb interface");
	snprintf(peer, sizeof(peer), "%s", self->ifname);
	peer[strlen(peer) - 1] ^= 1;
	devmem_shell("ip link set %s down", peer);
	ASSERT_EQ(0, devmem_shell("ip link set %s up", self->ifname));
	ASSERT_EQ(0, ethtool_rings_for_devmem(self->ifindex, self->extack,
					      EXTACK_LEN))
		TH_LOG("tcp-data-split on, hds-thresh 0: %s", self->extack);
	self->obj = devmem_bpf_load();
	ASSERT_NE(NULL, self->obj) TH_LOG("devmem_progs.bpf.o did not load");
	prog = bpf_object__find_program_by_name(self->obj, "xdp_pass");
	ASSERT_NE(NULL, prog);
	self->prog_fd = bpf_program__fd(prog);
	ASSERT_LE(0, self->prog_fd);
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
	self->dmabuf = udmabuf_create(SIZE_64M, &self->memfd);
	ASSERT_LE(0, self->dmabuf);
}

FIXTURE_TEARDOWN(devmem_xdp)
{
	bpf_xdp_detach(self->ifindex, XDP_FLAGS_SKB_MODE, NULL);
	bpf_xdp_detach(self->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	nl_close(&self->nl);
	close(self->dmabuf);
	close(self->memfd);
	bpf_object__close(self->obj);
	EXPECT_EQ(0, ethtool_set_tcp_data_split(self->ifindex, false, NULL, 0));
}

/* igb itself refuses native XDP while header split is on, which bind-rx
 * needs: native XDP can only be tried against a bound queue, where the
 * core refuses it before the driver is asked.
 */
FIXTURE_VARIANT(devmem_xdp) {
	__u32 flags;
	bool driver_takes_it;
};

FIXTURE_VARIANT_ADD(devmem_xdp, generic) {
	.flags = XDP_FLAGS_SKB_MODE,
	.driver_takes_it = true,
};

FIXTURE_VARIANT_ADD(devmem_xdp, native) {
	.flags = XDP_FLAGS_DRV_MODE,
	.driver_takes_it = false,
};

TEST_F(devmem_xdp, bind_refused_with_xdp_attached)
{
	unsigned int q = 0;

	/* igb: header split on, native XDP is the driver's to refuse, so
	 * a native program and a binding cannot meet this way round
	 */
	if (!variant->driver_takes_it) {
		EXPECT_EQ(-EOPNOTSUPP, bpf_xdp_attach(self->ifindex,
						      self->prog_fd,
						      variant->flags, NULL));
		return;
	}
	ASSERT_EQ(0, bpf_xdp_attach(self->ifindex, self->prog_fd,
				    variant->flags, NULL));
	EXPECT_EQ(-EEXIST, devmem_bind_rx(&self->nl, self->ifindex,
					  self->dmabuf, &q, 1, NULL,
					  self->extack, EXTACK_LEN));
	EXPECT_STREQ(MSG_BIND_XDP, self->extack);
	/* without the program, the same bind works */
	ASSERT_EQ(0, bpf_xdp_detach(self->ifindex, variant->flags, NULL));
	EXPECT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, NULL, self->extack, EXTACK_LEN))
		TH_LOG("bind-rx: %s", self->extack);
}

TEST_F(devmem_xdp, xdp_refused_while_bound)
{
	unsigned int q = 0;
	int err;

	ASSERT_EQ(0, devmem_bind_rx(&self->nl, self->ifindex, self->dmabuf,
				    &q, 1, NULL, self->extack, EXTACK_LEN))
		TH_LOG("bind-rx: %s", self->extack);
	libbpf_kernel_msg[0] = '\0';
	EXPECT_EQ(-EBUSY, bpf_xdp_attach(self->ifindex, self->prog_fd,
					 variant->flags, NULL));
	EXPECT_STREQ(MSG_XDP_MP, libbpf_kernel_msg);
	/* unbound, XDP attaches (native: the driver's own answer) */
	nl_close(&self->nl);
	err = bpf_xdp_attach(self->ifindex, self->prog_fd, variant->flags,
			     NULL);
	EXPECT_EQ(variant->driver_takes_it ? 0 : -EOPNOTSUPP, err);
	ASSERT_EQ(0, devmem_nl_open(&self->nl));
}

TEST_HARNESS_MAIN
