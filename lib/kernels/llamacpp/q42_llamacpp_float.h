/* llamacpp/q42_llamacpp_float.h -- internal to lib/kernels: the float row operations
 * of q42_llamacpp (f32 dot products, softmax, SwiGLU, RoPE) written once and
 * compiled twice: plainly in llamacpp/q42_llamacpp.c (the scalar definitions) and with
 * FMA enabled in x86/q42_x86_rowops.c (the AVX2 table), where each fmaf is one
 * instruction instead of a libm call. fmaf is exact, so both give the same
 * bits; the including file turns floating-point contraction off.
 *
 * Before including, define CF(name) (the function name for name),
 * CF_ATTR (attributes of the exported functions) and CF_STATIC (of the
 * file's own helpers). Included once per file. With CF_NO_DOTS defined the
 * products are left out (the AVX2 table has its own, in 8-lane halves).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include "common/q42_le.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_kernels.h"

/* ---- float products ---------------------------------------------------- */

/* _mm512_reduce_add_ps: lanes i and i+8, then i+4, i+2, i+1. */
CF_STATIC float cf_reduce16(const float v[16])
{
	float t[8];
	for (int i = 0; i < 8; i++)
		t[i] = v[i] + v[i + 8];
	for (int i = 0; i < 4; i++)
		t[i] = t[i] + t[i + 4];
	for (int i = 0; i < 2; i++)
		t[i] = t[i] + t[i + 2];
	return t[0] + t[1];
}

/* Element k of a row of f32 (f16 false) or f16 (true) values; the f16
 * to f32 conversion is exact. */
CF_STATIC float cf_at(const void *p, int64_t k, bool f16)
{
	return f16 ? q42_f16_to_f32(q42_ld16((const uint8_t *)p + 2 * k)) : ((const float *)p)[k];
}

/* Element k of a stepped row (q42_llamacpp_vlayout). */
CF_STATIC float cf_at_step(const void *p, int64_t k, const q42_llamacpp_vlayout *lay, bool f16)
{
	const uint64_t s = (uint64_t)(k / 64);
	return cf_at((const uint8_t *)p + s / lay->per * lay->chunk + s % lay->per * lay->step, k % 64, f16);
}

/* ggml_vec_dot_f32's leftover loop (elements i0..n-1 after its whole
 * steps) as llama.cpp's x86 builds compile it: vectorised in chunks of
 * `chunk` products and smaller, each product rounded and added to the sum
 * in order, then the last (n - i0) % chunk elements as scalar fused
 * multiply-adds (read in ggml_vec_dot_f32 of libggml-cpu-zen4.so and
 * -sapphirerapids.so: chunk 8; of -haswell.so: chunk 4). */
CF_STATIC float cf_leftovers(float s, const float *a, const float *b, int64_t i0, int64_t n, int64_t chunk)
{
	const int64_t nu = n - (n - i0) % chunk;
	for (int64_t i = i0; i < nu; i++)
		s = s + a[i] * b[i];
	for (int64_t i = nu; i < n; i++)
		s = fmaf(a[i], b[i], s);
	return s;
}

/* Contiguous rows as stepped ones: one step per chunk, chunks 64
 * elements' bytes apart. */
CF_STATIC q42_llamacpp_vlayout cf_contiguous(uint64_t stride, bool f16)
{
	const q42_llamacpp_vlayout lay = {stride, 0, f16 ? 128u : 256u, 1};
	return lay;
}

/* ggml_vec_dot_f32 (and, f16 true, ggml_vec_dot_f16) of the AVX-512
 * build, for rows that llama.cpp pads with zeros to a multiple of 64 (its
 * KV cache length is a multiple of 256): four 16-lane accumulators over
 * 64-element steps, folded as in q42_llamacpp_dot_f16; a partial last step
 * only adds zero products there, so its elements go to their lanes too.
 * w is a stepped row; x is contiguous. */
CF_STATIC float cf_dot_steps(int64_t n, const void *w, const q42_llamacpp_vlayout *lay, const void *x, bool f16)
{
	float s[4][16] = {{0}};
	for (int64_t k = 0; k < n; k++) {
		const int j = (int)((k % 64) / 16), l = (int)(k % 16);
		s[j][l] = fmaf(cf_at_step(w, k, lay, f16), cf_at(x, k, f16), s[j][l]);
	}
	for (int l = 0; l < 16; l++) {
		s[0][l] = s[0][l] + s[2][l];
		s[1][l] = s[1][l] + s[3][l];
	}
	for (int l = 0; l < 16; l++)
		s[0][l] = s[0][l] + s[1][l];
	return cf_reduce16(s[0]);
}

/* llamafile's tinyBLAS f32 (f16 true: f16 x f16) kernel of the AVX-512
 * build, one output element: 16 FMA lanes, element k in lane k % 16, then
 * the lanes reduced. Zero-padded rows, and w's steps, as above. */
CF_STATIC float cf_dot_lanes(int64_t n, const void *w, const q42_llamacpp_vlayout *lay, const void *x, bool f16)
{
	float lanes[16] = {0};
	for (int64_t k = 0; k < n; k++)
		lanes[k % 16] = fmaf(cf_at_step(w, k, lay, f16), cf_at(x, k, f16), lanes[k % 16]);
	return cf_reduce16(lanes);
}

/* Each product for one row, for n_rows rows w_stride bytes apart, and for
 * stepped rows. */
#define CF_DOTS(NAME, FOLD, F16)                                                                  \
	CF_ATTR void CF(NAME)(int64_t n, float *out, const void *w, const void *x)                \
	{                                                                                         \
		const q42_llamacpp_vlayout lay = cf_contiguous(0, F16);                             \
		*out = FOLD(n, w, &lay, x, F16);                                                  \
	}                                                                                         \
	CF_ATTR void CF(NAME##_vrows)(int64_t n, int64_t n_rows, float *out, const void *w,       \
				      const q42_llamacpp_vlayout *lay, const void *x)               \
	{                                                                                         \
		for (int64_t r = 0; r < n_rows; r++)                                              \
			out[r] = FOLD(n, (const uint8_t *)w + (uint64_t)r * lay->stride, lay, x, F16);   \
	}                                                                                         \
	CF_ATTR void CF(NAME##_rows)(int64_t n, int64_t n_rows, float *out, const void *w,        \
				     uint64_t w_stride, const void *x)                            \
	{                                                                                         \
		const q42_llamacpp_vlayout lay = cf_contiguous(w_stride, F16);                      \
		CF(NAME##_vrows)(n, n_rows, out, w, &lay, x);                                     \
	}
#ifndef CF_NO_DOTS
CF_DOTS(dot_f32, cf_dot_steps, false)
CF_DOTS(dot_f32_lanes, cf_dot_lanes, false)
CF_DOTS(dot_f16_pad, cf_dot_steps, true)
CF_DOTS(dot_f16_lanes, cf_dot_lanes, true)
#endif
#undef CF_DOTS

/* ---- float ops --------------------------------------------------------- */

/* ggml_v_expf (AVX-512): a degree-5 polynomial on the reduced argument,
 * scaled by 2^n; |n| > 192 gives 0 or infinity. Not expf: it differs in
 * the last bit now and then, which is why llama.cpp's softmax and SiLU
 * need it. */
CF_STATIC float cf_v_expf(float x)
{
	const float r = 0x1.8p23f;
	const float z = fmaf(x, 0x1.715476p+0f, r);
	const float n = z - r;
	const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
	const float u = b * b;
	const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
				  fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
			     u, fmaf(0x1.ffffecp-1f, b, 1.0f));
	if (fabsf(n) > 192.0f) /* also false for NaN, as _CMP_GT_OQ */
		return n <= 0.0f ? 0.0f : INFINITY;
	if (isnan(n)) /* NaN in, NaN out, as the vector form; (int)NaN is undefined */
		return j;
	return ldexpf(j, (int)n);
}

/* ggml_vec_soft_max_f32 + soft_max's normalisation on a row of exactly n
 * (an encoder's, which has no cache to pad it), for a build of w-lane
 * vectors: whole chunks through its vector exp, each chunk's sum reduced
 * and added in double, the n % w left with expf and added one by one. */
CF_STATIC void cf_softmax_exact(int64_t n, float *y, const float *x, int w, float (*vexp)(float),
				float (*reduce)(const float *))
{
	const int64_t nv = n - n % w;
	float max = -INFINITY;
	for (int64_t i = 0; i < n; i++)
		max = max > x[i] ? max : x[i];
	double sum = 0.0;
	for (int64_t i = 0; i < nv; i += w) {
		for (int l = 0; l < w; l++)
			y[i + l] = vexp(x[i + l] - max);
		sum += (double)reduce(y + i);
	}
	for (int64_t i = nv; i < n; i++) {
		y[i] = expf(x[i] - max);
		sum += (double)y[i];
	}
	const float inv = (float)(1.0 / sum);
	for (int64_t i = 0; i < n; i++)
		y[i] *= inv;
}

/* ggml_vec_soft_max_f32 + the normalisation of ggml's soft_max, over a row
 * llama.cpp pads with -inf to a multiple of 16: whole 16-lane chunks, each
 * chunk's sum reduced as _mm512_reduce_add_ps and added in double. */
CF_ATTR void CF(softmax)(int64_t n, float *y, const float *x)
{
	float max = -INFINITY;
	for (int64_t i = 0; i < n; i++)
		max = max > x[i] ? max : x[i];
	double sum = 0.0;
	for (int64_t i = 0; i < n; i += 16) {
		float v[16] = {0};
		for (int l = 0; l < 16 && i + l < n; l++)
			y[i + l] = v[l] = cf_v_expf(x[i + l] - max);
		sum += (double)cf_reduce16(v);
	}
	const float inv = (float)(1.0 / sum);
	for (int64_t i = 0; i < n; i++)
		y[i] *= inv;
}

/* ggml_vec_swiglu_f32: x / (1 + v_expf(0 - x)) * g in 16-element chunks,
 * ggml's scalar SiLU (expf) for the rest. */
CF_ATTR void CF(swiglu)(int64_t n, float *y, const float *x, const float *g)
{
	const int64_t nv = n - n % 16;
	for (int64_t i = 0; i < nv; i++)
		y[i] = x[i] / (1.0f + cf_v_expf(0.0f - x[i])) * g[i];
	for (int64_t i = nv; i < n; i++)
		y[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
}

CF_ATTR void CF(rope)(int64_t n_rot, float *x, const float *cache, bool neox)
{
	for (int64_t i0 = 0; i0 < n_rot; i0 += 2) {
		const int64_t a = neox ? i0 / 2 : i0, b = neox ? i0 / 2 + n_rot / 2 : i0 + 1;
		const float c = cache[i0], s = cache[i0 + 1], x0 = x[a], x1 = x[b];
		x[a] = fmaf(x0, c, -(x1 * s));
		x[b] = fmaf(x0, s, x1 * c);
	}
}
