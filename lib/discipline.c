/* SPDX-License-Identifier: ISC */
/*
 * discipline.c - OpenNTPD's control loop for one peer (see discipline.h).
 *
 * Followed from OpenNTPD (openntpd-portable/openntpd-openbsd,
 * src/usr.sbin/ntpd; 6.2p3 and the current tree):
 *
 * - client.c client_dispatch(): the offset stored for a reply has the
 *   adjustment still pending subtracted (6.2: T1 and T4 read with
 *   gettime_corrected(); now: "- getoffset()" once), since the kernel will
 *   still apply it.  With -s, the first reply's offset goes to
 *   priv_settime() and settime is then off for good.
 * - ntp.c priv_adjtime(): the update's offset is sent to the parent for
 *   adjtime and to priv_adjfreq(); then every stored offset has it
 *   subtracted.
 * - ntpd.c ntpd_adjtime(): adjtime(offset + getoffset()), i.e. the new
 *   slew replaces the pending one and carries it on; "synced" when the
 *   old delta was zero and it is not the first adjustment.
 * - ntp.c priv_adjfreq(): nothing unless synced (and the count restarts);
 *   otherwise the offsets are summed, and every FREQUENCY_SAMPLES the
 *   least-squares slope of that sum against gettime_corrected() is added
 *   to the frequency (ntpd_adjfreq(), relative), clamped to
 *   MAX_FREQUENCY_ADJUST.  priv_adjfreq() runs before the parent answers
 *   the adjtime, so it sees "synced" as the previous adjustment left it.
 *
 * Where we differ, and why:
 * - ntpd_settime() leaves the pre-step offsets in the reply window, so a
 *   later update could slew the step again; we subtract the step from the
 *   window as priv_adjtime() does for slews.
 * - The slope is computed about the first sample's time, not with sums of
 *   t and t^2 since the epoch: with seconds since 1970 in doubles, Sxx -
 *   Sx^2/n cancels catastrophically over the short spans a 50 ms poll
 *   gives.  Mathematically the same estimate.
 * - adjtime(2) reports the old delta in microseconds, so a remainder
 *   below 1 us reads as zero; the sim clock counts nanoseconds, so
 *   synced_ns (1000) plays that part.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discipline.h"
#include "opt_units.h"

struct discipline {
	struct clock *c;
	struct discipline_params p;
	struct filter f;
	int settime;		/* the start-up step is still to be decided */
	int firstadj;
	int synced;
	/* priv_adjfreq()'s running sums, time about t_base */
	int samples;
	double overall, x, y, xy, xx;
	int64_t t_base;
};

void discipline_defaults(struct discipline_params *p)
{
	memset(p, 0, sizeof(*p));
	p->window = FILTER_WINDOW;
	p->freq_samples = 8;
	p->max_freq_ppm = 128e-5 * 1e6;
	p->synced_ns = 1000;
}

int discipline_parse(struct discipline_params *p, const char *s, char *err, size_t errlen)
{
	char *copy, *tok, *save = NULL;
	const char *q;
	int rc = 0;

	/* Errors quote the input: keep them one printable line. */
	for (q = s; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f) {
			snprintf(err, errlen, "discipline parameters contain a control character");
			return -1;
		}
	copy = strdup(s);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *v = strchr(tok, '=');
		uint64_t n;

		if (!v) {
			snprintf(err, errlen, "discipline parameter '%s' has no value", tok);
			goto bad;
		}
		*v++ = 0;
		if (strcmp(tok, "window") == 0) {
			if (opt_count(v, FILTER_MAX_WINDOW, &n) || n < 1)
				goto bad_value;
			p->window = (int)n;
		} else if (strcmp(tok, "freq-samples") == 0) {
			if (opt_count(v, 1000, &n) || n < 2)
				goto bad_value;
			p->freq_samples = (int)n;
		} else if (strcmp(tok, "max-freq") == 0) {
			if (opt_ppm(v, &p->max_freq_ppm) || p->max_freq_ppm < 0)
				goto bad_value;
		} else if (strcmp(tok, "step-threshold") == 0) {
			if (opt_duration(v, 0, &p->step_threshold))
				goto bad_value;
		} else {
			snprintf(err, errlen, "unknown discipline parameter '%s' "
				 "(window, freq-samples, max-freq, step-threshold)", tok);
			goto bad;
		}
	}
	free(copy);
	return rc;

bad_value:
	snprintf(err, errlen, "bad value for discipline parameter '%s'", tok);
bad:
	free(copy);
	return -1;
}

struct discipline *discipline_create(struct clock *c, const struct discipline_params *p,
				     char *err, size_t errlen)
{
	struct discipline *d;
	int64_t left;
	int rc;

	/* The clock must be one we may adjust: ask it something harmless. */
	rc = clock_slew_left(c, &left, err, errlen);
	if (rc == -EPERM)
		snprintf(err, errlen, "clock '%s': refusing to discipline the system clock "
			 "(use a sim: clock)", clock_name(c));
	if (rc)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->c = c;
	d->p = *p;
	filter_init(&d->f, p->window);
	d->settime = p->step_threshold > 0;
	d->firstadj = 1;
	return d;
}

void discipline_peer_reset(struct discipline *d)
{
	filter_init(&d->f, d->p.window);
}

void discipline_free(struct discipline *d)
{
	free(d);
}

/* priv_adjfreq(): @offset in seconds, the correction just made. */
static int adjfreq(struct discipline *d, double offset, struct discipline_out *out,
		   char *err, size_t errlen)
{
	int64_t now, left = 0;
	double t, freq;
	int rc;

	if (!d->synced) {
		d->samples = 0;
		return 0;
	}
	if (d->samples == 0) {
		d->overall = d->x = d->y = d->xy = d->xx = 0;
		d->t_base = clock_now(d->c);
	}
	d->samples++;
	d->overall += offset;
	/* gettime_corrected(): the clock as it will read once the slew is done */
	now = clock_now(d->c);
	rc = clock_slew_left(d->c, &left, err, errlen);
	if (rc)
		return rc;
	t = ntpx_ns_to_sec((double)(now + left - d->t_base));
	d->xy += d->overall * t;
	d->x += t;
	d->y += d->overall;
	d->xx += t * t;
	if (d->samples % d->p.freq_samples != 0)
		return 0;

	freq = (d->xy - d->x * d->y / d->samples) / (d->xx - d->x * d->x / d->samples);
	d->samples = 0;
	if (!isfinite(freq))
		return 0;
	freq *= 1e6;
	if (freq > d->p.max_freq_ppm)
		freq = d->p.max_freq_ppm;
	else if (freq < -d->p.max_freq_ppm)
		freq = -d->p.max_freq_ppm;
	rc = clock_freq_add(d->c, freq, err, errlen);
	if (rc)
		return rc;
	out->freq_adjusted = 1;
	out->dfreq_ppm = freq;
	return 0;
}

/* priv_adjtime() + ntpd_adjtime() for one peer: slew by @off2 / 2. */
static int adjtime_update(struct discipline *d, int64_t off2, struct discipline_out *out,
			  char *err, size_t errlen)
{
	int64_t corr = off2 / 2, pending, old = 0;
	int rc;

	rc = clock_slew_left(d->c, &pending, err, errlen);
	if (rc)
		return rc;
	rc = clock_slew(d->c, corr + pending, &old, err, errlen);
	if (rc)
		return rc;
	out->action = DISCIPLINE_SLEW;
	out->corr = corr + pending;
	/* priv_adjfreq() sees "synced" as the previous adjtime left it ... */
	rc = adjfreq(d, ntpx_ns_to_sec((double)corr), out, err, errlen);
	/* ... and this one's answer sets it for the next. */
	d->synced = !d->firstadj && llabs(old) < d->p.synced_ns;
	d->firstadj = 0;
	if (rc)
		return rc;
	filter_correct(&d->f, off2);
	return 0;
}

int discipline_sample(struct discipline *d, enum record_status status, int64_t off2,
		      int64_t delay, struct discipline_out *out, char *err, size_t errlen)
{
	int64_t pending;
	int rc;

	memset(out, 0, sizeof(*out));
	if (status == RECORD_KOD || status == RECORD_UNSYNCED) {
		filter_peek(&d->f, &out->f);
		return 0;
	}
	if (status != RECORD_OK) {
		filter_miss(&d->f, &out->f);
		return 0;
	}
	rc = clock_slew_left(d->c, &pending, err, errlen);
	if (rc)
		return rc;
	off2 -= 2 * pending;
	if (filter_add(&d->f, off2, delay, &out->f) < 0)
		return 0;	/* negative delay: rejected */
	/*
	 * OpenNTPD runs client_update() before priv_settime(); with its
	 * window of 8 the first reply cannot be an update, so the order only
	 * matters for a window of 1, where the step must not be slewed again.
	 */
	if (d->settime) {
		d->settime = 0;
		if (llabs(off2 / 2) > d->p.step_threshold) {
			rc = clock_step(d->c, off2 / 2, err, errlen);
			if (rc)
				return rc;
			out->action = DISCIPLINE_STEP;
			out->corr = off2 / 2;
			filter_correct(&d->f, off2);
			return 0;
		}
	}
	if (out->f.update)
		return adjtime_update(d, out->f.off2, out, err, errlen);
	return 0;
}

int discipline_format(char *buf, size_t len, const struct discipline_out *o)
{
	char f[160], corr[24] = "-", dfreq[32] = "-";

	filter_format(f, sizeof(f), &o->f);
	if (o->action != DISCIPLINE_NONE)
		snprintf(corr, sizeof(corr), "%lld", (long long)o->corr);
	if (o->freq_adjusted)
		snprintf(dfreq, sizeof(dfreq), "%.6f", o->dfreq_ppm);
	return snprintf(buf, len, "%s %s %s %s", f, corr,
			o->action == DISCIPLINE_STEP ? "step" :
			o->action == DISCIPLINE_SLEW ? "slew" : "-", dfreq);
}
