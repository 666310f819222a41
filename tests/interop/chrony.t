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
need_prereq ROOT

# chronyd's configurations: a client of ntpreflect (xleave as $1), its
# measurements logged in $2; a server on port $1 of the loopback.
client_conf() {
	printf 'server 127.0.0.1 port %s iburst minpoll -4 maxpoll -4%s\n' "$REFLECT_PORT" "${1:+ $1}"
	printf 'pidfile %s\ncmdport 0\nbindcmdaddress /\nlogdir %s\nlog measurements\n' "$2/chronyd.pid" "$2"
}
server_conf() {
	printf 'port %s\nbindaddress 127.0.0.1\nlocal stratum 1\nallow 127.0.0.1\n' "$1"
	printf 'cmdport 0\nbindcmdaddress /\npidfile %s\n' "$TMP/server.pid"
}
# -Q exits by itself once it has its measurement; timeout only bounds a
# failure.
chronyd_q() { timeout 30 chronyd -Q -f "$TMP/client.conf" -u root -L 0 >"$TMP/q.out" 2>&1; }

# chronyd's measurements log ends each line with the version and mode (4B
# basic, 4I interleaved) and the sources of its transmit and receive
# stamps (D daemon, K kernel, H hardware).
interleaved_samples() { grep -c ' 4I [DKH] [DKH]$' "$TMP/clog/measurements.log"; }
interleaved_10() { [ "$(interleaved_samples)" -ge 10 ]; }

# The reply's last stage, t3 (basic: chronyd's daemon stamp) or t3k
# (interleaved: its kernel stamp) to our t4k, median over REC's ok records.
stage_median() {
	rec_cols "$1" status t4k "$2" | while read -r status t4k v; do
		[ "$status" = ok ] && [ "$t4k" != - ] && [ "$v" != - ] && echo $((t4k - v))
	done | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "" }'
}

test_expect_success 'setup: ntpreflect on the loopback' '
	start_reflector
'

test_expect_success 'chronyd -Q against ntpreflect exits 0' '
	client_conf "" "$TMP" >"$TMP/client.conf" &&
	test_exit 0 chronyd_q
'

test_expect_success 'chronyd accepted the replies and measured an offset' '
	wrong=$(sed -n "s/.*System clock wrong by \([-0-9.]*\) seconds.*/\1/p" "$TMP/q.out") &&
	diag "chronyd -Q: clock wrong by $wrong s" &&
	test -n "$wrong"
'

test_expect_success 'every measurement chronyd made is on one clock: |offset| <= delay/2 + dispersion' '
	diag "$(chrony_one_clock -v "$TMP/measurements.log" 2>&1)" &&
	chrony_one_clock "$TMP/measurements.log"
'

# chronyd as an interleaved client.
test_expect_success 'setup: chronyd -x with xleave, a client of ntpreflect' '
	mkdir -m 700 "$TMP/clog" &&
	client_conf xleave "$TMP/clog" >"$TMP/xclient.conf" &&
	spawn XC chronyd -x -d -f "$TMP/xclient.conf" -u root -L 0 2>"$TMP/xclient.log"
'

test_expect_success 'chronyd with xleave against ntpreflect: interleaved samples (at least 10 within 30 s)' '
	wait_until 30 interleaved_10 &&
	diag "$(interleaved_samples) interleaved samples" &&
	test "$(interleaved_samples)" -ge 10
'

test_expect_success 'setup: the interleaved chronyd stops' '
	stop_pid "$XC"
'

test_expect_success "... with kernel stamps at chronyd's end (at least 10)" '
	n=$(grep -c " 4I K K\$" "$TMP/clog/measurements.log") &&
	diag "$n of $(interleaved_samples) with kernel stamps" &&
	test "$n" -ge 10
'

test_expect_success 'setup: ntpreflect stops, its summary written' '
	kill -TERM "$REFLECT_PID" &&
	wait "$REFLECT_PID"
'

test_expect_success 'ntpreflect counts the interleaved replies' '
	test_grep "interleaved [1-9]" "$TMP/reflect.err"
'

test_expect_success 'setup: chronyd -x serving on the loopback' '
	port=$(free_udp_port) &&
	server_conf "$port" >"$TMP/server.conf" &&
	spawn chrony chronyd -x -d -f "$TMP/server.conf" -u root -L 0 2>"$TMP/chronyd.log" &&
	wait_until 10 udp_listening "$port"
'

# chronyd serves as soon as it listens (local stratum 1); the probe's own
# records show whether it does.
test_expect_success 'ntpprobe gets ok records from chronyd (at least 25 of 30)' '
	ntpprobe -i 100ms -c 30 "udp://127.0.0.1:$port" >"$TMP/rec" 2>/dev/null &&
	n=$(count_status "$TMP/rec" ok) &&
	diag "$n of 30 ok" &&
	test "$n" -ge 25
'

test_expect_success "offsetfit accepts chronyd's timestamps" '
	test_exit 0 offsetfit "$TMP/rec" >"$TMP/sum"
'

# chronyd serves from this host's clock: its T2/T3 and ours are causal.
test_expect_success "chronyd's stamps and ours are on one clock: |off2| <= delay on every ok record" '
	one_clock "$TMP/rec"
'

# ntpprobe --xleave: chronyd's interleaved replies carry the kernel's
# transmit stamp of its previous reply (t3k), taken after its own T3.
test_expect_success 'ntpprobe --xleave against chronyd: ok records (at least 25 of 30)' '
	ntpprobe -i 100ms -c 30 --xleave "udp://127.0.0.1:$port" >"$TMP/xrec" 2>"$TMP/xprobe.err" &&
	n=$(count_status "$TMP/xrec" ok) &&
	diag "$n of 30 ok" &&
	test "$n" -ge 25
'

test_expect_success 'chronyd answered in interleaved mode (25 to 30 interleaved replies)' '
	test_grep -E "interleaved (2[5-9]|30)," "$TMP/xprobe.err"
'

# The kernel stamp is later than the daemon's, so this stage is shorter
# on the median.
test_expect_success 't3k -> t4k is shorter than t3 -> t4k in basic mode: a kernel stamp' '
	basic=$(stage_median "$TMP/rec" t3) &&
	xl=$(stage_median "$TMP/xrec" t3k) &&
	diag "t3k -> t4k ${xl} ns, t3 -> t4k ${basic} ns" &&
	test -n "$xl" -a -n "$basic" -a "${xl:-0}" -lt "${basic:-0}"
'
done_testing
