/* SPDX-License-Identifier: ISC */
/*
 * endpoint.c - endpoint URLs (endpoint.h): the syntax, the bare forms
 * that mean udp://, and each scheme's keys, from the table of schemes its
 * caller hands it (transport.c's, from its backends).  Names are not
 * resolved here.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "endpoint.h"

/* A URL's scheme is case-insensitive (RFC 3986 3.1): UDP:// is udp://. */
static const struct endpoint_scheme *scheme_find(const struct endpoint_scheme *tab,
						  const char *name)
{
	for (; tab->name; tab++)
		if (strcasecmp(tab->name, name) == 0)
			return tab;
	return NULL;
}

static void schemes_list(const struct endpoint_scheme *tab, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = 0;
	for (i = 0; n < len && tab[i].name; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", tab[i].name);
}

/* Copies [s, e) into dst of size cap; -1 when it does not fit. */
static int copy_span(char *dst, size_t cap, const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	if (n >= cap)
		return -1;
	memcpy(dst, s, n);
	dst[n] = 0;
	return 0;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static int parse_params(const char *q, struct endpoint *ep, const struct endpoint_scheme *sch,
			char *err, size_t errlen)
{
	while (*q) {
		const char *amp = strchr(q, '&');
		const char *end = amp ? amp : q + strlen(q);
		const char *eq = memchr(q, '=', (size_t)(end - q));
		const char *const *k;
		int i;

		if (!eq || eq == q)
			FAIL("bad parameter '%.*s' (expected KEY=VALUE)", (int)(end - q), q);
		if (ep->nparams == ENDPOINT_MAX_PARAMS)
			FAIL("too many parameters (at most %d)", ENDPOINT_MAX_PARAMS);
		i = ep->nparams;
		if (copy_span(ep->param[i].key, sizeof(ep->param[i].key), q, eq))
			FAIL("parameter name too long: '%.*s'", (int)(eq - q), q);
		if (copy_span(ep->param[i].value, sizeof(ep->param[i].value), eq + 1, end))
			FAIL("value of '%s' too long", ep->param[i].key);
		if (!ep->param[i].value[0])
			FAIL("parameter '%s' has no value", ep->param[i].key);
		for (k = sch->params; *k; k++)
			if (strcmp(*k, ep->param[i].key) == 0)
				break;
		if (!*k)
			FAIL("unknown parameter '%s' for %s", ep->param[i].key, sch->name);
		if (endpoint_param(ep, ep->param[i].key))
			FAIL("parameter '%s' given twice", ep->param[i].key);
		ep->nparams++;
		q = amp ? amp + 1 : end;
		if (amp && !*q)
			FAIL("empty parameter after '&'");
	}
	return 0;
}

/*
 * Parses the full URL @url (a scheme in front); errors quote @shown, what
 * the user typed.
 */
static int parse_url(const char *url, const char *shown, const struct endpoint_scheme *tab,
		     struct endpoint *ep, char *err, size_t errlen)
{
	const struct endpoint_scheme *sch;
	const char *p, *hs, *he, *q;
	char list[128];

	memset(ep, 0, sizeof(*ep));
	if (copy_span(ep->url, sizeof(ep->url), url, url + strlen(url)))
		FAIL("endpoint too long");
	p = strstr(url, "://");
	if (p == url || copy_span(ep->scheme, sizeof(ep->scheme), url, p))
		FAIL("endpoint '%s' has a bad scheme", shown);
	sch = scheme_find(tab, ep->scheme);
	if (!sch) {
		schemes_list(tab, list, sizeof(list));
		FAIL("unknown scheme '%s' (this build has: %s)", ep->scheme, list);
	}
	/* Its canonical spelling, in the URL a record's header shows too. */
	memcpy(ep->scheme, sch->name, strlen(sch->name) + 1);
	memcpy(ep->url, sch->name, strlen(sch->name));
	hs = p + 3;
	if (*hs == '[') {
		he = strchr(hs, ']');
		if (!he)
			FAIL("endpoint '%s': '[' without ']'", shown);
		if (copy_span(ep->host, sizeof(ep->host), hs + 1, he) || he == hs + 1)
			FAIL("endpoint '%s': bad address in brackets", shown);
		p = he + 1;
	} else {
		he = hs + strcspn(hs, ":?/");
		if (he == hs)
			FAIL("endpoint '%s' has no host", shown);
		if (copy_span(ep->host, sizeof(ep->host), hs, he))
			FAIL("endpoint '%s': host name too long", shown);
		p = he;
	}
	ep->port = 123;
	if (*p == ':') {
		unsigned long port = 0;
		const char *d = ++p;

		for (; *p >= '0' && *p <= '9'; p++) {
			port = port * 10 + (unsigned long)(*p - '0');
			if (port > 65535)
				FAIL("endpoint '%s': port out of range", shown);
		}
		if (p == d && (!*p || *p == '/' || *p == '?'))
			FAIL("endpoint '%s': missing port after ':'", shown);
		if (p == d)
			FAIL("endpoint '%s': bad port '%.*s' (a number, 0..65535)", shown,
			     (int)strcspn(p, "/?"), p);
		ep->port = (uint16_t)port;
	}
	if (*p == '/')
		p++;
	if (*p && *p != '?')
		FAIL("endpoint '%s': unexpected '%s' after the port", shown, p);
	q = *p == '?' ? p + 1 : p;
	if (parse_params(q, ep, sch, err, errlen))
		return -1;
	return sch->check ? sch->check(ep, err, errlen) : 0;
}

/*
 * "udp:/10.0.0.1", "udp:10.0.0.1", "uudp:host:123": a scheme, but not
 * "://".  Returns the scheme's length when @url starts with a word and a
 * colon that is a scheme of ours or followed by '/'; else 0.
 */
static size_t scheme_without_slashes(const char *url, const struct endpoint_scheme *tab)
{
	char name[16];
	size_t n = 0;

	if (!isalpha((unsigned char)url[0]))
		return 0;
	while (isalnum((unsigned char)url[n]) || url[n] == '+' || url[n] == '-' || url[n] == '.')
		n++;
	if (url[n] != ':' || n >= sizeof(name))
		return 0;
	memcpy(name, url, n);
	name[n] = 0;
	return url[n + 1] == '/' || scheme_find(tab, name) ? n : 0;
}

/* IPv6 address literals hold two colons or more; names and IPv4 none. */
static int bare_ipv6(const char *s, size_t n)
{
	size_t i, colons = 0;

	for (i = 0; i < n; i++)
		colons += s[i] == ':';
	return colons >= 2;
}

int endpoint_parse(const char *url, const struct endpoint_scheme *schemes, struct endpoint *ep,
		   char *err, size_t errlen)
{
	char full[sizeof(ep->url)];
	const char *p;
	size_t hostlen;
	int n;

	memset(ep, 0, sizeof(*ep));
	/* Errors quote the endpoint: keep them one printable line. */
	for (p = url; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			FAIL("endpoint has a control character at position %zu", (size_t)(p - url));
	if (strstr(url, "://"))
		return parse_url(url, url, schemes, ep, err, errlen);
	hostlen = scheme_without_slashes(url, schemes);
	if (hostlen)
		FAIL("endpoint '%s': a scheme takes '://' (%.*s://%s)", url, (int)hostlen, url,
		     url + hostlen + 1 + strspn(url + hostlen + 1, "/"));
	/*
	 * No scheme: HOST[:PORT][?KEY=VALUE...] is udp://, as every NTP
	 * client takes a bare host.  A bare IPv6 literal ("::1", "fe80::1")
	 * is the whole host, put in brackets; "[::1]:123" as in a URL.
	 */
	if (!*url)
		FAIL("empty endpoint");
	hostlen = strcspn(url, "?");
	if (url[0] != '[' && bare_ipv6(url, hostlen))
		n = snprintf(full, sizeof(full), "udp://[%.*s]%s", (int)hostlen, url, url + hostlen);
	else
		n = snprintf(full, sizeof(full), "udp://%s", url);
	if (n < 0 || (size_t)n >= sizeof(full))
		FAIL("endpoint too long");
	if (parse_url(full, url, schemes, ep, err, errlen))
		return -1;
	/* The URL it stands for, port included: what a record's header says. */
	n = snprintf(full, sizeof(full), strchr(ep->host, ':') ? "udp://[%s]:%u%s" : "udp://%s:%u%s",
		     ep->host, ep->port, strchr(url, '?') ? strchr(url, '?') : "");
	if (n < 0 || (size_t)n >= sizeof(ep->url))
		FAIL("endpoint too long");
	memcpy(ep->url, full, (size_t)n + 1);
	return 0;
}

const char *endpoint_param(const struct endpoint *ep, const char *key)
{
	int i;

	for (i = 0; i < ep->nparams; i++)
		if (strcmp(ep->param[i].key, key) == 0)
			return ep->param[i].value;
	return NULL;
}

