#version 450
/* shortconv.comp -- lfm2's gated short convolution after in_proj, whose
 * rows hold B, C and x (n_embd each) per token. STAGE 0, one thread per
 * (token, channel): B * x into the layer's history at the token's
 * position (the state beside K and V, [n_ctx][n_embd]). STAGE 1: y = C *
 * sum over i < L of hist[pos - L + 1 + i] * kern[channel][i] (zero before
 * position 0), summed from 0 in that order as ggml's ssm_conv
 * (q42_op_conv_dot). A bidirectional model's window is centred: it reads
 * ahead rows past the token's position, zeros past the pass's last
 * (the CPU's conv_ahead). Two dispatches, so every history row of the pass is
 * written before any is read.
 */
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint STAGE = 0u;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Bbuf { float bcx[]; };
layout(std430, binding = 1) readonly buffer Kbuf { float kern[]; };
layout(std430, binding = 2) buffer Hbuf { float hist[]; };
layout(std430, binding = 3) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n_tok, n_embd, l, pos0, groups_x, ahead;
} p;

void main()
{
	const uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (i >= p.n_tok * p.n_embd)
		return;
	const uint t = i / p.n_embd, d = i % p.n_embd, pos = p.pos0 + t, end = p.pos0 + p.n_tok;
	const uint row = t * 3u * p.n_embd;
	if (STAGE == 0u) {
		hist[pos * p.n_embd + d] = bcx[row + d] * bcx[row + 2u * p.n_embd + d];
		return;
	}
	precise float s = 0.0;
	for (uint k = 0u; k < p.l; k++) {
		const uint at = pos + k + 1u + p.ahead; /* position + L */
		const float h = at >= p.l && at - p.l < end ? hist[(at - p.l) * p.n_embd + d] : 0.0;
		s += h * kern[d * p.l + k];
	}
	ys[t * p.n_embd + d] = bcx[row + p.n_embd + d] * s;
}
