#!/bin/sh
# SPDX-License-Identifier: ISC
# On the wire uudp is ordinary NTP over UDP: tshark, capturing on the
# veth, dissects the frames uudp builds at both ends as NTP with good IP
# and UDP checksums and nothing malformed; chronyd -Q (it measures and
# prints, never sets the clock) gets a sane offset from a uudp ntpreflect.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
need_prereq LAB
need ntpprobe ntpreflect tshark chronyd

port=123	# the NTP port: tshark dissects it as NTP without being told
# ip.flags.df, ip.ttl, ip.hdr_len of a frame with DF, TTL 64, no options.
df_ttl_ihl='1	64	20 '

# Frames an AF_XDP socket sends or receives bypass the packet taps of its
# own interface (like any kernel bypass), so each capture runs on the far
# side, where a kernel socket is the peer and the taps see the wire.
ntp_frames() { tshark -r "$1" -Y ntp 2>/dev/null | wc -l; }
frames_at_least() { test "$(ntp_frames "$1")" -ge "$2"; }
capture() {	# NS IF FILE CMD...: CMD in the client namespace, while capturing
	_ns=$1 _if=$2 _f=$3
	shift 3
	spawn _cap ip netns exec "$_ns" tshark -q -i "$_if" -w "$_f" -f "udp port $port" 2>/dev/null
	wait_until 10 test -s "$_f" &&
	ina "$@" >"$_f.rec" 2>/dev/null &&
	wait_until 5 frames_at_least "$_f" 20
	_rc=$?
	kill -INT "$_cap"
	wait "$_cap"
	return $_rc
}

tsk() { tshark -r "$1" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -Y "$2" \
	${3:+-T fields} $3 2>/dev/null; }
# What uudp built: the requests in c1, the replies in c2.
built() { { tsk "$TMP/c1.pcap" 'ntp.flags.mode == 3' "$1"; tsk "$TMP/c2.pcap" 'ntp.flags.mode == 4' "$1"; }; }
# Malformed packets and expert warnings in both captures.
warnings() { for f in c1 c2; do tsk "$TMP/$f.pcap" '_ws.malformed || _ws.expert.severity >= 6291456'; done; }

write_chrony_conf() {
	cat >"$TMP/chrony.conf" <<CONF
server $IPB port $port iburst minpoll -4 maxpoll -4
pidfile $TMP/chronyd.pid
logdir $TMP
log measurements
cmdport 0
bindcmdaddress /
CONF
}

test_expect_success 'setup: a lab of our own, its fast path between two namespaces' '
	uudp_lab
'

test_expect_success 'setup: a uudp client against a kernel ntpreflect, captured at the server' '
	spawn kr ip netns exec "$UB" ntpreflect --stratum 1 "udp://$IPB:$port" 2>/dev/null &&
	test_when_finished stop_pid "$kr" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	capture "$UB" "$IFB" "$TMP/c1.pcap" ntpprobe -i 50ms -c 10 "uudp://$IPB:$port?dev=$IFA"
'

test_expect_success 'setup: a kernel client against a uudp ntpreflect, captured at the client' '
	spawn ur ip netns exec "$UB" ntpreflect --stratum 1 "uudp://*:$port?dev=$IFB" 2>"$TMP/ur.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	capture "$UA" "$IFA" "$TMP/c2.pcap" ntpprobe -i 50ms -c 10 "udp://$IPB:$port"
'

test_expect_success 'both runs: 10 ok records each' '
	test_is "$(($(count_status "$TMP/c1.pcap.rec" ok) + $(count_status "$TMP/c2.pcap.rec" ok)))" 20
'

test_expect_success 'tshark dissects the 20 frames uudp built as NTP (10 requests, 10 replies)' '
	test_is "$(built | wc -l)" 20
'

test_expect_success 'their IPv4 header checksums are good' '
	test_is "$(built "-e ip.checksum.status" | sort -u | tr "\n" " ")" "1 "
'

test_expect_success 'their UDP checksums are good' '
	test_is "$(built "-e udp.checksum.status" | sort -u | tr "\n" " ")" "1 "
'

test_expect_success 'no malformed packet, no expert warning in either capture' '
	test_is "$(warnings | wc -l)" 0
'

test_expect_success 'DF set, TTL 64, no IP options' '
	test_is "$(built "-e ip.flags.df -e ip.ttl -e ip.hdr_len" | sort -u | tr "\n" " ")" "$df_ttl_ihl"
'

# chronyd -Q in the client namespace against the uudp server.
test_expect_success "chronyd -Q accepted the uudp server's replies" '
	write_chrony_conf &&
	{ timeout 30 ip netns exec "$UA" chronyd -Q -f "$TMP/chrony.conf" -u root -L 0 >"$TMP/q.out" 2>&1 || :; } &&
	diag "$(tail -1 "$TMP/q.out")" &&
	wrong=$(sed -n "s/.*System clock wrong by \([-0-9.]*\) seconds.*/\1/p" "$TMP/q.out") &&
	diag "wrong by $wrong s" &&
	test -n "$wrong"
'

test_expect_success 'every measurement chronyd made is on one clock: |offset| <= delay/2 + dispersion' '
	diag "$(chrony_one_clock -v "$TMP/measurements.log" 2>&1)" &&
	chrony_one_clock "$TMP/measurements.log"
'
done_testing
