# SPDX-License-Identifier: ISC
# tests/stamps.sh - helpers for the suites that check per-layer stamps
# (sourced after tests/lib.sh).
#
# stamp_order REC [LOG]: checks, on every ok record of REC, the order of
# the stamps within one exchange on one host clock,
#
#   t1 <= t1q <= t1k < t2k <= t2 <= t3 <= t3q <= t3k < t4k <= t4
#
# taking t2k t3q t3k from the record, or from ntpreflect's --log LOG
# (matched by t2) where the record has none.  Prints "N BAD MISSING": ok
# records, records out of order (each on stderr), records lacking a stamp.
# Timestamps since 1970 all have 19 digits, so awk compares them exactly
# as strings.
stamp_order() {
	awk -v logf="${2:-}" "$ntpx_fields"'
	BEGIN {
		if (logf != "") {
			while ((getline < logf) > 0) {
				if ($1 == "#fields") { fields(); continue }
				if (/^#/) continue
				srv[field("t2")] = field("t2k") " " field("t3q") " " field("t3k")
			}
		}
	}
	/^#fields/ { fields(); next }
	/^#/ { next }
	field("status") != "ok" { next }
	{
		t2k = field("t2k"); t3q = field("t3q"); t3k = field("t3k")
		if (t2k == "-" && (field("t2") in srv)) { split(srv[field("t2")], s, " "); t2k = s[1]; t3q = s[2]; t3k = s[3] }
		k = split(field("t1") " " field("t1q") " " field("t1k") " " t2k " " field("t2") " " field("t3") " " \
			  t3q " " t3k " " field("t4k") " " field("t4"), t, " ")
		n++
		for (i = 1; i <= k; i++) if (t[i] == "-" || length(t[i]) != 19) { miss++; next }
		# strict where the datagram crossed between hosts
		for (i = 1; i < k; i++)
			if ((i == 3 || i == 8) ? !(t[i] "" < t[i + 1] "") : !(t[i] "" <= t[i + 1] "")) {
				bad++; print "out of order at " i ": " $0 > "/dev/stderr"; break
			}
	}
	END { print n + 0, bad + 0, miss + 0 }' "$1"
}
