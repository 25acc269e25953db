/* q42_roles.h -- what a tensor is for, from its GGUF name.
 *
 * The engine role and layer of a tensor are derived from llama.cpp's tensor
 * naming ("blk.<layer>.<stem>.<weight|bias>", "token_embd.weight", ...) and
 * stored in P64 descriptors. The numeric values are part of the file format
 * (p64(5), "Roles"): never renumber, only append. A name that matches no
 * known pattern gets Q42_ROLE_UNKNOWN and its tensor is still carried.
 */
#ifndef Q42_ROLES_H
#define Q42_ROLES_H

#include <stdint.h>
#include "common/q42_err.h"

enum q42_role {
	Q42_ROLE_UNKNOWN = 0,
	Q42_ROLE_TOKEN_EMBD = 1,
	Q42_ROLE_TOKEN_EMBD_NORM = 2,
	Q42_ROLE_OUTPUT_NORM = 3,
	Q42_ROLE_OUTPUT = 4,
	Q42_ROLE_ROPE_FREQS = 5,
	Q42_ROLE_ROPE_FACTORS_LONG = 6,
	Q42_ROLE_ROPE_FACTORS_SHORT = 7,
	Q42_ROLE_ATTN_NORM = 8,
	Q42_ROLE_ATTN_Q = 9,
	Q42_ROLE_ATTN_K = 10,
	Q42_ROLE_ATTN_V = 11,
	Q42_ROLE_ATTN_QKV = 12,
	Q42_ROLE_ATTN_OUT = 13,
	Q42_ROLE_ATTN_Q_BIAS = 14,
	Q42_ROLE_ATTN_K_BIAS = 15,
	Q42_ROLE_ATTN_V_BIAS = 16,
	Q42_ROLE_ATTN_QKV_BIAS = 17,
	Q42_ROLE_ATTN_OUT_BIAS = 18,
	Q42_ROLE_ATTN_Q_NORM = 19,
	Q42_ROLE_ATTN_K_NORM = 20,
	Q42_ROLE_POST_ATTN_NORM = 21,
	Q42_ROLE_FFN_NORM = 22,
	Q42_ROLE_FFN_GATE = 23,
	Q42_ROLE_FFN_UP = 24,
	Q42_ROLE_FFN_DOWN = 25,
	Q42_ROLE_FFN_GATE_BIAS = 26,
	Q42_ROLE_FFN_UP_BIAS = 27,
	Q42_ROLE_FFN_DOWN_BIAS = 28,
	Q42_ROLE_POST_FFW_NORM = 29,
	Q42_ROLE_FFN_GATE_INP = 30,
	Q42_ROLE_FFN_GATE_EXPS = 31,
	Q42_ROLE_FFN_UP_EXPS = 32,
	Q42_ROLE_FFN_DOWN_EXPS = 33,
	Q42_ROLE_SHORTCONV_CONV = 34,
	Q42_ROLE_SHORTCONV_IN_PROJ = 35,
	Q42_ROLE_SHORTCONV_OUT_PROJ = 36,
	Q42_ROLE_OUTPUT_BIAS = 37,
	Q42_ROLE_COUNT_ = 38
};

/* Classify a tensor name (len bytes, need not be NUL-terminated). Returns
 * the role and sets *layer to N for any name starting "blk.N." (N a plain
 * decimal without leading zeros, below Q42_ROLE_MAX_LAYER), even when the
 * rest is unknown, and to -1 otherwise. */
#define Q42_ROLE_MAX_LAYER 65536
Q42_API uint32_t q42_role_classify(const char *name, uint64_t len, int32_t *layer);

/* Short stable name of a role ("attn_q", "ffn_down_exps", "unknown");
 * "?" when role is out of range. */
Q42_API const char *q42_role_name(uint32_t role);

/* True when role is meaningful inside a layer (blk.N.*). */
Q42_API int q42_role_is_layer(uint32_t role);

#endif
