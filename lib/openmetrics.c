/* SPDX-License-Identifier: ISC */
/*
 * openmetrics.c - the Prometheus text exposition format (openmetrics.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "openmetrics.h"

void om_escape(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; *in && n + 3 < cap; in++) {
		if (*in == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
			continue;
		}
		if (*in == '\\' || *in == '"')
			out[n++] = '\\';
		out[n++] = *in;
	}
	out[n] = 0;
}

/* A write's result: the first failure is kept (errno, or EIO if it has none). */
static void om_wrote(struct om *m, int rc)
{
	if (rc < 0 && !m->err)
		m->err = errno ? errno : EIO;
}

void om_init(struct om *m, FILE *f, const char *endpoint)
{
	char ep[512], tr[40], scheme[24];
	const char *sch;

	m->f = f;
	m->err = 0;
	m->labels[0] = 0;
	if (!endpoint || !*endpoint)
		return;
	sch = strstr(endpoint, "://");
	snprintf(scheme, sizeof(scheme), "%.*s", sch ? (int)(sch - endpoint) : 0, endpoint);
	om_escape(endpoint, ep, sizeof(ep));
	om_escape(scheme, tr, sizeof(tr));
	snprintf(m->labels, sizeof(m->labels), "endpoint=\"%s\",transport=\"%s\"", ep, tr);
}

void om_family(struct om *m, const char *name, const char *type, const char *help)
{
	if (m->err)
		return;
	errno = 0;
	om_wrote(m, fprintf(m->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type));
}

void om_sample(struct om *m, const char *name, const char *extra, double v)
{
	int l = m->labels[0] != 0, e = extra && *extra;

	if (m->err)
		return;
	errno = 0;
	om_wrote(m, fprintf(m->f, "%s%s%s%s%s%s %.9g\n", name, l || e ? "{" : "", m->labels,
			    l && e ? "," : "", e ? extra : "", l || e ? "}" : "", v));
}

void om_gauge(struct om *m, const char *name, const char *help, double v)
{
	om_family(m, name, "gauge", help);
	om_sample(m, name, NULL, v);
}

int om_end(struct om *m)
{
	if (!m->err) {
		errno = 0;
		om_wrote(m, fflush(m->f) == EOF ? -1 : 0);
	}
	if (!m->err && ferror(m->f))
		m->err = EIO;
	return -m->err;
}
