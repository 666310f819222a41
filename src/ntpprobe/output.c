/* SPDX-License-Identifier: ISC */
/*
 * What ntpprobe writes: the record header and one record per exchange on
 * stdout (doc/ntpx-record.5), with true2 from a sim: clock, the
 * discipline's columns and the stamp columns; and the summary on stderr.
 * Every write is checked (lib/out.h): a closed pipe ends the run as its
 * end would, a full disk with the error instead of the summary.
 */
#include <errno.h>
#include <stdio.h>

#include "clock.h"
#include "discipline.h"
#include "hist.h"
#include "opt.h"
#include "out.h"
#include "record.h"
#include "stamp.h"
#include "transport.h"
#include "ntpprobe.h"

/* The header; returns p->out, as the first write left it. */
int probe_write_header(struct probe *p)
{
	char fields[512];

	snprintf(fields, sizeof(fields), "%s%s%s%s", RECORD_BASE_FIELDS,
		 p->truth ? " true2" : "", p->disc ? " " DISCIPLINE_FIELDS : "",
		 p->stamping ? " " STAMP_FIELDS : "");
	p->out = OUT_OK;
	if (record_write_header(stdout, "ntpprobe", p->cfg->ep.url, clock_name(p->clk), fields))
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

/*
 * Counts and writes one record.  Returns -1 when the run must end: the
 * discipline failed (p->failed), or the output did (p->out, lib/out.h).
 */
int probe_emit(struct probe *p, struct probe_out *o)
{
	struct record_exchange *x = &o->x;
	char line[768];
	int len;

	/* --xleave: an interleaved reply whose transmit stamp never came
	   (the next exchange failed or the run ended). */
	if (x->status == RECORD_OK && x->have != RECORD_HAVE_ALL)
		x->status = RECORD_TIMEOUT;
	p->counts[x->status]++;
	if (x->status == RECORD_OK)
		hist_add(p->delays, record_delay(x->t));
	len = record_format(line, sizeof(line), x);
	if (p->truth && o->has_true2 && x->have == RECORD_HAVE_ALL)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %lld",
				(long long)o->true2);
	else if (p->truth)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " -");
	if (p->disc) {
		struct discipline_out d;
		char err[256];
		int ok = x->status == RECORD_OK && x->have == RECORD_HAVE_ALL;

		if (discipline_sample(p->disc, ok ? RECORD_OK : x->status == RECORD_OK ?
				      RECORD_ERROR : x->status,
				      ok ? record_off2(x->t) : 0, ok ? record_delay(x->t) : 0,
				      &d, err, sizeof(err))) {
			ntpx_err("%s", err);
			p->failed = 1;
			return -1;
		}
		line[len++] = ' ';
		len += discipline_format(line + len, sizeof(line) - (size_t)len, &d);
	}
	if (p->stamping)
		stamp_format(line + len, sizeof(line) - (size_t)len, &o->s);
	/* A closed pipe stops the run as its end would; a full disk ends it
	   with the error instead of the summary (lib/out.h). */
	if (printf("%s\n", line) < 0)
		p->out = out_failed("standard output", errno);
	else
		p->out = out_flush(stdout, "standard output");
	return p->out == OUT_OK ? 0 : -1;
}

void probe_summary(struct probe *p)
{
	uint64_t lost = p->counts[RECORD_TIMEOUT] + p->counts[RECORD_DROPPED];
	char med[32] = "-", ctr[1024];
	int i;

	/* From the histogram: within 0.39% (hist.h), in constant memory. */
	if (p->delays->n)
		snprintf(med, sizeof(med), "%.3f us", hist_median(p->delays) / 1e3);
	fprintf(stderr, "%s: sent %llu, ok %llu, lost %llu", ntpx_prog,
		(unsigned long long)p->sent, (unsigned long long)p->counts[RECORD_OK],
		(unsigned long long)lost);
	for (i = 0; i < RECORD_NSTATUS; i++)
		if (i != RECORD_OK && i != RECORD_TIMEOUT && i != RECORD_DROPPED && p->counts[i])
			fprintf(stderr, ", %s %llu", record_status_name(i),
				(unsigned long long)p->counts[i]);
	if (p->late)
		fprintf(stderr, ", late %llu", (unsigned long long)p->late);
	if (p->cfg->xleave)
		fprintf(stderr, ", interleaved %llu", (unsigned long long)p->interleaved);
	fprintf(stderr, ", median delay %s\n", med);
	transport_counters(p->t, ctr, sizeof(ctr));
	if (ctr[0])
		fprintf(stderr, "%s: transport %s\n", ntpx_prog, ctr);
}
