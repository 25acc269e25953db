/* dequant.glsl -- reading ggml weight rows from a uint32 storage array.
 *
 * Blocks are not 4-byte aligned (q4_0 is 18 bytes, q8_0 34, q6_K 210), so
 * bytes are extracted from words by hand: the shaders need neither 8-bit
 * storage nor 8-bit arithmetic. Every 16-bit field sits at an even offset
 * (block sizes are even), so it never straddles a word. Element values
 * follow the scalar dequantizers of lib/kernels/ref/q42_quants.c, which are the
 * definition. The including shader defines WORD(i), the i-th uint32 of the
 * weight buffer, and DTYPE (a ggml type id) before including this file.
 */

const uint DT_F32 = 0u, DT_F16 = 1u, DT_Q4_0 = 2u, DT_Q8_0 = 8u, DT_Q4_K = 12u, DT_Q6_K = 14u;

uint rd8(uint o)
{
	return (WORD(o >> 2) >> ((o & 3u) << 3)) & 0xFFu;
}

/* o even */
uint rd16(uint o)
{
	return (WORD(o >> 2) >> ((o & 2u) << 3)) & 0xFFFFu;
}

/* four bytes from an even offset */
uint rd32(uint o)
{
	uint i = o >> 2;
	if ((o & 2u) == 0u)
		return WORD(i);
	return (WORD(i) >> 16) | (WORD(i + 1u) << 16);
}

float rdhalf(uint o)
{
	return unpackHalf2x16(rd16(o)).x;
}

/* byte k (0..3) of a word as a signed value */
int sbyte(uint v, uint k)
{
	return int(v << (24u - 8u * k)) >> 24;
}

/* The 6-bit scale and min of sub-block j of a q4_K block whose 12 packed
 * bytes start at o (block_q4_K, see q42_k4_scale_min). */
void k4_scale_min(uint o, uint j, out float sc, out float m)
{
	if (j < 4u) {
		sc = float(rd8(o + j) & 63u);
		m = float(rd8(o + j + 4u) & 63u);
	} else {
		uint a = rd8(o + j + 4u);
		sc = float((a & 0xFu) | ((rd8(o + j - 4u) >> 6) << 4));
		m = float((a >> 4) | ((rd8(o + j) >> 6) << 4));
	}
}

/* Elements 32u .. 32u+31 of a row starting at byte row (u counts 32-element
 * units; a unit never spans two blocks). For F32 and F16 elements at or
 * past n are 0 and never read. */
void unit_load(uint row, uint u, uint n, out float v[32])
{
	if (DTYPE == DT_F32 || DTYPE == DT_F16) {
		uint e0 = u * 32u;
		uint lim = min(32u, n - e0);
		for (uint j = 0u; j < 32u; j++) {
			if (j >= lim) {
				v[j] = 0.0;
			} else if (DTYPE == DT_F32) {
				v[j] = uintBitsToFloat(WORD((row >> 2) + e0 + j));
			} else {
				v[j] = rdhalf(row + 2u * (e0 + j));
			}
		}
	} else if (DTYPE == DT_Q4_0) {
		uint b = row + u * 18u;
		float d = rdhalf(b);
		for (uint k = 0u; k < 4u; k++) {
			uint q = rd32(b + 2u + 4u * k);
			for (uint i = 0u; i < 4u; i++) {
				uint byte = (q >> (8u * i)) & 0xFFu;
				v[4u * k + i] = float(int(byte & 0xFu) - 8) * d;
				v[16u + 4u * k + i] = float(int(byte >> 4) - 8) * d;
			}
		}
	} else if (DTYPE == DT_Q8_0) {
		uint b = row + u * 34u;
		float d = rdhalf(b);
		for (uint k = 0u; k < 8u; k++) {
			uint q = rd32(b + 2u + 4u * k);
			for (uint i = 0u; i < 4u; i++)
				v[4u * k + i] = float(sbyte(q, i)) * d;
		}
	} else if (DTYPE == DT_Q4_K) {
		uint b = row + (u >> 3) * 144u, s = u & 7u;
		float sc, m;
		k4_scale_min(b + 4u, s, sc, m);
		float d1 = rdhalf(b) * sc, m1 = rdhalf(b + 2u) * m;
		uint qs = b + 16u + (s >> 1) * 32u, sh = (s & 1u) * 4u;
		for (uint k = 0u; k < 8u; k++) {
			uint q = rd32(qs + 4u * k);
			for (uint i = 0u; i < 4u; i++)
				v[4u * k + i] = d1 * float((q >> (8u * i + sh)) & 0xFu) - m1;
		}
	} else if (DTYPE == DT_Q6_K) {
		/* unit s: half h = s/4, quarter q = s%4 of the super-block */
		uint b = row + (u >> 3) * 210u, s = u & 7u, h = s >> 2, qq = s & 3u;
		float d = rdhalf(b + 208u);
		uint sw = rd16(b + 192u + 2u * s);
		float d0 = d * float(int(sw << 24) >> 24), d1 = d * float(int(sw << 16) >> 24);
		uint ql = b + h * 64u + (qq & 1u) * 32u, qh = b + 128u + h * 32u;
		uint lsh = (qq >> 1) * 4u, hsh = 2u * qq;
		for (uint k = 0u; k < 8u; k++) {
			uint lo = rd32(ql + 4u * k), hi = rd32(qh + 4u * k);
			for (uint i = 0u; i < 4u; i++) {
				int q = int(((lo >> (8u * i + lsh)) & 0xFu) |
					    (((hi >> (8u * i + hsh)) & 3u) << 4)) - 32;
				v[4u * k + i] = (k < 4u ? d0 : d1) * float(q);
			}
		}
	}
}

/* Lanes per block for the matrix kernels: each lane of a block reads one
 * or two consecutive words, so neighbouring threads read neighbouring
 * words (coalesced), and yields 8 weights. */
const uint LANES = DTYPE == DT_Q8_0 ? 4u : DTYPE == DT_Q4_0 ? 4u : 32u;
const uint BLOCK_ELEMS = DTYPE == DT_Q4_K || DTYPE == DT_Q6_K ? 256u : 32u;
const uint BLOCK_BYTES = DTYPE == DT_Q4_0 ? 18u : DTYPE == DT_Q8_0 ? 34u : DTYPE == DT_Q4_K ? 144u : 210u;

/* Lane l of the quantized block at byte b: weights a (elements ea..ea+3 of
 * the block) and c (elements ec..ec+3), values as unit_load gives them. */
void lane_load(uint b, uint l, out vec4 a, out vec4 c, out uint ea, out uint ec)
{
	if (DTYPE == DT_Q8_0) {
		const float d = rdhalf(b);
		const uint q0 = rd32(b + 2u + 8u * l), q1 = rd32(b + 6u + 8u * l);
		a = vec4(sbyte(q0, 0u), sbyte(q0, 1u), sbyte(q0, 2u), sbyte(q0, 3u)) * d;
		c = vec4(sbyte(q1, 0u), sbyte(q1, 1u), sbyte(q1, 2u), sbyte(q1, 3u)) * d;
		ea = 8u * l;
		ec = 8u * l + 4u;
	} else if (DTYPE == DT_Q4_0) {
		const float d = rdhalf(b);
		const uint q = rd32(b + 2u + 4u * l);
		const uvec4 lo = (uvec4(q, q >> 8, q >> 16, q >> 24)) & 0xFu;
		const uvec4 hi = (uvec4(q >> 4, q >> 12, q >> 20, q >> 28)) & 0xFu;
		a = (vec4(lo) - 8.0) * d;
		c = (vec4(hi) - 8.0) * d;
		ea = 4u * l;
		ec = 4u * l + 16u;
	} else if (DTYPE == DT_Q4_K) {
		/* qs byte 4l: chunk l/8 of 64 elements; low nibbles in its first
		 * 32 (sub-block 2*(l/8)), high nibbles in its second */
		const uint ch = l >> 3, pos = 4u * (l & 7u);
		float sc0, m0, sc1, m1;
		k4_scale_min(b + 4u, 2u * ch, sc0, m0);
		k4_scale_min(b + 4u, 2u * ch + 1u, sc1, m1);
		const float d = rdhalf(b), dmin = rdhalf(b + 2u);
		const uint q = rd32(b + 16u + 4u * l);
		const uvec4 lo = (uvec4(q, q >> 8, q >> 16, q >> 24)) & 0xFu;
		const uvec4 hi = (uvec4(q >> 4, q >> 12, q >> 20, q >> 28)) & 0xFu;
		a = (d * sc0) * vec4(lo) - dmin * m0;
		c = (d * sc1) * vec4(hi) - dmin * m1;
		ea = ch * 64u + pos;
		ec = ch * 64u + 32u + pos;
	} else {
		/* q6_K: half h, odd quarter or not, 4 positions j of 32: the ql
		 * word holds quarter qo (low nibbles) and qo + 2 (high), the qh
		 * word their top bits at 2*quarter */
		const uint h = l >> 4, qo = (l >> 3) & 1u, j = 4u * (l & 7u);
		const uint ql = rd32(b + h * 64u + qo * 32u + j), qh = rd32(b + 128u + h * 32u + j);
		const float d = rdhalf(b + 208u);
		ea = h * 128u + qo * 32u + j;
		ec = ea + 64u;
		const float da = d * float(sbyte(rd16(b + 192u + (ea >> 4) - ((ea >> 4) & 1u)), (ea >> 4) & 1u));
		const float dc = d * float(sbyte(rd16(b + 192u + (ec >> 4) - ((ec >> 4) & 1u)), (ec >> 4) & 1u));
		const uvec4 lq = uvec4(ql, ql >> 8, ql >> 16, ql >> 24);
		const uvec4 hq = uvec4(qh, qh >> 8, qh >> 16, qh >> 24);
		const uint sa = 2u * qo, sc = 2u * qo + 4u;
		a = da * (vec4((lq & 0xFu) | (((hq >> sa) & 3u) << 4)) - 32.0);
		c = dc * (vec4(((lq >> 4) & 0xFu) | (((hq >> sc) & 3u) << 4)) - 32.0);
	}
}
