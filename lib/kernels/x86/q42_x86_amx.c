/* x86/q42_x86_amx.c -- the quantized q42_llamacpp row products on AMX-INT8 tiles,
 * for prompt processing: sixteen weight rows times sixteen tokens per tile
 * product, each weight block loaded once per tile of tokens.
 *
 * A tile product is configured with K = one block (32 bytes; 16 for q6_K's
 * sub-blocks), so every element of the C tile is exactly one block's
 * integer sum for one (row, token). The float steps then run as the scalar
 * kernels in llamacpp/q42_llamacpp.c spell them, one vector of sixteen tokens per
 * weight row: fma((float)sumi, d_w * d_x, acc) per block in block order.
 * Weights keep their GGUF layout: sixteen rows at a time are unpacked to
 * plain bytes in scratch memory (a contiguous tile source loads twice as
 * fast as 34-byte-strided Q8_0 blocks; Q4_0 / Q4_1 / Q8_0 repacked at load
 * into the R16 layout of q42_pack.h unpack from that), and the activations are
 * transposed into the tiles' pair-of-words layout once per call (each
 * thread packs its own copy). Scratch comes from aligned_alloc; without
 * it the call falls back to the AVX-512 kernel.
 */
#include <stdlib.h>
#include <string.h>
#include "kernels/x86/q42_x86_amx.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/x86/q42_x86_generic.h"
#include "kernels/q42_pack.h"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux's arch_prctl request for a dynamically enabled xfeature and the
 * feature number of tile data (asm/prctl.h, not in every libc). */
enum { REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };

static bool amx_ok;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

static void amx_probe(void)
{
	unsigned a, b, c, d, lo, hi;
	if (!q42_cpu_has_avx512() || !__get_cpuid(1, &a, &b, &c, &d) || (c & (1u << 27)) == 0)
		return;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || (d & (1u << 24)) == 0 ||
	    (d & (1u << 25)) == 0)
		return;
	/* XCR0 bits 17 and 18: the OS manages tile config and tile data */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)hi;
	if ((lo & (3u << 17)) != (3u << 17))
		return;
	amx_ok = syscall(SYS_arch_prctl, REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

bool q42_amx_usable(void)
{
	return pthread_once(&amx_once, amx_probe) == 0 && amx_ok;
}

#define AMX Q42_TARGET_AMX
#define AMX_INLINE Q42_TARGET_AMX_INLINE

/* GCC's tile intrinsics are asm statements without memory operands: this
 * orders plain stores and loads around them. */
#define BARRIER() __asm__ volatile("" ::: "memory")
/* Loops over the sixteen accumulators must be unrolled for them to stay
 * in registers (-O2 does not; clang reads the GCC spelling too). */
#define UNROLL _Pragma("GCC unroll 16")

/* Tile registers: two sets of sums and A/B operands, so one block's
 * product runs while the previous one is stored (macros: GCC's intrinsics
 * paste the number into the instruction). */
#define T_C0 0
#define T_A0 1
#define T_B0 2
#define T_C1 3
#define T_A1 4
#define T_B1 5

enum {
	TT = 16, /* tokens per tile (C columns) */
	TR = 16, /* weight rows per tile (C rows) */
	B32 = 8 * 64, /* bytes of a K = 32 B operand */
	B16 = 4 * 64, /* K = 16 */
	B64 = 16 * 64, /* K = 64 */
	C_BYTES = TR * TT * 4,
};

struct tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

/* Both tile sets for K = kbytes per product (32, or 16 for q6_K). */
AMX_INLINE void tiles_on(int kbytes)
{
	struct tilecfg c;
	memset(&c, 0, sizeof c);
	c.palette = 1;
	for (int i = 0; i < 2; i++) {
		c.rows[T_C0 + 3 * i] = TR, c.colsb[T_C0 + 3 * i] = TT * 4;
		c.rows[T_A0 + 3 * i] = TR, c.colsb[T_A0 + 3 * i] = (uint16_t)kbytes;
		c.rows[T_B0 + 3 * i] = (uint8_t)(kbytes / 4), c.colsb[T_B0 + 3 * i] = TT * 4;
	}
	BARRIER();
	_tile_loadconfig(&c);
}

/* An f16 field widened (exact, as q42_half_at), inline. */
AMX_INLINE float half(const uint8_t *p)
{
	return _cvtsh_ss(q42_ld16(p));
}

/* One 64-byte aligned block cut into count pieces of len[i] bytes
 * (out[i]); NULL when memory is short (the caller then takes the AVX-512
 * kernel, which gives the same bits). */
static void *scratch(int count, const size_t *len, void **out)
{
	size_t total = 0;
	for (int i = 0; i < count; i++)
		total += (len[i] + 63) & ~(size_t)63;
	uint8_t *p = aligned_alloc(64, total);
	if (p == NULL)
		return NULL;
	for (size_t i = 0, off = 0; i < (size_t)count; off += (len[i] + 63) & ~(size_t)63, i++)
		out[i] = p + off;
	return p;
}

/* The next group's sixteen rows into L2 while this one multiplies: its
 * first touch (the scale gather) otherwise waits on memory with nothing
 * else to do. Rows are contiguous, one span. */
static void prefetch_group(const uint8_t *w, uint64_t w_stride, int64_t r0, int64_t n_rows)
{
	const int64_t a = r0 + TR, b = a + TR < n_rows ? a + TR : n_rows;
	if (a >= b)
		return;
	const uint8_t *p = w + (uint64_t)a * w_stride, *end = w + (uint64_t)b * w_stride;
	for (; p < end; p += 64)
		_mm_prefetch((const char *)p, _MM_HINT_T1);
}

/* B operand: dword n of row k is bytes 4k..4k+3 of token n's k-th block
 * (K bytes at q + off in each token row); tokens past n_tok are zero. */
static void pack_b(const uint8_t *x, uint64_t x_stride, int64_t n_tok, int64_t tt, uint64_t off,
		   int kbytes, uint8_t *dst)
{
	for (int n = 0; n < TT; n++) {
		const int64_t t = tt * TT + n;
		for (int k = 0; k < kbytes / 4; k++) {
			if (t < n_tok)
				memcpy(dst + 64 * k + 4 * n, x + (uint64_t)t * x_stride + off + 4 * (uint64_t)k, 4);
			else
				memset(dst + 64 * k + 4 * n, 0, 4);
		}
	}
}

/* acc[m] holds row m for the tile's sixteen tokens. */
AMX_INLINE void store_tile(const __m512 acc[TR], float *y, uint64_t y_stride, int64_t tt,
			   int64_t n_tok)
{
	float v[TR][TT];
	UNROLL
	for (int m = 0; m < TR; m++)
		_mm512_storeu_ps(v[m], acc[m]);
	for (int n = 0; n < TT && tt * TT + n < n_tok; n++)
		UNROLL
		for (int m = 0; m < TR; m++)
			y[(uint64_t)(tt * TT + n) * y_stride + (uint64_t)m] = v[m][n];
}

/* ---- Q8_0 / Q4_0 -------------------------------------------------------- */

/* The float step of a block: llama.cpp's AMX fma(sumi, d_w * d_x, acc),
 * for q4_1 then fma(m_w, s_x, acc); the generic kernels' acc + sumi *
 * (d_w * d_x); or with q5_1's min, acc + ((d_w * d_x) * sumi + m_w * s_x). */
enum q32_step { S_FUSED, S_FUSED_MIN, S_GENERIC, S_GENERIC_MIN };

/* Sixteen rows whose block j's 32 signed quants are at a + j * a_step,
 * rows a_stride apart; dw[j * TR + m] the rows' scales (mw their mins for
 * S_GENERIC_MIN, bs the tokens' s as bd holds their d). */
AMX static void q32_group(enum q32_step step, const uint8_t *a, uint64_t a_stride, uint64_t a_step,
			  const float *dw, const float *mw, int64_t nb, const uint8_t *bq, const float *bd,
			  const float *bs, int64_t n_tok, int32_t *cbuf, float *y, uint64_t y_stride)
{
#define Q32_PROD(C, A, B, J)                                                          \
	do {                                                                          \
		_tile_zero(C);                                                        \
		_tile_loadd(A, a + (uint64_t)(J) * a_step, a_stride);                 \
		_tile_loadd(B, bq + (bt + (uint64_t)(J)) * B32, 64);                  \
		_tile_dpbssd(C, A, B);                                                \
	} while (0)
	for (int64_t tt = 0; tt * TT < n_tok; tt++) {
		const uint64_t bt = (uint64_t)(tt * nb);
		__m512 acc[TR];
		UNROLL
		for (int m = 0; m < TR; m++)
			acc[m] = _mm512_setzero_ps();
		/* block j's product is issued at step j - 1 and stored at step
		 * j into cbuf half j % 2; its float step runs at step j + 1 */
		Q32_PROD(T_C0, T_A0, T_B0, 0);
		for (int64_t j = 0; j <= nb; j++) {
			if (j < nb) {
				if (j % 2 == 0) {
					if (j + 1 < nb)
						Q32_PROD(T_C1, T_A1, T_B1, j + 1);
					_tile_stored(T_C0, cbuf, 64);
				} else {
					if (j + 1 < nb)
						Q32_PROD(T_C0, T_A0, T_B0, j + 1);
					_tile_stored(T_C1, cbuf + TR * TT, 64);
				}
			}
			BARRIER();
			if (j == 0)
				continue;
			const int32_t *c = cbuf + ((j - 1) % 2) * TR * TT;
			const __m512 dx = _mm512_loadu_ps(bd + (bt + (uint64_t)(j - 1)) * TT);
			const float *d = dw + (j - 1) * TR;
			if (step == S_FUSED) {
				UNROLL
				for (int m = 0; m < TR; m++)
					acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c + TT * m)),
								 _mm512_mul_ps(_mm512_set1_ps(d[m]), dx), acc[m]);
			} else if (step == S_FUSED_MIN) {
				const __m512 sx = _mm512_loadu_ps(bs + (bt + (uint64_t)(j - 1)) * TT);
				const float *mn = mw + (j - 1) * TR;
				UNROLL
				for (int m = 0; m < TR; m++) {
					acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c + TT * m)),
								 _mm512_mul_ps(_mm512_set1_ps(d[m]), dx), acc[m]);
					acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(mn[m]), sx, acc[m]);
				}
			} else if (step == S_GENERIC_MIN) {
				const __m512 sx = _mm512_loadu_ps(bs + (bt + (uint64_t)(j - 1)) * TT);
				const float *mn = mw + (j - 1) * TR;
				UNROLL
				for (int m = 0; m < TR; m++) {
					const __m512 s = _mm512_cvtepi32_ps(_mm512_load_si512(c + TT * m));
					const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(d[m]), dx);
					acc[m] = _mm512_add_ps(acc[m],
							       _mm512_add_ps(_mm512_mul_ps(dd, s),
									     _mm512_mul_ps(_mm512_set1_ps(mn[m]), sx)));
				}
			} else {
				UNROLL
				for (int m = 0; m < TR; m++)
					acc[m] = _mm512_add_ps(
						acc[m], _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c + TT * m)),
								      _mm512_mul_ps(_mm512_set1_ps(d[m]), dx)));
			}
		}
		store_tile(acc, y, y_stride, tt, n_tok);
	}
#undef Q32_PROD
}

/* Q8_0 / Q8_1 activations (blocks of xbytes, quants at qs): quants in B
 * layout per (token tile, block), scales per token, and Q8_1's s in bs
 * (NULL for Q8_0). Sixteen tokens' dwords are one gather each (the scalar
 * copy was as costly as the tile products themselves, and the engine
 * packs once per call of 64 rows); tokens past n_tok are masked to zero.
 * Offsets are int32 lanes, so rows 16 * x_stride apart or more take the
 * scalar copy. */
AMX static void pack_q8(const uint8_t *x, uint64_t x_stride, int64_t n_tok, int64_t nb, int64_t ntt,
			uint64_t xbytes, int qs, uint8_t *bq, float *bd, float *bs)
{
	if (x_stride > (uint64_t)INT32_MAX / TT) {
		for (int64_t tt = 0; tt < ntt; tt++)
			for (int64_t j = 0; j < nb; j++) {
				const uint64_t b = (uint64_t)(tt * nb + j);
				pack_b(x, x_stride, n_tok, tt, (uint64_t)j * xbytes + (uint64_t)qs, 32,
				       bq + b * B32);
				for (int n = 0; n < TT; n++) {
					const int64_t t = tt * TT + n;
					const uint8_t *blk = x + (uint64_t)t * x_stride + (uint64_t)j * xbytes;
					bd[b * TT + (uint64_t)n] = t < n_tok ? half(blk) : 0.0f;
					if (bs != NULL)
						bs[b * TT + (uint64_t)n] = t < n_tok ? half(blk + Q8_1_S) : 0.0f;
				}
			}
		return;
	}
	const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
								 13, 14, 15),
					       _mm512_set1_epi32((int)x_stride));
	const __m512i zero = _mm512_setzero_si512();
	for (int64_t tt = 0; tt < ntt; tt++) {
		const int64_t left = n_tok - tt * TT;
		const __mmask16 live = (__mmask16)(left >= TT ? 0xFFFFu : (1u << left) - 1u);
		const uint8_t *xt = x + (uint64_t)(tt * TT) * x_stride;
		for (int64_t j = 0; j < nb; j++) {
			const uint64_t b = (uint64_t)(tt * nb + j);
			const uint8_t *blk = xt + (uint64_t)j * xbytes;
			UNROLL
			for (int k = 0; k < 8; k++)
				_mm512_store_si512(bq + b * B32 + 64 * (uint64_t)k,
						   _mm512_mask_i32gather_epi32(zero, live, idx,
									       blk + qs + 4 * k, 1));
			/* the dword at the block's start: d, then two quants (Q8_0)
			 * or s (Q8_1) */
			const __m512i d = _mm512_mask_i32gather_epi32(zero, live, idx, blk, 1);
			_mm512_storeu_ps(bd + b * TT, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
			if (bs != NULL)
				_mm512_storeu_ps(bs + b * TT, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(
								      _mm512_srli_epi32(d, 16))));
		}
	}
}

enum q32_kind {
	K_LLAMACPP_Q8_0,
	K_LLAMACPP_Q4_0,
	K_GENERIC_Q8_0,
	K_GENERIC_Q5_0,
	K_GENERIC_Q5_1,
	K_LLAMACPP_Q4_1,
	K_LLAMACPP_IQ4_NL,
};

/* Q4_0 / Q5_0 / Q5_1 / Q4_1 rows as signed bytes (quant - 8 / - 16 / - 0
 * / - 0; IQ4_NL: the grid value), element order, rows n apart. */
AMX_INLINE void unpack_q32(enum q32_kind kind, const uint8_t *wr, uint64_t w_stride, int64_t nb,
			   int64_t n, int8_t *dst)
{
	const bool q8 = kind == K_LLAMACPP_Q8_0 || kind == K_GENERIC_Q8_0, q41 = kind == K_LLAMACPP_Q4_1;
	const bool q51 = kind == K_GENERIC_Q5_1, q5 = q51 || kind == K_GENERIC_Q5_0, nl = kind == K_LLAMACPP_IQ4_NL;
	const uint64_t bytes = q8    ? Q8_0_BYTES
			       : q51 ? Q5_1_BYTES
			       : q5  ? Q5_0_BYTES
			       : q41 ? Q4_1_BYTES
				     : Q4_0_BYTES;
	const int qh = q51 ? Q5_1_QH : Q5_0_QH, qs = q51 ? Q5_1_QS : Q5_0_QS;
	const __m256i off = _mm256_set1_epi8(q8 || q51 || q41 || nl ? 0 : q5 ? 16 : 8);
	const __m256i bit4 = _mm256_set1_epi8(0x10);
	const __m256i grid = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q42_iq4nl_values));
	for (int m = 0; m < TR; m++)
		for (int64_t j = 0; j < nb; j++) {
			const uint8_t *b = wr + (uint64_t)m * w_stride + (uint64_t)j * bytes;
			__m256i v;
			if (q8)
				v = _mm256_loadu_si256((const __m256i *)(b + Q8_0_QS));
			else if (q5)
				v = _mm256_or_si256(x86_nibbles32(b + qs),
						    _mm256_and_si256(x86_bits_to_bytes(q42_ld32(b + qh)), bit4));
			else if (nl)
				v = _mm256_shuffle_epi8(grid, x86_nibbles32(b + IQ4_NL_QS));
			else
				v = x86_nibbles32(b + (q41 ? Q4_1_QS : Q4_0_QS));
			_mm256_storeu_si256((__m256i *)(dst + m * n + j * Q42_QK), _mm256_sub_epi8(v, off));
		}
}

/* Eight registers of sixteen rows' dwords (v[k]: dword k of every row,
 * row r in lane r) as the rows' 32 bytes at dst + r * n: two interleave
 * steps within 128-bit lanes (lane i then holds rows 4i + p), written 16
 * bytes at a time. */
#define R16_ROW_STORE(P, Q, I, p, dst, n)                                                            \
	do {                                                                                          \
		uint8_t *o_ = (uint8_t *)(dst) + (uint64_t)(4 * (I) + (p)) * (uint64_t)(n);          \
		_mm_storeu_si128((__m128i *)(void *)o_, _mm512_extracti32x4_epi32(P, I));            \
		_mm_storeu_si128((__m128i *)(void *)(o_ + 16), _mm512_extracti32x4_epi32(Q, I));     \
	} while (0)

AMX_INLINE void r16_rows_store(const __m512i v[8], void *dst, int64_t n)
{
	__m512i a[4], b[4], P[4], Q[4];
	for (int h = 0; h < 4; h++) {
		a[h] = _mm512_unpacklo_epi32(v[2 * h], v[2 * h + 1]);
		b[h] = _mm512_unpackhi_epi32(v[2 * h], v[2 * h + 1]);
	}
	/* P[p] lane i: row 4i + p, dwords 0..3; Q[p]: dwords 4..7 */
	P[0] = _mm512_unpacklo_epi64(a[0], a[1]);
	P[1] = _mm512_unpackhi_epi64(a[0], a[1]);
	P[2] = _mm512_unpacklo_epi64(b[0], b[1]);
	P[3] = _mm512_unpackhi_epi64(b[0], b[1]);
	Q[0] = _mm512_unpacklo_epi64(a[2], a[3]);
	Q[1] = _mm512_unpackhi_epi64(a[2], a[3]);
	Q[2] = _mm512_unpacklo_epi64(b[2], b[3]);
	Q[3] = _mm512_unpackhi_epi64(b[2], b[3]);
	for (int p = 0; p < 4; p++) {
		R16_ROW_STORE(P[p], Q[p], 0, p, dst, n);
		R16_ROW_STORE(P[p], Q[p], 1, p, dst, n);
		R16_ROW_STORE(P[p], Q[p], 2, p, dst, n);
		R16_ROW_STORE(P[p], Q[p], 3, p, dst, n);
	}
}
#undef R16_ROW_STORE

/* A group of sixteen Q4_0 / Q4_1 rows in the R16 layout (q42_pack.h) as
 * unpack_q32 leaves the file's: quants as signed bytes (Q4_0 less 8),
 * rows n apart, and the scales (Q4_1: mins too) as dw / mw. The eight
 * nibble registers of a block (dword k of every row: elements 4k..4k+3)
 * are transposed to rows by r16_rows_store. */
AMX_INLINE void unpack_r16(bool q41, const uint8_t *g, int64_t nb, int64_t n, int8_t *dst, float *dw, float *mw)
{
	const q42_r16_shape sh = q42_r16_shape_of(0, 0, q41);
	const __m512i m15 = _mm512_set1_epi8(0x0F), off = _mm512_set1_epi8(q41 ? 0 : 8);
	for (int64_t j = 0; j < nb; j++) {
		const uint8_t *qs = g + q42_r16_at(sh, nb, j, -1);
		_mm512_storeu_ps(dw + j * TR, _mm512_cvtph_ps(_mm256_loadu_si256(
						      (const __m256i *)(const void *)(g + q42_r16_at(sh, nb, j, Q42_R16_F_D)))));
		if (q41)
			_mm512_storeu_ps(mw + j * TR, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(
							      g + q42_r16_at(sh, nb, j, Q42_R16_F_MN)))));
		__m512i v[8];
		for (int l = 0; l < 4; l++) {
			const __m512i q = _mm512_loadu_si512((const void *)(qs + 64 * l));
			v[l] = _mm512_sub_epi8(_mm512_and_si512(q, m15), off);
			v[l + 4] = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(q, 4), m15), off);
		}
		r16_rows_store(v, dst + 32 * j, n);
	}
}

AMX static void rows_q32(Q42_LLAMACPP_ROWS_ARGS, enum q32_kind kind, bool r16)
{
	static const q42_llamacpp_rows_fn simd_of[] = {
		q42_llamacpp_rows_q8_0_avx512,  q42_llamacpp_rows_q4_0_avx512,
		q42_generic_rows_q8_0_avx512, q42_generic_rows_q5_0_avx512,
		q42_generic_rows_q5_1_avx512, q42_llamacpp_rows_q4_1_avx512, q42_llamacpp_rows_iq4_nl_avx512};
	const q42_llamacpp_rows_fn simd = !r16 ? simd_of[kind]
					: kind == K_LLAMACPP_Q4_0 ? q42_llamacpp_rows_q4_0_r16_avx512
								 : q42_llamacpp_rows_q4_1_r16_avx512;
	/* q51: the types with a min (Q5_1, Q4_1), against Q8_1 */
	const bool q51 = kind == K_GENERIC_Q5_1 || kind == K_LLAMACPP_Q4_1;
	const bool q8 = kind == K_LLAMACPP_Q8_0 || kind == K_GENERIC_Q8_0;
	const int64_t nb = n / Q42_QK, ntt = (n_tok + TT - 1) / TT, full = n_rows - n_rows % TR;
	const uint64_t bytes = kind == K_LLAMACPP_Q4_0 || kind == K_LLAMACPP_IQ4_NL ? Q4_0_BYTES
			       : kind == K_GENERIC_Q5_0 ? Q5_0_BYTES
			       : kind == K_LLAMACPP_Q4_1 ? Q4_1_BYTES
			       : q51			 ? Q5_1_BYTES
							 : Q8_0_BYTES;
	const size_t act = (size_t)(ntt * nb) * TT * sizeof(float), rs = (size_t)nb * TR * sizeof(float);
	/* cbuf, bq, bd, dw, unp; Q5_1: bs, mw */
	const size_t len[7] = {2 * C_BYTES, (size_t)(ntt * nb) * B32, act, rs, q8 ? 0 : (size_t)(TR * n),
			       q51 ? act : 0, q51 ? rs : 0};
	void *pc[7];
	void *mem = n_tok >= Q42_AMX_MIN_TOK && full > 0 ? scratch(7, len, pc) : NULL;
	if (mem == NULL) {
		simd(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
		return;
	}
	int32_t *cbuf = pc[0];
	uint8_t *bq = pc[1];
	float *bd = pc[2], *dw = pc[3], *bs = q51 ? pc[5] : NULL, *mw = q51 ? pc[6] : NULL;
	int8_t *unp = pc[4];
	const enum q32_step step = kind == K_LLAMACPP_Q8_0 || kind == K_LLAMACPP_Q4_0 || kind == K_LLAMACPP_IQ4_NL ? S_FUSED
				   : kind == K_LLAMACPP_Q4_1			  ? S_FUSED_MIN
				   : q51					  ? S_GENERIC_MIN
										  : S_GENERIC;
	const __m512i w_idx = _mm512_mullo_epi32(
		_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
		_mm512_set1_epi32(w_stride > (uint64_t)INT32_MAX / TR ? 0 : (int)w_stride));
	pack_q8(x, x_stride, n_tok, nb, ntt, q51 ? Q8_1_BYTES : Q8_0_BYTES, q51 ? Q8_1_QS : Q8_0_QS, bq,
		bd, bs);
	tiles_on(32);
	for (int64_t r0 = 0; r0 < full; r0 += TR) {
		const uint8_t *wr = (const uint8_t *)w + (uint64_t)r0 * w_stride;
		if (r16) {
			unpack_r16(q51, wr, nb, n, unp, dw, mw);
		} else if (w_stride > (uint64_t)INT32_MAX / TR) {
			for (int m = 0; m < TR; m++)
				for (int64_t j = 0; j < nb; j++) {
					const uint8_t *b = wr + (uint64_t)m * w_stride + (uint64_t)j * bytes;
					dw[j * TR + m] = half(b);
					if (q51)
						mw[j * TR + m] = half(b + Q5_1_M);
				}
		} else {
			/* sixteen rows' d (each block's first dword; Q5_1's m is
			 * its upper half) per gather */
			for (int64_t j = 0; j < nb; j++) {
				const __m512i g = _mm512_i32gather_epi32(w_idx, wr + (uint64_t)j * bytes, 1);
				_mm512_storeu_ps(dw + j * TR, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(g)));
				if (q51)
					_mm512_storeu_ps(mw + j * TR, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(
									      _mm512_srli_epi32(g, 16))));
			}
		}
		prefetch_group(w, w_stride, r0, full);
		if (q8) {
			/* Q8_0's quants are signed bytes already: the tiles load
			 * them from the blocks in place */
			q32_group(step, wr + Q8_0_QS, w_stride, Q8_0_BYTES, dw, mw, nb, bq, bd, bs, n_tok, cbuf,
				  y + r0, y_stride);
			continue;
		}
		if (!r16)
			unpack_q32(kind, wr, w_stride, nb, n, unp);
		BARRIER();
		q32_group(step, (const uint8_t *)unp, (uint64_t)n, Q42_QK, dw, mw, nb, bq, bd, bs, n_tok,
			  cbuf, y + r0, y_stride);
	}
	_tile_release();
	free(mem);
	if (full < n_rows)
		simd(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride, n_tok, x,
		     x_stride, y + full, y_stride);
}

void q42_llamacpp_rows_q8_0_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_LLAMACPP_Q8_0, false);
}

void q42_llamacpp_rows_q4_0_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_LLAMACPP_Q4_0, false);
}

void q42_generic_rows_q8_0_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_GENERIC_Q8_0, false);
}

void q42_generic_rows_q5_0_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_GENERIC_Q5_0, false);
}

void q42_generic_rows_q5_1_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_GENERIC_Q5_1, false);
}

void q42_llamacpp_rows_q4_1_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_LLAMACPP_Q4_1, false);
}

void q42_llamacpp_rows_q4_0_r16_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_LLAMACPP_Q4_0, true);
}

void q42_llamacpp_rows_q4_1_r16_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_LLAMACPP_Q4_1, true);
}

/* Q8_0 in the R16 layout: a block's quants of a group are a B operand as
 * they lie (vector l, row r: elements 4l..4l+3, the tiles' pairs of
 * words), so the tiles take the tokens as A, sixteen rows of one block
 * each (copied once per call, rows past n_tok zero) and the weights
 * straight from the packed copy: C row t holds token t's sixteen sums, and
 * the float step runs per token over sixteen weight rows,
 * fma(sumi, d_w * d_x, acc) per block in block order as in q32_group. */
AMX static void q8_r16_group(const uint8_t *g, int64_t nb, const uint8_t *aq, const float *ad, int64_t n_tok,
			     int32_t *cbuf, float *y, uint64_t y_stride)
{
	const q42_r16_shape sh = q42_r16_shape_of(1, 0, 0);
#define R16_PROD(C, A, B, J)                                                    \
	do {                                                                    \
		_tile_zero(C);                                                  \
		_tile_loadd(A, aq + (bt + (uint64_t)(J)) * B32, 32);            \
		_tile_loadd(B, g + q42_r16_at(sh, nb, J, -1), 64);              \
		_tile_dpbssd(C, A, B);                                          \
	} while (0)
	for (int64_t tt = 0; tt * TT < n_tok; tt++) {
		const uint64_t bt = (uint64_t)(tt * nb);
		__m512 acc[TT];
		UNROLL
		for (int m = 0; m < TT; m++)
			acc[m] = _mm512_setzero_ps();
		R16_PROD(T_C0, T_A0, T_B0, 0);
		for (int64_t j = 0; j <= nb; j++) {
			if (j < nb) {
				if (j % 2 == 0) {
					if (j + 1 < nb)
						R16_PROD(T_C1, T_A1, T_B1, j + 1);
					_tile_stored(T_C0, cbuf, 64);
				} else {
					if (j + 1 < nb)
						R16_PROD(T_C0, T_A0, T_B0, j + 1);
					_tile_stored(T_C1, cbuf + TR * TT, 64);
				}
			}
			BARRIER();
			if (j == 0)
				continue;
			const int32_t *c = cbuf + ((j - 1) % 2) * TR * TT;
			const float *dx = ad + (bt + (uint64_t)(j - 1)) * TT;
			const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(
				(const __m256i *)(const void *)(g + q42_r16_at(sh, nb, j - 1, Q42_R16_F_D))));
			UNROLL
			for (int m = 0; m < TT; m++)
				acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c + TR * m)),
							 _mm512_mul_ps(dw, _mm512_set1_ps(dx[m])), acc[m]);
		}
		for (int m = 0; m < TT && tt * TT + m < n_tok; m++)
			_mm512_storeu_ps(y + (uint64_t)(tt * TT + m) * y_stride, acc[m]);
	}
#undef R16_PROD
}

AMX void q42_llamacpp_rows_q8_0_r16_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t nb = n / Q42_QK, ntt = (n_tok + TT - 1) / TT, full = n_rows - n_rows % TR;
	const size_t len[3] = {2 * C_BYTES, (size_t)(ntt * nb) * B32, (size_t)(ntt * nb) * TT * sizeof(float)};
	void *pc[3];
	void *mem = n_tok >= Q42_AMX_MIN_TOK && full > 0 ? scratch(3, len, pc) : NULL;
	if (mem == NULL) {
		q42_llamacpp_rows_q8_0_r16_avx512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
		return;
	}
	int32_t *cbuf = pc[0];
	uint8_t *aq = pc[1];
	float *ad = pc[2];
	/* A operands: token t of tile tt, block j at row t of aq[tt * nb + j] */
	for (int64_t tt = 0; tt < ntt; tt++)
		for (int64_t j = 0; j < nb; j++)
			for (int m = 0; m < TT; m++) {
				const int64_t t = tt * TT + m;
				const uint8_t *blk = (const uint8_t *)x + (uint64_t)t * x_stride + (uint64_t)j * Q8_0_BYTES;
				uint8_t *o = aq + (uint64_t)(tt * nb + j) * B32 + 32 * (uint64_t)m;
				if (t < n_tok)
					memcpy(o, blk + Q8_0_QS, 32);
				else
					memset(o, 0, 32);
				ad[(tt * nb + j) * TT + m] = t < n_tok ? half(blk) : 0.0f;
			}
	tiles_on(32);
	for (int64_t r0 = 0; r0 < full; r0 += TR) {
		prefetch_group(w, w_stride, r0, full);
		q8_r16_group((const uint8_t *)w + (uint64_t)r0 * w_stride, nb, aq, ad, n_tok, cbuf, y + r0, y_stride);
	}
	_tile_release();
	free(mem);
	if (full < n_rows)
		q42_llamacpp_rows_q8_0_avx512(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride,
					    n_tok, x, x_stride, y + full, y_stride);
}

/* IQ4_NL (the repacked order is Q4_0's: one fma per block) */
void q42_llamacpp_rows_iq4_nl_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_q32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, K_LLAMACPP_IQ4_NL, false);
}

/* ---- Q4_K / Q6_K against Q8_K ------------------------------------------ */

/* Q8_K activations: sub-blocks of K bytes in B layout per (token tile,
 * super-block, sub-block), d per token; with sums, q4_K's pairs of 32-element
 * sums (as int16, the scalar kernel's wrap) per (tile, super-block, pair). */
AMX static void pack_q8_k(const uint8_t *x, uint64_t x_stride, int64_t n_tok, int64_t nsb,
		      int64_t ntt, int kbytes, uint8_t *bq, float *bd, int32_t *bs)
{
	const int nsub = Q42_QK_K / kbytes;
	for (int64_t tt = 0; tt < ntt; tt++)
		for (int64_t sb = 0; sb < nsb; sb++) {
			const uint64_t b = (uint64_t)(tt * nsb + sb);
			for (int s = 0; s < nsub; s++)
				pack_b(x, x_stride, n_tok, tt,
				       (uint64_t)sb * Q8_K_BYTES + Q8_K_QS + (uint64_t)(s * kbytes), kbytes,
				       bq + (b * (uint64_t)nsub + (uint64_t)s) * (uint64_t)(kbytes / 4) * 64);
			for (int n = 0; n < TT; n++) {
				const int64_t t = tt * TT + n;
				const uint8_t *xb = x + (uint64_t)t * x_stride + (uint64_t)sb * Q8_K_BYTES;
				bd[b * TT + (uint64_t)n] = t < n_tok ? q42_ldf32(xb + Q8_K_D) : 0.0f;
				if (bs == NULL)
					continue;
				for (int p = 0; p < 4; p++) {
					uint32_t v = 0;
					if (t < n_tok) {
						const uint8_t *g = xb + Q8_K_BSUMS + 8 * p;
						const uint16_t lo = (uint16_t)((int16_t)q42_ld16(g) + (int16_t)q42_ld16(g + 2));
						const uint16_t hi = (uint16_t)((int16_t)q42_ld16(g + 4) + (int16_t)q42_ld16(g + 6));
						v = lo | (uint32_t)hi << 16;
					}
					bs[(b * 4 + (uint64_t)p) * TT + (uint64_t)n] = (int32_t)v;
				}
			}
		}
}

/* Sixteen q4_K rows: nibbles as bytes in element order (rows n apart),
 * scales sc[(sb * TR + m) * 8 + g], mins as int16 pairs
 * mn[(sb * TR + m) * 4 + p], d and dmin per (super-block, row). */
/* q4_K rows (or q5_K: q5 true, the fifth bit of element e is bit e / 32
 * of qh byte e % 32) as plain unsigned quants. */
AMX_INLINE void unpack_q4_k(bool q5, const uint8_t *wr, uint64_t w_stride, int64_t nsb, int64_t n,
			    uint8_t *dst, int32_t *sc, int32_t *mn, float *dw, float *dm)
{
	const __m256i m15 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
	const uint64_t bytes = q5 ? Q5_K_BYTES : Q4_K_BYTES;
	const int qs = q5 ? Q5_K_QS : Q4_K_QS;
	for (int m = 0; m < TR; m++)
		for (int64_t sb = 0; sb < nsb; sb++) {
			const uint8_t *a = wr + (uint64_t)m * w_stride + (uint64_t)sb * bytes;
			uint8_t *o = dst + m * n + sb * Q42_QK_K;
			uint8_t s8[8], m8[8];
			__m256i hb = q5 ? _mm256_loadu_si256((const __m256i *)(a + Q5_K_QH))
					: _mm256_setzero_si256();
			for (int c = 0; c < 4; c++) {
				const __m256i q = _mm256_loadu_si256((const __m256i *)(a + qs + 32 * c));
				/* bits 2c and 2c + 1 of the qh bytes, as 16 */
				const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(hb, one), 4);
				const __m256i h1 = _mm256_slli_epi16(
					_mm256_and_si256(_mm256_srli_epi16(hb, 1), one), 4);
				hb = _mm256_srli_epi16(hb, 2);
				_mm256_storeu_si256((__m256i *)(o + 64 * c),
						    _mm256_or_si256(_mm256_and_si256(q, m15), h0));
				_mm256_storeu_si256((__m256i *)(o + 64 * c + 32),
						    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m15),
								    h1));
			}
			x86_k4_scales(a + Q4_K_SCALES, s8, m8);
			const uint64_t i = (uint64_t)(sb * TR + m);
			for (int g = 0; g < 8; g++)
				sc[i * 8 + (uint64_t)g] = s8[g];
			for (int p = 0; p < 4; p++)
				mn[i * 4 + (uint64_t)p] = (int32_t)(m8[2 * p] | (uint32_t)m8[2 * p + 1] << 16);
			dw[i] = half(a + Q4_K_D);
			dm[i] = half(a + Q4_K_DMIN);
		}
}

/* Sixteen registers of sixteen rows' dwords (r[k]: dword k of every row)
 * as each row's 64 bytes at dst + m * n: a 16 x 16 dword transpose, pairs
 * of dwords, then of qwords, within 128-bit lanes, then the lanes, one
 * store per row. */
AMX_INLINE void r16_rows_store16(const __m512i r[16], uint8_t *dst, int64_t n)
{
	__m512i t[16], u[16];
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	/* u[4 i + c], lane j: dword 4 j + c of rows... rows 4 i .. 4 i + 3 */
	for (int i = 0; i < 4; i++) {
		u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
		u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
	}
	for (int c = 0; c < 4; c++) {
		const __m512i b0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), b1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
		const __m512i b2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
		const __m512i b3 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
		_mm512_storeu_si512(dst + (uint64_t)c * (uint64_t)n, _mm512_shuffle_i32x4(b0, b2, 0x88));
		_mm512_storeu_si512(dst + (uint64_t)(4 + c) * (uint64_t)n, _mm512_shuffle_i32x4(b0, b2, 0xDD));
		_mm512_storeu_si512(dst + (uint64_t)(8 + c) * (uint64_t)n, _mm512_shuffle_i32x4(b1, b3, 0x88));
		_mm512_storeu_si512(dst + (uint64_t)(12 + c) * (uint64_t)n, _mm512_shuffle_i32x4(b1, b3, 0xDD));
	}
}

/* Sixteen q4_K rows in the R16 layout (q42_pack.h) as unpack_q4_k leaves
 * the file's: each 32-byte chunk's eight quant vectors give a sub-block
 * pair, low nibbles then high, which is each row's 64 bytes there. */
AMX_INLINE void unpack_q4_k_r16(const uint8_t *g, int64_t nsb, int64_t n, uint8_t *dst, int32_t *sc, int32_t *mn,
				float *dw, float *dm)
{
	const __m512i m15 = _mm512_set1_epi8(0x0F);
	for (int64_t sb = 0; sb < nsb; sb++) {
		const uint8_t *blk = g + (uint64_t)sb * Q42_R16_K4_BLOCK;
		for (int h = 0; h < 4; h++) {
			__m512i v[16];
			for (int l = 0; l < 8; l++) {
				const __m512i q = _mm512_loadu_si512((const void *)(blk + 64 * (8 * h + l)));
				v[l] = _mm512_and_si512(q, m15);
				v[8 + l] = _mm512_and_si512(_mm512_srli_epi16(q, 4), m15);
			}
			r16_rows_store16(v, dst + sb * Q42_QK_K + 64 * h, n);
		}
		/* the sixteen rows' scales and mins decoded side by side, then
		 * scattered to the rows' entries */
		__m128i s16[8], m16[8];
		x86_k4_scales16(blk + Q42_R16_K4_SC, s16, m16);
		const __m512i row = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
		for (int k = 0; k < 8; k++)
			_mm512_i32scatter_epi32(sc + sb * TR * 8 + k, _mm512_slli_epi32(row, 3),
						_mm512_cvtepu8_epi32(s16[k]), 4);
		for (int p = 0; p < 4; p++)
			_mm512_i32scatter_epi32(mn + sb * TR * 4 + p, _mm512_slli_epi32(row, 2),
						_mm512_or_si512(_mm512_cvtepu8_epi32(m16[2 * p]),
								_mm512_slli_epi32(_mm512_cvtepu8_epi32(m16[2 * p + 1]), 16)),
						4);
		_mm512_storeu_ps(dw + sb * TR, _mm512_cvtph_ps(_mm256_loadu_si256(
						       (const __m256i *)(const void *)(blk + Q42_R16_K4_D))));
		_mm512_storeu_ps(dm + sb * TR, _mm512_cvtph_ps(_mm256_loadu_si256(
						       (const __m256i *)(const void *)(blk + Q42_R16_K4_DM))));
	}
}

/* Sixteen q6_K rows: quants - 32 as signed bytes in element order,
 * scales sc[(sb * TR + m) * 16 + s], d per (super-block, row). */
AMX_INLINE void unpack_q6_k(const uint8_t *wr, uint64_t w_stride, int64_t nsb, int64_t n,
			    int8_t *dst, int32_t *sc, float *dw)
{
	const __m256i m15 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
	const __m256i off = _mm256_set1_epi8(32);
	for (int m = 0; m < TR; m++)
		for (int64_t sb = 0; sb < nsb; sb++) {
			const uint8_t *a = wr + (uint64_t)m * w_stride + (uint64_t)sb * Q6_K_BYTES;
			int8_t *o = dst + m * n + sb * Q42_QK_K;
			for (int h = 0; h < 2; h++) {
				const __m256i qh = _mm256_loadu_si256((const __m256i *)(a + Q6_K_QH + 32 * h));
				for (int q = 0; q < 4; q++) {
					const __m256i l = _mm256_loadu_si256(
						(const __m256i *)(a + Q6_K_QL + 64 * h + 32 * (q % 2)));
					const __m256i lo4 = q < 2 ? _mm256_and_si256(l, m15)
								  : _mm256_and_si256(_mm256_srli_epi16(l, 4), m15);
					const __m256i hi2 = _mm256_and_si256(
						_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * q)), m3);
					_mm256_storeu_si256(
						(__m256i *)(o + 128 * h + 32 * q),
						_mm256_sub_epi8(_mm256_or_si256(lo4, _mm256_slli_epi16(hi2, 4)), off));
				}
			}
			const uint64_t i = (uint64_t)(sb * TR + m);
			for (int s = 0; s < 16; s++)
				sc[i * 16 + (uint64_t)s] = (int8_t)a[Q6_K_SCALES + s];
			dw[i] = half(a + Q6_K_D);
		}
}

/* Sixteen IQ4_XS rows as signed bytes (the grid values) in element
 * order, with each sub-block's scale (6 bits less 32) and d. */
AMX_INLINE void unpack_iq4_xs(const uint8_t *wr, uint64_t w_stride, int64_t nsb, int64_t n, int8_t *dst,
			      int32_t *sc, float *dw)
{
	const __m256i m15 = _mm256_set1_epi8(0x0F);
	const __m256i grid = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q42_iq4nl_values));
	for (int m = 0; m < TR; m++)
		for (int64_t sb = 0; sb < nsb; sb++) {
			const uint8_t *a = wr + (uint64_t)m * w_stride + (uint64_t)sb * IQ4_XS_BYTES;
			int8_t *o = dst + m * n + sb * Q42_QK_K;
			for (int c = 0; c < 4; c++) {
				/* bytes of sub-blocks 2c | 2c + 1: low nibbles are
				 * each sub-block's first 16 elements */
				const __m256i q = _mm256_loadu_si256((const __m256i *)(a + IQ4_XS_QS + 32 * c));
				const __m256i lo = _mm256_shuffle_epi8(grid, _mm256_and_si256(q, m15));
				const __m256i hi = _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(q, 4), m15));
				_mm256_storeu_si256((__m256i *)(o + 64 * c), _mm256_permute2x128_si256(lo, hi, 0x20));
				_mm256_storeu_si256((__m256i *)(o + 64 * c + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
			}
			const uint64_t i = (uint64_t)(sb * TR + m);
			for (int s = 0; s < 8; s++)
				sc[i * 8 + (uint64_t)s] = q42_iq4xs_scale(a, s);
			dw[i] = half(a + IQ4_XS_D);
		}
}

/* isum = sum over sub-blocks of scale * (C tile of that sub-block), row m
 * of every C tile in cbuf (sixteen tokens per row). */
AMX_INLINE __m512i scaled_sum(const int32_t *cbuf, const int32_t *sc, int nsub, int m)
{
	__m512i s = _mm512_setzero_si512();
	UNROLL
	for (int g = 0; g < nsub; g++)
		s = _mm512_add_epi32(s, _mm512_mullo_epi32(_mm512_load_si512(cbuf + g * TR * TT + m * TT),
							   _mm512_set1_epi32(sc[g])));
	return s;
}

/* The super-block kinds of the K tiles: q4_K / q5_K (unsigned quants, 8
 * sub-blocks of 32, mins), q6_K (signed, 16 of 16), IQ4_XS (signed, 8 of
 * 32, no mins). */
enum kg_kind { KG_Q4K, KG_Q6K, KG_IQ4XS };

AMX static void k_group(enum kg_kind kind, const uint8_t *a, int64_t n, int64_t nsb, const int32_t *sc,
			const int32_t *mn, const float *dw, const float *dm, const uint8_t *bq,
			const float *bd, const int32_t *bs, int64_t n_tok, int32_t *cbuf, float *y,
			uint64_t y_stride)
{
	const bool q4k = kind == KG_Q4K;
	const int nsub = kind == KG_Q6K ? 16 : 8, kbytes = kind == KG_Q6K ? 16 : 32;
	const uint64_t bbytes = kbytes == 32 ? B32 : B16;
	const __m512i sign = _mm512_set1_epi32(INT32_MIN); /* -v exactly, without AVX-512 DQ */
	for (int64_t tt = 0; tt * TT < n_tok; tt++) {
		__m512 acc[TR];
		UNROLL
		for (int m = 0; m < TR; m++)
			acc[m] = _mm512_setzero_ps();
		for (int64_t sb = 0; sb < nsb; sb++) {
			const uint64_t b = (uint64_t)(tt * nsb + sb);
			const uint8_t *ap = a + sb * Q42_QK_K;
			/* two sub-blocks per step, one per tile set */
			UNROLL
			for (int g = 0; g < nsub; g += 2) {
				_tile_zero(T_C0);
				_tile_zero(T_C1);
				_tile_loadd(T_A0, ap + kbytes * g, n);
				_tile_loadd(T_B0, bq + (b * (uint64_t)nsub + (uint64_t)g) * bbytes, 64);
				_tile_loadd(T_A1, ap + kbytes * (g + 1), n);
				_tile_loadd(T_B1, bq + (b * (uint64_t)nsub + (uint64_t)g + 1) * bbytes, 64);
				if (q4k) {
					_tile_dpbusd(T_C0, T_A0, T_B0);
					_tile_dpbusd(T_C1, T_A1, T_B1);
				} else {
					_tile_dpbssd(T_C0, T_A0, T_B0);
					_tile_dpbssd(T_C1, T_A1, T_B1);
				}
				_tile_stored(T_C0, cbuf + g * TR * TT, 64);
				_tile_stored(T_C1, cbuf + (g + 1) * TR * TT, 64);
			}
			BARRIER();
			const __m512 yd = _mm512_loadu_ps(bd + b * TT);
			if (q4k) {
				const __m512i p0 = _mm512_loadu_si512(bs + (b * 4 + 0) * TT);
				const __m512i p1 = _mm512_loadu_si512(bs + (b * 4 + 1) * TT);
				const __m512i p2 = _mm512_loadu_si512(bs + (b * 4 + 2) * TT);
				const __m512i p3 = _mm512_loadu_si512(bs + (b * 4 + 3) * TT);
				UNROLL
				for (int m = 0; m < TR; m++) {
					const uint64_t i = (uint64_t)(sb * TR + m);
					const int32_t *mp = mn + i * 4;
					__m512i sm = _mm512_dpwssd_epi32(_mm512_setzero_si512(), p0,
									 _mm512_set1_epi32(mp[0]));
					sm = _mm512_dpwssd_epi32(sm, p1, _mm512_set1_epi32(mp[1]));
					sm = _mm512_dpwssd_epi32(sm, p2, _mm512_set1_epi32(mp[2]));
					sm = _mm512_dpwssd_epi32(sm, p3, _mm512_set1_epi32(mp[3]));
					acc[m] = _mm512_fmadd_ps(
						_mm512_cvtepi32_ps(scaled_sum(cbuf, sc + i * 8, 8, m)),
						_mm512_mul_ps(_mm512_set1_ps(dw[i]), yd), acc[m]);
					acc[m] = _mm512_fmadd_ps(
						_mm512_cvtepi32_ps(sm),
						_mm512_castsi512_ps(_mm512_xor_si512(
							_mm512_castps_si512(_mm512_mul_ps(yd, _mm512_set1_ps(dm[i]))),
							sign)),
						acc[m]);
				}
			} else {
				UNROLL
				for (int m = 0; m < TR; m++) {
					const uint64_t i = (uint64_t)(sb * TR + m);
					acc[m] = _mm512_fmadd_ps(
						_mm512_cvtepi32_ps(scaled_sum(cbuf, sc + i * (uint64_t)nsub, nsub, m)),
						_mm512_mul_ps(_mm512_set1_ps(dw[i]), yd), acc[m]);
				}
			}
		}
		store_tile(acc, y, y_stride, tt, n_tok);
	}
}

/* KG_Q4K: q4_K or (q5) q5_K, which llama.cpp's tiles take alike; r16:
 * q4_K in the R16 layout */
AMX static void rows_k(Q42_LLAMACPP_ROWS_ARGS, enum kg_kind kind, bool q5, bool r16)
{
	const bool q4k = kind == KG_Q4K;
	const q42_llamacpp_rows_fn simd = r16		       ? q42_llamacpp_rows_q4_k_r16_avx512
					: q5		       ? q42_llamacpp_rows_q5_k_avx512
					: q4k		       ? q42_llamacpp_rows_q4_k_avx512
					: kind == KG_IQ4XS ? q42_llamacpp_rows_iq4_xs_avx512
							       : q42_llamacpp_rows_q6_k_avx512;
	const int64_t nsb = n / Q42_QK_K, ntt = (n_tok + TT - 1) / TT, full = n_rows - n_rows % TR;
	const int kbytes = kind == KG_Q6K ? 16 : 32, nsub = Q42_QK_K / kbytes;
	const size_t per = (size_t)(nsb * TR);
	const size_t len[9] = {
		(size_t)nsub * C_BYTES, (size_t)(ntt * nsb) * Q42_QK_K * TT,
		(size_t)(ntt * nsb) * TT * sizeof(float), q4k ? (size_t)(ntt * nsb) * 4 * TT * 4 : 1,
		(size_t)(TR * n), per * (size_t)nsub * 4, q4k ? per * 4 * 4 : 1, per * sizeof(float),
		q4k ? per * sizeof(float) : 1};
	void *pc[9];
	void *mem = n_tok >= Q42_AMX_MIN_TOK && full > 0 ? scratch(9, len, pc) : NULL;
	if (mem == NULL) {
		simd(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
		return;
	}
	int32_t *cbuf = pc[0], *bs = q4k ? pc[3] : NULL, *sc = pc[5], *mn = pc[6];
	uint8_t *bq = pc[1], *unp = pc[4];
	float *bd = pc[2], *dw = pc[7], *dm = pc[8];
	pack_q8_k(x, x_stride, n_tok, nsb, ntt, kbytes, bq, bd, bs);
	tiles_on(kbytes);
	for (int64_t r0 = 0; r0 < full; r0 += TR) {
		const uint8_t *wr = (const uint8_t *)w + (uint64_t)r0 * w_stride;
		if (r16)
			unpack_q4_k_r16(wr, nsb, n, unp, sc, mn, dw, dm);
		else if (q4k)
			unpack_q4_k(q5, wr, w_stride, nsb, n, unp, sc, mn, dw, dm);
		else if (kind == KG_IQ4XS)
			unpack_iq4_xs(wr, w_stride, nsb, n, (int8_t *)unp, sc, dw);
		else
			unpack_q6_k(wr, w_stride, nsb, n, (int8_t *)unp, sc, dw);
		prefetch_group(w, w_stride, r0, full);
		BARRIER();
		k_group(kind, unp, n, nsb, sc, mn, dw, dm, bq, bd, bs, n_tok, cbuf, y + r0, y_stride);
	}
	_tile_release();
	free(mem);
	if (full < n_rows)
		simd(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride, n_tok, x,
		     x_stride, y + full, y_stride);
}

void q42_llamacpp_rows_q4_k_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_k(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, KG_Q4K, false, false);
}

void q42_llamacpp_rows_q4_k_r16_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_k(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, KG_Q4K, false, true);
}

void q42_llamacpp_rows_q6_k_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_k(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, KG_Q6K, false, false);
}

void q42_llamacpp_rows_q5_k_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_k(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, KG_Q4K, true, false);
}

void q42_llamacpp_rows_iq4_xs_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_k(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, KG_IQ4XS, false, false);
}

/* ---- Q2_K (llama.cpp's repacked order, q42_llamacpp_dot_q2_k) ------------- */

/* A q2_K value times its sub-block's scale is at most 3 x 15, so each row
 * unpacks to one unsigned byte per element, w' = q x scale: a half
 * super-block (128 elements) is then two K = 64 tile products into one C
 * tile, whose elements are exactly the half's isum for a (row, token).
 * The per-lane table [0, s, 2s, 3s] of each 16-byte lane (one sub-block)
 * turns the 2-bit fields into w' by one byte shuffle. Also per (row,
 * super-block): the eight pairs of mins as words, d and dmin. */
AMX_INLINE void unpack_q2_k(const uint8_t *wr, uint64_t w_stride, int64_t nsb, int64_t n, uint8_t *dst,
			    int32_t *mn, float *dw, float *dm)
{
	const __m512i odd = _mm512_set1_epi16((short)0xFF00), high = _mm512_set1_epi32((int)0xFFFF0000);
	const __m128i m4 = _mm_set1_epi8(0x0F);
	/* byte value k in 128-bit lane k */
	const __m512i lane = _mm512_set_epi32(0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x02020202, 0x02020202,
					      0x02020202, 0x02020202, 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0,
					      0, 0, 0);
	for (int m = 0; m < TR; m++)
		for (int64_t sb = 0; sb < nsb; sb++) {
			const uint8_t *a = wr + (uint64_t)m * w_stride + (uint64_t)sb * Q2_K_BYTES;
			uint8_t *o = dst + m * n + sb * Q42_QK_K;
			const __m128i sm = _mm_loadu_si128((const __m128i *)(a + Q2_K_SCALES));
			const __m512i sc = _mm512_broadcast_i32x4(_mm_and_si128(sm, m4));
			__m512i q[4];
			x86_fields2_512(a + Q2_K_QS, q);
			UNROLL
			for (int j = 0; j < 4; j++) {
				/* lane k: sub-block 4j + k's scale in every byte */
				const __m512i s = _mm512_shuffle_epi8(sc, _mm512_add_epi8(lane, _mm512_set1_epi8((char)(4 * j))));
				/* bytes 0..3 of each lane: 0, s, 2s, 3s */
				const __m512i tbl = _mm512_add_epi8(_mm512_and_si512(s, odd),
								    _mm512_and_si512(_mm512_add_epi8(s, s), high));
				_mm512_storeu_si512((void *)(o + 64 * j), _mm512_shuffle_epi8(tbl, q[j]));
			}
			const uint64_t i = (uint64_t)(sb * TR + m);
			for (int p = 0; p < 8; p++)
				mn[i * 8 + (uint64_t)p] =
					(int32_t)((uint32_t)(a[Q2_K_SCALES + 2 * p] >> 4) |
						  (uint32_t)(a[Q2_K_SCALES + 2 * p + 1] >> 4) << 16);
			dw[i] = half(a + Q2_K_D);
			dm[i] = half(a + Q2_K_DMIN);
		}
}

/* Sixteen q2_K rows (unpacked) against every token tile: per half
 * super-block one C tile; then per row the float steps of
 * q42_llamacpp_dot_q2_k, the gemm order (per half) for the tokens in whole
 * groups of four, the gemv order (per super-block) for the rest. */
AMX static void q2k_group(const uint8_t *a, int64_t n, int64_t nsb, const int32_t *mn, const float *dw,
			  const float *dm, const uint8_t *bq, const float *bd, const int32_t *bs, int64_t n_tok,
			  int32_t *cbuf, float *y, uint64_t y_stride)
{
	const int64_t n_x4 = n_tok / 4 * 4;
	for (int64_t tt = 0; tt * TT < n_tok; tt++) {
		/* lanes of tokens past the last whole group of four */
		const int64_t first = n_x4 - tt * TT;
		const uint32_t lanes = first <= 0 ? 0xFFFFu : first >= TT ? 0u : 0xFFFFu << first;
		const __mmask16 gemv = (__mmask16)(lanes & 0xFFFFu);
		__m512 acc[TR], accm[TR];
		UNROLL
		for (int m = 0; m < TR; m++)
			acc[m] = accm[m] = _mm512_setzero_ps();
		for (int64_t sb = 0; sb < nsb; sb++) {
			const uint64_t b = (uint64_t)(tt * nsb + sb);
			const uint8_t *ap = a + sb * Q42_QK_K;
			const uint8_t *bp = bq + b * 4 * B64;
			_tile_zero(T_C0);
			_tile_zero(T_C1);
			_tile_loadd(T_A0, ap, n);
			_tile_loadd(T_B0, bp, 64);
			_tile_loadd(T_A1, ap + 128, n);
			_tile_loadd(T_B1, bp + 2 * B64, 64);
			_tile_dpbusd(T_C0, T_A0, T_B0);
			_tile_dpbusd(T_C1, T_A1, T_B1);
			_tile_loadd(T_A0, ap + 64, n);
			_tile_loadd(T_B0, bp + B64, 64);
			_tile_loadd(T_A1, ap + 192, n);
			_tile_loadd(T_B1, bp + 3 * B64, 64);
			_tile_dpbusd(T_C0, T_A0, T_B0);
			_tile_dpbusd(T_C1, T_A1, T_B1);
			_tile_stored(T_C0, cbuf, 64);
			_tile_stored(T_C1, cbuf + TR * TT, 64);
			BARRIER();
			const __m512 yd = _mm512_loadu_ps(bd + b * TT);
			__m512i p[8];
			UNROLL
			for (int k = 0; k < 8; k++)
				p[k] = _mm512_loadu_si512(bs + (b * 8 + (uint64_t)k) * TT);
			UNROLL
			for (int m = 0; m < TR; m++) {
				const uint64_t i = (uint64_t)(sb * TR + m);
				const int32_t *mp = mn + i * 8;
				__m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
				UNROLL
				for (int k = 0; k < 4; k++) {
					s0 = _mm512_dpwssd_epi32(s0, p[k], _mm512_set1_epi32(mp[k]));
					s1 = _mm512_dpwssd_epi32(s1, p[k + 4], _mm512_set1_epi32(mp[k + 4]));
				}
				const __m512i i0 = _mm512_load_si512(cbuf + m * TT);
				const __m512i i1 = _mm512_load_si512(cbuf + TR * TT + m * TT);
				const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(dw[i]), yd);
				const __m512 dmv = _mm512_mul_ps(_mm512_set1_ps(dm[i]), yd);
				const __m512 ag = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i1), dd,
								  _mm512_fmadd_ps(_mm512_cvtepi32_ps(i0), dd, acc[m]));
				const __m512 mg = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s1), dmv,
								  _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), dmv, accm[m]));
				acc[m] = _mm512_mask_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(i0, i1)), gemv, dd, acc[m]);
				accm[m] = _mm512_mask_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), gemv, dmv,
							       accm[m]);
				acc[m] = _mm512_mask_mov_ps(ag, gemv, acc[m]);
				accm[m] = _mm512_mask_mov_ps(mg, gemv, accm[m]);
			}
		}
		UNROLL
		for (int m = 0; m < TR; m++)
			acc[m] = _mm512_sub_ps(acc[m], accm[m]);
		store_tile(acc, y, y_stride, tt, n_tok);
	}
}

AMX void q42_llamacpp_rows_q2_k_amx(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t nsb = n / Q42_QK_K, ntt = (n_tok + TT - 1) / TT, full = n_rows - n_rows % TR;
	const size_t per = (size_t)(nsb * TR);
	const size_t len[8] = {2 * (size_t)C_BYTES, (size_t)(ntt * nsb) * Q42_QK_K * TT,
			       (size_t)(ntt * nsb) * TT * sizeof(float), (size_t)(ntt * nsb) * 8 * TT * 4,
			       (size_t)(TR * n), per * 8 * 4, per * sizeof(float), per * sizeof(float)};
	void *pc[8];
	void *mem = n_tok >= Q42_AMX_MIN_TOK && full > 0 ? scratch(8, len, pc) : NULL;
	if (mem == NULL) {
		q42_llamacpp_rows_q2_k_avx512(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
		return;
	}
	int32_t *cbuf = pc[0], *bs = pc[3], *mn = pc[5];
	uint8_t *bq = pc[1], *unp = pc[4];
	float *bd = pc[2], *dw = pc[6], *dm = pc[7];
	pack_q8_k(x, x_stride, n_tok, nsb, ntt, 64, bq, bd, NULL);
	/* the tokens' bsums as word pairs (sub-blocks 2k, 2k + 1) */
	for (int64_t tt = 0; tt < ntt; tt++)
		for (int64_t sb = 0; sb < nsb; sb++)
			for (int k = 0; k < 8; k++)
				for (int c = 0; c < TT; c++) {
					const int64_t t = tt * TT + c;
					const uint8_t *g = (const uint8_t *)x + (uint64_t)t * x_stride +
							   (uint64_t)sb * Q8_K_BYTES + Q8_K_BSUMS + 4 * (uint64_t)k;
					bs[((uint64_t)(tt * nsb + sb) * 8 + (uint64_t)k) * TT + (uint64_t)c] =
						t < n_tok ? (int32_t)q42_ld32(g) : 0;
				}
	tiles_on(64);
	for (int64_t r0 = 0; r0 < full; r0 += TR) {
		const uint8_t *wr = (const uint8_t *)w + (uint64_t)r0 * w_stride;
		unpack_q2_k(wr, w_stride, nsb, n, unp, mn, dw, dm);
		prefetch_group(w, w_stride, r0, full);
		BARRIER();
		q2k_group(unp, n, nsb, mn, dw, dm, bq, bd, bs, n_tok, cbuf, y + r0, y_stride);
	}
	_tile_release();
	free(mem);
	if (full < n_rows)
		q42_llamacpp_rows_q2_k_avx512(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride,
					    n_tok, x, x_stride, y + full, y_stride);
}

#else

bool q42_amx_usable(void)
{
	return false;
}

#endif
