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
#include "formats/q42_types.h"

enum q42_isa {
	Q42_ISA_SCALAR = 0,
	Q42_ISA_AVX2 = 1,
	Q42_ISA_AVX512 = 2,
	Q42_ISA_BEST = 99,
};

/* IEEE half and bfloat16 conversions, as ggml rounds them. */
Q42_API float q42_f16_to_f32(uint16_t h);
Q42_API uint16_t q42_f32_to_f16(float f);
Q42_API float q42_bf16_to_f32(uint16_t h);
Q42_API uint16_t q42_f32_to_bf16(float f);

/* Per-type entry points. n is a multiple of the type's block size. */
typedef struct q42_type_kernels {
	/* weight row -> f32 */
	void (*dequant)(const void *src, float *dst, int64_t n);
	/* f32 activations -> this type (NULL when the type is never an activation) */
	void (*quantize)(const float *src, void *dst, int64_t n);
	/* dot(weight row of this type, activation row of type vec_dot_type) */
	void (*vec_dot)(int64_t n, float *out, const void *w, const void *x);
	uint32_t vec_dot_type; /* how activations are quantized for vec_dot */
} q42_type_kernels;

/* NULL when libq42 has no kernels for the type id. */
Q42_API const q42_type_kernels *q42_kernels_get(uint32_t dtype, enum q42_isa isa);

/* The ISA Q42_ISA_BEST resolves to on this CPU. */
Q42_API enum q42_isa q42_isa_detect(void);
Q42_API const char *q42_isa_name(enum q42_isa isa);

/* Dequantize n elements of a tensor of dtype into dst; false if unsupported. */
Q42_API bool q42_dequant(uint32_t dtype, const void *src, float *dst, int64_t n);

#endif
