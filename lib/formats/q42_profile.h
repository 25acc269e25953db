/* q42_profile.h -- transcoding into P64: output dtypes (--type), quantized
 * profiles (--profile), weight quantizers, and the two drivers that compile
 * a Hugging Face input or a GGUF into a non-byte-preserving P64.
 *
 * Which tensor gets which dtype is decided by q42_profile_target from its
 * role, rank and row length alone, so the rule is the same for every input
 * (p64c(1), "PROFILES"). The drivers hold one tensor at a time. Nothing
 * here prints.
 */
#ifndef Q42_PROFILE_H
#define Q42_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/q42_err.h"
#include "formats/q42_gguf.h"
#include "formats/q42_lora.h"
#include "formats/q42_p64.h"

enum q42_profile_id {
	Q42_PROFILE_NONE = 0,
	Q42_PROFILE_FFN_Q4_0 = 1, /* ffn_gate/up/down (and _exps) -> Q4_0 */
	Q42_PROFILE_FFN_TQ = 2,   /* the same -> TQ2_0, ternary with absmean scale */
	Q42_PROFILE_Q8_0 = 3,     /* every tensor of rank >= 2 -> Q8_0 */
};

/* "ffn-q4_0", "ffn-tq", "q8_0" (and "none"); -1 when unknown. */
Q42_API int q42_profile_from_name(const char *name);
Q42_API const char *q42_profile_name(uint32_t profile);

/* The dtype a tensor gets. type is the --type (F32, F16, BF16 or Q8_0), or
 * -1 to keep each tensor's source dtype. Only F32, F16 and BF16 sources are
 * converted (others are carried as they are); rank-1 tensors become F32
 * when a type is given; a quantized dtype whose block does not divide the
 * row (dims[0]) falls back to the float dtype the tensor would have had. */
Q42_API uint32_t q42_profile_target(uint32_t profile, int32_t type, uint32_t src_dtype,
				    uint32_t role, uint32_t rank, uint64_t row_elems);

/* Weight quantizers (n a multiple of the block). Q4_0 follows ggml's
 * reference rule: d = v / -8 for the element v of largest magnitude,
 * q = min(15, (int)(x / d + 8.5)). TQ2_0 is BitNet b1.58's: per block of
 * 256, d = mean |x| (stored as f16), q = clamp(round(x / d), -1, 1), laid
 * out as ggml's TQ2_0 (2 bits per value, value + 1, then d). */
Q42_API void q42_quantize_q4_0(const float *src, void *dst, int64_t n);
Q42_API void q42_quantize_tq2_0(const float *src, void *dst, int64_t n);

/* Convert n elements from src_dtype to dst_dtype (any dtype with a
 * dequantizer to F32, F16, BF16, Q8_0, Q4_0 or TQ2_0), adding 1 to every
 * value first when add_one. Q42_EUNSUPPORTED when a side has no kernel. */
Q42_API int q42_convert(uint32_t src_dtype, const void *src, uint32_t dst_dtype, void *dst,
			uint64_t n, bool add_one, q42_err *err);

/* The longest PROV policy a transcode writes: the words, and per adapter
 * " lora=" HEX ":" SCALE. */
#define Q42_TRANSCODE_POLICY_MAX (96u + Q42_LORA_MAX * 96u)

typedef struct q42_transcode_opts {
	int32_t type;      /* -1 keep, else Q42_DTYPE_F32/F16/BF16/Q8_0 */
	uint32_t profile;  /* enum q42_profile_id */
	q42_p64_write_opts write;
	/* LoRA adapters merged into the weights, in order (at most
	 * Q42_LORA_MAX): each adapted tensor becomes W + f B.A (f32, as
	 * llama-export-lora computes it; q42_lora_merge), stored in the
	 * tensor's target dtype where the writer can quantize to it, else
	 * F16 (as llama-export-lora stores every non-F32 tensor). Every pair
	 * must fit a tensor of the input (architecture, name, shape). */
	const q42_lora *const *lora;
	const float *lora_scale;
	uint32_t n_lora;
} q42_transcode_opts;

typedef struct q42_transcode_report {
	q42_p64_write_report w;     /* bytes, tensors, flags, source digest, notes */
	uint64_t n_rewritten;       /* tensors whose dtype changed */
	uint64_t n_misfit;          /* kept in a float dtype: row not a whole number of blocks */
	uint64_t max_tensor_bytes;  /* largest source tensor */
	uint32_t n_files;           /* Safetensors files read */
	const char *input_kind;     /* "gguf", "safetensors", "folder", "archive" */
	char policy[Q42_TRANSCODE_POLICY_MAX]; /* the PROV policy written */
	uint64_t n_merged;          /* tensors with adapters merged in */
} q42_transcode_report;

/* Compile a .safetensors file, HF folder or archive (see q42_safetensors.h).
 * Hyperparameters and tokenizer come from config.json and tokenizer.json;
 * when absent or of an unsupported family the result is a raw transcode
 * (notes in rep->w say why). Errors: Q42_EFORMAT bad input, Q42_EUNSUPPORTED
 * a dtype or rank P64 cannot carry, Q42_EARG out is not seekable, Q42_EIO. */
Q42_API int q42_transcode_hf(const char *path, const q42_transcode_opts *o, FILE *out,
			     q42_transcode_report *rep, q42_err *err);

/* Compile a parsed GGUF with --type/--profile applied: same tensors and
 * names, metadata from the GGUF, no GGUF section (not byte-preserving). */
Q42_API int q42_transcode_gguf(const q42_gguf *g, const q42_transcode_opts *o, FILE *out,
			       q42_transcode_report *rep, q42_err *err);

#endif
