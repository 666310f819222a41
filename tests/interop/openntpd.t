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

NTPD=$DAEMON_ROOT/usr/sbin/ntpd
NTPCTL=$DAEMON_ROOT/usr/sbin/ntpctl
OLOGNS=$NTPX_HELPERS/ologns.so
[ -x "$OLOGNS" ] || skip_all "no build/helpers/ologns.so (make check builds it)"
ntpctl() { "$NTPCTL" -s "$1"; }

# The privilege-separated engine runs as user ntpd, chrooted into its home
# (root's, not writable by others); ntpctl's socket and the drift file have
# compiled-in places under /var/lib/openntpd.  Whatever this test makes,
# it removes; what was there before stays.
openntpd_home() {
	if ! getent passwd ntpd >/dev/null; then
		useradd --system --no-create-home --home-dir /var/lib/openntpd \
			--shell /usr/sbin/nologin ntpd || return 1
		test_atexit userdel ntpd
	fi
	chroot_dir=$(getent passwd ntpd | cut -d: -f6)
	for d in /var/lib/openntpd "$chroot_dir" /var/lib/openntpd/run /var/lib/openntpd/db; do
		if [ ! -e "$d" ]; then
			mkdir -p "$d" || return 1
			test_atexit rm -rf "$d"
		fi
	done
	chmod 755 "$chroot_dir"
}

synced() { ntpctl status | grep -q 'clock synced'; }

# ntpfilter on the daemon's own samples against ntpctl -s peers.  A
# snapshot counts only when no reply was logged while ntpctl ran.
snapshot() {
	_n1=$(grep -c -e '^reply from' -e 'no reply received' "$TMP/client.log")
	ntpctl peers >"$TMP/peers"
	_n2=$(grep -c -e '^reply from' -e 'no reply received' "$TMP/client.log")
	[ "$_n1" = "$_n2" ] && echo "$_n1" >"$TMP/nq"
}
# ntpctl's peer line: ... tl st next poll offset delay jitter, in ms:
# "TL OFFSET DELAY JITTER", the last three in us.
ctl_peer() {
	awk 'NF >= 7 && $NF ~ /ms$/ { t = $(NF - 6); o = $(NF - 2); d = $(NF - 1); j = $NF
		gsub(/ms/, "", o); gsub(/ms/, "", d); gsub(/ms/, "", j)
		printf "%d %.0f %.0f %.0f\n", t, o * 1000, d * 1000, j * 1000 }' "$1"
}
# The same from ntpfilter's last record: trust, moff2/2, mdelay, djitter.
filter_last() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		{ tr = field("trust"); mo = field("moff2"); md = field("mdelay"); dj = field("djitter") }
		END { printf "%d %.0f %.0f %.0f\n", tr, mo / 2000, md / 1000, dj / 1000 }' "$1"
}
# The log gives each sample to the nanosecond (ologns.so), ntpctl its
# doubles' result to the microsecond: the last digit may differ by one.
near_us() {
	diag "$1 vs $2 us"
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a - b >= -1 && a - b <= 1) }'
}

test_expect_success 'setup: the host clock'\''s state, read before' '
	before=$(clock_state)
'

test_expect_success 'setup: two namespaces, the daemon'\''s and ntpreflect'\''s' '
	daemon_net
'

test_expect_success 'setup: user ntpd, its chroot and /var/lib/openntpd' '
	openntpd_home
'

# 1. Serving with no time source: every answer says unsynchronised.
test_expect_success 'setup: OpenNTPD alone answers' '
	printf "listen on %s\n" "$DAEMON_ADDR" >"$TMP/alone.conf" &&
	daemon_start D1 "$TMP/alone.log" "$NTPD" -d -v -f "$TMP/alone.conf"
'

test_expect_success "CAP_SYS_TIME is not in the daemon's effective set" '
	lacks_cap $D1 25
'

test_expect_success "ntpprobe: OpenNTPD with no source is 'unsynced' (5 of 5)" '
	daemon_probe_all 5 unsynced "$TMP/unsync.rec"
'

test_expect_success 'setup: the lone daemon stops' '
	daemon_stop "$D1"
'

# 2. A client of ntpreflect.  OpenNTPD polls a valid peer every 30 s and
# corrects the clock only when all 8 samples are new, so the shim runs its
# scheduler 10 times faster (NOCLOCK_WARP: monotonic clock and poll
# timeouts only; the wall clock and every timestamp stay real).  Its
# replies are logged to the nanosecond (ologns.so): at the microsecond two
# delays may print alike that the daemon's filter told apart.
test_expect_success 'setup: ntpreflect on port 123' '
	reflector_start
'

test_expect_success 'setup: OpenNTPD as a client of ntpreflect, until ntpctl says synced' '
	printf "listen on %s\nserver %s\n" "$DAEMON_ADDR" "$REFLECT_ADDR" >"$TMP/client.conf" &&
	NOCLOCK_WARP=10 DAEMON_PRELOAD=$OLOGNS daemon_start D2 "$TMP/client.log" "$NTPD" -d -v -f "$TMP/client.conf" &&
	if ! wait_until 180 synced
	then
		diag "not synced: $(tail -n 20 "$TMP/client.log"; cat "$TMP/reflect.err")" &&
		return 1
	fi &&
	ntpctl status >"$TMP/status" &&
	diag "ntpctl -s status: $(cat "$TMP/status")"
'

test_expect_success 'the daemon logged its replies to the nanosecond' '
	test_grep "^reply from [^ ]*: offset -*[0-9]*\.[0-9]\{9\} delay [0-9]*\.[0-9]\{9\}," "$TMP/client.log"
'

test_expect_success 'ntpctl: the peer is valid' '
	test_grep "^1/1 peers valid" "$TMP/status"
'

test_expect_success 'ntpctl: the clock is synced' '
	test_grep "clock synced" "$TMP/status"
'

test_expect_success "the daemon logged 'clock is now synced'" '
	test_grep "clock is now synced" "$TMP/client.log"
'

# 3. ntpfilter on the daemon's own samples against ntpctl -s peers.
test_expect_success 'setup: ntpctl -s peers, and ntpfilter on the samples the daemon had then' '
	wait_until 30 snapshot &&
	sed "s/^/# /" "$TMP/peers" >&2 &&
	awk -v max="$(cat "$TMP/nq")" -f "$(dirname "$0")/ologrec.awk" "$TMP/client.log" >"$TMP/samples" &&
	ntpfilter <"$TMP/samples" >"$TMP/filtered" &&
	set -- $(ctl_peer "$TMP/peers") &&
	c_tl=$1 c_off=$2 c_delay=$3 c_jit=$4 &&
	set -- $(filter_last "$TMP/filtered") &&
	f_tl=$1 f_off=$2 f_delay=$3 f_jit=$4
'

test_expect_success "ntpfilter's moff2/2 is ntpctl's offset, to 1 us" '
	near_us "$f_off" "$c_off"
'

test_expect_success "ntpfilter's mdelay is ntpctl's delay, to 1 us" '
	near_us "$f_delay" "$c_delay"
'

test_expect_success "ntpfilter's djitter is ntpctl's jitter, to 1 us" '
	near_us "$f_jit" "$c_jit"
'

test_expect_success "ntpfilter's trust is ntpctl's trustlevel" '
	test_is "$f_tl" "$c_tl"
'

# 4. Serving synchronised: ntpprobe's exchanges are ok.
test_expect_success 'ntpprobe: OpenNTPD synchronised to ntpreflect answers ok (10 of 10)' '
	daemon_probe_all 10 ok "$TMP/sync.rec"
'

# 5. The clock was never set: the daemon tried (the shim saw it), the
# kernel's discipline state did not move.
test_expect_success "the daemon's adjustments reached the shim" '
	test_grep "^noclock: adjtime" "$TMP/client.log"
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
