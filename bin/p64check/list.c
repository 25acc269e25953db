/* list.c -- p64check's inspection listings (--header, --metadata, --array,
 * --tensors, --tokenizer, --tokens, --manifold, --values).
 *
 * Each function turns libq42's view of a validated GGUF or P64 into one
 * table through rows.h; the column sets are specified in p64check(1),
 * "LISTINGS". Nothing here decodes a file format by hand: values come from
 * the GGUF reader's kv views, the P64 reader's structs and q42_source.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "bin/cli/q42_cli.h"
#include "p64check.h"
#include "rows.h"
#include "common/q42_buf.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "formats/q42_roles.h"
#include "common/q42_types.h"

/* Array elements shown after an array's summary in --metadata. */
#define ARRAY_PREVIEW 4u

static const char *const vtype_names[Q42_GGUF_VTYPE_COUNT_] = {
	[Q42_GGUF_U8] = "u8",	  [Q42_GGUF_I8] = "i8",	  [Q42_GGUF_U16] = "u16",
	[Q42_GGUF_I16] = "i16",	  [Q42_GGUF_U32] = "u32", [Q42_GGUF_I32] = "i32",
	[Q42_GGUF_F32] = "f32",	  [Q42_GGUF_BOOL] = "bool", [Q42_GGUF_STRING] = "string",
	[Q42_GGUF_ARRAY] = "array", [Q42_GGUF_U64] = "u64", [Q42_GGUF_I64] = "i64",
	[Q42_GGUF_F64] = "f64",
};

static const char *vtype_name(uint32_t t)
{
	return t < Q42_GGUF_VTYPE_COUNT_ ? vtype_names[t] : "?";
}

static int finish(rows *r, q42_err *err)
{
	if (!rows_end(r))
		return q42_err_set(err, Q42_EIO, "stdout: write failed: %s",
				   errno ? strerror(errno) : "out of memory");
	return Q42_OK;
}

/* ---- one metadata value -------------------------------------------- */

enum val_kind { V_STR, V_U64, V_I64, V_F32, V_F64, V_BOOL, V_NESTED };

typedef struct val {
	enum val_kind kind;
	q42_str s;
	uint64_t u;
	int64_t i;
	double f;
	bool b;
} val;

/* Element i of kv (type is kv->type for a scalar, kv->arr_type for an
 * array element); fixed-size elements are read at their stored offset. */
static bool get_val(const q42_gguf *g, const q42_gguf_kv *kv, uint32_t type, uint64_t i, val *v)
{
	const uint8_t *p;
	uint64_t bits;

	memset(v, 0, sizeof *v);
	if (type == Q42_GGUF_STRING) {
		v->kind = V_STR;
		if (kv->type == Q42_GGUF_ARRAY)
			return q42_gguf_arr_str(g, kv, i, &v->s);
		return q42_gguf_kv_str(kv, &v->s);
	}
	if (type == Q42_GGUF_ARRAY) {
		v->kind = V_NESTED;
		return true;
	}
	p = kv->val + i * q42_gguf_vtype_size(type);
	switch (type) {
	case Q42_GGUF_U8:
		v->kind = V_U64, v->u = p[0];
		break;
	case Q42_GGUF_I8:
		v->kind = V_I64, v->i = (int8_t)p[0];
		break;
	case Q42_GGUF_U16:
		v->kind = V_U64, v->u = q42_ld16(p);
		break;
	case Q42_GGUF_I16:
		v->kind = V_I64, v->i = (int16_t)q42_ld16(p);
		break;
	case Q42_GGUF_U32:
		v->kind = V_U64, v->u = q42_ld32(p);
		break;
	case Q42_GGUF_I32:
		v->kind = V_I64, v->i = (int32_t)q42_ld32(p);
		break;
	case Q42_GGUF_U64:
		v->kind = V_U64, v->u = q42_ld64(p);
		break;
	case Q42_GGUF_I64:
		v->kind = V_I64, v->i = (int64_t)q42_ld64(p);
		break;
	case Q42_GGUF_F32:
		v->kind = V_F32, v->f = q42_ldf32(p);
		break;
	case Q42_GGUF_F64:
		bits = q42_ld64(p);
		memcpy(&v->f, &bits, sizeof v->f);
		v->kind = V_F64;
		break;
	case Q42_GGUF_BOOL:
		v->kind = V_BOOL, v->b = p[0] != 0;
		break;
	default:
		return false;
	}
	return true;
}

static void val_tsv(q42_buf *b, const val *v, bool quote)
{
	char num[40];

	switch (v->kind) {
	case V_STR:
		tsv_escape(b, v->s.p, v->s.len, quote);
		return;
	case V_U64:
		q42_buf_printf(b, "%" PRIu64, v->u);
		return;
	case V_I64:
		q42_buf_printf(b, "%" PRId64, v->i);
		return;
	case V_F32:
	case V_F64:
		fmt_float(num, sizeof num, v->f, v->kind == V_F32);
		q42_buf_printf(b, "%s", num);
		return;
	case V_BOOL:
		q42_buf_printf(b, "%s", v->b ? "true" : "false");
		return;
	case V_NESTED:
		q42_buf_printf(b, "[array]");
		return;
	}
}

static json_t *val_json(const val *v)
{
	switch (v->kind) {
	case V_STR:
		return json_text(v->s.p, v->s.len);
	case V_U64:
		return json_integer((json_int_t)v->u);
	case V_I64:
		return json_integer((json_int_t)v->i);
	case V_F32:
	case V_F64:
		return json_float(v->f, v->kind == V_F32);
	case V_BOOL:
		return json_boolean(v->b);
	case V_NESTED:
		return json_null();
	}
	return NULL;
}

static void val_cell(rows *r, const val *v)
{
	switch (v->kind) {
	case V_STR:
		row_str(r, v->s.p, v->s.len);
		return;
	case V_U64:
		row_u64(r, v->u);
		return;
	case V_I64:
		row_i64(r, v->i);
		return;
	case V_F32:
		row_f32(r, (float)v->f);
		return;
	case V_F64:
		row_f64(r, v->f);
		return;
	case V_BOOL:
		row_bool(r, v->b);
		return;
	case V_NESTED:
		row_none(r);
		return;
	}
}

/* The summary cell of an array: "[TYPE; COUNT] sha256=HEX E0, E1, ...". The
 * digest covers the elements exactly as stored (strings: u64 length then
 * bytes), so it can be recomputed from the GGUF without libq42. */
static int array_cell(rows *r, const q42_gguf *g, const q42_gguf_kv *kv, q42_err *err)
{
	uint8_t digest[Q42_SHA256_LEN];
	char hex[2 * Q42_SHA256_LEN + 1];
	q42_buf b;
	json_t *j = NULL, *first = NULL;
	uint64_t n = kv->count < ARRAY_PREVIEW ? kv->count : ARRAY_PREVIEW;
	int rc;

	rc = q42_sha256(kv->val, kv->end_off - kv->val_off, digest, err);
	if (rc != Q42_OK)
		return rc;
	q42_hex_encode(digest, sizeof digest, hex);
	q42_buf_init(&b);
	q42_buf_printf(&b, "[%s; %" PRIu64 "] sha256=%s", vtype_name(kv->arr_type), kv->count, hex);
	if (r->json) {
		j = json_object();
		first = json_array();
		json_object_set_new(j, "type", json_string(vtype_name(kv->arr_type)));
		json_object_set_new(j, "count", json_integer((json_int_t)kv->count));
		json_object_set_new(j, "sha256", json_string(hex));
	}
	for (uint64_t i = 0; i < n; i++) {
		val v;
		if (!get_val(g, kv, kv->arr_type, i, &v)) {
			rc = q42_err_set(err, Q42_EFORMAT, "key %.*s: element %" PRIu64 " unreadable",
					 (int)kv->key.len, kv->key.p, i);
			goto done;
		}
		q42_buf_append(&b, i ? ", " : " ", i ? 2 : 1);
		val_tsv(&b, &v, true);
		if (first != NULL)
			json_array_append_new(first, val_json(&v));
	}
	if (kv->count > n)
		q42_buf_append(&b, ", ...", 5);
	q42_buf_u8(&b, 0);
	if (b.failed) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto done;
	}
	if (j != NULL) {
		json_object_set_new(j, "first", first);
		first = NULL;
	}
	row_raw(r, (const char *)b.data, j);
	j = NULL;
done:
	json_decref(first);
	json_decref(j);
	q42_buf_free(&b);
	return rc;
}

int list_metadata(q42_source *s, FILE *out, bool json, q42_err *err)
{
	static const char *const cols[] = {"key", "type", "value"};
	const q42_gguf *g;
	rows r;
	int rc = q42_source_meta(s, &g, err);

	if (rc != Q42_OK)
		return rc;
	rows_begin(&r, out, json, cols, 3);
	for (uint64_t k = 0; k < g->n_kv; k++) {
		const q42_gguf_kv *kv = &g->kv[k];
		val v;
		row_str(&r, kv->key.p, kv->key.len);
		row_cstr(&r, vtype_name(kv->type));
		if (kv->type == Q42_GGUF_ARRAY) {
			rc = array_cell(&r, g, kv, err);
			if (rc != Q42_OK)
				break;
		} else if (get_val(g, kv, kv->type, 0, &v)) {
			val_cell(&r, &v);
		} else {
			rc = q42_err_set(err, Q42_EFORMAT, "key %.*s: value unreadable",
					 (int)kv->key.len, kv->key.p);
			break;
		}
		if (!row_next(&r)) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
			break;
		}
	}
	if (rc != Q42_OK) {
		rows_end(&r);
		return rc;
	}
	return finish(&r, err);
}

int list_array(q42_source *s, const char *key, FILE *out, bool json, q42_err *err)
{
	static const char *const cols[] = {"index", "value"};
	const q42_gguf *g;
	const q42_gguf_kv *kv;
	rows r;
	int rc = q42_source_meta(s, &g, err);

	if (rc != Q42_OK)
		return rc;
	kv = q42_gguf_find(g, key);
	if (kv == NULL)
		return q42_err_set(err, Q42_ENOTFOUND, "%s: no metadata key \"%s\"", s->map.path, key);
	if (kv->type != Q42_GGUF_ARRAY)
		return q42_err_set(err, Q42_ENOTFOUND, "%s: key \"%s\" is a %s, not an array",
				   s->map.path, key, vtype_name(kv->type));
	rows_begin(&r, out, json, cols, 2);
	for (uint64_t i = 0; i < kv->count; i++) {
		val v;
		if (!get_val(g, kv, kv->arr_type, i, &v)) {
			rc = q42_err_set(err, Q42_EFORMAT, "key %s: element %" PRIu64 " unreadable", key, i);
			break;
		}
		row_u64(&r, i);
		val_cell(&r, &v);
		if (!row_next(&r)) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
			break;
		}
	}
	if (rc != Q42_OK) {
		rows_end(&r);
		return rc;
	}
	return finish(&r, err);
}

/* ---- header ----------------------------------------------------------- */

static void field_u64(rows *r, const char *name, uint64_t v)
{
	row_cstr(r, name);
	row_u64(r, v);
	row_next(r);
}

static void field_str(rows *r, const char *name, const void *p, uint64_t n)
{
	row_cstr(r, name);
	row_str(r, p, n);
	row_next(r);
}

static void field_hex(rows *r, const char *name, uint64_t v, int digits)
{
	row_cstr(r, name);
	row_hex(r, v, digits);
	row_next(r);
}

int list_header(q42_source *s, FILE *out, bool json, q42_err *err)
{
	static const char *const cols[] = {"field", "value"};
	static const char *const flag_names[] = {"byte-preserving", "hparams", "tokenizer",
						 "bootable"};
	char hex[2 * Q42_SHA256_LEN + 1];
	rows r;

	rows_begin(&r, out, json, cols, 2);
	field_str(&r, "format", q42_source_kind_name(s->kind), strlen(q42_source_kind_name(s->kind)));
	if (s->kind == Q42_SOURCE_GGUF) {
		const q42_gguf *g = &s->gguf;
		field_u64(&r, "version", g->version);
		field_u64(&r, "tensor_count", g->n_tensors);
		field_u64(&r, "kv_count", g->n_kv);
		field_u64(&r, "alignment", g->alignment);
		field_u64(&r, "data_offset", g->data_offset);
		field_u64(&r, "data_end", g->data_end);
		field_u64(&r, "file_size", g->file_size);
		return finish(&r, err);
	}
	const q42_p64 *p = &s->p64;
	q42_buf names;
	q42_buf_init(&names);
	for (unsigned i = 0; i < sizeof flag_names / sizeof *flag_names; i++)
		if (p->flags & (1u << i))
			q42_buf_printf(&names, "%s%s", names.len ? "," : "", flag_names[i]);
	field_u64(&r, "version", p->version);
	field_u64(&r, "page_log2", p->page_log2);
	field_u64(&r, "file_size", p->size);
	field_hex(&r, "flags", p->flags, 8);
	field_str(&r, "flag_names", names.data ? (const char *)names.data : "", names.len);
	q42_buf_free(&names);
	field_hex(&r, "header_crc32c", p->header_crc, 8);
	field_u64(&r, "meta_end", p->meta_end);
	field_hex(&r, "meta_crc32c", p->meta_crc, 8);
	field_u64(&r, "tensor_count", p->n_tensors);
	field_u64(&r, "manifold_count", p->n_manifold);
	field_u64(&r, "section_count", p->n_sections);
	for (uint32_t i = 0; i < p->n_sections; i++) {
		const q42_p64_section *sec = &p->sections[i];
		char name[32], text[96];
		json_t *j = NULL;
		snprintf(name, sizeof name, "section.%s", sec->tag);
		snprintf(text, sizeof text, "offset=%" PRIu64 " length=%" PRIu64 " count=%" PRIu32,
			 sec->offset, sec->length, sec->count);
		if (json) {
			j = json_object();
			json_object_set_new(j, "offset", json_integer((json_int_t)sec->offset));
			json_object_set_new(j, "length", json_integer((json_int_t)sec->length));
			json_object_set_new(j, "count", json_integer((json_int_t)sec->count));
		}
		row_cstr(&r, name);
		row_raw(&r, text, j);
		row_next(&r);
	}
	{
		const char *fmt = p->prov.source_format == Q42_P64_SOURCE_GGUF ? "gguf"
				  : p->prov.source_format == Q42_P64_SOURCE_SAFETENSORS ? "safetensors"
				  : "?";
		field_str(&r, "source_format", fmt, strlen(fmt));
	}
	field_u64(&r, "source_version", p->prov.source_version);
	field_u64(&r, "source_size", p->prov.source_size);
	q42_hex_encode(p->prov.source_sha256, sizeof p->prov.source_sha256, hex);
	field_str(&r, "source_sha256", hex, strlen(hex));
	field_str(&r, "policy", p->prov.policy.p, p->prov.policy.len);
	field_str(&r, "tool", p->prov.tool.p, p->prov.tool.len);
	return finish(&r, err);
}

/* ---- tensors ---------------------------------------------------------- */

static void dtype_cell(rows *r, uint32_t dtype)
{
	const q42_dtype_info *info = q42_dtype_get(dtype);
	char buf[24];

	if (info != NULL) {
		row_cstr(r, info->name);
		return;
	}
	snprintf(buf, sizeof buf, "type%" PRIu32, dtype);
	row_cstr(r, buf);
}

static void dims_cell(rows *r, const uint64_t *dims, uint32_t rank)
{
	char buf[4 * 24];
	size_t len = 0;
	json_t *j = r->json ? json_array() : NULL;

	buf[0] = '\0';
	for (uint32_t d = 0; d < rank && d < Q42_GGUF_MAX_DIMS; d++) {
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%" PRIu64, d ? "x" : "",
					dims[d]);
		if (j != NULL)
			json_array_append_new(j, json_integer((json_int_t)dims[d]));
	}
	row_raw(r, buf, j);
}

int list_tensors(q42_source *s, FILE *out, bool json, q42_err *err)
{
	static const char *const cols[] = {"name", "dtype", "dims", "offset", "bytes",
					   "role", "layer", "crc32c", "source_offset", "name_hash"};
	bool p64 = s->kind == Q42_SOURCE_P64;
	uint64_t n = q42_source_tensor_count(s);
	rows r;

	rows_begin(&r, out, json, cols, p64 ? 10 : 5);
	for (uint64_t i = 0; i < n; i++) {
		q42_source_tensor t;
		q42_source_tensor_get(s, i, &t);
		row_str(&r, t.name.p, t.name.len);
		dtype_cell(&r, t.dtype);
		dims_cell(&r, t.dims, t.rank);
		row_u64(&r, t.offset);
		row_u64(&r, t.nbytes);
		if (p64) {
			const q42_p64_tensor *pt = &s->p64.tensors[i];
			row_cstr(&r, q42_role_name(pt->role));
			row_i64(&r, pt->layer);
			row_hex(&r, pt->crc, 8);
			row_u64(&r, pt->source_offset);
			row_hex(&r, pt->name_hash, 16);
		}
		if (!row_next(&r))
			break;
	}
	return finish(&r, err);
}

/* ---- tokenizer -------------------------------------------------------- */

/* The vocabulary of either container: the P64's own, or one read from the
 * GGUF into *tmp (the caller frees it when *v == tmp). */
static int get_vocab(q42_source *s, q42_vocab *tmp, const q42_vocab **v, q42_err *err)
{
	int rc;

	if (s->kind == Q42_SOURCE_P64) {
		if (!s->p64.has_vocab)
			return q42_err_set(err, Q42_ENOTFOUND, "%s: section Q42T: absent, no tokenizer",
					   s->map.path);
		*v = &s->p64.vocab;
		return Q42_OK;
	}
	rc = q42_vocab_from_gguf(tmp, &s->gguf, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "%s", s->map.path);
		return rc;
	}
	*v = tmp;
	return Q42_OK;
}

static void field_id(rows *r, const char *name, int32_t id)
{
	row_cstr(r, name);
	if (id == Q42_TOK_NONE)
		row_none(r);
	else
		row_i64(r, id);
	row_next(r);
}

static void field_flag(rows *r, const char *name, int8_t v)
{
	row_cstr(r, name);
	if (v < 0)
		row_none(r);
	else
		row_bool(r, v != 0);
	row_next(r);
}

static void field_present(rows *r, const char *name, bool v)
{
	row_cstr(r, name);
	row_bool(r, v);
	row_next(r);
}

int list_tokenizer(q42_source *s, FILE *out, bool json, q42_err *err)
{
	static const char *const cols[] = {"field", "value"};
	q42_vocab tmp;
	const q42_vocab *v = NULL;
	rows r;
	int rc;

	memset(&tmp, 0, sizeof tmp);
	rc = get_vocab(s, &tmp, &v, err);
	if (rc != Q42_OK)
		return rc;
	rows_begin(&r, out, json, cols, 2);
	field_str(&r, "model", v->model.p, v->model.len);
	field_str(&r, "pre", v->pre.p, v->pre.len);
	field_u64(&r, "tokens", v->n_tokens);
	field_u64(&r, "merges", v->n_merges);
	field_present(&r, "scores", v->scores != NULL);
	field_present(&r, "token_types", v->types != NULL);
	field_id(&r, "bos", v->bos);
	field_id(&r, "eos", v->eos);
	field_id(&r, "eot", v->eot);
	field_id(&r, "eom", v->eom);
	field_id(&r, "unk", v->unk);
	field_id(&r, "sep", v->sep);
	field_id(&r, "pad", v->pad);
	field_id(&r, "mask", v->mask);
	field_flag(&r, "add_bos", v->add_bos);
	field_flag(&r, "add_eos", v->add_eos);
	field_flag(&r, "add_space_prefix", v->add_space_prefix);
	field_flag(&r, "remove_extra_whitespaces", v->remove_extra_whitespaces);
	field_u64(&r, "charsmap_bytes", v->charsmap.len);
	rc = finish(&r, err);
	if (v == &tmp)
		q42_vocab_free(&tmp);
	return rc;
}

static const char *tok_type_name(int32_t t)
{
	static const char *const names[] = {"undefined", "normal", "unknown", "control",
					    "user_defined", "unused", "byte"};
	return t >= 0 && t < (int32_t)(sizeof names / sizeof *names) ? names[t] : "?";
}

int list_tokens(q42_source *s, FILE *out, bool json, q42_err *err)
{
	static const char *const cols[] = {"id", "token", "score", "type"};
	q42_vocab tmp;
	const q42_vocab *v = NULL;
	rows r;
	int rc;

	memset(&tmp, 0, sizeof tmp);
	rc = get_vocab(s, &tmp, &v, err);
	if (rc != Q42_OK)
		return rc;
	rows_begin(&r, out, json, cols, 4);
	for (uint32_t i = 0; i < v->n_tokens; i++) {
		row_u64(&r, i);
		row_str(&r, v->tokens[i].p, v->tokens[i].len);
		if (v->scores != NULL)
			row_f32(&r, v->scores[i]);
		else
			row_none(&r);
		if (v->types != NULL)
			row_cstr(&r, tok_type_name(v->types[i]));
		else
			row_none(&r);
		if (!row_next(&r))
			break;
	}
	rc = finish(&r, err);
	if (v == &tmp)
		q42_vocab_free(&tmp);
	return rc;
}

/* ---- manifold --------------------------------------------------------- */

int list_manifold(q42_source *s, FILE *out, bool json, q42_err *err)
{
	const char *cols[4 + Q42_P64_MANIFOLD_COORDS] = {"layer", "tensors", "elems", "skipped"};
	rows r;

	if (s->kind != Q42_SOURCE_P64)
		return q42_err_set(err, Q42_ENOTFOUND,
				   "%s: a GGUF file has no manifold records (they exist in P64 only)",
				   s->map.path);
	for (uint32_t c = 0; c < Q42_P64_MANIFOLD_COORDS; c++)
		cols[4 + c] = q42_p64_coord_name(c);
	rows_begin(&r, out, json, cols, 4 + Q42_P64_MANIFOLD_COORDS);
	for (uint32_t i = 0; i < s->p64.n_manifold; i++) {
		const q42_p64_manifold *m = &s->p64.manifold[i];
		row_i64(&r, m->layer);
		row_u64(&r, m->n_tensors);
		row_u64(&r, m->n_elems);
		row_u64(&r, m->n_skipped);
		for (uint32_t c = 0; c < Q42_P64_MANIFOLD_COORDS; c++) {
			if (m->coord_mask & (1u << c))
				row_f32(&r, m->coord[c]);
			else
				row_none(&r);
		}
		if (!row_next(&r))
			break;
	}
	return finish(&r, err);
}

/* ---- values ----------------------------------------------------------- */

/* Split NAME[:FIRST[:COUNT]]. A tensor name may itself contain ':', so the
 * numbers are taken from the right and only when they are all digits. */
static int parse_spec(const char *spec, char **name, uint64_t *first, uint64_t *count,
		      bool *has_count, q42_err *err)
{
	char *copy = strdup(spec), *c1, *c2;
	uint64_t a, b;

	*first = 0;
	*has_count = false;
	if (copy == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	c2 = strrchr(copy, ':');
	if (c2 != NULL && q42_cli_u64(c2 + 1, &b)) {
		*c2 = '\0';
		c1 = strrchr(copy, ':');
		if (c1 != NULL && q42_cli_u64(c1 + 1, &a)) {
			*c1 = '\0';
			*first = a;
			*count = b;
			*has_count = true;
		} else {
			*first = b;
		}
	}
	*name = copy;
	return Q42_OK;
}

int list_values(q42_source *s, const char *spec, FILE *out, bool json, q42_err *err)
{
	static const char *const cols[] = {"index", "value"};
	q42_source_tensor t;
	char *name = NULL;
	float *vals = NULL;
	uint64_t first, count, done;
	bool has_count;
	rows r;
	int rc;

	rc = parse_spec(spec, &name, &first, &count, &has_count, err);
	if (rc != Q42_OK)
		return rc;
	rc = q42_source_find_tensor(s, name, &t, err);
	if (rc != Q42_OK)
		goto done;
	if (first > t.n_elems) {
		rc = q42_err_set(err, Q42_ENOTFOUND, "tensor %s: first element %" PRIu64
				 " is past its %" PRIu64 " elements", name, first, t.n_elems);
		goto done;
	}
	if (!has_count)
		count = t.n_elems - first;
	rc = q42_source_tensor_values(&t, first, 0, NULL, err);
	if (rc == Q42_EARG)
		rc = Q42_ENOTFOUND;
	if (rc != Q42_OK)
		goto done;
	/* Print in bounded steps so a whole large tensor needs no large buffer. */
	enum { STEP = 65536 };
	vals = malloc(STEP * sizeof *vals);
	if (vals == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto done;
	}
	if (count > t.n_elems - first) {
		rc = q42_err_set(err, Q42_ENOTFOUND, "tensor %s: elements %" PRIu64 "..+%" PRIu64
				 " outside its %" PRIu64 " elements", name, first, count, t.n_elems);
		goto done;
	}
	rows_begin(&r, out, json, cols, 2);
	for (done = 0; done < count && rc == Q42_OK;) {
		uint64_t n = count - done < STEP ? count - done : STEP;
		rc = q42_source_tensor_values(&t, first + done, n, vals, err);
		for (uint64_t i = 0; i < n && rc == Q42_OK; i++) {
			row_u64(&r, first + done + i);
			row_f32(&r, vals[i]);
			if (!row_next(&r))
				break;
		}
		done += n;
	}
	if (rc != Q42_OK)
		rows_end(&r);
	else
		rc = finish(&r, err);
done:
	free(vals);
	free(name);
	return rc;
}
