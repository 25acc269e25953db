/* llamacpp/q42_llamacpp.c -- scalar C that rounds as llama.cpp's x86 build does
 * (AMX buffer kernels and AVX-512 vec_dot); see q42_llamacpp.h for when
 * llama.cpp takes each path.
 *
 * Integer block sums are exact in any order, so only the float steps are
 * spelled out: one fmaf per block (and one more for the k-quant mins),
 * 16-lane FMA accumulators reduced by halving (8, 4, 2, 1) as
 * _mm512_reduce_add_ps does. Every fused step is an explicit fmaf; the
 * file must never rely on the compiler contracting a*b+c (it is built with
 * contraction off, and fmaf is exact either way). Reads only n elements'
 * worth of blocks.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <string.h>
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_kernels.h"
#include "common/q42_types.h"
#include "common/q42_le.h"
#include "kernels/llamacpp/q42_llamacpp_impl.h"
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_ops.h"

/* ggml block layouts (ggml-common.h): sizes and field offsets. */
enum {
	QK = 32, QK_K = 256,
	B_Q4_0 = 18, B_Q4_1 = 20, B_Q8_0 = 34, B_Q8_1 = 36, B_Q5_0 = 22, B_Q5_1 = 24,
	B_Q4_K = 144, Q4K_D = 0, Q4K_DMIN = 2, Q4K_SCALES = 4, Q4K_QS = 16,
	B_Q5_K = 176, Q5K_QH = 16, Q5K_QS = 48,
	B_Q6_K = 210, Q6K_QL = 0, Q6K_QH = 128, Q6K_SCALES = 192, Q6K_D = 208,
	B_Q8_K = 292, Q8K_D = 0, Q8K_QS = 4, Q8K_BSUMS = 260,
};

static float half_at(const uint8_t *p)
{
	return q42_f16_to_f32(q42_ld16(p));
}

/* ---- activations ------------------------------------------------------- */

/* One block of llama.cpp's x86 Q8_0 / Q8_1 quantizers: the quants into
 * qs, the scale d (unrounded) returned, the quants' sum in *sum. */
static float quant_block_x86(const float *src, uint8_t *qs, int32_t *sum)
{
	float amax = 0.0f;
	for (int j = 0; j < QK; j++) {
		const float a = fabsf(src[j]);
		amax = a > amax ? a : amax;
	}
	const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
	*sum = 0;
	for (int j = 0; j < QK; j++) {
		/* nearbyintf rounds half to even in the default mode, as
		 * _mm256_round_ps(_MM_ROUND_NEAREST); the packs instructions
		 * saturate */
		float r = nearbyintf(src[j] * id);
		/* a NaN product (infinity or NaN in the block) stores 0, as
		 * the SIMD quantizers do; converting NaN to an integer would be
		 * undefined */
		r = isnan(r) ? 0.0f : r > 127.0f ? 127.0f : r < -128.0f ? -128.0f : r;
		qs[j] = (uint8_t)(int8_t)r;
		*sum += (int8_t)qs[j];
	}
	return amax / 127.0f;
}

void q42_llamacpp_quantize_q8_0(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	int32_t sum;
	for (int64_t i = 0; i < n / QK; i++, src += QK, b += B_Q8_0)
		q42_st16(b, q42_f32_to_f16(quant_block_x86(src, b + 2, &sum)));
}

void q42_llamacpp_quantize_q8_1(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	int32_t sum;
	for (int64_t i = 0; i < n / QK; i++, src += QK, b += B_Q8_1) {
		const float d = quant_block_x86(src, b + 4, &sum);
		q42_st16(b, q42_f32_to_f16(d));
		q42_st16(b + 2, q42_f32_to_f16(d * (float)sum));
	}
}

void q42_llamacpp_quantize_f16(const float *src, void *dst, int64_t n)
{
	uint8_t *p = dst;
	for (int64_t i = 0; i < n; i++)
		q42_st16(p + 2 * i, q42_f32_to_f16(src[i]));
}

/* ---- AMX / VNNI block products ----------------------------------------- */

void q42_llamacpp_dot_q4_0(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float acc = 0.0f;
	for (int64_t i = 0; i < n / QK; i++, a += B_Q4_0, b += B_Q8_0) {
		const int8_t *y = (const int8_t *)(b + 2);
		int32_t sumi = 0;
		for (int j = 0; j < QK / 2; j++)
			sumi += ((a[2 + j] & 0xF) - 8) * y[j] + ((a[2 + j] >> 4) - 8) * y[j + QK / 2];
		acc = fmaf((float)sumi, half_at(a) * half_at(b), acc);
	}
	*out = acc;
}

/* hsum_float_8 of ggml's x86 code: lane l + lane l+4, then (0+2) + (1+3). */
static float hsum_lanes8(const float lanes[8])
{
	float r[4];
	for (int l = 0; l < 4; l++)
		r[l] = lanes[l + 4] + lanes[l];
	return (r[0] + r[2]) + (r[1] + r[3]);
}

/* IQ4_NL's exact block sum: each nibble's grid value times y */
static int32_t iq4nl_block_sum(const uint8_t *a, const int8_t *y)
{
	int32_t sumi = 0;
	for (int j = 0; j < QK / 2; j++)
		sumi += q42_iq4nl_values[a[2 + j] & 0xF] * y[j] + q42_iq4nl_values[a[2 + j] >> 4] * y[j + QK / 2];
	return sumi;
}

void q42_llamacpp_dot_iq4_nl(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float acc = 0.0f;
	for (int64_t i = 0; i < n / QK; i++, a += B_Q4_0, b += B_Q8_0)
		acc = fmaf((float)iq4nl_block_sum(a, (const int8_t *)(b + 2)), half_at(a) * half_at(b), acc);
	*out = acc;
}

/* ggml's x86 vec_dot (accs 2: even blocks in one accumulator, odd in the
 * other, an odd last block added after the reduction) or llamafile's
 * tinyBLAS (accs 1: every block in one accumulator): eight lanes of
 * four-element sums, one fma per block and lane, hsum_float_8. */
static float iq4nl_lanes(int64_t n, const uint8_t *a, const uint8_t *b, int accs)
{
	const int64_t nb = n / QK, laned = accs == 2 ? nb / 2 * 2 : nb;
	float acc[2][8] = {{0}};
	int64_t i = 0;
	for (; i < laned; i++, a += B_Q4_0, b += B_Q8_0) {
		const int8_t *y = (const int8_t *)(b + 2);
		const float d = half_at(a) * half_at(b);
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int e = 4 * l; e < 4 * l + 4; e++) {
				const int nib = e < 16 ? a[2 + e] & 0x0F : a[2 + e - 16] >> 4;
				s += q42_iq4nl_values[nib] * y[e];
			}
			acc[i % accs][l] = fmaf((float)s, d, acc[i % accs][l]);
		}
	}
	float r[4];
	for (int l = 0; l < 4; l++)
		r[l] = (acc[0][l + 4] + acc[1][l + 4]) + (acc[0][l] + acc[1][l]);
	float sum = (r[0] + r[2]) + (r[1] + r[3]);
	/* the compiler fuses vec_dot's scalar tail: fma(d, sumi, sum) */
	for (; i < nb; i++, a += B_Q4_0, b += B_Q8_0)
		sum = fmaf(half_at(b) * half_at(a), (float)iq4nl_block_sum(a, (const int8_t *)(b + 2)), sum);
	return sum;
}

void q42_llamacpp_dot_iq4_nl_cpu(int64_t n, float *out, const void *w, const void *x)
{
	*out = iq4nl_lanes(n, w, x, 2);
}

void q42_llamacpp_dot_iq4_nl_tb(int64_t n, float *out, const void *w, const void *x)
{
	*out = iq4nl_lanes(n, w, x, 1);
}

void q42_llamacpp_dot_iq4_xs(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float acc = 0.0f;
	for (int64_t i = 0; i < n / QK_K; i++, a += IQ4_XS_BYTES, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		int32_t isum = 0;
		for (int ib = 0; ib < QK_K / 32; ib++) {
			const uint8_t *qs = a + IQ4_XS_QS + 16 * ib;
			int32_t s = 0;
			for (int j = 0; j < 16; j++)
				s += q42_iq4nl_values[qs[j] & 0xF] * y[32 * ib + j] +
				     q42_iq4nl_values[qs[j] >> 4] * y[32 * ib + j + 16];
			isum += q42_iq4xs_scale(a, ib) * s;
		}
		acc = fmaf((float)isum, half_at(a) * q42_ldf32(b + Q8K_D), acc);
	}
	*out = acc;
}

/* ggml_vec_dot_iq4_xs_q8_K of the x86 build (AVX2 code): per super-block
 * eight int32 lanes, lane l the exact sum over the eight 32-value
 * sub-blocks of the sub-block's scale times its values 4l..4l+3 . y (the
 * low nibbles are values 0..15, the high ones 16..31); one fma per lane
 * with d_w * d_x (d_x is f32: the product rounds); hsum_float_8. */
void q42_llamacpp_dot_iq4_xs_cpu(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / QK_K; i++, a += IQ4_XS_BYTES, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		const float d = half_at(a) * q42_ldf32(b + Q8K_D);
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int ib = 0; ib < QK_K / 32; ib++) {
				const uint8_t *qs = a + IQ4_XS_QS + 16 * ib;
				int32_t t = 0;
				for (int e = 4 * l; e < 4 * l + 4; e++)
					t += q42_iq4nl_values[e < 16 ? qs[e] & 0xF : qs[e - 16] >> 4] * y[32 * ib + e];
				s += q42_iq4xs_scale(a, ib) * t;
			}
			lanes[l] = fmaf(d, (float)s, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes);
}

void q42_llamacpp_dot_q8_0(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float acc = 0.0f;
	for (int64_t i = 0; i < n / QK; i++, a += B_Q8_0, b += B_Q8_0) {
		const int8_t *p = (const int8_t *)(a + 2), *y = (const int8_t *)(b + 2);
		int32_t sumi = 0;
		for (int j = 0; j < QK; j++)
			sumi += p[j] * y[j];
		acc = fmaf((float)sumi, half_at(a) * half_at(b), acc);
	}
	*out = acc;
}

/* llama.cpp's AMX buffer for q4_1 (against Q8_1 from its x86 quantizer):
 * fma(sumi, d_w * d_x, acc), then fma(m_w, s_x, acc), per block. */
void q42_llamacpp_dot_q4_1(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float acc = 0.0f;
	for (int64_t i = 0; i < n / QK; i++, a += B_Q4_1, b += B_Q8_1) {
		const int8_t *y = (const int8_t *)(b + 4);
		int32_t sumi = 0;
		for (int j = 0; j < QK / 2; j++)
			sumi += (a[4 + j] & 0x0F) * y[j] + (a[4 + j] >> 4) * y[j + QK / 2];
		acc = fmaf((float)sumi, half_at(a) * half_at(b), acc);
		acc = fmaf(half_at(a + 2), half_at(b + 2), acc);
	}
	*out = acc;
}

/* ggml_vec_dot_q5_1_q8_1, ggml_vec_dot_q4_1_q8_1 and ggml_vec_dot_q5_0_q8_0,
 * AVX2 build (and llamafile's tinyBLAS for Q5_0, which rounds the same way
 * per output): eight float lanes, lane l taking the integer sum of
 * elements 4l..4l+3 of each block times d_w * d_x in one fma per block;
 * the min terms m_w * s_x (Q5_1, Q4_1) summed apart (each product is
 * exact: two f16 values); then the lanes reduced as hsum_float_8
 * ((l + l+4), then (0+2) + (1+3)) and the min sum added. */
static void dot_lanes8(int64_t n, float *out, const uint8_t *a, const uint8_t *b, enum lanes8_kind kind)
{
	/* Q5_0 and Q4_0 have no min; Q4_0 and Q4_1 no fifth bit */
	const bool q40 = kind == L8_Q4_0, q50 = kind == L8_Q5_0 || q40, fifth = kind != L8_Q4_1 && !q40;
	const int bytes = q40 ? B_Q4_0 : kind == L8_Q5_0 ? B_Q5_0 : fifth ? B_Q5_1 : B_Q4_1;
	const int qh = q50 ? 2 : 4, qs = q40 ? 2 : kind == L8_Q5_0 ? 6 : fifth ? 8 : 4;
	const int xbytes = q50 ? B_Q8_0 : B_Q8_1, xqs = q50 ? 2 : 4, offset = q40 ? 8 : q50 ? 16 : 0;
	float lanes[8] = {0};
	float summs = 0.0f;
	for (int64_t i = 0; i < n / QK; i++, a += bytes, b += xbytes) {
		const uint32_t h = fifth ? q42_ld32(a + qh) : 0;
		const int8_t *y = (const int8_t *)(b + xqs);
		const float dd = half_at(a) * half_at(b);
		if (!q50)
			summs = summs + half_at(a + 2) * half_at(b + 2);
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int e = 4 * l; e < 4 * l + 4; e++) {
				const int nib = e < 16 ? a[qs + e] & 0x0F : a[qs + e - 16] >> 4;
				s += ((nib | (int)((h >> e) & 1u) << 4) - offset) * y[e];
			}
			lanes[l] = fmaf((float)s, dd, lanes[l]);
		}
	}
	const float sum = hsum_lanes8(lanes);
	*out = q50 ? sum : sum + summs;
}

void q42_llamacpp_dot_q5_1(int64_t n, float *out, const void *w, const void *x)
{
	dot_lanes8(n, out, w, x, L8_Q5_1);
}

void q42_llamacpp_dot_q4_1_cpu(int64_t n, float *out, const void *w, const void *x)
{
	dot_lanes8(n, out, w, x, L8_Q4_1);
}

void q42_llamacpp_dot_q5_0(int64_t n, float *out, const void *w, const void *x)
{
	dot_lanes8(n, out, w, x, L8_Q5_0);
}

void q42_llamacpp_dot_q4_0_cpu(int64_t n, float *out, const void *w, const void *x)
{
	dot_lanes8(n, out, w, x, L8_Q4_0);
}

/* 6-bit scale and min of sub-block j of a q4_K block (12 packed bytes). */
static void k4_scale_min(int j, const uint8_t *q, int *sc, int *mn)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*mn = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
		*mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

static int16_t q8k_bsum(const uint8_t *b, int g)
{
	return (int16_t)q42_ld16(b + Q8K_BSUMS + 2 * g);
}

/* One scaled integer sum per super-block and one for the mins (the bsums
 * of the two 16-element halves of each 32-element group are added first,
 * as _mm_hadd_epi16 does), then two fmaf: d_w*d_x, and -(d_x*dmin_w). */
/* q4_K, or q5_K with its fifth bits (bit e / 32 of qh byte e % 32):
 * the same fields otherwise, quants at qs. */
static void dot_k4_amx(int64_t n, float *out, const uint8_t *a, const uint8_t *b, int bytes, int qs,
		       int qh)
{
	float acc = 0.0f;
	for (int64_t i = 0; i < n / QK_K; i++, a += bytes, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		int32_t isum = 0, summ = 0;
		for (int g = 0; g < 8; g++) {
			int sc, mn, s = 0;
			k4_scale_min(g, a + Q4K_SCALES, &sc, &mn);
			for (int e = g * 32; e < g * 32 + 32; e++) {
				const uint8_t q = a[qs + (e / 64) * 32 + e % 32];
				const int h = qh < 0 ? 0 : 16 * ((a[qh + e % 32] >> (e / 32)) & 1);
				s += (((e % 64) < 32 ? (q & 0xF) : (q >> 4)) + h) * y[e];
			}
			isum += sc * s;
			summ += mn * (int16_t)(q8k_bsum(b, 2 * g) + q8k_bsum(b, 2 * g + 1));
		}
		const float yd = q42_ldf32(b + Q8K_D);
		acc = fmaf((float)isum, half_at(a + Q4K_D) * yd, acc);
		acc = fmaf((float)summ, -(yd * half_at(a + Q4K_DMIN)), acc);
	}
	*out = acc;
}

void q42_llamacpp_dot_q4_k(int64_t n, float *out, const void *w, const void *x)
{
	dot_k4_amx(n, out, w, x, B_Q4_K, Q4K_QS, -1);
}

/* llama.cpp's AMX buffer takes q5_K like q4_K (same epilogue) */
void q42_llamacpp_dot_q5_k(int64_t n, float *out, const void *w, const void *x)
{
	dot_k4_amx(n, out, w, x, B_Q5_K, Q5K_QS, Q5K_QH);
}

void q42_llamacpp_dot_q6_k(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float acc = 0.0f;
	for (int64_t i = 0; i < n / QK_K; i++, a += B_Q6_K, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		int32_t isum = 0;
		for (int s = 0; s < 16; s++) {
			int32_t part = 0;
			for (int e = s * 16; e < s * 16 + 16; e++) {
				const int h = e / 128, q = (e % 128) / 32, l = e % 32;
				const uint8_t lo = a[Q6K_QL + h * 64 + (q % 2) * 32 + l];
				const int lo4 = q < 2 ? (lo & 0xF) : (lo >> 4);
				const int hi2 = (a[Q6K_QH + h * 32 + l] >> (2 * q)) & 3;
				part += ((lo4 | (hi2 << 4)) - 32) * y[e];
			}
			isum += (int8_t)a[Q6K_SCALES + s] * part;
		}
		acc = fmaf((float)isum, half_at(a + Q6K_D) * q42_ldf32(b + Q8K_D), acc);
	}
	*out = acc;
}

/* ---- the plain CPU buffer and CPU_REPACK on AVX-512 CPUs without AMX ---- */

/* ggml_vec_dot_q8_0_q8_0 of the x86 build, and llamafile's tinyBLAS
 * (tinyBLAS_Q0_AVX) for a pass, which rounds the same way per output:
 * eight float lanes, lane l taking the integer sum of elements 4l..4l+3
 * of each block times d_w * d_x in one fma per block, then hsum_float_8. */
void q42_llamacpp_dot_q8_0_cpu(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / QK; i++, a += B_Q8_0, b += B_Q8_0) {
		const int8_t *p = (const int8_t *)(a + 2), *y = (const int8_t *)(b + 2);
		const float dd = half_at(a) * half_at(b);
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int e = 4 * l; e < 4 * l + 4; e++)
				s += p[e] * y[e];
			lanes[l] = fmaf((float)s, dd, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes);
}

/* A step of CPU_REPACK's two chains (Q2_K, Q4_K): fma(isum, d_w * d_x,
 * acc) and fma(mins, dmin_w * d_x, accm), d_w and dmin_w the f16 fields at
 * d and dmin; the integer sums restart. */
static void repack_step(float *acc, float *accm, int32_t *isum, int32_t *mins, const uint8_t *d,
			const uint8_t *dmin, float dx)
{
	*acc = fmaf((float)*isum, half_at(d) * dx, *acc);
	*accm = fmaf((float)*mins, half_at(dmin) * dx, *accm);
	*isum = *mins = 0;
}

/* The gemv and gemm (_x4) entry points of a two-chain repacked kind. */
#define REPACK_DOTS(NAME, FN)                                                                        \
	void q42_llamacpp_dot_##NAME(int64_t n, float *out, const void *w, const void *x)          \
	{                                                                                          \
		FN(n, out, w, x, false);                                                           \
	}                                                                                          \
	void q42_llamacpp_dot_##NAME##_x4(int64_t n, float *out, const void *w, const void *x)     \
	{                                                                                          \
		FN(n, out, w, x, true);                                                            \
	}

/* llama.cpp's CPU_REPACK form of Q4_K (q4_K_8x8 kernels; AVX2 and AVX-512
 * CPUs without AMX, matrices with a multiple of 8 rows): per output two
 * accumulators, fma(isum, d_w * d_x, acc) and fma(mins, dmin_w * d_x,
 * accm), then acc - accm. Its gemv (one token, or a pass's tokens past the
 * last whole group of four) takes the sums per super-block; its gemm
 * (each group of four tokens) per 64 elements, four steps per
 * super-block. */
static void dot_q4k_repack(int64_t n, float *out, const uint8_t *a, const uint8_t *b, bool quarters)
{
	float acc = 0.0f, accm = 0.0f;
	for (int64_t i = 0; i < n / QK_K; i++, a += B_Q4_K, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		int32_t isum = 0, summ = 0;
		for (int g = 0; g < 8; g++) {
			int sc, mn, s = 0;
			k4_scale_min(g, a + Q4K_SCALES, &sc, &mn);
			for (int e = g * 32; e < g * 32 + 32; e++) {
				const uint8_t q = a[Q4K_QS + (e / 64) * 32 + e % 32];
				s += ((e % 64) < 32 ? (q & 0xF) : (q >> 4)) * y[e];
			}
			isum += sc * s;
			summ += mn * (q8k_bsum(b, 2 * g) + q8k_bsum(b, 2 * g + 1));
			if (quarters ? g % 2 == 1 : g == 7)
				repack_step(&acc, &accm, &isum, &summ, a + Q4K_D, a + Q4K_DMIN, q42_ldf32(b + Q8K_D));
		}
	}
	*out = acc - accm;
}

REPACK_DOTS(q4_k_repack, dot_q4k_repack)

/* ggml_vec_dot_q5_K_q8_K of the x86 build (AVX2 code): per super-block
 * eight int32 lanes, element 32c + p of sub-block c in lane p / 4 as
 * scale_c times value . y; each lane fma(d_x * d_w, lane, acc); the mins
 * apart, summs = fma(-d_x * dmin_w, sum of min_c times the sub-block's
 * bsums, summs) per super-block (llama.cpp's build contracts that
 * multiply-add); at the end hsum_float_8 plus summs. */
void q42_llamacpp_dot_q5_k_cpu(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0}, summs = 0.0f;
	for (int64_t i = 0; i < n / QK_K; i++, a += B_Q5_K, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		const float yd = q42_ldf32(b + Q8K_D);
		const float d = yd * half_at(a + Q4K_D), dmin = -yd * half_at(a + Q4K_DMIN);
		int sc[8], mn[8];
		int32_t mins = 0;
		for (int c = 0; c < 8; c++) {
			k4_scale_min(c, a + Q4K_SCALES, &sc[c], &mn[c]);
			mins += mn[c] * (q8k_bsum(b, 2 * c) + q8k_bsum(b, 2 * c + 1));
		}
		summs = fmaf(dmin, (float)mins, summs);
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int c = 0; c < 8; c++) {
				int32_t t = 0;
				for (int e = 32 * c + 4 * l; e < 32 * c + 4 * l + 4; e++) {
					const uint8_t q = a[Q5K_QS + (e / 64) * 32 + e % 32];
					const int lo = (e % 64) < 32 ? (q & 0xF) : (q >> 4);
					t += (lo + 16 * ((a[Q5K_QH + e % 32] >> (e / 32)) & 1)) * y[e];
				}
				s += sc[c] * t;
			}
			lanes[l] = fmaf(d, (float)s, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes) + summs;
}

/* ggml_vec_dot_q4_K_q8_K of the x86 build (AVX2 code), for a matrix
 * CPU_REPACK declines (rows not a multiple of 8): the scaled lanes as
 * q42_llamacpp_dot_q5_k_cpu's without the fifth bit; the mins in four
 * float lanes, lane i fma(-d_x * dmin_w, min_2i q8s_2i + min_2i+1
 * q8s_2i+1, acc_m) (q8s_c the bsums of sub-block c), reduced as
 * (0+2) + (1+3) and added to hsum_float_8 of the lanes. */
void q42_llamacpp_dot_q4_k_cpu(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0}, acc_m[4] = {0};
	for (int64_t i = 0; i < n / QK_K; i++, a += B_Q4_K, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		const float yd = q42_ldf32(b + Q8K_D);
		const float d = yd * half_at(a + Q4K_D), dmin = -yd * half_at(a + Q4K_DMIN);
		int sc[8], mn[8];
		for (int c = 0; c < 8; c++)
			k4_scale_min(c, a + Q4K_SCALES, &sc[c], &mn[c]);
		for (int m = 0; m < 4; m++) {
			const int32_t p = mn[2 * m] * (q8k_bsum(b, 4 * m) + q8k_bsum(b, 4 * m + 1)) +
					  mn[2 * m + 1] * (q8k_bsum(b, 4 * m + 2) + q8k_bsum(b, 4 * m + 3));
			acc_m[m] = fmaf(dmin, (float)p, acc_m[m]);
		}
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int c = 0; c < 8; c++) {
				int32_t t = 0;
				for (int e = 32 * c + 4 * l; e < 32 * c + 4 * l + 4; e++) {
					const uint8_t q = a[Q4K_QS + (e / 64) * 32 + e % 32];
					t += ((e % 64) < 32 ? (q & 0xF) : (q >> 4)) * y[e];
				}
				s += sc[c] * t;
			}
			lanes[l] = fmaf(d, (float)s, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes) + ((acc_m[0] + acc_m[2]) + (acc_m[1] + acc_m[3]));
}

/* ggml_vec_dot_q6_K_q8_K of the x86 build (AVX2 code): per super-block
 * eight int32 lanes, element 32c + p in lane p / 4 as the scale of its
 * 16-element sub-block times the unsigned 6-bit value . y, less 32 times
 * (scale_2l bsum_2l + scale_2l+1 bsum_2l+1) in lane l; each lane
 * fma(d_x * d_w, lane, acc); hsum_float_8 at the end. */
void q42_llamacpp_dot_q6_k_cpu(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / QK_K; i++, a += B_Q6_K, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS), *sc = (const int8_t *)(a + Q6K_SCALES);
		const float d = q42_ldf32(b + Q8K_D) * half_at(a + Q6K_D);
		for (int l = 0; l < 8; l++) {
			int32_t s = -32 * (sc[2 * l] * q8k_bsum(b, 2 * l) + sc[2 * l + 1] * q8k_bsum(b, 2 * l + 1));
			for (int c = 0; c < 8; c++)
				for (int e = 32 * c + 4 * l; e < 32 * c + 4 * l + 4; e++) {
					const int h = e / 128, q = (e % 128) / 32, k = e % 32;
					const uint8_t lo = a[Q6K_QL + h * 64 + (q % 2) * 32 + k];
					const int lo4 = q < 2 ? (lo & 0xF) : (lo >> 4);
					const int hi2 = (a[Q6K_QH + h * 32 + k] >> (2 * q)) & 3;
					s += sc[e / 16] * (lo4 | (hi2 << 4)) * y[e];
				}
			lanes[l] = fmaf(d, (float)s, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes);
}

/* llama.cpp's CPU_REPACK form of Q2_K (q2_K_8x8 kernels; AVX-512 CPUs,
 * matrices with a multiple of 8 rows): per output two accumulators,
 * fma(isum, d_w * d_x, acc) and fma(mins, dmin_w * d_x, accm), where
 * isum sums scale_j times values . y and mins sums min_j times bsums_j
 * over sub-blocks j, then acc - accm. Its gemv (one token, or a pass's
 * tokens past the last whole group of four) takes the sums per
 * super-block; its gemm (each group of four tokens) per 128-element half,
 * two steps per super-block. */
static void dot_q2k(int64_t n, float *out, const uint8_t *a, const uint8_t *b, bool halves)
{
	float acc = 0.0f, accm = 0.0f;
	for (int64_t i = 0; i < n / QK_K; i++, a += Q2_K_BYTES, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		const float dx = q42_ldf32(b + Q8K_D);
		int32_t isum = 0, mins = 0;
		for (int j = 0; j < 16; j++) {
			const uint8_t sm = a[Q2_K_SCALES + j];
			int32_t t = 0;
			for (int e = 16 * j; e < 16 * j + 16; e++)
				t += (a[Q2_K_QS + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32)) & 3) * y[e];
			isum += (sm & 0x0F) * t;
			mins += (sm >> 4) * q8k_bsum(b, j);
			if (j == 15 || (halves && j == 7))
				repack_step(&acc, &accm, &isum, &mins, a + Q2_K_D, a + Q2_K_DMIN, dx);
		}
	}
	*out = acc - accm;
}

REPACK_DOTS(q2_k, dot_q2k)

/* ggml_vec_dot_q3_K_q8_K of the x86 build (AVX2 code; llama.cpp has no
 * AMX or repacked form of Q3_K): element 32c + p (chunk c = 0..7, position
 * p) goes to lane p / 4 as value * y, each chunk's four-element sums
 * times the scale of their 16-element sub-block (2c + p / 16); each lane
 * then fma(d_x * d_w, lane, acc) once per super-block, and hsum_float_8
 * at the end as dot_lanes8. */
void q42_llamacpp_dot_q3_k(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / QK_K; i++, a += Q3_K_BYTES, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		const float d = q42_ldf32(b + Q8K_D) * half_at(a + Q3_K_D);
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int c = 0; c < 8; c++) {
				int32_t t = 0;
				for (int e = 32 * c + 4 * l; e < 32 * c + 4 * l + 4; e++) {
					const int lo = a[Q3_K_QS + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32)) & 3;
					const int hi = a[Q3_K_HMASK + e % 32] >> (e / 32) & 1;
					t += (lo - (hi ? 0 : 4)) * y[e];
				}
				s += q42_k3_scale(2 * c + l / 4, a + Q3_K_SCALES) * t;
			}
			lanes[l] = fmaf(d, (float)s, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes);
}

/* ggml_vec_dot_q2_K_q8_K of the x86 build (AVX2 code): element 32c + p
 * of each 128-element half (chunk c, position p) in lane p / 4 as its
 * 2-bit value times y, each four-element sum times the scale of its
 * 16-element sub-block; per super-block first the mins, lane l
 * fma(-d_x * dmin_w, min_2l bsum_2l + min_2l+1 bsum_2l+1, lane), then
 * fma(d_x * d_w, sum, lane); hsum_float_8 at the end. */
void q42_llamacpp_dot_q2_k_cpu(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / QK_K; i++, a += Q2_K_BYTES, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		const float yd = q42_ldf32(b + Q8K_D);
		const float d = yd * half_at(a + Q2_K_D), dmin = -yd * half_at(a + Q2_K_DMIN);
		for (int l = 0; l < 8; l++) {
			const int32_t p = (a[Q2_K_SCALES + 2 * l] >> 4) * q8k_bsum(b, 2 * l) +
					  (a[Q2_K_SCALES + 2 * l + 1] >> 4) * q8k_bsum(b, 2 * l + 1);
			lanes[l] = fmaf(dmin, (float)p, lanes[l]);
		}
		for (int l = 0; l < 8; l++) {
			int32_t s = 0;
			for (int c = 0; c < 8; c++) {
				int32_t t = 0;
				for (int e = 32 * c + 4 * l; e < 32 * c + 4 * l + 4; e++)
					t += (a[Q2_K_QS + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32)) & 3) * y[e];
				s += (a[Q2_K_SCALES + (32 * c + 4 * l) / 16] & 0x0F) * t;
			}
			lanes[l] = fmaf(d, (float)s, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes);
}

/* ggml_vec_dot_tq1_0_q8_K and ggml_vec_dot_tq2_0_q8_K of the x86 build
 * (AVX2 code; llama.cpp has no other form of them): per super-block
 * eight int32 lanes, element 32c + p (chunk c = 0..7, position p) in lane
 * p / 4 as (value + 1) * y, less the bsums 2l and 2l + 1 (the + 1 back
 * off); each lane then fma(lane, d_x * d_w, acc), and at the end
 * hsum_float_8 as dot_lanes8. */
static void dot_tq(int64_t n, float *out, const uint8_t *a, const uint8_t *b, bool tq1)
{
	const int bytes = tq1 ? TQ1_0_BYTES : TQ2_0_BYTES, dfield = tq1 ? TQ1_0_D : TQ2_0_D;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / QK_K; i++, a += bytes, b += B_Q8_K) {
		const int8_t *y = (const int8_t *)(b + Q8K_QS);
		const float d = q42_ldf32(b + Q8K_D) * half_at(a + dfield);
		for (int l = 0; l < 8; l++) {
			int32_t s = -(q8k_bsum(b, 2 * l) + q8k_bsum(b, 2 * l + 1));
			for (int c = 0; c < 8; c++)
				for (int e = 32 * c + 4 * l; e < 32 * c + 4 * l + 4; e++) {
					const int t = tq1 ? q42_tq1_value(a, e) + 1
							  : a[TQ2_0_QS + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32)) & 3;
					s += t * y[e];
				}
			lanes[l] = fmaf((float)s, d, lanes[l]);
		}
	}
	*out = hsum_lanes8(lanes);
}

void q42_llamacpp_dot_tq1_0(int64_t n, float *out, const void *w, const void *x)
{
	dot_tq(n, out, w, x, true);
}

void q42_llamacpp_dot_tq2_0(int64_t n, float *out, const void *w, const void *x)
{
	dot_tq(n, out, w, x, false);
}

/* ---- float products ---------------------------------------------------- */

/* the float row operations, plain (llamacpp/q42_llamacpp_float.h) */
#define CF(name) q42_llamacpp_##name
#define CF_ATTR
#define CF_STATIC static
#include "kernels/llamacpp/q42_llamacpp_float.h"
/* and haswell's (llamacpp/q42_llamacpp_float8.h) */
#define CF8(name) q42_llamacpp_hw_##name
#include "kernels/llamacpp/q42_llamacpp_float8.h"

/* The AVX-512 build's softmax of an unpadded row: 16-lane chunks. */
void q42_llamacpp_softmax_unpadded(int64_t n, float *y, const float *x)
{
	cf_softmax_exact(n, y, x, 16, cf_v_expf, cf_reduce16);
}

void q42_llamacpp_dot_f16_f32(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w;
	const float *v = x;
	float lanes[16] = {0};
	for (int64_t k = 0; k + 16 <= n; k += 16)
		for (int l = 0; l < 16; l++)
			lanes[l] = fmaf(v[k + l], q42_f16_to_f32(q42_ld16(a + 2 * (k + l))), lanes[l]);
	*out = cf_reduce16(lanes);
}

/* Four 16-lane accumulators over 64-element steps, folded as
 * (s0 + s2) + (s1 + s3), reduced, then the leftover elements added in
 * double as ggml_vec_dot_f16 does. */
void q42_llamacpp_dot_f16(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float s[4][16] = {{0}};
	const int64_t np = n & ~(int64_t)63;
	for (int64_t i = 0; i < np; i += 64)
		for (int j = 0; j < 4; j++)
			for (int l = 0; l < 16; l++) {
				const int64_t k = i + 16 * j + l;
				s[j][l] = fmaf(q42_f16_to_f32(q42_ld16(a + 2 * k)),
					       q42_f16_to_f32(q42_ld16(b + 2 * k)), s[j][l]);
			}
	for (int l = 0; l < 16; l++) {
		s[0][l] = s[0][l] + s[2][l];
		s[1][l] = s[1][l] + s[3][l];
	}
	for (int l = 0; l < 16; l++)
		s[0][l] = s[0][l] + s[1][l];
	double sum = (double)cf_reduce16(s[0]);
	for (int64_t k = np; k < n; k++)
		sum += (double)(q42_f16_to_f32(q42_ld16(a + 2 * k)) *
				q42_f16_to_f32(q42_ld16(b + 2 * k)));
	*out = (float)sum;
}

/* ggml_vec_dot_f32 on a row of its true length: the whole 64-steps as
 * q42_llamacpp_dot_f32 sums them, then the leftovers as the build
 * compiles its loop (cf_leftovers: rounded products added in order, the
 * last n % 8 of them fused; the oracle goldens mm_f32_odd_cpu and
 * zen4's mm_f32_k172_cpu tell the forms apart). */
void q42_llamacpp_dot_f32_vd(int64_t n, float *out, const void *w, const void *x)
{
	const int64_t np = n & ~(int64_t)63;
	float s;
	q42_llamacpp_dot_f32(np, &s, w, x);
	*out = cf_leftovers(s, w, x, np, n, 8);
}

void q42_llamacpp_dot_f32_vd_cols(int64_t n, int64_t n_cols, float *out, const float *w,
				  int64_t col_stride, const float *x)
{
	for (int64_t c = 0; c < n_cols; c++)
		q42_llamacpp_dot_f32_vd(n, out + c, w + c * col_stride, x);
}

uint64_t q42_llamacpp_f32_t16_floats(int64_t n, int64_t n_rows)
{
	return (uint64_t)((n_rows + 15) / 16) * 16u * (uint64_t)n;
}

void q42_llamacpp_pack_f32_t16(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,
			       float *dst)
{
	for (int64_t g = 0; g < (n_rows + 15) / 16; g++)
		for (int64_t k = 0; k < n; k++)
			for (int64_t i = 0; i < 16; i++) {
				const int64_t r = 16 * g + i;
				float v = 0.0f;
				if (r < n_rows)
					memcpy(&v, (const uint8_t *)w + (uint64_t)r * w_stride + 4u * (uint64_t)k,
					       sizeof v);
				dst[(uint64_t)((g * n + k) * 16 + i)] = v;
			}
}

void q42_llamacpp_f32_t16_axpy(int64_t n, int64_t n_rows, const float *wp, const float *x,
			       float scale, float *y)
{
	for (int64_t r = 0; r < n_rows; r++) {
		const float *g = wp + (uint64_t)(r / 16 * 16 * n + r % 16);
		float s = 0.0f;
		for (int64_t k = 0; k < n; k++)
			s = k < n - n % 8 ? s + g[16 * k] * x[k] : fmaf(g[16 * k], x[k], s);
		const float f = s * scale;
		y[r] = y[r] + f;
	}
}

void q42_llamacpp_dot_f16_rows(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
			     const void *x)
{
	for (int64_t r = 0; r < n_rows; r++)
		q42_llamacpp_dot_f16(n, out + r, (const uint8_t *)w + (uint64_t)r * w_stride, x);
}

/* ---- BF16 weights ------------------------------------------------------- */

/* llama.cpp keeps BF16 matrices in the plain CPU buffer and converts the
 * activations to bf16 (round to nearest even). Its AVX-512 BF16 build
 * multiplies them with VDPBF16PS, which reads subnormals as zero, adds
 * each of a lane's two products (the odd element first) with one rounding
 * to nearest even, and flushes subnormal sums to zero. A product of two
 * bf16 is exact in f32, so each add is one fmaf. (Only a product below
 * the f32 normal range, far from model data, could round otherwise.) */

static float bf16_daz(const uint8_t *p)
{
	uint16_t h = q42_ld16(p);
	if ((h & 0x7F80u) == 0)
		h &= 0x8000u;
	return q42_bf16_to_f32(h);
}

static float ftz(float v)
{
	return fabsf(v) < 0x1p-126f ? copysignf(0.0f, v) : v;
}

/* One VDPBF16PS lane: acc plus the pair of products at w and x. */
static float dp_pair(float acc, const uint8_t *w, const uint8_t *x)
{
	acc = ftz(fmaf(bf16_daz(w + 2), bf16_daz(x + 2), acc));
	return ftz(fmaf(bf16_daz(w), bf16_daz(x), acc));
}

/* ggml_vec_dot_bf16 of that build: per 64 elements, one VDPBF16PS into
 * each of two accumulators (elements 0..31 and 32..63); each accumulator
 * reduced, both added in double, then the last n % 64 products in
 * double. */
void q42_llamacpp_dot_bf16(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float c[2][16] = {{0}};
	int64_t i = 0;
	for (; i + 64 <= n; i += 64)
		for (int h = 0; h < 2; h++)
			for (int l = 0; l < 16; l++) {
				const int64_t k = i + 32 * h + 2 * l;
				c[h][l] = dp_pair(c[h][l], a + 2 * k, b + 2 * k);
			}
	double sum = (double)cf_reduce16(c[0]);
	sum += (double)cf_reduce16(c[1]);
	for (; i < n; i++)
		sum += (double)(q42_bf16_to_f32(q42_ld16(a + 2 * i)) * q42_bf16_to_f32(q42_ld16(b + 2 * i)));
	*out = (float)sum;
}

/* llamafile's tinyBLAS for bf16 (n a multiple of 32): one accumulator,
 * one VDPBF16PS per 32 elements, then reduced. */
void q42_llamacpp_dot_bf16_tb(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float c[16] = {0};
	for (int64_t i = 0; i + 32 <= n; i += 32)
		for (int l = 0; l < 16; l++)
			c[l] = dp_pair(c[l], a + 2 * (i + 2 * l), b + 2 * (i + 2 * l));
	*out = cf_reduce16(c);
}

void q42_llamacpp_dot_bf16_wide(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float c[2][16] = {{0}};
	int64_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int h = 0; h < 2; h++)
			for (int l = 0; l < 16; l++)
				c[h][l] = fmaf(cf8_bf16(a, i + 16 * h + l), cf8_bf16(b, i + 16 * h + l), c[h][l]);
	double sum = (double)cf_reduce16(c[0]);
	sum += (double)cf_reduce16(c[1]);
	for (; i < n; i++)
		sum += (double)(cf8_bf16(a, i) * cf8_bf16(b, i));
	*out = (float)sum;
}

void q42_llamacpp_dot_bf16_wide_tb(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float c[16] = {0};
	for (int64_t k = 0; k < n; k++)
		c[k % 16] = fmaf(cf8_bf16(a, k), cf8_bf16(b, k), c[k % 16]);
	*out = cf_reduce16(c);
}

/* ---- many rows ---------------------------------------------------------- */

/* The scalar row products: vec_dot per element (the definition). */
#define SCALAR_ROWS(NAME, DOT)                                                                  \
	static void NAME(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,            \
			 int64_t n_tok, const void *x, uint64_t x_stride, float *y,              \
			 uint64_t y_stride)                                                      \
	{                                                                                        \
		for (int64_t r = 0; r < n_rows; r++)                                             \
			for (int64_t t = 0; t < n_tok; t++)                                      \
				DOT(n, &y[(uint64_t)t * y_stride + (uint64_t)r],                 \
				    (const uint8_t *)w + (uint64_t)r * w_stride,                 \
				    (const uint8_t *)x + (uint64_t)t * x_stride);                \
	}
SCALAR_ROWS(rows_q4_0, q42_llamacpp_dot_q4_0)
SCALAR_ROWS(rows_q8_0, q42_llamacpp_dot_q8_0)
SCALAR_ROWS(rows_q5_1, q42_llamacpp_dot_q5_1)
SCALAR_ROWS(rows_q5_k, q42_llamacpp_dot_q5_k)
SCALAR_ROWS(rows_q4_1, q42_llamacpp_dot_q4_1)
SCALAR_ROWS(rows_q4_1_cpu, q42_llamacpp_dot_q4_1_cpu)
SCALAR_ROWS(rows_q5_0, q42_llamacpp_dot_q5_0)
SCALAR_ROWS(rows_q4_k, q42_llamacpp_dot_q4_k)
SCALAR_ROWS(rows_q6_k, q42_llamacpp_dot_q6_k)
SCALAR_ROWS(rows_f16_f32, q42_llamacpp_dot_f16_f32)
SCALAR_ROWS(rows_f16, q42_llamacpp_dot_f16)
SCALAR_ROWS(rows_tq1_0, q42_llamacpp_dot_tq1_0)
SCALAR_ROWS(rows_q3_k, q42_llamacpp_dot_q3_k)
SCALAR_ROWS(rows_iq4_nl, q42_llamacpp_dot_iq4_nl)
SCALAR_ROWS(rows_iq4_xs, q42_llamacpp_dot_iq4_xs)
/* Products whose order depends on the pass: ONE for a lone token, MANY
 * (llamafile's tinyBLAS) for the tokens of a longer pass. */
#define PASS_ROWS(NAME, ONE, MANY)                                                               \
	static void NAME(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,            \
			 int64_t n_tok, const void *x, uint64_t x_stride, float *y,              \
			 uint64_t y_stride)                                                      \
	{                                                                                        \
		for (int64_t r = 0; r < n_rows; r++)                                             \
			for (int64_t t = 0; t < n_tok; t++)                                      \
				(n_tok == 1 ? ONE : MANY)(                                       \
					n, &y[(uint64_t)t * y_stride + (uint64_t)r],             \
					(const uint8_t *)w + (uint64_t)r * w_stride,             \
					(const uint8_t *)x + (uint64_t)t * x_stride);            \
	}
/* IQ4_NL in the plain CPU buffer */
PASS_ROWS(rows_iq4_nl_cpu, q42_llamacpp_dot_iq4_nl_cpu, q42_llamacpp_dot_iq4_nl_tb)
/* F32 weights likewise: tinyBLAS's f32 lanes for a pass of a shape it
 * takes, ggml_vec_dot_f32 otherwise */
PASS_ROWS(rows_f32, q42_llamacpp_dot_f32_vd, q42_llamacpp_dot_f32_lanes)
SCALAR_ROWS(rows_f32_vd, q42_llamacpp_dot_f32_vd)
/* BF16 of a shape llamafile takes (else vec_dot for any pass) */
PASS_ROWS(rows_bf16, q42_llamacpp_dot_bf16, q42_llamacpp_dot_bf16_tb)
SCALAR_ROWS(rows_bf16_vd, q42_llamacpp_dot_bf16)
/* Q2_K: a pass's tokens in whole groups of four take the gemm order */
static void rows_q2_k(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, int64_t n_tok,
		      const void *x, uint64_t x_stride, float *y, uint64_t y_stride)
{
	for (int64_t r = 0; r < n_rows; r++)
		for (int64_t t = 0; t < n_tok; t++)
			dot_q2k(n, &y[(uint64_t)t * y_stride + (uint64_t)r], (const uint8_t *)w + (uint64_t)r * w_stride,
				(const uint8_t *)x + (uint64_t)t * x_stride, t < n_tok / 4 * 4);
}
SCALAR_ROWS(rows_tq2_0, q42_llamacpp_dot_tq2_0)
/* haswell's: Q2_K in the plain buffer, and the float weights with
 * tinyBLAS<8> for a pass of a shape it takes */
SCALAR_ROWS(rows_q2_k_cpu, q42_llamacpp_dot_q2_k_cpu)
PASS_ROWS(rows_hw_f16, q42_llamacpp_hw_dot_f16, q42_llamacpp_hw_dot_f16_lanes)
SCALAR_ROWS(rows_hw_f16_vd, q42_llamacpp_hw_dot_f16)
PASS_ROWS(rows_hw_bf16, q42_llamacpp_hw_dot_bf16, q42_llamacpp_hw_dot_bf16_tb)
SCALAR_ROWS(rows_hw_bf16_vd, q42_llamacpp_hw_dot_bf16)
PASS_ROWS(rows_hw_f32, q42_llamacpp_hw_dot_f32_vd, q42_llamacpp_hw_dot_f32_lanes)
SCALAR_ROWS(rows_hw_f32_vd, q42_llamacpp_hw_dot_f32_vd)
/* zen4's F16: tinyBLAS<16> for a pass of a shape it takes */
PASS_ROWS(rows_f16_tb, q42_llamacpp_dot_f16, q42_llamacpp_dot_f16_lanes)
/* icelake's BF16 likewise */
PASS_ROWS(rows_bf16_wide, q42_llamacpp_dot_bf16_wide, q42_llamacpp_dot_bf16_wide_tb)
SCALAR_ROWS(rows_bf16_wide_vd, q42_llamacpp_dot_bf16_wide)
SCALAR_ROWS(rows_q8_0_cpu, q42_llamacpp_dot_q8_0_cpu)
SCALAR_ROWS(rows_q5_k_cpu, q42_llamacpp_dot_q5_k_cpu)
SCALAR_ROWS(rows_iq4_xs_cpu, q42_llamacpp_dot_iq4_xs_cpu)
/* IQ4_XS of a multiple of 8 rows: the IQ panel's rounding for a pass of
 * Q42_LLAMACPP_IQP_MIN_BATCH tokens or more */
static void rows_iq4_xs_panel(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, int64_t n_tok,
			      const void *x, uint64_t x_stride, float *y, uint64_t y_stride)
{
	(n_tok >= Q42_LLAMACPP_IQP_MIN_BATCH ? rows_iq4_xs : rows_iq4_xs_cpu)(n, n_rows, w, w_stride, n_tok, x,
									     x_stride, y, y_stride);
}
SCALAR_ROWS(rows_q4_0_cpu, q42_llamacpp_dot_q4_0_cpu)
SCALAR_ROWS(rows_q4_k_cpu, q42_llamacpp_dot_q4_k_cpu)
SCALAR_ROWS(rows_q6_k_cpu, q42_llamacpp_dot_q6_k_cpu)
/* Q4_K in CPU_REPACK: as Q2_K, whole groups of four take the gemm order */
static void rows_q4_k_repack(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, int64_t n_tok,
			     const void *x, uint64_t x_stride, float *y, uint64_t y_stride)
{
	for (int64_t r = 0; r < n_rows; r++)
		for (int64_t t = 0; t < n_tok; t++)
			dot_q4k_repack(n, &y[(uint64_t)t * y_stride + (uint64_t)r],
				       (const uint8_t *)w + (uint64_t)r * w_stride,
				       (const uint8_t *)x + (uint64_t)t * x_stride, t < n_tok / 4 * 4);
}

/* ---- selection --------------------------------------------------------- */

/* The scalar row products by slot: the definitions every ISA's row
 * products are tested against (the dispatcher fills the other ISAs'). */
const q42_llamacpp_rows_fn q42_llamacpp_scalar_rows[Q42_LROWS_COUNT] = {
	[Q42_LROWS_Q4_0] = rows_q4_0,
	[Q42_LROWS_Q8_0] = rows_q8_0,
	[Q42_LROWS_Q4_K] = rows_q4_k,
	[Q42_LROWS_Q6_K] = rows_q6_k,
	[Q42_LROWS_F16_F32] = rows_f16_f32,
	[Q42_LROWS_F16] = rows_f16,
	[Q42_LROWS_Q5_1] = rows_q5_1,
	[Q42_LROWS_Q5_K] = rows_q5_k,
	[Q42_LROWS_Q4_1] = rows_q4_1,
	[Q42_LROWS_Q4_1_CPU] = rows_q4_1_cpu,
	[Q42_LROWS_Q5_0] = rows_q5_0,
	[Q42_LROWS_TQ1_0] = rows_tq1_0,
	[Q42_LROWS_TQ2_0] = rows_tq2_0,
	[Q42_LROWS_Q3_K] = rows_q3_k,
	[Q42_LROWS_Q2_K] = rows_q2_k,
	[Q42_LROWS_IQ4_NL] = rows_iq4_nl,
	[Q42_LROWS_IQ4_XS] = rows_iq4_xs,
	[Q42_LROWS_BF16] = rows_bf16,
	[Q42_LROWS_BF16_VD] = rows_bf16_vd,
	[Q42_LROWS_F32] = rows_f32,
	[Q42_LROWS_F32_VD] = rows_f32_vd,
	[Q42_LROWS_Q8_0_CPU] = rows_q8_0_cpu,
	[Q42_LROWS_Q4_K_REPACK] = rows_q4_k_repack,
	[Q42_LROWS_Q5_K_CPU] = rows_q5_k_cpu,
	[Q42_LROWS_Q6_K_CPU] = rows_q6_k_cpu,
	[Q42_LROWS_IQ4_XS_CPU] = rows_iq4_xs_cpu,
	[Q42_LROWS_Q4_0_CPU] = rows_q4_0_cpu,
	[Q42_LROWS_Q4_K_CPU] = rows_q4_k_cpu,
	[Q42_LROWS_IQ4_XS_PANEL] = rows_iq4_xs_panel,
	[Q42_LROWS_Q2_K_CPU] = rows_q2_k_cpu,
	[Q42_LROWS_HW_F16] = rows_hw_f16,
	[Q42_LROWS_HW_F16_VD] = rows_hw_f16_vd,
	[Q42_LROWS_HW_BF16] = rows_hw_bf16,
	[Q42_LROWS_HW_BF16_VD] = rows_hw_bf16_vd,
	[Q42_LROWS_HW_F32] = rows_hw_f32,
	[Q42_LROWS_HW_F32_VD] = rows_hw_f32_vd,
	[Q42_LROWS_F16_TB] = rows_f16_tb,
	[Q42_LROWS_BF16_WIDE] = rows_bf16_wide,
	[Q42_LROWS_BF16_WIDE_VD] = rows_bf16_wide_vd,
};

/* One selection's fields; true, for the caller to return. */
static bool pick(q42_llamacpp_kernels *out, void (*vec_dot)(int64_t, float *, const void *, const void *),
		 q42_llamacpp_rows_fn rows, void (*quantize)(const float *, void *, int64_t), uint32_t vec_dot_type,
		 const char *name)
{
	out->vec_dot = vec_dot;
	out->rows = rows;
	out->quantize = quantize;
	out->vec_dot_type = vec_dot_type;
	out->name = name;
	return true;
}

/* The reference Q8_K quantizer llama.cpp's k-quant and ternary products
 * take (every q42_kernels table reproduces it bit for bit). */
static const q42_type_kernels *q8k_kernels(enum q42_isa use)
{
	const q42_type_kernels *k8 = q42_kernels_get(Q42_DTYPE_Q8_K, use);
	return k8 != NULL ? k8 : q42_kernels_get(Q42_DTYPE_Q8_K, Q42_ISA_SCALAR);
}

bool q42_llamacpp_select(uint32_t dtype, int64_t n_out, int64_t n_in,
		       enum q42_llamacpp_place place, q42_llamacpp_kernels *out)
{
	return q42_llamacpp_select_isa(dtype, n_out, n_in, place, Q42_ISA_BEST, out);
}

bool q42_llamacpp_select_isa(uint32_t dtype, int64_t n_out, int64_t n_in,
			   enum q42_llamacpp_place place, enum q42_isa isa, q42_llamacpp_kernels *out)
{
	return q42_llamacpp_select_variant(Q42_LLAMACPP_SAPPHIRERAPIDS, dtype, n_out, n_in, place, isa, out);
}

/* Where the zen4 variant (AVX-512 without AMX) takes another path than
 * sapphirerapids would with no AMX buffer: Q8_0, Q5_K, Q6_K, IQ4_XS and
 * F16 in the plain CPU buffer, Q4_0 and Q4_K in CPU_REPACK when the rows
 * are a multiple of 8 (Q4_0's q4_0_8x8 rounds as the AMX buffer does),
 * in the plain buffer otherwise. -1: the type takes sapphirerapids' path
 * for a matrix outside the AMX buffer (Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, IQ4_NL, TQ1_0, TQ2_0, BF16, F32:
 * checked against both variants); otherwise whether libq42 has the zen4
 * form. */
static int select_zen4(uint32_t dtype, int64_t n_out, int64_t n_in, enum q42_llamacpp_place place,
		       enum q42_isa use, q42_llamacpp_kernels *out)
{
	const bool repack = place == Q42_LLAMACPP_MATMUL && n_out > 0 && n_out % 8 == 0;
	const q42_llamacpp_ops *ops = q42_llamacpp_ops_get(use);
	switch (dtype) {
	case Q42_DTYPE_Q8_0:
		return n_in % QK == 0 && pick(out, q42_llamacpp_dot_q8_0_cpu,
					      q42_llamacpp_rows_for(Q42_LROWS_Q8_0_CPU, use), ops->quantize_q8_0,
					      Q42_DTYPE_Q8_0, "cpu-q8_0");
	case Q42_DTYPE_Q4_0:
		/* other row counts (and a token embedding) stay in the plain
		 * buffer: ggml's x86 vec_dot for one token, llamafile's
		 * tinyBLAS for a pass, the same eight lanes */
		return n_in % QK == 0 &&
		       (repack ? pick(out, q42_llamacpp_dot_q4_0, q42_llamacpp_rows_for(Q42_LROWS_Q4_0, use),
				      ops->quantize_q8_0, Q42_DTYPE_Q8_0, "repack-q4_0")
			       : pick(out, q42_llamacpp_dot_q4_0_cpu, q42_llamacpp_rows_for(Q42_LROWS_Q4_0_CPU, use),
				      ops->quantize_q8_0, Q42_DTYPE_Q8_0, "cpu-q4_0"));
	case Q42_DTYPE_Q4_K:
		/* elsewhere ggml's x86 vec_dot for every pass (llamafile has
		 * no k-quants on x86) */
		return n_in % QK_K == 0 &&
		       (repack ? pick(out, q42_llamacpp_dot_q4_k_repack, q42_llamacpp_rows_for(Q42_LROWS_Q4_K_REPACK, use),
				      q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K, "repack-q4_K")
			       : pick(out, q42_llamacpp_dot_q4_k_cpu, q42_llamacpp_rows_for(Q42_LROWS_Q4_K_CPU, use),
				      q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K, "cpu-q4_K"));
	case Q42_DTYPE_IQ4_XS:
		/* the plain buffer (no AMX, no repack, no tinyBLAS form):
		 * ggml's x86 vec_dot, or for a multiple of 8 rows the IQ
		 * panel for passes of 8 tokens or more */
		return n_in % QK_K == 0 &&
		       pick(out, q42_llamacpp_dot_iq4_xs_cpu,
			    q42_llamacpp_rows_for(repack ? Q42_LROWS_IQ4_XS_PANEL : Q42_LROWS_IQ4_XS_CPU, use),
			    q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K, repack ? "panel-iq4_xs" : "cpu-iq4_xs");
	case Q42_DTYPE_Q5_K:
	case Q42_DTYPE_Q6_K: {
		const bool q5 = dtype == Q42_DTYPE_Q5_K;
		return n_in % QK_K == 0 &&
		       pick(out, q5 ? q42_llamacpp_dot_q5_k_cpu : q42_llamacpp_dot_q6_k_cpu,
			    q42_llamacpp_rows_for(q5 ? Q42_LROWS_Q5_K_CPU : Q42_LROWS_Q6_K_CPU, use),
			    q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K, q5 ? "cpu-q5_K" : "cpu-q6_K");
	}
	case Q42_DTYPE_F16: {
		/* ggml_vec_dot_f16 for one token and shapes llamafile
		 * declines, its tinyBLAS<16> (f16 x f16, 16 lanes) for the
		 * tokens of a pass of 4 rows of 16 values or multiples */
		const bool tb = n_out % 4 == 0 && n_in % 16 == 0;
		return pick(out, q42_llamacpp_dot_f16, q42_llamacpp_rows_for(tb ? Q42_LROWS_F16_TB : Q42_LROWS_F16, use),
			    ops->quantize_f16, Q42_DTYPE_F16, tb ? "cpu-f16" : "cpu-f16-vec");
	}
	default:
		return -1;
	}
}

/* Where the haswell variant (AVX2, no AVX-512) takes another path than
 * zen4: Q2_K in the plain CPU buffer (CPU_REPACK's q2_K_8x8 wants
 * AVX-512), and F32, F16 and BF16 in eight lanes: ggml's vec_dot for a
 * lone token and shapes llamafile declines, tinyBLAS<8> for the tokens
 * of a pass of 4 rows and 8 values or multiples (F16 included, which
 * zen4 keeps in vec_dot). -1: zen4's path (checked against llama.cpp's
 * haswell build for every type, tests/golden/haswell). */
static int select_haswell(uint32_t dtype, int64_t n_out, int64_t n_in, enum q42_isa use, q42_llamacpp_kernels *out)
{
	const bool tb = n_out % 4 == 0 && n_in % 8 == 0;
	switch (dtype) {
	case Q42_DTYPE_Q2_K:
		return n_in % QK_K == 0 && pick(out, q42_llamacpp_dot_q2_k_cpu,
					       q42_llamacpp_rows_for(Q42_LROWS_Q2_K_CPU, use),
					       q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K, "cpu-q2_K");
	case Q42_DTYPE_F32:
		return pick(out, q42_llamacpp_hw_dot_f32_vd,
			    q42_llamacpp_rows_for(tb ? Q42_LROWS_HW_F32 : Q42_LROWS_HW_F32_VD, use), NULL,
			    Q42_DTYPE_F32, tb ? "avx2-f32" : "avx2-f32-vec");
	case Q42_DTYPE_F16:
		return pick(out, q42_llamacpp_hw_dot_f16,
			    q42_llamacpp_rows_for(tb ? Q42_LROWS_HW_F16 : Q42_LROWS_HW_F16_VD, use),
			    q42_llamacpp_ops_get(use)->quantize_f16, Q42_DTYPE_F16, tb ? "avx2-f16" : "avx2-f16-vec");
	case Q42_DTYPE_BF16:
		return pick(out, q42_llamacpp_hw_dot_bf16,
			    q42_llamacpp_rows_for(tb ? Q42_LROWS_HW_BF16 : Q42_LROWS_HW_BF16_VD, use),
			    q42_kernels_get(Q42_DTYPE_BF16, Q42_ISA_SCALAR)->quantize, Q42_DTYPE_BF16,
			    tb ? "avx2-bf16" : "avx2-bf16-vec");
	default:
		return -1;
	}
}

bool q42_llamacpp_select_variant(enum q42_llamacpp_variant variant, uint32_t dtype, int64_t n_out, int64_t n_in,
			       enum q42_llamacpp_place place, enum q42_isa isa, q42_llamacpp_kernels *out)
{
	/* llama.cpp's AMX buffer: sapphirerapids only (zen4 has none) */
	const bool amx_rows = variant == Q42_LLAMACPP_SAPPHIRERAPIDS && place == Q42_LLAMACPP_MATMUL && n_out > 0 &&
			      n_out % 32 == 0;
	const enum q42_isa use = q42_isa_usable(isa);
	const q42_llamacpp_ops *ops = q42_llamacpp_ops_get(use);
	memset(out, 0, sizeof *out);
	if (variant == Q42_LLAMACPP_HASWELL) {
		const int h = select_haswell(dtype, n_out, n_in, use, out);
		if (h >= 0)
			return h == 1;
	}
	if (variant == Q42_LLAMACPP_ICELAKE && dtype == Q42_DTYPE_BF16) {
		/* without VDPBF16PS: widened, tinyBLAS<16> where it takes
		 * the shape */
		const bool tb = n_out % 4 == 0 && n_in % 16 == 0;
		return pick(out, q42_llamacpp_dot_bf16_wide,
			    q42_llamacpp_rows_for(tb ? Q42_LROWS_BF16_WIDE : Q42_LROWS_BF16_WIDE_VD, use),
			    q42_kernels_get(Q42_DTYPE_BF16, Q42_ISA_SCALAR)->quantize, Q42_DTYPE_BF16,
			    tb ? "avx512-bf16-wide" : "avx512-bf16-wide-vec");
	}
	if (variant != Q42_LLAMACPP_SAPPHIRERAPIDS) {
		const int z = select_zen4(dtype, n_out, n_in, place, use, out);
		if (z >= 0)
			return z == 1;
	}
	switch (dtype) {
	case Q42_DTYPE_Q4_0:
	case Q42_DTYPE_Q8_0:
		if (!amx_rows || n_in % QK != 0)
			return false;
		out->vec_dot = dtype == Q42_DTYPE_Q4_0 ? q42_llamacpp_dot_q4_0 : q42_llamacpp_dot_q8_0;
		out->rows = q42_llamacpp_rows_for(dtype == Q42_DTYPE_Q4_0 ? Q42_LROWS_Q4_0 : Q42_LROWS_Q8_0, use);
		out->quantize = ops->quantize_q8_0;
		out->vec_dot_type = Q42_DTYPE_Q8_0;
		out->name = dtype == Q42_DTYPE_Q4_0 ? "amx-q4_0" : "amx-q8_0";
		return true;
	case Q42_DTYPE_Q4_K:
	case Q42_DTYPE_Q5_K:
	case Q42_DTYPE_Q6_K: {
		const q42_type_kernels *k8 = q8k_kernels(use);
		if (!amx_rows || n_in % QK_K != 0 || k8 == NULL)
			return false;
		out->vec_dot = dtype == Q42_DTYPE_Q4_K	 ? q42_llamacpp_dot_q4_k
			       : dtype == Q42_DTYPE_Q5_K ? q42_llamacpp_dot_q5_k
							 : q42_llamacpp_dot_q6_k;
		out->rows = q42_llamacpp_rows_for(dtype == Q42_DTYPE_Q4_K	 ? Q42_LROWS_Q4_K
				     : dtype == Q42_DTYPE_Q5_K ? Q42_LROWS_Q5_K
							       : Q42_LROWS_Q6_K,
				     use);
		out->quantize = k8->quantize;
		out->vec_dot_type = Q42_DTYPE_Q8_K;
		out->name = dtype == Q42_DTYPE_Q4_K	? "amx-q4_K"
			    : dtype == Q42_DTYPE_Q5_K ? "amx-q5_K"
						      : "amx-q6_K";
		return true;
	}
	case Q42_DTYPE_Q4_1:
		/* the AMX buffer when the shape allows, else (the token
		 * embedding) ggml's x86 vec_dot */
		return n_in % QK == 0 &&
		       pick(out, amx_rows ? q42_llamacpp_dot_q4_1 : q42_llamacpp_dot_q4_1_cpu,
			    q42_llamacpp_rows_for(amx_rows ? Q42_LROWS_Q4_1 : Q42_LROWS_Q4_1_CPU, use),
			    ops->quantize_q8_1, Q42_DTYPE_Q8_1, amx_rows ? "amx-q4_1" : "cpu-q4_1");
	case Q42_DTYPE_Q5_0:
		/* no AMX form in llama.cpp: ggml's x86 vec_dot for one token,
		 * llamafile's tinyBLAS for more (the same rounding) */
		return n_in % QK == 0 &&
		       pick(out, q42_llamacpp_dot_q5_0, q42_llamacpp_rows_for(Q42_LROWS_Q5_0, use),
			    ops->quantize_q8_0, Q42_DTYPE_Q8_0, "cpu-q5_0");
	case Q42_DTYPE_Q5_1:
		/* no AMX or tinyBLAS form in llama.cpp: ggml's x86 vec_dot
		 * wherever the weight lives */
		return n_in % QK == 0 &&
		       pick(out, q42_llamacpp_dot_q5_1, q42_llamacpp_rows_for(Q42_LROWS_Q5_1, use),
			    ops->quantize_q8_1, Q42_DTYPE_Q8_1, "cpu-q5_1");
	case Q42_DTYPE_Q2_K:
		/* the CPU_REPACK buffer takes a multiple of 8 rows; a token
		 * embedding, or another row count, would be ggml's x86 vec_dot,
		 * which libq42 does not reproduce (generic rounding then) */
		return place == Q42_LLAMACPP_MATMUL && n_out > 0 && n_out % 8 == 0 && n_in % QK_K == 0 &&
		       pick(out, q42_llamacpp_dot_q2_k, q42_llamacpp_rows_for(Q42_LROWS_Q2_K, use),
			    q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K, "repack-q2_K");
	case Q42_DTYPE_IQ4_XS:
		/* the AMX buffer where the shape allows; elsewhere ggml's x86
		 * vec_dot, which libq42 does not reproduce (generic rounding) */
		return amx_rows && n_in % QK_K == 0 &&
		       pick(out, q42_llamacpp_dot_iq4_xs, q42_llamacpp_rows_for(Q42_LROWS_IQ4_XS, use),
			    q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K, "amx-iq4_xs");
	case Q42_DTYPE_IQ4_NL: {
		/* the CPU_REPACK buffer (iq4_nl_8x8) takes a multiple of 8
		 * rows; elsewhere ggml's x86 vec_dot or llamafile's tinyBLAS,
		 * by the pass's token count (the rows function decides) */
		const bool rp = place == Q42_LLAMACPP_MATMUL && n_out > 0 && n_out % 8 == 0;
		return n_in % QK == 0 &&
		       pick(out, rp ? q42_llamacpp_dot_iq4_nl : q42_llamacpp_dot_iq4_nl_cpu,
			    rp ? q42_llamacpp_rows_for(Q42_LROWS_IQ4_NL, use) : rows_iq4_nl_cpu,
			    ops->quantize_q8_0, Q42_DTYPE_Q8_0, rp ? "repack-iq4_nl" : "cpu-iq4_nl");
	}
	case Q42_DTYPE_Q3_K:
	case Q42_DTYPE_TQ1_0:
	case Q42_DTYPE_TQ2_0: {
		/* ggml's x86 vec_dot wherever the weight lives */
		const bool q3 = dtype == Q42_DTYPE_Q3_K, tq1 = dtype == Q42_DTYPE_TQ1_0;
		const enum q42_lrows slot = q3 ? Q42_LROWS_Q3_K : tq1 ? Q42_LROWS_TQ1_0 : Q42_LROWS_TQ2_0;
		return n_in % QK_K == 0 &&
		       pick(out, q3 ? q42_llamacpp_dot_q3_k : tq1 ? q42_llamacpp_dot_tq1_0 : q42_llamacpp_dot_tq2_0,
			    q42_llamacpp_rows_for(slot, use), q8k_kernels(use)->quantize, Q42_DTYPE_Q8_K,
			    q3 ? "cpu-q3_K" : tq1 ? "cpu-tq1_0" : "cpu-tq2_0");
	}
	case Q42_DTYPE_F32: {
		/* the plain CPU buffer: llamafile's tinyBLAS for the tokens of
		 * a pass where its shape rules allow (4 rows, 16 values),
		 * ggml_vec_dot_f32 for a lone token and every other shape */
		const bool tb = n_out % 4 == 0 && n_in % 16 == 0;
		return pick(out, q42_llamacpp_dot_f32_vd,
			    q42_llamacpp_rows_for(tb ? Q42_LROWS_F32 : Q42_LROWS_F32_VD, use), NULL,
			    Q42_DTYPE_F32, tb ? "cpu-f32" : "cpu-f32-vec");
	}
	case Q42_DTYPE_BF16: {
		/* never in the AMX buffer: llamafile's tinyBLAS for the tokens
		 * of a pass where its shape rules allow, ggml's vec_dot for a
		 * lone token and every other shape (AVX-512 BF16 rounding) */
		const bool tb = n_out % 4 == 0 && n_in % 32 == 0;
		return pick(out, q42_llamacpp_dot_bf16, q42_llamacpp_rows_for(tb ? Q42_LROWS_BF16 : Q42_LROWS_BF16_VD, use),
			    q42_kernels_get(Q42_DTYPE_BF16, Q42_ISA_SCALAR)->quantize, Q42_DTYPE_BF16,
			    tb ? "cpu-bf16" : "cpu-bf16-vec");
	}
	case Q42_DTYPE_F16:
		if (amx_rows && n_in % 16 == 0) {
			out->vec_dot = q42_llamacpp_dot_f16_f32;
			out->rows = q42_llamacpp_rows_for(Q42_LROWS_F16_F32, use);
			out->quantize = NULL;
			out->vec_dot_type = Q42_DTYPE_F32;
			out->name = "amx-f16";
		} else {
			out->vec_dot = q42_llamacpp_dot_f16;
			out->rows = q42_llamacpp_rows_for(Q42_LROWS_F16, use);
			out->quantize = ops->quantize_f16;
			out->vec_dot_type = Q42_DTYPE_F16;
			out->name = "avx512-f16";
		}
		return true;
	default:
		return false;
	}
}

/* ---- GeGLU ------------------------------------------------------------- */

void q42_llamacpp_geglu(int64_t n, float *y, const float *x, const float *g)
{
	q42_gelu_table_geglu(n, y, x, g, q42_gelu_table(true));
}

/* ---- short convolution ------------------------------------------------- */

float q42_llamacpp_conv_dot(int64_t n, const float *s, const float *c)
{
	const int64_t whole = n >= 16 ? n / 16 * 16 : 0;
	const int64_t eight = n - whole >= 8 ? whole + 8 : whole;
	float sum = 0.0f;
	for (int64_t i = 0; i < eight; i++) {
		const float p = s[i] * c[i];
		sum += p;
	}
	for (int64_t i = eight; i < n; i++)
		sum = fmaf(s[i], c[i], sum);
	return sum;
}

/* ---- for the flash attention reference (q42_llamacpp_fa.c) ------------- */

float q42_llamacpp_v_expf(float x)
{
	return cf_v_expf(x);
}

float q42_llamacpp_reduce16(const float v[16])
{
	return cf_reduce16(v);
}

float q42_llamacpp_hw_v_expf(float x)
{
	return cf8_v_expf(x);
}

float q42_llamacpp_hsum8(const float v[8])
{
	return cf8_hsum(v);
}
