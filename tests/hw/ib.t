#!/bin/sh
# SPDX-License-Identifier: ISC
# NTP over InfiniBand UD on a real RDMA device: the server restart the
# original study could not survive, a client restart, a wrong QKey, and a
# port going down and up.  One host: server and client on the same HCA
# port (the datagrams loop through the HCA); doc/hardware.md says how to
# run the two-host and two-port variants.
#
# Environment:
#   NTPX_IB_DEV=mlx5_0        device (default: the first with an ACTIVE port)
#   NTPX_IB_ADDR=10.1.0.1     IPoIB/RoCE address on it (default: the first
#                             IPv4 address of the device's netdev)
#   NTPX_IB_PORT_DOWN=CMD     takes the HCA port down, NTPX_IB_PORT_UP=CMD
#                             brings it back (e.g. "ip link set ens1f0 down"
#                             on RoCE; "ibportstate -D 0 1 disable" on IB);
#                             without both the port test is skipped
#   NTPX_REQUIRE_HW=1         no device is a failure, not a skip
#   NTPX_HW_DRYRUN=udp        runs the restart cases over loopback UDP: it
#                             checks this script's plumbing on any host and
#                             proves nothing about ib
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/rdma.sh"

MISS_LIMIT=3		# PEER_MISS_LIMIT_DEFAULT, lib/peer.h
IVL=200			# ms between requests
BOUND=$((MISS_LIMIT + 2))

first_active_device() {
	for _d in $(rdma_devices); do
		[ -n "$(rdma_active_ports "$_d")" ] && { echo "$_d"; return; }
	done
}

# The first IPv4 address of a netdev of RDMA device $1 (ib0, ens1f0...).
device_addr() {
	for _n in /sys/class/infiniband/"$1"/device/net/*; do
		[ -e "$_n" ] || continue
		_a=$(ip -4 -o addr show dev "${_n##*/}" 2>/dev/null | awk '{ print $4 }' |
			cut -d/ -f1 | head -1)
		[ -n "$_a" ] && { echo "$_a"; return; }
	done
}

if [ "${NTPX_HW_DRYRUN:-}" = udp ]; then
	dryrun=1
	port=$(free_udp_port)
	srv_url="udp://127.0.0.1:$port"
	cli_url=$srv_url
	diag "dry run over udp: checks the script, not the ib transport"
else
	dryrun=
	rdma_need_device "${NTPX_IB_DEV:-}"
	dev=${NTPX_IB_DEV:-$(first_active_device)}
	[ -n "$dev" ] || hw_skip_all "no RDMA device with an ACTIVE port"
	addr=${NTPX_IB_ADDR:-$(device_addr "$dev")}
	[ -n "$addr" ] || hw_skip_all "RDMA device $dev has no IPv4 address on its netdev (set NTPX_IB_ADDR)"
	# rdma_cm's UDP port space: no clash with kernel UDP, no root needed.
	port=$((20000 + $$ % 20000))
	srv_url="ib://$addr:$port?dev=$dev"
	cli_url="ib://$addr:$port"
	diag "device $dev, address $addr, port $port"
fi
need timeout

last_seq() { data_lines "$1" | tail -n 1 | awk '{ print $1 + 0 }'; }
first_ok_after() { rec_status "$1" | awk -v s="$2" '$1 > s && $2 == "ok" { print $1; exit }'; }
ok_after() { [ -n "$(first_ok_after "$1" "$2")" ]; }
notok_after() { rec_status "$1" | awk -v s="$2" '$1 > s && $2 != "ok" { f = 1 } END { exit !f }'; }
# A fresh client gets an answer: the server is up and reachable.
server_ready() { timeout 5 ntpprobe -c 1 -w 200ms "$cli_url" 2>/dev/null | grep -Eq ' ok( |$)'; }
port_state() { cat "/sys/class/infiniband/$dev/ports/$hcaport/state" 2>/dev/null; }
port_active() { port_state | grep -q ACTIVE; }
port_inactive() { ! port_active; }

# --- the study's failed condition: the server restarts ---------------
spawn srv ntpreflect "$srv_url" 2>"$TMP/srv1.err"
wait_until 10 server_ready || diag "first server never answered: $(cat "$TMP/srv1.err")"
spawn probe ntpprobe -i "${IVL}ms" -w "$((IVL * 3 / 4))ms" -c 3000 "$cli_url" \
	>"$TMP/rec" 2>"$TMP/probe.err"
ok "the probe is answered" wait_until 10 ok_after "$TMP/rec" 0

s_kill=$(last_seq "$TMP/rec")
kill "$srv"
wait "$srv"
spawn srv ntpreflect "$srv_url" 2>"$TMP/srv2.err"
wait_until 10 server_ready
s_up=$(last_seq "$TMP/rec")
ok "the probe is answered by the restarted server" \
	wait_until $((BOUND * IVL / 1000 + 10)) ok_after "$TMP/rec" "$s_up"
s_ok=$(first_ok_after "$TMP/rec" "$s_up")
if [ -n "$dryrun" ]; then
	skip "the restart was seen" "udp keeps no per-instance state a restart could break"
else
	# A new server has a new QPN (or at least a new epoch): the client
	# cannot go on as if nothing happened.
	ok "the restart was seen (a record after seq $s_kill is not ok)" \
		notok_after "$TMP/rec" "$s_kill"
fi
ok "reacquired within $BOUND intervals of the server's return (seq $s_up -> ${s_ok:-never})" \
	test "${s_ok:-999999}" -le $((s_up + BOUND))

# The client's summary carries the transport's counters once ntpprobe
# prints them (transport_counters); then exactly one reset is expected.
kill "$probe"
wait "$probe"
if grep -q 'resets=' "$TMP/probe.err"; then
	ok "the client reset its filter state once" grep -q 'resets=1\b' "$TMP/probe.err"
else
	skip "filter reset counted" "ntpprobe does not print transport counters yet"
fi

# --- the client restarts ---------------------------------------------
spawn probe2 ntpprobe -i "${IVL}ms" -w "$((IVL * 3 / 4))ms" -c 10 "$cli_url" \
	>"$TMP/rec2" 2>"$TMP/probe2.err"
wait "$probe2"
first=$(first_ok_after "$TMP/rec2" 0)
ok "a restarted client is answered at once (first ok: seq ${first:-none})" \
	test "${first:-99}" -le 2
ok "and keeps being answered ($(count_status "$TMP/rec2" ok) of 10)" \
	test "$(count_status "$TMP/rec2" ok)" -ge 8

# --- a wrong QKey: the HCA drops the datagram ------------------------
if [ -n "$dryrun" ]; then
	skip "wrong QKey dropped" "dry run"
else
	timeout 20 ntpprobe -i "${IVL}ms" -w 100ms -c 5 "$cli_url?qkey=0x1" >"$TMP/rec3" 2>/dev/null
	# After the miss run the client resolves again in the background: a
	# request sent meanwhile is an error record, not a timeout.
	is "$(count_status "$TMP/rec3" ok) of $(data_lines "$TMP/rec3" | wc -l)" "0 of 5" \
		"requests with a wrong QKey are never answered"
fi

# --- the HCA port goes down and comes back ---------------------------
if [ -n "$dryrun" ] || [ -z "${NTPX_IB_PORT_DOWN:-}" ] || [ -z "${NTPX_IB_PORT_UP:-}" ]; then
	for t in "port down seen" "port back" "reacquired after port up"; do
		skip "$t" "set NTPX_IB_PORT_DOWN and NTPX_IB_PORT_UP to let the test flap a port"
	done
else
	hcaport=$(rdma_active_ports "$dev" | head -n 1)
	spawn probe3 ntpprobe -i "${IVL}ms" -w "$((IVL * 3 / 4))ms" -c 3000 "$cli_url" \
		>"$TMP/rec4" 2>"$TMP/probe3.err"
	wait_until 10 ok_after "$TMP/rec4" 0
	cleanup "$NTPX_IB_PORT_UP"
	sh -c "$NTPX_IB_PORT_DOWN"
	s_down=$(last_seq "$TMP/rec4")
	down_seen() { wait_until 20 port_inactive && wait_until 10 notok_after "$TMP/rec4" "$s_down"; }
	ok "port $dev/$hcaport went down and the probe saw it" down_seen
	sh -c "$NTPX_IB_PORT_UP"
	ok "port $dev/$hcaport is ACTIVE again" wait_until 60 port_active
	s_up=$(last_seq "$TMP/rec4")
	wait_until $((BOUND * IVL / 1000 + 10)) ok_after "$TMP/rec4" "$s_up"
	s_ok=$(first_ok_after "$TMP/rec4" "$s_up")
	ok "reacquired within $BOUND intervals of the port's return (seq $s_up -> ${s_ok:-never})" \
		test "${s_ok:-999999}" -le $((s_up + BOUND))
fi
done_testing
