#version 450
/* layernorm.comp -- BERT's LayerNorm with bias: y = ((x - mean) * 1/sqrt(
 * var + eps)) * w + b, one workgroup per row (rows past the grid's x limit
 * continue in y), in the CPU's order of operations (q42_op_layernorm_rows):
 * the mean first, then the variance of the centred values. Both sums are
 * strided per-thread sums reduced in a fixed order (reduce.glsl); the CPU
 * reference sums in double, hence the certification tolerance. x and y
 * may be one buffer: each thread writes only the elements it read.
 */
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 1) readonly buffer Wbuf { float ws[]; };
layout(std430, binding = 2) readonly buffer Bbuf { float bs[]; };
layout(std430, binding = 3) writeonly buffer Ybuf { float ys[]; };

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
		s += xs[o + i];
	const float mean = wg_sum(s) / float(p.n);
	float q = 0.0;
	for (uint i = tid; i < p.n; i += WG) {
		const float c = xs[o + i] - mean;
		q += c * c;
	}
	const float scale = 1.0 / sqrt(wg_sum(q) / float(p.n) + p.eps);
	for (uint i = tid; i < p.n; i += WG) {
		precise float y = (xs[o + i] - mean) * scale;
		y = y * ws[i];
		ys[o + i] = y + bs[i];
	}
}
