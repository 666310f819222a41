#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpprobe -1 (--once): one exchange, one line, as sntp and ntpdig give
# it: the offset +/- its error bound, half the delay plus the server's
# root distance (RFC 5905: root delay / 2 + root dispersion), whatever
# stdout is; the exit status as for any run.
. "$(dirname "$0")/../lib.sh"
need_prereq BUILT HELPERS
PTY=$NTPX_HELPERS/ptyrun
# The line's numbers: "offset bound delay".
nums() { sed -n "s/^udp:[^ ]* offset \([-+0-9.]*\) us +\/- \([0-9.]*\) us, delay \([0-9.]*\) us, .*/\1 \2 \3/p" "$1"; }

test_expect_success 'setup: a reflector that logs what it answers, a closed port' '
	start_reflector -l "$TMP/srv.log" &&
	closed=$(free_udp_port)
'

test_expect_success '-1: one line on stdout, nothing on stderr, exit 0' '
	ntpprobe -1 "127.0.0.1:$REFLECT_PORT" >"$TMP/one" 2>"$TMP/one.err" &&
	cat "$TMP/one" >&4 &&
	test_is "$(wc -l <"$TMP/one")" 1 &&
	test_grep -E "^udp://127\.0\.0\.1:$REFLECT_PORT offset [-+][0-9]+\.[0-9]{3} us \+/- [0-9]+\.[0-9]{3} us, delay [0-9]+\.[0-9]{3} us, stratum 1, refid NTPX, leap 0$" "$TMP/one" &&
	test_is "$(wc -c <"$TMP/one.err")" 0
'

# The bound recomputed: the delay on the line, the root delay and
# dispersion that the same server puts in the summary of a run of records.
test_expect_success 'the bound is half the delay plus the root distance' '
	ntpprobe -c 1 -w 5s "127.0.0.1:$REFLECT_PORT" 2>"$TMP/rec.err" >/dev/null &&
	sed -n "s/.* root delay \([0-9.]*\) us, root dispersion \([0-9.]*\) us$/\1 \2/p" "$TMP/rec.err" >"$TMP/root" &&
	read -r rdelay rdisp <"$TMP/root" &&
	nums "$TMP/one" >"$TMP/nums" &&
	read -r off bound delay <"$TMP/nums" &&
	awk -v b="$bound" -v d="$delay" -v rd="$rdelay" -v rp="$rdisp" \
		"BEGIN { w = d / 2 + rd / 2 + rp; e = b - w; if (e < 0) e = -e; exit !(e <= 0.002 && b > 0) }"
'

# One clock on both sides: the true offset is 0, which the bound holds.
test_expect_success 'on one clock the bound holds the true offset, 0' '
	read -r off bound delay <"$TMP/nums" &&
	awk -v o="$off" -v b="$bound" "BEGIN { exit !((o < 0 ? -o : o) <= b) }"
'

test_expect_success 'one exchange: the server answered one request per run' '
	ntpprobe --once -w 5s "127.0.0.1:$REFLECT_PORT" >/dev/null &&
	stop_pid "$REFLECT_PID" &&
	test_is "$(grep -vc "^#" "$TMP/srv.log")" 3
'

test_expect_success 'setup: the reflector again' '
	start_reflector
'

test_expect_success 'on a terminal: the same one line' '
	"$PTY" ntpprobe -1 "127.0.0.1:$REFLECT_PORT" >"$TMP/tty" &&
	test_is "$(wc -l <"$TMP/tty")" 1 &&
	test_grep -E "^udp://127\.0\.0\.1:$REFLECT_PORT offset [-+][0-9.]+ us \+/- " "$TMP/tty"
'

test_expect_success 'no answer: one line on stderr saying what came, nothing on stdout, exit 1' '
	test_exit 1 ntpprobe -1 "127.0.0.1:$closed" >"$TMP/no" 2>"$TMP/no.err" &&
	test_is "$(wc -c <"$TMP/no")" 0 &&
	test_is "$(cat "$TMP/no.err")" "ntpprobe: udp://127.0.0.1:$closed: refused"
'

test_expect_success 'an unsynchronised server: said so, exit 1' '
	p=$(free_udp_port) &&
	spawn u "$NTPX_HELPERS/ntpfake" "$p" 3 16 INIT >/dev/null &&
	wait_until 5 udp_listening "$p" &&
	test_exit 1 ntpprobe -1 "127.0.0.1:$p" >"$TMP/un" 2>"$TMP/un.err" &&
	test_is "$(wc -c <"$TMP/un")" 0 &&
	test_grep -x "ntpprobe: udp://127.0.0.1:$p: the server says it is unsynchronised (leap 3, stratum 16)" "$TMP/un.err" &&
	stop_pid "$u"
'

test_expect_success '--once --records: the record instead of the line' '
	ntpprobe --once --records "127.0.0.1:$REFLECT_PORT" >"$TMP/r1" 2>/dev/null &&
	test_is "$(data_lines "$TMP/r1" | wc -l)" 1 &&
	test_is "$(count_status "$TMP/r1" ok)" 1
'

test_expect_success '--once with a count or a duration is a usage error' '
	test_exit 2 ntpprobe -1 -c 3 "127.0.0.1:$REFLECT_PORT" 2>"$TMP/u" &&
	test_grep "^ntpprobe: --once is one exchange" "$TMP/u" &&
	test_exit 2 ntpprobe -1 -d 1s "127.0.0.1:$REFLECT_PORT" 2>/dev/null
'

done_testing
