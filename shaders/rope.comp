#version 450
/* rope.comp -- rotary position embedding in place, one thread per rotated
 * pair. The angle is built as the CPU engine builds it: theta = pos times
 * theta_scale once per pair index (theta_scale = base^(-2/n_rot), computed
 * on the host), then freq_scale * (theta / freq); sin and cos are
 * multiplied by mscale (LongRoPE's attention factor, else 1) as the CPU's
 * cache holds them. Angles reach thousands
 * of radians, where a GPU's native sin/cos guarantee little (2^-11
 * absolute in [-pi, pi] only), so sin and cos are our own: a three-part
 * reduction by pi/2 and minimax polynomials on [-pi/4, pi/4], accurate to
 * a few float ulps for |angle| < 2^13 * pi/2 -- and the same on every
 * device.
 */
layout(local_size_x_id = 0) in;
const uint WG = gl_WorkGroupSize.x;

layout(std430, binding = 0) buffer Xbuf { float xs[]; };
layout(std430, binding = 1) readonly buffer Fbuf { float freqs[]; };

layout(push_constant) uniform Push {
	uint n_tok, n_heads, hd, n_rot, pos0, neox, has_freqs, groups_x;
	float theta_scale, freq_scale, mscale;
} p;

void q42_sincos(float a, out float s, out float c)
{
	precise float j = round(a * 0.636619772367581343);
	precise float r = a - j * 1.5703125;
	r = r - j * 4.837512969970703125e-4;
	r = r - j * 7.54978995489188216e-8;
	precise float z = r * r;
	precise float sn = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
	precise float cs = 1.0 - 0.5 * z +
			   z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
	const int q = int(j) & 3;
	if (q == 0) {
		s = sn; c = cs;
	} else if (q == 1) {
		s = cs; c = -sn;
	} else if (q == 2) {
		s = -sn; c = -cs;
	} else {
		s = -cs; c = sn;
	}
}

void main()
{
	const uint half_rot = p.n_rot / 2u;
	const uint g = gl_GlobalInvocationID.x + gl_WorkGroupID.y * p.groups_x * WG;
	if (g >= p.n_tok * p.n_heads * half_rot)
		return;
	const uint i = g % half_rot, th = g / half_rot; /* th = t * n_heads + head */
	const uint t = th / p.n_heads;
	precise float theta = float(p.pos0 + t);
	for (uint k = 0u; k < i; k++)
		theta *= p.theta_scale;
	const float f = p.has_freqs != 0u ? freqs[i] : 1.0;
	precise float ang = p.freq_scale * (theta / f);
	float s, c;
	q42_sincos(ang, s, c);
	s *= p.mscale;
	c *= p.mscale;
	const uint base = th * p.hd;
	const uint a = base + (p.neox != 0u ? i : 2u * i);
	const uint b = base + (p.neox != 0u ? i + half_rot : 2u * i + 1u);
	const float x0 = xs[a], x1 = xs[b];
	xs[a] = x0 * c - x1 * s;
	xs[b] = x0 * s + x1 * c;
}
