#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpsec's ntpd as a live peer, unpacked from Debian's package, never
# installed (it conflicts with chrony): as a client of ntpreflect it
# selects the peer and synchronises (ntpq); ntpprobe reads it serving
# unsynchronised, then synchronised.  It runs in a namespace of its own
# (port 123) with CAP_SYS_TIME dropped and the noclock shim preloaded, and
# the host clock's state must be the same before and after.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/daemon.sh"
need python3
daemon_pkgs ntpsec

NTPD=$DAEMON_ROOT/usr/sbin/ntpd
# No drift file, no statistics; mode 6 from the loopback allowed (ntpq).
conf() {
	printf 'logfile %s\nrestrict default\nrestrict 127.0.0.1\n' "$TMP/ntpd-$1.log"
}
# The median of off2/2, in us, of the ok records of REC.
median_offset() {
	rec_cols "$1" status off2 | awk '$1 == "ok" { print $2 / 2000 }' | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
below_1ms() { awk -v m="$1" 'BEGIN { exit !(m != "" && m > -1000 && m < 1000) }'; }

test_expect_success 'setup: the host clock'\''s state, read before' '
	before=$(clock_state)
'

test_expect_success 'setup: two namespaces, the daemon'\''s and ntpreflect'\''s' '
	daemon_net
'

# 1. Serving with no time source: every answer says unsynchronised.
test_expect_success 'setup: ntpsec alone answers' '
	conf alone >"$TMP/alone.conf" &&
	daemon_start D1 "$TMP/alone.out" "$NTPD" -n -c "$TMP/alone.conf"
'

test_expect_success "CAP_SYS_TIME is not in the daemon's effective set" '
	lacks_cap $D1 25
'

test_expect_success "ntpprobe: ntpsec with no source is 'unsynced' (5 of 5)" '
	daemon_probe_all 5 unsynced "$TMP/unsync.rec"
'

test_expect_success 'setup: the lone daemon stops' '
	daemon_stop "$D1"
'

# 2. A client of ntpreflect, polling every second (minpoll 0).
test_expect_success 'setup: ntpreflect on port 123' '
	reflector_start
'

test_expect_success 'setup: ntpsec as a client of ntpreflect, until ntpq says leap 00' '
	{ conf client && echo "server $REFLECT_ADDR iburst minpoll 0 maxpoll 0"; } >"$TMP/client.conf" &&
	daemon_start D2 "$TMP/client.out" "$NTPD" -n -c "$TMP/client.conf" &&
	if ! wait_until 120 synced
	then
		diag "not synced: $(ntpq -c "rv 0" -c peers 2>&1; tail -n 20 "$TMP/ntpd-client.log")" &&
		return 1
	fi &&
	ntpq -c "rv 0 leap,stratum" >"$TMP/rv" 2>&1 &&
	ntpq -c peers >"$TMP/peers" 2>&1 &&
	diag "ntpq: $(cat "$TMP/rv")" &&
	sed "s/^/# /" "$TMP/peers" >&2
'

test_expect_success 'ntpq: leap 00, synchronised' '
	test_grep "leap=00" "$TMP/rv"
'

test_expect_success "ntpq: stratum 2, one above ntpreflect's" '
	test_grep "stratum=2" "$TMP/rv"
'

test_expect_success 'ntpq: ntpreflect is the system peer (*)' '
	test_grep "^\*$REFLECT_ADDR" "$TMP/peers"
'

# 3. Serving synchronised: ntpprobe's exchanges are ok.
test_expect_success 'ntpprobe: ntpsec synchronised to ntpreflect answers ok (10 of 10)' '
	daemon_probe_all 10 ok "$TMP/sync.rec"
'

# The median of off2/2 against ntpreflect's clock, which is this clock.
test_expect_success '|median offset| against ntpsec below 1 ms' '
	med=$(median_offset "$TMP/sync.rec") &&
	diag "median offset $med us" &&
	below_1ms "$med"
'

# 4. The clock was never set: the daemon tried (the shim saw it), the
# kernel's discipline state did not move.
test_expect_success "the daemon's adjustments reached the shim" '
	test_grep "^noclock: " "$TMP/client.out"
'

test_expect_success "CAP_SYS_TIME is not in the client daemon's effective set" '
	lacks_cap $D2 25
'

test_expect_success 'setup: the client daemon stops' '
	daemon_stop "$D2"
'

test_expect_success "the host clock's state is what it was" '
	test_is "$(clock_state)" "$before"
'
done_testing
