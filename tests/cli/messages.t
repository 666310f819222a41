#!/bin/sh
# SPDX-License-Identifier: ISC
# Messages and exit codes, one convention across every tool in bin/ (the
# built ones, the shell commands) and analysis/ (doc/ntpx.7,
# Conventions): each names itself by its own name, never by the path it
# was run by; a usage error is exit 2; --help and --version that cannot
# be written are one line of the tool's and exit 1, never cat's or echo's;
# an endpoint says what is wrong with it in one line, its scheme in any
# case; a name that does not resolve is exit 2, as ping's.
. "$(dirname "$0")/../lib.sh"
need_prereq BUILT

# Every command a user can run: bin/ but its libraries, and analysis/.
tools() {
	for t in "$NTPX_BIN"/* "$NTPX_TOP"/analysis/ntpx-*; do
		case $t in *.sh|*.awk|*.in) continue ;; esac
		[ -x "$t" ] && echo "$t"
	done
}
# FILE holds lines that all begin with the tool's name, or are the one
# line that says where help is.
own_lines() {
	test -s "$2" &&
	awk -v n="$1" 'index($0, n ": ") != 1 && $0 != "Try '\''" n " --help'\''." { print "not " n "'\''s: " $0; bad = 1 }
		END { exit bad }' "$2"
}
full_line() { echo "$1: write error on standard output: No space left on device"; }

test_expect_success 'setup: every tool, and a reflector' '
	tools >"$TMP/tools" &&
	test "$(wc -l <"$TMP/tools")" -ge 28 &&
	start_reflector
'

test_expect_success 'an unknown option: exit 2, every line in the tool'\''s own name' '
	while read -r t; do
		n=${t##*/} &&
		test_exit 2 "$t" --no-such-option >/dev/null 2>"$TMP/err" &&
		own_lines "$n" "$TMP/err" || return 1
	done <"$TMP/tools"
'

test_expect_success '--help: the usage on standard output, nothing on standard error, exit 0' '
	while read -r t; do
		"$t" --help >"$TMP/out" 2>"$TMP/err" &&
		test -s "$TMP/out" && test_is "$(cat "$TMP/err")" "" || { echo "$t" >&2; return 1; }
	done <"$TMP/tools"
'

test_expect_success '--help and --version on a full disk: one line of the tool'\''s, exit 1' '
	while read -r t; do
		n=${t##*/} &&
		for o in --help --version; do
			test_exit 1 "$t" $o >/dev/full 2>"$TMP/err" &&
			test_is "$(cat "$TMP/err")" "$(full_line "$n")" || return 1
		done || return 1
	done <"$TMP/tools"
'

# What a script prints on a full disk is its own line, never awk'"'"'s,
# cat'"'"'s or echo'"'"'s.
test_expect_success 'a shell command'\''s output on a full disk: its own one line, exit 1' '
	test_exit 1 ntpx-check -c 1 -w 5s "127.0.0.1:$REFLECT_PORT" >/dev/full 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "$(full_line ntpx-check)" &&
	test_exit 1 ntpx-lab -n "$(uniq_name)" env >/dev/full 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "$(full_line ntpx-lab)" &&
	test_exit 1 ntpx-study --plan --seed 1 -t udp -f freerun >/dev/full 2>"$TMP/err" &&
	test_grep -x "$(full_line ntpx-study)" "$TMP/err" &&
	test_is "$(grep -vc "^ntpx-study: " "$TMP/err")" 0 &&
	mkdir "$TMP/run" &&
	ntpprobe -c 2 -i 10ms -w 5s "127.0.0.1:$REFLECT_PORT" >"$TMP/run/probe.rec" 2>/dev/null &&
	"$NTPX_TOP/analysis/ntpx-runstat" "$TMP/run" /dev/null 1 >"$TMP/stat" &&
	test_grep "^ok 2$" "$TMP/stat" &&
	test_exit 1 "$NTPX_TOP/analysis/ntpx-runstat" "$TMP/run" /dev/null 1 >/dev/full 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "$(full_line ntpx-runstat)"
'

# The tools that take an endpoint, and how each is run with ENDPOINT.
endpoint_tools='ntpprobe -c 1 -w 5s|ntpreflect|loadgen -d 1s|ntpx-check -c 1 -w 5s'
each_endpoint_tool() {
	printf "%s\n" "$endpoint_tools" | tr "|" "\n" >"$TMP/ep-tools" &&
	while read -r cmd; do
		"$@" "$cmd" || return 1
	done <"$TMP/ep-tools"
}
# one_line_2 "CMD" ENDPOINT WANT: CMD ENDPOINT exits 2 with the one line
# "TOOL: WANT" on standard error.
one_line_2() {
	test_exit 2 $1 "$2" >/dev/null 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "${1%% *}: $3"
}
test_expect_success 'a malformed endpoint: one line saying what is wrong with it, exit 2' '
	bad_port() { one_line_2 "$1" foo:bar "endpoint '\''foo:bar'\'': bad port '\''bar'\'' (a number, 0..65535)"; } &&
	no_slashes() { one_line_2 "$1" udp:/127.0.0.1 "endpoint '\''udp:/127.0.0.1'\'': a scheme takes '\''://'\'' (udp://127.0.0.1)"; } &&
	each_endpoint_tool bad_port &&
	each_endpoint_tool no_slashes
'
test_expect_success 'a name that does not resolve: one line, exit 2, as ping'\''s' '
	unknown() {
		test_exit 2 $1 nosuch.invalid >/dev/null 2>"$TMP/err" &&
		test_grep -x "${1%% *}: .*cannot resolve .nosuch\.invalid.*" "$TMP/err" &&
		test_is "$(wc -l <"$TMP/err")" 1
	} &&
	each_endpoint_tool unknown
'
test_expect_success 'a scheme in capitals is the same scheme' '
	ntpprobe -c 1 -w 5s "UDP://127.0.0.1:$REFLECT_PORT" >"$TMP/rec" 2>/dev/null &&
	test_grep -x "#endpoint udp://127.0.0.1:$REFLECT_PORT" "$TMP/rec" &&
	test_is "$(count_status "$TMP/rec" ok)" 1 &&
	ntpx-check -c 1 -w 5s "Udp://127.0.0.1:$REFLECT_PORT" >/dev/null
'

done_testing
