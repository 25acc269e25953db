/* q42_dot.c -- scalar reference dot products: weight row x activation row
 * of the type ggml-cpu pairs it with (F32.F32, F16.F16, BF16.BF16,
 * Q4_0/Q5_0/Q8_0/IQ4_NL.Q8_0, Q4_1/Q5_1.Q8_1, Q2_K..Q6_K/TQ1_0/TQ2_0/IQ4_XS.Q8_K).
 *
 * The arithmetic is that of ggml-cpu's generic (no-SIMD) functions: exact
 * integer sums per block, then float scaling and accumulation in ggml's
 * order -- including the 8 float lanes the q3_K..q6_K kernels accumulate
 * in -- so a result is bit-identical to llama.cpp's scalar build. The float
 * rows are summed in double. Faster variants live elsewhere and are tested
 * against these.
 */
#include <string.h>
#include "kernels/q42_kernels_impl.h"
#include "common/q42_le.h"

void q42_dot_f32(int64_t n, float *out, const void *w, const void *x)
{
	const float *a = w, *b = x;
	double sum = 0.0;
	for (int64_t i = 0; i < n; i++)
		sum += (double)(a[i] * b[i]);
	*out = (float)sum;
}

void q42_dot_f16(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	double sum = 0.0;
	for (int64_t i = 0; i < n; i++)
		sum += (double)(q42_f16_to_f32(q42_ld16(a + 2 * i)) *
				q42_f16_to_f32(q42_ld16(b + 2 * i)));
	*out = (float)sum;
}

void q42_dot_bf16(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	double sum = 0.0;
	for (int64_t i = 0; i < n; i++)
		sum += (double)(q42_bf16_to_f32(q42_ld16(a + 2 * i)) *
				q42_bf16_to_f32(q42_ld16(b + 2 * i)));
	*out = (float)sum;
}

static const int8_t *q8_qs(const uint8_t *blk, int off)
{
	return (const int8_t *)(blk + off);
}

void q42_dot_q4_0(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK; i++, a += Q4_0_BYTES, b += Q8_0_BYTES) {
		const int8_t *y = q8_qs(b, Q8_0_QS);
		int sumi = 0;
		for (int j = 0; j < Q42_QK / 2; j++) {
			sumi += ((a[Q4_0_QS + j] & 0xF) - 8) * y[j];
			sumi += ((a[Q4_0_QS + j] >> 4) - 8) * y[j + Q42_QK / 2];
		}
		sum += (float)sumi * q42_half_at(a + Q4_0_D) * q42_half_at(b + Q8_0_D);
	}
	*out = sum;
}

/* ggml's generic order: d = d_x * d_w, then sum += d * sumi */
void q42_dot_iq4_nl(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK; i++, a += IQ4_NL_BYTES, b += Q8_0_BYTES) {
		const int8_t *y = q8_qs(b, Q8_0_QS);
		int sumi = 0;
		for (int j = 0; j < Q42_QK / 2; j++) {
			sumi += q42_iq4nl_values[a[IQ4_NL_QS + j] & 0xF] * y[j];
			sumi += q42_iq4nl_values[a[IQ4_NL_QS + j] >> 4] * y[j + Q42_QK / 2];
		}
		sum += (q42_half_at(b + Q8_0_D) * q42_half_at(a + IQ4_NL_D)) * (float)sumi;
	}
	*out = sum;
}

/* ggml's generic order: per 32-element sub-block sum += (d_w * d_x *
 * scale) * sumi */
void q42_dot_iq4_xs(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += IQ4_XS_BYTES, b += Q8_K_BYTES) {
		const float d4d8 = q42_half_at(a + IQ4_XS_D) * q42_ldf32(b + Q8_K_D);
		const int8_t *y = q8_qs(b, Q8_K_QS);
		for (int ib = 0; ib < Q42_QK_K / 32; ib++) {
			const uint8_t *qs = a + IQ4_XS_QS + 16 * ib;
			int sumi = 0;
			for (int j = 0; j < 16; j++)
				sumi += y[32 * ib + j] * q42_iq4nl_values[qs[j] & 0xF] +
					y[32 * ib + j + 16] * q42_iq4nl_values[qs[j] >> 4];
			sum += (d4d8 * (float)q42_iq4xs_scale(a, ib)) * (float)sumi;
		}
	}
	*out = sum;
}

void q42_dot_q4_1(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK; i++, a += Q4_1_BYTES, b += Q8_1_BYTES) {
		const int8_t *y = q8_qs(b, Q8_1_QS);
		int sumi = 0;
		for (int j = 0; j < Q42_QK / 2; j++) {
			sumi += (a[Q4_1_QS + j] & 0xF) * y[j];
			sumi += (a[Q4_1_QS + j] >> 4) * y[j + Q42_QK / 2];
		}
		/* the min term uses q8_1's precomputed s = d * sum(q) */
		sum += (q42_half_at(a + Q4_1_D) * q42_half_at(b + Q8_1_D)) * (float)sumi +
		       q42_half_at(a + Q4_1_M) * q42_half_at(b + Q8_1_S);
	}
	*out = sum;
}

static int q5_elem(const uint8_t *qs, uint32_t qh, int e)
{
	int lo = e < 16 ? (qs[e] & 0xF) : (qs[e - 16] >> 4);
	return lo | (int)(((qh >> e) & 1u) << 4);
}

void q42_dot_q5_0(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK; i++, a += Q5_0_BYTES, b += Q8_0_BYTES) {
		const int8_t *y = q8_qs(b, Q8_0_QS);
		const uint32_t qh = q42_ld32(a + Q5_0_QH);
		int sumi = 0;
		for (int e = 0; e < Q42_QK; e++)
			sumi += (q5_elem(a + Q5_0_QS, qh, e) - 16) * y[e];
		sum += (q42_half_at(a + Q5_0_D) * q42_half_at(b + Q8_0_D)) * (float)sumi;
	}
	*out = sum;
}

void q42_dot_q5_1(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK; i++, a += Q5_1_BYTES, b += Q8_1_BYTES) {
		const int8_t *y = q8_qs(b, Q8_1_QS);
		const uint32_t qh = q42_ld32(a + Q5_1_QH);
		int sumi = 0;
		for (int e = 0; e < Q42_QK; e++)
			sumi += q5_elem(a + Q5_1_QS, qh, e) * y[e];
		sum += (q42_half_at(a + Q5_1_D) * q42_half_at(b + Q8_1_D)) * (float)sumi +
		       q42_half_at(a + Q5_1_M) * q42_half_at(b + Q8_1_S);
	}
	*out = sum;
}

void q42_dot_q8_0(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK; i++, a += Q8_0_BYTES, b += Q8_0_BYTES) {
		const int8_t *p = q8_qs(a, Q8_0_QS), *y = q8_qs(b, Q8_0_QS);
		int sumi = 0;
		for (int j = 0; j < Q42_QK; j++)
			sumi += p[j] * y[j];
		sum += (float)sumi * (q42_half_at(a + Q8_0_D) * q42_half_at(b + Q8_0_D));
	}
	*out = sum;
}

static int16_t q8k_bsum(const uint8_t *b, int g)
{
	return (int16_t)q42_ld16(b + Q8_K_BSUMS + 2 * g);
}

void q42_dot_q2_k(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q2_K_BYTES, b += Q8_K_BYTES) {
		const int8_t *y = q8_qs(b, Q8_K_QS);
		const uint8_t *sc = a + Q2_K_SCALES, *qs = a + Q2_K_QS;
		int summs = 0, isum = 0;
		for (int s = 0; s < 16; s++)
			summs += q8k_bsum(b, s) * (sc[s] >> 4);
		for (int s = 0; s < 16; s++) {
			int isuml = 0;
			for (int e = s * 16; e < s * 16 + 16; e++)
				isuml += y[e] * ((qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3);
			isum += (sc[s] & 0xF) * isuml;
		}
		const float yd = q42_ldf32(b + Q8_K_D);
		const float dall = yd * q42_half_at(a + Q2_K_D);
		const float dmin = yd * q42_half_at(a + Q2_K_DMIN);
		sum += dall * (float)isum - dmin * (float)summs;
	}
	*out = sum;
}

/* ggml's generic q3_K..q6_K kernels keep 8 int32 lanes per super-block
 * (lane = element index mod 8), scale each lane by d in float, and add the
 * 8 float lane totals into the result only at the very end. */
static float sum_lanes(const float lanes[8], float sum)
{
	for (int l = 0; l < 8; l++)
		sum += lanes[l];
	return sum;
}

void q42_dot_q3_k(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q3_K_BYTES, b += Q8_K_BYTES) {
		const int8_t *y = q8_qs(b, Q8_K_QS);
		int scale[16];
		for (int s = 0; s < 16; s++)
			scale[s] = q42_k3_scale(s, a + Q3_K_SCALES);
		int32_t acc[8] = {0};
		for (int e = 0; e < Q42_QK_K; e++) {
			int lo = (a[Q3_K_QS + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
			int hi = (a[Q3_K_HMASK + e % 32] >> (e / 32)) & 1;
			acc[e % 8] += scale[e / 16] * (y[e] * (lo - (hi ? 0 : 4)));
		}
		const float d = q42_half_at(a + Q3_K_D) * q42_ldf32(b + Q8_K_D);
		for (int l = 0; l < 8; l++)
			lanes[l] += d * (float)acc[l];
	}
	*out = sum_lanes(lanes, 0.0f);
}

/* q4_K and q5_K differ only in the fifth bit; qh_off is -1 for q4_K. */
static void dot_k4(int64_t n, float *out, const uint8_t *a, const uint8_t *b, int bytes,
		   int scales_off, int qs_off, int qh_off)
{
	float lanes[8] = {0};
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += bytes, b += Q8_K_BYTES) {
		const int8_t *y = q8_qs(b, Q8_K_QS);
		uint8_t sc[8], mn[8];
		for (int s = 0; s < 8; s++)
			q42_k4_scale_min(s, a + scales_off, &sc[s], &mn[s]);
		int32_t acc[8] = {0};
		for (int e = 0; e < Q42_QK_K; e++) {
			const uint8_t q = a[qs_off + (e / 64) * 32 + e % 32];
			int v = (e % 64) < 32 ? (q & 0xF) : (q >> 4);
			if (qh_off >= 0)
				v += 16 * ((a[qh_off + e % 32] >> (e / 32)) & 1);
			acc[e % 8] += sc[e / 32] * (y[e] * v);
		}
		int summ = 0;
		for (int g = 0; g < 16; g++)
			summ += q8k_bsum(b, g) * mn[g / 2];
		const float yd = q42_ldf32(b + Q8_K_D);
		const float d = q42_half_at(a + Q4_K_D) * yd;
		for (int l = 0; l < 8; l++)
			lanes[l] += d * (float)acc[l];
		const float dmin = q42_half_at(a + Q4_K_DMIN) * yd;
		sum -= dmin * (float)summ;
	}
	*out = sum_lanes(lanes, sum);
}

void q42_dot_q4_k(int64_t n, float *out, const void *w, const void *x)
{
	dot_k4(n, out, w, x, Q4_K_BYTES, Q4_K_SCALES, Q4_K_QS, -1);
}

void q42_dot_q5_k(int64_t n, float *out, const void *w, const void *x)
{
	dot_k4(n, out, w, x, Q5_K_BYTES, Q5_K_SCALES, Q5_K_QS, Q5_K_QH);
}

void q42_dot_q6_k(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float lanes[8] = {0};
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += Q6_K_BYTES, b += Q8_K_BYTES) {
		const int8_t *y = q8_qs(b, Q8_K_QS);
		int32_t acc[8] = {0};
		for (int e = 0; e < Q42_QK_K; e++) {
			const int h = e / 128, q = (e % 128) / 32, l = e % 32;
			const uint8_t lo = a[Q6_K_QL + h * 64 + (q % 2) * 32 + l];
			const int lo4 = q < 2 ? (lo & 0xF) : (lo >> 4);
			const int hi2 = (a[Q6_K_QH + h * 32 + l] >> (2 * q)) & 3;
			const int v = (lo4 | (hi2 << 4)) - 32;
			acc[e % 8] += (int8_t)a[Q6_K_SCALES + e / 16] * (y[e] * v);
		}
		const float d = q42_half_at(a + Q6_K_D) * q42_ldf32(b + Q8_K_D);
		for (int l = 0; l < 8; l++)
			lanes[l] += d * (float)acc[l];
	}
	*out = sum_lanes(lanes, 0.0f);
}

void q42_dot_tq1_0(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += TQ1_0_BYTES, b += Q8_K_BYTES) {
		const int8_t *y = q8_qs(b, Q8_K_QS);
		int sumi = 0;
		for (int e = 0; e < Q42_QK_K; e++)
			sumi += q42_tq1_value(a, e) * y[e];
		sum += (float)sumi * (q42_half_at(a + TQ1_0_D) * q42_ldf32(b + Q8_K_D));
	}
	*out = sum;
}

void q42_dot_tq2_0(int64_t n, float *out, const void *w, const void *x)
{
	const uint8_t *a = w, *b = x;
	float sum = 0.0f;
	for (int64_t i = 0; i < n / Q42_QK_K; i++, a += TQ2_0_BYTES, b += Q8_K_BYTES) {
		const int8_t *y = q8_qs(b, Q8_K_QS);
		int sumi = 0;
		for (int e = 0; e < Q42_QK_K; e++)
			sumi += y[e] * (((a[TQ2_0_QS + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3) - 1);
		const float d = q42_ldf32(b + Q8_K_D) * q42_half_at(a + TQ2_0_D);
		sum += (float)sumi * d;
	}
	*out = sum;
}
