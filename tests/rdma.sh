# SPDX-License-Identifier: ISC
# tests/rdma.sh - what RDMA hardware this host has, for tests/cli/ib-*.t and
# tests/hw/*.t.  Source it after tests/lib.sh.
#
#   rdma_devices            prints the RDMA device names, one a line (what
#                           ibv_get_device_list() would return: it reads
#                           the same sysfs class)
#   rdma_need_device [DEV]  skip_all with the reason unless an RDMA device
#                           (DEV, when named) exists with an ACTIVE port;
#                           NTPX_REQUIRE_HW=1 makes that a failure instead,
#                           for a machine that should have one
#   rdma_active_ports DEV   prints the ACTIVE port numbers of DEV

rdma_devices() {
	[ -d /sys/class/infiniband ] || return 0
	for _d in /sys/class/infiniband/*; do
		[ -e "$_d" ] && echo "${_d##*/}"
	done
}

rdma_active_ports() {
	for _p in /sys/class/infiniband/"$1"/ports/*; do
		[ -r "$_p/state" ] || continue
		case $(cat "$_p/state") in *ACTIVE*) echo "${_p##*/}" ;; esac
	done
}

# Like skip_all, but a failure when the environment says hardware must be
# there (git's lib-httpd.sh does this with GIT_TEST_HTTPD).
hw_skip_all() {
	if [ "${NTPX_REQUIRE_HW:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - hardware required by NTPX_REQUIRE_HW=1: $*"
		exit 1
	fi
	skip_all "$*"
}

rdma_need_device() {
	_devs=$(rdma_devices | tr '\n' ' ')
	[ -n "$_devs" ] || hw_skip_all "no RDMA device (/sys/class/infiniband is empty or absent)"
	if [ -n "${1:-}" ]; then
		case " $_devs" in
		*" $1 "*) ;;
		*) hw_skip_all "no RDMA device $1 (found: $_devs)" ;;
		esac
		[ -n "$(rdma_active_ports "$1")" ] || hw_skip_all "RDMA device $1 has no ACTIVE port"
	fi
}
