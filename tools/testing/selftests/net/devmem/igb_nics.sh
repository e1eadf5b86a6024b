#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest has two igb NICs, each bound to the igb driver and each behind
# its own PCIe root port.

source "$(dirname "$0")"/topology.sh
ret=0

# If a NIC does not come back, the count below says which are there.
topo_teardown
mapfile -t ifaces < <(topo_igb_ifaces)
if [ ${#ifaces[@]} -ne 2 ]; then
	echo "FAIL: expected 2 igb interfaces, found ${#ifaces[@]}: ${ifaces[*]}"
	exit 1
fi

for i in "${ifaces[@]}"; do
	pci=$(basename "$(readlink /sys/class/net/"$i"/device)")
	port=$(basename "$(dirname "$(readlink -f /sys/class/net/"$i"/device)")")
	vendor=$(cat /sys/class/net/"$i"/device/vendor)
	device=$(cat /sys/class/net/"$i"/device/device)
	echo "$i: igb at $pci ($vendor:$device) behind $port"
	if [ "$vendor:$device" != "0x8086:0x10c9" ]; then
		echo "FAIL: $i is not an 82576 ($vendor:$device)"
		ret=1
	fi
	ports+=("$port")
done
if [ "${ports[0]}" = "${ports[1]}" ]; then
	echo "FAIL: both NICs behind the same port ${ports[0]}"
	ret=1
fi
exit $ret
