/* q42_mount.h -- a model file opened for running: container, description,
 * tokenizer and tensor lookup, whatever the container.
 *
 * A mount opens the file as every program does (formats/q42_source.h:
 * P64 or GGUF by its first four bytes only, validated by that container's
 * reader before anything is exposed). The
 * engine sees only q42_hparams, q42_vocab, the tokenizer and tensor views
 * whose data points into the mapping (weights are never copied). A file
 * that fails validation is refused; it is never retried as the other
 * container.
 */
#ifndef Q42_MOUNT_H
#define Q42_MOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_digest.h"
#include "formats/q42_model.h"
#include "formats/q42_source.h"
#include "tokenizer/q42_tokenizer.h"

enum q42_mount_flags {
	/* Only the tokenizer is needed: hyperparameters and tensors may be
	 * absent (ggml-vocab-*.gguf files). */
	Q42_MOUNT_VOCAB_ONLY = 1u << 0,
};

typedef struct q42_mount q42_mount;

/* Identity of the mounted file, for records (q42-record(5), "model"). */
typedef struct q42_model_ident {
	uint32_t container;   /* enum q42_source_kind (formats/q42_source.h) */
	uint64_t size;
	char sha256[Q42_SHA256_HEX_LEN + 1];        /* of the file itself */
	char source_sha256[Q42_SHA256_HEX_LEN + 1]; /* P64 provenance, or = sha256 for GGUF */
} q42_model_ident;

/* Open path ("-" = stdin). Errors: Q42_EIO (cannot open/read), Q42_EFORMAT
 * (not a model file, truncated, fails validation, tokenizer malformed),
 * Q42_ENOTFOUND (a required part such as the tokenizer is missing),
 * Q42_EUNSUPPORTED (tokenizer kind not handled). */
Q42_API int q42_mount_open(q42_mount **out, const char *path, unsigned flags, q42_err *err);
Q42_API void q42_mount_close(q42_mount *m);

/* enum q42_source_kind: Q42_SOURCE_GGUF or Q42_SOURCE_P64 (its name:
 * q42_source_kind_name). */
Q42_API uint32_t q42_mount_container(const q42_mount *m);
Q42_API const char *q42_mount_path(const q42_mount *m);
/* NULL when the file carries no hyperparameters (vocab-only mounts). */
Q42_API const q42_hparams *q42_mount_hparams(const q42_mount *m);
Q42_API const q42_vocab *q42_mount_vocab(const q42_mount *m);
Q42_API const q42_tokenizer *q42_mount_tokenizer(const q42_mount *m);

Q42_API uint64_t q42_mount_n_tensors(const q42_mount *m);
/* Tensor i in file order; false when i is out of range. */
Q42_API bool q42_mount_tensor_at(const q42_mount *m, uint64_t i, q42_source_tensor *t);
/* The caller no longer reads bytes [p, p + len) of the mapping (it keeps a
 * copy of its own): their pages are dropped from the process. The mapping
 * stays valid; a later read faults them in again from the file. Pages
 * shared with bytes outside the range are dropped as well, and come back
 * the same way. Ranges outside the mapping are ignored. */
Q42_API void q42_mount_release(const q42_mount *m, const uint8_t *p, uint64_t len);
/* Tensor by name; false when absent. */
Q42_API bool q42_mount_tensor(const q42_mount *m, const char *name, q42_source_tensor *t);

/* Compute (once; the digest reads the whole mapping) and return the
 * identity of the mounted file. */
Q42_API int q42_mount_ident(q42_mount *m, const q42_model_ident **out, q42_err *err);

#endif
