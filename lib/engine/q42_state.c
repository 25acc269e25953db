/* q42_state.c -- the cache state of the first positions, copied out of
 * the engine and back: what prefix reuse (run/q42_prefix.h) keeps and
 * what q42-state(5) files hold.
 *
 * The copy has a layout of its own, independent of the cache's chunks and
 * blocks (which depend on --ctx): per layer in order, a short-convolution
 * layer's history rows ([pos][n_embd] f32), an attention layer's K rows
 * ([kv head][pos], a cache row each) then its V elements ([kv head][dim]
 * [pos], the cache type; a Q8_0 cache's V as rows, as K: its blocks hold
 * a row's 32 values together). Only positions below the count are read or
 * written, so the bytes depend on nothing a previous request left past
 * them. CPU backend only: a device backend owns its cache.
 */
#include <string.h>
#include "common/q42_ckd.h"
#include "engine/q42_engine_impl.h"

/* Bytes one position takes in layer l of a copy. */
static uint64_t layer_pos_bytes(const q42_engine *e, uint32_t l)
{
	const q42_layer *L = &e->layers[l];
	if (L->conv)
		return (uint64_t)e->n_embd * sizeof(float);
	return (uint64_t)L->n_head_kv * (e->k_row_bytes + e->v_row_bytes);
}

static int cpu_only(const q42_engine *e, q42_err *err)
{
	if (e->be_state != NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "cache state: only the CPU backend's cache can be copied (backend %s)",
				   q42_backend_name(q42_engine_backend(e)));
	return Q42_OK;
}

uint64_t q42_engine_state_pos_bytes(const q42_engine *e)
{
	uint64_t b = 0;
	for (uint32_t l = 0; l < e->n_layer; l++)
		b += layer_pos_bytes(e, l);
	return b;
}

int q42_engine_state_bytes(const q42_engine *e, uint32_t n, uint64_t *bytes, q42_err *err)
{
	int rc = cpu_only(e, err);
	if (rc != Q42_OK)
		return rc;
	if (n > e->n_ctx)
		return q42_err_set(err, Q42_EARG, "cache state: %u positions exceed the context of %u",
				   n, e->n_ctx);
	if (q42_mul_overflow(n, q42_engine_state_pos_bytes(e), bytes))
		return q42_err_set(err, Q42_EARG, "cache state: size overflows");
	return Q42_OK;
}

/* The rows of positions 0..n-1 of kv head h of layer l between the cache
 * (K, or V in rows) and seg, rows of rb bytes, chunk by chunk. */
static void rows(q42_engine *e, uint8_t *seg, bool v, uint32_t l, uint32_t h, uint32_t n, bool put)
{
	const uint64_t rb = v ? e->v_row_bytes : e->k_row_bytes;
	for (uint32_t p = 0; p < n;) {
		const uint32_t left = e->kv_chunk - p % e->kv_chunk;
		const uint32_t run = left < n - p ? left : n - p;
		uint8_t *c = v ? q42_engine_v_row(e, l, h, p) : q42_engine_k_row(e, l, h, p);
		if (put)
			memcpy(c, seg + p * rb, run * rb);
		else
			memcpy(seg + p * rb, c, run * rb);
		p += run;
	}
}

/* Copy the first n positions between the cache and a copy of n_stored
 * positions at buf (to the cache when put). */
static void walk(q42_engine *e, uint8_t *buf, uint32_t n_stored, uint32_t n, bool put)
{
	const uint64_t kb = e->k_row_bytes, vb = e->v_elem_bytes;
	uint8_t *seg = buf;
	for (uint32_t l = 0; l < e->n_layer; l++) {
		const q42_layer *L = &e->layers[l];
		if (L->conv) {
			const uint64_t row = (uint64_t)e->n_embd * sizeof(float);
			uint8_t *h = (uint8_t *)(e->conv_hist + (uint64_t)L->conv_idx * e->n_ctx * e->n_embd);
			if (put)
				memcpy(h, seg, n * row);
			else
				memcpy(seg, h, n * row);
			seg += n_stored * row;
			continue;
		}
		for (uint32_t h = 0; h < L->n_head_kv; h++, seg += n_stored * kb)
			rows(e, seg, false, l, h, n, put);
		if (e->kv_type == Q42_DTYPE_Q8_0) {
			for (uint32_t h = 0; h < L->n_head_kv; h++, seg += n_stored * e->v_row_bytes)
				rows(e, seg, true, l, h, n, put);
			continue;
		}
		if (e->fa) { /* F16 V in rows: transposed into the same layout */
			for (uint32_t h = 0; h < L->n_head_kv; h++, seg += (uint64_t)e->hd_v * n_stored * 2)
				for (uint32_t p = 0; p < n; p++) {
					uint8_t *c = q42_engine_v_row(e, l, h, p), *o = seg + 2 * (uint64_t)p;
					/* a constant size: each copy one 16-bit move */
					for (uint32_t d = 0; d < e->hd_v; d++)
						if (put)
							memcpy(c + 2 * d, o + 2 * (uint64_t)d * n_stored, 2);
						else
							memcpy(o + 2 * (uint64_t)d * n_stored, c + 2 * d, 2);
				}
			continue;
		}
		for (uint32_t h = 0; h < L->n_head_kv; h++)
			for (uint32_t d = 0; d < e->hd_v; d++, seg += n_stored * vb)
				for (uint32_t p = 0; p < n; p += Q42_V_BLOCK) {
					const uint32_t run = n - p < Q42_V_BLOCK ? n - p : Q42_V_BLOCK;
					uint8_t *c = q42_engine_v_at(e, l, h, d, p);
					if (put)
						memcpy(c, seg + p * vb, run * vb);
					else
						memcpy(seg + p * vb, c, run * vb);
				}
	}
}

int q42_engine_state_get(const q42_engine *e, uint32_t n, uint8_t *dst, q42_err *err)
{
	int rc = cpu_only(e, err);
	if (rc != Q42_OK)
		return rc;
	if (n > e->n_past)
		return q42_err_set(err, Q42_EARG, "cache state: position %u is past the cache (%u)", n,
				   e->n_past);
	walk((q42_engine *)e, dst, n, n, false);
	return Q42_OK;
}

int q42_engine_state_put(q42_engine *e, const uint8_t *src, uint32_t n_stored, uint32_t n,
			 q42_err *err)
{
	int rc = cpu_only(e, err);
	if (rc != Q42_OK)
		return rc;
	if (n > n_stored || n_stored > e->n_ctx)
		return q42_err_set(err, Q42_EARG,
				   "cache state: %u of %u positions do not fit a context of %u", n, n_stored,
				   e->n_ctx);
	walk(e, (uint8_t *)(uintptr_t)src, n_stored, n, true);
	e->n_past = n;
	return Q42_OK;
}
