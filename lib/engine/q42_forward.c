/* q42_forward.c -- the forward pass: one short sequence of named
 * operations over the architecture description (see q42_arch.h).
 *
 * Each operation follows the arithmetic of the ggml op llama.cpp's graph
 * uses at that point: the float ops come from kernels/q42_ops.h, RoPE
 * angles are advanced by repeated multiplication as ggml does, and matrix
 * products are vec_dot calls from the kernel tables on activations
 * quantized to the weight's vec_dot_type -- with ggml's generic
 * arithmetic or, by default, llama.cpp's x86 one (q42_engine.c chooses per
 * weight, kernels/q42_compat.h says what it does). Relies on q42_engine_open for
 * every shape and type check; must never allocate.
 */
#include <math.h>
#include <string.h>
#include "engine/q42_engine_impl.h"
#include "formats/q42_types.h"
#include "kernels/q42_compat.h"
#include "kernels/q42_ops.h"

/* ---- RoPE -------------------------------------------------------------- */

/* cos/sin pairs for one position: ggml's rope cache, angles advanced by
 * repeated multiplication with theta_scale, no YaRN extrapolation. */
static void op_rope_cache(const q42_engine *e, uint32_t pos, float *cache)
{
	const q42_weight *ff = &e->g[Q42_W_ROPE_FREQS];
	float theta = (float)pos;
	for (uint32_t i0 = 0; i0 < e->n_rot; i0 += 2) {
		const float f = ff->data ? ((const float *)(const void *)ff->data)[i0 / 2] : 1.0f;
		const float t = e->rope_scale * (theta / f);
		cache[i0] = cosf(t);
		cache[i0 + 1] = sinf(t);
		theta *= e->theta_scale;
	}
}

static void op_rope(const q42_engine *e, float *v, uint32_t n_heads, uint32_t hd,
		    const float *cache)
{
	const uint32_t n = e->n_rot;
	const bool neox = e->arch->rope == Q42_ROPE_NEOX;
	for (uint32_t h = 0; h < n_heads; h++) {
		float *x = v + (uint64_t)h * hd;
		/* llama.cpp's build fuses the rotation into FMAs; the last bit
		 * of Q and K decides later Q8_0 roundings, so it must match. */
		if (e->arith == Q42_ARITH_LLAMACPP) {
			e->cops->rope(n, x, cache, neox);
			continue;
		}
		for (uint32_t i0 = 0; i0 < n; i0 += 2) {
			const uint32_t a = neox ? i0 / 2 : i0;
			const uint32_t b = neox ? i0 / 2 + n / 2 : i0 + 1;
			const float c = cache[i0], s = cache[i0 + 1];
			const float x0 = x[a], x1 = x[b];
			x[a] = x0 * c - x1 * s;
			x[b] = x0 * s + x1 * c;
		}
	}
}

/* ---- matrix products --------------------------------------------------- */

static void acts_invalidate(q42_engine *e)
{
	for (uint32_t i = 0; i < e->n_act; i++)
		e->act[i].valid = false;
}

/* The rows of src (n_tok x n_in floats) in the activation type of w. */
static const q42_act *acts_get(q42_engine *e, const q42_weight *w, const float *src,
			       uint32_t n_tok)
{
	q42_act *a = &e->act[w->act];
	if (a->valid)
		return a;
	if (a->quantize == NULL) { /* the product reads the floats themselves */
		a->rows = (const uint8_t *)src;
		a->stride = (uint64_t)w->n_in * sizeof(float);
	} else {
		uint64_t rb = 0;
		q42_dtype_nbytes(a->type, (uint64_t)w->n_in, (uint64_t)w->n_in, &rb);
		for (uint32_t t = 0; t < n_tok; t++)
			a->quantize(src + (uint64_t)t * w->n_in, a->buf + t * rb, w->n_in);
		a->rows = a->buf;
		a->stride = rb;
	}
	a->valid = true;
	return a;
}

struct mm_args {
	const q42_weight *w;
	const q42_act *a;
	float *y;
	uint32_t n_tok;
};

/* Rows per share of a row-product job: the SIMD kernels compute 8 rows
 * at a time, so shares start on a multiple of 8. */
#define MM_ROW_ALIGN 8

/* Each thread owns a contiguous range of weight rows; every output
 * element is one dot product computed by one thread (the row kernels give
 * each row its own lane), so the split cannot change a result. Each
 * weight row is read once per call however many tokens there are. */
static void mm_job(void *v, uint32_t ith, uint32_t nth)
{
	const struct mm_args *m = v;
	const q42_weight *w = m->w;
	int64_t r0 = w->n_out * ith / nth, r1 = w->n_out * (ith + 1) / nth;
	if (w->rows != NULL) {
		r0 = ith == 0 ? 0 : r0 - r0 % MM_ROW_ALIGN;
		r1 = ith + 1 == nth ? w->n_out : r1 - r1 % MM_ROW_ALIGN;
		if (r1 > r0)
			w->rows(w->n_in, r1 - r0, w->data + (uint64_t)r0 * w->row_bytes, w->row_bytes,
				m->n_tok, m->a->rows, m->a->stride, m->y + r0, (uint64_t)w->n_out);
		return;
	}
	for (int64_t r = r0; r < r1; r++) {
		const uint8_t *wr = w->data + (uint64_t)r * w->row_bytes;
		for (uint32_t t = 0; t < m->n_tok; t++)
			w->dot(w->n_in, &m->y[(uint64_t)t * w->n_out + r], wr,
				      m->a->rows + t * m->a->stride);
	}
}

/* y (n_tok x n_out) = src (n_tok x n_in) W^T (+ bias) */
static void op_matmul(q42_engine *e, const q42_weight *w, const float *src, uint32_t n_tok,
		      float *y, const q42_weight *bias)
{
	struct mm_args m = {w, acts_get(e, w, src, n_tok), y, n_tok};
	q42_pool_run(e->pool, mm_job, &m);
	if (bias->data != NULL) {
		const float *b = (const float *)(const void *)bias->data;
		for (uint32_t t = 0; t < n_tok; t++)
			q42_op_add(w->n_out, y + (uint64_t)t * w->n_out, y + (uint64_t)t * w->n_out, b);
	}
}

/* ---- attention --------------------------------------------------------- */

static uint8_t *k_row(const q42_engine *e, uint32_t l, uint32_t kvh, uint32_t pos)
{
	uint64_t i = ((uint64_t)l * e->n_head_kv_max + kvh) * e->n_ctx + pos;
	return e->kc + i * e->k_row_bytes;
}

/* V is stored transposed: one row of n_ctx positions per dimension. */
static uint8_t *v_row(const q42_engine *e, uint32_t l, uint32_t kvh, uint32_t d)
{
	uint64_t i = (((uint64_t)l * e->n_head_kv_max + kvh) * e->hd_v + d) * e->n_ctx;
	return e->vc + i * e->v_elem_bytes;
}

static void op_kv_store(q42_engine *e, uint32_t l, uint32_t n_tok)
{
	const uint32_t kvh_n = e->layers[l].n_head_kv;
	for (uint32_t t = 0; t < n_tok; t++) {
		const uint32_t pos = e->n_past + t;
		const float *k = e->k + (uint64_t)t * kvh_n * e->hd_k;
		const float *v = e->v + (uint64_t)t * kvh_n * e->hd_v;
		for (uint32_t h = 0; h < kvh_n; h++) {
			e->kvq->quantize(k + (uint64_t)h * e->hd_k, k_row(e, l, h, pos), e->hd_k);
			for (uint32_t d = 0; d < e->hd_v; d++)
				e->kvq->quantize(v + (uint64_t)h * e->hd_v + d,
						 v_row(e, l, h, d) + (uint64_t)pos * e->v_elem_bytes,
						 1);
		}
	}
}

struct att_args {
	q42_engine *e;
	uint32_t l;
	uint32_t n_tok;
};

/* One (token, head) pair per step: scores against every cached position
 * up to the token's own (causal), softmax as ggml_soft_max_ext, then the
 * value rows. Pairs are split in contiguous ranges between threads. */
static void att_job(void *v, uint32_t ith, uint32_t nth)
{
	const struct att_args *a = v;
	q42_engine *e = a->e;
	const q42_tscratch *ts = &e->ts[ith];
	const uint32_t kvh_n = e->layers[a->l].n_head_kv;
	const uint32_t group = e->n_head / kvh_n;
	const uint64_t n_pairs = (uint64_t)a->n_tok * e->n_head;
	const uint64_t p0 = n_pairs * ith / nth, p1 = n_pairs * (ith + 1) / nth;
	float *s = ts->scores;
	/* llama.cpp's V product rounds differently for one token and for
	 * several (q42_compat.h); att_kqv_one == att_kqv outside that mode */
	void (*kqv)(int64_t, float *, const void *, const void *) =
		a->n_tok == 1 ? e->att_kqv_one : e->att_kqv;

	for (uint64_t p = p0; p < p1; p++) {
		const uint32_t t = (uint32_t)(p / e->n_head), h = (uint32_t)(p % e->n_head);
		const uint32_t kvh = h / group;
		const uint32_t n_kv = e->n_past + t + 1;
		const float *q = e->q + ((uint64_t)t * e->n_head + h) * e->hd_k;
		float *out = e->att + ((uint64_t)t * e->n_head + h) * e->hd_v;
		e->kvq->quantize(q, ts->qq, e->hd_k);
		for (uint32_t j = 0; j < n_kv; j++)
			e->att_kq(e->hd_k, &s[j], k_row(e, a->l, kvh, j), ts->qq);
		q42_op_scale(n_kv, s, s, e->kq_scale);
		e->softmax(n_kv, s, s);
		e->kvq->quantize(s, ts->pq, n_kv);
		for (uint32_t d = 0; d < e->hd_v; d++)
			kqv(n_kv, &out[d], v_row(e, a->l, kvh, d), ts->pq);
	}
}

static void op_attention(q42_engine *e, uint32_t l, uint32_t n_tok)
{
	struct att_args a = {e, l, n_tok};
	q42_pool_run(e->pool, att_job, &a);
}

/* ---- the pass ---------------------------------------------------------- */

static void op_embed(q42_engine *e, const int32_t *ids, uint32_t n)
{
	const q42_weight *w = &e->g[Q42_W_TOK_EMBD];
	for (uint32_t t = 0; t < n; t++)
		w->k->dequant(w->data + (uint64_t)ids[t] * w->row_bytes,
			      e->x + (uint64_t)t * e->n_embd, e->n_embd);
}

static void op_norm_rows(q42_engine *e, const q42_weight *w, uint32_t n, const float *x,
			 float *y)
{
	const float *wv = (const float *)(const void *)w->data;
	for (uint32_t t = 0; t < n; t++)
		q42_op_rmsnorm(e->n_embd, y + (uint64_t)t * e->n_embd, x + (uint64_t)t * e->n_embd, wv,
			       e->eps);
	acts_invalidate(e);
}

static void block_attention(q42_engine *e, uint32_t l, uint32_t n)
{
	const q42_weight *W = e->layers[l].w;
	const uint32_t kvh = e->layers[l].n_head_kv;

	op_norm_rows(e, &W[Q42_W_ATTN_NORM], n, e->x, e->xb);
	op_matmul(e, &W[Q42_W_ATTN_Q], e->xb, n, e->q, &W[Q42_W_ATTN_Q_B]);
	op_matmul(e, &W[Q42_W_ATTN_K], e->xb, n, e->k, &W[Q42_W_ATTN_K_B]);
	op_matmul(e, &W[Q42_W_ATTN_V], e->xb, n, e->v, &W[Q42_W_ATTN_V_B]);
	for (uint32_t t = 0; t < n; t++) {
		op_rope_cache(e, e->n_past + t, e->rope);
		op_rope(e, e->q + (uint64_t)t * e->n_head * e->hd_k, e->n_head, e->hd_k, e->rope);
		op_rope(e, e->k + (uint64_t)t * kvh * e->hd_k, kvh, e->hd_k, e->rope);
	}
	op_kv_store(e, l, n);
	op_attention(e, l, n);
	acts_invalidate(e);
	op_matmul(e, &W[Q42_W_ATTN_OUT], e->att, n, e->ao, &W[Q42_W_ATTN_OUT_B]);
	q42_op_add((int64_t)n * e->n_embd, e->x, e->x, e->ao);
}

static void block_ffn(q42_engine *e, uint32_t l, uint32_t n)
{
	const q42_weight *W = e->layers[l].w;
	const uint32_t ff = e->layers[l].n_ff;

	op_norm_rows(e, &W[Q42_W_FFN_NORM], n, e->x, e->xb);
	op_matmul(e, &W[Q42_W_FFN_GATE], e->xb, n, e->hg, &W[Q42_W_FFN_GATE_B]);
	op_matmul(e, &W[Q42_W_FFN_UP], e->xb, n, e->hu, &W[Q42_W_FFN_UP_B]);
	for (uint32_t t = 0; t < n; t++) /* per row: ggml's SIMD chunks restart */
		e->swiglu(ff, e->hg + (uint64_t)t * ff, e->hg + (uint64_t)t * ff,
			  e->hu + (uint64_t)t * ff);
	acts_invalidate(e);
	op_matmul(e, &W[Q42_W_FFN_DOWN], e->hg, n, e->ao, &W[Q42_W_FFN_DOWN_B]);
	q42_op_add((int64_t)n * e->n_embd, e->x, e->x, e->ao);
}

void q42_forward(q42_engine *e, const int32_t *ids, uint32_t n, bool want_logits)
{
	static const q42_weight none;

	op_embed(e, ids, n);
	for (uint32_t l = 0; l < e->n_layer; l++) {
		block_attention(e, l, n);
		block_ffn(e, l, n);
	}
	e->n_past += n;
	if (want_logits) {
		op_norm_rows(e, &e->g[Q42_W_OUTPUT_NORM], 1, e->x + (uint64_t)(n - 1) * e->n_embd,
			     e->xb);
		op_matmul(e, &e->g[Q42_W_OUTPUT], e->xb, 1, e->logits, &none);
	}
}
