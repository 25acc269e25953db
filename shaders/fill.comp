// fill.comp -- the Vulkan layer's own test shader: y[i] = a * i + b for
// i < n, scaled by the specialization constant MUL. It exercises push
// constants, specialization constants and a storage buffer binding, so
// test_vk can check the layer without depending on the real kernels.
#version 450

layout(local_size_x_id = 1) in;
layout(constant_id = 0) const uint MUL = 1;

layout(std430, set = 0, binding = 0) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Push {
	uint n;
	float a;
	float b;
} pc;

void main()
{
	uint i = gl_GlobalInvocationID.x;
	if (i < pc.n)
		y[i] = float(MUL) * (pc.a * float(i) + pc.b);
}
