/* q42_p64_read.c -- the validating P64 v3 reader (see p64(5), q42_p64.h).
 *
 * open() accounts for every byte of the file before it fills the public
 * struct: the header, the section table, each section (own CRC-32C, then the
 * metadata CRC-32C over all of them), each blob (its CRC-32C) and the zero
 * padding in between. Checks run region by region so the first failure names
 * the region it is in. It never reads a byte whose bounds were not checked
 * first, never trusts a count before it is bounded by a length, and a
 * failure leaves nothing exposed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "formats/q42_p64.h"
#include "formats/q42_roles.h"
#include "common/q42_types.h"

static const char *const section_tags[Q42_P64_MAX_SECTIONS] = {
	"STRS", "HPAR", "Q42T", "TDSC", "MANI", "GGUF", "PROV",
};

static const char *const coord_names[Q42_P64_MANIFOLD_COORDS] = {
	"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate",
	"ffn_up", "ffn_down", "norm", "other", "all",
};

const char *q42_p64_section_tag(uint32_t id)
{
	return id < Q42_P64_MAX_SECTIONS ? section_tags[id] : "?";
}

const char *q42_p64_coord_name(uint32_t coord)
{
	return coord < Q42_P64_MANIFOLD_COORDS ? coord_names[coord] : "?";
}

uint64_t q42_p64_name_hash(const void *name, uint64_t len)
{
	const uint8_t *s = name;
	uint64_t h = 0xcbf29ce484222325u;
	for (uint64_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3u;
	}
	return h;
}

bool q42_p64_is_p64(const uint8_t *data, uint64_t size)
{
	return size >= 4 && memcmp(data, Q42_P64_MAGIC, 4) == 0;
}

/* Fuzz builds skip CRC comparisons so the fuzzer can reach the structure
 * checks behind them; nothing else differs. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_DIFFERS(a, b) ((void)(a), (void)(b), false)
#else
#define CRC_DIFFERS(a, b) ((a) != (b))
#endif

typedef struct rd {
	const uint8_t *d;
	uint64_t size;
	const char *name;
	q42_err *err;
	const q42_p64_section *sec[Q42_P64_MAX_SECTIONS]; /* by id, NULL if absent */
	uint64_t page;
} rd;

__attribute__((format(printf, 2, 3))) static int bad(rd *r, const char *fmt, ...)
{
	char msg[Q42_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return q42_err_set(r->err, Q42_EFORMAT, "%s: %s", r->name, msg);
}

/* First nonzero byte in d[from, to), or to when all are zero. */
static uint64_t first_nonzero(const uint8_t *d, uint64_t from, uint64_t to)
{
	uint64_t i = from;
	while (i < to && ((uintptr_t)(d + i) & 7u) != 0) {
		if (d[i] != 0)
			return i;
		i++;
	}
	while (to - i >= 64) {
		uint64_t acc = 0, w;
		for (int k = 0; k < 8; k++) {
			memcpy(&w, d + i + 8 * k, 8);
			acc |= w;
		}
		if (acc != 0)
			break;
		i += 64;
	}
	for (; i < to; i++)
		if (d[i] != 0)
			return i;
	return to;
}

static int check_zero(rd *r, uint64_t from, uint64_t to)
{
	uint64_t at = first_nonzero(r->d, from, to);
	if (at < to)
		return bad(r, "padding at offset %llu: expected 0x00, found 0x%02x",
			   (unsigned long long)at, r->d[at]);
	return Q42_OK;
}

/* A string ref is (u32 offset, u32 length) into STRS; the byte after the
 * string must be NUL so views can be used as C strings. */
static bool str_ref(const rd *r, const uint8_t *ref, q42_str *out)
{
	const q42_p64_section *s = r->sec[Q42_P64_SEC_STRS];
	uint64_t off = q42_ld32(ref), len = q42_ld32(ref + 4);
	if (off + len >= s->length || r->d[s->offset + off + len] != 0)
		return false;
	out->p = (const char *)r->d + s->offset + off;
	out->len = len;
	return true;
}

static int str_field(rd *r, const uint8_t *ref, q42_str *out, const char *where,
		     const char *field)
{
	if (!str_ref(r, ref, out))
		return bad(r, "%s: %s: bad string ref (offset %u, length %u) for a string table "
			      "of %llu bytes",
			   where, field, q42_ld32(ref), q42_ld32(ref + 4),
			   (unsigned long long)r->sec[Q42_P64_SEC_STRS]->length);
	return Q42_OK;
}

static int read_header(rd *r, q42_p64 *p)
{
	const uint8_t *d = r->d;
	if (r->size < Q42_P64_HEADER_SIZE)
		return bad(r, "header: truncated: file has %llu bytes, the header needs %u",
			   (unsigned long long)r->size, Q42_P64_HEADER_SIZE);
	if (!q42_p64_is_p64(d, r->size))
		return bad(r, "header: bad magic at offset 0: expected 70 36 34 00 (\"p64\\0\"), "
			      "found %02x %02x %02x %02x",
			   d[0], d[1], d[2], d[3]);
	if (q42_ld32(d + 4) != Q42_P64_VERSION)
		return bad(r, "header: version at offset 4: expected %u, found %u", Q42_P64_VERSION,
			   q42_ld32(d + 4));
	if (q42_ld32(d + 8) != Q42_P64_BOM)
		return bad(r, "header: byte-order marker at offset 8: expected 04 03 02 01, found "
			      "%02x %02x %02x %02x",
			   d[8], d[9], d[10], d[11]);
	uint32_t crc = q42_crc32c(0, d, 60);
	if (CRC_DIFFERS(crc, q42_ld32(d + 60)))
		return bad(r, "header: CRC-32C of bytes [0, 60) at offset 60: expected 0x%08x, "
			      "found 0x%08x",
			   q42_ld32(d + 60), crc);
	p->page_log2 = q42_ld32(d + 12);
	if (p->page_log2 < Q42_P64_PAGE_LOG2_MIN || p->page_log2 > Q42_P64_PAGE_LOG2_MAX)
		return bad(r, "header: page_log2 at offset 12: expected %u..%u, found %u",
			   Q42_P64_PAGE_LOG2_MIN, Q42_P64_PAGE_LOG2_MAX, p->page_log2);
	r->page = 1ull << p->page_log2;
	uint64_t fsize = q42_ld64(d + 16);
	if (fsize != r->size)
		return bad(r, "header: file size at offset 16: header says %llu bytes, file has "
			      "%llu (truncated or extended)",
			   (unsigned long long)fsize, (unsigned long long)r->size);
	p->flags = q42_ld32(d + 36);
	if (p->flags & ~(uint32_t)Q42_P64_F_ALL_)
		return bad(r, "header: flags at offset 36: unknown bits 0x%08x set",
			   p->flags & ~(uint32_t)Q42_P64_F_ALL_);
	if (q42_ld32(d + 56) != 0)
		return bad(r, "header: reserved field at offset 56: expected 0, found 0x%08x",
			   q42_ld32(d + 56));
	p->version = Q42_P64_VERSION;
	p->meta_end = q42_ld64(d + 40);
	p->meta_crc = q42_ld32(d + 48);
	p->header_crc = q42_ld32(d + 60);
	return Q42_OK;
}

/* Section table: bounds, its own CRC, then order, alignment and bounds of
 * every entry. Padding between entries' sections is checked here too. */
static int read_table(rd *r, q42_p64 *p)
{
	const uint8_t *d = r->d;
	uint64_t toff = q42_ld64(d + 24);
	uint32_t n = q42_ld32(d + 32);
	uint64_t tend;
	if (n < 1 || n > Q42_P64_MAX_SECTIONS)
		return bad(r, "header: section count at offset 32: expected 1..%u, found %u",
			   Q42_P64_MAX_SECTIONS, n);
	if (toff < Q42_P64_HEADER_SIZE || toff % Q42_P64_SECTION_ALIGN != 0 ||
	    q42_add_overflow(toff, (uint64_t)n * Q42_P64_SECTION_ENTRY_SIZE, &tend) ||
	    tend > p->meta_end)
		return bad(r, "header: section table at offset %llu (%u entries) is not an "
			      "8-aligned range inside [64, metadata end %llu)",
			   (unsigned long long)toff, n, (unsigned long long)p->meta_end);
	if (p->meta_end > r->size)
		return bad(r, "header: metadata end %llu at offset 40 is past the end of the "
			      "file (%llu bytes)",
			   (unsigned long long)p->meta_end, (unsigned long long)r->size);
	uint32_t crc = q42_crc32c(0, d + toff, (size_t)(tend - toff));
	if (CRC_DIFFERS(crc, q42_ld32(d + 52)))
		return bad(r, "section table: CRC-32C over [%llu, %llu): expected 0x%08x (header "
			      "offset 52), found 0x%08x",
			   (unsigned long long)toff, (unsigned long long)tend, q42_ld32(d + 52), crc);
	int rc = check_zero(r, Q42_P64_HEADER_SIZE, toff);
	if (rc != Q42_OK)
		return rc;

	uint64_t prev_end = tend;
	int prev_id = -1;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = d + toff + (uint64_t)i * Q42_P64_SECTION_ENTRY_SIZE;
		uint64_t eoff = toff + (uint64_t)i * Q42_P64_SECTION_ENTRY_SIZE;
		q42_p64_section *s = &p->sections[i];
		int id = -1;
		for (int k = 0; k < (int)Q42_P64_MAX_SECTIONS; k++)
			if (memcmp(e, section_tags[k], 4) == 0)
				id = k;
		if (id < 0)
			return bad(r, "section table: entry %u at offset %llu: unknown tag "
				      "%02x %02x %02x %02x",
				   i, (unsigned long long)eoff, e[0], e[1], e[2], e[3]);
		if (id <= prev_id)
			return bad(r, "section table: entry %u at offset %llu: section %s out of "
				      "order (after %s)",
				   i, (unsigned long long)eoff, section_tags[id], section_tags[prev_id]);
		s->id = (uint32_t)id;
		memcpy(s->tag, section_tags[id], 5);
		s->count = q42_ld32(e + 4);
		s->offset = q42_ld64(e + 8);
		s->length = q42_ld64(e + 16);
		uint64_t end;
		if (q42_ld32(e + 28) != 0)
			return bad(r, "section %s: reserved field at offset %llu: expected 0, found "
				      "0x%08x",
				   s->tag, (unsigned long long)(eoff + 28), q42_ld32(e + 28));
		if (s->offset % Q42_P64_SECTION_ALIGN != 0)
			return bad(r, "section %s: offset %llu is not a multiple of %u", s->tag,
				   (unsigned long long)s->offset, Q42_P64_SECTION_ALIGN);
		if (s->offset < prev_end)
			return bad(r, "section %s: offset %llu overlaps the previous region, which "
				      "ends at %llu",
				   s->tag, (unsigned long long)s->offset, (unsigned long long)prev_end);
		if (q42_add_overflow(s->offset, s->length, &end) || end > p->meta_end)
			return bad(r, "section %s: [%llu, +%llu) runs past the metadata end %llu",
				   s->tag, (unsigned long long)s->offset,
				   (unsigned long long)s->length, (unsigned long long)p->meta_end);
		if (i + 1 == n && end != p->meta_end)
			return bad(r, "header: metadata end at offset 40: expected %llu (end of the "
				      "last section), found %llu",
				   (unsigned long long)end, (unsigned long long)p->meta_end);
		r->sec[id] = s;
		prev_id = id;
		prev_end = end;
	}
	/* The table is sound; now the bytes it describes. */
	prev_end = tend;
	for (uint32_t i = 0; i < n; i++) {
		const q42_p64_section *s = &p->sections[i];
		const uint8_t *e = d + toff + (uint64_t)i * Q42_P64_SECTION_ENTRY_SIZE;
		rc = check_zero(r, prev_end, s->offset);
		if (rc != Q42_OK)
			return rc;
		crc = q42_crc32c(0, d + s->offset, (size_t)s->length);
		if (CRC_DIFFERS(crc, q42_ld32(e + 24)))
			return bad(r, "section %s: CRC-32C over [%llu, %llu): expected 0x%08x, "
				      "found 0x%08x",
				   s->tag, (unsigned long long)s->offset,
				   (unsigned long long)(s->offset + s->length), q42_ld32(e + 24), crc);
		prev_end = s->offset + s->length;
	}
	p->n_sections = n;

	crc = q42_crc32c(0, d + Q42_P64_HEADER_SIZE, (size_t)(p->meta_end - Q42_P64_HEADER_SIZE));
	if (CRC_DIFFERS(crc, p->meta_crc))
		return bad(r, "metadata: CRC-32C over [64, %llu): expected 0x%08x (header offset "
			      "48), found 0x%08x",
			   (unsigned long long)p->meta_end, p->meta_crc, crc);

	static const uint32_t required[] = {Q42_P64_SEC_STRS, Q42_P64_SEC_TDSC,
					    Q42_P64_SEC_MANI, Q42_P64_SEC_PROV};
	for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
		if (r->sec[required[k]] == NULL)
			return bad(r, "section table: required section %s is missing",
				   section_tags[required[k]]);
	for (uint32_t id = 0; id < Q42_P64_MAX_SECTIONS; id++) {
		const q42_p64_section *s = r->sec[id];
		bool counted = id == Q42_P64_SEC_TDSC || id == Q42_P64_SEC_MANI;
		if (s != NULL && !counted && s->count != 0)
			return bad(r, "section %s: count: expected 0, found %u", s->tag, s->count);
	}
	return Q42_OK;
}

static int read_flags(rd *r, q42_p64 *p)
{
	struct {
		uint32_t flag;
		uint32_t sec;
	} pairs[] = {
		{Q42_P64_F_HAS_HPARAMS, Q42_P64_SEC_HPAR},
		{Q42_P64_F_HAS_TOKENIZER, Q42_P64_SEC_Q42T},
		{Q42_P64_F_BYTE_PRESERVING, Q42_P64_SEC_GGUF},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		bool f = (p->flags & pairs[i].flag) != 0, s = r->sec[pairs[i].sec] != NULL;
		if (f != s)
			return bad(r, "header: flags 0x%x at offset 36: flag 0x%x is %s but section "
				      "%s is %s",
				   p->flags, pairs[i].flag, f ? "set" : "clear",
				   section_tags[pairs[i].sec], s ? "present" : "absent");
	}
	const q42_p64_section *strs = r->sec[Q42_P64_SEC_STRS];
	if (strs->length == 0 || r->d[strs->offset] != 0)
		return bad(r, "section STRS: must start with a NUL byte (the empty string)");
	return Q42_OK;
}


/* HPAR's ColBERT fields (p64(5)) at t, file offset at: the markers and
 * the skiplist words copied out of STRS, each checked. */
static int colbert_fields(rd *r, q42_p64 *p, const uint8_t *t, uint64_t at)
{
	q42_hparams *hp = &p->hparams;
	q42_str q, d, k;
	int rc;
	if ((rc = str_field(r, t, &q, "section HPAR", "query_prefix")) != Q42_OK ||
	    (rc = str_field(r, t + 8, &d, "section HPAR", "document_prefix")) != Q42_OK ||
	    (rc = str_field(r, t + 16, &k, "section HPAR", "skiplist")) != Q42_OK)
		return rc;
	hp->cb_query_len = q42_ld32(t + 24);
	hp->cb_doc_len = q42_ld32(t + 28);
	const uint32_t fl = q42_ld32(t + 32);
	bool ok = q42_ld32(t + 36) == 0 && (fl & ~(uint32_t)Q42_COLBERT_FLAGS_ALL_) == 0 &&
		  (fl != 0 || hp->cb_query_len != 0 || hp->cb_doc_len != 0) &&
		  ((fl & Q42_COLBERT_ATTEND) == 0 || (fl & Q42_COLBERT_ATTEND_SET) != 0) &&
		  ((fl & Q42_COLBERT_QUERY_PREFIX) != 0 || q.len == 0) &&
		  ((fl & Q42_COLBERT_DOC_PREFIX) != 0 || d.len == 0) &&
		  ((fl & Q42_COLBERT_SKIPLIST) != 0 || k.len == 0) &&
		  (k.len == 0 || k.p[k.len - 1] == '\0');
	if (ok && (fl & Q42_COLBERT_QUERY_PREFIX) != 0)
		ok = q42_colbert_set_prefix(hp, false, q.p, q.len);
	if (ok && (fl & Q42_COLBERT_DOC_PREFIX) != 0)
		ok = q42_colbert_set_prefix(hp, true, d.p, d.len);
	/* the words, each ended by its NUL */
	for (uint64_t i = 0; ok && i < k.len;) {
		const uint64_t n = strlen(k.p + i);
		ok = q42_colbert_add_word(hp, k.p + i, n);
		i += n + 1;
	}
	hp->cb_flags = fl;
	if (!ok)
		return bad(r, "section HPAR: ColBERT fields at offset %llu: reserved field not 0, "
			      "unknown flag, every field 0, a string without its flag, a marker of "
			      "%u bytes or more, or a skiplist word empty or past %u bytes in all",
			   (unsigned long long)at, Q42_COLBERT_PREFIX_MAX, Q42_COLBERT_SKIP_MAX);
	p->has_hparams = true;
	return Q42_OK;
}

static int read_hparams(rd *r, q42_p64 *p)
{
	const q42_p64_section *s = r->sec[Q42_P64_SEC_HPAR];
	if (s == NULL)
		return Q42_OK;
	const uint8_t *h = r->d + s->offset;
	if (s->length < Q42_P64_HPARAMS_FIXED)
		return bad(r, "section HPAR: length: expected at least %u, found %llu",
			   Q42_P64_HPARAMS_FIXED, (unsigned long long)s->length);
	q42_hparams *hp = &p->hparams;
	const uint8_t *nul = memchr(h, 0, Q42_ARCH_MAX);
	if (nul == NULL || first_nonzero(h, (uint64_t)(nul - h), Q42_ARCH_MAX) != Q42_ARCH_MAX)
		return bad(r, "section HPAR: architecture name at offset %llu is not NUL-terminated "
			      "and zero-padded within %d bytes",
			   (unsigned long long)s->offset, Q42_ARCH_MAX);
	memcpy(hp->arch, h, Q42_ARCH_MAX);
	hp->n_vocab = q42_ld32(h + 32);
	hp->n_ctx_train = q42_ld32(h + 36);
	hp->n_embd = q42_ld32(h + 40);
	hp->n_layer = q42_ld32(h + 44);
	hp->n_head = q42_ld32(h + 48);
	hp->head_dim_k = q42_ld32(h + 52);
	hp->head_dim_v = q42_ld32(h + 56);
	hp->n_rot = q42_ld32(h + 60);
	hp->rope_freq_base = q42_ldf32(h + 64);
	hp->rope_freq_scale = q42_ldf32(h + 68);
	hp->rope_freq_base_swa = q42_ldf32(h + 72);
	hp->norm_rms_eps = q42_ldf32(h + 76);
	hp->norm_eps = q42_ldf32(h + 80);
	hp->sliding_window = q42_ld32(h + 84);
	hp->attn_softcap = q42_ldf32(h + 88);
	hp->final_softcap = q42_ldf32(h + 92);
	hp->n_expert = q42_ld32(h + 96);
	hp->n_expert_used = q42_ld32(h + 100);
	hp->conv_l_cache = q42_ld32(h + 104);
	hp->file_type = q42_ld32(h + 108);
	if (hp->n_layer > Q42_MAX_LAYERS)
		return bad(r, "section HPAR: n_layer at offset %llu: expected at most %d, found %u",
			   (unsigned long long)(s->offset + 44), Q42_MAX_LAYERS, hp->n_layer);
	uint64_t want = Q42_P64_HPARAMS_FIXED + 8ull * hp->n_layer;
	/* the optional groups: the tail, the embedding fields, the MoE fields,
	 * each present only with the ones before it */
	const uint64_t with_tail = want + Q42_P64_HPARAMS_TAIL;
	const uint64_t with_embd = with_tail + Q42_P64_HPARAMS_EMBD;
	const uint64_t with_moe = with_embd + Q42_P64_HPARAMS_MOE;
	const uint64_t with_cb = with_moe + Q42_P64_HPARAMS_COLBERT;
	if (s->length != want && s->length != with_tail && s->length != with_embd &&
	    s->length != with_moe && s->length != with_cb)
		return bad(r, "section HPAR: length: expected %llu, %llu, %llu, %llu or %llu for %u "
			      "layers, found %llu",
			   (unsigned long long)want, (unsigned long long)with_tail,
			   (unsigned long long)with_embd, (unsigned long long)with_moe,
			   (unsigned long long)with_cb, hp->n_layer, (unsigned long long)s->length);
	for (uint32_t i = 0; i < hp->n_layer; i++) {
		hp->n_head_kv[i] = q42_ld32(h + Q42_P64_HPARAMS_FIXED + 4ull * i);
		hp->n_ff[i] = q42_ld32(h + Q42_P64_HPARAMS_FIXED + 4ull * (hp->n_layer + i));
	}
	if (s->length >= with_tail) {
		const uint8_t *t = h + want;
		hp->swa_pattern = q42_ld32(t);
		hp->rope_attn_factor = q42_ldf32(t + 4);
		hp->n_ctx_orig = q42_ld32(t + 8);
		/* all zero is allowed only before later fields */
		if (q42_ld32(t + 12) != 0 ||
		    (s->length == with_tail && hp->swa_pattern == 0 && hp->rope_attn_factor == 0.0f &&
		     hp->n_ctx_orig == 0))
			return bad(r, "section HPAR: tail at offset %llu: reserved field not 0, "
				      "or every field 0 (a writer omits such a tail)",
				   (unsigned long long)(s->offset + want));
	}
	if (s->length >= with_embd) {
		const uint8_t *t = h + with_tail;
		hp->non_causal = q42_ld32(t);
		hp->pooling = q42_ld32(t + 4);
		hp->n_dense_2 = q42_ld32(t + 8);
		if (q42_ld32(t + 12) != 0 || hp->non_causal > 1 || hp->pooling > 5 ||
		    (s->length == with_embd && hp->non_causal == 0 && hp->pooling == 0 &&
		     hp->n_dense_2 == 0))
			return bad(r, "section HPAR: embedding fields at offset %llu: non_causal above 1, "
				      "pooling above 5, reserved field not 0, or every field 0 with "
				      "nothing after them",
				   (unsigned long long)(s->offset + with_tail));
	}
	if (s->length >= with_moe) {
		const uint8_t *t = h + with_embd;
		hp->n_ff_exp = q42_ld32(t);
		hp->n_dense_lead = q42_ld32(t + 4);
		hp->expert_gating = q42_ld32(t + 8);
		if (q42_ld32(t + 12) != 0 ||
		    (s->length == with_moe && hp->n_ff_exp == 0 && hp->n_dense_lead == 0 &&
		     hp->expert_gating == 0))
			return bad(r, "section HPAR: mixture-of-experts fields at offset %llu: reserved "
				      "field not 0, or every field 0 with nothing after them",
				   (unsigned long long)(s->offset + with_embd));
	}
	if (s->length == with_cb)
		return colbert_fields(r, p, h + with_moe, s->offset + with_moe);
	p->has_hparams = true;
	return Q42_OK;
}

static int special_id(rd *r, const uint8_t *at, uint32_t n_tokens, const char *what, int32_t *out)
{
	int32_t v = (int32_t)q42_ld32(at);
	if (v != Q42_TOK_NONE && (v < 0 || (uint32_t)v >= n_tokens))
		return bad(r, "section Q42T: %s id at offset %llu: expected -1 or 0..%u, found %d",
			   what, (unsigned long long)(at - r->d), n_tokens - 1, v);
	*out = v;
	return Q42_OK;
}

static int read_vocab(rd *r, q42_p64 *p)
{
	const q42_p64_section *s = r->sec[Q42_P64_SEC_Q42T];
	if (s == NULL)
		return Q42_OK;
	const uint8_t *t = r->d + s->offset;
	q42_vocab *v = &p->vocab;
	int rc;
	if (s->length < Q42_P64_Q42T_FIXED)
		return bad(r, "section Q42T: length: expected at least %u, found %llu",
			   Q42_P64_Q42T_FIXED, (unsigned long long)s->length);
	if ((rc = str_field(r, t, &v->model, "section Q42T", "model")) != Q42_OK ||
	    (rc = str_field(r, t + 8, &v->pre, "section Q42T", "pre-tokenizer")) != Q42_OK)
		return rc;
	uint32_t n = q42_ld32(t + 16), m = q42_ld32(t + 20), tf = q42_ld32(t + 24);
	if (n == 0)
		return bad(r, "section Q42T: token count at offset %llu is 0",
			   (unsigned long long)(s->offset + 16));
	if (tf & ~7u)
		return bad(r, "section Q42T: flags at offset %llu: unknown bits 0x%x",
			   (unsigned long long)(s->offset + 24), tf & ~7u);
	uint64_t want = Q42_P64_Q42T_FIXED + 8ull * n + ((tf & 1u) ? 4ull * n : 0) +
			((tf & 2u) ? 4ull * n : 0) + 8ull * m + ((tf & 4u) ? 8u : 0);
	if (s->length != want)
		return bad(r, "section Q42T: length: expected %llu for %u tokens and %u merges, "
			      "found %llu",
			   (unsigned long long)want, n, m, (unsigned long long)s->length);
	static const char *const specials[8] = {"bos", "eos", "eot", "eom",
						"unk", "sep", "pad", "mask"};
	int32_t *ids[8] = {&v->bos, &v->eos, &v->eot, &v->eom, &v->unk, &v->sep, &v->pad, &v->mask};
	for (int i = 0; i < 8; i++)
		if ((rc = special_id(r, t + 28 + 4 * i, n, specials[i], ids[i])) != Q42_OK)
			return rc;
	static const char *const pol[4] = {"add_bos", "add_eos", "add_space_prefix",
					   "remove_extra_whitespaces"};
	int8_t *pv[4] = {&v->add_bos, &v->add_eos, &v->add_space_prefix,
			 &v->remove_extra_whitespaces};
	for (int i = 0; i < 4; i++) {
		int8_t x = (int8_t)t[60 + i];
		if (x < -1 || x > 1)
			return bad(r, "section Q42T: %s at offset %llu: expected -1, 0 or 1, found %d",
				   pol[i], (unsigned long long)(s->offset + 60 + (uint64_t)i), x);
		*pv[i] = x;
	}
	v->n_tokens = n;
	v->n_merges = m;
	v->tokens = calloc(n, sizeof *v->tokens);
	v->scores = (tf & 1u) ? calloc(n, sizeof *v->scores) : NULL;
	v->types = (tf & 2u) ? calloc(n, sizeof *v->types) : NULL;
	v->merges = m ? calloc(m, sizeof *v->merges) : NULL;
	if (v->tokens == NULL || ((tf & 1u) && v->scores == NULL) ||
	    ((tf & 2u) && v->types == NULL) || (m && v->merges == NULL))
		return q42_err_set(r->err, Q42_ENOMEM, "%s: section Q42T: out of memory for %u "
						       "tokens", r->name, n);
	const uint8_t *q = t + Q42_P64_Q42T_FIXED;
	char where[64];
	/* the message context is formatted only for a bad ref: one snprintf
	 * per token and merge was a sixth of a P64 mount's CPU time */
	for (uint32_t i = 0; i < n; i++, q += 8) {
		if (str_ref(r, q, &v->tokens[i]))
			continue;
		snprintf(where, sizeof where, "section Q42T: token %u", i);
		return str_field(r, q, &v->tokens[i], where, "text");
	}
	if (tf & 1u)
		for (uint32_t i = 0; i < n; i++, q += 4)
			v->scores[i] = q42_ldf32(q);
	if (tf & 2u)
		for (uint32_t i = 0; i < n; i++, q += 4) {
			v->types[i] = (int32_t)q42_ld32(q);
			if (v->types[i] < Q42_TOK_UNDEFINED || v->types[i] > Q42_TOK_BYTE)
				return bad(r, "section Q42T: token %u type at offset %llu: expected "
					      "0..6, found %d",
					   i, (unsigned long long)(q - r->d), v->types[i]);
		}
	for (uint32_t i = 0; i < m; i++, q += 8) {
		if (str_ref(r, q, &v->merges[i]))
			continue;
		snprintf(where, sizeof where, "section Q42T: merge %u", i);
		return str_field(r, q, &v->merges[i], where, "text");
	}
	if ((tf & 4u) && (rc = str_field(r, q, &v->charsmap, "section Q42T",
					 "precompiled_charsmap")) != Q42_OK)
		return rc;
	p->has_vocab = true;
	return Q42_OK;
}

static int read_manifold(rd *r, q42_p64 *p)
{
	const q42_p64_section *s = r->sec[Q42_P64_SEC_MANI];
	if (s->count < 1 || s->count > Q42_ROLE_MAX_LAYER + 1u ||
	    s->length != (uint64_t)s->count * Q42_P64_MANIFOLD_SIZE)
		return bad(r, "section MANI: %u records in %llu bytes: expected 1..%u records of %u "
			      "bytes each",
			   s->count, (unsigned long long)s->length, Q42_ROLE_MAX_LAYER + 1u,
			   Q42_P64_MANIFOLD_SIZE);
	p->manifold = calloc(s->count, sizeof *p->manifold);
	if (p->manifold == NULL)
		return q42_err_set(r->err, Q42_ENOMEM, "%s: section MANI: out of memory", r->name);
	for (uint32_t i = 0; i < s->count; i++) {
		const uint8_t *m = r->d + s->offset + (uint64_t)i * Q42_P64_MANIFOLD_SIZE;
		q42_p64_manifold *rec = &p->manifold[i];
		int32_t want = i + 1 == s->count ? -1 : (int32_t)i;
		rec->layer = (int32_t)q42_ld32(m);
		rec->n_tensors = q42_ld32(m + 4);
		rec->n_elems = q42_ld64(m + 8);
		rec->coord_mask = q42_ld32(m + 16);
		rec->n_skipped = q42_ld32(m + 20);
		if (rec->layer != want)
			return bad(r, "manifold record %u: layer index: expected %d, found %d", i, want,
				   rec->layer);
		if (rec->coord_mask >> Q42_P64_MANIFOLD_COORDS)
			return bad(r, "manifold record %u: coordinate mask 0x%x has bits above %u", i,
				   rec->coord_mask, Q42_P64_MANIFOLD_COORDS - 1);
		if (rec->n_skipped > rec->n_tensors)
			return bad(r, "manifold record %u: %u tensors skipped of %u", i,
				   rec->n_skipped, rec->n_tensors);
		for (uint32_t c = 0; c < Q42_P64_MANIFOLD_COORDS; c++) {
			uint32_t bits = q42_ld32(m + 24 + 4 * c);
			float f = q42_ldf32(m + 24 + 4 * c);
			bool set = (rec->coord_mask >> c) & 1u;
			if ((!set && bits != 0) || !isfinite(f) || f < 0.0f)
				return bad(r, "manifold record %u: coordinate %s (0x%08x) must be a "
					      "finite non-negative float, and +0 when its mask bit is "
					      "clear",
					   i, coord_names[c], bits);
			rec->coord[c] = f;
		}
	}
	p->n_manifold = s->count;
	return Q42_OK;
}

static int read_prov(rd *r, q42_p64 *p)
{
	const q42_p64_section *s = r->sec[Q42_P64_SEC_PROV];
	const q42_p64_section *g = r->sec[Q42_P64_SEC_GGUF];
	const uint8_t *v = r->d + s->offset;
	int rc;
	if (s->length != Q42_P64_PROV_SIZE)
		return bad(r, "section PROV: length: expected %u, found %llu", Q42_P64_PROV_SIZE,
			   (unsigned long long)s->length);
	memcpy(p->prov.source_sha256, v, 32);
	p->prov.source_size = q42_ld64(v + 32);
	p->prov.source_format = q42_ld32(v + 40);
	p->prov.source_version = q42_ld32(v + 44);
	if ((rc = str_field(r, v + 48, &p->prov.policy, "section PROV", "policy")) != Q42_OK ||
	    (rc = str_field(r, v + 56, &p->prov.tool, "section PROV", "tool")) != Q42_OK)
		return rc;
	if (p->prov.source_format != Q42_P64_SOURCE_GGUF &&
	    p->prov.source_format != Q42_P64_SOURCE_SAFETENSORS)
		return bad(r, "section PROV: source format at offset %llu: expected %u (GGUF) or "
			      "%u (Safetensors), found %u",
			   (unsigned long long)(s->offset + 40), Q42_P64_SOURCE_GGUF,
			   Q42_P64_SOURCE_SAFETENSORS, p->prov.source_format);
	/* Only a GGUF source can be rebuilt from its header bytes. */
	if (g != NULL && p->prov.source_format != Q42_P64_SOURCE_GGUF)
		return bad(r, "section GGUF: present, but the source format is %u, not 1 (GGUF)",
			   p->prov.source_format);
	if (g != NULL) {
		const uint8_t *h = r->d + g->offset;
		if (g->length < 8 || memcmp(h, Q42_GGUF_MAGIC, 4) != 0)
			return bad(r, "section GGUF: does not start with the GGUF magic");
		if (q42_ld32(h + 4) != p->prov.source_version)
			return bad(r, "section PROV: source version: expected %u (from section GGUF), "
				      "found %u",
				   q42_ld32(h + 4), p->prov.source_version);
		if (p->prov.source_size < g->length)
			return bad(r, "section PROV: source size %llu is smaller than the GGUF header "
				      "bytes (%llu)",
				   (unsigned long long)p->prov.source_size,
				   (unsigned long long)g->length);
		p->source_header = h;
		p->source_header_len = g->length;
	}
	return Q42_OK;
}

static int cmp_by_hash(const void *a, const void *b)
{
	const q42_p64_tensor *x = *(const q42_p64_tensor *const *)a;
	const q42_p64_tensor *y = *(const q42_p64_tensor *const *)b;
	if (x->name_hash != y->name_hash)
		return x->name_hash < y->name_hash ? -1 : 1;
	uint64_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
	int c = memcmp(x->name.p, y->name.p, n);
	if (c != 0)
		return c;
	return (x->name.len > y->name.len) - (x->name.len < y->name.len);
}

static int read_descriptors(rd *r, q42_p64 *p)
{
	const q42_p64_section *s = r->sec[Q42_P64_SEC_TDSC];
	int rc;
	if (s->length != (uint64_t)s->count * Q42_P64_DESC_SIZE)
		return bad(r, "section TDSC: length: expected %llu for %u descriptors, found %llu",
			   (unsigned long long)s->count * Q42_P64_DESC_SIZE, s->count,
			   (unsigned long long)s->length);
	if (s->count != 0) {
		p->tensors = calloc(s->count, sizeof *p->tensors);
		if (p->tensors == NULL)
			return q42_err_set(r->err, Q42_ENOMEM, "%s: section TDSC: out of memory",
					   r->name);
	}
	uint64_t prev_end = p->meta_end;
	int32_t n_layers = (int32_t)p->n_manifold - 1;
	char where[Q42_ERR_MSG_MAX / 2];
	for (uint32_t i = 0; i < s->count; i++) {
		const uint8_t *e = r->d + s->offset + (uint64_t)i * Q42_P64_DESC_SIZE;
		q42_p64_tensor *t = &p->tensors[i];
		snprintf(where, sizeof where, "descriptor %u", i);
		if ((rc = str_field(r, e, &t->name, where, "name")) != Q42_OK)
			return rc;
		snprintf(where, sizeof where, "descriptor %u (%.*s)", i,
			 (int)(t->name.len > 120 ? 120 : t->name.len), t->name.p);
		if (t->name.len == 0)
			return bad(r, "%s: empty name", where);
		t->name_hash = q42_ld64(e + 8);
		t->dtype = q42_ld32(e + 16);
		t->role = q42_ld32(e + 20);
		t->layer = (int32_t)q42_ld32(e + 24);
		t->rank = q42_ld32(e + 28);
		t->offset = q42_ld64(e + 64);
		t->nbytes = q42_ld64(e + 72);
		t->source_offset = q42_ld64(e + 80);
		t->crc = q42_ld32(e + 88);
		uint64_t h = q42_p64_name_hash(t->name.p, t->name.len);
		if (h != t->name_hash)
			return bad(r, "%s: name hash: expected 0x%016llx, found 0x%016llx", where,
				   (unsigned long long)h, (unsigned long long)t->name_hash);
		if (t->role >= Q42_ROLE_COUNT_)
			return bad(r, "%s: role: expected 0..%d, found %u", where, Q42_ROLE_COUNT_ - 1,
				   t->role);
		if (t->layer < -1 || t->layer >= n_layers)
			return bad(r, "%s: layer (manifold index): expected -1..%d, found %d", where,
				   n_layers - 1, t->layer);
		if (t->rank < 1 || t->rank > Q42_P64_MAX_RANK)
			return bad(r, "%s: rank: expected 1..%u, found %u", where, Q42_P64_MAX_RANK,
				   t->rank);
		if (q42_ld32(e + 92) != 0)
			return bad(r, "%s: reserved field: expected 0, found 0x%08x", where,
				   q42_ld32(e + 92));
		t->n_elems = 1;
		for (uint32_t k = 0; k < Q42_P64_MAX_RANK; k++) {
			t->dims[k] = q42_ld64(e + 32 + 8 * k);
			if (k >= t->rank && t->dims[k] != 1)
				return bad(r, "%s: dims[%u] beyond rank %u: expected 1, found %llu", where,
					   k, t->rank, (unsigned long long)t->dims[k]);
			if (q42_mul_overflow(t->n_elems, t->dims[k], &t->n_elems))
				return bad(r, "%s: element count overflows", where);
		}
		uint64_t want;
		if (q42_dtype_get(t->dtype) != NULL &&
		    (!q42_dtype_nbytes(t->dtype, t->n_elems, t->dims[0], &want) || want != t->nbytes))
			return bad(r, "%s: length of a %s tensor of %llu elements (row %llu): "
				      "expected %llu, found %llu",
				   where, q42_dtype_get(t->dtype)->name, (unsigned long long)t->n_elems,
				   (unsigned long long)t->dims[0],
				   q42_dtype_nbytes(t->dtype, t->n_elems, t->dims[0], &want)
					   ? (unsigned long long)want
					   : 0ull,
				   (unsigned long long)t->nbytes);
		uint64_t end;
		if (t->offset % r->page != 0)
			return bad(r, "%s: blob offset %llu is not aligned to the page size %llu",
				   where, (unsigned long long)t->offset, (unsigned long long)r->page);
		if (t->offset < prev_end)
			return bad(r, "%s: blob offset %llu overlaps the previous region, which ends "
				      "at %llu",
				   where, (unsigned long long)t->offset, (unsigned long long)prev_end);
		if (q42_add_overflow(t->offset, t->nbytes, &end) || end > r->size)
			return bad(r, "%s: blob [%llu, +%llu) lies outside the file (%llu bytes)",
				   where, (unsigned long long)t->offset, (unsigned long long)t->nbytes,
				   (unsigned long long)r->size);
		if (p->source_header != NULL) {
			uint64_t send;
			if (t->source_offset < p->source_header_len ||
			    q42_add_overflow(t->source_offset, t->nbytes, &send) ||
			    send > p->prov.source_size)
				return bad(r, "%s: source range [%llu, +%llu) lies outside the source "
					      "data [%llu, %llu)",
					   where, (unsigned long long)t->source_offset,
					   (unsigned long long)t->nbytes,
					   (unsigned long long)p->source_header_len,
					   (unsigned long long)p->prov.source_size);
		}
		t->data = r->d + t->offset;
		prev_end = end;
	}
	p->n_tensors = s->count;

	if (s->count > 1) {
		const q42_p64_tensor **idx = malloc(s->count * sizeof *idx);
		if (idx == NULL)
			return q42_err_set(r->err, Q42_ENOMEM, "%s: section TDSC: out of memory",
					   r->name);
		for (uint32_t i = 0; i < s->count; i++)
			idx[i] = &p->tensors[i];
		qsort(idx, s->count, sizeof *idx, cmp_by_hash);
		for (uint32_t i = 1; i < s->count; i++)
			if (cmp_by_hash(&idx[i - 1], &idx[i]) == 0) {
				uint32_t a = (uint32_t)(idx[i - 1] - p->tensors);
				uint32_t b = (uint32_t)(idx[i] - p->tensors);
				free(idx);
				return bad(r, "descriptor %u (%s): duplicate of descriptor %u",
					   a > b ? a : b, p->tensors[a].name.p, a > b ? b : a);
			}
		free(idx);
	}
	bool bootable = p->has_hparams && p->has_vocab && p->n_tensors > 0;
	if (bootable != ((p->flags & Q42_P64_F_BOOTABLE) != 0))
		return bad(r, "header: flags 0x%x at offset 36: bootable flag is %s, but the file "
			      "%s hparams, tokenizer and tensors",
			   p->flags, bootable ? "clear" : "set", bootable ? "has" : "lacks some of");
	return Q42_OK;
}

/* Blobs last: their CRCs are the expensive part, and every structure
 * around them has been proven by now. */
static int read_blobs(rd *r, q42_p64 *p)
{
	uint64_t prev_end = p->meta_end;
	int rc;
	for (uint64_t i = 0; i < p->n_tensors; i++) {
		const q42_p64_tensor *t = &p->tensors[i];
		if ((rc = check_zero(r, prev_end, t->offset)) != Q42_OK)
			return rc;
		uint32_t crc = q42_crc32c(0, t->data, (size_t)t->nbytes);
		if (CRC_DIFFERS(crc, t->crc))
			return bad(r, "tensor %.*s: CRC-32C of blob [%llu, +%llu): expected 0x%08x, "
				      "found 0x%08x",
				   (int)(t->name.len > 120 ? 120 : t->name.len), t->name.p,
				   (unsigned long long)t->offset, (unsigned long long)t->nbytes,
				   t->crc, crc);
		prev_end = t->offset + t->nbytes;
	}
	return check_zero(r, prev_end, r->size);
}

int q42_p64_open(q42_p64 *p, const uint8_t *data, uint64_t size, const char *name,
		 q42_err *err)
{
	rd r = {.d = data, .size = size, .name = name ? name : "p64", .err = err};
	int rc;
	memset(p, 0, sizeof *p);
	p->vocab.bos = p->vocab.eos = p->vocab.eot = p->vocab.eom = Q42_TOK_NONE;
	p->vocab.unk = p->vocab.sep = p->vocab.pad = p->vocab.mask = Q42_TOK_NONE;
	p->vocab.add_bos = p->vocab.add_eos = -1;
	p->vocab.add_space_prefix = p->vocab.remove_extra_whitespaces = -1;
	if (data == NULL && size != 0)
		return q42_err_set(err, Q42_EARG, "%s: no data", r.name);
	if ((rc = read_header(&r, p)) != Q42_OK || (rc = read_table(&r, p)) != Q42_OK ||
	    (rc = read_flags(&r, p)) != Q42_OK || (rc = read_hparams(&r, p)) != Q42_OK ||
	    (rc = read_vocab(&r, p)) != Q42_OK || (rc = read_manifold(&r, p)) != Q42_OK ||
	    (rc = read_prov(&r, p)) != Q42_OK || (rc = read_descriptors(&r, p)) != Q42_OK ||
	    (rc = read_blobs(&r, p)) != Q42_OK)
		goto fail;
	p->data = data;
	p->size = size;
	return Q42_OK;
fail:
	q42_p64_close(p);
	return rc;
}

void q42_p64_close(q42_p64 *p)
{
	free(p->vocab.tokens);
	free(p->vocab.scores);
	free(p->vocab.types);
	free(p->vocab.merges);
	free(p->tensors);
	free(p->manifold);
	memset(p, 0, sizeof *p);
}

const q42_p64_tensor *q42_p64_find_tensor(const q42_p64 *p, const char *name)
{
	uint64_t n = strlen(name);
	for (uint64_t i = 0; i < p->n_tensors; i++)
		if (p->tensors[i].name.len == n && memcmp(p->tensors[i].name.p, name, n) == 0)
			return &p->tensors[i];
	return NULL;
}

const q42_p64_section *q42_p64_find_section(const q42_p64 *p, uint32_t id)
{
	for (uint32_t i = 0; i < p->n_sections; i++)
		if (p->sections[i].id == id)
			return &p->sections[i];
	return NULL;
}
