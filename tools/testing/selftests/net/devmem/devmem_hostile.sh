#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A bound RX queue under traffic the devmem flow never sends. Every RSS
# bucket of the server NIC points at the bound queue, so whatever the
# peer sends lands in the dma-buf; the peer then tries each way the
# kernel could read, copy, quote or forward that payload:
#
# - UDP to closed ports, IPv4 and IPv6, small and large: the ICMP errors
#   quote only bytes the peer sent (headers; device memory is never
#   quoted, and never uninitialised memory in its place);
# - UDP to an open port: recv() fails with EFAULT, the socket lives on;
# - ICMP echo with large payloads: no reply carries foreign bytes;
# - forwarding to a third namespace behind a veth of MTU 1280 (IPv4 with
#   DF clear, IPv6), with UDP fraglist GRO on: dropped and counted in
#   InDiscards, never fragmented, never delivered (while datagrams that
#   come on queue 0, in host memory, are forwarded);
# - tc mirred mirroring the bound NIC's ingress to the veth: refused,
#   counted as the action's overlimits;
# - a tc BPF program (libbpf) calling bpf_skb_load_bytes() past the
#   headers gets an error for every datagram;
# - an nft rule matching payload bytes never matches device memory;
#   nft dup towards the third namespace duplicates nothing;
# - a packet socket captures headers only;
# - TCP to a plain listener: recv() fails with EFAULT; through the FTP
#   conntrack helper (port 21), the helper drops what it cannot parse;
#   nothing crashes;
# - hand-made frames: IPv4 and IPv6 fragments (overlapping ones too),
#   IPv6 extension headers, TCP with bad checksums (counted in
#   InCsumErrors), SYN and RST with payload, segments out of an
#   established connection's window, VLAN-tagged UDP to a VLAN device:
#   fragments are never reassembled into a datagram, ICMP errors quote
#   only bytes that were sent;
# - frames longer than one payload buffer (the server's MTU is 3000, so
#   the MAC takes frames up to 9728 bytes; the peer's MTU is 9000):
#   received whole, one fragment per payload buffer, never taken apart
#   into frames made of a stale header and the peer's bytes;
# - MPTCP with DSS checksums: a mapping over device memory counts as a
#   checksum failure (MPTcpExtDataCsumErr), no byte reaches the reader;
# - kTLS receive on a stream whose record starts in host memory and goes
#   on in device memory: the stream ends with EFAULT, nothing is
#   decrypted (run last: before its fix it crashed the kernel).
#   MPTCP and kTLS streams start on queue 0 and move to the bound queue.
#
# The server NIC runs hds-thresh 0, as a bound queue needs: frames that
# are not IP land whole in the payload buffer, so neighbours are
# permanent entries (topology.sh).
#
# Then a validated devmem flow, with UDP from the peer at the same time,
# still delivers every byte intact. The guest runner fails the test on
# any kernel splat.

source "$(dirname "$0")"/topology.sh
DIR=$(realpath "$(dirname "$0")")
NCDEVMEM=$DIR/ncdevmem
PEER="/usr/bin/python3 $DIR/hostile_peer.py"
FWD_NS=devmem-fwd
FWD_ADDR4=198.51.100.2
FWD_ADDR6=2001:db8:1::2
PORT=5411
UDP_PORT=5412
PATTERN=251
FRAG_PORT=5413
HOLD_PORT=5414
STREAM_PORT=5415
BIG_PORT=5416
VLAN_ADDR4=203.0.113.1
SRV_MTU=3000
ret=0

tmp=$(mktemp -d)
cleanup()
{
	topo_stop_and_restore "$SRV_NS" "$CLI_NS" "$FWD_NS"
	ip netns del "$FWD_NS" 2>/dev/null
	if [ -n "${SRV_IF:-}" ]; then
		ip -n "$SRV_NS" link del "$SRV_IF.100" 2>/dev/null
		ip -n "$CLI_NS" link del "$CLI_IF.100" 2>/dev/null
		ip -n "$SRV_NS" link set "$SRV_IF" mtu 1500
		ip -n "$CLI_NS" link set "$CLI_IF" mtu 1500
	fi
	rm -rf "$tmp"
	topo_teardown
}
trap 'cleanup || exit 1' EXIT

# Ip: or Ip6 counter of a namespace.
snmp4()
{
	ip netns exec "$1" awk -v k="$2" '$1 == "Ip:" {
		if (!col) { for (i = 2; i <= NF; i++) if ($i == k) col = i }
		else print $col }' /proc/net/snmp
}

snmp6()
{
	ip netns exec "$1" awk -v k="$2" '$1 == k { print $2 }' /proc/net/snmp6
}

srv_stat()
{
	ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" | sed -n "s/^ *$1: //p"
}

# The third namespace, behind a veth of MTU 1280, routed through the server.
fwd_setup()
{
	ip netns add "$FWD_NS" &&
	ip -n "$SRV_NS" link add veth-s type veth peer name veth-f netns "$FWD_NS" &&
	ip -n "$SRV_NS" link set veth-s mtu 1280 up &&
	ip -n "$FWD_NS" link set veth-f mtu 1280 up &&
	ip -n "$FWD_NS" link set lo up &&
	ip -n "$SRV_NS" addr add 198.51.100.1/24 dev veth-s &&
	ip -n "$SRV_NS" addr add 2001:db8:1::1/64 dev veth-s nodad &&
	ip -n "$FWD_NS" addr add "$FWD_ADDR4"/24 dev veth-f &&
	ip -n "$FWD_NS" addr add "$FWD_ADDR6"/64 dev veth-f nodad &&
	ip -n "$FWD_NS" route add default via 198.51.100.1 &&
	ip -n "$FWD_NS" -6 route add default via 2001:db8:1::1 &&
	ip -n "$CLI_NS" route add 198.51.100.0/24 via "$SRV_ADDR4" &&
	ip -n "$CLI_NS" -6 route add 2001:db8:1::/64 via "$SRV_ADDR6" &&
	ip netns exec "$SRV_NS" sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec "$SRV_NS" sysctl -qw net.ipv6.conf.all.forwarding=1
}

# The bound queue receives everything: ncdevmem without --client-port points the
# whole RSS table at it and waits for its connection meanwhile.
server_start()
{
	ip netns exec "$SRV_NS" timeout $((900 * TOPO_SCALE)) "$NCDEVMEM" -l -f "$SRV_IF" \
		-s "$SRV_ADDR6" -p "$PORT" -t 1 -v "$PATTERN" \
		> "$tmp/srv.out" 2> "$tmp/srv.err" &
	srv_pid=$!
	topo_wait "grep -q listening $tmp/srv.out" 300 ||
		{ cat "$tmp/srv.err"; return 1; }
}

udp_closed_ports()
{
	local dst size out

	for dst in "$SRV_ADDR4" "$SRV_ADDR6"; do
		for size in 600 1400; do
			out=$tmp/closed.$size
			ip netns exec "$CLI_NS" $PEER closed "$dst" 20 "$size" > "$out" ||
				fail "closed ports $dst, $size bytes:" \
				     "the ICMP errors quoted bytes the peer never sent"
			echo "closed ports $dst, $size bytes:" \
			     "$(summary "$out" icmp_errors) ICMP errors," \
			     "at most $(summary "$out" max_quoted_payload) payload bytes quoted," \
			     "$(summary "$out" foreign_bytes) foreign bytes"
			[ "$(summary "$out" icmp_errors)" -gt 0 ] ||
				fail "closed ports $dst, $size bytes: no ICMP error came back"
		done
	done
}

udp_open_port()
{
	local before after

	before=$(srv_stat rx_queue_1_devmem_frames)
	# until all 40 came (python starts slowly in the guest)
	ip netns exec "$SRV_NS" $PEER recv "$UDP_PORT" 30 40 > "$tmp/open.out" &
	local pid=$!
	topo_wait "grep -q listening $tmp/open.out" 100
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR4" "$UDP_PORT" 20 1000 > /dev/null
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR6" "$UDP_PORT" 20 1000 > /dev/null
	wait "$pid" || fail "open port: a datagram carried bytes the peer never sent"
	after=$(srv_stat rx_queue_1_devmem_frames)
	echo "open port: $(summary "$tmp/open.out" intact) intact," \
	     "$(summary "$tmp/open.out" refused) refused with EFAULT," \
	     "$((after - before)) frames into the dma-buf"
	[ $((after - before)) -ge 30 ] ||
		fail "open port: the datagrams did not land in the dma-buf"
	[ "$(summary "$tmp/open.out" refused)" -ge 30 ] ||
		fail "open port: recv() did not fail on device memory"
}

icmp_echo()
{
	local dst

	for dst in "$SRV_ADDR4" "$SRV_ADDR6"; do
		ip netns exec "$CLI_NS" ping -q -c 5 -i 0.2 -W 1 -s 1400 -p 5a "$dst" \
			> "$tmp/ping.out" 2>&1
		! grep -qi "wrong data" "$tmp/ping.out" ||
			fail "echo $dst: a reply carried bytes the peer never sent"
		echo "echo $dst: $(grep -o '[0-9]* received' "$tmp/ping.out")"
	done
}

forwarding()
{
	local d4 d6 f4 f6 pid

	# until the 40 datagrams from queue 0 came: six senders start one
	# after another, python is slow to start in a loaded guest
	ip netns exec "$FWD_NS" $PEER recv "$UDP_PORT" 60 40 > "$tmp/fwd.out" &
	pid=$!
	topo_wait "grep -q listening $tmp/fwd.out" 100
	d4=$(snmp4 "$SRV_NS" InDiscards)
	d6=$(snmp6 "$SRV_NS" Ip6InDiscards)
	f4=$(snmp4 "$SRV_NS" FragFails)
	# too big for the veth, DF clear; then small enough; then UDP
	# fraglist GRO on, one flow of small and large datagrams (all device
	# memory with hds-thresh 0); then, as a control, small datagrams on
	# queue 0, in host memory: forwarded
	ip netns exec "$CLI_NS" $PEER send "$FWD_ADDR4" "$UDP_PORT" 20 1400 > /dev/null
	ip netns exec "$CLI_NS" $PEER send "$FWD_ADDR6" "$UDP_PORT" 20 1400 > /dev/null
	ip netns exec "$CLI_NS" $PEER send "$FWD_ADDR4" "$UDP_PORT" 20 600 > /dev/null
	ip netns exec "$SRV_NS" ethtool -K "$SRV_IF" rx-gro-list on ||
		fail "forwarding: rx-gro-list cannot be turned on"
	ip netns exec "$CLI_NS" $PEER send "$FWD_ADDR4" "$UDP_PORT" 40 100 40001 > /dev/null &
	ip netns exec "$CLI_NS" $PEER send "$FWD_ADDR4" "$UDP_PORT" 40 1000 40001 > /dev/null
	wait %%
	ip netns exec "$SRV_NS" ethtool -K "$SRV_IF" rx-gro-list off
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" equal 1
	ip netns exec "$CLI_NS" $PEER send "$FWD_ADDR4" "$UDP_PORT" 40 100 > /dev/null
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" weight 0 1
	wait "$pid" || fail "forwarding: a forwarded datagram carried bytes the peer never sent"
	d4=$(($(snmp4 "$SRV_NS" InDiscards) - d4))
	d6=$(($(snmp6 "$SRV_NS" Ip6InDiscards) - d6))
	f4=$(($(snmp4 "$SRV_NS" FragFails) - f4))
	echo "forwarding: InDiscards +$d4, Ip6InDiscards +$d6, FragFails +$f4;" \
	     "third namespace got $(summary "$tmp/fwd.out" intact) intact," \
	     "$(summary "$tmp/fwd.out" refused) unreadable"
	[ "$d4" -ge 100 ] || fail "forwarding: IPv4 device memory not dropped and counted"
	[ "$d6" -ge 20 ] || fail "forwarding: IPv6 device memory not dropped and counted"
	[ "$(summary "$tmp/fwd.out" refused)" = 0 ] ||
		fail "forwarding: device memory reached the third namespace"
	[ "$(summary "$tmp/fwd.out" intact)" -gt 0 ] ||
		fail "forwarding: datagrams in host memory (queue 0) were not forwarded"
}

# TX drops of a device in the server namespace.
tx_dropped()
{
	ip -n "$SRV_NS" -s -j link show "$1" | /usr/bin/python3 -c \
		'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["dropped"])'
}

mirred()
{
	local over drops

	drops=$(tx_dropped veth-s)
	tc -n "$SRV_NS" qdisc add dev "$SRV_IF" clsact &&
	tc -n "$SRV_NS" filter add dev "$SRV_IF" ingress protocol ip matchall \
		action mirred egress mirror dev veth-s ||
		{ fail "mirred: tc failed"; return; }
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR4" "$UDP_PORT" 20 1000 > /dev/null
	over=$(tc -n "$SRV_NS" -s filter show dev "$SRV_IF" ingress |
		sed -n 's/.*overlimits \([0-9]*\).*/\1/p' | head -1)
	tc -n "$SRV_NS" qdisc del dev "$SRV_IF" clsact
	drops=$(($(tx_dropped veth-s) - drops))
	echo "mirred: $over mirrors refused, $drops dropped by the veth's transmit path"
	[ "${over:-0}" -ge 20 ] || fail "mirred: device memory was mirrored to another device"
	[ "$drops" = 0 ] ||
		fail "mirred: device memory reached another device's transmit path"
}

# A tc BPF program reading past the headers gets an error, not payload.
tc_bpf()
{
	ip netns exec "$SRV_NS" "$DIR"/tc_payload "$SRV_IF" $((10 * TOPO_SCALE)) \
		> "$tmp/tc.out" 2>&1 &
	local pid=$!
	topo_wait "grep -q attached $tmp/tc.out" 100 ||
		{ cat "$tmp/tc.out"; fail "tc bpf: program not attached"; return; }
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR4" "$UDP_PORT" 20 1000 > /dev/null
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR6" "$UDP_PORT" 20 1000 > /dev/null
	wait "$pid" || fail "tc bpf: tc_payload failed"
	echo "tc bpf: $(summary "$tmp/tc.out" load_ok) payload reads worked," \
	     "$(summary "$tmp/tc.out" load_refused) refused"
	[ "$(summary "$tmp/tc.out" load_refused)" -ge 40 ] ||
		fail "tc bpf: reads past the headers of device memory were not refused"
	[ "$(summary "$tmp/tc.out" load_ok)" = 0 ] ||
		fail "tc bpf: a program read payload in device memory"
}

# One nft table for the rest of the run: a rule that matches payload
# bytes, a dup towards the third namespace, and the FTP conntrack helper
# on port 21 (which parses the payload of every segment).
nft_setup()
{
	ip netns exec "$SRV_NS" nft -f - <<-EOF || { fail "nft: rules not loaded"; return; }
	table ip hostile {
		ct helper ftp-standard {
			type "ftp" protocol tcp;
		}
		chain pre {
			type filter hook prerouting priority 0;
			udp dport $UDP_PORT @th,64,32 0x5a5a5a5a counter
			ip daddr $FWD_ADDR4 dup to $FWD_ADDR4
			tcp dport 21 ct helper set "ftp-standard"
		}
	}
	EOF
}

nft_payload()
{
	local matched

	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR4" "$UDP_PORT" 20 1000 > /dev/null
	ip netns exec "$CLI_NS" $PEER send "$FWD_ADDR4" "$UDP_PORT" 20 1000 > /dev/null
	matched=$(ip netns exec "$SRV_NS" nft list table ip hostile |
		sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
	echo "nft: payload rule matched ${matched:-?} datagrams in device memory"
	[ "$matched" = 0 ] || fail "nft: a rule read payload in device memory"
}

capture()
{
	ip netns exec "$SRV_NS" tcpdump -i "$SRV_IF" -s 0 -c 20 -w "$tmp/udp.pcap" \
		"udp port $UDP_PORT" 2> "$tmp/tcpdump.err" &
	local pid=$!
	topo_wait "grep -q listening $tmp/tcpdump.err" 100
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR4" "$UDP_PORT" 20 1000 > /dev/null
	sleep "$TOPO_SCALE"
	kill "$pid" 2>/dev/null; wait "$pid"
	local leak="capture: payload reached the packet socket"
	/usr/bin/python3 - "$tmp/udp.pcap" <<-'PY' || fail "$leak"
	import struct, sys
	data = open(sys.argv[1], 'rb').read()
	off, frames, leaked = 24, 0, 0
	while off + 16 <= len(data):
	    _, _, incl, orig = struct.unpack_from('<IIII', data, off)
	    frames += 1
	    leaked += incl > 64
	    off += 16 + incl
	print(f"capture: {frames} frames, {leaked} with payload")
	sys.exit(0 if frames and not leaked else 1)
	PY
}

# A TCP stream of device memory to a listener that is not devmem aware;
# prints the bytes it got and its EFAULTs.
tcp_to_listener()
{
	local port=$1

	rm -f "$tmp/tcp.$port"
	ip netns exec "$SRV_NS" timeout $((20 * TOPO_SCALE)) \
		socat -u TCP4-LISTEN:"$port",reuseaddr \
		"CREATE:$tmp/tcp.$port" 2> "$tmp/socat.$port" &
	local pid=$!
	topo_wait "ip netns exec $SRV_NS ss -Hltn sport = :$port | grep -q LISTEN" 100
	head -c 200000 /dev/zero | tr '\0' 'Z' |
		ip netns exec "$CLI_NS" timeout $((10 * TOPO_SCALE)) \
			socat -u - "TCP4:$SRV_ADDR4:$port" 2>/dev/null
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "$(stat -c %s "$tmp/tcp.$port" 2>/dev/null || echo 0)" \
	     "$(grep -c 'Bad address' "$tmp/socat.$port")"
}

plain_tcp()
{
	local got

	got=$(tcp_to_listener 2121)
	echo "plain TCP: the listener got ${got% *} bytes, ${got#* } EFAULT"
	[ "${got#* }" -gt 0 ] ||
		fail "plain TCP: a socket without MSG_SOCK_DEVMEM read device memory"
}

# The FTP conntrack helper (nft_phase loads it for port 21) parses every
# segment's payload: device memory it cannot parse is dropped.
ftp_helper()
{
	local got

	got=$(tcp_to_listener 21)
	echo "FTP helper: the listener got ${got% *} bytes, ${got#* } EFAULT"
	grep -q Z "$tmp/tcp.21" 2>/dev/null &&
		fail "FTP helper: device memory reached a plain socket as bytes"
}

# Tcp: counter of a namespace.
tcp_snmp()
{
	ip netns exec "$1" awk -v k="$2" '$1 == "Tcp:" {
		if (!col) { for (i = 2; i <= NF; i++) if ($i == k) col = i }
		else print $col }' /proc/net/snmp
}

# A VLAN device on each side: the server's answers on VLAN 100, the
# client's lets tagged frames through its NIC's VLAN filter.
vlan_setup()
{
	local cli_mac

	cli_mac=$(ip netns exec "$CLI_NS" cat /sys/class/net/"$CLI_IF"/address)
	ip -n "$SRV_NS" link add link "$SRV_IF" name "$SRV_IF.100" type vlan id 100 &&
	ip -n "$SRV_NS" addr add "$VLAN_ADDR4/24" dev "$SRV_IF.100" &&
	ip -n "$SRV_NS" link set "$SRV_IF.100" up &&
	ip -n "$SRV_NS" neigh add "${VLAN_ADDR4%.*}.2" lladdr "$cli_mac" \
		dev "$SRV_IF.100" &&
	ip -n "$CLI_NS" link add link "$CLI_IF" name "$CLI_IF.100" type vlan id 100 &&
	ip -n "$CLI_NS" link set "$CLI_IF.100" up
}

crafted_frames()
{
	local srv_mac csum r4 r6 req hds frag_pid hold_pid

	vlan_setup || { fail "crafted frames: VLAN devices"; return; }
	# incomplete datagrams time out (and are quoted) within the run
	ip netns exec "$SRV_NS" sysctl -qw net.ipv4.ipfrag_time=1 \
		net.ipv6.ip6frag_time=1
	srv_mac=$(ip netns exec "$SRV_NS" cat /sys/class/net/"$SRV_IF"/address)
	ip netns exec "$SRV_NS" $PEER recv "$FRAG_PORT" 10 > "$tmp/frag.out" &
	frag_pid=$!
	# the holder keeps its connections until the peer is done (SIGTERM)
	ip netns exec "$SRV_NS" $PEER hold "$HOLD_PORT" 300 > "$tmp/hold.out" &
	hold_pid=$!
	topo_wait "grep -q listening $tmp/frag.out && grep -q listening $tmp/hold.out" 300 ||
		fail "crafted frames: the receivers did not start listening in 30 s"
	csum=$(tcp_snmp "$SRV_NS" InCsumErrors)
	r4=$(snmp4 "$SRV_NS" ReasmFails)
	r6=$(snmp6 "$SRV_NS" Ip6ReasmFails)
	req=$(($(snmp4 "$SRV_NS" ReasmReqds) + $(snmp6 "$SRV_NS" Ip6ReasmReqds)))
	hds=$(srv_stat rx_queue_1_hds_drops)
	ip netns exec "$CLI_NS" $PEER frames "$CLI_IF" "$srv_mac" \
		"$CLI_ADDR4" "$SRV_ADDR4" "$CLI_ADDR6" "$SRV_ADDR6" "$FRAG_PORT" \
		"$PORT" "$HOLD_PORT" "$VLAN_ADDR4" > "$tmp/frames.out" 2>&1 ||
		{ cat "$tmp/frames.out"
		  fail "crafted frames: the peer failed," \
		       "or an ICMP error quoted bytes it never sent"; }
	wait "$frag_pid" || fail "crafted frames: a datagram carried bytes the peer never sent"
	kill "$hold_pid" 2>/dev/null
	wait "$hold_pid"
	csum=$(($(tcp_snmp "$SRV_NS" InCsumErrors) - csum))
	r4=$(($(snmp4 "$SRV_NS" ReasmFails) - r4))
	r6=$(($(snmp6 "$SRV_NS" Ip6ReasmFails) - r6))
	req=$(($(snmp4 "$SRV_NS" ReasmReqds) + $(snmp6 "$SRV_NS" Ip6ReasmReqds) - req))
	hds=$(($(srv_stat rx_queue_1_hds_drops) - hds))
	ip netns exec "$SRV_NS" sysctl -qw net.ipv4.ipfrag_time=30 \
		net.ipv6.ip6frag_time=60
	echo "crafted frames: $(summary "$tmp/frames.out" frames_sent) sent," \
	     "$(summary "$tmp/frames.out" icmp_errors) ICMP errors back with" \
	     "$(summary "$tmp/frames.out" foreign_bytes) foreign bytes;" \
	     "InCsumErrors +$csum, fragments to reassemble +$req," \
	     "ReasmFails +$r4, Ip6ReasmFails +$r6," \
	     "hds_drops +$hds; fragmented datagrams delivered:" \
	     "$(summary "$tmp/frag.out" intact) intact," \
	     "$(summary "$tmp/frag.out" refused) unreadable"
	[ "$csum" -ge 20 ] ||
		fail "crafted frames: bad TCP checksums not counted in InCsumErrors"
	[ "$(summary "$tmp/frag.out" intact)" = 0 ] &&
		[ "$(summary "$tmp/frag.out" refused)" = 0 ] ||
		fail "crafted frames: fragments of device memory were reassembled"
	[ "$req" -gt 0 ] ||
		fail "crafted frames: no fragment reached reassembly"
	[ $((r4 + r6)) -gt 0 ] ||
		fail "crafted frames: failed reassemblies were not counted"
	[ "$(summary "$tmp/frames.out" vlan_icmp_errors)" -gt 0 ] ||
		fail "crafted frames: nothing came back from the VLAN device"
	[ "$(summary "$tmp/hold.out" accepted)" -ge 1 ] ||
		fail "crafted frames: the connection for out-of-window segments failed"
	ip -n "$SRV_NS" link del "$SRV_IF.100"
	ip -n "$CLI_NS" link del "$CLI_IF.100"
}

# Frames that span several RX descriptors. 300 datagrams first leave a
# UDP header for UDP_PORT in every header buffer of the ring: a
# continuation taken for a frame of its own would reach that port. Then
# 20 datagrams of 8000 bytes to BIG_PORT: each frame takes two payload
# buffers and is received whole (device memory: refused with EFAULT).
oversize()
{
	local hds got big pid bpid

	ip -n "$CLI_NS" link set "$CLI_IF" mtu 9000 ||
		{ fail "oversize: the peer's MTU cannot be raised"; return; }
	topo_wait "ip -n $CLI_NS link show $CLI_IF | grep -q LOWER_UP" 200
	ip netns exec "$SRV_NS" $PEER recv "$UDP_PORT" 12 > "$tmp/oversize.out" &
	pid=$!
	ip netns exec "$SRV_NS" $PEER recv "$BIG_PORT" 30 20 > "$tmp/big.out" &
	bpid=$!
	topo_wait "grep -q listening $tmp/oversize.out && grep -q listening $tmp/big.out" 100
	hds=$(srv_stat rx_queue_1_hds_drops)
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR4" "$UDP_PORT" 300 1000 > /dev/null
	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR4" "$BIG_PORT" 20 8000 > /dev/null
	wait "$pid" || fail "oversize: a datagram carried bytes the peer never sent"
	wait "$bpid" || fail "oversize: a large datagram carried bytes the peer never sent"
	hds=$(($(srv_stat rx_queue_1_hds_drops) - hds))
	got=$(($(summary "$tmp/oversize.out" intact) + $(summary "$tmp/oversize.out" refused)))
	big=$(($(summary "$tmp/big.out" intact) + $(summary "$tmp/big.out" refused)))
	ip -n "$CLI_NS" link set "$CLI_IF" mtu 1500
	topo_wait "ip -n $CLI_NS link show $CLI_IF | grep -q LOWER_UP" 200
	echo "oversize: $got datagrams for 300 sent of 1000 bytes; $big for 20" \
	     "sent of 8000 bytes ($(summary "$tmp/big.out" refused) refused);" \
	     "hds_drops +$hds"
	[ "$got" -le 300 ] ||
		fail "oversize: $((got - 300)) continuations were delivered as frames of their own"
	[ "$big" -eq 20 ] ||
		fail "oversize: frames of several descriptors were not received whole"
	[ "$hds" -eq 0 ] ||
		fail "oversize: frames of several descriptors were dropped"
}

# One stream of $2 bytes from the peer to a reader in the server namespace
# (hostile_peer.py stream-send and stream-recv, mode $1); the reader's
# summary in $tmp/$1.out. Its first part comes on queue 0, in host
# memory: RSS points at queue 0 alone until the server has acknowledged
# it, then back at the bound queue for the rest. With hds-thresh 0 no
# TCP payload on the bound queue stays in host memory, but a flow that
# moves between queues mixes the two.
peer_stream()
{
	local gate=$tmp/$1.gate rpid spid

	rm -f "$gate"
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" equal 1
	ip netns exec "$SRV_NS" $PEER stream-recv "$1" "$STREAM_PORT" 20 \
		> "$tmp/$1.out" 2>&1 &
	rpid=$!
	topo_wait "grep -q listening $tmp/$1.out" 100
	ip netns exec "$CLI_NS" $PEER stream-send "$1" "$SRV_ADDR4" \
		"$STREAM_PORT" "$2" "$gate" > "$tmp/$1.send" &
	spid=$!
	topo_wait "grep -q 'first part acked' $tmp/$1.send" 100 ||
		{ echo "$1: the first part was not acknowledged on queue 0"
		  cat "$tmp/$1.send"; }
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" weight 0 1
	touch "$gate"
	wait "$spid"
	wait "$rpid"
}

# A TCP stream that kTLS receive decrypts in the kernel: the record's
# header and first bytes come in host memory (queue 0), the rest lands in
# device memory. The kernel cannot decrypt it: the
# stream ends with EFAULT (for its next recv(), once).
ktls()
{
	peer_stream ktls 4000
	echo "kTLS: $(summary "$tmp/ktls.out" bytes) bytes decrypted, the stream" \
	     "ended with $(summary "$tmp/ktls.out" error)"
	[ "$(summary "$tmp/ktls.out" error)" = EFAULT ] ||
		{ cat "$tmp/ktls.out"
		  fail "kTLS: a record in device memory did not end the stream with EFAULT"; }
}

# MPTcpExt DataCsumErr of the server namespace.
mptcp_csum_errors()
{
	ip netns exec "$SRV_NS" awk '$1 == "MPTcpExt:" {
		if (!col) { for (i = 2; i <= NF; i++) if ($i == "DataCsumErr") col = i }
		else print $col }' /proc/net/netstat
}

# MPTCP with DSS checksums: the checksum of a mapping whose bytes lie in
# device memory cannot be computed. It counts as a checksum failure
# (MPTcpExtDataCsumErr) and no byte of it reaches the reader. The first
# 100 bytes come in host memory (queue 0): their mapping validates, so the
# failure takes RFC 8684's MP_FAIL path.
mptcp()
{
	local ns errs

	for ns in "$SRV_NS" "$CLI_NS"; do
		ip netns exec "$ns" sysctl -qw net.mptcp.enabled=1 \
			net.mptcp.checksum_enabled=1 ||
			{ fail "mptcp: no MPTCP (CONFIG_MPTCP)"; return; }
	done
	errs=$(mptcp_csum_errors)
	peer_stream mptcp 200000
	errs=$(($(mptcp_csum_errors) - errs))
	for ns in "$SRV_NS" "$CLI_NS"; do
		ip netns exec "$ns" sysctl -qw net.mptcp.checksum_enabled=0
	done
	echo "MPTCP: the reader got $(summary "$tmp/mptcp.out" bytes) bytes," \
	     "error $(summary "$tmp/mptcp.out" error); DataCsumErr +$errs"
	[ "$(summary "$tmp/mptcp.out" bytes)" -le 100 ] &&
		[ "$(summary "$tmp/mptcp.out" foreign_bytes)" = 0 ] ||
		fail "mptcp: device memory reached an MPTCP reader as bytes"
	[ "$errs" -gt 0 ] ||
		fail "mptcp: checksums over device memory were not counted as failed"
}

devmem_flow()
{
	local bytes=$((16 << 20)) rc got errors

	ip netns exec "$CLI_NS" $PEER send "$SRV_ADDR6" "$UDP_PORT" 500 1200 > /dev/null &
	ip netns exec "$CLI_NS" timeout $((600 * TOPO_SCALE)) \
		"$NCDEVMEM" -s "$SRV_ADDR6" -p "$PORT" \
		-v "$PATTERN" --bytes "$bytes" > "$tmp/cli.out" 2> "$tmp/cli.err" ||
		{ cat "$tmp/cli.err"; fail "flow: client failed"; }
	wait %%
	wait "$srv_pid"; rc=$?
	got=$(summary "$tmp/srv.out" bytes_total)
	errors=$(summary "$tmp/srv.out" validation_errors)
	echo "flow: $got bytes, $(summary "$tmp/srv.out" bytes_dmabuf) into the dma-buf," \
	     "$errors wrong"
	[ "$rc" = 0 ] || { cat "$tmp/srv.err"; fail "flow: server exit $rc"; }
	[ "$got" = "$bytes" ] || fail "flow: received $got of $bytes bytes"
	[ "$errors" = 0 ] || fail "flow: $errors bytes differ from the pattern"
}

topo_setup || exit 1
fwd_setup || { echo "FAIL: third namespace"; exit 1; }
# the MAC takes frames up to 9728 bytes once the MTU is over 1500
ip -n "$SRV_NS" link set "$SRV_IF" mtu "$SRV_MTU" ||
	{ echo "FAIL: server MTU $SRV_MTU"; exit 1; }
topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200
server_start || { echo "FAIL: ncdevmem server did not start"; exit 1; }

# HOSTILE_PHASES: the phases to run, all by default (for bisecting a
# failure: a panic in one phase ends the boot).
nft_phase()
{
	nft_setup
	nft_payload
}

ftp_helper_done()
{
	ip netns exec "$SRV_NS" nft delete table ip hostile 2>/dev/null
}

for phase in ${HOSTILE_PHASES:-udp_closed_ports udp_open_port icmp_echo \
	forwarding mirred tc_bpf nft_phase ftp_helper capture plain_tcp \
	crafted_frames oversize mptcp ktls}; do
	$phase
done
ftp_helper_done
devmem_flow

[ "$ret" = 0 ] && echo "devmem_hostile: ok"
exit $ret
