#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device memory TCP end to end with ncdevmem, across the emulated wire:
#
# - a flow steered (ethtool -N, through the RSS bucket) to the bound queue
#   lands in the udmabuf and validates byte for byte, over IPv6 and IPv4,
#   while a plain flow on queue 0 is received intact at the same time;
# - tcpdump on the server NIC captures headers only;
# - loss, reordering and duplication (netem on the client) still deliver
#   the right bytes;
# - a client sending with devmem TX (from a udmabuf bound to its NIC, three
#   iovecs per sendmsg, odd chunk size) into a steered devmem RX flow: every
#   byte sent from device memory, every sendmsg completed, none copied; and
#   with loss on the client's egress, the retransmissions resend the right
#   bytes;
# - jumbo frames (MTU 4148 and 9000, the second with loss and reordering)
#   from a devmem TX client into a devmem RX flow;
# - killing the receiver mid-stream unbinds the queue, and the next run
#   binds it again.
#
# Every flow's payload lands in the dma-buf whole: no byte in host memory.

source "$(dirname "$0")"/topology.sh
NCDEVMEM=$(realpath "$(dirname "$0")")/ncdevmem
PORT=5401
PLAIN_PORT=5402
CLI_PORT=40001
# the devmem TX flow's own 4-tuple: CLI_PORT's are in TIME_WAIT by then
TX_CLI_PORT=40002
# the jumbo flows' (IPv4 and IPv6: two 4-tuples)
JUMBO_CLI_PORT=40003
PATTERN=251
ret=0

tmp=$(mktemp -d)
cleanup()
{
	topo_stop_and_restore "$SRV_NS" "$CLI_NS"
	[ -n "${CLI_IF:-}" ] && tc -n "$CLI_NS" qdisc del dev "$CLI_IF" root 2>/dev/null
	rm -rf "$tmp"
	topo_teardown
}
trap 'cleanup || exit 1' EXIT

# Per-queue ethtool -S counter of the server NIC.
srv_stat()
{
	ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" |
		sed -n "s/^ *$1: //p"
}

ncd_server()
{
	ip netns exec "$SRV_NS" timeout 600 "$NCDEVMEM" -l -f "$SRV_IF" \
		-p "$PORT" -v "$PATTERN" "$@" > "$tmp/srv.out" 2> "$tmp/srv.err" &
	srv_pid=$!
	topo_wait "grep -q listening $tmp/srv.out" 300 ||
		{ cat "$tmp/srv.err"; return 1; }
}

ncd_client()
{
	ip netns exec "$CLI_NS" timeout 600 "$NCDEVMEM" -p "$PORT" \
		-v "$PATTERN" "$@" > "$tmp/cli.out" 2> "$tmp/cli.err"
}

# Check the server's summary: all bytes, valid, every one in the dma-buf
# (hds-thresh 0: no payload byte stays in host memory).
check_server()
{
	local what=$1 bytes=$2 rc=$3 got dmabuf errors

	got=$(summary "$tmp/srv.out" bytes_total)
	dmabuf=$(summary "$tmp/srv.out" bytes_dmabuf)
	errors=$(summary "$tmp/srv.out" validation_errors)
	echo "$what: $got bytes received, $dmabuf into the dma-buf," \
	     "$(summary "$tmp/srv.out" bytes_linear) copied," \
	     "$(summary "$tmp/srv.out" tokens_freed) tokens freed," \
	     "$(summary "$tmp/srv.out" throughput_mbps) Mbit/s"
	[ "$rc" = 0 ] || { cat "$tmp/srv.err"; fail "$what: ncdevmem server exit $rc"; }
	[ "$got" = "$bytes" ] || fail "$what: received $got of $bytes bytes"
	[ "$errors" = 0 ] || fail "$what: $errors bytes differ from the pattern"
	[ "$dmabuf" = "$bytes" ] ||
		fail "$what: only $dmabuf bytes went into the dma-buf"
}

# Check a devmem TX client's summary: all bytes sent from the udmabuf, and
# every sendmsg reported complete by MSG_ZEROCOPY, none as copied.
check_tx_client()
{
	local what=$1 bytes=$2 sent devmem calls completed copied

	sent=$(summary "$tmp/cli.out" bytes_sent)
	devmem=$(summary "$tmp/cli.out" bytes_devmem_tx)
	calls=$(summary "$tmp/cli.out" sendmsg_calls)
	completed=$(summary "$tmp/cli.out" zc_completions)
	copied=$(summary "$tmp/cli.out" zc_copied)
	echo "$what: client sent $sent bytes, $devmem from device memory," \
	     "$calls sendmsg calls, $completed completed, $copied copied," \
	     "$(summary "$tmp/cli.out" throughput_mbps) Mbit/s"
	[ "$sent" = "$bytes" ] || fail "$what: client sent $sent of $bytes bytes"
	[ -n "$devmem" ] && [ "$devmem" = "$sent" ] ||
		fail "$what: $devmem of $sent bytes sent from device memory"
	[ "${calls:-0}" -gt 0 ] && [ "$completed" = "$calls" ] ||
		fail "$what: $completed of $calls sendmsg calls completed"
	[ "$copied" = 0 ] || fail "$what: $copied sendmsg calls reported copied"
}

# TcpRetransSegs of the client namespace (/proc/net/snmp is per netns).
cli_retrans()
{
	ip netns exec "$CLI_NS" awk '$1 == "Tcp:" {
		if (!col) { for (i = 2; i <= NF; i++) if ($i == "RetransSegs") col = i }
		else print $col }' /proc/net/snmp
}

# A client port for the plain flow (socat address $1, to $PLAIN_PORT) that
# RSS sends to queue 0: igb steers the devmem flow by pointing its RSS table
# entry at the bound queue, and a plain flow hashing to the same entry (one
# in 128) would follow it there. A SYN from each candidate port to the
# plain port, where nothing listens yet, shows which queue gets the flow.
# Each family has its own ports: one's TIME_WAIT must not block the other.
plain_client_port()
{
	local connect=$1 first=41000 port q0 q1

	case $connect in TCP6:*) first=41100 ;; esac
	for port in $(seq "$first" $((first + 31))); do
		q0=$(srv_stat rx_queue_0_packets)
		q1=$(srv_stat rx_queue_1_packets)
		ip netns exec "$CLI_NS" timeout 10 \
			socat -u /dev/null "$connect,sourceport=$port" 2> /dev/null
		if [ "$(srv_stat rx_queue_0_packets)" != "$q0" ] &&
		   [ "$(srv_stat rx_queue_1_packets)" = "$q1" ]; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

# A steered devmem flow and, at the same time, a plain flow on queue 0.
steered_flow()
{
	local family=$1 srv=$2 cli=$3 listen=$4 connect=$5
	local bytes=$((32 << 20)) frames_before frames_after plain_pid rc
	local q0_before q0_after sum plain_port

	frames_before=$(srv_stat rx_queue_1_devmem_frames)
	q0_before=$(srv_stat rx_queue_0_packets)
	if ! ncd_server -s "$srv" -c "$cli" --client-port "$CLI_PORT" -t 1; then
		fail "$family: server did not start"
		return
	fi

	if ! plain_port=$(plain_client_port "$connect"); then
		fail "$family: no client port for the plain flow"
		kill "$srv_pid"
		return
	fi
	ip netns exec "$SRV_NS" timeout 300 socat -u "$listen" "CREATE:$tmp/plain" &
	plain_pid=$!
	topo_wait "ip netns exec $SRV_NS ss -Hltn sport = :$PLAIN_PORT | grep -q LISTEN" 100
	ip netns exec "$CLI_NS" timeout 300 \
		socat -u "OPEN:$tmp/plain.sent" "$connect,sourceport=$plain_port" &

	ncd_client -s "$srv" -c "$cli" --client-port "$CLI_PORT" --bytes "$bytes" ||
		{ cat "$tmp/cli.err"; fail "$family: ncdevmem client failed"; }
	wait "$srv_pid"; rc=$?
	wait "$plain_pid"
	check_server "$family steered" "$bytes" "$rc"

	frames_after=$(srv_stat rx_queue_1_devmem_frames)
	q0_after=$(srv_stat rx_queue_0_packets)
	echo "$family: queue 1 devmem frames +$((frames_after - frames_before))," \
	     "queue 0 packets +$((q0_after - q0_before)) (plain flow from port $plain_port)"
	[ $((frames_after - frames_before)) -gt $((bytes / 1448 * 9 / 10)) ] ||
		fail "$family: the NIC did not count the frames as device memory"
	sum=$(sha256sum < "$tmp/plain" | cut -d' ' -f1)
	[ "$sum" = "$plain_sum" ] || fail "$family: the plain flow on queue 0 was damaged"
	[ $((q0_after - q0_before)) -gt $(((8 << 20) / 1448 / 2)) ] ||
		fail "$family: the plain flow did not use queue 0"
}

# tcpdump during a devmem flow sees headers, never payload.
capture_headers_only()
{
	local cap_pid rc

	ip netns exec "$SRV_NS" tcpdump -i "$SRV_IF" -s 0 -c 400 -w "$tmp/cap.pcap" \
		"tcp port $PORT" 2> "$tmp/tcpdump.err" &
	cap_pid=$!
	topo_wait "grep -q listening $tmp/tcpdump.err" 100
	ncd_server -s "$SRV_ADDR6" || { fail "capture: server did not start"; return; }
	ncd_client -s "$SRV_ADDR6" --bytes $((8 << 20)) || fail "capture: client failed"
	wait "$srv_pid"; rc=$?
	check_server "capture" $((8 << 20)) "$rc"
	kill "$cap_pid" 2>/dev/null; wait "$cap_pid"
	python3 - "$tmp/cap.pcap" <<'PY' || fail "capture: payload reached the packet socket"
import struct, sys
data = open(sys.argv[1], 'rb').read()
off, big, leaked = 24, 0, 0
while off + 16 <= len(data):
    _, _, incl, orig = struct.unpack_from('<IIII', data, off)
    off += 16 + incl
    if orig > 1000:
        big += 1
        if incl > 160:
            leaked += 1
print(f"capture: {big} full-size frames captured, {leaked} with payload")
sys.exit(0 if big and not leaked else 1)
PY
}

# Loss, reordering and duplicates on the client's egress.
netem_flow()
{
	local rc

	tc -n "$CLI_NS" qdisc add dev "$CLI_IF" root netem delay 1ms 1ms \
		reorder 10% 50% loss 1% duplicate 1% || { fail "netem: tc failed"; return; }
	ncd_server -s "$SRV_ADDR6" || { fail "netem: server did not start"; return; }
	ncd_client -s "$SRV_ADDR6" --bytes $((8 << 20)) || fail "netem: client failed"
	wait "$srv_pid"; rc=$?
	check_server "netem" $((8 << 20)) "$rc"
	tc -n "$CLI_NS" qdisc del dev "$CLI_IF" root
	ip netns exec "$CLI_NS" nstat -az TcpRetransSegs 2>/dev/null | tail -1
}

# devmem TX into a steered devmem RX flow: the client sends from a udmabuf
# bound to its NIC, 3 iovecs per sendmsg, 61K per call (calls start
# anywhere in the pattern period and in the page). Optional: the client
# port ($4, TX_CLI_PORT by default) and MiB to send ($5, 32).
devmem_tx_flow()
{
	local family=$1 srv=$2 cli=$3 port=${4:-$TX_CLI_PORT} bytes=$((${5:-32} << 20)) rc

	ncd_server -s "$srv" -c "$cli" --client-port "$port" -t 1 ||
		{ fail "$family devmem TX: server did not start"; return; }
	ncd_client -s "$srv" -c "$cli" --client-port "$port" --bytes "$bytes" \
		-f "$CLI_IF" --iovecs 3 -z 61K ||
		{ cat "$tmp/cli.err"; fail "$family devmem TX: client failed"; }
	wait "$srv_pid"; rc=$?
	check_server "$family devmem TX" "$bytes" "$rc"
	check_tx_client "$family devmem TX" "$bytes"
}

# devmem TX with 3% loss on the client's egress: retransmitted segments
# come from the udmabuf again and must carry the right bytes.
netem_tx_flow()
{
	local bytes=$((16 << 20)) before after rc

	before=$(cli_retrans)
	tc -n "$CLI_NS" qdisc replace dev "$CLI_IF" root netem loss 3% ||
		{ fail "netem TX: tc failed"; return; }
	if ! ncd_server -s "$SRV_ADDR4"; then
		tc -n "$CLI_NS" qdisc del dev "$CLI_IF" root
		fail "netem TX: server did not start"
		return
	fi
	ncd_client -s "$SRV_ADDR4" --bytes "$bytes" -f "$CLI_IF" --iovecs 3 -z 61K ||
		{ cat "$tmp/cli.err"; fail "netem TX: client failed"; }
	wait "$srv_pid"; rc=$?
	tc -n "$CLI_NS" qdisc del dev "$CLI_IF" root
	after=$(cli_retrans)
	check_server "netem TX" "$bytes" "$rc"
	check_tx_client "netem TX" "$bytes"
	echo "netem TX: client TcpRetransSegs +$((${after:-0} - ${before:-0}))"
	[ "${after:-0}" -gt "${before:-0}" ] ||
		fail "netem TX: nothing was retransmitted"
}

# MTU $1 on both NICs; the links come back up.
set_mtus()
{
	ip -n "$SRV_NS" link set "$SRV_IF" mtu "$1" &&
		ip -n "$CLI_NS" link set "$CLI_IF" mtu "$1" || return 1
	topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200 &&
		topo_wait "ip -n $CLI_NS link show $CLI_IF | grep -q LOWER_UP" 200
}

# Jumbo frames: devmem TX into a steered devmem RX flow at MTU 4148 (IPv4;
# 4096-byte payloads) and 9000 (IPv6; three RX descriptors a frame), then
# at 9000 with loss and reordering on the client's egress.
jumbo_flows()
{
	local rc

	set_mtus 4148 || { fail "jumbo: MTU 4148"; return; }
	devmem_tx_flow "IPv4, MTU 4148," "$SRV_ADDR4" "$CLI_ADDR4" "$JUMBO_CLI_PORT" 16
	set_mtus 9000 || { fail "jumbo: MTU 9000"; set_mtus 1500; return; }
	devmem_tx_flow "IPv6, MTU 9000," "$SRV_ADDR6" "$CLI_ADDR6" "$JUMBO_CLI_PORT" 16
	if tc -n "$CLI_NS" qdisc add dev "$CLI_IF" root netem delay 1ms 1ms \
		reorder 10% 50% loss 1% duplicate 1%; then
		if ncd_server -s "$SRV_ADDR4"; then
			ncd_client -s "$SRV_ADDR4" --bytes $((16 << 20)) -f "$CLI_IF" \
				--iovecs 3 -z 61K ||
				{ cat "$tmp/cli.err"; fail "jumbo netem: client failed"; }
			wait "$srv_pid"; rc=$?
			check_server "IPv4, MTU 9000, netem" $((16 << 20)) "$rc"
		else
			fail "jumbo netem: server did not start"
		fi
		tc -n "$CLI_NS" qdisc del dev "$CLI_IF" root
	else
		fail "jumbo netem: tc failed"
	fi
	set_mtus 1500 || fail "jumbo: MTU 1500 again"
}

# SIGKILL the receiver mid-stream: the queue is unbound; binding again works.
kill_receiver()
{
	local cli_pid

	ncd_server -s "$SRV_ADDR6" || { fail "kill: server did not start"; return; }
	ncd_client -s "$SRV_ADDR6" --bytes $((256 << 20)) &
	cli_pid=$!
	sleep 3
	# the receiver itself, not the timeout(1) wrapping it
	pkill -KILL -P "$srv_pid" ncdevmem || fail "kill: no receiver to kill"
	wait "$srv_pid" 2>/dev/null
	wait "$cli_pid" 2>/dev/null
	ncd_server -s "$SRV_ADDR6" || { fail "kill: cannot bind again"; return; }
	ncd_client -s "$SRV_ADDR6" --bytes $((4 << 20)) || fail "kill: client failed"
	wait "$srv_pid"
	check_server "after kill" $((4 << 20)) $?
}

# tc redirect of a devmem flow to another device (a veth): the redirect
# refuses the unreadable skbs (counted as the action's overlimits), so no
# driver ever sees them as pages.
redirect_drops_device_memory()
{
	local cli_pid refused

	ip -n "$SRV_NS" link add dmv0 type veth peer name dmv1 &&
		ip -n "$SRV_NS" link set dmv0 up && ip -n "$SRV_NS" link set dmv1 up ||
		{ fail "redirect: no veth"; return; }
	ncd_server -s "$SRV_ADDR6" || { fail "redirect: server did not start"; return; }
	ncd_client -s "$SRV_ADDR6" --bytes $((256 << 20)) &
	cli_pid=$!
	sleep 2
	tc -n "$SRV_NS" qdisc add dev "$SRV_IF" ingress &&
		tc -n "$SRV_NS" filter add dev "$SRV_IF" ingress matchall \
			action mirred egress redirect dev dmv0 ||
		fail "redirect: tc failed"
	sleep 3
	refused=$(tc -n "$SRV_NS" -s filter show dev "$SRV_IF" ingress |
		sed -n 's/.*overlimits \([0-9]*\).*/\1/p' | head -1)
	tc -n "$SRV_NS" qdisc del dev "$SRV_IF" ingress
	echo "redirect: $refused device-memory skbs refused by the redirect"
	[ "${refused:-0}" -gt 0 ] || fail "redirect: device memory was redirected to the veth"
	kill "$srv_pid" "$cli_pid" 2>/dev/null
	wait "$srv_pid" "$cli_pid" 2>/dev/null
	ip -n "$SRV_NS" link del dmv0
}

topo_setup || exit 1
head -c $((8 << 20)) /dev/urandom > "$tmp/plain.sent"
plain_sum=$(sha256sum < "$tmp/plain.sent" | cut -d' ' -f1)

steered_flow IPv6 "$SRV_ADDR6" "$CLI_ADDR6" \
	"TCP6-LISTEN:$PLAIN_PORT,reuseaddr" "TCP6:[$SRV_ADDR6]:$PLAIN_PORT"
steered_flow IPv4 "$SRV_ADDR4" "$CLI_ADDR4" \
	"TCP4-LISTEN:$PLAIN_PORT,reuseaddr" "TCP4:$SRV_ADDR4:$PLAIN_PORT"
devmem_tx_flow IPv6 "$SRV_ADDR6" "$CLI_ADDR6"
capture_headers_only
netem_flow
netem_tx_flow
jumbo_flows
kill_receiver
redirect_drops_device_memory

[ $ret = 0 ] && echo "devmem flows: all passed"
exit $ret
