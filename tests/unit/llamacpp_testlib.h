/* llamacpp_testlib.h -- random inputs shared by the kernel tests that hold
 * SIMD and AMX row products to their scalar references (test_llamacpp_simd,
 * test_llamacpp_tiles): one generator and one way to make valid weight rows,
 * so both suites draw from the same kind of data. A file sets
 * LLAMACPP_TEST_SEED before including this to get its own sequence.
 */
#ifndef Q42_LLAMACPP_TESTLIB_H
#define Q42_LLAMACPP_TESTLIB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/q42_types.h"
#include "kernels/q42_kernels.h"

#ifndef LLAMACPP_TEST_SEED
#define LLAMACPP_TEST_SEED 0x9E3779B97F4A7C15ULL
#endif

static uint64_t llamacpp_rng = LLAMACPP_TEST_SEED;

/* xorshift64, the upper bits */
static inline uint32_t rnd(void)
{
	llamacpp_rng ^= llamacpp_rng << 13;
	llamacpp_rng ^= llamacpp_rng >> 7;
	llamacpp_rng ^= llamacpp_rng << 17;
	return (uint32_t)(llamacpp_rng >> 16);
}

/* uniform in [-s, s] */
static inline float rndf(float s)
{
	return ((float)(rnd() % 2000001u) / 1000000.0f - 1.0f) * s;
}

static inline void put_half(uint8_t *p, float f)
{
	const uint16_t h = q42_f32_to_f16(f);
	p[0] = (uint8_t)h;
	p[1] = (uint8_t)(h >> 8);
}

/* malloc that fails the test instead of returning NULL */
static inline void *test_alloc(size_t n)
{
	void *p = malloc(n != 0 ? n : 1);
	assert_non_null(p);
	return p;
}

static inline uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* n_rows random rows of n elements of dtype, stride bytes apart: any quant
 * bytes, finite f16 scales at the type's offsets (F16: finite values). */
static inline void fill_weights(uint32_t dtype, uint8_t *w, int64_t n_rows, int64_t n,
				uint64_t stride)
{
	for (uint64_t i = 0; i < (uint64_t)n_rows * stride; i++)
		w[i] = (uint8_t)rnd();
	for (int64_t r = 0; r < n_rows; r++) {
		uint8_t *row = w + (uint64_t)r * stride;
		switch (dtype) {
		case Q42_DTYPE_Q8_0:
		case Q42_DTYPE_Q5_0:
		case Q42_DTYPE_Q4_0:
		case Q42_DTYPE_Q5_1:
		case Q42_DTYPE_Q4_1:
		case Q42_DTYPE_IQ4_NL: {
			/* d first; q5_1 / q4_1 then their min m */
			const bool min = dtype == Q42_DTYPE_Q5_1 || dtype == Q42_DTYPE_Q4_1;
			const int64_t bb = (int64_t)q42_dtype_get(dtype)->block_bytes;
			for (int64_t b = 0; b < n / 32; b++) {
				put_half(row + bb * b, rndf(0.02f));
				if (min)
					put_half(row + bb * b + 2, rndf(0.3f));
			}
			break;
		}
		case Q42_DTYPE_Q4_K:
		case Q42_DTYPE_Q5_K: {
			const int64_t bb = dtype == Q42_DTYPE_Q4_K ? 144 : 176;
			for (int64_t b = 0; b < n / 256; b++) {
				put_half(row + bb * b, rndf(0.01f));
				put_half(row + bb * b + 2, rndf(0.01f));
			}
			break;
		}
		case Q42_DTYPE_IQ4_XS:
			for (int64_t b = 0; b < n / 256; b++)
				put_half(row + 136 * b, rndf(0.01f));
			break;
		case Q42_DTYPE_Q6_K:
			for (int64_t b = 0; b < n / 256; b++)
				put_half(row + 210 * b + 208, rndf(0.01f));
			break;
		case Q42_DTYPE_Q3_K:
			for (int64_t b = 0; b < n / 256; b++)
				put_half(row + 110 * b + 108, rndf(0.01f));
			break;
		case Q42_DTYPE_Q2_K:
			for (int64_t b = 0; b < n / 256; b++) {
				put_half(row + 84 * b + 80, rndf(0.01f));
				put_half(row + 84 * b + 82, rndf(0.01f));
			}
			break;
		case Q42_DTYPE_TQ1_0:
		case Q42_DTYPE_TQ2_0: {
			/* d last; every other byte any value (TQ1_0 bytes past 242
			 * and TQ2_0 fields of 3 included: both kernels define them) */
			const int64_t bb = dtype == Q42_DTYPE_TQ1_0 ? 54 : 66;
			for (int64_t b = 0; b < n / 256; b++)
				put_half(row + bb * b + bb - 2, rndf(0.05f));
			break;
		}
		case Q42_DTYPE_F32:
			for (int64_t k = 0; k < n; k++) {
				const float v = rndf(1.0f);
				memcpy(row + 4 * k, &v, sizeof v);
			}
			break;
		case Q42_DTYPE_BF16:
			/* every 37th value subnormal, and every row 3 of 8 all
			 * subnormal (VDPBF16PS reads them as zero, the scalar tail
			 * of a row does not: large activations tell), every 41st
			 * zero */
			for (int64_t k = 0; k < n; k++) {
				uint16_t h = q42_f32_to_bf16(rndf(1.0f));
				if (k % 37 == 5 || r % 8 == 3)
					h = (uint16_t)((h & 0x8000u) | (1u + (uint32_t)k % 127u));
				if (k % 41 == 3)
					h = 0;
				row[2 * k] = (uint8_t)h;
				row[2 * k + 1] = (uint8_t)(h >> 8);
			}
			break;
		default: /* F16 */
			for (int64_t k = 0; k < n; k++)
				put_half(row + 2 * k, rndf(1.0f));
			break;
		}
	}
}

#endif
