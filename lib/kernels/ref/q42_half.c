/* q42_half.c -- IEEE binary16 and bfloat16 conversions as ggml rounds them.
 *
 * ggml-impl.h defines the arithmetic: f16 -> f32 is exact (NaNs come back
 * quiet), f32 -> f16 rounds to nearest even with every NaN becoming the
 * quiet NaN 0x7E00 (sign kept), f32 -> bf16 rounds to nearest even with
 * NaNs truncated and forced quiet. These are bit manipulations, never
 * library calls, so every host gives the same bits.
 */
#include <string.h>
#include "kernels/q42_kernels_impl.h"
#include "common/q42_le.h"

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float f32_from(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

float q42_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1Fu;
	uint32_t man = h & 0x3FFu;

	if (exp == 0x1F) /* inf stays inf; a NaN keeps its payload, made quiet */
		return f32_from(sign | 0x7F800000u | (man << 13) | (man ? 0x400000u : 0));
	if (exp == 0) /* zero or subnormal: man * 2^-24 is exact in f32 */
		return f32_from(sign | f32_bits((float)man * 0x1p-24f));
	return f32_from(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t q42_f32_to_f16(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7FFFFFFFu;

	if (a > 0x7F800000u)
		return sign | 0x7E00u;
	if (a >= 0x477FF000u) /* rounds to or past 65520: infinity */
		return sign | 0x7C00u;
	if (a < 0x38800000u) {
		/* Result is subnormal (or zero): units of 2^-24. Adding 0.5 (as a
		 * float, which rounds to nearest even) snaps the magnitude to that
		 * grid, leaving the integer in the low mantissa bits. */
		float r = f32_from(a) + 0.5f;
		return sign | (uint16_t)(f32_bits(r) - f32_bits(0.5f));
	}
	/* Normal: rebias, then round the 13 dropped bits to nearest even. A
	 * carry out of the mantissa bumps the exponent, which is what we want. */
	uint32_t odd = (a >> 13) & 1u;
	a += 0xFFFu + odd;
	return sign | (uint16_t)((a - 0x38000000u) >> 13);
}

float q42_bf16_to_f32(uint16_t h)
{
	return f32_from((uint32_t)h << 16);
}

uint16_t q42_f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);

	if ((u & 0x7FFFFFFFu) > 0x7F800000u)
		return (uint16_t)((u >> 16) | 64u);
	return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

float q42_half_at(const uint8_t *p)
{
	return q42_f16_to_f32(q42_ld16(p));
}
