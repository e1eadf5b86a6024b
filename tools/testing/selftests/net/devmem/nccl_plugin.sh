#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NCCL net plugin (nccl-net-devmem) over the emulated wire: its test
# harness drives the ncclNet API as NCCL does, receiver in the server
# namespace, sender in the client's, every byte checked:
#
# - devmem RX: the plugin binds a udmabuf to the server NIC's last RX
#   queue, steers each data socket to it (ethtool -N) and copies the
#   fragments out of the dma-buf: sizes 0 to 16 MiB, 8 receives in flight
#   with multi-recv, a sender killed mid-transfer; at least 90% of the bytes
#   must come through the dma-buf (the plugin's own count);
# - copy mode when asked (NCCL_DEVMEM_RX=0), when bind-rx is refused
#   (tcp-data-split off) and when steering is refused (the NIC's rule
#   table full): the same bytes, the reason in the log;
# - afterwards no rule of the plugin is left on the NIC.
#
# The harness is built by "make nccl" (build/nccl); without it: SKIP.

source "$(dirname "$0")"/topology.sh
DMCTL=$(realpath "$(dirname "$0")")/dmctl
NCCL=${NCCL_BUILD:-$(realpath "$(dirname "$0")/../../../nccl" 2>/dev/null)}
HARNESS=$NCCL/nccl_harness
LIB=$NCCL/libnccl-net-devmem.so
ret=0

srv() { ip netns exec "$SRV_NS" "$@"; }

cleanup()
{
	local i

	for i in $(seq 0 15); do
		srv ethtool -N "$SRV_IF" delete "$i" 2>/dev/null
	done
	topo_stop_and_restore "$SRV_NS" "$CLI_NS"
	topo_teardown
}

fail()
{
	echo "FAIL: $*"
	ret=1
}

if [ ! -x "$HARNESS" ] || [ ! -e "$LIB" ]; then
	echo "SKIP: no plugin harness at $NCCL (make nccl)"
	exit 4
fi
trap cleanup EXIT
topo_setup || exit 1

# The administrator's part: header split, and host traffic kept off the
# last queue, which the plugin binds.
nq=$(srv ethtool -l "$SRV_IF" | awk '/^Combined:/ { n = $2 } END { print n }')
[ "${nq:-0}" -ge 2 ] || { echo "SKIP: $SRV_IF has ${nq:-0} queue(s)"; exit 4; }
srv "$DMCTL" data-split "$SRV_IF" on && srv "$DMCTL" hds-thresh "$SRV_IF" 0 &&
	srv ethtool -X "$SRV_IF" equal $((nq - 1)) ||
	{ echo "FAIL: NIC set-up"; exit 1; }

harness()
{
	HARNESS_WIRE="$SRV_NS,$SRV_IF,$CLI_NS,$CLI_IF" \
		HARNESS_TIME_SCALE=${HARNESS_TIME_SCALE:-4} "$HARNESS" "$LIB" "$@" ||
		fail "harness: $*"
}

rules()
{
	srv ethtool -n "$SRV_IF" | awk '/^Total/ { print $2 }'
}

harness wire-devmem-rx-sizes wire-devmem-rx-8-outstanding wire-copy-mode-env \
	wire-sender-killed
[ "$(rules)" = 0 ] || fail "$(rules) ntuple rule(s) left after the harness"

# Steering refused: every location of the table taken (by flows to queue 0).
for i in $(seq 0 15); do
	srv ethtool -N "$SRV_IF" flow-type tcp4 src-ip 198.51.100.1 dst-ip 192.0.2.1 \
		src-port $((20000 + i)) dst-port 9 action 0 loc "$i" ||
		{ fail "could not fill the rule table (rule $i)"; break; }
done
harness wire-steering-refused
for i in $(seq 0 15); do
	srv ethtool -N "$SRV_IF" delete "$i"
done

# bind-rx refused: header split off.
srv ethtool -X "$SRV_IF" default
srv "$DMCTL" data-split "$SRV_IF" off || fail "tcp-data-split off"
harness wire-bind-refused
[ "$(rules)" = 0 ] || fail "$(rules) ntuple rule(s) left"

[ $ret = 0 ] && echo "nccl plugin over the wire: all passed"
exit $ret
