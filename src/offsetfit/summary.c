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
#include <string.h>

#include "openmetrics.h"
#include "out.h"
#include "offsetfit.h"

/*
 * --openmetrics: the summary in the Prometheus text exposition format, for
 * node_exporter's textfile collector; base units (seconds, a ratio), the
 * endpoint and its transport as labels.
 */
static int openmetrics_print(const struct series *s, const struct linfit *fit, double t_end,
			     const double rq[3], const double dq[3], double dmin, uint64_t lost,
			     int truth, double bias, double erms, double rsum, double dsum)
{
	struct om m;
	int rc;

	om_init(&m, stdout, s->endpoint);
	om_gauge(&m, "ntpx_records", "Exchanges read.", (double)s->records);
	om_gauge(&m, "ntpx_ok_records", "Exchanges with status ok, those fitted.", (double)s->n);
	om_gauge(&m, "ntpx_lost_records", "Exchanges lost (timeout or dropped).", (double)lost);
	om_gauge(&m, "ntpx_offset_seconds",
		 "Offset (server minus client) of the fitted line at the last exchange.",
		 ntpx_ns_to_sec(fit->a + fit->b * t_end));
	om_gauge(&m, "ntpx_drift_ratio", "Slope of the fitted offset: the frequency error (1e-6 is 1 ppm).",
		 ntpx_ns_to_sec(fit->b));
	om_gauge(&m, "ntpx_residual_rms_seconds", "RMS of the residuals about the fitted line.",
		 ntpx_ns_to_sec(fit->rms));
	om_family(&m, "ntpx_residual_abs_seconds", "summary", "The absolute residuals about the fitted line.");
	om_sample(&m, "ntpx_residual_abs_seconds", "quantile=\"0.5\"", ntpx_ns_to_sec(rq[0]));
	om_sample(&m, "ntpx_residual_abs_seconds", "quantile=\"0.99\"", ntpx_ns_to_sec(rq[1]));
	om_sample(&m, "ntpx_residual_abs_seconds", "quantile=\"0.999\"", ntpx_ns_to_sec(rq[2]));
	om_sample(&m, "ntpx_residual_abs_seconds_sum", NULL, ntpx_ns_to_sec(rsum));
	om_sample(&m, "ntpx_residual_abs_seconds_count", NULL, (double)s->n);
	om_family(&m, "ntpx_delay_seconds", "summary", "The round-trip delay of the ok exchanges.");
	om_sample(&m, "ntpx_delay_seconds", "quantile=\"0\"", ntpx_ns_to_sec(dmin));
	om_sample(&m, "ntpx_delay_seconds", "quantile=\"0.5\"", ntpx_ns_to_sec(dq[0]));
	om_sample(&m, "ntpx_delay_seconds", "quantile=\"0.99\"", ntpx_ns_to_sec(dq[1]));
	om_sample(&m, "ntpx_delay_seconds_sum", NULL, ntpx_ns_to_sec(dsum));
	om_sample(&m, "ntpx_delay_seconds_count", NULL, (double)s->n);

	if (truth) {
		om_gauge(&m, "ntpx_error_bias_seconds", "Mean of measured minus true offset (sim clock).",
			 ntpx_ns_to_sec(bias));
		om_gauge(&m, "ntpx_error_rms_seconds", "RMS of measured minus true offset (sim clock).",
			 ntpx_ns_to_sec(erms));
	}
	rc = om_end(&m);
	if (rc < 0)
		return out_exit_code(out_failed(STDOUT_NAME, -rc));
	return output_finish();
}

int summary_print(struct series *s, const struct linfit *fit, int json)
{
	static const double ps[] = { 0.5, 0.99, 0.999 };
	double rq[3], dq[3], dmin, reject, bias = 0, erms = 0, ep99 = 0, t_end = 0;
	double rsum = 0, dsum = 0;
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
	/*
	 * |residual| replaces t: nothing needs t after this but its end.  One
	 * pass for what needs t and the residuals (each sum in the same order
	 * as a pass of its own: 10 M records are 80 MB an array).
	 */
	for (i = 0; i < s->n; i++) {
		double t = s->t[i], r = fabs(s->off[i] - (fit->a + fit->b * t));

		t_end = t > t_end ? t : t_end;
		s->t[i] = r;
		rsum += r;
	}
	stats_quantiles(s->t, s->n, ps, rq, 3);
	/* The offsets are spent: their array takes the delays as doubles. */
	dmin = s->delay[0];
	for (i = 0; i < s->n; i++) {
		double d = s->delay[i];

		s->off[i] = d;
		dsum += d;
		dmin = d < dmin ? d : dmin;
	}
	stats_quantiles(s->off, s->n, ps, dq, 3);
	lost = s->status[RECORD_TIMEOUT] + s->status[RECORD_DROPPED];
	rejected = s->records - s->n - s->before;
	reject = (double)rejected / (double)s->records;

	/* Fewer than three points have no standard error: "-", or JSON's null. */
	if (isfinite(fit->b_se))
		snprintf(se, sizeof(se), "%.6f", fit->b_se / 1e3);
	snprintf(se_json, sizeof(se_json), "%s", isfinite(fit->b_se) ? se : "null");
	if (json == SUMMARY_OPENMETRICS)
		return openmetrics_print(s, fit, t_end, rq, dq, dmin, lost, truth, bias, erms,
					 rsum, dsum);
	if (json) {
		printf("{\"records\":%llu,\"n\":%zu,\"lost\":%llu,\"rejected\":%llu,"
		       "\"reject_rate\":%.6f,\"a_us\":%.3f,\"b_ppm\":%.6f,\"b_se_ppm\":%s,\"rms_us\":%.3f,"
		       "\"p50_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,"
		       "\"rtt_median_us\":%.3f,\"rtt_p99_us\":%.3f,\"rtt_min_us\":%.3f",
		       (unsigned long long)s->records, s->n, (unsigned long long)lost,
		       (unsigned long long)rejected, reject, fit->a / 1e3, fit->b / 1e3,
		       se_json, fit->rms / 1e3, rq[0] / 1e3, rq[1] / 1e3, rq[2] / 1e3, dq[0] / 1e3,
		       dq[1] / 1e3, dmin / 1e3);
		if (s->steps)
			printf(",\"steps\":%u,\"before_steps\":%zu", s->steps, s->before);
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
	if (s->steps) {
		/* the fit is of the records after the last step alone */
		printf("steps %u\n", s->steps);
		printf("before_steps %zu\n", s->before);
	}
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
