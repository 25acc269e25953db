/* q42_sieve.h -- grammar-constrained decoding: which tokens keep the
 * output a valid prefix of a grammar that can still be completed within
 * the token budget.
 *
 * A sieve joins a compiled grammar (q42_grammar.h) to a vocabulary. For
 * each automaton state it computes, once, the set of tokens whose text
 * leads to a live state and the states those tokens lead to; from these,
 * the fewest tokens that complete a sentence from a state (computed when
 * first needed, kept). A step allows only tokens after which a sentence
 * can still be completed in the tokens left, so a request that starts
 * with enough budget always ends complete. End-of-generation tokens are
 * allowed exactly when the text so far is a complete sentence; tokens
 * without text never are. The first generated token is judged on its
 * text as the output shows it (a SentencePiece vocabulary drops its
 * leading space there).
 */
#ifndef Q42_SIEVE_H
#define Q42_SIEVE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "constrain/q42_grammar.h"
#include "tokenizer/q42_tokenizer.h"

/* No limit on the tokens (q42_sieve_reset), or no completion at all
 * (q42_sieve_min_tokens). */
#define Q42_SIEVE_UNBOUNDED UINT32_MAX

typedef struct q42_sieve q42_sieve;

/* g and tok must outlive the sieve. Q42_ENOMEM, or an error of
 * q42_tokenizer_piece. */
Q42_API int q42_sieve_open(q42_sieve **out, const q42_grammar *g, const q42_tokenizer *tok,
			   q42_err *err);
Q42_API void q42_sieve_close(q42_sieve *s);
/* Back to the grammar's start, before the first generated token, with
 * at most budget tokens to generate (end-of-generation tokens do not
 * count; Q42_SIEVE_UNBOUNDED: no limit). */
Q42_API void q42_sieve_reset(q42_sieve *s, uint32_t budget);
/* Set the logits of every token the grammar does not allow now to
 * -INFINITY; returns how many remain allowed (0: no completion fits the
 * tokens left). Q42_ENOMEM from the first visit of a state is reported
 * as 0 allowed with *nomem set. */
Q42_API uint32_t q42_sieve_mask(q42_sieve *s, float *logits, bool *nomem);
/* Advance over token id (which must have been allowed); false if not. */
Q42_API bool q42_sieve_accept(q42_sieve *s, int32_t id);
/* The fewest tokens that make the text so far a complete sentence (0
 * when it is one; Q42_SIEVE_UNBOUNDED when no token sequence can).
 * Q42_ENOMEM is reported as Q42_SIEVE_UNBOUNDED with *nomem set. */
Q42_API uint32_t q42_sieve_min_tokens(q42_sieve *s, bool *nomem);
/* The text so far is a complete sentence; and cannot be extended. */
Q42_API bool q42_sieve_complete(const q42_sieve *s);
Q42_API bool q42_sieve_final(const q42_sieve *s);
/* Automaton states whose token set has been computed. */
Q42_API uint32_t q42_sieve_masks_built(const q42_sieve *s);

#endif
