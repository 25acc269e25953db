/* llamacpp/q42_llamacpp_fa.c -- the scalar definition of llama.cpp's CPU
 * flash attention (q42_llamacpp.h, "flash attention"): the order and the
 * rounding of every step, one query row at a time. The AVX-512 and AVX2
 * forms (x86/q42_x86_fa.c) are tested against these.
 *
 * Built with contraction off: every fused step is an explicit fmaf. Where
 * ggml's C leaves a * b + c to its compiler, llama.cpp's x86 builds fuse
 * the scalar tails of ggml_vec_mad_f16 and ggml_vec_mad_f32, and so does
 * this file, but not the running sum S = S * ms + vs (a product, then a
 * sum: stories260K's logits tell the two apart).
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include "common/q42_le.h"
#include "kernels/q42_kernels.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/llamacpp/q42_llamacpp_impl.h"

static float h2f(const uint8_t *p)
{
	return q42_f16_to_f32(q42_ld16(p));
}

/* ggml_vec_scale_f16 (an F16 cache: each element times ms, rounded
 * back) or ggml_vec_scale_f32 (Q8_0). */
static void acc_scale(const q42_llamacpp_fa *fa, uint8_t *acc, float ms)
{
	float *a = (float *)(void *)acc;
	for (int64_t d = 0; d < fa->dv; d++)
		if (fa->kv_type == Q42_DTYPE_Q8_0)
			a[d] *= ms;
		else
			q42_st16(acc + 2 * d, q42_f32_to_f16(h2f(acc + 2 * d) * ms));
}

/* acc += v * w element by element, one fma each (the SIMD steps and the
 * fused scalar tail alike): ggml_vec_mad_f16, rounded back (F16), or
 * ggml_vec_mad_f32 on the row dequantised by v_to_float, each quant times
 * its block's d, exact in f32 (Q8_0). */
static void acc_mad(const q42_llamacpp_fa *fa, uint8_t *acc, const uint8_t *v, float w)
{
	float *a = (float *)(void *)acc;
	for (int64_t d = 0; d < fa->dv; d++)
		if (fa->kv_type == Q42_DTYPE_Q8_0) {
			const uint8_t *b = v + (uint64_t)(d / 32) * 34;
			a[d] = fmaf((float)(int8_t)b[2 + d % 32] * h2f(b), w, a[d]);
		} else {
			q42_st16(acc + 2 * d, q42_f32_to_f16(fmaf(h2f(v + 2 * d), w, h2f(acc + 2 * d))));
		}
}

void q42_llamacpp_fwht(int64_t n, float *x)
{
	const float scale = 1.0f / sqrtf((float)n);
	for (int64_t j = 0; j < n; j++)
		x[j] *= scale;
	for (int64_t len = 1; len < n; len <<= 1)
		for (int64_t i = 0; i < n; i += 2 * len)
			for (int64_t j = i; j < i + len; j++) {
				const float u = x[j], v = x[j + len];
				x[j] = u + v;
				x[j + len] = u - v;
			}
}

uint64_t q42_llamacpp_fa_acc_bytes(const q42_llamacpp_fa *fa)
{
	return (uint64_t)fa->dv * (fa->kv_type == Q42_DTYPE_Q8_0 ? sizeof(float) : 2u);
}

/* The one-at-a-time form with dot_f16 as the build's ggml_vec_dot_f16
 * (the only step whose bits depend on the build's vector width). */
static void fa_one_with(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
			const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n,
			float *m, float *s, void *acc, uint64_t acc_stride,
			void (*dot_f16)(int64_t, float *, const void *, const void *))
{
	for (int64_t i = 0; i < n; i++) {
		const uint8_t *kr = k + (uint64_t)i * k_stride, *vr = v + (uint64_t)i * v_stride;
		for (int64_t h = 0; h < n_q; h++) {
			const uint8_t *qh = (const uint8_t *)q + (uint64_t)h * q_stride;
			uint8_t *a = (uint8_t *)acc + (uint64_t)h * acc_stride;
			float sc, ms = 1.0f, vs = 1.0f;
			if (fa->kv_type == Q42_DTYPE_Q8_0)
				q42_llamacpp_dot_q8_0_cpu(fa->dk, &sc, kr, qh);
			else
				dot_f16(fa->dk, &sc, kr, qh);
			sc = sc * fa->scale;
			if (sc > m[h]) {
				ms = expf(m[h] - sc);
				m[h] = sc;
				acc_scale(fa, a, ms);
			} else {
				vs = expf(sc - m[h]);
			}
			acc_mad(fa, a, vr, vs);
			s[h] = s[h] * ms + vs;
		}
	}
}

void q42_llamacpp_fa_one(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
			 const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n,
			 float *m, float *s, void *acc, uint64_t acc_stride)
{
	fa_one_with(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n, m, s, acc, acc_stride, q42_llamacpp_dot_f16);
}

void q42_llamacpp_hw_fa_one(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
			    const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n,
			    float *m, float *s, void *acc, uint64_t acc_stride)
{
	fa_one_with(fa, n_q, q, q_stride, k, k_stride, v, v_stride, n, m, s, acc, acc_stride, q42_llamacpp_hw_dot_f16);
}

void q42_llamacpp_fa_one_end(const q42_llamacpp_fa *fa, float s, const void *acc, float *out)
{
	const float inv = s == 0.0f ? 0.0f : 1.0f / s;
	for (int64_t d = 0; d < fa->dv; d++)
		out[d] = (fa->kv_type == Q42_DTYPE_Q8_0 ? ((const float *)acc)[d]
							 : h2f((const uint8_t *)acc + 2 * d)) * inv;
}

uint64_t q42_llamacpp_fa_tile_work(const q42_llamacpp_fa *fa)
{
	return (uint64_t)Q42_FA_TILE * (uint64_t)(fa->dk + fa->dv + Q42_FA_TILE);
}

/* The tiled form; hw: the haswell build's ggml_vec_soft_max_f32 (8-lane
 * chunks of its own vector exp, hsum_float_8) instead of the AVX-512
 * build's (16 lanes, _mm512_reduce_add_ps). */
static void fa_tile_with(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
			 uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv, const int32_t *lo,
			 const int32_t *hi, float *m, float *s, float *acc, bool hw)
{
	enum { T = Q42_FA_TILE };
	const int w = hw ? 8 : 16;
	for (int64_t r = 0; r < n_q; r++) {
		float p[T], tmax = -INFINITY;
		for (int64_t j = 0; j < T; j++) {
			p[j] = -INFINITY;
			if (j >= n_kv || j < lo[r] || j >= hi[r])
				continue;
			const uint8_t *kr = k + (uint64_t)j * k_stride;
			float a = 0.0f;
			for (int64_t d = 0; d < fa->dk; d++)
				a = fmaf(h2f(kr + 2 * d), qt[d * T + r], a);
			/* the mask's 0 is added as ggml adds it */
			p[j] = a * fa->scale + 0.0f;
			tmax = p[j] > tmax ? p[j] : tmax;
		}
		if (tmax == -INFINITY)
			continue;
		const float mnew = fmaxf(m[r], tmax);
		if (mnew > m[r]) {
			const float ms = expf(m[r] - mnew);
			for (int64_t d = 0; d < fa->dv; d++)
				acc[d * T + r] *= ms;
			s[r] *= ms;
		}
		m[r] = mnew;
		double sum = 0.0;
		for (int64_t c = 0; c < T; c += w) {
			float e[16];
			for (int l = 0; l < w; l++)
				e[l] = p[c + l] = hw ? q42_llamacpp_hw_v_expf(p[c + l] - mnew) : q42_llamacpp_v_expf(p[c + l] - mnew);
			sum += (double)(hw ? q42_llamacpp_hsum8(e) : q42_llamacpp_reduce16(e));
		}
		s[r] = (float)((double)s[r] + sum);
		for (int64_t d = 0; d < fa->dv; d++) {
			float a = acc[d * T + r];
			for (int64_t j = 0; j < n_kv; j++)
				a = fmaf(h2f(v + (uint64_t)j * v_stride + 2 * d), p[j], a);
			acc[d * T + r] = a;
		}
	}
}

void q42_llamacpp_fa_tile(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
			  uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv, const int32_t *lo,
			  const int32_t *hi, float *m, float *s, float *acc, float *work)
{
	(void)work;
	fa_tile_with(fa, n_q, qt, k, k_stride, v, v_stride, n_kv, lo, hi, m, s, acc, false);
}

void q42_llamacpp_hw_fa_tile(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
			     uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv, const int32_t *lo,
			     const int32_t *hi, float *m, float *s, float *acc, float *work)
{
	(void)work;
	fa_tile_with(fa, n_q, qt, k, k_stride, v, v_stride, n_kv, lo, hi, m, s, acc, true);
}

void q42_llamacpp_fa_tile_end(const q42_llamacpp_fa *fa, int64_t r, const float *s, const float *acc,
			      float *out)
{
	const float inv = s[r] == 0.0f ? 0.0f : 1.0f / s[r];
	for (int64_t d = 0; d < fa->dv; d++)
		out[d] = acc[d * Q42_FA_TILE + r] * inv;
}
