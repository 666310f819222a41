#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect --allow and --ratelimit on loopback, with ntpprobe choosing
# its source address (src=): the allowed client is answered, the other is
# ignored and counted; over the rate limit the client gets RATE kisses,
# reports kod and slows down until it is under the limit; malformed
# options are refused in one line.
. "$(dirname "$0")/../lib.sh"
need ntpprobe ntpreflect

# The records of FILE after a kod that came less than 62 ms after it.
short_gaps() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next }
		/^#/ { next } { if (k) { g = (field("t1") - p) / 1e6; if (g < 62) bad++ }
		k = (field("status") == "kod"); p = field("t1") } END { print bad + 0 }' "$1"
}
# A usage error: status 2, the line naming the problem (then "Try ...
# --help").
bad() {
	ntpreflect "$@" udp://127.0.0.1:1 >/dev/null 2>"$TMP/bad"
	[ $? = 2 ] && head -n 1 "$TMP/bad" | grep -q -e "bad network '$2'" -e "bad rate limit '$2'"
}

# 1. --allow: 127.0.0.2 is, 127.0.0.1 is not.
test_expect_success 'setup: a reflector with --allow 127.0.0.2/32 --allow 10.0.0.0/8' '
	start_reflector --allow 127.0.0.2/32 --allow 10.0.0.0/8
'

test_expect_success 'a client inside --allow is answered (20 of 20)' '
	ntpprobe -i 20ms -w 5s -c 20 "udp://127.0.0.1:$REFLECT_PORT?src=127.0.0.2" >"$TMP/in" 2>/dev/null &&
	test_is "$(count_status "$TMP/in" ok)" 20
'

test_expect_success 'a client outside gets nothing (10 of 10 timeout, exit 1)' '
	test_exit 1 ntpprobe -i 20ms -w 50ms -c 10 "udp://127.0.0.1:$REFLECT_PORT?src=127.0.0.1" >"$TMP/out" 2>/dev/null &&
	test_is "$(count_status "$TMP/out" timeout)" 10
'

test_expect_success 'the reflector counts 20 answered, 10 denied' '
	stop_pid "$REFLECT_PID" &&
	test_is "$(sed -n "s/.*answered \([0-9]*\).*denied \([0-9]*\).*/\1 \2/p" "$TMP/reflect.err")" "20 10"
'

# 2. --ratelimit 20/4 against a probe at 200 Hz: the burst, then a kiss.
# The probe waits up to 5 s for each reply (-w 5s, a limit on a failure):
# with the interval's 5 ms a reply that a busy machine delays is late,
# counted by neither ok nor kod, and the reflector's counts would not
# match the records.
test_expect_success 'setup: a probe at 200 Hz against a reflector with --ratelimit 20/4' '
	start_reflector --ratelimit 20/4 &&
	ntpprobe -i 5ms -w 5s -c 40 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rl" 2>"$TMP/rl.err" &&
	stop_pid "$REFLECT_PID" &&
	kod=$(count_status "$TMP/rl" kod) &&
	okn=$(count_status "$TMP/rl" ok) &&
	kiss=$(sed -n "s/.*kiss \([0-9]*\).*/\1/p" "$TMP/reflect.err") &&
	ans=$(sed -n "s/.*answered \([0-9]*\).*/\1/p" "$TMP/reflect.err") &&
	diag "probe: ok $okn kod $kod; reflector: $(head -n 1 "$TMP/reflect.err")"
'

test_expect_success 'ntpprobe reports kod for the RATE kisses' '
	test "$kod" -ge 1
'

test_expect_success 'each kod is one of the reflector'\''s kisses' '
	test_is "$kod" "${kiss:-0}"
'

test_expect_success 'each ok is one of its answers' '
	test_is "$okn" "${ans:-0}"
'

test_expect_success 'every exchange is accounted for' '
	test_is "$((okn + kod + $(count_status "$TMP/rl" timeout)))" 40
'

# After each kod the next request comes at least twice the interval later,
# and at least 2^-4 s (20/s -> poll -4, 62.5 ms).
test_expect_success 'after each kiss the probe waits at least the kiss'\''s poll (62.5 ms)' '
	test_is "$(short_gaps "$TMP/rl")" 0
'

# Slowed to under the limit, it is answered from then on: the last ten ok.
test_expect_success 'slowed down, the probe'\''s last 10 exchanges are ok' '
	test_is "$(rec_status "$TMP/rl" | tail -n 10 | awk "\$2 == \"ok\"" | wc -l)" 10
'

# 3. Malformed options: status 2, the value named.
test_expect_success '--allow 192.0.2.1/24 (host bits) is refused' '
	bad --allow 192.0.2.1/24
'

test_expect_success '--allow junk is refused' '
	bad --allow not-an-address
'

test_expect_success '--ratelimit 10/0 is refused' '
	bad --ratelimit 10/0
'
done_testing
