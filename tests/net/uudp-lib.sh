# SPDX-License-Identifier: ISC
# tests/net/uudp-lib.sh - the uudp suites' view of a lab (bin/ntpx-lab)
# of their own, on its fast path (sourced after tests/lib.sh).
#
#   uudp_lab            brings up a lab with a unique name, removed at exit
#                       (in a setup test; it fails when no lab can be made);
#                       $UA is the client namespace, $UB the reference's,
#                       joined by the fast path: $IFA/$IPA/$MACA on the
#                       client side, $IFB/$IPB/$MACB on the reference's.
#                       Its veths have $UUDP_QUEUES queues each way
#                       (NTPX_UUDP_QUEUES, default 4), as a NIC has several:
#                       a kernel peer's flow lands on any of them
#   ina CMD... / inb CMD...     run CMD in $UA / $UB (a shell function: to
#                       spawn, write "ip netns exec $UB CMD" so that the PID
#                       is the command's)
#   xdp_prog NS IF      prints the name of the XDP program on IF ("" if none)
#   udp_listening_in NS PORT    a socket listens on PORT inside NS
#                       (tests/lib.sh's udp_listening PORT NS)
#   udp_drops NS / link_drops NS IF    what the kernel counted as dropped
#
# The lab is used as ntpx-lab makes it, nothing added: that it carries
# complete UDP checksums from kernel sockets (doc/uudp.md, "veth and UDP
# checksums") is part of what these suites test.

UUDP_QUEUES=${NTPX_UUDP_QUEUES:-4}

uudp_lab() {
	# In a (setup) test a lab that cannot be made fails the test; before
	# the first test the suite is skipped (as lab_up does).
	if ! command -v ip >/dev/null 2>&1 || ! test_have_prereq ROOT; then
		if [ -z "$_in_test" ]; then need_prereq ROOT; need ip; fi
		diag "no lab: missing ip or not root"
		return 1
	fi
	lab_up u --queues "$UUDP_QUEUES" || return 1
	UA=$NTPX_NS_CLIENT
	UB=$NTPX_NS_REF
	IFA=$NTPX_DEV_FAST
	IFB=$NTPX_DEV_FAST
	IPA=$NTPX_CLIENT_FAST
	IPB=$NTPX_REF_FAST
	MACA=$(cat_mac "$UA" "$IFA")
	MACB=$(cat_mac "$UB" "$IFB")
	[ -n "$MACA" ] && [ -n "$MACB" ] && return 0
	diag "no lab: no MAC address on $IFA in $UA or $IFB in $UB"
	return 1
}

cat_mac() { ip -n "$1" -br link show dev "$2" | awk '{ print $3 }'; }

ina() { ip netns exec "$UA" "$@"; }
inb() { ip netns exec "$UB" "$@"; }

# xdp_prog NS DEV: the name of DEV's XDP program, nothing when it has
# none; "no device DEV" (never nothing) when ip cannot show it.
xdp_prog() {
	_xp=$(ip -n "$1" -d link show dev "$2") || { echo "no device $2"; return 1; }
	printf '%s\n' "$_xp" | sed -n 's/.*prog\/xdp id [0-9]* name \([^ ]*\).*/\1/p'
}

udp_listening_in() { udp_listening "$2" "$1"; }

# Datagrams the kernel of namespace NS counted as not delivered: UDP
# InErrors (a full receive buffer, a bad checksum) and NoPorts (no socket,
# as for a reply that comes after its client has gone).
udp_drops() {
	ip netns exec "$1" awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $3 + $4 }' /proc/net/snmp
}

# Packets device IF in namespace NS dropped, receiving or sending.
link_drops() {
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_dropped" \
		"/sys/class/net/$2/statistics/tx_dropped" | awk '{ s += $1 } END { print s + 0 }'
}

# The value of counter NAME in a tool's "transport ..." summary line.
counter() {
	sed -n "s/.*transport .*[ ]$2=\([0-9]*\).*/\1/p" "$1" | head -1
}

# Median of off2/2 over ok records of FILE, in us (the columns found by
# name: a record may carry more columns after status).
median_offset_us() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { print field("off2") / 2000 }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
