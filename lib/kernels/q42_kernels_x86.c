/* q42_kernels_x86.c -- AVX2 and AVX-512 variants of the hottest dot
 * products (F32.F32 and Q8_0.Q8_0), chosen at run time by q42_kernels.c.
 *
 * Each function carries its own target attribute, so the build needs no
 * -m flags and the rest of libq42 stays baseline x86-64; nothing here may
 * run before q42_cpu_has_*() said yes. The Q8_0 variants do the integer
 * block sums in SIMD and the float part in the scalar order, which keeps
 * them bit-identical to the reference; the F32 variants sum in float
 * lanes and differ from the double-precision reference by rounding only
 * (bound documented in tests/unit/test_kernels_isa.c).
 */
#include "kernels/q42_kernels_impl.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

int q42_cpu_has_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int q42_cpu_has_avx512(void)
{
	__builtin_cpu_init();
	return q42_cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw");
}

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw")))

AVX2 static float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

AVX2 void q42_dot_f32_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const float *a = w, *b = x;
	__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
			 _mm256_setzero_ps()};
	int64_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int j = 0; j < 4; j++)
			acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * j),
						 _mm256_loadu_ps(b + i + 8 * j), acc[j]);
	double sum = hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
					 _mm256_add_ps(acc[2], acc[3])));
	for (; i < n; i++)
		sum += (double)(a[i] * b[i]);
	*out = (float)sum;
}

AVX512 void q42_dot_f32_avx512(int64_t n, float *out, const void *w, const void *x)
{
	const float *a = w, *b = x;
	__m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
			 _mm512_setzero_ps()};
	int64_t i = 0;
	for (; i + 64 <= n; i += 64)
		for (int j = 0; j < 4; j++)
			acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * j),
						 _mm512_loadu_ps(b + i + 16 * j), acc[j]);
	double sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]),
							_mm512_add_ps(acc[2], acc[3])));
	for (; i < n; i++)
		sum += (double)(a[i] * b[i]);
	*out = (float)sum;
}

/* 8 int32 partial sums of one Q8_0 block pair. Widening to int16 before
 * multiplying keeps every product exact, -128 included. */
AVX2 static __m256i q8_0_block(const uint8_t *a, const uint8_t *b)
{
	const __m256i a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + Q8_0_QS)));
	const __m256i a1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + Q8_0_QS + 16)));
	const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + Q8_0_QS)));
	const __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + Q8_0_QS + 16)));
	return _mm256_add_epi32(_mm256_madd_epi16(a0, b0), _mm256_madd_epi16(a1, b1));
}

AVX512 static __m256i q8_0_block512(const uint8_t *a, const uint8_t *b)
{
	const __m512i a16 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a + Q8_0_QS)));
	const __m512i b16 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_0_QS)));
	const __m512i p = _mm512_madd_epi16(a16, b16);
	return _mm256_add_epi32(_mm512_castsi512_si256(p), _mm512_extracti64x4_epi64(p, 1));
}

/* Reduce eight blocks' partial-sum vectors to their eight totals, in
 * block order. */
AVX2 static void q8_0_reduce8(const __m256i v[8], int32_t sums[8])
{
	const __m256i h01 = _mm256_hadd_epi32(v[0], v[1]);
	const __m256i h23 = _mm256_hadd_epi32(v[2], v[3]);
	const __m256i h45 = _mm256_hadd_epi32(v[4], v[5]);
	const __m256i h67 = _mm256_hadd_epi32(v[6], v[7]);
	const __m256i lo = _mm256_hadd_epi32(h01, h23); /* blocks 0..3, two halves */
	const __m256i hi = _mm256_hadd_epi32(h45, h67); /* blocks 4..7 */
	const __m256i r = _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20),
					   _mm256_permute2x128_si256(lo, hi, 0x31));
	_mm256_storeu_si256((__m256i *)sums, r);
}

AVX2 static int32_t q8_0_reduce1(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
	return _mm_cvtsi128_si32(s);
}

/* The float part, in the reference's order: sum += sumi * (dw * dx). */
static float q8_0_scale(float sum, int32_t sumi, const uint8_t *a, const uint8_t *b)
{
	return sum + (float)sumi * (q42_half_at(a + Q8_0_D) * q42_half_at(b + Q8_0_D));
}

AVX2 void q42_dot_q8_0_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const int64_t nb = n / Q42_QK;
	float sum = 0.0f;
	int64_t i = 0;
	for (; i + 8 <= nb; i += 8) {
		__m256i v[8];
		int32_t sums[8];
		for (int k = 0; k < 8; k++)
			v[k] = q8_0_block(a + (i + k) * Q8_0_BYTES, b + (i + k) * Q8_0_BYTES);
		q8_0_reduce8(v, sums);
		for (int k = 0; k < 8; k++)
			sum = q8_0_scale(sum, sums[k], a + (i + k) * Q8_0_BYTES, b + (i + k) * Q8_0_BYTES);
	}
	for (; i < nb; i++)
		sum = q8_0_scale(sum, q8_0_reduce1(q8_0_block(a + i * Q8_0_BYTES, b + i * Q8_0_BYTES)),
				 a + i * Q8_0_BYTES, b + i * Q8_0_BYTES);
	*out = sum;
}

AVX512 void q42_dot_q8_0_avx512(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const int64_t nb = n / Q42_QK;
	float sum = 0.0f;
	int64_t i = 0;
	for (; i + 8 <= nb; i += 8) {
		__m256i v[8];
		int32_t sums[8];
		for (int k = 0; k < 8; k++)
			v[k] = q8_0_block512(a + (i + k) * Q8_0_BYTES, b + (i + k) * Q8_0_BYTES);
		q8_0_reduce8(v, sums);
		for (int k = 0; k < 8; k++)
			sum = q8_0_scale(sum, sums[k], a + (i + k) * Q8_0_BYTES, b + (i + k) * Q8_0_BYTES);
	}
	for (; i < nb; i++)
		sum = q8_0_scale(sum, q8_0_reduce1(q8_0_block512(a + i * Q8_0_BYTES, b + i * Q8_0_BYTES)),
				 a + i * Q8_0_BYTES, b + i * Q8_0_BYTES);
	*out = sum;
}
#endif
