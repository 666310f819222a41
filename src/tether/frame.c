/* SPDX-License-Identifier: ISC */
/*
 * frame.c - the encoding between tether's two sides.
 *
 * Arguments are encoded so that a remote shell (ssh joins its arguments
 * and hands them to one) leaves them alone, and a prefix that execs them
 * (ntpx-lab exec) passes them as they are: "=" then the bytes, each byte
 * outside [A-Za-z0-9_./:,+@-] as %XX.
 *
 * The remote side's output is framed lines (tether.h's struct stream):
 * "o<TAB>" or "e<TAB>" and a line of the command's stdout or stderr, "O"
 * or "E" for a piece without its newline (main.c's comment lists every
 * frame).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_private.h"
#include "tether.h"

static int enc_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || strchr("_./:,+@-", c) != NULL;
}

/* "=" then the argument, %XX for every byte a shell might act on. */
char *enc_arg(const char *s)
{
	size_t n = strlen(s);
	char *e = malloc(3 * n + 2), *p = e;

	if (!e)
		return NULL;
	*p++ = '=';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c && enc_safe(c))
			*p++ = (char)c;
		else
			p += sprintf(p, "%%%02X", c);
	}
	*p = '\0';
	return e;
}

/* In place; -1 for what enc_arg could not have made. */
int dec_arg(char *s)
{
	char *r = s, *w = s;

	if (*r++ != '=')
		return -1;
	while (*r) {
		if (*r == '%') {
			int h = hexval(r[1]), l = h < 0 ? -1 : hexval(r[2]);

			if (h < 0 || l < 0 || (h == 0 && l == 0))
				return -1;
			*w++ = (char)(h << 4 | l);
			r += 3;
		} else if (enc_safe((unsigned char)*r)) {
			*w++ = *r++;
		} else {
			return -1;
		}
	}
	*w = '\0';
	return 0;
}


/* Frames every whole line in s->buf (and, when @all, the rest as a piece). */
int stream_flush(struct stream *s, int all)
{
	char hdr[2] = { s->kind, '\t' };
	size_t start = 0, i;

	for (i = 0; i < s->len; i++) {
		if (s->buf[i] != '\n')
			continue;
		if (write_all(1, hdr, 2) || write_all(1, s->buf + start, i + 1 - start))
			return -1;
		start = i + 1;
	}
	if (start < s->len && (all || s->len == sizeof(s->buf))) {
		hdr[0] = (char)(s->kind - 'a' + 'A');
		if (write_all(1, hdr, 2) || write_all(1, s->buf + start, s->len - start) ||
				write_all(1, "\n", 1))
			return -1;
		start = s->len;
	}
	memmove(s->buf, s->buf + start, s->len - start);
	s->len -= start;
	return 0;
}

