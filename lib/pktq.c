/* SPDX-License-Identifier: ISC */
/*
 * pktq.c - a FIFO of whole frames in one ring of bytes (see pktq.h).
 *
 * Each frame is a struct pktq_frame and its bytes, rounded up to 8.  The
 * frames held lie from tail to head, wrapping at most once: when a frame
 * goes to the start of the buffer, a header with len PKTQ_WRAP is left
 * where the head was, or nothing when less than a header is left before
 * the end; the tail, arriving there, goes to the start too.  head == tail
 * is empty or full, which the frame count tells apart.
 */
#include <errno.h>
#include <stdlib.h>

#include "pktq.h"

#define PKTQ_WRAP	UINT32_MAX
#define PKTQ_HDR	sizeof(struct pktq_frame)

static size_t pktq_size(size_t len)
{
	return PKTQ_HDR + ((len + 7) & ~(size_t)7);
}

int pktq_init(struct pktq *q, size_t cap, size_t max)
{
	cap &= ~(size_t)7;
	if (max > UINT32_MAX - 8 || cap < 2 * pktq_size(max)) {
		errno = EINVAL;
		return -1;
	}
	q->buf = malloc(cap);
	if (!q->buf)
		return -1;
	q->cap = cap;
	q->head = q->tail = 0;
	q->reserved = SIZE_MAX;
	q->frames = 0;
	q->bytes = 0;
	return 0;
}

void pktq_free(struct pktq *q)
{
	free(q->buf);
	q->buf = NULL;
}

unsigned char *pktq_reserve(struct pktq *q, size_t max)
{
	size_t need = pktq_size(max);

	q->reserved = SIZE_MAX;
	if (q->frames == 0)
		q->head = q->tail = 0;
	if (q->frames && q->head == q->tail)
		return NULL;				/* full */
	if (q->head >= q->tail && q->frames) {
		/* Held: [tail, head).  Free: [head, cap) and [0, tail). */
		if (q->cap - q->head >= need)
			q->reserved = q->head;
		else if (q->tail >= need)
			q->reserved = 0;
	} else if (q->frames == 0) {
		q->reserved = 0;
	} else if (q->tail - q->head >= need) {
		q->reserved = q->head;		/* wrapped: free is [head, tail) */
	}
	if (q->reserved == SIZE_MAX)
		return NULL;
	return ((struct pktq_frame *)(q->buf + q->reserved))->data;
}

void pktq_commit(struct pktq *q, uint32_t len, int64_t rx, int64_t due)
{
	struct pktq_frame *f = (struct pktq_frame *)(q->buf + q->reserved);

	if (q->reserved < q->head && q->cap - q->head >= PKTQ_HDR)
		((struct pktq_frame *)(q->buf + q->head))->len = PKTQ_WRAP;
	f->due = due;
	f->rx = rx;
	f->len = len;
	q->head = q->reserved + pktq_size(len);
	q->reserved = SIZE_MAX;
	q->frames++;
	q->bytes += len;
}

struct pktq_frame *pktq_peek(struct pktq *q)
{
	struct pktq_frame *f;

	if (q->frames == 0)
		return NULL;
	if (q->cap - q->tail < PKTQ_HDR)
		q->tail = 0;
	f = (struct pktq_frame *)(q->buf + q->tail);
	if (f->len == PKTQ_WRAP) {
		q->tail = 0;
		f = (struct pktq_frame *)q->buf;
	}
	return f;
}

void pktq_pop(struct pktq *q)
{
	struct pktq_frame *f = pktq_peek(q);

	q->tail += pktq_size(f->len);
	q->frames--;
	q->bytes -= f->len;
	if (q->frames == 0)
		q->head = q->tail = 0;
}
