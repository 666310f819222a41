# SPDX-License-Identifier: ISC
# ologrec.awk - OpenNTPD's debug log (ntpd -d -v) to ntpx records, one per
# query, so that ntpfilter sees what the daemon's filter saw:
#   "reply from A: offset O delay D, next query Ns"  -> an ok record
#   "no reply received in time, next query Ns"       -> a timeout record
# O and D are in seconds, to the nanosecond when the daemon runs with
# tests/helpers/ologns.so (to the microsecond without it).  The records
# carry them rounded to the nanosecond: delay = D, off2 = 2 O.  The times
# around them are made up (T2 = T3, T4 - T1 = D, T2 - T1 = O + D / 2 to
# the nanosecond below), one query per second from an arbitrary one:
# ntpfilter reads only delay, off2 and status.  -v max=N stops after N
# queries.
function ts(s, ns) { return sprintf("%d%09d", s, ns) }
function ns(sec) { return sprintf("%.0f", sec * 1e9) + 0 }
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
	o2 = ns(2 * $5)
	d = ns(d)
	t2 = half + int((o2 + d) / 2)
	n++
	printf "%d %s %s %s %s %d %d ok\n", n, ts(base + n, half),
		ts(base + n, t2), ts(base + n, t2), ts(base + n, half + d), d, o2
	next
}
/no reply received in time/ {
	n++
	printf "%d %s - - - - - timeout\n", n, ts(base + n, half)
}
