/* test_rows.c -- the multi-row kernels of kernels/q42_rows.h against the
 * vec_dot they stand for.
 *
 * The claim is bit-identity: every element of a rows call equals what the
 * table's vec_dot gives for that weight row and activation row, for row
 * counts that do and do not fill the kernel's groups, lengths with and
 * without a tail of single blocks, and several tokens. Weights are random
 * bytes with sane f16 scales; activations come from the table's own
 * quantizer of random floats. Skipped when this CPU lacks the instruction
 * set a kernel needs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "formats/q42_types.h"
#include "kernels/q42_kernels.h"
#include "kernels/q42_rows.h"

static float frand(void)
{
	return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

static void check_type(uint32_t dtype, enum q42_isa isa)
{
	const q42_type_kernels *k = q42_kernels_get(dtype, isa);
	const q42_type_kernels *xq;
	const int64_t lens[] = {32, 256, 288, 960, 992};
	if (q42_isa_detect() < isa || k == NULL) {
		skip();
		return;
	}
	xq = q42_kernels_get(k->vec_dot_type, isa);
	q42_compat_rows_fn rows = q42_rows_for(k->vec_dot);
	assert_non_null(rows);
	assert_non_null(xq);
	for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
		const int64_t n = lens[li], n_rows = 13, n_tok = 3;
		uint64_t wb = 0, xb = 0;
		assert_true(q42_dtype_nbytes(dtype, (uint64_t)n, (uint64_t)n, &wb));
		assert_true(q42_dtype_nbytes(k->vec_dot_type, (uint64_t)n, (uint64_t)n, &xb));
		uint8_t *w = malloc(wb * (uint64_t)n_rows), *x = malloc(xb * (uint64_t)n_tok);
		float *f = malloc((size_t)n * sizeof *f);
		float y[3 * 16], ref;
		assert_non_null(w);
		assert_non_null(x);
		assert_non_null(f);
		for (uint64_t i = 0; i < wb * (uint64_t)n_rows; i++)
			w[i] = (uint8_t)rand();
		/* sane scales: every block's leading f16 field */
		for (int64_t r = 0; r < n_rows; r++)
			for (uint64_t b = 0; b < wb; b += wb / ((uint64_t)n / 32)) {
				uint16_t h = q42_f32_to_f16(frand() * 0.01f);
				memcpy(w + (uint64_t)r * wb + b, &h, sizeof h);
			}
		for (int64_t t = 0; t < n_tok; t++) {
			for (int64_t i = 0; i < n; i++)
				f[i] = frand() * 3.0f;
			xq->quantize(f, x + (uint64_t)t * xb, n);
		}
		for (int64_t nr = 1; nr <= n_rows; nr++) {
			memset(y, 0, sizeof y);
			rows(n, nr, w, wb, n_tok, x, xb, y, 16);
			for (int64_t t = 0; t < n_tok; t++)
				for (int64_t r = 0; r < nr; r++) {
					k->vec_dot(n, &ref, w + (uint64_t)r * wb, x + (uint64_t)t * xb);
					if (memcmp(&ref, &y[t * 16 + r], sizeof ref) != 0)
						fail_msg("n %lld rows %lld: row %lld token %lld is %.9g, vec_dot gives %.9g",
							 (long long)n, (long long)nr, (long long)r,
							 (long long)t, (double)y[t * 16 + r], (double)ref);
				}
		}
		free(w);
		free(x);
		free(f);
	}
}

static void test_q8_0_avx512(void **state)
{
	(void)state;
	srand(42);
	check_type(Q42_DTYPE_Q8_0, Q42_ISA_AVX512);
}

/* Kernels without a multi-row form get none (the engine keeps vec_dot). */
static void test_none_for_others(void **state)
{
	(void)state;
	assert_null(q42_rows_for(q42_kernels_get(Q42_DTYPE_Q8_0, Q42_ISA_SCALAR)->vec_dot));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_q8_0_avx512),
		cmocka_unit_test(test_none_for_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
