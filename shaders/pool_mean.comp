#version 450
/* pool_mean.comp -- mean pooling of an embedding: y[d] = sum over t <
 * n_tok of x[t][d] * (1/n_tok), one thread per dimension, the products
 * added in token order (the CPU takes the same products as one dot product
 * of the column with n_tok copies of 1/n_tok, llama.cpp's build_pooling;
 * its SIMD lanes sum in another order, hence the certification tolerance).
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 1) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, n_tok;
} p;

void main()
{
	const uint d = gl_GlobalInvocationID.x;
	if (d >= p.n)
		return;
	const float w = 1.0 / float(p.n_tok);
	precise float s = 0.0;
	for (uint t = 0u; t < p.n_tok; t++)
		s += xs[t * p.n + d] * w;
	ys[d] = s;
}
