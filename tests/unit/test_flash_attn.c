/* test_flash_attn.c -- flash attention's kernels (q42_llamacpp.h, "flash
 * attention"): each SIMD form against the scalar definition, bit for bit,
 * and the properties the engine relies on.
 *
 * The scalar definition is proven against llama.cpp by tests/bats/
 * flash_attn.bats (greedy ids from llama.cpp with flash attention on).
 * Here: random f16 rows of several head dims (whole 64-steps, 16-lanes and
 * neither), and Q8_0 rows (llama.cpp's quantizer) of whole blocks, several
 * queries per call, runs split into several calls (the
 * state carries over), scores large enough that the running max moves;
 * tiles with partial position counts, empty and partial masks, and rows
 * that see nothing. A row's tiled result must not depend on which rows
 * share its tile (the engine groups rows freely). The Walsh-Hadamard
 * rotation of a Q8_0 cache against the matrix product it stands for. An
 * ISA this CPU lacks is skipped. Random data comes from a fixed-seed
 * xorshift.
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
#include "kernels/q42_kernels.h"
#include "common/q42_types.h"
#define LLAMACPP_TEST_SEED 0x243F6A8885A308D3ULL
#include "llamacpp_testlib.h"

enum { T = Q42_FA_TILE };

static const enum q42_isa isas[] = {Q42_ISA_AVX2, Q42_ISA_AVX512};

static bool isa_ok(enum q42_isa isa)
{
	return q42_llamacpp_ops_get(isa)->isa == isa;
}

/* n f16 rows of d values, scaled by s */
static uint8_t *f16_rows(int64_t n, int64_t d, float s)
{
	uint8_t *p = test_alloc((size_t)(n * d * 2));
	for (int64_t i = 0; i < n * d; i++)
		put_half(p + 2 * i, rndf(s));
	return p;
}

/* n rows of d values in the cache type t, scaled by s: f16, or Q8_0 from
 * llama.cpp's quantizer */
static uint8_t *kv_rows(uint32_t t, int64_t n, int64_t d, float s)
{
	if (t == Q42_DTYPE_F16)
		return f16_rows(n, d, s);
	float *x = test_alloc((size_t)d * sizeof(float));
	uint8_t *p = test_alloc((size_t)(n * d / 32 * 34));
	for (int64_t i = 0; i < n; i++) {
		for (int64_t j = 0; j < d; j++)
			x[j] = rndf(s);
		q42_llamacpp_quantize_q8_0(x, p + i * d / 32 * 34, d);
	}
	free(x);
	return p;
}

static void check_one(const q42_llamacpp_ops *ref, const q42_llamacpp_ops *ops, uint32_t t, int64_t dk,
		      int64_t dv, int64_t n_q, int64_t n, float s)
{
	const q42_llamacpp_fa fa = {dk, dv, 1.0f / sqrtf((float)dk), t};
	const uint64_t kb = t == Q42_DTYPE_F16 ? (uint64_t)dk * 2 : (uint64_t)dk / 32 * 34;
	const uint64_t vb = t == Q42_DTYPE_F16 ? (uint64_t)dv * 2 : (uint64_t)dv / 32 * 34;
	const uint64_t ab = q42_llamacpp_fa_acc_bytes(&fa);
	uint8_t *q = kv_rows(t, n_q, dk, s), *k = kv_rows(t, n, dk, s), *v = kv_rows(t, n, dv, 1.0f);
	uint8_t *acc[2];
	float m[2][16], sum[2][16];
	for (int w = 0; w < 2; w++) {
		acc[w] = test_alloc((size_t)(n_q * (int64_t)ab));
		memset(acc[w], 0, (size_t)(n_q * (int64_t)ab));
		for (int64_t h = 0; h < n_q; h++) {
			m[w][h] = -INFINITY;
			sum[w][h] = 0.0f;
		}
	}
	/* the scalar definition in one call; the SIMD form in runs of 1..40 */
	ref->fa_one(&fa, n_q, q, kb, k, kb, v, vb, n, m[0], sum[0], acc[0], ab);
	for (int64_t i = 0; i < n;) {
		int64_t run = 1 + (int64_t)(rnd() % 40);
		if (run > n - i)
			run = n - i;
		ops->fa_one(&fa, n_q, q, kb, k + (uint64_t)i * kb, kb, v + (uint64_t)i * vb, vb, run, m[1], sum[1],
			    acc[1], ab);
		i += run;
	}
	for (int64_t h = 0; h < n_q; h++) {
		assert_int_equal(bits(m[0][h]), bits(m[1][h]));
		assert_int_equal(bits(sum[0][h]), bits(sum[1][h]));
		float o[2][256];
		for (int w = 0; w < 2; w++)
			q42_llamacpp_fa_one_end(&fa, sum[w][h], acc[w] + (uint64_t)h * ab, o[w]);
		for (int64_t d = 0; d < dv; d++) {
			if (bits(o[0][d]) != bits(o[1][d]))
				fail_msg("%s one %s dk %lld dv %lld n_q %lld n %lld: head %lld dim %lld: %.9g vs %.9g",
					 q42_isa_name(ops->isa), t == Q42_DTYPE_F16 ? "f16" : "q8_0", (long long)dk,
					 (long long)dv, (long long)n_q,
					 (long long)n, (long long)h, (long long)d, (double)o[0][d], (double)o[1][d]);
			assert_true(isfinite(o[1][d]));
		}
	}
	free(q);
	free(k);
	free(v);
	free(acc[0]);
	free(acc[1]);
}

/* Each SIMD form of a variant's one-at-a-time form against its scalar
 * definition (the zen4 build's, or haswell's eight-lane one). */
static void one_dims(enum q42_llamacpp_variant variant, uint32_t t, const int64_t (*dims)[2], size_t n_dims)
{
	const q42_llamacpp_ops *ref = q42_llamacpp_ops_get_variant(variant, Q42_ISA_SCALAR);
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		if (!isa_ok(isas[i]))
			continue;
		const q42_llamacpp_ops *ops = q42_llamacpp_ops_get_variant(variant, isas[i]);
		for (size_t d = 0; d < n_dims; d++)
			for (int64_t n_q = 1; n_q <= 5; n_q += 2) {
				check_one(ref, ops, t, dims[d][0], dims[d][1], n_q, 1, 1.0f);
				check_one(ref, ops, t, dims[d][0], dims[d][1], n_q, 257, 1.0f);
				check_one(ref, ops, t, dims[d][0], dims[d][1], n_q, 300, 8.0f);
			}
	}
}

static void test_one(void **state)
{
	(void)state;
	static const int64_t dims[][2] = {{64, 64}, {128, 128}, {32, 32}, {16, 16}, {24, 24}, {64, 40}, {256, 256}};
	one_dims(Q42_LLAMACPP_ZEN4, Q42_DTYPE_F16, dims, sizeof dims / sizeof dims[0]);
	one_dims(Q42_LLAMACPP_HASWELL, Q42_DTYPE_F16, dims, sizeof dims / sizeof dims[0]);
}

static void test_one_q8(void **state)
{
	(void)state;
	static const int64_t dims[][2] = {{64, 64}, {128, 128}, {32, 32}, {96, 64}, {64, 160}, {256, 256}};
	one_dims(Q42_LLAMACPP_ZEN4, Q42_DTYPE_Q8_0, dims, sizeof dims / sizeof dims[0]);
	one_dims(Q42_LLAMACPP_HASWELL, Q42_DTYPE_Q8_0, dims, sizeof dims / sizeof dims[0]);
}

/* The rotation is the orthonormal Sylvester-Hadamard matrix's product
 * (entry i, j: (-1)^popcount(i & j) / sqrt(n)), to f32 rounding, and its
 * own inverse. */
static void test_fwht(void **state)
{
	(void)state;
	for (int64_t n = 64; n <= 256; n *= 2) {
		float x[256], y[256];
		for (int64_t i = 0; i < n; i++)
			x[i] = y[i] = rndf(4.0f);
		q42_llamacpp_fwht(n, y);
		for (int64_t i = 0; i < n; i++) {
			double want = 0.0;
			for (int64_t j = 0; j < n; j++)
				want += (__builtin_popcountll((unsigned long long)(i & j)) & 1 ? -1.0 : 1.0) * x[j];
			want /= sqrt((double)n);
			if (fabs(want - y[i]) > 1e-5 * (1.0 + fabs(want)))
				fail_msg("fwht n %lld: element %lld %.9g, the product gives %.9g", (long long)n,
					 (long long)i, (double)y[i], want);
		}
		q42_llamacpp_fwht(n, y);
		for (int64_t i = 0; i < n; i++)
			assert_true(fabsf(y[i] - x[i]) <= 1e-5f * (1.0f + fabsf(x[i])));
	}
}

/* Tile state for n_q rows. */
typedef struct tile_state {
	float m[T], s[T], *acc;
} tile_state;

static void state_init(tile_state *st, int64_t dv)
{
	for (int r = 0; r < T; r++) {
		st->m[r] = -INFINITY;
		st->s[r] = 0.0f;
	}
	st->acc = test_alloc((size_t)(dv * T) * sizeof(float));
	memset(st->acc, 0, (size_t)(dv * T) * sizeof(float));
}

/* qt of n_q rows taken from rows (n_q x dk f32), lanes past n_q zero */
static float *transpose_q(const float *rows, int64_t n_q, int64_t dk)
{
	float *qt = test_alloc((size_t)(dk * T) * sizeof(float));
	for (int64_t d = 0; d < dk; d++)
		for (int64_t r = 0; r < T; r++)
			qt[d * T + r] = r < n_q ? rows[r * dk + d] : 0.0f;
	return qt;
}

/* Row r of the tile run: its output after n_tiles tiles of K/V. */
static void run_tiles(const q42_llamacpp_ops *ops, const q42_llamacpp_fa *fa, int64_t n_q, const float *qrows,
		      const uint8_t *k, const uint8_t *v, int n_tiles, int64_t last_kv, const int32_t (*lo)[T],
		      const int32_t (*hi)[T], float *out)
{
	tile_state st;
	float *qt = transpose_q(qrows, n_q, fa->dk);
	float *work = test_alloc((size_t)q42_llamacpp_fa_tile_work(fa) * sizeof(float));
	state_init(&st, fa->dv);
	for (int t = 0; t < n_tiles; t++)
		ops->fa_tile(fa, n_q, qt, k + (uint64_t)t * T * fa->dk * 2, (uint64_t)fa->dk * 2,
			     v + (uint64_t)t * T * fa->dv * 2, (uint64_t)fa->dv * 2, t == n_tiles - 1 ? last_kv : T,
			     lo[t], hi[t], st.m, st.s, st.acc, work);
	for (int64_t r = 0; r < n_q; r++)
		q42_llamacpp_fa_tile_end(fa, r, st.s, st.acc, out + r * fa->dv);
	free(qt);
	free(work);
	free(st.acc);
}

static void check_tile(const q42_llamacpp_ops *ref, const q42_llamacpp_ops *ops, int64_t dk, int64_t dv,
		       int64_t n_q, int64_t last_kv, float s)
{
	enum { TILES = 3 };
	const q42_llamacpp_fa fa = {dk, dv, 1.0f / sqrtf((float)dk), Q42_DTYPE_F16};
	uint8_t *k = f16_rows(TILES * T, dk, 1.0f), *v = f16_rows(TILES * T, dv, 1.0f);
	float *qrows = test_alloc((size_t)(n_q * dk) * sizeof(float));
	int32_t lo[TILES][T], hi[TILES][T];
	for (int64_t i = 0; i < n_q * dk; i++)
		qrows[i] = rndf(s);
	/* per row a causal-like span over the three tiles, some rows
	 * windowed, one row with nothing in the first tile */
	for (int64_t r = 0; r < n_q; r++) {
		const int64_t end = 2 * T + 1 + (int64_t)(rnd() % (uint32_t)last_kv);
		const int64_t start = r % 3 == 1 ? (int64_t)(rnd() % (uint32_t)end) : r == 2 ? T + 5 : 0;
		for (int t = 0; t < TILES; t++) {
			const int64_t b = (int64_t)t * T;
			lo[t][r] = (int32_t)(start > b ? (start - b < T ? start - b : T) : 0);
			hi[t][r] = (int32_t)(end > b ? (end - b < T ? end - b : T) : 0);
		}
	}
	float *want = test_alloc((size_t)(n_q * dv) * sizeof(float));
	float *got = test_alloc((size_t)(n_q * dv) * sizeof(float));
	run_tiles(ref, &fa, n_q, qrows, k, v, TILES, last_kv, lo, hi, want);
	run_tiles(ops, &fa, n_q, qrows, k, v, TILES, last_kv, lo, hi, got);
	for (int64_t i = 0; i < n_q * dv; i++)
		if (bits(want[i]) != bits(got[i]))
			fail_msg("%s tile dk %lld dv %lld n_q %lld last %lld: row %lld dim %lld: %.9g vs %.9g",
				 q42_isa_name(ops->isa), (long long)dk, (long long)dv, (long long)n_q,
				 (long long)last_kv, (long long)(i / dv), (long long)(i % dv), (double)want[i],
				 (double)got[i]);
	/* each row alone in its tile: the same bits */
	for (int64_t r = 0; r < n_q; r += 7) {
		int32_t lo1[TILES][T] = {{0}}, hi1[TILES][T] = {{0}};
		for (int t = 0; t < TILES; t++) {
			lo1[t][0] = lo[t][r];
			hi1[t][0] = hi[t][r];
		}
		float alone[256];
		run_tiles(ops, &fa, 1, qrows + r * dk, k, v, TILES, last_kv, lo1, hi1, alone);
		assert_memory_equal(alone, got + r * dv, (size_t)dv * sizeof(float));
	}
	free(k);
	free(v);
	free(qrows);
	free(want);
	free(got);
}

static void test_tile(void **state)
{
	(void)state;
	/* haswell tiles head widths of whole 8-lane vectors too */
	static const int64_t dims[][2] = {{64, 64}, {128, 128}, {32, 32}, {16, 16}, {64, 48}, {80, 80}, {24, 24}, {8, 8}};
	static const enum q42_llamacpp_variant variants[] = {Q42_LLAMACPP_ZEN4, Q42_LLAMACPP_HASWELL};
	for (size_t vi = 0; vi < 2; vi++) {
		const q42_llamacpp_ops *ref = q42_llamacpp_ops_get_variant(variants[vi], Q42_ISA_SCALAR);
		for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
			if (!isa_ok(isas[i]))
				continue;
			const q42_llamacpp_ops *ops = q42_llamacpp_ops_get_variant(variants[vi], isas[i]);
			for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
				if (dims[d][1] % ops->tb_lanes != 0)
					continue;
				check_tile(ref, ops, dims[d][0], dims[d][1], T, T, 1.0f);
				check_tile(ref, ops, dims[d][0], dims[d][1], 17, 37, 4.0f);
				check_tile(ref, ops, dims[d][0], dims[d][1], 3, 1, 1.0f);
				/* scores far apart: weights that are subnormal, and
				 * that underflow to zero inside and past ggml_v_expf's
				 * range */
				check_tile(ref, ops, dims[d][0], dims[d][1], 29, T, 16.0f);
			}
		}
	}
}

/* A row that sees no position keeps the starting state: output zero. */
static void test_tile_empty(void **state)
{
	(void)state;
	const q42_llamacpp_fa fa = {64, 64, 0.125f, Q42_DTYPE_F16};
	uint8_t *k = f16_rows(T, 64, 1.0f), *v = f16_rows(T, 64, 1.0f);
	float qrows[64];
	const int32_t lo[1][T] = {{0}}, hi[1][T] = {{0}};
	float out[64];
	for (int i = 0; i < 64; i++)
		qrows[i] = rndf(1.0f);
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		if (!isa_ok(isas[i]))
			continue;
		run_tiles(q42_llamacpp_ops_get(isas[i]), &fa, 1, qrows, k, v, 1, T, lo, hi, out);
		for (int d = 0; d < 64; d++)
			assert_true(out[d] == 0.0f);
	}
	free(k);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one), cmocka_unit_test(test_one_q8), cmocka_unit_test(test_fwht),
		cmocka_unit_test(test_tile),
		cmocka_unit_test(test_tile_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
