/* q42_x86_quantize.c -- activation quantizers: f32 rows to Q8_0 and Q8_1
 * blocks and to F16, AVX2 and AVX-512, bit-identical with the scalar
 * quantizers of llamacpp/q42_llamacpp.c (NaN/inf blocks go to them).
 */
#include "kernels/x86/q42_x86_internal.h"

#if defined(__x86_64__) || defined(__i386__)

/* ---- activations ------------------------------------------------------- */

/* One block as quant_block_x86 in llamacpp/q42_llamacpp.c: the quants into qs, d
 * (unrounded) in *d, their sum in *sum; false (nothing written) for a
 * block holding a NaN or an infinity, whose rounding is the scalar
 * code's own. */
A5_INLINE bool quant_block_avx512(const float *src, uint8_t *qs, float *d, int32_t *sum)
{
	const __m512 inf = _mm512_set1_ps(INFINITY);
	const __m512 v0 = _mm512_loadu_ps(src), v1 = _mm512_loadu_ps(src + 16);
	const __m512 a0 = _mm512_abs_ps(v0), a1 = _mm512_abs_ps(v1);
	if ((_mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) & _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ)) != 0xFFFF)
		return false;
	const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
	const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
	if (!(id <= FLT_MAX)) /* amax below 127 / FLT_MAX: 0 * id is NaN, stored as 0 */
		return false;
	const __m512 vid = _mm512_set1_ps(id), lo = _mm512_set1_ps(-128.0f), hi = _mm512_set1_ps(127.0f);
	__m512i t = _mm512_setzero_si512();
	for (int h = 0; h < 2; h++) {
		__m512 r = _mm512_roundscale_ps(_mm512_mul_ps(h ? v1 : v0, vid),
						_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
		const __m512i q = _mm512_cvtps_epi32(r);
		t = _mm512_add_epi32(t, q);
		_mm_storeu_si128((__m128i *)(qs + 16 * h), _mm512_cvtepi32_epi8(q));
	}
	*d = amax / 127.0f;
	*sum = _mm512_reduce_add_epi32(t);
	return true;
}

/* The Q8_0 and Q8_1 quantizers over a block function (blocks holding an
 * infinity or NaN, or too small for 127 / amax, take the scalar code). */
#define QUANT_Q8(SUFFIX, ATTR, BLOCK)                                                            \
	ATTR void q42_llamacpp_quantize_q8_0_##SUFFIX(const float *src, void *dst, int64_t n)      \
	{                                                                                        \
		uint8_t *b = dst;                                                                \
		for (int64_t i = 0; i < n / Q42_QK; i++, src += Q42_QK, b += Q8_0_BYTES) {       \
			float d;                                                                 \
			int32_t sum;                                                             \
			if (BLOCK(src, b + Q8_0_QS, &d, &sum))                                   \
				q42_st16(b, q42_f32_to_f16(d));                                  \
			else                                                                     \
				q42_llamacpp_quantize_q8_0(src, b, Q42_QK);                        \
		}                                                                                \
	}                                                                                        \
	ATTR void q42_llamacpp_quantize_q8_1_##SUFFIX(const float *src, void *dst, int64_t n)      \
	{                                                                                        \
		uint8_t *b = dst;                                                                \
		for (int64_t i = 0; i < n / Q42_QK; i++, src += Q42_QK, b += Q8_1_BYTES) {       \
			float d;                                                                 \
			int32_t sum;                                                             \
			if (BLOCK(src, b + Q8_1_QS, &d, &sum)) {                                 \
				q42_st16(b, q42_f32_to_f16(d));                                  \
				q42_st16(b + Q8_1_S, q42_f32_to_f16(d * (float)sum));            \
			} else {                                                                 \
				q42_llamacpp_quantize_q8_1(src, b, Q42_QK);                        \
			}                                                                        \
		}                                                                                \
	}

QUANT_Q8(avx512, A5, quant_block_avx512)

/* The same quantizers on AVX2: eight lanes, the four vectors' quants
 * packed to bytes (already within -128..127, so the saturating packs
 * change nothing) and put back in order by one permute. */
A2_INLINE bool quant_block_avx2(const float *src, uint8_t *qs, float *d, int32_t *sum)
{
	const __m256 sign = _mm256_set1_ps(-0.0f), inf = _mm256_set1_ps(INFINITY);
	__m256 v[4], m = _mm256_setzero_ps();
	int finite = 0xFF;
	for (int i = 0; i < 4; i++) {
		v[i] = _mm256_loadu_ps(src + 8 * i);
		const __m256 a = _mm256_andnot_ps(sign, v[i]);
		finite &= _mm256_movemask_ps(_mm256_cmp_ps(a, inf, _CMP_LT_OQ));
		m = _mm256_max_ps(m, a);
	}
	if (finite != 0xFF)
		return false;
	__m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
	h = _mm_max_ps(h, _mm_movehl_ps(h, h));
	const float amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
	const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
	if (!(id <= FLT_MAX))
		return false;
	const __m256 vid = _mm256_set1_ps(id), lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
	__m256i q[4], t = _mm256_setzero_si256();
	for (int i = 0; i < 4; i++) {
		__m256 r = _mm256_round_ps(_mm256_mul_ps(v[i], vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
		q[i] = _mm256_cvtps_epi32(r);
		t = _mm256_add_epi32(t, q[i]);
	}
	const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
	_mm256_storeu_si256((__m256i *)(void *)qs,
			    _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
	*d = amax / 127.0f;
	*sum = x86_hsum_i32(t);
	return true;
}

QUANT_Q8(avx2, A2, quant_block_avx2)

A2 void q42_llamacpp_quantize_f16_avx2(const float *src, void *dst, int64_t n)
{
	uint8_t *p = dst;
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 v = _mm256_loadu_ps(src + i);
		if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
			q42_llamacpp_quantize_f16(src + i, p + 2 * i, 8);
			continue;
		}
		_mm_storeu_si128((__m128i *)(void *)(p + 2 * i),
				 _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	}
	q42_llamacpp_quantize_f16(src + i, p + 2 * i, n - i);
}

/* F16C rounds to nearest even as the software conversion does, but keeps
 * NaN payloads; chunks holding a NaN take the scalar path. */
A5 void q42_llamacpp_quantize_f16_avx512(const float *src, void *dst, int64_t n)
{
	uint8_t *p = dst;
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		const __m512 v = _mm512_loadu_ps(src + i);
		if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) {
			q42_llamacpp_quantize_f16(src + i, p + 2 * i, 16);
			continue;
		}
		_mm256_storeu_si256((__m256i *)(p + 2 * i),
				    _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	}
	q42_llamacpp_quantize_f16(src + i, p + 2 * i, n - i);
}

#endif
