/* x86/q42_x86_generic_avx512.c -- AVX-512 (F, BW, VL, VNNI, VBMI: Ice Lake and
 * later) dot products for the types where 512-bit vectors or VNNI pay off:
 * F16, BF16, Q8_0, Q4_K, Q5_K, Q6_K, TQ1_0, TQ2_0 (and the many-row Q4_K / Q5_K forms
 * of q42_llamacpp_generic_rows). Other types use the AVX2 kernels in the
 * AVX-512 table.
 *
 * Same rules as the AVX2 file: quantized dots are bit-identical to the
 * scalar reference (exact integer sums, the scalar float order), F16/BF16
 * sum in float lanes within the tolerance of q42_kernels.h. Nothing here
 * may run before q42_cpu_has_avx512() said yes.
 */
#include "kernels/x86/q42_x86_generic.h"
#include "kernels/x86/q42_x86.h"

#if defined(__x86_64__) || defined(__i386__)

#define AVX512 Q42_TARGET_AVX512

#define HALF_CHUNK 1024

AVX512 static double flush512(const __m512 acc[4], double sum)
{
	const __m512 t = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
	const __m512d d = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(t)),
					_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(
						_mm512_castps_pd(t), 1))));
	return sum + _mm512_reduce_add_pd(d);
}

AVX512 void q42_dot_f16_avx512(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	double sum = 0.0;
	int64_t i = 0;
	while (i + 64 <= n) {
		__m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
				 _mm512_setzero_ps()};
		const int64_t end = i + HALF_CHUNK < n ? i + HALF_CHUNK : n;
		for (; i + 64 <= end; i += 64)
			for (int j = 0; j < 4; j++) {
				const int64_t o = 2 * (i + 16 * j);
				acc[j] = _mm512_fmadd_ps(
					_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(a + o))),
					_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + o))), acc[j]);
			}
		sum = flush512(acc, sum);
	}
	for (; i < n; i++)
		sum += (double)(q42_f16_to_f32(q42_ld16(a + 2 * i)) *
				q42_f16_to_f32(q42_ld16(b + 2 * i)));
	*out = (float)sum;
}

AVX512 void q42_dot_bf16_avx512(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const __m512i z = _mm512_setzero_si512();
	double sum = 0.0;
	int64_t i = 0;
	while (i + 64 <= n) {
		__m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
				 _mm512_setzero_ps()};
		const int64_t end = i + HALF_CHUNK < n ? i + HALF_CHUNK : n;
		for (; i + 64 <= end; i += 64)
			for (int j = 0; j < 2; j++) {
				const int64_t o = 2 * (i + 32 * j);
				const __m512i va = _mm512_loadu_si512((const void *)(a + o));
				const __m512i vb = _mm512_loadu_si512((const void *)(b + o));
				acc[2 * j] = _mm512_fmadd_ps(
					_mm512_castsi512_ps(_mm512_unpacklo_epi16(z, va)),
					_mm512_castsi512_ps(_mm512_unpacklo_epi16(z, vb)), acc[2 * j]);
				acc[2 * j + 1] = _mm512_fmadd_ps(
					_mm512_castsi512_ps(_mm512_unpackhi_epi16(z, va)),
					_mm512_castsi512_ps(_mm512_unpackhi_epi16(z, vb)), acc[2 * j + 1]);
			}
		sum = flush512(acc, sum);
	}
	for (; i < n; i++)
		sum += (double)(q42_bf16_to_f32(q42_ld16(a + 2 * i)) *
				q42_bf16_to_f32(q42_ld16(b + 2 * i)));
	*out = (float)sum;
}

/* Eight int32 partials of one q8_0 block pair with VNNI; y must hold no
 * -128 (see x86_dot_i8). */
Q42_TARGET_AVX512_INLINE
__m256i q8_0_vnni(const uint8_t *a, const uint8_t *b)
{
	const __m256i w = _mm256_loadu_si256((const __m256i *)(a + Q8_0_QS));
	const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_0_QS));
	return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(w),
				   _mm256_sign_epi8(y, w));
}

AVX512 void q42_dot_q8_0_avx512(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const int64_t nb = n / Q42_QK;
	float sum = 0.0f;
	int64_t i = 0;
	for (; i + 8 <= nb; i += 8, a += 8 * Q8_0_BYTES, b += 8 * Q8_0_BYTES) {
		__m256i v[8];
		for (int k = 0; k < 8; k++)
			v[k] = q8_0_vnni(a + k * Q8_0_BYTES, b + k * Q8_0_BYTES);
		const __m256 s = _mm256_cvtepi32_ps(x86_reduce8(v));
		sum = x86_add_serial8(sum, _mm256_mul_ps(s, _mm256_mul_ps(
			x86_halves8(a + Q8_0_D, Q8_0_BYTES), x86_halves8(b + Q8_0_D, Q8_0_BYTES))));
	}
	for (; i < nb; i++, a += Q8_0_BYTES, b += Q8_0_BYTES)
		sum += (float)x86_hsum_i32(q8_0_vnni(a, b)) *
		       (q42_half_at(a + Q8_0_D) * q42_half_at(b + Q8_0_D));
	*out = sum;
}

/*
 * q4_K/q5_K: a 64-element chunk (sub-blocks A and B, one scale each) sits
 * in one register, and vpermb gathers the four elements of each class of
 * each sub-block into one dword (dword k: sub-block k/8, class k%8), for w
 * and y alike; vpdpbusd then gives exact class sums per sub-block. Each sum
 * fits in int16, so vpmaddwd by (scale, 0) word pairs applies the scale.
 */
AVX512 static __m512i k4_perm(void)
{
	uint8_t idx[64];
	for (int k = 0; k < 16; k++)
		for (int m = 0; m < 4; m++)
			idx[4 * k + m] = (uint8_t)(32 * (k / 8) + k % 8 + 8 * m);
	return _mm512_loadu_si512((const void *)idx);
}

/* yp: the activation's 64-byte chunks already permuted (four per
 * super-block), or NULL to permute them here. */
Q42_TARGET_AVX512_INLINE
float dot_k4_512(int64_t n, const uint8_t *a, const uint8_t *b, const __m512i *yp, __m512i perm,
		 int bytes, int qs_off, int qh_off)
{
	const __m256i m15 = _mm256_set1_epi8(0x0F);
	__m256 lanes = _mm256_setzero_ps();
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += bytes, b += Q8_K_BYTES) {
		uint8_t sc[8], mn[8];
		x86_k4_scales(a + Q4_K_SCALES, sc, mn);
		__m512i acc = _mm512_setzero_si512();
		__m256i qh = qh_off >= 0 ? _mm256_loadu_si256((const __m256i *)(a + qh_off))
					 : _mm256_setzero_si256();
		for (int c = 0; c < 4; c++) {
			const __m256i q = _mm256_loadu_si256((const __m256i *)(a + qs_off + 32 * c));
			__m256i ua = _mm256_and_si256(q, m15);
			__m256i ub = _mm256_and_si256(_mm256_srli_epi16(q, 4), m15);
			if (qh_off >= 0) {
				const __m256i one = _mm256_set1_epi8(1);
				ua = _mm256_or_si256(ua, _mm256_slli_epi16(_mm256_and_si256(qh, one), 4));
				ub = _mm256_or_si256(ub, _mm256_slli_epi16(
					_mm256_and_si256(_mm256_srli_epi16(qh, 1), one), 4));
				qh = _mm256_srli_epi16(qh, 2);
			}
			const __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(ua), ub, 1);
			const __m512i y = yp != NULL ? yp[4 * i + c]
						     : _mm512_permutexvar_epi8(perm, _mm512_loadu_si512(
										   (const void *)(b + Q8_K_QS + 64 * c)));
			const __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
							      _mm512_permutexvar_epi8(perm, u), y);
			const __m512i scv = _mm512_inserti64x4(
				_mm512_set1_epi32(sc[2 * c]), _mm256_set1_epi32(sc[2 * c + 1]), 1);
			acc = _mm512_add_epi32(acc, _mm512_madd_epi16(s, scv));
		}
		const __m256i cls = _mm256_add_epi32(_mm512_castsi512_si256(acc),
						     _mm512_extracti64x4_epi64(acc, 1));
		const int32_t summ = x86_q8k_summ(b, mn);
		const float yd = q42_ldf32(b + Q8_K_D);
		const float d = q42_half_at(a + Q4_K_D) * yd;
		lanes = _mm256_add_ps(lanes, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(cls)));
		const float dmin = q42_half_at(a + Q4_K_DMIN) * yd;
		sum -= dmin * (float)summ;
	}
	return x86_add_serial8(sum, lanes);
}

AVX512 void q42_dot_q4_k_avx512(int64_t n, float *out, const void *w, const void *x)
{
	*out = dot_k4_512(n, w, x, NULL, k4_perm(), Q4_K_BYTES, Q4_K_QS, -1);
}

AVX512 void q42_dot_q5_k_avx512(int64_t n, float *out, const void *w, const void *x)
{
	*out = dot_k4_512(n, w, x, NULL, k4_perm(), Q5_K_BYTES, Q5_K_QS, Q5_K_QH);
}

/* The same dots for many rows and tokens (q42_llamacpp_rows_fn): the
 * permutation table once per call, each token's activation permuted once
 * for all rows (up to K4_PRE super-blocks; beyond, per row as above), and
 * the next row fetched into L2 while this one is multiplied. */
enum { K4_PRE = 32 };

Q42_TARGET_AVX512_INLINE
void rows_k4_512(int64_t n, int64_t n_rows, const uint8_t *w, uint64_t w_stride, int64_t n_tok,
		 const uint8_t *x, uint64_t x_stride, float *y, uint64_t y_stride, int bytes, int qs_off,
		 int qh_off)
{
	const __m512i perm = k4_perm();
	const int64_t nsb = n / Q42_QK_K;
	const uint64_t row_bytes = (uint64_t)nsb * (uint64_t)bytes;
	__m512i yp[4 * K4_PRE];
	for (int64_t t = 0; t < n_tok; t++) {
		const uint8_t *xb = x + (uint64_t)t * x_stride;
		const bool pre = nsb <= K4_PRE;
		for (int64_t i = 0; pre && i < nsb; i++)
			for (int c = 0; c < 4; c++)
				yp[4 * i + c] = _mm512_permutexvar_epi8(
					perm, _mm512_loadu_si512((const void *)(xb + (uint64_t)i * Q8_K_BYTES +
										 Q8_K_QS + 64 * c)));
		for (int64_t r = 0; r < n_rows; r++) {
			const uint8_t *wr = w + (uint64_t)r * w_stride;
			if (t == 0 && r + 1 < n_rows)
				for (uint64_t o = 0; o < row_bytes; o += 64)
					_mm_prefetch((const char *)(wr + w_stride + o), _MM_HINT_T1);
			y[(uint64_t)t * y_stride + (uint64_t)r] =
				dot_k4_512(n, wr, xb, pre ? yp : NULL, perm, bytes, qs_off, qh_off);
		}
	}
}

AVX512 void q42_generic_rows_q4_k_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_k4_512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, Q4_K_BYTES, Q4_K_QS, -1);
}

AVX512 void q42_generic_rows_q5_k_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_k4_512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, Q5_K_BYTES, Q5_K_QS,
		    Q5_K_QH);
}

/*
 * q6_K: a scale covers only 16 elements, two per class, so vpermb cannot
 * fill a dword with one class and one scale. Instead each 32-element step
 * is paired by class with pshufb and maddubs, as in the AVX2 kernel, two
 * steps per register; interleaving two registers word by word gives
 * vpdpwssd pairs of one class under (scale A, scale B) words.
 */
AVX512 static __m512i q6_scale_idx(void)
{
	uint16_t idx[32];
	for (int l = 0; l < 4; l++)
		for (int i = 0; i < 4; i++) {
			idx[8 * l + 2 * i] = (uint16_t)l;
			idx[8 * l + 2 * i + 1] = (uint16_t)(4 + l);
		}
	return _mm512_loadu_si512((const void *)idx);
}

AVX512 static __m128i hsum_lanes(__m512i v)
{
	const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
	return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

AVX512 void q42_dot_q6_k_avx512(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	const __m512i shuf = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5,
								  13, 6, 14, 7, 15));
	const __m512i m15 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
	const __m512i off = _mm512_set1_epi8(32), sidx = q6_scale_idx();
	__m256 lanes = _mm256_setzero_ps();
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q6_K_BYTES, b += Q8_K_BYTES) {
		const __m512i s16 = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(
			_mm_loadu_si128((const __m128i *)(a + Q6_K_SCALES))));
		__m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
		for (int h = 0; h < 2; h++) {
			const __m512i l = _mm512_loadu_si512((const void *)(a + Q6_K_QL + 64 * h));
			const __m256i qh2 = _mm256_loadu_si256((const __m256i *)(a + Q6_K_QH + 32 * h));
			const __m512i qh = _mm512_inserti64x4(_mm512_castsi256_si512(qh2), qh2, 1);
			/* steps 0,1 are the low nibbles of l's halves, steps 2,3 the high */
			const __m512i u01 = _mm512_or_si512(
				_mm512_and_si512(l, m15),
				_mm512_and_si512(_mm512_mask_blend_epi64(0xF0, _mm512_slli_epi16(qh, 4),
									 _mm512_slli_epi16(qh, 2)), m30));
			const __m512i u23 = _mm512_or_si512(
				_mm512_and_si512(_mm512_srli_epi16(l, 4), m15),
				_mm512_and_si512(_mm512_mask_blend_epi64(0xF0, qh,
									 _mm512_srli_epi16(qh, 2)), m30));
			const __m512i y01 = _mm512_shuffle_epi8(
				_mm512_loadu_si512((const void *)(b + Q8_K_QS + 128 * h)), shuf);
			const __m512i y23 = _mm512_shuffle_epi8(
				_mm512_loadu_si512((const void *)(b + Q8_K_QS + 128 * h + 64)), shuf);
			const __m512i pa = _mm512_sub_epi16(
				_mm512_maddubs_epi16(_mm512_shuffle_epi8(u01, shuf), y01),
				_mm512_maddubs_epi16(off, y01));
			const __m512i pb = _mm512_sub_epi16(
				_mm512_maddubs_epi16(_mm512_shuffle_epi8(u23, shuf), y23),
				_mm512_maddubs_epi16(off, y23));
			/* lane L: pa is sub-block 8h+L, pb is 8h+4+L */
			const __m512i scv = _mm512_permutexvar_epi16(
				_mm512_add_epi16(sidx, _mm512_set1_epi16((short)(8 * h))), s16);
			lo = _mm512_dpwssd_epi32(lo, _mm512_unpacklo_epi16(pa, pb), scv);
			hi = _mm512_dpwssd_epi32(hi, _mm512_unpackhi_epi16(pa, pb), scv);
		}
		/* every lane of lo holds classes 0..3, of hi 4..7 */
		const __m256i cls = _mm256_inserti128_si256(_mm256_castsi128_si256(hsum_lanes(lo)),
							    hsum_lanes(hi), 1);
		const float d = q42_half_at(a + Q6_K_D) * q42_ldf32(b + Q8_K_D);
		lanes = _mm256_add_ps(lanes, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(cls)));
	}
	*out = x86_add_serial8(0.0f, lanes);
}
/* Ternary types: the AVX-512 lanes of x86/q42_x86_generic.h */
X86_TQ_DOT(q42_dot_tq1_0_avx512, AVX512, x86_tq1_lanes512, TQ1_0_BYTES, TQ1_0_D)
X86_TQ_DOT(q42_dot_tq2_0_avx512, AVX512, x86_tq2_lanes512, TQ2_0_BYTES, TQ2_0_D)
/* F32.F32 in float lanes: differs from the double-precision reference
 * by rounding only (the bound is in q42_kernels.h). */
Q42_TARGET_AVX512_BW void q42_dot_f32_avx512(int64_t n, float *out, const void *w, const void *x)
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

#endif
