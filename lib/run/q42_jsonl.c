/* q42_jsonl.c -- q42run's --jsonl request lines and their decisions
 * (q42_jsonl.h). The line's JSON stays parsed (jansson) while its prompts
 * are asked for. A \u0000 escape is refused (jansson's default): a
 * prompt is text without NUL.
 */
#include "run/q42_jsonl.h"

#include <jansson.h>
#include <stdlib.h>

struct q42_jsonl_req {
	json_t *root;
	size_t n; /* prompts */
};

int q42_jsonl_parse(q42_jsonl_req **out, const char *line, size_t len, q42_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(len ? line : "", len, JSON_REJECT_DUPLICATES, &je);
	q42_jsonl_req *r;
	size_t n = 0;

	*out = NULL;
	if (root == NULL)
		return q42_err_set(err, Q42_EFORMAT, "%s", je.text);
	const json_t *pr = json_object_get(root, "prompt"), *px = json_object_get(root, "prefix");
	const json_t *qs = json_object_get(root, "questions");
	if (!json_is_object(root)) {
		json_decref(root);
		return q42_err_set(err, Q42_EFORMAT, "expected a JSON object");
	}
	if (json_is_string(pr) && px == NULL && qs == NULL) {
		n = 1;
	} else if (json_is_string(px) && json_is_array(qs) && json_array_size(qs) > 0 && pr == NULL) {
		n = json_array_size(qs);
		for (size_t i = 0; i < n; i++) {
			const json_t *qi = json_array_get(qs, i);
			if (!json_is_string(qi) && !json_is_string(json_object_get(qi, "question"))) {
				json_decref(root);
				return q42_err_set(err, Q42_EFORMAT,
						   "question %zu is neither a string nor an object with a "
						   "\"question\" string", i + 1);
			}
		}
	} else {
		json_decref(root);
		return q42_err_set(err, Q42_EFORMAT,
				   "expected {\"prompt\": STRING} or {\"prefix\": STRING, \"questions\": "
				   "[STRING, ...]}");
	}
	if ((r = malloc(sizeof *r)) == NULL) {
		json_decref(root);
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	}
	r->root = root;
	r->n = n;
	*out = r;
	return Q42_OK;
}

void q42_jsonl_free(q42_jsonl_req *r)
{
	if (r != NULL)
		json_decref(r->root);
	free(r);
}

size_t q42_jsonl_count(const q42_jsonl_req *r) { return r->n; }

/* Question i of a prefix line (NULL for a "prompt" line). */
static const json_t *question(const q42_jsonl_req *r, size_t i)
{
	return json_array_get(json_object_get(r->root, "questions"), i);
}

int q42_jsonl_prompt(const q42_jsonl_req *r, size_t i, q42_buf *text, q42_err *err)
{
	const json_t *pr = json_object_get(r->root, "prompt");
	q42_buf_reset(text);
	if (pr != NULL) {
		q42_buf_append(text, json_string_value(pr), json_string_length(pr));
	} else {
		const json_t *px = json_object_get(r->root, "prefix"), *qq = question(r, i);
		if (json_is_object(qq))
			qq = json_object_get(qq, "question");
		q42_buf_append(text, json_string_value(px), json_string_length(px));
		q42_buf_append(text, json_string_value(qq), json_string_length(qq));
	}
	return text->failed ? q42_err_set(err, Q42_ENOMEM, "out of memory") : Q42_OK;
}

/* The object holding prompt i's decision, or NULL. */
static const json_t *spec_of(const q42_jsonl_req *r, size_t i)
{
	const json_t *qq = question(r, i);
	if (json_is_object(qq) && json_object_get(qq, "kind") != NULL)
		return qq;
	return json_object_get(r->root, "kind") != NULL ? r->root : NULL;
}

bool q42_jsonl_has_decision(const q42_jsonl_req *r, size_t i) { return spec_of(r, i) != NULL; }

int q42_jsonl_decision(const q42_jsonl_req *r, size_t i, q42_buf *store, q42_choice **ch, uint32_t *n,
		       enum q42_decision_kind *kind, q42_err *err)
{
	const json_t *spec = spec_of(r, i);
	const json_t *k = json_object_get(spec, "kind"), *opts = json_object_get(spec, "options");
	const json_t *lo = json_object_get(spec, "min"), *hi = json_object_get(spec, "max");
	const char *texts[Q42_CHOICES_MAX];
	size_t lens[Q42_CHOICES_MAX];
	uint32_t n_t = 0;

	*ch = NULL;
	*n = 0;
	if (!json_is_string(k) || !q42_decision_kind_from_name(json_string_value(k), kind) ||
	    *kind == Q42_DECISION_OPTIONS)
		return q42_err_set(err, Q42_EARG, "decision: \"kind\" must be \"yesno\", \"choice\" or \"score\"");
	if ((opts != NULL) != (*kind == Q42_DECISION_CHOICE) ||
	    (lo != NULL || hi != NULL) != (*kind == Q42_DECISION_SCORE))
		return q42_err_set(err, Q42_EARG, "decision: kind %s takes %s", q42_decision_kind_name(*kind),
				   *kind == Q42_DECISION_CHOICE ? "\"options\" and no \"min\" or \"max\""
				   : *kind == Q42_DECISION_SCORE ? "integers \"min\" and \"max\" and no \"options\""
								 : "no \"options\", \"min\" or \"max\"");
	if (*kind == Q42_DECISION_SCORE && (!json_is_integer(lo) || !json_is_integer(hi)))
		return q42_err_set(err, Q42_EARG, "decision: \"min\" and \"max\" must be integers");
	if (*kind == Q42_DECISION_CHOICE) {
		if (!json_is_array(opts) || json_array_size(opts) > Q42_CHOICES_MAX)
			return q42_err_set(err, Q42_EARG, "decision: \"options\" must be an array of at most %u strings",
					   Q42_CHOICES_MAX);
		for (size_t j = 0; j < json_array_size(opts); j++) {
			const json_t *t = json_array_get(opts, j);
			if (!json_is_string(t))
				return q42_err_set(err, Q42_EARG, "decision: option %zu is not a string", j + 1);
			texts[n_t] = json_string_value(t);
			lens[n_t++] = json_string_length(t);
		}
	}
	return q42_decision_options(*kind, texts, lens, n_t, lo ? (int64_t)json_integer_value(lo) : 0,
				    hi ? (int64_t)json_integer_value(hi) : 0, store, ch, n, err);
}
