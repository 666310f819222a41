/* SPDX-License-Identifier: ISC */
/*
 * util_private.h - the small helpers that the library and the tools
 * share, each written once: big-endian fields read and written byte by
 * byte (no alignment needed, no packed structs), one hex digit's value,
 * the length of an array, and the struct around an embedded member.
 *
 * Not installed (the names are too short for a public header).
 */
#ifndef NTPX_UTIL_PRIVATE_H
#define NTPX_UTIL_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The struct of type @type whose member @member is at @ptr. */
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static inline uint16_t get16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline uint32_t get32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static inline uint64_t get64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)get32(b) << 32 | get32(b + 4);
}

static inline void put16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void put32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static inline void put64(void *p, uint64_t v)
{
	uint8_t *b = p;

	put32(b, (uint32_t)(v >> 32));
	put32(b + 4, (uint32_t)v);
}

/* The value of hex digit @c (either case), or -1. */
static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
