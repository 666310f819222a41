# SPDX-License-Identifier: ISC
# tests/interop/daemon.sh - what openntpd.t and ntpsec.t share: a real NTP
# daemon, unpacked from its Debian package (scripts/interop-pkgs), run as a
# live peer of ntpreflect and ntpprobe without ever setting this machine's
# clock.  Source after tests/lib.sh.
#
#   daemon_pkgs NAME       DAEMON_ROOT=build/interop/NAME, fetched if need be;
#                          before the first test: skip_all when it cannot be
#                          had; in a (setup) test: one diag line, status 1
#   daemon_net             two namespaces joined by a veth pair:
#                          $NS_D (192.0.2.1, the daemon), $NS_R (192.0.2.2,
#                          ntpreflect and ntpprobe); removed at exit
#   daemon_run VAR CMD...  spawns CMD in $NS_D with the clock guarded twice:
#                          CAP_SYS_TIME dropped (setpriv) and the noclock
#                          shim preloaded (tests/helpers/noclock.so.c),
#                          after it any in $DAEMON_PRELOAD
#   daemon_start VAR LOG CMD...
#                          daemon_run, its output in LOG, then waits until
#                          the daemon answers ntpprobe (20 s): status 1 and
#                          the log's tail when it does not
#   daemon_probe_all N STATUS REC
#                          N probes of the daemon, 100 ms apart, each
#                          waiting up to 5 s for its reply, into REC:
#                          every one of status STATUS, and ntpprobe's exit
#                          status the one that calls for: 0 for ok, else 1
#                          (REC shown if not)
#   daemon_stop PID        stops the daemon and waits for it and each of
#                          its processes, by PID, then until port 123 is
#                          closed
#   reflector_start        ntpreflect on port 123 of $NS_R (REFLECT_PID),
#                          its stderr in $TMP/reflect.err; waits until it
#                          listens
#   clock_state            the host clock's adjtimex state (read only)
#   lacks_cap PID BIT      the process runs, and its effective
#                          capabilities lack BIT
#   ntpq ARG...            ntpsec's ntpq (Python, python3-ntp unpacked
#                          beside ntpd) on the daemon in $NS_D
#   synced                 ntpq says the daemon is synchronised (leap 00)
#
# A suite is then: daemon_pkgs at the top; setup tests for the clock's
# state, daemon_net, the daemon alone (daemon_start); the checks on it
# ("CAP_SYS_TIME" with lacks_cap, "unsynced" with daemon_probe_all); the
# daemon as a client of reflector_start; "ok" with daemon_probe_all; the
# host clock's state compared at the end.
#
# TEST-NET-1 addresses exist only inside the two namespaces.

DAEMON_ADDR=192.0.2.1
REFLECT_ADDR=192.0.2.2
NOCLOCK=$NTPX_HELPERS/noclock.so
CLOCKSTATE=$NTPX_HELPERS/clockstate

# Like skip_all before the first test; in a test, a failure with the reason.
daemon_skip() {
	[ -n "$_in_test" ] || skip_all "$*"
	diag "$*"
	return 1
}

daemon_pkgs() {
	need_prereq ROOT
	need setpriv ip
	[ -x "$NOCLOCK" ] && [ -x "$CLOCKSTATE" ] ||
		{ daemon_skip "no build/helpers/noclock.so or clockstate (make check builds them)"; return 1; }
	DAEMON_ROOT=$NTPX_TOP/build/interop/$1
	if [ ! -x "$DAEMON_ROOT/usr/sbin/ntpd" ]; then
		"$NTPX_TOP/scripts/interop-pkgs" >"$TMP/pkgs.err" 2>&1 ||
			{ daemon_skip "no $1 package: $(tail -n 1 "$TMP/pkgs.err")"; return 1; }
	fi
}

daemon_net() {
	NS_D=$(uniq_name ntpxd) &&
	NS_R=$(uniq_name ntpxr) &&
	_veth=$(uniq_name vd) &&
	ip netns add "$NS_D" &&
	test_atexit ip netns del "$NS_D" &&
	ip netns add "$NS_R" &&
	test_atexit ip netns del "$NS_R" &&
	ip link add "$_veth" netns "$NS_D" type veth peer name "${_veth}r" netns "$NS_R" &&
	ip -n "$NS_D" addr add "$DAEMON_ADDR/24" dev "$_veth" &&
	ip -n "$NS_R" addr add "$REFLECT_ADDR/24" dev "${_veth}r" &&
	ip -n "$NS_D" link set lo up && ip -n "$NS_R" link set lo up &&
	ip -n "$NS_D" link set "$_veth" up && ip -n "$NS_R" link set "${_veth}r" up
}

# ip netns exec execs (no fork), and so do setpriv and env: the PID is the
# daemon's own.
# At exit, a daemon still running is stopped as daemon_stop does (this
# runs before spawn's kill, and before what was set up earlier: the user
# the daemon runs as).
daemon_run() {
	_v=$1
	shift
	spawn "$_v" ip netns exec "$NS_D" \
		setpriv --bounding-set=-sys_time --inh-caps=-sys_time \
		env LD_PRELOAD="$NOCLOCK${DAEMON_PRELOAD:+ $DAEMON_PRELOAD}" "$@"
	test_atexit "daemon_end $!"
}

daemon_start() {
	_ds_var=$1
	_ds_log=$2
	shift 2
	daemon_run "$_ds_var" "$@" >"$_ds_log" 2>&1
	wait_until 20 daemon_answers && return 0
	diag "the daemon does not answer within 20 s; its log's tail:"
	tail -n 20 "$_ds_log" | sed 's/^/#   /' >&2
	return 1
}

daemon_probe_all() {
	_dp_want=1
	[ "$2" = ok ] && _dp_want=0
	test_exit "$_dp_want" probe_daemon -c "$1" -i 100ms -w 5s >"$3" 2>/dev/null &&
	test_is "$(count_status "$3" "$2")" "$1" && return 0
	diag "$(cat "$3")"
	return 1
}

clock_state() { "$CLOCKSTATE"; }

# CAP_SYS_TIME is bit 25.  A process that is gone has no CapEff to read:
# that fails (a "!" before a test for the bit would pass).
lacks_cap() {
	_eff=$(awk '$1 == "CapEff:" { print $2 }' "/proc/$1/status") &&
	[ -n "$_eff" ] && [ $(((0x$_eff >> $2) & 1)) = 0 ]
}

# Records of ntpprobe, from the reflector's namespace, against the daemon.
probe_daemon() {
	ip netns exec "$NS_R" "$NTPX_BIN/ntpprobe" "$@" "udp://$DAEMON_ADDR:123"
}

# The daemon answers: a reply came (not timeout, not refused: a port
# still closed), the status found by name.
daemon_answers() {
	probe_daemon -c 1 -w 200ms >"$TMP/answers.rec" 2>/dev/null
	rec_status "$TMP/answers.rec" | awk '$2 != "timeout" && $2 != "refused" { f = 1 } END { exit !f }'
}

# Nothing listens on port 123 in the daemon's namespace any more (a
# stopped daemon's helper processes are gone too).
daemon_gone() { ! ip netns exec "$NS_D" ss -Hlun "sport = :123" | grep -q .; }

# The PIDs of PID's processes: PID and its descendants (OpenNTPD's
# privilege-separated engine and resolver, ntpd's DNS helper), found by
# parent PID.
daemon_pids() {
	echo "$1"
	for _dc in $(pgrep -P "$1"); do daemon_pids "$_dc"; done
}
# None of the PIDs runs any more (a child of the daemon is no child of
# this shell, which cannot wait for it).
pids_gone() {
	for _pg in "$@"; do ! kill -0 "$_pg" 2>/dev/null || return 1; done
}
# daemon_end PID: SIGTERM to the daemon spawned as PID, then wait for
# it and for each process it had, by PID: a process that outlives the
# daemon would keep its user (userdel: "user ntpd is currently used by
# process") and its port.  Once only: a PID stopped is no longer ours.
daemon_end() {
	eval "[ -z \"\${_daemon_ended_$1:-}\" ]" || return 0
	eval "_daemon_ended_$1=1"
	_de=$(daemon_pids "$1")
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	# shellcheck disable=SC2086
	wait_until 10 pids_gone $_de
}
# Stops the daemon spawned as PID and waits until it is gone.
daemon_stop() {
	daemon_end "$1" &&
	wait_until 10 daemon_gone
}

# ntpsec's ntpq is Python (python3-ntp, unpacked beside ntpd).
ntpq() {
	ip netns exec "$NS_D" env PYTHONPATH="$DAEMON_ROOT/usr/lib/python3/dist-packages" \
		python3 "$DAEMON_ROOT/usr/bin/ntpq" -4 -n "$@" 127.0.0.1
}
synced() { ntpq -c "rv 0 leap" 2>/dev/null | grep -q 'leap=00'; }

# ntpreflect, the daemon's server, on port 123 of the other namespace.
reflect_up() { ip netns exec "$NS_R" ss -Hlun "sport = :123" | grep -q .; }
reflector_start() {
	spawn REFLECT_PID ip netns exec "$NS_R" "$NTPX_BIN/ntpreflect" --stratum 1 "udp://$REFLECT_ADDR:123" 2>"$TMP/reflect.err" &&
	wait_until 10 reflect_up
}
