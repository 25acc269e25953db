/* q42_backend.h -- the interface between the engine and a backend that runs
 * the forward pass somewhere other than this CPU (lib/vulkan).
 *
 * The engine binds and checks a model once; a backend receives that
 * binding as a q42_bound_model (file bytes, types, shapes) and keeps
 * weights, cache and activations wherever it runs. Backends sit above the
 * engine in libq42's chain: the engine never names one, the program picks
 * one (q42_engine_opts.backend_ops) and the engine calls it through this
 * table. A backend's cache is positional (eval names its first position),
 * so taking tokens back (q42_engine_truncate) needs no call into it.
 */
#ifndef Q42_BACKEND_H
#define Q42_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "engine/q42_arch.h"

/* Where the forward pass runs. Q42_BACKEND_AUTO: the backend's device when
 * it is a discrete or integrated GPU, the CPU otherwise (a software device
 * such as lavapipe only when asked for by name: Q42_BACKEND_VULKAN). */
enum q42_backend {
	Q42_BACKEND_CPU = 0,
	Q42_BACKEND_VULKAN = 1,
	Q42_BACKEND_AUTO = 2,
};

struct q42_bound_lora;

/* One bound tensor as the file holds it. */
typedef struct q42_bound_weight {
	const uint8_t *data;   /* NULL when the slot is empty */
	uint32_t dtype;
	bool matrix;           /* a weight matrix (else an f32 vector) */
	int64_t n_in;          /* ne[0] */
	int64_t n_out;         /* ne[1] (1 for vectors) */
	uint64_t row_bytes;
	/* matrices: one row to f32 (the CPU's scalar reference; NULL when the
	 * type has none) */
	void (*dequant)(const void *src, float *dst, int64_t n);
	/* matrices: the LoRA adapters on it, in the order they apply (NULL:
	 * none) */
	const struct q42_bound_lora *lora;
	/* a stack of experts' matrices (ffn_*_exps): n_out and row_bytes are
	 * one expert's, expert i starts i * expert_bytes after data; 0 for
	 * every other weight */
	uint64_t expert_bytes;
} q42_bound_weight;

/* One adapter's pair on a weight (engine/q42_engine.h, q42_engine_lora):
 * the weight's product y = W.x becomes W.x + scale * B.(A.x), before any
 * bias. On the token embedding A is [rank, n_vocab], its rows looked up. */
typedef struct q42_bound_lora {
	q42_bound_weight a;  /* [n_in, rank] */
	q42_bound_weight b;  /* [rank, n_out] */
	float scale;
	const struct q42_bound_lora *next;
} q42_bound_lora;

typedef struct q42_bound_layer {
	q42_bound_weight w[Q42_W_COUNT_]; /* only the per-layer slots are used */
	uint32_t n_head_kv;
	uint32_t n_ff;
	/* sliding-window attention: a query sees the n_swa positions up to
	 * its own (0: all); this layer's RoPE (a sliding-window layer of
	 * gemma3 has its own base): angle factor base^(-2/n_rot) and scale */
	uint32_t n_swa;
	float theta_scale, rope_scale;
	bool conv; /* a short convolution instead of attention (lfm2) */
	bool moe;  /* a routed FFN instead of the dense one (lfm2moe) */
} q42_bound_layer;

/* The model as the engine bound it, valid while the engine is open. */
typedef struct q42_bound_model {
	const q42_arch *arch;
	uint32_t n_vocab, n_embd, n_layer, n_head, n_head_kv_max, n_ff_max;
	uint32_t hd_k, hd_v, n_rot, n_ctx, n_batch;
	uint32_t kv_type;     /* Q42_DTYPE_F32 or Q42_DTYPE_F16 */
	float eps, rope_base, rope_scale, kq_scale;
	/* RoPE's attention factor (1: none); the slot of the frequency
	 * factors in use (rope_freqs, or LongRoPE's long or short ones, by
	 * the context; its data NULL: none) */
	float rope_mscale;
	enum q42_wslot rope_ff;
	float q_scale;        /* arch->q_prescale: q's factor after RoPE */
	float embd_scale;     /* arch->embd_scale: the embedding rows' factor (0: none) */
	float final_softcap;  /* 0: none */
	/* the slot of the final norm (output_norm, or lfm2's token_embd_norm);
	 * Q42_W_COUNT_: none */
	enum q42_wslot final_norm;
	bool causal;          /* false: every position sees every other */
	bool swa_symmetric;   /* a window of n_swa is +-n_swa/2 around the query */
	uint32_t conv_l;      /* short convolutions' width (lfm2) */
	/* rows past a token's position its convolution window reads: 0, or
	 * (conv_l - 1)/2 for a bidirectional model's centred window */
	uint32_t conv_ahead;
	/* routed FFN: experts, how many each token uses, rows of one expert's
	 * gate and up */
	uint32_t n_expert, n_expert_used, n_ff_exp;
	bool tied;            /* output = token embedding */
	q42_bound_weight g[Q42_W_LAYER_FIRST_]; /* global tensors */
	const q42_bound_layer *layers;          /* n_layer */
} q42_bound_model;

/* What certification reports for one case (measure/q42_certify.h runs the
 * cases; a backend certifies its own kernels through the same type). */
typedef struct q42_certify_result {
	char kernel[48];   /* e.g. "matmul.q4_k", "rmsnorm", "attention.f16" */
	char shape[64];    /* e.g. "n_in=4096 n_out=33 n_tok=7" */
	double max_abs;    /* largest |got - want| */
	double max_rel;    /* largest |got - want| / max(|want|, floor) */
	double tol_abs, tol_rel; /* a case passes when either bound holds per element */
	bool pass;
} q42_certify_result;

typedef void (*q42_certify_fn)(const q42_certify_result *r, void *arg);

/* A backend. check, open and certify are always there; the others are
 * called only with a state open returned. state is the backend's own. */
typedef struct q42_backend_ops {
	const char *name; /* "vulkan" */
	/* Whether it can run before a model is opened: Q42_OK, or
	 * Q42_EUNSUPPORTED (not built, no device), Q42_EARG (device >= 0 is
	 * not an index of one). */
	int (*check)(int32_t device, q42_err *err);
	/* Open for m (want: Q42_BACKEND_VULKAN or Q42_BACKEND_AUTO; with AUTO
	 * and no device that qualifies, *state stays NULL and Q42_OK: the CPU
	 * runs the model). m outlives the state. */
	int (*open)(void **state, const q42_bound_model *m, enum q42_backend want, int32_t device,
		    q42_err *err);
	void (*close)(void *state);
	/* One pass over n tokens (1 <= n <= n_batch) at positions pos0..; with
	 * want_logits the last token's n_vocab logits go to logits and their
	 * argmax (lowest id on ties) to *top1. */
	int (*eval)(void *state, const int32_t *ids, uint32_t n, uint32_t pos0, bool want_logits,
		    float *logits, int32_t *top1, q42_err *err);
	/* An embedding (engine/q42_engine.h, q42_engine_embed, which has
	 * checked ids, n <= n_batch and pooling): the n tokens of one sequence
	 * at positions 0.., every row through the final norm (when the model
	 * has one), pooled by pooling (enum q42_pooling, NONE..LAST), then
	 * dense_2 (+ bias) and dense_3 where the model has them; *n_rows rows
	 * of the embedding width into out (room for n_batch rows). NULL: the
	 * backend computes no embeddings. */
	int (*embed)(void *state, const int32_t *ids, uint32_t n, uint32_t pooling, float *out,
		     uint32_t *n_rows, q42_err *err);
	const char *(*device_name)(const void *state);
	/* Matrices converted at open, and a line naming their types (NULL). */
	uint32_t (*n_fallbacks)(const void *state);
	const char *(*fallback_note)(const void *state);
	/* Device time of every pass since open (0 without timestamps). */
	double (*device_ms)(const void *state);
	/* Run the backend's certification cases (measure/q42_certify.h). */
	int (*certify)(int32_t device, uint64_t seed, q42_certify_fn fn, void *arg, uint32_t *n_fail,
		       q42_err *err);
} q42_backend_ops;

#endif
