/* q42_crc32c.c -- CRC-32C, hardware and portable (see q42_crc32c.h).
 *
 * The hardware path keeps three crc32 instructions in flight (the instruction
 * has a latency of three cycles and a throughput of one) by splitting a run
 * into three equal streams and joining their states afterwards: joining is
 * "advance state A over L zero bytes, xor state B", and advancing over a
 * fixed L is a linear map applied through four 256-entry tables built once.
 * The portable path is slicing-by-8. Both work on the raw (non-inverted)
 * register; the public functions do the pre/post inversion.
 */
#include <pthread.h>
#include <string.h>
#include "common/q42_crc32c.h"

#define POLY 0x82F63B78u

/* Stream lengths for the three-way split: long runs for bulk data, short
 * runs so medium buffers still interleave. Multiples of 8. */
#define LONG_LEN 8192u
#define SHORT_LEN 256u

static uint32_t slice[8][256];
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static uint32_t raw_bytes(uint32_t c, const uint8_t *p, size_t n)
{
	while (n--)
		c = slice[0][(c ^ *p++) & 0xFFu] ^ (c >> 8);
	return c;
}

/* Build the table advancing a raw state over len zero bytes: the map is
 * linear over GF(2), so it is fixed by the images of the 32 unit vectors. */
static void build_shift(uint32_t tab[4][256], size_t len)
{
	uint32_t basis[32];
	for (int bit = 0; bit < 32; bit++) {
		uint32_t c = 1u << bit;
		for (size_t i = 0; i < len; i++)
			c = slice[0][c & 0xFFu] ^ (c >> 8);
		basis[bit] = c;
	}
	for (int k = 0; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t v = 0;
			for (int j = 0; j < 8; j++)
				if (b & (1u << j))
					v ^= basis[8 * k + j];
			tab[k][b] = v;
		}
}

static void build_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int j = 0; j < 8; j++)
			c = (c & 1u) ? (c >> 1) ^ POLY : c >> 1;
		slice[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			slice[k][i] = slice[0][slice[k - 1][i] & 0xFFu] ^ (slice[k - 1][i] >> 8);
	build_shift(shift_long, LONG_LEN);
	build_shift(shift_short, SHORT_LEN);
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t raw_portable(uint32_t c, const uint8_t *p, size_t n)
{
	while (n >= 8) {
		/* Little-endian byte order is spelled out so big-endian hosts agree. */
		uint32_t lo = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
			      ((uint32_t)p[3] << 24);
		lo ^= c;
		c = slice[7][lo & 0xFFu] ^ slice[6][(lo >> 8) & 0xFFu] ^
		    slice[5][(lo >> 16) & 0xFFu] ^ slice[4][lo >> 24] ^ slice[3][p[4]] ^
		    slice[2][p[5]] ^ slice[1][p[6]] ^ slice[0][p[7]];
		p += 8;
		n -= 8;
	}
	return raw_bytes(c, p, n);
}

uint32_t q42_crc32c_portable(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&tables_once, build_tables);
	return ~raw_portable(~crc, p, n);
}

#if defined(__x86_64__)
#include <nmmintrin.h>

static inline uint32_t shift(const uint32_t tab[4][256], uint32_t c)
{
	return tab[0][c & 0xFFu] ^ tab[1][(c >> 8) & 0xFFu] ^ tab[2][(c >> 16) & 0xFFu] ^
	       tab[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t raw_hw(uint32_t c, const uint8_t *p,
							 size_t n)
{
	while (n > 0 && ((uintptr_t)p & 7u) != 0) {
		c = _mm_crc32_u8(c, *p++);
		n--;
	}
	while (n >= 3 * LONG_LEN) {
		uint64_t c0 = c, c1 = 0, c2 = 0;
		for (size_t i = 0; i < LONG_LEN; i += 8) {
			c0 = _mm_crc32_u64(c0, load64(p + i));
			c1 = _mm_crc32_u64(c1, load64(p + LONG_LEN + i));
			c2 = _mm_crc32_u64(c2, load64(p + 2 * LONG_LEN + i));
		}
		c = shift(shift_long, shift(shift_long, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * LONG_LEN;
		n -= 3 * LONG_LEN;
	}
	while (n >= 3 * SHORT_LEN) {
		uint64_t c0 = c, c1 = 0, c2 = 0;
		for (size_t i = 0; i < SHORT_LEN; i += 8) {
			c0 = _mm_crc32_u64(c0, load64(p + i));
			c1 = _mm_crc32_u64(c1, load64(p + SHORT_LEN + i));
			c2 = _mm_crc32_u64(c2, load64(p + 2 * SHORT_LEN + i));
		}
		c = shift(shift_short, shift(shift_short, (uint32_t)c0) ^ (uint32_t)c1) ^
		    (uint32_t)c2;
		p += 3 * SHORT_LEN;
		n -= 3 * SHORT_LEN;
	}
	uint64_t c64 = c;
	while (n >= 8) {
		c64 = _mm_crc32_u64(c64, load64(p));
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n > 0) {
		c = _mm_crc32_u8(c, *p++);
		n--;
	}
	return c;
}

bool q42_crc32c_hw_available(void)
{
	return __builtin_cpu_supports("sse4.2");
}

uint32_t q42_crc32c_hw(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&tables_once, build_tables);
	return ~raw_hw(~crc, p, n);
}

uint32_t q42_crc32c(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&tables_once, build_tables);
	if (__builtin_cpu_supports("sse4.2"))
		return ~raw_hw(~crc, p, n);
	return ~raw_portable(~crc, p, n);
}

#else

bool q42_crc32c_hw_available(void)
{
	return false;
}

uint32_t q42_crc32c_hw(uint32_t crc, const void *p, size_t n)
{
	return q42_crc32c_portable(crc, p, n);
}

uint32_t q42_crc32c(uint32_t crc, const void *p, size_t n)
{
	return q42_crc32c_portable(crc, p, n);
}

#endif
