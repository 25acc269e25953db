/* q42_bench.h -- throughput measurement in the manner of llama-bench:
 * prompt processing (one pass of n_pp random tokens) and generation (n_tg
 * single-token passes), each from a cache holding depth tokens (empty by
 * default; llama-bench -d), each
 * repeated and summarised as median, minimum and maximum tokens/s; time
 * to first token (mount, engine open, prefill, first greedy token); and
 * what an engine allocates besides the mapping.
 *
 * Prints nothing (the caller formats the result). Used by `q42run --bench`.
 */
#ifndef Q42_BENCH_H
#define Q42_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "engine/q42_engine.h"

#define Q42_BENCH_REPS_MAX 1000u

typedef struct q42_bench_opts {
	uint32_t n_pp;  /* prompt tokens per repetition (0: skip) */
	uint32_t n_tg;  /* generated tokens per repetition (0: skip) */
	uint32_t depth; /* tokens in the cache before each pp and tg repetition */
	uint32_t reps;  /* 1..Q42_BENCH_REPS_MAX */
	uint64_t seed;  /* for the random token ids */
	bool read_pass; /* a read pass after each generation step (q42_bench_result) */
} q42_bench_opts;

typedef struct q42_bench_stat {
	double median, min, max; /* over the repetitions: tokens/s, or ms for times */
} q42_bench_stat;

typedef struct q42_bench_result {
	q42_bench_stat pp, tg;
	uint64_t weight_bytes;  /* matrix bytes one decode step reads */
	double tg_gbps;         /* weight_bytes x median generation tokens/s */
	/* Where generation time went, over all its repetitions (CPU backend;
	 * all 0 where the pass runs on a device): weight bytes over the wall
	 * time of the matrix-product jobs alone, and the shares (0..1) of
	 * the generation time in those jobs and in attention (with RoPE and
	 * the cache stores); the rest is norms, quantization of the
	 * activations, the embedding lookup and the thread hand-overs. */
	double tg_stream_gbps, tg_products_share, tg_attention_share;
	/* With read_pass (CPU backend; else 0): after every other generation
	 * step (of the first 65536), one pass of membw's read loop over the same weight bytes, on
	 * the same threads, in one job. The median over the passes of its
	 * rate, GB/s; the median over those steps of (the pass's time / the
	 * step's time), that is of the step's weight GB/s over the machine's
	 * read GB/s at that moment; and the mean pass time over the mean
	 * time of a step's product jobs. After the other steps the same pass
	 * runs as one job per matrix: the median of its rate, GB/s (0 with
	 * fewer than two steps). */
	double tg_read_gbps, tg_vs_read, tg_products_vs_read, tg_read_ops_gbps;
	/* mean device time of one repetition (Vulkan timestamps; 0 on the CPU) */
	double pp_device_ms, tg_device_ms;
} q42_bench_result;

/* Runs on an open engine and leaves its cache reset. The depth tokens are
 * evaluated once, untimed, and each repetition starts from them (the
 * cache truncated back). Q42_EARG when depth + a count does not fit the
 * engine's context or reps is out of range; Q42_ENOMEM. */
Q42_API int q42_bench_run(q42_engine *e, const q42_bench_opts *o, q42_bench_result *out,
			  q42_err *err);

typedef struct q42_bench_ttft_opts {
	const char *path;            /* model file (mounted afresh each repetition) */
	const q42_engine_opts *eo;   /* NULL: defaults */
	uint32_t n_pp;               /* prompt tokens, 1..the engine's context */
	uint32_t reps;               /* 1..Q42_BENCH_REPS_MAX */
	uint64_t seed;               /* for the random token ids */
} q42_bench_ttft_opts;

typedef struct q42_bench_ttft {
	q42_bench_stat load_ms;      /* q42_mount_open + q42_engine_open */
	q42_bench_stat prefill_ms;   /* n_pp tokens from an empty cache + the argmax */
	q42_bench_stat ttft_ms;      /* their sum: from the mount to the first token */
	double first_ttft_ms;        /* the first repetition (the process's first mount) */
	int32_t first_token;         /* the greedy token after the prompt */
} q42_bench_ttft;

/* Time to first token: each repetition mounts o->path, opens an engine,
 * evaluates n_pp random ids and takes the greedy token, then closes both,
 * so every repetition pays the whole load (the page cache stays warm after
 * the first). Errors of q42_mount_open and q42_engine_open; Q42_EARG for
 * counts out of range; Q42_ENOMEM. */
Q42_API int q42_bench_ttft_run(const q42_bench_ttft_opts *o, q42_bench_ttft *out, q42_err *err);

/* Heap memory an engine holds besides the model mapping, in bytes as
 * allocated (malloc_usable_size). Buffers are calloc'ed and the kernel
 * backs a page only when it is first written, so the resident part can be
 * much smaller: that is what peak RSS shows. */
typedef struct q42_bench_mem {
	uint64_t kv_bytes;       /* K and V cache, n_ctx positions */
	uint64_t act_bytes;      /* n_batch activation rows, quantized rows, logits */
	uint64_t scratch_bytes;  /* per-thread attention scratch (n_ctx scores) */
} q42_bench_mem;

Q42_API void q42_bench_mem_measure(const q42_engine *e, q42_bench_mem *out);

#endif
