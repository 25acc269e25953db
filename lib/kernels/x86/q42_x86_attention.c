/* q42_x86_attention.c -- f32 and f16 dot products over many rows (the KV
 * cache of attention, also used by the F32 weight products): ggml's
 * ggml_vec_dot_f32 / _f16 step and lane orders, AVX-512 and AVX2; and the
 * same loops over widened BF16 weights for the builds without VDPBF16PS.
 */
#include "kernels/x86/q42_x86_internal.h"

#if defined(__x86_64__) || defined(__i386__)

/* ---- f32, f16 and bf16 products (attention) ----------------------------- */

/* The element type of a row, h below: a bf16 widens exactly (its bits
 * are the float's upper half), an f16 through VCVTPH2PS. */
enum { EL_F32, EL_F16, EL_BF16 };

A5_INLINE __m512 widen16(int h, __m256i v)
{
	return h == EL_F16 ? _mm512_cvtph_ps(v) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}

/* Sixteen elements of a row from element k; the masked form zeroes the
 * lanes m leaves out. */
A5_INLINE __m512 ld_row16(const void *p, int64_t k, int h)
{
	return h != EL_F32 ? widen16(h, _mm256_loadu_si256((const __m256i *)(const void *)((const uint8_t *)p + 2 * k)))
			   : _mm512_loadu_ps((const float *)p + k);
}

A5_INLINE __m512 ld_row16_mask(const void *p, int64_t k, int h, __mmask16 m)
{
	return h != EL_F32 ? widen16(h, _mm256_maskz_loadu_epi16(m, (const uint8_t *)p + 2 * k))
			   : _mm512_maskz_loadu_ps(m, (const float *)p + k);
}

/* From a stepped row's 64-element step to the next (q42_llamacpp_vlayout):
 * o the step's byte offset, c its chunk's, si the step within the chunk. */
static inline void vstep_next(const q42_llamacpp_vlayout *lay, uint64_t *o, uint64_t *c, uint32_t *si)
{
	if (++*si == lay->per) {
		*si = 0;
		*c += lay->chunk;
		*o = *c;
	} else {
		*o += lay->step;
	}
}

/* Contiguous rows stride bytes apart, of elements of kind h, as a
 * stepped layout (per 1, a chunk of 64 elements). */
static inline q42_llamacpp_vlayout vlayout_rows(uint64_t stride, int h)
{
	return (q42_llamacpp_vlayout){stride, 0, h == EL_F32 ? 256 : 128, 1};
}

/* Tiles of RR rows x TT vectors over n_rows x n_x, the rest of the rows
 * and of the vectors one at a time: TILE(R, T, r, t) for the tile at row
 * r and vector t, with R and T constants so that its loops unroll. */
#define FOR_TILES(n_rows, n_x, RR, TT, TILE)                                                      \
	for (int64_t t_ = 0; t_ < (n_x); t_ += (n_x) - t_ >= (TT) ? (TT) : 1)                      \
		for (int64_t r_ = 0; r_ < (n_rows); r_ += (n_rows) - r_ >= (RR) ? (RR) : 1) {      \
			const bool rr_ = (n_rows) - r_ >= (RR), tt_ = (n_x) - t_ >= (TT);          \
			if (rr_ && tt_)                                                            \
				TILE(RR, TT, r_, t_);                                              \
			else if (rr_)                                                              \
				TILE(RR, 1, r_, t_);                                               \
			else if (tt_)                                                              \
				TILE(1, TT, r_, t_);                                               \
			else                                                                       \
				TILE(1, 1, r_, t_);                                                \
		}

/* Element k in accumulator (k % 64) / 16, lane k % 16 (ACC = 4:
 * ggml_vec_dot_f32), or lane k % 16 of one accumulator (ACC = 1:
 * tinyBLAS); a partial last step adds its elements to their lanes. R rows
 * against one x, the accumulators in registers (the step index is static
 * in the unrolled loops), each row's sums in exactly the one-row order.
 * The rows are stepped (q42_llamacpp_vlayout); x is contiguous. */
A5_INLINE void dots_fold(int R, int ACC, int h, int64_t n, __m512 *f, const void *const *a,
			 const q42_llamacpp_vlayout *lay, const void *b)
{
	__m512 s[4][4];
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int j = 0; j < 4; j++)
			s[i][j] = _mm512_setzero_ps();
	int64_t k = 0;
	uint64_t o = 0, c = 0; /* byte offsets of the rows' step k / 64 and of its chunk */
	uint32_t si = 0;       /* the step within its chunk */
	for (; k + 64 <= n; k += 64) {
		UNROLL
		for (int j = 0; j < 4; j++) {
			const __m512 x = ld_row16(b, k + 16 * j, h);
			UNROLL
			for (int i = 0; i < R; i++)
				s[i][j % ACC] = _mm512_fmadd_ps(ld_row16((const uint8_t *)a[i] + o, 16 * j, h), x,
								s[i][j % ACC]);
		}
		vstep_next(lay, &o, &c, &si);
	}
	UNROLL
	for (int j = 0; j < 4; j++)
		if (k + 16 * j < n) {
			const __mmask16 m = tail_mask(n - k - 16 * j);
			const __m512 x = ld_row16_mask(b, k + 16 * j, h, m);
			UNROLL
			for (int i = 0; i < R; i++)
				s[i][j % ACC] = _mm512_mask3_fmadd_ps(
					ld_row16_mask((const uint8_t *)a[i] + o, 16 * j, h, m), x, s[i][j % ACC], m);
		}
	UNROLL
	for (int i = 0; i < R; i++)
		f[i] = ACC == 1 ? s[i][0]
				: _mm512_add_ps(_mm512_add_ps(s[i][0], s[i][2]), _mm512_add_ps(s[i][1], s[i][3]));
}

A5_INLINE void dots(int R, int ACC, int h, int64_t n, float *out, const void *const *a,
		    const q42_llamacpp_vlayout *lay, const void *b)
{
	__m512 f[4];
	dots_fold(R, ACC, h, n, f, a, lay, b);
	UNROLL
	for (int i = 0; i < R; i++)
		out[i] = reduce16(f[i]);
}

/* The f32 (H 0) or f16 (H 1) attention products: one row, or n_rows
 * rows sixteen at a time (their sums reduced together), then four, then
 * one; the rows of a contiguous matrix (one 64-element step per chunk),
 * or stepped rows. */
/* The one-row form and the contiguous rows of a vrows form; ATTR and
 * FOLD (dots or dots_avx2) say which instruction set. */
#define DOTS_ONE_ROWS(ATTR, FOLD, NAME, ROWS_NAME, VROWS_NAME, ACC, H)                            \
	ATTR void NAME(int64_t n, float *out, const void *w, const void *x)                       \
	{                                                                                         \
		const q42_llamacpp_vlayout lay = {0, 0, (H) ? 128u : 256u, 1};                      \
		FOLD(1, ACC, H, n, out, &w, &lay, x);                                             \
	}                                                                                         \
	ATTR void ROWS_NAME(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride, \
			    const void *x)                                                        \
	{                                                                                         \
		const q42_llamacpp_vlayout lay = {w_stride, 0, (H) ? 128u : 256u, 1};               \
		VROWS_NAME(n, n_rows, out, w, &lay, x);                                           \
	}

/* A vrows form's rows from r on: four at a time while FOUR, then one. */
#define DOTS_REST(FOLD, FOUR, ACC, H)                                                             \
	for (; (FOUR) && r + 4 <= n_rows; r += 4) {                                               \
		const void *a[4];                                                                 \
		for (int i = 0; i < 4; i++)                                                       \
			a[i] = w8 + (uint64_t)(r + i) * lay->stride;                              \
		FOLD(4, ACC, H, n, out + r, a, lay, x);                                           \
	}                                                                                         \
	for (; r < n_rows; r++) {                                                                 \
		const void *a = w8 + (uint64_t)r * lay->stride;                                   \
		FOLD(1, ACC, H, n, out + r, &a, lay, x);                                          \
	}

#define DOTS(NAME, ROWS_NAME, VROWS_NAME, ACC, H)                                                 \
	A5 void VROWS_NAME(int64_t n, int64_t n_rows, float *out, const void *w,                  \
			   const q42_llamacpp_vlayout *lay, const void *x)                          \
	{                                                                                         \
		const uint8_t *w8 = w;                                                            \
		int64_t r = 0;                                                                    \
		for (; r + 16 <= n_rows; r += 16) {                                               \
			__m512 f[16];                                                             \
			for (int q = 0; q < 4; q++) {                                             \
				const void *a[4];                                                 \
				for (int i = 0; i < 4; i++)                                       \
					a[i] = w8 + (uint64_t)(r + 4 * q + i) * lay->stride;      \
				dots_fold(4, ACC, H, n, f + 4 * q, a, lay, x);                    \
			}                                                                         \
			_mm512_storeu_ps(out + r, reduce16x16(f));                                \
		}                                                                                 \
		DOTS_REST(dots, true, ACC, H)                                                     \
	}                                                                                         \
	DOTS_ONE_ROWS(A5, dots, NAME, ROWS_NAME, VROWS_NAME, ACC, H)

DOTS(q42_llamacpp_dot_f32_avx512, q42_llamacpp_dot_f32_rows_avx512, q42_llamacpp_dot_f32_vrows_avx512, 4, EL_F32)
DOTS(q42_llamacpp_dot_f32_lanes_avx512, q42_llamacpp_dot_f32_lanes_rows_avx512, q42_llamacpp_dot_f32_lanes_vrows_avx512, 1,
     EL_F32)
DOTS(q42_llamacpp_dot_f16_pad_avx512, q42_llamacpp_dot_f16_pad_rows_avx512, q42_llamacpp_dot_f16_pad_vrows_avx512, 4, EL_F16)
DOTS(q42_llamacpp_dot_f16_lanes_avx512, q42_llamacpp_dot_f16_lanes_rows_avx512, q42_llamacpp_dot_f16_lanes_vrows_avx512, 1,
     EL_F16)

/* tinyBLAS's one accumulator per output (ACC 1, element k in lane k %
 * 16, as dots_fold keeps it) for R rows x T vectors at once (R, T <= 4),
 * each step of a row loaded and widened once for the T: the attention's
 * V products (q42_llamacpp_dot_f32_lanes_vrows for several x) and a
 * pass's F32, F16 and BF16 weight products (tinyBLAS<16>, whose
 * activations are of the weights' kind h). One accumulator per output,
 * so any tiling gives the same bits. */
A5_INLINE void lanes_multi(int R, int T, int h, int64_t n, float *out, uint64_t out_stride, const uint8_t *w,
			   const q42_llamacpp_vlayout *lay, const uint8_t *x, uint64_t x_stride)
{
	__m512 s[4][4];
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int t = 0; t < T; t++)
			s[i][t] = _mm512_setzero_ps();
	int64_t k = 0;
	uint64_t o = 0, c = 0; /* as dots_fold */
	uint32_t si = 0;
	for (; k + 64 <= n; k += 64) {
		UNROLL
		for (int j = 0; j < 4; j++) {
			__m512 xv[4];
			UNROLL
			for (int t = 0; t < T; t++)
				xv[t] = ld_row16(x + (uint64_t)t * x_stride, k + 16 * j, h);
			UNROLL
			for (int i = 0; i < R; i++) {
				const __m512 wv = ld_row16(w + (uint64_t)i * lay->stride + o, 16 * j, h);
				UNROLL
				for (int t = 0; t < T; t++)
					s[i][t] = _mm512_fmadd_ps(wv, xv[t], s[i][t]);
			}
		}
		vstep_next(lay, &o, &c, &si);
	}
	UNROLL
	for (int j = 0; j < 4; j++)
		if (k + 16 * j < n) {
			const __mmask16 m = tail_mask(n - k - 16 * j);
			__m512 xv[4];
			UNROLL
			for (int t = 0; t < T; t++)
				xv[t] = ld_row16_mask(x + (uint64_t)t * x_stride, k + 16 * j, h, m);
			UNROLL
			for (int i = 0; i < R; i++) {
				const __m512 wv = ld_row16_mask(w + (uint64_t)i * lay->stride + o, 16 * j, h, m);
				UNROLL
				for (int t = 0; t < T; t++)
					s[i][t] = _mm512_mask3_fmadd_ps(wv, xv[t], s[i][t], m);
			}
		}
	UNROLL
	for (int t = 0; t < T; t++)
		UNROLL
		for (int i = 0; i < R; i++)
			out[(uint64_t)t * out_stride + (uint64_t)i] = reduce16(s[i][t]);
}

/* Tiles of four rows x four x. */
A5 void q42_llamacpp_dot_f32_lanes_vrows_multi_avx512(int64_t n, int64_t n_rows, int64_t n_x, float *out,
						    uint64_t out_stride, const void *w,
						    const q42_llamacpp_vlayout *lay, const void *x,
						    uint64_t x_stride)
{
	const uint8_t *w8 = w, *x8 = x;
#define LANES_MULTI(R, T, r, t)                                                                        \
	lanes_multi(R, T, EL_F32, n, out + (uint64_t)(t) * out_stride + (uint64_t)(r), out_stride,      \
		    w8 + (uint64_t)(r) * lay->stride, lay, x8 + (uint64_t)(t) * x_stride, x_stride)
	FOR_TILES(n_rows, n_x, 4, 4, LANES_MULTI)
#undef LANES_MULTI
}

/* ggml_vec_dot_f32's four accumulators (ACC 4, as dots_fold) of one row
 * against T x, each folded (s0 + s2) + (s1 + s3) into f[t]; XR: a row of
 * one 64-step (n 64) with the T x already in registers. */
A5_INLINE void vec4_multi(int T, int64_t n, __m512 *f, const uint8_t *w, const q42_llamacpp_vlayout *lay,
			  const uint8_t *x, uint64_t x_stride, const __m512 (*xr)[4])
{
	__m512 s[4][4];
	UNROLL
	for (int t = 0; t < T; t++)
		UNROLL
		for (int j = 0; j < 4; j++)
			s[t][j] = _mm512_setzero_ps();
	if (xr != NULL) {
		UNROLL
		for (int j = 0; j < 4; j++) {
			const __m512 wv = _mm512_loadu_ps((const float *)(const void *)w + 16 * j);
			UNROLL
			for (int t = 0; t < T; t++)
				s[t][j] = _mm512_fmadd_ps(wv, xr[t][j], s[t][j]);
		}
	} else {
		int64_t k = 0;
		uint64_t o = 0, c = 0;
		uint32_t si = 0;
		for (; k + 64 <= n; k += 64) {
			UNROLL
			for (int j = 0; j < 4; j++) {
				const __m512 wv = _mm512_loadu_ps((const float *)(const void *)(w + o) + 16 * j);
				UNROLL
				for (int t = 0; t < T; t++)
					s[t][j] = _mm512_fmadd_ps(
						wv,
						_mm512_loadu_ps((const float *)(const void *)(x + (uint64_t)t * x_stride) +
								k + 16 * j),
						s[t][j]);
			}
			vstep_next(lay, &o, &c, &si);
		}
		UNROLL
		for (int j = 0; j < 4; j++)
			if (k + 16 * j < n) {
				const __mmask16 m = tail_mask(n - k - 16 * j);
				const __m512 wv =
					_mm512_maskz_loadu_ps(m, (const float *)(const void *)(w + o) + 16 * j);
				UNROLL
				for (int t = 0; t < T; t++)
					s[t][j] = _mm512_mask3_fmadd_ps(
						wv,
						_mm512_maskz_loadu_ps(m, (const float *)(const void *)(x + (uint64_t)t *
													  x_stride) +
									  k + 16 * j),
						s[t][j], m);
			}
	}
	UNROLL
	for (int t = 0; t < T; t++)
		f[t] = _mm512_add_ps(_mm512_add_ps(s[t][0], s[t][2]), _mm512_add_ps(s[t][1], s[t][3]));
}

/* q42_llamacpp_dot_f32_vrows for T (1 to 4) x at once: one row at a time
 * against all T (a row of one 64-step, attention's keys of 64 values, with
 * the x held in registers), each x's sixteen rows reduced together. */
A5_INLINE void vrows_multi(int T, int64_t n, int64_t n_rows, float *out, uint64_t out_stride, const uint8_t *w,
			   const q42_llamacpp_vlayout *lay, const uint8_t *x, uint64_t x_stride)
{
	__m512 xr[4][4], f[4][16];
	const bool one_step = n == 64;
	if (one_step)
		UNROLL
		for (int t = 0; t < T; t++)
			UNROLL
			for (int j = 0; j < 4; j++)
				xr[t][j] = _mm512_loadu_ps((const float *)(const void *)(x + (uint64_t)t * x_stride) + 16 * j);
	int64_t r = 0;
	for (; r + 16 <= n_rows; r += 16) {
		for (int i = 0; i < 16; i++) {
			__m512 g[4];
			vec4_multi(T, n, g, w + (uint64_t)(r + i) * lay->stride, lay, x, x_stride,
				   one_step ? (const __m512(*)[4])xr : NULL);
			UNROLL
			for (int t = 0; t < T; t++)
				f[t][i] = g[t];
		}
		UNROLL
		for (int t = 0; t < T; t++)
			_mm512_storeu_ps(out + (uint64_t)t * out_stride + (uint64_t)r, reduce16x16(f[t]));
	}
	for (; r < n_rows; r++) {
		__m512 g[4];
		vec4_multi(T, n, g, w + (uint64_t)r * lay->stride, lay, x, x_stride,
			   one_step ? (const __m512(*)[4])xr : NULL);
		UNROLL
		for (int t = 0; t < T; t++)
			out[(uint64_t)t * out_stride + (uint64_t)r] = reduce16(g[t]);
	}
}

A5 void q42_llamacpp_dot_f32_vrows_multi_avx512(int64_t n, int64_t n_rows, int64_t n_x, float *out,
					      uint64_t out_stride, const void *w, const q42_llamacpp_vlayout *lay,
					      const void *x, uint64_t x_stride)
{
	const uint8_t *w8 = w, *x8 = x;
	for (int64_t t = 0; t < n_x; t += 4) {
		const int64_t left = n_x - t;
		const uint8_t *xt = x8 + (uint64_t)t * x_stride;
		float *ot = out + (uint64_t)t * out_stride;
		if (left >= 4)
			vrows_multi(4, n, n_rows, ot, out_stride, w8, lay, xt, x_stride);
		else if (left == 3)
			vrows_multi(3, n, n_rows, ot, out_stride, w8, lay, xt, x_stride);
		else if (left == 2)
			vrows_multi(2, n, n_rows, ot, out_stride, w8, lay, xt, x_stride);
		else
			vrows_multi(1, n, n_rows, ot, out_stride, w8, lay, xt, x_stride);
	}
}

/* The same attention products on AVX2: each 16-lane accumulator of the
 * AVX-512 forms is two 8-lane halves (lanes 0-7, 8-15), added lane by
 * lane as before and reduced by reduce16_halves, so the bits are the
 * scalar definition's. A partial last step loads its missing elements as
 * zeros on both sides: an accumulator that starts at +0 is never -0, so
 * adding 0 * 0 leaves it as it is (the AVX-512 forms mask those lanes).
 * Sixteen registers hold one row's four accumulators (ACC = 4) or four
 * rows' one (ACC = 1). */
A2_INLINE __m256 widen8(int h, __m128i v)
{
	return h == EL_F16 ? _mm256_cvtph_ps(v) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}

A2_INLINE __m256 ld_row8(const void *p, int64_t k, int h)
{
	return h != EL_F32 ? widen8(h, _mm_loadu_si128((const __m128i *)(const void *)((const uint8_t *)p + 2 * k)))
			   : _mm256_loadu_ps((const float *)p + k);
}

/* The first left elements (1..7) from element k, zeros after them. */
A2_INLINE __m256 ld_row8_part(const void *p, int64_t k, int h, int64_t left)
{
	if (h != EL_F32) {
		uint16_t t[8] = {0};
		memcpy(t, (const uint8_t *)p + 2 * k, 2 * (size_t)left);
		return widen8(h, _mm_loadu_si128((const __m128i *)(const void *)t));
	}
	const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	return _mm256_maskload_ps((const float *)p + k, m);
}

/* hw: the haswell build's sums instead, four 8-lane accumulators over
 * 32-element steps (ACC 4: element k in accumulator (k % 32) / 8) or one
 * (ACC 1), in slot 0 of f */
A2_INLINE void dots_fold_avx2(int R, int ACC, int h, int64_t n, __m256 (*f)[2], const void *const *a,
			      const q42_llamacpp_vlayout *lay, const void *b, bool hw)
{
	__m256 s[4][4][2];
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int j = 0; j < ACC; j++)
			s[i][j][0] = s[i][j][1] = _mm256_setzero_ps();
	int64_t k = 0;
	uint64_t o = 0, c = 0; /* as dots_fold */
	uint32_t si = 0;
	for (; k + 64 <= n; k += 64) {
		UNROLL
		for (int j = 0; j < 4; j++)
			UNROLL
			for (int e = 0; e < 2; e++) {
				const __m256 x = ld_row8(b, k + 16 * j + 8 * e, h);
				const int ai = hw ? (ACC == 1 ? 0 : (2 * j + e) % 4) : j % ACC, sl = hw ? 0 : e;
				UNROLL
				for (int i = 0; i < R; i++)
					s[i][ai][sl] = _mm256_fmadd_ps(
						ld_row8((const uint8_t *)a[i] + o, 16 * j + 8 * e, h), x, s[i][ai][sl]);
			}
		vstep_next(lay, &o, &c, &si);
	}
	for (int j = 0; j < 4; j++)
		for (int e = 0; e < 2; e++) {
			const int64_t at = 16 * j + 8 * e, left = n - k - at;
			if (left <= 0)
				continue;
			const bool full = left >= 8;
			const __m256 x = full ? ld_row8(b, k + at, h) : ld_row8_part(b, k + at, h, left);
			const int ai = hw ? (ACC == 1 ? 0 : (2 * j + e) % 4) : j % ACC, sl = hw ? 0 : e;
			UNROLL
			for (int i = 0; i < R; i++) {
				const void *wi = (const uint8_t *)a[i] + o;
				s[i][ai][sl] = _mm256_fmadd_ps(full ? ld_row8(wi, at, h) : ld_row8_part(wi, at, h, left), x,
							      s[i][ai][sl]);
			}
		}
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int e = 0; e < 2; e++)
			f[i][e] = ACC == 1 ? s[i][0][e]
					   : _mm256_add_ps(_mm256_add_ps(s[i][0][e], s[i][2][e]),
							   _mm256_add_ps(s[i][1][e], s[i][3][e]));
}

A2_INLINE void dots_avx2(int R, int ACC, int h, int64_t n, float *out, const void *const *a,
			 const q42_llamacpp_vlayout *lay, const void *b)
{
	__m256 f[4][2];
	dots_fold_avx2(R, ACC, h, n, f, a, lay, b, false);
	UNROLL
	for (int i = 0; i < R; i++)
		out[i] = reduce16_halves(f[i][0], f[i][1]);
}

/* The haswell build's: hsum_float_8 of llamafile's one accumulator, or
 * GGML_F32x8_REDUCE's last step of ggml_vec_dot's four */
A2_INLINE void dots_hw_avx2(int R, int ACC, int h, int64_t n, float *out, const void *const *a,
			    const q42_llamacpp_vlayout *lay, const void *b)
{
	__m256 f[4][2];
	dots_fold_avx2(R, ACC, h, n, f, a, lay, b, true);
	UNROLL
	for (int i = 0; i < R; i++)
		out[i] = ACC == 1 ? hsum8(f[i][0]) : reduce_hadd8(f[i][0]);
}

#define DOTS_AVX2_WITH(FOLD, NAME, ROWS_NAME, VROWS_NAME, ACC, H)                                 \
	A2 void VROWS_NAME(int64_t n, int64_t n_rows, float *out, const void *w,                  \
			   const q42_llamacpp_vlayout *lay, const void *x)                          \
	{                                                                                         \
		const uint8_t *w8 = w;                                                            \
		int64_t r = 0;                                                                    \
		DOTS_REST(FOLD, (ACC) == 1, ACC, H)                                               \
	}                                                                                         \
	DOTS_ONE_ROWS(A2, FOLD, NAME, ROWS_NAME, VROWS_NAME, ACC, H)
#define DOTS_AVX2(NAME, ROWS_NAME, VROWS_NAME, ACC, H) DOTS_AVX2_WITH(dots_avx2, NAME, ROWS_NAME, VROWS_NAME, ACC, H)

DOTS_AVX2(q42_llamacpp_dot_f32_avx2, q42_llamacpp_dot_f32_rows_avx2, q42_llamacpp_dot_f32_vrows_avx2, 4, EL_F32)
DOTS_AVX2(q42_llamacpp_dot_f32_lanes_avx2, q42_llamacpp_dot_f32_lanes_rows_avx2, q42_llamacpp_dot_f32_lanes_vrows_avx2, 1,
	  EL_F32)
DOTS_AVX2(q42_llamacpp_dot_f16_pad_avx2, q42_llamacpp_dot_f16_pad_rows_avx2, q42_llamacpp_dot_f16_pad_vrows_avx2, 4, EL_F16)
DOTS_AVX2(q42_llamacpp_dot_f16_lanes_avx2, q42_llamacpp_dot_f16_lanes_rows_avx2, q42_llamacpp_dot_f16_lanes_vrows_avx2, 1,
	  EL_F16)
/* and the haswell build's */
DOTS_AVX2_WITH(dots_hw_avx2, q42_llamacpp_hw_dot_f32_avx2, q42_llamacpp_hw_dot_f32_rows_avx2,
	       q42_llamacpp_hw_dot_f32_vrows_avx2, 4, EL_F32)
DOTS_AVX2_WITH(dots_hw_avx2, q42_llamacpp_hw_dot_f32_lanes_avx2, q42_llamacpp_hw_dot_f32_lanes_rows_avx2,
	       q42_llamacpp_hw_dot_f32_lanes_vrows_avx2, 1, EL_F32)
DOTS_AVX2_WITH(dots_hw_avx2, q42_llamacpp_hw_dot_f16_pad_avx2, q42_llamacpp_hw_dot_f16_pad_rows_avx2,
	       q42_llamacpp_hw_dot_f16_pad_vrows_avx2, 4, EL_F16)
DOTS_AVX2_WITH(dots_hw_avx2, q42_llamacpp_hw_dot_f16_lanes_avx2, q42_llamacpp_hw_dot_f16_lanes_rows_avx2,
	       q42_llamacpp_hw_dot_f16_lanes_vrows_avx2, 1, EL_F16)

/* The haswell build's products for several x at once: R rows x T x
 * (R, T <= 4), each 8-value chunk of a row loaded and widened once for
 * the T, each output's accumulators as dots_fold_avx2 keeps them for
 * haswell (ACC 4: four, folded (s0 + s2) + (s1 + s3), GGML_F32x8_REDUCE's
 * last step; ACC 1: llamafile's one, hsum_float_8). The attention's
 * products (the ops' dot_f32_vrows_multi and _lanes_vrows_multi) and,
 * ACC 1, a pass's F32, F16 and BF16 weight products (tinyBLAS<8>, whose
 * activations are of the weights' kind h). */
A2_INLINE void hw_multi_tile(int R, int T, int ACC, int h, int64_t n, float *out, uint64_t out_stride,
			     const uint8_t *w, const q42_llamacpp_vlayout *lay, const uint8_t *x, uint64_t x_stride)
{
	__m256 s[4][4][4];
	UNROLL
	for (int i = 0; i < R; i++)
		UNROLL
		for (int t = 0; t < T; t++)
			UNROLL
			for (int a = 0; a < ACC; a++)
				s[i][t][a] = _mm256_setzero_ps();
	int64_t k = 0;
	uint64_t o = 0, c = 0;
	uint32_t si = 0;
	for (; k + 64 <= n; k += 64) {
		UNROLL
		for (int j = 0; j < 8; j++) {
			const int ai = ACC == 1 ? 0 : j % 4;
			__m256 xv[4];
			UNROLL
			for (int t = 0; t < T; t++)
				xv[t] = ld_row8(x + (uint64_t)t * x_stride, k + 8 * j, h);
			UNROLL
			for (int i = 0; i < R; i++) {
				const __m256 wv = ld_row8(w + (uint64_t)i * lay->stride + o, 8 * j, h);
				UNROLL
				for (int t = 0; t < T; t++)
					s[i][t][ai] = _mm256_fmadd_ps(wv, xv[t], s[i][t][ai]);
			}
		}
		vstep_next(lay, &o, &c, &si);
	}
	for (int j = 0; j < 8; j++) {
		const int64_t left = n - k - 8 * j;
		if (left <= 0)
			continue;
		const int ai = ACC == 1 ? 0 : j % 4;
		__m256 xv[4];
		UNROLL
		for (int t = 0; t < T; t++)
			xv[t] = left >= 8 ? ld_row8(x + (uint64_t)t * x_stride, k + 8 * j, h)
					  : ld_row8_part(x + (uint64_t)t * x_stride, k + 8 * j, h, left);
		UNROLL
		for (int i = 0; i < R; i++) {
			const uint8_t *wi = w + (uint64_t)i * lay->stride + o;
			const __m256 wv = left >= 8 ? ld_row8(wi, 8 * j, h) : ld_row8_part(wi, 8 * j, h, left);
			UNROLL
			for (int t = 0; t < T; t++)
				s[i][t][ai] = _mm256_fmadd_ps(wv, xv[t], s[i][t][ai]);
		}
	}
	UNROLL
	for (int t = 0; t < T; t++)
		UNROLL
		for (int i = 0; i < R; i++)
			out[(uint64_t)t * out_stride + (uint64_t)i] =
				ACC == 1 ? hsum8(s[i][t][0])
					 : reduce_hadd8(_mm256_add_ps(_mm256_add_ps(s[i][t][0], s[i][t][2]),
								      _mm256_add_ps(s[i][t][1], s[i][t][3])));
}

/* Tiles of RR rows x TT x (ACC 4: one row and two x, whose eight
 * accumulators fill half the registers; ACC 1: two rows and four x). */
#define HW_MULTI(NAME, ACC, RR, TT)                                                                   \
	A2 void NAME(int64_t n, int64_t n_rows, int64_t n_x, float *out, uint64_t out_stride, const void *w, \
		     const q42_llamacpp_vlayout *lay, const void *x, uint64_t x_stride)                 \
	{                                                                                             \
		const uint8_t *w8 = w, *x8 = x;                                                       \
		FOR_TILES(n_rows, n_x, RR, TT, HW_TILE_##ACC)                                         \
	}
#define HW_TILE(ACC, R, T, r, t)                                                                      \
	hw_multi_tile(R, T, ACC, EL_F32, n, out + (uint64_t)(t) * out_stride + (uint64_t)(r), out_stride, \
		      w8 + (uint64_t)(r) * lay->stride, lay, x8 + (uint64_t)(t) * x_stride, x_stride)
#define HW_TILE_4(R, T, r, t) HW_TILE(4, R, T, r, t)
#define HW_TILE_1(R, T, r, t) HW_TILE(1, R, T, r, t)
HW_MULTI(q42_llamacpp_hw_dot_f32_vrows_multi_avx2, 4, 1, 2)
HW_MULTI(q42_llamacpp_hw_dot_f32_lanes_vrows_multi_avx2, 1, 2, 4)
#undef HW_TILE_1
#undef HW_TILE_4
#undef HW_TILE
#undef HW_MULTI

/* ---- BF16 weights without VDPBF16PS ------------------------------------ */

/* llama.cpp's builds without VDPBF16PS widen each bf16 to f32 (exact)
 * and multiply in f32: haswell's products (slots Q42_LROWS_HW_BF16 and
 * _VD, q42_llamacpp_hw_dot_bf16 and _tb) and icelake's (Q42_LROWS_BF16_WIDE
 * and _VD, q42_llamacpp_dot_bf16_wide and _tb). A lone token, or a shape
 * llamafile declines: ggml_vec_dot_bf16 on the whole 32-steps, the n % 32
 * left added in double; the tokens of a pass of a shape it takes:
 * tinyBLAS's one accumulator. Four rows at a time. */
static double bf16_left(int64_t np, int64_t n, const uint8_t *a, const uint8_t *b, double sum)
{
	for (int64_t k = np; k < n; k++)
		sum += (double)(q42_bf16_to_f32(q42_ld16(a + 2 * k)) * q42_bf16_to_f32(q42_ld16(b + 2 * k)));
	return sum;
}

/* A lone token's ggml_vec_dot_bf16, which streams each weight row once:
 * while a group of rows is multiplied, its successor's bytes at the same
 * offset are prefetched (as the zen4 forms do, x86/q42_x86_products_f16.c).
 * haswell's: four 8-lane accumulators (element k in (k % 32) / 8) folded
 * (c1 + c3) + (c2 + c4), hsum_float_8; two rows at a time (their eight
 * accumulators and x's four vectors fill the sixteen registers). */
A2 static void hw_bf16_vd(int64_t n, int64_t n_rows, float *y, const uint8_t *w, uint64_t w_stride, const uint8_t *x)
{
	enum { R = 2 };
	const int64_t np = n & ~(int64_t)31;
	for (int64_t r0 = 0; r0 < n_rows; r0 += R) {
		const uint8_t *wr[R], *nx[R];
		for (int i = 0; i < R; i++) {
			wr[i] = w + (uint64_t)(r0 + i < n_rows ? r0 + i : n_rows - 1) * w_stride;
			nx[i] = w + (uint64_t)(r0 + R + i < n_rows ? r0 + R + i : n_rows - 1) * w_stride;
		}
		__m256 c[R][4];
		UNROLL
		for (int i = 0; i < R; i++)
			UNROLL
			for (int j = 0; j < 4; j++)
				c[i][j] = _mm256_setzero_ps();
		for (int64_t k = 0; k < np; k += 32) {
			__m256 xv[4];
			UNROLL
			for (int j = 0; j < 4; j++)
				xv[j] = ld_row8(x, k + 8 * j, EL_BF16);
			UNROLL
			for (int i = 0; i < R; i++) {
				_mm_prefetch((const char *)(nx[i] + 2 * k), _MM_HINT_T1);
				UNROLL
				for (int j = 0; j < 4; j++)
					c[i][j] = _mm256_fmadd_ps(ld_row8(wr[i], k + 8 * j, EL_BF16), xv[j], c[i][j]);
			}
		}
		for (int i = 0; i < R && r0 + i < n_rows; i++) {
			const __m256 f = _mm256_add_ps(_mm256_add_ps(c[i][0], c[i][2]), _mm256_add_ps(c[i][1], c[i][3]));
			y[r0 + i] = (float)bf16_left(np, n, wr[i], x, (double)hsum8(f));
		}
	}
}

/* icelake's: two 16-lane accumulators (element k in (k % 32) / 16), each
 * reduced and the two added in double; GROUP rows at a time, reduced
 * together. */
A5 static void wide_bf16_vd(int64_t n, int64_t n_rows, float *y, const uint8_t *w, uint64_t w_stride,
			    const uint8_t *x)
{
	const int64_t np = n & ~(int64_t)31;
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP], *nx[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		__m512 c[2 * GROUP];
		UNROLL
		for (int i = 0; i < 2 * GROUP; i++)
			c[i] = _mm512_setzero_ps();
		for (int64_t k = 0; k < np; k += 32) {
			prefetch_rows(nx, 2 * k, 64);
			const __m512 x0 = ld_row16(x, k, EL_BF16), x1 = ld_row16(x, k + 16, EL_BF16);
			UNROLL
			for (int i = 0; i < GROUP; i++) {
				c[i] = _mm512_fmadd_ps(ld_row16(wr[i], k, EL_BF16), x0, c[i]);
				c[GROUP + i] = _mm512_fmadd_ps(ld_row16(wr[i], k + 16, EL_BF16), x1, c[GROUP + i]);
			}
		}
		float s[16];
		_mm512_storeu_ps(s, reduce16x16(c));
		for (int i = 0; i < GROUP && r0 + i < n_rows; i++) {
			double sum = (double)s[i];
			sum += (double)s[GROUP + i];
			y[r0 + i] = (float)bf16_left(np, n, wr[i], x, sum);
		}
	}
}

/* ---- a pass's tinyBLAS lanes, in tiles --------------------------------- */

/* llamafile's tinyBLAS for the tokens of a pass, in tiles of 4 rows x
 * TT tokens (haswell 3: its twelve accumulators and three x vectors fill
 * the sixteen registers; AVX-512 4), each weight vector loaded and
 * converted once for the TT tokens: a pass that went token by token read
 * every weight once per token. haswell's eight lanes (hw_multi_tile, ACC
 * 1), the AVX-512 builds' sixteen (lanes_multi). */
#define LANES8_TILE(R, T, r, t)                                                                       \
	hw_multi_tile(R, T, 1, H_, n, y + (uint64_t)(t) * y_stride + (uint64_t)(r), y_stride,          \
		      (const uint8_t *)w + (uint64_t)(r) * w_stride, &lay_, (const uint8_t *)x + (uint64_t)(t) * x_stride, \
		      x_stride)
#define LANES16_TILE(R, T, r, t)                                                                      \
	lanes_multi(R, T, H_, n, y + (uint64_t)(t) * y_stride + (uint64_t)(r), y_stride,                \
		    (const uint8_t *)w + (uint64_t)(r) * w_stride, &lay_, (const uint8_t *)x + (uint64_t)(t) * x_stride, \
		    x_stride)
#define LANES_PASS(ATTR, NAME, TILE, TT, H)                                                        \
	ATTR void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                     \
	{                                                                                          \
		enum { H_ = (H) };                                                                 \
		const q42_llamacpp_vlayout lay_ = vlayout_rows(w_stride, H_);                      \
		FOR_TILES(n_rows, n_tok, 4, TT, TILE)                                              \
	}
LANES_PASS(A2, q42_llamacpp_lanes8_pass_f32_avx2, LANES8_TILE, 3, EL_F32)
LANES_PASS(A2, q42_llamacpp_lanes8_pass_f16_avx2, LANES8_TILE, 3, EL_F16)
LANES_PASS(A2, q42_llamacpp_lanes8_pass_bf16_avx2, LANES8_TILE, 3, EL_BF16)
LANES_PASS(A5, q42_llamacpp_lanes16_pass_f32_avx512, LANES16_TILE, 4, EL_F32)
LANES_PASS(A5, q42_llamacpp_lanes16_pass_f16_avx512, LANES16_TILE, 4, EL_F16)
LANES_PASS(A5, q42_llamacpp_lanes16_pass_bf16_avx512, LANES16_TILE, 4, EL_BF16)
#undef LANES_PASS
#undef LANES16_TILE
#undef LANES8_TILE

/* The BF16 slots' row products: TB for a shape llamafile takes (its
 * lanes for a pass of two tokens or more), else vec_dot per token (VD). */
#define BF16_ROWS(ATTR, VD, PASS, LANES, NAME, TB)                                                 \
	ATTR void NAME(Q42_LLAMACPP_ROWS_ARGS)                                                    \
	{                                                                                         \
		if ((TB) && n_tok > 1 && n % (LANES) == 0) {                                      \
			PASS(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);            \
			return;                                                                   \
		}                                                                                 \
		for (int64_t t = 0; t < n_tok; t++)                                               \
			VD(n, n_rows, y + (uint64_t)t * y_stride, w, w_stride,                    \
			   (const uint8_t *)x + (uint64_t)t * x_stride);                          \
	}
BF16_ROWS(A2, hw_bf16_vd, q42_llamacpp_lanes8_pass_bf16_avx2, 8, q42_llamacpp_rows_hw_bf16_avx2, true)
BF16_ROWS(A2, hw_bf16_vd, q42_llamacpp_lanes8_pass_bf16_avx2, 8, q42_llamacpp_rows_hw_bf16_vd_avx2, false)
BF16_ROWS(A5, wide_bf16_vd, q42_llamacpp_lanes16_pass_bf16_avx512, 16, q42_llamacpp_rows_bf16_wide_avx512, true)
BF16_ROWS(A5, wide_bf16_vd, q42_llamacpp_lanes16_pass_bf16_avx512, 16, q42_llamacpp_rows_bf16_wide_vd_avx512,
	  false)

/* ---- the V product of a short encoder pass ------------------------------ */

/* q42_llamacpp_dot_f32_vd_cols: sixteen columns a vector, element k of
 * each gathered, each product rounded, then added in k order to a sum
 * from 0, the last n % 8 fused (the scalar leftover loop's order; the
 * file's pragma forbids fusing the others). Columns of 64 or more elements keep the scalar form
 * (their whole 64-steps are summed first). */
A5 void q42_llamacpp_dot_f32_vd_cols_avx512(int64_t n, int64_t n_cols, float *out, const float *w,
					    int64_t col_stride, const float *x)
{
	if (n >= 64 || col_stride > INT32_MAX / 16) {
		q42_llamacpp_dot_f32_vd_cols(n, n_cols, out, w, col_stride, x);
		return;
	}
	const __m512i idx = _mm512_mullo_epi32(
		_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
		_mm512_set1_epi32((int32_t)col_stride));
	for (int64_t c = 0; c < n_cols; c += 16) {
		const __mmask16 m = tail_mask(n_cols - c);
		const float *base = w + c * col_stride;
		__m512 acc = _mm512_setzero_ps();
		for (int64_t k = 0; k < n; k++) {
			const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, base + k, 4);
			acc = k < n - n % 8 ? _mm512_add_ps(acc, _mm512_mul_ps(v, _mm512_set1_ps(x[k])))
					    : _mm512_fmadd_ps(v, _mm512_set1_ps(x[k]), acc);
		}
		_mm512_mask_storeu_ps(out + c, m, acc);
	}
}

#endif
