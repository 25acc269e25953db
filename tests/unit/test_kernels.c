/* test_kernels.c -- the scalar reference kernels against ggml, bit for bit.
 *
 * Expected values come from tests/golden/kernels/ (see its README: gguf-py
 * and llama.cpp's own ggml libraries, cross-checked by
 * tests/tools/gen_kernel_golden.py); every float is compared as its bit
 * pattern. Tests that need no golden file check a kernel against an
 * independent computation (exact integer sums, double precision).
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
#include <openssl/evp.h>

#include "kernels/q42_kernels.h"
#include "common/q42_types.h"

#define DOT_ROWS 4  /* tests/tools/gen_kernel_golden.py: DOT_ROWS */
#define DOT_N 512   /* tests/tools/gen_kernel_golden.py: DOT_N */

typedef struct blob {
	uint8_t *data;
	size_t len;
} blob;

static blob golden(const char *name)
{
	const char *src = getenv("Q42_SRCDIR");
	char path[4096];
	blob b = {NULL, 0};
	snprintf(path, sizeof path, "%s/tests/golden/kernels/%s", src ? src : ".", name);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open golden file %s", path);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	assert_true(len > 0);
	b.len = (size_t)len;
	b.data = malloc(b.len);
	assert_non_null(b.data);
	assert_int_equal(fread(b.data, 1, b.len, f), b.len);
	fclose(f);
	return b;
}

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static void assert_same_floats(const float *got, const void *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		float w;
		memcpy(&w, (const uint8_t *)want + 4 * i, 4);
		if (bits(got[i]) != bits(w))
			fail_msg("%s: element %zu: got %a (0x%08x), ggml %a (0x%08x)", what, i,
				 (double)got[i], bits(got[i]), (double)w, bits(w));
	}
}

static void assert_same_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			fail_msg("%s: byte %zu: got 0x%02x, ggml 0x%02x", what, i, got[i], want[i]);
}

static size_t row_bytes(uint32_t dtype, size_t n)
{
	const q42_dtype_info *t = q42_dtype_get(dtype);
	assert_non_null(t);
	return n / t->block_elems * t->block_bytes;
}

/* ---- conversions ------------------------------------------------------ */

static void sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	assert_int_equal(EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static void expect_table_hash(const char *key, const float *table)
{
	blob b = golden("tables.sha256");
	char *text = calloc(1, b.len + 1), hex[65];
	assert_non_null(text);
	memcpy(text, b.data, b.len);
	const char *line = strstr(text, key);
	assert_non_null(line);
	static uint8_t le[65536 * 4];
	for (int i = 0; i < 65536; i++) {
		uint32_t u = bits(table[i]);
		le[4 * i] = (uint8_t)u;
		le[4 * i + 1] = (uint8_t)(u >> 8);
		le[4 * i + 2] = (uint8_t)(u >> 16);
		le[4 * i + 3] = (uint8_t)(u >> 24);
	}
	sha256_hex(le, sizeof le, hex);
	assert_memory_equal(line + strlen(key) + 1, hex, 64);
	free(text);
	free(b.data);
}

static void test_f16_exhaustive(void **state)
{
	(void)state;
	static float table[65536];
	for (uint32_t h = 0; h < 65536; h++) {
		float f = q42_f16_to_f32((uint16_t)h);
		table[h] = f;
		uint16_t back = q42_f32_to_f16(f);
		if (isnan(f)) /* ggml turns every NaN into the one quiet NaN */
			assert_int_equal(back, (h & 0x8000u) | 0x7E00u);
		else
			assert_int_equal(back, h);
	}
	expect_table_hash("f16_to_f32", table);
}

static void test_bf16_exhaustive(void **state)
{
	(void)state;
	static float table[65536];
	for (uint32_t h = 0; h < 65536; h++) {
		float f = q42_bf16_to_f32((uint16_t)h);
		table[h] = f;
		uint16_t back = q42_f32_to_bf16(f);
		assert_int_equal(back, isnan(f) ? (h | 64u) : h);
	}
	expect_table_hash("bf16_to_f32", table);
}

static void check_f32_to_16(const char *file, uint16_t (*conv)(float))
{
	blob b = golden(file);
	size_t n = b.len / 6;
	assert_int_equal(b.len, n * 6);
	for (size_t i = 0; i < n; i++) {
		float f;
		memcpy(&f, b.data + 4 * i, 4);
		uint16_t want = (uint16_t)(b.data[4 * n + 2 * i] | (b.data[4 * n + 2 * i + 1] << 8));
		uint16_t got = conv(f);
		if (got != want)
			fail_msg("%s: case %zu: %a (0x%08x) -> 0x%04x, ggml 0x%04x", file, i,
				 (double)f, bits(f), got, want);
	}
	free(b.data);
}

static void test_f32_to_f16_golden(void **state)
{
	(void)state;
	check_f32_to_16("f32_to_f16.bin", q42_f32_to_f16);
}

static void test_f32_to_bf16_golden(void **state)
{
	(void)state;
	check_f32_to_16("f32_to_bf16.bin", q42_f32_to_bf16);
}

/* ---- dequantization ---------------------------------------------------- */

typedef struct tcase {
	uint32_t dtype;
	const char *name; /* as in the golden file names */
} tcase;

static void test_dequant(void **state)
{
	const tcase *tc = *state;
	const q42_dtype_info *t = q42_dtype_get(tc->dtype);
	char file[64];
	snprintf(file, sizeof file, "dequant_%s.bin", tc->name);
	blob b = golden(file);
	size_t per = t->block_bytes + 4 * t->block_elems;
	size_t nblocks = b.len / per;
	assert_int_equal(b.len, nblocks * per);
	int64_t n = (int64_t)(nblocks * t->block_elems);
	float *out = calloc((size_t)n, sizeof(float));
	assert_non_null(out);

	const q42_type_kernels *k = q42_kernels_get(tc->dtype, Q42_ISA_SCALAR);
	assert_non_null(k);
	k->dequant(b.data, out, n);
	assert_same_floats(out, b.data + nblocks * t->block_bytes, (size_t)n, file);

	memset(out, 0, (size_t)n * sizeof(float));
	assert_true(q42_dequant(tc->dtype, b.data, out, n));
	assert_same_floats(out, b.data + nblocks * t->block_bytes, (size_t)n, file);
	free(out);
	free(b.data);
}

static void test_dequant_rejects(void **state)
{
	(void)state;
	float out[32];
	uint8_t blk[34] = {0};
	assert_false(q42_dequant(Q42_DTYPE_Q8_0, blk, out, 31));
	assert_false(q42_dequant(Q42_DTYPE_IQ2_XXS, blk, out, 256));
	assert_false(q42_dequant(12345, blk, out, 32));
	assert_null(q42_kernels_get(Q42_DTYPE_IQ2_XXS, Q42_ISA_SCALAR));
	assert_null(q42_kernels_get(Q42_DTYPE_COUNT_, Q42_ISA_BEST));
	assert_null(q42_kernels_get(Q42_DTYPE_F32, (enum q42_isa)7));
}

/* ---- activation quantization ------------------------------------------ */

static void test_quant(void **state)
{
	const tcase *tc = *state;
	char file[64];
	snprintf(file, sizeof file, "quant_%s.bin", tc->name);
	blob b = golden(file);
	/* n floats followed by their quantized bytes */
	const q42_dtype_info *t = q42_dtype_get(tc->dtype);
	size_t n = b.len / (4 * t->block_elems + t->block_bytes) * t->block_elems;
	size_t qbytes = row_bytes(tc->dtype, n);
	assert_int_equal(b.len, 4 * n + qbytes);
	float *x = malloc(4 * n);
	uint8_t *q = malloc(qbytes);
	assert_non_null(x);
	assert_non_null(q);
	memcpy(x, b.data, 4 * n);
	memset(q, 0xAA, qbytes);
	const q42_type_kernels *k = q42_kernels_get(tc->dtype, Q42_ISA_SCALAR);
	assert_non_null(k);
	assert_non_null(k->quantize);
	k->quantize(x, q, (int64_t)n);
	assert_same_bytes(q, b.data + 4 * n, qbytes, file);
	free(x);
	free(q);
	free(b.data);
}

/* ---- dot products ------------------------------------------------------ */

/* golden: DOT_ROWS weight rows, their quantized activation rows (ggml's),
 * DOT_ROWS results; activations are dot_x.bin. */
static void test_dot_golden(void **state)
{
	const tcase *tc = *state;
	char file[64];
	snprintf(file, sizeof file, "dot_%s.bin", tc->name);
	blob b = golden(file), xb = golden("dot_x.bin");
	const q42_type_kernels *k = q42_kernels_get(tc->dtype, Q42_ISA_SCALAR);
	assert_non_null(k);
	assert_non_null(k->vec_dot);
	const q42_type_kernels *ak = q42_kernels_get(k->vec_dot_type, Q42_ISA_SCALAR);
	assert_non_null(ak);
	size_t wbytes = row_bytes(tc->dtype, DOT_N), xbytes = row_bytes(k->vec_dot_type, DOT_N);
	assert_int_equal(b.len, DOT_ROWS * (wbytes + xbytes + 4));
	assert_int_equal(xb.len, DOT_ROWS * DOT_N * 4);
	uint8_t *qx = malloc(xbytes);
	float *x = malloc(DOT_N * 4);
	assert_non_null(qx);
	assert_non_null(x);
	for (int r = 0; r < DOT_ROWS; r++) {
		const uint8_t *w = b.data + r * wbytes;
		const uint8_t *gqx = b.data + DOT_ROWS * wbytes + r * xbytes;
		memcpy(x, xb.data + (size_t)r * DOT_N * 4, DOT_N * 4);
		ak->quantize(x, qx, DOT_N);
		assert_same_bytes(qx, gqx, xbytes, file);
		float s = NAN;
		k->vec_dot(DOT_N, &s, w, gqx);
		assert_same_floats(&s, b.data + DOT_ROWS * (wbytes + xbytes) + 4 * r, 1, file);
	}
	free(qx);
	free(x);
	free(b.data);
	free(xb.data);
}

/* Q4_1/Q5_1 against Q8_1 add min * s per block, where s = d * sum(q) was
 * rounded to f16 by the quantizer: ggml's own approximation, so its full
 * size is allowed on top of the rounding tolerance. */
static double q8_1_s_error(const uint8_t *w, uint32_t wtype, const uint8_t *qx, size_t n)
{
	const q42_dtype_info *t = q42_dtype_get(wtype);
	double err = 0.0;
	for (size_t i = 0; i < n / 32; i++) {
		const uint8_t *wb = w + i * t->block_bytes, *xb = qx + i * 36;
		int sum = 0;
		for (int j = 0; j < 32; j++)
			sum += (int8_t)xb[4 + j];
		double d = q42_f16_to_f32((uint16_t)(xb[0] | xb[1] << 8));
		double s = q42_f16_to_f32((uint16_t)(xb[2] | xb[3] << 8));
		double m = q42_f16_to_f32((uint16_t)(wb[2] | wb[3] << 8));
		err += fabs(m) * fabs(s - d * sum);
	}
	return err;
}

/* vec_dot(w, quantize(x)) against a double-precision dot of the two
 * dequantized rows: they differ only by float rounding of the scales and
 * of the running sum, bounded here by 64 f32 ulps of sum |w_i * x_i|. */
static void test_dot_vs_dequant(void **state)
{
	const tcase *tc = *state;
	char file[64];
	snprintf(file, sizeof file, "dot_%s.bin", tc->name);
	blob b = golden(file), xb = golden("dot_x.bin");
	const q42_type_kernels *k = q42_kernels_get(tc->dtype, Q42_ISA_SCALAR);
	const q42_type_kernels *ak = q42_kernels_get(k->vec_dot_type, Q42_ISA_SCALAR);
	size_t wbytes = row_bytes(tc->dtype, DOT_N), xbytes = row_bytes(k->vec_dot_type, DOT_N);
	uint8_t *qx = malloc(xbytes);
	float *x = malloc(DOT_N * 4), *wf = malloc(DOT_N * 4), *xf = malloc(DOT_N * 4);
	assert_true(qx && x && wf && xf);
	for (int r = 0; r < DOT_ROWS; r++) {
		const uint8_t *w = b.data + r * wbytes;
		memcpy(x, xb.data + (size_t)r * DOT_N * 4, DOT_N * 4);
		ak->quantize(x, qx, DOT_N);
		k->dequant(w, wf, DOT_N);
		ak->dequant(qx, xf, DOT_N);
		double ref = 0.0, mag = 0.0;
		for (int i = 0; i < DOT_N; i++) {
			ref += (double)wf[i] * (double)xf[i];
			mag += fabs((double)wf[i] * (double)xf[i]);
		}
		float s;
		k->vec_dot(DOT_N, &s, w, qx);
		double tol = 64.0 * 0x1p-24 * mag + 1e-30;
		if (k->vec_dot_type == Q42_DTYPE_Q8_1)
			tol += q8_1_s_error(w, tc->dtype, qx, DOT_N);
		if (fabs((double)s - ref) > tol)
			fail_msg("%s row %d: vec_dot %.9g, dequantized dot %.9g, tolerance %.3g",
				 tc->name, r, (double)s, ref, tol);
	}
	free(qx);
	free(x);
	free(wf);
	free(xf);
	free(b.data);
	free(xb.data);
}

/* With every scale 1 and every min 0, the dot product is a sum of small
 * integers: vec_dot's integer path and dequant's element order must give
 * exactly that sum. Catches a dot kernel that pairs elements differently
 * from the dequantizer. */
static void set_f16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void unit_scales(uint32_t dtype, uint8_t *row, size_t nblocks)
{
	const q42_dtype_info *t = q42_dtype_get(dtype);
	for (size_t i = 0; i < nblocks; i++) {
		uint8_t *blk = row + i * t->block_bytes;
		switch (dtype) {
		case Q42_DTYPE_Q4_0: case Q42_DTYPE_Q5_0: case Q42_DTYPE_Q8_0:
			set_f16(blk, 0x3C00);
			break;
		case Q42_DTYPE_Q4_1: case Q42_DTYPE_Q5_1:
			set_f16(blk, 0x3C00);
			set_f16(blk + 2, 0);
			break;
		case Q42_DTYPE_Q8_1: /* d = 1; s = sum(q) * d, as the quantizer would */
		{
			int s = 0;
			set_f16(blk, 0x3C00);
			for (int j = 0; j < 32; j++)
				s += (int8_t)blk[4 + j];
			set_f16(blk + 2, q42_f32_to_f16((float)s));
			break;
		}
		case Q42_DTYPE_Q2_K:
			set_f16(blk + 80, 0x3C00);
			set_f16(blk + 82, 0);
			break;
		case Q42_DTYPE_Q3_K:
			set_f16(blk + 108, 0x3C00);
			break;
		case Q42_DTYPE_Q4_K: case Q42_DTYPE_Q5_K:
			set_f16(blk, 0x3C00);
			set_f16(blk + 2, 0);
			break;
		case Q42_DTYPE_Q6_K:
			set_f16(blk + 208, 0x3C00);
			break;
		case Q42_DTYPE_TQ1_0:
			set_f16(blk + 52, 0x3C00);
			break;
		case Q42_DTYPE_TQ2_0:
			set_f16(blk + 64, 0x3C00);
			break;
		case Q42_DTYPE_IQ4_NL:
		case Q42_DTYPE_IQ4_XS:
			set_f16(blk, 0x3C00);
			break;
		case Q42_DTYPE_Q8_K: /* d = 1.0f; bsums must match the quants */
		{
			blk[0] = 0; blk[1] = 0; blk[2] = 0x80; blk[3] = 0x3F;
			for (int g = 0; g < 16; g++) {
				int s = 0;
				for (int j = 0; j < 16; j++)
					s += (int8_t)blk[4 + 16 * g + j];
				set_f16(blk + 260 + 2 * g, (uint16_t)(int16_t)s);
			}
			break;
		}
		default:
			fail_msg("no unit-scale rule for dtype %u", dtype);
		}
	}
}

static void test_dot_integer_exact(void **state)
{
	const tcase *tc = *state;
	const q42_type_kernels *k = q42_kernels_get(tc->dtype, Q42_ISA_SCALAR);
	const q42_type_kernels *ak = q42_kernels_get(k->vec_dot_type, Q42_ISA_SCALAR);
	const size_t n = 1024;
	size_t wbytes = row_bytes(tc->dtype, n), xbytes = row_bytes(k->vec_dot_type, n);
	uint8_t *w = malloc(wbytes), *x = malloc(xbytes);
	float *wf = malloc(n * 4), *xf = malloc(n * 4);
	assert_true(w && x && wf && xf);
	srand(42u + tc->dtype);
	for (int rep = 0; rep < 20; rep++) {
		for (size_t i = 0; i < wbytes; i++)
			w[i] = (uint8_t)rand();
		for (size_t i = 0; i < xbytes; i++)
			x[i] = (uint8_t)rand();
		unit_scales(tc->dtype, w, n / q42_dtype_get(tc->dtype)->block_elems);
		unit_scales(k->vec_dot_type, x, n / q42_dtype_get(k->vec_dot_type)->block_elems);
		k->dequant(w, wf, (int64_t)n);
		ak->dequant(x, xf, (int64_t)n);
		int64_t exact = 0;
		for (size_t i = 0; i < n; i++) {
			assert_true(wf[i] == truncf(wf[i]) && xf[i] == truncf(xf[i]));
			exact += (int64_t)wf[i] * (int64_t)xf[i];
		}
		float s;
		k->vec_dot((int64_t)n, &s, w, x);
		if ((double)s != (double)exact)
			fail_msg("%s: vec_dot %.1f, integer dot of dequantized rows %lld", tc->name,
				 (double)s, (long long)exact);
	}
	free(w);
	free(x);
	free(wf);
	free(xf);
}

static void test_table_shape(void **state)
{
	(void)state;
	static const struct { uint32_t t, vdt; bool quant, dot; } want[] = {
		{Q42_DTYPE_F32, Q42_DTYPE_F32, true, true},
		{Q42_DTYPE_F16, Q42_DTYPE_F16, true, true},
		{Q42_DTYPE_BF16, Q42_DTYPE_BF16, true, true},
		{Q42_DTYPE_Q4_0, Q42_DTYPE_Q8_0, false, true},
		{Q42_DTYPE_Q4_1, Q42_DTYPE_Q8_1, false, true},
		{Q42_DTYPE_Q5_0, Q42_DTYPE_Q8_0, false, true},
		{Q42_DTYPE_Q5_1, Q42_DTYPE_Q8_1, false, true},
		{Q42_DTYPE_Q8_0, Q42_DTYPE_Q8_0, true, true},
		{Q42_DTYPE_Q8_1, Q42_DTYPE_Q8_1, true, false},
		{Q42_DTYPE_Q2_K, Q42_DTYPE_Q8_K, false, true},
		{Q42_DTYPE_Q3_K, Q42_DTYPE_Q8_K, false, true},
		{Q42_DTYPE_Q4_K, Q42_DTYPE_Q8_K, false, true},
		{Q42_DTYPE_Q5_K, Q42_DTYPE_Q8_K, false, true},
		{Q42_DTYPE_Q6_K, Q42_DTYPE_Q8_K, false, true},
		{Q42_DTYPE_Q8_K, Q42_DTYPE_Q8_K, true, false},
		{Q42_DTYPE_TQ1_0, Q42_DTYPE_Q8_K, false, true},
		{Q42_DTYPE_TQ2_0, Q42_DTYPE_Q8_K, false, true},
		{Q42_DTYPE_IQ4_NL, Q42_DTYPE_Q8_0, false, true},
		{Q42_DTYPE_IQ4_XS, Q42_DTYPE_Q8_K, false, true},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const q42_type_kernels *k = q42_kernels_get(want[i].t, Q42_ISA_SCALAR);
		assert_non_null(k);
		assert_non_null(k->dequant);
		assert_int_equal(k->vec_dot_type, want[i].vdt);
		assert_int_equal(k->quantize != NULL, want[i].quant);
		assert_int_equal(k->vec_dot != NULL, want[i].dot);
	}
}

/* A row of a single plain value must survive the f16 quantizer's NaN and
 * infinity rules the way ggml's software conversion has them. */
static void test_f16_specials(void **state)
{
	(void)state;
	assert_int_equal(q42_f32_to_f16(65504.0f), 0x7BFF);
	assert_int_equal(q42_f32_to_f16(65520.0f), 0x7C00);
	assert_int_equal(q42_f32_to_f16(-INFINITY), 0xFC00);
	assert_int_equal(q42_f32_to_f16(from_bits(0xFF800001u)), 0xFE00);
	assert_int_equal(q42_f32_to_f16(0x1p-25f), 0x0000); /* tie to even: 0 */
	assert_int_equal(q42_f32_to_f16(0x1.8p-24f), 0x0002); /* tie to even: 2 */
	assert_int_equal(q42_f32_to_bf16(from_bits(0x7F800001u)), 0x7FC0);
}

#define T(d, n) {Q42_DTYPE_##d, n}
static const tcase c_f16 = T(F16, "f16"), c_bf16 = T(BF16, "bf16"), c_f32 = T(F32, "f32"),
	c_q4_0 = T(Q4_0, "q4_0"), c_q4_1 = T(Q4_1, "q4_1"), c_q5_0 = T(Q5_0, "q5_0"),
	c_q5_1 = T(Q5_1, "q5_1"), c_q8_0 = T(Q8_0, "q8_0"), c_q8_1 = T(Q8_1, "q8_1"),
	c_q2_k = T(Q2_K, "q2_K"), c_q3_k = T(Q3_K, "q3_K"), c_q4_k = T(Q4_K, "q4_K"),
	c_q5_k = T(Q5_K, "q5_K"), c_q6_k = T(Q6_K, "q6_K"), c_q8_k = T(Q8_K, "q8_K"),
	c_tq1_0 = T(TQ1_0, "tq1_0"), c_tq2_0 = T(TQ2_0, "tq2_0"), c_iq4_nl = T(IQ4_NL, "iq4_nl"),
	c_iq4_xs = T(IQ4_XS, "iq4_xs");

#define CASE(fn, c) {#fn "_" #c, fn, NULL, NULL, (void *)&c_##c}
#define DOT_CASES(c) CASE(test_dot_golden, c), CASE(test_dot_vs_dequant, c)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_exhaustive),
		cmocka_unit_test(test_bf16_exhaustive),
		cmocka_unit_test(test_f32_to_f16_golden),
		cmocka_unit_test(test_f32_to_bf16_golden),
		cmocka_unit_test(test_f16_specials),
		cmocka_unit_test(test_table_shape),
		cmocka_unit_test(test_dequant_rejects),
		CASE(test_dequant, f16), CASE(test_dequant, bf16), CASE(test_dequant, q4_0),
		CASE(test_dequant, q4_1), CASE(test_dequant, q5_0), CASE(test_dequant, q5_1),
		CASE(test_dequant, q8_0), CASE(test_dequant, q2_k), CASE(test_dequant, q3_k),
		CASE(test_dequant, q4_k), CASE(test_dequant, q5_k), CASE(test_dequant, q6_k),
		CASE(test_dequant, q8_k), CASE(test_dequant, tq1_0), CASE(test_dequant, tq2_0),
		CASE(test_dequant, iq4_nl), CASE(test_dequant, iq4_xs),
		CASE(test_quant, q8_0), CASE(test_quant, q8_1), CASE(test_quant, q8_k),
		DOT_CASES(f32), DOT_CASES(f16), DOT_CASES(bf16), DOT_CASES(q4_0), DOT_CASES(q4_1),
		DOT_CASES(q5_0), DOT_CASES(q5_1), DOT_CASES(q8_0), DOT_CASES(q2_k), DOT_CASES(q3_k),
		DOT_CASES(q4_k), DOT_CASES(q5_k), DOT_CASES(q6_k), DOT_CASES(tq1_0),
		DOT_CASES(tq2_0), DOT_CASES(iq4_nl), DOT_CASES(iq4_xs),
		CASE(test_dot_integer_exact, q4_0), CASE(test_dot_integer_exact, q4_1),
		CASE(test_dot_integer_exact, q5_0), CASE(test_dot_integer_exact, q5_1),
		CASE(test_dot_integer_exact, q8_0), CASE(test_dot_integer_exact, q2_k),
		CASE(test_dot_integer_exact, q3_k), CASE(test_dot_integer_exact, q4_k),
		CASE(test_dot_integer_exact, q5_k), CASE(test_dot_integer_exact, q6_k),
		CASE(test_dot_integer_exact, tq1_0), CASE(test_dot_integer_exact, tq2_0),
		CASE(test_dot_integer_exact, iq4_nl), CASE(test_dot_integer_exact, iq4_xs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
