/* SPDX-License-Identifier: ISC */
/*
 * stages.c - where an exchange's time goes, stage by stage.
 *
 * A stage runs between two stamps of one exchange.  The client's and the
 * server's own stages (send stack, receive stack, turnaround) have both
 * ends on one host's clock and are exact on any pair of hosts.  The two
 * one-way paths (c2r t1k -> t2k, r2c t3k -> t4k) have their ends on two
 * clocks: each contains the clocks' offset, only their sum (the round trip
 * at that layer) is exact.  They are labelled offset-bearing unless
 * --same-clock says that both ends read one clock (loopback, the lab's
 * namespaces on one host).
 */
#include <math.h>
#include <stdio.h>

#include "record.h"
#include "stats.h"
#include "ntpstages.h"
#include "util_private.h"

static const struct stage {
	const char *name;
	enum st from, to;
	int oneway;		/* ends on two hosts' clocks */
	int part;		/* a part of the stage above it */
} stages[] = {
	{ "client_send", S_T1, S_T1K, 0, 0 },
	{ "c_to_qdisc", S_T1, S_T1Q, 0, 1 },
	{ "c_qdisc", S_T1Q, S_T1K, 0, 1 },
	{ "c_nic_tx", S_T1K, S_T1H, 0, 1 },
	{ "c2r", S_T1K, S_T2K, 1, 0 },
	{ "c2r_wire", S_T1H, S_T2H, 1, 1 },
	{ "s_nic_rx", S_T2H, S_T2K, 0, 1 },
	{ "server_recv", S_T2K, S_T2, 0, 0 },
	{ "turnaround", S_T2, S_T3, 0, 0 },
	{ "server_send", S_T3, S_T3K, 0, 0 },
	{ "s_to_qdisc", S_T3, S_T3Q, 0, 1 },
	{ "s_qdisc", S_T3Q, S_T3K, 0, 1 },
	{ "s_nic_tx", S_T3K, S_T3H, 0, 1 },
	{ "r2c", S_T3K, S_T4K, 1, 0 },
	{ "r2c_wire", S_T3H, S_T4H, 1, 1 },
	{ "c_nic_rx", S_T4H, S_T4K, 0, 1 },
	{ "client_recv", S_T4K, S_T4, 0, 0 },
};

#define NSTAGES	ARRAY_SIZE(stages)

static int64_t stage_of(const int64_t *x, const struct stage *s)
{
	if (x[s->from] == NONE || x[s->to] == NONE)
		return NONE;
	/* Modulo 2^64, as record_delay(): stamps are whatever a file holds. */
	return (int64_t)((uint64_t)x[s->to] - (uint64_t)x[s->from]);
}

/* RMS of successive differences over sqrt 2: the SD of white noise. */
double jitter(const double *v, size_t n)
{
	double s = 0;
	size_t i;

	if (n < 2)
		return NAN;
	for (i = 1; i < n; i++)
		s += (v[i] - v[i - 1]) * (v[i] - v[i - 1]);
	return sqrt(s / (double)(n - 1) / 2);
}

void print_us(double ns)
{
	if (isnan(ns))
		printf(" %10s", "-");
	else
		printf(" %10.3f", ns / 1e3);
}

/* -e: one line per exchange, every stage in ns. */
void stages_each(const struct input *in)
{
	char fields[512];
	size_t i, k, n = 0;

	n += (size_t)snprintf(fields + n, sizeof(fields) - n, "seq");
	for (k = 0; k < NSTAGES; k++)
		n += (size_t)snprintf(fields + n, sizeof(fields) - n, " %s", stages[k].name);
	record_write_header(stdout, "ntpstages", NULL, NULL, fields);
	for (i = 0; i < in->n; i++) {
		printf("%llu", (unsigned long long)in->seq[i]);
		for (k = 0; k < NSTAGES; k++) {
			int64_t v = stage_of(in->x[i], &stages[k]);

			if (v == NONE)
				printf(" -");
			else
				printf(" %lld", (long long)v);
		}
		printf("\n");
	}
}

size_t stage_count(void)
{
	return NSTAGES;
}

const char *stage_name(size_t k)
{
	return stages[k].name;
}

/* Stage @k's median, p99, jitter and sum over the exchanges that have it. */
int stage_stats(const struct input *in, size_t k, double *v, struct stage_figures *f)
{
	const struct stage *s = &stages[k];
	double q[2], ps[2] = { 0.5, 0.99 };
	size_t i, n;

	f->sum = 0;
	for (i = n = 0; i < in->n; i++) {
		int64_t d = stage_of(in->x[i], s);

		if (d != NONE) {
			v[n++] = (double)d;
			f->sum += (double)d;
		}
	}
	f->n = n;
	if (!n)
		return -1;
	f->jitter = jitter(v, n);
	stats_quantiles(v, n, ps, q, 2);
	f->median = q[0];
	f->p99 = q[1];
	return 0;
}

/* The table: each stage's median, p99 and jitter over the exchanges that have it. */
void stages_print(const struct input *in, int same, double *v)
{
	size_t k;

	printf("%-16s %-10s %7s %10s %10s %10s\n", "#stage", "from-to", "n", "median_us",
	       "p99_us", "jitter_us");
	for (k = 0; k < NSTAGES; k++) {
		const struct stage *s = &stages[k];
		struct stage_figures f;
		char name[40], span[16];

		if (stage_stats(in, k, v, &f))
			continue;
		snprintf(name, sizeof(name), "%s%s%s", s->part ? "  " : "", s->name,
			 s->oneway && !same ? "*" : "");
		snprintf(span, sizeof(span), "%s-%s", st_name(s->from), st_name(s->to));
		printf("%-16s %-10s %7zu", name, span, f.n);
		print_us(f.median);
		print_us(f.p99);
		print_us(f.jitter);
		printf("\n");
	}
}
