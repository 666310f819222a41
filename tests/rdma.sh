# SPDX-License-Identifier: ISC
# tests/rdma.sh - what RDMA hardware this host has, for tests/cli/ib-*.t and
# tests/hw/*.t.  Source it after tests/lib.sh (it sources tests/hw.sh:
# hw_skip_all).
#
#   rdma_devices            prints the RDMA device names, one a line (what
#                           ibv_get_device_list() would return: it reads
#                           the same sysfs class; $NTPX_SYSFS, default /sys)
#   rdma_iwarp DEV          DEV is iWARP (node type RNIC: irdma, siw,
#                           cxgb4), with no UD or raw-packet QPs
#   rdma_raw DEV            DEV has raw-packet QPs and flow steering, as
#                           uudp via=verbs needs (mlx5, mlx4: by driver)
#   rdma_need_device [DEV]  hw_skip_all with the reason unless an RDMA device
#                           is there, this build has the verbs path
#                           (hw_built), and a device
#                           (DEV, when named) exists with an ACTIVE port;
#                           NTPX_REQUIRE_HW=1 makes that a failure instead,
#                           for a machine that should have one.  In a
#                           (setup) test: a diag line and status 1
#   rdma_active_ports DEV   prints the ACTIVE port numbers of DEV
#   rdma_first_active_device
#                           prints the first device with an ACTIVE port
#                           that is not iWARP (ib:// needs UD QPs)
#   rdma_device_addr DEV    prints the first IPv4 address of a netdev of
#                           DEV (ib0, ens1f0...)
#   rdma_ib_find            the device and address ib:// runs on: IB_DEV
#                           (NTPX_IB_DEV, else the first with an ACTIVE
#                           port) and IB_ADDR (NTPX_IB_ADDR, else the
#                           device's); status 1 and the reason in RDMA_WHY
#                           when there is none
#   rdma_behind NETDEV      prints the RDMA device behind NETDEV; status 1
#                           when there is none
#   rdma_uudp_find          the interface and peer uudp via=verbs runs
#                           with: NTPX_UUDP_PEER set, UUDP_DEV
#                           (NTPX_UUDP_DEV, else the interface the route
#                           to the peer leaves by, hw_route_dev) with an
#                           RDMA device behind it that rdma_raw says can;
#                           status 1 and the reason in RDMA_WHY when not

. "$NTPX_TOP/tests/hw.sh"

rdma_sys=${NTPX_SYSFS:-/sys}

rdma_devices() {
	[ -d "$rdma_sys/class/infiniband" ] || return 0
	for _d in "$rdma_sys"/class/infiniband/*; do
		[ -e "$_d" ] && echo "${_d##*/}"
	done
}

rdma_iwarp() {
	case $(cat "$rdma_sys/class/infiniband/$1/node_type" 2>/dev/null) in
	*RNIC*) return 0 ;;
	esac
	return 1
}

# The providers with raw-packet QPs and flow rules (lib/port_verbs.c asks
# the device itself; a shell can only tell them by their driver).
rdma_raw() {
	rdma_iwarp "$1" && return 1
	case $(basename "$(readlink -f "$rdma_sys/class/infiniband/$1/device/driver" 2>/dev/null)") in
	mlx5_core|mlx4_core) return 0 ;;
	esac
	return 1
}

rdma_active_ports() {
	for _p in "$rdma_sys"/class/infiniband/"$1"/ports/*; do
		[ -r "$_p/state" ] || continue
		case $(cat "$_p/state") in *ACTIVE*) echo "${_p##*/}" ;; esac
	done
}

rdma_need_device() {
	_devs=$(rdma_devices | tr '\n' ' ')
	[ -n "$_devs" ] ||
		{ hw_skip_all "no RDMA device (/sys/class/infiniband is empty or absent)"; return 1; }
	hw_built verbs || { hw_skip_all "$HW_WHY"; return 1; }
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
		rdma_iwarp "$_d" && continue
		[ -n "$(rdma_active_ports "$_d")" ] && { echo "$_d"; return; }
	done
}

rdma_device_addr() {
	for _n in "$rdma_sys"/class/infiniband/"$1"/device/net/*; do
		[ -e "$_n" ] || continue
		_a=$(ip -4 -o addr show dev "${_n##*/}" 2>/dev/null | awk '{ print $4 }' |
			cut -d/ -f1 | head -1)
		[ -n "$_a" ] && { echo "$_a"; return; }
	done
}

rdma_ib_find() {
	hw_built verbs || { RDMA_WHY=$HW_WHY; return 1; }
	IB_DEV=${NTPX_IB_DEV:-$(rdma_first_active_device)}
	if [ -z "$IB_DEV" ]; then
		RDMA_WHY="no RDMA device with an ACTIVE port, but for iWARP ones (no UD QPs)"
		return 1
	fi
	IB_ADDR=${NTPX_IB_ADDR:-$(rdma_device_addr "$IB_DEV")}
	if [ -z "$IB_ADDR" ]; then
		RDMA_WHY="RDMA device $IB_DEV has no IPv4 address on its netdev (set NTPX_IB_ADDR)"
		return 1
	fi
}

rdma_behind() {
	for _b in "$rdma_sys/class/net/$1/device/infiniband"/*; do
		[ -e "$_b" ] && { echo "${_b##*/}"; return 0; }
	done
	return 1
}

rdma_uudp_find() {
	hw_built verbs || { RDMA_WHY=$HW_WHY; return 1; }
	if [ -z "${NTPX_UUDP_PEER:-}" ]; then
		RDMA_WHY="NTPX_UUDP_PEER (a host running ntpreflect) is not set"
		return 1
	fi
	UUDP_DEV=${NTPX_UUDP_DEV:-$(hw_route_dev "$NTPX_UUDP_PEER")}
	if [ -z "$UUDP_DEV" ]; then
		RDMA_WHY="no route to $NTPX_UUDP_PEER (ip route get)"
		return 1
	fi
	if ! _ib=$(rdma_behind "$UUDP_DEV"); then
		RDMA_WHY="$UUDP_DEV (the route to $NTPX_UUDP_PEER) has no RDMA device behind it"
		return 1
	fi
	if ! rdma_raw "$_ib"; then
		RDMA_WHY="$UUDP_DEV's RDMA device $_ib has no raw-packet QPs (not mlx5 or mlx4)"
		return 1
	fi
}
