/* q42_embed.c -- normalisation, task prefixes, scores and ranking of
 * embedding vectors (q42_embed.h). The normalisation follows llama.cpp's
 * common_embd_normalize (common/common.cpp) so that its vectors compare
 * bit for bit; the scores are q42's own, summed in double in a fixed
 * order so that they do not depend on threads, SIMD width or machine.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "run/q42_embed.h"

void q42_embed_normalize(const float *in, float *out, uint32_t n, int32_t norm)
{
	double sum = 0.0;
	if (norm < 0) {
		sum = 1.0;
	} else if (norm == Q42_EMBD_NORM_MAXABS) {
		for (uint32_t i = 0; i < n; i++)
			if (sum < fabsf(in[i]))
				sum = fabsf(in[i]);
		sum /= 32760.0;
	} else if (norm == Q42_EMBD_NORM_L2) {
		for (uint32_t i = 0; i < n; i++)
			sum += (double)(in[i] * in[i]);
		sum = sqrt(sum);
	} else {
		for (uint32_t i = 0; i < n; i++)
			sum += pow(fabsf(in[i]), norm);
		sum = pow(sum, 1.0 / norm);
	}
	const float k = sum > 0.0 ? (float)(1.0 / sum) : 0.0f;
	for (uint32_t i = 0; i < n; i++)
		out[i] = in[i] * k;
}

static const struct {
	const char *name, *prefix;
} tasks[] = {
	{"retrieval_query", "task: search result | query: "},
	{"retrieval_document", "title: none | text: "},
	{"question_answering", "task: question answering | query: "},
	{"fact_verification", "task: fact checking | query: "},
	{"classification", "task: classification | query: "},
	{"clustering", "task: clustering | query: "},
	{"semantic_similarity", "task: sentence similarity | query: "},
	{"code_retrieval", "task: code retrieval | query: "},
	{"summarization", "task: summarization | query: "},
	{"raw", ""},
};

const char *q42_embed_task_prefix(const char *name)
{
	for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
		if (strcmp(tasks[i].name, name) == 0)
			return tasks[i].prefix;
	return NULL;
}

static double dot_d(const float *a, const float *b, uint32_t n)
{
	double s = 0.0;
	for (uint32_t i = 0; i < n; i++)
		s += (double)a[i] * (double)b[i];
	return s;
}

float q42_embed_dot(const float *a, const float *b, uint32_t n)
{
	return (float)dot_d(a, b, n);
}

float q42_embed_cosine(const float *a, const float *b, uint32_t n)
{
	const double na = dot_d(a, a, n), nb = dot_d(b, b, n);
	if (na == 0.0 || nb == 0.0)
		return 0.0f;
	return (float)(dot_d(a, b, n) / (sqrt(na) * sqrt(nb)));
}

float q42_embed_maxsim(const float *q, uint32_t nq, const float *d, uint32_t nd, uint32_t dim)
{
	double s = 0.0;
	if (nd == 0)
		return 0.0f;
	for (uint32_t i = 0; i < nq; i++) {
		float best = q42_embed_dot(q + (uint64_t)i * dim, d, dim);
		for (uint32_t j = 1; j < nd; j++) {
			const float v = q42_embed_dot(q + (uint64_t)i * dim, d + (uint64_t)j * dim, dim);
			if (v > best)
				best = v;
		}
		s += (double)best;
	}
	return (float)s;
}

/* Insertion sort: stable, and corpora ranked here are small. */
void q42_embed_rank(const float *score, uint32_t n, uint32_t *order)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = i;
		while (j > 0) {
			const float a = score[order[j - 1]], b = score[i];
			const bool before = !isnan(b) && (isnan(a) || b > a);
			if (!before)
				break;
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
}
