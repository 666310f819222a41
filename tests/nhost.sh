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
# its address (tests/twohost.sh does the same for two hosts of a lab).
# The sshds end with the test (spawn), the namespaces are removed
# whatever happens (test_atexit).
#
# After it:
#   NHOST_SSH            "ssh -F CONFIG": with "hK" after it, a prefix
#                        that reaches host K as root
#   NHOST_NS_K, NHOST_ADDR_K, NHOST_NAME_K, NHOST_SSHD_K
#
# nhost_left K prints the PIDs in host K other than its sshd (nothing
# when nothing of a run is left there).

_nhost_no() {
	[ -n "$_in_test" ] || skip_all "$1"
	diag "no hosts: $1"
}

nhost_up() {
	test_have_prereq ROOT || { _nhost_no "not root"; return 1; }
	[ -x /usr/sbin/sshd ] || { _nhost_no "no sshd (openssh-server; make deps)"; return 1; }
	for _c in ssh ssh-keygen unshare ip; do
		command -v "$_c" >/dev/null 2>&1 || { _nhost_no "missing $_c"; return 1; }
	done
	_run=$(uniq_name "$1")
	_nh=$TMP/nhost
	mkdir -p "$_nh" && chmod 700 "$_nh" || { _nhost_no "cannot make $_nh"; return 1; }
	[ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 755 /run/sshd; } ||
		{ _nhost_no "cannot make /run/sshd"; return 1; }
	ssh-keygen -q -t ed25519 -N '' -C nhost -f "$_nh/id" || { _nhost_no "ssh-keygen failed"; return 1; }
	cp "$_nh/id.pub" "$_nh/authorized_keys" || { _nhost_no "cannot copy the key"; return 1; }
	# A /24 of 10.76.0.0/16 that nothing here has a route into.
	_l=$(($$ % 250 + 1))
	_i=0
	while ip -4 route show to match "10.76.$_l.1" | grep -v "^default" | grep -q .; do
		_l=$((_l % 250 + 1))
		_i=$((_i + 1))
		[ $_i -lt 250 ] || { _nhost_no "no free 10.76.L.0/24"; return 1; }
	done
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
	ip link set dev "$_up" up || { _nhost_no "cannot make the LAN"; return 1; }
	: > "$_nh/known_hosts" && : > "$_nh/config.hosts" || return 1
	_k=1
	while [ "$_k" -le "$2" ]; do
		_ns=${_run}h$_k
		ip netns add "$_ns" && test_atexit ip netns del "$_ns" &&
		ip link add lan netns "$_ns" type veth peer name "h$_k" netns "$_sw" &&
		ip -n "$_sw" link set dev "h$_k" master lan &&
		ip -n "$_sw" link set dev "h$_k" up &&
		ip -n "$_ns" addr add "10.76.$_l.$_k/24" dev lan &&
		ip -n "$_ns" link set dev lan up &&
		ip -n "$_ns" link set dev lo up || { _nhost_no "cannot make host $_k"; return 1; }
		ssh-keygen -q -t ed25519 -N '' -C "h$_k" -f "$_nh/h$_k.key" ||
			{ _nhost_no "ssh-keygen failed"; return 1; }
		echo "10.76.$_l.$_k $(cat "$_nh/h$_k.key.pub")" >> "$_nh/known_hosts"
		cat > "$_nh/h$_k.sshd_config" <<EOF
ListenAddress 10.76.$_l.$_k:22
HostKey $_nh/h$_k.key
PidFile none
AuthorizedKeysFile $_nh/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel ERROR
MaxStartups 100
MaxSessions 100
EOF
		printf 'Host h%s\n\tHostName 10.76.%s.%s\n' "$_k" "$_l" "$_k" >> "$_nh/config.hosts"
		spawn _pid ip netns exec "$_ns" unshare --uts sh -c \
			'hostname "$1" && exec /usr/sbin/sshd -D -e -f "$2"' sh \
			"h$_k-$_run" "$_nh/h$_k.sshd_config" 2>> "$_nh/h$_k.sshd.log"
		eval "NHOST_SSHD_$_k=\$_pid NHOST_NS_$_k=\$_ns NHOST_ADDR_$_k=10.76.\$_l.\$_k NHOST_NAME_$_k=h\$_k-\$_run"
		wait_until 10 ip netns exec "$_ns" sh -c "ss -Htln 'sport = :22' | grep -q ." ||
			{ _nhost_no "sshd on host $_k does not listen: $(tail -n 1 "$_nh/h$_k.sshd.log")"; return 1; }
		_k=$((_k + 1))
	done
	cat > "$_nh/config" <<EOF
Host *
	User root
	IdentityFile $_nh/id
	IdentitiesOnly yes
	UserKnownHostsFile $_nh/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	LogLevel ERROR
	ConnectTimeout 10
EOF
	# Host blocks before Host *, whose settings are the defaults.
	cat "$_nh/config.hosts" "$_nh/config" > "$_nh/config.all" && mv "$_nh/config.all" "$_nh/config" ||
		return 1
	NHOST_SSH="ssh -F $_nh/config"
	_k=1
	while [ "$_k" -le "$2" ]; do
		_got=$($NHOST_SSH "h$_k" uname -n 2>"$_nh/ssh.err") ||
			{ _nhost_no "ssh to host $_k fails: $(tail -n 1 "$_nh/ssh.err")"; return 1; }
		[ "$_got" = "h$_k-$_run" ] || { _nhost_no "ssh to host $_k reaches '$_got'"; return 1; }
		_k=$((_k + 1))
	done
	export NHOST_SSH
}

nhost_left() {
	eval "ip netns pids \"\$NHOST_NS_$1\" | grep -vx \"\$NHOST_SSHD_$1\""
	return 0
}
