# SPDX-License-Identifier: ISC
# tests/twohost.sh - two hosts on one machine, reached over ssh, for the
# tests of anything that runs on more than one host.  Source it after
# tests/lib.sh, then:
#
#   twohost_up PREFIX    makes them; skip_all when it cannot
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

twohost_up() {
	need_root
	[ -x /usr/sbin/sshd ] || skip_all "no sshd (openssh-server; make deps)"
	need ssh ssh-keygen unshare
	lab_up "$1"
	unset NTPX_REF_EXEC NTPX_CLIENT_EXEC
	_th=$TMP/twohost
	mkdir -p "$_th" && chmod 700 "$_th" || skip_all "cannot make $_th"
	# sshd's privilege separation directory, as its package makes it.
	[ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 755 /run/sshd; } ||
		skip_all "cannot make /run/sshd"
	ssh-keygen -q -t ed25519 -N '' -C twohost -f "$_th/id" || skip_all "ssh-keygen failed"
	cp "$_th/id.pub" "$_th/authorized_keys"
	# A /24 of 10.78.0.0/16 that nothing here has a route into.
	_k=$(($$ % 250 + 1))
	_n=0
	while ip -4 route show to match "10.78.$_k.1" | grep -v "^default" | grep -q .; do
		_k=$((_k % 250 + 1))
		_n=$((_n + 1))
		[ $_n -lt 250 ] || skip_all "no free 10.78.K.0/24 for the management links"
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
		cleanup ip link del "$_if"
		ip link add "$_if" type veth peer name mgmt netns "$_ns" &&
		ip addr add "10.78.$_k.$_a/30" dev "$_if" &&
		ip link set dev "$_if" up &&
		ip -n "$_ns" addr add "10.78.$_k.$_b/30" dev mgmt &&
		ip -n "$_ns" link set dev mgmt up ||
			skip_all "cannot make the management link to $_side"
		ssh-keygen -q -t ed25519 -N '' -C "$_side" -f "$_th/$_side.key" ||
			skip_all "ssh-keygen failed"
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
			skip_all "sshd on $_side does not listen: $(tail -n 1 "$_th/$_side.sshd.log")"
	done
	# Host blocks before Host *, whose settings are the defaults.
	cat "$_th/config.hosts" "$_th/config" > "$_th/config.all" && mv "$_th/config.all" "$_th/config"
	TWOHOST_SSH="ssh -F $_th/config"
	for _side in ref client; do
		_got=$($TWOHOST_SSH "$_side" uname -n 2>"$_th/ssh.err") ||
			skip_all "ssh to $_side fails: $(tail -n 1 "$_th/ssh.err")"
		[ "$_got" = "$_side-$LAB" ] || skip_all "ssh to $_side reaches '$_got'"
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
