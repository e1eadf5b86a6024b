#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A TCP transfer between the two namespaces crosses the emulated wire: the
# data arrives intact and the receiving NIC's hardware RX byte counter grows
# by at least the bytes sent.  Over IPv6, then IPv4; with tcp-data-split
# off (6.1's receive path), then on (header split into host memory).

source "$(dirname "$0")"/topology.sh
SIZE_MB=${SIZE_MB:-8}
PORT=5201
ret=0

tmp=$(mktemp -d)
cleanup()
{
	rm -rf "$tmp"
	topo_teardown
}
trap 'cleanup || exit 1' EXIT

topo_setup || exit 1
head -c $((SIZE_MB << 20)) /dev/urandom > "$tmp/sent"
sent_sum=$(sha256sum < "$tmp/sent" | cut -d' ' -f1)
bytes=$((SIZE_MB << 20))

transfer()
{
	local family=$1 listen=$2 connect=$3 rx_before rx_after tx_before tx_after
	local srv_pid sum

	rm -f "$tmp/received"
	rx_before=$(topo_stat "$SRV_NS" "$SRV_IF" rx_bytes)
	tx_before=$(topo_stat "$CLI_NS" "$CLI_IF" tx_bytes)
	ip netns exec "$SRV_NS" timeout 300 socat -u "$listen" "CREATE:$tmp/received" &
	srv_pid=$!
	topo_wait "ip netns exec $SRV_NS ss -Hltn sport = :$PORT | grep -q LISTEN" 100
	ip netns exec "$CLI_NS" timeout 300 socat -u "OPEN:$tmp/sent" "$connect"
	wait $srv_pid
	rx_after=$(topo_stat "$SRV_NS" "$SRV_IF" rx_bytes)
	tx_after=$(topo_stat "$CLI_NS" "$CLI_IF" tx_bytes)
	sum=$(sha256sum < "$tmp/received" | cut -d' ' -f1)

	echo "$family: sent $bytes bytes;" \
	     "server NIC rx_bytes +$((rx_after - rx_before))," \
	     "client NIC tx_bytes +$((tx_after - tx_before))"
	if [ "$sum" != "$sent_sum" ]; then
		echo "FAIL: $family: received data differs from what was sent"
		ret=1
	fi
	if [ $((rx_after - rx_before)) -lt $bytes ]; then
		echo "FAIL: $family: the server NIC's hardware counter did not see the bytes"
		ret=1
	fi
	if [ $((tx_after - tx_before)) -lt $bytes ]; then
		echo "FAIL: $family: the client NIC's hardware counter did not see the bytes"
		ret=1
	fi
}

transfer IPv6 "TCP6-LISTEN:$PORT,reuseaddr" "TCP6:[$SRV_ADDR6]:$PORT"
transfer IPv4 "TCP4-LISTEN:$PORT,reuseaddr" "TCP4:$SRV_ADDR4:$PORT"

dmctl=$(dirname "$0")/dmctl
ip netns exec "$SRV_NS" "$dmctl" data-split "$SRV_IF" on || exit 1
topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200
topo_wait "ip netns exec $CLI_NS ping -c1 -W1 $SRV_ADDR6" 100
split=$(ip netns exec "$SRV_NS" "$dmctl" data-split "$SRV_IF")
echo "server $SRV_IF tcp-data-split: $split"
[ "$split" = on ] || { echo "FAIL: tcp-data-split did not turn on"; ret=1; }

# Frames the NIC split at the TCP payload, summed over the RX queues.
hds_split()
{
	ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" |
		awk '/rx_queue_[0-9]+_hds_split:/ { n += $2 } END { print n + 0 }'
}
split_before=$(hds_split)
transfer "IPv6, header split" "TCP6-LISTEN:$PORT,reuseaddr" "TCP6:[$SRV_ADDR6]:$PORT"
transfer "IPv4, header split" "TCP4-LISTEN:$PORT,reuseaddr" "TCP4:$SRV_ADDR4:$PORT"
split_frames=$(( $(hds_split) - split_before ))
ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" | grep -E 'rx_queue_[0-9]+_(packets|hds_)'
# 2 x 8 MiB of payload is over 2 x 5700 full-size frames: without header
# split there would be none; ask for the frames of one transfer at least.
if [ "$split_frames" -lt $((bytes / 1448)) ]; then
	echo "FAIL: only $split_frames frames were header split"
	ret=1
fi
ip netns exec "$SRV_NS" "$dmctl" data-split "$SRV_IF" off
exit $ret
