/* q42_x86_products_q8.c -- AVX2 / AVX-512 row products of the 32-element
 * legacy families against Q8_0 / Q8_1 activations: Q8_0, Q4_0, Q4_1 (both
 * llama.cpp's and the CPU-repack forms), Q5_0, Q5_1, IQ4_NL, in llama.cpp's
 * exact x86 arithmetic and ggml's generic one (q42_generic_*). One file
 * because these kernels share the pair/lanes8 unpack machinery.
 */
#include "kernels/x86/q42_x86_internal.h"

#if defined(__x86_64__) || defined(__i386__)

/* ---- Q8_0 / Q4_0 against Q8_0 ------------------------------------------ */

/* The totals of eight rows' vectors of int32 partial sums, given as the
 * pairwise sums h[p] = hadd(v[2p], v[2p + 1]): callers add each pair as
 * it comes, so that the rows' vectors never all live in registers at once
 * (eight of them plus the operands spill on AVX2's sixteen registers;
 * docs/perf/kernels.md).
 * Integer sums: exact in any order. */
A2_INLINE __m256i reduce_pairs8(const __m256i h[4])
{
	const __m256i lo = _mm256_hadd_epi32(h[0], h[1]), hi = _mm256_hadd_epi32(h[2], h[3]);
	return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31));
}

/* Exact integer sums of block j of eight rows (one per lane); ROW(r) is
 * row r's vector of partial sums. */
#define SUMS_PAIRS8(ROW)                                                                          \
	__m256i h[4];                                                                             \
	UNROLL                                                                                    \
	for (int p = 0; p < 4; p++)                                                               \
		h[p] = _mm256_hadd_epi32(ROW(2 * p), ROW(2 * p + 1));                             \
	return reduce_pairs8(h)

A2_INLINE __m256i sums_q8_0_avx2(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
#define ROW(r) x86_dot_i8(_mm256_loadu_si256((const __m256i *)(wr[r] + off + Q8_0_QS)), y)
	SUMS_PAIRS8(ROW);
#undef ROW
}

/* q4_1's nibbles are the quants (no offset; the min is a float term) */
A2_INLINE __m256i sums_q4_1_avx2(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
#define ROW(r) x86_dot_u8(x86_nibbles32(wr[r] + off + Q4_1_QS), y)
	SUMS_PAIRS8(ROW);
#undef ROW
}

/* q4_0: the sums of the nibbles, less 8 times the sum of y */
A2_INLINE __m256i sums_q4_0_avx2(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
	const __m256i ys8 = _mm256_set1_epi32(8 * x86_hsum_i32(x86_dot_u8(_mm256_set1_epi8(1), y)));
#define ROW(r) x86_dot_u8(x86_nibbles32(wr[r] + off + Q4_0_QS), y)
	__m256i h[4];
	UNROLL
	for (int p = 0; p < 4; p++)
		h[p] = _mm256_hadd_epi32(ROW(2 * p), ROW(2 * p + 1));
#undef ROW
	return _mm256_sub_epi32(reduce_pairs8(h), ys8);
}

/* IQ4_NL: the nibbles index the grid (vpshufb) */
A2_INLINE __m256i sums_iq4_nl_avx2(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
	const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q42_iq4nl_values));
#define ROW(r) x86_dot_i8(_mm256_shuffle_epi8(lut, x86_nibbles32(wr[r] + off + IQ4_NL_QS)), y)
	SUMS_PAIRS8(ROW);
#undef ROW
}

/* VNNI wants an unsigned operand: w + 128 (or the 0..15 nibble) times y,
 * exact for any bytes; the accumulators start at -128 (or -8) times the
 * sum of y's four bytes, so the row totals come out right. Two rows per
 * register (r and r + 4), reduced by unpacking. */
A5_INLINE __m256i sums_rows_512(const __m512i wv[4], __m512i y, __m512i bias)
{
	__m512i v[4];
	for (int k = 0; k < 4; k++)
		v[k] = _mm512_dpbusd_epi32(bias, wv[k], y);
	const __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]),
					    _mm512_unpackhi_epi32(v[0], v[1]));
	const __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]),
					    _mm512_unpackhi_epi32(v[2], v[3]));
	/* 128-bit lane L: rows 0..3 (L = 0, 1) or 4..7 (L = 2, 3), half sums */
	const __m512i u = _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1),
					   _mm512_unpackhi_epi64(t0, t1));
	const __m512i p = _mm512_shuffle_i32x4(u, u, _MM_SHUFFLE(3, 1, 2, 0));
	return _mm256_add_epi32(_mm512_castsi512_si256(p), _mm512_extracti64x4_epi64(p, 1));
}

A5_INLINE __m512i neg_bias(__m256i y, char k)
{
	const __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(k), y);
	const __m256i b = _mm256_sub_epi32(_mm256_setzero_si256(), s);
	return _mm512_inserti64x4(_mm512_castsi256_si512(b), b, 1);
}

A5_INLINE __m256i sums_q8_0_avx512(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
	const __m512i flip = _mm512_set1_epi8((char)0x80);
	__m512i wv[4];
	for (int k = 0; k < 4; k++)
		wv[k] = _mm512_xor_si512(flip, _mm512_inserti64x4(
			_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(wr[k] + off + Q8_0_QS))),
			_mm256_loadu_si256((const __m256i *)(wr[k + 4] + off + Q8_0_QS)), 1));
	return sums_rows_512(wv, _mm512_inserti64x4(_mm512_castsi256_si512(y), y, 1),
			     neg_bias(y, (char)0x80));
}

/* nibble quants at qs, minus offset (q4_0: 8, q4_1: 0) */
A5_INLINE __m256i sums_nibbles_avx512(const uint8_t *const wr[GROUP], int64_t off, __m256i y, int qs,
				      char offset)
{
	__m512i wv[4];
	for (int k = 0; k < 4; k++)
		wv[k] = _mm512_inserti64x4(_mm512_castsi256_si512(x86_nibbles32(wr[k] + off + qs)),
					   x86_nibbles32(wr[k + 4] + off + qs), 1);
	return sums_rows_512(wv, _mm512_inserti64x4(_mm512_castsi256_si512(y), y, 1),
			     neg_bias(y, offset));
}

/* IQ4_NL: the grid plus 128 (1..241, unsigned), looked up by nibble */
A5_INLINE __m256i sums_iq4_nl_avx512(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
	const __m512i lut = _mm512_add_epi8(
		_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)q42_iq4nl_values)), _mm512_set1_epi8((char)0x80));
	__m512i wv[4];
	for (int k = 0; k < 4; k++)
		wv[k] = _mm512_shuffle_epi8(lut, _mm512_inserti64x4(_mm512_castsi256_si512(x86_nibbles32(wr[k] + off + IQ4_NL_QS)),
								    x86_nibbles32(wr[k + 4] + off + IQ4_NL_QS), 1));
	return sums_rows_512(wv, _mm512_inserti64x4(_mm512_castsi256_si512(y), y, 1), neg_bias(y, (char)0x80));
}

A5_INLINE __m256i sums_q4_0_avx512(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
	return sums_nibbles_avx512(wr, off, y, Q4_0_QS, 8);
}

A5_INLINE __m256i sums_q4_1_avx512(const uint8_t *const wr[GROUP], int64_t off, __m256i y)
{
	return sums_nibbles_avx512(wr, off, y, Q4_1_QS, 0);
}


/* acc = fma((float)sumi, d_w * d_x, acc) per block, eight rows in the
 * lanes: the scalar kernel's chain, row by row; with Q4_1 (against Q8_1,
 * XBYTES and XQS its layout) then acc = fma(m_w, s_x, acc). The rows'
 * scales are widened once per group for all its tokens (up to
 * Q32_SCALES blocks), and the next group is prefetched during the first
 * token only. */
enum { Q32_SCALES = 128 };
#define ROWS_Q32(NAME, TGT, SUMS, BYTES, XBYTES, XQS, MIN)                                       \
	TGT void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                      \
	{                                                                                        \
		const int64_t nb = n / Q42_QK;                                                   \
		const bool keep = n_tok > 1 && nb <= Q32_SCALES;                                 \
		__m256 dw[Q32_SCALES], mw[(MIN) ? Q32_SCALES : 1];                               \
		for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {                                 \
			const uint8_t *wr[GROUP];                                                \
			group_rows(w, w_stride, r0, n_rows, GROUP, wr);                          \
			const uint8_t *nx[GROUP];                                                \
			const int64_t r1 = r0 + GROUP < n_rows ? r0 + GROUP : r0;                \
			group_rows(w, w_stride, r1, n_rows, GROUP, nx);                          \
			for (int64_t t = 0; t < n_tok; t++) {                                    \
				const uint8_t *xb = (const uint8_t *)x + (uint64_t)t * x_stride; \
				const bool first = t == 0 || !keep;                              \
				__m256 acc = _mm256_setzero_ps();                                \
				float out[GROUP];                                                \
				for (int64_t j = 0; j < nb; j++, xb += (XBYTES)) {               \
					if (t == 0)                                              \
						prefetch_rows(nx, j * (BYTES), 1);               \
					const __m256 dj = first ? halves_rows(wr, j * (BYTES)) : dw[j]; \
					if (keep && t == 0)                                      \
						dw[j] = dj;                                      \
					const __m256i yq = _mm256_loadu_si256(                   \
						(const __m256i *)(xb + (XQS)));                  \
					const __m256i s = SUMS(wr, j * (BYTES), yq);             \
					const __m256 d = _mm256_mul_ps(                          \
						dj, _mm256_set1_ps(_cvtsh_ss(q42_ld16(xb))));    \
					acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc);    \
					if (MIN) {                                               \
						const __m256 mj = first ? halves_rows(wr, j * (BYTES) + Q4_1_M) \
									: mw[j];                 \
						if (keep && t == 0)                              \
							mw[j] = mj;                              \
						acc = _mm256_fmadd_ps(                           \
							mj,                                      \
							_mm256_set1_ps(_cvtsh_ss(                \
								q42_ld16(xb + Q8_1_S))), acc);   \
					}                                                        \
				}                                                                \
				_mm256_storeu_ps(out, acc);                                      \
				store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP); \
			}                                                                        \
		}                                                                                \
	}

ROWS_Q32(rows_q8_0_avx2, A2_INLINE, sums_q8_0_avx2, Q8_0_BYTES, Q8_0_BYTES, Q8_0_QS, 0)

/* Two tokens' exact sums of block j of eight rows (token 0's in *s0):
 * each row's bytes loaded and made absolute once for both, the rows'
 * vectors summed in pairs as they come (reduce_pairs8). */
A2_INLINE void sums2_q8_0_avx2(const uint8_t *const wr[GROUP], int64_t off, __m256i y0, __m256i y1, __m256i *s0,
			       __m256i *s1)
{
	const __m256i ones = _mm256_set1_epi16(1);
	__m256i h0[4], h1[4];
	UNROLL
	for (int p = 0; p < 4; p++) {
		__m256i v0[2], v1[2];
		UNROLL
		for (int i = 0; i < 2; i++) {
			const __m256i wv = _mm256_loadu_si256((const __m256i *)(wr[2 * p + i] + off + Q8_0_QS));
			const __m256i a = _mm256_sign_epi8(wv, wv);
			v0[i] = _mm256_madd_epi16(_mm256_maddubs_epi16(a, _mm256_sign_epi8(y0, wv)), ones);
			v1[i] = _mm256_madd_epi16(_mm256_maddubs_epi16(a, _mm256_sign_epi8(y1, wv)), ones);
		}
		h0[p] = _mm256_hadd_epi32(v0[0], v0[1]);
		h1[p] = _mm256_hadd_epi32(v1[0], v1[1]);
	}
	*s0 = reduce_pairs8(h0);
	*s1 = reduce_pairs8(h1);
}

/* Q8_0 for several tokens: tokens in pairs over each group of eight rows
 * (sums2_q8_0_avx2), the rows' scales widened once per group; each
 * (row, token) keeps the one-token chain acc = fma(sumi, d_w * d_x, acc),
 * so the bits are rows_q8_0_avx2's. A lone last token and rows past
 * Q32_SCALES blocks take rows_q8_0_avx2. */
A2 void q42_llamacpp_rows_q8_0_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t nb = n / Q42_QK, pairs = n_tok / 2 * 2;
	if (pairs == 0 || nb > Q32_SCALES) {
		rows_q8_0_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
		return;
	}
	__m256 dw[Q32_SCALES];
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP], *nx[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		for (int64_t j = 0; j < nb; j++) {
			prefetch_rows(nx, j * Q8_0_BYTES, 1);
			dw[j] = halves_rows(wr, j * Q8_0_BYTES);
		}
		for (int64_t t = 0; t < pairs; t += 2) {
			const uint8_t *x0 = (const uint8_t *)x + (uint64_t)t * x_stride, *x1 = x0 + x_stride;
			__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
			for (int64_t j = 0; j < nb; j++, x0 += Q8_0_BYTES, x1 += Q8_0_BYTES) {
				__m256i s0, s1;
				sums2_q8_0_avx2(wr, j * Q8_0_BYTES, _mm256_loadu_si256((const __m256i *)(x0 + Q8_0_QS)),
						_mm256_loadu_si256((const __m256i *)(x1 + Q8_0_QS)), &s0, &s1);
				acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0),
						       _mm256_mul_ps(dw[j], _mm256_set1_ps(_cvtsh_ss(q42_ld16(x0)))), acc0);
				acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s1),
						       _mm256_mul_ps(dw[j], _mm256_set1_ps(_cvtsh_ss(q42_ld16(x1)))), acc1);
			}
			float out[GROUP];
			_mm256_storeu_ps(out, acc0);
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP);
			_mm256_storeu_ps(out, acc1);
			store_group(y + (uint64_t)(t + 1) * y_stride, r0, n_rows, out, GROUP);
		}
	}
	if (pairs < n_tok)
		rows_q8_0_avx2(n, n_rows, w, w_stride, 1, (const uint8_t *)x + (uint64_t)pairs * x_stride, x_stride,
			       y + (uint64_t)pairs * y_stride, y_stride);
}

ROWS_Q32(q42_llamacpp_rows_q4_0_avx2, A2, sums_q4_0_avx2, Q4_0_BYTES, Q8_0_BYTES, Q8_0_QS, 0)
ROWS_Q32(q42_llamacpp_rows_q4_1_avx2, A2, sums_q4_1_avx2, Q4_1_BYTES, Q8_1_BYTES, Q8_1_QS, 1)
ROWS_Q32(q42_llamacpp_rows_iq4_nl_avx2, A2, sums_iq4_nl_avx2, IQ4_NL_BYTES, Q8_0_BYTES, Q8_0_QS, 0)

/* ---- generic ggml arithmetic: Q8_0 / Q5_0 against Q8_0 ----------------- */

/* q5_0 / q5_1 quants (nibble | fifth bit, 0..31; qh and qs at those
 * offsets of the block) of rows k and k + 4, the unsigned VNNI operand
 * (q5_0's -16 offset goes into the bias, q5_1 has none): the two rows'
 * 32-bit qh words are one byte mask, bit e for byte e. */
A5_INLINE __m256i sums_q5_avx512(const uint8_t *const wr[GROUP], int64_t off, __m256i y, int qh,
				 int qs, char offset)
{
	const __m512i bit4 = _mm512_set1_epi8(0x10);
	__m512i wv[4];
	for (int k = 0; k < 4; k++) {
		const __mmask64 hb = (__mmask64)((uint64_t)q42_ld32(wr[k] + off + qh) |
						 (uint64_t)q42_ld32(wr[k + 4] + off + qh) << 32);
		wv[k] = _mm512_or_si512(
			_mm512_inserti64x4(_mm512_castsi256_si512(x86_nibbles32(wr[k] + off + qs)),
					   x86_nibbles32(wr[k + 4] + off + qs), 1),
			_mm512_maskz_mov_epi8(hb, bit4));
	}
	return sums_rows_512(wv, _mm512_inserti64x4(_mm512_castsi256_si512(y), y, 1),
			     neg_bias(y, offset));
}

/* The generic kernels (q42_dot_q8_0 / q42_dot_q5_0) add one term per
 * block to a serial float sum, (float)sumi * (d_w * d_x) -- the product is
 * commutative, so q5_0's (d_w * d_x) * sumi rounds the same -- eight rows
 * in the lanes. */

/* Q5_0 / Q5_1, two blocks per row and step: one masked load of the pair
 * (2 * bytes, never past it) holds both blocks; a byte permute puts each
 * block's 16 quant bytes in two 16-byte lanes, a per-lane shift picks the
 * nibble, and the two qh words (at qh in each block) are one 64-bit byte
 * mask. The eight rows' products are reduced to [block j, rows 0..7 |
 * block j+1, rows 0..7]. */
A5_INLINE __m512i q5_pair(const uint8_t *p, __m512i perm, __m512i cnt, int bytes, int qh)
{
	const __m512i m15 = _mm512_set1_epi8(0x0F), bit4 = _mm512_set1_epi8(0x10);
	const __m512i l = _mm512_maskz_loadu_epi8((__mmask64)((1ull << (2 * bytes)) - 1), p);
	const __m512i q = _mm512_and_si512(_mm512_srlv_epi16(_mm512_permutexvar_epi8(perm, l), cnt), m15);
	if (qh < 0) /* q4_1: the nibbles alone */
		return q;
	const __mmask64 hb = (__mmask64)((uint64_t)q42_ld32(p + qh) |
					 (uint64_t)q42_ld32(p + bytes + qh) << 32);
	return _mm512_mask_add_epi8(q, hb, q, bit4);
}

/* q5_pair's byte permute (each block's quant bytes at qs, twice) and
 * per-lane shift counts (low nibbles, then high). */
A5_INLINE __m512i q5_pair_perm(int bytes, int qs)
{
	uint8_t pi[64];
	for (int i = 0; i < 64; i++)
		pi[i] = (uint8_t)((i < 32 ? qs : bytes + qs) + i % 16);
	return _mm512_loadu_si512(pi);
}

A5_INLINE void q5_pair_tables(int bytes, int qs, __m512i *perm, __m512i *cnt)
{
	int16_t ci[32];
	for (int i = 0; i < 32; i++)
		ci[i] = (int16_t)(i % 16 < 8 ? 0 : 4);
	*perm = q5_pair_perm(bytes, qs);
	*cnt = _mm512_loadu_si512(ci);
}

A5_INLINE __m512i reduce_pairs16(const __m512i v[GROUP])
{
	__m512i t[4], u[2];
	UNROLL
	for (int k = 0; k < 4; k++)
		t[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * k], v[2 * k + 1]),
					_mm512_unpackhi_epi32(v[2 * k], v[2 * k + 1]));
	/* 128-bit lane L of u[i]: lane L's totals of rows 4i..4i+3 */
	UNROLL
	for (int i = 0; i < 2; i++)
		u[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2 * i], t[2 * i + 1]),
					_mm512_unpackhi_epi64(t[2 * i], t[2 * i + 1]));
	/* [j rows 0..3, j+1 rows 0..3, j rows 4..7, j+1 rows 4..7] */
	const __m512i s = _mm512_add_epi32(_mm512_shuffle_i32x4(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0)),
					   _mm512_shuffle_i32x4(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1)));
	return _mm512_shuffle_i32x4(s, s, _MM_SHUFFLE(3, 1, 2, 0));
}

/* The f16 scales of blocks j and j+1 of eight rows, [j rows 0..7 | j+1
 * rows 0..7]: masked loads (masked-out words are never read) place row
 * r's two scales, gap words apart (the block size in words), at words r
 * and r + gap; one word permute closes the gap (dperm_gap's table). */
A5_INLINE __m512 pair_halves(const uint8_t *const wr[GROUP], int64_t off, int gap, __m512i dperm)
{
	__m512i d = _mm512_setzero_si512();
	UNROLL
	for (int r = 0; r < GROUP; r++)
		d = _mm512_mask_loadu_epi16(d, (__mmask32)(1u << r | 1u << (r + gap)),
					    (const void *)((uintptr_t)(wr[r] + off) - 2 * (uintptr_t)r));
	return _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(dperm, d)));
}

A5_INLINE __m512i dperm_gap(int gap)
{
	int16_t di[32];
	for (int i = 0; i < 32; i++)
		di[i] = (int16_t)(i < 8 ? i : i - 8 + gap);
	return _mm512_loadu_si512(di);
}

/* What a step of two blocks needs from the activation, the same for every
 * row: both blocks' quants, -k times each dword's byte sum (k: the offset
 * that made the weight operand unsigned), and the two scales as
 * [d_j x 8 | d_j+1 x 8]. A one-token call computes them once per pair
 * for all its rows (up to PAIR_PRE pairs, else per step; same values). */
struct pair_act {
	__m512i yq, bias;
	__m512 dx;
};

enum { PAIR_PRE = 128 };

/* The f16 field at off of blocks j and j + 1 (bytes apart) as [j x 8 |
 * j+1 x 8]. */
A5_INLINE __m512 pair_scales(const uint8_t *xb, int off, int bytes)
{
	return _mm512_mask_blend_ps((__mmask16)0xFF00, _mm512_set1_ps(_cvtsh_ss(q42_ld16(xb + off))),
				    _mm512_set1_ps(_cvtsh_ss(q42_ld16(xb + bytes + off))));
}

/* Activation blocks of xbytes bytes, quants at qs: Q8_0 (34, 2) or Q8_1
 * (36, 4); the scale d is the first field of both. */
A5_INLINE struct pair_act pair_act_at(const uint8_t *xb, char k, int xbytes, int qs)
{
	struct pair_act a;
	a.yq = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(xb + qs))),
		_mm256_loadu_si256((const __m256i *)(xb + xbytes + qs)), 1);
	a.bias = _mm512_sub_epi32(_mm512_setzero_si512(),
				  _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(k), a.yq));
	a.dx = pair_scales(xb, 0, xbytes);
	return a;
}

/* pre[i] for the pairs of a one-token call; false when the call is not one
 * (the steps then compute their own) */
A5_INLINE bool pair_act_pre(struct pair_act *pre, const void *x, int64_t nb, int64_t n_tok, char k,
			    int xbytes, int qs)
{
	if (n_tok != 1 || nb / 2 > PAIR_PRE)
		return false;
	for (int64_t i = 0; i < nb / 2; i++)
		pre[i] = pair_act_at((const uint8_t *)x + (uint64_t)(2 * i) * (uint64_t)xbytes, k, xbytes, qs);
	return true;
}

/* pair_act_pre for Q8_1 activations, with each pair's s values as
 * [s_j x 8 | s_j+1 x 8] in pre_s */
A5_INLINE bool pair_act_pre_q8_1(struct pair_act *pre, __m512 *pre_s, const void *x, int64_t nb,
				 int64_t n_tok)
{
	const bool have = pair_act_pre(pre, x, nb, n_tok, 0, Q8_1_BYTES, Q8_1_QS);
	for (int64_t i = 0; have && i < nb / 2; i++)
		pre_s[i] = pair_scales((const uint8_t *)x + (uint64_t)(2 * i) * Q8_1_BYTES, Q8_1_S,
				       Q8_1_BYTES);
	return have;
}

A5_INLINE __m256 hi256(__m512 v)
{
	return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

/* The generic Q5_0 (q42_dot_q5_0: sum += (d_w * d_x) * sumi) and Q5_1
 * (q42_dot_q5_1: sum += (d_w * d_x) * sumi + m_w * s_x, against Q8_1,
 * whose s is d times its quants' sum) row products. */
A5_INLINE void q5_rows(Q42_LLAMACPP_ROWS_ARGS, bool q51)
{
	const int bytes = q51 ? Q5_1_BYTES : Q5_0_BYTES, qh = q51 ? Q5_1_QH : Q5_0_QH;
	const int qs = q51 ? Q5_1_QS : Q5_0_QS, xbytes = q51 ? Q8_1_BYTES : Q8_0_BYTES;
	const int xqs = q51 ? Q8_1_QS : Q8_0_QS;
	const char offset = q51 ? 0 : 16;
	const int64_t nb = n / Q42_QK;
	__m512i perm, cnt;
	q5_pair_tables(bytes, qs, &perm, &cnt);
	const __m512i dperm = dperm_gap(bytes / 2);
	struct pair_act pre[PAIR_PRE];
	__m512 pre_s[PAIR_PRE];
	const bool have_pre = pair_act_pre(pre, x, nb, n_tok, offset, xbytes, xqs);
	for (int64_t i = 0; q51 && have_pre && i < nb / 2; i++)
		pre_s[i] = pair_scales((const uint8_t *)x + (uint64_t)(2 * i) * (uint64_t)xbytes, Q8_1_S,
				       xbytes);
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		const uint8_t *nx[GROUP];
		const int64_t r1 = r0 + GROUP < n_rows ? r0 + GROUP : r0;
		group_rows(w, w_stride, r1, n_rows, GROUP, nx);
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *xb = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m256 acc = _mm256_setzero_ps();
			float out[GROUP];
			int64_t j = 0;
			for (; j + 2 <= nb; j += 2, xb += 2 * xbytes) {
				const int64_t o = j * bytes;
				prefetch_rows(nx, o, 2 * bytes);
				const struct pair_act a =
					have_pre ? pre[j / 2] : pair_act_at(xb, offset, xbytes, xqs);
				__m512i v[GROUP];
				UNROLL
				for (int r = 0; r < GROUP; r++)
					v[r] = _mm512_dpbusd_epi32(a.bias, q5_pair(wr[r] + o, perm, cnt, bytes, qh),
								   a.yq);
				const __m512 s = _mm512_cvtepi32_ps(reduce_pairs16(v));
				const __m512 d = _mm512_mul_ps(pair_halves(wr, o, bytes / 2, dperm), a.dx);
				__m512 term = _mm512_mul_ps(d, s);
				if (q51) {
					const __m512 sx = have_pre ? pre_s[j / 2] : pair_scales(xb, Q8_1_S, xbytes);
					term = _mm512_add_ps(
						term, _mm512_mul_ps(pair_halves(wr, o + Q5_1_M, bytes / 2, dperm), sx));
				}
				acc = _mm256_add_ps(acc, _mm512_castps512_ps256(term));
				acc = _mm256_add_ps(acc, hi256(term));
			}
			for (; j < nb; j++, xb += xbytes) {
				const int64_t o = j * bytes;
				const __m256i s = sums_q5_avx512(
					wr, o, _mm256_loadu_si256((const __m256i *)(xb + xqs)), qh, qs, offset);
				const __m256 d = _mm256_mul_ps(halves_rows(wr, o),
							       _mm256_set1_ps(_cvtsh_ss(q42_ld16(xb))));
				__m256 term = _mm256_mul_ps(d, _mm256_cvtepi32_ps(s));
				if (q51)
					term = _mm256_add_ps(
						term, _mm256_mul_ps(halves_rows(wr, o + Q5_1_M),
								    _mm256_set1_ps(_cvtsh_ss(q42_ld16(xb + Q8_1_S)))));
				acc = _mm256_add_ps(acc, term);
			}
			_mm256_storeu_ps(out, acc);
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP);
		}
	}
}

A5 void q42_generic_rows_q5_0_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	q5_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

A5 void q42_generic_rows_q5_1_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	q5_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
}

/* llama.cpp's Q5_1 (q42_llamacpp_dot_q5_1): each row keeps its eight float
 * lanes (dword l of a block's VNNI sum is lane l: elements 4l..4l+3 in
 * the nibble order the pair unpack gives), one fma per block and lane, no
 * reduction per block; the eight rows' min sums ride in one vector; at
 * the end each row's lanes reduce as hsum_float_8 and its min sum is
 * added. Blocks of a pair are applied in order. */
/* A lanes8 kind's block layouts: weight block bytes, qh (-1: none), qs;
 * activation block bytes and quants; the offset that made the quants
 * unsigned (Q5_0's 16); whether there is a min term. */
struct l8 {
	int bytes, qh, qs, xbytes, xqs;
	char offset;
	bool min;
};

static inline struct l8 l8_layout(enum lanes8_kind kind)
{
	switch (kind) {
	case L8_Q4_1: return (struct l8){Q4_1_BYTES, -1, Q4_1_QS, Q8_1_BYTES, Q8_1_QS, 0, true};
	case L8_Q5_1: return (struct l8){Q5_1_BYTES, Q5_1_QH, Q5_1_QS, Q8_1_BYTES, Q8_1_QS, 0, true};
	case L8_Q4_0: return (struct l8){Q4_0_BYTES, -1, Q4_0_QS, Q8_0_BYTES, Q8_0_QS, 8, false};
	default: return (struct l8){Q5_0_BYTES, Q5_0_QH, Q5_0_QS, Q8_0_BYTES, Q8_0_QS, 16, false};
	}
}

/* Rows longer than the SIMD kernels' token tables: the scalar definition
 * per element (k > 65536; no model has such rows). */
static void lanes8_rows_scalar(Q42_LLAMACPP_ROWS_ARGS, enum lanes8_kind kind)
{
	void (*dot)(int64_t, float *, const void *, const void *) =
		kind == L8_Q5_0	  ? q42_llamacpp_dot_q5_0
		: kind == L8_Q5_1 ? q42_llamacpp_dot_q5_1
		: kind == L8_Q4_0 ? q42_llamacpp_dot_q4_0_cpu
				  : q42_llamacpp_dot_q4_1_cpu;
	for (int64_t r = 0; r < n_rows; r++)
		for (int64_t t = 0; t < n_tok; t++)
			dot(n, &y[(uint64_t)t * y_stride + (uint64_t)r], (const uint8_t *)w + (uint64_t)r * w_stride,
			    (const uint8_t *)x + (uint64_t)t * x_stride);
}

/* AVX2 (no VNNI: maddubs then madd by ones give the same exact dword sums
 * of four products; no int16 pair overflows, 31 * 128 * 2 < 32767): one
 * row at a time against a tile of up to L8_T tokens, each row's block
 * unpacked once for all of them, the tokens' eight lanes in registers.
 * Q5_0's offset comes off each dword as 16 times its four y, from a table
 * made once per tile (with d_x and s_x); min sums in float, per token. */
enum { L8_T = 8, L8_TAB = 2048 };

struct l8_tok {
	__m256i bias;
	float dx, sx;
};

A2_INLINE void l8_tile_avx2(int T, struct l8 L, int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,
			    const uint8_t *x, uint64_t x_stride, float *y, uint64_t y_stride, const struct l8_tok *tab)
{
	const int64_t nb = n / Q42_QK;
	const __m256i bit4 = _mm256_set1_epi8(0x10), ones = _mm256_set1_epi16(1);
	for (int64_t r = 0; r < n_rows; r++) {
		const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
		__m256 acc[L8_T];
		float summs[L8_T];
		UNROLL
		for (int t = 0; t < T; t++) {
			acc[t] = _mm256_setzero_ps();
			summs[t] = 0.0f;
		}
		for (int64_t j = 0; j < nb; j++, a += L.bytes) {
			__m256i q = x86_nibbles32(a + L.qs);
			if (L.qh >= 0)
				q = _mm256_or_si256(q, _mm256_and_si256(x86_bits_to_bytes(q42_ld32(a + L.qh)), bit4));
			const float dw = _cvtsh_ss(q42_ld16(a));
			const float mw = L.min ? _cvtsh_ss(q42_ld16(a + Q5_1_M)) : 0.0f;
			const struct l8_tok *e = tab + j * T;
			const uint8_t *xj = x + (uint64_t)j * (uint64_t)L.xbytes + L.xqs;
			UNROLL
			for (int t = 0; t < T; t++) {
				__m256i p = _mm256_madd_epi16(
					_mm256_maddubs_epi16(q, _mm256_loadu_si256((const __m256i *)(xj + (uint64_t)t * x_stride))),
					ones);
				if (L.offset)
					p = _mm256_add_epi32(p, e[t].bias);
				acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw * e[t].dx), acc[t]);
				if (L.min)
					summs[t] = summs[t] + mw * e[t].sx;
			}
		}
		UNROLL
		for (int t = 0; t < T; t++) {
			const float sum = hsum_float8(acc[t]);
			y[(uint64_t)t * y_stride + (uint64_t)r] = L.min ? sum + summs[t] : sum;
		}
	}
}

A2_INLINE void lanes8_rows_avx2(Q42_LLAMACPP_ROWS_ARGS, enum lanes8_kind kind)
{
	const struct l8 L = l8_layout(kind);
	const int64_t nb = n / Q42_QK;
	if (nb > L8_TAB) {
		lanes8_rows_scalar(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, kind);
		return;
	}
	const __m256i off = _mm256_set1_epi8(L.offset), ones = _mm256_set1_epi16(1);
	struct l8_tok tab[L8_TAB];
	const int64_t width = L8_TAB / nb < L8_T ? L8_TAB / nb : L8_T;
	for (int64_t t0 = 0; t0 < n_tok; t0 += width) {
		const int64_t nt = n_tok - t0 < width ? n_tok - t0 : width;
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t0 * x_stride;
		for (int64_t t = 0; t < nt; t++)
			for (int64_t j = 0; j < nb; j++) {
				const uint8_t *xb = xt + (uint64_t)t * x_stride + (uint64_t)j * (uint64_t)L.xbytes;
				struct l8_tok *e = &tab[j * nt + t];
				e->bias = _mm256_sub_epi32(
					_mm256_setzero_si256(),
					_mm256_madd_epi16(_mm256_maddubs_epi16(off, _mm256_loadu_si256((const __m256i *)(xb + L.xqs))),
							  ones));
				e->dx = _cvtsh_ss(q42_ld16(xb));
				e->sx = L.min ? _cvtsh_ss(q42_ld16(xb + Q8_1_S)) : 0.0f;
			}
		float *yt = y + (uint64_t)t0 * y_stride;
		/* the tile's width as a constant, so its accumulators stay in
		 * registers */
		switch (nt) {
#define L8_TILE(T)                                                                                    \
	case T: l8_tile_avx2(T, L, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride, tab); break;
		L8_TILE(1) L8_TILE(2) L8_TILE(3) L8_TILE(4) L8_TILE(5) L8_TILE(6) L8_TILE(7)
		default: l8_tile_avx2(L8_T, L, n, n_rows, w, w_stride, xt, x_stride, yt, y_stride, tab); break;
#undef L8_TILE
		}
	}
}

A2 void q42_llamacpp_rows_q5_1_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	lanes8_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_1);
}

A2 void q42_llamacpp_rows_q4_1_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	lanes8_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q4_1);
}

A2 void q42_llamacpp_rows_q5_0_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	lanes8_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_0);
}

A2 void q42_llamacpp_rows_q4_0_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	lanes8_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q4_0);
}

/* -offset times each dword's byte sum of one activation block */
A5_INLINE __m256i lanes8_bias(__m256i y8, struct l8 L)
{
	return _mm256_sub_epi32(_mm256_setzero_si256(),
				_mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(L.offset), y8));
}

/* The eight-lane kinds (Q5_0, Q5_1, Q4_1 in the plain CPU buffer) with two
 * rows per register: a block of rows a and b unpacks to [a's 32 quants |
 * b's 32 quants] in element order, so one VNNI step against [y_j | y_j]
 * gives both rows' eight lanes and one fma applies [d_a * d_x x 8 | d_b *
 * d_x x 8] to all sixteen -- no lane shuffles, no per-block reduction.
 * The min terms (Q5_1, Q4_1) are summed beside, eight or sixteen (row,
 * token) sums per vector. Blocks go in order, so every (row, token) sees
 * the scalar kernel's operations one by one. One token: a group of eight
 * rows is four such pairs in flight. Several: one pair at a time against
 * a tile of up to TWO_T tokens, their accumulators in registers, each
 * unpacked block used for all of them. The token table holds TWO_TAB
 * (token, block) entries (144 KiB of stack with d_x and s_x): full tiles
 * up to 256 blocks per row, narrower ones up to 2048, one token up to
 * 2048; rows longer than that (k > 65536) take the scalar definition. */
enum { TWO_T = 8, TWO_TAB = 2048 };

/* Block j of rows a and b, quants 0..31 (nibble | fifth bit), unsigned:
 * each row's 16 quant bytes twice, per-lane shifts 0 / 4 pick the
 * nibbles; the qh words joined in a general register (ports 0 and 5 are
 * the busy ones), then one kmovq; nibble and fifth bit merged by one
 * ternary-logic step (0xEA: A & B | C). (A GF(2) affine nibble split with
 * a masked add measured no faster here.) */
A5_INLINE __m512i two_unpack(const uint8_t *a, const uint8_t *b, __m512i cnt, struct l8 L)
{
	const __m512i r = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + L.qs)))),
		_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b + L.qs))), 1);
	if (L.qh < 0)
		return _mm512_and_si512(_mm512_srlv_epi16(r, cnt), _mm512_set1_epi8(0x0F));
	const __mmask64 hb = (__mmask64)((uint64_t)q42_ld32(a + L.qh) | (uint64_t)q42_ld32(b + L.qh) << 32);
	return _mm512_ternarylogic_epi32(_mm512_srlv_epi16(r, cnt), _mm512_set1_epi8(0x0F),
					 _mm512_maskz_mov_epi8(hb, _mm512_set1_epi8(0x10)), 0xEA);
}

A5_INLINE __m512i two_cnt(void)
{
	int16_t ci[32];
	for (int i = 0; i < 32; i++)
		ci[i] = (int16_t)(i % 16 < 8 ? 0 : 4);
	return _mm512_loadu_si512(ci);
}

/* What token t's block j gives every row pair: its quants and the bias
 * (-offset times each dword's byte sum; zero without an offset), d_x and,
 * with a min, s_x; a tile's entries lie block-major, so one pointer and
 * constant offsets reach a block's tokens. */
struct two_tok {
	__m256i bias, y;
};

A5_INLINE void two_table(struct l8 L, const uint8_t *x, uint64_t x_stride, int64_t nt, int64_t nb, int tstride,
			 struct two_tok *tab, float *dx, float *sx)
{
	for (int64_t t = 0; t < nt; t++)
		for (int64_t j = 0; j < nb; j++) {
			const uint8_t *xb = x + (uint64_t)t * x_stride + (uint64_t)j * (uint64_t)L.xbytes;
			struct two_tok *e = &tab[j * tstride + t];
			e->y = _mm256_loadu_si256((const __m256i *)(xb + L.xqs));
			e->bias = lanes8_bias(e->y, L);
			dx[j * tstride + t] = _cvtsh_ss(q42_ld16(xb));
			if (L.min)
				sx[j * tstride + t] = _cvtsh_ss(q42_ld16(xb + Q8_1_S));
		}
}

/* dpbusd(bias, q, [y | y]) of one table entry (no bias: from zero, which
 * costs no port) */
A5_INLINE __m512 two_sum(struct l8 L, const struct two_tok *e, __m512i q)
{
	const __m512i acc = L.offset ? _mm512_broadcast_i64x4(e->bias) : _mm512_setzero_si512();
	return _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(acc, q, _mm512_broadcast_i64x4(e->y)));
}

/* Several tokens: rows two at a time (an odd last row paired with
 * itself) against the T tokens of a tile (tstride entries per block). */
A5_INLINE void two_rows_tile(int T, struct l8 L, int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,
			     float *y, uint64_t y_stride, const struct two_tok *tab, const float *dx, const float *sx,
			     int tstride)
{
	const int64_t nb = n / Q42_QK;
	const __m512i cnt = two_cnt();
	for (int64_t r = 0; r < n_rows; r += 2) {
		const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
		const uint8_t *b = r + 1 < n_rows ? a + w_stride : a;
		__m512 acc[TWO_T];
		/* min sums: lane t row a, lane 8 + t row b */
		__m512 summs = _mm512_setzero_ps();
		UNROLL
		for (int t = 0; t < T; t++)
			acc[t] = _mm512_setzero_ps();
		for (int64_t j = 0; j < nb; j++) {
			const int64_t o = j * L.bytes;
			const __m512i q = two_unpack(a + o, b + o, cnt, L);
			const __m512 dw = _mm512_mask_blend_ps((__mmask16)0xFF00, _mm512_set1_ps(_cvtsh_ss(q42_ld16(a + o))),
							       _mm512_set1_ps(_cvtsh_ss(q42_ld16(b + o))));
			const struct two_tok *e = tab + j * tstride;
			const float *d = dx + j * tstride;
			if (L.min) {
				const __m256 s8 = _mm256_maskz_loadu_ps((__mmask8)((1u << T) - 1), sx + j * tstride);
				const __m512 mw = _mm512_mask_blend_ps(
					(__mmask16)0xFF00, _mm512_set1_ps(_cvtsh_ss(q42_ld16(a + o + Q5_1_M))),
					_mm512_set1_ps(_cvtsh_ss(q42_ld16(b + o + Q5_1_M))));
				const __m512 s16 = _mm512_castpd_ps(_mm512_insertf64x4(
					_mm512_castps_pd(_mm512_castps256_ps512(s8)), _mm256_castps_pd(s8), 1));
				summs = _mm512_add_ps(summs, _mm512_mul_ps(mw, s16));
			}
			UNROLL
			for (int t = 0; t < T; t++)
				acc[t] = _mm512_fmadd_ps(two_sum(L, &e[t], q), _mm512_mul_ps(dw, _mm512_set1_ps(d[t])), acc[t]);
		}
		float ms[16];
		_mm512_storeu_ps(ms, summs);
		UNROLL
		for (int t = 0; t < T; t++) {
			const float sa = hsum_float8(_mm512_castps512_ps256(acc[t]));
			y[(uint64_t)t * y_stride + (uint64_t)r] = L.min ? sa + ms[t] : sa;
			if (r + 1 < n_rows) {
				const float sb = hsum_float8(hi256(acc[t]));
				y[(uint64_t)t * y_stride + (uint64_t)r + 1] = L.min ? sb + ms[8 + t] : sb;
			}
		}
	}
}

/* One token, eight rows from g0 (rows 0..3 at g0 + k * s, rows 4..7 at
 * g4 + k * s, s3 = 3 * s: few registers, so the row addresses fold into
 * the loads), the pointers at block j: each pair p, with dd the group's
 * d_w * d_x at lanes base + r. */
struct two_g {
	const uint8_t *g0, *g4;
	uint64_t s, s3;
};

A5_INLINE const uint8_t *two_row(struct two_g g, int r)
{
	const uint8_t *b = r < 4 ? g.g0 : g.g4;
	switch (r % 4) {
	case 0: return b;
	case 1: return b + g.s;
	case 2: return b + 2 * g.s;
	default: return b + g.s3;
	}
}

A5_INLINE void two_block1(struct l8 L, struct two_g g, __m512 dd, int base, const struct two_tok *e, __m512i cnt,
			  __m512 acc[GROUP / 2])
{
	UNROLL
	for (int p = 0; p < GROUP / 2; p++) {
		const __m512 s = _mm512_permutexvar_ps(
			_mm512_mask_blend_epi32((__mmask16)0xFF00, _mm512_set1_epi32(base + 2 * p),
						_mm512_set1_epi32(base + 2 * p + 1)),
			dd);
		acc[p] = _mm512_fmadd_ps(two_sum(L, e, two_unpack(two_row(g, 2 * p), two_row(g, 2 * p + 1), cnt, L)), s,
					 acc[p]);
	}
}

A5_INLINE void two_rows1(struct l8 L, int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const uint8_t *x,
			 float *y)
{
	const int64_t nb = n / Q42_QK;
	const __m512i cnt = two_cnt(), dperm = dperm_gap(L.bytes / 2);
	struct two_tok tab[TWO_TAB];
	float dx[TWO_TAB], sx[TWO_TAB];
	two_table(L, x, 0, 1, nb, 1, tab, dx, sx);
	/* the next group lies GROUP rows on (prefetches past the matrix are
	 * harmless: they never fault) */
	const uint64_t ahead = GROUP * w_stride;
	const int64_t full = n_rows - n_rows % GROUP;
	for (int64_t r0 = 0; r0 < full; r0 += GROUP) {
		struct two_g g = {(const uint8_t *)w + (uint64_t)r0 * w_stride, NULL, w_stride, 3 * w_stride};
		g.g4 = g.g0 + 4 * w_stride;
		__m512 acc[GROUP / 2];
		__m256 summs = _mm256_setzero_ps();
		UNROLL
		for (int p = 0; p < GROUP / 2; p++)
			acc[p] = _mm512_setzero_ps();
		int64_t j = 0;
		for (; j + 2 <= nb; j += 2, g.g0 += 2 * L.bytes, g.g4 += 2 * L.bytes) {
			const uint8_t *wr[GROUP];
			UNROLL
			for (int r = 0; r < GROUP; r++) {
				wr[r] = two_row(g, r);
				_mm_prefetch((const char *)(wr[r] + ahead), _MM_HINT_T1);
				/* and this group's bytes four steps on into L1 (a
				 * few percent in alternated q42run --bench runs) */
				_mm_prefetch((const char *)(wr[r] + 4 * 2 * L.bytes), _MM_HINT_T0);
			}
			const __m512 dd = _mm512_mul_ps(pair_halves(wr, 0, L.bytes / 2, dperm),
							_mm512_mask_blend_ps((__mmask16)0xFF00, _mm512_set1_ps(dx[j]),
									     _mm512_set1_ps(dx[j + 1])));
			if (L.min) {
				const __m512 mm = _mm512_mul_ps(pair_halves(wr, Q5_1_M, L.bytes / 2, dperm),
								_mm512_mask_blend_ps((__mmask16)0xFF00, _mm512_set1_ps(sx[j]),
										     _mm512_set1_ps(sx[j + 1])));
				summs = _mm256_add_ps(summs, _mm512_castps512_ps256(mm));
				summs = _mm256_add_ps(summs, hi256(mm));
			}
			two_block1(L, g, dd, 0, &tab[j], cnt, acc);
			const struct two_g h = {g.g0 + L.bytes, g.g4 + L.bytes, g.s, g.s3};
			two_block1(L, h, dd, GROUP, &tab[j + 1], cnt, acc);
		}
		if (j < nb) {
			const uint8_t *wr[GROUP];
			UNROLL
			for (int r = 0; r < GROUP; r++)
				wr[r] = two_row(g, r);
			const __m512 dd = _mm512_castps256_ps512(_mm256_mul_ps(halves_rows(wr, 0), _mm256_set1_ps(dx[j])));
			if (L.min)
				summs = _mm256_add_ps(summs, _mm256_mul_ps(halves_rows(wr, Q5_1_M), _mm256_set1_ps(sx[j])));
			two_block1(L, g, dd, 0, &tab[j], cnt, acc);
		}
		float ms[GROUP];
		_mm256_storeu_ps(ms, summs);
		UNROLL
		for (int p = 0; p < GROUP / 2; p++) {
			const float sa = hsum_float8(_mm512_castps512_ps256(acc[p])), sb = hsum_float8(hi256(acc[p]));
			y[r0 + 2 * p] = L.min ? sa + ms[2 * p] : sa;
			y[r0 + 2 * p + 1] = L.min ? sb + ms[2 * p + 1] : sb;
		}
	}
	if (full < n_rows)
		two_rows_tile(1, L, n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride, y + full,
			      0, tab, dx, sx, 1);
}

A5_INLINE void two_rows(Q42_LLAMACPP_ROWS_ARGS, enum lanes8_kind kind)
{
	const struct l8 L = l8_layout(kind);
	const int64_t nb = n / Q42_QK;
	if (nb > TWO_TAB) {
		lanes8_rows_scalar(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, kind);
		return;
	}
	if (n_tok == 1) {
		two_rows1(L, n, n_rows, w, w_stride, x, y);
		return;
	}
	struct two_tok tab[TWO_TAB];
	float dx[TWO_TAB], sx[TWO_TAB];
	const int64_t width = TWO_TAB / nb < TWO_T ? TWO_TAB / nb : TWO_T;
	for (int64_t t0 = 0; t0 < n_tok; t0 += width) {
		const int64_t nt = n_tok - t0 < width ? n_tok - t0 : width;
		two_table(L, (const uint8_t *)x + (uint64_t)t0 * x_stride, x_stride, nt, nb, (int)nt, tab, dx, sx);
		float *yt = y + (uint64_t)t0 * y_stride;
		/* the tile's width as a constant, so its accumulators stay in
		 * registers */
		switch (nt) {
#define TWO_TILE(T)                                                                                   \
	case T: two_rows_tile(T, L, n, n_rows, w, w_stride, yt, y_stride, tab, dx, sx, T); break;
		TWO_TILE(1) TWO_TILE(2) TWO_TILE(3) TWO_TILE(4) TWO_TILE(5) TWO_TILE(6) TWO_TILE(7)
		default: two_rows_tile(TWO_T, L, n, n_rows, w, w_stride, yt, y_stride, tab, dx, sx, TWO_T); break;
#undef TWO_TILE
		}
	}
}

A5 void q42_llamacpp_rows_q5_0_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	two_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_0);
}

A5 void q42_llamacpp_rows_q5_1_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	two_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_1);
}

A5 void q42_llamacpp_rows_q4_1_cpu_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	two_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q4_1);
}

A5 void q42_llamacpp_rows_q4_0_cpu_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	two_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q4_0);
}

/* llama.cpp's Q4_1 (AMX buffer), two blocks per step as the Q5_0 kernel
 * (q5_pair without fifth bits, the activation table of a one-token
 * call), then per row and block in order fma(sumi, d_w * d_x, acc) and
 * fma(m_w, s_x, acc); a lone last block takes ROWS_Q32's step. */
/* The d and m fields of blocks j and j + 1 of eight rows, from the rows'
 * loaded pairs of Q4_1 blocks (d at word 0, m at 1, the next block's at 10
 * and 11): as words [d_j rows 0..7 | d_j+1 | m_j | m_j+1]. Each pair of
 * rows is one word gather that puts the rows' words at their final
 * positions; three blends join the pairs. Cheaper than loading the fields
 * again (pair_halves: a masked load per row and field). */
struct q41_dm_tabs {
	__m512i idx[GROUP / 2];
};

A5_INLINE struct q41_dm_tabs q41_dm_tables(void)
{
	static const int src[4] = {0, 10, 1, 11}; /* d_j, d_j+1, m_j, m_j+1 */
	struct q41_dm_tabs t;
	for (int i = 0; i < GROUP / 2; i++) {
		int16_t ix[32];
		for (int pos = 0; pos < 32; pos++) {
			const int f = pos / 8, r = pos % 8;
			ix[pos] = (int16_t)(r == 2 * i ? src[f] : r == 2 * i + 1 ? 32 + src[f] : 0);
		}
		t.idx[i] = _mm512_loadu_si512(ix);
	}
	return t;
}

A5_INLINE __m512i q41_dm(const __m512i l[GROUP], const struct q41_dm_tabs *t)
{
	__m512i u[GROUP / 2];
	UNROLL
	for (int i = 0; i < GROUP / 2; i++)
		u[i] = _mm512_permutex2var_epi16(l[2 * i], t->idx[i], l[2 * i + 1]);
	const __m512i v0 = _mm512_mask_blend_epi16((__mmask32)0x0C0C0C0Cu, u[0], u[1]);
	const __m512i v1 = _mm512_mask_blend_epi16((__mmask32)0xC0C0C0C0u, u[2], u[3]);
	return _mm512_mask_blend_epi16((__mmask32)0xF0F0F0F0u, v0, v1);
}

A5 void q42_llamacpp_rows_q4_1_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t nb = n / Q42_QK;
	const __m512i perm = q5_pair_perm(Q4_1_BYTES, Q4_1_QS);
	const struct q41_dm_tabs dmt = q41_dm_tables();
	struct pair_act pre[PAIR_PRE];
	__m512 pre_s[PAIR_PRE];
	const bool have_pre = pair_act_pre_q8_1(pre, pre_s, x, nb, n_tok);
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		const uint8_t *nx[GROUP];
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *xb = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m256 acc = _mm256_setzero_ps();
			float out[GROUP];
			int64_t j = 0;
			for (; j + 2 <= nb; j += 2, xb += 2 * Q8_1_BYTES) {
				const int64_t o = j * Q4_1_BYTES;
				if (t == 0)
					prefetch_rows(nx, o, 2 * Q4_1_BYTES);
				const struct pair_act a =
					have_pre ? pre[j / 2] : pair_act_at(xb, 0, Q8_1_BYTES, Q8_1_QS);
				const __m512 sx = have_pre ? pre_s[j / 2] : pair_scales(xb, Q8_1_S, Q8_1_BYTES);
				__m512i v[GROUP], l[GROUP];
				UNROLL
				for (int r = 0; r < GROUP; r++) {
					l[r] = _mm512_maskz_loadu_epi8((__mmask64)((1ull << (2 * Q4_1_BYTES)) - 1), wr[r] + o);
					v[r] = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
								   pair_nibbles(_mm512_permutexvar_epi8(perm, l[r])), a.yq);
				}
				const __m512 s = _mm512_cvtepi32_ps(reduce_pairs16(v));
				const __m512i dm = q41_dm(l, &dmt);
				const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(dm)), a.dx);
				const __m512 m = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(dm, 1));
				acc = _mm256_fmadd_ps(_mm512_castps512_ps256(s), _mm512_castps512_ps256(d), acc);
				acc = _mm256_fmadd_ps(_mm512_castps512_ps256(m), _mm512_castps512_ps256(sx), acc);
				acc = _mm256_fmadd_ps(hi256(s), hi256(d), acc);
				acc = _mm256_fmadd_ps(hi256(m), hi256(sx), acc);
			}
			for (; j < nb; j++, xb += Q8_1_BYTES) {
				const int64_t o = j * Q4_1_BYTES;
				const __m256i s = sums_q4_1_avx512(
					wr, o, _mm256_loadu_si256((const __m256i *)(xb + Q8_1_QS)));
				const __m256 d = _mm256_mul_ps(halves_rows(wr, o),
							       _mm256_set1_ps(_cvtsh_ss(q42_ld16(xb))));
				acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc);
				acc = _mm256_fmadd_ps(halves_rows(wr, o + Q4_1_M),
						      _mm256_set1_ps(_cvtsh_ss(q42_ld16(xb + Q8_1_S))), acc);
			}
			_mm256_storeu_ps(out, acc);
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP);
		}
	}
}

/* Q8_0, two blocks per row and step: [block j | block j+1] of a row in one
 * register (w + 128 for VNNI, the bias undoes it), the same reduction and
 * scale gather as Q5_0 above, then the float steps of block j and j+1 in
 * order. The step is the only difference between the two arithmetics:
 * llama.cpp's fma chain (llamacpp) and ggml's generic product-then-add. */
A5_INLINE __m256 step_fma(__m256 acc, __m256 s, __m256 d)
{
	return _mm256_fmadd_ps(s, d, acc);
}

A5_INLINE __m256 step_gen(__m256 acc, __m256 s, __m256 d)
{
	return _mm256_add_ps(acc, _mm256_mul_ps(s, d));
}

A5_INLINE __m512i q8_0_pair(const uint8_t *p)
{
	const __m512i w = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(p + Q8_0_QS))),
		_mm256_loadu_si256((const __m256i *)(p + Q8_0_BYTES + Q8_0_QS)), 1);
	return _mm512_xor_si512(w, _mm512_set1_epi8((char)0x80));
}

#define ROWS_Q8_0_PAIR(NAME, STEP)                                                                 \
	A5 void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                         \
	{                                                                                          \
		const int64_t nb = n / Q42_QK;                                                     \
		const __m512i dperm = dperm_gap(Q8_0_BYTES / 2);                                   \
		struct pair_act pre[PAIR_PRE];                                                     \
		const bool have_pre =                                                              \
			pair_act_pre(pre, x, nb, n_tok, (char)0x80, Q8_0_BYTES, Q8_0_QS);          \
		for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {                                   \
			const uint8_t *wr[GROUP];                                                  \
			group_rows(w, w_stride, r0, n_rows, GROUP, wr);                            \
			const uint8_t *nx[GROUP];                                                  \
			group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows,     \
				   GROUP, nx);                                                     \
			for (int64_t t = 0; t < n_tok; t++) {                                      \
				const uint8_t *xb = (const uint8_t *)x + (uint64_t)t * x_stride;   \
				__m256 acc = _mm256_setzero_ps();                                  \
				float out[GROUP];                                                  \
				int64_t j = 0;                                                     \
				for (; j + 2 <= nb; j += 2, xb += 2 * Q8_0_BYTES) {                \
					const int64_t o = j * Q8_0_BYTES;                          \
					if (t == 0)                                                \
						prefetch_rows(nx, o, 2 * Q8_0_BYTES);              \
					const struct pair_act a =                                  \
						have_pre ? pre[j / 2]                              \
							 : pair_act_at(xb, (char)0x80, Q8_0_BYTES, Q8_0_QS); \
					__m512i v[GROUP];                                          \
					UNROLL                                                     \
					for (int r = 0; r < GROUP; r++)                            \
						v[r] = _mm512_dpbusd_epi32(a.bias, q8_0_pair(wr[r] + o), a.yq); \
					const __m512 s = _mm512_cvtepi32_ps(reduce_pairs16(v));    \
					const __m512 d = _mm512_mul_ps(                            \
						pair_halves(wr, o, Q8_0_BYTES / 2, dperm), a.dx);  \
					acc = STEP(acc, _mm512_castps512_ps256(s),                 \
						   _mm512_castps512_ps256(d));                     \
					acc = STEP(acc, hi256(s),              \
						   hi256(d));                  \
				}                                                                  \
				for (; j < nb; j++, xb += Q8_0_BYTES) {                            \
					const int64_t o = j * Q8_0_BYTES;                          \
					const __m256i s = sums_q8_0_avx512(                        \
						wr, o, _mm256_loadu_si256((const __m256i *)(xb + Q8_0_QS))); \
					const __m256 d = _mm256_mul_ps(                            \
						halves_rows(wr, o),                                \
						_mm256_set1_ps(_cvtsh_ss(q42_ld16(xb))));          \
					acc = STEP(acc, _mm256_cvtepi32_ps(s), d);                 \
				}                                                                  \
				_mm256_storeu_ps(out, acc);                                        \
				store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP);   \
			}                                                                          \
		}                                                                                  \
	}

ROWS_Q8_0_PAIR(q42_llamacpp_rows_q8_0_avx512, step_fma)
ROWS_Q8_0_PAIR(q42_generic_rows_q8_0_avx512, step_gen)

/* Q4_0 (llama.cpp's AMX buffer) and IQ4_NL (its CPU_REPACK buffer): per
 * row and block fma(sumi, d_w * d_x, acc), two blocks per step as Q8_0
 * above, the pair unpacked as Q4_1's; IQ4_NL
 * then looks its nibbles up in the grid plus 128 (unsigned for VNNI; the
 * bias takes 128 x y off, as Q4_0's takes 8 x y). */
A5_INLINE void nib_pair_rows(Q42_LLAMACPP_ROWS_ARGS, bool nl)
{
	const int64_t nb = n / Q42_QK;
	const char k = nl ? (char)0x80 : 8;
	const __m512i perm = q5_pair_perm(Q4_0_BYTES, Q4_0_QS);
	const __m512i dperm = dperm_gap(Q4_0_BYTES / 2);
	const __m512i grid = _mm512_add_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)q42_iq4nl_values)),
					     _mm512_set1_epi8((char)0x80));
	struct pair_act pre[PAIR_PRE];
	const bool have_pre = pair_act_pre(pre, x, nb, n_tok, k, Q8_0_BYTES, Q8_0_QS);
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP], *nx[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *xb = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m256 acc = _mm256_setzero_ps();
			float out[GROUP];
			int64_t j = 0;
			for (; j + 2 <= nb; j += 2, xb += 2 * Q8_0_BYTES) {
				const int64_t o = j * Q4_0_BYTES;
				if (t == 0)
					prefetch_rows(nx, o, 2 * Q4_0_BYTES);
				const struct pair_act a = have_pre ? pre[j / 2] : pair_act_at(xb, k, Q8_0_BYTES, Q8_0_QS);
				__m512i v[GROUP];
				UNROLL
				for (int r = 0; r < GROUP; r++) {
					const __m512i q = pair_nibbles(_mm512_permutexvar_epi8(
						perm, _mm512_maskz_loadu_epi8((__mmask64)((1ull << (2 * Q4_0_BYTES)) - 1),
									      wr[r] + o)));
					v[r] = _mm512_dpbusd_epi32(a.bias, nl ? _mm512_shuffle_epi8(grid, q) : q, a.yq);
				}
				const __m512 s = _mm512_cvtepi32_ps(reduce_pairs16(v));
				const __m512 d = _mm512_mul_ps(pair_halves(wr, o, Q4_0_BYTES / 2, dperm), a.dx);
				acc = _mm256_fmadd_ps(_mm512_castps512_ps256(s), _mm512_castps512_ps256(d), acc);
				acc = _mm256_fmadd_ps(hi256(s), hi256(d), acc);
			}
			for (; j < nb; j++, xb += Q8_0_BYTES) {
				const int64_t o = j * Q4_0_BYTES;
				const __m256i y8 = _mm256_loadu_si256((const __m256i *)(xb + Q8_0_QS));
				const __m256i s = nl ? sums_iq4_nl_avx512(wr, o, y8) : sums_q4_0_avx512(wr, o, y8);
				const __m256 d = _mm256_mul_ps(halves_rows(wr, o), _mm256_set1_ps(_cvtsh_ss(q42_ld16(xb))));
				acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc);
			}
			_mm256_storeu_ps(out, acc);
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, GROUP);
		}
	}
}

A5 void q42_llamacpp_rows_q4_0_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	nib_pair_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

A5 void q42_llamacpp_rows_iq4_nl_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	nib_pair_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
}

/* ---- Q8_0 in the plain CPU buffer (the zen4 variant) ------------------- */

/* ggml_vec_dot_q8_0_q8_0 of the x86 build, per row and token as
 * q42_llamacpp_dot_q8_0_cpu defines it: lane l of a block is the exact sum
 * of its bytes 4l..4l+3 (|w| . sign(x, w), as ggml forms it), one fma per
 * lane and block, hsum_float_8 at the end. For the tail rows of the R16
 * form and matrices it does not take. */
#define Q8_0_CPU_ROWS(NAME, TGT, LANESUM)                                                          \
	TGT void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                      \
	{                                                                                          \
		const int64_t nb = n / Q42_QK;                                                     \
		for (int64_t r = 0; r < n_rows; r++)                                               \
			for (int64_t t = 0; t < n_tok; t++) {                                      \
				const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;    \
				const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;    \
				__m256 acc = _mm256_setzero_ps();                                  \
				for (int64_t j = 0; j < nb; j++, a += Q8_0_BYTES, b += Q8_0_BYTES) { \
					const __m256i qw = _mm256_loadu_si256((const __m256i *)(const void *)(a + 2)); \
					const __m256i qx = _mm256_loadu_si256((const __m256i *)(const void *)(b + 2)); \
					const __m256i s = LANESUM(_mm256_sign_epi8(qw, qw), _mm256_sign_epi8(qx, qw)); \
					const float dd = _cvtsh_ss(q42_ld16(a)) * _cvtsh_ss(q42_ld16(b));  \
					acc = _mm256_fmadd_ps(_mm256_set1_ps(dd), _mm256_cvtepi32_ps(s), acc); \
				}                                                                          \
				y[(uint64_t)t * y_stride + (uint64_t)r] = hsum_float8(acc);        \
			}                                                                          \
	}

A2_INLINE __m256i lanesum_avx2(__m256i u, __m256i s)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

A5_INLINE __m256i lanesum_vnni(__m256i u, __m256i s)
{
	return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
}

Q8_0_CPU_ROWS(q42_llamacpp_rows_q8_0_cpu_avx2, A2, lanesum_avx2)
Q8_0_CPU_ROWS(q42_llamacpp_rows_q8_0_cpu_avx512, A5, lanesum_vnni)

#endif
