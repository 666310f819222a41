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
# max and standard deviation, as ntpperf prints them; and where the CPU
# went (below).  The servers climb in turn, CAP_ROUNDS times (default 3),
# and the figure is the median of the rounds' ratios: one climb's onset
# on this 2-core machine moves with what else ran during it (chronyd's
# from 37.5k/s to 80k/s in one day's runs).
#
# The figure of 9a2ce97 and before (one generator on loopback, the
# server beside it) is kept after it for one release (CAP_OLD=0 skips
# it), so that history stays comparable.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/climb.sh"
need_prereq ROOT
step=${BENCH_STEP:-2s}
rates=${BENCH_RATES:-"20k 40k 80k 120k 160k 200k 250k 300k 400k 500k"}
S=${CAP_SENDERS:-2}
lab_up cap >/dev/null 2>&1 || { echo "ntp-capacity: no lab"; exit 0; }
port=12300

# One step (climb_step, tests/bench/climb.sh): S generators at RATE/S
# each, from the client namespace to ENDPOINT.  Prints "wanted got
# loss_pct n min mean max sd srv_drop cli_drop srv_usr srv_sys host_cpu":
# climb_step's figures, then where the CPU went: the server's, in user
# space and in the kernel (/proc/PID/stat, in % of one core), and the
# whole machine's (/proc/stat, in % of all its cores).  A server whose
# onset comes below 100% of a core shares the machine with the
# generators and both namespaces' softirqs: its figure is the machine's
# as much as its own.  The kernel's part is the same work for any server
# (the receive, the send, the veth's delivery to the generators'
# namespace).
srv_ticks() { awk '{ print $14, $15 }' /proc/"$pid"/stat 2>/dev/null || echo 0 0; }
host_busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
step_run() {	# ENDPOINT RATE
	_p0=$(srv_ticks) _h0=$(host_busy) _m0=$(date +%s%N)
	_st=$(climb_step "$1" "$2")
	_pc=$(echo "$_p0 $(srv_ticks)" | awk -v t="$(($(date +%s%N) - _m0))" -v hz="$(getconf CLK_TCK)" '{
		f = t > 0 ? 100 * 1e9 / hz / t : 0; printf "%.0f %.0f", ($3 - $1) * f, ($4 - $2) * f }')
	_hc=$(echo "$_h0 $(host_busy)" | awk '{ d = ($3 - $1) + ($4 - $2); printf "%.0f", (d > 0 ? 100 * ($3 - $1) / d : 0) }')
	echo "$_st" | awk -v pc="$_pc" -v hc="$_hc" '{ $11 = pc " " hc; print }'
}

# try_step RATE: runs one step on $_ep, prints its line; sets _v, _got.
try_step() {
	_label=$1
	set -- $(step_run "$_ep" "$1")
	printf '  %-9s %10s %10s %9s %8s %8s   %9s %9s %9s %9s  %8s %8s %8s\n' \
		"$_label" "$1" "$2" "$3" "$9" "${10}" "$5" "$6" "$7" "$8" "${11}" "${12}" "${13}"
	_v=$(climb_verdict "$1" "$2" "$3" "$9" "${10}") _got=$2
}

# capacity ENDPOINT: the steps' lines, then "capacity RATE BY"
# (capacity_climb, tests/lib.sh).
capacity() {
	_ep=$1
	printf '  %-9s %10s %10s %9s %8s %8s   %9s %9s %9s %9s  %8s %8s %8s\n' \
		step wanted/s got/s loss% srv_drop cli_drop min_us mean_us max_us sd_us srv_usr% srv_sys% host_cpu%
	capacity_climb $rates
}

# One server's climb: ntpreflect or chronyd (-x: never adjusts the clock;
# -d: in the foreground, so that its PID is ours).  Its steps' lines
# indented, then "capacity RATE BY" in $TMP/$1.$2 (round $2).
cat >"$TMP/chrony.conf" <<EOC
port $port
bindaddress $NTPX_REF_FAST
cmdport 0
allow all
local stratum 10
pidfile $TMP/chronyd.pid
EOC
climb() {	# SERVER ROUND
	case $1 in
	ntpreflect) spawn pid ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 "udp://0.0.0.0:$port" 2>/dev/null ;;
	chronyd) spawn pid ip netns exec "$NTPX_NS_REF" chronyd -x -d -f "$TMP/chrony.conf" 2>"$TMP/chronyd.log" ;;
	esac
	if wait_until 5 in_ref; then
		echo "$1, round $2:"
		# Not a pipeline: a TERM or INT ends the climb at once (fg_wait).
		fg_wait capacity "udp://$NTPX_REF_FAST:$port" >"$TMP/$1.$2"
		grep -v '^capacity' "$TMP/$1.$2"
	else
		echo "ntp-capacity: $1 did not start"
	fi
	kill "$pid"; wait "$pid" 2>/dev/null
}

# CAP_ROUNDS rounds (default 3), the two servers in turn (ntpreflect
# first in odd rounds, chronyd in even ones), so that a change in the
# machine's load falls on both: on a shared 2-core machine one climb's
# onset moves with whatever else ran during it, and the figure is the
# median of the rounds' ratios, with their range.
R=${CAP_ROUNDS:-3}
servers=ntpreflect
command -v chronyd >/dev/null && servers="ntpreflect chronyd"
echo "NTP server capacity: server in namespace $NTPX_NS_REF, $S loadgen --ntp in $NTPX_NS_CLIENT, fast path (veth), $step steps, $R rounds"
for r in $(seq 1 "$R"); do
	order=$servers
	[ $((r % 2)) = 0 ] && [ "$servers" != ntpreflect ] && order="chronyd ntpreflect"
	for srv in $order; do climb "$srv" "$r"; done
done

for r in $(seq 1 "$R"); do
	for srv in ntpreflect chronyd; do
		set -- $(awk '$1 == "capacity" { print $2, $3 }' "$TMP/$srv.$r" 2>/dev/null) 0 -
		# The server's CPU per reply (us), user and kernel, at the step
		# that gave its capacity.
		c=$(awk -v g="$1" '$3 == g && g > 0 { u = 1e4 * $11 / g; k = 1e4 * $12 / g }
			END { print u + 0, k + 0 }' "$TMP/$srv.$r" 2>/dev/null)
		echo "$r $srv $1 $2 ${c:-0 0}"
	done
done | awk '
	function med(v, k,   i, j, t) {
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
	}
	{ cap[$1, $2] = $3; by[$1, $2] = $4; usr[$1, $2] = $5; sys[$1, $2] = $6; if ($1 > n) n = $1 }
	function lim(s, r) { return by[r, s] == "generator" ? " (generator-limited: at least)" : "" }
	END {
		for (r = 1; r <= n; r++) {
			a = cap[r, "ntpreflect"]; b = cap[r, "chronyd"]
			printf "round %d: ntpreflect %.0f/s%s, chronyd -x %.0f/s%s", r, a, lim("ntpreflect", r), b, lim("chronyd", r)
			if (b > 0) { q[++k] = a / b; printf ", ratio %.2f", a / b }
			if (usr[r, "ntpreflect"] + sys[r, "ntpreflect"] > 0 && usr[r, "chronyd"] + sys[r, "chronyd"] > 0) {
				kc++
				ru[kc] = usr[r, "ntpreflect"]; rs[kc] = sys[r, "ntpreflect"]
				cu[kc] = usr[r, "chronyd"]; cs[kc] = sys[r, "chronyd"]
				printf "; CPU per reply there, user + kernel: %.2f + %.2f us and %.2f + %.2f us", ru[kc], rs[kc], cu[kc], cs[kc]
			}
			printf "\n"
			if (by[r, "ntpreflect"] == "generator") low = 1
		}
		if (!k) { print "ntpreflect/chronyd: no chronyd figure"; exit }
		m = med(q, k)
		printf "NTP capacity (< 0.1%% loss): ntpreflect/chronyd %.2f [%.2f-%.2f] over %d rounds%s (target >= 3): %s\n",
			m, q[1], q[k], k, low ? " (a lower bound)" : "", m >= 3 ? "met" : "NOT met"
		if (kc)
			printf "server CPU per reply at its capacity, user + kernel (medians of %d rounds): ntpreflect %.2f + %.2f us, chronyd %.2f + %.2f us\n",
				kc, med(ru, kc), med(rs, kc), med(cu, kc), med(cs, kc)
	}'

[ "${CAP_OLD:-1}" = 0 ] || {
	echo "the old figure (9a2ce97's definition: one generator on loopback):"
	fg_wait env BENCH_RATES="${BENCH_OLD_RATES:-10k 20k 40k 60k 80k 100k 120k 160k 200k 300k}" \
		sh "$(dirname "$0")/ntp-capacity-loopback.sh" >"$TMP/old"
	sed 's/^/  /' "$TMP/old"
}
