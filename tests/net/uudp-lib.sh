# tests/net/uudp-lib.sh - two namespaces joined by one veth pair, for the
# uudp suites (sourced after tests/lib.sh).  Until bin/ntpx-lab offers the
# same, each test makes its own, with unique names, removed at exit.
#
#   uudp_lab            makes $UA (10.$N.0.1 on $IFA) and $UB (10.$N.0.2 on
#                       $IFB), both up; sets IPA, IPB, MACA, MACB
#   ina CMD... / inb CMD...     run CMD in $UA / $UB (a shell function: to
#                       spawn, write "ip netns exec $UB CMD" so that the PID
#                       is the command's)
#   xdp_prog NS IF      prints the name of the XDP program on IF ("" if none)
#   udp_listening_in NS PORT    a socket listens on PORT inside NS
#
# veth never computes the UDP checksums that the kernel leaves to "the
# NIC" (CHECKSUM_PARTIAL): a frame a kernel socket sends over veth carries
# a partial checksum, which a generic-XDP receiver sees as it is and, like
# any checker of the wire format, refuses.  Real NICs fill it in; here the
# offload is turned off, so the kernel computes it in software.  See
# doc/uudp.md.

uudp_lab() {
	need_root
	need ip ethtool
	_n=$((($$ % 200) + 20))
	UA=$(uniq_name uua)
	UB=$(uniq_name uub)
	IFA=ua0
	IFB=ub0
	IPA=10.$_n.0.1
	IPB=10.$_n.0.2
	ip netns add "$UA" || skip_all "cannot create a network namespace"
	cleanup ip netns del "$UA"
	ip netns add "$UB" || skip_all "cannot create a network namespace"
	cleanup ip netns del "$UB"
	ip link add "$IFA" netns "$UA" type veth peer name "$IFB" netns "$UB" ||
		skip_all "cannot create a veth pair"
	ip -n "$UA" addr add "$IPA/24" dev "$IFA"
	ip -n "$UB" addr add "$IPB/24" dev "$IFB"
	ina ethtool -K "$IFA" tx off >/dev/null
	inb ethtool -K "$IFB" tx off >/dev/null
	for _ns in "$UA" "$UB"; do ip -n "$_ns" link set lo up; done
	ip -n "$UA" link set "$IFA" up
	ip -n "$UB" link set "$IFB" up
	MACA=$(cat_mac "$UA" "$IFA")
	MACB=$(cat_mac "$UB" "$IFB")
}

cat_mac() { ip -n "$1" -br link show dev "$2" | awk '{ print $3 }'; }

ina() { ip netns exec "$UA" "$@"; }
inb() { ip netns exec "$UB" "$@"; }

xdp_prog() {
	ip -n "$1" -d link show dev "$2" | sed -n 's/.*prog\/xdp id [0-9]* name \([^ ]*\).*/\1/p'
}

udp_listening_in() {
	ip netns exec "$1" ss -Hlun "sport = :$2" | grep -q .
}

# The value of counter NAME in a tool's "transport ..." summary line.
counter() {
	sed -n "s/.*transport .*[ ]$2=\([0-9]*\).*/\1/p" "$1" | head -1
}

# Median of off2/2 over ok records of FILE, in us.
median_offset_us() {
	data_lines "$1" | awk '$8 == "ok" { print $7 / 2000 }' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# |median offset| of FILE below LIMIT us.
offset_below() {
	_m=$(median_offset_us "$1")
	[ -n "$_m" ] && awk -v m="$_m" -v l="$2" 'BEGIN { exit !(m > -l && m < l) }'
}
