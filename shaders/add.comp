#version 450
/* add.comp -- y[i] = a[i] + b[i % n_b]: the residual add (n_b = n) and a
 * bias broadcast over rows (n_b = the row width), one thread per element.
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Abuf { float as_[]; };
layout(std430, binding = 1) readonly buffer Bbuf { float bs[]; };
layout(std430, binding = 2) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, n_b, groups_x;
} p;

void main()
{
	const uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (i >= p.n)
		return;
	ys[i] = as_[i] + bs[i % p.n_b];
}
