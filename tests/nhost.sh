# SPDX-License-Identifier: ISC
# tests/nhost.sh - N hosts on one machine, on one LAN, each reached over
# ssh, for the tests of what runs on many hosts at once (a mesh).  Source
# it after tests/lib.sh, then:
#
#   nhost_up PREFIX N    makes them (2 <= N <= 9).  In a test (a setup
#                        test) it returns 1 with a diag line saying why
#                        when it cannot; before the first test the suite
#                        is skipped with that reason instead
#
# Host K (1..N) is a network namespace of its own with one interface,
# lan, 10.76.L.K/24, its veth peer on a bridge in a switch namespace, and
# this (the root) namespace on the same bridge as 10.76.L.254, with L
# chosen so that nothing here routes it already: the hosts reach each
# other, and the test reaches them, as on one Ethernet.  Each host has a
# UTS namespace of its own with its name (NHOST_NAME_K, "hK-RUN") and an
# sshd of Debian's openssh-server, run by the test with a configuration,
# a host key and an authorized key of its own in $TMP, listening only on
# its address (tests/sshhost.sh, which this sources, as tests/twohost.sh
# does for two hosts of a lab).
# The sshds end with the test (spawn), the namespaces are removed
# whatever happens (test_atexit).
#
# After it:
#   NHOST_SSH            "ssh -F CONFIG": with "hK" after it, a prefix
#                        that reaches host K as root
#   NHOST_N              N
#   NHOST_NS_K, NHOST_ADDR_K, NHOST_NAME_K, NHOST_SSHD_K
#
# nhost_left K prints the PIDs in host K other than its sshd (nothing
# when nothing of a run is left there); nhost_nothing_left is true when
# no host has any.  nhost_hosts_file prints the hosts as ntpx-meshrun(1)
# and ntpx-study --hosts read them, "hK ADDRESS ssh -F CONFIG hK".
# meshrun_rows N HTML prints the rows of the Nth table of a report's
# section on real hosts, cells tab-separated; ntpmesh_loop_rows FILE,
# ntpmesh's loop lines as that section's first table shows them.

. "$NTPX_TOP/tests/sshhost.sh"

nhost_up() {
	sshhost_need || { sshhost_no hosts "$_sshhost_why"; return 1; }
	_run=$(uniq_name "$1")
	_nh=$TMP/nhost
	sshhost_init "$_nh" && sshhost_net 10.76 || { sshhost_no hosts "$_sshhost_why"; return 1; }
	_l=$_sshhost_net
	_sw=${_run}sw
	_up=nh${_run#"$1"}
	ip netns add "$_sw" && test_atexit ip netns del "$_sw" &&
	ip -n "$_sw" link add lan type bridge &&
	ip -n "$_sw" link set dev lan up &&
	ip link add "$_up" type veth peer name mgmt netns "$_sw" &&
	test_atexit ip link del "$_up" &&
	ip -n "$_sw" link set dev mgmt master lan &&
	ip -n "$_sw" link set dev mgmt up &&
	ip addr add "10.76.$_l.254/24" dev "$_up" &&
	ip link set dev "$_up" up || { sshhost_no hosts "cannot make the LAN"; return 1; }
	_hosts=
	_k=1
	while [ "$_k" -le "$2" ]; do
		_ns=${_run}h$_k
		ip netns add "$_ns" && test_atexit ip netns del "$_ns" &&
		ip link add lan netns "$_ns" type veth peer name "h$_k" netns "$_sw" &&
		ip -n "$_sw" link set dev "h$_k" master lan &&
		ip -n "$_sw" link set dev "h$_k" up &&
		ip -n "$_ns" addr add "10.76.$_l.$_k/24" dev lan &&
		ip -n "$_ns" link set dev lan up &&
		ip -n "$_ns" link set dev lo up || { sshhost_no hosts "cannot make host $_k"; return 1; }
		sshhost_add "$_nh" "h$_k" "$_ns" "10.76.$_l.$_k" "h$_k-$_run" ||
			{ sshhost_no hosts "$_sshhost_why"; return 1; }
		eval "NHOST_SSHD_$_k=\$_sshhost_pid NHOST_NS_$_k=\$_ns NHOST_ADDR_$_k=10.76.\$_l.\$_k NHOST_NAME_$_k=h\$_k-\$_run"
		_hosts="$_hosts h$_k=h$_k-$_run"
		_k=$((_k + 1))
	done
	sshhost_done "$_nh" $_hosts || { sshhost_no hosts "$_sshhost_why"; return 1; }
	NHOST_SSH=$_sshhost_ssh NHOST_N=$2
	export NHOST_SSH
}

nhost_left() {
	eval "ip netns pids \"\$NHOST_NS_$1\" | grep -vx \"\$NHOST_SSHD_$1\""
	return 0
}

nhost_nothing_left() {
	_k=1
	while [ "$_k" -le "$NHOST_N" ]; do
		[ -z "$(nhost_left "$_k")" ] || return 1
		_k=$((_k + 1))
	done
}

nhost_hosts_file() {
	_k=1
	while [ "$_k" -le "$NHOST_N" ]; do
		eval "echo \"h$_k \$NHOST_ADDR_$_k $NHOST_SSH h$_k\"" || return 1
		_k=$((_k + 1))
	done
}

meshrun_rows() {
	awk -v want="$1" '/<section id="meshrun">/ { in_s = 1 } in_s && /<\/section>/ { exit }
		in_s && /<table>/ { t++ }
		in_s && t == want && /<td/ { gsub(/<\/td><td[^>]*>/, "\t"); gsub(/<[^>]*>/, ""); print }' "$2"
}

ntpmesh_loop_rows() {
	awk '$1 == "loop" { v["closure_us"] = v["u95_us"] = v["nonzero"] = "-"
		for (i = 4; i < NF; i += 2) v[$i] = $(i + 1)
		printf "%s\t%s\t%s\t%s\t%s\n", $2, $3, v["closure_us"], v["u95_us"], v["nonzero"] }' "$1"
}
