/* SPDX-License-Identifier: ISC */
/*
 * stability.c - offsetfit --stability: a series (offset, residual, error)
 * brought onto the grid of the nominal interval, and lib/stability.c's
 * statistics over octaves of tau (doc/offsetfit.1).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "stability.h"
#include "util_private.h"
#include "offsetfit.h"

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
int stability_series_parse(const char *list, unsigned *set)
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
 * The series' phase, s->n values: the offsets themselves, or made in
 * v[]; NULL when the input lacks the series.
 */
static const double *series_fill(const struct series *s, enum series_id id,
				 const struct linfit *fit, double *v)
{
	size_t i;

	switch (id) {
	case S_OFFSET:
		return s->off;
	case S_RESIDUAL:
		for (i = 0; i < s->n; i++)
			v[i] = s->off[i] - (fit->a + fit->b * s->t[i]);
		return v;
	case S_ERROR:
		if (!s->truth || s->ntruth != s->n)
			return NULL;
		for (i = 0; i < s->n; i++)
			v[i] = s->off[i] - s->truth[i];
		return v;
	case S_NSERIES:
		break;
	}
	return NULL;
}

/*
 * The columns --dev chooses from, in the default's order first.  @dev is
 * the estimator an interval is known for (-1: none), @name the column and
 * JSON key, @alias what --dev also takes.
 */
enum col_id { C_ADEV, C_MDEV, C_TDEV, C_MTIE, C_TIE, C_HDEV, C_OHDEV, C_TOTDEV, C_ALPHA,
	      C_NCOLS };

static const struct {
	const char *name, *alias, *lo, *hi, *edf;
	int prec, expo, dev;
} col_tab[C_NCOLS] = {
	[C_ADEV] = { "adev", "adev", "adev_lo", "adev_hi", "adev_edf", 4, 1, STAB_DEV_ADEV },
	[C_MDEV] = { "mdev", "mdev", "mdev_lo", "mdev_hi", "mdev_edf", 4, 1, STAB_DEV_MDEV },
	[C_TDEV] = { "tdev_ns", "tdev", "tdev_lo_ns", "tdev_hi_ns", "tdev_edf", 4, 0,
		     STAB_DEV_MDEV },
	[C_MTIE] = { "mtie_ns", "mtie", NULL, NULL, NULL, 1, 0, -1 },
	[C_TIE] = { "tie_rms_ns", "tie_rms", NULL, NULL, NULL, 4, 0, -1 },
	[C_HDEV] = { "hdev", "hdev", "hdev_lo", "hdev_hi", "hdev_edf", 4, 1, STAB_DEV_HDEV },
	[C_OHDEV] = { "ohdev", "ohdev", "ohdev_lo", "ohdev_hi", "ohdev_edf", 4, 1,
		      STAB_DEV_OHDEV },
	[C_TOTDEV] = { "totdev", "totdev", "totdev_lo", "totdev_hi", "totdev_edf", 4, 1,
		       STAB_DEV_TOTDEV },
	[C_ALPHA] = { "alpha", "alpha", NULL, NULL, NULL, 0, 0, -1 },
};

int stability_dev_parse(const char *list, struct stab_config *sc)
{
	char buf[256], *save = NULL, *w;
	int i, k;

	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	sc->ncols = 0;
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < C_NCOLS && strcmp(w, col_tab[i].name) &&
			    strcmp(w, col_tab[i].alias); i++)
			;
		if (i == C_NCOLS)
			return -1;
		for (k = 0; k < sc->ncols && sc->cols[k] != i; k++)
			;
		if (k == sc->ncols)	/* once each */
			sc->cols[sc->ncols++] = i;
	}
	return sc->ncols ? 0 : -1;
}

/* One column's value at @p. */
static double col_value(const struct stab_point *p, int c)
{
	switch (c) {
	case C_ADEV: return p->adev;
	case C_MDEV: return p->mdev;
	case C_TDEV: return p->tdev_ns;
	case C_MTIE: return p->mtie_ns;
	case C_TIE: return p->tie_rms_ns;
	case C_HDEV: return p->hdev;
	case C_OHDEV: return p->ohdev;
	case C_TOTDEV: return p->totdev;
	}
	return NAN;
}

/*
 * The slots that would give a deviation its terms without gaps: the N
 * its EDF is computed for (N - 2m ADEV terms, N - 3m + 1 MDEV, N - 3m
 * OHDEV, (N - 1) / m - 2 HDEV, N - 2 TOTDEV).
 */
static double edf_slots(const struct stab_point *p, int c)
{
	double m = (double)p->m;

	switch (c) {
	case C_ADEV: return (double)p->n_adev + 2 * m;
	case C_MDEV: case C_TDEV: return (double)p->n_mdev + 3 * m - 1;
	case C_HDEV: return ((double)p->n_hdev + 2) * m + 1;
	case C_OHDEV: return (double)p->n_ohdev + 3 * m;
	case C_TOTDEV: return (double)p->n_tot + 2;
	}
	return 0;
}

/*
 * Fewer than two degrees of freedom: no interval ("too few samples").
 * Below two, even the 1-sigma interval spans more than a factor of 3
 * (chi-squared quantiles 0.35 and 3.7 at two), and the estimate rests on
 * less than two independent terms' worth.
 */
#define EDF_MIN	2.0

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

/* @str as a JSON string: quotes, backslashes and control characters escaped. */
static void json_string(const char *str)
{
	const unsigned char *c;

	putchar('"');
	for (c = (const unsigned char *)str; *c; c++)
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c < 0x20)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	putchar('"');
}

/* The worst margin of one mask over one series' taus. */
struct verdict {
	double worst, tau;	/* ns (NAN: no tau within the mask), s */
	int fail;
};

static const char *const stat_name[] = { [MASK_MTIE] = "mtie", [MASK_TDEV] = "tdev" };

/* The mask's limit, the margin and the verdict at @p into the row; *v updated. */
static void put_mask(int json, const struct mask *mk, const struct stab_point *p,
		     struct verdict *v)
{
	double val = mk->stat == MASK_MTIE ? p->mtie_ns : p->tdev_ns;
	double lim = mask_limit(mk, p->tau_s), margin = lim - val;
	char key[32];

	snprintf(key, sizeof(key), "%s_mask_ns", stat_name[mk->stat]);
	put(json, key, 4, 0, lim);
	snprintf(key, sizeof(key), "%s_margin_ns", stat_name[mk->stat]);
	put(json, key, 4, 0, margin);
	if (json)
		printf(",\"%s_pass\":%s", stat_name[mk->stat],
		       isnan(margin) ? "null" : margin >= 0 ? "true" : "false");
	else
		printf(" %s", isnan(margin) ? "-" : margin >= 0 ? "pass" : "fail");
	if (isnan(margin))
		return;
	if (margin < 0)
		v->fail = 1;
	if (isnan(v->worst) || margin < v->worst) {
		v->worst = margin;
		v->tau = p->tau_s;
	}
}

int stability_print(const struct series *s, const struct linfit *fit, unsigned want,
		    double tau0, int json, const struct stab_config *sc)
{
	static const int def_cols[] = { C_ADEV, C_MDEV, C_TDEV, C_MTIE, C_TIE };
	struct stab_point p[STAB_MAX_POINTS];
	int alpha[STAB_MAX_POINTS];
	struct stab_grid g;
	uint64_t lost = s->status[RECORD_TIMEOUT] + s->status[RECORD_DROPPED] +
			s->status[RECORD_REFUSED];
	double *v = NULL;
	const double *x;
	int cols[STAB_MAX_COLS + 1], ncols = 0, id, k, c, i, n, first = 1, fail = 0;
	int need_alpha = 0;
	unsigned what = 0;
	size_t maxpts = STAB_MAX_POINTS;

	if (!tau0)
		tau0 = stab_tau0(s->t, s->n);
	if (!(tau0 > 0))
		ntpx_die(NTPX_EXIT_FAIL, "no two ok records apart in time: no interval");
	if (!want)
		want = (1u << S_OFFSET) | (1u << S_RESIDUAL) |
		       (s->truth && s->ntruth == s->n ? 1u << S_ERROR : 0);
	/* Every series is checked before anything is printed. */
	if ((want & (1u << S_ERROR)) && !(s->truth && s->ntruth == s->n))
		ntpx_die(NTPX_EXIT_FAIL, "series error: the records lack true2");
	/* The columns: --dev's, or the five; alpha with --ci. */
	if (sc->ncols)
		for (i = 0; i < sc->ncols; i++)
			cols[ncols++] = sc->cols[i];
	else
		for (i = 0; i < (int)ARRAY_SIZE(def_cols); i++)
			cols[ncols++] = def_cols[i];
	for (i = 0; i < ncols && cols[i] != C_ALPHA; i++)
		;
	if (i == ncols && sc->conf > 0)
		cols[ncols++] = C_ALPHA;
	for (i = 0; i < ncols; i++) {
		if (cols[i] == C_ALPHA || (sc->conf > 0 && col_tab[cols[i]].dev >= 0))
			need_alpha = 1;
		if (cols[i] == C_HDEV || cols[i] == C_OHDEV)
			what |= STAB_HADAMARD;
	}
	/* --max-tau: the octaves up to it */
	if (sc->max_tau_s > 0) {
		double m = 1;

		for (maxpts = 0; maxpts < STAB_MAX_POINTS && m * tau0 <= sc->max_tau_s * (1 + 1e-9);
		     maxpts++)
			m *= 2;
		if (!maxpts)
			ntpx_die(NTPX_EXIT_FAIL, "--max-tau %.9g s is below tau0 %.9g s",
				 sc->max_tau_s, tau0);
	}
	/* Only a derived series needs an array of its own. */
	if (want & ~(1u << S_OFFSET)) {
		v = malloc(s->n * sizeof(double));
		if (!v)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory for %zu records", s->n);
	}
	for (id = 0; id < S_NSERIES; id++) {
		struct verdict verdict[2] = { { NAN, NAN, 0 }, { NAN, NAN, 0 } };
		char few[2048] = "";
		size_t flen = 0;
		int rowfew[C_NCOLS], nrowfew = 0;

		if (!(want & (1u << id)))
			continue;
		x = series_fill(s, id, fit, v);
		if (!x)
			ntpx_die(NTPX_EXIT_FAIL, "series %s: the records lack true2",
				 series_tab[id].name);
		if (stab_grid_build(&g, s->t, x, s->n, tau0))
			ntpx_die(NTPX_EXIT_FAIL, errno == ENOMEM ? "out of memory for the grid" :
				 "tau0 %.9g s: the records span far more slots than they fill",
				 tau0);
		n = stab_octaves_ext(g.x, g.slots, tau0, what, p, maxpts);
		if (n < 0)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory for %zu slots", g.slots);
		for (k = 0; k < n; k++) {
			int how;

			alpha[k] = need_alpha ? stab_noise_id(g.x, g.slots, tau0, p[k].m, p[k].adev,
							      p[k].mdev, &how) : STAB_NO_ALPHA;
		}
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
			printf("#fields tau_s n");
			for (i = 0; i < ncols; i++) {
				c = cols[i];
				printf(" %s", col_tab[c].name);
				if (sc->conf > 0 && col_tab[c].dev >= 0)
					printf(" %s %s %s", col_tab[c].lo, col_tab[c].hi,
					       col_tab[c].edf);
			}
			for (i = 0; i < sc->nmask; i++)
				printf(" %s_mask_ns %s_margin_ns %s_pass", stat_name[sc->mask[i].stat],
				       stat_name[sc->mask[i].stat], stat_name[sc->mask[i].stat]);
			putchar('\n');
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
			if (json && (what & STAB_HADAMARD))
				printf(",\"n_hdev\":%llu,\"n_ohdev\":%llu",
				       (unsigned long long)p[k].n_hdev,
				       (unsigned long long)p[k].n_ohdev);
			for (i = 0; i < ncols; i++) {
				double val, e, lo, hi;

				c = cols[i];
				if (c == C_ALPHA) {
					if (json)
						printf(",\"alpha\":");
					else
						putchar(' ');
					if (alpha[k] == STAB_NO_ALPHA)
						fputs(json ? "null" : "-", stdout);
					else
						printf("%d", alpha[k]);
					continue;
				}
				val = col_value(&p[k], c);
				put(json, col_tab[c].name, col_tab[c].prec, col_tab[c].expo, val);
				if (!(sc->conf > 0 && col_tab[c].dev >= 0))
					continue;
				e = alpha[k] == STAB_NO_ALPHA || isnan(val) ? NAN :
				    stab_edf(col_tab[c].dev, alpha[k], p[k].m, edf_slots(&p[k], c));
				if (!(e >= EDF_MIN))
					e = NAN;
				stab_interval(val, e, sc->conf, &lo, &hi);
				put(json, col_tab[c].lo, col_tab[c].prec, col_tab[c].expo, lo);
				put(json, col_tab[c].hi, col_tab[c].prec, col_tab[c].expo, hi);
				put(json, col_tab[c].edf, 1, 0, e);
				if (isnan(e) && !isnan(val) && alpha[k] != STAB_NO_ALPHA)
					rowfew[nrowfew++] = c;
			}
			/* "tau_s 32 hdev mdev; tau_s 64 ..." */
			if (nrowfew && flen + 16 * (size_t)(nrowfew + 2) < sizeof(few)) {
				flen += (size_t)snprintf(few + flen, sizeof(few) - flen, "%stau_s %.9g",
							 flen ? "; " : "", p[k].tau_s);
				for (i = 0; i < nrowfew; i++)
					flen += (size_t)snprintf(few + flen, sizeof(few) - flen, " %s",
								 col_tab[rowfew[i]].alias);
			}
			nrowfew = 0;
			for (i = 0; i < sc->nmask; i++)
				put_mask(json, &sc->mask[i], &p[k], &verdict[i]);
			if (json)
				putchar('}');
			else
				putchar('\n');
		}
		if (json)
			printf("]");
		if (flen)
			printf(json ? ",\"too_few_samples\":\"%s\"" :
			       "#too few samples for an interval: %s\n", few);
		if (json && sc->nmask)
			printf(",\"masks\":[");
		for (i = 0; i < sc->nmask; i++) {
			const struct verdict *vd = &verdict[i];
			/* nothing within the mask is no pass */
			int bad = vd->fail || isnan(vd->worst);

			fail |= bad;
			if (json) {
				printf("%s{\"mask\":", i ? "," : "");
				json_string(sc->mask[i].name);
				printf(",\"stat\":\"%s\",\"worst_margin_ns\":", stat_name[sc->mask[i].stat]);
				if (isnan(vd->worst))
					printf("null,\"tau_s\":null,\"pass\":false}");
				else
					printf("%.4f,\"tau_s\":%.9g,\"pass\":%s}", vd->worst, vd->tau,
					       bad ? "false" : "true");
			} else if (isnan(vd->worst)) {
				printf("#mask %s %s: no tau within the mask: fail\n", sc->mask[i].name,
				       stat_name[sc->mask[i].stat]);
			} else {
				printf("#mask %s %s worst_margin_ns %.4f tau_s %.9g: %s\n",
				       sc->mask[i].name, stat_name[sc->mask[i].stat], vd->worst,
				       vd->tau, bad ? "fail" : "pass");
			}
		}
		if (json && sc->nmask)
			printf("]");
		if (json)
			printf("}");
		stab_grid_free(&g);
		first = 0;
	}
	if (json)
		printf("]}\n");
	free(v);
	if (!fail)
		return NTPX_EXIT_OK;
	/* a mask failed: exit 1, but a write error (or a closed pipe) says first */
	k = output_finish();
	return k == NTPX_EXIT_OK ? NTPX_EXIT_FAIL : k;
}
