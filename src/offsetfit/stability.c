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

int stability_print(const struct series *s, const struct linfit *fit, unsigned want,
		    double tau0, int json)
{
	struct stab_point p[STAB_MAX_POINTS];
	struct stab_grid g;
	uint64_t lost = s->status[RECORD_TIMEOUT] + s->status[RECORD_DROPPED] +
			s->status[RECORD_REFUSED];
	double *v = NULL;
	const double *x;
	int id, k, n, first = 1;

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
	/* Only a derived series needs an array of its own. */
	if (want & ~(1u << S_OFFSET)) {
		v = malloc(s->n * sizeof(double));
		if (!v)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory for %zu records", s->n);
	}
	for (id = 0; id < S_NSERIES; id++) {
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
