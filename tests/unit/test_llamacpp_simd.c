/* test_llamacpp_simd.c -- every SIMD q42_llamacpp kernel against its scalar
 * definition in lib/kernels/llamacpp/q42_llamacpp.c, bit for bit.
 *
 * The scalar kernels are proven against llama.cpp's compiled code by
 * test_llamacpp (golden data from llama.cpp itself); here the AVX2 and
 * AVX-512 versions must return the same bits on random rows of odd sizes
 * (row counts that do not fill a row group, several tokens, 1..9 blocks),
 * plus special values for the quantizers and row ops. An ISA this CPU
 * lacks is skipped. Random data comes from a fixed-seed xorshift.
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
#define LLAMACPP_TEST_SEED 0x9E3779B97F4A7C15ULL
#include "llamacpp_testlib.h"

static bool isa_ok(enum q42_isa isa)
{
	return q42_llamacpp_ops_get(isa)->isa == isa;
}

static const enum q42_isa simd_isas[] = {Q42_ISA_AVX2, Q42_ISA_AVX512};

/* One dtype/placement/shape on every available SIMD ISA, against the
 * scalar definition, bit for bit. */
/* The llama.cpp CPU variant the checks below select for (the zen4 tests
 * set it for their run). */
static enum q42_llamacpp_variant g_variant = Q42_LLAMACPP_SAPPHIRERAPIDS;

static void check_shape(uint32_t dtype, enum q42_llamacpp_place place, int64_t n, int64_t n_rows,
			int64_t n_tok)
{
	q42_llamacpp_kernels ref;
	/* selection wants n_out % 32 == 0 for the AMX kernels: select with
	 * 32 rows, run with n_rows */
	assert_true(q42_llamacpp_select_variant(g_variant, dtype, 32, n, place, Q42_ISA_SCALAR, &ref));
	uint64_t rb = 0, xb = 0;
	assert_true(q42_dtype_nbytes(dtype, (uint64_t)n, (uint64_t)n, &rb));
	assert_true(q42_dtype_nbytes(ref.vec_dot_type, (uint64_t)n, (uint64_t)n, &xb));
	uint8_t *w = test_alloc((size_t)(rb * (uint64_t)n_rows));
	uint8_t *x = test_alloc((size_t)(xb * (uint64_t)n_tok));
	float *src = test_alloc((size_t)n * sizeof(float));
	float *want = test_alloc((size_t)(n_rows * n_tok) * sizeof(float));
	float *got = test_alloc((size_t)(n_rows * n_tok) * sizeof(float));
	fill_weights(dtype, w, n_rows, n, rb);
	for (int64_t t = 0; t < n_tok; t++) {
		for (int64_t k = 0; k < n; k++)
			src[k] = rndf(t == 1 ? 100.0f : t == 2 && dtype == Q42_DTYPE_BF16 ? 1e30f : 1.0f);
		if (ref.quantize != NULL)
			ref.quantize(src, x + (uint64_t)t * xb, n);
		else
			memcpy(x + (uint64_t)t * xb, src, (size_t)n * sizeof(float));
	}
	/* the scalar rows: vec_dot per element, except where a token's place
	 * in the pass picks the order (Q2_K) */
	ref.rows(n, n_rows, w, rb, n_tok, x, xb, want, (uint64_t)n_rows);
	for (size_t i = 0; i < sizeof simd_isas / sizeof simd_isas[0]; i++) {
		q42_llamacpp_kernels k;
		if (!isa_ok(simd_isas[i]))
			continue;
		assert_true(q42_llamacpp_select_variant(g_variant, dtype, 32, n, place, simd_isas[i], &k));
		assert_int_equal(k.vec_dot_type, ref.vec_dot_type);
		memset(got, 0xFF, (size_t)(n_rows * n_tok) * sizeof(float));
		k.rows(n, n_rows, w, rb, n_tok, x, xb, got, (uint64_t)n_rows);
		for (int64_t e = 0; e < n_rows * n_tok; e++)
			if (bits(got[e]) != bits(want[e]))
				fail_msg("%s %s n=%lld rows=%lld toks=%lld element %lld: "
					 "%a, scalar %a", ref.name, q42_isa_name(simd_isas[i]),
					 (long long)n, (long long)n_rows, (long long)n_tok, (long long)e,
					 (double)got[e], (double)want[e]);
		/* the quantizer too, on this row */
		if (k.quantize != NULL && k.quantize != ref.quantize) {
			uint8_t *x2 = malloc((size_t)xb);
			assert_non_null(x2);
			k.quantize(src, x2, n);
			ref.quantize(src, x + (uint64_t)(n_tok - 1) * xb, n);
			assert_memory_equal(x2, x + (uint64_t)(n_tok - 1) * xb, (size_t)xb);
			free(x2);
		}
	}
	free(w);
	free(x);
	free(src);
	free(want);
	free(got);
}

/* One dtype/placement: all shapes, every available SIMD ISA. */
static void check_rows(uint32_t dtype, enum q42_llamacpp_place place, int64_t blk)
{
	static const int64_t row_counts[] = {32, 1, 7, 9, 19};
	for (int64_t nb = 1; nb <= 9; nb += 2)
		for (size_t rc = 0; rc < sizeof row_counts / sizeof row_counts[0]; rc++)
			check_shape(dtype, place, nb * blk, row_counts[rc], 1 + (nb % 3));
}

static void test_rows_q8_0(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q8_0, Q42_LLAMACPP_MATMUL, 32);
	/* rows past the AVX2 kernels' widened scales (128 blocks): tokens one
	 * at a time, scales widened per token; 4 and 5 tokens: pairs, and a
	 * lone last one */
	check_shape(Q42_DTYPE_Q8_0, Q42_LLAMACPP_MATMUL, 32 * 129, 9, 3);
	check_shape(Q42_DTYPE_Q8_0, Q42_LLAMACPP_MATMUL, 32 * 7, 9, 4);
	check_shape(Q42_DTYPE_Q8_0, Q42_LLAMACPP_MATMUL, 32 * 7, 9, 5);
}

/* The AVX-512 two-rows-per-register kernel of the eight-lane kinds: its
 * tiles of 8 tokens (full, partial, several), odd row counts (a row
 * paired with itself), groups of eight rows with a remainder, tiles
 * narrowed by long rows (over 256 blocks) and rows past its tables (2048
 * blocks: the scalar definition). */
static void check_two_rows(uint32_t dtype)
{
	static const int64_t shapes[][3] = {
		{30, 8, 8}, {30, 9, 9}, {31, 17, 19}, {2, 3, 16}, {30, 21, 1}, {300, 9, 1}, {257, 3, 3},
		{2049, 2, 2},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		check_shape(dtype, Q42_LLAMACPP_CPU, shapes[i][0] * 32, shapes[i][1], shapes[i][2]);
}

/* Q5_1 takes ggml's x86 vec_dot in either buffer: odd block counts take
 * the one-block tail of the AVX-512 pair loop */
static void test_rows_q5_1(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q5_1, Q42_LLAMACPP_CPU, 32);
	check_rows(Q42_DTYPE_Q5_1, Q42_LLAMACPP_MATMUL, 32);
	check_two_rows(Q42_DTYPE_Q5_1);
}

/* Q5_0 likewise (ggml's vec_dot, llamafile's tinyBLAS: one order) */
static void test_rows_q5_0(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q5_0, Q42_LLAMACPP_CPU, 32);
	check_rows(Q42_DTYPE_Q5_0, Q42_LLAMACPP_MATMUL, 32);
	check_two_rows(Q42_DTYPE_Q5_0);
}

/* A type's R16 geometry as kernels/q42_pack.h states it: file block
 * bytes, quants' and qh's offsets in it, quant bytes per row and block,
 * and the packed fields after the quants (sizes per block of sixteen
 * rows; 0: absent) -- m (Q5_0's and Q5_1's fifth-bit masks), d, mn
 * (Q4_1's and Q5_1's mins). */
struct r16_geo {
	uint32_t dtype;
	int bytes, qs, qh, qbytes, fsize[3];
};

static const struct r16_geo r16_geos[] = {
	{Q42_DTYPE_Q5_0, 22, 6, 2, 16, {64, 32, 0}},
	{Q42_DTYPE_Q4_0, 18, 2, 0, 16, {0, 32, 0}},
	{Q42_DTYPE_Q4_1, 20, 4, 0, 16, {0, 32, 32}},
	{Q42_DTYPE_Q5_1, 24, 8, 4, 16, {64, 32, 32}},
	{Q42_DTYPE_Q8_0, 34, 2, 0, 32, {0, 32, 0}},
	{Q42_DTYPE_F16, 64, 0, 0, 0, {0, 0, 0}}, /* bytes per 32 values; no blocks */
};

/* Q4_K, super-blocks of 256 values (checked apart: its layout has no
 * block pairs) */
static const struct r16_geo r16_q4_k = {Q42_DTYPE_Q4_K, 144, 16, 0, 128, {0, 0, 0}};

/* Q6_K, super-blocks of 256 values in pairs: per row and super-block 192
 * quant bytes (ql, then qh), then the scales (256 bytes for sixteen rows)
 * and d (32) */
static const struct r16_geo r16_q6_k = {Q42_DTYPE_Q6_K, 210, 0, 128, 192, {256, 32, 0}};

/* Offset of block j's quants (f < 0) or field f in a group of nb blocks:
 * pairs of blocks, quants of both first, then each field of both; a lone
 * last block its quants and fields in order. */
static uint64_t r16_spec_at(const struct r16_geo *g, int64_t nb, int64_t j, int f)
{
	const uint64_t qs = 16u * (uint64_t)g->qbytes;
	const uint64_t blk = qs + (uint64_t)(g->fsize[0] + g->fsize[1] + g->fsize[2]);
	const uint64_t base = (uint64_t)(j / 2) * 2 * blk, odd = (uint64_t)(j % 2);
	const uint64_t in = j % 2 == 0 && j + 1 == nb ? 1 : 2;
	if (f < 0)
		return base + qs * odd;
	uint64_t o = base + qs * in;
	for (int i = 0; i < f; i++)
		o += in * (uint64_t)g->fsize[i];
	return o + odd * (uint64_t)g->fsize[f];
}

/* The packed bytes against that layout (written from the header's
 * comment, not from the packer): quant byte i of row r at qs + 64 (i / 4)
 * + 4 r + i % 4; the fifth bit e (Q5_0, Q5_1) at bit 4 r + e % 4 of the
 * little-endian qword e / 4 of m; the scale (block bytes 0..1) at d + 2 r;
 * the min (Q4_1, Q5_1: bytes 2..3) at mn + 2 r; rows past the last full group as
 * they were. */
static void check_r16_layout(const struct r16_geo *geo, const uint8_t *p, const uint8_t *w, int64_t nb,
			     int64_t n_rows)
{
	const uint64_t rb = (uint64_t)(nb * geo->bytes);
	const int64_t full = n_rows / 16 * 16;
	for (int64_t r = 0; r < full; r++) {
		const uint8_t *grp = p + (uint64_t)(r / 16) * 16 * rb;
		const uint64_t rr = (uint64_t)(r % 16);
		for (int64_t j = 0; j < nb; j++) {
			const uint8_t *b = w + (uint64_t)r * rb + (uint64_t)(j * geo->bytes);
			const uint64_t qs = r16_spec_at(geo, nb, j, -1);
			assert_memory_equal(grp + r16_spec_at(geo, nb, j, 1) + 2 * rr, b, 2);
			if (geo->fsize[2])
				assert_memory_equal(grp + r16_spec_at(geo, nb, j, 2) + 2 * rr, b + 2, 2);
			for (uint64_t i = 0; i < (uint64_t)geo->qbytes; i++)
				assert_int_equal(grp[qs + 64 * (i / 4) + 4 * rr + i % 4], b[geo->qs + (int)i]);
			if (geo->fsize[0] == 0)
				continue;
			const uint64_t m = r16_spec_at(geo, nb, j, 0);
			for (int e = 0; e < 32; e++) {
				const uint64_t bit = 4 * rr + (uint64_t)(e % 4);
				const int got = (grp[m + 8 * (uint64_t)(e / 4) + bit / 8] >> (bit % 8)) & 1;
				assert_int_equal(got, (b[geo->qh + e / 8] >> (e % 8)) & 1);
			}
		}
	}
	assert_memory_equal(p + (uint64_t)full * rb, w + (uint64_t)full * rb, (size_t)((uint64_t)(n_rows - full) * rb));
}

/* F16 in the R16 layout, as kernels/q42_pack.h states it: value k of a
 * full group's row r at 512 (k / 16) + 32 (r % 16) + 2 (k % 16); rows
 * past the last full group as they were. */
static void check_f16_layout(const uint8_t *p, const uint8_t *w, int64_t n, int64_t n_rows)
{
	const uint64_t rb = 2 * (uint64_t)n;
	const int64_t full = n_rows / 16 * 16;
	for (int64_t r = 0; r < full; r++)
		for (int64_t k = 0; k < n; k++)
			assert_memory_equal(p + (uint64_t)(r / 16) * 16 * rb + 512 * (uint64_t)(k / 16) +
						    32 * (uint64_t)(r % 16) + 2 * (uint64_t)(k % 16),
					    w + (uint64_t)r * rb + 2 * (uint64_t)k, 2);
	assert_memory_equal(p + (uint64_t)full * rb, w + (uint64_t)full * rb, (size_t)((uint64_t)(n_rows - full) * rb));
}

/* Q4_K in the R16 layout, as kernels/q42_pack.h states it: per
 * super-block j of a full group, at 2304 j, qs byte i = 32 h + 4 l + k of
 * row r at 64 (8 h + l) + 4 r + k, scale byte b at 2048 + 16 b + r, d at
 * 2240 + 2 r, dmin at 2272 + 2 r. */
static void check_q4_k_layout(const uint8_t *p, const uint8_t *w, int64_t nsb, int64_t n_rows)
{
	const uint64_t rb = 144 * (uint64_t)nsb;
	const int64_t full = n_rows / 16 * 16;
	for (int64_t r = 0; r < full; r++) {
		const uint64_t rr = (uint64_t)(r % 16);
		for (int64_t j = 0; j < nsb; j++) {
			const uint8_t *b = w + (uint64_t)r * rb + 144 * (uint64_t)j;
			const uint8_t *blk = p + (uint64_t)(r / 16) * 16 * rb + 2304 * (uint64_t)j;
			for (uint64_t i = 0; i < 128; i++)
				assert_int_equal(blk[64 * (8 * (i / 32) + (i % 32) / 4) + 4 * rr + i % 4], b[16 + i]);
			for (uint64_t k = 0; k < 12; k++)
				assert_int_equal(blk[2048 + 16 * k + rr], b[4 + k]);
			assert_memory_equal(blk + 2240 + 2 * rr, b, 2);
			assert_memory_equal(blk + 2272 + 2 * rr, b + 2, 2);
		}
	}
	assert_memory_equal(p + (uint64_t)full * rb, w + (uint64_t)full * rb, (size_t)((uint64_t)(n_rows - full) * rb));
}

/* Q6_K's packed bytes against q42_pack.h's comment: in super-block j
 * (paired as the blocks above), quant byte i of row r (ql bytes 0..127,
 * then qh 128..191) at 64 (i / 4) + 4 r + i % 4, scale byte s at 16 s +
 * r of the scales, d at 2 r of the d field; rows past the last full group
 * as they were. */
static void check_q6_k_layout(const uint8_t *p, const uint8_t *w, int64_t nsb, int64_t n_rows)
{
	const uint64_t rb = 210 * (uint64_t)nsb;
	const int64_t full = n_rows / 16 * 16;
	for (int64_t r = 0; r < full; r++) {
		const uint64_t rr = (uint64_t)(r % 16);
		const uint8_t *grp = p + (uint64_t)(r / 16) * 16 * rb;
		for (int64_t j = 0; j < nsb; j++) {
			const uint8_t *b = w + (uint64_t)r * rb + 210 * (uint64_t)j;
			const uint8_t *q = grp + r16_spec_at(&r16_q6_k, nsb, j, -1);
			for (uint64_t i = 0; i < 192; i++)
				assert_int_equal(q[64 * (i / 4) + 4 * rr + i % 4], b[i]);
			for (uint64_t k = 0; k < 16; k++)
				assert_int_equal(grp[r16_spec_at(&r16_q6_k, nsb, j, 0) + 16 * k + rr], b[192 + k]);
			assert_memory_equal(grp + r16_spec_at(&r16_q6_k, nsb, j, 1) + 2 * rr, b + 208, 2);
		}
	}
	assert_memory_equal(p + (uint64_t)full * rb, w + (uint64_t)full * rb, (size_t)((uint64_t)(n_rows - full) * rb));
}

/* A type repacked at load (q42_llamacpp_select_packed, R16 layout): the
 * packed product of the packed copy against the scalar definition on the
 * file's rows, for whole matrices and for calls that start at a later
 * group (as the engine's tiles do), with full groups, a tail of rows in
 * the file's layout, odd and even block counts (the unpaired last block),
 * and one, two (a full token pass), odd numbers of tokens and passes long
 * enough for AMX tiles where the CPU has them (Q4_0, Q4_1, Q8_0; F16: its blocked prompt kernel, from 8). */
static void check_packed(const struct r16_geo *geo, int64_t nb, int64_t n_rows, int64_t n_tok)
{
	const int64_t n = nb * 32;
	q42_llamacpp_kernels ref;
	q42_llamacpp_packed pk;
	if (!q42_llamacpp_select_packed_variant(g_variant, geo->dtype, n_rows, n, Q42_LLAMACPP_MATMUL, Q42_ISA_AVX512,
						&pk))
		skip();
	assert_true(q42_llamacpp_select_variant(g_variant, geo->dtype, n_rows, n, Q42_LLAMACPP_MATMUL, Q42_ISA_SCALAR,
						&ref));
	uint64_t rb = 0, xb = 0;
	assert_true(q42_dtype_nbytes(geo->dtype, (uint64_t)n, (uint64_t)n, &rb));
	assert_true(q42_dtype_nbytes(ref.vec_dot_type, (uint64_t)n, (uint64_t)n, &xb));
	uint8_t *w = malloc((size_t)(rb * (uint64_t)n_rows));
	uint8_t *packed = aligned_alloc(64, (size_t)((rb * (uint64_t)n_rows + 63) / 64 * 64));
	uint8_t *x = malloc((size_t)(xb * (uint64_t)n_tok));
	float *src = malloc((size_t)n * sizeof(float));
	float *want = malloc((size_t)(n_rows * n_tok) * sizeof(float));
	float *got = malloc((size_t)(n_rows * n_tok) * sizeof(float));
	assert_true(w && packed && x && src && want && got);
	fill_weights(geo->dtype, w, n_rows, n, rb);
	for (int64_t t = 0; t < n_tok; t++) {
		for (int64_t k = 0; k < n; k++)
			src[k] = rndf(t == 1 ? 100.0f : 1.0f);
		/* F16 weights take the activations as floats */
		if (ref.quantize != NULL)
			ref.quantize(src, x + (uint64_t)t * xb, n);
		else
			memcpy(x + (uint64_t)t * xb, src, (size_t)n * sizeof(float));
	}
	ref.rows(n, n_rows, w, rb, n_tok, x, xb, want, (uint64_t)n_rows);
	pk.pack(packed, w, n, n_rows);
	/* every row back from the packed copy, as a tied embedding reads it */
	uint8_t *row = malloc((size_t)rb);
	assert_non_null(row);
	for (int64_t r = 0; r < n_rows; r++) {
		memset(row, 0xA5, (size_t)rb);
		pk.row(row, packed, n, n_rows, r);
		assert_memory_equal(row, w + (uint64_t)r * rb, (size_t)rb);
	}
	free(row);
	if (geo->dtype == Q42_DTYPE_F16)
		check_f16_layout(packed, w, n, n_rows);
	else if (geo->dtype == Q42_DTYPE_Q4_K)
		check_q4_k_layout(packed, w, nb / 8, n_rows);
	else if (geo->dtype == Q42_DTYPE_Q6_K)
		check_q6_k_layout(packed, w, nb / 8, n_rows);
	else
		check_r16_layout(geo, packed, w, nb, n_rows);
	for (int64_t r0 = 0; r0 < n_rows; r0 += 16) {
		memset(got, 0xFF, (size_t)(n_rows * n_tok) * sizeof(float));
		pk.rows(n, n_rows - r0, packed + (uint64_t)r0 * rb, rb, n_tok, x, xb, got + r0, (uint64_t)n_rows);
		for (int64_t t = 0; t < n_tok; t++)
			for (int64_t r = r0; r < n_rows; r++) {
				const int64_t e = t * n_rows + r;
				if (bits(got[e]) != bits(want[e]))
					fail_msg("%s nb=%lld rows=%lld toks=%lld from row %lld: row %lld token %lld: "
						 "%a, scalar %a", pk.name, (long long)nb, (long long)n_rows,
						 (long long)n_tok, (long long)r0, (long long)r, (long long)t,
						 (double)got[e], (double)want[e]);
			}
	}
	free(w);
	free(packed);
	free(x);
	free(src);
	free(want);
	free(got);
}

static void test_rows_packed(void **state)
{
	(void)state;
	/* row counts of a multiple of 32 where the file layout's kernel is
	 * the AMX buffer's (Q4_0, Q4_1, Q8_0, F16 select it only then) */
	static const int64_t shapes[][3] = {
		{1, 32, 1}, {2, 32, 2}, {3, 33, 3}, {30, 48, 1}, {31, 33, 5}, {30, 63, 2}, {80, 32, 4},
		{7, 64, 9}, {30, 96, 20}, {5, 32, 4},
	};
	for (size_t g = 0; g < sizeof r16_geos / sizeof r16_geos[0]; g++)
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
			if (r16_geos[g].dtype == Q42_DTYPE_Q5_0 || r16_geos[g].dtype == Q42_DTYPE_Q5_1 ||
			    shapes[i][1] % 32 == 0)
				check_packed(&r16_geos[g], shapes[i][0], shapes[i][1], shapes[i][2]);
	/* Q4_K: one super-block, several, rows whole groups and not, and
	 * passes of one token, a few, and enough for AMX tiles */
	static const int64_t k4[][3] = {{8, 32, 1}, {16, 64, 2}, {80, 96, 5}, {24, 32, 20}, {8, 64, 9}};
	for (size_t i = 0; i < sizeof k4 / sizeof k4[0]; i++)
		check_packed(&r16_q4_k, k4[i][0], k4[i][1], k4[i][2]);
}

/* Q6_K apart: it is repacked only where its file layout's products are
 * the plain AVX-512 ones; on a CPU with AMX they are llama.cpp's AMX
 * forms, which the R16 product does not reproduce, so it is not used and
 * this test skips (the others above still run there). One super-block (a
 * lone one), two (a pair), three (a pair and a lone one), ten; one token
 * and several (row counts a multiple of 32, the only ones its file
 * layout's product takes here). */
static void test_rows_packed_q6_k(void **state)
{
	(void)state;
	static const int64_t k6[][3] = {{8, 32, 1}, {16, 64, 2}, {24, 32, 5}, {80, 96, 3}, {24, 32, 20}, {8, 64, 9}};
	for (size_t i = 0; i < sizeof k6 / sizeof k6[0]; i++)
		check_packed(&r16_q6_k, k6[i][0], k6[i][1], k6[i][2]);
}

/* The zen4 variant's Q8_0, Q5_K, and Q4_0, Q4_K and IQ4_XS in the plain
 * buffer (ggml's x86 vec_dot, eight lanes; IQ4_XS's IQ panel): their
 * AVX2 and AVX-512 rows against the scalar definition, every shape of
 * check_rows (Q8_0 also long rows); its R16 form for any row count from 16 (no AMX constraint),
 * tails of rows, odd block counts and passes of one to many tokens. Its
 * Q4_K (CPU_REPACK) and Q6_K (plain buffer) in the R16 layout: lone
 * tokens, passes with and without whole groups of four, a tail of 8 rows. */
/* Every packed form is AVX-512 code, its packing included: an instruction
 * set below that gets none, whatever the variant (haswell names zen4's
 * Q4_K, Q6_K and Q8_0 selections on AVX2 CPUs). */
static void test_packed_needs_avx512(void **state)
{
	static const uint32_t types[] = {Q42_DTYPE_Q4_0, Q42_DTYPE_Q4_1, Q42_DTYPE_Q5_0, Q42_DTYPE_Q5_1,
					 Q42_DTYPE_Q8_0, Q42_DTYPE_Q4_K, Q42_DTYPE_Q6_K, Q42_DTYPE_F16};
	static const enum q42_llamacpp_variant variants[] = {Q42_LLAMACPP_SAPPHIRERAPIDS, Q42_LLAMACPP_ZEN4,
							     Q42_LLAMACPP_HASWELL, Q42_LLAMACPP_ICELAKE};
	static const enum q42_isa below[] = {Q42_ISA_SCALAR, Q42_ISA_AVX2};
	q42_llamacpp_packed pk;
	int found = 0;
	(void)state;
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
		for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
			for (size_t i = 0; i < sizeof below / sizeof below[0]; i++)
				assert_false(q42_llamacpp_select_packed_variant(variants[v], types[t], 64, 512,
										Q42_LLAMACPP_MATMUL, below[i], &pk));
			found += q42_llamacpp_select_packed_variant(variants[v], types[t], 64, 512,
								    Q42_LLAMACPP_MATMUL, Q42_ISA_AVX512, &pk);
		}
	/* the haswell variant's Q6_K has a packed form where AVX-512 runs */
	if (q42_isa_detect() == Q42_ISA_AVX512) {
		assert_true(found > 0);
		assert_true(q42_llamacpp_select_packed_variant(Q42_LLAMACPP_HASWELL, Q42_DTYPE_Q6_K, 64, 512,
							       Q42_LLAMACPP_MATMUL, Q42_ISA_AVX512, &pk));
	}
}

static void test_zen4_simd(void **state)
{
	static const int64_t k4[][3] = {{8, 32, 1}, {16, 64, 2}, {80, 96, 5}, {24, 40, 20}, {8, 64, 9}, {8, 24, 4}};
	(void)state;
	static const int64_t shapes[][3] = {{1, 16, 1}, {2, 17, 2}, {3, 33, 3}, {30, 48, 1}, {31, 40, 5}, {7, 64, 9}};
	g_variant = Q42_LLAMACPP_ZEN4;
	check_rows(Q42_DTYPE_Q8_0, Q42_LLAMACPP_MATMUL, 32);
	check_rows(Q42_DTYPE_Q5_K, Q42_LLAMACPP_MATMUL, 256);
	check_shape(Q42_DTYPE_Q8_0, Q42_LLAMACPP_MATMUL, 32 * 129, 9, 3);
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		check_packed(&r16_geos[4], shapes[i][0], shapes[i][1], shapes[i][2]);
	for (size_t i = 0; i < sizeof k4 / sizeof k4[0]; i++) {
		check_packed(&r16_q4_k, k4[i][0], k4[i][1], k4[i][2]);
		check_packed(&r16_q6_k, k4[i][0], k4[i][1], k4[i][2]);
	}
	/* the plain CPU buffer (place CPU: no CPU_REPACK) of Q4_0 (also the
	 * AVX-512 two-rows form's tiles), Q4_K and IQ4_XS */
	check_rows(Q42_DTYPE_Q4_0, Q42_LLAMACPP_CPU, 32);
	check_two_rows(Q42_DTYPE_Q4_0);
	check_rows(Q42_DTYPE_Q4_K, Q42_LLAMACPP_CPU, 256);
	check_rows(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_CPU, 256);
	/* IQ4_XS of a multiple of 8 rows: vec_dot below 8 tokens, the IQ
	 * panel's rounding from 8 */
	check_rows(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 256);
	check_shape(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 256 * 3, 9, 8);
	check_shape(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 256 * 2, 17, 19);
	g_variant = Q42_LLAMACPP_SAPPHIRERAPIDS;
}

/* IQ4_NL: the repacked order (AVX2 and AVX-512 rows, eight rows at a
 * time, odd row counts; AMX tiles) and the plain buffer's (scalar) */
static void test_rows_iq4_nl(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_IQ4_NL, Q42_LLAMACPP_MATMUL, 32);
	check_rows(Q42_DTYPE_IQ4_NL, Q42_LLAMACPP_CPU, 32);
	/* AMX tiles (16 rows, 4 tokens or more): whole and partial token
	 * tiles, a row tail; the plain buffer's tinyBLAS order */
	check_shape(Q42_DTYPE_IQ4_NL, Q42_LLAMACPP_MATMUL, 512, 16, 4);
	check_shape(Q42_DTYPE_IQ4_NL, Q42_LLAMACPP_MATMUL, 768, 37, 19);
	check_shape(Q42_DTYPE_IQ4_NL, Q42_LLAMACPP_MATMUL, 256, 32, 35);
	check_shape(Q42_DTYPE_IQ4_NL, Q42_LLAMACPP_CPU, 480, 9, 5);
}

/* IQ4_XS (AMX buffer order): 1..9 super-blocks, odd row counts, token
 * tiles of 8 (full, full and partial, two full), AMX tiles */
static void test_rows_iq4_xs(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 256);
	static const int64_t toks[] = {8, 11, 16};
	for (size_t i = 0; i < sizeof toks / sizeof toks[0]; i++)
		check_shape(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 768, 5, toks[i]);
	/* AMX tiles: whole and partial token tiles, a row tail */
	check_shape(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 512, 16, 4);
	check_shape(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 768, 37, 19);
	check_shape(Q42_DTYPE_IQ4_XS, Q42_LLAMACPP_MATMUL, 256, 32, 35);
}

/* F32 weights: vec_dot on the true length for one token (whole 64-steps
 * and leftovers), tinyBLAS lanes for more; a length tinyBLAS refuses */
static void test_rows_f32(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 64);
	check_shape(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 200, 21, 3);
	check_shape(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 100, 9, 1);
	check_shape(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 48, 5, 4);
	/* a LoRA adapter's B (rank 16, 4, 2 values a row, all leftovers):
	 * rows in lanes of 16 and 8 and a rest */
	check_shape(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 16, 37, 1);
	check_shape(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 4, 45, 1);
	check_shape(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 2, 16, 1);
	check_shape(Q42_DTYPE_F32, Q42_LLAMACPP_CPU, 100, 41, 1);
}

/* BF16 (AVX-512 BF16 where the CPU has it): one token (groups of 16
 * rows and a rest, a 32-element tail past the 64-steps), tinyBLAS tiles
 * of 4 x 4 with row and token rests, and a length tinyBLAS refuses
 * (vec_dot for every token, a 16-element tail) */
static void test_rows_bf16(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 64);
	check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 96, 37, 1);
	check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 96, 37, 9);
	check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 1024, 16, 4);
	check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 464, 21, 6);
}

/* haswell's and icelake's BF16 (widened to f32, no VDPBF16PS): the same
 * shapes (tiles of 4 rows x 3 or 4 tokens, row and token rests), and
 * lengths their tinyBLAS declines (vec_dot for every token, leftovers
 * past the 32-steps) */
static void test_rows_bf16_widened(void **state)
{
	static const enum q42_llamacpp_variant variants[] = {Q42_LLAMACPP_HASWELL, Q42_LLAMACPP_ICELAKE};
	(void)state;
	for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
		g_variant = variants[i];
		check_rows(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 64);
		check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 96, 37, 9);
		check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 1024, 16, 4);
		check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 464, 21, 6);
		check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 100, 9, 5);
		check_shape(Q42_DTYPE_BF16, Q42_LLAMACPP_CPU, 40, 7, 7);
	}
	g_variant = Q42_LLAMACPP_SAPPHIRERAPIDS;
}

static void test_rows_q2_k(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q2_K, Q42_LLAMACPP_MATMUL, 256);
	/* groups of four tokens (gemm order) and the rest; AVX-512 tiles of
	 * 8 that split a group of four's run */
	static const int64_t toks[] = {4, 5, 8, 11, 16, 19};
	for (size_t i = 0; i < sizeof toks / sizeof toks[0]; i++)
		check_shape(Q42_DTYPE_Q2_K, Q42_LLAMACPP_MATMUL, 768, 5, toks[i]);
	/* AMX tiles (16 rows and 4 tokens or more): whole and partial token
	 * tiles, a group of four cut by a tile edge, a row tail */
	check_shape(Q42_DTYPE_Q2_K, Q42_LLAMACPP_MATMUL, 512, 16, 4);
	check_shape(Q42_DTYPE_Q2_K, Q42_LLAMACPP_MATMUL, 768, 37, 19);
	check_shape(Q42_DTYPE_Q2_K, Q42_LLAMACPP_MATMUL, 256, 32, 35);
}

static void test_rows_q3_k(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q3_K, Q42_LLAMACPP_MATMUL, 256);
	check_rows(Q42_DTYPE_Q3_K, Q42_LLAMACPP_CPU, 256);
	/* AVX-512 token tiles: one full, full and partial, two full */
	static const int64_t toks[] = {8, 11, 16};
	for (size_t i = 0; i < sizeof toks / sizeof toks[0]; i++)
		check_shape(Q42_DTYPE_Q3_K, Q42_LLAMACPP_MATMUL, 768, 5, toks[i]);
}

static void test_rows_tq(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_TQ1_0, Q42_LLAMACPP_MATMUL, 256);
	check_rows(Q42_DTYPE_TQ2_0, Q42_LLAMACPP_CPU, 256);
	/* AVX-512 token tiles: one full, full and partial, two full */
	static const int64_t toks[] = {8, 11, 16};
	for (size_t i = 0; i < sizeof toks / sizeof toks[0]; i++) {
		check_shape(Q42_DTYPE_TQ1_0, Q42_LLAMACPP_MATMUL, 768, 5, toks[i]);
		check_shape(Q42_DTYPE_TQ2_0, Q42_LLAMACPP_MATMUL, 512, 3, toks[i]);
	}
}

static void test_rows_q4_0(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q4_0, Q42_LLAMACPP_MATMUL, 32);
}

static void test_rows_q4_k(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q4_K, Q42_LLAMACPP_MATMUL, 256);
}

static void test_rows_q4_1(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q4_1, Q42_LLAMACPP_MATMUL, 32);
	check_rows(Q42_DTYPE_Q4_1, Q42_LLAMACPP_CPU, 32);
	check_two_rows(Q42_DTYPE_Q4_1);
}

static void test_rows_q5_k(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q5_K, Q42_LLAMACPP_MATMUL, 256);
}

static void test_rows_q6_k(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_Q6_K, Q42_LLAMACPP_MATMUL, 256);
}

static void test_rows_f16_f32(void **state)
{
	(void)state;
	check_rows(Q42_DTYPE_F16, Q42_LLAMACPP_MATMUL, 16);
}

static void test_rows_f16(void **state)
{
	(void)state;
	/* the plain-buffer f16 product also has leftovers past 64 */
	check_rows(Q42_DTYPE_F16, Q42_LLAMACPP_CPU, 16);
	check_rows(Q42_DTYPE_F16, Q42_LLAMACPP_CPU, 37);
}

/* A pass's tinyBLAS lanes in tiles (4 rows x 3 or 4 tokens, the rest of
 * rows and tokens one at a time) for the F32 and F16 weights of the
 * variants that take them: zen4 (16 lanes; its F16 too) and haswell (8) */
static void test_rows_lanes_pass(void **state)
{
	static const enum q42_llamacpp_variant variants[] = {Q42_LLAMACPP_ZEN4, Q42_LLAMACPP_HASWELL};
	static const uint32_t dtypes[] = {Q42_DTYPE_F32, Q42_DTYPE_F16};
	static const int64_t shapes[][3] = {{64, 37, 9}, {48, 5, 4}, {1024, 16, 4}, {96, 21, 6}, {32, 3, 2}, {80, 7, 11}};
	(void)state;
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		g_variant = variants[v];
		for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
			for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
				check_shape(dtypes[d], Q42_LLAMACPP_CPU, shapes[i][0], shapes[i][1], shapes[i][2]);
	}
	g_variant = Q42_LLAMACPP_SAPPHIRERAPIDS;
}

/* Random floats with some specials mixed in where special is true. */
static void fill_floats(float *v, int64_t n, float scale, bool special)
{
	static const float sp[] = {0.0f, -0.0f, 1e-40f, -3e-39f, 65504.0f, 65520.0f, 1e30f,
				   -1e30f, 5.9604645e-08f, 2.9802322e-08f};
	for (int64_t i = 0; i < n; i++)
		v[i] = special && rnd() % 7 == 0 ? sp[rnd() % (sizeof sp / sizeof sp[0])]
						 : rndf(scale);
}

static void test_quantizers(void **state)
{
	(void)state;
	const q42_llamacpp_ops *ref = q42_llamacpp_ops_get(Q42_ISA_SCALAR);
	for (size_t i = 0; i < sizeof simd_isas / sizeof simd_isas[0]; i++) {
		const q42_llamacpp_ops *o = q42_llamacpp_ops_get(simd_isas[i]);
		if (!isa_ok(simd_isas[i]))
			continue;
		for (int rep = 0; rep < 40; rep++) {
			enum { N = 32 * 9 };
			float src[N + 7];
			uint8_t a[2 * (N + 7)], b[2 * (N + 7)];
			fill_floats(src, N + 7, rep % 2 ? 1e-3f : 300.0f, rep % 3 == 0);
			if (rep % 5 == 1) /* whole blocks of zeros, NaN, infinity */
				for (int k = 0; k < 32; k++)
					src[k] = 0.0f;
			if (rep % 5 == 3) /* a block whose 127 / amax overflows, zeros in it */
				for (int k = 32; k < 64; k++)
					src[k] = k % 3 == 0 ? 0.0f : 1e-39f * (float)(k % 5 - 2);
			if (rep % 5 == 2) {
				src[40] = NAN;
				src[100] = INFINITY;
				src[150] = -INFINITY;
			}
			ref->quantize_q8_0(src, a, N);
			o->quantize_q8_0(src, b, N);
			/* NaN blocks are whatever the scalar code makes of them:
			 * the same bytes */
			assert_memory_equal(a, b, 34 * 9);
			ref->quantize_q8_1(src, a, N);
			o->quantize_q8_1(src, b, N);
			assert_memory_equal(a, b, 36 * 9);
			ref->quantize_f16(src, a, N + 7);
			o->quantize_f16(src, b, N + 7);
			assert_memory_equal(a, b, 2 * (N + 7));
			/* every tail length, from 16 + 1 values on: the bytes
			 * past n stay as they were; NaNs (rep % 5 == 2) reach
			 * the tails too */
			for (int64_t n = 1; n <= 33; n++) {
				const float *s = src + 40 - (rep % 5 == 2 ? n / 2 : 0);
				memset(a, 0x5A, 2 * 34);
				memset(b, 0x5A, 2 * 34);
				ref->quantize_f16(s, a, n);
				o->quantize_f16(s, b, n);
				assert_memory_equal(a, b, 2 * 34);
			}
		}
	}
}

static void check_f(const char *what, enum q42_isa isa, int64_t n, const float *got,
		    const float *want, int64_t count)
{
	for (int64_t e = 0; e < count; e++)
		if (bits(got[e]) != bits(want[e]))
			fail_msg("%s %s n=%lld element %lld: %a, scalar %a", what, q42_isa_name(isa),
				 (long long)n, (long long)e, (double)got[e], (double)want[e]);
}

/* The many-row forms against the one-row scalar products: 0 to 37 rows
 * (groups of sixteen and of four and a rest), rows apart by more than n;
 * f32 rows, then the same values rounded to f16 (x too) for the f16
 * cache's products. */
static void check_dots(const q42_llamacpp_ops *ref, const q42_llamacpp_ops *o, enum q42_isa isa, int64_t n,
		       const float *x)
{
	enum { ROWS = 37, PAD = 5 };
	typedef void (*dot_fn)(int64_t, float *, const void *, const void *);
	const uint64_t stride = (uint64_t)(n + PAD);
	float *w = malloc(sizeof(float) * stride * ROWS);
	uint16_t *w16 = malloc(sizeof(uint16_t) * stride * ROWS), *x16 = malloc(sizeof(uint16_t) * (size_t)n);
	float want[ROWS], got[ROWS];
	assert_non_null(w);
	assert_non_null(w16);
	assert_non_null(x16);
	fill_floats(w, (int64_t)stride * ROWS, 2.0f, false);
	q42_llamacpp_quantize_f16(w, w16, (int64_t)stride * ROWS);
	q42_llamacpp_quantize_f16(x, x16, n);
	const struct {
		const char *name;
		dot_fn one;
		q42_llamacpp_dots_fn rows;
		const void *w, *x;
		size_t elem;
	} c[] = {
		{"dot_f32_rows", ref->dot_f32, o->dot_f32_rows, w, x, 4},
		{"dot_f32_lanes_rows", ref->dot_f32_lanes, o->dot_f32_lanes_rows, w, x, 4},
		{"dot_f16_pad_rows", ref->dot_f16_pad, o->dot_f16_pad_rows, w16, x16, 2},
		{"dot_f16_lanes_rows", ref->dot_f16_lanes, o->dot_f16_lanes_rows, w16, x16, 2},
		{"dot_f16_rows", ref->dot_f16, o->dot_f16_rows, w16, x16, 2},
	};
	for (int64_t rows = 0; rows <= ROWS; rows++)
		for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
			for (int64_t r = 0; r < rows; r++)
				c[k].one(n, &want[r], (const uint8_t *)c[k].w + (uint64_t)r * stride * c[k].elem,
					 c[k].x);
			c[k].rows(n, rows, got, c[k].w, stride * c[k].elem, c[k].x);
			check_f(c[k].name, isa, n, got, want, rows);
		}
	free(w);
	free(w16);
	free(x16);
}

/* The stepped-row forms (the V cache's layout: a row's 64-element steps
 * apart by more than the rows' run, in chunks of two steps) against the
 * one-row scalar products on the same rows laid out contiguously: 0 to 37
 * rows, f32 and f16; elements the rows do not cover are NaN. */
static void check_vdots(const q42_llamacpp_ops *ref, const q42_llamacpp_ops *o, enum q42_isa isa, int64_t n,
			const float *x)
{
	enum { ROWS = 37 };
	typedef void (*dot_fn)(int64_t, float *, const void *, const void *);
	const int64_t steps = (n + 63) / 64;
	/* in elements: run 64 plus 3, step ROWS runs plus 5, chunk two steps
	 * plus 11 */
	const uint64_t run = 67, step = run * ROWS + 5, per = 2, chunk = per * step + 11;
	const uint64_t vn = chunk * (uint64_t)(steps / 2 + 1);
	float *w = malloc(sizeof(float) * (size_t)(64 * steps * ROWS));
	uint16_t *w16 = malloc(sizeof(uint16_t) * (size_t)(64 * steps * ROWS)), *x16 = malloc(sizeof(uint16_t) * (size_t)n);
	float *v = malloc(sizeof(float) * (size_t)vn);
	uint16_t *v16 = malloc(sizeof(uint16_t) * (size_t)vn);
	float want[ROWS], got[ROWS];
	assert_non_null(w);
	assert_non_null(w16);
	assert_non_null(x16);
	assert_non_null(v);
	assert_non_null(v16);
	fill_floats(w, 64 * steps * ROWS, 2.0f, false);
	q42_llamacpp_quantize_f16(w, w16, 64 * steps * ROWS);
	q42_llamacpp_quantize_f16(x, x16, n);
	memset(v, 0xFF, sizeof(float) * (size_t)vn);
	memset(v16, 0xFF, sizeof(uint16_t) * (size_t)vn);
	for (int64_t r = 0; r < ROWS; r++)
		for (int64_t k = 0; k < n; k++) {
			const uint64_t sk = (uint64_t)(k / 64);
			const uint64_t at = (uint64_t)r * run + sk / per * chunk + sk % per * step + (uint64_t)(k % 64);
			v[at] = w[r * 64 * steps + k];
			v16[at] = w16[r * 64 * steps + k];
		}
	const struct {
		const char *name;
		dot_fn one;
		q42_llamacpp_vdots_fn vrows;
		const void *w, *v, *x;
		size_t elem;
	} c[] = {
		{"dot_f32_vrows", ref->dot_f32, o->dot_f32_vrows, w, v, x, 4},
		{"dot_f32_lanes_vrows", ref->dot_f32_lanes, o->dot_f32_lanes_vrows, w, v, x, 4},
		{"dot_f16_pad_vrows", ref->dot_f16_pad, o->dot_f16_pad_vrows, w16, v16, x16, 2},
		{"dot_f16_lanes_vrows", ref->dot_f16_lanes, o->dot_f16_lanes_vrows, w16, v16, x16, 2},
	};
	for (int64_t rows = 0; rows <= ROWS; rows++)
		for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
			const q42_llamacpp_vlayout lay = {run * c[k].elem, step * c[k].elem, chunk * c[k].elem,
							(uint32_t)per};
			for (int64_t r = 0; r < rows; r++)
				c[k].one(n, &want[r], (const uint8_t *)c[k].w + (uint64_t)(r * 64 * steps) * c[k].elem,
					 c[k].x);
			c[k].vrows(n, rows, got, c[k].v, &lay, c[k].x);
			check_f(c[k].name, isa, n, got, want, rows);
		}
	free(w);
	free(w16);
	free(x16);
	free(v);
	free(v16);
}

/* dot_f32_vrows_multi and dot_f32_lanes_vrows_multi where a table has
 * them (the AVX-512 builds' and haswell's): the score and V products for several x at once against one call
 * per x of the same table's dot_f32_vrows and dot_f32_lanes_vrows (proven
 * against the scalar forms above), over stepped rows (chunks of two
 * steps), row counts of whole fours and sixteens and rests, one to nine x,
 * lengths of whole and partial 64-steps (64: the x held in registers). */
static void test_vrows_multi(void **state)
{
	enum { ROWS = 37, XMAX = 9, NMAX = 300 };
	static const int64_t ns[] = {1, 15, 16, 17, 64, 100, 128, 129, NMAX};
	static const int64_t rows[] = {1, 3, 4, 5, 16, 17, ROWS};
	const uint64_t run = 67, step = run * ROWS + 5, per = 2, chunk = per * step + 11;
	const uint64_t vn = chunk * (NMAX / 128 + 1), xs = NMAX + 3;
	const q42_llamacpp_vlayout lay = {run * 4, step * 4, chunk * 4, (uint32_t)per};
	float *v = malloc(sizeof(float) * (size_t)vn), *x = malloc(sizeof(float) * (size_t)(xs * XMAX));
	float want[XMAX * ROWS], got[XMAX * ROWS];
	int checked = 0;
	(void)state;
	assert_non_null(v);
	assert_non_null(x);
	fill_floats(v, (int64_t)vn, 2.0f, false);
	fill_floats(x, (int64_t)(xs * XMAX), 1.0f, false);
	for (size_t vi = 0; vi < 2 * sizeof simd_isas / sizeof simd_isas[0]; vi++) {
		/* the AVX-512 builds' tables, then haswell's */
		const size_t i = vi % 2;
		const q42_llamacpp_ops *o =
			q42_llamacpp_ops_get_variant(vi < 2 ? Q42_LLAMACPP_ZEN4 : Q42_LLAMACPP_HASWELL, simd_isas[i]);
		if (!isa_ok(simd_isas[i]) || o->dot_f32_lanes_vrows_multi == NULL)
			continue;
		const struct {
			const char *name;
			q42_llamacpp_vdots_fn one;
			q42_llamacpp_vdots_multi_fn multi;
		} c[] = {{"dot_f32_vrows_multi", o->dot_f32_vrows, o->dot_f32_vrows_multi},
			 {"dot_f32_lanes_vrows_multi", o->dot_f32_lanes_vrows, o->dot_f32_lanes_vrows_multi}};
		for (size_t f = 0; f < sizeof c / sizeof c[0]; f++)
			for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
				for (size_t b = 0; b < sizeof rows / sizeof rows[0]; b++)
					for (int64_t nx = 1; nx <= XMAX; nx++) {
						const int64_t n = ns[a], nr = rows[b];
						assert_non_null(c[f].multi);
						for (int64_t t = 0; t < nx; t++)
							c[f].one(n, nr, want + t * ROWS, v, &lay, x + t * (int64_t)xs);
						memset(got, 0xFF, sizeof got);
						c[f].multi(n, nr, nx, got, ROWS, v, &lay, x, xs * sizeof(float));
						for (int64_t t = 0; t < nx; t++)
							check_f(c[f].name, simd_isas[i], n, got + t * ROWS, want + t * ROWS,
								nr);
						checked++;
					}
	}
	if (isa_ok(Q42_ISA_AVX2))
		assert_int_not_equal(checked, 0);
	free(v);
	free(x);
}

/* A LoRA adapter's B for a lone token, packed in groups of 16 rows:
 * the scalar definition against q42_llamacpp_dot_f32_vd row by row, then
 * scaled and added (ggml_mul_mat, ggml_scale, ggml_add), and each SIMD
 * form against it; ranks of whole and partial vectors, row counts of
 * whole groups and rests; specials in the rows and in y, rows apart by
 * more than n (the file's stride). */
static void test_f32_t16(void **state)
{
	enum { RMAX = 45, NMAX = 63, PAD = 3 };
	static const int64_t ns[] = {1, 2, 4, 16, 17, 32, 63};
	static const int64_t rows[] = {0, 1, 7, 8, 15, 16, 17, 37, 45};
	const q42_llamacpp_ops *ref = q42_llamacpp_ops_get(Q42_ISA_SCALAR);
	float w[RMAX * (NMAX + PAD)], x[NMAX], y0[RMAX + 1], want[RMAX + 1], got[RMAX + 1];
	float *wp = malloc(sizeof(float) * (size_t)q42_llamacpp_f32_t16_floats(NMAX, RMAX));
	(void)state;
	assert_non_null(wp);
	assert_ptr_equal(ref->f32_t16_axpy, q42_llamacpp_f32_t16_axpy);
	for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
		for (size_t b = 0; b < sizeof rows / sizeof rows[0]; b++) {
			const int64_t n = ns[a], nr = rows[b];
			const uint64_t stride = (uint64_t)(n + PAD) * sizeof(float);
			const float scale = b % 2 ? 0.75f : -3.0f;
			fill_floats(w, nr * (n + PAD), 2.0f, true);
			fill_floats(x, n, 2.0f, b % 3 == 0);
			fill_floats(y0, nr + 1, 4.0f, true);
			q42_llamacpp_pack_f32_t16(n, nr, w, stride, wp);
			memcpy(want, y0, sizeof want);
			for (int64_t r = 0; r < nr; r++) {
				float d;
				q42_llamacpp_dot_f32_vd(n, &d, (const uint8_t *)w + (uint64_t)r * stride, x);
				const float f = d * scale;
				want[r] = want[r] + f;
			}
			memcpy(got, y0, sizeof got);
			ref->f32_t16_axpy(n, nr, wp, x, scale, got);
			check_f("f32_t16_axpy", Q42_ISA_SCALAR, n, got, want, nr + 1);
			for (size_t i = 0; i < sizeof simd_isas / sizeof simd_isas[0]; i++) {
				if (!isa_ok(simd_isas[i]))
					continue;
				memcpy(got, y0, sizeof got);
				q42_llamacpp_ops_get(simd_isas[i])->f32_t16_axpy(n, nr, wp, x, scale, got);
				check_f("f32_t16_axpy", simd_isas[i], n, got, want, nr + 1);
			}
		}
	free(wp);
}

/* The V product of a short encoder pass over many columns: the scalar
 * form against q42_llamacpp_dot_f32_vd column by column, and each SIMD
 * form against it; lengths below and past 64, column counts of whole
 * and partial vectors, specials in the columns, columns apart by more
 * than n (V's blocks of 64). */
static void test_vd_cols(void **state)
{
	enum { CMAX = 37, STRIDE = 70 };
	static const int64_t ns[] = {0, 1, 7, 16, 17, 40, 63, 64, 70};
	static const int64_t cols[] = {0, 1, 15, 16, 17, 32, 37};
	float w[CMAX * STRIDE], x[STRIDE], want[CMAX], got[CMAX];
	(void)state;
	for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
		for (size_t b = 0; b < sizeof cols / sizeof cols[0]; b++) {
			const int64_t n = ns[a], nc = cols[b];
			fill_floats(w, CMAX * STRIDE, 2.0f, b % 2 == 1);
			fill_floats(x, STRIDE, 1.0f, a % 3 == 0);
			for (int64_t c = 0; c < nc; c++)
				q42_llamacpp_dot_f32_vd(n, &want[c], w + c * STRIDE, x);
			q42_llamacpp_ops_get(Q42_ISA_SCALAR)->dot_f32_vd_cols(n, nc, got, w, STRIDE, x);
			check_f("dot_f32_vd_cols", Q42_ISA_SCALAR, n, got, want, nc);
			for (size_t i = 0; i < sizeof simd_isas / sizeof simd_isas[0]; i++) {
				if (!isa_ok(simd_isas[i]))
					continue;
				memset(got, 0, sizeof got);
				q42_llamacpp_ops_get(simd_isas[i])->dot_f32_vd_cols(n, nc, got, w, STRIDE, x);
				check_f("dot_f32_vd_cols", simd_isas[i], n, got, want, nc);
			}
		}
}

/* Every SIMD table's row operations against its variant's scalar one:
 * the AVX-512 builds' (sapphirerapids, zen4) and haswell's eight-lane
 * ones. */
static void test_row_ops(void **state)
{
	(void)state;
	enum { NMAX = 300 };
	float a[NMAX], b[NMAX], c[NMAX], y0[NMAX], y1[NMAX];
	for (size_t vi = 0; vi < 2 * sizeof simd_isas / sizeof simd_isas[0]; vi++) {
		const enum q42_llamacpp_variant variant = vi % 2 ? Q42_LLAMACPP_HASWELL : Q42_LLAMACPP_SAPPHIRERAPIDS;
		const size_t i = vi / 2;
		const q42_llamacpp_ops *ref = q42_llamacpp_ops_get_variant(variant, Q42_ISA_SCALAR);
		const q42_llamacpp_ops *o = q42_llamacpp_ops_get_variant(variant, simd_isas[i]);
		const enum q42_isa isa = simd_isas[i];
		if (!isa_ok(isa))
			continue;
		for (int64_t n = 1; n <= NMAX; n += 1 + n / 8) {
			float r0, r1;
			fill_floats(a, n, 2.0f, false);
			fill_floats(b, n, 2.0f, false);
			ref->dot_f32(n, &r0, a, b);
			o->dot_f32(n, &r1, a, b);
			check_f("dot_f32", isa, n, &r1, &r0, 1);
			ref->dot_f32_lanes(n, &r0, a, b);
			o->dot_f32_lanes(n, &r1, a, b);
			check_f("dot_f32_lanes", isa, n, &r1, &r0, 1);
			{
				uint16_t a16[NMAX], b16[NMAX];
				ref->quantize_f16(a, a16, n);
				ref->quantize_f16(b, b16, n);
				ref->dot_f16_pad(n, &r0, a16, b16);
				o->dot_f16_pad(n, &r1, a16, b16);
				check_f("dot_f16_pad", isa, n, &r1, &r0, 1);
				ref->dot_f16_lanes(n, &r0, a16, b16);
				o->dot_f16_lanes(n, &r1, a16, b16);
				check_f("dot_f16_lanes", isa, n, &r1, &r0, 1);
			}
			check_dots(ref, o, isa, n, b);
			check_vdots(ref, o, isa, n, b);
			check_vdots(ref, ref, Q42_ISA_SCALAR, n, b);

			/* scores down to far below the max: exp underflows into
			 * subnormals and zero; -inf is the causal mask */
			fill_floats(a, n, n % 2 ? 120.0f : 8.0f, false);
			if (n > 3)
				a[n / 3] = -INFINITY;
			ref->softmax(n, y0, a);
			o->softmax(n, y1, a);
			check_f("softmax", isa, n, y1, y0, n);

			fill_floats(a, n, n % 2 ? 100.0f : 4.0f, true);
			fill_floats(b, n, 3.0f, false);
			ref->swiglu(n, y0, a, b);
			o->swiglu(n, y1, a, b);
			check_f("swiglu", isa, n, y1, y0, n);

			/* out of place, then in place (y is a), as the engine adds */
			ref->add(n, y0, a, b);
			o->add(n, y1, a, b);
			check_f("add", isa, n, y1, y0, n);
			memcpy(y1, a, (size_t)n * sizeof(float));
			o->add(n, y1, y1, b);
			check_f("add in place", isa, n, y1, y0, n);

			/* one to six rows of n (a group of four chains and the
			 * rest), with and without the norm weight, and in place */
			for (int64_t rows = 1; rows <= 6 && rows * n <= NMAX; rows++) {
				fill_floats(a, rows * n, n % 3 ? 30.0f : 1e-3f, true);
				fill_floats(c, n, 2.0f, false);
				for (int wi = 0; wi < 2; wi++) {
					const float *w = wi ? c : NULL;
					ref->rmsnorm_rows(n, rows, y0, a, w, 1e-5f);
					o->rmsnorm_rows(n, rows, y1, a, w, 1e-5f);
					check_f("rmsnorm_rows", isa, n, y1, y0, rows * n);
					memcpy(y1, a, (size_t)(rows * n) * sizeof(float));
					o->rmsnorm_rows(n, rows, y1, y1, w, 1e-5f);
					check_f("rmsnorm_rows in place", isa, n, y1, y0, rows * n);
				}
			}

			if (n % 2 == 0) {
				for (int neox = 0; neox < 2; neox++) {
					fill_floats(a, n, 50.0f, false);
					for (int64_t k = 0; k < n; k += 2) {
						c[k] = cosf((float)k * 0.37f);
						c[k + 1] = sinf((float)k * 0.37f);
					}
					memcpy(y0, a, (size_t)n * sizeof(float));
					memcpy(y1, a, (size_t)n * sizeof(float));
					ref->rope(n, y0, c, neox != 0);
					o->rope(n, y1, c, neox != 0);
					check_f(neox ? "rope neox" : "rope", isa, n, y1, y0, n);
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_q8_0), cmocka_unit_test(test_rows_q5_1), cmocka_unit_test(test_rows_q5_0), cmocka_unit_test(test_rows_packed), cmocka_unit_test(test_rows_packed_q6_k), cmocka_unit_test(test_packed_needs_avx512), cmocka_unit_test(test_rows_iq4_nl), cmocka_unit_test(test_zen4_simd), cmocka_unit_test(test_rows_iq4_xs),    cmocka_unit_test(test_rows_q4_0),
		cmocka_unit_test(test_rows_q4_k), cmocka_unit_test(test_rows_q5_k), cmocka_unit_test(test_rows_q4_1),    cmocka_unit_test(test_rows_q6_k),
		cmocka_unit_test(test_rows_f16_f32), cmocka_unit_test(test_rows_f16), cmocka_unit_test(test_rows_tq), cmocka_unit_test(test_rows_q3_k), cmocka_unit_test(test_rows_q2_k),
		cmocka_unit_test(test_rows_bf16), cmocka_unit_test(test_rows_bf16_widened),
		cmocka_unit_test(test_rows_lanes_pass), cmocka_unit_test(test_vrows_multi),
		cmocka_unit_test(test_rows_f32), cmocka_unit_test(test_f32_t16), cmocka_unit_test(test_vd_cols),
		cmocka_unit_test(test_quantizers),   cmocka_unit_test(test_row_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
