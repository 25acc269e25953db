/* q42_vk_ops.h -- the compute kernels of the Vulkan backend, each one
 * recorded as a dispatch into the current pass (q42_vk_begin .. submit).
 *
 * Tensors are f32 rows unless said otherwise; a view's offset is in bytes.
 * Every kernel has a CPU reference it is certified against
 * (q42_vk_certify.h): the scalar kernels of kernels/q42_kernels.h and
 * kernels/q42_ops.h. Results are deterministic: no float atomics, every
 * output element reduced in a fixed order.
 */
#ifndef Q42_VK_OPS_H
#define Q42_VK_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "vulkan/q42_vk.h"

typedef struct q42_vk_ops q42_vk_ops;

/* Build every pipeline once (so a missing one fails at open, not mid-pass). */
Q42_API int q42_vk_ops_open(q42_vk_ops **out, q42_vk *vk, q42_err *err);
Q42_API void q42_vk_ops_close(q42_vk_ops *o);

/* Weight types the matrix kernels read directly: F32, F16, Q8_0, Q4_0,
 * Q4_K, Q6_K (kernels/formats dtype ids). */
Q42_API bool q42_vk_ops_has_matmul(uint32_t dtype);

/* y[t*y_stride + r] = sum_i W[r][i] * x[t*n_in + i] for r < n_out, t < n_tok.
 * W: n_out rows of dtype, row_bytes apart, as stored in GGUF. n_tok = 1 is
 * the matrix-vector kernel; larger n_tok the matrix-matrix one. */
Q42_API int q42_vk_op_matmul(q42_vk_ops *o, uint32_t dtype, q42_vk_view w, uint64_t row_bytes,
			     uint32_t n_in, uint32_t n_out, q42_vk_view x, uint32_t n_tok,
			     q42_vk_view y, uint32_t y_stride, q42_err *err);

/* y[t] = x[t] / sqrt(mean(x[t]^2) + eps) * w, n_rows rows of n. */
Q42_API int q42_vk_op_rmsnorm(q42_vk_ops *o, q42_vk_view x, q42_vk_view w, q42_vk_view y, uint32_t n,
			      uint32_t n_rows, float eps, q42_err *err);

/* Rotate in place the first n_rot dimensions of n_heads heads of hd floats
 * per token, token t at position pos0 + t; neox pairs (i, i + n_rot/2),
 * otherwise (2i, 2i+1). theta_i = pos * freq_scale * base^(-2i/n_rot) /
 * freqs[i] (freqs: n_rot/2 floats, or buf NULL for none). */
Q42_API int q42_vk_op_rope(q42_vk_ops *o, q42_vk_view x, q42_vk_view freqs, uint32_t n_tok,
			   uint32_t n_heads, uint32_t hd, uint32_t n_rot, uint32_t pos0, bool neox,
			   float base, float freq_scale, q42_err *err);

/* y = softmax(x * scale) per row of n, n_rows rows. */
Q42_API int q42_vk_op_softmax(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n,
			      uint32_t n_rows, float scale, q42_err *err);

/* y = silu(g) * u, n elements. */
Q42_API int q42_vk_op_swiglu(q42_vk_ops *o, q42_vk_view g, q42_vk_view u, q42_vk_view y, uint32_t n,
			     q42_err *err);

/* y[i] = a[i] + b[i % n_b], n elements (n_b = n: plain add; n_b = row
 * width: a bias broadcast over rows). */
Q42_API int q42_vk_op_add(q42_vk_ops *o, q42_vk_view a, q42_vk_view b, q42_vk_view y, uint32_t n,
			  uint32_t n_b, q42_err *err);

/* y[t] = row ids[t] of table (dtype, row_bytes apart) as f32, n floats
 * each; ids: n_tok int32. */
Q42_API int q42_vk_op_get_rows(q42_vk_ops *o, uint32_t dtype, q42_vk_view table, uint64_t row_bytes,
			       q42_vk_view ids, uint32_t n_tok, uint32_t n, q42_vk_view y,
			       q42_err *err);

/* Store n_tok tokens of K and V (f32, n_kv_heads * hd floats per token) at
 * positions pos0.. of one layer's cache. Cache layout, kv_dtype F32 or
 * F16: K and V each [kv_head][n_ctx][hd]. */
Q42_API int q42_vk_op_kv_store(q42_vk_ops *o, uint32_t kv_dtype, q42_vk_view k, q42_vk_view v,
			       q42_vk_view kc, q42_vk_view vc, uint32_t n_tok, uint32_t n_kv_heads,
			       uint32_t hd_k, uint32_t hd_v, uint32_t n_ctx, uint32_t pos0,
			       q42_err *err);

/* Causal attention of n_tok queries (token t at position pos0 + t sees
 * positions 0..pos0+t) over one layer's cache: q is n_tok x n_heads x hd_k,
 * out n_tok x n_heads x hd_v; head h reads kv head h / (n_heads /
 * n_kv_heads); scores scaled by scale, softmax, weighted sum of V. Nothing
 * of size n_ctx x n_tok is materialised beyond one workgroup's scores. */
Q42_API int q42_vk_op_attention(q42_vk_ops *o, uint32_t kv_dtype, q42_vk_view q, q42_vk_view kc,
				q42_vk_view vc, q42_vk_view out, uint32_t n_tok, uint32_t n_heads,
				uint32_t n_kv_heads, uint32_t hd_k, uint32_t hd_v, uint32_t n_ctx,
				uint32_t pos0, float scale, q42_err *err);

/* out[0] = index (uint32) of the largest of n floats (the lowest index on
 * ties), out[1] = its value's bits. */
Q42_API int q42_vk_op_argmax(q42_vk_ops *o, q42_vk_view x, uint32_t n, q42_vk_view out,
			     q42_err *err);

#endif
