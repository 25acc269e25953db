/* q42_gguf.h -- a validating, zero-copy reader for GGUF v2 and v3.
 *
 * q42_gguf_parse() walks the header, every metadata key/value and every
 * tensor info of a file already in memory (normally an mmap), checking each
 * length, count, offset and alignment with overflow-checked arithmetic and
 * caps before anything is exposed. Strings and values are views into that
 * memory; no tensor payload is read. See p64(5), "Source GGUF", for how the
 * header bytes are carried into a P64.
 */
#ifndef Q42_GGUF_H
#define Q42_GGUF_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"

#define Q42_GGUF_MAGIC "GGUF"
#define Q42_GGUF_MAX_DIMS 4
#define Q42_GGUF_MAX_ALIGNMENT (1u << 20)
#define Q42_GGUF_DEFAULT_ALIGNMENT 32u

enum q42_gguf_vtype {
	Q42_GGUF_U8 = 0,
	Q42_GGUF_I8 = 1,
	Q42_GGUF_U16 = 2,
	Q42_GGUF_I16 = 3,
	Q42_GGUF_U32 = 4,
	Q42_GGUF_I32 = 5,
	Q42_GGUF_F32 = 6,
	Q42_GGUF_BOOL = 7,
	Q42_GGUF_STRING = 8,
	Q42_GGUF_ARRAY = 9,
	Q42_GGUF_U64 = 10,
	Q42_GGUF_I64 = 11,
	Q42_GGUF_F64 = 12,
	Q42_GGUF_VTYPE_COUNT_ = 13
};

/* A length-carrying view; not NUL-terminated. */
typedef struct q42_str {
	const char *p;
	uint64_t len;
} q42_str;

typedef struct q42_gguf_kv {
	q42_str key;
	uint64_t key_off;     /* file offset of the key's length field */
	uint32_t type;        /* enum q42_gguf_vtype */
	uint32_t arr_type;    /* element type when type == Q42_GGUF_ARRAY */
	uint64_t count;       /* array length; 1 for a scalar */
	const uint8_t *val;   /* first byte of the value (or first element) */
	uint64_t val_off;     /* file offset of val */
	uint64_t end_off;     /* file offset just past the value */
	uint64_t *str_offs;   /* string arrays: offset of each element's length field */
} q42_gguf_kv;

typedef struct q42_gguf_tensor {
	q42_str name;
	uint64_t info_off;    /* file offset of this tensor info */
	uint32_t n_dims;
	uint64_t ne[Q42_GGUF_MAX_DIMS]; /* ne[0] varies fastest; unused dims are 1 */
	uint64_t n_elems;
	uint32_t type;        /* ggml type id, possibly unknown */
	bool type_known;
	uint64_t offset;      /* relative to the data section, as stored */
	uint64_t abs_offset;  /* data_offset + offset */
	uint64_t nbytes;      /* 0 when the type is unknown */
	const uint8_t *data;  /* abs_offset in the mapping */
} q42_gguf_tensor;

typedef struct q42_gguf {
	const uint8_t *file;  /* not owned */
	uint64_t file_size;
	uint32_t version;
	uint64_t n_kv;
	q42_gguf_kv *kv;
	uint64_t n_tensors;
	q42_gguf_tensor *tensors;
	uint32_t alignment;
	uint64_t header_end;  /* end of the last tensor info */
	uint64_t data_offset; /* header_end rounded up to alignment */
	uint64_t data_end;    /* end of the last tensor's bytes (data_offset if none) */
	void *priv_;          /* lookup tables; private to q42_gguf.c */
} q42_gguf;

/* Parse and validate. name is used in messages only. On failure *g is left
 * empty and err says what, where (offset) and expected vs found. */
Q42_API int q42_gguf_parse(q42_gguf *g, const uint8_t *data, uint64_t size,
			   const char *name, q42_err *err);
/* Parse and validate the header and metadata only, for GGUF header bytes
 * kept without their tensor data (a P64's GGUF section): tensor infos are
 * not read and n_tensors is 0. */
Q42_API int q42_gguf_parse_meta(q42_gguf *g, const uint8_t *data, uint64_t size,
				const char *name, q42_err *err);
Q42_API void q42_gguf_free(q42_gguf *g);

Q42_API const q42_gguf_kv *q42_gguf_find(const q42_gguf *g, const char *key);
Q42_API const q42_gguf_tensor *q42_gguf_find_tensor(const q42_gguf *g, const char *name);

Q42_API const char *q42_gguf_vtype_name(uint32_t t);
/* Size of one element of a fixed-size value type; 0 for string/array. */
Q42_API uint32_t q42_gguf_vtype_size(uint32_t t);

/* Scalar getters: false when the kv is absent (NULL) or of an incompatible
 * type. Integers convert between widths only when the value fits. */
Q42_API bool q42_gguf_kv_u64(const q42_gguf_kv *kv, uint64_t *out);
Q42_API bool q42_gguf_kv_i64(const q42_gguf_kv *kv, int64_t *out);
Q42_API bool q42_gguf_kv_f64(const q42_gguf_kv *kv, double *out);
Q42_API bool q42_gguf_kv_bool(const q42_gguf_kv *kv, bool *out);
Q42_API bool q42_gguf_kv_str(const q42_gguf_kv *kv, q42_str *out);

/* Array element getters (i < kv->count, element type must match). */
Q42_API bool q42_gguf_arr_str(const q42_gguf *g, const q42_gguf_kv *kv, uint64_t i, q42_str *out);
Q42_API bool q42_gguf_arr_i64(const q42_gguf_kv *kv, uint64_t i, int64_t *out);
Q42_API bool q42_gguf_arr_f64(const q42_gguf_kv *kv, uint64_t i, double *out);

/* Convenience: find key and read it. */
Q42_API bool q42_gguf_get_u64(const q42_gguf *g, const char *key, uint64_t *out);
Q42_API bool q42_gguf_get_f64(const q42_gguf *g, const char *key, double *out);
Q42_API bool q42_gguf_get_str(const q42_gguf *g, const char *key, q42_str *out);
Q42_API bool q42_gguf_get_bool(const q42_gguf *g, const char *key, bool *out);

/* True when s equals the NUL-terminated string c. */
Q42_API bool q42_str_eq(q42_str s, const char *c);

#endif
