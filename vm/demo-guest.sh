#!/bin/bash
# The demo, inside the guest: devmem TCP across the two emulated igb NICs.
# ncdevmem binds a udmabuf to RX queue 1 of the server NIC, turns header
# split on and steers the flow there; the client, in the other namespace,
# fills its own udmabuf with a pattern, binds it for TX to its NIC and
# streams from it with sendmsg(MSG_ZEROCOPY) + SCM_DEVMEM_DMABUF (devmem
# TX: the NIC DMAs the payload out of the udmabuf); the server receives the
# payload into its udmabuf as tokens, checks every byte by reading the
# udmabuf, and gives the tokens back.
#
# Usage: demo-guest.sh TESTS_DIR MIB [devmem|plain]
# The third argument (default: $DEMO_TX, else devmem) picks the client:
# "plain" streams from host memory with send(), as the demo did before
# devmem TX (make demo DEMO_TX=plain).
set -u
tests=$1
mb=$2
tx=${3:-${DEMO_TX:-devmem}}
source "$tests"/topology.sh
ncdevmem=$tests/ncdevmem
out=$(mktemp -d)
pattern=251

case $tx in
devmem|plain) ;;
*) echo "demo: unknown client mode $tx (devmem or plain)" >&2; exit 2 ;;
esac

srv=
# Whatever happens, the ports go back to the initial namespace.
finish()
{
	local rc=0

	[ -n "$srv" ] && { kill "$srv" 2>/dev/null; wait "$srv"; }
	topo_teardown || rc=1
	rm -rf "$out"
	return $rc
}
trap 'finish || exit 1' EXIT
topo_setup || exit 1
tx_opts=()
[ "$tx" = devmem ] && tx_opts=(-f "$CLI_IF")
echo "demo: kernel $(uname -r)"
echo "demo: server $SRV_NS/$SRV_IF [$SRV_ADDR6], client $CLI_NS/$CLI_IF [$CLI_ADDR6]"
echo "demo: server NIC $(ip netns exec "$SRV_NS" ethtool -i "$SRV_IF" | awk '/^driver|^bus-info/ { printf "%s ", $0 }')"

bytes=$((mb << 20))
ip netns exec "$SRV_NS" "$ncdevmem" -l -f "$SRV_IF" -s "$SRV_ADDR6" \
	-c "$CLI_ADDR6" --client-port 40001 -p 5201 -t 1 -v $pattern \
	> "$out/server" 2> "$out/server.err" &
srv=$!
topo_wait "grep -q listening $out/server" 300 || { cat "$out/server.err"; exit 1; }
# ncdevmem set hds-thresh 0 (every frame split at its payload) if needed
hds=$(ip netns exec "$SRV_NS" "$tests"/dmctl hds-thresh "$SRV_IF" | cut -d' ' -f1)
echo "demo: server bound a udmabuf to $SRV_IF RX queue 1 (tcp-data-split on, hds-thresh $hds), flow steered there; streaming $mb MiB"
if [ "$tx" = devmem ]; then
	echo "demo: client sends from a udmabuf bound for TX to $CLI_IF (devmem TX)"
else
	echo "demo: client sends from host memory with send() (DEMO_TX=plain)"
fi
ip netns exec "$CLI_NS" "$ncdevmem" -s "$SRV_ADDR6" -c "$CLI_ADDR6" --client-port 40001 \
	-p 5201 -v $pattern --bytes "$bytes" "${tx_opts[@]}" \
	> "$out/client" 2> "$out/client.err" ||
	{ cat "$out/client.err"; exit 1; }
wait $srv
rc=$?
srv=

val() { sed -n "s/^$1: //p" "$out/server"; }
cval() { sed -n "s/^$1: //p" "$out/client"; }
echo "demo: bytes sent:                        $(cval bytes_sent)"
echo "demo: bytes sent from device memory:     $(cval bytes_devmem_tx)"
echo "demo: sendmsg calls, completed, copied:  $(cval sendmsg_calls), $(cval zc_completions) (MSG_ZEROCOPY notifications), $(cval zc_copied)"
echo "demo: client throughput:                 $(cval throughput_mbps) Mbit/s over $(cval seconds) s"
# whatever devmem counters the client NIC's driver has (none is fine)
ip netns exec "$CLI_NS" ethtool -S "$CLI_IF" 2>/dev/null | grep -i devmem |
	sed 's/^ */demo: client NIC /'
echo "demo: bytes received:                  $(val bytes_total)"
echo "demo: bytes received into device memory: $(val bytes_dmabuf)"
echo "demo: bytes through host memory:         $(val bytes_linear) (server NIC hds-thresh $hds)"
echo "demo: dma-buf fragments (tokens):        $(val frags)"
echo "demo: tokens freed:                      $(val tokens_freed) in $(val dontneed_calls) SO_DEVMEM_DONTNEED calls"
echo "demo: bytes that differ from the pattern: $(val validation_errors)"
echo "demo: throughput:                        $(val throughput_mbps) Mbit/s over $(val seconds) s (emulated NIC, TCG)"
echo "demo: server NIC queue 1 devmem frames:  $(ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" | sed -n 's/^ *rx_queue_1_devmem_frames: //p')"
fails=0
if [ $rc -ne 0 ] || [ "$(val bytes_total)" != "$bytes" ] ||
	[ "$(val validation_errors)" != 0 ] || [ "$(val bytes_linear)" != 0 ]; then
	cat "$out/server.err"
	fails=1
fi
if [ "$tx" = devmem ] && { [ "$(cval bytes_devmem_tx)" != "$bytes" ] ||
	[ "$(cval zc_completions)" != "$(cval sendmsg_calls)" ] ||
	[ "$(cval zc_copied)" != 0 ]; }; then
	cat "$out/client.err"
	fails=1
fi
if [ $fails -ne 0 ]; then
	echo "demo: FAIL"
	exit 1
fi
if [ "$tx" = devmem ]; then
	echo "demo: every byte went from the client's udmabuf to the server's udmabuf and matched the pattern"
else
	echo "demo: every byte arrived in the udmabuf and matched the pattern"
fi
