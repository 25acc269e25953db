/* q42_engine_lora.c -- LoRA adapters bound to an engine's weights.
 *
 * Owns the checks llama_adapter_lora_init makes against a model (the
 * architecture, every adapted tensor present in the model, the shapes,
 * the token embedding's flipped pair) and the binding of each pair as two
 * small matrices with the products llama.cpp gives them. The forward pass
 * (q42_forward.c) applies them: A.x when a weight's input is prepared,
 * B.(A.x) scaled and added tile by tile after W.x. Relies on
 * bind_tensors having bound the model's weights; never prints.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/q42_engine_impl.h"
#include "common/q42_ckd.h"
#include "common/q42_types.h"
#include "kernels/q42_llamacpp.h"

/* One factor of a pair as a matrix of the engine: its kernels and
 * product (lookup: its rows are dequantized, for the embedding's A). */
static int bind_factor(q42_engine *e, const q42_lora *l, const q42_source_tensor *t, bool lookup,
		       q42_weight *w, q42_err *err)
{
	const q42_dtype_info *di = q42_dtype_get(t->dtype);
	const int nl = (int)t->name.len;
	uint64_t rb = 0, total = 0;
	if (di == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: tensor %.*s: unknown type id %u",
				   q42_lora_path(l), nl, t->name.p, t->dtype);
	if (!q42_dtype_nbytes(t->dtype, t->dims[0], t->dims[0], &rb) ||
	    q42_mul_overflow(rb, t->dims[1], &total) || total != t->nbytes || t->data == NULL)
		return q42_err_set(err, Q42_EFORMAT, "%s: tensor %.*s: %llu bytes of %s do not hold [%llu, %llu]",
				   q42_lora_path(l), nl, t->name.p, (unsigned long long)t->nbytes,
				   di->name, (unsigned long long)t->dims[0],
				   (unsigned long long)t->dims[1]);
	*w = (q42_weight){.data = t->data, .dtype = t->dtype, .n_in = (int64_t)t->dims[0],
			  .n_out = (int64_t)t->dims[1], .row_bytes = rb};
	w->k = q42_kernels_get(t->dtype, e->isa);
	if (w->k == NULL || w->k->vec_dot == NULL || (lookup && w->k->dequant == NULL) ||
	    q42_kernels_get(w->k->vec_dot_type, e->isa) == NULL ||
	    q42_kernels_get(w->k->vec_dot_type, e->isa)->quantize == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: tensor %.*s: no %s kernels for type %s",
				   q42_lora_path(l), nl, t->name.p, q42_isa_name(e->isa), di->name);
	q42_weight_choose_product(w, e->arith, e->isa, Q42_LLAMACPP_CPU);
	return Q42_OK;
}

/* The model weight a pair adapts, or an error naming the tensor. */
static int find_weight(q42_engine *e, const q42_lora *l, const q42_lora_pair *p, q42_weight **out,
		       q42_err *err)
{
	enum q42_wslot s;
	uint32_t layer;
	const int nl = (int)p->base.len;
	*out = NULL;
	if (!q42_wslot_parse(p->base.p, p->base.len, &s, &layer) ||
	    (q42_wslot_is_layer(s) && layer >= e->n_layer) || (s == Q42_W_OUTPUT && e->tied))
		return q42_err_set(err, Q42_EFORMAT, "%s: tensor %.*s: not in the model (an adapter for another model?)",
				   q42_lora_path(l), nl, p->base.p);
	q42_weight *w = q42_wslot_is_layer(s) ? &e->layers[layer].w[s] : &e->g[s];
	if (w->data == NULL)
		return q42_err_set(err, Q42_EFORMAT, "%s: tensor %.*s: not in the model (an adapter for another model?)",
				   q42_lora_path(l), nl, p->base.p);
	if (w->k == NULL || s == Q42_W_CONV)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "%s: tensor %.*s: not a matrix product of the forward pass, an adapter cannot apply to it",
				   q42_lora_path(l), nl, p->base.p);
	if (w->expert_bytes != 0)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "%s: tensor %.*s: a stack of experts; adapters on routed experts are not supported",
				   q42_lora_path(l), nl, p->base.p);
	if (s == Q42_W_TOK_EMBD && e->tied)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "%s: tensor %.*s: the model's output shares the token embedding; llama.cpp would apply this pair to the output product too, where its shapes do not fit",
				   q42_lora_path(l), nl, p->base.p);
	*out = w;
	return Q42_OK;
}

/* lw NULL: the pair is only checked (an adapter of scale 0, which
 * llama.cpp loads and checks, then leaves out). */
static int bind_pair(q42_engine *e, const q42_lora *l, float scale, const q42_lora_pair *p,
		     q42_lora_w *lw, q42_err *err)
{
	q42_weight *w;
	bool ok = true;
	int rc = find_weight(e, l, p, &w, err);
	const bool embd = w != NULL && w == &e->g[Q42_W_TOK_EMBD];
	if (rc == Q42_OK)
		rc = q42_lora_pair_check(l, p, (uint64_t)w->n_in, (uint64_t)w->n_out, err);
	if (rc != Q42_OK || lw == NULL)
		return rc;
	rc = bind_factor(e, l, &p->a, embd, &lw->a, err);
	if (rc == Q42_OK)
		rc = bind_factor(e, l, &p->b, false, &lw->b, err);
	if (rc != Q42_OK)
		return rc;
	lw->scale = q42_lora_pair_scale(l, p, scale);
	if (!embd)
		lw->a.act = q42_engine_act_slot(e, &lw->a, &ok);
	if (!ok)
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: tensor %.*s: model and adapters mix more than %d activation types",
				   q42_lora_path(l), (int)p->base.len, p->base.p, Q42_ACT_SLOTS);
	/* rank values per token, and them in b's vec_dot_type */
	const uint64_t rank = (uint64_t)lw->b.n_in;
	lw->ax = calloc((size_t)(e->n_batch * rank), sizeof(float));
	if (lw->b.aq != NULL) {
		const q42_dtype_info *di = q42_dtype_get(lw->b.vdt);
		lw->axq_stride = (rank + di->block_elems - 1) / di->block_elems * di->block_bytes;
		lw->axq = calloc(e->n_batch, (size_t)lw->axq_stride);
	}
	if (lw->ax == NULL || (lw->b.aq != NULL && lw->axq == NULL))
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", q42_lora_path(l));
	/* applied after the adapters before it on the same weight */
	q42_lora_w **tail = &w->lora;
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = lw;
	return Q42_OK;
}

int q42_engine_lora_bind(q42_engine *e, const q42_engine_opts *o, q42_err *err)
{
	const char *arch = q42_mount_hparams(e->m)->arch;
	uint64_t n = 0;
	if (o->n_lora > Q42_LORA_MAX)
		return q42_err_set(err, Q42_EARG, "%u adapters, at most %u", o->n_lora, Q42_LORA_MAX);
	for (uint32_t i = 0; i < o->n_lora; i++) {
		const q42_lora *l = o->lora[i].adapter;
		if (strcmp(q42_lora_arch(l), arch) != 0)
			return q42_err_set(err, Q42_EFORMAT,
					   "%s: adapter for architecture '%s', the model is '%s'",
					   q42_lora_path(l), q42_lora_arch(l), arch);
		if (o->lora[i].scale != 0.0f)
			n += q42_lora_n_pairs(l);
		e->lora[e->n_lora++] = o->lora[i];
	}
	e->lora_w = calloc((size_t)(n ? n : 1), sizeof *e->lora_w);
	if (e->lora_w == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory for %llu adapter tensors",
				   (unsigned long long)n);
	for (uint32_t i = 0; i < o->n_lora; i++) {
		const q42_lora *l = o->lora[i].adapter;
		const bool on = o->lora[i].scale != 0.0f;
		for (uint64_t j = 0; j < q42_lora_n_pairs(l); j++) {
			int rc = bind_pair(e, l, o->lora[i].scale, q42_lora_pair_at(l, j),
					   on ? &e->lora_w[e->n_lora_w++] : NULL, err);
			if (rc != Q42_OK)
				return rc;
		}
	}
	return Q42_OK;
}

static q42_bound_weight bound_of(const q42_weight *w)
{
	return (q42_bound_weight){.data = w->data, .dtype = w->dtype, .matrix = true,
				  .n_in = w->n_in, .n_out = w->n_out, .row_bytes = w->row_bytes,
				  .dequant = w->k->dequant};
}

int q42_engine_lora_bound(q42_engine *e, const q42_weight *w, q42_bound_weight *bw, q42_err *err)
{
	const q42_bound_lora **tail = &bw->lora;
	if (e->n_lora_w > 0 && e->bound_lora == NULL &&
	    (e->bound_lora = calloc(e->n_lora_w, sizeof *e->bound_lora)) == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	for (const q42_lora_w *lw = w->lora; lw != NULL; lw = lw->next) {
		q42_bound_lora *bl = &e->bound_lora[lw - e->lora_w];
		*bl = (q42_bound_lora){bound_of(&lw->a), bound_of(&lw->b), lw->scale, NULL};
		*tail = bl;
		tail = &bl->next;
	}
	return Q42_OK;
}

/* A's rows in groups of Q42_LORA_A_ROWS, each group step by step with
 * the group's rows side by side (missing rows zero). */
static void pack_a(const q42_weight *a, float *dst)
{
	const uint64_t n = (uint64_t)a->n_in, g_rows = Q42_LORA_A_ROWS;
	for (uint64_t r = 0; r < (uint64_t)(a->n_out + Q42_LORA_A_ROWS - 1) / g_rows * g_rows; r++) {
		const float *src = (const float *)(const void *)(a->data + r * a->row_bytes);
		for (uint64_t s = 0; s < n / 64; s++) {
			float *d = dst + (r / g_rows * n / 64 + s) * g_rows * 64 + r % g_rows * 64;
			if (r < (uint64_t)a->n_out)
				memcpy(d, src + 64 * s, 64 * sizeof(float));
			else
				memset(d, 0, 64 * sizeof(float));
		}
	}
}

/* Bytes of lw's A and packed B in the arena (each on a cache line), and
 * whether its A is packed (*at) and its B (*bt): an F32 B of fewer than
 * 64 values a row whose one-token product is ggml_vec_dot_f32 (all its
 * elements leftovers), which the packed product reproduces. The token embedding's A is looked
 * up by row and stays where it is. */
static uint64_t pack_bytes(const q42_engine *e, const q42_lora_w *lw, uint64_t *a_bytes,
			   bool *at, bool *bt)
{
	bool embd = false;
	for (const q42_lora_w *x = e->g[Q42_W_TOK_EMBD].lora; x != NULL; x = x->next)
		embd |= x == lw;
	/* A whose one-token product is ggml_vec_dot_f32 on whole 64-steps:
	 * the stepped rows' product (dot_f32_vrows) gives its bits */
	*at = !embd && lw->a.dtype == Q42_DTYPE_F32 && lw->a.n_in % 64 == 0 &&
	      lw->a.dot == e->cops->dot_f32_vd;
	*a_bytes = embd ? 0
		   : *at ? (uint64_t)(lw->a.n_out + Q42_LORA_A_ROWS - 1) / Q42_LORA_A_ROWS *
				 Q42_LORA_A_ROWS * (uint64_t)lw->a.n_in * sizeof(float)
			 : (lw->a.row_bytes * (uint64_t)lw->a.n_out + 63) / 64 * 64;
	*bt = lw->b.dtype == Q42_DTYPE_F32 && lw->b.n_in < 64 && lw->b.dot == e->cops->dot_f32_vd &&
	      e->cops->f32_t16_axpy != NULL;
	return *a_bytes +
	       (*bt ? (q42_llamacpp_f32_t16_floats(lw->b.n_in, lw->b.n_out) * sizeof(float) + 63) / 64 * 64 : 0);
}

int q42_engine_lora_pack(q42_engine *e, q42_err *err)
{
	uint64_t total = 0, a_bytes;
	bool at, bt;
	uint8_t *p;
	for (uint32_t i = 0; i < e->n_lora_w; i++)
		total += pack_bytes(e, &e->lora_w[i], &a_bytes, &at, &bt);
	if (total == 0)
		return Q42_OK;
	/* on 2 MiB boundaries, as the repacked matrices beside which the
	 * factors are read once per token (the file's mapping has 4 KiB
	 * pages; docs/perf/lora.md) */
	if ((e->lora_mem = q42_engine_huge_alloc(e, total)) == NULL)
		return q42_err_set(err, Q42_ENOMEM, "cannot allocate %llu bytes for the adapters' factors",
				   (unsigned long long)total);
	p = e->lora_mem;
	for (uint32_t i = 0; i < e->n_lora_w; i++) {
		q42_lora_w *lw = &e->lora_w[i];
		const uint64_t n = pack_bytes(e, lw, &a_bytes, &at, &bt);
		if (at) {
			pack_a(&lw->a, (float *)(void *)p);
			lw->at = (const float *)(const void *)p;
		} else if (a_bytes != 0) {
			memcpy(p, lw->a.data, (size_t)(lw->a.row_bytes * (uint64_t)lw->a.n_out));
			lw->a.data = p;
		}
		if (bt) {
			q42_llamacpp_pack_f32_t16(lw->b.n_in, lw->b.n_out, lw->b.data, lw->b.row_bytes,
						  (float *)(void *)(p + a_bytes));
			lw->bt = (const float *)(const void *)(p + a_bytes);
		}
		p += n;
	}
	return Q42_OK;
}

void q42_engine_lora_free(q42_engine *e)
{
	free(e->lora_mem);
	free(e->bound_lora);
	for (uint32_t i = 0; i < e->n_lora_w; i++) {
		free(e->lora_w[i].ax);
		free(e->lora_w[i].axq);
	}
	free(e->lora_w);
}

uint32_t q42_engine_n_lora(const q42_engine *e)
{
	return e->n_lora;
}

const q42_engine_lora *q42_engine_lora_at(const q42_engine *e, uint32_t i)
{
	return i < e->n_lora ? &e->lora[i] : NULL;
}
