/* q42_x86_products_k.c -- AVX2 / AVX-512 row products of the 256-element
 * super-block types against Q8_K: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS and
 * the ternary TQ1_0 / TQ2_0, as llama.cpp's x86 kernels round them.
 */
#include "kernels/x86/q42_x86_internal.h"
#include "kernels/llamacpp/q42_llamacpp_impl.h"

#if defined(__x86_64__) || defined(__i386__)

/* The sixteen 6-bit scales of a Q3_K block, less 32, as bytes: low
 * nibbles of bytes 0..7 then their high nibbles, two more bits each from
 * bytes 8..11 (scale j: bits 2(j / 4) of byte 8 + j % 4). */
A2_INLINE __m128i q3k_scales(const uint8_t *a)
{
	const __m128i x = _mm_loadl_epi64((const __m128i *)(a + Q3_K_SCALES)), m4 = _mm_set1_epi8(0x0F);
	const __m128i lo = _mm_unpacklo_epi64(_mm_and_si128(x, m4), _mm_and_si128(_mm_srli_epi16(x, 4), m4));
	const __m128i hi = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32((int)q42_ld32(a + Q3_K_SCALES + 8)),
							 _mm_setr_epi32(0, 2, 4, 6)),
					  _mm_set1_epi8(3));
	return _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32));
}

/* llama.cpp's int32 lanes of one Q3_K super-block (the order of
 * q42_llamacpp_dot_q3_k): per 32-element chunk c, the values (low two bits
 * plus 4 x the hmask bit, 0..7) times y, less 4 x y (maddubs pairs), then
 * each pair sum times the scale of its half of the chunk (madd). */
A2_INLINE __m256i q3k_lanes(const uint8_t *a, const uint8_t *b)
{
	const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1), four = _mm256_set1_epi8(4);
	const __m256i hb = _mm256_loadu_si256((const __m256i *)(a + Q3_K_HMASK));
	const __m128i sc = q3k_scales(a);
	/* bytes 0..7 pick scale 2c, 8..15 scale 2c + 1 */
	const __m128i pick = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
	__m256i sumi = _mm256_setzero_si256();
	UNROLL
	for (int c = 0; c < 8; c++) {
		const __m256i q = _mm256_loadu_si256((const __m256i *)(a + Q3_K_QS + 32 * (c / 4)));
		const __m128i sh = _mm_cvtsi32_si128(2 * (c % 4)), hc = _mm_cvtsi32_si128(c);
		const __m256i lo = _mm256_and_si256(_mm256_srl_epi16(q, sh), m3);
		const __m256i hi = _mm256_and_si256(_mm256_srl_epi16(hb, hc), one);
		const __m256i v = _mm256_or_si256(lo, _mm256_slli_epi16(hi, 2));
		const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 32 * c));
		const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(v, y), _mm256_maddubs_epi16(four, y));
		const __m256i s = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc, _mm_add_epi8(pick, _mm_set1_epi8((char)(2 * c)))));
		sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, s));
	}
	return sumi;
}

/* A Q3_K block for AVX-512: v[j] the values (0..7) of chunks 2j and
 * 2j + 1, s[j] the scale of each of their dword lanes as a word (the
 * dword's high word zero, so VNNI word products apply it exactly). */
struct q3u {
	__m512i v[4], s[4];
};

A5_INLINE void q3k_unpack512(const uint8_t *a, struct q3u *u)
{
	const __m512i m3 = _mm512_set1_epi8(3), four = _mm512_set1_epi8(4);
	const __m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(a + Q3_K_HMASK)));
	const __m128i sc = q3k_scales(a);
	UNROLL
	for (int j = 0; j < 4; j++) {
		const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(a + Q3_K_QS + 32 * (j / 2))));
		const __m512i cnt = _mm512_inserti64x4(_mm512_set1_epi16((short)(4 * (j % 2))),
						       _mm256_set1_epi16((short)(4 * (j % 2) + 2)), 1);
		const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << (2 * j))),
						       _mm256_set1_epi8((char)(1 << (2 * j + 1))), 1);
		const __m512i lo = _mm512_and_si512(_mm512_srlv_epi16(q, cnt), m3);
		u->v[j] = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(hb, bit), lo, four);
		/* dword lanes 4k..4k + 3: scale 4j + k */
		const __m128i idx = _mm_add_epi8(_mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
						 _mm_set1_epi8((char)(4 * j)));
		u->s[j] = _mm512_and_si512(_mm512_cvtepi8_epi32(_mm_shuffle_epi8(sc, idx)), _mm512_set1_epi32(0xFFFF));
	}
}

/* A Q2_K block for AVX-512: q[j] its values (0..3) of chunks 2j and
 * 2j + 1, s[j] each dword lane's sub-block scale as a word (high word
 * zero), m the sixteen mins as words. */
struct q2u {
	__m512i q[4], s[4];
	__m256i m;
};

A5_INLINE void q2k_unpack512(const uint8_t *a, struct q2u *u)
{
	const __m128i sm = _mm_loadu_si128((const __m128i *)(a + Q2_K_SCALES)), m4 = _mm_set1_epi8(0x0F);
	const __m128i sc = _mm_and_si128(sm, m4);
	u->m = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4));
	x86_fields2_512(a + Q2_K_QS, u->q);
	UNROLL
	for (int j = 0; j < 4; j++) {
		/* dword lanes 4k..4k + 3: sub-block 4j + k */
		const __m128i idx = _mm_add_epi8(_mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
						 _mm_set1_epi8((char)(4 * j)));
		u->s[j] = _mm512_cvtepu8_epi32(_mm_shuffle_epi8(sc, idx));
	}
}

/* The eight lanes of an unpacked block against Q8_K block b: per vector,
 * dpbusd from -4 x each dword's y sum, then the scale by a word product. */
A5_INLINE __m256i q3k_lanes512(const struct q3u *u, const uint8_t *b)
{
	const __m512i four = _mm512_set1_epi8(4);
	__m512i sum = _mm512_setzero_si512();
	UNROLL
	for (int j = 0; j < 4; j++) {
		const __m512i y = _mm512_loadu_si512((const void *)(b + Q8_K_QS + 64 * j));
		const __m512i bias = _mm512_sub_epi32(_mm512_setzero_si512(),
						      _mm512_dpbusd_epi32(_mm512_setzero_si512(), four, y));
		sum = _mm512_dpwssd_epi32(sum, _mm512_dpbusd_epi32(bias, u->v[j], y), u->s[j]);
	}
	return _mm256_add_epi32(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64(sum, 1));
}

/* Q2_K in llama.cpp's CPU_REPACK order (q42_llamacpp_dot_q2_k, _x4 for
 * the tokens in whole groups of four) on AVX2: the exact sums of
 * x86/q42_x86_generic.h per (row, token, super-block), then the fmas. */
A2 void q42_llamacpp_rows_q2_k_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	for (int64_t r = 0; r < n_rows; r++)
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			const bool halves = t < n_tok / 4 * 4;
			float acc = 0.0f, accm = 0.0f;
			for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q2_K_BYTES, b += Q8_K_BYTES) {
				int32_t is[2], ms[2];
				x86_q2k_sums(a, b, is, ms);
				const float dx = q42_ldf32(b + Q8_K_D);
				const float dd = _cvtsh_ss(q42_ld16(a + Q2_K_D)) * dx;
				const float dm = _cvtsh_ss(q42_ld16(a + Q2_K_DMIN)) * dx;
				if (halves) {
					acc = fmaf((float)is[1], dd, fmaf((float)is[0], dd, acc));
					accm = fmaf((float)ms[1], dm, fmaf((float)ms[0], dm, accm));
				} else {
					acc = fmaf((float)(is[0] + is[1]), dd, acc);
					accm = fmaf((float)(ms[0] + ms[1]), dm, accm);
				}
			}
			y[(uint64_t)t * y_stride + (uint64_t)r] = acc - accm;
		}
}

/* Q3_K, TQ1_0 and TQ2_0 in llama.cpp's x86 order (q42_llamacpp_dot_q3_k,
 * q42_llamacpp_dot_tq1_0 / tq2_0): eight int32 lanes per super-block, one
 * fma per lane with d_x * d_w, hsum_float_8 at the end; every (row,
 * token) on its own. (The AVX-512 rows below unpack a row's block once
 * for a tile of up to TQ_T tokens instead.) */
#define LANES_ROWS(NAME, TGT, LANES, BYTES, DOFF)                                                         \
	TGT void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                                \
	{                                                                                                  \
		for (int64_t r = 0; r < n_rows; r++)                                                       \
			for (int64_t t = 0; t < n_tok; t++) {                                              \
				const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;            \
				const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;            \
				__m256 acc = _mm256_setzero_ps();                                          \
				for (int64_t i = 0; i < n / Q42_QK_K; i++, a += BYTES, b += Q8_K_BYTES) { \
					const float d = q42_ldf32(b + Q8_K_D) * _cvtsh_ss(q42_ld16(a + DOFF)); \
					acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(LANES(a, b)), \
							      acc);                                        \
				}                                                                          \
				y[(uint64_t)t * y_stride + (uint64_t)r] = hsum_float8(acc);                \
			}                                                                                  \
	}
LANES_ROWS(q42_llamacpp_rows_tq1_0_avx2, A2, x86_tq1_lanes, TQ1_0_BYTES, TQ1_0_D)
LANES_ROWS(q42_llamacpp_rows_tq2_0_avx2, A2, x86_tq2_lanes, TQ2_0_BYTES, TQ2_0_D)
LANES_ROWS(q42_llamacpp_rows_q3_k_avx2, A2, q3k_lanes, Q3_K_BYTES, Q3_K_D)

enum { TQ_T = 8 };

enum lanes_kind { LK_TQ1, LK_TQ2, LK_Q3K, LK_Q2K };

A5_INLINE void lanes_tile(int T, enum lanes_kind kind, int64_t n, int64_t n_rows, const void *w,
			  uint64_t w_stride, const uint8_t *x, uint64_t x_stride, float *y, uint64_t y_stride)
{
	const int bytes = kind == LK_TQ1 ? TQ1_0_BYTES : kind == LK_TQ2 ? TQ2_0_BYTES : Q3_K_BYTES;
	const int doff = kind == LK_TQ1 ? TQ1_0_D : kind == LK_TQ2 ? TQ2_0_D : Q3_K_D;
	for (int64_t r = 0; r < n_rows; r++) {
		const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
		__m256 acc[TQ_T];
		UNROLL
		for (int t = 0; t < T; t++)
			acc[t] = _mm256_setzero_ps();
		for (int64_t j = 0; j < n / Q42_QK_K; j++, a += bytes) {
			__m512i q[4];
			struct q3u u;
			if (kind == LK_TQ1)
				x86_tq1_trits512(a, q);
			else if (kind == LK_TQ2)
				x86_tq2_trits512(a, q);
			else
				q3k_unpack512(a, &u);
			const float dw = _cvtsh_ss(q42_ld16(a + doff));
			UNROLL
			for (int t = 0; t < T; t++) {
				const uint8_t *b = x + (uint64_t)t * x_stride + (uint64_t)j * Q8_K_BYTES;
				const __m256i l = kind == LK_Q3K ? q3k_lanes512(&u, b) : x86_tq_lanes512(q, b);
				acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(q42_ldf32(b + Q8_K_D) * dw), _mm256_cvtepi32_ps(l),
							 acc[t]);
			}
		}
		UNROLL
		for (int t = 0; t < T; t++)
			y[(uint64_t)t * y_stride + (uint64_t)r] = hsum_float8(acc[t]);
	}
}

/* Q2_K's tiles: the sums of q42_llamacpp_dot_q2_k per (row, token), a
 * row's block unpacked once for up to TQ_T tokens; the tile's first n_x4
 * tokens lie in whole groups of four of the pass (gemm order). */
A5_INLINE void q2k_tile(int T, int64_t n_x4, int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,
			const uint8_t *x, uint64_t x_stride, float *y, uint64_t y_stride)
{
	for (int64_t r = 0; r < n_rows; r++) {
		const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
		float acc[TQ_T], accm[TQ_T];
		UNROLL
		for (int t = 0; t < T; t++)
			acc[t] = accm[t] = 0.0f;
		for (int64_t j = 0; j < n / Q42_QK_K; j++, a += Q2_K_BYTES) {
			struct q2u u;
			q2k_unpack512(a, &u);
			const float dw = _cvtsh_ss(q42_ld16(a + Q2_K_D)), dm = _cvtsh_ss(q42_ld16(a + Q2_K_DMIN));
			UNROLL
			for (int t = 0; t < T; t++) {
				const uint8_t *b = x + (uint64_t)t * x_stride + (uint64_t)j * Q8_K_BYTES;
				int32_t is[2], ms[2];
				UNROLL
				for (int h = 0; h < 2; h++) {
					__m512i sum = _mm512_setzero_si512();
					UNROLL
					for (int k = 2 * h; k < 2 * h + 2; k++)
						sum = _mm512_dpwssd_epi32(
							sum,
							_mm512_dpbusd_epi32(_mm512_setzero_si512(), u.q[k],
									    _mm512_loadu_si512((const void *)(b + Q8_K_QS + 64 * k))),
							u.s[k]);
					is[h] = _mm512_reduce_add_epi32(sum);
				}
				/* lane l: sub-blocks 2l and 2l + 1, so half h is 128-bit lane h */
				const __m256i mv = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS)), u.m);
				ms[0] = x86_hsum_i32(_mm256_permute2x128_si256(mv, mv, 0x80));
				ms[1] = x86_hsum_i32(_mm256_permute2x128_si256(mv, mv, 0x81));
				const float dx = q42_ldf32(b + Q8_K_D), dd = dw * dx, dmx = dm * dx;
				if (t < n_x4) {
					acc[t] = fmaf((float)is[1], dd, fmaf((float)is[0], dd, acc[t]));
					accm[t] = fmaf((float)ms[1], dmx, fmaf((float)ms[0], dmx, accm[t]));
				} else {
					acc[t] = fmaf((float)(is[0] + is[1]), dd, acc[t]);
					accm[t] = fmaf((float)(ms[0] + ms[1]), dmx, accm[t]);
				}
			}
		}
		UNROLL
		for (int t = 0; t < T; t++)
			y[(uint64_t)t * y_stride + (uint64_t)r] = acc[t] - accm[t];
	}
}

/* Sums of each 8-lane half of x[r], for eight vectors: [rows 0..3 half
 * 0 | rows 0..3 half 1 | rows 4..7 half 0 | rows 4..7 half 1] in 128-bit
 * lanes (pairs of unpacks and adds, then one cross-lane step). */
A5_INLINE __m512i sum8_halves(const __m512i x[8])
{
	__m512i p[4], q[2];
	UNROLL
	for (int i = 0; i < 4; i++)
		p[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(x[2 * i], x[2 * i + 1]),
					_mm512_unpackhi_epi32(x[2 * i], x[2 * i + 1]));
	UNROLL
	for (int i = 0; i < 2; i++)
		q[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(p[2 * i], p[2 * i + 1]),
					_mm512_unpackhi_epi64(p[2 * i], p[2 * i + 1]));
	return _mm512_add_epi32(_mm512_shuffle_i32x4(q[0], q[1], _MM_SHUFFLE(2, 0, 2, 0)),
				_mm512_shuffle_i32x4(q[0], q[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

/* The same for eight 8-lane vectors with 4-lane halves: [rows 0..3
 * half 0 | rows 0..3 half 1] and rows 4..7 likewise in *hi. */
A5_INLINE __m256i sum4_halves(const __m256i x[8], __m256i *hi)
{
	__m256i p[4], q[2];
	UNROLL
	for (int i = 0; i < 4; i++)
		p[i] = _mm256_add_epi32(_mm256_unpacklo_epi32(x[2 * i], x[2 * i + 1]),
					_mm256_unpackhi_epi32(x[2 * i], x[2 * i + 1]));
	UNROLL
	for (int i = 0; i < 2; i++)
		q[i] = _mm256_add_epi32(_mm256_unpacklo_epi64(p[2 * i], p[2 * i + 1]),
					_mm256_unpackhi_epi64(p[2 * i], p[2 * i + 1]));
	*hi = q[1];
	return q[0];
}

/* Q2_K for one token (the gemv order: one fma per super-block), eight
 * rows at a time: each row's two half sums and two min sums reduced
 * together with the other rows' (lane = row), so the float steps run
 * for eight rows in one vector. */
A5_INLINE void q2k_rows1(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const uint8_t *x, float *y)
{
	const __m128i m4 = _mm_set1_epi8(0x0F);
	const int64_t full = n_rows - n_rows % GROUP;
	for (int64_t r0 = 0; r0 < full; r0 += GROUP) {
		const uint8_t *wr[GROUP];
		UNROLL
		for (int r = 0; r < GROUP; r++)
			wr[r] = (const uint8_t *)w + (uint64_t)(r0 + r) * w_stride;
		__m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
		for (int64_t j = 0; j < n / Q42_QK_K; j++) {
			const uint8_t *b = x + (uint64_t)j * Q8_K_BYTES;
			const int64_t o = j * Q2_K_BYTES;
			const __m256i bs = _mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS));
			__m512i hs[GROUP];
			__m256i ms[GROUP];
			UNROLL
			for (int r = 0; r < GROUP; r++) {
				const uint8_t *a = wr[r] + o;
				const __m128i sm = _mm_loadu_si128((const __m128i *)(a + Q2_K_SCALES));
				const __m128i sc = _mm_and_si128(sm, m4);
				__m512i q[4], h[2];
				x86_fields2_512(a + Q2_K_QS, q);
				UNROLL
				for (int k = 0; k < 2; k++) {
					h[k] = _mm512_setzero_si512();
					UNROLL
					for (int i = 2 * k; i < 2 * k + 2; i++) {
						const __m128i idx = _mm_add_epi8(
							_mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
							_mm_set1_epi8((char)(4 * i)));
						h[k] = _mm512_dpwssd_epi32(
							h[k],
							_mm512_dpbusd_epi32(_mm512_setzero_si512(), q[i],
									    _mm512_loadu_si512((const void *)(b + Q8_K_QS + 64 * i))),
							_mm512_cvtepu8_epi32(_mm_shuffle_epi8(sc, idx)));
					}
				}
				/* [half 0 folded to 8 lanes | half 1 folded] */
				hs[r] = _mm512_add_epi32(_mm512_shuffle_i64x2(h[0], h[1], _MM_SHUFFLE(1, 0, 1, 0)),
							 _mm512_shuffle_i64x2(h[0], h[1], _MM_SHUFFLE(3, 2, 3, 2)));
				ms[r] = _mm256_madd_epi16(bs, _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4)));
			}
			const __m512i hsum = sum8_halves(hs);
			__m256i m47;
			const __m256i m03 = sum4_halves(ms, &m47);
			/* rows 0..7: both halves of each row added (exact) */
			const __m256i isum = _mm256_add_epi32(
				_mm512_castsi512_si256(_mm512_permutexvar_epi32(_mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0), hsum)),
				_mm512_castsi512_si256(_mm512_permutexvar_epi32(_mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0), hsum)));
			const __m256i msum = _mm256_add_epi32(_mm256_permute2x128_si256(m03, m47, 0x20),
							      _mm256_permute2x128_si256(m03, m47, 0x31));
			const __m256 dx = _mm256_set1_ps(q42_ldf32(b + Q8_K_D));
			acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(halves_rows(wr, o + Q2_K_D), dx), acc);
			accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(halves_rows(wr, o + Q2_K_DMIN), dx),
					       accm);
		}
		_mm256_storeu_ps(y + r0, _mm256_sub_ps(acc, accm));
	}
	if (full < n_rows)
		q2k_tile(1, 0, n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride, x, 0, y + full, 0);
}

A5_INLINE void lanes_rows512(Q42_LLAMACPP_ROWS_ARGS, enum lanes_kind kind)
{
	for (int64_t t0 = 0; t0 < n_tok; t0 += TQ_T) {
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t0 * x_stride;
		float *yt = y + (uint64_t)t0 * y_stride;
		const int64_t x4 = n_tok / 4 * 4 - t0; /* Q2_K: tokens in the gemm order */
		/* the tile's width as a constant, so its accumulators stay in
		 * registers */
		switch (n_tok - t0 < TQ_T ? n_tok - t0 : TQ_T) {
#define LANES_TILE(T)                                                                                 \
	case T:                                                                                       \
		if (kind == LK_Q2K)                                                                   \
			q2k_tile(T, x4, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride);         \
		else                                                                                  \
			lanes_tile(T, kind, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride);     \
		break;
		LANES_TILE(1) LANES_TILE(2) LANES_TILE(3) LANES_TILE(4) LANES_TILE(5) LANES_TILE(6) LANES_TILE(7)
		default:
			if (kind == LK_Q2K)
				q2k_tile(TQ_T, x4, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride);
			else
				lanes_tile(TQ_T, kind, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride);
			break;
#undef LANES_TILE
		}
	}
}

A5 void q42_llamacpp_rows_tq1_0_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_TQ1);
}

A5 void q42_llamacpp_rows_tq2_0_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_TQ2);
}

A5 void q42_llamacpp_rows_q3_k_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_Q3K);
}

A5 void q42_llamacpp_rows_q2_k_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	if (n_tok == 1)
		q2k_rows1(n, n_rows, w, w_stride, x, y);
	else
		lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_Q2K);
}


/* IQ4_XS's eight sub-block scales of the block at a (6 bits less 32) */
A2_INLINE __m256i iq4xs_scales(const uint8_t *a)
{
	const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)q42_ld32(a + IQ4_XS_SCALES_L)),
							      _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
					    _mm256_set1_epi32(0xF));
	const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)q42_ld16(a + IQ4_XS_SCALES_H)),
							      _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
					    _mm256_set1_epi32(3));
	return _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
}

/* IQ4_XS on AVX2 (q42_llamacpp_dot_iq4_xs), one (row, token) at a time: a
 * 32-byte quant group holds sub-blocks 2c | 2c + 1, whose low nibbles pair
 * with the first 16 of each sub-block's y and high nibbles with the last
 * 16; signed products (exact), times the lanes' scales, summed exactly. */
A2 void q42_llamacpp_rows_iq4_xs_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	const __m256i grid = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q42_iq4nl_values));
	const __m256i m15 = _mm256_set1_epi8(0x0F);
	for (int64_t r = 0; r < n_rows; r++)
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			float acc = 0.0f;
			for (int64_t j = 0; j < n / Q42_QK_K; j++, a += IQ4_XS_BYTES, b += Q8_K_BYTES) {
				const __m256i scv = iq4xs_scales(a);
				__m256i sum = _mm256_setzero_si256();
				for (int c = 0; c < 4; c++) {
					const __m256i q = _mm256_loadu_si256((const __m256i *)(a + IQ4_XS_QS + 32 * c));
					const __m256i y0 = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 64 * c));
					const __m256i y1 = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 64 * c + 32));
					const __m256i lo = _mm256_shuffle_epi8(grid, _mm256_and_si256(q, m15));
					const __m256i hi = _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(q, 4), m15));
					const __m256i p = _mm256_add_epi32(x86_dot_i8(lo, _mm256_permute2x128_si256(y0, y1, 0x20)),
									   x86_dot_i8(hi, _mm256_permute2x128_si256(y0, y1, 0x31)));
					const __m256i sc = _mm256_permutevar8x32_epi32(
						scv, _mm256_setr_epi32(2 * c, 2 * c, 2 * c, 2 * c, 2 * c + 1, 2 * c + 1, 2 * c + 1,
								       2 * c + 1));
					sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(p, sc));
				}
				acc = fmaf((float)x86_hsum_i32(sum), _cvtsh_ss(q42_ld16(a + IQ4_XS_D)) * q42_ldf32(b + Q8_K_D),
					   acc);
			}
			y[(uint64_t)t * y_stride + (uint64_t)r] = acc;
		}
}

/* IQ4_XS (llama.cpp's AMX buffer, q42_llamacpp_dot_iq4_xs) for up to XS_T
 * tokens per pass over a row: a super-block's 32-byte quant groups c hold
 * sub-blocks 2c and 2c + 1; copied as [A A B B] and split by pair_nibbles
 * they are 64 elements in y's order, looked up in the grid plus 128. Per
 * token: VNNI sums times the sub-block scales (exact int32), less 128 x
 * each sub-block's y sum (Q8_K's bsums) times its scale, then one fma. */
enum { XS_T = 8 };

A5_INLINE void xs_tile(int T, int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const uint8_t *x,
		       uint64_t x_stride, float *y, uint64_t y_stride)
{
	const __m512i grid = _mm512_add_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)q42_iq4nl_values)),
					     _mm512_set1_epi8((char)0x80));
	for (int64_t r = 0; r < n_rows; r++) {
		const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
		float acc[XS_T] = {0};
		for (int64_t j = 0; j < n / Q42_QK_K; j++, a += IQ4_XS_BYTES) {
			/* the sub-block scales; and less 128 times them, for the
			 * sums of y the grid offset adds */
			const __m256i scv = iq4xs_scales(a);
			const __m256i scm = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(scv, 7));
			__m512i v[4], s[4];
			UNROLL
			for (int c = 0; c < 4; c++) {
				const __m512i raw = _mm512_castsi256_si512(
					_mm256_loadu_si256((const __m256i *)(a + IQ4_XS_QS + 32 * c)));
				v[c] = _mm512_shuffle_epi8(grid, pair_nibbles(_mm512_shuffle_i64x2(raw, raw, _MM_SHUFFLE(1, 1, 0, 0))));
				s[c] = _mm512_permutexvar_epi32(
					_mm512_inserti64x4(_mm512_set1_epi32(2 * c), _mm256_set1_epi32(2 * c + 1), 1),
					_mm512_castsi256_si512(scv));
			}
			const float dw = _cvtsh_ss(q42_ld16(a + IQ4_XS_D));
			UNROLL
			for (int t = 0; t < T; t++) {
				const uint8_t *b = x + (uint64_t)t * x_stride + (uint64_t)j * Q8_K_BYTES;
				__m512i sum = _mm512_setzero_si512();
				UNROLL
				for (int c = 0; c < 4; c++)
					sum = _mm512_add_epi32(
						sum, _mm512_mullo_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), v[c],
											    _mm512_loadu_si512((const void *)(b + Q8_K_QS + 64 * c))),
									s[c]));
				/* sub-block ib's y sum is bsums 2ib + 2ib + 1 */
				const __m256i ys = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS)),
								     _mm256_set1_epi16(1));
				sum = _mm512_add_epi32(sum, _mm512_zextsi256_si512(_mm256_mullo_epi32(ys, scm)));
				const int32_t isum = _mm512_reduce_add_epi32(sum);
				acc[t] = fmaf((float)isum, dw * q42_ldf32(b + Q8_K_D), acc[t]);
			}
		}
		UNROLL
		for (int t = 0; t < T; t++)
			y[(uint64_t)t * y_stride + (uint64_t)r] = acc[t];
	}
}

A5 void q42_llamacpp_rows_iq4_xs_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	for (int64_t t0 = 0; t0 < n_tok; t0 += XS_T) {
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t0 * x_stride;
		float *yt = y + (uint64_t)t0 * y_stride;
		/* the tile's width as a constant, so its accumulators stay in
		 * registers */
		switch (n_tok - t0 < XS_T ? n_tok - t0 : XS_T) {
#define XS_TILE(T)                                                                                    	case T: xs_tile(T, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride); break;
		XS_TILE(1) XS_TILE(2) XS_TILE(3) XS_TILE(4) XS_TILE(5) XS_TILE(6) XS_TILE(7)
		default: xs_tile(XS_T, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride); break;
#undef XS_TILE
		}
	}
}

/* ---- Q4_K / Q6_K against Q8_K ------------------------------------------ */

/* Exact sum over the 8 sub-blocks of scale * (quants . y) of one q4_K
 * super-block (quants at qs), or q5_K (qh >= 0: the fifth bits, bit e /
 * 32 of byte e % 32, no int16 pair overflows: 31 * 127 * 2); *summ gets
 * sum of min * bsum pairs (all products fit int32). */
A2_INLINE int32_t isum_q4_k(const uint8_t *a, const uint8_t *b, int32_t *summ, int qs, int qh)
{
	uint8_t sc[8], mn[8];
	const __m256i m15 = _mm256_set1_epi8(0x0F), bit4 = _mm256_set1_epi8(0x10);
	const __m256i hb = qh < 0 ? _mm256_setzero_si256() : _mm256_loadu_si256((const __m256i *)(a + qh));
	__m256i acc = _mm256_setzero_si256();
	x86_k4_scales(a + Q4_K_SCALES, sc, mn);
	for (int c = 0; c < 4; c++) {
		const __m256i q = _mm256_loadu_si256((const __m256i *)(a + qs + 32 * c));
		const __m256i ya = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 64 * c));
		const __m256i yb = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 64 * c + 32));
		/* bit 2c (2c + 1) of each qh byte moved to bit 4 */
		const __m256i ha = _mm256_and_si256(
			_mm256_slli_epi16(_mm256_srl_epi16(hb, _mm_cvtsi32_si128(2 * c)), 4), bit4);
		const __m256i hbb = _mm256_and_si256(
			_mm256_slli_epi16(_mm256_srl_epi16(hb, _mm_cvtsi32_si128(2 * c + 1)), 4), bit4);
		const __m256i pa = _mm256_maddubs_epi16(_mm256_or_si256(_mm256_and_si256(q, m15), ha), ya);
		const __m256i pb = _mm256_maddubs_epi16(
			_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m15), hbb), yb);
		acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pa, _mm256_set1_epi16(sc[2 * c])));
		acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pb, _mm256_set1_epi16(sc[2 * c + 1])));
	}
	*summ = x86_q8k_summ(b, mn);
	return x86_hsum_i32(acc);
}

/* q6_K: 32-element steps (h, q), quant = low 4 bits | 2 high bits << 4,
 * minus 32; the first 16 elements of a step take scale 8h+2q, the rest
 * 8h+2q+1. */
A2_INLINE int32_t isum_q6_k(const uint8_t *a, const uint8_t *b)
{
	const __m256i m15 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
	const __m256i off = _mm256_set1_epi8(32);
	__m256i acc = _mm256_setzero_si256();
	for (int h = 0; h < 2; h++) {
		const __m256i qh = _mm256_loadu_si256((const __m256i *)(a + Q6_K_QH + 32 * h));
		for (int q = 0; q < 4; q++) {
			const __m256i l = _mm256_loadu_si256(
				(const __m256i *)(a + Q6_K_QL + 64 * h + 32 * (q % 2)));
			const __m256i lo4 = q < 2 ? _mm256_and_si256(l, m15)
						  : _mm256_and_si256(_mm256_srli_epi16(l, 4), m15);
			const __m256i hi2 = _mm256_and_si256(
				_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * q)), m3);
			const __m256i u = _mm256_or_si256(lo4, _mm256_slli_epi16(hi2, 4));
			const __m256i yv = _mm256_loadu_si256(
				(const __m256i *)(b + Q8_K_QS + 128 * h + 32 * q));
			const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(u, yv),
							   _mm256_maddubs_epi16(off, yv));
			const int s = 8 * h + 2 * q;
			const __m256i scv = _mm256_setr_m128i(
				_mm_set1_epi16((int8_t)a[Q6_K_SCALES + s]),
				_mm_set1_epi16((int8_t)a[Q6_K_SCALES + s + 1]));
			acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, scv));
		}
	}
	return x86_hsum_i32(acc);
}

/* Integer sums per row first (exact), then the scalar kernel's float
 * chain with the eight rows in lanes. */
#define ROWS_QK(NAME, TGT, BYTES, IS_Q4K, QS, QH)                                                            \
	TGT void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                                  \
	{                                                                                                    \
		const int64_t nb = n / Q42_QK_K;                                                             \
		for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {                                             \
			const uint8_t *wr[GROUP];                                                            \
			group_rows(w, w_stride, r0, n_rows, GROUP, wr);                                      \
			const uint8_t *nx[GROUP];                                                            \
			const int64_t r1 = r0 + GROUP < n_rows ? r0 + GROUP : r0;                            \
			group_rows(w, w_stride, r1, n_rows, GROUP, nx);                                      \
			for (int64_t t = 0; t < n_tok; t++) {                                                \
				const uint8_t *xb = (const uint8_t *)x + (uint64_t)t * x_stride;             \
				__m256 acc = _mm256_setzero_ps();                                            \
				float out[GROUP];                                                            \
				for (int64_t j = 0; j < nb; j++, xb += Q8_K_BYTES) {                         \
					prefetch_rows(nx, j * (BYTES), BYTES);                               \
					int32_t is[GROUP], sm[GROUP];                                        \
					const int64_t o = j * (BYTES);                                       \
					const __m256 yd = _mm256_set1_ps(q42_ldf32(xb + Q8_K_D));            \
					for (int r = 0; r < GROUP; r++)                                      \
						is[r] = IS_Q4K ? isum_q4_k(wr[r] + o, xb, &sm[r], QS, QH)    \
							       : isum_q6_k(wr[r] + o, xb);                   \
					const __m256 dw = halves_rows(wr, o + (IS_Q4K ? Q4_K_D : Q6_K_D));   \
					acc = _mm256_fmadd_ps(                                               \
						_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)is)), \
						_mm256_mul_ps(dw, yd), acc);                                 \
					if (IS_Q4K) {                                                        \
						const __m256 dm = _mm256_mul_ps(                             \
							yd, halves_rows(wr, o + Q4_K_DMIN));                 \
						acc = _mm256_fmadd_ps(                                       \
							_mm256_cvtepi32_ps(_mm256_loadu_si256(               \
								(const __m256i *)sm)),                       \
							_mm256_xor_ps(dm, _mm256_set1_ps(-0.0f)), acc);      \
					}                                                                    \
				}                                                                            \
				_mm256_storeu_ps(out, acc);                                                  \
				store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP);             \
			}                                                                                    \
		}                                                                                            \
	}

ROWS_QK(rows1_q4_k_avx2, A2_INLINE, Q4_K_BYTES, 1, Q4_K_QS, -1)
ROWS_QK(rows1_q5_k_avx2, A2_INLINE, Q5_K_BYTES, 1, Q5_K_QS, Q5_K_QH)
ROWS_QK(rows1_q6_k_avx2, A2_INLINE, Q6_K_BYTES, 0, 0, -1)

/* The float steps of one super-block of row a for eight tokens (token t in
 * lane t, its Q8_K scale in yd): fma(isum, d_w * yd), then for q4_K /
 * q5_K fma(summ, -(yd * dmin)), as the one-token kernels do per row. */
A2_INLINE __m256 kq_fmas(__m256 acc, __m256i isum, __m256i summ, __m256 yd, const uint8_t *a, bool q6)
{
	const __m256 dw = _mm256_set1_ps(_cvtsh_ss(q42_ld16(a + (q6 ? Q6_K_D : Q4_K_D))));
	acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dw, yd), acc);
	if (q6)
		return acc;
	const __m256 dm = _mm256_mul_ps(yd, _mm256_set1_ps(_cvtsh_ss(q42_ld16(a + Q4_K_DMIN))));
	return _mm256_fmadd_ps(_mm256_cvtepi32_ps(summ), _mm256_xor_ps(dm, _mm256_set1_ps(-0.0f)), acc);
}

/* The entry points: the one-token kernel for one token, else TOK. */
#define KQ_ENTRY(NAME, TGT, TOK, ONE, KIND)                                                       \
	TGT void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                       \
	{                                                                                         \
		if (n_tok > 1)                                                                    \
			TOK(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, KIND);       \
		else                                                                              \
			ONE(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);             \
	}

/* Several tokens on AVX2: as the AVX-512 kq_rows_tok, one row's
 * super-block unpacked once (into eight 32-element chunks of quants and
 * their int16 scale vectors, kept in memory: sixteen registers do not
 * hold them) for up to eight tokens, token t in lane t of the reduction.
 * q6_K's -32 comes off as 32 times the scaled bsums (Q8_K's bsums are its
 * group sums), as isum16_q6_k does. */
struct kq2 {
	__m256i q[8], s[8];
	uint8_t mn[8];
	__m256i sc16; /* q6_K scales */
};

A2_INLINE void kq2_unpack(const uint8_t *a, struct kq2 *u, int kind)
{
	const __m256i m15 = _mm256_set1_epi8(0x0F);
	if (kind == 2) {
		const __m256i m3 = _mm256_set1_epi8(3);
		for (int h = 0; h < 2; h++) {
			const __m256i qh = _mm256_loadu_si256((const __m256i *)(a + Q6_K_QH + 32 * h));
			for (int q = 0; q < 4; q++) {
				const __m256i l = _mm256_loadu_si256((const __m256i *)(a + Q6_K_QL + 64 * h + 32 * (q % 2)));
				const __m256i lo4 = q < 2 ? _mm256_and_si256(l, m15) : _mm256_and_si256(_mm256_srli_epi16(l, 4), m15);
				const __m256i hi2 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * q)), m3);
				const int sidx = 8 * h + 2 * q;
				u->q[4 * h + q] = _mm256_or_si256(lo4, _mm256_slli_epi16(hi2, 4));
				u->s[4 * h + q] = _mm256_setr_m128i(_mm_set1_epi16((int8_t)a[Q6_K_SCALES + sidx]),
								    _mm_set1_epi16((int8_t)a[Q6_K_SCALES + sidx + 1]));
			}
		}
		u->sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + Q6_K_SCALES)));
		return;
	}
	const int qs = kind == 0 ? Q4_K_QS : Q5_K_QS, qh = kind == 0 ? -1 : Q5_K_QH;
	const __m256i bit4 = _mm256_set1_epi8(0x10);
	const __m256i hb = qh < 0 ? _mm256_setzero_si256() : _mm256_loadu_si256((const __m256i *)(a + qh));
	uint8_t sc[8];
	x86_k4_scales(a + Q4_K_SCALES, sc, u->mn);
	for (int c = 0; c < 4; c++) {
		const __m256i q = _mm256_loadu_si256((const __m256i *)(a + qs + 32 * c));
		const __m256i ha = _mm256_and_si256(_mm256_slli_epi16(_mm256_srl_epi16(hb, _mm_cvtsi32_si128(2 * c)), 4), bit4);
		const __m256i hbb =
			_mm256_and_si256(_mm256_slli_epi16(_mm256_srl_epi16(hb, _mm_cvtsi32_si128(2 * c + 1)), 4), bit4);
		u->q[2 * c] = _mm256_or_si256(_mm256_and_si256(q, m15), ha);
		u->q[2 * c + 1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m15), hbb);
		u->s[2 * c] = _mm256_set1_epi16(sc[2 * c]);
		u->s[2 * c + 1] = _mm256_set1_epi16(sc[2 * c + 1]);
	}
}

/* one token's eight-lane integer sum (chunk c against y + 32c) */
A2_INLINE __m256i kq2_isum(const struct kq2 *u, const uint8_t *b, int kind)
{
	__m256i acc = _mm256_setzero_si256();
	if (kind == 2)
		acc = _mm256_sub_epi32(acc, _mm256_slli_epi32(_mm256_madd_epi16(u->sc16, _mm256_loadu_si256(
										      (const __m256i *)(b + Q8_K_BSUMS))),
							      5));
	for (int c = 0; c < 8; c++)
		acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u->q[c], _mm256_loadu_si256(
										     (const __m256i *)(b + Q8_K_QS + 32 * c))),
							      u->s[c]));
	return acc;
}

A2_INLINE void kq2_rows_tok(Q42_LLAMACPP_ROWS_ARGS, int kind)
{
	const int64_t nb = n / Q42_QK_K, bytes = kind == 0 ? Q4_K_BYTES : kind == 1 ? Q5_K_BYTES : Q6_K_BYTES;
	for (int64_t t0 = 0; t0 < n_tok; t0 += GROUP) {
		const int64_t nt = n_tok - t0 < GROUP ? n_tok - t0 : GROUP;
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t0 * x_stride;
		for (int64_t r = 0; r < n_rows; r++) {
			const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
			__m256 acc = _mm256_setzero_ps();
			for (int64_t j = 0; j < nb; j++, a += bytes) {
				struct kq2 u;
				kq2_unpack(a, &u, kind);
				__m256i is[GROUP];
				int32_t sm[GROUP];
				float ydv[GROUP];
				for (int t = 0; t < GROUP; t++) {
					/* tokens past the tile repeat its last one (never stored) */
					const uint8_t *b = xt + (uint64_t)(t < nt ? t : nt - 1) * x_stride +
							   (uint64_t)j * Q8_K_BYTES;
					is[t] = kq2_isum(&u, b, kind);
					sm[t] = kind == 2 ? 0 : x86_q8k_summ(b, u.mn);
					ydv[t] = q42_ldf32(b + Q8_K_D);
				}
				acc = kq_fmas(acc, x86_reduce8(is), _mm256_loadu_si256((const __m256i *)sm),
					      _mm256_loadu_ps(ydv), a, kind == 2);
			}
			float out[GROUP];
			_mm256_storeu_ps(out, acc);
			for (int64_t t = 0; t < nt; t++)
				y[(uint64_t)(t0 + t) * y_stride + (uint64_t)r] = out[t];
		}
	}
}

KQ_ENTRY(q42_llamacpp_rows_q4_k_avx2, A2, kq2_rows_tok, rows1_q4_k_avx2, 0)
KQ_ENTRY(q42_llamacpp_rows_q5_k_avx2, A2, kq2_rows_tok, rows1_q5_k_avx2, 1)
KQ_ENTRY(q42_llamacpp_rows_q6_k_avx2, A2, kq2_rows_tok, rows1_q6_k_avx2, 2)

/* AVX-512 VNNI: one 512-bit int32 accumulator per row and super-block
 * (the exact total split over sixteen lanes), quants times y by
 * vpmaddubsw, int16 pairs times the sub-block scale by vpdpwssd. The
 * sub-block scales reach their lanes by one byte or word permute per
 * vector; the eight accumulators of a group are reduced together. */

/* int16 words 0..15 all = a, 16..31 all = b */
A5_INLINE __m512i halves16(short a, short b)
{
	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(a)), _mm256_set1_epi16(b), 1);
}

/* Totals of eight rows' sixteen-lane accumulators, row r in lane r. */
A5_INLINE __m256i reduce_rows16(const __m512i v[GROUP])
{
	__m512i w[4];
	for (int k = 0; k < 4; k++)
		/* 256-bit half 0: row k's two halves added, half 1: row k + 4's */
		w[k] = _mm512_add_epi32(_mm512_shuffle_i32x4(v[k], v[k + 4], _MM_SHUFFLE(1, 0, 1, 0)),
					_mm512_shuffle_i32x4(v[k], v[k + 4], _MM_SHUFFLE(3, 2, 3, 2)));
	const __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(w[0], w[1]),
					    _mm512_unpackhi_epi32(w[0], w[1]));
	const __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(w[2], w[3]),
					    _mm512_unpackhi_epi32(w[2], w[3]));
	const __m512i u = _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1),
					   _mm512_unpackhi_epi64(t0, t1));
	const __m512i p = _mm512_shuffle_i32x4(u, u, _MM_SHUFFLE(3, 1, 2, 0));
	return _mm256_add_epi32(_mm512_castsi512_si256(p), _mm512_extracti64x4_epi64(p, 1));
}

/* The low nibble of each byte in the lower 256 bits, the high nibble
 * (moved down) in the upper: one GF(2) affine step (vgf2p8affineqb: result
 * bit i of a byte is the parity of the source bits set in matrix byte
 * 7 - i) does a shift and a mask. */
A5_INLINE __m512i nibbles_gf(__m512i v)
{
	const long long lo = 0x0102040800000000LL, hi = 0x1020408000000000LL;
	return _mm512_gf2p8affine_epi64_epi8(v, _mm512_set_epi64(hi, hi, hi, hi, lo, lo, lo, lo), 0);
}

/* q4_K: 32 quant bytes c hold elements 64c..64c+31 (low nibbles, scale
 * 2c) and 64c+32..64c+63 (high nibbles, scale 2c+1); broadcast to both
 * halves and split by nibbles_gf they are 64 elements in y's order (q5_K,
 * qh >= 0: with bit 2c or 2c+1 of the qh bytes, broadcast the same way,
 * as bit 4). The mins term goes to *summ as eight int32 (bsum pairs times
 * mins). */
A5_INLINE __m512i isum16_q4_k(const uint8_t *a, const uint8_t *b, __m256i *summ, int qs, int qh)
{
	const uint32_t u0 = q42_ld32(a + Q4_K_SCALES), u1 = q42_ld32(a + Q4_K_SCALES + 4),
		       u2 = q42_ld32(a + Q4_K_SCALES + 8);
	const uint64_t sc = (uint64_t)(u0 & 0x3F3F3F3Fu) |
			    (uint64_t)((u2 & 0x0F0F0F0Fu) | ((u0 >> 2) & 0x30303030u)) << 32;
	const uint64_t mn = (uint64_t)(u1 & 0x3F3F3F3Fu) |
			    (uint64_t)(((u2 >> 4) & 0x0F0F0F0Fu) | ((u1 >> 2) & 0x30303030u)) << 32;
	const __m512i scb = _mm512_set1_epi64((long long)sc);
	const __m512i bit4 = _mm512_set1_epi8(0x10);
	const __m512i hb = qh < 0 ? _mm512_setzero_si512()
				  : _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(a + qh)));
	__m512i acc = _mm512_setzero_si512();
	UNROLL
	for (int c = 0; c < 4; c++) {
		__m512i q = nibbles_gf(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(a + qs + 32 * c))));
		if (qh >= 0)
			q = _mm512_or_si512(q, _mm512_and_si512(_mm512_slli_epi16(_mm512_srlv_epi16(
									      hb, halves16((short)(2 * c),
											   (short)(2 * c + 1))),
									      4),
								      bit4));
		const __m512i p = _mm512_maddubs_epi16(
			q, _mm512_loadu_si512((const void *)(b + Q8_K_QS + 64 * c)));
		/* words: scale byte 2c (or 2c+1), high byte zeroed */
		const __m512i s = _mm512_shuffle_epi8(
			scb, halves16((short)(0x8000 | (2 * c)), (short)(0x8000 | (2 * c + 1))));
		acc = _mm512_dpwssd_epi32(acc, p, s);
	}
	const __m128i m = _mm_cvtsi64_si128((long long)mn);
	*summ = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS)),
				  _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m, m)));
	return acc;
}

/* int16 words of 128-bit lane L all = k + L */
A5_INLINE __m512i lanes16(int k)
{
	const long long one = 0x0001000100010001LL;
	return _mm512_set_epi64(one * (k + 3), one * (k + 3), one * (k + 2), one * (k + 2),
				one * (k + 1), one * (k + 1), one * k, one * k);
}

/* q6_K: the 64 ql bytes of half h give elements 128h..128h+63 (low
 * nibbles) and 128h+64..128h+127 (high), each 128-bit lane one 16-element
 * sub-block; the 32 qh bytes, broadcast, give the two high bits by a
 * per-half shift. The -32 offset is taken out once per super-block as
 * 32 * sum(scale * bsum): Q8_K's bsums are its group sums (every Q8_K
 * comes from the quantizer), as the q4_K mins term already relies on. */
A5_INLINE __m512i isum16_q6_k(const uint8_t *a, const uint8_t *b)
{
	const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + Q6_K_SCALES)));
	const __m256i corr = _mm256_slli_epi32(
		_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS))), 5);
	const __m512i sc = _mm512_castsi256_si512(sc16);
	const __m512i m15 = _mm512_set1_epi8(0x0F), m48 = _mm512_set1_epi8(0x30);
	const __m512i cl = halves16(4, 2), ch = halves16(0, 2);
	__m512i acc = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
	UNROLL
	for (int h = 0; h < 2; h++) {
		const __m512i ql = _mm512_loadu_si512((const void *)(a + Q6_K_QL + 64 * h));
		const __m512i qh = _mm512_broadcast_i64x4(
			_mm256_loadu_si256((const __m256i *)(a + Q6_K_QH + 32 * h)));
		/* (x & 0x0F) | hi, hi already in bits 4..5 */
		const __m512i lo = _mm512_ternarylogic_epi32(
			ql, m15, _mm512_and_si512(_mm512_sllv_epi16(qh, cl), m48), 0xEA);
		const __m512i hi = _mm512_ternarylogic_epi32(
			_mm512_srli_epi16(ql, 4), m15, _mm512_and_si512(_mm512_srlv_epi16(qh, ch), m48),
			0xEA);
		acc = _mm512_dpwssd_epi32(
			acc,
			_mm512_maddubs_epi16(lo, _mm512_loadu_si512((const void *)(b + Q8_K_QS + 128 * h))),
			_mm512_permutexvar_epi16(lanes16(8 * h), sc));
		acc = _mm512_dpwssd_epi32(
			acc,
			_mm512_maddubs_epi16(hi, _mm512_loadu_si512(
							 (const void *)(b + Q8_K_QS + 128 * h + 64))),
			_mm512_permutexvar_epi16(lanes16(8 * h + 4), sc));
	}
	return acc;
}

/* The float chain of ROWS_QK, on sums from the 512-bit integer parts. */
#define ROWS_QK512(NAME, BYTES, IS_Q4K, QS, QH)                                                               \
	A5_INLINE void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                                   \
	{                                                                                                    \
		const int64_t nb = n / Q42_QK_K;                                                             \
		for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {                                             \
			const uint8_t *wr[GROUP];                                                            \
			group_rows(w, w_stride, r0, n_rows, GROUP, wr);                                      \
			const uint8_t *nx[GROUP];                                                            \
			const int64_t r1 = r0 + GROUP < n_rows ? r0 + GROUP : r0;                            \
			group_rows(w, w_stride, r1, n_rows, GROUP, nx);                                      \
			for (int64_t t = 0; t < n_tok; t++) {                                                \
				const uint8_t *xb = (const uint8_t *)x + (uint64_t)t * x_stride;             \
				__m256 acc = _mm256_setzero_ps();                                            \
				float out[GROUP];                                                            \
				for (int64_t j = 0; j < nb; j++, xb += Q8_K_BYTES) {                         \
					const int64_t o = j * (BYTES);                                       \
					if (t == 0)                                                          \
						prefetch_rows(nx, o, BYTES);                                 \
					__m512i is[GROUP];                                                   \
					__m256i sm[GROUP];                                                   \
					const __m256 yd = _mm256_set1_ps(q42_ldf32(xb + Q8_K_D));            \
					UNROLL                                                               \
					for (int r = 0; r < GROUP; r++)                                      \
						is[r] = IS_Q4K ? isum16_q4_k(wr[r] + o, xb, &sm[r], QS, QH)  \
							       : isum16_q6_k(wr[r] + o, xb);                 \
					const __m256 dw = halves_rows(wr, o + (IS_Q4K ? Q4_K_D : Q6_K_D));   \
					acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(reduce_rows16(is)),         \
							      _mm256_mul_ps(dw, yd), acc);                   \
					if (IS_Q4K) {                                                        \
						const __m256 dm = _mm256_mul_ps(                             \
							yd, halves_rows(wr, o + Q4_K_DMIN));                 \
						acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(x86_reduce8(sm)),   \
								      _mm256_xor_ps(dm, _mm256_set1_ps(-0.0f)), \
								      acc);                                  \
					}                                                                    \
				}                                                                            \
				_mm256_storeu_ps(out, acc);                                                  \
				store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP);             \
			}                                                                                    \
		}                                                                                            \
	}

ROWS_QK512(rows1_q4_k_avx512, Q4_K_BYTES, 1, Q4_K_QS, -1)
ROWS_QK512(rows1_q5_k_avx512, Q5_K_BYTES, 1, Q5_K_QS, Q5_K_QH)
ROWS_QK512(rows1_q6_k_avx512, Q6_K_BYTES, 0, 0, -1)

/* Several tokens (prompt processing without AMX tiles): the roles of rows
 * and tokens swapped -- one row's super-block is unpacked once (quants,
 * the four scale vectors, the mins or the q6_K scales) and multiplied by
 * up to eight tokens, whose sums are reduced together (token t in lane t)
 * and take the same two (q6_K: one) fmas per super-block as one token
 * does. The integer sums are those of isum16_q4_k / isum16_q6_k (exact, in
 * another order). */
struct kq {
	__m512i q[4], s[4];
	__m256i m16; /* q4_K / q5_K: the mins as int16; q6_K: the scales */
};

A5_INLINE void kq_unpack_q4k(const uint8_t *a, struct kq *u, int qs, int qh)
{
	const uint32_t u0 = q42_ld32(a + Q4_K_SCALES), u1 = q42_ld32(a + Q4_K_SCALES + 4),
		       u2 = q42_ld32(a + Q4_K_SCALES + 8);
	const uint64_t sc = (uint64_t)(u0 & 0x3F3F3F3Fu) |
			    (uint64_t)((u2 & 0x0F0F0F0Fu) | ((u0 >> 2) & 0x30303030u)) << 32;
	const uint64_t mn = (uint64_t)(u1 & 0x3F3F3F3Fu) |
			    (uint64_t)(((u2 >> 4) & 0x0F0F0F0Fu) | ((u1 >> 2) & 0x30303030u)) << 32;
	const __m512i scb = _mm512_set1_epi64((long long)sc);
	const __m512i hb = qh < 0 ? _mm512_setzero_si512()
				  : _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(a + qh)));
	UNROLL
	for (int c = 0; c < 4; c++) {
		__m512i q = nibbles_gf(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(a + qs + 32 * c))));
		if (qh >= 0)
			q = _mm512_or_si512(
				q, _mm512_and_si512(_mm512_slli_epi16(_mm512_srlv_epi16(hb, halves16((short)(2 * c),
												       (short)(2 * c + 1))),
								     4),
						    _mm512_set1_epi8(0x10)));
		u->q[c] = q;
		u->s[c] = _mm512_shuffle_epi8(scb, halves16((short)(0x8000 | (2 * c)), (short)(0x8000 | (2 * c + 1))));
	}
	const __m128i m = _mm_cvtsi64_si128((long long)mn);
	u->m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m, m));
}

A5_INLINE void kq_unpack_q6k(const uint8_t *a, struct kq *u)
{
	const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + Q6_K_SCALES)));
	const __m512i sc = _mm512_castsi256_si512(sc16);
	const __m512i m15 = _mm512_set1_epi8(0x0F), m48 = _mm512_set1_epi8(0x30);
	const __m512i cl = halves16(4, 2), ch = halves16(0, 2);
	UNROLL
	for (int h = 0; h < 2; h++) {
		const __m512i ql = _mm512_loadu_si512((const void *)(a + Q6_K_QL + 64 * h));
		const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(a + Q6_K_QH + 32 * h)));
		u->q[2 * h] = _mm512_ternarylogic_epi32(ql, m15, _mm512_and_si512(_mm512_sllv_epi16(qh, cl), m48), 0xEA);
		u->q[2 * h + 1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), m15,
							    _mm512_and_si512(_mm512_srlv_epi16(qh, ch), m48), 0xEA);
		u->s[2 * h] = _mm512_permutexvar_epi16(lanes16(8 * h), sc);
		u->s[2 * h + 1] = _mm512_permutexvar_epi16(lanes16(8 * h + 4), sc);
	}
	u->m16 = sc16;
}

/* One token's (Q8_K block b) sixteen-lane sum; q6_K starts from -32 times
 * the scaled bsums as isum16_q6_k does */
A5_INLINE __m512i kq_isum(const struct kq *u, const uint8_t *b, bool q6)
{
	__m512i acc = _mm512_setzero_si512();
	if (q6)
		acc = _mm512_zextsi256_si512(_mm256_sub_epi32(
			_mm256_setzero_si256(),
			_mm256_slli_epi32(_mm256_madd_epi16(u->m16, _mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS))),
					  5)));
	UNROLL
	for (int c = 0; c < 4; c++)
		acc = _mm512_dpwssd_epi32(
			acc, _mm512_maddubs_epi16(u->q[c], _mm512_loadu_si512((const void *)(b + Q8_K_QS + 64 * c))),
			u->s[c]);
	return acc;
}

enum { KQ_T = 8 };

/* kind: 0 q4_K, 1 q5_K, 2 q6_K */
A5_INLINE void kq_rows_tok(Q42_LLAMACPP_ROWS_ARGS, int kind)
{
	const bool q6 = kind == 2;
	const int64_t nb = n / Q42_QK_K, bytes = kind == 0 ? Q4_K_BYTES : kind == 1 ? Q5_K_BYTES : Q6_K_BYTES;
	for (int64_t t0 = 0; t0 < n_tok; t0 += KQ_T) {
		const int64_t nt = n_tok - t0 < KQ_T ? n_tok - t0 : KQ_T;
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t0 * x_stride;
		for (int64_t r = 0; r < n_rows; r++) {
			const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
			__m256 acc = _mm256_setzero_ps();
			for (int64_t j = 0; j < nb; j++, a += bytes) {
				struct kq u;
				if (q6)
					kq_unpack_q6k(a, &u);
				else
					kq_unpack_q4k(a, &u, kind == 0 ? Q4_K_QS : Q5_K_QS, kind == 0 ? -1 : Q5_K_QH);
				__m512i is[KQ_T];
				__m256i sm[KQ_T];
				float ydv[KQ_T];
				UNROLL
				for (int t = 0; t < KQ_T; t++) {
					/* tokens past the tile repeat its last one (never stored) */
					const uint8_t *b = xt + (uint64_t)(t < nt ? t : nt - 1) * x_stride +
							   (uint64_t)j * Q8_K_BYTES;
					is[t] = kq_isum(&u, b, q6);
					if (!q6)
						sm[t] = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS)),
									  u.m16);
					ydv[t] = q42_ldf32(b + Q8_K_D);
				}
				acc = kq_fmas(acc, reduce_rows16(is), q6 ? _mm256_setzero_si256() : x86_reduce8(sm),
					      _mm256_loadu_ps(ydv), a, q6);
			}
			float out[KQ_T];
			_mm256_storeu_ps(out, acc);
			for (int64_t t = 0; t < nt; t++)
				y[(uint64_t)(t0 + t) * y_stride + (uint64_t)r] = out[t];
		}
	}
}

KQ_ENTRY(q42_llamacpp_rows_q4_k_avx512, A5, kq_rows_tok, rows1_q4_k_avx512, 0)
KQ_ENTRY(q42_llamacpp_rows_q5_k_avx512, A5, kq_rows_tok, rows1_q5_k_avx512, 1)
KQ_ENTRY(q42_llamacpp_rows_q6_k_avx512, A5, kq_rows_tok, rows1_q6_k_avx512, 2)

/* ---- Q5_K in the plain CPU buffer (the zen4 variant) ------------------- */

/* ggml_vec_dot_q5_K_q8_K of the x86 build, per row and token as
 * q42_llamacpp_dot_q5_k_cpu defines it: per super-block eight int32 lanes,
 * lane l of 32-value chunk c the exact sum of its values 4l..4l+3 times
 * y, times the chunk's scale; one fma per lane and super-block; the min
 * term apart in a scalar fma; hsum_float_8 plus that at the end. */
A2_INLINE __m256i q5k_cpu_chunk(__m256i nib, __m256i hbits, int bit, __m256i y, int16_t sc)
{
	const __m256i one = _mm256_set1_epi8(1);
	/* bit `bit` of each qh byte, moved to bit 4 (shifts within bytes) */
	const __m256i h = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, bit), one), 4);
	const __m256i q = _mm256_or_si256(nib, h);
	return _mm256_madd_epi16(_mm256_set1_epi16(sc), _mm256_maddubs_epi16(q, y));
}

/* The same for Q5_K (q5) and Q4_K (ggml_vec_dot_q4_K_q8_K, as
 * q42_llamacpp_dot_q4_k_cpu defines it: no fifth bit; the mins in four
 * float lanes, each one fma per super-block of an exact pair of min times
 * bsum products, reduced as (0+2) + (1+3) at the end). The two blocks
 * share their d, dmin, scales and quants offsets. */
A2_INLINE void k_cpu_rows(Q42_LLAMACPP_ROWS_ARGS, bool q5)
{
	const __m256i m4 = _mm256_set1_epi8(0x0F);
	const int64_t nsb = n / Q42_QK_K;
	for (int64_t r = 0; r < n_rows; r++)
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m256 acc = _mm256_setzero_ps();
			__m128 acc_m = _mm_setzero_ps();
			float summs = 0.0f;
			for (int64_t i = 0; i < nsb; i++, a += q5 ? Q5_K_BYTES : Q4_K_BYTES, b += Q8_K_BYTES) {
				const float yd = q42_ldf32(b + Q8_K_D);
				const float d = yd * _cvtsh_ss(q42_ld16(a + Q5_K_D));
				const float dmin = -yd * _cvtsh_ss(q42_ld16(a + Q5_K_DMIN));
				uint8_t sc[8], mn[8];
				int32_t pm[8];
				for (int c = 0; c < 8; c++) {
					q42_k4_scale_min(c, a + Q5_K_SCALES, &sc[c], &mn[c]);
					pm[c] = mn[c] * ((int16_t)q42_ld16(b + Q8_K_BSUMS + 4 * c) +
							 (int16_t)q42_ld16(b + Q8_K_BSUMS + 4 * c + 2));
				}
				if (q5)
					summs = fmaf(dmin, (float)(pm[0] + pm[1] + pm[2] + pm[3] + pm[4] + pm[5] + pm[6] + pm[7]),
						     summs);
				else
					acc_m = _mm_fmadd_ps(_mm_set1_ps(dmin),
							     _mm_cvtepi32_ps(_mm_setr_epi32(pm[0] + pm[1], pm[2] + pm[3],
											    pm[4] + pm[5], pm[6] + pm[7])),
							     acc_m);
				const uint8_t *qs = a + (q5 ? Q5_K_QS : Q4_K_QS);
				const __m256i hbits =
					q5 ? _mm256_loadu_si256((const __m256i *)(const void *)(a + Q5_K_QH)) : _mm256_setzero_si256();
				__m256i sumi = _mm256_setzero_si256();
				for (int j = 0; j < 4; j++) {
					const __m256i qb = _mm256_loadu_si256((const __m256i *)(const void *)(qs + 32 * j));
					const uint8_t *yq = b + Q8_K_QS + 64 * j;
					const __m256i p0 = q5k_cpu_chunk(
						_mm256_and_si256(qb, m4), hbits, 2 * j,
						_mm256_loadu_si256((const __m256i *)(const void *)yq), (int16_t)sc[2 * j]);
					const __m256i p1 = q5k_cpu_chunk(
						_mm256_and_si256(_mm256_srli_epi16(qb, 4), m4), hbits, 2 * j + 1,
						_mm256_loadu_si256((const __m256i *)(const void *)(yq + 32)), (int16_t)sc[2 * j + 1]);
					sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
				}
				acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
			}
			const __m128 h = _mm_add_ps(acc_m, _mm_movehl_ps(acc_m, acc_m));
			y[(uint64_t)t * y_stride + (uint64_t)r] =
				hsum_float8(acc) + (q5 ? summs : _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h))));
		}
}

A2 void q42_llamacpp_rows_q5_k_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	k_cpu_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
}

A2 void q42_llamacpp_rows_q4_k_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	k_cpu_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

/* ---- IQ4_XS, and Q4_K outside CPU_REPACK (the zen4 variant) ----------- */

/* ggml_vec_dot_iq4_xs_q8_K of the x86 build, per row and token as
 * q42_llamacpp_dot_iq4_xs_cpu defines it: a sub-block's 16 quant bytes
 * give [its low nibbles' values | its high nibbles'], against its 32 y;
 * signed products in int16 pairs (exact: at most 2 * 127 * 128), times
 * the sub-block's scale into eight int32 lanes; one fma per lane and
 * super-block; hsum_float_8. */
A2 void q42_llamacpp_rows_iq4_xs_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	const __m128i values = _mm_loadu_si128((const __m128i *)(const void *)q42_iq4nl_values);
	const __m128i m4 = _mm_set1_epi8(0x0F);
	const int64_t nsb = n / Q42_QK_K;
	for (int64_t r = 0; r < n_rows; r++)
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m256 acc = _mm256_setzero_ps();
			for (int64_t i = 0; i < nsb; i++, a += IQ4_XS_BYTES, b += Q8_K_BYTES) {
				__m256i sumi = _mm256_setzero_si256();
				for (int ib = 0; ib < Q42_QK_K / 32; ib++) {
					const __m128i q4 = _mm_loadu_si128((const __m128i *)(const void *)(a + IQ4_XS_QS + 16 * ib));
					const __m256i q = _mm256_setr_m128i(
						_mm_shuffle_epi8(values, _mm_and_si128(q4, m4)),
						_mm_shuffle_epi8(values, _mm_and_si128(_mm_srli_epi16(q4, 4), m4)));
					const __m256i yv =
						_mm256_loadu_si256((const __m256i *)(const void *)(b + Q8_K_QS + 32 * ib));
					const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(yv, q));
					sumi = _mm256_add_epi32(
						sumi, _mm256_madd_epi16(p, _mm256_set1_epi16((int16_t)q42_iq4xs_scale(a, ib))));
				}
				const float d = _cvtsh_ss(q42_ld16(a + IQ4_XS_D)) * q42_ldf32(b + Q8_K_D);
				acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
			}
			y[(uint64_t)t * y_stride + (uint64_t)r] = hsum_float8(acc);
		}
}

/* IQ4_XS of a multiple of 8 rows (q42_llamacpp_impl.h): the AMX
 * buffer's rounding for a pass the IQ panel takes, vec_dot's below */
A2 void q42_llamacpp_rows_iq4_xs_panel_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	(n_tok >= Q42_LLAMACPP_IQP_MIN_BATCH ? q42_llamacpp_rows_iq4_xs_avx2 : q42_llamacpp_rows_iq4_xs_cpu_avx2)(
		n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
}

A5 void q42_llamacpp_rows_iq4_xs_panel_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	(n_tok >= Q42_LLAMACPP_IQP_MIN_BATCH ? q42_llamacpp_rows_iq4_xs_avx512 : q42_llamacpp_rows_iq4_xs_cpu_avx2)(
		n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
}

#endif
