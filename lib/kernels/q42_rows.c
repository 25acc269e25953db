/* q42_rows.c -- multi-row forms of single-row vec_dot kernels (see
 * q42_rows.h).
 *
 * Each function here restates the float chain of one vec_dot of
 * q42_kernels_avx512.c for four weight rows at once: integer block sums
 * are exact whichever way they are formed, and every float operation of a
 * row happens in the order the single-row kernel performs it (the
 * fp-contract pragma of q42_kernels_impl.h forbids fusing). tests/unit/
 * test_rows.c holds each one to its vec_dot bit for bit. Never called
 * before q42_isa_detect() reported the instruction set.
 */
#include "kernels/q42_kernels_x86.h"
#include "kernels/q42_rows.h"

#if defined(__x86_64__) || defined(__i386__)

#define A5 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define A5_INLINE \
	static inline __attribute__((always_inline, target( \
		"avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

#define ROWS 4

/* Eight int32 partials of one q8_0 block pair (w any byte, y never -128). */
A5_INLINE __m256i q8_0_isum(const uint8_t *a, const uint8_t *b)
{
	const __m256i w = _mm256_loadu_si256((const __m256i *)(a + Q8_0_QS));
	const __m256i y = _mm256_loadu_si256((const __m256i *)(b + Q8_0_QS));
	return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(w),
				   _mm256_sign_epi8(y, w));
}

/* q42_dot_q8_0_avx512 for nr <= ROWS rows: per group of eight blocks the
 * eight terms isum * (d_w * d_x) are added to the row's sum one by one,
 * then each remaining block's term. */
A5_INLINE void q8_0_rows(int64_t nb, int nr, const uint8_t *const *wr, const uint8_t *x,
			 float *sum)
{
	int64_t i = 0;
	for (int k = 0; k < nr; k++)
		sum[k] = 0.0f;
	for (; i + 8 <= nb; i += 8) {
		const uint8_t *b = x + i * Q8_0_BYTES;
		const __m256 dx = x86_halves8(b + Q8_0_D, Q8_0_BYTES);
		for (int k = 0; k < nr; k++) {
			const uint8_t *a = wr[k] + i * Q8_0_BYTES;
			__m256i v[8];
			for (int j = 0; j < 8; j++)
				v[j] = q8_0_isum(a + j * Q8_0_BYTES, b + j * Q8_0_BYTES);
			const __m256 s = _mm256_cvtepi32_ps(x86_reduce8(v));
			sum[k] = x86_add_serial8(
				sum[k], _mm256_mul_ps(s, _mm256_mul_ps(x86_halves8(a + Q8_0_D, Q8_0_BYTES),
								      dx)));
		}
	}
	for (; i < nb; i++) {
		const uint8_t *b = x + i * Q8_0_BYTES;
		const float dx = _cvtsh_ss(q42_ld16(b + Q8_0_D));
		for (int k = 0; k < nr; k++) {
			const uint8_t *a = wr[k] + i * Q8_0_BYTES;
			sum[k] += (float)x86_hsum_i32(q8_0_isum(a, b)) *
				  (_cvtsh_ss(q42_ld16(a + Q8_0_D)) * dx);
		}
	}
}

A5 static void rows_q8_0_avx512(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,
				int64_t n_tok, const void *x, uint64_t x_stride, float *y,
				uint64_t y_stride)
{
	const int64_t nb = n / Q42_QK;
	for (int64_t r0 = 0; r0 < n_rows; r0 += ROWS) {
		const int nr = n_rows - r0 < ROWS ? (int)(n_rows - r0) : ROWS;
		const uint8_t *wr[ROWS];
		float sum[ROWS];
		for (int k = 0; k < nr; k++)
			wr[k] = (const uint8_t *)w + (uint64_t)(r0 + k) * w_stride;
		for (int64_t t = 0; t < n_tok; t++) {
			q8_0_rows(nb, nr, wr, (const uint8_t *)x + (uint64_t)t * x_stride, sum);
			for (int k = 0; k < nr; k++)
				y[(uint64_t)t * y_stride + (uint64_t)(r0 + k)] = sum[k];
		}
	}
}

q42_compat_rows_fn q42_rows_for(void (*dot)(int64_t n, float *out, const void *w, const void *x))
{
	if (dot == q42_dot_q8_0_avx512)
		return rows_q8_0_avx512;
	return NULL;
}

#else

q42_compat_rows_fn q42_rows_for(void (*dot)(int64_t n, float *out, const void *w, const void *x))
{
	(void)dot;
	return NULL;
}

#endif
