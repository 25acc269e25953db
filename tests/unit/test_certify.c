/* test_certify.c -- kernel certification (q42_certify.h) on the CPU: the
 * best ISA's tables certify against the scalar ones, the run is a pure
 * function of the seed, the generator is splitmix64 as documented, and the
 * comparison catches a corrupted result -- a vec_dot one ulp off, a NaN, a
 * value outside the tolerance -- while accepting one inside it. Without a
 * Vulkan build, certifying Vulkan is refused as unsupported.
 */
#include "config.h"
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "measure/q42_certify.h"
#include "measure/q42_certify_cases.h"
#include "common/q42_types.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_kernels.h"
#include "vulkan/q42_vk.h"

#define MAX_CASES 512

struct collect {
	uint32_t n;
	q42_certify_result r[MAX_CASES];
};

static void collect_fn(const q42_certify_result *r, void *arg)
{
	struct collect *c = arg;
	if (c->n < MAX_CASES)
		c->r[c->n] = *r;
	c->n++;
}

static bool has_kernel(const struct collect *c, const char *name)
{
	for (uint32_t i = 0; i < c->n && i < MAX_CASES; i++)
		if (strcmp(c->r[i].kernel, name) == 0)
			return true;
	return false;
}

static void test_cpu_passes(void **state)
{
	(void)state;
	static struct collect c;
	q42_err err = {0};
	uint32_t n_fail = 99;
	c.n = 0;
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_CPU, -1, 7, collect_fn, &c, &n_fail, &err), Q42_OK);
	assert_true(c.n > 100 && c.n <= MAX_CASES);
	for (uint32_t i = 0; i < c.n; i++)
		if (!c.r[i].pass)
			fail_msg("%s %s: max_abs %g max_rel %g", c.r[i].kernel, c.r[i].shape,
				 c.r[i].max_abs, c.r[i].max_rel);
	assert_int_equal(n_fail, 0);
	static const char *const names[] = {"vec_dot.q4_0", "vec_dot.q4_K", "vec_dot.q6_K",
					    "vec_dot.f16", "dequant.q8_0", "quantize.q8_0",
					    "quantize.q8_K", "llamacpp.softmax", "llamacpp.rope",
					    "llamacpp.dot_f16"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!has_kernel(&c, names[i]))
			fail_msg("no case for %s", names[i]);
	/* where the engine would repack Q5_0, certify runs that form too */
	q42_llamacpp_packed pk;
	if (q42_llamacpp_select_packed(Q42_DTYPE_Q5_0, 32, 768, Q42_LLAMACPP_MATMUL, Q42_ISA_BEST, &pk) &&
	    !has_kernel(&c, "llamacpp.r16-q5_0"))
		fail_msg("no case for llamacpp.r16-q5_0");
}

/* Same seed, same cases and errors; the callback may be NULL. */
static void test_cpu_deterministic(void **state)
{
	(void)state;
	static struct collect a, b;
	q42_err err = {0};
	uint32_t fa = 0, fb = 0, fn = 0;
	a.n = b.n = 0;
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_CPU, -1, 3, collect_fn, &a, &fa, &err), Q42_OK);
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_CPU, -1, 3, collect_fn, &b, &fb, &err), Q42_OK);
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_CPU, -1, 3, NULL, NULL, &fn, &err), Q42_OK);
	assert_int_equal(a.n, b.n);
	assert_int_equal(fa, fn);
	assert_memory_equal(a.r, b.r, sizeof a.r[0] * a.n);
}

/* splitmix64 from 0: the published first outputs. */
static void test_splitmix64(void **state)
{
	(void)state;
	uint64_t s = 0;
	assert_true(q42_certify_next(&s) == 0xE220A8397B1DCDAFull);
	assert_true(q42_certify_next(&s) == 0x6E789E6AA1B965F4ull);
	assert_true(q42_certify_next(&s) == 0x06C45D188009454Full);
	s = 5;
	for (int i = 0; i < 1000; i++) {
		const float u = q42_certify_unit(&s);
		assert_true(u >= -1.0f && u < 1.0f);
	}
}

/* A candidate vec_dot one ulp away from the scalar result fails at
 * tolerance 0, as a SIMD kernel that rounded differently would. */
static void test_corrupted_dot_caught(void **state)
{
	(void)state;
	const q42_type_kernels *k = q42_kernels_get(Q42_DTYPE_Q4_K, Q42_ISA_SCALAR);
	const q42_type_kernels *xq = q42_kernels_get(k->vec_dot_type, Q42_ISA_SCALAR);
	static uint8_t w[4 * 144], xb[4 * 292];
	float x[1024], got = 0.0f;
	uint64_t s = 11;
	assert_true(q42_certify_weights(Q42_DTYPE_Q4_K, w, 1024, &s));
	for (int i = 0; i < 1024; i++)
		x[i] = q42_certify_unit(&s);
	xq->quantize(x, xb, 1024);
	k->vec_dot(1024, &got, w, xb);
	const double want = (double)got;
	q42_certify_result r;

	q42_certify_begin(&r, "vec_dot.q4_K", 0.0, 0.0, "n=%d", 1024);
	q42_certify_compare(&r, &got, &want, NULL, 1);
	assert_true(r.pass);
	assert_true(r.max_abs == 0.0);

	float bad = nextafterf(got, INFINITY);
	q42_certify_begin(&r, "vec_dot.q4_K", 0.0, 0.0, "n=%d", 1024);
	q42_certify_compare(&r, &bad, &want, NULL, 1);
	assert_false(r.pass);
	assert_true(r.max_abs > 0.0);
}

/* Either bound passes an element; a NaN never does; max_rel uses the
 * floor when |want| is below it. */
static void test_compare_bounds(void **state)
{
	(void)state;
	const double want[3] = {1.0, 0.0, -100.0};
	const float in_abs[3] = {1.0f + 0x1p-20f, 0.5e-6f, -100.0f};
	q42_certify_result r;
	q42_certify_begin(&r, "k", 1e-6, 0.0, "s");
	q42_certify_compare(&r, in_abs, want, NULL, 3);
	assert_true(r.pass);
	assert_true(fabs(r.max_rel - 0.5) < 1e-6); /* 0.5e-6 over the floor 1e-6 */

	const float in_rel[3] = {1.0f, 0.0f, -100.001f};
	q42_certify_begin(&r, "k", 0.0, 2e-5, "s");
	q42_certify_compare(&r, in_rel, want, NULL, 3);
	assert_true(r.pass);
	q42_certify_begin(&r, "k", 0.0, 5e-6, "s");
	q42_certify_compare(&r, in_rel, want, NULL, 3);
	assert_false(r.pass);

	const float nan3[3] = {1.0f, NAN, -100.0f};
	q42_certify_begin(&r, "k", 1.0, 1.0, "s");
	q42_certify_compare(&r, nan3, want, NULL, 3);
	assert_false(r.pass);
	assert_true(isinf(r.max_abs));

	const double floor3[3] = {1.0, 1000.0, 1.0};
	const float off[3] = {1.0f, 0.5f, -100.0f};
	q42_certify_begin(&r, "k", 0.0, 1e-3, "s");
	q42_certify_compare(&r, off, want, floor3, 3);
	assert_true(r.pass); /* 0.5 <= 1e-3 * 1000 */
}

static void test_backend_refused(void **state)
{
	(void)state;
	q42_err err = {0};
	uint32_t n_fail = 5;
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_AUTO, -1, 0, NULL, NULL, &n_fail, &err), Q42_EARG);
	assert_int_equal(n_fail, 0);
#ifndef Q42_WITH_VULKAN
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_VULKAN, -1, 0, NULL, NULL, &n_fail, &err),
			 Q42_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "built without Vulkan"));
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_passes),
		cmocka_unit_test(test_cpu_deterministic),
		cmocka_unit_test(test_splitmix64),
		cmocka_unit_test(test_corrupted_dot_caught),
		cmocka_unit_test(test_compare_bounds),
		cmocka_unit_test(test_backend_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
