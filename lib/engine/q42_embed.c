/* q42_embed.c -- embeddings: one sequence through the forward pass with
 * every row kept, then pooling and the sentence-transformers projections.
 *
 * Owns what llama.cpp's build_pooling and build_dense_out compute after
 * the last norm (llama-graph.cpp): mean pooling as its product of the
 * transposed rows with a column of 1/n, CLS and LAST as row copies, then
 * dense_2 (+ bias) and dense_3 on the pooled vector, or on every row when
 * nothing is pooled (LFM2-ColBERT). One sequence per pass, from position
 * 0, so a vector never depends on what else was embedded with it. A
 * backend (engine/q42_backend.h, its embed) computes all of it on its
 * device after the same checks. Normalisation is the caller's
 * (run/q42_embed.h), on the CPU for every backend.
 */
#include <string.h>
#include "engine/q42_engine_impl.h"
#include "kernels/q42_llamacpp.h"

uint32_t q42_engine_pooling(const q42_engine *e)
{
	return e->pooling;
}

uint32_t q42_engine_embd_dim(const q42_engine *e)
{
	return e->g[Q42_W_DENSE_3].data != NULL ? e->n_embd
	       : e->g[Q42_W_DENSE_2].data != NULL ? e->n_dense_2
						  : e->n_embd;
}

bool q42_engine_is_encoder(const q42_engine *e)
{
	return !e->causal;
}

/* dense_2 (+ bias), then dense_3, on n rows of n_embd at in; the result
 * (n rows of q42_engine_embd_dim) in e->embd. */
static void project(q42_engine *e, const float *in, uint32_t n)
{
	const q42_weight *d2 = &e->g[Q42_W_DENSE_2], *d3 = &e->g[Q42_W_DENSE_3];
	const uint32_t dim = q42_engine_embd_dim(e);
	if (d2->data == NULL) {
		memcpy(e->embd, in, (uint64_t)n * dim * sizeof(float));
		return;
	}
	if (d3->data == NULL) {
		q42_forward_linear(e, d2, &e->g[Q42_W_DENSE_2_B], in, e->embd, n);
		return;
	}
	q42_forward_linear(e, d2, &e->g[Q42_W_DENSE_2_B], in, e->embd_tmp, n);
	q42_forward_linear(e, d3, NULL, e->embd_tmp, e->embd, n);
}

int q42_engine_embed(q42_engine *e, const int32_t *ids, uint32_t n, int32_t pooling,
		     const float **out, uint32_t *n_rows, q42_err *err)
{
	const uint32_t E = e->n_embd;
	const uint32_t p = pooling < 0 ? e->pooling : (uint32_t)pooling;
	*out = NULL;
	*n_rows = 0;
	if (e->be_state != NULL && e->be->embed == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "embeddings are computed on the CPU only (backend %s)",
				   q42_backend_name(q42_engine_backend(e)));
	if (p > Q42_POOLING_LAST)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "pooling type %u (rank) is not supported: use none, mean, cls or last", p);
	if (n == 0)
		return q42_err_set(err, Q42_EARG, "embed: no tokens");
	if (n > e->n_batch)
		return q42_err_set(err, Q42_EARG,
				   "embed: %u tokens exceed the batch of %u (one sequence is one pass: raise --batch)",
				   n, e->n_batch);
	if (e->g[Q42_W_POS_EMBD].data != NULL && n > e->n_pos)
		return q42_err_set(err, Q42_EARG,
				   "embed: %u tokens exceed the model's %u learned positions", n, e->n_pos);
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] < 0 || (uint32_t)ids[i] >= e->n_vocab)
			return q42_err_set(err, Q42_EARG,
					   "embed: token id %d at index %u outside the vocabulary (0..%u)",
					   ids[i], i, e->n_vocab - 1);
	e->n_past = 0;
	if (e->be_state != NULL) {
		int rc = e->be->embed(e->be_state, ids, n, p, e->embd, n_rows, err);
		*out = rc == Q42_OK ? e->embd : NULL;
		return rc;
	}
	q42_forward_hidden(e, ids, n);
	e->n_past = 0;
	if (p == Q42_POOLING_NONE) {
		project(e, e->xb, n);
		*n_rows = n;
	} else if (p == Q42_POOLING_MEAN) {
		/* ggml_mul_mat of the transposed rows (one column per
		 * dimension, made contiguous) with n copies of 1/n: one f32
		 * vec_dot per dimension */
		float *col = e->embd_tmp, *w = e->embd_tmp + n, *mean = e->ao;
		void (*dot)(int64_t, float *, const void *, const void *) =
			q42_arith_is_llama(e->arith) ? e->cops->dot_f32_vd
						     : q42_kernels_get(Q42_DTYPE_F32, e->isa)->vec_dot;
		for (uint32_t t = 0; t < n; t++)
			w[t] = 1.0f / (float)n;
		for (uint32_t d = 0; d < E; d++) {
			for (uint32_t t = 0; t < n; t++)
				col[t] = e->xb[(uint64_t)t * E + d];
			dot((int64_t)n, &mean[d], col, w);
		}
		project(e, mean, 1);
		*n_rows = 1;
	} else {
		project(e, e->xb + (uint64_t)(p == Q42_POOLING_CLS ? 0 : n - 1) * E, 1);
		*n_rows = 1;
	}
	*out = e->embd;
	return Q42_OK;
}
