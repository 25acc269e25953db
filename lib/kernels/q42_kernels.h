/* q42_kernels.h -- numeric kernels over ggml tensor types.
 *
 * Every operation has a plain scalar reference that follows ggml's
 * arithmetic (the order of operations matters: results must match llama.cpp
 * bit for bit where ggml is deterministic). Faster per-ISA variants are
 * selected at run time through q42_kernels_get(); each is tested against the
 * scalar table, which stays available as Q42_ISA_SCALAR.
 */
#ifndef Q42_KERNELS_H
#define Q42_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "common/q42_types.h"

/* Instruction sets with their own kernel table. Q42_ISA_BEST is not a
 * table: it asks for the best one this CPU runs (q42_isa_detect()). */
enum q42_isa {
	Q42_ISA_SCALAR = 0,
	Q42_ISA_AVX2 = 1,   /* AVX2 + FMA + F16C */
	Q42_ISA_AVX512 = 2, /* AVX-512 F, BW, VL, VNNI, VBMI (Ice Lake and later) */
	Q42_ISA_BEST = 99,
};

/* IEEE half and bfloat16 conversions, as ggml rounds them: f16 -> f32 is
 * exact (a NaN comes back quiet, payload kept); f32 -> f16 rounds to
 * nearest even, overflows to infinity, and turns every NaN into 0x7E00
 * with its sign (ggml's software conversion); f32 -> bf16 rounds to
 * nearest even and keeps NaNs, forced quiet (ggml_compute_fp32_to_bf16). */
Q42_API float q42_f16_to_f32(uint16_t h);
Q42_API uint16_t q42_f32_to_f16(float f);
Q42_API float q42_bf16_to_f32(uint16_t h);
Q42_API uint16_t q42_f32_to_bf16(float f);

/* Per-type entry points. n is a count of elements and a multiple of the
 * type's block size (q42_dtype_get()->block_elems); src/w/x need no
 * alignment. Results follow ggml's scalar reference arithmetic bit for bit
 * (see the .c files for the few NaN cases where ggml's behaviour is
 * undefined C and ours is fixed). */
typedef struct q42_type_kernels {
	/* row of this type -> f32 */
	void (*dequant)(const void *src, float *dst, int64_t n);
	/* f32 activations -> this type, as ggml's quantize_row_*_ref; NULL
	 * when ggml never uses the type for activations (only F32, F16, BF16,
	 * Q8_0, Q8_1 and Q8_K have one) */
	void (*quantize)(const float *src, void *dst, int64_t n);
	/* *out = dot(weight row of this type, activation row of type
	 * vec_dot_type); NULL for Q8_1 and Q8_K, which are activation-only */
	void (*vec_dot)(int64_t n, float *out, const void *w, const void *x);
	uint32_t vec_dot_type; /* how activations are quantized for vec_dot */
} q42_type_kernels;

/* What the ISA tables promise against the scalar table (checked by
 * tests/unit/test_kernels_isa.c on random rows of 1..33 blocks):
 *  - vec_dot of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
 *    IQ4_NL, IQ4_XS (AVX2 and AVX-512): bit-identical. Integer block sums are exact, the
 *    float terms are formed and added in the scalar order (the k-quants'
 *    8 per-lane float accumulators included), so the result does not
 *    depend on the ISA. TQ1_0/TQ2_0 (AVX2 and AVX-512) take the -1 of every
 *    trit off with Q8_K's bsums, which every q42 quantizer writes exact.
 *  - vec_dot of F32, F16, BF16: products are exact in float, but the sum
 *    runs in float SIMD lanes (flushed into a double every 1024 elements
 *    for F16/BF16) instead of one double, so a result may differ from the
 *    scalar one by at most (n/8 + 16) * 2^-24 * sum|w_i*x_i| plus one ulp.
 *    Deterministic on a given ISA.
 *  - quantize of Q8_0, Q8_1, Q8_K: bit-identical (blocks holding a NaN or
 *    an infinity, or whose scale is not finite, take the scalar path).
 * The SIMD integer dots assume activation quants in -127..127, which every
 * quantize above produces; a -128 in x gives an unspecified result. Weights
 * may hold any byte. Every result is independent of the thread count: a
 * vec_dot covers one row. */

/* Kernels for dtype on isa. NULL when libq42 has no kernels for the type
 * id, or when isa names an instruction set this CPU does not run (asking
 * for one never crashes). Every table has every type: an ISA without its
 * own variant of a kernel uses the scalar one. Supported types: F32, F16,
 * BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K..Q6_K, Q8_K, TQ1_0,
 * TQ2_0, IQ4_NL, IQ4_XS. The pointers stay valid for the life of the process. */
Q42_API const q42_type_kernels *q42_kernels_get(uint32_t dtype, enum q42_isa isa);

/* The ISA Q42_ISA_BEST resolves to on this CPU (CPUID, checked once per
 * call through __builtin_cpu_supports; cheap). */
Q42_API enum q42_isa q42_isa_detect(void);
Q42_API const char *q42_isa_name(enum q42_isa isa);

/* Dequantize n elements of a tensor of dtype into dst with the scalar
 * reference; false (dst untouched) if the type is unsupported or n is not
 * a whole number of blocks. */
Q42_API bool q42_dequant(uint32_t dtype, const void *src, float *dst, int64_t n);

#endif
