#version 450
/* get_rows.comp -- y[t] = row ids[t] of a table of any type dequant.glsl
 * reads (the token embedding lookup), one thread per 32-element unit, one
 * row of workgroups per token. An id outside the table is the caller's
 * bug; the host checks ids before they reach the device.
 */
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Tbuf { uint t_words[]; };
layout(std430, binding = 1) readonly buffer Ibuf { int ids[]; };
layout(std430, binding = 2) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint row_bytes, n, n_tok;
} p;

#define WORD(i) t_words[i]
#include "dequant.glsl"

void main()
{
	const uint u = gl_GlobalInvocationID.x, t = gl_WorkGroupID.y;
	if (u * 32u >= p.n)
		return;
	float v[32];
	unit_load(uint(ids[t]) * p.row_bytes, u, p.n, v);
	const uint lim = min(32u, p.n - u * 32u);
	for (uint j = 0u; j < lim; j++)
		ys[t * p.n + u * 32u + j] = v[j];
}
