/* SPDX-License-Identifier: ISC */
/*
 * ntpstages - where an exchange's time goes: per-stage figures from the
 * per-layer stamps of ntpprobe's records (doc/ntpx-record.5), and the
 * offset and delay computed from each stamp layer with their noise.
 *
 * A stage runs between two stamps of one exchange.  The client's and the
 * server's own stages (send stack, receive stack, turnaround) have both
 * ends on one host's clock and are exact on any pair of hosts.  The two
 * one-way paths (c2r t1k -> t2k, r2c t3k -> t4k) have their ends on two
 * clocks: each contains the clocks' offset, only their sum (the round trip
 * at that layer) is exact.  They are labelled offset-bearing unless
 * --same-clock says that both ends read one clock (loopback, the lab's
 * namespaces on one host).
 *
 * The offset noise by layer: for each of user (t1..t4), kernel (t1k t2k
 * t3k t4k) and hardware (t1h..t4h) stamps, the offset (off2 / 2) is fitted
 * with a line over time (the clocks' drift, as offsetfit does) and the
 * residuals summarised.  If the host stacks' noise is independent of the
 * path's, the user layer's residual variance is the kernel layer's plus
 * the stacks': host_share is that difference as a share of the whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exchange.h"
#include "opt.h"
#include "record.h"
#include "stamp.h"
#include "stats.h"

/* The stamps of one exchange, in the order of enum st. */
enum st {
	S_T1, S_T1Q, S_T1K, S_T1H, S_T2H, S_T2K, S_T2,
	S_T3, S_T3Q, S_T3K, S_T3H, S_T4H, S_T4K, S_T4, S_N
};

static const char *const st_names[S_N] = {
	"t1", "t1q", "t1k", "t1h", "t2h", "t2k", "t2",
	"t3", "t3q", "t3k", "t3h", "t4h", "t4k", "t4",
};

#define NONE	EXCHANGE_NONE

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

#define NSTAGES	(sizeof(stages) / sizeof(stages[0]))

/* The layers whose four stamps give an offset and a delay. */
static const struct layer {
	const char *name;
	enum st t[4];
} layers[] = {
	{ "user", { S_T1, S_T2, S_T3, S_T4 } },
	{ "kernel", { S_T1K, S_T2K, S_T3K, S_T4K } },
	{ "hardware", { S_T1H, S_T2H, S_T3H, S_T4H } },
};

#define NLAYERS	(sizeof(layers) / sizeof(layers[0]))

struct input {
	size_t n, cap;
	int64_t (*x)[S_N];	/* ok exchanges */
	uint64_t *seq;
	uint64_t records;
};

static void usage(void)
{
	printf("usage: %s [options] [FILE...]\n"
	       "Read ntpprobe records (stdin without FILE) with per-layer stamps and\n"
	       "print where each exchange's time went: the client's and the server's\n"
	       "stages, the two one-way paths, and the offset and delay from each stamp\n"
	       "layer with their residual RMS, p99.9 and jitter.\n\n"
	       "  -e, --each           one line per exchange: every stage in ns\n"
	       "  -s, --same-clock     both hosts read one clock (loopback, the lab):\n"
	       "                       the one-way paths are true one-way delays\n"
	       "  -h, --help           this help\n"
	       "      --version        print the version\n", opt_prog);
}

/*
 * What ntpstages reads, in the order of the checks (lib/exchange.h): seq,
 * status, then the stamps in the order of enum st; stamp i is column
 * C_STAMP + i.
 */
#define C_STAMP		2
#define OK_PARTIAL	"an ok record without t1..t4"

static struct exchange_col cols[C_STAMP + S_N] = {
	{ "seq", EXCHANGE_SEQ, 0 },
	{ "status", EXCHANGE_STATUS, 0 },
};

static const struct exchange_spec spec = {
	cols, (int)(sizeof(cols) / sizeof(cols[0])), OK_PARTIAL
};

static void spec_init(void)
{
	int i;

	for (i = 0; i < S_N; i++) {
		cols[C_STAMP + i].name = st_names[i];
		cols[C_STAMP + i].role = i == S_T1 ? EXCHANGE_T1 : i == S_T2 ? EXCHANGE_T2 :
					 i == S_T3 ? EXCHANGE_T3 : i == S_T4 ? EXCHANGE_T4 :
					 EXCHANGE_INT;
	}
}

static int keep(struct input *in, uint64_t seq, const int64_t *x)
{
	if (in->n == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 4096;
		void *a = realloc(in->x, cap * sizeof(*in->x));
		void *b;

		if (!a)
			return -1;
		in->x = a;
		b = realloc(in->seq, cap * sizeof(*in->seq));
		if (!b)
			return -1;
		in->seq = b;
		in->cap = cap;
	}
	memcpy(in->x[in->n], x, sizeof(in->x[0]));
	in->seq[in->n++] = seq;
	return 0;
}

/* Reads one input; returns 0 or -1 with the error printed. */
static int read_input(int fd, const char *name, struct input *in)
{
	struct exchange_reader xr;
	int rc;

	if (exchange_reader_init(&xr, fd, name, &spec)) {
		ntpx_err("out of memory");
		return -1;
	}
	while ((rc = exchange_next(&xr)) == 1) {
		/* A stamp without a value is EXCHANGE_NONE, which is NONE. */
		const int64_t *x = xr.v + C_STAMP;

		if (xr.x.status != RECORD_OK)
			continue;
		/* NONE marks a missing stamp: one of INT64_MIN reads as one too. */
		if (x[S_T1] == NONE || x[S_T2] == NONE || x[S_T3] == NONE || x[S_T4] == NONE) {
			rc = exchange_error(&xr, OK_PARTIAL);
			break;
		}
		if (keep(in, xr.x.seq, x)) {
			rc = exchange_error(&xr, "out of memory");
			break;
		}
	}
	in->records += xr.records;
	if (rc < 0)
		ntpx_err("%s", exchange_err(&xr));
	exchange_reader_free(&xr);
	return rc < 0 ? -1 : 0;
}

static int64_t stage_of(const int64_t *x, const struct stage *s)
{
	if (x[s->from] == NONE || x[s->to] == NONE)
		return NONE;
	return x[s->to] - x[s->from];
}

/* RMS of successive differences over sqrt 2: the SD of white noise. */
static double jitter(const double *v, size_t n)
{
	double s = 0;
	size_t i;

	if (n < 2)
		return NAN;
	for (i = 1; i < n; i++)
		s += (v[i] - v[i - 1]) * (v[i] - v[i - 1]);
	return sqrt(s / (double)(n - 1) / 2);
}

static void print_us(double ns)
{
	if (isnan(ns))
		printf(" %10s", "-");
	else
		printf(" %10.3f", ns / 1e3);
}

static void each(const struct input *in)
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "each", no_argument, NULL, 'e' },
		{ "same-clock", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct input in = { 0 };
	int per_exchange = 0, same = 0, c;
	double *v, *w, *t, var[NLAYERS];
	int have_layer[NLAYERS] = { 0 };
	size_t i, k, n;

	opt_init(argv[0]);
	spec_init();
	while ((c = getopt_long(argc, argv, "esh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			per_exchange = 1;
			break;
		case 's':
			same = 1;
			break;
		case 'h':
			usage();
			return NTPX_EXIT_OK;
		case 'V':
			opt_version();
			return NTPX_EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help'.\n", opt_prog);
			return NTPX_EXIT_USAGE;
		}
	}
	if (optind == argc && read_input(0, "stdin", &in))
		return NTPX_EXIT_FAIL;
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
	if (!in.n)
		ntpx_die(NTPX_EXIT_FAIL, "no ok records");
	if (per_exchange) {
		each(&in);
		goto out;
	}
	v = malloc(in.n * sizeof(*v));
	w = malloc(in.n * sizeof(*w));
	t = malloc(in.n * sizeof(*t));
	if (!v || !w || !t)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");

	printf("# ntpstages: %llu records, %zu ok; clocks: %s\n",
	       (unsigned long long)in.records, in.n,
	       same ? "one clock (one-way paths are true one-way delays)" :
	       "two hosts (one-way paths offset-bearing, marked *; their sum is exact)");
	printf("%-16s %-10s %7s %10s %10s %10s\n", "#stage", "from-to", "n", "median_us",
	       "p99_us", "jitter_us");
	for (k = 0; k < NSTAGES; k++) {
		const struct stage *s = &stages[k];
		double q[2], ps[2] = { 0.5, 0.99 }, j;
		char name[40], span[16];

		for (i = n = 0; i < in.n; i++) {
			int64_t d = stage_of(in.x[i], s);

			if (d != NONE)
				v[n++] = (double)d;
		}
		if (!n)
			continue;
		j = jitter(v, n);
		stats_quantiles(v, n, ps, q, 2);
		snprintf(name, sizeof(name), "%s%s%s", s->part ? "  " : "", s->name,
			 s->oneway && !same ? "*" : "");
		snprintf(span, sizeof(span), "%s-%s", st_names[s->from], st_names[s->to]);
		printf("%-16s %-10s %7zu", name, span, n);
		print_us(q[0]);
		print_us(q[1]);
		print_us(j);
		printf("\n");
	}

	printf("%-16s %7s %10s %10s %10s %10s %10s\n", "#layer", "n", "offset_us", "delay_us",
	       "rms_us", "p99.9_us", "jitter_us");
	for (k = 0; k < NLAYERS; k++) {
		const struct layer *l = &layers[k];
		struct linfit fit;
		double off_med, del_med, rms, p999, j;

		for (i = n = 0; i < in.n; i++) {
			const int64_t *x = in.x[i];
			int64_t tt[4];
			int m;

			for (m = 0; m < 4; m++)
				tt[m] = x[l->t[m]];
			if (tt[0] == NONE || tt[1] == NONE || tt[2] == NONE || tt[3] == NONE)
				continue;
			t[n] = (double)(x[S_T1] - in.x[0][S_T1]) / 1e9;
			v[n] = (double)record_off2(tt) / 2;
			w[n] = (double)record_delay(tt);
			n++;
		}
		if (n < 3)
			continue;
		j = jitter(v, n);
		if (stats_linfit(t, v, n, &fit))
			continue;
		for (i = 0; i < n; i++)
			t[i] = v[i] - (fit.a + fit.b * t[i]);
		rms = stats_rms(t, n);
		for (i = 0; i < n; i++)
			t[i] = fabs(t[i]);
		p999 = stats_quantile(t, n, 0.999);
		off_med = stats_quantile(v, n, 0.5);
		del_med = stats_quantile(w, n, 0.5);
		printf("%-16s %7zu", l->name, n);
		print_us(off_med);
		print_us(del_med);
		print_us(rms);
		print_us(p999);
		print_us(j);
		printf("\n");
		have_layer[k] = 1;
		var[k] = rms * rms;
	}
	/* The answer: how much of the user layer's offset noise the stacks add. */
	for (k = 1; k < NLAYERS; k++) {
		if (!have_layer[0] || !have_layer[k] || var[0] <= 0)
			continue;
		printf("host_share_%s_pct %.1f\n", layers[k].name,
		       100 * (var[0] - var[k]) / var[0]);
	}
	free(v);
	free(w);
	free(t);
out:
	free(in.x);
	free(in.seq);
	if (fflush(stdout) == EOF || ferror(stdout))
		ntpx_die(NTPX_EXIT_FAIL, "write error: %s", strerror(errno));
	return NTPX_EXIT_OK;
}
