/* q42_ops.h -- scalar reference float operations of the forward pass.
 *
 * Each follows ggml-cpu's order of operations (ops.cpp, vec.h/vec.cpp
 * scalar paths) so q42 and llama.cpp round the same way: sums of squares
 * and of exponentials are kept in double, everything else is plain f32.
 * Lengths are element counts; y may alias x wherever an input and the
 * output have the same length.
 */
#ifndef Q42_OPS_H
#define Q42_OPS_H

#include <stdint.h>
#include "common/q42_err.h"

/* y = x * scale (* w), scale = 1/sqrtf(mean(x^2) + eps), the mean of
 * squares summed in double. w (the norm weight) may be NULL; when given,
 * the product is (x * scale) * w, as ggml's rms_norm followed by mul. */
Q42_API void q42_op_rmsnorm(int64_t n, float *y, const float *x, const float *w, float eps);
/* q42_op_rmsnorm of n_rows consecutive rows of n (y and x n apart), the
 * same bits per row: each row's double sum is its own serial chain, and
 * several chains run side by side instead of one after another. */
Q42_API void q42_op_rmsnorm_rows(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
				 float eps);
/* The two halves of q42_op_rmsnorm_rows, for SIMD forms of the scaling:
 * each row's sum of squares (sum[r], n_rows at most 4), and the scale a
 * row's sum gives. */
Q42_API void q42_op_rmsnorm_sums(int64_t n, int64_t n_rows, const float *x, double *sum);
Q42_API float q42_op_rmsnorm_scale(int64_t n, double sum, float eps);

/* ggml's norm (LayerNorm) of n_rows rows of n, then * w and + b where
 * given (NULL: none), as ggml_norm, ggml_mul and ggml_add: the mean from
 * a double sum rounded to f32, the variance from the squares of x - mean
 * summed as the AVX-512 build of ggml_vec_cvar_f32 sums them (sixteen at
 * a time, each sixteen reduced in f32 pairwise as _mm512_reduce_add_ps
 * does, the group sums and the tail squares added in double), divided by
 * n, then (x - mean) * 1/sqrtf(variance + eps). */
Q42_API void q42_op_layernorm_rows(int64_t n, int64_t n_rows, float *y, const float *x,
				   const float *w, const float *b, float eps);

/* y = softmax(x): max, then exp(x - max) summed in double, then each
 * value multiplied by the f32 rounding of 1/sum. */
Q42_API void q42_op_softmax(int64_t n, float *y, const float *x);

/* y = x / (1 + expf(-x)) */
Q42_API void q42_op_silu(int64_t n, float *y, const float *x);

/* y = silu(x) * g, the SwiGLU gate of a feed-forward block. */
Q42_API void q42_op_swiglu(int64_t n, float *y, const float *x, const float *g);

/* y = gelu(x) * g, the GeGLU gate (gemma), as ggml-cpu computes it: x
 * <= -10 gives 0, x >= 10 gives x * g, anything else is rounded to f16
 * and looked up in a table of f16 values of the tanh GELU
 * 0.5x(1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))) at every f16 x, each
 * evaluated in f32 and rounded to f16 (ggml_vec_geglu_f32 with
 * GGML_GELU_FP16). The table is built on first use, once per process. */
Q42_API void q42_op_geglu(int64_t n, float *y, const float *x, const float *g);

/* One output of ggml's ssm_conv: s[0]*c[0] + s[1]*c[1] + ... in that
 * order, each product rounded, summed in f32 from 0 (the short
 * convolution of lfm2, one channel and position). */
Q42_API float q42_op_conv_dot(int64_t n, const float *s, const float *c);

/* y = tanh(x * (1/cap)) * cap, each step rounded to f32: final-logit
 * soft-capping as three ggml ops (scale, tanh, scale). */
Q42_API void q42_op_softcap(int64_t n, float *y, const float *x, float cap);

/* The router of a mixture of experts with sigmoid gating (llama.cpp's
 * build_moe_ffn, as ggml-cpu computes it), for one token: p (n_expert
 * logits) becomes sigmoid(p) = 1 / (1 + expf(-p)); id gets the k experts
 * of largest p + bias (bias NULL: none) in descending order, the lowest
 * index first among equal values (ggml's std::sort leaves that order
 * open) and NaN never before a number; w gets each chosen expert's
 * unbiased p divided by their sum, summed in double (ggml_sum_rows) and
 * clamped below at 2^-14 (the least f16 normal, as llama.cpp clamps it).
 * 1 <= k <= n_expert. */
Q42_API void q42_op_route_sigmoid(int64_t n_expert, int64_t k, float *p, const float *bias,
				  int32_t *id, float *w);

/* y = a + b, y = a * b, y = x * s (elementwise). */
Q42_API void q42_op_add(int64_t n, float *y, const float *a, const float *b);
Q42_API void q42_op_mul(int64_t n, float *y, const float *a, const float *b);
Q42_API void q42_op_scale(int64_t n, float *y, const float *x, float s);

#endif
