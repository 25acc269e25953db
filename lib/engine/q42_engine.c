/* q42_engine.c -- opening an engine: check the hyperparameters, bind every
 * tensor of the mount to a slot of its architecture, choose kernels and
 * allocate the cache and all scratch memory.
 *
 * Everything that could go wrong with a model is found here, before the
 * first token: a missing, unexpected or misshapen tensor, a type without
 * kernels, inconsistent head counts. The forward pass then trusts these
 * checks and never validates again. Sizes go through q42_ckd.h.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <malloc.h>
#include "common/q42_ckd.h"
#include "engine/q42_engine_impl.h"
#include "engine/q42_sample.h"
#include "common/q42_types.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_ops.h"

#define Q42_MAX_EMBD (1u << 16)
#define Q42_MAX_FF (1u << 20)
#define Q42_MAX_HEADS 1024u
#define Q42_MAX_HEAD_DIM 1024u
#define Q42_MAX_VOCAB (1u << 24)
#define Q42_MAX_EXPERTS 512u
/* llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID */
#define Q42_GATING_SIGMOID 2u

static void *zalloc(uint64_t n, uint64_t size, bool *failed)
{
	uint64_t t;
	void *p;
	if (*failed || q42_mul_overflow(n, size, &t) || t > SIZE_MAX) {
		*failed = true;
		return NULL;
	}
	p = calloc(1, t ? (size_t)t : 1);
	if (p == NULL)
		*failed = true;
	return p;
}

/* The engine's big allocations, the repacked matrices and the K and V
 * caches, ask for 2 MiB pages (transparent huge pages, where the kernel
 * grants them; the whole 2 MiB spans inside p..p+bytes), or, when the
 * caller asked for small pages, refuse them even where the kernel would
 * hand them out unasked. The price is that those pages are committed
 * whole.
 * - The V cache is transposed; a decode step writes, and attention
 *   reads, a few bytes from each dimension's row of every layer and kv
 *   head. When the rows were n_ctx positions long (before the blocks of
 *   q42_forward.c) that was one 4 KiB page per row at the default
 *   context, far more pages per token than the TLB holds. In blocks it
 *   is still one or two 4 KiB pages per layer and kv head, and attention
 *   is faster on huge pages. The chunks of q42_forward.c keep the
 *   positions not yet reached off the committed pages.
 * - K rows: a decode step stores one per layer and kv head, each on its
 *   own 4 KiB page; on 2 MiB pages, in chunks, attention is faster for a
 *   few MiB more resident.
 * - The matrices are streamed once per token: huge pages decode faster
 *   (up to a fifth) and load faster. Under a
 *   balloon driver that hands free 2 MiB blocks back to the host,
 *   faulting huge pages in is several times slower: small_pages is the
 *   way out there. The measurements: docs/perf/huge-pages.md.
 * - The adapters' factors (q42_engine_lora_pack) are streamed once per
 *   token as well (docs/perf/lora.md). */
static void advise_huge(const q42_engine *e, void *p, uint64_t bytes)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	const uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	const uintptr_t hi = ((uintptr_t)p + (uintptr_t)bytes) & ~(huge - 1);
	if (p != NULL && hi > lo)
		(void)madvise((void *)lo, (size_t)(hi - lo),
			      e->small_pages ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
#else
	(void)e;
	(void)p;
	(void)bytes;
#endif
}

/* One arena on 2 MiB boundaries, so that all of it can be huge pages
 * (advise_huge says when and why); NULL when out of memory. */
void *q42_engine_huge_alloc(const q42_engine *e, uint64_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, (size_t)2 << 20, (size_t)bytes) != 0)
		return NULL;
	advise_huge(e, p, bytes);
	return p;
}

/* The routed FFN's hyperparameters (llama_model_lfm2moe::load_arch_hparams):
 * each one named when it is out of range; the layers from the leading
 * dense count on are routed. */
static int check_moe(q42_engine *e, const q42_hparams *hp, q42_err *err)
{
	const char *a = hp->arch;
	if (hp->n_expert == 0 || hp->n_expert > Q42_MAX_EXPERTS)
		return q42_err_set(err, Q42_EFORMAT, "metadata: %s.expert_count %u outside 1..%u", a,
				   hp->n_expert, Q42_MAX_EXPERTS);
	if (hp->n_expert_used == 0 || hp->n_expert_used > hp->n_expert)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.expert_used_count %u outside 1..%u (expert_count)", a,
				   hp->n_expert_used, hp->n_expert);
	if (hp->n_ff_exp == 0 || hp->n_ff_exp > Q42_MAX_FF)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.expert_feed_forward_length %u outside 1..%u", a,
				   hp->n_ff_exp, Q42_MAX_FF);
	if (hp->n_dense_lead > e->n_layer)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.leading_dense_block_count %u exceeds block_count %u", a,
				   hp->n_dense_lead, e->n_layer);
	if (hp->expert_gating != Q42_GATING_SIGMOID)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "metadata: %s.expert_gating_func %u: only %u (sigmoid) is supported", a,
				   hp->expert_gating, Q42_GATING_SIGMOID);
	e->n_expert = hp->n_expert;
	e->n_expert_used = hp->n_expert_used;
	e->n_ff_exp = hp->n_ff_exp;
	for (uint32_t l = hp->n_dense_lead; l < e->n_layer; l++)
		e->layers[l].moe = true;
	return Q42_OK;
}

static int check_dims(q42_engine *e, const q42_hparams *hp, const q42_engine_opts *o,
		      q42_err *err)
{
	const char *a = hp->arch;
	e->n_embd = hp->n_embd;
	e->n_layer = hp->n_layer;
	e->n_head = hp->n_head;
	if (e->n_embd == 0 || e->n_embd > Q42_MAX_EMBD)
		return q42_err_set(err, Q42_EFORMAT, "metadata: %s.embedding_length %u outside 1..%u",
				   a, e->n_embd, Q42_MAX_EMBD);
	if (e->n_layer == 0 || e->n_layer > Q42_MAX_LAYERS)
		return q42_err_set(err, Q42_EFORMAT, "metadata: %s.block_count %u outside 1..%u", a,
				   e->n_layer, Q42_MAX_LAYERS);
	if (e->n_head == 0 || e->n_head > Q42_MAX_HEADS)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.attention.head_count %u outside 1..%u", a, e->n_head,
				   Q42_MAX_HEADS);
	if (hp->n_expert > 0 && !e->arch->moe)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "metadata: %s.expert_count is %u: mixture-of-experts models of this "
				   "architecture are not supported", a, hp->n_expert);
	if (e->arch->moe) {
		int rc = check_moe(e, hp, err);
		if (rc != Q42_OK)
			return rc;
	}
	if (hp->head_dim_k == 0 && e->n_embd % e->n_head != 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: embedding_length %u is not a multiple of head_count %u",
				   e->n_embd, e->n_head);
	e->hd_k = hp->head_dim_k ? hp->head_dim_k : e->n_embd / e->n_head;
	e->hd_v = hp->head_dim_v ? hp->head_dim_v : e->n_embd / e->n_head;
	e->n_rot = hp->n_rot ? hp->n_rot : e->hd_k;
	if (e->hd_k == 0 || e->hd_k > Q42_MAX_HEAD_DIM || e->hd_v == 0 ||
	    e->hd_v > Q42_MAX_HEAD_DIM)
		return q42_err_set(err, Q42_EFORMAT, "metadata: head dimensions %u/%u outside 1..%u",
				   e->hd_k, e->hd_v, Q42_MAX_HEAD_DIM);
	if (e->n_rot > e->hd_k || e->n_rot % 2 != 0 || e->n_rot == 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.rope.dimension_count %u: expected an even number in 2..%u",
				   a, e->n_rot, e->hd_k);
	for (uint32_t l = 0; l < e->n_layer; l++) {
		uint32_t kv = hp->n_head_kv[l] ? hp->n_head_kv[l] : e->n_head;
		if (e->arch->conv_layers && hp->n_head_kv[l] == 0) {
			/* lfm2: no attention heads, a short convolution */
			if (hp->conv_l_cache < 2 || hp->conv_l_cache > Q42_CONV_L_MAX)
				return q42_err_set(err, Q42_EFORMAT,
						   "metadata: %s.shortconv.l_cache %u outside 2..%u (layer %u is a convolution)",
						   a, hp->conv_l_cache, Q42_CONV_L_MAX, l);
			e->conv_l = hp->conv_l_cache;
			e->layers[l].conv = true;
			e->layers[l].conv_idx = e->n_conv++;
			kv = e->n_head;
		}
		if (e->n_head % kv != 0)
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: layer %u: head_count %u is not a multiple of head_count_kv %u",
					   l, e->n_head, kv);
		if (hp->n_ff[l] == 0 || hp->n_ff[l] > Q42_MAX_FF)
			return q42_err_set(err, Q42_EFORMAT,
					   "metadata: layer %u: feed_forward_length %u outside 1..%u", l,
					   hp->n_ff[l], Q42_MAX_FF);
		if (e->layers[l].conv)
			kv = 0;
		e->layers[l].n_head_kv = kv;
		e->layers[l].n_ff = hp->n_ff[l];
		if (kv > e->n_head_kv_max)
			e->n_head_kv_max = kv;
		if (hp->n_ff[l] > e->n_ff_max)
			e->n_ff_max = hp->n_ff[l];
	}
	e->eps = e->arch->layer_norm ? hp->norm_eps : hp->norm_rms_eps;
	if (!(e->eps > 0.0f))
		return q42_err_set(err, Q42_EFORMAT, "metadata: %s.attention.%s is missing", a,
				   e->arch->layer_norm ? "layer_norm_epsilon" : "layer_norm_rms_epsilon");
	e->n_pos = hp->n_ctx_train;
	e->rope_base = hp->rope_freq_base > 0.0f ? hp->rope_freq_base : e->arch->rope_base_default;
	e->rope_scale = hp->rope_freq_scale > 0.0f ? hp->rope_freq_scale : 1.0f;
	e->theta_scale = powf(e->rope_base, -2.0f / (float)e->n_rot);
	e->rope_mscale = hp->rope_attn_factor > 0.0f ? hp->rope_attn_factor : 1.0f;
	e->kq_scale = 1.0f / sqrtf((float)e->hd_k);
	if (e->arch->need[Q42_W_ATTN_QKV] != Q42_NEED_NO && e->hd_k != e->hd_v)
		/* llama.cpp splits q, k and v by one head size (build_qkv) */
		return q42_err_set(err, Q42_EFORMAT,
				   "metadata: %s.attention.key_length %u and value_length %u differ",
				   a, e->hd_k, e->hd_v);
	if (e->arch->q_prescale) {
		/* gemma3's 27B (62 layers) scales by n_embd / n_head instead
		 * of the head size (src/models/gemma3.cpp) */
		const bool by_embd = e->arch->swa_pattern && e->n_layer == 62;
		e->q_scale = 1.0f / sqrtf((float)(by_embd ? e->n_embd / e->n_head : e->hd_k));
		e->kq_scale = 1.0f;
	}
	e->embd_scale = e->arch->embd_scale ? sqrtf((float)e->n_embd) : 0.0f;
	e->causal = !e->arch->bidirectional && hp->non_causal == 0;
	e->swa_symmetric = e->arch->swa_symmetric;
	if (!e->causal && e->n_conv > 0) {
		/* llama.cpp pads (L-1)/2 zeros on each side, which centres
		 * the window only for an odd width */
		if (e->conv_l % 2 == 0)
			return q42_err_set(err, Q42_EUNSUPPORTED,
					   "metadata: %s.shortconv.l_cache %u: a bidirectional model needs an odd width",
					   a, e->conv_l);
		e->conv_ahead = (e->conv_l - 1) / 2;
	}
	e->pooling = hp->pooling ? hp->pooling - 1 : e->arch->pooling_default;
	e->n_dense_2 = hp->n_dense_2;
	if (e->n_dense_2 > Q42_MAX_FF)
		return q42_err_set(err, Q42_EFORMAT, "metadata: %s: dense_2 rows %u outside 0..%u", a,
				   e->n_dense_2, Q42_MAX_FF);
	e->embd_width = e->n_dense_2 > e->n_embd ? e->n_dense_2 : e->n_embd;
	if (e->arch->embd_scale)
		e->final_softcap = hp->final_softcap > 0.0f ? hp->final_softcap : 0.0f;
	for (uint32_t l = 0; l < e->n_layer; l++) {
		q42_layer *L = &e->layers[l];
		L->rope_scale = e->rope_scale;
		L->theta_scale = e->theta_scale;
		if (e->arch->conv_layers && !L->conv)
			L->n_swa = hp->sliding_window; /* every attention layer (lfm2) */
		if (!e->arch->swa_pattern || hp->sliding_window == 0)
			continue;
		/* every period-th layer global, the others sliding-window with
		 * their own base and no scaling (llama_hparams::set_swa_pattern,
		 * get_rope_freq_base); period 6 when the key is absent */
		const uint32_t period = hp->swa_pattern ? hp->swa_pattern : 6;
		if (l % period < period - 1) {
			const float base = hp->rope_freq_base_swa > 0.0f ? hp->rope_freq_base_swa : 10000.0f;
			L->n_swa = hp->sliding_window;
			L->rope_scale = 1.0f;
			L->theta_scale = powf(base, -2.0f / (float)e->n_rot);
		}
	}

	e->n_ctx = o->n_ctx;
	if (e->n_ctx == 0) {
		e->n_ctx = hp->n_ctx_train ? hp->n_ctx_train : Q42_ENGINE_CTX_DEFAULT;
		if (e->n_ctx > Q42_ENGINE_CTX_DEFAULT)
			e->n_ctx = Q42_ENGINE_CTX_DEFAULT;
	}
	if (e->n_ctx > Q42_ENGINE_CTX_MAX)
		return q42_err_set(err, Q42_EARG, "context %u exceeds the maximum %u", e->n_ctx,
				   Q42_ENGINE_CTX_MAX);
	e->n_batch = o->n_batch ? o->n_batch : Q42_ENGINE_BATCH_DEFAULT;
	if (e->n_batch > Q42_ENGINE_BATCH_MAX)
		return q42_err_set(err, Q42_EARG, "batch %u exceeds the maximum %u", e->n_batch,
				   Q42_ENGINE_BATCH_MAX);
	if (e->n_batch > e->n_ctx)
		e->n_batch = e->n_ctx;
	return Q42_OK;
}

/* Expected ne[0], ne[1] of a slot (ne[1] == 0: a vector). */
static void slot_shape(const q42_engine *e, enum q42_wslot s, uint32_t l, uint64_t *n0,
		       uint64_t *n1)
{
	uint64_t E = e->n_embd, qd = (uint64_t)e->n_head * e->hd_k;
	uint64_t kvh = l < e->n_layer ? e->layers[l].n_head_kv : 0;
	uint64_t ff = l < e->n_layer ? e->layers[l].n_ff : 0;
	*n1 = 0;
	switch (s) {
	case Q42_W_TOK_EMBD:
	case Q42_W_OUTPUT: *n0 = E; *n1 = e->n_vocab; break;
	case Q42_W_OUTPUT_NORM:
	case Q42_W_TOK_EMBD_NORM:
	case Q42_W_ATTN_NORM:
	case Q42_W_FFN_NORM:
	case Q42_W_ATTN_OUT_B:
	case Q42_W_FFN_DOWN_B: *n0 = E; break;
	case Q42_W_ROPE_FREQS:
	case Q42_W_ROPE_LONG:
	case Q42_W_ROPE_SHORT: *n0 = e->n_rot / 2; break;
	case Q42_W_POST_ATTN_NORM:
	case Q42_W_POST_FFW_NORM: *n0 = E; break;
	case Q42_W_ATTN_Q_NORM:
	case Q42_W_ATTN_K_NORM: *n0 = e->hd_k; break;
	case Q42_W_ATTN_QKV: *n0 = E; *n1 = qd + kvh * (e->hd_k + e->hd_v); break;
	case Q42_W_ATTN_QKV_B: *n0 = qd + kvh * (e->hd_k + e->hd_v); break;
	case Q42_W_CONV: *n0 = e->conv_l; *n1 = E; break;
	case Q42_W_CONV_IN: *n0 = E; *n1 = 3 * E; break;
	case Q42_W_CONV_OUT: *n0 = E; *n1 = E; break;
	case Q42_W_DENSE_2: *n0 = E; *n1 = e->n_dense_2; break;
	case Q42_W_DENSE_2_B: *n0 = e->n_dense_2; break;
	case Q42_W_DENSE_3: *n0 = e->n_dense_2; *n1 = E; break;
	case Q42_W_POS_EMBD: *n0 = E; *n1 = e->n_pos; break;
	case Q42_W_TOKEN_TYPES: *n0 = E; *n1 = Q42_TOKEN_TYPES_MAX; break; /* or fewer (bind_one) */
	case Q42_W_TOK_EMBD_NORM_B:
	case Q42_W_ATTN_OUT_NORM:
	case Q42_W_ATTN_OUT_NORM_B:
	case Q42_W_LAYER_OUT_NORM:
	case Q42_W_LAYER_OUT_NORM_B: *n0 = E; break;
	case Q42_W_ATTN_Q: *n0 = E; *n1 = qd; break;
	case Q42_W_ATTN_K: *n0 = E; *n1 = kvh * e->hd_k; break;
	case Q42_W_ATTN_V: *n0 = E; *n1 = kvh * e->hd_v; break;
	case Q42_W_ATTN_OUT: *n0 = (uint64_t)e->n_head * e->hd_v; *n1 = E; break;
	case Q42_W_ATTN_Q_B: *n0 = qd; break;
	case Q42_W_ATTN_K_B: *n0 = kvh * e->hd_k; break;
	case Q42_W_ATTN_V_B: *n0 = kvh * e->hd_v; break;
	case Q42_W_FFN_GATE: *n0 = E; *n1 = ff; break;
	case Q42_W_FFN_UP: *n0 = E; *n1 = e->arch->ffn_fused_up ? 2 * ff : ff; break;
	case Q42_W_FFN_DOWN: *n0 = ff; *n1 = E; break;
	case Q42_W_FFN_GATE_B: *n0 = ff; break;
	case Q42_W_FFN_UP_B: *n0 = e->arch->ffn_fused_up ? 2 * ff : ff; break;
	case Q42_W_FFN_GATE_INP: *n0 = E; *n1 = e->n_expert; break;
	case Q42_W_FFN_GATE_EXPS:
	case Q42_W_FFN_UP_EXPS: *n0 = E; *n1 = e->n_ff_exp; break;
	case Q42_W_FFN_DOWN_EXPS: *n0 = e->n_ff_exp; *n1 = E; break;
	case Q42_W_FFN_EXP_PROBS_B: *n0 = e->n_expert; break;
	default: *n0 = 0; break;
	}
}

uint32_t q42_engine_act_slot(q42_engine *e, const q42_weight *w, bool *ok)
{
	for (uint32_t i = 0; i < e->n_act; i++)
		if (e->act[i].type == w->vdt && e->act[i].quantize == w->aq)
			return i;
	if (e->n_act == Q42_ACT_SLOTS) {
		*ok = false;
		return 0;
	}
	e->act[e->n_act].type = w->vdt;
	e->act[e->n_act].quantize = w->aq;
	return e->n_act++;
}

void q42_weight_choose_product(q42_weight *w, enum q42_arith arith, enum q42_isa isa,
			       enum q42_llamacpp_place place)
{
	q42_llamacpp_kernels ck;
	w->dot = w->k->vec_dot;
	w->rows = NULL;
	w->vdt = w->k->vec_dot_type;
	w->aq = w->vdt == Q42_DTYPE_F32 ? NULL : q42_kernels_get(w->vdt, isa)->quantize;
	if (q42_arith_is_llama(arith) &&
	    q42_llamacpp_select_variant(q42_arith_variant(arith), w->dtype, w->n_out, w->n_in, place, isa, &ck)) {
		w->dot = ck.vec_dot;
		w->rows = ck.rows;
		w->vdt = ck.vec_dot_type;
		w->aq = ck.quantize;
	}
	/* generic products: the multi-row form of the same vec_dot (NULL
	 * where the ISA has none) */
	if (w->rows == NULL)
		w->rows = q42_llamacpp_generic_rows(w->dtype, isa);
}

static int bind_one(q42_engine *e, const q42_source_tensor *tv, enum q42_wslot s, uint32_t l,
		    q42_weight *w, q42_err *err)
{
	uint64_t n0, n1, rb, total, one;
	const q42_dtype_info *di = q42_dtype_get(tv->dtype);
	const char *nm = tv->name.p;
	int nl = (int)(tv->name.len > 200 ? 200 : tv->name.len);
	/* a stack of expert matrices has the experts as its third dimension */
	const uint64_t n2 = s == Q42_W_FFN_GATE_EXPS || s == Q42_W_FFN_UP_EXPS ||
				    s == Q42_W_FFN_DOWN_EXPS
			? e->n_expert
			: 1;

	slot_shape(e, s, l, &n0, &n1);
	if (s == Q42_W_TOKEN_TYPES && tv->dims[1] >= 1 && tv->dims[1] <= Q42_TOKEN_TYPES_MAX)
		n1 = tv->dims[1];
	if (tv->dims[2] != n2 || tv->dims[3] != 1 || tv->dims[0] != n0 || tv->dims[1] != (n1 ? n1 : 1)) {
		char third[32] = "";
		if (n2 > 1)
			snprintf(third, sizeof third, ", %llu (expert_count)", (unsigned long long)n2);
		return q42_err_set(err, Q42_EFORMAT,
				   "tensor %.*s: shape [%llu, %llu, %llu, %llu], expected [%llu, %llu%s]",
				   nl, nm, (unsigned long long)tv->dims[0], (unsigned long long)tv->dims[1],
				   (unsigned long long)tv->dims[2], (unsigned long long)tv->dims[3],
				   (unsigned long long)n0, (unsigned long long)(n1 ? n1 : 1), third);
	}
	if (di == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "tensor %.*s: unknown type id %u", nl, nm,
				   tv->dtype);
	if (!q42_dtype_nbytes(tv->dtype, n0, n0, &rb) || q42_mul_overflow(rb, n1 ? n1 : 1, &one) ||
	    q42_mul_overflow(one, n2, &total) || total != tv->nbytes || tv->data == NULL)
		return q42_err_set(err, Q42_EFORMAT,
				   "tensor %.*s: %llu bytes of %s do not hold a [%llu, %llu] tensor",
				   nl, nm, (unsigned long long)tv->nbytes, di->name,
				   (unsigned long long)n0, (unsigned long long)(n1 ? n1 : 1));
	w->data = tv->data;
	w->dtype = tv->dtype;
	w->n_in = (int64_t)n0;
	w->n_out = (int64_t)(n1 ? n1 : 1);
	w->row_bytes = rb;
	w->expert_bytes = n2 > 1 ? one : 0;
	if (n1 == 0 || s == Q42_W_CONV || s == Q42_W_POS_EMBD || s == Q42_W_TOKEN_TYPES) {
		/* vectors (and the convolution kernel, a few taps per channel,
		 * and the rows added to the embedding) are read as float arrays
		 * straight from the mapping */
		if (tv->dtype != Q42_DTYPE_F32 || ((uintptr_t)tv->data & 3u) != 0)
			return q42_err_set(err, Q42_EUNSUPPORTED,
					   "tensor %.*s: type %s%s: the engine reads vectors as aligned f32",
					   nl, nm, di->name,
					   tv->dtype == Q42_DTYPE_F32 ? " (misaligned)" : "");
		return Q42_OK;
	}
	w->k = q42_kernels_get(tv->dtype, e->isa);
	if (w->k == NULL || w->k->vec_dot == NULL ||
	    q42_kernels_get(w->k->vec_dot_type, e->isa) == NULL ||
	    q42_kernels_get(w->k->vec_dot_type, e->isa)->quantize == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "tensor %.*s: no %s kernels for type %s", nl, nm,
				   q42_isa_name(e->isa), di->name);
	if (s == Q42_W_TOK_EMBD && w->k->dequant == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "tensor %.*s: type %s cannot be dequantized",
				   nl, nm, di->name);
	q42_weight_choose_product(w, e->arith, e->isa, s == Q42_W_TOK_EMBD ? Q42_LLAMACPP_CPU : Q42_LLAMACPP_MATMUL);
	return Q42_OK;
}

/* Matrices whose llama.cpp product has a faster form on a layout of its
 * own (kernels/q42_pack.h: the same arithmetic, the bytes rearranged) are
 * repacked once here, for the CPU forward pass only (a device backend
 * uploads the file's bytes). */
struct pack_job {
	const q42_llamacpp_packed *pk;
	uint8_t *dst;
	const uint8_t *src;
	int64_t n_in, n_out;
	uint64_t row_bytes;
};

/* The threads' shares of a matrix: whole groups of sixteen rows (the last
 * share also the rows past them), packed independently of each other.
 * Each thread first maps its share's fresh arena pages in one call
 * (MADV_POPULATE_WRITE, Linux 5.14; older kernels refuse it and the stores
 * fault the pages in as before). A fault per 4 KiB page is what loading
 * costs most; mapping in one call cut the load by about a third
 * (docs/perf/huge-pages.md). */
static void pack_part(void *v, uint32_t ith, uint32_t nth)
{
	const struct pack_job *j = v;
	const int64_t groups = j->n_out / 16;
	const int64_t r0 = groups * ith / nth * 16;
	const int64_t r1 = ith + 1 == nth ? j->n_out : groups * (ith + 1) / nth * 16;
	const uint64_t off = (uint64_t)r0 * j->row_bytes;
	if (r1 <= r0)
		return;
#ifdef MADV_POPULATE_WRITE
	const uintptr_t lo = (uintptr_t)(j->dst + off) & ~(uintptr_t)4095;
	const uintptr_t hi = (uintptr_t)(j->dst + (uint64_t)r1 * j->row_bytes);
	(void)madvise((void *)lo, (size_t)(hi - lo), MADV_POPULATE_WRITE);
#endif
	j->pk->pack(j->dst + off, j->src + off, j->n_in, r1 - r0);
}

/* Bytes of w in the file: one matrix, or a stack of n_expert. */
static uint64_t weight_file_bytes(const q42_engine *e, const q42_weight *w)
{
	return w->expert_bytes != 0 ? w->expert_bytes * e->n_expert : w->row_bytes * (uint64_t)w->n_out;
}

/* Bytes w takes in the packed arena (0: it has no packed form; pk its
 * form otherwise): its size rounded up to a cache line. An expert stack
 * is packed expert by expert, each matrix where the file has it, so
 * expert_bytes still steps from one to the next. */
static uint64_t pack_size(const q42_engine *e, const q42_weight *w, q42_llamacpp_packed *pk)
{
	if (w->data == NULL || w->k == NULL ||
	    !q42_llamacpp_select_packed_variant(q42_arith_variant(e->arith), w->dtype, w->n_out, w->n_in,
						Q42_LLAMACPP_MATMUL, e->isa, pk))
		return 0;
	return (weight_file_bytes(e, w) + 63) / 64 * 64;
}

static void pack_one(q42_engine *e, q42_weight *w, const q42_llamacpp_packed *pk, uint8_t *p)
{
	const uint32_t n = w->expert_bytes != 0 ? e->n_expert : 1;
	for (uint32_t i = 0; i < n; i++) {
		struct pack_job j = {pk, p + i * w->expert_bytes, w->data + i * w->expert_bytes,
				     w->n_in, w->n_out, w->row_bytes};
		q42_pool_run(e->pool, pack_part, &j);
	}
	w->file = w->data;
	w->packed = p;
	w->data = p;
	w->rows = pk->rows;
	w->packed_row = pk->row;
}

/* The i-th weight slot of the model (the globals, then each layer's),
 * NULL past the last. */
static q42_weight *slot_at(q42_engine *e, uint32_t i)
{
	const uint32_t per = Q42_W_COUNT_ - Q42_W_LAYER_FIRST_;
	if (i < Q42_W_LAYER_FIRST_)
		return &e->g[i];
	i -= Q42_W_LAYER_FIRST_;
	return i / per < e->n_layer ? &e->layers[i / per].w[Q42_W_LAYER_FIRST_ + i % per] : NULL;
}

/* The vectors (norms, biases: a few KiB each, between the matrices in the
 * file; the convolution kernels too) copied out of the mapping, so that reading them does not map the
 * page-cache folios around them -- dropped pages of packed matrices --
 * into the process again (Linux maps a large folio whole on a fault). */
static int copy_vectors(q42_engine *e, q42_err *err)
{
	uint64_t total = 0;
	q42_weight *w;
	for (uint32_t i = 0; (w = slot_at(e, i)) != NULL; i++)
		if (w->data != NULL && w->k == NULL)
			total += (w->row_bytes * (uint64_t)w->n_out + 63) / 64 * 64;
	uint8_t *p = NULL;
	if (total == 0)
		return Q42_OK;
	if (posix_memalign((void **)&p, 64, (size_t)total) != 0)
		return q42_err_set(err, Q42_ENOMEM, "cannot allocate %llu bytes for the model's vectors",
				   (unsigned long long)total);
	e->vec_copy = p;
	for (uint32_t i = 0; (w = slot_at(e, i)) != NULL; i++)
		if (w->data != NULL && w->k == NULL) {
			memcpy(p, w->data, (size_t)(w->row_bytes * (uint64_t)w->n_out));
			w->data = p;
			p += (w->row_bytes * (uint64_t)w->n_out + 63) / 64 * 64;
		}
	return Q42_OK;
}

/* Packs every matrix that has a packed form and drops the file's pages of
 * each packed one from the process as soon as it is packed (the mapping
 * is private and read-only: a later read faults them in again from the
 * file), so that the process never holds much more than one copy of the
 * weights. The vectors are copied out first (copy_vectors): reads of
 * neighbouring bytes would map dropped pages again. Packing the next
 * matrix can still bring back the pages that share a page-cache folio
 * with its first and last bytes, so every packed range is dropped once
 * more at the end. A tied output's pages go too: the token embedding
 * then looks its rows up in the packed copy (a lookup of the mapping would
 * fault in a whole page-cache folio per token). */
static int pack_weights(q42_engine *e, q42_err *err)
{
	int rc;
	q42_weight *w;
	q42_llamacpp_packed pk;
	uint64_t total = 0, off = 0;
	if (!q42_arith_is_llama(e->arith) || e->be_state != NULL)
		return Q42_OK;
	/* the token embedding is read by row lookup, in its file layout */
	for (uint32_t i = 0; (w = slot_at(e, i)) != NULL; i++)
		if (i != Q42_W_TOK_EMBD)
			total += pack_size(e, w, &pk);
	if (total == 0)
		return Q42_OK;
	if ((e->pack_mem = q42_engine_huge_alloc(e, total)) == NULL)
		return q42_err_set(err, Q42_ENOMEM, "cannot allocate %llu bytes to repack the model's matrices",
				   (unsigned long long)total);
	if ((rc = copy_vectors(e, err)) != Q42_OK)
		return rc;
	for (uint32_t i = 0; (w = slot_at(e, i)) != NULL; i++) {
		const uint64_t size = i != Q42_W_TOK_EMBD ? pack_size(e, w, &pk) : 0;
		if (size == 0)
			continue;
		pack_one(e, w, &pk, (uint8_t *)e->pack_mem + off);
		off += size;
		q42_mount_release(e->m, w->file, weight_file_bytes(e, w));
	}
	for (uint32_t i = 0; (w = slot_at(e, i)) != NULL; i++)
		if (w->packed != NULL)
			q42_mount_release(e->m, w->file, weight_file_bytes(e, w));
	if (e->tied && e->g[Q42_W_OUTPUT].packed != NULL &&
	    (e->embd_row = malloc((size_t)e->g[Q42_W_OUTPUT].row_bytes)) == NULL)
		return q42_err_set(err, Q42_ENOMEM, "cannot allocate an embedding row");
	return Q42_OK;
}

/* Whether slot s belongs in block l: a short-convolution block has no
 * attention weights, an attention block no convolution ones (lfm2). */
static bool slot_in_block(const q42_engine *e, enum q42_wslot s, uint32_t l)
{
	const bool conv_slot = s == Q42_W_CONV || s == Q42_W_CONV_IN || s == Q42_W_CONV_OUT;
	const bool attn_slot = (s >= Q42_W_ATTN_Q && s <= Q42_W_ATTN_OUT_B) ||
			       (s >= Q42_W_ATTN_QKV && s <= Q42_W_ATTN_K_NORM);
	const bool dense_slot = s >= Q42_W_FFN_GATE && s <= Q42_W_FFN_DOWN_B;
	const bool moe_slot = s >= Q42_W_FFN_GATE_INP && s <= Q42_W_FFN_EXP_PROBS_B;
	if (!q42_wslot_is_layer(s) || l >= e->n_layer)
		return true;
	if (e->arch->moe && (e->layers[l].moe ? dense_slot : moe_slot))
		return false;
	return e->layers[l].conv ? !attn_slot : !conv_slot;
}

static int bind_tensors(q42_engine *e, q42_err *err)
{
	uint64_t nt = q42_mount_n_tensors(e->m);
	char name[128];
	bool ok = true;

	for (uint64_t i = 0; i < nt; i++) {
		q42_source_tensor tv;
		enum q42_wslot s;
		uint32_t l;
		q42_weight *w;
		int rc;
		int nl;

		q42_mount_tensor_at(e->m, i, &tv);
		nl = (int)(tv.name.len > 200 ? 200 : tv.name.len);
		if (!q42_wslot_parse(tv.name.p, tv.name.len, &s, &l) || e->arch->need[s] == Q42_NEED_NO)
			return q42_err_set(err, Q42_EUNSUPPORTED,
					   "tensor %.*s: not part of architecture %s as this engine runs it",
					   nl, tv.name.p, e->arch->name);
		if (q42_wslot_is_layer(s) && l >= e->n_layer)
			return q42_err_set(err, Q42_EFORMAT,
					   "tensor %.*s: block %u, but the model has %u blocks", nl,
					   tv.name.p, l, e->n_layer);
		if (!slot_in_block(e, s, l) && e->arch->moe &&
		    ((s >= Q42_W_FFN_GATE && s <= Q42_W_FFN_DOWN_B) || s >= Q42_W_FFN_GATE_INP))
			return q42_err_set(err, Q42_EFORMAT,
					   "tensor %.*s: block %u has a %s FFN (%s.leading_dense_block_count)", nl,
					   tv.name.p, l, e->layers[l].moe ? "routed" : "dense", e->arch->name);
		if (!slot_in_block(e, s, l))
			return q42_err_set(err, Q42_EFORMAT,
					   "tensor %.*s: block %u is %s layer (attention.head_count_kv)", nl,
					   tv.name.p, l, e->layers[l].conv ? "a convolution" : "an attention");
		w = q42_wslot_is_layer(s) ? &e->layers[l].w[s] : &e->g[s];
		if (w->data != NULL)
			return q42_err_set(err, Q42_EFORMAT, "tensor %.*s: present twice", nl,
					   tv.name.p);
		rc = bind_one(e, &tv, s, l, w, err);
		if (rc != Q42_OK)
			return rc;
		e->n_params += tv.dims[0] * tv.dims[1] * tv.dims[2];
	}
	/* required slots; q, k and v may come as one attn_qkv instead */
	for (enum q42_wslot s = 0; s < Q42_W_COUNT_; s++) {
		uint32_t n = q42_wslot_is_layer(s) ? e->n_layer : 1;
		const bool of_qkv = s == Q42_W_ATTN_Q || s == Q42_W_ATTN_K || s == Q42_W_ATTN_V ||
				    s == Q42_W_ATTN_Q_B || s == Q42_W_ATTN_K_B || s == Q42_W_ATTN_V_B;
		for (uint32_t l = 0; l < n; l++) {
			const q42_weight *w = q42_wslot_is_layer(s) ? &e->layers[l].w[s] : &e->g[s];
			const bool fused = q42_wslot_is_layer(s) &&
					   e->layers[l].w[Q42_W_ATTN_QKV].data != NULL;
			q42_wslot_format(s, l, name, sizeof name);
			if (of_qkv && fused && w->data != NULL)
				return q42_err_set(err, Q42_EFORMAT,
						   "tensor %s: present beside blk.%u.attn_qkv.weight", name, l);
			if (s == Q42_W_ATTN_QKV_B && w->data != NULL && !fused)
				return q42_err_set(err, Q42_EFORMAT,
						   "tensor %s: present without blk.%u.attn_qkv.weight", name, l);
			if (e->arch->need[s] != Q42_NEED_YES || w->data != NULL || (of_qkv && fused) ||
			    !slot_in_block(e, s, l))
				continue;
			return q42_err_set(err, Q42_EFORMAT,
					   "tensor %s: required by architecture %s but missing%s", name,
					   e->arch->name,
					   of_qkv && e->arch->need[Q42_W_ATTN_QKV] != Q42_NEED_NO
						   ? " (and no attn_qkv.weight in its block)"
						   : "");
		}
	}
	/* RoPE factors: rope_freqs, else LongRoPE's long ones past the
	 * original context, else its short ones (llama_model::get_rope_factors).
	 * llama.cpp compares its context rounded up to 256 cells: with an
	 * original context of 4100 (or 32), a context of 4097 (or 20) takes the
	 * long factors there, so here too. */
	{
		const uint32_t orig = q42_mount_hparams(e->m)->n_ctx_orig
					      ? q42_mount_hparams(e->m)->n_ctx_orig
					      : q42_mount_hparams(e->m)->n_ctx_train;
		const uint64_t ctx_cells = ((uint64_t)e->n_ctx + 255) / 256 * 256;
		e->rope_ff = &e->g[Q42_W_ROPE_FREQS];
		if (e->rope_ff->data == NULL)
			e->rope_ff = &e->g[ctx_cells > orig ? Q42_W_ROPE_LONG : Q42_W_ROPE_SHORT];
	}
	e->final_norm = e->arch->post_norm ? NULL
			: &e->g[e->arch->embd_norm_final ? Q42_W_TOK_EMBD_NORM : Q42_W_OUTPUT_NORM];
	if (e->g[Q42_W_OUTPUT].data == NULL) {
		if (!e->arch->may_tie_output)
			return q42_err_set(err, Q42_EFORMAT, "tensor output.weight: missing");
		e->g[Q42_W_OUTPUT] = e->g[Q42_W_TOK_EMBD];
		/* llama.cpp duplicates a tied embedding for the output product,
		 * and the copy goes to its AMX buffer where the shape allows
		 * (measured: Q8_0, Q4_1 and Q5_K_M models' logits equal its
		 * bits only so) */
		q42_weight_choose_product(&e->g[Q42_W_OUTPUT], e->arith, e->isa, Q42_LLAMACPP_MATMUL);
		e->tied = true;
	}
	/* activation slots: one per (vec_dot_type, quantizer) in use */
	for (uint32_t l = 0; l <= e->n_layer; l++) {
		q42_weight *ws = l < e->n_layer ? e->layers[l].w : e->g;
		uint32_t first = l < e->n_layer ? Q42_W_LAYER_FIRST_ : 0;
		uint32_t end = l < e->n_layer ? Q42_W_COUNT_ : Q42_W_LAYER_FIRST_;
		for (uint32_t s = first; s < end; s++)
			if (ws[s].data != NULL && ws[s].k != NULL &&
			    !(l == e->n_layer && s == Q42_W_TOK_EMBD)) /* only looked up */
				ws[s].act = q42_engine_act_slot(e, &ws[s], &ok);
	}
	if (!ok)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "model mixes more than %d activation types", Q42_ACT_SLOTS);
	return Q42_OK;
}

/* Flash attention where asked for and the engine has it: llama.cpp's CPU
 * forms over a decoder's cache. An encoder's attention (no cache in
 * llama.cpp) and the Vulkan backend keep the other arithmetic. llama.cpp
 * casts an f32 cache to f16 for flash attention, so the cache is f16: the
 * same values in half the bytes. A Q8_0 cache needs flash attention, as
 * llama.cpp's quantized V cache does (q42 quantizes K and V alike), and
 * head dims of whole Q8_0 blocks. */
/* Bytes of a row of n values of type t (n a whole number of its blocks). */
static uint64_t dtype_row_bytes(uint32_t t, uint32_t n)
{
	const q42_dtype_info *d = q42_dtype_get(t);
	return (uint64_t)n / d->block_elems * d->block_bytes;
}

static int choose_flash_attn(q42_engine *e, const q42_engine_opts *o, q42_err *err)
{
	const char *why = NULL;
	if (o->flash_attn != Q42_FLASH_ATTN_OFF && o->flash_attn != Q42_FLASH_ATTN_ON &&
	    o->flash_attn != Q42_FLASH_ATTN_AUTO)
		return q42_err_set(err, Q42_EARG, "flash attention %d: expected off, on or auto",
				   (int)o->flash_attn);
	if (!e->causal)
		why = "an encoder's attention";
	else if (o->backend != Q42_BACKEND_CPU)
		why = "the Vulkan backend (CPU only)";
	if (o->flash_attn == Q42_FLASH_ATTN_ON && why != NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "flash attention: not available for %s", why);
	e->fa = o->flash_attn != Q42_FLASH_ATTN_OFF && why == NULL;
	if (e->kv_type == Q42_DTYPE_Q8_0) {
		if (!e->fa)
			return q42_err_set(err, Q42_EUNSUPPORTED,
					   "a Q8_0 KV cache needs flash attention (--flash-attn on)%s%s",
					   why ? ", which is not available for " : "", why ? why : "");
		if (e->hd_k % 32 != 0 || e->hd_v % 32 != 0)
			return q42_err_set(err, Q42_EUNSUPPORTED,
					   "a Q8_0 KV cache needs head dims that are multiples of 32 (K %u, V %u)",
					   e->hd_k, e->hd_v);
		/* llama.cpp's attn_rot: where a head is whole 64s, K by the
		 * widest power of two dividing it, V by 64 */
		if (e->hd_k % 64 == 0)
			for (e->k_rot = 64; e->hd_k % (2 * e->k_rot) == 0;)
				e->k_rot *= 2;
		e->v_rot = e->hd_v % 64 == 0 ? 64 : 0;
	} else if (e->fa) {
		e->kv_type = Q42_DTYPE_F16;
	}
	return Q42_OK;
}

/* Floats of per-thread flash attention scratch (q42_forward.c): the tiled
 * form's transposed queries, state, accumulator, bounds and kernel work,
 * or the one-at-a-time form's queries and accumulators of every head. */
static uint64_t fa_scratch(const q42_engine *e)
{
	const q42_llamacpp_fa fa = {e->hd_k, e->hd_v, e->kq_scale, e->kv_type};
	const uint64_t tile = (uint64_t)Q42_FA_TILE * (e->hd_k + e->hd_v + 4) + q42_llamacpp_fa_tile_work(&fa);
	const uint64_t heads = (uint64_t)e->n_head * (e->hd_k + e->hd_v + 2);
	return (tile > heads ? tile : heads) + 64;
}

/* The longest activation row a product quantizes. */
static uint64_t act_widest(const q42_engine *e)
{
	const uint64_t qd = (uint64_t)e->n_head * e->hd_k, ad = (uint64_t)e->n_head * e->hd_v;
	uint64_t widest = e->n_embd > e->n_ff_max ? e->n_embd : e->n_ff_max;
	if (e->n_ff_exp > widest)
		widest = e->n_ff_exp;
	if (qd > widest)
		widest = qd;
	if (ad > widest)
		widest = ad;
	if (e->embd_width > widest)
		widest = e->embd_width;
	return widest;
}

/* Bytes of one row of widest values quantized to t. */
static uint64_t act_row_bytes(uint32_t t, uint64_t widest)
{
	uint64_t rb = 0;
	if (!q42_dtype_nbytes(t, widest, 1, &rb)) {
		/* widest is not a whole number of blocks: size by the
		 * rounded-up block count instead */
		const q42_dtype_info *di = q42_dtype_get(t);
		rb = (widest + di->block_elems - 1) / di->block_elems * di->block_bytes;
	}
	return rb;
}

/* The KV cache's chunk of positions (whole V blocks, q42_forward.c). */
static uint32_t kv_chunk_of(uint32_t n_ctx)
{
	const uint32_t c = (n_ctx + Q42_V_BLOCK - 1) / Q42_V_BLOCK * Q42_V_BLOCK;
	return c > Q42_V_CHUNK ? Q42_V_CHUNK : c;
}

static int alloc_buffers(q42_engine *e, q42_err *err)
{
	bool failed = false;
	uint64_t B = e->n_batch, kvn = 0, t;
	const uint64_t widest = act_widest(e);
	uint64_t qd = (uint64_t)e->n_head * e->hd_k, ad = (uint64_t)e->n_head * e->hd_v;
	uint32_t nth = q42_pool_size(e->pool);

	/* cache (the Vulkan backend keeps its own on the device), in whole
	 * chunks of whole V blocks (q42_forward.c) */
	e->kv_chunk = kv_chunk_of(e->n_ctx);
	if (q42_mul_overflow((uint64_t)e->n_layer * e->n_head_kv_max,
			     ((uint64_t)e->n_ctx + e->kv_chunk - 1) / e->kv_chunk * e->kv_chunk, &kvn) ||
	    q42_mul_overflow(kvn, e->k_row_bytes, &t))
		failed = true;
	e->kc = e->be_state ? NULL : zalloc(kvn, e->k_row_bytes, &failed);
	if (!failed && e->kc != NULL)
		advise_huge(e, e->kc, kvn * e->k_row_bytes);
	if (!failed && q42_mul_overflow(kvn, e->v_row_bytes, &t))
		failed = true;
	{
		const uint64_t run = (uint64_t)Q42_V_BLOCK * e->v_elem_bytes, per = e->kv_chunk / Q42_V_BLOCK;
		e->v_lay.stride = run;
		e->v_lay.step = run * e->hd_v;
		e->v_lay.per = (uint32_t)per;
		e->v_lay.chunk = e->v_lay.step * per * e->n_layer * e->n_head_kv_max;
	}
	e->vc = e->be_state ? NULL : zalloc(kvn, e->v_row_bytes, &failed);
	if (!failed && e->vc != NULL)
		advise_huge(e, e->vc, kvn * e->v_row_bytes);

	e->x = zalloc(B * e->n_embd, sizeof(float), &failed);
	e->xb = zalloc(B * e->n_embd, sizeof(float), &failed);
	e->ao = zalloc(B * e->n_embd, sizeof(float), &failed);
	e->q = zalloc(B * qd, sizeof(float), &failed);
	e->k = zalloc(B * e->n_head_kv_max * e->hd_k, sizeof(float), &failed);
	e->v = zalloc(B * e->n_head_kv_max * e->hd_v, sizeof(float), &failed);
	e->att = zalloc(B * ad, sizeof(float), &failed);
	e->hg = zalloc(B * e->n_ff_max, sizeof(float), &failed);
	e->hu = zalloc(B * e->n_ff_max * (e->arch->ffn_fused_up ? 2u : 1u), sizeof(float), &failed);
	if (e->arch->need[Q42_W_ATTN_QKV] != Q42_NEED_NO) {
		uint64_t w = qd + (uint64_t)e->n_head_kv_max * (e->hd_k + e->hd_v);
		if (e->n_conv > 0 && w < 3ull * e->n_embd)
			w = 3ull * e->n_embd;
		e->qkv = zalloc(B * w, sizeof(float), &failed);
	}
	if (e->n_conv > 0)
		e->conv_hist = zalloc((uint64_t)e->n_conv * e->n_ctx, (uint64_t)e->n_embd * sizeof(float),
				      &failed);
	if (e->n_expert > 0) {
		const uint64_t pairs = B * e->n_expert_used;
		e->moe_logits = zalloc(B * e->n_expert, sizeof(float), &failed);
		e->moe_w = zalloc(pairs, sizeof(float), &failed);
		e->moe_id = zalloc(pairs, sizeof(int32_t), &failed);
		e->moe_y = zalloc(pairs * e->n_embd, sizeof(float), &failed);
	}
	e->logits = zalloc(e->n_vocab, sizeof(float), &failed);
	e->embd = zalloc(B, (uint64_t)e->embd_width * sizeof(float), &failed);
	e->embd_tmp = zalloc(B, (uint64_t)e->embd_width * sizeof(float), &failed);
	if (e->arch->ffn_act == Q42_FFN_GELU) {
		e->ones = zalloc(e->n_ff_max, sizeof(float), &failed);
		for (uint32_t i = 0; e->ones != NULL && i < e->n_ff_max; i++)
			e->ones[i] = 1.0f;
	}
	e->top1 = zalloc((e->n_vocab + Q42_TILE_ROWS - 1) / Q42_TILE_ROWS, sizeof *e->top1, &failed);
	for (uint32_t i = 0; i < e->n_act && !failed; i++) {
		q42_act *a = &e->act[i];
		a->buf = zalloc(B, act_row_bytes(a->type, widest), &failed);
	}
	e->v_ready = zalloc(e->n_head_kv_max, sizeof *e->v_ready, &failed);
	e->ts = zalloc(nth, sizeof *e->ts, &failed);
	if (e->ts != NULL)
		e->n_ts = nth;
	for (uint32_t i = 0; i < e->n_ts && !failed; i++) {
		e->ts[i].scores = zalloc((uint64_t)Q42_ATT_BLOCK * e->n_ctx, sizeof(float), &failed);
		if (e->v_elem_bytes != 0) { /* the products' operands (no Q8_0 cache) */
			e->ts[i].qq = zalloc(e->hd_k, e->v_elem_bytes, &failed);
			e->ts[i].pq = zalloc(e->n_ctx, e->v_elem_bytes, &failed);
			e->ts[i].vrow = zalloc(e->n_ctx, e->v_elem_bytes, &failed);
		}
		e->ts[i].rope = zalloc(e->n_rot, sizeof(float), &failed);
		if (e->n_expert > 0) {
			e->ts[i].moe_g = zalloc(e->n_ff_exp, sizeof(float), &failed);
			e->ts[i].moe_u = zalloc(e->n_ff_exp, sizeof(float), &failed);
			/* f32 is the widest vec_dot_type a down matrix has */
			e->ts[i].moe_q = zalloc(e->n_ff_exp, sizeof(float), &failed);
		}
		if (e->n_lora_w > 0)
			e->ts[i].lora = zalloc((uint64_t)Q42_TILE_ROWS * B, sizeof(float), &failed);
		if (e->fa)
			e->ts[i].fa = zalloc(fa_scratch(e), sizeof(float), &failed);
	}
	if (failed)
		return q42_err_set(err, Q42_ENOMEM,
				   "out of memory for a context of %u tokens and batch %u (try --ctx)",
				   e->n_ctx, e->n_batch);
	return Q42_OK;
}

/* What alloc_buffers() will allocate on nth threads and pack_weights()
 * will copy, and the tensor bytes left to be read from the mapping, all
 * from the bound model before any of it is allocated. The same sizes as
 * those functions take (test_engine compares the figures with
 * q42_engine_buffer_bytes once they are allocated). The dimensions are
 * bounded by check_dims, so no product here comes near 2^64. */
static void plan_buffers(const q42_engine *e, uint32_t nth, q42_engine_mem *m)
{
	const uint64_t B = e->n_batch, F = sizeof(float), vb = e->v_elem_bytes;
	const uint64_t qd = (uint64_t)e->n_head * e->hd_k, ad = (uint64_t)e->n_head * e->hd_v;
	const uint64_t kvh = e->n_head_kv_max, widest = act_widest(e);
	const uint64_t chunk = kv_chunk_of(e->n_ctx);
	const uint64_t kvn = (uint64_t)e->n_layer * kvh * ((e->n_ctx + chunk - 1) / chunk * chunk);
	q42_llamacpp_packed pk;
	const q42_weight *w;
	uint64_t packed = 0, vectors = 0;
	bool out_packed = false;

	memset(m, 0, sizeof *m);
	if (e->be_state == NULL)
		m->kv = kvn * e->k_row_bytes + kvn * e->v_row_bytes;
	m->kv += (uint64_t)e->n_conv * e->n_ctx * e->n_embd * F;

	m->act = B * F * (3ull * e->n_embd + qd + kvh * (e->hd_k + e->hd_v) + ad +
			  (uint64_t)e->n_ff_max * (e->arch->ffn_fused_up ? 3u : 2u) +
			  2ull * e->embd_width);
	if (e->arch->need[Q42_W_ATTN_QKV] != Q42_NEED_NO) {
		uint64_t wd = qd + kvh * (e->hd_k + e->hd_v);
		if (e->n_conv > 0 && wd < 3ull * e->n_embd)
			wd = 3ull * e->n_embd;
		m->act += B * wd * F;
	}
	if (e->n_expert > 0)
		m->act += B * F * (e->n_expert + 2ull * e->n_expert_used +
				   (uint64_t)e->n_expert_used * e->n_embd);
	m->act += (uint64_t)e->n_vocab * F +
		  (e->n_vocab + Q42_TILE_ROWS - 1) / Q42_TILE_ROWS * sizeof *e->top1 +
		  kvh * sizeof *e->v_ready;
	if (e->arch->ffn_act == Q42_FFN_GELU)
		m->act += e->n_ff_max * F;
	for (uint32_t i = 0; i < e->n_act; i++)
		m->act += B * act_row_bytes(e->act[i].type, widest);

	m->scratch = nth * (sizeof *e->ts + 3ull * e->n_ctx * vb + e->hd_k * vb + e->n_rot * F);
	/* scores are f32 whatever the cache, a block of tokens' rows */
	m->scratch += nth * (uint64_t)e->n_ctx * (Q42_ATT_BLOCK * F - vb);
	if (e->n_expert > 0)
		m->scratch += nth * 3ull * e->n_ff_exp * F;
	if (e->n_lora_w > 0)
		m->scratch += nth * (uint64_t)Q42_TILE_ROWS * B * F;
	if (e->fa)
		m->scratch += nth * fa_scratch(e) * F;

	/* pack_weights: the arena, and the vectors copied out with it */
	for (uint32_t i = 0; (w = slot_at((q42_engine *)(uintptr_t)e, i)) != NULL; i++) {
		const uint64_t p = q42_arith_is_llama(e->arith) && e->be_state == NULL &&
						   i != Q42_W_TOK_EMBD
					   ? pack_size(e, w, &pk)
					   : 0;
		packed += p;
		out_packed |= i == Q42_W_OUTPUT && p > 0;
		if (w->data != NULL && w->k == NULL)
			vectors += (w->row_bytes * (uint64_t)w->n_out + 63) / 64 * 64;
		else if (w->data != NULL && p == 0)
			m->weights += weight_file_bytes(e, w);
	}
	if (packed > 0) {
		m->packed = packed + vectors;
		if (e->tied && out_packed)
			m->packed += e->g[Q42_W_OUTPUT].row_bytes;
	} else {
		m->weights += vectors;
	}
	m->total = m->weights + m->packed + m->kv + m->act + m->scratch;
}

/* What a backend is given: the binding, as the file holds it. */
static int bind_for_backend(q42_engine *e, q42_err *err)
{
	q42_bound_model *b = &e->bound;
	*b = (q42_bound_model){
		.arch = e->arch, .n_vocab = e->n_vocab, .n_embd = e->n_embd, .n_layer = e->n_layer,
		.n_head = e->n_head, .n_head_kv_max = e->n_head_kv_max, .n_ff_max = e->n_ff_max,
		.hd_k = e->hd_k, .hd_v = e->hd_v, .n_rot = e->n_rot, .n_ctx = e->n_ctx,
		.n_batch = e->n_batch, .kv_type = e->kv_type, .eps = e->eps,
		.rope_base = e->rope_base, .rope_scale = e->rope_scale, .kq_scale = e->kq_scale,
		.rope_mscale = e->rope_mscale, .rope_ff = (enum q42_wslot)(e->rope_ff - e->g),
		.q_scale = e->q_scale, .embd_scale = e->embd_scale, .final_softcap = e->final_softcap,
		.final_norm = e->final_norm != NULL ? (enum q42_wslot)(e->final_norm - e->g)
						    : Q42_W_COUNT_,
		.causal = e->causal, .swa_symmetric = e->swa_symmetric, .conv_l = e->conv_l,
		.conv_ahead = e->conv_ahead,
		.n_expert = e->n_expert, .n_expert_used = e->n_expert_used, .n_ff_exp = e->n_ff_exp,
		.tied = e->tied};
	e->bound_layers = calloc(e->n_layer ? e->n_layer : 1, sizeof *e->bound_layers);
	if (e->bound_layers == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	for (uint32_t s = 0; s < Q42_W_COUNT_; s++)
		for (uint32_t l = 0; l < (s < Q42_W_LAYER_FIRST_ ? 1 : e->n_layer); l++) {
			const q42_weight *w = s < Q42_W_LAYER_FIRST_ ? &e->g[s] : &e->layers[l].w[s];
			q42_bound_weight *bw = s < Q42_W_LAYER_FIRST_ ? &b->g[s] : &e->bound_layers[l].w[s];
			*bw = (q42_bound_weight){.data = w->data, .dtype = w->dtype,
						 .matrix = w->k != NULL, .n_in = w->n_in,
						 .n_out = w->n_out, .row_bytes = w->row_bytes,
						 .dequant = w->k != NULL ? w->k->dequant : NULL,
						 .expert_bytes = w->expert_bytes};
			int rc = q42_engine_lora_bound(e, w, bw, err);
			if (rc != Q42_OK)
				return rc;
		}
	for (uint32_t l = 0; l < e->n_layer; l++) {
		e->bound_layers[l].n_head_kv = e->layers[l].n_head_kv;
		e->bound_layers[l].n_ff = e->layers[l].n_ff;
		e->bound_layers[l].n_swa = e->layers[l].n_swa;
		e->bound_layers[l].theta_scale = e->layers[l].theta_scale;
		e->bound_layers[l].rope_scale = e->layers[l].rope_scale;
		e->bound_layers[l].conv = e->layers[l].conv;
		e->bound_layers[l].moe = e->layers[l].moe;
	}
	b->layers = e->bound_layers;
	return Q42_OK;
}

/* The backend of o: the CPU, or o's backend given what bind_tensors bound
 * (AUTO without a GPU stays on the CPU). */
static int open_backend(q42_engine *e, const q42_engine_opts *o, q42_err *err)
{
	e->dev_top1 = -1;
	if (o->backend == Q42_BACKEND_CPU)
		return Q42_OK;
	if (o->backend != Q42_BACKEND_VULKAN && o->backend != Q42_BACKEND_AUTO)
		return q42_err_set(err, Q42_EARG, "backend %d: expected cpu, vulkan or auto",
				   (int)o->backend);
	if (o->backend_ops == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "backend %s: none given",
				   q42_backend_name(o->backend));
	int rc = bind_for_backend(e, err);
	if (rc != Q42_OK)
		return rc;
	rc = o->backend_ops->open(&e->be_state, &e->bound, o->backend, o->device, err);
	if (rc == Q42_OK && e->be_state != NULL)
		e->be = o->backend_ops;
	return rc;
}

/* The attention products llama.cpp's x86 build runs on an f16 cache
 * (q42_llamacpp.h): ggml_vec_dot_f16 for passes of one token, tinyBLAS for
 * longer ones where its shape rules allow it (the cache length it pads to
 * is a multiple of 256, so only head_dim decides). K rows are head_dim
 * long and unpadded, V rows padded. */
static void att_f16_products(q42_engine *e)
{
	const q42_llamacpp_ops *c = e->cops;
	const bool k_tb = e->hd_k % c->tb_lanes == 0, v_tb = e->hd_v % 4 == 0;
	e->att_kq_one = c->dot_f16;
	/* whole 64-steps: the padded form is the same sum, sixteen rows
	 * reduced at once */
	e->att_kq_one_rows = e->hd_k % 64 == 0 ? c->dot_f16_pad_rows : c->dot_f16_rows;
	e->att_kq = k_tb ? c->dot_f16_lanes : c->dot_f16;
	e->att_kq_rows = k_tb ? c->dot_f16_lanes_rows : e->att_kq_one_rows;
	e->att_kqv_one = c->dot_f16_pad;
	e->att_kqv_one_rows = c->dot_f16_pad_vrows;
	e->att_kqv = v_tb ? c->dot_f16_lanes : c->dot_f16_pad;
	e->att_kqv_rows = v_tb ? c->dot_f16_lanes_vrows : c->dot_f16_pad_vrows;
}

static char *fmt_mib(char *buf, size_t cap, uint64_t n)
{
	snprintf(buf, cap, "%.1f MiB", (double)n / (1024.0 * 1024.0));
	return buf;
}

/* q42_engine_open, or with plan set q42_engine_memory: everything up to
 * the allocations, which are then only computed. */
static int engine_open(q42_engine **out, q42_mount *m, const q42_engine_opts *o,
		       q42_engine_mem *plan, q42_err *err)
{
	static const q42_engine_opts defaults = {0};
	const q42_hparams *hp = q42_mount_hparams(m);
	q42_engine *e = NULL;
	q42_engine_mem need;
	uint32_t nth;
	int rc;

	*out = NULL;
	if (o == NULL)
		o = &defaults;
	if (hp == NULL)
		return q42_err_set(err, Q42_EFORMAT, "%s: no hyperparameters: not a runnable model",
				   q42_mount_path(m));
	e = calloc(1, sizeof *e);
	if (e == NULL)
		return q42_err_set(err, Q42_ENOMEM, "engine: out of memory");
	e->m = m;
	e->isa = o->isa == Q42_ISA_BEST ? q42_isa_detect() : o->isa;
	e->arith = o->arith;
	e->small_pages = o->small_pages;
	if ((unsigned)e->arith > Q42_ARITH_ICELAKE) {
		rc = q42_err_set(err, Q42_EARG, "arithmetic %d: expected llamacpp, zen4, icelake, haswell, ggml or auto",
				 (int)o->arith);
		goto fail;
	}
	e->arith = q42_arith_resolve(e->arith);
	e->arch = q42_arch_find(hp->arch);
	if (e->arch == NULL) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "architecture '%s' is not supported (supported: %s)", hp->arch,
				 q42_arch_supported());
		goto fail;
	}
	e->n_vocab = q42_mount_vocab(m)->n_tokens;
	if (e->n_vocab == 0 || e->n_vocab > Q42_MAX_VOCAB) {
		rc = q42_err_set(err, Q42_EFORMAT, "tokenizer: %u tokens, expected 1..%u", e->n_vocab,
				 Q42_MAX_VOCAB);
		goto fail;
	}
	e->layers = calloc(hp->n_layer ? hp->n_layer : 1, sizeof *e->layers);
	if (e->layers == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "engine: out of memory");
		goto fail;
	}
	rc = check_dims(e, hp, o, err);
	if (rc != Q42_OK)
		goto fail;

	e->kv_type = o->kv_type ? o->kv_type : Q42_DTYPE_F32;
	if (e->kv_type != Q42_DTYPE_F32 && e->kv_type != Q42_DTYPE_F16 && e->kv_type != Q42_DTYPE_Q8_0) {
		rc = q42_err_set(err, Q42_EARG, "KV cache type %u: only f32, f16 and q8_0 are supported",
				 e->kv_type);
		goto fail;
	}
	rc = choose_flash_attn(e, o, err);
	if (rc != Q42_OK)
		goto fail;
	e->kvk = q42_kernels_get(e->kv_type, e->isa);
	e->kvq = e->kvk ? q42_kernels_get(e->kvk->vec_dot_type, e->isa) : NULL;
	if (e->kvk == NULL || e->kvk->vec_dot == NULL || e->kvq == NULL || e->kvq->quantize == NULL ||
	    e->kvk->vec_dot_type != e->kv_type) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "no %s kernels for a %s KV cache",
				 q42_isa_name(e->isa), q42_dtype_get(e->kv_type)->name);
		goto fail;
	}
	/* a Q8_0 cache is read by flash attention only, in rows */
	e->v_elem_bytes = e->kv_type == Q42_DTYPE_Q8_0 ? 0 : q42_dtype_get(e->kv_type)->block_bytes;
	e->att_kq = e->att_kq_one = e->att_kqv = e->att_kqv_one = e->kvk->vec_dot;
	/* the llama.cpp row ops in their fastest bit-identical form */
	const bool llama = q42_arith_is_llama(e->arith);
	e->cops = q42_llamacpp_ops_get_variant(q42_arith_variant(e->arith), e->isa);
	e->softmax = llama ? e->cops->softmax : q42_op_softmax;
	e->swiglu = llama ? e->cops->swiglu : q42_op_swiglu;
	e->conv_dot = llama ? e->cops->conv_dot : q42_op_conv_dot;
	e->glu = e->arch->ffn_act != Q42_FFN_SWIGLU ? (llama ? e->cops->geglu : q42_op_geglu) : e->swiglu;
	e->add = e->cops->add;
	if (llama && e->kv_type == Q42_DTYPE_F32) {
		/* K rows are head_dim long, unpadded: ggml_vec_dot_f32 on that
		 * length (the padded form only where they are whole 64-steps) */
		const bool k_whole = e->hd_k % 64 == 0;
		e->att_kq = e->att_kq_one = k_whole ? e->cops->dot_f32 : e->cops->dot_f32_vd;
		e->att_kq_rows = e->att_kq_one_rows = k_whole ? e->cops->dot_f32_rows : NULL;
		e->att_kqv_one = e->cops->dot_f32;
		e->att_kqv = e->cops->dot_f32_lanes;
		e->att_kqv_one_rows = e->cops->dot_f32_vrows;
		e->att_kqv_rows = e->cops->dot_f32_lanes_vrows;
		e->att_kqv_multi = e->cops->dot_f32_lanes_vrows_multi;
		e->att_kq_multi = k_whole ? e->cops->dot_f32_vrows_multi : NULL;
	} else if (llama && e->kv_type == Q42_DTYPE_F16) {
		att_f16_products(e);
	}
	/* llama.cpp stores a Q8_0 cache with its CPU quantizer (set_rows'
	 * from_float) */
	e->kv_quantize = e->kv_type == Q42_DTYPE_Q8_0				    ? e->cops->quantize_q8_0
			 : llama && e->kv_type == Q42_DTYPE_F16 ? e->cops->quantize_f16
								: e->kvq->quantize;
	e->k_row_bytes = dtype_row_bytes(e->kv_type, e->hd_k);
	e->v_row_bytes = dtype_row_bytes(e->kv_type, e->hd_v);

	rc = bind_tensors(e, err);
	if (rc == Q42_OK)
		rc = q42_engine_lora_bind(e, o, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "%s", q42_mount_path(m));
		goto fail;
	}
	rc = open_backend(e, o, err);
	if (rc != Q42_OK)
		goto fail;
	nth = o->n_threads ? o->n_threads : q42_pool_default_threads();
	plan_buffers(e, nth, &need);
	if (plan != NULL) {
		*plan = need;
		goto fail; /* rc is Q42_OK: the engine goes, the figures stay */
	}
	if (o->max_memory != 0 && need.total > o->max_memory) {
		char t[32], w[32], p[32], k[32], a[32], x[32];
		rc = q42_err_set(err, Q42_ENOMEM,
				 "%s: needs %llu bytes (%s: weights %s mapped, %s repacked, KV cache %s "
				 "for %u positions, activations %s, scratch %s), more than the limit of "
				 "%llu bytes (--max-memory; try --ctx or --batch)",
				 q42_mount_path(m), (unsigned long long)need.total,
				 fmt_mib(t, sizeof t, need.total), fmt_mib(w, sizeof w, need.weights),
				 fmt_mib(p, sizeof p, need.packed), fmt_mib(k, sizeof k, need.kv), e->n_ctx,
				 fmt_mib(a, sizeof a, need.act), fmt_mib(x, sizeof x, need.scratch),
				 (unsigned long long)o->max_memory);
		goto fail;
	}
	rc = q42_pool_open(&e->pool, nth, err);
	if (rc != Q42_OK)
		goto fail;
	rc = pack_weights(e, err);
	if (rc == Q42_OK && e->be_state == NULL)
		rc = q42_engine_lora_pack(e, err);
	if (rc != Q42_OK)
		goto fail;
	rc = alloc_buffers(e, err);
	if (rc != Q42_OK)
		goto fail;
	*out = e;
	return Q42_OK;
fail:
	q42_engine_close(e);
	return rc;
}

int q42_engine_open(q42_engine **out, q42_mount *m, const q42_engine_opts *o, q42_err *err)
{
	return engine_open(out, m, o, NULL, err);
}

int q42_engine_memory(q42_mount *m, const q42_engine_opts *o, q42_engine_mem *mem, q42_err *err)
{
	q42_engine *e;
	return engine_open(&e, m, o, mem, err);
}

void q42_engine_close(q42_engine *e)
{
	if (e == NULL)
		return;
	if (e->be_state != NULL)
		e->be->close(e->be_state);
	free(e->bound_layers);
	q42_engine_lora_free(e);
	q42_pool_close(e->pool);
	for (uint32_t i = 0; i < e->n_ts; i++) {
		free(e->ts[i].moe_g);
		free(e->ts[i].moe_u);
		free(e->ts[i].moe_q);
		free(e->ts[i].scores);
		free(e->ts[i].qq);
		free(e->ts[i].pq);
		free(e->ts[i].rope);
		free(e->ts[i].vrow);
		free(e->ts[i].lora);
		free(e->ts[i].fa);
	}
	free(e->ts);
	for (uint32_t i = 0; i < e->n_act; i++)
		free(e->act[i].buf);
	free(e->kc);
	free(e->vc);
	free(e->x);
	free(e->xb);
	free(e->ao);
	free(e->q);
	free(e->k);
	free(e->v);
	free(e->att);
	free(e->hg);
	free(e->hu);
	free(e->qkv);
	free(e->conv_hist);
	free(e->moe_logits);
	free(e->moe_w);
	free(e->moe_id);
	free(e->moe_y);
	free(e->logits);
	free(e->embd);
	free(e->embd_tmp);
	free(e->ones);
	free(e->top1);
	free((void *)e->v_ready);
	free(e->pack_mem);
	free(e->embd_row);
	free(e->vec_copy);
	free(e->layers);
	free(e);
}

void q42_engine_reset(q42_engine *e)
{
	e->n_past = 0;
}

int q42_engine_truncate(q42_engine *e, uint32_t n_past, q42_err *err)
{
	if (n_past > e->n_past)
		return q42_err_set(err, Q42_EARG, "truncate: position %u is past the cache (%u)",
				   n_past, e->n_past);
	e->n_past = n_past;
	return Q42_OK;
}

static int eval(q42_engine *e, const int32_t *ids, uint32_t n, int32_t *top1, q42_err *err)
{
	if (n == 0)
		return q42_err_set(err, Q42_EARG, "eval: no tokens");
	if (!e->causal)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "architecture %s with bidirectional attention is an encoder: it computes embeddings (q42run --embed), not next-token logits",
				   e->arch->name);
	if (n > e->n_ctx - e->n_past)
		return q42_err_set(err, Q42_EARG,
				   "eval: %u tokens at position %u do not fit a context of %u", n,
				   e->n_past, e->n_ctx);
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] < 0 || (uint32_t)ids[i] >= e->n_vocab)
			return q42_err_set(err, Q42_EARG,
					   "eval: token id %d at index %u outside the vocabulary (0..%u)",
					   ids[i], i, e->n_vocab - 1);
	for (uint32_t i = 0; i < n; i += e->n_batch) {
		uint32_t c = n - i < e->n_batch ? n - i : e->n_batch;
		if (e->be_state != NULL) {
			const uint32_t pos0 = e->n_past;
			int rc = e->be->eval(e->be_state, ids + i, c, pos0, i + c == n, e->logits,
					     &e->dev_top1, err);
			if (rc != Q42_OK) {
				e->n_past = pos0 - i; /* as before this call */
				return rc;
			}
			e->n_past += c;
			if (i + c == n && top1 != NULL)
				*top1 = e->dev_top1;
			continue;
		}
		q42_forward(e, ids + i, c, i + c == n, i + c == n ? top1 : NULL);
	}
	return Q42_OK;
}

int q42_engine_eval(q42_engine *e, const int32_t *ids, uint32_t n, q42_err *err)
{
	return eval(e, ids, n, NULL, err);
}

int q42_engine_eval_top1(q42_engine *e, const int32_t *ids, uint32_t n, int32_t *top1,
			 q42_err *err)
{
	return eval(e, ids, n, top1, err);
}

const float *q42_engine_logits(const q42_engine *e) { return e->logits; }
uint32_t q42_engine_n_past(const q42_engine *e) { return e->n_past; }
uint32_t q42_engine_n_ctx(const q42_engine *e) { return e->n_ctx; }
uint32_t q42_engine_n_batch(const q42_engine *e) { return e->n_batch; }
uint32_t q42_engine_n_vocab(const q42_engine *e) { return e->n_vocab; }
uint32_t q42_engine_n_threads(const q42_engine *e) { return q42_pool_size(e->pool); }
uint32_t q42_engine_kv_type(const q42_engine *e) { return e->kv_type; }
bool q42_engine_flash_attn(const q42_engine *e) { return e->fa; }
uint32_t q42_engine_flash_tile(const q42_engine *e)
{
	/* llama.cpp tiles where head_dim_v is a whole number of its f32
	 * vectors (GGML_F32_EPR: 16 in the AVX-512 builds, 8 in haswell's,
	 * tinyBLAS's width) */
	return e->fa && e->kv_type == Q42_DTYPE_F16 && e->hd_v % e->cops->tb_lanes == 0 ? Q42_FA_TILE : 0;
}
enum q42_isa q42_engine_isa(const q42_engine *e) { return e->isa; }
enum q42_arith q42_engine_arith(const q42_engine *e) { return e->arith; }

bool q42_arith_from_name(const char *name, enum q42_arith *out)
{
	static const struct {
		const char *name;
		enum q42_arith arith;
	} names[] = {{"auto", Q42_ARITH_AUTO}, {"portable", Q42_ARITH_LLAMACPP}, {"llamacpp", Q42_ARITH_LLAMACPP},
		     {"sapphirerapids", Q42_ARITH_LLAMACPP}, {"zen4", Q42_ARITH_ZEN4}, {"ggml", Q42_ARITH_GGML},
		     /* llama.cpp's other x86 variants: cooperlake has zen4's bits,
		      * skylakex, cascadelake and cannonlake icelake's
		      * (tests/golden/variants) */
		     {"cooperlake", Q42_ARITH_ZEN4}, {"icelake", Q42_ARITH_ICELAKE}, {"skylakex", Q42_ARITH_ICELAKE},
		     {"cascadelake", Q42_ARITH_ICELAKE}, {"cannonlake", Q42_ARITH_ICELAKE},
		     /* alderlake runs haswell's float code, its integer sums
		      * through AVX-VNNI (exact either way): its disassembly
		      * against haswell's (tests/tools/variant_disasm.py) */
		     {"haswell", Q42_ARITH_HASWELL}, {"alderlake", Q42_ARITH_HASWELL}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i].name) == 0) {
			*out = names[i].arith;
			return true;
		}
	return false;
}

enum q42_arith q42_arith_resolve(enum q42_arith a)
{
	if (a != Q42_ARITH_AUTO)
		return a;
	switch (q42_llamacpp_variant_detect()) {
	case Q42_LLAMACPP_ZEN4: return Q42_ARITH_ZEN4;
	case Q42_LLAMACPP_HASWELL: return Q42_ARITH_HASWELL;
	case Q42_LLAMACPP_ICELAKE: return Q42_ARITH_ICELAKE;
	default: return Q42_ARITH_LLAMACPP;
	}
}

const char *q42_arith_name(enum q42_arith a)
{
	static const char *const names[] = {
		[Q42_ARITH_LLAMACPP] = "llamacpp", [Q42_ARITH_GGML] = "ggml",
		[Q42_ARITH_ZEN4] = "zen4", [Q42_ARITH_AUTO] = "auto", [Q42_ARITH_HASWELL] = "haswell",
		[Q42_ARITH_ICELAKE] = "icelake"};
	return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "unknown";
}
const q42_arch *q42_engine_arch(const q42_engine *e) { return e->arch; }

enum q42_backend q42_engine_backend(const q42_engine *e)
{
	return e->be_state != NULL ? Q42_BACKEND_VULKAN : Q42_BACKEND_CPU;
}

const char *q42_engine_device_name(const q42_engine *e)
{
	return e->be_state != NULL ? e->be->device_name(e->be_state) : "cpu";
}

const char *q42_backend_name(enum q42_backend b)
{
	switch (b) {
	case Q42_BACKEND_CPU: return "cpu";
	case Q42_BACKEND_VULKAN: return "vulkan";
	case Q42_BACKEND_AUTO: return "auto";
	}
	return "unknown";
}

int q42_backend_check(const q42_backend_ops *ops, enum q42_backend b, int32_t device,
		      q42_err *err)
{
	if (b != Q42_BACKEND_VULKAN)
		return Q42_OK;
	if (ops == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "backend %s: none given",
				   q42_backend_name(b));
	return ops->check(device, err);
}

uint32_t q42_engine_n_fallbacks(const q42_engine *e)
{
	return e->be_state != NULL ? e->be->n_fallbacks(e->be_state) : 0;
}

const char *q42_engine_fallback_note(const q42_engine *e)
{
	return e->be_state != NULL ? e->be->fallback_note(e->be_state) : NULL;
}

int32_t q42_engine_top1(const q42_engine *e)
{
	return e->dev_top1 >= 0 ? e->dev_top1 : q42_argmax(e->logits, e->n_vocab);
}

double q42_engine_device_ms(const q42_engine *e)
{
	return e->be_state != NULL ? e->be->device_ms(e->be_state) : 0.0;
}
uint64_t q42_engine_n_params(const q42_engine *e) { return e->n_params; }

void q42_engine_phase_clock(q42_engine *e, bool on)
{
	if (on)
		memset(e->phase_ns, 0, sizeof e->phase_ns);
	e->phase_clock = on;
}

uint64_t q42_engine_phase_ns(const q42_engine *e, enum q42_phase p)
{
	return p < Q42_PHASE_N_ ? e->phase_ns[p] : 0;
}

uint32_t q42_engine_n_spans_max(const q42_engine *e)
{
	return e->n_layer * (Q42_W_COUNT_ + 3 * e->n_expert_used) + 1;
}

uint32_t q42_engine_stream_spans(const q42_engine *e, const uint8_t **p, uint64_t *len,
				 uint32_t cap)
{
	uint32_t n = 0;
	for (uint32_t l = 0; l < e->n_layer; l++)
		for (uint32_t s = Q42_W_LAYER_FIRST_; s < Q42_W_COUNT_; s++) {
			const q42_weight *w = &e->layers[l].w[s];
			/* an expert stack: as many of its matrices as a token
			 * routes to (the first ones stand for them) */
			const uint32_t k = w->expert_bytes != 0 ? e->n_expert_used : 1;
			for (uint32_t i = 0; w->data != NULL && w->k != NULL && i < k; i++) {
				if (n < cap) {
					p[n] = w->data + i * w->expert_bytes;
					len[n] = w->row_bytes * (uint64_t)w->n_out;
				}
				n++;
			}
		}
	if (n < cap) {
		p[n] = e->g[Q42_W_OUTPUT].data;
		len[n] = e->g[Q42_W_OUTPUT].row_bytes * (uint64_t)e->g[Q42_W_OUTPUT].n_out;
	}
	return n + 1;
}

q42_pool *q42_engine_pool(const q42_engine *e) { return e->pool; }

static uint64_t usable(const void *p)
{
	return p != NULL ? (uint64_t)malloc_usable_size((void *)(uintptr_t)p) : 0;
}

/* Checklist: the buffers alloc_buffers() allocates (plan_buffers() computes
 * the same before they are). */
void q42_engine_buffer_bytes(const q42_engine *e, uint64_t *kv, uint64_t *act, uint64_t *scratch)
{
	const void *a[] = {e->x, e->xb, e->q, e->k, e->v, e->att, e->ao, e->hg, e->hu,
			   e->qkv, e->top1, e->logits, e->moe_logits, e->moe_w, e->moe_id, e->moe_y,
			   e->embd, e->embd_tmp, e->ones, (const void *)e->v_ready};
	*kv = usable(e->kc) + usable(e->vc) + usable(e->conv_hist);
	*act = 0;
	for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
		*act += usable(a[i]);
	for (uint32_t i = 0; i < e->n_act; i++)
		*act += usable(e->act[i].buf);
	*scratch = usable(e->ts);
	for (uint32_t i = 0; i < e->n_ts; i++)
		*scratch += usable(e->ts[i].scores) + usable(e->ts[i].qq) + usable(e->ts[i].pq) +
			    usable(e->ts[i].rope) + usable(e->ts[i].moe_g) + usable(e->ts[i].moe_u) +
			    usable(e->ts[i].moe_q) + usable(e->ts[i].vrow) + usable(e->ts[i].lora) +
			    usable(e->ts[i].fa);
}
