/* SPDX-License-Identifier: ISC */
/*
 * openmetrics.h - summaries in the Prometheus text exposition format, for
 * node_exporter's textfile collector (offsetfit --openmetrics, ntpstages
 * --openmetrics): each metric family's HELP and TYPE once, then its
 * samples, every sample labelled with the run's endpoint and transport.
 * Values in base units (seconds, ratios), as Prometheus names them.
 * Writes go to the stream given to om_init(), and each is checked: the
 * first failure is kept, nothing more is written after it, and om_end()
 * returns it, for the tool to print its one line (lib/out.h).
 */
#ifndef NTPX_OPENMETRICS_H
#define NTPX_OPENMETRICS_H

#include <stddef.h>
#include <stdio.h>

struct om {
	FILE *f;		/* where it goes */
	int err;		/* errno of the first failed write, 0 while none */
	char labels[1200];	/* endpoint="...",transport="..." or "" */
};

/*
 * An exposition to @f, with the labels of @endpoint, a URL ("" or NULL:
 * none): endpoint= the URL, transport= its scheme; backslash, double
 * quote and newline escaped.
 */
void om_init(struct om *m, FILE *f, const char *endpoint);

/* "# HELP NAME HELP" and "# TYPE NAME TYPE" (gauge, summary). */
void om_family(struct om *m, const char *name, const char *type, const char *help);

/* One sample of NAME: the run's labels, then @extra ("quantile=\"0.5\""
   or NULL), and @v. */
void om_sample(struct om *m, const char *name, const char *extra, double v);

/* A gauge of one sample: its family and the sample. */
void om_gauge(struct om *m, const char *name, const char *help, double v);

/*
 * The end of the exposition: flushes the stream.  0 when everything went
 * out, or -errno of the first write that failed (-EPIPE for a reader gone).
 */
int om_end(struct om *m);

/* @in with backslash, double quote and newline escaped, into @out. */
void om_escape(const char *in, char *out, size_t cap);

#endif
