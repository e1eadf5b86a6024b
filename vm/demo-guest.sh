#!/bin/bash
# The demo, inside the guest: a TCP stream from the client namespace to the
# server namespace, across the two emulated igb NICs.
set -u
tests=$1
mb=$2
source "$tests"/topology.sh

topo_setup || exit 1
echo "demo: kernel $(uname -r)"
echo "demo: server $SRV_NS/$SRV_IF [$SRV_ADDR6], client $CLI_NS/$CLI_IF [$CLI_ADDR6]"
echo "demo: server NIC $(ip netns exec "$SRV_NS" ethtool -i "$SRV_IF" | awk '/^driver|^bus-info/ { printf "%s ", $0 }')"

bytes=$((mb << 20))
rx_before=$(topo_stat "$SRV_NS" "$SRV_IF" rx_bytes)
ip netns exec "$SRV_NS" socat -u TCP6-LISTEN:5201,reuseaddr SYSTEM:"sha256sum > /tmp/demo.sum" &
srv=$!
topo_wait "ip netns exec $SRV_NS ss -Hltn sport = :5201 | grep -q LISTEN" 100
start=$(date +%s%N)
ip netns exec "$CLI_NS" bash -c "set -o pipefail; head -c $bytes /dev/zero | tee >(sha256sum > /tmp/demo.sent) | socat -u - TCP6:[$SRV_ADDR6]:5201"
wait $srv
end=$(date +%s%N)
rx_after=$(topo_stat "$SRV_NS" "$SRV_IF" rx_bytes)

ms=$(( (end - start) / 1000000 ))
[ $ms -gt 0 ] || ms=1
echo "demo: sent $bytes bytes from $CLI_NS to $SRV_NS over TCP/IPv6 in ${ms} ms ($(( bytes / 1000 / ms )) MB/s, emulated)"
echo "demo: server NIC hardware rx_bytes grew by $((rx_after - rx_before)) (payload + headers)"
if [ "$(cat /tmp/demo.sum)" = "$(cat /tmp/demo.sent)" ]; then
	echo "demo: data intact (sha256 $(cut -c1-16 /tmp/demo.sum)...)"
else
	echo "demo: FAIL: data differs"
	exit 1
fi
topo_teardown
