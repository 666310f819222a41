#!/bin/sh
# SPDX-License-Identifier: ISC
# Server capacity: the highest request rate each server answers with less
# than 0.1% loss, ntpreflect against chronyd (-x: it never touches the
# clock), and their ratio (target: ntpreflect >= 3x).
#
# The server runs in a lab's reference namespace and the generator in
# the client's, across the fast path (a veth), so that the generator
# does not share a socket table, a loopback device or a softirq with the
# server.  CAP_SENDERS loadgen --ntp processes (default 2) split each
# step's rate.  Rates climb until a step loses 0.1% or more (the loss
# onset), or the generators cannot reach the rate.  Between the last
# clean step and the onset, CAP_BISECT (default 3) more steps halve the
# gap, so that the figure is not an artefact of the steps' spacing.
#
# Where a step's requests were lost is read from the kernel's counters in
# each namespace (UDP InErrors: a full receive buffer): at the server, or
# at the generators, whose own sockets overflow when they cannot read
# their replies fast enough.  Only a loss at the server, or in between,
# is the server's onset; a step lost at the generators, or a rate they
# cannot reach, ends the climb with the capacity marked "at least" (the
# ratio a lower bound).  Per step, the server's response time from its
# own stamps, T3 - T2 of every counted reply (loadgen --ntp): min, mean,
# max and standard deviation, as ntpperf prints them.
#
# The figure of 9a2ce97 and before (one generator on loopback, the
# server beside it) is kept after it for one release (CAP_OLD=0 skips
# it), so that history stays comparable.
. "$(dirname "$0")/../lib.sh"
need_prereq ROOT
step=${BENCH_STEP:-2s}
rates=${BENCH_RATES:-"20k 40k 80k 120k 160k 200k 250k 300k 400k 500k"}
S=${CAP_SENDERS:-2}
lab_up cap >/dev/null 2>&1 || { echo "ntp-capacity: no lab"; exit 0; }
port=12300
in_ref() { ip netns exec "$NTPX_NS_REF" ss -Hlun "sport = :$port" | grep -q .; }

# One step: S generators at RATE/S each, from the client namespace to
# ENDPOINT.  Prints "wanted got loss_pct n min mean max sd srv_drop
# cli_drop": the response time (us) over all generators' counted replies,
# and the datagrams the kernel dropped in each namespace meanwhile.
inerr() { udp_mib "$1" | sed 's/.*inerr=//'; }
step_run() {	# ENDPOINT RATE
	_w=$(rate_num "$2")
	_each=$(awk -v w="$_w" -v s="$S" 'BEGIN { printf "%d", w / s }')
	_s0=$(inerr "$NTPX_NS_REF") _c0=$(inerr "$NTPX_NS_CLIENT")
	_pids=
	for _i in $(seq 1 "$S"); do
		ip netns exec "$NTPX_NS_CLIENT" loadgen --ntp "$_each" -d "$step" "$1" \
			>/dev/null 2>"$TMP/lg.$_i" &
		_pids="$_pids $!"
	done
	_i=0
	for _p in $_pids; do
		_i=$((_i + 1))
		wait "$_p" || echo "ntp-capacity: generator $_i: $(tail -n 1 "$TMP/lg.$_i")" >&2
	done
	_sd=$(($(inerr "$NTPX_NS_REF") - _s0)) _cd=$(($(inerr "$NTPX_NS_CLIENT") - _c0))
	for _i in $(seq 1 "$S"); do cat "$TMP/lg.$_i"; done | awk -v w="$_w" -v sd="$_sd" -v cd="$_cd" '
		/ntp requests/ {
			for (i = 1; i <= NF; i++) {
				if ($i == "requests") q += $(i + 1)
				if ($i == "replies") { r = $(i + 1); rep += r }
				if ($i == "rate") { v = $(i + 1); sub(/\/s/, "", v); rate += v }
				if ($i == "response_us") {
					lo = $(i + 2); me = $(i + 4); hi = $(i + 6); sdv = $(i + 8)
					if (!n || lo < mn) mn = lo
					if (!n || hi > mx) mx = hi
					s1 += r * me; s2 += r * (sdv * sdv + me * me); n += r
				}
			}
		}
		END {
			m = n ? s1 / n : 0; v = n ? s2 / n - m * m : 0
			printf "%d %.0f %.4f %d %.3f %.3f %.3f %.3f %d %d\n", w, rate, q ? 100 * (q - rep) / q : 100,
				n, mn, m, mx, (v > 0 ? sqrt(v) : 0), sd, cd }'
}

# verdict WANTED GOT LOSS SRV_DROP CLI_DROP: "clean", "server" (the
# server's loss onset) or "generator" (the generators' limit).
verdict() {
	awk -v w="$1" -v g="$2" -v l="$3" -v sd="$4" -v cd="$5" 'BEGIN {
		if (l < 0.1) { print (g < 0.95 * w ? "generator" : "clean"); exit }
		print (cd > sd ? "generator" : "server") }'
}

# try_step RATE: runs one step on $_ep, prints its line; sets _v, _got.
try_step() {
	_label=$1
	set -- $(step_run "$_ep" "$1")
	printf '  %-9s %10s %10s %9s %8s %8s   %9s %9s %9s %9s\n' \
		"$_label" "$1" "$2" "$3" "$9" "${10}" "$5" "$6" "$7" "$8"
	_v=$(verdict "$1" "$2" "$3" "$9" "${10}") _got=$2
}

# capacity ENDPOINT: the steps' lines, then "capacity RATE BY"
# (capacity_climb, tests/lib.sh).
capacity() {
	_ep=$1
	printf '  %-9s %10s %10s %9s %8s %8s   %9s %9s %9s %9s\n' \
		step wanted/s got/s loss% srv_drop cli_drop min_us mean_us max_us sd_us
	capacity_climb $rates
}

echo "NTP server capacity: server in namespace $NTPX_NS_REF, $S loadgen --ntp in $NTPX_NS_CLIENT, fast path (veth), $step steps"
echo "ntpreflect:"
spawn pid ip netns exec "$NTPX_NS_REF" ntpreflect "udp://0.0.0.0:$port" 2>/dev/null
wait_until 5 in_ref || { echo "ntp-capacity: ntpreflect did not start"; exit 1; }
capacity "udp://$NTPX_REF_FAST:$port" | tee "$TMP/refl" | grep -v '^capacity'
kill "$pid"; wait "$pid" 2>/dev/null
set -- $(awk '$1 == "capacity" { print $2, $3 }' "$TMP/refl") 0 server
refl=$1 refl_by=$2

chrony=0 chrony_by=-
if command -v chronyd >/dev/null; then
	cat >"$TMP/chrony.conf" <<EOC
port $port
bindaddress $NTPX_REF_FAST
cmdport 0
allow all
local stratum 10
pidfile $TMP/chronyd.pid
EOC
	echo "chronyd -x:"
	# -x: never adjust the clock; -d: foreground, so its PID is ours.
	spawn pid ip netns exec "$NTPX_NS_REF" chronyd -x -d -f "$TMP/chrony.conf" 2>"$TMP/chronyd.log"
	if wait_until 5 in_ref; then
		capacity "udp://$NTPX_REF_FAST:$port" | tee "$TMP/chrony" | grep -v '^capacity'
		set -- $(awk '$1 == "capacity" { print $2, $3 }' "$TMP/chrony") 0 server
		chrony=$1 chrony_by=$2
	else
		echo "ntp-capacity: chronyd did not start"
	fi
	kill "$pid"; wait "$pid" 2>/dev/null
fi

awk -v a="$refl" -v ab="$refl_by" -v b="$chrony" -v bb="$chrony_by" 'BEGIN {
	printf "NTP capacity (< 0.1%% loss): ntpreflect %.0f/s%s, chronyd -x %.0f/s%s\n",
		a, ab == "generator" ? " (generator-limited: at least)" : "",
		b, bb == "generator" ? " (generator-limited: at least)" : ""
	if (b > 0)
		printf "ntpreflect/chronyd %.2f%s (target >= 3): %s\n", a / b,
			ab == "generator" ? " (a lower bound)" : "", a / b >= 3 ? "met" : "NOT met"
	else
		print "ntpreflect/chronyd: no chronyd figure"
}'

[ "${CAP_OLD:-1}" = 0 ] || {
	echo "the old figure (9a2ce97's definition: one generator on loopback):"
	BENCH_RATES=${BENCH_OLD_RATES:-"10k 20k 40k 60k 80k 100k 120k 160k 200k 300k"} \
		sh "$(dirname "$0")/ntp-capacity-loopback.sh" | sed 's/^/  /'
}
