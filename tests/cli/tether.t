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
tag=t$$

out=$(tether -x "$shellish" -- printf '<%s>' 'a b' '' "x&y?z;w" "it's" '$HOME' '*' '~' 2> "$TMP/err")
is "$out" "<a b><><x&y?z;w><it's><\$HOME><*><~>" "arguments arrive intact through a remote shell"

out=$(tether -x "$shellish" -- sh -c 'echo out; echo err >&2; printf tail' 2> "$TMP/err")
is "$out|$(cat "$TMP/err")" "out
tail|err" "stdout and stderr come back apart, a last line without its end as it was"

tether -x env -- sh -c 'exit 7' 2>/dev/null
is "$?" 7 "the command's status comes back"
tether -x env -r "$TMP/ready" -- sh -c 'exit 0'
ok "--ready: the file is made once the command started" test -f "$TMP/ready"

one_line() {	# FILE PATTERN: exactly one line of tether's, matching
	[ "$(grep -c '^tether: ' "$1")" = 1 ] && grep -q "^tether: $2" "$1" ||
		{ diag "$(cat "$1")"; return 1; }
}
tether -s ref -x env -b "$TMP/nowhere" -- true 2> "$TMP/err"
rc=$?
ok "no remote tether: 125 and one line naming the side, the prefix and the directory" \
	sh -c "[ $rc = 125 ] && grep -q \"^tether: ref host (prefix 'env'): no tether started in $TMP/nowhere \" '$TMP/err'"

crlf="sh -c 'exec \"\$@\" | sed \"s/\$/\\r/\"' sh"
tether -s client -x "$crlf" -- echo hi > /dev/null 2> "$TMP/err"
rc=$?
ok "CR LF line ends: refused, naming the side, the host and the prefix" \
	sh -c "[ $rc = 125 ] && grep -q \"^tether: client host $(uname -n) (prefix 'sh -c .*): CR LF line ends\" '$TMP/err'"

foreign="sh -c 'echo motd; exec \"\$@\"' sh"
tether -s ref -x "$foreign" -- echo hi > /dev/null 2> "$TMP/err"
rc=$?
ok "a line that is not tether's: refused" \
	sh -c "[ $rc = 125 ] && grep -q \"^tether: ref host (prefix .*): not a line of tether's: 'motd'\" '$TMP/err'"

tether -x env > /dev/null 2>&1
is "$?" 2 "no command: usage error"
tether --list 'a b' > /dev/null 2>&1
is "$?" 2 "a bad tag: usage error"

# Lifetimes: the command, a child it started in the background, and a
# grandchild, each writing its PID.
group_cmd='echo $$ > "$1/a"; sleep 300 & echo $! > "$1/b"; sh -c "echo \$\$ > \"$1/c\"; exec sleep 300" & wait'
started() { [ -s "$1/a" ] && [ -s "$1/b" ] && [ -s "$1/c" ]; }
all_gone() { for f in a b c; do ! kill -0 "$(cat "$1/$f")" 2>/dev/null || return 1; done; }

mkdir "$TMP/g1"
spawn p1 tether -x env -t "$tag" -- sh -c "$group_cmd" sh "$TMP/g1"
wait_until 10 started "$TMP/g1"
kill -TERM "$p1"
wait "$p1"
rc=$?
ok "SIGTERM: the command's whole group ends, and so does tether (143)" \
	sh -c "[ $rc = 143 ] || [ $rc = 0 ]" 
ok "SIGTERM: nothing of the group is left" wait_until 10 all_gone "$TMP/g1"

mkdir "$TMP/g2"
spawn p2 tether -x env -t "$tag" -- sh -c "$group_cmd" sh "$TMP/g2"
wait_until 10 started "$TMP/g2"
kill -KILL "$p2"
ok "the local tether killed (the connection gone): nothing of the group is left" \
	wait_until 10 all_gone "$TMP/g2"

# A remote tether killed: its command lives on, noted under the tag.
mkdir "$TMP/g3"
spawn p3 tether -x env -t "$tag" -- sh -c "$group_cmd" sh "$TMP/g3" 2>/dev/null
wait_until 10 started "$TMP/g3"
serve=$(ps -o pid= --ppid "$p3" | tr -d ' ')
kill -KILL "$serve"
cleanup "kill -KILL $(cat "$TMP/g3/a") $(cat "$TMP/g3/b") $(cat "$TMP/g3/c")"
ok "--list: the command a killed remote tether left" \
	sh -c "tether --list '$tag' | grep -q '^$(cat "$TMP/g3/a") '"
tether --kill "$tag" > /dev/null
ok "--kill: it and its group end" wait_until 10 all_gone "$TMP/g3"
is "$(tether --list "$tag")" "" "--list: nothing left under the tag"
done_testing
