// SPDX-License-Identifier: GPL-2.0
/*
 * dmctl: the devmem knobs Debian 12's tools cannot turn, for the shell
 * tests and the demo.
 *
 *   dmctl data-split IFNAME on|off     set tcp-data-split (ethtool netlink)
 *   dmctl data-split IFNAME            print it: on, off or unknown
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devmem_lib.h"

static int print_usage(void)
{
	fprintf(stderr, "usage: dmctl data-split IFNAME [on|off]\n");
	return 2;
}

static int data_split(const char *ifname, const char *val)
{
	char extack[256] = "";
	int ifindex, err;

	ifindex = devmem_ifindex(ifname);
	if (ifindex < 0) {
		fprintf(stderr, "dmctl: %s: %s\n", ifname, strerror(-ifindex));
		return 1;
	}
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

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "data-split"))
		return data_split(argv[2], argc > 3 ? argv[3] : NULL);
	return print_usage();
}
