/* q42_profile.c -- output dtypes, profiles, weight quantizers and the
 * transcode drivers (see q42_profile.h; user view in p64c(1), "PROFILES").
 *
 * Conversions run through F32 in chunks of CHUNK elements with the scalar
 * reference kernels, so a tensor never needs a second full-size F32 copy.
 * The drivers plan every tensor before writing any, then hand each blob to
 * the streamed P64 writer as soon as it is converted. Output depends only on
 * the input bytes and the options. Never prints.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_ckd.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "formats/q42_hf.h"
#include "formats/q42_profile.h"
#include "formats/q42_roles.h"
#include "formats/q42_safetensors.h"
#include "common/q42_types.h"
#include "kernels/q42_kernels.h"

#define CHUNK 4096u /* a multiple of every block size used here */
#define QK4_0 32
#define Q4_0_BYTES 18
#define QK_TQ 256
#define TQ2_0_BYTES 66

static const char *const profile_names[] = {"none", "ffn-q4_0", "ffn-tq", "q8_0"};

int q42_profile_from_name(const char *name)
{
	for (int i = 0; i < (int)(sizeof profile_names / sizeof profile_names[0]); i++)
		if (strcmp(name, profile_names[i]) == 0)
			return i;
	return -1;
}

const char *q42_profile_name(uint32_t profile)
{
	return profile < sizeof profile_names / sizeof profile_names[0] ? profile_names[profile] : "?";
}

static bool is_float(uint32_t dt)
{
	return dt == Q42_DTYPE_F32 || dt == Q42_DTYPE_F16 || dt == Q42_DTYPE_BF16;
}

static bool is_ffn(uint32_t role)
{
	return role == Q42_ROLE_FFN_GATE || role == Q42_ROLE_FFN_UP || role == Q42_ROLE_FFN_DOWN ||
	       role == Q42_ROLE_FFN_GATE_EXPS || role == Q42_ROLE_FFN_UP_EXPS ||
	       role == Q42_ROLE_FFN_DOWN_EXPS;
}

uint32_t q42_profile_target(uint32_t profile, int32_t type, uint32_t src, uint32_t role,
			    uint32_t rank, uint64_t row_elems)
{
	uint32_t flt, want;
	if (!is_float(src))
		return src;
	if (rank < 2)
		return type < 0 ? src : Q42_DTYPE_F32;
	/* the float dtype the tensor has without a quantized choice */
	flt = type < 0 || !is_float((uint32_t)type) ? src : (uint32_t)type;
	want = type < 0 ? src : (uint32_t)type;
	if (profile == Q42_PROFILE_Q8_0 || (profile == Q42_PROFILE_FFN_Q4_0 && is_ffn(role)) ||
	    (profile == Q42_PROFILE_FFN_TQ && is_ffn(role)))
		want = profile == Q42_PROFILE_Q8_0     ? Q42_DTYPE_Q8_0
		       : profile == Q42_PROFILE_FFN_TQ ? Q42_DTYPE_TQ2_0
						       : Q42_DTYPE_Q4_0;
	const q42_dtype_info *ti = q42_dtype_get(want);
	if (ti == NULL || row_elems % ti->block_elems != 0)
		return flt;
	return want;
}

void q42_quantize_q4_0(const float *x, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / QK4_0; i++, b += Q4_0_BYTES, x += QK4_0) {
		float amax = 0.0f, max = 0.0f;
		for (int j = 0; j < QK4_0; j++)
			if (amax < fabsf(x[j])) {
				amax = fabsf(x[j]);
				max = x[j];
			}
		const float d = max / -8.0f;
		const float id = d != 0.0f ? 1.0f / d : 0.0f;
		q42_st16(b, q42_f32_to_f16(d));
		for (int j = 0; j < QK4_0 / 2; j++) {
			/* x * id + 8.5 lies in [0.5, 16.5] for finite x: the cast is defined */
			float v0 = x[j] * id + 8.5f, v1 = x[j + QK4_0 / 2] * id + 8.5f;
			int q0 = v0 == v0 ? (int)v0 : 8, q1 = v1 == v1 ? (int)v1 : 8;
			q0 = q0 > 15 ? 15 : q0 < 0 ? 0 : q0;
			q1 = q1 > 15 ? 15 : q1 < 0 ? 0 : q1;
			b[2 + j] = (uint8_t)(q0 | (q1 << 4));
		}
	}
}

void q42_quantize_tq2_0(const float *x, void *dst, int64_t n)
{
	uint8_t *b = dst;
	for (int64_t i = 0; i < n / QK_TQ; i++, b += TQ2_0_BYTES, x += QK_TQ) {
		double sum = 0.0;
		for (int j = 0; j < QK_TQ; j++)
			sum += fabsf(x[j]);
		const uint16_t dh = q42_f32_to_f16((float)(sum / QK_TQ));
		const float d = q42_f16_to_f32(dh);
		memset(b, 0, 64);
		for (int e = 0; e < QK_TQ; e++) {
			float r = d > 0.0f && isfinite(d) ? roundf(x[e] / d) : 0.0f;
			int q = r >= 1.0f ? 1 : r <= -1.0f ? -1 : 0;
			b[(e / 128) * 32 + e % 32] |= (uint8_t)((q + 1) << (2 * ((e % 128) / 32)));
		}
		q42_st16(b + 64, dh);
	}
}

static void quantize_any(uint32_t dt, const float *src, void *dst, int64_t n)
{
	if (dt == Q42_DTYPE_Q4_0)
		q42_quantize_q4_0(src, dst, n);
	else if (dt == Q42_DTYPE_TQ2_0)
		q42_quantize_tq2_0(src, dst, n);
	else
		q42_kernels_get(dt, Q42_ISA_SCALAR)->quantize(src, dst, n);
}

int q42_convert(uint32_t sdt, const void *src, uint32_t ddt, void *dst, uint64_t n, bool add_one,
		q42_err *err)
{
	const q42_dtype_info *si = q42_dtype_get(sdt), *di = q42_dtype_get(ddt);
	const q42_type_kernels *sk = q42_kernels_get(sdt, Q42_ISA_SCALAR);
	const q42_type_kernels *dk = q42_kernels_get(ddt, Q42_ISA_SCALAR);
	bool dst_ok = ddt == Q42_DTYPE_Q4_0 || ddt == Q42_DTYPE_TQ2_0 ||
		      (dk != NULL && dk->quantize != NULL &&
		       (is_float(ddt) || ddt == Q42_DTYPE_Q8_0));
	float buf[CHUNK];

	if (si == NULL || di == NULL || sk == NULL || sk->dequant == NULL || !dst_ok)
		return q42_err_set(err, Q42_EUNSUPPORTED, "no conversion from %s to %s",
				   si ? si->name : "?", di ? di->name : "?");
	if (n % si->block_elems != 0 || n % di->block_elems != 0)
		return q42_err_set(err, Q42_EARG, "%llu elements: not whole %s and %s blocks",
				   (unsigned long long)n, si->name, di->name);
	const uint8_t *s = src;
	uint8_t *d = dst;
	for (uint64_t done = 0; done < n;) {
		uint64_t k = n - done > CHUNK ? CHUNK : n - done;
		sk->dequant(s + done / si->block_elems * si->block_bytes, buf, (int64_t)k);
		if (add_one)
			for (uint64_t i = 0; i < k; i++)
				buf[i] += 1.0f;
		quantize_any(ddt, buf, d + done / di->block_elems * di->block_bytes, (int64_t)k);
		done += k;
	}
	return Q42_OK;
}

/* ---- drivers ----------------------------------------------------------------- */

typedef struct job {
	char name[256];
	bool lora;             /* an adapter of the options has a pair for it */
	uint32_t src_dtype, dst_dtype, xform, rank;
	uint64_t dims[Q42_P64_MAX_RANK];
	uint64_t n_elems, src_bytes, dst_bytes;
	uint64_t plan_index;
	/* one expert's matrix of a stack (HF lfm2_moe): stack index into
	 * tctx.stacks, -1 otherwise, and its place in the stack */
	int64_t stack;
	uint32_t expert;
} job;

/* A stack of expert matrices gathered from one HF tensor per expert: the
 * experts arrive in file order, so the stack is assembled in memory and
 * written whole once every expert is in. */
typedef struct stack {
	uint64_t plan_index, piece_bytes; /* bytes of one expert, converted */
	uint32_t n, got;
	uint8_t *buf;      /* n * piece_bytes, allocated at the first expert */
	uint8_t *seen;     /* n flags */
} stack;

typedef struct tctx {
	const q42_transcode_opts *o;
	q42_p64_stream *ws;
	job *jobs;             /* per source tensor (file-major for HF) */
	uint64_t *first;       /* HF: index of each file's first job */
	uint8_t *out, *scratch;
	float *merge;          /* the largest adapted tensor in f32 */
	uint32_t n_head, n_head_kv;
	stack *stacks;
	uint64_t n_stacks;
} tctx;

static void policy_string(const q42_transcode_opts *o, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "transcode");
	if (o->type >= 0)
		n += snprintf(buf + n, cap - (size_t)n, " type=%s",
			      q42_dtype_get((uint32_t)o->type)->name);
	if (o->profile != Q42_PROFILE_NONE)
		n += snprintf(buf + n, cap - (size_t)n, " profile=%s", q42_profile_name(o->profile));
	for (uint32_t i = 0; i < o->n_lora && (size_t)n < cap; i++)
		n += snprintf(buf + n, cap - (size_t)n, " lora=%s:%.9g", q42_lora_sha256(o->lora[i]),
			      (double)o->lora_scale[i]);
}

/* Whether the writer quantizes to dt (q42_convert's destinations). */
static bool can_write(uint32_t dt)
{
	return is_float(dt) || dt == Q42_DTYPE_Q8_0 || dt == Q42_DTYPE_Q4_0 || dt == Q42_DTYPE_TQ2_0;
}

static int plan_job(job *j, const q42_transcode_opts *o, q42_transcode_report *rep, q42_err *err)
{
	int32_t layer;
	uint32_t role = q42_role_classify(j->name, strlen(j->name), &layer);
	j->dst_dtype = q42_profile_target(o->profile, o->type, j->src_dtype, role, j->rank, j->dims[0]);
	for (uint32_t i = 0; i < o->n_lora; i++)
		j->lora |= q42_lora_find(o->lora[i], j->name) != NULL;
	if (j->lora && !can_write(j->dst_dtype))
		j->dst_dtype = Q42_DTYPE_F16;
	if (!q42_dtype_nbytes(j->dst_dtype, j->n_elems, j->dims[0], &j->dst_bytes) ||
	    !q42_dtype_nbytes(j->src_dtype, j->n_elems, j->dims[0], &j->src_bytes))
		return q42_err_set(err, Q42_EUNSUPPORTED, "tensor %s: dtype %u with rows of %llu",
				   j->name, j->dst_dtype, (unsigned long long)j->dims[0]);
	if (j->dst_dtype != j->src_dtype)
		rep->n_rewritten++;
	uint32_t want = q42_profile_target(o->profile, o->type, j->src_dtype, role, j->rank, 0);
	if (want != j->dst_dtype && j->dims[0] != 0 && q42_dtype_get(want) != NULL &&
	    q42_dtype_get(want)->block_elems > 1)
		rep->n_misfit++;
	return Q42_OK;
}

/* An adapted tensor: src to f32, each adapter's pair merged in, in
 * order, then to the job's dtype. */
static int merge_job(tctx *c, const job *j, const uint8_t *src, q42_err *err)
{
	const uint64_t rows = j->n_elems / j->dims[0];
	int rc = q42_convert(j->src_dtype, src, Q42_DTYPE_F32, c->merge, j->n_elems, false, err);
	for (uint32_t i = 0; i < c->o->n_lora && rc == Q42_OK; i++) {
		const q42_lora_pair *p = q42_lora_find(c->o->lora[i], j->name);
		if (p != NULL)
			rc = q42_lora_merge(c->o->lora[i], p, c->o->lora_scale[i], c->merge, j->dims[0],
					    rows, err);
	}
	if (rc == Q42_OK)
		rc = q42_convert(Q42_DTYPE_F32, c->merge, j->dst_dtype, c->out, j->n_elems, false, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "tensor %s", j->name);
		return rc;
	}
	return q42_p64_stream_put(c->ws, j->plan_index, c->out, j->dst_bytes, err);
}

/* Every adapter fits the input: its architecture is arch, and each pair
 * names a 2-D tensor of jobs with shapes that fit (q42_lora_pair_check). */
static int check_lora(const q42_transcode_opts *o, const char *arch, const job *jobs, uint64_t n,
		      q42_transcode_report *rep, q42_err *err)
{
	for (uint32_t i = 0; i < o->n_lora; i++) {
		const q42_lora *l = o->lora[i];
		if (strcmp(q42_lora_arch(l), arch) != 0)
			return q42_err_set(err, Q42_EFORMAT, "%s: adapter for architecture '%s', the model is '%s'",
					   q42_lora_path(l), q42_lora_arch(l), arch);
		for (uint64_t k = 0; k < q42_lora_n_pairs(l); k++) {
			const q42_lora_pair *p = q42_lora_pair_at(l, k);
			const job *j = NULL;
			for (uint64_t t = 0; t < n && j == NULL; t++)
				if (q42_str_eq(p->base, jobs[t].name))
					j = &jobs[t];
			if (j == NULL || j->rank != 2)
				return q42_err_set(err, Q42_EFORMAT,
						   "%s: tensor %.*s: not a matrix of the model (an adapter for another model?)",
						   q42_lora_path(l), (int)p->base.len, p->base.p);
			int rc = q42_lora_pair_check(l, p, j->dims[0], j->dims[1], err);
			if (rc != Q42_OK)
				return rc;
		}
	}
	for (uint64_t t = 0; t < n; t++)
		rep->n_merged += jobs[t].lora;
	return Q42_OK;
}

/* One expert's matrix into its stack; the stack to the writer once every
 * expert is in. */
static int stack_put(tctx *c, const job *j, const uint8_t *src, q42_err *err)
{
	stack *k = &c->stacks[j->stack];
	if (k->buf == NULL) {
		k->buf = malloc((size_t)(k->piece_bytes * k->n));
		k->seen = calloc(k->n, 1);
		if (k->buf == NULL || k->seen == NULL)
			return q42_err_set(err, Q42_ENOMEM, "tensor %s: out of memory for %u experts",
					   j->name, k->n);
	}
	if (k->seen[j->expert])
		return q42_err_set(err, Q42_EFORMAT, "tensor %s: expert %u given twice", j->name,
				   j->expert);
	k->seen[j->expert] = 1;
	uint8_t *dst = k->buf + j->expert * k->piece_bytes;
	int rc = j->dst_dtype == j->src_dtype
			 ? (memcpy(dst, src, (size_t)j->src_bytes), Q42_OK)
			 : q42_convert(j->src_dtype, src, j->dst_dtype, dst, j->n_elems, false, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "tensor %s", j->name);
		return rc;
	}
	if (++k->got < k->n)
		return Q42_OK;
	rc = q42_p64_stream_put(c->ws, k->plan_index, k->buf, k->piece_bytes * k->n, err);
	free(k->buf);
	k->buf = NULL;
	return rc;
}

/* Where the stack of expert matrices named like j goes (created at its
 * first expert, with the plan tensor *pt[*n_plan]); every expert of a
 * stack has the same type and shape. */
static int stack_plan(tctx *c, job *j, uint32_t n_expert, q42_p64_plan_tensor *pt, uint64_t *n_plan,
		      uint64_t source_offset, q42_err *err)
{
	if (j->expert >= n_expert || j->rank != 2)
		return q42_err_set(err, Q42_EFORMAT, "tensor %s: expert %u of %u (num_experts), rank %u",
				   j->name, j->expert, n_expert, j->rank);
	for (uint64_t i = 0; i < c->n_stacks; i++) {
		const q42_p64_plan_tensor *t = &pt[c->stacks[i].plan_index];
		if (strcmp(t->name, j->name) != 0)
			continue;
		if (t->dtype != j->dst_dtype || t->dims[0] != j->dims[0] || t->dims[1] != j->dims[1])
			return q42_err_set(err, Q42_EFORMAT,
					   "tensor %s: expert %u is [%llu, %llu], the first one was [%llu, %llu]",
					   j->name, j->expert, (unsigned long long)j->dims[0],
					   (unsigned long long)j->dims[1], (unsigned long long)t->dims[0],
					   (unsigned long long)t->dims[1]);
		j->stack = (int64_t)i;
		j->plan_index = c->stacks[i].plan_index;
		return Q42_OK;
	}
	stack *k = &c->stacks[c->n_stacks];
	*k = (stack){.plan_index = *n_plan, .piece_bytes = j->dst_bytes, .n = n_expert};
	pt[*n_plan] = (q42_p64_plan_tensor){.name = j->name, .dtype = j->dst_dtype, .rank = 3,
					    .source_offset = source_offset};
	pt[*n_plan].dims[0] = j->dims[0];
	pt[*n_plan].dims[1] = j->dims[1];
	pt[*n_plan].dims[2] = n_expert;
	pt[*n_plan].dims[3] = 1;
	j->stack = (int64_t)c->n_stacks++;
	j->plan_index = (*n_plan)++;
	return Q42_OK;
}

/* Every stack got all its experts: the first one missing is named. */
static int stacks_complete(const tctx *c, const q42_p64_plan_tensor *pt, q42_err *err)
{
	for (uint64_t i = 0; i < c->n_stacks; i++) {
		const stack *k = &c->stacks[i];
		for (uint32_t x = 0; k->got < k->n && x < k->n; x++)
			if (k->seen == NULL || !k->seen[x])
				return q42_err_set(err, Q42_EFORMAT,
						   "tensor %s: expert %u of %u (num_experts) is missing",
						   pt[k->plan_index].name, x, k->n);
	}
	return Q42_OK;
}

/* Convert one tensor (src, the job's source bytes, may be permuted in
 * place) and hand it to the writer. */
static int run_job(tctx *c, const job *j, uint8_t *src, q42_err *err)
{
	int rc;
	if (j->xform == Q42_HF_X_PERMUTE_Q || j->xform == Q42_HF_X_PERMUTE_K) {
		uint64_t rows = j->rank >= 2 ? j->n_elems / j->dims[0] : 1;
		rc = q42_hf_permute_rows(src, c->scratch, rows, j->src_bytes / (rows ? rows : 1),
					 j->xform == Q42_HF_X_PERMUTE_Q ? c->n_head : c->n_head_kv, err);
		if (rc != Q42_OK) {
			q42_err_prefix(err, "tensor %s", j->name);
			return rc;
		}
	}
	bool add_one = j->xform == Q42_HF_X_ADD_ONE;
	if (j->stack >= 0)
		return stack_put(c, j, src, err);
	if (j->lora)
		return merge_job(c, j, src, err);
	if (j->dst_dtype == j->src_dtype && !add_one)
		return q42_p64_stream_put(c->ws, j->plan_index, src, j->src_bytes, err);
	rc = q42_convert(j->src_dtype, src, j->dst_dtype, c->out, j->n_elems, add_one, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "tensor %s", j->name);
		return rc;
	}
	return q42_p64_stream_put(c->ws, j->plan_index, c->out, j->dst_bytes, err);
}

static int hf_tensor(void *ctx, uint32_t file, uint64_t tensor, const uint8_t *data, q42_err *err)
{
	tctx *c = ctx;
	/* run_job may permute in place: the reader's buffer is ours until we return */
	return run_job(c, &c->jobs[c->first[file] + tensor], (uint8_t *)(uintptr_t)data, err);
}

static uint32_t ggml_of_st(uint32_t st)
{
	return st == Q42_ST_F32 ? Q42_DTYPE_F32 : st == Q42_ST_F16 ? Q42_DTYPE_F16
						: st == Q42_ST_BF16 ? Q42_DTYPE_BF16 : UINT32_MAX;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(const job *const *)a)->name, (*(const job *const *)b)->name);
}

/* Names must be unique after mapping (two HF names could meet). */
static int check_unique(job *jobs, uint64_t n, q42_err *err)
{
	job **v = malloc((n ? n : 1) * sizeof *v);
	int rc = Q42_OK;
	if (v == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	uint64_t m = 0;
	/* a stack once, by its expert 0 (a second expert 0 is refused when
	 * it arrives, a missing one leaves the stack unwritten) */
	for (uint64_t i = 0; i < n; i++)
		if (jobs[i].stack < 0 || jobs[i].expert == 0)
			v[m++] = &jobs[i];
	n = m;
	qsort(v, n, sizeof *v, cmp_name);
	for (uint64_t i = 1; i < n && rc == Q42_OK; i++)
		if (strcmp(v[i - 1]->name, v[i]->name) == 0)
			rc = q42_err_set(err, Q42_EFORMAT, "two tensors are both named %s", v[i]->name);
	free(v);
	return rc;
}

static int alloc_buffers(tctx *c, const job *jobs, uint64_t n, q42_err *err)
{
	uint64_t out = 1, scratch = 1, merge = 1;
	for (uint64_t i = 0; i < n; i++) {
		if (jobs[i].lora && jobs[i].n_elems > merge)
			merge = jobs[i].n_elems;
		if (jobs[i].dst_bytes > out)
			out = jobs[i].dst_bytes;
		if (jobs[i].xform == Q42_HF_X_PERMUTE_Q || jobs[i].xform == Q42_HF_X_PERMUTE_K)
			if (jobs[i].src_bytes > scratch)
				scratch = jobs[i].src_bytes;
	}
	c->out = malloc((size_t)out);
	c->scratch = malloc((size_t)scratch);
	c->merge = malloc((size_t)merge * sizeof(float));
	if (c->out == NULL || c->scratch == NULL || c->merge == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory for a %llu-byte tensor",
				   (unsigned long long)out);
	return Q42_OK;
}

int q42_transcode_hf(const char *path, const q42_transcode_opts *o, FILE *out,
		     q42_transcode_report *rep, q42_err *err)
{
	q42_st_model m;
	q42_hf_config cfg;
	q42_hf_vocab voc;
	q42_p64_plan_tensor *pt = NULL;
	tctx c = {.o = o};
	bool have_cfg = false, have_voc = false;
	uint8_t sha[32];
	uint64_t src_size = 0, k = 0, n_plan = 0;
	int rc;
	q42_err sub = {0};

	memset(rep, 0, sizeof *rep);
	memset(&voc, 0, sizeof voc);
	memset(&cfg, 0, sizeof cfg);
	policy_string(o, rep->policy, sizeof rep->policy);
	if ((rc = q42_st_model_open(&m, path, err)) != Q42_OK)
		goto done;
	rep->input_kind = m.kind == Q42_ST_KIND_FILE ? "safetensors"
			  : m.kind == Q42_ST_KIND_FOLDER ? "folder" : "archive";
	rep->n_files = m.n_files;
	rep->max_tensor_bytes = m.max_tensor_bytes;
	if (m.config.data == NULL) {
		snprintf(rep->w.hparams_note, sizeof rep->w.hparams_note, "no config.json");
	} else {
		rc = q42_hf_config_parse(&cfg, m.config.data, m.config.len, &sub);
		if (rc == Q42_EUNSUPPORTED)
			snprintf(rep->w.hparams_note, sizeof rep->w.hparams_note, "%s", sub.msg);
		else if (rc != Q42_OK) {
			*err = sub;
			goto done;
		}
		have_cfg = rc == Q42_OK;
		rc = Q42_OK;
		if (have_cfg && (rc = q42_hf_modules_parse(&cfg, &m, err)) != Q42_OK)
			goto done;
	}
	if (!have_cfg) {
		snprintf(rep->w.vocab_note, sizeof rep->w.vocab_note,
			 "no supported config.json to go with a tokenizer");
	} else if (m.tokenizer.data == NULL) {
		snprintf(rep->w.vocab_note, sizeof rep->w.vocab_note, "no tokenizer.json");
	} else if (q42_hf_vocab_parse(&voc, m.tokenizer.data, m.tokenizer.len,
				      m.tokenizer_config.data, m.tokenizer_config.len, &cfg,
				      &sub) == Q42_OK) {
		have_voc = true;
	} else {
		snprintf(rep->w.vocab_note, sizeof rep->w.vocab_note, "%s", sub.msg);
	}

	c.jobs = calloc(m.n_tensors ? m.n_tensors : 1, sizeof *c.jobs);
	c.first = calloc(m.n_files + 1, sizeof *c.first);
	c.stacks = calloc(m.n_tensors ? m.n_tensors : 1, sizeof *c.stacks);
	/* two more: phi3's LongRoPE factors, made from config.json */
	pt = calloc(m.n_tensors + 2, sizeof *pt);
	if (c.jobs == NULL || c.first == NULL || c.stacks == NULL || pt == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for %llu tensors",
				 (unsigned long long)m.n_tensors);
		goto done;
	}
	for (uint32_t f = 0; f < m.n_files; f++) {
		c.first[f] = k;
		for (uint64_t t = 0; t < m.files[f].n_tensors; t++, k++) {
			const q42_st_tensor *st = &m.files[f].tensors[t];
			job *j = &c.jobs[k];
			uint32_t r = 0;
			const bool piece = have_cfg && q42_hf_expert_piece(&cfg, st->name, j->name,
									  sizeof j->name, &j->expert);
			j->stack = -1;
			if (!piece && (!have_cfg || !q42_hf_tensor_name(&cfg, st->name, j->name,
									  sizeof j->name, &j->xform))) {
				/* a module's tensor q42 would not know what to do with */
				if (strchr(st->name, '/') != NULL) {
					rc = q42_err_set(err, Q42_EUNSUPPORTED,
							 "%s: tensor %s: not a weight of a module q42 "
							 "runs (a Dense module's linear.weight)",
							 m.files[f].name, st->name);
					goto done;
				}
				if (strlen(st->name) >= sizeof j->name) {
					rc = q42_err_set(err, Q42_EUNSUPPORTED,
							 "%s: tensor name of %zu bytes, at most %zu",
							 m.files[f].name, strlen(st->name),
							 sizeof j->name - 1);
					goto done;
				}
				snprintf(j->name, sizeof j->name, "%s", st->name);
				j->xform = Q42_HF_X_NONE;
			}
			j->src_dtype = ggml_of_st(st->dtype);
			if (j->src_dtype == UINT32_MAX) {
				rc = q42_err_set(err, Q42_EUNSUPPORTED,
						 "%s: tensor %s: dtype %s: p64c reads F32, F16 and BF16",
						 m.files[f].name, st->name, q42_st_dtype_name(st->dtype));
				goto done;
			}
			/* HF shapes list the slowest dimension first; GGUF the fastest */
			for (uint32_t d = st->rank; d-- > 0;)
				if (!(j->xform == Q42_HF_X_SQUEEZE && st->shape[d] == 1 && st->rank > 2 &&
				      d == 1)) {
					if (r >= Q42_P64_MAX_RANK) {
						rc = q42_err_set(err, Q42_EUNSUPPORTED,
								 "%s: tensor %s: rank %u, P64 holds 1..4",
								 m.files[f].name, st->name, st->rank);
						goto done;
					}
					j->dims[r++] = st->shape[d];
				}
			j->rank = r ? r : 1;
			for (uint32_t d = 0; d < Q42_P64_MAX_RANK; d++)
				if (d >= r)
					j->dims[d] = 1;
			j->n_elems = st->n_elems;
			if ((rc = plan_job(j, o, rep, err)) != Q42_OK)
				goto done;
			if (piece) {
				rc = stack_plan(&c, j, cfg.hp.n_expert, pt, &n_plan,
						m.files[f].data_start + st->begin, err);
				if (rc != Q42_OK)
					goto done;
				continue;
			}
			j->plan_index = n_plan++;
			pt[j->plan_index] = (q42_p64_plan_tensor){.name = j->name, .dtype = j->dst_dtype,
								  .rank = j->rank,
								  .source_offset = m.files[f].data_start + st->begin};
			memcpy(pt[j->plan_index].dims, j->dims, sizeof j->dims);
			/* n_ff and n_vocab from the shapes, which cannot disagree with the weights */
			int32_t layer;
			uint32_t role = q42_role_classify(j->name, strlen(j->name), &layer);
			if (have_cfg && (role == Q42_ROLE_FFN_UP || role == Q42_ROLE_FFN_GATE) &&
			    layer >= 0 && (uint32_t)layer < cfg.hp.n_layer && j->dims[1] <= UINT32_MAX)
				/* phi3's gate_up_proj: gate rows, then up rows */
				cfg.hp.n_ff[layer] = (uint32_t)j->dims[1] /
						     (cfg.family == Q42_HF_PHI3 ? 2 : 1);
			if (have_cfg && role == Q42_ROLE_TOKEN_EMBD && cfg.hp.n_vocab == 0 &&
			    j->dims[1] <= UINT32_MAX)
				cfg.hp.n_vocab = (uint32_t)j->dims[1];
		}
	}
	if (o->n_lora > 0 && !have_cfg) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "%s: --lora needs the model's architecture (%s)",
				 path, rep->w.hparams_note);
		goto done;
	}
	/* phi3's LongRoPE factors are config.json numbers in HF, F32 tensors
	 * in llama.cpp's GGUF (p64(5): source offset 0) */
	const uint64_t rope_first = n_plan;
	if (have_cfg && cfg.n_rope_factors > 0)
		for (int i = 0; i < 2; i++)
			pt[n_plan++] = (q42_p64_plan_tensor){
				.name = i == 0 ? "rope_factors_long.weight" : "rope_factors_short.weight",
				.dtype = Q42_DTYPE_F32, .rank = 1, .dims = {cfg.n_rope_factors, 1, 1, 1}};
	if ((rc = check_unique(c.jobs, k, err)) != Q42_OK ||
	    (rc = check_lora(o, cfg.hp.arch, c.jobs, k, rep, err)) != Q42_OK ||
	    (rc = alloc_buffers(&c, c.jobs, k, err)) != Q42_OK)
		goto done;
	c.n_head = cfg.hp.n_head;
	c.n_head_kv = cfg.n_head_kv;
	q42_p64_plan plan = {.n_tensors = n_plan, .tensors = pt,
			     .hparams = have_cfg ? &cfg.hp : NULL,
			     .vocab = have_voc ? &voc.v : NULL,
			     .source_format = Q42_P64_SOURCE_SAFETENSORS, .source_version = 1,
			     .policy = rep->policy};
	/* the source size is known only after the stream; PROV is final then */
	for (uint32_t f = 0; f < m.n_files; f++)
		plan.source_size += m.files[f].size;
	if (m.kind != Q42_ST_KIND_FILE) {
		plan.source_size += m.config.len + m.tokenizer.len + m.tokenizer_config.len +
				    m.index.len + m.modules_json.len + m.st_config.len;
		for (uint32_t i = 0; i < m.n_modules; i++)
			plan.source_size += m.modules[i].config.len;
	}
	if ((rc = q42_p64_stream_open(&c.ws, &plan, &o->write, out, err)) != Q42_OK ||
	    (rc = q42_st_model_stream(&m, hf_tensor, &c, sha, &src_size, err)) != Q42_OK ||
	    (rc = stacks_complete(&c, pt, err)) != Q42_OK)
		goto done;
	for (uint64_t i = rope_first; i < n_plan && rc == Q42_OK; i++)
		rc = q42_p64_stream_put(c.ws, i, i == rope_first ? cfg.rope_long : cfg.rope_short,
					(uint64_t)cfg.n_rope_factors * sizeof(float), err);
	if (rc != Q42_OK || (rc = q42_p64_stream_finish(c.ws, sha, &rep->w, err)) != Q42_OK)
		goto done;
	if (src_size != plan.source_size)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: the input changed while it was read", path);
done:
	q42_p64_stream_close(c.ws);
	for (uint64_t i = 0; i < c.n_stacks; i++) {
		free(c.stacks[i].buf);
		free(c.stacks[i].seen);
	}
	free(c.stacks);
	free(c.jobs);
	free(c.first);
	free(c.out);
	free(c.scratch);
	free(c.merge);
	free(pt);
	if (have_voc)
		q42_hf_vocab_free(&voc);
	q42_st_model_close(&m);
	return rc;
}

int q42_transcode_gguf(const q42_gguf *g, const q42_transcode_opts *o, FILE *out,
		       q42_transcode_report *rep, q42_err *err)
{
	q42_hparams *hp = malloc(sizeof *hp);
	q42_vocab voc;
	q42_p64_plan_tensor *pt = NULL;
	tctx c = {.o = o};
	bool have_hp, have_voc;
	uint8_t sha[32];
	q42_err sub = {0};
	int rc = Q42_OK;

	memset(rep, 0, sizeof *rep);
	memset(&voc, 0, sizeof voc);
	policy_string(o, rep->policy, sizeof rep->policy);
	rep->input_kind = "gguf";
	if (hp == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	have_hp = q42_hparams_from_gguf(hp, g, &sub) == Q42_OK;
	if (!have_hp)
		snprintf(rep->w.hparams_note, sizeof rep->w.hparams_note, "%s", sub.msg);
	have_voc = q42_vocab_from_gguf(&voc, g, &sub) == Q42_OK;
	if (!have_voc)
		snprintf(rep->w.vocab_note, sizeof rep->w.vocab_note, "%s", sub.msg);
	c.jobs = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *c.jobs);
	pt = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *pt);
	if (c.jobs == NULL || pt == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto done;
	}
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		const q42_gguf_tensor *s = &g->tensors[i];
		job *j = &c.jobs[i];
		if (!s->type_known || s->n_dims < 1 || s->n_dims > Q42_P64_MAX_RANK ||
		    s->name.len >= sizeof j->name) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED,
					 "tensor %.*s: an unknown dtype, rank or long name cannot be "
					 "transcoded", (int)s->name.len, s->name.p);
			goto done;
		}
		memcpy(j->name, s->name.p, (size_t)s->name.len);
		j->src_dtype = s->type;
		j->rank = s->n_dims;
		for (uint32_t d = 0; d < Q42_P64_MAX_RANK; d++)
			j->dims[d] = d < s->n_dims ? s->ne[d] : 1;
		j->n_elems = s->n_elems;
		j->plan_index = i;
		j->stack = -1;
		if (s->nbytes > rep->max_tensor_bytes)
			rep->max_tensor_bytes = s->nbytes;
		if ((rc = plan_job(j, o, rep, err)) != Q42_OK)
			goto done;
		pt[i] = (q42_p64_plan_tensor){.name = j->name, .dtype = j->dst_dtype, .rank = j->rank,
					      .source_offset = s->abs_offset};
		memcpy(pt[i].dims, j->dims, sizeof j->dims);
	}
	if (o->n_lora > 0 && !have_hp) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "--lora needs the model's architecture (%s)",
				 rep->w.hparams_note);
		goto done;
	}
	if ((rc = check_lora(o, hp->arch, c.jobs, g->n_tensors, rep, err)) != Q42_OK ||
	    (rc = alloc_buffers(&c, c.jobs, g->n_tensors, err)) != Q42_OK)
		goto done;
	if (o->write.no_source_sha256)
		memset(sha, 0, sizeof sha);
	else if ((rc = q42_sha256(g->file, g->file_size, sha, err)) != Q42_OK)
		goto done;
	q42_p64_plan plan = {.n_tensors = g->n_tensors, .tensors = pt,
			     .hparams = have_hp ? hp : NULL, .vocab = have_voc ? &voc : NULL,
			     .source_format = Q42_P64_SOURCE_GGUF, .source_version = g->version,
			     .source_size = g->file_size, .policy = rep->policy};
	if ((rc = q42_p64_stream_open(&c.ws, &plan, &o->write, out, err)) != Q42_OK)
		goto done;
	/* The source is mapped read-only: a tensor that only changes dtype
	 * is converted from the mapping; nothing here permutes. */
	for (uint64_t i = 0; i < g->n_tensors && rc == Q42_OK; i++)
		rc = run_job(&c, &c.jobs[i], (uint8_t *)(uintptr_t)g->tensors[i].data, err);
	if (rc == Q42_OK)
		rc = q42_p64_stream_finish(c.ws, sha, &rep->w, err);
done:
	q42_p64_stream_close(c.ws);
	free(c.jobs);
	free(c.out);
	free(c.scratch);
	free(c.merge);
	free(pt);
	if (have_voc)
		q42_vocab_free(&voc);
	free(hp);
	return rc;
}
