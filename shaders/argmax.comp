#version 450
/* argmax.comp -- out[0] = index of the largest of n floats, out[1] = its
 * bits; the lowest index wins ties, NaNs are never chosen (the CPU's
 * greedy choice). One workgroup: each thread scans a strided share keeping
 * its first maximum, then a tree over the threads' (value, index) pairs.
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 1) writeonly buffer Obuf { uint outs[]; };

layout(push_constant) uniform Push {
	uint n;
} p;

shared float bv[WG];
shared uint bi[WG];

void main()
{
	const uint tid = gl_LocalInvocationID.x;
	float v = -1.0 / 0.0;
	uint idx = 0xFFFFFFFFu;
	for (uint i = tid; i < p.n; i += WG) {
		const float x = xs[i];
		if (x > v || (idx == 0xFFFFFFFFu && x == v)) {
			v = x;
			idx = i;
		}
	}
	bv[tid] = v;
	bi[tid] = idx;
	barrier();
	for (uint s = WG / 2u; s > 0u; s >>= 1) {
		if (tid < s) {
			const float ov = bv[tid + s];
			const uint oi = bi[tid + s];
			if (oi != 0xFFFFFFFFu &&
			    (bi[tid] == 0xFFFFFFFFu || ov > bv[tid] || (ov == bv[tid] && oi < bi[tid]))) {
				bv[tid] = ov;
				bi[tid] = oi;
			}
		}
		barrier();
	}
	if (tid == 0u) {
		outs[0] = bi[0] == 0xFFFFFFFFu ? 0u : bi[0];
		outs[1] = floatBitsToUint(bv[0]);
	}
}
