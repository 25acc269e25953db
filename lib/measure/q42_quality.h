/* q42_quality.h -- the quality gate: perplexity over a text, and the KL
 * divergence of a (quantized) model from a reference model's log-probs.
 *
 * Windows follow llama-perplexity: the text's tokens are cut into
 * n_chunks = n_tokens / n_ctx windows of n_ctx tokens, the first token of
 * each window is replaced by BOS (when the vocabulary adds one), and the
 * logits at positions n_ctx/2 .. n_ctx-2 are scored against the token
 * after them. The reference log-probs travel in a KL-base file (q42run(1),
 * "KL-BASE FILE FORMAT"), or come from a second engine run in lock step.
 * Nothing here prints; reports are formatted into a q42_buf.
 */
#ifndef Q42_QUALITY_H
#define Q42_QUALITY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "engine/q42_engine.h"
#include "tokenizer/q42_tokenizer.h"

#define Q42_KLBASE_MAGIC "Q42KLB\0\0"   /* 8 bytes */
#define Q42_KLBASE_VERSION 1u
#define Q42_KLBASE_HEADER_BYTES 32u
#define Q42_QUALITY_CTX_MIN 4u           /* smallest window with a scored position */
#define Q42_QUALITY_VOCAB_MAX (1u << 24) /* largest n_vocab a KL-base file may give */

typedef struct q42_klbase q42_klbase;

/* Map and validate a KL-base file: magic, version, sizes within caps,
 * n_scored = n_ctx - 1 - n_ctx/2, the file size exactly as the header
 * says, token ids inside the vocabulary. Q42_EFORMAT (field, offset,
 * expected and found in the message), Q42_EIO, Q42_ENOMEM. */
Q42_API int q42_klbase_open(q42_klbase **out, const char *path, q42_err *err);
Q42_API void q42_klbase_close(q42_klbase *b);
Q42_API uint32_t q42_klbase_n_vocab(const q42_klbase *b);
Q42_API uint32_t q42_klbase_n_ctx(const q42_klbase *b);
Q42_API uint32_t q42_klbase_n_chunks(const q42_klbase *b);
Q42_API int32_t q42_klbase_bos(const q42_klbase *b);
/* Token i (i < n_ctx * n_chunks) of the windows, as in the text. */
Q42_API int32_t q42_klbase_token(const q42_klbase *b, uint64_t i);

/* Tokenize a text as llama-perplexity does: BOS/EOS as the vocabulary
 * says, special-token text kept as text. */
Q42_API int q42_quality_tokenize(const q42_tokenizer *tok, const char *text, size_t n,
				 q42_tokens *out, q42_err *err);

/* Q42_EARG unless a and b have the same number of tokens, the same token
 * texts and the same BOS: their log-probs are then comparable. */
Q42_API int q42_quality_same_vocab(const q42_tokenizer *a, const q42_tokenizer *b, q42_err *err);

/* Called after each window with its 1-based index and the running PPL. */
typedef void (*q42_quality_chunk_fn)(void *ud, uint32_t chunk, uint32_t n_chunks, double ppl);

typedef struct q42_quality_job {
	const int32_t *ids;  /* the text's tokens; NULL with base: the base's tokens */
	size_t n_ids;
	uint32_t n_ctx;      /* window; 0: the engine's context (the base's with base) */
	FILE *base_out;      /* write a KL-base file of this run (header first) */
	const q42_klbase *base;   /* compare with these log-probs, or */
	q42_engine *base_engine;  /* with this engine's, run on the same windows */
	q42_quality_chunk_fn on_chunk;
	void *ud;
} q42_quality_job;

typedef struct q42_quality_report {
	uint32_t n_ctx, n_chunks;
	uint64_t n_tokens;  /* tokens of the text (or of the base's windows) */
	uint64_t count;     /* scored positions */
	double ppl, ppl_err;
	bool has_kl;        /* the fields below are set */
	double ppl_base, ppl_base_err;
	double kld_mean, kld_mean_err, kld_median, kld_p99, kld_max;
	double dp_mean, dp_mean_err, dp_rms; /* p(next token) - p_base(next token) */
	double dp_top_mean;                  /* p(base's top token) - p_base(same) */
	double same_top, same_top_err;       /* fraction of positions with the same argmax */
} q42_quality_report;

/* Run the windows through e. Q42_EARG: fewer than 2 * n_ctx tokens, the
 * window does not fit the engine's context or is below
 * Q42_QUALITY_CTX_MIN, base and base_engine both given, the base does
 * not match (n_vocab, n_ctx, BOS, or ids given and different from the
 * base's tokens); Q42_EIO: base_out could not be written; Q42_ENOMEM. */
Q42_API int q42_quality_run(q42_engine *e, const q42_tokenizer *tok, const q42_quality_job *job,
			    q42_quality_report *r, q42_err *err);

/* Append the report as "name<TAB>value[<TAB>error]" lines (q42run(1),
 * "QUALITY"); the KL lines only when has_kl. */
Q42_API bool q42_quality_report_format(const q42_quality_report *r, q42_buf *out);

#endif
