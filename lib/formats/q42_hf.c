/* q42_hf.c -- config.json, tokenizer.json and HF tensor names as q42's
 * model description (see q42_hf.h; the mapping tables are in p64c(1)).
 *
 * The facts behind the tables (which HF name is which GGUF tensor, the
 * llama q/k row order, gemma's 1 + w norms, lfm2's per-layer key/value
 * heads) come from reading llama.cpp's converter; nothing is copied from
 * it. JSON is parsed with jansson; every number is range-checked before it
 * lands in a q42_hparams field. Never prints.
 */
#include <jansson.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/q42_hf.h"

static bool num_u32(const json_t *o, const char *key, uint32_t *out)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX)
		return false;
	*out = (uint32_t)json_integer_value(v);
	return true;
}

static bool num_f32(const json_t *o, const char *key, float *out)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return false;
	*out = (float)json_number_value(v);
	return true;
}

/* The first of keys (NULL-terminated) the object has as a u32. */
static bool num_u32_of(const json_t *o, const char *const *keys, uint32_t *out)
{
	for (; *keys != NULL; keys++)
		if (num_u32(o, *keys, out))
			return true;
	return false;
}

static int32_t first_id(const json_t *v)
{
	if (json_is_array(v))
		v = json_array_get(v, 0);
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
		return -1;
	return (int32_t)json_integer_value(v);
}

/* phi3's rotation, as llama.cpp's converter derives it (Phi3MiniModel):
 * n_rot = int(partial_rotary_factor * n_embd) / n_head; the original
 * context; with long_factor in rope_scaling, both factor lists (n_rot/2
 * each) and the attention factor, sqrt(1 + ln(s) / ln(orig)) for
 * longrope ("su"), 0.1 ln(s) + 1 for yarn, 1 when s = context /
 * orig <= 1. o: the config's numbers; rs: rope_scaling; rt: its type. */
static int phi3_rope(q42_hf_config *c, const json_t *o, const json_t *rs, const char *rt,
		     q42_err *err)
{
	q42_hparams *hp = &c->hp;
	double pct = 1.0;
	const json_t *pv = json_object_get(rs, "partial_rotary_factor");
	if (!json_is_number(pv))
		pv = json_object_get(o, "partial_rotary_factor");
	if (json_is_number(pv))
		pct = json_number_value(pv);
	const double rot = floor(pct * (double)hp->n_embd) / (double)hp->n_head;
	if (!(pct > 0.0 && pct <= 1.0) || rot < 2.0) {
		return q42_err_set(err, Q42_EFORMAT,
				   "config.json: partial_rotary_factor %g: expected 0 < f <= 1 and 2 or more "
				   "rotated dimensions", pct);
	}
	hp->n_rot = (uint32_t)rot;
	if (!num_u32(rs, "original_max_position_embeddings", &hp->n_ctx_orig))
		num_u32(o, "original_max_position_embeddings", &hp->n_ctx_orig);
	const json_t *lf = json_object_get(rs, "long_factor"), *sf = json_object_get(rs, "short_factor");
	if (lf == NULL || (json_is_array(lf) && json_array_size(lf) == 0))
		return Q42_OK;
	const bool longrope = rt != NULL && (strcmp(rt, "longrope") == 0 || strcmp(rt, "su") == 0);
	if (rt == NULL || (!longrope && strcmp(rt, "yarn") != 0)) {
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "config.json: rope_scaling type \"%s\": expected longrope, su or yarn "
				   "beside long_factor", rt != NULL ? rt : "");
	}
	const size_t n = hp->n_rot / 2;
	if (!json_is_array(lf) || !json_is_array(sf) || json_array_size(lf) != n ||
	    json_array_size(sf) != n || n > Q42_HF_ROPE_FACTORS_MAX || hp->n_ctx_orig == 0) {
		return q42_err_set(err, Q42_EFORMAT,
				   "config.json: rope_scaling: long_factor and short_factor must hold %zu "
				   "numbers each (rope dimensions / 2) beside "
				   "original_max_position_embeddings", n);
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *a = json_array_get(lf, i), *b = json_array_get(sf, i);
		if (!json_is_number(a) || !json_is_number(b)) {
			return q42_err_set(err, Q42_EFORMAT,
					   "config.json: rope_scaling: factor %zu is not a number", i);
		}
		c->rope_long[i] = (float)json_number_value(a);
		c->rope_short[i] = (float)json_number_value(b);
	}
	c->n_rope_factors = (uint32_t)n;
	const double scale = (double)hp->n_ctx_train / (double)hp->n_ctx_orig;
	double af = 1.0;
	if (scale > 1.0)
		af = longrope ? sqrt(1.0 + log(scale) / log((double)hp->n_ctx_orig)) : 0.1 * log(scale) + 1.0;
	hp->rope_attn_factor = (float)af;
	return Q42_OK;
}

int q42_hf_config_parse(q42_hf_config *c, const char *text, size_t len, q42_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je), *o;
	const char *mt;
	q42_hparams *hp = &c->hp;
	int rc = Q42_OK;

	memset(c, 0, sizeof *c);
	if (root == NULL)
		return q42_err_set(err, Q42_EFORMAT, "config.json: offset %d: %s", je.position, je.text);
	/* multimodal gemma3 keeps the language model's numbers in text_config */
	o = json_is_object(json_object_get(root, "text_config")) ? json_object_get(root, "text_config")
								 : root;
	mt = json_string_value(json_object_get(root, "model_type"));
	if (mt == NULL) {
		rc = q42_err_set(err, Q42_EFORMAT, "config.json: model_type: expected a string");
		goto done;
	}
	static const struct {
		const char *mt, *arch;
		uint32_t fam;
	} fams[] = {
		{"llama", "llama", Q42_HF_LLAMA},    {"mistral", "llama", Q42_HF_LLAMA},
		{"qwen2", "qwen2", Q42_HF_QWEN2},    {"qwen3", "qwen3", Q42_HF_QWEN3},
		{"gemma", "gemma", Q42_HF_GEMMA},    {"gemma2", "gemma2", Q42_HF_GEMMA},
		{"gemma3", "gemma3", Q42_HF_GEMMA},  {"gemma3_text", "gemma3", Q42_HF_GEMMA},
		{"lfm2", "lfm2", Q42_HF_LFM2},       {"lfm2_moe", "lfm2moe", Q42_HF_LFM2MOE},
		{"phi3", "phi3", Q42_HF_PHI3},       {"bert", "bert", Q42_HF_BERT},
		{"nomic_bert", "nomic-bert", Q42_HF_NOMIC_BERT},
	};
	for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
		if (strcmp(mt, fams[i].mt) == 0) {
			c->family = fams[i].fam;
			snprintf(hp->arch, sizeof hp->arch, "%s", fams[i].arch);
		}
	if (c->family == 0) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "config.json: model_type \"%s\": expected one of llama, mistral, "
				 "qwen2, qwen3, gemma, gemma2, gemma3, gemma3_text, lfm2, lfm2_moe, phi3, "
				 "bert, nomic_bert", mt);
		goto done;
	}
	/* the encoders among them, by the class llama.cpp's converter keys on */
	const char *a0 = json_string_value(json_array_get(json_object_get(root, "architectures"), 0));
	if (c->family == Q42_HF_GEMMA && a0 != NULL && strcmp(a0, "Gemma3TextModel") == 0)
		snprintf(hp->arch, sizeof hp->arch, "gemma-embedding");
	if (c->family == Q42_HF_BERT || c->family == Q42_HF_NOMIC_BERT ||
	    json_is_false(json_object_get(o, "is_causal")) ||
	    (a0 != NULL && strcmp(a0, "Lfm2BidirectionalModel") == 0))
		hp->non_causal = 1;
	/* nomic_bert names its sizes as GPT-2 does */
	if (!num_u32_of(o, (const char *const[]){"hidden_size", "n_embd", NULL}, &hp->n_embd) ||
	    !num_u32_of(o, (const char *const[]){"num_hidden_layers", "n_layer", NULL}, &hp->n_layer) ||
	    !num_u32_of(o, (const char *const[]){"num_attention_heads", "n_head", NULL}, &hp->n_head) ||
	    hp->n_head == 0 || hp->n_embd == 0 ||
	    hp->n_layer == 0 || hp->n_layer > Q42_MAX_LAYERS) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "config.json: hidden_size, num_hidden_layers (1..%u) and "
				 "num_attention_heads: expected positive integers", Q42_MAX_LAYERS);
		goto done;
	}
	c->n_head_kv = hp->n_head;
	num_u32(o, "num_key_value_heads", &c->n_head_kv);
	uint32_t ff = 0;
	num_u32_of(o, (const char *const[]){"intermediate_size", "block_ff_dim", "n_inner", NULL}, &ff);
	const json_t *lt = json_object_get(o, "layer_types");
	for (uint32_t l = 0; l < hp->n_layer; l++) {
		hp->n_ff[l] = ff;
		hp->n_head_kv[l] = c->n_head_kv;
		/* lfm2: convolution layers have no attention */
		const char *t = json_string_value(json_array_get(lt, l));
		if ((c->family == Q42_HF_LFM2 || c->family == Q42_HF_LFM2MOE) && t != NULL &&
		    strcmp(t, "conv") == 0)
			hp->n_head_kv[l] = 0;
	}
	if (num_u32(o, "head_dim", &hp->head_dim_k))
		hp->head_dim_v = hp->head_dim_k;
	/* as llama.cpp's GGUF says it: no rope dimensions for bert (no
	 * rotation), nomic_bert and gemma (all of the head: 0) */
	if (c->family != Q42_HF_BERT && c->family != Q42_HF_NOMIC_BERT && c->family != Q42_HF_GEMMA)
		hp->n_rot = hp->head_dim_k ? hp->head_dim_k : hp->n_embd / hp->n_head;
	num_u32_of(o, (const char *const[]){"max_position_embeddings", "n_positions", NULL},
		   &hp->n_ctx_train);
	/* nomic-embed-text: trained for fewer positions than it has */
	uint32_t trained = 0;
	if (num_u32(o, "max_trained_positions", &trained) && trained < hp->n_ctx_train)
		hp->n_ctx_train = trained;
	num_u32(o, "vocab_size", &hp->n_vocab);
	if (!num_f32(o, "rope_theta", &hp->rope_freq_base))
		num_f32(o, "rotary_emb_base", &hp->rope_freq_base);
	if (!num_f32(o, "layer_norm_eps", &hp->norm_eps))
		num_f32(o, "layer_norm_epsilon", &hp->norm_eps);
	hp->rope_freq_scale = 1.0f;
	const json_t *rs = json_object_get(o, "rope_scaling");
	const char *rt = json_string_value(json_object_get(rs, "rope_type"));
	if (rt == NULL)
		rt = json_string_value(json_object_get(rs, "type"));
	float factor;
	if (rt != NULL && strcmp(rt, "linear") == 0 && num_f32(rs, "factor", &factor) && factor > 0)
		hp->rope_freq_scale = 1.0f / factor;
	if (c->family == Q42_HF_PHI3) {
		if ((rc = phi3_rope(c, o, rs, rt, err)) != Q42_OK)
			goto done;
	} else if (rt != NULL && strcmp(rt, "linear") != 0 && strcmp(rt, "default") != 0) {
		/* llama.cpp's converter turns these into YaRN keys or rope_freqs,
		 * which this reader does not make */
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "config.json: rope_scaling type \"%s\": only linear scaling is supported", rt);
		goto done;
	}
	if (!num_f32(o, "rms_norm_eps", &hp->norm_rms_eps))
		num_f32(o, "norm_eps", &hp->norm_rms_eps);
	num_u32(o, "sliding_window", &hp->sliding_window);
	num_u32(o, "sliding_window_pattern", &hp->swa_pattern);
	num_f32(o, "rope_local_base_freq", &hp->rope_freq_base_swa);
	num_f32(o, "attn_logit_softcapping", &hp->attn_softcap);
	num_f32(o, "final_logit_softcapping", &hp->final_softcap);
	num_u32(o, "conv_L_cache", &hp->conv_l_cache);
	if (c->family == Q42_HF_LFM2MOE) {
		/* llama.cpp's converter: sigmoid gating, whatever the config says */
		num_u32(o, "num_experts", &hp->n_expert);
		num_u32(o, "num_experts_per_tok", &hp->n_expert_used);
		num_u32(o, "moe_intermediate_size", &hp->n_ff_exp);
		num_u32(o, "num_dense_layers", &hp->n_dense_lead);
		hp->expert_gating = 2;
	}
	c->bos_id = first_id(json_object_get(root, "bos_token_id"));
	c->eos_id = first_id(json_object_get(root, "eos_token_id"));
done:
	json_decref(root);
	return rc;
}

/* ---- tensor names ------------------------------------------------------------ */

typedef struct name_rule {
	const char *hf, *gguf;
	uint32_t families; /* bit per family; 0 = all */
	uint32_t xform;
} name_rule;

#define F(x) (1u << (x))
#define LFM2S (F(Q42_HF_LFM2) | F(Q42_HF_LFM2MOE))

static const name_rule layer_rules[] = {
	{"input_layernorm.weight", "attn_norm.weight", 0, 0},
	{"self_attn.q_proj.weight", "attn_q.weight", 0, 0},
	{"self_attn.k_proj.weight", "attn_k.weight", 0, 0},
	{"self_attn.v_proj.weight", "attn_v.weight", 0, 0},
	{"self_attn.o_proj.weight", "attn_output.weight", 0, 0},
	{"self_attn.q_proj.bias", "attn_q.bias", 0, 0},
	{"self_attn.k_proj.bias", "attn_k.bias", 0, 0},
	{"self_attn.v_proj.bias", "attn_v.bias", 0, 0},
	{"self_attn.o_proj.bias", "attn_output.bias", 0, 0},
	{"self_attn.q_norm.weight", "attn_q_norm.weight", 0, 0},
	{"self_attn.k_norm.weight", "attn_k_norm.weight", 0, 0},
	{"pre_feedforward_layernorm.weight", "ffn_norm.weight", F(Q42_HF_GEMMA), 0},
	{"post_feedforward_layernorm.weight", "post_ffw_norm.weight", F(Q42_HF_GEMMA), 0},
	{"mlp.gate_proj.weight", "ffn_gate.weight", 0, 0},
	{"mlp.up_proj.weight", "ffn_up.weight", 0, 0},
	{"mlp.down_proj.weight", "ffn_down.weight", 0, 0},
	{"operator_norm.weight", "attn_norm.weight", LFM2S, 0},
	{"ffn_norm.weight", "ffn_norm.weight", LFM2S, 0},
	{"conv.conv.weight", "shortconv.conv.weight", LFM2S, Q42_HF_X_SQUEEZE},
	{"conv.in_proj.weight", "shortconv.in_proj.weight", LFM2S, 0},
	{"conv.out_proj.weight", "shortconv.out_proj.weight", LFM2S, 0},
	{"self_attn.out_proj.weight", "attn_output.weight", LFM2S, 0},
	{"self_attn.q_layernorm.weight", "attn_q_norm.weight", LFM2S, 0},
	{"self_attn.k_layernorm.weight", "attn_k_norm.weight", LFM2S, 0},
	{"feed_forward.w1.weight", "ffn_gate.weight", LFM2S, 0},
	{"feed_forward.w3.weight", "ffn_up.weight", LFM2S, 0},
	{"feed_forward.w2.weight", "ffn_down.weight", LFM2S, 0},
	{"feed_forward.gate.weight", "ffn_gate_inp.weight", F(Q42_HF_LFM2MOE), 0},
	{"feed_forward.expert_bias", "exp_probs_b.bias", F(Q42_HF_LFM2MOE), 0},
	{"self_attn.qkv_proj.weight", "attn_qkv.weight", F(Q42_HF_PHI3), 0},
	{"mlp.gate_up_proj.weight", "ffn_up.weight", F(Q42_HF_PHI3), 0},
};

static const name_rule global_rules[] = {
	{"model.embed_tokens.weight", "token_embd.weight", 0, 0},
	{"model.norm.weight", "output_norm.weight", 0, 0},
	{"lm_head.weight", "output.weight", 0, 0},
	{"model.embedding_norm.weight", "token_embd_norm.weight", LFM2S, 0},
};

/* bert (encoder.layer.N.) and nomic_bert (encoder.layers.N.), after an
 * optional "bert." */
#define BERT F(Q42_HF_BERT)
#define NOMIC F(Q42_HF_NOMIC_BERT)
static const name_rule bert_layer_rules[] = {
	{"attention.self.query.weight", "attn_q.weight", BERT, 0},
	{"attention.self.query.bias", "attn_q.bias", BERT, 0},
	{"attention.self.key.weight", "attn_k.weight", BERT, 0},
	{"attention.self.key.bias", "attn_k.bias", BERT, 0},
	{"attention.self.value.weight", "attn_v.weight", BERT, 0},
	{"attention.self.value.bias", "attn_v.bias", BERT, 0},
	{"attention.output.dense.weight", "attn_output.weight", BERT, 0},
	{"attention.output.dense.bias", "attn_output.bias", BERT, 0},
	{"attention.output.LayerNorm.weight", "attn_output_norm.weight", BERT, 0},
	{"attention.output.LayerNorm.bias", "attn_output_norm.bias", BERT, 0},
	{"intermediate.dense.weight", "ffn_up.weight", BERT, 0},
	{"intermediate.dense.bias", "ffn_up.bias", BERT, 0},
	{"output.dense.weight", "ffn_down.weight", BERT, 0},
	{"output.dense.bias", "ffn_down.bias", BERT, 0},
	{"output.LayerNorm.weight", "layer_output_norm.weight", BERT, 0},
	{"output.LayerNorm.bias", "layer_output_norm.bias", BERT, 0},
	{"attn.Wqkv.weight", "attn_qkv.weight", NOMIC, 0},
	{"attn.out_proj.weight", "attn_output.weight", NOMIC, 0},
	{"norm1.weight", "attn_output_norm.weight", NOMIC, 0},
	{"norm1.bias", "attn_output_norm.bias", NOMIC, 0},
	{"mlp.fc11.weight", "ffn_up.weight", NOMIC, 0},
	{"mlp.fc12.weight", "ffn_gate.weight", NOMIC, 0},
	{"mlp.fc2.weight", "ffn_down.weight", NOMIC, 0},
	{"norm2.weight", "layer_output_norm.weight", NOMIC, 0},
	{"norm2.bias", "layer_output_norm.bias", NOMIC, 0},
};

static const name_rule bert_global_rules[] = {
	{"embeddings.word_embeddings.weight", "token_embd.weight", BERT | NOMIC, 0},
	{"embeddings.token_type_embeddings.weight", "token_types.weight", BERT | NOMIC, 0},
	{"embeddings.position_embeddings.weight", "position_embd.weight", BERT, 0},
	{"embeddings.LayerNorm.weight", "token_embd_norm.weight", BERT, 0},
	{"embeddings.LayerNorm.bias", "token_embd_norm.bias", BERT, 0},
	{"emb_ln.weight", "token_embd_norm.weight", NOMIC, 0},
	{"emb_ln.bias", "token_embd_norm.bias", NOMIC, 0},
};

static bool rule_applies(const name_rule *r, uint32_t family)
{
	return r->families == 0 || (r->families & F(family)) != 0;
}

/* A sentence-transformers Dense module's weight, DIR/linear.weight:
 * dense_2 for the first Dense folder, dense_3 for the second. */
static const char *dense_name(const q42_hf_config *c, const char *name)
{
	const char *slash = strchr(name, '/');
	if (slash == NULL || strcmp(slash + 1, "linear.weight") != 0)
		return NULL;
	for (uint32_t i = 0; i < c->n_dense; i++)
		if (strlen(c->dense_dir[i]) == (size_t)(slash - name) &&
		    memcmp(c->dense_dir[i], name, (size_t)(slash - name)) == 0)
			return i == 0 ? "dense_2.weight" : "dense_3.weight";
	return NULL;
}

static const char *table_name(const name_rule *rules, size_t n, uint32_t family, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (rule_applies(&rules[i], family) && strcmp(name, rules[i].hf) == 0)
			return rules[i].gguf;
	return NULL;
}

static bool bert_name(const q42_hf_config *c, const char *name, char *out, size_t cap)
{
	const char *gguf, *pre = c->family == Q42_HF_BERT ? "encoder.layer." : "encoder.layers.";
	size_t pl = strlen(pre);
	char *end;
	int n;
	if (strncmp(name, "bert.", 5) == 0)
		name += 5;
	gguf = table_name(bert_global_rules, sizeof bert_global_rules / sizeof bert_global_rules[0],
			  c->family, name);
	if (gguf != NULL) {
		n = snprintf(out, cap, "%s", gguf);
		return n > 0 && (size_t)n < cap;
	}
	if (strncmp(name, pre, pl) != 0 || name[pl] < '0' || name[pl] > '9' ||
	    (name[pl] == '0' && name[pl + 1] != '.'))
		return false;
	unsigned long layer = strtoul(name + pl, &end, 10);
	if (*end != '.' || layer >= Q42_MAX_LAYERS)
		return false;
	gguf = table_name(bert_layer_rules, sizeof bert_layer_rules / sizeof bert_layer_rules[0],
			  c->family, end + 1);
	if (gguf == NULL)
		return false;
	n = snprintf(out, cap, "blk.%lu.%s", layer, gguf);
	return n > 0 && (size_t)n < cap;
}

bool q42_hf_tensor_name(const q42_hf_config *c, const char *name, char *out, size_t cap,
			uint32_t *xform)
{
	char norm[512];
	const char *gguf = NULL;
	bool gemma2plus = c->family == Q42_HF_GEMMA && strcmp(c->hp.arch, "gemma") != 0;
	char lbuf[16] = "";
	int n;

	*xform = Q42_HF_X_NONE;
	const char *dense = dense_name(c, name);
	if (dense != NULL) {
		n = snprintf(out, cap, "%s", dense);
		return n > 0 && (size_t)n < cap;
	}
	if (strchr(name, '/') != NULL)
		return false;
	if (c->family == Q42_HF_BERT || c->family == Q42_HF_NOMIC_BERT)
		return bert_name(c, name, out, cap);
	/* multimodal checkpoints nest the language model one level down;
	 * the base models of embedding checkpoints (Gemma3TextModel,
	 * Lfm2Model) name theirs without "model." */
	if (strncmp(name, "language_model.", 15) == 0) {
		name += 15;
	} else if (strncmp(name, "model.language_model.", 21) == 0) {
		if (snprintf(norm, sizeof norm, "model.%s", name + 21) >= (int)sizeof norm)
			return false;
		name = norm;
	}
	if (strncmp(name, "model.", 6) != 0 && strcmp(name, "lm_head.weight") != 0) {
		if (snprintf(norm, sizeof norm, "model.%s", name) >= (int)sizeof norm)
			return false;
		name = norm;
	}
	for (size_t i = 0; i < sizeof global_rules / sizeof global_rules[0]; i++)
		if (rule_applies(&global_rules[i], c->family) && strcmp(name, global_rules[i].hf) == 0) {
			gguf = global_rules[i].gguf;
			*xform = global_rules[i].xform;
		}
	const char *rest = NULL;
	unsigned long layer = 0;
	if (gguf == NULL && strncmp(name, "model.layers.", 13) == 0) {
		char *end;
		const char *d = name + 13;
		if (*d < '0' || *d > '9' || (d[0] == '0' && d[1] != '.'))
			return false;
		layer = strtoul(d, &end, 10);
		if (*end != '.' || layer >= Q42_MAX_LAYERS)
			return false;
		rest = end + 1;
		/* llama: post_attention_layernorm is the FFN norm; gemma2/3 have
		 * a separate norm after attention. */
		if (strcmp(rest, "post_attention_layernorm.weight") == 0)
			gguf = gemma2plus ? "post_attention_norm.weight" : "ffn_norm.weight";
		for (size_t i = 0; gguf == NULL && i < sizeof layer_rules / sizeof layer_rules[0]; i++)
			if (rule_applies(&layer_rules[i], c->family) && strcmp(rest, layer_rules[i].hf) == 0) {
				gguf = layer_rules[i].gguf;
				*xform = layer_rules[i].xform;
			}
		snprintf(lbuf, sizeof lbuf, "blk.%lu.", layer);
	}
	if (gguf == NULL)
		return false;
	if (c->family == Q42_HF_LLAMA && strcmp(gguf, "attn_q.weight") == 0)
		*xform = Q42_HF_X_PERMUTE_Q;
	if (c->family == Q42_HF_LLAMA && strcmp(gguf, "attn_k.weight") == 0)
		*xform = Q42_HF_X_PERMUTE_K;
	if (c->family == Q42_HF_GEMMA) {
		size_t gl = strlen(gguf);
		if (gl >= 11 && strcmp(gguf + gl - 11, "norm.weight") == 0)
			*xform = Q42_HF_X_ADD_ONE;
	}
	n = snprintf(out, cap, "%s%s", lbuf, gguf);
	return n > 0 && (size_t)n < cap;
}

bool q42_hf_expert_piece(const q42_hf_config *c, const char *name, char *out, size_t cap,
			 uint32_t *expert)
{
	static const char *const stacks[] = {"ffn_gate_exps", "ffn_down_exps", "ffn_up_exps"};
	unsigned long layer, x;
	char *end;
	int n;
	if (c->family != Q42_HF_LFM2MOE || strncmp(name, "model.layers.", 13) != 0)
		return false;
	const char *d = name + 13;
	if (*d < '0' || *d > '9')
		return false;
	layer = strtoul(d, &end, 10);
	if (layer >= Q42_MAX_LAYERS || strncmp(end, ".feed_forward.experts.", 22) != 0)
		return false;
	d = end + 22;
	if (*d < '0' || *d > '9')
		return false;
	x = strtoul(d, &end, 10);
	/* w1 gate, w2 down, w3 up */
	if (x > UINT32_MAX || end[0] != '.' || end[1] != 'w' || end[2] < '1' || end[2] > '3' ||
	    strcmp(end + 3, ".weight") != 0)
		return false;
	*expert = (uint32_t)x;
	n = snprintf(out, cap, "blk.%lu.%s.weight", layer, stacks[end[2] - '1']);
	return n > 0 && (size_t)n < cap;
}

int q42_hf_permute_rows(void *rows, void *scratch, uint64_t n_rows, uint64_t row_bytes,
			uint32_t n_head, q42_err *err)
{
	uint8_t *in = rows, *out = scratch;
	if (n_head == 0 || n_rows % ((uint64_t)n_head * 2) != 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "%llu rows do not split into %u heads of an even size",
				   (unsigned long long)n_rows, n_head);
	/* HF row h*hd + s*hd/2 + i (half s, pair i) is GGUF row h*hd + 2i + s */
	const uint64_t hd = n_rows / n_head, half = hd / 2;
	for (uint64_t h = 0; h < n_head; h++)
		for (uint64_t s = 0; s < 2; s++)
			for (uint64_t i = 0; i < half; i++)
				memcpy(out + (h * hd + 2 * i + s) * row_bytes,
				       in + (h * hd + s * half + i) * row_bytes, (size_t)row_bytes);
	memcpy(in, out, (size_t)(n_rows * row_bytes));
	return Q42_OK;
}

/* ---- sentence-transformers modules -------------------------------------------- */

static const q42_st_text *module_config(const q42_st_model *m, const char *dir)
{
	for (uint32_t i = 0; i < m->n_modules; i++)
		if (strcmp(m->modules[i].dir, dir) == 0 && m->modules[i].config.data != NULL)
			return &m->modules[i].config;
	return NULL;
}

static bool has_file(const q42_st_model *m, const char *dir)
{
	size_t n = strlen(dir);
	for (uint32_t i = 0; i < m->n_files; i++)
		if (strncmp(m->files[i].name, dir, n) == 0 && m->files[i].name[n] == '/')
			return true;
	return false;
}

/* Pooling's config.json: the mode flags llama.cpp's converter reads, in
 * its order, or "pooling_mode". */
static int pooling_of(q42_hf_config *c, const json_t *p, const char *dir, q42_err *err)
{
	static const struct {
		const char *flag, *mode;
		uint32_t type; /* llama.cpp's pooling_type */
	} modes[] = {{"pooling_mode_mean_tokens", "mean", 1},
		     {"pooling_mode_cls_token", "cls", 2},
		     {"pooling_mode_lasttoken", "lasttoken", 3}};
	const char *mode = json_string_value(json_object_get(p, "pooling_mode"));
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (json_is_true(json_object_get(p, modes[i].flag)) ||
		    (mode != NULL && strcmp(mode, modes[i].mode) == 0)) {
			if (json_is_false(json_object_get(p, "include_prompt")))
				return q42_err_set(err, Q42_EUNSUPPORTED,
						   "%s/config.json: include_prompt false: q42 pools "
						   "every token of the input", dir);
			c->hp.pooling = modes[i].type + 1;
			return Q42_OK;
		}
	return q42_err_set(err, Q42_EUNSUPPORTED,
			   "%s/config.json: pooling mode: q42 runs mean, cls and lasttoken "
			   "(pooling_mode_mean_tokens, pooling_mode_cls_token, pooling_mode_lasttoken)",
			   dir);
}

/* A Dense module's config.json: a plain linear map llama.cpp's converter
 * keeps (it drops biases, and runs no activation). */
static int dense_of(q42_hf_config *c, const json_t *d, const char *dir, q42_err *err)
{
	uint32_t in = 0, out = 0;
	const char *act = json_string_value(json_object_get(d, "activation_function"));
	if (!num_u32(d, "in_features", &in) || !num_u32(d, "out_features", &out) || in == 0 ||
	    out == 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s/config.json: in_features and out_features: expected positive "
				   "integers", dir);
	if (act == NULL || strcmp(act, "torch.nn.modules.linear.Identity") != 0)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "%s/config.json: activation_function \"%s\": q42 runs Dense modules "
				   "with torch.nn.modules.linear.Identity only", dir,
				   act != NULL ? act : "(absent: sentence-transformers' Tanh)");
	if (json_is_true(json_object_get(d, "bias")) || json_is_true(json_object_get(d, "use_residual")))
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "%s/config.json: %s true: q42 runs Dense modules without one", dir,
				   json_is_true(json_object_get(d, "bias")) ? "bias" : "use_residual");
	if (c->n_dense >= Q42_HF_DENSE_MAX)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "modules.json: Dense module %s: q42 runs at most %u (dense_2, dense_3)",
				   dir, Q42_HF_DENSE_MAX);
	if (c->n_dense == 0)
		c->hp.n_dense_2 = out;
	snprintf(c->dense_dir[c->n_dense++], sizeof c->dense_dir[0], "%s", dir);
	return Q42_OK;
}

/* pylate's settings in config_sentence_transformers.json (query_prefix,
 * document_prefix, query_length, document_length,
 * attend_to_expansion_tokens, skiplist_words) into c->hp's ColBERT fields. */
static int colbert_of(q42_hf_config *c, const q42_st_text *t, q42_err *err)
{
	static const char *const pk[2] = {"query_prefix", "document_prefix"};
	static const char *const lk[2] = {"query_length", "document_length"};
	json_error_t je;
	json_t *root = json_loadb(t->data, t->len, 0, &je);
	const json_t *v;
	const char *bad = NULL;
	if (root == NULL)
		return q42_err_set(err, Q42_EFORMAT, "config_sentence_transformers.json: offset %d: %s",
				   je.position, je.text);
	for (int i = 0; i < 2 && bad == NULL; i++) {
		if ((v = json_object_get(root, pk[i])) != NULL && !json_is_null(v) &&
		    (!json_is_string(v) ||
		     !q42_colbert_set_prefix(&c->hp, i == 1, json_string_value(v), json_string_length(v))))
			bad = pk[i];
		uint32_t *len = i == 0 ? &c->hp.cb_query_len : &c->hp.cb_doc_len;
		if ((v = json_object_get(root, lk[i])) != NULL && !json_is_null(v) &&
		    (!num_u32(root, lk[i], len) || *len == 0))
			bad = lk[i];
	}
	v = json_object_get(root, "attend_to_expansion_tokens");
	if (json_is_boolean(v))
		c->hp.cb_flags |= Q42_COLBERT_ATTEND_SET | (json_is_true(v) ? Q42_COLBERT_ATTEND : 0u);
	else if (v != NULL && !json_is_null(v))
		bad = "attend_to_expansion_tokens";
	v = json_object_get(root, "skiplist_words");
	if (json_is_array(v))
		c->hp.cb_flags |= Q42_COLBERT_SKIPLIST;
	else if (v != NULL && !json_is_null(v))
		bad = "skiplist_words";
	for (size_t i = 0; bad == NULL && i < json_array_size(v); i++) {
		const json_t *w = json_array_get(v, i);
		if (!json_is_string(w) ||
		    !q42_colbert_add_word(&c->hp, json_string_value(w), json_string_length(w)))
			bad = "skiplist_words";
	}
	json_decref(root);
	if (bad != NULL)
		return q42_err_set(err, Q42_EFORMAT,
				   "config_sentence_transformers.json: %s: expected %s", bad,
				   strstr(bad, "prefix") ? "a string of at most 63 bytes without NUL"
				   : strstr(bad, "length") ? "a positive integer"
				   : strstr(bad, "attend") ? "a boolean"
							    : "an array of non-empty strings, 1024 bytes in all");
	return Q42_OK;
}

int q42_hf_modules_parse(q42_hf_config *c, const q42_st_model *m, q42_err *err)
{
	json_error_t je;
	json_t *root, *cfg = NULL;
	int rc = Q42_OK;
	if (m->st_config.data != NULL && (rc = colbert_of(c, &m->st_config, err)) != Q42_OK)
		return rc;
	if (m->modules_json.data == NULL)
		return Q42_OK;
	root = json_loadb(m->modules_json.data, m->modules_json.len, 0, &je);
	if (root == NULL)
		return q42_err_set(err, Q42_EFORMAT, "modules.json: offset %d: %s", je.position,
				   je.text);
	for (size_t i = 0; rc == Q42_OK && i < json_array_size(root); i++) {
		const json_t *mod = json_array_get(root, i);
		const char *type = json_string_value(json_object_get(mod, "type"));
		const char *dir = json_string_value(json_object_get(mod, "path"));
		const char *kind = type != NULL ? strrchr(type, '.') : NULL;
		kind = kind != NULL ? kind + 1 : type;
		if (kind == NULL || dir == NULL) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "modules.json: module %zu: expected \"path\" and \"type\" strings", i);
			break;
		}
		if (strcmp(kind, "Normalize") == 0 || (strcmp(kind, "Transformer") == 0 && dir[0] == '\0'))
			continue;
		if (strcmp(kind, "Pooling") != 0 && strcmp(kind, "Dense") != 0) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED,
					 "modules.json: module %zu: type \"%s\"%s: q42 runs Transformer "
					 "(the model's own folder), Pooling, Dense and Normalize modules",
					 i, type, dir[0] ? "" : " in the model's folder");
			break;
		}
		const q42_st_text *t = module_config(m, dir);
		if (t == NULL) {
			rc = q42_err_set(err, Q42_EFORMAT, "modules.json: module %zu: %s/config.json is "
					 "missing", i, dir);
			break;
		}
		cfg = json_loadb(t->data, t->len, 0, &je);
		if (cfg == NULL) {
			rc = q42_err_set(err, Q42_EFORMAT, "%s/config.json: offset %d: %s", dir,
					 je.position, je.text);
			break;
		}
		if (strcmp(kind, "Pooling") == 0)
			rc = pooling_of(c, cfg, dir, err);
		else if (!has_file(m, dir))
			rc = q42_err_set(err, Q42_EFORMAT, "modules.json: module %zu: "
					 "%s/model.safetensors is missing", i, dir);
		else
			rc = dense_of(c, cfg, dir, err);
		json_decref(cfg);
	}
	json_decref(root);
	return rc;
}

/* ---- tokenizer --------------------------------------------------------------- */

void q42_hf_vocab_free(q42_hf_vocab *v)
{
	q42_vocab_free(&v->v);
	json_decref((json_t *)v->json_);
	free(v->arena_);
	free(v->charsmap_);
	memset(v, 0, sizeof *v);
}

/* A special token given as "text" or {"content": "text"}. */
static const char *special_text(const json_t *cfg, const char *key)
{
	const json_t *v = json_object_get(cfg, key);
	if (json_is_object(v))
		v = json_object_get(v, "content");
	return json_string_value(v);
}

static int32_t find_token(const q42_vocab *v, const char *s)
{
	size_t n;
	if (s == NULL)
		return -1;
	n = strlen(s);
	for (uint32_t i = 0; i < v->n_tokens; i++)
		if (v->tokens[i].len == n && memcmp(v->tokens[i].p, s, n) == 0)
			return (int32_t)i;
	return -1;
}

static bool is_byte_token(q42_str t)
{
	static const char hex[] = "0123456789ABCDEF";
	return t.len == 6 && memcmp(t.p, "<0x", 3) == 0 && t.p[5] == '>' &&
	       strchr(hex, t.p[3]) != NULL && strchr(hex, t.p[4]) != NULL && t.p[3] && t.p[4];
}

/* The normalizer of the given type: the normalizer itself or one of its
 * Sequence's; NULL when there is none. */
static const json_t *find_normalizer(const json_t *root, const char *type)
{
	const json_t *norm = json_object_get(root, "normalizer");
	const json_t *list = json_object_get(norm, "normalizers");
	size_t n = json_is_array(list) ? json_array_size(list) : 1;
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_is_array(list) ? json_array_get(list, i) : norm;
		const char *t = json_string_value(json_object_get(x, "type"));
		if (t != NULL && strcmp(t, type) == 0)
			return x;
	}
	return NULL;
}

/* Unigram with SentencePiece's normalizer: the precompiled charsmap
 * (base64 in the Precompiled normalizer) becomes the vocabulary's
 * tokenizer.ggml.precompiled_charsmap, and HF's Replace of " {2,}"
 * (how its converter writes remove_extra_whitespaces) the flag. */
static int unigram_charsmap(q42_hf_vocab *out, const json_t *root, const json_t *pc, q42_err *err)
{
	const json_t *cm = json_object_get(pc, "precompiled_charsmap");
	const json_t *rp = find_normalizer(root, "Replace");
	const char *b64 = json_string_value(cm), *re;
	size_t len = json_string_length(cm), pad = 0;
	int n;

	if (b64 == NULL || len == 0 || len % 4 != 0 || len > (size_t)INT32_MAX)
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer.json: normalizer Precompiled: precompiled_charsmap: "
				   "expected a non-empty base64 string");
	out->charsmap_ = malloc(len / 4 * 3);
	if (out->charsmap_ == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory for the precompiled charsmap");
	n = EVP_DecodeBlock(out->charsmap_, (const unsigned char *)b64, (int)len);
	if (n < 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer.json: normalizer Precompiled: precompiled_charsmap is not "
				   "base64");
	/* EVP_DecodeBlock counts the bytes '=' padding stands for */
	while (pad < 2 && b64[len - 1 - pad] == '=')
		pad++;
	out->v.charsmap = (q42_str){(const char *)out->charsmap_, (uint64_t)n - pad};
	re = json_string_value(json_object_get(json_object_get(rp, "pattern"), "Regex"));
	out->v.remove_extra_whitespaces = (int8_t)(re != NULL && strcmp(re, " {2,}") == 0);
	return Q42_OK;
}

/* Does the tokenizer put "▁" before the text (SentencePiece style)? */
static bool prepends_space(const json_t *root)
{
	const json_t *pre = json_object_get(root, "pre_tokenizer");
	if (find_normalizer(root, "Prepend") != NULL)
		return true;
	const char *pt = json_string_value(json_object_get(pre, "type"));
	if (pt != NULL && strcmp(pt, "Metaspace") == 0) {
		const char *sch = json_string_value(json_object_get(pre, "prepend_scheme"));
		if (sch != NULL)
			return strcmp(sch, "never") != 0;
		return json_is_true(json_object_get(pre, "add_prefix_space"));
	}
	return false;
}

int q42_hf_vocab_parse(q42_hf_vocab *out, const char *tok_json, size_t tok_len,
		       const char *cfg_json, size_t cfg_len, const q42_hf_config *c, q42_err *err)
{
	json_error_t je;
	json_t *root, *cfg = NULL, *model, *vocab, *merges, *added;
	q42_vocab *v = &out->v;
	const char *type;
	bool spm, unigram, wordpiece;
	uint64_t n = 0, arena_len = 0, arena_pos = 0;
	int rc = Q42_OK;

	memset(out, 0, sizeof *out);
	root = json_loadb(tok_json, tok_len, 0, &je);
	if (root == NULL)
		return q42_err_set(err, Q42_EFORMAT, "tokenizer.json: offset %d: %s", je.position,
				   je.text);
	out->json_ = root;
	if (cfg_json != NULL) {
		cfg = json_loadb(cfg_json, cfg_len, 0, &je);
		if (cfg == NULL) {
			rc = q42_err_set(err, Q42_EFORMAT, "tokenizer_config.json: offset %d: %s",
					 je.position, je.text);
			goto fail;
		}
	}
	model = json_object_get(root, "model");
	vocab = json_object_get(model, "vocab");
	merges = json_object_get(model, "merges");
	added = json_object_get(root, "added_tokens");
	type = json_string_value(json_object_get(model, "type"));
	if (type == NULL && json_is_array(merges))
		type = "BPE";
	unigram = type != NULL && strcmp(type, "Unigram") == 0;
	wordpiece = type != NULL && strcmp(type, "WordPiece") == 0;
	if (type == NULL || (!unigram && !wordpiece && strcmp(type, "BPE") != 0) ||
	    (unigram && !json_is_array(vocab)) || (!unigram && !json_is_object(vocab))) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "tokenizer.json: model.type %s%s%s: expected Unigram (vocab array), "
				 "BPE or WordPiece (vocab object)", type ? "\"" : "",
				 type ? type : "(absent)", type ? "\"" : "");
		goto fail;
	}
	spm = unigram || json_is_true(json_object_get(model, "byte_fallback"));
	const json_t *precompiled = unigram ? find_normalizer(root, "Precompiled") : NULL;

	/* Number of ids: base vocabulary, added tokens, embedding rows. */
	n = unigram ? json_array_size(vocab) : 0;
	if (!unigram) {
		const char *k;
		json_t *id;
		json_object_foreach(vocab, k, id) if (json_is_integer(id) && json_integer_value(id) >= 0 &&
						      (uint64_t)json_integer_value(id) + 1 > n) n =
			(uint64_t)json_integer_value(id) + 1;
	}
	for (size_t i = 0; i < json_array_size(added); i++) {
		json_int_t id = json_integer_value(json_object_get(json_array_get(added, i), "id"));
		if (id >= 0 && (uint64_t)id + 1 > n)
			n = (uint64_t)id + 1;
	}
	uint64_t n_tok = n;
	if (c != NULL && c->hp.n_vocab > n)
		n = c->hp.n_vocab;
	if (n == 0 || n > (1u << 24)) {
		rc = q42_err_set(err, Q42_EFORMAT, "tokenizer.json: %llu tokens, expected 1..%u",
				 (unsigned long long)n, 1u << 24);
		goto fail;
	}
	v->n_tokens = (uint32_t)n;
	v->tokens = calloc(n, sizeof *v->tokens);
	v->types = calloc(n, sizeof *v->types);
	v->scores = spm ? calloc(n, sizeof *v->scores) : NULL;
	v->n_merges = (!spm && json_is_array(merges)) ? (uint32_t)json_array_size(merges) : 0;
	v->merges = calloc(v->n_merges ? v->n_merges : 1, sizeof *v->merges);
	if (v->tokens == NULL || v->types == NULL || (spm && v->scores == NULL) || v->merges == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for %llu tokens", (unsigned long long)n);
		goto fail;
	}
	/* arena: "[PAD<id>]" names, "a b" merges given as pairs, WordPiece
	 * word starts with U+2581 before them */
	arena_len = (n - n_tok) * 20 + 1;
	if (wordpiece)
		for (void *it = json_object_iter(vocab); it != NULL; it = json_object_iter_next(vocab, it))
			arena_len += json_object_iter_key_len(it) + 4;
	for (size_t i = 0; json_is_array(merges) && i < json_array_size(merges); i++) {
		const json_t *m = json_array_get(merges, i);
		if (json_is_array(m))
			arena_len += json_string_length(json_array_get(m, 0)) +
				     json_string_length(json_array_get(m, 1)) + 2;
	}
	out->arena_ = malloc(arena_len);
	if (out->arena_ == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for the tokenizer strings");
		goto fail;
	}
	if (unigram) {
		for (size_t i = 0; i < json_array_size(vocab); i++) {
			const json_t *e = json_array_get(vocab, i), *t = json_array_get(e, 0),
				     *s = json_array_get(e, 1);
			if (!json_is_string(t) || !json_is_number(s)) {
				rc = q42_err_set(err, Q42_EFORMAT,
						 "tokenizer.json: model.vocab[%zu]: expected [text, score]", i);
				goto fail;
			}
			v->tokens[i] = (q42_str){json_string_value(t), json_string_length(t)};
			v->scores[i] = (float)json_number_value(s);
		}
	} else {
		const char *k;
		json_t *id;
		void *it;
		for (it = json_object_iter(vocab); it != NULL; it = json_object_iter_next(vocab, it)) {
			k = json_object_iter_key(it);
			id = json_object_iter_value(it);
			if (!json_is_integer(id) || json_integer_value(id) < 0 ||
			    v->tokens[json_integer_value(id)].p != NULL) {
				rc = q42_err_set(err, Q42_EFORMAT,
						 "tokenizer.json: model.vocab.%s: expected a unique id", k);
				goto fail;
			}
			v->tokens[json_integer_value(id)] =
				(q42_str){k, json_object_iter_key_len(it)};
		}
	}
	for (size_t i = 0; i < json_array_size(added); i++) {
		const json_t *a = json_array_get(added, i), *t = json_object_get(a, "content");
		json_int_t id = json_integer_value(json_object_get(a, "id"));
		if (!json_is_string(t) || id < 0) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "tokenizer.json: added_tokens[%zu]: expected id and content", i);
			goto fail;
		}
		v->tokens[id] = (q42_str){json_string_value(t), json_string_length(t)};
		v->types[id] = json_is_true(json_object_get(a, "special")) ? Q42_TOK_CONTROL
									     : Q42_TOK_USER_DEFINED;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (i >= n_tok) {
			char *p = out->arena_ + arena_pos;
			int k = snprintf(p, 20, "[PAD%llu]", (unsigned long long)i);
			v->tokens[i] = (q42_str){p, (uint64_t)k};
			arena_pos += (uint64_t)k + 1;
			v->types[i] = Q42_TOK_UNUSED;
			if (v->scores)
				v->scores[i] = -1000.0f;
			continue;
		}
		if (v->tokens[i].p == NULL) {
			rc = q42_err_set(err, Q42_EFORMAT, "tokenizer.json: token id %llu has no text",
					 (unsigned long long)i);
			goto fail;
		}
		if (v->types[i] == 0)
			v->types[i] = spm && is_byte_token(v->tokens[i]) ? Q42_TOK_BYTE : Q42_TOK_NORMAL;
		/* WordPiece in llama.cpp's "phantom space" form: "##x" is x,
		 * a word start gets U+2581; control tokens and "[...]" stay */
		q42_str t = v->tokens[i];
		if (!wordpiece || v->types[i] == Q42_TOK_CONTROL ||
		    (t.len >= 2 && t.p[0] == '[' && t.p[t.len - 1] == ']'))
			continue;
		if (t.len >= 2 && t.p[0] == '#' && t.p[1] == '#') {
			v->tokens[i] = (q42_str){t.p + 2, t.len - 2};
		} else {
			char *p = out->arena_ + arena_pos;
			memcpy(p, "\xe2\x96\x81", 3);
			memcpy(p + 3, t.p, (size_t)t.len);
			p[t.len + 3] = '\0';
			v->tokens[i] = (q42_str){p, t.len + 3};
			arena_pos += t.len + 4;
		}
	}
	/* merges: kept for byte-level BPE; for SentencePiece-style BPE they
	 * become scores (rank r gives its result -r, so earlier merges win). */
	for (size_t i = 0; json_is_array(merges) && i < json_array_size(merges); i++) {
		const json_t *m = json_array_get(merges, i);
		q42_str s;
		if (json_is_string(m)) {
			s = (q42_str){json_string_value(m), json_string_length(m)};
		} else if (json_is_array(m) && json_is_string(json_array_get(m, 0)) &&
			   json_is_string(json_array_get(m, 1))) {
			char *p = out->arena_ + arena_pos;
			size_t a = json_string_length(json_array_get(m, 0)),
			       b = json_string_length(json_array_get(m, 1));
			memcpy(p, json_string_value(json_array_get(m, 0)), a);
			p[a] = ' ';
			memcpy(p + a + 1, json_string_value(json_array_get(m, 1)), b);
			p[a + 1 + b] = '\0';
			s = (q42_str){p, a + 1 + b};
			arena_pos += a + b + 2;
		} else {
			rc = q42_err_set(err, Q42_EFORMAT, "tokenizer.json: model.merges[%zu]: expected "
					 "\"a b\" or [a, b]", i);
			goto fail;
		}
		if (!spm) {
			v->merges[i] = s;
			continue;
		}
		const char *sp = memchr(s.p, ' ', s.len);
		if (sp == NULL)
			continue;
		/* the merged text is the pair without the space */
		size_t la = (size_t)(sp - s.p), lb = s.len - la - 1;
		char tmp[1024];
		if (la + lb >= sizeof tmp)
			continue;
		memcpy(tmp, s.p, la);
		memcpy(tmp + la, sp + 1, lb);
		json_t *id = json_object_getn(vocab, tmp, la + lb);
		if (json_is_integer(id) && json_integer_value(id) >= 0 &&
		    (uint64_t)json_integer_value(id) < n)
			v->scores[json_integer_value(id)] = -(float)i;
	}
	if (spm && !unigram)
		for (uint64_t i = 0; i < n_tok; i++)
			if (v->scores[i] == 0.0f && v->tokens[i].len > 1 && v->types[i] == Q42_TOK_NORMAL)
				v->scores[i] = -(float)json_array_size(merges) - 1.0f;
	if (!json_is_array(merges))
		v->n_merges = 0;

	v->model = precompiled != NULL ? (q42_str){"t5", 2}
		 : spm ? (q42_str){"llama", 5}
		 : wordpiece ? (q42_str){"bert", 4} : (q42_str){"gpt2", 4};
	v->pre = (q42_str){"", 0};
	/* a lone ByteLevel pre-tokenizer with its regex is GPT-2's */
	const json_t *pt = json_object_get(root, "pre_tokenizer");
	const char *ptt = json_string_value(json_object_get(pt, "type"));
	if (wordpiece) {
		v->pre = (q42_str){"default", 7};
	} else if (!spm && ptt != NULL && strcmp(ptt, "ByteLevel") == 0 &&
		   !json_is_false(json_object_get(pt, "use_regex"))) {
		v->pre = (q42_str){"gpt-2", 5};
	} else if (!spm) {
		const char *pre = c == NULL ? "default"
				: c->family == Q42_HF_LLAMA ? "llama-bpe"
				: c->family == Q42_HF_QWEN2 || c->family == Q42_HF_QWEN3 ? "qwen2"
				: c->family == Q42_HF_LFM2 || c->family == Q42_HF_LFM2MOE ? "lfm2" : "default";
		v->pre = (q42_str){pre, strlen(pre)};
	}
	v->bos = find_token(v, special_text(cfg, "bos_token"));
	v->eos = find_token(v, special_text(cfg, "eos_token"));
	v->unk = find_token(v, special_text(cfg, "unk_token"));
	v->pad = find_token(v, special_text(cfg, "pad_token"));
	v->sep = find_token(v, special_text(cfg, "sep_token"));
	v->mask = find_token(v, special_text(cfg, "mask_token"));
	v->eot = v->eom = Q42_TOK_NONE;
	if (v->bos < 0 && c != NULL && c->bos_id >= 0 && (uint32_t)c->bos_id < n)
		v->bos = c->bos_id;
	if (v->eos < 0 && c != NULL && c->eos_id >= 0 && (uint32_t)c->eos_id < n)
		v->eos = c->eos_id;
	if (v->unk < 0 && unigram && json_is_integer(json_object_get(model, "unk_id")) &&
	    json_integer_value(json_object_get(model, "unk_id")) < (json_int_t)n)
		v->unk = (int32_t)json_integer_value(json_object_get(model, "unk_id"));
	if (v->unk < 0 && !unigram)
		v->unk = find_token(v, json_string_value(json_object_get(model, "unk_token")));
	/* llama.cpp's bert vocabulary keeps [UNK] a control token */
	if (v->unk >= 0 && !wordpiece)
		v->types[v->unk] = Q42_TOK_UNKNOWN;
	const json_t *ab = json_object_get(cfg, "add_bos_token"), *ae = json_object_get(cfg, "add_eos_token");
	v->add_bos = json_is_boolean(ab) ? (int8_t)json_is_true(ab) : -1;
	v->add_eos = json_is_boolean(ae) ? (int8_t)json_is_true(ae) : -1;
	v->add_space_prefix = spm ? (int8_t)prepends_space(root) : -1;
	v->remove_extra_whitespaces = -1;
	if (precompiled != NULL) {
		/* RobertaProcessing/BertProcessing wrap the text in cls ... sep */
		const json_t *post = json_object_get(root, "post_processor");
		const char *pp = json_string_value(json_object_get(post, "type"));
		bool wraps = pp != NULL && (strcmp(pp, "RobertaProcessing") == 0 ||
					    strcmp(pp, "BertProcessing") == 0);
		if (wraps && v->add_bos < 0)
			v->add_bos = 1;
		if (wraps && v->add_eos < 0)
			v->add_eos = 1;
		/* their ["text", id] pairs name BOS (cls) and EOS (sep) */
		const json_t *cls = json_array_get(json_object_get(post, "cls"), 0);
		const json_t *sep = json_array_get(json_object_get(post, "sep"), 0);
		if (wraps && v->bos < 0)
			v->bos = find_token(v, json_string_value(cls));
		if (wraps && v->eos < 0)
			v->eos = find_token(v, json_string_value(sep));
		if (wraps)
			v->sep = v->eos;
		if ((rc = unigram_charsmap(out, root, precompiled, err)) != Q42_OK)
			goto fail;
	}
	json_decref(cfg);
	return Q42_OK;
fail:
	json_decref(cfg);
	q42_hf_vocab_free(out);
	return rc;
}
