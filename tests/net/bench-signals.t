#!/bin/sh
# SPDX-License-Identifier: ISC
# A bench script stopped by a signal cleans up at once: its lab's
# namespaces removed, its processes ended (issue 38, 3).
# tests/bench/ntp-capacity.sh, stopped by timeout(1), left its two
# namespaces behind: the signal came to the shell while it waited for a
# climb's pipeline, a minute long, and the caller's KILL came first.
#
# Each script runs in a session of its own (setsid) with a climb of 40
# steps of 1 s at 1000 requests/s, every one clean, so that the climb
# alone lasts 40 s; the signal goes to the script's shell alone, as
# timeout --foreground sends it, once the climb has begun.  The script
# must end within half the climb's length (a script that waits for its
# climb does not); else it is killed, as timeout -k would.  Then no
# namespace named in its ledger (uniq_name) is left, and no process of
# its session, after the last step it had begun (1 s) has ended.
. "$(dirname "$0")/../lib.sh"
need_prereq LAB
need setsid env ethtool

steps=40
climb=$(awk -v n="$steps" 'BEGIN { for (i = 0; i < n; i++) printf "%s1k", i ? " " : "" }')
bound=$((steps / 2))

# run_until NAME COND SIG SCRIPT [VAR=VALUE...]: SCRIPT in a session
# of its own, its output in $TMP/NAME.out, its ledger $TMP/NAME.ledger;
# once COND (a command, evaluated) holds, SIG to its shell.  Fails when
# it never held, or the script did not end within $bound s.
run_until() {
	_n=$1 _pat=$2 _sig=$3 _scr=$4
	shift 4
	: >"$TMP/$_n.ledger"
	# Signals the background job ignores (INT) set back to default, so
	# that the script can trap them as it would at a terminal.
	env --default-signal=INT NTPX_LEDGER="$TMP/$_n.ledger" "$@" \
		setsid sh "$NTPX_TOP/tests/bench/$_scr" >"$TMP/$_n.out" 2>&1 &
	_pid=$!
	eval "${_n}_pid=$_pid"
	test_atexit "session_clean $_n"
	if ! wait_until 120 eval "$_pat"; then
		diag "$_scr: never $_pat"; tail -n 3 "$TMP/$_n.out" | sed 's/^/# /' >&4
		return 1
	fi
	kill -s "$_sig" "$_pid"
	_t0=$(date +%s)
	if ! wait_until "$bound" eval '! kill -0 '"$_pid"; then
		diag "$_scr still running $bound s after SIG$_sig: killed"
		kill -KILL "$_pid"
		wait "$_pid" 2>/dev/null
		return 1
	fi
	wait "$_pid" 2>/dev/null
	diag "$_scr ended $(($(date +%s) - _t0)) s after SIG$_sig"
}

# left NAME: namespaces of NAME's ledger still there, and processes of
# its session, after its last step (1 s) has had time to end.
ns_left() { ip netns list | awk '{ print $1 }' | grep -F -f "$TMP/$1.ledger"; }
procs_left() { eval "pgrep -s \$${1}_pid"; }
# What a script that failed left is removed all the same: its session's
# processes, by their PIDs, and its ledger's labs.
session_clean() {
	for _p in $(procs_left "$1"); do kill -KILL "$_p" 2>/dev/null; done
	for _l in $(ns_left "$1" | sed 's/^ntpx-[a-z]*-//' | sort -u); do
		"$NTPX_BIN/ntpx-lab" -n "$_l" down >/dev/null 2>&1 || :
	done
}
nothing_left() {
	test -s "$TMP/$1.ledger" || { diag "no names in the ledger"; return 1; }
	wait_until 5 eval '! procs_left '"$1"' >/dev/null' ||
		{ diag "processes left: $(procs_left "$1" | tr '\n' ' ')"; return 1; }
	_l=$(ns_left "$1")
	[ -z "$_l" ] || { diag "namespaces left: $_l"; return 1; }
}

test_expect_success 'ntp-capacity.sh, SIGTERM during a climb: ends at once' '
	run_until cap "grep -q \"round 1:\" \"\$TMP/cap.out\"" TERM ntp-capacity.sh BENCH_STEP=1s BENCH_RATES="$climb" \
		CAP_ROUNDS=1 CAP_SENDERS=1 CAP_OLD=0
'
test_expect_success 'ntp-capacity.sh: no namespace and no process left' '
	nothing_left cap
'

test_expect_success 'reflect-uudp.sh, SIGINT during a climb: ends at once' '
	run_until ru "grep -q \"capacity to 0.1% loss:\" \"\$TMP/ru.out\"" INT reflect-uudp.sh RU_STEP=1s RU_RATES=1k \
		RU_BLOCKS=1 RU_SENDERS=1 RU_CAP_RATES="$climb" RU_XLEAVE=0 RU_PROFILE=0
'
test_expect_success 'reflect-uudp.sh: no namespace and no process left' '
	nothing_left ru
'

# The other scripts that make a lab: stopped once their lab is up,
# alternately by TERM and INT.  Their longest foreground step is a few
# seconds; they must end within the same bound, leaving nothing.
lab_seen() { ns_left "$1" | grep -q .; }
sig=TERM
for scr in attack uudp calibrate quick; do
	test_expect_success "$scr.sh, SIG$sig once its lab is up: ends, nothing left" '
		run_until '"$scr"' "lab_seen '"$scr"'" '"$sig"' '"$scr"'.sh &&
		nothing_left '"$scr"'
	'
	[ "$sig" = TERM ] && sig=INT || sig=TERM
done

done_testing
