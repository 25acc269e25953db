/* q42_hf.h -- Hugging Face model metadata as q42's model description.
 *
 * config.json becomes q42_hparams, tokenizer.json (with
 * tokenizer_config.json) becomes q42_vocab, and HF tensor names become
 * llama.cpp-style names ("model.layers.0.self_attn.q_proj.weight" ->
 * "blk.0.attn_q.weight") with the value transform llama.cpp's converter
 * applies on the way. Families: llama (mistral), qwen2, qwen3, gemma,
 * gemma2, gemma3, lfm2, lfm2_moe, phi3, and the encoders bert,
 * nomic_bert, gemma3_text as Gemma3TextModel (EmbeddingGemma) and lfm2 as
 * Lfm2Model (LFM2-ColBERT) with their sentence-transformers modules.
 * What maps to what is listed in p64c(1), "HUGGING FACE FOLDERS". Never
 * prints; never guesses a family it does not know.
 */
#ifndef Q42_HF_H
#define Q42_HF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_model.h"
#include "formats/q42_safetensors.h"

enum q42_hf_family {
	Q42_HF_LLAMA = 1,
	Q42_HF_QWEN2 = 2,
	Q42_HF_QWEN3 = 3,
	Q42_HF_GEMMA = 4,  /* gemma, gemma2, gemma3 */
	Q42_HF_LFM2 = 5,
	Q42_HF_LFM2MOE = 6, /* lfm2_moe: lfm2's blocks, routed FFNs */
	Q42_HF_PHI3 = 7,    /* fused qkv_proj and gate_up_proj, LongRoPE in config.json */
	Q42_HF_BERT = 8,    /* BertModel: learned positions, LayerNorm with biases */
	Q42_HF_NOMIC_BERT = 9, /* NomicBertModel: fused Wqkv, SwiGLU, RoPE */
};

/* Dense modules q42 runs (sentence-transformers, pylate): dense_2, dense_3. */
#define Q42_HF_DENSE_MAX 2u

/* The most LongRoPE factors per list (rope dimensions / 2). */
#define Q42_HF_ROPE_FACTORS_MAX 256u

/* How tensor bytes change between HF and GGUF layouts. */
enum q42_hf_xform {
	Q42_HF_X_NONE = 0,
	Q42_HF_X_PERMUTE_Q = 1, /* llama q_proj: rows of each head from (half, pair) to (pair, half) */
	Q42_HF_X_PERMUTE_K = 2, /* the same for k_proj, with the key/value head count */
	Q42_HF_X_ADD_ONE = 3,   /* gemma norms: llama.cpp stores 1 + w */
	Q42_HF_X_SQUEEZE = 4,   /* lfm2 conv: drop the size-1 middle dimension */
};

typedef struct q42_hf_config {
	uint32_t family;       /* enum q42_hf_family */
	q42_hparams hp;
	uint32_t n_head_kv;    /* scalar key/value heads, for the k permutation */
	int32_t bos_id, eos_id; /* config.json's, -1 when absent */
	/* phi3's LongRoPE factors from rope_scaling (long_factor,
	 * short_factor): the tensors rope_factors_long.weight and
	 * rope_factors_short.weight llama.cpp's converter makes of them
	 * (n_rope_factors 0: none) */
	uint32_t n_rope_factors;
	float rope_long[Q42_HF_ROPE_FACTORS_MAX], rope_short[Q42_HF_ROPE_FACTORS_MAX];
	/* sentence-transformers Dense modules in modules.json's order: their
	 * folders (the first is dense_2, the second dense_3) */
	uint32_t n_dense;
	char dense_dir[Q42_HF_DENSE_MAX][72];
} q42_hf_config;

/* Parse config.json (len bytes). Q42_EUNSUPPORTED for a model_type outside
 * the families or a rope_scaling type q42 does not compute (yarn, llama3,
 * dynamic; phi3's longrope is), Q42_EFORMAT for malformed JSON, a missing
 * size or LongRoPE factor lists that do not fit the rotated dimensions.
 * n_ff is intermediate_size here; the caller may refine it from tensor
 * shapes (a fused gate_up_proj holds 2 n_ff rows). */
Q42_API int q42_hf_config_parse(q42_hf_config *c, const char *json, size_t len, q42_err *err);

/* The sentence-transformers modules of m (modules.json and the module
 * folders' config.json) into c, after q42_hf_config_parse: the pooling
 * (1_Pooling: mean, cls or lasttoken) as hp.pooling, the Dense folders
 * (at most two, in_features/out_features, no bias, the Identity
 * activation) as dense_dir with hp.n_dense_2 = the first one's
 * out_features; Normalize is accepted (q42run's default L2 normalisation
 * is what it does). Q42_EUNSUPPORTED naming any other module type,
 * pooling mode or Dense setting; Q42_EFORMAT for malformed JSON or a
 * missing module config. Nothing to do without modules.json. */
Q42_API int q42_hf_modules_parse(q42_hf_config *c, const q42_st_model *m, q42_err *err);

/* A q42_vocab whose strings live in this struct. */
typedef struct q42_hf_vocab {
	q42_vocab v;
	void *json_;   /* the parsed tokenizer.json; strings point into it */
	char *arena_;  /* strings built here (merges as "a b", padding tokens) */
	uint8_t *charsmap_; /* the decoded precompiled charsmap (Unigram) */
} q42_hf_vocab;

/* tokenizer.json (+ tokenizer_config.json, may be NULL) into *out. Model
 * types: Unigram with a Precompiled normalizer (T5, XLM-R) -> "t5" with
 * its scores and charsmap; other Unigram -> "llama" with its scores; BPE
 * with byte_fallback ->
 * "llama" with scores from the merge ranks; byte-level BPE -> "gpt2" with
 * its merges and a pre-tokenizer name from the family. n_vocab pads with
 * "[PAD<id>]" tokens when the embedding has more rows than the tokenizer. */
Q42_API int q42_hf_vocab_parse(q42_hf_vocab *out, const char *tok_json, size_t tok_len,
			       const char *cfg_json, size_t cfg_len, const q42_hf_config *c,
			       q42_err *err);
Q42_API void q42_hf_vocab_free(q42_hf_vocab *v);

/* The GGUF-style name of an HF tensor (out, cap bytes) and its transform;
 * false when the name is not one the family maps (the caller carries the
 * tensor under its HF name, role unknown). */
Q42_API bool q42_hf_tensor_name(const q42_hf_config *c, const char *hf_name, char *out,
				size_t cap, uint32_t *xform);

/* Whether an HF tensor is one expert's matrix of a routed FFN
 * (lfm2_moe: model.layers.L.feed_forward.experts.X.w1/w3/w2.weight): then
 * the GGUF name of the stack it belongs to (out) and its place there
 * (*expert). llama.cpp's converter stacks a layer's experts in expert
 * order into one [n_in, n_out, n_expert] tensor. */
Q42_API bool q42_hf_expert_piece(const q42_hf_config *c, const char *hf_name, char *out, size_t cap,
				 uint32_t *expert);

/* Reorder the n_rows rows (row_bytes each, any dtype) of a llama q or k
 * projection from HF's per-head (half, pair) order to GGUF's (pair, half),
 * as llama.cpp's converter does; scratch holds n_rows * row_bytes.
 * Q42_EFORMAT when the rows do not split into n_head heads of even size. */
Q42_API int q42_hf_permute_rows(void *rows, void *scratch, uint64_t n_rows, uint64_t row_bytes,
				uint32_t n_head, q42_err *err);

#endif
