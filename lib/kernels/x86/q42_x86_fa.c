/* q42_x86_fa.c -- llama.cpp's CPU flash attention in AVX-512, bit for bit
 * the scalar definition (llamacpp/q42_llamacpp_fa.c).
 *
 * One-at-a-time form: sixteen positions at a time per head, their scores
 * reduced in one transposing tree, the running max's steps and the expf
 * arguments found in order first, so that the sixteen expf calls do not
 * wait on each other; then the heads' accumulator chains side by side
 * (each chain a rounding through f16 per position: its latency, not the
 * arithmetic, bounds the form), in f32 registers holding f16 values, each
 * V row converted once for all heads.
 *
 * Tiled form: the tile's 64 query rows are the lanes of four vectors, so
 * scores, the running max and sum, the softmax sums' reduction tree and
 * the accumulator are all lane-wise, and no step needs a transpose: each
 * score and each accumulator element is its own fused chain, in the
 * scalar definition's order. Only the max's rescaling calls the library's
 * expf, lane by lane, where a row's max grew.
 *
 * The AVX2 forms below compute the same definition (the AVX-512 build's
 * bits) in eight-lane registers: a sixteen-lane vector of the definition
 * is two of them, its reduction tree reduce16_halves, ggml_v_expf's scalef
 * two exact power-of-two products of which only the last rounds.
 */
#include <math.h>
#include <string.h>
#include "kernels/x86/q42_x86_internal.h"

#if defined(__x86_64__) || defined(__i386__)

enum { T = Q42_FA_TILE, TV = Q42_FA_TILE / 16 };

/* f32 through f16 and back: the rounding of a store to an f16 row */
A5_INLINE __m512 round_f16(__m512 x)
{
	return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

A5_INLINE __m512 load_f16(const uint8_t *p, __mmask16 m)
{
	return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

/* the widest heads and the most heads per kv head the registers form
 * takes; others go to the scalar definition */
enum { ONE_MAX_D = 256, ONE_MAX_Q = 16 };

/* The running max over nb scores of one head in order, each position's
 * expf argument (the change of the max where it grew, else score - max),
 * then the expf calls, which no longer wait on each other. */
static inline void fa_steps(const float *sc, int nb, float *m, float *e, unsigned *grew)
{
	float arg[16], mx = *m;
	unsigned g = 0;
	for (int i = 0; i < nb; i++) {
		if (sc[i] > mx) {
			arg[i] = mx - sc[i];
			mx = sc[i];
			g |= 1u << i;
		} else {
			arg[i] = sc[i] - mx;
		}
	}
	for (int i = 0; i < nb; i++)
		e[i] = expf(arg[i]);
	*m = mx;
	*grew = g;
}

/* A Q8_0 block's d */
A5_INLINE float q8_d(const uint8_t *b)
{
	return _cvtsh_ss((unsigned short)(b[0] | b[1] << 8));
}

/* V row of a Q8_0 cache, dequantised: vector j holds elements 16 j ..
 * 16 j + 15, each quant times its block's d (exact in f32). */
A5_INLINE __m512 q8_vec(const uint8_t *row, int j)
{
	const uint8_t *b = row + (uint64_t)(j / 2) * 34;
	const __m512 d = _mm512_set1_ps(q8_d(b));
	const __m512i x = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + 2 + 16 * (j % 2))));
	return _mm512_mul_ps(_mm512_cvtepi32_ps(x), d);
}

/* Vector j of a V row: f16 values (vlast masks the row's last vector),
 * or Q8_0 dequantised; and an accumulator's rounding after each step:
 * through f16 for an F16 cache (VKQ16), none for Q8_0 (VKQ32). */
A5_INLINE __m512 v_vec(bool q8, const uint8_t *vr, int j, int nv, __mmask16 vlast)
{
	return q8 ? q8_vec(vr, j) : load_f16(vr + 32 * j, j == nv - 1 ? vlast : 0xFFFF);
}

A5_INLINE __m512 acc_round(bool q8, __m512 x)
{
	return q8 ? x : round_f16(x);
}

/* The accumulator chains of nb positions for n_q <= NQ heads of NV
 * vectors, in registers (the generic loop below keeps them in memory, and
 * the store-to-load forwarding then lies on every chain): called with
 * constants, so that the loops unroll and the arrays become registers. */
A5_INLINE void chains(const bool Q8, const int NV, const int NQ, int64_t n_q, int nb, const uint8_t *v,
		      uint64_t v_stride, __mmask16 vlast, const float e[][16], const unsigned *grew, float *s,
		      __m512 af[][ONE_MAX_D / 16])
{
	__m512 r[4][8];
	UNROLL
	for (int h = 0; h < NQ; h++)
		UNROLL
		for (int j = 0; j < NV; j++)
			r[h][j] = h < n_q ? af[h][j] : _mm512_setzero_ps();
	for (int i = 0; i < nb; i++) {
		const uint8_t *vr = v + (uint64_t)i * v_stride;
		__m512 vf[8];
		UNROLL
		for (int j = 0; j < NV; j++)
			vf[j] = v_vec(Q8, vr, j, NV, vlast);
		UNROLL
		for (int h = 0; h < NQ; h++) {
			if (h >= n_q)
				break;
			const bool gr = grew[h] >> i & 1;
			const float ms = gr ? e[h][i] : 1.0f, vs = gr ? 1.0f : e[h][i];
			if (gr) {
				const __m512 msv = _mm512_set1_ps(ms);
				UNROLL
				for (int j = 0; j < NV; j++)
					r[h][j] = acc_round(Q8, _mm512_mul_ps(r[h][j], msv));
			}
			const __m512 vsv = _mm512_set1_ps(vs);
			UNROLL
			for (int j = 0; j < NV; j++)
				r[h][j] = acc_round(Q8, _mm512_fmadd_ps(vf[j], vsv, r[h][j]));
			s[h] = s[h] * ms + vs;
		}
	}
	UNROLL
	for (int h = 0; h < NQ; h++)
		UNROLL
		for (int j = 0; j < NV; j++)
			if (h < n_q)
				af[h][j] = r[h][j];
}

/* The heads' chains over nb positions, each V row converted once: in
 * registers where the shape allows, else in memory. */
A5_INLINE void accumulate(bool q8, int nv, int64_t n_q, int nb, const uint8_t *v, uint64_t v_stride,
			  __mmask16 vlast, const float e[][16], const unsigned *grew, float *s,
			  __m512 af[][ONE_MAX_D / 16])
{
	if (nv == 4 && n_q <= 4) {
		if (q8)
			chains(true, 4, 4, n_q, nb, v, v_stride, vlast, e, grew, s, af);
		else
			chains(false, 4, 4, n_q, nb, v, v_stride, vlast, e, grew, s, af);
		return;
	}
	if (nv == 8 && n_q <= 2) {
		if (q8)
			chains(true, 8, 2, n_q, nb, v, v_stride, vlast, e, grew, s, af);
		else
			chains(false, 8, 2, n_q, nb, v, v_stride, vlast, e, grew, s, af);
		return;
	}
	for (int i = 0; i < nb; i++) {
		const uint8_t *vr = v + (uint64_t)i * v_stride;
		__m512 vf[ONE_MAX_D / 16];
		for (int j = 0; j < nv; j++)
			vf[j] = v_vec(q8, vr, j, nv, vlast);
		for (int64_t h = 0; h < n_q; h++) {
			const bool gr = grew[h] >> i & 1;
			const float ms = gr ? e[h][i] : 1.0f, vs = gr ? 1.0f : e[h][i];
			if (gr)
				for (int j = 0; j < nv; j++)
					af[h][j] = acc_round(q8, _mm512_mul_ps(af[h][j], _mm512_set1_ps(ms)));
			for (int j = 0; j < nv; j++)
				af[h][j] = acc_round(q8, _mm512_fmadd_ps(vf[j], _mm512_set1_ps(vs), af[h][j]));
			s[h] = s[h] * ms + vs;
		}
	}
}

/* The one-at-a-time form over a Q8_0 cache. A score is
 * ggml_vec_dot_q8_0_q8_0's eight float lanes, lane l the integer sum of
 * elements 4l..4l+3 of each block (exact: here the even lanes of a pair
 * sum and its neighbour) times d_k d_q, one fma per block; then the
 * lanes' hsum_float_8 order. */
A5 static void fa_one_q8_avx512(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n,
				float *m, float *s, void *acc, uint64_t acc_stride)
{
	enum { MAX_B = ONE_MAX_D / 32 };
	if (fa->dk % 32 != 0 || fa->dv % 32 != 0 || fa->dk > ONE_MAX_D || fa->dv > ONE_MAX_D || n_q > ONE_MAX_Q) {
		q42_llamacpp_fa_one(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n, m, s, acc, acc_stride);
		return;
	}
	const int nkb = (int)(fa->dk / 32), nv = (int)(fa->dv / 16);
	__m512i q16[ONE_MAX_Q][MAX_B];
	float qd[ONE_MAX_Q][MAX_B];
	__m512 af[ONE_MAX_Q][ONE_MAX_D / 16];

	for (int64_t h = 0; h < n_q; h++) {
		const uint8_t *qh = (const uint8_t *)q + (uint64_t)h * q_stride;
		const float *ah = (const float *)(const void *)((const uint8_t *)acc + (uint64_t)h * acc_stride);
		for (int b = 0; b < nkb; b++) {
			const uint8_t *qb = qh + 34 * b;
			qd[h][b] = q8_d(qb);
			q16[h][b] = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(qb + 2)));
		}
		for (int j = 0; j < nv; j++)
			af[h][j] = _mm512_loadu_ps(ah + 16 * j);
	}
	for (int64_t i0 = 0; i0 < n; i0 += 16) {
		const int nb = n - i0 < 16 ? (int)(n - i0) : 16;
		float sc[ONE_MAX_Q][16], e[ONE_MAX_Q][16];
		unsigned grew[ONE_MAX_Q];
		for (int i = 0; i < nb; i++) {
			const uint8_t *kr = k + (uint64_t)(i0 + i) * k_stride;
			__m512i k16[MAX_B];
			float kd[MAX_B];
			for (int b = 0; b < nkb; b++) {
				kd[b] = q8_d(kr + 34 * b);
				k16[b] = _mm512_cvtepi8_epi16(
					_mm256_loadu_si256((const __m256i *)(const void *)(kr + 34 * b + 2)));
			}
			for (int64_t h = 0; h < n_q; h++) {
				__m512 lanes = _mm512_setzero_ps();
				for (int b = 0; b < nkb; b++) {
					__m512i t = _mm512_madd_epi16(k16[b], q16[h][b]);
					t = _mm512_add_epi32(t, _mm512_srli_epi64(t, 32));
					lanes = _mm512_fmadd_ps(_mm512_set1_ps(kd[b] * qd[h][b]), _mm512_cvtepi32_ps(t),
								lanes);
				}
				float l[16];
				_mm512_storeu_ps(l, lanes);
				const float r0 = l[8] + l[0], r1 = l[10] + l[2], r2 = l[12] + l[4], r3 = l[14] + l[6];
				sc[h][i] = ((r0 + r2) + (r1 + r3)) * fa->scale;
			}
		}
		for (int64_t h = 0; h < n_q; h++)
			fa_steps(sc[h], nb, &m[h], e[h], &grew[h]);
		accumulate(true, nv, n_q, nb, v + (uint64_t)i0 * v_stride, v_stride, 0xFFFF, e, grew, s, af);
	}
	for (int64_t h = 0; h < n_q; h++) {
		float *ah = (float *)(void *)((uint8_t *)acc + (uint64_t)h * acc_stride);
		for (int j = 0; j < nv; j++)
			_mm512_storeu_ps(ah + 16 * j, af[h][j]);
	}
}

A5 void q42_llamacpp_fa_one_avx512(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				   const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
				   int64_t n, float *m, float *s, void *acc, uint64_t acc_stride)
{
	if (fa->kv_type == Q42_DTYPE_Q8_0) {
		fa_one_q8_avx512(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n, m, s, acc, acc_stride);
		return;
	}
	if (fa->dk % 64 != 0 || fa->dk > ONE_MAX_D || fa->dv > ONE_MAX_D || n_q > ONE_MAX_Q) {
		q42_llamacpp_fa_one(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n, m, s, acc, acc_stride);
		return;
	}
	const int nk = (int)(fa->dk / 16), nv = (int)((fa->dv + 15) / 16);
	const __mmask16 vlast = tail_mask(fa->dv - 16 * (nv - 1));
	__m512 qf[ONE_MAX_Q][ONE_MAX_D / 16], af[ONE_MAX_Q][ONE_MAX_D / 16];

	for (int64_t h = 0; h < n_q; h++) {
		const uint8_t *qh = (const uint8_t *)q + (uint64_t)h * q_stride;
		const uint8_t *ah = (const uint8_t *)acc + (uint64_t)h * acc_stride;
		for (int j = 0; j < nk; j++)
			qf[h][j] = load_f16(qh + 32 * j, 0xFFFF);
		for (int j = 0; j < nv; j++)
			af[h][j] = load_f16(ah + 32 * j, j == nv - 1 ? vlast : 0xFFFF);
	}
	/* sixteen positions at a time: their scores reduced together, the
	 * maxima and the expf arguments found in order, the expf calls
	 * independent of each other, then the accumulator's chain */
	for (int64_t i0 = 0; i0 < n; i0 += 16) {
		const int nb = n - i0 < 16 ? (int)(n - i0) : 16;
		float e[ONE_MAX_Q][16];
		unsigned grew[ONE_MAX_Q];
		for (int64_t h = 0; h < n_q; h++) {
			__m512 f[16];
			for (int i = 0; i < 16; i++) {
				if (i >= nb) {
					f[i] = _mm512_setzero_ps();
					continue;
				}
				/* ggml_vec_dot_f16: four accumulators over 64-steps */
				const uint8_t *kr = k + (uint64_t)(i0 + i) * k_stride;
				__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
				for (int j = 0; j < nk; j += 4) {
					a0 = _mm512_fmadd_ps(load_f16(kr + 32 * j, 0xFFFF), qf[h][j], a0);
					a1 = _mm512_fmadd_ps(load_f16(kr + 32 * (j + 1), 0xFFFF), qf[h][j + 1], a1);
					a2 = _mm512_fmadd_ps(load_f16(kr + 32 * (j + 2), 0xFFFF), qf[h][j + 2], a2);
					a3 = _mm512_fmadd_ps(load_f16(kr + 32 * (j + 3), 0xFFFF), qf[h][j + 3], a3);
				}
				f[i] = _mm512_add_ps(_mm512_add_ps(a0, a2), _mm512_add_ps(a1, a3));
			}
			float sc[16];
			_mm512_storeu_ps(sc, _mm512_mul_ps(reduce16x16(f), _mm512_set1_ps(fa->scale)));
			fa_steps(sc, nb, &m[h], e[h], &grew[h]);
		}
		/* the heads' chains side by side, each V row converted once */
		accumulate(false, nv, n_q, nb, v + (uint64_t)i0 * v_stride, v_stride, vlast, e, grew, s, af);
	}
	for (int64_t h = 0; h < n_q; h++) {
		uint8_t *ah = (uint8_t *)acc + (uint64_t)h * acc_stride;
		for (int j = 0; j < nv; j++)
			_mm256_mask_storeu_epi16(ah + 32 * j, j == nv - 1 ? vlast : 0xFFFF,
						 _mm512_cvtps_ph(af[h][j], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	}
}

/* Rows n (f16, stride bytes apart) of d values into f32 rows of d. */
A5_INLINE void rows_to_f32(float *dst, const uint8_t *src, uint64_t stride, int64_t n, int64_t d)
{
	for (int64_t j = 0; j < n; j++)
		for (int64_t c = 0; c < d; c += 16) {
			const __mmask16 mk = tail_mask(d - c);
			_mm512_mask_storeu_ps(dst + j * d + c, mk,
					      load_f16(src + (uint64_t)j * stride + 2 * (uint64_t)c, mk));
		}
}

/* Four rows of four chains for the tiled form's two products (scores:
 * x the K rows, over the head dims; accumulator: x the V columns, over the
 * positions): a[u][c] += x_u[i xs] * rows[i T + 16 c] for i < n, one fused
 * chain per lane, in registers (a struct the compiler keeps in them).
 * Four rows share each load of rows[]: with two, the loads bounded the
 * loop. */
enum { RB = 4 };
typedef struct acc4x4 {
	__m512 a[RB][TV];
} acc4x4;

A5_INLINE acc4x4 acc4x4_zero(void)
{
	acc4x4 r;
	UNROLL
	for (int u = 0; u < RB; u++)
		UNROLL
		for (int c = 0; c < TV; c++)
			r.a[u][c] = _mm512_setzero_ps();
	return r;
}

A5_INLINE acc4x4 rank1_4x4(acc4x4 r, const float *const x[RB], int64_t xs, const float *rows, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		const float *ri = rows + i * T;
		__m512 b[RB];
		UNROLL
		for (int u = 0; u < RB; u++)
			b[u] = _mm512_set1_ps(x[u][i * xs]);
		UNROLL
		for (int c = 0; c < TV; c++) {
			const __m512 q = _mm512_loadu_ps(ri + 16 * c);
			UNROLL
			for (int u = 0; u < RB; u++)
				r.a[u][c] = _mm512_fmadd_ps(b[u], q, r.a[u][c]);
		}
	}
	return r;
}

A5 void q42_llamacpp_fa_tile_avx512(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
				    uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
				    const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc,
				    float *work)
{
	const int64_t dk = fa->dk, dv = fa->dv;
	float *kf = work, *vf = kf + T * dk, *p = vf + T * dv;
	__m512i lov[TV], hiv[TV];
	__m512 mv[TV], tmax[TV], mnew[TV];
	__mmask16 live[TV], grow[TV];
	const __m512 scale = _mm512_set1_ps(fa->scale), ninf = _mm512_set1_ps(-INFINITY);

	for (int c = 0; c < TV; c++) {
		/* rows past n_q see nothing */
		const __mmask16 in = tail_mask(n_q - 16 * c > 0 ? n_q - 16 * c : 0);
		lov[c] = _mm512_maskz_loadu_epi32(in, lo + 16 * c);
		hiv[c] = _mm512_maskz_loadu_epi32(in, hi + 16 * c);
		tmax[c] = ninf;
	}
	rows_to_f32(kf, k, k_stride, n_kv, dk);
	rows_to_f32(vf, v, v_stride, n_kv, dv);

	/* scores, four positions at a time: sixteen chains over the head
	 * dims, in registers (past n_kv the last position again, unused) */
	for (int64_t j = 0; j < n_kv; j += RB) {
		const float *x[RB];
		UNROLL
		for (int u = 0; u < RB; u++)
			x[u] = kf + (j + u < n_kv ? j + u : n_kv - 1) * dk;
		const acc4x4 a = rank1_4x4(acc4x4_zero(), x, 1, qt, dk);
		UNROLL
		for (int u = 0; u < RB; u++) {
			if (j + u >= n_kv)
				break;
			const __m512i jv = _mm512_set1_epi32((int32_t)(j + u));
			UNROLL
			for (int c = 0; c < TV; c++) {
				const __mmask16 ok = _mm512_cmp_epi32_mask(lov[c], jv, _MM_CMPINT_LE) &
						     _mm512_cmp_epi32_mask(jv, hiv[c], _MM_CMPINT_LT);
				/* the mask's 0 is added as ggml adds it */
				const __m512 sc = _mm512_mask_blend_ps(
					ok, ninf, _mm512_add_ps(_mm512_mul_ps(a.a[u][c], scale), _mm512_setzero_ps()));
				_mm512_storeu_ps(p + (j + u) * T + 16 * c, sc);
				tmax[c] = _mm512_max_ps(tmax[c], sc);
			}
		}
	}
	/* the running max, and where it grew, the rescaling by expf */
	for (int c = 0; c < TV; c++) {
		mv[c] = _mm512_loadu_ps(m + 16 * c);
		live[c] = _mm512_cmp_ps_mask(tmax[c], ninf, _CMP_NEQ_OQ);
		mnew[c] = _mm512_mask_max_ps(mv[c], live[c], mv[c], tmax[c]);
		grow[c] = _mm512_cmp_ps_mask(mnew[c], mv[c], _CMP_GT_OQ);
	}
	for (int c = 0; c < TV; c++) {
		if (grow[c] == 0)
			continue;
		float msf[16], mo[16], mn[16];
		_mm512_storeu_ps(mo, mv[c]);
		_mm512_storeu_ps(mn, mnew[c]);
		for (int l = 0; l < 16; l++)
			msf[l] = grow[c] >> l & 1 ? expf(mo[l] - mn[l]) : 1.0f;
		const __m512 ms = _mm512_loadu_ps(msf);
		for (int64_t d = 0; d < dv; d++)
			_mm512_storeu_ps(acc + d * T + 16 * c, _mm512_mul_ps(_mm512_loadu_ps(acc + d * T + 16 * c), ms));
		_mm512_storeu_ps(s + 16 * c, _mm512_mul_ps(_mm512_loadu_ps(s + 16 * c), ms));
	}
	/* weights, and their sums: each 16 positions reduced as
	 * _mm512_reduce_add_ps, lane-wise, then added in double */
	for (int c = 0; c < TV; c++) {
		__m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();
		for (int64_t j0 = 0; j0 < T; j0 += 16) {
			__m512 e[16];
			for (int u = 0; u < 16; u++) {
				const int64_t j = j0 + u;
				if (j >= n_kv) {
					e[u] = _mm512_setzero_ps();
					continue;
				}
				const __m512 sc = _mm512_loadu_ps(p + j * T + 16 * c);
				e[u] = _mm512_maskz_mov_ps(live[c], v_expf16(_mm512_sub_ps(sc, mnew[c])));
				_mm512_storeu_ps(p + j * T + 16 * c, e[u]);
			}
			for (int u = 0; u < 8; u++)
				e[u] = _mm512_add_ps(e[u], e[u + 8]);
			for (int u = 0; u < 4; u++)
				e[u] = _mm512_add_ps(e[u], e[u + 4]);
			for (int u = 0; u < 2; u++)
				e[u] = _mm512_add_ps(e[u], e[u + 2]);
			const __m512 t = _mm512_add_ps(e[0], e[1]);
			sum_lo = _mm512_add_pd(sum_lo, _mm512_cvtps_pd(_mm512_castps512_ps256(t)));
			sum_hi = _mm512_add_pd(sum_hi, _mm512_cvtps_pd(_mm256_castpd_ps(
							       _mm512_extractf64x4_pd(_mm512_castps_pd(t), 1))));
		}
		const __m512 sv = _mm512_loadu_ps(s + 16 * c);
		const __m256 lo8 = _mm512_cvtpd_ps(_mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(sv)), sum_lo));
		const __m256 hi8 = _mm512_cvtpd_ps(_mm512_add_pd(
			_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sv), 1))), sum_hi));
		_mm512_storeu_ps(s + 16 * c, _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo8)),
										       _mm256_castps_pd(hi8), 1)));
		_mm512_storeu_ps(m + 16 * c, mnew[c]);
	}
	/* the accumulator, four dimensions at a time: sixteen chains over the
	 * positions, in registers (past dv the last dimension again: its
	 * chains are the same, and it is stored last) */
	for (int64_t d = 0; d < dv; d += RB) {
		const float *x[RB];
		float *cd[RB];
		acc4x4 a;
		UNROLL
		for (int u = 0; u < RB; u++) {
			const int64_t du = d + u < dv ? d + u : dv - 1;
			x[u] = vf + du;
			cd[u] = acc + du * T;
			UNROLL
			for (int c = 0; c < TV; c++)
				a.a[u][c] = _mm512_loadu_ps(cd[u] + 16 * c);
		}
		a = rank1_4x4(a, x, dv, p, n_kv);
		UNROLL
		for (int u = 0; u < RB; u++)
			UNROLL
			for (int c = 0; c < TV; c++)
				_mm512_storeu_ps(cd[u] + 16 * c, a.a[u][c]);
	}
}

/* ---- AVX2 --------------------------------------------------------------- */

A2_INLINE __m256 ld8_f16(const uint8_t *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
}

A2_INLINE __m256 round8_f16(__m256 x)
{
	return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

A2_INLINE __m256 q8_vec8(const uint8_t *row, int j)
{
	const uint8_t *b = row + (uint64_t)(j / 4) * 34;
	const __m256 d = _mm256_set1_ps(_cvtsh_ss((unsigned short)(b[0] | b[1] << 8)));
	const __m256i x = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b + 2 + 8 * (j % 4))));
	return _mm256_mul_ps(_mm256_cvtepi32_ps(x), d);
}

/* 2^k for integer k in [-126, 127], exactly */
A2_INLINE __m256 pow2_8(__m256i k)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

/* v_expf16 lane by lane in eight lanes: the same steps; scalef(j, n) as
 * j 2^(n - n/2) 2^(n/2): |n| <= 192 here, so the first product is exact
 * and only the second rounds, as scalef does once. */
A2_INLINE __m256 v_expf8(__m256 x)
{
	const __m256 r = _mm256_set1_ps(0x1.8p23f);
	const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
	const __m256 n = _mm256_sub_ps(z, r);
	const __m256 nn = _mm256_xor_ps(n, _mm256_set1_ps(-0.0f));
	const __m256 b = _mm256_fmadd_ps(nn, _mm256_set1_ps(0x1.7f7d1cp-20f),
					 _mm256_fmadd_ps(nn, _mm256_set1_ps(0x1.62e4p-1f), x));
	const __m256 u = _mm256_mul_ps(b, b);
	const __m256 j = _mm256_fmadd_ps(
		_mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
				_mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
		u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
	const __m256 absn = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
	const __m256 big = _mm256_cmp_ps(absn, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
	const __m256 neg = _mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ);
	/* in range, n is an integer of at most 192 in size (NaN: j is NaN) */
	const __m256i ni = _mm256_cvttps_epi32(_mm256_andnot_ps(big, n));
	const __m256i n1 = _mm256_srai_epi32(ni, 1);
	const __m256 e = _mm256_mul_ps(_mm256_mul_ps(j, pow2_8(_mm256_sub_epi32(ni, n1))), pow2_8(n1));
	return _mm256_blendv_ps(e, _mm256_blendv_ps(_mm256_set1_ps(INFINITY), _mm256_setzero_ps(), neg), big);
}

/* The one-at-a-time form in eight lanes: scores of sixteen positions,
 * the steps of the max in order, then each head's accumulator chain over
 * them in registers (a head at a time: sixteen registers hold no more). */
A2_INLINE void fa_one8(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride, const uint8_t *k,
		       uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n, float *m, float *s, void *acc,
		       uint64_t acc_stride, bool hw)
{
	enum { MAX_V = ONE_MAX_D / 8, MAX_B = ONE_MAX_D / 32 };
	const bool q8 = fa->kv_type == Q42_DTYPE_Q8_0;
	if ((q8 || hw ? fa->dk % 32 != 0 : fa->dk % 64 != 0) || fa->dv % (q8 ? 32 : 8) != 0 || fa->dk > ONE_MAX_D ||
	    fa->dv > ONE_MAX_D || n_q > ONE_MAX_Q) {
		(hw ? q42_llamacpp_hw_fa_one : q42_llamacpp_fa_one)(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n,
								    m, s, acc, acc_stride);
		return;
	}
	const int nk = (int)(fa->dk / 8), nkb = (int)(fa->dk / 32), nv = (int)(fa->dv / 8);
	__m256 qf[ONE_MAX_Q][MAX_V];
	__m256i q16[ONE_MAX_Q][2 * MAX_B];
	float qd[ONE_MAX_Q][MAX_B];

	for (int64_t h = 0; h < n_q; h++) {
		const uint8_t *qh = (const uint8_t *)q + (uint64_t)h * q_stride;
		if (!q8) {
			for (int j = 0; j < nk; j++)
				qf[h][j] = ld8_f16(qh + 16 * j);
			continue;
		}
		for (int b = 0; b < nkb; b++) {
			const uint8_t *qb = qh + 34 * b;
			qd[h][b] = _cvtsh_ss((unsigned short)(qb[0] | qb[1] << 8));
			for (int half = 0; half < 2; half++)
				q16[h][2 * b + half] = _mm256_cvtepi8_epi16(
					_mm_loadu_si128((const __m128i *)(const void *)(qb + 2 + 16 * half)));
		}
	}
	for (int64_t i0 = 0; i0 < n; i0 += 16) {
		const int nb = n - i0 < 16 ? (int)(n - i0) : 16;
		float sc[ONE_MAX_Q][16], e[ONE_MAX_Q][16];
		unsigned grew[ONE_MAX_Q];
		for (int i = 0; i < nb; i++) {
			const uint8_t *kr = k + (uint64_t)(i0 + i) * k_stride;
			for (int64_t h = 0; h < n_q; h++) {
				float dot;
				if (q8) {
					/* lanes in the order 0 1 4 5 2 3 6 7 (hadd works per
					 * half); hsum_float_8's pairs picked to match */
					__m256 lanes = _mm256_setzero_ps();
					for (int b = 0; b < nkb; b++) {
						const uint8_t *kb = kr + 34 * b;
						const __m256i p0 = _mm256_madd_epi16(
							_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(kb + 2))),
							q16[h][2 * b]);
						const __m256i p1 = _mm256_madd_epi16(
							_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(kb + 18))),
							q16[h][2 * b + 1]);
						const float dd = _cvtsh_ss((unsigned short)(kb[0] | kb[1] << 8)) * qd[h][b];
						lanes = _mm256_fmadd_ps(_mm256_set1_ps(dd), _mm256_cvtepi32_ps(_mm256_hadd_epi32(p0, p1)),
									lanes);
					}
					float l[8];
					_mm256_storeu_ps(l, lanes);
					dot = ((l[2] + l[0]) + (l[6] + l[4])) + ((l[3] + l[1]) + (l[7] + l[5]));
				} else {
					/* ggml_vec_dot_f16's four sixteen-lane accumulators
					 * (eight halves), or haswell's four eight-lane ones
					 * over 32-value steps */
					const int na = hw ? 4 : 8;
					__m256 a[8];
					UNROLL
					for (int c = 0; c < 8; c++)
						a[c] = _mm256_setzero_ps();
					for (int j = 0; j < nk; j += na)
						for (int c = 0; c < na; c++)
							a[c] = _mm256_fmadd_ps(ld8_f16(kr + 16 * (j + c)), qf[h][j + c], a[c]);
					dot = hw ? reduce_hadd8(_mm256_add_ps(_mm256_add_ps(a[0], a[2]), _mm256_add_ps(a[1], a[3])))
						 : reduce16_halves(
							   _mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6])),
							   _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7])));
				}
				sc[h][i] = dot * fa->scale;
			}
		}
		for (int64_t h = 0; h < n_q; h++) {
			fa_steps(sc[h], nb, &m[h], e[h], &grew[h]);
			float *af = (float *)(void *)((uint8_t *)acc + (uint64_t)h * acc_stride);
			uint8_t *ah = (uint8_t *)acc + (uint64_t)h * acc_stride;
			__m256 r[MAX_V];
			for (int j = 0; j < nv; j++)
				r[j] = q8 ? _mm256_loadu_ps(af + 8 * j) : ld8_f16(ah + 16 * j);
			for (int i = 0; i < nb; i++) {
				const uint8_t *vr = v + (uint64_t)(i0 + i) * v_stride;
				const bool gr = grew[h] >> i & 1;
				const float ms = gr ? e[h][i] : 1.0f, vs = gr ? 1.0f : e[h][i];
				if (gr)
					for (int j = 0; j < nv; j++)
						r[j] = _mm256_mul_ps(r[j], _mm256_set1_ps(ms));
				if (gr && !q8)
					for (int j = 0; j < nv; j++)
						r[j] = round8_f16(r[j]);
				for (int j = 0; j < nv; j++) {
					const __m256 x = q8 ? q8_vec8(vr, j) : ld8_f16(vr + 16 * j);
					r[j] = _mm256_fmadd_ps(x, _mm256_set1_ps(vs), r[j]);
					if (!q8)
						r[j] = round8_f16(r[j]);
				}
				s[h] = s[h] * ms + vs;
			}
			for (int j = 0; j < nv; j++)
				if (q8)
					_mm256_storeu_ps(af + 8 * j, r[j]);
				else
					_mm_storeu_si128((__m128i *)(void *)(ah + 16 * j),
							 _mm256_cvtps_ph(r[j], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
		}
	}
}

A2 void q42_llamacpp_fa_one_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				 const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n,
				 float *m, float *s, void *acc, uint64_t acc_stride)
{
	fa_one8(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n, m, s, acc, acc_stride, false);
}

A2 void q42_llamacpp_hw_fa_one_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				    const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n,
				    float *m, float *s, void *acc, uint64_t acc_stride)
{
	fa_one8(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n, m, s, acc, acc_stride, true);
}

/* Rows n (f16, stride bytes apart) of d values into f32 rows of d. */
A2_INLINE void rows8_to_f32(float *dst, const uint8_t *src, uint64_t stride, int64_t n, int64_t d)
{
	for (int64_t j = 0; j < n; j++) {
		const uint8_t *r = src + (uint64_t)j * stride;
		int64_t c = 0;
		for (; c + 8 <= d; c += 8)
			_mm256_storeu_ps(dst + j * d + c, ld8_f16(r + 2 * c));
		for (; c < d; c++)
			dst[j * d + c] = _cvtsh_ss((unsigned short)(r[2 * c] | r[2 * c + 1] << 8));
	}
}

/* The tiled form's two products in eight lanes: a[c] += x[i xs] * rows[i
 * T + 8 c] for i < n, eight chains in registers. */
typedef struct acc8 {
	__m256 a[T / 8];
} acc8;

A2_INLINE acc8 rank1_8(acc8 r, const float *x, int64_t xs, const float *rows, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		const __m256 b = _mm256_set1_ps(x[i * xs]);
		const float *ri = rows + i * T;
		UNROLL
		for (int c = 0; c < T / 8; c++)
			r.a[c] = _mm256_fmadd_ps(b, _mm256_loadu_ps(ri + 8 * c), r.a[c]);
	}
	return r;
}

/* The tiled form in eight lanes: the AVX-512 form's steps, a position (or
 * a dimension) at a time. */
A2_INLINE void fa_tile8(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k, uint64_t k_stride,
			const uint8_t *v, uint64_t v_stride, int64_t n_kv, const int32_t *lo, const int32_t *hi, float *m,
			float *s, float *acc, float *work, bool hw)
{
	enum { TC = T / 8 };
	const int64_t dk = fa->dk, dv = fa->dv;
	float *kf = work, *vf = kf + T * dk, *p = vf + T * dv;
	__m256i lov[TC], hiv[TC];
	__m256 mv[TC], mnew[TC], live[TC];
	const __m256 scale = _mm256_set1_ps(fa->scale), ninf = _mm256_set1_ps(-INFINITY);

	for (int c = 0; c < TC; c++) {
		/* rows past n_q see nothing */
		const bool in = 8 * c < n_q;
		lov[c] = in ? _mm256_loadu_si256((const __m256i *)(const void *)(lo + 8 * c)) : _mm256_setzero_si256();
		hiv[c] = in ? _mm256_loadu_si256((const __m256i *)(const void *)(hi + 8 * c)) : _mm256_setzero_si256();
		if (in && n_q - 8 * c < 8) {
			const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
			const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(n_q - 8 * c)), lane);
			lov[c] = _mm256_and_si256(lov[c], keep);
			hiv[c] = _mm256_and_si256(hiv[c], keep);
		}
	}
	rows8_to_f32(kf, k, k_stride, n_kv, dk);
	rows8_to_f32(vf, v, v_stride, n_kv, dv);

	/* scores, a position at a time, masked to each row's span */
	for (int64_t j = 0; j < n_kv; j++) {
		acc8 a;
		UNROLL
		for (int c = 0; c < TC; c++)
			a.a[c] = _mm256_setzero_ps();
		a = rank1_8(a, kf + j * dk, 1, qt, dk);
		const __m256i jv = _mm256_set1_epi32((int32_t)j);
		UNROLL
		for (int c = 0; c < TC; c++) {
			/* lo <= j < hi */
			const __m256i ok = _mm256_andnot_si256(_mm256_cmpgt_epi32(lov[c], jv), _mm256_cmpgt_epi32(hiv[c], jv));
			const __m256 sc = _mm256_blendv_ps(ninf, _mm256_add_ps(_mm256_mul_ps(a.a[c], scale), _mm256_setzero_ps()),
							   _mm256_castsi256_ps(ok));
			_mm256_storeu_ps(p + j * T + 8 * c, sc);
		}
	}
	/* the running max, and where it grew, the rescaling by expf */
	for (int c = 0; c < TC; c++) {
		__m256 tmax = ninf;
		for (int64_t j = 0; j < n_kv; j++)
			tmax = _mm256_max_ps(tmax, _mm256_loadu_ps(p + j * T + 8 * c));
		mv[c] = _mm256_loadu_ps(m + 8 * c);
		live[c] = _mm256_cmp_ps(tmax, ninf, _CMP_NEQ_OQ);
		mnew[c] = _mm256_blendv_ps(mv[c], _mm256_max_ps(mv[c], tmax), live[c]);
		const int grow = _mm256_movemask_ps(_mm256_cmp_ps(mnew[c], mv[c], _CMP_GT_OQ));
		if (grow == 0)
			continue;
		float msf[8], mo[8], mn[8];
		_mm256_storeu_ps(mo, mv[c]);
		_mm256_storeu_ps(mn, mnew[c]);
		for (int l = 0; l < 8; l++)
			msf[l] = grow >> l & 1 ? expf(mo[l] - mn[l]) : 1.0f;
		const __m256 ms = _mm256_loadu_ps(msf);
		for (int64_t d = 0; d < dv; d++)
			_mm256_storeu_ps(acc + d * T + 8 * c, _mm256_mul_ps(_mm256_loadu_ps(acc + d * T + 8 * c), ms));
		_mm256_storeu_ps(s + 8 * c, _mm256_mul_ps(_mm256_loadu_ps(s + 8 * c), ms));
	}
	/* weights, and their sums: each 16 positions reduced as
	 * _mm512_reduce_add_ps, lane-wise, then added in double (haswell:
	 * each 8 as hsum_float_8, with its own exp) */
	const int w = hw ? 8 : 16;
	for (int c = 0; c < TC; c++) {
		__m256d sum_lo = _mm256_setzero_pd(), sum_hi = _mm256_setzero_pd();
		for (int64_t j0 = 0; j0 < T; j0 += w) {
			__m256 e[16];
			for (int u = 0; u < w; u++) {
				const int64_t j = j0 + u;
				if (j >= n_kv) {
					e[u] = _mm256_setzero_ps();
					continue;
				}
				const __m256 x = _mm256_sub_ps(_mm256_loadu_ps(p + j * T + 8 * c), mnew[c]);
				e[u] = _mm256_and_ps(live[c], hw ? v_expf8_hw(x) : v_expf8(x));
				_mm256_storeu_ps(p + j * T + 8 * c, e[u]);
			}
			/* 16 positions: i and i+8 first; then both trees end in
			 * (i + i+4), (0 + 2) + (1 + 3) */
			for (int u = 0; u < 8 && w == 16; u++)
				e[u] = _mm256_add_ps(e[u], e[u + 8]);
			for (int u = 0; u < 4; u++)
				e[u] = _mm256_add_ps(e[u], e[u + 4]);
			const __m256 t = _mm256_add_ps(_mm256_add_ps(e[0], e[2]), _mm256_add_ps(e[1], e[3]));
			sum_lo = _mm256_add_pd(sum_lo, _mm256_cvtps_pd(_mm256_castps256_ps128(t)));
			sum_hi = _mm256_add_pd(sum_hi, _mm256_cvtps_pd(_mm256_extractf128_ps(t, 1)));
		}
		const __m256 sv = _mm256_loadu_ps(s + 8 * c);
		const __m128 lo4 = _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(sv)), sum_lo));
		const __m128 hi4 = _mm256_cvtpd_ps(_mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(sv, 1)), sum_hi));
		_mm256_storeu_ps(s + 8 * c, _mm256_insertf128_ps(_mm256_castps128_ps256(lo4), hi4, 1));
		_mm256_storeu_ps(m + 8 * c, mnew[c]);
	}
	/* the accumulator, a dimension at a time: eight chains over the
	 * positions, in registers */
	for (int64_t d = 0; d < dv; d++) {
		float *cd = acc + d * T;
		acc8 a;
		UNROLL
		for (int c = 0; c < TC; c++)
			a.a[c] = _mm256_loadu_ps(cd + 8 * c);
		a = rank1_8(a, vf + d, dv, p, n_kv);
		UNROLL
		for (int c = 0; c < TC; c++)
			_mm256_storeu_ps(cd + 8 * c, a.a[c]);
	}
}

A2 void q42_llamacpp_fa_tile_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
				  uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
				  const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc, float *work)
{
	fa_tile8(fa, n_q, qt, k, k_stride, v, v_stride, n_kv, lo, hi, m, s, acc, work, false);
}

A2 void q42_llamacpp_hw_fa_tile_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
				     uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
				     const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc, float *work)
{
	fa_tile8(fa, n_q, qt, k, k_stride, v, v_stride, n_kv, lo, hi, m, s, acc, work, true);
}

#endif
