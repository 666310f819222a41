/* SPDX-License-Identifier: ISC */
/*
 * nts_ke.h - the records of NTS Key Establishment (RFC 8915 section 4),
 * encoded and parsed.  No I/O and no cryptography: what goes over the TLS
 * session (lib/nts_tls.c) is built and read here.
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |C|         Record Type         |          Body Length          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * .                        Record Body                            .
 *
 * The body length counts the body only (an NTP extension field's length
 * counts its header too).  A message is a run of records ending with End
 * of Message; a record of a type we do not know is skipped unless its
 * critical bit C is set, which makes the whole message unusable
 * (section 4.1.1).
 */
#ifndef NTPX_NTS_KE_H
#define NTPX_NTS_KE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NTS_KE_PORT		4460
#define NTS_KE_ALPN		"ntske/1"
/* The TLS exporter's label (section 5.1). */
#define NTS_KE_EXPORTER		"EXPORTER-network-time-security"

enum nts_ke_type {
	NTS_KE_END = 0,
	NTS_KE_NEXT_PROTO = 1,
	NTS_KE_ERROR = 2,
	NTS_KE_WARNING = 3,
	NTS_KE_AEAD = 4,
	NTS_KE_COOKIE = 5,
	NTS_KE_SERVER = 6,
	NTS_KE_PORT_REC = 7,
};
#define NTS_KE_CRITICAL		0x8000

/* Error record codes (section 4.1.3). */
enum {
	NTS_KE_ERR_UNRECOGNIZED = 0,
	NTS_KE_ERR_BAD_REQUEST = 1,
	NTS_KE_ERR_INTERNAL = 2,
};

#define NTS_PROTO_NTPV4		0
#define NTS_AEAD_SIV_CMAC_256	15	/* AEAD_AES_SIV_CMAC_256 (RFC 5297) */
#define NTS_KEY_LEN		32	/* its key, C2S and S2C alike, bytes */

#define NTS_COOKIES_MAX		8	/* what a client keeps (section 4.1.6) */
#define NTS_COOKIE_MAX		256	/* the longest cookie we take, bytes */
#define NTS_KE_LIST_MAX		8	/* protocol or AEAD IDs kept of a list */
#define NTS_KE_MSG_MAX		16384	/* the longest message we read, bytes */

/* One message, parsed.  A list never seen has n... = -1. */
struct nts_ke_msg {
	int nprotos;				/* -1: no Next Protocol record */
	uint16_t protos[NTS_KE_LIST_MAX];
	int naeads;				/* -1: no AEAD record */
	uint16_t aeads[NTS_KE_LIST_MAX];
	int error;				/* -1, or the Error record's code */
	int warning;				/* -1, or the Warning record's code */
	unsigned ncookies;			/* kept, at most NTS_COOKIES_MAX */
	unsigned cookies_seen;			/* in the message, kept or not */
	uint16_t cookie_len[NTS_COOKIES_MAX];
	unsigned char cookie[NTS_COOKIES_MAX][NTS_COOKIE_MAX];
	char server[256];			/* "": no Server record */
	int port;				/* -1: no Port record */
};

/* An empty message: no records seen. */
void nts_ke_msg_init(struct nts_ke_msg *m);

/*
 * Appends a record of @type (with NTS_KE_CRITICAL or'ed in when it is
 * critical) and its @len bytes of @body to @buf (capacity @cap) at *@off,
 * and advances *@off.  Returns 0, or -1 when it does not fit (the buffer
 * is then as it was).
 */
int nts_ke_put(void *buf, size_t cap, size_t *off, unsigned type, const void *body, size_t len);

/*
 * The whole of @m as a message into @buf: Next Protocol, Error, Warning,
 * AEAD, the cookies, Server, Port (each only when @m has it), then End of
 * Message.  A client's request is a message with protos {0} and aeads
 * {15}.  Returns its length, or -1 when it does not fit in @cap.
 */
ssize_t nts_ke_build(void *buf, size_t cap, const struct nts_ke_msg *m);

/*
 * Parses the message at the start of @buf (@len bytes received so far)
 * into @m.  Returns its length through End of Message (> 0; bytes after
 * it are the caller's); 0 when what is there is well formed but has no
 * End of Message yet (read more, or at the end of the stream, a
 * truncated message); -1 when it is malformed, with *@why one line saying
 * how ("record 3 (AEAD): odd body length 5").
 *
 * Malformed: a body of the wrong length for its type (End of Message
 * empty; Error, Warning and Port two bytes; Next Protocol and AEAD a
 * whole number of 16-bit IDs; a cookie of 1 to NTS_COOKIE_MAX bytes; a
 * server name of 1 to 255 printable ASCII characters), a type seen
 * twice where it may appear once, an unknown critical record, or a
 * message longer than NTS_KE_MSG_MAX.  Up to NTS_KE_LIST_MAX IDs and
 * NTS_COOKIES_MAX cookies are kept; more are counted and dropped.
 */
ssize_t nts_ke_parse(const void *buf, size_t len, struct nts_ke_msg *m, const char **why);

/*
 * Judges a server's response for a client that asked for NTPv4 and
 * AES-SIV-CMAC-256: 0 when it is usable (exactly those, and at least one
 * cookie), else -1 with *@why (an Error record, a refused protocol or
 * AEAD, no cookies, a Warning record: section 4.1.4 defines no codes,
 * so every one is unrecognised and an error; a Port record of 0).
 */
int nts_ke_check_response(const struct nts_ke_msg *m, const char **why);

/*
 * The NTP server the checked response @m sends the client to (sections
 * 4.1.7 and 4.1.8): @host (a string of @hostlen bytes) and *@port, the
 * client's defaults, are replaced by its Server and Port records where
 * it has them.  Returns 1 when either changed (a name is compared
 * without regard to case), 0 when neither did, -1 when the name does not
 * fit in @hostlen (nothing changed).
 */
int nts_ke_ntp_server(const struct nts_ke_msg *m, char *host, size_t hostlen, uint16_t *port);

/*
 * What a server answers to the request @req (section 4): into @resp
 * (initialised here) the protocol and AEAD it picks, or an Error record
 * (bad request: no Next Protocol or AEAD list).  Returns 1 when the
 * request can be served (keys to export, cookies to add), 0 when the
 * response says why not and carries no cookies.
 */
int nts_ke_answer(const struct nts_ke_msg *req, struct nts_ke_msg *resp);

/*
 * An NTS-KE server as a tool's option gives it, HOST[:PORT], [IPv6]:PORT
 * or a bare IPv6 address, into @host and @port (a decimal string);
 * @arg NULL or "" is @dflt_host, and PORT defaults to NTS_KE_PORT.
 * Returns 0, or -1 for an empty or too long host or a port not 1..65535.
 */
int nts_ke_server_parse(const char *arg, const char *dflt_host, char *host, size_t hostlen,
			char port[8]);

/*
 * --nts-port PORT, NTS-KE's port in every tool (ntpx(7)), over what
 * nts_ke_server_parse() made of @arg (--nts's value, NULL when bare):
 * @port becomes @port_arg.  0; -1 for a port not 1..65535; -2 when @arg
 * names a port of its own (HOST:PORT, [IPv6]:PORT): two ports.
 */
int nts_ke_port_parse(const char *arg, const char *port_arg, char port[8]);

/* Record type names, for messages: "AEAD", "record 9" for unknown ones. */
const char *nts_ke_type_name(unsigned type, char buf[16]);

#endif
