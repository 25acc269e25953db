/* q42_engine.h -- the CPU inference engine: weights bound to an
 * architecture, a KV cache, scratch buffers and a thread pool.
 *
 * An engine is opened once per mount; every buffer it will ever need
 * (cache, activations, quantized activations, logits) is allocated then,
 * so evaluating tokens allocates nothing. Matrix products go through the
 * kernel tables (kernels/q42_kernels.h): activations are quantized to the
 * weight type's vec_dot_type and each output element is one vec_dot, as
 * ggml computes them, which is how results follow llama.cpp. Results do not
 * depend on the thread count.
 */
#ifndef Q42_ENGINE_H
#define Q42_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "engine/q42_arch.h"
#include "engine/q42_backend.h"
#include "engine/q42_mount.h"
#include "formats/q42_lora.h"
#include "kernels/q42_kernels.h"

#define Q42_ENGINE_CTX_DEFAULT 4096u   /* context when neither option nor model says less */
#define Q42_ENGINE_CTX_MAX (1u << 20)  /* largest context accepted */
#define Q42_ENGINE_BATCH_DEFAULT 512u  /* prompt tokens per prefill pass */
#define Q42_ENGINE_BATCH_MAX 8192u

/* How matrix products round. Q42_ARITH_LLAMACPP (the default): as
 * llama.cpp runs on an x86 CPU with AVX-512 and AMX (its sapphirerapids
 * CPU variant) -- its AMX-buffer kernels for Q4_0, Q8_0, Q4_K, Q6_K and
 * F16 matrices and its AVX-512 F16 vec_dot (kernels/q42_llamacpp.h);
 * every other type and shape keeps the generic arithmetic.
 * Q42_ARITH_ZEN4: as llama.cpp runs on an AVX-512 CPU without AMX (its
 * zen4 variant: AMD Zen 4 and 5); the row operations are the same,
 * products per q42_llamacpp_select_variant. Q42_ARITH_GGML: ggml's generic
 * (scalar C) arithmetic everywhere. Either way a result does not depend
 * on threads or batch. */
enum q42_arith {
	Q42_ARITH_LLAMACPP = 0,
	Q42_ARITH_GGML = 1,
	Q42_ARITH_ZEN4 = 2,
	/* the one of LLAMACPP and ZEN4 that llama.cpp's own CPU variant
	 * choice gives on this CPU (q42_llamacpp_variant_detect); the engine
	 * reports the one it chose (q42_engine_arith) */
	Q42_ARITH_AUTO = 3,
	/* as llama.cpp runs on a CPU with AVX2 and no AVX-512 (its haswell
	 * variant): zen4's quantized products but Q2_K, eight-lane float
	 * sums (Q42_LLAMACPP_HASWELL) */
	Q42_ARITH_HASWELL = 4,
	/* as llama.cpp runs on an AVX-512 CPU without AVX512-BF16 (its
	 * icelake, skylakex, cascadelake and cannonlake variants): zen4's
	 * but BF16 (Q42_LLAMACPP_ICELAKE) */
	Q42_ARITH_ICELAKE = 5,
};

/* A LoRA adapter applied at run time, as llama.cpp applies it: every
 * product with an adapted weight W gives W.x + f * B.(A.x), f =
 * q42_lora_pair_scale(adapter, pair, scale); the token embedding's row
 * gets f * B.(its row of A) added. Scale 0 leaves the adapter out. */
typedef struct q42_engine_lora {
	const q42_lora *adapter; /* must outlive the engine */
	float scale;
} q42_engine_lora;

/* Attention's arithmetic (q42run --flash-attn). */
enum q42_flash_attn {
	Q42_FLASH_ATTN_OFF = 0,  /* llama.cpp's attention without flash attention (default) */
	Q42_FLASH_ATTN_ON = 1,   /* llama.cpp's CPU flash attention; Q42_EUNSUPPORTED where the engine has none */
	Q42_FLASH_ATTN_AUTO = 2, /* ON where the engine has it, OFF elsewhere */
};

typedef struct q42_engine_opts {
	uint32_t n_threads; /* 0 = online cores */
	uint32_t n_ctx;     /* 0 = min(model's training context, Q42_ENGINE_CTX_DEFAULT) */
	uint32_t n_batch;   /* 0 = Q42_ENGINE_BATCH_DEFAULT */
	uint32_t kv_type;   /* Q42_DTYPE_F32 (default, also for 0), Q42_DTYPE_F16 or Q42_DTYPE_Q8_0 (with flash_attn) */
	enum q42_flash_attn flash_attn;
	enum q42_isa isa;   /* Q42_ISA_BEST, or a specific table (Q42_ISA_SCALAR...) */
	enum q42_arith arith; /* Q42_ARITH_LLAMACPP (default, 0), _ZEN4, _ICELAKE, _HASWELL or _GGML */
	enum q42_backend backend; /* Q42_BACKEND_CPU (default, 0), VULKAN or AUTO */
	int32_t device;     /* Vulkan device index; only read when backend != CPU; -1 = choose */
	/* the backend that runs backend VULKAN or AUTO (e.g. q42_vk_backend(),
	 * vulkan/q42_vk_forward.h); NULL refuses them */
	const q42_backend_ops *backend_ops;
	bool small_pages;   /* repacked weights and KV cache on 4 KiB pages only (default:
			     * transparent huge pages where the kernel grants them) */
	/* adapters, applied in this order (at most Q42_LORA_MAX); a
	 * backend gets them in its binding (q42_bound_lora, q42_backend.h) */
	const q42_engine_lora *lora;
	uint32_t n_lora;
	/* 0: no limit; otherwise q42_engine_open refuses, before allocating,
	 * a model whose q42_engine_mem total exceeds it (Q42_ENOMEM, with
	 * the figures) */
	uint64_t max_memory;
} q42_engine_opts;

/* The memory an engine holds, in bytes, computed from the bound model
 * before anything big is allocated. A Vulkan backend's device memory is
 * not counted (its KV cache is on the device: kv is then the host's part). */
typedef struct q42_engine_mem {
	uint64_t weights; /* tensor bytes read from the model's mapping (the matrices not repacked) */
	uint64_t packed;  /* the repacked matrices and the vectors copied out of the mapping */
	uint64_t kv;      /* KV cache (n_ctx positions) and short-convolution history */
	uint64_t act;     /* activations of a batch, logits */
	uint64_t scratch; /* per-thread attention, expert and adapter scratch */
	uint64_t total;   /* the sum */
} q42_engine_mem;

typedef struct q42_engine q42_engine;

/* Bind the mount's tensors to its architecture and allocate everything.
 * Errors: Q42_EUNSUPPORTED (architecture or tensor type the engine cannot
 * run, named in the message), Q42_EFORMAT (a tensor has the wrong shape,
 * a required one is missing, an unexpected one is present, hyperparameters
 * are inconsistent; an adapter does not fit the model: its architecture,
 * a tensor the model lacks, a shape, named in the message), Q42_EARG (bad
 * options), Q42_ENOMEM. The mount must
 * outlive the engine. */
Q42_API int q42_engine_open(q42_engine **out, q42_mount *m, const q42_engine_opts *o,
			    q42_err *err);
Q42_API void q42_engine_close(q42_engine *e);
/* What q42_engine_open with the same mount and options would hold
 * (o->max_memory is not applied): the same checks and errors, nothing big
 * allocated, no threads started. */
Q42_API int q42_engine_memory(q42_mount *m, const q42_engine_opts *o, q42_engine_mem *mem,
			      q42_err *err);

/* Forget the cache (the next eval starts at position 0). */
Q42_API void q42_engine_reset(q42_engine *e);

/* Append ids at the current position, in passes of at most n_batch
 * tokens, and compute the logits of the last one. Q42_EARG when the
 * cache cannot hold them or an id is outside the vocabulary (nothing is
 * evaluated then). */
Q42_API int q42_engine_eval(q42_engine *e, const int32_t *ids, uint32_t n, q42_err *err);

/* As q42_engine_eval, and *top1 = the id q42_argmax (q42_sample.h) would
 * pick from the logits, found while they are computed, each thread over
 * its own rows. The logits are left as q42_engine_eval leaves them. For
 * greedy decoding with no other reader of the logits. */
Q42_API int q42_engine_eval_top1(q42_engine *e, const int32_t *ids, uint32_t n, int32_t *top1,
				 q42_err *err);

/* Embeddings of one sequence of n ids (n <= the batch), evaluated alone
 * from position 0 with every row kept: pooled by pooling (enum
 * q42_pooling; -1: the model's, q42_engine_pooling) into one vector, or
 * one per token for Q42_POOLING_NONE, each through the model's dense_2
 * and dense_3 where it has them; not normalised. *out points at *n_rows
 * vectors of q42_engine_embd_dim floats, owned by the engine and valid
 * until its next pass. The vectors do not depend on what was embedded
 * before or on the thread count. Errors: Q42_EARG (no ids, more than
 * the batch or the learned positions, an id outside the vocabulary), Q42_EUNSUPPORTED (rank pooling; a
 * backend without embeddings). On a backend (Vulkan) the whole pass,
 * pooling and projections included, runs on its device. */
Q42_API int q42_engine_embed(q42_engine *e, const int32_t *ids, uint32_t n, int32_t pooling,
			     const float **out, uint32_t *n_rows, q42_err *err);
/* The model's pooling (its pooling_type, else the architecture's:
 * enum q42_pooling, or 4 for llama.cpp's rank) and the length of its
 * embedding vectors. */
Q42_API uint32_t q42_engine_pooling(const q42_engine *e);
Q42_API uint32_t q42_engine_embd_dim(const q42_engine *e);
/* Whether the model is an encoder (bidirectional attention): it has no
 * logits to generate from, only embeddings. */
Q42_API bool q42_engine_is_encoder(const q42_engine *e);

/* Forget the cache from position n_past on (n_past <= the current
 * position; Q42_EARG otherwise): the next eval overwrites it. The logits
 * stay those of the last eval. Used to take back a token. */
Q42_API int q42_engine_truncate(q42_engine *e, uint32_t n_past, q42_err *err);

/* The cache state of positions 0..n-1, copied out and back (prefix
 * reuse, q42-state(5)): a layout of its own, n times
 * q42_engine_state_pos_bytes bytes, that depends only on those positions
 * (q42_state.c says how it is laid out). _get copies the first n
 * positions (n <= the current position) to dst; _put writes the first n
 * of a copy of n_stored positions into the cache and makes n the current
 * position (the logits are stale until the next eval). Q42_EUNSUPPORTED
 * on a device backend, Q42_EARG for a count out of range. A state put
 * back gives the bits the evaluation that made it gave only when the same
 * passes follow it (see run/q42_prefix.h). */
Q42_API uint64_t q42_engine_state_pos_bytes(const q42_engine *e);
Q42_API int q42_engine_state_bytes(const q42_engine *e, uint32_t n, uint64_t *bytes, q42_err *err);
Q42_API int q42_engine_state_get(const q42_engine *e, uint32_t n, uint8_t *dst, q42_err *err);
Q42_API int q42_engine_state_put(q42_engine *e, const uint8_t *src, uint32_t n_stored, uint32_t n,
				 q42_err *err);

/* The n_vocab logits left by the last eval. */
Q42_API const float *q42_engine_logits(const q42_engine *e);

Q42_API uint32_t q42_engine_n_past(const q42_engine *e);
Q42_API uint32_t q42_engine_n_ctx(const q42_engine *e);
Q42_API uint32_t q42_engine_n_batch(const q42_engine *e);
Q42_API uint32_t q42_engine_n_vocab(const q42_engine *e);
Q42_API uint32_t q42_engine_n_threads(const q42_engine *e);
Q42_API uint32_t q42_engine_kv_type(const q42_engine *e);
/* Whether attention runs llama.cpp's flash attention (opts.flash_attn
 * ON, or AUTO where the engine has it). */
Q42_API bool q42_engine_flash_attn(const q42_engine *e);
/* The pass length from which flash attention takes its tiled form, whose
 * rounding differs from the one-at-a-time form of shorter passes; 0 where
 * no pass length changes the form (flash attention off, or head dims the
 * tiled form does not take). */
Q42_API uint32_t q42_engine_flash_tile(const q42_engine *e);
Q42_API enum q42_isa q42_engine_isa(const q42_engine *e);
Q42_API enum q42_arith q42_engine_arith(const q42_engine *e);
Q42_API const char *q42_arith_name(enum q42_arith a);
/* The mode a command line names: auto, portable, llamacpp, sapphirerapids
 * (the last three are Q42_ARITH_LLAMACPP), zen4 (also cooperlake),
 * icelake (also skylakex, cascadelake, cannonlake), haswell (also
 * alderlake) or ggml;
 * false for any other name.
 * Q42_ARITH_NAMES lists them for messages. */
#define Q42_ARITH_NAMES                                                                         \
	"auto, portable, llamacpp, sapphirerapids, zen4, icelake, skylakex, cascadelake, cannonlake, "  \
	"cooperlake, haswell, alderlake or ggml"
Q42_API bool q42_arith_from_name(const char *name, enum q42_arith *out);
/* Q42_ARITH_AUTO as this CPU resolves it (LLAMACPP, ZEN4, ICELAKE or HASWELL,
 * q42_llamacpp_variant_detect); any other mode as it is. */
Q42_API enum q42_arith q42_arith_resolve(enum q42_arith a);
/* The backend the engine actually runs on (never AUTO) and, for Vulkan,
 * the device's name ("cpu" for the CPU backend). */
Q42_API enum q42_backend q42_engine_backend(const q42_engine *e);
Q42_API const char *q42_engine_device_name(const q42_engine *e);
Q42_API const char *q42_backend_name(enum q42_backend b);
/* Whether b can run at all before a model is opened: Q42_OK for CPU and
 * AUTO; for VULKAN, ops's check (Q42_EUNSUPPORTED when q42 was built
 * without Vulkan or no Vulkan device exists, Q42_EARG when device (>= 0)
 * is not an index of one), Q42_EUNSUPPORTED when ops is NULL. */
Q42_API int q42_backend_check(const q42_backend_ops *ops, enum q42_backend b, int32_t device,
			      q42_err *err);
/* Weight matrices the backend could not use as stored and converted at
 * open (Vulkan: dequantized to F16), and one line naming their types
 * (NULL when none). A caller that promised strictness refuses them. */
Q42_API uint32_t q42_engine_n_fallbacks(const q42_engine *e);
Q42_API const char *q42_engine_fallback_note(const q42_engine *e);
/* The id of the largest logit of the last eval, the lowest on ties:
 * computed on the device by the Vulkan backend, from the logits on the
 * CPU. */
Q42_API int32_t q42_engine_top1(const q42_engine *e);
/* Device time spent in forward passes since open (Vulkan timestamps; 0 on
 * the CPU or where the queue has no timestamps). */
Q42_API double q42_engine_device_ms(const q42_engine *e);
Q42_API const q42_arch *q42_engine_arch(const q42_engine *e);
/* The adapters the engine was opened with (q42_engine_opts.lora, those of
 * scale 0 included), in order; i < q42_engine_n_lora. */
Q42_API uint32_t q42_engine_n_lora(const q42_engine *e);
Q42_API const q42_engine_lora *q42_engine_lora_at(const q42_engine *e, uint32_t i);

/* For measurement (measure/q42_bench.h). The two timed phases of a pass:
 * the matrix-product jobs, and attention with the RoPE and K/V stores
 * before it. */
enum q42_phase {
	Q42_PHASE_PRODUCTS,
	Q42_PHASE_ATTENTION,
	Q42_PHASE_N_
};
/* Start (zeroing the sums) or stop summing each phase's wall time; two
 * clock reads a phase while on. */
Q42_API void q42_engine_phase_clock(q42_engine *e, bool on);
Q42_API uint64_t q42_engine_phase_ns(const q42_engine *e, enum q42_phase p);
/* The weight matrices a decode step streams, in the order it reads them:
 * every layer matrix (of an expert stack, as many as a token routes to), then the output matrix (the token embedding is only
 * looked up). Fills at most cap spans and returns how many there are;
 * q42_engine_n_spans_max bounds that number. */
Q42_API uint32_t q42_engine_stream_spans(const q42_engine *e, const uint8_t **p, uint64_t *len,
					 uint32_t cap);
Q42_API uint32_t q42_engine_n_spans_max(const q42_engine *e);
/* Bytes the engine's buffers hold as allocated (malloc_usable_size): the
 * KV cache, the activations, the per-thread attention scratch. */
Q42_API void q42_engine_buffer_bytes(const q42_engine *e, uint64_t *kv, uint64_t *act,
				     uint64_t *scratch);
/* The engine's worker threads (NULL when it runs on one thread). */
Q42_API struct q42_pool *q42_engine_pool(const q42_engine *e);
Q42_API uint64_t q42_engine_n_params(const q42_engine *e);

#endif
