/* q42_roles.c -- tensor name -> engine role and layer (see q42_roles.h).
 *
 * One table maps name stems to roles; global names are matched whole,
 * layer names as "blk.<N>.<stem>.<suffix>". The stems follow the names
 * llama.cpp gives tensors of the llama, qwen2/qwen3, gemma 1-3, phi3 and
 * lfm2 architectures. Never reads past len: names need not be terminated.
 */
#include <string.h>
#include "formats/q42_roles.h"

struct stem {
	const char *stem;
	uint32_t weight; /* role of "<stem>.weight" (UNKNOWN when none) */
	uint32_t bias;   /* role of "<stem>.bias" (UNKNOWN when none) */
};

static const struct stem global_stems[] = {
	{"token_embd", Q42_ROLE_TOKEN_EMBD, Q42_ROLE_UNKNOWN},
	{"token_embd_norm", Q42_ROLE_TOKEN_EMBD_NORM, Q42_ROLE_UNKNOWN},
	{"output_norm", Q42_ROLE_OUTPUT_NORM, Q42_ROLE_UNKNOWN},
	{"output", Q42_ROLE_OUTPUT, Q42_ROLE_OUTPUT_BIAS},
	{"rope_freqs", Q42_ROLE_ROPE_FREQS, Q42_ROLE_UNKNOWN},
	{"rope_factors_long", Q42_ROLE_ROPE_FACTORS_LONG, Q42_ROLE_UNKNOWN},
	{"rope_factors_short", Q42_ROLE_ROPE_FACTORS_SHORT, Q42_ROLE_UNKNOWN},
};

static const struct stem layer_stems[] = {
	{"attn_norm", Q42_ROLE_ATTN_NORM, Q42_ROLE_UNKNOWN},
	{"attn_q", Q42_ROLE_ATTN_Q, Q42_ROLE_ATTN_Q_BIAS},
	{"attn_k", Q42_ROLE_ATTN_K, Q42_ROLE_ATTN_K_BIAS},
	{"attn_v", Q42_ROLE_ATTN_V, Q42_ROLE_ATTN_V_BIAS},
	{"attn_qkv", Q42_ROLE_ATTN_QKV, Q42_ROLE_ATTN_QKV_BIAS},
	{"attn_output", Q42_ROLE_ATTN_OUT, Q42_ROLE_ATTN_OUT_BIAS},
	{"attn_q_norm", Q42_ROLE_ATTN_Q_NORM, Q42_ROLE_UNKNOWN},
	{"attn_k_norm", Q42_ROLE_ATTN_K_NORM, Q42_ROLE_UNKNOWN},
	{"post_attention_norm", Q42_ROLE_POST_ATTN_NORM, Q42_ROLE_UNKNOWN},
	{"ffn_norm", Q42_ROLE_FFN_NORM, Q42_ROLE_UNKNOWN},
	{"ffn_gate", Q42_ROLE_FFN_GATE, Q42_ROLE_FFN_GATE_BIAS},
	{"ffn_up", Q42_ROLE_FFN_UP, Q42_ROLE_FFN_UP_BIAS},
	{"ffn_down", Q42_ROLE_FFN_DOWN, Q42_ROLE_FFN_DOWN_BIAS},
	{"post_ffw_norm", Q42_ROLE_POST_FFW_NORM, Q42_ROLE_UNKNOWN},
	{"ffn_gate_inp", Q42_ROLE_FFN_GATE_INP, Q42_ROLE_UNKNOWN},
	{"ffn_gate_exps", Q42_ROLE_FFN_GATE_EXPS, Q42_ROLE_UNKNOWN},
	{"ffn_up_exps", Q42_ROLE_FFN_UP_EXPS, Q42_ROLE_UNKNOWN},
	{"ffn_down_exps", Q42_ROLE_FFN_DOWN_EXPS, Q42_ROLE_UNKNOWN},
	{"shortconv.conv", Q42_ROLE_SHORTCONV_CONV, Q42_ROLE_UNKNOWN},
	{"shortconv.in_proj", Q42_ROLE_SHORTCONV_IN_PROJ, Q42_ROLE_UNKNOWN},
	{"shortconv.out_proj", Q42_ROLE_SHORTCONV_OUT_PROJ, Q42_ROLE_UNKNOWN},
};

static const char *const role_names[Q42_ROLE_COUNT_] = {
	[Q42_ROLE_UNKNOWN] = "unknown",
	[Q42_ROLE_TOKEN_EMBD] = "token_embd",
	[Q42_ROLE_TOKEN_EMBD_NORM] = "token_embd_norm",
	[Q42_ROLE_OUTPUT_NORM] = "output_norm",
	[Q42_ROLE_OUTPUT] = "output",
	[Q42_ROLE_ROPE_FREQS] = "rope_freqs",
	[Q42_ROLE_ROPE_FACTORS_LONG] = "rope_factors_long",
	[Q42_ROLE_ROPE_FACTORS_SHORT] = "rope_factors_short",
	[Q42_ROLE_ATTN_NORM] = "attn_norm",
	[Q42_ROLE_ATTN_Q] = "attn_q",
	[Q42_ROLE_ATTN_K] = "attn_k",
	[Q42_ROLE_ATTN_V] = "attn_v",
	[Q42_ROLE_ATTN_QKV] = "attn_qkv",
	[Q42_ROLE_ATTN_OUT] = "attn_output",
	[Q42_ROLE_ATTN_Q_BIAS] = "attn_q_bias",
	[Q42_ROLE_ATTN_K_BIAS] = "attn_k_bias",
	[Q42_ROLE_ATTN_V_BIAS] = "attn_v_bias",
	[Q42_ROLE_ATTN_QKV_BIAS] = "attn_qkv_bias",
	[Q42_ROLE_ATTN_OUT_BIAS] = "attn_output_bias",
	[Q42_ROLE_ATTN_Q_NORM] = "attn_q_norm",
	[Q42_ROLE_ATTN_K_NORM] = "attn_k_norm",
	[Q42_ROLE_POST_ATTN_NORM] = "post_attention_norm",
	[Q42_ROLE_FFN_NORM] = "ffn_norm",
	[Q42_ROLE_FFN_GATE] = "ffn_gate",
	[Q42_ROLE_FFN_UP] = "ffn_up",
	[Q42_ROLE_FFN_DOWN] = "ffn_down",
	[Q42_ROLE_FFN_GATE_BIAS] = "ffn_gate_bias",
	[Q42_ROLE_FFN_UP_BIAS] = "ffn_up_bias",
	[Q42_ROLE_FFN_DOWN_BIAS] = "ffn_down_bias",
	[Q42_ROLE_POST_FFW_NORM] = "post_ffw_norm",
	[Q42_ROLE_FFN_GATE_INP] = "ffn_gate_inp",
	[Q42_ROLE_FFN_GATE_EXPS] = "ffn_gate_exps",
	[Q42_ROLE_FFN_UP_EXPS] = "ffn_up_exps",
	[Q42_ROLE_FFN_DOWN_EXPS] = "ffn_down_exps",
	[Q42_ROLE_SHORTCONV_CONV] = "shortconv_conv",
	[Q42_ROLE_SHORTCONV_IN_PROJ] = "shortconv_in_proj",
	[Q42_ROLE_SHORTCONV_OUT_PROJ] = "shortconv_out_proj",
	[Q42_ROLE_OUTPUT_BIAS] = "output_bias",
};

/* Match "<stem>.weight" or "<stem>.bias" against s[0, n) exactly. */
static uint32_t match_stems(const struct stem *tab, size_t count, const char *s, uint64_t n)
{
	for (size_t i = 0; i < count; i++) {
		size_t sl = strlen(tab[i].stem);
		if (n <= sl || memcmp(s, tab[i].stem, sl) != 0 || s[sl] != '.')
			continue;
		const char *suf = s + sl + 1;
		uint64_t rest = n - sl - 1;
		if (rest == 6 && memcmp(suf, "weight", 6) == 0)
			return tab[i].weight;
		if (rest == 4 && memcmp(suf, "bias", 4) == 0)
			return tab[i].bias;
	}
	return Q42_ROLE_UNKNOWN;
}

uint32_t q42_role_classify(const char *name, uint64_t len, int32_t *layer)
{
	*layer = -1;
	if (len > 4 && memcmp(name, "blk.", 4) == 0) {
		uint64_t i = 4;
		uint32_t n = 0;
		if (i >= len || name[i] < '0' || name[i] > '9')
			return Q42_ROLE_UNKNOWN;
		/* Reject leading zeros so each layer has exactly one spelling. */
		if (name[i] == '0' && i + 1 < len && name[i + 1] != '.')
			return Q42_ROLE_UNKNOWN;
		while (i < len && name[i] >= '0' && name[i] <= '9') {
			n = n * 10 + (uint32_t)(name[i] - '0');
			if (n >= Q42_ROLE_MAX_LAYER)
				return Q42_ROLE_UNKNOWN;
			i++;
		}
		if (i >= len || name[i] != '.')
			return Q42_ROLE_UNKNOWN;
		i++;
		*layer = (int32_t)n;
		return match_stems(layer_stems, sizeof layer_stems / sizeof layer_stems[0], name + i,
				   len - i);
	}
	return match_stems(global_stems, sizeof global_stems / sizeof global_stems[0], name, len);
}

const char *q42_role_name(uint32_t role)
{
	return role < Q42_ROLE_COUNT_ ? role_names[role] : "?";
}

int q42_role_is_layer(uint32_t role)
{
	return role >= Q42_ROLE_ATTN_NORM && role < Q42_ROLE_COUNT_ && role != Q42_ROLE_OUTPUT_BIAS;
}
