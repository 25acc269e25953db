/* q42_statefile.h -- q42-state(5) files: a prompt prefix's cache state
 * saved by q42run --state-save and read back by --state-load.
 *
 * The file carries the ids of the positions, the state in the engine's
 * copy layout (engine/q42_engine.h, q42_engine_state_get) and what made
 * it: the model file's SHA-256, the context, the batch (the passes the
 * state was computed in), the cache type and the arithmetic. A reader
 * refuses a file made under anything else, or damaged, naming what
 * differs. The parser reads only within the bytes it is given and checks
 * every size with checked arithmetic; it never allocates.
 */
#ifndef Q42_STATEFILE_H
#define Q42_STATEFILE_H

#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_digest.h"

#define Q42_STATE_MAGIC "q42state"
#define Q42_STATE_VERSION 1u
#define Q42_STATE_HEADER_BYTES 128u

/* What a state was made under; a file is usable only under the same. */
typedef struct q42_state_ident {
	uint8_t model_sha256[Q42_SHA256_LEN];
	uint32_t n_ctx, n_batch, kv_type, arith;
	uint32_t flash_attn;     /* 1: llama.cpp's flash attention (q42_engine_flash_attn) */
	uint32_t n_layer, n_embd, n_vocab;
	uint64_t pos_bytes;      /* bytes of one position's state */
} q42_state_ident;

/* A parsed file: its ident, n_pos positions, and pointers into the
 * bytes given to q42_state_parse. */
typedef struct q42_state_view {
	q42_state_ident id;
	uint32_t n_pos;
	const uint8_t *ids;      /* n_pos little-endian int32 */
	const uint8_t *state;    /* n_pos * id.pos_bytes */
} q42_state_view;

/* Check the structure of n bytes at p (magic, version, header CRC, sizes,
 * body CRC) into *v. Q42_EFORMAT names what is wrong (field, offset,
 * expected vs found); a file cut short says so. */
Q42_API int q42_state_parse(const uint8_t *p, uint64_t n, q42_state_view *v, q42_err *err);

/* Whether v was made under want: Q42_EARG naming the first field that
 * differs (the model's digest first); ids outside the vocabulary,
 * positions beyond the context or not a whole number of passes are
 * Q42_EFORMAT. */
Q42_API int q42_state_match(const q42_state_view *v, const q42_state_ident *want, q42_err *err);

/* The file's bytes for n_pos positions of ids and state (n_pos *
 * id->pos_bytes bytes), written to path atomically (temp file, fsync,
 * rename). Q42_EIO, Q42_EARG (sizes overflow). */
Q42_API int q42_state_write(const char *path, const q42_state_ident *id, const int32_t *ids,
			    uint32_t n_pos, const uint8_t *state, q42_err *err);

#endif
