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
#     listening only on the management address.
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

# Why there are no two hosts: before the first test the suite is skipped
# (nothing to fail yet); in a test, a diag line, and twohost_up returns 1.
_twohost_no() {
	[ -n "$_in_test" ] || skip_all "$1"
	diag "no two hosts: $1"
}

twohost_up() {
	test_have_prereq ROOT || { _twohost_no "not root"; return 1; }
	[ -x /usr/sbin/sshd ] || { _twohost_no "no sshd (openssh-server; make deps)"; return 1; }
	for _c in ssh ssh-keygen unshare; do
		command -v "$_c" >/dev/null 2>&1 || { _twohost_no "missing $_c"; return 1; }
	done
	lab_up "$1" || return 1
	unset NTPX_REF_EXEC NTPX_CLIENT_EXEC
	_th=$TMP/twohost
	mkdir -p "$_th" && chmod 700 "$_th" || { _twohost_no "cannot make $_th"; return 1; }
	# sshd's privilege separation directory, as its package makes it.
	[ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 755 /run/sshd; } ||
		{ _twohost_no "cannot make /run/sshd"; return 1; }
	ssh-keygen -q -t ed25519 -N '' -C twohost -f "$_th/id" || { _twohost_no "ssh-keygen failed"; return 1; }
	cp "$_th/id.pub" "$_th/authorized_keys" || { _twohost_no "cannot copy the key"; return 1; }
	# A /24 of 10.78.0.0/16 that nothing here has a route into.
	_k=$(($$ % 250 + 1))
	_n=0
	while ip -4 route show to match "10.78.$_k.1" | grep -v "^default" | grep -q .; do
		_k=$((_k % 250 + 1))
		_n=$((_n + 1))
		[ $_n -lt 250 ] || { _twohost_no "no free 10.78.K.0/24 for the management links"; return 1; }
	done
	_id=$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')
	: > "$_th/known_hosts"
	cat > "$_th/config" <<EOF
Host *
	User root
	IdentityFile $_th/id
	IdentitiesOnly yes
	UserKnownHostsFile $_th/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	LogLevel ERROR
	ConnectTimeout 10
EOF
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
			{ _twohost_no "cannot make the management link to $_side"; return 1; }
		ssh-keygen -q -t ed25519 -N '' -C "$_side" -f "$_th/$_side.key" ||
			{ _twohost_no "ssh-keygen failed"; return 1; }
		echo "10.78.$_k.$_b $(cat "$_th/$_side.key.pub")" >> "$_th/known_hosts"
		cat > "$_th/$_side.sshd_config" <<EOF
ListenAddress 10.78.$_k.$_b:22
HostKey $_th/$_side.key
PidFile none
AuthorizedKeysFile $_th/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel ERROR
EOF
		printf 'Host %s\n\tHostName 10.78.%s.%s\n' "$_side" "$_k" "$_b" >> "$_th/config.hosts"
		# sshd in the host's network namespace and a UTS namespace of
		# its own, under the host's name; the exec chain leaves the PID
		# spawn knows to sshd itself.
		spawn _pid ip netns exec "$_ns" unshare --uts sh -c \
			'hostname "$1" && exec /usr/sbin/sshd -D -e -f "$2"' sh \
			"$_side-$LAB" "$_th/$_side.sshd_config" 2>> "$_th/$_side.sshd.log"
		eval "TWOHOST_SSHD_$(echo "$_side" | tr a-z A-Z)=\$_pid"
		eval "TWOHOST_NAME_$(echo "$_side" | tr a-z A-Z)=\$_side-\$LAB"
		wait_until 10 ip netns exec "$_ns" sh -c "ss -Htln 'sport = :22' | grep -q ." ||
			{ _twohost_no "sshd on $_side does not listen: $(tail -n 1 "$_th/$_side.sshd.log")"; return 1; }
	done
	# Host blocks before Host *, whose settings are the defaults.
	cat "$_th/config.hosts" "$_th/config" > "$_th/config.all" && mv "$_th/config.all" "$_th/config"
	TWOHOST_SSH="ssh -F $_th/config"
	for _side in ref client; do
		_got=$($TWOHOST_SSH "$_side" uname -n 2>"$_th/ssh.err") ||
			{ _twohost_no "ssh to $_side fails: $(tail -n 1 "$_th/ssh.err")"; return 1; }
		[ "$_got" = "$_side-$LAB" ] || { _twohost_no "ssh to $_side reaches '$_got'"; return 1; }
	done
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
