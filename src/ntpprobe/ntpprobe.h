/* SPDX-License-Identifier: ISC */
/*
 * ntpprobe.h - what the parts of ntpprobe share (src/ntpprobe/): main.c
 * is the wiring (options, open, run, report, exit code); options.c reads
 * the command line into a struct probe_config; exchange.c is one NTP
 * exchange; run.c the schedule of exchanges (intervals, kiss codes,
 * signals); steer.c, with --discipline, steers the clock with each
 * complete record before it is written; interleave.c completes a record from the next exchange's reply
 * (--xleave); output.c writes the header, the records, #reset lines and
 * the summary, and nothing else.
 */
#ifndef NTPX_NTPPROBE_H
#define NTPX_NTPPROBE_H

#include <signal.h>
#include <stdint.h>

#include "discipline.h"
#include "dist.h"
#include "nts_client.h"
#include "record.h"
#include "stamp.h"
#include "transport.h"
#include "xleave.h"

/* The least time an NTS-KE session may take before it fails, ns. */
#define NTPX_KE_TIMEOUT_NS	(5 * NTPX_NS_PER_SEC)

/* The longest host name of a #pair header (doc/ntpx-record.5). */
#define PROBE_PAIR_NAME_MAX	63

/* What the command line asks for (options.c). */
struct probe_config {
	int64_t interval;		/* ns between requests */
	int64_t duration;		/* ns; -1: no limit */
	int64_t timeout;		/* ns to wait for a reply */
	uint64_t count;			/* exchanges; UINT64_MAX: no limit */
	uint64_t cpu;			/* UINT64_MAX: not pinned */
	enum transport_poll poll;
	const char *clockname, *user;
	int discipline;			/* --discipline */
	struct discipline_params dp;
	int nostamps;			/* --no-stamps */
	int xleave;			/* --xleave */
	int human;			/* lines for a person, not records: --human,
					   or stdout a terminal without --records */
	int once;			/* -1: one exchange, one line (not --records) */
	int json;			/* --json: one JSON object per exchange */
	int timeout_given;		/* -w, else the interval's */
	int nts;			/* --nts: NTS-KE, then authenticated exchanges */
	char nts_host[256];		/* the NTS-KE server (default: the endpoint's host) */
	char nts_port[8];		/* ... and its port (default 4460) */
	const char *ca;			/* --ca: the certificates to trust (NULL: the system's) */
	const char *server_clock;	/* --server-clock sim:PATH, else NULL */
	char pair_client[PROBE_PAIR_NAME_MAX + 1];	/* --pair, else "" */
	char pair_server[PROBE_PAIR_NAME_MAX + 1];
	struct endpoint ep;
};

/*
 * The layers whose stamps the truth bound is checked at (output.c): the
 * tools' own t1..t4; the client's kernel stamps t1k t4k with the server's
 * t2 t3; the kernel's at both ends, t1k t2k t3k t4k (t2k t3k from an
 * interleaved server).
 */
enum { PROBE_LAYER_USER, PROBE_LAYER_CLIENT_K, PROBE_LAYER_K, PROBE_NLAYERS };

/* One exchange as it will be written. */
struct probe_out {
	struct record_exchange x;
	struct stamp_row s;
	int64_t true2;
	int has_true2;
	int64_t nts_seal, nts_open;	/* --nts: this exchange's AEAD times, ns (-1: none) */
	int replied;			/* a reply answered: the fields below */
	uint8_t leap, stratum;
	uint32_t refid;			/* host order */
	uint32_t root_delay, root_disp;	/* NTP short format */
	struct discipline_out disc;	/* --discipline: its columns (run.c) */
};

/* What the last reply said of its server, for the summary. */
struct probe_server {
	int known;
	uint8_t leap, stratum;
	uint32_t refid, root_delay, root_disp;
};

/* What a reply said beyond its record, for --xleave. */
struct xleave_reply {
	int interleaved;		/* it answered in interleaved mode */
	int has_ef;			/* it carried the ntpx field */
	struct xleave_ef ef;
	int64_t xmt;			/* its transmit timestamp, ns */
};

/*
 * How many timed-out requests a reply is still counted late for: more
 * than a flood at -i 1us sends in a round trip of a few milliseconds
 * (a loaded machine's), so that a late reply is never taken for a
 * stranger.  Looked through only for a reply that answers nothing else.
 */
#define PROBE_LATE_SLOTS	16384

struct probe {
	const struct probe_config *cfg;
	struct transport *t;
	struct clock *clk;
	struct discipline *disc;	/* NULL without --discipline */
	int truth;			/* a clock knows its error: true2 written */
	int client_truth;		/* ... the client's (a sim: --clock) */
	struct clock *srv_clk;		/* --server-clock, else NULL */
	uint64_t bound_n[PROBE_NLAYERS];	/* records held against the truth
						   bound at each layer (output.c) */
	uint64_t bound_broken[PROBE_NLAYERS];	/* ... and those that broke it */
	uint64_t counts[RECORD_NSTATUS];
	uint64_t sent, late;
	uint64_t *timed_out;		/* the nonces of the last PROBE_LATE_SLOTS
					   requests that timed out, for late replies */
	unsigned timed_out_next;
	int paced;			/* the path was found slower than -i or -w
					   allows, and said so (once) */
	unsigned slow_run;		/* answered exchanges in a row that took
					   longer than the interval */
	int failed;			/* the discipline could not act on the clock */
	int kissed_off;			/* a DENY or RSTR kiss ended the run */
	int device_gone;		/* the transport said ENODEV: the run ends */
	int out;			/* stdout's state (lib/out.h) */
	struct dist *delays;		/* of ok exchanges, for the summary (ns) */
	struct dist *offsets;		/* ... and their off2, ns */
	double off_mean, off_m2;	/* Welford: the offsets' mean and the sum
					   of squared deviations, ns */
	struct probe_server server;
	int64_t ref1;			/* CLOCK_REALTIME behind T1 (sim: clocks) */
	char kiss[5];			/* the last exchange's kiss code, or "" */
	int8_t kiss_poll;		/* ... and the poll its reply asked for */
	int stamping;			/* stamp columns written */
	uint64_t srv_rec;		/* the receive timestamp of the last good
					   reply, as sent (0: none) */
	uint64_t interleaved;		/* replies in interleaved mode */
	struct probe_out pending;	/* --xleave: the record waiting for the
					   next reply (x.seq 0: none) */
	struct nts_client *nts;		/* --nts, else NULL */
	int nts_rekey;			/* a NAK and no authentic reply: NTS-KE
					   before the next request */
	char nts_server[272];		/* what the last NTS-KE response named, or "" */
	char ntp_host[256];		/* the NTP server it sends the run to, */
	uint16_t ntp_port;		/* the endpoint's where it names none */
	uint64_t nts_bogus;		/* replies whose identifier or authenticator failed */
	uint64_t nts_naks, nts_ke_runs;
};

/* options.c: exits with a usage error on a bad command line. */
void probe_options(int argc, char **argv, struct probe_config *cfg);

/* exchange.c: one exchange; fills @o, and @xr for --xleave. */
void probe_exchange(struct probe *p, uint64_t seq, struct probe_out *o,
		    struct xleave_reply *xr);

/* nts.c: runs NTS-KE and takes its keys and cookies, and the NTP server
   it names into ntp_host and ntp_port (before the endpoint is open: the
   run's; after: it must be the one in use); 0, or -1 after one line on
   stderr, the cookies as they were. */
int probe_nts_ke(struct probe *p);

/* run.c */
extern volatile sig_atomic_t probe_stopping;	/* SIGINT/SIGTERM came */
void probe_on_signal(int sig);
void probe_run(struct probe *p);

/* steer.c: a record complete: its status final, the discipline steers
   the clock with it (--discipline), then output.c writes it.  -1 when
   the run must end: the discipline failed (p->failed) or the output did
   (p->out). */
int probe_record(struct probe *p, struct probe_out *o);

/* interleave.c */
int probe_xleave_record(struct probe *p, struct probe_out *o, const struct xleave_reply *xr);
void probe_xleave_finish(struct probe *p, uint64_t seq);

/* output.c */
int probe_write_header(struct probe *p);
void probe_count(struct probe *p, const struct probe_out *o);
int probe_emit(struct probe *p, const struct probe_out *o);
int probe_write_reset(struct probe *p, uint64_t seq);
void probe_summary(struct probe *p);
/* 0 when at least one exchange was ok and nothing failed, or the reader
   of the records went away; else 1. */
int probe_exit_status(const struct probe *p);

#endif
