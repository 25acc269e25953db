/* q42_jsonl.h -- q42run's --jsonl requests (q42run(1), JSONL INPUT): one
 * JSON object a line, {"prompt": TEXT} or {"prefix": TEXT, "questions":
 * [QUESTION, ...]} where a QUESTION is TEXT or {"question": TEXT, ...};
 * the line or a question may carry a decision ("kind" with "options" or
 * "min" and "max"; q42run(1), DECISIONS). Parsed in the library, not the
 * program, so that the fuzz harness (fuzz_jsonl) runs the code q42run runs.
 * Nothing here prints.
 */
#ifndef Q42_JSONL_H
#define Q42_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "run/q42_choices.h"

typedef struct q42_jsonl_req q42_jsonl_req;

/* One line (len bytes, without its line feed) into *out; Q42_EFORMAT
 * with the reason (jansson's for text that is not JSON, or the shape
 * expected), Q42_ENOMEM. Duplicate keys are refused. */
Q42_API int q42_jsonl_parse(q42_jsonl_req **out, const char *line, size_t len, q42_err *err);
Q42_API void q42_jsonl_free(q42_jsonl_req *r);

/* The prompts the line holds: 1 for "prompt", else its questions. */
Q42_API size_t q42_jsonl_count(const q42_jsonl_req *r);

/* Prompt i (< q42_jsonl_count): "prompt", or "prefix" followed by
 * question i, into text (reset first); Q42_ENOMEM. */
Q42_API int q42_jsonl_prompt(const q42_jsonl_req *r, size_t i, q42_buf *text, q42_err *err);

/* Whether prompt i carries a decision: its question's "kind", else the
 * line's. */
Q42_API bool q42_jsonl_has_decision(const q42_jsonl_req *r, size_t i);

/* That decision's kind and options (q42_decision_options: allocated,
 * texts in store); Q42_EARG naming what is wrong. */
Q42_API int q42_jsonl_decision(const q42_jsonl_req *r, size_t i, q42_buf *store, q42_choice **ch,
			       uint32_t *n, enum q42_decision_kind *kind, q42_err *err);

#endif
