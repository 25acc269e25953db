/* q42_lora.h -- LoRA adapters as llama.cpp ships them: a GGUF file with
 * general.type "adapter", adapter.type "lora", adapter.lora.alpha and, for
 * each adapted tensor NAME of the base model, NAME.lora_a and NAME.lora_b
 * (q42run(1) and p64c(1), "LORA ADAPTERS", say what is accepted).
 *
 * The adapter is opened through q42_source (the reader models go
 * through) and validated as a file here; whether it fits a model --
 * architecture, tensor names, shapes -- is the engine's check
 * (engine/q42_engine.h) and p64c's, which know the model. Nothing here
 * prints.
 */
#ifndef Q42_LORA_H
#define Q42_LORA_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_digest.h"
#include "formats/q42_source.h"

/* The most adapters one run or one merge takes. */
#define Q42_LORA_MAX 16u

typedef struct q42_lora q42_lora;

/* One adapted tensor: base names the model tensor (NAME without the
 * suffix), a and b are NAME.lora_a and NAME.lora_b as the file holds them. */
typedef struct q42_lora_pair {
	q42_str base;
	q42_source_tensor a, b;
} q42_lora_pair;

/* Open path as an adapter: a GGUF file, or a Hugging Face PEFT folder
 * (q42_lora_open_model). Q42_EIO when it cannot be read, Q42_EFORMAT
 * when it is not a GGUF adapter of type lora (general.type,
 * adapter.type), a tensor has a suffix other than .lora_a, .lora_b or
 * _norm.weight (those are skipped, as llama.cpp skips them), a pair lacks
 * one of its tensors or has one twice, or a tensor is not 2-D. */
Q42_API int q42_lora_open(q42_lora **out, const char *path, q42_err *err);
/* As q42_lora_open, and path may also be a PEFT folder
 * (adapter_config.json, adapter_model.safetensors), read as llama.cpp's
 * convert_lora_to_gguf.py converts one for the model at model_path (GGUF
 * or P64, whose hyperparameters give the architecture and heads): the
 * Hugging Face names of the lora_A/lora_B pairs mapped to the model's
 * tensor names (formats/q42_hf.h; lora_B's rows of a llama q or k
 * projection permuted), lora_alpha as alpha, the architecture the model's.
 * Its digest is that of the folder as p64(5) defines it for a Safetensors
 * folder, over the two files. Q42_EUNSUPPORTED for PEFT options llama.cpp
 * does not apply (use_rslora, fan_in_fan_out, a dtype other than F32,
 * F16, BF16) or an architecture the Hugging Face mapping lacks;
 * Q42_EFORMAT for a name that maps to no tensor. */
Q42_API int q42_lora_open_model(q42_lora **out, const char *path, const char *model_path,
				q42_err *err);
Q42_API void q42_lora_close(q42_lora *l);

Q42_API const char *q42_lora_path(const q42_lora *l);
/* general.architecture ("" when absent). */
Q42_API const char *q42_lora_arch(const q42_lora *l);
/* adapter.lora.alpha, 0 when absent (then the scale alone applies). */
Q42_API float q42_lora_alpha(const q42_lora *l);
/* SHA-256 of the adapter file, lower-case hex. */
Q42_API const char *q42_lora_sha256(const q42_lora *l);
Q42_API uint64_t q42_lora_n_pairs(const q42_lora *l);
/* Pair i (i < q42_lora_n_pairs), in the file's order of lora_a tensors. */
Q42_API const q42_lora_pair *q42_lora_pair_at(const q42_lora *l, uint64_t i);
/* The pair adapting tensor name; NULL when the adapter has none. */
Q42_API const q42_lora_pair *q42_lora_find(const q42_lora *l, const char *name);

/* The factor llama.cpp puts in front of B.(A.x) for a pair:
 * scale * alpha / rank with rank = ne[0] of lora_b (computed in float in
 * that order), or scale alone when alpha is 0. */
Q42_API float q42_lora_pair_scale(const q42_lora *l, const q42_lora_pair *p, float scale);

/* Whether p is the token embedding's pair, whose A and B llama.cpp
 * holds flipped: A is [rank, n_vocab] and its row for a token is looked
 * up, B is [rank, n_embd]. */
Q42_API bool q42_lora_pair_is_embd(const q42_lora_pair *p);

/* Check p against its base tensor's dims (ne[0], ne[1]) as llama.cpp
 * does, with the transposed token_embd case; Q42_EFORMAT naming the
 * tensor and both shapes when they do not fit. */
Q42_API int q42_lora_pair_check(const q42_lora *l, const q42_lora_pair *p, uint64_t n0,
				uint64_t n1, q42_err *err);

/* Merge p into its base tensor w, dequantized to f32 (n_out rows of n_in
 * values, ne[0] = n_in fastest), as llama-export-lora does: w += f *
 * B.A with f of q42_lora_pair_scale, each element's delta summed over the
 * rank in order, scaled, then added (the token embedding's flipped pair:
 * row v gets f * sum_k B[e][k] A[v][k]). p must have passed
 * q42_lora_pair_check against [n_in, n_out]. Q42_EUNSUPPORTED when A or B
 * cannot be dequantized, Q42_ENOMEM. */
Q42_API int q42_lora_merge(const q42_lora *l, const q42_lora_pair *p, float scale, float *w,
			   uint64_t n_in, uint64_t n_out, q42_err *err);

#endif
