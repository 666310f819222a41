# SPDX-License-Identifier: ISC
# ologrec.awk - OpenNTPD's debug log (ntpd -d -v) to ntpx records, one per
# query, so that ntpfilter sees what the daemon's filter saw:
#   "reply from A: offset O delay D, next query Ns"  -> an ok record
#   "no reply received in time, next query Ns"       -> a timeout record
# The log prints O and D in seconds to the microsecond; the records carry
# them exactly (T2 = T3, T4 - T1 = D, off2 = 2 O).  Times start at an
# arbitrary second, one query per second (ntpfilter reads only delay,
# off2 and status).  -v max=N stops after N queries.
function ts(s, ns) { return sprintf("%d%09d", s, ns) }
BEGIN {
	print "#ntpx-record 1"
	print "#tool ologrec 0 (OpenNTPD's debug log)"
	print "#fields seq t1 t2 t3 t4 delay off2 status"
	base = 1764500000
	half = 500000000
}
max && n >= max { exit }
/^reply from .*: offset [-0-9.]+ delay [-0-9.]+,/ {
	d = $7
	sub(/,$/, "", d)
	o = sprintf("%.0f", $5 * 1e6) * 1000
	d = sprintf("%.0f", d * 1e6) * 1000
	n++
	printf "%d %s %s %s %s %d %d ok\n", n, ts(base + n, half),
		ts(base + n, half + o + d / 2), ts(base + n, half + o + d / 2),
		ts(base + n, half + d), d, 2 * o
	next
}
/no reply received in time/ {
	n++
	printf "%d %s - - - - - timeout\n", n, ts(base + n, half)
}
