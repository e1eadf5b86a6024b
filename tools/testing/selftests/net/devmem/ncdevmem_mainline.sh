#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ncdevmem as scripts written for mainline's call it: the same short
# options with the same meanings.
#
# - "-f IF" alone runs the NIC self-test (bind without queues refused,
#   bind with header split off refused, bind with it on accepted, channels
#   cannot shrink under a bound queue) and puts the NIC back;
# - a server "-l -f IF -s ADDR -p PORT -t QUEUE -q 1 -v 7 -L" receives a
#   client that pipes mainline's pattern (1..6, '\n') into "-s ADDR -p PORT
#   -f IF": the client sends standard input with devmem TX, the server
#   checks every byte, and none lands in host memory (-L);
# - "-n" leaves the NIC as the user set it up (and does not undo it);
# - --io-uring: the same stdin flow received through IORING_OP_RECVMSG and
#   sent through IORING_OP_SENDMSG_ZC;
# - bad usage: a queue out of range fails, an unknown option is a usage
#   error (exit 2).

source "$(dirname "$0")"/topology.sh
NCDEVMEM=$(realpath "$(dirname "$0")")/ncdevmem
DMCTL=$(realpath "$(dirname "$0")")/dmctl
PORT=5501
PERIOD=7
BYTES=$((6 << 20))
ret=0

tmp=$(mktemp -d)
cleanup()
{
	topo_stop_and_restore "$SRV_NS" "$CLI_NS"
	rm -rf "$tmp"
	topo_teardown
}
trap 'cleanup || exit 1' EXIT

srv() { ip netns exec "$SRV_NS" "$@"; }
cli() { ip netns exec "$CLI_NS" "$@"; }

# mainline's pattern for -v $PERIOD: 1, 2, ..., PERIOD-1, '\n', again
pattern()
{
	/usr/bin/python3 -c "
import sys
n = $PERIOD
period = bytes(list(range(1, n)) + [10])
total = $BYTES
out = sys.stdout.buffer
whole, rest = divmod(total, n)
out.write(period * whole + period[:rest])"
}

selftest()
{
	local split_before split_after

	split_before=$(srv "$DMCTL" data-split "$SRV_IF")
	srv timeout 300 "$NCDEVMEM" -f "$SRV_IF" > "$tmp/st.out" 2> "$tmp/st.err"
	local rc=$?
	cat "$tmp/st.err"
	[ "$rc" = 0 ] && grep -q "selftest_failures: 0" "$tmp/st.out" ||
		fail "self-test: exit $rc"
	split_after=$(srv "$DMCTL" data-split "$SRV_IF")
	[ "$split_before" = "$split_after" ] ||
		fail "self-test: tcp-data-split $split_before before, $split_after after"
}

stdin_flow()
{
	local what=$1 got errors linear
	shift

	srv timeout 600 "$NCDEVMEM" -l -f "$SRV_IF" -s "$SRV_ADDR6" -p "$PORT" \
		-t 1 -q 1 -v "$PERIOD" -L "$@" > "$tmp/srv.out" 2> "$tmp/srv.err" &
	local srv_pid=$!
	topo_wait "grep -q listening $tmp/srv.out" 300 ||
		{ cat "$tmp/srv.err"; kill "$srv_pid"; wait "$srv_pid"
		  fail "$what: server did not start"; return; }
	pattern | cli timeout 600 "$NCDEVMEM" -s "$SRV_ADDR6" -p "$PORT" \
		-f "$CLI_IF" -z 60K "$@" > "$tmp/cli.out" 2> "$tmp/cli.err" ||
		{ cat "$tmp/cli.err"; fail "$what: client failed"; }
	wait "$srv_pid" || { cat "$tmp/srv.err"; fail "$what: server failed"; }
	got=$(summary "$tmp/srv.out" bytes_total)
	errors=$(summary "$tmp/srv.out" validation_errors)
	linear=$(summary "$tmp/srv.out" bytes_linear)
	echo "$what: $got bytes received, $errors wrong, $linear in host memory;" \
	     "client: $(summary "$tmp/cli.out" bytes_devmem_tx) sent from the udmabuf"
	[ "$got" = "$BYTES" ] && [ "$errors" = 0 ] && [ "$linear" = 0 ] ||
		fail "$what: the stream did not arrive whole in the dma-buf"
	[ "$(summary "$tmp/cli.out" bytes_devmem_tx)" = "$BYTES" ] ||
		fail "$what: the client did not send it all from device memory"
}

# The user configures the NIC; ncdevmem -n uses it as it is.
keep_config()
{
	srv "$DMCTL" data-split "$SRV_IF" on &&
		srv ethtool -X "$SRV_IF" weight 0 1 ||
		{ fail "-n: ethtool set-up failed"; return; }
	srv "$DMCTL" hds-thresh "$SRV_IF" 0 ||
		{ fail "-n: hds-thresh 0 failed"; return; }
	srv timeout 600 "$NCDEVMEM" -l -n -f "$SRV_IF" -s "$SRV_ADDR6" \
		-p "$PORT" -t 1 -v "$PERIOD" > "$tmp/srv.out" 2> "$tmp/srv.err" &
	local srv_pid=$!
	topo_wait "grep -q listening $tmp/srv.out" 300 ||
		{ cat "$tmp/srv.err"; kill "$srv_pid"; wait "$srv_pid"
		  fail "-n: server did not start"; return; }
	pattern | cli timeout 600 "$NCDEVMEM" -s "$SRV_ADDR6" -p "$PORT" \
		> "$tmp/cli.out" 2> "$tmp/cli.err" ||
		{ cat "$tmp/cli.err"; fail "-n: client failed"; }
	wait "$srv_pid" || { cat "$tmp/srv.err"; fail "-n: server failed"; }
	[ "$(summary "$tmp/srv.out" validation_errors)" = 0 ] &&
		[ "$(summary "$tmp/srv.out" bytes_dmabuf)" = "$BYTES" ] ||
		fail "-n: the stream did not arrive whole in the dma-buf"
	[ "$(srv "$DMCTL" data-split "$SRV_IF")" = on ] ||
		fail "-n: tcp-data-split was undone"
	echo "-n: $(summary "$tmp/srv.out" bytes_dmabuf) bytes into the dma-buf," \
	     "tcp-data-split still on"
	srv ethtool -X "$SRV_IF" default &&
		srv "$DMCTL" hds-thresh "$SRV_IF" 256 &&
		srv "$DMCTL" data-split "$SRV_IF" off ||
		fail "-n: putting the NIC back failed"
}

bad_usage()
{
	srv "$NCDEVMEM" -l -f "$SRV_IF" -s "$SRV_ADDR6" -t 99 \
		> /dev/null 2> "$tmp/bad.err"
	[ $? = 1 ] || fail "usage: a queue out of range did not fail"
	"$NCDEVMEM" --no-such-option > /dev/null 2>&1
	[ $? = 2 ] || fail "usage: an unknown option is not exit 2"
	"$NCDEVMEM" -s "$SRV_ADDR6" -L > /dev/null 2>&1
	[ $? = 2 ] || fail "usage: -L on a client is not exit 2"
}

topo_setup || exit 1
selftest
stdin_flow stdin
stdin_flow io_uring --io-uring
keep_config
bad_usage

[ $ret = 0 ] && echo "ncdevmem mainline interface: all passed"
exit $ret
