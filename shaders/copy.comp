#version 450
/* copy.comp -- n_rows rows of n floats from one strided layout to
 * another, offsets and strides in elements: y[t * y_stride + y_off + i] =
 * x[t * x_stride + x_off + i]. Splits a fused product's rows (q, k and v
 * of attn_qkv) without views at offsets the device would have to align.
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 1) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, n_rows, x_off, x_stride, y_off, y_stride, groups_x;
} p;

void main()
{
	const uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (i >= p.n * p.n_rows)
		return;
	const uint t = i / p.n, c = i % p.n;
	ys[t * p.y_stride + p.y_off + c] = xs[t * p.x_stride + p.x_off + c];
}
