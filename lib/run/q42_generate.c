/* q42_generate.c -- the request loop: prompt -> tokens -> prefill ->
 * decode until a stop, with streamed text and timings.
 *
 * Streaming never emits bytes that might still change: an incomplete UTF-8
 * sequence waits for the next token, and a tail that could be the start of
 * a stop string waits until it is known not to be one. The first generated
 * token comes from the prefill logits, so N tokens cost N-1 decode steps,
 * which is how llama.cpp counts them. With a Sentinel, step s is sent to
 * it before the forward pass of its token and its verdict is read after
 * that pass, before anything of step s is committed: the check overlaps
 * the pass, and a denial takes the pass back (the cache is truncated) and
 * runs the substitute instead. Nothing here prints.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "run/q42_generate.h"
#include "common/q42_utf8.h"

const char *q42_stop_name(enum q42_stop_reason r)
{
	switch (r) {
	case Q42_STOP_NONE: return "none";
	case Q42_STOP_EOS: return "eos";
	case Q42_STOP_MAX_TOKENS: return "max_tokens";
	case Q42_STOP_DEADLINE: return "deadline";
	case Q42_STOP_STRING: return "stop";
	case Q42_STOP_CTX_FULL: return "ctx_full";
	case Q42_STOP_GRAMMAR: return "grammar";
	case Q42_STOP_SENTINEL: return "sentinel";
	}
	return "?";
}

void q42_result_init(q42_result *r)
{
	memset(r, 0, sizeof *r);
	q42_buf_init(&r->text);
	q42_quin_init(&r->quin);
}

void q42_result_free(q42_result *r)
{
	free(r->iv);
	q42_quin_free(&r->quin);
	q42_tokens_free(&r->prompt);
	q42_tokens_free(&r->out);
	q42_buf_free(&r->text);
	memset(r, 0, sizeof *r);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct stream {
	const q42_request *rq;
	q42_result *r;
	q42_buf pend;    /* raw piece bytes not yet checked as UTF-8 */
	size_t emitted;  /* bytes of r->text already given to on_text */
	size_t max_stop; /* longest stop string */
};

/* Move the complete UTF-8 part of pend into the text. */
static void take_text(struct stream *st, bool final)
{
	size_t used;
	if (st->pend.len == 0)
		return;
	used = q42_utf8_sanitize(&st->r->text, st->pend.data, st->pend.len, final,
				 &st->r->text_replaced);
	memmove(st->pend.data, st->pend.data + used, st->pend.len - used);
	st->pend.len -= used;
}

/* Cut the text at the first stop string that starts at or after from. */
static bool cut_at_stop(struct stream *st, size_t from)
{
	q42_buf *t = &st->r->text;
	size_t best = SIZE_MAX;
	for (uint32_t i = 0; i < st->rq->n_stops; i++) {
		const char *s = st->rq->stops[i];
		size_t sl = strlen(s);
		if (sl == 0 || t->len < sl)
			continue;
		for (size_t p = from; p + sl <= t->len && p < best; p++)
			if (memcmp(t->data + p, s, sl) == 0) {
				best = p;
				break;
			}
	}
	if (best == SIZE_MAX)
		return false;
	t->len = best;
	return true;
}

/* Bytes at the end of the text that could begin a stop string. */
static size_t stop_hold(const struct stream *st)
{
	const q42_buf *t = &st->r->text;
	size_t hold = 0;
	for (uint32_t i = 0; i < st->rq->n_stops; i++) {
		const char *s = st->rq->stops[i];
		size_t sl = strlen(s);
		for (size_t k = sl ? sl - 1 : 0; k > hold; k--)
			if (k <= t->len && memcmp(t->data + t->len - k, s, k) == 0) {
				hold = k;
				break;
			}
	}
	return hold;
}

static void emit(struct stream *st, size_t upto)
{
	if (upto > st->emitted && st->rq->on_text != NULL)
		st->rq->on_text(st->rq->ud, (const char *)st->r->text.data + st->emitted,
				upto - st->emitted);
	if (upto > st->emitted)
		st->emitted = upto;
}

/* The bytes a generated token adds to the text. The first one loses the
 * leading space a SentencePiece vocabulary strips when it detokenizes, so
 * the text is what llama.cpp's llama_detokenize gives for the generated
 * ids (the "text" of shared/models/REFERENCE.md). */
static int token_text(const q42_tokenizer *tok, int32_t id, bool first, q42_buf *piece,
		      q42_err *err)
{
	q42_buf d;
	int rc;

	q42_buf_reset(piece);
	rc = q42_tokenizer_piece(tok, id, 0, piece, err);
	if (rc != Q42_OK || !first || piece->len == 0 || piece->data[0] != ' ')
		return rc;
	q42_buf_init(&d);
	rc = q42_tokenizer_decode(tok, &id, 1, 0, &d, err);
	if (rc == Q42_OK && (d.len == 0 || d.data[0] != ' ')) {
		memmove(piece->data, piece->data + 1, piece->len - 1);
		piece->len--;
	}
	q42_buf_free(&d);
	return rc;
}

static int tokenize_prompt(const q42_tokenizer *tok, const q42_request *rq, q42_result *r,
			   q42_err *err)
{
	const uint8_t *p = (const uint8_t *)rq->prompt;
	size_t bad;
	unsigned flags = 0;
	q42_buf fixed;
	int rc;

	if (rq->prompt_len > Q42_GEN_PROMPT_MAX_BYTES)
		return q42_err_set(err, Q42_EARG, "prompt: %zu bytes, the limit is %u",
				   rq->prompt_len, Q42_GEN_PROMPT_MAX_BYTES);
	rc = q42_sha256(p, rq->prompt_len, r->prompt_sha256, err);
	if (rc != Q42_OK)
		return rc;
	if (rq->add_special)
		flags |= Q42_TOKENIZE_ADD_SPECIAL;
	if (rq->parse_special)
		flags |= Q42_TOKENIZE_PARSE_SPECIAL;
	bad = q42_utf8_check(p, rq->prompt_len);
	if (bad == rq->prompt_len)
		return q42_tokenizer_encode(tok, rq->prompt, rq->prompt_len, flags, &r->prompt, err);
	if (rq->strict)
		return q42_err_set(err, Q42_EARG,
				   "prompt: invalid UTF-8 at byte offset %zu (refused under --strict)",
				   bad);
	q42_buf_init(&fixed);
	q42_utf8_sanitize(&fixed, p, rq->prompt_len, true, &r->prompt_replaced);
	if (fixed.failed) {
		q42_buf_free(&fixed);
		return q42_err_set(err, Q42_ENOMEM, "prompt: out of memory");
	}
	r->fallbacks |= Q42_FALLBACK_PROMPT_UTF8;
	rc = q42_tokenizer_encode(tok, (const char *)fixed.data, fixed.len, flags, &r->prompt, err);
	q42_buf_free(&fixed);
	return rc;
}

static int prompt_stage(q42_engine *e, q42_sampler *s, const q42_tokenizer *tok,
			const q42_request *rq, q42_result *r, double t0, double deadline,
			q42_err *err)
{
	const uint32_t n_ctx = q42_engine_n_ctx(e), nb = q42_engine_n_batch(e);
	uint32_t from = 0, c = 0;
	size_t pos;
	double t1;
	int rc;

	rc = tokenize_prompt(tok, rq, r, err);
	if (rc != Q42_OK)
		return rc;
	t1 = now_ms();
	r->tokenize_ms = t1 - t0;
	if (r->prompt.n == 0)
		return q42_err_set(err, Q42_EARG, "prompt: no tokens (empty prompt and no BOS)");
	if (r->prompt.n > n_ctx)
		return q42_err_set(err, Q42_EARG,
				   "prompt: %zu tokens do not fit the context of %u tokens (see --ctx)",
				   r->prompt.n, n_ctx);
	if (rq->prefix != NULL) {
		rc = q42_prefix_begin(rq->prefix, r->prompt.ids, (uint32_t)r->prompt.n, &from, err);
		if (rc != Q42_OK)
			return rc;
	} else {
		q42_engine_reset(e);
	}
	r->n_reused = from;
	if (s != NULL) {
		q42_sampler_reset(s);
		for (size_t i = 0; i < r->prompt.n; i++)
			q42_sampler_accept(s, r->prompt.ids[i]);
	}
	/* a cold run's passes, of nb from position 0, whatever is reused: the
	 * first one from where reuse ends up to the next multiple of nb
	 * (q42_prefix.h says why its tokens round as in the cold pass) */
	for (pos = from; pos < r->prompt.n; pos += c) {
		const size_t end = (pos / nb + 1) * nb;
		c = (uint32_t)((r->prompt.n < end ? r->prompt.n : end) - pos);
		rc = q42_engine_eval(e, r->prompt.ids + pos, c, err);
		if (rc != Q42_OK)
			return rc;
		if (deadline > 0 && pos + c < r->prompt.n && now_ms() >= deadline) {
			r->stop = Q42_STOP_DEADLINE;
			pos += c;
			break;
		}
	}
	if (rq->prefix != NULL) {
		rc = q42_prefix_end(rq->prefix, r->prompt.ids, (uint32_t)pos, err);
		if (rc != Q42_OK)
			return rc;
	}
	r->prefill_ms = now_ms() - t1;
	return Q42_OK;
}

int q42_prompt_eval(q42_engine *e, const q42_tokenizer *tok, const q42_request *rq,
		    q42_result *r, q42_err *err)
{
	return prompt_stage(e, NULL, tok, rq, r, now_ms(), 0, err);
}

static bool add_iv(q42_result *r, uint32_t step, uint32_t rule, int32_t denied)
{
	if (r->n_iv == r->cap_iv) {
		size_t cap = r->cap_iv ? 2 * r->cap_iv : 8;
		q42_intervention *p = realloc(r->iv, cap * sizeof *p);
		if (p == NULL)
			return false;
		r->iv = p;
		r->cap_iv = cap;
	}
	r->iv[r->n_iv++] = (q42_intervention){step, rule, denied, -1};
	return true;
}

/* The best-ranked token not denied: highest logit, lowest id on ties;
 * masked (-inf) and non-finite logits never qualify. -1 if none. */
static int32_t best_not_denied(const float *l, uint32_t n, const int32_t *denied, uint32_t nd)
{
	int32_t best = -1;
	for (uint32_t i = 0; i < n; i++) {
		bool d = false;
		if (!isfinite(l[i]) || (best >= 0 && !(l[i] > l[best])))
			continue;
		for (uint32_t k = 0; k < nd && !d; k++)
			d = denied[k] == (int32_t)i;
		if (!d)
			best = (int32_t)i;
	}
	return best;
}

static int nomem(q42_err *err)
{
	return q42_err_set(err, Q42_ENOMEM, "generate: out of memory");
}

int q42_generate(q42_engine *e, q42_sampler *s, const q42_tokenizer *tok,
		 const q42_request *rq, q42_result *r, q42_err *err)
{
	struct stream st = {rq, r, {0}, 0, 0};
	q42_buf piece;
	const double t0 = now_ms();
	const double deadline = rq->deadline_s > 0 ? t0 + rq->deadline_s * 1e3 : 0;
	const uint32_t n_ctx = q42_engine_n_ctx(e), nv = q42_engine_n_vocab(e);
	q42_sentinel *sen = rq->sentinel;
	q42_sieve *sv = rq->sieve;
	/* text is held back when the request may still fail after it began */
	const bool hold = sv != NULL || (sen != NULL && rq->strict);
	float *work = NULL;
	/* nothing but the argmax reads the logits: the engine picks the token
	 * while it computes them (next, -1 when the last eval did not) */
	const bool top1 = sv == NULL && sen == NULL && !rq->ignore_eos && q42_sampler_is_argmax(s);
	int32_t next = -1;
	int32_t denied[Q42_GEN_MAX_DENIALS];
	int32_t *eog_ids = NULL; /* ignore_eos: the ids masked at every step */
	uint32_t n_eog = 0;
	double t2;
	int rc;

	q42_buf_init(&st.pend);
	q42_buf_init(&piece);
	rc = prompt_stage(e, s, tok, rq, r, t0, deadline, err);
	if (rc != Q42_OK)
		goto done;
	for (uint32_t i = 0; i < rq->n_stops; i++)
		if (strlen(rq->stops[i]) > st.max_stop)
			st.max_stop = strlen(rq->stops[i]);
	if (sv != NULL || sen != NULL || rq->ignore_eos) {
		work = malloc((size_t)nv * sizeof *work);
		if (work == NULL) {
			rc = nomem(err);
			goto done;
		}
	}
	if (rq->ignore_eos) {
		for (uint32_t i = 0; i < nv; i++)
			if (q42_tokenizer_is_eog(tok, (int32_t)i))
				n_eog++;
		eog_ids = malloc((n_eog ? n_eog : 1) * sizeof *eog_ids);
		if (eog_ids == NULL) {
			rc = nomem(err);
			goto done;
		}
		n_eog = 0;
		for (uint32_t i = 0; i < nv; i++)
			if (q42_tokenizer_is_eog(tok, (int32_t)i))
				eog_ids[n_eog++] = (int32_t)i;
	}
	if (sv != NULL)
		q42_sieve_reset(sv, n_ctx - q42_engine_n_past(e) < rq->max_tokens
				    ? n_ctx - q42_engine_n_past(e) + 1 : rq->max_tokens);
	if (sen != NULL) {
		rc = q42_sentinel_start(sen, err);
		if (rc != Q42_OK)
			goto done;
	}
	t2 = now_ms();

	while (r->stop == Q42_STOP_NONE) {
		const float *l;
		q42_logit_event ev = {0};
		uint32_t n_denied = 0, pos;
		bool evald = false, need_eval, eog;
		size_t before;
		int32_t id;

		if (r->out.n >= rq->max_tokens) {
			r->stop = Q42_STOP_MAX_TOKENS;
			break;
		}
		l = q42_engine_logits(e);
		if (sen != NULL)
			q42_logit_summary(l, nv, &ev);
		if (work != NULL) {
			memcpy(work, l, (size_t)nv * sizeof *work);
			for (uint32_t k = 0; k < n_eog; k++)
				work[eog_ids[k]] = -INFINITY;
			l = work;
		}
		if (sv != NULL) {
			double tm = now_ms();
			bool oom;
			uint32_t n_ok = q42_sieve_mask(sv, work, &oom);
			r->sieve_ms += now_ms() - tm;
			if (oom) {
				rc = nomem(err);
				goto done;
			}
			if (n_ok == 0)
				break; /* no token continues the grammar: misaligned below */
		}
		id = next >= 0 ? next : q42_sampler_sample(s, l);
		next = -1;
		pos = q42_engine_n_past(e);
		for (;;) {
			q42_deny d;
			bool hit = false;
			uint32_t rule = 0;

			eog = q42_tokenizer_is_eog(tok, id);
			need_eval = !eog && r->out.n + 1 < rq->max_tokens && pos < n_ctx;
			if (sen == NULL)
				break;
			ev.step = (uint32_t)r->out.n;
			ev.token = id;
			ev.logit = l[id];
			if (!q42_sentinel_submit(sen, &ev)) {
				r->sentinel_dropped++;
				break; /* unchecked: see q42run(1), --sentinel */
			}
			r->sentinel_events++;
			if (need_eval) {
				/* the forward pass overlaps the Sentinel's check */
				rc = q42_engine_eval(e, &id, 1, err);
				if (rc != Q42_OK)
					goto done;
				r->n_decode++;
				evald = true;
			}
			q42_sentinel_wait(sen);
			while (q42_sentinel_poll(sen, &d))
				if (d.seq == ev.seq) {
					hit = true;
					rule = d.rule;
				}
			if (!hit)
				break;
			if (evald) {
				rc = q42_engine_truncate(e, pos, err);
				if (rc != Q42_OK)
					goto done;
				evald = false;
			}
			if (!add_iv(r, ev.step, rule, id)) {
				rc = nomem(err);
				goto done;
			}
			if (rq->strict) {
				rc = q42_err_set(err, Q42_EARG,
						 "sentinel: rule %s denied token %d at step %u (refused under --strict)",
						 q42_rule_name((enum q42_rule)rule), id, ev.step);
				goto done;
			}
			if (rule == Q42_RULE_NONFINITE || n_denied == Q42_GEN_MAX_DENIALS) {
				r->stop = Q42_STOP_SENTINEL;
				break;
			}
			denied[n_denied++] = id;
			id = best_not_denied(l, nv, denied, n_denied);
			if (id < 0) {
				r->stop = Q42_STOP_SENTINEL;
				break;
			}
			r->iv[r->n_iv - 1].substitute = id;
		}
		if (r->stop != Q42_STOP_NONE)
			break;
		if (eog) {
			r->stop = Q42_STOP_EOS;
			break;
		}
		if (sv != NULL && !q42_sieve_accept(sv, id)) {
			rc = q42_err_set(err, Q42_EARG, "generate: token %d is outside the sieve", id);
			goto done;
		}
		if (!q42_tokens_push(&r->out, id)) {
			rc = nomem(err);
			goto done;
		}
		q42_sampler_accept(s, id);
		rc = token_text(tok, id, r->out.n == 1, &piece, err);
		if (rc != Q42_OK)
			goto done;
		before = r->text.len;
		q42_buf_append(&st.pend, piece.data, piece.len);
		take_text(&st, false);
		if (st.pend.failed || r->text.failed) {
			rc = nomem(err);
			goto done;
		}
		if (st.max_stop > 0 &&
		    cut_at_stop(&st, before >= st.max_stop ? before - st.max_stop + 1 : 0)) {
			r->stop = Q42_STOP_STRING;
			break;
		}
		if (!hold)
			emit(&st, r->text.len - stop_hold(&st));
		if (sv != NULL && q42_sieve_final(sv))
			r->stop = Q42_STOP_GRAMMAR;
		else if (r->out.n >= rq->max_tokens)
			r->stop = Q42_STOP_MAX_TOKENS;
		else if (deadline > 0 && now_ms() >= deadline)
			r->stop = Q42_STOP_DEADLINE;
		else if (pos >= n_ctx)
			r->stop = Q42_STOP_CTX_FULL;
		else if (!evald) {
			rc = top1 ? q42_engine_eval_top1(e, &id, 1, &next, err)
				  : q42_engine_eval(e, &id, 1, err);
			if (rc != Q42_OK)
				goto done;
			r->n_decode++;
		}
	}
	if (sen != NULL)
		q42_sentinel_stop(sen);
	r->decode_ms = now_ms() - t2;
	if (r->stop != Q42_STOP_STRING)
		take_text(&st, true);
	if (r->text.failed) {
		rc = nomem(err);
		goto done;
	}
	if (sv != NULL && !q42_sieve_complete(sv)) {
		rc = q42_err_set(err, Q42_EARG,
				 "[sieve-misaligned] no complete sentence of the grammar after %zu tokens "
				 "(stop: %s)", r->out.n,
				 r->stop == Q42_STOP_NONE ? "no token continues it" : q42_stop_name(r->stop));
		goto done;
	}
	if (sv != NULL && r->stop == Q42_STOP_NONE)
		r->stop = Q42_STOP_GRAMMAR;
	if (rq->parse_quin) {
		q42_err qe = {0};
		if (q42_quin_parse(&r->quin, (const char *)r->text.data, r->text.len,
				   Q42_SYNTAX_QUINS, &qe) != Q42_OK || r->quin.prov.kind == Q42_TERM_NONE) {
			rc = q42_err_set(err, Q42_EARG, "[sieve-misaligned] the output is not a quin: %s",
					 qe.msg[0] ? qe.msg : "no provenance term");
			goto done;
		}
		r->has_quin = true;
	}
	emit(&st, r->text.len);
	rc = Q42_OK;
done:
	if (sen != NULL)
		q42_sentinel_stop(sen);
	free(work);
	free(eog_ids);
	q42_buf_free(&st.pend);
	q42_buf_free(&piece);
	return rc;
}
