#!/bin/sh
# SPDX-License-Identifier: ISC
# make hwcheck (scripts/hwcheck): on any host it records the inventory,
# runs what the host offers (udp over loopback at least, with its stamp
# order checked), and leaves a package that verifies against its
# MANIFEST.sha256 (bin/ntpx-study --verify); every check ends on one line,
# pass, fail with why, or skip with why.  Here, where there is no RDMA
# device and no NIC that stamps, the hardware checks must skip, each
# with its reason, and the run exit 0.  A broken package and a record
# out of order must be caught.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/rdma.sh"
need sha256sum

HW="$NTPX_TOP/scripts/hwcheck"
test_lazy_prereq NORDMA '[ -z "$(rdma_devices)" ]'

test_expect_success 'hwcheck runs and exits 0' '
	if ! "$HW" --out "$TMP/pkg" >"$TMP/out" 2>"$TMP/err"; then
		cat "$TMP/out" "$TMP/err" >&2 &&
		false
	fi
'

test_expect_success 'one line per check, as the verdicts file has them' '
	head -n -1 "$TMP/out" >"$TMP/lines" &&
	test_is "$(cat "$TMP/lines")" "$(cat "$TMP/pkg/verdicts")" &&
	test "$(wc -l <"$TMP/pkg/verdicts")" -ge 10
'

test_expect_success 'every line is pass, or fail/skip with a reason' '
	test_grep ! -Ev "^[a-z0-9-]+ (pass|(fail|skip): .{8,})$" "$TMP/pkg/verdicts"
'

test_expect_success 'the checks the issue names are all there' '
	for c in inventory udp-loopback stamp-order udp-hwstamps ib uudp-verbs \
		 verbs-stamps xdp-txstamps rediscovery qp-rebuild; do
		grep -q "^$c " "$TMP/pkg/verdicts" || { diag "no $c"; return 1; }
	done
'

test_expect_success 'udp over loopback and its stamp order pass' '
	test_grep "^udp-loopback pass$" "$TMP/pkg/verdicts" &&
	test_grep "^stamp-order pass$" "$TMP/pkg/verdicts"
'

test_expect_success NORDMA 'without RDMA the verbs checks skip, saying so' '
	for c in ib verbs-stamps rediscovery qp-rebuild; do
		grep -q "^$c skip: no RDMA device" "$TMP/pkg/verdicts" ||
			{ diag "$(grep "^$c " "$TMP/pkg/verdicts")"; return 1; }
	done
'

test_expect_success 'the inventory has what the issue asks for' '
	for f in uname rdma-core ibv_devinfo ethtool rdma-link mlx5-real-time \
		 flow-steering phc xsk-features; do
		test -s "$TMP/pkg/inventory/$f" || { diag "no inventory/$f"; return 1; }
	done
'

# Issue 35: the queues AF_XDP binds to, ntuple state and dev_port of each
# interface; lo is on every host.
test_expect_success 'each interface: its channels, ntuple filters and dev_port' '
	sed -n "/^== lo$/,/^== /p" "$TMP/pkg/inventory/ethtool" >"$TMP/lo" &&
	test_grep "^dev_port: " "$TMP/lo" &&
	test_grep -E "^(Channel parameters for lo|.*channel|.*Operation not supported)" "$TMP/lo" &&
	test_grep "^ntuple-filters:" "$TMP/lo"
'

test_expect_success 'the package verifies against its MANIFEST' '
	"$NTPX_BIN/ntpx-study" --verify "$TMP/pkg" >"$TMP/v.out" 2>&1 &&
	test_grep "files verified" "$TMP/v.out"
'

test_expect_success 'a changed file fails the verification' '
	cp -r "$TMP/pkg" "$TMP/bad" &&
	echo changed >>"$TMP/bad/verdicts" &&
	test_exit 1 "$NTPX_BIN/ntpx-study" --verify "$TMP/bad" >/dev/null 2>&1
'

test_expect_success 'the stamp-order check passes the run and catches a swap' '
	test_is "$("$HW" --order "$TMP/pkg/records/udp-loopback.rec")" "$(grep -c " ok" \
		"$TMP/pkg/records/udp-loopback.rec") 0" &&
	awk "$ntpx_fields"'"'"'/^#fields/ { fields(); print; next } /^#/ { print; next }
		n++ == 0 { $(col["t1k"] + 1) = field("t1") - 1000 } { print }'"'"' \
		"$TMP/pkg/records/udp-loopback.rec" >"$TMP/swapped.rec" &&
	test_exit 1 "$HW" --order "$TMP/swapped.rec" >"$TMP/o.out" 2>/dev/null &&
	test_is "$(cut -d" " -f2 "$TMP/o.out")" 1
'

test_expect_success 'an existing package is not overwritten' '
	test_exit 1 "$HW" --out "$TMP/pkg" >/dev/null 2>"$TMP/e2" &&
	test_grep "exists and is not empty" "$TMP/e2"
'
done_testing
