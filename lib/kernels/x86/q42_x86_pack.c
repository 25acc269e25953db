/* x86/q42_x86_pack.c -- AVX-512 packers and products of Q5_0, Q5_1, Q4_0,
 * Q4_1 and Q8_0 weights in the R16 layout (q42_pack.h), with llama.cpp's
 * arithmetic of each: Q5_0 x Q8_0 and Q5_1 x Q8_1 as ggml's x86 dot product
 * (q42_llamacpp_dot_q5_0 / _q5_1: eight float lanes per row, one fma per
 * lane and block, lanes reduced as hsum_float_8, Q5_1's min terms summed
 * apart), Q4_0 x Q8_0, Q4_1 x Q8_1 and Q8_0 x Q8_0 as llama.cpp's AMX
 * buffer (q42_llamacpp_dot_q4_0 / _q4_1 / _q8_0: one fma per block of the
 * exact integer sum, Q4_1 one more for its min). The sixteen rows of a group sit in the
 * sixteen lanes of a register.
 *
 * Why a layout of its own: in the file's layout each row's scale sits in
 * its own block, so a register holding two rows needs a shuffle per block
 * to line the scales up with the lanes, a row's integer sum must be
 * reduced across lanes per block, and (Q5_0) every row's fifth bits must
 * be moved into a mask register on their own; that was compute-bound
 * even in cache (docs/perf/r16-layout.md). Packed, one
 * conversion gives the scales of sixteen rows, masks load straight into
 * mask registers, and a dword of every row's block is one register: per
 * block and sixteen rows a few nibble splits, VNNI steps, one convert and
 * one fma per float lane, no shuffles.
 */
#include <string.h>
#include "kernels/q42_llamacpp.h"
#include "kernels/x86/q42_x86.h"
#include "kernels/llamacpp/q42_llamacpp_impl.h"
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_pack.h"
#include "kernels/x86/q42_x86_generic.h"
#include "common/q42_le.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define A5_INLINE Q42_TARGET_AVX512_GFNI_INLINE
#define A5 Q42_TARGET_AVX512_GFNI
#define UNROLL _Pragma("GCC unroll 16")

/* Tokens per pass over a group: their 8 T accumulators stay in registers. */
enum { R16_T = 2 };
/* A one-token pass streams the packed groups front to back; as each block
 * pair is multiplied, the lines R16_L2_AHEAD bytes on are requested into
 * L2 and those R16_L1_AHEAD on into L1 (Intel), or those R16_L2_ONLY on
 * into L2 alone (other CPUs: x86/q42_x86_cpu.c). On Intel 1 KiB into L1
 * and 8 KiB into L2 beat L1 alone and L2 alone (no prefetch at all:
 * x86/q42_x86_cpu.c). Q4_K's super-blocks (K4_L2_ONLY) go further ahead
 * alone. Each call's first bytes are not requested ahead: that changed
 * no product's rate. On Intel each line's two requests are one
 * Q42_X86_PREFETCH_L2_L1, which keeps them from being issued back to back
 * (q42_kernels_impl.h says why). The measurements: docs/perf/prefetch.md. */
enum { R16_L1_AHEAD = 1024, R16_L2_AHEAD = 8192, R16_L2_ONLY = 4096, K4_L2_ONLY = 8192 };

/* The prefetch of the bytes of one step at g, n bytes (a multiple of 64),
 * as above; l2_only is the distance without L1. */
A5_INLINE void r16_prefetch(const uint8_t *g, uint64_t n, bool l1, uint64_t l2_only)
{
	for (uint64_t o = 0; o < n; o += 64) {
		if (l1) {
			Q42_X86_PREFETCH_L2_L1(g + o, R16_L2_AHEAD, R16_L1_AHEAD);
		} else {
			_mm_prefetch((const char *)(g + l2_only + o), _MM_HINT_T1);
		}
	}
}

/* The R16 kinds: quant offset in the file's block, activation block
 * layout, and what the products need. */
enum r16_kind { R16_Q5_0, R16_Q4_0, R16_Q4_1, R16_Q5_1, R16_Q8_0, R16_Q8_0_CPU };

/* the kinds with a fifth bit (ggml's eight-lane vec_dot arithmetic) */
static inline bool r16_fifth(enum r16_kind k)
{
	return k == R16_Q5_0 || k == R16_Q5_1;
}

/* the kinds of eight float lanes per row: the fifth-bit ones and Q8_0 in
 * the plain CPU buffer (the zen4 variant) */
static inline bool r16_lanes8(enum r16_kind k)
{
	return r16_fifth(k) || k == R16_Q8_0_CPU;
}

/* the kinds stored as Q8_0 bytes */
static inline bool r16_q8(enum r16_kind k)
{
	return k == R16_Q8_0 || k == R16_Q8_0_CPU;
}

/* the kinds a one-token pass prefetches into L2 off Intel
 * (x86/q42_x86_cpu.c) */
static inline bool r16_l2_prefetch(enum r16_kind k)
{
	return r16_fifth(k) || k == R16_Q4_0;
}

struct r16_type {
	int bytes, qs, qh;   /* file block size, quants' and qh's offsets in it */
	int xbytes, xqs;     /* activation block (Q8_0 or Q8_1) */
	q42_r16_shape shape; /* packed fields */
};

static struct r16_type r16_type_of(enum r16_kind k)
{
	switch (k) {
	case R16_Q5_0:
		return (struct r16_type){Q5_0_BYTES, Q5_0_QS, Q5_0_QH, Q8_0_BYTES, Q8_0_QS, q42_r16_shape_of(0, 1, 0)};
	case R16_Q4_0:
		return (struct r16_type){Q4_0_BYTES, Q4_0_QS, -1, Q8_0_BYTES, Q8_0_QS, q42_r16_shape_of(0, 0, 0)};
	case R16_Q8_0:
	case R16_Q8_0_CPU:
		return (struct r16_type){Q8_0_BYTES, Q8_0_QS, -1, Q8_0_BYTES, Q8_0_QS, q42_r16_shape_of(1, 0, 0)};
	case R16_Q5_1:
		return (struct r16_type){Q5_1_BYTES, Q5_1_QS, Q5_1_QH, Q8_1_BYTES, Q8_1_QS, q42_r16_shape_of(0, 1, 1)};
	default: return (struct r16_type){Q4_1_BYTES, Q4_1_QS, -1, Q8_1_BYTES, Q8_1_QS, q42_r16_shape_of(0, 0, 1)};
	}
}

/* What a token's block j gives every row: Q5_0 the eight lanes' -16 x
 * (sum of the lane's four activation quants), Q8_0 in eight lanes -128 x
 * that sum, Q4_0 -8 x the sum of all 32 and Q8_0 -128 x that sum (at lane
 * 0); d_x, and Q4_1's s_x. */
struct r16_tok {
	int32_t bias[R16_T][Q42_R16_MAX_BLOCKS][8];
	float dx[R16_T][Q42_R16_MAX_BLOCKS];
	float sx[R16_T][Q42_R16_MAX_BLOCKS];
};

A5_INLINE void r16_table(enum r16_kind k, const uint8_t *x, uint64_t x_stride, int T, int64_t nb,
			 struct r16_tok *tab)
{
	const struct r16_type ty = r16_type_of(k);
	const __m256i off = _mm256_set1_epi8(k == R16_Q5_0 ? 16 : r16_q8(k) ? (char)0x80 : 8);
	for (int t = 0; t < T; t++)
		for (int64_t j = 0; j < nb; j++) {
			const uint8_t *xb = x + (uint64_t)t * x_stride + (uint64_t)j * (uint64_t)ty.xbytes;
			const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(xb + ty.xqs));
			const __m256i b = _mm256_sub_epi32(_mm256_setzero_si256(),
							   _mm256_dpbusd_epi32(_mm256_setzero_si256(), off, y));
			if (k == R16_Q4_0 || k == R16_Q8_0) {
				__m128i h = _mm_add_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
				h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
				h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
				_mm256_storeu_si256((__m256i *)(void *)tab->bias[t][j], _mm256_castsi128_si256(h));
			} else {
				_mm256_storeu_si256((__m256i *)(void *)tab->bias[t][j], b);
			}
			tab->dx[t][j] = _cvtsh_ss(q42_ld16(xb));
			tab->sx[t][j] = ty.xbytes == Q8_1_BYTES ? _cvtsh_ss(q42_ld16(xb + Q8_1_S)) : 0.0f;
		}
}

/* lane v's quants of the sixteen rows, 0..31: nibble and fifth bit */
A5_INLINE __m512i r16_quants(__m512i nib, const uint8_t *m, int v)
{
	return _mm512_mask_add_epi8(nib, _load_mask64((__mmask64 *)(uintptr_t)(m + 8 * v)), nib,
				    _mm512_set1_epi8(0x10));
}

/* d_w * d_x of the sixteen rows (f16 scales at d) for each token's block j */
A5_INLINE void r16_scales(int T, const uint8_t *d, int64_t j, const struct r16_tok *tab, __m512 dd[R16_T])
{
	const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)d));
	UNROLL
	for (int t = 0; t < T; t++)
		dd[t] = _mm512_mul_ps(dw, _mm512_set1_ps(tab->dx[t][j]));
}

/* Q5_0 / Q5_1 block j of a group (fields at qs, m, d; Q5_1's mins at mn)
 * against T tokens, into the eight lane accumulators acc[t][0..7] and, for
 * Q5_1, the min sum acc[t][8] (summs + m_w * s_x, the product exact). */
A5_INLINE void r16_block(int T, enum r16_kind k, const uint8_t *qs, const uint8_t *m, const uint8_t *d,
			 const uint8_t *mn, int64_t j, const uint8_t *x, uint64_t x_stride, const struct r16_tok *tab,
			 __m512 acc[R16_T][9])
{
	const struct r16_type ty = r16_type_of(k);
	/* GF(2) affine matrices: bits 0..3 of each byte, and bits 4..7 moved
	 * down */
	const __m512i lo = _mm512_set1_epi64(0x0102040800000000LL), hi = _mm512_set1_epi64(0x1020408000000000LL);
	__m512 dd[R16_T];
	r16_scales(T, d, j, tab, dd);
	UNROLL
	for (int l = 0; l < 4; l++) {
		const __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * l));
		const __m512i ql = r16_quants(_mm512_gf2p8affine_epi64_epi8(v, lo, 0), m, l);
		const __m512i qh = r16_quants(_mm512_gf2p8affine_epi64_epi8(v, hi, 0), m, l + 4);
		UNROLL
		for (int t = 0; t < T; t++) {
			const uint8_t *ys =
				x + (uint64_t)t * x_stride + (uint64_t)j * (uint64_t)ty.xbytes + (uint64_t)ty.xqs;
			/* Q5_1 has no offset: its sums start from zero */
			const bool off = k != R16_Q5_1;
			const __m512i bl = off ? _mm512_set1_epi32(tab->bias[t][j][l]) : _mm512_setzero_si512();
			const __m512i bh = off ? _mm512_set1_epi32(tab->bias[t][j][l + 4]) : _mm512_setzero_si512();
			const __m512i sl = _mm512_dpbusd_epi32(bl, ql, _mm512_set1_epi32((int)q42_ld32(ys + 4 * l)));
			const __m512i sh = _mm512_dpbusd_epi32(bh, qh, _mm512_set1_epi32((int)q42_ld32(ys + 16 + 4 * l)));
			acc[t][l] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sl), dd[t], acc[t][l]);
			acc[t][l + 4] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sh), dd[t], acc[t][l + 4]);
		}
	}
	if (k == R16_Q5_1) {
		const __m512 mw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)mn));
		UNROLL
		for (int t = 0; t < T; t++)
			acc[t][8] = _mm512_add_ps(acc[t][8], _mm512_mul_ps(mw, _mm512_set1_ps(tab->sx[t][j])));
	}
}

/* Q4_0 / Q4_1 / Q8_0 block j of a group (quants at qs, scales at d, Q4_1's
 * mins at mn) against T tokens, into acc: each row's exact integer sum (two
 * VNNI chains, elements 0..15 and 16..31: the low and high nibbles, or
 * Q8_0's bytes made unsigned by a flipped top bit, the table's bias taking
 * the 128 x sum back off), then fma(sumi, d_w * d_x) and Q4_1's fma(m_w,
 * s_x). */
A5_INLINE void r16_block_int(int T, enum r16_kind k, const uint8_t *qs, const uint8_t *d, const uint8_t *mn,
			    int64_t j, const uint8_t *x, uint64_t x_stride, const struct r16_tok *tab,
			    __m512 acc[R16_T])
{
	const __m512i m15 = _mm512_set1_epi8(0x0F), hi = _mm512_set1_epi64(0x1020408000000000LL);
	const __m512i top = _mm512_set1_epi8((char)0x80);
	const struct r16_type ty = r16_type_of(k);
	const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)d));
	__m512i sl[R16_T], sh[R16_T];
	UNROLL
	for (int t = 0; t < T; t++) {
		sl[t] = k != R16_Q4_1 ? _mm512_set1_epi32(tab->bias[t][j][0]) : _mm512_setzero_si512();
		sh[t] = _mm512_setzero_si512();
	}
	UNROLL
	for (int l = 0; l < 4; l++) {
		const __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * l));
		const __m512i ql = k == R16_Q8_0 ? _mm512_xor_si512(v, top) : _mm512_and_si512(v, m15);
		const __m512i qh = k == R16_Q8_0
					   ? _mm512_xor_si512(_mm512_loadu_si512((const void *)(qs + 64 * (l + 4))), top)
					   : _mm512_gf2p8affine_epi64_epi8(v, hi, 0);
		UNROLL
		for (int t = 0; t < T; t++) {
			const uint8_t *ys =
				x + (uint64_t)t * x_stride + (uint64_t)j * (uint64_t)ty.xbytes + (uint64_t)ty.xqs;
			sl[t] = _mm512_dpbusd_epi32(sl[t], ql, _mm512_set1_epi32((int)q42_ld32(ys + 4 * l)));
			sh[t] = _mm512_dpbusd_epi32(sh[t], qh, _mm512_set1_epi32((int)q42_ld32(ys + 16 + 4 * l)));
		}
	}
	UNROLL
	for (int t = 0; t < T; t++) {
		acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sl[t], sh[t])),
					 _mm512_mul_ps(dw, _mm512_set1_ps(tab->dx[t][j])), acc[t]);
		if (k == R16_Q4_1)
			acc[t] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)mn)),
						 _mm512_set1_ps(tab->sx[t][j]), acc[t]);
	}
}

/* acc + the products of u's bytes with the four bytes at p (signed) in
 * every dword: the broadcast folded into the instruction (compilers load it
 * into a register of its own first) */
A5_INLINE __m512i dpbusd_bcast(__m512i acc, __m512i u, const void *p)
{
	__asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*(const int32_t *)p));
	return acc;
}

/* Q8_0 (plain CPU buffer) block j of a group against T tokens into the
 * eight lane accumulators acc[t][0..7]: lane v of a row is the exact sum
 * of its bytes 4v..4v+3 (the bytes made unsigned by a flipped top bit,
 * the table's bias taking the 128 x lane sum back off), one fma per lane.
 * Each lane's sum and fma are one VNNI step and one fma on sixteen rows;
 * on Zen 4 both issue only to the same two pipes, so a block costs at
 * least 16 of their cycles per token (docs/perf/arith.md has the
 * measurement), against 8 for the AMX-order sum's one fma per row. */
A5_INLINE void r16_block_q8cpu(int T, const uint8_t *qs, const uint8_t *d, int64_t j, const uint8_t *x,
			       uint64_t x_stride, const struct r16_tok *tab, __m512 acc[R16_T][9])
{
	const __m512i top = _mm512_set1_epi8((char)0x80);
	__m512 dd[R16_T];
	r16_scales(T, d, j, tab, dd);
	UNROLL
	for (int v = 0; v < 8; v++) {
		const __m512i q = _mm512_xor_si512(_mm512_loadu_si512((const void *)(qs + 64 * v)), top);
		UNROLL
		for (int t = 0; t < T; t++) {
			const uint8_t *ys = x + (uint64_t)t * x_stride + (uint64_t)j * Q8_0_BYTES + Q8_0_QS;
			const __m512i s = dpbusd_bcast(_mm512_set1_epi32(tab->bias[t][j][v]), q, ys + 4 * v);
			acc[t][v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), dd[t], acc[t][v]);
		}
	}
}

/* Block j of any kind, in the pair at pb: the first (odd 0) or second
 * of a full pair (in 2), or a lone last block (in 1). Constant in and
 * odd fold the field offsets. */
A5_INLINE void r16_any(int T, enum r16_kind k, const uint8_t *pb, int in, int odd, int64_t j, const uint8_t *x,
		       uint64_t x_stride, const struct r16_tok *tab, __m512 acc[R16_T][9])
{
	const q42_r16_shape sh = r16_type_of(k).shape;
	const uint8_t *qs = pb + q42_r16_at(sh, in, odd, -1), *d = pb + q42_r16_at(sh, in, odd, Q42_R16_F_D);
	if (k == R16_Q8_0_CPU) {
		r16_block_q8cpu(T, qs, d, j, x, x_stride, tab, acc);
	} else if (r16_lanes8(k)) {
		r16_block(T, k, qs, pb + q42_r16_at(sh, in, odd, Q42_R16_F_M), d,
			  pb + q42_r16_at(sh, in, odd, Q42_R16_F_MN), j, x, x_stride, tab, acc);
	} else {
		__m512 a[R16_T];
		UNROLL
		for (int t = 0; t < T; t++)
			a[t] = acc[t][0];
		r16_block_int(T, k, qs, d, pb + q42_r16_at(sh, in, odd, Q42_R16_F_MN), j, x, x_stride, tab, a);
		UNROLL
		for (int t = 0; t < T; t++)
			acc[t][0] = a[t];
	}
}

/* One group of sixteen rows (nb blocks at g) against T tokens: block pairs
 * in order, prefetching ahead for one token, then a lone last block; Q5_0
 * and Q5_1 reduce their eight lanes as hsum_float_8 ((l + l+4), then (0+2)
 * + (1+3)), Q5_1 then adds its min sum; Q4_0 / Q4_1 / Q8_0 have one lane. */
A5_INLINE void r16_group(int T, enum r16_kind k, const uint8_t *g, int64_t nb, const uint8_t *x,
			 uint64_t x_stride, const struct r16_tok *tab, float *y, uint64_t y_stride)
{
	const uint64_t pair = 2 * q42_r16_block(r16_type_of(k).shape);
	__m512 acc[R16_T][9];
	UNROLL
	for (int t = 0; t < T; t++)
		UNROLL
		for (int v = 0; v < 9; v++)
			acc[t][v] = _mm512_setzero_ps();
	/* Q8_0 and Q4_1 leave the stream to the hardware off Intel */
	const bool l1 = q42_x86_prefetch_l1(), pf = T == 1 && (l1 || r16_l2_prefetch(k));
	int64_t j = 0;
	for (; j + 2 <= nb; j += 2, g += pair) {
		if (pf)
			r16_prefetch(g, pair, l1, R16_L2_ONLY);
		r16_any(T, k, g, 2, 0, j, x, x_stride, tab, acc);
		r16_any(T, k, g, 2, 1, j + 1, x, x_stride, tab, acc);
	}
	if (j < nb)
		r16_any(T, k, g, 1, 0, j, x, x_stride, tab, acc);
	UNROLL
	for (int t = 0; t < T; t++) {
		__m512 v = acc[t][0];
		if (r16_lanes8(k)) {
			const __m512 r0 = _mm512_add_ps(acc[t][4], acc[t][0]), r1 = _mm512_add_ps(acc[t][5], acc[t][1]);
			const __m512 r2 = _mm512_add_ps(acc[t][6], acc[t][2]), r3 = _mm512_add_ps(acc[t][7], acc[t][3]);
			v = _mm512_add_ps(_mm512_add_ps(r0, r2), _mm512_add_ps(r1, r3));
		}
		if (k == R16_Q5_1)
			v = _mm512_add_ps(v, acc[t][8]);
		_mm512_storeu_ps(y + (uint64_t)t * y_stride, v);
	}
}

/* The R16 packer, one block of a group at a time: the rows' quant bytes
 * (and Q5_0's qh words) are gathered into small buffers, then the quants
 * are transposed by dword (rows 0..7 and 8..15 each from a pair of
 * registers) and the qh nibbles by a byte permute and a GF(2) affine step
 * per half (mask v is one qword: even v takes each byte's low nibble, odd
 * v its high one). About four times faster than the same loops in plain
 * C, which added a third to a model's load (docs/perf/loading.md). */
A5_INLINE void r16_pack(enum r16_kind k, void *dst, const void *src, int64_t n_in, int64_t n_out)
{
	const struct r16_type ty = r16_type_of(k);
	const int64_t nb = n_in / Q42_QK;
	const uint64_t rb = (uint64_t)nb * (uint64_t)ty.bytes, full = (uint64_t)(n_out - n_out % Q42_R16);
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
	/* Q8_0: each of a block's eight quant vectors, and the scales, is one
	 * gather from the sixteen rows (rows are at most 34816 bytes) */
	const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
						_mm512_set1_epi32((int)rb));
	for (uint64_t g = 0; g < full && r16_q8(k); g += Q42_R16)
		for (int64_t j = 0; j < nb; j++) {
			const uint8_t *b0 = (const uint8_t *)src + g * rb + (uint64_t)j * (uint64_t)ty.bytes;
			uint8_t *d = (uint8_t *)dst + g * rb;
			_mm256_storeu_si256((__m256i *)(void *)(d + q42_r16_at(ty.shape, nb, j, Q42_R16_F_D)),
					    _mm512_cvtepi32_epi16(_mm512_i32gather_epi32(rows, b0, 1)));
			for (int l = 0; l < 8; l++)
				_mm512_storeu_si512(d + q42_r16_at(ty.shape, nb, j, -1) + 64 * (uint64_t)l,
						    _mm512_i32gather_epi32(rows, b0 + ty.qs + 4 * l, 1));
		}
	for (uint64_t g = 0; g < full && !r16_q8(k); g += Q42_R16) {
		const uint8_t *s = (const uint8_t *)src + g * rb;
		uint8_t *d = (uint8_t *)dst + g * rb;
		for (int64_t j = 0; j < nb; j++) {
			uint8_t qs[256], qh[64];
			uint8_t *od = d + q42_r16_at(ty.shape, nb, j, Q42_R16_F_D);
			uint8_t *oq = d + q42_r16_at(ty.shape, nb, j, -1);
			for (int r = 0; r < Q42_R16; r++) {
				const uint8_t *b = s + (uint64_t)r * rb + (uint64_t)j * (uint64_t)ty.bytes;
				memcpy(od + 2 * r, b, 2);
				/* Q4_1's and Q5_1's min follows the scale */
				if (ty.shape.size[Q42_R16_F_MN])
					memcpy(d + q42_r16_at(ty.shape, nb, j, Q42_R16_F_MN) + 2 * r, b + 2, 2);
				if (ty.qh >= 0)
					memcpy(qh + 4 * r, b + ty.qh, 4);
				memcpy(qs + 16 * r, b + ty.qs, 16);
			}
			const __m512i z0 = _mm512_loadu_si512(qs), z1 = _mm512_loadu_si512(qs + 64);
			const __m512i z2 = _mm512_loadu_si512(qs + 128), z3 = _mm512_loadu_si512(qs + 192);
			for (int l = 0; l < 4; l++)
				_mm512_storeu_si512(oq + 64 * l,
						    _mm512_mask_blend_epi32((__mmask16)0xFF00,
									    _mm512_permutex2var_epi32(z0, idx[l], z1),
									    _mm512_permutex2var_epi32(z2, idx[l], z3)));
			if (ty.qh >= 0) {
				const __m512i q = _mm512_loadu_si512(qh);
				_mm512_storeu_si512(
					d + q42_r16_at(ty.shape, nb, j, Q42_R16_F_M),
					_mm512_or_si512(_mm512_gf2p8affine_epi64_epi8(_mm512_permutexvar_epi8(pa, q), gma, 0),
							_mm512_gf2p8affine_epi64_epi8(_mm512_permutexvar_epi8(pb, q), gmb, 0)));
			}
		}
	}
	memcpy((uint8_t *)dst + full * rb, (const uint8_t *)src + full * rb, ((uint64_t)n_out - full) * rb);
}

/* Packed rows against T tokens at a time (a table of the tokens' block
 * terms per pass); rows past the last group go to the file layout's
 * kernel. */
A5_INLINE void r16_rows(enum r16_kind k, Q42_LLAMACPP_ROWS_ARGS, q42_llamacpp_rows_fn tail)
{
	const int64_t nb = n / Q42_QK, full = n_rows - n_rows % Q42_R16;
	const uint64_t gbytes = Q42_R16 * w_stride;
	struct r16_tok tab;
	for (int64_t t0 = 0; t0 < n_tok; t0 += R16_T) {
		const int T = n_tok - t0 < R16_T ? (int)(n_tok - t0) : R16_T;
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t0 * x_stride;
		float *yt = y + (uint64_t)t0 * y_stride;
		r16_table(k, xt, x_stride, T, nb, &tab);
		for (int64_t r = 0; r < full; r += Q42_R16) {
			const uint8_t *g = (const uint8_t *)w + (uint64_t)(r / Q42_R16) * gbytes;
			/* the tile's width as a constant, so its accumulators
			 * stay in registers */
			if (T == 1)
				r16_group(1, k, g, nb, xt, x_stride, &tab, yt + r, y_stride);
			else
				r16_group(R16_T, k, g, nb, xt, x_stride, &tab, yt + r, y_stride);
		}
	}
	if (full < n_rows)
		tail(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride, n_tok, x, x_stride,
		     y + full, y_stride);
}

/* Row r of a packed matrix back in the file's bytes: each block's scale
 * (and min), quant dwords and (Q5_0, Q5_1) fifth bits gathered from the
 * group's fields; rows past the last full group are as they were. */
static void r16_row(enum r16_kind k, uint8_t *dst, const uint8_t *p, int64_t n_in, int64_t n_out, int64_t r)
{
	const struct r16_type ty = r16_type_of(k);
	const int64_t nb = n_in / Q42_QK;
	const uint64_t rb = (uint64_t)nb * (uint64_t)ty.bytes, rr = (uint64_t)(r % Q42_R16);
	const uint8_t *g = p + (uint64_t)(r / Q42_R16) * Q42_R16 * rb;
	if (r >= n_out - n_out % Q42_R16) {
		memcpy(dst, p + (uint64_t)r * rb, rb);
		return;
	}
	for (int64_t j = 0; j < nb; j++) {
		uint8_t *b = dst + (uint64_t)j * (uint64_t)ty.bytes;
		memcpy(b, g + q42_r16_at(ty.shape, nb, j, Q42_R16_F_D) + 2 * rr, 2);
		if (ty.shape.size[Q42_R16_F_MN])
			memcpy(b + 2, g + q42_r16_at(ty.shape, nb, j, Q42_R16_F_MN) + 2 * rr, 2);
		for (uint32_t l = 0; l < ty.shape.qs / 64; l++)
			memcpy(b + ty.qs + 4 * l, g + q42_r16_at(ty.shape, nb, j, -1) + 64 * l + 4 * rr, 4);
		if (ty.qh >= 0) {
			uint32_t qh = 0;
			for (int e = 0; e < 32; e++)
				qh |= (uint32_t)((q42_ld64(g + q42_r16_at(ty.shape, nb, j, Q42_R16_F_M) + 8 * (e / 4)) >>
						  (4 * rr + (uint64_t)(e % 4))) &
						 1u)
				      << e;
			q42_st32(b + ty.qh, qh);
		}
	}
}

#define R16_ENTRY(KIND, NAME, TAIL)                                                                       \
	A5 void q42_llamacpp_pack_##NAME##_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out) \
	{                                                                                                  \
		r16_pack(KIND, dst, src, n_in, n_out);                                                     \
	}                                                                                                  \
	A5 void q42_llamacpp_rows_##NAME##_r16_avx512(Q42_LLAMACPP_ROWS_ARGS)                                  \
	{                                                                                                  \
		r16_rows(KIND, n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, TAIL);             \
	}                                                                                                  \
	void q42_llamacpp_row_##NAME##_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r) \
	{                                                                                                  \
		r16_row(KIND, dst, p, n_in, n_out, r);                                                     \
	}

R16_ENTRY(R16_Q5_0, q5_0, q42_llamacpp_rows_q5_0_avx512)
R16_ENTRY(R16_Q4_0, q4_0, q42_llamacpp_rows_q4_0_avx512)
R16_ENTRY(R16_Q4_1, q4_1, q42_llamacpp_rows_q4_1_avx512)
R16_ENTRY(R16_Q5_1, q5_1, q42_llamacpp_rows_q5_1_avx512)
R16_ENTRY(R16_Q8_0, q8_0, q42_llamacpp_rows_q8_0_avx512)

/* the zen4 variant's Q8_0: packed as R16_Q8_0 (the same bytes), eight
 * float lanes per row */
A5 void q42_llamacpp_rows_q8_0_cpu_r16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	r16_rows(R16_Q8_0_CPU, n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride,
		 q42_llamacpp_rows_q8_0_cpu_avx512);
}

/* ---- Q4_K -------------------------------------------------------------- */

/* Q4_K in the R16 layout (q42_pack.h): per super-block of a group, the
 * quants (32 vectors v = 8 h + l: dword l of every row's 32-byte chunk
 * h), the twelve scale bytes (byte b of the sixteen rows at 16 b), then d
 * and dmin (row r at 2 r). */
enum { K4_SC = Q42_R16_K4_SC, K4_D = Q42_R16_K4_D, K4_DM = Q42_R16_K4_DM, K4_BLOCK = Q42_R16_K4_BLOCK };

/* r * rb for r = 0..15: the sixteen rows' offsets, for gathers (rows
 * of at most 128 super-blocks: 18432 bytes) */
A5_INLINE __m512i k4_rows(uint64_t rb)
{
	return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
				  _mm512_set1_epi32((int)rb));
}

A5 void q42_llamacpp_pack_q4_k_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out)
{
	const int64_t nsb = n_in / Q42_QK_K;
	const uint64_t rb = (uint64_t)nsb * Q4_K_BYTES, full = (uint64_t)(n_out - n_out % Q42_R16);
	const __m512i rows = k4_rows(rb);
	for (uint64_t g = 0; g < full; g += Q42_R16)
		for (int64_t j = 0; j < nsb; j++) {
			const uint8_t *a = (const uint8_t *)src + g * rb + (uint64_t)j * Q4_K_BYTES;
			uint8_t *o = (uint8_t *)dst + g * rb + (uint64_t)j * K4_BLOCK;
			for (int v = 0; v < 32; v++)
				_mm512_storeu_si512(o + 64 * v, _mm512_i32gather_epi32(rows, a + Q4_K_QS + 32 * (v / 8) +
											   4 * (v % 8), 1));
			for (int b = 0; b < 12; b++)
				for (uint64_t r = 0; r < Q42_R16; r++)
					o[K4_SC + 16 * b + (int)r] = a[r * rb + Q4_K_SCALES + (uint64_t)b];
			const __m512i d = _mm512_i32gather_epi32(rows, a + Q4_K_D, 1);
			_mm256_storeu_si256((__m256i *)(void *)(o + K4_D), _mm512_cvtepi32_epi16(d));
			_mm256_storeu_si256((__m256i *)(void *)(o + K4_DM), _mm512_cvtepi32_epi16(_mm512_srli_epi32(d, 16)));
		}
	memcpy((uint8_t *)dst + full * rb, (const uint8_t *)src + full * rb, ((uint64_t)n_out - full) * rb);
}

void q42_llamacpp_row_q4_k_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r)
{
	const int64_t nsb = n_in / Q42_QK_K;
	const uint64_t rb = (uint64_t)nsb * Q4_K_BYTES, rr = (uint64_t)(r % Q42_R16);
	const uint8_t *g = (const uint8_t *)p + (uint64_t)(r / Q42_R16) * Q42_R16 * rb;
	if (r >= n_out - n_out % Q42_R16) {
		memcpy(dst, (const uint8_t *)p + (uint64_t)r * rb, rb);
		return;
	}
	for (int64_t j = 0; j < nsb; j++) {
		const uint8_t *blk = g + (uint64_t)j * K4_BLOCK;
		uint8_t *a = (uint8_t *)dst + (uint64_t)j * Q4_K_BYTES;
		for (int v = 0; v < 32; v++)
			memcpy(a + Q4_K_QS + 32 * (v / 8) + 4 * (v % 8), blk + 64 * v + 4 * rr, 4);
		for (int b = 0; b < 12; b++)
			a[Q4_K_SCALES + b] = blk[K4_SC + 16 * (uint64_t)b + rr];
		memcpy(a + Q4_K_D, blk + K4_D + 2 * rr, 2);
		memcpy(a + Q4_K_DMIN, blk + K4_DM + 2 * rr, 2);
	}
}

/* How a group's exact sums become floats: K4_AMX as llama.cpp's AMX
 * buffer, K4_GEMV and K4_GEMM as its CPU_REPACK kernels (the zen4
 * variant) for a lone token and for the tokens of a pass in whole groups
 * of four. */
enum k4_form { K4_AMX, K4_GEMV, K4_GEMM };

/* CPU_REPACK's float step: fma(isum, d_w * d_x, acc), fma(summ, dmin_w *
 * d_x, accm) for the super-block at g of the token at x. */
A5_INLINE void k4_repack_step(const uint8_t *g, const uint8_t *x, __m512i isum, __m512i summ, __m512 *acc,
			      __m512 *accm)
{
	const __m512 yd = _mm512_set1_ps(q42_ldf32(x + Q8_K_D));
	const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(g + K4_D)));
	const __m512 dm = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(g + K4_DM)));
	*acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, yd), *acc);
	*accm = _mm512_fmadd_ps(_mm512_cvtepi32_ps(summ), _mm512_mul_ps(dm, yd), *accm);
}

/* One token against nsb packed super-blocks of a group: per super-block
 * each row's exact sums isum = sum sc_g * (q . y)_g and summ = sum mn_g *
 * (int16)(bsum_2g + bsum_2g+1). K4_AMX: fma(isum, d_w * d_x) and
 * fma(summ, -(d_x * dmin_w)) in one chain -- q42_llamacpp_dot_q4_k with a
 * row per lane; K4_GEMV: fma(isum, d_w * d_x, acc) and fma(summ, dmin_w *
 * d_x, accm), acc - accm at the end (q42_llamacpp_dot_q4_k_repack);
 * K4_GEMM: the same per 64 elements (_repack_x4). */
A5_INLINE void k4_group(const uint8_t *g, int64_t nsb, const uint8_t *x, float *y, enum k4_form form)
{
	const __m512i m15 = _mm512_set1_epi8(0x0F);
	__m512 acc = _mm512_setzero_ps(), accm = _mm512_setzero_ps();
	const bool l1 = q42_x86_prefetch_l1();
	for (int64_t j = 0; j < nsb; j++, g += K4_BLOCK, x += Q8_K_BYTES) {
		r16_prefetch(g, K4_BLOCK, l1, K4_L2_ONLY);
		__m128i sc[8], mn[8];
		x86_k4_scales16(g + K4_SC, sc, mn);
		const uint8_t *yq = x + Q8_K_QS;
		__m512i isum = _mm512_setzero_si512(), summ = _mm512_setzero_si512();
		UNROLL
		for (int h = 0; h < 4; h++) {
			__m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
			UNROLL
			for (int l = 0; l < 8; l++) {
				const __m512i v = _mm512_loadu_si512((const void *)(g + 64 * (8 * h + l)));
				lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m15),
							 _mm512_set1_epi32((int)q42_ld32(yq + 64 * h + 4 * l)));
				hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(_mm512_srli_epi16(v, 4), m15),
							 _mm512_set1_epi32((int)q42_ld32(yq + 64 * h + 32 + 4 * l)));
			}
			isum = _mm512_add_epi32(isum, _mm512_add_epi32(_mm512_mullo_epi32(_mm512_cvtepu8_epi32(sc[2 * h]), lo),
								       _mm512_mullo_epi32(_mm512_cvtepu8_epi32(sc[2 * h + 1]), hi)));
			const int16_t b0 = (int16_t)((int16_t)q42_ld16(x + Q8_K_BSUMS + 8 * h) +
						     (int16_t)q42_ld16(x + Q8_K_BSUMS + 8 * h + 2));
			const int16_t b1 = (int16_t)((int16_t)q42_ld16(x + Q8_K_BSUMS + 8 * h + 4) +
						     (int16_t)q42_ld16(x + Q8_K_BSUMS + 8 * h + 6));
			summ = _mm512_add_epi32(summ, _mm512_add_epi32(
							      _mm512_mullo_epi32(_mm512_cvtepu8_epi32(mn[2 * h]), _mm512_set1_epi32(b0)),
							      _mm512_mullo_epi32(_mm512_cvtepu8_epi32(mn[2 * h + 1]), _mm512_set1_epi32(b1))));
			if (form == K4_GEMM) {
				k4_repack_step(g, x, isum, summ, &acc, &accm);
				isum = summ = _mm512_setzero_si512();
			}
		}
		if (form == K4_GEMV) {
			k4_repack_step(g, x, isum, summ, &acc, &accm);
		} else if (form == K4_AMX) {
			const float yd = q42_ldf32(x + Q8_K_D);
			const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(g + K4_D)));
			const __m512 dm = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(g + K4_DM)));
			acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, _mm512_set1_ps(yd)), acc);
			acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(summ),
					      _mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(_mm512_set1_ps(yd), dm)), acc);
		}
	}
	_mm512_storeu_ps(y, form == K4_AMX ? acc : _mm512_sub_ps(acc, accm));
}

/* Packed Q4_K rows, group by group and token by token (a group's 23-odd
 * KiB stay in L1 for the tokens of a pass); rows past the last group are
 * in the file's layout already. */
A5 void q42_llamacpp_rows_q4_k_r16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t nsb = n / Q42_QK_K, full = n_rows - n_rows % Q42_R16;
	for (int64_t r = 0; r < full; r += Q42_R16)
		for (int64_t t = 0; t < n_tok; t++)
			k4_group((const uint8_t *)w + (uint64_t)r * w_stride, nsb,
				 (const uint8_t *)x + (uint64_t)t * x_stride, y + (uint64_t)t * y_stride + r, K4_AMX);
	if (full < n_rows)
		q42_llamacpp_rows_q4_k_avx512(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride,
					    n_tok, x, x_stride, y + full, y_stride);
}

/* The zen4 variant's Q4_K (CPU_REPACK), packed as above: a pass's tokens
 * in whole groups of four take the gemm form, the others the gemv one;
 * rows past the last group take the scalar definition. */
A5 void q42_llamacpp_rows_q4_k_repack_r16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t nsb = n / Q42_QK_K, full = n_rows - n_rows % Q42_R16;
	for (int64_t r = 0; r < full; r += Q42_R16)
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *g = (const uint8_t *)w + (uint64_t)r * w_stride;
			const uint8_t *xt = (const uint8_t *)x + (uint64_t)t * x_stride;
			if (t < n_tok / 4 * 4)
				k4_group(g, nsb, xt, y + (uint64_t)t * y_stride + r, K4_GEMM);
			else
				k4_group(g, nsb, xt, y + (uint64_t)t * y_stride + r, K4_GEMV);
		}
	if (full < n_rows)
		q42_llamacpp_scalar_rows[Q42_LROWS_Q4_K_REPACK](n, n_rows - full,
							     (const uint8_t *)w + (uint64_t)full * w_stride, w_stride,
							     n_tok, x, x_stride, y + full, y_stride);
}

/* ---- Q6_K -------------------------------------------------------------- */

/* Q6_K in the R16 layout (q42_pack.h): super-blocks in pairs, each with
 * 32 ql vectors, 16 qh vectors, sixteen scale bytes per row and d. */
enum { K6_QL = Q6_K_QL, K6_QH = Q6_K_QH, K6_SC = Q6_K_SCALES, K6_D = Q6_K_D };

A5 void q42_llamacpp_pack_q6_k_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out)
{
	const q42_r16_shape sh = q42_r16_q6_k_shape();
	const int64_t nsb = n_in / Q42_QK_K;
	const uint64_t rb = (uint64_t)nsb * Q6_K_BYTES, full = (uint64_t)(n_out - n_out % Q42_R16);
	const __m512i rows = k4_rows(rb);
	for (uint64_t g = 0; g < full; g += Q42_R16)
		for (int64_t j = 0; j < nsb; j++) {
			const uint8_t *a = (const uint8_t *)src + g * rb + (uint64_t)j * Q6_K_BYTES;
			uint8_t *o = (uint8_t *)dst + g * rb;
			uint8_t *v = o + q42_r16_at(sh, nsb, j, -1), *sc = o + q42_r16_at(sh, nsb, j, 0);
			for (int k = 0; k < 48; k++)
				_mm512_storeu_si512(v + 64 * k, _mm512_i32gather_epi32(
									rows, a + (k < 32 ? K6_QL + 4 * k : K6_QH + 4 * (k - 32)), 1));
			for (int b = 0; b < 16; b++)
				for (uint64_t r = 0; r < Q42_R16; r++)
					sc[16 * b + (int)r] = a[r * rb + K6_SC + (uint64_t)b];
			const __m512i d = _mm512_i32gather_epi32(rows, a + K6_D - 2, 1);
			_mm256_storeu_si256((__m256i *)(void *)(o + q42_r16_at(sh, nsb, j, 1)),
					    _mm512_cvtepi32_epi16(_mm512_srli_epi32(d, 16)));
		}
	memcpy((uint8_t *)dst + full * rb, (const uint8_t *)src + full * rb, ((uint64_t)n_out - full) * rb);
}

void q42_llamacpp_row_q6_k_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r)
{
	const q42_r16_shape sh = q42_r16_q6_k_shape();
	const int64_t nsb = n_in / Q42_QK_K;
	const uint64_t rb = (uint64_t)nsb * Q6_K_BYTES, rr = (uint64_t)(r % Q42_R16);
	const uint8_t *g = (const uint8_t *)p + (uint64_t)(r / Q42_R16) * Q42_R16 * rb;
	if (r >= n_out - n_out % Q42_R16) {
		memcpy(dst, (const uint8_t *)p + (uint64_t)r * rb, rb);
		return;
	}
	for (int64_t j = 0; j < nsb; j++) {
		const uint8_t *v = g + q42_r16_at(sh, nsb, j, -1), *sc = g + q42_r16_at(sh, nsb, j, 0);
		uint8_t *a = (uint8_t *)dst + (uint64_t)j * Q6_K_BYTES;
		for (int k = 0; k < 48; k++)
			memcpy(a + (k < 32 ? K6_QL + 4 * k : K6_QH + 4 * (k - 32)), v + 64 * k + 4 * rr, 4);
		for (int b = 0; b < 16; b++)
			a[K6_SC + b] = sc[16 * b + (int)rr];
		memcpy(a + K6_D, g + q42_r16_at(sh, nsb, j, 1) + 2 * rr, 2);
	}
}

/* The 6-bit quants of dword l of half h of a packed Q6_K super-block at v,
 * for its four quarters q: the ql nibble, and the qh pair moved to bits
 * 4..5, by GF(2) affine steps (matrix byte 7 - i selects the source bits
 * of result bit i). */
A5_INLINE void k6_quants(const uint8_t *v, int h, int l, __m512i w[4])
{
	const __m512i m15 = _mm512_set1_epi8(0x0F), m48 = _mm512_set1_epi8(0x30);
	const __m512i nhi = _mm512_set1_epi64(0x1020408000000000LL);
	const __m512i h01 = _mm512_set1_epi64(0x01020000LL), h23 = _mm512_set1_epi64(0x04080000LL);
	const __m512i h67 = _mm512_set1_epi64(0x40800000LL);
	const __m512i a0 = _mm512_loadu_si512((const void *)(v + 64 * (16 * h + l)));
	const __m512i a1 = _mm512_loadu_si512((const void *)(v + 64 * (16 * h + 8 + l)));
	const __m512i hb = _mm512_loadu_si512((const void *)(v + 64 * (32 + 8 * h + l)));
	w[0] = _mm512_ternarylogic_epi32(a0, m15, _mm512_gf2p8affine_epi64_epi8(hb, h01, 0), 0xEA);
	w[1] = _mm512_ternarylogic_epi32(a1, m15, _mm512_gf2p8affine_epi64_epi8(hb, h23, 0), 0xEA);
	w[2] = _mm512_ternarylogic_epi32(_mm512_gf2p8affine_epi64_epi8(a0, nhi, 0), hb, m48, 0xF8);
	w[3] = _mm512_or_si512(_mm512_gf2p8affine_epi64_epi8(a1, nhi, 0), _mm512_gf2p8affine_epi64_epi8(hb, h67, 0));
}

/* One packed super-block (vectors at v, scales at sc, d at d) against T
 * tokens' Q8_K blocks (x, x + x_stride): each row's exact sum isum =
 * sum_s sc_s * (q - 32) . y over the sixteen 16-element sub-blocks s (the
 * -32 as -32 x the sub-block's bsum, the VNNI chain's start), then
 * fma(isum, d_w * d_x) into acc[t] -- q42_llamacpp_dot_q6_k with a row per
 * lane. The quants are unpacked (k6_quants) once for all T tokens. */
A5_INLINE void k6_block(int T, const uint8_t *v, const uint8_t *sc, const uint8_t *d, const uint8_t *x,
			uint64_t x_stride, __m512 acc[R16_T])
{
	__m512i isum[R16_T];
	UNROLL
	for (int t = 0; t < T; t++)
		isum[t] = _mm512_setzero_si512();
	UNROLL
	for (int h = 0; h < 2; h++)
		UNROLL
		for (int lq = 0; lq < 2; lq++) {
			/* sub-blocks 8 h + 2 q + lq, q = 0..3: elements 128 h + 32 q +
			 * 16 lq .. of quarter q (ql chunk 2 h + q % 2, nibble q / 2,
			 * qh bits 2 q) */
			__m512i s[R16_T][4];
			UNROLL
			for (int t = 0; t < T; t++)
				UNROLL
				for (int q = 0; q < 4; q++)
					s[t][q] = _mm512_set1_epi32(-32 * (int16_t)q42_ld16(x + (uint64_t)t * x_stride + Q8_K_BSUMS +
											 2 * (8 * h + 2 * q + lq)));
			UNROLL
			for (int i = 0; i < 4; i++) {
				const int l = 4 * lq + i;
				__m512i w[4];
				k6_quants(v, h, l, w);
				UNROLL
				for (int t = 0; t < T; t++) {
					const uint8_t *y = x + (uint64_t)t * x_stride + Q8_K_QS + 128 * h + 4 * l;
					UNROLL
					for (int q = 0; q < 4; q++)
						s[t][q] = _mm512_dpbusd_epi32(s[t][q], w[q],
									      _mm512_set1_epi32((int)q42_ld32(y + 32 * q)));
				}
			}
			UNROLL
			for (int q = 0; q < 4; q++) {
				const __m512i scv = _mm512_cvtepi8_epi32(
					_mm_loadu_si128((const __m128i *)(const void *)(sc + 16 * (8 * h + 2 * q + lq))));
				UNROLL
				for (int t = 0; t < T; t++)
					isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(scv, s[t][q]));
			}
		}
	const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)d));
	UNROLL
	for (int t = 0; t < T; t++)
		acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]),
					 _mm512_mul_ps(dw, _mm512_set1_ps(q42_ldf32(x + (uint64_t)t * x_stride + Q8_K_D))),
					 acc[t]);
}

/* One group of sixteen packed rows against T tokens (y: the first token's
 * outputs for the group), prefetching ahead for one token. */
A5_INLINE void k6_group(int T, const uint8_t *g, int64_t nsb, bool l1, const uint8_t *x, uint64_t x_stride,
			float *y, uint64_t y_stride)
{
	const q42_r16_shape sh = q42_r16_q6_k_shape();
	__m512 acc[R16_T];
	UNROLL
	for (int t = 0; t < T; t++)
		acc[t] = _mm512_setzero_ps();
	for (int64_t j = 0; j < nsb; j++) {
		if (T == 1 && j % 2 == 0)
			r16_prefetch(g + q42_r16_at(sh, nsb, j, -1),
				     j + 1 < nsb ? 2 * q42_r16_block(sh) : q42_r16_block(sh), l1, K4_L2_ONLY);
		k6_block(T, g + q42_r16_at(sh, nsb, j, -1), g + q42_r16_at(sh, nsb, j, 0), g + q42_r16_at(sh, nsb, j, 1),
			 x + (uint64_t)j * Q8_K_BYTES, x_stride, acc);
	}
	UNROLL
	for (int t = 0; t < T; t++)
		_mm512_storeu_ps(y + (uint64_t)t * y_stride, acc[t]);
}

/* Packed Q6_K rows, group by group, R16_T tokens at a time (the weights'
 * unpacking shared between them; a group's 33-odd KiB stay in L1 for the
 * tokens of a pass); rows past the last group are in the file's layout. */
A5 void q42_llamacpp_rows_q6_k_r16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t nsb = n / Q42_QK_K, full = n_rows - n_rows % Q42_R16;
	const bool l1 = q42_x86_prefetch_l1();
	for (int64_t r = 0; r < full; r += Q42_R16) {
		const uint8_t *g = (const uint8_t *)w + (uint64_t)r * w_stride;
		int64_t t = 0;
		for (; t + R16_T <= n_tok; t += R16_T)
			k6_group(R16_T, g, nsb, l1, (const uint8_t *)x + (uint64_t)t * x_stride, x_stride,
				 y + (uint64_t)t * y_stride + r, y_stride);
		if (t < n_tok)
			k6_group(1, g, nsb, l1, (const uint8_t *)x + (uint64_t)t * x_stride, x_stride,
				 y + (uint64_t)t * y_stride + r, y_stride);
	}
	if (full < n_rows)
		q42_llamacpp_rows_q6_k_avx512(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride,
					    n_tok, x, x_stride, y + full, y_stride);
}

/* The zen4 variant's Q6_K (plain CPU buffer: ggml's x86 vec_dot,
 * q42_llamacpp_dot_q6_k_cpu) over the same packed bytes, one token at a
 * time: per row eight int32 lanes, lane l taking dword l of every 32-value
 * chunk c times the scale of its sub-block 2 c + l / 4, less 32 x
 * (sc_2l bsum_2l + sc_2l+1 bsum_2l+1); each lane fma(lane, d_x * d_w)
 * into acc[l]. The quants are unpacked as k6_block does. */
A5_INLINE void k6_block_lanes8(const uint8_t *v, const uint8_t *sc, const uint8_t *d, const uint8_t *x,
			       __m512 acc[8])
{
	__m512i lane[8];
	UNROLL
	for (int l = 0; l < 8; l++) {
		const __m512i s0 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(sc + 16 * (2 * l))));
		const __m512i s1 =
			_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(sc + 16 * (2 * l + 1))));
		const int b0 = (int16_t)q42_ld16(x + Q8_K_BSUMS + 2 * (2 * l));
		const int b1 = (int16_t)q42_ld16(x + Q8_K_BSUMS + 2 * (2 * l + 1));
		lane[l] = _mm512_mullo_epi32(_mm512_set1_epi32(-32),
					     _mm512_add_epi32(_mm512_mullo_epi32(s0, _mm512_set1_epi32(b0)),
							      _mm512_mullo_epi32(s1, _mm512_set1_epi32(b1))));
	}
	UNROLL
	for (int h = 0; h < 2; h++)
		UNROLL
		for (int lq = 0; lq < 2; lq++) {
			__m512i scv[4];
			UNROLL
			for (int q = 0; q < 4; q++)
				scv[q] = _mm512_cvtepi8_epi32(
					_mm_loadu_si128((const __m128i *)(const void *)(sc + 16 * (8 * h + 2 * q + lq))));
			UNROLL
			for (int i = 0; i < 4; i++) {
				const int l = 4 * lq + i;
				__m512i w[4];
				k6_quants(v, h, l, w);
				const uint8_t *y = x + Q8_K_QS + 128 * h + 4 * l;
				UNROLL
				for (int q = 0; q < 4; q++)
					lane[l] = _mm512_add_epi32(
						lane[l],
						_mm512_mullo_epi32(scv[q], _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[q],
											      _mm512_set1_epi32((int)q42_ld32(
												      y + 32 * q)))));
			}
		}
	const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(q42_ldf32(x + Q8_K_D)),
					_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)d)));
	UNROLL
	for (int l = 0; l < 8; l++)
		acc[l] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lane[l]), dd, acc[l]);
}

/* Packed Q6_K rows in the zen4 variant's rounding, group by group and
 * token by token; the lanes reduced as hsum_float_8; rows past the last
 * group take the scalar definition. */
A5 void q42_llamacpp_rows_q6_k_cpu_r16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	const q42_r16_shape sh = q42_r16_q6_k_shape();
	const int64_t nsb = n / Q42_QK_K, full = n_rows - n_rows % Q42_R16;
	const bool l1 = q42_x86_prefetch_l1();
	for (int64_t r = 0; r < full; r += Q42_R16) {
		const uint8_t *g = (const uint8_t *)w + (uint64_t)r * w_stride;
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *xt = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m512 acc[8];
			UNROLL
			for (int l = 0; l < 8; l++)
				acc[l] = _mm512_setzero_ps();
			for (int64_t j = 0; j < nsb; j++) {
				if (n_tok == 1 && j % 2 == 0)
					r16_prefetch(g + q42_r16_at(sh, nsb, j, -1),
						     j + 1 < nsb ? 2 * q42_r16_block(sh) : q42_r16_block(sh), l1,
						     K4_L2_ONLY);
				k6_block_lanes8(g + q42_r16_at(sh, nsb, j, -1), g + q42_r16_at(sh, nsb, j, 0),
						g + q42_r16_at(sh, nsb, j, 1), xt + (uint64_t)j * Q8_K_BYTES, acc);
			}
			const __m512 r0 = _mm512_add_ps(acc[4], acc[0]), r1 = _mm512_add_ps(acc[5], acc[1]);
			const __m512 r2 = _mm512_add_ps(acc[6], acc[2]), r3 = _mm512_add_ps(acc[7], acc[3]);
			_mm512_storeu_ps(y + (uint64_t)t * y_stride + r,
					 _mm512_add_ps(_mm512_add_ps(r0, r2), _mm512_add_ps(r1, r3)));
		}
	}
	if (full < n_rows)
		q42_llamacpp_scalar_rows[Q42_LROWS_Q6_K_CPU](n, n_rows - full,
							  (const uint8_t *)w + (uint64_t)full * w_stride, w_stride,
							  n_tok, x, x_stride, y + full, y_stride);
}

#endif
