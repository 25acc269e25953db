/* test_profile.c -- weight quantizers and the profile dtype rule.
 *
 * Q4_0 and Q8_0 bytes are compared with gguf-py's quantizers (golden files
 * in tests/golden/quant, see its README). TQ2_0 is checked by decoding with
 * the kernels' dequantizer and comparing with the absmean rule written out
 * here a second time, value by value.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "formats/q42_profile.h"
#include "formats/q42_roles.h"
#include "common/q42_types.h"
#include "kernels/q42_kernels.h"

#define N 8192

static void *slurp(const char *name, size_t want)
{
	char path[1024];
	const char *src = getenv("Q42_SRCDIR");
	snprintf(path, sizeof path, "%s/tests/golden/quant/%s", src ? src : ".", name);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	void *p = malloc(want);
	size_t got = fread(p, 1, want, f);
	fclose(f);
	assert_int_equal(got, want);
	return p;
}

static void test_q4_0_golden(void **state)
{
	(void)state;
	float *x = slurp("input.f32", N * 4);
	uint8_t *want = slurp("q4_0.bin", N / 32 * 18), *got = malloc(N / 32 * 18);
	q42_quantize_q4_0(x, got, N);
	for (int b = 0; b < N / 32; b++)
		if (memcmp(got + b * 18, want + b * 18, 18) != 0)
			fail_msg("q4_0 block %d differs from gguf-py", b);
	free(x), free(want), free(got);
}

static void test_q8_0_golden(void **state)
{
	(void)state;
	float *x = slurp("input.f32", N * 4);
	uint8_t *want = slurp("q8_0.bin", N / 32 * 34), *got = malloc(N / 32 * 34);
	q42_err err = {0};
	assert_int_equal(q42_convert(Q42_DTYPE_F32, x, Q42_DTYPE_Q8_0, got, N, false, &err), Q42_OK);
	for (int b = 0; b < N / 32; b++)
		if (memcmp(got + b * 34, want + b * 34, 34) != 0)
			fail_msg("q8_0 block %d differs from gguf-py", b);
	free(x), free(want), free(got);
}

static void test_tq2_0_rule(void **state)
{
	(void)state;
	float *x = slurp("input.f32", N * 4), *deq = malloc(N * 4);
	uint8_t *q = malloc(N / 256 * 66);
	q42_quantize_tq2_0(x, q, N);
	assert_true(q42_dequant(Q42_DTYPE_TQ2_0, q, deq, N));
	for (int b = 0; b < N / 256; b++) {
		double s = 0;
		for (int i = 0; i < 256; i++)
			s += fabs((double)x[b * 256 + i]);
		float d = q42_f16_to_f32(q42_f32_to_f16((float)(s / 256)));
		for (int i = 0; i < 256; i++) {
			float v = x[b * 256 + i];
			int t = d > 0 ? (int)lroundf(v / d) : 0;
			t = t > 1 ? 1 : t < -1 ? -1 : t;
			if (deq[b * 256 + i] != (float)t * d)
				fail_msg("tq2_0 block %d element %d: %g, rule gives %g", b, i,
					 deq[b * 256 + i], (float)t * d);
		}
	}
	free(x), free(deq), free(q);
}

static void test_targets(void **state)
{
	(void)state;
	const uint32_t F32 = Q42_DTYPE_F32, F16 = Q42_DTYPE_F16;
	assert_int_equal(q42_profile_from_name("ffn-q4_0"), Q42_PROFILE_FFN_Q4_0);
	assert_int_equal(q42_profile_from_name("nope"), -1);
	/* FFN to Q4_0 when the row is whole blocks, else the float dtype */
	assert_int_equal(q42_profile_target(Q42_PROFILE_FFN_Q4_0, -1, F32, Q42_ROLE_FFN_UP, 2, 64),
			 Q42_DTYPE_Q4_0);
	assert_int_equal(q42_profile_target(Q42_PROFILE_FFN_Q4_0, -1, F32, Q42_ROLE_FFN_DOWN, 2, 172),
			 F32);
	assert_int_equal(q42_profile_target(Q42_PROFILE_FFN_Q4_0, F16, F32, Q42_ROLE_FFN_DOWN, 2, 172),
			 F16);
	assert_int_equal(q42_profile_target(Q42_PROFILE_FFN_Q4_0, -1, F32, Q42_ROLE_ATTN_Q, 2, 64), F32);
	assert_int_equal(q42_profile_target(Q42_PROFILE_FFN_TQ, -1, F16, Q42_ROLE_FFN_GATE, 2, 256),
			 Q42_DTYPE_TQ2_0);
	assert_int_equal(q42_profile_target(Q42_PROFILE_FFN_TQ, -1, F16, Q42_ROLE_FFN_GATE, 2, 64), F16);
	assert_int_equal(q42_profile_target(Q42_PROFILE_Q8_0, -1, F32, Q42_ROLE_TOKEN_EMBD, 2, 64),
			 Q42_DTYPE_Q8_0);
	/* norms: kept, or F32 when a type is asked for; quantized sources: kept */
	assert_int_equal(q42_profile_target(Q42_PROFILE_Q8_0, -1, F16, Q42_ROLE_ATTN_NORM, 1, 64), F16);
	assert_int_equal(q42_profile_target(Q42_PROFILE_NONE, F16, F16, Q42_ROLE_ATTN_NORM, 1, 64), F32);
	assert_int_equal(q42_profile_target(Q42_PROFILE_Q8_0, -1, Q42_DTYPE_Q4_K, Q42_ROLE_FFN_UP, 2, 256),
			 Q42_DTYPE_Q4_K);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_q4_0_golden),
		cmocka_unit_test(test_q8_0_golden),
		cmocka_unit_test(test_tq2_0_rule),
		cmocka_unit_test(test_targets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
