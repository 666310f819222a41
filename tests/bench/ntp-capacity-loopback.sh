#!/bin/sh
# SPDX-License-Identifier: ISC
# The old definition of the capacity figure (9a2ce97 and before), kept
# for one release beside tests/bench/ntp-capacity.sh, which runs it:
# server capacity on loopback with one loadgen --ntp beside it, the
# highest request rate each server answers with less than 0.1% loss,
# ntpreflect against chronyd (-x: it never touches the clock), and their
# ratio (the target was ntpreflect >= 2x).  Rates climb until a step loses more, or loadgen
# itself cannot reach the rate (then the server's capacity is at least
# that: the ratio is a lower bound).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PATH=$top/bin:$PATH
step=${BENCH_STEP:-2s}
rates=${BENCH_RATES:-"10k 20k 40k 60k 80k 100k 120k 160k 200k 300k"}
tmp=$(mktemp -d)
pid=
finish() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap finish EXIT
trap 'exit 130' INT TERM

port() { p=$((20000 + $$ % 20000 + $1)); while ss -Hlun "sport = :$p" | grep -q .; do p=$((p + 1)); done; echo $p; }
up() { i=0; while ! ss -Hlun "sport = :$1" | grep -q .; do i=$((i + 1)); [ $i -lt 500 ] || return 1; sleep 0.01; done; }

# capacity PORT: prints "RATE LIMITED_BY" for the highest clean rate.
capacity() {
	best=0 by=server
	for r in $rates; do
		loadgen --ntp "$r" -d "$step" "udp://127.0.0.1:$1" >/dev/null 2>"$tmp/lg" || break
		set -- "$1" $(awk '/ntp requests/ { for (i = 1; i <= NF; i++) { if ($i == "loss") l = $(i+1); if ($i == "rate") r = $(i+1) } }
			END { sub(/%/, "", l); sub(/\/s/, "", r); print l + 0, r + 0 }' "$tmp/lg")
		want=$(awk -v r="$r" 'BEGIN { m = 1; if (r ~ /k$/) m = 1e3; if (r ~ /M$/) m = 1e6; sub(/[kM]$/, "", r); print r * m }')
		if awk -v l="$2" 'BEGIN { exit !(l >= 0.1) }'; then
			break
		fi
		best=$3
		if awk -v got="$3" -v w="$want" 'BEGIN { exit !(got < 0.95 * w) }'; then
			by=loadgen
			break
		fi
	done
	echo "$best $by"
}

p1=$(port 0)
ntpreflect --stratum 1 "udp://127.0.0.1:$p1" 2>/dev/null &
pid=$!
up "$p1" || { echo "ntp-capacity: ntpreflect did not start"; exit 1; }
set -- $(capacity "$p1")
refl=$1 refl_by=$2
kill "$pid"; wait "$pid" 2>/dev/null; pid=

chrony=0 chrony_by=-
if command -v chronyd >/dev/null; then
	p2=$(port 7)
	cat >"$tmp/chrony.conf" <<EOC
port $p2
bindaddress 127.0.0.1
cmdport 0
allow 127.0.0.1
local stratum 10
pidfile $tmp/chronyd.pid
driftfile $tmp/drift
EOC
	# -x: never adjust the clock; -d: foreground, so its PID is ours.
	chronyd -x -d -f "$tmp/chrony.conf" >"$tmp/chronyd.log" 2>&1 &
	pid=$!
	if up "$p2"; then
		set -- $(capacity "$p2")
		chrony=$1 chrony_by=$2
	else
		echo "ntp-capacity: chronyd did not start: $(tail -1 "$tmp/chronyd.log")"
	fi
	kill "$pid"; wait "$pid" 2>/dev/null; pid=
fi

awk -v a="$refl" -v ab="$refl_by" -v b="$chrony" -v bb="$chrony_by" 'BEGIN {
	printf "loopback NTP capacity (< 0.1%% loss): ntpreflect %.0f/s%s, chronyd -x %.0f/s%s\n",
		a, ab == "loadgen" ? " (loadgen-limited: at least)" : "",
		b, bb == "loadgen" ? " (loadgen-limited: at least)" : ""
	if (b > 0)
		printf "ntpreflect/chronyd %.2f (target >= 2): %s\n", a / b, a / b >= 2 ? "met" : "NOT met"
	else
		print "ntpreflect/chronyd: no chronyd figure"
}'
