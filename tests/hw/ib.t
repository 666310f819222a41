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

# The endpoints: over the device (rdma_ib_find) or, in a dry run, over
# loopback UDP.  The whole suite needs one: hw_skip_all with the reason.
ib_endpoints() {
	if [ "${NTPX_HW_DRYRUN:-}" = udp ]; then
		port=$(free_udp_port)
		srv_url="udp://127.0.0.1:$port"
		cli_url=$srv_url
		diag "dry run over udp: checks the script, not the ib transport"
		return 0
	fi
	rdma_need_device "${NTPX_IB_DEV:-}" || return 1
	rdma_ib_find || { hw_skip_all "$RDMA_WHY"; return 1; }
	dev=$IB_DEV
	# rdma_cm's UDP port space: no clash with kernel UDP, no root needed.
	port=$((20000 + $$ % 20000))
	srv_url="ib://$IB_ADDR:$port?dev=$dev"
	cli_url="ib://$IB_ADDR:$port"
	diag "device $dev, address $IB_ADDR, port $port"
}
ib_endpoints
need timeout

# IB: not a dry run (udp keeps no per-instance state a restart could
# break, and has no QKey).  PORT_FLAP: the commands that take the HCA port
# down and up are given.  RESET_COUNTER: ntpprobe prints the transport's
# counters (transport_counters), resets= among them.
test_lazy_prereq IB '[ "${NTPX_HW_DRYRUN:-}" != udp ]'
test_lazy_prereq PORT_FLAP '[ -n "${NTPX_IB_PORT_DOWN:-}" ] && [ -n "${NTPX_IB_PORT_UP:-}" ]'
test_lazy_prereq RESET_COUNTER 'grep -q "resets=" "$TMP/probe.err"'

last_seq() { data_lines "$1" | tail -n 1 | awk '{ print $1 + 0 }'; }
first_ok_after() { rec_status "$1" | awk -v s="$2" '$1 > s && $2 == "ok" { print $1; exit }'; }
ok_after() { [ -n "$(first_ok_after "$1" "$2")" ]; }
notok_after() { rec_status "$1" | awk -v s="$2" '$1 > s && $2 != "ok" { f = 1 } END { exit !f }'; }
# A fresh client gets an answer: the server is up and reachable.
server_ready() { timeout 5 ntpprobe -c 1 -w 200ms "$cli_url" 2>/dev/null | grep -Eq ' ok( |$)'; }
port_state() { cat "/sys/class/infiniband/$dev/ports/$hcaport/state" 2>/dev/null; }
port_active() { port_state | grep -q ACTIVE; }
port_inactive() { ! port_active; }
down_seen() { wait_until 20 port_inactive && wait_until 10 notok_after "$TMP/rec4" "$s_down"; }

# --- the study's failed condition: the server restarts ---------------
test_expect_success 'setup: the server answers, a probe runs against it' '
	spawn srv ntpreflect --stratum 1 "$srv_url" 2>"$TMP/srv1.err" &&
	if ! wait_until 10 server_ready
	then
		diag "first server never answered: $(cat "$TMP/srv1.err")" &&
		return 1
	fi &&
	spawn probe ntpprobe -i "${IVL}ms" -w "$((IVL * 3 / 4))ms" -c 3000 "$cli_url" \
		>"$TMP/rec" 2>"$TMP/probe.err"
'

test_expect_success 'the probe is answered' '
	wait_until 10 ok_after "$TMP/rec" 0
'

test_expect_success 'setup: the server restarts' '
	s_kill=$(last_seq "$TMP/rec") &&
	stop_pid "$srv" &&
	spawn srv ntpreflect --stratum 1 "$srv_url" 2>"$TMP/srv2.err" &&
	wait_until 10 server_ready &&
	s_up=$(last_seq "$TMP/rec")
'

test_expect_success 'the probe is answered by the restarted server' '
	wait_until $((BOUND * IVL / 1000 + 10)) ok_after "$TMP/rec" "$s_up"
'

# A new server has a new QPN (or at least a new epoch): the client
# cannot go on as if nothing happened.
test_expect_success IB 'the restart was seen (a record after the server was killed is not ok)' '
	diag "killed after seq $s_kill" &&
	notok_after "$TMP/rec" "$s_kill"
'

test_expect_success "reacquired within $BOUND intervals of the server's return" '
	s_ok=$(first_ok_after "$TMP/rec" "$s_up") &&
	diag "seq $s_up -> ${s_ok:-never}" &&
	test "${s_ok:-999999}" -le $((s_up + BOUND))
'

# The client's summary carries the transport's counters once ntpprobe
# prints them (transport_counters); then exactly one reset is expected.
test_expect_success 'setup: the probe stops, its summary written' '
	stop_pid "$probe"
'

test_expect_success RESET_COUNTER 'the client reset its filter state once' '
	test_grep "resets=1\b" "$TMP/probe.err"
'

# --- the client restarts ---------------------------------------------
test_expect_success 'setup: a restarted client, 10 requests' '
	spawn probe2 ntpprobe -i "${IVL}ms" -w "$((IVL * 3 / 4))ms" -c 10 "$cli_url" \
		>"$TMP/rec2" 2>"$TMP/probe2.err" &&
	wait "$probe2"
'

test_expect_success 'a restarted client is answered at once (first ok by seq 2)' '
	first=$(first_ok_after "$TMP/rec2" 0) &&
	diag "first ok: seq ${first:-none}" &&
	test "${first:-99}" -le 2
'

test_expect_success 'and keeps being answered (at least 8 of 10)' '
	diag "$(count_status "$TMP/rec2" ok) of 10 ok" &&
	test "$(count_status "$TMP/rec2" ok)" -ge 8
'

# --- a wrong QKey: the HCA drops the datagram ------------------------
# After the miss run the client resolves again in the background: a
# request sent meanwhile is an error record, not a timeout.
test_expect_success IB 'requests with a wrong QKey are never answered' '
	test_exit 1 timeout 20 ntpprobe -i "${IVL}ms" -w 100ms -c 5 "$cli_url?qkey=0x1" >"$TMP/rec3" 2>/dev/null &&
	test_is "$(count_status "$TMP/rec3" ok) of $(data_lines "$TMP/rec3" | wc -l)" "0 of 5"
'

# --- the HCA port goes down and comes back ---------------------------
test_expect_success IB,PORT_FLAP 'setup: a probe answered over the first ACTIVE port' '
	hcaport=$(rdma_active_ports "$dev" | head -n 1) &&
	diag "port $dev/$hcaport" &&
	spawn probe3 ntpprobe -i "${IVL}ms" -w "$((IVL * 3 / 4))ms" -c 3000 "$cli_url" \
		>"$TMP/rec4" 2>"$TMP/probe3.err" &&
	wait_until 10 ok_after "$TMP/rec4" 0 &&
	test_atexit "$NTPX_IB_PORT_UP"
'

test_expect_success IB,PORT_FLAP 'port down seen: the port went down and the probe saw it' '
	sh -c "$NTPX_IB_PORT_DOWN" &&
	s_down=$(last_seq "$TMP/rec4") &&
	down_seen
'

test_expect_success IB,PORT_FLAP 'port back: the port is ACTIVE again' '
	sh -c "$NTPX_IB_PORT_UP" &&
	wait_until 60 port_active
'

test_expect_success IB,PORT_FLAP "reacquired after port up: within $BOUND intervals of the port's return" '
	s_up=$(last_seq "$TMP/rec4") &&
	wait_until $((BOUND * IVL / 1000 + 10)) ok_after "$TMP/rec4" "$s_up" &&
	s_ok=$(first_ok_after "$TMP/rec4" "$s_up") &&
	diag "seq $s_up -> ${s_ok:-never}" &&
	test "${s_ok:-999999}" -le $((s_up + BOUND))
'
done_testing
