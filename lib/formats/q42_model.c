/* q42_model.c -- GGUF metadata -> q42_hparams and q42_vocab.
 *
 * The key names are GGUF's ("<arch>.block_count", "tokenizer.ggml.tokens",
 * ...). Absent optional numbers stay 0 so the engine can apply the
 * architecture's default; what the engine cannot run without is an error
 * here. Vocab strings are views into the GGUF mapping.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/q42_model.h"

static const q42_gguf_kv *arch_kv(const q42_gguf *g, const char *arch, const char *suffix)
{
	char key[256];
	snprintf(key, sizeof key, "%s.%s", arch, suffix);
	return q42_gguf_find(g, key);
}

/* A u32 that may be absent (stays *out unchanged) but must fit if present. */
static int get_u32(const q42_gguf *g, const char *arch, const char *suffix, uint32_t *out,
		   bool required, q42_err *err)
{
	const q42_gguf_kv *kv = arch_kv(g, arch, suffix);
	uint64_t v;
	if (kv == NULL) {
		if (required)
			return q42_err_set(err, Q42_ENOTFOUND, "metadata: missing required key '%s.%s'",
					   arch, suffix);
		return Q42_OK;
	}
	if (!q42_gguf_kv_u64(kv, &v) || v > UINT32_MAX)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: key '%s.%s' at offset %llu: expected an unsigned 32-bit integer, found %s",
				   arch, suffix, (unsigned long long)kv->key_off,
				   q42_gguf_vtype_name(kv->type));
	*out = (uint32_t)v;
	return Q42_OK;
}

static int get_f32(const q42_gguf *g, const char *arch, const char *suffix, float *out,
		   q42_err *err)
{
	const q42_gguf_kv *kv = arch_kv(g, arch, suffix);
	double v;
	if (kv == NULL)
		return Q42_OK;
	if (!q42_gguf_kv_f64(kv, &v) || !isfinite(v))
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: key '%s.%s' at offset %llu: expected a finite number, found %s",
				   arch, suffix, (unsigned long long)kv->key_off,
				   q42_gguf_vtype_name(kv->type));
	*out = (float)v;
	return Q42_OK;
}

/* Scalar or one value per layer. */
static int get_per_layer(const q42_gguf *g, const char *arch, const char *suffix,
			 uint32_t n_layer, uint32_t *out, q42_err *err)
{
	const q42_gguf_kv *kv = arch_kv(g, arch, suffix);
	uint32_t v = 0;
	int rc;
	if (kv == NULL)
		return Q42_OK;
	if (kv->type == Q42_GGUF_ARRAY) {
		if (kv->count != n_layer)
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: key '%s.%s': expected %u per-layer values, found %llu",
					   arch, suffix, n_layer, (unsigned long long)kv->count);
		for (uint32_t i = 0; i < n_layer; i++) {
			int64_t x;
			if (!q42_gguf_arr_i64(kv, i, &x) || x < 0 || x > UINT32_MAX)
				return q42_err_set(err, Q42_EFORMAT,
						   "metadata: key '%s.%s' element %u: expected an unsigned 32-bit integer",
						   arch, suffix, i);
			out[i] = (uint32_t)x;
		}
		return Q42_OK;
	}
	rc = get_u32(g, arch, suffix, &v, false, err);
	if (rc != Q42_OK)
		return rc;
	for (uint32_t i = 0; i < n_layer; i++)
		out[i] = v;
	return Q42_OK;
}

bool q42_colbert_set_prefix(q42_hparams *hp, bool doc, const char *s, uint64_t len)
{
	char *dst = doc ? hp->cb_doc_prefix : hp->cb_query_prefix;
	if (len >= Q42_COLBERT_PREFIX_MAX || memchr(s, '\0', (size_t)len) != NULL)
		return false;
	memcpy(dst, s, (size_t)len);
	dst[len] = '\0';
	hp->cb_flags |= doc ? Q42_COLBERT_DOC_PREFIX : Q42_COLBERT_QUERY_PREFIX;
	return true;
}

bool q42_colbert_add_word(q42_hparams *hp, const char *w, uint64_t len)
{
	if (len == 0 || len >= Q42_COLBERT_SKIP_MAX - hp->cb_skip_len ||
	    memchr(w, '\0', (size_t)len) != NULL)
		return false;
	memcpy(hp->cb_skip + hp->cb_skip_len, w, (size_t)len);
	hp->cb_skip[hp->cb_skip_len + len] = '\0';
	hp->cb_skip_len += (uint32_t)len + 1;
	hp->cb_flags |= Q42_COLBERT_SKIPLIST;
	return true;
}

/* colbert.* (q42's keys; llama.cpp defines none): pylate's settings. */
static int colbert_from_gguf(q42_hparams *hp, const q42_gguf *g, q42_err *err)
{
	static const char *const pk[2] = {"colbert.query_prefix", "colbert.document_prefix"};
	static const char *const lk[2] = {"colbert.query_length", "colbert.document_length"};
	const q42_gguf_kv *kv;
	q42_str sv;
	uint64_t u;
	bool b;
	for (int i = 0; i < 2; i++) {
		if ((kv = q42_gguf_find(g, pk[i])) != NULL &&
		    (!q42_gguf_kv_str(kv, &sv) || !q42_colbert_set_prefix(hp, i == 1, sv.p, sv.len)))
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: key '%s' at offset %llu: expected a string of at most "
					   "%u bytes without NUL", pk[i], (unsigned long long)kv->key_off,
					   Q42_COLBERT_PREFIX_MAX - 1);
		if ((kv = q42_gguf_find(g, lk[i])) != NULL &&
		    (!q42_gguf_kv_u64(kv, &u) || u == 0 || u > UINT32_MAX))
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: key '%s' at offset %llu: expected a positive 32-bit "
					   "integer", lk[i], (unsigned long long)kv->key_off);
		if (kv != NULL)
			*(i == 0 ? &hp->cb_query_len : &hp->cb_doc_len) = (uint32_t)u;
	}
	if ((kv = q42_gguf_find(g, "colbert.attend_to_expansion_tokens")) != NULL) {
		if (!q42_gguf_kv_bool(kv, &b))
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: key 'colbert.attend_to_expansion_tokens' at offset "
					   "%llu: expected a boolean", (unsigned long long)kv->key_off);
		hp->cb_flags |= Q42_COLBERT_ATTEND_SET | (b ? Q42_COLBERT_ATTEND : 0u);
	}
	if ((kv = q42_gguf_find(g, "colbert.skiplist_words")) != NULL) {
		bool ok = kv->type == Q42_GGUF_ARRAY;
		hp->cb_flags |= Q42_COLBERT_SKIPLIST;
		for (uint64_t i = 0; ok && i < kv->count; i++)
			ok = q42_gguf_arr_str(g, kv, i, &sv) && q42_colbert_add_word(hp, sv.p, sv.len);
		if (!ok)
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: key 'colbert.skiplist_words' at offset %llu: expected "
					   "an array of non-empty strings without NUL, %u bytes in all",
					   (unsigned long long)kv->key_off, Q42_COLBERT_SKIP_MAX);
	}
	return Q42_OK;
}

int q42_hparams_from_gguf(q42_hparams *hp, const q42_gguf *g, q42_err *err)
{
	q42_str arch;
	const char *a;
	int rc = Q42_OK;

	memset(hp, 0, sizeof *hp);
	if (!q42_gguf_get_str(g, "general.architecture", &arch))
		return q42_err_set(err, Q42_ENOTFOUND,
				   "metadata: missing or non-string key 'general.architecture'");
	if (arch.len == 0 || arch.len >= Q42_ARCH_MAX || memchr(arch.p, '\0', arch.len) != NULL)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: general.architecture has length %llu, expected 1..%d",
				   (unsigned long long)arch.len, Q42_ARCH_MAX - 1);
	memcpy(hp->arch, arch.p, arch.len);
	a = hp->arch;

	rc = get_u32(g, a, "block_count", &hp->n_layer, true, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "embedding_length", &hp->n_embd, true, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "attention.head_count", &hp->n_head, true, err);
	if (rc != Q42_OK)
		return rc;
	if (hp->n_layer == 0 || hp->n_layer > Q42_MAX_LAYERS)
		return q42_err_set(err, Q42_EFORMAT, "metadata: %s.block_count = %u, expected 1..%d",
				   a, hp->n_layer, Q42_MAX_LAYERS);
	if (hp->n_embd == 0 || hp->n_head == 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.embedding_length = %u and attention.head_count = %u must be non-zero",
				   a, hp->n_embd, hp->n_head);

	rc = get_u32(g, a, "context_length", &hp->n_ctx_train, false, err);
	if (rc == Q42_OK)
		rc = get_per_layer(g, a, "attention.head_count_kv", hp->n_layer, hp->n_head_kv, err);
	if (rc == Q42_OK && arch_kv(g, a, "attention.head_count_kv") == NULL)
		for (uint32_t i = 0; i < hp->n_layer; i++)
			hp->n_head_kv[i] = hp->n_head;
	if (rc == Q42_OK)
		rc = get_per_layer(g, a, "feed_forward_length", hp->n_layer, hp->n_ff, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "attention.key_length", &hp->head_dim_k, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "attention.value_length", &hp->head_dim_v, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "rope.dimension_count", &hp->n_rot, false, err);
	if (rc == Q42_OK)
		rc = get_f32(g, a, "rope.freq_base", &hp->rope_freq_base, err);
	if (rc == Q42_OK)
		rc = get_f32(g, a, "rope.freq_base_swa", &hp->rope_freq_base_swa, err);
	if (rc == Q42_OK)
		rc = get_f32(g, a, "attention.layer_norm_rms_epsilon", &hp->norm_rms_eps, err);
	if (rc == Q42_OK)
		rc = get_f32(g, a, "attention.layer_norm_epsilon", &hp->norm_eps, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "attention.sliding_window", &hp->sliding_window, false, err);
	if (rc == Q42_OK)
		rc = get_f32(g, a, "attn_logit_softcapping", &hp->attn_softcap, err);
	if (rc == Q42_OK)
		rc = get_f32(g, a, "final_logit_softcapping", &hp->final_softcap, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "expert_count", &hp->n_expert, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "expert_used_count", &hp->n_expert_used, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "shortconv.l_cache", &hp->conv_l_cache, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "attention.sliding_window_pattern", &hp->swa_pattern, false, err);
	if (rc == Q42_OK)
		rc = get_f32(g, a, "rope.scaling.attn_factor", &hp->rope_attn_factor, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "rope.scaling.original_context_length", &hp->n_ctx_orig, false,
			     err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "dense_2_feat_out", &hp->n_dense_2, false, err);
	if (rc == Q42_OK && hp->n_dense_2 == 0)
		rc = get_u32(g, a, "embedding_length_out", &hp->n_dense_2, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "pooling_type", &hp->pooling, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "expert_feed_forward_length", &hp->n_ff_exp, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "leading_dense_block_count", &hp->n_dense_lead, false, err);
	if (rc == Q42_OK)
		rc = get_u32(g, a, "expert_gating_func", &hp->expert_gating, false, err);
	if (rc != Q42_OK)
		return rc;
	if (arch_kv(g, a, "pooling_type") != NULL) {
		if (hp->pooling > 4)
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: %s.pooling_type %u: expected 0..4", a, hp->pooling);
		hp->pooling++;
	}
	{
		const q42_gguf_kv *c = arch_kv(g, a, "attention.causal");
		if (c != NULL) {
			bool causal;
			if (!q42_gguf_kv_bool(c, &causal))
				return q42_err_set(err, Q42_EFORMAT,
						   "metadata: %s.attention.causal: expected a boolean", a);
			hp->non_causal = causal ? 0 : 1;
		}
	}

	/* Linear rope scaling shrinks the frequencies by the factor, as does
	 * longrope (its factors are tensors); "none" never scales, whatever
	 * the factor says (llama.cpp's llama_context). YaRN mixes interpolated
	 * and extrapolated angles (ggml's rope with ext_factor 1) and rescales
	 * them, which q42 does not compute: refused by name, here, so that
	 * neither q42run nor p64c (whose HPAR could not say it) runs such a
	 * model as a linear one. Absent means linear, as in llama.cpp. */
	hp->rope_freq_scale = 1.0f;
	const q42_gguf_kv *st = arch_kv(g, a, "rope.scaling.type");
	q42_str stype = {"linear", 6};
	if (st != NULL && !q42_gguf_kv_str(st, &stype))
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: key '%s.rope.scaling.type' at offset %llu: expected a string, found %s",
				   a, (unsigned long long)st->key_off, q42_gguf_vtype_name(st->type));
	if (q42_str_eq(stype, "yarn"))
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "metadata: %s.rope.scaling.type \"yarn\": YaRN RoPE scaling is not supported "
				   "(linear, longrope and none are)", a);
	if (!q42_str_eq(stype, "linear") && !q42_str_eq(stype, "longrope") && !q42_str_eq(stype, "none"))
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.rope.scaling.type \"%.*s\": expected none, linear, yarn or longrope",
				   a, (int)(stype.len > 64 ? 64 : stype.len), stype.p);
	if (!q42_str_eq(stype, "none")) {
		float factor = 0.0f;
		rc = get_f32(g, a, "rope.scaling.factor", &factor, err);
		if (rc != Q42_OK)
			return rc;
		if (factor == 0.0f)
			rc = get_f32(g, a, "rope.scale_linear", &factor, err);
		if (rc != Q42_OK)
			return rc;
		if (factor > 0.0f)
			hp->rope_freq_scale = 1.0f / factor;
	}

	{
		uint64_t ft;
		if (q42_gguf_get_u64(g, "general.file_type", &ft) && ft <= UINT32_MAX)
			hp->file_type = (uint32_t)ft;
	}
	{
		const q42_gguf_kv *tok = q42_gguf_find(g, "tokenizer.ggml.tokens");
		const q42_gguf_tensor *emb = q42_gguf_find_tensor(g, "token_embd.weight");
		uint32_t vs = 0;
		rc = get_u32(g, a, "vocab_size", &vs, false, err);
		if (rc != Q42_OK)
			return rc;
		if (tok != NULL && tok->type == Q42_GGUF_ARRAY && tok->count <= UINT32_MAX)
			hp->n_vocab = (uint32_t)tok->count;
		else if (vs != 0)
			hp->n_vocab = vs;
		else if (emb != NULL && emb->n_dims >= 2 && emb->ne[1] <= UINT32_MAX)
			hp->n_vocab = (uint32_t)emb->ne[1];
	}
	return colbert_from_gguf(hp, g, err);
}

static int vocab_fail(q42_vocab *v, int rc)
{
	q42_vocab_free(v);
	return rc;
}

static int get_special(const q42_gguf *g, const char *key, uint32_t n_tokens, int32_t *out,
		       q42_err *err)
{
	const q42_gguf_kv *kv = q42_gguf_find(g, key);
	uint64_t id;
	*out = Q42_TOK_NONE;
	if (kv == NULL)
		return Q42_OK;
	if (!q42_gguf_kv_u64(kv, &id))
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: key '%s' at offset %llu: expected an unsigned integer, found %s",
				   key, (unsigned long long)kv->key_off, q42_gguf_vtype_name(kv->type));
	/* Out-of-range ids are ignored, as llama.cpp ignores them: several
	 * published models carry a padding id one past the vocabulary. */
	if (id < n_tokens)
		*out = (int32_t)id;
	return Q42_OK;
}

static int get_flag(const q42_gguf *g, const char *key, int8_t *out, q42_err *err)
{
	const q42_gguf_kv *kv = q42_gguf_find(g, key);
	bool b;
	*out = -1;
	if (kv == NULL)
		return Q42_OK;
	if (!q42_gguf_kv_bool(kv, &b))
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: key '%s' at offset %llu: expected bool, found %s", key,
				   (unsigned long long)kv->key_off, q42_gguf_vtype_name(kv->type));
	*out = b ? 1 : 0;
	return Q42_OK;
}

/* The Unigram normalizer's bytes, a view of the array in the mapping
 * (llama.cpp accepts u8 or i8 elements). */
static int get_charsmap(const q42_gguf *g, q42_vocab *v, q42_err *err)
{
	const q42_gguf_kv *kv = q42_gguf_find(g, "tokenizer.ggml.precompiled_charsmap");
	if (kv == NULL)
		return Q42_OK;
	if (kv->type != Q42_GGUF_ARRAY ||
	    (kv->arr_type != Q42_GGUF_U8 && kv->arr_type != Q42_GGUF_I8))
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: key 'tokenizer.ggml.precompiled_charsmap' at offset %llu: "
				   "expected an array of u8",
				   (unsigned long long)kv->key_off);
	v->charsmap.p = (const char *)kv->val;
	v->charsmap.len = kv->count;
	return Q42_OK;
}

int q42_vocab_from_gguf(q42_vocab *v, const q42_gguf *g, q42_err *err)
{
	const q42_gguf_kv *tokens, *scores, *types, *merges;
	int rc;

	memset(v, 0, sizeof *v);
	if (!q42_gguf_get_str(g, "tokenizer.ggml.model", &v->model))
		return q42_err_set(err, Q42_ENOTFOUND,
				   "tokenizer: missing or non-string key 'tokenizer.ggml.model'");
	if (q42_gguf_find(g, "tokenizer.ggml.pre") != NULL &&
	    !q42_gguf_get_str(g, "tokenizer.ggml.pre", &v->pre))
		return q42_err_set(err, Q42_EFORMAT, "tokenizer: key 'tokenizer.ggml.pre' is not a string");
	tokens = q42_gguf_find(g, "tokenizer.ggml.tokens");
	if (tokens == NULL || tokens->type != Q42_GGUF_ARRAY ||
	    tokens->arr_type != Q42_GGUF_STRING)
		return q42_err_set(err, Q42_ENOTFOUND,
				   "tokenizer: missing key 'tokenizer.ggml.tokens' (array of strings)");
	if (tokens->count == 0 || tokens->count > INT32_MAX)
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: tokenizer.ggml.tokens has %llu entries, expected 1..%d",
				   (unsigned long long)tokens->count, INT32_MAX);
	v->n_tokens = (uint32_t)tokens->count;
	v->tokens = calloc(v->n_tokens, sizeof *v->tokens);
	if (v->tokens == NULL)
		return vocab_fail(v, q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory"));
	for (uint32_t i = 0; i < v->n_tokens; i++)
		q42_gguf_arr_str(g, tokens, i, &v->tokens[i]);

	scores = q42_gguf_find(g, "tokenizer.ggml.scores");
	if (scores != NULL) {
		/* llama.cpp reads any numeric array here; some converters write i32. */
		if (scores->type != Q42_GGUF_ARRAY || scores->count != v->n_tokens ||
		    q42_gguf_vtype_size(scores->arr_type) == 0 ||
		    scores->arr_type == Q42_GGUF_BOOL)
			return vocab_fail(v, q42_err_set(err, Q42_EFORMAT,
				"tokenizer: tokenizer.ggml.scores must be a numeric array of %u entries",
				v->n_tokens));
		v->scores = malloc(v->n_tokens * sizeof *v->scores);
		if (v->scores == NULL)
			return vocab_fail(v, q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory"));
		for (uint32_t i = 0; i < v->n_tokens; i++) {
			double d;
			q42_gguf_arr_f64(scores, i, &d);
			v->scores[i] = (float)d;
		}
	}
	types = q42_gguf_find(g, "tokenizer.ggml.token_type");
	if (types != NULL) {
		if (types->type != Q42_GGUF_ARRAY || types->count != v->n_tokens ||
		    (types->arr_type != Q42_GGUF_I32 && types->arr_type != Q42_GGUF_U32))
			return vocab_fail(v, q42_err_set(err, Q42_EFORMAT,
				"tokenizer: tokenizer.ggml.token_type must be an array of %u i32", v->n_tokens));
		v->types = malloc(v->n_tokens * sizeof *v->types);
		if (v->types == NULL)
			return vocab_fail(v, q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory"));
		for (uint32_t i = 0; i < v->n_tokens; i++) {
			int64_t t;
			q42_gguf_arr_i64(types, i, &t);
			if (t < 0 || t > Q42_TOK_BYTE)
				return vocab_fail(v, q42_err_set(err, Q42_EFORMAT,
					"tokenizer: token %u has type %lld, expected 0..6", i, (long long)t));
			v->types[i] = (int32_t)t;
		}
	}
	merges = q42_gguf_find(g, "tokenizer.ggml.merges");
	if (merges != NULL) {
		if (merges->type != Q42_GGUF_ARRAY || merges->arr_type != Q42_GGUF_STRING ||
		    merges->count > INT32_MAX)
			return vocab_fail(v, q42_err_set(err, Q42_EFORMAT,
				"tokenizer: tokenizer.ggml.merges must be an array of strings"));
		v->n_merges = (uint32_t)merges->count;
		v->merges = calloc(v->n_merges ? v->n_merges : 1, sizeof *v->merges);
		if (v->merges == NULL)
			return vocab_fail(v, q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory"));
		for (uint32_t i = 0; i < v->n_merges; i++)
			q42_gguf_arr_str(g, merges, i, &v->merges[i]);
	}

	rc = get_special(g, "tokenizer.ggml.bos_token_id", v->n_tokens, &v->bos, err);
	if (rc == Q42_OK)
		rc = get_special(g, "tokenizer.ggml.eos_token_id", v->n_tokens, &v->eos, err);
	if (rc == Q42_OK)
		rc = get_special(g, "tokenizer.ggml.eot_token_id", v->n_tokens, &v->eot, err);
	if (rc == Q42_OK)
		rc = get_special(g, "tokenizer.ggml.eom_token_id", v->n_tokens, &v->eom, err);
	if (rc == Q42_OK)
		rc = get_special(g, "tokenizer.ggml.unknown_token_id", v->n_tokens, &v->unk, err);
	if (rc == Q42_OK)
		rc = get_special(g, "tokenizer.ggml.seperator_token_id", v->n_tokens, &v->sep, err);
	if (rc == Q42_OK)
		rc = get_special(g, "tokenizer.ggml.padding_token_id", v->n_tokens, &v->pad, err);
	if (rc == Q42_OK)
		rc = get_special(g, "tokenizer.ggml.mask_token_id", v->n_tokens, &v->mask, err);
	if (rc == Q42_OK)
		rc = get_flag(g, "tokenizer.ggml.add_bos_token", &v->add_bos, err);
	if (rc == Q42_OK)
		rc = get_flag(g, "tokenizer.ggml.add_eos_token", &v->add_eos, err);
	if (rc == Q42_OK)
		rc = get_flag(g, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix, err);
	if (rc == Q42_OK)
		rc = get_flag(g, "tokenizer.ggml.remove_extra_whitespaces",
			      &v->remove_extra_whitespaces, err);
	if (rc == Q42_OK)
		rc = get_charsmap(g, v, err);
	if (rc != Q42_OK)
		return vocab_fail(v, rc);
	return Q42_OK;
}

void q42_vocab_free(q42_vocab *v)
{
	free(v->tokens);
	free(v->scores);
	free(v->types);
	free(v->merges);
	memset(v, 0, sizeof *v);
}
