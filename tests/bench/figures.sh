# SPDX-License-Identifier: ISC
# tests/bench/figures.sh - one block of each figure that bench-quick
# (tests/bench/quick.sh) and bench-ab (tests/bench/ab.sh) measure, sourced
# after tests/lib.sh.  Each function runs one short block and prints
# "MEDIAN_NS P99_NS N" of the delay (T4-T1)-(T3-T2); the callers alternate
# blocks so that a change in the machine's load falls on every figure,
# and quote ratios from the same run (this machine is shared and noisy).
#
#   fig_floor MODE [WORD...]                 build/bench/pingpong on loopback,
#                                            WORD stamp, stamp-nosched, poll
#   fig_ntpx BIN MODE [OPTION...]            BIN/ntpprobe against BIN/ntpreflect
#                                            on loopback, both with OPTION...
#   fig_lab_up                               a lab of its own (tests/net/uudp-lib.sh)
#   fig_lab BIN SERVER CLIENT MODE [OPTION...]  in the lab, SERVER and CLIENT
#                                            each kudp (kernel UDP), uudp
#                                            (AF_XDP, generic XDP) or uudpn
#                                            (native XDP on veth), poll MODE
#   fig_reflect_cpu BIN SERVER [RATE]        in the lab, BIN/ntpreflect as SERVER
#                                            (kudp, uudp or uudpn) answering
#                                            BIN/loadgen --ntp at RATE (20k) for
#                                            FIG_CPU_DUR (0.5s), pinned apart:
#                                            "CORE_US SERVER_US N" per reply (three
#                                            fields, as fig_ratio reads a line)
#   fig_stat FILE...                         the median over lines of "V ..."
#                                            and their range: "MED MIN MAX"
#   fig_cpu CMD...                           CMD's CPU time, user and system,
#                                            its children's too, in ns
#   fig_fits BIN DIR                         fig_cpu of BIN/offsetfit on each
#                                            DIR/*.rec in turn
#
# FIG_COUNT exchanges per block (default 400) at FIG_IV_US us (500).
# MODE is block or busy.  BIN is a tree's bin/ (this tree's or the other
# one's in bench-ab); the records are read by column name, so the tools
# of any commit that writes a #fields header will do.

FIG_COUNT=${FIG_COUNT:-400}
FIG_IV_US=${FIG_IV_US:-500}
FIG_PP=${FIG_PP:-$NTPX_TOP/build/bench/pingpong}

# "MEDIAN P99 N" of the ok records' delay in FILE.
fig_quant() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { print field("delay") }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END {
			if (!NR) { print "- - 0"; exit }
			p = int(0.99 * NR + 0.5); if (p < 1) p = 1
			print v[int((NR + 1) / 2)], v[p], NR }'
}

fig_floor() {	# MODE [WORD...]
	_fp=$(free_udp_port)
	_fb=; [ "$1" = busy ] && _fb=busy
	shift
	spawn _fs "$FIG_PP" server "$_fp" $_fb "$@"
	wait_until 5 udp_listening "$_fp" || { echo "- - 0"; return; }
	"$FIG_PP" client 127.0.0.1 "$_fp" "$FIG_IV_US" "$FIG_COUNT" $_fb "$@" || echo "- - 0"
	kill "$_fs"; wait "$_fs" 2>/dev/null
}

fig_ntpx() {	# BIN MODE [OPTION...]
	_fbin=$1 _fm=$2
	shift 2
	_fp=$(free_udp_port)
	spawn _fs "$_fbin/ntpreflect" --stratum 1 --poll "$_fm" "$@" "udp://127.0.0.1:$_fp" 2>/dev/null
	wait_until 5 udp_listening "$_fp" || { echo "- - 0"; return; }
	"$_fbin/ntpprobe" --poll "$_fm" -i "${FIG_IV_US}us" -w 100ms -c "$FIG_COUNT" "$@" \
		"udp://127.0.0.1:$_fp" >"$TMP/fig.rec" 2>/dev/null
	kill "$_fs"; wait "$_fs" 2>/dev/null
	fig_quant "$TMP/fig.rec"
}

# 0 with a lab up (removed at exit); 1 without one (not root, no ip or
# ethtool, ntpx-lab failed), never the suite's skip_all: the caller
# says what it leaves out.
fig_lab_up() {
	. "$NTPX_TOP/tests/net/uudp-lib.sh"
	# One queue each way, not the suites' four: bench-ab runs trees from
	# before issue 35 in the same lab, whose uudp served queue 0 alone,
	# and a figure stays the figure it was (NTPX_UUDP_QUEUES to change).
	UUDP_QUEUES=${NTPX_UUDP_QUEUES:-1}
	test_have_prereq ROOT && command -v ip >/dev/null 2>&1 && command -v ethtool >/dev/null 2>&1 ||
		return 1
	_fig_it=$_in_test
	_in_test=1
	uudp_lab
	_fig_rc=$?
	_in_test=$_fig_it
	return $_fig_rc
}

fig_ep() {	# kudp|uudp DEV -> the endpoint of the lab's reference
	case $1 in
	kudp) echo "udp://$IPB:12300" ;;
	uudp) echo "uudp://$IPB:12300?dev=$2&via=xdp" ;;
	uudpn) echo "uudp://$IPB:12300?dev=$2&xdpmode=native" ;;
	esac
}

fig_lab() {	# BIN SERVER CLIENT MODE [OPTION...]
	_fbin=$1 _fsrv=$2 _fcli=$3 _fm=$4
	shift 4
	spawn _fs ip netns exec "$UB" "$_fbin/ntpreflect" --stratum 1 --poll "$_fm" "$@" \
		"$(fig_ep "$_fsrv" "$IFB")" 2>/dev/null
	wait_until 5 udp_listening_in "$UB" 12300 || { echo "- - 0"; return; }
	ip netns exec "$UA" "$_fbin/ntpprobe" --poll "$_fm" -i "${FIG_IV_US}us" -w 100ms \
		-c "$FIG_COUNT" "$@" "$(fig_ep "$_fcli" "$IFA")" >"$TMP/fig.rec" 2>/dev/null
	kill "$_fs"; wait "$_fs" 2>/dev/null
	fig_quant "$TMP/fig.rec"
}

# The reflector's CPU per reply (us), the server pinned to the first CPU
# and the generator to the last (when there are two): first the server's
# core, what the server and that core's ksoftirqd ran
# (/proc/PID/schedstat), then the server's own and the count (on one
# CPU, unpinned: the server, the generator's rusage and every ksoftirqd
# in the first field).  On a
# veth the sender's system call runs the receiver's softirq: a reply's
# delivery into the generator's socket is on the server's core (the same
# work for every server), a request's delivery into the server's
# namespace on the generator's (the XDP program and its copy for uudp;
# IP, UDP and the socket's queue for the kernel server, the larger): so
# the server's core, without the generator's cost, errs against uudp
# when the two are compared (tests/bench/reflect-uudp.sh says more).
fig_run_ns() { for _rp; do awk '{ print $1 }' /proc/"$_rp"/schedstat 2>/dev/null || echo 0; done | awk '{ s += $1 } END { print s + 0 }'; }
fig_reflect_cpu() {	# BIN SERVER [RATE]
	_fbin=$1 _fsrv=$2 _frate=${3:-20k}
	_fsp= _fgp= _fks=
	if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
		_fsp="taskset -c 0" _fgp="taskset -c $(($(nproc) - 1))" _fks=$(pgrep -x ksoftirqd/0)
	fi
	spawn _fs $_fsp ip netns exec "$UB" "$_fbin/ntpreflect" --stratum 1 --quiet \
		"$(fig_ep "$_fsrv" "$IFB")" 2>/dev/null
	wait_until 5 udp_listening_in "$UB" 12300 || { echo "- - 0"; return; }
	_fk=$(pgrep -d ' ' ksoftirqd)
	_fp0=$(fig_run_ns "$_fs") _fk0=$(fig_run_ns $_fk) _fc0=$(fig_run_ns $_fks)
	/usr/bin/time -f '%U %S' -o "$TMP/fcpu.gen" $_fgp ip netns exec "$UA" "$_fbin/loadgen" \
		--ntp "$_frate" -d "${FIG_CPU_DUR:-0.5s}" "udp://$IPB:12300" >/dev/null 2>"$TMP/fcpu.lg"
	_fp=$(($(fig_run_ns "$_fs") - _fp0)) _fk=$(($(fig_run_ns $_fk) - _fk0))
	_fc=$(($(fig_run_ns $_fks) - _fc0))
	kill "$_fs"; wait "$_fs" 2>/dev/null
	awk -v srv="$_fp" -v ks="$_fk" -v core="$_fc" -v pinned="$_fks" \
		-v gen="$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$TMP/fcpu.gen")" '
		/ntp requests/ { for (i = 1; i <= NF; i++) if ($i == "replies") r = $(i + 1) }
		END { if (r > 0 && pinned != "") printf "%.3f %.3f %d\n", (srv + core) / 1e3 / r, srv / 1e3 / r, r
			else if (r > 0) printf "%.3f %.3f %d\n", (srv + ks + gen) / 1e3 / r, srv / 1e3 / r, r
			else print "- - 0" }' "$TMP/fcpu.lg"
}

# "NS - 1": the CPU time of CMD (and of what it waited for), for the
# figures of tools that read records: steadier than the elapsed time on a
# shared machine.  Its peak RSS in KiB is left in $TMP/cpu.rss.
fig_cpu() {	# CMD...
	/usr/bin/time -f '%U %S %M' -o "$TMP/cpu" "$@" >/dev/null 2>&1 || { echo "- - 0"; return; }
	awk '{ print $3 }' "$TMP/cpu" >"$TMP/cpu.rss"
	awk '{ printf "%.0f - 1\n", ($1 + $2) * 1e9 }' "$TMP/cpu"
}

# What fitting a mesh's pairs costs without ntpmesh: an offsetfit a file.
fig_fits() {	# BIN DIR
	fig_cpu sh -c 'for f; do "$0" "$f" >/dev/null || exit 1; done' "$1/offsetfit" "$2"/*.rec
}

fig_stat() {	# FILE: one value a line -> "MEDIAN MIN MAX" ("- - -" if none)
	grep -v '^-' "$1" | sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "- - -"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR] }'
}

# A / B of two "MEDIAN P99 N" lines' column COL (1 median, 2 p99), or "-".
fig_ratio() {	# A-LINE B-LINE COL
	echo "$1 $2" | awk -v c="$3" '{ a = $c; b = $(c + 3)
		if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.3f\n", a / b }'
}
