/* q42_compat_x86.h -- internal to lib/kernels: the AVX2 and AVX-512
 * versions of the q42_compat kernels (x86/q42_x86_*.c), which
 * q42_compat.c hands out by CPUID.
 *
 * Each one returns the same bits as its scalar namesake in q42_compat.c for
 * every input the scalar one is defined on; nothing here may run before
 * q42_cpu_has_avx2() / q42_cpu_has_avx512() said yes. Never installed.
 */
#ifndef Q42_COMPAT_X86_H
#define Q42_COMPAT_X86_H

#include <stdbool.h>
#include <stdint.h>
#include "kernels/q42_compat.h"

#define Q42_COMPAT_ROWS_ARGS                                                                      \
	int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, int64_t n_tok, const void *x, \
		uint64_t x_stride, float *y, uint64_t y_stride

/* The AVX2 integer dots assume activation quants in -127..127 (the
 * compat and reference quantizers never make -128); VNNI ones do not. */
void q42_compat_rows_q8_0_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_0_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_k_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q6_k_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_f16_f32_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_f16_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q5_1_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q5_k_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_1_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_1_cpu_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q5_0_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_tq1_0_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_tq2_0_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q3_k_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q2_k_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_iq4_nl_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_iq4_xs_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q8_0_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_0_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_k_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q6_k_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q5_1_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q5_k_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_1_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_1_cpu_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q5_0_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_tq1_0_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_tq2_0_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q3_k_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q2_k_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_iq4_nl_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_iq4_xs_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_f16_f32_avx512(Q42_COMPAT_ROWS_ARGS);
/* BF16 (these two need AVX-512 BF16 as well: q42_cpu_has_avx512bf16) */
void q42_compat_rows_bf16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_bf16_vd_avx512(Q42_COMPAT_ROWS_ARGS);
/* the same with FMA and the MXCSR's DAZ and FTZ bits (any AVX2 CPU) */
void q42_compat_rows_bf16_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_bf16_vd_avx2(Q42_COMPAT_ROWS_ARGS);
/* F32 weights (q42_compat_dot_f32_vd, and _lanes for the tokens of a
 * pass) */
void q42_compat_rows_f32_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_f32_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_f32_vd_avx2(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_f32_vd_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_f16_avx512(Q42_COMPAT_ROWS_ARGS);

/* Q5_0, Q5_1, and Q4_0 / Q4_1 / Q8_0 of the AMX buffer's arithmetic, in
 * the R16 layout (q42_pack.h): the products of q42_compat_rows_q5_0_avx512
 * / _q5_1_avx512 / _q4_0_avx512 / _q4_1_avx512 / _q8_0_avx512, and the
 * packers (q42_pack_x86.c) */
void q42_compat_rows_q5_0_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_0_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q4_1_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q5_1_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_rows_q8_0_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_pack_q5_0_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_compat_pack_q4_0_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_compat_pack_q4_1_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_compat_pack_q5_1_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_compat_pack_q8_0_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
/* row r of a packed matrix in the file's bytes (q42_compat_packed.row) */
void q42_compat_row_q5_0_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_compat_row_q4_0_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_compat_row_q4_1_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_compat_row_q5_1_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_compat_row_q8_0_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_compat_row_q4_k_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_compat_row_q6_k_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_compat_row_f16_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
/* Q4_K of the AMX buffer's arithmetic in the R16 layout: the product of
 * q42_compat_rows_q4_k_avx512, and its packer */
void q42_compat_rows_q4_k_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_pack_q4_k_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
/* Q6_K of q42_compat_rows_q6_k_avx512's arithmetic in the R16 layout, and
 * its packer */
void q42_compat_rows_q6_k_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_pack_q6_k_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
/* F16 x F32 of the AMX buffer (q42_compat_rows_f16_f32_avx512) in the R16
 * layout, and its packer (x86/q42_x86_products_f16.c) */
void q42_compat_rows_f16_f32_r16_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_compat_pack_f16_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);

/* The generic ggml arithmetic's Q8_0, Q5_0 and Q5_1 products
 * (q42_dot_q8_0, q42_dot_q5_0, q42_dot_q5_1 of q42_kernels), many rows at
 * once, same bits. */
void q42_generic_rows_q8_0_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_generic_rows_q5_0_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_generic_rows_q5_1_avx512(Q42_COMPAT_ROWS_ARGS);
/* q42_dot_q4_k / q42_dot_q5_k likewise (in q42_kernels_avx512.c, beside
 * the one-row dots whose code they share) */
void q42_generic_rows_q4_k_avx512(Q42_COMPAT_ROWS_ARGS);
void q42_generic_rows_q5_k_avx512(Q42_COMPAT_ROWS_ARGS);

void q42_compat_quantize_q8_0_avx512(const float *src, void *dst, int64_t n);
void q42_compat_quantize_q8_1_avx512(const float *src, void *dst, int64_t n);
void q42_compat_quantize_f16_avx512(const float *src, void *dst, int64_t n);
void q42_compat_quantize_q8_0_avx2(const float *src, void *dst, int64_t n);
void q42_compat_quantize_q8_1_avx2(const float *src, void *dst, int64_t n);
void q42_compat_quantize_f16_avx2(const float *src, void *dst, int64_t n);
void q42_compat_dot_f32_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f32_lanes_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f32_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
				    uint64_t w_stride, const void *x);
void q42_compat_dot_f32_lanes_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
					  uint64_t w_stride, const void *x);
void q42_compat_dot_f16_pad_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f16_lanes_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f16_pad_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
					uint64_t w_stride, const void *x);
void q42_compat_dot_f16_lanes_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
					  uint64_t w_stride, const void *x);
void q42_compat_dot_f16_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
				    uint64_t w_stride, const void *x);
void q42_compat_dot_f32_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_compat_vlayout *lay,
			const void *x);
void q42_compat_dot_f32_lanes_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_compat_vlayout *lay,
			const void *x);
void q42_compat_dot_f16_pad_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_compat_vlayout *lay,
			const void *x);
void q42_compat_dot_f16_lanes_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_compat_vlayout *lay,
			const void *x);
void q42_compat_softmax_avx512(int64_t n, float *y, const float *x);
void q42_compat_swiglu_avx512(int64_t n, float *y, const float *x, const float *g);
void q42_compat_add_avx512(int64_t n, float *y, const float *a, const float *b);
void q42_compat_rmsnorm_rows_avx512(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
				       float eps);
void q42_compat_rope_avx512(int64_t n_rot, float *x, const float *cache, bool neox);
/* The attention products on AVX2 (two 8-lane halves per 16-lane
 * accumulator): the bits of the scalar definition */
void q42_compat_dot_f32_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f32_lanes_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f32_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
				  const void *x);
void q42_compat_dot_f32_lanes_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					uint64_t w_stride, const void *x);
void q42_compat_dot_f16_pad_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f16_lanes_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_compat_dot_f16_pad_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
				      uint64_t w_stride, const void *x);
void q42_compat_dot_f16_lanes_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					uint64_t w_stride, const void *x);
void q42_compat_dot_f16_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
				  const void *x);
void q42_compat_dot_f32_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
				   const q42_compat_vlayout *lay, const void *x);
void q42_compat_dot_f32_lanes_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					 const q42_compat_vlayout *lay, const void *x);
void q42_compat_dot_f16_pad_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
				       const q42_compat_vlayout *lay, const void *x);
void q42_compat_dot_f16_lanes_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					 const q42_compat_vlayout *lay, const void *x);
/* q42_compat_float.h's other operations compiled with FMA (AVX2 CPUs): the
 * same bits as the plain ones */
void q42_compat_softmax_fma(int64_t n, float *y, const float *x);
void q42_compat_swiglu_fma(int64_t n, float *y, const float *x, const float *g);
void q42_compat_rope_fma(int64_t n_rot, float *x, const float *cache, bool neox);

#endif
