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
 * otherwise (2i, 2i+1). theta_i = freq_scale * (pos * theta_scale^i) /
 * freqs[i], the power built by i multiplications as the CPU engine builds
 * it (theta_scale = base^(-2/n_rot), the layer's base); freqs: n_rot/2
 * floats, or buf NULL for none. cos and sin
 * times mscale (LongRoPE's attention factor; 1 for none). */
Q42_API int q42_vk_op_rope(q42_vk_ops *o, q42_vk_view x, q42_vk_view freqs, uint32_t n_tok,
			   uint32_t n_heads, uint32_t hd, uint32_t n_rot, uint32_t pos0, bool neox,
			   float theta_scale, float freq_scale, float mscale, q42_err *err);

/* BERT's LayerNorm with bias: y[t] = (x[t] - mean) / sqrt(var + eps) * w
 * + b, n_rows rows of n (x and y may be one buffer). */
Q42_API int q42_vk_op_layernorm(q42_vk_ops *o, q42_vk_view x, q42_vk_view w, q42_vk_view b,
				q42_vk_view y, uint32_t n, uint32_t n_rows, float eps, q42_err *err);

/* Mean pooling: y[d] = sum over t < n_tok of x[t*n + d] * (1/n_tok), the
 * products added in token order; y is one row of n. */
Q42_API int q42_vk_op_pool_mean(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n,
				uint32_t n_tok, q42_err *err);

/* y = softmax(x * scale) per row of n, n_rows rows. */
Q42_API int q42_vk_op_softmax(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n,
			      uint32_t n_rows, float scale, q42_err *err);

/* The gated activation of n_rows rows of n: y[t*n + i] = act(g[t*in_stride
 * + i]) * u[t*in_stride + u_off + i], act silu or (gelu) ggml's tanh GELU
 * as the CPU's f16 table gives it (q42_op_geglu). Separate gate and up:
 * in_stride n, u_off 0; the halves of a fused product's rows: g and u the
 * same buffer, in_stride 2n, u_off n. */
Q42_API int q42_vk_op_glu(q42_vk_ops *o, bool gelu, q42_vk_view g, q42_vk_view u, q42_vk_view y,
			  uint32_t n, uint32_t n_rows, uint32_t in_stride, uint32_t u_off,
			  q42_err *err);

/* y = ggml's tanh GELU of x, n elements, as glu's gelu (BERT's FFN). */
Q42_API int q42_vk_op_gelu(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n, q42_err *err);

/* y = x * s, n elements; with cap > 0 the soft cap y = tanh(x / cap) * cap
 * instead (s unused). */
Q42_API int q42_vk_op_scale(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n, float s,
			    float cap, q42_err *err);

/* n_rows rows of n floats: y[t*y_stride + y_off + i] = x[t*x_stride +
 * x_off + i] (offsets and strides in floats). */
Q42_API int q42_vk_op_copy(q42_vk_ops *o, q42_vk_view x, uint32_t x_off, uint32_t x_stride,
			   q42_vk_view y, uint32_t y_off, uint32_t y_stride, uint32_t n,
			   uint32_t n_rows, q42_err *err);

/* lfm2's short convolution of n_tok tokens at positions pos0..: bcx holds
 * per token B, C and x (n floats each); B * x goes into hist (n_ctx rows
 * of n, the layer's state) at each position, then y[t] = C * the
 * convolution of the l history rows up to ahead rows past the token's
 * position (zeros before 0 and past the pass's last token) with kern (l
 * taps per channel, [channel][l]). ahead: 0 for a causal model, (l-1)/2
 * for a bidirectional one's centred window; ahead < l. */
Q42_API int q42_vk_op_shortconv(q42_vk_ops *o, q42_vk_view bcx, q42_vk_view kern, q42_vk_view hist,
				q42_vk_view y, uint32_t n_tok, uint32_t n, uint32_t l,
				uint32_t n_ctx, uint32_t pos0, uint32_t ahead, q42_err *err);

/* The sigmoid router of n_tok tokens (q42_op_route_sigmoid): logits
 * (n_expert per token) become the scores in place; ids (uint32) and w get
 * k per token. bias: n_expert floats, or buf NULL for none. k <= 64. */
Q42_API int q42_vk_op_route(q42_vk_ops *o, q42_vk_view logits, q42_vk_view bias, q42_vk_view ids,
			    q42_vk_view w, uint32_t n_tok, uint32_t n_expert, uint32_t k,
			    q42_err *err);

/* The experts' products of a routed FFN: for pair j < n_pair, y[j*y_stride
 * + r] = W_e[r] . x[j / x_div] with e = ids[j], the experts' matrices
 * expert_bytes apart in w (n_out rows of dtype, row_bytes apart, each). */
Q42_API int q42_vk_op_matmul_id(q42_vk_ops *o, uint32_t dtype, q42_vk_view w, uint64_t row_bytes,
				uint64_t expert_bytes, uint32_t n_in, uint32_t n_out,
				q42_vk_view ids, q42_vk_view x, uint32_t x_div, uint32_t n_pair,
				q42_vk_view y, uint32_t y_stride, q42_err *err);

/* x[t] += sum over j < k of w[t*k + j] * y[t*k + j] (rows of n), each
 * product rounded and the pairs added in order. */
Q42_API int q42_vk_op_moe_sum(q42_vk_ops *o, q42_vk_view y, q42_vk_view w, q42_vk_view x, uint32_t n,
			      uint32_t n_tok, uint32_t k, q42_err *err);

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

/* Attention of n_tok queries over one layer's cache. Causal: token t at
 * position pos0 + t sees positions 0..pos0+t; not causal (an encoder):
 * every token sees 0..pos0+n_tok-1. With n_swa > 0 only the last n_swa
 * of those, or with swa_symmetric those at most n_swa/2 from its own
 * position. q is n_tok x n_heads x hd_k,
 * out n_tok x n_heads x hd_v; head h reads kv head h / (n_heads /
 * n_kv_heads); scores scaled by scale, softmax, weighted sum of V. Nothing
 * of size n_ctx x n_tok is materialised beyond one workgroup's scores. */
Q42_API int q42_vk_op_attention(q42_vk_ops *o, uint32_t kv_dtype, q42_vk_view q, q42_vk_view kc,
				q42_vk_view vc, q42_vk_view out, uint32_t n_tok, uint32_t n_heads,
				uint32_t n_kv_heads, uint32_t hd_k, uint32_t hd_v, uint32_t n_ctx,
				uint32_t pos0, float scale, uint32_t n_swa, bool causal,
				bool swa_symmetric, q42_err *err);

/* out[0] = index (uint32) of the largest of n floats (the lowest index on
 * ties), out[1] = its value's bits. */
Q42_API int q42_vk_op_argmax(q42_vk_ops *o, q42_vk_view x, uint32_t n, q42_vk_view out,
			     q42_err *err);

#endif
