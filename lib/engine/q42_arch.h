/* q42_arch.h -- architecture descriptions for the engine.
 *
 * An architecture is data, not code: which weights it has (required,
 * optional, absent), how RoPE pairs dimensions, and its defaults. The
 * forward pass (q42_forward.c) is one sequence of named operations that
 * consults the description; a new family is a new table row plus, where it
 * really computes something new, a new operation -- never a copy of the
 * forward pass. Names are llama.cpp's GGUF tensor names.
 */
#ifndef Q42_ARCH_H
#define Q42_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"

/* RoPE pairing, numbered as ggml numbers its rope modes. */
enum q42_rope_mode {
	Q42_ROPE_NORM = 0, /* pairs (2i, 2i+1) */
	Q42_ROPE_NEOX = 2, /* pairs (i, i + n_rot/2) */
};

/* Every weight the forward pass knows. The first Q42_W_LAYER_FIRST_ are
 * global; the rest exist once per block ("blk.N."). */
enum q42_wslot {
	Q42_W_TOK_EMBD = 0,
	Q42_W_TOK_EMBD_NORM,  /* lfm2's final norm */
	Q42_W_OUTPUT_NORM,
	Q42_W_OUTPUT,
	Q42_W_ROPE_FREQS,
	Q42_W_ROPE_LONG,      /* LongRoPE factors past the original context (phi3) */
	Q42_W_ROPE_SHORT,     /* ... and within it */
	Q42_W_DENSE_2,        /* embeddings: projection after pooling (or per token) */
	Q42_W_DENSE_2_B,
	Q42_W_DENSE_3,        /* ... and the one after it (EmbeddingGemma) */
	Q42_W_POS_EMBD,       /* learned positions, added to the token rows (bert) */
	Q42_W_TOKEN_TYPES,    /* token type rows; type 0 is added (bert) */
	Q42_W_TOK_EMBD_NORM_B,
	Q42_W_LAYER_FIRST_,
	Q42_W_ATTN_NORM = Q42_W_LAYER_FIRST_,
	Q42_W_ATTN_Q,
	Q42_W_ATTN_K,
	Q42_W_ATTN_V,
	Q42_W_ATTN_OUT,
	Q42_W_ATTN_Q_B,
	Q42_W_ATTN_K_B,
	Q42_W_ATTN_V_B,
	Q42_W_ATTN_OUT_B,
	Q42_W_ATTN_QKV,       /* q, k and v rows in one matrix (phi3) */
	Q42_W_ATTN_QKV_B,
	Q42_W_ATTN_Q_NORM,    /* per-head RMSNorm of q and k before RoPE */
	Q42_W_ATTN_K_NORM,
	Q42_W_POST_ATTN_NORM, /* RMSNorm of the attention output before the residual add */
	Q42_W_FFN_NORM,
	Q42_W_FFN_GATE,
	Q42_W_FFN_UP,
	Q42_W_FFN_DOWN,
	Q42_W_FFN_GATE_B,
	Q42_W_FFN_UP_B,
	Q42_W_FFN_DOWN_B,
	Q42_W_POST_FFW_NORM,  /* RMSNorm of the FFN output before the residual add */
	Q42_W_CONV,           /* short convolution (lfm2): depthwise kernel [L, n_embd] */
	Q42_W_CONV_IN,        /* n_embd -> 3 n_embd: B, C, x */
	Q42_W_CONV_OUT,       /* n_embd -> n_embd */
	Q42_W_ATTN_OUT_NORM,  /* post-norm blocks (bert): after attention + residual */
	Q42_W_ATTN_OUT_NORM_B,
	Q42_W_LAYER_OUT_NORM, /* ... and after the FFN + residual */
	Q42_W_LAYER_OUT_NORM_B,
	/* a routed FFN (lfm2moe): the router's matrix n_embd -> n_expert, the
	 * experts' matrices stacked [n_in, n_out, n_expert] as llama.cpp's
	 * converter stacks them, and the selection bias per expert */
	Q42_W_FFN_GATE_INP,
	Q42_W_FFN_GATE_EXPS,
	Q42_W_FFN_UP_EXPS,
	Q42_W_FFN_DOWN_EXPS,
	Q42_W_FFN_EXP_PROBS_B,
	Q42_W_COUNT_
};

enum q42_need {
	Q42_NEED_NO = 0,  /* must not be present */
	Q42_NEED_OPT = 1, /* used when present */
	Q42_NEED_YES = 2, /* the model is refused without it */
};

/* The gated activation of the feed-forward block. */
enum q42_ffn_act {
	Q42_FFN_SWIGLU = 0, /* silu(gate) * up */
	Q42_FFN_GEGLU = 1,  /* gelu(gate) * up, ggml's tanh GELU (kernels/q42_ops.h) */
	Q42_FFN_GELU = 2,   /* gelu(up), no gate (bert) */
};

/* Which weights a block has is part of the description too: a bound
 * q/k norm, post-attention or post-FFN norm, or fused attn_qkv is used
 * where the model has it (need[] says where it may). The flags below are
 * what no weight can say. */
typedef struct q42_arch {
	const char *name;          /* general.architecture */
	enum q42_rope_mode rope;
	float rope_base_default;   /* when <arch>.rope.freq_base is absent */
	/* output.weight absent -> the token embedding is the output matrix */
	bool may_tie_output;
	/* the token embedding row is scaled by sqrt(n_embd) (gemma) */
	bool embd_scale;
	/* q is scaled after RoPE and the attention scores are not (phi3,
	 * gemma3: a different rounding from scaling the scores) */
	bool q_prescale;
	/* ffn_up holds the gate rows 0..n_ff-1, then the up rows (phi3) */
	bool ffn_fused_up;
	/* layers alternate sliding-window and global attention by
	 * <arch>.attention.sliding_window_pattern (gemma3) */
	bool swa_pattern;
	/* <arch>.attention.head_count_kv 0 makes a layer a gated short
	 * convolution instead of attention; sliding_window, when set, applies
	 * to every attention layer (lfm2) */
	bool conv_layers;
	/* the final norm is token_embd_norm, not output_norm (lfm2) */
	bool embd_norm_final;
	/* an encoder: every position attends to every position of its
	 * sequence (gemma-embedding); others are causal unless the model says
	 * <arch>.attention.causal = false (lfm2 retrievers) */
	bool bidirectional;
	/* a sliding window is symmetric: a query sees the positions at most
	 * window/2 before or after its own (gemma-embedding) */
	bool swa_symmetric;
	/* pooling when the model does not say (enum q42_pooling) */
	uint8_t pooling_default;
	/* BERT's block: no norms before attention and the FFN; each adds its
	 * residual and then normalises (attn_output_norm, layer_output_norm);
	 * the token rows plus learned positions (when the model has them)
	 * plus token type 0 go through token_embd_norm first; there is no
	 * final norm */
	bool post_norm;
	/* the norms are LayerNorm with bias (<arch>.attention.layer_norm_epsilon),
	 * not RMSNorm */
	bool layer_norm;
	/* no RoPE: positions are learned (bert) */
	bool no_rope;
	/* the layers from <arch>.leading_dense_block_count on have a routed
	 * FFN of <arch>.expert_count experts instead of the dense one
	 * (lfm2moe) */
	bool moe;
	enum q42_ffn_act ffn_act;
	uint8_t need[Q42_W_COUNT_]; /* enum q42_need per slot */
} q42_arch;

/* How an embedding is pooled from the token rows, numbered as
 * llama.cpp's pooling_type. */
enum q42_pooling {
	Q42_POOLING_NONE = 0, /* one vector per token */
	Q42_POOLING_MEAN = 1,
	Q42_POOLING_CLS = 2,  /* the first token's row */
	Q42_POOLING_LAST = 3, /* the last token's row */
};

/* NULL when the engine has no description for name. */
Q42_API const q42_arch *q42_arch_find(const char *name);
/* Comma-separated names of every supported architecture, for messages. */
Q42_API const char *q42_arch_supported(void);

/* GGUF tensor name of a slot in block layer (ignored for global slots). */
Q42_API int q42_wslot_format(enum q42_wslot s, uint32_t layer, char *buf, size_t cap);
Q42_API bool q42_wslot_is_layer(enum q42_wslot s);
/* Inverse of q42_wslot_format: the slot (and block) a tensor name denotes;
 * false for a name the engine has no slot for. */
Q42_API bool q42_wslot_parse(const char *name, uint64_t len, enum q42_wslot *s,
			     uint32_t *layer);

#endif
