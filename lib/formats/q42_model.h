/* q42_model.h -- the format-neutral description of a model.
 *
 * Both containers (GGUF metadata, or the P64 hyperparameter and Q42T
 * sections) are turned into these two structures; the tokenizer and the
 * engine read only these, never a file format. Strings are views into the
 * mapped file and live as long as it does.
 */
#ifndef Q42_MODEL_H
#define Q42_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_gguf.h"

#define Q42_MAX_LAYERS 512
#define Q42_ARCH_MAX 32
#define Q42_COLBERT_PREFIX_MAX 64u  /* a ColBERT marker's bytes, with its NUL */
#define Q42_COLBERT_SKIP_MAX 1024u  /* the skiplist's bytes, each word with its NUL */

/* Which ColBERT settings a model states (q42_hparams.cb_flags). */
enum q42_colbert_flags {
	Q42_COLBERT_QUERY_PREFIX = 1u << 0,
	Q42_COLBERT_DOC_PREFIX = 1u << 1,
	Q42_COLBERT_SKIPLIST = 1u << 2,
	Q42_COLBERT_ATTEND_SET = 1u << 3, /* attend_to_expansion_tokens stated, */
	Q42_COLBERT_ATTEND = 1u << 4,     /* and true */
	Q42_COLBERT_FLAGS_ALL_ = 0x1Fu,
};

/* Everything the engine needs from the metadata. Values absent from the
 * source are 0 (the engine decides defaults per architecture); per-layer
 * arrays hold the scalar value repeated when the source gives a scalar. */
typedef struct q42_hparams {
	char arch[Q42_ARCH_MAX];        /* general.architecture */
	uint32_t n_vocab;               /* tokenizer size or output rows */
	uint32_t n_ctx_train;           /* <arch>.context_length */
	uint32_t n_embd;                /* <arch>.embedding_length */
	uint32_t n_layer;               /* <arch>.block_count */
	uint32_t n_head;                /* <arch>.attention.head_count */
	uint32_t n_head_kv[Q42_MAX_LAYERS]; /* <arch>.attention.head_count_kv (scalar or per layer) */
	uint32_t n_ff[Q42_MAX_LAYERS];  /* <arch>.feed_forward_length (scalar or per layer) */
	uint32_t head_dim_k;            /* <arch>.attention.key_length, 0 = n_embd/n_head */
	uint32_t head_dim_v;            /* <arch>.attention.value_length */
	uint32_t n_rot;                 /* <arch>.rope.dimension_count, 0 = head_dim_k */
	float rope_freq_base;           /* <arch>.rope.freq_base */
	float rope_freq_scale;          /* 1 / <arch>.rope.scaling.factor when linear, else 1 */
	float rope_freq_base_swa;       /* <arch>.rope.freq_base_swa (gemma3 local layers) */
	float norm_rms_eps;             /* <arch>.attention.layer_norm_rms_epsilon */
	float norm_eps;                 /* <arch>.attention.layer_norm_epsilon */
	uint32_t sliding_window;        /* <arch>.attention.sliding_window */
	float attn_softcap;             /* <arch>.attn_logit_softcapping */
	float final_softcap;            /* <arch>.final_logit_softcapping */
	uint32_t n_expert;              /* <arch>.expert_count */
	uint32_t n_expert_used;         /* <arch>.expert_used_count */
	uint32_t conv_l_cache;          /* <arch>.shortconv.l_cache (lfm2) */
	uint32_t file_type;             /* general.file_type */
	/* the HPAR tail (p64(5)): 0 when absent */
	uint32_t swa_pattern;           /* <arch>.attention.sliding_window_pattern */
	float rope_attn_factor;         /* <arch>.rope.scaling.attn_factor */
	uint32_t n_ctx_orig;            /* <arch>.rope.scaling.original_context_length */
	/* encoders and embedding models (not yet carried by P64's HPAR) */
	uint32_t non_causal;            /* 1: <arch>.attention.causal is false */
	uint32_t pooling;               /* <arch>.pooling_type + 1 (0: absent) */
	/* rows of dense_2: <arch>.dense_2_feat_out, else <arch>.embedding_length_out */
	uint32_t n_dense_2;
	/* mixtures of experts (HPAR's MoE fields, p64(5)): 0 when absent */
	uint32_t n_ff_exp;              /* <arch>.expert_feed_forward_length */
	uint32_t n_dense_lead;          /* <arch>.leading_dense_block_count */
	uint32_t expert_gating;         /* <arch>.expert_gating_func (llama.cpp's numbering) */
	/* ColBERT (pylate's settings; HPAR's ColBERT fields, p64(5)): what
	 * the model states, 0 / empty when it states nothing */
	uint32_t cb_flags;              /* enum q42_colbert_flags */
	uint32_t cb_query_len;          /* colbert.query_length */
	uint32_t cb_doc_len;            /* colbert.document_length */
	char cb_query_prefix[Q42_COLBERT_PREFIX_MAX]; /* colbert.query_prefix */
	char cb_doc_prefix[Q42_COLBERT_PREFIX_MAX];   /* colbert.document_prefix */
	uint32_t cb_skip_len;           /* bytes of cb_skip */
	char cb_skip[Q42_COLBERT_SKIP_MAX]; /* colbert.skiplist_words, each followed by a NUL */
} q42_hparams;

/* Set a ColBERT marker (query when !doc) of len bytes; false when it holds a
 * NUL or does not fit Q42_COLBERT_PREFIX_MAX. */
Q42_API bool q42_colbert_set_prefix(q42_hparams *hp, bool doc, const char *s, uint64_t len);
/* Append one skiplist word; false when empty, holding a NUL, or past
 * Q42_COLBERT_SKIP_MAX. */
Q42_API bool q42_colbert_add_word(q42_hparams *hp, const char *w, uint64_t len);

enum q42_tok_type {
	Q42_TOK_UNDEFINED = 0,
	Q42_TOK_NORMAL = 1,
	Q42_TOK_UNKNOWN = 2,
	Q42_TOK_CONTROL = 3,
	Q42_TOK_USER_DEFINED = 4,
	Q42_TOK_UNUSED = 5,
	Q42_TOK_BYTE = 6,
};

#define Q42_TOK_NONE (-1)

/* The tokenizer as stored (tokenizer.ggml.* keys, or the Q42T section). */
typedef struct q42_vocab {
	q42_str model;        /* tokenizer.ggml.model: "llama", "gpt2", ... */
	q42_str pre;          /* tokenizer.ggml.pre, empty when absent */
	uint32_t n_tokens;
	q42_str *tokens;      /* n_tokens */
	float *scores;        /* n_tokens, NULL when absent */
	int32_t *types;       /* n_tokens (enum q42_tok_type), NULL when absent */
	uint32_t n_merges;
	q42_str *merges;      /* "a b" pairs, highest priority first */
	int32_t bos, eos, eot, eom, unk, sep, pad, mask; /* Q42_TOK_NONE when absent */
	int8_t add_bos;       /* -1 absent, 0, 1 */
	int8_t add_eos;
	int8_t add_space_prefix;
	int8_t remove_extra_whitespaces;
	/* tokenizer.ggml.precompiled_charsmap (Unigram normalizer bytes, see
	 * p64(5)); empty when absent */
	q42_str charsmap;
} q42_vocab;

/* Fill *hp from GGUF metadata; fails on a missing architecture or a
 * missing required number (embedding length, block count, head count). */
Q42_API int q42_hparams_from_gguf(q42_hparams *hp, const q42_gguf *g, q42_err *err);

/* Fill *v from tokenizer.ggml.* keys; arrays are allocated (free with
 * q42_vocab_free), strings point into the GGUF mapping. Missing or
 * malformed tokenizer data is an error (Q42_ENOTFOUND / Q42_EFORMAT). */
Q42_API int q42_vocab_from_gguf(q42_vocab *v, const q42_gguf *g, q42_err *err);
Q42_API void q42_vocab_free(q42_vocab *v);

#endif
