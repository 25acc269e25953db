/* q42_dispatch.c -- the one place that names instruction-set-specific
 * kernels: it checks what the CPU runs and hands out, per ISA, the
 * reference tables (q42_kernels_get), llama.cpp's row products and row
 * operations (q42_llamacpp_rows_for, q42_llamacpp_ops_get), the generic
 * arithmetic's many-row products (q42_llamacpp_generic_rows) and the
 * repacked forms (q42_llamacpp_select_packed).
 *
 * A table is handed out only after the CPU was checked to run it: no path
 * here may execute an instruction the CPU lacks. Which llama.cpp path a
 * matrix takes is decided in llamacpp/q42_llamacpp.c; this file only says
 * which instructions compute it.
 */
#include <stddef.h>
#include <string.h>
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_ops.h"
#include "kernels/q42_pack.h"
#include "kernels/llamacpp/q42_llamacpp_impl.h"
#include "kernels/x86/q42_x86.h"
#include "kernels/x86/q42_x86_amx.h"
#include "common/q42_types.h"

/* ---- the reference tables (ggml's generic arithmetic) ---------------- */

#define KT(dq, qz, dot, vdt) {(dq), (qz), (dot), (uint32_t)(vdt)}

/* Pairs and activation types as ggml-cpu's type_traits_cpu has them. The
 * ISA tables differ from the scalar one only in the kernel arguments
 * (the dequantizers stay scalar), so every type keeps a kernel on every
 * ISA. */
#define TABLE(P) { \
	[Q42_DTYPE_F32] = KT(q42_dq_f32, q42_qz_f32, P##f32, Q42_DTYPE_F32), \
	[Q42_DTYPE_F16] = KT(q42_dq_f16, q42_qz_f16, P##f16, Q42_DTYPE_F16), \
	[Q42_DTYPE_BF16] = KT(q42_dq_bf16, q42_qz_bf16, P##bf16, Q42_DTYPE_BF16), \
	[Q42_DTYPE_Q4_0] = KT(q42_dq_q4_0, NULL, P##q4_0, Q42_DTYPE_Q8_0), \
	[Q42_DTYPE_Q4_1] = KT(q42_dq_q4_1, NULL, P##q4_1, Q42_DTYPE_Q8_1), \
	[Q42_DTYPE_Q5_0] = KT(q42_dq_q5_0, NULL, P##q5_0, Q42_DTYPE_Q8_0), \
	[Q42_DTYPE_Q5_1] = KT(q42_dq_q5_1, NULL, P##q5_1, Q42_DTYPE_Q8_1), \
	[Q42_DTYPE_Q8_0] = KT(q42_dq_q8_0, P##qz_q8_0, P##q8_0, Q42_DTYPE_Q8_0), \
	[Q42_DTYPE_Q8_1] = KT(q42_dq_q8_1, P##qz_q8_1, NULL, Q42_DTYPE_Q8_1), \
	[Q42_DTYPE_Q2_K] = KT(q42_dq_q2_k, NULL, P##q2_k, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_Q3_K] = KT(q42_dq_q3_k, NULL, P##q3_k, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_Q4_K] = KT(q42_dq_q4_k, NULL, P##q4_k, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_Q5_K] = KT(q42_dq_q5_k, NULL, P##q5_k, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_Q6_K] = KT(q42_dq_q6_k, NULL, P##q6_k, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_Q8_K] = KT(q42_dq_q8_k, P##qz_q8_k, NULL, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_TQ1_0] = KT(q42_dq_tq1_0, NULL, P##tq1_0, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_TQ2_0] = KT(q42_dq_tq2_0, NULL, P##tq2_0, Q42_DTYPE_Q8_K), \
	[Q42_DTYPE_IQ4_NL] = KT(q42_dq_iq4_nl, NULL, P##iq4_nl, Q42_DTYPE_Q8_0), \
	[Q42_DTYPE_IQ4_XS] = KT(q42_dq_iq4_xs, NULL, P##iq4_xs, Q42_DTYPE_Q8_K), \
}

/* Name maps: s_ is the scalar reference, a2_ AVX2, a5_ AVX-512 (which
 * keeps the AVX2 kernel where a 512-bit one would not pay). */
#define s_f32 q42_dot_f32
#define s_f16 q42_dot_f16
#define s_bf16 q42_dot_bf16
#define s_q4_0 q42_dot_q4_0
#define s_q4_1 q42_dot_q4_1
#define s_q5_0 q42_dot_q5_0
#define s_q5_1 q42_dot_q5_1
#define s_q8_0 q42_dot_q8_0
#define s_q2_k q42_dot_q2_k
#define s_q3_k q42_dot_q3_k
#define s_q4_k q42_dot_q4_k
#define s_q5_k q42_dot_q5_k
#define s_q6_k q42_dot_q6_k
#define s_tq1_0 q42_dot_tq1_0
#define s_tq2_0 q42_dot_tq2_0
#define s_iq4_nl q42_dot_iq4_nl
#define s_iq4_xs q42_dot_iq4_xs
#define s_qz_q8_0 q42_qz_q8_0
#define s_qz_q8_1 q42_qz_q8_1
#define s_qz_q8_k q42_qz_q8_k

static const q42_type_kernels scalar_table[Q42_DTYPE_COUNT_] = TABLE(s_);

#if defined(__x86_64__) || defined(__i386__)
#define Q42_HAVE_X86 1
#define a2_f32 q42_dot_f32_avx2
#define a2_f16 q42_dot_f16_avx2
#define a2_bf16 q42_dot_bf16_avx2
#define a2_q4_0 q42_dot_q4_0_avx2
#define a2_q4_1 q42_dot_q4_1_avx2
#define a2_q5_0 q42_dot_q5_0_avx2
#define a2_q5_1 q42_dot_q5_1_avx2
#define a2_q8_0 q42_dot_q8_0_avx2
#define a2_q2_k q42_dot_q2_k_avx2
#define a2_q3_k q42_dot_q3_k_avx2
#define a2_q4_k q42_dot_q4_k_avx2
#define a2_q5_k q42_dot_q5_k_avx2
#define a2_q6_k q42_dot_q6_k_avx2
#define a2_tq1_0 q42_dot_tq1_0_avx2
#define a2_tq2_0 q42_dot_tq2_0_avx2
#define a2_iq4_nl q42_dot_iq4_nl_avx2
#define a2_iq4_xs q42_dot_iq4_xs_avx2
#define a2_qz_q8_0 q42_qz_q8_0_avx2
#define a2_qz_q8_1 q42_qz_q8_1_avx2
#define a2_qz_q8_k q42_qz_q8_k_avx2
#define a5_f32 q42_dot_f32_avx512
#define a5_f16 q42_dot_f16_avx512
#define a5_bf16 q42_dot_bf16_avx512
#define a5_q4_0 q42_dot_q4_0_avx2
#define a5_q4_1 q42_dot_q4_1_avx2
#define a5_q5_0 q42_dot_q5_0_avx2
#define a5_q5_1 q42_dot_q5_1_avx2
#define a5_q8_0 q42_dot_q8_0_avx512
#define a5_q2_k q42_dot_q2_k_avx2
#define a5_q3_k q42_dot_q3_k_avx2
#define a5_q4_k q42_dot_q4_k_avx512
#define a5_q5_k q42_dot_q5_k_avx512
#define a5_q6_k q42_dot_q6_k_avx512
#define a5_tq1_0 q42_dot_tq1_0_avx512
#define a5_tq2_0 q42_dot_tq2_0_avx512
#define a5_iq4_nl q42_dot_iq4_nl_avx2
#define a5_iq4_xs q42_dot_iq4_xs_avx2
#define a5_qz_q8_0 q42_qz_q8_0_avx2
#define a5_qz_q8_1 q42_qz_q8_1_avx2
#define a5_qz_q8_k q42_qz_q8_k_avx2
static const q42_type_kernels avx2_table[Q42_DTYPE_COUNT_] = TABLE(a2_);
static const q42_type_kernels avx512_table[Q42_DTYPE_COUNT_] = TABLE(a5_);
#endif

static bool isa_supported(enum q42_isa isa)
{
	switch (isa) {
	case Q42_ISA_SCALAR:
		return true;
#ifdef Q42_HAVE_X86
	case Q42_ISA_AVX2:
		return q42_cpu_has_avx2();
	case Q42_ISA_AVX512:
		return q42_cpu_has_avx512();
#endif
	default:
		return false;
	}
}

enum q42_isa q42_isa_detect(void)
{
	if (isa_supported(Q42_ISA_AVX512))
		return Q42_ISA_AVX512;
	if (isa_supported(Q42_ISA_AVX2))
		return Q42_ISA_AVX2;
	return Q42_ISA_SCALAR;
}

const char *q42_isa_name(enum q42_isa isa)
{
	switch (isa) {
	case Q42_ISA_SCALAR:
		return "scalar";
	case Q42_ISA_AVX2:
		return "avx2";
	case Q42_ISA_AVX512:
		return "avx512";
	case Q42_ISA_BEST:
		return q42_isa_name(q42_isa_detect());
	}
	return "unknown";
}

const q42_type_kernels *q42_kernels_get(uint32_t dtype, enum q42_isa isa)
{
	const q42_type_kernels *table = scalar_table;

	if (dtype >= Q42_DTYPE_COUNT_ || scalar_table[dtype].dequant == NULL)
		return NULL;
	if (isa == Q42_ISA_BEST)
		isa = q42_isa_detect();
	if (!isa_supported(isa))
		return NULL;
#ifdef Q42_HAVE_X86
	if (isa == Q42_ISA_AVX2)
		table = avx2_table;
	else if (isa == Q42_ISA_AVX512)
		table = avx512_table;
#endif
	return &table[dtype];
}

bool q42_dequant(uint32_t dtype, const void *src, float *dst, int64_t n)
{
	const q42_type_kernels *k = q42_kernels_get(dtype, Q42_ISA_SCALAR);
	const q42_dtype_info *info = q42_dtype_get(dtype);

	if (k == NULL || info == NULL || n < 0 || n % info->block_elems != 0)
		return false;
	k->dequant(src, dst, n);
	return true;
}

/* ---- llama.cpp's arithmetic ---------------------------------------------- */

/* The instruction set this CPU runs that is closest to the one asked for. */
enum q42_isa q42_isa_usable(enum q42_isa isa)
{
#if defined(__x86_64__) || defined(__i386__)
	if (isa == Q42_ISA_SCALAR)
		return Q42_ISA_SCALAR;
	if ((isa == Q42_ISA_AVX512 || isa == Q42_ISA_BEST) && q42_cpu_has_avx512())
		return Q42_ISA_AVX512;
	if (q42_cpu_has_avx2())
		return Q42_ISA_AVX2;
#else
	(void)isa;
#endif
	return Q42_ISA_SCALAR;
}

q42_llamacpp_rows_fn q42_llamacpp_rows_for(enum q42_lrows which, enum q42_isa isa)
{
#if defined(__x86_64__) || defined(__i386__)
	static const q42_llamacpp_rows_fn avx2[Q42_LROWS_COUNT] = {
		q42_llamacpp_rows_q4_0_avx2, q42_llamacpp_rows_q8_0_avx2, q42_llamacpp_rows_q4_k_avx2,
		q42_llamacpp_rows_q6_k_avx2, q42_llamacpp_rows_f16_f32_avx2, q42_llamacpp_rows_f16_avx2,
		q42_llamacpp_rows_q5_1_avx2, q42_llamacpp_rows_q5_k_avx2, q42_llamacpp_rows_q4_1_avx2,
		q42_llamacpp_rows_q4_1_cpu_avx2, q42_llamacpp_rows_q5_0_avx2, q42_llamacpp_rows_tq1_0_avx2,
		q42_llamacpp_rows_tq2_0_avx2, q42_llamacpp_rows_q3_k_avx2, q42_llamacpp_rows_q2_k_avx2,
		q42_llamacpp_rows_iq4_nl_avx2, q42_llamacpp_rows_iq4_xs_avx2, q42_llamacpp_rows_bf16_avx2,
		q42_llamacpp_rows_bf16_vd_avx2, q42_llamacpp_rows_f32_avx2, q42_llamacpp_rows_f32_vd_avx2,
		q42_llamacpp_rows_q8_0_cpu_avx2, NULL, q42_llamacpp_rows_q5_k_cpu_avx2, NULL,
		q42_llamacpp_rows_iq4_xs_cpu_avx2, q42_llamacpp_rows_q4_0_cpu_avx2, q42_llamacpp_rows_q4_k_cpu_avx2,
		q42_llamacpp_rows_iq4_xs_panel_avx2, [Q42_LROWS_F16_TB] = q42_llamacpp_rows_f16_tb_avx2,
		[Q42_LROWS_HW_F32] = q42_llamacpp_rows_hw_f32_avx2, [Q42_LROWS_HW_F32_VD] = q42_llamacpp_rows_hw_f32_vd_avx2,
		[Q42_LROWS_HW_F16] = q42_llamacpp_rows_hw_f16_avx2, [Q42_LROWS_HW_F16_VD] = q42_llamacpp_rows_hw_f16_vd_avx2,
		[Q42_LROWS_HW_BF16] = q42_llamacpp_rows_hw_bf16_avx2, [Q42_LROWS_HW_BF16_VD] = q42_llamacpp_rows_hw_bf16_vd_avx2};
	static const q42_llamacpp_rows_fn avx512[Q42_LROWS_COUNT] = {
		q42_llamacpp_rows_q4_0_avx512, q42_llamacpp_rows_q8_0_avx512,
		q42_llamacpp_rows_q4_k_avx512, q42_llamacpp_rows_q6_k_avx512,
		q42_llamacpp_rows_f16_f32_avx512, q42_llamacpp_rows_f16_avx512, q42_llamacpp_rows_q5_1_avx512,
		q42_llamacpp_rows_q5_k_avx512, q42_llamacpp_rows_q4_1_avx512, q42_llamacpp_rows_q4_1_cpu_avx512,
		q42_llamacpp_rows_q5_0_avx512, q42_llamacpp_rows_tq1_0_avx512, q42_llamacpp_rows_tq2_0_avx512,
		q42_llamacpp_rows_q3_k_avx512, q42_llamacpp_rows_q2_k_avx512, q42_llamacpp_rows_iq4_nl_avx512,
		q42_llamacpp_rows_iq4_xs_avx512, q42_llamacpp_rows_bf16_avx512, q42_llamacpp_rows_bf16_vd_avx512,
		q42_llamacpp_rows_f32_avx512, q42_llamacpp_rows_f32_vd_avx512,
		q42_llamacpp_rows_q8_0_cpu_avx512, NULL, q42_llamacpp_rows_q5_k_cpu_avx2, NULL,
		q42_llamacpp_rows_iq4_xs_cpu_avx2, q42_llamacpp_rows_q4_0_cpu_avx512, q42_llamacpp_rows_q4_k_cpu_avx2,
		q42_llamacpp_rows_iq4_xs_panel_avx512, [Q42_LROWS_F16_TB] = q42_llamacpp_rows_f16_tb_avx512,
		/* haswell's eight lanes are its AVX2 forms on AVX-512 too */
		[Q42_LROWS_HW_F32] = q42_llamacpp_rows_hw_f32_avx2, [Q42_LROWS_HW_F32_VD] = q42_llamacpp_rows_hw_f32_vd_avx2,
		[Q42_LROWS_HW_F16] = q42_llamacpp_rows_hw_f16_avx2, [Q42_LROWS_HW_F16_VD] = q42_llamacpp_rows_hw_f16_vd_avx2,
		[Q42_LROWS_HW_BF16] = q42_llamacpp_rows_hw_bf16_avx2, [Q42_LROWS_HW_BF16_VD] = q42_llamacpp_rows_hw_bf16_vd_avx2,
		[Q42_LROWS_BF16_WIDE] = q42_llamacpp_rows_bf16_wide_avx512,
		[Q42_LROWS_BF16_WIDE_VD] = q42_llamacpp_rows_bf16_wide_vd_avx512};
	/* AVX-512 CPUs without VDPBF16PS take its AVX2 form, which needs
	 * MXCSR's DAZ to flush subnormals as VDPBF16PS does */
	if ((which == Q42_LROWS_BF16 || which == Q42_LROWS_BF16_VD) && isa != Q42_ISA_SCALAR &&
	    !(isa == Q42_ISA_AVX512 && q42_cpu_has_avx512bf16()))
		return q42_cpu_daz_honoured() ? avx2[which] : q42_llamacpp_scalar_rows[which];
#if defined(Q42_HAVE_AMX)
	/* AVX-512 CPUs with AMX multiply several tokens on tiles */
	static const q42_llamacpp_rows_fn amx[Q42_LROWS_COUNT] = {
		q42_llamacpp_rows_q4_0_amx, q42_llamacpp_rows_q8_0_amx, q42_llamacpp_rows_q4_k_amx,
		q42_llamacpp_rows_q6_k_amx, q42_llamacpp_rows_f16_f32_avx512, q42_llamacpp_rows_f16_avx512,
		q42_llamacpp_rows_q5_1_avx512, q42_llamacpp_rows_q5_k_amx, q42_llamacpp_rows_q4_1_amx,
		q42_llamacpp_rows_q4_1_cpu_avx512, q42_llamacpp_rows_q5_0_avx512, q42_llamacpp_rows_tq1_0_avx512,
		q42_llamacpp_rows_tq2_0_avx512, q42_llamacpp_rows_q3_k_avx512, q42_llamacpp_rows_q2_k_amx,
		q42_llamacpp_rows_iq4_nl_amx, q42_llamacpp_rows_iq4_xs_amx, q42_llamacpp_rows_bf16_avx512,
		q42_llamacpp_rows_bf16_vd_avx512, q42_llamacpp_rows_f32_avx512, q42_llamacpp_rows_f32_vd_avx512,
		q42_llamacpp_rows_q8_0_cpu_avx512, NULL, q42_llamacpp_rows_q5_k_cpu_avx2, NULL,
		q42_llamacpp_rows_iq4_xs_cpu_avx2, q42_llamacpp_rows_q4_0_cpu_avx512, q42_llamacpp_rows_q4_k_cpu_avx2,
		q42_llamacpp_rows_iq4_xs_panel_avx512};
	if (isa == Q42_ISA_AVX512 && q42_amx_usable() && amx[which] != NULL)
		return amx[which];
#endif
	if (isa == Q42_ISA_AVX512 && avx512[which] != NULL)
		return avx512[which];
	if (isa == Q42_ISA_AVX2 && avx2[which] != NULL)
		return avx2[which];
#else
	(void)isa;
#endif
	return q42_llamacpp_scalar_rows[which];
}

q42_llamacpp_rows_fn q42_llamacpp_generic_rows(uint32_t dtype, enum q42_isa isa)
{
	if (q42_isa_usable(isa) != Q42_ISA_AVX512)
		return NULL;
	/* the kernels q42_kernels_get hands out must be the ones these
	 * reproduce: the AVX-512 table's, which equal the scalar reference */
#if defined(__x86_64__) || defined(__i386__)
	if (dtype == Q42_DTYPE_Q4_K)
		return q42_generic_rows_q4_k_avx512;
	if (dtype == Q42_DTYPE_Q5_K)
		return q42_generic_rows_q5_k_avx512;
#endif
	if (dtype != Q42_DTYPE_Q8_0 && dtype != Q42_DTYPE_Q5_0 && dtype != Q42_DTYPE_Q5_1)
		return NULL;
#if defined(Q42_HAVE_AMX)
	if (q42_amx_usable())
		return dtype == Q42_DTYPE_Q8_0	 ? q42_generic_rows_q8_0_amx
		       : dtype == Q42_DTYPE_Q5_0 ? q42_generic_rows_q5_0_amx
						 : q42_generic_rows_q5_1_amx;
#endif
#if defined(__x86_64__) || defined(__i386__)
	return dtype == Q42_DTYPE_Q8_0	 ? q42_generic_rows_q8_0_avx512
	       : dtype == Q42_DTYPE_Q5_0 ? q42_generic_rows_q5_0_avx512
					 : q42_generic_rows_q5_1_avx512;
#else
	return NULL;
#endif
}

/* The fields every AVX-512 build's table ends with. */
#define SR_TAIL q42_llamacpp_dot_f32_vd, q42_llamacpp_dot_f16, q42_llamacpp_softmax_unpadded, 16u

const q42_llamacpp_ops *q42_llamacpp_ops_get(enum q42_isa isa)
{
	static const q42_llamacpp_ops scalar = {
		Q42_ISA_SCALAR, q42_llamacpp_quantize_q8_0, q42_llamacpp_quantize_q8_1, q42_llamacpp_quantize_f16,
		q42_llamacpp_dot_f32, q42_llamacpp_dot_f32_lanes, q42_llamacpp_dot_f32_rows,
		q42_llamacpp_dot_f32_lanes_rows, q42_llamacpp_dot_f16_pad, q42_llamacpp_dot_f16_lanes,
		q42_llamacpp_dot_f16_pad_rows, q42_llamacpp_dot_f16_lanes_rows, q42_llamacpp_dot_f16_rows,
		q42_llamacpp_dot_f32_vrows, q42_llamacpp_dot_f32_lanes_vrows, q42_llamacpp_dot_f16_pad_vrows,
		q42_llamacpp_dot_f16_lanes_vrows, q42_llamacpp_softmax,
		q42_llamacpp_swiglu, q42_llamacpp_geglu, q42_llamacpp_conv_dot, q42_llamacpp_rope, q42_op_add,
		q42_op_rmsnorm_rows,
		q42_llamacpp_f32_t16_axpy,
		q42_llamacpp_fa_one, q42_llamacpp_fa_tile, q42_llamacpp_dot_f32_vd_cols, SR_TAIL, NULL, NULL};
#if defined(__x86_64__) || defined(__i386__)
	/* AVX2: the quantizers and the attention products in 8-lane vectors,
	 * the other row ops the scalar ones compiled with FMA
	 * (llamacpp/q42_llamacpp_float.h) */
	static const q42_llamacpp_ops avx2 = {
		Q42_ISA_AVX2, q42_llamacpp_quantize_q8_0_avx2, q42_llamacpp_quantize_q8_1_avx2, q42_llamacpp_quantize_f16_avx2,
		q42_llamacpp_dot_f32_avx2, q42_llamacpp_dot_f32_lanes_avx2, q42_llamacpp_dot_f32_rows_avx2,
		q42_llamacpp_dot_f32_lanes_rows_avx2, q42_llamacpp_dot_f16_pad_avx2,
		q42_llamacpp_dot_f16_lanes_avx2, q42_llamacpp_dot_f16_pad_rows_avx2,
		q42_llamacpp_dot_f16_lanes_rows_avx2, q42_llamacpp_dot_f16_rows_avx2, q42_llamacpp_dot_f32_vrows_avx2,
		q42_llamacpp_dot_f32_lanes_vrows_avx2, q42_llamacpp_dot_f16_pad_vrows_avx2,
		q42_llamacpp_dot_f16_lanes_vrows_avx2, q42_llamacpp_softmax_fma,
		q42_llamacpp_swiglu_fma, q42_llamacpp_geglu, q42_llamacpp_conv_dot, q42_llamacpp_rope_fma, q42_op_add, q42_op_rmsnorm_rows,
		q42_llamacpp_f32_t16_axpy_avx2,
		q42_llamacpp_fa_one_avx2, q42_llamacpp_fa_tile_avx2, q42_llamacpp_dot_f32_vd_cols, SR_TAIL, NULL, NULL};
	static const q42_llamacpp_ops avx512 = {
		Q42_ISA_AVX512, q42_llamacpp_quantize_q8_0_avx512, q42_llamacpp_quantize_q8_1_avx512,
		q42_llamacpp_quantize_f16_avx512,
		q42_llamacpp_dot_f32_avx512, q42_llamacpp_dot_f32_lanes_avx512,
		q42_llamacpp_dot_f32_rows_avx512, q42_llamacpp_dot_f32_lanes_rows_avx512,
		q42_llamacpp_dot_f16_pad_avx512, q42_llamacpp_dot_f16_lanes_avx512,
		q42_llamacpp_dot_f16_pad_rows_avx512, q42_llamacpp_dot_f16_lanes_rows_avx512,
		q42_llamacpp_dot_f16_rows_avx512, q42_llamacpp_dot_f32_vrows_avx512,
		q42_llamacpp_dot_f32_lanes_vrows_avx512, q42_llamacpp_dot_f16_pad_vrows_avx512,
		q42_llamacpp_dot_f16_lanes_vrows_avx512, q42_llamacpp_softmax_avx512, q42_llamacpp_swiglu_avx512, q42_llamacpp_geglu,
		q42_llamacpp_conv_dot, q42_llamacpp_rope_avx512,
		q42_llamacpp_add_avx512, q42_llamacpp_rmsnorm_rows_avx512, q42_llamacpp_f32_t16_axpy_avx512,
		q42_llamacpp_fa_one_avx512, q42_llamacpp_fa_tile_avx512,
		q42_llamacpp_dot_f32_vd_cols_avx512, SR_TAIL, q42_llamacpp_dot_f32_vrows_multi_avx512,
		q42_llamacpp_dot_f32_lanes_vrows_multi_avx512};
	switch (q42_isa_usable(isa)) {
	case Q42_ISA_AVX512: return &avx512;
	case Q42_ISA_AVX2: return &avx2;
	default: break;
	}
#else
	(void)isa;
#endif
	return &scalar;
}

/* haswell's SIMD tables: each ISA's quantizers, RoPE, adds and norms
 * (the same bits in every build), with the eight-lane float operations in
 * AVX2 (on AVX-512 CPUs too: eight lanes are the arithmetic), the rarer
 * ones the scalar definitions compiled with FMA. */
#define HW_TABLE(ISA, Q, ROPE, ADD, RMS)                                                                 \
	{                                                                                                \
		ISA, q42_llamacpp_quantize_q8_0##Q, q42_llamacpp_quantize_q8_1##Q,                        \
		q42_llamacpp_quantize_f16##Q, q42_llamacpp_hw_dot_f32_avx2, q42_llamacpp_hw_dot_f32_lanes_avx2, \
		q42_llamacpp_hw_dot_f32_rows_avx2, q42_llamacpp_hw_dot_f32_lanes_rows_avx2,               \
		q42_llamacpp_hw_dot_f16_pad_avx2, q42_llamacpp_hw_dot_f16_lanes_avx2,                     \
		q42_llamacpp_hw_dot_f16_pad_rows_avx2, q42_llamacpp_hw_dot_f16_lanes_rows_avx2,           \
		q42_llamacpp_hw_dot_f16_rows_fma, q42_llamacpp_hw_dot_f32_vrows_avx2,                     \
		q42_llamacpp_hw_dot_f32_lanes_vrows_avx2, q42_llamacpp_hw_dot_f16_pad_vrows_avx2,         \
		q42_llamacpp_hw_dot_f16_lanes_vrows_avx2, q42_llamacpp_hw_softmax_avx2,                   \
		q42_llamacpp_hw_swiglu_avx2, q42_llamacpp_geglu, q42_llamacpp_conv_dot, ROPE, ADD, RMS,    \
		q42_llamacpp_hw_f32_t16_axpy_fma, q42_llamacpp_hw_fa_one_avx2, q42_llamacpp_hw_fa_tile_avx2, \
		q42_llamacpp_hw_dot_f32_vd_cols_fma, q42_llamacpp_hw_dot_f32_vd, q42_llamacpp_hw_dot_f16,  \
		q42_llamacpp_hw_softmax_unpadded_fma, 8u, q42_llamacpp_hw_dot_f32_vrows_multi_avx2,       \
		q42_llamacpp_hw_dot_f32_lanes_vrows_multi_avx2                                            \
	}

const q42_llamacpp_ops *q42_llamacpp_ops_get_variant(enum q42_llamacpp_variant variant, enum q42_isa isa)
{
	if (variant != Q42_LLAMACPP_HASWELL)
		return q42_llamacpp_ops_get(isa);
	static const q42_llamacpp_ops scalar = {
		Q42_ISA_SCALAR, q42_llamacpp_quantize_q8_0, q42_llamacpp_quantize_q8_1, q42_llamacpp_quantize_f16,
		q42_llamacpp_hw_dot_f32, q42_llamacpp_hw_dot_f32_lanes, q42_llamacpp_hw_dot_f32_rows,
		q42_llamacpp_hw_dot_f32_lanes_rows, q42_llamacpp_hw_dot_f16_pad, q42_llamacpp_hw_dot_f16_lanes,
		q42_llamacpp_hw_dot_f16_pad_rows, q42_llamacpp_hw_dot_f16_lanes_rows, q42_llamacpp_hw_dot_f16_rows,
		q42_llamacpp_hw_dot_f32_vrows, q42_llamacpp_hw_dot_f32_lanes_vrows, q42_llamacpp_hw_dot_f16_pad_vrows,
		q42_llamacpp_hw_dot_f16_lanes_vrows, q42_llamacpp_hw_softmax, q42_llamacpp_hw_swiglu, q42_llamacpp_geglu,
		q42_llamacpp_conv_dot, q42_llamacpp_rope, q42_op_add, q42_op_rmsnorm_rows, q42_llamacpp_hw_f32_t16_axpy,
		q42_llamacpp_hw_fa_one, q42_llamacpp_hw_fa_tile, q42_llamacpp_hw_dot_f32_vd_cols, q42_llamacpp_hw_dot_f32_vd,
		q42_llamacpp_hw_dot_f16, q42_llamacpp_hw_softmax_unpadded, 8u, NULL, NULL};
#if defined(__x86_64__) || defined(__i386__)
	static const q42_llamacpp_ops avx2 =
		HW_TABLE(Q42_ISA_AVX2, _avx2, q42_llamacpp_rope_fma, q42_op_add, q42_op_rmsnorm_rows);
	static const q42_llamacpp_ops avx512 =
		HW_TABLE(Q42_ISA_AVX512, _avx512, q42_llamacpp_rope_avx512, q42_llamacpp_add_avx512,
			 q42_llamacpp_rmsnorm_rows_avx512);
	switch (q42_isa_usable(isa)) {
	case Q42_ISA_AVX512: return &avx512;
	case Q42_ISA_AVX2: return &avx2;
	default: break;
	}
#endif
	return &scalar;
}
#undef HW_TABLE

enum q42_llamacpp_variant q42_llamacpp_variant_detect(void)
{
#if defined(Q42_HAVE_AMX)
	if (q42_amx_usable())
		return Q42_LLAMACPP_SAPPHIRERAPIDS;
#endif
#if defined(__x86_64__) || defined(__i386__)
	/* llama.cpp's variants for AVX-512 without AMX (zen4, icelake,
	 * skylakex, cascadelake, cannonlake, cooperlake) round as zen4 does
	 * (tests/golden/variants); with AVX2 alone it loads haswell (or
	 * alderlake, the same float code with AVX-VNNI integer sums); its
	 * AVX-512 builds need AVX512F and the rest of Skylake-X's set, which
	 * every CPU with AVX512F has */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return __builtin_cpu_supports("avx512bf16") ? Q42_LLAMACPP_ZEN4 : Q42_LLAMACPP_ICELAKE;
	if (q42_cpu_has_avx2())
		return Q42_LLAMACPP_HASWELL;
#endif
	return Q42_LLAMACPP_SAPPHIRERAPIDS;
}

/* Weight layouts repacked at load (q42_pack.h): the file's bytes
 * rearranged, never changed, with the llama.cpp arithmetic of the file's
 * layout bit for bit; this says which matrices get them. */
bool q42_llamacpp_select_packed(uint32_t dtype, int64_t n_out, int64_t n_in, enum q42_llamacpp_place place,
			      enum q42_isa isa, q42_llamacpp_packed *out)
{
	return q42_llamacpp_select_packed_variant(Q42_LLAMACPP_SAPPHIRERAPIDS, dtype, n_out, n_in, place, isa, out);
}

bool q42_llamacpp_select_packed_variant(enum q42_llamacpp_variant variant, uint32_t dtype, int64_t n_out,
				      int64_t n_in, enum q42_llamacpp_place place, enum q42_isa isa,
				      q42_llamacpp_packed *out)
{
	q42_llamacpp_kernels ck;
	if (n_out < Q42_R16 || n_in % Q42_QK != 0 || n_in > Q42_QK * Q42_R16_MAX_BLOCKS ||
	    !q42_llamacpp_select_variant(variant, dtype, n_out, n_in, place, isa, &ck))
		return false;
#if defined(__x86_64__) || defined(__i386__)
	/* every packed form below is AVX-512 code, packing included: the
	 * haswell variant names zen4's selections on AVX2 CPUs, which must
	 * keep the file layout (a valgrind run, whose CPU has no AVX-512,
	 * died on the Q6_K packing) */
	if (q42_isa_usable(isa) != Q42_ISA_AVX512)
		return false;
	/* the packed products stand in for the file layout's AVX-512 (and
	 * AMX) ones of the same arithmetic: Q5_0 in the plain CPU buffer
	 * and Q5_1 in either buffer (llama.cpp has no AMX form of them), Q4_0,
	 * Q4_1, Q8_0, Q4_K and F16 in the AMX one, Q6_K where its products
	 * are the plain AVX-512 ones (no AMX tiles),
	 * with AMX tiles for passes of several tokens where the CPU has them */
	static const struct {
		uint32_t dtype;
		q42_llamacpp_rows_fn file; /* the file layout's product */
		q42_llamacpp_packed packed;
		/* or, where that product has no SIMD form of its own, the
		 * selection's name */
		const char *sel;
	} forms[] = {
		{Q42_DTYPE_Q5_0, q42_llamacpp_rows_q5_0_avx512,
		 {q42_llamacpp_rows_q5_0_r16_avx512, q42_llamacpp_pack_q5_0_r16_avx512,
		  q42_llamacpp_row_q5_0_r16, "r16-q5_0"}, NULL},
		{Q42_DTYPE_Q5_1, q42_llamacpp_rows_q5_1_avx512,
		 {q42_llamacpp_rows_q5_1_r16_avx512, q42_llamacpp_pack_q5_1_r16_avx512,
		  q42_llamacpp_row_q5_1_r16, "r16-q5_1"}, NULL},
		{Q42_DTYPE_Q4_0, q42_llamacpp_rows_q4_0_avx512,
		 {q42_llamacpp_rows_q4_0_r16_avx512, q42_llamacpp_pack_q4_0_r16_avx512,
		  q42_llamacpp_row_q4_0_r16, "r16-q4_0"}, NULL},
		{Q42_DTYPE_Q4_1, q42_llamacpp_rows_q4_1_avx512,
		 {q42_llamacpp_rows_q4_1_r16_avx512, q42_llamacpp_pack_q4_1_r16_avx512,
		  q42_llamacpp_row_q4_1_r16, "r16-q4_1"}, NULL},
		{Q42_DTYPE_Q8_0, q42_llamacpp_rows_q8_0_avx512,
		 {q42_llamacpp_rows_q8_0_r16_avx512, q42_llamacpp_pack_q8_0_r16_avx512,
		  q42_llamacpp_row_q8_0_r16, "r16-q8_0"}, NULL},
		{Q42_DTYPE_F16, q42_llamacpp_rows_f16_f32_avx512,
		 {q42_llamacpp_rows_f16_f32_r16_avx512, q42_llamacpp_pack_f16_r16_avx512,
		  q42_llamacpp_row_f16_r16, "r16-f16"}, NULL},
		{Q42_DTYPE_Q4_K, q42_llamacpp_rows_q4_k_avx512,
		 {q42_llamacpp_rows_q4_k_r16_avx512, q42_llamacpp_pack_q4_k_r16_avx512,
		  q42_llamacpp_row_q4_k_r16, "r16-q4_K"}, NULL},
		/* the zen4 variant: Q8_0 and Q6_K in the plain CPU buffer,
		 * Q4_K in CPU_REPACK */
		{Q42_DTYPE_Q8_0, q42_llamacpp_rows_q8_0_cpu_avx512,
		 {q42_llamacpp_rows_q8_0_cpu_r16_avx512, q42_llamacpp_pack_q8_0_r16_avx512,
		  q42_llamacpp_row_q8_0_r16, "r16-q8_0-cpu"}, NULL},
		{Q42_DTYPE_Q4_K, NULL,
		 {q42_llamacpp_rows_q4_k_repack_r16_avx512, q42_llamacpp_pack_q4_k_r16_avx512,
		  q42_llamacpp_row_q4_k_r16, "r16-q4_K-repack"}, "repack-q4_K"},
		{Q42_DTYPE_Q6_K, NULL,
		 {q42_llamacpp_rows_q6_k_cpu_r16_avx512, q42_llamacpp_pack_q6_k_r16_avx512,
		  q42_llamacpp_row_q6_k_r16, "r16-q6_K-cpu"}, "cpu-q6_K"},
		{Q42_DTYPE_Q6_K, q42_llamacpp_rows_q6_k_avx512,
		 {q42_llamacpp_rows_q6_k_r16_avx512, q42_llamacpp_pack_q6_k_r16_avx512,
		  q42_llamacpp_row_q6_k_r16, "r16-q6_K"}, NULL},
#if defined(Q42_HAVE_AMX)
		{Q42_DTYPE_Q4_0, q42_llamacpp_rows_q4_0_amx,
		 {q42_llamacpp_rows_q4_0_r16_amx, q42_llamacpp_pack_q4_0_r16_avx512,
		  q42_llamacpp_row_q4_0_r16, "amx-r16-q4_0"}, NULL},
		{Q42_DTYPE_Q4_1, q42_llamacpp_rows_q4_1_amx,
		 {q42_llamacpp_rows_q4_1_r16_amx, q42_llamacpp_pack_q4_1_r16_avx512,
		  q42_llamacpp_row_q4_1_r16, "amx-r16-q4_1"}, NULL},
		{Q42_DTYPE_Q8_0, q42_llamacpp_rows_q8_0_amx,
		 {q42_llamacpp_rows_q8_0_r16_amx, q42_llamacpp_pack_q8_0_r16_avx512,
		  q42_llamacpp_row_q8_0_r16, "amx-r16-q8_0"}, NULL},
		{Q42_DTYPE_Q4_K, q42_llamacpp_rows_q4_k_amx,
		 {q42_llamacpp_rows_q4_k_r16_amx, q42_llamacpp_pack_q4_k_r16_avx512,
		  q42_llamacpp_row_q4_k_r16, "amx-r16-q4_K"}, NULL},
#endif
	};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
		if (forms[i].dtype == dtype &&
		    (forms[i].sel != NULL ? strcmp(forms[i].sel, ck.name) == 0 : forms[i].file == ck.rows)) {
			*out = forms[i].packed;
			return true;
		}
	return false;
#else
	(void)out;
	return false;
#endif
}
