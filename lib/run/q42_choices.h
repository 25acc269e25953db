/* q42_choices.h -- typed decisions: the probability of each allowed
 * answer, scored instead of generated.
 *
 * Each option is tokenized on its own (no BOS/EOS, special-token text is
 * text) and its log-likelihood is the sum, over its tokens, of the
 * log-softmax of the logits after the prompt and the option's earlier
 * tokens. The probabilities are the softmax of those log-likelihoods over
 * the options. The prompt is evaluated once; each option is evaluated
 * after it and then taken back (the cache is truncated). Nothing here
 * prints. Also: the raw next-token logits for chosen ids (--logits-for).
 */
#ifndef Q42_CHOICES_H
#define Q42_CHOICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "engine/q42_engine.h"
#include "run/q42_generate.h"
#include "tokenizer/q42_tokenizer.h"

#define Q42_CHOICES_MAX 1024u          /* options per request */
#define Q42_CHOICE_MAX_BYTES 4096u     /* bytes of one option */
#define Q42_LOGITS_FOR_MAX 65536u      /* ids of --logits-for */

typedef struct q42_choice {
	const char *text; /* not owned */
	size_t len;
	q42_tokens ids;
	double loglik;    /* natural log */
	double prob;
} q42_choice;

/* Split "a,b,c" (sep ',') or lines (sep '\n', a final newline and '\r'
 * before it ignored) into options pointing into s; Q42_EARG for an empty
 * option, more than Q42_CHOICES_MAX, an option over Q42_CHOICE_MAX_BYTES
 * or not valid UTF-8, a duplicate. *out is allocated (free()). */
Q42_API int q42_choices_split(const char *s, size_t n, char sep, q42_choice **out, uint32_t *n_out,
			      q42_err *err);
Q42_API void q42_choices_free(q42_choice *c, uint32_t n);

/* Typed decisions (q42run --decisions, --jsonl): the kind says which
 * options are scored. */
enum q42_decision_kind {
	Q42_DECISION_OPTIONS = 0, /* the options the caller lists (--choices) */
	Q42_DECISION_YESNO,       /* " yes" and " no" */
	Q42_DECISION_CHOICE,      /* options listed with the question */
	Q42_DECISION_SCORE,       /* the integers lo..hi, each as " N" */
};
#define Q42_DECISION_SCORE_ABS_MAX 1000000000ll
/* "options", "yesno", "choice", "score"; and back (false: no such kind). */
Q42_API const char *q42_decision_kind_name(enum q42_decision_kind k);
Q42_API bool q42_decision_kind_from_name(const char *name, enum q42_decision_kind *out);
/* The options of a decision of kind k into *out (as q42_choices_split:
 * allocated, texts pointing into store, which must outlive them): for
 * CHOICE the n texts given (their rules are q42_choices_split's; none may
 * hold a line feed), for SCORE lo..hi (at most Q42_CHOICES_MAX values,
 * |values| <= Q42_DECISION_SCORE_ABS_MAX). Q42_EARG names what is wrong. */
Q42_API int q42_decision_options(enum q42_decision_kind k, const char *const *texts,
				 const size_t *lens, uint32_t n, int64_t lo, int64_t hi, q42_buf *store,
				 q42_choice **out, uint32_t *n_out, q42_err *err);
/* The index of the most probable option (the first on ties). */
Q42_API uint32_t q42_choices_best(const q42_choice *c, uint32_t n);

/* Evaluate rq's prompt (as q42_prompt_eval; r gets the prompt and its
 * timings) and score every option. Q42_EARG: an option has no tokens or
 * does not fit the context after the prompt; prompt errors. */
Q42_API int q42_choices_score(q42_engine *e, const q42_tokenizer *tok, const q42_request *rq,
			      q42_choice *c, uint32_t n, q42_result *r, q42_err *err);

#endif
