/* q42_sample.h -- choosing the next token from logits.
 *
 * Greedy (temperature 0, the default) is argmax with the lowest id on
 * ties, as llama.cpp's greedy sampler. With a temperature the chain is
 * llama.cpp's order -- repeat penalty, top-k, top-p, min-p, temperature,
 * draw -- driven by a seeded 64-bit generator, so a given seed always
 * gives the same tokens; the draws are not llama.cpp's own. All memory is
 * allocated when the sampler opens.
 */
#ifndef Q42_SAMPLE_H
#define Q42_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"

#define Q42_SAMPLE_LAST_N_MAX 8192u

typedef struct q42_sampling {
	float temp;             /* <= 0: greedy */
	int32_t top_k;          /* 0: off */
	float top_p;            /* >= 1: off */
	float min_p;            /* <= 0: off */
	float repeat_penalty;   /* 1: off; applies to greedy too */
	uint32_t repeat_last_n; /* tokens of history the penalty looks at */
	uint64_t seed;
} q42_sampling;

/* Greedy; when a temperature is set: top-k 40, top-p 0.95, min-p 0.05
 * (llama.cpp's defaults); repeat penalty 1 over the last 64; seed 0. */
Q42_API void q42_sampling_default(q42_sampling *s);
/* Q42_EARG with the offending setting named when out of range. */
Q42_API int q42_sampling_check(const q42_sampling *s, q42_err *err);

typedef struct q42_sampler q42_sampler;

Q42_API int q42_sampler_open(q42_sampler **out, const q42_sampling *s, uint32_t n_vocab,
			     q42_err *err);
Q42_API void q42_sampler_close(q42_sampler *s);
/* Forget the history and reseed (start of a request). */
Q42_API void q42_sampler_reset(q42_sampler *s);
/* Add a token (prompt or generated) to the penalty history. */
Q42_API void q42_sampler_accept(q42_sampler *s, int32_t id);
/* The next token for these n_vocab logits (not modified). */
Q42_API int32_t q42_sampler_sample(q42_sampler *s, const float *logits);
/* True when q42_sampler_sample is q42_argmax of the logits as they are
 * (greedy, no repeat penalty): the engine can then pick the token itself
 * (q42_engine_eval_top1). */
Q42_API bool q42_sampler_is_argmax(const q42_sampler *s);

/* Index of the largest of n values, the lowest on ties. */
Q42_API int32_t q42_argmax(const float *v, uint32_t n);

#endif
