# SPDX-License-Identifier: ISC
# perfclass.awk: `perf script` of a CPU's profile with call chains ->
# the samples in each class, one "CLASS COUNT" a line and "total N"
# (tests/bench/reflect-uudp.sh).  -v srv=COMM names the server.
#
# A sample of another command is "others" (ksoftirqd: "ksoft", the idle
# task: "idle").  One of the server's: "user" when it was taken in user
# space; else by the first of these its call chain holds:
#   wake   waking a task (sock_def_readable, __wake_up_*, try_to_wake_up,
#          ep_poll_callback, pollwake): on veth, the client reading the
#          reply.  cpu-clock samples cannot land while interrupts are
#          off, so a wake-up's time shows at the unlock after it, still
#          under these.
#   sched  the server's own sleep and switch (__schedule, schedule)
#   sirq   the softirq its system call set off (handle_softirqs,
#          net_rx_action): on veth, the reply's delivery to the client
#   send   a send (sendto, sendmsg, sendmmsg: the kick of an AF_XDP
#          socket, which in copy mode makes the skb and transmits it)
#   recv   a receive (recvfrom, recvmsg, recvmmsg)
#   poll   poll, epoll_wait, select
#   sysc   any other system call, and the entry and exit of all
#   kern   anything else in the kernel (a fault, a tick)
function flush(   c) {
	if (comm == "")
		return
	if (comm ~ /^swapper/) c = "idle"
	else if (comm ~ /^ksoftirqd/) c = "ksoft"
	else if (comm != srv) c = "others"
	else if (!kleaf) c = "user"
	else if (chain ~ / (sock_def_readable|__wake_up[a-z_]*|try_to_wake_up|ttwu_[a-z_]*|ep_poll_callback|pollwake|wake_up_process) /) c = "wake"
	else if (chain ~ / (__schedule|schedule|schedule_hrtimeout_range[a-z_]*|finish_task_switch[a-z._0-9]*) /) c = "sched"
	else if (chain ~ / (handle_softirqs|__do_softirq|net_rx_action|do_softirq[a-z._0-9]*) /) c = "sirq"
	else if (chain ~ / (__sys_sendto|__sys_sendmsg|__sys_sendmmsg|xsk_sendmsg|udp_sendmsg) /) c = "send"
	else if (chain ~ / (__sys_recvfrom|__sys_recvmsg|__sys_recvmmsg|do_recvmmsg|sock_recvmsg) /) c = "recv"
	else if (chain ~ / (do_sys_poll|do_poll[a-z._0-9]*|ep_poll|do_epoll_wait|do_select|core_sys_select|xsk_poll) /) c = "poll"
	else if (chain ~ / (do_syscall_64|entry_SYSCALL_64[a-z_]*|syscall_exit_to_user_mode[a-z_]*) /) c = "sysc"
	else c = "kern"
	n[c]++
	total++
	comm = ""
}
# A sample's first line names its command; the frames follow, the leaf first.
/^[^ \t]/ { flush(); comm = $1; chain = " "; kleaf = -1; next }
/^[ \t]+[0-9a-f]+ / {
	if (kleaf < 0)
		kleaf = ($1 ~ /^ffffffff/)
	f = $2
	sub(/\+0x[0-9a-f]+$/, "", f)
	chain = chain f " "
	next
}
END {
	flush()
	for (c in n)
		print c, n[c]
	print "total", total + 0
}
