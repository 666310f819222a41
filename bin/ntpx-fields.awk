# SPDX-License-Identifier: ISC
# ntpx-fields.awk - columns by name, for the awk programs of the ntpx
# scripts and tests: the one place that reads a "#fields NAME..." header.
# Records (doc/ntpx-record.5) and the study's tables name their columns
# there; a record's columns are never found by number (stamp, truth and
# filter columns come and go).
#
#   fields()      on a header line: col[NAME] is then NAME's column, until
#                 the next header (a file may hold several runs)
#   field(NAME)   NAME's value on the current line, "-" when the header
#                 lacks it
#   field_list(NAMES)   the values of the space-separated NAMES, joined by
#                 one space: a shell loop reads them with `read -r` (as
#                 strings: awk's doubles cannot hold ns since 1970)
#
# A script puts it ahead of its own program text, read once:
#   ntpx_fields=$(cat "$ntpx_lib/ntpx-fields.awk")
#   awk "$ntpx_fields"'/^#fields/ { fields(); next } ...' FILE
# (bin/ntpx-family.sh, the analysis scripts and tests/lib.sh do).
function fields(    i) { delete col; for (i = 2; i <= NF; i++) col[$i] = i - 1 }
function field(name) { return (name in col) ? $(col[name]) : "-" }
function field_list(names,    w, n, i, s) {
	n = split(names, w, " ")
	s = field(w[1])
	for (i = 2; i <= n; i++) s = s " " field(w[i])
	return s
}
#
#   ntpx_cut()    1 when the current line is its input's last and was cut
#                 short (no newline: its writer was killed mid-line), said
#                 once on stderr, "PROG: FILE:LINE: last line cut short (no
#                 newline): dropped" (PROG from -v ntpx_prog=); a reader
#                 drops it, as the C tools do (lib/record.h): its first
#                 rule is "ntpx_cut() { next }", and its END exits 3 when
#                 ntpx_cut_seen is set, after its output (doc/ntpx.7).
#                 gawk's RT tells; another awk never sees a line cut
function ntpx_cut() {
	if (!("version" in PROCINFO) || RT != "")
		return 0
	printf "%s: %s:%d: last line cut short (no newline): dropped\n", ntpx_prog == "" ? "ntpx" : ntpx_prog,
		FILENAME == "" || FILENAME == "-" ? "standard input" : FILENAME, FNR > "/dev/stderr"
	ntpx_cut_seen = 1
	return 1
}
