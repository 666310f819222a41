#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect over uudp (AF_XDP) as a server for kernel-UDP clients,
# against ntpreflect over kernel UDP and chronyd -x (issue 38, 1).
#
# The servers run in a lab's reference namespace on its fast path (a
# veth, RU_QUEUES queues each way, default 1), the generators (RU_SENDERS
# loadgen --ntp, default 2, splitting the rate) in the client namespace.
# RU_PIN=1 puts the server on the first CPU and the generators on the
# last: on a machine of its own; on a shared one a pinned server cannot
# leave a CPU that another user's work took, and loses what it would not.
#
# First the figure that decides: CPU per reply of the whole machine
# (/proc/stat: user, kernel and softirq time of all cores, over the
# replies the generators counted), at fixed rates RU_RATES (default 20k
# and 40k, below chronyd's capacity here), in RU_BLOCKS (default 3)
# blocks of RU_STEP (default 2s) per server, the three servers in turn
# in each block, so that a change in the machine's load falls on all
# three.  The machine's CPU includes the generators' and both
# namespaces' softirqs, which are the same work for any server: the
# ratios are of the whole machine's cost, as issue 38 asks.  Per step
# also the server's own CPU (/proc/PID/stat) and its response time
# T3 - T2 from its own stamps (min, mean, max, sd, as ntpperf prints).
# Targets: uudp's CPU per reply <= 1/3 of chronyd's, and its response
# time at most chronyd's, at every rate; the median of the blocks'
# ratios [range].
#
# Then capacity to 0.1% loss (RU_CAPACITY=0 skips it): each server's
# climb (capacity_climb, tests/lib.sh) at RU_CAP_RATES, target uudp >= 3x
# chronyd.  A step lost at the generators' own sockets, or a rate they
# cannot reach, is their limit, and the figure is then marked "at least".
. "$(dirname "$0")/../lib.sh"
need_prereq ROOT
command -v ethtool >/dev/null 2>&1 || { echo "reflect-uudp: no ethtool, no lab"; exit 0; }
step=${RU_STEP:-2s}
rates=${RU_RATES:-"20k 40k"}
blocks=${RU_BLOCKS:-3}
S=${RU_SENDERS:-2}
cap_rates=${RU_CAP_RATES:-"20k 40k 80k 120k 160k 200k 250k 300k 400k 500k"}
lab_up ru --queues "${RU_QUEUES:-1}" >/dev/null 2>&1 || { echo "reflect-uudp: no lab"; exit 0; }
# Interleaved clients (build/bench/xlflood) send from 10.213.0.0/16: the
# client namespace takes the range as its own, the reference routes it
# back through the client's fast address.
xlnet=10.213.0.0
ip -n "$NTPX_NS_CLIENT" route add local "$xlnet/16" dev lo &&
	ip -n "$NTPX_NS_REF" route add "$xlnet/16" via "$NTPX_CLIENT_FAST" || xlnet=
port=12300
servers="uudp kudp"
command -v chronyd >/dev/null && servers="uudp kudp chronyd"
servers=${RU_SERVERS:-$servers}

cat >"$TMP/chrony.conf" <<EOC
port $port
bindaddress $NTPX_REF_FAST
cmdport 0
allow all
local stratum 10
clientloglimit 100000000
pidfile $TMP/chronyd.pid
EOC

in_ref() { ip netns exec "$NTPX_NS_REF" ss -Hlun "sport = :$port" | grep -q .; }

# RU_PIN=1: the server on the first CPU, the generators on the last, so
# that they do not take each other's core.
srv_pin= gen_pin=
if [ "${RU_PIN:-0}" != 0 ] && command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	srv_pin="taskset -c 0" gen_pin="taskset -c $(($(nproc) - 1))"
fi

# start SERVER: the server in the reference namespace, its PID in $pid;
# fails when it does not listen within 5 s.
start() {
	case $1 in
	uudp) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --clients 100000 \
		"uudp://$NTPX_REF_FAST:$port?dev=$NTPX_DEV_FAST&via=xdp" 2>"$TMP/srv.err" ;;
	uudpn) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --clients 100000 \
		"uudp://$NTPX_REF_FAST:$port?dev=$NTPX_DEV_FAST&xdpmode=native" 2>"$TMP/srv.err" ;;
	kudp) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --clients 100000 \
		"udp://$NTPX_REF_FAST:$port" 2>"$TMP/srv.err" ;;
	chronyd) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" chronyd -x -d -f "$TMP/chrony.conf" \
		2>"$TMP/srv.err" ;;
	esac
	wait_until 5 in_ref || { echo "reflect-uudp: $1 did not start: $(tail -n 1 "$TMP/srv.err")"; return 1; }
}
stop() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }

inerr() { udp_mib "$1" | sed 's/.*inerr=//'; }
# The server's run time (ns, /proc/PID/schedstat) and the softirq
# threads': with tick accounting, the softirq work a process's system
# call sets off (the veth's delivery) runs in that process's time, and
# the rest in ksoftirqd's.
run_ns() { for _rp; do awk '{ print $1 }' /proc/"$_rp"/schedstat 2>/dev/null || echo 0; done | awk '{ s += $1 } END { print s + 0 }'; }
ksoft=$(pgrep -d ' ' ksoftirqd)
# user (with nice), kernel, softirq (with irq), idle (with iowait): the machine's ticks
host_ticks() { awk '$1 == "cpu" { print $2 + $3, $4, $7 + $8, $5 + $6 + $9 }' /proc/stat; }

# step_run RATE: S generators at RATE/S each for $step against the
# running server.  Prints "wanted got loss_pct replies min mean max sd
# srv_drop cli_drop m_usr m_sys m_sirq idle_pct attr srv gen": the response
# time in us; CPU per reply in us: the machine's (user, kernel, softirq,
# and its idle share in % over the step), what the experiment's own
# processes ran (the server, the generators, ksoftirqd), the server's
# own and the generators'.
step_run() {
	_w=$(rate_num "$1")
	_each=$(awk -v w="$_w" -v s="$S" 'BEGIN { printf "%d", w / s }')
	_s0=$(inerr "$NTPX_NS_REF") _c0=$(inerr "$NTPX_NS_CLIENT")
	_p0=$(run_ns "$pid") _k0=$(run_ns $ksoft) _h0=$(host_ticks)
	_pids=
	for _i in $(seq 1 "$S"); do
		/usr/bin/time -f '%U %S' -o "$TMP/lt.$_i" $gen_pin ip netns exec "$NTPX_NS_CLIENT" \
			loadgen --ntp "$_each" -d "$step" "$ep" >/dev/null 2>"$TMP/lg.$_i" &
		_pids="$_pids $!"
	done
	_i=0
	for _p in $_pids; do
		_i=$((_i + 1))
		wait "$_p" || echo "reflect-uudp: generator $_i: $(tail -n 1 "$TMP/lg.$_i")" >&2
	done
	_sd=$(($(inerr "$NTPX_NS_REF") - _s0)) _cd=$(($(inerr "$NTPX_NS_CLIENT") - _c0))
	_ticks="$_h0 $(host_ticks)"
	_srv=$(($(run_ns "$pid") - _p0)) _ks=$(($(run_ns $ksoft) - _k0))
	_gen=$(cat "$TMP"/lt.* | awk '{ s += $1 + $2 } END { printf "%.0f", s * 1e9 }')
	for _i in $(seq 1 "$S"); do cat "$TMP/lg.$_i"; done | awk -v w="$_w" -v sd="$_sd" -v cd="$_cd" \
		-v ticks="$_ticks" -v hz="$(getconf CLK_TCK)" -v srv="$_srv" -v ks="$_ks" -v gen="$_gen" '
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
			split(ticks, t, " ")
			f = rep > 0 ? 1e6 / hz / rep : 0
			all = (t[5] + t[6] + t[7] + t[8]) - (t[1] + t[2] + t[3] + t[4])
			m = n ? s1 / n : 0; v = n ? s2 / n - m * m : 0
			printf "%d %.0f %.4f %d %.3f %.3f %.3f %.3f %d %d %.3f %.3f %.3f %.1f %.3f %.3f %.3f\n", w, rate,
				q ? 100 * (q - rep) / q : 100, rep, mn, m, mx, (v > 0 ? sqrt(v) : 0), sd, cd,
				(t[5] - t[1]) * f, (t[6] - t[2]) * f, (t[7] - t[3]) * f,
				(all > 0 ? 100 * (t[8] - t[4]) / all : 0),
				(rep > 0 ? (srv + ks + gen) / 1e3 / rep : 0), (rep > 0 ? srv / 1e3 / rep : 0),
				(rep > 0 ? gen / 1e3 / rep : 0) }'
}

# row LABEL SERVER STEP-LINE...: one line of the table
hdr='  %-6s %-7s %8s %8s %7s  %7s %7s %8s %7s  %7s %7s %7s %7s %5s  %7s %7s  %7s %7s\n'
row() {
	_l=$1 _sv=$2
	shift 2
	printf "$hdr" "$_l" "$_sv" "$1" "$2" "$3" "$5" "$6" "$7" "$8" "${11}" "${12}" "${13}" \
		"$(awk -v a="${11}" -v b="${12}" -v c="${13}" 'BEGIN { printf "%.3f", a + b + c }')" \
		"${14}" "${15}" "${16}" "$9" "${10}"
}

ep=udp://$NTPX_REF_FAST:$port
echo "ntpreflect over uudp, machine CPU per reply: servers in $NTPX_NS_REF, $S loadgen --ntp in $NTPX_NS_CLIENT, fast path (veth, ${RU_QUEUES:-1} queue), $step steps, $blocks blocks"
printf "$hdr" block server wanted/s got/s loss% min_us mean_us max_us sd_us \
	m_usr m_sys m_sirq mach idle% attr srv srv_drop cli_drop
for b in $(seq 1 "$blocks"); do
	for srv in $servers; do
		start "$srv" || continue
		for r in $rates; do
			set -- $(step_run "$r")
			row "$b" "$srv" "$@"
			echo "$b $srv $r $*" >>"$TMP/cpu"
		done
		stop
		# What the uudp server's port lost where no counter of ours
		# sees it (doc/uudp.md): its summary, at exit.
		[ "$srv" = uudp ] && grep -o 'xsk_[a-z_]*=[0-9]*\|fill_short=[0-9]*' "$TMP/srv.err" |
			tr '\n' ' ' | sed 's/^/           uudp port, block '"$b"': /; s/ $/\n/'
	done
done

# Per rate, medians over the blocks: each server's CPU per reply, the
# machine's and the experiment's own, the ratios uudp/chronyd and
# uudp/kudp of the experiment's own [range], and the response time.
# The verdict is on the experiment's own CPU: on this shared machine
# the machine's figure carries the other users' load (with no idle time
# left in a step it is only 2 cores over the rate, whatever the server).
for r in $rates; do
	awk -v r="$r" '$3 == r { mach[$2, $1] = $14 + $15 + $16; idle[$2, $1] = $17; at[$2, $1] = $18
			sv[$2, $1] = $19; gn[$2, $1] = $20; rt[$2, $1] = $9; if ($1 > n) n = $1 }
		function med(v, k,   i, j, t) {
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
		function show(s,   k, b, a, m, i, v) {
			for (b = 1; b <= n; b++) if ((s, b) in at) { k++; a[k] = at[s, b]; m[k] = mach[s, b]; i[k] = idle[s, b]; v[k] = sv[s, b] }
			if (!k) return
			printf "at %s/s: %-7s CPU per reply: its own %.2f us (server %.2f us); machine %.2f us, idle %.0f%%\n",
				r, s, med(a, k), med(v, k), med(m, k), med(i, k) }
		function ratio(x, y, what, target,   b, k, q, m) {
			for (b = 1; b <= n; b++) if (at[x, b] > 0 && at[y, b] > 0) q[++k] = at[x, b] / at[y, b]
			if (!k) { printf "at %s/s: %s: no figure\n", r, what; return }
			m = med(q, k)
			printf "at %s/s: %s %.2f [%.2f-%.2f] over %d blocks", r, what, m, q[1], q[k], k
			if (target) printf " (target <= %s): %s", target, m <= target + 0 ? "met" : "NOT met"
			printf "\n" }
		END {
			show("uudp"); show("kudp"); show("chronyd")
			ratio("uudp", "chronyd", "CPU per reply uudp/chronyd", "0.333")
			# The generators answer every server alike: when their own
			# cost per reply is a third of all chronyd costs or more, no
			# server can meet the target on one machine.
			for (b = 1; b <= n; b++) if (at["chronyd", b] > 0) { g[++kg] = gn["chronyd", b] / at["chronyd", b]; gg[kg] = gn["chronyd", b] }
			if (kg) { m = med(g, kg)
				printf "at %s/s: the generators alone cost %.2f us per reply, %.2f of chronyd'"'"'s whole%s\n", r, med(gg, kg), m,
					m >= 0.333 ? ": the 1/3 target cannot be met with the generator on this machine" : "" }
			ratio("uudp", "kudp", "CPU per reply uudp/kernel UDP", "")
			for (b = 1; b <= n; b++) if (("uudp", b) in rt && rt["chronyd", b] > 0) { q[++k] = rt["uudp", b] / rt["chronyd", b]; u[k] = rt["uudp", b]; c[k] = rt["chronyd", b] }
			if (k) { m = med(q, k); printf "at %s/s: mean response time T3-T2, uudp %.2f us, chronyd %.2f us: ratio %.3f [%.3f-%.3f] (target <= 1): %s\n", r, med(u, k), med(c, k), m, q[1], q[k], m <= 1 ? "met" : "NOT met" }
		}' "$TMP/cpu"
done

# Interleaved mode (RU_XLEAVE=0 skips it): RU_XL_CLIENTS (1000) clients
# of build/bench/xlflood, each request naming its client's last reply,
# at RU_XL_RATE (20k/s) for RU_XL_SECONDS (2), the servers in turn in each
# block.  CPU per reply as above (xlflood is the generator), the share of
# replies that were interleaved, and the response time xlflood reads
# from the replies (t3k - t2k where interleaved: doc/xlflood in its
# source).  A server that lost a client's state (its table full, the
# stamp not yet there) answers in basic mode: the share says how often.
xl_rate=$(rate_num "${RU_XL_RATE:-20k}")
xl_n=${RU_XL_CLIENTS:-1000}
xl_secs=${RU_XL_SECONDS:-2}
xl_step() {	# -> "replies interleaved_pct mean_us attr srv gen"
	_p0=$(run_ns "$pid") _k0=$(run_ns $ksoft)
	/usr/bin/time -f '%U %S' -o "$TMP/xlt" $gen_pin ip netns exec "$NTPX_NS_CLIENT" \
		"$NTPX_TOP/build/bench/xlflood" "$port" "$xl_n" "$xl_rate" "$xl_secs" xleave \
		"$NTPX_REF_FAST" "$xlnet" >"$TMP/xl.out" 2>&1
	_srv=$(($(run_ns "$pid") - _p0)) _ks=$(($(run_ns $ksoft) - _k0))
	awk -v srv="$_srv" -v ks="$_ks" -v gen="$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$TMP/xlt")" '
		$1 == "sent" { r = $4; i = $6; m = $17 }
		END { if (r > 0) printf "%d %.1f %.3f %.3f %.3f %.3f\n", r, 100 * i / r, m,
			(srv + ks + gen) / 1e3 / r, srv / 1e3 / r, gen / 1e3 / r
			else print "0 0 0 0 0 0" }' "$TMP/xl.out"
}
if [ "${RU_XLEAVE:-1}" != 0 ] && [ -n "$xlnet" ] && [ -x "$NTPX_TOP/build/bench/xlflood" ]; then
	echo "interleaved: $xl_n clients of xlflood at $xl_rate/s, ${xl_secs}s per server and block"
	printf '  %-6s %-7s %8s %7s %9s  %7s %7s %7s\n' block server replies xleave% mean_us attr srv gen
	for b in $(seq 1 "$blocks"); do
		for srv in $servers; do
			start "$srv" || continue
			set -- $(xl_step)
			printf '  %-6s %-7s %8s %7s %9s  %7s %7s %7s\n' "$b" "$srv" "$@"
			echo "$b $srv $*" >>"$TMP/xl"
			stop
		done
	done
	awk '{ at[$2, $1] = $6; xl[$2, $1] = $4; gn[$2, $1] = $8; if ($1 > n) n = $1 }
		function med(v, k,   i, j, t) {
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
		END {
			for (b = 1; b <= n; b++) if (at["uudp", b] > 0 && at["chronyd", b] > 0) {
				q[++k] = at["uudp", b] / at["chronyd", b]; g[k] = gn["chronyd", b] / at["chronyd", b]
				xu[k] = xl["uudp", b]; xc[k] = xl["chronyd", b] }
			if (!k) { print "interleaved: CPU per reply uudp/chronyd: no figure"; exit }
			m = med(q, k)
			printf "interleaved: CPU per reply uudp/chronyd %.2f [%.2f-%.2f] over %d blocks (target <= 0.333): %s; interleaved replies %.0f%% and %.0f%%\n",
				m, q[1], q[k], k, m <= 0.333 ? "met" : "NOT met", med(xu, k), med(xc, k)
			m = med(g, k)
			printf "interleaved: the generator alone is %.2f of chronyd%s\n", m,
				m >= 0.333 ? ", so the 1/3 target cannot be met with the generator on this machine" : "" }' "$TMP/xl"
fi

# Where each server's time goes at the same rate: perf profiles of
# ntpreflect over uudp and of chronyd (RU_PROFILE=0 skips them), their
# processes alone (what runs in their system calls, the softirqs a veth
# send sets off included), the symbols that take 2% or more.
prof_rate=${RU_PROFILE_RATE:-${rates%% *}}
if [ "${RU_PROFILE:-1}" != 0 ] && command -v perf >/dev/null 2>&1; then
	for srv in $servers; do
		[ "$srv" = kudp ] && continue
		start "$srv" || continue
		ip netns exec "$NTPX_NS_CLIENT" loadgen --ntp "$(rate_num "$prof_rate")" -d 3s "$ep" \
			>/dev/null 2>"$TMP/prof.lg" &
		_lg=$!
		if perf record -q -g -p "$pid" -o "$TMP/perf.$srv" -- sleep 2 >/dev/null 2>&1; then
			echo "profile of $srv at $prof_rate/s (perf, its process, self time):"
			perf report -q -i "$TMP/perf.$srv" --no-children --sort dso,sym --stdio 2>/dev/null |
				awk '$1 ~ /%$/ && $1 + 0 >= 2 { sub(/^ +/, ""); print "  " $0 }' | head -n 20
		else
			echo "profile of $srv: perf record failed"
		fi
		wait "$_lg"
		stop
	done
fi

[ "${RU_CAPACITY:-1}" = 0 ] && exit 0

# Capacity: one climb per server.
verdict() {
	awk -v w="$1" -v g="$2" -v l="$3" -v sd="$4" -v cd="$5" 'BEGIN {
		if (l < 0.1) { print (g < 0.95 * w ? "generator" : "clean"); exit }
		print (cd > sd ? "generator" : "server") }'
}
try_step() {
	set -- $(step_run "$1")
	row cap "$srv" "$@"
	_v=$(verdict "$1" "$2" "$3" "$9" "${10}") _got=$2
}
echo "capacity to 0.1% loss:"
for srv in $servers; do
	start "$srv" || continue
	# Not a pipeline: a TERM or INT ends the climb at once (fg_wait).
	fg_wait capacity_climb $cap_rates >"$TMP/cap.$srv"
	grep -v '^capacity' "$TMP/cap.$srv"
	stop
done
cap_of() { awk '$1 == "capacity" { c = $2; b = $3 } END { print (c ? c : 0), (b ? b : "-") }' "$TMP/cap.$1" 2>/dev/null || echo 0 -; }
set -- $(cap_of uudp) $(cap_of chronyd)
awk -v u="$1" -v uby="$2" -v c="$3" -v cby="$4" 'BEGIN {
	lb = uby == "generator"
	printf "capacity: uudp %.0f/s%s, chronyd -x %.0f/s%s\n", u, lb ? " (generator-limited: at least)" : "",
		c, cby == "generator" ? " (generator-limited: at least)" : ""
	if (c > 0)
		printf "capacity uudp/chronyd %.2f%s (target >= 3): %s\n", u / c, lb ? " (at least)" : "",
			u / c >= 3 ? "met" : lb ? "not shown: the generators are the limit" : "NOT met"
	else
		print "capacity uudp/chronyd: no figure (chronyd had no clean step)" }'
