#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Test topology for devmem TCP in the QEMU guest: the first igb NIC (lowest
# PCI address) goes into network namespace $SRV_NS, the second into $CLI_NS,
# with IPv6 and IPv4 addresses, so traffic between the namespaces crosses
# the emulated wire.
#
# Source it and call topo_setup / topo_teardown, or run it:
#   topology.sh setup     prints the variables below as NAME=value lines
#   topology.sh teardown

SRV_NS=${SRV_NS:-devmem-srv}
CLI_NS=${CLI_NS:-devmem-cli}
SRV_ADDR6=2001:db8::1
CLI_ADDR6=2001:db8::2
SRV_ADDR4=192.0.2.1
CLI_ADDR4=192.0.2.2

# igb interfaces in the current namespace, ordered by PCI address.
topo_igb_ifaces()
{
	local dev drv

	for dev in /sys/class/net/*; do
		[ -e "$dev/device/driver" ] || continue
		drv=$(basename "$(readlink "$dev/device/driver")")
		[ "$drv" = igb ] || continue
		echo "$(basename "$(readlink "$dev/device")") $(basename "$dev")"
	done | sort | cut -d' ' -f2
}

# Slow guests (make check-kmsan) stretch every fixed wait by this factor.
TOPO_SCALE=${DEVMEM_TIME_SCALE:-1}
case $TOPO_SCALE in
''|*[!0-9]*|0) TOPO_SCALE=1 ;;
esac

# Wait (up to $2 tenths of a second, times TOPO_SCALE) for a command to
# succeed.
topo_wait()
{
	local cmd=$1 tries=$(($2 * TOPO_SCALE))

	while ! eval "$cmd" >/dev/null 2>&1; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

topo_teardown()
{
	# A wall-clock limit: one look at the NICs forks a dozen times, which
	# takes a good part of a second in an emulated guest.
	local deadline=$((SECONDS + 30 * TOPO_SCALE))

	ip netns del "$SRV_NS" 2>/dev/null
	ip netns del "$CLI_NS" 2>/dev/null
	# Deleting a namespace hands its physical devices back asynchronously,
	# once nothing holds the namespace: a socket of it that lingers (an
	# orphan whose FIN goes unanswered) keeps its NIC away for minutes.
	while [ "$(topo_igb_ifaces | wc -l)" -lt 2 ]; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "topology: $(topo_igb_ifaces | wc -l) of 2 igb NICs" \
				"back $((30 * TOPO_SCALE)) s after their namespaces" \
				"were deleted (a lingering socket holds a" \
				"namespace, or a NIC lost its driver)" >&2
			return 1
		fi
		sleep 0.1
	done
}

# Sets SRV_IF and CLI_IF.
topo_setup()
{
	local ifaces

	topo_teardown || { echo "topology: fewer than two igb NICs" >&2; return 1; }
	ifaces=$(topo_igb_ifaces)
	SRV_IF=$(echo "$ifaces" | sed -n 1p)
	CLI_IF=$(echo "$ifaces" | sed -n 2p)

	ip netns add "$SRV_NS" || return 1
	ip netns add "$CLI_NS" || return 1
	topo_ns_setup "$SRV_NS" "$SRV_IF" "$SRV_ADDR6" "$SRV_ADDR4" || return 1
	topo_ns_setup "$CLI_NS" "$CLI_IF" "$CLI_ADDR6" "$CLI_ADDR4" || return 1
	topo_static_neigh || return 1
	topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200 &&
		topo_wait "ip -n $CLI_NS link show $CLI_IF | grep -q LOWER_UP" 200 ||
		{ echo "topology: link did not come up" >&2; return 1; }
	topo_wait "ip netns exec $CLI_NS ping -c1 -W1 $SRV_ADDR6" 100 &&
		topo_wait "ip netns exec $CLI_NS ping -c1 -W1 $SRV_ADDR4" 100 ||
		{ echo "topology: no ping across the wire" >&2; return 1; }
	export SRV_IF CLI_IF
}

topo_ns_setup()
{
	local ns=$1 dev=$2 addr6=$3 addr4=$4

	ip link set "$dev" netns "$ns" &&
		ip -n "$ns" link set lo up &&
		ip -n "$ns" link set "$dev" up &&
		ip -n "$ns" addr add "$addr6/64" dev "$dev" nodad &&
		ip -n "$ns" addr add "$addr4/24" dev "$dev"
}

# The MAC address of device $2 in namespace $1.
topo_mac()
{
	ip netns exec "$1" cat /sys/class/net/"$2"/address
}

# Permanent neighbour entries on both sides. With hds-thresh 0 (what a
# bound queue needs) an ARP frame lands whole in the payload buffer and
# neighbour discovery's ICMPv6 header after the IP header: on a bound
# queue that RSS sends everything to, both are device memory, dropped.
topo_static_neigh()
{
	local srv_mac cli_mac

	srv_mac=$(topo_mac "$SRV_NS" "$SRV_IF") &&
		cli_mac=$(topo_mac "$CLI_NS" "$CLI_IF") || return 1
	ip -n "$SRV_NS" neigh replace "$CLI_ADDR6" lladdr "$cli_mac" \
		dev "$SRV_IF" nud permanent &&
		ip -n "$SRV_NS" neigh replace "$CLI_ADDR4" lladdr "$cli_mac" \
			dev "$SRV_IF" nud permanent &&
		ip -n "$CLI_NS" neigh replace "$SRV_ADDR6" lladdr "$srv_mac" \
			dev "$CLI_IF" nud permanent &&
		ip -n "$CLI_NS" neigh replace "$SRV_ADDR4" lladdr "$srv_mac" \
			dev "$CLI_IF" nud permanent
}

# ethtool -S counter $3 of device $2 in namespace $1.
topo_stat()
{
	ip netns exec "$1" ethtool -S "$2" | awk -v k="$3:" '$1 == k { print $2 }'
}

# For the shell tests: kill what runs in the test namespaces and undo what
# a SIGKILLed ncdevmem could not (its flow rule, RSS table, header split).
topo_stop_and_restore()
{
	local ns

	for ns in "$@"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
	done
	[ -n "${SRV_IF:-}" ] || return 0
	ip netns exec "$SRV_NS" ethtool -N "$SRV_IF" delete 0 2>/dev/null
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" default 2>/dev/null
	ip netns exec "$SRV_NS" "$(dirname "${BASH_SOURCE[0]}")"/dmctl \
		data-split "$SRV_IF" off 2>/dev/null
}

# A failed check: the test goes on, and exits with $ret.
fail()
{
	echo "FAIL: $*"
	ret=1
}

# Value of "key: value" in a summary file.
summary()
{
	sed -n "s/^$2: //p" "$1"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	setup)
		topo_setup || exit 1
		printf 'SRV_NS=%s\nCLI_NS=%s\nSRV_IF=%s\nCLI_IF=%s\n' \
			"$SRV_NS" "$CLI_NS" "$SRV_IF" "$CLI_IF"
		printf 'SRV_ADDR6=%s\nCLI_ADDR6=%s\nSRV_ADDR4=%s\nCLI_ADDR4=%s\n' \
			"$SRV_ADDR6" "$CLI_ADDR6" "$SRV_ADDR4" "$CLI_ADDR4"
		;;
	teardown)
		topo_teardown
		;;
	*)
		echo "usage: $0 setup|teardown" >&2
		exit 2
		;;
	esac
fi
