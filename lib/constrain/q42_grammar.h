/* q42_grammar.h -- the sieve's grammar dialect: a small EBNF over bytes,
 * compiled to a deterministic automaton.
 *
 * Rules, alternation, concatenation, grouping, ?, *, +, string literals
 * and byte classes, as specified in q42run(1), section GRAMMARS. Rules may
 * refer to other rules but never, directly or through others, to
 * themselves: the language is regular, so the whole grammar becomes one
 * DFA when it is compiled and every later question (can this byte follow?
 * is the text complete?) is a table lookup. States from which no complete
 * sentence can be reached are removed, so "not dead" means "still a
 * valid prefix". Nothing here knows about tokens (see q42_sieve.h).
 */
#ifndef Q42_GRAMMAR_H
#define Q42_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"

#define Q42_GRAMMAR_MAX_BYTES (1u << 20)  /* source text */
#define Q42_GRAMMAR_MAX_NFA (1u << 18)    /* automaton states before determinization */
#define Q42_GRAMMAR_MAX_DFA 8192u         /* states after */
#define Q42_GRAMMAR_MAX_WORK (1u << 23)  /* NFA states visited while determinizing */
#define Q42_GRAMMAR_MAX_DEPTH 64u         /* nesting of groups and rule references */

typedef struct q42_grammar q42_grammar;

/* Compile src[0..n). The first rule is the start symbol. Errors
 * (Q42_EARG) name the line and column of src ("NAME:L:C: ..." with the
 * given name), an undefined or recursive rule, or a limit; Q42_ENOMEM. */
Q42_API int q42_grammar_compile(q42_grammar **out, const char *src, size_t n, const char *name,
				q42_err *err);
Q42_API void q42_grammar_free(q42_grammar *g);

/* The built-in grammar of --sieve quin (a quin line, see q42run(1)). */
Q42_API const char *q42_grammar_quin_source(void);

Q42_API int32_t q42_grammar_start(const q42_grammar *g);
/* The state after byte b, or -1 when b cannot follow. */
Q42_API int32_t q42_grammar_next(const q42_grammar *g, int32_t state, uint8_t b);
/* The text read so far is a sentence of the grammar. */
Q42_API bool q42_grammar_accepting(const q42_grammar *g, int32_t state);
/* ... and no byte can follow it. */
Q42_API bool q42_grammar_final(const q42_grammar *g, int32_t state);
Q42_API uint32_t q42_grammar_n_states(const q42_grammar *g);
/* Bytes of one class lead every state to the same next state, so a text
 * can be judged on its class sequence (the sieve groups tokens by it). */
Q42_API uint8_t q42_grammar_byte_class(const q42_grammar *g, uint8_t b);

#endif
