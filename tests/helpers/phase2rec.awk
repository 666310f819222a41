# SPDX-License-Identifier: ISC
# phase2rec.awk - a clock's phase series (one value a line, in seconds,
# '#' lines skipped, as Stable32 and allantools read it) as ntpx records
# 1 s apart, for offsetfit --stability: offset = the phase times
# `scale`, in integer units that the records call ns.  The deviations
# offsetfit prints are then the clock's times scale / 1e9 (TDEV, MTIE
# and TIE in the records' units); alpha and the EDFs do not change.
# Pick scale so that every value is an integer in those units (the
# counter's resolution): the records hold the series exactly.
#
#   awk -v scale=1e13 -f phase2rec.awk PHASE_FILE > records
BEGIN {
	print "#ntpx-record 1"
	print "#fields seq t1 t2 t3 t4 delay off2 status"
	k = 0
}
/^[ \t]*#/ || NF == 0 { next }
{
	v = $1 * scale
	x = v < 0 ? -int(-v + 0.5) : int(v + 0.5)
	# t1 counts from 1 s: every stamp stays below 2^53, exact in awk
	t1 = (k + 1) * 1000000000
	printf "%d %d %d %d %d 100000 %d ok\n", k + 1, t1, t1 + 50000 + x, t1 + 51000 + x, t1 + 101000, 2 * x
	k++
}
