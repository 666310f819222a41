/* SPDX-License-Identifier: ISC */
/*
 * offsetfit.h - what the parts of offsetfit share (src/offsetfit/):
 * main.c reads the inputs and starts one output; options.c reads the
 * options; input.c reads the records (lib/exchange.h) into struct series;
 * summary.c is the fit's summary (key-value lines or JSON, with truth
 * when the records carry it); output.c the plain outputs (--residuals,
 * --cdf) and the end of every output; percentiles.c --percentiles;
 * stability.c --stability.
 *
 * The outputs may reorder or overwrite the series' arrays (quantiles are
 * taken in place): each runs once, last.
 */
#ifndef NTPX_OFFSETFIT_H
#define NTPX_OFFSETFIT_H

#include <stddef.h>
#include <stdint.h>

#include "opt_units.h"
#include "record.h"
#include "stats.h"

/* The ok records of every input, and counts of all of them. */
struct series {
	double *t;		/* s since t0 */
	double *off;		/* ns, off2 / 2 */
	float *delay;		/* ns */
	double *truth;		/* ns, true2 / 2 (NAN: none); only once a true2 column shows */
	size_t n, cap, ntruth;
	int64_t t0;
	int have_t0;
	uint64_t records, checked;
	uint64_t status[RECORD_NSTATUS];
	char endpoint[256];	/* the first #endpoint's URL, or "" */
	unsigned cut;		/* inputs whose cut-short last line was dropped */
	/*
	 * Steps (input.c): where the clock was stepped, or the server is a
	 * new one, between two ok records: a #reset line, or a jump that the
	 * records' own delays cannot explain.  The fit is of the last
	 * segment: series_last_segment() moves it to the front.
	 */
	unsigned steps;		/* steps seen */
	size_t seg;		/* the index of the last segment's first ok record */
	size_t before;		/* ok records before it, left out (after series_last_segment) */
	int reset;		/* a #reset line since the last ok record */
};

/*
 * How fast a clock's offset can move between two exchanges without a
 * step, in ppm: 500 ppm, the most a kernel or a sim: clock slews, plus
 * 500 ppm, NTP's frequency tolerance (RFC 5905's MAXFREQ).
 */
#define STEP_RATE_PPM	1000.0

/* What to print (options.c). */
enum fit_mode { M_SUMMARY, M_RESIDUALS, M_CDF_RTT, M_CDF_RESID, M_CHECK, M_STABILITY,
		M_PERCENTILES };

#define SUMMARY_OPENMETRICS	2

/* mask.c: --mask, a limit on MTIE or TDEV over tau. */
enum mask_stat { MASK_MTIE, MASK_TDEV };

struct mask_seg {
	double lo, hi;		/* tau in (lo, hi] s */
	double a, b;		/* limit = a tau + b ns */
};

struct mask {
	const char *name;	/* the built-in name or the file */
	enum mask_stat stat;
	const struct mask_seg *seg;	/* built in: segments, */
	size_t nseg;
	double (*pt)[2];	/* from a file: (tau s, limit ns), ascending */
	size_t npt;
};

/* A name or [mtie:|tdev:]FILE into out[] (exit 2 if bad); how many masks (1 or 2). */
int mask_parse(const char *spec, struct mask out[2]);
/* The limit at @tau (ns); NAN where the mask says nothing. */
double mask_limit(const struct mask *m, double tau);

/* --stability's choices beyond the series (stability.c). */
#define STAB_MAX_COLS	16
struct stab_config {
	int cols[STAB_MAX_COLS];	/* --dev: column ids in order; ncols 0: the default five */
	int ncols;
	double conf;		/* --ci: the confidence (0: no intervals) */
	double max_tau_s;	/* --max-tau; 0: a third of the run */
	int taus;		/* --taus: enum stab_taus (lib/stability.h) */
	double *tau_s;		/* --taus LIST: ascending, distinct, s */
	size_t ntau;
	struct mask mask[2];	/* --mask */
	int nmask;
};

struct fit_config {
	enum fit_mode mode;
	int json;		/* the summary, --stability or --percentiles as JSON;
				   SUMMARY_OPENMETRICS: --openmetrics */
	unsigned series;	/* --stability's series (stability.c); 0: each the input has */
	double tau0_s;		/* --tau0; 0: the median spacing */
	struct stab_config stab;	/* --dev, --ci, --max-tau, --mask */
	int across_steps;	/* --across-steps: every ok record, not the last segment */
};

/* options.c: the options into @cfg (exit 2 for a bad one); the first input's index. */
int fit_options(int argc, char **argv, struct fit_config *cfg);

/* input.c: one input into @s; 0, or -1 with the error printed. */
int series_read(int fd, const char *name, struct series *s);
/* Keeps the last segment only (after the last step), its t from 0. */
void series_last_segment(struct series *s);

/* Each output returns the exit status (lib/out.h once written). */

/* output.c */
#define STDOUT_NAME	"standard output"
int output_finish(void);		/* flush, and the exit status */
int output_residuals(const struct series *s, const struct linfit *fit);
int output_cdf_rtt(struct series *s);
int output_cdf_residual(struct series *s, const struct linfit *fit);

/* summary.c */
int summary_print(struct series *s, const struct linfit *fit, int json);

/* percentiles.c */
int percentiles_print(struct series *s, int json);

/* stability.c: --series's names into a bit set (-1: not one); the output */
int stability_series_parse(const char *list, unsigned *set);
/* --dev's names into sc->cols (-1: a name not known) */
/* --taus: octave, decade, all or a list of durations into sc (-1: not one) */
int stability_taus_parse(const char *arg, struct stab_config *sc);
int stability_dev_parse(const char *list, struct stab_config *sc);
int stability_print(const struct series *s, const struct linfit *fit, unsigned want,
		    double tau0_s, int json, const struct stab_config *sc);

#endif
