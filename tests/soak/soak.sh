# SPDX-License-Identifier: ISC
# tests/soak/soak.sh - the soak (make soak, not in check): one transport
# (SOAK_TRANSPORT: udp or uudp) in a lab of its own for SOAK_DURATION
# seconds (600) at 1 kHz, with 1% loss each way (lossinject), the server
# restarted every SOAK_RESTART seconds (60) and the client's link down for
# SOAK_OUTAGE seconds (2) every SOAK_FLAP seconds (120).  Sourced by
# udp.t and uudp.t after tests/lib.sh and tests/net/uudp-lib.sh.
#
# Running all along: ntpprobe | ntpfilter (the 1 kHz probe), a second,
# steady ntpreflect and loadgen --ntp at 1k/s against it.  Checked:
#   - every exchange accounted for: ok + timeout + dropped + refused =
#     exchanges, but for the requests that could not be sent while the
#     link was down or the server was being found again (error, and only
#     then) and the late replies of a restarted server's past that make an
#     exchange bogus; every sequence number once; the probe's own count
#     agrees;
#   - no tool grows: file descriptors the same and RSS within 1 MiB
#     between SOAK_RESTART seconds in and the end, for ntpprobe,
#     ntpreflect, loadgen and ntpfilter;
#   - after every restart and every flap, ok records again (rediscovery),
#     and over uudp one #reset per outage the probe noticed at most;
#   - the figures are printed (diag).

T=${SOAK_TRANSPORT:?}
DUR=${SOAK_DURATION:-600}
RESTART=${SOAK_RESTART:-60}
FLAP=${SOAK_FLAP:-120}
OUTAGE=${SOAK_OUTAGE:-2}
need_prereq LAB
need ntpprobe ntpreflect ntpfilter loadgen lossinject

port=12300
sport=12301
restarts=0
events=
first=

# The endpoints of transport $T: url for the probe, rurl for the server.
soak_urls() {
	case $T in
	udp) url="udp://$IPB:$port" rurl="udp://$IPB:$port" ;;
	uudp) url="uudp://$IPB:$port?dev=$IFA" rurl="uudp://$IPB:$port?dev=$IFB" ;;
	*) diag "SOAK_TRANSPORT '$T': udp or uudp"; return 1 ;;
	esac
}
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null; }
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
# RSS of ntpprobe, ntpfilter, loadgen, the steady ntpreflect; then their
# file descriptors.
figures() {
	echo "$(rss_kb "$P") $(rss_kb "$F") $(rss_kb "$L") $(rss_kb "$S") $(nfds "$P") $(nfds "$F") $(nfds "$L") $(nfds "$S")"
}
start_server() {
	restarts=$((restarts + 1))
	spawn R ip netns exec "$UB" lossinject --drop 0.01 --seed "$restarts" -- \
		ntpreflect --stratum 1 "$rurl" 2>>"$TMP/r.err"
	wait_until 10 udp_listening_in "$UB" "$port"
}
# The schedule: restarts and flaps at their times, the first figures
# after the first restart period, the last at the end.  Events: "NS:what:NS"
# (realtime ns of the disruption's start and end); none in the last 10 s,
# which could not show the recovery.
soak_schedule() {
	next_r=$((t0 + RESTART))
	next_f=$((t0 + FLAP))
	end=$((t0 + DUR))
	while :; do
		now=$(date +%s)
		[ "$now" -ge "$end" ] && break
		if [ -z "$first" ] && [ "$now" -ge $((t0 + RESTART)) ]; then
			first=$(figures)
		fi
		if [ "$now" -ge "$next_r" ] && [ $((now + 10)) -lt "$end" ]; then
			a=$(date +%s%N)
			kill "$R"; wait "$R" 2>/dev/null
			start_server || { diag "$T: the server did not come back"; return 1; }
			events="$events $a:restart:$(date +%s%N)"
			next_r=$((next_r + RESTART))
		fi
		if [ "$now" -ge "$next_f" ] && [ $((now + 10 + OUTAGE)) -lt "$end" ]; then
			a=$(date +%s%N)
			ip -n "$UA" link set dev "$IFA" down || return 1
			sleep "$OUTAGE"	# the outage itself, not a wait for anything
			ip -n "$UA" link set dev "$IFA" up || return 1
			events="$events $a:flap:$(date +%s%N)"
			next_f=$((next_f + FLAP))
		fi
		sleep 1
	done
	last=$(figures)
}
# "s:what ..." of the events, seconds from the start.
events_summary() {
	for e in $events; do
		a=${e%%:*} w=${e#*:}
		printf '%s:%s ' $(((a / 1000000000) - t0)) "${w%%:*}"
	done
}
# An error is a request that could not be sent.  Each run of exchanges
# that are not ok, between two ok ones (whose T1 are real; an error's may
# be 0 or missing), may hold errors only if it overlaps a disruption (the
# link down, the server away) or ends in a rediscovery (#reset: uudp
# resolves the server's MAC afresh after a run of misses, which loss and
# late replies also make, and sends fail meanwhile).  Prints the errors
# elsewhere; the first ok after each disruption, in ms, on stderr.
errors_outside() {	# FILE
	spans=$(for e in $events; do echo "${e%%:*}:${e##*:}"; done)
	awk -v d="$(echo $spans)" "$ntpx_fields"'
	BEGIN { n = split(d, w, " "); for (i = 1; i <= n; i++) { split(w[i], ab, ":"); lo[i] = ab[1]; hi[i] = ab[2] } }
	/^#fields/ { fields(); next }
	/^#reset/ { found = 1; next }
	/^#/ { next }
	field("status") != "ok" { if (field("status") == "error") errs++; next }
	{
		t = field("t1") + 0
		for (i = 1; i <= n; i++) if (t > hi[i] && !(i in rec)) { rec[i] = t; printf "%.0f ms ", (t - hi[i]) / 1e6 > "/dev/stderr" }
		if (errs) {
			inside = 0
			for (i = 1; i <= n; i++) if (start <= hi[i] && t >= lo[i]) inside = 1
			if (!inside && !found) out += errs
		}
		errs = 0; found = 0; start = t
	}
	END { print out + errs }' "$1"
}
# The sequence numbers of the records of FILE, in their order.
seqs() { awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next } { print field("seq") }' "$1"; }
within() { [ -n "$1" ] && [ -n "$2" ] && [ $(($2 - $1)) -lt 1024 ] && [ $(($1 - $2)) -lt 1024 ]; }
others() { within "$r1f" "$r2f" && within "$r1l" "$r2l" && within "$r1s" "$r2s"; }
# Rediscovery: within 5 s of the end of every restart and flap, ok
# records again (records carry T1, realtime ns, as the events do).
# Prints how many events had none.
no_recovery() {
	bad=0
	for e in $events; do
		b=${e##*:}
		got=$(awk -v b="$b" "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
			field("status") == "ok" && field("t1") + 0 > b && field("t1") + 0 <= b + 5e9 { n++ }
			END { print n + 0 }' "$TMP/rec")
		[ "$got" -gt 0 ] || { bad=$((bad + 1)); diag "$T: no ok record within 5 s of $e"; }
	done
	echo "$bad"
}
# The last check depends on the transport: uudp finds the server again
# (#reset), kernel UDP never needs to.
resets_test() {
	if [ "$T" = uudp ]; then
		test_expect_success "$T: the transport found the server again after outages" '
			resets=$(grep -c "^#reset" "$TMP/rec"; :) &&
			diag "$T: #reset lines: $resets" &&
			test "$resets" -ge 1
		'
	else
		test_expect_success "$T: kernel UDP needs no rediscovery" '
			resets=$(grep -c "^#reset" "$TMP/rec"; :) &&
			diag "$T: #reset lines: $resets" &&
			test "$resets" = 0
		'
	fi
}

test_expect_success 'setup: a lab of our own, its fast path between two namespaces' '
	uudp_lab
'

test_expect_success "setup: the endpoints over $T" '
	soak_urls
'

test_expect_success 'setup: a steady ntpreflect, and loadgen --ntp at 1k/s against it' '
	spawn S ip netns exec "$UB" ntpreflect --stratum 1 "udp://$IPB:$sport" 2>"$TMP/s.err" &&
	wait_until 5 udp_listening_in "$UB" "$sport" &&
	spawn L ip netns exec "$UA" loadgen --ntp 1k -d 0 "udp://$IPB:$sport" >"$TMP/l.out" 2>"$TMP/l.err"
'

test_expect_success 'setup: the server to restart, with 1% loss (lossinject)' '
	start_server
'

# The probe through ntpfilter, by a fifo so that both PIDs are known.
# (The opens happen in the children: a fifo's open waits for the other
# end, and the shell must not.)
test_expect_success 'setup: the 1 kHz probe, with 1% loss, through ntpfilter' '
	mkfifo "$TMP/pipe" &&
	spawn F sh -c "exec ntpfilter <\"\$1\" >\"\$2\"" sh "$TMP/pipe" "$TMP/rec" &&
	spawn P sh -c "exec ip netns exec \"\$1\" lossinject --drop 0.01 --seed 7 -- \
		ntpprobe -i 1ms \"\$2\" >\"\$3\" 2>\"\$4\"" sh "$UA" "$url" "$TMP/pipe" "$TMP/p.err" &&
	t0=$(date +%s)
'

test_expect_success "setup: $DUR s, the server restarted every $RESTART s, the client's link down for $OUTAGE s every $FLAP s" '
	soak_schedule
'

test_expect_success "$T: ntpprobe ran $DUR s and exited 0" '
	kill "$P" &&
	wait "$P"
'

test_expect_success 'setup: everything stopped, the records complete; the figures' '
	wait "$F" &&
	stop_pid "$L" &&
	stop_pid "$R" &&
	stop_pid "$S" &&
	diag "$T: events (s:what): $(events_summary)" &&
	diag "$T: probe: $(head -n 1 "$TMP/p.err")" &&
	diag "$T: loadgen: $(tail -n 1 "$TMP/l.err")" &&
	set -- $first &&
	r1p=$1 r1f=$2 r1l=$3 r1s=$4 f1p=$5 f1f=$6 f1l=$7 f1s=$8 &&
	set -- $last &&
	r2p=$1 r2f=$2 r2l=$3 r2s=$4 f2p=$5 f2f=$6 f2l=$7 f2s=$8 &&
	diag "$T: RSS KiB at ${RESTART}s / end: ntpprobe $r1p/$r2p ntpfilter $r1f/$r2f loadgen $r1l/$r2l ntpreflect $r1s/$r2s" &&
	diag "$T: fds at ${RESTART}s / end: ntpprobe $f1p/$f2p ntpfilter $f1f/$f2f loadgen $f1l/$f2l ntpreflect $f1s/$f2s"
'

# Accounting, from the records.
test_expect_success 'setup: the records counted by status' '
	n=$(data_lines "$TMP/rec" | grep -vc "^#") &&
	okn=$(count_status "$TMP/rec" ok) &&
	to=$(count_status "$TMP/rec" timeout) &&
	dr=$(count_status "$TMP/rec" dropped) &&
	rf=$(count_status "$TMP/rec" refused) &&
	er=$(count_status "$TMP/rec" error) &&
	bo=$(count_status "$TMP/rec" bogus) &&
	diag "$T: exchanges $n: ok $okn timeout $to dropped $dr refused $rf error $er bogus $bo"
'

test_expect_success "$T: ok + timeout + dropped + refused (+ error in disruptions, + bogus) = exchanges" '
	outside=$(errors_outside "$TMP/rec" 2>"$TMP/recovery") &&
	diag "$T: first ok after each restart and flap ended: $(cat "$TMP/recovery")" &&
	test_is "$okn + $to + $dr + $rf + $er + $bo = $((okn + to + dr + rf + er + bo)), errors elsewhere $outside" \
		"$okn + $to + $dr + $rf + $er + $bo = $n, errors elsewhere 0"
'

test_expect_success "$T: every sequence number once" '
	test_is "$(seqs "$TMP/rec" | sort -n | uniq | wc -l)" "$n"
'

test_expect_success "$T: and none missing" '
	test_is "$(seqs "$TMP/rec" | tail -n 1)" "$n"
'

test_expect_success "$T: the probe's own count: sent + dropped + error = exchanges" '
	psent=$(sed -n "s/.*sent \([0-9]*\),.*/\1/p" "$TMP/p.err") &&
	test_is "$((psent + dr + er))" "$n"
'

test_expect_success "$T: about 1 kHz" '
	diag "$n exchanges in $DUR s" &&
	test "$n" -ge $((DUR * 900))
'

# Loss: 1% each way, so about 2% of the exchanges, besides the outages.
test_expect_success "$T: dropped near 1%" '
	diag "dropped $dr" &&
	test "$dr" -ge $((n / 200)) -a "$dr" -le $((n / 50))
'

# Growth.
test_expect_success "$T: RSS within 1 MiB for ntpprobe" '
	diag "$r1p -> $r2p KiB" &&
	within "$r1p" "$r2p"
'

test_expect_success "$T: and for ntpfilter, loadgen, ntpreflect" '
	diag "ntpfilter $r1f -> $r2f, loadgen $r1l -> $r2l, ntpreflect $r1s -> $r2s KiB" &&
	others
'

test_expect_success "$T: file descriptors unchanged" '
	test_is "$f1p $f1f $f1l $f1s" "$f2p $f2f $f2l $f2s"
'

test_expect_success "$T: ok records again after every restart and flap" '
	diag "$(echo $events | wc -w) events" &&
	test_is "$(no_recovery)" 0
'

resets_test
done_testing
