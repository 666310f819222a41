/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect's loop: receive a datagram, decide whether it is answered
 * (admit.c), answer it (reply.c) and queue its log line (sent.c),
 * until --count replies, a signal or a log that cannot be written.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "ntp.h"
#include "opt.h"
#include "out.h"
#include "transport.h"
#include "xleave.h"
#include "ntpreflect.h"

volatile sig_atomic_t reflect_stopping;

void reflect_on_signal(int sig)
{
	(void)sig;
	reflect_stopping = 1;
}

/* A datagram that is not answered: its line in the log. */
static void ignored(struct reflector *r, const struct transport_dgram *d, enum verdict v)
{
	struct reflect_sent *e = reflect_sent_push(r);
	int64_t t2 = d->rx_at;

	e->seq = r->seq;
	e->peer = d->peer;
	e->version = -1;
	e->mode = "-";
	e->status = reflect_verdict_names[v];
	e->st.at[XEF_T2] = t2;
	e->st.have = 1u << XEF_T2;
}

/* Serves until the end, then finishes every log line still queued. */
void reflect_serve(struct reflector *r)
{
	enum transport_poll pollmode = r->cfg->poll;
	unsigned char buf[RECV_CAP];
	/* The datagram, its peer and stamps, and the reply sent in it. */
	struct transport_dgram d = { .buf = buf, .cap = sizeof(buf) };

	/* A log that cannot be written ends the server: quietly when its
	   reader went away, with the error otherwise (lib/out.h). */
	while (!reflect_stopping && r->answered < r->cfg->count && r->out == OUT_OK) {
		struct ntp_packet q;
		enum verdict v;
		/* Busy polling cannot be woken by a signal: look up now and
		   then.  With send stamps, an idle server reads those it
		   has not after REFLECT_LINGER_NS (sent.c); set whether or
		   not any wait, so that the receive's timeout stays put. */
		int64_t deadline = pollmode == TRANSPORT_POLL_BUSY ?
			clock_monotonic_ns() + 100 * NTPX_NS_PER_MS :
			r->tx_layers ? clock_monotonic_ns() + REFLECT_LINGER_NS : INT64_MAX;
		ssize_t n = transport_recv_wait(r->t, &d, r->clk, deadline, pollmode);

		if (n == -EINTR || n == -ETIMEDOUT || n == -EAGAIN) {
			if (n != -EINTR)
				reflect_sent_flush(r, REFLECT_FLUSH_READ);
			continue;
		}
		if (n < 0) {
			/* A client that went away leaves an ICMP error behind. */
			if (n == -ECONNREFUSED || n == -EHOSTUNREACH || n == -ENETUNREACH)
				continue;
			ntpx_die(NTPX_EXIT_FAIL, "receive: %s", strerror((int)-n));
		}
		r->seq++;
		v = reflect_admit(r, &d, &q);
		r->verdicts[v]++;
		if (v == V_KISS)
			reflect_kiss(r, &d, &q);
		else if (v == V_NTS_NAK)
			reflect_nts_nak(r, &d, &q);
		else if (v == V_OK)
			reflect_answer(r, &d, &q);
		else
			ignored(r, &d, v);
		/* After the reply, never between its T2 and T3. */
		reflect_sync(r, d.rx_at);
		/* Once the requests read together are answered: the
		   interleaved replies go in one batch, and the log lines
		   whose stamps have been read are finished (sent.c). */
		if (!d.ahead) {
			reflect_send_flush(r);
			reflect_sent_flush(r, REFLECT_FLUSH_KEPT);
		}
	}
	/* Read, never looked at: counted, so that every datagram read is. */
	r->left = d.ahead;
	reflect_send_flush(r);
	reflect_sent_flush(r, REFLECT_FLUSH_ALL);
}
