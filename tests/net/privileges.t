#!/bin/sh
# SPDX-License-Identifier: ISC
# --user: ntpreflect, ntpprobe and loadgen drop root once their endpoint is
# open.  While each still works, /proc/PID/status shows the new uid and
# gid and no capability left but the ones priv.h documents for its
# transport (none for udp and for a uudp server: the AF_XDP socket and
# its XDP program are taken before).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need_root
need ntpprobe ntpreflect loadgen setpriv
getent passwd nobody >/dev/null || skip_all "no user nobody"
plan 15

uid=$(id -u nobody)
gid=$(id -g nobody)
st() { awk -v k="$2:" '$1 == k { print $2, $3, $4, $5 }' "/proc/$1/status"; }
capeff() { awk '$1 == "CapEff:" { print $2 }' "/proc/$1/status"; }
capprm() { awk '$1 == "CapPrm:" { print $2 }' "/proc/$1/status"; }
# PID runs as nobody (real, effective, saved, fs) with no capability.
dropped() {
	[ "$(st "$1" Uid)" = "$uid $uid $uid $uid" ] && [ "$(st "$1" Gid)" = "$gid $gid $gid $gid" ] &&
		[ "$(capeff "$1")" = 0000000000000000 ] && [ "$(capprm "$1")" = 0000000000000000 ]
}

# 1. ntpreflect on udp.
start_reflector --user nobody
wait_until 5 dropped "$REFLECT_PID"
diag "ntpreflect: Uid $(st "$REFLECT_PID" Uid), CapEff $(capeff "$REFLECT_PID")"
ok "ntpreflect --user nobody: uid and gid nobody, no capabilities" dropped "$REFLECT_PID"
ntpprobe -i 50ms -c 10 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/r1" 2>/dev/null
is "$(count_status "$TMP/r1" ok)" 10 "it still answers (10 of 10 ok)"
ok "and is still as it was after answering" dropped "$REFLECT_PID"

# 2. ntpprobe, checked while it runs.
spawn P ntpprobe --user nobody -i 50ms -c 60 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/p1" 2>/dev/null
probing() { data_lines "$TMP/p1" | grep -Eq ' ok( |$)'; }
wait_until 5 probing
ok "ntpprobe --user nobody: uid and gid nobody, no capabilities" dropped "$P"
wait "$P"
is "$?" 0 "ntpprobe --user exits 0"
is "$(count_status "$TMP/p1" ok)" 60 "all its exchanges are ok (60)"

# 3. loadgen as a sink and as an NTP flooder.
lport=$(free_udp_port)
spawn L loadgen --user nobody --sink -d 0 "udp://127.0.0.1:$lport" >"$TMP/sink.out" 2>&1
wait_until 5 udp_listening "$lport"
wait_until 5 dropped "$L"
ok "loadgen --sink --user nobody: uid and gid nobody, no capabilities" dropped "$L"
loadgen --user nobody --ntp 2k -d 1s "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/flood.out" 2>&1
rc=$?
got=$(sed -n 's/.*ntp requests [0-9]* replies \([0-9]*\).*/\1/p' "$TMP/flood.out")
ok "loadgen --ntp --user nobody exits 0 with replies ($got)" test "$rc" = 0 -a "${got:-0}" -gt 0

# 4. Wrong uses, one line each.
ntpreflect --user ntpx-no-such-user "udp://127.0.0.1:$(free_udp_port)" 2>"$TMP/e1"
rc=$?
ok "an unknown user: status 1, one line" \
	sh -c "test $rc = 1 && test \$(wc -l <'$TMP/e1') = 1 && grep -q 'no such user' '$TMP/e1'"
setpriv --reuid nobody --regid nogroup --clear-groups \
	"$NTPX_BIN/ntpreflect" --user nobody "udp://127.0.0.1:$(free_udp_port)" 2>"$TMP/e2"
rc=$?
ok "not root: status 1, one line" \
	sh -c "test $rc = 1 && test \$(wc -l <'$TMP/e2') = 1 && grep -q 'only root' '$TMP/e2'"

# 5. uudp: the server keeps nothing; the client keeps CAP_NET_ADMIN for
# rediscovery (bit 12: 0x1000).
uudp_lab
port=12300
spawn U ip netns exec "$UB" ntpreflect --user nobody "uudp://*:$port?dev=$IFB" 2>"$TMP/u.err"
wait_until 5 udp_listening_in "$UB" "$port"
wait_until 5 dropped "$U"
ok "uudp ntpreflect --user nobody: uid nobody, no capabilities" dropped "$U"
is "$(xdp_prog "$UB" "$IFB")" "ntpx_xdp" "its XDP program is attached"
ina ntpprobe -i 50ms -c 10 "udp://$IPB:$port" >"$TMP/u1" 2>/dev/null
is "$(count_status "$TMP/u1" ok)" 10 "it still answers over uudp (10 of 10 ok)"
spawn C ip netns exec "$UA" ntpprobe --user nobody -i 50ms -c 40 "uudp://$IPB:$port?dev=$IFA" >"$TMP/u2" 2>/dev/null
uprobing() { data_lines "$TMP/u2" | grep -Eq ' ok( |$)'; }
wait_until 5 uprobing
ok "uudp ntpprobe --user nobody: uid nobody, CapEff net_admin only ($(capeff "$C"))" \
	test "$(st "$C" Uid)" = "$uid $uid $uid $uid" -a "$(capeff "$C")" = 0000000000001000
wait "$C"
kill "$U"; wait "$U" 2>/dev/null
is "$(xdp_prog "$UB" "$IFB")" "" "the program left with the unprivileged server"
done_testing
