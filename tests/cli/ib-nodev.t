#!/bin/sh
# SPDX-License-Identifier: ISC
# Without an RDMA device, every ib command fails fast: exit 1 within a
# moment, one line on stderr naming "no RDMA device", the device asked
# for and what was found, and nothing on stdout (no half-written records).
# The "dev=ntpxnodev0" cases hold on any host; the "any device" cases only
# where there is none (elsewhere tests/hw/ib.t runs the real thing).
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/rdma.sh"
need timeout
hw_built verbs || skip_all "$HW_WHY"

# NORDMA: this host has no RDMA device.
test_lazy_prereq NORDMA '[ -z "$(rdma_devices)" ]'

# run NAME CMD...: runs CMD with a bound on its time; records status,
# milliseconds taken, stderr and stdout under $TMP/NAME.
run() {
	_name=$1
	shift
	_t0=$(date +%s%N)
	timeout 10 "$@" >"$TMP/$_name.out" 2>"$TMP/$_name.err"
	echo $? >"$TMP/$_name.rc"
	echo $((($(date +%s%N) - _t0) / 1000000)) >"$TMP/$_name.ms"
}

# The four assertions every case makes, on what run NAME recorded.
# exited NAME: exit status 1.
exited_1() { test_is "$(cat "$TMP/$1.rc")" 1; }
# fast NAME: within 2 s.
fast() { diag "took $(cat "$TMP/$1.ms") ms"; test "$(cat "$TMP/$1.ms")" -lt 2000; }
# said NAME TOOL URL DEV: one line saying so, naming what was found.
said() {
	_devs=$(rdma_devices | tr '\n' ' ')
	if [ -z "$_devs" ]; then
		test_is "$(cat "$TMP/$1.err")" "$2: $3: no RDMA device (asked for $4, found none)"
	else
		# Devices come in the library's order: check each is named.
		diag "this host has RDMA devices: $_devs"
		_r=0
		[ "$(wc -l <"$TMP/$1.err")" = 1 ] || _r=1
		grep -qF "$2: $3: no RDMA device (asked for $4, found " "$TMP/$1.err" || _r=1
		for _d in $_devs; do grep -qw "$_d" "$TMP/$1.err" || _r=1; done
		test_is "$_r" 0
	fi
}
# quiet NAME: nothing on stdout.
quiet() { test ! -s "$TMP/$1.out"; }

test_expect_success 'ntpprobe ib://192.0.2.1:123?dev=ntpxnodev0 exits 1' '
	run probe-dev ntpprobe -c 3 "ib://192.0.2.1:123?dev=ntpxnodev0" &&
	exited_1 probe-dev
'
test_expect_success 'ntpprobe ib://192.0.2.1:123?dev=ntpxnodev0 fails within 2 s' '
	fast probe-dev
'
test_expect_success 'ntpprobe ib://192.0.2.1:123?dev=ntpxnodev0 says so in one line' '
	said probe-dev ntpprobe "ib://192.0.2.1:123?dev=ntpxnodev0" ntpxnodev0
'
test_expect_success 'ntpprobe ib://192.0.2.1:123?dev=ntpxnodev0 writes nothing on stdout' '
	quiet probe-dev
'

test_expect_success 'ntpreflect ib://*:12300?dev=ntpxnodev0&port=1 exits 1' '
	run reflect-dev ntpreflect "ib://*:12300?dev=ntpxnodev0&port=1" &&
	exited_1 reflect-dev
'
test_expect_success 'ntpreflect ib://*:12300?dev=ntpxnodev0&port=1 fails within 2 s' '
	fast reflect-dev
'
test_expect_success 'ntpreflect ib://*:12300?dev=ntpxnodev0&port=1 says so in one line' '
	said reflect-dev ntpreflect "ib://*:12300?dev=ntpxnodev0&port=1" ntpxnodev0
'
test_expect_success 'ntpreflect ib://*:12300?dev=ntpxnodev0&port=1 writes nothing on stdout' '
	quiet reflect-dev
'

# Without dev=, on a host without any device.
test_expect_success NORDMA 'ntpprobe ib://192.0.2.1:123 exits 1' '
	run probe-any ntpprobe -c 3 "ib://192.0.2.1:123" &&
	exited_1 probe-any
'
test_expect_success NORDMA 'ntpprobe ib://192.0.2.1:123 fails within 2 s' '
	fast probe-any
'
test_expect_success NORDMA 'ntpprobe ib://192.0.2.1:123 says so in one line' '
	said probe-any ntpprobe "ib://192.0.2.1:123" any
'
test_expect_success NORDMA 'ntpprobe ib://192.0.2.1:123 writes nothing on stdout' '
	quiet probe-any
'

test_expect_success NORDMA 'ntpreflect ib://0.0.0.0:123 exits 1' '
	run reflect-any ntpreflect "ib://0.0.0.0:123" &&
	exited_1 reflect-any
'
test_expect_success NORDMA 'ntpreflect ib://0.0.0.0:123 fails within 2 s' '
	fast reflect-any
'
test_expect_success NORDMA 'ntpreflect ib://0.0.0.0:123 says so in one line' '
	said reflect-any ntpreflect "ib://0.0.0.0:123" any
'
test_expect_success NORDMA 'ntpreflect ib://0.0.0.0:123 writes nothing on stdout' '
	quiet reflect-any
'
done_testing
