#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect claims no more than its host's clock is (issue 33, 8): by
# default it answers as the kernel says the clock is synchronised, read
# with adjtimex and modes 0 (read only: strace shows every call), leap 3
# and stratum 16 while it is not, as chronyd and ntpd answer then;
# --stratum N and --refid state a local reference on purpose, as
# chrony's local stratum; on a terminal one line at startup says what is
# served.  The real kernel's state is read here too, and what ntpreflect
# answers held to it; the states a test cannot make without changing the
# clock come from tests/helpers/fakesync.so, a mock of adjtimex's answer.
. "$(dirname "$0")/../lib.sh"
need_prereq BUILT HELPERS
test_lazy_prereq STRACE 'command -v strace && strace -qq -o /dev/null true'
PTY=$NTPX_HELPERS/ptyrun
SHIM=$NTPX_HELPERS/fakesync.so

# reflect NAME OPTION...: ntpreflect under the shim (its state in
# $TMP/NAME.state), on a free port: PORT_NAME, PID_NAME.
# (verify_asan_link_order=0: a SAN=1 build takes the preload too.)
reflect() {
	_n=$1 && shift &&
	_p=$(free_udp_port) &&
	eval "PORT_$_n=\$_p" &&
	spawn "PID_$_n" env LD_PRELOAD="$SHIM" FAKESYNC_FILE="$TMP/$_n.state" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		"$NTPX_BIN/ntpreflect" "$@" "udp://127.0.0.1:$_p" 2>>"$TMP/$_n.err" &&
	wait_until 5 udp_listening "$_p"
}
# said PORT: "status stratum refid leap" of one exchange with PORT.
said() {
	ntpprobe --human -c 1 -w 5s "127.0.0.1:$1" 2>/dev/null >"$TMP/said" ||
	[ $? = 1 ]
	sed -n "s/^seq=1 .* stratum=\([0-9]*\) refid=\([^ ]*\) leap=\([0-9]\) \([a-z]*\)$/\4 \1 \2 \3/p" "$TMP/said"
}
root_disp() { sed -n "s/^server .* root dispersion \([0-9.]*\) us$/\1/p" "$TMP/said"; }

test_expect_success 'setup: the states' '
	echo unsynced >"$TMP/u.state" &&
	echo "synced 2500" >"$TMP/s.state" &&
	echo insert >"$TMP/i.state" &&
	echo unsynced >"$TMP/l.state" &&
	echo unsynced >"$TMP/g.state" &&
	echo unsynced >"$TMP/c.state"
'

test_expect_success 'unsynchronised: leap 3, stratum 16, and no ok exchange for a client' '
	reflect u &&
	test_is "$(said $PORT_u)" "unsynced 16 78.84.80.88 3" &&
	test_exit 1 ntpprobe -c 2 -i 10ms -w 5s "127.0.0.1:$PORT_u" >/dev/null 2>&1
'

test_expect_success 'synchronised: ok, stratum 2, leap 0, the kernel'\''s maximum error (to the NTP short format'\''s unit) as root dispersion' '
	reflect s &&
	test_is "$(said $PORT_s)" "ok 2 78.84.80.88 0" &&
	awk -v d="$(root_disp)" "BEGIN { exit !(d >= 2500 && d < 2500 + 1e6 / 65536) }"
'

test_expect_success 'a leap second the kernel will insert: leap 1' '
	reflect i &&
	test_is "$(said $PORT_i)" "ok 2 78.84.80.88 1"
'

test_expect_success '--stratum 1: a local reference on purpose, whatever the kernel says' '
	reflect l --stratum 1 &&
	test_is "$(said $PORT_l)" "ok 1 NTPX 0"
'

test_expect_success '--refid alone: a local reference at stratum 1' '
	reflect g --refid GPS &&
	test_is "$(said $PORT_g)" "ok 1 GPS 0"
'

test_expect_success 'the state is read again while it serves: synchronised a second later, ok' '
	reflect c &&
	test_is "$(said $PORT_c)" "unsynced 16 78.84.80.88 3" &&
	echo "synced 800" >"$TMP/c.state" &&
	wait_until 5 eval "test \"\$(said $PORT_c)\" = \"ok 2 78.84.80.88 0\""
'

test_expect_success 'it never asked the kernel for a change' '
	for n in u s i l g c; do
		test ! -e "$TMP/$n.state.changes" || return 1
	done
'

# The real kernel, read by tests/helpers/clockstate (adjtimex, modes 0):
# STA_UNSYNC (0x40) set or not, and ntpreflect answering accordingly.
test_expect_success 'the real kernel: ntpreflect answers as it says' '
	st=$("$NTPX_HELPERS/clockstate" | sed -n "s/^status=\([0-9]*\) .*/\1/p") &&
	test -n "$st" &&
	p=$(free_udp_port) &&
	spawn k ntpreflect "udp://127.0.0.1:$p" 2>/dev/null &&
	wait_until 5 udp_listening "$p" &&
	if [ $((st & 64)) != 0 ]; then want="unsynced 16 78.84.80.88 3"; else want="ok 2 78.84.80.88 [012]"; fi &&
	said "$p" | grep -x "$want"
'

# (detect_leaks=0: LeakSanitizer does not run under ptrace, in a SAN=1 build.)
test_expect_success STRACE 'adjtimex read only: every call with modes 0' '
	p=$(free_udp_port) &&
	spawn tr strace -f -qq -e trace=adjtimex,clock_adjtime -o "$TMP/trace" \
		-E ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$NTPX_BIN/ntpreflect" -c 1 "udp://127.0.0.1:$p" 2>/dev/null &&
	wait_until 5 udp_listening "$p" &&
	said "$p" >/dev/null &&
	wait "$tr" &&
	cat "$TMP/trace" >&4 &&
	n=$(grep -c "adjtime" "$TMP/trace") &&
	test "$n" -ge 1 &&
	test_is "$(grep -Ec "adjtimex?\((CLOCK_REALTIME, )?\{modes=0," "$TMP/trace")" "$n"
'

test_expect_success 'on a terminal: one line at startup, what it serves' '
	p=$(free_udp_port) &&
	spawn t "$PTY" ntpreflect --stratum 1 -c 1 "udp://127.0.0.1:$p" >"$TMP/tty" &&
	wait_until 5 udp_listening "$p" &&
	said "$p" >/dev/null &&
	wait "$t" &&
	cat "$TMP/tty" >&4 &&
	test_grep -x "ntpreflect: serving udp://127.0.0.1:$p, clock realtime (a local reference at stratum 1, refid NTPX, whatever the host.s clock), basic and interleaved modes, no NTS" "$TMP/tty" &&
	test_is "$(grep -c "serving" "$TMP/tty")" 1
'

test_expect_success '--quiet, or stderr not a terminal: no such line' '
	p=$(free_udp_port) &&
	spawn t "$PTY" ntpreflect --quiet -c 1 "udp://127.0.0.1:$p" >"$TMP/ttyq" &&
	wait_until 5 udp_listening "$p" &&
	said "$p" >/dev/null &&
	wait "$t" &&
	test_must_fail grep serving "$TMP/ttyq" &&
	test_must_fail grep serving "$TMP/u.err" "$TMP/l.err"
'

done_testing
