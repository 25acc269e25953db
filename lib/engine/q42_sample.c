/* q42_sample.c -- greedy and seeded sampling over a candidate array
 * allocated once per sampler.
 *
 * Candidates are ordered by (logit descending, id ascending) so that every
 * cut (top-k, top-p, min-p) and the final draw are deterministic for a
 * seed. The generator is splitmix64; draws use its top 53 bits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine/q42_sample.h"

typedef struct cand {
	float logit;
	int32_t id;
} cand;

struct q42_sampler {
	q42_sampling s;
	uint32_t n_vocab;
	uint64_t rng;
	float *work;       /* penalized logits */
	cand *c;           /* candidates */
	uint8_t *seen;     /* penalty: token already penalized */
	int32_t *ring;     /* last repeat_last_n tokens */
	uint32_t ring_n, ring_pos;
};

void q42_sampling_default(q42_sampling *s)
{
	s->temp = 0.0f;
	s->top_k = 40;
	s->top_p = 0.95f;
	s->min_p = 0.05f;
	s->repeat_penalty = 1.0f;
	s->repeat_last_n = 64;
	s->seed = 0;
}

int q42_sampling_check(const q42_sampling *s, q42_err *err)
{
	if (!(s->temp >= 0.0f) || !isfinite(s->temp))
		return q42_err_set(err, Q42_EARG, "temperature %g: expected a finite value >= 0",
				   (double)s->temp);
	if (s->top_k < 0)
		return q42_err_set(err, Q42_EARG, "top-k %d: expected >= 0", s->top_k);
	if (!(s->top_p > 0.0f && s->top_p <= 1.0f))
		return q42_err_set(err, Q42_EARG, "top-p %g: expected a value in (0, 1]",
				   (double)s->top_p);
	if (!(s->min_p >= 0.0f && s->min_p <= 1.0f))
		return q42_err_set(err, Q42_EARG, "min-p %g: expected a value in [0, 1]",
				   (double)s->min_p);
	if (!(s->repeat_penalty > 0.0f) || !isfinite(s->repeat_penalty))
		return q42_err_set(err, Q42_EARG, "repeat penalty %g: expected a finite value > 0",
				   (double)s->repeat_penalty);
	if (s->repeat_last_n > Q42_SAMPLE_LAST_N_MAX)
		return q42_err_set(err, Q42_EARG, "repeat-last-n %u: expected at most %u",
				   s->repeat_last_n, Q42_SAMPLE_LAST_N_MAX);
	return Q42_OK;
}

int q42_sampler_open(q42_sampler **out, const q42_sampling *s, uint32_t n_vocab, q42_err *err)
{
	q42_sampler *p;
	int rc;

	*out = NULL;
	rc = q42_sampling_check(s, err);
	if (rc != Q42_OK)
		return rc;
	p = calloc(1, sizeof *p);
	if (p == NULL)
		return q42_err_set(err, Q42_ENOMEM, "sampler: out of memory");
	p->s = *s;
	p->n_vocab = n_vocab;
	p->work = calloc(n_vocab, sizeof *p->work);
	p->c = calloc(n_vocab, sizeof *p->c);
	p->seen = calloc(n_vocab, 1);
	p->ring = calloc(s->repeat_last_n ? s->repeat_last_n : 1, sizeof *p->ring);
	if (p->work == NULL || p->c == NULL || p->seen == NULL || p->ring == NULL) {
		q42_sampler_close(p);
		return q42_err_set(err, Q42_ENOMEM, "sampler: out of memory");
	}
	q42_sampler_reset(p);
	*out = p;
	return Q42_OK;
}

void q42_sampler_close(q42_sampler *s)
{
	if (s == NULL)
		return;
	free(s->work);
	free(s->c);
	free(s->seen);
	free(s->ring);
	free(s);
}

void q42_sampler_reset(q42_sampler *s)
{
	s->rng = s->s.seed;
	s->ring_n = 0;
	s->ring_pos = 0;
}

void q42_sampler_accept(q42_sampler *s, int32_t id)
{
	if (s->s.repeat_last_n == 0)
		return;
	s->ring[s->ring_pos] = id;
	s->ring_pos = (s->ring_pos + 1) % s->s.repeat_last_n;
	if (s->ring_n < s->s.repeat_last_n)
		s->ring_n++;
}

bool q42_sampler_is_argmax(const q42_sampler *s)
{
	return s->s.temp <= 0.0f && (s->s.repeat_penalty == 1.0f || s->s.repeat_last_n == 0);
}

int32_t q42_argmax(const float *v, uint32_t n)
{
	uint32_t best = 0;
	for (uint32_t i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return (int32_t)best;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->logit != y->logit)
		return x->logit > y->logit ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* llama.cpp's repetition penalty: each distinct recent token once,
 * positive logits divided, others multiplied. */
static const float *penalize(q42_sampler *s, const float *logits)
{
	if (s->s.repeat_penalty == 1.0f || s->ring_n == 0)
		return logits;
	memcpy(s->work, logits, s->n_vocab * sizeof *logits);
	for (uint32_t i = 0; i < s->ring_n; i++) {
		int32_t id = s->ring[i];
		if (id < 0 || (uint32_t)id >= s->n_vocab || s->seen[id])
			continue;
		s->seen[id] = 1;
		if (s->work[id] <= 0.0f)
			s->work[id] *= s->s.repeat_penalty;
		else
			s->work[id] /= s->s.repeat_penalty;
	}
	for (uint32_t i = 0; i < s->ring_n; i++) {
		int32_t id = s->ring[i];
		if (id >= 0 && (uint32_t)id < s->n_vocab)
			s->seen[id] = 0;
	}
	return s->work;
}

int32_t q42_sampler_sample(q42_sampler *s, const float *logits)
{
	const float *l = penalize(s, logits);
	uint32_t n = s->n_vocab;
	double sum = 0.0, u, acc;
	cand *c = s->c;

	if (s->s.temp <= 0.0f)
		return q42_argmax(l, n);
	for (uint32_t i = 0; i < n; i++) {
		c[i].logit = l[i];
		c[i].id = (int32_t)i;
	}
	qsort(c, n, sizeof *c, cand_cmp);
	if (s->s.top_k > 0 && (uint32_t)s->s.top_k < n)
		n = (uint32_t)s->s.top_k;
	if (s->s.top_p < 1.0f) {
		double cum = 0.0, tot = 0.0;
		uint32_t keep = n;
		for (uint32_t i = 0; i < n; i++)
			tot += exp((double)c[i].logit - (double)c[0].logit);
		for (uint32_t i = 0; i < n; i++) {
			cum += exp((double)c[i].logit - (double)c[0].logit) / tot;
			if (cum >= (double)s->s.top_p) {
				keep = i + 1;
				break;
			}
		}
		n = keep;
	}
	if (s->s.min_p > 0.0f) {
		const double cut = (double)c[0].logit + log((double)s->s.min_p);
		uint32_t keep = 1;
		while (keep < n && (double)c[keep].logit >= cut)
			keep++;
		n = keep;
	}
	for (uint32_t i = 0; i < n; i++)
		sum += exp(((double)c[i].logit - (double)c[0].logit) / (double)s->s.temp);
	u = (double)(splitmix64(&s->rng) >> 11) * 0x1.0p-53 * sum;
	acc = 0.0;
	for (uint32_t i = 0; i < n; i++) {
		acc += exp(((double)c[i].logit - (double)c[0].logit) / (double)s->s.temp);
		if (u < acc)
			return c[i].id;
	}
	return c[n - 1].id;
}
