#!/bin/sh
# SPDX-License-Identifier: ISC
# loadgen in the lab: the sink measures what the sender offers at a set
# rate, losing only what the kernel counts as dropped, for MTU-sized
# (GSO), fragmented and 64 KiB datagrams; calibration on the slow path
# stays within what the shaper passes; a burst schedule sends only when
# on; bad options exit 2.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
send() { $NTPX_CLIENT_EXEC loadgen "$@"; }

# The sink's rate and loss from the sender's summary line.
summary_value() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { v = $(i+1) } } END { gsub(/[(),%]/, "", v); print v }' "$1"; }
# What the kernel dropped between sender and sink on the fast path: the
# sink's namespace's UDP InErrors (a full receive buffer) and IP
# reassembly failures, both veth ends' dropped counters.
devdrops() {	# NS DEV
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_dropped" "/sys/class/net/$2/statistics/tx_dropped" |
		awk '{ s += $1 } END { print s + 0 }'
}
kdrops() {
	echo $(($(snmp "$NTPX_NS_REF" Udp InErrors) + $(snmp "$NTPX_NS_REF" Ip ReasmFails) +
		$(devdrops "$NTPX_NS_REF" "$NTPX_DEV_FAST") + $(devdrops "$NTPX_NS_CLIENT" "$NTPX_DEV_FAST")))
}
# sent - received <= what the kernel counted as dropped, and something
# arrived: exact, however busy the machine (a sink starved of the CPU
# overflows its buffer, and the kernel counts that).  How fast the machine
# can send is not this test's business (tests/bench/loadgen-iperf3.sh).
accounted() {	# FILE DROPS
	awk -v d="$2" '/sink received/ { for (i = 1; i < NF; i++) { if ($i == "sent") s = $(i + 1);
		if ($i == "received") r = $(i + 1) } }
		END { exit !(s > 0 && r > 0 && s - r <= d) }' "$1"
}

received() { awk '/sink received/ { for (i = 1; i < NF; i++) if ($i == "received") print $(i + 1) }' "$1"; }

# Calibration: how close it comes to the shaper depends on how fast this
# machine can send (a target: tests/bench/calibrate.sh).  What is exact:
# the rate on the wire is the payload rate with 42 bytes a datagram, and
# the sink cannot receive more than the shaper passes, but for what was
# already queued when its measuring window opened: the shaper's queue and
# the sink's receive buffer, over the shortest window (a quarter of the
# first, flat-out third of the run, less a 50 ms report: 0.3 s at -d 1.5s).
cal_key() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/cal.out"; }
sink_rb() {
	ip netns exec "$NTPX_NS_REF" ss -Hlumn "sport = :9000" | sed -n 's/.*skmem:(r[0-9]*,rb\([0-9]*\),.*/\1/p' | head -1
}
cal_ceil() {	# RCVBUF
	awk -v r="$NTPX_SLOW_RATE" -v q="$NTPX_SLOW_QUEUE_NS" -v b="$1" \
		'BEGIN { printf "%.0f", r + (r / 8 * q / 1e9 + b) * 8 / 0.3 }'
}
wire_rate_ok() {	# WIRE PAYLOAD
	awk -v c="$1" -v p="$2" 'BEGIN { d = c - p * 1514 / 1472; if (d < 0) d = -d; exit !(p > 0 && d <= 1) }'
}

# 300 ms on, 700 ms off from the next whole second (CLOCK_REALTIME), 100
# ms lines for 3 s.  Exact: no line that lies wholly in an off phase sent
# anything, every on phase sent in some line, and the token bucket sends
# at most the rate over the on time (3 x 300 ms), plus one message.
sending_lines() { awk '!/^#/ && $NF > 0' "$TMP/burst.out" | wc -l; }
bursts_on_only() {
	awk '!/^#/ { t = $1; if (p == "") p = t - 100000000
		# the line covers (p, t]; its on phases are [K s, K s + 0.3 s)
		ks = int(p / 1e9); ke = int(t / 1e9); on = 0
		for (k = ks; k <= ke; k++) if (k * 1e9 + 3e8 > p && k * 1e9 <= t) { on = 1; if ($NF > 0) hit[k] = 1 }
		if (!on && $NF > 0) bad++
		p = t }
		END { for (k in hit) n++; exit !(!bad && n >= 3) }' "$TMP/burst.out"
}
bursts_within_rate() {
	awk '/sent [0-9]* datagrams/ { for (i = 1; i < NF; i++) if ($i == "bytes,") b = $(i - 1) }
		END { exit !(b > 0 && b <= 200e6 / 8 * 0.9 + 65536) }' "$TMP/burst.err"
}

usage() { _o=$(loadgen "$@" 2>&1 >/dev/null); [ $? = 2 ] && [ -n "$_o" ]; }

test_expect_success "setup: a lab of the test's own" '
	lab_up g
'
test_expect_success 'setup: a sink in the reference on port 9000' '
	spawn sink $NTPX_REF_EXEC loadgen --sink udp://0.0.0.0:9000 >"$TMP/sink.out" 2>/dev/null &&
	wait_until 5 udp_listening 9000 "$NTPX_NS_REF"
'

test_expect_success 'setup: 2 s at 200 Mbit/s on the fast path' '
	d0=$(kdrops) &&
	send -r 200M -d 2s "udp://$NTPX_REF_FAST:9000" >"$TMP/a.out" 2>"$TMP/a.err" &&
	d=$(($(kdrops) - d0)) &&
	diag "$(cat "$TMP/a.err"); kernel dropped $d"
'
test_expect_success 'interval lines have the #fields header' '
	test_is "$(grep "^#fields" "$TMP/a.out")" "#fields t bytes packets gbps drops sent_gbps"
'
test_expect_success 'one line per second' '
	test_is "$(grep -vc "^#" "$TMP/a.out")" 2
'
test_expect_success '200 Mbit/s: the sink received what was sent, less what the kernel dropped' '
	accounted "$TMP/a.err" "$d"
'
# The sink's count of what it never saw is the sender's sent - received.
test_expect_success 'lost is sent - received' '
	test_is "$(summary_value "$TMP/a.err" lost)" "$(($(summary_value "$TMP/a.err" sent) - $(received "$TMP/a.err")))"
'

test_expect_success '9000-byte datagrams (IP fragments) arrive' '
	d0=$(kdrops) &&
	send -r 100M -d 1s -s 9000 "udp://$NTPX_REF_FAST:9000" >/dev/null 2>"$TMP/b.err" &&
	d=$(($(kdrops) - d0)) &&
	diag "$(cat "$TMP/b.err"); kernel dropped $d" &&
	test_grep "sent [0-9]* datagrams of 9000 bytes.*sink received [1-9]" "$TMP/b.err"
'
test_expect_success '9000 bytes: received what was sent, less what the kernel dropped' '
	accounted "$TMP/b.err" "$d"
'
test_expect_success '65507-byte datagrams arrive' '
	send -r 100M -d 1s -s 65507 "udp://$NTPX_REF_FAST:9000" >/dev/null 2>"$TMP/c.err" &&
	diag "$(cat "$TMP/c.err")" &&
	test_grep "datagrams of 65507 bytes.*sink received [1-9]" "$TMP/c.err"
'

test_expect_success 'setup: a calibration on the slow path' '
	send --calibrate -d 1.5s "udp://$NTPX_REF_SLOW:9000" >"$TMP/cal.out" 2>/dev/null &&
	cap=$(cal_key capacity_l2_bps) &&
	pay=$(cal_key capacity_bps) &&
	rb=$(sink_rb) &&
	ceil=$(cal_ceil "${rb:-0}") &&
	diag "calibrated $cap bit/s on the wire against a shaper at $NTPX_SLOW_RATE (ceiling $ceil with queue and receive buffer $rb)"
'
test_expect_success 'calibration: the wire rate is the payload rate with 42 bytes a 1472-byte datagram' '
	wire_rate_ok "${cap:-0}" "${pay:-0}"
'
test_expect_success 'calibration on slow: no more than the shaper passes' '
	test -n "$rb" -a "${cap:-0}" -gt 0 -a "${cap:-0}" -le "$ceil"
'

test_expect_success 'setup: 3 s of bursts, 300 ms on, 700 ms off' '
	send -r 200M -d 3s -i 100ms -b 300ms/700ms "udp://$NTPX_REF_FAST:9000" >"$TMP/burst.out" 2>"$TMP/burst.err" &&
	diag "burst: $(sending_lines) of $(grep -vc "^#" "$TMP/burst.out") lines sending; $(cat "$TMP/burst.err")"
'
test_expect_success 'bursts: nothing sent while off, something in each of the 3 on phases' '
	bursts_on_only
'
test_expect_success 'bursts: no more than the rate over the on time' '
	bursts_within_rate
'

# A sender woken late sends what it owes, up to 50 ms of sending
# (loadgen(1)): stopped for 40 ms (SIGSTOP) eight times during a 2 s run
# at 100 Mbit/s, it still sends the rate over the run.  Exact from the
# run's own lines: a gap between two turns shows as a gap between two
# 10 ms lines, and only what a gap holds beyond 50 ms may be forgone (a
# busy machine's own late wake-ups, and the stops when the sender is
# slow to come back); the last turn is late by what the run overran its
# duration; and a message at each end and each such gap, and one for
# the summary's rounding of the time.  (With the 2 ms bucket of before,
# each stop lost about 25 ms of sending, 2.5 MB in all.)
data_count() { grep -vc '^#' "$1"; }
lines_ge() { [ "$(data_count "$1")" -ge "$2" ]; }
owed_sent() {	# OUT ERR RATE DURATION_S INTERVAL_S
	awk -v r="$3" -v d="$4" -v iv="$5" '
		FNR == NR { if (!/^#/) t[++n] = $1; next }
		/sent [0-9]* datagrams/ { for (i = 1; i < NF; i++) {
			if ($i == "datagrams" && $(i + 1) == "of") sz = $(i + 2)
			if ($i == "bytes" && $(i + 1) == "in") { b = $(i - 1); el = $(i + 2) } } }
		END {
			pm = int(65507 / sz); if (pm > 64) pm = 64; msg = pm * sz
			tend = t[1] - iv * 1e9 + el * 1e9 + 1e6
			for (i = 2; i <= n && t[i] <= tend; i++)
				if (t[i] - t[i - 1] > 50e6) { late += t[i] - t[i - 1] - 50e6; nl++ }
			over = el > d ? el - d : 0
			want = r / 8 * (el - over - late / 1e9) - (nl + 3) * msg
			printf "sent %d, owed at least %.0f (%d gaps over 50 ms, %.1f ms beyond)\n", b, want, nl, late / 1e6
			exit !(n >= 2 && b >= want) }' "$1" "$2"
}
test_expect_success 'setup: 2 s at 100 Mbit/s, stopped for 40 ms eight times' '
	spawn lsend $NTPX_CLIENT_EXEC loadgen -r 100M -d 2s -i 10ms "udp://$NTPX_REF_FAST:9000" >"$TMP/late.out" 2>"$TMP/late.err" &&
	stops=0 &&
	while [ $stops -lt 8 ] && wait_until 5 lines_ge "$TMP/late.out" $(($(data_count "$TMP/late.out") + 2)) &&
		kill -STOP "$lsend" 2>/dev/null
	do
		sleep 0.04; kill -CONT "$lsend"; stops=$((stops + 1))
	done &&
	wait "$lsend" &&
	diag "late: $stops stops; $(cat "$TMP/late.err")" &&
	test $stops -ge 4
'
test_expect_success 'late: the sender sent what it owed over the run' '
	{ owed_sent "$TMP/late.out" "$TMP/late.err" 100e6 2 0.01 >"$TMP/late.owed"; r=$?; } &&
	diag "$(cat "$TMP/late.owed")" &&
	test $r = 0
'

test_expect_success 'the sink printed interval lines' '
	stop_pid "$sink" &&
	test "$(grep -vc "^#" "$TMP/sink.out")" -ge 5
'

test_expect_success 'bad rate: exit 2' '
	usage -r 5x udp://127.0.0.1:9
'
test_expect_success 'bad size: exit 2' '
	usage -s 70000 udp://127.0.0.1:9
'
test_expect_success 'missing endpoint: exit 2' '
	usage -r 1G
'
test_expect_success 'bad endpoint: exit 2' '
	usage -r 1G bogus://x
'
done_testing
