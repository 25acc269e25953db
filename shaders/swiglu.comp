#version 450
/* swiglu.comp -- y = silu(g) * u = g / (1 + exp(-g)) * u, one thread per
 * element (the feed-forward gate).
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Gbuf { float gs[]; };
layout(std430, binding = 1) readonly buffer Ubuf { float us[]; };
layout(std430, binding = 2) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, groups_x;
} p;

void main()
{
	const uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (i >= p.n)
		return;
	const float g = gs[i];
	ys[i] = g / (1.0 + exp(-g)) * us[i];
}
