/* matmul.glsl -- y[t][r] = sum_i W[r][i] * x[t][i] for weights of any type
 * dequant.glsl reads (specialization constant DTYPE).
 *
 * One workgroup owns ROWS consecutive rows and TILE consecutive tokens:
 * each weight is dequantized once and multiplied with all TILE activation
 * rows, so a matrix-matrix product reads the weights once per tile
 * (TILE = 1 is the matrix-vector kernel). Neighbouring threads read
 * neighbouring words of a row: float rows element by element, quantized
 * blocks split into lanes of 8 weights (lane_load). Each thread keeps its
 * own partial sums in a fixed order, then a subgroup sum and an ordered
 * sum over subgroups finish the reduction: no atomics, the same bytes on
 * every run.
 *
 * With MATMUL_ID defined (matmul_id.comp) it is the experts' product of a
 * routed FFN: "tokens" are (token, chosen expert) pairs, TILE is 1, pair
 * j reads the matrix of expert ids[j] (expert_bytes apart in the stack)
 * and activation row j / x_div (x_div = experts per token: each token's
 * row feeds its experts; 1: a row per pair); a dispatch covers the pairs
 * from pair0 on.
 */
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint ROWS = 1u;
layout(constant_id = 3) const uint TILE = 1u;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Wbuf { uint w_words[]; };
layout(std430, binding = 1) readonly buffer Xbuf { float xs[]; };
layout(std430, binding = 2) writeonly buffer Ybuf { float ys[]; };
#ifdef MATMUL_ID
layout(std430, binding = 3) readonly buffer Ibuf { uint ids[]; };
#endif

layout(push_constant) uniform Push {
	uint row_bytes, n_in, n_out, n_tok, y_stride, groups_x;
#ifdef MATMUL_ID
	uint expert_bytes, x_div, pair0;
#endif
} p;

#ifdef MATMUL_ID
#define XROW(t) ((t) / p.x_div)
#else
#define XROW(t) (t)
#endif

#define WORD(i) w_words[i]
#include "dequant.glsl"

shared float part[WG * ROWS * TILE];

void main()
{
	const uint tid = gl_LocalInvocationID.x;
	const uint r0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * p.groups_x) * ROWS;
#ifdef MATMUL_ID
	const uint t0 = p.pair0 + gl_WorkGroupID.z; /* TILE is 1 */
#else
	const uint t0 = gl_WorkGroupID.z * TILE;
#endif
	if (r0 >= p.n_out)
		return; /* the whole workgroup leaves together */
	const uint nt = min(TILE, p.n_tok - t0);
#ifdef MATMUL_ID
	const uint w0 = ids[t0] * p.expert_bytes;
#else
	const uint w0 = 0u;
#endif

	float acc[ROWS * TILE];
	for (uint k = 0u; k < ROWS * TILE; k++)
		acc[k] = 0.0;
	for (uint rr = 0u; rr < ROWS; rr++) {
		if (r0 + rr >= p.n_out)
			break;
		const uint row = w0 + (r0 + rr) * p.row_bytes;
		if (DTYPE == DT_F32 || DTYPE == DT_F16) {
			/* thread i takes elements i, i + WG, ...: neighbours read
			 * neighbouring words */
			for (uint i = tid; i < p.n_in; i += WG) {
				const float w = DTYPE == DT_F32 ? uintBitsToFloat(w_words[(row >> 2) + i])
								: rdhalf(row + 2u * i);
				for (uint t = 0u; t < TILE; t++) {
					if (t >= nt)
						break;
					acc[rr * TILE + t] += w * xs[XROW(t0 + t) * p.n_in + i];
				}
			}
		} else {
			const uint n_units = (p.n_in / BLOCK_ELEMS) * LANES;
			for (uint u = tid; u < n_units; u += WG) {
				const uint blk = u / LANES;
				vec4 a, c;
				uint ea, ec;
				lane_load(row + blk * BLOCK_BYTES, u % LANES, a, c, ea, ec);
				for (uint t = 0u; t < TILE; t++) {
					if (t >= nt)
						break;
					const uint xa = XROW(t0 + t) * p.n_in + blk * BLOCK_ELEMS + ea;
					const uint xc = XROW(t0 + t) * p.n_in + blk * BLOCK_ELEMS + ec;
					acc[rr * TILE + t] +=
						dot(a, vec4(xs[xa], xs[xa + 1u], xs[xa + 2u], xs[xa + 3u])) +
						dot(c, vec4(xs[xc], xs[xc + 1u], xs[xc + 2u], xs[xc + 3u]));
				}
			}
		}
	}

	for (uint k = 0u; k < ROWS * TILE; k++) {
		const float s = subgroupAdd(acc[k]);
		if (subgroupElect())
			part[gl_SubgroupID * ROWS * TILE + k] = s;
	}
	barrier();
	for (uint k = tid; k < ROWS * TILE; k += WG) {
		const uint rr = k / TILE, t = k % TILE;
		if (r0 + rr >= p.n_out || t >= nt)
			continue;
		float s = 0.0;
		for (uint g = 0u; g < gl_NumSubgroups; g++)
			s += part[g * ROWS * TILE + k];
		ys[(t0 + t) * p.y_stride + r0 + rr] = s;
	}
}
