#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: userspace UDP (uudp over AF_XDP) against the kernel UDP path
# it bypasses, on the fast path of a lab of its own (bin/ntpx-lab: a veth
# between two namespaces), side by side in one run: kernel UDP blocking,
# kernel UDP busy polling, uudp busy polling (and uudp blocking, and uudp
# with native driver-mode XDP on veth, busy).  The server runs the same transport and poll mode as the
# client.  Delay = (T4-T1)-(T3-T2), in us; ratios are against kernel UDP
# with the same poll mode, and the last line against kernel blocking.
# One run, on a shared 2-core machine: read the ratios, not the third
# digit.  doc/uudp.md says why uudp on veth is not always faster.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../net/uudp-lib.sh"
N=${NTPX_BENCH_COUNT:-2000}
IV_US=500
port=12300

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

uudp_lab
run() {	# NAME SERVER-ENDPOINT CLIENT-ENDPOINT MODE
	spawn srv ip netns exec "$UB" ntpreflect --poll "$4" "$2" 2>/dev/null
	wait_until 5 udp_listening_in "$UB" "$port"
	ina ntpprobe --poll "$4" -i ${IV_US}us -w 100ms -c "$N" "$3" 2>/dev/null >"$TMP/$1.rec"
	kill "$srv"
	wait "$srv" 2>/dev/null
	offsetfit "$TMP/$1.rec" >"$TMP/$1.sum"
	eval "${1}_med=\$(awk '\$1 == \"rtt_median_us\" { print \$2 }' \"\$TMP/\$1.sum\")"
	eval "${1}_p99=\$(awk '\$1 == \"rtt_p99_us\" { print \$2 }' \"\$TMP/\$1.sum\")"
	eval "${1}_ok=\$(count_status \"\$TMP/\$1.rec\" ok)"
}

run kblock "udp://$IPB:$port" "udp://$IPB:$port" block
run kbusy "udp://$IPB:$port" "udp://$IPB:$port" busy
run ubusy "uudp://$IPB:$port?dev=$IFB&via=xdp" "uudp://$IPB:$port?dev=$IFA&via=xdp" busy
run ublock "uudp://$IPB:$port?dev=$IFB&via=xdp" "uudp://$IPB:$port?dev=$IFA&via=xdp" block
run unative "uudp://$IPB:$port?dev=$IFB&xdpmode=native" "uudp://$IPB:$port?dev=$IFA&xdpmode=native" busy

echo "uudp vs kernel UDP: ntpx-lab fast path (veth), $N exchanges at $IV_US us, delay in us"
printf '%-22s %6s %10s %10s %14s %14s\n' path ok median p99 "med/kernel" "p99/kernel"
row() {	# LABEL NAME REF
	eval "m=\$${2}_med p=\$${2}_p99 o=\$${2}_ok rm=\$${3}_med rp=\$${3}_p99"
	printf '%-22s %6s %10.3f %10.3f %14s %14s\n' "$1" "$o" "$m" "$p" \
		"$(ratio "$m" "$rm")" "$(ratio "$p" "$rp")"
}
row "kernel udp, block" kblock kblock
row "kernel udp, busy" kbusy kbusy
row "uudp xdp skb, busy" ubusy kbusy
row "uudp xdp skb, block" ublock kblock
row "uudp xdp native, busy" unative kbusy
echo "uudp busy vs kernel block: median $(ratio "$ubusy_med" "$kblock_med"), p99 $(ratio "$ubusy_p99" "$kblock_p99")"
