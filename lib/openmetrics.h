/* SPDX-License-Identifier: ISC */
/*
 * openmetrics.h - summaries in the Prometheus text exposition format, for
 * node_exporter's textfile collector (offsetfit --openmetrics, ntpstages
 * --openmetrics): each metric family's HELP and TYPE once, then its
 * samples, every sample labelled with the run's endpoint and transport.
 * Values in base units (seconds, ratios), as Prometheus names them.
 * Writes go to stdout unchecked: the caller's out_flush() finds a failure.
 */
#ifndef NTPX_OPENMETRICS_H
#define NTPX_OPENMETRICS_H

#include <stddef.h>

struct om {
	char labels[1200];	/* endpoint="...",transport="..." or "" */
};

/*
 * The labels of @endpoint, a URL ("" or NULL: none): endpoint= the URL,
 * transport= its scheme; backslash, double quote and newline escaped.
 */
void om_init(struct om *m, const char *endpoint);

/* "# HELP NAME HELP" and "# TYPE NAME TYPE" (gauge, summary). */
void om_family(const char *name, const char *type, const char *help);

/* One sample of NAME: the run's labels, then @extra ("quantile=\"0.5\""
   or NULL), and @v. */
void om_sample(const struct om *m, const char *name, const char *extra, double v);

/* A gauge of one sample: its family and the sample. */
void om_gauge(const struct om *m, const char *name, const char *help, double v);

/* @in with backslash, double quote and newline escaped, into @out. */
void om_escape(const char *in, char *out, size_t cap);

#endif
