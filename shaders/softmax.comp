#version 450
/* softmax.comp -- y = softmax(x * scale), one workgroup per row: the row
 * maximum, the sum of exp(v - max) and the scaling by 1/sum, each reduction
 * in a fixed order (reduce.glsl).
 */
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 1) buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, n_rows;
	float scale;
} p;

shared float red[WG];
#include "reduce.glsl"

void main()
{
	const uint tid = gl_LocalInvocationID.x;
	const uint o = gl_WorkGroupID.x * p.n;
	float m = -1.0 / 0.0;
	for (uint i = tid; i < p.n; i += WG)
		m = max(m, xs[o + i] * p.scale);
	m = wg_max(m);
	float s = 0.0;
	for (uint i = tid; i < p.n; i += WG) {
		const float e = exp(xs[o + i] * p.scale - m);
		ys[o + i] = e;
		s += e;
	}
	const float inv = 1.0 / wg_sum(s);
	for (uint i = tid; i < p.n; i += WG)
		ys[o + i] *= inv;
}
