/* SPDX-License-Identifier: ISC */
/*
 * offsetfit - fits offset(t) = a + b t to the ok exchanges of a record
 * stream and summarises what is left: drift, residuals, round-trip time.
 *
 * t is seconds since the first T1 in the input; offset is off2 / 2.
 * While the client runs free its offset drifts with the frequency error of
 * the two oscillators (b); the residual is what the fitted line does not
 * explain: the short-term noise of the estimator (doc/design.md, Estimation).
 *
 * Every record's delay and off2 must reproduce the T1..T4 arithmetic
 * exactly; a record that does not is malformed input, like any other, and
 * ends the run with an error naming the file and line before anything is
 * printed.
 *
 * When the records carry true2 (a sim: clock's ground truth, ntpprobe
 * --clock sim:PATH) on every ok record, the summary adds the estimator's
 * error against truth: bias, RMS and p99 of (measured - true offset), and
 * the fitted drift against the true offset's own slope.
 *
 * --stability brings a series (offset, residual, error) onto the grid of
 * the nominal interval and computes lib/stability.c's statistics over
 * octaves of tau; --percentiles gives the distribution of offset and
 * delay.  Both are documented in doc/offsetfit.1.
 *
 * Memory: 20 bytes per ok record (28 with true2): t and offset as doubles, the delay as a
 * float (exact to the nanosecond below 16.7 ms, to 6e-8 of itself above:
 * far below what a quantile of delays can tell).  The quantiles are taken
 * by selection in place, in arrays that the fit no longer needs, so
 * nothing else grows with the input.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opt.h"
#include "out.h"
#include "exchange.h"
#include "record.h"
#include "stability.h"
#include "stats.h"

enum mode { M_SUMMARY, M_JSON, M_RESIDUALS, M_CDF_RTT, M_CDF_RESID, M_CHECK,
	    M_STABILITY, M_PERCENTILES };

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
};

/* File scope: the arrays stay reachable until exit, which frees them. */
static struct series in;

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] [FILE...]\n"
	       "Fit offset(t) = a + b*t by least squares over the ok records of FILEs\n"
	       "(standard input by default) and print a summary as 'key value' lines.\n\n"
	       "      --json            the summary as one JSON object\n"
	       "      --residuals       one line per ok record: t (s), residual (us), delay (us)\n"
	       "      --cdf rtt|residual  value (us) and cumulative fraction, for gnuplot\n"
	       "      --check           verify every record's delay/off2 arithmetic and\n"
	       "                        print how many were checked\n"
	       "      --stability       ADEV, MDEV, TDEV, MTIE, TIE-RMS per octave of tau\n"
	       "      --series LIST     --stability's series: offset,residual,error\n"
	       "                        (default: each the input has)\n"
	       "      --tau0 DUR        the nominal interval (default: the median spacing)\n"
	       "      --percentiles     distribution of offset and delay\n"
	       "                        (--json: as JSON, with --stability too)\n"
	       "  -h, --help            this help\n"
	       "      --version         print the version\n", opt_prog);
}

static int grow(struct series *s)
{
	/*
	 * Doubling through realloc: glibc moves large blocks with mremap, so
	 * growth copies nothing and only touched pages count as memory.
	 */
	size_t cap = s->cap ? s->cap * 2 : 4096;
	double *t = realloc(s->t, cap * sizeof(double));
	float *d;

	if (!t)
		return -1;
	s->t = t;
	t = realloc(s->off, cap * sizeof(double));
	if (!t)
		return -1;
	s->off = t;
	d = realloc(s->delay, cap * sizeof(float));
	if (!d)
		return -1;
	s->delay = d;
	if (s->truth) {
		t = realloc(s->truth, cap * sizeof(double));
		if (!t)
			return -1;
		s->truth = t;
	}
	s->cap = cap;
	return 0;
}

/* The first true2 column: from now on the series keeps the truth. */
static int want_truth(struct series *s)
{
	size_t i;

	if (s->truth || !s->cap)
		return 0;
	s->truth = malloc(s->cap * sizeof(double));
	if (!s->truth)
		return -1;
	for (i = 0; i < s->n; i++)
		s->truth[i] = NAN;
	return 0;
}

/* What offsetfit reads, in the order of the checks (lib/exchange.h). */
enum { C_SEQ, C_T1, C_T2, C_T3, C_T4, C_DELAY, C_OFF2, C_STATUS, C_TRUE2 };

static const struct exchange_col cols[] = {
	[C_SEQ] = { "seq", EXCHANGE_SEQ, 0 },
	[C_T1] = { "t1", EXCHANGE_T1, 0 },
	[C_T2] = { "t2", EXCHANGE_T2, 0 },
	[C_T3] = { "t3", EXCHANGE_T3, 0 },
	[C_T4] = { "t4", EXCHANGE_T4, 0 },
	[C_DELAY] = { "delay", EXCHANGE_DELAY, 0 },
	[C_OFF2] = { "off2", EXCHANGE_OFF2, 0 },
	[C_STATUS] = { "status", EXCHANGE_STATUS, 0 },
	[C_TRUE2] = { "true2", EXCHANGE_INT, EXCHANGE_OK_ONLY },	/* optional */
};

static const struct exchange_spec spec = {
	cols, (int)(sizeof(cols) / sizeof(cols[0])), "ok record without all of T1..T4"
};

/* Reads one input; returns 0 or -1 with the error printed. */
static int read_input(int fd, const char *name, struct series *s)
{
	struct exchange_reader xr;
	int rc;

	if (exchange_reader_init(&xr, fd, name, &spec)) {
		ntpx_err("out of memory");
		return -1;
	}
	while ((rc = exchange_next(&xr)) == 1) {
		const struct record_exchange *x = &xr.x;

		s->status[x->status]++;
		if ((x->have & 1) && !s->have_t0) {
			s->t0 = x->t[0];
			s->have_t0 = 1;
		}
		if (x->status != RECORD_OK)
			continue;
		if ((s->n == s->cap && grow(s)) ||
		    (xr.idx[C_TRUE2] >= 0 && want_truth(s))) {
			ntpx_err("out of memory after %zu records", s->n);
			exchange_reader_free(&xr);
			return -1;
		}
		s->t[s->n] = (double)(x->t[0] - s->t0) * 1e-9;
		s->off[s->n] = (double)xr.v[C_OFF2] / 2;
		s->delay[s->n] = (float)xr.v[C_DELAY];
		if (s->truth)
			s->truth[s->n] = NAN;
		if (xr.vhave & (1u << C_TRUE2)) {
			s->truth[s->n] = (double)xr.v[C_TRUE2] / 2;
			s->ntruth++;
		}
		s->n++;
	}
	s->records += xr.records;
	s->checked += xr.checked;
	if (rc < 0)
		ntpx_err("%s", exchange_err(&xr));
	exchange_reader_free(&xr);
	return rc < 0 ? -1 : 0;
}

#define STDOUT_NAME	"standard output"

/* The exit status once the output is written (lib/out.h). */
static int finish(void)
{
	return out_exit_code(out_flush(stdout, STDOUT_NAME));
}

/* A line that could not be written ends the output at once. */
static int print_cdf(double *v, size_t n)
{
	size_t i;

	stats_sort(v, n);
	if (printf("#fields value_us fraction\n") < 0)
		return out_exit_code(out_failed(STDOUT_NAME, errno));
	for (i = 0; i < n; i++)
		if (printf("%.3f %.6f\n", v[i] / 1e3, (double)(i + 1) / (double)n) < 0)
			return out_exit_code(out_failed(STDOUT_NAME, errno));
	return finish();
}

/*
 * The distribution of offset and delay: the percentiles ntpviz shows,
 * the 90% and 98% ranges between them, and the moments.  sd is the
 * sample standard deviation (n - 1); skewness is the moment coefficient
 * m3 / m2^(3/2).  The offsets are reordered.
 */
struct dist {
	double q[7];		/* min, 1, 5, 50, 95, 99, max */
	double mean, sd, skew;
};

static void dist_of(double *v, size_t n, struct dist *d)
{
	static const double ps[7] = { 0, 0.01, 0.05, 0.5, 0.95, 0.99, 1 };
	double m2 = 0, m3 = 0;
	size_t i;

	d->mean = 0;
	for (i = 0; i < n; i++)
		d->mean += v[i];
	d->mean /= (double)n;
	for (i = 0; i < n; i++) {
		double e = v[i] - d->mean;

		m2 += e * e;
		m3 += e * e * e;
	}
	d->sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
	m2 /= (double)n;
	m3 /= (double)n;
	d->skew = m2 > 0 ? m3 / pow(m2, 1.5) : 0;
	stats_quantiles(v, n, ps, d->q, 7);
}

static int print_percentiles(int json)
{
	static const char *const key[7] = { "min", "p1", "p5", "p50", "p95", "p99", "max" };
	struct dist d[2];
	size_t i;
	int s, k;

	dist_of(in.off, in.n, &d[0]);
	/* The offsets are spent: their array takes the delays. */
	for (i = 0; i < in.n; i++)
		in.off[i] = in.delay[i];
	dist_of(in.off, in.n, &d[1]);
	if (!json)
		printf("#n %zu\n#fields series min_us p1_us p5_us p50_us p95_us p99_us max_us "
		       "range90_us range98_us mean_us sd_us skew\n", in.n);
	else
		printf("{\"n\":%zu", in.n);
	for (s = 0; s < 2; s++) {
		const char *name = s ? "delay" : "offset";

		if (json)
			printf(",\"%s\":{", name);
		else
			printf("%s", name);
		for (k = 0; k < 7; k++)
			if (json)
				printf("%s\"%s_us\":%.3f", k ? "," : "", key[k], d[s].q[k] / 1e3);
			else
				printf(" %.3f", d[s].q[k] / 1e3);
		if (json)
			printf(",\"range90_us\":%.3f,\"range98_us\":%.3f,\"mean_us\":%.3f,"
			       "\"sd_us\":%.3f,\"skew\":%.4f}", (d[s].q[4] - d[s].q[2]) / 1e3,
			       (d[s].q[5] - d[s].q[1]) / 1e3, d[s].mean / 1e3, d[s].sd / 1e3,
			       d[s].skew);
		else
			printf(" %.3f %.3f %.3f %.3f %.4f\n", (d[s].q[4] - d[s].q[2]) / 1e3,
			       (d[s].q[5] - d[s].q[1]) / 1e3, d[s].mean / 1e3, d[s].sd / 1e3,
			       d[s].skew);
	}
	if (json)
		printf("}\n");
	return NTPX_EXIT_OK;
}

/*
 * The series --stability analyses, each a phase in ns per ok record.  A
 * stamp layer's offset (kernel or hardware stamps, when records carry
 * them) is one more row here and one more case in series_fill().
 */
enum series_id { S_OFFSET, S_RESIDUAL, S_ERROR, S_NSERIES };

static const struct {
	const char *name, *what;
} series_tab[S_NSERIES] = {
	[S_OFFSET] = { "offset", "the measured offset off2/2" },
	[S_RESIDUAL] = { "residual", "the offset less the fitted drift a + b t" },
	[S_ERROR] = { "error", "the measured less the true offset (true2/2)" },
};

/* "offset,error" into a bit set; -1 for a name not in series_tab. */
static int series_parse(const char *list, unsigned *set)
{
	char buf[256], *save = NULL, *w;
	int i;

	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	*set = 0;
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < S_NSERIES && strcmp(w, series_tab[i].name); i++)
			;
		if (i == S_NSERIES)
			return -1;
		*set |= 1u << i;
	}
	return *set ? 0 : -1;
}

/*
 * The series' phase, in.n values: the offsets themselves, or made in
 * v[]; NULL when the input lacks the series.
 */
static const double *series_fill(enum series_id id, const struct linfit *fit, double *v)
{
	size_t i;

	switch (id) {
	case S_OFFSET:
		return in.off;
	case S_RESIDUAL:
		for (i = 0; i < in.n; i++)
			v[i] = in.off[i] - (fit->a + fit->b * in.t[i]);
		return v;
	case S_ERROR:
		if (!in.truth || in.ntruth != in.n)
			return NULL;
		for (i = 0; i < in.n; i++)
			v[i] = in.off[i] - in.truth[i];
		return v;
	case S_NSERIES:
		break;
	}
	return NULL;
}

/*
 * A value with @prec digits (after the point, or in the mantissa when
 * @expo) or, when a statistic has no term, "-" (null in JSON).
 */
static void put(int json, const char *key, int prec, int expo, double v)
{
	if (json)
		printf(",\"%s\":", key);
	else
		putchar(' ');
	if (isnan(v))
		fputs(json ? "null" : "-", stdout);
	else if (expo)
		printf("%.*e", prec, v);
	else
		printf("%.*f", prec, v);
}

static int print_stability(const struct linfit *fit, unsigned want, double tau0, int json)
{
	struct stab_point p[STAB_MAX_POINTS];
	struct stab_grid g;
	uint64_t lost = in.status[RECORD_TIMEOUT] + in.status[RECORD_DROPPED] +
			in.status[RECORD_REFUSED];
	double *v = NULL;
	const double *x;
	int id, k, n, first = 1;

	if (!tau0)
		tau0 = stab_tau0(in.t, in.n);
	if (!(tau0 > 0))
		ntpx_die(NTPX_EXIT_FAIL, "no two ok records apart in time: no interval");
	if (!want)
		want = (1u << S_OFFSET) | (1u << S_RESIDUAL) |
		       (in.truth && in.ntruth == in.n ? 1u << S_ERROR : 0);
	/* Every series is checked before anything is printed. */
	if ((want & (1u << S_ERROR)) && !(in.truth && in.ntruth == in.n))
		ntpx_die(NTPX_EXIT_FAIL, "series error: the records lack true2");
	/* Only a derived series needs an array of its own. */
	if (want & ~(1u << S_OFFSET)) {
		v = malloc(in.n * sizeof(double));
		if (!v)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory for %zu records", in.n);
	}
	for (id = 0; id < S_NSERIES; id++) {
		if (!(want & (1u << id)))
			continue;
		x = series_fill(id, fit, v);
		if (!x)
			ntpx_die(NTPX_EXIT_FAIL, "series %s: the records lack true2",
				 series_tab[id].name);
		if (stab_grid_build(&g, in.t, x, in.n, tau0))
			ntpx_die(NTPX_EXIT_FAIL, errno == ENOMEM ? "out of memory for the grid" :
				 "tau0 %.9g s: the records span far more slots than they fill",
				 tau0);
		n = stab_octaves(g.x, g.slots, tau0, p, STAB_MAX_POINTS);
		if (n < 0)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory for %zu slots", g.slots);
		if (json) {
			if (first)
				printf("{\"tau0_s\":%.9g,\"slots\":%zu,\"samples\":%zu,"
				       "\"gaps\":%zu,\"collisions\":%zu,\"lost\":%llu,"
				       "\"series\":[", tau0, g.slots, g.samples, g.gaps,
				       g.collisions, (unsigned long long)lost);
			printf("%s{\"name\":\"%s\",\"points\":[", first ? "" : ",",
			       series_tab[id].name);
		} else {
			printf("%s#series %s: %s\n", first ? "" : "\n", series_tab[id].name,
			       series_tab[id].what);
			printf("#grid tau0_s %.9g slots %zu samples %zu gaps %zu collisions %zu "
			       "lost %llu\n", tau0, g.slots, g.samples, g.gaps, g.collisions,
			       (unsigned long long)lost);
			printf("#fields tau_s n adev mdev tdev_ns mtie_ns tie_rms_ns\n");
		}
		for (k = 0; k < n; k++) {
			if (json)
				printf("%s{\"tau_s\":%.9g,\"n\":%llu,\"n_mdev\":%llu,"
				       "\"n_tie\":%llu,\"n_mtie\":%llu", k ? "," : "", p[k].tau_s,
				       (unsigned long long)p[k].n_adev,
				       (unsigned long long)p[k].n_mdev,
				       (unsigned long long)p[k].n_tie,
				       (unsigned long long)p[k].n_mtie);
			else
				printf("%.9g %llu", p[k].tau_s, (unsigned long long)p[k].n_adev);
			put(json, "adev", 4, 1, p[k].adev);
			put(json, "mdev", 4, 1, p[k].mdev);
			put(json, "tdev_ns", 4, 0, p[k].tdev_ns);
			put(json, "mtie_ns", 1, 0, p[k].mtie_ns);
			put(json, "tie_rms_ns", 4, 0, p[k].tie_rms_ns);
			if (json)
				putchar('}');
			else
				putchar('\n');
		}
		if (json)
			printf("]}");
		stab_grid_free(&g);
		first = 0;
	}
	if (json)
		printf("]}\n");
	free(v);
	return NTPX_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "residuals", no_argument, NULL, 'r' },
		{ "cdf", required_argument, NULL, 'C' },
		{ "check", no_argument, NULL, 'k' },
		{ "stability", no_argument, NULL, 'S' },
		{ "series", required_argument, NULL, 's' },
		{ "tau0", required_argument, NULL, 'T' },
		{ "percentiles", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static const double ps[] = { 0.5, 0.99, 0.999 };
	enum mode mode = M_SUMMARY;
	struct linfit fit;
	double rq[3], dq[3], dmin, reject, bias = 0, erms = 0, ep99 = 0;
	char se[32] = "-", se_json[32];
	struct linfit tfit;
	int truth = 0, json = 0;
	unsigned series = 0;
	int64_t tau0_ns = 0;
	uint64_t lost, rejected;
	size_t i;
	int c;

	opt_init(argv[0]);
	out_init();
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		enum mode m;

		switch (c) {
		case 'j':
			json = 1;
			continue;
		case 'S':
			m = M_STABILITY;
			break;
		case 'P':
			m = M_PERCENTILES;
			break;
		case 's':
			if (series_parse(optarg, &series))
				opt_usage_error("bad --series '%s' (offset, residual, error)", optarg);
			continue;
		case 'T':
			if (opt_duration(optarg, 0, &tau0_ns) || tau0_ns <= 0)
				opt_usage_error("bad --tau0 '%s'", optarg);
			continue;
		case 'r':
			m = M_RESIDUALS;
			break;
		case 'C':
			if (strcmp(optarg, "rtt") == 0)
				m = M_CDF_RTT;
			else if (strcmp(optarg, "residual") == 0)
				m = M_CDF_RESID;
			else
				opt_usage_error("bad --cdf '%s' (rtt or residual)", optarg);
			break;
		case 'k':
			m = M_CHECK;
			break;
		default:
			opt_other(c, usage);
		}
		if (mode != M_SUMMARY && mode != m)
			opt_usage_error("--residuals, --cdf, --check, --stability and --percentiles "
					"exclude each other");
		mode = m;
	}
	if (json && mode == M_SUMMARY)
		mode = M_JSON;
	else if (json && mode != M_STABILITY && mode != M_PERCENTILES)
		opt_usage_error("--json goes with the summary, --stability or --percentiles");
	if ((series || tau0_ns) && mode != M_STABILITY)
		opt_usage_error("--series and --tau0 go with --stability");

	if (optind == argc) {
		if (read_input(0, "stdin", &in))
			return NTPX_EXIT_FAIL;
	}
	for (; optind < argc; optind++) {
		const char *path = argv[optind];
		int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", path, strerror(errno));
		if (read_input(fd, fd ? path : "stdin", &in))
			return NTPX_EXIT_FAIL;
		if (fd)
			close(fd);
	}

	if (mode == M_CHECK) {
		printf("checked %llu\n", (unsigned long long)in.checked);
		return finish();
	}
	if (mode == M_CDF_RTT) {
		if (!in.n)
			ntpx_die(NTPX_EXIT_FAIL, "no ok records");
		for (i = 0; i < in.n; i++)
			in.off[i] = in.delay[i];
		return print_cdf(in.off, in.n);
	}
	if (mode == M_PERCENTILES) {
		if (!in.n)
			ntpx_die(NTPX_EXIT_FAIL, "no ok records");
		return print_percentiles(json);
	}
	if (in.n < 2)
		ntpx_die(NTPX_EXIT_FAIL, "%zu ok records: a fit needs at least 2", in.n);
	if (stats_linfit(in.t, in.off, in.n, &fit))
		ntpx_die(NTPX_EXIT_FAIL, "all ok records have the same T1: nothing to fit");

	if (mode == M_RESIDUALS) {
		if (printf("#fields t resid_us delay_us\n") < 0)
			return out_exit_code(out_failed(STDOUT_NAME, errno));
		for (i = 0; i < in.n; i++)
			if (printf("%.9f %.3f %.3f\n", in.t[i],
				   (in.off[i] - (fit.a + fit.b * in.t[i])) / 1e3,
				   in.delay[i] / 1e3) < 0)
				return out_exit_code(out_failed(STDOUT_NAME, errno));
		return finish();
	}
	if (mode == M_STABILITY)
		return print_stability(&fit, series, (double)tau0_ns * 1e-9, json);
	/*
	 * Truth, when every ok record has it: the true offset's slope (fitted
	 * like the measured one), then measured - true replaces the truth.
	 */
	if (in.ntruth == in.n && stats_linfit(in.t, in.truth, in.n, &tfit) == 0) {
		truth = 1;
		for (i = 0; i < in.n; i++) {
			in.truth[i] = in.off[i] - in.truth[i];
			bias += in.truth[i];
		}
		bias /= (double)in.n;
		erms = stats_rms(in.truth, in.n);
		for (i = 0; i < in.n; i++)
			in.truth[i] = fabs(in.truth[i]);
		ep99 = stats_quantile(in.truth, in.n, 0.99);
	}
	/* |residual| replaces t: nothing needs t after this. */
	for (i = 0; i < in.n; i++)
		in.t[i] = fabs(in.off[i] - (fit.a + fit.b * in.t[i]));
	if (mode == M_CDF_RESID) {
		return print_cdf(in.t, in.n);
	}
	stats_quantiles(in.t, in.n, ps, rq, 3);
	/* The offsets are spent: their array takes the delays as doubles. */
	for (i = 0; i < in.n; i++)
		in.off[i] = in.delay[i];
	dmin = stats_min(in.off, in.n);
	stats_quantiles(in.off, in.n, ps, dq, 3);
	lost = in.status[RECORD_TIMEOUT] + in.status[RECORD_DROPPED];
	rejected = in.records - in.n;
	reject = (double)rejected / (double)in.records;

	/* Fewer than three points have no standard error: "-", or JSON's null. */
	if (isfinite(fit.b_se))
		snprintf(se, sizeof(se), "%.6f", fit.b_se / 1e3);
	snprintf(se_json, sizeof(se_json), "%s", isfinite(fit.b_se) ? se : "null");
	if (mode == M_JSON) {
		printf("{\"records\":%llu,\"n\":%zu,\"lost\":%llu,\"rejected\":%llu,"
		       "\"reject_rate\":%.6f,\"a_us\":%.3f,\"b_ppm\":%.6f,\"b_se_ppm\":%s,\"rms_us\":%.3f,"
		       "\"p50_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,"
		       "\"rtt_median_us\":%.3f,\"rtt_p99_us\":%.3f,\"rtt_min_us\":%.3f",
		       (unsigned long long)in.records, in.n, (unsigned long long)lost,
		       (unsigned long long)rejected, reject, fit.a / 1e3, fit.b / 1e3,
		       se_json, fit.rms / 1e3, rq[0] / 1e3, rq[1] / 1e3, rq[2] / 1e3, dq[0] / 1e3,
		       dq[1] / 1e3, dmin / 1e3);
		if (truth)
			printf(",\"true_b_ppm\":%.6f,\"b_err_ppm\":%.6f,\"bias_us\":%.3f,"
			       "\"err_rms_us\":%.3f,\"err_p99_us\":%.3f", tfit.b / 1e3,
			       (fit.b - tfit.b) / 1e3, bias / 1e3, erms / 1e3, ep99 / 1e3);
		printf("}\n");
		return finish();
	}
	printf("records %llu\n", (unsigned long long)in.records);
	printf("n %zu\n", in.n);
	printf("lost %llu\n", (unsigned long long)lost);
	printf("rejected %llu\n", (unsigned long long)rejected);
	printf("reject_rate %.6f\n", reject);
	printf("a_us %.3f\n", fit.a / 1e3);
	/* b is ns of offset per s of time: parts per billion; /1e3 for ppm. */
	printf("b_ppm %.6f\n", fit.b / 1e3);
	printf("b_se_ppm %s\n", se);
	printf("rms_us %.3f\n", fit.rms / 1e3);
	printf("p50_us %.3f\n", rq[0] / 1e3);
	printf("p99_us %.3f\n", rq[1] / 1e3);
	printf("p999_us %.3f\n", rq[2] / 1e3);
	printf("rtt_median_us %.3f\n", dq[0] / 1e3);
	printf("rtt_p99_us %.3f\n", dq[1] / 1e3);
	printf("rtt_min_us %.3f\n", dmin / 1e3);
	if (truth) {
		/* against true2: the true offset's slope, and measured - true */
		printf("true_b_ppm %.6f\n", tfit.b / 1e3);
		printf("b_err_ppm %.6f\n", (fit.b - tfit.b) / 1e3);
		printf("bias_us %.3f\n", bias / 1e3);
		printf("err_rms_us %.3f\n", erms / 1e3);
		printf("err_p99_us %.3f\n", ep99 / 1e3);
	}
	return finish();
}
