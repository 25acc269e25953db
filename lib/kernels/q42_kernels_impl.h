/* q42_kernels_impl.h -- internal to lib/kernels: block geometry and the
 * per-type functions the dispatch tables point at.
 *
 * Blocks are read as bytes at the offsets ggml's block structs give them
 * (ggml-common.h); no struct is overlaid on weight memory, so a blob needs no
 * alignment. Never installed, never included outside lib/kernels.
 */
#ifndef Q42_KERNELS_IMPL_H
#define Q42_KERNELS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include "kernels/q42_kernels.h"

/* ggml's results depend on each multiply and add being rounded on its own;
 * a fused multiply-add would change the last bit. Compilers may contract
 * a*b+c on their own (GCC does on any target with FMA), so every kernel
 * file turns that off by including this header first. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define Q42_QK 32   /* elements per block of the 32-wide types */
#define Q42_QK_K 256 /* elements per k-quant super-block */

/* Block sizes in bytes, and the byte offsets of each field. */
/* The eight-lane products of ggml's x86 vec_dot (llamacpp/q42_llamacpp.c's
 * dot_lanes8 and its SIMD row versions): Q4_1 and Q5_1 against Q8_1, Q5_0
 * against Q8_0. */
enum lanes8_kind { L8_Q4_1, L8_Q5_1, L8_Q5_0, L8_Q4_0 };

enum {
	Q4_0_BYTES = 18, Q4_0_D = 0, Q4_0_QS = 2,
	Q4_1_BYTES = 20, Q4_1_D = 0, Q4_1_M = 2, Q4_1_QS = 4,
	Q5_0_BYTES = 22, Q5_0_D = 0, Q5_0_QH = 2, Q5_0_QS = 6,
	Q5_1_BYTES = 24, Q5_1_D = 0, Q5_1_M = 2, Q5_1_QH = 4, Q5_1_QS = 8,
	Q8_0_BYTES = 34, Q8_0_D = 0, Q8_0_QS = 2,
	Q8_1_BYTES = 36, Q8_1_D = 0, Q8_1_S = 2, Q8_1_QS = 4,
	Q2_K_BYTES = 84, Q2_K_SCALES = 0, Q2_K_QS = 16, Q2_K_D = 80, Q2_K_DMIN = 82,
	Q3_K_BYTES = 110, Q3_K_HMASK = 0, Q3_K_QS = 32, Q3_K_SCALES = 96, Q3_K_D = 108,
	Q4_K_BYTES = 144, Q4_K_D = 0, Q4_K_DMIN = 2, Q4_K_SCALES = 4, Q4_K_QS = 16,
	Q5_K_BYTES = 176, Q5_K_D = 0, Q5_K_DMIN = 2, Q5_K_SCALES = 4, Q5_K_QH = 16,
	Q5_K_QS = 48,
	Q6_K_BYTES = 210, Q6_K_QL = 0, Q6_K_QH = 128, Q6_K_SCALES = 192, Q6_K_D = 208,
	Q8_K_BYTES = 292, Q8_K_D = 0, Q8_K_QS = 4, Q8_K_BSUMS = 260,
	TQ1_0_BYTES = 54, TQ1_0_QS = 0, TQ1_0_QH = 48, TQ1_0_D = 52,
	TQ2_0_BYTES = 66, TQ2_0_QS = 0, TQ2_0_D = 64,
	IQ4_NL_BYTES = 18, IQ4_NL_D = 0, IQ4_NL_QS = 2,
	IQ4_XS_BYTES = 136, IQ4_XS_D = 0, IQ4_XS_SCALES_H = 2, IQ4_XS_SCALES_L = 4, IQ4_XS_QS = 8,
};

/* IQ4_NL's sixteen values: a nibble indexes this non-uniform grid (the
 * table of ggml-common.h), the block scale multiplies the entry. */
extern const int8_t q42_iq4nl_values[16];

/* IQ4_XS's scale of 32-element sub-block ib (0..7) of the block at a: a
 * 6-bit value (low 4 bits in scales_l, high 2 in scales_h) less 32. */
static inline int q42_iq4xs_scale(const uint8_t *a, int ib)
{
	const int lo = (a[IQ4_XS_SCALES_L + ib / 2] >> (4 * (ib % 2))) & 0xF;
	const int hi = ((a[IQ4_XS_SCALES_H] | a[IQ4_XS_SCALES_H + 1] << 8) >> (2 * ib)) & 3;
	return (lo | hi << 4) - 32;
}

/* f16 field of a block, widened the way ggml does (exact). */
float q42_half_at(const uint8_t *p);

/* Scalar reference dequantization: n elements, n a multiple of the block. */
void q42_dq_f32(const void *src, float *dst, int64_t n);
void q42_dq_f16(const void *src, float *dst, int64_t n);
void q42_dq_bf16(const void *src, float *dst, int64_t n);
void q42_dq_q4_0(const void *src, float *dst, int64_t n);
void q42_dq_q4_1(const void *src, float *dst, int64_t n);
void q42_dq_q5_0(const void *src, float *dst, int64_t n);
void q42_dq_iq4_nl(const void *src, float *dst, int64_t n);
void q42_dq_iq4_xs(const void *src, float *dst, int64_t n);
void q42_dq_q5_1(const void *src, float *dst, int64_t n);
void q42_dq_q8_0(const void *src, float *dst, int64_t n);
void q42_dq_q8_1(const void *src, float *dst, int64_t n);
void q42_dq_q2_k(const void *src, float *dst, int64_t n);
void q42_dq_q3_k(const void *src, float *dst, int64_t n);
void q42_dq_q4_k(const void *src, float *dst, int64_t n);
void q42_dq_q5_k(const void *src, float *dst, int64_t n);
void q42_dq_q6_k(const void *src, float *dst, int64_t n);
void q42_dq_q8_k(const void *src, float *dst, int64_t n);
void q42_dq_tq1_0(const void *src, float *dst, int64_t n);
void q42_dq_tq2_0(const void *src, float *dst, int64_t n);

/* Scalar reference activation quantization. */
void q42_qz_f32(const float *src, void *dst, int64_t n);
void q42_qz_f16(const float *src, void *dst, int64_t n);
void q42_qz_bf16(const float *src, void *dst, int64_t n);
void q42_qz_q8_0(const float *src, void *dst, int64_t n);
void q42_qz_q8_1(const float *src, void *dst, int64_t n);
void q42_qz_q8_k(const float *src, void *dst, int64_t n);

/* Scalar reference dot products, weight type x its vec_dot_type. */
void q42_dot_f32(int64_t n, float *out, const void *w, const void *x);
void q42_dot_f16(int64_t n, float *out, const void *w, const void *x);
void q42_dot_bf16(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q4_0(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q4_1(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q5_0(int64_t n, float *out, const void *w, const void *x);
void q42_dot_iq4_nl(int64_t n, float *out, const void *w, const void *x);
void q42_dot_iq4_xs(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q5_1(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q8_0(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q2_k(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q3_k(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q4_k(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q5_k(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q6_k(int64_t n, float *out, const void *w, const void *x);
void q42_dot_tq1_0(int64_t n, float *out, const void *w, const void *x);
void q42_dot_tq2_0(int64_t n, float *out, const void *w, const void *x);

/* Sub-block scale and min of a q4_K/q5_K block: 8 pairs of 6-bit values
 * packed into 12 bytes (ggml-common.h, block_q4_K). */
static inline void q42_k4_scale_min(int j, const uint8_t *q, uint8_t *sc, uint8_t *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
		*m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
	}
}

/* Signed 6-bit sub-block scale j (0..15) of a q3_K block, already offset
 * by -32: the low 4 bits sit in bytes 0..7, the high 2 bits in 8..11. */
static inline int q42_k3_scale(int j, const uint8_t *s)
{
	int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
	int hi = (s[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
	return (lo | (hi << 4)) - 32;
}

/* A base-3 digit packed into a byte as ggml's ternary types store it:
 * multiplying by 3^k (mod 256) brings digit k to the top, and the top
 * "third" of the byte is then (q*3) >> 8, in 0..2. */
static inline int q42_tq1_trit(uint8_t byte, int k)
{
	static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
	const uint8_t q = (uint8_t)(byte * pow3[k]);
	return ((int)q * 3) >> 8;
}

/* Element e of a tq1_0 block, -1..1. Order (ggml-quants.c): bytes 0..31
 * give 5 groups of 32 (trit k of byte m is element 32k+m), bytes 32..47
 * give 5 groups of 16 (element 160+16k+m), and qh[0..3] give 4 groups of 4
 * (element 240+4k+m). */
static inline int q42_tq1_value(const uint8_t *b, int e)
{
	if (e < 160)
		return q42_tq1_trit(b[TQ1_0_QS + e % 32], e / 32) - 1;
	if (e < 240)
		return q42_tq1_trit(b[TQ1_0_QS + 32 + (e - 160) % 16], (e - 160) / 16) - 1;
	return q42_tq1_trit(b[TQ1_0_QH + (e - 240) % 4], (e - 240) / 4) - 1;
}

/* The instruction set this CPU runs that is closest to the one asked
 * for (Q42_ISA_BEST: the best one); q42_dispatch.c. */
enum q42_isa q42_isa_usable(enum q42_isa isa);

/* GeGLU through a table of f16 GELU values (ref/q42_ops.c): table[h]
 * is gelu(h as f32) rounded to f16, for every f16 bit pattern h, built on
 * first use. fma false: ggml's generic C, every step rounded; true:
 * llama.cpp's x86 builds, whose compiler computes 1 + 0.044715 x * x as
 * one fused multiply-add (llamacpp/q42_llamacpp.c uses it). */
const uint16_t *q42_gelu_table(bool fma);
void q42_gelu_table_geglu(int64_t n, float *y, const float *x, const float *g,
			  const uint16_t *table);

#endif
