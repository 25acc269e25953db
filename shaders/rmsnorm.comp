#version 450
/* rmsnorm.comp -- y = (x * 1/sqrt(mean(x^2) + eps)) * w, one workgroup per
 * row (rows past the grid's x limit continue in y: per-head norms of a
 * long pass have more rows than one dimension holds). The sum of squares is a strided per-thread sum reduced in a fixed
 * order (reduce.glsl); the CPU reference sums in double, hence the
 * certification tolerance.
 */
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 1) readonly buffer Wbuf { float ws[]; };
layout(std430, binding = 2) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, n_rows;
	float eps;
	uint groups_x;
} p;

shared float red[WG];
#include "reduce.glsl"

void main()
{
	const uint tid = gl_LocalInvocationID.x;
	const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * p.groups_x;
	if (row >= p.n_rows)
		return; /* the whole workgroup leaves together */
	const uint o = row * p.n;
	float s = 0.0;
	for (uint i = tid; i < p.n; i += WG)
		s += xs[o + i] * xs[o + i];
	const float mean = wg_sum(s) / float(p.n);
	const float scale = 1.0 / sqrt(mean + p.eps);
	for (uint i = tid; i < p.n; i += WG)
		ys[o + i] = (xs[o + i] * scale) * ws[i];
}
