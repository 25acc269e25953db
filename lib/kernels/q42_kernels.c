/* q42_kernels.c -- the per-type kernel tables and their run-time selection.
 *
 * One table per ISA, indexed by ggml type id. The scalar table is the
 * reference; an ISA table starts as a copy of it and replaces only the
 * entries that have a faster variant, so a type never lacks a kernel on a
 * faster machine. A table is handed out only after the CPU was checked to
 * run it: no path here may execute an instruction the CPU lacks.
 */
#include <stddef.h>
#include "kernels/q42_kernels_impl.h"

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
