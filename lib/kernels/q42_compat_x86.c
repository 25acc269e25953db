/* q42_compat_x86.c -- AVX2 and AVX-512 versions of the q42_compat kernels:
 * the same bits as the scalar definitions in q42_compat.c, faster.
 *
 * Integer block sums are exact in any order, so they are formed with
 * whatever instructions are quickest (VNNI where there is one). The float
 * steps are kept exactly: the row products compute eight (or four) output
 * rows at once with one row per SIMD lane, so each row still gets one
 * fused multiply-add per block in block order (the serial chain of the
 * scalar kernel, eight chains in flight); float lanes are reduced in the
 * scalar tree order. Blocks holding a NaN or an infinity, where the
 * scalar code's behaviour is not a plain vector operation, go through the
 * scalar code. Each function carries its own target attribute (no -m build
 * flags); nothing here may run before q42_cpu_has_avx2() /
 * q42_cpu_has_avx512() said yes.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/q42_compat.h"
#include "kernels/q42_compat_x86.h"
#include "kernels/q42_kernels_x86.h"
#include "kernels/q42_ops.h"

#if defined(__x86_64__) || defined(__i386__)

#define A2 __attribute__((target("avx2,fma,f16c")))
#define A5 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni")))
#define A2_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c")))
#define A5_INLINE                                                                       \
	static inline __attribute__((always_inline,                                     \
				     target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni")))

#define GROUP 8 /* output rows per pass of the quantized row products */
/* Loops over register accumulators must be unrolled for them to stay in
 * registers (-O2 does not; clang reads the GCC spelling too). */
#define UNROLL _Pragma("GCC unroll 16")

/* Row pointers of one group; rows past the end repeat the last row so the
 * lanes stay busy (their results are never stored). */
static void group_rows(const void *w, uint64_t stride, int64_t r0, int64_t n_rows, int g,
		       const uint8_t **wr)
{
	for (int r = 0; r < g; r++) {
		const int64_t i = r0 + r < n_rows ? r0 + r : n_rows - 1;
		wr[r] = (const uint8_t *)w + (uint64_t)i * stride;
	}
}

static void store_group(float *y, int64_t r0, int64_t n_rows, const float *v, int g)
{
	for (int r = 0; r < g && r0 + r < n_rows; r++)
		y[r0 + r] = v[r];
}

/* Decode streams each weight row once: while a group is multiplied, its
 * successor's bytes at the same offset are fetched (the rows of a group
 * are short, too short for the hardware prefetcher to warm up on each).
 * Into L2, not L1: with T0 the prefetches wait for L1 fill buffers and
 * stall the loop (measured: 2 threads, 256 MiB of Q8_0, T1 ~10 % faster
 * than T0, NTA half the speed, none 35 % slower). */
A2_INLINE void prefetch_rows(const uint8_t *const nx[GROUP], int64_t off, int64_t bytes)
{
	for (int r = 0; r < GROUP; r++)
		for (int64_t b = 0; b < bytes; b += 64)
			_mm_prefetch((const char *)(nx[r] + off + b), _MM_HINT_T1);
}

/* The f16 field at offset off of eight rows, widened exactly. */
A2_INLINE __m256 halves_rows(const uint8_t *const wr[GROUP], int64_t off)
{
	return _mm256_cvtph_ps(_mm_setr_epi16(
		(short)q42_ld16(wr[0] + off), (short)q42_ld16(wr[1] + off),
		(short)q42_ld16(wr[2] + off), (short)q42_ld16(wr[3] + off),
		(short)q42_ld16(wr[4] + off), (short)q42_ld16(wr[5] + off),
		(short)q42_ld16(wr[6] + off), (short)q42_ld16(wr[7] + off)));
}

/* ---- Q8_0 / Q4_0 against Q8_0 ------------------------------------------ */

/* The totals of eight rows' vectors of int32 partial sums, given as the
 * pairwise sums h[p] = hadd(v[2p], v[2p + 1]): callers add each pair as
 * it comes, so that the rows' vectors never all live in registers at once
 * (eight of them plus the operands spill on AVX2's sixteen; smol360 Q8_0
 * --isa avx2 decode kernel 0.48-0.54 -> 0.69-0.82 of the stream loop).
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
	TGT void NAME(Q42_COMPAT_ROWS_ARGS)                                                      \
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
A2 void q42_compat_rows_q8_0_avx2(Q42_COMPAT_ROWS_ARGS)
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

ROWS_Q32(q42_compat_rows_q4_0_avx2, A2, sums_q4_0_avx2, Q4_0_BYTES, Q8_0_BYTES, Q8_0_QS, 0)
ROWS_Q32(q42_compat_rows_q4_1_avx2, A2, sums_q4_1_avx2, Q4_1_BYTES, Q8_1_BYTES, Q8_1_QS, 1)
ROWS_Q32(q42_compat_rows_iq4_nl_avx2, A2, sums_iq4_nl_avx2, IQ4_NL_BYTES, Q8_0_BYTES, Q8_0_QS, 0)

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
A5_INLINE void q5_rows(Q42_COMPAT_ROWS_ARGS, bool q51)
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

A5 void q42_generic_rows_q5_0_avx512(Q42_COMPAT_ROWS_ARGS)
{
	q5_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

A5 void q42_generic_rows_q5_1_avx512(Q42_COMPAT_ROWS_ARGS)
{
	q5_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
}

/* llama.cpp's Q5_1 (q42_compat_dot_q5_1): each row keeps its eight float
 * lanes (dword l of a block's VNNI sum is lane l: elements 4l..4l+3 in
 * the nibble order the pair unpack gives), one fma per block and lane, no
 * reduction per block; the eight rows' min sums ride in one vector; at
 * the end each row's lanes reduce as hsum_float_8 and its min sum is
 * added. Blocks of a pair are applied in order. */
A2_INLINE float hsum_float8(__m256 v)
{
	__m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
	r = _mm_add_ps(r, _mm_movehl_ps(r, r));
	return _mm_cvtss_f32(_mm_add_ss(r, _mm_movehdup_ps(r)));
}

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
	default: return (struct l8){Q5_0_BYTES, Q5_0_QH, Q5_0_QS, Q8_0_BYTES, Q8_0_QS, 16, false};
	}
}

/* Rows longer than the SIMD kernels' token tables: the scalar definition
 * per element (k > 65536; no model has such rows). */
static void lanes8_rows_scalar(Q42_COMPAT_ROWS_ARGS, enum lanes8_kind kind)
{
	void (*dot)(int64_t, float *, const void *, const void *) =
		kind == L8_Q5_0 ? q42_compat_dot_q5_0 : kind == L8_Q5_1 ? q42_compat_dot_q5_1 : q42_compat_dot_q4_1_cpu;
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

A2_INLINE void lanes8_rows_avx2(Q42_COMPAT_ROWS_ARGS, enum lanes8_kind kind)
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

A2 void q42_compat_rows_q5_1_avx2(Q42_COMPAT_ROWS_ARGS)
{
	lanes8_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_1);
}

A2 void q42_compat_rows_q4_1_cpu_avx2(Q42_COMPAT_ROWS_ARGS)
{
	lanes8_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q4_1);
}

A2 void q42_compat_rows_q5_0_avx2(Q42_COMPAT_ROWS_ARGS)
{
	lanes8_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_0);
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

A5_INLINE void two_rows(Q42_COMPAT_ROWS_ARGS, enum lanes8_kind kind)
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

A5 void q42_compat_rows_q5_0_avx512(Q42_COMPAT_ROWS_ARGS)
{
	two_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_0);
}

A5 void q42_compat_rows_q5_1_avx512(Q42_COMPAT_ROWS_ARGS)
{
	two_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q5_1);
}

A5 void q42_compat_rows_q4_1_cpu_avx512(Q42_COMPAT_ROWS_ARGS)
{
	two_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, L8_Q4_1);
}

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
 * q42_compat_dot_q3_k): per 32-element chunk c, the values (low two bits
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

/* Q2_K in llama.cpp's CPU_REPACK order (q42_compat_dot_q2_k, _x4 for
 * the tokens in whole groups of four) on AVX2: the exact sums of
 * q42_kernels_x86.h per (row, token, super-block), then the fmas. */
A2 void q42_compat_rows_q2_k_avx2(Q42_COMPAT_ROWS_ARGS)
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

/* Q3_K, TQ1_0 and TQ2_0 in llama.cpp's x86 order (q42_compat_dot_q3_k,
 * q42_compat_dot_tq1_0 / tq2_0): eight int32 lanes per super-block, one
 * fma per lane with d_x * d_w, hsum_float_8 at the end; every (row,
 * token) on its own. (The AVX-512 rows below unpack a row's block once
 * for a tile of up to TQ_T tokens instead.) */
#define LANES_ROWS(NAME, TGT, LANES, BYTES, DOFF)                                                         \
	TGT void NAME(Q42_COMPAT_ROWS_ARGS)                                                                \
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
LANES_ROWS(q42_compat_rows_tq1_0_avx2, A2, x86_tq1_lanes, TQ1_0_BYTES, TQ1_0_D)
LANES_ROWS(q42_compat_rows_tq2_0_avx2, A2, x86_tq2_lanes, TQ2_0_BYTES, TQ2_0_D)
LANES_ROWS(q42_compat_rows_q3_k_avx2, A2, q3k_lanes, Q3_K_BYTES, Q3_K_D)

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

/* Q2_K's tiles: the sums of q42_compat_dot_q2_k per (row, token), a
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

A5_INLINE void lanes_rows512(Q42_COMPAT_ROWS_ARGS, enum lanes_kind kind)
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

A5 void q42_compat_rows_tq1_0_avx512(Q42_COMPAT_ROWS_ARGS)
{
	lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_TQ1);
}

A5 void q42_compat_rows_tq2_0_avx512(Q42_COMPAT_ROWS_ARGS)
{
	lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_TQ2);
}

A5 void q42_compat_rows_q3_k_avx512(Q42_COMPAT_ROWS_ARGS)
{
	lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_Q3K);
}

A5 void q42_compat_rows_q2_k_avx512(Q42_COMPAT_ROWS_ARGS)
{
	if (n_tok == 1)
		q2k_rows1(n, n_rows, w, w_stride, x, y);
	else
		lanes_rows512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, LK_Q2K);
}

/* A pair of blocks' quant bytes as q5_pair_perm places them (each block's
 * 16 bytes twice) split into nibbles, low ones in 128-bit lanes 0 and 2,
 * high ones in 1 and 3: one GF(2) affine step per register (a shift and a
 * mask otherwise) */
A5_INLINE __m512i pair_nibbles(__m512i v)
{
	const long long lo = 0x0102040800000000LL, hi = 0x1020408000000000LL;
	return _mm512_gf2p8affine_epi64_epi8(v, _mm512_setr_epi64(lo, lo, hi, hi, lo, lo, hi, hi), 0);
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

A5 void q42_compat_rows_q4_1_avx512(Q42_COMPAT_ROWS_ARGS)
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
 * llama.cpp's fma chain (compat) and ggml's generic product-then-add. */
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
	A5 void NAME(Q42_COMPAT_ROWS_ARGS)                                                         \
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

ROWS_Q8_0_PAIR(q42_compat_rows_q8_0_avx512, step_fma)
ROWS_Q8_0_PAIR(q42_generic_rows_q8_0_avx512, step_gen)

/* Q4_0 (llama.cpp's AMX buffer) and IQ4_NL (its CPU_REPACK buffer): per
 * row and block fma(sumi, d_w * d_x, acc), two blocks per step as Q8_0
 * above, the pair unpacked as Q4_1's; IQ4_NL
 * then looks its nibbles up in the grid plus 128 (unsigned for VNNI; the
 * bias takes 128 x y off, as Q4_0's takes 8 x y). */
A5_INLINE void nib_pair_rows(Q42_COMPAT_ROWS_ARGS, bool nl)
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

A5 void q42_compat_rows_q4_0_avx512(Q42_COMPAT_ROWS_ARGS)
{
	nib_pair_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

A5 void q42_compat_rows_iq4_nl_avx512(Q42_COMPAT_ROWS_ARGS)
{
	nib_pair_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
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

/* IQ4_XS on AVX2 (q42_compat_dot_iq4_xs), one (row, token) at a time: a
 * 32-byte quant group holds sub-blocks 2c | 2c + 1, whose low nibbles pair
 * with the first 16 of each sub-block's y and high nibbles with the last
 * 16; signed products (exact), times the lanes' scales, summed exactly. */
A2 void q42_compat_rows_iq4_xs_avx2(Q42_COMPAT_ROWS_ARGS)
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

/* IQ4_XS (llama.cpp's AMX buffer, q42_compat_dot_iq4_xs) for up to XS_T
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

A5 void q42_compat_rows_iq4_xs_avx512(Q42_COMPAT_ROWS_ARGS)
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
	TGT void NAME(Q42_COMPAT_ROWS_ARGS)                                                                  \
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
	TGT void NAME(Q42_COMPAT_ROWS_ARGS)                                                       \
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

A2_INLINE void kq2_rows_tok(Q42_COMPAT_ROWS_ARGS, int kind)
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

KQ_ENTRY(q42_compat_rows_q4_k_avx2, A2, kq2_rows_tok, rows1_q4_k_avx2, 0)
KQ_ENTRY(q42_compat_rows_q5_k_avx2, A2, kq2_rows_tok, rows1_q5_k_avx2, 1)
KQ_ENTRY(q42_compat_rows_q6_k_avx2, A2, kq2_rows_tok, rows1_q6_k_avx2, 2)

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
	A5_INLINE void NAME(Q42_COMPAT_ROWS_ARGS)                                                                   \
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
A5_INLINE void kq_rows_tok(Q42_COMPAT_ROWS_ARGS, int kind)
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

KQ_ENTRY(q42_compat_rows_q4_k_avx512, A5, kq_rows_tok, rows1_q4_k_avx512, 0)
KQ_ENTRY(q42_compat_rows_q5_k_avx512, A5, kq_rows_tok, rows1_q5_k_avx512, 1)
KQ_ENTRY(q42_compat_rows_q6_k_avx512, A5, kq_rows_tok, rows1_q6_k_avx512, 2)

/* ---- float reductions -------------------------------------------------- */

/* _mm512_reduce_add_ps's tree over lanes lo (0..7) and hi (8..15): i and
 * i+8, then i+4, i+2, i+1 -- spelled out, not left to a library macro. */
A2_INLINE float reduce16_halves(__m256 lo, __m256 hi)
{
	const __m256 t8 = _mm256_add_ps(lo, hi);
	const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
	const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
	return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

A5_INLINE float reduce16(__m512 v)
{
	return reduce16_halves(_mm512_castps512_ps256(v),
			       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* ---- F16 weights ------------------------------------------------------- */

#define F16_GROUP 4

#define F16_TOK 4 /* tokens per pass of the F16 x F32 product */

/* Decode: one token, so each weight byte is used once and the product is
 * bound by memory. Eight rows in flight, and the next eight rows' bytes
 * at the same offset are prefetched (rows of a few KiB are too short for
 * the hardware prefetcher to ramp up on each). One chain of sixteen lanes
 * per row, as the scalar product. */
A5 static void f16_f32_one(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const float *v,
			   float *y)
{
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP], *nx[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		__m512 acc[GROUP];
		UNROLL
		for (int r = 0; r < GROUP; r++)
			acc[r] = _mm512_setzero_ps();
		int64_t k = 0;
		for (; k + 32 <= n; k += 32) {
			prefetch_rows(nx, 2 * k, 64);
			const __m512 x0 = _mm512_loadu_ps(v + k), x1 = _mm512_loadu_ps(v + k + 16);
			UNROLL
			for (int r = 0; r < GROUP; r++)
				acc[r] = _mm512_fmadd_ps(
					x0, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(wr[r] + 2 * k))),
					acc[r]);
			UNROLL
			for (int r = 0; r < GROUP; r++)
				acc[r] = _mm512_fmadd_ps(
					x1,
					_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(wr[r] + 2 * k + 32))),
					acc[r]);
		}
		if (k + 16 <= n) {
			const __m512 x0 = _mm512_loadu_ps(v + k);
			UNROLL
			for (int r = 0; r < GROUP; r++)
				acc[r] = _mm512_fmadd_ps(
					x0, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(wr[r] + 2 * k))),
					acc[r]);
		}
		float out[GROUP];
		UNROLL
		for (int r = 0; r < GROUP; r++)
			out[r] = reduce16(acc[r]);
		store_group(y, r0, n_rows, out, GROUP);
	}
}

/* Row pointers of a call over F16 rows, in the file's layout (16-element
 * chunk c of a row at 32 c) or the R16 one (q42_pack.h: chunk c of the
 * group at 512 c, row r % 16 of it at 32 (r % 16)); chunk c of row i is
 * at wr[i] + c * F16_CS(r16). */
#define F16_CS(r16) ((r16) ? 512 : 32)
static void f16_rows(const void *w, uint64_t stride, int64_t r0, int64_t n_rows, int g, bool r16,
		     const uint8_t **wr)
{
	for (int r = 0; r < g; r++) {
		const int64_t i = r0 + r < n_rows ? r0 + r : n_rows - 1;
		wr[r] = (const uint8_t *)w + (r16 ? (uint64_t)(i / 16) * 16 * stride + (uint64_t)(i % 16) * 32
						  : (uint64_t)i * stride);
	}
}

/* AMX F16: 16 FMA lanes over whole 16-element steps. Four rows times
 * F16_TOK tokens per pass (each widened weight vector serves every token
 * of the pass); each (row, token) keeps its own lanes, so the order per
 * output element is the single-product one. For decode and short calls. */
A5 static void f16_f32_few(Q42_COMPAT_ROWS_ARGS, bool r16)
{
	const int64_t cs = F16_CS(r16);
	for (int64_t r0 = 0; r0 < n_rows; r0 += F16_GROUP) {
		const uint8_t *wr[F16_GROUP];
		f16_rows(w, w_stride, r0, n_rows, F16_GROUP, r16, wr);
		for (int64_t t0 = 0; t0 < n_tok; t0 += F16_TOK) {
			const int nt = n_tok - t0 < F16_TOK ? (int)(n_tok - t0) : F16_TOK;
			const float *v[F16_TOK];
			__m512 acc[F16_TOK][F16_GROUP];
			UNROLL
			for (int t = 0; t < F16_TOK; t++) {
				/* missing tokens repeat the last one; never stored */
				v[t] = (const float *)((const uint8_t *)x +
						       (uint64_t)(t0 + (t < nt ? t : nt - 1)) * x_stride);
				UNROLL
				for (int r = 0; r < F16_GROUP; r++)
					acc[t][r] = _mm512_setzero_ps();
			}
			if (nt == F16_TOK) {
				for (int64_t k = 0; k + 16 <= n; k += 16) {
					__m512 wv[F16_GROUP];
					UNROLL
					for (int r = 0; r < F16_GROUP; r++)
						wv[r] = _mm512_cvtph_ps(
							_mm256_loadu_si256((const __m256i *)(wr[r] + k / 16 * cs)));
					UNROLL
					for (int t = 0; t < F16_TOK; t++) {
						const __m512 xv = _mm512_loadu_ps(v[t] + k);
						UNROLL
						for (int r = 0; r < F16_GROUP; r++)
							acc[t][r] = _mm512_fmadd_ps(xv, wv[r], acc[t][r]);
					}
				}
			} else {
				for (int t = 0; t < nt; t++)
					for (int64_t k = 0; k + 16 <= n; k += 16) {
						const __m512 xv = _mm512_loadu_ps(v[t] + k);
						UNROLL
						for (int r = 0; r < F16_GROUP; r++)
							acc[t][r] = _mm512_fmadd_ps(
								xv,
								_mm512_cvtph_ps(_mm256_loadu_si256(
									(const __m256i *)(wr[r] + k / 16 * cs))),
								acc[t][r]);
					}
			}
			for (int t = 0; t < nt; t++) {
				float out[F16_GROUP];
				UNROLL
				for (int r = 0; r < F16_GROUP; r++)
					out[r] = reduce16(acc[t][r]);
				store_group(y + (uint64_t)(t0 + t) * y_stride, r0, n_rows, out, F16_GROUP);
			}
		}
	}
}

enum {
	F16_PANEL = 16, /* weight rows widened together */
	F16_KC = 512,	/* elements per panel chunk: 32 KiB of floats */
	F16_MR = 4,	/* rows ... */
	F16_NT = 6,	/* ... times tokens in registers */
	F16_MIN_TOK = 8,
};

/* Prompt processing: the f16 -> f32 widening and the L2 traffic cost more
 * than the multiply-adds when every pass re-reads weights and activations.
 * A chunk of sixteen rows is widened once into an L1-sized panel and
 * serves every token; the activation chunk of six tokens serves the four
 * row quads. Each (row, token) pair's sixteen lanes live in acc between
 * chunks and run through k in the scalar order, so the bytes do not
 * change. acc holds F16_PANEL * ntp * 16 floats, ntp = n_tok rounded up
 * to F16_NT (the padding tokens repeat the last one, never stored). */
A5 static void f16_f32_blocked(Q42_COMPAT_ROWS_ARGS, float *acc, int64_t ntp, bool r16)
{
	float panel[F16_PANEL * F16_KC] __attribute__((aligned(64)));
	const int64_t n16 = n & ~(int64_t)15, cs = F16_CS(r16);
	for (int64_t r0 = 0; r0 < n_rows; r0 += F16_PANEL) {
		const uint8_t *wr[F16_PANEL];
		f16_rows(w, w_stride, r0, n_rows, F16_PANEL, r16, wr);
		for (int64_t k0 = 0; k0 < n16; k0 += F16_KC) {
			const int64_t kl = n16 - k0 < F16_KC ? n16 - k0 : F16_KC;
			for (int r = 0; r < F16_PANEL; r++)
				for (int64_t k = 0; k < kl; k += 16)
					_mm512_store_ps(panel + r * F16_KC + k,
							_mm512_cvtph_ps(_mm256_loadu_si256(
								(const __m256i *)(wr[r] + (k0 + k) / 16 * cs))));
			for (int64_t t0 = 0; t0 < ntp; t0 += F16_NT) {
				const float *v[F16_NT];
				UNROLL
				for (int t = 0; t < F16_NT; t++) {
					const int64_t ti = t0 + t < n_tok ? t0 + t : n_tok - 1;
					v[t] = (const float *)((const uint8_t *)x + (uint64_t)ti * x_stride) + k0;
				}
				for (int rs = 0; rs < F16_PANEL; rs += F16_MR) {
					__m512 a[F16_NT][F16_MR];
					/* the first chunk starts from zero (no pass to clear acc) */
					UNROLL
					for (int t = 0; t < F16_NT; t++)
						UNROLL
						for (int r = 0; r < F16_MR; r++)
							a[t][r] = k0 == 0 ? _mm512_setzero_ps()
									  : _mm512_load_ps(acc + ((rs + r) * ntp + t0 + t) * 16);
					for (int64_t k = 0; k < kl; k += 16) {
						__m512 wv[F16_MR];
						UNROLL
						for (int r = 0; r < F16_MR; r++)
							wv[r] = _mm512_load_ps(panel + (rs + r) * F16_KC + k);
						UNROLL
						for (int t = 0; t < F16_NT; t++) {
							const __m512 xv = _mm512_loadu_ps(v[t] + k);
							UNROLL
							for (int r = 0; r < F16_MR; r++)
								a[t][r] = _mm512_fmadd_ps(xv, wv[r], a[t][r]);
						}
					}
					UNROLL
					for (int t = 0; t < F16_NT; t++)
						UNROLL
						for (int r = 0; r < F16_MR; r++)
							_mm512_store_ps(acc + ((rs + r) * ntp + t0 + t) * 16, a[t][r]);
				}
			}
		}
		for (int64_t t = 0; t < n_tok; t++) {
			float out[F16_PANEL];
			for (int r = 0; r < F16_PANEL; r++)
				out[r] = reduce16(_mm512_load_ps(acc + (r * ntp + t) * 16));
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, F16_PANEL);
		}
	}
}

/* Decode over the R16 layout: a group's sixteen rows are one stream, read
 * front to back 512 bytes (one chunk of every row) per step, with lines
 * requested ahead into L2 and L1 as the R16 integer products do on Intel
 * (none on other CPUs: q42_kernels_x86.c); each row keeps its one chain
 * of sixteen lanes, as f16_f32_one. Distances measured on Intel in
 * smol360 F16 decode (2 threads, q42run --bench --tg 64, alternating):
 * 4 KiB into L2 29.3 -> 30.7 tok/s against the integer products' 8 KiB;
 * 512 bytes or 1 KiB into L1 the same. Each line's two requests are one
 * Q42_X86_PREFETCH_L2_L1, so that they are not issued back to back
 * (q42_kernels_impl.h): on an Intel Xeon guest with AMX, weights on 2 MiB
 * pages, --tg 64 --reps 3, builds alternating, 3 rounds, 35.3-36.0 ->
 * 36.7-37.6 tok/s (the products 0.92 -> 0.94-0.96 of the read pass). On
 * that host, with the distances read at run time (an experiment build),
 * 2 KiB into L1 and 16 KiB into L2, or 6 KiB into L2, were 3-7 % slower
 * than these.
 * Long rows stream worse. On AMD Zen 5 (EPYC guest, bench_rows --type
 * r16-f16 --threads 2, row lengths alternating run by run, medians of 4-9
 * runs) the product reads 0.98-1.00 of a plain read's bytes/s at k = 1024,
 * 0.96 at 1280, 0.91 at 1536, 0.90 at 2048, 0.87 at 2560 (smol360's FFN
 * down) and 4096. Part of it is x: a group of 2560 is 80 KB, so x's 10 KB
 * has left L1 (48 KB) before the next group reads it again; x cut to its
 * first 4 KiB (wrong sums, as a probe) took k = 2560 from 0.81 to 0.86.
 * Prefetching x into L1 64-256 floats ahead, or the group 8 or 16 KiB
 * ahead into L2, gained nothing there. Neither did reading x once for two
 * or four groups, walking them by chunks of 256-1280 values with their
 * sums kept in memory between chunks (the same bits): 0.48-0.66 against
 * 0.80-0.82 in the same runs, the hardware keeping one stream per thread
 * fed far better than two or four. */
enum { F16_L1_AHEAD = 1024, F16_L2_AHEAD = 4096 };
A5 static void f16_r16_one(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const float *v, float *y)
{
	const bool pf = q42_x86_prefetch_l1();
	for (int64_t r0 = 0; r0 < n_rows; r0 += 16) {
		const uint8_t *g = (const uint8_t *)w + (uint64_t)r0 * w_stride;
		__m512 acc[16];
		UNROLL
		for (int r = 0; r < 16; r++)
			acc[r] = _mm512_setzero_ps();
		for (int64_t k = 0; k + 16 <= n; k += 16, g += 512) {
			const __m512 xv = _mm512_loadu_ps(v + k);
			UNROLL
			for (int o = 0; pf && o < 512; o += 64)
				Q42_X86_PREFETCH_L2_L1(g + o, F16_L2_AHEAD, F16_L1_AHEAD);
			UNROLL
			for (int r = 0; r < 16; r++)
				acc[r] = _mm512_fmadd_ps(
					xv, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(g + 32 * r))),
					acc[r]);
		}
		UNROLL
		for (int r = 0; r < 16; r++)
			y[r0 + r] = reduce16(acc[r]);
	}
}

A5_INLINE void f16_f32_rows(Q42_COMPAT_ROWS_ARGS, bool r16)
{
	const int64_t ntp = (n_tok + F16_NT - 1) / F16_NT * F16_NT;
	/* without the accumulator memory the short-call kernel gives the
	 * same bits */
	float *acc = n_tok >= F16_MIN_TOK && n >= 16
			     ? aligned_alloc(64, (size_t)(F16_PANEL * ntp * 16) * sizeof(float))
			     : NULL;
	if (n_tok == 1) {
		if (r16)
			f16_r16_one(n, n_rows, w, w_stride, x, y);
		else
			f16_f32_one(n, n_rows, w, w_stride, x, y);
		return;
	}
	if (acc == NULL) {
		f16_f32_few(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, r16);
		return;
	}
	f16_f32_blocked(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, acc, ntp, r16);
	free(acc);
}

A5 void q42_compat_rows_f16_f32_avx512(Q42_COMPAT_ROWS_ARGS)
{
	f16_f32_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

/* F16 rows in the R16 layout (whole groups; the rows past them in the
 * file's): the same products, bit for bit. */
A5 void q42_compat_rows_f16_f32_r16_avx512(Q42_COMPAT_ROWS_ARGS)
{
	const int64_t full = n_rows - n_rows % 16;
	if (full > 0)
		f16_f32_rows(n, full, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
	if (full < n_rows)
		f16_f32_rows(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride, n_tok, x,
			     x_stride, y + full, y_stride, false);
}

void q42_compat_row_f16_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r)
{
	const uint64_t rb = 2 * (uint64_t)n_in, rr = (uint64_t)(r % 16);
	const uint8_t *g = (const uint8_t *)p + (uint64_t)(r / 16) * 16 * rb;
	if (r >= n_out - n_out % 16) {
		memcpy(dst, (const uint8_t *)p + (uint64_t)r * rb, rb);
		return;
	}
	for (int64_t c = 0; c < n_in / 16; c++)
		memcpy((uint8_t *)dst + 32 * (uint64_t)c, g + 512 * (uint64_t)c + 32 * rr, 32);
}

/* The R16 packer of F16 rows: each 32-byte chunk moves as it is. */
A5 void q42_compat_pack_f16_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out)
{
	const uint64_t rb = 2 * (uint64_t)n_in, full = (uint64_t)(n_out - n_out % 16);
	for (uint64_t g = 0; g < full; g += 16)
		for (int64_t c = 0; c < n_in / 16; c++)
			for (uint64_t r = 0; r < 16; r++)
				_mm256_storeu_si256(
					(__m256i *)(void *)((uint8_t *)dst + g * rb + (uint64_t)c * 512 + 32 * r),
					_mm256_loadu_si256((const __m256i *)(const void *)((const uint8_t *)src +
											   (g + r) * rb + 32 * (uint64_t)c)));
	memcpy((uint8_t *)dst + full * rb, (const uint8_t *)src + full * rb, ((uint64_t)n_out - full) * rb);
}

/* Decode on AVX2: four rows in flight (their eight half accumulators, x's
 * two halves and the widened weights fill the sixteen registers), the
 * next four rows' line at the same offset prefetched into L2 as
 * prefetch_rows does. smol360 F16 decode, --isa avx2, 2 threads: 30 tok/s
 * with no prefetch, 44-48 with it; six rows 42-49, prefetching two
 * groups ahead 41-42. */
A2 static void f16_f32_one_avx2(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const float *v,
				float *y)
{
	enum { R = 4 };
	for (int64_t r0 = 0; r0 < n_rows; r0 += R) {
		const uint8_t *wr[R], *nx[R];
		group_rows(w, w_stride, r0, n_rows, R, wr);
		group_rows(w, w_stride, r0 + R < n_rows ? r0 + R : r0, n_rows, R, nx);
		__m256 lo[R], hi[R];
		UNROLL
		for (int r = 0; r < R; r++)
			lo[r] = hi[r] = _mm256_setzero_ps();
		for (int64_t k = 0; k + 16 <= n; k += 16) {
			if (k % 32 == 0)
				UNROLL
				for (int r = 0; r < R; r++)
					_mm_prefetch((const char *)(nx[r] + 2 * k), _MM_HINT_T1);
			const __m256 x0 = _mm256_loadu_ps(v + k), x1 = _mm256_loadu_ps(v + k + 8);
			UNROLL
			for (int r = 0; r < R; r++) {
				lo[r] = _mm256_fmadd_ps(x0, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(wr[r] + 2 * k))),
							lo[r]);
				hi[r] = _mm256_fmadd_ps(
					x1, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(wr[r] + 2 * k + 16))), hi[r]);
			}
		}
		float out[R];
		UNROLL
		for (int r = 0; r < R; r++)
			out[r] = reduce16_halves(lo[r], hi[r]);
		store_group(y, r0, n_rows, out, R);
	}
}

A2 void q42_compat_rows_f16_f32_avx2(Q42_COMPAT_ROWS_ARGS)
{
	if (n_tok == 1) {
		f16_f32_one_avx2(n, n_rows, w, w_stride, x, y);
		return;
	}
	for (int64_t r0 = 0; r0 < n_rows; r0 += F16_GROUP) {
		const uint8_t *wr[F16_GROUP];
		group_rows(w, w_stride, r0, n_rows, F16_GROUP, wr);
		for (int64_t t = 0; t < n_tok; t++) {
			const float *v = (const float *)((const uint8_t *)x + (uint64_t)t * x_stride);
			__m256 lo[F16_GROUP], hi[F16_GROUP];
			float out[F16_GROUP];
			UNROLL
			for (int r = 0; r < F16_GROUP; r++)
				lo[r] = hi[r] = _mm256_setzero_ps();
			for (int64_t k = 0; k + 16 <= n; k += 16) {
				const __m256 x0 = _mm256_loadu_ps(v + k), x1 = _mm256_loadu_ps(v + k + 8);
				UNROLL
				for (int r = 0; r < F16_GROUP; r++) {
					lo[r] = _mm256_fmadd_ps(x0, _mm256_cvtph_ps(_mm_loadu_si128(
						(const __m128i *)(wr[r] + 2 * k))), lo[r]);
					hi[r] = _mm256_fmadd_ps(x1, _mm256_cvtph_ps(_mm_loadu_si128(
						(const __m128i *)(wr[r] + 2 * k + 16))), hi[r]);
				}
			}
			UNROLL
			for (int r = 0; r < F16_GROUP; r++)
				out[r] = reduce16_halves(lo[r], hi[r]);
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, F16_GROUP);
		}
	}
}

/* ggml_vec_dot_f16: four 16-lane accumulators per 64-element step, folded
 * (s0 + s2) + (s1 + s3), reduced, leftovers added in double. Four rows per
 * group (sixteen accumulators in registers); decode prefetches the next. */
A5 void q42_compat_rows_f16_avx512(Q42_COMPAT_ROWS_ARGS)
{
	enum { R = 4 }; /* rows per group: 16 accumulators in registers */
	const int64_t np = n & ~(int64_t)63;
	for (int64_t r0 = 0; r0 < n_rows; r0 += R) {
		const uint8_t *wr[R], *nx[R];
		group_rows(w, w_stride, r0, n_rows, R, wr);
		group_rows(w, w_stride, r0 + R < n_rows ? r0 + R : r0, n_rows, R, nx);
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m512 s[R][4];
			float out[R];
			UNROLL
			for (int r = 0; r < R; r++)
				UNROLL
				for (int j = 0; j < 4; j++)
					s[r][j] = _mm512_setzero_ps();
			for (int64_t i = 0; i < np; i += 64) {
				/* the next group's 128 bytes at this offset, as in
				 * prefetch_rows (decode streams the output matrix) */
				if (t == 0)
					UNROLL
					for (int r = 0; r < R; r++) {
						_mm_prefetch((const char *)(nx[r] + 2 * i), _MM_HINT_T1);
						_mm_prefetch((const char *)(nx[r] + 2 * i + 64), _MM_HINT_T1);
					}
				UNROLL
				for (int j = 0; j < 4; j++) {
					const int64_t o = 2 * (i + 16 * j);
					const __m512 xv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + o)));
					UNROLL
					for (int r = 0; r < R; r++)
						s[r][j] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(
										  (const __m256i *)(wr[r] + o))),
									  xv, s[r][j]);
				}
			}
			UNROLL
			for (int r = 0; r < R; r++) {
				const __m512 f = _mm512_add_ps(_mm512_add_ps(s[r][0], s[r][2]),
							       _mm512_add_ps(s[r][1], s[r][3]));
				double sum = (double)reduce16(f);
				for (int64_t k = np; k < n; k++)
					sum += (double)(q42_half_at(wr[r] + 2 * k) * q42_half_at(b + 2 * k));
				out[r] = (float)sum;
			}
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, R);
		}
	}
}

/* The same products as attention's dots: one token, out[r] per row. */
A5 void q42_compat_dot_f16_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
				       uint64_t w_stride, const void *x)
{
	q42_compat_rows_f16_avx512(n, n_rows, w, w_stride, 1, x, 0, out, 0);
}

A2 void q42_compat_rows_f16_avx2(Q42_COMPAT_ROWS_ARGS)
{
	const int64_t np = n & ~(int64_t)63;
	for (int64_t r = 0; r < n_rows; r++) {
		const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m256 s[4][2];
			UNROLL
			for (int j = 0; j < 4; j++)
				s[j][0] = s[j][1] = _mm256_setzero_ps();
			for (int64_t i = 0; i < np; i += 64)
				UNROLL
				for (int j = 0; j < 4; j++)
					UNROLL
					for (int h = 0; h < 2; h++) {
						const int64_t o = 2 * (i + 16 * j + 8 * h);
						s[j][h] = _mm256_fmadd_ps(
							_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + o))),
							_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + o))),
							s[j][h]);
					}
			__m256 f[2];
			UNROLL
			for (int h = 0; h < 2; h++)
				f[h] = _mm256_add_ps(_mm256_add_ps(s[0][h], s[2][h]),
						     _mm256_add_ps(s[1][h], s[3][h]));
			double sum = (double)reduce16_halves(f[0], f[1]);
			for (int64_t k = np; k < n; k++)
				sum += (double)(q42_half_at(a + 2 * k) * q42_half_at(b + 2 * k));
			y[(uint64_t)t * y_stride + (uint64_t)r] = (float)sum;
		}
	}
}

/* The same products as attention's dots: one token, out[r] per row. */
A2 void q42_compat_dot_f16_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
				     const void *x)
{
	q42_compat_rows_f16_avx2(n, n_rows, w, w_stride, 1, x, 0, out, 0);
}

/* ---- activations ------------------------------------------------------- */

/* One block as quant_block_x86 in q42_compat.c: the quants into qs, d
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
	ATTR void q42_compat_quantize_q8_0_##SUFFIX(const float *src, void *dst, int64_t n)      \
	{                                                                                        \
		uint8_t *b = dst;                                                                \
		for (int64_t i = 0; i < n / Q42_QK; i++, src += Q42_QK, b += Q8_0_BYTES) {       \
			float d;                                                                 \
			int32_t sum;                                                             \
			if (BLOCK(src, b + Q8_0_QS, &d, &sum))                                   \
				q42_st16(b, q42_f32_to_f16(d));                                  \
			else                                                                     \
				q42_compat_quantize_q8_0(src, b, Q42_QK);                        \
		}                                                                                \
	}                                                                                        \
	ATTR void q42_compat_quantize_q8_1_##SUFFIX(const float *src, void *dst, int64_t n)      \
	{                                                                                        \
		uint8_t *b = dst;                                                                \
		for (int64_t i = 0; i < n / Q42_QK; i++, src += Q42_QK, b += Q8_1_BYTES) {       \
			float d;                                                                 \
			int32_t sum;                                                             \
			if (BLOCK(src, b + Q8_1_QS, &d, &sum)) {                                 \
				q42_st16(b, q42_f32_to_f16(d));                                  \
				q42_st16(b + Q8_1_S, q42_f32_to_f16(d * (float)sum));            \
			} else {                                                                 \
				q42_compat_quantize_q8_1(src, b, Q42_QK);                        \
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

A2 void q42_compat_quantize_f16_avx2(const float *src, void *dst, int64_t n)
{
	uint8_t *p = dst;
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 v = _mm256_loadu_ps(src + i);
		if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
			q42_compat_quantize_f16(src + i, p + 2 * i, 8);
			continue;
		}
		_mm_storeu_si128((__m128i *)(void *)(p + 2 * i),
				 _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	}
	q42_compat_quantize_f16(src + i, p + 2 * i, n - i);
}

/* F16C rounds to nearest even as the software conversion does, but keeps
 * NaN payloads; chunks holding a NaN take the scalar path. */
A5 void q42_compat_quantize_f16_avx512(const float *src, void *dst, int64_t n)
{
	uint8_t *p = dst;
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		const __m512 v = _mm512_loadu_ps(src + i);
		if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) {
			q42_compat_quantize_f16(src + i, p + 2 * i, 16);
			continue;
		}
		_mm256_storeu_si256((__m256i *)(p + 2 * i),
				    _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	}
	q42_compat_quantize_f16(src + i, p + 2 * i, n - i);
}

/* ---- f32 and f16 products (attention) ---------------------------------- */

static __mmask16 tail_mask(int64_t left)
{
	const unsigned m = left >= 16 ? 0xFFFFu : (1u << left) - 1u;
	return (__mmask16)m;
}

/* Sixteen elements of an f32 (h false) or f16 (h true) row from element
 * k; the masked form zeroes the lanes m leaves out. */
A5_INLINE __m512 ld_row16(const void *p, int64_t k, bool h)
{
	return h ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)((const uint8_t *)p + 2 * k)))
		 : _mm512_loadu_ps((const float *)p + k);
}

A5_INLINE __m512 ld_row16_mask(const void *p, int64_t k, bool h, __mmask16 m)
{
	return h ? _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint8_t *)p + 2 * k))
		 : _mm512_maskz_loadu_ps(m, (const float *)p + k);
}

/* Element k in accumulator (k % 64) / 16, lane k % 16 (ACC = 4:
 * ggml_vec_dot_f32), or lane k % 16 of one accumulator (ACC = 1:
 * tinyBLAS); a partial last step adds its elements to their lanes. R rows
 * against one x, the accumulators in registers (the step index is static
 * in the unrolled loops), each row's sums in exactly the one-row order.
 * The rows are stepped (q42_compat_vlayout); x is contiguous. */
A5_INLINE void dots_fold(int R, int ACC, bool h, int64_t n, __m512 *f, const void *const *a,
			 const q42_compat_vlayout *lay, const void *b)
{
	__m512 s[4][4];
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int j = 0; j < 4; j++)
			s[i][j] = _mm512_setzero_ps();
	int64_t k = 0;
	uint64_t o = 0, c = 0; /* byte offsets of the rows' step k / 64 and of its chunk */
	uint32_t si = 0;       /* the step within its chunk */
	for (; k + 64 <= n; k += 64) {
		UNROLL
		for (int j = 0; j < 4; j++) {
			const __m512 x = ld_row16(b, k + 16 * j, h);
			UNROLL
			for (int i = 0; i < R; i++)
				s[i][j % ACC] = _mm512_fmadd_ps(ld_row16((const uint8_t *)a[i] + o, 16 * j, h), x,
								s[i][j % ACC]);
		}
		if (++si == lay->per) {
			si = 0;
			c += lay->chunk;
			o = c;
		} else {
			o += lay->step;
		}
	}
	UNROLL
	for (int j = 0; j < 4; j++)
		if (k + 16 * j < n) {
			const __mmask16 m = tail_mask(n - k - 16 * j);
			const __m512 x = ld_row16_mask(b, k + 16 * j, h, m);
			UNROLL
			for (int i = 0; i < R; i++)
				s[i][j % ACC] = _mm512_mask3_fmadd_ps(
					ld_row16_mask((const uint8_t *)a[i] + o, 16 * j, h, m), x, s[i][j % ACC], m);
		}
	UNROLL
	for (int i = 0; i < R; i++)
		f[i] = ACC == 1 ? s[i][0]
				: _mm512_add_ps(_mm512_add_ps(s[i][0], s[i][2]), _mm512_add_ps(s[i][1], s[i][3]));
}

A5_INLINE void dots(int R, int ACC, bool h, int64_t n, float *out, const void *const *a,
		    const q42_compat_vlayout *lay, const void *b)
{
	__m512 f[4];
	dots_fold(R, ACC, h, n, f, a, lay, b);
	UNROLL
	for (int i = 0; i < R; i++)
		out[i] = reduce16(f[i]);
}

/* reduce16 of sixteen vectors at once, lane r of the result row r's sum:
 * each level pairs the lanes reduce16 pairs (i with i + 8, then + 4, + 2,
 * + 1), two or four rows per instruction; the rows come out transposed as
 * a 4 x 4 grid and one permute puts them in order. */
A5_INLINE __m512 reduce16x16(const __m512 f[16])
{
	__m512 l1[8], l2[4];
	UNROLL
	for (int k = 0; k < 8; k++)
		l1[k] = _mm512_add_ps(_mm512_shuffle_f32x4(f[2 * k], f[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
				      _mm512_shuffle_f32x4(f[2 * k], f[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
	UNROLL
	for (int k = 0; k < 4; k++)
		l2[k] = _mm512_add_ps(_mm512_shuffle_f32x4(l1[2 * k], l1[2 * k + 1], _MM_SHUFFLE(2, 0, 2, 0)),
				      _mm512_shuffle_f32x4(l1[2 * k], l1[2 * k + 1], _MM_SHUFFLE(3, 1, 3, 1)));
	__m512 l3[2];
	UNROLL
	for (int k = 0; k < 2; k++) {
		const __m512d p = _mm512_castps_pd(l2[2 * k]), q = _mm512_castps_pd(l2[2 * k + 1]);
		l3[k] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(p, q)),
				      _mm512_castpd_ps(_mm512_unpackhi_pd(p, q)));
	}
	const __m512 t = _mm512_add_ps(_mm512_shuffle_ps(l3[0], l3[1], _MM_SHUFFLE(2, 0, 2, 0)),
				       _mm512_shuffle_ps(l3[0], l3[1], _MM_SHUFFLE(3, 1, 3, 1)));
	return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15),
				     t);
}

/* The f32 (H 0) or f16 (H 1) attention products: one row, or n_rows
 * rows sixteen at a time (their sums reduced together), then four, then
 * one; the rows of a contiguous matrix (one 64-element step per chunk),
 * or stepped rows. */
/* The one-row form and the contiguous rows of a vrows form; ATTR and
 * FOLD (dots or dots_avx2) say which instruction set. */
#define DOTS_ONE_ROWS(ATTR, FOLD, NAME, ROWS_NAME, VROWS_NAME, ACC, H)                            \
	ATTR void NAME(int64_t n, float *out, const void *w, const void *x)                       \
	{                                                                                         \
		const q42_compat_vlayout lay = {0, 0, (H) ? 128u : 256u, 1};                      \
		FOLD(1, ACC, H, n, out, &w, &lay, x);                                             \
	}                                                                                         \
	ATTR void ROWS_NAME(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride, \
			    const void *x)                                                        \
	{                                                                                         \
		const q42_compat_vlayout lay = {w_stride, 0, (H) ? 128u : 256u, 1};               \
		VROWS_NAME(n, n_rows, out, w, &lay, x);                                           \
	}

/* A vrows form's rows from r on: four at a time while FOUR, then one. */
#define DOTS_REST(FOLD, FOUR, ACC, H)                                                             \
	for (; (FOUR) && r + 4 <= n_rows; r += 4) {                                               \
		const void *a[4];                                                                 \
		for (int i = 0; i < 4; i++)                                                       \
			a[i] = w8 + (uint64_t)(r + i) * lay->stride;                              \
		FOLD(4, ACC, H, n, out + r, a, lay, x);                                           \
	}                                                                                         \
	for (; r < n_rows; r++) {                                                                 \
		const void *a = w8 + (uint64_t)r * lay->stride;                                   \
		FOLD(1, ACC, H, n, out + r, &a, lay, x);                                          \
	}

#define DOTS(NAME, ROWS_NAME, VROWS_NAME, ACC, H)                                                 \
	A5 void VROWS_NAME(int64_t n, int64_t n_rows, float *out, const void *w,                  \
			   const q42_compat_vlayout *lay, const void *x)                          \
	{                                                                                         \
		const uint8_t *w8 = w;                                                            \
		int64_t r = 0;                                                                    \
		for (; r + 16 <= n_rows; r += 16) {                                               \
			__m512 f[16];                                                             \
			for (int q = 0; q < 4; q++) {                                             \
				const void *a[4];                                                 \
				for (int i = 0; i < 4; i++)                                       \
					a[i] = w8 + (uint64_t)(r + 4 * q + i) * lay->stride;      \
				dots_fold(4, ACC, H, n, f + 4 * q, a, lay, x);                    \
			}                                                                         \
			_mm512_storeu_ps(out + r, reduce16x16(f));                                \
		}                                                                                 \
		DOTS_REST(dots, true, ACC, H)                                                     \
	}                                                                                         \
	DOTS_ONE_ROWS(A5, dots, NAME, ROWS_NAME, VROWS_NAME, ACC, H)

DOTS(q42_compat_dot_f32_avx512, q42_compat_dot_f32_rows_avx512, q42_compat_dot_f32_vrows_avx512, 4, false)
DOTS(q42_compat_dot_f32_lanes_avx512, q42_compat_dot_f32_lanes_rows_avx512, q42_compat_dot_f32_lanes_vrows_avx512, 1,
     false)
DOTS(q42_compat_dot_f16_pad_avx512, q42_compat_dot_f16_pad_rows_avx512, q42_compat_dot_f16_pad_vrows_avx512, 4, true)
DOTS(q42_compat_dot_f16_lanes_avx512, q42_compat_dot_f16_lanes_rows_avx512, q42_compat_dot_f16_lanes_vrows_avx512, 1,
     true)

/* The same attention products on AVX2: each 16-lane accumulator of the
 * AVX-512 forms is two 8-lane halves (lanes 0-7, 8-15), added lane by
 * lane as before and reduced by reduce16_halves, so the bits are the
 * scalar definition's. A partial last step loads its missing elements as
 * zeros on both sides: an accumulator that starts at +0 is never -0, so
 * adding 0 * 0 leaves it as it is (the AVX-512 forms mask those lanes).
 * Sixteen registers hold one row's four accumulators (ACC = 4) or four
 * rows' one (ACC = 1). */
A2_INLINE __m256 ld_row8(const void *p, int64_t k, bool h)
{
	return h ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)((const uint8_t *)p + 2 * k)))
		 : _mm256_loadu_ps((const float *)p + k);
}

/* The first left elements (1..7) from element k, zeros after them. */
A2_INLINE __m256 ld_row8_part(const void *p, int64_t k, bool h, int64_t left)
{
	if (h) {
		uint16_t t[8] = {0};
		memcpy(t, (const uint8_t *)p + 2 * k, 2 * (size_t)left);
		return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)t));
	}
	const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	return _mm256_maskload_ps((const float *)p + k, m);
}

A2_INLINE void dots_fold_avx2(int R, int ACC, bool h, int64_t n, __m256 (*f)[2], const void *const *a,
			      const q42_compat_vlayout *lay, const void *b)
{
	__m256 s[4][4][2];
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int j = 0; j < ACC; j++)
			s[i][j][0] = s[i][j][1] = _mm256_setzero_ps();
	int64_t k = 0;
	uint64_t o = 0, c = 0; /* as dots_fold */
	uint32_t si = 0;
	for (; k + 64 <= n; k += 64) {
		UNROLL
		for (int j = 0; j < 4; j++)
			UNROLL
			for (int e = 0; e < 2; e++) {
				const __m256 x = ld_row8(b, k + 16 * j + 8 * e, h);
				UNROLL
				for (int i = 0; i < R; i++)
					s[i][j % ACC][e] = _mm256_fmadd_ps(
						ld_row8((const uint8_t *)a[i] + o, 16 * j + 8 * e, h), x, s[i][j % ACC][e]);
			}
		if (++si == lay->per) {
			si = 0;
			c += lay->chunk;
			o = c;
		} else {
			o += lay->step;
		}
	}
	for (int j = 0; j < 4; j++)
		for (int e = 0; e < 2; e++) {
			const int64_t at = 16 * j + 8 * e, left = n - k - at;
			if (left <= 0)
				continue;
			const bool full = left >= 8;
			const __m256 x = full ? ld_row8(b, k + at, h) : ld_row8_part(b, k + at, h, left);
			UNROLL
			for (int i = 0; i < R; i++) {
				const void *wi = (const uint8_t *)a[i] + o;
				s[i][j % ACC][e] = _mm256_fmadd_ps(full ? ld_row8(wi, at, h) : ld_row8_part(wi, at, h, left),
								   x, s[i][j % ACC][e]);
			}
		}
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int e = 0; e < 2; e++)
			f[i][e] = ACC == 1 ? s[i][0][e]
					   : _mm256_add_ps(_mm256_add_ps(s[i][0][e], s[i][2][e]),
							   _mm256_add_ps(s[i][1][e], s[i][3][e]));
}

A2_INLINE void dots_avx2(int R, int ACC, bool h, int64_t n, float *out, const void *const *a,
			 const q42_compat_vlayout *lay, const void *b)
{
	__m256 f[4][2];
	dots_fold_avx2(R, ACC, h, n, f, a, lay, b);
	UNROLL
	for (int i = 0; i < R; i++)
		out[i] = reduce16_halves(f[i][0], f[i][1]);
}

#define DOTS_AVX2(NAME, ROWS_NAME, VROWS_NAME, ACC, H)                                            \
	A2 void VROWS_NAME(int64_t n, int64_t n_rows, float *out, const void *w,                  \
			   const q42_compat_vlayout *lay, const void *x)                          \
	{                                                                                         \
		const uint8_t *w8 = w;                                                            \
		int64_t r = 0;                                                                    \
		DOTS_REST(dots_avx2, (ACC) == 1, ACC, H)                                          \
	}                                                                                         \
	DOTS_ONE_ROWS(A2, dots_avx2, NAME, ROWS_NAME, VROWS_NAME, ACC, H)

DOTS_AVX2(q42_compat_dot_f32_avx2, q42_compat_dot_f32_rows_avx2, q42_compat_dot_f32_vrows_avx2, 4, false)
DOTS_AVX2(q42_compat_dot_f32_lanes_avx2, q42_compat_dot_f32_lanes_rows_avx2, q42_compat_dot_f32_lanes_vrows_avx2, 1,
	  false)
DOTS_AVX2(q42_compat_dot_f16_pad_avx2, q42_compat_dot_f16_pad_rows_avx2, q42_compat_dot_f16_pad_vrows_avx2, 4, true)
DOTS_AVX2(q42_compat_dot_f16_lanes_avx2, q42_compat_dot_f16_lanes_rows_avx2, q42_compat_dot_f16_lanes_vrows_avx2, 1,
	  true)

/* ---- F32 weights -------------------------------------------------------- */

/* q42_compat_dot_f32_vd for n_rows rows and one token: the whole 64-steps
 * by the attention kernel, then each row's leftovers, product then sum,
 * each rounded (intrinsics, which the compiler never contracts); several
 * tokens take the tinyBLAS lanes. Built for AVX-512 and for AVX2 over
 * their attention products. */
#define F32_ROWS(SUFFIX, ATTR)                                                                    \
	ATTR static void f32_vd_rows_##SUFFIX(int64_t n, int64_t n_rows, const uint8_t *w,        \
					      uint64_t w_stride, const float *x, float *y)        \
	{                                                                                         \
		const int64_t np = n & ~(int64_t)63;                                              \
		q42_compat_dot_f32_rows_##SUFFIX(np, n_rows, y, w, w_stride, x);                  \
		for (int64_t r = 0; np < n && r < n_rows; r++) {                                  \
			const float *a = (const float *)(const void *)(w + (uint64_t)r * w_stride); \
			float s = y[r];                                                           \
			for (int64_t i = np; i < n; i++)                                          \
				s = _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(s),                       \
							     _mm_mul_ss(_mm_set_ss(a[i]), _mm_set_ss(x[i])))); \
			y[r] = s;                                                                 \
		}                                                                                 \
	}                                                                                         \
	ATTR void q42_compat_rows_f32_vd_##SUFFIX(Q42_COMPAT_ROWS_ARGS)                           \
	{                                                                                         \
		for (int64_t t = 0; t < n_tok; t++)                                               \
			f32_vd_rows_##SUFFIX(n, n_rows, w, w_stride,                              \
					     (const float *)(const void *)((const uint8_t *)x +   \
									   (uint64_t)t * x_stride), \
					     y + (uint64_t)t * y_stride);                         \
	}                                                                                         \
	ATTR void q42_compat_rows_f32_##SUFFIX(Q42_COMPAT_ROWS_ARGS)                              \
	{                                                                                         \
		if (n_tok == 1) {                                                                 \
			f32_vd_rows_##SUFFIX(n, n_rows, w, w_stride, x, y);                       \
			return;                                                                   \
		}                                                                                 \
		for (int64_t t = 0; t < n_tok; t++)                                               \
			q42_compat_dot_f32_lanes_rows_##SUFFIX(n, n_rows, y + (uint64_t)t * y_stride, w, \
							       w_stride,                          \
							       (const uint8_t *)x + (uint64_t)t * x_stride); \
	}

F32_ROWS(avx512, A5)
F32_ROWS(avx2, A2)

/* ---- BF16 weights (AVX-512 BF16) --------------------------------------- */

/* VDPBF16PS is the rounding q42_compat_dot_bf16 and _tb define, so these
 * kernels run it as llama.cpp's AVX-512 BF16 build does; CPUs without it
 * take the AVX2 kernels below (q42_compat.c asks q42_cpu_has_avx512bf16). */
#define A5B                                                                                      \
	__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni," \
			      "avx512bf16")))
#define A5B_INLINE                                                                               \
	static inline __attribute__((always_inline,                                              \
				     target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,"     \
					    "avx512vbmi,gfni,avx512bf16")))

A5B_INLINE __m512bh ld_bf16x32(const void *p, int64_t k)
{
	return (__m512bh)_mm512_loadu_ps((const float *)(const void *)((const uint8_t *)p + 2 * k));
}

/* The sum past the whole steps, in double as ggml's tail loop adds it. */
static double bf16_tail(int64_t n, const uint8_t *w, const uint8_t *x, double sum)
{
	for (int64_t k = n - n % 64; k < n; k++)
		sum += (double)(q42_bf16_to_f32(q42_ld16(w + 2 * k)) * q42_bf16_to_f32(q42_ld16(x + 2 * k)));
	return sum;
}

/* y[r] for n_rows rows and one token: GROUP rows in flight, the next
 * group's bytes at the same offset prefetched (decode streams each row
 * once, as f16_f32_one); the two accumulators of all GROUP rows reduced
 * together, then added in double. */
A5B static void bf16_vd_rows(int64_t n, int64_t n_rows, const uint8_t *w, uint64_t w_stride,
			     const uint8_t *x, float *y)
{
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP], *nx[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		__m512 c[2 * GROUP];
		UNROLL
		for (int i = 0; i < 2 * GROUP; i++)
			c[i] = _mm512_setzero_ps();
		for (int64_t k = 0; k + 64 <= n; k += 64) {
			prefetch_rows(nx, 2 * k, 128);
			const __m512bh x0 = ld_bf16x32(x, k), x1 = ld_bf16x32(x, k + 32);
			UNROLL
			for (int i = 0; i < GROUP; i++) {
				c[i] = _mm512_dpbf16_ps(c[i], ld_bf16x32(wr[i], k), x0);
				c[GROUP + i] = _mm512_dpbf16_ps(c[GROUP + i], ld_bf16x32(wr[i], k + 32), x1);
			}
		}
		const __m512 s = reduce16x16(c);
		const __m512d d = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(s)),
						_mm512_cvtps_pd(_mm256_castpd_ps(
							_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1))));
		float out[GROUP];
		if (n % 64 == 0) {
			_mm256_storeu_ps(out, _mm512_cvtpd_ps(d));
		} else {
			double dd[GROUP];
			_mm512_storeu_pd(dd, d);
			for (int i = 0; i < GROUP; i++)
				out[i] = (float)bf16_tail(n, wr[i], x, dd[i]);
		}
		store_group(y, r0, n_rows, out, GROUP);
	}
}

/* tinyBLAS's one accumulator per output for R rows x T tokens (n a
 * multiple of 32), the R * T sums reduced as _mm512_reduce_add_ps. */
A5B_INLINE void bf16_tb_tile(int R, int T, int64_t n, const uint8_t *w, uint64_t w_stride,
			     const uint8_t *x, uint64_t x_stride, float *y, uint64_t y_stride)
{
	__m512 c[16];
	UNROLL
	for (int i = 0; i < R * T; i++)
		c[i] = _mm512_setzero_ps();
	for (int64_t k = 0; k < n; k += 32) {
		__m512bh xv[4];
		UNROLL
		for (int t = 0; t < T; t++)
			xv[t] = ld_bf16x32(x + (uint64_t)t * x_stride, k);
		UNROLL
		for (int i = 0; i < R; i++) {
			const __m512bh wv = ld_bf16x32(w + (uint64_t)i * w_stride, k);
			UNROLL
			for (int t = 0; t < T; t++)
				c[t * R + i] = _mm512_dpbf16_ps(c[t * R + i], wv, xv[t]);
		}
	}
	if (R == 4 && T == 4) {
		float f[16];
		_mm512_storeu_ps(f, reduce16x16(c));
		for (int t = 0; t < 4; t++)
			for (int i = 0; i < 4; i++)
				y[(uint64_t)t * y_stride + (uint64_t)i] = f[t * 4 + i];
		return;
	}
	UNROLL
	for (int t = 0; t < T; t++)
		UNROLL
		for (int i = 0; i < R; i++)
			y[(uint64_t)t * y_stride + (uint64_t)i] = reduce16(c[t * R + i]);
}

/* Tiles of 4 rows x 4 tokens; a rest of rows or tokens goes one at a
 * time. */
A5B static void bf16_tb_rows(Q42_COMPAT_ROWS_ARGS)
{
	for (int64_t t = 0; t < n_tok; t += n_tok - t >= 4 ? 4 : 1)
		for (int64_t r = 0; r < n_rows; r += n_rows - r >= 4 ? 4 : 1) {
			const bool r4 = n_rows - r >= 4, t4 = n_tok - t >= 4;
			const uint8_t *wr = (const uint8_t *)w + (uint64_t)r * w_stride;
			const uint8_t *xt = (const uint8_t *)x + (uint64_t)t * x_stride;
			float *yt = y + (uint64_t)t * y_stride + (uint64_t)r;
			if (r4 && t4)
				bf16_tb_tile(4, 4, n, wr, w_stride, xt, x_stride, yt, y_stride);
			else if (r4)
				bf16_tb_tile(4, 1, n, wr, w_stride, xt, x_stride, yt, y_stride);
			else if (t4)
				bf16_tb_tile(1, 4, n, wr, w_stride, xt, x_stride, yt, y_stride);
			else
				bf16_tb_tile(1, 1, n, wr, w_stride, xt, x_stride, yt, y_stride);
		}
}

/* ---- BF16 without VDPBF16PS (AVX2) ------------------------------------- */

/* The same lanes with FMA: a lane's dword holds a pair of bf16, the odd
 * element in its high half and the even one in its low half, each an f32
 * once masked or shifted into place; the odd product is added first. With
 * the MXCSR's DAZ and FTZ bits set around the loop, each add reads and
 * flushes subnormals as VDPBF16PS does (the bits are restored before the
 * reductions, which run as ggml's do). */
#define MXCSR_DAZ_FTZ 0x8040u

A2_INLINE __m256 bf16_odd(__m256i v)
{
	return _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xFFFF0000u)));
}

A2_INLINE __m256 bf16_even(__m256i v)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

/* sixteen lanes as two halves */
struct lanes16 {
	__m256 lo, hi;
};

/* one VDPBF16PS: 32 bf16 of w and of x into c */
A2_INLINE struct lanes16 dp_bf16x32(struct lanes16 c, const uint8_t *w, const uint8_t *x)
{
	const __m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)w);
	const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)x);
	const __m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(w + 32));
	const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(x + 32));
	c.lo = _mm256_fmadd_ps(bf16_even(a0), bf16_even(b0), _mm256_fmadd_ps(bf16_odd(a0), bf16_odd(b0), c.lo));
	c.hi = _mm256_fmadd_ps(bf16_even(a1), bf16_even(b1), _mm256_fmadd_ps(bf16_odd(a1), bf16_odd(b1), c.hi));
	return c;
}

A2_INLINE float reduce_lanes16(struct lanes16 c)
{
	return reduce16_halves(c.lo, c.hi);
}

/* bf16_vd_rows in two rows at a time (an odd last row paired with
 * itself) */
A2 static void bf16_vd_rows_avx2(int64_t n, int64_t n_rows, const uint8_t *w, uint64_t w_stride,
				 const uint8_t *x, float *y)
{
	const unsigned csr = _mm_getcsr();
	for (int64_t r = 0; r < n_rows; r += 2) {
		const uint8_t *row[2] = {w + (uint64_t)r * w_stride,
					 w + (uint64_t)(r + 1 < n_rows ? r + 1 : r) * w_stride};
		struct lanes16 c[2][2];
		UNROLL
		for (int i = 0; i < 2; i++)
			c[i][0].lo = c[i][0].hi = c[i][1].lo = c[i][1].hi = _mm256_setzero_ps();
		_mm_setcsr(csr | MXCSR_DAZ_FTZ);
		for (int64_t k = 0; k + 64 <= n; k += 64)
			UNROLL
			for (int i = 0; i < 2; i++) {
				c[i][0] = dp_bf16x32(c[i][0], row[i] + 2 * k, x + 2 * k);
				c[i][1] = dp_bf16x32(c[i][1], row[i] + 2 * k + 64, x + 2 * k + 64);
			}
		_mm_setcsr(csr);
		for (int i = 0; i < 2 && r + i < n_rows; i++)
			y[r + i] = (float)bf16_tail(n, row[i], x,
						    (double)reduce_lanes16(c[i][0]) + (double)reduce_lanes16(c[i][1]));
	}
}

/* bf16_tb_rows in tiles of 2 rows x 2 tokens (odd ends paired with
 * themselves) */
A2 static void bf16_tb_rows_avx2(Q42_COMPAT_ROWS_ARGS)
{
	const unsigned csr = _mm_getcsr();
	for (int64_t t = 0; t < n_tok; t += 2)
		for (int64_t r = 0; r < n_rows; r += 2) {
			const uint8_t *row[2], *tok[2];
			for (int i = 0; i < 2; i++) {
				row[i] = (const uint8_t *)w + (uint64_t)(r + i < n_rows ? r + i : r) * w_stride;
				tok[i] = (const uint8_t *)x + (uint64_t)(t + i < n_tok ? t + i : t) * x_stride;
			}
			struct lanes16 c[2][2];
			UNROLL
			for (int i = 0; i < 2; i++)
				c[i][0].lo = c[i][0].hi = c[i][1].lo = c[i][1].hi = _mm256_setzero_ps();
			_mm_setcsr(csr | MXCSR_DAZ_FTZ);
			for (int64_t k = 0; k < n; k += 32)
				UNROLL
				for (int i = 0; i < 2; i++)
					UNROLL
					for (int j = 0; j < 2; j++)
						c[i][j] = dp_bf16x32(c[i][j], row[i] + 2 * k, tok[j] + 2 * k);
			_mm_setcsr(csr);
			for (int i = 0; i < 2 && r + i < n_rows; i++)
				for (int j = 0; j < 2 && t + j < n_tok; j++)
					y[(uint64_t)(t + j) * y_stride + (uint64_t)(r + i)] = reduce_lanes16(c[i][j]);
		}
}

A2 void q42_compat_rows_bf16_avx2(Q42_COMPAT_ROWS_ARGS)
{
	if (n_tok == 1)
		bf16_vd_rows_avx2(n, n_rows, w, w_stride, x, y);
	else
		bf16_tb_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
}

A2 void q42_compat_rows_bf16_vd_avx2(Q42_COMPAT_ROWS_ARGS)
{
	for (int64_t t = 0; t < n_tok; t++)
		bf16_vd_rows_avx2(n, n_rows, w, w_stride, (const uint8_t *)x + (uint64_t)t * x_stride,
				  y + (uint64_t)t * y_stride);
}

/* q42_compat.c's rows_bf16_vd: vec_dot for every token */
A5B void q42_compat_rows_bf16_vd_avx512(Q42_COMPAT_ROWS_ARGS)
{
	for (int64_t t = 0; t < n_tok; t++)
		bf16_vd_rows(n, n_rows, w, w_stride, (const uint8_t *)x + (uint64_t)t * x_stride,
			     y + (uint64_t)t * y_stride);
}

/* q42_compat.c's rows_bf16: vec_dot for a lone token, tinyBLAS for more */
A5B void q42_compat_rows_bf16_avx512(Q42_COMPAT_ROWS_ARGS)
{
	if (n_tok == 1)
		bf16_vd_rows(n, n_rows, w, w_stride, x, y);
	else
		bf16_tb_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
}

/* ---- row ops ----------------------------------------------------------- */

/* -v, exactly (a sign flip; _mm512_xor_ps would need AVX-512 DQ) */
A5_INLINE __m512 neg16(__m512 v)
{
	return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v),
						    _mm512_set1_epi32(INT32_MIN)));
}

/* ggml_v_expf, sixteen lanes: the scalar v_expf step by step; scalef is
 * ldexpf (both round j * 2^n once). */
A5_INLINE __m512 v_expf16(__m512 x)
{
	const __m512 r = _mm512_set1_ps(0x1.8p23f);
	const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), r);
	const __m512 n = _mm512_sub_ps(z, r);
	const __m512 nn = neg16(n);
	const __m512 b = _mm512_fmadd_ps(nn, _mm512_set1_ps(0x1.7f7d1cp-20f),
					 _mm512_fmadd_ps(nn, _mm512_set1_ps(0x1.62e4p-1f), x));
	const __m512 u = _mm512_mul_ps(b, b);
	const __m512 j = _mm512_fmadd_ps(
		_mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b,
						_mm512_set1_ps(0x1.573e2ep-5f)),
				u,
				_mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b,
						_mm512_set1_ps(0x1.fffdb6p-2f))),
		u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
	const __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
	const __mmask16 neg = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ);
	const __m512 e = _mm512_scalef_ps(j, n);
	return _mm512_mask_blend_ps(big, e, _mm512_mask_blend_ps(neg, _mm512_set1_ps(INFINITY),
								 _mm512_setzero_ps()));
}

A5_INLINE bool has_nan(int64_t n, const float *x)
{
	for (int64_t i = 0; i < n; i += 16) {
		const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
		if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0)
			return true;
	}
	return false;
}

A5 void q42_compat_softmax_avx512(int64_t n, float *y, const float *x)
{
	/* the scalar max lets a NaN through in an order-dependent way */
	if (has_nan(n, x)) {
		q42_compat_softmax(n, y, x);
		return;
	}
	__m512 mv = _mm512_set1_ps(-INFINITY);
	for (int64_t i = 0; i < n; i += 16)
		mv = _mm512_max_ps(mv, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY),
							    tail_mask(n - i), x + i));
	const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(mv));
	double sum = 0.0;
	for (int64_t i = 0; i < n; i += 16) {
		const __mmask16 m = tail_mask(n - i);
		const __m512 v = _mm512_maskz_mov_ps(
			m, v_expf16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), max)));
		_mm512_mask_storeu_ps(y + i, m, v);
		sum += (double)reduce16(v);
	}
	const __m512 inv = _mm512_set1_ps((float)(1.0 / sum));
	for (int64_t i = 0; i < n; i += 16) {
		const __mmask16 m = tail_mask(n - i);
		_mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + i), inv));
	}
}

A5 void q42_compat_swiglu_avx512(int64_t n, float *y, const float *x, const float *g)
{
	const int64_t nv = n - n % 16;
	const __m512 one = _mm512_set1_ps(1.0f);
	for (int64_t i = 0; i < nv; i += 16) {
		const __m512 xv = _mm512_loadu_ps(x + i);
		const __m512 e = v_expf16(_mm512_sub_ps(_mm512_setzero_ps(), xv));
		_mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_div_ps(xv, _mm512_add_ps(one, e)),
						      _mm512_loadu_ps(g + i)));
	}
	q42_compat_swiglu(n - nv, y + nv, x + nv, g + nv);
}

/* q42_op_rmsnorm_rows with the scaling sixteen lanes at a time: the sums
 * are the reference's serial chains (q42_op_rmsnorm_sums); x * scale and
 * then * w are two roundings per element in any width. The scalar
 * scaling loop took about as long as the chain (smol360's 960 values: 1.2
 * us a norm in all, two per layer). */
A5 void q42_compat_rmsnorm_rows_avx512(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
				       float eps)
{
	for (int64_t r = 0; r < n_rows; r += 4) {
		const int64_t k = n_rows - r < 4 ? n_rows - r : 4;
		double sum[4];
		q42_op_rmsnorm_sums(n, k, x + (uint64_t)r * (uint64_t)n, sum);
		for (int64_t j = 0; j < k; j++) {
			const __m512 sc = _mm512_set1_ps(q42_op_rmsnorm_scale(n, sum[j], eps));
			const float *xr = x + (uint64_t)(r + j) * (uint64_t)n;
			float *yr = y + (uint64_t)(r + j) * (uint64_t)n;
			for (int64_t i = 0; i < n; i += 16) {
				const __mmask16 m = tail_mask(n - i);
				__m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xr + i), sc);
				if (w != NULL)
					v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, w + i));
				_mm512_mask_storeu_ps(yr + i, m, v);
			}
		}
	}
}

/* The engine adds bias and residual rows a tile (sixteen values per token)
 * at a time: one masked step each. */
A5 void q42_compat_add_avx512(int64_t n, float *y, const float *a, const float *b)
{
	for (int64_t i = 0; i < n; i += 16) {
		const __mmask16 m = tail_mask(n - i);
		_mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + i),
							      _mm512_maskz_loadu_ps(m, b + i)));
	}
}

/* Sixteen pairs per step: cos/sin (and, in the normal mode, x) are
 * de-interleaved into even and odd lanes, rotated, and put back. */
A5 void q42_compat_rope_avx512(int64_t n_rot, float *x, const float *cache, bool neox)
{
	const int64_t np = n_rot / 2;
	int32_t ev[16], od[16], il[16], ih[16];
	for (int i = 0; i < 16; i++) {
		ev[i] = 2 * i;
		od[i] = 2 * i + 1;
		il[i] = i % 2 ? 16 + i / 2 : i / 2;
		ih[i] = i % 2 ? 24 + i / 2 : 8 + i / 2;
	}
	const __m512i iev = _mm512_loadu_si512(ev), iod = _mm512_loadu_si512(od);
	const __m512i ilo = _mm512_loadu_si512(il), ihi = _mm512_loadu_si512(ih);
	for (int64_t p = 0; p < np; p += 16) {
		const int64_t left = np - p;
		const __mmask16 m = tail_mask(left);
		const __mmask16 m0 = tail_mask(2 * left), m1 = tail_mask(2 * left - 16 > 0 ? 2 * left - 16 : 0);
		const __m512 c0 = _mm512_maskz_loadu_ps(m0, cache + 2 * p);
		const __m512 c1 = _mm512_maskz_loadu_ps(m1, cache + 2 * p + 16);
		const __m512 c = _mm512_permutex2var_ps(c0, iev, c1);
		const __m512 s = _mm512_permutex2var_ps(c0, iod, c1);
		__m512 x0, x1;
		if (neox) {
			x0 = _mm512_maskz_loadu_ps(m, x + p);
			x1 = _mm512_maskz_loadu_ps(m, x + np + p);
		} else {
			const __m512 l0 = _mm512_maskz_loadu_ps(m0, x + 2 * p);
			const __m512 l1 = _mm512_maskz_loadu_ps(m1, x + 2 * p + 16);
			x0 = _mm512_permutex2var_ps(l0, iev, l1);
			x1 = _mm512_permutex2var_ps(l0, iod, l1);
		}
		const __m512 ra = _mm512_fmadd_ps(x0, c, neg16(_mm512_mul_ps(x1, s)));
		const __m512 rb = _mm512_fmadd_ps(x0, s, _mm512_mul_ps(x1, c));
		if (neox) {
			_mm512_mask_storeu_ps(x + p, m, ra);
			_mm512_mask_storeu_ps(x + np + p, m, rb);
		} else {
			_mm512_mask_storeu_ps(x + 2 * p, m0, _mm512_permutex2var_ps(ra, ilo, rb));
			_mm512_mask_storeu_ps(x + 2 * p + 16, m1, _mm512_permutex2var_ps(ra, ihi, rb));
		}
	}
}

/* ---- float row operations, FMA ------------------------------------------ */

/* q42_compat_float.h compiled with FMA for the AVX2 table (fmaf one
 * instruction, not a libm call), contraction off as in q42_compat.c */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
#define CF(name) q42_compat_##name##_fma
#define CF_ATTR A2
#define CF_STATIC A2_INLINE
#define CF_NO_DOTS /* the AVX2 dots above */
#include "kernels/q42_compat_float.h"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#endif
