/* q42_vk_forward.c -- the forward pass on a Vulkan device: the same
 * sequence of operations as q42_forward.c, each one a kernel of
 * q42_vk_ops.h recorded into one command buffer per pass.
 *
 * The engine's binding (q42_bound_model, engine/q42_backend.h: shapes and
 * types already checked) is the single description of the model; this file
 * uploads it once, keeps weights, KV cache and activations in device memory
 * and allocates everything at open, so a pass allocates nothing. Only the
 * token ids go up and the last token's logits and argmax come back.
 */
#include "config.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_ckd.h"
#include "measure/q42_certify_cases.h"
#include "engine/q42_backend.h"
#include "common/q42_types.h"
#include "kernels/q42_kernels.h"
#include "vulkan/q42_vk_forward.h"
#include "vulkan/q42_vk_ops.h"

/* Largest host buffer used to convert a fallback matrix to F16 (a whole
 * number of rows; at least one row). */
#define FALLBACK_CHUNK_BYTES (8u << 20)
#define MAX_DEVICES 64u

struct vk_lora;

/* A weight as the device holds it: its buffer, and the type and row
 * stride the kernels read (F16 for a fallback), the bytes between the
 * matrices of a stack of experts (0: one matrix); the adapters on it. */
typedef struct vk_weight {
	q42_vk_buf *buf; /* NULL: the slot is empty */
	uint32_t dtype;
	uint64_t row_bytes;
	uint64_t expert_bytes;
	struct vk_lora *lora;
} vk_weight;

/* One adapter's pair on the device: A as the file holds it (or F16), B
 * as f32 with the pair's scale folded in, so that the product adds
 * B'.(A.x) -- the CPU's scale * B.(A.x) up to rounding. */
typedef struct vk_lora {
	vk_weight a, b;
	uint32_t rank;
	struct vk_lora *next;
} vk_lora;

struct q42_vkf {
	const q42_bound_model *e;
	q42_vk *vk;
	q42_vk_ops *ops;
	vk_weight g[Q42_W_LAYER_FIRST_];
	vk_weight *lw; /* n_layer x Q42_W_COUNT_ */
	q42_vk_buf **kc, **vc; /* per layer: [kv head][n_ctx][hd] of kv_type */
	/* per short-convolution layer: B * x of every position, [n_ctx][n_embd]
	 * (the state beside K and V; NULL for the other layers) */
	q42_vk_buf **hist;
	/* activations: n_batch rows each, as the CPU engine's of the same name;
	 * hg and hu also hold a fused ffn_up's rows (2 n_ff) and the routed
	 * experts' (n_expert_used x n_ff_exp per token) */
	q42_vk_buf *x, *xb, *q, *k, *v, *att, *ao, *hg, *hu;
	q42_vk_buf *qkv;    /* a fused attn_qkv's rows, or in_proj's B, C, x */
	/* routed FFN: router logits (n_expert), the chosen experts and
	 * weights (n_expert_used) and their outputs (n_expert_used x n_embd)
	 * per token */
	q42_vk_buf *moe_logits, *moe_ids, *moe_w, *moe_y;
	q42_vk_buf *xl;     /* the last token's row, then its norm */
	/* adapters: their pairs (n_lora), A.x (n_batch x the largest rank)
	 * and B'.(A.x) (n_batch x the widest adapted output) */
	vk_lora *lora;
	uint32_t n_lora;
	q42_vk_buf *lr, *lo;
	q42_vk_buf *logits; /* n_vocab, device-local */
	/* embeddings: the projections' rows (n_batch x the embedding width,
	 * dense_2's and dense_3's) and their host-visible copy */
	q42_vk_buf *emb, *emb_tmp, *emb_h;
	uint32_t embd_dim;
	/* host-visible: ids in, the row to keep, argmax and logits out */
	q42_vk_buf *ids, *sel, *top1, *logits_h;
	uint32_t n_fallbacks;
	uint64_t fallback_types; /* bit per dtype id */
	char note[256];
	double device_ms;
};

/* All of b, by its explicit size: a view "to the end" would stop at the
 * device's maxStorageBufferRange, and a weight larger than that must fail
 * at dispatch (Q42_EUNSUPPORTED), not be read in part. */
static q42_vk_view whole(q42_vk_buf *b)
{
	return (q42_vk_view){b, 0, b != NULL ? q42_vk_buf_size(b) : 0};
}

static int buf_new(q42_vkf *f, uint64_t n, uint64_t elem, enum q42_vk_mem mem, q42_vk_buf **out,
		   q42_err *err)
{
	uint64_t bytes;
	if (q42_mul_overflow(n ? n : 1, elem, &bytes))
		return q42_err_set(err, Q42_ENOMEM, "vulkan: buffer of %llu x %llu bytes overflows",
				   (unsigned long long)n, (unsigned long long)elem);
	return q42_vk_buf_create(f->vk, bytes, mem, out, err);
}

/* A matrix of a type the kernels cannot read: dequantize each row (the
 * engine's kernels) and upload it as F16, a chunk of rows at a time. */
static int upload_f16(q42_vkf *f, const q42_bound_weight *w, vk_weight *out, const char *name,
		      q42_err *err)
{
	/* a stack of experts, its matrices row after row, converts as one
	 * matrix of all their rows */
	const uint64_t n_mat = w->expert_bytes != 0 ? f->e->n_expert : 1;
	const uint64_t n_in = (uint64_t)w->n_in, n_out = (uint64_t)w->n_out * n_mat;
	const uint64_t f16_row = n_in * sizeof(uint16_t);
	uint64_t rows = FALLBACK_CHUNK_BYTES / f16_row;
	float *tmp = NULL;
	uint16_t *h = NULL;
	int rc;

	if (!w->matrix || w->dequant == NULL ||
	    (w->expert_bytes != 0 && w->expert_bytes != w->row_bytes * (uint64_t)w->n_out))
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "tensor %s: type %s has no Vulkan kernel and cannot be dequantized",
				   name, q42_dtype_get(w->dtype)->name);
	if (rows == 0)
		rows = 1;
	if (rows > n_out)
		rows = n_out;
	rc = buf_new(f, n_out, f16_row, Q42_VK_MEM_DEVICE, &out->buf, err);
	if (rc != Q42_OK)
		return rc;
	tmp = malloc(n_in * sizeof *tmp);
	h = malloc(rows * f16_row);
	if (tmp == NULL || h == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory converting %s", name);
		goto done;
	}
	for (uint64_t r0 = 0; r0 < n_out; r0 += rows) {
		const uint64_t nr = n_out - r0 < rows ? n_out - r0 : rows;
		for (uint64_t r = 0; r < nr; r++) {
			w->dequant(w->data + (r0 + r) * w->row_bytes, tmp, (int64_t)n_in);
			for (uint64_t i = 0; i < n_in; i++)
				h[r * n_in + i] = q42_f32_to_f16(tmp[i]);
		}
		rc = q42_vk_buf_upload(f->vk, out->buf, r0 * f16_row, h, nr * f16_row, err);
		if (rc != Q42_OK)
			goto done;
	}
	out->dtype = Q42_DTYPE_F16;
	out->row_bytes = f16_row;
	out->expert_bytes = w->expert_bytes != 0 ? f16_row * (uint64_t)w->n_out : 0;
	f->n_fallbacks++;
	if (w->dtype < 64)
		f->fallback_types |= 1ull << w->dtype;
done:
	free(tmp);
	free(h);
	return rc;
}

static int upload_weight(q42_vkf *f, const q42_bound_weight *w, enum q42_wslot s, uint32_t l,
			 vk_weight *out, q42_err *err)
{
	char name[128];
	uint64_t bytes;
	int rc;

	if (w->data == NULL)
		return Q42_OK;
	q42_wslot_format(s, l, name, sizeof name);
	if (w->matrix && !q42_vk_ops_has_matmul(w->dtype))
		return upload_f16(f, w, out, name, err);
	/* vectors are f32 (the engine checks it); matrices keep their bytes */
	if (w->expert_bytes != 0 ? q42_mul_overflow(w->expert_bytes, (uint64_t)f->e->n_expert, &bytes)
				 : q42_mul_overflow(w->row_bytes, (uint64_t)w->n_out, &bytes))
		return q42_err_set(err, Q42_EFORMAT, "tensor %s: size overflows", name);
	rc = q42_vk_buf_create(f->vk, bytes, Q42_VK_MEM_DEVICE, &out->buf, err);
	if (rc == Q42_OK)
		rc = q42_vk_buf_upload(f->vk, out->buf, 0, w->data, bytes, err);
	if (rc != Q42_OK)
		q42_err_prefix(err, "tensor %s", name);
	out->dtype = w->dtype;
	out->row_bytes = w->row_bytes;
	out->expert_bytes = w->expert_bytes;
	return rc;
}

/* The adapters on w onto the device, linked from out. */
static int upload_lora(q42_vkf *f, const q42_bound_weight *w, enum q42_wslot s, uint32_t l,
		       vk_weight *out, q42_err *err)
{
	char name[128];
	vk_lora **tail = &out->lora;
	int rc = Q42_OK;
	q42_wslot_format(s, l, name, sizeof name);
	if (w->lora != NULL && w->expert_bytes != 0)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "vulkan: an adapter on %s runs on the CPU only (--backend cpu)", name);
	for (const q42_bound_lora *bl = w->lora; bl != NULL && rc == Q42_OK; bl = bl->next) {
		vk_lora *d = &f->lora[f->n_lora++];
		const uint64_t r = (uint64_t)bl->b.n_in, no = (uint64_t)bl->b.n_out;
		float *bs = malloc((size_t)(r * no) * sizeof *bs);
		d->rank = (uint32_t)r;
		rc = upload_weight(f, &bl->a, s, l, &d->a, err);
		if (rc == Q42_OK && (bs == NULL || bl->b.dequant == NULL))
			rc = q42_err_set(err, Q42_EUNSUPPORTED, "vulkan: tensor %s: adapter's lora_b cannot be read as f32",
					 name);
		for (uint64_t o = 0; rc == Q42_OK && o < no; o++) {
			bl->b.dequant(bl->b.data + o * bl->b.row_bytes, bs + o * r, (int64_t)r);
			for (uint64_t k = 0; k < r; k++)
				bs[o * r + k] *= bl->scale;
		}
		if (rc == Q42_OK)
			rc = buf_new(f, r * no, sizeof(float), Q42_VK_MEM_DEVICE, &d->b.buf, err);
		if (rc == Q42_OK)
			rc = q42_vk_buf_upload(f->vk, d->b.buf, 0, bs, r * no * sizeof(float), err);
		free(bs);
		d->b.dtype = Q42_DTYPE_F32;
		d->b.row_bytes = r * sizeof(float);
		*tail = d;
		tail = &d->next;
	}
	return rc;
}

static int upload_weights(q42_vkf *f, q42_err *err)
{
	const q42_bound_model *e = f->e;
	int rc = Q42_OK;

	for (uint32_t s = 0; s < Q42_W_LAYER_FIRST_ && rc == Q42_OK; s++)
		if (!(s == Q42_W_OUTPUT && e->tied)) {
			rc = upload_weight(f, &e->g[s], s, 0, &f->g[s], err);
			if (rc == Q42_OK)
				rc = upload_lora(f, &e->g[s], s, 0, &f->g[s], err);
		}
	if (rc == Q42_OK && e->tied) /* one buffer for both roles */
		f->g[Q42_W_OUTPUT] = f->g[Q42_W_TOK_EMBD];
	for (uint32_t l = 0; l < e->n_layer && rc == Q42_OK; l++)
		for (uint32_t s = Q42_W_LAYER_FIRST_; s < Q42_W_COUNT_ && rc == Q42_OK; s++)
			if ((rc = upload_weight(f, &e->layers[l].w[s], s, l,
						&f->lw[(uint64_t)l * Q42_W_COUNT_ + s], err)) == Q42_OK)
				rc = upload_lora(f, &e->layers[l].w[s], s, l,
						 &f->lw[(uint64_t)l * Q42_W_COUNT_ + s], err);
	if (rc == Q42_OK && f->n_fallbacks > 0) {
		int p = snprintf(f->note, sizeof f->note,
				 "%u weight matrices dequantized to f16 for Vulkan (no Vulkan kernel for",
				 f->n_fallbacks);
		for (uint32_t t = 0; t < 64 && p > 0 && (size_t)p < sizeof f->note; t++)
			if (f->fallback_types & (1ull << t))
				p += snprintf(f->note + p, sizeof f->note - (size_t)p, " %s",
					      q42_dtype_get(t)->name);
		if (p > 0 && (size_t)p < sizeof f->note)
			snprintf(f->note + p, sizeof f->note - (size_t)p, ")");
	}
	return rc;
}

/* The adapters' pairs on the model's weights; the largest rank and
 * adapted output width into *rank and *width when not NULL. */
static uint32_t lora_count(const q42_bound_model *e, uint64_t *rank, uint64_t *width)
{
	uint32_t n = 0;
	uint64_t r = 0, w = 0;
	for (uint32_t l = 0; l <= e->n_layer; l++)
		for (uint32_t s = l < e->n_layer ? Q42_W_LAYER_FIRST_ : 0;
		     s < (l < e->n_layer ? Q42_W_COUNT_ : Q42_W_LAYER_FIRST_); s++) {
			const q42_bound_weight *bw = l < e->n_layer ? &e->layers[l].w[s] : &e->g[s];
			for (const q42_bound_lora *bl = bw->lora; bl != NULL; bl = bl->next, n++) {
				r = (uint64_t)bl->b.n_in > r ? (uint64_t)bl->b.n_in : r;
				w = (uint64_t)bl->b.n_out > w ? (uint64_t)bl->b.n_out : w;
			}
		}
	if (rank != NULL)
		*rank = r;
	if (width != NULL)
		*width = w;
	return n;
}

static int alloc_device(q42_vkf *f, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const uint64_t B = e->n_batch, E = e->n_embd, F = sizeof(float);
	const uint64_t kve = e->kv_type == Q42_DTYPE_F16 ? 2 : 4;
	int rc = Q42_OK;

	const uint64_t K = e->n_expert_used;
	const uint64_t qkv_w = (uint64_t)e->n_head * e->hd_k + 2ull * e->n_head_kv_max * e->hd_k;
	uint64_t ff = (uint64_t)e->n_ff_max * (e->arch->ffn_fused_up ? 2 : 1);
	if (K * e->n_ff_exp > ff)
		ff = K * e->n_ff_exp;
	for (uint32_t l = 0; l < e->n_layer && rc == Q42_OK; l++) {
		const uint64_t kvh = e->layers[l].n_head_kv;
		if (e->layers[l].conv) {
			rc = buf_new(f, (uint64_t)e->n_ctx * E, F, Q42_VK_MEM_DEVICE, &f->hist[l], err);
			continue;
		}
		rc = buf_new(f, kvh * e->n_ctx * e->hd_k, kve, Q42_VK_MEM_DEVICE, &f->kc[l], err);
		if (rc == Q42_OK)
			rc = buf_new(f, kvh * e->n_ctx * e->hd_v, kve, Q42_VK_MEM_DEVICE, &f->vc[l],
				     err);
	}
	if (rc == Q42_OK)
		rc = buf_new(f, B * (qkv_w > 3 * E ? qkv_w : 3 * E), F, Q42_VK_MEM_DEVICE, &f->qkv, err);
	if (rc == Q42_OK && e->n_expert > 0) {
		rc = buf_new(f, B * e->n_expert, F, Q42_VK_MEM_DEVICE, &f->moe_logits, err);
		if (rc == Q42_OK)
			rc = buf_new(f, B * K, sizeof(uint32_t), Q42_VK_MEM_DEVICE, &f->moe_ids, err);
		if (rc == Q42_OK)
			rc = buf_new(f, B * K, F, Q42_VK_MEM_DEVICE, &f->moe_w, err);
		if (rc == Q42_OK)
			rc = buf_new(f, B * K * E, F, Q42_VK_MEM_DEVICE, &f->moe_y, err);
	}
	if (rc == Q42_OK)
		rc = buf_new(f, B * E, F, Q42_VK_MEM_DEVICE, &f->x, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * E, F, Q42_VK_MEM_DEVICE, &f->xb, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * E, F, Q42_VK_MEM_DEVICE, &f->ao, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * e->n_head * e->hd_k, F, Q42_VK_MEM_DEVICE, &f->q, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * e->n_head_kv_max * e->hd_k, F, Q42_VK_MEM_DEVICE, &f->k, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * e->n_head_kv_max * e->hd_v, F, Q42_VK_MEM_DEVICE, &f->v, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * e->n_head * e->hd_v, F, Q42_VK_MEM_DEVICE, &f->att, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * ff, F, Q42_VK_MEM_DEVICE, &f->hg, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * ff, F, Q42_VK_MEM_DEVICE, &f->hu, err);
	if (rc == Q42_OK)
		rc = buf_new(f, E, F, Q42_VK_MEM_DEVICE, &f->xl, err);
	if (rc == Q42_OK)
		rc = buf_new(f, e->n_vocab, F, Q42_VK_MEM_DEVICE, &f->logits, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * f->embd_dim, F, Q42_VK_MEM_DEVICE, &f->emb, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * f->embd_dim, F, Q42_VK_MEM_DEVICE, &f->emb_tmp, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B * f->embd_dim, F, Q42_VK_MEM_HOST, &f->emb_h, err);
	if (rc == Q42_OK)
		rc = buf_new(f, B, sizeof(int32_t), Q42_VK_MEM_HOST, &f->ids, err);
	if (rc == Q42_OK)
		rc = buf_new(f, 1, sizeof(int32_t), Q42_VK_MEM_HOST, &f->sel, err);
	if (rc == Q42_OK)
		rc = buf_new(f, 2, sizeof(uint32_t), Q42_VK_MEM_HOST, &f->top1, err);
	if (rc == Q42_OK)
		rc = buf_new(f, e->n_vocab, F, Q42_VK_MEM_HOST, &f->logits_h, err);
	if (rc == Q42_OK && f->n_lora > 0) {
		uint64_t rank, width;
		lora_count(e, &rank, &width);
		rc = buf_new(f, B * rank, F, Q42_VK_MEM_DEVICE, &f->lr, err);
		if (rc == Q42_OK)
			rc = buf_new(f, B * width, F, Q42_VK_MEM_DEVICE, &f->lo, err);
	}
	return rc;
}

/* Backend AUTO: a discrete or integrated GPU (the one at device, when
 * given), never a software device. *use false: the CPU runs the model. */
static int auto_choice(int32_t device, bool *use, q42_err *err)
{
	q42_vk_device_info *info;
	uint32_t n = 0;
	q42_err e2 = {0};
	int rc;

	*use = false;
	info = calloc(MAX_DEVICES, sizeof *info);
	if (info == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory");
	rc = q42_vk_devices(info, MAX_DEVICES, &n, &e2);
	if (rc == Q42_EUNSUPPORTED) { /* no loader, driver or device: the CPU */
		rc = Q42_OK;
		n = 0;
	} else if (rc != Q42_OK) {
		*err = e2;
	}
	if (rc == Q42_OK && device >= 0 && (uint32_t)device >= n)
		rc = q42_err_set(err, Q42_EARG, "vulkan: device %d: there %s %u device%s", device,
				 n == 1 ? "is" : "are", n, n == 1 ? "" : "s");
	for (uint32_t i = 0; rc == Q42_OK && i < n && i < MAX_DEVICES; i++)
		if ((device < 0 || (uint32_t)device == i) &&
		    (info[i].type == Q42_VK_DEV_DISCRETE || info[i].type == Q42_VK_DEV_INTEGRATED))
			*use = true;
	free(info);
	return rc;
}

/* ---- certification gate ---------------------------------------------- */

/* Kernels run only on a device whose certification (q42_certify.h) has
 * passed in this process: the first engine opened on a device runs every
 * case once (about a second on lavapipe), later ones reuse the verdict. */
#define GATE_DEVICES 16

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static int8_t gate_verdict[GATE_DEVICES]; /* 0 unknown, 1 passed, -1 failed */
static char gate_failure[GATE_DEVICES][160];

struct gate_run {
	char *first_failure;
	size_t cap;
};

static void gate_case(const q42_certify_result *r, void *arg)
{
	struct gate_run *g = arg;
	if (!r->pass && g->first_failure[0] == '\0')
		snprintf(g->first_failure, g->cap, "%s (%s) max_abs %.3g max_rel %.3g", r->kernel,
			 r->shape, r->max_abs, r->max_rel);
}

static int certify_gate(q42_vkf *f, q42_err *err)
{
	const q42_vk_device_info *di = q42_vk_info(f->vk);
	const uint32_t d = di->index;
	int rc = Q42_OK;

	if (d >= GATE_DEVICES)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "vulkan: device %u: only devices 0..%u can be certified", d,
				   GATE_DEVICES - 1);
	pthread_mutex_lock(&gate_lock);
	if (gate_verdict[d] == 0) {
		struct gate_run g = {gate_failure[d], sizeof gate_failure[d]};
		uint32_t n_fail = 0;
		gate_failure[d][0] = '\0';
		rc = q42_vk_certify_device(f->vk, f->ops, 0, gate_case, &g, &n_fail, err);
		if (rc == Q42_OK)
			gate_verdict[d] = n_fail == 0 ? 1 : -1;
	}
	if (rc == Q42_OK && gate_verdict[d] < 0)
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "vulkan: device %u (%s) failed kernel certification: %s; see q42run"
				 " --certify --backend vulkan --device %u",
				 d, di->name, gate_failure[d], d);
	pthread_mutex_unlock(&gate_lock);
	return rc;
}

static int open_device(q42_vkf **out, const q42_bound_model *e, int32_t device, bool allow_cpu,
		       q42_err *err)
{
	static const int32_t tok0 = 0;
	q42_vkf *f;
	uint32_t n_rows;
	int rc;

	*out = NULL;
	f = calloc(1, sizeof *f);
	if (f == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory");
	f->e = e;
	f->lw = calloc((size_t)e->n_layer * Q42_W_COUNT_, sizeof *f->lw);
	f->kc = calloc(e->n_layer, sizeof *f->kc);
	f->vc = calloc(e->n_layer, sizeof *f->vc);
	f->hist = calloc(e->n_layer, sizeof *f->hist);
	f->lora = calloc(lora_count(e, NULL, NULL) + 1, sizeof *f->lora);
	if (f->lw == NULL || f->kc == NULL || f->vc == NULL || f->hist == NULL || f->lora == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory");
		goto fail;
	}
	f->embd_dim = e->n_embd;
	if (e->g[Q42_W_DENSE_2].data != NULL && (uint64_t)e->g[Q42_W_DENSE_2].n_out > e->n_embd)
		f->embd_dim = (uint32_t)e->g[Q42_W_DENSE_2].n_out;
	rc = q42_vk_open(&f->vk, device, allow_cpu, err);
	if (rc == Q42_OK)
		rc = q42_vk_ops_open(&f->ops, f->vk, err);
	if (rc == Q42_OK)
		rc = certify_gate(f, err);
	if (rc == Q42_OK)
		rc = upload_weights(f, err);
	if (rc == Q42_OK)
		rc = alloc_device(f, err);
	/* One pass over token 0 now: every binding meets the device's limits
	 * (a weight beyond maxStorageBufferRange fails here, not in the first
	 * request) and drivers that compile lazily do it before the first
	 * prefill is timed. The cache row it writes is overwritten later. An
	 * encoder has no logits: its pass is an embedding's, every row kept
	 * and projected. */
	if (rc == Q42_OK && e->causal)
		rc = q42_vkf_eval(f, &tok0, 1, 0, true, NULL, NULL, err);
	else if (rc == Q42_OK)
		rc = q42_vkf_embed(f, &tok0, 1, Q42_POOLING_NONE, NULL, &n_rows, err);
	if (rc != Q42_OK)
		goto fail;
	f->device_ms = 0;
	*out = f;
	return Q42_OK;
fail:
	q42_vkf_close(f);
	return rc;
}

/* Why the device pass cannot run e (NULL: it can). It has decoder blocks
 * with RMSNorm and RoPE, attention or short convolutions, dense or
 * routed gated FFNs, and the encoders' parts: attention over the whole
 * sequence, symmetric windows, centred convolutions, BERT's post-norm
 * blocks with LayerNorm, learned positions and GELU. */
static const char *cpu_only(const q42_bound_model *e)
{
	if (e->n_expert_used > 64)
		return "it routes each token to more than 64 experts";
	return NULL;
}

int q42_vkf_open(q42_vkf **out, const q42_bound_model *e, enum q42_backend b, int32_t device,
		 q42_err *err)
{
	bool use = true;
	int rc;

	*out = NULL;
	/* what the device pass does not compute runs on the CPU: auto stays
	 * there */
	const char *why = cpu_only(e);
	if (why != NULL) {
		if (b == Q42_BACKEND_AUTO)
			return Q42_OK;
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "vulkan: architecture %s runs on the CPU only (--backend cpu): %s",
				   e->arch->name, why);
	}
	if (b == Q42_BACKEND_AUTO) {
		rc = auto_choice(device, &use, err);
		if (rc != Q42_OK || !use)
			return rc;
	}
	return open_device(out, e, device, b == Q42_BACKEND_VULKAN, err);
}

void q42_vkf_close(q42_vkf *f)
{
	if (f == NULL)
		return;
	if (f->vk != NULL) {
		q42_vk_buf *acts[] = {f->x, f->xb, f->q, f->k, f->v, f->att, f->ao, f->hg, f->hu,
				      f->xl, f->logits, f->ids, f->sel, f->top1, f->logits_h,
				      f->lr, f->lo, f->qkv, f->moe_logits, f->moe_ids, f->moe_w,
				      f->moe_y, f->emb, f->emb_tmp, f->emb_h};
		for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
			if (acts[i] != NULL)
				q42_vk_buf_free(f->vk, acts[i]);
		for (uint32_t l = 0; l < f->e->n_layer; l++) {
			if (f->kc != NULL && f->kc[l] != NULL)
				q42_vk_buf_free(f->vk, f->kc[l]);
			if (f->vc != NULL && f->vc[l] != NULL)
				q42_vk_buf_free(f->vk, f->vc[l]);
			if (f->hist != NULL && f->hist[l] != NULL)
				q42_vk_buf_free(f->vk, f->hist[l]);
		}
		for (uint32_t s = 0; s < Q42_W_LAYER_FIRST_; s++)
			if (f->g[s].buf != NULL && !(s == Q42_W_OUTPUT && f->e->tied))
				q42_vk_buf_free(f->vk, f->g[s].buf);
		for (uint64_t i = 0; f->lw != NULL && i < (uint64_t)f->e->n_layer * Q42_W_COUNT_; i++)
			if (f->lw[i].buf != NULL)
				q42_vk_buf_free(f->vk, f->lw[i].buf);
		for (uint32_t i = 0; i < f->n_lora; i++) {
			if (f->lora[i].a.buf != NULL)
				q42_vk_buf_free(f->vk, f->lora[i].a.buf);
			if (f->lora[i].b.buf != NULL)
				q42_vk_buf_free(f->vk, f->lora[i].b.buf);
		}
	}
	free(f->lora);
	q42_vk_ops_close(f->ops);
	q42_vk_close(f->vk);
	free(f->lw);
	free(f->kc);
	free(f->vc);
	free(f->hist);
	free(f);
}

/* ---- the pass ---------------------------------------------------------- */

/* y (n rows of n_out) += B'.(A.x) for each adapter on w, in order (as
 * q42_forward.c's op_lora_down and op_lora_up). */
static int op_lora(q42_vkf *f, const vk_weight *w, uint32_t n_in, uint32_t n_out, q42_vk_buf *x,
		   uint32_t n, q42_vk_buf *y, q42_err *err)
{
	int rc = Q42_OK;
	for (const vk_lora *d = w->lora; d != NULL && rc == Q42_OK; d = d->next) {
		rc = q42_vk_op_matmul(f->ops, d->a.dtype, whole(d->a.buf), d->a.row_bytes, n_in,
				      d->rank, whole(x), n, whole(f->lr), d->rank, err);
		if (rc == Q42_OK)
			rc = q42_vk_op_matmul(f->ops, d->b.dtype, whole(d->b.buf), d->b.row_bytes,
					      d->rank, n_out, whole(f->lr), n, whole(f->lo), n_out, err);
		if (rc == Q42_OK)
			rc = q42_vk_op_add(f->ops, whole(y), whole(f->lo), whole(y), n * n_out,
					   n * n_out, err);
	}
	return rc;
}

/* The token embedding's adapters on the n rows of x: each token's row of
 * A ([rank, n_vocab], looked up as the embedding is) through B', added
 * (q42_forward.c's op_lora_embd). */
static int op_lora_embd(q42_vkf *f, uint32_t n, q42_err *err)
{
	const uint32_t E = f->e->n_embd;
	int rc = Q42_OK;
	for (const vk_lora *d = f->g[Q42_W_TOK_EMBD].lora; d != NULL && rc == Q42_OK; d = d->next) {
		rc = q42_vk_op_get_rows(f->ops, d->a.dtype, whole(d->a.buf), d->a.row_bytes, whole(f->ids),
					n, d->rank, whole(f->lr), err);
		if (rc == Q42_OK)
			rc = q42_vk_op_matmul(f->ops, d->b.dtype, whole(d->b.buf), d->b.row_bytes, d->rank, E,
					      whole(f->lr), n, whole(f->lo), E, err);
		if (rc == Q42_OK)
			rc = q42_vk_op_add(f->ops, whole(f->x), whole(f->lo), whole(f->x), n * E, n * E, err);
	}
	return rc;
}

/* y (n x n_out) = x (n x n_in) W^T (+ the adapters' terms), plus the bias
 * when the model has one. */
static int op_matmul(q42_vkf *f, const vk_weight *w, const q42_bound_weight *cw, q42_vk_buf *x,
		     uint32_t n, q42_vk_buf *y, const vk_weight *bias, q42_err *err)
{
	const uint32_t n_out = (uint32_t)cw->n_out;
	int rc = q42_vk_op_matmul(f->ops, w->dtype, whole(w->buf), w->row_bytes, (uint32_t)cw->n_in,
				  n_out, whole(x), n, whole(y), n_out, err);
	if (rc == Q42_OK)
		rc = op_lora(f, w, (uint32_t)cw->n_in, n_out, x, n, y, err);
	if (rc == Q42_OK && bias->buf != NULL)
		rc = q42_vk_op_add(f->ops, whole(y), whole(bias->buf), whole(y), n * n_out, n_out,
				   err);
	return rc;
}

/* The rows of a fused attn_qkv product (f->qkv) into q, k and v: q's
 * n_head * hd_k values first, then k's, then v's. */
static int op_split_qkv(q42_vkf *f, uint32_t kvh, uint32_t n, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const uint32_t qd = e->n_head * e->hd_k, kd = kvh * e->hd_k, vd = kvh * e->hd_v;
	const uint32_t w = qd + kd + vd;
	int rc = q42_vk_op_copy(f->ops, whole(f->qkv), 0, w, whole(f->q), 0, qd, qd, n, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_copy(f->ops, whole(f->qkv), qd, w, whole(f->k), 0, kd, kd, n, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_copy(f->ops, whole(f->qkv), qd + kd, w, whole(f->v), 0, vd, vd, n, err);
	return rc;
}

/* q (is_q) or k of n tokens, ready for the cache and the scores, in
 * llama.cpp's order as the CPU: each head through its RMSNorm where the
 * layer has one (qwen3, gemma3, lfm2), RoPE with the layer's angles (not
 * bert's: its positions were added to the embedding), then
 * q scaled where the architecture scales q instead of the scores. */
static int op_qk(q42_vkf *f, uint32_t l, q42_vk_buf *x, uint32_t n_heads, uint32_t n, bool is_q,
		 uint32_t pos0, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const q42_bound_layer *L = &e->layers[l];
	const vk_weight *nw = &f->lw[(uint64_t)l * Q42_W_COUNT_ + (is_q ? Q42_W_ATTN_Q_NORM : Q42_W_ATTN_K_NORM)];
	int rc = Q42_OK;
	if (nw->buf != NULL)
		rc = q42_vk_op_rmsnorm(f->ops, whole(x), whole(nw->buf), whole(x), e->hd_k, n * n_heads,
				       e->eps, err);
	if (rc == Q42_OK && !e->arch->no_rope)
		rc = q42_vk_op_rope(f->ops, whole(x), whole(f->g[e->rope_ff].buf), n, n_heads, e->hd_k,
				    e->n_rot, pos0, e->arch->rope == Q42_ROPE_NEOX, L->theta_scale,
				    L->rope_scale, e->rope_mscale, err);
	if (rc == Q42_OK && is_q && e->arch->q_prescale)
		rc = q42_vk_op_scale(f->ops, whole(x), whole(x), n * n_heads * e->hd_k, e->q_scale, 0.0f,
				     err);
	return rc;
}

/* out (n rows of the block's output) through the block's norm after
 * attention or the FFN where it has one (gemma3), then into the residual;
 * a post-norm block (bert) then normalises the residual rows with its
 * LayerNorm ln (+ bias lnb) where it has one. */
static int op_residual(q42_vkf *f, const vk_weight *post, const vk_weight *ln,
		       const vk_weight *lnb, uint32_t n, q42_err *err)
{
	const q42_bound_model *e = f->e;
	int rc = Q42_OK;
	if (post->buf != NULL)
		rc = q42_vk_op_rmsnorm(f->ops, whole(f->ao), whole(post->buf), whole(f->ao), e->n_embd,
				       n, e->eps, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_add(f->ops, whole(f->x), whole(f->ao), whole(f->x), n * e->n_embd,
				   n * e->n_embd, err);
	if (rc == Q42_OK && ln->buf != NULL)
		rc = q42_vk_op_layernorm(f->ops, whole(f->x), whole(ln->buf), whole(lnb->buf),
					 whole(f->x), e->n_embd, n, e->eps, err);
	return rc;
}

/* A block's input rows: the residual through the norm before the block
 * into xb, or the residual as it is in a post-norm block (bert). */
static int op_block_in(q42_vkf *f, const vk_weight *norm, uint32_t n, q42_vk_buf **in,
		       q42_err *err)
{
	const q42_bound_model *e = f->e;
	*in = f->x;
	if (e->arch->post_norm)
		return Q42_OK;
	*in = f->xb;
	return q42_vk_op_rmsnorm(f->ops, whole(f->x), whole(norm->buf), whole(f->xb), e->n_embd, n,
				 e->eps, err);
}

static int block_attention(q42_vkf *f, uint32_t l, uint32_t n, uint32_t pos0, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const q42_bound_weight *W = e->layers[l].w;
	const vk_weight *D = &f->lw[(uint64_t)l * Q42_W_COUNT_];
	const uint32_t kvh = e->layers[l].n_head_kv;
	q42_vk_buf *in;
	int rc;

	rc = op_block_in(f, &D[Q42_W_ATTN_NORM], n, &in, err);
	if (rc == Q42_OK && D[Q42_W_ATTN_QKV].buf != NULL) {
		rc = op_matmul(f, &D[Q42_W_ATTN_QKV], &W[Q42_W_ATTN_QKV], in, n, f->qkv,
			       &D[Q42_W_ATTN_QKV_B], err);
		if (rc == Q42_OK)
			rc = op_split_qkv(f, kvh, n, err);
	} else {
		if (rc == Q42_OK)
			rc = op_matmul(f, &D[Q42_W_ATTN_Q], &W[Q42_W_ATTN_Q], in, n, f->q,
				       &D[Q42_W_ATTN_Q_B], err);
		if (rc == Q42_OK)
			rc = op_matmul(f, &D[Q42_W_ATTN_K], &W[Q42_W_ATTN_K], in, n, f->k,
				       &D[Q42_W_ATTN_K_B], err);
		if (rc == Q42_OK)
			rc = op_matmul(f, &D[Q42_W_ATTN_V], &W[Q42_W_ATTN_V], in, n, f->v,
				       &D[Q42_W_ATTN_V_B], err);
	}
	if (rc == Q42_OK)
		rc = op_qk(f, l, f->q, e->n_head, n, true, pos0, err);
	if (rc == Q42_OK)
		rc = op_qk(f, l, f->k, kvh, n, false, pos0, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_kv_store(f->ops, e->kv_type, whole(f->k), whole(f->v),
					whole(f->kc[l]), whole(f->vc[l]), n, kvh, e->hd_k, e->hd_v,
					e->n_ctx, pos0, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_attention(f->ops, e->kv_type, whole(f->q), whole(f->kc[l]),
					 whole(f->vc[l]), whole(f->att), n, e->n_head, kvh, e->hd_k,
					 e->hd_v, e->n_ctx, pos0, e->kq_scale, e->layers[l].n_swa,
					 e->causal, e->swa_symmetric, err);
	if (rc == Q42_OK)
		rc = op_matmul(f, &D[Q42_W_ATTN_OUT], &W[Q42_W_ATTN_OUT], f->att, n, f->ao,
			       &D[Q42_W_ATTN_OUT_B], err);
	if (rc == Q42_OK)
		rc = op_residual(f, &D[Q42_W_POST_ATTN_NORM], &D[Q42_W_ATTN_OUT_NORM],
				 &D[Q42_W_ATTN_OUT_NORM_B], n, err);
	return rc;
}

/* lfm2's short-convolution block in place of attention: in_proj gives B,
 * C and x per token, the convolution (q42_vk_op_shortconv) keeps B * x in
 * the layer's history, out_proj and the residual add. */
static int block_conv(q42_vkf *f, uint32_t l, uint32_t n, uint32_t pos0, q42_err *err)
{
	static const vk_weight none;
	const q42_bound_model *e = f->e;
	const q42_bound_weight *W = e->layers[l].w;
	const vk_weight *D = &f->lw[(uint64_t)l * Q42_W_COUNT_];
	int rc;

	rc = q42_vk_op_rmsnorm(f->ops, whole(f->x), whole(D[Q42_W_ATTN_NORM].buf), whole(f->xb),
			       e->n_embd, n, e->eps, err);
	if (rc == Q42_OK)
		rc = op_matmul(f, &D[Q42_W_CONV_IN], &W[Q42_W_CONV_IN], f->xb, n, f->qkv, &none, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_shortconv(f->ops, whole(f->qkv), whole(D[Q42_W_CONV].buf),
					 whole(f->hist[l]), whole(f->xb), n, e->n_embd, e->conv_l,
					 e->n_ctx, pos0, e->conv_ahead, err);
	if (rc == Q42_OK)
		rc = op_matmul(f, &D[Q42_W_CONV_OUT], &W[Q42_W_CONV_OUT], f->xb, n, f->ao, &none, err);
	if (rc == Q42_OK)
		rc = op_residual(f, &none, &none, &none, n, err);
	return rc;
}

static int block_ffn(q42_vkf *f, uint32_t l, uint32_t n, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const q42_bound_weight *W = e->layers[l].w;
	const vk_weight *D = &f->lw[(uint64_t)l * Q42_W_COUNT_];
	const uint32_t ff = e->layers[l].n_ff;
	const bool gelu = e->arch->ffn_act == Q42_FFN_GEGLU;
	q42_vk_buf *in;
	int rc;

	rc = op_block_in(f, &D[Q42_W_FFN_NORM], n, &in, err);
	if (e->arch->ffn_act == Q42_FFN_GELU) {
		/* up (+ bias), then GELU, no gate (bert) */
		if (rc == Q42_OK)
			rc = op_matmul(f, &D[Q42_W_FFN_UP], &W[Q42_W_FFN_UP], in, n, f->hg,
				       &D[Q42_W_FFN_UP_B], err);
		if (rc == Q42_OK)
			rc = q42_vk_op_gelu(f->ops, whole(f->hg), whole(f->hg), ff * n, err);
	} else if (e->arch->ffn_fused_up) {
		/* one product into rows of 2 n_ff: gate, then up (phi3) */
		if (rc == Q42_OK)
			rc = op_matmul(f, &D[Q42_W_FFN_UP], &W[Q42_W_FFN_UP], in, n, f->hu,
				       &D[Q42_W_FFN_UP_B], err);
		if (rc == Q42_OK)
			rc = q42_vk_op_glu(f->ops, gelu, whole(f->hu), whole(f->hu), whole(f->hg), ff,
					   n, 2 * ff, ff, err);
	} else {
		if (rc == Q42_OK)
			rc = op_matmul(f, &D[Q42_W_FFN_GATE], &W[Q42_W_FFN_GATE], in, n, f->hg,
				       &D[Q42_W_FFN_GATE_B], err);
		if (rc == Q42_OK)
			rc = op_matmul(f, &D[Q42_W_FFN_UP], &W[Q42_W_FFN_UP], in, n, f->hu,
				       &D[Q42_W_FFN_UP_B], err);
		if (rc == Q42_OK)
			rc = q42_vk_op_glu(f->ops, gelu, whole(f->hg), whole(f->hu), whole(f->hg), ff,
					   n, ff, 0, err);
	}
	if (rc == Q42_OK)
		rc = op_matmul(f, &D[Q42_W_FFN_DOWN], &W[Q42_W_FFN_DOWN], f->hg, n, f->ao,
			       &D[Q42_W_FFN_DOWN_B], err);
	if (rc == Q42_OK)
		rc = op_residual(f, &D[Q42_W_POST_FFW_NORM], &D[Q42_W_LAYER_OUT_NORM],
				 &D[Q42_W_LAYER_OUT_NORM_B], n, err);
	return rc;
}

/* The routed FFN of lfm2moe, as the CPU's block_moe: the router's
 * product, each token's experts and weights, then every (token, chosen
 * expert) pair through its expert's gate, up, SwiGLU and down -- only the
 * chosen experts' matrices are read -- and the pairs' weighted outputs
 * summed into the residual. */
static int block_moe(q42_vkf *f, uint32_t l, uint32_t n, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const vk_weight *D = &f->lw[(uint64_t)l * Q42_W_COUNT_];
	const vk_weight *g = &D[Q42_W_FFN_GATE_EXPS], *u = &D[Q42_W_FFN_UP_EXPS];
	const vk_weight *d = &D[Q42_W_FFN_DOWN_EXPS], *r = &D[Q42_W_FFN_GATE_INP];
	const uint32_t K = e->n_expert_used, ff = e->n_ff_exp, E = e->n_embd;
	int rc;

	rc = q42_vk_op_rmsnorm(f->ops, whole(f->x), whole(D[Q42_W_FFN_NORM].buf), whole(f->xb), E, n,
			       e->eps, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_matmul(f->ops, r->dtype, whole(r->buf), r->row_bytes, E, e->n_expert,
				      whole(f->xb), n, whole(f->moe_logits), e->n_expert, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_route(f->ops, whole(f->moe_logits), whole(D[Q42_W_FFN_EXP_PROBS_B].buf),
				     whole(f->moe_ids), whole(f->moe_w), n, e->n_expert, K, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_matmul_id(f->ops, g->dtype, whole(g->buf), g->row_bytes, g->expert_bytes,
					 E, ff, whole(f->moe_ids), whole(f->xb), K, n * K, whole(f->hg),
					 ff, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_matmul_id(f->ops, u->dtype, whole(u->buf), u->row_bytes, u->expert_bytes,
					 E, ff, whole(f->moe_ids), whole(f->xb), K, n * K, whole(f->hu),
					 ff, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_glu(f->ops, false, whole(f->hg), whole(f->hu), whole(f->hg), ff, n * K,
				   ff, 0, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_matmul_id(f->ops, d->dtype, whole(d->buf), d->row_bytes, d->expert_bytes,
					 ff, E, whole(f->moe_ids), whole(f->hg), 1, n * K,
					 whole(f->moe_y), E, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_moe_sum(f->ops, whole(f->moe_y), whole(f->moe_w), whole(f->x), E, n, K,
				       err);
	return rc;
}

/* The last token's row is picked with get_rows rather than a view at its
 * offset, which would have to meet the device's offset alignment. */
static int head(q42_vkf *f, uint32_t n, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const vk_weight *out = &f->g[Q42_W_OUTPUT];
	int rc;

	*(int32_t *)q42_vk_buf_map(f->sel) = (int32_t)(n - 1);
	rc = q42_vk_op_get_rows(f->ops, Q42_DTYPE_F32, whole(f->x), (uint64_t)e->n_embd * 4,
				whole(f->sel), 1, e->n_embd, whole(f->xl), err);
	if (rc == Q42_OK)
		rc = q42_vk_op_rmsnorm(f->ops, whole(f->xl), whole(f->g[e->final_norm].buf),
				       whole(f->xb), e->n_embd, 1, e->eps, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_matmul(f->ops, out->dtype, whole(out->buf), out->row_bytes, e->n_embd,
				      e->n_vocab, whole(f->xb), 1, whole(f->logits), e->n_vocab, err);
	if (rc == Q42_OK)
		rc = op_lora(f, out, e->n_embd, e->n_vocab, f->xb, 1, f->logits, err);
	if (rc == Q42_OK && e->final_softcap > 0.0f)
		rc = q42_vk_op_scale(f->ops, whole(f->logits), whole(f->logits), e->n_vocab, 1.0f,
				     e->final_softcap, err);
	if (rc == Q42_OK)
		rc = q42_vk_op_argmax(f->ops, whole(f->logits), e->n_vocab, whole(f->top1), err);
	if (rc == Q42_OK)
		rc = q42_vk_copy(f->vk, whole(f->logits), whole(f->logits_h), err);
	return rc;
}

/* The token rows of the n ids (uploaded) at positions pos0.. into x, as
 * the CPU's op_embed: the embedding rows (+ adapters), scaled (gemma),
 * plus token type 0 and the learned positions (bert), then its
 * LayerNorm; then every block. */
static int record_blocks(q42_vkf *f, uint32_t n, uint32_t pos0, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const vk_weight *emb = &f->g[Q42_W_TOK_EMBD], *pos = &f->g[Q42_W_POS_EMBD];
	const vk_weight *types = &f->g[Q42_W_TOKEN_TYPES];
	const uint32_t E = e->n_embd;
	int rc = q42_vk_op_get_rows(f->ops, emb->dtype, whole(emb->buf), emb->row_bytes, whole(f->ids),
				    n, E, whole(f->x), err);
	if (rc == Q42_OK)
		rc = op_lora_embd(f, n, err);
	if (rc == Q42_OK && e->embd_scale != 0.0f)
		rc = q42_vk_op_scale(f->ops, whole(f->x), whole(f->x), n * E, e->embd_scale, 0.0f, err);
	if (rc == Q42_OK && types->buf != NULL) /* row 0 of token_types */
		rc = q42_vk_op_add(f->ops, whole(f->x), whole(types->buf), whole(f->x), n * E, E, err);
	if (rc == Q42_OK && pos->buf != NULL) {
		/* the engine has checked that the positions exist */
		rc = q42_vk_op_copy(f->ops, whole(pos->buf), pos0 * E, E, whole(f->xb), 0, E, E, n, err);
		if (rc == Q42_OK)
			rc = q42_vk_op_add(f->ops, whole(f->x), whole(f->xb), whole(f->x), n * E, n * E,
					   err);
	}
	if (rc == Q42_OK && e->arch->post_norm)
		rc = q42_vk_op_layernorm(f->ops, whole(f->x), whole(f->g[Q42_W_TOK_EMBD_NORM].buf),
					 whole(f->g[Q42_W_TOK_EMBD_NORM_B].buf), whole(f->x), E, n,
					 e->eps, err);
	for (uint32_t l = 0; l < e->n_layer && rc == Q42_OK; l++) {
		const q42_bound_layer *L = &e->layers[l];
		rc = L->conv ? block_conv(f, l, n, pos0, err) : block_attention(f, l, n, pos0, err);
		if (rc == Q42_OK)
			rc = L->moe ? block_moe(f, l, n, err) : block_ffn(f, l, n, err);
	}
	return rc;
}

/* End the recording that rc says how it went: a failed recording is still
 * submitted (the layer has no other way to end it, and what ran only
 * wrote this pass's scratch); the pass's device time is added up. */
static int pass_end(q42_vkf *f, int rc, q42_err *err)
{
	const char *labels[4];
	double ns[4];
	q42_vk_stamp(f->vk, "pass");
	if (rc == Q42_OK)
		rc = q42_vk_submit(f->vk, err);
	else
		q42_vk_submit(f->vk, NULL);
	if (rc != Q42_OK)
		return rc;
	const uint32_t n_st = q42_vk_stamps(f->vk, labels, ns, 4);
	for (uint32_t i = 0; i < n_st && i < 4; i++)
		f->device_ms += ns[i] / 1e6;
	return Q42_OK;
}

static int pass_begin(q42_vkf *f, const int32_t *ids, uint32_t n, q42_err *err)
{
	memcpy(q42_vk_buf_map(f->ids), ids, (size_t)n * sizeof *ids);
	int rc = q42_vk_begin(f->vk, err);
	if (rc == Q42_OK)
		q42_vk_stamp(f->vk, "begin");
	return rc;
}

int q42_vkf_eval(q42_vkf *f, const int32_t *ids, uint32_t n, uint32_t pos0, bool want_logits,
		 float *logits, int32_t *top1, q42_err *err)
{
	const q42_bound_model *e = f->e;
	int rc = pass_begin(f, ids, n, err);
	if (rc != Q42_OK)
		return rc;
	rc = record_blocks(f, n, pos0, err);
	if (rc == Q42_OK && want_logits)
		rc = head(f, n, err);
	if ((rc = pass_end(f, rc, err)) != Q42_OK)
		return rc;
	if (want_logits && logits != NULL)
		memcpy(logits, q42_vk_buf_map(f->logits_h), (size_t)e->n_vocab * sizeof *logits);
	if (want_logits && top1 != NULL)
		*top1 = (int32_t)((const uint32_t *)q42_vk_buf_map(f->top1))[0];
	return Q42_OK;
}

/* dense_2 (+ bias), then dense_3, on n rows of src (as q42_embed.c's
 * project); *out: the buffer holding the result. */
static int project(q42_vkf *f, q42_vk_buf *src, uint32_t n, q42_vk_buf **out, q42_err *err)
{
	static const vk_weight none;
	const q42_bound_model *e = f->e;
	const vk_weight *d2 = &f->g[Q42_W_DENSE_2], *d3 = &f->g[Q42_W_DENSE_3];
	const bool two = d3->buf != NULL;
	int rc;
	*out = src;
	if (d2->buf == NULL)
		return Q42_OK;
	rc = op_matmul(f, d2, &e->g[Q42_W_DENSE_2], src, n, two ? f->emb_tmp : f->emb,
		       &f->g[Q42_W_DENSE_2_B], err);
	if (rc == Q42_OK && two)
		rc = op_matmul(f, d3, &e->g[Q42_W_DENSE_3], f->emb_tmp, n, f->emb, &none, err);
	*out = f->emb;
	return rc;
}

int q42_vkf_embed(q42_vkf *f, const int32_t *ids, uint32_t n, uint32_t pooling, float *out,
		  uint32_t *n_rows, q42_err *err)
{
	const q42_bound_model *e = f->e;
	const uint32_t E = e->n_embd;
	const uint32_t dim = f->g[Q42_W_DENSE_3].buf != NULL   ? E
			     : f->g[Q42_W_DENSE_2].buf != NULL ? (uint32_t)e->g[Q42_W_DENSE_2].n_out
							       : E;
	q42_vk_buf *h = f->x, *src, *res;
	uint32_t rows = pooling == Q42_POOLING_NONE ? n : 1;
	int rc;

	*n_rows = 0;
	if (pooling > Q42_POOLING_LAST)
		return q42_err_set(err, Q42_EARG, "vulkan embed: pooling type %u", pooling);
	if ((rc = pass_begin(f, ids, n, err)) != Q42_OK)
		return rc;
	rc = record_blocks(f, n, 0, err);
	if (rc == Q42_OK && e->final_norm != Q42_W_COUNT_) {
		h = f->xb;
		rc = q42_vk_op_rmsnorm(f->ops, whole(f->x), whole(f->g[e->final_norm].buf), whole(h), E,
				       n, e->eps, err);
	}
	src = h;
	if (rc == Q42_OK && pooling == Q42_POOLING_MEAN) {
		src = f->xl;
		rc = q42_vk_op_pool_mean(f->ops, whole(h), whole(src), E, n, err);
	} else if (rc == Q42_OK && pooling != Q42_POOLING_NONE) {
		/* CLS: the first row, LAST: the last, picked as head() picks it */
		src = f->xl;
		*(int32_t *)q42_vk_buf_map(f->sel) = pooling == Q42_POOLING_CLS ? 0 : (int32_t)(n - 1);
		rc = q42_vk_op_get_rows(f->ops, Q42_DTYPE_F32, whole(h), (uint64_t)E * 4, whole(f->sel),
					1, E, whole(src), err);
	}
	if (rc == Q42_OK)
		rc = project(f, src, rows, &res, err);
	if (rc == Q42_OK)
		rc = q42_vk_copy(f->vk, (q42_vk_view){res, 0, (uint64_t)rows * dim * 4}, whole(f->emb_h),
				 err);
	if ((rc = pass_end(f, rc, err)) != Q42_OK)
		return rc;
	if (out != NULL)
		memcpy(out, q42_vk_buf_map(f->emb_h), (size_t)rows * dim * sizeof *out);
	*n_rows = rows;
	return Q42_OK;
}

const q42_vk_device_info *q42_vkf_device(const q42_vkf *f) { return q42_vk_info(f->vk); }
uint32_t q42_vkf_n_fallbacks(const q42_vkf *f) { return f->n_fallbacks; }
const char *q42_vkf_fallback_note(const q42_vkf *f)
{
	return f->n_fallbacks > 0 ? f->note : NULL;
}
double q42_vkf_device_ms(const q42_vkf *f) { return f->device_ms; }

/* ---- the backend interface (engine/q42_backend.h) ---------------------- */

static int be_check(int32_t device, q42_err *err)
{
	uint32_t n = 0;
	int rc = q42_vk_devices(NULL, 0, &n, err);
	if (rc != Q42_OK)
		return rc;
	if (n == 0)
		return q42_err_set(err, Q42_EUNSUPPORTED, "vulkan: no device");
	if (device >= 0 && (uint32_t)device >= n)
		return q42_err_set(err, Q42_EARG,
				   "vulkan: device %d: there %s %u device%s (q42run --list-devices)",
				   device, n == 1 ? "is" : "are", n, n == 1 ? "" : "s");
	return Q42_OK;
}

static int be_open(void **state, const q42_bound_model *m, enum q42_backend want, int32_t device,
		   q42_err *err)
{
	q42_vkf *f = NULL;
	const int rc = q42_vkf_open(&f, m, want, device, err);
	*state = f;
	return rc;
}

static void be_close(void *state) { q42_vkf_close(state); }

static int be_eval(void *state, const int32_t *ids, uint32_t n, uint32_t pos0, bool want_logits,
		   float *logits, int32_t *top1, q42_err *err)
{
	return q42_vkf_eval(state, ids, n, pos0, want_logits, logits, top1, err);
}

static int be_embed(void *state, const int32_t *ids, uint32_t n, uint32_t pooling, float *out,
		    uint32_t *n_rows, q42_err *err)
{
	return q42_vkf_embed(state, ids, n, pooling, out, n_rows, err);
}

static const char *be_device_name(const void *state) { return q42_vkf_device(state)->name; }
static uint32_t be_n_fallbacks(const void *state) { return q42_vkf_n_fallbacks(state); }
static const char *be_fallback_note(const void *state) { return q42_vkf_fallback_note(state); }
static double be_device_ms(const void *state) { return q42_vkf_device_ms(state); }

static const q42_backend_ops vk_backend = {
	.name = "vulkan",
	.check = be_check,
	.open = be_open,
	.close = be_close,
	.eval = be_eval,
	.embed = be_embed,
	.device_name = be_device_name,
	.n_fallbacks = be_n_fallbacks,
	.fallback_note = be_fallback_note,
	.device_ms = be_device_ms,
	.certify = q42_vk_certify_run,
};

const q42_backend_ops *q42_vk_backend(void) { return &vk_backend; }
