/* SPDX-License-Identifier: ISC */
/*
 * stability_table.c - the table of one series that offsetfit
 * --stability prints: lib/stability.c's statistics at each tau, and with
 * them lib/stability_ci.c's noise, each deviation's equivalent degrees
 * of freedom and its interval.  Computed, not printed: the tool
 * formats it (src/offsetfit/stability.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stability.h"

double stab_dev_value(const struct stab_point *p, enum stab_dev dev)
{
	switch (dev) {
	case STAB_DEV_ADEV: return p->adev;
	case STAB_DEV_MDEV: return p->mdev;
	case STAB_DEV_HDEV: return p->hdev;
	case STAB_DEV_OHDEV: return p->ohdev;
	case STAB_DEV_TOTDEV: return p->totdev;
	case STAB_DEV_TDEV: return p->tdev_ns;
	case STAB_NDEV: break;
	}
	return NAN;
}

/*
 * The slots that would give a deviation its terms without gaps: the N
 * its EDF is computed for (N - 2m ADEV terms, N - 3m + 1 MDEV, N - 3m
 * OHDEV, (N - 1) / m - 2 HDEV, N - 2 TOTDEV).
 */
static double edf_slots(const struct stab_point *p, enum stab_dev dev)
{
	double m = (double)p->m;

	switch (dev) {
	case STAB_DEV_ADEV: return (double)p->n_adev + 2 * m;
	case STAB_DEV_MDEV: case STAB_DEV_TDEV: return (double)p->n_mdev + 3 * m - 1;
	case STAB_DEV_HDEV: return ((double)p->n_hdev + 2) * m + 1;
	case STAB_DEV_OHDEV: return (double)p->n_ohdev + 3 * m;
	case STAB_DEV_TOTDEV: return (double)p->n_tot + 2;
	case STAB_NDEV: break;
	}
	return 0;
}

/* Each deviation's EDF and interval at @r (alpha and the statistics known). */
static void intervals(struct stab_row *r, double conf)
{
	int d;

	for (d = 0; d < STAB_NDEV; d++) {
		double val = stab_dev_value(&r->p, d), e;

		e = r->alpha == STAB_NO_ALPHA || isnan(val) ? NAN :
		    stab_edf(d, r->alpha, r->p.m, edf_slots(&r->p, d));
		if (!(e >= STAB_EDF_MIN))
			e = NAN;
		r->edf[d] = e;
		stab_interval(val, e, conf, &r->lo[d], &r->hi[d]);
	}
}

/* The largest m of @spec over @slots: a third of the run, or less. */
static size_t last_m(const struct stab_spec *spec, size_t slots)
{
	size_t m = slots >= 4 ? (slots - 1) / 3 : 0;

	return spec->max_m && spec->max_m < m ? spec->max_m : m;
}

/*
 * The m of @spec up to @last into ms[] (NULL: only counted); how many.
 * Decades are 1, 2 and 4 times each power of ten.
 */
static size_t taus_fill(const struct stab_spec *spec, size_t last, size_t *ms)
{
	static const size_t dec[3] = { 1, 2, 4 };
	size_t n = 0, m, p, i;

	switch (spec->taus) {
	case STAB_TAUS_OCTAVE:
		for (m = 1; m <= last && n < STAB_MAX_POINTS; m *= 2, n++)
			if (ms)
				ms[n] = m;
		break;
	case STAB_TAUS_DECADE:
		for (p = 1; p <= last; p *= 10)
			for (i = 0; i < 3 && dec[i] * p <= last; i++, n++)
				if (ms)
					ms[n] = dec[i] * p;
		break;
	case STAB_TAUS_ALL:
		n = last;
		for (m = 1; ms && m <= last; m++)
			ms[m - 1] = m;
		break;
	case STAB_TAUS_LIST:
		for (i = 0; i < spec->nlist && spec->list[i] <= last; i++, n++)
			if (ms)
				ms[n] = spec->list[i];
		break;
	}
	return n;
}

size_t stab_table_taus(const struct stab_spec *spec, size_t slots)
{
	return taus_fill(spec, last_m(spec, slots), NULL);
}

int stab_table(const struct stab_grid *g, const struct stab_spec *spec, struct stab_table *t)
{
	struct stab_point *p = NULL;
	size_t last = last_m(spec, g->slots), want = taus_fill(spec, last, NULL), k, d, *ms = NULL;
	int n;

	t->row = NULL;
	t->n = 0;
	if (!want)
		return 0;
	p = malloc(want * sizeof(*p));
	t->row = calloc(want, sizeof(*t->row));
	if (!p || !t->row)
		goto nomem;
	if (spec->taus == STAB_TAUS_OCTAVE) {
		n = stab_octaves_ext(g->x, g->slots, g->tau0_s, spec->what, p, want);
	} else {
		ms = malloc(want * sizeof(*ms));
		if (!ms)
			goto nomem;
		taus_fill(spec, last, ms);
		n = stab_taus(g->x, g->slots, g->tau0_s, spec->what, ms, want, p);
		free(ms);
	}
	if (n < 0)
		goto nomem;
	for (k = 0; k < (size_t)n; k++) {
		struct stab_row *r = &t->row[k];

		r->p = p[k];
		r->how = STAB_ID_NONE;
		r->alpha = spec->noise ? stab_noise_id(g->x, g->slots, g->tau0_s, p[k].m,
							p[k].adev, p[k].mdev, &r->how) : STAB_NO_ALPHA;
		for (d = 0; d < STAB_NDEV; d++)
			r->edf[d] = r->lo[d] = r->hi[d] = NAN;
		if (spec->conf > 0)
			intervals(r, spec->conf);
	}
	free(p);
	t->n = (size_t)n;
	return 0;
nomem:
	free(p);
	stab_table_free(t);
	errno = ENOMEM;
	return -1;
}

void stab_table_free(struct stab_table *t)
{
	free(t->row);
	t->row = NULL;
	t->n = 0;
}
