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
plan 10

NTPD=$DAEMON_ROOT/usr/sbin/ntpd
before=$(clock_state)
daemon_net || { echo "Bail out! no namespaces"; exit 1; }
# ntpq is Python (python3-ntp, unpacked beside it).
ntpq() {
	ip netns exec "$NS_D" env PYTHONPATH="$DAEMON_ROOT/usr/lib/python3/dist-packages" \
		python3 "$DAEMON_ROOT/usr/bin/ntpq" -4 -n "$@" 127.0.0.1
}
# No drift file, no statistics; mode 6 from the loopback allowed (ntpq).
conf() {
	cat <<CONF
logfile $TMP/ntpd-$1.log
restrict default
restrict 127.0.0.1
CONF
}

# 1. Serving with no time source: every answer says unsynchronised.
conf alone >"$TMP/alone.conf"
daemon_run D1 "$NTPD" -n -c "$TMP/alone.conf" >"$TMP/alone.out" 2>&1
wait_until 20 daemon_answers
ok "CAP_SYS_TIME is not in the daemon's effective set" eval "! has_cap $D1 25"
probe_daemon -c 5 -i 100ms >"$TMP/unsync.rec" 2>/dev/null
n=$(count_status "$TMP/unsync.rec" unsynced)
[ "$n" = 5 ] || diag "$(cat "$TMP/unsync.rec")"
is "$n" 5 "ntpprobe: ntpsec with no source is 'unsynced' (5 of 5)"
daemon_stop "$D1"

# 2. A client of ntpreflect, polling every second (minpoll 0).
spawn R ip netns exec "$NS_R" "$NTPX_BIN/ntpreflect" "udp://$REFLECT_ADDR:123" 2>"$TMP/reflect.err"
reflect_up() { ip netns exec "$NS_R" ss -Hlun "sport = :123" | grep -q .; }
wait_until 10 reflect_up
{ conf client; echo "server $REFLECT_ADDR iburst minpoll 0 maxpoll 0"; } >"$TMP/client.conf"
daemon_run D2 "$NTPD" -n -c "$TMP/client.conf" >"$TMP/client.out" 2>&1
synced() { ntpq -c "rv 0 leap" 2>/dev/null | grep -q 'leap=00'; }
wait_until 120 synced || diag "not synced: $(ntpq -c 'rv 0' -c peers 2>&1; tail -n 20 "$TMP/ntpd-client.log")"
rv=$(ntpq -c "rv 0 leap,stratum" 2>&1)
peers=$(ntpq -c peers 2>&1)
diag "ntpq: $rv"
diag "$peers"
ok "ntpq: leap 00, synchronised ($rv)" eval "echo '$rv' | grep -q 'leap=00'"
ok "ntpq: stratum 2, one above ntpreflect's" eval "echo '$rv' | grep -q 'stratum=2'"
ok "ntpq: ntpreflect is the system peer (*)" eval "echo '$peers' | grep -q '^\*$REFLECT_ADDR'"

# 3. Serving synchronised: ntpprobe's exchanges are ok.
probe_daemon -c 10 -i 100ms >"$TMP/sync.rec" 2>/dev/null
n=$(count_status "$TMP/sync.rec" ok)
is "$n" 10 "ntpprobe: ntpsec synchronised to ntpreflect answers ok (10 of 10)"
# The median of off2/2 against ntpreflect's clock, which is this clock.
med=$(data_lines "$TMP/sync.rec" | awk '$8 == "ok" { print $7 / 2000 }' | sort -g |
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
ok "|median offset| against ntpsec below 1 ms ($med us)" \
	awk -v m="$med" 'BEGIN { exit !(m != "" && m > -1000 && m < 1000) }'

# 4. The clock was never set: the daemon tried (the shim saw it), the
# kernel's discipline state did not move.
ok "the daemon's adjustments reached the shim" grep -q '^noclock: ' "$TMP/client.out"
ok "CAP_SYS_TIME is not in the client daemon's effective set" eval "! has_cap $D2 25"
daemon_stop "$D2"
is "$(clock_state)" "$before" "the host clock's state is what it was"
done_testing
