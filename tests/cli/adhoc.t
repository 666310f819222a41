#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpprobe as people type it: a bare host or address (udp:// to port 123,
# names through getaddrinfo, -4 / -6), lines for a person on a terminal
# (tests/helpers/ptyrun gives it a real one) and records, byte for byte
# as ever, anywhere else; the exit status as ping's (0 when an exchange
# was ok, 1 when none was, 2 for usage); one clear line for a name that
# does not resolve, a host that cannot be reached, and refusals.  All on
# loopback: a name that must not resolve is under .invalid (RFC 6761),
# which is never asked of the network.
. "$(dirname "$0")/../lib.sh"
need_prereq HELPERS
PTY=$NTPX_HELPERS/ptyrun

# ::1 can be bound (a host may run without IPv6).
test_lazy_prereq IPV6 'python3 -c "import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).bind((\"::1\", 0))"'

# The one line a failed command wrote on stderr, and nothing on stdout.
one_line() {	# FILE-PREFIX PATTERN
	test_is "$(wc -l <"$1.err")" 1 &&
	test_grep "$2" "$1.err" &&
	test_is "$(wc -c <"$1.out")" 0
}

test_expect_success 'setup: a reflector at stratum 1, refid GPS' '
	start_reflector -s 1 -r GPS
'

test_expect_success 'HOST:PORT without a scheme: udp, exit 0' '
	ntpprobe -c 3 -i 20ms -w 5s "127.0.0.1:$REFLECT_PORT" >"$TMP/bare.rec" 2>"$TMP/bare.err" &&
	test_is "$(count_status "$TMP/bare.rec" ok)" 3
'

test_expect_success '#endpoint is the URL it stands for' '
	test_grep -x "#endpoint udp://127.0.0.1:$REFLECT_PORT" "$TMP/bare.rec"
'

test_expect_success 'a name: -4 localhost, #endpoint says what it resolved to' '
	ntpprobe -4 -c 2 -i 20ms -w 5s "localhost:$REFLECT_PORT" >"$TMP/name.rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/name.rec" ok)" 2 &&
	test_grep -x "#endpoint udp://localhost:$REFLECT_PORT 127.0.0.1:$REFLECT_PORT" "$TMP/name.rec"
'

test_expect_success 'a URL with an address keeps its #endpoint as given' '
	ntpprobe -c 1 -w 5s "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/url.rec" 2>/dev/null &&
	test_grep -x "#endpoint udp://127.0.0.1:$REFLECT_PORT" "$TMP/url.rec"
'

test_expect_success IPV6 'an IPv6 literal in brackets, bare or with -6' '
	port6=$(free_udp_port) &&
	spawn srv6 ntpreflect --stratum 1 "[::1]:$port6" 2>/dev/null &&
	wait_until 5 udp_listening "$port6" &&
	ntpprobe -6 -c 2 -i 20ms -w 5s "[::1]:$port6" >"$TMP/v6.rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/v6.rec" ok)" 2 &&
	test_grep -x "#endpoint udp://\[::1\]:$port6" "$TMP/v6.rec" &&
	ntpprobe -c 1 -w 5s "udp://[::1]:$port6" >"$TMP/v6url.rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/v6url.rec" ok)" 1
'

test_expect_success '-6 on an IPv4 address: exit 2 (as with ping), one line' '
	test_exit 2 ntpprobe -6 -c 1 "127.0.0.1:$REFLECT_PORT" >"$TMP/fam.out" 2>"$TMP/fam.err" &&
	one_line "$TMP/fam" "^ntpprobe: cannot resolve .127\.0\.0\.1. (IPv6): "
'

test_expect_success 'a name that does not resolve: exit 2 (as with ping), one line' '
	test_exit 2 ntpprobe -c 3 ntp.invalid >"$TMP/nx.out" 2>"$TMP/nx.err" &&
	one_line "$TMP/nx" "^ntpprobe: cannot resolve .ntp\.invalid.: "
'

test_expect_success ROOT 'an unreachable host (no route): exit 1, one line' '
	test_exit 1 unshare -n ntpprobe -c 3 "127.0.0.1:$REFLECT_PORT" >"$TMP/unr.out" 2>"$TMP/unr.err" &&
	one_line "$TMP/unr" "unreachable"
'

test_expect_success 'refused only: exit 1 (none ok), counted' '
	port=$(free_udp_port) &&
	test_exit 1 ntpprobe -c 2 -i 20ms "127.0.0.1:$port" >"$TMP/ref.rec" 2>"$TMP/ref.err" &&
	test_is "$(count_status "$TMP/ref.rec" refused)" 2 &&
	test_grep "^ntpprobe: sent 2, ok 0, lost 0, refused 2" "$TMP/ref.err"
'

test_expect_success 'a server that never answers: exit 1 once the timeouts ran out' '
	start_reflector --allow 10.0.0.0/8 &&
	test_exit 1 ntpprobe -c 2 -i 20ms -w 100ms "127.0.0.1:$REFLECT_PORT" >"$TMP/to.rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/to.rec" timeout)" 2 &&
	stop_pid "$REFLECT_PID" &&
	start_reflector -s 1 -r GPS
'

test_expect_success 'usage errors: exit 2' '
	test_exit 2 ntpprobe 2>/dev/null &&
	test_exit 2 ntpprobe -c 0 localhost 2>/dev/null &&
	test_exit 2 ntpprobe "localhost:65536" 2>/dev/null &&
	test_exit 2 ntpprobe "[::1" 2>/dev/null &&
	test_exit 2 ntpprobe a b 2>/dev/null
'

test_expect_success 'to a pipe: records, the header as ever' '
	ntpprobe -c 3 -i 20ms -w 5s "udp://127.0.0.1:$REFLECT_PORT" 2>"$TMP/pipe.err" | cat >"$TMP/pipe.rec" &&
	grep "^#" "$TMP/pipe.rec" | sed -n 1,4p >"$TMP/pipe.head" &&
	printf "#ntpx-record 1\n#tool ntpprobe %s\n#endpoint udp://127.0.0.1:%s\n#clock realtime\n" \
		"$(ntpprobe --version | awk "{ print \$NF }")" "$REFLECT_PORT" >"$TMP/want.head" &&
	cmp "$TMP/want.head" "$TMP/pipe.head" &&
	test_grep "^#fields seq t1 t2 t3 t4 delay off2 status" "$TMP/pipe.rec" &&
	test_is "$(count_status "$TMP/pipe.rec" ok)" 3
'

test_expect_success 'the summary on stderr: the offset, and the server' '
	test_grep "^ntpprobe: sent 3, ok 3, lost 0, median delay [0-9.]* us, median offset [-+][0-9.]* us$" "$TMP/pipe.err" &&
	test_grep -x "ntpprobe: server stratum 1, refid GPS, leap 0, root delay 0.000 us, root dispersion [0-9.]* us" "$TMP/pipe.err"
'

test_expect_success 'on a terminal: lines for a person, exit 0' '
	"$PTY" ntpprobe -c 3 -i 20ms -w 5s "127.0.0.1:$REFLECT_PORT" >"$TMP/tty.out" &&
	cat "$TMP/tty.out" >&4 &&
	test_grep -x "ntpprobe udp://127.0.0.1:$REFLECT_PORT: one request every 0.020 s, timeout 5.000 s" "$TMP/tty.out" &&
	test_is "$(grep -Ec "^seq=[123] offset=[-+][0-9]+\.[0-9]{3} us delay=[0-9]+\.[0-9]{3} us stratum=1 refid=GPS leap=0 ok$" "$TMP/tty.out")" 3 &&
	test_grep ! "^#" "$TMP/tty.out"
'

# One clock on both sides: no offset beyond half the delay, so the
# numbers on the lines are the exchange'\''s own, not something else.
test_expect_success 'on a terminal: |offset| <= delay / 2 on every line' '
	sed -n "s/^seq=[0-9]* offset=\([-+0-9.]*\) us delay=\([0-9.]*\) us.*/\1 \2/p" "$TMP/tty.out" >"$TMP/od" &&
	test_is "$(wc -l <"$TMP/od")" 3 &&
	awk "{ o = \$1 < 0 ? -\$1 : \$1; if (o > \$2 / 2 + 0.001) bad++ } END { exit bad > 0 }" "$TMP/od"
'

test_expect_success 'on a terminal: the summary in the same terms' '
	test_grep -x -- "--- udp://127.0.0.1:$REFLECT_PORT ---" "$TMP/tty.out" &&
	test_grep -x "sent 3, ok 3, lost 0" "$TMP/tty.out" &&
	test_grep -E "^offset median [-+][0-9.]+ us, min [-+][0-9.]+ us, max [-+][0-9.]+ us, iqr [0-9.]+ us, sd [0-9.]+ us$" "$TMP/tty.out" &&
	test_grep -E "^delay min [0-9.]+ us, median [0-9.]+ us, p99 [0-9.]+ us, max [0-9.]+ us$" "$TMP/tty.out" &&
	sed -n "s/^offset median \([-+0-9.]*\) us, min \([-+0-9.]*\) us, max \([-+0-9.]*\) us.*/\1 \2 \3/p" "$TMP/tty.out" |
		awk "{ exit !(\$2 <= \$3 && \$1 >= \$2 && \$1 <= \$3) }"
'

test_expect_success 'on a terminal, a name: the address it resolved to in the first line' '
	"$PTY" ntpprobe -4 -c 1 -w 5s "localhost:$REFLECT_PORT" >"$TMP/ttyname.out" &&
	test_grep "^ntpprobe udp://localhost:$REFLECT_PORT (127.0.0.1:$REFLECT_PORT): " "$TMP/ttyname.out"
'

test_expect_success 'on a terminal, refused: a line each, exit 1' '
	port=$(free_udp_port) &&
	test_exit 1 "$PTY" ntpprobe -c 2 -i 20ms "127.0.0.1:$port" >"$TMP/ttyref.out" &&
	test_is "$(grep -c "^seq=[12] refused$" "$TMP/ttyref.out")" 2 &&
	test_grep -x "sent 2, ok 0, lost 0, refused 2" "$TMP/ttyref.out"
'

test_expect_success 'on a terminal, --records: the records a pipe gets' '
	"$PTY" ntpprobe --records -c 3 -i 20ms -w 5s "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/ttyrec.out" 2>/dev/null &&
	grep -v "^ntpprobe: " "$TMP/ttyrec.out" >"$TMP/ttyrec.rec" &&
	grep "^#" "$TMP/ttyrec.rec" >"$TMP/a" &&
	grep "^#" "$TMP/pipe.rec" >"$TMP/b" &&
	cmp "$TMP/a" "$TMP/b" &&
	test_is "$(count_status "$TMP/ttyrec.rec" ok)" 3
'

test_expect_success '--human to a pipe: the lines for a person' '
	ntpprobe --human -c 2 -i 20ms -w 5s "127.0.0.1:$REFLECT_PORT" >"$TMP/human.out" 2>"$TMP/human.err" &&
	test_is "$(grep -c "^seq=[12] offset=.* ok$" "$TMP/human.out")" 2 &&
	test_grep -x "sent 2, ok 2, lost 0" "$TMP/human.out" &&
	test_is "$(wc -c <"$TMP/human.err")" 0
'

test_expect_success 'loadgen and ntpreflect take the same forms' '
	port=$(free_udp_port) &&
	spawn srv2 ntpreflect --stratum 1 -4 -c 2 "localhost:$port" 2>/dev/null &&
	wait_until 5 udp_listening "$port" &&
	ntpprobe -c 2 -i 20ms -w 5s "127.0.0.1:$port" >"$TMP/srv2.rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/srv2.rec" ok)" 2 &&
	test_exit 0 wait "$srv2" &&
	test_exit 2 loadgen --sink -d 0 "localhost:99999" 2>/dev/null
'
done_testing
