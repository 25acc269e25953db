#version 450
/* attention.comp -- attention of one query (token t, head h) per
 * workgroup over one layer's KV cache ([kv_head][n_ctx][hd], f32 or f16).
 * The positions a query sees are those the CPU's -inf mask leaves: up to
 * its own (causal), or every position of the pass (an encoder's,
 * causal 0); with n_swa > 0 (a sliding-window layer) only the last n_swa
 * of them, or with sym those at most n_swa/2 before or after its own
 * (llama.cpp's symmetric window, gemma-embedding).
 *
 * Positions are taken in chunks of WG: each thread scores one position,
 * then an online softmax folds the chunk in (running max m and sum l, the
 * output rescaled by exp(m_old - m_new)), so shared memory holds one chunk
 * of scores whatever the context length. Thread d owns output dimensions
 * d, d + WG, ..., and adds each chunk's weighted values in position order:
 * every reduction has a fixed order.
 */
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint F16 = 0u;
const uint WG = gl_WorkGroupSize.x;
const uint MAX_HD = 256u;
const uint PER = (MAX_HD + WG - 1u) / WG;

layout(std430, binding = 0) readonly buffer Qbuf { float qs[]; };
layout(std430, binding = 1) readonly buffer Kbuf { uint kc[]; };
layout(std430, binding = 2) readonly buffer Vbuf { uint vc[]; };
layout(std430, binding = 3) writeonly buffer Obuf { float os[]; };

layout(push_constant) uniform Push {
	uint n_tok, n_heads, n_kv_heads, hd_k, hd_v, n_ctx, pos0;
	float scale;
	uint n_swa, causal, sym;
} p;

shared float red[WG];
shared float q[MAX_HD];
shared float pr[WG];
#include "reduce.glsl"

float kv_at(uint which, uint i)
{
	const uint w = which == 0u ? kc[F16 != 0u ? i >> 1 : i] : vc[F16 != 0u ? i >> 1 : i];
	if (F16 != 0u)
		return unpackHalf2x16(w >> ((i & 1u) << 4)).x;
	return uintBitsToFloat(w);
}

void main()
{
	const uint tid = gl_LocalInvocationID.x;
	const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
	const uint kvh = h / (p.n_heads / p.n_kv_heads);
	const uint pos = p.pos0 + t;
	uint n_pos = p.causal != 0u ? pos + 1u : p.pos0 + p.n_tok;
	uint first = 0u;
	if (p.n_swa != 0u && p.sym != 0u) {
		const uint hw = p.n_swa / 2u;
		first = pos > hw ? pos - hw : 0u;
		n_pos = min(n_pos, pos + hw + 1u);
	} else if (p.n_swa != 0u && n_pos > p.n_swa) {
		first = n_pos - p.n_swa;
	}
	const uint kbase = kvh * p.n_ctx * p.hd_k, vbase = kvh * p.n_ctx * p.hd_v;

	for (uint d = tid; d < p.hd_k; d += WG)
		q[d] = qs[(t * p.n_heads + h) * p.hd_k + d];
	float o[PER];
	for (uint k = 0u; k < PER; k++)
		o[k] = 0.0;
	barrier();

	float m = -1.0 / 0.0, l = 0.0;
	for (uint c0 = first; c0 < n_pos; c0 += WG) {
		const uint j = c0 + tid;
		float s = -1.0 / 0.0;
		if (j < n_pos) {
			float dot = 0.0;
			for (uint d = 0u; d < p.hd_k; d++)
				dot += q[d] * kv_at(0u, kbase + j * p.hd_k + d);
			s = dot * p.scale;
		}
		const float m_new = max(m, wg_max(s));
		const float alpha = exp(m - m_new);
		const float e = j < n_pos ? exp(s - m_new) : 0.0;
		pr[tid] = e;
		l = l * alpha + wg_sum(e); /* wg_sum's barriers publish pr */
		const uint nc = min(WG, n_pos - c0);
		for (uint k = 0u; k < PER; k++) {
			const uint d = tid + k * WG;
			if (d >= p.hd_v)
				break;
			float acc = 0.0;
			for (uint jj = 0u; jj < nc; jj++)
				acc += pr[jj] * kv_at(1u, vbase + (c0 + jj) * p.hd_v + d);
			o[k] = o[k] * alpha + acc;
		}
		m = m_new;
		barrier(); /* pr is rewritten by the next chunk */
	}
	const float inv = 1.0 / l;
	for (uint k = 0u; k < PER; k++) {
		const uint d = tid + k * WG;
		if (d < p.hd_v)
			os[(t * p.n_heads + h) * p.hd_v + d] = o[k] * inv;
	}
}
