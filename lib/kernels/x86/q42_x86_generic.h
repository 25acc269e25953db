/* x86/q42_x86_generic.h -- inline AVX2 building blocks shared by the AVX2 and
 * AVX-512 kernel files.
 *
 * Every helper carries the AVX2 target attribute, so it can be inlined into
 * AVX2 and AVX-512 functions alike and nowhere else (the few AVX-512 ones,
 * Q42_AVX512_INLINE, into AVX-512 functions only). The helpers keep the
 * integer parts exact and do float work one IEEE operation at a time (the
 * fp-contract pragma of q42_kernels_impl.h forbids fusing), so callers can
 * reproduce the scalar reference bit for bit. Internal to lib/kernels; x86
 * only; never called before q42_cpu_has_avx2() said yes.
 */
#ifndef Q42_X86_GENERIC_H
#define Q42_X86_GENERIC_H

#include "kernels/q42_kernels_impl.h"
#include "common/q42_le.h"
#include "kernels/x86/q42_x86.h"
#include "kernels/x86/q42_x86_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define Q42_AVX2 Q42_TARGET_AVX2
#define Q42_AVX2_INLINE Q42_TARGET_AVX2_INLINE

/* Eight f16 fields found every stride bytes from p, widened exactly. */
Q42_AVX2_INLINE __m256 x86_halves8(const uint8_t *p, int stride)
{
	return _mm256_cvtph_ps(_mm_set_epi16(
		(short)q42_ld16(p + 7 * stride), (short)q42_ld16(p + 6 * stride),
		(short)q42_ld16(p + 5 * stride), (short)q42_ld16(p + 4 * stride),
		(short)q42_ld16(p + 3 * stride), (short)q42_ld16(p + 2 * stride),
		(short)q42_ld16(p + stride), (short)q42_ld16(p)));
}

/* sum + v[0] + v[1] + ... + v[7], one rounding per add, in that order: the
 * order the scalar kernels add their per-block terms in. */
Q42_AVX2_INLINE float x86_add_serial8(float sum, __m256 v)
{
	float t[8];
	_mm256_storeu_ps(t, v);
	for (int k = 0; k < 8; k++)
		sum += t[k];
	return sum;
}

Q42_AVX2_INLINE int32_t x86_hsum_i32(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
	return _mm_cvtsi128_si32(s);
}

/* The totals of eight vectors of int32 partial sums, in vector order. */
Q42_AVX2_INLINE __m256i x86_reduce8(const __m256i v[8])
{
	const __m256i h01 = _mm256_hadd_epi32(v[0], v[1]);
	const __m256i h23 = _mm256_hadd_epi32(v[2], v[3]);
	const __m256i h45 = _mm256_hadd_epi32(v[4], v[5]);
	const __m256i h67 = _mm256_hadd_epi32(v[6], v[7]);
	const __m256i lo = _mm256_hadd_epi32(h01, h23);
	const __m256i hi = _mm256_hadd_epi32(h45, h67);
	return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20),
				_mm256_permute2x128_si256(lo, hi, 0x31));
}

/* Eight int32 partial sums of w[i] * y[i] over 32 signed bytes. Exact as
 * long as y holds no -128 (every q42 activation quantizer keeps its
 * quants in -127..127; w may hold any value). */
Q42_AVX2_INLINE __m256i x86_dot_i8(__m256i w, __m256i y)
{
	const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(y, w));
	return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* Same for unsigned w (at most 63, so no int16 pair sum saturates). */
Q42_AVX2_INLINE __m256i x86_dot_u8(__m256i w, __m256i y)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(w, y), _mm256_set1_epi16(1));
}

/* Byte e is 0xFF where bit e of x is set. */
Q42_AVX2_INLINE __m256i x86_bits_to_bytes(uint32_t x)
{
	const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
					       0x0101010101010101, 0);
	const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x), shuf);
	const __m256i bm = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
	return _mm256_cmpeq_epi8(_mm256_and_si256(v, bm), bm);
}

/* 16 packed nibbles -> 32 bytes: low nibbles are elements 0..15, high
 * nibbles 16..31 (the q4_0/q4_1/q5 layout). */
Q42_AVX2_INLINE __m256i x86_nibbles32(const uint8_t *p)
{
	const __m128i q = _mm_loadu_si128((const __m128i *)p);
	const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(q),
						  _mm_srli_epi16(q, 4), 1);
	return _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
}

/*
 * The k-quant kernels of the scalar reference sum a super-block into 8
 * int32 lanes, lane = element index mod 8 ("class"), then scale each lane
 * in float. To get the same 8 integers, the products are paired so that a
 * pair never mixes classes: x86_class_pairs interleaves each 16-byte half
 * of w and y as elements (0,8),(1,9),...,(7,15), so maddubs leaves, per
 * 128-bit lane, word k = the two products of class k. x86_class_scale then
 * interleaves two such vectors A and B word by word and multiplies by
 * their sub-block scales (words of sc alternate A's and B's scale), giving
 * int32 class sums 0..3 (lo) and 4..7 (hi) in each lane.
 */
Q42_AVX2_INLINE __m256i x86_class_shuffle(void)
{
	return _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
				0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
}

/* u (unsigned, at most 63) times y, pairs within a class; y pre-shuffled. */
Q42_AVX2_INLINE __m256i x86_class_pairs(__m256i u, __m256i ys, __m256i shuf)
{
	return _mm256_maddubs_epi16(_mm256_shuffle_epi8(u, shuf), ys);
}

Q42_AVX2_INLINE void x86_class_scale(__m256i a, __m256i b, __m256i sc, __m256i *lo, __m256i *hi)
{
	*lo = _mm256_add_epi32(*lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), sc));
	*hi = _mm256_add_epi32(*hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), sc));
}

/* The 8 class totals, in class order, from the lo/hi accumulators. */
Q42_AVX2_INLINE __m256i x86_class_total(__m256i lo, __m256i hi)
{
	return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20),
				_mm256_permute2x128_si256(lo, hi, 0x31));
}

/* q4_K/q5_K packed 6-bit scales and mins -> sc[0..7], mn[0..7] (the same
 * values as q42_k4_scale_min, four at a time). */
static inline void x86_k4_scales(const uint8_t *q, uint8_t sc[8], uint8_t mn[8])
{
	const uint32_t u0 = q42_ld32(q), u1 = q42_ld32(q + 4), u2 = q42_ld32(q + 8);
	q42_st32(sc, u0 & 0x3F3F3F3Fu);
	q42_st32(mn, u1 & 0x3F3F3F3Fu);
	q42_st32(sc + 4, (u2 & 0x0F0F0F0Fu) | ((u0 >> 2) & 0x30303030u));
	q42_st32(mn + 4, ((u2 >> 4) & 0x0F0F0F0Fu) | ((u1 >> 2) & 0x30303030u));
}

/* The same for sixteen rows at once: q (twelve 16-byte vectors) holds
 * scale byte b of row r at 16 b + r (the R16 layout of q42_pack.h);
 * sc[g] and mn[g] get sub-block g's values of the sixteen rows. */
Q42_AVX2_INLINE void x86_k4_scales16(const uint8_t *q, __m128i sc[8], __m128i mn[8])
{
	const __m128i m63 = _mm_set1_epi8(63), m15 = _mm_set1_epi8(0x0F), m48 = _mm_set1_epi8(0x30);
	__m128i v[12];
	for (int b = 0; b < 12; b++)
		v[b] = _mm_loadu_si128((const __m128i *)(const void *)(q + 16 * b));
	for (int g = 0; g < 4; g++) {
		sc[g] = _mm_and_si128(v[g], m63);
		mn[g] = _mm_and_si128(v[g + 4], m63);
		/* (x >> 6) << 4 of each byte: x >> 2 masked to bits 4..5 */
		sc[g + 4] = _mm_or_si128(_mm_and_si128(v[g + 8], m15), _mm_and_si128(_mm_srli_epi16(v[g], 2), m48));
		mn[g + 4] = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(v[g + 8], 4), m15),
					 _mm_and_si128(_mm_srli_epi16(v[g + 4], 2), m48));
	}
}

/* q3_K's 16 6-bit scales, -32 applied (as q42_k3_scale). */
static inline void x86_k3_scales(const uint8_t *s, int8_t sc[16])
{
	const uint32_t a0 = q42_ld32(s), a1 = q42_ld32(s + 4), a2 = q42_ld32(s + 8);
	const uint32_t w[4] = {
		(a0 & 0x0F0F0F0Fu) | ((a2 & 0x03030303u) << 4),
		(a1 & 0x0F0F0F0Fu) | (((a2 >> 2) & 0x03030303u) << 4),
		((a0 >> 4) & 0x0F0F0F0Fu) | (((a2 >> 4) & 0x03030303u) << 4),
		((a1 >> 4) & 0x0F0F0F0Fu) | (((a2 >> 6) & 0x03030303u) << 4),
	};
	for (int j = 0; j < 16; j++)
		sc[j] = (int8_t)((int)((w[j / 4] >> (8 * (j % 4))) & 0xFFu) - 32);
}

/* Two int16 scales as one int32 word pair: a in the low half. */
static inline int32_t x86_pair16(int a, int b)
{
	return (int32_t)(((uint32_t)(uint16_t)(int16_t)a) | ((uint32_t)(uint16_t)(int16_t)b << 16));
}

/* sum over the 16 groups g of bsums[g] * mn[g / 2], exact. */
Q42_AVX2_INLINE int32_t x86_q8k_summ(const uint8_t *b, const uint8_t mn[8])
{
	const __m128i m = _mm_loadl_epi64((const __m128i *)mn);
	const __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m, m));
	const __m256i bs = _mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS));
	return x86_hsum_i32(_mm256_madd_epi16(bs, m16));
}

/* loops over a block's chunks, fully unrolled: their shift counts and
 * masks are then constants */
#define X86_UNROLL _Pragma("GCC unroll 16")

/* ---- Q2_K ---- */

/* The two integer sums of a q2_K super-block against Q8_K, exact, for
 * each 128-element half h: isum[h] = sum over its sub-blocks j of scale_j
 * * (values . y), mins[h] = sum of min_j * bsums_j. Every float order
 * llama.cpp or ggml uses starts from these (per half or per block). */
Q42_AVX2_INLINE void x86_q2k_sums(const uint8_t *a, const uint8_t *b, int32_t isum[2], int32_t mins[2])
{
	const __m256i m3 = _mm256_set1_epi8(3), m15 = _mm256_set1_epi8(0x0F);
	/* pshufb indexes: even bytes pick a scale (lane 0: sub-block 2k, lane
	 * 1: 2k+1 after adding 2k), odd bytes have bit 7 set and give zero */
	const __m256i sidx = _mm256_setr_epi8(0, -128, 0, -128, 0, -128, 0, -128, 0, -128, 0, -128, 0, -128, 0, -128,
					      1, -127, 1, -127, 1, -127, 1, -127, 1, -127, 1, -127, 1, -127, 1, -127);
	const __m128i sc8 = _mm_loadu_si128((const __m128i *)(a + Q2_K_SCALES));
	const __m256i sc = _mm256_and_si256(_mm256_broadcastsi128_si256(sc8), m15);
	const __m256i mn = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0x0F)));
	/* lane l: sub-blocks 2l and 2l + 1, so half h is 128-bit lane h */
	const __m256i ms = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS)), mn);
	mins[0] = x86_hsum_i32(_mm256_permute2x128_si256(ms, ms, 0x80));
	mins[1] = x86_hsum_i32(_mm256_permute2x128_si256(ms, ms, 0x81));
	X86_UNROLL
	for (int h = 0; h < 2; h++) {
		__m256i acc = _mm256_setzero_si256();
		const __m256i q = _mm256_loadu_si256((const __m256i *)(a + Q2_K_QS + 32 * h));
		X86_UNROLL
		for (int j = 0; j < 4; j++) {
			const int k = 4 * h + j; /* sub-blocks 2k (lane 0), 2k+1 (lane 1) */
			const __m256i v = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * j)), m3);
			const __m256i p = _mm256_maddubs_epi16(v, _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 32 * k)));
			const __m256i s = _mm256_shuffle_epi8(sc, _mm256_add_epi8(sidx, _mm256_set1_epi8((char)(2 * k))));
			acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, s));
		}
		isum[h] = x86_hsum_i32(acc);
	}
}

/* ---- ternary types (TQ1_0, TQ2_0 against Q8_K) ---- */

/* llama.cpp's x86 kernels for these types reduce each super-block to
 * eight int32 lanes before any float step, and the generic kernels sum
 * the same lanes, so both build on the helpers here. A super-block is 8
 * chunks of 32 elements; element 32c + p (chunk c, position p) goes to
 * lane p / 4 as trit * y (trit 0..2, the stored value + 1; a TQ2_0 field
 * may also be 3), and lane l then loses the activations 32l..32l+31 (Q8_K
 * bsums 2l and 2l + 1), which takes the + 1 off. Exact integers: at most
 * 8 x 2 x 3 x 127 + 32 x 127 in magnitude. */
Q42_AVX2_INLINE __m256i x86_tq_finish(__m256i pairs16, const uint8_t *b)
{
	const __m256i one = _mm256_set1_epi16(1);
	return _mm256_sub_epi32(_mm256_madd_epi16(pairs16, one),
				_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS)), one));
}

/* tq2_0: field j (bits 2j, 2j + 1) of qs byte 32h + m is element
 * 128h + 32j + m, i.e. chunk 4h + j. */
Q42_AVX2_INLINE __m256i x86_tq2_lanes(const uint8_t *a, const uint8_t *b)
{
	const __m256i m3 = _mm256_set1_epi8(3);
	__m256i acc = _mm256_setzero_si256();
	X86_UNROLL
	for (int h = 0; h < 2; h++) {
		const __m256i q = _mm256_loadu_si256((const __m256i *)(a + TQ2_0_QS + 32 * h));
		X86_UNROLL
		for (int j = 0; j < 4; j++) {
			const __m256i v = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * j)), m3);
			const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 128 * h + 32 * j));
			acc = _mm256_add_epi16(acc, _mm256_maddubs_epi16(v, y));
		}
	}
	return x86_tq_finish(acc, b);
}

/* Bytes times 3 modulo 256: trit k of a tq1_0 byte is the top "third" of
 * the byte times 3^k, so each next trit is one such step away. */
Q42_AVX2_INLINE __m256i x86_tq1_x3(__m256i q)
{
	return _mm256_add_epi8(q, _mm256_add_epi8(q, q));
}

/* The chunk vectors of a tq1_0 block (layout at q42_tq1_value), bytes
 * already multiplied by their 3^k: v[0..4] = qs 0..31 times 1, 3, .., 81;
 * v[5] = [qs 32..47 | times 3]; v[6] = [times 9 | times 27]; v[7] =
 * [times 81 | qh byte m times 3^k at 4k + m]. */
Q42_AVX2_INLINE void x86_tq1_chunks(const uint8_t *a, __m256i v[8])
{
	v[0] = _mm256_loadu_si256((const __m256i *)(a + TQ1_0_QS));
	X86_UNROLL
	for (int k = 1; k < 5; k++)
		v[k] = x86_tq1_x3(v[k - 1]);
	const __m128i r = _mm_loadu_si128((const __m128i *)(a + TQ1_0_QS + 32));
	v[5] = _mm256_inserti128_si256(_mm256_castsi128_si256(r),
				       _mm256_castsi256_si128(x86_tq1_x3(_mm256_castsi128_si256(r))), 1);
	v[6] = x86_tq1_x3(x86_tq1_x3(v[5]));
	const __m128i h = _mm_cvtepu8_epi16(_mm_set1_epi32((int)q42_ld32(a + TQ1_0_QH)));
	const __m128i lo8 = _mm_set1_epi16(0xFF);
	const __m128i hk = _mm_packus_epi16(
		_mm_and_si128(_mm_mullo_epi16(h, _mm_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3)), lo8),
		_mm_and_si128(_mm_mullo_epi16(h, _mm_setr_epi16(9, 9, 9, 9, 27, 27, 27, 27)), lo8));
	v[7] = _mm256_inserti128_si256(x86_tq1_x3(x86_tq1_x3(v[6])), hk, 1);
}

/* (q * 3) >> 8 of each byte, 0..2: [q >= 86] + [q >= 171]. */
Q42_AVX2_INLINE __m256i x86_tq1_top(__m256i q)
{
	const __m256i c1 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8(86)), q);
	const __m256i c2 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8((char)171)), q);
	return _mm256_sub_epi8(_mm256_sub_epi8(_mm256_setzero_si256(), c1), c2);
}

Q42_AVX2_INLINE __m256i x86_tq1_lanes(const uint8_t *a, const uint8_t *b)
{
	__m256i v[8], acc = _mm256_setzero_si256();
	x86_tq1_chunks(a, v);
	X86_UNROLL
	for (int c = 0; c < 8; c++)
		acc = _mm256_add_epi16(acc, _mm256_maddubs_epi16(
			x86_tq1_top(v[c]), _mm256_loadu_si256((const __m256i *)(b + Q8_K_QS + 32 * c))));
	return x86_tq_finish(acc, b);
}

/* ggml's generic TQ dot from those lanes: their total, then one float
 * term per super-block as the scalar code forms it. */
#define X86_TQ_DOT(NAME, TGT, LANES, BYTES, DOFF)                                                  \
	TGT void NAME(int64_t n, float *out, const void *w, const void *x)                         \
	{                                                                                          \
		const uint8_t *a = w, *b = x;                                                      \
		float sum = 0.0f;                                                                  \
		for (int64_t i = 0; i < n / Q42_QK_K; i++, a += BYTES, b += Q8_K_BYTES)            \
			sum += (float)x86_hsum_i32(LANES(a, b)) *                                  \
			       (q42_half_at(a + DOFF) * q42_ldf32(b + Q8_K_D));                    \
		*out = sum;                                                                        \
	}

/* The same lanes with AVX-512 (BW, VNNI): two chunks per 64-byte step,
 * whose sixteen dword sums fold onto eight. */
#define Q42_AVX512_INLINE Q42_TARGET_AVX512_VNNI_INLINE

Q42_AVX512_INLINE __m256i x86_tq_fold(__m512i acc, const uint8_t *b)
{
	const __m256i one = _mm256_set1_epi16(1);
	const __m256i s = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
	return _mm256_sub_epi32(s, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(b + Q8_K_BSUMS)), one));
}

/* Four 2-bit fields per byte in the TQ2_0 / Q2_K order (field j of byte
 * 32h + m is element 128h + 32j + m) as four 64-byte vectors, chunks 2j
 * and 2j + 1 in vector j (its activations: bytes 64j..64j + 63 of the
 * Q8_K quants). */
Q42_AVX512_INLINE void x86_fields2_512(const uint8_t *qs, __m512i t[4])
{
	const __m512i m3 = _mm512_set1_epi8(3);
	const __m512i c01 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
	const __m512i c23 = _mm512_add_epi16(c01, _mm512_set1_epi16(4));
	X86_UNROLL
	for (int h = 0; h < 2; h++) {
		const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(qs + 32 * h)));
		t[2 * h] = _mm512_and_si512(_mm512_srlv_epi16(q, c01), m3);
		t[2 * h + 1] = _mm512_and_si512(_mm512_srlv_epi16(q, c23), m3);
	}
}

Q42_AVX512_INLINE void x86_tq2_trits512(const uint8_t *a, __m512i t[4])
{
	x86_fields2_512(a + TQ2_0_QS, t);
}

/* The trits of one tq1_0 block likewise. */
Q42_AVX512_INLINE void x86_tq1_trits512(const uint8_t *a, __m512i t[4])
{
	__m256i v[8];
	x86_tq1_chunks(a, v);
	X86_UNROLL
	for (int j = 0; j < 4; j++) {
		const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(v[2 * j]), v[2 * j + 1], 1);
		const __mmask64 m1 = _mm512_cmpge_epu8_mask(q, _mm512_set1_epi8(86));
		const __mmask64 m2 = _mm512_cmpge_epu8_mask(q, _mm512_set1_epi8((char)171));
		t[j] = _mm512_mask_blend_epi8(m2, _mm512_maskz_mov_epi8(m1, _mm512_set1_epi8(1)), _mm512_set1_epi8(2));
	}
}

/* The eight lanes from a block's trits and its Q8_K activation block b. */
Q42_AVX512_INLINE __m256i x86_tq_lanes512(const __m512i t[4], const uint8_t *b)
{
	__m512i acc = _mm512_setzero_si512();
	X86_UNROLL
	for (int j = 0; j < 4; j++)
		acc = _mm512_dpbusd_epi32(acc, t[j], _mm512_loadu_si512((const void *)(b + Q8_K_QS + 64 * j)));
	return x86_tq_fold(acc, b);
}

Q42_AVX512_INLINE __m256i x86_tq2_lanes512(const uint8_t *a, const uint8_t *b)
{
	__m512i t[4];
	x86_tq2_trits512(a, t);
	return x86_tq_lanes512(t, b);
}

Q42_AVX512_INLINE __m256i x86_tq1_lanes512(const uint8_t *a, const uint8_t *b)
{
	__m512i t[4];
	x86_tq1_trits512(a, t);
	return x86_tq_lanes512(t, b);
}

#endif
#endif
