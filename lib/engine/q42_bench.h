/* q42_bench.h -- throughput measurement in the manner of llama-bench:
 * prompt processing (one pass of n_pp random tokens from an empty cache)
 * and generation (n_tg single-token passes from an empty cache), each
 * repeated and summarised as median, minimum and maximum tokens/s.
 *
 * Runs on an open engine and leaves its cache reset; prints nothing (the
 * caller formats the result). Used by `q42run --bench`.
 */
#ifndef Q42_BENCH_H
#define Q42_BENCH_H

#include <stdint.h>
#include "common/q42_err.h"
#include "engine/q42_engine.h"

#define Q42_BENCH_REPS_MAX 1000u

typedef struct q42_bench_opts {
	uint32_t n_pp;  /* prompt tokens per repetition (0: skip) */
	uint32_t n_tg;  /* generated tokens per repetition (0: skip) */
	uint32_t reps;  /* 1..Q42_BENCH_REPS_MAX */
	uint64_t seed;  /* for the random token ids */
} q42_bench_opts;

typedef struct q42_bench_stat {
	double median, min, max; /* tokens per second over the repetitions */
} q42_bench_stat;

typedef struct q42_bench_result {
	q42_bench_stat pp, tg;
	uint64_t weight_bytes;  /* matrix bytes one decode step reads */
	double tg_gbps;         /* weight_bytes x median generation tokens/s */
	/* mean device time of one repetition (Vulkan timestamps; 0 on the CPU) */
	double pp_device_ms, tg_device_ms;
} q42_bench_result;

/* Q42_EARG when a count does not fit the engine's context or reps is out
 * of range; Q42_ENOMEM. */
Q42_API int q42_bench_run(q42_engine *e, const q42_bench_opts *o, q42_bench_result *out,
			  q42_err *err);

#endif
