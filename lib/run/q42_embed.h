/* q42_embed.h -- what turns the engine's embedding vectors into what a
 * retrieval user asks for: EmbeddingGemma's task prefixes, Matryoshka
 * truncation, llama.cpp's normalisations (common_embd_normalize), cosine
 * and ColBERT MaxSim scores with a fixed reduction order, and a ranking
 * sorted by score with ties in input order.
 */
#ifndef Q42_EMBED_H
#define Q42_EMBED_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"

/* Normalisations, numbered as llama.cpp's --embd-normalize: -1 none, 0
 * max-abs (scaled to +-32760), 1 taxicab, 2 L2 (the default), p > 2 the
 * p-norm. */
#define Q42_EMBD_NORM_NONE (-1)
#define Q42_EMBD_NORM_MAXABS 0
#define Q42_EMBD_NORM_TAXICAB 1
#define Q42_EMBD_NORM_L2 2

/* out = in (n values) divided by its norm, as llama.cpp computes it: the
 * norm accumulated in double in index order, 1/norm rounded to float,
 * each value times that; a zero norm gives zeros. in == out is allowed. */
Q42_API void q42_embed_normalize(const float *in, float *out, uint32_t n, int32_t norm);

/* The prompt prefix of an EmbeddingGemma task ("raw": ""); NULL for an
 * unknown name. Q42_EMBED_TASKS lists the names for messages. */
#define Q42_EMBED_TASKS "retrieval_query, retrieval_document, question_answering, " \
	"fact_verification, classification, clustering, semantic_similarity, " \
	"code_retrieval, summarization, raw"
Q42_API const char *q42_embed_task_prefix(const char *name);

/* The dot product of a and b (n values), summed in double in index order
 * and rounded to float once: the same bits on every machine. */
Q42_API float q42_embed_dot(const float *a, const float *b, uint32_t n);
/* Cosine similarity: dot / (|a| |b|) in double, 0 when either is zero. */
Q42_API float q42_embed_cosine(const float *a, const float *b, uint32_t n);
/* ColBERT's MaxSim: over the nq query vectors in order, the largest
 * q42_embed_dot with any of the nd document vectors (dim values each),
 * summed in double and rounded once. 0 when either side is empty. */
Q42_API float q42_embed_maxsim(const float *q, uint32_t nq, const float *d, uint32_t nd,
			       uint32_t dim);

/* order[0..n-1] = 0..n-1 sorted by score, highest first, ties (and NaN,
 * placed last) in input order. */
Q42_API void q42_embed_rank(const float *score, uint32_t n, uint32_t *order);

#endif
