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
# loadgen offers 1.2 Gbit/s against the 1 Gbit/s shaper (2 ms of queue).
# The measure is the median of delay and of off2 over the ok records.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
lab_up b -q 2ms

port=12300
spawn refl $NTPX_REF_EXEC ntpreflect "udp://0.0.0.0:$port" 2>/dev/null
spawn sink_ref $NTPX_REF_EXEC loadgen --sink udp://0.0.0.0:9000 >/dev/null 2>&1
spawn sink_cli $NTPX_CLIENT_EXEC loadgen --sink udp://0.0.0.0:9000 >/dev/null 2>&1
in_ref() { ip netns exec "$NTPX_NS_REF" ss -Hlun "sport = :$1" | grep -q .; }
in_cli() { ip netns exec "$NTPX_NS_CLIENT" ss -Hlun "sport = :$1" | grep -q .; }
wait_until 5 in_ref $port && wait_until 5 in_ref 9000 && wait_until 5 in_cli 9000 ||
	skip_all "servers did not start"

# The median of column COL over the ok records of FILE.
median() {
	awk -v col="$2" '
		$1 == "#fields" { for (i = 2; i <= NF; i++) { if ($i == col) c = i - 1; if ($i == "status") s = i - 1 } next }
		/^#/ { next }
		$s == "ok" { print $c }' "$1" | sort -n |
	awk '{ v[NR] = $1 } END { if (!NR) { print "nan"; exit } print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# Bytes waiting in the bfifo under the shaper on DEV in NS.
backlog() {
	tc -s -n "$1" qdisc show dev "$2" | awk '$1 == "qdisc" && $2 == "bfifo" { w = 1 }
		w && $1 == "backlog" { v = $2; m = 1; if (v ~ /Kb$/) m = 1024; if (v ~ /Mb$/) m = 1048576
			sub(/[KM]?b$/, "", v); print v * m; exit }'
}
queue_full() { [ "$(backlog "$1" "$2")" -ge 100000 ]; }

# load c2r|r2c|bi|fast|none: start loadgen(s) and wait for the queue.
load_pids=
load() {
	load_pids=
	case $1 in
	c2r|bi)
		spawn p $NTPX_CLIENT_EXEC loadgen -r 1.2G -d 0 "udp://$NTPX_REF_SLOW:9000" >/dev/null 2>&1
		load_pids="$load_pids $p" ;;
	esac
	case $1 in
	r2c|bi)
		spawn p $NTPX_REF_EXEC loadgen -r 1.2G -d 0 "udp://$NTPX_CLIENT_SLOW:9000" >/dev/null 2>&1
		load_pids="$load_pids $p" ;;
	fast)
		spawn p $NTPX_CLIENT_EXEC loadgen -r 1.2G -d 0 "udp://$NTPX_REF_FAST:9000" >/dev/null 2>&1
		load_pids="$load_pids $p" ;;
	esac
	case $1 in
	c2r|bi) wait_until 5 queue_full "$NTPX_NS_REF" ifbslow || diag "client->ref queue did not fill" ;;
	esac
	case $1 in
	r2c|bi) wait_until 5 queue_full "$NTPX_NS_REF" slow || diag "ref->client queue did not fill" ;;
	esac
	case $1 in
	fast) wait_until 5 sh -c "tc -s -n $NTPX_NS_CLIENT link show dev fast >/dev/null" ;;
	esac
}
unload() {
	for p in $load_pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	load_pids=
}

# measure NAME LOAD POLL ADDR: sets NAME_d and NAME_o (median delay and
# off2, ns).
measure() {
	load "$2"
	$NTPX_CLIENT_EXEC ntpprobe -i 10ms -c 150 -w 200ms --poll "$3" \
		"udp://$4:$port" >"$TMP/$1.rec" 2>/dev/null
	unload
	eval "$1_d=$(median "$TMP/$1.rec" delay) $1_o=$(median "$TMP/$1.rec" off2)"
	eval "diag \"$1: median delay \$$1_d ns, off2 \$$1_o ns, $(grep -Ec ' ok( |$)' "$TMP/$1.rec") ok\""
}

# half_of SHIFT2 RISE SIGN: the offset shift (off2 shift / 2) is SIGN
# times half the delay rise, within 25%, and the rise is at least half
# the configured queue (the load did build the queue).
half_of() {
	awk -v s="$1" -v r="$2" -v sg="$3" -v q="$NTPX_SLOW_QUEUE_NS" 'BEGIN {
		want = sg * r / 2; got = s / 2
		if (r < q / 2) exit 1
		d = got - want; if (d < 0) d = -d
		exit !(d <= 0.25 * r / 2) }'
}
# small A B: |A| < 25% of |B|
small() { awk -v a="$1" -v b="$2" 'BEGIN { if (a < 0) a = -a; if (b < 0) b = -b; exit !(a < 0.25 * b) }'; }

for poll in block busy; do
	measure base none $poll "$NTPX_REF_SLOW"
	measure c2r c2r $poll "$NTPX_REF_SLOW"
	measure r2c r2c $poll "$NTPX_REF_SLOW"
	ok "$poll: client->ref load: offset +half the delay rise" \
		half_of $((c2r_o - base_o)) $((c2r_d - base_d)) 1
	ok "$poll: ref->client load: offset -half the delay rise" \
		half_of $((r2c_o - base_o)) $((r2c_d - base_d)) -1
	ok "$poll: the signs differ by direction" test $((c2r_o - base_o)) -gt 0 -a $((r2c_o - base_o)) -lt 0
	measure bi bi $poll "$NTPX_REF_SLOW"
	ok "$poll: load both ways: delay up more than either way alone" \
		test $((bi_d - base_d)) -gt $((c2r_d - base_d)) -a $((bi_d - base_d)) -gt $((r2c_d - base_d))
	ok "$poll: load both ways: offset shift small against client->ref" \
		small $((bi_o - base_o)) $((c2r_o - base_o))
	ok "$poll: load both ways: offset shift small against ref->client" \
		small $((bi_o - base_o)) $((r2c_o - base_o))
	# The fast path is the control for where the load goes, not for
	# how the probe waits: once is enough.
	if [ $poll = block ]; then
		measure fbase none $poll "$NTPX_REF_FAST"
		measure fc2r fast $poll "$NTPX_REF_FAST"
		ok "$poll: fast under the same load: offset shift small against slow" \
			small $((fc2r_o - fbase_o)) $((c2r_o - base_o))
		ok "$poll: fast under the same load: delay rise small against slow" \
			small $((fc2r_d - fbase_d)) $((c2r_d - base_d))
	fi
	ok "$poll: every case got most of its replies" \
		test "$(cat "$TMP"/*.rec | grep -Ec ' ok( |$)')" -ge "$(( $(ls "$TMP"/*.rec | wc -l) * 100 ))"
	rm -f "$TMP"/*.rec
done
done_testing
