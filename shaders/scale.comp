#version 450
/* scale.comp -- y = x * s, one thread per element; with cap > 0 the
 * final-logit soft cap instead, y = tanh(x * s) * cap with s = 1/cap, as
 * the CPU's three rounded steps (q42_op_softcap). tanh is built from exp,
 * whose error bound the Vulkan spec gives.
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 1) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, groups_x;
	float s, cap;
} p;

void main()
{
	const uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (i >= p.n)
		return;
	const float v = xs[i] * p.s;
	if (p.cap > 0.0) {
		const float e = exp(-2.0 * abs(v));
		const float t = (1.0 - e) / (1.0 + e);
		ys[i] = (v < 0.0 ? -t : t) * p.cap;
	} else {
		ys[i] = v;
	}
}
