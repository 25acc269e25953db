/* test_arch.c -- qwen3, phi3, gemma3, lfm2 and lfm2moe models that are broken on purpose
 * are refused at engine open with the tensor or key named, never run.
 *
 * Each case rebuilds one of the checked-in tests/models/a64-*.gguf files
 * (made by llama.cpp's tools, tests/models/README) with one tensor
 * dropped or added, or one metadata value changed, through the test-side
 * GGUF writer (tests/tools/gguf_build.h), and checks the error. The
 * intact files must open (so a case fails for its own reason only).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gguf_build.h"
#include "common/q42_types.h"
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "formats/q42_gguf.h"

/* One change to a model: drop the tensor named drop, add a tensor named
 * add with the shape and bytes of the tensor named like, set the u32 key
 * named key to value, add the string key skey = sval and the f32 key
 * fkey = fval (NULL: no such change). unsupported: the refusal is
 * Q42_EUNSUPPORTED (a model q42 cannot compute) rather than Q42_EFORMAT. */
typedef struct edit {
	const char *drop;
	const char *add, *like;
	const char *key;
	uint32_t value;
	const char *skey, *sval;
	const char *fkey;
	float fval;
	bool unsupported;
} edit;

static uint8_t *slurp(const char *path, uint64_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long n;
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	p = malloc((size_t)n);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (uint64_t)n;
	return p;
}

static bool str_is(q42_str s, const char *z)
{
	return z != NULL && s.len == strlen(z) && memcmp(s.p, z, s.len) == 0;
}

/* tests/models/<name> with the edit applied, written to out (a temp file) */
static void rebuild(const char *name, const edit *ed, char *out)
{
	char path[4096];
	uint64_t size;
	q42_gguf g;
	q42_err err = {0};
	gguf_builder b;
	q42_buf bytes;
	snprintf(path, sizeof path, "%s/tests/models/%s", getenv("Q42_SRCDIR") ? getenv("Q42_SRCDIR") : ".",
		 name);
	uint8_t *file = slurp(path, &size);
	assert_int_equal(q42_gguf_parse(&g, file, size, path, &err), Q42_OK);
	gb_init(&b, g.alignment);
	for (uint64_t i = 0; i < g.n_kv; i++) {
		const q42_gguf_kv *kv = &g.kv[i];
		if (str_is(kv->key, ed->key)) {
			gb_kv_u32(&b, ed->key, ed->value);
			continue;
		}
		/* a key's bytes as stored: its name, type and value */
		q42_buf_append(&b.kv, file + kv->key_off, (size_t)(kv->end_off - kv->key_off));
		b.n_kv++;
	}
	if (ed->skey != NULL)
		gb_kv_str(&b, ed->skey, ed->sval);
	if (ed->fkey != NULL)
		gb_kv_f32(&b, ed->fkey, ed->fval);
	for (uint64_t i = 0; i < g.n_tensors; i++) {
		const q42_gguf_tensor *t = &g.tensors[i];
		char nm[256];
		snprintf(nm, sizeof nm, "%.*s", (int)t->name.len, t->name.p);
		if (str_is(t->name, ed->like))
			gb_tensor_add(&b, strdup(ed->add), t->type, t->n_dims, t->ne, t->data, t->nbytes);
		if (!str_is(t->name, ed->drop))
			gb_tensor_add(&b, strdup(nm), t->type, t->n_dims, t->ne, t->data, t->nbytes);
	}
	q42_buf_init(&bytes);
	gb_finish(&b, g.version, &bytes);
	int fd = mkstemp(out);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes.data, bytes.len), (ssize_t)bytes.len);
	close(fd);
	for (uint64_t i = 0; i < b.n_tensors; i++)
		free((void *)(uintptr_t)b.t[i].name);
	q42_buf_free(&bytes);
	gb_free(&b);
	q42_gguf_free(&g);
	free(file);
}

/* Open the edited model: it must be refused with Q42_EFORMAT (or
 * Q42_EUNSUPPORTED) and every one of the words in its message (an empty
 * edit must open). */
static void expect_refusal(const char *name, const edit *ed, const char *w1, const char *w2)
{
	char tmp[] = "/tmp/q42-test-arch-XXXXXX";
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_err err = {0};
	q42_engine_opts o = {.n_threads = 1, .n_ctx = 64};
	rebuild(name, ed, tmp);
	int rc = q42_mount_open(&m, tmp, 0, &err);
	if (rc == Q42_OK)
		rc = q42_engine_open(&e, m, &o, &err);
	print_message("# %s: %s\n", name, rc == Q42_OK ? "opens" : err.msg);
	if (w1 == NULL) {
		assert_int_equal(rc, Q42_OK);
	} else {
		assert_int_equal(rc, ed->unsupported ? Q42_EUNSUPPORTED : Q42_EFORMAT);
		assert_null(e);
		assert_non_null(strstr(err.msg, w1));
		if (w2 != NULL)
			assert_non_null(strstr(err.msg, w2));
	}
	q42_engine_close(e);
	q42_mount_close(m);
	unlink(tmp);
}

/* The rebuilt files open when nothing is changed. */
static void test_intact(void **state)
{
	(void)state;
	static const edit none = {0};
	expect_refusal("a64-qwen3-hd24-f32.gguf", &none, NULL, NULL);
	expect_refusal("a64-phi3-long-f32.gguf", &none, NULL, NULL);
	expect_refusal("a64-gemma3-swa-f32.gguf", &none, NULL, NULL);
	expect_refusal("a64-lfm2-f32.gguf", &none, NULL, NULL);
}

/* lfm2: layers 0, 1, 3 are convolutions (head_count_kv 0), 2 attention */
static void test_conv_layers(void **state)
{
	(void)state;
	const edit kern = {.drop = "blk.1.shortconv.conv.weight"};
	expect_refusal("a64-lfm2-f32.gguf", &kern, "tensor blk.1.shortconv.conv.weight", "missing");
	const edit qn = {.add = "blk.0.attn_q_norm.weight", .like = "blk.2.attn_q_norm.weight"};
	expect_refusal("a64-lfm2-f32.gguf", &qn, "tensor blk.0.attn_q_norm.weight",
		       "block 0 is a convolution layer");
	const edit cv = {.add = "blk.2.shortconv.conv.weight", .like = "blk.0.shortconv.conv.weight"};
	expect_refusal("a64-lfm2-f32.gguf", &cv, "tensor blk.2.shortconv.conv.weight",
		       "block 2 is an attention layer");
	const edit l1 = {.key = "lfm2.shortconv.l_cache", .value = 1};
	expect_refusal("a64-lfm2-f32.gguf", &l1, "lfm2.shortconv.l_cache 1 outside", NULL);
	const edit l5 = {.key = "lfm2.shortconv.l_cache", .value = 5};
	expect_refusal("a64-lfm2-f32.gguf", &l5, "tensor blk.0.shortconv.conv.weight", "expected [5, 64]");
}

static void test_missing_tensor(void **state)
{
	(void)state;
	const edit qk = {.drop = "blk.1.attn_k_norm.weight"};
	expect_refusal("a64-qwen3-hd24-f32.gguf", &qk, "tensor blk.1.attn_k_norm.weight", "missing");
	const edit post = {.drop = "blk.2.post_ffw_norm.weight"};
	expect_refusal("a64-gemma3-swa-f32.gguf", &post, "tensor blk.2.post_ffw_norm.weight", "missing");
	/* phi3 without its fused attn_qkv has no q either */
	const edit qkv = {.drop = "blk.0.attn_qkv.weight"};
	expect_refusal("a64-phi3-long-f32.gguf", &qkv, "tensor blk.0.attn_q.weight", "attn_qkv");
}

/* q beside a fused attn_qkv: two sources for the same rows */
static void test_qkv_twice(void **state)
{
	(void)state;
	const edit both = {.add = "blk.1.attn_q.weight", .like = "blk.1.attn_output.weight"};
	expect_refusal("a64-phi3-long-f32.gguf", &both, "blk.1.attn_q.weight", "beside");
}

/* Head sizes that do not fit the tensors or each other */
static void test_head_dims(void **state)
{
	(void)state;
	const edit k20 = {.key = "qwen3.attention.key_length", .value = 20};
	expect_refusal("a64-qwen3-hd24-f32.gguf", &k20, "value_length", "differ");
	const edit kv20 = {.key = "qwen3.attention.value_length", .value = 20};
	expect_refusal("a64-qwen3-hd24-f32.gguf", &kv20, "qwen3.attention.key_length", "value_length");
	const edit v = {.key = "gemma3.attention.value_length", .value = 16};
	expect_refusal("a64-gemma3-swa-f32.gguf", &v, "gemma3.attention.key_length 32", "differ");
	const edit rot = {.key = "phi3.rope.dimension_count", .value = 12};
	expect_refusal("a64-phi3-long-f32.gguf", &rot, "tensor rope_factors_long.weight", "expected [6");
	const edit kv = {.key = "phi3.attention.head_count_kv", .value = 3};
	expect_refusal("a64-phi3-long-f32.gguf", &kv, "head_count 4 is not a multiple of head_count_kv 3",
		       NULL);
}

/* lfm2moe: 8 experts, top-2, block 0 dense, blocks 1-3 routed; expert
 * count, used count, expert rows and the dense lead each checked against
 * the others and the tensors */
static void test_moe(void **state)
{
	(void)state;
	const char *M = "a64-lfm2moe-e8k2-f32.gguf";
	static const edit none = {0};
	expect_refusal(M, &none, NULL, NULL);
	const edit ne = {.key = "lfm2moe.expert_count", .value = 6};
	expect_refusal(M, &ne, "tensor blk.1.ffn_gate_inp.weight", "expected [64, 6]");
	const edit ne0 = {.key = "lfm2moe.expert_count", .value = 0};
	expect_refusal(M, &ne0, "lfm2moe.expert_count 0 outside", NULL);
	const edit nu = {.key = "lfm2moe.expert_used_count", .value = 9};
	expect_refusal(M, &nu, "lfm2moe.expert_used_count 9 outside 1..8", NULL);
	const edit nu0 = {.key = "lfm2moe.expert_used_count", .value = 0};
	expect_refusal(M, &nu0, "lfm2moe.expert_used_count 0 outside", NULL);
	const edit ff = {.key = "lfm2moe.expert_feed_forward_length", .value = 48};
	expect_refusal(M, &ff, "tensor blk.1.ffn_gate_exps.weight", "expected [64, 48, 8 (expert_count)]");
	const edit lead = {.key = "lfm2moe.leading_dense_block_count", .value = 2};
	expect_refusal(M, &lead, "tensor blk.1.ffn_gate_inp.weight", "block 1 has a dense FFN");
	const edit lead9 = {.key = "lfm2moe.leading_dense_block_count", .value = 9};
	expect_refusal(M, &lead9, "leading_dense_block_count 9 exceeds block_count 4", NULL);
	const edit bias = {.drop = "blk.2.exp_probs_b.bias"};
	expect_refusal(M, &bias, "tensor blk.2.exp_probs_b.bias", "missing");
	const edit dense = {.add = "blk.0.ffn_up_exps.weight", .like = "blk.1.ffn_up_exps.weight"};
	expect_refusal(M, &dense, "tensor blk.0.ffn_up_exps.weight", "block 0 has a dense FFN");
	const edit routed = {.add = "blk.3.ffn_gate.weight", .like = "blk.0.ffn_gate.weight"};
	expect_refusal(M, &routed, "tensor blk.3.ffn_gate.weight", "block 3 has a routed FFN");
}

/* RoPE scaling types: YaRN (llama.cpp's ext_factor 1 mix of interpolated
 * and extrapolated angles) is refused by name wherever a model is read,
 * an unknown type is malformed; linear, longrope and none open. */
static void test_rope_scaling(void **state)
{
	(void)state;
	const char *M = "a64-qwen3-hd24-f32.gguf";
	const edit yarn = {.skey = "qwen3.rope.scaling.type", .sval = "yarn",
			   .fkey = "qwen3.rope.scaling.factor", .fval = 4.0f, .unsupported = true};
	expect_refusal(M, &yarn, "qwen3.rope.scaling.type \"yarn\"", "not supported");
	const edit yarn1 = {.skey = "qwen3.rope.scaling.type", .sval = "yarn", .unsupported = true};
	expect_refusal(M, &yarn1, "YaRN", NULL);
	const edit bogus = {.skey = "qwen3.rope.scaling.type", .sval = "dynamic"};
	expect_refusal(M, &bogus, "qwen3.rope.scaling.type \"dynamic\"", "expected none, linear");
	static const char *const ok[] = {"linear", "longrope", "none"};
	for (size_t i = 0; i < 3; i++) {
		const edit e = {.skey = "qwen3.rope.scaling.type", .sval = ok[i],
				.fkey = "qwen3.rope.scaling.factor", .fval = 2.0f};
		expect_refusal(M, &e, NULL, NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_missing_tensor),
		cmocka_unit_test(test_qkv_twice),
		cmocka_unit_test(test_head_dims),
		cmocka_unit_test(test_conv_layers),
		cmocka_unit_test(test_moe),
		cmocka_unit_test(test_rope_scaling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
