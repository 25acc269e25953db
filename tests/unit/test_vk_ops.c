/* test_vk_ops.c -- the Vulkan kernels (q42_vk_ops.h) on whatever device the
 * loader offers (lavapipe here and in CI).
 *
 * Small cases whose results are known exactly (integer-valued blocks,
 * constant rows, a single attended position, planted maxima) check each
 * kernel's indexing; the full certification (random shapes against the
 * scalar reference) must pass and give the same errors to the bit when
 * run twice; a grid of more row groups than one dimension holds folds
 * correctly; and a deliberately wrong reference -- q4_0
 * nibbles taken in the wrong order -- must make the certification's
 * comparison fail, so a passing run means something. Without a device the
 * tests skip, except under CI=true, where they fail.
 */
#include "config.h"
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vk_testlib.h"

#include "measure/q42_certify.h"
#include "measure/q42_certify_cases.h"
#include "common/q42_types.h"
#include "kernels/q42_kernels.h"
#include "vulkan/q42_vk.h"
#include "vulkan/q42_vk_ops.h"

static q42_vk *g_vk;
static q42_vk_ops *g_ops;
static q42_err g_open_err;

static int group_setup(void **state)
{
	(void)state;
	if (q42_vk_open(&g_vk, -1, true, &g_open_err) == Q42_OK &&
	    q42_vk_ops_open(&g_ops, g_vk, &g_open_err) != Q42_OK)
		fail_msg("kernels do not build: %s", g_open_err.msg);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	q42_vk_ops_close(g_ops);
	if (g_vk != NULL)
		q42_vk_close(g_vk);
	return 0;
}

#define NEED_VK() VK_TEST_NEED(g_ops != NULL, g_open_err.msg)

/* Host-visible buffers of one test, freed together. */
static q42_vk_buf *g_bufs[8];
static int g_nbufs;

static q42_vk_view hbuf(uint64_t bytes, void **map)
{
	q42_err err = {0};
	q42_vk_buf *b = NULL;
	assert_int_equal(q42_vk_buf_create(g_vk, bytes, Q42_VK_MEM_HOST, &b, &err), Q42_OK);
	g_bufs[g_nbufs++] = b;
	*map = q42_vk_buf_map(b);
	memset(*map, 0, bytes);
	return (q42_vk_view){b, 0, 0};
}

static void free_bufs(void)
{
	while (g_nbufs > 0)
		q42_vk_buf_free(g_vk, g_bufs[--g_nbufs]);
}

static void begin(void)
{
	q42_err err = {0};
	assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
}

static void submit(void)
{
	q42_err err = {0};
	if (q42_vk_submit(g_vk, &err) != Q42_OK)
		fail_msg("submit: %s", err.msg);
}

static void put_half(uint8_t *p, float f)
{
	const uint16_t h = q42_f32_to_f16(f);
	p[0] = (uint8_t)h;
	p[1] = (uint8_t)(h >> 8);
}

/* Q8_0 row r: d = 0.5, q[j] = j - 16 + r; x = 1 for token 0, j for token 1.
 * Every product and sum is a small multiple of 0.5: exact in any order. */
static void test_matmul_q8_0_exact(void **state)
{
	(void)state;
	NEED_VK();
	enum { N_IN = 64, N_OUT = 5, N_TOK = 2 };
	uint8_t *w;
	float *x, *y;
	q42_err err = {0};
	q42_vk_view wv = hbuf(N_OUT * 2 * 34, (void **)&w), xv = hbuf(N_TOK * N_IN * 4, (void **)&x),
		    yv = hbuf(N_TOK * N_OUT * 4, (void **)&y);
	for (int r = 0; r < N_OUT; r++)
		for (int b = 0; b < 2; b++) {
			uint8_t *blk = w + (r * 2 + b) * 34;
			put_half(blk, 0.5f);
			for (int j = 0; j < 32; j++)
				blk[2 + j] = (uint8_t)(int8_t)(j - 16 + r);
		}
	for (int i = 0; i < N_IN; i++) {
		x[i] = 1.0f;
		x[N_IN + i] = (float)(i % 32);
	}
	for (uint32_t n_tok = 1; n_tok <= N_TOK; n_tok++) {
		memset(y, 0, N_TOK * N_OUT * 4);
		begin();
		assert_int_equal(q42_vk_op_matmul(g_ops, Q42_DTYPE_Q8_0, wv, 34 * 2, N_IN, N_OUT, xv, n_tok,
						  yv, N_OUT, &err), Q42_OK);
		submit();
		for (uint32_t t = 0; t < n_tok; t++)
			for (int r = 0; r < N_OUT; r++) {
				double want = 0.0;
				for (int i = 0; i < N_IN; i++)
					want += 0.5 * (i % 32 - 16 + r) * (t == 0 ? 1.0 : (double)(i % 32));
				assert_true(y[t * N_OUT + r] == (float)want);
			}
	}
	free_bufs();
}

/* More row groups than one grid dimension holds (65535): the groups fold
 * into y, and every row is still computed once. Row r is r at element 0. */
static void test_matmul_folded_grid(void **state)
{
	(void)state;
	NEED_VK();
	enum { N_IN = 4, N_OUT = 140001 };
	float *w, *x, *y;
	q42_err err = {0};
	q42_vk_view wv = hbuf((uint64_t)N_IN * N_OUT * 4, (void **)&w), xv = hbuf(N_IN * 4, (void **)&x),
		    yv = hbuf((uint64_t)N_OUT * 4, (void **)&y);
	for (uint32_t r = 0; r < N_OUT; r++)
		w[(uint64_t)r * N_IN] = (float)r;
	x[0] = 1.0f;
	for (uint32_t r = 0; r < N_OUT; r++)
		y[r] = -1.0f;
	begin();
	assert_int_equal(q42_vk_op_matmul(g_ops, Q42_DTYPE_F32, wv, N_IN * 4, N_IN, N_OUT, xv, 1, yv, N_OUT,
					  &err), Q42_OK);
	submit();
	for (uint32_t r = 0; r < N_OUT; r++)
		if (y[r] != (float)r)
			fail_msg("row %u: %g", r, (double)y[r]);
	free_bufs();
}

/* get_rows of a Q4_0 table: nibble j of byte k is element k (low) or
 * k + 16 (high); the wrong order would swap halves. */
static void test_get_rows_q4_0(void **state)
{
	(void)state;
	NEED_VK();
	uint8_t *tab;
	int32_t *ids;
	float *y;
	q42_err err = {0};
	q42_vk_view tv = hbuf(3 * 18, (void **)&tab), iv = hbuf(8, (void **)&ids),
		    yv = hbuf(2 * 32 * 4, (void **)&y);
	for (int r = 0; r < 3; r++) {
		put_half(tab + r * 18, (float)(r + 1));
		for (int k = 0; k < 16; k++)
			tab[r * 18 + 2 + k] = (uint8_t)((k & 0xF) | ((15 - k) << 4));
	}
	ids[0] = 2;
	ids[1] = 0;
	begin();
	assert_int_equal(q42_vk_op_get_rows(g_ops, Q42_DTYPE_Q4_0, tv, 18, iv, 2, 32, yv, &err), Q42_OK);
	submit();
	for (int t = 0; t < 2; t++) {
		const float d = (float)(ids[t] + 1);
		for (int k = 0; k < 16; k++) {
			assert_true(y[t * 32 + k] == (float)(k - 8) * d);
			assert_true(y[t * 32 + 16 + k] == (float)(15 - k - 8) * d);
		}
	}
	free_bufs();
}

/* rmsnorm of a constant row c is sign(c) * w; softmax of a constant row
 * is 1/n; add broadcasts b over rows. */
static void test_row_ops(void **state)
{
	(void)state;
	NEED_VK();
	enum { N = 300 };
	float *x, *w, *y, *b;
	q42_err err = {0};
	q42_vk_view xv = hbuf(2 * N * 4, (void **)&x), wv = hbuf(N * 4, (void **)&w),
		    yv = hbuf(2 * N * 4, (void **)&y), bv = hbuf(N * 4, (void **)&b);
	for (int i = 0; i < N; i++) {
		x[i] = 4.0f;
		x[N + i] = -4.0f;
		w[i] = (float)i;
		b[i] = (float)(2 * i);
	}
	begin();
	assert_int_equal(q42_vk_op_rmsnorm(g_ops, xv, wv, yv, N, 2, 0.0f, &err), Q42_OK);
	submit();
	for (int i = 0; i < N; i++) {
		assert_true(fabsf(y[i] - (float)i) <= 1e-6f * (float)i);
		assert_true(fabsf(y[N + i] + (float)i) <= 1e-6f * (float)i);
	}
	begin();
	assert_int_equal(q42_vk_op_softmax(g_ops, xv, yv, N, 2, 0.5f, &err), Q42_OK);
	submit();
	for (int i = 0; i < 2 * N; i++)
		assert_true(fabsf(y[i] - 1.0f / N) <= 1e-6f / N);
	begin();
	assert_int_equal(q42_vk_op_add(g_ops, xv, bv, yv, 2 * N, N, &err), Q42_OK);
	submit();
	for (int i = 0; i < N; i++) {
		assert_true(y[i] == 4.0f + (float)(2 * i));
		assert_true(y[N + i] == -4.0f + (float)(2 * i));
	}
	free_bufs();
}

/* RoPE at position 0 is the identity; at a position, pair (0, 1) of the
 * normal layout and (0, n_rot/2) of neox turn by the position in radians. */
static void test_rope(void **state)
{
	(void)state;
	NEED_VK();
	enum { HD = 8 };
	float *x;
	q42_err err = {0};
	q42_vk_view xv = hbuf(2 * HD * 4, (void **)&x), none = {0};
	for (int i = 0; i < 2 * HD; i++)
		x[i] = (float)(i + 1);
	begin();
	assert_int_equal(q42_vk_op_rope(g_ops, xv, none, 2, 1, HD, HD, 0, false, powf(10000.0f, -2.0f / (float)HD), 1.0f, 1.0f, &err),
			 Q42_OK);
	submit();
	/* token 0 at position 0: unchanged; token 1 at position 1 */
	for (int i = 0; i < HD; i++)
		assert_true(x[i] == (float)(i + 1));
	assert_true(fabsf(x[HD] - (9.0f * cosf(1.0f) - 10.0f * sinf(1.0f))) < 1e-5f);
	assert_true(fabsf(x[HD + 1] - (9.0f * sinf(1.0f) + 10.0f * cosf(1.0f))) < 1e-5f);
	for (int i = 0; i < HD; i++)
		x[i] = (float)(i + 1);
	begin();
	assert_int_equal(q42_vk_op_rope(g_ops, xv, none, 1, 1, HD, HD, 3, true, powf(10000.0f, -2.0f / (float)HD), 1.0f, 1.0f, &err),
			 Q42_OK);
	submit();
	assert_true(fabsf(x[0] - (1.0f * cosf(3.0f) - 5.0f * sinf(3.0f))) < 1e-5f);
	assert_true(fabsf(x[4] - (1.0f * sinf(3.0f) + 5.0f * cosf(3.0f))) < 1e-5f);
	free_bufs();
}

/* kv_store puts token t of head h at [h][pos0 + t]; attention of the
 * first token (one position) returns that position's V exactly, for
 * every query head of a GQA group. */
static void test_kv_attention(void **state)
{
	(void)state;
	NEED_VK();
	enum { HD = 4, CTX = 8, KV = 2, HEADS = 4 };
	float *k, *v, *kc, *vc, *q, *o;
	q42_err err = {0};
	q42_vk_view kv_ = hbuf(KV * HD * 4, (void **)&k), vv = hbuf(KV * HD * 4, (void **)&v),
		    kcv = hbuf(KV * CTX * HD * 4, (void **)&kc), vcv = hbuf(KV * CTX * HD * 4, (void **)&vc),
		    qv = hbuf(HEADS * HD * 4, (void **)&q), ov = hbuf(HEADS * HD * 4, (void **)&o);
	for (int i = 0; i < KV * HD; i++) {
		k[i] = (float)i;
		v[i] = (float)(100 + i);
	}
	for (int i = 0; i < HEADS * HD; i++)
		q[i] = 0.25f * (float)i;
	begin();
	assert_int_equal(q42_vk_op_kv_store(g_ops, Q42_DTYPE_F32, kv_, vv, kcv, vcv, 1, KV, HD, HD, CTX, 0,
					    &err), Q42_OK);
	assert_int_equal(q42_vk_op_attention(g_ops, Q42_DTYPE_F32, qv, kcv, vcv, ov, 1, HEADS, KV, HD, HD,
					     CTX, 0, 0.5f, 0, true, false, &err), Q42_OK);
	submit();
	for (int h = 0; h < KV; h++)
		for (int d = 0; d < HD; d++) {
			assert_true(kc[h * CTX * HD + d] == (float)(h * HD + d));
			assert_true(kc[h * CTX * HD + HD + d] == 0.0f);
		}
	for (int h = 0; h < HEADS; h++)
		for (int d = 0; d < HD; d++)
			assert_true(o[h * HD + d] == (float)(100 + (h / 2) * HD + d));
	free_bufs();
}

/* The first of equal maxima wins, wherever the threads' shares split. */
static void test_argmax_ties(void **state)
{
	(void)state;
	NEED_VK();
	enum { N = 5000 };
	float *x;
	uint32_t *out;
	q42_err err = {0};
	q42_vk_view xv = hbuf(N * 4, (void **)&x), ov = hbuf(8, (void **)&out);
	static const uint32_t firsts[] = {0, 1, 255, 256, 4999};
	for (size_t c = 0; c < sizeof firsts / sizeof firsts[0]; c++) {
		for (int i = 0; i < N; i++)
			x[i] = (float)(i % 7);
		x[firsts[c]] = 9.0f;
		x[N - 1] = 9.0f;
		for (uint32_t i = firsts[c] + 3; i < N; i += 1000)
			x[i] = 9.0f;
		begin();
		assert_int_equal(q42_vk_op_argmax(g_ops, xv, N, ov, &err), Q42_OK);
		submit();
		assert_int_equal(out[0], firsts[c]);
		float v;
		memcpy(&v, &out[1], 4);
		assert_true(v == 9.0f);
	}
	free_bufs();
}

/* Bad shapes are refused before anything is recorded. */
static void test_bad_args(void **state)
{
	(void)state;
	NEED_VK();
	q42_err err = {0};
	q42_vk_view none = {0};
	assert_false(q42_vk_ops_has_matmul(Q42_DTYPE_Q5_K));
	assert_true(q42_vk_ops_has_matmul(Q42_DTYPE_Q6_K));
	assert_int_equal(q42_vk_op_matmul(g_ops, Q42_DTYPE_Q5_K, none, 176, 256, 4, none, 1, none, 4, &err),
			 Q42_EUNSUPPORTED);
	assert_int_equal(q42_vk_op_matmul(g_ops, Q42_DTYPE_Q4_0, none, 18, 40, 4, none, 1, none, 4, &err),
			 Q42_EARG); /* n_in not a whole number of blocks */
	assert_int_equal(q42_vk_op_attention(g_ops, Q42_DTYPE_F32, none, none, none, none, 1, 6, 4, 64, 64,
					     16, 0, 1.0f, 0, true, false, &err), Q42_EARG); /* 6 heads over 4 */
	assert_int_equal(q42_vk_op_attention(g_ops, Q42_DTYPE_F32, none, none, none, none, 2, 4, 4, 64, 64,
					     16, 15, 1.0f, 0, false, false, &err), Q42_EARG); /* past n_ctx */
	assert_int_equal(q42_vk_op_kv_store(g_ops, Q42_DTYPE_F16, none, none, none, none, 1, 1, 63, 64, 16,
					    0, &err), Q42_EARG); /* odd f16 head */
}

struct tally {
	uint32_t n;
	char kernels[64][48];
	uint32_t n_kernels;
};

static void tally_fn(const q42_certify_result *r, void *arg)
{
	struct tally *t = arg;
	t->n++;
	if (!r->pass)
		print_message("# FAIL %s %s: max_abs %g max_rel %g\n", r->kernel, r->shape, r->max_abs,
			      r->max_rel);
	for (uint32_t i = 0; i < t->n_kernels; i++)
		if (strcmp(t->kernels[i], r->kernel) == 0)
			return;
	if (t->n_kernels < 64)
		snprintf(t->kernels[t->n_kernels++], 48, "%s", r->kernel);
}

/* The whole certification passes and covers every kernel of q42_vk_ops.h
 * for every type. */
static void test_certify_vulkan(void **state)
{
	(void)state;
	NEED_VK();
	static struct tally t;
	q42_err err = {0};
	uint32_t n_fail = 99;
	if (q42_certify_run(q42_vk_backend(), Q42_BACKEND_VULKAN, -1, 1, tally_fn, &t, &n_fail, &err) != Q42_OK)
		fail_msg("certify: %s", err.msg);
	assert_int_equal(n_fail, 0);
	/* matmul and get_rows x 6 types, rmsnorm, rope, softmax, add,
	 * kv_store x 2, attention x 2, argmax; glu x 2 (silu, gelu), scale,
	 * softcap, copy, shortconv, route, matmul_id x 6 types; layernorm,
	 * pool_mean and gelu (the encoders) */
	assert_int_equal(t.n_kernels, 12 + 4 + 4 + 1 + 2 + 5 + 6 + 3);
	assert_true(t.n > 50);
}

static void keep_fn(const q42_certify_result *r, void *arg)
{
	struct tally *t = arg;
	if (t->n < 64)
		snprintf(t->kernels[t->n], 48, "%.17g", r->max_abs);
	t->n++;
}

/* Same seed, same errors to the last bit: every kernel is deterministic
 * on the device. */
static void test_certify_deterministic(void **state)
{
	(void)state;
	NEED_VK();
	static struct tally a, b;
	q42_err err = {0};
	uint32_t fa = 0, fb = 0;
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_VULKAN, -1, 5, keep_fn, &a, &fa, &err), Q42_OK);
	assert_int_equal(q42_certify_run(q42_vk_backend(), Q42_BACKEND_VULKAN, -1, 5, keep_fn, &b, &fb, &err), Q42_OK);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.kernels, b.kernels, sizeof a.kernels);
}

/* A reference with q4_0's nibbles in the wrong order (high nibble first)
 * against the device's product: the comparison must fail. */
static void test_wrong_reference_fails(void **state)
{
	(void)state;
	NEED_VK();
	enum { N_IN = 256, N_OUT = 9 };
	uint8_t *w;
	float *x, *y;
	q42_err err = {0};
	uint64_t s = 99;
	q42_vk_view wv = hbuf(N_OUT * 8 * 18, (void **)&w), xv = hbuf(N_IN * 4, (void **)&x),
		    yv = hbuf(N_OUT * 4, (void **)&y);
	assert_true(q42_certify_weights(Q42_DTYPE_Q4_0, w, N_IN * N_OUT, &s));
	for (int i = 0; i < N_IN; i++)
		x[i] = q42_certify_unit(&s);
	begin();
	assert_int_equal(q42_vk_op_matmul(g_ops, Q42_DTYPE_Q4_0, wv, 8 * 18, N_IN, N_OUT, xv, 1, yv, N_OUT,
					  &err), Q42_OK);
	submit();
	double right[N_OUT], wrong[N_OUT], floor_[N_OUT];
	for (int r = 0; r < N_OUT; r++) {
		right[r] = wrong[r] = floor_[r] = 0.0;
		for (int b = 0; b < 8; b++) {
			const uint8_t *blk = w + (r * 8 + b) * 18;
			const double d = (double)q42_f16_to_f32((uint16_t)(blk[0] | blk[1] << 8));
			for (int j = 0; j < 16; j++) {
				const int lo = (blk[2 + j] & 0xF) - 8, hi = (blk[2 + j] >> 4) - 8;
				const double xl = x[b * 32 + j], xh = x[b * 32 + 16 + j];
				right[r] += d * (lo * xl + hi * xh);
				wrong[r] += d * (hi * xl + lo * xh);
				floor_[r] += fabs(d * lo * xl) + fabs(d * hi * xh);
			}
		}
	}
	const double tol = (64.0 + N_IN / 64.0) * 0x1p-24; /* the certification's */
	q42_certify_result r;
	q42_certify_begin(&r, "matmul.q4_0", 0.0, tol, "right");
	q42_certify_compare(&r, y, right, floor_, N_OUT);
	assert_true(r.pass);
	q42_certify_begin(&r, "matmul.q4_0", 0.0, tol, "wrong nibble order");
	q42_certify_compare(&r, y, wrong, floor_, N_OUT);
	assert_false(r.pass);
	/* and tolerance 0 on a float sum the device orders its own way */
	q42_certify_begin(&r, "matmul.q4_0", 0.0, 0.0, "exact");
	q42_certify_compare(&r, y, right, floor_, N_OUT);
	print_message("# tolerance 0: %s (max_abs %g)\n", r.pass ? "pass" : "fail", r.max_abs);
	free_bufs();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matmul_q8_0_exact),
		cmocka_unit_test(test_matmul_folded_grid),
		cmocka_unit_test(test_get_rows_q4_0),
		cmocka_unit_test(test_row_ops),
		cmocka_unit_test(test_rope),
		cmocka_unit_test(test_kv_attention),
		cmocka_unit_test(test_argmax_ties),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_certify_vulkan),
		cmocka_unit_test(test_certify_deterministic),
		cmocka_unit_test(test_wrong_reference_fails),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
