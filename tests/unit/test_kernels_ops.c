/* test_kernels_ops.c -- the float ops of q42_ops.h against double-precision
 * evaluations of the same formulas.
 *
 * The f32 results may differ from the double ones by the roundings of the
 * f32 steps (a few ulps, bounds stated per test); structural properties
 * (masked logits give exactly 0, a NULL weight equals a weight of ones,
 * in-place calls equal out-of-place ones) are checked exactly.
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
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_ops.h"

#define N 777

static float frand(float scale)
{
	return ((float)rand() / (float)RAND_MAX * 2.0f - 1.0f) * scale;
}

/* |got - want| <= ulps * 2^-24 * |want| + abs */
static void near(float got, double want, double ulps, double abs_tol, const char *what, int i)
{
	double tol = ulps * 0x1p-24 * fabs(want) + abs_tol;
	if (!(fabs((double)got - want) <= tol))
		fail_msg("%s[%d]: %.9g, double %.12g (tolerance %.3g)", what, i, (double)got, want, tol);
}

static void test_rmsnorm(void **state)
{
	(void)state;
	static float x[N], w[N], y[N], y1[N], ones[N];
	srand(1);
	for (int i = 0; i < N; i++) {
		x[i] = frand(3.0f);
		w[i] = frand(2.0f);
		ones[i] = 1.0f;
	}
	const float eps = 1e-5f;
	double ss = 0.0;
	for (int i = 0; i < N; i++)
		ss += (double)x[i] * x[i];
	const double scale = 1.0 / sqrt(ss / N + (double)eps);

	q42_op_rmsnorm(N, y, x, w, eps);
	for (int i = 0; i < N; i++)
		near(y[i], x[i] * scale * w[i], 8, 0, "rmsnorm", i);
	q42_op_rmsnorm(N, y, x, NULL, eps);
	q42_op_rmsnorm(N, y1, x, ones, eps);
	assert_memory_equal(y, y1, sizeof y);
	for (int i = 0; i < N; i++)
		near(y[i], x[i] * scale, 6, 0, "rmsnorm (no weight)", i);
	memcpy(y1, x, sizeof x);
	q42_op_rmsnorm(N, y1, y1, NULL, eps); /* in place */
	assert_memory_equal(y, y1, sizeof y);
}

/* The many-row form gives each row q42_op_rmsnorm's bits: 0 to 9 rows
 * (groups of four and a rest), with and without a weight, in place. */
static void test_rmsnorm_rows(void **state)
{
	(void)state;
	enum { ROWS = 9, M = 37 };
	static float x[ROWS * M], w[M], want[ROWS * M], got[ROWS * M];
	srand(2);
	for (int i = 0; i < ROWS * M; i++)
		x[i] = frand(3.0f) * (float)(1 + i / M);
	for (int i = 0; i < M; i++)
		w[i] = frand(2.0f);
	for (int rows = 0; rows <= ROWS; rows++)
		for (int wi = 0; wi < 2; wi++) {
			const float *wp = wi ? w : NULL;
			for (int r = 0; r < rows; r++)
				q42_op_rmsnorm(M, want + r * M, x + r * M, wp, 1e-6f);
			q42_op_rmsnorm_rows(M, rows, got, x, wp, 1e-6f);
			assert_memory_equal(want, got, sizeof(float) * (size_t)(rows * M));
			memcpy(got, x, sizeof x);
			q42_op_rmsnorm_rows(M, rows, got, got, wp, 1e-6f);
			assert_memory_equal(want, got, sizeof(float) * (size_t)(rows * M));
		}
}

static void test_softmax(void **state)
{
	(void)state;
	static float x[N], y[N], y1[N];
	srand(2);
	for (int i = 0; i < N; i++)
		x[i] = frand(20.0f);
	x[5] = x[100] = -INFINITY; /* masked positions */
	double max = -INFINITY, sum = 0.0;
	for (int i = 0; i < N; i++)
		max = fmax(max, x[i]);
	for (int i = 0; i < N; i++)
		sum += exp((double)x[i] - max);
	q42_op_softmax(N, y, x);
	double total = 0.0;
	for (int i = 0; i < N; i++) {
		total += y[i];
		if (isinf(x[i]))
			continue; /* masked: checked for an exact 0 below */
		/* x - max is rounded to f32 first: its error, up to |x - max| ulps
		 * of 1, becomes a relative error of exp */
		near(y[i], exp((double)x[i] - max) / sum, 8 + fabs((double)x[i] - max), 0,
		     "softmax", i);
	}
	assert_true(y[5] == 0.0f && y[100] == 0.0f);
	assert_true(fabs(total - 1.0) < 1e-5);
	memcpy(y1, x, sizeof x);
	q42_op_softmax(N, y1, y1);
	assert_memory_equal(y, y1, sizeof y);

	float c[4] = {3.0f, 3.0f, 3.0f, 3.0f}, p[4];
	q42_op_softmax(4, p, c);
	for (int i = 0; i < 4; i++)
		assert_true(p[i] == 0.25f);
}

static void test_silu_swiglu(void **state)
{
	(void)state;
	static float x[N], g[N], y[N], z[N];
	srand(3);
	for (int i = 0; i < N; i++) {
		x[i] = frand(30.0f);
		g[i] = frand(4.0f);
	}
	x[0] = -200.0f;
	x[1] = 200.0f;
	x[2] = 0.0f;
	q42_op_silu(N, y, x);
	for (int i = 0; i < N; i++)
		near(y[i], x[i] / (1.0 + exp(-(double)x[i])), 4, 1e-37, "silu", i);
	assert_true(y[1] == 200.0f && y[2] == 0.0f);
	q42_op_swiglu(N, z, x, g);
	for (int i = 0; i < N; i++)
		assert_true(z[i] == y[i] * g[i] || (isnan(z[i]) && isnan(y[i] * g[i])));
}

static void test_elementwise(void **state)
{
	(void)state;
	static float a[N], b[N], y[N];
	srand(4);
	for (int i = 0; i < N; i++) {
		a[i] = frand(100.0f);
		b[i] = frand(100.0f);
	}
	q42_op_add(N, y, a, b);
	for (int i = 0; i < N; i++)
		assert_true(y[i] == (float)((double)a[i] + (double)b[i]));
	q42_op_mul(N, y, a, b);
	for (int i = 0; i < N; i++)
		assert_true(y[i] == (float)((double)a[i] * (double)b[i]));
	q42_op_scale(N, y, a, 0.125f);
	for (int i = 0; i < N; i++)
		assert_true(y[i] == (float)((double)a[i] * 0.125));
	q42_op_add(N, y, a, b);
	q42_op_add(N, a, a, b); /* in place */
	assert_memory_equal(a, y, sizeof y);
}

/* GeGLU: every f16 input (g = 1) against the tanh GELU in double,
 * rounded to f16 -- the table can be off by one f16 step where its f32
 * evaluation rounds across a half-way point, and by the f32 cancellation
 * of 1 + tanh (about |x| 2^-22) where tanh is near -1; the cut-offs
 * exactly; and
 * llama.cpp's table (the inner 1 + a x x fused) differs from the
 * reference at x = -1.99902 (f16 0xbfff) only. */
static void test_geglu(void **state)
{
	(void)state;
	static float x[65536], g[65536], y[65536], z[65536];
	uint32_t n = 0, off = 0, diff = 0;
	for (uint32_t h = 0; h < 65536u; h++) {
		const float v = q42_f16_to_f32((uint16_t)h);
		if (isfinite(v) && v > -10.0f && v < 10.0f) {
			x[n] = v;
			g[n++] = 1.0f;
		}
	}
	q42_op_geglu(n, y, x, g);
	q42_llamacpp_geglu(n, z, x, g);
	for (uint32_t i = 0; i < n; i++) {
		const double xd = x[i];
		const double want = 0.5 * xd * (1.0 + tanh(0.7978845608028654 * xd * (1.0 + 0.044715 * xd * xd)));
		const float w16 = q42_f16_to_f32(q42_f32_to_f16((float)want));
		if (y[i] != w16) {
			/* one f16 step at most */
			const float step = fabsf(w16 - q42_f16_to_f32((uint16_t)(q42_f32_to_f16(w16) + 1u)));
			if (!(fabsf(y[i] - w16) <= step + fabsf(x[i]) * 0x1p-22f))
				fail_msg("gelu(%.9g) = %.9g, double rounded to f16 %.9g", (double)x[i],
					 (double)y[i], (double)w16);
			off++;
		}
		if (y[i] != z[i]) {
			assert_int_equal(q42_f32_to_f16(x[i]), 0xbfff);
			diff++;
		}
	}
	print_message("# gelu table: %u of %u f16 inputs one step from the double value\n", off, n);
	assert_int_equal(diff, 1);
	const float xs[4] = {-10.0f, -11.5f, 10.0f, 12.25f}, gs[4] = {3.0f, -2.0f, 0.5f, -4.0f};
	q42_op_geglu(4, y, xs, gs);
	assert_true(y[0] == 0.0f && y[1] == 0.0f && y[2] == 5.0f && y[3] == -49.0f);
	/* the product with g is the last step, in f32 */
	q42_op_geglu(1, y, &x[1000], &g[0]);
	const float gg = 0.3f;
	q42_op_geglu(1, z, &x[1000], &gg);
	assert_true(z[0] == y[0] * gg);
}

/* Soft-capping: three f32 roundings, tanh of the scaled value. */
static void test_softcap(void **state)
{
	(void)state;
	static float x[N], y[N];
	srand(5);
	for (int i = 0; i < N; i++)
		x[i] = frand(200.0f);
	q42_op_softcap(N, y, x, 30.0f);
	for (int i = 0; i < N; i++) {
		assert_true(y[i] == tanhf(x[i] * (1.0f / 30.0f)) * 30.0f);
		near(y[i], 30.0 * tanh((double)x[i] / 30.0), 8, 1e-6, "softcap", i);
		assert_true(fabsf(y[i]) <= 30.0f);
	}
	q42_op_softcap(N, x, x, 30.0f); /* in place */
	assert_memory_equal(x, y, sizeof y);
}

/* The short convolution's sum: the reference adds each rounded product
 * in order; llama.cpp's x86 build does that for whole groups of 16, then
 * of 8, and fuses the last n % 8 (a width of 3: three fmas). */
static void test_conv_dot(void **state)
{
	(void)state;
	float s[40], c[40];
	srand(6);
	for (int i = 0; i < 40; i++) {
		s[i] = frand(3.0f);
		c[i] = frand(1.0f);
	}
	int differ = 0;
	for (int64_t n = 1; n <= 40; n++) {
		float ref = 0.0f, want = 0.0f;
		const int64_t plain = n >= 16 ? n / 16 * 16 + (n % 16 >= 8 ? 8 : 0) : (n >= 8 ? 8 : 0);
		for (int64_t i = 0; i < n; i++) {
			const float p = s[i] * c[i];
			ref += p;
			want = i < plain ? want + p : fmaf(s[i], c[i], want);
		}
		assert_true(q42_op_conv_dot(n, s, c) == ref);
		assert_true(q42_llamacpp_conv_dot(n, s, c) == want);
		differ += ref != want;
	}
	/* the two orders are different arithmetic, not two spellings */
	assert_true(differ > 0);
	print_message("# conv sums: fused and plain differ for %d of 40 widths\n", differ);
}

/* The MoE router: the k best of sigmoid + bias in order, ties to the
 * lower index, weights the unbiased scores over their double sum; checked
 * against a sort of all experts computed here */
static void test_route_sigmoid(void **state)
{
	(void)state;
	enum { NE = 32 };
	float logit[NE], bias[NE], p[NE], w[NE];
	int32_t id[NE];
	srand(7);
	for (int trial = 0; trial < 200; trial++) {
		const int64_t k = 1 + trial % 8;
		for (int i = 0; i < NE; i++) {
			logit[i] = frand(4.0f);
			bias[i] = trial % 3 == 0 ? 0.0f : frand(0.2f);
		}
		if (trial % 5 == 0) /* equal scores: the lower index first */
			logit[9] = logit[3], bias[9] = bias[3];
		memcpy(p, logit, sizeof p);
		q42_op_route_sigmoid(NE, k, p, bias, id, w);
		float sig[NE];
		int order[NE];
		double sum = 0.0;
		for (int i = 0; i < NE; i++) {
			sig[i] = 1.0f / (1.0f + expf(-logit[i]));
			assert_true(p[i] == sig[i]);
			order[i] = i;
		}
		/* insertion sort, stable: descending by score */
		for (int i = 1; i < NE; i++)
			for (int j = i; j > 0 && sig[order[j]] + bias[order[j]] > sig[order[j - 1]] + bias[order[j - 1]]; j--) {
				const int t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		for (int64_t j = 0; j < k; j++) {
			assert_int_equal(id[j], order[j]);
			sum += (double)sig[order[j]];
		}
		for (int64_t j = 0; j < k; j++)
			assert_true(w[j] == sig[order[j]] / (float)sum);
	}
	/* without a bias the unbiased scores choose; a tiny sum is clamped */
	for (int i = 0; i < 4; i++)
		p[i] = -100.0f - (float)i;
	q42_op_route_sigmoid(4, 2, p, NULL, id, w);
	assert_int_equal(id[0], 0);
	assert_int_equal(id[1], 1);
	assert_true(w[0] == p[0] / 6.103515625e-5f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rmsnorm),
		cmocka_unit_test(test_rmsnorm_rows),
		cmocka_unit_test(test_softmax),
		cmocka_unit_test(test_silu_swiglu),
		cmocka_unit_test(test_elementwise),
		cmocka_unit_test(test_geglu),
		cmocka_unit_test(test_softcap),
		cmocka_unit_test(test_conv_dot),
		cmocka_unit_test(test_route_sigmoid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
