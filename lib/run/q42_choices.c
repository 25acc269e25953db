/* q42_choices.c -- option scoring over one prompt evaluation.
 *
 * Log-softmax is taken in double over the full vocabulary, max-shifted,
 * so values are comparable with llama.cpp's logits to the logits' own
 * precision. Options never see each other: the cache is cut back to the
 * prompt before each one. Never prints, never allocates per token.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "run/q42_choices.h"
#include "common/q42_utf8.h"

int q42_choices_split(const char *s, size_t n, char sep, q42_choice **out, uint32_t *n_out,
		      q42_err *err)
{
	q42_choice *c = NULL;
	uint32_t k = 0;
	size_t pos = 0, end = n;
	int rc = Q42_OK;

	*out = NULL;
	*n_out = 0;
	c = calloc(Q42_CHOICES_MAX, sizeof *c);
	if (c == NULL)
		return q42_err_set(err, Q42_ENOMEM, "choices: out of memory");
	if (sep == '\n' && n > 0 && s[n - 1] == '\n')
		end = n - 1;
	for (;;) {
		const char *p = s + pos, *e = memchr(p, sep, end - pos);
		size_t l = e ? (size_t)(e - p) : end - pos;
		pos += l + 1;
		if (sep == '\n' && l > 0 && p[l - 1] == '\r')
			l--;
		if (l == 0) {
			rc = q42_err_set(err, Q42_EARG, "choices: option %u is empty", k + 1);
			goto fail;
		}
		if (k == Q42_CHOICES_MAX) {
			rc = q42_err_set(err, Q42_EARG, "choices: more than %u options", Q42_CHOICES_MAX);
			goto fail;
		}
		if (l > Q42_CHOICE_MAX_BYTES || q42_utf8_check((const uint8_t *)p, l) != l) {
			rc = q42_err_set(err, Q42_EARG,
					 "choices: option %u: expected 1..%u bytes of valid UTF-8", k + 1,
					 Q42_CHOICE_MAX_BYTES);
			goto fail;
		}
		for (uint32_t j = 0; j < k; j++)
			if (c[j].len == l && memcmp(c[j].text, p, l) == 0) {
				rc = q42_err_set(err, Q42_EARG, "choices: option %u repeats option %u",
						 k + 1, j + 1);
				goto fail;
			}
		c[k].text = p;
		c[k].len = l;
		k++;
		if (e == NULL)
			break;
	}
	if (k < 2) {
		rc = q42_err_set(err, Q42_EARG, "choices: need at least 2 options, got %u", k);
		goto fail;
	}
	*out = c;
	*n_out = k;
	return Q42_OK;
fail:
	free(c);
	return rc;
}

void q42_choices_free(q42_choice *c, uint32_t n)
{
	if (c == NULL)
		return;
	for (uint32_t i = 0; i < n; i++)
		q42_tokens_free(&c[i].ids);
	free(c);
}

const char *q42_decision_kind_name(enum q42_decision_kind k)
{
	switch (k) {
	case Q42_DECISION_YESNO: return "yesno";
	case Q42_DECISION_CHOICE: return "choice";
	case Q42_DECISION_SCORE: return "score";
	case Q42_DECISION_OPTIONS: break;
	}
	return "options";
}

bool q42_decision_kind_from_name(const char *name, enum q42_decision_kind *out)
{
	for (int k = Q42_DECISION_OPTIONS; k <= Q42_DECISION_SCORE; k++)
		if (strcmp(name, q42_decision_kind_name((enum q42_decision_kind)k)) == 0) {
			*out = (enum q42_decision_kind)k;
			return true;
		}
	return false;
}

int q42_decision_options(enum q42_decision_kind k, const char *const *texts, const size_t *lens,
			 uint32_t n, int64_t lo, int64_t hi, q42_buf *store, q42_choice **out,
			 uint32_t *n_out, q42_err *err)
{
	q42_buf_reset(store);
	switch (k) {
	case Q42_DECISION_YESNO:
		q42_buf_printf(store, " yes\n no");
		break;
	case Q42_DECISION_SCORE:
		if (lo > hi || lo < -Q42_DECISION_SCORE_ABS_MAX || hi > Q42_DECISION_SCORE_ABS_MAX ||
		    hi - lo >= (int64_t)Q42_CHOICES_MAX)
			return q42_err_set(err, Q42_EARG,
					   "decision: score range %lld..%lld: expected lo <= hi, at most %u values"
					   " within +-%lld", (long long)lo, (long long)hi, Q42_CHOICES_MAX,
					   Q42_DECISION_SCORE_ABS_MAX);
		for (int64_t v = lo; v <= hi; v++)
			q42_buf_printf(store, v == lo ? " %lld" : "\n %lld", (long long)v);
		break;
	case Q42_DECISION_CHOICE:
	case Q42_DECISION_OPTIONS:
		for (uint32_t i = 0; i < n; i++) {
			if (memchr(texts[i], '\n', lens[i]) != NULL)
				return q42_err_set(err, Q42_EARG, "choices: option %u holds a line feed", i + 1);
			if (i > 0)
				q42_buf_append(store, "\n", 1);
			q42_buf_append(store, texts[i], lens[i]);
		}
		break;
	}
	if (store->failed)
		return q42_err_set(err, Q42_ENOMEM, "decision: out of memory");
	return q42_choices_split(store->data ? (const char *)store->data : "", store->len, '\n', out,
				 n_out, err);
}

uint32_t q42_choices_best(const q42_choice *c, uint32_t n)
{
	uint32_t b = 0;
	for (uint32_t i = 1; i < n; i++)
		if (c[i].prob > c[b].prob)
			b = i;
	return b;
}

/* log softmax(l)[id], in double */
static double log_prob(const float *l, uint32_t n, int32_t id)
{
	double m = -INFINITY, sum = 0.0;
	for (uint32_t i = 0; i < n; i++)
		if ((double)l[i] > m)
			m = (double)l[i];
	for (uint32_t i = 0; i < n; i++)
		sum += exp((double)l[i] - m);
	return (double)l[id] - m - log(sum);
}

int q42_choices_score(q42_engine *e, const q42_tokenizer *tok, const q42_request *rq,
		      q42_choice *c, uint32_t n, q42_result *r, q42_err *err)
{
	const uint32_t nv = q42_engine_n_vocab(e), n_ctx = q42_engine_n_ctx(e);
	float *base = NULL;
	double mx = -INFINITY, sum = 0.0;
	uint32_t np;
	int rc;

	for (uint32_t i = 0; i < n; i++) {
		q42_tokens_free(&c[i].ids);
		rc = q42_tokenizer_encode(tok, c[i].text, c[i].len, 0, &c[i].ids, err);
		if (rc != Q42_OK)
			return rc;
		if (c[i].ids.n == 0)
			return q42_err_set(err, Q42_EARG, "choices: option %u has no tokens", i + 1);
	}
	rc = q42_prompt_eval(e, tok, rq, r, err);
	if (rc != Q42_OK)
		return rc;
	np = q42_engine_n_past(e);
	base = malloc((size_t)nv * sizeof *base);
	if (base == NULL)
		return q42_err_set(err, Q42_ENOMEM, "choices: out of memory");
	memcpy(base, q42_engine_logits(e), (size_t)nv * sizeof *base);
	for (uint32_t i = 0; i < n; i++) {
		const float *l = base;
		double ll = 0.0;
		if (c[i].ids.n - 1 > n_ctx - np) {
			rc = q42_err_set(err, Q42_EARG,
					 "choices: option %u (%zu tokens) does not fit the context after "
					 "the prompt (see --ctx)", i + 1, c[i].ids.n);
			goto done;
		}
		for (size_t j = 0; j < c[i].ids.n; j++) {
			int32_t id = c[i].ids.ids[j];
			ll += log_prob(l, nv, id);
			if (j + 1 == c[i].ids.n)
				break;
			rc = q42_engine_eval(e, &id, 1, err);
			if (rc != Q42_OK)
				goto done;
			l = q42_engine_logits(e);
		}
		rc = q42_engine_truncate(e, np, err);
		if (rc != Q42_OK)
			goto done;
		c[i].loglik = ll;
		if (ll > mx)
			mx = ll;
	}
	for (uint32_t i = 0; i < n; i++)
		sum += exp(c[i].loglik - mx);
	for (uint32_t i = 0; i < n; i++)
		c[i].prob = exp(c[i].loglik - mx) / sum;
	rc = Q42_OK;
done:
	free(base);
	return rc;
}
