/* SPDX-License-Identifier: ISC */
/*
 * ntpprobe - NTP client: one exchange per interval, one record per
 * exchange on stdout.
 *
 *   delay = (T4 - T1) - (T3 - T2)        off2 = (T2 - T1) + (T3 - T4)
 *
 * T1..T4 are taken as exchange.c says.  With a sim: clock (--clock,
 * and --server-clock for the server's), each record also carries true2,
 * twice the true offset at the exchange's midpoint (run.c), and the
 * summary counts the records whose stamps break the bound that the
 * truth must keep (output.c); --discipline runs OpenNTPD's filter and control loop
 * (lib/discipline.h) on that clock.  Where the path offers them
 * (lib/transport.h), the layers below stamp too: t1q t1k t1h, t4k t4h
 * (lib/stamp.h); --xleave asks the server for interleaved mode
 * (interleave.c), whose stamps fill t2k t3q t3k; --nts authenticates every
 * exchange (RFC 8915; nts.c), and the records carry its AEAD times.
 *
 * This file is the wiring: the options into a config, then open the
 * clock and the transport, run, report and exit (src/ntpprobe/ntpprobe.h).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "discipline.h"
#include "opt.h"
#include "out.h"
#include "priv.h"
#include "transport.h"
#include "ntpprobe.h"

int main(int argc, char **argv)
{
	struct probe_config cfg;
	struct probe p = { .cfg = &cfg };
	struct sigaction sa = { .sa_handler = probe_on_signal };
	char err[256];
	int64_t e;
	int l;

	opt_init(argv);
	probe_options(argc, argv, &cfg);
	if (cfg.cpu != UINT64_MAX) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cfg.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			ntpx_die(NTPX_EXIT_FAIL, "cannot pin to cpu %llu: %s",
				 (unsigned long long)cfg.cpu, strerror(errno));
	}
	p.clk = clock_open(cfg.clockname, err, sizeof(err));
	if (!p.clk)
		ntpx_die(NTPX_EXIT_USAGE, "%s", err);
	p.client_truth = clock_true_error(p.clk, 0, &e) == 0;
	if (cfg.server_clock && !(p.srv_clk = clock_open(cfg.server_clock, err, sizeof(err))))
		ntpx_die(NTPX_EXIT_USAGE, "%s", err);
	p.truth = p.client_truth || p.srv_clk;
	if (cfg.discipline && !(p.disc = discipline_create(p.clk, &cfg.dp, err, sizeof(err))))
		ntpx_die(NTPX_EXIT_USAGE, "%s", err);
	p.delays = dist_new();
	p.offsets = dist_new();
	p.timed_out = calloc(PROBE_LATE_SLOTS, sizeof(*p.timed_out));
	if (!p.delays || !p.offsets || !p.timed_out)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	/* The schedule first: a bad one opens nothing. */
	if (opt_loss_env(&cfg.ep.loss, err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	/* NTS-KE first: its response may name the NTP server and port
	   (RFC 8915 sections 4.1.7, 4.1.8), which the endpoint then uses. */
	if (cfg.nts) {
		p.nts = nts_client_new();
		if (!p.nts)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory");
		/* Its line is out; exit as ntpx_die() does. */
		if (probe_nts_ke(&p) < 0)
			exit(NTPX_EXIT_FAIL);
		snprintf(cfg.ep.host, sizeof(cfg.ep.host), "%s", p.ntp_host);
		cfg.ep.port = p.ntp_port;
	}
	p.t = transport_open(&cfg.ep, TRANSPORT_CLIENT, err, sizeof(err));
	if (!p.t)
		opt_open_failed(err);
	ntpx_err_lines(transport_warnings(p.t));
	if (cfg.user && priv_drop(cfg.user, priv_transport_caps(&cfg.ep, TRANSPORT_CLIENT),
				  err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);

	/* No SA_RESTART: a signal must wake the sleep and the wait. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	out_init();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!cfg.nostamps) {
		int rc = transport_stamps_enable(p.t, err, sizeof(err));

		ntpx_err_lines(transport_warnings(p.t));
		if (rc)
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", cfg.ep.url, err);
		for (l = 0; l < TRANSPORT_NLAYERS; l++)
			if (transport_stamp_source(p.t, 1, l) || transport_stamp_source(p.t, 0, l))
				p.stamping = 1;
		p.stamping |= cfg.xleave;
	}
	if (probe_write_header(&p) == OUT_OK)
		probe_run(&p);
	if (p.out != OUT_FAILED)
		probe_summary(&p);
	transport_stamps_release(p.t);
	ntpx_err_lines(transport_warnings(p.t));
	transport_close(p.t);
	nts_client_free(p.nts);
	discipline_free(p.disc);
	clock_close(p.clk);
	if (p.srv_clk)
		clock_close(p.srv_clk);
	dist_free(p.delays);
	dist_free(p.offsets);
	free(p.timed_out);
	return probe_exit_status(&p);
}
