#!/bin/sh
# SPDX-License-Identifier: ISC
# The directional bias on a real queue (the study's finding, on one
# machine): load above the slow path's rate in one direction fills that
# direction's queue, and NTP's offset moves by half the added delay, with
# the sign of the direction; load both ways raises the delay and leaves
# the offset nearly where it was; the unlimited fast path under the same
# offered load does not move.  For the blocking and the busy-polling probe.
#
# Each case: ntpprobe 150 exchanges at 10 ms on a lab path, alone or while
# loadgen offers 1.2 times the shaper's rate.  The shaper runs at 200
# Mbit/s, which a busy 2-core machine can exceed in 64 KiB GSO packets
# (a few hundred sends a second; in frames it could not, with every core
# busy): the queue must fill for the physics to show, and how fast the
# machine can send is not what this test is about.  The queue is 10 ms,
# 250 kB: it holds several GSO packets and stays nearly full (the lab's
# floor, 70,000 bytes, holds one, and was half full on average, both ways
# loaded), and it is long against what the host adds: with every core
# busy the shapers' dequeues wait for softirq time, a few milliseconds,
# on either leg (with 2.8 ms of queue that put 3.6 ms more on the way
# back than on the way out, both ways loaded).
#
# On one clock each record splits exactly into its two legs: forward
# t2 - t1 = (delay + off2) / 2 and back t4 - t3 = (delay - off2) / 2.
# The client's side of each leg is its kernel's stamp, t1k and t4k (legs
# ... kernel, tests/lib.sh): with every core busy a busy-polling probe is
# preempted for milliseconds, and its T4 waits for it (7.3 ms on the
# unloaded leg once), which is the scheduler, not the path.  The offset in
# the records still moves with the queue (the signs test, from off2).
# "The offset moves by half the added delay, with the direction's sign"
# is "the loaded direction's leg carries the queue, the other leg does
# not".  A leg carries the queue when its median rose by at least half the
# queue's configured delay (the queue was more than half full, as the
# kernel's backlog showed before the probe began): no fixed fraction of a
# noisy number, the queue's size.  What a busy machine adds to a leg is
# not the queue's and may be a millisecond too (the reflector's wake-up
# on T2, the shapers' dequeues waiting for softirq time), on the other
# leg as well, so "the other leg does not carry the queue" is: the loaded
# leg rose by at least half the queue more than the other one did.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
port=12300
# The median of column COL over the ok records of FILE.
median() {
	awk -v c="$2" "$ntpx_fields"'
		/^#fields/ { fields(); next }
		/^#/ { next }
		field("status") == "ok" { print field(c) }' "$1" | sort -n |
	awk '{ v[NR] = $1 } END { if (!NR) { print "nan"; exit } print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# Bytes waiting in the bfifo under the shaper on DEV in NS.
backlog() {
	tc -s -n "$1" qdisc show dev "$2" | awk '$1 == "qdisc" && $2 == "bfifo" { w = 1 }
		w && $1 == "backlog" { v = $2; m = 1; if (v ~ /Kb$/) m = 1024; if (v ~ /Mb$/) m = 1048576
			sub(/[KM]?b$/, "", v); print v * m; exit }'
}
# Half the queue's bytes: the load is building it.
queue_full() { [ "$(backlog "$1" "$2")" -ge "$((NTPX_SLOW_RATE / 8 * NTPX_SLOW_QUEUE_NS / 1000000000 / 2))" ]; }

# load c2r|r2c|bi|fast|none: start loadgen(s) and wait for the queue.
load_pids=
load() {
	load_pids=
	case $1 in
	c2r|bi)
		spawn p $NTPX_CLIENT_EXEC loadgen -r "$load_rate" -d 0 "udp://$NTPX_REF_SLOW:9000" >/dev/null 2>&1
		load_pids="$load_pids $p" ;;
	esac
	case $1 in
	r2c|bi)
		spawn p $NTPX_REF_EXEC loadgen -r "$load_rate" -d 0 "udp://$NTPX_CLIENT_SLOW:9000" >/dev/null 2>&1
		load_pids="$load_pids $p" ;;
	fast)
		spawn p $NTPX_CLIENT_EXEC loadgen -r "$load_rate" -d 0 "udp://$NTPX_REF_FAST:9000" >/dev/null 2>&1
		load_pids="$load_pids $p" ;;
	esac
	case $1 in
	c2r|bi) wait_until 5 queue_full "$NTPX_NS_REF" ifbslow ||
		{ diag "client->ref queue did not fill"; return 1; } ;;
	esac
	case $1 in
	r2c|bi) wait_until 5 queue_full "$NTPX_NS_REF" slow ||
		{ diag "ref->client queue did not fill"; return 1; } ;;
	esac
}
unload() {
	for p in $load_pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	load_pids=
}

# measure NAME LOAD POLL ADDR: sets NAME_d and NAME_o (median delay and
# off2, ns); fails when the load's queue did not fill or the probe failed
# (the load is ended either way).
measure() {
	if load "$2"; then
		$NTPX_CLIENT_EXEC ntpprobe -i 10ms -c 150 -w 200ms --poll "$3" \
			"udp://$4:$port" >"$TMP/$1.rec" 2>"$TMP/$1.err"
		_m_rc=$?
	else
		_m_rc=load
	fi
	unload
	[ "$_m_rc" = 0 ] || { diag "$1: $_m_rc: $(cat "$TMP/$1.err" 2>/dev/null)"; return 1; }
	eval "$1_d=$(median "$TMP/$1.rec" delay) $1_o=$(median "$TMP/$1.rec" off2)"
	eval "diag \"$1: median delay \$$1_d ns, off2 \$$1_o ns, $(count_status "$TMP/$1.rec" ok) ok\""
}

queued() { [ "$1" -ge "$half_q" ]; }		# the leg carries the queue
unqueued() { [ "$1" -lt "$half_q" ] && [ "$1" -gt "-$half_q" ]; }
# apart LOADED OTHER: the loaded leg rose by half the queue more than the other.
apart() { [ $(($1 - $2)) -ge "$half_q" ]; }
# one_leg A B fwd|back: the named leg carries the queue, the other not.
one_leg() {
	set -- $(legs "$1" "$2" kernel) "$3"
	diag "legs: forward $1 ns, back $2 ns (half the queue: $half_q ns)"
	if [ "$3" = fwd ]; then queued "$1" && apart "$1" "$2"; else queued "$2" && apart "$2" "$1"; fi
}

# Only ok and timeout records (a full queue drops what comes to it), and
# ok ones in every case.
statuses() {
	for f in "$TMP"/*.rec; do
		[ "$(count_status "$f" ok)" -gt 0 ] || return 1
		awk "$ntpx_fields"'/^#fields/ { fields(); next }
			/^#/ { next } field("status") != "ok" && field("status") != "timeout" { exit 1 }' "$f" || return 1
	done
}

first() { echo "$1"; }
second() { echo "$2"; }

test_expect_success "setup: a lab of the test's own, its slow path at 200 Mbit/s with 10 ms of queue" '
	lab_up b -r 200M --queue 10ms &&
	load_rate=$((NTPX_SLOW_RATE / 1000000 * 12 / 10))M &&
	half_q=$((NTPX_SLOW_QUEUE_NS / 2))
'
test_expect_success 'setup: a reflector in the reference, a load sink at each end' '
	spawn refl $NTPX_REF_EXEC ntpreflect --stratum 1 "udp://0.0.0.0:$port" 2>/dev/null &&
	spawn sink_ref $NTPX_REF_EXEC loadgen --sink udp://0.0.0.0:9000 >/dev/null 2>&1 &&
	spawn sink_cli $NTPX_CLIENT_EXEC loadgen --sink udp://0.0.0.0:9000 >/dev/null 2>&1 &&
	wait_until 5 udp_listening $port "$NTPX_NS_REF" &&
	wait_until 5 udp_listening 9000 "$NTPX_NS_REF" && wait_until 5 udp_listening 9000 "$NTPX_NS_CLIENT"
'

for poll in block busy
do
	test_expect_success "setup: $poll: the slow path unloaded, loaded client->ref, loaded ref->client" '
		measure base none $poll "$NTPX_REF_SLOW" &&
		measure c2r c2r $poll "$NTPX_REF_SLOW" &&
		measure r2c r2c $poll "$NTPX_REF_SLOW"
	'
	test_expect_success "$poll: client->ref load: offset +half the delay rise (the forward leg carries the queue, the back leg not)" '
		one_leg "$TMP/base.rec" "$TMP/c2r.rec" fwd
	'
	test_expect_success "$poll: ref->client load: offset -half the delay rise (the back leg carries the queue, the forward leg not)" '
		one_leg "$TMP/base.rec" "$TMP/r2c.rec" back
	'
	test_expect_success "$poll: the signs differ by direction" '
		test $((c2r_o - base_o)) -gt 0 -a $((r2c_o - base_o)) -lt 0
	'
	test_expect_success "setup: $poll: the slow path loaded both ways" '
		measure bi bi $poll "$NTPX_REF_SLOW"
	'
	test_expect_success "$poll: load both ways: both legs carry a queue" '
		set -- $(legs "$TMP/base.rec" "$TMP/bi.rec" kernel) &&
		diag "bi legs: forward $1 ns, back $2 ns" &&
		[ $1 -ge $half_q ] && [ $2 -ge $half_q ]
	'
	# Two queues of one size: the offset moves by half their difference,
	# less than one queue moves it (as it would were one of them empty).
	test_expect_success "$poll: load both ways: the offset moves less than one queue moves it" '
		c2r_f=$(first $(legs "$TMP/base.rec" "$TMP/c2r.rec" kernel)) &&
		r2c_b=$(second $(legs "$TMP/base.rec" "$TMP/r2c.rec" kernel)) &&
		one=$c2r_f &&
		if [ "$r2c_b" -lt "$one" ]; then one=$r2c_b; fi &&
		set -- $(legs "$TMP/base.rec" "$TMP/bi.rec" kernel) &&
		d=$(($1 - $2)) &&
		diag "$d ns against $one" &&
		[ ${d#-} -lt $one ]
	'
	test_expect_success "$poll: every case has ok records, and nothing but ok and timeout" '
		test_when_finished "rm -f $TMP/*.rec" &&
		statuses
	'
done

# The fast path is the control for where the load goes, not for how the
# probe waits: once is enough.
test_expect_success 'setup: block: the fast path unloaded and loaded' '
	measure fbase none block "$NTPX_REF_FAST" &&
	measure fc2r fast block "$NTPX_REF_FAST"
'
test_expect_success 'block: fast under the same load: no queue on either leg' '
	set -- $(legs "$TMP/fbase.rec" "$TMP/fc2r.rec" kernel) &&
	diag "fast legs: forward $1 ns, back $2 ns" &&
	unqueued $1 && unqueued $2
'
test_expect_success "block: the fast path's cases have ok records, and nothing but ok and timeout" '
	test_when_finished "rm -f $TMP/*.rec" &&
	statuses
'
done_testing
