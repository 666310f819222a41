#!/bin/sh
# SPDX-License-Identifier: ISC
# Write errors and closed pipes (lib/out.h), every tool in each of its
# output modes: to /dev/full (ENOSPC) the tool ends with exit 1 and one
# line on stderr naming the output, and no summary that could be read as
# success; into a pipe whose reader has gone (EPIPE: "| head") it ends
# quietly, promptly and with exit 0.
. "$(dirname "$0")/../lib.sh"
test_lazy_prereq DEV_FULL '[ -w /dev/full ]'
need_prereq DEV_FULL

SYNTH=$NTPX_TOP/tests/helpers/synthrec.awk
TOOLS="ntpprobe ntpreflect ntpfilter offsetfit ntpmesh loadgen lossinject clockstep"
full_line() { echo "$1: write error on ${2:-standard output}: No space left on device"; }

# full EXPECTED-LINE CMD...: CMD > /dev/full exits 1 and says exactly
# EXPECTED-LINE on stderr (one line, nothing else).
full() {
	_want=$1
	shift
	"$@" > /dev/full 2> "$TMP/full.err"
	_rc=$?
	test_is "$_rc $(cat "$TMP/full.err")" "1 $_want"
}
# Every tool's --help > /dev/full: exit 1 and the one line.
help_full() {
	for t in $TOOLS; do
		full "$(full_line "$t")" "$t" --help || return 1
	done
}

# Closed pipes.  pipe_run NAME CMD...: "CMD | head -n 3"; CMD's exit
# status goes to $TMP/NAME.rc, its stderr to $TMP/NAME.err.  The reader
# takes 3 lines and leaves.  pipe_bg NAME CMD...: pipe_run in the
# background, its PID in pp.
pipe_run() {
	_n=$1
	shift
	rm -f "$TMP/$_n.rc"
	# timeout: should the writer not end, it still goes in the end.
	{ timeout 60 "$@" 2> "$TMP/$_n.err"; echo $? > "$TMP/$_n.rc"; } | head -n 3 > "$TMP/$_n.out"
}
pipe_bg() { pipe_run "$@" & pp=$!; }
rc_of() { cat "$TMP/$1.rc" 2>/dev/null; }
has_rc() { [ -s "$TMP/$1.rc" ]; }
# NAME's reader got 3 lines, the writer ended with 0; it said no error.
pipe_done() { test_is "$(wc -l < "$TMP/$1.out") $(rc_of "$1")" "3 0"; }
no_error() { test_grep ! -i 'error\|broken pipe' "$TMP/$1.err"; }
head_left() { [ "$(wc -l < "$TMP/ntpreflect.out")" = 3 ]; }
poke() {
	ntpprobe -c 1 -w 100ms "udp://127.0.0.1:$rport" > /dev/null 2>&1
	has_rc ntpreflect
}

test_expect_success 'setup: 20000 records' '
	awk -f "$SYNTH" -v kind=plain -v start=1764455329 -v n=20000 -v ms=10 -v idx=1 \
		-v ev=/dev/null > "$TMP/rec"
'

test_expect_success '--help > /dev/full: every tool exits 1 with one line' '
	help_full
'

test_expect_success 'offsetfit --version > /dev/full: exit 1, one line' '
	full "$(full_line offsetfit)" offsetfit --version
'

# offsetfit, every mode.
test_expect_success 'offsetfit > /dev/full: exit 1, one line' '
	full "$(full_line offsetfit)" offsetfit "$TMP/rec"
'
for m in --json --residuals "--cdf rtt" "--cdf residual" --check; do
	# shellcheck disable=SC2086
	test_expect_success "offsetfit $m > /dev/full: exit 1, one line" '
		full "$(full_line offsetfit)" offsetfit $m "$TMP/rec"
	'
done

test_expect_success 'ntpfilter > /dev/full: exit 1, one line' '
	full "$(full_line ntpfilter)" ntpfilter "$TMP/rec"
'

test_expect_success 'ntpstages -e > /dev/full: exit 1, one line' '
	full "$(full_line ntpstages)" ntpstages -e "$TMP/rec"
'

# ntpprobe against a reflector: not one exchange reported as done.
test_expect_success 'setup: a reflector, a sim clock' '
	start_reflector --log "$TMP/reflect.log" &&
	ep=udp://127.0.0.1:$REFLECT_PORT &&
	clockstep --clock "sim:$TMP/clk" --create > /dev/null
'

test_expect_success 'ntpprobe -c 20 > /dev/full: exit 1, one line' '
	full "$(full_line ntpprobe)" ntpprobe -c 20 -i 10ms "$ep"
'

test_expect_success 'ntpprobe --clock sim: --discipline > /dev/full: exit 1, one line' '
	full "$(full_line ntpprobe)" \
		ntpprobe -c 20 -i 10ms --clock "sim:$TMP/clk" --discipline "$ep"
'

test_expect_success 'lossinject -- ntpprobe (the child'\''s status) > /dev/full: exit 1, one line' '
	full "$(full_line ntpprobe)" \
		lossinject --every 2 -- ntpprobe -c 20 -i 10ms "$ep"
'

# ntpreflect --log to a full file and to a full stdout.
test_expect_success 'ntpreflect --log FILE > /dev/full: exit 1, one line' '
	port=$(free_udp_port) &&
	full "$(full_line ntpreflect /dev/full)" \
		ntpreflect --log /dev/full "udp://127.0.0.1:$port"
'

test_expect_success 'ntpreflect --log - > /dev/full: exit 1, one line' '
	full "$(full_line ntpreflect)" ntpreflect --log - "udp://127.0.0.1:$port"
'

# clockstep --show, alone and after a change.
test_expect_success 'clockstep --show > /dev/full: exit 1, one line' '
	full "$(full_line clockstep)" clockstep --clock "sim:$TMP/clk" --show
'

test_expect_success 'clockstep --step --show > /dev/full: exit 1, one line' '
	full "$(full_line clockstep)" \
		clockstep --clock "sim:$TMP/clk" --step 1ms --show
'

# loadgen: the sink, a sender, the NTP flood, the calibration.
test_expect_success 'loadgen --sink > /dev/full: exit 1, one line' '
	sport=$(free_udp_port) &&
	full "$(full_line loadgen)" loadgen --sink -d 5s "udp://127.0.0.1:$sport"
'

test_expect_success 'setup: a loadgen sink' '
	spawn sink loadgen --sink -d 0 "udp://127.0.0.1:$sport" > /dev/null 2>&1 &&
	wait_until 5 udp_listening "$sport"
'

test_expect_success 'loadgen (a sender) > /dev/full: exit 1, one line' '
	full "$(full_line loadgen)" loadgen -d 1s -i 100ms -r 10M "udp://127.0.0.1:$sport"
'

test_expect_success 'loadgen --calibrate > /dev/full: exit 1, one line' '
	full "$(full_line loadgen)" loadgen --calibrate -d 1s "udp://127.0.0.1:$sport"
'

test_expect_success 'loadgen --ntp > /dev/full: exit 1, one line' '
	full "$(full_line loadgen)" loadgen --ntp 1k -d 1s -i 100ms "$ep"
'

# ntpprobe asked for 100000 exchanges, 1000 s: it must end at once when
# the reader goes, not when its count is done.
test_expect_success 'ntpprobe | head -n 3 ends as soon as the reader does' '
	pipe_bg ntpprobe ntpprobe -c 100000 -i 10ms "$ep" &&
	wait_until 10 has_rc ntpprobe &&
	wait "$pp"
'

test_expect_success 'ntpprobe | head -n 3: 3 lines, exit 0' '
	pipe_done ntpprobe
'

test_expect_success 'ntpprobe | head -n 3: no error line' '
	no_error ntpprobe
'

test_expect_success 'ntpprobe | head -n 3: its summary counts the exchanges sent before' '
	test_grep "^ntpprobe: sent [0-9]*, ok" "$TMP/ntpprobe.err"
'

test_expect_success 'offsetfit | head -n 3: 3 lines, exit 0' '
	pipe_run offsetfit offsetfit --residuals "$TMP/rec" &&
	pipe_done offsetfit
'

test_expect_success 'offsetfit | head -n 3: no error line' '
	no_error offsetfit
'

test_expect_success 'ntpfilter | head -n 3: 3 lines, exit 0' '
	pipe_run ntpfilter ntpfilter "$TMP/rec" &&
	pipe_done ntpfilter
'

test_expect_success 'ntpfilter | head -n 3: no error line' '
	no_error ntpfilter
'

test_expect_success 'ntpstages -e | head -n 3: 3 lines, exit 0' '
	pipe_run ntpstages ntpstages -e "$TMP/rec" &&
	pipe_done ntpstages
'

test_expect_success 'ntpstages -e | head -n 3: no error line' '
	no_error ntpstages
'

test_expect_success 'loadgen --ntp | head -n 3 ends as soon as the reader does' '
	pipe_bg loadgen loadgen --ntp 1k -d 100s -i 10ms "$ep" &&
	wait_until 10 has_rc loadgen &&
	wait "$pp"
'

test_expect_success 'loadgen | head -n 3: 3 lines, exit 0' '
	pipe_done loadgen
'

test_expect_success 'loadgen | head -n 3: no error line' '
	no_error loadgen
'

# ntpreflect --log - | head: the server ends when its log's reader goes:
# once head has taken 3 of the 6 header lines (written in one write) and
# left, the next request's log line meets the closed pipe.
test_expect_success 'setup: ntpreflect --log - | head -n 3, the reader gone' '
	rport=$(free_udp_port) &&
	pipe_bg ntpreflect ntpreflect --log - "udp://127.0.0.1:$rport" &&
	rp=$pp &&
	wait_until 5 udp_listening "$rport" &&
	wait_until 5 head_left
'

test_expect_success 'ntpreflect --log - | head -n 3 ends at the first request after the reader'\''s end' '
	wait_until 10 poke &&
	wait "$rp"
'

test_expect_success 'ntpreflect | head -n 3: 3 lines, exit 0' '
	pipe_done ntpreflect
'

test_expect_success 'ntpreflect | head -n 3: no error line' '
	no_error ntpreflect
'
done_testing
