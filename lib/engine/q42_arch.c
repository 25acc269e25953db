/* q42_arch.c -- the table of architectures the engine runs.
 *
 * llama: RMSNorm, RoPE on adjacent pairs, grouped-query attention, SwiGLU;
 * biases and the output matrix optional as llama.cpp allows them. qwen2:
 * the same block with required q/k/v biases and NeoX-ordered RoPE. qwen3:
 * qwen2's block without biases, with per-head RMSNorm of q and k before
 * RoPE (head_dim from attention.key_length). phi3: q, k, v in one matrix,
 * gate and up in one, partial rotary, q scaled before the scores, LongRoPE
 * factors. gemma3: the embedding scaled by sqrt(n_embd), q/k norms, q
 * scaled, norms after attention and after the FFN, GeGLU, sliding-window
 * layers. lfm2: per layer attention (q/k norms) or a gated short
 * convolution, token_embd_norm as the final norm, bidirectional with a
 * centred convolution window when the model says attention.causal =
 * false (LFM2-ColBERT, whose dense_2 projects each token). lfm2moe:
 * lfm2's blocks with a routed FFN after the leading dense ones.
 * gemma-embedding: gemma3's block as an encoder. bert, nomic-bert:
 * post-norm encoders with LayerNorm. The facts are llama.cpp's
 * (src/models/<arch>.cpp). Anything not
 * listed here is refused by name when a model is mounted for running.
 */
#include <stdio.h>
#include <string.h>
#include "engine/q42_arch.h"

static const char *const slot_stem[Q42_W_COUNT_] = {
	[Q42_W_TOK_EMBD] = "token_embd.weight",
	[Q42_W_TOK_EMBD_NORM] = "token_embd_norm.weight",
	[Q42_W_OUTPUT_NORM] = "output_norm.weight",
	[Q42_W_OUTPUT] = "output.weight",
	[Q42_W_ROPE_FREQS] = "rope_freqs.weight",
	[Q42_W_ROPE_LONG] = "rope_factors_long.weight",
	[Q42_W_ROPE_SHORT] = "rope_factors_short.weight",
	[Q42_W_DENSE_2] = "dense_2.weight",
	[Q42_W_DENSE_2_B] = "dense_2.bias",
	[Q42_W_DENSE_3] = "dense_3.weight",
	[Q42_W_POS_EMBD] = "position_embd.weight",
	[Q42_W_TOKEN_TYPES] = "token_types.weight",
	[Q42_W_TOK_EMBD_NORM_B] = "token_embd_norm.bias",
	[Q42_W_ATTN_NORM] = "attn_norm.weight",
	[Q42_W_ATTN_Q] = "attn_q.weight",
	[Q42_W_ATTN_K] = "attn_k.weight",
	[Q42_W_ATTN_V] = "attn_v.weight",
	[Q42_W_ATTN_OUT] = "attn_output.weight",
	[Q42_W_ATTN_Q_B] = "attn_q.bias",
	[Q42_W_ATTN_K_B] = "attn_k.bias",
	[Q42_W_ATTN_V_B] = "attn_v.bias",
	[Q42_W_ATTN_OUT_B] = "attn_output.bias",
	[Q42_W_ATTN_QKV] = "attn_qkv.weight",
	[Q42_W_ATTN_QKV_B] = "attn_qkv.bias",
	[Q42_W_ATTN_Q_NORM] = "attn_q_norm.weight",
	[Q42_W_ATTN_K_NORM] = "attn_k_norm.weight",
	[Q42_W_POST_ATTN_NORM] = "post_attention_norm.weight",
	[Q42_W_FFN_NORM] = "ffn_norm.weight",
	[Q42_W_FFN_GATE] = "ffn_gate.weight",
	[Q42_W_FFN_UP] = "ffn_up.weight",
	[Q42_W_FFN_DOWN] = "ffn_down.weight",
	[Q42_W_FFN_GATE_B] = "ffn_gate.bias",
	[Q42_W_FFN_UP_B] = "ffn_up.bias",
	[Q42_W_FFN_DOWN_B] = "ffn_down.bias",
	[Q42_W_POST_FFW_NORM] = "post_ffw_norm.weight",
	[Q42_W_CONV] = "shortconv.conv.weight",
	[Q42_W_CONV_IN] = "shortconv.in_proj.weight",
	[Q42_W_CONV_OUT] = "shortconv.out_proj.weight",
	[Q42_W_ATTN_OUT_NORM] = "attn_output_norm.weight",
	[Q42_W_ATTN_OUT_NORM_B] = "attn_output_norm.bias",
	[Q42_W_LAYER_OUT_NORM] = "layer_output_norm.weight",
	[Q42_W_LAYER_OUT_NORM_B] = "layer_output_norm.bias",
	[Q42_W_FFN_GATE_INP] = "ffn_gate_inp.weight",
	[Q42_W_FFN_GATE_EXPS] = "ffn_gate_exps.weight",
	[Q42_W_FFN_UP_EXPS] = "ffn_up_exps.weight",
	[Q42_W_FFN_DOWN_EXPS] = "ffn_down_exps.weight",
	[Q42_W_FFN_EXP_PROBS_B] = "exp_probs_b.bias",
};

#define REQ Q42_NEED_YES
#define OPT Q42_NEED_OPT
/* What the newer decoders share: embedding, final norm, optional output
 * matrix, the block's norms, output projection, up and down; q, k and v
 * separate with optional biases, or fused in attn_qkv (llama.cpp's
 * create_tensor_qkv allows either for each of them). */
#define DECODER \
	[Q42_W_TOK_EMBD] = REQ, [Q42_W_OUTPUT_NORM] = REQ, [Q42_W_OUTPUT] = OPT, \
	[Q42_W_ATTN_NORM] = REQ, [Q42_W_ATTN_OUT] = REQ, [Q42_W_FFN_NORM] = REQ, \
	[Q42_W_FFN_UP] = REQ, [Q42_W_FFN_DOWN] = REQ
#define QKV_ANY \
	[Q42_W_ATTN_Q] = REQ, [Q42_W_ATTN_K] = REQ, [Q42_W_ATTN_V] = REQ, \
	[Q42_W_ATTN_Q_B] = OPT, [Q42_W_ATTN_K_B] = OPT, [Q42_W_ATTN_V_B] = OPT, \
	[Q42_W_ATTN_QKV] = OPT, [Q42_W_ATTN_QKV_B] = OPT

/* gemma3's block: q/k norms, norms after attention and after the FFN. */
#define GEMMA3_BLOCK \
	DECODER, QKV_ANY, [Q42_W_ATTN_Q_NORM] = REQ, [Q42_W_ATTN_K_NORM] = REQ, \
	[Q42_W_POST_ATTN_NORM] = REQ, [Q42_W_FFN_GATE] = REQ, [Q42_W_POST_FFW_NORM] = REQ

/* BERT's encoder: embeddings normalised, post-norm blocks with biased
 * LayerNorms, attention and output biases optional. */
#define BERT_BLOCK \
	[Q42_W_TOK_EMBD] = REQ, [Q42_W_TOKEN_TYPES] = OPT, [Q42_W_TOK_EMBD_NORM] = REQ, \
	[Q42_W_TOK_EMBD_NORM_B] = REQ, QKV_ANY, [Q42_W_ATTN_OUT] = REQ, [Q42_W_ATTN_OUT_B] = OPT, \
	[Q42_W_ATTN_OUT_NORM] = REQ, [Q42_W_ATTN_OUT_NORM_B] = REQ, [Q42_W_FFN_UP] = REQ, \
	[Q42_W_FFN_DOWN] = REQ, [Q42_W_FFN_UP_B] = OPT, [Q42_W_FFN_DOWN_B] = OPT, \
	[Q42_W_LAYER_OUT_NORM] = REQ, [Q42_W_LAYER_OUT_NORM_B] = REQ
/* lfm2's weights: attention (q/k norms) or short-convolution mixers,
 * the dense FFN, token_embd_norm as the final norm */
#define LFM2_BLOCK \
	[Q42_W_TOK_EMBD] = REQ, [Q42_W_TOK_EMBD_NORM] = REQ, [Q42_W_OUTPUT] = OPT, \
	[Q42_W_ATTN_NORM] = REQ, [Q42_W_ATTN_OUT] = REQ, QKV_ANY, \
	[Q42_W_ATTN_Q_NORM] = REQ, [Q42_W_ATTN_K_NORM] = REQ, \
	[Q42_W_CONV] = REQ, [Q42_W_CONV_IN] = REQ, [Q42_W_CONV_OUT] = REQ, \
	[Q42_W_FFN_NORM] = REQ, [Q42_W_FFN_GATE] = REQ, [Q42_W_FFN_UP] = REQ, \
	[Q42_W_FFN_DOWN] = REQ

static const q42_arch archs[] = {
	{
		.name = "llama",
		.rope = Q42_ROPE_NORM,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.need = {
			[Q42_W_TOK_EMBD] = REQ, [Q42_W_OUTPUT_NORM] = REQ,
			[Q42_W_OUTPUT] = OPT, [Q42_W_ROPE_FREQS] = OPT,
			[Q42_W_ATTN_NORM] = REQ, [Q42_W_ATTN_Q] = REQ, [Q42_W_ATTN_K] = REQ,
			[Q42_W_ATTN_V] = REQ, [Q42_W_ATTN_OUT] = REQ,
			[Q42_W_ATTN_Q_B] = OPT, [Q42_W_ATTN_K_B] = OPT, [Q42_W_ATTN_V_B] = OPT,
			[Q42_W_ATTN_OUT_B] = OPT,
			[Q42_W_FFN_NORM] = REQ, [Q42_W_FFN_GATE] = REQ, [Q42_W_FFN_UP] = REQ,
			[Q42_W_FFN_DOWN] = REQ,
			[Q42_W_FFN_GATE_B] = OPT, [Q42_W_FFN_UP_B] = OPT, [Q42_W_FFN_DOWN_B] = OPT,
		},
	},
	{
		.name = "qwen2",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.need = {
			[Q42_W_TOK_EMBD] = REQ, [Q42_W_OUTPUT_NORM] = REQ, [Q42_W_OUTPUT] = OPT,
			[Q42_W_ATTN_NORM] = REQ, [Q42_W_ATTN_Q] = REQ, [Q42_W_ATTN_K] = REQ,
			[Q42_W_ATTN_V] = REQ, [Q42_W_ATTN_OUT] = REQ,
			[Q42_W_ATTN_Q_B] = REQ, [Q42_W_ATTN_K_B] = REQ, [Q42_W_ATTN_V_B] = REQ,
			[Q42_W_FFN_NORM] = REQ, [Q42_W_FFN_GATE] = REQ, [Q42_W_FFN_UP] = REQ,
			[Q42_W_FFN_DOWN] = REQ,
		},
	},
	{
		/* src/models/qwen3.cpp */
		.name = "qwen3",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.need = {
			DECODER, QKV_ANY,
			[Q42_W_ATTN_Q_NORM] = REQ, [Q42_W_ATTN_K_NORM] = REQ,
			[Q42_W_FFN_GATE] = REQ,
		},
	},
	{
		/* src/models/phi3.cpp (its MoE branch is phimoe's, not run) */
		.name = "phi3",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.q_prescale = true,
		.ffn_fused_up = true,
		.need = {
			DECODER, QKV_ANY,
			[Q42_W_ROPE_LONG] = OPT, [Q42_W_ROPE_SHORT] = OPT,
		},
	},
	{
		/* src/models/gemma3.cpp */
		.name = "gemma3",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.embd_scale = true,
		.q_prescale = true,
		.swa_pattern = true,
		.ffn_act = Q42_FFN_GEGLU,
		.need = {GEMMA3_BLOCK},
	},
	{
		/* src/models/gemma-embedding.cpp: gemma3's block, attention
		 * over the whole sequence (sliding-window layers symmetric),
		 * q scaled by 1/sqrt(head size), mean pooling, then the
		 * sentence-transformers projections dense_2 and dense_3 */
		.name = "gemma-embedding",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.embd_scale = true,
		.q_prescale = true,
		.swa_pattern = true,
		.bidirectional = true,
		.swa_symmetric = true,
		.pooling_default = Q42_POOLING_MEAN,
		.ffn_act = Q42_FFN_GEGLU,
		.need = {GEMMA3_BLOCK, [Q42_W_DENSE_2] = OPT, [Q42_W_DENSE_3] = OPT},
	},
	{
		/* src/models/bert.cpp: learned positions, token type 0, GELU
		 * FFN with biases, CLS pooling */
		.name = "bert",
		.rope = Q42_ROPE_NEOX,
		.may_tie_output = true, /* no output matrix: nothing reads it */
		.bidirectional = true,
		.pooling_default = Q42_POOLING_CLS,
		.post_norm = true,
		.layer_norm = true,
		.no_rope = true,
		.ffn_act = Q42_FFN_GELU,
		.need = {BERT_BLOCK, [Q42_W_POS_EMBD] = REQ},
	},
	{
		/* src/models/bert.cpp (nomic-bert): bert's block with NeoX RoPE
		 * instead of learned positions and a SwiGLU FFN, mean pooling */
		.name = "nomic-bert",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.bidirectional = true,
		.pooling_default = Q42_POOLING_MEAN,
		.post_norm = true,
		.layer_norm = true,
		.need = {BERT_BLOCK, [Q42_W_FFN_GATE] = REQ},
	},
	{
		/* src/models/lfm2.cpp: a block's mixer is attention (q/k
		 * norms) or the short convolution, by its head_count_kv; a
		 * requirement of one kind holds in the layers of that kind
		 * (q42_engine.c) */
		.name = "lfm2",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.conv_layers = true,
		.embd_norm_final = true,
		.need = {
			LFM2_BLOCK,
			[Q42_W_DENSE_2] = OPT, [Q42_W_DENSE_2_B] = OPT,
		},
	},
	{
		/* src/models/lfm2moe.cpp, llm_graph_context::build_moe_ffn:
		 * lfm2's blocks; past the leading dense ones the FFN is
		 * routed (the dense and routed requirements hold in the
		 * layers of their kind, q42_engine.c) */
		.name = "lfm2moe",
		.rope = Q42_ROPE_NEOX,
		.rope_base_default = 10000.0f,
		.may_tie_output = true,
		.conv_layers = true,
		.embd_norm_final = true,
		.moe = true,
		.need = {
			LFM2_BLOCK,
			[Q42_W_FFN_GATE_INP] = REQ, [Q42_W_FFN_GATE_EXPS] = REQ,
			[Q42_W_FFN_UP_EXPS] = REQ, [Q42_W_FFN_DOWN_EXPS] = REQ,
			[Q42_W_FFN_EXP_PROBS_B] = REQ,
		},
	},
};

const q42_arch *q42_arch_find(const char *name)
{
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
		if (strcmp(archs[i].name, name) == 0)
			return &archs[i];
	return NULL;
}

/* Keep in step with archs[] above. */
const char *q42_arch_supported(void)
{
	return "llama, qwen2, qwen3, phi3, gemma3, gemma-embedding, bert, nomic-bert, lfm2, lfm2moe";
}

bool q42_wslot_is_layer(enum q42_wslot s)
{
	return s >= Q42_W_LAYER_FIRST_ && s < Q42_W_COUNT_;
}

int q42_wslot_format(enum q42_wslot s, uint32_t layer, char *buf, size_t cap)
{
	if ((unsigned)s >= Q42_W_COUNT_)
		return snprintf(buf, cap, "?");
	if (q42_wslot_is_layer(s))
		return snprintf(buf, cap, "blk.%u.%s", layer, slot_stem[s]);
	return snprintf(buf, cap, "%s", slot_stem[s]);
}

bool q42_wslot_parse(const char *name, uint64_t len, enum q42_wslot *s, uint32_t *layer)
{
	uint64_t i = 0, l = 0;
	enum q42_wslot first = Q42_W_TOK_EMBD, end = Q42_W_LAYER_FIRST_;

	*layer = 0;
	if (len > 4 && memcmp(name, "blk.", 4) == 0) {
		i = 4;
		if (i >= len || name[i] < '0' || name[i] > '9' || (name[i] == '0' && i + 1 < len &&
								   name[i + 1] != '.'))
			return false;
		while (i < len && name[i] >= '0' && name[i] <= '9') {
			l = l * 10 + (uint64_t)(name[i] - '0');
			if (l > UINT32_MAX)
				return false;
			i++;
		}
		if (i >= len || name[i] != '.')
			return false;
		i++;
		*layer = (uint32_t)l;
		first = Q42_W_LAYER_FIRST_;
		end = Q42_W_COUNT_;
	}
	for (enum q42_wslot k = first; k < end; k++) {
		size_t sl = strlen(slot_stem[k]);
		if (len - i == sl && memcmp(name + i, slot_stem[k], sl) == 0) {
			*s = k;
			return true;
		}
	}
	return false;
}
