/* SPDX-License-Identifier: ISC */
/*
 * What ntpreflect writes: the server-side log (--log, one line per
 * datagram, answered or not, once its send stamps have come: sent.c) and
 * the counts on stderr at exit.  A log that cannot be written ends the
 * server: quietly when its reader went away, with the error otherwise
 * (lib/out.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "clock.h"
#include "opt.h"
#include "out.h"
#include "record.h"
#include "stamp.h"
#include "transport.h"
#include "xleave.h"
#include "ntpreflect.h"

static void put_stamp(FILE *f, const struct xleave_ef *e, int i)
{
	if (e->have & 1u << i)
		fprintf(f, " %lld", (long long)e->at[i]);
	else
		fputs(" -", f);
}

/*
 * The log line of @e, whose stamps have come or will not, and the log's
 * state after it (r->out): nothing once the log has failed.
 */
void reflect_log_line(struct reflector *r, const struct reflect_sent *e)
{
	char peer[128];
	const struct xleave_ef *x = &e->st;

	if (!r->log || r->out != OUT_OK)
		return;
	transport_addr_str(r->t, &e->peer, peer, sizeof(peer));
	fprintf(r->log, "%llu", (unsigned long long)e->seq);
	put_stamp(r->log, x, XEF_T2);
	put_stamp(r->log, x, XEF_T3);
	put_stamp(r->log, x, XEF_T2K);
	put_stamp(r->log, x, XEF_T2H);
	put_stamp(r->log, x, XEF_T3Q);
	put_stamp(r->log, x, XEF_T3K);
	put_stamp(r->log, x, XEF_T3H);
	if (e->version >= 0)
		fprintf(r->log, " %s %s %d %s", e->mode, peer, e->version, e->status);
	else
		fprintf(r->log, " - %s - %s", peer, e->status);
	if (r->nts) {
		if (e->nts_open >= 0)
			fprintf(r->log, " %lld %lld", (long long)e->nts_open, (long long)e->nts_seal);
		else
			fputs(" - -", r->log);
	}
	fputc('\n', r->log);
	/* A log that cannot be written ends the server: quietly
	   when its reader went away, with the error otherwise. */
	r->out = out_flush(r->log, r->logname);
}

/* --log: opens it and writes its header, or dies. */
void reflect_log_open(struct reflector *r)
{
	const char *path = r->cfg->logpath;

	r->log = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!r->log)
		ntpx_die(NTPX_EXIT_FAIL, "cannot open log '%s': %s", path, strerror(errno));
	r->logname = r->log == stdout ? "standard output" : path;
	if (record_write_header(r->log, "ntpreflect", r->cfg->ep.url, clock_name(r->clk),
				r->nts ? "seq t2 t3 t2k t2h t3q t3k t3h mode peer version status nts_open nts_seal"
					: "seq t2 t3 t2k t2h t3q t3k t3h mode peer version status"))
		r->out = out_failed(r->logname, errno);
	if (r->out == OUT_OK) {
		const char *src[STAMP_NCOLS] = {
			[STAMP_T2K] = transport_stamp_source(r->t, 0, TRANSPORT_LAYER_K),
			[STAMP_T2H] = transport_stamp_source(r->t, 0, TRANSPORT_LAYER_H),
			[STAMP_T3Q] = transport_stamp_source(r->t, 1, TRANSPORT_LAYER_Q),
			[STAMP_T3K] = transport_stamp_source(r->t, 1, TRANSPORT_LAYER_K),
			[STAMP_T3H] = transport_stamp_source(r->t, 1, TRANSPORT_LAYER_H),
		};

		if (stamp_write_sources(r->log, src))
			r->out = out_failed(r->logname, errno);
	}
	/* The header in one write, as each log line after it (reflect_log_line
	   flushes each): a reader sees a line whole or not at all, and one
	   that leaves after the header leaves the server running until the
	   next line meets the closed pipe. */
	if (r->out == OUT_OK)
		r->out = out_flush(r->log, r->logname);
}

/* At exit: the log closed; returns r->out as it leaves it (lib/out.h). */
int reflect_log_close(struct reflector *r)
{
	if (r->log && r->out == OUT_OK)
		r->out = out_close(r->log, r->logname);
	else if (r->log && r->log != stdout)
		fclose(r->log);
	return r->out;
}

/* The counts of what was answered and ignored, on stderr. */
void reflect_summary(const struct reflector *r)
{
	char ctr[1024];
	int i;

	fprintf(stderr, "%s: answered %llu", ntpx_prog, (unsigned long long)r->answered);
	for (i = 1; i < V_NVERDICT; i++)
		if (r->verdicts[i])
			fprintf(stderr, ", %s %llu", reflect_verdict_names[i],
				(unsigned long long)r->verdicts[i]);
	if (r->dropped)
		fprintf(stderr, ", dropped %llu", (unsigned long long)r->dropped);
	if (r->left)
		fprintf(stderr, ", left %llu", (unsigned long long)r->left);
	if (r->rl && ratelimit_evictions(r->rl))
		fprintf(stderr, ", ratelimit evictions %llu",
			(unsigned long long)ratelimit_evictions(r->rl));
	if (r->send_errors)
		fprintf(stderr, ", send errors %llu", (unsigned long long)r->send_errors);
	if (r->interleaved)
		fprintf(stderr, ", interleaved %llu", (unsigned long long)r->interleaved);
	if (r->nts)
		fprintf(stderr, ", nts-ke %llu, nts-ke failed %llu, nts-ke refused %llu",
			(unsigned long long)__atomic_load_n(&r->ke_ok, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&r->ke_failed, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&r->ke_refused, __ATOMIC_RELAXED));
	if (xleave_table_evictions(r->xt))
		fprintf(stderr, ", client slots taken %llu",
			(unsigned long long)xleave_table_evictions(r->xt));
	fputc('\n', stderr);
	transport_counters(r->t, ctr, sizeof(ctr));
	if (ctr[0])
		fprintf(stderr, "%s: transport %s\n", ntpx_prog, ctr);
}
