#!/bin/sh
# SPDX-License-Identifier: ISC
# What Network Time Security costs a server and a client, on loopback,
# every figure a ratio within this run:
#
#   - ntpreflect's capacity with NTS (loadgen --ntp --nts: every request
#     sealed, a cookie opened and one sealed per reply) over its capacity
#     without (target: >= 0.6; chrony's published ratio is about 0.42),
#     and chronyd's (-x, ntsservercert) the same way;
#   - the median delay ntpprobe --nts adds over ntpprobe on the same
#     server, for ntpreflect and for chronyd;
#   - the steadier figure behind the capacity ratio: ntpreflect's CPU
#     time per reply at fixed rates below both capacities (CPU_RATES,
#     default "5000 10000"), plain and NTS alternating in CPU_BLOCKS
#     (default 5) runs of each, the order swapped every block, from the
#     NTP thread's run time in /proc/PID/schedstat (the main thread's:
#     the NTS-KE threads are not in it) over the replies loadgen counted.
#     On this shared machine the capacity ratio scattered from 0.22 to
#     1.00 between runs of one build; what a reply costs moves much less.
#     The ratio plain/NTS is the capacity ratio's counterpart, with its
#     target (>= 0.6): the median of the blocks' ratios [lowest-highest].
#
# The capacity is the highest rate answered with less than 0.1% loss, as
# tests/bench/ntp-capacity.sh finds it; a rate loadgen itself cannot
# reach makes the figure a lower bound, and says so.  Certificates are
# made here with openssl.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PATH=$top/bin:$PATH
step=${BENCH_STEP:-2s}
rates=${BENCH_RATES:-"5k 10k 20k 30k 40k 50k 60k 80k 100k 120k 140k 160k 180k 200k 250k 300k"}
probes=${BENCH_PROBES:-100}
tmp=$(mktemp -d)
pid=
finish() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap finish EXIT
trap 'exit 130' INT TERM

command -v openssl >/dev/null || { echo "nts: no openssl: skipped"; exit 0; }

port() { p=$((20000 + $$ % 20000 + $1)); while ss -Hlun "sport = :$p" | grep -q .; do p=$((p + 1)); done; echo $p; }
tport() { p=$((40000 + $$ % 20000 + $1)); while ss -Hltn "sport = :$p" | grep -q .; do p=$((p + 1)); done; echo $p; }
up() { i=0; while ! ss -Hl${2:-u}n "sport = :$1" | grep -q .; do i=$((i + 1)); [ $i -lt 500 ] || return 1; sleep 0.01; done; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$tmp/ca.key" -out "$tmp/ca.pem" -subj "/CN=ntpx bench CA" 2>/dev/null &&
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$tmp/srv.key" -out "$tmp/srv.csr" -subj "/CN=127.0.0.1" 2>/dev/null &&
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$tmp/ext" &&
openssl x509 -req -in "$tmp/srv.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
	-days 2 -extfile "$tmp/ext" -out "$tmp/srv.pem" 2>/dev/null ||
	{ echo "nts: cannot make the certificates"; exit 1; }

# capacity PORT [LOADGEN-OPTIONS]: "RATE LIMITED_BY" for the highest clean
# rate.  A step that fails is tried once more before it counts: the
# machine is shared, and one bad second must not end the climb.
capacity() {
	cp=$1
	shift
	best=0 by=server
	for r in $rates; do
		want=$(awk -v r="$r" 'BEGIN { m = 1; if (r ~ /k$/) m = 1e3; if (r ~ /M$/) m = 1e6; sub(/[kM]$/, "", r); print r * m }')
		verdict=
		for try in 1 2; do
			if ! loadgen --ntp "$r" -d "$step" "$@" "udp://127.0.0.1:$cp" >/dev/null 2>"$tmp/lg"; then
				sed 's/^/nts: /' "$tmp/lg" >&2
				verdict=error
				break
			fi
			read -r loss got <<EOF
$(awk '/ntp requests/ { for (i = 1; i <= NF; i++) { if ($i == "loss") l = $(i+1); if ($i == "rate") r = $(i+1) } }
	END { sub(/%/, "", l); sub(/\/s/, "", r); print l + 0, r + 0 }' "$tmp/lg")
EOF
			if awk -v l="$loss" 'BEGIN { exit !(l >= 0.1) }'; then
				verdict=lossy
			elif awk -v g="$got" -v w="$want" 'BEGIN { exit !(g < 0.95 * w) }'; then
				verdict=slow
			else
				verdict=clean
				break
			fi
		done
		case $verdict in
		clean) best=$got ;;
		slow) [ "$got" -gt "$best" ] 2>/dev/null && best=$got; by=loadgen; break ;;
		*) break ;;
		esac
	done
	echo "$best $by"
}

# delays PORT FILE [NTPPROBE-OPTIONS]: the delays of ok exchanges, ns,
# appended to FILE.
delays() {
	mp=$1 df=$2
	shift 2
	ntpprobe --records -i 5ms -c "$probes" -w 1s "$@" "udp://127.0.0.1:$mp" 2>/dev/null |
		awk '/^#fields/ { for (i = 2; i <= NF; i++) c[$i] = i - 1; next } /^#/ { next }
			$c["status"] == "ok" { print $c["delay"] }' >> "$df"
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "nan" }'; }

# measure NAME PORT KEPORT [TARGET]: capacity and delay, plain and NTS, of
# the server there.
measure() {
	name=$1 mport=$2 kport=$3 target=${4:-}
	# The delays first, before any flood, plain and NTS in turn (four
	# rounds each), so that neither gets the quieter moments.
	: > "$tmp/d0"; : > "$tmp/d1"
	for round in 1 2 3 4; do
		delays "$mport" "$tmp/d0"
		delays "$mport" "$tmp/d1" --nts="127.0.0.1:$kport" --ca "$tmp/ca.pem"
	done
	d0=$(median "$tmp/d0") d1=$(median "$tmp/d1")
	read -r plain plain_by <<EOF
$(capacity "$mport")
EOF
	read -r nts nts_by <<EOF
$(capacity "$mport" --nts="127.0.0.1:$kport" --ca "$tmp/ca.pem")
EOF
	awk -v s="$name" -v a="$plain" -v ab="$plain_by" -v b="$nts" -v bb="$nts_by" -v d0="$d0" -v d1="$d1" \
	    -v target="$target" 'BEGIN {
		lb = (ab == "loadgen" || bb == "loadgen") ? " (loadgen-limited: a bound)" : ""
		printf "%s: capacity plain %.0f/s, NTS %.0f/s, NTS/plain %.2f%s", s, a, b, (a > 0 ? b / a : 0), lb
		# Met as printed: the steps make the ratio no finer than that.
		r = a > 0 ? sprintf("%.2f", b / a) + 0 : 0
		if (target != "") printf " (target >= %s): %s", target, (r >= target ? "met" : "NOT met")
		printf "\n%s: median delay plain %.1f us, NTS %.1f us, NTS adds %.1f us (%.2fx)\n",
			s, d0 / 1e3, d1 / 1e3, (d1 - d0) / 1e3, (d0 > 0 ? d1 / d0 : 0)
	}'
}

p1=$(port 0) k1=$(tport 0)
ntpreflect --stratum 1 --nts-cert "$tmp/srv.pem" --nts-key "$tmp/srv.key" --nts-port "$k1" "udp://127.0.0.1:$p1" 2>"$tmp/refl.err" &
pid=$!
up "$p1" && up "$k1" t || { echo "nts: ntpreflect did not start: $(tail -1 "$tmp/refl.err")"; exit 1; }
measure ntpreflect "$p1" "$k1" 0.6

# cpu_run RATE [LOADGEN-OPTIONS]: the NTP thread's CPU per reply, us, over
# one run at RATE ("-" when nothing was answered).
cpu_run() {
	cr=$1
	shift
	read -r c0 _ <"/proc/$pid/schedstat"
	loadgen --ntp "$cr" -d "$cpu_step" "$@" "udp://127.0.0.1:$p1" >/dev/null 2>"$tmp/lg" || { echo -; return; }
	read -r c1 _ <"/proc/$pid/schedstat"
	awk -v c=$((c1 - c0)) '/ntp requests/ { for (i = 1; i <= NF; i++) if ($i == "replies") n = $(i + 1) }
		END { if (n > 0) printf "%.3f\n", c / n / 1000; else print "-" }' "$tmp/lg"
}
# "MEDIAN LOWEST HIGHEST" of the numbers in FILE.
spread() { grep -v '^-' "$1" | sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "- - -"; exit }
	print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'; }
cpu_step=${CPU_STEP:-2s}
cpu_blocks=${CPU_BLOCKS:-5}
if [ -r "/proc/$pid/schedstat" ]; then
	for rate in ${CPU_RATES:-5000 10000}; do
		: >"$tmp/cp"; : >"$tmp/cn"; : >"$tmp/cr"
		for b in $(seq 1 "$cpu_blocks"); do
			if [ $((b % 2)) = 1 ]; then
				a=$(cpu_run "$rate") n=$(cpu_run "$rate" --nts="127.0.0.1:$k1" --ca "$tmp/ca.pem")
			else
				n=$(cpu_run "$rate" --nts="127.0.0.1:$k1" --ca "$tmp/ca.pem") a=$(cpu_run "$rate")
			fi
			echo "$a" >>"$tmp/cp"; echo "$n" >>"$tmp/cn"
			echo "$a $n" | awk '$1 != "-" && $2 != "-" && $2 > 0 { printf "%.3f\n", $1 / $2 }' >>"$tmp/cr"
		done
		set -- $(spread "$tmp/cp") $(spread "$tmp/cn") $(spread "$tmp/cr")
		echo "ntpreflect: CPU per reply at $rate/s, median of $cpu_blocks blocks: plain $1 us [$2-$3], NTS $4 us [$5-$6]"
		awk -v m="$7" -v lo="$8" -v hi="$9" -v r="$rate" 'BEGIN {
			if (m == "-") { printf "ntpreflect: ratio plain/NTS CPU per reply at %s/s: no figure\n", r; exit }
			printf "ntpreflect: ratio plain/NTS CPU per reply at %s/s %.2f [%.2f-%.2f] (target >= 0.6): %s\n",
				r, m, lo, hi, m >= 0.6 ? "met" : "NOT met" }'
	done
else
	echo "ntpreflect: CPU per reply: no /proc/PID/schedstat here"
fi
kill "$pid"; wait "$pid" 2>/dev/null; pid=

if command -v chronyd >/dev/null; then
	p2=$(port 7) k2=$(tport 7)
	cat >"$tmp/chrony.conf" <<EOC
port $p2
bindaddress 127.0.0.1
cmdport 0
allow 127.0.0.1
local stratum 10
pidfile $tmp/chronyd.pid
ntsport $k2
ntsservercert $tmp/srv.pem
ntsserverkey $tmp/srv.key
EOC
	# -x: never adjust the clock; -d: foreground, so its PID is ours; -u
	# root: chronyd must still read the key in our private directory.
	chronyd -x -d -u root -f "$tmp/chrony.conf" >"$tmp/chronyd.log" 2>&1 &
	pid=$!
	if up "$p2" && up "$k2" t; then
		measure "chronyd -x" "$p2" "$k2" ""
	else
		echo "nts: chronyd did not start: $(tail -1 "$tmp/chronyd.log")"
	fi
	kill "$pid"; wait "$pid" 2>/dev/null; pid=
fi
