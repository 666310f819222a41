#!/bin/sh
# SPDX-License-Identifier: ISC
# Every record reader keeps what it read (issue 33, 1; doc/ntpx.7).
#
# A person's ^C on "ntpprobe | READER" at a terminal (tests/helpers/ctrlc.py
# types it on a pseudo-terminal, and the line discipline sends SIGINT to
# the whole pipeline) ends the input, not the work: READER prints its
# result from every record the probe wrote, and exits 0.  With the
# terminal as its input, a reader stops at once, as any program does.
#
# A last line cut short (no newline: its writer was killed mid-line) is
# dropped with one line naming the file and the line; the records before
# it are used, and the exit status is 3.
. "$(dirname "$0")/../lib.sh"
need python3

CTRLC=$NTPX_TOP/tests/helpers/ctrlc.py
PATH=$NTPX_TOP/analysis:$PATH

# whole FILE: every data line has the fields its #fields line names (an
# empty line parts two tables).
whole() {
	awk '/^#fields / { n = NF - 1; next } /^#/ || /^$/ { next } NF != n { bad++ }
		END { exit !(n && !bad) }' "$1"
}

# sent FILE: the exchanges an ntpprobe's summary (its stderr) says it sent.
sent() { sed -n 's/^ntpprobe: sent \([0-9]*\),.*/\1/p' "$1"; }

# on_ctrl_c NAME READER...: "ntpprobe | READER" on a terminal of its own,
# ^C typed once the reflector has answered 50 more requests.  READER's
# stdout goes to $TMP/NAME.out, its stderr to NAME.err, its exit status
# to NAME.rc, the probe's stderr to NAME.probe.
on_ctrl_c() {
	_oc=$1
	shift
	_oc_n=$(($(data_lines "$TMP/answered" | wc -l) + 50))
	python3 "$CTRLC" "trap : INT
		ntpprobe -i 2ms udp://127.0.0.1:$REFLECT_PORT 2>'$TMP/$_oc.probe' |
			$* >'$TMP/$_oc.out' 2>'$TMP/$_oc.err'
		echo \$? >'$TMP/$_oc.rc'" "$TMP/answered" "$_oc_n" >"$TMP/$_oc.tty"
}

test_expect_success 'setup: a reflector that logs what it answers' '
	start_reflector -l "$TMP/answered"
'

test_expect_success 'offsetfit: ^C prints the fit of every record the probe wrote, exit 0' '
	on_ctrl_c fit offsetfit &&
	test_is "$(cat "$TMP/fit.rc")" 0 &&
	test_is "$(sed -n "s/^records //p" "$TMP/fit.out")" "$(sent "$TMP/fit.probe")" &&
	is_num "$(sed -n "s/^b_ppm //p" "$TMP/fit.out")" &&
	test_grep ! . "$TMP/fit.err"
'

# (A loaded machine can leave the shortest tau without a value: the first
# that has one.)
test_expect_success 'offsetfit --stability: ^C prints the table, exit 0' '
	on_ctrl_c stab offsetfit --stability &&
	test_is "$(cat "$TMP/stab.rc")" 0 &&
	test_grep "^#fields tau_s n adev " "$TMP/stab.out" &&
	whole "$TMP/stab.out" &&
	adev=$(awk "!/^#/ && NF && \$3 != \"-\" { print \$3; exit }" "$TMP/stab.out") &&
	is_num "$adev"
'

test_expect_success 'ntpstages: ^C prints the stages of every record, exit 0' '
	on_ctrl_c stages ntpstages &&
	test_is "$(cat "$TMP/stages.rc")" 0 &&
	test_grep "^# ntpstages: $(sent "$TMP/stages.probe") records" "$TMP/stages.out"
'

test_expect_success 'ntpfilter: ^C passes every record on, filtered, exit 0' '
	on_ctrl_c filter ntpfilter &&
	test_is "$(cat "$TMP/filter.rc")" 0 &&
	test_is "$(data_lines "$TMP/filter.out" | wc -l)" "$(sent "$TMP/filter.probe")" &&
	test_grep "^#fields .* foff2 " "$TMP/filter.out" &&
	whole "$TMP/filter.out"
'

test_expect_success 'ntpfilter | offsetfit: ^C reaches both, the fit has every record' '
	on_ctrl_c chain "ntpfilter | offsetfit" &&
	test_is "$(cat "$TMP/chain.rc")" 0 &&
	test_is "$(sed -n "s/^records //p" "$TMP/chain.out")" "$(sent "$TMP/chain.probe")"
'

test_expect_success 'ntpx-convert --csv > FILE: ^C leaves every row in FILE, exit 0' '
	on_ctrl_c csv ntpx-convert --csv &&
	test_is "$(cat "$TMP/csv.rc")" 0 &&
	test_is "$(grep -vc "^#" "$TMP/csv.out")" "$(($(sent "$TMP/csv.probe") + 1))" &&
	test_grep "^seq,t1,t2,t3,t4,delay,off2,status" "$TMP/csv.out"
'

test_expect_success 'a reader whose input is the terminal stops at once (SIGINT, 130)' '
	python3 "$CTRLC" --again "trap : INT; echo >\"$TMP/tty.go\"
		offsetfit >\"$TMP/tty.out\" 2>&1; echo \$? >\"$TMP/tty.rc\"" \
		"$TMP/tty.go" 1 >"$TMP/tty.tty" &&
	test_is "$(cat "$TMP/tty.rc")" 130
'

# catches_int PID: PID has a handler for SIGINT (its SigCgt, bit 2).
catches_int() {
	_ci=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status") &&
	[ $((0x$_ci & 2)) != 0 ]
}
# ended PID: PID, a child of ours, has ended (a zombie until reaped).
ended() { [ ! -e "/proc/$1" ] || grep -q "^$1 (.*) Z " "/proc/$1/stat"; }

# The writer holds its end of the pipe open and ignores the ^C (it is
# this shell): the reader must end its input by itself, after a quiet
# second, and print what it read.  (Not through spawn: there the
# redirection would be spawn's, and the shell gives a command run in the
# background /dev/null for its input.)
test_expect_success 'a writer the ^C does not stop: the reader ends its input, prints, exit 0' '
	ntpprobe -c 40 -i 1ms -w 5s "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/held.rec" 2>/dev/null &&
	mkfifo "$TMP/fifo" &&
	exec 5<>"$TMP/fifo" &&
	{ offsetfit <"$TMP/fifo" >"$TMP/held.out" 2>"$TMP/held.err" & } &&
	pid=$! &&
	test_atexit "kill $pid 2>/dev/null; wait $pid 2>/dev/null || :" &&
	cat "$TMP/held.rec" >&5 &&
	wait_until 10 catches_int $pid &&
	kill -INT $pid &&
	wait_until 10 ended $pid &&
	exec 5>&- &&
	test_exit 0 wait $pid &&
	test_grep "^records 40$" "$TMP/held.out"
'

# The cut-short last line: 40 records, the last cut in the middle.
test_expect_success 'setup: records whose last line is cut short' '
	ntpprobe -c 40 -i 1ms "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/good" 2>/dev/null &&
	test_is "$(data_lines "$TMP/good" | wc -l)" 40 &&
	head -c -9 "$TMP/good" >"$TMP/cut" &&
	cut_line=$(wc -l <"$TMP/good") &&
	sed "1a #pair a b" "$TMP/cut" >"$TMP/pair.rec" &&
	mkdir -p "$TMP/pkg/runs/1-freerun-idle-udp-r1" &&
	cp "$TMP/cut" "$TMP/pkg/runs/1-freerun-idle-udp-r1/probe.rec" &&
	: >"$TMP/pkg/runs/1-freerun-idle-udp-r1/done"
'

# cut_said TOOL ERRFILE FILE [LINE]: ERRFILE is the one line saying so.
cut_said() {
	test_is "$(cat "$2")" "$1: $3:${4:-$cut_line}: last line cut short (no newline): dropped"
}

test_expect_success 'offsetfit: the cut line dropped, 39 records fitted, exit 3' '
	test_exit 3 offsetfit "$TMP/cut" >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said offsetfit "$TMP/c.err" "$TMP/cut" &&
	test_grep "^records 39$" "$TMP/c.out" &&
	test_exit 3 offsetfit <"$TMP/cut" >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said offsetfit "$TMP/c.err" stdin
'

test_expect_success 'ntpstages: the cut line dropped, 39 records, exit 3' '
	test_exit 3 ntpstages "$TMP/cut" >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said ntpstages "$TMP/c.err" "$TMP/cut" &&
	test_grep "^# ntpstages: 39 records" "$TMP/c.out"
'

test_expect_success 'ntpfilter: the cut line dropped, 39 records on, exit 3' '
	test_exit 3 ntpfilter "$TMP/cut" >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said ntpfilter "$TMP/c.err" "$TMP/cut" &&
	test_is "$(data_lines "$TMP/c.out" | wc -l)" 39 &&
	whole "$TMP/c.out"
'

# (ntpmesh may say more of its windows: a probe on a loaded machine can
# lose a few of the 40.)
test_expect_success 'ntpmesh: the cut line dropped, the file fitted, exit 3' '
	test_exit 3 ntpmesh "$TMP/pair.rec" >"$TMP/c.out" 2>"$TMP/c.err" &&
	grep "cut short" "$TMP/c.err" >"$TMP/c.cut" &&
	cut_said ntpmesh "$TMP/c.cut" "$TMP/pair.rec" $((cut_line + 1)) &&
	test_grep "^hosts a b$" "$TMP/c.out"
'

test_expect_success 'ntpx-convert --csv, --json: the cut line dropped, 39 rows, exit 3' '
	test_exit 3 ntpx-convert --csv "$TMP/cut" >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said ntpx-convert "$TMP/c.err" "$TMP/cut" &&
	test_is "$(grep -vc "^#" "$TMP/c.out")" 40 &&
	test_exit 3 ntpx-convert --json <"$TMP/cut" >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said ntpx-convert "$TMP/c.err" "standard input" &&
	test_is "$(grep -c "^{\"seq\":" "$TMP/c.out")" 39
'

test_expect_success 'ntpx-runstat: the cut line dropped, 39 records, exit 3' '
	test_exit 3 ntpx-runstat "$TMP/pkg/runs/1-freerun-idle-udp-r1" /dev/null 1 >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said ntpx-runstat "$TMP/c.err" "$TMP/pkg/runs/1-freerun-idle-udp-r1/probe.rec" &&
	test_grep "^records 39$" "$TMP/c.out"
'

test_expect_success 'ntpx-summarize: the run kept, its offsetfit columns too, exit 3' '
	test_exit 3 ntpx-summarize "$TMP/pkg" >"$TMP/c.out" 2>"$TMP/c.err" &&
	cut_said ntpx-runstat "$TMP/c.err" "$TMP/pkg/runs/1-freerun-idle-udp-r1/probe.rec" &&
	awk -F"\t" "$ntpx_fields"'"'"'/^#fields/ { fields(); next }
		{ print field("records"), field("rtt_median_us") }'"'"' "$TMP/pkg/results/runs.tsv" >"$TMP/c.row" &&
	test_is "$(cut -d" " -f1 "$TMP/c.row")" 39 &&
	is_num "$(cut -d" " -f2 "$TMP/c.row")"
'
done_testing
