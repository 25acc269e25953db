/* q42_gguf.c -- validating GGUF v2/v3 reader (see q42_gguf.h).
 *
 * The parser is a cursor over a mapping that never moves past a bound it has
 * not checked: every length is compared with the bytes left before it is
 * used, every product and sum is overflow-checked, and every count is capped
 * by the smallest encoding one element can have, so a hostile header cannot
 * make us allocate more than a small multiple of the file's own size.
 * Tensor payloads are located and bounds-checked, never read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/q42_gguf.h"
#include "common/q42_types.h"
#include "common/q42_ckd.h"
#include "common/q42_le.h"

/* GGUF v1 used 32-bit counts; v2 and v3 differ only in endianness rules. */
#define GGUF_MIN_VERSION 2u
#define GGUF_MAX_VERSION 3u
/* Smallest encodings: a kv is key length (8) + one key byte + type (4) +
 * a one-byte value; a tensor info is name length (8) + one byte + n_dims
 * (4) + one dim (8) + type (4) + offset (8). */
#define KV_MIN_BYTES 14u
#define TENSOR_MIN_BYTES 33u
#define NAME_MAX_BYTES 1024u

typedef struct cursor {
	const uint8_t *p;
	uint64_t size;
	uint64_t pos;
	const char *name;
	q42_err *err;
} cursor;

static uint32_t vtype_sizes[Q42_GGUF_VTYPE_COUNT_] = {
	[Q42_GGUF_U8] = 1, [Q42_GGUF_I8] = 1, [Q42_GGUF_U16] = 2, [Q42_GGUF_I16] = 2,
	[Q42_GGUF_U32] = 4, [Q42_GGUF_I32] = 4, [Q42_GGUF_F32] = 4, [Q42_GGUF_BOOL] = 1,
	[Q42_GGUF_STRING] = 0, [Q42_GGUF_ARRAY] = 0, [Q42_GGUF_U64] = 8,
	[Q42_GGUF_I64] = 8, [Q42_GGUF_F64] = 8,
};

static const char *vtype_names[Q42_GGUF_VTYPE_COUNT_] = {
	"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array",
	"u64", "i64", "f64",
};

const char *q42_gguf_vtype_name(uint32_t t)
{
	return t < Q42_GGUF_VTYPE_COUNT_ ? vtype_names[t] : "invalid";
}

uint32_t q42_gguf_vtype_size(uint32_t t)
{
	return t < Q42_GGUF_VTYPE_COUNT_ ? vtype_sizes[t] : 0;
}

static uint64_t left(const cursor *c)
{
	return c->size - c->pos;
}

static int need(cursor *c, uint64_t n, const char *what)
{
	if (n > left(c))
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: truncated at offset %llu reading %s: need %llu bytes, %llu left",
				   c->name, (unsigned long long)c->pos, what,
				   (unsigned long long)n, (unsigned long long)left(c));
	return Q42_OK;
}

static int rd_u32(cursor *c, uint32_t *v, const char *what)
{
	int rc = need(c, 4, what);
	if (rc != Q42_OK)
		return rc;
	*v = q42_ld32(c->p + c->pos);
	c->pos += 4;
	return Q42_OK;
}

static int rd_u64(cursor *c, uint64_t *v, const char *what)
{
	int rc = need(c, 8, what);
	if (rc != Q42_OK)
		return rc;
	*v = q42_ld64(c->p + c->pos);
	c->pos += 8;
	return Q42_OK;
}

static int rd_str(cursor *c, q42_str *s, uint64_t cap, const char *what)
{
	uint64_t at = c->pos, len;
	int rc = rd_u64(c, &len, what);
	if (rc != Q42_OK)
		return rc;
	if (len > left(c) || len > cap)
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: %s at offset %llu: length %llu exceeds %s (%llu)",
				   c->name, what, (unsigned long long)at, (unsigned long long)len,
				   len > cap ? "the cap" : "the bytes left",
				   (unsigned long long)(len > cap ? cap : left(c)));
	s->p = (const char *)(c->p + c->pos);
	s->len = len;
	c->pos += len;
	return Q42_OK;
}

/* Open-addressing set of names, used to reject duplicates and to find
 * keys and tensors in O(1). Capacity is a power of two >= 2n. */
typedef struct nameset {
	uint64_t *slots; /* index + 1; 0 = empty */
	uint64_t mask;
} nameset;

static uint64_t hash_str(const char *p, uint64_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (uint64_t i = 0; i < n; i++) {
		h ^= (uint8_t)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

static bool nameset_init(nameset *s, uint64_t n)
{
	uint64_t cap = 8;
	while (cap < n * 2)
		cap *= 2;
	s->slots = calloc(cap, sizeof *s->slots);
	s->mask = cap - 1;
	return s->slots != NULL;
}

static bool str_eq(q42_str a, q42_str b)
{
	return a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
}

/* Returns the existing index + 1 if name is present, else inserts idx. */
static uint64_t nameset_insert(nameset *s, q42_str name, uint64_t idx,
			       q42_str (*get)(const void *, uint64_t), const void *ctx)
{
	uint64_t h = hash_str(name.p, name.len) & s->mask;
	while (s->slots[h] != 0) {
		if (str_eq(get(ctx, s->slots[h] - 1), name))
			return s->slots[h];
		h = (h + 1) & s->mask;
	}
	s->slots[h] = idx + 1;
	return 0;
}

static uint64_t nameset_find(const nameset *s, q42_str name,
			     q42_str (*get)(const void *, uint64_t), const void *ctx)
{
	if (s->slots == NULL)
		return 0;
	uint64_t h = hash_str(name.p, name.len) & s->mask;
	while (s->slots[h] != 0) {
		if (str_eq(get(ctx, s->slots[h] - 1), name))
			return s->slots[h];
		h = (h + 1) & s->mask;
	}
	return 0;
}

/* Lookup tables kept behind q42_gguf.priv_ so the public struct stays
 * plain data. */
typedef struct gguf_private {
	nameset kv_set;
	nameset tensor_set;
} gguf_private;

static q42_str kv_name(const void *ctx, uint64_t i)
{
	return ((const q42_gguf_kv *)ctx)[i].key;
}

static q42_str tensor_name(const void *ctx, uint64_t i)
{
	return ((const q42_gguf_tensor *)ctx)[i].name;
}

static int parse_value(cursor *c, q42_gguf_kv *kv, uint64_t idx)
{
	const char *key_desc = "metadata value";
	int rc;

	kv->count = 1;
	if (kv->type == Q42_GGUF_ARRAY) {
		rc = rd_u32(c, &kv->arr_type, "array element type");
		if (rc != Q42_OK)
			return rc;
		if (kv->arr_type == Q42_GGUF_ARRAY)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: key %llu '%.*s' at offset %llu: nested arrays are not allowed",
					   c->name, (unsigned long long)idx, (int)kv->key.len,
					   kv->key.p, (unsigned long long)kv->key_off);
		if (kv->arr_type >= Q42_GGUF_VTYPE_COUNT_)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: key '%.*s' at offset %llu: array element type %u is not a GGUF type (0..12)",
					   c->name, (int)kv->key.len, kv->key.p,
					   (unsigned long long)kv->key_off, kv->arr_type);
		rc = rd_u64(c, &kv->count, "array length");
		if (rc != Q42_OK)
			return rc;
		kv->val = c->p + c->pos;
		kv->val_off = c->pos;
		if (kv->arr_type == Q42_GGUF_STRING) {
			/* Each string takes at least its 8-byte length. */
			if (kv->count > left(c) / 8)
				return q42_err_set(c->err, Q42_EFORMAT,
						   "%s: key '%.*s': string array length %llu cannot fit in the %llu bytes left",
						   c->name, (int)kv->key.len, kv->key.p,
						   (unsigned long long)kv->count,
						   (unsigned long long)left(c));
			kv->str_offs = malloc((kv->count ? kv->count : 1) * sizeof *kv->str_offs);
			if (kv->str_offs == NULL)
				return q42_err_set(c->err, Q42_ENOMEM, "%s: out of memory", c->name);
			for (uint64_t i = 0; i < kv->count; i++) {
				q42_str s;
				kv->str_offs[i] = c->pos;
				rc = rd_str(c, &s, UINT64_MAX, "array string");
				if (rc != Q42_OK) {
					q42_err_prefix(c->err, "key '%.*s' element %llu",
						       (int)kv->key.len, kv->key.p,
						       (unsigned long long)i);
					return rc;
				}
			}
		} else {
			uint64_t bytes;
			if (q42_mul_overflow(kv->count, vtype_sizes[kv->arr_type], &bytes) ||
			    bytes > left(c))
				return q42_err_set(c->err, Q42_EFORMAT,
						   "%s: key '%.*s': array of %llu %s does not fit in the %llu bytes left",
						   c->name, (int)kv->key.len, kv->key.p,
						   (unsigned long long)kv->count,
						   vtype_names[kv->arr_type],
						   (unsigned long long)left(c));
			c->pos += bytes;
		}
	} else if (kv->type == Q42_GGUF_STRING) {
		q42_str s;
		kv->val = c->p + c->pos;
		kv->val_off = c->pos;
		rc = rd_str(c, &s, UINT64_MAX, "string value");
		if (rc != Q42_OK)
			return rc;
	} else {
		kv->val = c->p + c->pos;
		kv->val_off = c->pos;
		rc = need(c, vtype_sizes[kv->type], key_desc);
		if (rc != Q42_OK)
			return rc;
		if (kv->type == Q42_GGUF_BOOL && kv->val[0] > 1)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: key '%.*s' at offset %llu: bool value %u is not 0 or 1",
					   c->name, (int)kv->key.len, kv->key.p,
					   (unsigned long long)kv->val_off, kv->val[0]);
		c->pos += vtype_sizes[kv->type];
	}
	kv->end_off = c->pos;
	return Q42_OK;
}

static int parse_kvs(cursor *c, q42_gguf *g, gguf_private *priv)
{
	int rc;

	if (g->n_kv > left(c) / KV_MIN_BYTES)
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: header: metadata count %llu cannot fit in the %llu bytes left (at least %u bytes each)",
				   c->name, (unsigned long long)g->n_kv,
				   (unsigned long long)left(c), KV_MIN_BYTES);
	g->kv = calloc(g->n_kv ? g->n_kv : 1, sizeof *g->kv);
	if (g->kv == NULL || !nameset_init(&priv->kv_set, g->n_kv))
		return q42_err_set(c->err, Q42_ENOMEM, "%s: out of memory", c->name);
	for (uint64_t i = 0; i < g->n_kv; i++) {
		q42_gguf_kv *kv = &g->kv[i];
		kv->key_off = c->pos;
		rc = rd_str(c, &kv->key, NAME_MAX_BYTES, "metadata key");
		if (rc != Q42_OK)
			return rc;
		if (kv->key.len == 0)
			return q42_err_set(c->err, Q42_EFORMAT, "%s: key %llu at offset %llu is empty",
					   c->name, (unsigned long long)i,
					   (unsigned long long)kv->key_off);
		rc = rd_u32(c, &kv->type, "metadata value type");
		if (rc != Q42_OK)
			return rc;
		if (kv->type >= Q42_GGUF_VTYPE_COUNT_)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: key '%.*s' at offset %llu: value type %u is not a GGUF type (0..12)",
					   c->name, (int)kv->key.len, kv->key.p,
					   (unsigned long long)kv->key_off, kv->type);
		rc = parse_value(c, kv, i);
		if (rc != Q42_OK)
			return rc;
		uint64_t dup = nameset_insert(&priv->kv_set, kv->key, i, kv_name, g->kv);
		if (dup != 0)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: key '%.*s' at offset %llu duplicates key %llu",
					   c->name, (int)kv->key.len, kv->key.p,
					   (unsigned long long)kv->key_off, (unsigned long long)(dup - 1));
	}
	return Q42_OK;
}

static int parse_alignment(cursor *c, q42_gguf *g)
{
	const q42_gguf_kv *kv = q42_gguf_find(g, "general.alignment");
	g->alignment = Q42_GGUF_DEFAULT_ALIGNMENT;
	if (kv == NULL)
		return Q42_OK;
	if (kv->type != Q42_GGUF_U32)
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: general.alignment at offset %llu: expected type u32, found %s",
				   c->name, (unsigned long long)kv->key_off, q42_gguf_vtype_name(kv->type));
	uint32_t a = q42_ld32(kv->val);
	if (!q42_is_pow2(a) || a > Q42_GGUF_MAX_ALIGNMENT)
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: general.alignment at offset %llu: expected a power of two <= %u, found %u",
				   c->name, (unsigned long long)kv->val_off, Q42_GGUF_MAX_ALIGNMENT, a);
	g->alignment = a;
	return Q42_OK;
}

static int parse_tensor_info(cursor *c, q42_gguf_tensor *t, uint64_t i)
{
	int rc;

	t->info_off = c->pos;
	rc = rd_str(c, &t->name, NAME_MAX_BYTES, "tensor name");
	if (rc != Q42_OK)
		return rc;
	if (t->name.len == 0)
		return q42_err_set(c->err, Q42_EFORMAT, "%s: tensor %llu at offset %llu has an empty name",
				   c->name, (unsigned long long)i, (unsigned long long)t->info_off);
	rc = rd_u32(c, &t->n_dims, "tensor n_dims");
	if (rc != Q42_OK)
		return rc;
	if (t->n_dims == 0 || t->n_dims > Q42_GGUF_MAX_DIMS)
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: tensor '%.*s' at offset %llu: n_dims %u, expected 1..%u",
				   c->name, (int)t->name.len, t->name.p,
				   (unsigned long long)t->info_off, t->n_dims, Q42_GGUF_MAX_DIMS);
	t->n_elems = 1;
	for (uint32_t d = 0; d < Q42_GGUF_MAX_DIMS; d++) {
		t->ne[d] = 1;
		if (d >= t->n_dims)
			continue;
		rc = rd_u64(c, &t->ne[d], "tensor dimension");
		if (rc != Q42_OK)
			return rc;
		if (t->ne[d] == 0 || t->ne[d] > (uint64_t)INT64_MAX ||
		    q42_mul_overflow(t->n_elems, t->ne[d], &t->n_elems) ||
		    t->n_elems > (uint64_t)INT64_MAX)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: tensor '%.*s' at offset %llu: dimension %u = %llu is zero or overflows the element count",
					   c->name, (int)t->name.len, t->name.p,
					   (unsigned long long)t->info_off, d,
					   (unsigned long long)t->ne[d]);
	}
	rc = rd_u32(c, &t->type, "tensor type");
	if (rc != Q42_OK)
		return rc;
	rc = rd_u64(c, &t->offset, "tensor offset");
	if (rc != Q42_OK)
		return rc;
	t->type_known = q42_dtype_get(t->type) != NULL;
	if (t->type_known && !q42_dtype_nbytes(t->type, t->n_elems, t->ne[0], &t->nbytes))
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: tensor '%.*s' at offset %llu: row of %llu elements is not a whole number of %s blocks (%u)",
				   c->name, (int)t->name.len, t->name.p,
				   (unsigned long long)t->info_off, (unsigned long long)t->ne[0],
				   q42_dtype_get(t->type)->name, q42_dtype_get(t->type)->block_elems);
	return Q42_OK;
}

/* Tensor data must be laid out as writers produce it: in info order, each
 * tensor starting at the aligned end of the previous one. A tensor of
 * unknown type has no computable size, so it only bounds its successor's
 * start from below. */
static int check_layout(cursor *c, q42_gguf *g)
{
	uint64_t expect = 0; /* relative offset the next tensor must start at (minimum) */
	bool exact = true;

	for (uint64_t i = 0; i < g->n_tensors; i++) {
		q42_gguf_tensor *t = &g->tensors[i];
		uint64_t end;
		if (t->offset % g->alignment != 0)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: tensor '%.*s': data offset %llu is not a multiple of the alignment %u",
					   c->name, (int)t->name.len, t->name.p,
					   (unsigned long long)t->offset, g->alignment);
		if (exact ? t->offset != expect : t->offset < expect)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: tensor '%.*s': data offset %llu, expected %s%llu (tensor data must be contiguous, in order, non-overlapping)",
					   c->name, (int)t->name.len, t->name.p,
					   (unsigned long long)t->offset, exact ? "" : ">= ",
					   (unsigned long long)expect);
		if (q42_add_overflow(g->data_offset, t->offset, &t->abs_offset) ||
		    t->abs_offset > g->file_size)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: tensor '%.*s': data offset %llu lies outside the file (%llu bytes)",
					   c->name, (int)t->name.len, t->name.p,
					   (unsigned long long)t->offset,
					   (unsigned long long)g->file_size);
		if (!t->type_known) {
			expect = t->offset + 1;
			exact = false;
			g->data_end = g->file_size;
			continue;
		}
		if (q42_add_overflow(t->abs_offset, t->nbytes, &end) || end > g->file_size)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: tensor '%.*s': data [%llu, +%llu) runs past the end of the file (%llu bytes)",
					   c->name, (int)t->name.len, t->name.p,
					   (unsigned long long)t->abs_offset,
					   (unsigned long long)t->nbytes,
					   (unsigned long long)g->file_size);
		t->data = c->p + t->abs_offset;
		g->data_end = end;
		if (q42_align_up(t->offset + t->nbytes, g->alignment, &expect))
			return q42_err_set(c->err, Q42_EFORMAT, "%s: tensor offsets overflow", c->name);
		exact = true;
	}
	for (uint64_t i = 0; i < g->n_tensors; i++)
		if (!g->tensors[i].type_known)
			g->tensors[i].data = c->p + g->tensors[i].abs_offset;
	return Q42_OK;
}

static int parse_tensors(cursor *c, q42_gguf *g, gguf_private *priv)
{
	int rc;

	if (g->n_tensors > left(c) / TENSOR_MIN_BYTES)
		return q42_err_set(c->err, Q42_EFORMAT,
				   "%s: header: tensor count %llu cannot fit in the %llu bytes left (at least %u bytes each)",
				   c->name, (unsigned long long)g->n_tensors,
				   (unsigned long long)left(c), TENSOR_MIN_BYTES);
	g->tensors = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *g->tensors);
	if (g->tensors == NULL || !nameset_init(&priv->tensor_set, g->n_tensors))
		return q42_err_set(c->err, Q42_ENOMEM, "%s: out of memory", c->name);
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		rc = parse_tensor_info(c, &g->tensors[i], i);
		if (rc != Q42_OK)
			return rc;
		uint64_t dup = nameset_insert(&priv->tensor_set, g->tensors[i].name, i,
					      tensor_name, g->tensors);
		if (dup != 0)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: tensor '%.*s' at offset %llu duplicates tensor %llu",
					   c->name, (int)g->tensors[i].name.len,
					   g->tensors[i].name.p,
					   (unsigned long long)g->tensors[i].info_off,
					   (unsigned long long)(dup - 1));
	}
	g->header_end = c->pos;
	if (q42_align_up(c->pos, g->alignment, &g->data_offset))
		return q42_err_set(c->err, Q42_EFORMAT, "%s: data offset overflows", c->name);
	if (g->data_offset > g->file_size) {
		/* A file without tensors may end right after its header. */
		if (g->n_tensors != 0)
			return q42_err_set(c->err, Q42_EFORMAT,
					   "%s: truncated: tensor data section starts at offset %llu, file has %llu bytes",
					   c->name, (unsigned long long)g->data_offset,
					   (unsigned long long)g->file_size);
		g->data_offset = g->file_size;
	}
	g->data_end = g->data_offset;
	return check_layout(c, g);
}

static int gguf_parse(q42_gguf *g, const uint8_t *data, uint64_t size, const char *name,
		      bool meta_only, q42_err *err)
{
	cursor c = {.p = data, .size = size, .pos = 0, .name = name ? name : "gguf", .err = err};
	gguf_private *priv = NULL;
	int rc;

	memset(g, 0, sizeof *g);
	g->file = data;
	g->file_size = size;
	if (size < 4 || memcmp(data, Q42_GGUF_MAGIC, 4) != 0) {
		char found[9] = "";
		for (uint64_t i = 0; i < 4 && i < size; i++)
			snprintf(found + 2 * i, 3, "%02x", data[i]);
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: offset 0: bad magic: expected 'GGUF' (47475546), found %s",
				   c.name, size ? found : "an empty file");
	}
	c.pos = 4;
	rc = rd_u32(&c, &g->version, "version");
	if (rc != Q42_OK)
		return rc;
	if (g->version < GGUF_MIN_VERSION || g->version > GGUF_MAX_VERSION) {
		bool swapped = __builtin_bswap32(g->version) >= GGUF_MIN_VERSION &&
			       __builtin_bswap32(g->version) <= GGUF_MAX_VERSION;
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: offset 4: version %u, expected 2 or 3%s", c.name, g->version,
				   swapped ? " (this looks like a big-endian GGUF, which is not supported)" : "");
	}
	rc = rd_u64(&c, &g->n_tensors, "tensor count");
	if (rc == Q42_OK)
		rc = rd_u64(&c, &g->n_kv, "metadata count");
	if (rc != Q42_OK)
		return rc;
	priv = calloc(1, sizeof *priv);
	if (priv == NULL)
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", c.name);
	g->priv_ = priv;
	rc = parse_kvs(&c, g, priv);
	if (rc == Q42_OK)
		rc = parse_alignment(&c, g);
	if (rc == Q42_OK && meta_only) {
		/* The tensor infos are not read: only the key/value view is
		 * exposed, so nothing depends on bytes that may be absent. */
		g->n_tensors = 0;
		g->header_end = g->data_offset = g->data_end = c.pos;
	} else if (rc == Q42_OK) {
		rc = parse_tensors(&c, g, priv);
	}
	if (rc != Q42_OK)
		q42_gguf_free(g);
	return rc;
}

int q42_gguf_parse(q42_gguf *g, const uint8_t *data, uint64_t size, const char *name,
		   q42_err *err)
{
	return gguf_parse(g, data, size, name, false, err);
}

int q42_gguf_parse_meta(q42_gguf *g, const uint8_t *data, uint64_t size, const char *name,
			q42_err *err)
{
	return gguf_parse(g, data, size, name, true, err);
}

void q42_gguf_free(q42_gguf *g)
{
	gguf_private *priv = g->priv_;
	if (g->kv != NULL)
		for (uint64_t i = 0; i < g->n_kv; i++)
			free(g->kv[i].str_offs);
	free(g->kv);
	free(g->tensors);
	if (priv != NULL) {
		free(priv->kv_set.slots);
		free(priv->tensor_set.slots);
		free(priv);
	}
	memset(g, 0, sizeof *g);
}

const q42_gguf_kv *q42_gguf_find(const q42_gguf *g, const char *key)
{
	const gguf_private *priv = g->priv_;
	q42_str k = {key, strlen(key)};
	if (priv == NULL)
		return NULL;
	uint64_t i = nameset_find(&priv->kv_set, k, kv_name, g->kv);
	return i ? &g->kv[i - 1] : NULL;
}

const q42_gguf_tensor *q42_gguf_find_tensor(const q42_gguf *g, const char *name)
{
	const gguf_private *priv = g->priv_;
	q42_str k = {name, strlen(name)};
	if (priv == NULL)
		return NULL;
	uint64_t i = nameset_find(&priv->tensor_set, k, tensor_name, g->tensors);
	return i ? &g->tensors[i - 1] : NULL;
}

/* Read one fixed-size element as a wide integer or double. */
static bool load_int(uint32_t t, const uint8_t *p, int64_t *s, uint64_t *u, bool *is_signed)
{
	*is_signed = true;
	switch (t) {
	case Q42_GGUF_U8: *u = p[0]; *is_signed = false; break;
	case Q42_GGUF_I8: *s = (int8_t)p[0]; break;
	case Q42_GGUF_U16: *u = q42_ld16(p); *is_signed = false; break;
	case Q42_GGUF_I16: *s = (int16_t)q42_ld16(p); break;
	case Q42_GGUF_U32: *u = q42_ld32(p); *is_signed = false; break;
	case Q42_GGUF_I32: *s = (int32_t)q42_ld32(p); break;
	case Q42_GGUF_U64: *u = q42_ld64(p); *is_signed = false; break;
	case Q42_GGUF_I64: *s = (int64_t)q42_ld64(p); break;
	default: return false;
	}
	return true;
}

static bool elem_u64(uint32_t t, const uint8_t *p, uint64_t *out)
{
	int64_t s = 0;
	uint64_t u = 0;
	bool sg;
	if (!load_int(t, p, &s, &u, &sg))
		return false;
	if (sg && s < 0)
		return false;
	*out = sg ? (uint64_t)s : u;
	return true;
}

static bool elem_i64(uint32_t t, const uint8_t *p, int64_t *out)
{
	int64_t s = 0;
	uint64_t u = 0;
	bool sg;
	if (!load_int(t, p, &s, &u, &sg))
		return false;
	if (!sg && u > (uint64_t)INT64_MAX)
		return false;
	*out = sg ? s : (int64_t)u;
	return true;
}

static bool elem_f64(uint32_t t, const uint8_t *p, double *out)
{
	int64_t s;
	if (t == Q42_GGUF_F32) {
		*out = q42_ldf32(p);
		return true;
	}
	if (t == Q42_GGUF_F64) {
		uint64_t u = q42_ld64(p);
		memcpy(out, &u, sizeof *out);
		return true;
	}
	if (elem_i64(t, p, &s)) {
		*out = (double)s;
		return true;
	}
	return false;
}

bool q42_gguf_kv_u64(const q42_gguf_kv *kv, uint64_t *out)
{
	return kv != NULL && kv->type != Q42_GGUF_ARRAY && elem_u64(kv->type, kv->val, out);
}

bool q42_gguf_kv_i64(const q42_gguf_kv *kv, int64_t *out)
{
	return kv != NULL && kv->type != Q42_GGUF_ARRAY && elem_i64(kv->type, kv->val, out);
}

bool q42_gguf_kv_f64(const q42_gguf_kv *kv, double *out)
{
	return kv != NULL && kv->type != Q42_GGUF_ARRAY && elem_f64(kv->type, kv->val, out);
}

bool q42_gguf_kv_bool(const q42_gguf_kv *kv, bool *out)
{
	if (kv == NULL || kv->type != Q42_GGUF_BOOL)
		return false;
	*out = kv->val[0] != 0;
	return true;
}

bool q42_gguf_kv_str(const q42_gguf_kv *kv, q42_str *out)
{
	if (kv == NULL || kv->type != Q42_GGUF_STRING)
		return false;
	out->len = q42_ld64(kv->val);
	out->p = (const char *)kv->val + 8;
	return true;
}

bool q42_gguf_arr_str(const q42_gguf *g, const q42_gguf_kv *kv, uint64_t i, q42_str *out)
{
	if (kv == NULL || kv->type != Q42_GGUF_ARRAY || kv->arr_type != Q42_GGUF_STRING ||
	    i >= kv->count)
		return false;
	const uint8_t *p = g->file + kv->str_offs[i];
	out->len = q42_ld64(p);
	out->p = (const char *)p + 8;
	return true;
}

bool q42_gguf_arr_i64(const q42_gguf_kv *kv, uint64_t i, int64_t *out)
{
	if (kv == NULL || kv->type != Q42_GGUF_ARRAY || i >= kv->count ||
	    vtype_sizes[kv->arr_type] == 0 || kv->arr_type == Q42_GGUF_BOOL)
		return false;
	return elem_i64(kv->arr_type, kv->val + i * vtype_sizes[kv->arr_type], out);
}

bool q42_gguf_arr_f64(const q42_gguf_kv *kv, uint64_t i, double *out)
{
	if (kv == NULL || kv->type != Q42_GGUF_ARRAY || i >= kv->count ||
	    vtype_sizes[kv->arr_type] == 0 || kv->arr_type == Q42_GGUF_BOOL)
		return false;
	return elem_f64(kv->arr_type, kv->val + i * vtype_sizes[kv->arr_type], out);
}

bool q42_gguf_get_u64(const q42_gguf *g, const char *key, uint64_t *out)
{
	return q42_gguf_kv_u64(q42_gguf_find(g, key), out);
}

bool q42_gguf_get_f64(const q42_gguf *g, const char *key, double *out)
{
	return q42_gguf_kv_f64(q42_gguf_find(g, key), out);
}

bool q42_gguf_get_str(const q42_gguf *g, const char *key, q42_str *out)
{
	return q42_gguf_kv_str(q42_gguf_find(g, key), out);
}

bool q42_gguf_get_bool(const q42_gguf *g, const char *key, bool *out)
{
	return q42_gguf_kv_bool(q42_gguf_find(g, key), out);
}

bool q42_str_eq(q42_str s, const char *c)
{
	size_t n = strlen(c);
	return s.len == n && memcmp(s.p, c, n) == 0;
}
