#version 450
/* moe_sum.comp -- a routed FFN's output into the residual, one thread
 * per (token, element): x += w_0 y_0 + w_1 y_1 + ..., each pair's output
 * scaled by its weight and the pairs added in the order chosen, as the
 * CPU does (q42_forward.c, block_moe). y: k rows of n per token.
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Ybuf { float ys[]; };
layout(std430, binding = 1) readonly buffer Wbuf { float ws[]; };
layout(std430, binding = 2) buffer Xbuf { float xs[]; };

layout(push_constant) uniform Push {
	uint n, n_tok, k, groups_x;
} p;

void main()
{
	const uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (i >= p.n * p.n_tok)
		return;
	const uint t = i / p.n, d = i % p.n;
	precise float acc = ys[t * p.k * p.n + d] * ws[t * p.k];
	for (uint j = 1u; j < p.k; j++)
		acc += ys[(t * p.k + j) * p.n + d] * ws[t * p.k + j];
	xs[i] += acc;
}
