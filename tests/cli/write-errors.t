#!/bin/sh
# SPDX-License-Identifier: ISC
# Write errors and closed pipes (lib/out.h), every tool in each of its
# output modes: to /dev/full (ENOSPC) the tool ends with exit 1 and one
# line on stderr naming the output, and no summary that could be read as
# success; into a pipe whose reader has gone (EPIPE: "| head") it ends
# quietly, promptly and with exit 0.
. "$(dirname "$0")/../lib.sh"
[ -w /dev/full ] || skip_all "no /dev/full"

SYNTH=$NTPX_TOP/tests/helpers/synthrec.awk
awk -f "$SYNTH" -v kind=plain -v start=1764455329 -v n=20000 -v ms=10 -v idx=1 \
	-v ev=/dev/null > "$TMP/rec"
full_line() { echo "$1: write error on ${2:-standard output}: No space left on device"; }

# full NAME EXPECTED-LINE CMD...: CMD > /dev/full exits 1 and says
# exactly EXPECTED-LINE on stderr (one line, nothing else).
full() {
	_t=$1 _want=$2
	shift 2
	"$@" > /dev/full 2> "$TMP/full.err"
	_rc=$?
	is "$_rc $(cat "$TMP/full.err")" "1 $_want" "$_t > /dev/full: exit 1, one line"
}

for t in ntpprobe ntpreflect ntpfilter offsetfit loadgen lossinject clockstep; do
	"$t" --help > /dev/full 2> "$TMP/help.err"
	echo "$? $(cat "$TMP/help.err")" > "$TMP/help.$t"
done
ok "--help > /dev/full: every tool exits 1 with one line" sh -c "
	for t in ntpprobe ntpreflect ntpfilter offsetfit loadgen lossinject clockstep; do
		[ \"\$(cat '$TMP'/help.\$t)\" = \"1 \$t: write error on standard output: No space left on device\" ] || exit 1
	done"
full "offsetfit --version" "$(full_line offsetfit)" offsetfit --version

# offsetfit, every mode.
full "offsetfit" "$(full_line offsetfit)" offsetfit "$TMP/rec"
for m in --json --residuals "--cdf rtt" "--cdf residual" --check; do
	# shellcheck disable=SC2086
	full "offsetfit $m" "$(full_line offsetfit)" offsetfit $m "$TMP/rec"
done

# ntpfilter.
full "ntpfilter" "$(full_line ntpfilter)" ntpfilter "$TMP/rec"

# ntpprobe against a reflector: not one exchange reported as done.
start_reflector --log "$TMP/reflect.log"
ep=udp://127.0.0.1:$REFLECT_PORT
full "ntpprobe -c 20" "$(full_line ntpprobe)" ntpprobe -c 20 -i 10ms "$ep"
clockstep --clock "sim:$TMP/clk" --create > /dev/null
full "ntpprobe --clock sim: --discipline" "$(full_line ntpprobe)" \
	ntpprobe -c 20 -i 10ms --clock "sim:$TMP/clk" --discipline "$ep"
full "lossinject -- ntpprobe (the child's status)" "$(full_line ntpprobe)" \
	lossinject --every 2 -- ntpprobe -c 20 -i 10ms "$ep"

# ntpreflect --log to a full file and to a full stdout.
port=$(free_udp_port)
full "ntpreflect --log FILE" "$(full_line ntpreflect /dev/full)" \
	ntpreflect --log /dev/full "udp://127.0.0.1:$port"
full "ntpreflect --log -" "$(full_line ntpreflect)" ntpreflect --log - "udp://127.0.0.1:$port"

# clockstep --show, alone and after a change.
full "clockstep --show" "$(full_line clockstep)" clockstep --clock "sim:$TMP/clk" --show
full "clockstep --step --show" "$(full_line clockstep)" \
	clockstep --clock "sim:$TMP/clk" --step 1ms --show

# loadgen: the sink, a sender, the NTP flood, the calibration.
sport=$(free_udp_port)
full "loadgen --sink" "$(full_line loadgen)" loadgen --sink -d 5s "udp://127.0.0.1:$sport"
spawn sink loadgen --sink -d 0 "udp://127.0.0.1:$sport" > /dev/null 2>&1
wait_until 5 udp_listening "$sport"
full "loadgen (a sender)" "$(full_line loadgen)" loadgen -d 1s -i 100ms -r 10M "udp://127.0.0.1:$sport"
full "loadgen --calibrate" "$(full_line loadgen)" loadgen --calibrate -d 1s "udp://127.0.0.1:$sport"
full "loadgen --ntp" "$(full_line loadgen)" loadgen --ntp 1k -d 1s -i 100ms "$ep"

# Closed pipes.  pipe_run NAME CMD...: "CMD | head -n 3" in the
# background; CMD's exit status goes to $TMP/NAME.rc, its stderr to
# $TMP/NAME.err.  The reader takes 3 lines and leaves.
pipe_run() {
	_n=$1
	shift
	rm -f "$TMP/$_n.rc"
	# timeout: should the writer not end, it still goes in the end.
	{ timeout 60 "$@" 2> "$TMP/$_n.err"; echo $? > "$TMP/$_n.rc"; } | head -n 3 > "$TMP/$_n.out"
}
rc_of() { cat "$TMP/$1.rc" 2>/dev/null; }
has_rc() { [ -s "$TMP/$1.rc" ]; }
# pipe_check NAME: the reader got 3 lines, the writer ended (within 10 s
# of the reader's end) with 0 and said no error.
pipe_check() {
	is "$(wc -l < "$TMP/$1.out") $(rc_of "$1")" "3 0" "$1 | head -n 3: 3 lines, exit 0"
	ok "$1 | head -n 3: no error line" sh -c "! grep -qi 'error\|broken pipe' '$TMP/$1.err'"
}

# ntpprobe asked for 100000 exchanges, 1000 s: it must end at once when
# the reader goes, not when its count is done.
pipe_run ntpprobe ntpprobe -c 100000 -i 10ms "$ep" &
pp=$!
ok "ntpprobe | head -n 3 ends as soon as the reader does" wait_until 10 has_rc ntpprobe
wait "$pp"
pipe_check ntpprobe
ok "ntpprobe | head -n 3: its summary counts the exchanges sent before" \
	grep -q '^ntpprobe: sent [0-9]*, ok' "$TMP/ntpprobe.err"

pipe_run offsetfit offsetfit --residuals "$TMP/rec"
pipe_check offsetfit
pipe_run ntpfilter ntpfilter "$TMP/rec"
pipe_check ntpfilter
pipe_run loadgen loadgen --ntp 1k -d 100s -i 10ms "$ep" &
lp=$!
ok "loadgen --ntp | head -n 3 ends as soon as the reader does" wait_until 10 has_rc loadgen
wait "$lp"
pipe_check loadgen

# ntpreflect --log - | head: the server ends when its log's reader goes:
# once head has taken 3 of the 5 header lines and left, the next request's
# log line meets the closed pipe.
rport=$(free_udp_port)
pipe_run ntpreflect ntpreflect --log - "udp://127.0.0.1:$rport" &
rp=$!
wait_until 5 udp_listening "$rport"
head_left() { [ "$(wc -l < "$TMP/ntpreflect.out")" = 3 ]; }
wait_until 5 head_left
poke() {
	ntpprobe -c 1 -w 100ms "udp://127.0.0.1:$rport" > /dev/null 2>&1
	has_rc ntpreflect
}
ok "ntpreflect --log - | head -n 3 ends at the first request after the reader's end" \
	wait_until 10 poke
wait "$rp"
pipe_check ntpreflect
done_testing
