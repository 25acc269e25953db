/* q42_source.h -- one model file, GGUF or P64, told apart by magic only.
 *
 * Every program opens a model file here (p64check's inspection, p64c's
 * input, q42run's mount, engine/q42_mount.h): the file is mapped, its first four bytes pick the
 * reader, and that reader validates the whole file before anything is
 * exposed. A file that fails its reader is never retried as the other
 * format, and the file name is never consulted. Nothing here prints.
 */
#ifndef Q42_SOURCE_H
#define Q42_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "common/q42_file.h"
#include "formats/q42_gguf.h"
#include "formats/q42_model.h"
#include "formats/q42_p64.h"

enum q42_source_kind {
	Q42_SOURCE_NONE = 0,
	Q42_SOURCE_GGUF = 1,
	Q42_SOURCE_P64 = 2,
};

typedef struct q42_source {
	q42_map map;
	uint32_t kind;   /* enum q42_source_kind */
	q42_gguf gguf;   /* kind GGUF: the parsed file */
	q42_p64 p64;     /* kind P64: the validated container */
	/* Metadata view of a P64's source GGUF header (see q42_source_meta). */
	bool meta_ready;
	q42_gguf meta;
} q42_source;

/* A tensor of either container, with the fields both formats have: what
 * p64check lists, p64c converts and the engine binds. */
typedef struct q42_source_tensor {
	q42_str name;
	uint32_t dtype;      /* ggml type id; may be unknown to libq42 */
	uint32_t rank;
	uint64_t dims[Q42_GGUF_MAX_DIMS]; /* dims[0] varies fastest; unused dims are 1 */
	uint64_t n_elems;
	uint64_t offset;     /* absolute file offset of the bytes */
	uint64_t nbytes;
	const uint8_t *data;
} q42_source_tensor;

/* Map path ("-" = stdin) and validate it with the reader its magic names.
 * Q42_EIO when it cannot be read, Q42_EFORMAT when the magic is neither
 * "GGUF" nor "p64\0" or the reader rejects it. *s is safe to close after
 * any result. */
Q42_API int q42_source_open(q42_source *s, const char *path, q42_err *err);
/* As q42_source_open, and advise(map, kind, arg) runs once the magic has
 * named a reader and before that reader touches the file (q42_mount's
 * madvise, which only helps before the first read). */
typedef void (*q42_source_advise_fn)(const q42_map *map, uint32_t kind, void *arg);
Q42_API int q42_source_open_ex(q42_source *s, const char *path, q42_source_advise_fn advise,
			       void *arg, q42_err *err);
Q42_API void q42_source_close(q42_source *s);

/* "gguf" or "p64". */
Q42_API const char *q42_source_kind_name(uint32_t kind);

/* The key/value metadata: the GGUF itself, or for a P64 the metadata of the
 * source GGUF whose header bytes it carries (Q42_ENOTFOUND when it carries
 * none). The result lives as long as *s. */
Q42_API int q42_source_meta(q42_source *s, const q42_gguf **out, q42_err *err);

/* Number of tensors and the i-th one (i < count) in file order. */
Q42_API uint64_t q42_source_tensor_count(const q42_source *s);
Q42_API void q42_source_tensor_get(const q42_source *s, uint64_t i, q42_source_tensor *out);
/* Find by name; Q42_ENOTFOUND when absent. */
Q42_API int q42_source_find_tensor(const q42_source *s, const char *name,
				   q42_source_tensor *out, q42_err *err);

/* Dequantize elements [first, first + count) of t (flat index, dims[0]
 * fastest) into dst. Q42_EARG when the range is outside the tensor,
 * Q42_EUNSUPPORTED when libq42 cannot decode the dtype. With count 0 only
 * those checks run (dst may be NULL). */
Q42_API int q42_source_tensor_values(const q42_source_tensor *t, uint64_t first,
				     uint64_t count, float *dst, q42_err *err);

#endif
