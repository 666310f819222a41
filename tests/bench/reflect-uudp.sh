#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect over uudp (AF_XDP) as a server for kernel-UDP clients,
# against ntpreflect over kernel UDP and chronyd -x (issue 38, 1).
#
# The servers run in a lab's reference namespace on its fast path (a
# veth, RU_QUEUES queues each way, default 1), the generators (RU_SENDERS
# loadgen --ntp, default 2, splitting the rate) in the client namespace.
# The server is pinned to the first CPU and the generators to the last
# (RU_PIN=0 does not pin), so that each core's work can be told apart.
# The servers (RU_SERVERS): uudp (ntpreflect over AF_XDP in native XDP,
# the path ntpreflect(1) says to serve a loaded experiment from), uudps
# (the same in generic XDP, uudp's default on veth), kudp (ntpreflect
# over kernel UDP) and chronyd -x; with RU_MAXWAIT=DUR also uudpw (uudp
# with maxwait=DUR: a request older than DUR dropped, counted).
#
# First the figures that decide: CPU per reply at fixed rates RU_RATES
# (default 20k and 40k, below chronyd's capacity here), in RU_BLOCKS
# (default 3) blocks of RU_STEP (default 2s) per server, the servers in
# turn in each block, so that a change in the machine's load falls on
# all of them.  Three figures per reply (us), over the replies the
# generators counted:
#   mach   the whole machine (/proc/stat: user, kernel and softirq of all
#          cores), the generators' and the other users' work included;
#   attr   what the experiment's own processes ran (/proc/PID/schedstat:
#          the server, the generators, every ksoftirqd);
#   core   the server's: its own run time plus its core's ksoftirqd
#          (the server pinned, the generators on the other core).  The
#          kernel accounts a softirq to whatever runs when it is raised
#          (tick accounting, no IRQ time accounting here), so a veth's
#          delivery runs on the sender's core: a reply's delivery into
#          the generators' sockets is in the server's figure, a request's
#          delivery into the server's namespace (the XDP program and its
#          copy into the UMEM for uudp; IP, UDP and the socket's queue for
#          the kernel servers) is in the generators'.  The first is the
#          same work for every server and the second is smaller for uudp,
#          so the ratio uudp/chronyd of this figure errs against uudp.
#          "gcore" is the generators' core likewise (the generators and
#          their core's ksoftirqd): it differs between servers by their
#          requests' delivery.
# Issue 38 asks for the machine's figure; with the generators on the
# same two cores it carries their cost (0.54-0.61 of chronyd's machine
# figure, one run of 20 Nov), which no server can take away, so the
# verdict is on the server's own core, and the machine's ratio is
# printed beside it.  Per step also the server's response time T3 - T2
# from its own stamps (min, mean, max, sd, as ntpperf prints).  Targets:
# uudp's CPU per reply <= 1/3 of chronyd's, and its response time at
# most chronyd's, at every rate; the median of the blocks' ratios
# [range].
#
# Then capacity to 0.1% loss (RU_CAPACITY=0 skips it): each server's
# climb (capacity_climb, tests/lib.sh; the steps of climb_step and
# climb_verdict, tests/bench/climb.sh, as ntp-capacity.sh's) at
# RU_CAP_RATES, target uudp >= 3x chronyd.  A step lost at the
# generators' own sockets, or a rate they cannot reach, is their limit,
# and the figure is then marked "at least".
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/climb.sh"
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
servers="uudp uudps kudp"
command -v chronyd >/dev/null && servers="uudp uudps kudp chronyd"
# RU_MAXWAIT=DUR adds uudpw: uudp (native XDP) with maxwait=DUR, which
# drops a request older than DUR when it reads it (doc/uudp.md), counted
# as rx_stale=.
[ -n "${RU_MAXWAIT:-}" ] && servers="$servers uudpw"
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

# The server on the first CPU, the generators on the last (RU_PIN=0:
# anywhere), so that they do not take each other's core and each core's
# softirq thread is one side's.
srv_pin= gen_pin= srv_cpu= gen_cpu=
if [ "${RU_PIN:-1}" != 0 ] && command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	srv_cpu=0 gen_cpu=$(($(nproc) - 1))
	srv_pin="taskset -c $srv_cpu" gen_pin="taskset -c $gen_cpu"
fi

# start SERVER: the server in the reference namespace, its PID in $pid;
# fails when it does not listen within 5 s.
start() {
	case $1 in
	uudp) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --clients 100000 \
		"uudp://$NTPX_REF_FAST:$port?dev=$NTPX_DEV_FAST&via=xdp&xdpmode=native" 2>"$TMP/srv.err" ;;
	uudpw) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --clients 100000 \
		"uudp://$NTPX_REF_FAST:$port?dev=$NTPX_DEV_FAST&via=xdp&xdpmode=native&maxwait=$RU_MAXWAIT" \
		2>"$TMP/srv.err" ;;
	uudps) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --clients 100000 \
		"uudp://$NTPX_REF_FAST:$port?dev=$NTPX_DEV_FAST&xdpmode=skb" 2>"$TMP/srv.err" ;;
	kudp) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 --clients 100000 \
		"udp://$NTPX_REF_FAST:$port" 2>"$TMP/srv.err" ;;
	chronyd) spawn pid $srv_pin ip netns exec "$NTPX_NS_REF" chronyd -x -d -f "$TMP/chrony.conf" \
		2>"$TMP/srv.err" ;;
	esac
	wait_until 5 in_ref || { echo "reflect-uudp: $1 did not start: $(tail -n 1 "$TMP/srv.err")"; return 1; }
}
stop() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }

# The server's run time (ns, /proc/PID/schedstat) and the softirq
# threads': with tick accounting, the softirq work a process's system
# call sets off (the veth's delivery) runs in that process's time, and
# the rest in ksoftirqd's.
run_ns() { for _rp; do awk '{ print $1 }' /proc/"$_rp"/schedstat 2>/dev/null || echo 0; done | awk '{ s += $1 } END { print s + 0 }'; }
ksoft=$(pgrep -d ' ' ksoftirqd)
ks_srv=$([ -n "$srv_cpu" ] && pgrep -x "ksoftirqd/$srv_cpu")
ks_gen=$([ -n "$gen_cpu" ] && pgrep -x "ksoftirqd/$gen_cpu")
# user (with nice), kernel, softirq (with irq), idle (with iowait): the machine's ticks
# The server's time runnable and not running (ns).
wait_ns() { awk '{ print $2 }' /proc/"$pid"/schedstat 2>/dev/null || echo 0; }
host_ticks() { awk '$1 == "cpu" { print $2 + $3, $4, $7 + $8, $5 + $6 + $9 }' /proc/stat; }

# step_run RATE: S generators at RATE/S each for $step against the
# running server (climb_step).  Prints "wanted got loss_pct replies min
# mean max sd srv_drop cli_drop m_usr m_sys m_sirq idle_pct attr srv gen
# core gcore": the response time in us; CPU per reply in us: the
# machine's (user, kernel, softirq, and its idle share in % over the
# step), what the experiment's own processes ran (the server, the
# generators, ksoftirqd), the server's own, the generators', the
# server's core and the generators' core (the header), "-" for these
# two when not pinned; and wait%, the share of the step the server was
# runnable and not running (/proc/PID/schedstat): its core taken by
# other work, whatever its own cost.  The kernel adds a wait to it when
# the wait ends, so one under way at the step's start counts whole:
# wait% is shown at most 100.
step_run() {
	_w0=$(wait_ns) _t0=$(date +%s%N)
	_p0=$(run_ns "$pid") _k0=$(run_ns $ksoft) _h0=$(host_ticks)
	_ks0=$(run_ns $ks_srv) _kg0=$(run_ns $ks_gen)
	_st=$(climb_step "$ep" "$1")
	_ticks="$_h0 $(host_ticks)"
	_srv=$(($(run_ns "$pid") - _p0)) _ks=$(($(run_ns $ksoft) - _k0))
	_kss=$(($(run_ns $ks_srv) - _ks0)) _ksg=$(($(run_ns $ks_gen) - _kg0))
	_wt=$(($(wait_ns) - _w0)) _dt=$(($(date +%s%N) - _t0))
	echo "$_st" | awk -v ticks="$_ticks" -v hz="$(getconf CLK_TCK)" -v srv="$_srv" -v ks="$_ks" \
		-v kss="$_kss" -v ksg="$_ksg" -v pinned="$srv_cpu" -v wt="$_wt" -v dt="$_dt" '{
			rep = $4; gen = $11
			split(ticks, t, " ")
			f = rep > 0 ? 1e6 / hz / rep : 0
			all = (t[5] + t[6] + t[7] + t[8]) - (t[1] + t[2] + t[3] + t[4])
			printf "%s %s %s %s %s %s %s %s %s %s %.3f %.3f %.3f %.1f %.3f %.3f %.3f", $1, $2, $3, $4,
				$5, $6, $7, $8, $9, $10,
				(t[5] - t[1]) * f, (t[6] - t[2]) * f, (t[7] - t[3]) * f,
				(all > 0 ? 100 * (t[8] - t[4]) / all : 0),
				(rep > 0 ? (srv + ks + gen) / 1e3 / rep : 0), (rep > 0 ? srv / 1e3 / rep : 0),
				(rep > 0 ? gen / 1e3 / rep : 0)
			if (pinned != "" && rep > 0)
				printf " %.3f %.3f", (srv + kss) / 1e3 / rep, (gen + ksg) / 1e3 / rep
			else
				printf " - -"
			w = dt > 0 ? 100 * wt / dt : 0
			printf " %.0f\n", (w > 100 ? 100 : w) }'
}

# row LABEL SERVER STEP-LINE...: one line of the table
hdr='  %-6s %-7s %8s %8s %7s  %7s %7s %8s %7s  %7s %7s %7s %7s %5s  %7s %7s %7s %7s  %7s %7s %5s\n'
row() {
	_l=$1 _sv=$2
	shift 2
	printf "$hdr" "$_l" "$_sv" "$1" "$2" "$3" "$5" "$6" "$7" "$8" "${11}" "${12}" "${13}" \
		"$(awk -v a="${11}" -v b="${12}" -v c="${13}" 'BEGIN { printf "%.3f", a + b + c }')" \
		"${14}" "${15}" "${16}" "${18}" "${19}" "$9" "${10}" "${20}"
}

ep=udp://$NTPX_REF_FAST:$port
echo "ntpreflect over uudp, machine CPU per reply: servers in $NTPX_NS_REF, $S loadgen --ntp in $NTPX_NS_CLIENT, fast path (veth, ${RU_QUEUES:-1} queue), $step steps, $blocks blocks"
printf "$hdr" block server wanted/s got/s loss% min_us mean_us max_us sd_us \
	m_usr m_sys m_sirq mach idle% attr srv core gcore srv_drop cli_drop wait%
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
		case $srv in uudp*) ;; *) false ;; esac && grep -o 'xsk_[a-z_]*=[0-9]*\|fill_short=[0-9]*\|rx_stale=[0-9]*' "$TMP/srv.err" |
			tr '\n' ' ' | sed 's/^/           '"$srv"' port, block '"$b"': /; s/ $/\n/'
	done
done

# Per rate, medians over the blocks: each server's CPU per reply (the
# experiment's, the machine's, the server's core and the generators'),
# the ratios uudp/chronyd of the server's core (the verdict), of the
# experiment's processes and of the machine [range], uudp/kudp and
# generic/native XDP of the server's core, and the response time.  On a
# shared machine the machine's figure also carries the other users' load
# (with no idle time left in a step it is only 2 cores over the rate,
# whatever the server).
# RU_BLOCKS=0 (with RU_XLEAVE=0 and RU_CAPACITY=0: the profile alone) has none.
[ -s "$TMP/cpu" ] && for r in $rates; do
	awk -v r="$r" '$3 == r { mach[$2, $1] = $14 + $15 + $16; idle[$2, $1] = $17; at[$2, $1] = $18
			sv[$2, $1] = $19; gn[$2, $1] = $20; rt[$2, $1] = $9; if ($1 > n) n = $1
			if ($21 != "-") { co[$2, $1] = $21; gc[$2, $1] = $22 } }
		function med(v, k,   i, j, t) {
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
		function show(s,   k, b, a, m, i, v, c, g, kc) {
			for (b = 1; b <= n; b++) if ((s, b) in at) { k++; a[k] = at[s, b]; m[k] = mach[s, b]; i[k] = idle[s, b]; v[k] = sv[s, b]
				if ((s, b) in co) { kc++; c[kc] = co[s, b]; g[kc] = gc[s, b] } }
			if (!k) return
			printf "at %s/s: %-7s CPU per reply: its own %.2f us (server %.2f us); machine %.2f us, idle %.0f%%",
				r, s, med(a, k), med(v, k), med(m, k), med(i, k)
			if (kc) printf "; server core %.2f us, generators core %.2f us", med(c, kc), med(g, kc)
			printf "\n" }
		function ratio(x, y, what, target, fig,   b, k, q, m, f) {
			for (b = 1; b <= n; b++) {
				if (fig == "core") { if (!((x, b) in co) || !((y, b) in co)) continue; f[1] = co[x, b]; f[2] = co[y, b] }
				else if (fig == "mach") { f[1] = mach[x, b]; f[2] = mach[y, b] }
				else { f[1] = at[x, b]; f[2] = at[y, b] }
				if (f[1] > 0 && f[2] > 0) q[++k] = f[1] / f[2] }
			if (!k) { printf "at %s/s: %s: no figure\n", r, what; return }
			m = med(q, k)
			printf "at %s/s: %s %.2f [%.2f-%.2f] over %d blocks", r, what, m, q[1], q[k], k
			if (target) printf " (target <= %s): %s", target, m <= target + 0 ? "met" : "NOT met"
			printf "\n" }
		function rtime(s,   b, k, q, u, c, m) {
			for (b = 1; b <= n; b++) if ((s, b) in rt && rt["chronyd", b] > 0) { q[++k] = rt[s, b] / rt["chronyd", b]; u[k] = rt[s, b]; c[k] = rt["chronyd", b] }
			if (k) { m = med(q, k); printf "at %s/s: mean response time T3-T2, %s %.2f us, chronyd %.2f us: ratio %.3f [%.3f-%.3f] (target <= 1): %s\n", r, s, med(u, k), med(c, k), m, q[1], q[k], m <= 1 ? "met" : "NOT met" } }
		END {
			show("uudp"); show("uudps"); show("uudpw"); show("kudp"); show("chronyd")
			ratio("uudp", "chronyd", "CPU per reply uudp/chronyd, the server'"'"'s core", "0.333", "core")
			ratio("uudp", "chronyd", "CPU per reply uudp/chronyd, the experiment'"'"'s processes", "", "attr")
			ratio("uudp", "chronyd", "CPU per reply uudp/chronyd, the whole machine", "", "mach")
			# The generators answer every server alike: when their own
			# cost per reply is a third of all chronyd costs or more, no
			# server can meet the target on one machine.
			for (b = 1; b <= n; b++) if (at["chronyd", b] > 0) { g[++kg] = gn["chronyd", b] / at["chronyd", b]; gg[kg] = gn["chronyd", b] }
			if (kg) { m = med(g, kg)
				printf "at %s/s: the generators alone cost %.2f us per reply, %.2f of chronyd'"'"'s whole%s\n", r, med(gg, kg), m,
					m >= 0.333 ? ": the 1/3 target cannot be met with the generator on this machine" : "" }
			ratio("uudp", "kudp", "CPU per reply uudp/kernel UDP, the server'"'"'s core", "", "core")
			ratio("uudps", "uudp", "CPU per reply uudp generic (skb) XDP / native, the server'"'"'s core", "", "core")
			rtime("uudp"); rtime("uudpw")
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
xl_step() {	# -> "replies interleaved_pct mean_us attr srv gen core" ("-": not pinned)
	_p0=$(run_ns "$pid") _k0=$(run_ns $ksoft) _ks0=$(run_ns $ks_srv)
	/usr/bin/time -f '%U %S' -o "$TMP/xlt" $gen_pin ip netns exec "$NTPX_NS_CLIENT" \
		"$NTPX_TOP/build/bench/xlflood" "$port" "$xl_n" "$xl_rate" "$xl_secs" xleave \
		"$NTPX_REF_FAST" "$xlnet" >"$TMP/xl.out" 2>&1
	_srv=$(($(run_ns "$pid") - _p0)) _ks=$(($(run_ns $ksoft) - _k0)) _kss=$(($(run_ns $ks_srv) - _ks0))
	awk -v srv="$_srv" -v ks="$_ks" -v kss="$_kss" -v pinned="$srv_cpu" \
		-v gen="$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$TMP/xlt")" '
		$1 == "sent" { r = $4; i = $6; m = $17 }
		END { if (r > 0) printf "%d %.1f %.3f %.3f %.3f %.3f %s\n", r, 100 * i / r, m,
			(srv + ks + gen) / 1e3 / r, srv / 1e3 / r, gen / 1e3 / r,
			pinned != "" ? sprintf("%.3f", (srv + kss) / 1e3 / r) : "-"
			else print "0 0 0 0 0 0 -" }' "$TMP/xl.out"
}
if [ "${RU_XLEAVE:-1}" != 0 ] && [ -n "$xlnet" ] && [ -x "$NTPX_TOP/build/bench/xlflood" ]; then
	echo "interleaved: $xl_n clients of xlflood at $xl_rate/s, ${xl_secs}s per server and block"
	printf '  %-6s %-7s %8s %7s %9s  %7s %7s %7s %7s\n' block server replies xleave% mean_us attr srv gen core
	for b in $(seq 1 "$blocks"); do
		for srv in $servers; do
			start "$srv" || continue
			set -- $(xl_step)
			printf '  %-6s %-7s %8s %7s %9s  %7s %7s %7s %7s\n' "$b" "$srv" "$@"
			echo "$b $srv $*" >>"$TMP/xl"
			stop
		done
	done
	# The verdict on the server's core where pinned (as above), else on
	# the experiment's processes.
	awk '{ at[$2, $1] = $6; xl[$2, $1] = $4; gn[$2, $1] = $8; if ($1 > n) n = $1
			if ($9 != "-") { co[$2, $1] = $9; pin = 1 } }
		function med(v, k,   i, j, t) {
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
		END {
			for (b = 1; b <= n; b++) if (at["uudp", b] > 0 && at["chronyd", b] > 0) {
				q[++k] = pin ? co["uudp", b] / co["chronyd", b] : at["uudp", b] / at["chronyd", b]
				g[k] = gn["chronyd", b] / at["chronyd", b]
				xu[k] = xl["uudp", b]; xc[k] = xl["chronyd", b] }
			if (!k) { print "interleaved: CPU per reply uudp/chronyd: no figure"; exit }
			m = med(q, k)
			printf "interleaved: CPU per reply uudp/chronyd, %s %.2f [%.2f-%.2f] over %d blocks (target <= 0.333): %s; interleaved replies %.0f%% and %.0f%%\n",
				pin ? "the server'"'"'s core" : "the experiment'"'"'s processes", m, q[1], q[k], k, m <= 0.333 ? "met" : "NOT met", med(xu, k), med(xc, k)
			m = med(g, k)
			printf "interleaved: the generator alone is %.2f of chronyd%s\n", m,
				m >= 0.333 ? ", so the 1/3 target cannot be met with the generator on this machine" : "" }' "$TMP/xl"
fi

# Where each server's core goes at the same rate (RU_PROFILE=0 skips
# it): perf record -g of the server's core (perf itself on the
# generators' core) while the generators send RU_PROFILE_RATE (the first
# of RU_RATES) for 2 s, each server in turn, perf running from before
# the step to after it.  Every sample is put in one
# class by its call chain (tests/bench/perfclass.awk): the server's own
# user space, its system calls (send, receive, poll, the rest), the
# softirq a send sets off (on veth, the reply's delivery into the
# client's socket), waking the client, the server's own sleep and
# switch; its core's ksoftirqd; the other processes on the core (on a
# shared machine, the other users'); idle.  A server's classes are given
# in us per reply (its share of the server's samples times its run time
# per reply from /proc/PID/schedstat over the profile), the rest in % of
# the core, and "wait%" is the share of the profile the server was
# runnable and not running (schedstat): a server that waits is one whose
# core is taken, not one that is slow.
prof_rate=${RU_PROFILE_RATE:-${rates%% *}}
if [ "${RU_PROFILE:-1}" != 0 ] && { [ -z "$srv_cpu" ] || ! command -v perf >/dev/null 2>&1; }; then
	echo "profile of the server's core: not taken ($([ -z "$srv_cpu" ] && echo "the server is not pinned" || echo "no perf"))"
elif [ "${RU_PROFILE:-1}" != 0 ]; then
	echo "profile of the server's core at $prof_rate/s (perf -C $srv_cpu, 2 s per server; us per reply, and % of the core):"
	phdr='  %-7s %7s %6s %6s  %6s %6s %6s %6s %6s %6s %6s %6s %6s  %6s %6s %6s %5s\n'
	printf "$phdr" server got/s us/rep wait% user send recv poll sysc sirq wake sched kern ksoft% other% idle% samp
	for srv in $servers; do
		start "$srv" || continue
		# perf starts first and stops after the step, so that every
		# reply the generators counted is in the profile and in the
		# server's run time.
		spawn _pf $gen_pin perf record -q -g -C "$srv_cpu" -o "$TMP/perf.$srv" >/dev/null 2>"$TMP/perf.err"
		wait_until 5 test -s "$TMP/perf.$srv"
		_s0=$(cat /proc/"$pid"/schedstat) _t0=$(date +%s%N)
		_st=$(step=2s; climb_step "$ep" "$prof_rate")
		_s1=$(cat /proc/"$pid"/schedstat) _t1=$(date +%s%N)
		# perf writes its data at SIGINT and exits 130.
		kill -INT "$_pf"
		wait "$_pf"
		if [ -s "$TMP/perf.$srv" ] && perf script -i "$TMP/perf.$srv" >"$TMP/perf.txt" 2>/dev/null; then
			_comm=ntpreflect
			[ "$srv" = chronyd ] && _comm=chronyd
			awk -v srv="$_comm" -f "$(dirname "$0")/perfclass.awk" "$TMP/perf.txt" |
				awk -v s0="$_s0" -v s1="$_s1" -v dt="$((_t1 - _t0))" -v st="$_st" -v name="$srv" -v fmt="$phdr" '
				{ n[$1] = $2 }
				END {
					split(s0, a, " "); split(s1, b, " "); split(st, g, " ")
					run = b[1] - a[1]; wt = b[2] - a[2]; rep = g[4]
					own = n["user"] + n["send"] + n["recv"] + n["poll"] + n["sysc"] + n["sirq"] + n["wake"] + n["sched"] + n["kern"]
					f = own > 0 && rep > 0 ? run / 1e3 / rep / own : 0
					c = n["total"] > 0 ? 100 / n["total"] : 0
					printf fmt, name, g[2], sprintf("%.2f", rep > 0 ? run / 1e3 / rep : 0), sprintf("%.0f", (100 * wt / dt > 100 ? 100 : 100 * wt / dt)),
						sprintf("%.2f", n["user"] * f), sprintf("%.2f", n["send"] * f), sprintf("%.2f", n["recv"] * f),
						sprintf("%.2f", n["poll"] * f), sprintf("%.2f", n["sysc"] * f), sprintf("%.2f", n["sirq"] * f),
						sprintf("%.2f", n["wake"] * f), sprintf("%.2f", n["sched"] * f), sprintf("%.2f", n["kern"] * f),
						sprintf("%.0f", n["ksoft"] * c), sprintf("%.0f", n["others"] * c), sprintf("%.0f", n["idle"] * c), n["total"] + 0 }'
		else
			echo "  $srv: perf record failed: $(tail -n 1 "$TMP/perf.err")"
		fi
		stop
	done
fi

[ "${RU_CAPACITY:-1}" = 0 ] && exit 0

# Capacity: one climb per server.
try_step() {
	set -- $(step_run "$1")
	row cap "$srv" "$@"
	_v=$(climb_verdict "$1" "$2" "$3" "$9" "${10}") _got=$2
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
