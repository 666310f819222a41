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
		     STAB_DEV_TDEV },
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* --taus LIST's durations, freed at exit (sc->tau_s points here). */
static double *taus_given;

static void free_taus(void)
{
	free(taus_given);
}

int stability_taus_parse(const char *arg, struct stab_config *sc)
{
	static const char *const names[] = { [STAB_TAUS_OCTAVE] = "octave",
					     [STAB_TAUS_DECADE] = "decade", [STAB_TAUS_ALL] = "all" };
	char *buf, *rest, *w;
	size_t i, n = 1;
	int64_t ns;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(arg, names[i])) {
			sc->taus = (int)i;
			return 0;
		}
	for (i = 0; arg[i]; i++)
		n += arg[i] == ',';
	buf = strdup(arg);
	if (!taus_given)
		atexit(free_taus);
	free(taus_given);
	sc->tau_s = taus_given = malloc(n * sizeof(*sc->tau_s));
	if (!buf || !sc->tau_s)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory for --taus");
	sc->ntau = 0;
	for (rest = buf; (w = strsep(&rest, ",")) != NULL;) {	/* an empty entry is refused */
		if (opt_duration(w, 0, &ns) || ns <= 0) {
			free(buf);
			return -1;
		}
		sc->tau_s[sc->ntau++] = ntpx_ns_to_sec((double)ns);
	}
	free(buf);
	qsort(sc->tau_s, sc->ntau, sizeof(*sc->tau_s), cmp_double);
	sc->taus = STAB_TAUS_LIST;
	return 0;
}

/*
 * --taus LIST's durations as multiples of @tau0 into @spec (ascending,
 * each once): the nearest, at least 1.  Taus that round to the same m
 * are one row.
 */
static void taus_list(const struct stab_config *sc, double tau0, struct stab_spec *spec,
		      size_t **ms)
{
	size_t i, n = 0;

	*ms = malloc(sc->ntau * sizeof(**ms));
	if (!*ms)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory for --taus");
	for (i = 0; i < sc->ntau; i++) {
		double m = round(sc->tau_s[i] / tau0);

		if (m < 1)
			ntpx_die(NTPX_EXIT_FAIL, "--taus %.9g s is below tau0 %.9g s", sc->tau_s[i],
				 tau0);
		if (!n || (size_t)m > (*ms)[n - 1])
			(*ms)[n++] = (size_t)m;
	}
	spec->list = *ms;
	spec->nlist = n;
}

/* One column's value at @p. */
static double col_value(const struct stab_point *p, int c)
{
	switch (c) {
	case C_MTIE: return p->mtie_ns;
	case C_TIE: return p->tie_rms_ns;
	case C_ALPHA: return NAN;
	}
	return stab_dev_value(p, col_tab[c].dev);
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

/* What every block shares: the columns, the masks, the output form. */
struct layout {
	int cols[STAB_MAX_COLS + 1], ncols;
	const struct stab_config *sc;
	unsigned what;
	int json;
};

/* The block's head: the grid, and the #fields line or the JSON keys' start. */
static void block_head(const struct layout *l, enum series_id id, const struct stab_grid *g,
		       uint64_t lost, int first)
{
	const struct stab_config *sc = l->sc;
	int i, c;

	if (l->json) {
		if (first)
			printf("{\"tau0_s\":%.9g,\"slots\":%zu,\"samples\":%zu,"
			       "\"gaps\":%zu,\"collisions\":%zu,\"lost\":%llu,"
			       "\"series\":[", g->tau0_s, g->slots, g->samples, g->gaps,
			       g->collisions, (unsigned long long)lost);
		printf("%s{\"name\":\"%s\",\"points\":[", first ? "" : ",", series_tab[id].name);
		return;
	}
	printf("%s#series %s: %s\n", first ? "" : "\n", series_tab[id].name, series_tab[id].what);
	printf("#grid tau0_s %.9g slots %zu samples %zu gaps %zu collisions %zu lost %llu\n",
	       g->tau0_s, g->slots, g->samples, g->gaps, g->collisions, (unsigned long long)lost);
	printf("#fields tau_s n");
	for (i = 0; i < l->ncols; i++) {
		c = l->cols[i];
		printf(" %s", col_tab[c].name);
		if (sc->conf > 0 && col_tab[c].dev >= 0)
			printf(" %s %s %s", col_tab[c].lo, col_tab[c].hi, col_tab[c].edf);
	}
	for (i = 0; i < sc->nmask; i++)
		printf(" %s_mask_ns %s_margin_ns %s_pass", stat_name[sc->mask[i].stat],
		       stat_name[sc->mask[i].stat], stat_name[sc->mask[i].stat]);
	putchar('\n');
}

/* "tau_s 32 hdev mdev; tau_s 64 ...": the columns without an interval at a tau. */
struct few {
	char s[2048];
	size_t len;
};

static void few_add(struct few *f, double tau, const int *cols, int n)
{
	int i;

	if (!n || f->len + 16 * (size_t)(n + 2) >= sizeof(f->s))
		return;
	f->len += (size_t)snprintf(f->s + f->len, sizeof(f->s) - f->len, "%stau_s %.9g",
				   f->len ? "; " : "", tau);
	for (i = 0; i < n; i++)
		f->len += (size_t)snprintf(f->s + f->len, sizeof(f->s) - f->len, " %s",
					   col_tab[cols[i]].alias);
}

/* One tau's line (or JSON object); the masks' verdicts @vd updated. */
static void block_row(const struct layout *l, const struct stab_row *r, int k, struct few *few,
		      struct verdict *vd)
{
	const struct stab_config *sc = l->sc;
	const struct stab_point *p = &r->p;
	int json = l->json, rowfew[C_NCOLS], nrowfew = 0, i, c;

	if (json)
		printf("%s{\"tau_s\":%.9g,\"n\":%llu,\"n_mdev\":%llu,\"n_tie\":%llu,\"n_mtie\":%llu",
		       k ? "," : "", p->tau_s, (unsigned long long)p->n_adev,
		       (unsigned long long)p->n_mdev, (unsigned long long)p->n_tie,
		       (unsigned long long)p->n_mtie);
	else
		printf("%.9g %llu", p->tau_s, (unsigned long long)p->n_adev);
	if (json && (l->what & STAB_HADAMARD))
		printf(",\"n_hdev\":%llu,\"n_ohdev\":%llu", (unsigned long long)p->n_hdev,
		       (unsigned long long)p->n_ohdev);
	for (i = 0; i < l->ncols; i++) {
		int dev;
		double val;

		c = l->cols[i];
		if (c == C_ALPHA) {
			if (json)
				printf(",\"alpha\":");
			else
				putchar(' ');
			if (r->alpha == STAB_NO_ALPHA)
				fputs(json ? "null" : "-", stdout);
			else
				printf("%d", r->alpha);
			continue;
		}
		val = col_value(p, c);
		put(json, col_tab[c].name, col_tab[c].prec, col_tab[c].expo, val);
		dev = col_tab[c].dev;
		if (!(sc->conf > 0 && dev >= 0))
			continue;
		put(json, col_tab[c].lo, col_tab[c].prec, col_tab[c].expo, r->lo[dev]);
		put(json, col_tab[c].hi, col_tab[c].prec, col_tab[c].expo, r->hi[dev]);
		put(json, col_tab[c].edf, 1, 0, r->edf[dev]);
		if (isnan(r->edf[dev]) && !isnan(val) && r->alpha != STAB_NO_ALPHA)
			rowfew[nrowfew++] = c;
	}
	few_add(few, p->tau_s, rowfew, nrowfew);
	for (i = 0; i < sc->nmask; i++)
		put_mask(json, &sc->mask[i], p, &vd[i]);
	putchar(json ? '}' : '\n');
}

/* The block's end: the taus without an interval and the masks' verdicts; 1 if one failed. */
static int block_tail(const struct layout *l, const struct few *few, const struct verdict *verdict)
{
	const struct stab_config *sc = l->sc;
	int json = l->json, fail = 0, i;

	if (json)
		printf("]");
	if (few->len)
		printf(json ? ",\"too_few_samples\":\"%s\"" :
		       "#too few samples for an interval: %s\n", few->s);
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
	return fail;
}

/* --dev's columns (or the five), alpha with --ci; what they need computed into @spec. */
static void layout_init(struct layout *l, const struct stab_config *sc, int json,
			struct stab_spec *spec)
{
	static const int def_cols[] = { C_ADEV, C_MDEV, C_TDEV, C_MTIE, C_TIE };
	int i;

	memset(l, 0, sizeof(*l));
	memset(spec, 0, sizeof(*spec));
	l->sc = sc;
	l->json = json;
	if (sc->ncols)
		for (i = 0; i < sc->ncols; i++)
			l->cols[l->ncols++] = sc->cols[i];
	else
		for (i = 0; i < (int)ARRAY_SIZE(def_cols); i++)
			l->cols[l->ncols++] = def_cols[i];
	for (i = 0; i < l->ncols && l->cols[i] != C_ALPHA; i++)
		;
	if (i == l->ncols && sc->conf > 0)
		l->cols[l->ncols++] = C_ALPHA;
	for (i = 0; i < l->ncols; i++) {
		if (l->cols[i] == C_ALPHA || (sc->conf > 0 && col_tab[l->cols[i]].dev >= 0))
			spec->noise = 1;
		if (l->cols[i] == C_HDEV || l->cols[i] == C_OHDEV)
			l->what |= STAB_HADAMARD;
	}
	spec->what = l->what;
	spec->conf = sc->conf;
}

/*
 * --taus all costs a pass over the grid per tau, some 3.5 ns a slot for
 * the five default statistics (tests/bench/stability.sh): past 2^36
 * slot passes, minutes, offsetfit asks for --max-tau instead of running
 * for hours (all of 10 million slots would be 3.3 million taus).
 */
#define ALL_WORK	0x1p36

int stability_print(const struct series *s, const struct linfit *fit, unsigned want,
		    double tau0, int json, const struct stab_config *sc)
{
	struct layout l;
	struct stab_spec spec;
	struct stab_grid g;
	struct stab_table t;
	uint64_t lost = s->status[RECORD_TIMEOUT] + s->status[RECORD_DROPPED] +
			s->status[RECORD_REFUSED];
	double *v = NULL;
	const double *x;
	int id, k, first = 1, fail = 0;
	size_t i, *ms = NULL;

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
	layout_init(&l, sc, json, &spec);
	spec.taus = sc->taus;
	if (sc->taus == STAB_TAUS_LIST)
		taus_list(sc, tau0, &spec, &ms);
	/* --max-tau: the taus up to it */
	if (sc->max_tau_s > 0) {
		spec.max_m = (size_t)floor(sc->max_tau_s / tau0 * (1 + 1e-9));
		if (!spec.max_m)
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
		struct few few = { "", 0 };

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
		if (spec.taus == STAB_TAUS_ALL &&
		    (double)stab_table_taus(&spec, g.slots) * (double)g.slots > ALL_WORK)
			ntpx_die(NTPX_EXIT_FAIL, "--taus all: %zu taus over %zu slots is more than "
				 "2^36 slot passes; give --max-tau (%.9g s here) or --taus decade",
				 stab_table_taus(&spec, g.slots), g.slots,
				 floor(ALL_WORK / (double)g.slots) * tau0);
		if (stab_table(&g, &spec, &t))
			ntpx_die(NTPX_EXIT_FAIL, "out of memory for %zu slots", g.slots);
		block_head(&l, id, &g, lost, first);
		for (i = 0; i < t.n; i++)
			block_row(&l, &t.row[i], (int)i, &few, verdict);
		fail |= block_tail(&l, &few, verdict);
		stab_table_free(&t);
		stab_grid_free(&g);
		first = 0;
	}
	if (json)
		printf("]}\n");
	free(v);
	free(ms);
	if (!fail)
		return NTPX_EXIT_OK;
	/* a mask failed: exit 1, but a write error (or a closed pipe) says first */
	k = output_finish();
	return k == NTPX_EXIT_OK ? NTPX_EXIT_FAIL : k;
}
