/* q42_le.h -- little-endian loads and stores from unaligned memory.
 *
 * File formats here are little-endian by definition; these helpers make the
 * byte order explicit at every access instead of casting pointers.
 */
#ifndef Q42_LE_H
#define Q42_LE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t q42_ld16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t q42_ld32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
	       ((uint32_t)b[3] << 24);
}

static inline uint64_t q42_ld64(const void *p)
{
	return (uint64_t)q42_ld32(p) | ((uint64_t)q42_ld32((const uint8_t *)p + 4) << 32);
}

static inline float q42_ldf32(const void *p)
{
	uint32_t u = q42_ld32(p);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline void q42_st16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void q42_st32(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void q42_st64(void *p, uint64_t v)
{
	q42_st32(p, (uint32_t)v);
	q42_st32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

#endif
