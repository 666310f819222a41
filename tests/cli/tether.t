#!/bin/sh
# SPDX-License-Identifier: ISC
# tether through prefixes that stay on this machine: arguments arrive
# intact through a shell that re-parses them, stdout and stderr come back
# apart, the status comes back; a remote side that is not there, CR LF
# line ends and foreign lines are refused in one line naming the side and
# the prefix; SIGTERM ends the command's whole process group, and so does
# a killed local tether (the connection gone); --list and --kill find
# what a killed remote tether left.
. "$(dirname "$0")/../lib.sh"

need_prereq BUILT

# A prefix that, like ssh, joins the arguments and hands them to a shell.
shellish="sh -c 'eval \"\$*\"' sh"
# One that ends each line with CR LF, and one that prints a line first.
crlf="sh -c 'exec \"\$@\" | sed \"s/\$/\\r/\"' sh"
foreign="sh -c 'echo motd; exec \"\$@\"' sh"
tag=t$$

# Arguments a shell would change, through $shellish.
args_through_shell() {
	tether -x "$shellish" -- printf '<%s>' 'a b' '' "x&y?z;w" "it's" '$HOME' '*' '~' 2>"$TMP/err"
}
quiet() { "$@" 2>/dev/null; }

# Lifetimes: the command, a child it started in the background, and a
# grandchild, each writing its PID.
group_cmd='echo $$ > "$1/a"; sleep 300 & echo $! > "$1/b"; sh -c "echo \$\$ > \"$1/c\"; exec sleep 300" & wait'
started() { [ -s "$1/a" ] && [ -s "$1/b" ] && [ -s "$1/c" ]; }
all_gone() { for f in a b c; do ! kill -0 "$(cat "$1/$f")" 2>/dev/null || return 1; done; }
# wait_rc PID: waits for PID, its exit status in rc.
wait_rc() { wait "$1"; rc=$?; }

test_expect_success 'arguments arrive intact through a remote shell' '
	out=$(args_through_shell) &&
	test_is "$out" "<a b><><x&y?z;w><it'\''s><\$HOME><*><~>"
'

test_expect_success 'stdout and stderr come back apart, a last line without its end as it was' '
	out=$(tether -x "$shellish" -- sh -c "echo out; echo err >&2; printf tail" 2>"$TMP/err") &&
	test_is "$out|$(cat "$TMP/err")" "out${LF}tail|err"
'

test_expect_success 'the command'\''s status comes back' '
	test_exit 7 quiet tether -x env -- sh -c "exit 7"
'

test_expect_success '--ready: the file is made once the command started' '
	tether -x env --ready "$TMP/ready" -- sh -c "exit 0" &&
	test -f "$TMP/ready"
'

test_expect_success 'no remote tether: 125 and one line naming the side, the prefix and the directory' '
	test_exit 125 tether --side ref -x env --bin "$TMP/nowhere" -- true >/dev/null 2>"$TMP/err" &&
	test_grep "^tether: ref host (prefix '\''env'\''): no tether started in $TMP/nowhere " "$TMP/err"
'

test_expect_success 'CR LF line ends: refused, naming the side, the host and the prefix' '
	test_exit 125 tether --side client -x "$crlf" -- echo hi >/dev/null 2>"$TMP/err" &&
	test_grep "^tether: client host $(uname -n) (prefix '\''sh -c .*): CR LF line ends" "$TMP/err"
'

test_expect_success 'a line that is not tether'\''s: refused' '
	test_exit 125 tether --side ref -x "$foreign" -- echo hi >/dev/null 2>"$TMP/err" &&
	test_grep "^tether: ref host (prefix .*): not a line of tether'\''s: '\''motd'\''" "$TMP/err"
'

test_expect_success 'no command: usage error' '
	test_exit 2 tether -x env >/dev/null 2>&1
'

test_expect_success 'a bad tag: usage error' '
	test_exit 2 tether --list "a b" >/dev/null 2>&1
'

test_expect_success 'SIGTERM: the command'\''s whole group ends, and so does tether (143)' '
	mkdir "$TMP/g1" &&
	spawn p1 tether -x env --tag "$tag" -- sh -c "$group_cmd" sh "$TMP/g1" &&
	wait_until 10 started "$TMP/g1" &&
	kill -TERM "$p1" &&
	wait_rc "$p1" &&
	diag "tether: exit $rc" &&
	{ test "$rc" = 143 || test "$rc" = 0; }
'

test_expect_success 'SIGTERM: nothing of the group is left' '
	wait_until 10 all_gone "$TMP/g1"
'

test_expect_success 'the local tether killed (the connection gone): nothing of the group is left' '
	mkdir "$TMP/g2" &&
	spawn p2 tether -x env --tag "$tag" -- sh -c "$group_cmd" sh "$TMP/g2" &&
	wait_until 10 started "$TMP/g2" &&
	kill -KILL "$p2" &&
	wait_until 10 all_gone "$TMP/g2"
'

# A remote tether killed: its command lives on, noted under the tag.
test_expect_success 'setup: a remote tether killed, its command left running' '
	mkdir "$TMP/g3" &&
	spawn p3 tether -x env --tag "$tag" -- sh -c "$group_cmd" sh "$TMP/g3" 2>/dev/null &&
	wait_until 10 started "$TMP/g3" &&
	# Only if the test fails: the group is expected gone by the end.
	test_atexit "kill -KILL $(cat "$TMP/g3/a") $(cat "$TMP/g3/b") $(cat "$TMP/g3/c") 2>/dev/null || :" &&
	serve=$(ps -o pid= --ppid "$p3" | tr -d " ") &&
	kill -KILL "$serve"
'

test_expect_success '--list: the command a killed remote tether left' '
	tether --list "$tag" >"$TMP/list" &&
	test_grep "^$(cat "$TMP/g3/a") " "$TMP/list"
'

test_expect_success '--kill: it and its group end' '
	tether --kill "$tag" >/dev/null &&
	wait_until 10 all_gone "$TMP/g3"
'

test_expect_success '--list: nothing left under the tag' '
	tether --list "$tag" >"$TMP/left" &&
	test_is "$(cat "$TMP/left")" ""
'
done_testing
