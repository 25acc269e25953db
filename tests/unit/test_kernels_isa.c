/* test_kernels_isa.c -- the per-ISA kernel tables against the scalar one.
 *
 * Q8_0.Q8_0 variants must be bit-identical to the scalar reference (they
 * only do the integer block sums in SIMD). F32.F32 variants sum in float
 * lanes with FMA instead of one double, so they may differ by rounding;
 * the allowed difference is (n/8 + 16) f32 ulps of sum |w_i * x_i| plus
 * one ulp of the result -- a loose multiple of the worst-case error of a
 * float sum of n/8 terms per lane. ISAs this CPU lacks are checked to be
 * refused (NULL), never run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "kernels/q42_kernels.h"
#include "formats/q42_types.h"

static const enum q42_isa isas[] = {Q42_ISA_AVX2, Q42_ISA_AVX512};

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float frand(void)
{
	return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

static void test_detect(void **state)
{
	(void)state;
	enum q42_isa best = q42_isa_detect();
	assert_true(best == Q42_ISA_SCALAR || best == Q42_ISA_AVX2 || best == Q42_ISA_AVX512);
	assert_non_null(q42_kernels_get(Q42_DTYPE_Q8_0, best));
	assert_ptr_equal(q42_kernels_get(Q42_DTYPE_Q8_0, Q42_ISA_BEST),
			 q42_kernels_get(Q42_DTYPE_Q8_0, best));
	assert_string_equal(q42_isa_name(Q42_ISA_BEST), q42_isa_name(best));
	assert_string_equal(q42_isa_name(Q42_ISA_SCALAR), "scalar");
	/* an ISA above the best one must be refused, not handed out */
	if (best == Q42_ISA_SCALAR)
		assert_null(q42_kernels_get(Q42_DTYPE_F32, Q42_ISA_AVX2));
	if (best != Q42_ISA_AVX512)
		assert_null(q42_kernels_get(Q42_DTYPE_F32, Q42_ISA_AVX512));
}

/* Every ISA table has every scalar type, with the same activation type. */
static void test_tables_complete(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		for (uint32_t t = 0; t < Q42_DTYPE_COUNT_; t++) {
			const q42_type_kernels *s = q42_kernels_get(t, Q42_ISA_SCALAR);
			const q42_type_kernels *v = q42_kernels_get(t, isas[i]);
			if (v == NULL) {
				assert_true(s == NULL || q42_isa_detect() < isas[i]);
				continue;
			}
			assert_non_null(s);
			assert_int_equal(v->vec_dot_type, s->vec_dot_type);
			assert_ptr_equal(v->dequant, s->dequant);
			assert_ptr_equal(v->quantize, s->quantize);
			assert_int_equal(v->vec_dot != NULL, s->vec_dot != NULL);
		}
	}
}

static void test_q8_0_exact(void **state)
{
	(void)state;
	const q42_type_kernels *ref = q42_kernels_get(Q42_DTYPE_Q8_0, Q42_ISA_SCALAR);
	int ran = 0;
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		const q42_type_kernels *k = q42_kernels_get(Q42_DTYPE_Q8_0, isas[i]);
		if (k == NULL)
			continue;
		ran++;
		srand(7);
		/* block counts around the 8-block step, and a long row */
		static const int nbs[] = {1, 2, 7, 8, 9, 15, 16, 17, 64, 129};
		for (size_t c = 0; c < sizeof nbs / sizeof nbs[0]; c++) {
			size_t nbytes = (size_t)nbs[c] * 34;
			uint8_t *w = malloc(nbytes + 1), *x = malloc(nbytes + 1);
			assert_true(w && x);
			/* random bytes, -128 included; +1 so rows start unaligned */
			for (size_t j = 0; j < nbytes + 1; j++) {
				w[j] = (uint8_t)rand();
				x[j] = (uint8_t)rand();
			}
			for (int b = 0; b < nbs[c]; b++) {
				uint16_t dw = q42_f32_to_f16(frand()), dx = q42_f32_to_f16(frand());
				memcpy(w + 1 + b * 34, &dw, 2);
				memcpy(x + 1 + b * 34, &dx, 2);
			}
			float a = NAN, s = NAN;
			k->vec_dot(nbs[c] * 32, &a, w + 1, x + 1);
			ref->vec_dot(nbs[c] * 32, &s, w + 1, x + 1);
			if (bits(a) != bits(s))
				fail_msg("%s q8_0 %d blocks: %a, scalar %a", q42_isa_name(isas[i]),
					 nbs[c], (double)a, (double)s);
			free(w);
			free(x);
		}
	}
	if (ran == 0)
		skip();
}

static void test_f32_tolerance(void **state)
{
	(void)state;
	const q42_type_kernels *ref = q42_kernels_get(Q42_DTYPE_F32, Q42_ISA_SCALAR);
	int ran = 0;
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		const q42_type_kernels *k = q42_kernels_get(Q42_DTYPE_F32, isas[i]);
		if (k == NULL)
			continue;
		ran++;
		srand(11);
		static const int ns[] = {1, 7, 31, 32, 33, 63, 64, 65, 100, 288, 4096, 11008};
		for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
			int n = ns[c];
			float *w = malloc((size_t)(n + 1) * 4), *x = malloc((size_t)(n + 1) * 4);
			assert_true(w && x);
			double mag = 0.0;
			for (int j = 0; j <= n; j++) {
				w[j] = frand();
				x[j] = frand() * 10.0f;
				if (j > 0)
					mag += fabs((double)w[j] * x[j]);
			}
			float a, s;
			k->vec_dot(n, &a, w + 1, x + 1);
			ref->vec_dot(n, &s, w + 1, x + 1);
			double tol = (n / 8 + 16) * 0x1p-24 * mag + fabs((double)s) * 0x1p-23;
			if (fabs((double)a - s) > tol)
				fail_msg("%s f32 n=%d: %.9g, scalar %.9g, tolerance %.3g",
					 q42_isa_name(isas[i]), n, (double)a, (double)s, tol);
			free(w);
			free(x);
		}
	}
	if (ran == 0)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_tables_complete),
		cmocka_unit_test(test_q8_0_exact),
		cmocka_unit_test(test_f32_tolerance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
