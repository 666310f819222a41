#!/bin/sh
# SPDX-License-Identifier: ISC
# Per-layer stamps in the lab (two namespaces, veth): every stamp of an
# exchange in order on both paths, in basic and interleaved mode; and a
# queue is found in its stage: with the reference->client direction of
# the slow path loaded beyond its rate, the queue builds in the
# reference's egress shaper, between the reply entering the qdisc (t3q)
# and leaving it for the driver (t3k), and nowhere else.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/stamps.sh"
need_prereq LAB

port=12300
xport=12301
listening() { $X ref ss -Hlun "sport = :$port" | grep -c . | grep -qx 2; }
sinking() { $X client ss -Hlun "sport = :9001" | grep -q . && $X ref ss -Hlun "sport = :$port" | grep -q .; }
backlog() { tc -s -n "$NTPX_NS_REF" qdisc show dev slow | awk '$1 == "backlog" { sub(/b$/, "", $2); if ($2 + 0 > 0) f = 1 } END { exit !f }'; }
med() { awk -v s="$2" '$1 == s { print $4 * 1000; exit }' "$1"; }
up() { awk -v a="$(med "$TMP/load.st" "$1")" -v b="$(med "$TMP/idle.st" "$1")" 'BEGIN { printf "%.0f", a - b }'; }
# The added delay: the user layer's median delay, loaded minus idle.
lay() { awk -v s="$2" '$1 == s { print $4 * 1000; exit }' "$1"; }
added_delay() { awk -v a="$(lay "$TMP/load.st" user)" -v b="$(lay "$TMP/idle.st" user)" 'BEGIN { printf "%.0f", a - b }'; }
xdp_up() { $X client ntpprobe -c 1 -w 200ms "uudp://$NTPX_REF_FAST:$xport?dev=fast" 2>/dev/null | grep -Eq ' ok( |$)'; }
# "ok-records without-t2k-or-t4k out-of-order" of a uudp run.
xdp_order() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
	field("status") == "ok" { n++
		if (field("t2k") == "-" || field("t4k") == "-") { m++; next }
		if (!(field("t1") "" < field("t2k") "" && field("t2k") "" <= field("t2") "" &&
		      field("t3") "" < field("t4k") "" && field("t4k") "" <= field("t4") "")) b++ }
	END { print n + 0, m + 0, b + 0 }' "$1"
}

test_expect_success 'setup: a lab of our own, its slow path at 200 Mbit/s' '
	lab_up stp -r 200M &&
	X="$NTPX_BIN/ntpx-lab -n $LAB exec"
'

test_expect_success 'setup: ntpreflect on the slow path (logging its stamps) and on the fast path' '
	spawn RPID $X ref ntpreflect --stratum 1 --log "$TMP/slow.log" "udp://$NTPX_REF_SLOW:$port" 2>"$TMP/r1.err" &&
	spawn FPID $X ref ntpreflect --stratum 1 "udp://$NTPX_REF_FAST:$port" 2>"$TMP/r2.err" &&
	wait_until 5 listening
'

test_expect_success 'fast path, interleaved: every stamp in order' '
	$X client ntpprobe -i 10ms -c 100 --xleave "udp://$NTPX_REF_FAST:$port" >"$TMP/fast.rec" 2>/dev/null &&
	set -- $(stamp_order "$TMP/fast.rec") &&
	diag "$2 of $1 not, $3 lacking one" &&
	test "$1" -ge 90 -a "$2" = 0 -a "$3" = 0
'

test_expect_success 'setup: the slow path, basic and interleaved; the slow server stopped, its log complete' '
	$X client ntpprobe -i 10ms -c 100 "udp://$NTPX_REF_SLOW:$port" >"$TMP/slow.rec" 2>/dev/null &&
	$X client ntpprobe -i 20ms -c 100 --xleave "udp://$NTPX_REF_SLOW:$port" >"$TMP/idle.rec" 2>/dev/null &&
	stop_pid "$RPID"
'

test_expect_success "slow path, basic, the server's stamps from its log: every stamp in order" '
	set -- $(stamp_order "$TMP/slow.rec" "$TMP/slow.log") &&
	diag "$2 of $1 not, $3 lacking one" &&
	test "$1" -ge 90 -a "$2" = 0 -a "$3" = 0
'

test_expect_success 'slow path, interleaved: every stamp in order' '
	set -- $(stamp_order "$TMP/idle.rec") &&
	diag "$2 of $1 not, $3 lacking one" &&
	test "$1" -ge 90 -a "$2" = 0 -a "$3" = 0
'

# Load the slow path from the reference to the client at 130% of its rate.
test_expect_success 'setup: the slow path from the reference to the client loaded at 130% of its rate' '
	spawn RPID $X ref ntpreflect --stratum 1 "udp://$NTPX_REF_SLOW:$port" 2>"$TMP/r3.err" &&
	spawn SINK $X client loadgen --sink -d 0 "udp://$NTPX_CLIENT_SLOW:9001" >/dev/null 2>&1 &&
	wait_until 5 sinking &&
	rate=$((NTPX_SLOW_RATE * 13 / 10)) &&
	spawn LOAD $X ref loadgen -r "$rate" -d 0 "udp://$NTPX_CLIENT_SLOW:9001" >/dev/null 2>&1
'

test_expect_success "the reference's slow egress queue fills under load" '
	wait_until 10 backlog
'

test_expect_success 'setup: 100 interleaved exchanges under load, the load stopped; ntpstages of the idle and the loaded run' '
	$X client ntpprobe -i 20ms -c 100 --xleave "udp://$NTPX_REF_SLOW:$port" >"$TMP/load.rec" 2>/dev/null &&
	kill "$LOAD" &&
	ntpstages --same-clock "$TMP/idle.rec" >"$TMP/idle.st" &&
	ntpstages --same-clock "$TMP/load.rec" >"$TMP/load.st" &&
	diag "idle:" && sed "s/^/#   /" "$TMP/idle.st" >&2 &&
	diag "loaded:" && sed "s/^/#   /" "$TMP/load.st" >&2 &&
	added=$(added_delay) &&
	q=$(up s_qdisc) &&
	diag "added delay $added ns, in s_qdisc $q ns"
'

test_expect_success 'the load added delay' '
	diag "median $added ns" &&
	test "$added" -gt 100000
'

test_expect_success "at least 80% of it is in the server's qdisc stage t3q -> t3k" '
	diag "$q ns" &&
	test $((q * 10)) -ge $((added * 8))
'

for s in client_send c2r server_recv r2c client_recv; do
	test_expect_success "... and not in $s (under 10%)" '
		d=$(up $s) &&
		diag "$s: $d ns" &&
		test $((d * 10)) -lt "$added"
	'
done

# uudp over AF_XDP on the fast path (veth leaves UDP checksums to "the
# NIC": off, so that the kernel computes them; see tests/net/uudp-lib.sh).
test_expect_success XDP 'setup: a uudp ntpreflect on the fast path; 50 interleaved exchanges with it' '
	$X client ethtool -K fast tx off >/dev/null &&
	$X ref ethtool -K fast tx off >/dev/null &&
	spawn UPID ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 "uudp://$NTPX_REF_FAST:$xport?dev=fast" 2>"$TMP/u.err" &&
	wait_until 10 xdp_up &&
	$X client ntpprobe -i 10ms -c 50 --xleave "uudp://$NTPX_REF_FAST:$xport?dev=fast" >"$TMP/u.rec" 2>/dev/null
'

test_expect_success XDP "uudp: the XDP program is the receive stamps' source" '
	test_grep "^#stamps .*t4k=xdp:bpf_ktime_get_ns" "$TMP/u.rec"
'

test_expect_success XDP 'uudp: t2k and t4k on nearly every ok record' '
	set -- $(xdp_order "$TMP/u.rec") &&
	diag "$2 of $1 without" &&
	test "$1" -ge 45 -a "$2" -le $(($1 / 10))
'

test_expect_success XDP 'uudp: t1 < t2k <= t2 and t3 < t4k <= t4 on every one' '
	set -- $(xdp_order "$TMP/u.rec") &&
	test_is "$3" 0
'

# The uudp server's T2 is the frame's arrival (issue 38): the XDP
# program's stamp on the server's clock, t2k itself, where the reply was
# answered after the wait in the ring and the wake-up.  Truth is the
# host's clock, which both namespaces read: the request arrived after the
# client sent it (t1k, its kernel's stamp) and before the reply came
# back (t4).  With --no-stamps the program stamps nothing, and T2 is the
# moment the server saw the frame, as before: still within the truth.
# srv_t2 LOG: "REPLIES NOT-T2K" (t2 other than t2k in the log).
srv_t2() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { n++; if (field("t2") != field("t2k")) b++ }
		END { print n + 0, b + 0 }' "$1"
}
# in_truth REC: "OK-RECORDS OUTSIDE" where outside means t2 < t1k or
# t2 > t4 (in 64-bit shell arithmetic: awk's doubles are 256 ns coarse).
in_truth() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { print field("t1k"), field("t2"), field("t4") }' "$1" | {
		_n=0 _b=0
		while read -r _t1k _t2 _t4; do
			_n=$((_n + 1))
			if [ "$_t1k" = - ] || [ "$_t2" -lt "$_t1k" ] || [ "$_t2" -gt "$_t4" ]; then
				_b=$((_b + 1)); echo "outside: $_t1k $_t2 $_t4" >&2
			fi
		done
		echo "$_n $_b"
	}
}
test_expect_success 'setup: the uudp server logging; 50 basic exchanges of a kernel client with it' '
	stop_pid "$UPID" &&
	spawn UPID ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --log "$TMP/us.log" \
		"uudp://$NTPX_REF_FAST:$xport?dev=fast" 2>"$TMP/u.err" &&
	wait_until 10 xdp_up &&
	$X client ntpprobe -i 10ms -c 50 "udp://$NTPX_REF_FAST:$xport" >"$TMP/us.rec" 2>/dev/null &&
	stop_pid "$UPID"
'
test_expect_success "uudp server: T2 is the XDP program's arrival stamp, t2k, on every reply" '
	set -- $(srv_t2 "$TMP/us.log") &&
	diag "$2 of $1 not" &&
	test "$1" -ge 50 -a "$2" = 0
'
test_expect_success "uudp server: T2 between the client's t1k and t4 on every exchange" '
	set -- $(in_truth "$TMP/us.rec") &&
	diag "$2 of $1 outside" &&
	test "$1" -ge 45 -a "$2" = 0
'
test_expect_success 'setup: the same with --no-stamps' '
	spawn UPID ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --no-stamps \
		--log "$TMP/un.log" "uudp://$NTPX_REF_FAST:$xport?dev=fast" 2>"$TMP/u.err" &&
	wait_until 10 xdp_up &&
	$X client ntpprobe -i 10ms -c 50 "udp://$NTPX_REF_FAST:$xport" >"$TMP/un.rec" 2>/dev/null &&
	stop_pid "$UPID"
'
test_expect_success "--no-stamps: no t2k, T2 between the client's t1k and t4 all the same" '
	set -- $(srv_t2 "$TMP/un.log") &&
	test_is "$2" "$1" &&
	set -- $(in_truth "$TMP/un.rec") &&
	diag "$2 of $1 outside" &&
	test "$1" -ge 45 -a "$2" = 0
'
done_testing
