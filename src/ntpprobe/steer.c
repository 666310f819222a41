/* SPDX-License-Identifier: ISC */
/*
 * A record of ntpprobe complete: its status made final, the clock
 * steered with it (--discipline, lib/discipline.h: OpenNTPD's filter and
 * control loop, which may step or slew the clock), and then written
 * (output.c), so that the writer only writes.  run.c and interleave.c
 * hand it every record as it completes, in order.
 */
#include <stdint.h>

#include "discipline.h"
#include "log.h"
#include "record.h"
#include "ntpprobe.h"

/*
 * The discipline steers the clock with the record @o, between exchanges
 * and before the record is written, and leaves its columns in @o.  0,
 * or -1 with one line when it could not.
 */
static int steer(struct probe *p, struct probe_out *o)
{
	const struct record_exchange *x = &o->x;
	char err[256];
	int ok = x->status == RECORD_OK && x->have == RECORD_HAVE_ALL;

	if (discipline_sample(p->disc, ok ? RECORD_OK : x->status == RECORD_OK ?
			      RECORD_ERROR : x->status,
			      ok ? record_off2(x->t) : 0, ok ? record_delay(x->t) : 0,
			      &o->disc, err, sizeof(err))) {
		ntpx_err("%s", err);
		p->failed = 1;
		return -1;
	}
	return 0;
}

int probe_record(struct probe *p, struct probe_out *o)
{
	struct record_exchange *x = &o->x;

	/* --xleave: an interleaved reply whose transmit stamp never came
	   (the next exchange failed or the run ended). */
	if (x->status == RECORD_OK && x->have != RECORD_HAVE_ALL)
		x->status = RECORD_TIMEOUT;
	if (p->disc && steer(p, o)) {
		probe_count(p, o);	/* counted, as every exchange is */
		return -1;
	}
	return probe_emit(p, o);
}

