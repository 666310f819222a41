/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect.h - what the parts of ntpreflect share (src/ntpreflect/):
 * main.c is the wiring (options, open, serve, report, exit code);
 * options.c reads the command line into a struct reflect_config;
 * admit.c decides which datagrams are answered (--allow, --ratelimit,
 * the shape of a request); reply.c builds and sends the replies, basic,
 * interleaved or a RATE kiss; serve.c is the receive loop; sent.c the
 * queue of datagrams whose log lines wait for the replies' send stamps;
 * output.c the log (--log) and the counts at exit; nts.c Network Time
 * Security (--nts-cert): the check of requests; ke.c its NTS-KE server.
 */
#ifndef NTPX_NTPREFLECT_H
#define NTPX_NTPREFLECT_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "access.h"
#include "log.h"
#include "ntp.h"
#include "nts_server.h"
#include "nts_tls.h"
#include "transport.h"
#include "xleave.h"

#define RECV_CAP	2048
/* What a server synchronised by the host's daemon announces without
   --stratum: the kernel does not say the daemon's stratum, and 2 is the
   least it can be (doc/ntpreflect.1). */
#define REFLECT_STRATUM_SYNCED	2
#define REFLECT_AHEAD	8	/* requests taken per receive, where waiting */
#define MAX_ALLOW	64

/* What the command line asks for (options.c). */
struct reflect_config {
	uint64_t stratum;		/* 1..15, with local */
	uint32_t refid;
	int local;			/* --stratum or --refid: a local reference,
					   stated on purpose; else the kernel's
					   synchronisation state says */
	int quiet;			/* --quiet: no line at startup */
	uint64_t count;			/* requests to answer; UINT64_MAX: no limit */
	uint64_t nclients;		/* interleaved-mode slots */
	const char *logpath, *user;	/* NULL: none */
	const char *clockname;		/* --clock: T2 and T3 read from it */
	enum transport_poll poll;
	int nostamps;			/* --no-stamps */
	struct access_net allow[MAX_ALLOW];
	int nallow;			/* 0: every client */
	double rl_rate, rl_burst;	/* --ratelimit; rate 0: off */
	const char *nts_cert, *nts_key;	/* --nts-cert, --nts-key; NULL: no NTS */
	uint64_t nts_port;		/* --nts-port: NTS-KE's TCP port (4460) */
	int64_t nts_rotate;		/* --nts-rotate: the server key's period, ns */
	struct endpoint ep;
};

/* Why a datagram was not answered: counted, logged, never replied to. */
enum verdict {
	V_OK,
	V_SHORT,	/* shorter than an NTP header */
	V_TRUNCATED,	/* longer than we read: cut off */
	V_MALFORMED,	/* extension fields or MAC of no valid shape */
	V_VERSION,	/* version 0 or above 4 */
	V_CONTROL,	/* mode 6 */
	V_PRIVATE,	/* mode 7 */
	V_MODE,		/* any other mode than client */
	V_DENIED,	/* from outside every --allow network */
	V_RATE,		/* over --ratelimit, not even a kiss */
	V_KISS,		/* over --ratelimit: answered with a RATE kiss */
	V_NTS_BAD,	/* NTS fields malformed or not authentic: dropped */
	V_NTS_NAK,	/* a cookie we cannot open: answered with an NTS NAK */
	V_NVERDICT
};

extern const char *const reflect_verdict_names[V_NVERDICT];

/*
 * A datagram answered or ignored, whose log line waits for the reply's
 * send stamps; and the client slot those stamps belong to.
 */
struct reflect_sent {
	uint64_t seq;
	struct transport_addr peer;
	struct xleave_client *c;	/* NULL: no client state */
	unsigned char key[124];		/* the client's key in the table */
	size_t keylen;
	uint32_t txid;
	int want;			/* the reply's send stamps are awaited */
	int version;			/* -1 for an ignored datagram */
	const char *status;
	const char *mode;		/* "basic", "interleaved" or "-" */
	struct xleave_ef st;		/* t2 t2k t2h t3, then t3q t3k t3h */
	int64_t nts_open, nts_seal;	/* --nts: ns; -1: none */
};

#define REFLECT_SENT_QUEUE	32		/* < TRANSPORT_TX_KEEP */

struct reflector {
	const struct reflect_config *cfg;
	struct transport *t;
	struct clock *clk;
	struct xleave_table *xt;	/* interleaved mode's client slots */
	struct ratelimit *rl;		/* NULL without --ratelimit */
	struct ntp_packet reply;	/* what every reply says the same way */
	int64_t sync_at;		/* T2 when the kernel's state was last read
					   into reply (0: never) */
	uint32_t disp_min;		/* the root dispersion of one clock reading */
	unsigned tx_layers;		/* the send layers the path stamps
					   (transport_tx_layers()) */
	FILE *log;			/* NULL without --log */
	const char *logname;
	int out;			/* the log's state (lib/out.h) */
	struct reflect_sent q[REFLECT_SENT_QUEUE];
	unsigned head, n;
	/* The interleaved replies waiting in the backend's batch: their
	   entries' places in q, in the order sent (reflect_send_flush). */
	unsigned batch[REFLECT_AHEAD], nbatch;
	/* --nts-cert: the cookie keys, TLS, the NTS-KE server (ke.c); the
	   request being answered (nts.c); the lines about clients, at most
	   NTS_LINES_PER_MIN a minute (both threads'). */
	struct nts_server *nts;
	struct nts_tls_server *tls;
	struct reflect_ke *ke;
	int nts_req;			/* the request being answered is NTS */
	struct nts_server_req nreq;
	int64_t nts_open;
	uint64_t ke_ok, ke_failed, ke_refused;
	pthread_mutex_t line_lock;
	struct log_limit lines;
	/* Counts, for the summary. */
	uint64_t seq;			/* datagrams received */
	uint64_t answered, verdicts[V_NVERDICT], send_errors, dropped, interleaved;
	uint64_t left;		/* read ahead, and the server ended before them */
};

/* options.c: exits with a usage error on a bad command line. */
void reflect_options(int argc, char **argv, struct reflect_config *cfg);

/* admit.c: whether the datagram @d is answered; a request is decoded
   into @q on the way. */
enum verdict reflect_admit(struct reflector *r, const struct transport_dgram *d,
			   struct ntp_packet *q);

/* reply.c */
void reflect_reply_init(struct reflector *r);
void reflect_sync(struct reflector *r, int64_t now);
const char *reflect_sync_str(const struct reflector *r, char *buf, size_t len);
/* The reply goes in @d, the request's own struct: to its peer, with T3
   and the send id beside the request's stamps. */
void reflect_kiss(struct reflector *r, struct transport_dgram *d, const struct ntp_packet *q);
void reflect_answer(struct reflector *r, struct transport_dgram *d, const struct ntp_packet *q);

/* serve.c */
extern volatile sig_atomic_t reflect_stopping;	/* SIGINT/SIGTERM came */
void reflect_on_signal(int sig);
void reflect_serve(struct reflector *r);

/* sent.c: the queue of datagrams whose log lines wait for send stamps */
void reflect_sent_ef_tx(struct xleave_ef *e, const struct transport_stamps *ts);
struct reflect_sent *reflect_sent_push(struct reflector *r);
enum reflect_flush { REFLECT_FLUSH_KEPT, REFLECT_FLUSH_READ, REFLECT_FLUSH_ALL };
void reflect_sent_flush(struct reflector *r, enum reflect_flush how);
void reflect_send_flush(struct reflector *r);
/* How long an idle server leaves log lines waiting for send stamps that
   it has not read yet (serve.c). */
#define REFLECT_LINGER_NS	(50 * NTPX_NS_PER_MS)

/* ke.c: NTS-KE, sessions side by side (see there) */
#define KE_SESSIONS		16	/* at once, each a thread of its own */
#define KE_SESSIONS_STR		"16"
#define KE_PER_ADDR		4	/* ... of one client address (IPv6: /64) */
#define KE_PER_ADDR_STR		"4"
#define KE_DEADLINE_NS		(2 * NTPX_NS_PER_SEC)	/* a session, all of it */
struct reflect_ke;
void reflect_nts_start(struct reflector *r);
void reflect_nts_stop(struct reflector *r);

/* nts.c */
#define NTS_LINES_PER_MIN	100
/* "PEER: WHAT: WHY" on stderr, as the limit allows (any thread); at
   the end, how many the last minute held back. */
void reflect_nts_line(struct reflector *r, const char *peer, const char *what, const char *why);
void reflect_nts_lines_end(struct reflector *r);
enum verdict reflect_nts_check(struct reflector *r, const struct transport_dgram *d,
			       enum verdict v);
void reflect_nts_nak(struct reflector *r, const struct transport_dgram *d,
		     const struct ntp_packet *q);

/* output.c */
void reflect_log_open(struct reflector *r);
void reflect_log_line(struct reflector *r, const struct reflect_sent *e);
int reflect_log_close(struct reflector *r);
void reflect_summary(const struct reflector *r);

#endif
