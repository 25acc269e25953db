/* q42_safetensors.h -- a strict Safetensors reader, and Hugging Face model
 * inputs (one .safetensors file, a folder, or a .tar/.tar.gz/.tar.zst/.zip
 * archive of a folder) read as a stream.
 *
 * The header rules are in p64c(1), "SAFETENSORS INPUT": 8-byte
 * little-endian header length, a JSON header of at most Q42_ST_HEADER_MAX
 * bytes, unique names, offsets inside the data area, tensors contiguous and
 * non-overlapping, dtype size x shape = byte length. Nothing here prints,
 * and nothing here unpacks an archive to disk or holds more than one tensor
 * of data at a time.
 */
#ifndef Q42_SAFETENSORS_H
#define Q42_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"

#define Q42_ST_HEADER_MAX (100u << 20) /* JSON header cap, as the reference library */
#define Q42_ST_MAX_RANK 8u
#define Q42_ST_JSON_MAX (256u << 20)   /* config.json, tokenizer.json, ... */
#define Q42_ST_MAX_FILES 4096u         /* shards of one model */

enum q42_st_dtype {
	Q42_ST_BOOL, Q42_ST_U8, Q42_ST_I8, Q42_ST_F8_E4M3, Q42_ST_F8_E5M2,
	Q42_ST_I16, Q42_ST_U16, Q42_ST_F16, Q42_ST_BF16,
	Q42_ST_I32, Q42_ST_U32, Q42_ST_F32,
	Q42_ST_I64, Q42_ST_U64, Q42_ST_F64,
	Q42_ST_DTYPE_COUNT_
};

typedef struct q42_st_tensor {
	char *name;
	uint32_t dtype;                  /* enum q42_st_dtype */
	uint32_t rank;                   /* 0..Q42_ST_MAX_RANK */
	uint64_t shape[Q42_ST_MAX_RANK]; /* as stored: shape[0] varies slowest */
	uint64_t n_elems;
	uint64_t begin, end;             /* byte range relative to the data area */
} q42_st_tensor;

typedef struct q42_st_file {
	char *name;          /* as named in messages: path or member name */
	uint64_t size;       /* whole file */
	uint64_t data_start; /* 8 + header length */
	uint64_t n_tensors;
	q42_st_tensor *tensors; /* ascending begin */
} q42_st_file;

/* The header length in the first 8 bytes of a file of file_size bytes:
 * Q42_EFORMAT when it exceeds the cap or the file, or is below 2. */
Q42_API int q42_st_header_len(const uint8_t first8[8], uint64_t file_size, const char *name,
			      uint64_t *len, q42_err *err);
/* Parse and check the JSON header (len bytes, from offset 8) of a file of
 * file_size bytes into *f (which is overwritten). Q42_EFORMAT naming the
 * file, the tensor, the field, the offset and expected vs found. */
Q42_API int q42_st_header_parse(q42_st_file *f, const uint8_t *json, uint64_t len,
				uint64_t file_size, const char *name, q42_err *err);
Q42_API void q42_st_file_free(q42_st_file *f);

Q42_API const char *q42_st_dtype_name(uint32_t dtype);
/* Bytes per element; 0 when out of range. */
Q42_API uint32_t q42_st_dtype_size(uint32_t dtype);

/* ---- Model inputs ----------------------------------------------------- */

enum q42_st_kind { Q42_ST_KIND_FILE = 1, Q42_ST_KIND_FOLDER = 2, Q42_ST_KIND_ARCHIVE = 3 };

/* A text member (config.json, ...), NUL-terminated; NULL when absent. */
typedef struct q42_st_text {
	char *data;
	size_t len;
} q42_st_text;

/* The most module folders (sentence-transformers) of one model. */
#define Q42_ST_MODULES_MAX 16u

/* A sentence-transformers module folder that modules.json names (its
 * "path", one folder below the model's, e.g. "2_Dense"): its config.json
 * (NULL when absent). Its model.safetensors, when there, is one of the
 * model's files, named "DIR/model.safetensors", each of its tensors named
 * "DIR/NAME" (two Dense modules both hold "linear.weight"). */
typedef struct q42_st_module {
	char *dir;
	q42_st_text config;
} q42_st_module;

typedef struct q42_st_model {
	uint32_t kind;       /* enum q42_st_kind */
	char *path;
	char *root;          /* archive: the folder inside it ("" or "name/") */
	uint32_t n_files;
	q42_st_file *files;  /* the weights, by ascending name */
	q42_st_text config, tokenizer, tokenizer_config, index;
	/* sentence-transformers: modules.json, config_sentence_transformers.json */
	q42_st_text modules_json, st_config;
	uint32_t n_modules;
	q42_st_module modules[Q42_ST_MODULES_MAX];
	uint64_t max_tensor_bytes;
	uint64_t n_tensors;
} q42_st_model;

/* True when path is a folder, or a file that does not start with the GGUF
 * or P64 magic (so it can only be Safetensors or an archive). */
Q42_API bool q42_st_is_candidate(const char *path);

/* First pass: find the weights and the JSON files, read every Safetensors
 * header and the index, check them and how they fit together. Tensor data
 * is skipped. With modules.json, each module folder it names (a "path" of
 * one plain folder name) is read too: its config.json and
 * model.safetensors. Q42_EIO when the path cannot be read, Q42_EFORMAT for
 * a bad header, index, modules.json or archive. *m is safe to close after
 * any result. */
Q42_API int q42_st_model_open(q42_st_model *m, const char *path, q42_err *err);
Q42_API void q42_st_model_close(q42_st_model *m);

/* Called once per tensor, in the order the input delivers them (archive
 * order for archives, file and offset order otherwise); data holds the
 * tensor's end - begin bytes and is valid only during the call. */
typedef int (*q42_st_tensor_fn)(void *ctx, uint32_t file, uint64_t tensor, const uint8_t *data,
				q42_err *err);

/* Second pass: deliver every tensor. Memory: one buffer of
 * max_tensor_bytes. Also computes the source digest: for a single file its
 * SHA-256, otherwise the SHA-256 of the manifest "HEX  NAME\n" over the
 * files used (config.json, model.safetensors.index.json, tokenizer.json,
 * tokenizer_config.json, modules.json, config_sentence_transformers.json,
 * the modules' config.json and model.safetensors as DIR/NAME, the weights)
 * sorted by name, i.e. what
 * `sha256sum NAMES | sha256sum` gives inside the folder; *source_size is
 * the sum of those files' sizes. */
Q42_API int q42_st_model_stream(q42_st_model *m, q42_st_tensor_fn fn, void *ctx,
				uint8_t sha256[32], uint64_t *source_size, q42_err *err);

#endif
