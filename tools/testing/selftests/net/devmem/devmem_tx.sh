#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device memory TCP transmit: runs devmem_tx_route with both NICs in one
# namespace, then the devmem_tx tests in the client namespace of
# topology.sh; their receivers join the server namespace across the
# emulated wire.

source "$(dirname "$0")"/topology.sh
dir=$(realpath "$(dirname "$0")")

cleanup()
{
	# a test killed by its timeout could not undo its settings
	if [ -n "${CLI_IF:-}" ]; then
		ip netns exec "$CLI_NS" tc qdisc del dev "$CLI_IF" root \
			2>/dev/null
		ip netns exec "$CLI_NS" "$dir"/dmctl data-split "$CLI_IF" off \
			2>/dev/null
	fi
	topo_teardown
}
trap 'cleanup || exit 1' EXIT

# Both NICs in this namespace first: a binding of one NIC used by a socket
# routed through the other.
topo_teardown || exit 1
nics=$(topo_igb_ifaces)
TX_NIC=$(echo "$nics" | sed -n 1p) ROUTE_NIC=$(echo "$nics" | sed -n 2p) \
	"$dir"/devmem_tx_route
route_rc=$?

topo_setup || exit 1
export SRV_IF CLI_IF SRV_NS CLI_NS
ip netns exec "$CLI_NS" "$dir"/devmem_tx
rc=$?
[ $rc -ne 0 ] && exit $rc
exit $route_rc
