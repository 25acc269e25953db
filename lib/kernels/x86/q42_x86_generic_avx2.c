/* x86/q42_x86_generic_avx2.c -- AVX2+FMA+F16C dot products for every weight type
 * and the q8 activation quantizers.
 *
 * Quantized dots are bit-identical to the scalar reference: integer sums
 * are exact in SIMD (any order gives the same integer), the float terms are
 * formed with the same operations in the same order, and terms are added
 * to the running sum one at a time, as the scalar code does. F16/BF16 sum
 * in float lanes (like F32) and are within the tolerance q42_kernels.h
 * states. Quantizers are bit-identical to the scalar ones; a block holding
 * a NaN or infinity is handed to the scalar code. Nothing here may run
 * before q42_cpu_has_avx2() said yes.
 */
#include <math.h>
#include <string.h>
#include "kernels/x86/q42_x86_generic.h"

#if defined(__x86_64__) || defined(__i386__)

/* ---- F16 and BF16: exact products, float lanes, double between chunks ---- */

/* Up to this many elements go into the float lanes before they are flushed
 * into the double total; bounds the rounding error of a long row. */
#define HALF_CHUNK 1024

Q42_AVX2 static double flush_pd(const __m256 acc[4], double sum)
{
	const __m256 t = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
	const __m256d d = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(t)),
					_mm256_cvtps_pd(_mm256_extractf128_ps(t, 1)));
	__m128d s = _mm_add_pd(_mm256_castpd256_pd128(d), _mm256_extractf128_pd(d, 1));
	s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
	return sum + _mm_cvtsd_f64(s);
}

Q42_AVX2 void q42_dot_f16_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	double sum = 0.0;
	int64_t i = 0;
	while (i + 32 <= n) {
		__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
				 _mm256_setzero_ps()};
		const int64_t end = i + HALF_CHUNK < n ? i + HALF_CHUNK : n;
		for (; i + 32 <= end; i += 32)
			for (int j = 0; j < 4; j++) {
				const int64_t o = 2 * (i + 8 * j);
				acc[j] = _mm256_fmadd_ps(
					_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + o))),
					_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + o))), acc[j]);
			}
		sum = flush_pd(acc, sum);
	}
	for (; i < n; i++)
		sum += (double)(q42_f16_to_f32(q42_ld16(a + 2 * i)) *
				q42_f16_to_f32(q42_ld16(b + 2 * i)));
	*out = (float)sum;
}

/* bf16 -> f32 is a 16-bit shift: interleaving zero words below each value
 * widens it. The lane order this gives is the same for w and x. */
Q42_AVX2 void q42_dot_bf16_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const __m256i z = _mm256_setzero_si256();
	double sum = 0.0;
	int64_t i = 0;
	while (i + 32 <= n) {
		__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
				 _mm256_setzero_ps()};
		const int64_t end = i + HALF_CHUNK < n ? i + HALF_CHUNK : n;
		for (; i + 32 <= end; i += 32)
			for (int j = 0; j < 2; j++) {
				const int64_t o = 2 * (i + 16 * j);
				const __m256i va = _mm256_loadu_si256((const __m256i *)(a + o));
				const __m256i vb = _mm256_loadu_si256((const __m256i *)(b + o));
				acc[2 * j] = _mm256_fmadd_ps(
					_mm256_castsi256_ps(_mm256_unpacklo_epi16(z, va)),
					_mm256_castsi256_ps(_mm256_unpacklo_epi16(z, vb)), acc[2 * j]);
				acc[2 * j + 1] = _mm256_fmadd_ps(
					_mm256_castsi256_ps(_mm256_unpackhi_epi16(z, va)),
					_mm256_castsi256_ps(_mm256_unpackhi_epi16(z, vb)), acc[2 * j + 1]);
			}
		sum = flush_pd(acc, sum);
	}
	for (; i < n; i++)
		sum += (double)(q42_bf16_to_f32(q42_ld16(a + 2 * i)) *
				q42_bf16_to_f32(q42_ld16(b + 2 * i)));
	*out = (float)sum;
}

/* ---- 32-element block types against q8_0 / q8_1 ---- */

enum blk { BLK_Q4_0, BLK_Q4_1, BLK_Q5_0, BLK_Q5_1, BLK_Q8_0, BLK_IQ4_NL };

static const int blk_wbytes[] = {Q4_0_BYTES, Q4_1_BYTES, Q5_0_BYTES, Q5_1_BYTES, Q8_0_BYTES, IQ4_NL_BYTES};

/* int32 partials of one block's sum of w * x, exact. */
Q42_AVX2_INLINE __m256i blk_isum(enum blk t, const uint8_t *a, const uint8_t *b)
{
	switch (t) {
	case BLK_Q4_0: {
		const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_0_QS));
		const __m256i v = _mm256_sub_epi8(x86_nibbles32(a + Q4_0_QS), _mm256_set1_epi8(8));
		return x86_dot_i8(v, y);
	}
	case BLK_Q4_1: {
		const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_1_QS));
		return x86_dot_u8(x86_nibbles32(a + Q4_1_QS), y);
	}
	case BLK_Q5_0: {
		const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_0_QS));
		const __m256i hb = _mm256_and_si256(x86_bits_to_bytes(q42_ld32(a + Q5_0_QH)),
						    _mm256_set1_epi8(0x10));
		const __m256i v = _mm256_sub_epi8(_mm256_or_si256(x86_nibbles32(a + Q5_0_QS), hb),
						  _mm256_set1_epi8(16));
		return x86_dot_i8(v, y);
	}
	case BLK_Q5_1: {
		const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_1_QS));
		const __m256i hb = _mm256_and_si256(x86_bits_to_bytes(q42_ld32(a + Q5_1_QH)),
						    _mm256_set1_epi8(0x10));
		return x86_dot_u8(_mm256_or_si256(x86_nibbles32(a + Q5_1_QS), hb), y);
	}
	case BLK_IQ4_NL: {
		const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_0_QS));
		const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q42_iq4nl_values));
		return x86_dot_i8(_mm256_shuffle_epi8(lut, x86_nibbles32(a + IQ4_NL_QS)), y);
	}
	case BLK_Q8_0:
		break;
	}
	return x86_dot_i8(_mm256_loadu_si256((const __m256i *)(a + Q8_0_QS)),
			  _mm256_loadu_si256((const __m256i *)(b + Q8_0_QS)));
}

/* Eight blocks' float terms, each formed exactly as q42_dot.c forms it. */
Q42_AVX2_INLINE __m256 blk_terms8(enum blk t, __m256i isum, const uint8_t *a, const uint8_t *b)
{
	const int wb = blk_wbytes[t];
	const __m256 s = _mm256_cvtepi32_ps(isum);
	switch (t) {
	case BLK_Q4_0:
		return _mm256_mul_ps(_mm256_mul_ps(s, x86_halves8(a + Q4_0_D, wb)),
				     x86_halves8(b + Q8_0_D, Q8_0_BYTES));
	case BLK_Q5_0:
	case BLK_IQ4_NL:
		return _mm256_mul_ps(_mm256_mul_ps(x86_halves8(a + Q5_0_D, wb),
						   x86_halves8(b + Q8_0_D, Q8_0_BYTES)), s);
	case BLK_Q4_1:
	case BLK_Q5_1: {
		const __m256 dd = _mm256_mul_ps(x86_halves8(a + Q4_1_D, wb),
						x86_halves8(b + Q8_1_D, Q8_1_BYTES));
		const __m256 ms = _mm256_mul_ps(x86_halves8(a + Q4_1_M, wb),
						x86_halves8(b + Q8_1_S, Q8_1_BYTES));
		return _mm256_add_ps(_mm256_mul_ps(dd, s), ms);
	}
	case BLK_Q8_0:
		break;
	}
	return _mm256_mul_ps(s, _mm256_mul_ps(x86_halves8(a + Q8_0_D, wb),
					      x86_halves8(b + Q8_0_D, Q8_0_BYTES)));
}

/* One block's float term, for the tail (same arithmetic as blk_terms8). */
static float blk_term1(enum blk t, int32_t isum, const uint8_t *a, const uint8_t *b)
{
	const float s = (float)isum;
	switch (t) {
	case BLK_Q4_0:
		return s * q42_half_at(a + Q4_0_D) * q42_half_at(b + Q8_0_D);
	case BLK_Q5_0:
	case BLK_IQ4_NL:
		return (q42_half_at(a + Q5_0_D) * q42_half_at(b + Q8_0_D)) * s;
	case BLK_Q4_1:
	case BLK_Q5_1:
		return (q42_half_at(a + Q4_1_D) * q42_half_at(b + Q8_1_D)) * s +
		       q42_half_at(a + Q4_1_M) * q42_half_at(b + Q8_1_S);
	case BLK_Q8_0:
		break;
	}
	return s * (q42_half_at(a + Q8_0_D) * q42_half_at(b + Q8_0_D));
}

Q42_AVX2_INLINE void dot_blocks(enum blk t, int64_t n, float *out, const uint8_t *a,
				const uint8_t *b)
{
	const int wb = blk_wbytes[t];
	const int xb = (t == BLK_Q4_1 || t == BLK_Q5_1) ? Q8_1_BYTES : Q8_0_BYTES;
	const int64_t nb = n / Q42_QK;
	float sum = 0.0f;
	int64_t i = 0;
	for (; i + 8 <= nb; i += 8, a += 8 * wb, b += 8 * xb) {
		__m256i v[8];
		for (int k = 0; k < 8; k++)
			v[k] = blk_isum(t, a + k * wb, b + k * xb);
		sum = x86_add_serial8(sum, blk_terms8(t, x86_reduce8(v), a, b));
	}
	for (; i < nb; i++, a += wb, b += xb)
		sum += blk_term1(t, x86_hsum_i32(blk_isum(t, a, b)), a, b);
	*out = sum;
}

Q42_AVX2 void q42_dot_q4_0_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_blocks(BLK_Q4_0, n, out, w, x);
}

Q42_AVX2 void q42_dot_q4_1_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_blocks(BLK_Q4_1, n, out, w, x);
}

Q42_AVX2 void q42_dot_q5_0_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_blocks(BLK_Q5_0, n, out, w, x);
}

Q42_AVX2 void q42_dot_iq4_nl_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_blocks(BLK_IQ4_NL, n, out, w, x);
}

/* IQ4_XS: each sub-block's exact sum by SIMD (a 32-byte quant group is
 * sub-blocks 2c | 2c + 1, low nibbles against the first 16 of each one's
 * y), then q42_dot_iq4_xs's serial float steps */
Q42_AVX2 void q42_dot_iq4_xs_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const __m256i grid = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q42_iq4nl_values));
	const __m256i m15 = _mm256_set1_epi8(0x0F);
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += IQ4_XS_BYTES, b += Q8_K_BYTES) {
		const float d4d8 = q42_half_at(a + IQ4_XS_D) * q42_ldf32(b + Q8_K_D);
		for (int c = 0; c < 4; c++) {
			const __m256i q = _mm256_loadu_si256((const __m256i *)(a + IQ4_XS_QS + 32 * c));
			const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 64 * c));
			const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 64 * c + 32));
			const __m256i p = _mm256_add_epi32(
				x86_dot_i8(_mm256_shuffle_epi8(grid, _mm256_and_si256(q, m15)),
					   _mm256_permute2x128_si256(y0, y1, 0x20)),
				x86_dot_i8(_mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(q, 4), m15)),
					   _mm256_permute2x128_si256(y0, y1, 0x31)));
			int32_t l[8];
			_mm256_storeu_si256((__m256i *)l, p);
			const int32_t s0 = l[0] + l[1] + l[2] + l[3], s1 = l[4] + l[5] + l[6] + l[7];
			sum += (d4d8 * (float)q42_iq4xs_scale(a, 2 * c)) * (float)s0;
			sum += (d4d8 * (float)q42_iq4xs_scale(a, 2 * c + 1)) * (float)s1;
		}
	}
	*out = sum;
}

Q42_AVX2 void q42_dot_q5_1_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_blocks(BLK_Q5_1, n, out, w, x);
}

Q42_AVX2 void q42_dot_q8_0_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_blocks(BLK_Q8_0, n, out, w, x);
}

/* ---- k-quants against q8_K ---- */

Q42_AVX2_INLINE __m256i ld256(const uint8_t *p)
{
	return _mm256_loadu_si256((const __m256i *)p);
}

/* q2_K: the integer sums of x86/q42_x86_generic.h, then one float term. */
Q42_AVX2 void q42_dot_q2_k_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q2_K_BYTES, b += Q8_K_BYTES) {
		int32_t is[2], ms[2];
		x86_q2k_sums(a, b, is, ms);
		const int32_t isum = is[0] + is[1], summs = ms[0] + ms[1];
		const float yd = q42_ldf32(b + Q8_K_D);
		const float dall = yd * q42_half_at(a + Q2_K_D);
		const float dmin = yd * q42_half_at(a + Q2_K_DMIN);
		sum += dall * (float)isum - dmin * (float)summs;
	}
	*out = sum;
}

/* Ternary types: the lanes of x86/q42_x86_generic.h */
X86_TQ_DOT(q42_dot_tq1_0_avx2, Q42_AVX2, x86_tq1_lanes, TQ1_0_BYTES, TQ1_0_D)
X86_TQ_DOT(q42_dot_tq2_0_avx2, Q42_AVX2, x86_tq2_lanes, TQ2_0_BYTES, TQ2_0_D)

/* lanes += d * (float)classes, the scalar reference's per-lane update. */
Q42_AVX2_INLINE __m256 lanes_add(__m256 lanes, float d, __m256i lo, __m256i hi)
{
	return _mm256_add_ps(lanes, _mm256_mul_ps(_mm256_set1_ps(d),
						  _mm256_cvtepi32_ps(x86_class_total(lo, hi))));
}

Q42_AVX2_INLINE __m256i ld_y_shuf(const uint8_t *b, int e, __m256i shuf)
{
	return _mm256_shuffle_epi8(ld256(b + Q8_K_QS + e), shuf);
}

/* q4_K and q5_K; qh_off < 0 for q4_K. */
Q42_AVX2_INLINE void dot_k4(int64_t n, float *out, const uint8_t *a, const uint8_t *b, int bytes,
			    int qs_off, int qh_off)
{
	const __m256i shuf = x86_class_shuffle(), m15 = _mm256_set1_epi8(0x0F);
	__m256 lanes = _mm256_setzero_ps();
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += bytes, b += Q8_K_BYTES) {
		uint8_t sc[8], mn[8];
		x86_k4_scales(a + Q4_K_SCALES, sc, mn);
		__m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
		__m256i qh = qh_off >= 0 ? ld256(a + qh_off) : _mm256_setzero_si256();
		for (int c = 0; c < 4; c++) {
			const __m256i q = ld256(a + qs_off + 32 * c);
			__m256i ua = _mm256_and_si256(q, m15);
			__m256i ub = _mm256_and_si256(_mm256_srli_epi16(q, 4), m15);
			if (qh_off >= 0) {
				const __m256i one = _mm256_set1_epi8(1);
				ua = _mm256_or_si256(ua, _mm256_slli_epi16(_mm256_and_si256(qh, one), 4));
				ub = _mm256_or_si256(ub, _mm256_slli_epi16(
					_mm256_and_si256(_mm256_srli_epi16(qh, 1), one), 4));
				qh = _mm256_srli_epi16(qh, 2);
			}
			const __m256i pa = x86_class_pairs(ua, ld_y_shuf(b, 64 * c, shuf), shuf);
			const __m256i pb = x86_class_pairs(ub, ld_y_shuf(b, 64 * c + 32, shuf), shuf);
			x86_class_scale(pa, pb, _mm256_set1_epi32(x86_pair16(sc[2 * c], sc[2 * c + 1])),
					&lo, &hi);
		}
		const int32_t summ = x86_q8k_summ(b, mn);
		const float yd = q42_ldf32(b + Q8_K_D);
		lanes = lanes_add(lanes, q42_half_at(a + Q4_K_D) * yd, lo, hi);
		const float dmin = q42_half_at(a + Q4_K_DMIN) * yd;
		sum -= dmin * (float)summ;
	}
	*out = x86_add_serial8(sum, lanes);
}

Q42_AVX2 void q42_dot_q4_k_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_k4(n, out, w, x, Q4_K_BYTES, Q4_K_QS, -1);
}

Q42_AVX2 void q42_dot_q5_k_avx2(int64_t n, float *out, const void *w, const void *x)
{
	dot_k4(n, out, w, x, Q5_K_BYTES, Q5_K_QS, Q5_K_QH);
}

/* (u - off) * y per class pair, u unsigned: the offset is taken off as
 * off * y, exactly, in int16. */
Q42_AVX2_INLINE __m256i class_pairs_off(__m256i u, __m256i ys, __m256i shuf, __m256i off)
{
	return _mm256_sub_epi16(x86_class_pairs(u, ys, shuf), _mm256_maddubs_epi16(off, ys));
}

/* Scale words for q3_K/q6_K steps A (sub-blocks g, g+1 in lanes 0, 1) and
 * B (g+2, g+3). */
Q42_AVX2_INLINE __m256i scales16(const int8_t *s, int g)
{
	const int32_t l0 = x86_pair16(s[g], s[g + 2]), l1 = x86_pair16(s[g + 1], s[g + 3]);
	return _mm256_setr_epi32(l0, l0, l0, l0, l1, l1, l1, l1);
}

Q42_AVX2 void q42_dot_q6_k_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const __m256i shuf = x86_class_shuffle(), m15 = _mm256_set1_epi8(0x0F);
	const __m256i m30 = _mm256_set1_epi8(0x30), off = _mm256_set1_epi8(32);
	__m256 lanes = _mm256_setzero_ps();
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q6_K_BYTES, b += Q8_K_BYTES) {
		const int8_t *sc = (const int8_t *)(a + Q6_K_SCALES);
		__m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
		for (int h = 0; h < 2; h++) {
			const __m256i l0 = ld256(a + Q6_K_QL + 64 * h);
			const __m256i l1 = ld256(a + Q6_K_QL + 64 * h + 32);
			const __m256i qh = ld256(a + Q6_K_QH + 32 * h);
			const __m256i u0 = _mm256_or_si256(_mm256_and_si256(l0, m15),
							   _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
			const __m256i u1 = _mm256_or_si256(_mm256_and_si256(l1, m15),
							   _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
			const __m256i u2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m15),
							   _mm256_and_si256(qh, m30));
			const __m256i u3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m15),
							   _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
			const int e = 128 * h;
			const __m256i p0 = class_pairs_off(u0, ld_y_shuf(b, e, shuf), shuf, off);
			const __m256i p1 = class_pairs_off(u1, ld_y_shuf(b, e + 32, shuf), shuf, off);
			const __m256i p2 = class_pairs_off(u2, ld_y_shuf(b, e + 64, shuf), shuf, off);
			const __m256i p3 = class_pairs_off(u3, ld_y_shuf(b, e + 96, shuf), shuf, off);
			x86_class_scale(p0, p1, scales16(sc, 8 * h), &lo, &hi);
			x86_class_scale(p2, p3, scales16(sc, 8 * h + 4), &lo, &hi);
		}
		lanes = lanes_add(lanes, q42_half_at(a + Q6_K_D) * q42_ldf32(b + Q8_K_D), lo, hi);
	}
	*out = x86_add_serial8(0.0f, lanes);
}

Q42_AVX2 void q42_dot_q3_k_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const __m256i shuf = x86_class_shuffle(), m3 = _mm256_set1_epi8(3);
	const __m256i m4 = _mm256_set1_epi8(4), off = _mm256_set1_epi8(4);
	__m256 lanes = _mm256_setzero_ps();
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q3_K_BYTES, b += Q8_K_BYTES) {
		int8_t sc[16];
		x86_k3_scales(a + Q3_K_SCALES, sc);
		__m256i hm = ld256(a + Q3_K_HMASK);
		__m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
		for (int h = 0; h < 2; h++) {
			const __m256i q = ld256(a + Q3_K_QS + 32 * h);
			__m256i p[4];
			for (int j = 0; j < 4; j++) {
				/* value = (lo2 | hbit << 2) - 4; hbit j of this half sits at
				 * bit 2 after shifting hmask right by (4h + j) - 2 */
				const __m256i l2 = _mm256_and_si256(
					_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * j)), m3);
				const __m256i hb = _mm256_and_si256(_mm256_slli_epi16(hm, 2), m4);
				hm = _mm256_srli_epi16(hm, 1);
				p[j] = class_pairs_off(_mm256_or_si256(l2, hb),
						       ld_y_shuf(b, 128 * h + 32 * j, shuf), shuf, off);
			}
			x86_class_scale(p[0], p[1], scales16(sc, 8 * h), &lo, &hi);
			x86_class_scale(p[2], p[3], scales16(sc, 8 * h + 4), &lo, &hi);
		}
		lanes = lanes_add(lanes, q42_half_at(a + Q3_K_D) * q42_ldf32(b + Q8_K_D), lo, hi);
	}
	*out = x86_add_serial8(0.0f, lanes);
}

/* ---- activation quantizers ---- */

/* Largest |x| bits over 32 floats; >= 0x7F800000 means a NaN or infinity. */
Q42_AVX2_INLINE __m256i absmax_bits32(const float *x, __m256 v[4])
{
	const __m256i m = _mm256_set1_epi32(0x7FFFFFFF);
	__m256i mx = _mm256_setzero_si256();
	for (int k = 0; k < 4; k++) {
		v[k] = _mm256_loadu_ps(x + 8 * k);
		mx = _mm256_max_epi32(mx, _mm256_and_si256(_mm256_castps_si256(v[k]), m));
	}
	__m128i s = _mm_max_epi32(_mm256_castsi256_si128(mx), _mm256_extracti128_si256(mx, 1));
	s = _mm_max_epi32(s, _mm_shuffle_epi32(s, 0x4E));
	return _mm256_castsi128_si256(_mm_max_epi32(s, _mm_shuffle_epi32(s, 0xB1)));
}

/* roundf (halves away from zero) of finite floats, as int32: the
 * truncation's remainder v - t is exact, so comparing it with 0.5 decides
 * the rounding exactly. */
Q42_AVX2_INLINE __m256i round_away(__m256 v)
{
	const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
	const __m256 sgn = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
	const __m256 absf = _mm256_andnot_ps(sgn, _mm256_sub_ps(v, t));
	const __m256 up = _mm256_cmp_ps(absf, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
	const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), sgn);
	return _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, one)));
}

/* Four vectors of 8 int32 (each in -128..127) -> 32 int8 in order. */
Q42_AVX2_INLINE __m256i pack32(const __m256i r[4])
{
	const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(r[0], r[1]),
					     _mm256_packs_epi32(r[2], r[3]));
	return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* One q8_0/q8_1 block: writes the quants to q and returns d, or returns
 * NAN (a value no finite input gives) when the block needs the scalar
 * code. */
Q42_AVX2_INLINE float q8_block_avx2(const float *x, int8_t *q)
{
	__m256 v[4];
	const uint32_t mb = (uint32_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(absmax_bits32(x, v)));
	if (mb >= 0x7F800000u)
		return NAN;
	float amax;
	memcpy(&amax, &mb, sizeof amax);
	const float d = amax / 127.0f;
	const float id = d != 0.0f ? 1.0f / d : 0.0f;
	if (!isfinite(id)) /* x * id could be NaN or infinite */
		return NAN;
	const __m256 vid = _mm256_set1_ps(id);
	__m256i r[4];
	for (int k = 0; k < 4; k++)
		r[k] = round_away(_mm256_mul_ps(v[k], vid));
	_mm256_storeu_si256((__m256i *)q, pack32(r));
	return d;
}

Q42_AVX2 void q42_qz_q8_0_avx2(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q8_0_BYTES, src += Q42_QK) {
		const float d = q8_block_avx2(src, (int8_t *)(b + Q8_0_QS));
		if (d != d)
			q42_qz_q8_0(src, b, Q42_QK);
		else
			q42_st16(b + Q8_0_D, q42_f32_to_f16(d));
	}
}

Q42_AVX2 void q42_qz_q8_1_avx2(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q8_1_BYTES, src += Q42_QK) {
		const float d = q8_block_avx2(src, (int8_t *)(b + Q8_1_QS));
		if (d != d) {
			q42_qz_q8_1(src, b, Q42_QK);
			continue;
		}
		const __m256i q = ld256(b + Q8_1_QS);
		const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);
		const int32_t sum = x86_hsum_i32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
		q42_st16(b + Q8_1_D, q42_f32_to_f16(d));
		q42_st16(b + Q8_1_S, q42_f32_to_f16((float)sum * d));
	}
}

Q42_AVX2 void q42_qz_q8_k_avx2(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q8_K_BYTES, src += Q42_QK_K) {
		__m256 v[8][4];
		__m256i mx = _mm256_setzero_si256();
		for (int c = 0; c < 8; c++)
			mx = _mm256_max_epi32(mx, absmax_bits32(src + 32 * c, v[c]));
		const uint32_t mb = (uint32_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(mx));
		if (mb >= 0x7F800000u) {
			q42_qz_q8_k(src, b, Q42_QK_K);
			continue;
		}
		if (mb == 0) {
			memset(b, 0, Q8_K_BYTES);
			continue;
		}
		/* the first element of largest magnitude gives the scale's sign */
		const __m256i bm = _mm256_set1_epi32((int)mb), am = _mm256_set1_epi32(0x7FFFFFFF);
		int j = 0;
		for (int c = 0; c < 32; c++) {
			const __m256i ab = _mm256_and_si256(_mm256_castps_si256(v[c / 4][c % 4]), am);
			const int hit = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(ab, bm)));
			if (hit != 0) {
				j = 8 * c + __builtin_ctz((unsigned)hit);
				break;
			}
		}
		const float iscale = -127.0f / src[j];
		if (!isfinite(iscale)) {
			q42_qz_q8_k(src, b, Q42_QK_K);
			continue;
		}
		const __m256 vis = _mm256_set1_ps(iscale);
		const __m256i cap = _mm256_set1_epi32(127);
		int8_t *q = (int8_t *)(b + Q8_K_QS);
		for (int c = 0; c < 8; c++) {
			__m256i r[4];
			for (int k = 0; k < 4; k++)
				r[k] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(vis, v[c][k])), cap);
			const __m256i p = pack32(r);
			_mm256_storeu_si256((__m256i *)(q + 32 * c), p);
			/* sums of 16: maddubs by 1 then madd by 1 give sums of 4 */
			const __m256i s4 = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), p),
							     _mm256_set1_epi16(1));
			const __m256i s8 = _mm256_hadd_epi32(s4, s4);
			const __m256i s16 = _mm256_hadd_epi32(s8, s8);
			q42_st16(b + Q8_K_BSUMS + 4 * c,
				 (uint16_t)(int16_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(s16)));
			q42_st16(b + Q8_K_BSUMS + 4 * c + 2,
				 (uint16_t)(int16_t)_mm_cvtsi128_si32(_mm256_extracti128_si256(s16, 1)));
		}
		const float d = 1.0f / iscale;
		uint32_t du;
		memcpy(&du, &d, sizeof du);
		q42_st32(b + Q8_K_D, du);
	}
}
/* F32.F32 in float lanes: differs from the double-precision reference
 * by rounding only (the bound is in q42_kernels.h). */
Q42_TARGET_AVX2_FMA static float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

Q42_TARGET_AVX2_FMA void q42_dot_f32_avx2(int64_t n, float *out, const void *w, const void *x)
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

#endif
