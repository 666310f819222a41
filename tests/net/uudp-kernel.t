#!/bin/sh
# SPDX-License-Identifier: ISC
# A uudp client (via=xdp) against kernel UDP servers, in a lab made by
# ntpx-lab and nothing else: ntpreflect over udp:// and chronyd -x (it
# never touches the clock) in the reference namespace, on both paths.
# Kernel sockets leave the UDP checksum to the device, and veth never
# completes it (doc/uudp.md, "veth and UDP checksums").  On fast the lab
# turns the offload off, so every reply must arrive with a complete
# checksum; on slow it keeps it, so every reply arrives with a partial
# one, which uudp on veth must accept by itself.  Either way every reply
# is accepted and none is refused for its checksum (rx_udp_csum).  Last,
# the other way round on slow: a kernel client's partial checksums reach
# a uudp ntpreflect, which answers them all.  Nothing in the lab loses a
# datagram by chance (the slow path's queue is far from full at 20
# requests a second), so every exchange must be ok; the probe waits up to
# 5 s for each reply, a limit on a failure (as wait_until's), not a bound
# on timing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need ntpprobe ntpreflect chronyd
lab_up k

n=40
# The probe: N requests at 50 ms from the client namespace to ADDR on
# DEV, records in FILE, its summary in FILE.err.
probe() {	# FILE ADDR DEV
	ip netns exec "$NTPX_NS_CLIENT" ntpprobe -i 50ms -w 5s -c "$n" \
		"uudp://$2:123?dev=$3&via=xdp" >"$1" 2>"$1.err"
}
# Sum of the refusal counters in FILE: rx_* but rx_ok and those that
# count accepted frames.
refused() {
	sed -n 's/.*transport \(.*\)/\1/p' "$1" | tr ' ' '\n' | awk -F= '
		$1 ~ /^rx_/ && $1 !~ /^rx_(ok|udp_csum_partial|foreign|truncated)$/ { s += $2 }
		END { print s + 0 }'
}
# "refused-for-checksum:accepted-as-partial" in FILE.
csums() { echo "$(counter "$1" rx_udp_csum):$(counter "$1" rx_udp_csum_partial)"; }
# The three checks of one run against SERVER on PATH (fast: no partial
# checksum; slow: each accepted reply had one).
check() {	# FILE SERVER PATH
	diag "$2, $3: $(tail -1 "$1.err")"
	if [ "$3" = fast ]; then
		want=0:0 what="complete"
	else
		want=0:$(counter "$1.err" rx_ok) what="partial, and accepted"
	fi
	is "$(csums "$1.err")" "$want" "$2, $3 path: every reply's UDP checksum $what"
	is "$(refused "$1.err")" 0 "$2, $3 path: no reply refused at all"
	is "$(count_status "$1" ok)" "$n" "$2, $3 path: every exchange ok"
}

# ntpreflect over kernel UDP, on every address of the reference.
spawn kr ip netns exec "$NTPX_NS_REF" ntpreflect udp://0.0.0.0:123 2>"$TMP/kr.err"
wait_until 5 udp_listening_in "$NTPX_NS_REF" 123
probe "$TMP/kf" "$NTPX_REF_FAST" "$NTPX_DEV_FAST"
probe "$TMP/ks" "$NTPX_REF_SLOW" "$NTPX_DEV_SLOW"
kill -TERM "$kr"
wait "$kr"
is "$?" 0 "ntpreflect exits 0"
answered=$(sed -n 's/^ntpreflect: answered \([0-9]*\).*/\1/p' "$TMP/kr.err")
check "$TMP/kf" ntpreflect fast
check "$TMP/ks" ntpreflect slow
# Every reply the kernel sent reached the probes and was accepted.
is "$(($(counter "$TMP/kf.err" rx_ok) + $(counter "$TMP/ks.err" rx_ok)))" "$answered" \
	"every reply ntpreflect sent ($answered) was accepted by uudp"

# chronyd as a server (-x: the clock is never touched), its own files.
mkdir "$TMP/chrony"
cat >"$TMP/chrony/chrony.conf" <<CONF
port 123
local stratum 1
allow 10.77.0.0/16
cmdport 0
bindcmdaddress /
pidfile $TMP/chrony/chronyd.pid
driftfile $TMP/chrony/drift
dumpdir $TMP/chrony
CONF
spawn cr ip netns exec "$NTPX_NS_REF" chronyd -x -d -f "$TMP/chrony/chrony.conf" -u root -L 0 \
	2>"$TMP/chrony/log"
wait_until 10 udp_listening_in "$NTPX_NS_REF" 123
probe "$TMP/cf" "$NTPX_REF_FAST" "$NTPX_DEV_FAST"
probe "$TMP/cs" "$NTPX_REF_SLOW" "$NTPX_DEV_SLOW"
ok "chronyd still runs" kill -0 "$cr"
kill -TERM "$cr"
wait "$cr"
check "$TMP/cf" chronyd fast
check "$TMP/cs" chronyd slow

# A kernel client against a uudp server, on slow (partial checksums).
spawn ur ip netns exec "$NTPX_NS_REF" ntpreflect "uudp://*:123?dev=$NTPX_DEV_SLOW" 2>"$TMP/ur.err"
wait_until 5 udp_listening_in "$NTPX_NS_REF" 123
ip netns exec "$NTPX_NS_CLIENT" ntpprobe -i 50ms -w 5s -c "$n" "udp://$NTPX_REF_SLOW:123" \
	>"$TMP/us" 2>/dev/null
kill -TERM "$ur"
wait "$ur"
diag "uudp server: $(tail -1 "$TMP/ur.err")"
is "$(count_status "$TMP/us" ok)" "$n" "kernel client, uudp server, slow path: every exchange ok"
is "$(csums "$TMP/ur.err"):$(refused "$TMP/ur.err")" "0:$(counter "$TMP/ur.err" rx_ok):0" \
	"the uudp server accepted every request with its partial checksum, refused none"
done_testing
