/* q42_pack_x86.c -- the AVX-512 product of Q5_0 weights in the R16 layout
 * (q42_pack.h): llama.cpp's Q5_0 x Q8_0 arithmetic (q42_compat_dot_q5_0,
 * eight float lanes per row, one fma per lane and block, lanes reduced as
 * hsum_float_8), with the sixteen rows of a group in the sixteen float
 * lanes of a register.
 *
 * Why a layout of its own: in the file's layout each row's scale sits in
 * its own block, so a register holding two rows needs a shuffle per block
 * to line the scales up with the lanes, and every row's fifth bits must be
 * moved into a mask register on their own (about 13 vector operations per
 * block pair of two rows, measured compute-bound at 10-17 GB/s in cache).
 * Packed, one conversion gives the scales of sixteen rows, the masks load
 * straight into mask registers, and a lane l of the eight ggml lanes is
 * one register: per block and sixteen rows, eight
 * nibble-split/fifth-bit/VNNI/convert/fma steps and no shuffles.
 */
#include <string.h>
#include "kernels/q42_compat.h"
#include "kernels/q42_compat_x86.h"
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_pack.h"
#include "common/q42_le.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define A5_INLINE                                                                       \
	static inline __attribute__((always_inline,                                     \
				     target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni")))
#define A5 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni")))
#define UNROLL _Pragma("GCC unroll 16")

/* Tokens per pass over a group: their 8 T accumulators stay in registers. */
enum { R16_T = 2 };
/* A one-token pass streams the packed groups front to back; the lines
 * R16_AHEAD bytes on are requested into L1 as each block pair is
 * multiplied (2 threads, 256 MiB: 4 KiB ahead as good as any mix of 1-16
 * KiB into L1 and L2, and none at all 35-40 % slower). */
enum { R16_AHEAD = 4096 };

/* What a token's block j gives every row: the eight lanes' -16 x (sum of
 * the lane's four activation quants) and d_x. */
struct r16_tok {
	int32_t bias[R16_T][Q42_R16_MAX_BLOCKS][8];
	float dx[R16_T][Q42_R16_MAX_BLOCKS];
};

A5_INLINE void r16_table(const uint8_t *x, uint64_t x_stride, int T, int64_t nb, struct r16_tok *tab)
{
	const __m256i sixteen = _mm256_set1_epi8(16);
	for (int t = 0; t < T; t++)
		for (int64_t j = 0; j < nb; j++) {
			const uint8_t *xb = x + (uint64_t)t * x_stride + (uint64_t)j * Q8_0_BYTES;
			const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(xb + Q8_0_QS));
			_mm256_storeu_si256((__m256i *)(void *)tab->bias[t][j],
					    _mm256_sub_epi32(_mm256_setzero_si256(),
							     _mm256_dpbusd_epi32(_mm256_setzero_si256(), sixteen, y)));
			tab->dx[t][j] = _cvtsh_ss(q42_ld16(xb + Q8_0_D));
		}
}

/* lane v's quants of the sixteen rows, 0..31: nibble and fifth bit */
A5_INLINE __m512i r16_quants(__m512i nib, const uint8_t *m, int v)
{
	return _mm512_mask_add_epi8(nib, _load_mask64((__mmask64 *)(uintptr_t)(m + 8 * v)), nib,
				    _mm512_set1_epi8(0x10));
}

/* Block j of a group (fields at qs, m, d) against T tokens, into acc. */
A5_INLINE void r16_block(int T, const uint8_t *qs, const uint8_t *m, const uint8_t *d, int64_t j,
			 const uint8_t *x, uint64_t x_stride, const struct r16_tok *tab, __m512 acc[R16_T][8])
{
	/* GF(2) affine matrices: bits 0..3 of each byte, and bits 4..7 moved
	 * down */
	const __m512i lo = _mm512_set1_epi64(0x0102040800000000LL), hi = _mm512_set1_epi64(0x1020408000000000LL);
	const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)d));
	__m512 dd[R16_T];
	UNROLL
	for (int t = 0; t < T; t++)
		dd[t] = _mm512_mul_ps(dw, _mm512_set1_ps(tab->dx[t][j]));
	UNROLL
	for (int l = 0; l < 4; l++) {
		const __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * l));
		const __m512i ql = r16_quants(_mm512_gf2p8affine_epi64_epi8(v, lo, 0), m, l);
		const __m512i qh = r16_quants(_mm512_gf2p8affine_epi64_epi8(v, hi, 0), m, l + 4);
		UNROLL
		for (int t = 0; t < T; t++) {
			const uint8_t *ys = x + (uint64_t)t * x_stride + (uint64_t)j * Q8_0_BYTES + Q8_0_QS;
			const __m512i sl = _mm512_dpbusd_epi32(_mm512_set1_epi32(tab->bias[t][j][l]), ql,
							      _mm512_set1_epi32((int)q42_ld32(ys + 4 * l)));
			const __m512i sh = _mm512_dpbusd_epi32(_mm512_set1_epi32(tab->bias[t][j][l + 4]), qh,
							      _mm512_set1_epi32((int)q42_ld32(ys + 16 + 4 * l)));
			acc[t][l] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sl), dd[t], acc[t][l]);
			acc[t][l + 4] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sh), dd[t], acc[t][l + 4]);
		}
	}
}

/* One group of sixteen rows (nb blocks at g) against T tokens: block
 * pairs, then a lone last block (q42_pack.h). */
A5_INLINE void r16_group(int T, const uint8_t *g, int64_t nb, const uint8_t *x, uint64_t x_stride,
			 const struct r16_tok *tab, float *y, uint64_t y_stride)
{
	__m512 acc[R16_T][8];
	UNROLL
	for (int t = 0; t < T; t++)
		UNROLL
		for (int v = 0; v < 8; v++)
			acc[t][v] = _mm512_setzero_ps();
	int64_t j = 0;
	for (; j + 2 <= nb; j += 2, g += Q42_R16_PAIR) {
		if (T == 1)
			for (int o = 0; o < Q42_R16_PAIR; o += 64)
				_mm_prefetch((const char *)(g + R16_AHEAD + o), _MM_HINT_T0);
		r16_block(T, g, g + 512, g + 640, j, x, x_stride, tab, acc);
		r16_block(T, g + 256, g + 576, g + 672, j + 1, x, x_stride, tab, acc);
	}
	if (j < nb)
		r16_block(T, g, g + 256, g + 320, j, x, x_stride, tab, acc);
	/* hsum_float_8 across the lane registers: (l + l+4), then (0+2) + (1+3) */
	UNROLL
	for (int t = 0; t < T; t++) {
		const __m512 r0 = _mm512_add_ps(acc[t][4], acc[t][0]), r1 = _mm512_add_ps(acc[t][5], acc[t][1]);
		const __m512 r2 = _mm512_add_ps(acc[t][6], acc[t][2]), r3 = _mm512_add_ps(acc[t][7], acc[t][3]);
		_mm512_storeu_ps(y + (uint64_t)t * y_stride, _mm512_add_ps(_mm512_add_ps(r0, r2), _mm512_add_ps(r1, r3)));
	}
}

/* The R16 packer, one block of a group at a time: the rows' quant bytes
 * and qh words are gathered into small buffers, then the quants are
 * transposed by dword (rows 0..7 and 8..15 each from a pair of registers)
 * and the qh nibbles by a byte permute and a GF(2) affine step per half
 * (mask v is one qword: even v takes each byte's low nibble, odd v its
 * high one). About four times faster than the same loops in plain C
 * (54 MB: 13 ms against 55), which added a third to a model's load. */
A5 void q42_compat_pack_q5_0_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out)
{
	const int64_t nb = n_in / Q42_QK;
	const uint64_t rb = (uint64_t)nb * Q5_0_BYTES, full = (uint64_t)(n_out - n_out % Q42_R16);
	int32_t qi[4][16];
	uint8_t ia[64], ib[64];
	long long ma[8], mbb[8];
	for (int l = 0; l < 4; l++)
		for (int r = 0; r < 16; r++)
			qi[l][r] = 4 * (r % 8) + l;
	for (int v = 0; v < 8; v++) {
		for (int i = 0; i < 8; i++) {
			ia[8 * v + i] = (uint8_t)(4 * (2 * i) + v / 2);
			ib[8 * v + i] = (uint8_t)(4 * (2 * i + 1) + v / 2);
		}
		/* A: the nibble to bits 0..3; B: to bits 4..7 */
		ma[v] = v % 2 == 0 ? 0x0102040800000000LL : 0x1020408000000000LL;
		mbb[v] = v % 2 == 0 ? 0x0000000001020408LL : 0x0000000010204080LL;
	}
	const __m512i pa = _mm512_loadu_si512(ia), pb = _mm512_loadu_si512(ib);
	const __m512i gma = _mm512_loadu_si512(ma), gmb = _mm512_loadu_si512(mbb);
	__m512i idx[4];
	for (int l = 0; l < 4; l++)
		idx[l] = _mm512_loadu_si512(qi[l]);
	for (uint64_t g = 0; g < full; g += Q42_R16) {
		const uint8_t *s = (const uint8_t *)src + g * rb;
		uint8_t *d = (uint8_t *)dst + g * rb;
		for (int64_t j = 0; j < nb; j++) {
			uint64_t oqs, om, od;
			uint8_t qs[256], qh[64];
			q42_r16_offsets(nb, j, &oqs, &om, &od);
			for (int r = 0; r < Q42_R16; r++) {
				const uint8_t *b = s + (uint64_t)r * rb + (uint64_t)j * Q5_0_BYTES;
				memcpy(d + od + 2 * (uint64_t)r, b + Q5_0_D, 2);
				memcpy(qh + 4 * r, b + Q5_0_QH, 4);
				memcpy(qs + 16 * r, b + Q5_0_QS, 16);
			}
			const __m512i z0 = _mm512_loadu_si512(qs), z1 = _mm512_loadu_si512(qs + 64);
			const __m512i z2 = _mm512_loadu_si512(qs + 128), z3 = _mm512_loadu_si512(qs + 192);
			for (int l = 0; l < 4; l++)
				_mm512_storeu_si512(d + oqs + 64 * (uint64_t)l,
						    _mm512_mask_blend_epi32((__mmask16)0xFF00,
									    _mm512_permutex2var_epi32(z0, idx[l], z1),
									    _mm512_permutex2var_epi32(z2, idx[l], z3)));
			const __m512i q = _mm512_loadu_si512(qh);
			_mm512_storeu_si512(d + om,
					    _mm512_or_si512(_mm512_gf2p8affine_epi64_epi8(_mm512_permutexvar_epi8(pa, q), gma, 0),
							    _mm512_gf2p8affine_epi64_epi8(_mm512_permutexvar_epi8(pb, q), gmb, 0)));
		}
	}
	memcpy((uint8_t *)dst + full * rb, (const uint8_t *)src + full * rb, ((uint64_t)n_out - full) * rb);
}

A5 void q42_compat_rows_q5_0_r16_avx512(Q42_COMPAT_ROWS_ARGS)
{
	const int64_t nb = n / Q42_QK, full = n_rows - n_rows % Q42_R16;
	const uint64_t gbytes = Q42_R16 * w_stride;
	struct r16_tok tab;
	for (int64_t t0 = 0; t0 < n_tok; t0 += R16_T) {
		const int T = n_tok - t0 < R16_T ? (int)(n_tok - t0) : R16_T;
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t0 * x_stride;
		float *yt = y + (uint64_t)t0 * y_stride;
		r16_table(xt, x_stride, T, nb, &tab);
		for (int64_t r = 0; r < full; r += Q42_R16) {
			const uint8_t *g = (const uint8_t *)w + (uint64_t)(r / Q42_R16) * gbytes;
			/* the tile's width as a constant, so its accumulators
			 * stay in registers */
			if (T == 1)
				r16_group(1, g, nb, xt, x_stride, &tab, yt + r, y_stride);
			else
				r16_group(R16_T, g, nb, xt, x_stride, &tab, yt + r, y_stride);
		}
	}
	if (full < n_rows)
		q42_compat_rows_q5_0_avx512(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride,
					    n_tok, x, x_stride, y + full, y_stride);
}

#endif
