# SPDX-License-Identifier: ISC
# ntpx-family.sh - what the experiment families (bin/ntpx-freerun,
# ntpx-loaded, ntpx-bursts, ntpx-directional, ntpx-recovery, ntpx-loss,
# ntpx-steady) share: options, endpoints, the two sides' command prefixes,
# the event stream and the run directory.  Sourced, not run.
#
# A family runs ONE condition on ONE transport into ONE run directory:
#   DIR/probe.rec    the client's records (ntpprobe; one stream, one header)
#   DIR/load.tsv     loadgen's interval lines with a dir column (c2r, r2c)
#   DIR/server.rec   ntpreflect --log
#   DIR/summary.txt  offsetfit's summary, then the family's own keys
#   DIR/done         written last
# and appends its events to the events file (t_ns run event detail).
#
# The reference side runs through $NTPX_REF_EXEC, the client side through
# $NTPX_CLIENT_EXEC (e.g. "ntpx-lab -n X exec ref", "ssh -q refhost"),
# each command under tether (bin/tether, doc/tether.1), which gives it a
# lifetime and an output that do not depend on the prefix.
# See doc/ntpx-families.1.
#
# Every function here starts with fam_, and so does every option that
# fam_parse sets (bin/ntpx-setup.sh, which it sources, adds die, say,
# usage_error, put and ntpx_*), so that a family script's own names (and
# the shell's builtins: bg) are never shadowed.

# A library: it reads what the family script set before sourcing it (prog,
# family, fam_what, ...) and sets what the script reads (fam_seed, ...),
# some through eval (fam_bg VAR), which shellcheck cannot follow.
# shellcheck disable=SC2034,SC2154

case ${0##*/} in
ntpx-family.sh) echo "ntpx-family.sh: sourced by the ntpx-FAMILY scripts, not run (see ntpx-families(1))" >&2; exit 2 ;;
esac

# What every ntpx shell command shares (bin/ntpx-setup.sh, beside this
# file): usage_error, say, put, ntpx_on, the version, and ntpx_fields
# (fields(), field(NAME)), ahead of every awk program here that reads a
# record.
# shellcheck source=ntpx-setup.sh.in
. "$ntpx_lib/ntpx-setup.sh"

fam_die() { say "$*"; fam_cleanup; exit 1; }

fam_usage() {
	cat <<EOF
usage: $prog -o DIR [options]
$fam_what

  -o, --out DIR          the run directory (made; must not hold a done file)
      --condition NAME   one of: $fam_conditions (default $fam_default)
  -t, --transport NAME   label, and the scheme by its prefix: udp*, uudp*
                         (via XDP), ib*; in the lab (ntpx-lab env) the names
                         udpslow, udpfast, uudpfast, ib fill in the rest
  -d, --duration DUR     how long the run measures (default $fam_default_duration)
  -i, --interval DUR     probe interval (default 1s)
  -E, --events FILE      append events here (default DIR/events.tsv)
  -R, --run IDX          run number for the events (default 0)
      --rep N            repetition (for summary.txt)
      --ref ADDR         the reference's address on the path
      --client ADDR      the client's address on the path
      --ref-dev IF       the reference's interface on the path
      --client-dev IF    the client's interface on the path
      --port N           NTP port (default 12300)
      --load-port N      loadgen port (default 9000, and N+1 back)
      --server-endpoint URL  what ntpreflect serves (overrides the above)
      --client-endpoint URL  what ntpprobe asks (overrides the above)
      --capacity RATE    the path's calibrated rate (default: calibrate)
      --load RATE        load: a rate (6G, 800M) or a percentage of the
                         capacity, above 100 allowed (default 90%;
                         directional 120%, so that the queue fills)
      --calibrate        only calibrate the path; print capacity_bps
      --list-conditions  print the conditions and exit
      --seed S           lossinject's and the sim clock's seed (default 1)
      --quiet DUR        bursts: the quiet time between 2 s bursts (6s)
      --outage DUR       recovery: how long the link stays down (3s)
  -h, --help             this text
      --version          the version

Environment: NTPX_REF_EXEC and NTPX_CLIENT_EXEC, the command prefixes
of the two sides (default: none, both here), each command run under
tether; NTPX_REMOTE_BIN, the directory of the tools (and tether) there
(default: this one); NTPX_TETHER_TAG, a tag for tether --list/--kill.
EOF
}

# Durations: 250ms, 2s, 1m, 1h, 500us, a bare number of seconds -> ns,
# parsed as every tool parses them (ntpx-units, lib/opt_units.c).
fam_dur_ns() { "$fam_bin/ntpx-units" duration "$1" 2>/dev/null; }
fam_ns_s() { awk -v n="$1" 'BEGIN { printf "%.3f\n", n / 1e9 }'; }
fam_now_ns() { date +%s%N; }

# fam_parse "$@": the options into fam_* variables (fam_out, the run
# directory; fam_cond, fam_transport, fam_seed; fam_duration as given and
# fam_dur in ns; ...), which the family script reads: like the functions,
# every name set here starts with fam_.
fam_parse() {
	fam_out= fam_cond=$fam_default fam_transport= fam_duration=$fam_default_duration
	fam_interval=1s fam_events= fam_run=0 fam_rep=1 fam_ref_addr= fam_cli_addr=
	fam_ref_dev= fam_cli_dev= fam_port=12300 fam_load_port=9000 fam_server_ep=
	fam_client_ep= fam_capacity= fam_load_rate=${fam_default_load:-90%} fam_seed=1
	fam_quiet=6s fam_outage=3s fam_calibrate_only=
	while [ $# -gt 0 ]; do
		case $1 in
		-h|--help) ntpx_help fam_usage ;;
		--version) ntpx_help ntpx_say_version ;;
		--list-conditions) echo "$fam_conditions"; exit 0 ;;
		--calibrate) fam_calibrate_only=1; shift; continue ;;
		-o|--out|-c|--condition|-t|--transport|-d|--duration|-i|--interval|\
		-E|--events|-R|--run|--rep|--ref|--client|--ref-dev|--client-dev|\
		--port|--load-port|--server-endpoint|--client-endpoint|--capacity|\
		--load|--seed|--quiet|--outage)
			[ $# -ge 2 ] || usage_error "option '$1' needs a value"
			case $1 in
			-o|--out) fam_out=$2 ;;
			-c) old_spelling -c --condition; fam_cond=$2 ;;
			--condition) fam_cond=$2 ;;
			-t|--transport) fam_transport=$2 ;; -d|--duration) fam_duration=$2 ;;
			-i|--interval) fam_interval=$2 ;; -E|--events) fam_events=$2 ;;
			-R|--run) fam_run=$2 ;; --rep) fam_rep=$2 ;; --ref) fam_ref_addr=$2 ;;
			--client) fam_cli_addr=$2 ;; --ref-dev) fam_ref_dev=$2 ;;
			--client-dev) fam_cli_dev=$2 ;; --port) fam_port=$2 ;;
			--load-port) fam_load_port=$2 ;; --server-endpoint) fam_server_ep=$2 ;;
			--client-endpoint) fam_client_ep=$2 ;; --capacity) fam_capacity=$2 ;;
			--load) fam_load_rate=$2 ;; --seed) fam_seed=$2 ;;
			--quiet) fam_quiet=$2 ;; --outage) fam_outage=$2 ;;
			esac
			shift 2 ;;
		*) usage_error "unknown argument '$1'" ;;
		esac
	done
	[ -n "$fam_out" ] || usage_error "missing --out DIR"
	case " $fam_conditions " in
	*" $fam_cond "*) ;;
	*) usage_error "unknown condition '$fam_cond' (one of: $fam_conditions)" ;;
	esac
	fam_dur=$(fam_dur_ns "$fam_duration") && [ "$fam_dur" -gt 0 ] || usage_error "bad duration '$fam_duration'"
	fam_ivl=$(fam_dur_ns "$fam_interval") && [ "$fam_ivl" -gt 0 ] || usage_error "bad interval '$fam_interval'"
	fam_quiet_ns=$(fam_dur_ns "$fam_quiet") || usage_error "bad quiet time '$fam_quiet'"
	fam_outage_ns=$(fam_dur_ns "$fam_outage") || usage_error "bad outage '$fam_outage'"
	for _v in "$fam_port" "$fam_load_port" "$fam_run" "$fam_rep"; do
		case $_v in ''|*[!0-9]*) usage_error "bad number '$_v'" ;; esac
	done
	fam_endpoints
	[ -n "$fam_events" ] || fam_events=$fam_out/events.tsv
	fam_ref_x=${NTPX_REF_EXEC:-}
	fam_cli_x=${NTPX_CLIENT_EXEC:-}
	[ ! -e "$fam_out/done" ] || fam_die "$fam_out is a finished run (it has a done file)"
	mkdir -p "$fam_out" || fam_die "cannot make $fam_out"
	rm -f "$fam_out"/probe.rec "$fam_out"/load.tsv "$fam_out"/server.rec "$fam_out"/summary.txt
	fam_pids=
	trap 'fam_cleanup; exit 143' TERM
	trap 'fam_cleanup; exit 130' INT
	trap 'fam_cleanup; exit 129' HUP
	if [ -n "$fam_calibrate_only" ]; then
		fam_capacity=
		fam_load_setup
		fam_load_teardown
		rm -f "$fam_out/load.tsv" "$fam_out/load.err"
		echo "capacity_bps $fam_capacity"
		exit 0
	fi
}

# The endpoints from the transport's name, the lab (ntpx-lab env) and the
# address options.  Load always runs over kernel UDP on the same path.
fam_endpoints() {
	case $fam_transport in
	'') [ -n "$fam_client_ep" ] || usage_error "missing --transport (or --client-endpoint)"
	    fam_transport=${fam_client_ep%%:*} ;;
	esac
	case $fam_transport in
	*[!A-Za-z0-9_]*) usage_error "transport name '$fam_transport' must be letters, digits or '_'" ;;
	esac
	_path=
	case $fam_transport in
	*slow) _path=SLOW ;; *fast) _path=FAST ;;
	esac
	if [ -n "$_path" ] && [ -n "${NTPX_LAB:-}" ]; then
		eval ": \${fam_ref_addr:=\$NTPX_REF_$_path} \${fam_cli_addr:=\$NTPX_CLIENT_$_path}"
		eval ": \${fam_ref_dev:=\$NTPX_DEV_$_path} \${fam_cli_dev:=\$NTPX_DEV_$_path}"
	fi
	case $fam_transport in
	uudp*) scheme=uudp q_srv="?dev=$fam_ref_dev&via=xdp" q_cli="?dev=$fam_cli_dev&via=xdp" ;;
	udp*) scheme=udp q_srv="?dev=$fam_ref_dev" q_cli="?dev=$fam_cli_dev" ;;
	ib*) scheme=ib q_srv="?dev=$fam_ref_dev" q_cli="?dev=$fam_cli_dev" ;;
	*) scheme=${fam_transport%%[0-9]*} q_srv= q_cli= ;;
	esac
	if [ -z "$fam_server_ep" ]; then
		[ -n "$fam_ref_addr" ] && [ -n "$fam_ref_dev" ] ||
			usage_error "transport '$fam_transport': give --ref and --ref-dev, or --server-endpoint"
		case $scheme in
		udp) fam_server_ep="udp://$fam_ref_addr:$fam_port$q_srv" ;;
		*) fam_server_ep="$scheme://$fam_ref_addr:$fam_port$q_srv" ;;
		esac
	fi
	if [ -z "$fam_client_ep" ]; then
		[ -n "$fam_ref_addr" ] && [ -n "$fam_cli_dev" ] ||
			usage_error "transport '$fam_transport': give --ref and --client-dev, or --client-endpoint"
		fam_client_ep="$scheme://$fam_ref_addr:$fam_port$q_cli"
	fi
	# Background load, both ways, on the same interfaces: kernel UDP for
	# udp and uudp (one uudp endpoint per interface is the probe's), UD
	# sends of 4 KiB without GSO for ib (doc/hardware.md, "loadgen over
	# ib"; not tried on hardware).
	lp_back=$((fam_load_port + 1))
	if [ "$scheme" = ib ]; then
		sink_ref="ib://$fam_ref_addr:$fam_load_port?dev=$fam_ref_dev"
		sink_cli="ib://$fam_cli_addr:$lp_back?dev=$fam_cli_dev"
		load_c2r="ib://$fam_ref_addr:$fam_load_port?dev=$fam_cli_dev"
		load_r2c="ib://$fam_cli_addr:$lp_back?dev=$fam_ref_dev"
		load_opts="--no-gso --size 4096"
	else
		sink_ref="udp://0.0.0.0:$fam_load_port"
		sink_cli="udp://0.0.0.0:$lp_back"
		load_c2r="udp://$fam_ref_addr:$fam_load_port${fam_cli_dev:+?dev=$fam_cli_dev}"
		load_r2c="udp://$fam_cli_addr:$lp_back${fam_ref_dev:+?dev=$fam_ref_dev}"
		load_opts=
	fi
}

# The other sides' commands run under tether (doc/tether.1): their
# stdout and stderr come back apart whatever the prefix (ssh with or
# without -tt), the arguments arrive as they were, and a command ends when
# its tether is sent SIGTERM or its connection goes.  tether runs as
# $NTPX_REMOTE_BIN/tether there (default: this bin/, the same path on
# both hosts); $NTPX_TETHER_TAG, when set, notes every command there for
# tether --list/--kill (ntpx-study checks each run with it).
fam_bin=$ntpx_bin
fam_tether=$fam_bin/tether

# fam_prefix ref|client: that side's prefix in _x.
fam_prefix() {
	if [ "$1" = ref ]; then _x=$fam_ref_x; else _x=$fam_cli_x; fi
}

# fam_on ref|client CMD...: run CMD on that side (through its prefix).
fam_on() {
	_side=$1
	shift
	fam_prefix "$_side"
	ntpx_on "$_side" "$_x" "${NTPX_TETHER_TAG:-}" "$@"
}

# fam_bg VAR ref|client CMD...: start CMD on that side in the background, its
# PID (the local tether's, which passes SIGTERM on) in VAR.
fam_bg() {
	_var=$1
	_side=$2
	shift 2
	fam_prefix "$_side"
	# A simple command in the background: $! is its own PID (no subshell).
	if [ -z "$_x" ]; then
		"$@" &
	else
		"$fam_tether" --side "$_side" -x "$_x" ${NTPX_REMOTE_BIN:+--bin "$NTPX_REMOTE_BIN"} \
			${NTPX_TETHER_TAG:+--tag "$NTPX_TETHER_TAG"} ${fam_ready:+--ready "$fam_ready"} -- "$@" &
	fi
	eval "$_var=\$!"
	eval "fam_name_$!=\$1"
	fam_pids="$fam_pids $!"
}

# fam_reap PID: wait for it to end by itself; forget it; its status in
# reap_rc.  A tool that ended with a status other than 0 (a write error on
# a full disk: its records are cut short; an ntpprobe none of whose
# exchanges was ok, as ping exits 1: a segment without one answer is no
# result) fails the run at fam_finish: fam_failed names it.  The ntpx tools end with 0 on SIGTERM; 143 is a
# prefix's or a shell's.
fam_failed=
fam_reap() {
	reap_rc=0
	[ -n "$1" ] || return 0
	# Once waited for, a PID is no longer ours (nor its status).
	case " $fam_pids " in *" $1 "*) ;; *) return 0 ;; esac
	wait "$1" 2>/dev/null
	reap_rc=$?
	_np=
	for _p in $fam_pids; do [ "$_p" = "$1" ] || _np="$_np $_p"; done
	fam_pids=$_np
	if [ $reap_rc != 0 ] && [ $reap_rc != 143 ]; then
		eval "_name=\${fam_name_$1:-pid $1}"
		fam_failed="${fam_failed:+$fam_failed, }$_name exited $reap_rc"
	fi
	return 0
}

# fam_stop PID: SIGTERM, then wait for it (the tools finish their line first).
# Only a PID not reaped yet is signalled: once waited for, it may be
# someone else's.
fam_stop() {
	[ -n "$1" ] || return 0
	case " $fam_pids " in *" $1 "*) kill -TERM "$1" 2>/dev/null ;; esac
	fam_reap "$1"
	# The server ends with 0 on SIGTERM: any other status is a server
	# that did not run (a port taken, say), and the run is not a result.
	if [ "$1" = "${server:-}" ] && [ "$reap_rc" != 0 ]; then
		server=
		fam_die "ntpreflect on $fam_server_ep ended with status $reap_rc: $(tail -n 1 "$fam_out/server.err" 2>/dev/null)"
	fi
}

fam_cleanup() {
	for _p in $fam_pids; do kill -TERM "$_p" 2>/dev/null; done
	for _p in $fam_pids; do wait "$_p" 2>/dev/null; done
	fam_pids=
	if [ -n "${simclock:-}" ]; then
		fam_on client rm -f "$simclock" 2>/dev/null
		simclock=
	fi
	# ntpx-nts's certificates, on both sides.
	if [ -n "${nts_dir:-}" ]; then
		fam_on ref rm -rf "$nts_dir" 2>/dev/null
		fam_on client rm -rf "$nts_dir" 2>/dev/null
		nts_dir=
	fi
	[ -z "${linkdown:-}" ] || fam_on client ip link set dev "$fam_cli_dev" up 2>/dev/null
	linkdown=
	return 0
}

fam_event() {	# NAME [DETAIL] [T_NS]
	printf '%s\t%s\t%s\t%s\n' "${3:-$(fam_now_ns)}" "$fam_run" "$1" "${2:--}" >> "$fam_events" ||
		fam_die "cannot write $fam_events"
}

fam_events_header() {
	[ -s "$fam_events" ] || printf '#fields t_ns run event detail\n' > "$fam_events" ||
		fam_die "cannot write $fam_events"
}

# The server on the reference, logging its side of every exchange, with
# the family's own options ($fam_server_opts, split on blanks: ntpx-nts's
# certificate and key).
# Returns once it runs on its host (fam_started).
fam_server_start() {
	fam_prefix ref
	fam_ready=${_x:+$fam_out/server.started}
	rm -f "$fam_out/server.started"
	# shellcheck disable=SC2086
	fam_bg server ref ntpreflect --stratum 1 -l - ${fam_server_opts:-} "$fam_server_ep" >> "$fam_out/server.rec" \
		2>> "$fam_out/server.err"
	fam_ready=
	fam_started "$server" "${_x:+$fam_out/server.started}" "$fam_out/server.err"
}

# fam_started PID READY ERR: over a prefix (READY not empty), wait until
# PID's tether has started its command on the other host (READY, made by
# tether --ready).  Connecting takes a while, seconds over ssh on a busy
# machine, and a family's schedule and events count from when a program
# runs, not from when it was asked for.  PID ending first, or
# fam_start_limit_ns without a start (a limit on a failure, not a bound
# on how long a start takes), ends the run with one line: the program
# and ERR's last line.  The wait ends on the start; the limit is for a
# connection that hangs, and is generous: an ssh connection's key
# exchange and login took over 10 s with the machine's load at 23.
fam_start_limit_ns=60000000000
fam_started() {
	[ -n "$2" ] || return 0
	_end=$(($(fam_now_ns) + fam_start_limit_ns))
	until [ -e "$2" ]; do
		eval "_name=\${fam_name_$1:-pid $1}"
		kill -0 "$1" 2>/dev/null ||
			fam_die "$_name ended before it started: $(tail -n 1 "$3" 2>/dev/null)"
		[ "$(fam_now_ns)" -lt "$_end" ] ||
			fam_die "$_name did not start within $((fam_start_limit_ns / 1000000000)) s: $(tail -n 1 "$3" 2>/dev/null)"
		sleep 0.01
	done
	rm -f "$2"
}

# Wait until the server answers (at most 10 s): a one-shot probe over the
# run's own transport, so it works for every backend.
fam_server_wait() {
	_i=0
	while [ $_i -lt 40 ]; do
		if fam_on client ntpprobe -c 1 -w 250ms "$fam_client_ep" 2>/dev/null |
			awk "$ntpx_fields"'/^#fields/ { fields(); next }
			     /^#/ { next } field("status") == "ok" { f = 1 } END { exit !f }'; then
			return 0
		fi
		kill -0 "$server" 2>/dev/null ||
			fam_die "ntpreflect on $fam_server_ep ended: $(tail -n 1 "$fam_out/server.err" 2>/dev/null)"
		_i=$((_i + 1))
	done
	fam_die "no answer from $fam_client_ep within 10 s"
}

# fam_probe_start [DUR] [extra ntpprobe options...]: the client, into probe.rec
# (the first segment) or a further segment appended at probe_end; returns
# once it runs on its host (fam_started).
probe_seg=0
fam_probe_start() {
	_d=$1
	shift
	probe_seg=$((probe_seg + 1))
	fam_prefix client
	fam_ready=${_x:+$fam_out/probe.started}
	rm -f "$fam_out/probe.started"
	fam_bg probe client ${probe_wrap:-} ntpprobe -i "$fam_interval" ${_d:+-d "$_d"} "$@" "$fam_client_ep" \
		> "$fam_out/probe.$probe_seg" 2>> "$fam_out/probe.err"
	fam_ready=
	fam_started "$probe" "${_x:+$fam_out/probe.started}" "$fam_out/probe.err"
}

# fam_probe_end: wait for (or, with "kill", stop) the client; append its records.
fam_probe_end() {
	if [ "${1:-}" = kill ]; then
		fam_stop "$probe"
	else
		fam_reap "$probe"
	fi
	[ -z "$fam_failed" ] || fam_die "$fam_failed (see $fam_out/probe.err)"
	if [ $probe_seg = 1 ]; then
		cat "$fam_out/probe.1" > "$fam_out/probe.rec"
	else
		awk '!/^#/' "$fam_out/probe.$probe_seg" >> "$fam_out/probe.rec"
	fi || fam_die "cannot write $fam_out/probe.rec"
	rm -f "$fam_out/probe.$probe_seg"
}

fam_wait_udp() {	# SIDE PORT: until something listens on UDP PORT (10 s)
	_end=$(($(fam_now_ns) + 10000000000))
	until fam_on "$1" ss -Hlun "sport = :$2" 2>/dev/null | grep -q .; do
		[ "$(fam_now_ns)" -lt "$_end" ] || fam_die "nothing listens on udp port $2 on the $1 side"
		sleep 0.01
	done
}

# The load sinks on both sides; the capacity (calibrated when not given).
fam_load_setup() {
	fam_bg sink_r ref loadgen --sink -d 0 "$sink_ref" > /dev/null 2>> "$fam_out/load.err"
	fam_bg sink_c client loadgen --sink -d 0 "$sink_cli" > /dev/null 2>> "$fam_out/load.err"
	# (An ib sink has no socket that ss shows: the senders' first reports
	# may come late there.)
	if [ "$scheme" != ib ]; then
		fam_wait_udp ref "$fam_load_port"
		fam_wait_udp client "$lp_back"
	fi
	if [ -z "$fam_capacity" ]; then
		fam_capacity=$(fam_on client loadgen --calibrate $load_opts "$load_c2r" 2>> "$fam_out/load.err" |
			awk '$1 == "capacity_bps" { print $2 }')
		[ -n "$fam_capacity" ] || fam_die "calibration of $load_c2r failed: $(tail -n 1 "$fam_out/load.err")"
	fi
	printf '#fields t dir bytes packets gbps drops sent_gbps\n' > "$fam_out/load.tsv" ||
		fam_die "cannot write $fam_out/load.tsv"
}

# fam_load_start DIRS DUR [loadgen options]: c2r, r2c or both, for DUR;
# returns once the senders run on their hosts (connecting to a host takes
# a while: the load's events are stamped after it).
fam_load_start() {
	_dirs=$1 _ld=$2
	shift 2
	lc2r= lr2c=
	# A percentage is of the calibrated capacity, and may exceed 100 (a
	# path offered more than it carries builds its queue to the full).
	case $fam_load_rate in
	*%) _rate=$(awk -v c="$fam_capacity" -v p="${fam_load_rate%\%}" 'BEGIN { printf "%.0f", c * p / 100 }') ;;
	*) _rate=$fam_load_rate ;;
	esac
	rm -f "$fam_out/load.c2r.started" "$fam_out/load.r2c.started"
	case $_dirs in c2r|both)
		fam_prefix client
		fam_ready=${_x:+$fam_out/load.c2r.started}
		fam_bg lc2r client loadgen -r "$_rate" -d "$_ld" $load_opts "$@" "$load_c2r" \
			> "$fam_out/load.c2r" 2>> "$fam_out/load.err" ;;
	esac
	case $_dirs in r2c|both)
		fam_prefix ref
		fam_ready=${_x:+$fam_out/load.r2c.started}
		fam_bg lr2c ref loadgen -r "$_rate" -d "$_ld" $load_opts "$@" "$load_r2c" \
			> "$fam_out/load.r2c" 2>> "$fam_out/load.err" ;;
	esac
	fam_ready=
	_end=$(($(fam_now_ns) + fam_start_limit_ns))
	for _d in c2r r2c; do
		eval "_p=\$l$_d"
		[ -n "$_p" ] || continue
		fam_prefix "$([ $_d = c2r ] && echo client || echo ref)"
		[ -n "$_x" ] || continue
		until [ -e "$fam_out/load.$_d.started" ]; do
			kill -0 "$_p" 2>/dev/null && [ "$(fam_now_ns)" -lt "$_end" ] ||
				fam_die "the $_d load did not start within $((fam_start_limit_ns / 1000000000)) s: $(tail -n 1 "$fam_out/load.err" 2>/dev/null)"
			sleep 0.01
		done
		rm -f "$fam_out/load.$_d.started"
	done
}

fam_load_end() {
	for _d in c2r r2c; do
		eval "_p=\$l$_d"
		[ -n "$_p" ] || continue
		fam_reap "$_p"
		awk -v d="$_d" '!/^#/ && NF >= 6 { $1 = $1 "\t" d; print }' OFS="\t" \
			"$fam_out/load.$_d" >> "$fam_out/load.tsv" || fam_die "cannot write $fam_out/load.tsv"
		rm -f "$fam_out/load.$_d"
	done
}

fam_load_teardown() {
	fam_stop "$sink_r"
	fam_stop "$sink_c"
}

# The achieved load, Gbit/s (the sinks' measure) summed over directions:
# per direction the median of the intervals that had a report.
fam_load_gbps() {
	awk '!/^#/ && $5 != "-" { n[$2]++; v[$2, n[$2]] = $5 }
	END {
		s = 0
		for (d in n) {
			k = n[d]
			for (i = 1; i <= k; i++) a[i] = v[d, i]
			for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			s += (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		printf "%.3f\n", s
	}' "$fam_out/load.tsv"
}

# fam_cols FILE NAME...: the named columns of FILE's records, one line per
# record, found by name from the latest #fields line (doc/ntpx-record.5),
# - for a column the records lack.  The one place the families read a
# record's columns.
fam_cols() {
	_file=$1
	shift
	awk -v want="$*" "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		{ print field_list(want) }' "$_file"
}

# fam_recs [FROM_NS TO_NS]: "time status delay off2 true2 foff2 jitter djitter
# valid" per record, time = t2 (the reference's clock) when there is one,
# else t1; only records with FROM <= time < TO.  - for missing columns.
fam_recs() {
	fam_cols "$fam_out/probe.rec" t2 t1 status delay off2 true2 foff2 jitter djitter valid |
	awk -v from="${1:-0}" -v to="${2:-9e30}" '{
		t = $1; if (t == "-") t = $2
		if (t + 0 < from + 0 || t + 0 >= to + 0) next
		print t, $3, $4, $5, $6, $7, $8, $9, $10
	}'
}

# fam_runstat: ntpx-runstat's keys for this run (its records, its events):
# analysis/ beside bin/ in the source tree, beside this once installed.
fam_runstat() {
	_rs=$ntpx_bin/../analysis/ntpx-runstat
	[ -x "$_rs" ] || _rs=$ntpx_bin/ntpx-runstat
	"$_rs" "$fam_out" "$fam_events" "$fam_run"
}

# fam_pct P [SCALE]: the P-th percentile (linear between ranks) of the numbers
# on stdin, times SCALE; - when there are none.
fam_pct() {
	grep -v '^-$' | sort -g | awk -v p="$1" -v k="${2:-1}" '
	{ v[NR] = $1 }
	END {
		if (NR == 0) { print "-"; exit }
		r = 1 + (NR - 1) * p / 100; i = int(r); f = r - i
		x = v[i]; if (i < NR) x += f * (v[i + 1] - v[i])
		printf "%.3f\n", x * k
	}'
}

# Rejection rate: records that are not ok over all records (- if none).
fam_reject_rate() {
	awk '{ n++; if ($2 != "ok") r++ } END { if (n) printf "%.6f\n", r / n; else print "-" }'
}

# The run's summary: offsetfit's, then the family's keys (stdin).
fam_summary_write() {
	{
		printf 'family %s\ncondition %s\ntransport %s\nrep %s\n' "$family" "$fam_cond" "$fam_transport" "$fam_rep"
		printf 'client_endpoint %s\nserver_endpoint %s\nduration_s %s\ninterval_s %s\n' \
			"$fam_client_ep" "$fam_server_ep" "$(fam_ns_s "$fam_dur")" "$(fam_ns_s "$fam_ivl")"
		offsetfit "$fam_out/probe.rec" 2>/dev/null
		cat
	} > "$fam_out/summary.txt.tmp" && mv "$fam_out/summary.txt.tmp" "$fam_out/summary.txt" ||
		fam_die "cannot write $fam_out/summary.txt"
}

# A probe answered while the run's own server logged nothing was answered
# by someone else (a server left by an earlier run, say): not a result.
fam_server_check() {
	[ -f "$fam_out/probe.rec" ] && [ -f "$fam_out/server.rec" ] || return 0
	_ok=$(fam_cols "$fam_out/probe.rec" status | awk '$1 == "ok" { n++ } END { print n + 0 }')
	_srv=$(grep -vc '^#' "$fam_out/server.rec")
	[ "$_ok" = 0 ] || [ "$_srv" -gt 0 ] ||
		fam_die "server.rec is empty while the probe had $_ok answers: another server answered on $fam_server_ep"
}

fam_finish() {
	fam_cleanup
	# A tool that failed (its output cut short) leaves no done file.
	[ -z "$fam_failed" ] || fam_die "$fam_failed (see $fam_out/*.err)"
	fam_server_check
	for _f in "$fam_out"/*.err; do [ -s "$_f" ] || rm -f "$_f"; done
	fam_event run_end "$family $fam_cond $fam_transport"
	date +%s%N > "$fam_out/done.tmp" && mv "$fam_out/done.tmp" "$fam_out/done" ||
		fam_die "cannot write $fam_out/done"
}

fam_start() {
	fam_events_header
	fam_event run_start "$family $fam_cond $fam_transport"
	fam_server_start
	fam_server_wait
}

# Sleep for a span of the experiment (the schedule itself, not a stand-in
# for synchronisation).
fam_hold() { sleep "$(fam_ns_s "$1")"; }
