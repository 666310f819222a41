# SPDX-License-Identifier: ISC
# tests/sshhost.sh - hosts in network namespaces, each with an sshd of
# Debian's openssh-server run by the test, and an ssh client that reaches
# them as root: the part tests/twohost.sh and tests/nhost.sh share.
# Sourced by them (after tests/lib.sh); they make the namespaces and
# links, this the keys, the configurations and the sshds.
#
# Each function returns 1 with the reason in $_sshhost_why when it cannot.
#
#   sshhost_need          root, sshd, ssh, ssh-keygen, unshare and ip are here
#   sshhost_init DIR      DIR (0700) with the client's key, its
#                         authorized_keys and an empty known_hosts
#   sshhost_net BASE      a /24 of BASE.0.0/16 that nothing here has a
#                         route into: BASE.$_sshhost_net.0/24
#   sshhost_add DIR ALIAS NS ADDR NAME
#                         host ALIAS: an sshd listening on ADDR:22 in
#                         network namespace NS, with a UTS namespace of
#                         its own named NAME, its key and Host block in
#                         DIR; its PID in $_sshhost_pid.  The sshd ends
#                         with the test (spawn)
#   sshhost_done DIR ALIAS=NAME...
#                         DIR/config written, and each ALIAS checked to
#                         be reached over ssh and to be named NAME;
#                         $_sshhost_ssh is "ssh -F DIR/config"
#   sshhost_no WHAT WHY   why there are no WHAT ("hosts", "two hosts"):
#                         before the first test the suite is skipped with
#                         WHY (nothing to fail yet); in a test, the diag
#                         line "no WHAT: WHY", and the caller returns 1

sshhost_no() {
	[ -n "$_in_test" ] || skip_all "$2"
	diag "no $1: $2"
}

sshhost_need() {
	test_have_prereq ROOT || { _sshhost_why="not root"; return 1; }
	[ -x /usr/sbin/sshd ] || { _sshhost_why="no sshd (openssh-server; make deps)"; return 1; }
	for _c in ssh ssh-keygen unshare ip; do
		command -v "$_c" >/dev/null 2>&1 || { _sshhost_why="missing $_c"; return 1; }
	done
}

sshhost_init() {
	mkdir -p "$1" && chmod 700 "$1" || { _sshhost_why="cannot make $1"; return 1; }
	# sshd's privilege separation directory, as its package makes it.
	[ -d /run/sshd ] || { mkdir -p /run/sshd && chmod 755 /run/sshd; } ||
		{ _sshhost_why="cannot make /run/sshd"; return 1; }
	ssh-keygen -q -t ed25519 -N '' -C "${1##*/}" -f "$1/id" ||
		{ _sshhost_why="ssh-keygen failed"; return 1; }
	cp "$1/id.pub" "$1/authorized_keys" || { _sshhost_why="cannot copy the key"; return 1; }
	: > "$1/known_hosts" && : > "$1/config.hosts" || { _sshhost_why="cannot write in $1"; return 1; }
}

sshhost_net() {
	_sshhost_net=$(($$ % 250 + 1))
	_i=0
	while ip -4 route show to match "$1.$_sshhost_net.1" | grep -v "^default" | grep -q .; do
		_sshhost_net=$((_sshhost_net % 250 + 1))
		_i=$((_i + 1))
		[ $_i -lt 250 ] || { _sshhost_why="no free $1.N.0/24"; return 1; }
	done
}

sshhost_add() {
	ssh-keygen -q -t ed25519 -N '' -C "$2" -f "$1/$2.key" ||
		{ _sshhost_why="ssh-keygen failed"; return 1; }
	echo "$4 $(cat "$1/$2.key.pub")" >> "$1/known_hosts" &&
	printf 'Host %s\n\tHostName %s\n' "$2" "$4" >> "$1/config.hosts" &&
	cat > "$1/$2.sshd_config" <<EOF || { _sshhost_why="cannot write in $1"; return 1; }
ListenAddress $4:22
HostKey $1/$2.key
PidFile none
AuthorizedKeysFile $1/authorized_keys
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
	# The exec chain leaves the PID spawn knows to sshd itself.
	spawn _sshhost_pid ip netns exec "$3" unshare --uts sh -c \
		'hostname "$1" && exec /usr/sbin/sshd -D -e -f "$2"' sh \
		"$5" "$1/$2.sshd_config" 2>> "$1/$2.sshd.log"
	wait_until 10 ip netns exec "$3" sh -c "ss -Htln 'sport = :22' | grep -q ." ||
		{ _sshhost_why="sshd on $2 does not listen: $(tail -n 1 "$1/$2.sshd.log")"; return 1; }
}

sshhost_done() {
	_d=$1
	shift
	# Host blocks before Host *, whose settings are the defaults.
	{ cat "$_d/config.hosts" && cat <<EOF; } > "$_d/config" || { _sshhost_why="cannot write $_d/config"; return 1; }
Host *
	User root
	IdentityFile $_d/id
	IdentitiesOnly yes
	UserKnownHostsFile $_d/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	LogLevel ERROR
	ConnectTimeout 10
EOF
	_sshhost_ssh="ssh -F $_d/config"
	for _h in "$@"; do
		_got=$($_sshhost_ssh "${_h%%=*}" uname -n 2>"$_d/ssh.err") ||
			{ _sshhost_why="ssh to ${_h%%=*} fails: $(tail -n 1 "$_d/ssh.err")"; return 1; }
		[ "$_got" = "${_h#*=}" ] || { _sshhost_why="ssh to ${_h%%=*} reaches '$_got'"; return 1; }
	done
}
