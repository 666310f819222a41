#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-convert --csv|--json: records as a header row and rows, or as JSON
# lines, read back by Python's csv and json modules (what pandas and
# DuckDB parse alike) and compared, column by column by name, with the
# records themselves; the '#' lines as comments or a first object; a
# malformed input as one line and exit 1; a failed write as exit 1.
. "$(dirname "$0")/../lib.sh"
need python3
test_lazy_prereq JQ 'command -v jq'

# Every record of REC (a file) as "name=value ..." lines, '-' for none:
# the reference the conversions are compared with.
as_pairs() {
	awk "$ntpx_fields"'/^#fields/ { fields(); n = NF - 1; for (i = 2; i <= NF; i++) nm[i - 1] = $i; next }
		/^#/ { next }
		{ s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") nm[i] "=" $i; print s }' "$@"
}
# The same from CSV on stdin (comment lines skipped, empty cells '-').
csv_pairs() { python3 -c 'import csv, sys
rows = csv.DictReader(l for l in sys.stdin if not l.startswith("#"))
for r in rows:
	print(" ".join("%s=%s" % (k, v if v != "" else "-") for k, v in r.items()))'; }
# The same from JSON lines on stdin (the meta object and comments skipped).
json_pairs() { python3 -c 'import json, sys
for l in sys.stdin:
	o = json.loads(l)
	if "meta" in o or "comment" in o:
		continue
	print(" ".join("%s=%s" % (k, "-" if v is None else v) for k, v in o.items()))'; }

test_expect_success 'setup: records with ok and refused exchanges' '
	start_reflector &&
	ntpprobe -c 5 -i 5ms -w 5s "127.0.0.1:$REFLECT_PORT" >"$TMP/ok.rec" 2>/dev/null &&
	port=$(free_udp_port) &&
	test_exit 1 ntpprobe -c 3 -i 5ms "127.0.0.1:$port" >"$TMP/ref.rec" 2>/dev/null &&
	as_pairs "$TMP/ok.rec" "$TMP/ref.rec" >"$TMP/want" &&
	test_is "$(wc -l <"$TMP/want")" 8
'

test_expect_success '--csv: the comment lines, one header row, then the rows' '
	ntpx-convert --csv "$TMP/ok.rec" "$TMP/ref.rec" >"$TMP/out.csv" &&
	test_is "$(grep -c "^seq,t1,t2,t3,t4,delay,off2,status" "$TMP/out.csv")" 1 &&
	test_grep -x "#endpoint udp://127.0.0.1:$REFLECT_PORT" "$TMP/out.csv" &&
	test_is "$(grep -vc "^#" "$TMP/out.csv")" 9
'

test_expect_success '--csv read back by a CSV reader: every value by name, none empty but "-"' '
	csv_pairs <"$TMP/out.csv" >"$TMP/got.csv" &&
	cmp "$TMP/want" "$TMP/got.csv" &&
	test_grep ",refused," "$TMP/out.csv" &&
	test_grep ",,," "$TMP/out.csv"
'

test_expect_success '--json: a first object of the # lines, then one per record' '
	ntpx-convert --json "$TMP/ok.rec" >"$TMP/out.json" &&
	head -n 1 "$TMP/out.json" | python3 -c "import json, sys
m = json.load(sys.stdin)[\"meta\"]
assert m[\"tool\"].startswith(\"ntpprobe \"), m
assert m[\"endpoint\"] == \"udp://127.0.0.1:$REFLECT_PORT\", m
assert m[\"clock\"] == \"realtime\", m" &&
	json_pairs <"$TMP/out.json" >"$TMP/got.json" &&
	as_pairs "$TMP/ok.rec" >"$TMP/want.ok" &&
	cmp "$TMP/want.ok" "$TMP/got.json"
'

test_expect_success '--json: ns since 1970 a string, other integers numbers, "-" null, status a string' '
	ntpx-convert --json "$TMP/ref.rec" | sed -n 2p | python3 -c "import json, sys
o = json.load(sys.stdin)
assert isinstance(o[\"t1\"], str) and int(o[\"t1\"]) > 10**18, o
assert isinstance(o[\"seq\"], int), o
assert o[\"t2\"] is None and o[\"status\"] == \"refused\", o" &&
	ntpx-convert --json "$TMP/ok.rec" | sed -n 2p | python3 -c "import json, sys
o = json.load(sys.stdin)
assert isinstance(o[\"delay\"], int) and isinstance(o[\"off2\"], int), o"
'

# The first integer a double cannot hold, either side of it, and a
# timestamp of 19 digits whose last digits a double loses.
test_expect_success '--json: 2^53-1 a number, 2^53 a string, either sign' '
	printf "#ntpx-record 1\n#fields a b c d e\n9007199254740991 9007199254740992 -9007199254740991 -9007199254740992 1796213966753593905\n" >"$TMP/big.rec" &&
	ntpx-convert --json "$TMP/big.rec" | sed -n 2p >"$TMP/big.json" &&
	test_is "$(cat "$TMP/big.json")" \
		"{\"a\":9007199254740991,\"b\":\"9007199254740992\",\"c\":-9007199254740991,\"d\":\"-9007199254740992\",\"e\":\"1796213966753593905\"}"
'

# Every timestamp, read by jq (Debian 12's 1.6 rounds a number to 17
# digits) and by python3's json, is the record's to the nanosecond.
test_expect_success JQ '--json read by jq: every t1..t4 exactly the record'"'"'s' '
	awk "$ntpx_fields"'"'"'/^#fields/ { fields(); next } /^#/ { next }
		{ print field("t1"), field("t2"), field("t3"), field("t4") }'"'"' "$TMP/ok.rec" >"$TMP/want.t" &&
	ntpx-convert --json "$TMP/ok.rec" | jq -r "select(.seq) | \"\\(.t1) \\(.t2) \\(.t3) \\(.t4)\"" >"$TMP/got.jq" &&
	test_is "$(wc -l <"$TMP/got.jq")" 5 &&
	cmp "$TMP/want.t" "$TMP/got.jq"
'

test_expect_success '--json read by python3: every t1..t4 exactly the record'"'"'s, as integers' '
	ntpx-convert --json "$TMP/ok.rec" | python3 -c "import json, sys
for l in sys.stdin:
	o = json.loads(l)
	if \"seq\" in o:
		print(*(int(o[k]) for k in (\"t1\", \"t2\", \"t3\", \"t4\")))" >"$TMP/got.py" &&
	cmp "$TMP/want.t" "$TMP/got.py"
'

test_expect_success 'standard input, and a #reset mid-stream kept as a comment' '
	{ sed -n "1,/^#fields/p" "$TMP/ok.rec" && grep -v "^#" "$TMP/ok.rec" | sed -n 1,2p &&
	  echo "#reset seq 3" && grep -v "^#" "$TMP/ok.rec" | sed -n 3p; } >"$TMP/reset.rec" &&
	ntpx-convert --csv <"$TMP/reset.rec" >"$TMP/reset.csv" &&
	test_grep -x "#reset seq 3" "$TMP/reset.csv" &&
	ntpx-convert --json <"$TMP/reset.rec" | test_grep -x "{\"comment\":\"#reset seq 3\"}" -
'

test_expect_success 'malformed input: one line FILE:LINE: reason, exit 1' '
	printf "#fields seq t1\n1 2 3\n" >"$TMP/bad1" &&
	test_exit 1 ntpx-convert --csv "$TMP/bad1" >/dev/null 2>"$TMP/e1" &&
	test_is "$(cat "$TMP/e1")" "ntpx-convert: $TMP/bad1:2: 3 fields, #fields names 2" &&
	printf "1 2\n" >"$TMP/bad2" &&
	test_exit 1 ntpx-convert --json "$TMP/bad2" >/dev/null 2>"$TMP/e2" &&
	test_is "$(cat "$TMP/e2")" "ntpx-convert: $TMP/bad2:1: a record before #fields" &&
	printf "#fields seq t1 t2\n" >"$TMP/bad3" &&
	test_exit 1 ntpx-convert --csv "$TMP/ok.rec" "$TMP/bad3" >/dev/null 2>"$TMP/e3" &&
	test_grep "bad3:1: #fields differs from the first input" "$TMP/e3" &&
	test_is "$(wc -l <"$TMP/e3")" 1
'

test_expect_success 'usage: exit 2' '
	test_exit 2 ntpx-convert "$TMP/ok.rec" 2>/dev/null &&
	test_exit 2 ntpx-convert --csv --json "$TMP/ok.rec" 2>/dev/null &&
	test_exit 2 ntpx-convert --xml 2>/dev/null
'

test_expect_success 'a write error: exit 1, one line' '
	test_exit 1 ntpx-convert --csv "$TMP/ok.rec" >/dev/full 2>"$TMP/full" &&
	test_is "$(cat "$TMP/full")" "ntpx-convert: write error on standard output: No space left on device"
'
done_testing
