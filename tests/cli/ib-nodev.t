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

devs=$(rdma_devices | tr '\n' ' ')
found=$(echo "${devs% }" | sed 's/ /, /g')

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

# check NAME TOOL URL DEV: the four assertions every case makes.
check() {
	is "$(cat "$TMP/$1.rc")" 1 "$2 $3 exits 1"
	ok "$2 $3 fails within 2 s (took $(cat "$TMP/$1.ms") ms)" \
		test "$(cat "$TMP/$1.ms")" -lt 2000
	if [ -z "$devs" ]; then
		is "$(cat "$TMP/$1.err")" "$2: $3: no RDMA device (asked for $4, found none)" \
			"$2 $3 says so in one line"
	else
		# Devices come in the library's order: check each is named.
		_r=0
		[ "$(wc -l <"$TMP/$1.err")" = 1 ] || _r=1
		grep -qF "$2: $3: no RDMA device (asked for $4, found " "$TMP/$1.err" || _r=1
		for _d in $devs; do grep -qw "$_d" "$TMP/$1.err" || _r=1; done
		is "$_r" 0 "$2 $3 says so in one line, naming $found"
	fi
	ok "$2 $3 writes nothing on stdout" test ! -s "$TMP/$1.out"
}

run probe-dev ntpprobe -c 3 'ib://192.0.2.1:123?dev=ntpxnodev0'
check probe-dev ntpprobe 'ib://192.0.2.1:123?dev=ntpxnodev0' ntpxnodev0
run reflect-dev ntpreflect 'ib://*:12300?dev=ntpxnodev0&port=1'
check reflect-dev ntpreflect 'ib://*:12300?dev=ntpxnodev0&port=1' ntpxnodev0

if [ -z "$devs" ]; then
	run probe-any ntpprobe -c 3 'ib://192.0.2.1:123'
	check probe-any ntpprobe 'ib://192.0.2.1:123' any
	run reflect-any ntpreflect 'ib://0.0.0.0:123'
	check reflect-any ntpreflect 'ib://0.0.0.0:123' any
else
	for i in 1 2 3 4 5 6 7 8; do
		skip "no-device case $i" "this host has RDMA devices: $found"
	done
fi
done_testing
