# SPDX-License-Identifier: ISC
# tests/rdma.sh - what RDMA hardware this host has, for tests/cli/ib-*.t and
# tests/hw/*.t.  Source it after tests/lib.sh (it sources tests/hw.sh:
# hw_skip_all).
#
#   rdma_devices            prints the RDMA device names, one a line (what
#                           ibv_get_device_list() would return: it reads
#                           the same sysfs class)
#   rdma_need_device [DEV]  hw_skip_all with the reason unless an RDMA device
#                           (DEV, when named) exists with an ACTIVE port;
#                           NTPX_REQUIRE_HW=1 makes that a failure instead,
#                           for a machine that should have one.  In a
#                           (setup) test: a diag line and status 1
#   rdma_active_ports DEV   prints the ACTIVE port numbers of DEV
#   rdma_first_active_device
#                           prints the first device with an ACTIVE port
#   rdma_device_addr DEV    prints the first IPv4 address of a netdev of
#                           DEV (ib0, ens1f0...)
#   rdma_ib_find            the device and address ib:// runs on: IB_DEV
#                           (NTPX_IB_DEV, else the first with an ACTIVE
#                           port) and IB_ADDR (NTPX_IB_ADDR, else the
#                           device's); status 1 and the reason in RDMA_WHY
#                           when there is none
#   rdma_netdev             prints the first network interface with an
#                           RDMA device behind it (uudp via=verbs)
#   rdma_behind NETDEV      NETDEV has an RDMA device behind it
#   rdma_uudp_find          the interface and peer uudp via=verbs runs
#                           with: UUDP_DEV (NTPX_UUDP_DEV, else
#                           rdma_netdev) with an RDMA device behind it, and
#                           NTPX_UUDP_PEER set; status 1 and the reason in
#                           RDMA_WHY when not

. "$NTPX_TOP/tests/hw.sh"

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

rdma_need_device() {
	_devs=$(rdma_devices | tr '\n' ' ')
	[ -n "$_devs" ] ||
		{ hw_skip_all "no RDMA device (/sys/class/infiniband is empty or absent)"; return 1; }
	if [ -n "${1:-}" ]; then
		case " $_devs" in
		*" $1 "*) ;;
		*) hw_skip_all "no RDMA device $1 (found: $_devs)"; return 1 ;;
		esac
		[ -n "$(rdma_active_ports "$1")" ] ||
			{ hw_skip_all "RDMA device $1 has no ACTIVE port"; return 1; }
	fi
}

rdma_first_active_device() {
	for _d in $(rdma_devices); do
		[ -n "$(rdma_active_ports "$_d")" ] && { echo "$_d"; return; }
	done
}

rdma_device_addr() {
	for _n in /sys/class/infiniband/"$1"/device/net/*; do
		[ -e "$_n" ] || continue
		_a=$(ip -4 -o addr show dev "${_n##*/}" 2>/dev/null | awk '{ print $4 }' |
			cut -d/ -f1 | head -1)
		[ -n "$_a" ] && { echo "$_a"; return; }
	done
}

rdma_ib_find() {
	IB_DEV=${NTPX_IB_DEV:-$(rdma_first_active_device)}
	if [ -z "$IB_DEV" ]; then
		RDMA_WHY="no RDMA device with an ACTIVE port"
		return 1
	fi
	IB_ADDR=${NTPX_IB_ADDR:-$(rdma_device_addr "$IB_DEV")}
	if [ -z "$IB_ADDR" ]; then
		RDMA_WHY="RDMA device $IB_DEV has no IPv4 address on its netdev (set NTPX_IB_ADDR)"
		return 1
	fi
}

rdma_netdev() {
	for _d in /sys/class/net/*/device/infiniband; do
		[ -d "$_d" ] || continue
		basename "$(dirname "$(dirname "$_d")")"
		return
	done
}

rdma_behind() { [ -d "/sys/class/net/$1/device/infiniband" ]; }

rdma_uudp_find() {
	UUDP_DEV=${NTPX_UUDP_DEV:-$(rdma_netdev)}
	if [ -z "$UUDP_DEV" ]; then
		RDMA_WHY="no RDMA device behind any network interface"
		return 1
	fi
	if ! rdma_behind "$UUDP_DEV"; then
		RDMA_WHY="$UUDP_DEV has no RDMA device behind it"
		return 1
	fi
	if [ -z "${NTPX_UUDP_PEER:-}" ]; then
		RDMA_WHY="NTPX_UUDP_PEER (a host running ntpreflect) is not set"
		return 1
	fi
}
