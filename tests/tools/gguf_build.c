/* gguf_build.c -- test-side GGUF writer (see gguf_build.h). */
#include <string.h>
#include "gguf_build.h"
#include "formats/q42_gguf.h"

void gb_init(gguf_builder *b, uint32_t alignment)
{
	memset(b, 0, sizeof *b);
	q42_buf_init(&b->kv);
	b->alignment = alignment ? alignment : 32;
}

void gb_free(gguf_builder *b)
{
	q42_buf_free(&b->kv);
}

void gb_str(q42_buf *out, const char *s)
{
	q42_buf_u64le(out, strlen(s));
	q42_buf_append(out, s, strlen(s));
}

void gb_key(gguf_builder *b, const char *key, uint32_t type)
{
	gb_str(&b->kv, key);
	q42_buf_u32le(&b->kv, type);
	b->n_kv++;
}

void gb_kv_u32(gguf_builder *b, const char *key, uint32_t v)
{
	gb_key(b, key, Q42_GGUF_U32);
	q42_buf_u32le(&b->kv, v);
}

void gb_kv_f32(gguf_builder *b, const char *key, float v)
{
	gb_key(b, key, Q42_GGUF_F32);
	q42_buf_f32le(&b->kv, v);
}

void gb_kv_bool(gguf_builder *b, const char *key, int v)
{
	gb_key(b, key, Q42_GGUF_BOOL);
	q42_buf_u8(&b->kv, (uint8_t)v);
}

void gb_kv_str(gguf_builder *b, const char *key, const char *v)
{
	gb_key(b, key, Q42_GGUF_STRING);
	gb_str(&b->kv, v);
}

void gb_kv_arr_str(gguf_builder *b, const char *key, const char *const *v, uint64_t n)
{
	gb_key(b, key, Q42_GGUF_ARRAY);
	q42_buf_u32le(&b->kv, Q42_GGUF_STRING);
	q42_buf_u64le(&b->kv, n);
	for (uint64_t i = 0; i < n; i++)
		gb_str(&b->kv, v[i]);
}

void gb_kv_arr_f32(gguf_builder *b, const char *key, const float *v, uint64_t n)
{
	gb_key(b, key, Q42_GGUF_ARRAY);
	q42_buf_u32le(&b->kv, Q42_GGUF_F32);
	q42_buf_u64le(&b->kv, n);
	for (uint64_t i = 0; i < n; i++)
		q42_buf_f32le(&b->kv, v[i]);
}

void gb_kv_arr_i32(gguf_builder *b, const char *key, const int32_t *v, uint64_t n)
{
	gb_key(b, key, Q42_GGUF_ARRAY);
	q42_buf_u32le(&b->kv, Q42_GGUF_I32);
	q42_buf_u64le(&b->kv, n);
	for (uint64_t i = 0; i < n; i++)
		q42_buf_u32le(&b->kv, (uint32_t)v[i]);
}

void gb_tensor_add(gguf_builder *b, const char *name, uint32_t type, uint32_t n_dims,
		   const uint64_t *ne, const void *data, uint64_t nbytes)
{
	gb_tensor *t = &b->t[b->n_tensors++];
	memset(t, 0, sizeof *t);
	t->name = name;
	t->type = type;
	t->n_dims = n_dims;
	for (uint32_t i = 0; i < n_dims && i < 4; i++)
		t->ne[i] = ne[i];
	t->data = data;
	t->nbytes = nbytes;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

void gb_finish(gguf_builder *b, uint32_t version, q42_buf *out)
{
	uint64_t off = 0;

	q42_buf_append(out, "GGUF", 4);
	q42_buf_u32le(out, version);
	q42_buf_u64le(out, b->n_tensors);
	q42_buf_u64le(out, b->n_kv);
	q42_buf_append(out, b->kv.data, b->kv.len);
	for (uint64_t i = 0; i < b->n_tensors; i++) {
		gb_tensor *t = &b->t[i];
		gb_str(out, t->name);
		q42_buf_u32le(out, t->n_dims);
		for (uint32_t d = 0; d < t->n_dims; d++)
			q42_buf_u64le(out, t->ne[d]);
		q42_buf_u32le(out, t->type);
		q42_buf_u64le(out, off);
		off = align_up(off + t->nbytes, b->alignment);
	}
	if (b->n_tensors == 0)
		return;
	q42_buf_zeros(out, align_up(out->len, b->alignment) - out->len);
	for (uint64_t i = 0; i < b->n_tensors; i++) {
		gb_tensor *t = &b->t[i];
		q42_buf_append(out, t->data, t->nbytes);
		if (i + 1 < b->n_tensors)
			q42_buf_zeros(out, align_up(out->len, b->alignment) - out->len);
	}
}
