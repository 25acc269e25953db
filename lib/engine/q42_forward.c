/* q42_forward.c -- the forward pass: one short sequence of named
 * operations over the architecture description (see q42_arch.h).
 *
 * Each operation follows the arithmetic of the ggml op llama.cpp's graph
 * uses at that point: the float ops come from kernels/q42_ops.h, RoPE
 * angles are advanced by repeated multiplication as ggml does, and matrix
 * products are vec_dot calls from the kernel tables on activations
 * quantized to the weight's vec_dot_type -- with ggml's generic
 * arithmetic or, by default, llama.cpp's x86 one (q42_engine.c chooses per
 * weight, kernels/q42_llamacpp.h says what it does). Relies on q42_engine_open for
 * every shape and type check; must never allocate.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "engine/q42_engine_impl.h"
#include "engine/q42_sample.h"
#include "common/q42_types.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_ops.h"

/* ---- RoPE -------------------------------------------------------------- */

/* cos/sin pairs for one position in layer l: ggml's rope cache, angles
 * advanced by repeated multiplication with the layer's theta_scale,
 * divided by the frequency factors where the model has them, scaled by
 * the attention factor, no YaRN extrapolation. */
static void op_rope_cache(const q42_engine *e, uint32_t l, uint32_t pos, float *cache)
{
	const q42_weight *ff = e->rope_ff;
	const q42_layer *L = &e->layers[l];
	float theta = (float)pos;
	for (uint32_t i0 = 0; i0 < e->n_rot; i0 += 2) {
		const float f = ff->data ? ((const float *)(const void *)ff->data)[i0 / 2] : 1.0f;
		const float t = L->rope_scale * (theta / f);
		cache[i0] = cosf(t) * e->rope_mscale;
		cache[i0 + 1] = sinf(t) * e->rope_mscale;
		theta *= L->theta_scale;
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
		if (q42_arith_is_llama(e->arith)) {
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

/* n_heads q (is_q) or k rows of one token in layer l, ready for the
 * cache and the scores: each head through its RMSNorm where the layer
 * has one (qwen3, gemma3), RoPE, then q scaled where the architecture
 * scales q instead of the scores (phi3, gemma3) -- llama.cpp's order. */
static void op_qk_rows(const q42_engine *e, uint32_t l, float *x, uint32_t n_heads, bool is_q,
		       const float *cache)
{
	const q42_weight *nw = &e->layers[l].w[is_q ? Q42_W_ATTN_Q_NORM : Q42_W_ATTN_K_NORM];
	if (nw->data != NULL)
		e->cops->rmsnorm_rows(e->hd_k, n_heads, x, x, (const float *)(const void *)nw->data,
				      e->eps);
	if (!e->arch->no_rope)
		op_rope(e, x, n_heads, e->hd_k, cache);
	if (is_q && e->arch->q_prescale)
		q42_op_scale((int64_t)n_heads * e->hd_k, x, x, e->q_scale);
	for (uint64_t i = 0; e->k_rot != 0 && i < (uint64_t)n_heads * e->hd_k; i += e->k_rot)
		q42_llamacpp_fwht(e->k_rot, x + i);
}

/* v's rotation over a Q8_0 cache (e->v_rot): before the store, and on
 * the attention's output. */
static void op_v_rot(const q42_engine *e, float *x, uint64_t n)
{
	for (uint64_t i = 0; e->v_rot != 0 && i < n; i += e->v_rot)
		q42_llamacpp_fwht(e->v_rot, x + i);
}

/* ---- phase clock ------------------------------------------------------- */

static uint64_t phase_start(const q42_engine *e)
{
	struct timespec t;
	if (!e->phase_clock)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void phase_end(q42_engine *e, int phase, uint64_t t0)
{
	if (e->phase_clock)
		e->phase_ns[phase] += phase_start(e) - t0;
}

/* ---- work split -------------------------------------------------------- */

/* Jobs hand out tiles from a shared counter, so a thread that the system
 * delays gets fewer of them; which thread computes a tile depends on
 * timing, what the tile computes (and in which order) does not. */
static bool tile_claim(atomic_uint *next, uint32_t n, uint32_t *i)
{
	*i = atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
	return *i < n;
}

static uint32_t n_tiles(int64_t n_out)
{
	return (uint32_t)((n_out + Q42_TILE_ROWS - 1) / Q42_TILE_ROWS);
}

/* ---- activations ------------------------------------------------------- */

/* Bit i set: activation slot i is quantized from the current input (for
 * the weights, and for the A factors of their adapters). */
static uint32_t acts_mask(const q42_weight *const *ws, uint32_t nw)
{
	uint32_t mask = 0;
	for (uint32_t i = 0; i < nw; i++) {
		mask |= 1u << ws[i]->act;
		for (const q42_lora_w *lw = ws[i]->lora; lw != NULL; lw = lw->next)
			mask |= 1u << lw->a.act;
	}
	return mask;
}

static void act_row(const q42_act *a, const float *src, int64_t n_in, uint64_t stride, uint32_t t)
{
	if (a->quantize != NULL)
		a->quantize(src + (uint64_t)t * (uint64_t)n_in, a->buf + t * stride, n_in);
}

struct prep_args {
	q42_engine *e;
	const q42_weight *norm; /* NULL: src is the input as it is */
	const float *src;
	float *dst;             /* rmsnorm(src), when norm */
	int64_t n_in;
	uint32_t mask, n_tok;
	uint64_t stride[Q42_ACT_SLOTS];
	atomic_uint next;
};

/* Token rows t0..t1-1: the norm, then each row in every activation type
 * needed. */
static void prep_rows(struct prep_args *a, uint32_t t0, uint32_t t1)
{
	q42_engine *e = a->e;
	const float *in = a->src;
	if (a->norm != NULL) {
		e->cops->rmsnorm_rows(a->n_in, t1 - t0, a->dst + (uint64_t)t0 * (uint64_t)a->n_in,
				      a->src + (uint64_t)t0 * (uint64_t)a->n_in,
				      (const float *)(const void *)a->norm->data, e->eps);
		in = a->dst;
	}
	for (uint32_t t = t0; t < t1; t++)
		for (uint32_t i = 0; i < e->n_act; i++)
			if (a->mask & (1u << i))
				act_row(&e->act[i], in, a->n_in, a->stride[i], t);
}

/* Tokens per claim of the row preparation: the norm's four chains. */
#define Q42_PREP_ROWS 4u

static void prep_job(void *v, uint32_t ith, uint32_t nth)
{
	struct prep_args *a = v;
	uint32_t c;
	(void)ith;
	(void)nth;
	while (tile_claim(&a->next, (a->n_tok + Q42_PREP_ROWS - 1) / Q42_PREP_ROWS, &c))
		prep_rows(a, c * Q42_PREP_ROWS,
			  (c + 1) * Q42_PREP_ROWS < a->n_tok ? (c + 1) * Q42_PREP_ROWS : a->n_tok);
}

/* ---- LoRA adapters ----------------------------------------------------- */

static void mm_run_parts(q42_engine *e, const q42_weight *const *ws, float *const *ys, uint32_t n,
			 uint32_t n_tok);
static void mm_rows(const q42_weight *w, const q42_act *a, float *y, uint32_t n_tok, int64_t r0,
		    int64_t r1);

/* A.x of one token for the pair lw, on the caller: a token's A factors
 * are a few rows each (rank), cheaper than waking the workers. A packed
 * A (q42_lora_w.at) is read a group of rows at a time, one stream each. */
static void lora_down_one(q42_engine *e, q42_lora_w *lw)
{
	static const q42_llamacpp_vlayout lay = Q42_LORA_A_LAYOUT;
	const q42_act *x = &e->act[lw->a.act];
	const int64_t n = lw->a.n_in, rank = lw->a.n_out;
	if (lw->at == NULL) {
		mm_rows(&lw->a, x, lw->ax, 1, 0, rank);
		return;
	}
	for (int64_t r = 0; r < rank; r += Q42_LORA_A_ROWS)
		e->cops->dot_f32_vrows(n, rank - r < Q42_LORA_A_ROWS ? rank - r : Q42_LORA_A_ROWS, lw->ax + r,
				       lw->at + (uint64_t)r * (uint64_t)n, &lay, x->rows);
}

/* The rank values B.(A.x) starts from, for each adapter on one of the
 * weights ws (each weight once): A.x of the prepared input (A is one more
 * matrix product on the rows of its activation slot), then in B's
 * vec_dot_type where B quantizes its input. */
static void op_lora_down(q42_engine *e, const q42_weight *const *ws, uint32_t nw, uint32_t n_tok)
{
	const q42_weight *as[Q42_ACT_SLOTS * Q42_LORA_MAX];
	float *ys[Q42_ACT_SLOTS * Q42_LORA_MAX];
	q42_lora_w *lws[Q42_ACT_SLOTS * Q42_LORA_MAX];
	uint32_t n = 0;
	for (uint32_t i = 0; i < nw; i++) {
		bool seen = false;
		for (uint32_t j = 0; j < i; j++)
			seen |= ws[j] == ws[i];
		for (q42_lora_w *lw = seen ? NULL : ws[i]->lora; lw != NULL; lw = lw->next) {
			lws[n] = lw;
			as[n] = &lw->a;
			ys[n++] = lw->ax;
		}
	}
	if (n == 0)
		return;
	if (n_tok == 1) {
		const uint64_t t0 = phase_start(e);
		for (uint32_t i = 0; i < n; i++)
			lora_down_one(e, lws[i]);
		phase_end(e, Q42_PHASE_PRODUCTS, t0);
	} else {
		mm_run_parts(e, as, ys, n, n_tok);
	}
	for (uint32_t i = 0; i < nw; i++)
		for (q42_lora_w *lw = ws[i]->lora; lw != NULL; lw = lw->next)
			if (lw->b.aq != NULL)
				for (uint32_t t = 0; t < n_tok; t++)
					lw->b.aq(lw->ax + (uint64_t)t * (uint64_t)lw->b.n_in,
						 lw->axq + t * lw->axq_stride, lw->b.n_in);
}

/* y rows r0..r1-1 of every token (n_out apart) += scale * B.(A.x): B's
 * product of the pass (its row kernel, which rounds a pass of several
 * tokens as llama.cpp's tinyBLAS does where the shape allows) a tile of
 * rows at a time into tmp, each element scaled, then added --
 * ggml_mul_mat, ggml_scale and ggml_add, the roundings of build_lora_mm. */
static void op_lora_up(const q42_lora_w *lw, float *y, uint64_t n_out, uint32_t n_tok, int64_t r0,
		       int64_t r1, float *tmp)
{
	const q42_weight *b = &lw->b;
	const uint8_t *in = lw->axq != NULL ? lw->axq : (const uint8_t *)lw->ax;
	const uint64_t stride = lw->axq != NULL ? lw->axq_stride : (uint64_t)b->n_in * sizeof(float);
	for (int64_t r = r0; r < r1; r += Q42_TILE_ROWS) {
		const int64_t n = r1 - r < Q42_TILE_ROWS ? r1 - r : Q42_TILE_ROWS;
		const uint8_t *w = b->data + (uint64_t)r * b->row_bytes;
		if (b->rows != NULL)
			b->rows(b->n_in, n, w, b->row_bytes, n_tok, in, stride, tmp, Q42_TILE_ROWS);
		else
			for (int64_t i = 0; i < n; i++)
				for (uint32_t t = 0; t < n_tok; t++)
					b->dot(b->n_in, &tmp[t * Q42_TILE_ROWS + (uint64_t)i],
					       w + (uint64_t)i * b->row_bytes, in + t * stride);
		for (uint32_t t = 0; t < n_tok; t++)
			for (int64_t i = 0; i < n; i++) {
				const float f = tmp[t * Q42_TILE_ROWS + (uint64_t)i] * lw->scale;
				y[t * n_out + (uint64_t)(r + i)] += f;
			}
	}
}

/* Make the input of the weights ws ready: rows of src (n_tok x n_in),
 * first through rmsnorm into dst when norm is given, then quantized to the
 * activation type of each weight. Rows are split between threads when
 * there are several. */
static void op_prepare(q42_engine *e, const q42_weight *norm, const float *src, float *dst,
		       const q42_weight *const *ws, uint32_t nw, uint32_t n_tok)
{
	struct prep_args a = {e, norm, src, dst, ws[0]->n_in, acts_mask(ws, nw), n_tok, {0}, 0};
	const float *in = norm != NULL ? dst : src;
	for (uint32_t i = 0; i < e->n_act; i++) {
		q42_act *s = &e->act[i];
		if (!(a.mask & (1u << i)))
			continue;
		if (s->quantize == NULL) { /* the product reads the floats themselves */
			s->rows = (const uint8_t *)in;
			s->stride = (uint64_t)a.n_in * sizeof(float);
		} else {
			q42_dtype_nbytes(s->type, (uint64_t)a.n_in, (uint64_t)a.n_in, &a.stride[i]);
			s->rows = s->buf;
			s->stride = a.stride[i];
		}
	}
	if (n_tok == 1)
		prep_rows(&a, 0, 1);
	else
		q42_pool_run(e->pool, prep_job, &a);
	op_lora_down(e, ws, nw, n_tok);
}

/* ---- matrix products --------------------------------------------------- */

/* y rows r0..r1-1 of every token: y[t * n_out + r] = W[r] . a[t]. Every
 * element is one dot product whatever the range (the row kernels give each
 * row its own lane). */
static void mm_rows(const q42_weight *w, const q42_act *a, float *y, uint32_t n_tok, int64_t r0,
		    int64_t r1)
{
	if (w->rows != NULL) {
		w->rows(w->n_in, r1 - r0, w->data + (uint64_t)r0 * w->row_bytes, w->row_bytes, n_tok,
			a->rows, a->stride, y + r0, (uint64_t)w->n_out);
		return;
	}
	for (int64_t r = r0; r < r1; r++) {
		const uint8_t *wr = w->data + (uint64_t)r * w->row_bytes;
		for (uint32_t t = 0; t < n_tok; t++)
			w->dot(w->n_in, &y[(uint64_t)t * (uint64_t)w->n_out + (uint64_t)r], wr,
			       a->rows + t * a->stride);
	}
}

/* One product of a job: y = act W^T (+ the adapters' terms) (+ bias),
 * then res += y when res. */
struct mm_part {
	const q42_weight *w;
	const q42_weight *bias; /* data NULL: none */
	float *y;
	float *res;
	uint32_t tiles;
};

struct mm_args {
	q42_engine *e;
	struct mm_part part[3];
	uint32_t n_part, n_tok, n_tiles;
	/* non-NULL: parts 0 and 1 are gate and up, a tile is the same rows
	 * of both, then y0 = glu(y0, y1) over them (SwiGLU or GeGLU) */
	void (*glu)(int64_t n, float *y, const float *x, const float *g);
	q42_top1 *top1; /* per tile of part 0 (one token): its largest value */
	atomic_uint next; /* several tokens: the next tile to hand out */
	/* one token: thread i's range of tiles, front | back << 32, each on a
	 * cache line of its own */
	struct {
		_Alignas(64) _Atomic uint64_t fb;
	} range[Q42_POOL_MAX_THREADS];
};

/* Rows r0..r1-1 of one part, bias and residual included. Bias and
 * residual are elementwise adds, so doing them per tile gives the bytes
 * the whole-row adds give. */
static void mm_tile(const q42_engine *e, const struct mm_part *p, uint32_t n_tok, int64_t r0,
		    int64_t r1, float *tmp)
{
	const uint64_t no = (uint64_t)p->w->n_out;
	mm_rows(p->w, &e->act[p->w->act], p->y, n_tok, r0, r1);
	for (const q42_lora_w *lw = p->w->lora; lw != NULL; lw = lw->next)
		if (n_tok == 1 && lw->bt != NULL) /* r0 is a multiple of 16 */
			e->cops->f32_t16_axpy(lw->b.n_in, r1 - r0, lw->bt + (uint64_t)r0 * (uint64_t)lw->b.n_in,
					      lw->ax, lw->scale, p->y + r0);
		else
			op_lora_up(lw, p->y, no, n_tok, r0, r1, tmp);
	for (uint32_t t = 0; t < n_tok; t++) {
		float *y = p->y + t * no + (uint64_t)r0;
		if (p->bias->data != NULL)
			e->add(r1 - r0, y, y, (const float *)(const void *)p->bias->data + r0);
		if (p->res != NULL)
			e->add(r1 - r0, p->res + t * no + (uint64_t)r0, p->res + t * no + (uint64_t)r0,
			       y);
	}
}

/* Largest non-NaN value of y[r0..r1-1], lowest index on ties. */
static q42_top1 tile_top1(const float *y, int64_t r0, int64_t r1)
{
	q42_top1 b = {0.0f, -1};
	for (int64_t r = r0; r < r1; r++)
		if (!isnan(y[r]) && (b.id < 0 || y[r] > b.v)) {
			b.v = y[r];
			b.id = (int32_t)r;
		}
	return b;
}

/* A one-token product streams its weights once. Each thread owns a
 * contiguous nth-th of the tiles and claims from its front, half of
 * what is left of its range at a time, so its claims follow each other in
 * memory and the prefetch of one kernel call runs on into the next; a
 * thread whose range is done takes from the back of another's, shorter
 * and shorter runs, so the threads finish within a tile of each other.
 * Why not one shared counter (guided self-scheduling, a claim 1/(2 nth)
 * of what was left): the two threads' claims then alternate through the
 * matrix, about 12 runs per thread and product, each a fresh stream for
 * the hardware prefetcher; ranges decoded Q4_K_M about 10 % faster.
 * Half of what is left beats a quarter and beats no stealing. Having the
 * idle worker prefetch its next share between jobs, or letting one
 * thread's stream run on from one product into the next, gained nothing
 * and is not done (docs/perf/scheduling.md). */
#define Q42_RANGE_DIV 2u
/* Runs per thread and part of a product of several tokens: the row kernels
 * rearrange the whole activation matrix once per call (AMX tile layout),
 * which costs about as much as 64 rows of products, so prefill hands out
 * a few long runs per thread instead of many short ones. */
#define Q42_PREFILL_SHARES 4u

/* The part tile c of the product is in (*p) and its index there (*ti). */
static void mm_locate(const struct mm_args *m, uint32_t c, uint32_t *p, uint32_t *ti)
{
	*p = 0;
	*ti = c;
	while (*ti >= m->part[*p].tiles)
		*ti -= m->part[(*p)++].tiles;
}

/* A one-token claim for thread ith: from the front of its own range, else
 * from the back of the next range with tiles left; never across two
 * parts. */
static bool mm_claim_one(struct mm_args *m, uint32_t ith, uint32_t nth, uint32_t *i, uint32_t *k)
{
	for (uint32_t s = 0; s < nth; s++) {
		_Atomic uint64_t *fb = &m->range[(ith + s) % nth].fb;
		uint64_t v = atomic_load_explicit(fb, memory_order_relaxed);
		for (;;) {
			const uint32_t f = (uint32_t)v, b = (uint32_t)(v >> 32);
			uint32_t p, ti, want = (b - f) / Q42_RANGE_DIV > 1 ? (b - f) / Q42_RANGE_DIV : 1;
			uint64_t nv;
			if (f >= b)
				break;
			if (s == 0) {
				mm_locate(m, f, &p, &ti);
				if (want > m->part[p].tiles - ti)
					want = m->part[p].tiles - ti;
				*i = f;
				nv = (uint64_t)(f + want) | (uint64_t)b << 32;
			} else {
				mm_locate(m, b - 1, &p, &ti);
				if (want > ti + 1)
					want = ti + 1;
				*i = b - want;
				nv = (uint64_t)f | (uint64_t)(b - want) << 32;
			}
			if (atomic_compare_exchange_weak_explicit(fb, &v, nv, memory_order_relaxed,
								  memory_order_relaxed)) {
				*k = want;
				return true;
			}
		}
	}
	return false;
}

/* Claims the run of tiles *i.. (*k of them, never across two parts) and
 * says which part it is in and where there (*p, *ti); false when none are
 * left. Runs differ only in length, each row is computed the same way in
 * any of them. */
static bool mm_claim(struct mm_args *m, uint32_t ith, uint32_t nth, uint32_t *i, uint32_t *k, uint32_t *p,
		     uint32_t *ti)
{
	if (m->n_tok == 1) {
		if (!mm_claim_one(m, ith, nth, i, k))
			return false;
		mm_locate(m, *i, p, ti);
		return true;
	}
	uint32_t c = atomic_load_explicit(&m->next, memory_order_relaxed);
	do {
		uint32_t want = Q42_TILE_RUN;
		if (c >= m->n_tiles)
			return false;
		mm_locate(m, c, p, ti);
		if (m->part[*p].tiles / (Q42_PREFILL_SHARES * nth) > want)
			want = m->part[*p].tiles / (Q42_PREFILL_SHARES * nth);
		*k = m->part[*p].tiles - *ti < want ? m->part[*p].tiles - *ti : want;
	} while (!atomic_compare_exchange_weak_explicit(&m->next, &c, c + *k, memory_order_relaxed,
							memory_order_relaxed));
	*i = c;
	return true;
}

static void mm_job(void *v, uint32_t ith, uint32_t nth)
{
	struct mm_args *m = v;
	const q42_engine *e = m->e;
	uint32_t i, k, p, ti;
	while (mm_claim(m, ith, nth, &i, &k, &p, &ti)) {
		const struct mm_part *pt = &m->part[p];
		const int64_t r0 = (int64_t)ti * Q42_TILE_ROWS;
		const int64_t r1 = r0 + (int64_t)k * Q42_TILE_ROWS < pt->w->n_out
					   ? r0 + (int64_t)k * Q42_TILE_ROWS
					   : pt->w->n_out;
		mm_tile(e, pt, m->n_tok, r0, r1, e->ts[ith].lora);
		if (m->glu != NULL) {
			/* tiles start on a multiple of 16, where the kernels'
			 * SIMD chunks of a whole row start too */
			const uint64_t ff = (uint64_t)pt->w->n_out;
			mm_tile(e, &m->part[1], m->n_tok, r0, r1, e->ts[ith].lora);
			for (uint32_t t = 0; t < m->n_tok; t++) {
				float *g = m->part[0].y + t * ff + (uint64_t)r0;
				m->glu(r1 - r0, g, g, m->part[1].y + t * ff + (uint64_t)r0);
			}
		}
		if (m->top1 != NULL)
			for (uint32_t j = 0; j < k; j++) {
				const int64_t a = r0 + (int64_t)j * Q42_TILE_ROWS;
				m->top1[i + j] = tile_top1(pt->y, a, a + Q42_TILE_ROWS < r1
									 ? a + Q42_TILE_ROWS
									 : r1);
			}
	}
}

static void mm_add(struct mm_args *m, const q42_weight *w, const q42_weight *bias, float *y,
		   float *res)
{
	struct mm_part *p = &m->part[m->n_part++];
	p->w = w;
	p->bias = bias;
	p->y = y;
	p->res = res;
	p->tiles = n_tiles(w->n_out);
	m->n_tiles += p->tiles;
}

static void mm_run(q42_engine *e, struct mm_args *m)
{
	m->e = e;
	if (m->glu != NULL)
		m->n_tiles = m->part[0].tiles;
	atomic_init(&m->next, 0);
	if (m->n_tok == 1) {
		const uint64_t nth = q42_pool_size(e->pool);
		for (uint64_t i = 0; i < nth; i++)
			atomic_init(&m->range[i].fb, i * m->n_tiles / nth | (i + 1) * m->n_tiles / nth << 32);
	}
	const uint64_t t0 = phase_start(e);
	q42_pool_run(e->pool, mm_job, m);
	phase_end(e, Q42_PHASE_PRODUCTS, t0);
}

/* Products of the weights ws into ys[i] (no bias, no residual), three to
 * a job: the adapters' A factors for a pass of several tokens. */
static void mm_run_parts(q42_engine *e, const q42_weight *const *ws, float *const *ys, uint32_t n,
			 uint32_t n_tok)
{
	static const q42_weight none;
	for (uint32_t i = 0; i < n; i += 3) {
		struct mm_args m = {0};
		for (uint32_t j = i; j < n && j < i + 3; j++)
			mm_add(&m, ws[j], &none, ys[j], NULL);
		m.n_tok = n_tok;
		mm_run(e, &m);
	}
}

/* ---- attention --------------------------------------------------------- */

/* K and V rows: q42_engine_k_row and q42_engine_v_at (q42_engine_impl.h). */

/* The v rows of token t of the pass, kv heads kv0..kv1-1, into the cache
 * (flash attention's row layout). */
static void v_store_rows(q42_engine *e, uint32_t l, uint32_t t, uint32_t kv0, uint32_t kv1)
{
	float *v = e->v + (uint64_t)t * e->layers[l].n_head_kv * e->hd_v;
	for (uint32_t h = kv0; h < kv1; h++) {
		op_v_rot(e, v + (uint64_t)h * e->hd_v, e->hd_v);
		e->kv_quantize(v + (uint64_t)h * e->hd_v, q42_engine_v_row(e, l, h, e->n_past + t), e->hd_v);
	}
}

/* RoPE on the q and k rows of token t, then its k into the cache. */
static void rope_store_row(q42_engine *e, uint32_t l, uint32_t t, float *cache)
{
	const uint32_t kvh_n = e->layers[l].n_head_kv;
	const uint32_t pos = e->n_past + t;
	float *k = e->k + (uint64_t)t * kvh_n * e->hd_k;

	op_rope_cache(e, l, pos, cache);
	op_qk_rows(e, l, e->q + (uint64_t)t * e->n_head * e->hd_k, e->n_head, true, cache);
	op_qk_rows(e, l, k, kvh_n, false, cache);
	for (uint32_t h = 0; h < kvh_n; h++)
		e->kv_quantize(k + (uint64_t)h * e->hd_k, q42_engine_k_row(e, l, h, pos), e->hd_k);
	if (e->fa) /* V in rows too */
		v_store_rows(e, l, t, 0, kvh_n);
}

/* Dimension r (kv head r / hd_v, dimension r % hd_v) of the v rows of all
 * n_tok tokens into its transposed cache row: the cache types (F32, F16)
 * convert element by element, so gathering the column into tmp and
 * converting it a block's run at a time writes the bytes per-element calls
 * would, with a call per run instead of one per token. */
static void v_store_row(q42_engine *e, uint32_t l, uint32_t n_tok, uint32_t r, float *tmp)
{
	const uint32_t kvh_n = e->layers[l].n_head_kv;
	const uint64_t stride = (uint64_t)kvh_n * e->hd_v;
	const float *v = e->v + r;
	for (uint32_t t = 0; t < n_tok; t++)
		tmp[t] = v[t * stride];
	for (uint32_t t = 0; t < n_tok;) {
		const uint32_t pos = e->n_past + t;
		const uint32_t left = Q42_V_BLOCK - pos % Q42_V_BLOCK;
		const uint32_t run = left < n_tok - t ? left : n_tok - t;
		e->kv_quantize(tmp + t, q42_engine_v_at(e, l, r / e->hd_v, r % e->hd_v, pos), run);
		t += run;
	}
}

/* The new V column of kv heads kv0..kv1-1 of a one-token pass into the
 * cache: sixteen dimensions converted at a time (the cache types convert
 * element by element, so the bytes are v_store_row's), then each element
 * to its row, Q42_V_BLOCK elements after the previous dimension's. Why
 * not a conversion call and a v_at per element: that was slower, most of
 * what is left being the stores' misses
 * (docs/perf/scheduling.md). */
static void v_store_one(q42_engine *e, uint32_t l, uint32_t kv0, uint32_t kv1)
{
	const uint64_t eb = e->v_elem_bytes, step = (uint64_t)Q42_V_BLOCK * eb;
	uint8_t run[16 * sizeof(float)];
	if (e->fa) {
		v_store_rows(e, l, 0, kv0, kv1);
		return;
	}
	for (uint32_t h = kv0; h < kv1; h++) {
		uint8_t *dst = q42_engine_v_at(e, l, h, 0, e->n_past);
		for (uint32_t d = 0; d < e->hd_v; d += 16) {
			const uint32_t n = e->hd_v - d < 16 ? e->hd_v - d : 16;
			e->kv_quantize(e->v + (uint64_t)h * e->hd_v + d, run, n);
			for (uint32_t i = 0; i < n; i++)
				memcpy(dst + (uint64_t)(d + i) * step, run + i * eb, eb);
		}
	}
}

struct att_args {
	q42_engine *e;
	uint32_t l;
	uint32_t n_tok; /* tokens in the pass (the V product's rounding) */
	uint32_t chunk;
	atomic_uint next;
	uint32_t t0; /* attention: tokens t0..n_tok-1 only */
};

/* Items 0..n_tok-1 are tokens (RoPE, k), the rest rows of v; neither
 * reads what the other writes. */
static void rope_store_job(void *v, uint32_t ith, uint32_t nth)
{
	struct att_args *a = v;
	const uint32_t n_v = a->e->fa ? 0 : a->e->layers[a->l].n_head_kv * a->e->hd_v;
	uint32_t i;
	(void)nth;
	while (tile_claim(&a->next, a->n_tok + n_v, &i)) {
		if (i < a->n_tok)
			rope_store_row(a->e, a->l, i, a->e->ts[ith].rope);
		else
			v_store_row(a->e, a->l, a->n_tok, i - a->n_tok, a->e->ts[ith].scores);
	}
}

static void op_rope_store(q42_engine *e, uint32_t l, uint32_t n_tok)
{
	struct att_args a = {e, l, n_tok, 1, 0, 0};
	if (n_tok == 1) {
		/* a pass without an attention job (att_one does this otherwise) */
		rope_store_row(e, l, 0, e->ts[0].rope);
	} else {
		q42_pool_run(e->pool, rope_store_job, &a);
	}
}

/* One (token, head) pair: scores against every cached position up to the
 * token's own (causal; an encoder's against every position of the pass), softmax as ggml_soft_max_ext, then the value rows.
 * Only this one row of scores exists at a time. */
/* out[r] = row r . x for n_rows rows stride bytes apart: the many-row
 * kernel when there is one, else the one-row product per row. */
static void att_dots(q42_llamacpp_dots_fn rows, void (*one)(int64_t, float *, const void *, const void *),
		     int64_t n, uint32_t n_rows, float *out, const uint8_t *w, uint64_t stride,
		     const void *x)
{
	if (rows != NULL) {
		rows(n, n_rows, out, w, stride, x);
		return;
	}
	for (uint32_t r = 0; r < n_rows; r++)
		one(n, out + r, w + (uint64_t)r * stride, x);
}

/* The positions token t sees: up to its own (causal); an encoder's token
 * sees the whole pass, its sequence. */
static uint32_t att_n_kv(const struct att_args *a, uint32_t t)
{
	return a->e->causal ? a->e->n_past + t + 1 : a->e->n_past + a->n_tok;
}

/* Token t's row of scores against head h's keys into s, through the
 * softmax (PRODUCTS false: s holds the products already); returns how
 * many positions it covers. */
static uint32_t att_scores(const struct att_args *a, const q42_tscratch *ts, uint32_t t, uint32_t h, float *s,
			   bool products)
{
	q42_engine *e = a->e;
	const uint32_t kvh = h / (e->n_head / e->layers[a->l].n_head_kv);
	const uint32_t n_kv = att_n_kv(a, t);
	const uint32_t pos = e->n_past + t, n_swa = e->layers[a->l].n_swa;
	const float *q = e->q + ((uint64_t)t * e->n_head + h) * e->hd_k;
	/* llama.cpp's products round differently for passes of one token and
	 * of several (q42_llamacpp.h); the same functions outside that mode */
	const bool one = a->n_tok == 1;
	void (*kq)(int64_t, float *, const void *, const void *) = one ? e->att_kq_one : e->att_kq;
	const q42_llamacpp_dots_fn kq_rows = one ? e->att_kq_one_rows : e->att_kq_rows;
	/* ... and an encoder's softmax row is as long as the sequence, not
	 * padded */
	void (*softmax)(int64_t n, float *y, const float *x) =
		e->arch->bidirectional && q42_arith_is_llama(e->arith) ? e->cops->softmax_unpadded
								       : e->softmax;
	/* an F32 cache's "quantization" is a copy: the products read q where
	 * it is */
	const void *qq = e->kv_type != Q42_DTYPE_F32 ? (const void *)ts->qq : (const void *)q;

	if (products && e->kv_type != Q42_DTYPE_F32)
		e->kv_quantize(q, ts->qq, e->hd_k);
	/* each score is one row's product: a call per chunk gives the same */
	for (uint32_t p = 0; products && p < n_kv; p += e->kv_chunk)
		att_dots(kq_rows, kq, e->hd_k, n_kv - p < e->kv_chunk ? n_kv - p : e->kv_chunk, s + p,
			 q42_engine_k_row(e, a->l, kvh, p), e->k_row_bytes, qq);
	q42_op_scale(n_kv, s, s, e->kq_scale);
	/* a sliding-window layer masks the positions n_swa or more before
	 * the query's with -inf, as llama.cpp's mask does: the softmax and the
	 * value products still run over every position from 0, so each sum
	 * keeps llama.cpp's order, the masked terms adding zeros */
	if (n_swa != 0 && !e->swa_symmetric)
		for (uint32_t p = 0; p + n_swa < n_kv; p++)
			s[p] = -INFINITY;
	if (n_swa != 0 && e->swa_symmetric) /* llama.cpp's LLAMA_SWA_TYPE_SYMMETRIC */
		for (uint32_t p = 0; p < n_kv; p++)
			if (p + n_swa / 2 < pos || p > pos + n_swa / 2)
				s[p] = -INFINITY;
	softmax(n_kv, s, s);
	return n_kv;
}

static void att_pair(const struct att_args *a, const q42_tscratch *ts, uint32_t t, uint32_t h)
{
	q42_engine *e = a->e;
	const uint32_t kvh = h / (e->n_head / e->layers[a->l].n_head_kv);
	float *out = e->att + ((uint64_t)t * e->n_head + h) * e->hd_v;
	float *s = ts->scores;
	const bool one = a->n_tok == 1;
	void (*kqv)(int64_t, float *, const void *, const void *) = one ? e->att_kqv_one : e->att_kqv;
	q42_llamacpp_vdots_fn kqv_rows = one ? e->att_kqv_one_rows : e->att_kqv_rows;
	const uint32_t n_kv = att_scores(a, ts, t, h, s, true);
	/* llama.cpp gives an encoder (not lfm2, which keeps its cache) no
	 * cache: its V product runs over the n_kv positions as they are, not
	 * a cache padded to 256, so tinyBLAS only where n_kv is a whole number
	 * of its steps, ggml_vec_dot_f32 on the true length otherwise */
	if (e->arch->bidirectional && q42_arith_is_llama(e->arith) && e->kv_type == Q42_DTYPE_F32 &&
	    n_kv % e->cops->tb_lanes != 0) {
		kqv_rows = NULL;
		kqv = e->cops->dot_f32_vd;
	}
	/* the products read the probabilities where they are for an F32
	 * cache, else in the cache's type */
	const void *pq = e->kv_type != Q42_DTYPE_F32 ? (const void *)ts->pq : (const void *)s;

	if (e->kv_type != Q42_DTYPE_F32)
		e->kv_quantize(s, ts->pq, n_kv);
	if (kqv_rows != NULL) {
		kqv_rows(n_kv, e->hd_v, out, q42_engine_v_at(e, a->l, kvh, 0, 0), &e->v_lay, pq);
		return;
	}
	/* the leftover-only products of a pass shorter than one V block:
	 * each dimension's positions are contiguous there, Q42_V_BLOCK apart */
	if (kqv == e->cops->dot_f32_vd && n_kv < Q42_V_BLOCK && !e->fa) {
		e->cops->dot_f32_vd_cols(n_kv, e->hd_v, out,
					 (const float *)(const void *)q42_engine_v_at(e, a->l, kvh, 0, 0),
					 Q42_V_BLOCK, (const float *)pq);
		return;
	}
	/* the one-row products read a contiguous row */
	for (uint32_t d = 0; d < e->hd_v; d++) {
		for (uint32_t p = 0; p < n_kv; p += Q42_V_BLOCK)
			memcpy(ts->vrow + (uint64_t)p * e->v_elem_bytes, q42_engine_v_at(e, a->l, kvh, d, p),
			       (uint64_t)(n_kv - p < Q42_V_BLOCK ? n_kv - p : Q42_V_BLOCK) * e->v_elem_bytes);
		kqv(n_kv, out + d, ts->vrow, pq);
	}
}

/* Whether a pass's (token, head) pairs go in blocks of Q42_ATT_BLOCK
 * tokens of a head (att_block): where the V product has a form for
 * several rows of weights at once (an F32 cache under llama.cpp's
 * arithmetic, a pass of several tokens, not an encoder's padless rows). */
static bool att_blocks(const q42_engine *e, uint32_t n_tok)
{
	return n_tok > 1 && e->att_kqv_multi != NULL && !e->arch->bidirectional;
}

/* Tokens t0..t0+n-1 (n <= Q42_ATT_BLOCK) of head h: the score products
 * of all of them in one pass over the K rows where there is a form for
 * it (the last token's positions for each: the extra ones are not read),
 * each token's scale, mask and softmax as att_pair's, then the V product
 * of all of them in one pass over the V rows. A token's row is as long as the positions it sees (causal: fewer
 * for the earlier ones); the shorter rows are padded with zero weights to
 * the last one's length. The bits stay att_pair's: the tinyBLAS lanes keep
 * element k in lane k % 16 whatever the length, and an accumulator that
 * starts at +0 is never -0, so adding 0 * v leaves it as it is (llama.cpp
 * itself runs every row over the whole cache, the masked weights 0). */
static void att_block(const struct att_args *a, const q42_tscratch *ts, uint32_t t0, uint32_t n, uint32_t h)
{
	q42_engine *e = a->e;
	const uint32_t kvh = h / (e->n_head / e->layers[a->l].n_head_kv);
	const uint32_t n_max = att_n_kv(a, t0 + n - 1);
	uint32_t n_kv[Q42_ATT_BLOCK];
	if (e->att_kq_multi != NULL) {
		const q42_llamacpp_vlayout lay = {e->k_row_bytes, 0, 64 * sizeof(float), 1};
		for (uint32_t p = 0; p < n_max; p += e->kv_chunk)
			e->att_kq_multi(e->hd_k, n_max - p < e->kv_chunk ? n_max - p : e->kv_chunk, n,
					ts->scores + p, e->n_ctx, q42_engine_k_row(e, a->l, kvh, p), &lay,
					e->q + ((uint64_t)t0 * e->n_head + h) * e->hd_k,
					(uint64_t)e->n_head * e->hd_k * sizeof(float));
	}
	for (uint32_t j = 0; j < n; j++)
		n_kv[j] = att_scores(a, ts, t0 + j, h, ts->scores + (uint64_t)j * e->n_ctx, e->att_kq_multi == NULL);
	for (uint32_t j = 0; j < n; j++)
		memset(ts->scores + (uint64_t)j * e->n_ctx + n_kv[j], 0, (uint64_t)(n_max - n_kv[j]) * sizeof(float));
	e->att_kqv_multi(n_max, e->hd_v, n, e->att + ((uint64_t)t0 * e->n_head + h) * e->hd_v,
			 (uint64_t)e->n_head * e->hd_v, q42_engine_v_at(e, a->l, kvh, 0, 0), &e->v_lay, ts->scores,
			 (uint64_t)e->n_ctx * sizeof(float));
}

/* ---- flash attention --------------------------------------------------- */

static q42_llamacpp_fa fa_params(const q42_engine *e)
{
	const q42_llamacpp_fa fa = {e->hd_k, e->hd_v, e->kq_scale, e->kv_type};
	return fa;
}

/* The cache positions lo..hi-1 a query at pos sees in layer l: up to its
 * own, in a sliding-window layer the last n_swa of them (llama.cpp's mask
 * gives the others -inf, which flash attention skips or weighs 0). */
static void fa_span(const q42_engine *e, uint32_t l, uint32_t pos, uint32_t *lo, uint32_t *hi)
{
	const uint32_t n_swa = e->layers[l].n_swa;
	*hi = pos + 1;
	*lo = n_swa != 0 && pos + 1 > n_swa ? pos + 1 - n_swa : 0;
}

/* Heads h0..h1-1 of token t, all of one kv head, in the one-at-a-time
 * form, run by run of contiguous cache rows: each K and V row is read
 * once for all of them, and each head's steps stay in its own order. */
static void fa_heads(q42_engine *e, uint32_t l, uint32_t t, uint32_t h0, uint32_t h1, float *ws)
{
	const q42_llamacpp_fa fa = fa_params(e);
	const uint32_t n = h1 - h0, kvh = h0 / (e->n_head / e->layers[l].n_head_kv);
	const uint64_t qb = e->k_row_bytes, ab = q42_llamacpp_fa_acc_bytes(&fa);
	float *qq = ws, *acc = qq + (uint64_t)n * e->hd_k, *m = acc + (uint64_t)n * e->hd_v, *s = m + n;
	const float *q = e->q + ((uint64_t)t * e->n_head + h0) * e->hd_k;
	uint32_t lo, hi;

	for (uint32_t i = 0; i < n; i++) {
		e->kv_quantize(q + (uint64_t)i * e->hd_k, (uint8_t *)qq + i * qb, e->hd_k);
		m[i] = -INFINITY;
		s[i] = 0.0f;
	}
	memset(acc, 0, n * ab);
	fa_span(e, l, e->n_past + t, &lo, &hi);
	for (uint32_t p = lo; p < hi;) {
		const uint32_t end = hi - p < e->kv_chunk - p % e->kv_chunk ? hi : p - p % e->kv_chunk + e->kv_chunk;
		e->cops->fa_one(&fa, n, qq, qb, q42_engine_k_row(e, l, kvh, p), e->k_row_bytes,
				q42_engine_v_row(e, l, kvh, p), e->v_row_bytes, end - p, m, s, acc, ab);
		p = end;
	}
	for (uint32_t i = 0; i < n; i++) {
		float *out = e->att + ((uint64_t)t * e->n_head + h0 + i) * e->hd_v;
		q42_llamacpp_fa_one_end(&fa, s[i], (const uint8_t *)acc + i * ab, out);
		op_v_rot(e, out, e->hd_v);
	}
}

/* Whether llama.cpp takes the tiled form for a pass of n_tok tokens: its
 * AVX-512 build does from a tile of queries on, where head_dim_v is a
 * whole number of 16-lane vectors. */
static bool fa_tiled(const q42_engine *e, uint32_t n_tok)
{
	const uint32_t tile = q42_engine_flash_tile(e);
	return tile != 0 && n_tok >= tile;
}

/* Tokens t0..t1-1 (at most a tile) of head h in the tiled form, over the
 * tiles of cache positions any of them sees. */
static void fa_tile_rows(q42_engine *e, uint32_t l, uint32_t h, uint32_t t0, uint32_t t1, float *ws)
{
	enum { T = Q42_FA_TILE };
	const q42_llamacpp_fa fa = fa_params(e);
	const uint32_t n = t1 - t0, kvh = h / (e->n_head / e->layers[l].n_head_kv);
	float *qt = ws, *acc = qt + (uint64_t)T * e->hd_k, *m = acc + (uint64_t)T * e->hd_v, *s = m + T;
	int32_t *lo = (int32_t *)(void *)(s + T), *hi = lo + T;
	float *work = (float *)(void *)(hi + T);
	uint32_t plo[T], phi[T], first = UINT32_MAX, last = 0;

	for (uint32_t r = 0; r < T; r++) {
		const float *q = e->q + ((uint64_t)(t0 + r) * e->n_head + h) * e->hd_k;
		for (uint32_t d = 0; d < e->hd_k; d++)
			qt[(uint64_t)d * T + r] = r < n ? q[d] : 0.0f;
		m[r] = -INFINITY;
		s[r] = 0.0f;
	}
	memset(acc, 0, (uint64_t)T * e->hd_v * sizeof(float));
	for (uint32_t r = 0; r < n; r++) {
		fa_span(e, l, e->n_past + t0 + r, &plo[r], &phi[r]);
		first = plo[r] < first ? plo[r] : first;
		last = phi[r] > last ? phi[r] : last;
	}
	for (uint32_t b = first / T * T; b < last; b += T) {
		for (uint32_t r = 0; r < n; r++) {
			lo[r] = (int32_t)(plo[r] > b ? (plo[r] - b < T ? plo[r] - b : T) : 0);
			hi[r] = (int32_t)(phi[r] > b ? (phi[r] - b < T ? phi[r] - b : T) : 0);
		}
		e->cops->fa_tile(&fa, n, qt, q42_engine_k_row(e, l, kvh, b), e->k_row_bytes,
				 q42_engine_v_row(e, l, kvh, b), e->v_row_bytes,
				 last - b < T ? last - b : T, lo, hi, m, s, acc, work);
	}
	for (uint32_t r = 0; r < n; r++)
		q42_llamacpp_fa_tile_end(&fa, r, s, acc, e->att + ((uint64_t)(t0 + r) * e->n_head + h) * e->hd_v);
}

/* A pass's attention in flash form: tiles of tokens per head, the
 * costliest (last) tiles handed out first; or in the one-at-a-time form
 * (token, kv head) pairs, the q heads of a kv head together, so that each
 * K and V row is read once for all of them. */
static void fa_job(struct att_args *a, uint32_t ith)
{
	q42_engine *e = a->e;
	const uint32_t n = a->n_tok - a->t0, H = e->n_head;
	uint32_t i;
	if (fa_tiled(e, a->n_tok)) {
		const uint32_t n_qt = (n + Q42_FA_TILE - 1) / Q42_FA_TILE;
		while (tile_claim(&a->next, n_qt * H, &i)) {
			const uint32_t qt = n_qt - 1 - i / H, t0 = a->t0 + qt * Q42_FA_TILE;
			const uint32_t t1 = t0 + Q42_FA_TILE < a->n_tok ? t0 + Q42_FA_TILE : a->n_tok;
			fa_tile_rows(e, a->l, i % H, t0, t1, e->ts[ith].fa);
		}
		return;
	}
	const uint32_t g = H / e->layers[a->l].n_head_kv;
	while (tile_claim(&a->next, n * (H / g), &i))
		fa_heads(e, a->l, a->t0 + i % n, i / n * g, (i / n + 1) * g, e->ts[ith].fa);
}

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* att_one's heads h0..h1-1 in flash form, a kv head's heads together:
 * those of kv heads kv0..kv1-1 (stored by this thread) first, then the
 * others once their owner has flagged them. */
static void att_one_fa(struct att_args *a, uint32_t ith, uint32_t h0, uint32_t h1, uint32_t kv0, uint32_t kv1)
{
	q42_engine *e = a->e;
	const uint32_t g = e->n_head / e->layers[a->l].n_head_kv;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t h = h0; h < h1;) {
			const uint32_t kv = h / g, hb = (kv + 1) * g < h1 ? (kv + 1) * g : h1;
			const bool own = kv >= kv0 && kv < kv1;
			if (own == (pass == 0)) {
				while (!own && atomic_load_explicit(&e->v_ready[kv], memory_order_acquire) != e->att_seq)
					spin_pause();
				for (uint32_t i = h; i < hb; i++)
					op_qk_rows(e, a->l, e->q + (uint64_t)i * e->hd_k, 1, true, e->ts[ith].rope);
				fa_heads(e, a->l, 0, h, hb, e->ts[ith].fa);
			}
			h = hb;
		}
}

/* Attention of a one-token pass. Each thread takes a fixed run of q
 * heads, the first threads one more where they do not divide evenly:
 * the caller starts first, the worker some time after the job is
 * published (docs/perf/scheduling.md). It owns the kv heads whose first q head is in its run: it
 * rotates their k rows and stores them and their new V column in the
 * cache, and flags each. Then it computes its heads, each after rotating
 * its q row: those of kv heads it owns first, then the others once their
 * owner's flag is up (every thread flags all it owns before it waits, so
 * none waits for a waiter). RoPE works head by head, so each row gets
 * the bits rope_store_row gives it, and each head is computed as in
 * att_pair whichever thread takes it. Why: a kv head's rows are read by
 * all its q heads, and when the product job stored the V column, from
 * whichever thread computed that tile, and the caller rotated and stored
 * every k row, and heads were claimed from a counter, most heads read
 * cache lines just written on the other core, far slower than reading
 * cached rows. Owner-stored V and owner-rotated k rows
 * decoded faster (docs/perf/scheduling.md). */
static void att_one(struct att_args *a, uint32_t ith, uint32_t nth)
{
	q42_engine *e = a->e;
	const uint32_t H = e->n_head, g = H / e->layers[a->l].n_head_kv, seq = e->att_seq;
	const uint32_t h0 = (ith * H + nth - 1) / nth, h1 = ((ith + 1) * H + nth - 1) / nth;
	const uint32_t kv0 = (h0 + g - 1) / g, kv1 = (h1 + g - 1) / g;
	float *cache = e->ts[ith].rope;
	if (h0 == h1)
		return;
	op_rope_cache(e, a->l, e->n_past, cache);
	for (uint32_t k = kv0; k < kv1; k++) {
		float *kr = e->k + (uint64_t)k * e->hd_k;
		op_qk_rows(e, a->l, kr, 1, false, cache);
		e->kv_quantize(kr, q42_engine_k_row(e, a->l, k, e->n_past), e->hd_k);
	}
	v_store_one(e, a->l, kv0, kv1);
	for (uint32_t k = kv0; k < kv1; k++)
		atomic_store_explicit(&e->v_ready[k], seq, memory_order_release);
	if (e->fa) {
		att_one_fa(a, ith, h0, h1, kv0, kv1);
		return;
	}
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t h = h0; h < h1; h++) {
			const bool own = h / g >= kv0 && h / g < kv1;
			if (own != (pass == 0))
				continue;
			while (!own &&
			       atomic_load_explicit(&e->v_ready[h / g], memory_order_acquire) != seq)
				spin_pause();
			op_qk_rows(e, a->l, e->q + (uint64_t)h * e->hd_k, 1, true, cache);
			att_pair(a, &e->ts[ith], 0, h);
		}
}

/* Pairs go head-major, so consecutive pairs read the same head's K and V
 * rows while they are still in cache; they are handed out in chunks of
 * consecutive tokens, which also balances the causal triangle. */
static void att_job(void *v, uint32_t ith, uint32_t nth)
{
	struct att_args *a = v;
	if (a->n_tok == 1) {
		att_one(a, ith, nth);
		return;
	}
	if (a->e->fa) {
		fa_job(a, ith);
		return;
	}
	const uint32_t n = a->n_tok - a->t0, n_pairs = n * a->e->n_head;
	const uint32_t n_chunks = (n_pairs + a->chunk - 1) / a->chunk;
	uint32_t c;
	(void)nth;
	if (att_blocks(a->e, a->n_tok)) {
		/* a head's blocks in token order, the heads one after another */
		const uint32_t nb = (n + Q42_ATT_BLOCK - 1) / Q42_ATT_BLOCK;
		while (tile_claim(&a->next, nb * a->e->n_head, &c)) {
			const uint32_t t = a->t0 + c % nb * Q42_ATT_BLOCK, end = t + Q42_ATT_BLOCK;
			att_block(a, &a->e->ts[ith], t, (end < a->n_tok ? end : a->n_tok) - t, c / nb);
		}
		return;
	}
	while (tile_claim(&a->next, n_chunks, &c)) {
		const uint32_t p1 = (c + 1) * a->chunk < n_pairs ? (c + 1) * a->chunk : n_pairs;
		for (uint32_t p = c * a->chunk; p < p1; p++)
			att_pair(a, &a->e->ts[ith], a->t0 + p % n, p / n);
	}
}

/* Attention of tokens t0..n_tok-1 of a pass of n_tok (the cache holds all
 * of them by now). */
static void op_attention(q42_engine *e, uint32_t l, uint32_t n_tok, uint32_t t0)
{
	struct att_args a = {e, l, n_tok, n_tok - t0 >= 64 ? 4 : 1, 0, t0};
	if (n_tok == 1 && ++e->att_seq == 0)
		e->att_seq = 1; /* 0 is what v_ready starts as */
	q42_pool_run(e->pool, att_job, &a);
}

/* ---- the pass ---------------------------------------------------------- */

/* An adapter on the token embedding (llm_graph_context::build_inp_embd):
 * each token's row of A (looked up, [rank, n_vocab]) through B
 * ([rank, n_embd]) as one product of the pass, scaled and added to the
 * embedding rows. */
static void op_lora_embd(q42_engine *e, q42_lora_w *lw, const int32_t *ids, uint32_t n)
{
	const uint64_t rank = (uint64_t)lw->a.n_in;
	for (uint32_t t = 0; t < n; t++) {
		lw->a.k->dequant(lw->a.data + (uint64_t)ids[t] * lw->a.row_bytes, lw->ax + t * rank,
				 (int64_t)rank);
		if (lw->b.aq != NULL)
			lw->b.aq(lw->ax + t * rank, lw->axq + t * lw->axq_stride, (int64_t)rank);
	}
	op_lora_up(lw, e->x, e->n_embd, n, 0, lw->b.n_out, e->ts[0].lora);
}

static const float *vec(const q42_weight *w)
{
	return (const float *)(const void *)w->data;
}

/* A post-norm block's LayerNorm (bert) of n rows of the residual stream
 * from x on, in place, when the block has that norm. */
static void op_layer_norm(q42_engine *e, const q42_weight *w, const q42_weight *b, float *x,
			  uint32_t n)
{
	if (w->data != NULL)
		q42_op_layernorm_rows(e->n_embd, n, x, x, vec(w), vec(b), e->eps);
}

/* A tied embedding whose output copy was repacked reads its rows from
 * that copy (the file's pages were dropped, q42_engine.c). BERT adds
 * token type 0 and the learned position to each row, in ggml's order,
 * then normalises. */
static void op_embed(q42_engine *e, const int32_t *ids, uint32_t n)
{
	const q42_weight *types = &e->g[Q42_W_TOKEN_TYPES], *pos = &e->g[Q42_W_POS_EMBD];
	const q42_weight *w = &e->g[Q42_W_TOK_EMBD], *o = &e->g[Q42_W_OUTPUT];
	for (uint32_t t = 0; t < n; t++) {
		const uint8_t *row = w->data + (uint64_t)ids[t] * w->row_bytes;
		if (e->embd_row != NULL) {
			o->packed_row(e->embd_row, o->data, o->n_in, o->n_out, ids[t]);
			row = e->embd_row;
		}
		w->k->dequant(row, e->x + (uint64_t)t * e->n_embd, e->n_embd);
	}
	for (q42_lora_w *lw = w->lora; lw != NULL; lw = lw->next)
		op_lora_embd(e, lw, ids, n);
	for (uint32_t t = 0; t < n; t++) {
		float *x = e->x + (uint64_t)t * e->n_embd;
		if (e->embd_scale != 0.0f)
			q42_op_scale(e->n_embd, x, x, e->embd_scale);
		if (types->data != NULL)
			q42_op_add(e->n_embd, x, x, vec(types));
		if (pos->data != NULL)
			q42_op_add(e->n_embd, x, vec(pos) + (uint64_t)(e->n_past + t) * e->n_embd, x);
	}
	if (e->arch->post_norm)
		op_layer_norm(e, &e->g[Q42_W_TOK_EMBD_NORM], &e->g[Q42_W_TOK_EMBD_NORM_B], e->x, n);
}

/* The rows of a fused attn_qkv product (qkv) into q, k and v, token by
 * token: q's n_head * hd_k values first, then k's, then v's. */
static void op_split_qkv(q42_engine *e, uint32_t l, uint32_t n)
{
	const uint64_t qd = (uint64_t)e->n_head * e->hd_k;
	const uint64_t kd = (uint64_t)e->layers[l].n_head_kv * e->hd_k;
	const uint64_t vd = (uint64_t)e->layers[l].n_head_kv * e->hd_v;
	for (uint32_t t = 0; t < n; t++) {
		const float *r = e->qkv + t * (qd + kd + vd);
		memcpy(e->q + t * qd, r, qd * sizeof(float));
		memcpy(e->k + t * kd, r + qd, kd * sizeof(float));
		memcpy(e->v + t * vd, r + qd + kd, vd * sizeof(float));
	}
}

/* Where the block has a norm after attention or after the FFN (gemma3):
 * the n rows of out through it, then added to the residual rows res.
 * Without one the products added out to res themselves. */
static void op_post_norm(q42_engine *e, const q42_weight *norm, float *out, float *res, uint32_t n)
{
	e->cops->rmsnorm_rows(e->n_embd, n, out, out, (const float *)(const void *)norm->data, e->eps);
	for (uint32_t t = 0; t < n; t++)
		e->add(e->n_embd, res + (uint64_t)t * e->n_embd, res + (uint64_t)t * e->n_embd,
		       out + (uint64_t)t * e->n_embd);
}

/* llama.cpp runs the last layer's output projection (attention's, and
 * lfm2's short convolution's) over every token of the pass and keeps the
 * wanted row after it (ggml_get_rows follows build_attn). Some types
 * round a product by the pass's size or a token's place in it (F32, BF16
 * and IQ4_NL by tinyBLAS from 2 tokens, Q2_K and Q4_K by whole groups of
 * four, IQ4_XS by the panel from 8), so one kept row of an n-token pass
 * runs as the last of pass_form(n) copies of itself: the same place in a
 * pass as the last of n tokens. */
static uint32_t pass_form(uint32_t n, uint32_t keep)
{
	return keep != 1 || n < 2 ? keep : n <= 11 ? n : 8 + n % 4;
}

/* After a product of `form` copies into y, its last row is the kept one:
 * moved to row 0, and added to res (the residual) when res. */
static void kept_row(q42_engine *e, uint32_t form, float *y, float *res)
{
	const uint64_t E = e->n_embd;
	memmove(y, y + (uint64_t)(form - 1) * E, E * sizeof *y);
	if (res != NULL)
		e->add((int64_t)E, res, res, y);
}

/* Jobs per block: q, k and v together; attention; the output projection
 * with the residual add; gate and up with SwiGLU; down with the residual
 * add. A pass of one token runs everything else on the caller; a longer
 * one splits norms, quantization and RoPE by token rows.
 *
 * keep: how many of the pass's last token rows the block must carry on
 * (n, except in the last layer). Past the K and V of every token -- the
 * cache needs them -- each row is independent of the others, so the last
 * layer runs attention, its output projection and the FFN for the row
 * whose logits are wanted only, or for none (a prompt chunk before the
 * last), as llama.cpp does with its output ids. The kept row's bits do not
 * change: attention still rounds as in a pass of n tokens, the output
 * projection too (pass_form), and the FFN runs on that row alone in
 * llama.cpp as well. */
static void block_attention(q42_engine *e, uint32_t l, uint32_t n, uint32_t keep)
{
	const q42_weight *W = e->layers[l].w;
	const q42_weight *qkv[3] = {&W[Q42_W_ATTN_Q], &W[Q42_W_ATTN_K], &W[Q42_W_ATTN_V]};
	const q42_weight *out = &W[Q42_W_ATTN_OUT], *post = &W[Q42_W_POST_ATTN_NORM];
	const bool fused = W[Q42_W_ATTN_QKV].data != NULL;
	struct mm_args m = {0};

	if (fused)
		qkv[0] = &W[Q42_W_ATTN_QKV];
	op_prepare(e, e->arch->post_norm ? NULL : &W[Q42_W_ATTN_NORM], e->x, e->xb, qkv,
		   fused ? 1 : 3, n);
	if (fused) {
		mm_add(&m, qkv[0], &W[Q42_W_ATTN_QKV_B], e->qkv, NULL);
	} else {
		mm_add(&m, qkv[0], &W[Q42_W_ATTN_Q_B], e->q, NULL);
		mm_add(&m, qkv[1], &W[Q42_W_ATTN_K_B], e->k, NULL);
		mm_add(&m, qkv[2], &W[Q42_W_ATTN_V_B], e->v, NULL);
	}
	m.n_tok = n;
	mm_run(e, &m);
	if (fused)
		op_split_qkv(e, l, n);
	const uint64_t t0 = phase_start(e);
	if (keep == 0) {
		op_rope_store(e, l, n);
		if (n == 1) /* no attention job to store the V column */
			v_store_one(e, l, 0, e->layers[l].n_head_kv);
		phase_end(e, Q42_PHASE_ATTENTION, t0);
		return;
	}
	if (n > 1) /* a one-token pass does this in att_one */
		op_rope_store(e, l, n);
	op_attention(e, l, n, n - keep);
	phase_end(e, Q42_PHASE_ATTENTION, t0);
	const uint32_t form = pass_form(n, keep);
	const uint64_t row = (uint64_t)e->n_head * e->hd_v;
	float *src = e->att + (uint64_t)(n - form) * row;
	for (uint32_t t = 0; t + keep < form; t++) /* copies before the kept row */
		memcpy(src + t * row, e->att + (uint64_t)(n - 1) * row, row * sizeof *src);
	op_prepare(e, NULL, src, NULL, &out, 1, form);
	memset(&m, 0, sizeof m);
	float *res = e->x + (uint64_t)(n - keep) * e->n_embd;
	mm_add(&m, out, &W[Q42_W_ATTN_OUT_B], e->ao, post->data != NULL || form != keep ? NULL : res);
	m.n_tok = form;
	mm_run(e, &m);
	if (form != keep)
		kept_row(e, form, e->ao, post->data != NULL ? NULL : res);
	if (post->data != NULL)
		op_post_norm(e, post, e->ao, res, keep);
	op_layer_norm(e, &W[Q42_W_ATTN_OUT_NORM], &W[Q42_W_ATTN_OUT_NORM_B], res, keep);
}

/* The short-convolution block of lfm2 (src/models/lfm2.cpp), in place of
 * attention: in_proj gives B, C and x per token; B * x of every token
 * goes into the layer's history (conv_hist, the state beside K and V);
 * for each kept token and channel, the convolution of the L history
 * values up to its position (zeros before position 0; a bidirectional
 * model's window is centred, zeros past the pass too) with the channel's
 * kernel (ggml's ssm_conv, kernels/q42_ops.h), times C, then out_proj
 * with the residual add. */
static void block_conv(q42_engine *e, uint32_t l, uint32_t n, uint32_t keep)
{
	static const q42_weight none;
	const q42_weight *W = e->layers[l].w;
	const q42_weight *in = &W[Q42_W_CONV_IN], *out = &W[Q42_W_CONV_OUT];
	const float *kern = (const float *)(const void *)W[Q42_W_CONV].data;
	const uint64_t E = e->n_embd, L = e->conv_l, A = e->conv_ahead, end = e->n_past + n;
	float *hist = e->conv_hist + (uint64_t)e->layers[l].conv_idx * e->n_ctx * E;
	struct mm_args m = {0};
	float win[Q42_CONV_L_MAX];

	op_prepare(e, &W[Q42_W_ATTN_NORM], e->x, e->xb, &in, 1, n);
	mm_add(&m, in, &none, e->qkv, NULL);
	m.n_tok = n;
	mm_run(e, &m);
	for (uint32_t t = 0; t < n; t++) {
		const float *bcx = e->qkv + t * 3 * E;
		q42_op_mul((int64_t)E, hist + (e->n_past + t) * E, bcx, bcx + 2 * E);
	}
	if (keep == 0)
		return;
	for (uint32_t j = 0; j < keep; j++) {
		const uint64_t pos = e->n_past + n - keep + j;
		const float *c = e->qkv + (n - keep + j) * 3 * E + E;
		float *y = e->xb + j * E;
		for (uint64_t d = 0; d < E; d++) {
			for (uint64_t i = 0; i < L; i++) {
				const uint64_t at = pos + i + 1 + A; /* position + L */
				win[i] = at >= L && at - L < end ? hist[(at - L) * E + d] : 0.0f;
			}
			y[d] = c[d] * e->conv_dot((int64_t)L, win, kern + d * L);
		}
	}
	const uint32_t form = pass_form(n, keep);
	for (uint32_t t = keep; t < form; t++) /* copies after the kept row */
		memcpy(e->xb + t * E, e->xb, E * sizeof *e->xb);
	op_prepare(e, NULL, e->xb, NULL, &out, 1, form);
	memset(&m, 0, sizeof m);
	float *res = e->x + (uint64_t)(n - keep) * E;
	mm_add(&m, out, &none, e->ao, form != keep ? NULL : res);
	m.n_tok = form;
	mm_run(e, &m);
	if (form != keep)
		kept_row(e, form, e->ao, res);
}

/* The FFN of the n token rows from x on (rows of e->x). */
static void block_ffn(q42_engine *e, uint32_t l, float *x, uint32_t n)
{
	const q42_weight *W = e->layers[l].w;
	const q42_weight *gu[2] = {&W[Q42_W_FFN_GATE], &W[Q42_W_FFN_UP]};
	const q42_weight *down = &W[Q42_W_FFN_DOWN], *post = &W[Q42_W_POST_FFW_NORM];
	const bool fused = e->arch->ffn_fused_up;
	struct mm_args m = {0};

	if (n == 0)
		return;
	if (fused || e->arch->ffn_act == Q42_FFN_GELU)
		gu[0] = gu[1];
	op_prepare(e, e->arch->post_norm ? NULL : &W[Q42_W_FFN_NORM], x, e->xb, gu,
		   fused || e->arch->ffn_act == Q42_FFN_GELU ? 1 : 2, n);
	if (e->arch->ffn_act == Q42_FFN_GELU) {
		/* up (+ bias), then GELU: GeGLU with a gate of ones, which
		 * multiplies exactly */
		const uint64_t ff = e->layers[l].n_ff;
		mm_add(&m, gu[0], &W[Q42_W_FFN_UP_B], e->hg, NULL);
		m.n_tok = n;
		mm_run(e, &m);
		for (uint32_t t = 0; t < n; t++)
			e->glu((int64_t)ff, e->hg + t * ff, e->hg + t * ff, e->ones);
	} else if (fused) {
		/* one product into rows of 2 n_ff (gate, then up), then the
		 * gate a whole row per call, as ggml_swiglu takes the halves
		 * of one tensor */
		const uint64_t ff = e->layers[l].n_ff;
		mm_add(&m, gu[0], &W[Q42_W_FFN_UP_B], e->hu, NULL);
		m.n_tok = n;
		mm_run(e, &m);
		for (uint32_t t = 0; t < n; t++)
			e->glu((int64_t)ff, e->hg + t * ff, e->hu + 2 * t * ff, e->hu + 2 * t * ff + ff);
	} else {
		mm_add(&m, gu[0], &W[Q42_W_FFN_GATE_B], e->hg, NULL);
		mm_add(&m, gu[1], &W[Q42_W_FFN_UP_B], e->hu, NULL);
		m.n_tok = n;
		m.glu = e->glu;
		mm_run(e, &m);
	}
	op_prepare(e, NULL, e->hg, NULL, &down, 1, n);
	memset(&m, 0, sizeof m);
	mm_add(&m, down, &W[Q42_W_FFN_DOWN_B], e->ao, post->data != NULL ? NULL : x);
	m.n_tok = n;
	mm_run(e, &m);
	if (post->data != NULL)
		op_post_norm(e, post, e->ao, x, n);
	op_layer_norm(e, &W[Q42_W_LAYER_OUT_NORM], &W[Q42_W_LAYER_OUT_NORM_B], x, n);
}

/* The routed FFN of lfm2moe (llm_graph_context::build_moe_ffn): the
 * router's product on the normed rows, each token's experts and weights
 * (q42_op_route_sigmoid), then every (token, chosen expert) pair on its
 * own -- gate and up from that expert's rows only, SwiGLU, down, times
 * its weight -- and per token the pairs' outputs summed in the order
 * chosen, then added to the residual, as llama.cpp's views and adds do.
 * The experts' products are ggml's mul_mat_id: one token per product in
 * every pass, so an element rounds as in a one-token pass whatever the
 * batch (the products' one-token form). A pair is one claim of the job,
 * computed the same by any thread. */
struct moe_args {
	q42_engine *e;
	const q42_weight *W;
	uint32_t n_pairs;
	atomic_uint next;
};

/* The one-token product y = w's expert-th matrix . x. */
static void moe_product(const q42_weight *w, uint32_t expert, const uint8_t *x, float *y)
{
	q42_weight we = *w;
	const q42_act a = {.rows = x};
	we.data += (uint64_t)expert * w->expert_bytes;
	mm_rows(&we, &a, y, 1, 0, we.n_out);
}

static void moe_pair(q42_engine *e, const q42_weight *W, uint32_t p, q42_tscratch *ts)
{
	const q42_weight *g = &W[Q42_W_FFN_GATE_EXPS], *u = &W[Q42_W_FFN_UP_EXPS];
	const q42_weight *d = &W[Q42_W_FFN_DOWN_EXPS];
	const uint32_t t = p / e->n_expert_used, x = (uint32_t)e->moe_id[p];
	const q42_act *ag = &e->act[g->act], *au = &e->act[u->act];
	float *y = e->moe_y + (uint64_t)p * e->n_embd;
	const uint8_t *h = (const uint8_t *)ts->moe_g;

	moe_product(g, x, ag->rows + t * ag->stride, ts->moe_g);
	moe_product(u, x, au->rows + t * au->stride, ts->moe_u);
	e->glu((int64_t)e->n_ff_exp, ts->moe_g, ts->moe_g, ts->moe_u);
	if (d->aq != NULL) {
		d->aq(ts->moe_g, ts->moe_q, (int64_t)e->n_ff_exp);
		h = ts->moe_q;
	}
	moe_product(d, x, h, y);
	q42_op_scale(e->n_embd, y, y, e->moe_w[p]);
}

static void moe_job(void *v, uint32_t ith, uint32_t nth)
{
	struct moe_args *a = v;
	uint32_t p;
	(void)nth;
	while (tile_claim(&a->next, a->n_pairs, &p))
		moe_pair(a->e, a->W, p, &a->e->ts[ith]);
}

/* The n token rows from x on (rows of e->x) through the routed FFN. */
static void block_moe(q42_engine *e, uint32_t l, float *x, uint32_t n)
{
	static const q42_weight none;
	const q42_weight *W = e->layers[l].w;
	const q42_weight *in[3] = {&W[Q42_W_FFN_GATE_INP], &W[Q42_W_FFN_GATE_EXPS],
				   &W[Q42_W_FFN_UP_EXPS]};
	const float *bias = (const float *)(const void *)W[Q42_W_FFN_EXP_PROBS_B].data;
	const uint64_t E = e->n_embd, K = e->n_expert_used;
	struct mm_args m = {0};
	struct moe_args a = {e, W, n * e->n_expert_used, 0};

	if (n == 0)
		return;
	op_prepare(e, &W[Q42_W_FFN_NORM], x, e->xb, in, 3, n);
	if (n == 1) {
		/* a token's router is a few rows: on the caller, without a
		 * job's hand-over (the same products as a job's tiles) */
		mm_rows(in[0], &e->act[in[0]->act], e->moe_logits, 1, 0, in[0]->n_out);
	} else {
		mm_add(&m, in[0], &none, e->moe_logits, NULL);
		m.n_tok = n;
		mm_run(e, &m);
	}
	for (uint32_t t = 0; t < n; t++)
		q42_op_route_sigmoid(e->n_expert, e->n_expert_used, e->moe_logits + (uint64_t)t * e->n_expert,
				     bias, e->moe_id + t * K, e->moe_w + t * K);
	atomic_init(&a.next, 0);
	const uint64_t t0 = phase_start(e);
	q42_pool_run(e->pool, moe_job, &a);
	phase_end(e, Q42_PHASE_PRODUCTS, t0);
	for (uint32_t t = 0; t < n; t++) {
		float *out = e->moe_y + t * K * E;
		for (uint64_t k = 1; k < K; k++)
			e->add((int64_t)E, out, out, out + k * E);
		e->add((int64_t)E, x + t * E, x + t * E, out);
	}
}

/* The id q42_argmax picks: the first element when it is NaN (nothing
 * compares greater), else the largest non-NaN value, lowest id on ties --
 * taken over the tiles in order. */
static int32_t top1_reduce(const q42_engine *e, uint32_t n)
{
	int32_t best = 0;
	if (isnan(e->logits[0]))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (e->top1[i].id >= 0 && e->top1[i].v > e->logits[best])
			best = e->top1[i].id;
	return best;
}

/* Every block over n tokens; the last one keeps the last last_keep rows. */
static void forward_blocks(q42_engine *e, const int32_t *ids, uint32_t n, uint32_t last_keep)
{
	op_embed(e, ids, n);
	for (uint32_t l = 0; l < e->n_layer; l++) {
		const uint32_t keep = l + 1 < e->n_layer ? n : last_keep;
		if (e->layers[l].conv)
			block_conv(e, l, n, keep);
		else
			block_attention(e, l, n, keep);
		if (e->layers[l].moe)
			block_moe(e, l, e->x + (uint64_t)(n - keep) * e->n_embd, keep);
		else
			block_ffn(e, l, e->x + (uint64_t)(n - keep) * e->n_embd, keep);
	}
	e->n_past += n;
}

void q42_forward_hidden(q42_engine *e, const int32_t *ids, uint32_t n)
{
	forward_blocks(e, ids, n, n);
	if (e->final_norm == NULL) /* bert: the last block's rows as they are */
		memcpy(e->xb, e->x, (uint64_t)n * e->n_embd * sizeof(float));
	else
		e->cops->rmsnorm_rows(e->n_embd, n, e->xb, e->x, vec(e->final_norm), e->eps);
}

void q42_forward_linear(q42_engine *e, const q42_weight *w, const q42_weight *bias,
			const float *in, float *out, uint32_t n)
{
	static const q42_weight none;
	struct mm_args m = {0};
	op_prepare(e, NULL, in, NULL, &w, 1, n);
	mm_add(&m, w, bias != NULL ? bias : &none, out, NULL);
	m.n_tok = n;
	mm_run(e, &m);
}

void q42_forward(q42_engine *e, const int32_t *ids, uint32_t n, bool want_logits, int32_t *top1)
{
	static const q42_weight none;
	const q42_weight *out = &e->g[Q42_W_OUTPUT];
	struct mm_args m = {0};

	forward_blocks(e, ids, n, want_logits ? 1 : 0);
	if (!want_logits)
		return;
	op_prepare(e, e->final_norm, e->x + (uint64_t)(n - 1) * e->n_embd, e->xb, &out, 1, 1);
	mm_add(&m, out, &none, e->logits, NULL);
	m.n_tok = 1;
	m.top1 = top1 != NULL && e->final_softcap == 0.0f ? e->top1 : NULL;
	mm_run(e, &m);
	if (e->final_softcap != 0.0f) {
		/* capping can round neighbours to one value: the id is taken
		 * from the capped logits */
		q42_op_softcap(e->n_vocab, e->logits, e->logits, e->final_softcap);
		if (top1 != NULL)
			*top1 = q42_argmax(e->logits, e->n_vocab);
		return;
	}
	if (top1 != NULL)
		*top1 = top1_reduce(e, m.n_tiles);
}
