/* test_gguf.c -- the GGUF reader against real files and a hostile set.
 *
 * The hostile cases follow the spirit of llama.cpp's test-gguf: each one
 * starts from a valid file built here and breaks exactly one rule, so a
 * pass means that rule (and not some earlier one) was enforced. Every
 * allocation made by the reader is watched (malloc is wrapped at link time)
 * so a forged count cannot make it reserve far more than the file's size.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/q42_file.h"
#include "common/q42_le.h"
#include "formats/q42_gguf.h"
#include "formats/q42_model.h"
#include "common/q42_types.h"
#include "gguf_build.h"

/* ---- allocation watch ---- */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
static size_t largest_alloc;

void *__wrap_malloc(size_t n)
{
	if (n > largest_alloc)
		largest_alloc = n;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	size_t t;
	if (!__builtin_mul_overflow(n, m, &t) && t > largest_alloc)
		largest_alloc = t;
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	if (n > largest_alloc)
		largest_alloc = n;
	return __real_realloc(p, n);
}

/* ---- a valid base file ---- */
static float tdata[2][64];

/* Layout knowledge the mutations need, recorded while building. */
typedef struct base {
	q42_buf b;
	uint64_t off_n_tensors, off_n_kv;
	uint64_t off_first_key;
} base;

static void build_base(q42_buf *out, int with_tensors)
{
	gguf_builder gb;
	static const char *toks[] = {"<unk>", "<s>", "</s>", "a", "b"};
	float scores[5] = {0, 0, 0, -1, -2};
	int32_t types[5] = {2, 3, 3, 1, 1};
	uint64_t ne[2] = {64, 1};

	for (int i = 0; i < 64; i++) {
		tdata[0][i] = (float)i;
		tdata[1][i] = (float)-i;
	}
	gb_init(&gb, 32);
	gb_kv_str(&gb, "general.architecture", "llama");
	gb_kv_u32(&gb, "llama.block_count", 1);
	gb_kv_u32(&gb, "llama.embedding_length", 64);
	gb_kv_u32(&gb, "llama.attention.head_count", 4);
	gb_kv_str(&gb, "tokenizer.ggml.model", "llama");
	gb_kv_arr_str(&gb, "tokenizer.ggml.tokens", toks, 5);
	gb_kv_arr_f32(&gb, "tokenizer.ggml.scores", scores, 5);
	gb_kv_arr_i32(&gb, "tokenizer.ggml.token_type", types, 5);
	gb_kv_bool(&gb, "tokenizer.ggml.add_bos_token", 1);
	if (with_tensors) {
		gb_tensor_add(&gb, "a.weight", Q42_DTYPE_F32, 2, ne, tdata[0], sizeof tdata[0]);
		gb_tensor_add(&gb, "b.weight", Q42_DTYPE_F32, 1, ne, tdata[1], sizeof tdata[1]);
	}
	q42_buf_init(out);
	gb_finish(&gb, 3, out);
	gb_free(&gb);
}

static int parse_buf(const q42_buf *b, q42_err *err, q42_gguf *g)
{
	largest_alloc = 0;
	return q42_gguf_parse(g, b->data, b->len, "t.gguf", err);
}

static void expect_reject(const q42_buf *b, const char *needle)
{
	q42_gguf g;
	q42_err err = {0};
	int rc = parse_buf(b, &err, &g);
	if (rc == Q42_OK || strstr(err.msg, needle) == NULL)
		fail_msg("expected rejection containing '%s', got rc=%d msg='%s'", needle, rc, err.msg);
	assert_int_equal(rc, Q42_EFORMAT);
	assert_true(largest_alloc <= 16 * b->len + 4096);
	assert_null(g.kv);
}

/* Offset of the first byte after "GGUF" version n_tensors n_kv. */
#define HDR 24u

static void test_base_valid(void **state)
{
	(void)state;
	q42_buf b;
	q42_gguf g;
	q42_err err = {0};
	build_base(&b, 1);
	assert_int_equal(parse_buf(&b, &err, &g), Q42_OK);
	assert_int_equal(g.n_tensors, 2);
	assert_int_equal(g.alignment, 32);
	const q42_gguf_tensor *t = q42_gguf_find_tensor(&g, "b.weight");
	assert_non_null(t);
	assert_int_equal(t->offset, 256);
	assert_memory_equal(t->data, tdata[1], sizeof tdata[1]);
	q42_hparams hp;
	assert_int_equal(q42_hparams_from_gguf(&hp, &g, &err), Q42_OK);
	assert_string_equal(hp.arch, "llama");
	assert_int_equal(hp.n_head_kv[0], 4);
	q42_vocab v;
	assert_int_equal(q42_vocab_from_gguf(&v, &g, &err), Q42_OK);
	assert_int_equal(v.n_tokens, 5);
	assert_true(q42_str_eq(v.tokens[4], "b"));
	assert_true(v.scores[4] == -2.0f);
	assert_int_equal(v.add_bos, 1);
	assert_int_equal(v.bos, Q42_TOK_NONE);
	q42_vocab_free(&v);
	q42_gguf_free(&g);
	q42_buf_free(&b);
}

static void test_bad_magic_version(void **state)
{
	(void)state;
	q42_buf b;
	build_base(&b, 1);
	b.data[0] = 'X';
	expect_reject(&b, "bad magic");
	b.data[0] = 'G';
	q42_st32(b.data + 4, 1);
	expect_reject(&b, "version 1, expected 2 or 3");
	q42_st32(b.data + 4, 4);
	expect_reject(&b, "version 4");
	q42_st32(b.data + 4, 0x03000000);
	expect_reject(&b, "big-endian");
	q42_buf_free(&b);
}

static void test_huge_counts(void **state)
{
	(void)state;
	q42_buf b;
	build_base(&b, 1);
	q42_st64(b.data + 16, UINT64_MAX / 2);
	expect_reject(&b, "metadata count");
	q42_buf_free(&b);
	build_base(&b, 1);
	q42_st64(b.data + 8, (uint64_t)1 << 60);
	expect_reject(&b, "tensor count");
	q42_buf_free(&b);
}

static void test_oversized_strings_arrays(void **state)
{
	(void)state;
	q42_buf b;
	/* first key's length */
	build_base(&b, 1);
	q42_st64(b.data + HDR, (uint64_t)1 << 40);
	expect_reject(&b, "metadata key");
	q42_buf_free(&b);
	/* first value's length: "general.architecture" is 20 bytes */
	build_base(&b, 1);
	q42_st64(b.data + HDR + 8 + 20 + 4, UINT64_MAX);
	expect_reject(&b, "string value");
	q42_buf_free(&b);

	gguf_builder gb;
	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_key(&gb, "big.array", Q42_GGUF_ARRAY);
	q42_buf_u32le(&gb.kv, Q42_GGUF_U64);
	q42_buf_u64le(&gb.kv, (uint64_t)1 << 61);
	gb_finish(&gb, 3, &b);
	expect_reject(&b, "array of");
	gb_free(&gb);
	q42_buf_free(&b);

	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_key(&gb, "big.strings", Q42_GGUF_ARRAY);
	q42_buf_u32le(&gb.kv, Q42_GGUF_STRING);
	q42_buf_u64le(&gb.kv, (uint64_t)1 << 40);
	q42_buf_zeros(&gb.kv, 64);
	gb_finish(&gb, 3, &b);
	expect_reject(&b, "string array length");
	gb_free(&gb);
	q42_buf_free(&b);
}

static void one_kv_case(uint32_t type, const void *payload, size_t n, const char *needle)
{
	gguf_builder gb;
	q42_buf b;
	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_key(&gb, "k", type);
	q42_buf_append(&gb.kv, payload, n);
	gb_finish(&gb, 3, &b);
	expect_reject(&b, needle);
	gb_free(&gb);
	q42_buf_free(&b);
}

static void test_bad_types(void **state)
{
	(void)state;
	uint8_t nested[12] = {Q42_GGUF_ARRAY, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
	uint8_t badelem[12] = {13, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
	uint8_t two = 2;
	one_kv_case(Q42_GGUF_ARRAY, nested, sizeof nested, "nested arrays");
	one_kv_case(Q42_GGUF_ARRAY, badelem, sizeof badelem, "array element type 13");
	one_kv_case(13, &two, 1, "value type 13");
	one_kv_case(Q42_GGUF_BOOL, &two, 1, "bool value 2");
	one_kv_case(Q42_GGUF_U64, &two, 1, "truncated");
}

static void test_duplicates_and_empty(void **state)
{
	(void)state;
	gguf_builder gb;
	q42_buf b;
	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_kv_u32(&gb, "x.y", 1);
	gb_kv_u32(&gb, "x.z", 1);
	gb_kv_u32(&gb, "x.y", 2);
	gb_finish(&gb, 3, &b);
	expect_reject(&b, "duplicates key 0");
	gb_free(&gb);
	q42_buf_free(&b);

	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_kv_u32(&gb, "", 1);
	gb_finish(&gb, 3, &b);
	expect_reject(&b, "is empty");
	gb_free(&gb);
	q42_buf_free(&b);

	uint64_t ne[1] = {64};
	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_tensor_add(&gb, "t", Q42_DTYPE_F32, 1, ne, tdata[0], 256);
	gb_tensor_add(&gb, "t", Q42_DTYPE_F32, 1, ne, tdata[1], 256);
	gb_finish(&gb, 3, &b);
	expect_reject(&b, "duplicates tensor 0");
	gb_free(&gb);
	q42_buf_free(&b);
}

static void alignment_case(uint32_t type, uint64_t value, const char *needle)
{
	gguf_builder gb;
	q42_buf b;
	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_key(&gb, "general.alignment", type);
	if (type == Q42_GGUF_U64)
		q42_buf_u64le(&gb.kv, value);
	else
		q42_buf_u32le(&gb.kv, (uint32_t)value);
	gb_finish(&gb, 3, &b);
	expect_reject(&b, needle);
	gb_free(&gb);
	q42_buf_free(&b);
}

static void test_bad_alignment(void **state)
{
	(void)state;
	alignment_case(Q42_GGUF_U32, 48, "power of two");
	alignment_case(Q42_GGUF_U32, 0, "power of two");
	alignment_case(Q42_GGUF_U32, 1u << 21, "power of two");
	alignment_case(Q42_GGUF_U64, 32, "expected type u32");
}

/* Build a one- or two-tensor file and patch its infos. */
typedef void (*patch_fn)(q42_buf *b, uint64_t info0, uint64_t info1);

static uint64_t info_off(const q42_buf *b, uint64_t idx)
{
	q42_gguf g;
	q42_err err;
	uint64_t off;
	assert_int_equal(q42_gguf_parse(&g, b->data, b->len, "t", &err), Q42_OK);
	off = g.tensors[idx].info_off;
	q42_gguf_free(&g);
	return off;
}

static void tensor_case(patch_fn patch, const char *needle)
{
	q42_buf b;
	build_base(&b, 1);
	patch(&b, info_off(&b, 0), info_off(&b, 1));
	expect_reject(&b, needle);
	q42_buf_free(&b);
}

/* info layout: u64 len, name, u32 n_dims, dims, u32 type, u64 offset.
 * Names are "a.weight" and "b.weight" (8 bytes); tensor 0 has 2 dims,
 * tensor 1 has 1. */
static void p_misaligned(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i0;
	q42_st64(b->data + i1 + 8 + 8 + 4 + 8 + 4, 260);
}
static void p_overlap(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i0;
	q42_st64(b->data + i1 + 8 + 8 + 4 + 8 + 4, 128);
}
/* An unknown-type predecessor only bounds the offset from below, so the
 * bounds check itself is what must catch this one. */
static void p_out_of_file(q42_buf *b, uint64_t i0, uint64_t i1)
{
	q42_st32(b->data + i0 + 8 + 8 + 4 + 16, 250);
	q42_st64(b->data + i1 + 8 + 8 + 4 + 8 + 4, (uint64_t)1 << 40);
}
static void p_ndims5(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i1;
	q42_st32(b->data + i0 + 16, 5);
}
static void p_ndims0(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i1;
	q42_st32(b->data + i0 + 16, 0);
}
static void p_dim_overflow(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i1;
	q42_st64(b->data + i0 + 20, (uint64_t)1 << 62);
	q42_st64(b->data + i0 + 28, (uint64_t)1 << 62);
}
static void p_dim_zero(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i1;
	q42_st64(b->data + i0 + 28, 0);
}
static void p_block(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i1;
	q42_st64(b->data + i0 + 20, 33);
	q42_st32(b->data + i0 + 36, Q42_DTYPE_Q4_0);
}
static void p_name_len(q42_buf *b, uint64_t i0, uint64_t i1)
{
	(void)i1;
	q42_st64(b->data + i0, (uint64_t)1 << 50);
}

static void test_tensor_infos(void **state)
{
	(void)state;
	tensor_case(p_misaligned, "not a multiple of the alignment");
	tensor_case(p_overlap, "contiguous");
	tensor_case(p_out_of_file, "outside the file");
	tensor_case(p_ndims5, "n_dims 5");
	tensor_case(p_ndims0, "n_dims 0");
	tensor_case(p_dim_overflow, "overflows the element count");
	tensor_case(p_dim_zero, "is zero");
	tensor_case(p_block, "whole number of q4_0 blocks");
	tensor_case(p_name_len, "tensor name");
}

static void test_unknown_type_listed(void **state)
{
	(void)state;
	q42_buf b;
	q42_gguf g;
	q42_err err;
	build_base(&b, 1);
	q42_st32(b.data + info_off(&b, 1) + 8 + 8 + 4 + 8, 250);
	assert_int_equal(parse_buf(&b, &err, &g), Q42_OK);
	assert_false(g.tensors[1].type_known);
	assert_int_equal(g.tensors[1].type, 250);
	assert_int_equal(g.tensors[1].nbytes, 0);
	assert_null(q42_dtype_get(250));
	q42_gguf_free(&g);
	q42_buf_free(&b);
}

static void test_tensor_past_end(void **state)
{
	(void)state;
	q42_buf b;
	build_base(&b, 1);
	b.len -= 4;
	expect_reject(&b, "runs past the end");
	q42_buf_free(&b);
}

/* Every prefix of the header must be rejected without reading past it:
 * the copy is exactly prefix-sized so ASan catches any overread. */
static void test_truncation_everywhere(void **state)
{
	(void)state;
	q42_buf b;
	q42_gguf g;
	q42_err err;
	uint64_t end;
	build_base(&b, 1);
	assert_int_equal(parse_buf(&b, &err, &g), Q42_OK);
	end = g.data_offset;
	q42_gguf_free(&g);
	for (uint64_t n = 0; n < end; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, b.data, n);
		int rc = q42_gguf_parse(&g, copy, n, "t", &err);
		if (rc != Q42_EFORMAT)
			fail_msg("prefix of %llu bytes accepted", (unsigned long long)n);
		free(copy);
	}
	q42_buf_free(&b);
}

/* Header bytes without their tensor data: the full parse refuses them,
 * the metadata-only parse reads every key and no tensor. */
static void test_parse_meta(void **state)
{
	(void)state;
	q42_buf b;
	q42_gguf g;
	q42_err err;
	q42_str s;
	build_base(&b, 1);
	assert_int_equal(parse_buf(&b, &err, &g), Q42_OK);
	uint64_t hdr = g.data_offset;
	q42_gguf_free(&g);
	assert_int_equal(q42_gguf_parse(&g, b.data, hdr, "t", &err), Q42_EFORMAT);
	assert_int_equal(q42_gguf_parse_meta(&g, b.data, hdr, "t", &err), Q42_OK);
	assert_int_equal(g.n_tensors, 0);
	assert_int_equal(g.n_kv, 9);
	assert_true(q42_gguf_get_str(&g, "tokenizer.ggml.model", &s) && q42_str_eq(s, "llama"));
	q42_gguf_free(&g);
	/* metadata cut short is still an error */
	assert_int_equal(q42_gguf_parse_meta(&g, b.data, 100, "t", &err), Q42_EFORMAT);
	q42_buf_free(&b);
}

static void test_vocab_errors(void **state)
{
	(void)state;
	gguf_builder gb;
	q42_buf b;
	q42_gguf g;
	q42_err err;
	q42_vocab v;
	static const char *toks[] = {"a", "b"};
	float sc[1] = {0};
	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_kv_str(&gb, "tokenizer.ggml.model", "llama");
	gb_kv_arr_str(&gb, "tokenizer.ggml.tokens", toks, 2);
	gb_kv_arr_f32(&gb, "tokenizer.ggml.scores", sc, 1);
	gb_finish(&gb, 3, &b);
	assert_int_equal(parse_buf(&b, &err, &g), Q42_OK);
	assert_int_equal(q42_vocab_from_gguf(&v, &g, &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "tokenizer.ggml.scores must be a numeric array of 2"));
	q42_gguf_free(&g);
	gb_free(&gb);
	q42_buf_free(&b);

	q42_buf_init(&b);
	gb_init(&gb, 32);
	gb_kv_str(&gb, "general.architecture", "llama");
	gb_finish(&gb, 3, &b);
	assert_int_equal(parse_buf(&b, &err, &g), Q42_OK);
	assert_int_equal(q42_vocab_from_gguf(&v, &g, &err), Q42_ENOTFOUND);
	q42_hparams hp;
	assert_int_equal(q42_hparams_from_gguf(&hp, &g, &err), Q42_ENOTFOUND);
	assert_non_null(strstr(err.msg, "llama.block_count"));
	q42_gguf_free(&g);
	gb_free(&gb);
	q42_buf_free(&b);
}

/* Every shared GGUF parses; its tensors tile the data section. */
static int parse_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		char path[4096];
		q42_map m;
		q42_gguf g;
		q42_err err;
		if (n < 5 || strcmp(e->d_name + n - 5, ".gguf") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		assert_int_equal(q42_map_open(&m, path, 0, &err), Q42_OK);
		if (q42_gguf_parse(&g, m.data, m.size, path, &err) != Q42_OK)
			fail_msg("%s", err.msg);
		/* The data section ends at the last tensor's bytes padded to the
		 * alignment: llama.cpp's gguf reader sizes it as the sum of every
		 * tensor's GGML_PAD(nbytes, alignment), and gguf-py's writer pads
		 * after every tensor, the last included. So a file may end up to
		 * alignment - 1 zero bytes after data_end (tiny-lfm2moe-f32 ends
		 * 16 bytes after its last tensor, at the next multiple of 32). */
		uint64_t padded = g.data_end;
		if (g.n_tensors > 0)
			padded = g.data_offset +
				 (g.data_end - g.data_offset + g.alignment - 1) /
					 g.alignment * g.alignment;
		if (m.size < g.data_end || m.size > padded)
			fail_msg("%s: file is %llu bytes, tensor data ends at %llu (padded %llu)",
				 path, (unsigned long long)m.size,
				 (unsigned long long)g.data_end, (unsigned long long)padded);
		for (uint64_t k = g.data_end; k < m.size; k++)
			assert_int_equal(m.data[k], 0);
		/* A LoRA adapter (general.type = adapter) holds only the adapter
		 * tensors: its tokenizer is the base model's, so it has none. */
		q42_str type;
		bool adapter = q42_gguf_get_str(&g, "general.type", &type) &&
			       q42_str_eq(type, "adapter");
		if (!adapter) {
			q42_vocab v;
			if (q42_vocab_from_gguf(&v, &g, &err) != Q42_OK)
				fail_msg("%s: %s", path, err.msg);
			q42_vocab_free(&v);
		}
		q42_gguf_free(&g);
		q42_map_close(&m);
		(*count)++;
	}
	closedir(d);
	return 0;
}

static void test_shared_files(void **state)
{
	(void)state;
	const char *models = getenv("Q42_TEST_MODELS");
	const char *vocab = getenv("Q42_TEST_VOCAB");
	int count = 0;
	int missing = (models == NULL || parse_dir(models, &count) != 0) +
		      (vocab == NULL || parse_dir(vocab, &count) != 0);
	if (missing || count == 0) {
		const char *ci = getenv("CI");
		if (ci != NULL && strcmp(ci, "true") == 0)
			fail_msg("shared models missing (Q42_TEST_MODELS/Q42_TEST_VOCAB) and CI=true");
		skip();
	}
	assert_true(count >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_valid),
		cmocka_unit_test(test_bad_magic_version),
		cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_oversized_strings_arrays),
		cmocka_unit_test(test_bad_types),
		cmocka_unit_test(test_duplicates_and_empty),
		cmocka_unit_test(test_bad_alignment),
		cmocka_unit_test(test_tensor_infos),
		cmocka_unit_test(test_unknown_type_listed),
		cmocka_unit_test(test_tensor_past_end),
		cmocka_unit_test(test_truncation_everywhere),
		cmocka_unit_test(test_parse_meta),
		cmocka_unit_test(test_vocab_errors),
		cmocka_unit_test(test_shared_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
