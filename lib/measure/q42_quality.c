/* q42_quality.c -- perplexity and KL divergence over llama-perplexity's
 * windows (see q42_quality.h), and the KL-base file.
 *
 * The engine only keeps the logits of its last position, so a window is
 * evaluated up to its first scored position in one pass and then one token
 * at a time; results do not depend on the batch split. Log-softmax is in
 * double over the full vocabulary. Log-probs are stored as f32, all of
 * them: unlike llama.cpp's 16-bit file nothing is cut off, so KL figures
 * are exact for the stored values. Never prints; never reads a KL-base
 * byte that q42_klbase_open has not bounded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_ckd.h"
#include "common/q42_file.h"
#include "common/q42_le.h"
#include "measure/q42_quality.h"

struct q42_klbase {
	q42_map map;
	uint32_t n_vocab, n_ctx, n_chunks, n_scored;
	int32_t bos;
	const uint8_t *tokens; /* n_ctx * n_chunks i32 */
	const uint8_t *lp;     /* n_chunks * n_scored * n_vocab f32 */
};

static uint32_t n_scored_of(uint32_t n_ctx)
{
	return n_ctx - 1 - n_ctx / 2;
}

int q42_klbase_open(q42_klbase **out, const char *path, q42_err *err)
{
	q42_klbase *b;
	uint64_t n_tok = 0, sz = 0, lp_bytes = 0;
	uint32_t version, scored;
	int rc;

	*out = NULL;
	b = calloc(1, sizeof *b);
	if (b == NULL)
		return q42_err_set(err, Q42_ENOMEM, "kl-base: out of memory");
	b->map.fd = -1;
	rc = q42_map_open(&b->map, path, 0, err);
	if (rc != Q42_OK)
		goto fail;
	if (b->map.size < Q42_KLBASE_HEADER_BYTES ||
	    memcmp(b->map.data, Q42_KLBASE_MAGIC, 8) != 0) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: not a KL-base file (magic at offset 0)", path);
		goto fail;
	}
	version = q42_ld32(b->map.data + 8);
	b->n_vocab = q42_ld32(b->map.data + 12);
	b->n_ctx = q42_ld32(b->map.data + 16);
	b->n_chunks = q42_ld32(b->map.data + 20);
	b->bos = (int32_t)q42_ld32(b->map.data + 24);
	scored = q42_ld32(b->map.data + 28);
	if (version != Q42_KLBASE_VERSION) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: version (offset 8): expected %u, found %u", path,
				 Q42_KLBASE_VERSION, version);
		goto fail;
	}
	if (b->n_vocab == 0 || b->n_vocab > Q42_QUALITY_VOCAB_MAX) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: n_vocab (offset 12): expected 1..%u, found %u",
				 path, Q42_QUALITY_VOCAB_MAX, b->n_vocab);
		goto fail;
	}
	if (b->n_ctx < Q42_QUALITY_CTX_MIN || b->n_ctx > Q42_ENGINE_CTX_MAX) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: n_ctx (offset 16): expected %u..%u, found %u",
				 path, Q42_QUALITY_CTX_MIN, Q42_ENGINE_CTX_MAX, b->n_ctx);
		goto fail;
	}
	if (b->n_chunks == 0 || b->bos < -1 || b->bos >= (int64_t)b->n_vocab) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s: n_chunks (offset 20) must be >= 1 and bos (offset 24) -1 or a "
				 "token id, found %u and %d", path, b->n_chunks, b->bos);
		goto fail;
	}
	b->n_scored = n_scored_of(b->n_ctx);
	if (scored != b->n_scored) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: n_scored (offset 28): expected %u, found %u",
				 path, b->n_scored, scored);
		goto fail;
	}
	if (q42_mul_overflow(b->n_ctx, b->n_chunks, &n_tok) ||
	    q42_mul_overflow((uint64_t)b->n_chunks * b->n_scored, b->n_vocab, &lp_bytes) ||
	    q42_mul_overflow(lp_bytes, 4, &lp_bytes) || q42_mul_overflow(n_tok, 4, &sz) ||
	    q42_add_overflow(sz, Q42_KLBASE_HEADER_BYTES, &sz) || q42_add_overflow(sz, lp_bytes, &sz) ||
	    sz != b->map.size) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: size: the header asks for %llu bytes, found %llu",
				 path, (unsigned long long)sz, (unsigned long long)b->map.size);
		goto fail;
	}
	b->tokens = b->map.data + Q42_KLBASE_HEADER_BYTES;
	b->lp = b->tokens + n_tok * 4;
	for (uint64_t i = 0; i < n_tok; i++) {
		uint32_t id = q42_ld32(b->tokens + i * 4);
		if (id >= b->n_vocab) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "%s: token %llu (offset %llu): expected an id below %u, found %u",
					 path, (unsigned long long)i,
					 (unsigned long long)(Q42_KLBASE_HEADER_BYTES + i * 4), b->n_vocab,
					 id);
			goto fail;
		}
	}
	*out = b;
	return Q42_OK;
fail:
	q42_klbase_close(b);
	return rc;
}

void q42_klbase_close(q42_klbase *b)
{
	if (b == NULL)
		return;
	if (b->map.path != NULL)
		q42_map_close(&b->map);
	free(b);
}

uint32_t q42_klbase_n_vocab(const q42_klbase *b) { return b->n_vocab; }
uint32_t q42_klbase_n_ctx(const q42_klbase *b) { return b->n_ctx; }
uint32_t q42_klbase_n_chunks(const q42_klbase *b) { return b->n_chunks; }
int32_t q42_klbase_bos(const q42_klbase *b) { return b->bos; }

int32_t q42_klbase_token(const q42_klbase *b, uint64_t i)
{
	return (int32_t)q42_ld32(b->tokens + i * 4);
}

int q42_quality_tokenize(const q42_tokenizer *tok, const char *text, size_t n, q42_tokens *out,
			 q42_err *err)
{
	return q42_tokenizer_encode(tok, text, n, Q42_TOKENIZE_ADD_SPECIAL, out, err);
}

int q42_quality_same_vocab(const q42_tokenizer *a, const q42_tokenizer *b, q42_err *err)
{
	const uint32_t n = q42_tokenizer_n_vocab(a);
	if (n != q42_tokenizer_n_vocab(b))
		return q42_err_set(err, Q42_EARG, "vocabularies differ: %u tokens against %u", n,
				   q42_tokenizer_n_vocab(b));
	if (q42_tokenizer_bos(a) != q42_tokenizer_bos(b) ||
	    q42_tokenizer_adds_bos(a) != q42_tokenizer_adds_bos(b))
		return q42_err_set(err, Q42_EARG, "vocabularies differ in their BOS policy");
	for (uint32_t i = 0; i < n; i++) {
		q42_str x = q42_tokenizer_text(a, (int32_t)i), y = q42_tokenizer_text(b, (int32_t)i);
		if (x.len != y.len || (x.len > 0 && memcmp(x.p, y.p, (size_t)x.len) != 0))
			return q42_err_set(err, Q42_EARG, "vocabularies differ at token %u", i);
	}
	return Q42_OK;
}

/* Running sums over scored positions; kld[] keeps each value for the
 * median and percentiles. */
struct acc {
	uint64_t count;
	double nll, nll2, nll_b, nll_b2, kld, kld2, dp, dp2, dp_top;
	uint64_t same_top;
	double *kldv;
};

static double log_sum_exp(const float *l, uint32_t n, uint32_t *imax)
{
	double m = (double)l[0], s = 0.0;
	uint32_t k = 0;
	for (uint32_t i = 1; i < n; i++)
		if ((double)l[i] > m) {
			m = (double)l[i];
			k = i;
		}
	for (uint32_t i = 0; i < n; i++)
		s += exp((double)l[i] - m);
	*imax = k;
	return m + log(s);
}

static float lq(float l, double lse)
{
	return (float)((double)l - lse);
}

/* One scored position: l are the model's logits, next the token after the
 * position, lpb the base's log-probs (NULL: perplexity only), lp_out
 * (NULL: none) receives the model's log-probs. The comparison uses the
 * model's log-probs rounded to f32 as the base's were, so a model
 * compared with itself gives KL 0 and Δp 0 exactly. */
static void score(struct acc *a, const float *l, uint32_t nv, int32_t next, const float *lpb,
		  float *lp_out)
{
	uint32_t top;
	const double lse = log_sum_exp(l, nv, &top), nll = lse - (double)l[next];

	a->nll += nll;
	a->nll2 += nll * nll;
	if (lp_out != NULL)
		for (uint32_t i = 0; i < nv; i++)
			lp_out[i] = lq(l[i], lse);
	if (lpb != NULL) {
		double kl = 0.0, dp, nb = -(double)lpb[next];
		uint32_t top_b = 0;
		for (uint32_t i = 0; i < nv; i++) {
			const double pb = exp((double)lpb[i]);
			if (lpb[i] > lpb[top_b])
				top_b = i;
			if (pb > 0)
				kl += pb * ((double)lpb[i] - (double)lq(l[i], lse));
		}
		a->nll_b += nb;
		a->nll_b2 += nb * nb;
		a->kldv[a->count] = kl;
		a->kld += kl;
		a->kld2 += kl * kl;
		dp = exp((double)lq(l[next], lse)) - exp(-nb);
		a->dp += dp;
		a->dp2 += dp * dp;
		a->dp_top += exp((double)lq(l[top_b], lse)) - exp((double)lpb[top_b]);
		a->same_top += top == top_b;
	}
	a->count++;
}

/* Reset e and evaluate window w up to position first: BOS (if any) in
 * place of w[0], then w[1..first]. */
static int window_start(q42_engine *e, const int32_t *w, uint32_t first, int32_t bos, q42_err *err)
{
	int rc;
	q42_engine_reset(e);
	rc = q42_engine_eval(e, bos >= 0 ? &bos : w, 1, err);
	if (rc == Q42_OK)
		rc = q42_engine_eval(e, w + 1, first, err);
	return rc;
}

static void mean_err(double sum, double sum2, uint64_t n, double *mean, double *e)
{
	double f = sum / (double)n, v = sum2 / (double)n - f * f;
	*mean = f;
	*e = v > 0 && n > 1 ? sqrt(v / (double)(n - 1)) : 0.0;
}

static int cmp_double(const void *x, const void *y)
{
	const double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* llama-perplexity's percentile: linear between the ranks around
 * fraction * (n - 1). */
static double percentile(const double *v, uint64_t n, double fraction)
{
	double p = fraction * (double)(n - 1);
	uint64_t i = (uint64_t)p;
	p -= (double)i;
	return (1 - p) * v[i] + p * v[i + 1 < n ? i + 1 : n - 1];
}

static int write_header(FILE *f, uint32_t nv, uint32_t n_ctx, uint32_t n_chunks, int32_t bos,
			const int32_t *ids, q42_err *err)
{
	uint8_t h[Q42_KLBASE_HEADER_BYTES];
	memcpy(h, Q42_KLBASE_MAGIC, 8);
	q42_st32(h + 8, Q42_KLBASE_VERSION);
	q42_st32(h + 12, nv);
	q42_st32(h + 16, n_ctx);
	q42_st32(h + 20, n_chunks);
	q42_st32(h + 24, (uint32_t)bos);
	q42_st32(h + 28, n_scored_of(n_ctx));
	if (fwrite(h, 1, sizeof h, f) != sizeof h)
		return q42_err_set(err, Q42_EIO, "kl-base: write failed");
	for (uint64_t i = 0; i < (uint64_t)n_ctx * n_chunks; i++) {
		uint8_t b[4];
		q42_st32(b, (uint32_t)ids[i]);
		if (fwrite(b, 1, 4, f) != 4)
			return q42_err_set(err, Q42_EIO, "kl-base: write failed");
	}
	return Q42_OK;
}

static int write_row(FILE *f, const float *lp, uint32_t nv, uint8_t *tmp, q42_err *err)
{
	for (uint32_t i = 0; i < nv; i++) {
		uint32_t u;
		memcpy(&u, &lp[i], sizeof u);
		q42_st32(tmp + (size_t)i * 4, u);
	}
	if (fwrite(tmp, 4, nv, f) != nv)
		return q42_err_set(err, Q42_EIO, "kl-base: write failed");
	return Q42_OK;
}

static int check_job(q42_engine *e, const q42_tokenizer *tok, const q42_quality_job *job,
		     const int32_t **ids, size_t *n_ids, uint32_t *n_ctx, int32_t *bos, q42_err *err)
{
	const uint32_t nv = q42_engine_n_vocab(e);
	const q42_klbase *b = job->base;

	*bos = q42_tokenizer_adds_bos(tok) ? q42_tokenizer_bos(tok) : -1;
	*ids = job->ids;
	*n_ids = job->n_ids;
	*n_ctx = job->n_ctx ? job->n_ctx : b ? b->n_ctx : q42_engine_n_ctx(e);
	if (b != NULL && job->base_engine != NULL)
		return q42_err_set(err, Q42_EARG, "quality: a base file and a base engine are exclusive");
	if (job->base_engine != NULL && q42_engine_n_vocab(job->base_engine) != nv)
		return q42_err_set(err, Q42_EARG, "quality: the base model has %u tokens, the model %u",
				   q42_engine_n_vocab(job->base_engine), nv);
	if (b != NULL) {
		if (b->n_vocab != nv || b->bos != *bos)
			return q42_err_set(err, Q42_EARG,
					   "kl-base: vocabulary mismatch: the base has %u tokens and BOS "
					   "%d, the model %u and %d", b->n_vocab, b->bos, nv, *bos);
		if (*n_ctx != b->n_ctx)
			return q42_err_set(err, Q42_EARG, "kl-base: the base was made with windows of %u "
					   "tokens, not %u (see --ctx)", b->n_ctx, *n_ctx);
		if (*ids == NULL) {
			*n_ids = (size_t)b->n_ctx * b->n_chunks;
		} else {
			if (*n_ids / b->n_ctx != b->n_chunks)
				return q42_err_set(err, Q42_EARG, "kl-base: the text has %zu windows, the "
						   "base %u", *n_ids / b->n_ctx, b->n_chunks);
			for (uint64_t i = 0; i < (uint64_t)b->n_ctx * b->n_chunks; i++)
				if ((*ids)[i] != q42_klbase_token(b, i))
					return q42_err_set(err, Q42_EARG, "kl-base: token %llu of the text "
							   "differs from the base's (%d, not %d)",
							   (unsigned long long)i, (*ids)[i],
							   q42_klbase_token(b, i));
		}
	}
	if (*n_ctx < Q42_QUALITY_CTX_MIN || *n_ctx > q42_engine_n_ctx(e) ||
	    (job->base_engine && *n_ctx > q42_engine_n_ctx(job->base_engine)))
		return q42_err_set(err, Q42_EARG, "quality: a window of %u tokens needs %u..%u (the "
				   "engine's context)", *n_ctx, Q42_QUALITY_CTX_MIN, q42_engine_n_ctx(e));
	if (*n_ids / 2 < *n_ctx)
		return q42_err_set(err, Q42_EARG, "quality: the text has %zu tokens, at least %llu "
				   "(2 windows of %u) are needed", *n_ids, 2ull * *n_ctx, *n_ctx);
	return Q42_OK;
}

int q42_quality_run(q42_engine *e, const q42_tokenizer *tok, const q42_quality_job *job,
		    q42_quality_report *r, q42_err *err)
{
	const uint32_t nv = q42_engine_n_vocab(e);
	const q42_klbase *b = job->base;
	const int32_t *ids;
	int32_t *own = NULL, bos;
	size_t n_ids;
	uint32_t n_ctx, first, n_scored, n_chunks;
	float *lp = NULL, *lpb = NULL;
	uint8_t *tmp = NULL;
	struct acc a = {0};
	const bool kl = b != NULL || job->base_engine != NULL;
	int rc;

	memset(r, 0, sizeof *r);
	rc = check_job(e, tok, job, &ids, &n_ids, &n_ctx, &bos, err);
	if (rc != Q42_OK)
		return rc;
	first = n_ctx / 2;
	n_scored = n_scored_of(n_ctx);
	n_chunks = (uint32_t)(n_ids / n_ctx);
	if (ids == NULL) {
		own = malloc(n_ids * sizeof *own);
		if (own == NULL)
			return q42_err_set(err, Q42_ENOMEM, "quality: out of memory");
		for (size_t i = 0; i < n_ids; i++)
			own[i] = q42_klbase_token(b, i);
		ids = own;
	}
	lp = malloc((size_t)nv * sizeof *lp);
	lpb = malloc((size_t)nv * sizeof *lpb);
	tmp = malloc((size_t)nv * 4);
	a.kldv = kl ? malloc((size_t)n_chunks * n_scored * sizeof *a.kldv) : NULL;
	if (lp == NULL || lpb == NULL || tmp == NULL || (kl && a.kldv == NULL)) {
		rc = q42_err_set(err, Q42_ENOMEM, "quality: out of memory");
		goto done;
	}
	if (job->base_out != NULL) {
		rc = write_header(job->base_out, nv, n_ctx, n_chunks, bos, ids, err);
		if (rc != Q42_OK)
			goto done;
	}
	for (uint32_t c = 0; c < n_chunks; c++) {
		const int32_t *w = ids + (size_t)c * n_ctx;
		rc = window_start(e, w, first, bos, err);
		if (rc == Q42_OK && job->base_engine != NULL)
			rc = window_start(job->base_engine, w, first, bos, err);
		for (uint32_t j = first; rc == Q42_OK && j + 1 < n_ctx; j++) {
			const float *pb = NULL;
			if (b != NULL) {
				const uint8_t *row = b->lp + (((uint64_t)c * n_scored + (j - first)) * nv) * 4;
				for (uint32_t i = 0; i < nv; i++)
					lpb[i] = q42_ldf32(row + (size_t)i * 4);
				pb = lpb;
			} else if (job->base_engine != NULL) {
				const float *l = q42_engine_logits(job->base_engine);
				uint32_t t;
				const double lse = log_sum_exp(l, nv, &t);
				for (uint32_t i = 0; i < nv; i++)
					lpb[i] = lq(l[i], lse);
				pb = lpb;
			}
			score(&a, q42_engine_logits(e), nv, w[j + 1], pb, job->base_out ? lp : NULL);
			if (job->base_out != NULL) {
				rc = write_row(job->base_out, lp, nv, tmp, err);
				if (rc != Q42_OK)
					break;
			}
			if (j + 2 < n_ctx) {
				rc = q42_engine_eval(e, w + j + 1, 1, err);
				if (rc == Q42_OK && job->base_engine != NULL)
					rc = q42_engine_eval(job->base_engine, w + j + 1, 1, err);
			}
		}
		if (rc != Q42_OK)
			goto done;
		if (job->on_chunk != NULL)
			job->on_chunk(job->ud, c + 1, n_chunks, exp(a.nll / (double)a.count));
	}
	r->n_ctx = n_ctx;
	r->n_chunks = n_chunks;
	r->n_tokens = n_ids;
	r->count = a.count;
	mean_err(a.nll, a.nll2, a.count, &r->ppl, &r->ppl_err);
	r->ppl = exp(r->ppl);
	r->ppl_err *= r->ppl;
	if (kl) {
		r->has_kl = true;
		mean_err(a.nll_b, a.nll_b2, a.count, &r->ppl_base, &r->ppl_base_err);
		r->ppl_base = exp(r->ppl_base);
		r->ppl_base_err *= r->ppl_base;
		mean_err(a.kld, a.kld2, a.count, &r->kld_mean, &r->kld_mean_err);
		qsort(a.kldv, a.count, sizeof *a.kldv, cmp_double);
		r->kld_median = a.count % 2 ? a.kldv[a.count / 2]
					    : 0.5 * (a.kldv[a.count / 2] + a.kldv[a.count / 2 - 1]);
		r->kld_p99 = percentile(a.kldv, a.count, 0.99);
		r->kld_max = a.kldv[a.count - 1];
		mean_err(a.dp, a.dp2, a.count, &r->dp_mean, &r->dp_mean_err);
		r->dp_rms = sqrt(a.dp2 / (double)a.count);
		r->dp_top_mean = a.dp_top / (double)a.count;
		r->same_top = (double)a.same_top / (double)a.count;
		r->same_top_err = sqrt(r->same_top * (1 - r->same_top) / (double)(a.count - 1));
	}
	rc = Q42_OK;
done:
	free(own);
	free(lp);
	free(lpb);
	free(tmp);
	free(a.kldv);
	return rc;
}

bool q42_quality_report_format(const q42_quality_report *r, q42_buf *out)
{
	q42_buf_printf(out, "n_ctx\t%u\nn_chunks\t%u\nn_tokens\t%llu\ncount\t%llu\n", r->n_ctx,
		       r->n_chunks, (unsigned long long)r->n_tokens, (unsigned long long)r->count);
	q42_buf_printf(out, "ppl\t%.6f\t%.6f\n", r->ppl, r->ppl_err);
	if (r->has_kl) {
		q42_buf_printf(out, "ppl_base\t%.6f\t%.6f\n", r->ppl_base, r->ppl_base_err);
		q42_buf_printf(out, "kld_mean\t%.6g\t%.6g\n", r->kld_mean, r->kld_mean_err);
		q42_buf_printf(out, "kld_median\t%.6g\nkld_p99\t%.6g\nkld_max\t%.6g\n", r->kld_median,
			       r->kld_p99, r->kld_max);
		q42_buf_printf(out, "dp_mean\t%.6g\t%.6g\ndp_rms\t%.6g\ndp_top_mean\t%.6g\n",
			       r->dp_mean, r->dp_mean_err, r->dp_rms, r->dp_top_mean);
		q42_buf_printf(out, "same_top\t%.6f\t%.6f\n", r->same_top, r->same_top_err);
	}
	return !out->failed;
}
