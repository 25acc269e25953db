/* test_kernels_isa.c -- the per-ISA kernel tables against the scalar one.
 *
 * The claims checked are those of q42_kernels.h: every quantized vec_dot
 * and every q8 activation quantizer is bit-identical to the scalar
 * reference; F32/F16/BF16 dots sum in float lanes instead of one double and
 * may differ by rounding, within (n/8 + 16) f32 ulps of sum |w_i * x_i|
 * plus one ulp of the result -- a loose multiple of the worst-case error
 * of a float sum of n/8 terms per lane. Weights are random bytes with sane
 * f16 scale fields, activations come from the scalar quantizer of random
 * floats (the only source of activations q42 has). ISAs this CPU lacks are
 * checked to be refused (NULL), never run; their tests skip.
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
#include "common/q42_types.h"

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
			assert_int_equal(v->quantize != NULL, s->quantize != NULL);
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
			/* weights: any byte, -128 included; activations: -127..127, all
			 * a quantizer makes; +1 so rows start unaligned */
			for (size_t j = 0; j < nbytes + 1; j++) {
				w[j] = (uint8_t)rand();
				x[j] = (uint8_t)(rand() % 255 - 127);
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


/* Byte offsets of the f16 scale fields of each weight type's block (ggml's
 * block structs); everything else in a block may be any byte. */
struct wtype {
	uint32_t dtype;
	int nhalf;
	int half_off[2];
};

static const struct wtype wtypes[] = {
	{Q42_DTYPE_Q4_0, 1, {0, 0}}, {Q42_DTYPE_Q4_1, 2, {0, 2}}, {Q42_DTYPE_Q5_0, 1, {0, 0}},
	{Q42_DTYPE_Q5_1, 2, {0, 2}}, {Q42_DTYPE_Q8_0, 1, {0, 0}}, {Q42_DTYPE_Q2_K, 2, {80, 82}},
	{Q42_DTYPE_Q3_K, 1, {108, 0}}, {Q42_DTYPE_Q4_K, 2, {0, 2}}, {Q42_DTYPE_Q5_K, 2, {0, 2}},
	{Q42_DTYPE_Q6_K, 1, {208, 0}}, {Q42_DTYPE_TQ1_0, 1, {52, 0}},
	{Q42_DTYPE_TQ2_0, 1, {64, 0}}, {Q42_DTYPE_IQ4_NL, 1, {0, 0}},
	{Q42_DTYPE_IQ4_XS, 1, {0, 0}},
};

static void put_half(uint8_t *p, float f)
{
	uint16_t h = q42_f32_to_f16(f);
	memcpy(p, &h, 2);
}

/* n activations: mostly uniform, some rows with a wide dynamic range. */
static void fill_floats(float *x, int64_t n, int wide)
{
	for (int64_t j = 0; j < n; j++)
		x[j] = frand() * (wide ? (float)(1 << (rand() % 12)) : 1.0f);
}

static void check_quantized(const struct wtype *t)
{
	const q42_type_kernels *ref = q42_kernels_get(t->dtype, Q42_ISA_SCALAR);
	const q42_type_kernels *xq = q42_kernels_get(ref->vec_dot_type, Q42_ISA_SCALAR);
	const q42_dtype_info *wi = q42_dtype_get(t->dtype), *xi = q42_dtype_get(ref->vec_dot_type);
	static const int nbs[] = {1, 2, 3, 7, 8, 9, 16, 17, 33};
	int ran = 0;

	assert_non_null(xq->quantize);
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		const q42_type_kernels *k = q42_kernels_get(t->dtype, isas[i]);
		if (k == NULL)
			continue;
		ran++;
		srand(13 + (int)t->dtype);
		for (size_t c = 0; c < sizeof nbs / sizeof nbs[0]; c++) {
			for (int rep = 0; rep < 4; rep++) {
				const int64_t nb = nbs[c], n = nb * wi->block_elems;
				const size_t wbytes = (size_t)nb * wi->block_bytes;
				const size_t xbytes = (size_t)(n / xi->block_elems) * xi->block_bytes;
				uint8_t *w = malloc(wbytes + 1), *x = malloc(xbytes + 1);
				float *f = malloc((size_t)n * sizeof *f);
				assert_true(w && x && f);
				for (size_t j = 0; j < wbytes + 1; j++)
					w[j] = (uint8_t)rand();
				for (int64_t b = 0; b < nb; b++)
					for (int h = 0; h < t->nhalf; h++)
						put_half(w + 1 + b * wi->block_bytes + t->half_off[h],
							 frand() * 0.05f);
				fill_floats(f, n, rep & 1);
				/* +1: rows need not be aligned */
				xq->quantize(f, x + 1, n);
				float a = NAN, s = NAN;
				k->vec_dot(n, &a, w + 1, x + 1);
				ref->vec_dot(n, &s, w + 1, x + 1);
				if (bits(a) != bits(s))
					fail_msg("%s %s %d blocks rep %d: %a, scalar %a",
						 q42_isa_name(isas[i]), wi->name, (int)nb, rep,
						 (double)a, (double)s);
				free(w);
				free(x);
				free(f);
			}
		}
	}
	if (ran == 0)
		skip();
}

static void test_dot_exact(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof wtypes / sizeof wtypes[0]; t++)
		check_quantized(&wtypes[t]);
}

/* F16 and BF16 against the double-sum reference, F32's tolerance. */
static void test_half_tolerance(void **state)
{
	(void)state;
	static const uint32_t types[] = {Q42_DTYPE_F16, Q42_DTYPE_BF16};
	static const int ns[] = {1, 7, 31, 32, 33, 63, 64, 65, 100, 288, 1000, 1024, 1056, 4096, 11008};
	int ran = 0;
	for (size_t ti = 0; ti < 2; ti++) {
		const q42_type_kernels *ref = q42_kernels_get(types[ti], Q42_ISA_SCALAR);
		for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
			const q42_type_kernels *k = q42_kernels_get(types[ti], isas[i]);
			if (k == NULL)
				continue;
			ran++;
			srand(17);
			for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
				const int n = ns[c];
				float *fw = malloc((size_t)n * 4), *fx = malloc((size_t)n * 4);
				uint16_t *w = malloc((size_t)(n + 1) * 2), *x = malloc((size_t)(n + 1) * 2);
				assert_true(fw && fx && w && x);
				fill_floats(fw, n, 0);
				fill_floats(fx, n, 1);
				ref->quantize(fw, w + 1, n);
				ref->quantize(fx, x + 1, n);
				double mag = 0.0;
				for (int j = 0; j < n; j++) {
					const float a = types[ti] == Q42_DTYPE_F16 ? q42_f16_to_f32(w[j + 1])
										  : q42_bf16_to_f32(w[j + 1]);
					const float b = types[ti] == Q42_DTYPE_F16 ? q42_f16_to_f32(x[j + 1])
										  : q42_bf16_to_f32(x[j + 1]);
					mag += fabs((double)a * b);
				}
				float a, s;
				k->vec_dot(n, &a, w + 1, x + 1);
				ref->vec_dot(n, &s, w + 1, x + 1);
				double tol = (n / 8 + 16) * 0x1p-24 * mag + fabs((double)s) * 0x1p-23;
				if (fabs((double)a - s) > tol)
					fail_msg("%s %s n=%d: %.9g, scalar %.9g, tolerance %.3g",
						 q42_isa_name(isas[i]), q42_dtype_get(types[ti])->name, n,
						 (double)a, (double)s, tol);
				free(fw);
				free(fx);
				free(w);
				free(x);
			}
		}
	}
	if (ran == 0)
		skip();
}

/* Rows that hit every branch of the quantizers: ties at .5 (amax 127 makes
 * d exactly 1), blocks of zeros, small and huge scales, NaN and infinity
 * (handed to the scalar code), and a largest magnitude that occurs twice
 * with both signs (q8_K takes the first). */
static void fill_quant_row(float *x, int64_t n, int kind)
{
	fill_floats(x, n, kind & 1);
	for (int64_t j = 0; j < n; j++) {
		const int64_t blk = j / 32, e = j % 32;
		switch ((blk + kind) % 8) {
		case 0:
			x[j] = e == 3 ? 127.0f : (float)(rand() % 255 - 127) + 0.5f;
			break;
		case 1:
			x[j] = 0.0f;
			break;
		case 2: /* small, yet 1/d stays finite: below that the reference
			 * converts an infinity to int8 (undefined, as in ggml) */
			x[j] *= 0x1p-100f;
			break;
		case 3: /* last: a NaN earlier restarts ggml's max and the
			 * reference then casts values past 127 to int8 (undefined) */
			x[j] = e == 31 ? NAN : x[j];
			break;
		case 4:
			x[j] = e == 9 ? -INFINITY : x[j];
			break;
		case 5:
			x[j] = e == 2 ? -7.0f : e == 20 ? 7.0f : x[j] * 6.0f;
			break;
		case 6:
			x[j] *= 0x1p100f;
			break;
		default:
			break;
		}
	}
}

static void test_quantize_exact(void **state)
{
	(void)state;
	static const uint32_t types[] = {Q42_DTYPE_Q8_0, Q42_DTYPE_Q8_1, Q42_DTYPE_Q8_K};
	static const int nbs[] = {1, 2, 3, 8, 9, 17};
	int ran = 0;
	for (size_t ti = 0; ti < 3; ti++) {
		const q42_type_kernels *ref = q42_kernels_get(types[ti], Q42_ISA_SCALAR);
		const q42_dtype_info *info = q42_dtype_get(types[ti]);
		for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
			const q42_type_kernels *k = q42_kernels_get(types[ti], isas[i]);
			if (k == NULL)
				continue;
			ran++;
			srand(19);
			for (size_t c = 0; c < sizeof nbs / sizeof nbs[0]; c++)
				for (int kind = 0; kind < 10; kind++) {
					const int64_t n = (int64_t)nbs[c] * info->block_elems;
					const size_t bytes = (size_t)nbs[c] * info->block_bytes;
					float *x = malloc((size_t)(n + 1) * sizeof *x);
					uint8_t *qa = malloc(bytes), *qs = malloc(bytes);
					assert_true(x && qa && qs);
					fill_quant_row(x + 1, n, kind);
					memset(qa, 0xA5, bytes);
					memset(qs, 0x5A, bytes);
					k->quantize(x + 1, qa, n);
					ref->quantize(x + 1, qs, n);
					for (size_t j = 0; j < bytes; j++)
						if (qa[j] != qs[j])
							fail_msg("%s %s %d blocks kind %d: byte %zu is %u, scalar %u",
								 q42_isa_name(isas[i]), info->name, nbs[c], kind, j,
								 qa[j], qs[j]);
					free(x);
					free(qa);
					free(qs);
				}
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
		cmocka_unit_test(test_dot_exact),
		cmocka_unit_test(test_half_tolerance),
		cmocka_unit_test(test_quantize_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
