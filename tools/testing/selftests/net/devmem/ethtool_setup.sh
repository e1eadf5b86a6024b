#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NIC set-up that mainline's ncdevmem does, with Debian 12's ethtool
# (6.1) on the server igb, as mainline's drivers behave:
#
# - rings: tcp-data-split on and hds-thresh 0 (through dmctl: Debian's
#   ethtool can set neither), hds-thresh read back with its maximum, a
#   value igb cannot do refused;
# - RSS: "ethtool -X IF equal 1" leaves queue 1 out of the table,
#   "ethtool -X IF default" spreads it again;
# - a flow rule with "queue Q" and no location (ethtool picks a free one
#   and prints "Added rule with ID N"), listed by "ethtool -n", its flow
#   received on queue Q, then "ethtool -N IF delete N"; deleting it again
#   fails. A rule without the source address and port (mainline ncdevmem's
#   3-tuple fallback) is refused: igb steers by the flow's RSS bucket,
#   which only the full 4-tuple names;
# - "ethtool -t IF offline" with tcp-data-split on.

source "$(dirname "$0")"/topology.sh
DMCTL=$(dirname "$0")/dmctl
PORT=5450
CLI_PORT=40010
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

srv_stat() { topo_stat "$SRV_NS" "$SRV_IF" "$1"; }

# The queues the RSS table points at, one per line, sorted and unique.
rss_queues()
{
	srv ethtool -x "$SRV_IF" | awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }' |
		sort -u
}

rings()
{
	local hds

	srv "$DMCTL" data-split "$SRV_IF" on || { fail "rings: tcp-data-split on"; return; }
	hds=$(srv "$DMCTL" hds-thresh "$SRV_IF")
	echo "rings: hds-thresh and its maximum: $hds"
	srv "$DMCTL" hds-thresh "$SRV_IF" 0 || fail "rings: hds-thresh 0"
	[ "$(srv "$DMCTL" hds-thresh "$SRV_IF")" = "0 256" ] ||
		fail "rings: hds-thresh 0 did not stick"
	srv "$DMCTL" hds-thresh "$SRV_IF" 100 2> "$tmp/err" &&
		fail "rings: hds-thresh 100 was taken (igb has 0 and 256)"
	echo "rings: hds-thresh 100 refused: $(cat "$tmp/err")"
	topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200
}

rss()
{
	srv ethtool -X "$SRV_IF" equal 1 || { fail "rss: ethtool -X equal 1"; return; }
	[ "$(rss_queues | tr '\n' ' ')" = "0 " ] ||
		fail "rss: equal 1 left other queues than 0 in the table:" \
		     "$(rss_queues | tr '\n' ' ')"
	srv ethtool -X "$SRV_IF" default || fail "rss: ethtool -X default"
	[ "$(rss_queues | tr '\n' ' ')" = "0 1 " ] ||
		fail "rss: default does not spread over queues 0 and 1: $(rss_queues | tr '\n' ' ')"
	echo "rss: equal 1 and default as expected"
}

# A 4 MiB TCP stream from CLI_PORT to PORT; prints queue 1's packet count
# growth.
steered_stream()
{
	local before pid

	before=$(srv_stat rx_queue_1_packets)
	srv timeout 120 socat -u TCP6-LISTEN:"$PORT",reuseaddr OPEN:/dev/null &
	pid=$!
	topo_wait "ip netns exec $SRV_NS ss -Hltn sport = :$PORT | grep -q LISTEN" 100
	head -c $((4 << 20)) /dev/zero |
		ip netns exec "$CLI_NS" timeout 120 socat -u - \
			"TCP6:[$SRV_ADDR6]:$PORT,sourceport=$CLI_PORT,reuseaddr"
	wait "$pid"
	echo $(($(srv_stat rx_queue_1_packets) - before))
}

flow_rule()
{
	local out id got

	srv ethtool -X "$SRV_IF" equal 1 || { fail "rule: ethtool -X equal 1"; return; }
	out=$(srv ethtool -N "$SRV_IF" flow-type tcp6 src-ip "$CLI_ADDR6" \
		dst-ip "$SRV_ADDR6" src-port "$CLI_PORT" dst-port "$PORT" queue 1) ||
		{ fail "rule: ethtool -N ... queue 1 failed"; return; }
	id=$(echo "$out" | sed -n 's/^Added rule with ID \([0-9]*\)$/\1/p')
	echo "rule: \"$out\""
	[ -n "$id" ] || { fail "rule: no rule ID printed"; return; }
	srv ethtool -n "$SRV_IF" > "$tmp/rules"
	grep -q "^Filter: $id$" "$tmp/rules" && grep -q "Action: Direct to queue 1" "$tmp/rules" ||
		{ cat "$tmp/rules"; fail "rule: ethtool -n does not list rule $id to queue 1"; }
	got=$(steered_stream)
	echo "rule: the steered stream brought queue 1 $got packets"
	[ "$got" -gt 1000 ] || fail "rule: the flow did not arrive on queue 1"
	srv ethtool -N "$SRV_IF" delete "$id" || fail "rule: delete $id failed"
	srv ethtool -n "$SRV_IF" | grep -q "^Filter:" && fail "rule: rule $id still listed"
	srv ethtool -N "$SRV_IF" delete "$id" 2> /dev/null &&
		fail "rule: a second delete of $id worked"
	# Debian's ethtool 6.1 prints the refusal but exits 0 when it picked
	# the location itself: judge by the message and the rule list
	srv ethtool -N "$SRV_IF" flow-type tcp6 dst-ip "$SRV_ADDR6" dst-port "$PORT" \
		queue 1 > "$tmp/err" 2>&1
	if srv ethtool -n "$SRV_IF" | grep -q "^Filter:"; then
		fail "rule: a rule without source address and port was taken"
		srv ethtool -n "$SRV_IF" | sed -n 's/^Filter: //p' |
			xargs -r -n1 ip netns exec "$SRV_NS" ethtool -N "$SRV_IF" delete
	else
		echo "rule: a 3-tuple rule is refused: $(tail -1 "$tmp/err")"
	fi
	srv ethtool -X "$SRV_IF" default
}

# The offline self test builds a loopback test ring of its own: with
# tcp-data-split on it must still be a plain ring (the test reads its
# frames from pages). The kernel survives; the test's verdict is printed.
# The loopback test's verdict, "ethtool -t IF offline".
loopback_verdict()
{
	srv ethtool -t "$SRV_IF" offline > "$tmp/selftest" 2>&1
	sed -n 's/^Loopback test *(offline) *//p' "$tmp/selftest"
}

self_test()
{
	local off on

	srv "$DMCTL" data-split "$SRV_IF" off
	off=$(loopback_verdict)
	srv "$DMCTL" data-split "$SRV_IF" on || { fail "self test: tcp-data-split on"; return; }
	on=$(loopback_verdict)
	topo_wait "ip -n $SRV_NS link show $SRV_IF | grep -q LOWER_UP" 200 ||
		fail "self test: the link did not come back"
	echo "self test: loopback $off with tcp-data-split off, $on with it on"
	[ "$on" = "$off" ] ||
		fail "self test: tcp-data-split changes the loopback test's result"
	srv "$DMCTL" hds-thresh "$SRV_IF" 256
	srv "$DMCTL" data-split "$SRV_IF" off
}

topo_setup || exit 1
rings
rss
flow_rule
self_test
exit $ret
