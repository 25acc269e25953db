/* test_hf.c -- config.json, tokenizer.json and tensor names.
 *
 * The expected names are llama.cpp's tensor names for the same weights
 * (its GGUF files, e.g. the shared models, use them); the q/k row order
 * follows the reshape/swapaxes written in llama.cpp's converter. A
 * Unigram tokenizer.json is checked against the GGUF vocabulary it is
 * built from (llama.cpp's nomic-bert-moe test vocabulary, whose tokenizer
 * test_tokenizer holds to llama.cpp's ids).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <openssl/evp.h>
#include "common/q42_file.h"
#include "formats/q42_gguf.h"
#include "formats/q42_hf.h"
#include "tokenizer/q42_tokenizer.h"

static void test_config(void **state)
{
	(void)state;
	const char *j = "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			"\"num_attention_heads\":8,\"num_key_value_heads\":4,\"intermediate_size\":172,"
			"\"rms_norm_eps\":1e-5,\"rope_theta\":10000.0,\"max_position_embeddings\":2048,"
			"\"vocab_size\":512,\"bos_token_id\":1,\"eos_token_id\":[2,3]}";
	q42_hf_config c;
	q42_err err = {0};
	assert_int_equal(q42_hf_config_parse(&c, j, strlen(j), &err), Q42_OK);
	assert_int_equal(c.family, Q42_HF_LLAMA);
	assert_string_equal(c.hp.arch, "llama");
	assert_int_equal(c.hp.n_embd, 64);
	assert_int_equal(c.hp.n_head_kv[1], 4);
	assert_int_equal(c.hp.n_ff[0], 172);
	assert_int_equal(c.hp.n_rot, 8);
	assert_int_equal(c.bos_id, 1);
	assert_int_equal(c.eos_id, 2);
	const char *bad = "{\"model_type\":\"t5\",\"hidden_size\":64}";
	assert_int_equal(q42_hf_config_parse(&c, bad, strlen(bad), &err), Q42_EUNSUPPORTED);
	const char *lfm = "{\"model_type\":\"lfm2\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			  "\"num_attention_heads\":4,\"num_key_value_heads\":2,"
			  "\"layer_types\":[\"conv\",\"full_attention\"],\"conv_L_cache\":3}";
	assert_int_equal(q42_hf_config_parse(&c, lfm, strlen(lfm), &err), Q42_OK);
	assert_int_equal(c.hp.n_head_kv[0], 0);
	assert_int_equal(c.hp.n_head_kv[1], 2);
	assert_int_equal(c.hp.conv_l_cache, 3);
}

/* phi3 (llama.cpp's Phi3MiniModel): partial rotary from
 * partial_rotary_factor, LongRoPE factors and the attention factor
 * sqrt(1 + ln(s)/ln(orig)) from rope_scaling; other families' YaRN and
 * llama3 scaling are refused (this reader makes neither's keys or
 * tensors), linear is read */
static void phi3_config(char *buf, size_t cap, const char *long_f, const char *short_f)
{
	snprintf(buf, cap,
		 "{\"model_type\":\"phi3\",\"hidden_size\":64,\"num_hidden_layers\":2,"
		 "\"num_attention_heads\":4,\"max_position_embeddings\":4096,"
		 "\"original_max_position_embeddings\":32,\"partial_rotary_factor\":0.625,"
		 "\"rope_scaling\":{\"type\":\"longrope\",\"long_factor\":%s,\"short_factor\":%s}}",
		 long_f, short_f);
}

static void test_config_rope(void **state)
{
	(void)state;
	q42_hf_config c;
	q42_err err = {0};
	char phi[512];
	phi3_config(phi, sizeof phi, "[1,2,3,4,5.5]", "[1,1,1,1,1.25]");
	assert_int_equal(q42_hf_config_parse(&c, phi, strlen(phi), &err), Q42_OK);
	assert_string_equal(c.hp.arch, "phi3");
	assert_int_equal(c.hp.n_rot, 10);
	assert_int_equal(c.hp.n_ctx_orig, 32);
	assert_int_equal(c.n_rope_factors, 5);
	assert_true(c.rope_long[4] == 5.5f && c.rope_short[4] == 1.25f);
	/* what the a64-phi3-long GGUF holds for the same numbers */
	assert_true(c.hp.rope_attn_factor == 1.5491933822631836f);
	phi3_config(phi, sizeof phi, "[1,2,3,4]", "[1,1,1,1]");
	assert_int_equal(q42_hf_config_parse(&c, phi, strlen(phi), &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "must hold 5 numbers"));
	static const char *const refused[] = {"yarn", "llama3", "dynamic"};
	for (int i = 0; i < 3; i++) {
		char q[512];
		snprintf(q, sizeof q, "{\"model_type\":\"qwen3\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			 "\"num_attention_heads\":4,\"rope_scaling\":{\"rope_type\":\"%s\",\"factor\":4.0}}",
			 refused[i]);
		assert_int_equal(q42_hf_config_parse(&c, q, strlen(q), &err), Q42_EUNSUPPORTED);
		assert_non_null(strstr(err.msg, refused[i]));
	}
	const char *lin = "{\"model_type\":\"qwen3\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			  "\"num_attention_heads\":4,\"rope_scaling\":{\"type\":\"linear\",\"factor\":4.0}}";
	assert_int_equal(q42_hf_config_parse(&c, lin, strlen(lin), &err), Q42_OK);
	assert_true(c.hp.rope_freq_scale == 0.25f);
}

static void expect_name(const q42_hf_config *c, const char *hf, const char *want, uint32_t xf)
{
	char out[128];
	uint32_t x;
	if (want == NULL) {
		assert_false(q42_hf_tensor_name(c, hf, out, sizeof out, &x));
		return;
	}
	assert_true(q42_hf_tensor_name(c, hf, out, sizeof out, &x));
	assert_string_equal(out, want);
	assert_int_equal(x, xf);
}

static void test_names(void **state)
{
	(void)state;
	q42_hf_config c = {.family = Q42_HF_LLAMA, .hp = {.arch = "llama"}};
	expect_name(&c, "model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight",
		    Q42_HF_X_PERMUTE_Q);
	expect_name(&c, "model.layers.11.self_attn.k_proj.weight", "blk.11.attn_k.weight",
		    Q42_HF_X_PERMUTE_K);
	expect_name(&c, "model.layers.3.post_attention_layernorm.weight", "blk.3.ffn_norm.weight", 0);
	expect_name(&c, "model.embed_tokens.weight", "token_embd.weight", 0);
	expect_name(&c, "lm_head.weight", "output.weight", 0);
	expect_name(&c, "model.layers.01.mlp.up_proj.weight", NULL, 0);
	expect_name(&c, "model.layers.0.feed_forward.w1.weight", NULL, 0);
	c = (q42_hf_config){.family = Q42_HF_GEMMA, .hp = {.arch = "gemma3"}};
	expect_name(&c, "model.layers.1.post_attention_layernorm.weight",
		    "blk.1.post_attention_norm.weight", Q42_HF_X_ADD_ONE);
	expect_name(&c, "language_model.model.layers.1.self_attn.q_proj.weight",
		    "blk.1.attn_q.weight", 0);
	expect_name(&c, "model.norm.weight", "output_norm.weight", Q42_HF_X_ADD_ONE);
	c = (q42_hf_config){.family = Q42_HF_LFM2, .hp = {.arch = "lfm2"}};
	expect_name(&c, "model.layers.0.conv.conv.weight", "blk.0.shortconv.conv.weight",
		    Q42_HF_X_SQUEEZE);
	expect_name(&c, "model.layers.0.feed_forward.w2.weight", "blk.0.ffn_down.weight", 0);
	expect_name(&c, "model.embedding_norm.weight", "token_embd_norm.weight", 0);
	char out[64];
	uint32_t x = 99;
	assert_false(q42_hf_expert_piece(&c, "model.layers.1.feed_forward.experts.3.w1.weight", out,
					 sizeof out, &x));
	c = (q42_hf_config){.family = Q42_HF_PHI3, .hp = {.arch = "phi3"}};
	expect_name(&c, "model.layers.1.self_attn.qkv_proj.weight", "blk.1.attn_qkv.weight", 0);
	expect_name(&c, "model.layers.0.mlp.gate_up_proj.weight", "blk.0.ffn_up.weight", 0);
	expect_name(&c, "model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", 0);
	c = (q42_hf_config){.family = Q42_HF_LLAMA, .hp = {.arch = "llama"}};
	expect_name(&c, "model.layers.1.self_attn.qkv_proj.weight", NULL, 0);
	c = (q42_hf_config){.family = Q42_HF_LFM2MOE, .hp = {.arch = "lfm2moe"}};
	expect_name(&c, "model.layers.2.feed_forward.gate.weight", "blk.2.ffn_gate_inp.weight", 0);
	expect_name(&c, "model.layers.2.feed_forward.expert_bias", "blk.2.exp_probs_b.bias", 0);
	expect_name(&c, "model.layers.0.feed_forward.w1.weight", "blk.0.ffn_gate.weight", 0);
	assert_true(q42_hf_expert_piece(&c, "model.layers.1.feed_forward.experts.13.w1.weight", out,
					sizeof out, &x));
	assert_string_equal(out, "blk.1.ffn_gate_exps.weight");
	assert_int_equal(x, 13);
	assert_true(q42_hf_expert_piece(&c, "model.layers.1.feed_forward.experts.0.w2.weight", out,
					sizeof out, &x));
	assert_string_equal(out, "blk.1.ffn_down_exps.weight");
	assert_int_equal(x, 0);
	assert_true(q42_hf_expert_piece(&c, "model.layers.4.feed_forward.experts.7.w3.weight", out,
					sizeof out, &x));
	assert_string_equal(out, "blk.4.ffn_up_exps.weight");
	assert_false(q42_hf_expert_piece(&c, "model.layers.1.feed_forward.experts.3.w4.weight", out,
					 sizeof out, &x));
	assert_false(q42_hf_expert_piece(&c, "model.layers.1.feed_forward.experts.x.w1.weight", out,
					 sizeof out, &x));
	assert_false(q42_hf_expert_piece(&c, "model.layers.1.feed_forward.w1.weight", out, sizeof out,
					 &x));
}

static void test_permute(void **state)
{
	(void)state;
	/* 2 heads of 4 rows: per head HF (half, pair) [0 1 | 2 3] -> GGUF 0 2 1 3 */
	uint8_t rows[8] = {0, 1, 2, 3, 4, 5, 6, 7}, scratch[8];
	const uint8_t want[8] = {0, 2, 1, 3, 4, 6, 5, 7};
	q42_err err = {0};
	assert_int_equal(q42_hf_permute_rows(rows, scratch, 8, 1, 2, &err), Q42_OK);
	assert_memory_equal(rows, want, 8);
	assert_int_equal(q42_hf_permute_rows(rows, scratch, 6, 1, 4, &err), Q42_EFORMAT);
}

static void test_vocab(void **state)
{
	(void)state;
	const char *uni = "{\"added_tokens\":[{\"id\":1,\"content\":\"<s>\",\"special\":true}],"
			  "\"normalizer\":{\"type\":\"Prepend\",\"prepend\":\"\\u2581\"},"
			  "\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"byte_fallback\":true,"
			  "\"vocab\":[[\"<unk>\",0],[\"<s>\",0],[\"<0x41>\",0],[\"ab\",-1.5]]}}";
	const char *cfg = "{\"bos_token\":{\"content\":\"<s>\"},\"add_bos_token\":true}";
	q42_hf_vocab v;
	q42_err err = {0};
	assert_int_equal(q42_hf_vocab_parse(&v, uni, strlen(uni), cfg, strlen(cfg), NULL, &err),
			 Q42_OK);
	assert_int_equal(v.v.n_tokens, 4);
	assert_true(v.v.model.len == 5 && memcmp(v.v.model.p, "llama", 5) == 0);
	assert_int_equal(v.v.types[0], Q42_TOK_UNKNOWN);
	assert_int_equal(v.v.types[1], Q42_TOK_CONTROL);
	assert_int_equal(v.v.types[2], Q42_TOK_BYTE);
	assert_int_equal(v.v.types[3], Q42_TOK_NORMAL);
	assert_true(v.v.scores[3] == -1.5f);
	assert_int_equal(v.v.bos, 1);
	assert_int_equal(v.v.add_bos, 1);
	assert_int_equal(v.v.add_space_prefix, 1);
	q42_hf_vocab_free(&v);
	const char *bpe = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},"
			  "\"merges\":[[\"a\",\"b\"]]}}";
	assert_int_equal(q42_hf_vocab_parse(&v, bpe, strlen(bpe), NULL, 0, NULL, &err), Q42_OK);
	assert_true(v.v.model.len == 4 && memcmp(v.v.model.p, "gpt2", 4) == 0);
	assert_int_equal(v.v.n_merges, 1);
	assert_true(v.v.merges[0].len == 3 && memcmp(v.v.merges[0].p, "a b", 3) == 0);
	assert_null(v.v.scores);
	q42_hf_vocab_free(&v);
	const char *hole = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":2},\"merges\":[]}}";
	assert_int_equal(q42_hf_vocab_parse(&v, hole, strlen(hole), NULL, 0, NULL, &err), Q42_EFORMAT);
}

/* tokenizer.json as Hugging Face's converter writes it for a SentencePiece
 * Unigram model with a charsmap (XLM-R): the GGUF vocabulary's pieces and
 * scores, its special tokens as added tokens, the charsmap in base64. */
static char *unigram_json(const q42_vocab *g)
{
	json_t *root = json_object(), *vocab = json_array(), *added = json_array(), *norms;
	size_t b64len = 4 * ((g->charsmap.len + 2) / 3) + 1;
	unsigned char *b64 = malloc(b64len);
	char *out;
	EVP_EncodeBlock(b64, (const unsigned char *)g->charsmap.p, (int)g->charsmap.len);
	for (uint32_t i = 0; i < g->n_tokens; i++) {
		json_t *t = json_stringn(g->tokens[i].p, g->tokens[i].len);
		json_array_append_new(vocab, json_pack("[o,f]", json_copy(t), (double)g->scores[i]));
		if (g->types[i] == Q42_TOK_CONTROL || g->types[i] == Q42_TOK_USER_DEFINED)
			json_array_append_new(added, json_pack("{s:i,s:O,s:b}", "id", (int)i, "content", t,
							       "special", g->types[i] == Q42_TOK_CONTROL));
		json_decref(t);
	}
	norms = json_pack("[{s:s,s:s},{s:s,s:{s:s},s:s}]", "type", "Precompiled", "precompiled_charsmap",
			  (const char *)b64, "type", "Replace", "pattern", "Regex", " {2,}", "content", " ");
	json_object_set_new(root, "added_tokens", added);
	json_object_set_new(root, "normalizer", json_pack("{s:s,s:o}", "type", "Sequence", "normalizers", norms));
	json_object_set_new(root, "pre_tokenizer", json_pack("{s:s,s:s,s:s}", "type", "Metaspace",
							     "replacement", "\xe2\x96\x81",
							     "prepend_scheme", "always"));
	json_object_set_new(root, "post_processor", json_pack("{s:s}", "type", "RobertaProcessing"));
	json_object_set_new(root, "model", json_pack("{s:s,s:i,s:o}", "type", "Unigram", "unk_id",
						     (int)g->unk, "vocab", vocab));
	out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	free(b64);
	return out;
}

static void test_vocab_unigram(void **state)
{
	const char *dir = getenv("Q42_TEST_VOCAB");
	const char *cfg = "{\"bos_token\":\"<s>\",\"eos_token\":\"</s>\"}";
	char path[4096];
	q42_map m, mi;
	q42_gguf g;
	q42_vocab gv;
	q42_hf_vocab hv;
	q42_tokenizer *a, *b;
	q42_tokens ta = {0}, tb = {0};
	q42_err err = {0};
	const char *text;
	size_t n;
	char *js;
	(void)state;
	snprintf(path, sizeof path, "%s/ggml-vocab-nomic-bert-moe.gguf", dir ? dir : ".");
	if (dir == NULL || q42_map_open(&m, path, 0, &err) != Q42_OK) {
		if (getenv("CI") != NULL && strcmp(getenv("CI"), "true") == 0)
			fail_msg("%s missing and CI=true", path);
		skip();
	}
	assert_int_equal(q42_gguf_parse(&g, m.data, m.size, path, &err), Q42_OK);
	assert_int_equal(q42_vocab_from_gguf(&gv, &g, &err), Q42_OK);
	js = unigram_json(&gv);
	if (q42_hf_vocab_parse(&hv, js, strlen(js), cfg, strlen(cfg), NULL, &err) != Q42_OK)
		fail_msg("%s", err.msg);
	assert_true(hv.v.model.len == 2 && memcmp(hv.v.model.p, "t5", 2) == 0);
	assert_int_equal(hv.v.charsmap.len, gv.charsmap.len);
	assert_memory_equal(hv.v.charsmap.p, gv.charsmap.p, gv.charsmap.len);
	assert_int_equal(hv.v.add_space_prefix, 1);
	assert_int_equal(hv.v.remove_extra_whitespaces, 1);
	assert_int_equal(hv.v.add_bos, 1);
	assert_int_equal(hv.v.add_eos, 1);
	assert_int_equal(hv.v.bos, gv.bos);
	assert_int_equal(hv.v.eos, gv.eos);
	assert_int_equal(hv.v.unk, gv.unk);

	/* the same ids as the GGUF's on llama.cpp's test text for it */
	snprintf(path, sizeof path, "%s/ggml-vocab-nomic-bert-moe.gguf.inp", dir);
	assert_int_equal(q42_map_open(&mi, path, 0, &err), Q42_OK);
	text = (const char *)mi.data;
	n = (size_t)mi.size;
	assert_int_equal(q42_tokenizer_open(&a, &gv, &err), Q42_OK);
	assert_int_equal(q42_tokenizer_open(&b, &hv.v, &err), Q42_OK);
	assert_int_equal(q42_tokenizer_encode(a, text, n, Q42_TOKENIZE_ADD_SPECIAL, &ta, &err),
			 Q42_OK);
	assert_int_equal(q42_tokenizer_encode(b, text, n, Q42_TOKENIZE_ADD_SPECIAL, &tb, &err),
			 Q42_OK);
	print_message("# %zu ids from the GGUF, %zu from tokenizer.json\n", ta.n, tb.n);
	assert_int_equal(ta.n, tb.n);
	assert_memory_equal(ta.ids, tb.ids, ta.n * sizeof *ta.ids);

	/* a charsmap that is no base64 is refused by name */
	char *bad = strstr(js, "precompiled_charsmap\":\"");
	assert_non_null(bad);
	bad[23] = '*';
	q42_hf_vocab_free(&hv);
	assert_int_equal(q42_hf_vocab_parse(&hv, js, strlen(js), cfg, strlen(cfg), NULL, &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "precompiled_charsmap"));
	q42_tokens_free(&ta);
	q42_tokens_free(&tb);
	q42_tokenizer_close(a);
	q42_tokenizer_close(b);
	q42_map_close(&mi);
	free(js);
	q42_vocab_free(&gv);
	q42_gguf_free(&g);
	q42_map_close(&m);
}

/* The encoders: bert and nomic_bert (their own size names, no rotation
 * dimensions, attending both ways), EmbeddingGemma and LFM2-ColBERT by
 * class, their tensor names, Dense modules, and WordPiece in llama.cpp's
 * phantom-space form. */
static void test_encoders(void **state)
{
	(void)state;
	q42_hf_config c;
	q42_err err = {0};
	const char *bert = "{\"model_type\":\"bert\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			   "\"num_attention_heads\":4,\"intermediate_size\":128,"
			   "\"layer_norm_eps\":1e-12,\"max_position_embeddings\":512}";
	assert_int_equal(q42_hf_config_parse(&c, bert, strlen(bert), &err), Q42_OK);
	assert_string_equal(c.hp.arch, "bert");
	assert_int_equal(c.hp.non_causal, 1);
	assert_int_equal(c.hp.n_rot, 0);
	assert_true(c.hp.norm_eps > 0.0f && c.hp.norm_eps < 2e-12f);
	expect_name(&c, "bert.encoder.layer.1.attention.self.key.bias", "blk.1.attn_k.bias", 0);
	expect_name(&c, "encoder.layer.0.output.LayerNorm.weight", "blk.0.layer_output_norm.weight", 0);
	expect_name(&c, "embeddings.position_embeddings.weight", "position_embd.weight", 0);
	expect_name(&c, "pooler.dense.weight", NULL, 0);
	const char *nomic = "{\"model_type\":\"nomic_bert\",\"n_embd\":64,\"n_layer\":2,\"n_head\":4,"
			    "\"n_inner\":96,\"n_positions\":8192,\"max_trained_positions\":2048,"
			    "\"rotary_emb_base\":1000}";
	assert_int_equal(q42_hf_config_parse(&c, nomic, strlen(nomic), &err), Q42_OK);
	assert_string_equal(c.hp.arch, "nomic-bert");
	assert_int_equal(c.hp.n_ctx_train, 2048);
	assert_int_equal(c.hp.n_ff[1], 96);
	assert_true(c.hp.rope_freq_base == 1000.0f);
	expect_name(&c, "encoder.layers.1.mlp.fc12.weight", "blk.1.ffn_gate.weight", 0);
	expect_name(&c, "emb_ln.bias", "token_embd_norm.bias", 0);
	const char *eg = "{\"model_type\":\"gemma3_text\",\"architectures\":[\"Gemma3TextModel\"],"
			 "\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4}";
	assert_int_equal(q42_hf_config_parse(&c, eg, strlen(eg), &err), Q42_OK);
	assert_string_equal(c.hp.arch, "gemma-embedding");
	assert_int_equal(c.hp.non_causal, 0);
	expect_name(&c, "layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight", 0);
	expect_name(&c, "norm.weight", "output_norm.weight", Q42_HF_X_ADD_ONE);
	c.n_dense = 2;
	snprintf(c.dense_dir[0], sizeof c.dense_dir[0], "2_Dense");
	snprintf(c.dense_dir[1], sizeof c.dense_dir[1], "3_Dense");
	expect_name(&c, "3_Dense/linear.weight", "dense_3.weight", 0);
	expect_name(&c, "2_Dense/linear.weight", "dense_2.weight", 0);
	expect_name(&c, "2_Dense/linear.bias", NULL, 0);
	expect_name(&c, "4_Dense/linear.weight", NULL, 0);
	const char *lfm = "{\"model_type\":\"lfm2\",\"architectures\":[\"Lfm2BidirectionalModel\"],"
			  "\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4}";
	assert_int_equal(q42_hf_config_parse(&c, lfm, strlen(lfm), &err), Q42_OK);
	assert_int_equal(c.hp.non_causal, 1);
	expect_name(&c, "embedding_norm.weight", "token_embd_norm.weight", 0);

	q42_hf_vocab v;
	const char *wp = "{\"added_tokens\":[{\"id\":0,\"content\":\"[UNK]\",\"special\":true}],"
			 "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\","
			 "\"vocab\":{\"[UNK]\":0,\"play\":1,\"##ing\":2,\"[unused0]\":3}}}";
	const char *cfg = "{\"sep_token\":\"[UNK]\"}";
	assert_int_equal(q42_hf_vocab_parse(&v, wp, strlen(wp), cfg, strlen(cfg), NULL, &err), Q42_OK);
	assert_true(q42_str_eq(v.v.model, "bert"));
	assert_true(q42_str_eq(v.v.tokens[1], "\xe2\x96\x81play"));
	assert_true(q42_str_eq(v.v.tokens[2], "ing"));
	assert_true(q42_str_eq(v.v.tokens[3], "[unused0]"));
	assert_int_equal(v.v.unk, 0);
	assert_int_equal(v.v.sep, 0);
	assert_int_equal(v.v.types[0], Q42_TOK_CONTROL);
	q42_hf_vocab_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_config_rope),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_permute),
		cmocka_unit_test(test_vocab),
		cmocka_unit_test(test_vocab_unigram),
		cmocka_unit_test(test_encoders),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
