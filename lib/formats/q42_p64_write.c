/* q42_p64_write.c -- compile a parsed GGUF into P64 v3 (see p64(5)).
 *
 * The metadata image (header, section table, sections) is assembled in one
 * q42_buf, sized before any blob is written; the tensor bytes are streamed
 * straight from the source mapping in large writes, their CRC-32C computed
 * on the way. On a seekable output the header and metadata are rewritten at
 * the end with the CRCs and the source SHA-256 (hashed by a second thread
 * meanwhile); on a pipe the CRCs are computed in a first pass. Output depends
 * only on the input bytes and the options: no clock, no path, no host data.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_buf.h"
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "formats/q42_p64.h"
#include "formats/q42_p64_stats.h"
#include "formats/q42_roles.h"
#include "common/q42_types.h"

#ifndef Q42_VERSION
#define Q42_VERSION "unknown"
#endif

/* Bytes copied per write: large enough to amortise the system call, small
 * enough that the CRC pass over a chunk still finds it in cache. */
#define COPY_CHUNK (1u << 20)

typedef struct wtensor {
	const q42_gguf_tensor *src; /* GGUF compile only; NULL for a streamed plan */
	q42_str name;
	uint32_t dtype;
	uint32_t n_dims;
	uint64_t ne[Q42_P64_MAX_RANK];
	uint64_t source_offset;
	bool written;      /* streamed plans: put() has delivered the blob */
	uint64_t nbytes;   /* source length (gap to the next tensor for unknown dtypes) */
	uint64_t offset;   /* blob offset in the P64, relative to the output start */
	uint32_t crc;
	uint32_t role;
	int32_t layer;
	uint32_t name_ref[2];
} wtensor;

typedef struct wctx {
	const q42_gguf *g;     /* GGUF compile; NULL for a streamed plan */
	/* What PROV and the GGUF section say (see p64(5), "PROV"). */
	const uint8_t *gguf_header;
	uint64_t gguf_header_len;
	uint64_t source_size;
	uint32_t source_format, source_version;
	const char *policy;
	FILE *out;
	q42_err *err;
	uint64_t page;
	wtensor *t;
	uint64_t n;
	q42_buf strs;
	q42_buf meta;      /* [0, meta_end) of the output */
	uint64_t sec_off[Q42_P64_MAX_SECTIONS];
	uint64_t sec_len[Q42_P64_MAX_SECTIONS];
	bool sec_on[Q42_P64_MAX_SECTIONS];
	uint32_t n_sections;
	uint64_t meta_end;
	uint64_t file_size;
	uint32_t flags;
	uint64_t written;
	bool has_hp, has_vocab;
	q42_hparams hp;
	q42_vocab vocab;
	uint32_t n_layer_records;
	/* SHA-256 of the source, computed by a helper thread. */
	pthread_t sha_thread;
	bool sha_running;
	int sha_rc;
	uint8_t sha[32];
	q42_err sha_err;
} wctx;

static void *sha_main(void *arg)
{
	wctx *w = arg;
	w->sha_rc = q42_sha256(w->g->file, w->g->file_size, w->sha, &w->sha_err);
	return NULL;
}

static int sha_join(wctx *w)
{
	if (w->sha_running) {
		pthread_join(w->sha_thread, NULL);
		w->sha_running = false;
	}
	if (w->sha_rc != Q42_OK) {
		w->err != NULL ? (void)(*w->err = w->sha_err) : (void)0;
		return w->sha_rc;
	}
	return Q42_OK;
}

/* Append s to the string table; the ref is (offset, length), NUL follows. */
static bool str_add(wctx *w, const void *s, uint64_t len, uint32_t ref[2])
{
	if (w->strs.len + len + 1 > UINT32_MAX || len > UINT32_MAX)
		return false;
	ref[0] = (uint32_t)w->strs.len;
	ref[1] = (uint32_t)len;
	q42_buf_append(&w->strs, s, (size_t)len);
	q42_buf_u8(&w->strs, 0);
	return !w->strs.failed;
}

static bool str_put(wctx *w, q42_buf *b, const void *s, uint64_t len)
{
	uint32_t ref[2];
	if (len == 0) {
		ref[0] = ref[1] = 0;
	} else if (!str_add(w, s, len, ref)) {
		return false;
	}
	q42_buf_u32le(b, ref[0]);
	q42_buf_u32le(b, ref[1]);
	return true;
}

/* Sizes, gap checks and roles of the source tensors. The source must be
 * rebuildable: no tensor overlaps another and every byte of the data area
 * that no tensor covers is zero (see p64(5), "Source GGUF"). */
static int plan_tensors(wctx *w, q42_p64_write_report *rep)
{
	const q42_gguf *g = w->g;
	w->n = g->n_tensors;
	if (w->n > UINT32_MAX)
		return q42_err_set(w->err, Q42_EUNSUPPORTED, "%llu tensors: P64 holds at most %u",
				   (unsigned long long)w->n, UINT32_MAX);
	w->t = calloc(w->n ? w->n : 1, sizeof *w->t);
	if (w->t == NULL)
		return q42_err_set(w->err, Q42_ENOMEM, "out of memory for %llu tensors",
				   (unsigned long long)w->n);
	uint64_t pos = g->data_offset;
	for (uint64_t i = 0; i < w->n; i++) {
		const q42_gguf_tensor *s = &g->tensors[i];
		wtensor *t = &w->t[i];
		t->src = s;
		t->name = s->name;
		t->dtype = s->type;
		t->n_dims = s->n_dims;
		for (uint32_t k = 0; k < Q42_P64_MAX_RANK; k++)
			t->ne[k] = k < s->n_dims ? s->ne[k] : 1;
		t->source_offset = s->abs_offset;
		if (i > 0 && s->abs_offset < w->t[i - 1].src->abs_offset)
			return q42_err_set(w->err, Q42_EUNSUPPORTED,
					   "tensor %.*s: source data out of order", (int)s->name.len,
					   s->name.p);
		/* q42_gguf_parse already refuses empty and duplicate names; P64
		 * readers refuse them too, so never write one. */
		if (s->name.len == 0)
			return q42_err_set(w->err, Q42_EUNSUPPORTED, "tensor %llu has an empty name",
					   (unsigned long long)i);
		if (s->n_dims < 1 || s->n_dims > Q42_P64_MAX_RANK)
			return q42_err_set(w->err, Q42_EUNSUPPORTED,
					   "tensor %.*s: rank %u, P64 holds ranks 1..%u",
					   (int)s->name.len, s->name.p, s->n_dims, Q42_P64_MAX_RANK);
		if (s->type_known) {
			t->nbytes = s->nbytes;
		} else {
			uint64_t next = i + 1 < w->n ? g->tensors[i + 1].abs_offset : g->file_size;
			t->nbytes = next - s->abs_offset;
			if (rep != NULL)
				rep->n_unknown_dtype++;
		}
		if (s->abs_offset < pos)
			return q42_err_set(w->err, Q42_EUNSUPPORTED,
					   "tensor %.*s: source bytes at %llu overlap the previous tensor",
					   (int)s->name.len, s->name.p, (unsigned long long)s->abs_offset);
		for (uint64_t k = pos; k < s->abs_offset; k++)
			if (g->file[k] != 0)
				return q42_err_set(w->err, Q42_EUNSUPPORTED,
						   "source byte at offset %llu (padding before tensor "
						   "%.*s) is 0x%02x, not 0: it could not be rebuilt, "
						   "refusing to compile",
						   (unsigned long long)k, (int)s->name.len, s->name.p,
						   g->file[k]);
		pos = s->abs_offset + t->nbytes;
		t->role = q42_role_classify(s->name.p, s->name.len, &t->layer);
		if (t->role == Q42_ROLE_UNKNOWN && rep != NULL)
			rep->n_unknown_role++;
		if (t->layer >= 0 && (uint32_t)t->layer + 1 > w->n_layer_records)
			w->n_layer_records = (uint32_t)t->layer + 1;
	}
	for (uint64_t k = pos; k < g->file_size; k++)
		if (g->file[k] != 0)
			return q42_err_set(w->err, Q42_EUNSUPPORTED,
					   "source byte at offset %llu (after the last tensor) is 0x%02x, "
					   "not 0: it could not be rebuilt, refusing to compile",
					   (unsigned long long)k, g->file[k]);
	return Q42_OK;
}

static bool put_hparams(wctx *w, q42_buf *b, const q42_hparams *hp)
{
	char arch[Q42_ARCH_MAX];
	memset(arch, 0, sizeof arch);
	size_t al = strnlen(hp->arch, Q42_ARCH_MAX - 1);
	memcpy(arch, hp->arch, al);
	q42_buf_append(b, arch, sizeof arch);
	const uint32_t u1[] = {hp->n_vocab, hp->n_ctx_train, hp->n_embd, hp->n_layer,
			       hp->n_head, hp->head_dim_k, hp->head_dim_v, hp->n_rot};
	for (size_t i = 0; i < sizeof u1 / sizeof u1[0]; i++)
		q42_buf_u32le(b, u1[i]);
	q42_buf_f32le(b, hp->rope_freq_base);
	q42_buf_f32le(b, hp->rope_freq_scale);
	q42_buf_f32le(b, hp->rope_freq_base_swa);
	q42_buf_f32le(b, hp->norm_rms_eps);
	q42_buf_f32le(b, hp->norm_eps);
	q42_buf_u32le(b, hp->sliding_window);
	q42_buf_f32le(b, hp->attn_softcap);
	q42_buf_f32le(b, hp->final_softcap);
	q42_buf_u32le(b, hp->n_expert);
	q42_buf_u32le(b, hp->n_expert_used);
	q42_buf_u32le(b, hp->conv_l_cache);
	q42_buf_u32le(b, hp->file_type);
	for (uint32_t i = 0; i < hp->n_layer; i++)
		q42_buf_u32le(b, hp->n_head_kv[i]);
	for (uint32_t i = 0; i < hp->n_layer; i++)
		q42_buf_u32le(b, hp->n_ff[i]);
	/* the tail only where one of its fields is set, so that models
	 * without them keep the bytes they had before it existed */
	const bool cb = hp->cb_flags != 0 || hp->cb_query_len != 0 || hp->cb_doc_len != 0;
	const bool embd = cb || hp->non_causal != 0 || hp->pooling != 0 || hp->n_dense_2 != 0;
	const bool moe = cb || hp->n_ff_exp != 0 || hp->n_dense_lead != 0 || hp->expert_gating != 0;
	if (moe || embd || hp->swa_pattern != 0 || hp->rope_attn_factor != 0.0f || hp->n_ctx_orig != 0) {
		q42_buf_u32le(b, hp->swa_pattern);
		q42_buf_f32le(b, hp->rope_attn_factor);
		q42_buf_u32le(b, hp->n_ctx_orig);
		q42_buf_u32le(b, 0);
	}
	if (embd || moe) { /* the embedding fields, after the tail */
		q42_buf_u32le(b, hp->non_causal);
		q42_buf_u32le(b, hp->pooling);
		q42_buf_u32le(b, hp->n_dense_2);
		q42_buf_u32le(b, 0);
	}
	if (moe) { /* the mixture-of-experts fields, after those */
		q42_buf_u32le(b, hp->n_ff_exp);
		q42_buf_u32le(b, hp->n_dense_lead);
		q42_buf_u32le(b, hp->expert_gating);
		q42_buf_u32le(b, 0);
	}
	if (!cb) /* the ColBERT fields, last */
		return true;
	bool ok = str_put(w, b, hp->cb_query_prefix, strlen(hp->cb_query_prefix)) &&
		  str_put(w, b, hp->cb_doc_prefix, strlen(hp->cb_doc_prefix)) &&
		  str_put(w, b, hp->cb_skip, hp->cb_skip_len);
	q42_buf_u32le(b, hp->cb_query_len);
	q42_buf_u32le(b, hp->cb_doc_len);
	q42_buf_u32le(b, hp->cb_flags);
	q42_buf_u32le(b, 0);
	return ok;
}

static bool put_vocab(wctx *w, q42_buf *b)
{
	const q42_vocab *v = &w->vocab;
	bool ok = str_put(w, b, v->model.p, v->model.len) && str_put(w, b, v->pre.p, v->pre.len);
	q42_buf_u32le(b, v->n_tokens);
	q42_buf_u32le(b, v->n_merges);
	q42_buf_u32le(b, (v->scores ? 1u : 0u) | (v->types ? 2u : 0u) | (v->charsmap.len ? 4u : 0u));
	const int32_t ids[8] = {v->bos, v->eos, v->eot, v->eom, v->unk, v->sep, v->pad, v->mask};
	for (int i = 0; i < 8; i++)
		q42_buf_u32le(b, (uint32_t)ids[i]);
	const int8_t pol[4] = {v->add_bos, v->add_eos, v->add_space_prefix,
			       v->remove_extra_whitespaces};
	for (int i = 0; i < 4; i++)
		q42_buf_u8(b, (uint8_t)pol[i]);
	for (uint32_t i = 0; ok && i < v->n_tokens; i++)
		ok = str_put(w, b, v->tokens[i].p, v->tokens[i].len);
	if (v->scores)
		for (uint32_t i = 0; i < v->n_tokens; i++)
			q42_buf_f32le(b, v->scores[i]);
	if (v->types)
		for (uint32_t i = 0; i < v->n_tokens; i++)
			q42_buf_u32le(b, (uint32_t)v->types[i]);
	for (uint32_t i = 0; ok && i < v->n_merges; i++)
		ok = str_put(w, b, v->merges[i].p, v->merges[i].len);
	if (ok && v->charsmap.len)
		ok = str_put(w, b, v->charsmap.p, v->charsmap.len);
	return ok;
}

static void put_descriptors(wctx *w, q42_buf *b)
{
	for (uint64_t i = 0; i < w->n; i++) {
		const wtensor *t = &w->t[i];
		q42_buf_u32le(b, t->name_ref[0]);
		q42_buf_u32le(b, t->name_ref[1]);
		q42_buf_u64le(b, q42_p64_name_hash(t->name.p, t->name.len));
		q42_buf_u32le(b, t->dtype);
		q42_buf_u32le(b, t->role);
		q42_buf_u32le(b, (uint32_t)t->layer);
		q42_buf_u32le(b, t->n_dims);
		for (uint32_t k = 0; k < Q42_P64_MAX_RANK; k++)
			q42_buf_u64le(b, t->ne[k]);
		q42_buf_u64le(b, t->offset);
		q42_buf_u64le(b, t->nbytes);
		q42_buf_u64le(b, t->source_offset);
		q42_buf_u32le(b, t->crc);
		q42_buf_u32le(b, 0);
	}
}

static void put_manifold(wctx *w, q42_buf *b, const q42_p64_manifold *recs, uint32_t n)
{
	(void)w;
	for (uint32_t i = 0; i < n; i++) {
		const q42_p64_manifold *r = &recs[i];
		q42_buf_u32le(b, (uint32_t)r->layer);
		q42_buf_u32le(b, r->n_tensors);
		q42_buf_u64le(b, r->n_elems);
		q42_buf_u32le(b, r->coord_mask);
		q42_buf_u32le(b, r->n_skipped);
		for (uint32_t c = 0; c < Q42_P64_MANIFOLD_COORDS; c++)
			q42_buf_f32le(b, r->coord[c]);
	}
}

/* Manifold statistics from the source bytes of a GGUF compile (see
 * q42_p64_stats.h); recs has n_layer_records + 1 entries. */
static int gguf_manifold(wctx *w, q42_p64_manifold *recs)
{
	q42_p64_stats_input *in = calloc(w->n ? w->n : 1, sizeof *in);
	if (in == NULL)
		return q42_err_set(w->err, Q42_ENOMEM, "out of memory for manifold records");
	for (uint64_t i = 0; i < w->n; i++) {
		const q42_gguf_tensor *s = w->t[i].src;
		in[i] = (q42_p64_stats_input){.data = w->g->file + s->abs_offset,
					      .dtype = s->type,
					      .n_elems = s->n_elems,
					      .row_elems = s->ne[0],
					      .role = w->t[i].role,
					      .layer = w->t[i].layer};
	}
	bool ok = q42_p64_stats_compute(in, w->n, recs, w->n_layer_records + 1);
	free(in);
	return ok ? Q42_OK : q42_err_set(w->err, Q42_ENOMEM, "out of memory for manifold records");
}

/* Build every section into separate buffers, then lay them out. recs NULL
 * leaves the manifold records zero, to be patched in by patch_manifold(). */
static int build_meta(wctx *w, const char *tool, const q42_p64_manifold *recs)
{
	q42_buf sec[Q42_P64_MAX_SECTIONS];
	q42_p64_manifold *zero = NULL;
	uint32_t n_recs = w->n_layer_records + 1;
	int rc = Q42_OK;
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++)
		q42_buf_init(&sec[i]);
	q42_buf_u8(&w->strs, 0); /* offset 0: the empty string */

	if ((w->has_hp && !put_hparams(w, &sec[Q42_P64_SEC_HPAR], &w->hp)) ||
	    (w->has_vocab && !put_vocab(w, &sec[Q42_P64_SEC_Q42T]))) {
		rc = q42_err_set(w->err, Q42_EUNSUPPORTED, "tokenizer: string table exceeds 4 GiB");
		goto done;
	}
	for (uint64_t i = 0; i < w->n; i++)
		if (!str_add(w, w->t[i].name.p, w->t[i].name.len, w->t[i].name_ref)) {
			rc = q42_err_set(w->err, Q42_EUNSUPPORTED, "string table exceeds 4 GiB");
			goto done;
		}
	if (recs == NULL) {
		zero = calloc(n_recs, sizeof *zero);
		if (zero == NULL) {
			rc = q42_err_set(w->err, Q42_ENOMEM, "out of memory for manifold records");
			goto done;
		}
		recs = zero;
	}
	put_manifold(w, &sec[Q42_P64_SEC_MANI], recs, n_recs);
	if (w->gguf_header != NULL)
		q42_buf_append(&sec[Q42_P64_SEC_GGUF], w->gguf_header, (size_t)w->gguf_header_len);

	/* PROV: SHA-256 is patched in once known. */
	q42_buf *pv = &sec[Q42_P64_SEC_PROV];
	q42_buf_zeros(pv, 32);
	q42_buf_u64le(pv, w->source_size);
	q42_buf_u32le(pv, w->source_format);
	q42_buf_u32le(pv, w->source_version);
	if (!str_put(w, pv, w->policy, strlen(w->policy)) || !str_put(w, pv, tool, strlen(tool))) {
		rc = q42_err_set(w->err, Q42_EUNSUPPORTED, "string table exceeds 4 GiB");
		goto done;
	}

	w->flags = w->gguf_header != NULL ? Q42_P64_F_BYTE_PRESERVING : 0;
	if (w->has_hp)
		w->flags |= Q42_P64_F_HAS_HPARAMS;
	if (w->has_vocab)
		w->flags |= Q42_P64_F_HAS_TOKENIZER;
	if (w->has_hp && w->has_vocab && w->n > 0)
		w->flags |= Q42_P64_F_BOOTABLE;
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++)
		w->sec_on[i] = true;
	w->sec_on[Q42_P64_SEC_HPAR] = w->has_hp;
	w->sec_on[Q42_P64_SEC_Q42T] = w->has_vocab;
	w->sec_on[Q42_P64_SEC_GGUF] = w->gguf_header != NULL;
	w->n_sections = 0;
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++)
		w->n_sections += w->sec_on[i];

	/* Layout: header, table, sections (8-aligned), then page-aligned blobs. */
	uint64_t pos = Q42_P64_HEADER_SIZE + (uint64_t)w->n_sections * Q42_P64_SECTION_ENTRY_SIZE;
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++) {
		if (!w->sec_on[i])
			continue;
		w->sec_len[i] = i == Q42_P64_SEC_STRS ? w->strs.len
			      : i == Q42_P64_SEC_TDSC ? w->n * Q42_P64_DESC_SIZE
						      : sec[i].len;
		q42_align_up(pos, Q42_P64_SECTION_ALIGN, &pos);
		w->sec_off[i] = pos;
		pos += w->sec_len[i];
	}
	w->meta_end = pos;
	for (uint64_t i = 0; i < w->n; i++) {
		if (q42_align_up(pos, w->page, &w->t[i].offset) ||
		    q42_add_overflow(w->t[i].offset, w->t[i].nbytes, &pos)) {
			rc = q42_err_set(w->err, Q42_EUNSUPPORTED, "output size overflows");
			goto done;
		}
	}
	w->file_size = pos;

	/* Assemble [0, meta_end); CRC fields are filled by finalize(). */
	q42_buf *m = &w->meta;
	q42_buf_zeros(m, Q42_P64_HEADER_SIZE);
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++) {
		if (!w->sec_on[i])
			continue;
		q42_buf_append(m, q42_p64_section_tag((uint32_t)i), 4);
		q42_buf_u32le(m, i == Q42_P64_SEC_TDSC   ? (uint32_t)w->n
				 : i == Q42_P64_SEC_MANI ? n_recs
							 : 0);
		q42_buf_u64le(m, w->sec_off[i]);
		q42_buf_u64le(m, w->sec_len[i]);
		q42_buf_u32le(m, 0);
		q42_buf_u32le(m, 0);
	}
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++) {
		if (!w->sec_on[i])
			continue;
		q42_buf_zeros(m, (size_t)(w->sec_off[i] - m->len));
		if (i == Q42_P64_SEC_STRS)
			q42_buf_append(m, w->strs.data, w->strs.len);
		else if (i == Q42_P64_SEC_TDSC)
			put_descriptors(w, m);
		else
			q42_buf_append(m, sec[i].data, sec[i].len);
	}
	if (m->failed || w->strs.failed) {
		rc = q42_err_set(w->err, Q42_ENOMEM, "out of memory assembling the metadata");
		goto done;
	}
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++)
		if (sec[i].failed) {
			rc = q42_err_set(w->err, Q42_ENOMEM, "out of memory assembling section %s",
					 q42_p64_section_tag((uint32_t)i));
			goto done;
		}
done:
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++)
		q42_buf_free(&sec[i]);
	free(zero);
	return rc;
}

/* Fill the tensor CRCs and source SHA-256 into the image, then every
 * section CRC, the table CRC, the metadata CRC and the header. */
static void finalize(wctx *w)
{
	uint8_t *m = w->meta.data;
	uint64_t toff = Q42_P64_HEADER_SIZE;
	for (uint64_t i = 0; i < w->n; i++)
		q42_st32(m + w->sec_off[Q42_P64_SEC_TDSC] + i * Q42_P64_DESC_SIZE + 88, w->t[i].crc);
	memcpy(m + w->sec_off[Q42_P64_SEC_PROV], w->sha, 32);
	uint32_t e = 0;
	for (int i = 0; i < (int)Q42_P64_MAX_SECTIONS; i++) {
		if (!w->sec_on[i])
			continue;
		uint8_t *ent = m + toff + (uint64_t)e * Q42_P64_SECTION_ENTRY_SIZE;
		q42_st32(ent + 24, q42_crc32c(0, m + w->sec_off[i], (size_t)w->sec_len[i]));
		e++;
	}
	memcpy(m, Q42_P64_MAGIC, 4);
	q42_st32(m + 4, Q42_P64_VERSION);
	q42_st32(m + 8, Q42_P64_BOM);
	q42_st32(m + 12, (uint32_t)__builtin_ctzll(w->page));
	q42_st64(m + 16, w->file_size);
	q42_st64(m + 24, toff);
	q42_st32(m + 32, w->n_sections);
	q42_st32(m + 36, w->flags);
	q42_st64(m + 40, w->meta_end);
	q42_st32(m + 52,
		 q42_crc32c(0, m + toff, (size_t)w->n_sections * Q42_P64_SECTION_ENTRY_SIZE));
	q42_st32(m + 48, q42_crc32c(0, m + Q42_P64_HEADER_SIZE,
				    (size_t)(w->meta_end - Q42_P64_HEADER_SIZE)));
	q42_st32(m + 56, 0);
	q42_st32(m + 60, q42_crc32c(0, m, 60));
}

static int put(wctx *w, const void *p, size_t n)
{
	if (n != 0 && fwrite(p, 1, n, w->out) != n)
		return q42_err_set(w->err, Q42_EIO, "write failed after %llu bytes",
				   (unsigned long long)w->written);
	w->written += n;
	return Q42_OK;
}

static int put_zeros(wctx *w, uint64_t n)
{
	static const uint8_t zeros[1u << 16];
	int rc = Q42_OK;
	while (n > 0 && rc == Q42_OK) {
		size_t k = n > sizeof zeros ? sizeof zeros : (size_t)n;
		rc = put(w, zeros, k);
		n -= k;
	}
	return rc;
}

/* Write every blob with its leading padding; with crc_too, compute each
 * blob's CRC from the chunk just before it is written. */
static int put_blobs(wctx *w, bool crc_too)
{
	int rc = Q42_OK;
	for (uint64_t i = 0; i < w->n && rc == Q42_OK; i++) {
		wtensor *t = &w->t[i];
		const uint8_t *src = w->g->file + t->src->abs_offset;
		uint32_t crc = 0;
		rc = put_zeros(w, t->offset - w->written);
		for (uint64_t done = 0; done < t->nbytes && rc == Q42_OK;) {
			size_t k = t->nbytes - done > COPY_CHUNK ? COPY_CHUNK : (size_t)(t->nbytes - done);
			if (crc_too)
				crc = q42_crc32c(crc, src + done, k);
			rc = put(w, src + done, k);
			done += k;
		}
		if (crc_too)
			t->crc = crc;
	}
	return rc;
}

int q42_p64_write(const q42_gguf *g, const q42_p64_write_opts *opts, FILE *out,
		  q42_p64_write_report *rep, q42_err *err)
{
	wctx w = {.g = g, .out = out, .err = err};
	char tool_buf[64];
	const char *tool;
	uint32_t page_log2 = opts && opts->page_log2 ? opts->page_log2 : Q42_P64_PAGE_LOG2_DEFAULT;
	int rc;
	off_t base = -1;
	q42_err sub;
	q42_p64_manifold *recs = NULL;

	q42_buf_init(&w.strs);
	q42_buf_init(&w.meta);
	if (rep != NULL)
		memset(rep, 0, sizeof *rep);
	if (page_log2 < Q42_P64_PAGE_LOG2_MIN || page_log2 > Q42_P64_PAGE_LOG2_MAX) {
		rc = q42_err_set(err, Q42_EARG, "page_log2 %u: expected %u..%u", page_log2,
				 Q42_P64_PAGE_LOG2_MIN, Q42_P64_PAGE_LOG2_MAX);
		goto fail;
	}
	w.page = 1ull << page_log2;
	if (opts != NULL && opts->tool != NULL) {
		tool = opts->tool;
	} else {
		snprintf(tool_buf, sizeof tool_buf, "libq42 %s", Q42_VERSION);
		tool = tool_buf;
	}

	/* Hashing the whole source runs beside everything below. */
	if (opts == NULL || !opts->no_source_sha256) {
		w.sha_running = pthread_create(&w.sha_thread, NULL, sha_main, &w) == 0;
		if (!w.sha_running)
			sha_main(&w);
	}

	if ((rc = plan_tensors(&w, rep)) != Q42_OK)
		goto fail;
	memset(&sub, 0, sizeof sub);
	w.has_hp = q42_hparams_from_gguf(&w.hp, g, &sub) == Q42_OK;
	if (!w.has_hp && rep != NULL)
		snprintf(rep->hparams_note, sizeof rep->hparams_note, "%s", sub.msg);
	memset(&sub, 0, sizeof sub);
	w.has_vocab = q42_vocab_from_gguf(&w.vocab, g, &sub) == Q42_OK;
	if (!w.has_vocab && rep != NULL)
		snprintf(rep->vocab_note, sizeof rep->vocab_note, "%s", sub.msg);
	if (w.has_hp && w.hp.n_layer > w.n_layer_records)
		w.n_layer_records = w.hp.n_layer;
	w.gguf_header = g->file;
	w.gguf_header_len = g->data_offset;
	w.source_size = g->file_size;
	w.source_format = Q42_P64_SOURCE_GGUF;
	w.source_version = g->version;
	w.policy = "byte-preserving";
	recs = calloc(w.n_layer_records + 1, sizeof *recs);
	if (recs == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for manifold records");
		goto fail;
	}
	if ((rc = gguf_manifold(&w, recs)) != Q42_OK || (rc = build_meta(&w, tool, recs)) != Q42_OK)
		goto fail;

	base = ftello(out);
	if (base >= 0 && fseeko(out, base, SEEK_SET) != 0)
		base = -1;
	if (base >= 0) {
		/* Seekable: placeholder metadata, blobs with CRCs, then the real
		 * metadata over the placeholder. */
		if ((rc = put(&w, w.meta.data, w.meta.len)) != Q42_OK ||
		    (rc = put_blobs(&w, true)) != Q42_OK ||
		    (rc = put_zeros(&w, w.file_size - w.written)) != Q42_OK ||
		    (rc = sha_join(&w)) != Q42_OK)
			goto fail;
		finalize(&w);
		if (fseeko(out, base, SEEK_SET) != 0 ||
		    fwrite(w.meta.data, 1, w.meta.len, out) != w.meta.len ||
		    fseeko(out, base + (off_t)w.file_size, SEEK_SET) != 0) {
			rc = q42_err_set(err, Q42_EIO, "rewriting the P64 header failed");
			goto fail;
		}
	} else {
		for (uint64_t i = 0; i < w.n; i++)
			w.t[i].crc = q42_crc32c(0, g->file + w.t[i].src->abs_offset,
						(size_t)w.t[i].nbytes);
		if ((rc = sha_join(&w)) != Q42_OK)
			goto fail;
		finalize(&w);
		if ((rc = put(&w, w.meta.data, w.meta.len)) != Q42_OK ||
		    (rc = put_blobs(&w, false)) != Q42_OK ||
		    (rc = put_zeros(&w, w.file_size - w.written)) != Q42_OK)
			goto fail;
	}
	if (fflush(out) != 0) {
		rc = q42_err_set(err, Q42_EIO, "flushing the P64 output failed");
		goto fail;
	}
	if (rep != NULL) {
		rep->bytes_written = w.file_size;
		rep->n_tensors = w.n;
		rep->flags = w.flags;
		memcpy(rep->source_sha256, w.sha, 32);
	}
	rc = Q42_OK;
fail:
	if (w.sha_running)
		pthread_join(w.sha_thread, NULL);
	if (w.has_vocab)
		q42_vocab_free(&w.vocab);
	q42_buf_free(&w.strs);
	q42_buf_free(&w.meta);
	free(w.t);
	free(recs);
	return rc;
}

/* ---- Streamed writer ----------------------------------------------------
 *
 * The same layout and metadata as above, from a plan instead of a GGUF:
 * the placeholder metadata goes out first, each blob is written at its
 * planned offset when the caller has it (the gaps between blobs are left to
 * the file system and read as zeros), and the metadata is rewritten once the
 * CRCs and manifold samples of every blob are known. */

struct q42_p64_stream {
	wctx w;
	off_t base;
	char tool_buf[64];
	const char *tool;
	char *names;                 /* the plan's names, copied */
	char *policy;
	q42_p64_stats_input *stats_in;
	q42_p64_stats_part *parts;
	uint64_t n_written;
	uint64_t end_max;            /* furthest byte written, relative to base */
};

void q42_p64_stream_close(q42_p64_stream *ws)
{
	if (ws == NULL)
		return;
	if (ws->w.has_vocab)
		q42_vocab_free(&ws->w.vocab);
	q42_buf_free(&ws->w.strs);
	q42_buf_free(&ws->w.meta);
	free(ws->w.t);
	free(ws->names);
	free(ws->policy);
	free(ws->stats_in);
	free(ws->parts);
	free(ws);
}

/* A deep copy of v's arrays (the strings stay views: they only need to live
 * until build_meta has copied them into the string table). */
static bool vocab_copy(q42_vocab *dst, const q42_vocab *src)
{
	*dst = *src;
	dst->tokens = NULL, dst->scores = NULL, dst->types = NULL, dst->merges = NULL;
	dst->tokens = malloc((src->n_tokens ? src->n_tokens : 1) * sizeof *dst->tokens);
	dst->merges = malloc((src->n_merges ? src->n_merges : 1) * sizeof *dst->merges);
	if (src->scores)
		dst->scores = malloc(src->n_tokens * sizeof *dst->scores);
	if (src->types)
		dst->types = malloc(src->n_tokens * sizeof *dst->types);
	if (dst->tokens == NULL || dst->merges == NULL || (src->scores && !dst->scores) ||
	    (src->types && !dst->types))
		return false;
	memcpy(dst->tokens, src->tokens, src->n_tokens * sizeof *dst->tokens);
	if (src->n_merges)
		memcpy(dst->merges, src->merges, src->n_merges * sizeof *dst->merges);
	if (src->scores)
		memcpy(dst->scores, src->scores, src->n_tokens * sizeof *dst->scores);
	if (src->types)
		memcpy(dst->types, src->types, src->n_tokens * sizeof *dst->types);
	return true;
}

static int plan_check(wctx *w, const q42_p64_plan *plan, char *names)
{
	uint64_t pos = 0;
	for (uint64_t i = 0; i < w->n; i++) {
		const q42_p64_plan_tensor *pt = &plan->tensors[i];
		wtensor *t = &w->t[i];
		size_t len = pt->name != NULL ? strlen(pt->name) : 0;
		uint64_t n_elems = 1;
		if (len == 0)
			return q42_err_set(w->err, Q42_EARG, "plan: tensor %llu has an empty name",
					   (unsigned long long)i);
		memcpy(names + pos, pt->name, len + 1);
		t->name.p = names + pos;
		t->name.len = len;
		pos += len + 1;
		if (pt->rank < 1 || pt->rank > Q42_P64_MAX_RANK)
			return q42_err_set(w->err, Q42_EARG, "plan: tensor %s: rank %u, expected 1..%u",
					   pt->name, pt->rank, Q42_P64_MAX_RANK);
		for (uint32_t k = 0; k < Q42_P64_MAX_RANK; k++) {
			t->ne[k] = k < pt->rank ? pt->dims[k] : 1;
			if (q42_mul_overflow(n_elems, t->ne[k], &n_elems))
				return q42_err_set(w->err, Q42_EARG,
						   "plan: tensor %s: element count overflows", pt->name);
		}
		t->dtype = pt->dtype;
		t->n_dims = pt->rank;
		t->source_offset = pt->source_offset;
		if (!q42_dtype_nbytes(pt->dtype, n_elems, t->ne[0], &t->nbytes))
			return q42_err_set(w->err, Q42_EARG,
					   "plan: tensor %s: dtype %u cannot hold %llu elements in "
					   "rows of %llu", pt->name, pt->dtype,
					   (unsigned long long)n_elems, (unsigned long long)t->ne[0]);
		for (uint64_t j = 0; j < i; j++)
			if (w->t[j].name.len == len && memcmp(w->t[j].name.p, pt->name, len) == 0)
				return q42_err_set(w->err, Q42_EARG, "plan: tensor name %s twice",
						   pt->name);
		t->role = q42_role_classify(t->name.p, len, &t->layer);
		if (t->layer >= 0 && (uint32_t)t->layer + 1 > w->n_layer_records)
			w->n_layer_records = (uint32_t)t->layer + 1;
	}
	return Q42_OK;
}

int q42_p64_stream_open(q42_p64_stream **out_ws, const q42_p64_plan *plan,
			const q42_p64_write_opts *opts, FILE *out, q42_err *err)
{
	q42_p64_stream *ws = calloc(1, sizeof *ws);
	uint32_t page_log2 = opts && opts->page_log2 ? opts->page_log2 : Q42_P64_PAGE_LOG2_DEFAULT;
	uint64_t names_len = 0;
	int rc;

	*out_ws = NULL;
	if (ws == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	wctx *w = &ws->w;
	w->out = out;
	w->err = err;
	q42_buf_init(&w->strs);
	q42_buf_init(&w->meta);
	if (page_log2 < Q42_P64_PAGE_LOG2_MIN || page_log2 > Q42_P64_PAGE_LOG2_MAX) {
		rc = q42_err_set(err, Q42_EARG, "page_log2 %u: expected %u..%u", page_log2,
				 Q42_P64_PAGE_LOG2_MIN, Q42_P64_PAGE_LOG2_MAX);
		goto fail;
	}
	if (plan->n_tensors > UINT32_MAX || plan->policy == NULL) {
		rc = q42_err_set(err, Q42_EARG, "plan: %llu tensors (at most %u), policy %s",
				 (unsigned long long)plan->n_tensors, UINT32_MAX,
				 plan->policy ? "given" : "missing");
		goto fail;
	}
	w->page = 1ull << page_log2;
	if (opts != NULL && opts->tool != NULL) {
		ws->tool = opts->tool;
	} else {
		snprintf(ws->tool_buf, sizeof ws->tool_buf, "libq42 %s", Q42_VERSION);
		ws->tool = ws->tool_buf;
	}
	w->n = plan->n_tensors;
	for (uint64_t i = 0; i < w->n; i++)
		names_len += (plan->tensors[i].name ? strlen(plan->tensors[i].name) : 0) + 1;
	w->t = calloc(w->n ? w->n : 1, sizeof *w->t);
	ws->names = malloc(names_len ? names_len : 1);
	ws->policy = strdup(plan->policy);
	ws->stats_in = calloc(w->n ? w->n : 1, sizeof *ws->stats_in);
	ws->parts = calloc(w->n ? w->n : 1, sizeof *ws->parts);
	if (w->t == NULL || ws->names == NULL || ws->policy == NULL || ws->stats_in == NULL ||
	    ws->parts == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for %llu tensors",
				 (unsigned long long)w->n);
		goto fail;
	}
	if ((rc = plan_check(w, plan, ws->names)) != Q42_OK)
		goto fail;
	if (plan->hparams != NULL) {
		w->has_hp = true;
		w->hp = *plan->hparams;
		if (w->hp.n_layer > Q42_MAX_LAYERS) {
			rc = q42_err_set(err, Q42_EARG, "plan: %u layers, at most %u", w->hp.n_layer,
					 Q42_MAX_LAYERS);
			goto fail;
		}
		if (w->hp.n_layer > w->n_layer_records)
			w->n_layer_records = w->hp.n_layer;
	}
	if (plan->vocab != NULL) {
		w->has_vocab = true;
		if (!vocab_copy(&w->vocab, plan->vocab)) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory for the tokenizer");
			goto fail;
		}
	}
	w->source_size = plan->source_size;
	w->source_format = plan->source_format;
	w->source_version = plan->source_version;
	w->policy = ws->policy;
	if ((rc = build_meta(w, ws->tool, NULL)) != Q42_OK)
		goto fail;
	/* build_meta copied the token strings: the vocab's views may go. */
	if (w->has_vocab) {
		q42_vocab_free(&w->vocab);
		w->has_vocab = false;
	}
	for (uint64_t i = 0; i < w->n; i++) {
		w->t[i].name.p = (const char *)w->strs.data + w->t[i].name_ref[0];
		/* plan_check proved this product does not overflow */
		ws->stats_in[i] = (q42_p64_stats_input){
			.dtype = w->t[i].dtype,
			.n_elems = w->t[i].ne[0] * w->t[i].ne[1] * w->t[i].ne[2] * w->t[i].ne[3],
			.row_elems = w->t[i].ne[0],
			.role = w->t[i].role,
			.layer = w->t[i].layer};
	}
	ws->base = ftello(out);
	if (ws->base < 0 || fseeko(out, ws->base, SEEK_SET) != 0) {
		rc = q42_err_set(err, Q42_EARG,
				 "this P64 output must be seekable (a file, not a pipe): blobs are "
				 "written at their offsets as the source delivers them");
		goto fail;
	}
	if ((rc = put(w, w->meta.data, w->meta.len)) != Q42_OK)
		goto fail;
	ws->end_max = w->meta.len;
	*out_ws = ws;
	return Q42_OK;
fail:
	q42_p64_stream_close(ws);
	return rc;
}

int q42_p64_stream_put(q42_p64_stream *ws, uint64_t i, const void *data, uint64_t nbytes,
		       q42_err *err)
{
	wctx *w = &ws->w;
	w->err = err;
	if (i >= w->n)
		return q42_err_set(err, Q42_EARG, "blob %llu: the plan has %llu tensors",
				   (unsigned long long)i, (unsigned long long)w->n);
	wtensor *t = &w->t[i];
	if (t->written || nbytes != t->nbytes)
		return q42_err_set(err, Q42_EARG, "tensor %s: %s (%llu bytes, planned %llu)",
				   t->name.p, t->written ? "written twice" : "wrong length",
				   (unsigned long long)nbytes, (unsigned long long)t->nbytes);
	if (fseeko(w->out, ws->base + (off_t)t->offset, SEEK_SET) != 0)
		return q42_err_set(err, Q42_EIO, "tensor %s: seeking to offset %llu failed",
				   t->name.p, (unsigned long long)t->offset);
	const uint8_t *p = data;
	uint32_t crc = 0;
	for (uint64_t done = 0; done < nbytes;) {
		size_t k = nbytes - done > COPY_CHUNK ? COPY_CHUNK : (size_t)(nbytes - done);
		crc = q42_crc32c(crc, p + done, k);
		if (fwrite(p + done, 1, k, w->out) != k)
			return q42_err_set(err, Q42_EIO, "tensor %s: write failed at offset %llu",
					   t->name.p, (unsigned long long)(t->offset + done));
		done += k;
	}
	t->crc = crc;
	t->written = true;
	if (t->offset + nbytes > ws->end_max)
		ws->end_max = t->offset + nbytes;
	ws->stats_in[i].data = p;
	ws->parts[i].ok = q42_p64_stats_sample(&ws->stats_in[i], &ws->parts[i].sumsq,
					       &ws->parts[i].count);
	ws->stats_in[i].data = NULL;
	ws->n_written++;
	return Q42_OK;
}

int q42_p64_stream_finish(q42_p64_stream *ws, const uint8_t *source_sha256,
			  q42_p64_write_report *rep, q42_err *err)
{
	wctx *w = &ws->w;
	uint32_t n_recs = w->n_layer_records + 1;
	q42_p64_manifold *recs = NULL;
	q42_buf mani;
	int rc;

	w->err = err;
	q42_buf_init(&mani);
	if (ws->n_written != w->n) {
		for (uint64_t i = 0; i < w->n; i++)
			if (!w->t[i].written) {
				rc = q42_err_set(err, Q42_EARG, "tensor %s: its blob was never written",
						 w->t[i].name.p);
				goto done;
			}
	}
	recs = calloc(n_recs, sizeof *recs);
	if (recs == NULL || !q42_p64_stats_fold(ws->stats_in, ws->parts, w->n, recs, n_recs)) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for manifold records");
		goto done;
	}
	put_manifold(w, &mani, recs, n_recs);
	if (mani.failed) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for manifold records");
		goto done;
	}
	memcpy(w->meta.data + w->sec_off[Q42_P64_SEC_MANI], mani.data, mani.len);
	if (source_sha256 != NULL)
		memcpy(w->sha, source_sha256, 32);
	finalize(w);
	/* Trailing empty blobs end the file after the last byte written. */
	if (ws->end_max < w->file_size &&
	    (fseeko(w->out, ws->base + (off_t)ws->end_max, SEEK_SET) != 0 ||
	     put_zeros(w, w->file_size - ws->end_max) != Q42_OK)) {
		rc = q42_err_set(err, Q42_EIO, "writing the end of the P64 failed");
		goto done;
	}
	if (fseeko(w->out, ws->base, SEEK_SET) != 0 ||
	    fwrite(w->meta.data, 1, w->meta.len, w->out) != w->meta.len ||
	    fseeko(w->out, ws->base + (off_t)w->file_size, SEEK_SET) != 0 || fflush(w->out) != 0) {
		rc = q42_err_set(err, Q42_EIO, "rewriting the P64 header failed");
		goto done;
	}
	if (rep != NULL) {
		/* the caller's notes (hparams_note, vocab_note) are kept */
		rep->bytes_written = w->file_size;
		rep->n_tensors = w->n;
		rep->flags = w->flags;
		memcpy(rep->source_sha256, w->sha, 32);
	}
	rc = Q42_OK;
done:
	q42_buf_free(&mani);
	free(recs);
	return rc;
}
