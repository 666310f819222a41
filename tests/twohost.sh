# SPDX-License-Identifier: ISC
# tests/twohost.sh - two hosts on one machine, reached over ssh, for the
# tests of anything that runs on more than one host.  Source it after
# tests/lib.sh, then:
#
#   twohost_up PREFIX    makes them.  In a test (a setup test, as
#                        lab_up) it returns 1 with a diag line saying
#                        why when it cannot; before the first test the
#                        suite is skipped with that reason instead
#
# It is ntpx-lab's reference and client namespaces (lab_up: the slow and
# fast measurement paths between them, the slow one shaped) and, for each,
#   - a management link: a veth pair from this (the root) namespace,
#     10.78.K.1-2/30 to the reference and 10.78.K.5-6/30 to the client,
#     with K chosen so that nothing here routes it already;
#   - a UTS namespace of its own, so that the host has its own name
#     (TWOHOST_NAME_REF, TWOHOST_NAME_CLIENT: "ref-LAB", "client-LAB");
#   - an sshd of Debian's openssh-server, run by the test with a
#     configuration, a host key and an authorized key of its own in $TMP,
#     listening only on the management address (tests/sshhost.sh, which
#     this sources, as tests/nhost.sh does).
# The sshd ends with the test (spawn), and everything else goes with the
# namespaces (lab_up's cleanup), whatever happens.
#
# After it:
#   TWOHOST_SSH          "ssh -F CONFIG": with "ref" or "client" after it,
#                        a prefix that reaches that host as root
#   TWOHOST_SSHD_REF, TWOHOST_SSHD_CLIENT   the sshd PIDs
#   and lab_up's variables (NTPX_NS_REF, NTPX_REF_SLOW, ...); the prefixes
#   NTPX_REF_EXEC and NTPX_CLIENT_EXEC are unset, for the test to choose.
#
# twohost_left ref|client prints the PIDs in that host other than its
# sshd (nothing when nothing of a run is left there).

. "$NTPX_TOP/tests/sshhost.sh"

twohost_up() {
	sshhost_need || { sshhost_no "two hosts" "$_sshhost_why"; return 1; }
	lab_up "$1" || return 1
	unset NTPX_REF_EXEC NTPX_CLIENT_EXEC
	_th=$TMP/twohost
	sshhost_init "$_th" && sshhost_net 10.78 || { sshhost_no "two hosts" "$_sshhost_why"; return 1; }
	_k=$_sshhost_net
	_id=$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')
	for _h in ref:1:2:"$NTPX_NS_REF" client:5:6:"$NTPX_NS_CLIENT"; do
		_side=${_h%%:*} _r=${_h#*:}
		_a=${_r%%:*} _r=${_r#*:}
		_b=${_r%%:*} _ns=${_r#*:}
		_if=th${_side%"${_side#?}"}$_id
		ip link add "$_if" type veth peer name mgmt netns "$_ns" &&
		test_atexit ip link del "$_if" &&
		ip addr add "10.78.$_k.$_a/30" dev "$_if" &&
		ip link set dev "$_if" up &&
		ip -n "$_ns" addr add "10.78.$_k.$_b/30" dev mgmt &&
		ip -n "$_ns" link set dev mgmt up ||
			{ sshhost_no "two hosts" "cannot make the management link to $_side"; return 1; }
		sshhost_add "$_th" "$_side" "$_ns" "10.78.$_k.$_b" "$_side-$LAB" ||
			{ sshhost_no "two hosts" "$_sshhost_why"; return 1; }
		eval "TWOHOST_SSHD_$(echo "$_side" | tr a-z A-Z)=\$_sshhost_pid"
		eval "TWOHOST_NAME_$(echo "$_side" | tr a-z A-Z)=\$_side-\$LAB"
	done
	sshhost_done "$_th" ref="ref-$LAB" client="client-$LAB" || { sshhost_no "two hosts" "$_sshhost_why"; return 1; }
	TWOHOST_SSH=$_sshhost_ssh
	export TWOHOST_SSH TWOHOST_NAME_REF TWOHOST_NAME_CLIENT
}

twohost_left() {
	if [ "$1" = ref ]; then
		ip netns pids "$NTPX_NS_REF" | grep -vx "$TWOHOST_SSHD_REF"
	else
		ip netns pids "$NTPX_NS_CLIENT" | grep -vx "$TWOHOST_SSHD_CLIENT"
	fi
	return 0
}
