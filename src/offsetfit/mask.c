/* SPDX-License-Identifier: ISC */
/*
 * mask.c - offsetfit --mask: the limit an MTIE or TDEV must stay under
 * at each tau, built in (ITU-T G.8272's PRTC classes) or from a file of
 * "tau limit" lines interpolated log-log (doc/offsetfit.1).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "util_private.h"
#include "offsetfit.h"

/*
 * ITU-T G.8272/Y.1367 (11/2018, its third edition), the wander of a PRTC
 * in locked mode, each a list of segments limit = a tau + b ns over tau
 * in (lo, hi] s: Table 1 (PRTC-A MTIE), Table 2 (PRTC-B MTIE), Table 3
 * (PRTC-A TDEV), Table 4 (PRTC-B TDEV).  The MTIE limits have no upper
 * tau; PRTC-A's TDEV ends at 10^4 s, PRTC-B's at 10^5 s.  Taken from
 * secondary sources, not the Recommendation's text: doc/offsetfit.1 says
 * which.
 */
static const struct mask_seg prtc_a_mtie[] = {
	{ 0.1, 273, 0.275, 25 }, { 273, INFINITY, 0, 100 },
};
static const struct mask_seg prtc_b_mtie[] = {
	{ 0.1, 54.5, 0.275, 25 }, { 54.5, INFINITY, 0, 40 },
};
static const struct mask_seg prtc_a_tdev[] = {
	{ 0.1, 100, 0, 3 }, { 100, 1000, 0.03, 0 }, { 1000, 10000, 0, 30 },
};
static const struct mask_seg prtc_b_tdev[] = {
	{ 0.1, 100, 0, 1 }, { 100, 500, 0.01, 0 }, { 500, 100000, 0, 5 },
};

static const struct {
	const char *name;
	struct mask m[2];
} builtin[] = {
	{ "prtc-a", { { "prtc-a", MASK_MTIE, prtc_a_mtie, ARRAY_SIZE(prtc_a_mtie), NULL, 0 },
		      { "prtc-a", MASK_TDEV, prtc_a_tdev, ARRAY_SIZE(prtc_a_tdev), NULL, 0 } } },
	{ "prtc-b", { { "prtc-b", MASK_MTIE, prtc_b_mtie, ARRAY_SIZE(prtc_b_mtie), NULL, 0 },
		      { "prtc-b", MASK_TDEV, prtc_b_tdev, ARRAY_SIZE(prtc_b_tdev), NULL, 0 } } },
};

/* "tau limit" lines into m->pt[]; the line that failed, 0 on success. */
static size_t mask_read(FILE *f, struct mask *m, const char **why)
{
	char line[512];
	size_t lineno = 0, cap = 0;

	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		double tau, lim;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			*why = "line too long";
			return lineno;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\0')
			continue;
		errno = 0;
		tau = strtod(p, &end);
		if (end == p || errno || !(tau > 0) || !isfinite(tau)) {
			*why = "tau is not a positive number (s)";
			return lineno;
		}
		p = end;
		lim = strtod(p, &end);
		if (end == p || errno || !(lim > 0) || !isfinite(lim)) {
			*why = "the limit is not a positive number (ns)";
			return lineno;
		}
		for (p = end; *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'; p++)
			;
		if (*p) {
			*why = "more than two fields";
			return lineno;
		}
		if (m->npt && !(tau > m->pt[m->npt - 1][0])) {
			*why = "tau does not ascend";
			return lineno;
		}
		if (m->npt == cap) {
			double (*np)[2];

			cap = cap ? 2 * cap : 16;
			np = realloc(m->pt, cap * sizeof(*np));
			if (!np)
				ntpx_die(NTPX_EXIT_FAIL, "out of memory for the mask");
			m->pt = np;
		}
		m->pt[m->npt][0] = tau;
		m->pt[m->npt][1] = lim;
		m->npt++;
	}
	if (ferror(f)) {
		*why = strerror(errno);
		return lineno + 1;
	}
	if (m->npt < 2) {
		*why = "fewer than two points";
		return lineno + 1;
	}
	return 0;
}

/* A file's points, freed at exit. */
static double (*file_points)[2];

static void free_points(void)
{
	free(file_points);
}

int mask_parse(const char *spec, struct mask out[2])
{
	const char *path = spec;
	const char *why = "";
	size_t i, bad;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(builtin); i++)
		if (!strcmp(spec, builtin[i].name)) {
			out[0] = builtin[i].m[0];
			out[1] = builtin[i].m[1];
			return 2;
		}
	memset(out, 0, sizeof(*out));
	out->stat = MASK_MTIE;
	if (!strncmp(spec, "mtie:", 5)) {
		path = spec + 5;
	} else if (!strncmp(spec, "tdev:", 5)) {
		path = spec + 5;
		out->stat = MASK_TDEV;
	}
	out->name = path;
	f = fopen(path, "r");
	if (!f)
		ntpx_die(NTPX_EXIT_USAGE, "--mask %s: %s", path, strerror(errno));
	bad = mask_read(f, out, &why);
	fclose(f);
	if (bad)
		ntpx_die(NTPX_EXIT_USAGE, "--mask %s: line %zu: %s", path, bad, why);
	file_points = out->pt;
	atexit(free_points);
	return 1;
}

double mask_limit(const struct mask *m, double tau)
{
	size_t i;

	if (m->seg) {
		for (i = 0; i < m->nseg; i++)
			if (tau > m->seg[i].lo && tau <= m->seg[i].hi)
				return m->seg[i].a * tau + m->seg[i].b;
		return NAN;
	}
	if (tau < m->pt[0][0] || tau > m->pt[m->npt - 1][0])
		return NAN;
	for (i = 1; i < m->npt && tau > m->pt[i][0]; i++)
		;
	if (i == m->npt)
		i--;
	/* log-log: a straight line between the neighbours on a log-log plot */
	{
		double t0 = log(m->pt[i - 1][0]), t1 = log(m->pt[i][0]);
		double l0 = log(m->pt[i - 1][1]), l1 = log(m->pt[i][1]);

		return exp(l0 + (l1 - l0) * (log(tau) - t0) / (t1 - t0));
	}
}
