/* q42_engine_impl.h -- internal to lib/engine: the engine's state, shared
 * by q42_engine.c (binding and allocation) and q42_forward.c (the forward
 * pass). Never installed; nothing outside lib/engine includes it (a
 * backend sees the binding as q42_bound_model, q42_backend.h).
 */
#ifndef Q42_ENGINE_IMPL_H
#define Q42_ENGINE_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/q42_engine.h"
#include "engine/q42_pool.h"
#include "kernels/q42_llamacpp.h"

struct q42_lora_w;

/* One bound weight: a view into the mapping plus its kernels. */
typedef struct q42_weight {
	const uint8_t *data;         /* NULL when the slot is empty */
	uint32_t dtype;
	const q42_type_kernels *k;   /* matrices: kernels of dtype */
	/* matrices: the product actually used -- k's vec_dot, or the
	 * llama.cpp x86 kernel (kernels/q42_llamacpp.h) -- and the quantizer of
	 * its activations (NULL: f32 rows are read as they are) */
	void (*dot)(int64_t n, float *out, const void *w, const void *x);
	/* many rows and tokens per call, each element rounded as dot (NULL:
	 * the product has only dot) */
	q42_llamacpp_rows_fn rows;
	void (*aq)(const float *src, void *dst, int64_t n);
	uint32_t vdt;                /* matrices: vec_dot_type of dot */
	uint32_t act;                /* matrices: index of the activation slot for vdt */
	int64_t n_in;                /* ne[0] */
	int64_t n_out;               /* ne[1] (1 for vectors) */
	uint64_t row_bytes;
	/* non-NULL: data points here, a copy repacked at load for rows
	 * (kernels/q42_pack.h) in the engine's pack_mem; file is then where
	 * the matrix lies in the mapping */
	void *packed;
	const uint8_t *file;
	/* a stack of expert matrices (ffn_*_exps): data, n_out and the
	 * product are expert 0's, expert i starts i * expert_bytes later;
	 * 0 for every other weight */
	uint64_t expert_bytes;
	/* packed: row r back in the file's bytes (q42_llamacpp_packed.row) */
	void (*packed_row)(void *dst, const void *p, int64_t n_in, int64_t n_out, int64_t r);
	/* the adapters on this weight, in the order they apply (NULL: none) */
	struct q42_lora_w *lora;
} q42_weight;

/* One adapter's pair on one weight (q42_engine_lora.c): its product adds
 * scale * B.(A.x) to W.x, before any bias, as llama.cpp's build_lora_mm.
 * A and B are bound as the adapter file holds them, with the products
 * llama.cpp gives a matrix in its plain CPU buffer (adapters never go to
 * a repacking buffer); a lone token reads copies laid out for its
 * kernels (at, bt: the same arithmetic), q42_engine_lora_pack. */
typedef struct q42_lora_w {
	q42_weight a;        /* [n_in, rank]; token embedding: [rank, n_vocab], rows looked up */
	q42_weight b;        /* [rank, n_out] */
	float scale;         /* q42_lora_pair_scale */
	float *ax;           /* n_batch rows of rank: A.x of the current input */
	uint8_t *axq;        /* ax in b's vec_dot_type (NULL: b reads ax) */
	uint64_t axq_stride;
	/* b for a lone token in q42_llamacpp_pack_f32_t16's layout, in the
	 * engine's lora_mem (NULL: op_lora_up's row products) */
	const float *bt;
	/* a for a lone token as Q42_LORA_A_ROWS-row groups, each one stream:
	 * the rows' 64-element steps side by side, step after step (the
	 * q42_llamacpp_vlayout of Q42_LORA_A_LAYOUT), in lora_mem (NULL: a's
	 * row products) */
	const float *at;
	struct q42_lora_w *next;
} q42_lora_w;

/* Whether arith is one of llama.cpp's (every mode but GGML), and the CPU
 * variant of llama.cpp it follows. */
static inline bool q42_arith_is_llama(enum q42_arith a)
{
	return a != Q42_ARITH_GGML;
}

static inline enum q42_llamacpp_variant q42_arith_variant(enum q42_arith a)
{
	return a == Q42_ARITH_ZEN4 ? Q42_LLAMACPP_ZEN4
	       : a == Q42_ARITH_HASWELL ? Q42_LLAMACPP_HASWELL
	       : a == Q42_ARITH_ICELAKE ? Q42_LLAMACPP_ICELAKE
					: Q42_LLAMACPP_SAPPHIRERAPIDS;
}

/* The product a matrix uses, into w's dot, rows, vdt and aq (w's dtype, k,
 * n_in and n_out set): generic ggml kernels, or under one of llama.cpp's
 * arithmetics (arith resolved) its x86 ones where libq42 has them for the
 * type, shape and buffer llama.cpp would give the matrix. The engine's
 * choice for every weight, and q42_matvec's. */
void q42_weight_choose_product(q42_weight *w, enum q42_arith arith, enum q42_isa isa,
			       enum q42_llamacpp_place place);

typedef struct q42_layer {
	q42_weight w[Q42_W_COUNT_];  /* only the per-layer slots are used */
	uint32_t n_head_kv;
	uint32_t n_ff;
	/* sliding-window attention: a query sees the n_swa positions up to
	 * its own only (0: every position) */
	uint32_t n_swa;
	/* RoPE of this layer (a sliding-window layer has its own base) */
	float rope_scale, theta_scale;
	/* a short-convolution layer (lfm2; n_head_kv 0): its rows of
	 * conv_hist are the conv_idx-th */
	bool conv;
	uint32_t conv_idx;
	/* a routed FFN instead of the dense one (lfm2moe) */
	bool moe;
} q42_layer;

#define Q42_ACT_SLOTS 4

/* Activations quantized to one vec_dot_type by one quantizer, reused by
 * every product of the same input (q, k, v share one; gate and up share
 * one). */
typedef struct q42_act {
	uint32_t type;
	void (*quantize)(const float *src, void *dst, int64_t n); /* NULL for F32 */
	uint8_t *buf;                /* n_batch rows of the widest input */
	const uint8_t *rows;         /* buf, or the f32 source itself for F32 */
	uint64_t stride;             /* bytes between rows in rows */
} q42_act;

/* A pass's attention takes the tokens of a head Q42_ATT_BLOCK at a time
 * where the V product has a form for several of them (q42_forward.c's
 * att_block): each V row is read once for the block. */
#define Q42_ATT_BLOCK 4

/* Per-thread attention scratch. */
typedef struct q42_tscratch {
	float *scores;               /* Q42_ATT_BLOCK rows of n_ctx */
	uint8_t *qq;                 /* one query head in the cache's vec_dot_type */
	uint8_t *pq;                 /* n_ctx probabilities in the cache's vec_dot_type */
	float *rope;                 /* n_rot: cos, sin pairs for one position */
	uint8_t *vrow;               /* n_ctx: one V row gathered (one-row products) */
	float *moe_g, *moe_u;        /* n_ff_exp: one expert's gate and up rows */
	uint8_t *moe_q;              /* their SwiGLU in the down matrix's vec_dot_type */
	float *lora;                 /* Q42_TILE_ROWS x n_batch: rows of B.(A.x) (with adapters) */
	float *fa;                   /* flash attention's tile or heads (q42_forward.c) */
} q42_tscratch;

/* The widest short convolution the engine runs (lfm2's is 3). */
#define Q42_CONV_L_MAX 64u

/* The most token types a BERT model's token_types may hold. */
#define Q42_TOKEN_TYPES_MAX 16u

/* Positions per block of the V cache (q42_forward.c): one 64-element step
 * of the attention products; and the most per chunk of the cache. */
#define Q42_V_BLOCK 64u
#define Q42_V_CHUNK 512u

/* Rows of a weight per tile of a matrix-product job: a multiple of 8 (the
 * SIMD row kernels' group) and of 16 (the SwiGLU kernels' chunk). A job
 * counts its work in tiles and hands out runs of them: at least
 * Q42_TILE_RUN in a pass of several tokens (longer, a few per thread, in
 * q42_forward.c), shrinking runs down to single tiles in a one-token
 * product, so that the threads finish within a small tile of each other. */
#define Q42_TILE_ROWS 16u
#define Q42_TILE_RUN 4u

/* The largest logit of one tile of the output rows (NaN never counts). */
typedef struct q42_top1 {
	float v;
	int32_t id;                  /* -1: the tile holds only NaN */
} q42_top1;

struct q42_engine {
	q42_mount *m;
	const q42_arch *arch;
	enum q42_isa isa;
	enum q42_arith arith; /* resolved: never Q42_ARITH_AUTO */
	q42_pool *pool;

	/* dimensions */
	uint32_t n_vocab, n_embd, n_layer, n_head, n_head_kv_max, n_ff_max;
	uint32_t hd_k, hd_v, n_rot, n_ctx, n_batch;
	float eps, rope_base, rope_scale, theta_scale, kq_scale;
	/* RoPE's magnitude (<arch>.rope.scaling.attn_factor, else 1) and the
	 * frequency factors in use (rope_freqs, or LongRoPE's long or short
	 * ones by the context; data NULL: none) */
	float rope_mscale;
	const q42_weight *rope_ff;
	float q_scale;      /* arch->q_prescale: q's factor after RoPE */
	float embd_scale;   /* arch->embd_scale: sqrt(n_embd) */
	float final_softcap; /* 0: none */
	const q42_weight *final_norm; /* output_norm, or lfm2's token_embd_norm */
	/* false: every position of a pass attends to every other (an
	 * encoder; a pass is then one whole sequence from position 0) */
	bool causal;
	/* a sliding window of n_swa is symmetric: +-n_swa/2 around the query */
	bool swa_symmetric;
	/* a short convolution's window reaches conv_ahead positions past the
	 * token's own (0 when causal; (L-1)/2 centred otherwise) */
	uint32_t conv_ahead;
	/* embeddings: the pooling the model asks for (enum q42_pooling, or 4
	 * for llama.cpp's rank, which the engine does not compute), the rows
	 * of dense_2 (0: none), and the rows out: n_batch x embd_width floats
	 * (n_embd or n_dense_2, whichever is wider), and a second such buffer
	 * between the projections */
	uint32_t pooling, n_dense_2, embd_width;
	float *embd, *embd_tmp;
	/* learned positions: rows of position_embd (the training context) */
	uint32_t n_pos;
	/* Q42_FFN_GELU: n_ff_max ones, the gate GeGLU multiplies by (exact) */
	float *ones;
	/* short convolutions: width L (<arch>.shortconv.l_cache), how many
	 * layers, and per layer and position the n_embd values B * x that
	 * enter the convolution, [conv layer][n_ctx][n_embd] -- the state
	 * beside K and V: a position's window is read from the positions
	 * before it, so truncating the cache truncates it too */
	uint32_t conv_l, n_conv;         /* conv_l <= Q42_CONV_L_MAX */
	float *conv_hist;
	float (*conv_dot)(int64_t n, const float *s, const float *c);
	/* routed FFN: experts, how many each token uses, rows of one
	 * expert's gate and up; per token of a pass the router's logits
	 * [n_expert], the chosen experts and their weights [n_expert_used],
	 * and each chosen expert's weighted output [n_expert_used][n_embd] */
	uint32_t n_expert, n_expert_used, n_ff_exp;
	float *moe_logits, *moe_w, *moe_y;
	int32_t *moe_id;
	uint64_t n_params;

	q42_weight g[Q42_W_LAYER_FIRST_]; /* global weights */
	bool tied;                         /* output = token embedding */
	void *vec_copy;                    /* the vectors, copied when matrices were repacked */
	void *pack_mem;                    /* the repacked matrices (q42_weight.packed) */
	bool small_pages;                  /* q42_engine_opts.small_pages */
	/* Wall time of two phases of the pass, summed while phase_clock is
	 * set (q42run --bench): the matrix-product jobs, and attention with
	 * the RoPE and K/V stores before it. Two clock reads a phase. */
	bool phase_clock;
	uint64_t phase_ns[Q42_PHASE_N_];
	uint8_t *embd_row;                 /* tied and repacked: one embedding row, rebuilt */
	q42_layer *layers;
	/* the adapters' pairs (q42_engine_lora.c), each linked from its weight */
	q42_lora_w *lora_w;
	uint32_t n_lora_w;
	void *lora_mem; /* their A factors and packed B (q42_engine_lora_pack) */
	q42_engine_lora lora[Q42_LORA_MAX]; /* as opened, for records */
	uint32_t n_lora;

	/* KV cache, in chunks of kv_chunk positions (q42_forward.c): K
	 * [chunk][layer][kv head][pos][hd_k] rows, V transposed in blocks
	 * [chunk][layer][kv head][block][dim][pos % 64], or in rows as K under
	 * flash attention, both of kv_type (Q8_0 only under flash attention:
	 * its blocks keep it in rows) */
	uint32_t kv_type;
	uint32_t kv_chunk;            /* cache positions per chunk (q42_forward.c) */
	q42_llamacpp_vlayout v_lay;     /* a kv head's V rows, for the products */
	const q42_type_kernels *kvk;   /* kernels of kv_type (vec_dot) */
	const q42_type_kernels *kvq;   /* kernels of its vec_dot_type (quantize) */
	/* f32 rows into kv_type (K, V, and q and the softmax row for the
	 * products): kvq->quantize, or the llamacpp table's SIMD f16
	 * conversion, which gives the same bits faster */
	void (*kv_quantize)(const float *src, void *dst, int64_t n);
	uint64_t k_row_bytes, v_row_bytes;
	uint64_t v_elem_bytes; /* of the transposed layout (F32, F16) */
	/* attention products K.q and V.p, for passes of several tokens and
	 * of one (kvk->vec_dot, or the llama.cpp f32 and f16 kernels) */
	void (*att_kq)(int64_t n, float *out, const void *w, const void *x);
	void (*att_kq_one)(int64_t n, float *out, const void *w, const void *x);
	void (*att_kqv)(int64_t n, float *out, const void *w, const void *x);
	void (*att_kqv_one)(int64_t n, float *out, const void *w, const void *x);
	/* the same over many rows per call where a kernel exists (llama.cpp
	 * arithmetic), else NULL and the one-row functions run per row */
	q42_llamacpp_dots_fn att_kq_rows, att_kq_one_rows;
	q42_llamacpp_vdots_fn att_kqv_rows, att_kqv_one_rows; /* over the V cache's blocks */
	/* att_kq_rows and att_kqv_rows for a block of tokens, or NULL */
	q42_llamacpp_vdots_multi_fn att_kq_multi, att_kqv_multi;
	/* row ops that differ between the arithmetics (kernels/q42_ops.h or
	 * kernels/q42_llamacpp.h) */
	void (*softmax)(int64_t n, float *y, const float *x);
	void (*swiglu)(int64_t n, float *y, const float *x, const float *g);
	/* the architecture's gate: swiglu, or GeGLU */
	void (*glu)(int64_t n, float *y, const float *x, const float *g);
	void (*add)(int64_t n, float *y, const float *a, const float *b);
	const q42_llamacpp_ops *cops; /* llama.cpp row ops for isa (RoPE) */
	uint8_t *kc, *vc;
	/* flash attention (q42_engine_opts.flash_attn): V is then stored in
	 * rows, as K is, and attention takes llama.cpp's flash forms */
	bool fa;
	/* over a Q8_0 cache, llama.cpp rotates q and k (k_rot values at a
	 * time), v and the attention's output (v_rot at a time) by a
	 * Walsh-Hadamard matrix (q42_llamacpp_fwht); 0: no rotation */
	uint32_t k_rot, v_rot;
	uint32_t n_past;

	/* activations, n_batch rows each */
	float *x;      /* residual stream [n_embd] */
	float *xb;     /* normed input of a block [n_embd] */
	float *q;      /* [n_head * hd_k] */
	float *k;      /* [n_head_kv * hd_k] */
	float *v;      /* [n_head_kv * hd_v] */
	float *att;    /* [n_head * hd_v] */
	float *ao;     /* attention / ffn output [n_embd] */
	float *hg;     /* [n_ff] gate, then swiglu */
	float *hu;     /* [n_ff] up; [2 n_ff] gate and up of a fused ffn_up */
	float *qkv;    /* [n_head * hd_k + 2 n_head_kv * hd_k]: a fused attn_qkv's rows;
			* [3 n_embd]: a short convolution's B, C, x */
	float *logits; /* [n_vocab] */
	q42_top1 *top1; /* one per tile of the output rows */
	uint32_t n_act;
	q42_act act[Q42_ACT_SLOTS];
	q42_tscratch *ts;
	uint32_t n_ts;
	/* one-token attention (q42_forward.c, att_one): v_ready[h] is set to
	 * att_seq, the pass's number, once kv head h's new V column is in the
	 * cache */
	_Atomic uint32_t *v_ready;
	uint32_t att_seq;

	/* the backend that runs the forward pass when it is not this CPU
	 * (q42_backend.h): it owns the cache and activations then, and fills
	 * logits and top1; be_state NULL on the CPU */
	const q42_backend_ops *be;
	void *be_state;
	q42_bound_model bound;        /* what be was opened with */
	q42_bound_layer *bound_layers;
	q42_bound_lora *bound_lora;   /* n_lora_w, each linked from its bound weight */
	int32_t dev_top1; /* device argmax of logits; -1 when not computed there */
};

/* The activation slot for w's vec_dot_type and quantizer, added when new;
 * *ok false when all Q42_ACT_SLOTS are taken. */
uint32_t q42_engine_act_slot(q42_engine *e, const q42_weight *w, bool *ok);

/* Bind the adapters of o to the weights bound so far (after the model's
 * tensors, before the buffers): checks, products, activation slots and
 * the A.x buffers. Q42_EFORMAT or Q42_EUNSUPPORTED naming the adapter and
 * tensor that do not fit. q42_engine_lora_free releases them. */
int q42_engine_lora_bind(q42_engine *e, const q42_engine_opts *o, q42_err *err);
/* The adapters as a backend sees them: e->bound_lora, each list linked
 * from the bound weight (bw) of the weight w it adapts. */
int q42_engine_lora_bound(q42_engine *e, const q42_weight *w, q42_bound_weight *bw, q42_err *err);
#define Q42_LORA_A_ROWS 4u
/* stride, step, chunk, per of a group of at */
#define Q42_LORA_A_LAYOUT {256u, 0u, 256u * Q42_LORA_A_ROWS, 1u}

/* Copies the pairs' factors into one arena on 2 MiB pages, in the order
 * a pass reads them, with each B that a lone token can read packed
 * (q42_lora_w.bt); the CPU pass only. */
int q42_engine_lora_pack(q42_engine *e, q42_err *err);
void q42_engine_lora_free(q42_engine *e);
/* bytes on 2 MiB boundaries, advised as the engine's big allocations
 * (q42_engine.c says why); free() releases it. NULL: out of memory. */
void *q42_engine_huge_alloc(const q42_engine *e, uint64_t bytes);

/* The row index of a position in the cache's rows: per chunk of kv_chunk
 * positions, each layer and kv head's rows of those positions in order
 * (the chunks of the V cache, below). */
static inline uint64_t q42_engine_kv_index(const q42_engine *e, uint32_t l, uint32_t kvh, uint32_t pos)
{
	const uint64_t c = pos / e->kv_chunk;
	return ((c * e->n_layer + l) * e->n_head_kv_max + kvh) * e->kv_chunk + pos % e->kv_chunk;
}

/* K rows. */
static inline uint8_t *q42_engine_k_row(const q42_engine *e, uint32_t l, uint32_t kvh, uint32_t pos)
{
	return e->kc + q42_engine_kv_index(e, l, kvh, pos) * e->k_row_bytes;
}

/* V rows, where flash attention stores V as K (the one-at-a-time form
 * reads a position's whole V row). */
static inline uint8_t *q42_engine_v_row(const q42_engine *e, uint32_t l, uint32_t kvh, uint32_t pos)
{
	return e->vc + q42_engine_kv_index(e, l, kvh, pos) * e->v_row_bytes;
}

/* Otherwise V is stored transposed, in blocks of Q42_V_BLOCK positions: per layer
 * and kv head, block b holds positions 64 b .. 64 b + 63 of every
 * dimension, dimension d's run of them at element 64 d. The blocks go in
 * chunks of kv_chunk positions (at most Q42_V_CHUNK): chunk c holds block
 * c of every layer and kv head, those of one layer and kv head adjacent.
 * The products read a dimension's row step by step (q42_llamacpp_vlayout:
 * a step is one run).
 * - Why blocks, not one row of n_ctx positions per dimension: a decode
 *   step stores one element in each of hd_v rows of each kv head, and
 *   rows n_ctx elements apart are a power-of-two stride that DRAM serves
 *   about one line at a time. In blocks the new column lies in one
 *   block (8 KiB in f16), and a head's V reads run through whole blocks
 *   in address order; attention took about a fifth less time
 *   (docs/perf/huge-pages.md).
 * - Why chunks: the cache lies on 2 MiB pages (q42_engine.c), committed
 *   whole as they are first written; with each layer and kv head's blocks
 *   n_ctx long, the first token touched every page. In chunks the pages
 *   of positions not yet reached stay uncommitted, which lowers peak RSS
 *   and the time to first token and leaves decode as it was
 *   (docs/perf/huge-pages.md). K rows go in the same chunks. */
static inline uint8_t *q42_engine_v_at(const q42_engine *e, uint32_t l, uint32_t kvh, uint32_t d, uint32_t pos)
{
	if (e->fa)
		return q42_engine_v_row(e, l, kvh, pos) + (uint64_t)d * e->v_elem_bytes;
	const uint64_t per = e->kv_chunk / Q42_V_BLOCK, c = pos / e->kv_chunk;
	const uint64_t blk = ((c * e->n_layer + l) * e->n_head_kv_max + kvh) * per + pos % e->kv_chunk / Q42_V_BLOCK;
	return e->vc + ((blk * e->hd_v + d) * Q42_V_BLOCK + pos % Q42_V_BLOCK) * e->v_elem_bytes;
}

/* The forward pass over n tokens at positions n_past.. (n <= n_batch);
 * computes the logits of the last one when want_logits, and then, when
 * top1 is not NULL, the id q42_argmax would pick from them. */
void q42_forward(q42_engine *e, const int32_t *ids, uint32_t n, bool want_logits, int32_t *top1);

/* The pass over n tokens at positions n_past.. keeping every row: the
 * final norm of each in xb (n x n_embd). Embeddings. */
void q42_forward_hidden(q42_engine *e, const int32_t *ids, uint32_t n);

/* out (n x w->n_out) = in (n x w->n_in) W^T (+ bias, NULL: none), in the
 * engine's rounding for w, split between its threads. */
void q42_forward_linear(q42_engine *e, const q42_weight *w, const q42_weight *bias,
			const float *in, float *out, uint32_t n);

#endif
