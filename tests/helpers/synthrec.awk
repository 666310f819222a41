# SPDX-License-Identifier: ISC
# synthrec.awk - synthetic ntpx records for the analysis tests (a mock:
# it stands in for runs that need the lab's load, which a loopback test
# cannot produce).  Every record obeys the format exactly: integer ns
# T1..T4, delay and off2 from them.
#
#   awk -f synthrec.awk -v kind=K -v start=UNIX_S -v n=N -v ms=INTERVAL_MS \
#       -v idx=RUN -v ev=EVENTS_FILE [-v seed=S] [params] > probe.rec
#
# The reference is ahead of the client by theta(t); one-way delays are
# dreq and dresp ns, so off2 = 2 theta + dreq - dresp.
#   kind=plain        theta = th (us), delays 40 us +- noise
#   kind=bursts       bursts="ON-OFF,..." (s from start): request delay +q us
#                     inside (the reply +q/5), burst_on/burst_off events
#   kind=directional  qreq, qresp (us) extra one-way delay, all the run, or
#                     only inside the windows of bursts= if given
#   onoff=load        the windows' events are load_on/load_off instead
#   loss=P            probability of a timeout record
function ts(v,  s) { s = int(v / 1e9); return sprintf("%d%09d", bsec + s, v - s * 1e9) }
function noise(a) { return int((rand() - 0.5) * 2 * a) }
function inwin(x,  i) { for (i = 1; i <= nb; i++) if (x >= on[i] && x <= off[i]) return 1; return 0 }
function event(x, e, d) { printf "%s\t%d\t%s\t%s\n", ts(x), idx, e, d >> ev }
BEGIN {
	srand(seed ? seed : 1)
	bsec = start - 200			# times are kept as ns after bsec
	x0 = 200e9
	q = q * 1000; qreq = qreq * 1000; qresp = qresp * 1000
	nb = split(bursts, B, ",")
	for (i = 1; i <= nb; i++) { split(B[i], bw, "-"); on[i] = bw[1] * 1e9; off[i] = bw[2] * 1e9 }
	print "#ntpx-record 1"
	print "#tool synthrec 0 (test mock)"
	print "#endpoint udp://127.0.0.1:123"
	print "#clock realtime"
	print "#fields seq t1 t2 t3 t4 delay off2 status"
	event(x0, "run_start", kind)
	if (onoff == "") onoff = "burst"
	for (i = 1; i <= nb; i++) { event(x0 + on[i], onoff "_on", "synthetic"); event(x0 + off[i], onoff "_off", "") }
	th0 = th * 1000
	for (k = 1; k <= n; k++) {
		x = (k - 1) * ms * 1e6
		r1 = x0 + x + noise(200000) + 300000
		dreq = 40000 + noise(5000) + int(rand() < 0.02 ? rand() * 80000 : 0)
		dresp = 40000 + noise(5000)
		proc = 8000 + noise(1000)
		th = th0 + noise(3000)
		if (kind == "bursts" && inwin(x)) { dreq += int(q * (0.5 + rand() / 2)); dresp += int(q / 5 * rand()) }
		if (kind == "directional" && (nb == 0 || inwin(x))) { dreq += int(qreq * (0.8 + rand() * 0.4)); dresp += int(qresp * (0.8 + rand() * 0.4)) }
		th = int(th)
		t1 = r1 - th; t2 = r1 + dreq; t3 = t2 + proc; t4 = t3 + dresp - th
		if (rand() < loss + 0) {
			printf "%d %s - - - - - timeout\n", k, ts(t1)
			continue
		}
		d = (t4 - t1) - (t3 - t2); o2 = (t2 - t1) + (t3 - t4)
		printf "%d %s %s %s %s %d %d ok\n", k, ts(t1), ts(t2), ts(t3), ts(t4), d, o2
	}
	event(x0 + n * ms * 1e6, "run_end", "")
}
