/* SPDX-License-Identifier: ISC */
/*
 * ntpstages.h - what the parts of ntpstages share (src/ntpstages/):
 * main.c reads the options and the inputs and prints one of the reports;
 * input.c reads the records (lib/exchange.h) into struct input; stages.c
 * has the stages between two stamps (the table and -e's lines); layers.c
 * the offset and delay from each layer of stamps; metrics.c both in the
 * Prometheus text format (--openmetrics).
 */
#ifndef NTPX_NTPSTAGES_H
#define NTPX_NTPSTAGES_H

#include <stddef.h>
#include <stdint.h>

#include "exchange.h"
#include "opt_units.h"

/* The stamps of one exchange, in the order of enum st. */
enum st {
	S_T1, S_T1Q, S_T1K, S_T1H, S_T2H, S_T2K, S_T2,
	S_T3, S_T3Q, S_T3K, S_T3H, S_T4H, S_T4K, S_T4, S_N
};

/* A stamp without a value. */
#define NONE	EXCHANGE_NONE

/* The ok exchanges of every input. */
struct input {
	size_t n, cap;
	int64_t (*x)[S_N];	/* their stamps, ns, or NONE */
	uint64_t *seq;
	uint64_t records;	/* data lines read, ok or not */
	char endpoint[256];	/* the first #endpoint's URL, or "" */
	unsigned cut;		/* inputs whose cut-short last line was dropped */
};

struct stage_figures {
	size_t n;
	double median, p99, jitter, sum;	/* ns */
};

struct layer_figures {
	size_t n;
	double offset, delay;		/* medians, ns */
	double rms, p999, jitter;	/* of the residuals about the fitted line, ns */
};

/* input.c */
const char *st_name(enum st s);			/* "t1", "t1q", ... */
int input_read(int fd, const char *name, struct input *in);	/* 0, or -1 printed */

/* stages.c; @v: in->n doubles to work in */
void stages_print(const struct input *in, int same_clock, double *v);
void stages_each(const struct input *in);
size_t stage_count(void);
const char *stage_name(size_t k);
int stage_stats(const struct input *in, size_t k, double *v, struct stage_figures *f);
double jitter(const double *v, size_t n);	/* ns: RMS of successive differences / sqrt 2 */
void print_us(double ns);			/* " %10.3f" in us, or "-" for NAN */

/* layers.c; @v, @w, @t: in->n doubles each to work in */
void layers_print(const struct input *in, double *v, double *w, double *t);
size_t layer_count(void);
const char *layer_name(size_t k);
int layer_stats(const struct input *in, size_t k, double *v, double *w, double *t,
		struct layer_figures *f);
double layer_host_share(const struct layer_figures *user, const struct layer_figures *f);

/* metrics.c: --openmetrics; returns what out_flush() says */
int metrics_print(const struct input *in, int same_clock, double *v, double *w, double *t);

#endif
