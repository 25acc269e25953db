#version 450
/* kv_store.comp -- copy n_tok tokens of K (or V) into one layer's cache,
 * laid out [kv_head][n_ctx][hd], as f32 or, with F16 set, as f16 pairs:
 * each thread writes one whole 32-bit word, so no two threads share one
 * (the host requires an even hd for f16).
 */
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint F16 = 0u;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Sbuf { float src[]; };
layout(std430, binding = 1) writeonly buffer Cbuf { uint cache[]; };

layout(push_constant) uniform Push {
	uint n_tok, n_kv_heads, hd, n_ctx, pos0, groups_x;
} p;

void main()
{
	const uint per = F16 != 0u ? 2u : 1u;
	const uint g = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	const uint row_words = p.hd / per;
	if (g >= p.n_tok * p.n_kv_heads * row_words)
		return;
	const uint w = g % row_words, th = g / row_words;
	const uint h = th % p.n_kv_heads, t = th / p.n_kv_heads;
	const uint s = th * p.hd + w * per;
	const uint d = (h * p.n_ctx + p.pos0 + t) * row_words + w;
	if (F16 != 0u)
		cache[d] = packHalf2x16(vec2(src[s], src[s + 1u]));
	else
		cache[d] = floatBitsToUint(src[s]);
}
