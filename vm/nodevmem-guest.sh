#!/bin/sh
# make check-nodevmem, in the guest: the kernel built without
# CONFIG_NET_DEVMEM boots and its NICs come up.
set -e
uname -r
for i in $(ls /sys/class/net | grep '^eth'); do
	ip link set "$i" up
	echo "$i: $(basename "$(readlink "/sys/class/net/$i/device/driver")") up"
done
[ "$(ls /sys/class/net | grep -c '^eth')" -eq 2 ]
