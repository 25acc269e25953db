/* gguf_build.h -- a small GGUF writer for tests and fixture generators.
 *
 * It writes exactly what it is told, including things a real writer never
 * would (wrong counts, odd alignments), because the hostile-input tests need
 * that. It is not part of libq42: the product reads GGUF, it never writes
 * one from scratch (a P64 rebuilds its source GGUF from stored bytes).
 */
#ifndef GGUF_BUILD_H
#define GGUF_BUILD_H

#include <stdint.h>
#include "common/q42_buf.h"

typedef struct gb_tensor {
	const char *name;
	uint32_t n_dims;
	uint64_t ne[4];
	uint32_t type;
	const void *data;
	uint64_t nbytes;
} gb_tensor;

typedef struct gguf_builder {
	q42_buf kv;      /* encoded key/value pairs */
	uint64_t n_kv;
	gb_tensor t[256];
	uint64_t n_tensors;
	uint32_t alignment;
} gguf_builder;

void gb_init(gguf_builder *b, uint32_t alignment);
void gb_free(gguf_builder *b);
void gb_key(gguf_builder *b, const char *key, uint32_t type);
void gb_str(q42_buf *out, const char *s);
void gb_kv_u32(gguf_builder *b, const char *key, uint32_t v);
void gb_kv_f32(gguf_builder *b, const char *key, float v);
void gb_kv_bool(gguf_builder *b, const char *key, int v);
void gb_kv_str(gguf_builder *b, const char *key, const char *v);
void gb_kv_arr_str(gguf_builder *b, const char *key, const char *const *v, uint64_t n);
void gb_kv_arr_f32(gguf_builder *b, const char *key, const float *v, uint64_t n);
void gb_kv_arr_i32(gguf_builder *b, const char *key, const int32_t *v, uint64_t n);
void gb_tensor_add(gguf_builder *b, const char *name, uint32_t type, uint32_t n_dims,
		   const uint64_t *ne, const void *data, uint64_t nbytes);
/* Serialize: header, kvs, tensor infos, padding, data. */
void gb_finish(gguf_builder *b, uint32_t version, q42_buf *out);

#endif
