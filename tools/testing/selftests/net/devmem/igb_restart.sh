#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# igb RX queue restarts under traffic, a queue that does not stop (fault
# injection) and the qstats of a header split queue: runs the igb_restart
# tests in the server namespace of topology.sh, with the client namespace
# across the emulated wire.

source "$(dirname "$0")"/topology.sh

cleanup()
{
	# what a test killed by its timeout could not undo
	if [ -n "${SRV_IF:-}" ]; then
		fault=/sys/kernel/debug/fail_igb_queue_stop/probability
		[ -w "$fault" ] && echo 0 > "$fault"
		topo_stop_and_restore "$SRV_NS" "$CLI_NS"
	fi
	topo_teardown
}
trap 'cleanup || exit 1' EXIT

topo_setup || exit 1
export SRV_IF CLI_NS CLI_IF
ip netns exec "$SRV_NS" "$(dirname "$0")"/igb_restart
