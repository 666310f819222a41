# SPDX-License-Identifier: ISC
# tests/hw.sh - what the hardware suites (tests/hw/*.t) share.  Source it
# after tests/lib.sh (tests/rdma.sh sources it).
#
#   hw_skip_all REASON  the hardware the whole suite needs is missing:
#                       before the first test, "1..0 # skip REASON"; with
#                       NTPX_REQUIRE_HW=1 (a machine that should have it)
#                       one failed test naming REASON instead, and the
#                       suite ends.  In a (setup) test: a diag line and
#                       status 1, as lab_up does.
#
#   hw_route_dev PEER   prints the interface the route to PEER (an
#                       address or a name) leaves by (ip route get), the
#                       one a suite tests: a host may have an onboard NIC
#                       before the one cabled to the peer
#
#   hw_built PATH       status 0 when this build has PATH (verbs: ib:// and
#                       uudp's via=verbs; xdp: uudp's AF_XDP port), as make
#                       wrote it in build/features; else 1 with the reason
#                       in HW_WHY (the libraries the build went without)
#
# Parts of a suite that need more than the whole (a peer, a port to flap)
# are tests with a prerequisite of the suite's own (test_lazy_prereq):
# "ok N # skip TITLE (missing PREREQ)".

# Like skip_all, but a failure when the environment says hardware must be
# there (git's lib-httpd.sh does this with GIT_TEST_HTTPD).
hw_skip_all() {
	if [ -n "$_in_test" ]; then
		diag "$*"
		return 1
	fi
	if [ "${NTPX_REQUIRE_HW:-0}" = 1 ]; then
		_hw_why=$*
		test_expect_success "hardware required by NTPX_REQUIRE_HW=1: $*" '
			diag "missing: $_hw_why" &&
			false
		'
		done_testing
		exit 1
	fi
	skip_all "$*"
}

hw_route_dev() {
	_hr=$1
	case $_hr in
	*[!0-9.]*) _hr=$(getent ahostsv4 "$_hr" | awk 'NR == 1 { print $1 }') ;;
	esac
	[ -n "$_hr" ] || return 0
	ip route get "$_hr" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit } }'
}

hw_built() {
	grep -qx "$1" "$NTPX_TOP/build/features" 2>/dev/null && return 0
	case $1 in
	verbs) HW_WHY="this ntpx was built without libibverbs, libmlx5 and librdmacm (rdma-core): ib:// and via=verbs are left out" ;;
	xdp) HW_WHY="this ntpx was built without libxdp and libbpf: uudp's AF_XDP port is left out" ;;
	*) HW_WHY="this ntpx was built without $1" ;;
	esac
	return 1
}
