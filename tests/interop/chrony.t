#!/bin/sh
# SPDX-License-Identifier: ISC
# Real NTP software as a peer: chronyd as a client of ntpreflect (-Q: it
# measures and prints, never sets the clock), and chronyd as a server for
# ntpprobe (-x: it never touches the clock).  Both ways in interleaved
# mode too: chronyd -x with xleave against ntpreflect (its measurements
# log gives the mode and stamp source of every sample), and ntpprobe
# --xleave against chronyd, whose interleaved replies carry its kernel
# transmit stamps.
. "$(dirname "$0")/../lib.sh"
need chronyd
need_root

start_reflector
cat >"$TMP/client.conf" <<CONF
server 127.0.0.1 port $REFLECT_PORT iburst minpoll -4 maxpoll -4
pidfile $TMP/client.pid
logdir $TMP
log measurements
cmdport 0
bindcmdaddress /
CONF
# -Q exits by itself once it has its measurement; timeout only bounds a
# failure.
timeout 30 chronyd -Q -f "$TMP/client.conf" -u root -L 0 >"$TMP/q.out" 2>&1
is "$?" 0 "chronyd -Q against ntpreflect exits 0"
wrong=$(sed -n 's/.*System clock wrong by \([-0-9.]*\) seconds.*/\1/p' "$TMP/q.out")
ok "chronyd accepted the replies and measured an offset ('$wrong' s)" test -n "$wrong"
ok "every measurement chronyd made is on one clock: |offset| <= delay/2 + dispersion ($(chrony_one_clock -v "$TMP/measurements.log" 2>&1))" \
	chrony_one_clock "$TMP/measurements.log"

# chronyd as an interleaved client.  Its measurements log ends each line
# with the version and mode (4B basic, 4I interleaved) and the sources of
# its transmit and receive stamps (D daemon, K kernel, H hardware).
mkdir -m 700 "$TMP/clog"
cat >"$TMP/xclient.conf" <<CONF
server 127.0.0.1 port $REFLECT_PORT iburst minpoll -4 maxpoll -4 xleave
pidfile $TMP/xclient.pid
cmdport 0
bindcmdaddress /
logdir $TMP/clog
log measurements
CONF
interleaved_samples() { grep -c ' 4I [DKH] [DKH]$' "$TMP/clog/measurements.log"; }
spawn XC chronyd -x -d -f "$TMP/xclient.conf" -u root -L 0 2>"$TMP/xclient.log"
wait_until 30 sh -c "[ \$(grep -c ' 4I [DKH] [DKH]\$' '$TMP/clog/measurements.log') -ge 10 ]"
ok "chronyd with xleave against ntpreflect: interleaved samples ($(interleaved_samples))" \
	test "$(interleaved_samples)" -ge 10
kill "$XC"
wait "$XC" 2>/dev/null
n=$(grep -c ' 4I K K$' "$TMP/clog/measurements.log")
ok "... with kernel stamps at chronyd's end ($n of $(interleaved_samples))" test "$n" -ge 10
kill -TERM "$REFLECT_PID"
wait "$REFLECT_PID"
ok "ntpreflect counts the interleaved replies ($(cat "$TMP/reflect.err"))" \
	grep -q 'interleaved [1-9]' "$TMP/reflect.err"

port=$(free_udp_port)
cat >"$TMP/server.conf" <<CONF
port $port
bindaddress 127.0.0.1
local stratum 1
allow 127.0.0.1
cmdport 0
bindcmdaddress /
pidfile $TMP/server.pid
CONF
spawn chrony chronyd -x -d -f "$TMP/server.conf" -u root -L 0 2>"$TMP/chronyd.log"
wait_until 10 udp_listening "$port"
# chronyd serves as soon as it listens (local stratum 1); the probe's own
# records show whether it does.
ntpprobe -i 100ms -c 30 "udp://127.0.0.1:$port" >"$TMP/rec" 2>/dev/null
n=$(count_status "$TMP/rec" ok)
ok "ntpprobe gets ok records from chronyd ($n of 30)" test "$n" -ge 25
offsetfit "$TMP/rec" >"$TMP/sum"
ok "offsetfit accepts chronyd's timestamps" test $? = 0
# chronyd serves from this host's clock: its T2/T3 and ours are causal.
ok "chronyd's stamps and ours are on one clock: |off2| <= delay on every ok record" \
	one_clock "$TMP/rec"

# ntpprobe --xleave: chronyd's interleaved replies carry the kernel's
# transmit stamp of its previous reply (t3k), taken after its own T3.
ntpprobe -i 100ms -c 30 --xleave "udp://127.0.0.1:$port" >"$TMP/xrec" 2>"$TMP/xprobe.err"
n=$(count_status "$TMP/xrec" ok)
ok "ntpprobe --xleave against chronyd: ok records ($n of 30)" test "$n" -ge 25
ok "chronyd answered in interleaved mode ($(cat "$TMP/xprobe.err"))" \
	grep -Eq 'interleaved (2[5-9]|30),' "$TMP/xprobe.err"
# The reply's last stage, t3 (basic: chronyd's daemon stamp) or t3k
# (interleaved: its kernel stamp) to our t4k: the kernel stamp is later,
# so this stage is shorter on the median.
stage_median() {
	data_lines "$1" | while read -r seq t1 t2 t3 t4 delay off2 status t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h; do
		eval "v=\$$2"
		[ "$status" = ok ] && [ "$t4k" != - ] && [ "$v" != - ] && echo $((t4k - v))
	done | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "" }'
}
basic=$(stage_median "$TMP/rec" t3)
xl=$(stage_median "$TMP/xrec" t3k)
ok "t3k -> t4k (${xl} ns) is shorter than t3 -> t4k in basic mode (${basic} ns): a kernel stamp" \
	test -n "$xl" -a -n "$basic" -a "${xl:-0}" -lt "${basic:-0}"
done_testing
