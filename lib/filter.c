/* SPDX-License-Identifier: ISC */
/*
 * filter.c - OpenNTPD's clock filter for one peer (see filter.h).
 *
 * Followed from OpenNTPD (openntpd-portable/openntpd-openbsd,
 * src/usr.sbin/ntpd, tag openntpd-6.2p3 and the current tree):
 *
 * - client.c client_dispatch(): a reply with negative delay is logged and
 *   dropped before it takes a slot or raises trust; an accepted reply is
 *   stored in reply[shift], marked good, trustlevel++ up to TRUSTLEVEL_MAX
 *   ("peer now valid" on reaching TRUSTLEVEL_BADPEER), client_update() is
 *   called, then shift advances modulo OFFSET_ARRAY_SIZE.  Lost replies
 *   advance nothing.
 * - client.c client_update(): best = the good reply with the lowest delay
 *   (the first such in slot order on a tie); nothing happens unless all
 *   OFFSET_ARRAY_SIZE slots are good; then, if priv_adjtime() takes it,
 *   the best reply and every one received no later are marked not good.
 * - ntp.c priv_adjtime(): peers below TRUSTLEVEL_BADPEER are skipped (with
 *   one peer: no update at all); after the adjustment every stored offset
 *   has the correction subtracted.
 * - ntp.c (the poll loop): a query whose deadline passes, or a receive
 *   error such as ECONNREFUSED, halves a trustlevel >= TRUSTLEVEL_BADPEER.
 *   Replies rejected for KoD or leap alarm only reschedule (set_next()
 *   clears the deadline): trust does not change.
 * - control.c build_show_peer() (ntpctl -s peers): over the slots with
 *   delay > 0, best = lowest delay; jitter = sqrt(sum((delay - best)^2) /
 *   count) over the other such slots (for a count of 1 the division is
 *   skipped, which is the same thing).  That is our djitter.  Its offset
 *   and delay are the means over the same slots (filter_means), the
 *   offsets as priv_adjtime() left them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"

void filter_init(struct filter *f, int window)
{
	memset(f, 0, sizeof(*f));
	if (window < 1)
		window = 1;
	if (window > FILTER_MAX_WINDOW)
		window = FILTER_MAX_WINDOW;
	f->window = window;
	f->trust = FILTER_TRUST_PATHETIC;
}

/* The lowest delay among occupied slots, first in slot order on a tie; -1 if none. */
static int best_slot(const struct filter *f, int64_t min_delay)
{
	int i, best = -1;

	for (i = 0; i < f->window; i++) {
		const struct filter_sample *s = &f->s[i];

		if (!s->arrival || s->delay < min_delay)
			continue;
		if (best < 0 || s->delay < f->s[best].delay)
			best = i;
	}
	return best;
}

void filter_peek(const struct filter *f, struct filter_out *out)
{
	double sj = 0, sd = 0;
	int i, best, n = 0, nj = 0, nd = 0;

	memset(out, 0, sizeof(*out));
	out->trust = f->trust;
	out->valid = f->trust >= FILTER_TRUST_BADPEER;
	for (i = 0; i < f->window; i++)
		n += f->s[i].arrival != 0;
	out->n = n;
	best = best_slot(f, 0);
	if (best < 0)
		return;
	out->off2 = f->s[best].off2;
	out->delay = f->s[best].delay;
	for (i = 0; i < f->window; i++) {
		const struct filter_sample *s = &f->s[i];
		double d;

		if (!s->arrival || i == best)
			continue;
		d = (double)(s->off2 - f->s[best].off2) / 2;
		sj += d * d;
		nj++;
	}
	out->jitter = nj ? sqrt(sj / nj) : 0;

	/* ntpctl counts only delays > 0, for the best as for the others. */
	best = best_slot(f, 1);
	if (best < 0)
		return;
	for (i = 0; i < f->window; i++) {
		const struct filter_sample *s = &f->s[i];
		double d;

		if (!s->arrival || s->delay <= 0 || i == best)
			continue;
		d = (double)(s->delay - f->s[best].delay);
		sd += d * d;
		nd++;
	}
	out->djitter = nd ? sqrt(sd / nd) : 0;
}

int filter_add(struct filter *f, int64_t off2, int64_t delay, struct filter_out *out)
{
	struct filter_sample *s;
	int i, best, fresh = 0;

	if (delay < 0) {
		filter_peek(f, out);
		return -1;
	}
	s = &f->s[f->shift];
	s->off2 = off2;
	s->delay = delay;
	s->corr = 0;
	s->arrival = ++f->arrivals;
	s->fresh = 1;
	if (f->trust < FILTER_TRUST_MAX)
		f->trust++;
	filter_peek(f, out);

	/* client_update(): the best among the fresh, once all are fresh. */
	best = -1;
	for (i = 0; i < f->window; i++) {
		if (!f->s[i].fresh)
			continue;
		fresh++;
		if (best < 0 || f->s[i].delay < f->s[best].delay)
			best = i;
	}
	if (fresh == f->window && f->trust >= FILTER_TRUST_BADPEER) {
		uint64_t used = f->s[best].arrival;
		int64_t adj = f->s[best].off2 - f->s[best].corr;

		out->update = 1;
		out->off2 = f->s[best].off2;
		out->delay = f->s[best].delay;
		for (i = 0; i < f->window; i++) {
			if (f->s[i].arrival <= used)
				f->s[i].fresh = 0;
			/* priv_adjtime() subtracts the daemon's correction. */
			if (f->s[i].arrival)
				f->s[i].corr += adj;
		}
	}
	if (++f->shift >= f->window)
		f->shift = 0;
	return 0;
}

void filter_miss(struct filter *f, struct filter_out *out)
{
	if (f->trust >= FILTER_TRUST_BADPEER)
		f->trust /= 2;
	filter_peek(f, out);
}

void filter_correct(struct filter *f, int64_t off2)
{
	int i;

	for (i = 0; i < f->window; i++) {
		if (!f->s[i].arrival)
			continue;
		f->s[i].off2 -= off2;
		f->s[i].corr -= off2;
	}
}

int filter_means(const struct filter *f, int64_t *moff2, int64_t *mdelay)
{
	double so = 0, sd = 0;
	int i, n = 0;

	for (i = 0; i < f->window; i++) {
		const struct filter_sample *s = &f->s[i];

		if (!s->arrival || s->delay <= 0)
			continue;
		so += (double)(s->off2 - s->corr);
		sd += (double)s->delay;
		n++;
	}
	*moff2 = n ? llround(so / n) : 0;
	*mdelay = n ? llround(sd / n) : 0;
	return n;
}

int filter_format(char *buf, size_t len, const struct filter_out *o)
{
	if (!o->n)
		return snprintf(buf, len, "- - - - %d %d %d %d", o->n, o->trust, o->valid,
				o->update);
	return snprintf(buf, len, "%lld %lld %lld %lld %d %d %d %d", (long long)o->off2,
			(long long)o->delay, (long long)llround(o->jitter),
			(long long)llround(o->djitter), o->n, o->trust, o->valid, o->update);
}
