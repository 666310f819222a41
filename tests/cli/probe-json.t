#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpprobe --json: one JSON object per exchange, for a script's one-shot
# check (issue 33, 6): the record's columns by name, ns timestamps as
# strings of their digits (as ntpx-convert --json), so that python3's
# json and jq 1.6 read every digit; the offset, delay and error bound in
# us; the server's stratum, refid and leap.  Each value is checked
# against the exchange's own T1..T4.
. "$(dirname "$0")/../lib.sh"
need python3
test_lazy_prereq JQ 'command -v jq'

# check_objects FILE N: N objects, each an exchange whose delay, off2,
# offset_us and delay_us are its T1..T4's arithmetic, exactly.
check_objects() {
	python3 - "$1" "$2" <<-'PY'
	import json, sys
	objs = [json.loads(l) for l in open(sys.argv[1])]
	assert len(objs) == int(sys.argv[2]), objs
	for o in objs:
	    t = [int(o[k]) for k in ("t1", "t2", "t3", "t4")]
	    assert all(isinstance(o[k], str) for k in ("t1", "t2", "t3", "t4")), o
	    delay = (t[3] - t[0]) - (t[2] - t[1])
	    off2 = (t[1] - t[0]) + (t[2] - t[3])
	    assert o["status"] == "ok" and o["delay"] == delay and o["off2"] == off2, o
	    # printed to the nanosecond, rounded: half a nanosecond off at most
	    assert abs(o["offset_us"] - off2 / 2e3) <= 0.0005 + 1e-9, o
	    assert abs(o["delay_us"] - delay / 1e3) <= 0.0005 + 1e-9, o
	    assert o["error_us"] >= o["delay_us"] / 2, o
	    assert o["stratum"] == 1 and o["refid"] == "NTPX" and o["leap"] == 0, o
	PY
}

test_expect_success 'setup: a reflector' '
	start_reflector
'

test_expect_success '-1 --json: one object, its numbers its T1..T4'"'"'s, exit 0' '
	ntpprobe -1 --json -w 5s "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/once.json" 2>"$TMP/once.err" &&
	check_objects "$TMP/once.json" 1
'

test_expect_success '--json -c 3: three objects, one a line' '
	ntpprobe --json -c 3 -i 5ms -w 5s "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/three.json" 2>"$TMP/three.err" &&
	check_objects "$TMP/three.json" 3 &&
	test_grep "^ntpprobe: sent 3, ok 3" "$TMP/three.err"
'

test_expect_success JQ '--json read by jq 1.6: t1 to the nanosecond' '
	jq -r .t1 "$TMP/three.json" >"$TMP/t1.jq" &&
	python3 -c "import json, sys
for l in open(sys.argv[1]): print(json.loads(l)[\"t1\"])" "$TMP/three.json" >"$TMP/t1.py" &&
	test_is "$(wc -l <"$TMP/t1.jq")" 3 &&
	cmp "$TMP/t1.py" "$TMP/t1.jq" &&
	test_grep -x "[0-9]\{19\}" "$TMP/t1.jq"
'

test_expect_success '-1 --json to a closed port: the object says refused, exit 1' '
	port=$(free_udp_port) &&
	test_exit 1 ntpprobe -1 --json "udp://127.0.0.1:$port" >"$TMP/ref.json" 2>/dev/null &&
	python3 -c "import json, sys
o = json.load(open(sys.argv[1]))
assert o[\"status\"] == \"refused\" and o[\"t2\"] is None and \"offset_us\" not in o, o" "$TMP/ref.json"
'

test_expect_success '--json with --records or --human: a usage error' '
	test_exit 2 ntpprobe --json --records "udp://127.0.0.1:$REFLECT_PORT" 2>"$TMP/use.err" &&
	test_grep "^ntpprobe: --json excludes --human and --records" "$TMP/use.err"
'
done_testing
