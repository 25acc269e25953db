/* test_llamacpp_tiles.c -- the token-blocked q42_llamacpp row products
 * (AMX-INT8 tiles, and the AVX-512 kernels they fall back to) against the
 * scalar definitions in lib/kernels/llamacpp/q42_llamacpp.c, bit for bit.
 *
 * test_llamacpp_simd covers one to three tokens; prompt processing hands the
 * row products many tokens and row counts that are not a multiple of the
 * sixteen-row tile, so here: 1..35 tokens (partial token tiles), 8..40
 * rows (a tail under a tile), padded weight and output strides. The AMX
 * kernels are called directly as well as through q42_llamacpp_select_isa,
 * and the generic arithmetic's Q8_0 / Q5_0 / Q5_1 / Q4_K / Q5_K row products
 * (q42_llamacpp_generic_rows) are held to the q42_kernels reference;
 * so both they and the AVX-512 kernels are checked on a CPU with AMX; an
 * ISA this CPU lacks is skipped. Fixed-seed xorshift data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "kernels/q42_llamacpp.h"
#include "kernels/x86/q42_x86.h"
#include "kernels/x86/q42_x86_amx.h"
#include "kernels/q42_kernels.h"
#include "common/q42_types.h"
#define LLAMACPP_TEST_SEED 0x2545F4914F6CDD1DULL
#include "llamacpp_testlib.h"

struct shape {
	int64_t blocks, rows, toks;
};

static const struct shape shapes[] = {
	{1, 16, 4},  {3, 16, 16}, {3, 24, 17}, {8, 40, 35}, {2, 8, 20},
	{5, 32, 1},  {4, 48, 3},  {6, 17, 9},  {1, 64, 33}, {9, 16, 64},
	{6, 16, 1},  {2, 9, 1},   {1, 8, 1},   {40, 8, 2},
};

/* Every kernel in fns against the scalar vec_dot of ref (the llamacpp
 * kernels, or with generic the q42_kernels reference), on all shapes. */
static void check(uint32_t dtype, int64_t blk, bool generic, const q42_llamacpp_rows_fn *fns,
		  const char *const *names, size_t nfn)
{
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		const int64_t n = shapes[s].blocks * blk, n_rows = shapes[s].rows, n_tok = shapes[s].toks;
		q42_llamacpp_kernels ref;
		if (generic) {
			const q42_type_kernels *k = q42_kernels_get(dtype, Q42_ISA_SCALAR);
			assert_non_null(k);
			ref.vec_dot = k->vec_dot;
			ref.vec_dot_type = k->vec_dot_type;
			ref.quantize = q42_kernels_get(k->vec_dot_type, Q42_ISA_SCALAR)->quantize;
			ref.name = q42_dtype_get(dtype)->name;
		} else {
			assert_true(q42_llamacpp_select_isa(dtype, 32, n, Q42_LLAMACPP_MATMUL, Q42_ISA_SCALAR,
							  &ref));
		}
		uint64_t rb = 0, xb = 0;
		assert_true(q42_dtype_nbytes(dtype, (uint64_t)n, (uint64_t)n, &rb));
		assert_true(q42_dtype_nbytes(ref.vec_dot_type, (uint64_t)n, (uint64_t)n, &xb));
		/* strides wider than a row: kernels must honour them (f32
		 * activation rows stay 4-byte aligned, as the engine keeps them) */
		const uint64_t ws = rb + 6, xs = xb + 12, ys = (uint64_t)n_rows + 3;
		uint8_t *w = test_alloc((size_t)(ws * (uint64_t)n_rows));
		uint8_t *x = test_alloc((size_t)(xs * (uint64_t)n_tok));
		float *src = test_alloc((size_t)n * sizeof(float));
		float *want = test_alloc((size_t)(ys * (uint64_t)n_tok) * sizeof(float));
		float *got = test_alloc((size_t)(ys * (uint64_t)n_tok) * sizeof(float));
		fill_weights(dtype, w, n_rows, n, ws);
		for (int64_t t = 0; t < n_tok; t++) {
			for (int64_t k = 0; k < n; k++)
				src[k] = rndf(t % 5 == 1 ? 100.0f : 1.0f);
			if (ref.quantize != NULL)
				ref.quantize(src, x + (uint64_t)t * xs, n);
			else
				memcpy(x + (uint64_t)t * xs, src, (size_t)n * sizeof(float));
		}
		memset(want, 0x5A, (size_t)(ys * (uint64_t)n_tok) * sizeof(float));
		for (int64_t r = 0; r < n_rows; r++)
			for (int64_t t = 0; t < n_tok; t++)
				ref.vec_dot(n, &want[(uint64_t)t * ys + (uint64_t)r], w + (uint64_t)r * ws,
					    x + (uint64_t)t * xs);
		for (size_t f = 0; f < nfn; f++) {
			if (fns[f] == NULL)
				continue;
			memset(got, 0x5A, (size_t)(ys * (uint64_t)n_tok) * sizeof(float));
			fns[f](n, n_rows, w, ws, n_tok, x, xs, got, ys);
			for (uint64_t e = 0; e < ys * (uint64_t)n_tok; e++)
				if (bits(got[e]) != bits(want[e]))
					fail_msg("%s %s n=%lld rows=%lld toks=%lld: token %llu row %llu: %a, "
						 "scalar %a", ref.name, names[f], (long long)n,
						 (long long)n_rows, (long long)n_tok,
						 (unsigned long long)(e / ys), (unsigned long long)(e % ys),
						 (double)got[e], (double)want[e]);
		}
		free(w);
		free(x);
		free(src);
		free(want);
		free(got);
	}
}

/* The kernels q42_llamacpp_select_isa hands out per ISA, plus the direct
 * AVX-512 and AMX ones given (NULL where absent). */
static void check_type(uint32_t dtype, int64_t blk, q42_llamacpp_rows_fn avx512, q42_llamacpp_rows_fn amx)
{
	static const enum q42_isa isas[] = {Q42_ISA_AVX2, Q42_ISA_AVX512};
	static const char *const names[] = {"avx2", "avx512", "avx512-direct", "amx-direct"};
	q42_llamacpp_rows_fn fns[4] = {NULL, NULL, NULL, NULL};
	for (size_t i = 0; i < 2; i++) {
		q42_llamacpp_kernels k;
		if (q42_llamacpp_ops_get(isas[i])->isa != isas[i])
			continue;
		assert_true(q42_llamacpp_select_isa(dtype, 32, 4 * blk, Q42_LLAMACPP_MATMUL, isas[i], &k));
		fns[i] = k.rows;
	}
	if (q42_llamacpp_ops_get(Q42_ISA_AVX512)->isa == Q42_ISA_AVX512) {
		fns[2] = avx512;
		fns[3] = q42_amx_usable() ? amx : NULL;
	}
	check(dtype, blk, false, fns, names, 4);
}

/* The generic arithmetic's row products: through q42_llamacpp_generic_rows
 * and directly. */
static void check_generic(uint32_t dtype, int64_t blk, q42_llamacpp_rows_fn avx512,
			  q42_llamacpp_rows_fn amx)
{
	static const char *const names[] = {"selected", "avx512-direct", "amx-direct"};
	q42_llamacpp_rows_fn fns[3] = {q42_llamacpp_generic_rows(dtype, Q42_ISA_BEST), NULL, NULL};
	assert_null(q42_llamacpp_generic_rows(dtype, Q42_ISA_SCALAR));
	if (q42_llamacpp_ops_get(Q42_ISA_AVX512)->isa == Q42_ISA_AVX512) {
		assert_non_null(fns[0]);
		fns[1] = avx512;
		fns[2] = q42_amx_usable() ? amx : NULL;
	}
	check(dtype, blk, true, fns, names, 3);
}

#if defined(Q42_HAVE_AMX)
#define AMX_FN(f) f
#else
#define AMX_FN(f) NULL
#endif

#if defined(__x86_64__) || defined(__i386__)
#define X86_FN(f) f
#else
#define X86_FN(f) NULL
#endif

static void test_tiles_q8_0(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_Q8_0, 32, X86_FN(q42_llamacpp_rows_q8_0_avx512),
		   AMX_FN(q42_llamacpp_rows_q8_0_amx));
}

static void test_tiles_q4_0(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_Q4_0, 32, X86_FN(q42_llamacpp_rows_q4_0_avx512),
		   AMX_FN(q42_llamacpp_rows_q4_0_amx));
}

static void test_tiles_q4_k(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_Q4_K, 256, X86_FN(q42_llamacpp_rows_q4_k_avx512),
		   AMX_FN(q42_llamacpp_rows_q4_k_amx));
}

static void test_tiles_q6_k(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_Q6_K, 256, X86_FN(q42_llamacpp_rows_q6_k_avx512),
		   AMX_FN(q42_llamacpp_rows_q6_k_amx));
}

static void test_tiles_q4_1(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_Q4_1, 32, X86_FN(q42_llamacpp_rows_q4_1_avx512),
		   AMX_FN(q42_llamacpp_rows_q4_1_amx));
}

static void test_tiles_q5_k(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_Q5_K, 256, X86_FN(q42_llamacpp_rows_q5_k_avx512),
		   AMX_FN(q42_llamacpp_rows_q5_k_amx));
}

/* llama.cpp's Q5_1 (no tiles: the AVX-512 kernel for every token count) */
static void test_tiles_q5_1(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_Q5_1, 32, X86_FN(q42_llamacpp_rows_q5_1_avx512), NULL);
}

static void test_tiles_f16(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_F16, 16, X86_FN(q42_llamacpp_rows_f16_f32_avx512), NULL);
}

/* rows of 256..2304 elements: the prompt kernel's chunks of 512 end both
 * inside a row and exactly at its end */
static void test_tiles_f16_long(void **state)
{
	(void)state;
	check_type(Q42_DTYPE_F16, 256, X86_FN(q42_llamacpp_rows_f16_f32_avx512), NULL);
}

static void test_generic_q8_0(void **state)
{
	(void)state;
	check_generic(Q42_DTYPE_Q8_0, 32, X86_FN(q42_generic_rows_q8_0_avx512),
		      AMX_FN(q42_generic_rows_q8_0_amx));
}

static void test_generic_q5_0(void **state)
{
	(void)state;
	check_generic(Q42_DTYPE_Q5_0, 32, X86_FN(q42_generic_rows_q5_0_avx512),
		      AMX_FN(q42_generic_rows_q5_0_amx));
}

static void test_generic_q5_1(void **state)
{
	(void)state;
	check_generic(Q42_DTYPE_Q5_1, 32, X86_FN(q42_generic_rows_q5_1_avx512),
		      AMX_FN(q42_generic_rows_q5_1_amx));
}

/* The k-quants' generic rows (no AMX form): rows of 256..2304 elements */
static void test_generic_q4_k(void **state)
{
	(void)state;
	check_generic(Q42_DTYPE_Q4_K, 256, X86_FN(q42_generic_rows_q4_k_avx512), NULL);
}

static void test_generic_q5_k(void **state)
{
	(void)state;
	check_generic(Q42_DTYPE_Q5_K, 256, X86_FN(q42_generic_rows_q5_k_avx512), NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tiles_q8_0), cmocka_unit_test(test_tiles_q4_0),
		cmocka_unit_test(test_tiles_q4_k), cmocka_unit_test(test_tiles_q6_k),
		cmocka_unit_test(test_tiles_q5_1), cmocka_unit_test(test_tiles_q5_k),
		cmocka_unit_test(test_tiles_q4_1),
		cmocka_unit_test(test_tiles_f16), cmocka_unit_test(test_tiles_f16_long), cmocka_unit_test(test_generic_q8_0),
		cmocka_unit_test(test_generic_q5_0), cmocka_unit_test(test_generic_q5_1),
		cmocka_unit_test(test_generic_q4_k), cmocka_unit_test(test_generic_q5_k),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
