#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: how close loadgen --calibrate comes to the slow path's shaper
# in a lab of its own (target: within 5% of the shaper's rate).  It can
# find the shaper only if this machine sends faster than the shaper
# passes, so on a busy or slow machine it comes out low: a capacity
# target, not a test (tests/net/loadgen.t checks what is exact).
. "$(dirname "$0")/../lib.sh"
need_prereq ROOT
lab_up cb
spawn sink $NTPX_REF_EXEC loadgen --sink udp://0.0.0.0:9000 >/dev/null 2>&1
wait_until 5 udp_listening 9000 "$NTPX_NS_REF" || { echo "calibrate: the sink did not start" >&2; exit 1; }
rc=0
for i in 1 2 3; do
	cap=$($NTPX_CLIENT_EXEC loadgen --calibrate -d 1.5s "udp://$NTPX_REF_SLOW:9000" 2>/dev/null |
		awk '$1 == "capacity_l2_bps" { print $2 }')
	r=$(awk -v c="${cap:-0}" -v s="$NTPX_SLOW_RATE" 'BEGIN { printf "%.3f", c / s }')
	echo "calibrate: run $i: ${cap:-none} bit/s on the wire, shaper $NTPX_SLOW_RATE: ratio $r (target 0.95 to 1.05)"
	awk -v r="$r" 'BEGIN { exit !(r >= 0.95 && r <= 1.05) }' || rc=1
done
exit $rc
