/* SPDX-License-Identifier: ISC */
/*
 * metrics.c - ntpstages --openmetrics: the stage table and the layer
 * table in the Prometheus text format (lib/openmetrics.h), each stage and
 * each layer a label, so that one family holds them all.  The one-way
 * stages (c2r, r2c and their wire parts) contain the two clocks' offset
 * unless both hosts read one clock: same_clock="1" says they do not
 * (--same-clock).
 */
#include <math.h>
#include <stdio.h>

#include "openmetrics.h"
#include "out.h"
#include "ntpstages.h"

#define MAX_STAGES	32
#define MAX_LAYERS	8

int metrics_print(const struct input *in, int same, double *v, double *w, double *t)
{
	struct stage_figures sf[MAX_STAGES];
	struct layer_figures lf[MAX_LAYERS];
	int have_s[MAX_STAGES] = { 0 }, have_l[MAX_LAYERS] = { 0 };
	size_t k, ns = stage_count(), nl = layer_count();
	char lab[160];
	struct om m;
	int rc;

	if (ns > MAX_STAGES || nl > MAX_LAYERS)
		return OUT_FAILED;
	for (k = 0; k < ns; k++)
		have_s[k] = stage_stats(in, k, v, &sf[k]) == 0;
	for (k = 0; k < nl; k++)
		have_l[k] = layer_stats(in, k, v, w, t, &lf[k]) == 0;
	om_init(&m, stdout, in->endpoint);
	om_gauge(&m, "ntpx_records", "Exchanges read.", (double)in->records);
	om_gauge(&m, "ntpx_ok_records", "Exchanges with status ok, those decomposed.",
		 (double)in->n);
	om_gauge(&m, "ntpx_same_clock", "1 when both hosts read one clock (--same-clock): "
		 "the one-way stages are then true one-way delays.", same);

	om_family(&m, "ntpx_stage_seconds", "summary",
		  "Time between two stamps of an exchange, per stage (ntpstages(1)).");
	for (k = 0; k < ns; k++) {
		if (!have_s[k])
			continue;
		snprintf(lab, sizeof(lab), "stage=\"%s\",quantile=\"0.5\"", stage_name(k));
		om_sample(&m, "ntpx_stage_seconds", lab, ntpx_ns_to_sec(sf[k].median));
		snprintf(lab, sizeof(lab), "stage=\"%s\",quantile=\"0.99\"", stage_name(k));
		om_sample(&m, "ntpx_stage_seconds", lab, ntpx_ns_to_sec(sf[k].p99));
		snprintf(lab, sizeof(lab), "stage=\"%s\"", stage_name(k));
		om_sample(&m, "ntpx_stage_seconds_sum", lab, ntpx_ns_to_sec(sf[k].sum));
		om_sample(&m, "ntpx_stage_seconds_count", lab, (double)sf[k].n);
	}
	om_family(&m, "ntpx_stage_jitter_seconds", "gauge",
		  "Jitter of a stage: RMS of successive differences over sqrt 2.");
	for (k = 0; k < ns; k++) {
		if (!have_s[k] || !isfinite(sf[k].jitter))
			continue;
		snprintf(lab, sizeof(lab), "stage=\"%s\"", stage_name(k));
		om_sample(&m, "ntpx_stage_jitter_seconds", lab, ntpx_ns_to_sec(sf[k].jitter));
	}

#define LAYER_GAUGE(name, help, expr)						\
	do {									\
		om_family(&m, name, "gauge", help);				\
		for (k = 0; k < nl; k++) {					\
			if (!have_l[k])						\
				continue;					\
			snprintf(lab, sizeof(lab), "layer=\"%s\"", layer_name(k));	\
			om_sample(&m, name, lab, ntpx_ns_to_sec(expr));	\
		}								\
	} while (0)
	LAYER_GAUGE("ntpx_layer_offset_seconds",
		    "Median offset (server minus client) from one layer's four stamps.", lf[k].offset);
	LAYER_GAUGE("ntpx_layer_delay_seconds",
		    "Median round-trip delay from one layer's four stamps.", lf[k].delay);
	LAYER_GAUGE("ntpx_layer_residual_rms_seconds",
		    "RMS of one layer's offsets about their fitted line.", lf[k].rms);
	LAYER_GAUGE("ntpx_layer_jitter_seconds",
		    "Jitter of one layer's offsets: RMS of successive differences over sqrt 2.",
		    lf[k].jitter);
#undef LAYER_GAUGE
	om_family(&m, "ntpx_host_share_ratio", "gauge",
		  "Share of the user layer's offset variance that the layer's stamps take out: "
		  "the host stacks' part of the noise.");
	for (k = 1; k < nl; k++) {
		double h;

		if (!have_l[0] || !have_l[k] || !isfinite(h = layer_host_share(&lf[0], &lf[k])))
			continue;
		snprintf(lab, sizeof(lab), "layer=\"%s\"", layer_name(k));
		om_sample(&m, "ntpx_host_share_ratio", lab, h);
	}
	rc = om_end(&m);
	if (rc < 0)
		return out_failed("standard output", -rc);
	return out_flush(stdout, "standard output");
}
