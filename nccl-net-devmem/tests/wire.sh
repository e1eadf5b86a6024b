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
#   (tcp-data-split off), when RSS spreads host traffic onto the queue the
#   plugin would bind, and when steering is refused (the NIC's rule table
#   full: the rules added for the connection are undone): the same bytes,
#   the reason in the log; a steering lock no other user can hold (nobody
#   tries) and one opened up to every user refused;
# - a 4 MiB region that 22 MB pass through (tokens must come back), a
#   region too small for a connection's socket buffers (copy mode), one
#   that holds fixed buffers but not autotuned ones (SO_RCVBUF 1024 KiB),
#   autotuned buffers by default, and one that holds one connection of
#   autotuned buffers and then only fixed ones (the second connection gets
#   SO_RCVBUF 1024 KiB);
# - no progress threads (NCCL_DEVMEM_NTHREADS=0: test() moves the bytes),
#   with copy and with UNPACK delivery through an 8 MiB region;
# - a devmem recvmsg that cannot grow its socket's token table (fault
#   injection): retried, every byte right; one that never can: the comm
#   fails after 10 s with the reason;
# - devmem TX: the sender's buffers in a udmabuf registered with
#   regMrDmaBuf, sent with MSG_ZEROCOPY and SCM_DEVMEM_DMABUF (every
#   data-socket byte, the plugin's own count), alone and with devmem RX;
#   plain send when the fd is not a dma-buf, when NCCL_DEVMEM_TX=0 and when
#   the kernel refuses the sendmsg (the binding is root's, the sender has
#   become nobody); the receiver killed with 256 MiB in flight; a send not
#   done while the receiver's link is down;
# - UNPACK delivery (NCCL_DEVMEM_UNPACK=host): the harness gathers each
#   receive from the RX region by the plugin's metas, as NCCL's kernel
#   would, then calls irecvConsumed: sizes to 2 MiB, 200 receives 8 in
#   flight from a devmem TX sender, a receive of more than 2048 fragments
#   refused; region pages held by a receive not yet consumed (reading
#   stops, the sender stalls, then everything arrives);
# - a job without CAP_NET_ADMIN (the receiver becomes nobody) through the
#   privileged helper (nccl-devmem-helper): devmem RX; copy mode without
#   it; a hostile client (tests/helper_hostile.c), a user outside its
#   group, a socket of another namespace, the job killed while it holds
#   rules (none left), no fd leaked, igb's shared buckets refused unless
#   allowed;
# - afterwards no rule of the plugin is left on the NIC and no queue is
#   bound.
#
# Runs in the guest (mk/guest-check.sh, after the selftests), as root:
#
#   nccl-net-devmem/tests/wire.sh [BUILD]
#
# BUILD (default the checkout's build/) holds the harness and library
# ("make nccl": BUILD/nccl) and the installed selftests ("make selftests":
# BUILD/selftests), whose topology.sh and dmctl it uses.

build=${1:-$(realpath "$(dirname "$0")/../../build")}
selftests=$build/selftests/net/devmem
[ -e "$selftests/topology.sh" ] || { echo "FAIL: no selftests in $build (make selftests)"; exit 1; }
source "$selftests"/topology.sh
DMCTL=$selftests/dmctl
NCCL=${NCCL_BUILD:-$build/nccl}
HARNESS=$NCCL/nccl_harness
LIB=$NCCL/libnccl-net-devmem.so
ret=0

srv() { ip netns exec "$SRV_NS" "$@"; }
cli() { ip netns exec "$CLI_NS" "$@"; }

fi_dir=/sys/kernel/debug/failslab
fpa_dir=/sys/kernel/debug/fail_page_alloc
# The failslab settings as they were before the fault-injection cases
# (below), put back by faults_restore, also from cleanup: probability
# first, so that no task fails while the rest is.
faults_restore()
{
	local k

	[ -n "$fi_knobs" ] || return 0
	for k in probability $fi_knobs; do
		echo "${fi_was[$k]}" > "$fi_dir/$k"
	done
	echo "$fpa_verbose" > "$fpa_dir"/verbose
	fi_knobs=
}

cleanup()
{
	local i

	# the processes first: they would put rules back
	topo_stop_and_restore "$SRV_NS" "$CLI_NS"
	for i in $(seq 0 15); do
		srv ethtool -N "$SRV_IF" delete "$i" 2>/dev/null
	done
	srv "$DMCTL" hds-thresh "$SRV_IF" 256 2>/dev/null
	srv ip link set dev "$SRV_IF" up 2>/dev/null	# wire-tx-done-when-acked
	[ -n "$udmabuf_limit" ] && echo "$udmabuf_limit" > "$UDMABUF_LIMIT"
	[ -n "$helper_pid" ] && kill "$helper_pid" 2>/dev/null
	[ -n "$udmabuf_mode" ] && chmod "$udmabuf_mode" /dev/udmabuf
	faults_restore
	topo_teardown
}

fail()
{
	echo "FAIL: $*"
	ret=1
}

if [ ! -x "$HARNESS" ] || [ ! -e "$LIB" ]; then
	echo "FAIL: no plugin harness at $NCCL (make nccl builds it)"
	exit 1
fi
UDMABUF_LIMIT=/sys/module/udmabuf/parameters/size_limit_mb
udmabuf_limit=
udmabuf_mode=
helper_pid=
fi_knobs=
trap 'cleanup || exit 1' EXIT
topo_setup || exit 1
# wire-tx-done-when-acked takes the server NIC down and up: keep its
# addresses
srv sysctl -qw net.ipv6.conf."$SRV_IF".keep_addr_on_down=1 || { echo "FAIL: sysctl"; exit 1; }
# wire-tx-receiver-killed sends 257 MiB from one udmabuf
udmabuf_limit=$(cat "$UDMABUF_LIMIT") && echo 512 > "$UDMABUF_LIMIT" ||
	{ echo "FAIL: $UDMABUF_LIMIT"; exit 1; }

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

# the queue the plugin binds, by queue-get (0: none)
bound()
{
	srv "$DMCTL" rx-binding "$SRV_IF" $((nq - 1))
}

harness wire-devmem-rx-sizes wire-devmem-rx-8-outstanding wire-copy-mode-env \
	wire-sender-killed wire-small-region wire-region-spoken-for \
	wire-fixed-buffers-small-region wire-later-connection-fixed \
	wire-no-progress-threads wire-unpack-no-progress-threads \
	wire-devmem-tx-sizes wire-devmem-tx-and-rx wire-tx-not-a-dmabuf wire-tx-env-off \
	wire-tx-refused-at-send wire-tx-receiver-killed wire-tx-done-when-acked \
	wire-unpack-sizes wire-unpack-tx-8-outstanding wire-unpack-too-many-fragments \
	wire-unpack-small-region wire-unpack-region-held
# A devmem recvmsg whose token table cannot grow: fail-nth on the
# receiver's thread, sleeping allocations failable, no stack dumps; then
# every slab allocation of that thread failing (task filter), until the
# plugin gives up.
if [ -d "$fi_dir" ] && [ -d "$fpa_dir" ]; then
	declare -A fi_was
	for k in verbose ignore-gfp-wait task-filter probability interval times; do
		fi_was[$k]=$(cat "$fi_dir/$k")
	done
	fpa_verbose=$(cat "$fpa_dir"/verbose)
	fi_knobs="verbose ignore-gfp-wait task-filter probability interval times"
	if echo 0 > "$fi_dir"/verbose && echo N > "$fi_dir"/ignore-gfp-wait &&
		echo 0 > "$fpa_dir"/verbose; then
		harness wire-token-table-enomem
	else
		fail "fault injection set-up"
	fi
	if echo Y > "$fi_dir"/task-filter && echo 1 > "$fi_dir"/interval &&
		echo -1 > "$fi_dir"/times && echo 100 > "$fi_dir"/probability; then
		harness wire-token-table-gives-up
	else
		fail "fault injection set-up"
	fi
	faults_restore
else
	echo "SKIP: wire-token-table-enomem, wire-token-table-gives-up: no fault injection" \
		"(debugfs failslab)"
fi
[ "$(rules)" = 0 ] || fail "$(rules) ntuple rule(s) left after the harness"
[ "$(bound)" = 0 ] || fail "queue $((nq - 1)) still bound ($(bound)) after the harness"

# Another local user and the steering lock: nobody tries to take the lock
# file (and the world-readable one older versions used) and holds what it
# gets while a devmem run steers, which must still steer; a world-readable
# file in /tmp shows that nobody could hold one.  Then the file opened up
# to every user, and the directory opened to every writer, are refused
# with the reason.
lockdir=/run/nccl-net-devmem
lock=$lockdir/steer.$SRV_IF.lock
# nobody holding FILE, one process (no child keeps the lock), pid in $!
hold_as_nobody()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c 'exec 9<"$1" && flock -n 9 && exec sleep 120' sh "$1" > /dev/null 2>&1 &
}
# kill the holders still alive
release()
{
	local p

	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && kill "$p" && wait "$p" 2>/dev/null
	done
	return 0
}
control=$(mktemp /tmp/steer-control.XXXXXX) && chmod 0644 "$control" ||
	fail "mktemp in /tmp"
hold_as_nobody "$control"
holders=($!)
for f in "$lock" "/run/nccl-net-devmem-steer.$SRV_IF.lock"; do
	hold_as_nobody "$f"
	holders+=($!)
done
sleep 1
kill -0 "${holders[0]}" 2>/dev/null ||
	fail "nobody could not hold the world-readable $control (setpriv, flock?)"
for p in "${holders[@]:1}"; do
	kill -0 "$p" 2>/dev/null && echo "# nobody holds a steering lock (pid $p)"
done
harness wire-devmem-rx-sizes
release "${holders[@]}"
rm -f "$control"
mode=$(stat -c %a "$lockdir" 2>/dev/null)/$(stat -c %a "$lock" 2>/dev/null)
[ "$mode" = 700/600 ] || fail "steering lock directory/file modes $mode, 700/600 expected"
if chmod 0755 "$lockdir" && chmod 0644 "$lock"; then
	hold_as_nobody "$lock"
	holder=$!
	sleep 1
	kill -0 "$holder" 2>/dev/null || fail "nobody could not hold the opened-up $lock"
	harness wire-steer-lock-open-to-all
	release "$holder"
	rm -f "$lock"
else
	fail "chmod $lockdir $lock"
fi
if chmod 0777 "$lockdir"; then
	harness wire-steer-lock-open-to-all
else
	fail "chmod $lockdir"
fi
rm -f "$lock"
chmod 0700 "$lockdir"
[ "$(rules)" = 0 ] || fail "$(rules) ntuple rule(s) left after the steering lock cases"

# A job without CAP_NET_ADMIN and the privileged helper (helper.c),
# started as an administrator would: nobody's group, the last queue, igb's
# shared RSS buckets allowed, 2 rules and 4 connections per user.
# - a receiver that is nobody: devmem RX through the helper; copy mode
#   with the reason when no helper is named;
# - the hostile client, as nobody: every wrong request refused with its
#   errno, rules come and go, a reset socket's rule swept, a socket
#   reconnected elsewhere or bound to a device, the per-user limits;
# - a user outside the group: refused by the socket's mode and, the mode
#   opened up, by the helper; a socket of another namespace not steered;
# - the job killed mid-transfer: no rule and no binding left;
# - no fd leaked by the helper; a helper without shared-buckets refuses
#   igb (copy mode, the reason).
HELPER=$NCCL/nccl-devmem-helper
HOSTILE=$NCCL/helper_hostile
hsock=/run/nccl-devmem-helper-test.sock
hlog=$build/nccl-helper-test.log
: > "$hlog"
# start_helper OPTS: the helper in the server's namespace, pid in helper_pid
start_helper()
{
	local i

	rm -f "$hsock"
	# not through srv(): a function put in the background is a subshell
	ip netns exec "$SRV_NS" "$HELPER" -s "$hsock" -g 65534 -i "$SRV_IF=$((nq - 1))$1" \
		-r 2 -c 4 -v 2>> "$hlog" &
	helper_pid=$!
	for i in $(seq 50); do
		[ -S "$hsock" ] && [ "$(cat /proc/$helper_pid/comm)" = nccl-devmem-hel ] &&
			return 0
		sleep 0.1
	done
	fail "the helper did not start: $(tail -3 "$hlog")"
	return 1
}
stop_helper()
{
	[ -n "$helper_pid" ] && kill "$helper_pid" 2>/dev/null && wait "$helper_pid" 2>/dev/null
	helper_pid=
	return 0
}
as_nobody() { srv setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
udmabuf_mode=$(stat -c %a /dev/udmabuf)
chmod 0666 /dev/udmabuf || fail "chmod /dev/udmabuf"	# the admin's part for udmabuf regions
if start_helper ,shared-buckets; then
	[ "$(stat -c %a:%G "$hsock")" = "660:$(getent group 65534 | cut -d: -f1)" ] ||
		fail "helper socket $(stat -c %a:%G "$hsock"), 660 and nobody's group expected"
	fds0=$(ls /proc/"$helper_pid"/fd | wc -l)
	NCCL_DEVMEM_HELPER=$hsock harness wire-helper-rx
	harness wire-no-helper
	[ "$(rules)" = 0 ] || fail "$(rules) ntuple rule(s) left after the helper's job"
	as_nobody "$HOSTILE" all "$hsock" "$SRV_IF" $((nq - 1)) ||
		fail "helper_hostile: $? case(s) failed"
	# outside the group: the socket's mode, then the helper itself
	out=$(srv setpriv --reuid=4242 --regid=4242 --clear-groups \
		"$HOSTILE" refused "$hsock" "$SRV_IF" $((nq - 1)))
	[ $? = 100 ] && [[ $out == *"Permission denied"* ]] ||
		fail "uid 4242 reached the helper through its socket's mode: $out"
	chmod 0666 "$hsock"
	srv setpriv --reuid=4242 --regid=4242 --clear-groups \
		"$HOSTILE" refused "$hsock" "$SRV_IF" $((nq - 1)) ||
		fail "the helper served uid 4242, outside its group"
	chmod 0660 "$hsock"
	# a socket of another namespace (the client's), as root there
	cli ip link set lo up
	cli "$HOSTILE" xdev "$hsock" "$(srv cat /sys/class/net/"$SRV_IF"/ifindex)" $((nq - 1)) ||
		fail "helper_hostile xdev"
	# the job killed while steered (the harness, and its case with it: it
	# holds its connection 2 minutes before the transfer), once the queue
	# has left the last binding
	for i in $(seq 50); do
		[ "$(bound)" = 0 ] && break
		sleep 0.2
	done
	NCCL_DEVMEM_HELPER=$hsock HARNESS_WIRE="$SRV_NS,$SRV_IF,$CLI_NS,$CLI_IF" \
		HARNESS_TIME_SCALE=4 "$HARNESS" "$LIB" wire-held-helper-job > /dev/null 2>&1 &
	job=$!
	for i in $(seq 100); do
		[ "$(rules)" != 0 ] && break
		sleep 0.2
	done
	[ "$(rules)" != 0 ] || fail "the helper's job never steered"
	closed0=$(grep -c "deleted (connection closed)" "$hlog")
	kill -9 "$job"
	wait "$job" 2>/dev/null
	for i in $(seq 50); do
		[ "$(rules)" = 0 ] && [ "$(bound)" = 0 ] && break
		sleep 0.2
	done
	[ "$(rules)" = 0 ] || fail "$(rules) rule(s) left by the killed job"
	[ "$(grep -c "deleted (connection closed)" "$hlog")" -gt "$closed0" ] ||
		fail "the job was not killed while it held rules (its rules were not deleted" \
			"when its connection closed)"
	[ "$(bound)" = 0 ] || fail "queue $((nq - 1)) still bound after the killed job"
	# an fd of another kind (a memfd; a FUSE file's close may wait):
	# dropped, its sender refused for a minute, nobody still served
	srv setpriv --reuid=4243 --regid=65534 --clear-groups \
		"$HOSTILE" odd-fd "$hsock" "$SRV_IF" $((nq - 1)) ||
		fail "helper_hostile odd-fd"
	as_nobody "$HOSTILE" served "$hsock" "$SRV_IF" $((nq - 1)) ||
		fail "nobody not served after another user's odd fd"
	sleep 0.5
	fds1=$(ls /proc/"$helper_pid"/fd | wc -l)
	[ "$fds1" = "$fds0" ] || fail "the helper has $fds1 fds, $fds0 before its clients"
	kill -0 "$helper_pid" || fail "the helper died"
	stop_helper
	[ -e "$hsock" ] && fail "the helper left its socket"
fi
if start_helper ""; then
	NCCL_DEVMEM_HELPER=$hsock harness wire-helper-refuses-buckets
	stop_helper
fi
chmod "$udmabuf_mode" /dev/udmabuf
grep -q "refused" "$hlog" || fail "the helper logged no refusal ($hlog)"
[ "$(rules)" = 0 ] || fail "$(rules) ntuple rule(s) left after the helper cases"

# Steering refused: every location but one taken (by flows to queue 0),
# and the connection needs two (the default data sockets): one added,
# then undone.
filled=0
for i in $(seq 1 15); do
	srv ethtool -N "$SRV_IF" flow-type tcp4 src-ip 198.51.100.1 dst-ip 192.0.2.1 \
		src-port $((20000 + i)) dst-port 9 action 0 loc "$i" ||
		{ fail "could not fill the rule table (rule $i)"; break; }
	filled=$((filled + 1))
done
if [ $filled = 15 ]; then
	harness wire-steering-refused
	[ "$(rules)" = 15 ] || fail "$(rules) rules after a refused steering, 15 expected"
fi
for i in $(seq 1 15); do
	srv ethtool -N "$SRV_IF" delete "$i" 2>/dev/null
done

# bind-rx refused: header split off (RSS still keeps host traffic off the
# queue).
srv "$DMCTL" data-split "$SRV_IF" off || fail "tcp-data-split off"
harness wire-bind-refused
[ "$(rules)" = 0 ] || fail "$(rules) ntuple rule(s) left"
[ "$(bound)" = 0 ] || fail "queue $((nq - 1)) bound ($(bound)) after a refused bind"

# RSS spreading host traffic onto the queue: the plugin does not bind it.
srv "$DMCTL" data-split "$SRV_IF" on && srv ethtool -X "$SRV_IF" default ||
	fail "header split on, RSS default"
harness wire-rss-onto-devmem-queue
[ "$(bound)" = 0 ] || fail "queue $((nq - 1)) bound ($(bound)) while RSS uses it"
srv "$DMCTL" data-split "$SRV_IF" off

[ $ret = 0 ] && echo "nccl plugin over the wire: all passed"
exit $ret
