/* SPDX-License-Identifier: ISC */
/*
 * pktq.h - a FIFO of whole frames in one buffer allocated once, for a
 * relay that holds each frame for a while (wiredelay).
 *
 * Frames of any length up to a maximum go in at the head and come out at
 * the tail in the order they went in; each carries two times (ns) beside
 * its bytes.  The buffer is a ring of bytes: a frame that does not fit
 * before the buffer's end goes to its start, so memory is bounded by the
 * size given at creation and nothing is allocated per frame.  A frame is
 * received straight into the queue: pktq_reserve() gives room for the
 * largest frame, pktq_commit() keeps what was received there.
 */
#ifndef NTPX_PKTQ_H
#define NTPX_PKTQ_H

#include <stddef.h>
#include <stdint.h>

struct pktq_frame {
	int64_t due;		/* when it is to leave (ns, the caller's clock) */
	int64_t rx;		/* when it arrived (ns) */
	uint32_t len;		/* bytes in data[] */
	uint32_t pad;
	unsigned char data[];
};

struct pktq {
	unsigned char *buf;
	size_t cap;		/* bytes in buf */
	size_t head;		/* where the next frame goes */
	size_t tail;		/* the oldest frame */
	size_t reserved;	/* where pktq_reserve() put the room, or SIZE_MAX */
	uint64_t frames;	/* frames held */
	size_t bytes;		/* data bytes held */
};

/*
 * A queue of @cap bytes (headers included) for frames of up to @max
 * bytes; @cap must hold at least two of the largest.  0, or -1 (errno
 * EINVAL or ENOMEM).
 */
int pktq_init(struct pktq *q, size_t cap, size_t max);
void pktq_free(struct pktq *q);

/*
 * Room for a frame of up to @max bytes at the head: where to put its
 * bytes, or NULL when the queue is too full to take one that large.
 * The room stays the caller's until pktq_commit() or the next reserve.
 */
unsigned char *pktq_reserve(struct pktq *q, size_t max);

/* Keeps the @len bytes put where pktq_reserve() said, as the newest. */
void pktq_commit(struct pktq *q, uint32_t len, int64_t rx, int64_t due);

/* The oldest frame, or NULL when there is none. */
struct pktq_frame *pktq_peek(struct pktq *q);

/* Drops the oldest frame (there must be one). */
void pktq_pop(struct pktq *q);

#endif
