/* q42_x86_products_f16.c -- float-weight row products: F16 (llama.cpp's
 * and the r16-repacked tinyBLAS-like tiles), F32 and BF16 (VDPBF16PS and
 * the AVX2 emulation), with the float reductions they share.
 */
#include "kernels/x86/q42_x86_internal.h"

#if defined(__x86_64__) || defined(__i386__)

/* ---- F16 weights ------------------------------------------------------- */

#define F16_GROUP 4

#define F16_TOK 4 /* tokens per pass of the F16 x F32 product */

/* Decode: one token, so each weight byte is used once and the product is
 * bound by memory. Eight rows in flight, and the next eight rows' bytes
 * at the same offset are prefetched (rows of a few KiB are too short for
 * the hardware prefetcher to ramp up on each). One chain of sixteen lanes
 * per row, as the scalar product. */
A5 static void f16_f32_one(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const float *v,
			   float *y)
{
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP], *nx[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		__m512 acc[GROUP];
		UNROLL
		for (int r = 0; r < GROUP; r++)
			acc[r] = _mm512_setzero_ps();
		int64_t k = 0;
		for (; k + 32 <= n; k += 32) {
			prefetch_rows(nx, 2 * k, 64);
			const __m512 x0 = _mm512_loadu_ps(v + k), x1 = _mm512_loadu_ps(v + k + 16);
			UNROLL
			for (int r = 0; r < GROUP; r++)
				acc[r] = _mm512_fmadd_ps(
					x0, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(wr[r] + 2 * k))),
					acc[r]);
			UNROLL
			for (int r = 0; r < GROUP; r++)
				acc[r] = _mm512_fmadd_ps(
					x1,
					_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(wr[r] + 2 * k + 32))),
					acc[r]);
		}
		if (k + 16 <= n) {
			const __m512 x0 = _mm512_loadu_ps(v + k);
			UNROLL
			for (int r = 0; r < GROUP; r++)
				acc[r] = _mm512_fmadd_ps(
					x0, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(wr[r] + 2 * k))),
					acc[r]);
		}
		float out[GROUP];
		UNROLL
		for (int r = 0; r < GROUP; r++)
			out[r] = reduce16(acc[r]);
		store_group(y, r0, n_rows, out, GROUP);
	}
}

/* Row pointers of a call over F16 rows, in the file's layout (16-element
 * chunk c of a row at 32 c) or the R16 one (q42_pack.h: chunk c of the
 * group at 512 c, row r % 16 of it at 32 (r % 16)); chunk c of row i is
 * at wr[i] + c * F16_CS(r16). */
#define F16_CS(r16) ((r16) ? 512 : 32)
static void f16_rows(const void *w, uint64_t stride, int64_t r0, int64_t n_rows, int g, bool r16,
		     const uint8_t **wr)
{
	for (int r = 0; r < g; r++) {
		const int64_t i = r0 + r < n_rows ? r0 + r : n_rows - 1;
		wr[r] = (const uint8_t *)w + (r16 ? (uint64_t)(i / 16) * 16 * stride + (uint64_t)(i % 16) * 32
						  : (uint64_t)i * stride);
	}
}

/* AMX F16: 16 FMA lanes over whole 16-element steps. Four rows times
 * F16_TOK tokens per pass (each widened weight vector serves every token
 * of the pass); each (row, token) keeps its own lanes, so the order per
 * output element is the single-product one. For decode and short calls. */
A5 static void f16_f32_few(Q42_LLAMACPP_ROWS_ARGS, bool r16)
{
	const int64_t cs = F16_CS(r16);
	for (int64_t r0 = 0; r0 < n_rows; r0 += F16_GROUP) {
		const uint8_t *wr[F16_GROUP];
		f16_rows(w, w_stride, r0, n_rows, F16_GROUP, r16, wr);
		for (int64_t t0 = 0; t0 < n_tok; t0 += F16_TOK) {
			const int nt = n_tok - t0 < F16_TOK ? (int)(n_tok - t0) : F16_TOK;
			const float *v[F16_TOK];
			__m512 acc[F16_TOK][F16_GROUP];
			UNROLL
			for (int t = 0; t < F16_TOK; t++) {
				/* missing tokens repeat the last one; never stored */
				v[t] = (const float *)((const uint8_t *)x +
						       (uint64_t)(t0 + (t < nt ? t : nt - 1)) * x_stride);
				UNROLL
				for (int r = 0; r < F16_GROUP; r++)
					acc[t][r] = _mm512_setzero_ps();
			}
			if (nt == F16_TOK) {
				for (int64_t k = 0; k + 16 <= n; k += 16) {
					__m512 wv[F16_GROUP];
					UNROLL
					for (int r = 0; r < F16_GROUP; r++)
						wv[r] = _mm512_cvtph_ps(
							_mm256_loadu_si256((const __m256i *)(wr[r] + k / 16 * cs)));
					UNROLL
					for (int t = 0; t < F16_TOK; t++) {
						const __m512 xv = _mm512_loadu_ps(v[t] + k);
						UNROLL
						for (int r = 0; r < F16_GROUP; r++)
							acc[t][r] = _mm512_fmadd_ps(xv, wv[r], acc[t][r]);
					}
				}
			} else {
				for (int t = 0; t < nt; t++)
					for (int64_t k = 0; k + 16 <= n; k += 16) {
						const __m512 xv = _mm512_loadu_ps(v[t] + k);
						UNROLL
						for (int r = 0; r < F16_GROUP; r++)
							acc[t][r] = _mm512_fmadd_ps(
								xv,
								_mm512_cvtph_ps(_mm256_loadu_si256(
									(const __m256i *)(wr[r] + k / 16 * cs))),
								acc[t][r]);
					}
			}
			for (int t = 0; t < nt; t++) {
				float out[F16_GROUP];
				UNROLL
				for (int r = 0; r < F16_GROUP; r++)
					out[r] = reduce16(acc[t][r]);
				store_group(y + (uint64_t)(t0 + t) * y_stride, r0, n_rows, out, F16_GROUP);
			}
		}
	}
}

enum {
	F16_PANEL = 16, /* weight rows widened together */
	F16_KC = 512,	/* elements per panel chunk: 32 KiB of floats */
	F16_MR = 4,	/* rows ... */
	F16_NT = 6,	/* ... times tokens in registers */
	F16_MIN_TOK = 8,
};

/* Prompt processing: the f16 -> f32 widening and the L2 traffic cost more
 * than the multiply-adds when every pass re-reads weights and activations.
 * A chunk of sixteen rows is widened once into an L1-sized panel and
 * serves every token; the activation chunk of six tokens serves the four
 * row quads. Each (row, token) pair's sixteen lanes live in acc between
 * chunks and run through k in the scalar order, so the bytes do not
 * change. acc holds F16_PANEL * ntp * 16 floats, ntp = n_tok rounded up
 * to F16_NT (the padding tokens repeat the last one, never stored). */
A5 static void f16_f32_blocked(Q42_LLAMACPP_ROWS_ARGS, float *acc, int64_t ntp, bool r16)
{
	float panel[F16_PANEL * F16_KC] __attribute__((aligned(64)));
	const int64_t n16 = n & ~(int64_t)15, cs = F16_CS(r16);
	for (int64_t r0 = 0; r0 < n_rows; r0 += F16_PANEL) {
		const uint8_t *wr[F16_PANEL];
		f16_rows(w, w_stride, r0, n_rows, F16_PANEL, r16, wr);
		for (int64_t k0 = 0; k0 < n16; k0 += F16_KC) {
			const int64_t kl = n16 - k0 < F16_KC ? n16 - k0 : F16_KC;
			for (int r = 0; r < F16_PANEL; r++)
				for (int64_t k = 0; k < kl; k += 16)
					_mm512_store_ps(panel + r * F16_KC + k,
							_mm512_cvtph_ps(_mm256_loadu_si256(
								(const __m256i *)(wr[r] + (k0 + k) / 16 * cs))));
			for (int64_t t0 = 0; t0 < ntp; t0 += F16_NT) {
				const float *v[F16_NT];
				UNROLL
				for (int t = 0; t < F16_NT; t++) {
					const int64_t ti = t0 + t < n_tok ? t0 + t : n_tok - 1;
					v[t] = (const float *)((const uint8_t *)x + (uint64_t)ti * x_stride) + k0;
				}
				for (int rs = 0; rs < F16_PANEL; rs += F16_MR) {
					__m512 a[F16_NT][F16_MR];
					/* the first chunk starts from zero (no pass to clear acc) */
					UNROLL
					for (int t = 0; t < F16_NT; t++)
						UNROLL
						for (int r = 0; r < F16_MR; r++)
							a[t][r] = k0 == 0 ? _mm512_setzero_ps()
									  : _mm512_load_ps(acc + ((rs + r) * ntp + t0 + t) * 16);
					for (int64_t k = 0; k < kl; k += 16) {
						__m512 wv[F16_MR];
						UNROLL
						for (int r = 0; r < F16_MR; r++)
							wv[r] = _mm512_load_ps(panel + (rs + r) * F16_KC + k);
						UNROLL
						for (int t = 0; t < F16_NT; t++) {
							const __m512 xv = _mm512_loadu_ps(v[t] + k);
							UNROLL
							for (int r = 0; r < F16_MR; r++)
								a[t][r] = _mm512_fmadd_ps(xv, wv[r], a[t][r]);
						}
					}
					UNROLL
					for (int t = 0; t < F16_NT; t++)
						UNROLL
						for (int r = 0; r < F16_MR; r++)
							_mm512_store_ps(acc + ((rs + r) * ntp + t0 + t) * 16, a[t][r]);
				}
			}
		}
		for (int64_t t = 0; t < n_tok; t++) {
			float out[F16_PANEL];
			for (int r = 0; r < F16_PANEL; r++)
				out[r] = reduce16(_mm512_load_ps(acc + (r * ntp + t) * 16));
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, F16_PANEL);
		}
	}
}

/* Decode over the R16 layout: a group's sixteen rows are one stream, read
 * front to back 512 bytes (one chunk of every row) per step, with lines
 * requested ahead into L2 and L1 as the R16 integer products do on Intel
 * (none on other CPUs: q42_x86_cpu.c); each row keeps its one chain of
 * sixteen lanes, as f16_f32_one. The distances, 4 KiB into L2 and 1 KiB
 * into L1, were the best of those tried in smol360 F16 decode, and each
 * line's two requests are one Q42_X86_PREFETCH_L2_L1 so that they are not
 * issued back to back. Long rows stream below a plain read, mostly
 * because x leaves L1 between groups; prefetching x, or reading it once
 * for several groups, did worse. Measurements: docs/perf/prefetch.md. */
enum { F16_L1_AHEAD = 1024, F16_L2_AHEAD = 4096 };
A5 static void f16_r16_one(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const float *v, float *y)
{
	const bool pf = q42_x86_prefetch_l1();
	for (int64_t r0 = 0; r0 < n_rows; r0 += 16) {
		const uint8_t *g = (const uint8_t *)w + (uint64_t)r0 * w_stride;
		__m512 acc[16];
		UNROLL
		for (int r = 0; r < 16; r++)
			acc[r] = _mm512_setzero_ps();
		for (int64_t k = 0; k + 16 <= n; k += 16, g += 512) {
			const __m512 xv = _mm512_loadu_ps(v + k);
			UNROLL
			for (int o = 0; pf && o < 512; o += 64)
				Q42_X86_PREFETCH_L2_L1(g + o, F16_L2_AHEAD, F16_L1_AHEAD);
			UNROLL
			for (int r = 0; r < 16; r++)
				acc[r] = _mm512_fmadd_ps(
					xv, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(g + 32 * r))),
					acc[r]);
		}
		UNROLL
		for (int r = 0; r < 16; r++)
			y[r0 + r] = reduce16(acc[r]);
	}
}

A5_INLINE void f16_f32_rows(Q42_LLAMACPP_ROWS_ARGS, bool r16)
{
	const int64_t ntp = (n_tok + F16_NT - 1) / F16_NT * F16_NT;
	/* without the accumulator memory the short-call kernel gives the
	 * same bits */
	float *acc = n_tok >= F16_MIN_TOK && n >= 16
			     ? aligned_alloc(64, (size_t)(F16_PANEL * ntp * 16) * sizeof(float))
			     : NULL;
	if (n_tok == 1) {
		if (r16)
			f16_r16_one(n, n_rows, w, w_stride, x, y);
		else
			f16_f32_one(n, n_rows, w, w_stride, x, y);
		return;
	}
	if (acc == NULL) {
		f16_f32_few(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, r16);
		return;
	}
	f16_f32_blocked(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, acc, ntp, r16);
	free(acc);
}

A5 void q42_llamacpp_rows_f16_f32_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	f16_f32_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

/* F16 rows in the R16 layout (whole groups; the rows past them in the
 * file's): the same products, bit for bit. */
A5 void q42_llamacpp_rows_f16_f32_r16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t full = n_rows - n_rows % 16;
	if (full > 0)
		f16_f32_rows(n, full, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
	if (full < n_rows)
		f16_f32_rows(n, n_rows - full, (const uint8_t *)w + (uint64_t)full * w_stride, w_stride, n_tok, x,
			     x_stride, y + full, y_stride, false);
}

void q42_llamacpp_row_f16_r16(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r)
{
	const uint64_t rb = 2 * (uint64_t)n_in, rr = (uint64_t)(r % 16);
	const uint8_t *g = (const uint8_t *)p + (uint64_t)(r / 16) * 16 * rb;
	if (r >= n_out - n_out % 16) {
		memcpy(dst, (const uint8_t *)p + (uint64_t)r * rb, rb);
		return;
	}
	for (int64_t c = 0; c < n_in / 16; c++)
		memcpy((uint8_t *)dst + 32 * (uint64_t)c, g + 512 * (uint64_t)c + 32 * rr, 32);
}

/* The R16 packer of F16 rows: each 32-byte chunk moves as it is. */
A5 void q42_llamacpp_pack_f16_r16_avx512(void *dst, const void *src, int64_t n_in, int64_t n_out)
{
	const uint64_t rb = 2 * (uint64_t)n_in, full = (uint64_t)(n_out - n_out % 16);
	for (uint64_t g = 0; g < full; g += 16)
		for (int64_t c = 0; c < n_in / 16; c++)
			for (uint64_t r = 0; r < 16; r++)
				_mm256_storeu_si256(
					(__m256i *)(void *)((uint8_t *)dst + g * rb + (uint64_t)c * 512 + 32 * r),
					_mm256_loadu_si256((const __m256i *)(const void *)((const uint8_t *)src +
											   (g + r) * rb + 32 * (uint64_t)c)));
	memcpy((uint8_t *)dst + full * rb, (const uint8_t *)src + full * rb, ((uint64_t)n_out - full) * rb);
}

/* Decode on AVX2: four rows in flight (their eight half accumulators, x's
 * two halves and the widened weights fill the sixteen registers), the
 * next four rows' line at the same offset prefetched into L2 as
 * prefetch_rows does; without the prefetch decode ran at two thirds of
 * the rate, and six rows or two groups ahead were no better
 * (docs/perf/prefetch.md). */
A2 static void f16_f32_one_avx2(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride, const float *v,
				float *y)
{
	enum { R = 4 };
	for (int64_t r0 = 0; r0 < n_rows; r0 += R) {
		const uint8_t *wr[R], *nx[R];
		group_rows(w, w_stride, r0, n_rows, R, wr);
		group_rows(w, w_stride, r0 + R < n_rows ? r0 + R : r0, n_rows, R, nx);
		__m256 lo[R], hi[R];
		UNROLL
		for (int r = 0; r < R; r++)
			lo[r] = hi[r] = _mm256_setzero_ps();
		for (int64_t k = 0; k + 16 <= n; k += 16) {
			if (k % 32 == 0)
				UNROLL
				for (int r = 0; r < R; r++)
					_mm_prefetch((const char *)(nx[r] + 2 * k), _MM_HINT_T1);
			const __m256 x0 = _mm256_loadu_ps(v + k), x1 = _mm256_loadu_ps(v + k + 8);
			UNROLL
			for (int r = 0; r < R; r++) {
				lo[r] = _mm256_fmadd_ps(x0, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(wr[r] + 2 * k))),
							lo[r]);
				hi[r] = _mm256_fmadd_ps(
					x1, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(wr[r] + 2 * k + 16))), hi[r]);
			}
		}
		float out[R];
		UNROLL
		for (int r = 0; r < R; r++)
			out[r] = reduce16_halves(lo[r], hi[r]);
		store_group(y, r0, n_rows, out, R);
	}
}

A2 void q42_llamacpp_rows_f16_f32_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	if (n_tok == 1) {
		f16_f32_one_avx2(n, n_rows, w, w_stride, x, y);
		return;
	}
	for (int64_t r0 = 0; r0 < n_rows; r0 += F16_GROUP) {
		const uint8_t *wr[F16_GROUP];
		group_rows(w, w_stride, r0, n_rows, F16_GROUP, wr);
		for (int64_t t = 0; t < n_tok; t++) {
			const float *v = (const float *)((const uint8_t *)x + (uint64_t)t * x_stride);
			__m256 lo[F16_GROUP], hi[F16_GROUP];
			float out[F16_GROUP];
			UNROLL
			for (int r = 0; r < F16_GROUP; r++)
				lo[r] = hi[r] = _mm256_setzero_ps();
			for (int64_t k = 0; k + 16 <= n; k += 16) {
				const __m256 x0 = _mm256_loadu_ps(v + k), x1 = _mm256_loadu_ps(v + k + 8);
				UNROLL
				for (int r = 0; r < F16_GROUP; r++) {
					lo[r] = _mm256_fmadd_ps(x0, _mm256_cvtph_ps(_mm_loadu_si128(
						(const __m128i *)(wr[r] + 2 * k))), lo[r]);
					hi[r] = _mm256_fmadd_ps(x1, _mm256_cvtph_ps(_mm_loadu_si128(
						(const __m128i *)(wr[r] + 2 * k + 16))), hi[r]);
				}
			}
			UNROLL
			for (int r = 0; r < F16_GROUP; r++)
				out[r] = reduce16_halves(lo[r], hi[r]);
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, F16_GROUP);
		}
	}
}

/* ggml_vec_dot_f16: four 16-lane accumulators per 64-element step, folded
 * (s0 + s2) + (s1 + s3), reduced, leftovers added in double. Four rows per
 * group (sixteen accumulators in registers); decode prefetches the next. */
A5 void q42_llamacpp_rows_f16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	enum { R = 4 }; /* rows per group: 16 accumulators in registers */
	const int64_t np = n & ~(int64_t)63;
	for (int64_t r0 = 0; r0 < n_rows; r0 += R) {
		const uint8_t *wr[R], *nx[R];
		group_rows(w, w_stride, r0, n_rows, R, wr);
		group_rows(w, w_stride, r0 + R < n_rows ? r0 + R : r0, n_rows, R, nx);
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m512 s[R][4];
			float out[R];
			UNROLL
			for (int r = 0; r < R; r++)
				UNROLL
				for (int j = 0; j < 4; j++)
					s[r][j] = _mm512_setzero_ps();
			for (int64_t i = 0; i < np; i += 64) {
				/* the next group's 128 bytes at this offset, as in
				 * prefetch_rows (decode streams the output matrix) */
				if (t == 0)
					UNROLL
					for (int r = 0; r < R; r++) {
						_mm_prefetch((const char *)(nx[r] + 2 * i), _MM_HINT_T1);
						_mm_prefetch((const char *)(nx[r] + 2 * i + 64), _MM_HINT_T1);
					}
				UNROLL
				for (int j = 0; j < 4; j++) {
					const int64_t o = 2 * (i + 16 * j);
					const __m512 xv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + o)));
					UNROLL
					for (int r = 0; r < R; r++)
						s[r][j] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(
										  (const __m256i *)(wr[r] + o))),
									  xv, s[r][j]);
				}
			}
			UNROLL
			for (int r = 0; r < R; r++) {
				const __m512 f = _mm512_add_ps(_mm512_add_ps(s[r][0], s[r][2]),
							       _mm512_add_ps(s[r][1], s[r][3]));
				double sum = (double)reduce16(f);
				for (int64_t k = np; k < n; k++)
					sum += (double)(q42_half_at(wr[r] + 2 * k) * q42_half_at(b + 2 * k));
				out[r] = (float)sum;
			}
			store_group(y + (uint64_t)t * y_stride, r0, n_rows, out, R);
		}
	}
}

/* The same products as attention's dots: one token, out[r] per row. */
A5 void q42_llamacpp_dot_f16_rows_avx512(int64_t n, int64_t n_rows, float *out, const void *w,
				       uint64_t w_stride, const void *x)
{
	q42_llamacpp_rows_f16_avx512(n, n_rows, w, w_stride, 1, x, 0, out, 0);
}

A2 void q42_llamacpp_rows_f16_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	const int64_t np = n & ~(int64_t)63;
	for (int64_t r = 0; r < n_rows; r++) {
		const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
		for (int64_t t = 0; t < n_tok; t++) {
			const uint8_t *b = (const uint8_t *)x + (uint64_t)t * x_stride;
			__m256 s[4][2];
			UNROLL
			for (int j = 0; j < 4; j++)
				s[j][0] = s[j][1] = _mm256_setzero_ps();
			for (int64_t i = 0; i < np; i += 64)
				UNROLL
				for (int j = 0; j < 4; j++)
					UNROLL
					for (int h = 0; h < 2; h++) {
						const int64_t o = 2 * (i + 16 * j + 8 * h);
						s[j][h] = _mm256_fmadd_ps(
							_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + o))),
							_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + o))),
							s[j][h]);
					}
			__m256 f[2];
			UNROLL
			for (int h = 0; h < 2; h++)
				f[h] = _mm256_add_ps(_mm256_add_ps(s[0][h], s[2][h]),
						     _mm256_add_ps(s[1][h], s[3][h]));
			double sum = (double)reduce16_halves(f[0], f[1]);
			for (int64_t k = np; k < n; k++)
				sum += (double)(q42_half_at(a + 2 * k) * q42_half_at(b + 2 * k));
			y[(uint64_t)t * y_stride + (uint64_t)r] = (float)sum;
		}
	}
}

/* The same products as attention's dots: one token, out[r] per row. */
A2 void q42_llamacpp_dot_f16_rows_avx2(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
				     const void *x)
{
	q42_llamacpp_rows_f16_avx2(n, n_rows, w, w_stride, 1, x, 0, out, 0);
}


/* zen4's F16 weights (slot Q42_LROWS_F16_TB): ggml_vec_dot_f16 for a lone
 * token, llamafile's tinyBLAS<16> on f16 activations for the tokens of a
 * longer pass (in tiles where PASS is given, else token by token through
 * the f16 lanes product attention uses) */
#define F16_TB_ROWS(SUFFIX, ATTR, PASS)                                                           \
	ATTR void q42_llamacpp_rows_f16_tb_##SUFFIX(Q42_LLAMACPP_ROWS_ARGS)                         \
	{                                                                                         \
		if (n_tok == 1) {                                                                 \
			q42_llamacpp_rows_f16_##SUFFIX(n, n_rows, w, w_stride, 1, x, x_stride, y, y_stride); \
			return;                                                                   \
		}                                                                                 \
		const q42_llamacpp_rows_fn pass = PASS;                                           \
		if (pass != NULL && n % 16 == 0) {                                                \
			pass(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);            \
			return;                                                                   \
		}                                                                                 \
		for (int64_t t = 0; t < n_tok; t++)                                               \
			q42_llamacpp_dot_f16_lanes_rows_##SUFFIX(n, n_rows, y + (uint64_t)t * y_stride, w, \
							       w_stride,                          \
							       (const uint8_t *)x + (uint64_t)t * x_stride); \
	}
F16_TB_ROWS(avx512, A5, q42_llamacpp_lanes16_pass_f16_avx512)
F16_TB_ROWS(avx2, A2, NULL)

/* ---- F32 weights -------------------------------------------------------- */

/* The leftovers (elements np..n-1) of 16 or 8 rows at once, one row per
 * lane, each lane rounded as the scalar loop below rounds it (the lanes
 * never mix): products then sums, the last (n - np) % 8 fused. Short
 * rows, such as a LoRA adapter's B of rank 16, are all leftovers.
 * Returns the rows done. */
A5 static int64_t f32_vd_tail16_avx512(int64_t np, int64_t n, int64_t n_rows, const uint8_t *w,
				       uint64_t w_stride, const float *x, float *y)
{
	int64_t r = 0;
	if (w_stride > (1u << 26))
		return 0;
	const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
					       _mm512_set1_epi32((int)w_stride));
	const int64_t nu = n - (n - np) % 8;
	for (; r + 16 <= n_rows; r += 16) {
		const uint8_t *base = w + (uint64_t)r * w_stride;
		__m512 acc = _mm512_loadu_ps(y + r);
		for (int64_t i = np; i < nu; i++)
			acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_i32gather_ps(idx, base + 4 * i, 1),
							       _mm512_set1_ps(x[i])));
		for (int64_t i = nu; i < n; i++)
			acc = _mm512_fmadd_ps(_mm512_i32gather_ps(idx, base + 4 * i, 1), _mm512_set1_ps(x[i]), acc);
		_mm512_storeu_ps(y + r, acc);
	}
	return r;
}

A2 static int64_t f32_vd_tail16_avx2(int64_t np, int64_t n, int64_t n_rows, const uint8_t *w,
				     uint64_t w_stride, const float *x, float *y)
{
	int64_t r = 0;
	if (w_stride > (1u << 26))
		return 0;
	const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
					       _mm256_set1_epi32((int)w_stride));
	const int64_t nu = n - (n - np) % 8;
	for (; r + 8 <= n_rows; r += 8) {
		const uint8_t *base = w + (uint64_t)r * w_stride;
		__m256 acc = _mm256_loadu_ps(y + r);
		for (int64_t i = np; i < nu; i++)
			acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_i32gather_ps((const float *)(const void *)(base + 4 * i), idx, 1),
							       _mm256_set1_ps(x[i])));
		for (int64_t i = nu; i < n; i++)
			acc = _mm256_fmadd_ps(_mm256_i32gather_ps((const float *)(const void *)(base + 4 * i), idx, 1),
					      _mm256_set1_ps(x[i]), acc);
		_mm256_storeu_ps(y + r, acc);
	}
	return r;
}

/* q42_llamacpp_dot_f32_vd for n_rows rows and one token: the whole 64-steps
 * by the attention kernel, then each row's leftovers, product then sum,
 * each rounded (intrinsics, which the compiler never contracts), groups
 * of rows in lanes; several tokens take the tinyBLAS lanes. Built for
 * AVX-512 and for AVX2 over their attention products. */
#define F32_ROWS(SUFFIX, ATTR, PASS)                                                              \
	ATTR static void f32_vd_rows_##SUFFIX(int64_t n, int64_t n_rows, const uint8_t *w,        \
					      uint64_t w_stride, const float *x, float *y)        \
	{                                                                                         \
		const int64_t np = n & ~(int64_t)63;                                              \
		q42_llamacpp_dot_f32_rows_##SUFFIX(np, n_rows, y, w, w_stride, x);                  \
		const int64_t r0 = np < n ? f32_vd_tail16_##SUFFIX(np, n, n_rows, w, w_stride, x, y) : 0; \
		for (int64_t r = r0; np < n && r < n_rows; r++) {                                 \
			const float *a = (const float *)(const void *)(w + (uint64_t)r * w_stride); \
			float s = y[r];                                                           \
			for (int64_t i = np; i < n; i++)                                          \
				s = _mm_cvtss_f32(i < n - (n - np) % 8                            \
							  ? _mm_add_ss(_mm_set_ss(s), _mm_mul_ss(_mm_set_ss(a[i]), \
												 _mm_set_ss(x[i]))) \
							  : _mm_fmadd_ss(_mm_set_ss(a[i]), _mm_set_ss(x[i]), \
									 _mm_set_ss(s)));          \
			y[r] = s;                                                                 \
		}                                                                                 \
	}                                                                                         \
	ATTR void q42_llamacpp_rows_f32_vd_##SUFFIX(Q42_LLAMACPP_ROWS_ARGS)                           \
	{                                                                                         \
		for (int64_t t = 0; t < n_tok; t++)                                               \
			f32_vd_rows_##SUFFIX(n, n_rows, w, w_stride,                              \
					     (const float *)(const void *)((const uint8_t *)x +   \
									   (uint64_t)t * x_stride), \
					     y + (uint64_t)t * y_stride);                         \
	}                                                                                         \
	ATTR void q42_llamacpp_rows_f32_##SUFFIX(Q42_LLAMACPP_ROWS_ARGS)                              \
	{                                                                                         \
		if (n_tok == 1) {                                                                 \
			f32_vd_rows_##SUFFIX(n, n_rows, w, w_stride, x, y);                       \
			return;                                                                   \
		}                                                                                 \
		const q42_llamacpp_rows_fn pass = PASS;                                           \
		if (pass != NULL && n % 16 == 0) {                                                \
			pass(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);            \
			return;                                                                   \
		}                                                                                 \
		for (int64_t t = 0; t < n_tok; t++)                                               \
			q42_llamacpp_dot_f32_lanes_rows_##SUFFIX(n, n_rows, y + (uint64_t)t * y_stride, w, \
							       w_stride,                          \
							       (const uint8_t *)x + (uint64_t)t * x_stride); \
	}

F32_ROWS(avx512, A5, q42_llamacpp_lanes16_pass_f32_avx512)
F32_ROWS(avx2, A2, NULL)

/* The haswell build's F32 and F16 weights (slots Q42_LROWS_HW_F32 and
 * _HW_F16): a lone token's ggml_vec_dot on the whole 32-steps in AVX2
 * (q42_llamacpp_hw_dot_*_rows_avx2), its leftovers as the build compiles
 * them (F32: rounded products added in order, the last n % 4 fused; F16:
 * each product added in double); the tokens of a longer pass through
 * tinyBLAS<8>, the eight-lane lanes product. */
A2_INLINE void rows_hw_f32(Q42_LLAMACPP_ROWS_ARGS, bool tb)
{
	if (tb && n_tok > 1 && n % 8 == 0) {
		q42_llamacpp_lanes8_pass_f32_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
		return;
	}
	for (int64_t t = 0; t < n_tok; t++) {
		const float *xt = (const float *)(const void *)((const uint8_t *)x + (uint64_t)t * x_stride);
		float *yt = y + (uint64_t)t * y_stride;
		if (tb && n_tok > 1) {
			q42_llamacpp_hw_dot_f32_lanes_rows_avx2(n, n_rows, yt, w, w_stride, xt);
			continue;
		}
		const int64_t np = n & ~(int64_t)31, nu = n - (n - np) % 4;
		q42_llamacpp_hw_dot_f32_rows_avx2(np, n_rows, yt, w, w_stride, xt);
		for (int64_t r = 0; r < n_rows; r++) {
			const float *a = (const float *)(const void *)((const uint8_t *)w + (uint64_t)r * w_stride);
			float s = yt[r];
			for (int64_t i = np; i < n; i++)
				s = _mm_cvtss_f32(i < nu ? _mm_add_ss(_mm_set_ss(s), _mm_mul_ss(_mm_set_ss(a[i]), _mm_set_ss(xt[i])))
							 : _mm_fmadd_ss(_mm_set_ss(a[i]), _mm_set_ss(xt[i]), _mm_set_ss(s)));
			yt[r] = s;
		}
	}
}

A2_INLINE void rows_hw_f16(Q42_LLAMACPP_ROWS_ARGS, bool tb)
{
	if (tb && n_tok > 1 && n % 8 == 0) {
		q42_llamacpp_lanes8_pass_f16_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
		return;
	}
	for (int64_t t = 0; t < n_tok; t++) {
		const uint8_t *xt = (const uint8_t *)x + (uint64_t)t * x_stride;
		float *yt = y + (uint64_t)t * y_stride;
		if (tb && n_tok > 1) {
			q42_llamacpp_hw_dot_f16_lanes_rows_avx2(n, n_rows, yt, w, w_stride, xt);
			continue;
		}
		const int64_t np = n & ~(int64_t)31;
		q42_llamacpp_hw_dot_f16_pad_rows_avx2(np, n_rows, yt, w, w_stride, xt);
		for (int64_t r = 0; r < n_rows; r++) {
			const uint8_t *a = (const uint8_t *)w + (uint64_t)r * w_stride;
			double s = (double)yt[r];
			for (int64_t i = np; i < n; i++)
				s += (double)(_cvtsh_ss((unsigned short)(a[2 * i] | a[2 * i + 1] << 8)) *
					      _cvtsh_ss((unsigned short)(xt[2 * i] | xt[2 * i + 1] << 8)));
			yt[r] = (float)s;
		}
	}
}

/* each for a shape tinyBLAS takes, and (_vd) for one it declines */
A2 void q42_llamacpp_rows_hw_f32_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_hw_f32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
}

A2 void q42_llamacpp_rows_hw_f32_vd_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_hw_f32(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

A2 void q42_llamacpp_rows_hw_f16_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_hw_f16(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, true);
}

A2 void q42_llamacpp_rows_hw_f16_vd_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	rows_hw_f16(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride, false);
}

/* q42_llamacpp_f32_t16_axpy: a group of 16 rows is one vector per
 * element k (16 lanes, or two halves of 8), each lane's product then sum
 * rounded as the scalar loop rounds them; the last group's rows past
 * n_rows are neither read from y nor stored. */
A5 void q42_llamacpp_f32_t16_axpy_avx512(int64_t n, int64_t n_rows, const float *wp, const float *x,
				       float scale, float *y)
{
	const __m512 sc = _mm512_set1_ps(scale);
	for (int64_t r = 0; r < n_rows; r += 16, wp += 16 * n) {
		const __mmask16 m = tail_mask(n_rows - r);
		__m512 s = _mm512_setzero_ps();
		for (int64_t k = 0; k < n - n % 8; k++)
			s = _mm512_add_ps(s, _mm512_mul_ps(_mm512_loadu_ps(wp + 16 * k), _mm512_set1_ps(x[k])));
		for (int64_t k = n - n % 8; k < n; k++)
			s = _mm512_fmadd_ps(_mm512_loadu_ps(wp + 16 * k), _mm512_set1_ps(x[k]), s);
		_mm512_mask_storeu_ps(y + r, m,
				      _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + r), _mm512_mul_ps(s, sc)));
	}
}

A2 void q42_llamacpp_f32_t16_axpy_avx2(int64_t n, int64_t n_rows, const float *wp, const float *x,
				     float scale, float *y)
{
	const __m256 sc = _mm256_set1_ps(scale);
	for (int64_t r = 0; r < n_rows; r += 16, wp += 16 * n)
		for (int64_t h = 0; h < 2 && r + 8 * h < n_rows; h++) {
			const int64_t left = n_rows - r - 8 * h;
			__m256 s = _mm256_setzero_ps();
			for (int64_t k = 0; k < n - n % 8; k++)
				s = _mm256_add_ps(s, _mm256_mul_ps(_mm256_loadu_ps(wp + 16 * k + 8 * h),
								   _mm256_set1_ps(x[k])));
			for (int64_t k = n - n % 8; k < n; k++)
				s = _mm256_fmadd_ps(_mm256_loadu_ps(wp + 16 * k + 8 * h), _mm256_set1_ps(x[k]), s);
			s = _mm256_mul_ps(s, sc);
			if (left >= 8) {
				float *yr = y + r + 8 * h;
				_mm256_storeu_ps(yr, _mm256_add_ps(_mm256_loadu_ps(yr), s));
			} else {
				float t[8];
				_mm256_storeu_ps(t, s);
				for (int64_t i = 0; i < left; i++)
					y[r + 8 * h + i] = _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(y[r + 8 * h + i]),
										    _mm_set_ss(t[i])));
			}
		}
}

/* ---- BF16 weights (AVX-512 BF16) --------------------------------------- */

/* VDPBF16PS is the rounding q42_llamacpp_dot_bf16 and _tb define, so these
 * kernels run it as llama.cpp's AVX-512 BF16 build does; CPUs without it
 * take the AVX2 kernels below (llamacpp/q42_llamacpp.c asks q42_cpu_has_avx512bf16). */
#define A5B Q42_TARGET_AVX512_BF16
#define A5B_INLINE Q42_TARGET_AVX512_BF16_INLINE

A5B_INLINE __m512bh ld_bf16x32(const void *p, int64_t k)
{
	return (__m512bh)_mm512_loadu_ps((const float *)(const void *)((const uint8_t *)p + 2 * k));
}

/* The sum past the whole steps, in double as ggml's tail loop adds it. */
static double bf16_tail(int64_t n, const uint8_t *w, const uint8_t *x, double sum)
{
	for (int64_t k = n - n % 64; k < n; k++)
		sum += (double)(q42_bf16_to_f32(q42_ld16(w + 2 * k)) * q42_bf16_to_f32(q42_ld16(x + 2 * k)));
	return sum;
}

/* y[r] for n_rows rows and one token: GROUP rows in flight, the next
 * group's bytes at the same offset prefetched (decode streams each row
 * once, as f16_f32_one); the two accumulators of all GROUP rows reduced
 * together, then added in double. */
A5B static void bf16_vd_rows(int64_t n, int64_t n_rows, const uint8_t *w, uint64_t w_stride,
			     const uint8_t *x, float *y)
{
	for (int64_t r0 = 0; r0 < n_rows; r0 += GROUP) {
		const uint8_t *wr[GROUP], *nx[GROUP];
		group_rows(w, w_stride, r0, n_rows, GROUP, wr);
		group_rows(w, w_stride, r0 + GROUP < n_rows ? r0 + GROUP : r0, n_rows, GROUP, nx);
		__m512 c[2 * GROUP];
		UNROLL
		for (int i = 0; i < 2 * GROUP; i++)
			c[i] = _mm512_setzero_ps();
		for (int64_t k = 0; k + 64 <= n; k += 64) {
			prefetch_rows(nx, 2 * k, 128);
			const __m512bh x0 = ld_bf16x32(x, k), x1 = ld_bf16x32(x, k + 32);
			UNROLL
			for (int i = 0; i < GROUP; i++) {
				c[i] = _mm512_dpbf16_ps(c[i], ld_bf16x32(wr[i], k), x0);
				c[GROUP + i] = _mm512_dpbf16_ps(c[GROUP + i], ld_bf16x32(wr[i], k + 32), x1);
			}
		}
		const __m512 s = reduce16x16(c);
		const __m512d d = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(s)),
						_mm512_cvtps_pd(_mm256_castpd_ps(
							_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1))));
		float out[GROUP];
		if (n % 64 == 0) {
			_mm256_storeu_ps(out, _mm512_cvtpd_ps(d));
		} else {
			double dd[GROUP];
			_mm512_storeu_pd(dd, d);
			for (int i = 0; i < GROUP; i++)
				out[i] = (float)bf16_tail(n, wr[i], x, dd[i]);
		}
		store_group(y, r0, n_rows, out, GROUP);
	}
}

/* tinyBLAS's one accumulator per output for R rows x T tokens (n a
 * multiple of 32), the R * T sums reduced as _mm512_reduce_add_ps. */
A5B_INLINE void bf16_tb_tile(int R, int T, int64_t n, const uint8_t *w, uint64_t w_stride,
			     const uint8_t *x, uint64_t x_stride, float *y, uint64_t y_stride)
{
	__m512 c[16];
	UNROLL
	for (int i = 0; i < R * T; i++)
		c[i] = _mm512_setzero_ps();
	for (int64_t k = 0; k < n; k += 32) {
		__m512bh xv[4];
		UNROLL
		for (int t = 0; t < T; t++)
			xv[t] = ld_bf16x32(x + (uint64_t)t * x_stride, k);
		UNROLL
		for (int i = 0; i < R; i++) {
			const __m512bh wv = ld_bf16x32(w + (uint64_t)i * w_stride, k);
			UNROLL
			for (int t = 0; t < T; t++)
				c[t * R + i] = _mm512_dpbf16_ps(c[t * R + i], wv, xv[t]);
		}
	}
	if (R == 4 && T == 4) {
		float f[16];
		_mm512_storeu_ps(f, reduce16x16(c));
		for (int t = 0; t < 4; t++)
			for (int i = 0; i < 4; i++)
				y[(uint64_t)t * y_stride + (uint64_t)i] = f[t * 4 + i];
		return;
	}
	UNROLL
	for (int t = 0; t < T; t++)
		UNROLL
		for (int i = 0; i < R; i++)
			y[(uint64_t)t * y_stride + (uint64_t)i] = reduce16(c[t * R + i]);
}

/* Tiles of 4 rows x 4 tokens; a rest of rows or tokens goes one at a
 * time. */
A5B static void bf16_tb_rows(Q42_LLAMACPP_ROWS_ARGS)
{
	for (int64_t t = 0; t < n_tok; t += n_tok - t >= 4 ? 4 : 1)
		for (int64_t r = 0; r < n_rows; r += n_rows - r >= 4 ? 4 : 1) {
			const bool r4 = n_rows - r >= 4, t4 = n_tok - t >= 4;
			const uint8_t *wr = (const uint8_t *)w + (uint64_t)r * w_stride;
			const uint8_t *xt = (const uint8_t *)x + (uint64_t)t * x_stride;
			float *yt = y + (uint64_t)t * y_stride + (uint64_t)r;
			if (r4 && t4)
				bf16_tb_tile(4, 4, n, wr, w_stride, xt, x_stride, yt, y_stride);
			else if (r4)
				bf16_tb_tile(4, 1, n, wr, w_stride, xt, x_stride, yt, y_stride);
			else if (t4)
				bf16_tb_tile(1, 4, n, wr, w_stride, xt, x_stride, yt, y_stride);
			else
				bf16_tb_tile(1, 1, n, wr, w_stride, xt, x_stride, yt, y_stride);
		}
}

/* ---- BF16 without VDPBF16PS (AVX2) ------------------------------------- */

/* The same lanes with FMA: a lane's dword holds a pair of bf16, the odd
 * element in its high half and the even one in its low half, each an f32
 * once masked or shifted into place; the odd product is added first. With
 * the MXCSR's DAZ and FTZ bits set around the loop, each add reads and
 * flushes subnormals as VDPBF16PS does (the bits are restored before the
 * reductions, which run as ggml's do). */
#define MXCSR_DAZ_FTZ 0x8040u

A2_INLINE __m256 bf16_odd(__m256i v)
{
	return _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xFFFF0000u)));
}

A2_INLINE __m256 bf16_even(__m256i v)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

/* sixteen lanes as two halves */
struct lanes16 {
	__m256 lo, hi;
};

/* one VDPBF16PS: 32 bf16 of w and of x into c */
A2_INLINE struct lanes16 dp_bf16x32(struct lanes16 c, const uint8_t *w, const uint8_t *x)
{
	const __m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)w);
	const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)x);
	const __m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(w + 32));
	const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(x + 32));
	c.lo = _mm256_fmadd_ps(bf16_even(a0), bf16_even(b0), _mm256_fmadd_ps(bf16_odd(a0), bf16_odd(b0), c.lo));
	c.hi = _mm256_fmadd_ps(bf16_even(a1), bf16_even(b1), _mm256_fmadd_ps(bf16_odd(a1), bf16_odd(b1), c.hi));
	return c;
}

A2_INLINE float reduce_lanes16(struct lanes16 c)
{
	return reduce16_halves(c.lo, c.hi);
}

/* bf16_vd_rows in two rows at a time (an odd last row paired with
 * itself) */
A2 static void bf16_vd_rows_avx2(int64_t n, int64_t n_rows, const uint8_t *w, uint64_t w_stride,
				 const uint8_t *x, float *y)
{
	const unsigned csr = _mm_getcsr();
	for (int64_t r = 0; r < n_rows; r += 2) {
		const uint8_t *row[2] = {w + (uint64_t)r * w_stride,
					 w + (uint64_t)(r + 1 < n_rows ? r + 1 : r) * w_stride};
		struct lanes16 c[2][2];
		UNROLL
		for (int i = 0; i < 2; i++)
			c[i][0].lo = c[i][0].hi = c[i][1].lo = c[i][1].hi = _mm256_setzero_ps();
		_mm_setcsr(csr | MXCSR_DAZ_FTZ);
		for (int64_t k = 0; k + 64 <= n; k += 64)
			UNROLL
			for (int i = 0; i < 2; i++) {
				c[i][0] = dp_bf16x32(c[i][0], row[i] + 2 * k, x + 2 * k);
				c[i][1] = dp_bf16x32(c[i][1], row[i] + 2 * k + 64, x + 2 * k + 64);
			}
		_mm_setcsr(csr);
		for (int i = 0; i < 2 && r + i < n_rows; i++)
			y[r + i] = (float)bf16_tail(n, row[i], x,
						    (double)reduce_lanes16(c[i][0]) + (double)reduce_lanes16(c[i][1]));
	}
}

/* bf16_tb_rows in tiles of 2 rows x 2 tokens (odd ends paired with
 * themselves) */
A2 static void bf16_tb_rows_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	const unsigned csr = _mm_getcsr();
	for (int64_t t = 0; t < n_tok; t += 2)
		for (int64_t r = 0; r < n_rows; r += 2) {
			const uint8_t *row[2], *tok[2];
			for (int i = 0; i < 2; i++) {
				row[i] = (const uint8_t *)w + (uint64_t)(r + i < n_rows ? r + i : r) * w_stride;
				tok[i] = (const uint8_t *)x + (uint64_t)(t + i < n_tok ? t + i : t) * x_stride;
			}
			struct lanes16 c[2][2];
			UNROLL
			for (int i = 0; i < 2; i++)
				c[i][0].lo = c[i][0].hi = c[i][1].lo = c[i][1].hi = _mm256_setzero_ps();
			_mm_setcsr(csr | MXCSR_DAZ_FTZ);
			for (int64_t k = 0; k < n; k += 32)
				UNROLL
				for (int i = 0; i < 2; i++)
					UNROLL
					for (int j = 0; j < 2; j++)
						c[i][j] = dp_bf16x32(c[i][j], row[i] + 2 * k, tok[j] + 2 * k);
			_mm_setcsr(csr);
			for (int i = 0; i < 2 && r + i < n_rows; i++)
				for (int j = 0; j < 2 && t + j < n_tok; j++)
					y[(uint64_t)(t + j) * y_stride + (uint64_t)(r + i)] = reduce_lanes16(c[i][j]);
		}
}

A2 void q42_llamacpp_rows_bf16_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	if (n_tok == 1)
		bf16_vd_rows_avx2(n, n_rows, w, w_stride, x, y);
	else
		bf16_tb_rows_avx2(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
}

A2 void q42_llamacpp_rows_bf16_vd_avx2(Q42_LLAMACPP_ROWS_ARGS)
{
	for (int64_t t = 0; t < n_tok; t++)
		bf16_vd_rows_avx2(n, n_rows, w, w_stride, (const uint8_t *)x + (uint64_t)t * x_stride,
				  y + (uint64_t)t * y_stride);
}

/* llamacpp/q42_llamacpp.c's rows_bf16_vd: vec_dot for every token */
A5B void q42_llamacpp_rows_bf16_vd_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	for (int64_t t = 0; t < n_tok; t++)
		bf16_vd_rows(n, n_rows, w, w_stride, (const uint8_t *)x + (uint64_t)t * x_stride,
			     y + (uint64_t)t * y_stride);
}

/* llamacpp/q42_llamacpp.c's rows_bf16: vec_dot for a lone token, tinyBLAS for more */
A5B void q42_llamacpp_rows_bf16_avx512(Q42_LLAMACPP_ROWS_ARGS)
{
	if (n_tok == 1)
		bf16_vd_rows(n, n_rows, w, w_stride, x, y);
	else
		bf16_tb_rows(n, n_rows, w, w_stride, n_tok, x, x_stride, y, y_stride);
}

#endif
