/* SPDX-License-Identifier: ISC */
/*
 * What ntpreflect writes: the server-side log (--log, one line per
 * datagram, answered or not) and the counts on stderr at exit.  The
 * server's stamps of a reply come after it went, so log lines wait in a
 * short queue (r->q) until they have come; the same stamps go into the
 * client's slot for its next, interleaved, reply.  A log that cannot be
 * written ends the server: quietly when its reader went away, with the
 * error otherwise (lib/out.h).
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
 * Takes the head of the queue: its stamps into the client's slot, its
 * line into the log.
 */
static void sent_finish(struct reflector *r, int64_t deadline)
{
	struct sent *e = &r->q[r->head];

	if (e->want) {
		struct transport_stamps ts;

		transport_tx_stamps(r->t, e->txid, r->clk, &ts, deadline);
		reflect_ef_tx(&e->st, &ts);
		/* The slot may have gone to another client meanwhile. */
		if (e->c && e->c->tx_wanted && e->c->tx_id == e->txid &&
		    e->c->addrlen == e->keylen && memcmp(e->c->addr, e->key, e->keylen) == 0) {
			e->c->last = e->st;
			e->c->tx_wanted = 0;
		}
	}
	if (r->log && r->out == OUT_OK) {
		char peer[128];
		const struct xleave_ef *x = &e->st;

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
			fprintf(r->log, " %s %s %d %s\n", e->mode, peer, e->version, e->status);
		else
			fprintf(r->log, " - %s - %s\n", peer, e->status);
		/* A log that cannot be written ends the server: quietly
		   when its reader went away, with the error otherwise. */
		r->out = out_flush(r->log, r->logname);
	}
	r->head = (r->head + 1) % SENT_QUEUE;
	r->n--;
}

/* Finishes what is complete, or everything (@all, at exit). */
void sent_flush(struct reflector *r, int all)
{
	while (r->n) {
		struct sent *e = &r->q[r->head];

		if (!all && e->want && r->n < SENT_QUEUE / 2) {
			struct transport_stamps ts;

			/* Not yet: its stamps may still be on their way. */
			if (!transport_tx_stamps(r->t, e->txid, r->clk, &ts, 0))
				return;
		}
		sent_finish(r, all ? clock_monotonic_ns() + 10000000 : 0);
	}
}

struct sent *sent_push(struct reflector *r)
{
	struct sent *e;

	if (r->n == SENT_QUEUE)
		sent_finish(r, 0);
	e = &r->q[(r->head + r->n++) % SENT_QUEUE];
	memset(e, 0, sizeof(*e));
	return e;
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
				"seq t2 t3 t2k t2h t3q t3k t3h mode peer version status"))
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
	/* The header in one write, as each log line after it (sent_finish
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
			fprintf(stderr, ", %s %llu", verdict_names[i],
				(unsigned long long)r->verdicts[i]);
	if (r->dropped)
		fprintf(stderr, ", dropped %llu", (unsigned long long)r->dropped);
	if (r->rl && ratelimit_evictions(r->rl))
		fprintf(stderr, ", ratelimit evictions %llu",
			(unsigned long long)ratelimit_evictions(r->rl));
	if (r->send_errors)
		fprintf(stderr, ", send errors %llu", (unsigned long long)r->send_errors);
	if (r->interleaved)
		fprintf(stderr, ", interleaved %llu", (unsigned long long)r->interleaved);
	if (xleave_table_evictions(r->xt))
		fprintf(stderr, ", client slots taken %llu",
			(unsigned long long)xleave_table_evictions(r->xt));
	fputc('\n', stderr);
	transport_counters(r->t, ctr, sizeof(ctr));
	if (ctr[0])
		fprintf(stderr, "%s: transport %s\n", ntpx_prog, ctr);
}
