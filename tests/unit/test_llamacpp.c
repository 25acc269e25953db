/* test_llamacpp.c -- lib/kernels/llamacpp/q42_llamacpp.c against llama.cpp's own
 * compiled x86 code, bit for bit.
 *
 * Expected values are tests/golden/llamacpp/, written by
 * tests/tools/gen_llamacpp_golden.py through tests/tools/llamacpp_oracle.c from
 * llama.cpp's prebuilt libggml-cpu-sapphirerapids.so (AMX-buffer matrix
 * products, quantize_row_q8_0, ggml_vec_dot_f16/f32, llamafile's f32
 * product, the soft_max, swiglu and rope graph ops); the README there has the
 * exact commands; tests/golden/zen4/ holds the same products from
 * libggml-cpu-zen4.so (the variant llama.cpp loads on AVX-512 CPUs
 * without AMX). Every f32 is compared as a bit pattern: these kernels
 * exist to round exactly as llama.cpp does, so no tolerance applies.
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

/* shapes of tests/tools/gen_llamacpp_golden.py */
enum {
	MM_K = 512, MM_K_F16 = 256, MM_K_ODD = 480, MM_K_BF16_ODD = 464, MM_N = 64, MM_M_MAX = 19,
	F32_K = 256, F32_N = 8, F32_M = 2, F32_K_ODD = 200, F32_M_ODD = 3,
	Q8_N = 1024,
	SM_N = 256, SM_ROWS = 6,
};
static const int mm_ms[] = {1, 4, 19};

typedef struct blob {
	uint8_t *data;
	size_t len;
} blob;

static blob golden_in(const char *dir, const char *name, size_t want)
{
	const char *src = getenv("Q42_SRCDIR");
	char path[4096];
	blob b = {NULL, 0};
	snprintf(path, sizeof path, "%s/tests/golden/%s/%s", src ? src : ".", dir, name);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open golden file %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long len = ftell(f);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	if (len < 0 || (size_t)len != want)
		fail_msg("%s: %ld bytes, expected %zu", path, len, want);
	b.len = want;
	b.data = malloc(want);
	assert_non_null(b.data);
	assert_int_equal(fread(b.data, 1, want, f), want);
	fclose(f);
	return b;
}

static blob golden(const char *name, size_t want)
{
	return golden_in("llamacpp", name, want);
}

static uint32_t bits(float v)
{
	uint32_t u;
	memcpy(&u, &v, sizeof u);
	return u;
}

static float f32_at(const uint8_t *p, size_t i)
{
	float v;
	memcpy(&v, p + 4 * i, sizeof v);
	return v;
}

static void expect_bits(const char *what, size_t i, float got, float want)
{
	if (bits(got) != bits(want))
		fail_msg("%s [%zu]: q42 %a (0x%08x), llama.cpp %a (0x%08x)", what, i, (double)got,
			 bits(got), (double)want, bits(want));
}

static size_t row_bytes(uint32_t dtype, int64_t n)
{
	const q42_dtype_info *ti = q42_dtype_get(dtype);
	assert_non_null(ti);
	return (size_t)(n / ti->block_elems) * ti->block_bytes;
}

/* One weight type in one llama.cpp buffer, for every activation count of
 * the golden set: buf "" is the AMX buffer (1: its VNNI kernel; 4, 19:
 * its tiles), "cpu" the plain CPU buffer (ggml's x86 vec_dot, or
 * llamafile's kernel), "repack" the CPU_REPACK buffer; results in
 * mm_<name>[_<buf>]_m*.f32. */
static void check_mm_k(const char *name, uint32_t dtype, const char *buf, int64_t k)
{
	const bool cpu = strcmp(buf, "cpu") == 0;
	char fn[64];
	q42_llamacpp_kernels kern;
	assert_true(q42_llamacpp_select(dtype, MM_N, k, cpu ? Q42_LLAMACPP_CPU : Q42_LLAMACPP_MATMUL, &kern));
	snprintf(fn, sizeof fn, "w_%s.bin", name);
	const size_t wrow = row_bytes(dtype, k);
	blob w = golden(fn, wrow * MM_N);
	blob x = golden("x.f32", (size_t)MM_M_MAX * MM_K * 4);
	const size_t xrow = kern.quantize ? row_bytes(kern.vec_dot_type, k) : (size_t)k * 4;
	uint8_t *qx = malloc(xrow * MM_M_MAX);
	float *got = malloc((size_t)MM_M_MAX * MM_N * sizeof *got);
	assert_non_null(qx);
	assert_non_null(got);
	/* the scalar definitions: vec_dot per element, or (Q2_K, IQ4_NL in
	 * the plain buffer, BF16) the rows function, whose order depends on a
	 * token's place in the pass or the pass's size */
	q42_llamacpp_kernels def;
	assert_true(q42_llamacpp_select_isa(dtype, MM_N, k, cpu ? Q42_LLAMACPP_CPU : Q42_LLAMACPP_MATMUL, Q42_ISA_SCALAR,
					  &def));
	for (size_t c = 0; c < sizeof mm_ms / sizeof mm_ms[0]; c++) {
		const int m = mm_ms[c];
		snprintf(fn, sizeof fn, "mm_%s%s%s_m%d.f32", name, *buf ? "_" : "", buf, m);
		blob want = golden(fn, (size_t)m * MM_N * 4);
		for (int r = 0; r < m; r++) {
			/* the oracle was given the first k values of each row */
			const float *xr = (const float *)(x.data + (size_t)r * MM_K * 4);
			if (kern.quantize)
				kern.quantize(xr, qx + (size_t)r * xrow, k);
			else
				memcpy(qx + (size_t)r * xrow, xr, xrow);
			for (int n = 0; n < MM_N; n++)
				kern.vec_dot(k, &got[(size_t)r * MM_N + (size_t)n], w.data + (size_t)n * wrow,
					     qx + (size_t)r * xrow);
		}
		if (dtype == Q42_DTYPE_Q2_K || (dtype == Q42_DTYPE_IQ4_NL && cpu) || dtype == Q42_DTYPE_BF16)
			def.rows(k, MM_N, w.data, wrow, m, qx, xrow, got, MM_N);
		for (size_t e = 0; e < (size_t)m * MM_N; e++)
			expect_bits(fn, e, got[e], f32_at(want.data, e));
		free(want.data);
	}
	free(got);
	free(qx);
	free(w.data);
	free(x.data);
}

static void check_mm(const char *name, uint32_t dtype, const char *buf)
{
	check_mm_k(name, dtype, buf, dtype == Q42_DTYPE_F16 ? MM_K_F16 : MM_K);
}

static void test_mm_q4_0(void **state)
{
	(void)state;
	check_mm("q4_0", Q42_DTYPE_Q4_0, "");
}

static void test_mm_q8_0(void **state)
{
	(void)state;
	check_mm("q8_0", Q42_DTYPE_Q8_0, "");
}

static void test_mm_q4_k(void **state)
{
	(void)state;
	check_mm("q4_K", Q42_DTYPE_Q4_K, "");
}

static void test_mm_q6_k(void **state)
{
	(void)state;
	check_mm("q6_K", Q42_DTYPE_Q6_K, "");
}

static void test_mm_f16(void **state)
{
	(void)state;
	check_mm("f16", Q42_DTYPE_F16, "");
}

static void test_mm_q4_1(void **state)
{
	(void)state;
	check_mm("q4_1", Q42_DTYPE_Q4_1, "");
	check_mm("q4_1", Q42_DTYPE_Q4_1, "cpu");
}

static void test_mm_q5_k(void **state)
{
	(void)state;
	check_mm("q5_K", Q42_DTYPE_Q5_K, "");
}

static void test_mm_q5_1(void **state)
{
	(void)state;
	check_mm("q5_1", Q42_DTYPE_Q5_1, "cpu");
}

/* Q5_0 lives in the plain CPU buffer wherever it is used: ggml's x86
 * vec_dot for one token, llamafile's tinyBLAS for 4 and 19 */
static void test_mm_q5_0(void **state)
{
	(void)state;
	check_mm("q5_0", Q42_DTYPE_Q5_0, "cpu");
}

/* The ternary types: ggml's x86 vec_dot for every count */
static void test_mm_tq(void **state)
{
	(void)state;
	check_mm("tq1_0", Q42_DTYPE_TQ1_0, "cpu");
	check_mm("tq2_0", Q42_DTYPE_TQ2_0, "cpu");
}

/* Q2_K in the CPU_REPACK buffer: q2_K_8x8 gemv for 1, gemm for 4 and 19 */
static void test_mm_q2_k(void **state)
{
	(void)state;
	check_mm("q2_K", Q42_DTYPE_Q2_K, "repack");
}

/* IQ4_NL in the CPU_REPACK buffer (iq4_nl_8x8, gemv and gemm) and in the
 * plain one (ggml's x86 vec_dot; 15 blocks: its odd last block) */
static void test_mm_iq4_nl(void **state)
{
	(void)state;
	check_mm("iq4_nl", Q42_DTYPE_IQ4_NL, "repack");
	check_mm("iq4_nl", Q42_DTYPE_IQ4_NL, "cpu");
	check_mm_k("iq4_nl_odd", Q42_DTYPE_IQ4_NL, "cpu", MM_K_ODD);
}

/* BF16 in the plain CPU buffer: ggml's vec_dot (AVX-512 BF16) for one
 * token, llamafile's tinyBLAS for more; with rows of 464 (not a multiple
 * of 32) vec_dot for every count, its last 16 products summed in double */
static void test_mm_bf16(void **state)
{
	(void)state;
	check_mm("bf16", Q42_DTYPE_BF16, "cpu");
	check_mm_k("bf16_odd", Q42_DTYPE_BF16, "cpu", MM_K_BF16_ODD);
}

/* IQ4_XS in the AMX buffer */
static void test_mm_iq4_xs(void **state)
{
	(void)state;
	check_mm("iq4_xs", Q42_DTYPE_IQ4_XS, "");
}

/* Q3_K: ggml's x86 vec_dot for every count */
static void test_mm_q3_k(void **state)
{
	(void)state;
	check_mm("q3_K", Q42_DTYPE_Q3_K, "cpu");
}

/* An f32 product in the plain CPU buffer: llamafile's tinyBLAS, which
 * q42_llamacpp_dot_f32_lanes reproduces (the V x softmax product). */
/* The zen4 variant (tests/golden/zen4, from libggml-cpu-zen4.so): each
 * product through q42_llamacpp_select_variant's row function, in the
 * fastest form this CPU runs and in the scalar definition; a pass's
 * tokens may round by their place in it (Q4_K's gemm for whole groups of
 * four), so whole passes are compared. F16: one token only (llamafile's
 * pass of several is not reproduced). n_rows of w_<name>.bin's rows:
 * fewer than MM_N, not a multiple of 8, is a matrix llama.cpp keeps out
 * of CPU_REPACK. */
static void check_variant(const char *dir, enum q42_llamacpp_variant variant, const char *name, uint32_t dtype,
			  const char *buf, int64_t k, int64_t n_rows, int max_m)
{
	const enum q42_isa isas[] = {Q42_ISA_BEST, Q42_ISA_SCALAR};
	char fn[64];
	snprintf(fn, sizeof fn, "w_%s.bin", name);
	const size_t wrow = row_bytes(dtype, k);
	blob w = golden(fn, wrow * MM_N);
	blob x = golden("x.f32", (size_t)MM_M_MAX * MM_K * 4);
	float *got = malloc((size_t)MM_M_MAX * MM_N * sizeof *got);
	uint8_t *qx = malloc((size_t)k * 4 * MM_M_MAX);
	assert_non_null(got);
	assert_non_null(qx);
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		q42_llamacpp_kernels kern;
		assert_true(q42_llamacpp_select_variant(variant, dtype, n_rows, k, Q42_LLAMACPP_MATMUL, isas[i], &kern));
		const size_t xrow = row_bytes(kern.vec_dot_type, k);
		for (int r = 0; r < MM_M_MAX; r++)
			kern.quantize((const float *)(x.data + (size_t)r * MM_K * 4), qx + (size_t)r * xrow, k);
		for (size_t c = 0; c < sizeof mm_ms / sizeof mm_ms[0] && mm_ms[c] <= max_m; c++) {
			const int m = mm_ms[c];
			snprintf(fn, sizeof fn, "mm_%s_%s_m%d.f32", name, buf, m);
			blob want = golden_in(dir, fn, (size_t)m * (size_t)n_rows * 4);
			kern.rows(k, n_rows, w.data, wrow, m, qx, xrow, got, (uint64_t)n_rows);
			for (size_t e = 0; e < (size_t)m * (size_t)n_rows; e++)
				expect_bits(fn, e, got[e], f32_at(want.data, e));
			/* one token through vec_dot: the same bits as the rows form */
			for (int64_t n = 0; n < n_rows; n++) {
				float v;
				kern.vec_dot(k, &v, w.data + (size_t)n * wrow, qx);
				if (m == 1)
					expect_bits(fn, (size_t)n, v, f32_at(want.data, (size_t)n));
			}
			free(want.data);
		}
	}
	free(qx);
	free(got);
	free(w.data);
	free(x.data);
}

/* f32 weights times f32 activations, a file carrying both: N rows of K,
 * M rows of K, then the M x N results. */
static void check_f32_file(const char *dir, enum q42_llamacpp_variant variant, const char *fn, int64_t k, int64_t n,
			   int64_t m)
{
	const size_t nw = (size_t)(n * k), nx = (size_t)(m * k);
	blob b = golden_in(dir, fn, (nw + nx + (size_t)(m * n)) * 4);
	const float *w = (const float *)(const void *)b.data, *x = w + nw;
	const uint8_t *want = b.data + (nw + nx) * 4;
	float *got = malloc((size_t)(m * n) * sizeof *got);
	assert_non_null(got);
	const enum q42_isa isas[] = {Q42_ISA_BEST, Q42_ISA_SCALAR};
	for (size_t i = 0; i < 2; i++) {
		q42_llamacpp_kernels kern;
		assert_true(q42_llamacpp_select_variant(variant, Q42_DTYPE_F32, n, k, Q42_LLAMACPP_MATMUL, isas[i], &kern));
		kern.rows(k, n, w, (uint64_t)k * 4, m, x, (uint64_t)k * 4, got, (uint64_t)n);
		for (size_t e = 0; e < (size_t)(m * n); e++)
			expect_bits(fn, e, got[e], f32_at(want, e));
		/* a lone token: vec_dot */
		float one;
		kern.vec_dot(k, &one, w, x);
		if (m == 1)
			expect_bits(fn, 0, one, f32_at(want, 0));
	}
	free(got);
	free(b.data);
}

static void check_zen4(const char *name, uint32_t dtype, const char *buf, int64_t k, int64_t n_rows, int max_m)
{
	check_variant("zen4", Q42_LLAMACPP_ZEN4, name, dtype, buf, k, n_rows, max_m);
}

static void test_zen4(void **state)
{
	(void)state;
	check_zen4("q8_0", Q42_DTYPE_Q8_0, "cpu", MM_K, MM_N, MM_M_MAX);
	check_zen4("q4_0", Q42_DTYPE_Q4_0, "repack", MM_K, MM_N, MM_M_MAX);
	check_zen4("q4_1", Q42_DTYPE_Q4_1, "cpu", MM_K, MM_N, MM_M_MAX);
	check_zen4("q4_K", Q42_DTYPE_Q4_K, "repack", MM_K, MM_N, MM_M_MAX);
	check_zen4("q5_K", Q42_DTYPE_Q5_K, "cpu", MM_K, MM_N, MM_M_MAX);
	check_zen4("q6_K", Q42_DTYPE_Q6_K, "cpu", MM_K, MM_N, MM_M_MAX);
	check_zen4("f16", Q42_DTYPE_F16, "cpu", MM_K_F16, MM_N, MM_M_MAX);
	check_zen4("iq4_xs", Q42_DTYPE_IQ4_XS, "cpu", MM_K, MM_N, MM_M_MAX);
	check_zen4("q4_0", Q42_DTYPE_Q4_0, "odd_cpu", MM_K, 60, MM_M_MAX);
	check_zen4("q4_K", Q42_DTYPE_Q4_K, "odd_cpu", MM_K, 60, MM_M_MAX);
	/* ggml_vec_dot_f32's leftovers, whose last K % 8 products are fused;
	 * sapphirerapids' ggml_vec_dot_f32 is the same code (its disassembly
	 * equals zen4's), and this CPU cannot run that library */
	static const int64_t f32s[][3] = {{172, 8, 1}, {13, 8, 1}, {100, 8, 3}};
	static const char *const f32n[] = {"mm_f32_k172_cpu.bin", "mm_f32_k13_cpu.bin", "mm_f32_k100_cpu.bin"};
	for (size_t i = 0; i < 3; i++) {
		check_f32_file("zen4", Q42_LLAMACPP_ZEN4, f32n[i], f32s[i][0], f32s[i][1], f32s[i][2]);
		check_f32_file("zen4", Q42_LLAMACPP_SAPPHIRERAPIDS, f32n[i], f32s[i][0], f32s[i][1], f32s[i][2]);
	}
}

static void test_mm_f32_lanes(void **state)
{
	(void)state;
	blob b = golden("mm_f32_cpu.bin", (F32_N * F32_K + F32_M * F32_K + F32_M * F32_N) * 4);
	const float *w = (const float *)b.data, *x = w + F32_N * F32_K;
	const uint8_t *want = b.data + (F32_N * F32_K + F32_M * F32_K) * 4;
	for (int m = 0; m < F32_M; m++)
		for (int n = 0; n < F32_N; n++) {
			float got;
			q42_llamacpp_dot_f32_lanes(F32_K, &got, w + n * F32_K, x + m * F32_K);
			expect_bits("mm_f32_cpu", (size_t)(m * F32_N + n), got,
				    f32_at(want, (size_t)(m * F32_N + n)));
		}
	free(b.data);
}

/* F32 weights whose rows tinyBLAS declines (200 values): ggml_vec_dot_f32
 * on the true length for every token, the 8 leftovers multiplied and
 * added unfused; and the selection's rows give the same bits. */
static void test_mm_f32_vd(void **state)
{
	(void)state;
	const size_t nw = F32_N * F32_K_ODD, nx = F32_M_ODD * F32_K_ODD;
	blob b = golden("mm_f32_odd_cpu.bin", (nw + nx + F32_M_ODD * F32_N) * 4);
	const float *w = (const float *)b.data, *x = w + nw;
	const uint8_t *want = b.data + (nw + nx) * 4;
	float got[F32_M_ODD * F32_N];
	q42_llamacpp_kernels k;
	assert_true(q42_llamacpp_select(Q42_DTYPE_F32, F32_N, F32_K_ODD, Q42_LLAMACPP_MATMUL, &k));
	k.rows(F32_K_ODD, F32_N, w, F32_K_ODD * 4, F32_M_ODD, x, F32_K_ODD * 4, got, F32_N);
	for (int m = 0; m < F32_M_ODD; m++)
		for (int n = 0; n < F32_N; n++) {
			float one;
			q42_llamacpp_dot_f32_vd(F32_K_ODD, &one, w + n * F32_K_ODD, x + m * F32_K_ODD);
			expect_bits("mm_f32_odd_cpu", (size_t)(m * F32_N + n), one, f32_at(want, (size_t)(m * F32_N + n)));
			expect_bits("mm_f32_odd_cpu rows", (size_t)(m * F32_N + n), got[m * F32_N + n],
				    f32_at(want, (size_t)(m * F32_N + n)));
		}
	free(b.data);
}

/* A quantizer against its golden file: Q8_N floats, then blocks of
 * block_bytes (quantize_row_q8_0, or quantize_row_q8_1 on the same input:
 * the same quants and d, and s). */
static void check_quantizer(const char *name, size_t block_bytes,
			    void (*quantize)(const float *, void *, int64_t))
{
	const size_t qbytes = Q8_N / 32 * block_bytes;
	char fn[32];
	snprintf(fn, sizeof fn, "%s.bin", name);
	blob b = golden(fn, Q8_N * 4 + qbytes);
	uint8_t *got = malloc(qbytes);
	assert_non_null(got);
	quantize((const float *)b.data, got, Q8_N);
	for (size_t i = 0; i < qbytes; i++)
		if (got[i] != b.data[Q8_N * 4 + i])
			fail_msg("%s block %zu byte %zu: q42 0x%02x, llama.cpp 0x%02x", name,
				 i / block_bytes, i % block_bytes, got[i], b.data[Q8_N * 4 + i]);
	free(got);
	free(b.data);
}

static void test_quantize_q8_0(void **state)
{
	(void)state;
	check_quantizer("q8_0", 34, q42_llamacpp_quantize_q8_0);
}

static void test_quantize_q8_1(void **state)
{
	(void)state;
	check_quantizer("q8_1", 36, q42_llamacpp_quantize_q8_1);
}

static void check_dot_f16(const char *dir, void (*dot)(int64_t, float *, const void *, const void *))
{
	static const int ns[] = {512, 100, 37};
	size_t total = 0;
	for (size_t c = 0; c < 3; c++)
		total += (size_t)ns[c] * 4 + 4;
	blob b = golden_in(dir, "dot_f16.bin", total);
	const uint8_t *p = b.data;
	for (size_t c = 0; c < 3; c++) {
		const int n = ns[c];
		float got;
		dot(n, &got, p, p + 2 * n);
		expect_bits("dot_f16", c, got, f32_at(p + 4 * n, 0));
		p += 4 * n + 4;
	}
	free(b.data);
}

static void test_dot_f16(void **state)
{
	(void)state;
	check_dot_f16("llamacpp", q42_llamacpp_dot_f16);
}

/* ggml_vec_dot_f32 on rows llama.cpp zero-pads; q42 sees only the values. */
static void check_dot_f32(const char *dir, void (*dot)(int64_t, float *, const void *, const void *))
{
	static const int cases[][2] = {{64, 64}, {19, 256}, {100, 256}, {256, 256}};
	size_t total = 0;
	for (size_t c = 0; c < 4; c++)
		total += (size_t)cases[c][1] * 8 + 4;
	blob b = golden_in(dir, "dot_f32.bin", total);
	const uint8_t *p = b.data;
	for (size_t c = 0; c < 4; c++) {
		const int n = cases[c][0], npad = cases[c][1];
		float got;
		dot(n, &got, p, p + 4 * npad);
		expect_bits("dot_f32", c, got, f32_at(p + 8 * npad, 0));
		p += 8 * npad + 4;
	}
	free(b.data);
}

static void test_dot_f32(void **state)
{
	(void)state;
	check_dot_f32("llamacpp", q42_llamacpp_dot_f32);
}

/* ggml_soft_max on rows whose tail is -inf (llama.cpp's padded, masked KV
 * positions); q42 is given the live part only, as the engine does. */
static void check_softmax(const char *dir, void (*softmax)(int64_t, float *, const float *))
{
	static const int live[SM_ROWS] = {1, 19, 100, 255, 256, 37};
	blob b = golden_in(dir, "soft_max.bin", 2 * SM_ROWS * SM_N * 4);
	float y[SM_N];
	for (int r = 0; r < SM_ROWS; r++) {
		const float *x = (const float *)(b.data + (size_t)r * SM_N * 4);
		const uint8_t *want = b.data + ((size_t)SM_ROWS + (size_t)r) * SM_N * 4;
		softmax(live[r], y, x);
		for (int i = 0; i < live[r]; i++)
			expect_bits("soft_max", (size_t)(r * SM_N + i), y[i], f32_at(want, (size_t)i));
		for (int i = live[r]; i < SM_N; i++)
			assert_int_equal(bits(f32_at(want, (size_t)i)), 0);
	}
	free(b.data);
}

static void test_softmax(void **state)
{
	(void)state;
	check_softmax("llamacpp", q42_llamacpp_softmax);
}

static void check_swiglu(const char *dir, void (*swiglu)(int64_t, float *, const float *, const float *),
			 const char *fn, int n, int rows)
{
	blob b = golden_in(dir, fn, 3 * (size_t)n * (size_t)rows * 4);
	float *y = malloc((size_t)n * 4);
	assert_non_null(y);
	for (int r = 0; r < rows; r++) {
		const float *g = (const float *)(b.data + (size_t)r * (size_t)n * 4);
		const float *u = (const float *)(b.data + ((size_t)rows + (size_t)r) * (size_t)n * 4);
		const uint8_t *want = b.data + (2 * (size_t)rows + (size_t)r) * (size_t)n * 4;
		swiglu(n, y, g, u);
		for (int i = 0; i < n; i++)
			expect_bits(fn, (size_t)(r * n + i), y[i], f32_at(want, (size_t)i));
	}
	free(y);
	free(b.data);
}

static void test_swiglu(void **state)
{
	(void)state;
	check_swiglu("llamacpp", q42_llamacpp_swiglu, "swiglu_512.bin", 512, 3);
	check_swiglu("llamacpp", q42_llamacpp_swiglu, "swiglu_100.bin", 100, 2);
}

/* llama.cpp's haswell build (tests/golden/haswell, from
 * libggml-cpu-haswell.so): its F16, BF16 (in eight lanes, no VDPBF16PS)
 * and Q2_K (plain buffer) products, F32 products on both sides of
 * tinyBLAS<8>'s shape rule (200 and 24 values take it, 100 does not), and
 * its row operations, in every form this CPU runs: the scalar
 * definitions and the FMA builds of the variant's tables. */
static void test_haswell(void **state)
{
	(void)state;
	check_variant("haswell", Q42_LLAMACPP_HASWELL, "f16", Q42_DTYPE_F16, "cpu", MM_K_F16, MM_N, MM_M_MAX);
	check_variant("haswell", Q42_LLAMACPP_HASWELL, "bf16", Q42_DTYPE_BF16, "cpu", MM_K, MM_N, MM_M_MAX);
	check_variant("haswell", Q42_LLAMACPP_HASWELL, "bf16_odd", Q42_DTYPE_BF16, "cpu", MM_K_BF16_ODD, MM_N,
		      MM_M_MAX);
	check_variant("haswell", Q42_LLAMACPP_HASWELL, "q2_K", Q42_DTYPE_Q2_K, "cpu", MM_K, MM_N, MM_M_MAX);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_cpu.bin", F32_K, F32_N, F32_M);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_odd_cpu.bin", F32_K_ODD, F32_N, F32_M_ODD);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_k100.bin", 100, 8, 3);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_k24.bin", 24, 8, 2);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_k64_m1.bin", 64, 8, 1);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_k100_m1.bin", 100, 8, 1);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_k7_m1.bin", 7, 8, 1);
	check_f32_file("haswell", Q42_LLAMACPP_HASWELL, "mm_f32_k45.bin", 45, 8, 3);
	const enum q42_isa isas[] = {Q42_ISA_SCALAR, Q42_ISA_AVX2, Q42_ISA_AVX512};
	for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
		const q42_llamacpp_ops *o = q42_llamacpp_ops_get_variant(Q42_LLAMACPP_HASWELL, isas[i]);
		assert_int_equal(o->tb_lanes, 8);
		check_dot_f16("haswell", o->dot_f16);
		check_dot_f32("haswell", o->dot_f32);
		check_softmax("haswell", o->softmax);
		check_swiglu("haswell", o->swiglu, "swiglu_512.bin", 512, 3);
		check_swiglu("haswell", o->swiglu, "swiglu_100.bin", 100, 2);
	}
	/* and the zen4 goldens are not haswell's: the tests can tell them
	 * apart */
	float got;
	blob b = golden_in("haswell", "dot_f16.bin", (512 + 100 + 37) * 4 + 3 * 4);
	q42_llamacpp_hw_dot_f16(512, &got, b.data, b.data + 1024);
	expect_bits("dot_f16 haswell", 0, got, f32_at(b.data + 2048, 0));
	q42_llamacpp_dot_f16(512, &got, b.data, b.data + 1024);
	assert_int_not_equal(bits(got), bits(f32_at(b.data + 2048, 0)));
	free(b.data);
}

/* ggml_rope_ext (no YaRN, base 10000) at positions 0..7; the cos/sin
 * cache is built as ggml_rope_cache_init does: the angle multiplied by
 * base^(-2/n_rot) from one pair to the next. */
static void check_rope(const char *fn, bool neox)
{
	enum { HD = 64, HEADS = 2, TOK = 8 };
	blob b = golden(fn, 2 * (size_t)TOK * HEADS * HD * 4);
	const float ts = powf(10000.0f, -2.0f / HD);
	float cache[HD], x[HD];
	for (int t = 0; t < TOK; t++) {
		float theta = (float)t;
		for (int i = 0; i < HD; i += 2) {
			cache[i] = cosf(theta);
			cache[i + 1] = sinf(theta);
			theta *= ts;
		}
		for (int h = 0; h < HEADS; h++) {
			const size_t off = ((size_t)t * HEADS + (size_t)h) * HD;
			memcpy(x, b.data + off * 4, sizeof x);
			q42_llamacpp_rope(HD, x, cache, neox);
			for (int i = 0; i < HD; i++)
				expect_bits(fn, off + (size_t)i, x[i],
					    f32_at(b.data, (size_t)TOK * HEADS * HD + off + (size_t)i));
		}
	}
	free(b.data);
}

static void test_rope(void **state)
{
	(void)state;
	check_rope("rope_norm.bin", false);
	check_rope("rope_neox.bin", true);
}

/* llama.cpp's icelake build (tests/golden/icelake, from
 * libggml-cpu-icelake.so, which skylakex, cascadelake and cannonlake
 * equal): AVX-512 without VDPBF16PS, so BF16 widened in 16 lanes; its
 * other products are zen4's (tests/golden/variants). */
static void test_icelake(void **state)
{
	(void)state;
	check_variant("icelake", Q42_LLAMACPP_ICELAKE, "bf16", Q42_DTYPE_BF16, "cpu", MM_K, MM_N, MM_M_MAX);
	check_variant("icelake", Q42_LLAMACPP_ICELAKE, "bf16_odd", Q42_DTYPE_BF16, "cpu", MM_K_BF16_ODD, MM_N,
		      MM_M_MAX);
	/* and zen4's are not: the test can fail */
	q42_llamacpp_kernels z;
	assert_true(q42_llamacpp_select_variant(Q42_LLAMACPP_ZEN4, Q42_DTYPE_BF16, MM_N, MM_K, Q42_LLAMACPP_MATMUL,
						Q42_ISA_SCALAR, &z));
	assert_ptr_not_equal(z.vec_dot, q42_llamacpp_dot_bf16_wide);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mm_q4_0),	  cmocka_unit_test(test_mm_q8_0),
		cmocka_unit_test(test_mm_q4_k),	  cmocka_unit_test(test_mm_q6_k),
		cmocka_unit_test(test_mm_f16),	  cmocka_unit_test(test_mm_f32_lanes),
		cmocka_unit_test(test_mm_q5_1),	  cmocka_unit_test(test_quantize_q8_1),
		cmocka_unit_test(test_mm_q5_k),	  cmocka_unit_test(test_mm_q4_1),
		cmocka_unit_test(test_mm_q5_0),
		cmocka_unit_test(test_mm_tq),
		cmocka_unit_test(test_mm_q3_k),
		cmocka_unit_test(test_mm_q2_k), cmocka_unit_test(test_mm_iq4_nl), cmocka_unit_test(test_mm_iq4_xs),
		cmocka_unit_test(test_mm_bf16),
		cmocka_unit_test(test_mm_f32_vd),
		cmocka_unit_test(test_quantize_q8_0), cmocka_unit_test(test_dot_f16),
		cmocka_unit_test(test_dot_f32),	  cmocka_unit_test(test_softmax),
		cmocka_unit_test(test_swiglu),	  cmocka_unit_test(test_rope),
		cmocka_unit_test(test_zen4), cmocka_unit_test(test_haswell), cmocka_unit_test(test_icelake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
