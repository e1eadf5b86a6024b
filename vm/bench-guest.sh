#!/bin/bash
# make bench, inside the guest: devmem_bench runs over the emulated wire.
#
# Usage: bench-guest.sh TESTS_DIR OUT_DIR [REPS [MIB [FLOW_REPS [BIND_SIZES
#                       [SECTIONS [MTUS [NCCL_DIR]]]]]]]
#
# The server NIC gets header split on and its whole RSS table pointed at RX
# queue 1 (queue 0 gets nothing), its interrupts on CPU 1; the client NIC's
# interrupts go to CPU 0. Receivers run on CPU 1, senders on CPU 0, so "the
# receiver's CPU" is CPU 1 and "the sender's CPU" is CPU 0.
#
# Header split puts each segment's payload (1448 bytes at MTU 1500) in a
# page of its own, host memory or dma-buf alike, so an skb's truesize is
# about three times its payload. With the default tcp_adv_win_scale (1: a
# window of half the receive buffer) 6.1 TCP then advertises more than the
# socket can hold, prunes its receive queue and drops (retransmissions and
# RTO stalls in every mode). The server namespace gets tcp_adv_win_scale=-2
# (a quarter), the same for every mode.
#
# The server NIC's RX ring has 4096 descriptors: the emulated NIC drops
# silently when a ring is full, and with -icount's single TCG thread a
# sender runs a whole turn while the receiver waits. Neither NIC moderates
# interrupts (rx-usecs 0): under -icount, vCPUs idle until a moderated
# interrupt skip ahead to it, and throughput would follow that timer
# rather than the work done.
#
# 1. REPS rounds (default 5), each running once, in this order, MIB MiB
#    (default 64; make bench passes 256) over one connection: at each MTU
#    of MTUS (default "1500 4148 9000", both NICs), RX bounce, RX plain, RX
#    devmem (a plain sender); then at MTU 1500 TX copy, TX zerocopy, TX
#    devmem (a plain receiver). RX runs at MTU 1500 are named rx-MODE-R,
#    the others rxmtuMTU-MODE-R.
# 2. FLOW_REPS rounds (default 3) of RX devmem holding all tokens of a
#    16 MiB stream and giving them back at the end, in calls of 1, 16, 128
#    and 1024 tokens.
# 3. FLOW_REPS rounds of RX devmem with 1, 4, 16 and 64 connections, MIB
#    MiB in total.
# 4. bind-rx of a udmabuf of each of BIND_SIZES (default "16M 64M 256M 1G")
#    on queue 1, three times each.
#
# 5. "profile" (only when SECTIONS names it): one RX devmem run of MIB MiB
#    at MTU 1500, for the plugin's per-block profile of the receiver.
# 6. "nccl": REPS rounds at MTU 1500 of raw devmem RX (devmem_bench, as
#    in 1), then the NCCL plugin's devmem RX with UNPACK delivery and with
#    copy delivery (NCCL_DIR's nccl_harness --bench: 512 KiB messages, 8
#    receives in flight, NCCL's pattern), MIB MiB each, named
#    nccl-raw-R, nccl-unpack-R and nccl-copy-R. For the plugin's runs the
#    RSS table points at queue 0 (host traffic), and the plugin binds queue
#    1 and steers its data sockets there, as an administrator sets a host
#    up for it (nccl-net-devmem/README.md); raw devmem gets queue 1 by RSS.
#    Raw runs over IPv4 here, as the plugin's connections do (elsewhere
#    the bench runs over IPv6): the two stacks' receive paths differ.
#
# 7. "nccl-profile" (only when SECTIONS names it): one run of the NCCL
#    plugin with UNPACK delivery, MIB MiB at MTU 1500, set up as in 6, for
#    the per-block profile of the receiver's CPU.
#
# SECTIONS (default "modes tokens flows bind") picks which of them run;
# NCCL_DIR (9th argument, default the build directory's nccl/) holds the
# plugin and its harness.
#
# Every run leaves OUT_DIR/NAME.rx and NAME.tx (or NAME.bind): the "key:
# value" output of devmem_bench. The receiver of run number K marks its
# measurement with id 2K, the sender with 2K + 1 (devmem_bench -M), for
# the instruction counting plugin when it is loaded.
set -u
tests=$1
out=$2
reps=${3:-5}
mib=${4:-64}
flow_reps=${5:-3}
bind_sizes=${6:-16M 64M 256M 1G}
sections=" ${7:-modes tokens flows bind} "
mtus=${8:-1500 4148 9000}
nccl=${9:-$(cd "$tests/../../.." && pwd)/nccl}
bench=$tests/devmem_bench
dmctl=$tests/dmctl
port=5601
rx_ring=4096
run=0
fails=0

# shellcheck source-path=SCRIPTDIR source=../tools/testing/selftests/net/devmem/topology.sh
source "$tests"/topology.sh

log() { echo "bench: $*"; }

# MSI-X vectors of the NIC $2 in namespace $1 to CPU $3.
irq_pin()
{
	local bus irq

	bus=$(ip netns exec "$1" ethtool -i "$2" | sed -n 's/^bus-info: //p')
	for irq in /sys/bus/pci/devices/"$bus"/msi_irqs/*; do
		[ -e "$irq" ] || continue
		echo "$3" > /proc/irq/"$(basename "$irq")"/smp_affinity_list 2>/dev/null
	done
}

srv_setup()
{
	ip netns exec "$SRV_NS" sysctl -qw net.ipv4.tcp_adv_win_scale=-2 || return 1
	ip netns exec "$SRV_NS" ethtool -G "$SRV_IF" rx "$rx_ring" || return 1
	ip netns exec "$SRV_NS" ethtool -C "$SRV_IF" rx-usecs 0 || return 1
	ip netns exec "$CLI_NS" ethtool -C "$CLI_IF" rx-usecs 0 || return 1
	ip netns exec "$SRV_NS" "$dmctl" data-split "$SRV_IF" on || return 1
	ip netns exec "$SRV_NS" "$dmctl" hds-thresh "$SRV_IF" 0 || return 1
	topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200 ||
		return 1
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" weight 0 1 || return 1
	irq_pin "$SRV_NS" "$SRV_IF" 1
	irq_pin "$CLI_NS" "$CLI_IF" 0
	topo_wait "ip netns exec $CLI_NS ping -c1 -W1 $SRV_ADDR6" 100
}

# Both NICs to MTU $1, and wait until the link is back.
set_mtu()
{
	[ "$(ip netns exec "$SRV_NS" cat /sys/class/net/"$SRV_IF"/mtu)" = "$1" ] &&
		return 0
	ip -n "$SRV_NS" link set "$SRV_IF" mtu "$1" || return 1
	ip -n "$CLI_NS" link set "$CLI_IF" mtu "$1" || return 1
	topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200 &&
		topo_wait "ip -n $CLI_NS link show $CLI_IF | grep -q LOWER_UP" 200 &&
		topo_wait "ip netns exec $CLI_NS ping -c1 -W1 $SRV_ADDR6" 100
}

srv_restore()
{
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" default
	ip netns exec "$SRV_NS" "$dmctl" data-split "$SRV_IF" off
	ip netns exec "$SRV_NS" "$dmctl" hds-thresh "$SRV_IF" 256
}

# Both NICs' ethtool -S counters, as "srv_NAME VALUE" / "cli_NAME VALUE".
nic_stats()
{
	ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" | awk -F': ' 'NF == 2 { gsub(/ /, "", $1); print "srv_" $1, $2 }'
	ip netns exec "$CLI_NS" ethtool -S "$CLI_IF" | awk -F': ' 'NF == 2 { gsub(/ /, "", $1); print "cli_" $1, $2 }'
}

# The counters that changed between two nic_stats outputs, "name: delta".
nic_delta()
{
	awk 'NR == FNR { a[$1] = $2; next } $2 != a[$1] { print $1 ": " $2 - a[$1] }' "$1" "$2"
}

# pair_end NAME RC OUTPUT...: after a measured transfer, the NIC counters'
# deltas into NAME.nic; when RC is not 0, its OUTPUT files shown and the
# failure counted (returns 1).
pair_end()
{
	local name=$1 rc=$2

	shift 2
	nic_stats > "$out/.nic1"
	nic_delta "$out/.nic0" "$out/.nic1" > "$out/$name.nic"
	[ "$rc" -eq 0 ] && return 0
	log "$name: FAILED"
	cat "$@"
	fails=$((fails + 1))
	return 1
}

# pair NAME RX_MODE TX_MODE FLOWS MIB [RX_OPTION...]: one measured transfer.
pair()
{
	local name=$1 rxm=$2 txm=$3 flows=$4 size=$5 rx_opts=() tx_opts=() srv rc
	local id=$((run * 2))

	shift 5

	run=$((run + 1))
	nic_stats > "$out/.nic0"
	[ "$rxm" = devmem ] && rx_opts=(-f "$SRV_IF" -q 1 "$@")
	[ "$txm" = devmem ] && tx_opts=(-f "$CLI_IF")
	irq_pin "$SRV_NS" "$SRV_IF" 1
	irq_pin "$CLI_NS" "$CLI_IF" 0
	ip netns exec "$SRV_NS" timeout 900 "$bench" rx "$rxm" -s "${pair_addr:-$SRV_ADDR6}" \
		-p $port -n "$flows" -c 1 -M "$id" "${rx_opts[@]}" \
		> "$out/$name.rx" 2> "$out/$name.rx.err" &
	srv=$!
	if ! topo_wait "grep -q listening $out/$name.rx" 600; then
		log "$name: receiver did not start"
		cat "$out/$name.rx.err"
		kill $srv 2>/dev/null
		wait $srv
		fails=$((fails + 1))
		return 1
	fi
	ip netns exec "$CLI_NS" timeout 900 "$bench" tx "$txm" -s "${pair_addr:-$SRV_ADDR6}" \
		-p $port -n "$flows" -b "${size}M" -c 0 -M $((id + 1)) \
		"${tx_opts[@]}" > "$out/$name.tx" 2> "$out/$name.tx.err"
	rc=$?
	wait $srv || rc=1
	pair_end "$name" $rc "$out/$name.rx.err" "$out/$name.tx.err" || return 1
	log "$name: $(sed -n 's/^throughput_mbps: //p' "$out/$name.rx") Mbit/s," \
	    "receiver CPU $(sed -n 's/^cpu_user_s: //p' "$out/$name.rx") s user" \
	    "$(sed -n 's/^cpu_kernel_s: //p' "$out/$name.rx") s kernel," \
	    "sender CPU $(sed -n 's/^cpu_user_s: //p' "$out/$name.tx") s user" \
	    "$(sed -n 's/^cpu_kernel_s: //p' "$out/$name.tx") s kernel," \
	    "$(sed -n 's/^tcp_RetransSegs: //p' "$out/$name.tx") retransmitted"
}

# nccl_pair NAME MODE: one measured transfer through the NCCL plugin
# (receiver and sender in nccl_harness, which enters the namespaces).
nccl_pair()
{
	local name=$1 mode=$2 id=$((run * 2)) rc

	run=$((run + 1))
	nic_stats > "$out/.nic0"
	if ! ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" equal 1; then
		log "$name: FAILED (ethtool -X equal 1)"
		fails=$((fails + 1))
		return 1
	fi
	irq_pin "$SRV_NS" "$SRV_IF" 1
	irq_pin "$CLI_NS" "$CLI_IF" 0
	HARNESS_WIRE="$SRV_NS,$SRV_IF,$CLI_NS,$CLI_IF" timeout 900 \
		"$nccl"/nccl_harness "$nccl"/libnccl-net-devmem.so --bench "$mode" "$mib" "$id" \
		> "$out/$name.rx" 2> "$out/$name.rx.err"
	rc=$?
	ip netns exec "$SRV_NS" ethtool -X "$SRV_IF" weight 0 1 || rc=1
	pair_end "$name" $rc "$out/$name.rx" "$out/$name.rx.err" || return 1
	log "$name: $(sed -n 's/^throughput_mbps: //p' "$out/$name.rx") Mbit/s," \
	    "receiver CPU $(sed -n 's/^cpu_user_s: //p' "$out/$name.rx") s user" \
	    "$(sed -n 's/^cpu_kernel_s: //p' "$out/$name.rx") s kernel," \
	    "$(sed -n 's/^plugin_dmabuf_bytes: //p' "$out/$name.rx") bytes through the dma-buf"
}

mkdir -p "$out"
topo_setup || exit 1
srv_setup || { log "server NIC setup failed"; exit 1; }
{
	echo "kernel: $(uname -r)"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "cpus: $(nproc)"
	echo "srv_if: $SRV_IF"
	echo "cli_if: $CLI_IF"
	echo "srv_rx_queues: $(ip netns exec "$SRV_NS" ls /sys/class/net/"$SRV_IF"/queues | grep -c rx-)"
	echo "mtu: $(ip netns exec "$SRV_NS" cat /sys/class/net/"$SRV_IF"/mtu)"
	echo "srv_rx_ring: $(ip netns exec "$SRV_NS" ethtool -g "$SRV_IF" | awk '/^RX:/ { n++ } n == 2 && /^RX:/ { print $2 }')"
	echo "srv_tcp_adv_win_scale: $(ip netns exec "$SRV_NS" sysctl -n net.ipv4.tcp_adv_win_scale)"
	echo "srv_tcp_rmem: $(ip netns exec "$SRV_NS" sysctl -n net.ipv4.tcp_rmem | tr '\t' ' ')"
	echo "cpu_flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -cE '^(erms|fsrm)$') of erms, fsrm"
	echo "reps: $reps"
	echo "mib: $mib"
	echo "flow_reps: $flow_reps"
	echo "sections:$sections"
	echo "mtus: $mtus"
} > "$out/env"
log "kernel $(uname -r), $(nproc) CPUs, server $SRV_IF, client $CLI_IF"
ip netns exec "$SRV_NS" ethtool -x "$SRV_IF" | sed -n '1,4p'
start=$(date +%s)

# Is section $1 to run?
want() { [[ $sections == *" $1 "* ]]; }

# 1. RX and TX modes, interleaved
want modes &&
for r in $(seq 1 "$reps"); do
	for mtu in $mtus; do
		set_mtu "$mtu" || { log "MTU $mtu: link did not come back"; fails=$((fails + 1)); continue; }
		prefix=rx
		[ "$mtu" = 1500 ] || prefix=rxmtu$mtu
		for m in bounce plain devmem; do
			pair "$prefix-$m-$r" "$m" plain 1 "$mib"
		done
	done
	set_mtu 1500 || { log "MTU 1500: link did not come back"; exit 1; }
	for m in copy zerocopy devmem; do
		pair "tx-$m-$r" plain "$m" 1 "$mib"
	done
done
log "modes done after $(( $(date +%s) - start )) s (guest clock)"

# 2. token return with no traffic around: every token of a 16 MiB stream
# held, then given back in calls of 1, 16, 128 or 1024 tokens
want tokens &&
for r in $(seq 1 "$flow_reps"); do
	for t in 1 16 128 1024; do
		pair "tokens-$t-$r" devmem plain 1 16 -H -t "$t" -B 128M
	done
done
log "tokens done after $(( $(date +%s) - start )) s (guest clock)"

# 3. flows. The emulated NIC drops silently when the bound queue's ring is
# full, and the single TCG thread lets the sender run a whole turn while
# the receiver waits: the flows together must not have more in flight than
# the ring holds. Their receive buffers share 16 MiB (each at most the
# default 6 MiB), so they advertise about 4 MiB in all; the dma-buf, 256 MiB,
# holds that, the ring and the tokens each flow keeps for its next call.
rmem_default=$(ip netns exec "$SRV_NS" sysctl -n net.ipv4.tcp_rmem)
want flows &&
for r in $(seq 1 "$flow_reps"); do
	for n in 1 4 16 64; do
		cap=$(( (16 << 20) / n ))
		[ $cap -gt $((6 << 20)) ] && cap=$((6 << 20))
		ip netns exec "$SRV_NS" sysctl -qw net.ipv4.tcp_rmem="4096 131072 $cap"
		pair "flows-$n-$r" devmem plain "$n" "$mib" -B 256M
	done
done
ip netns exec "$SRV_NS" sysctl -qw net.ipv4.tcp_rmem="$rmem_default"
log "flows done after $(( $(date +%s) - start )) s (guest clock)"

# 6. the NCCL plugin against raw devmem RX, interleaved
if want nccl; then
	if [ -x "$nccl"/nccl_harness ] && [ -e "$nccl"/libnccl-net-devmem.so ]; then
		set_mtu 1500 || { log "MTU 1500: link did not come back"; exit 1; }
		for r in $(seq 1 "$reps"); do
			pair_addr=$SRV_ADDR4 pair "nccl-raw-$r" devmem plain 1 "$mib"
			nccl_pair "nccl-unpack-$r" unpack
			nccl_pair "nccl-copy-$r" copy
		done
	else
		log "nccl: no plugin harness in $nccl (make nccl)"
		fails=$((fails + 1))
	fi
	log "nccl done after $(( $(date +%s) - start )) s (guest clock)"
fi

# 5. the profiled run
want profile && { set_mtu 1500 && pair "profile-devmem-1" devmem plain 1 "$mib" ||
	{ log "profile: MTU 1500 or the run failed"; fails=$((fails + 1)); }; }

# 7. the profiled run of the plugin
want nccl-profile && { set_mtu 1500 && nccl_pair "profile-nccl-unpack" unpack ||
	{ log "nccl-profile: MTU 1500 or the run failed"; fails=$((fails + 1)); }; }

# 4. bind sizes
want bind || bind_sizes=
for size in $bind_sizes; do
	if ip netns exec "$SRV_NS" timeout 900 "$bench" bind -f "$SRV_IF" -q 1 \
		-B "$size" -r 3 > "$out/bind-$size.bind" 2> "$out/bind-$size.err"; then
		log "bind $size: $(sed -n 's/^bind_ns: //p' "$out/bind-$size.bind") ns," \
		    "$(sed -n 's/^kmem_bytes_per_page: //p' "$out/bind-$size.bind") bytes per page"
	else
		log "bind $size: FAILED"
		cat "$out/bind-$size.err"
		fails=$((fails + 1))
	fi
done
log "all done after $(( $(date +%s) - start )) s (guest clock)"

ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" | grep -E 'rx_queue_1_|devmem' > "$out/srv_ethtool_S"
grep -E 'CPU|TxRx|eth' /proc/interrupts > "$out/interrupts"
rm -f "$out/.nic0" "$out/.nic1"
srv_restore
topo_teardown || fails=$((fails + 1))
[ $fails -eq 0 ] || { log "$fails run(s) failed"; exit 1; }
