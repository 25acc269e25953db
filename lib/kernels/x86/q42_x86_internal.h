/* q42_x86_internal.h -- what the x86 kernel files under lib/kernels/x86/
 * share: the headers they all include, their target attribute short
 * spellings (A2 / A5 / their always-inline forms, from q42_x86_target.h),
 * and the row-group helpers of the quantized products (static inline, so
 * that each file inlines its own copy). Not installed. Every function
 * carries its own target attribute (no -m build flags); nothing here may
 * run before q42_cpu_has_avx2() / q42_cpu_has_avx512() said yes.
 *
 * The kernels are the same bits as the scalar definitions in
 * llamacpp/q42_llamacpp.c, faster. Integer block sums are exact in any order, so they are formed
 * with whatever instructions are quickest (VNNI where there is one). The
 * float steps are kept exactly: the row products compute eight (or four)
 * output rows at once with one row per SIMD lane, so each row still gets
 * one fused multiply-add per block in block order (the serial chain of the
 * scalar kernel, eight chains in flight); float lanes are reduced in the
 * scalar tree order. Blocks holding a NaN or an infinity, where the scalar
 * code's behaviour is not a plain vector operation, go through the scalar
 * code.
 */
#ifndef Q42_X86_INTERNAL_H
#define Q42_X86_INTERNAL_H

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/q42_llamacpp.h"
#include "kernels/x86/q42_x86.h"
#include "kernels/x86/q42_x86_generic.h"
#include "kernels/q42_ops.h"
#include "kernels/x86/q42_x86_target.h"

#if defined(__x86_64__) || defined(__i386__)

#define A2 Q42_TARGET_AVX2
#define A5 Q42_TARGET_AVX512_GFNI
#define A2_INLINE Q42_TARGET_AVX2_INLINE
#define A5_INLINE Q42_TARGET_AVX512_GFNI_INLINE

#define GROUP 8 /* output rows per pass of the quantized row products */
/* Loops over register accumulators must be unrolled for them to stay in
 * registers (-O2 does not; clang reads the GCC spelling too). */
#define UNROLL _Pragma("GCC unroll 16")

/* Row pointers of one group; rows past the end repeat the last row so the
 * lanes stay busy (their results are never stored). */
static inline void group_rows(const void *w, uint64_t stride, int64_t r0, int64_t n_rows, int g,
			      const uint8_t **wr)
{
	for (int r = 0; r < g; r++) {
		const int64_t i = r0 + r < n_rows ? r0 + r : n_rows - 1;
		wr[r] = (const uint8_t *)w + (uint64_t)i * stride;
	}
}

static inline void store_group(float *y, int64_t r0, int64_t n_rows, const float *v, int g)
{
	for (int r = 0; r < g && r0 + r < n_rows; r++)
		y[r0 + r] = v[r];
}

/* Decode streams each weight row once: while a group is multiplied, its
 * successor's bytes at the same offset are fetched (the rows of a group
 * are short, too short for the hardware prefetcher to warm up on each).
 * Into L2, not L1: with T0 the prefetches wait for L1 fill buffers and
 * stall the loop; T1 was the fastest hint, and none at all the slowest
 * (docs/perf/prefetch.md). */
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


/* ---- shared by several files ------------------------------------------ */

/* hsum_float_8 of llama.cpp: the eight lanes of v reduced as its x86 code does */
A2_INLINE float hsum_float8(__m256 v)
{
	__m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
	r = _mm_add_ps(r, _mm_movehl_ps(r, r));
	return _mm_cvtss_f32(_mm_add_ss(r, _mm_movehdup_ps(r)));
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

/* _mm512_reduce_add_ps's tree over lanes lo (0..7) and hi (8..15): i and
 * i+8, then i+4, i+2, i+1 -- spelled out, not left to a library macro. */
A2_INLINE float reduce16_halves(__m256 lo, __m256 hi)
{
	const __m256 t8 = _mm256_add_ps(lo, hi);
	const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
	const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
	return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

/* The haswell build's two reductions of eight lanes: hsum_float_8 (and
 * llamafile's hsum, the AVX2 softmax's chunk sum): halves added, then
 * (0 + 2) + (1 + 3); GGML_F32x8_REDUCE's last step: halves added, then
 * two hadds, (0 + 1) + (2 + 3). */
A2_INLINE float hsum8(__m256 v)
{
	const __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	const __m128 t2 = _mm_add_ps(t, _mm_movehl_ps(t, t));
	return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

A2_INLINE float reduce_hadd8(__m256 v)
{
	const __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	const __m128 t1 = _mm_hadd_ps(t, t);
	return _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
}

/* ggml_v_expf of the haswell build (AVX2 + FMA), lane for lane: 2^n as
 * z's bits, k + j k in range, two scales past |n| > 126, 0 or infinity
 * past 192. */
A2_INLINE __m256 v_expf8_hw(__m256 x)
{
	const __m256 r = _mm256_set1_ps(0x1.8p23f);
	const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
	const __m256 n = _mm256_sub_ps(z, r);
	const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
					  _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
	const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
	const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
	const __m256 absn = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
	const __m256 c = _mm256_cmp_ps(absn, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
	const __m256 u = _mm256_mul_ps(b, b);
	const __m256 j = _mm256_fmadd_ps(
		_mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
				_mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
		u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
	const __m256 in = _mm256_fmadd_ps(k, j, k);
	if (!_mm256_movemask_ps(c))
		return in;
	const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
					   _mm256_set1_epi32((int32_t)0x82000000u));
	const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
	const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
	const __m256 d = _mm256_cmp_ps(absn, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
	const __m256 mid = _mm256_blendv_ps(in, _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1), c);
	return _mm256_blendv_ps(mid, _mm256_mul_ps(s1, s1), d);
}

A5_INLINE float reduce16(__m512 v)
{
	return reduce16_halves(_mm512_castps512_ps256(v),
			       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}


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

/* The first min(left, 16) lanes */
static inline __mmask16 tail_mask(int64_t left)
{
	const unsigned m = left >= 16 ? 0xFFFFu : (1u << left) - 1u;
	return (__mmask16)m;
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

#endif /* x86 */
#endif
