#!/bin/sh
# SPDX-License-Identifier: ISC
# OpenNTPD 6.2 as a live peer, unpacked from Debian's package, never
# installed (it conflicts with chrony): as a client of ntpreflect it marks
# the peer valid and synchronises; ntpfilter fed the daemon's own samples
# (its debug log) shows what ntpctl shows; ntpprobe reads it serving
# unsynchronised, then synchronised.  It runs in a namespace of its own
# (port 123) with CAP_SYS_TIME dropped and the noclock shim preloaded, and
# the host clock's state must be the same before and after.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/daemon.sh"
daemon_pkgs openntpd
plan 13

NTPD=$DAEMON_ROOT/usr/sbin/ntpd
NTPCTL=$DAEMON_ROOT/usr/sbin/ntpctl
before=$(clock_state)
daemon_net || { echo "Bail out! no namespaces"; exit 1; }

# The privilege-separated engine runs as user ntpd, chrooted into its home
# (root's, not writable by others); ntpctl's socket and the drift file have
# compiled-in places under /var/lib/openntpd.  Whatever this test makes,
# it removes; what was there before stays.
if ! getent passwd ntpd >/dev/null; then
	useradd --system --no-create-home --home-dir /var/lib/openntpd \
		--shell /usr/sbin/nologin ntpd || { echo "Bail out! useradd ntpd"; exit 1; }
	cleanup userdel ntpd
fi
chroot_dir=$(getent passwd ntpd | cut -d: -f6)
for d in /var/lib/openntpd "$chroot_dir"; do
	if [ ! -e "$d" ]; then
		mkdir -p "$d"
		cleanup rm -rf "$d"
	fi
done
for d in /var/lib/openntpd/run /var/lib/openntpd/db; do
	[ -e "$d" ] || { mkdir -p "$d"; cleanup rm -rf "$d"; }
done
chmod 755 "$chroot_dir"
ntpctl() { "$NTPCTL" -s "$1"; }

# 1. Serving with no time source: every answer says unsynchronised.
printf 'listen on %s\n' "$DAEMON_ADDR" >"$TMP/alone.conf"
daemon_run D1 "$NTPD" -d -v -f "$TMP/alone.conf" >"$TMP/alone.log" 2>&1
wait_until 20 daemon_answers
ok "CAP_SYS_TIME is not in the daemon's effective set" eval "! has_cap $D1 25"
probe_daemon -c 5 -i 100ms >"$TMP/unsync.rec" 2>/dev/null
n=$(count_status "$TMP/unsync.rec" unsynced)
[ "$n" = 5 ] || diag "$(cat "$TMP/unsync.rec")"
is "$n" 5 "ntpprobe: OpenNTPD with no source is 'unsynced' (5 of 5)"
daemon_stop "$D1"

# 2. A client of ntpreflect.  OpenNTPD polls a valid peer every 30 s and
# corrects the clock only when all 8 samples are new, so the shim runs its
# scheduler 10 times faster (NOCLOCK_WARP: monotonic clock and poll
# timeouts only; the wall clock and every timestamp stay real).
spawn R ip netns exec "$NS_R" "$NTPX_BIN/ntpreflect" "udp://$REFLECT_ADDR:123" 2>"$TMP/reflect.err"
reflect_up() { ip netns exec "$NS_R" ss -Hlun "sport = :123" | grep -q .; }
wait_until 10 reflect_up
printf 'listen on %s\nserver %s\n' "$DAEMON_ADDR" "$REFLECT_ADDR" >"$TMP/client.conf"
NOCLOCK_WARP=10 daemon_run D2 "$NTPD" -d -v -f "$TMP/client.conf" >"$TMP/client.log" 2>&1
synced() { ntpctl status | grep -q 'clock synced'; }
wait_until 180 synced || diag "not synced: $(tail -n 20 "$TMP/client.log"; cat "$TMP/reflect.err")"
st=$(ntpctl status)
diag "ntpctl -s status: $st"
ok "ntpctl: the peer is valid ($st)" eval "echo '$st' | grep -q '^1/1 peers valid'"
ok "ntpctl: the clock is synced" eval "echo '$st' | grep -q 'clock synced'"
ok "the daemon logged 'clock is now synced'" grep -q 'clock is now synced' "$TMP/client.log"

# 3. ntpfilter on the daemon's own samples against ntpctl -s peers.  A
# snapshot counts only when no reply was logged while ntpctl ran.
snapshot() {
	_n1=$(grep -c -e '^reply from' -e 'no reply received' "$TMP/client.log")
	ntpctl peers >"$TMP/peers"
	_n2=$(grep -c -e '^reply from' -e 'no reply received' "$TMP/client.log")
	[ "$_n1" = "$_n2" ] && echo "$_n1" >"$TMP/nq"
}
wait_until 30 snapshot
diag "$(cat "$TMP/peers")"
awk -v max="$(cat "$TMP/nq")" -f "$(dirname "$0")/ologrec.awk" "$TMP/client.log" |
	ntpfilter >"$TMP/filtered"
# ntpctl's peer line: ... tl st next poll offset delay jitter, in ms.
set -- $(awk 'NF >= 7 && $NF ~ /ms$/ { t = $(NF - 6); o = $(NF - 2); d = $(NF - 1); j = $NF
	gsub(/ms/, "", o); gsub(/ms/, "", d); gsub(/ms/, "", j)
	printf "%d %.0f %.0f %.0f\n", t, o * 1000, d * 1000, j * 1000 }' "$TMP/peers")
c_tl=$1 c_off=$2 c_delay=$3 c_jit=$4
set -- $(awk '/^#fields/ { for (i = 2; i <= NF; i++) c[$i] = i - 1; next } /^#/ { next }
	{ l = $0 } END { split(l, f, " ")
	printf "%d %.0f %.0f %.0f\n", f[c["trust"]], f[c["moff2"]] / 2000, f[c["mdelay"]] / 1000, f[c["djitter"]] / 1000 }' "$TMP/filtered")
f_tl=$1 f_off=$2 f_delay=$3 f_jit=$4
# The log prints each sample to the microsecond, ntpctl its doubles'
# result to the microsecond: the last digit may differ by one.
near_us() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a - b >= -1 && a - b <= 1) }'; }
ok "ntpfilter's moff2/2 is ntpctl's offset ($f_off vs $c_off us)" near_us "$f_off" "$c_off"
ok "ntpfilter's mdelay is ntpctl's delay ($f_delay vs $c_delay us)" near_us "$f_delay" "$c_delay"
ok "ntpfilter's djitter is ntpctl's jitter ($f_jit vs $c_jit us)" near_us "$f_jit" "$c_jit"
is "$f_tl" "$c_tl" "ntpfilter's trust is ntpctl's trustlevel"

# 4. Serving synchronised: ntpprobe's exchanges are ok.
probe_daemon -c 10 -i 100ms >"$TMP/sync.rec" 2>/dev/null
n=$(count_status "$TMP/sync.rec" ok)
is "$n" 10 "ntpprobe: OpenNTPD synchronised to ntpreflect answers ok (10 of 10)"

# 5. The clock was never set: the daemon tried (the shim saw it), the
# kernel's discipline state did not move.
ok "the daemon's adjustments reached the shim" grep -q '^noclock: adjtime' "$TMP/client.log"
ok "CAP_SYS_TIME is not in the client daemon's effective set" eval "! has_cap $D2 25"
daemon_stop "$D2"
is "$(clock_state)" "$before" "the host clock's state is what it was"
done_testing
