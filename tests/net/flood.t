#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect under a loadgen --ntp flood: it keeps answering, a probe is
# answered while the flood runs, its memory stays flat (resident size
# after a long flood no larger than after a short one, give or take a few
# pages), and every datagram is accounted for, exactly: what the
# reflector did not read the kernel dropped, and what it read it answered.
# On the loopback of a namespace of its own, so that the kernel's UDP
# counters (/proc/net/snmp) count this test's datagrams and no one
# else's.  The count is the server's and the kernel's, not the clients':
# a reply still queued in a client's socket when it closes is freed
# uncounted, and with every core busy the server's replies can run late.
# How fast a server answers is a capacity target, not a test:
# tests/bench/ntp-capacity.sh.
. "$(dirname "$0")/../lib.sh"

need_prereq BUILT
need_prereq ROOT
need ip ss

port=123
inns() { ip netns exec "$ns" "$@"; }
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$refl/status"; }
sf() {	# FILE KEY: the number after KEY in a summary line
	awk -v k="$2" '{ gsub(/,/, ""); for (i = 1; i < NF; i++) if ($i == k) v = $(i+1) } END { print v + 0 }' "$1"
}
# wait_rc PID: waits for PID, its exit status in rc.
wait_rc() { wait "$1"; rc=$?; }
# The interval lines (t requests replies) of FILE add up to the summary's
# $req requests, $rep replies, $lost lost.
intervals_add_up() {
	awk -v q="$req" -v r="$rep" -v l="$lost" '!/^#/ { a += $2; b += $3 }
		END { exit !(q > 0 && a == q && b == r && q - r == l) }' "$1"
}
# At least 4 intervals of FILE sent requests, and each got replies.
answered_throughout() {
	awk '!/^#/ && $2 > 0 { n++; if ($3 == 0) bad++ } END { exit !(n >= 4 && !bad) }' "$1"
}
test_expect_success 'setup: a network namespace of our own, its loopback up' '
	ns=$(uniq_name fl) &&
	ip netns add "$ns" &&
	test_atexit "ip netns del $ns" &&
	inns ip link set lo up
'

test_expect_success 'setup: ntpreflect in it' '
	spawn refl ip netns exec "$ns" ntpreflect --stratum 1 "udp://127.0.0.1:$port" 2>"$TMP/refl.err" &&
	wait_until 5 udp_listening "$port" "$ns" &&
	ep=udp://127.0.0.1:$port
'

# Warm up: every buffer and page the server will use gets touched.
test_expect_success 'setup: a warm-up flood' '
	inns loadgen --ntp 20k -d 1s "$ep" >/dev/null 2>"$TMP/warm.err" &&
	rss0=$(rss)
'

test_expect_success 'setup: a probe during a 4 s loadgen --ntp flood' '
	spawn fpid ip netns exec "$ns" loadgen --ntp 20k -d 4s "$ep" >"$TMP/flood.out" 2>"$TMP/flood.err" &&
	inns ntpprobe -i 20ms -c 100 -w 200ms "$ep" >"$TMP/probe.rec" 2>"$TMP/probe.err" &&
	wait_rc "$fpid" &&
	frc=$rc &&
	diag "$(cat "$TMP/flood.err")" &&
	diag "$(head -n 1 "$TMP/probe.err")" &&
	req=$(sf "$TMP/flood.err" requests) rep=$(sf "$TMP/flood.err" replies) lost=$(sf "$TMP/flood.err" lost) &&
	psent=$(sf "$TMP/probe.err" sent) pok=$(sf "$TMP/probe.err" ok) plost=$(sf "$TMP/probe.err" lost) &&
	plate=$(sf "$TMP/probe.err" late)
'

test_expect_success 'loadgen --ntp ran' '
	test_is "$frc" 0
'

# The interval lines (t requests replies) add up to the summary line.
test_expect_success 'loadgen'\''s interval lines add up to its summary' '
	diag "$req requests, $rep replies, $lost lost" &&
	intervals_add_up "$TMP/flood.out"
'

# Every interval that sent requests got replies: the server kept answering
# the whole time, it did not stop after a while.
test_expect_success 'ntpreflect answered in every interval of the flood' '
	answered_throughout "$TMP/flood.out"
'

# The server's response time (transmit less receive timestamp of each
# counted reply): on one clock never negative, the mean between the
# extremes, and no spread wider than half the range allows.
test_expect_success 'loadgen reports the server'\''s response time, consistently' '
	set -- $(sed -n "s/.* response_us min \([0-9.-]*\) mean \([0-9.-]*\) max \([0-9.-]*\) sd \([0-9.-]*\).*/\1 \2 \3 \4/p" "$TMP/flood.err") &&
	test $# = 4 &&
	awk -v lo="$1" -v m="$2" -v hi="$3" -v sd="$4" "BEGIN {
		exit !(lo >= 0 && lo <= m && m <= hi && sd >= 0 && sd <= (hi - lo) / 2 + 0.001) }"
'

test_expect_success 'the probe sent its 100 requests during the flood' '
	test_is "$psent" 100
'

test_expect_success 'the probe was answered during the flood' '
	diag "$pok of 100" &&
	test "$pok" -gt 0
'

# Exact accounting, over the namespace's whole life (warm-up, flood and
# probe): every datagram a socket in it read was one the reflector
# accounted for or a reply a client counted; of the requests sent, what
# the reflector did not read the kernel dropped; and it answered every
# request it read.  A server that read a request and did not answer it
# fails the last.
test_expect_success 'setup: the reflector, its socket drained, stops; the counts' '
	wait_until 5 drained "$ns" "$port" &&
	rss1=$(rss) &&
	stop_pid "$refl" &&
	eval "$(udp_mib "$ns")" &&
	reads=$(reflector_reads "$TMP/refl.err") &&
	answered=$(sf "$TMP/refl.err" answered) &&
	sent=$(($(sf "$TMP/warm.err" requests) + req + psent)) &&
	creads=$(($(sf "$TMP/warm.err" replies) + $(sf "$TMP/warm.err" dup) + $(sf "$TMP/warm.err" late) +
		rep + $(sf "$TMP/flood.err" dup) + $(sf "$TMP/flood.err" late) + psent - plost + plate)) &&
	diag "sent $sent requests; the reflector read $reads, answered $answered; clients read $creads replies;" \
		"the kernel: read $in, not delivered $inerr, to no port $noports"
'

test_expect_success 'every datagram read was one the reflector or a client counted' '
	test "$in" -eq $((reads + creads))
'

test_expect_success 'every request the reflector did not read, the kernel dropped' '
	test "$reads" -le "$sent" &&
	test $((sent - reads)) -le "$inerr"
'

test_expect_success 'the reflector answered every request it read' '
	test "$answered" -eq "$reads"
'

test_expect_success 'ntpreflect memory flat (grew < 64 kB), and it stopped cleanly' '
	diag "ntpreflect VmRSS ${rss0} kB after warm-up, ${rss1} kB after the flood" &&
	test $((rss1 - rss0)) -lt 64
'
done_testing
