#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpstages on records whose stages are known: every stage's median, the
# one-way paths marked offset-bearing unless --same-clock, one line per
# exchange with -e, records without stamps, and bad input refused with
# the file and line.
. "$(dirname "$0")/../lib.sh"

# Five exchanges: client_send 1.5 us (1 to the qdisc, 0.5 in it), c2r 10,
# server_recv 2, turnaround 0.5, server_send 1 (0.7 + 0.3), r2c 10,
# client_recv 3 or 4 us (4 on odd exchanges: median 4).
known_stages() {
	echo "#ntpx-record 1"
	echo "#fields seq t1 t2 t3 t4 delay off2 status t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h"
	for i in 1 2 3 4 5; do
		t1=$((1000000000000000000 + i * 1000000000))
		t1q=$((t1 + 1000)) t1k=$((t1 + 1500))
		t2k=$((t1k + 10000)) t2=$((t2k + 2000)) t3=$((t2 + 500))
		t3q=$((t3 + 700)) t3k=$((t3q + 300)) t4k=$((t3k + 10000))
		t4=$((t4k + 3000 + (i % 2) * 1000))
		echo "$i $t1 $t2 $t3 $t4 $(( (t4 - t1) - (t3 - t2) )) $(( (t2 - t1) + (t3 - t4) )) ok $t1q $t1k - $t2k - $t3q $t3k - $t4k -"
	done
	echo "6 1000000006000000000 - - - - - timeout 1000000006000001000 1000000006000001500 - - - - - - - -"
}
# med STAGE [FILE]: the median of STAGE in ntpstages' output
med() { awk -v s="$1" '$1 == s { print $4 }' "${2:-$TMP/out}"; }
# "user N;kernel N;": the layers and their counts
layers() { awk '$1 == "user" || $1 == "kernel" { print $1, $2 }' "$TMP/out" | tr '\n' ';'; }
kernel_layer() { awk '$1 == "kernel" { print $3, $4, $5 }' "$TMP/out"; }
# exchange SEQ: -e's client_send, c2r and client_recv of exchange SEQ
exchange() { awk -v s="$1" '$1 == s { print $2, $6, $NF }' "$TMP/each"; }
# the first field of every line but the headers, one line
firsts() { grep -v '^#' "$1" | awk '{ print $1 }' | tr '\n' ' '; }
# The same records without their stamps.
unstamped() {
	grep -v '^#' "$1" | cut -d' ' -f1-8 |
		{ echo "#ntpx-record 1"; echo "#fields seq t1 t2 t3 t4 delay off2 status"; cat; }
}

test_expect_success 'setup: five exchanges of known stages, and a timeout' '
	known_stages >"$TMP/rec"
'
test_expect_success 'exit 0' '
	ntpstages "$TMP/rec" >"$TMP/out"
'
test_expect_success 'each host'\''s stages: their medians' '
	test_is "$(med client_send) $(med c_to_qdisc) $(med c_qdisc) $(med server_recv) $(med turnaround) $(med server_send) $(med client_recv)" \
		"1.500 1.000 0.500 2.000 0.500 1.000 4.000"
'
test_expect_success 'the one-way paths, marked * (offset-bearing)' '
	test_is "$(med "c2r*") $(med "r2c*")" "10.000 10.000"
'
test_expect_success 'the header says the one-way paths carry the clocks'\'' offset' '
	grep -q "^# ntpstages: 6 records, 5 ok; clocks: two hosts (one-way paths offset-bearing" "$TMP/out"
'
test_expect_success '--same-clock: c2r unmarked' '
	ntpstages --same-clock "$TMP/rec" >"$TMP/same" &&
	test_is "$(med c2r "$TMP/same")" 10.000
'
test_expect_success 'the user and kernel layers, over the 5 ok exchanges' '
	test_is "$(layers)" "user 5;kernel 5;"
'
# Kernel layer: delay 20 us, off2 0 on every exchange; user layer: off2
# alternates, delay 30 or 31 us.
test_expect_success 'kernel layer: offset 0, delay 20 us, no residual' '
	test_is "$(kernel_layer)" "0.000 20.000 0.000"
'
test_expect_success '-e: the stages as columns' '
	ntpstages -e "$TMP/rec" >"$TMP/each" &&
	test_is "$(grep "^#fields" "$TMP/each" | cut -d" " -f2-6)" "seq client_send c_to_qdisc c_qdisc c_nic_tx"
'
test_expect_success '-e: exchange 3 in ns' '
	test_is "$(exchange 3)" "1500 10000 4000"
'
test_expect_success 'records without stamps: the turnaround and the user layer only' '
	unstamped "$TMP/rec" >"$TMP/old" &&
	ntpstages "$TMP/old" >"$TMP/oldout" &&
	test_is "$(firsts "$TMP/oldout")" "turnaround user "
'
test_expect_success 'a malformed stamp: exit 1, the file and line' '
	printf "#ntpx-record 1\n#fields seq t1 t2 t3 t4 delay off2 status t3k\n1 1 2 3 4 2 -2 ok 12x\n" >"$TMP/bad" &&
	test_exit 1 ntpstages "$TMP/bad" >/dev/null 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "ntpstages: $TMP/bad:3: bad t3k '\''12x'\''"
'
test_expect_success 'an unknown option: exit 2' '
	test_exit 2 ntpstages --bogus 2>/dev/null
'
done_testing
