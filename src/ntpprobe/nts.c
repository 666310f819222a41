/* SPDX-License-Identifier: ISC */
/*
 * ntpprobe --nts: NTS-KE (lib/nts_tls.c) at the start, and again when
 * the cookies run out or a NAK that no authentic reply followed asks for
 * it; the exchanges themselves carry the fields of lib/nts_client.c
 * (exchange.c).
 *
 * The response may name the NTP server and port to use (RFC 8915
 * sections 4.1.7 and 4.1.8).  The first one's are used: main.c opens the
 * endpoint with them in place of the URL's host and port.  A later
 * response that names another server than the one the run uses is
 * refused with one line (the transport is not reopened mid-run).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "log.h"
#include "nts_client.h"
#include "nts_tls.h"
#include "opt_units.h"
#include "ntpprobe.h"

int probe_nts_ke(struct probe *p)
{
	const struct probe_config *cfg = p->cfg;
	/* Static: the response holds 8 cookies of up to 256 bytes. */
	static struct nts_ke_msg resp;
	struct nts_keys keys;
	char err[512], host[sizeof(cfg->ep.host)];
	uint16_t port = cfg->ep.port;
	int family = cfg->ep.family, rc = -1;
	int v6 = strchr(cfg->nts_host, ':') != NULL;

	p->nts_ke_runs++;
	if (nts_tls_client(cfg->nts_host, cfg->nts_port, cfg->ca, family ? family : AF_UNSPEC,
			   cfg->timeout > NTPX_KE_TIMEOUT_NS ? cfg->timeout : NTPX_KE_TIMEOUT_NS,
			   &resp, &keys, err, sizeof(err)) < 0) {
		ntpx_err("%s", err);
		return -1;
	}
	snprintf(host, sizeof(host), "%s", cfg->ep.host);
	if (nts_ke_ntp_server(&resp, host, sizeof(host), &port) < 0) {
		ntpx_err("nts-ke %s%s%s:%s: server name '%s' too long", v6 ? "[" : "", cfg->nts_host,
			 v6 ? "]" : "", cfg->nts_port, resp.server);
		goto out;
	}
	if (p->t && (strcasecmp(host, cfg->ep.host) != 0 || port != cfg->ep.port)) {
		ntpx_err("nts-ke %s%s%s:%s: the response names NTP server %s port %u, not %s port %u, "
			 "which this run uses", v6 ? "[" : "", cfg->nts_host, v6 ? "]" : "",
			 cfg->nts_port, host, port, cfg->ep.host, cfg->ep.port);
		goto out;
	}
	if (nts_client_set(p->nts, &keys, &resp, err, sizeof(err)) < 0) {
		ntpx_err("%s", err);
		goto out;
	}
	snprintf(p->ntp_host, sizeof(p->ntp_host), "%s", host);
	p->ntp_port = port;
	if (resp.server[0] || resp.port >= 0)
		snprintf(p->nts_server, sizeof(p->nts_server), "%s:%d",
			 resp.server[0] ? resp.server : "-", resp.port >= 0 ? resp.port : 123);
	rc = 0;
out:
	explicit_bzero(&keys, sizeof(keys));
	return rc;
}
