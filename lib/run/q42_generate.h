/* q42_generate.h -- one request: tokenize, prefill, decode until a stop.
 *
 * The request loop around the engine: prompt checks, chunked prefill,
 * sampling, stop conditions (end of generation, token budget, deadline,
 * stop strings, full context), streaming of complete UTF-8 text, and the
 * timings and counts a record reports. In the loop, before a token is
 * committed, act the sieve (grammar mask, q42_sieve.h) and the Sentinel
 * (rules on its own thread, q42_sentinel.h). It prints nothing; text goes
 * to the caller's callback.
 */
#ifndef Q42_GENERATE_H
#define Q42_GENERATE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "engine/q42_engine.h"
#include "engine/q42_sample.h"
#include "sentinel/q42_sentinel.h"
#include "constrain/q42_sieve.h"
#include "formats/q42_digest.h"
#include "formats/q42_quin.h"
#include "run/q42_prefix.h"
#include "tokenizer/q42_tokenizer.h"

#define Q42_GEN_MAX_TOKENS_DEFAULT 256u
#define Q42_GEN_DEADLINE_DEFAULT 30.0
#define Q42_GEN_MAX_STOPS 16u
#define Q42_GEN_STOP_MAX_BYTES 256u
#define Q42_GEN_PROMPT_MAX_BYTES (64u << 20)
#define Q42_GEN_MAX_DENIALS 64u /* Sentinel denials of one step before it halts */

enum q42_stop_reason {
	Q42_STOP_NONE = 0,
	Q42_STOP_EOS,        /* an end-of-generation token (not part of the output) */
	Q42_STOP_MAX_TOKENS, /* the token budget is used up */
	Q42_STOP_DEADLINE,   /* the request ran out of time */
	Q42_STOP_STRING,     /* a stop string appeared (cut from the text) */
	Q42_STOP_CTX_FULL,   /* the context has no room for another token */
	Q42_STOP_GRAMMAR,    /* the sieve's grammar is complete and cannot go on */
	Q42_STOP_SENTINEL,   /* the Sentinel halted (non-finite logits, no substitute) */
};

/* "eos", "max_tokens", "deadline", "stop", "ctx_full", "grammar",
 * "sentinel" ("none" for 0). */
Q42_API const char *q42_stop_name(enum q42_stop_reason r);

/* Things done differently from what was asked, reported in records. */
enum q42_fallback {
	Q42_FALLBACK_PROMPT_UTF8 = 1u << 0, /* invalid prompt bytes replaced by U+FFFD */
};

typedef void (*q42_text_fn)(void *ud, const char *p, size_t n);

typedef struct q42_request {
	const char *prompt;
	size_t prompt_len;
	bool add_special;       /* BOS/EOS as the vocabulary's policy says */
	bool parse_special;     /* special-token text becomes the special token */
	bool strict;            /* a fallback is an error instead */
	uint32_t max_tokens;    /* 0: prefill only */
	double deadline_s;      /* <= 0: none */
	const char *const *stops;
	uint32_t n_stops;
	q42_text_fn on_text;    /* may be NULL */
	void *ud;
	q42_sentinel *sentinel; /* NULL: no rules (and no nonfinite check) */
	q42_sieve *sieve;       /* NULL: no grammar */
	bool parse_quin;        /* the sieve's sentence is a quin: parse it */
	bool ignore_eos;        /* end-of-generation tokens are never chosen (their
				 * logits are -inf, as llama.cpp's --ignore-eos) */
	q42_prefix *prefix;     /* NULL: the prompt is evaluated from an empty cache;
				 * else a shared prefix's state is reused (q42_prefix.h),
				 * the bits unchanged */
} q42_request;

/* One Sentinel intervention. */
typedef struct q42_intervention {
	uint32_t step;       /* index of the generated token */
	uint32_t rule;       /* enum q42_rule */
	int32_t denied;
	int32_t substitute;  /* -1: none (the request halted or failed) */
} q42_intervention;

typedef struct q42_result {
	q42_tokens prompt;      /* prompt ids as evaluated */
	q42_tokens out;         /* generated ids (an end-of-generation id is not included) */
	q42_buf text;           /* generated text, valid UTF-8, stop string cut */
	uint64_t text_replaced; /* bytes of generated text replaced by U+FFFD */
	enum q42_stop_reason stop;
	uint32_t fallbacks;     /* enum q42_fallback bits */
	uint64_t prompt_replaced; /* prompt bytes replaced by U+FFFD */
	uint8_t prompt_sha256[Q42_SHA256_LEN]; /* of the prompt bytes as given */
	uint32_t n_decode;      /* single-token evaluations after the prefill */
	uint32_t n_reused;      /* prompt tokens taken from a kept state (rq->prefix) */
	double tokenize_ms, prefill_ms, decode_ms;
	q42_intervention *iv;   /* Sentinel interventions, in order */
	size_t n_iv, cap_iv;
	uint64_t sentinel_events, sentinel_dropped;
	double sieve_ms;        /* time spent masking */
	q42_quin quin;          /* parse_quin: the sentence */
	bool has_quin;
} q42_result;

Q42_API void q42_result_init(q42_result *r);
Q42_API void q42_result_free(q42_result *r);

/* Run one request. The engine cache (but what rq->prefix reuses) and the
 * sampler are reset first.
 * Errors (Q42_EARG unless said otherwise): the prompt is too large, has no
 * tokens, has more tokens than the context holds, or is not valid UTF-8
 * under strict; a Sentinel intervention under strict (message starts
 * "sentinel:"); with a sieve, no complete sentence within the budget
 * (message starts "[sieve-misaligned]", no text was given to on_text);
 * Q42_ENOMEM. Any other stop is success. */
Q42_API int q42_generate(q42_engine *e, q42_sampler *s, const q42_tokenizer *tok,
			 const q42_request *rq, q42_result *r, q42_err *err);

/* Tokenize the prompt of rq into r->prompt and evaluate it (the cache is
 * reset first, but what rq->prefix reuses): the engine's logits are then
 * those after the prompt.
 * Errors as q42_generate's for the prompt. Used for scoring. */
Q42_API int q42_prompt_eval(q42_engine *e, const q42_tokenizer *tok, const q42_request *rq,
			    q42_result *r, q42_err *err);

#endif
