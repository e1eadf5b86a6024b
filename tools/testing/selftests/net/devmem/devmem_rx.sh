#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device memory TCP receive: runs the devmem_rx tests in the server
# namespace of topology.sh, with the client namespace across the wire.

source "$(dirname "$0")"/topology.sh

trap 'topo_teardown || exit 1' EXIT
topo_setup || exit 1
export SRV_IF CLI_NS CLI_IF
ip netns exec "$SRV_NS" "$(dirname "$0")"/devmem_rx
