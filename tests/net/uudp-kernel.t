#!/bin/sh
# A uudp client (via=xdp) against kernel UDP servers, in a lab made by
# ntpx-lab and nothing else: ntpreflect over udp:// and chronyd -x (it
# never touches the clock) in the reference namespace, on both paths.
# Kernel sockets leave the UDP checksum to the device; on veth nobody
# completes it unless the lab turns the offload off (doc/uudp.md, "veth
# and UDP checksums").  Here every reply must be accepted, each with a
# complete checksum: none refused (rx_udp_csum), none taken as partial
# (rx_udp_csum_partial).  Then, off the lab's defaults, one veth end with
# the offload on again, as on a veth ntpx-lab did not make: uudp accepts
# the partial checksums on its own and counts them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need ntpprobe ntpreflect chronyd ethtool
lab_up k
plan 19

n=40
# The probe: N requests at 50 ms from the client namespace to ADDR on
# DEV, records in FILE, its summary in FILE.err.
probe() {	# FILE ADDR DEV
	ip netns exec "$NTPX_NS_CLIENT" ntpprobe -i 50ms -w 1s -c "$n" \
		"uudp://$2:123?dev=$3&via=xdp" >"$1" 2>"$1.err"
}
# Sum of the refusal counters in FILE: rx_* but rx_ok and those that
# count accepted frames.
refused() {
	sed -n 's/.*transport \(.*\)/\1/p' "$1" | tr ' ' '\n' | awk -F= '
		$1 ~ /^rx_/ && $1 !~ /^rx_(ok|udp_csum_partial|foreign|truncated)$/ { s += $2 }
		END { print s + 0 }'
}
# "rx_udp_csum:rx_udp_csum_partial" of FILE.
csums() { echo "$(counter "$1" rx_udp_csum):$(counter "$1" rx_udp_csum_partial)"; }

# ntpreflect over kernel UDP, on every address of the reference.
spawn kr ip netns exec "$NTPX_NS_REF" ntpreflect udp://0.0.0.0:123 2>"$TMP/kr.err"
wait_until 5 udp_listening_in "$NTPX_NS_REF" 123
probe "$TMP/kf" "$NTPX_REF_FAST" "$NTPX_DEV_FAST"
probe "$TMP/ks" "$NTPX_REF_SLOW" "$NTPX_DEV_SLOW"
kill -TERM "$kr"
wait "$kr"
is "$?" 0 "ntpreflect exits 0"
answered=$(sed -n 's/^ntpreflect: answered \([0-9]*\).*/\1/p' "$TMP/kr.err")
for p in kf:fast ks:slow; do
	f=$TMP/${p%%:*} path=${p#*:}
	diag "$path: $(tail -1 "$f.err")"
	is "$(csums "$f.err")" 0:0 "ntpreflect, $path path: every reply's UDP checksum complete"
	is "$(refused "$f.err")" 0 "ntpreflect, $path path: no reply refused at all"
	k=$(count_status "$f" ok)
	ok "ntpreflect, $path path: nearly all exchanges ok ($k of $n)" test "$k" -ge $((n - 2))
done
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
for p in cf:fast cs:slow; do
	f=$TMP/${p%%:*} path=${p#*:}
	diag "$path: $(tail -1 "$f.err")"
	is "$(csums "$f.err")" 0:0 "chronyd, $path path: every reply's UDP checksum complete"
	is "$(refused "$f.err")" 0 "chronyd, $path path: no reply refused at all"
	k=$(count_status "$f" ok)
	ok "chronyd, $path path: nearly all exchanges ok ($k of $n)" test "$k" -ge $((n - 2))
done

# Off the lab's defaults: the reference's end of the fast path leaves the
# checksums to the device again.  On veth uudp accepts them as the
# receiving kernel would, and says how many it took so.
ip netns exec "$NTPX_NS_REF" ethtool -K "$NTPX_DEV_FAST" tx on >/dev/null
ok "ntpx-lab status sees the offload on again" \
	sh -c "ntpx-lab -n $LAB status | grep -q '^  checksums  left partial .*ref/fast'"
spawn kr ip netns exec "$NTPX_NS_REF" ntpreflect udp://0.0.0.0:123 2>"$TMP/kr2.err"
wait_until 5 udp_listening_in "$NTPX_NS_REF" 123
probe "$TMP/pf" "$NTPX_REF_FAST" "$NTPX_DEV_FAST"
kill -TERM "$kr"
wait "$kr"
diag "partial: $(tail -1 "$TMP/pf.err")"
k=$(count_status "$TMP/pf" ok)
ok "offload on: nearly all exchanges still ok ($k of $n)" test "$k" -ge $((n - 2))
is "$(counter "$TMP/pf.err" rx_udp_csum)" 0 "offload on: no reply refused for its UDP checksum"
is "$(counter "$TMP/pf.err" rx_udp_csum_partial)" "$(counter "$TMP/pf.err" rx_ok)" \
	"offload on: every reply accepted was counted as partial"
done_testing
