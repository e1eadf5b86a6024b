#!/bin/bash
# The demo, inside the guest: devmem TCP across the two emulated igb NICs.
# ncdevmem binds a udmabuf to RX queue 1 of the server NIC, turns header
# split on and steers the flow there; the client streams a pattern from the
# other namespace; the server receives the payload into the udmabuf as
# tokens, checks every byte by reading the udmabuf, and gives the tokens
# back.
set -u
tests=$1
mb=$2
source "$tests"/topology.sh
ncdevmem=$tests/ncdevmem
out=$(mktemp -d)
pattern=251

topo_setup || exit 1
echo "demo: kernel $(uname -r)"
echo "demo: server $SRV_NS/$SRV_IF [$SRV_ADDR6], client $CLI_NS/$CLI_IF [$CLI_ADDR6]"
echo "demo: server NIC $(ip netns exec "$SRV_NS" ethtool -i "$SRV_IF" | awk '/^driver|^bus-info/ { printf "%s ", $0 }')"

bytes=$((mb << 20))
ip netns exec "$SRV_NS" "$ncdevmem" -l -f "$SRV_IF" -s "$SRV_ADDR6" \
	-c "$CLI_ADDR6" -P 40001 -p 5201 -q 1 -v $pattern \
	> "$out/server" 2> "$out/server.err" &
srv=$!
topo_wait "grep -q listening $out/server" 300 || { cat "$out/server.err"; exit 1; }
echo "demo: server bound a udmabuf to $SRV_IF RX queue 1, flow steered there; streaming $mb MiB"
ip netns exec "$CLI_NS" "$ncdevmem" -s "$SRV_ADDR6" -c "$CLI_ADDR6" -P 40001 \
	-p 5201 -v $pattern -n "$bytes" > "$out/client" 2> "$out/client.err" ||
	{ cat "$out/client.err"; exit 1; }
wait $srv
rc=$?

val() { sed -n "s/^$1: //p" "$out/server"; }
echo "demo: bytes received:                  $(val bytes_total)"
echo "demo: bytes received into device memory: $(val bytes_dmabuf)"
echo "demo: bytes copied by the CPU (linear):  $(val bytes_linear)"
echo "demo: dma-buf fragments (tokens):        $(val frags)"
echo "demo: tokens freed:                      $(val tokens_freed) in $(val dontneed_calls) SO_DEVMEM_DONTNEED calls"
echo "demo: bytes that differ from the pattern: $(val validation_errors)"
echo "demo: throughput:                        $(val throughput_mbps) Mbit/s over $(val seconds) s (emulated NIC, TCG)"
echo "demo: server NIC queue 1 devmem frames:  $(ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" | sed -n 's/^ *rx_queue_1_devmem_frames: //p')"
if [ $rc -ne 0 ] || [ "$(val bytes_total)" != "$bytes" ] || [ "$(val validation_errors)" != 0 ]; then
	cat "$out/server.err"
	echo "demo: FAIL"
	exit 1
fi
echo "demo: every byte arrived in the udmabuf and matched the pattern"
topo_teardown
