/* q42_quants.c -- scalar reference dequantization and activation
 * quantization for the ggml block types.
 *
 * Block layouts are ggml's (ggml-common.h); the arithmetic follows ggml's
 * reference row functions operation for operation (which product is formed
 * first, where a value is rounded to float), because a different but
 * "equivalent" order changes the last bit and llama.cpp is the definition
 * of a correct result. Never reads past n elements' worth of blocks.
 */
#include <math.h>
#include <string.h>
#include "kernels/q42_kernels_impl.h"
#include "common/q42_le.h"

void q42_dq_f32(const void *src, float *dst, int64_t n)
{
	memcpy(dst, src, (size_t)n * sizeof(float));
}

void q42_dq_f16(const void *src, float *dst, int64_t n)
{
	const uint8_t *p = src;
	for (int64_t i = 0; i < n; i++)
		dst[i] = q42_f16_to_f32(q42_ld16(p + 2 * i));
}

void q42_dq_bf16(const void *src, float *dst, int64_t n)
{
	const uint8_t *p = src;
	for (int64_t i = 0; i < n; i++)
		dst[i] = q42_bf16_to_f32(q42_ld16(p + 2 * i));
}

void q42_dq_q4_0(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q4_0_BYTES, dst += Q42_QK) {
		const float d = q42_half_at(b + Q4_0_D);
		const uint8_t *qs = b + Q4_0_QS;
		for (int j = 0; j < Q42_QK / 2; j++) {
			dst[j] = (float)((qs[j] & 0xF) - 8) * d;
			dst[j + Q42_QK / 2] = (float)((qs[j] >> 4) - 8) * d;
		}
	}
}

const int8_t q42_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
				     1,	   13,	 25,  38,  53,	69,  89,  113};

void q42_dq_iq4_nl(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += IQ4_NL_BYTES, dst += Q42_QK) {
		const float d = q42_half_at(b + IQ4_NL_D);
		const uint8_t *qs = b + IQ4_NL_QS;
		for (int j = 0; j < Q42_QK / 2; j++) {
			dst[j] = d * (float)q42_iq4nl_values[qs[j] & 0xF];
			dst[j + Q42_QK / 2] = d * (float)q42_iq4nl_values[qs[j] >> 4];
		}
	}
}

void q42_dq_iq4_xs(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += IQ4_XS_BYTES) {
		const float d = q42_half_at(b + IQ4_XS_D);
		for (int ib = 0; ib < Q42_QK_K / 32; ib++, dst += 32) {
			const float dl = d * (float)q42_iq4xs_scale(b, ib);
			const uint8_t *qs = b + IQ4_XS_QS + 16 * ib;
			for (int j = 0; j < 16; j++) {
				dst[j] = dl * (float)q42_iq4nl_values[qs[j] & 0xF];
				dst[j + 16] = dl * (float)q42_iq4nl_values[qs[j] >> 4];
			}
		}
	}
}

void q42_dq_q4_1(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q4_1_BYTES, dst += Q42_QK) {
		const float d = q42_half_at(b + Q4_1_D);
		const float m = q42_half_at(b + Q4_1_M);
		const uint8_t *qs = b + Q4_1_QS;
		for (int j = 0; j < Q42_QK / 2; j++) {
			dst[j] = (float)(qs[j] & 0xF) * d + m;
			dst[j + Q42_QK / 2] = (float)(qs[j] >> 4) * d + m;
		}
	}
}

/* The fifth bit of element j of a q5 block is bit j of the 32-bit qh. */
static int q5_value(const uint8_t *qs, uint32_t qh, int e)
{
	int lo = e < 16 ? (qs[e] & 0xF) : (qs[e - 16] >> 4);
	return lo | (int)(((qh >> e) & 1u) << 4);
}

void q42_dq_q5_0(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q5_0_BYTES, dst += Q42_QK) {
		const float d = q42_half_at(b + Q5_0_D);
		const uint32_t qh = q42_ld32(b + Q5_0_QH);
		for (int e = 0; e < Q42_QK; e++)
			dst[e] = (float)(q5_value(b + Q5_0_QS, qh, e) - 16) * d;
	}
}

void q42_dq_q5_1(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q5_1_BYTES, dst += Q42_QK) {
		const float d = q42_half_at(b + Q5_1_D);
		const float m = q42_half_at(b + Q5_1_M);
		const uint32_t qh = q42_ld32(b + Q5_1_QH);
		for (int e = 0; e < Q42_QK; e++)
			dst[e] = (float)q5_value(b + Q5_1_QS, qh, e) * d + m;
	}
}

void q42_dq_q8_0(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q8_0_BYTES, dst += Q42_QK) {
		const float d = q42_half_at(b + Q8_0_D);
		for (int j = 0; j < Q42_QK; j++)
			dst[j] = (float)(int8_t)b[Q8_0_QS + j] * d;
	}
}

void q42_dq_q8_1(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q8_1_BYTES, dst += Q42_QK) {
		const float d = q42_half_at(b + Q8_1_D);
		for (int j = 0; j < Q42_QK; j++)
			dst[j] = (float)(int8_t)b[Q8_1_QS + j] * d;
	}
}

/* q2_K and q3_K share a walk: element e of a super-block takes 2 bits at
 * shift 2*((e%128)/32) of qs[(e/128)*32 + e%32], and scale e/16. */
static int k_low2(const uint8_t *qs, int e)
{
	return (qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

void q42_dq_q2_k(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q2_K_BYTES, dst += Q42_QK_K) {
		const float d = q42_half_at(b + Q2_K_D);
		const float dmin = q42_half_at(b + Q2_K_DMIN);
		for (int s = 0; s < 16; s++) {
			const uint8_t sc = b[Q2_K_SCALES + s];
			const float dl = d * (float)(sc & 0xF);
			const float ml = dmin * (float)(sc >> 4);
			for (int e = s * 16; e < s * 16 + 16; e++)
				dst[e] = dl * (float)k_low2(b + Q2_K_QS, e) - ml;
		}
	}
}

void q42_dq_q3_k(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q3_K_BYTES, dst += Q42_QK_K) {
		const float d = q42_half_at(b + Q3_K_D);
		for (int s = 0; s < 16; s++) {
			const float dl = d * (float)q42_k3_scale(s, b + Q3_K_SCALES);
			for (int e = s * 16; e < s * 16 + 16; e++) {
				/* the high bit of element e is bit (e/32) of hmask[e%32];
				 * when it is clear the value is offset by -4 */
				int hi = (b[Q3_K_HMASK + e % 32] >> (e / 32)) & 1;
				dst[e] = dl * (float)(k_low2(b + Q3_K_QS, e) - (hi ? 0 : 4));
			}
		}
	}
}

/* q4_K/q5_K: element e is a nibble of qs[(e/64)*32 + e%32], low nibble in
 * the first half of each 64, and uses scale/min pair e/32. */
static int k_nibble(const uint8_t *qs, int e)
{
	const uint8_t q = qs[(e / 64) * 32 + e % 32];
	return (e % 64) < 32 ? (q & 0xF) : (q >> 4);
}

void q42_dq_q4_k(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q4_K_BYTES, dst += Q42_QK_K) {
		const float d = q42_half_at(b + Q4_K_D);
		const float dmin = q42_half_at(b + Q4_K_DMIN);
		for (int s = 0; s < 8; s++) {
			uint8_t sc, m;
			q42_k4_scale_min(s, b + Q4_K_SCALES, &sc, &m);
			const float d1 = d * (float)sc;
			const float m1 = dmin * (float)m;
			for (int e = s * 32; e < s * 32 + 32; e++)
				dst[e] = d1 * (float)k_nibble(b + Q4_K_QS, e) - m1;
		}
	}
}

void q42_dq_q5_k(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q5_K_BYTES, dst += Q42_QK_K) {
		const float d = q42_half_at(b + Q5_K_D);
		const float dmin = q42_half_at(b + Q5_K_DMIN);
		for (int s = 0; s < 8; s++) {
			uint8_t sc, m;
			q42_k4_scale_min(s, b + Q5_K_SCALES, &sc, &m);
			const float d1 = d * (float)sc;
			const float m1 = dmin * (float)m;
			for (int e = s * 32; e < s * 32 + 32; e++) {
				int hi = (b[Q5_K_QH + e % 32] >> s) & 1;
				dst[e] = d1 * (float)(k_nibble(b + Q5_K_QS, e) + 16 * hi) - m1;
			}
		}
	}
}

/* q6_K element e (0..255): half h = e/128, quarter q = (e%128)/32, l = e%32.
 * Low 4 bits: nibble (q/2) of ql[h*64 + (q%2)*32 + l]; high 2 bits: bits
 * 2q..2q+1 of qh[h*32 + l]. Stored offset by +32. */
static int q6_value(const uint8_t *b, int e)
{
	const int h = e / 128, q = (e % 128) / 32, l = e % 32;
	const uint8_t lo = b[Q6_K_QL + h * 64 + (q % 2) * 32 + l];
	const int lo4 = q < 2 ? (lo & 0xF) : (lo >> 4);
	const int hi2 = (b[Q6_K_QH + h * 32 + l] >> (2 * q)) & 3;
	return (lo4 | (hi2 << 4)) - 32;
}

void q42_dq_q6_k(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q6_K_BYTES, dst += Q42_QK_K) {
		const float d = q42_half_at(b + Q6_K_D);
		for (int e = 0; e < Q42_QK_K; e++) {
			const float ds = d * (float)(int8_t)b[Q6_K_SCALES + e / 16];
			dst[e] = ds * (float)q6_value(b, e);
		}
	}
}

void q42_dq_q8_k(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q8_K_BYTES, dst += Q42_QK_K) {
		const float d = q42_ldf32(b + Q8_K_D);
		for (int j = 0; j < Q42_QK_K; j++)
			dst[j] = d * (float)(int8_t)b[Q8_K_QS + j];
	}
}

void q42_dq_tq1_0(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += TQ1_0_BYTES, dst += Q42_QK_K) {
		const float d = q42_half_at(b + TQ1_0_D);
		for (int e = 0; e < Q42_QK_K; e++)
			dst[e] = (float)q42_tq1_value(b, e) * d;
	}
}

/* tq2_0: element e is 2 bits at shift 2*((e%128)/32) of qs[(e/128)*32 +
 * e%32], stored offset by +1 -- the same walk as q2_K. */
void q42_dq_tq2_0(const void *src, float *dst, int64_t n)
{
	const uint8_t *b = src;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += TQ2_0_BYTES, dst += Q42_QK_K) {
		const float d = q42_half_at(b + TQ2_0_D);
		for (int e = 0; e < Q42_QK_K; e++)
			dst[e] = (float)(k_low2(b + TQ2_0_QS, e) - 1) * d;
	}
}

void q42_qz_f32(const float *src, void *dst, int64_t n)
{
	memcpy(dst, src, (size_t)n * sizeof(float));
}

void q42_qz_f16(const float *src, void *dst, int64_t n)
{
	uint8_t *p = dst;
	for (int64_t i = 0; i < n; i++)
		q42_st16(p + 2 * i, q42_f32_to_f16(src[i]));
}

void q42_qz_bf16(const float *src, void *dst, int64_t n)
{
	uint8_t *p = dst;
	for (int64_t i = 0; i < n; i++)
		q42_st16(p + 2 * i, q42_f32_to_bf16(src[i]));
}

/* ggml's MAX(a, b) is `a > b ? a : b`: a NaN in b wins, one in a loses.
 * Kept as is so a NaN activation yields the same block as in ggml. */
static float ggml_max(float a, float b)
{
	return a > b ? a : b;
}

/* roundf() of a value already within int8 range. ggml converts a NaN with
 * a plain cast (undefined in C, 0 on x86); we make that 0 explicit. */
/* For finite, normal blocks |v| <= 127 by construction. A NaN in the block
 * (which resets ggml's running max) or a subnormal scale (1/d overflows)
 * can push v outside int8, where a plain cast is undefined: such values
 * saturate to +-127, the range every dot kernel assumes, and NaN maps
 * to 0. */
static int8_t round_q8(float v)
{
	if (!(v == v))
		return 0;
	if (v >= 127.0f)
		return 127;
	if (v <= -127.0f)
		return -127;
	return (int8_t)roundf(v);
}

/* One 32-element q8 block as quantize_row_q8_{0,1}_ref: d = amax/127,
 * q = roundf(x * (1/d)) (halves away from zero). Returns d. */
static float q8_block(const float *x, int8_t *q)
{
	float amax = 0.0f;
	for (int j = 0; j < Q42_QK; j++)
		amax = ggml_max(amax, fabsf(x[j]));
	const float d = amax / 127.0f;
	const float id = d != 0.0f ? 1.0f / d : 0.0f;
	for (int j = 0; j < Q42_QK; j++)
		q[j] = round_q8(x[j] * id);
	return d;
}

void q42_qz_q8_0(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q8_0_BYTES, src += Q42_QK) {
		int8_t q[Q42_QK];
		const float d = q8_block(src, q);
		q42_st16(b + Q8_0_D, q42_f32_to_f16(d));
		memcpy(b + Q8_0_QS, q, sizeof q);
	}
}

void q42_qz_q8_1(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / Q42_QK; i++, b += Q8_1_BYTES, src += Q42_QK) {
		int8_t q[Q42_QK];
		const float d = q8_block(src, q);
		int sum = 0;
		for (int j = 0; j < Q42_QK; j++)
			sum += q[j];
		q42_st16(b + Q8_1_D, q42_f32_to_f16(d));
		/* s is d * sum(q), rounded to float from the f32 d, not the f16 one */
		q42_st16(b + Q8_1_S, q42_f32_to_f16((float)sum * d));
		memcpy(b + Q8_1_QS, q, sizeof q);
	}
}

/* quantize_row_q8_K_ref: the scale comes from the element of largest
 * magnitude (first one on ties, NaNs never chosen), iscale = -127/max so
 * that element maps to -127 exactly, values round half to even (ggml's
 * nearest_int) and are capped at 127; d = 1/iscale. bsums hold the sums
 * of each 16 quants for the k-quant dot products. */
void q42_qz_q8_k(const float *src, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, b += Q8_K_BYTES, src += Q42_QK_K) {
		float max = 0.0f, amax = 0.0f;
		for (int j = 0; j < Q42_QK_K; j++) {
			const float ax = fabsf(src[j]);
			if (ax > amax) {
				amax = ax;
				max = src[j];
			}
		}
		memset(b, 0, Q8_K_BYTES);
		if (amax == 0.0f)
			continue;
		const float iscale = -127.0f / max;
		int8_t *q = (int8_t *)(b + Q8_K_QS);
		for (int j = 0; j < Q42_QK_K; j++) {
			/* Finite blocks never leave [-127, 127]; a subnormal max
			 * (iscale overflows) or a NaN must not reach lrintf. */
			const float v = iscale * src[j];
			long r = !(v == v) ? 0 : v >= 127.0f ? 127 : v <= -127.0f ? -127 : lrintf(v);
			q[j] = (int8_t)r;
		}
		for (int g = 0; g < Q42_QK_K / 16; g++) {
			int sum = 0;
			for (int j = 0; j < 16; j++)
				sum += q[g * 16 + j];
			q42_st16(b + Q8_K_BSUMS + 2 * g, (uint16_t)(int16_t)sum);
		}
		const float d = 1.0f / iscale;
		uint32_t du;
		memcpy(&du, &d, sizeof du);
		q42_st32(b + Q8_K_D, du);
	}
}
