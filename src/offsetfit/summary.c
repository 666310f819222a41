/* SPDX-License-Identifier: ISC */
/*
 * summary.c - offsetfit's summary of the fit offset(t) = a + b t: drift,
 * residuals and round-trip time, as "key value" lines or one JSON object.
 *
 * t is seconds since the first T1 in the input; offset is off2 / 2.
 * While the client runs free its offset drifts with the frequency error of
 * the two oscillators (b); the residual is what the fitted line does not
 * explain: the short-term noise of the estimator (doc/design.md, Estimation).
 *
 * When the records carry true2 (a sim: clock's ground truth, ntpprobe
 * --clock sim:PATH) on every ok record, the summary adds the estimator's
 * error against truth: bias, RMS and p99 of (measured - true offset), and
 * the fitted drift against the true offset's own slope.
 */
#include <math.h>
#include <stdio.h>

#include "offsetfit.h"

int summary_print(struct series *s, const struct linfit *fit, int json)
{
	static const double ps[] = { 0.5, 0.99, 0.999 };
	double rq[3], dq[3], dmin, reject, bias = 0, erms = 0, ep99 = 0;
	char se[32] = "-", se_json[32];
	struct linfit tfit;
	uint64_t lost, rejected;
	int truth = 0;
	size_t i;

	/*
	 * Truth, when every ok record has it: the true offset's slope (fitted
	 * like the measured one), then measured - true replaces the truth.
	 */
	if (s->ntruth == s->n && stats_linfit(s->t, s->truth, s->n, &tfit) == 0) {
		truth = 1;
		for (i = 0; i < s->n; i++) {
			s->truth[i] = s->off[i] - s->truth[i];
			bias += s->truth[i];
		}
		bias /= (double)s->n;
		erms = stats_rms(s->truth, s->n);
		for (i = 0; i < s->n; i++)
			s->truth[i] = fabs(s->truth[i]);
		ep99 = stats_quantile(s->truth, s->n, 0.99);
	}
	/* |residual| replaces t: nothing needs t after this. */
	for (i = 0; i < s->n; i++)
		s->t[i] = fabs(s->off[i] - (fit->a + fit->b * s->t[i]));
	stats_quantiles(s->t, s->n, ps, rq, 3);
	/* The offsets are spent: their array takes the delays as doubles. */
	for (i = 0; i < s->n; i++)
		s->off[i] = s->delay[i];
	dmin = stats_min(s->off, s->n);
	stats_quantiles(s->off, s->n, ps, dq, 3);
	lost = s->status[RECORD_TIMEOUT] + s->status[RECORD_DROPPED];
	rejected = s->records - s->n;
	reject = (double)rejected / (double)s->records;

	/* Fewer than three points have no standard error: "-", or JSON's null. */
	if (isfinite(fit->b_se))
		snprintf(se, sizeof(se), "%.6f", fit->b_se / 1e3);
	snprintf(se_json, sizeof(se_json), "%s", isfinite(fit->b_se) ? se : "null");
	if (json) {
		printf("{\"records\":%llu,\"n\":%zu,\"lost\":%llu,\"rejected\":%llu,"
		       "\"reject_rate\":%.6f,\"a_us\":%.3f,\"b_ppm\":%.6f,\"b_se_ppm\":%s,\"rms_us\":%.3f,"
		       "\"p50_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,"
		       "\"rtt_median_us\":%.3f,\"rtt_p99_us\":%.3f,\"rtt_min_us\":%.3f",
		       (unsigned long long)s->records, s->n, (unsigned long long)lost,
		       (unsigned long long)rejected, reject, fit->a / 1e3, fit->b / 1e3,
		       se_json, fit->rms / 1e3, rq[0] / 1e3, rq[1] / 1e3, rq[2] / 1e3, dq[0] / 1e3,
		       dq[1] / 1e3, dmin / 1e3);
		if (truth)
			printf(",\"true_b_ppm\":%.6f,\"b_err_ppm\":%.6f,\"bias_us\":%.3f,"
			       "\"err_rms_us\":%.3f,\"err_p99_us\":%.3f", tfit.b / 1e3,
			       (fit->b - tfit.b) / 1e3, bias / 1e3, erms / 1e3, ep99 / 1e3);
		printf("}\n");
		return output_finish();
	}
	printf("records %llu\n", (unsigned long long)s->records);
	printf("n %zu\n", s->n);
	printf("lost %llu\n", (unsigned long long)lost);
	printf("rejected %llu\n", (unsigned long long)rejected);
	printf("reject_rate %.6f\n", reject);
	printf("a_us %.3f\n", fit->a / 1e3);
	/* b is ns of offset per s of time: parts per billion; /1e3 for ppm. */
	printf("b_ppm %.6f\n", fit->b / 1e3);
	printf("b_se_ppm %s\n", se);
	printf("rms_us %.3f\n", fit->rms / 1e3);
	printf("p50_us %.3f\n", rq[0] / 1e3);
	printf("p99_us %.3f\n", rq[1] / 1e3);
	printf("p999_us %.3f\n", rq[2] / 1e3);
	printf("rtt_median_us %.3f\n", dq[0] / 1e3);
	printf("rtt_p99_us %.3f\n", dq[1] / 1e3);
	printf("rtt_min_us %.3f\n", dmin / 1e3);
	if (truth) {
		/* against true2: the true offset's slope, and measured - true */
		printf("true_b_ppm %.6f\n", tfit.b / 1e3);
		printf("b_err_ppm %.6f\n", (fit->b - tfit.b) / 1e3);
		printf("bias_us %.3f\n", bias / 1e3);
		printf("err_rms_us %.3f\n", erms / 1e3);
		printf("err_p99_us %.3f\n", ep99 / 1e3);
	}
	return output_finish();
}
