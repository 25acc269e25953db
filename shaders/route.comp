#version 450
/* route.comp -- the router of a mixture of experts with sigmoid gating,
 * one thread per token, as the CPU's q42_op_route_sigmoid: the n_expert
 * logits through 1 / (1 + exp(-x)); the k experts of largest score +
 * bias (bias when has_bias), largest first, the lowest index among equal
 * scores and NaN never before a number; each chosen expert's unbiased
 * score divided by their sum (clamped below at 2^-14). ids and weights:
 * k per token. The scores are kept in place of the logits.
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) buffer Lbuf { float ps[]; };
layout(std430, binding = 1) readonly buffer Bbuf { float bias[]; };
layout(std430, binding = 2) writeonly buffer Ibuf { uint ids[]; };
layout(std430, binding = 3) writeonly buffer Wbuf { float ws[]; };

layout(push_constant) uniform Push {
	uint n_tok, n_expert, k, has_bias;
} p;

const uint MAX_K = 64u;

void main()
{
	const uint t = gl_GlobalInvocationID.x;
	if (t >= p.n_tok)
		return;
	const uint o = t * p.n_expert;
	for (uint i = 0u; i < p.n_expert; i++)
		ps[o + i] = 1.0 / (1.0 + exp(-ps[o + i]));
	uint chosen[MAX_K];
	float w[MAX_K];
	float sum = 0.0;
	for (uint j = 0u; j < p.k; j++) {
		int best = -1;
		float bv = 0.0;
		for (uint i = 0u; i < p.n_expert; i++) {
			const float v = p.has_bias != 0u ? ps[o + i] + bias[i] : ps[o + i];
			bool taken = false;
			for (uint c = 0u; c < j; c++)
				taken = taken || chosen[c] == i;
			if (taken)
				continue;
			if (best < 0 || (!isnan(v) && (isnan(bv) || v > bv))) {
				best = int(i);
				bv = v;
			}
		}
		chosen[j] = uint(best);
		w[j] = ps[o + uint(best)];
		sum += w[j];
	}
	if (!(sum >= 6.103515625e-5))
		sum = 6.103515625e-5;
	for (uint j = 0u; j < p.k; j++) {
		ids[t * p.k + j] = chosen[j];
		ws[t * p.k + j] = w[j] / sum;
	}
}
