#version 450
/* glu.comp -- the gated activations of a feed-forward block, one thread
 * per output element: y = act(g) * u, where act is silu (ACT 0:
 * g / (1 + exp(-g))) or ggml's tanh GELU as ggml-cpu computes it (ACT 1;
 * ACT 2: the GELU alone, no gate, u unread -- BERT's FFN, whose CPU form
 * multiplies by a row of ones, exactly):
 * 0 for g <= -10, g for g >= 10, else g rounded to f16, the GELU of that
 * evaluated in f32 and rounded to f16 again -- the values of the CPU's
 * f16 table (kernels/q42_ops.h, q42_op_geglu). n_rows rows of n outputs;
 * row t reads g at t * in_stride and u at t * in_stride + u_off, so gate
 * and up may be two buffers (in_stride n) or the two halves of one row
 * of a fused product (in_stride 2n, u_off n).
 */
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ACT = 0u;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) readonly buffer Gbuf { float gs[]; };
layout(std430, binding = 1) readonly buffer Ubuf { float us[]; };
layout(std430, binding = 2) writeonly buffer Ybuf { float ys[]; };

layout(push_constant) uniform Push {
	uint n, n_rows, in_stride, u_off, groups_x;
} p;

float f16_round(float x)
{
	return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x;
}

/* tanh from exp, whose error bound the Vulkan spec gives (tanh's own is
 * left to the implementation); saturates to +-1 for large |x| */
float tanh_exp(float x)
{
	const float e = exp(-2.0 * abs(x));
	const float t = (1.0 - e) / (1.0 + e);
	return x < 0.0 ? -t : t;
}

float gelu_f16(float g)
{
	if (g <= -10.0)
		return 0.0;
	if (g >= 10.0)
		return g;
	const float x = f16_round(g);
	precise float inner = 1.0 + 0.044715 * x * x;
	return f16_round(0.5 * x * (1.0 + tanh_exp(0.79788456080286535587989211986876 * x * inner)));
}

void main()
{
	const uint i = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (i >= p.n * p.n_rows)
		return;
	const uint t = i / p.n, c = i % p.n;
	const float g = gs[t * p.in_stride + c];
	if (ACT == 2u) {
		ys[i] = gelu_f16(g);
		return;
	}
	const float u = us[t * p.in_stride + p.u_off + c];
	ys[i] = (ACT == 0u ? g / (1.0 + exp(-g)) : gelu_f16(g)) * u;
}
