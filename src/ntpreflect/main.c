/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect - an NTPv4 server for client-mode requests, on any transport.
 *
 * It answers only what a server should (admit.c), with replies no larger
 * than their requests, basic or interleaved (RFC 9769) as the client asks
 * (reply.c), and logs each datagram once the reply's send stamps have
 * come (output.c).
 *
 * This file is the wiring: the options into a config, then open the
 * clock, the transport and the log, serve, report and exit
 * (src/ntpreflect/ntpreflect.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "access.h"
#include "clock.h"
#include "opt.h"
#include "out.h"
#include "priv.h"
#include "transport.h"
#include "xleave.h"
#include "ntpreflect.h"

int main(int argc, char **argv)
{
	struct reflect_config cfg;
	struct reflector rf = { .cfg = &cfg };
	struct sigaction sa = { .sa_handler = reflect_on_signal };
	char err[256];
	int rc;

	opt_init(argv);
	reflect_options(argc, argv, &cfg);
	/* Before the log's header: a reader gone by then is an EPIPE too. */
	out_init();

	if (cfg.rl_rate > 0 && !(rf.rl = ratelimit_create(cfg.rl_rate, cfg.rl_burst)))
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	rf.clk = clock_open(cfg.clockname, err, sizeof(err));
	if (!rf.clk)
		ntpx_die(NTPX_EXIT_USAGE, "%s", err);
	/* The schedule first: a bad one opens nothing. */
	if (opt_loss_env(&cfg.ep.loss, err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	rf.t = transport_open(&cfg.ep, TRANSPORT_SERVER, err, sizeof(err));
	if (!rf.t)
		opt_open_failed(err);
	ntpx_err_lines(transport_warnings(rf.t));
	if (!cfg.nostamps) {
		rc = transport_stamps_enable(rf.t, err, sizeof(err));
		ntpx_err_lines(transport_warnings(rf.t));
		if (rc)
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", cfg.ep.url, err);
		rf.tx_layers = transport_tx_layers(rf.t);
	}
	/* Under load, one receive for the requests waiting (lib/transport.h);
	   a backend that cannot serves them one by one. */
	rc = transport_recv_ahead(rf.t, REFLECT_AHEAD, RECV_CAP, err, sizeof(err));
	if (rc < 0 && rc != -ENOTSUP)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	rf.xt = xleave_table_new(cfg.nclients);
	if (!rf.xt)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory for %llu clients",
			 (unsigned long long)cfg.nclients);
	if (cfg.nts_cert)
		reflect_nts_start(&rf);
	if (cfg.logpath)
		reflect_log_open(&rf);
	/* Everything that needs root is open: the socket bound, for uudp the
	   AF_XDP socket and its XDP program attached, the log created. */
	if (cfg.user && priv_drop(cfg.user, priv_transport_caps(&cfg.ep, TRANSPORT_SERVER),
				  err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	reflect_reply_init(&rf);
	/* For a person at a terminal: what is served, once.  A script's
	   pipe or file gets none of it (nor with --quiet). */
	if (!cfg.quiet && isatty(STDERR_FILENO)) {
		char sync[160];

		ntpx_err("serving %s, clock %s (%s), basic and interleaved modes, %s%.0llu",
			 cfg.ep.url, clock_name(rf.clk), reflect_sync_str(&rf, sync, sizeof(sync)),
			 cfg.nts_cert ? "NTS-KE on TCP port " : "no NTS",
			 cfg.nts_cert ? (unsigned long long)cfg.nts_port : 0ull);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	reflect_serve(&rf);
	reflect_nts_stop(&rf);
	if (reflect_log_close(&rf) != OUT_FAILED)
		reflect_summary(&rf);
	xleave_table_free(rf.xt);
	transport_stamps_release(rf.t);
	ntpx_err_lines(transport_warnings(rf.t));
	transport_close(rf.t);
	ratelimit_free(rf.rl);
	clock_close(rf.clk);
	return rf.out == OUT_FAILED ? NTPX_EXIT_FAIL : NTPX_EXIT_OK;
}
