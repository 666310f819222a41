#!/bin/sh
# SPDX-License-Identifier: ISC
# --user: ntpreflect, ntpprobe and loadgen drop root once their endpoint is
# open.  While each still works, /proc/PID/status shows the new uid and
# gid and no capability left but the ones priv.h documents for its
# transport (none for udp and for a uudp server: the AF_XDP socket and
# its XDP program are taken before).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need_prereq ROOT
need ntpprobe ntpreflect loadgen setpriv
test_lazy_prereq NOBODY 'getent passwd nobody'
need_prereq NOBODY
# Nothing on loopback or a veth loses a datagram, so every exchange must
# be ok: -w 5s is a limit on a failure, not a bound on timing (a busy
# machine answered after the default second).

st() { awk -v k="$2:" '$1 == k { print $2, $3, $4, $5 }' "/proc/$1/status"; }
capeff() { awk '$1 == "CapEff:" { print $2 }' "/proc/$1/status"; }
capprm() { awk '$1 == "CapPrm:" { print $2 }' "/proc/$1/status"; }
# PID runs as nobody (real, effective, saved, fs) with no capability.
dropped() {
	[ "$(st "$1" Uid)" = "$uid $uid $uid $uid" ] && [ "$(st "$1" Gid)" = "$gid $gid $gid $gid" ] &&
		[ "$(capeff "$1")" = 0000000000000000 ] && [ "$(capprm "$1")" = 0000000000000000 ]
}
probing() { data_lines "$TMP/p1" | grep -Eq ' ok( |$)'; }
uprobing() { data_lines "$TMP/u2" | grep -Eq ' ok( |$)'; }
# run_out FILE CMD...: CMD with its stdout and stderr in FILE.
run_out() { _ro=$1; shift; "$@" >"$_ro" 2>&1; }
# The replies in loadgen's summary FILE.
replies() { sed -n 's/.*ntp requests [0-9]* replies \([0-9]*\).*/\1/p' "$1"; }

# 1. ntpreflect on udp.
test_expect_success 'setup: ntpreflect --user nobody on udp' '
	uid=$(id -u nobody) &&
	gid=$(id -g nobody) &&
	start_reflector --user nobody
'

test_expect_success 'ntpreflect --user nobody: uid and gid nobody, no capabilities' '
	wait_until 5 dropped "$REFLECT_PID" &&
	diag "ntpreflect: Uid $(st "$REFLECT_PID" Uid), CapEff $(capeff "$REFLECT_PID")" &&
	dropped "$REFLECT_PID"
'

test_expect_success 'it still answers (10 of 10 ok)' '
	ntpprobe -i 50ms -w 5s -c 10 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/r1" 2>/dev/null &&
	test_is "$(count_status "$TMP/r1" ok)" 10
'

test_expect_success 'and is still as it was after answering' '
	dropped "$REFLECT_PID"
'

# 2. ntpprobe, checked while it runs.
test_expect_success 'setup: ntpprobe --user nobody, running' '
	spawn P ntpprobe --user nobody -i 50ms -w 5s -c 60 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/p1" 2>/dev/null &&
	wait_until 5 probing
'

test_expect_success 'ntpprobe --user nobody: uid and gid nobody, no capabilities' '
	dropped "$P"
'

test_expect_success 'ntpprobe --user exits 0' '
	test_exit 0 wait "$P"
'

test_expect_success 'all its exchanges are ok (60)' '
	test_is "$(count_status "$TMP/p1" ok)" 60
'

# 3. loadgen as a sink and as an NTP flooder.
test_expect_success 'setup: loadgen --sink --user nobody' '
	lport=$(free_udp_port) &&
	spawn L loadgen --user nobody --sink -d 0 "udp://127.0.0.1:$lport" >"$TMP/sink.out" 2>&1 &&
	wait_until 5 udp_listening "$lport"
'

test_expect_success 'loadgen --sink --user nobody: uid and gid nobody, no capabilities' '
	wait_until 5 dropped "$L" &&
	dropped "$L"
'

test_expect_success 'loadgen --ntp --user nobody exits 0 with replies' '
	test_exit 0 run_out "$TMP/flood.out" loadgen --user nobody --ntp 2k -d 1s "udp://127.0.0.1:$REFLECT_PORT" &&
	got=$(replies "$TMP/flood.out") &&
	diag "replies: $got" &&
	test "${got:-0}" -gt 0
'

# 4. Wrong uses, one line each.
test_expect_success 'an unknown user: status 1, one line' '
	test_exit 1 ntpreflect --user ntpx-no-such-user "udp://127.0.0.1:$(free_udp_port)" 2>"$TMP/e1" &&
	test $(wc -l <"$TMP/e1") = 1 &&
	test_grep "no such user" "$TMP/e1"
'

test_expect_success 'not root: status 1, one line' '
	test_exit 1 setpriv --reuid nobody --regid nogroup --clear-groups \
		"$NTPX_BIN/ntpreflect" --stratum 1 --user nobody "udp://127.0.0.1:$(free_udp_port)" 2>"$TMP/e2" &&
	test $(wc -l <"$TMP/e2") = 1 &&
	test_grep "only root" "$TMP/e2"
'

# 5. uudp: the server keeps nothing; the client keeps CAP_NET_ADMIN for
# rediscovery (bit 12: 0x1000).
test_expect_success LAB,XDP 'setup: a lab of our own (uudp), ntpreflect --user nobody on its fast path' '
	uudp_lab &&
	test -n "$MACB" &&
	port=12300 &&
	spawn U ip netns exec "$UB" ntpreflect --stratum 1 --user nobody "uudp://*:$port?dev=$IFB" 2>"$TMP/u.err" &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

test_expect_success LAB,XDP 'uudp ntpreflect --user nobody: uid nobody, no capabilities' '
	wait_until 5 dropped "$U" &&
	dropped "$U"
'

test_expect_success LAB,XDP 'its XDP program is attached' '
	test_is "$(xdp_prog "$UB" "$IFB")" "ntpx_xdp"
'

test_expect_success LAB,XDP 'it still answers over uudp (10 of 10 ok)' '
	ina ntpprobe -i 50ms -w 5s -c 10 "udp://$IPB:$port" >"$TMP/u1" 2>/dev/null &&
	test_is "$(count_status "$TMP/u1" ok)" 10
'

test_expect_success LAB,XDP 'uudp ntpprobe --user nobody: uid nobody, CapEff net_admin only' '
	spawn C ip netns exec "$UA" ntpprobe --user nobody -i 50ms -c 40 "uudp://$IPB:$port?dev=$IFA" >"$TMP/u2" 2>/dev/null &&
	wait_until 5 uprobing &&
	diag "CapEff $(capeff "$C")" &&
	test "$(st "$C" Uid)" = "$uid $uid $uid $uid" -a "$(capeff "$C")" = 0000000000001000
'

test_expect_success LAB,XDP 'the program left with the unprivileged server' '
	wait "$C" &&
	stop_pid "$U" &&
	test_is "$(xdp_prog "$UB" "$IFB")" ""
'
done_testing
