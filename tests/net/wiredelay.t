#!/bin/sh
# SPDX-License-Identifier: ISC
# wiredelay between two hosts: namespaces A and B, each joined by a veth
# to a third, W, where wiredelay bridges the two.  ntpprobe in A against
# ntpreflect in B, through the wire without delay and then with a
# different delay each way, every request and every reply accounted for
# by the probe and by both kernels (probe_run): each leg's median rose by
# its direction's delay, within what the run itself measured (the relay's
# own hold errors, both runs, and the spread of each leg in both runs); no
# leg was ever shorter than its delay (a frame never leaves early: a
# bound the truth cannot break); the offset moved by half the difference
# of the two delays, with its sign, as the study's directional queue
# moved it.  The relay's summary: every frame stamped on the way out,
# nothing dropped.
# What the relay claims of itself, from its own stamps: no frame left
# before its due time; its quantiles lie within what it saw and each
# hold error is how late the send began plus the send; and the spin
# (relay.c) took the timer's lateness out of the median, against the
# timer's lateness measured in the same run.  The delayed runs are under
# SCHED_FIFO (--priority), as the lab runs the relay: a thread that a
# busy machine does not let run for milliseconds sends a burst of frames
# late at one wake of its timer, which is neither the timer's lateness
# nor anything a spin can take out.  The run without delay is not.
# A thousand pings a second for two seconds through 1 ms each way: every
# reply, in order.  SIGINT ends it as SIGTERM does; the refusals.
#
# On one clock each record splits into its legs (legs in tests/lib.sh),
# the client's side taken from its kernel's stamps, so that the probe's
# own scheduling is left out and what is left of the path is the wire's.
. "$(dirname "$0")/../lib.sh"

need_prereq ROOT BUILT
need ip ping ss
wd=$NTPX_BIN/wiredelay
# The delays, ns: different each way, so that a direction swapped shows.
dab=1000000
dba=3000000

in_b() { ip netns exec "$B" ss -Hlun "sport = :12300" | grep -q .; }
# KEY FILE: the value of KEY in a --stats file.
stat() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' "$2"; }
# wire_up NAME ARG...: wiredelay in W with ARG..., its --stats and stderr
# in $TMP/NAME.stats and .err; WPID its PID; returns once it is ready.
wire_up() {
	_n=$1
	shift
	spawn WPID ip netns exec "$W" "$wd" "$@" --ready "$TMP/$_n.ready" --stats "$TMP/$_n.stats" wa wb \
		2>"$TMP/$_n.err" &&
	wait_until 10 test -s "$TMP/$_n.ready" ||
	{ diag "$_n: not ready after 10 s: $(cat "$TMP/$_n.err")"; return 1; }
}
# NS: what its kernel counted (/proc/net/snmp, read in NS): "IpInDelivers
# UdpInDatagrams UdpOutDatagrams UdpRcvbufErrors UdpInErrors".
counts() {
	echo "$(snmp "$1" Ip InDelivers) $(snmp "$1" Udp InDatagrams) $(snmp "$1" Udp OutDatagrams)" \
		"$(snmp "$1" Udp RcvbufErrors) $(snmp "$1" Udp InErrors)"
}
# NS N BEFORE: since NS counted BEFORE, its kernel delivered N datagrams
# (A: the replies), its sockets read N and sent N (B: the reflector).
delivered() { set -- "$2" $3 $(counts "$1"); [ $(($7 - $2)) -ge "$1" ]; }
answered() { set -- "$2" $3 $(counts "$1"); [ $(($8 - $3)) -ge "$1" ] && [ $(($9 - $4)) -ge "$1" ]; }
# REC ERR: an ntpprobe's records and its summary, "RECORDS OK TIMEOUTS
# TRAILING OTHER SENT LATE": TRAILING the timeouts after the last ok
# record, OTHER the records neither ok nor timeout.
accounts() {
	awk "$ntpx_fields"'FNR == NR && /^#fields/ { fields(); next } FNR == NR && /^#/ { next }
		FNR == NR { n++; s = field("status")
			if (s == "ok") { ok++; trail = 0 } else if (s == "timeout") { to++; trail++ } else other++
			next }
		/^ntpprobe: sent [0-9]/ { sent = $3 + 0; for (i = 4; i < NF; i++) if ($i == "late") late = $(i + 1) + 0 }
		END { print n + 0, ok + 0, to + 0, trail + 0, other + 0, sent + 0, late + 0 }' "$1" "$2"
}
# The most ns by which ntpprobe read a reply after its kernel had it (t4
# less t4k) among REC's ok records: the probe's own lateness.
read_late() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" && field("t4k") != "-" { d = field("t4") - field("t4k"); if (d > m) m = d }
		END { print m + 0 }' "$1"
}
# NAME: 200 exchanges at 10 ms, the records in $TMP/NAME.rec, after a
# ping has come back (A has resolved B's address through the wire: an
# exchange that waited for that would be the neighbour's, not the
# wire's).  What the path promises is that every request and every reply
# arrives, not that the probe and the reflector, which run as anything
# else does, read them within the probe's timeout (1 s, which is not what
# this test is about): on a busy machine both have been seen not to run
# for a second or two while the relay, under SCHED_FIFO, held every frame
# to its time (a reply in A's kernel 4.6 ms after its request, read by
# the probe 2 s later).  So each exchange is either ok, or timed out with
# its reply counted late by the probe (a reply cannot pass the one before
# it: the reflector answers in order and the wire keeps it), or is one of
# the last, answered after the probe stopped listening; and the kernels
# say where every datagram went: B read and answered every request, A
# took in every reply, and neither dropped one at a socket.
pinged() { ip netns exec "$A" ping -c 1 -W 1 10.77.0.2 >/dev/null; }
probe_run() {
	{ wait_until 10 pinged || { diag "no ping through the wire in 10 s: $(ip netns exec "$A" ip neigh)"; false; }; } &&
	_a0=$(counts "$A") && _b0=$(counts "$B") &&
	_ok=$(probe_oks ip netns exec "$A" ntpprobe -c 200 -i 10ms -w 1s udp://10.77.0.2:12300) &&
	cp "$TMP/probe_oks.rec" "$TMP/$1.rec" &&
	set -- "$1" $(accounts "$TMP/$1.rec" "$TMP/probe_oks.err") &&
	diag "$1: $3 ok; $4 timed out, $8 of their replies read late by the probe, $5 at the end answered after it stopped listening; it read a reply at most $(read_late "$TMP/$1.rec") ns after its kernel had the reply" &&
	test_is "$2/$6/$7/$_ok" 200/0/200/$3 &&
	test "$8" -ge $(($4 - $5)) &&
	{ wait_until 10 answered "$B" 200 "$_b0" && wait_until 10 delivered "$A" 200 "$_a0" ||
	  { diag "A counted $_a0, now $(counts "$A"); B counted $_b0, now $(counts "$B")"; false; }; } &&
	set -- "$1" $_b0 $(counts "$B") &&
	test_is "$(($8 - $3))/$(($9 - $4))/$((${10} - $5))/$((${11} - $6))" 200/200/0/0 &&
	set -- "$1" $_a0 $(counts "$A") &&
	test_is "$((${10} - $5))/$((${11} - $6))" 0/0 ||
	{ diag "$(cat "$TMP/probe_oks.err")"; diag "$(rec_status "$TMP/probe_oks.rec" | awk '$2 != "ok"' | head)"; return 1; }
}
# FILE: the interquartile range, ns, of the forward and the back legs of
# its ok records (the client's kernel stamps where there are), "F B".
iqr_legs() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { t1 = field("t1"); t4 = field("t4")
			if (field("t1k") != "-" && field("t1k") != "") t1 = field("t1k")
			if (field("t4k") != "-" && field("t4k") != "") t4 = field("t4k")
			print field("t2") - t1, t4 - field("t3") }' "$1" >"$TMP/legs.tmp" &&
	for c in 1 2
	do
		sort -n -k$c,$c "$TMP/legs.tmp" | awk -v c=$c '{ v[NR] = $c } END { printf "%d ", v[int(NR * 3 / 4) + 1] - v[int(NR / 4) + 1] }' || return 1
	done
}
# The fewest ns of FILE's forward and back legs (the client's kernel
# stamps where there are), "F B".
min_legs() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { t1 = field("t1"); t4 = field("t4")
			if (field("t1k") != "-" && field("t1k") != "") t1 = field("t1k")
			if (field("t4k") != "-" && field("t4k") != "") t4 = field("t4k")
			f = field("t2") - t1; b = t4 - field("t3")
			if (!n++ || f < mf) mf = f; if (n == 1 || b < mb) mb = b }
		END { print mf, mb }' "$1"
}
# The median of twice the offset of FILE's ok records, ns: (t2 - t1) +
# (t3 - t4), off2 of ntpx-record(5), but with the client's kernel stamps
# where there are, as the legs above: the probe's own scheduling on a busy
# machine is no part of the wire.
med_off() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { t1 = field("t1"); t4 = field("t4")
			if (field("t1k") != "-" && field("t1k") != "") t1 = field("t1k")
			if (field("t4k") != "-" && field("t4k") != "") t4 = field("t4k")
			print (field("t2") - t1) + (field("t3") - t4) }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
within() {	# GOT WANT TOL: |GOT - WANT| <= TOL
	diag "got $1, want $2 +- $3"
	awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'
}
# The replies of a ping's output, in order and without a gap: "N" replies.
in_order() {
	awk -F'icmp_seq=' 'NF > 1 { split($2, a, " "); s = a[1] + 0
		if (s != last + 1) { print "out of order: " s " after " last; bad = 1 } last = s; n++ }
		END { print n + 0; exit bad }' "$1"
}

test_expect_success 'setup: A and B joined through W' '
	n=$(uniq_name wd) && A=${n}a && B=${n}b && W=${n}w &&
	test_atexit "ip netns del $W" &&
	test_atexit "ip netns del $B" &&
	test_atexit "ip netns del $A" &&
	ip netns add "$A" && ip netns add "$B" && ip netns add "$W" &&
	ip link add xa netns "$A" type veth peer name wa netns "$W" &&
	ip link add xb netns "$B" type veth peer name wb netns "$W" &&
	ip -n "$W" link set dev wa addrgenmode none &&
	ip -n "$W" link set dev wb addrgenmode none &&
	ip -n "$A" addr add 10.77.0.1/24 dev xa &&
	ip -n "$B" addr add 10.77.0.2/24 dev xb &&
	for l in "$A lo" "$A xa" "$B lo" "$B xb" "$W wa" "$W wb"
	do
		ip -n ${l% *} link set dev ${l#* } up || return 1
	done &&
	spawn RPID ip netns exec "$B" ntpreflect --stratum 1 udp://10.77.0.2:12300 2>"$TMP/reflect.err" &&
	wait_until 10 in_b
'
test_expect_success 'nothing passes from A to B without the wire' '
	test_must_fail ip netns exec "$A" ping -c 1 -W 1 10.77.0.2 >/dev/null
'
test_expect_success 'the ready file holds the PID' '
	wire_up w0 &&
	test_is "$(cat "$TMP/w0.ready")" "$WPID"
'
test_expect_success 'without delay: 200 exchanges, every one answered' '
	probe_run d0
'
test_expect_success 'SIGTERM ends it with status 0 and a summary each way' '
	stop_pid "$WPID" &&
	test_grep "^wiredelay: wa>wb delay 0 ns: [1-9][0-9]* frames, hold error median [0-9]* ns, max [0-9]* ns (transmit stamps)" "$TMP/w0.err" &&
	test_grep "^wiredelay: wb>wa delay 0 ns: " "$TMP/w0.err"
'
test_expect_success "with $dab ns A to B and $dba ns back: 200 exchanges, every one answered" '
	wire_up w1 --delay-ab "${dab}ns" --delay-ba 3ms --priority 10 &&
	{ probe_run d1 || { stop_pid "$WPID"; diag "the relay: $(cat "$TMP/w1.err")"; false; }; } &&
	stop_pid "$WPID"
'
test_expect_success 'every frame sent was stamped, none dropped, none left' '
	for d in ab ba
	do
		for r in w0 w1
		do
			test_is "$(stat ${d}_hold_source "$TMP/$r.stats")" tx_stamp &&
			test "$(stat ${d}_frames "$TMP/$r.stats")" -ge 200 &&
			test_is "$(stat ${d}_stamped "$TMP/$r.stats")" "$(stat ${d}_frames "$TMP/$r.stats")" &&
			test_is "$(stat ${d}_dropped_full "$TMP/$r.stats")/$(stat ${d}_dropped_socket "$TMP/$r.stats")/$(stat ${d}_left "$TMP/$r.stats")" 0/0/0 ||
			return 1
		done
	done
'
test_expect_success 'no frame left before its time: the fewest ns of each leg is at least its delay' '
	set -- $(min_legs "$TMP/d1.rec") &&
	diag "fewest: forward $1 ns, back $2 ns" &&
	test "$1" -ge "$dab" && test "$2" -ge "$dba"
'
test_expect_success "each leg's median rose by its direction's delay, within the run's own error" '
	set -- $(legs "$TMP/d0.rec" "$TMP/d1.rec" kernel) $(iqr_legs "$TMP/d0.rec") $(iqr_legs "$TMP/d1.rec") &&
	tf=$(($(stat ab_hold_median_ns "$TMP/w0.stats") + $(stat ab_hold_median_ns "$TMP/w1.stats") + $3 + $5)) &&
	tb=$(($(stat ba_hold_median_ns "$TMP/w0.stats") + $(stat ba_hold_median_ns "$TMP/w1.stats") + $4 + $6)) &&
	diag "$(cat "$TMP/w1.err")" &&
	within "$1" "$dab" "$tf" &&
	within "$2" "$dba" "$tb"
'
test_expect_success 'the offset moved by half the difference of the delays, with its sign' '
	set -- $(iqr_legs "$TMP/d0.rec") $(iqr_legs "$TMP/d1.rec") &&
	t=$((($(stat ab_hold_median_ns "$TMP/w0.stats") + $(stat ab_hold_median_ns "$TMP/w1.stats") +
	      $(stat ba_hold_median_ns "$TMP/w0.stats") + $(stat ba_hold_median_ns "$TMP/w1.stats") +
	      $1 + $2 + $3 + $4) / 2)) &&
	within $((($(med_off "$TMP/d1.rec") - $(med_off "$TMP/d0.rec")) / 2)) $(((dab - dba) / 2)) "$t"
'

test_expect_success '1000 pings a second through 1 ms each way: every reply, in order' '
	wire_up w2 --delay 1ms --priority 10 &&
	ip netns exec "$A" ping -i 0.001 -c 2000 -W 2 10.77.0.2 >"$TMP/ping" &&
	test_is "$(in_order "$TMP/ping")" 2000 &&
	test_grep "2000 packets transmitted, 2000 received" "$TMP/ping"
'
test_expect_success 'SIGINT ends it as SIGTERM does; it dropped nothing' '
	stop_pid "$WPID" INT &&
	test_grep "^wiredelay: wa>wb delay 1000000 ns: [1-9][0-9]* frames" "$TMP/w2.err" &&
	for d in ab ba
	do
		test "$(stat ${d}_frames "$TMP/w2.stats")" -ge 2000 &&
		test_is "$(stat ${d}_dropped_full "$TMP/w2.stats")/$(stat ${d}_dropped_socket "$TMP/w2.stats")" 0/0 ||
		return 1
	done &&
	diag "$(cat "$TMP/w2.err")"
'

# RUN: what the relay said of RUN's delayed direction(s), for the log.
summary() {
	for d in ab ba
	do
		f=$TMP/$1.stats
		echo "$1 $d: hold error median $(stat ${d}_hold_median_ns "$f") p99 $(stat ${d}_hold_p99_ns "$f") max $(stat ${d}_hold_max_ns "$f") min $(stat ${d}_hold_min_ns "$f");" \
			"send began median $(stat ${d}_wake_median_ns "$f") max $(stat ${d}_wake_max_ns "$f"); send median $(stat ${d}_send_median_ns "$f") max $(stat ${d}_send_max_ns "$f");" \
			"timer late median $(stat ${d}_timer_median_ns "$f") p99 $(stat ${d}_timer_p99_ns "$f"); margin $(stat ${d}_spin_margin_ns "$f"), spun $(stat ${d}_spin_ns "$f") ns;" \
			"handed over late $(stat ${d}_late_arrivals "$f"), deliver max $(stat ${d}_deliver_max_ns "$f") ns"
	done
}
# A <= B <= C ...: each is a number and none is less than the one before.
ordered() {
	is_num "$@" &&
	awk 'BEGIN { for (i = 2; i < ARGC; i++) if (ARGV[i] + 0 < ARGV[i - 1] + 0) exit 1 }' "$@" ||
		{ diag "not in order: $*"; return 1; }
}

# What the relay claims of itself, from its own stamps.
test_expect_success 'by its own transmit stamps, no frame left before its due time' '
	for r in w0 w1 w2
	do
		for d in ab ba
		do
			ordered 0 "$(stat ${d}_hold_min_ns "$TMP/$r.stats")" || return 1
		done
	done
'
test_expect_success 'its summary holds together: each quantile within what was seen, each hold error the sum of its parts' '
	diag "$(summary w1; summary w2)" &&
	for r in w1 w2
	do
		for d in ab ba
		do
			f=$TMP/$r.stats &&
			ordered "$(stat ${d}_hold_min_ns "$f")" "$(stat ${d}_hold_median_ns "$f")" \
				"$(stat ${d}_hold_p99_ns "$f")" "$(stat ${d}_hold_max_ns "$f")" &&
			for k in wake send deliver timer
			do
				ordered "$(stat ${d}_${k}_median_ns "$f")" "$(stat ${d}_${k}_p99_ns "$f")" \
					"$(stat ${d}_${k}_max_ns "$f")" || return 1
			done &&
			# The hold error of a frame is how late its send
			# began plus the send: every frame was stamped
			# (above), so the largest is at least the largest of
			# either part and at most their sum.
			ordered "$(stat ${d}_wake_max_ns "$f")" "$(stat ${d}_hold_max_ns "$f")" \
				$(($(stat ${d}_wake_max_ns "$f") + $(stat ${d}_send_max_ns "$f"))) &&
			ordered "$(stat ${d}_send_max_ns "$f")" "$(stat ${d}_hold_max_ns "$f")" &&
			ordered 0 "$(stat ${d}_spin_margin_ns "$f")" "$(stat ${d}_spin_max_ns "$f")" || return 1
		done
	done
'
test_expect_success "the spin takes the timer's lateness out: at the median, a send began nearer its due time than the timer woke to its own" '
	for r in w1 w2
	do
		for d in ab ba
		do
			f=$TMP/$r.stats &&
			test "$(stat ${d}_timer_wakes "$f")" -gt 0 &&
			test "$(stat ${d}_wake_median_ns "$f")" -lt "$(stat ${d}_timer_median_ns "$f")" || return 1
		done
	done
'

test_expect_success 'an interface that is not there: exit 1, one line naming it' '
	test_exit 1 ip netns exec "$W" "$wd" wa nosuch 2>"$TMP/e1" &&
	test_is "$(cat "$TMP/e1")" "wiredelay: nosuch: no such interface here"
'
test_expect_success 'a bad delay or spin: exit 2, one line' '
	test_exit 2 "$wd" --delay-ab 1parsec wa wb 2>"$TMP/e2" &&
	test_is "$(cat "$TMP/e2")" "wiredelay: bad --delay-ab '\''1parsec'\'' (expected a duration: 100us, 1ms)" &&
	test_exit 2 "$wd" --spin -1ms wa wb 2>"$TMP/e3" &&
	test_is "$(cat "$TMP/e3")" "wiredelay: bad --spin '\''-1ms'\'' (expected a duration: 100us, 1ms)"
'
test_expect_success 'one interface, or the same twice: exit 2' '
	test_exit 2 "$wd" wa 2>/dev/null &&
	test_exit 2 "$wd" wa wa 2>/dev/null
'
test_expect_success '--help: exit 0, the usage' '
	"$wd" --help >"$TMP/help" &&
	test_grep "^usage: wiredelay " "$TMP/help"
'
done_testing
