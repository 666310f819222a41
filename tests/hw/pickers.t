#!/bin/sh
# SPDX-License-Identifier: ISC
# How the hardware suites and make hwcheck find their devices
# (tests/rdma.sh, tests/hw.sh), on a sysfs tree of the test's own
# (NTPX_SYSFS) and real routes: an E810's irdma (iWARP, no UD or
# raw-packet QPs) is passed over for a ConnectX's mlx5, even listed
# first; and the interface a suite tests is the one the route to its
# peer leaves by, not the first that matches (an onboard NIC before the
# one cabled to the peer).
. "$(dirname "$0")/../lib.sh"
need_prereq ROOT
need ip

# A device DEV of node type TYPE, driver DRV, port 1 ACTIVE, behind NETDEV.
fake_dev() {
	mkdir -p "$sys/class/infiniband/$1/ports/1" "$sys/drivers/$3" "$sys/pci/$1" \
		"$sys/class/net/$4/device/infiniband/$1" &&
	echo "$2" >"$sys/class/infiniband/$1/node_type" &&
	echo "4: ACTIVE" >"$sys/class/infiniband/$1/ports/1/state" &&
	ln -s "$sys/pci/$1" "$sys/class/infiniband/$1/device" &&
	ln -s "$sys/drivers/$3" "$sys/pci/$1/driver"
}
# CMD in the namespace, with tests/rdma.sh and tests/hw.sh sourced.
in_ns() { ip netns exec "$ns" sh -c '. "$NTPX_TOP/tests/rdma.sh"; '"$*"; }

test_expect_success 'setup: irdma0 (iWARP) behind onb0, mlx5_0 behind cx0' '
	sys=$TMP/sys &&
	fake_dev irdma0 "4: RNIC" irdma onb0 &&
	fake_dev mlx5_0 "1: CA" mlx5_core cx0 &&
	NTPX_SYSFS=$sys &&
	export NTPX_SYSFS &&
	. "$NTPX_TOP/tests/rdma.sh" &&
	test_is "$(rdma_devices | tr "\n" " ")" "irdma0 mlx5_0 "
'

test_expect_success 'irdma0 is iWARP and has no raw-packet QPs; mlx5_0 has' '
	rdma_iwarp irdma0 && ! rdma_iwarp mlx5_0 &&
	! rdma_raw irdma0 && rdma_raw mlx5_0
'

test_expect_success 'ib:// takes mlx5_0, not the iWARP device listed first' '
	test_is "$(rdma_first_active_device)" mlx5_0
'

test_expect_success 'an iWARP device alone: none, and why' '
	mv "$sys/class/infiniband/mlx5_0" "$TMP/away" &&
	test_when_finished "mv $TMP/away $sys/class/infiniband/mlx5_0" &&
	test -z "$(rdma_first_active_device)" &&
	! NTPX_IB_DEV= rdma_ib_find &&
	test_is "$RDMA_WHY" "no RDMA device with an ACTIVE port, but for iWARP ones (no UD QPs)"
'

test_expect_success 'setup: a namespace with onb0 first and cx0 routed to the peer' '
	ns=$(uniq_name hwp) &&
	ip netns add "$ns" &&
	test_atexit "ip netns del $ns" &&
	ip -n "$ns" link add onb0 type veth peer name onb1 &&
	ip -n "$ns" link add cx0 type veth peer name cx1 &&
	for l in onb0 onb1 cx0 cx1; do ip -n "$ns" link set "$l" up || return 1; done &&
	ip -n "$ns" addr add 10.80.1.1/24 dev onb0 &&
	ip -n "$ns" addr add 10.80.2.1/24 dev cx0
'

test_expect_success 'the suites test the interface the route to the peer leaves by' '
	test_is "$(in_ns hw_route_dev 10.80.2.9)" cx0 &&
	test_is "$(in_ns hw_route_dev 10.80.1.9)" onb0 &&
	test -z "$(in_ns hw_route_dev 192.0.2.1)"
'

test_expect_success 'uudp via=verbs: the routed cx0 with mlx5_0, not onb0 with irdma0' '
	test_is "$(in_ns "NTPX_UUDP_PEER=10.80.2.9 NTPX_UUDP_DEV=; rdma_uudp_find && echo \$UUDP_DEV")" cx0
'

test_expect_success 'a peer behind the iWARP interface: no, and why' '
	test_is "$(in_ns "NTPX_UUDP_PEER=10.80.1.9 NTPX_UUDP_DEV=; rdma_uudp_find || echo \"\$RDMA_WHY\"")" \
		"onb0'\''s RDMA device irdma0 has no raw-packet QPs (not mlx5 or mlx4)"
'
done_testing
