/* x86/q42_x86.h -- internal to lib/kernels: every x86 kernel entry point
 * (the AVX2 / AVX-512 forms of the reference kernels and of llama.cpp's
 * arithmetic, x86/q42_x86_*.c), the CPU checks that guard them, and the
 * prefetch choice of the one-stream products. Only the dispatcher
 * (q42_dispatch.c) and the x86 files include it (tests/layers.sh checks).
 *
 * Each kernel returns the same bits as its scalar namesake in ref/ or
 * llamacpp/ for every input the scalar one is defined on (ggml's float
 * dots: within the bound of q42_kernels.h); nothing here may run before
 * q42_cpu_has_avx2() / q42_cpu_has_avx512() said yes. Never installed.
 */#ifndef Q42_X86_H
#define Q42_X86_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_kernels_impl.h"

/* x86 variants (x86/q42_x86_cpu.c, x86/q42_x86_generic_avx2.c,
 * x86/q42_x86_generic_avx512.c); only called after q42_isa_detect() confirmed the
 * CPU runs them. */
void q42_dot_f32_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_f16_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_bf16_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q4_0_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q4_1_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q5_0_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_iq4_nl_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_iq4_xs_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q5_1_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q8_0_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q2_k_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q3_k_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q4_k_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q5_k_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q6_k_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_tq1_0_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_dot_tq2_0_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_qz_q8_0_avx2(const float *src, void *dst, int64_t n);
void q42_qz_q8_1_avx2(const float *src, void *dst, int64_t n);
void q42_qz_q8_k_avx2(const float *src, void *dst, int64_t n);
void q42_dot_f32_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_f16_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_bf16_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q8_0_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q4_k_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q5_k_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_q6_k_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_tq1_0_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_dot_tq2_0_avx512(int64_t n, float *out, const void *w, const void *x);
int q42_cpu_has_avx2(void);
int q42_cpu_has_avx512(void);
int q42_cpu_has_avx512bf16(void);
int q42_cpu_daz_honoured(void);
/* Whether a one-token product that reads its weights as one front-to-back
 * stream (the R16 layouts) prefetches them into L1 and L2 (Intel) or, on
 * other CPUs, the heavy kinds (Q5_0, Q5_1, Q4_K) into L2 alone, nearer,
 * and the light ones (Q8_0, Q4_0, Q4_1, F16) not at all;
 * x86/q42_x86_cpu.c says why. The products over the file's layout (eight or more rows side by
 * side) prefetch the same way on every CPU. q42_x86_prefetch_ask decides
 * (CPUID, once) and is called by the x86 ISA checks, so the kernels, which
 * run only after one of those, read the answer with q42_x86_prefetch_l1. */
extern _Atomic int q42_x86_stream_pf; /* 0: not asked yet, 1: no, 2: yes */
int q42_x86_prefetch_ask(void);
static inline bool q42_x86_prefetch_l1(void)
{
	return atomic_load_explicit(&q42_x86_stream_pf, memory_order_relaxed) == 2;
}

/* The line at p + l2 into L2, then the one at p + l1 into L1, for the
 * one-stream products on Intel. Software prefetches issued back to back
 * stream markedly worse there than the same ones with two other
 * instructions between them (two NOPs; more gain nothing:
 * docs/perf/prefetch.md), so the pair is written out as one asm statement, where the
 * compiler can neither merge nor reorder it. The loop around it puts its
 * own two instructions (the add and the fused compare-and-branch) between
 * one pair and the next. */
#if defined(__x86_64__) || defined(__i386__)
#define Q42_X86_PREFETCH_L2_L1(p, l2, l1)                                                        \
	__asm__ volatile("prefetcht1 %c1(%0)\n\tnop\n\tnop\n\tprefetcht0 %c2(%0)" : : "r"(p), "i"(l2), "i"(l1))
#endif

#define Q42_LLAMACPP_ROWS_ARGS                                                                      \
	int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, int64_t n_tok, const void *x, \
		uint64_t x_stride, float *y, uint64_t y_stride

/* The AVX2 integer dots assume activation quants in -127..127 (the
 * llamacpp and reference quantizers never make -128); VNNI ones do not. */
void q42_llamacpp_rows_q8_0_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_0_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_k_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q6_k_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f16_f32_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f16_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_1_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_k_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_1_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_1_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_0_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_tq1_0_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_tq2_0_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q3_k_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q2_k_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_nl_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_xs_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q8_0_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_0_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_k_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q6_k_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_1_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_k_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_1_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_1_cpu_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_0_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_tq1_0_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_tq2_0_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q3_k_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q2_k_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_nl_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_xs_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f16_f32_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* BF16 (these two need AVX-512 BF16 as well: q42_cpu_has_avx512bf16) */
void q42_llamacpp_rows_bf16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_bf16_vd_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* the same with FMA and the MXCSR's DAZ and FTZ bits (any AVX2 CPU) */
void q42_llamacpp_rows_bf16_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_bf16_vd_avx2(Q42_LLAMACPP_ROWS_ARGS);
/* the zen4 variant's Q8_0 (plain CPU buffer), and its R16 form */
void q42_llamacpp_rows_q8_0_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q8_0_cpu_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q8_0_cpu_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* the zen4 variant's Q5_K (plain CPU buffer), AVX2 (also the AVX-512 table's) */
void q42_llamacpp_rows_q5_k_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS);
/* the zen4 variant's plain CPU buffer: IQ4_XS, and Q4_0 and Q4_K of a row
 * count CPU_REPACK declines (AVX2 forms also in the AVX-512 table, but
 * Q4_0's AVX-512 two-rows form) */
void q42_llamacpp_rows_iq4_xs_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_xs_panel_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_xs_panel_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_k_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_0_cpu_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_0_cpu_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* the zen4 variant's Q4_K (CPU_REPACK) in the R16 layout of Q4_K */
void q42_llamacpp_rows_q4_k_repack_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* the zen4 variant's Q6_K (plain CPU buffer) in the R16 layout of Q6_K */
void q42_llamacpp_rows_q6_k_cpu_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* F32 weights (q42_llamacpp_dot_f32_vd, and _lanes for the tokens of a
 * pass) */
void q42_llamacpp_rows_f32_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f32_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f32_vd_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f32_vd_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f16_tb_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_f16_tb_avx2(Q42_LLAMACPP_ROWS_ARGS);
/* the haswell build's attention products, softmax and SwiGLU in AVX2
 * (x86/q42_x86_attention.c, x86/q42_x86_rowops.c) */
#define Q42_HW_AVX2_DOTS(NAME)                                                                          \
	void q42_llamacpp_hw_##NAME##_avx2(int64_t n, float *out, const void *w, const void *x);        \
	void q42_llamacpp_hw_##NAME##_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,  \
						 uint64_t w_stride, const void *x);                    \
	void q42_llamacpp_hw_##NAME##_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w, \
						  const q42_llamacpp_vlayout *lay, const void *x);
Q42_HW_AVX2_DOTS(dot_f32)
Q42_HW_AVX2_DOTS(dot_f32_lanes)
Q42_HW_AVX2_DOTS(dot_f16_pad)
Q42_HW_AVX2_DOTS(dot_f16_lanes)
#undef Q42_HW_AVX2_DOTS
void q42_llamacpp_hw_dot_f32_vrows_multi_avx2(int64_t n, int64_t n_rows, int64_t n_x, float *out, uint64_t out_stride,
					    const void *w, const q42_llamacpp_vlayout *lay, const void *x,
					    uint64_t x_stride);
void q42_llamacpp_hw_dot_f32_lanes_vrows_multi_avx2(int64_t n, int64_t n_rows, int64_t n_x, float *out,
						  uint64_t out_stride, const void *w, const q42_llamacpp_vlayout *lay,
						  const void *x, uint64_t x_stride);
void q42_llamacpp_hw_softmax_avx2(int64_t n, float *y, const float *x);
void q42_llamacpp_rows_hw_f32_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_hw_f32_vd_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_hw_f16_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_hw_f16_vd_avx2(Q42_LLAMACPP_ROWS_ARGS);
/* A pass's tinyBLAS lanes in tiles of rows x tokens, n a multiple of the
 * lanes: haswell's tinyBLAS<8> and the AVX-512 builds' tinyBLAS<16> over
 * f32, f16 or bf16 weights and activations (x86/q42_x86_attention.c) */
void q42_llamacpp_lanes8_pass_f32_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_lanes8_pass_f16_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_lanes8_pass_bf16_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_lanes16_pass_f32_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_lanes16_pass_f16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_lanes16_pass_bf16_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* BF16 widened: haswell's in eight lanes, icelake's in sixteen
 * (x86/q42_x86_attention.c) */
void q42_llamacpp_rows_hw_bf16_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_hw_bf16_vd_avx2(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_bf16_wide_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_bf16_wide_vd_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_hw_swiglu_avx2(int64_t n, float *y, const float *x, const float *g);

/* Q5_0, Q5_1, and Q4_0 / Q4_1 / Q8_0 of the AMX buffer's arithmetic, in
 * the R16 layout (q42_pack.h): the products of q42_llamacpp_rows_q5_0_avx512
 * / _q5_1_avx512 / _q4_0_avx512 / _q4_1_avx512 / _q8_0_avx512, and the
 * packers (x86/q42_x86_pack.c) */
void q42_llamacpp_rows_q5_0_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_0_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_1_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_1_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q8_0_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_pack_q5_0_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_llamacpp_pack_q4_0_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_llamacpp_pack_q4_1_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_llamacpp_pack_q5_1_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
void q42_llamacpp_pack_q8_0_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
/* row r of a packed matrix in the file's bytes (q42_llamacpp_packed.row) */
void q42_llamacpp_row_q5_0_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_llamacpp_row_q4_0_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_llamacpp_row_q4_1_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_llamacpp_row_q5_1_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_llamacpp_row_q8_0_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_llamacpp_row_q4_k_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_llamacpp_row_q6_k_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
void q42_llamacpp_row_f16_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
/* Q4_K of the AMX buffer's arithmetic in the R16 layout: the product of
 * q42_llamacpp_rows_q4_k_avx512, and its packer */
void q42_llamacpp_rows_q4_k_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_pack_q4_k_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
/* Q6_K of q42_llamacpp_rows_q6_k_avx512's arithmetic in the R16 layout, and
 * its packer */
void q42_llamacpp_rows_q6_k_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_pack_q6_k_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);
/* F16 x F32 of the AMX buffer (q42_llamacpp_rows_f16_f32_avx512) in the R16
 * layout, and its packer (x86/q42_x86_products_f16.c) */
void q42_llamacpp_rows_f16_f32_r16_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_pack_f16_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out);

/* The generic ggml arithmetic's Q8_0, Q5_0 and Q5_1 products
 * (q42_dot_q8_0, q42_dot_q5_0, q42_dot_q5_1 of q42_kernels), many rows at
 * once, same bits. */
void q42_generic_rows_q8_0_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_generic_rows_q5_0_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_generic_rows_q5_1_avx512(Q42_LLAMACPP_ROWS_ARGS);
/* q42_dot_q4_k / q42_dot_q5_k likewise (in x86/q42_x86_generic_avx512.c, beside
 * the one-row dots whose code they share) */
void q42_generic_rows_q4_k_avx512(Q42_LLAMACPP_ROWS_ARGS);
void q42_generic_rows_q5_k_avx512(Q42_LLAMACPP_ROWS_ARGS);

void q42_llamacpp_quantize_q8_0_avx512(const float *src, void *dst, int64_t n);
void q42_llamacpp_quantize_q8_1_avx512(const float *src, void *dst, int64_t n);
void q42_llamacpp_quantize_f16_avx512(const float *src, void *dst, int64_t n);
void q42_llamacpp_quantize_q8_0_avx2(const float *src, void *dst, int64_t n);
void q42_llamacpp_quantize_q8_1_avx2(const float *src, void *dst, int64_t n);
void q42_llamacpp_quantize_f16_avx2(const float *src, void *dst, int64_t n);
void q42_llamacpp_dot_f32_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f32_lanes_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f32_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
				    uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f32_lanes_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
					  uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f16_pad_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f16_lanes_avx512(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f16_pad_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
					uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f16_lanes_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
					  uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f16_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
				    uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f32_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_llamacpp_vlayout *lay,
			const void *x);
void q42_llamacpp_dot_f32_lanes_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_llamacpp_vlayout *lay,
			const void *x);
void q42_llamacpp_dot_f16_pad_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_llamacpp_vlayout *lay,
			const void *x);
void q42_llamacpp_dot_f16_lanes_vrows_avx512(int64_t n, int64_t n_rows, float *out, const void *w, const q42_llamacpp_vlayout *lay,
			const void *x);
void q42_llamacpp_dot_f32_vrows_multi_avx512(int64_t n, int64_t n_rows, int64_t n_x, float *out, uint64_t out_stride,
					   const void *w, const q42_llamacpp_vlayout *lay, const void *x,
					   uint64_t x_stride);
void q42_llamacpp_dot_f32_lanes_vrows_multi_avx512(int64_t n, int64_t n_rows, int64_t n_x, float *out, uint64_t out_stride,
						 const void *w, const q42_llamacpp_vlayout *lay, const void *x,
						 uint64_t x_stride);
void q42_llamacpp_softmax_avx512(int64_t n, float *y, const float *x);
void q42_llamacpp_fa_one_avx512(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
				int64_t n, float *m, float *s, void *acc, uint64_t acc_stride);
void q42_llamacpp_fa_one_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
			      const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
			      int64_t n, float *m, float *s, void *acc, uint64_t acc_stride);
void q42_llamacpp_fa_tile_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
			       uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
			       const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc, float *work);
void q42_llamacpp_hw_fa_one_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				 const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
				 int64_t n, float *m, float *s, void *acc, uint64_t acc_stride);
void q42_llamacpp_hw_fa_tile_avx2(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
				  uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
				  const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc, float *work);
void q42_llamacpp_fa_tile_avx512(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
				 uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
				 const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc, float *work);
void q42_llamacpp_swiglu_avx512(int64_t n, float *y, const float *x, const float *g);
void q42_llamacpp_add_avx512(int64_t n, float *y, const float *a, const float *b);
void q42_llamacpp_dot_f32_vd_cols_avx512(int64_t n, int64_t n_cols, float *out, const float *w,
					 int64_t col_stride, const float *x);
void q42_llamacpp_f32_t16_axpy_avx512(int64_t n, int64_t n_rows, const float *wp, const float *x,
				     float scale, float *y);
void q42_llamacpp_f32_t16_axpy_avx2(int64_t n, int64_t n_rows, const float *wp, const float *x,
				   float scale, float *y);
void q42_llamacpp_rmsnorm_rows_avx512(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
				       float eps);
void q42_llamacpp_rope_avx512(int64_t n_rot, float *x, const float *cache, bool neox);
/* The attention products on AVX2 (two 8-lane halves per 16-lane
 * accumulator): the bits of the scalar definition */
void q42_llamacpp_dot_f32_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f32_lanes_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f32_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
				  const void *x);
void q42_llamacpp_dot_f32_lanes_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f16_pad_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f16_lanes_avx2(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_dot_f16_pad_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
				      uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f16_lanes_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					uint64_t w_stride, const void *x);
void q42_llamacpp_dot_f16_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
				  const void *x);
void q42_llamacpp_dot_f32_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
				   const q42_llamacpp_vlayout *lay, const void *x);
void q42_llamacpp_dot_f32_lanes_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					 const q42_llamacpp_vlayout *lay, const void *x);
void q42_llamacpp_dot_f16_pad_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
				       const q42_llamacpp_vlayout *lay, const void *x);
void q42_llamacpp_dot_f16_lanes_vrows_avx2(int64_t n, int64_t n_rows, float *out, const void *w,
					 const q42_llamacpp_vlayout *lay, const void *x);
/* llamacpp/q42_llamacpp_float.h's other operations compiled with FMA (AVX2 CPUs): the
 * same bits as the plain ones */
void q42_llamacpp_softmax_fma(int64_t n, float *y, const float *x);
void q42_llamacpp_swiglu_fma(int64_t n, float *y, const float *x, const float *g);
void q42_llamacpp_rope_fma(int64_t n_rot, float *x, const float *cache, bool neox);

#endif
