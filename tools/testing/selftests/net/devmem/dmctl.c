// SPDX-License-Identifier: GPL-2.0
/*
 * dmctl: the devmem knobs Debian 12's tools cannot turn, for the shell
 * tests and the demo.
 *
 *   dmctl data-split IFNAME on|off     set tcp-data-split (ethtool netlink)
 *   dmctl data-split IFNAME            print it: on, off or unknown
 *   dmctl hds-thresh IFNAME N          set hds-thresh (ethtool netlink)
 *   dmctl hds-thresh IFNAME            print it and its maximum: "N MAX"
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmem_lib.h"

static int print_usage(void)
{
	fprintf(stderr, "usage: dmctl data-split IFNAME [on|off]\n"
			"       dmctl hds-thresh IFNAME [N]\n"
			"       dmctl rx-binding IFNAME QUEUE\n");
	return 2;
}

/* The ifindex of @ifname, or a negative errno after saying why. */
static int dmctl_ifindex(const char *ifname)
{
	int ifindex = devmem_ifindex(ifname);

	if (ifindex < 0)
		fprintf(stderr, "dmctl: %s: %s\n", ifname, strerror(-ifindex));
	return ifindex;
}

static int data_split(const char *ifname, const char *val)
{
	char extack[256] = "";
	int ifindex, err;

	ifindex = dmctl_ifindex(ifname);
	if (ifindex < 0)
		return 1;
	if (!val) {
		err = ethtool_get_tcp_data_split(ifindex);
		if (err < 0) {
			fprintf(stderr, "dmctl: %s: %s\n", ifname, strerror(-err));
			return 1;
		}
		printf("%s\n", err == ETHTOOL_TCP_DATA_SPLIT_ENABLED ? "on" :
			       err == ETHTOOL_TCP_DATA_SPLIT_DISABLED ? "off" :
			       "unknown");
		return 0;
	}
	if (strcmp(val, "on") && strcmp(val, "off"))
		return print_usage();
	err = ethtool_set_tcp_data_split(ifindex, !strcmp(val, "on"), extack,
					 sizeof(extack));
	if (err) {
		fprintf(stderr, "dmctl: %s: tcp-data-split %s: %s%s%s\n", ifname,
			val, strerror(-err), *extack ? ": " : "", extack);
		return 1;
	}
	return 0;
}

static int hds_thresh(const char *ifname, const char *val)
{
	char extack[256] = "", *end;
	__u32 thresh, max;
	unsigned long n;
	int ifindex, err;

	ifindex = dmctl_ifindex(ifname);
	if (ifindex < 0)
		return 1;
	if (!val) {
		err = ethtool_get_hds_thresh(ifindex, &thresh, &max);
		if (err) {
			fprintf(stderr, "dmctl: %s: hds-thresh: %s\n", ifname,
				strerror(-err));
			return 1;
		}
		printf("%u %u\n", thresh, max);
		return 0;
	}
	errno = 0;
	n = strtoul(val, &end, 0);
	if (errno || *end || end == val || n > 0xffffffffUL)
		return print_usage();
	err = ethtool_set_hds_thresh(ifindex, n, extack, sizeof(extack));
	if (err) {
		fprintf(stderr, "dmctl: %s: hds-thresh %s: %s%s%s\n", ifname,
			val, strerror(-err), *extack ? ": " : "", extack);
		return 1;
	}
	return 0;
}

/* Prints the id of the dma-buf bound to an RX queue, 0 when none. */
static int rx_binding(const char *ifname, const char *val)
{
	struct devmem_queue_info info;
	struct nl_ctx nl;
	unsigned long q;
	int ifindex, err;
	char *end;

	ifindex = dmctl_ifindex(ifname);
	if (ifindex < 0)
		return 1;
	errno = 0;
	q = strtoul(val, &end, 0);
	if (errno || *end || end == val || q > 0xffff)
		return print_usage();
	err = devmem_nl_open(&nl);
	if (!err) {
		err = devmem_queue_get(&nl, ifindex, NETDEV_QUEUE_TYPE_RX,
				       (int)q, &info);
		nl_close(&nl);
	}
	if (err) {
		fprintf(stderr, "dmctl: %s: queue-get rx %lu: %s\n", ifname, q,
			strerror(-err));
		return 1;
	}
	printf("%u\n", info.has_dmabuf ? info.dmabuf : 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "data-split"))
		return data_split(argv[2], argc > 3 ? argv[3] : NULL);
	if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "hds-thresh"))
		return hds_thresh(argv[2], argc > 3 ? argv[3] : NULL);
	if (argc == 4 && !strcmp(argv[1], "rx-binding"))
		return rx_binding(argv[2], argv[3]);
	return print_usage();
}
