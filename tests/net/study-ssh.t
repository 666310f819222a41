#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-study on two hosts over ssh (tests/twohost.sh: two namespaces,
# each with an sshd of the test's own on a management link, the lab's
# slow path between them), with the documented prefix, without and with
# a pty (-tt): directional c2r and r2c and recovery server_restart, the
# runs that a prefix without a lifetime got wrong.  Each is held against
# a run of the same conditions through ntpx-lab exec on the same links:
# the directional runs load the queue in the direction they name (the
# loaded direction's leg carries the queue, the other not, as in the
# lab's run and in tests/net/bias.t), the server restart
# is a real one (the server's log has two lives, answering before and
# after).  Every server.rec is non-empty; nothing is left on either host
# after a study, after SIGINT and after the resume; the inventory has
# both hosts' OS and tool versions; a missing tool stops the study at
# once, naming the host, and a refused invocation leaves no directory.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/twohost.sh"

need_prereq LAB BUILT
need sha256sum
study=$NTPX_TOP/bin/ntpx-study
fams=directional,recovery
conds=c2r,r2c,server_restart

# DIR KEY RUN: KEY of DIR's run RUN (family-condition); a run without a
# summary (it failed) is one diag line, and nothing.
key() {
	set -- "$1" "$2" "$3" "$(ls -d "$1"/runs/*-"$3"-udp1-r1 2>/dev/null)"
	[ -f "$4/summary.txt" ] || { diag "$1: no summary.txt for $3"; return 1; }
	awk -v k="$2" '$1 == k { print $2 }' "$4/summary.txt"
}
nothing_left() { [ -z "$(twohost_left ref)$(twohost_left client)" ]; }
all_done() {	# DIR: every run of the order has its done file
	[ "$(find "$1/runs" -name "done" | wc -l)" = "$(grep -vc '^#' "$1/order.tsv")" ]
}
servers_logged() {	# DIR: every run's server.rec has records
	for r in "$1"/runs/*/; do
		[ "$(grep -vc '^#' "$r/server.rec" 2>/dev/null)" -gt 0 ] || { diag "empty: $r"; return 1; }
	done
}
# The server restarted for real: its log has two lives, and records
# before and after the restart event.
real_restart() {
	r=$(ls -d "$1"/runs/*-recovery-server_restart-udp1-r1)
	t=$(awk -F'\t' '$3 == "restart_server" { print $1 }' "$1/events.tsv")
	[ -n "$t" ] && [ "$(grep -c '^#ntpx-record' "$r/server.rec")" = 2 ] &&
	awk -v t="$t" "$ntpx_fields"'/^#fields/ { fields(); next }
		/^#/ { next } { if (field("t2") < t) a++; else b++ } END { exit !(a && b) }' "$r/server.rec"
}
# queue_on DIR COND: in DIR's directional COND run, the records between
# load_on and load_off against those before: the loaded direction's leg
# rose by at least half the queue's configured delay, the other by less
# (legs in tests/lib.sh, exact on one clock; a busy machine adds tens of
# microseconds to a leg, not 1 ms).
queue_on() {
	_r=$(ls -d "$1"/runs/*-directional-"$2"-udp1-r1)
	_i=${_r##*/}; _i=${_i%%-*}
	set -- "$1" "$2" $(awk -F'\t' -v i="$_i" '$2 == i && $3 == "load_on" { a = $1 } $2 == i && $3 == "load_off" { b = $1 }
		END { print a + 0, b + 0 }' "$1/events.tsv")
	awk -v on="$3" "$ntpx_fields"'/^#fields/ { fields() } /^#/ { print; next } field("t1") < on' \
		"$_r/probe.rec" >"$TMP/q.base"
	awk -v on="$3" -v off="$4" "$ntpx_fields"'/^#fields/ { fields() } /^#/ { print; next }
		field("t1") >= on && field("t1") < off' "$_r/probe.rec" >"$TMP/q.loaded"
	set -- "$2" $(legs "$TMP/q.base" "$TMP/q.loaded")
	_h=$((NTPX_SLOW_QUEUE_NS / 2))
	diag "$1: legs forward $2 ns, back $3 ns (half the queue $_h ns)"
	case $1 in
	c2r) [ "$2" -ge "$_h" ] && [ "${3#-}" -lt "$_h" ] ;;
	r2c) [ "$3" -ge "$_h" ] && [ "${2#-}" -lt "$_h" ] ;;
	esac
}
spread() { awk -v a="$(key "$1" offset_us directional-c2r)" -v b="$(key "$1" offset_us directional-r2c)" \
	'BEGIN { printf "%.1f\n", a - b }'; }

same_sign() { awk -v s="$1" -v l="$2" 'BEGIN { exit !(s * l > 0) }'; }
inventory_os() {
	awk '/^== /{ s = $2 } /Debian|GNU|Linux [0-9]/ && !/^Linux / { n[s]++ } END { exit !(n["ref"] && n["client"]) }' "$1"
}
tools_ran() { grep -c '^ntpreflect: ntpreflect ' "$1"; }
loading() { grep -q 'load_on' "$d/events.tsv" 2>/dev/null; }
# The interrupted study has ended (exited, or a zombie not reaped yet).
study_ended() { case $(ps -o stat= -p "$ipid" 2>/dev/null) in ''|Z*) return 0 ;; esac; return 1; }
load_or_end() { loading || study_ended; }
no_load() { diag "no load; the study's stderr ends: $(tail -n 3 "$TMP/int.err" | tr '\n' '|')"; return 1; }
orphan_up() { ip netns exec "$NTPX_NS_REF" ss -Hlun 'sport = :12300' | grep -q .; }
sink_up() { ip netns exec "$NTPX_NS_CLIENT" ss -Hlun 'sport = :9000' | grep -q .; }
# The family alone, its server's port taken.
orphan_freerun() {
	ntpx-freerun -o "$TMP/orph" -t udp1 -d 1s -i 100ms --ref "$NTPX_REF_SLOW" --client "$NTPX_CLIENT_SLOW" \
		--ref-dev slow --client-dev slow > /dev/null 2> "$TMP/orph.err"
}
# NAME: a recovery server_restart study into $TMP/NAME, stderr in NAME.err.
restart_study() {
	"$study" --quick -f recovery --conditions server_restart -T "$def" --no-analysis "$TMP/$1" > /dev/null 2> "$TMP/$1.err"
}
# DIR: the study of the conditions with the prefixes exported; on a
# failure, the end of its stderr (DIR.err) is shown.  The seconds it took
# are added to ssh_took.
ssh_took=0
ssh_study() {
	_t0=$(date +%s)
	"$study" --quick --seed 7 -f "$fams" --conditions "$conds" -T "$def" --no-analysis "$1" \
		>/dev/null 2>"$1.err" || { diag "$(tail -n 5 "$1.err")"; return 1; }
	ssh_took=$((ssh_took + $(date +%s) - _t0 + 1))
}
missing_study() {
	NTPX_REMOTE_BIN=$TMP/rbin "$study" --quick -f "$fams" -T "$def" --no-analysis "$TMP/missing" \
		> /dev/null 2> "$TMP/missing.err"
}

# A 200 Mbit/s shaper, which a busy 2-core machine can exceed: the
# --quick calibration finds it, and the directional load fills the queue
# whatever else runs.  The queue is 10 ms, 250 kB, as in tests/net/bias.t:
# it holds several of the load's 64 KiB GSO packets and stays nearly
# full, where the lab's 2 ms (its floor, 70,000 bytes, one such packet)
# was about half full on average, its leg's rise near the bound of half
# the queue (0.94 ms against 1 ms once, under two CPU hogs).
test_expect_success 'setup: two hosts over ssh, the slow path shaped at 200 Mbit/s with 10 ms of queue' '
	NTPX_LAB_RATE=200M NTPX_LAB_QUEUE=10ms twohost_up h &&
	unset NTPX_LAB &&
	def=udp1=$NTPX_REF_SLOW,$NTPX_CLIENT_SLOW,slow,slow
'

# The same conditions through ntpx-lab exec, on the same links.
test_expect_success 'the lab run of the conditions finishes' '
	NTPX_REF_EXEC="ntpx-lab -n $LAB exec ref" NTPX_CLIENT_EXEC="ntpx-lab -n $LAB exec client" \
		"$study" --quick --seed 7 -f "$fams" --conditions "$conds" -T "$def" --no-analysis "$TMP/lab" \
		>/dev/null 2>"$TMP/lab.err"
'
test_expect_success 'the lab run: each directional load queues its direction' '
	lab_spread=$(spread "$TMP/lab") &&
	diag "lab: spread $lab_spread us, gap $(key "$TMP/lab" gap_s recovery-server_restart) s" &&
	queue_on "$TMP/lab" c2r &&
	queue_on "$TMP/lab" r2c
'

# ssh without and with a pty, the documented prefix.
for pty in "" "-tt"
do
	how=${pty:-without a pty}
	test_expect_success "ssh $how: the study finishes" '
		d=$TMP/ssh$pty &&
		export NTPX_REF_EXEC="$TWOHOST_SSH $pty ref" NTPX_CLIENT_EXEC="$TWOHOST_SSH $pty client" &&
		ssh_study "$d"
	'
	test_expect_success "ssh $how: every run done" '
		all_done "$d"
	'
	test_expect_success "ssh $how: every server.rec has records" '
		servers_logged "$d"
	'
	test_expect_success "ssh $how: the directional spread has the lab's sign, and each run's load queues its direction" '
		s=$(spread "$d") &&
		diag "ssh $pty: spread $s us (lab $lab_spread us), gap $(key "$d" gap_s recovery-server_restart) s" &&
		same_sign "$s" "$lab_spread" &&
		queue_on "$d" c2r &&
		queue_on "$d" r2c
	'
	test_expect_success "ssh $how: the server restart is a real one" '
		real_restart "$d"
	'
	test_expect_success "ssh $how: nothing left on either host" '
		wait_until 10 nothing_left
	'
done

test_expect_success "the inventory has both hosts' OS" '
	inventory_os "$TMP/ssh/inventory/kernel.txt"
'
test_expect_success "tools.txt has both hosts' tool versions" '
	test_grep "^== ref host $TWOHOST_NAME_REF" "$TMP/ssh/inventory/tools.txt" &&
	test_grep "^== client host $TWOHOST_NAME_CLIENT" "$TMP/ssh/inventory/tools.txt" &&
	test "$(tools_ran "$TMP/ssh/inventory/tools.txt")" -ge 2
'

# SIGINT (a terminal's ^C: to the whole process group) in the middle of
# a run, then the resume.  The study in a process group of its own
# (setsid, which a background job of this shell, not a group leader,
# execs into), SIGINT not ignored (as a background job of a shell without
# job control would have it).
test_expect_success 'setup: a study over ssh, in a process group of its own' '
	export NTPX_REF_EXEC="$TWOHOST_SSH ref" NTPX_CLIENT_EXEC="$TWOHOST_SSH client" &&
	d=$TMP/int &&
	spawn ipid setsid env --default-signal=INT "$study" --quick --seed 9 -f "$fams" --conditions c2r,server_restart -T "$def" \
		--no-analysis "$d" >/dev/null 2>"$TMP/int.err" &&
	# (may find nothing: a later test interrupts the study)
	test_atexit "kill -TERM -$ipid 2>/dev/null || :"
'
# Before its load the study makes 36 connections over ssh, one after
# another (the tools, the inventory, the transport's check, the
# calibration, a server restart run and the directional run's start),
# each a login: 1 s at a load of 13, 8 s at 15 when the load is programs
# starting, as in make check.  No constant bounds that.  The two studies
# over ssh above did all of it and more, through the same sshds, minutes
# ago: the time they took together is the limit, which only a study that
# is stuck reaches.  A study that ends without a load fails at once;
# either way the end of what it said is shown.
test_expect_success 'the interrupted study gets to a loaded run' '
	diag "waiting at most $ssh_took s (the two studies over ssh took it)" &&
	{ wait_until "$ssh_took" load_or_end && loading || no_load; }
'
test_expect_success 'SIGINT ends the study with 130' '
	kill -INT -"$ipid" &&
	test_exit 130 wait "$ipid"
'
test_expect_success 'after SIGINT: nothing left on either host' '
	wait_until 10 nothing_left
'
test_expect_success 'the resumed study finishes' '
	"$study" --no-analysis "$d" >/dev/null 2>"$TMP/resume.err"
'
test_expect_success 'after the resume: every run done, every server.rec has records' '
	test "$(find "$d/runs" -name "done" | wc -l)" = "$(grep -vc "^#" "$d/order.tsv")" &&
	for r in "$d"/runs/*/
	do
		test "$(grep -vc "^#" "$r/server.rec")" -gt 0 || return 1
	done
'
test_expect_success 'after the resume: nothing left on either host' '
	wait_until 10 nothing_left
'
test_expect_success 'the resumed package verifies' '
	"$study" --verify "$d" >/dev/null
'

# A server left on the reference by someone else, answering on the run's
# port: a family's run fails (its own server could not bind, or logged
# nothing), and the study does not start a run on a taken port.
test_expect_success "setup: someone else's server on the reference, on the run's port" '
	spawn orphan ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 "udp://$NTPX_REF_SLOW:12300" 2>/dev/null &&
	wait_until 10 orphan_up
'
test_expect_success "another server on the port: the family's run fails, no done" '
	test_must_fail orphan_freerun &&
	test ! -e "$TMP/orph/done" &&
	grep -Eq "ntpreflect on .* ended with status|server.rec is empty" "$TMP/orph.err"
'
test_expect_success 'another server on the port: the transport is absent, the reason given' '
	test_when_finished stop_pid "$orphan" &&
	test_exit 1 restart_study orphst &&
	grep -q "^udp1	absent	.*ntpreflect on .* ended with status 1: .*12300" "$TMP/orphst/transports.tsv"
'
# A sink left on the client on the load port: the run is not started.
test_expect_success "setup: someone else's sink on the client, on the load port" '
	spawn sink ip netns exec "$NTPX_NS_CLIENT" loadgen --sink -d 0 udp://0.0.0.0:9000 >/dev/null 2>&1 &&
	wait_until 10 sink_up
'
test_expect_success "a port of the run's taken: the run fails before it starts, the host and port named" '
	test_when_finished stop_pid "$sink" &&
	test_exit 1 restart_study orphst2 &&
	! ls "$TMP"/orphst2/runs/*/done >/dev/null 2>&1 &&
	grep -q "client host: the run.s ports are taken: .*:9000" "$TMP/orphst2.err"
'

# A tool missing on the reference: at once, one line naming the host, the
# tool and the PATH; nothing made.
test_expect_success 'setup: a copy of the tools without ntpreflect' '
	mkdir "$TMP/rbin" &&
	for f in "$NTPX_BIN"/*
	do
		{ [ "${f##*/}" = ntpreflect ] || cp -p "$f" "$TMP/rbin/"; } || return 1
	done
'
test_expect_success 'a missing tool: exit 1' '
	t0=$(date +%s) &&
	test_exit 1 missing_study
'
test_expect_success 'a missing tool: named with the host and the PATH, within 10 s' '
	test $(($(date +%s) - t0)) -le 10 &&
	test_grep "^ntpx-study: ref host $TWOHOST_NAME_REF: ntpreflect not found (PATH=$TMP/rbin:" "$TMP/missing.err"
'
test_expect_success 'a missing tool: no directory left behind' '
	test ! -e "$TMP/missing"
'
test_expect_success 'a refused invocation leaves no directory' '
	test_must_fail "$study" --reps x -T "$def" "$TMP/refused" 2>/dev/null &&
	test ! -e "$TMP/refused"
'
done_testing
