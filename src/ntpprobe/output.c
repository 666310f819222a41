/* SPDX-License-Identifier: ISC */
/*
 * What ntpprobe writes: the record header and one record per exchange on
 * stdout (doc/ntpx-record.5), with true2 from a sim: clock, the
 * discipline's columns and the stamp columns; and the summary on stderr.
 * Every write is checked (lib/out.h): a closed pipe ends the run as its
 * end would, a full disk with the error instead of the summary.
 *
 * On a terminal (or with --human) the same exchanges are written for a
 * person instead, as ping writes its lines: seq, offset and delay in
 * microseconds, the server's stratum, refid and leap, the status; and the
 * summary in the same terms on stdout.  With --once, the one exchange is
 * one line, as sntp and ntpdig give it.  The records' bytes are never
 * touched by those paths: a pipe or a file gets exactly what it always
 * got.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "discipline.h"
#include "dist.h"
#include "hist.h"
#include "opt.h"
#include "out.h"
#include "record.h"
#include "stamp.h"
#include "transport.h"
#include "ntpprobe.h"

/* The reference ID as ntpq shows it: four characters at stratum 0 and 1
   (a kiss code, a reference clock), an IPv4 address above. */
static void refid_str(uint8_t stratum, uint32_t refid, char *buf, size_t len)
{
	int i, n = 0;

	if (stratum > 1) {
		snprintf(buf, len, "%u.%u.%u.%u", refid >> 24, refid >> 16 & 0xff,
			 refid >> 8 & 0xff, refid & 0xff);
		return;
	}
	for (i = 3; i >= 0 && n + 1 < (int)len; i--) {
		unsigned char c = (unsigned char)(refid >> (8 * i));

		if (c)
			buf[n++] = c >= 0x20 && c < 0x7f ? (char)c : '.';
	}
	buf[n] = 0;
	if (!n)
		snprintf(buf, len, "-");
}

/* The endpoint, and the address its name resolved to: "URL ADDR" in the
   header of the records, "URL (ADDR)" for a person. */
static void endpoint_str(const struct probe *p, char *buf, size_t len)
{
	const char *res = transport_resolved(p->t);

	if (!res)
		snprintf(buf, len, "%s", p->cfg->ep.url);
	else
		snprintf(buf, len, p->cfg->human || p->cfg->once ? "%s (%s)" : "%s %s",
			 p->cfg->ep.url, res);
}

static int human_header(struct probe *p)
{
	char ep[640];

	endpoint_str(p, ep, sizeof(ep));
	if (printf("ntpprobe %s: one request every %.3f s, timeout %.3f s\n", ep,
		   (double)p->cfg->interval / NTPX_NS_PER_SEC,
		   (double)p->cfg->timeout / NTPX_NS_PER_SEC) < 0)
		return p->out = out_failed("standard output", errno);
	return p->out = out_flush(stdout, "standard output");
}

/* The record's column names, as #fields names them. */
static void fields_str(const struct probe *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", RECORD_BASE_FIELDS,
		 p->truth ? " true2" : "", p->disc ? " " DISCIPLINE_FIELDS : "",
		 p->stamping ? " " STAMP_FIELDS : "", p->nts ? " nts_seal nts_open" : "");
}

/* The header; returns p->out, as the first write left it. */
int probe_write_header(struct probe *p)
{
	char fields[512], ep[640];

	if (p->cfg->once || p->cfg->json)
		return p->out = OUT_OK;
	if (p->cfg->human)
		return human_header(p);
	endpoint_str(p, ep, sizeof(ep));
	fields_str(p, fields, sizeof(fields));
	p->out = OUT_OK;
	if (record_write_header(stdout, "ntpprobe", ep, clock_name(p->clk), fields))
		p->out = out_failed("standard output", errno);
	/* doc/ntpx-record.5: the two hosts of a mesh's directed pair. */
	if (p->out == OUT_OK && p->cfg->pair_client[0] &&
	    printf("#pair %s %s\n", p->cfg->pair_client, p->cfg->pair_server) < 0)
		p->out = out_failed("standard output", errno);
	/* doc/ntpx-record.5: the AEAD, the cookies NTS-KE gave, its server,
	   and the NTP server it named, if any. */
	if (p->out == OUT_OK && p->nts &&
	    printf("#nts aead AEAD_AES_SIV_CMAC_256 cookies %u ke %s%s%s:%s%s%s\n",
		   nts_client_cookies(p->nts), strchr(p->cfg->nts_host, ':') ? "[" : "",
		   p->cfg->nts_host, strchr(p->cfg->nts_host, ':') ? "]" : "", p->cfg->nts_port,
		   p->nts_server[0] ? " server " : "", p->nts_server) < 0)
		p->out = out_failed("standard output", errno);
	if (p->out == OUT_OK && p->stamping) {
		const char *src[STAMP_NCOLS] = {
			[STAMP_T1Q] = transport_stamp_source(p->t, 1, TRANSPORT_LAYER_Q),
			[STAMP_T1K] = transport_stamp_source(p->t, 1, TRANSPORT_LAYER_K),
			[STAMP_T1H] = transport_stamp_source(p->t, 1, TRANSPORT_LAYER_H),
			[STAMP_T4K] = transport_stamp_source(p->t, 0, TRANSPORT_LAYER_K),
			[STAMP_T4H] = transport_stamp_source(p->t, 0, TRANSPORT_LAYER_H),
		};

		if (p->cfg->xleave) {
			src[STAMP_T2K] = src[STAMP_T3Q] = "server:ntpx-ef";
			src[STAMP_T2H] = src[STAMP_T3H] = "server:ntpx-ef";
			src[STAMP_T3K] = "server:ntpx-ef|interleaved-xmt";
		}
		if (stamp_write_sources(stdout, src))
			p->out = out_failed("standard output", errno);
	}
	if (p->out == OUT_OK)
		p->out = out_flush(stdout, "standard output");
	return p->out;
}

/* The ok exchanges' offsets and delays, for the summary. */
static void tally(struct probe *p, const struct record_exchange *x)
{
	int64_t d = record_delay(x->t), off2 = record_off2(x->t);
	double off = (double)off2 / 2, dev;
	uint64_t n = p->counts[RECORD_OK];

	dist_add(p->delays, d);
	dist_add(p->offsets, off2);
	dev = off - p->off_mean;
	p->off_mean += dev / (double)n;
	p->off_m2 += dev * (off - p->off_mean);
}

/* One exchange for a person: seq, offset and delay (us), the server. */
static int human_line(struct probe *p, const struct probe_out *o)
{
	const struct record_exchange *x = &o->x;
	char line[256], refid[16];
	int len;

	len = snprintf(line, sizeof(line), "seq=%llu", (unsigned long long)x->seq);
	if (x->have == RECORD_HAVE_ALL)
		len += snprintf(line + len, sizeof(line) - (size_t)len,
				" offset=%+.3f us delay=%.3f us",
				(double)record_off2(x->t) / 2e3, (double)record_delay(x->t) / 1e3);
	if (o->replied) {
		refid_str(o->stratum, o->refid, refid, sizeof(refid));
		len += snprintf(line + len, sizeof(line) - (size_t)len,
				" stratum=%u refid=%s leap=%u", o->stratum, refid, o->leap);
	}
	snprintf(line + len, sizeof(line) - (size_t)len, " %s", record_status_name(x->status));
	if (printf("%s\n", line) < 0)
		return p->out = out_failed("standard output", errno);
	return p->out = out_flush(stdout, "standard output");
}

/* NTP short format (16.16 s) in ns. */
static double short_ns(uint32_t v)
{
	return ntpx_sec_to_ns((double)v) / 65536.0;
}

/*
 * --once: the exchange as sntp and ntpdig give it, offset +/- its error
 * bound: the true offset lies within half the round trip of the measured
 * one, if the server tells the time, widened by the server's own root
 * distance (RFC 5905: root delay / 2 + root dispersion).  An exchange
 * that is not ok is one line on stderr instead, saying what came.
 */
static int once_line(struct probe *p, const struct probe_out *o)
{
	const struct record_exchange *x = &o->x;
	char ep[640], refid[16];
	double bound;

	endpoint_str(p, ep, sizeof(ep));
	if (x->status == RECORD_TIMEOUT) {
		ntpx_err("%s: no reply within %.3f s", ep,
			 (double)p->cfg->timeout / NTPX_NS_PER_SEC);
		return OUT_OK;
	}
	if (x->status == RECORD_KOD) {
		ntpx_err("%s: kiss code %s", ep, p->kiss[0] ? p->kiss : "?");
		return OUT_OK;
	}
	if (x->status == RECORD_UNSYNCED) {
		ntpx_err("%s: the server says it is unsynchronised (leap %u, stratum %u)", ep,
			 o->leap, o->stratum);
		return OUT_OK;
	}
	if (x->status != RECORD_OK) {
		ntpx_err("%s: %s", ep, record_status_name(x->status));
		return OUT_OK;
	}
	bound = (double)record_delay(x->t) / 2 + short_ns(o->root_delay) / 2 +
		short_ns(o->root_disp);
	refid_str(o->stratum, o->refid, refid, sizeof(refid));
	if (printf("%s offset %+.3f us +/- %.3f us, delay %.3f us, stratum %u, refid %s, leap %u\n",
		   ep, (double)record_off2(x->t) / 2e3, bound / 1e3,
		   (double)record_delay(x->t) / 1e3, o->stratum, refid, o->leap) < 0)
		return p->out = out_failed("standard output", errno);
	return p->out = out_flush(stdout, "standard output");
}

/*
 * A value of a record as JSON, as ntpx-convert --json writes it: '-' is
 * null, an integer a double holds exactly (|v| <= 2^53 - 1) a number, a
 * larger one (a timestamp in ns) a string of its digits, anything else
 * (the status) a string (no character of a record needs escaping).
 */
static int json_val(char *buf, size_t len, const char *s)
{
	int64_t v;

	if (strcmp(s, "-") == 0)
		return snprintf(buf, len, "null");
	if (record_parse_i64(s, &v) == 1 && v <= 9007199254740991LL && v >= -9007199254740991LL)
		return snprintf(buf, len, "%s", s);
	return snprintf(buf, len, "\"%s\"", s);
}

/*
 * --json: the exchange as one object, for a script's one-shot check:
 * the record's columns by name, then what a person asks of it (offset,
 * delay and --once's error bound in us, for an ok exchange) and the
 * server's stratum, refid and leap when it replied.
 */
static int json_line(struct probe *p, const struct probe_out *o, char *line)
{
	const struct record_exchange *x = &o->x;
	char fields[512], out[2048], *f, *v, *fs, *vs, refid[16];
	size_t n = 0;

	fields_str(p, fields, sizeof(fields));
	for (f = strtok_r(fields, " ", &fs), v = strtok_r(line, " ", &vs); f && v;
	     f = strtok_r(NULL, " ", &fs), v = strtok_r(NULL, " ", &vs)) {
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s\"%s\":", n ? "," : "{", f);
		if (n < sizeof(out))
			n += (size_t)json_val(out + n, sizeof(out) - n, v);
		if (n >= sizeof(out))
			n = sizeof(out) - 1;
	}
	if (x->status == RECORD_OK && x->have == RECORD_HAVE_ALL)
		n += (size_t)snprintf(out + n, sizeof(out) - n,
				      ",\"offset_us\":%.3f,\"delay_us\":%.3f,\"error_us\":%.3f",
				      (double)record_off2(x->t) / 2e3, (double)record_delay(x->t) / 1e3,
				      ((double)record_delay(x->t) / 2 + short_ns(o->root_delay) / 2 +
				       short_ns(o->root_disp)) / 1e3);
	if (n < sizeof(out) && o->replied) {
		refid_str(o->stratum, o->refid, refid, sizeof(refid));
		for (f = refid; *f; f++)
			if (*f == '"' || *f == '\\')
				*f = '.';
		n += (size_t)snprintf(out + n, sizeof(out) - n,
				      ",\"stratum\":%u,\"refid\":\"%s\",\"leap\":%u", o->stratum,
				      refid, o->leap);
	}
	if (printf("%s}\n", out) < 0)
		return p->out = out_failed("standard output", errno);
	return p->out = out_flush(stdout, "standard output");
}

/*
 * The bound the truth never breaks: a two-way exchange whose stamps
 * bracket the real events has T2 - T1 >= the true offset >= T3 - T4, so
 * true2 lies within off2 +/- delay while the clocks keep their offset
 * across the exchange.  Clocks of different frequencies move it: 40 ppm
 * apart over a round trip of 75 ms (a loaded host's) is 3 us.  So each
 * leg is held to the truth at its own two instants, which is causality
 * in true time: the server's receive no earlier than the client's send,
 * the client's receive no earlier than the server's send.  A reading T
 * was taken at the reference instant T - e, where e is the clock's error
 * then (e at T - e(T) is that to well under a nanosecond).  A sim clock
 * rounds each reading to the nanosecond: TRUTH_SLACK_NS.  A record that
 * breaks the bound at some layer has a stamp matched to the wrong
 * datagram or a misread clock (issue 32, section 4).
 */
#define TRUTH_SLACK_NS	2

static const char *const layer_names[PROBE_NLAYERS] = { "user", "client-kernel", "kernel" };

/* The error of clock @c (0 for one without truth) when it read @t. */
static int64_t error_at(struct clock *c, int64_t t)
{
	int64_t e = 0;

	if (c && clock_true_error(c, t, &e) == 0 && clock_true_error(c, t - e, &e) == 0)
		return e;
	return 0;
}

static void truth_bound(struct probe *p, const struct probe_out *o)
{
	const int64_t *v = o->s.v;
	struct clock *cc = p->client_truth ? p->clk : NULL, *sc = p->srv_clk;
	int64_t t[PROBE_NLAYERS][4] = {
		{ o->x.t[0], o->x.t[1], o->x.t[2], o->x.t[3] },
		{ v[STAMP_T1K], o->x.t[1], o->x.t[2], v[STAMP_T4K] },
		{ v[STAMP_T1K], v[STAMP_T2K], v[STAMP_T3K], v[STAMP_T4K] },
	};
	int64_t fwd, back;
	int l, i;

	for (l = 0; l < PROBE_NLAYERS; l++) {
		for (i = 0; i < 4 && t[l][i] != STAMP_NONE; i++)
			;
		if (i < 4)
			continue;
		p->bound_n[l]++;
		/* each leg in true time: its arrival less its departure */
		fwd = (t[l][1] - error_at(sc, t[l][1])) - (t[l][0] - error_at(cc, t[l][0]));
		back = (t[l][3] - error_at(cc, t[l][3])) - (t[l][2] - error_at(sc, t[l][2]));
		if (fwd >= -TRUTH_SLACK_NS && back >= -TRUTH_SLACK_NS)
			continue;
		if (!p->bound_broken[0] && !p->bound_broken[1] && !p->bound_broken[2])
			ntpx_err("record %llu: at the %s layer, the %s, %lld ns before it in true time "
				 "(the true offset lies outside T3 - T4 .. T2 - T1)",
				 (unsigned long long)o->x.seq, layer_names[l],
				 fwd < -TRUTH_SLACK_NS ? "server's receive stamp is of an instant "
				 "before the client's send" : "client's receive stamp is of an instant "
				 "before the server's send", (long long)-(fwd < -TRUTH_SLACK_NS ? fwd : back));
		p->bound_broken[l]++;
	}
}

/* "truth bound broken: user 0/N, ..." for the summary. */
static const char *bound_str(const struct probe *p, char *buf, size_t len)
{
	int l, n = snprintf(buf, len, "truth bound (off2/2 +/- delay/2) broken:");

	for (l = 0; l < PROBE_NLAYERS && n > 0 && (size_t)n < len; l++)
		n += snprintf(buf + n, len - (size_t)n, "%s %s %llu/%llu", l ? "," : "",
			      layer_names[l], (unsigned long long)p->bound_broken[l],
			      (unsigned long long)p->bound_n[l]);
	return buf;
}

/* Counts one record for the summary. */
void probe_count(struct probe *p, const struct probe_out *o)
{
	const struct record_exchange *x = &o->x;

	p->counts[x->status]++;
	if (x->status == RECORD_OK)
		tally(p, x);
	if (x->status == RECORD_OK && o->has_true2 && x->have == RECORD_HAVE_ALL)
		truth_bound(p, o);
	if (o->replied) {
		p->server = (struct probe_server){
			.known = 1, .leap = o->leap, .stratum = o->stratum, .refid = o->refid,
			.root_delay = o->root_delay, .root_disp = o->root_disp,
		};
	}
}

/*
 * Counts and writes one record, the discipline's columns as the
 * exchange loop left them in @o (steer.c).  Returns -1 when the run
 * must end: the output failed (p->out, lib/out.h).
 */
int probe_emit(struct probe *p, const struct probe_out *o)
{
	const struct record_exchange *x = &o->x;
	char line[768];
	int len;

	probe_count(p, o);
	len = record_format(line, sizeof(line), x);
	if (p->truth && o->has_true2 && x->have == RECORD_HAVE_ALL)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %lld",
				(long long)o->true2);
	else if (p->truth)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " -");
	if (p->disc) {
		line[len++] = ' ';
		len += discipline_format(line + len, sizeof(line) - (size_t)len, &o->disc);
	}
	if (p->stamping)
		len += stamp_format(line + len, sizeof(line) - (size_t)len, &o->s);
	if (p->nts) {
		char a[24] = "-", b[24] = "-";

		if (o->nts_seal >= 0)
			snprintf(a, sizeof(a), "%lld", (long long)o->nts_seal);
		if (o->nts_open >= 0)
			snprintf(b, sizeof(b), "%lld", (long long)o->nts_open);
		snprintf(line + len, sizeof(line) - (size_t)len, " %s %s", a, b);
	}
	if (p->cfg->json)
		return json_line(p, o, line) == OUT_OK ? 0 : -1;
	if (p->cfg->once)
		return once_line(p, o) == OUT_OK ? 0 : -1;
	if (p->cfg->human)
		return human_line(p, o) == OUT_OK ? 0 : -1;
	/* A closed pipe stops the run as its end would; a full disk ends it
	   with the error instead of the summary (lib/out.h). */
	if (printf("%s\n", line) < 0)
		p->out = out_failed("standard output", errno);
	else
		p->out = out_flush(stdout, "standard output");
	return p->out == OUT_OK ? 0 : -1;
}

/*
 * "#reset seq N": the peer was lost and found again before exchange @seq
 * (transport_peer_reset()).  0, or -1 when the output failed.
 */
int probe_write_reset(struct probe *p, uint64_t seq)
{
	if (printf("#reset seq %llu\n", (unsigned long long)seq) < 0)
		p->out = out_failed("standard output", errno);
	return p->out == OUT_OK ? 0 : -1;
}

/* NTP short format (16.16 s) in us. */
static double short_us(uint32_t v)
{
	return short_ns(v) / 1e3;
}

static const char *us_str(char *buf, size_t len, int sign, double ns, double err)
{
	dist_us_str(buf, len, sign, ns, err);
	return buf;
}

/* The @q-quantile of @d, scaled by @scale (off2 to offset: 0.5), in us. */
static const char *q_str(char *buf, size_t len, int sign, struct dist *d, double q,
			 double scale)
{
	double err, v = dist_quantile(d, q, &err);

	return us_str(buf, len, sign, v * scale, err * scale);
}

/* Where the quantiles are the histogram's (dist.h), the summary says so. */
static const char *inexact_str(const struct probe *p, char *buf, size_t len)
{
	buf[0] = 0;
	if (!dist_exact(p->offsets) || !dist_exact(p->delays))
		snprintf(buf, len, " (quantiles past %u exchanges: within %.2f%%)",
			 DIST_EXACT_MAX, 100.0 / (1 << HIST_BITS));
	return buf;
}

/*
 * The ok exchanges' offsets: median, min, max, their interquartile range
 * (the middle half's width: robust, one late reply does not move it) and
 * standard deviation (every exchange, outliers included), in us.
 */
static void offsets_str(const struct probe *p, char *buf, size_t len)
{
	uint64_t n = p->counts[RECORD_OK];
	double e1, e3, q1 = dist_quantile(p->offsets, 0.25, &e1) / 2;
	double q3 = dist_quantile(p->offsets, 0.75, &e3) / 2;
	char med[32], lo[32], hi[32], iqr[32], sd[32];

	snprintf(buf, len, "offset median %s, min %s, max %s, iqr %s, sd %s",
		 q_str(med, sizeof(med), 1, p->offsets, 0.5, 0.5),
		 us_str(lo, sizeof(lo), 1, (double)dist_min(p->offsets) / 2, 0),
		 us_str(hi, sizeof(hi), 1, (double)dist_max(p->offsets) / 2, 0),
		 us_str(iqr, sizeof(iqr), 0, q3 - q1, (e1 + e3) / 2),
		 us_str(sd, sizeof(sd), 0, n > 1 ? sqrt(p->off_m2 / (double)(n - 1)) : 0.0, 0));
}

static void human_summary(struct probe *p, const char *counts)
{
	char ep[640], offs[256], refid[16], bnd[160];
	uint64_t n = p->counts[RECORD_OK];
	int bad = 0;

	endpoint_str(p, ep, sizeof(ep));
	bad |= printf("--- %s ---\n%s\n", ep, counts) < 0;
	if (n) {
		char lo[32], med[32], p99[32], hi[32], note[64];

		offsets_str(p, offs, sizeof(offs));
		bad |= printf("%s\ndelay min %s, median %s, p99 %s, max %s%s\n", offs,
			      us_str(lo, sizeof(lo), 0, (double)dist_min(p->delays), 0),
			      q_str(med, sizeof(med), 0, p->delays, 0.5, 1),
			      q_str(p99, sizeof(p99), 0, p->delays, 0.99, 1),
			      us_str(hi, sizeof(hi), 0, (double)dist_max(p->delays), 0),
			      inexact_str(p, note, sizeof(note))) < 0;
	}
	if (p->truth)
		bad |= printf("%s\n", bound_str(p, bnd, sizeof(bnd))) < 0;
	if (p->server.known) {
		refid_str(p->server.stratum, p->server.refid, refid, sizeof(refid));
		bad |= printf("server stratum %u, refid %s, leap %u, root delay %.3f us, "
			      "root dispersion %.3f us\n", p->server.stratum, refid,
			      p->server.leap, short_us(p->server.root_delay),
			      short_us(p->server.root_disp)) < 0;
	}
	if (bad)
		p->out = out_failed("standard output", errno);
	else
		p->out = out_flush(stdout, "standard output");
}

void probe_summary(struct probe *p)
{
	uint64_t lost = p->counts[RECORD_TIMEOUT] + p->counts[RECORD_DROPPED];
	char med[32] = "-", ctr[1024], counts[512], offs[160] = "", refid[16], q[32], note[64];
	int i, n;

	if (dist_count(p->delays))
		q_str(med, sizeof(med), 0, p->delays, 0.5, 1);
	n = snprintf(counts, sizeof(counts), "sent %llu, ok %llu, lost %llu",
		     (unsigned long long)p->sent, (unsigned long long)p->counts[RECORD_OK],
		     (unsigned long long)lost);
	for (i = 0; i < RECORD_NSTATUS; i++)
		if (i != RECORD_OK && i != RECORD_TIMEOUT && i != RECORD_DROPPED && p->counts[i])
			n += snprintf(counts + n, sizeof(counts) - (size_t)n, ", %s %llu",
				      record_status_name(i), (unsigned long long)p->counts[i]);
	if (p->late)
		n += snprintf(counts + n, sizeof(counts) - (size_t)n, ", late %llu",
			      (unsigned long long)p->late);
	if (p->cfg->xleave)
		n += snprintf(counts + n, sizeof(counts) - (size_t)n, ", interleaved %llu",
			      (unsigned long long)p->interleaved);
	if (p->nts)
		snprintf(counts + n, sizeof(counts) - (size_t)n, ", nts-bogus %llu, nts-nak %llu, nts-ke %llu",
			 (unsigned long long)p->nts_bogus, (unsigned long long)p->nts_naks,
			 (unsigned long long)p->nts_ke_runs);
	if (p->cfg->once) {
		/* Its line was the summary. */
	} else if (p->cfg->human && p->out == OUT_OK) {
		human_summary(p, counts);
	} else if (!p->cfg->human) {
		if (dist_count(p->delays))
			snprintf(offs, sizeof(offs), ", median offset %s%s",
				 q_str(q, sizeof(q), 1, p->offsets, 0.5, 0.5),
				 inexact_str(p, note, sizeof(note)));
		fprintf(stderr, "%s: %s, median delay %s%s\n", ntpx_prog, counts, med, offs);
		if (p->truth)
			fprintf(stderr, "%s: %s\n", ntpx_prog, bound_str(p, ctr, sizeof(ctr)));
		if (p->server.known) {
			refid_str(p->server.stratum, p->server.refid, refid, sizeof(refid));
			fprintf(stderr, "%s: server stratum %u, refid %s, leap %u, root delay %.3f us, "
				"root dispersion %.3f us\n", ntpx_prog, p->server.stratum, refid,
				p->server.leap, short_us(p->server.root_delay),
				short_us(p->server.root_disp));
		}
	}
	transport_counters(p->t, ctr, sizeof(ctr));
	if (ctr[0])
		fprintf(stderr, "%s: transport %s\n", ntpx_prog, ctr);
}

int probe_exit_status(const struct probe *p)
{
	if (p->failed || p->kissed_off || p->device_gone || p->out == OUT_FAILED)
		return NTPX_EXIT_FAIL;
	/* The reader went away (EPIPE): it stopped the run, as `| head`
	   does, which is no verdict on the server (lib/out.h). */
	if (p->out == OUT_CLOSED)
		return NTPX_EXIT_OK;
	return p->counts[RECORD_OK] ? NTPX_EXIT_OK : NTPX_EXIT_FAIL;
}
