/* q42_x86_rowops.c -- float row operations of the forward pass in
 * llama.cpp's x86 rounding: softmax, SwiGLU, RMSNorm, add, RoPE (AVX-512),
 * and the FMA build of llamacpp/q42_llamacpp_float.h with contraction
 * off.
 */
#include "kernels/x86/q42_x86_internal.h"
#include "kernels/llamacpp/q42_llamacpp_impl.h"

#if defined(__x86_64__) || defined(__i386__)

/* ---- row ops ----------------------------------------------------------- */

A5_INLINE bool has_nan(int64_t n, const float *x)
{
	for (int64_t i = 0; i < n; i += 16) {
		const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
		if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0)
			return true;
	}
	return false;
}

A5 void q42_llamacpp_softmax_avx512(int64_t n, float *y, const float *x)
{
	/* the scalar max lets a NaN through in an order-dependent way */
	if (has_nan(n, x)) {
		q42_llamacpp_softmax(n, y, x);
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

/* The haswell build's softmax and SwiGLU in eight lanes: its vector exp
 * (v_expf8_hw), each chunk's sum hsum8'd into double. */
A2 void q42_llamacpp_hw_softmax_avx2(int64_t n, float *y, const float *x)
{
	float max = -INFINITY;
	for (int64_t i = 0; i < n; i++)
		max = max > x[i] ? max : x[i];
	const __m256 mv = _mm256_set1_ps(max);
	double sum = 0.0;
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 v = v_expf8_hw(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
		_mm256_storeu_ps(y + i, v);
		sum += (double)hsum8(v);
	}
	if (i < n) { /* the padding's lanes are zeros */
		float t[8] = {0};
		for (int l = 0; i + l < n; l++)
			t[l] = x[i + l];
		float e[8];
		_mm256_storeu_ps(e, v_expf8_hw(_mm256_sub_ps(_mm256_loadu_ps(t), mv)));
		for (int l = 0; l < 8; l++)
			if (i + l < n)
				y[i + l] = e[l];
			else
				e[l] = 0.0f;
		sum += (double)hsum8(_mm256_loadu_ps(e));
	}
	const __m256 inv = _mm256_set1_ps((float)(1.0 / sum));
	for (i = 0; i + 8 <= n; i += 8)
		_mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
	for (; i < n; i++)
		y[i] *= (float)(1.0 / sum);
}

A2 void q42_llamacpp_hw_swiglu_avx2(int64_t n, float *y, const float *x, const float *g)
{
	const int64_t nv = n - n % 8;
	const __m256 one = _mm256_set1_ps(1.0f);
	for (int64_t i = 0; i < nv; i += 8) {
		const __m256 xv = _mm256_loadu_ps(x + i);
		const __m256 e = v_expf8_hw(_mm256_sub_ps(_mm256_setzero_ps(), xv));
		_mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(xv, _mm256_add_ps(one, e)), _mm256_loadu_ps(g + i)));
	}
	q42_llamacpp_hw_swiglu(n - nv, y + nv, x + nv, g + nv);
}

A5 void q42_llamacpp_swiglu_avx512(int64_t n, float *y, const float *x, const float *g)
{
	const int64_t nv = n - n % 16;
	const __m512 one = _mm512_set1_ps(1.0f);
	for (int64_t i = 0; i < nv; i += 16) {
		const __m512 xv = _mm512_loadu_ps(x + i);
		const __m512 e = v_expf16(_mm512_sub_ps(_mm512_setzero_ps(), xv));
		_mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_div_ps(xv, _mm512_add_ps(one, e)),
						      _mm512_loadu_ps(g + i)));
	}
	q42_llamacpp_swiglu(n - nv, y + nv, x + nv, g + nv);
}

/* q42_op_rmsnorm_rows with the scaling sixteen lanes at a time: the sums
 * are the reference's serial chains (q42_op_rmsnorm_sums); x * scale and
 * then * w are two roundings per element in any width. The scalar
 * scaling loop took about as long as the chain (smol360's 960 values: 1.2
 * us a norm in all, two per layer). */
A5 void q42_llamacpp_rmsnorm_rows_avx512(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
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
A5 void q42_llamacpp_add_avx512(int64_t n, float *y, const float *a, const float *b)
{
	for (int64_t i = 0; i < n; i += 16) {
		const __mmask16 m = tail_mask(n - i);
		_mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + i),
							      _mm512_maskz_loadu_ps(m, b + i)));
	}
}

/* Sixteen pairs per step: cos/sin (and, in the normal mode, x) are
 * de-interleaved into even and odd lanes, rotated, and put back. */
A5 void q42_llamacpp_rope_avx512(int64_t n_rot, float *x, const float *cache, bool neox)
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

/* llamacpp/q42_llamacpp_float.h compiled with FMA for the AVX2 table (fmaf one
 * instruction, not a libm call), contraction off as in llamacpp/q42_llamacpp.c */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
#define CF(name) q42_llamacpp_##name##_fma
#define CF_ATTR A2
#define CF_STATIC A2_INLINE
#define CF_NO_DOTS /* the AVX2 dots above */
#include "kernels/llamacpp/q42_llamacpp_float.h"
/* and the haswell build's eight-lane ones */
#define CF8(name) q42_llamacpp_hw_##name##_fma
#define CF8_NO_DOTS /* the AVX2 forms, here and in x86/q42_x86_attention.c */
#include "kernels/llamacpp/q42_llamacpp_float8.h"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#endif
