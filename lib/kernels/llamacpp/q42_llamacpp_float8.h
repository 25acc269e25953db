/* llamacpp/q42_llamacpp_float8.h -- internal to lib/kernels: the float
 * operations of llama.cpp's haswell CPU variant (AVX2 without AVX-512),
 * which sum in eight lanes where the AVX-512 builds sum in sixteen and
 * take another vector exp. Written once and compiled twice, as
 * llamacpp/q42_llamacpp_float.h is (and after it, whose element readers
 * it uses): plainly in llamacpp/q42_llamacpp.c (the definitions) and with
 * FMA enabled in x86/q42_x86_rowops.c, where each fmaf is one instruction.
 *
 * Before including, define CF8(name) (the function name for name); CF_ATTR
 * and CF_STATIC as for q42_llamacpp_float.h. With CF8_NO_DOTS defined only
 * the rarer operations are built (the FMA build: x86 has its own forms of
 * the products, softmax and SwiGLU).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "common/q42_le.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_kernels.h"

/* ---- reductions -------------------------------------------------------- */

/* GGML_F32x8_REDUCE's last step: the halves added, then two hadds:
 * (t0 + t1) + (t2 + t3) of t_i = v_i + v_i+4. */
CF_STATIC float cf8_reduce_hadd(const float v[8])
{
	float t[4];
	for (int i = 0; i < 4; i++)
		t[i] = v[i] + v[i + 4];
	return (t[0] + t[1]) + (t[2] + t[3]);
}

/* hsum_float_8 (and llamafile's hsum of a __m256, and the AVX2 softmax's
 * chunk sum): the halves added, then (t0 + t2) + (t1 + t3). */
CF_STATIC float cf8_hsum(const float v[8])
{
	float t[4];
	for (int i = 0; i < 4; i++)
		t[i] = v[i] + v[i + 4];
	return (t[0] + t[2]) + (t[1] + t[3]);
}

/* ---- products ---------------------------------------------------------- */

/* ggml_vec_dot_f32 / _f16 of the AVX2 build on rows llama.cpp pads with
 * zeros (a multiple of 64): four 8-lane accumulators over 32-element
 * steps, element k in accumulator (k % 32) / 8, lane k % 8; folded as
 * s0 + s2, s1 + s3, then s0 + s1, and reduced as GGML_F32x8_REDUCE. */
CF_STATIC float cf8_dot_steps(int64_t n, const void *w, const q42_llamacpp_vlayout *lay, const void *x, bool f16)
{
	float s[4][8] = {{0}};
	for (int64_t k = 0; k < n; k++) {
		const int j = (int)((k % 32) / 8), l = (int)(k % 8);
		s[j][l] = fmaf(cf_at_step(w, k, lay, f16), cf_at(x, k, f16), s[j][l]);
	}
	for (int l = 0; l < 8; l++) {
		s[0][l] = s[0][l] + s[2][l];
		s[1][l] = s[1][l] + s[3][l];
	}
	for (int l = 0; l < 8; l++)
		s[0][l] = s[0][l] + s[1][l];
	return cf8_reduce_hadd(s[0]);
}

/* llamafile's tinyBLAS<8> (f32, or f16 x f16): element k in lane k % 8,
 * one fma each, then hsum. */
CF_STATIC float cf8_dot_lanes(int64_t n, const void *w, const q42_llamacpp_vlayout *lay, const void *x, bool f16)
{
	float lanes[8] = {0};
	for (int64_t k = 0; k < n; k++)
		lanes[k % 8] = fmaf(cf_at_step(w, k, lay, f16), cf_at(x, k, f16), lanes[k % 8]);
	return cf8_hsum(lanes);
}

#define CF8_DOTS(NAME, FOLD, F16)                                                                 \
	CF_ATTR void CF8(NAME)(int64_t n, float *out, const void *w, const void *x)               \
	{                                                                                         \
		const q42_llamacpp_vlayout lay = cf_contiguous(0, F16);                             \
		*out = FOLD(n, w, &lay, x, F16);                                                  \
	}                                                                                         \
	CF_ATTR void CF8(NAME##_vrows)(int64_t n, int64_t n_rows, float *out, const void *w,      \
				       const q42_llamacpp_vlayout *lay, const void *x)              \
	{                                                                                         \
		for (int64_t r = 0; r < n_rows; r++)                                              \
			out[r] = FOLD(n, (const uint8_t *)w + (uint64_t)r * lay->stride, lay, x, F16);   \
	}                                                                                         \
	CF_ATTR void CF8(NAME##_rows)(int64_t n, int64_t n_rows, float *out, const void *w,       \
				      uint64_t w_stride, const void *x)                           \
	{                                                                                         \
		const q42_llamacpp_vlayout lay = cf_contiguous(w_stride, F16);                      \
		CF8(NAME##_vrows)(n, n_rows, out, w, &lay, x);                                    \
	}
#ifndef CF8_NO_DOTS
CF8_DOTS(dot_f32, cf8_dot_steps, false)
CF8_DOTS(dot_f32_lanes, cf8_dot_lanes, false)
CF8_DOTS(dot_f16_pad, cf8_dot_steps, true)
CF8_DOTS(dot_f16_lanes, cf8_dot_lanes, true)
#endif
#undef CF8_DOTS

/* ggml_vec_dot_f16 on a row of its true length: the whole 32-steps as
 * above, then the leftover products added in double. */
CF_ATTR void CF8(dot_f16)(int64_t n, float *out, const void *w, const void *x)
{
	const int64_t np = n & ~(int64_t)31;
	const q42_llamacpp_vlayout lay = cf_contiguous(0, true);
	double sum = (double)cf8_dot_steps(np, w, &lay, x, true);
	for (int64_t k = np; k < n; k++)
		sum += (double)(cf_at(w, k, true) * cf_at(x, k, true));
	*out = (float)sum;
}

CF_ATTR void CF8(dot_f16_rows)(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
			       const void *x)
{
	for (int64_t r = 0; r < n_rows; r++)
		CF8(dot_f16)(n, out + r, (const uint8_t *)w + (uint64_t)r * w_stride, x);
}

/* ggml_vec_dot_f32 on a row of its true length: the whole 32-steps, then
 * the leftovers as this build compiles its loop (rounded products added
 * in order, the last n % 4 fused). */
CF_ATTR void CF8(dot_f32_vd)(int64_t n, float *out, const void *w, const void *x)
{
	const int64_t np = n & ~(int64_t)31;
	const q42_llamacpp_vlayout lay = cf_contiguous(0, false);
	*out = cf_leftovers(cf8_dot_steps(np, w, &lay, x, false), w, x, np, n, 4);
}

CF_ATTR void CF8(dot_f32_vd_cols)(int64_t n, int64_t n_cols, float *out, const float *w, int64_t col_stride,
				  const float *x)
{
	for (int64_t c = 0; c < n_cols; c++)
		CF8(dot_f32_vd)(n, out + c, w + c * col_stride, x);
}

/* q42_llamacpp_f32_t16_axpy's product (n < 64 columns, rows packed in
 * groups of 16) with this build's ggml_vec_dot_f32: a row of 32 or more
 * values has one whole step before its leftovers. */
CF_ATTR void CF8(f32_t16_axpy)(int64_t n, int64_t n_rows, const float *wp, const float *x, float scale,
			       float *y)
{
	float row[64];
	for (int64_t r = 0; r < n_rows; r++) {
		const float *g = wp + (uint64_t)(r / 16 * 16 * n + r % 16);
		for (int64_t k = 0; k < n && k < 64; k++)
			row[k] = g[16 * k];
		float s;
		CF8(dot_f32_vd)(n < 64 ? n : 64, &s, row, x);
		const float f = s * scale;
		y[r] = y[r] + f;
	}
}

/* BF16 of the AVX2 build. ggml_vec_dot_bf16: four 8-lane accumulators
 * over 32-element steps (each product of two bf16 is exact, so mul then
 * add is one fma), folded (c1 + c3) + (c2 + c4), hsum, then the n % 32
 * left in double. llamafile's tinyBLAS<8> (n a multiple of 8): one
 * accumulator, element k in lane k % 8, hsum. No subnormal flushing:
 * the values are widened, not fed to VDPBF16PS. */
CF_STATIC float cf8_bf16(const uint8_t *p, int64_t k)
{
	return q42_bf16_to_f32(q42_ld16(p + 2 * k));
}

#ifndef CF8_NO_DOTS
CF_ATTR void CF8(dot_bf16)(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float c[4][8] = {{0}};
	int64_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int j = 0; j < 4; j++)
			for (int l = 0; l < 8; l++)
				c[j][l] = fmaf(cf8_bf16(a, i + 8 * j + l), cf8_bf16(b, i + 8 * j + l), c[j][l]);
	for (int l = 0; l < 8; l++)
		c[0][l] = (c[0][l] + c[2][l]) + (c[1][l] + c[3][l]);
	double sum = (double)cf8_hsum(c[0]);
	for (; i < n; i++)
		sum += (double)(cf8_bf16(a, i) * cf8_bf16(b, i));
	*out = (float)sum;
}

CF_ATTR void CF8(dot_bf16_tb)(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t k = 0; k < n; k++)
		lanes[k % 8] = fmaf(cf8_bf16(a, k), cf8_bf16(b, k), lanes[k % 8]);
	*out = cf8_hsum(lanes);
}

#endif

/* ---- float ops --------------------------------------------------------- */

CF_STATIC uint32_t cf8_bits(float v)
{
	uint32_t u;
	memcpy(&u, &v, sizeof u);
	return u;
}

CF_STATIC float cf8_float(uint32_t u)
{
	float v;
	memcpy(&v, &u, sizeof v);
	return v;
}

/* ggml_v_expf of the AVX2 build (not the AVX-512 one's polynomial: the
 * constant term is left out and 2^n applied as k + j k): for |n| <= 126
 * fma(j, k, k) with k = 2^n from z's bits; past that the product of two
 * scales, and past 192 zero or infinity. */
CF_STATIC float cf8_v_expf(float x)
{
	const float r = 0x1.8p23f;
	const float z = fmaf(x, 0x1.715476p+0f, r);
	const float n = z - r;
	const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
	const uint32_t e = cf8_bits(z) << 23;
	const float k = cf8_float(e + cf8_bits(1.0f));
	const float u = b * b;
	const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
			     u, 0x1.ffffecp-1f * b);
	if (!(fabsf(n) > 126.0f)) /* NaN too, as _CMP_GT_OQ */
		return fmaf(k, j, k);
	const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
	const float s1 = cf8_float(g + 0x7f000000u), s2 = cf8_float(e - g);
	if (fabsf(n) > 192.0f)
		return s1 * s1;
	return fmaf(s2, j, s2) * s1;
}

#ifndef CF8_NO_DOTS
/* ggml_vec_soft_max_f32 of the AVX2 build + soft_max's normalisation,
 * over a row llama.cpp pads with -inf to a multiple of 16: whole 8-lane
 * chunks, each chunk's sum hsum'd and added in double. */
CF_ATTR void CF8(softmax)(int64_t n, float *y, const float *x)
{
	float max = -INFINITY;
	for (int64_t i = 0; i < n; i++)
		max = max > x[i] ? max : x[i];
	double sum = 0.0;
	for (int64_t i = 0; i < n; i += 8) {
		float v[8] = {0};
		for (int l = 0; l < 8 && i + l < n; l++)
			y[i + l] = v[l] = cf8_v_expf(x[i + l] - max);
		sum += (double)cf8_hsum(v);
	}
	const float inv = (float)(1.0 / sum);
	for (int64_t i = 0; i < n; i++)
		y[i] *= inv;
}

#endif

/* The same on a row of exactly n (an encoder's): the n % 8 after the whole
 * chunks with expf, added one by one. */
CF_ATTR void CF8(softmax_unpadded)(int64_t n, float *y, const float *x)
{
	cf_softmax_exact(n, y, x, 8, cf8_v_expf, cf8_hsum);
}

#ifndef CF8_NO_DOTS
/* ggml_vec_swiglu_f32 of the AVX2 build: x / (1 + v_expf(0 - x)) * g in
 * 8-element chunks, ggml's scalar SiLU (expf) for the rest. */
CF_ATTR void CF8(swiglu)(int64_t n, float *y, const float *x, const float *g)
{
	const int64_t nv = n - n % 8;
	for (int64_t i = 0; i < nv; i++)
		y[i] = x[i] / (1.0f + cf8_v_expf(0.0f - x[i])) * g[i];
	for (int64_t i = nv; i < n; i++)
		y[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
}
#endif
