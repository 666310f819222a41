/* SPDX-License-Identifier: ISC */
/*
 * loadgen.h - what the parts of loadgen share (src/loadgen/): main.c
 * reads the options and starts one of the three programs, sink.c
 * (--sink), sender.c (the paced sender and --calibrate) and flood.c
 * (--ntp, the NTP request flood); common.c has the output and waiting
 * they all use.  The wire protocol between sender and sink is
 * lib/loadproto.h.
 */
#ifndef NTPX_LOADGEN_H
#define NTPX_LOADGEN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define MAX_DGRAM	65507		/* largest UDP payload over IPv4 */
#define BATCH		16		/* messages per send_batch */
#define RBATCH		32		/* messages per recv_batch */
#define CATCHUP_NS	(50 * NTPX_NS_PER_MS)	/* a late sender sends what it owes, up to this */
#define FIN_RESEND_NS	(100 * NTPX_NS_PER_MS)	/* FIN again until the sink accounts for all */
#define FIN_WAIT_NS	(10 * NTPX_NS_PER_SEC)	/* ... or a sink gone without a word */
#define RBUF		(65536 + 4096)	/* a GRO message: up to 64 KiB */
/* A --nts request: header, identifier, a cookie of up to 256 bytes, the
   authenticator. */
#define NTS_FLOOD_REQ_MAX	(48 + 36 + 4 + 256 + 40)
#define MAX_RUNS	32		/* senders a sink keeps apart */
#define WARMUP_NS	(500 * NTPX_NS_PER_MS)	/* calibration ignores the first 0.5 s,
					   or a quarter of a shorter run */

/* What the options asked for, every value parsed and checked by main.c
   before the endpoint is opened. */
struct load_opts {
	const char *url;		/* the endpoint, for messages */
	double rate;			/* --rate, bit/s (with --capacity: its share); 0: all it can */
	double frac;			/* --rate N% without --capacity: of a calibration run */
	double ntp;			/* --ntp, requests a second; 0: no flood */
	size_t size;			/* --size; 0: the path MTU's */
	int64_t on, off;		/* --burst ON/OFF; 0: no bursts */
	int64_t start;			/* --start, realtime ns; -1: the next whole second */
	int nts;			/* --nts: NTS fields in --ntp's requests */
	char nts_host[256], nts_port[8];	/* the NTS-KE server */
	const char *ntp_host;		/* the endpoint's host and port, which */
	uint16_t ntp_port;		/* NTS-KE must not send the flood away from */
	const char *ca;			/* --ca, NULL: the system's */
	int family;			/* -4, -6: for the NTS-KE server's name */
	int calibrate, gso;
	int64_t interval, timeout;
	int64_t duration;		/* ns; -1 when not given */
};

/* common.c */
extern volatile sig_atomic_t stopping;	/* set by SIGINT/SIGTERM or a failed write */
extern int loadgen_out;			/* OUT_OK, or how stdout failed (lib/out.h) */
void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void emit_flush(void);
void print_fields(void);
void sleep_ns(int64_t ns);
void wait_readable(struct transport *t, int64_t ns);
void wait_writable(struct transport *t);

/* sink.c: receives load and reports to each sender; exit code. */
int run_sink(struct transport *t, int64_t interval, int64_t duration);

/* sender.c */
/* The sink's cumulative counters for one sender's run. */
struct report {
	uint64_t elapsed;	/* ns since the run's first datagram, at the sink */
	uint64_t bytes;		/* payload bytes received */
	uint64_t packets;
	uint64_t lost;		/* sequence numbers never seen */
	int valid;
};

struct sender {
	struct transport *t;
	uint32_t run;
	size_t size;		/* datagram payload */
	size_t per_msg;		/* datagrams per message (GSO) */
	double rate;		/* payload bit/s; 0: as fast as it goes */
	int64_t duration;	/* ns; 0: until a signal */
	int64_t interval;
	int64_t on, off;	/* burst schedule, ns; off 0: always on */
	int64_t start_rt;	/* realtime ns the schedule is aligned to */
	int quiet;		/* no interval lines (calibration) */
	int64_t warmup;		/* calibration ignores what the sink saw before */
	int sink_time;		/* calibration: the duration is the sink's, who
				   measures (its reports' elapsed time) */

	uint64_t seq;
	uint64_t sent_bytes, sent_packets, send_errors;
	struct report first_warm, last, line;	/* sink reports */
	int got_report;
};

int run_sender(struct sender *s);
double calibrate_path(const struct sender *proto, int64_t duration);
/* The sender (or --calibrate) as @o asks, on @t; exit code. */
int sender_main(struct transport *t, const struct load_opts *o);

/* flood.c */
struct flood {
	struct transport *t;
	double rate;		/* requests per second */
	int64_t duration, interval, timeout;
	uint32_t nonce;
	uint64_t sent, replies, dup, other, late, unsent;
	unsigned char *seen;	/* bit per request, a ring of SEEN_BITS (flood.c) */
	uint64_t cleared;	/* requests below this have their bit fresh */
	/* The server's response time, transmit less receive timestamp of
	   each counted reply, in ns (as ntpperf reports it). */
	uint64_t rt_n;
	int64_t rt_min, rt_max;
	double rt_sum, rt_sq;
	struct nts_flood *nts;	/* --nts, else NULL (nts.c) */
};

int run_flood(struct flood *f);

/* nts.c: NTS-KE with @o's server (NULL with @err, also when the response
   sends the client to another NTP server than @o's endpoint), and each
   request's NTS fields after its 48-byte header, sealed: its length, 0 if
   it did not fit. */
struct nts_flood;
struct nts_flood *nts_flood_new(const struct load_opts *o, char *err, size_t errlen);
void nts_flood_free(struct nts_flood *n);
size_t nts_flood_request(struct nts_flood *n, unsigned char *pkt, size_t cap, uint64_t seq);
/* --ntp as @o asks, on @t; exit code. */
int flood_main(struct transport *t, const struct load_opts *o);

#endif
